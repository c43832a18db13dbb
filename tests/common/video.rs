//! Running the program and reading its video back, for the end-to-end tests
//! (`tests/stream.rs`, `tests/pipelines.rs`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_app as gst_app;

/// A fresh, empty folder for one test.
pub fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("seamstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// The longest any one run in these tests may take before it counts as hung.
pub const DEADLINE: Duration = Duration::from_secs(120);

/// Waits for `child` to exit, reading its output meanwhile; kills it and
/// fails the test if it has not exited `deadline` from now.
pub fn finish(mut child: Child, what: &str, deadline: Duration) -> Output {
    let read = |pipe: Option<Box<dyn Read + Send>>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            if let Some(mut p) = pipe {
                let _ = p.read_to_end(&mut bytes);
            }
            bytes
        })
    };
    let out = read(child.stdout.take().map(|p| Box::new(p) as _));
    let err = read(child.stderr.take().map(|p| Box::new(p) as _));
    let end = Instant::now() + deadline;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if Instant::now() > end {
            let _ = child.kill();
            let _ = child.wait();
            let err = String::from_utf8_lossy(&err.join().unwrap()).into_owned();
            panic!("{what} hung for {deadline:?}; stderr: {err}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Output {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// The program with `args`, its output piped and no display, so that
/// `display` behaves the same on every machine.
pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_seamstream"));
    c.args(args)
        .env_remove("DISPLAY")
        .env_remove("WAYLAND_DISPLAY")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    c
}

pub fn spawn(args: &[&str]) -> Child {
    command(args).spawn().expect("the binary runs")
}

/// Runs the program in `dir`, failing the test if it takes over `deadline`.
pub fn run_in(dir: &Path, args: &[&str], deadline: Duration) -> Output {
    let child = command(args)
        .current_dir(dir)
        .spawn()
        .expect("the binary runs");
    finish(child, &format!("{args:?} in {}", dir.display()), deadline)
}

/// Runs the program from the repository's root.
pub fn run(args: &[&str]) -> Output {
    run_in(Path::new(env!("CARGO_MANIFEST_DIR")), args, DEADLINE)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Decodes a file and returns (pts in ns, width, height) of every frame.
pub fn decode(path: &Path) -> Vec<(u64, u32, u32)> {
    gst::init().unwrap();
    let desc = format!(
        "filesrc location=\"{}\" ! decodebin ! videoconvert ! video/x-raw,format=RGBA ! appsink name=s sync=false",
        path.display()
    );
    let pipe = gst::parse::launch(&desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let sink = pipe
        .by_name("s")
        .unwrap()
        .downcast::<gst_app::AppSink>()
        .unwrap();
    pipe.set_state(gst::State::Playing).unwrap();
    let mut frames = Vec::new();
    while let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_seconds(10)) {
        let caps = sample.caps().unwrap().structure(0).unwrap().to_owned();
        let (w, h) = (
            caps.get::<i32>("width").unwrap() as u32,
            caps.get::<i32>("height").unwrap() as u32,
        );
        frames.push((
            sample
                .buffer()
                .unwrap()
                .pts()
                .map_or(u64::MAX, |t| t.nseconds()),
            w,
            h,
        ));
    }
    let bus = pipe.bus().unwrap();
    let err = bus.pop_filtered(&[gst::MessageType::Error]);
    pipe.set_state(gst::State::Null).unwrap();
    assert!(err.is_none(), "decoding {} failed: {err:?}", path.display());
    frames
}

pub fn frame_ns(i: u64, fps: u64) -> u64 {
    i * 1_000_000_000 / fps
}
