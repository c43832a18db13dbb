//! `run` on the GPU with NVIDIA's decoder: the decoder's frames come in
//! CUDA memory and are copied on the device (no host copy in); an output
//! that takes CUDA memory (null) gets them in it (no download); a file gets
//! one download, straight into the buffers the encoder takes. The bytes are
//! those of the old path through system memory (`SEAMSTREAM_HOST_COPIES=1`)
//! and of the CPU. Skipped without a GPU, or without NVIDIA's decoder.

use std::path::{Path, PathBuf};
use std::process::Command;

/// A field of `run --json`'s summary, as text (strings without quotes).
pub(crate) fn field(json: &str, key: &str) -> String {
    json.split(&format!("\"{key}\":"))
        .nth(1)
        .and_then(|r| r.split([',', '}']).next())
        .unwrap_or_else(|| panic!("no {key} in {json}"))
        .trim_matches('"')
        .to_string()
}

/// `run CLIP OUT --op OP --device DEVICE --json` with `env`; the summary.
pub(crate) fn run(clip: &Path, out: &str, op: &str, device: &str, env: &[(&str, &str)]) -> String {
    let o = Command::new(crate::common::video::binary())
        .args(["run", clip.to_str().unwrap(), out, "--op", op])
        .args(["--device", device, "--json"])
        .envs(env.iter().copied())
        .output()
        .unwrap();
    assert!(
        o.status.success(),
        "run {op} into {out} on {device} {env:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let stdout = String::from_utf8_lossy(&o.stdout).into_owned();
    stdout
        .lines()
        .rev()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no summary in {stdout}"))
        .to_string()
}

fn clip() -> Option<PathBuf> {
    let dir = std::env::var_os("SEAMSTREAM_CLIPS")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("../shared/data/video"));
    let clip = dir.join("dog-walk-720p.mp4");
    if !clip.is_file() {
        seamstream::cuda::testing::skip(
            "the decoder's memory",
            &format!("no {} (set SEAMSTREAM_CLIPS)", clip.display()),
        );
        return None;
    }
    Some(clip)
}

fn nvdec() -> bool {
    gstreamer::init().unwrap();
    let found = gstreamer::ElementFactory::find("nvh264dec").is_some();
    if !found {
        seamstream::cuda::testing::skip("the decoder's memory", "GStreamer has no nvh264dec");
    }
    found
}

#[test]
fn decoder_frames_stay_on_the_device_and_give_the_same_bytes() {
    let Some(_) = seamstream::cuda::testing::gpu("the decoder's memory") else {
        return;
    };
    let Some(clip) = clip() else { return };
    if !nvdec() {
        return;
    }
    let dir = std::env::temp_dir().join(format!("seamstream-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    for op in ["retarget:width=75%", "gaussian:sigma=2"] {
        // Into null: CUDA memory both ways, every frame through.
        let json = run(&clip, "null", op, "cuda", &[]);
        assert_eq!(field(&json, "memory_in"), "cuda", "{op}: {json}");
        assert_eq!(field(&json, "memory_out"), "cuda", "{op}: {json}");
        assert_eq!(field(&json, "frames_out"), "289", "{op}: {json}");
        // Into a file: one download into the encoder's buffers; the same
        // bytes as the old path and as the CPU.
        let mut files = Vec::new();
        for (name, device, env, memory) in [
            ("direct", "cuda", &[][..], ("cuda", "pinned")),
            (
                "host",
                "cuda",
                &[("SEAMSTREAM_HOST_COPIES", "1")][..],
                ("system", "system"),
            ),
            ("cpu", "cpu", &[][..], ("system", "system")),
        ] {
            let file = dir.join(format!("{name}.y4m"));
            let json = run(&clip, file.to_str().unwrap(), op, device, env);
            assert_eq!(field(&json, "memory_in"), memory.0, "{op} {name}: {json}");
            assert_eq!(field(&json, "memory_out"), memory.1, "{op} {name}: {json}");
            files.push((name, std::fs::read(&file).unwrap()));
        }
        assert!(
            files[0].1.len() > 1_000_000,
            "{op}: {} bytes",
            files[0].1.len()
        );
        for (name, bytes) in &files[1..] {
            if let Some(i) = files[0].1.iter().zip(bytes).position(|(a, b)| a != b) {
                panic!("{op}: the direct path and {name} differ first at byte {i}");
            }
            assert_eq!(files[0].1.len(), bytes.len(), "{op}: {name}");
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}
