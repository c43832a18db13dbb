//! `seamstream run` end to end with real GStreamer: a test source through the
//! chain into a file, decoded back and checked.

mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use common::video::*;
use gstreamer as gst;

#[test]
fn n_test_frames_come_back_from_mp4_with_their_timestamps() {
    let dir = tempdir("mp4");
    let out = dir.join("o.mp4");
    let o = run(&[
        "run",
        "test:smpte",
        out.to_str().unwrap(),
        "--frames",
        "12",
        "--size",
        "96x64",
        "--fps",
        "25",
        "--op",
        "gaussian:sigma=1",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("12 frames in, 12 out, 0 dropped"),
        "{}",
        stderr(&o)
    );
    let frames = decode(&out);
    assert_eq!(frames.len(), 12);
    for (i, &(pts, w, h)) in frames.iter().enumerate() {
        assert_eq!((w, h), (96, 64));
        assert_eq!(pts, frame_ns(i as u64, 25), "frame {i}");
    }
}

#[test]
fn odd_sizes_and_retarget_change_the_output_size() {
    let dir = tempdir("odd");
    for name in ["o.mp4", "o.mkv"] {
        let out = dir.join(name);
        let o = run(&[
            "run",
            "test:ball",
            out.to_str().unwrap(),
            "--frames",
            "4",
            "--size",
            "321x241",
            "--op",
            "retarget:width=301,energy=basic",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let frames = decode(&out);
        assert_eq!(frames.len(), 4, "{name}");
        assert!(
            frames.iter().all(|&(_, w, h)| (w, h) == (301, 241)),
            "{name}: {frames:?}"
        );
        assert_eq!(frames[3].0, frame_ns(3, 30), "{name}");
    }
    // y4m takes widths that are a multiple of 8; others are refused (see run.rs).
    let out = dir.join("o.y4m");
    let o = run(&[
        "run",
        "test:ball",
        out.to_str().unwrap(),
        "--frames",
        "3",
        "--size",
        "320x240",
        "--op",
        "retarget:width=296",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(
        decode(&out),
        vec![
            (0, 296, 240),
            (frame_ns(1, 30), 296, 240),
            (frame_ns(2, 30), 296, 240)
        ]
    );
    let before = std::fs::read(&out).unwrap();
    assert_fails_cleanly(
        &[
            "run",
            "test:ball",
            out.to_str().unwrap(),
            "--frames",
            "3",
            "--size",
            "321x241",
        ],
        &["multiple of 8"],
    );
    // The refused run leaves the earlier output as it was, and nothing else.
    assert_eq!(std::fs::read(&out).unwrap(), before);
    assert!(!dir.join("o.partial.y4m").exists());
}

#[test]
fn json_summary_reports_frames_and_sizes() {
    let o = run(&[
        "run",
        "test:snow",
        "null",
        "--frames",
        "5",
        "--size",
        "64x48",
        "--json",
        "--op",
        "retarget:width=50%",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    for key in [
        "\"frames_in\":5",
        "\"frames_out\":5",
        "\"dropped\":0",
        "\"size_in\":[64,48]",
        "\"size_out\":[32,48]",
    ] {
        assert!(out.contains(key), "{key} missing from {out}");
    }
}

fn assert_fails_cleanly(args: &[&str], expect: &[&str]) {
    // No hang: a bad input must end the run by itself.
    let o = finish(spawn(args), &format!("{args:?}"), Duration::from_secs(30));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
    assert!(!err.contains("panicked"), "{err}");
    for e in expect {
        assert!(err.contains(e), "expected `{e}` in: {err}");
    }
}

/// A `test:smpte` clip of `frames` frames at `size` written to `dir/name`,
/// and a copy of its first `keep(len)` bytes beside it (`cut.` + the
/// extension): the whole file and the cut one.
fn whole_and_cut(
    dir: &std::path::Path,
    name: &str,
    (frames, size): (&str, &str),
    keep: impl Fn(usize) -> usize,
) -> (std::path::PathBuf, std::path::PathBuf) {
    let whole = dir.join(name);
    let made = run(&[
        "run",
        "test:smpte",
        whole.to_str().unwrap(),
        "--frames",
        frames,
        "--size",
        size,
    ]);
    assert!(made.status.success(), "{}", stderr(&made));
    let data = std::fs::read(&whole).unwrap();
    let ext = whole.extension().and_then(|e| e.to_str()).unwrap_or("");
    let cut = dir.join(format!("cut.{ext}"));
    std::fs::write(&cut, &data[..keep(data.len())]).unwrap();
    (whole, cut)
}

#[test]
fn bad_inputs_and_outputs_fail_with_a_message_and_leave_no_file() {
    let dir = tempdir("bad");
    let out = dir.join("o.mp4");
    let o = out.to_str().unwrap();
    // Fragments that give no raw video, known by GStreamer's link error:
    // what they give, and what to do.
    assert_fails_cleanly(
        &["run", "videotestsrc num-buffers=5 ! x264enc", o],
        &["gives `video/x-h264", "decode it in the fragment"],
    );
    assert_fails_cleanly(
        &["run", "audiotestsrc num-buffers=5", o],
        &["gives `audio/x-raw", "audio only"],
    );
    assert_fails_cleanly(
        &["run", "/nonexistent/clip.mp4", o],
        &["/nonexistent/clip.mp4", "test:PATTERN"],
    );
    // Bytes that are no media at all.
    let junk = dir.join("junk.mp4");
    let bytes = seamstream::noise::Noise::new(12345).bytes(5000);
    std::fs::write(&junk, bytes).unwrap();
    assert_fails_cleanly(
        &["run", junk.to_str().unwrap(), o],
        &["not a video file GStreamer recognises"],
    );
    assert!(
        !out.exists(),
        "a run that wrote no frame left {}",
        out.display()
    );
    // A real mp4 cut in half (its index is at the end).
    let (_, cut) = whole_and_cut(&dir, "whole.mp4", ("20", "64x48"), |n| n / 2);
    assert_fails_cleanly(&["run", cut.to_str().unwrap(), o], &["error:"]);
    assert_fails_cleanly(
        &["run", "test:smpte", "/nonexistent-dir/o.mp4"],
        &["does not exist"],
    );
    // A folder, whatever its name ends in.
    let folder = dir.join("clips.mp4");
    std::fs::create_dir(&folder).unwrap();
    assert_fails_cleanly(
        &["run", "test:smpte", folder.to_str().unwrap()],
        &["that is a folder", "clips.mp4/out.mp4"],
    );
    assert!(folder.is_dir());
    assert_fails_cleanly(
        &["run", "test:smpte", "o.avi"],
        &[".mp4, .mkv, .webm or .y4m"],
    );
    assert_fails_cleanly(&["run", "test:smpte", "null", "--op", "blur"], &["`blur`"]);
    assert_fails_cleanly(
        &["run", "test:smpte", "null", "--size", "0x10"],
        &["--size 0x10"],
    );
}

/// A file whose header is whole but whose first frame is cut off decodes
/// to nothing, without an error: the run must fail, not report success.
#[test]
fn a_file_cut_before_its_first_whole_frame_fails_and_writes_nothing() {
    let dir = tempdir("no-frame");
    // Matroska's header and track list come first; 1000 bytes hold them
    // and no whole first frame.
    let (_, cut) = whole_and_cut(&dir, "whole.mkv", ("10", "320x240"), |_| 1000);
    let out = dir.join("o.mp4");
    assert_fails_cleanly(
        &["run", cut.to_str().unwrap(), out.to_str().unwrap()],
        &["ended before its first video frame", "nothing was written"],
    );
    assert!(!out.exists(), "{} was left", out.display());
    assert_fails_cleanly(
        &["run", cut.to_str().unwrap(), "null"],
        &["ended before its first video frame"],
    );
    // Split into parts, it is refused for what it is, not for its count.
    assert_fails_cleanly(
        &[
            "run",
            cut.to_str().unwrap(),
            out.to_str().unwrap(),
            "--workers",
            "2",
        ],
        &["no whole video frame"],
    );
    assert!(!out.exists(), "{} was left", out.display());
}

/// parsebin and decodebin drop the error of a demuxer that fails while
/// they set it up (an MP4 cut before its index, on a loaded machine: CI
/// hung so). The fault drops every error the same way, every time.
#[test]
fn a_reading_that_stops_with_its_error_swallowed_ends_the_run() {
    let dir = tempdir("swallowed");
    let (whole, cut) = whole_and_cut(&dir, "whole.mp4", ("20", "64x48"), |n| n / 2);
    let swallowing = |args: &[&str]| {
        let child = command(args)
            .env("SEAMSTREAM_INJECT_SWALLOW_ERRORS", "1")
            .spawn()
            .expect("the binary runs");
        finish(child, &format!("{args:?}"), Duration::from_secs(30))
    };
    let out = dir.join("o.mp4");
    let o = swallowing(&["run", cut.to_str().unwrap(), out.to_str().unwrap()]);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(
        err.contains("stopped before its first frame, with no error"),
        "{err}"
    );
    assert!(
        !out.exists(),
        "a run that wrote no frame left {}",
        out.display()
    );
    // A whole file still ends by its end, every frame written.
    let o = swallowing(&["run", whole.to_str().unwrap(), out.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode(&out).len(), 20);
}

#[cfg(unix)]
#[test]
fn sigint_mid_file_keeps_a_playable_file_of_the_frames_so_far() {
    let dir = tempdir("sigint");
    let out = dir.join("o.mp4");
    let args = [
        "run",
        "test:smpte",
        out.to_str().unwrap(),
        "--frames",
        "0",
        "--size",
        "160x120",
        "--op",
        "gaussian:sigma=1",
    ];
    let child = spawn(&args);
    // Interrupt once frames are reaching the file (written beside the
    // output, in fragments), however slowly the machine starts the run.
    let partial = dir.join("o.partial.mp4");
    let start = Instant::now();
    while std::fs::metadata(&partial).map_or(0, |m| m.len()) < 4096 {
        assert!(start.elapsed() < DEADLINE, "no output after {DEADLINE:?}");
        std::thread::sleep(Duration::from_millis(50));
    }
    let pid = child.id().to_string();
    assert!(
        Command::new("kill")
            .args(["-INT", &pid])
            .status()
            .unwrap()
            .success()
    );
    let o = finish(child, "the interrupted run", Duration::from_secs(60));
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(130), "{err}");
    assert!(err.contains("interrupted"), "{err}");
    let frames = decode(&out);
    assert!(!frames.is_empty(), "no frames kept");
    // The summary's count is what the file holds.
    let written = frames_out(&err);
    assert_eq!(frames.len(), written, "{err}");
}

#[test]
fn a_live_source_with_a_slow_chain_drops_the_oldest_frames_and_counts_them() {
    // A 601-tap gaussian on 640x480 takes far longer than a 30 fps frame
    // period, so the live source outruns the chain.
    let o = run(&[
        "run",
        "test:ball",
        "null",
        "--live",
        "--frames",
        "45",
        "--fps",
        "30",
        "--size",
        "640x480",
        "--json",
        "--op",
        "gaussian:sigma=100,radius=300",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    let field = |k: &str| -> u64 { json_field(&out, k).parse().unwrap() };
    let (fin, fout, dropped) = (field("frames_in"), field("frames_out"), field("dropped"));
    assert_eq!(fin, 45, "{out}");
    assert!(dropped > 0, "nothing dropped: {out}");
    // Every frame is either shown or counted as dropped.
    assert_eq!(fout + dropped, fin, "{out}");
}

/// A live reframe's summary lists the shots it planned, with no path file
/// asked for (it said `0 shots:` then: only a path file kept the plans),
/// and they cover the frames it gave out.
#[test]
fn a_live_reframe_says_its_shots() {
    let o = run(&[
        "run",
        "test:ball",
        "null",
        "--live",
        "--frames",
        "20",
        "--fps",
        "10",
        "--size",
        "320x180",
        "--op",
        "reframe:aspect=9:16",
    ]);
    let err = stderr(&o);
    assert!(o.status.success(), "{err}");
    assert!(
        err.contains(
            "reframe: planned live, each frame seeing 0.4 s ahead (held back that long); 1 shots:"
        ),
        "{err}"
    );
    let out = frames_out(&err);
    assert!(out > 0, "{err}");
    assert!(err.contains(&format!("  frames 0-{}", out - 1)), "{err}");
}

/// A live reframe that looks ahead holds frames back and gives every one
/// out at the end, each its own picture: with nothing to find (detectors
/// off), the window is the same with and without the look-ahead, so the
/// two files are the same, frame for frame.
#[test]
fn a_live_reframe_looking_ahead_gives_every_frame_as_it_came() {
    let dir = tempdir("lookahead");
    let mut files = Vec::new();
    for lookahead in ["0", "0.4"] {
        let out = dir.join(format!("la{lookahead}.y4m"));
        let op =
            format!("reframe:aspect=1:1,faces=false,text=false,motion=false,lookahead={lookahead}");
        let o = run(&[
            "run",
            "test:ball",
            out.to_str().unwrap(),
            "--frames",
            "30",
            "--size",
            "512x288",
            "--op",
            &op,
        ]);
        let err = stderr(&o);
        assert!(o.status.success(), "{err}");
        assert!(err.contains("30 frames in, 30 out"), "{err}");
        files.push(std::fs::read(&out).unwrap());
    }
    let frames = |f: &[u8]| f.windows(5).filter(|w| w == b"FRAME").count();
    assert_eq!(frames(&files[0]), 30);
    assert!(files[0] == files[1], "the held frames came out otherwise");
}

/// Live, a face frame's cascade runs beside the frames that follow and
/// its faces join the plan a fixed time after their frame: however slow
/// the cascade, the plan is the same. Film-dialogue's first 60 frames,
/// read as a stream (a FIFO) and so planned live, frame by frame, with
/// each cascade held back a quarter of a second and without; and with no
/// faces looked for, to show they count.
#[cfg(feature = "fault-injection")]
#[test]
fn a_live_plan_does_not_wait_on_faces_nor_change_with_their_speed() {
    let clips = common::data::CLIPS.dir_with(&["film-dialogue-480p.mp4"]);
    let clip = clips.join("film-dialogue-480p.mp4");
    let dir = tempdir("live-faces");
    let plan = |name: &str, op: &str, slow: Option<&str>| {
        let fifo = dir.join(format!("{name}.stream"));
        let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
        assert!(made.success());
        let feed = {
            let (from, to) = (clip.clone(), fifo.clone());
            std::thread::spawn(move || std::fs::write(&to, std::fs::read(&from).unwrap()))
        };
        let path = dir.join(format!("{name}.json"));
        let mut run = Command::new(binary());
        run.args([
            "run",
            fifo.to_str().unwrap(),
            "null",
            "--frames",
            "60",
            "--op",
            op,
        ])
        .arg("--reframe-path")
        .arg(&path);
        if let Some(ms) = slow {
            run.env("SEAMSTREAM_INJECT_SLOW_FACES_MS", ms);
        }
        let o = finish(
            run.stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap(),
            name,
            DEADLINE,
        );
        // The stream ends when 60 frames are taken; the rest of the file
        // finds no reader.
        let _ = feed.join();
        let err = stderr(&o);
        assert!(o.status.success(), "{name}: {err}");
        assert!(err.contains("planned live"), "{name}: {err}");
        assert!(err.contains("60 frames in, 60 out"), "{name}: {err}");
        std::fs::read(&path).unwrap()
    };
    let quick = plan("quick", "reframe:aspect=9:16", None);
    let slow = plan("slow", "reframe:aspect=9:16", Some("250"));
    let faceless = plan("faceless", "reframe:aspect=9:16,faces=false", None);
    assert!(quick == slow, "the plan changed with the cascade's speed");
    assert!(quick != faceless, "the faces found did not reach the plan");
}

/// The frames the summary says went out (`… N out, …`).
fn frames_out(summary: &str) -> usize {
    summary
        .split(" out,")
        .next()
        .and_then(|s| s.rsplit(' ').next())
        .and_then(|n| n.parse().ok())
        .unwrap_or_else(|| panic!("no frame count in the summary: {summary}"))
}

/// A summary field of `--json` output, as a number or `true`/`false`.
fn json_field(out: &str, k: &str) -> String {
    let rest = out
        .split(&format!("\"{k}\":"))
        .nth(1)
        .unwrap_or_else(|| panic!("{k} missing: {out}"));
    rest.split([',', '}']).next().unwrap().to_string()
}

/// The chain of the live tests: a 601-tap gaussian on 640x480 takes far
/// longer than a 30 fps frame period.
const SLOW: &str = "gaussian:sigma=100,radius=300";

/// Liveness is GStreamer's answer, not the input's spelling: a file whose
/// name holds `is-live=true` is read whole, at the chain's pace.
#[test]
fn a_file_named_like_a_live_source_is_read_as_a_file() {
    let dir = tempdir("named-live");
    let file = dir.join("is-live=true.mp4");
    test_clip(
        &file,
        20,
        "width=640,height=480,framerate=30/1",
        "x264enc ! mp4mux",
    );
    let input = format!(
        "filesrc location=\"{}\" ! qtdemux ! h264parse ! avdec_h264",
        file.display()
    );
    let o = run(&["run", &input, "null", "--json", "--op", SLOW]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(json_field(&out, "live"), "false", "{out}");
    assert_eq!(json_field(&out, "frames_out"), "20", "{out}");
    assert_eq!(json_field(&out, "dropped"), "0", "{out}");
}

/// A live source however it is spelt (`is-live=1`, no `--live`) is live:
/// frames are dropped when the chain falls behind, and counted.
#[test]
fn a_live_fragment_is_live_however_it_is_spelt() {
    for spelling in ["is-live=1", "is-live=TRUE"] {
        let input = format!(
            "videotestsrc {spelling} num-buffers=45 ! video/x-raw,width=640,height=480,framerate=30/1"
        );
        let o = run(&["run", &input, "null", "--json", "--op", SLOW]);
        assert!(o.status.success(), "{}", stderr(&o));
        let out = String::from_utf8_lossy(&o.stdout);
        assert_eq!(json_field(&out, "live"), "true", "{spelling}: {out}");
        let dropped: u64 = json_field(&out, "dropped").parse().unwrap();
        assert!(dropped > 0, "{spelling}: nothing dropped: {out}");
    }
}

/// RTP over UDP from a sender on this machine is live (udpsrc does not
/// preroll): the run keeps pace by dropping, and `--live` is not needed.
#[test]
fn an_rtp_stream_over_udp_is_live() {
    gst::init().unwrap();
    let (port, input) = rtp_receiver();
    let child = spawn(&["run", &input, "null", "--json", "--op", SLOW]);
    // The receiver listens before the sender starts.
    std::thread::sleep(Duration::from_millis(1500));
    send_live_rtp(90, port);
    // UDP carries no end of stream: stopped as a user would, with Ctrl-C.
    stopped_live_and_kept_pace(child, "udp receiver");
}

/// A free UDP port on this machine, and a source fragment receiving H.264
/// over RTP on it.
fn rtp_receiver() -> (u16, String) {
    let port = std::net::UdpSocket::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let input = format!(
        "udpsrc address=127.0.0.1 port={port} caps=\"application/x-rtp,media=video,clock-rate=90000,encoding-name=H264,payload=96\" \
         ! rtph264depay ! h264parse ! avdec_h264"
    );
    (port, input)
}

/// Sends `frames` frames of a live 30 fps test source as H.264 over RTP to
/// `port` on this machine.
fn send_live_rtp(frames: u32, port: u16) {
    let send = format!(
        "videotestsrc is-live=true num-buffers={frames} ! video/x-raw,width=640,height=480,framerate=30/1 \
         ! x264enc tune=zerolatency key-int-max=15 ! rtph264pay config-interval=1 pt=96 \
         ! udpsink host=127.0.0.1 port={port}"
    );
    play_to_eos(&gst::parse::launch(&send).unwrap(), "sending");
}

/// Stops a live `run ... --json` with Ctrl-C, and checks that it was live
/// and kept pace: more than 30 frames in, some dropped.
fn stopped_live_and_kept_pace(child: std::process::Child, what: &str) {
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = finish(child, what, Duration::from_secs(60));
    let out = String::from_utf8_lossy(&o.stdout);
    assert_eq!(json_field(&out, "live"), "true", "{out}{}", stderr(&o));
    let (fin, dropped): (u64, u64) = (
        json_field(&out, "frames_in").parse().unwrap(),
        json_field(&out, "dropped").parse().unwrap(),
    );
    assert!(fin > 30, "{out}{}", stderr(&o));
    assert!(dropped > 0, "nothing dropped: {out}");
}

/// A still picture as input is repeated like a test source: `--frames`
/// frames at `--fps`, each at its time (it was one frame of no length).
#[test]
fn a_still_picture_becomes_a_clip_of_frames_at_the_rate() {
    let dir = tempdir("still");
    let png = dir.join("still.png");
    gst::init().unwrap();
    let make = format!(
        "videotestsrc num-buffers=1 ! video/x-raw,width=64,height=48 ! pngenc ! filesink location=\"{}\"",
        png.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "making the picture");
    let out = dir.join("still.mp4");
    let o = run(&[
        "run",
        png.to_str().unwrap(),
        out.to_str().unwrap(),
        "--frames",
        "45",
        "--fps",
        "15",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let frames = decode(&out);
    assert_eq!(frames.len(), 45, "{}", stderr(&o));
    let last = frames.last().unwrap().0;
    assert_eq!(last, 44 * 1_000_000_000 / 15, "{frames:?}");
}

/// A named pipe in `dir` and a thread writing `file` into it; the thread
/// gives whether the whole file went through (opening blocks until a
/// reader opens the pipe).
fn through_a_fifo(dir: &Path, file: &Path) -> (PathBuf, std::thread::JoinHandle<bool>) {
    let fifo = dir.join("pipe");
    let made = Command::new("mkfifo").arg(&fifo).status().unwrap();
    assert!(made.success());
    let (from, to) = (file.to_path_buf(), fifo.clone());
    let writer = std::thread::spawn(move || {
        let bytes = std::fs::read(from).unwrap();
        std::fs::write(to, bytes).is_ok()
    });
    (fifo, writer)
}

/// A named pipe is read as it streams: nothing looks into it before the
/// run (a look would take its first bytes), and every frame comes through.
/// It hung once (`mkfifo f; cat clip.mkv > f & seamstream run f null`).
#[test]
fn a_named_pipe_is_read_as_it_streams() {
    let dir = tempdir("fifo");
    let clip = dir.join("clip.mkv");
    test_clip(
        &clip,
        30,
        "width=64,height=48,format=I420,framerate=30/1",
        "x264enc ! matroskamux",
    );
    let (fifo, writer) = through_a_fifo(&dir, &clip);
    let o = run(&[
        "run",
        fifo.to_str().unwrap(),
        "null",
        "--op",
        "sobel",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(writer.join().unwrap());
    let out = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(json_field(&out, "frames_out"), "30", "{out}");
    // A split job reads its input ahead: a pipe is refused, and says why.
    let split = dir.join("split.mp4");
    let o = run(&[
        "run",
        fifo.to_str().unwrap(),
        split.to_str().unwrap(),
        "--workers",
        "2",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("a pipe or a device"), "{}", stderr(&o));
    assert!(!split.exists());
}

/// An MP4 or QuickTime file whose index comes after its first 10 MB
/// cannot be read through a pipe (GStreamer's reader cannot seek back to
/// it): the run says so and what to do, instead of GStreamer's "no 'moov'
/// atom", and writes nothing.
#[test]
fn an_mp4_with_its_index_at_the_end_through_a_pipe_says_what_to_do() {
    let dir = tempdir("fifo-moov");
    // 24 raw 640x480 frames, 14.7 MB; qtmux writes the index last.
    let clip = dir.join("clip.mov");
    test_clip(
        &clip,
        24,
        "width=640,height=480,format=UYVY,framerate=30/1",
        "qtmux",
    );
    let (fifo, writer) = through_a_fifo(&dir, &clip);
    let out = dir.join("out.mp4");
    let o = run(&[
        "run",
        fifo.to_str().unwrap(),
        out.to_str().unwrap(),
        "--op",
        "sobel",
    ]);
    // The reader stops early: the writer's broken pipe is expected.
    writer.join().unwrap();
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    for said in ["index", "first 10 MB", "Matroska", "faststart"] {
        assert!(err.contains(said), "expected `{said}` in: {err}");
    }
    assert!(!out.exists());
    // The file itself is read whole.
    let o = run(&[
        "run",
        clip.to_str().unwrap(),
        "null",
        "--op",
        "sobel",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let json = String::from_utf8_lossy(&o.stdout).into_owned();
    assert_eq!(json_field(&json, "frames_out"), "24", "{json}");
}

/// A minimal RTSP server on this machine for one client: it answers
/// OPTIONS, DESCRIBE (one H.264 stream), SETUP (RTP over UDP to the
/// client's ports) and PLAY, after which `frames` frames of a live test
/// source are sent to the client; anything else is answered with 200.
fn serve_rtsp_once(listener: std::net::TcpListener, frames: u32) {
    use std::io::{BufRead, BufReader, Write};
    let Ok((stream, _)) = listener.accept() else {
        return;
    };
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut out = stream;
    let port = listener.local_addr().unwrap().port();
    let mut client_port = None;
    let mut sender: Option<std::thread::JoinHandle<()>> = None;
    loop {
        let mut head = Vec::new();
        loop {
            let mut line = String::new();
            if reader.read_line(&mut line).unwrap_or(0) == 0 {
                return;
            }
            if line == "\r\n" {
                break;
            }
            head.push(line.trim_end().to_string());
        }
        let Some(method) = head.first().and_then(|l| l.split(' ').next()) else {
            return;
        };
        let header = |name: &str| {
            head.iter().find_map(|l| {
                l.split_once(':')
                    .filter(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.trim().to_string())
            })
        };
        let cseq = header("CSeq").unwrap_or_default();
        let (extra, body) = match method {
            "OPTIONS" => (
                "Public: OPTIONS, DESCRIBE, SETUP, PLAY, TEARDOWN, GET_PARAMETER\r\n".to_string(),
                String::new(),
            ),
            "DESCRIBE" => {
                let sdp = "v=0\r\no=- 1 1 IN IP4 127.0.0.1\r\ns=test\r\nc=IN IP4 127.0.0.1\r\nt=0 0\r\n\
                           m=video 0 RTP/AVP 96\r\na=rtpmap:96 H264/90000\r\na=control:track0\r\n";
                (
                    format!(
                        "Content-Type: application/sdp\r\nContent-Base: rtsp://127.0.0.1:{port}/clip/\r\n"
                    ),
                    sdp.to_string(),
                )
            }
            "SETUP" => {
                let transport = header("Transport").unwrap_or_default();
                client_port = transport
                    .split(';')
                    .find_map(|p| p.strip_prefix("client_port="))
                    .and_then(|p| p.split('-').next())
                    .and_then(|p| p.parse::<u16>().ok());
                let Some(rtp) = client_port else {
                    // Only UDP is served: the client asks again with it.
                    write!(
                        out,
                        "RTSP/1.0 461 Unsupported Transport\r\nCSeq: {cseq}\r\n\r\n"
                    )
                    .unwrap();
                    continue;
                };
                (
                    format!(
                        "Transport: RTP/AVP;unicast;client_port={rtp}-{};server_port=6970-6971\r\nSession: 12345678\r\n",
                        rtp + 1
                    ),
                    String::new(),
                )
            }
            "PLAY" => {
                if let Some(rtp) = client_port {
                    sender = Some(std::thread::spawn(move || send_live_rtp(frames, rtp)));
                }
                ("Session: 12345678\r\n".to_string(), String::new())
            }
            _ => ("Session: 12345678\r\n".to_string(), String::new()),
        };
        write!(
            out,
            "RTSP/1.0 200 OK\r\nCSeq: {cseq}\r\n{extra}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
        .unwrap();
        if method == "TEARDOWN" {
            break;
        }
        if let Some(s) = sender.take_if(|s| s.is_finished()) {
            let _ = s.join();
        }
    }
    if let Some(s) = sender {
        let _ = s.join();
    }
}

/// An `rtsp://` URI served from this machine is live (rtspsrc does not
/// preroll) without `--live`: the run keeps pace by dropping, as with any
/// live source (it ran with backpressure, ever later).
#[test]
fn an_rtsp_stream_is_live() {
    gst::init().unwrap();
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || serve_rtsp_once(listener, 90));
    let uri = format!("rtsp://127.0.0.1:{port}/clip");
    let child = spawn(&["run", &uri, "null", "--json", "--op", SLOW]);
    // 90 frames at 30 fps, and the session's start.
    std::thread::sleep(Duration::from_secs(6));
    stopped_live_and_kept_pace(child, "rtsp receiver");
    drop(server);
}

/// A live source with no sender yet (UDP) keeps the run waiting: after 20 s
/// it says so once and goes on waiting until stopped (it was aborted with
/// "is it a complete, playable video?").
#[test]
fn a_live_source_that_waits_for_its_sender_is_waited_for() {
    let (_, input) = rtp_receiver();
    let mut child = spawn(&["run", &input, "null"]);
    std::thread::sleep(Duration::from_secs(24));
    assert!(
        child.try_wait().unwrap().is_none(),
        "the run gave up on a live source that waits"
    );
    // SAFETY: kill(2) on our own child's pid.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let o = finish(child, "waiting receiver", Duration::from_secs(30));
    let text = stderr(&o);
    assert_eq!(
        text.matches("has given no frame in 20 s; still waiting")
            .count(),
        1,
        "{text}"
    );
    assert!(!text.contains("complete, playable"), "{text}");
}
