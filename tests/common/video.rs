//! Running the program and reading its video back, for the end-to-end tests
//! (`tests/stream.rs`, `tests/pipelines.rs`).

use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_app as gst_app;

/// A fresh, empty folder for one test, removed when the test passes (a
/// failed test leaves it, and says where, for a look at what it wrote).
pub struct TempDir(PathBuf);

impl std::ops::Deref for TempDir {
    type Target = Path;
    fn deref(&self) -> &Path {
        &self.0
    }
}

impl AsRef<Path> for TempDir {
    fn as_ref(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("the test's files are kept in {}", self.0.display());
        } else {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
}

/// A fresh, empty folder for one test ([`TempDir`]).
pub fn tempdir(name: &str) -> TempDir {
    let d = std::env::temp_dir().join(format!("seamstream-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    TempDir(d)
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
/// The seamstream binary: beside this test binary on the GPU host (the
/// bundle puts them together), else the one cargo built.
pub fn binary() -> PathBuf {
    let beside = std::env::current_exe()
        .ok()
        .and_then(|p| p.parent().map(|d| d.join("seamstream")));
    match beside {
        Some(p) if p.is_file() => p,
        _ => env!("CARGO_BIN_EXE_seamstream").into(),
    }
}

pub fn command(args: &[&str]) -> Command {
    let mut c = Command::new(binary());
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

/// Runs the program from the repository's root (on the GPU host, away from
/// it, from the current folder).
pub fn run(args: &[&str]) -> Output {
    run_in(&super::data::checkout_or_here(), args, DEADLINE)
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Decodes a file and returns (pts in ns, width, height) of every frame.
pub fn decode(path: &Path) -> Vec<(u64, u32, u32)> {
    let mut frames = Vec::new();
    each_frame(path, |sample| {
        let caps = sample.caps().unwrap().structure(0).unwrap().to_owned();
        let pts = sample.buffer().unwrap().pts();
        frames.push((
            pts.map_or(u64::MAX, |t| t.nseconds()),
            caps.get::<i32>("width").unwrap() as u32,
            caps.get::<i32>("height").unwrap() as u32,
        ));
    });
    frames
}

/// A gst-launch line as a pipeline, and its appsink named `sink`.
pub fn pipeline_with_sink(line: &str, sink: &str) -> (gst::Pipeline, gst_app::AppSink) {
    let pipe = gst::parse::launch(line)
        .unwrap_or_else(|e| panic!("{line}: {e}"))
        .downcast::<gst::Pipeline>()
        .unwrap();
    let sink = pipe
        .by_name(sink)
        .unwrap_or_else(|| panic!("{line}: no element named {sink}"))
        .downcast::<gst_app::AppSink>()
        .unwrap();
    (pipe, sink)
}

/// Calls `frame` with every video frame of a file, decoded to RGBA, one at
/// a time; fails the test if the decoding does.
fn each_frame(path: &Path, mut frame: impl FnMut(&gst::Sample)) {
    gst::init().unwrap();
    let desc = format!(
        "filesrc location=\"{}\" ! decodebin ! videoconvert ! video/x-raw,format=RGBA ! appsink name=s sync=false",
        path.display()
    );
    let (pipe, sink) = pipeline_with_sink(&desc, "s");
    pipe.set_state(gst::State::Playing).unwrap();
    // Generous: on a host of four GPUs, NVIDIA's plugin probes each of them
    // before the first frame (over 10 s with other tests starting alike).
    while let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_seconds(120)) {
        frame(&sample);
    }
    let bus = pipe.bus().unwrap();
    let err = bus.pop_filtered(&[gst::MessageType::Error]);
    let ended = sink.is_eos();
    pipe.set_state(gst::State::Null).unwrap();
    assert!(err.is_none(), "decoding {} failed: {err:?}", path.display());
    assert!(ended, "decoding {} stalled before its end", path.display());
}

pub fn frame_ns(i: u64, fps: u64) -> u64 {
    i * 1_000_000_000 / fps
}

/// Every stream of a media file, as (caps name, end time in ns): the
/// encoded streams the demuxer gives (`video/x-h264`, `audio/mpeg`, …),
/// each read to its end.
pub fn media_streams(path: &Path) -> Vec<(String, u64)> {
    use std::sync::{Arc, Mutex};
    gst::init().unwrap();
    let desc = format!("filesrc location=\"{}\" ! parsebin name=p", path.display());
    let pipe = gst::parse::launch(&desc)
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
    let found: Arc<Mutex<Vec<(String, u64)>>> = Arc::default();
    let parse = pipe.by_name("p").unwrap();
    let weak = pipe.downgrade();
    let f = found.clone();
    parse.connect_pad_added(move |_, pad| {
        let pipe = weak.upgrade().unwrap();
        let caps = pad.current_caps().unwrap_or_else(|| pad.query_caps(None));
        let name = caps.structure(0).unwrap().name().to_string();
        let index = {
            let mut f = f.lock().unwrap();
            f.push((name, 0));
            f.len() - 1
        };
        // A queue each: the demuxer feeds every stream from one thread.
        let queue = gst::ElementFactory::make("queue").build().unwrap();
        let sink = gst_app::AppSink::builder().sync(false).build();
        let f = f.clone();
        sink.set_callbacks(
            gst_app::AppSinkCallbacks::builder()
                .new_sample(move |s| {
                    let sample = s.pull_sample().map_err(|_| gst::FlowError::Eos)?;
                    let b = sample.buffer().unwrap();
                    if let Some(pts) = b.pts() {
                        let end = (pts + b.duration().unwrap_or_default()).nseconds();
                        let mut f = f.lock().unwrap();
                        f[index].1 = f[index].1.max(end);
                    }
                    Ok(gst::FlowSuccess::Ok)
                })
                .build(),
        );
        pipe.add_many([&queue, sink.upcast_ref()]).unwrap();
        queue.link(&sink).unwrap();
        sink.sync_state_with_parent().unwrap();
        queue.sync_state_with_parent().unwrap();
        pad.link(&queue.static_pad("sink").unwrap()).unwrap();
    });
    play_to_eos(pipe.upcast_ref(), &format!("reading {}", path.display()));
    found.lock().unwrap().clone()
}

/// Writes a `seconds`-long clip at 25 fps, 160x96, with a sine tone as
/// AAC (`.mp4`, `.mkv`) or Vorbis (`.webm`, VP8 video), for the audio tests.
pub fn clip_with_audio(path: &Path, seconds: u32) {
    gst::init().unwrap();
    let ext = path.extension().unwrap().to_str().unwrap();
    let (video, mux, audio) = match ext {
        "webm" => ("vp8enc deadline=1", "webmmux", "vorbisenc"),
        "mkv" => ("x264enc bframes=0", "matroskamux", aac_encoder()),
        _ => ("x264enc bframes=0 ! h264parse", "mp4mux", aac_encoder()),
    };
    let frames = 25 * seconds;
    let desc = format!(
        "videotestsrc num-buffers={frames} ! video/x-raw,width=160,height=96,framerate=25/1 ! {video} ! {mux} name=m ! filesink location=\"{}\" \
         audiotestsrc num-buffers={frames} samplesperbuffer=1764 ! audio/x-raw,rate=44100,channels=2 ! audioconvert ! {audio} ! m.",
        path.display()
    );
    let pipe = gst::parse::launch(&desc).unwrap();
    play_to_eos(&pipe, &format!("making {}", path.display()));
}

/// Writes `frames` frames of `videotestsrc` as `video/x-raw,{caps}` through
/// `encode` (e.g. `x264enc ! mp4mux`) into `path`.
pub fn test_clip(path: &Path, frames: u32, caps: &str, encode: &str) {
    gst::init().unwrap();
    let desc = format!(
        "videotestsrc num-buffers={frames} ! video/x-raw,{caps} ! {encode} ! filesink location=\"{}\"",
        path.display()
    );
    let pipe = gst::parse::launch(&desc).unwrap();
    play_to_eos(&pipe, &format!("making {}", path.display()));
}

/// Plays `pipe` to its end, failing the test (`what` failed) on an error or
/// after a minute.
pub fn play_to_eos(pipe: &gst::Element, what: &str) {
    pipe.set_state(gst::State::Playing).unwrap();
    let bus = pipe.bus().unwrap();
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(60),
        &[gst::MessageType::Eos, gst::MessageType::Error],
    );
    pipe.set_state(gst::State::Null).unwrap();
    assert!(
        matches!(
            msg.as_ref().map(|m| m.view()),
            Some(gst::MessageView::Eos(_))
        ),
        "{what} failed: {msg:?}"
    );
}

fn aac_encoder() -> &'static str {
    ["avenc_aac", "voaacenc", "fdkaacenc"]
        .into_iter()
        .find(|e| gst::ElementFactory::find(e).is_some())
        .expect("an AAC encoder (gstreamer1.0-libav or -plugins-bad)")
}

/// Decodes a file's video into RGBA bytes, a frame each.
pub fn decode_rgba(path: &Path) -> Vec<Vec<u8>> {
    let mut frames = Vec::new();
    each_frame(path, |s| {
        frames.push(s.buffer().unwrap().map_readable().unwrap().to_vec())
    });
    frames
}
