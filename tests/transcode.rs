//! `seamstream run` as a transcoder (issue 11): audio kept, the encoder
//! chosen, no file destroyed, failures fast and named. Clips are made in
//! the tests; the shared real clips are used too where they are present.

mod common;

use std::path::Path;
use std::time::{Duration, Instant};

use common::video::*;
use gstreamer as gst;

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// The end of the first stream whose caps name starts with `prefix`.
fn end_of(streams: &[(String, u64)], prefix: &str) -> Option<u64> {
    streams
        .iter()
        .find(|(name, _)| name.starts_with(prefix))
        .map(|&(_, end)| end)
}

/// A 40 ms frame at 25 fps, in ns.
const FRAME_NS: u64 = 40_000_000;

#[test]
fn audio_is_kept_in_mp4_mkv_and_webm_within_a_frame_of_the_video() {
    let dir = tempdir("audio");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let streams = media_streams(&input);
    let (in_video, in_audio) = (
        end_of(&streams, "video/").unwrap(),
        end_of(&streams, "audio/").unwrap(),
    );
    for (name, audio) in [
        ("o.mp4", "audio/mpeg"),
        ("o.mkv", "audio/mpeg"),
        // WebM takes no AAC: re-encoded to Opus, and the summary says so.
        ("o.webm", "audio/x-opus"),
    ] {
        let out = dir.join(name);
        let o = run(&[
            "run",
            s(&input),
            s(&out),
            "--op",
            "gaussian:sigma=1",
            "--json",
        ]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let json = String::from_utf8_lossy(&o.stdout);
        assert!(json.contains("\"type\":\"audio\""), "{name}: {json}");
        let expected = if audio == "audio/mpeg" {
            "copied"
        } else {
            "re-encoded to Opus"
        };
        assert!(json.contains(expected), "{name}: {json}");
        let streams = media_streams(&out);
        let video = end_of(&streams, "video/").expect("a video stream");
        let sound = end_of(&streams, audio).unwrap_or_else(|| panic!("{name}: {streams:?}"));
        // Every frame and all the sound, in step: the video ends where the
        // input's does, the audio where the input's does (its encoder pads
        // the last packet, 23 ms past the video here).
        assert!(
            video.abs_diff(in_video) <= FRAME_NS / 2 && sound.abs_diff(in_audio) <= FRAME_NS,
            "{name}: video ends at {video} ns (input {in_video}), audio at {sound} ns (input {in_audio})"
        );
        assert!(
            sound.abs_diff(video) <= FRAME_NS + 23_000_000,
            "{name}: {sound} vs {video} ns"
        );
    }
}

/// `--frames N` on a file, as ffmpeg's `-frames:v N`: the first N frames,
/// with the audio that goes with them, cut where the video ends; a count
/// past the file's end takes it whole, as does a pipeline file's `frames`
/// (its test sources'); a split job refuses it.
#[test]
fn frames_takes_a_files_first_frames_and_their_audio() {
    let dir = tempdir("frames");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let in_audio = end_of(&media_streams(&input), "audio/").unwrap();
    let out = dir.join("first.mp4");
    let o = run(&["run", s(&input), s(&out), "--frames", "20"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let frames = decode(&out);
    assert_eq!(frames.len(), 20, "{frames:?}");
    let streams = media_streams(&out);
    let (video, sound) = (
        end_of(&streams, "video/").unwrap(),
        end_of(&streams, "audio/").unwrap(),
    );
    assert!(
        video.abs_diff(20 * FRAME_NS) <= FRAME_NS / 2,
        "video ends at {video} ns"
    );
    // The audio ends with the video: its last packet (23 ms of AAC) starts
    // before the cut, and none after it.
    assert!(
        sound >= video.saturating_sub(23_000_000) && sound <= video + 24_000_000,
        "audio ends at {sound} ns, the video at {video} ns (the input's audio at {in_audio} ns)"
    );
    // More frames than the file has: all of it, the audio whole.
    let whole = dir.join("whole.mp4");
    let o = run(&["run", s(&input), s(&whole), "--frames", "1000"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode(&whole).len(), 50);
    let sound = end_of(&media_streams(&whole), "audio/").unwrap();
    assert!(
        sound.abs_diff(in_audio) <= FRAME_NS,
        "{sound} vs {in_audio} ns"
    );
    // A pipeline file's `frames` is for its test sources and pictures: a
    // file given with -i is taken whole.
    let toml = dir.join("job.toml");
    std::fs::write(&toml, "[input]\nsource = \"sample\"\nframes = 5\n").unwrap();
    let piped = dir.join("piped.mp4");
    let o = run(&[
        "run",
        "--pipeline",
        s(&toml),
        "-i",
        s(&input),
        "-o",
        s(&piped),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode(&piped).len(), 50, "{}", stderr(&o));
    // A split job takes the whole file: --frames is refused, by name.
    let split = dir.join("split.mp4");
    let o = run(&[
        "run",
        s(&input),
        s(&split),
        "--workers",
        "2",
        "--frames",
        "20",
    ]);
    assert!(!o.status.success());
    assert!(stderr(&o).contains("--frames 20"), "{}", stderr(&o));
    assert!(!split.exists());
}

#[test]
fn audio_is_carried_when_the_input_shows_its_streams_at_once() {
    // The run's thread is held up (injected) once the input's streaming
    // threads have started, so that they show every stream before it goes
    // on, as they did on a busy machine (5 runs in 90 lost their audio):
    // the handlers must already be there.
    let dir = tempdir("early-pads");
    let input = dir.join("in.webm");
    clip_with_audio(&input, 1);
    let out = dir.join("o.mp4");
    let child = command(&["run", s(&input), s(&out), "--device", "cpu"])
        .env("SEAMSTREAM_INJECT_SLOW_START_MS", "1000")
        .spawn()
        .unwrap();
    let o = finish(child, "the run", DEADLINE);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("stream 1: audio vorbis"),
        "{}",
        stderr(&o)
    );
    let streams = media_streams(&out);
    assert!(end_of(&streams, "audio/mpeg").is_some(), "{streams:?}");
}

#[test]
fn vorbis_in_webm_goes_to_mp4_as_aac_and_no_audio_drops_it() {
    let dir = tempdir("vorbis");
    let input = dir.join("in.webm");
    clip_with_audio(&input, 1);
    let out = dir.join("o.mp4");
    let o = run(&["run", s(&input), s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("vorbis") && stderr(&o).contains("re-encoded to AAC"),
        "{}",
        stderr(&o)
    );
    let streams = media_streams(&out);
    assert!(end_of(&streams, "audio/mpeg").is_some(), "{streams:?}");
    let quiet = dir.join("quiet.mkv");
    let o = run(&["run", s(&input), s(&quiet), "--no-audio"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("dropped: --no-audio"), "{}", stderr(&o));
    let streams = media_streams(&quiet);
    assert!(end_of(&streams, "audio/").is_none(), "{streams:?}");
    assert!(end_of(&streams, "video/").is_some(), "{streams:?}");
}

#[test]
fn the_shared_clips_keep_their_audio() {
    let shared = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/data/video");
    let clip = shared.join("film-dialogue-480p.mp4");
    if !clip.exists() {
        eprintln!("skipped: {} is not here", clip.display());
        return;
    }
    let dir = tempdir("shared-audio");
    let out = dir.join("film.mkv");
    let o = run(&[
        "run",
        s(&clip),
        s(&out),
        "--op",
        "retarget:width=75%",
        "--preset",
        "ultrafast",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let (before, after) = (media_streams(&clip), media_streams(&out));
    let (a0, a1) = (
        end_of(&before, "audio/").unwrap(),
        end_of(&after, "audio/").unwrap(),
    );
    assert!(
        a0.abs_diff(a1) <= 1_000_000_000 / 30,
        "audio {a0} -> {a1} ns"
    );
}

#[test]
fn an_output_that_is_the_input_is_refused_under_every_name() {
    let dir = tempdir("same");
    let a = dir.join("a.mp4");
    let o = run(&[
        "run",
        "test:ball",
        s(&a),
        "--frames",
        "20",
        "--size",
        "64x48",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let original = std::fs::read(&a).unwrap();
    std::os::unix::fs::symlink(&a, dir.join("link.mp4")).unwrap();
    let uri = format!("file://{}", s(&a));
    for (input, output) in [
        ("a.mp4", "a.mp4"),
        ("./a.mp4", "a.mp4"),
        ("a.mp4", "./link.mp4"),
        ("link.mp4", "a.mp4"),
        (uri.as_str(), "a.mp4"),
    ] {
        let o = run_in(&dir, &["run", input, output], DEADLINE);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{input} -> {output}: {}",
            stderr(&o)
        );
        assert!(stderr(&o).contains("that is the input"), "{}", stderr(&o));
        assert_eq!(std::fs::read(&a).unwrap(), original, "{input} -> {output}");
    }
}

/// `--size` and `--fps` shape what the run makes itself; on a file, which
/// has its own, they were silently ignored. They are refused, saying what
/// to do instead, and nothing is written.
#[test]
fn size_and_rate_asked_of_a_file_are_refused_with_what_to_do() {
    let dir = tempdir("made");
    let a = dir.join("a.mp4");
    let o = run(&[
        "run",
        "test:ball",
        s(&a),
        "--frames",
        "4",
        "--size",
        "64x48",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = dir.join("o.mp4");
    for (flag, value, advice) in [
        ("--size", "32x24", "--op reframe:width=32,height=24"),
        ("--fps", "25", "leave out --fps"),
    ] {
        let o = run(&["run", s(&a), s(&out), flag, value]);
        assert_eq!(o.status.code(), Some(1), "{flag}: {}", stderr(&o));
        let e = stderr(&o);
        assert!(
            e.contains(&format!("{flag} {value}")) && e.contains(advice),
            "{flag}: {e}"
        );
        assert!(!out.exists(), "{flag}: an output was written");
    }
    // What the run makes itself still takes them.
    let o = run(&[
        "run",
        "test:ball",
        s(&out),
        "--frames",
        "2",
        "--size",
        "32x24",
        "--fps",
        "25",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(decode(&out).first().map(|f| (f.1, f.2)), Some((32, 24)));
}

#[test]
fn a_file_cut_short_is_said_to_end_before_its_stated_length() {
    let dir = tempdir("short");
    let whole = dir.join("whole.mkv");
    // A key frame every 10, so that a cut keeps the frames before it.
    test_clip(
        &whole,
        100,
        "width=160,height=120,framerate=25/1",
        "x264enc key-int-max=10 ! matroskamux",
    );
    // A download that stopped: the first 60% of the file's bytes, whose
    // header still states the whole 4 s.
    let bytes = std::fs::read(&whole).unwrap();
    let cut = dir.join("cut.mkv");
    std::fs::write(&cut, &bytes[..bytes.len() * 6 / 10]).unwrap();
    let out = dir.join("o.mkv");
    let o = run(&["run", s(&cut), s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let frames = v["frames_out"].as_u64().unwrap();
    assert!((1..100).contains(&frames), "{frames} frames of 100");
    let (end, stated) = (
        v["ended_early"]["end"].as_f64(),
        v["ended_early"]["stated"].as_f64(),
    );
    let (Some(end), Some(stated)) = (end, stated) else {
        panic!("no early end said: {v}");
    };
    assert!((stated - 4.0).abs() < 0.05, "stated {stated} s");
    assert!(
        (end - frames as f64 * 0.04).abs() < 0.05,
        "ends at {end} s with {frames} frames"
    );
    assert_eq!(
        decode(&out).len() as u64,
        frames,
        "every frame it holds kept"
    );
    // Told as a warning, the run still a success.
    let o = run(&["run", s(&cut), s(&out)]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("warning: the input ends at") && stderr(&o).contains("cut short"),
        "{}",
        stderr(&o)
    );
    // The whole file says nothing of the kind.
    let o = run(&["run", s(&whole), s(&out), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(v["ended_early"].is_null(), "{v}");
}

#[test]
fn a_failed_run_keeps_the_existing_output() {
    let dir = tempdir("keep");
    let keep = dir.join("keep.mp4");
    let o = run(&[
        "run",
        "test:ball",
        s(&keep),
        "--frames",
        "10",
        "--size",
        "64x48",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let original = std::fs::read(&keep).unwrap();
    let text = dir.join("text.mp4");
    std::fs::write(&text, "not a video").unwrap();
    let audio_only = dir.join("tone.mka");
    {
        use gstreamer as gst;
        use gstreamer::prelude::*;
        gst::init().unwrap();
        let p = gst::parse::launch(&format!(
            "audiotestsrc num-buffers=20 ! audioconvert ! vorbisenc ! matroskamux ! filesink location=\"{}\"",
            s(&audio_only)
        ))
        .unwrap();
        p.set_state(gst::State::Playing).unwrap();
        let _ = p.bus().unwrap().timed_pop_filtered(
            gst::ClockTime::from_seconds(30),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        );
        p.set_state(gst::State::Null).unwrap();
    }
    let cases: [&[&str]; 4] = [
        &["run", s(&text), s(&keep)],
        &["run", s(&audio_only), s(&keep)],
        &["run", "test:ball", s(&keep), "--op", "retarget:width=300%"],
        &[
            "run",
            "test:ball",
            s(&keep),
            "--size",
            "8x8",
            "--frames",
            "5",
        ],
    ];
    for args in cases {
        let o = run(args);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        assert_eq!(std::fs::read(&keep).unwrap(), original, "{args:?}");
    }
    // Nothing but the inputs and the kept output is left behind.
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["keep.mp4", "text.mp4", "tone.mka"]);
}

#[test]
fn output_limits_fail_at_once_and_name_the_size() {
    let dir = tempdir("small");
    for (args, size) in [
        (vec!["--size", "8x8"], "8x8"),
        (
            vec!["--size", "64x48", "--op", "retarget:width=10"],
            "10x48",
        ),
    ] {
        let out = dir.join("x.mp4");
        let mut all = vec!["run", "test:ball", s(&out), "--frames", "30"];
        all.extend(args);
        let start = Instant::now();
        let o = run(&all);
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "{all:?} took {:?}",
            start.elapsed()
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(size) && stderr(&o).contains("16x16"),
            "{}",
            stderr(&o)
        );
        assert!(!out.exists());
    }
    // A sink fragment whose caps cannot be met fails fast too, naming it.
    let start = Instant::now();
    let o = run(&[
        "run",
        "test:ball",
        "video/x-raw,width=99 ! fakesink",
        "--frames",
        "30",
    ]);
    assert!(
        start.elapsed() < Duration::from_secs(10),
        "took {:?}",
        start.elapsed()
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("would not take"), "{}", stderr(&o));
}

#[test]
fn a_second_writer_is_refused_and_the_first_finishes() {
    let dir = tempdir("writers");
    let out = dir.join("o.mp4");
    let first = command(&[
        "run",
        "test:ball",
        s(&out),
        "--frames",
        "400",
        "--size",
        "64x48",
    ])
    .spawn()
    .unwrap();
    let partial = dir.join("o.partial.mp4");
    let start = Instant::now();
    while !partial.exists() && start.elapsed() < DEADLINE {
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = run(&[
        "run",
        "test:ball",
        s(&out),
        "--frames",
        "5",
        "--size",
        "64x48",
    ]);
    let first = finish(first, "the first writer", DEADLINE);
    assert!(first.status.success(), "{}", stderr(&first));
    // The first may have finished before the second looked; then the
    // second ran alone and wrote its own complete file.
    let frames = decode(&out).len();
    if second.status.success() {
        assert_eq!(frames, 5);
    } else {
        assert!(
            stderr(&second).contains("another seamstream run"),
            "{}",
            stderr(&second)
        );
        assert_eq!(frames, 400);
    }
}

#[test]
fn a_killed_run_leaves_a_playable_mp4() {
    // Some fragments (a second each) are written, then the process dies.
    let frames = killed_run("kill", "mp4", &[], |partial| {
        std::fs::metadata(partial).map_or(0, |m| m.len()) >= 60_000
    });
    assert!(frames >= 30, "{frames} frames");
}

/// Runs test:ball (160x96, without end) into `k.EXT` with `extra`
/// arguments, kills it (SIGKILL) once `ready` holds for its partial file
/// (or after the deadline), checks that no output took the target's name,
/// and returns the frames the partial file decodes to.
fn killed_run(name: &str, ext: &str, extra: &[&str], ready: impl Fn(&Path) -> bool) -> usize {
    let dir = tempdir(name);
    let out = dir.join(format!("k.{ext}"));
    let mut args = vec![
        "run",
        "test:ball",
        s(&out),
        "--frames",
        "0",
        "--size",
        "160x96",
    ];
    args.extend(extra);
    let mut child = command(&args).spawn().unwrap();
    let partial = dir.join(format!("k.partial.{ext}"));
    let start = Instant::now();
    while !ready(&partial) && start.elapsed() < DEADLINE {
        std::thread::sleep(Duration::from_millis(20));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(!out.exists());
    decode(&partial).len()
}

// A fault injected: only with the `fault-injection` feature (the tests' command).
#[cfg(feature = "fault-injection")]
#[test]
fn a_panic_in_the_chain_fails_the_run_and_names_the_thread() {
    let dir = tempdir("panic");
    let out = dir.join("p.mkv");
    let child = command(&[
        "run",
        "test:ball",
        s(&out),
        "--frames",
        "60",
        "--size",
        "64x48",
    ])
    .env("SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER", "20")
    .spawn()
    .unwrap();
    let o = finish(child, "the run", DEADLINE);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("seamstream-chain") && err.contains("panicked"),
        "{err}"
    );
    assert!(!out.exists());
    let partial: std::path::PathBuf = dir.join("p.partial.mkv");
    assert!(err.contains("p.partial.mkv"), "{err}");
    assert_eq!(decode(&partial).len(), 20);
}

#[test]
fn codecs_and_quality_are_chosen_like_ffmpeg() {
    let dir = tempdir("codecs");
    for (name, args, caps) in [
        (
            "h265.mp4",
            vec!["--codec", "h265", "--crf", "30"],
            "video/x-h265",
        ),
        ("vp9.webm", vec![], "video/x-vp9"),
        (
            "av1.mkv",
            vec!["--codec", "av1", "--preset", "ultrafast"],
            "video/x-av1",
        ),
        ("rate.mkv", vec!["--bitrate", "300"], "video/x-h264"),
    ] {
        let out = dir.join(name);
        let mut all = vec![
            "run",
            "test:ball",
            s(&out),
            "--frames",
            "6",
            "--size",
            "64x48",
        ];
        all.extend(args);
        let o = run(&all);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        let streams = media_streams(&out);
        assert!(end_of(&streams, caps).is_some(), "{name}: {streams:?}");
        assert!(
            stderr(&o).contains("6 frames in, 6 out"),
            "{name}: {}",
            stderr(&o)
        );
    }
    let out = dir.join("bad.mp4");
    for (args, says) in [
        (vec!["--codec", "mpeg2"], "h264, h265, vp9 or av1"),
        (vec!["--crf", "60"], "0 (best) to 51"),
        (vec!["--preset", "warp"], "veryslow"),
    ] {
        let mut all = vec!["run", "test:ball", s(&out), "--frames", "3"];
        all.extend(args);
        let o = run(&all);
        assert_eq!(o.status.code(), Some(1), "{all:?}");
        assert!(stderr(&o).contains(says), "{}", stderr(&o));
    }
    let o = run(&[
        "run",
        "test:ball",
        s(&dir.join("x.webm")),
        "--codec",
        "h264",
        "--frames",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr(&o).contains("cannot hold h264"), "{}", stderr(&o));
}

/// A still scene encoded at the default constant quality stays still: the
/// old 2 Mbit/s CBR default moved a still picture by 1.7 levels a frame.
#[test]
fn a_still_scene_stays_still() {
    let dir = tempdir("still");
    let out = dir.join("still.mkv");
    let o = run(&[
        "run",
        "videotestsrc pattern=pinwheel num-buffers=40 ! video/x-raw,width=640,height=480,framerate=25/1",
        s(&out),
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let frames = decode_rgba(&out);
    assert_eq!(frames.len(), 40);
    let mean_change = frames
        .windows(2)
        .map(|p| {
            p[0].iter()
                .zip(&p[1])
                .map(|(&a, &b)| a.abs_diff(b) as u64)
                .sum::<u64>() as f64
                / p[0].len() as f64
        })
        .sum::<f64>()
        / 39.0;
    assert!(
        mean_change < 0.1,
        "a still frame changes by {mean_change} levels"
    );
}

/// An .mkv killed in its first seconds keeps the frames it was given: the
/// file is written as the muxer gives it, not held in a 64 KB buffer
/// (killed 3-4 s in, it was 0 bytes).
#[test]
fn a_killed_mkv_run_keeps_its_frames_from_the_first_second() {
    // Live at 30 fps: 3.5 s after the file appears is about 105 frames
    // (x264 holds some 40 of them in its look-ahead), well under 64 KB of
    // H.264.
    let appeared = std::cell::Cell::new(None::<Instant>);
    let frames = killed_run("kill-mkv", "mkv", &["--live"], |partial| {
        if appeared.get().is_none() && partial.exists() {
            appeared.set(Some(Instant::now()));
        }
        appeared
            .get()
            .is_some_and(|t| t.elapsed() >= Duration::from_millis(3500))
    });
    assert!(frames >= 30, "{frames} frames");
}

/// A clip stored turned (a phone's 90° display matrix) is turned upright
/// before the chain: sizes such as `width=75%` are the displayed frame's,
/// and the summary says so (it came out sideways).
#[test]
fn a_turned_clip_is_processed_upright() {
    let dir = tempdir("turned");
    let plain = dir.join("plain.mp4");
    test_clip(&plain, 10, "width=64,height=48", "x264enc ! mp4mux");
    // The track's matrix turned 90° clockwise, as a phone held upright
    // writes it (tkhd, version 0: the matrix is 40 bytes after the type).
    let mut bytes = std::fs::read(&plain).unwrap();
    let at = bytes.windows(4).position(|w| w == b"tkhd").unwrap() + 4;
    assert_eq!(bytes[at], 0, "tkhd version");
    let matrix: [i32; 9] = [0, 0x10000, 0, -0x10000, 0, 0, 0, 0, 0x4000_0000];
    for (i, v) in matrix.iter().enumerate() {
        bytes[at + 40 + 4 * i..][..4].copy_from_slice(&v.to_be_bytes());
    }
    let turned = dir.join("turned.mp4");
    std::fs::write(&turned, &bytes).unwrap();
    let out = dir.join("out.mp4");
    let o = run(&["run", s(&turned), s(&out), "--op", "retarget:width=75%"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("rotate-90"), "{}", stderr(&o));
    let frames = decode(&out);
    assert_eq!(frames.len(), 10);
    assert_eq!((frames[0].1, frames[0].2), (36, 64), "{}", stderr(&o));
}

/// What the run changes in a stream beyond its chain is said in the
/// summary: a bit depth over 8, chroma finer than 4:2:0, interlacing, and a
/// second video stream dropped (all were changed without a word).
#[test]
fn what_the_run_changes_in_a_stream_is_said() {
    let dir = tempdir("said-changes");
    gst::init().unwrap();
    let cases = [
        (
            "deep.mp4",
            "format=I420_10LE",
            "",
            "mp4mux",
            "10-bit (I420_10LE) made 8-bit",
        ),
        (
            "full.mp4",
            "format=Y444",
            "",
            "mp4mux",
            "4:4:4 (Y444) made 4:2:0",
        ),
        (
            "woven.mp4",
            "format=I420,interlace-mode=interleaved",
            "interlaced=true",
            "mp4mux",
            "interlaced (interleaved) deinterlaced",
        ),
    ];
    for (name, caps, x264, mux, said) in cases {
        let file = dir.join(name);
        let make = format!(
            "videotestsrc num-buffers=10 ! video/x-raw,width=64,height=48,{caps} ! x264enc {x264} ! {mux} ! filesink location=\"{}\"",
            file.display()
        );
        play_to_eos(&gst::parse::launch(&make).unwrap(), name);
        let o = run(&["run", s(&file), "null"]);
        assert!(o.status.success(), "{name}: {}", stderr(&o));
        assert!(stderr(&o).contains(said), "{name}: {}", stderr(&o));
        // The summary names the decoder decodebin chose.
        assert!(
            stderr(&o).contains("stream 0: video 64x48, decoded by "),
            "{name}: {}",
            stderr(&o)
        );
    }
    // Two video streams: the second is listed as dropped.
    let two = dir.join("two.mkv");
    let make = format!(
        "matroskamux name=m ! filesink location=\"{}\" \
         videotestsrc num-buffers=10 ! video/x-raw,width=64,height=48,format=I420 ! x264enc ! m. \
         videotestsrc num-buffers=10 ! video/x-raw,width=32,height=24,format=I420 ! x264enc ! m.",
        two.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "two.mkv");
    let o = run(&["run", s(&two), "null"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stderr(&o);
    assert!(text.contains("stream 1: video 32x24: dropped"), "{text}");
    assert!(
        !text.contains("made 8-bit") && !text.contains("interlaced"),
        "{text}"
    );
    // `--frames` on a file takes its first frames, as ffmpeg's `-frames:v`.
    let o = run(&["run", s(&two), "null", "--frames", "3"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let text = stderr(&o);
    assert!(text.contains("3 frames in, 3 out"), "{text}");
}

/// Two clips of 30000/1001 and 24000/1001 fps concatenated into one H.264
/// stream: where the second starts, two frames come with one time, and the
/// encoder then gave a frame no time, which mp4mux refused ("Buffer has no
/// PTS") after 32 of 54 frames. Each such frame is timed one frame after
/// the one before, every frame is written, and the summary says so.
#[test]
fn frames_that_come_without_their_own_time_are_timed_and_kept() {
    let dir = tempdir("untimed");
    let input = dir.join("concat.mp4");
    gst::init().unwrap();
    let make = format!(
        "concat name=c ! x264enc ! h264parse ! mp4mux ! filesink location=\"{}\" \
         videotestsrc num-buffers=30 ! video/x-raw,format=I420,width=96,height=64,framerate=30000/1001 ! c. \
         videotestsrc num-buffers=24 pattern=ball ! video/x-raw,format=I420,width=96,height=64,framerate=24000/1001 ! c.",
        input.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "the concatenated clip");
    let frames = decode(&input).len();
    assert_eq!(frames, 54);
    let out = dir.join("out.mp4");
    let o = run(&["run", s(&input), s(&out), "--op", "sobel"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("1 frame had no time, or the time of a frame before it"),
        "{}",
        stderr(&o)
    );
    let times: Vec<u64> = decode(&out).iter().map(|f| f.0).collect();
    assert_eq!(times.len(), frames);
    assert!(times.windows(2).all(|w| w[0] < w[1]), "{times:?}");
}

/// Interlaced video is deinterlaced before the chain: a 50p ball woven into
/// 25i (each frame's rows alternate between two moments) comes out with
/// rows that follow each other, as many frames as went in. It was carved
/// combed, as if progressive.
#[test]
fn interlaced_video_is_deinterlaced_before_the_chain() {
    let dir = tempdir("interlaced");
    let input = dir.join("woven.mp4");
    gst::init().unwrap();
    let make = format!(
        "videotestsrc pattern=ball num-buffers=20 ! video/x-raw,width=128,height=96,format=I420,framerate=50/1 ! \
         interlace field-pattern=1:1 ! x264enc interlaced=true ! mp4mux ! filesink location=\"{}\"",
        input.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "the interlaced clip");
    let out = dir.join("out.mkv");
    let o = run(&["run", s(&input), s(&out), "--codec", "x264", "--crf", "0"]);
    assert!(o.status.success(), "{}", stderr(&o));
    assert!(stderr(&o).contains("deinterlaced"), "{}", stderr(&o));
    // Rows one apart against rows two apart (the same field), in green,
    // over the frames: over 1 where the two fields disagree.
    let comb = |frames: &[Vec<u8>]| {
        let (w, h) = (128usize, 96usize);
        let g = |f: &[u8], x: usize, y: usize| i64::from(f[(y * w + x) * 4 + 1]);
        let (mut near, mut far) = (0i64, 0i64);
        for f in frames {
            for y in (0..h - 2).step_by(2) {
                for x in 0..w {
                    near += (g(f, x, y) - g(f, x, y + 1)).abs();
                    far += (g(f, x, y) - g(f, x, y + 2)).abs();
                }
            }
        }
        near as f64 / far.max(1) as f64
    };
    let (woven, made) = (decode_rgba(&input), decode_rgba(&out));
    assert_eq!(made.len(), woven.len());
    assert!(
        comb(&woven) > 1.0,
        "the clip is not combed: {}",
        comb(&woven)
    );
    assert!(comb(&made) < 0.75, "still combed: {}", comb(&made));
}

/// Runs `args` (`$BIN` for the program, `$D` for a folder on a fresh tmpfs
/// of `size`) in a mount namespace of its own, then copies what `$D` holds
/// into `keep`; returns the run's output, or `None` where this machine
/// lets no process mount (the test then says so and checks nothing).
fn on_a_small_disk(size: &str, args: &[&str], keep: &Path) -> Option<std::process::Output> {
    let disk = keep.with_extension("disk");
    std::fs::create_dir_all(&disk).unwrap();
    std::fs::create_dir_all(keep).unwrap();
    let script = format!(
        "mount -t tmpfs -o size={size} tmpfs \"$D\" || exit 99; \"$BIN\" {} 2>\"$KEEP/stderr.txt\"; echo $? > \"$KEEP/rc.txt\"; cp \"$D\"/* \"$KEEP\"/ 2>/dev/null; exit 0",
        args.join(" ")
    );
    let out = std::process::Command::new("unshare")
        .args(["-r", "-m", "sh", "-c", &script])
        .env("D", &disk)
        .env("KEEP", keep)
        .env("BIN", binary())
        .output()
        .ok()?;
    if !out.status.success() {
        eprintln!(
            "no tmpfs could be mounted here (unshare -r -m: {}); the full-disk test checks nothing",
            String::from_utf8_lossy(&out.stderr).trim()
        );
        return None;
    }
    let rc: i32 = std::fs::read_to_string(keep.join("rc.txt"))
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    use std::os::unix::process::ExitStatusExt;
    Some(std::process::Output {
        status: std::process::ExitStatus::from_raw(rc << 8),
        stdout: Vec::new(),
        stderr: std::fs::read(keep.join("stderr.txt")).unwrap(),
    })
}

/// A disk that fills during a run or a join: the error names the file and
/// the full disk, and what is said to be kept is what the file holds read
/// back (a run claimed 230 frames where 227 decode, or an MP4 that held
/// none that play); a join, whose parts keep every frame, leaves nothing.
#[test]
fn a_full_disk_is_named_and_what_is_kept_is_what_the_file_holds() {
    let dir = tempdir("full-disk");
    let input = dir.join("snow.mkv");
    // Noise, which compresses badly: the disk fills within a few frames.
    gst::init().unwrap();
    let make = format!(
        "videotestsrc pattern=snow num-buffers=60 ! video/x-raw,width=320,height=240,format=I420 ! \
         x264enc speed-preset=ultrafast ! matroskamux ! filesink location=\"{}\"",
        input.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "the noise clip");
    for (ext, size) in [("mkv", "600k"), ("mp4", "300k")] {
        let keep = dir.join(format!("kept-{ext}"));
        let out = format!("\"$D\"/out.{ext}");
        let Some(o) = on_a_small_disk(
            size,
            &[
                "run",
                s(&input),
                &out,
                "--op",
                "sobel",
                "--codec",
                "x264",
                "--crf",
                "0",
            ],
            &keep,
        ) else {
            return;
        };
        let text = stderr(&o);
        assert!(!o.status.success(), "{ext}: {text}");
        assert!(
            text.contains("the disk is full") && text.contains(&format!("out.{ext}")),
            "{ext}: {text}"
        );
        let partial = keep.join(format!("out.partial.{ext}"));
        match text.split("The ").nth(1).and_then(|t| t.split(' ').next()) {
            Some(n) => {
                let n: usize = n.parse().unwrap_or_else(|_| panic!("{text}"));
                assert!(n > 0, "{text}");
                assert_eq!(decode(&partial).len(), n, "{ext}: {text}");
            }
            None => {
                assert!(text.contains("No frame reached the file"), "{ext}: {text}");
                assert!(
                    !partial.exists(),
                    "{ext}: an unplayable partial file was left"
                );
            }
        }
    }
    // A join: the parts on a disk with room, the joined file on a full one.
    let parts: Vec<String> = (0..2)
        .map(|k| {
            let part = dir.join(format!("part-{k}.mkv"));
            let o = run(&[
                "run",
                s(&input),
                s(&part),
                "--segment",
                &format!("{k}/2"),
                "--op",
                "sobel",
                "--codec",
                "x264",
                "--crf",
                "0",
            ]);
            assert!(o.status.success(), "{}", stderr(&o));
            s(&part).to_string()
        })
        .collect();
    let keep = dir.join("kept-join");
    let args: Vec<&str> = ["join", "\"$D\"/joined.mkv"]
        .into_iter()
        .chain(parts.iter().map(String::as_str))
        .collect();
    let o = on_a_small_disk("300k", &args, &keep).expect("mounted above");
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("the disk is full") && text.contains("joined"),
        "{text}"
    );
    let left: Vec<_> = std::fs::read_dir(&keep)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains("joined"))
        .collect();
    assert!(left.is_empty(), "the failed join left {left:?}");
}
