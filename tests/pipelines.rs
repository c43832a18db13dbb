//! Pipeline files, the built-in sample clip and inputs the chain cannot take,
//! end to end with real GStreamer: every run has a deadline, so a hang fails
//! the test instead of blocking CI.

mod common;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::video::*;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

/// A run that must fail by itself, soon, with exit code 1, no panic, and a
/// message holding every one of `expect`; returns the message.
fn fails_cleanly(args: &[&str], expect: &[&str]) -> String {
    let o = run_in(repo(), args, Duration::from_secs(30));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for e in expect {
        assert!(err.contains(e), "expected `{e}` in: {err}");
    }
    err
}

/// The (in, out, dropped) counts of the summary line.
fn counts(err: &str) -> (u64, u64, u64) {
    let line = err
        .lines()
        .find(|l| l.contains(" frames in, "))
        .unwrap_or_else(|| panic!("no summary in: {err}"));
    let nums: Vec<u64> = line
        .split([' ', ','])
        .filter_map(|w| w.parse().ok())
        .take(3)
        .collect();
    (nums[0], nums[1], nums[2])
}

/// Every frame of `path` has `size` and the timestamp of frame i at 30 fps.
fn assert_frames(path: &Path, n: usize, size: (u32, u32)) {
    let frames = decode(path);
    assert_eq!(frames.len(), n, "{}: {frames:?}", path.display());
    for (i, &(pts, w, h)) in frames.iter().enumerate() {
        assert_eq!((w, h), size, "{} frame {i}", path.display());
        assert_eq!(pts, frame_ns(i as u64, 30), "{} frame {i}", path.display());
    }
}

#[test]
fn every_shipped_pipeline_file_runs_end_to_end_on_a_short_source() {
    let dir = tempdir("shipped");
    // (file, output size as shipped: 480x270 in; retarget carves it to 4:3)
    let shipped = [
        ("retarget-16x9-to-4x3.toml", (360, 270)),
        ("vertical-9x16.toml", (152, 270)),
        ("transcode-denoise-stabilize.toml", (480, 270)),
        ("document-binarize.toml", (480, 270)),
        ("camera-edges.toml", (640, 480)),
        ("camera-segments.toml", (640, 480)),
    ];
    let on_disk = std::fs::read_dir(repo().join("pipelines"))
        .unwrap()
        .filter(|e| {
            e.as_ref()
                .unwrap()
                .path()
                .extension()
                .is_some_and(|x| x == "toml")
        })
        .count();
    assert_eq!(on_disk, shipped.len(), "a pipeline file is not tested here");
    for (name, size) in shipped {
        let file = format!("pipelines/{name}");
        let out = dir.join(name.replace(".toml", ".mp4"));
        let mut args = vec![
            "run",
            "--pipeline",
            &file,
            "-o",
            out.to_str().unwrap(),
            "--frames",
            "10",
        ];
        let camera = name.starts_with("camera");
        let has_camera = Path::new("/dev/video0").exists();
        if camera && has_camera {
            // A real camera runs until stopped; test the rest of the file on
            // the test source it would fall back to.
            args.insert(1, "test:ball");
            args.push("--live");
        }
        let o = run(&args);
        let err = stderr(&o);
        assert!(o.status.success(), "{name}: {err}");
        if camera && !has_camera {
            assert!(
                err.contains("using the live test source test:ball"),
                "{name}: {err}"
            );
        }
        let (fin, fout, dropped) = counts(&err);
        if camera {
            // Live: frames the chain could not keep up with are dropped, and counted.
            assert_eq!((fin, fout + dropped), (10, 10), "{name}: {err}");
            let frames = decode(&out);
            assert_eq!(frames.len() as u64, fout, "{name}");
            assert!(frames.iter().all(|&(_, w, h)| (w, h) == size), "{name}");
        } else {
            assert_eq!((fin, fout, dropped), (10, 10, 0), "{name}: {err}");
            assert_frames(&out, 10, size);
        }
    }
}

#[test]
fn retarget_file_carves_16x9_to_4x3() {
    let dir = tempdir("retarget");
    let out = dir.join("r.mp4");
    let o = run(&[
        "run",
        "--pipeline",
        "pipelines/retarget-16x9-to-4x3.toml",
        "test:smpte",
        out.to_str().unwrap(),
        "--size",
        "320x180",
        "--frames",
        "4",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_frames(&out, 4, (240, 180));
}

/// The values `file` gives `op`'s keys, other than `own` (what the file is
/// for), each as a user would write it on the command line.
fn settings_beside(file: &str, op: &str, own: &[&str]) -> Vec<(String, String)> {
    let text = std::fs::read_to_string(repo().join("pipelines").join(file)).unwrap();
    let table: toml::Table = toml::from_str(&text).unwrap();
    let ops = table["op"].as_array().unwrap();
    let found = ops
        .iter()
        .filter_map(|o| o.as_table())
        .find(|o| o.get("name").and_then(|n| n.as_str()) == Some(op))
        .unwrap_or_else(|| panic!("{file} has no {op}"));
    found
        .iter()
        .filter(|(k, _)| k.as_str() != "name" && !own.contains(&k.as_str()))
        .map(|(k, v)| {
            let v = match v {
                toml::Value::String(s) => s.clone(),
                other => other.to_string(),
            };
            (k.clone(), v)
        })
        .collect()
}

/// The shipped files that show an operation's use set its other keys to the
/// operation's defaults (a default the measures moved, left behind in a
/// file, gives its users the result the measures turned down: the 9:16
/// file narrowed by up to 40% after the default became 20%).
#[test]
fn the_shipped_reframe_and_retarget_files_keep_the_defaults_beside_their_shape() {
    for (file, op, own) in [
        ("vertical-9x16.toml", "reframe", &["aspect"][..]),
        ("retarget-16x9-to-4x3.toml", "retarget", &["width"][..]),
    ] {
        let spec = seamstream_core::registry::lookup(op).unwrap().spec;
        let given = settings_beside(file, op, own);
        assert!(!given.is_empty(), "{file}: nothing to compare");
        for (key, value) in given {
            let param = spec
                .params
                .iter()
                .find(|p| p.name == key)
                .unwrap_or_else(|| panic!("{file}: {op} has no `{key}`"));
            if let Some(default) = param.default {
                assert_eq!(value, default, "{file}: {op}'s `{key}`");
            }
        }
    }
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn an_unknown_op_in_a_pipeline_file_is_reported_with_its_line() {
    let dir = tempdir("unknown-op");
    let file = write(
        &dir,
        "x.toml",
        "output = \"null\"\n\n[input]\nsource = \"test:ball\"\n\n[[op]]\nname = \"gaussian\"\nsigma = 2\n\n[[op]]\nname = \"blurr\"\n",
    );
    fails_cleanly(
        &["run", "--pipeline", &file],
        &[
            &format!("{file}:11: unknown operation `blurr`; valid operations are: "),
            "gaussian",
        ],
    );
}

#[test]
fn bad_keys_and_values_in_a_pipeline_file_are_reported_with_their_line() {
    let dir = tempdir("bad-key");
    let file = write(
        &dir,
        "k.toml",
        "output = \"null\"\n[[op]]\nname = \"gaussian\"\nsigmaa = 2\n",
    );
    fails_cleanly(
        &["run", "--pipeline", &file],
        &[&format!(
            "{file}:4: gaussian: unknown parameter `sigmaa`; valid parameters are: sigma"
        )],
    );
    let file = write(&dir, "v.toml", "[[op]]\nname = \"threshold\"\nt = 300\n");
    fails_cleanly(
        &["run", "--pipeline", &file],
        &[&format!("{file}:3: threshold: `t=300`: out of range")],
    );
    let file = write(&dir, "top.toml", "ouput = \"null\"\n");
    fails_cleanly(
        &["run", "--pipeline", &file],
        &[
            &format!("{file}:1: unknown key `ouput`"),
            "valid keys are: output, device",
        ],
    );
    // An empty file (or one of comments only) runs nothing: it is an error,
    // not the sample clip played in silence.
    let file = write(&dir, "empty.toml", "# to do: the ops\n\n");
    let err = fails_cleanly(
        &["run", "--pipeline", &file],
        &[
            &format!("{file}: the pipeline file is empty"),
            "[[op]]",
            "pipelines/",
        ],
    );
    assert!(!err.contains(" frames in, "), "{err}");
    fails_cleanly(
        &["run", "--pipeline", "/nonexistent/p.toml"],
        &["cannot read pipeline file `/nonexistent/p.toml`"],
    );
}

#[test]
fn the_command_line_wins_over_the_pipeline_file() {
    let dir = tempdir("overrides");
    let from_file = dir.join("from-file.mp4");
    let file = write(
        &dir,
        "p.toml",
        &format!(
            "output = \"{}\"\n[input]\nsource = \"test:smpte\"\nsize = \"64x48\"\nfps = 30\nframes = 3\n[[op]]\nname = \"gaussian\"\nsigma = 1\n",
            from_file.display()
        ),
    );
    // The file alone.
    let o = run(&["run", "--pipeline", &file]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_frames(&from_file, 3, (64, 48));
    std::fs::remove_file(&from_file).unwrap();

    // Output (positional), size, fps and frames from the command line.
    let cli = dir.join("cli.mkv");
    let o = run(&[
        "run",
        "--pipeline",
        &file,
        "test:ball",
        cli.to_str().unwrap(),
        "--size",
        "96x64",
        "--fps",
        "25",
        "--frames",
        "5",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(!from_file.exists(), "the file's output was written too");
    let frames = decode(&cli);
    assert_eq!(frames.len(), 5);
    for (i, &(pts, w, h)) in frames.iter().enumerate() {
        assert_eq!((pts, w, h), (frame_ns(i as u64, 25), 96, 64));
    }

    // -o replaces only the output; the rest still comes from the file.
    let flag = dir.join("flag.mp4");
    let o = run(&["run", "--pipeline", &file, "-o", flag.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_frames(&flag, 3, (64, 48));

    fails_cleanly(
        &["run", "--pipeline", &file, "--op", "sobel"],
        &["--op", "--pipeline", "one place"],
    );
}

/// The header line of a YUV4MPEG2 file (its frame rate is `F<num>:<den>`).
fn y4m_header(path: &Path) -> String {
    let bytes = std::fs::read(path).unwrap();
    let end = bytes
        .iter()
        .position(|&b| b == b'\n')
        .unwrap_or(bytes.len());
    String::from_utf8_lossy(&bytes[..end]).into_owned()
}

#[test]
fn fps_takes_decimals_and_fractions_exactly() {
    let dir = tempdir("fps");
    for (fps, rate) in [
        ("29.97", "F30000:1001"),
        ("30000/1001", "F30000:1001"),
        ("23.976", "F24000:1001"),
        ("12.5", "F25:2"),
        ("24", "F24:1"),
    ] {
        let out = dir.join("r.y4m");
        let o = run(&[
            "run",
            "test:ball",
            out.to_str().unwrap(),
            "--size",
            "64x48",
            "--frames",
            "2",
            "--fps",
            fps,
            "--device",
            "cpu",
        ]);
        assert!(o.status.success(), "--fps {fps}: {}", stderr(&o));
        let header = y4m_header(&out);
        assert!(
            header.split(' ').any(|f| f == rate),
            "--fps {fps}: {header}"
        );
    }
    fails_cleanly(
        &["run", "test:ball", "null", "--fps", "0"],
        &[
            "`--fps 0`: out of range",
            "1 to 1000",
            "29.97",
            "30000/1001",
        ],
    );
    fails_cleanly(
        &["run", "test:ball", "null", "--fps", "30/0"],
        &["`--fps 30/0`", "denominator", "30000/1001"],
    );
    fails_cleanly(
        &["run", "test:ball", "null", "--size", "1e30x5"],
        &["`--size 1e30x5`", "WIDTHxHEIGHT", "1920x1080"],
    );
}

#[test]
fn input_as_a_flag_replaces_the_files_input_and_keeps_its_output() {
    let dir = tempdir("input-flag");
    // A 3-frame clip to read back.
    let clip = dir.join("clip.mp4");
    let o = run(&[
        "run",
        "test:smpte",
        "-o",
        clip.to_str().unwrap(),
        "--size",
        "64x48",
        "--frames",
        "3",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    // The file's own source would give 5 frames of 96x64.
    let out = dir.join("from-file.mp4");
    let file = write(
        &dir,
        "p.toml",
        &format!(
            "output = \"{}\"\n[input]\nsource = \"test:ball\"\nsize = \"96x64\"\nframes = 5\n[[op]]\nname = \"gaussian\"\n",
            out.display()
        ),
    );
    let o = run(&["run", "--pipeline", &file, "-i", clip.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_frames(&out, 3, (64, 48));
    std::fs::remove_file(&out).unwrap();
    let o = run(&[
        "run",
        "--pipeline",
        &file,
        "--input",
        clip.to_str().unwrap(),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_frames(&out, 3, (64, 48));

    // As in ffmpeg, `-i IN OUT`: the positional argument is the output.
    let o = run(&["run", "-i", "test:ball", "--frames", "2", "null"]);
    assert!(o.status.success(), "{}", stderr(&o));
    // Three files are one too many: a usage error that names them.
    let o = run(&["run", "-i", "test:ball", "test:smpte", "null"]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(
        err.contains(
            "`null`: one file too many: the input is `test:ball` and the output `test:smpte`"
        ),
        "{err}"
    );
}

#[test]
fn a_missing_camera_falls_back_when_the_file_says_so_and_is_an_error_otherwise() {
    let dir = tempdir("camera");
    let none = "/dev/video-seamstream-none";
    let file = write(
        &dir,
        "cam.toml",
        &format!(
            "output = \"null\"\n[input]\nsource = \"camera:{none}\"\nfallback = \"test:ball\"\nsize = \"64x48\"\nframes = 3\n[[op]]\nname = \"sobel\"\n"
        ),
    );
    let o = run(&["run", "--pipeline", &file]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    let notes: Vec<&str> = err.lines().filter(|l| l.contains(none)).collect();
    assert_eq!(notes.len(), 1, "{err}");
    assert!(
        notes[0].contains("does not exist") && notes[0].contains("live test source test:ball"),
        "{err}"
    );
    assert_eq!(counts(&err).0, 3, "{err}");

    // Without a fallback, and on the command line, a missing camera is an
    // error that names it and says what to do.
    let bare = write(
        &dir,
        "bare.toml",
        &format!("output = \"null\"\n[input]\nsource = \"camera:{none}\"\n"),
    );
    let camera = format!("camera:{none}");
    for args in [
        vec!["run", "--pipeline", bare.as_str()],
        vec!["run", "--pipeline", file.as_str(), camera.as_str()],
        vec!["run", camera.as_str(), "null"],
    ] {
        fails_cleanly(&args, &[none, "ls /dev/video*", "test:"]);
    }
}

#[test]
fn display_without_a_display_fails_before_any_work() {
    let err = fails_cleanly(
        &["run", "test:ball", "display", "--frames", "3"],
        &["`display`", "DISPLAY", "null"],
    );
    assert!(!err.contains(" frames in, "), "{err}");
}

#[test]
fn plain_run_plays_the_sample_clip_retargeted_to_4x3_into_out_mp4() {
    let dir = tempdir("default");
    let o = run_in(&dir, &["run"], DEADLINE);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("retarget:width=75%"), "{err}");
    assert!(err.contains("480x270 -> 360x270"), "{err}");
    assert_frames(&dir.join("out.mp4"), 90, (360, 270));
}

#[test]
fn an_input_without_video_is_a_clear_error_not_a_hang() {
    fails_cleanly(
        &["run", "audiotestsrc num-buffers=10", "null"],
        &[
            "audiotestsrc num-buffers=10",
            "no video stream",
            "audio/x-raw",
        ],
    );
    // An audio-only file, through uridecodebin.
    let dir = tempdir("audio");
    let wav = dir.join("tone.wav");
    let made = Command::new("gst-launch-1.0")
        .args([
            "-q",
            "audiotestsrc",
            "num-buffers=20",
            "!",
            "wavenc",
            "!",
            "filesink",
        ])
        .arg(format!("location={}", wav.display()))
        .status()
        .expect("gst-launch-1.0 runs");
    assert!(made.success());
    let out = dir.join("o.mp4");
    fails_cleanly(
        &["run", wav.to_str().unwrap(), out.to_str().unwrap()],
        &[wav.to_str().unwrap(), "no video stream", "audio/x-raw"],
    );
    assert!(
        !out.exists(),
        "a run that wrote no frame left {}",
        out.display()
    );
    // Encoded video in a fragment: the message says to decode it.
    fails_cleanly(
        &["run", "videotestsrc num-buffers=3 ! x264enc", "null"],
        &["video/x-h264", "decodebin"],
    );
}
