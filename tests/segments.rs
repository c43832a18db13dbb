//! Jobs split in time: `run --segment K/N`, `seamstream join` and
//! `run --workers M` (the CPU path of `--gpus`), against one run of the
//! same job. Parts are encoded losslessly (`--crf 0`) where frames are
//! compared, so that any difference is the split's.

mod common;

use std::path::{Path, PathBuf};

use gstreamer as gst;
use gstreamer::prelude::*;
use seamstream::gst::probe::{video_frames, video_stream};

use common::video::{
    clip_with_audio, decode, decode_rgba, pipeline_with_sink, play_to_eos, run, stderr, tempdir,
};

/// Where the chains run: the CPU, or `SEAMSTREAM_TEST_DEVICE` (`cuda` on
/// the GPU host, where `--workers` then also takes `--gpus 1`).
fn device() -> &'static str {
    static DEVICE: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DEVICE.get_or_init(|| std::env::var("SEAMSTREAM_TEST_DEVICE").unwrap_or_else(|_| "cpu".into()))
}

/// The encoding of every output: lossless, so that frames compare exactly;
/// on the GPU host (`SEAMSTREAM_TEST_DEVICE=cuda`) at the default quality
/// instead, since NVIDIA's decoder, the only H.264 decoder there, cannot
/// read x264's lossless profile (High 4:4:4).
fn lossless() -> Vec<&'static str> {
    match device() {
        "cuda" => vec!["--device", "cuda", "--preset", "ultrafast"],
        d => vec!["--device", d, "--crf", "0", "--preset", "ultrafast"],
    }
}

fn s(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// `seamstream ARGS… LOSSLESS`, which must succeed.
fn ok(args: &[&str]) -> String {
    let mut all = args.to_vec();
    all.extend(lossless());
    let out = run(&all);
    assert!(out.status.success(), "{all:?}: {}", stderr(&out));
    stderr(&out)
}

/// A clip of `frames` frames at 25 fps, 96x64, a keyframe every `gop`;
/// with `cut_at`, the picture changes completely at that frame.
fn clip(path: &Path, frames: u32, gop: u32, cut_at: Option<u32>) {
    gst::init().unwrap();
    let caps = "video/x-raw,width=96,height=64,framerate=25/1";
    // B-frames, but not across `concat`'s join (x264 then leaves a frame
    // without a time).
    let bframes = if cut_at.is_some() { 0 } else { 2 };
    let enc = format!(
        "x264enc key-int-max={gop} bframes={bframes} option-string=scenecut=0 ! h264parse ! mp4mux ! filesink location=\"{}\"",
        path.display()
    );
    let desc = match cut_at {
        None => format!("videotestsrc pattern=ball num-buffers={frames} ! {caps} ! {enc}"),
        Some(c) => format!(
            "concat name=c ! {enc} videotestsrc pattern=ball num-buffers={c} ! {caps} ! c. \
             videotestsrc pattern=smpte num-buffers={} ! {caps} ! c.",
            frames - c
        ),
    };
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
}

/// The same 21 frames (96x64 at 25 fps) twice through `concat` into one
/// file, the second copy starting `jump_ms` late, as a file looped or
/// concatenated with `ffmpeg -c copy` jumps where a copy starts. With
/// `variable` its caps say 0/1 (written as .mkv, which keeps that).
fn looped_clip(path: &Path, jump_ms: u64, variable: bool) {
    gst::init().unwrap();
    let caps = "video/x-raw,format=I420,width=96,height=64,framerate=25/1";
    let (rate, mux) = if variable {
        (
            "capssetter caps=\"video/x-raw,framerate=(fraction)0/1\" !",
            "matroskamux",
        )
    } else {
        ("", "mp4mux")
    };
    let copy = |offset: u64| {
        format!("videotestsrc pattern=ball num-buffers=21 timestamp-offset={offset} ! {caps} ! c.")
    };
    let desc = format!(
        "concat name=c ! {rate} x264enc bframes=0 key-int-max=10 ! h264parse ! {mux} ! filesink location=\"{}\" {} {}",
        path.display(),
        copy(0),
        copy(jump_ms * 1_000_000)
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
}

/// Runs segments 0..n of `input` into `dir/NAME-K.EXT` with `args`
/// through `runner` (which checks each run and returns what it said).
fn parts_with(
    input: &Path,
    dir: &Path,
    n: u32,
    (name, ext): (&str, &str),
    args: &[&str],
    runner: impl Fn(&[&str]) -> String,
) -> Vec<PathBuf> {
    (0..n)
        .map(|k| {
            let part = dir.join(format!("{name}-{k:05}.{ext}"));
            let seg = format!("{k}/{n}");
            runner(&[&["run", s(input), s(&part), "--segment", &seg], args].concat());
            part
        })
        .collect()
}

/// Segments 0..n of `op` on `input`, lossless, as `dir/part-K.mp4`.
fn segments(input: &Path, dir: &Path, n: u32, op: &str) -> Vec<PathBuf> {
    parts_with(input, dir, n, ("part", "mp4"), &["--op", op], ok)
}

/// Mean absolute difference of two decoded clips of the same frames.
fn mad(a: &[Vec<u8>], b: &[Vec<u8>]) -> f64 {
    assert_eq!(a.len(), b.len());
    let (sum, n) = a.iter().zip(b).fold((0u64, 0u64), |(s, n), (x, y)| {
        let d: u64 = x.iter().zip(y).map(|(p, q)| p.abs_diff(*q) as u64).sum();
        (s + d, n + x.len() as u64)
    });
    sum as f64 / n as f64
}

fn join(out: &Path, parts: &[PathBuf], audio_from: Option<&Path>) -> std::process::Output {
    let mut args = vec!["join", s(out)];
    args.extend(parts.iter().map(|p| s(p)));
    if let Some(a) = audio_from {
        args.extend(["--audio-from", s(a)]);
    }
    run(&args)
}

/// Presentation times of the video's frames (ns).
fn times(path: &Path) -> Vec<u64> {
    video_frames(path)
        .unwrap()
        .iter()
        .map(|f| f.pts.nseconds())
        .collect()
}

/// The audio's coded packets: (pts, bytes), in order.
fn audio_packets(path: &Path) -> Vec<(Option<u64>, Vec<u8>)> {
    let (pipe, sink) = pipeline_with_sink(
        &format!(
            "filesrc location=\"{}\" ! parsebin ! audio/mpeg ! appsink name=a sync=false",
            path.display()
        ),
        "a",
    );
    pipe.set_state(gst::State::Playing).unwrap();
    let mut packets = Vec::new();
    while let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_seconds(5)) {
        let b = sample.buffer().unwrap();
        packets.push((
            b.pts().map(|t| t.nseconds()),
            b.map_readable().unwrap().to_vec(),
        ));
    }
    pipe.set_state(gst::State::Null).unwrap();
    packets
}

#[test]
fn three_segments_joined_are_one_run_with_the_sources_audio() {
    let dir = tempdir("seg-three");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 4);
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", "gaussian:sigma=1.5"]);
    let parts = segments(&input, &dir, 3, "gaussian:sigma=1.5");
    // Parts are video only, each starting at 0.
    for p in &parts {
        let t = times(p);
        assert_eq!(t[0], 0, "{}", p.display());
        let streams = common::video::media_streams(p);
        assert!(
            streams.iter().all(|(kind, _)| kind.starts_with("video/")),
            "{}: {streams:?}",
            p.display()
        );
    }
    let joined = dir.join("joined.mp4");
    let out = join(&joined, &parts, Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(times(&joined), times(&single));
    assert_eq!(times(&joined).len(), 100);
    let (a, b) = (decode_rgba(&joined), decode_rgba(&single));
    assert_eq!(a.len(), b.len());
    assert!(a == b, "a stateless chain's frames differ after the split");
    // The audio is the source's, packet for packet: copied once, no gap.
    let source = audio_packets(&input);
    assert!(!source.is_empty());
    assert_eq!(audio_packets(&joined), source);
    assert_eq!(audio_packets(&single), source);
}

/// `input` run once into `dir/single.EXT` and split over 3 workers (GPU
/// workers on the GPU host) into `dir/out.EXT`, both with `sobel`; the two
/// files and what the split said.
fn single_and_split(input: &Path, dir: &Path, ext: &str) -> (PathBuf, PathBuf, String) {
    let single = dir.join(format!("single.{ext}"));
    ok(&["run", s(input), s(&single), "--op", "sobel"]);
    let out = dir.join(format!("out.{ext}"));
    let mut args = vec!["run", s(input), s(&out), "--workers", "3", "--op", "sobel"];
    if device() == "cuda" {
        args.extend(["--gpus", "1"]);
    }
    let said = ok(&args);
    (single, out, said)
}

#[test]
fn workers_run_the_job_in_segments_and_join_it() {
    let dir = tempdir("seg-workers");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 3);
    let (single, out, said) = single_and_split(&input, &dir, "mp4");
    assert!(said.contains("in 3 segments"), "{said}");
    assert_eq!(times(&out), times(&single));
    assert!(decode_rgba(&out) == decode_rgba(&single));
    assert_eq!(audio_packets(&out), audio_packets(&input));
    assert!(
        !dir.join("out.mp4.parts").exists(),
        "the parts are removed after the join"
    );
}

/// Output `null`: the workers process their segments and drop them (the
/// split job's speed without encoders): every frame counted, nothing
/// written, no parts folder left anywhere.
#[test]
fn a_split_job_into_null_processes_every_frame_and_writes_nothing() {
    let dir = tempdir("seg-null");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let frames = video_frames(&input).unwrap().len();
    let before: Vec<_> = std::fs::read_dir(&dir).unwrap().collect();
    let mut args = vec!["run", s(&input), "null", "--workers", "2", "--op", "sobel"];
    args.extend(["--device", device()]);
    if device() == "cuda" {
        args.extend(["--gpus", "1"]);
    }
    let out = run(&args);
    let said = stderr(&out);
    assert!(out.status.success(), "{said}");
    assert!(
        said.contains(&format!("{frames} frames in 2 segments")) && said.contains("output null"),
        "{said}"
    );
    assert!(!Path::new("null").exists(), "no file named null");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), before.len());
    // One segment by hand, into null, says which frames it took.
    let out = run(&[
        "run",
        s(&input),
        "null",
        "--segment",
        "1/2",
        "--op",
        "sobel",
    ]);
    assert!(out.status.success() && stderr(&out).contains("segment 1/2: frames "));
    // Encoder settings have nothing to encode: refused before any worker.
    let out = run(&["run", s(&input), "null", "--workers", "2", "--crf", "0"]);
    assert!(!out.status.success() && stderr(&out).contains("not to null"));
}

/// A chain that remembers (fast retargeting) has its parts start at a
/// scene cut near the even split, where its memory resets.
#[test]
fn a_boundary_near_a_scene_cut_moves_to_it() {
    let dir = tempdir("seg-cut");
    let input = dir.join("cut.mp4");
    // A cut at frame 46 of 100; the even split would be at 50 (the snap is
    // a quarter of a part here: 12 frames), a keyframe (every 25th).
    clip(&input, 100, 25, Some(46));
    let fast = ["--op", "retarget:width=75%", "--warmup", "0"];
    let (a_part, b_part) = (dir.join("a.mp4"), dir.join("b.mp4"));
    let b = ["run", s(&input), s(&b_part), "--segment", "1/2"];
    let said = ok(&[&b[..], &fast[..]].concat());
    assert!(
        said.contains("frames 46..100 of 100, from a scene cut"),
        "{said}"
    );
    assert!(
        said.contains("a boundary moves to a scene cut within 12 frames of it"),
        "{said}"
    );
    let a = ["run", s(&input), s(&a_part), "--segment", "0/2"];
    let said = ok(&[&a[..], &fast[..]].concat());
    assert!(said.contains("frames 0..46 of 100"), "{said}");
    let joined = dir.join("j.mp4");
    let out = join(
        &joined,
        &[dir.join("a.mp4"), dir.join("b.mp4")],
        Some(&input),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(times(&joined), times(&input));
}

/// A file whose times jump where a copy starts (42 frames, 130 ms late
/// from frame 21): the middle part of three holds the jump. Stamped by
/// their own times, its 14 frames lasted 50 ms on average, which qtdemux
/// reads back as 20/1 fps beside the others' 25/1, and the join refused it
/// ("it does not fit the first part (frame rate 20/1 against 25/1)"). On
/// the caps' clock every part is 25/1, and the job has every frame.
#[test]
fn a_looped_file_whose_times_jump_splits_and_joins_at_its_caps_rate() {
    let dir = tempdir("seg-looped");
    let input = dir.join("looped.mp4");
    looped_clip(&input, 130, false);
    let source = video_stream(&input).unwrap();
    assert_eq!(source.frames.len(), 42);
    let jump = source.frames[21].pts - source.frames[20].pts;
    assert_eq!(jump, gst::ClockTime::from_mseconds(170), "the clip's jump");
    assert_eq!(source.frame_rate, Some(gst::Fraction::new(25, 1)));
    let (single, out, said) = single_and_split(&input, &dir, "mp4");
    assert!(said.contains("42 frames in 3 segments"), "{said}");
    // Every frame once, in order: the frames are the single run's (lossy
    // on the GPU host, so there only counted).
    let (joined, one) = (decode_rgba(&out), decode_rgba(&single));
    assert_eq!(joined.len(), 42);
    assert!(
        device() == "cuda" || joined == one,
        "the split's frames differ from one run's"
    );
    // The single run's rate, and its frames on that rate's clock.
    let rate = |p: &Path| video_stream(p).unwrap().frame_rate;
    assert_eq!(rate(&out), rate(&single));
    assert_eq!(rate(&out), Some(gst::Fraction::new(25, 1)));
    let clock: Vec<u64> = (0..42).map(|i| common::video::frame_ns(i, 25)).collect();
    assert_eq!(times(&out), clock);
}

/// A file whose caps say 0/1 (a variable rate) has no clock to stamp its
/// parts on: each frame keeps its own time, the jump included, as in one
/// run, and the parts' caps say 0/1 as the source's do.
#[test]
fn a_variable_rate_file_split_and_joined_keeps_its_own_times() {
    let dir = tempdir("seg-variable");
    let input = dir.join("variable.mkv");
    looped_clip(&input, 130, true);
    assert_eq!(video_stream(&input).unwrap().frame_rate, None);
    let (single, out, _) = single_and_split(&input, &dir, "mkv");
    assert_eq!(times(&out).len(), 42);
    assert_eq!(times(&out), times(&single));
    assert_eq!(times(&out), times(&input));
    // The single run's caps: 0/1 from a CPU decoder; NVIDIA's decoder
    // reads a rate from the stream's timing information instead.
    let rate = video_stream(&out).unwrap().frame_rate;
    assert_eq!(rate, video_stream(&single).unwrap().frame_rate);
    assert!(device() == "cuda" || rate.is_none());
    assert!(device() == "cuda" || decode_rgba(&out) == decode_rgba(&single));
    // Joined without the source, Matroska parts keep no duration for their
    // last frame: each part follows the one before by its mean interval,
    // never on top of its last frame.
    let parts = parts_with(&input, &dir, 3, ("part", "mkv"), &["--op", "sobel"], ok);
    let alone = dir.join("alone.mkv");
    let joined = join(&alone, &parts, None);
    assert!(joined.status.success(), "{}", stderr(&joined));
    let t = times(&alone);
    assert_eq!(t.len(), 42);
    assert!(t.windows(2).all(|w| w[0] < w[1]), "{t:?}");
}

/// A file whose rate changes (30000/1001 for 45 frames, then 24000/1001,
/// its encoder given no rate, as a concat of two clips gives): its parts'
/// containers guess different rates from their frames' times, and each
/// worker's decoder starts from another part of the stream. The split job
/// still joins, with the single run's frame times (it failed at the join:
/// "frame rate 30/1 against 30000/1001").
#[test]
fn a_file_whose_rate_changes_splits_and_joins_with_its_own_times() {
    let dir = tempdir("seg-rate-change");
    let input = dir.join("changing.mp4");
    gst::init().unwrap();
    let part = |pattern: &str, n: u32, rate: &str, offset_ns: u64| {
        format!(
            "videotestsrc pattern={pattern} num-buffers={n} timestamp-offset={offset_ns} ! \
             video/x-raw,format=I420,width=96,height=64,framerate={rate} ! c."
        )
    };
    let desc = format!(
        "concat name=c ! capssetter caps=\"video/x-raw,framerate=(fraction)0/1\" ! \
         x264enc bframes=0 key-int-max=15 ! h264parse ! mp4mux ! filesink location=\"{}\" {} {}",
        input.display(),
        part("ball", 45, "30000/1001", 0),
        part("smpte", 36, "24000/1001", 45 * 1_001_000_000 / 30_000),
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
    let (single, out, said) = single_and_split(&input, &dir, "mp4");
    assert!(said.contains("in 3 segments"), "{said}");
    // Within the millisecond MP4's timescales round to (each part is an
    // MP4 of its own before the join).
    let near = |a: &[u64], b: &[u64]| {
        a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.abs_diff(*y) <= 1_000_000)
    };
    let (t, split) = (times(&single), times(&out));
    assert!(t.len() >= 80, "{}", t.len());
    assert!(near(&split, &t), "split {split:?}\none run {t:?}");
    assert!(near(&split, &times(&input)), "{split:?}");
    // The 24 fps half stays at 24 fps (it was put on the caps' mean rate).
    let last = &split[split.len() - 2..];
    assert!(
        (last[1] - last[0]).abs_diff(41_708_333) <= 1_000_000,
        "{last:?}"
    );
    assert!(device() == "cuda" || decode_rgba(&out) == decode_rgba(&single));
}

/// A chain without memory gives the same frames wherever a part starts:
/// its boundaries move to keyframes near the even split (the part then
/// decodes nothing before its first frame), the scene cut is not looked
/// for, and the parts join into the single run.
#[test]
fn a_stateless_chains_boundaries_move_to_keyframes_without_a_cut_search() {
    let dir = tempdir("seg-keyframes");
    let input = dir.join("in.mp4");
    // Keyframes every 30 frames (0, 30, 60, 90) and a cut at 46 that is not
    // one; the even split of 100 in two is at 50, the snap 12 frames.
    clip(&input, 100, 30, Some(46));
    let keys: Vec<usize> = video_frames(&input)
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(i, f)| f.keyframe.then_some(i))
        .collect();
    assert_eq!(keys, vec![0, 30, 60, 90]);
    let parts = parts_with(
        &input,
        &dir,
        2,
        ("part", "mp4"),
        &["--op", "sobel"],
        |args| {
            let said = ok(args);
            assert!(
                said.contains("no cut search: the chain has no memory"),
                "{said}"
            );
            said
        },
    );
    assert_eq!(times(&parts[0]).len(), 60);
    assert_eq!(times(&parts[1]).len(), 40);
    let alone = run(&[
        "run",
        s(&input),
        "null",
        "--segment",
        "1/2",
        "--op",
        "sobel",
    ]);
    let said = stderr(&alone);
    assert!(alone.status.success(), "{said}");
    assert!(
        said.contains("frames 60..100 of 100, from a keyframe"),
        "{said}"
    );
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", "sobel"]);
    let joined = dir.join("joined.mp4");
    let out = join(&joined, &parts, Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(times(&joined), times(&single));
    assert!(decode_rgba(&joined) == decode_rgba(&single));
}

/// A variable-rate file (caps 0/1) encoded into MP4 in one run keeps every
/// frame at its own time: x264 told 0/1 timed each frame 1 ns long, and
/// the MP4 reader dropped the last one (41 of 42 frames came back).
#[test]
fn a_variable_rate_file_into_mp4_keeps_every_frame_at_its_time() {
    let dir = tempdir("seg-variable-mp4");
    let input = dir.join("variable.mkv");
    looped_clip(&input, 130, true);
    let out = dir.join("out.mp4");
    let said = run(&[
        "run",
        s(&input),
        s(&out),
        "--op",
        "sobel",
        "--device",
        device(),
    ]);
    assert!(said.status.success(), "{}", stderr(&said));
    assert_eq!(times(&out).len(), 42);
    assert_eq!(times(&out), times(&input));
}

#[test]
fn one_frame_parts_and_more_parts_than_keyframes_lose_nothing() {
    let dir = tempdir("seg-small");
    let input = dir.join("in.mp4");
    // One keyframe in 12 frames, B-frames: every part but the first starts
    // mid-GOP, and the first and last parts are one frame each.
    clip(&input, 12, 100, None);
    let keyframes = video_frames(&input)
        .unwrap()
        .iter()
        .filter(|f| f.keyframe)
        .count();
    assert_eq!(keyframes, 1);
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", "gaussian:sigma=1"]);
    let parts = segments(&input, &dir, 12, "gaussian:sigma=1");
    for p in &parts {
        assert_eq!(times(p).len(), 1, "{}", p.display());
    }
    let joined = dir.join("joined.mp4");
    let out = join(&joined, &parts, Some(&input));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(times(&joined), times(&single));
    assert!(decode_rgba(&joined) == decode_rgba(&single));
    // Too many parts is refused, naming the counts.
    let out = run(&["run", s(&input), s(&dir.join("x.mp4")), "--segment", "0/13"]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("12 frames, too few for 13 parts"),
        "{}",
        stderr(&out)
    );
}

// A fault injected: only with the `fault-injection` feature (the tests' command).
#[cfg(feature = "fault-injection")]
#[test]
fn a_killed_worker_fails_the_job_and_its_segment_alone_finishes_it() {
    let dir = tempdir("seg-kill");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 3);
    let out = dir.join("out.mp4");
    let mut args = vec!["run", s(&input), s(&out), "--workers", "3", "--op", "sobel"];
    args.extend(lossless());
    let failed = common::video::command(&args)
        .env("SEAMSTREAM_INJECT_KILL_SEGMENT", "1")
        .output()
        .unwrap();
    let said = stderr(&failed);
    assert!(!failed.status.success(), "{said}");
    assert!(
        said.contains("segment 1/3") && said.contains("killed by signal"),
        "{said}"
    );
    assert!(!out.exists(), "no output after a failed worker");
    let parts_dir = dir.join("out.mp4.parts");
    let parts: Vec<PathBuf> = (0..3)
        .map(|k| parts_dir.join(format!("part-{k:05}.mp4")))
        .collect();
    assert!(parts[0].exists() && parts[2].exists() && !parts[1].exists());
    // A join without the missing part is refused, and writes nothing.
    let refused = join(&out, &[parts[0].clone(), parts[2].clone()], Some(&input));
    assert!(!refused.status.success());
    assert!(
        stderr(&refused).contains("part 1/3 is missing"),
        "{}",
        stderr(&refused)
    );
    assert!(!out.exists());
    // The retry the message gives: the segment alone, then the join.
    ok(&[
        "run",
        s(&input),
        s(&parts[1]),
        "--segment",
        "1/3",
        "--op",
        "sobel",
    ]);
    let joined = join(&out, &parts, Some(&input));
    assert!(joined.status.success(), "{}", stderr(&joined));
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", "sobel"]);
    assert!(decode_rgba(&out) == decode_rgba(&single));
}

/// A reframe in a split job is planned once, by the job, over the whole
/// input, and every worker replays the plan for its segment: the joined
/// file is the single run's, frame for frame. `--reframe-path` gets the
/// plan, and a single run replaying that file gives the same frames again.
#[test]
fn a_split_reframe_is_planned_once_and_replayed_by_every_worker() {
    let dir = tempdir("seg-reframe");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 3);
    let op = "reframe:aspect=9:16";
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", op]);
    let path = dir.join("plan.json");
    let out = dir.join("out.mp4");
    let mut args = vec![
        "run",
        s(&input),
        s(&out),
        "--workers",
        "2",
        "--op",
        op,
        "--reframe-path",
        s(&path),
        "--keep-parts",
    ];
    if device() == "cuda" {
        args.extend(["--gpus", "1"]);
    }
    let said = ok(&args);
    assert!(said.contains("frames analysed and planned ahead"), "{said}");
    assert!(path.exists(), "{said}");
    for k in 0..2 {
        let log =
            std::fs::read_to_string(dir.join(format!("out.mp4.parts/part-{k:05}.log"))).unwrap();
        assert!(log.contains("reframe: replayed"), "worker {k}: {log}");
    }
    assert!(decode_rgba(&out) == decode_rgba(&single));
    let replayed = dir.join("replayed.mp4");
    ok(&[
        "run",
        s(&input),
        s(&replayed),
        "--op",
        op,
        "--reframe-path",
        s(&path),
    ]);
    assert!(decode_rgba(&replayed) == decode_rgba(&single));
    // Asked for another shape, the file is refused, naming both sizes and
    // the shape to ask for, and nothing is written; at its shape but
    // another size, it is replayed.
    let square = dir.join("square.mp4");
    let o = run(&[
        "run",
        s(&input),
        s(&square),
        "--op",
        "reframe:aspect=1:1",
        "--reframe-path",
        s(&path),
    ]);
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("frames a 54x96 output, and this reframe makes 96x96")
            && text.contains("aspect=9:16"),
        "{text}"
    );
    assert!(!square.exists(), "{text}");
    let larger = dir.join("larger.mp4");
    let said = ok(&[
        "run",
        s(&input),
        s(&larger),
        "--op",
        "reframe:width=108,height=192",
        "--reframe-path",
        s(&path),
    ]);
    assert!(said.contains("reframe: replayed"), "{said}");
    let frames = decode(&larger);
    assert_eq!(frames.len(), decode(&single).len());
    assert!(
        frames.iter().all(|&(_, w, h)| (w, h) == (108, 192)),
        "{:?}",
        frames[0]
    );
    // That file replayed on frames of another size (96x64, not 160x96) is
    // refused, naming both sizes, and writes nothing.
    let other = dir.join("other.mp4");
    clip(&other, 40, 10, None);
    let wrong = dir.join("wrong.mp4");
    let o = run(&[
        "run",
        s(&other),
        s(&wrong),
        "--op",
        op,
        "--reframe-path",
        s(&path),
    ]);
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("was made for 160x96 frames, and these are 96x64"),
        "{text}"
    );
    assert!(!wrong.exists(), "{text}");
}

/// A path file edited by hand is what the run renders and what its summary
/// says: the shots come from its frames (not from its `shots` list, which an
/// editor may leave as it was), and frames past its last are said to keep
/// the last one's window.
#[test]
fn an_edited_path_file_is_summarised_as_it_is_replayed() {
    let dir = tempdir("seg-reframe-edited");
    let input = dir.join("in.mp4");
    clip(&input, 30, 10, None);
    let op = "reframe:aspect=9:16";
    let path = dir.join("plan.json");
    // Planned into the path file the first time, replayed from it after.
    let with_path = |out: &str| {
        ok(&[
            "run",
            s(&input),
            s(&dir.join(out)),
            "--op",
            op,
            "--reframe-path",
            s(&path),
        ])
    };
    let planned = with_path("a.mp4");
    assert!(planned.contains("frames 0-29"), "{planned}");
    // The first 12 frames kept, every one padded; the shots list untouched.
    let mut file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    let frames = file["frames"].as_array_mut().unwrap();
    frames.truncate(12);
    for f in frames.iter_mut() {
        f["mode"] = "pad".into();
        f.as_object_mut().unwrap().remove("carve_to");
    }
    std::fs::write(&path, file.to_string()).unwrap();
    let said = with_path("b.mp4");
    assert!(
        said.contains("replayed") && said.contains("1 shots:"),
        "{said}"
    );
    assert!(said.contains("frames 0-11 (0.00-0.48 s): pad"), "{said}");
    assert!(
        said.contains("plans frames 0-11 only; frames 12-29 kept the last one's window"),
        "{said}"
    );
}

/// `--frames N` (a preview of a long file) plans the reframe on the N
/// frames it writes, not on the whole file: the summary, the shots and the
/// path file stop where the output does.
#[test]
fn a_reframe_with_frames_plans_only_the_frames_it_writes_and_a_chain_takes_one() {
    let dir = tempdir("seg-reframe-frames");
    let input = dir.join("in.mp4");
    clip(&input, 40, 10, None);
    let path = dir.join("plan.json");
    let said = ok(&[
        "run",
        s(&input),
        s(&dir.join("out.mp4")),
        "--op",
        "reframe:aspect=9:16",
        "--frames",
        "12",
        "--reframe-path",
        s(&path),
    ]);
    assert!(said.contains("reframe: 12 frames analysed"), "{said}");
    assert!(said.contains("frames 0-11 "), "{said}");
    let file: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(file["frames"].as_array().unwrap().len(), 12);
    assert_eq!(decode_rgba(&dir.join("out.mp4")).len(), 12);
    // A second reframe (whose frames would be the first one's output,
    // planned by nothing) is refused, and nothing is written.
    let twice = dir.join("twice.mp4");
    let out = run(&[
        "run",
        s(&input),
        s(&twice),
        "--op",
        "reframe:aspect=9:16",
        "--op",
        "reframe:aspect=1:1",
    ]);
    assert!(!out.status.success());
    assert!(
        stderr(&out).contains("the chain has 2 reframes"),
        "{}",
        stderr(&out)
    );
    assert!(!twice.exists());
}

/// A vertical video posted at 16:9 (between black bars here; a blurred
/// copy of itself is found alike, `border.rs`) reframed to 9:16 is the
/// picture itself: found on the decoded frames, every window is the
/// picture, still, and the summary says so. Before, the bars' edges moved
/// the window and the plan carved and padded the picture smaller.
#[test]
fn a_pillarboxed_vertical_video_reframed_to_nine_sixteen_is_its_picture() {
    let dir = tempdir("reframe-pillarbox");
    let input = dir.join("in.mp4");
    gst::init().unwrap();
    // 202 columns (a ball moving over grey) at 219 in a 640x360 frame.
    let desc = format!(
        "videotestsrc pattern=ball background-color=0xff707070 num-buffers=30 ! video/x-raw,width=202,height=360,framerate=30/1 ! \
         videobox left=-219 right=-219 fill=black ! video/x-raw,width=640 ! x264enc ! mp4mux ! \
         filesink location=\"{}\"",
        input.display()
    );
    play_to_eos(
        &gst::parse::launch(&desc).unwrap(),
        "making the pillarboxed clip",
    );
    let path = dir.join("plan.json");
    let said = ok(&[
        "run",
        s(&input),
        s(&dir.join("out.mp4")),
        "--op",
        "reframe:aspect=9:16",
        "--reframe-path",
        s(&path),
    ]);
    assert!(
        said.contains("inside the picture at 220,0 200x360"),
        "{said}"
    );
    // Every frame of a path file is the picture, cropped; how many.
    let the_picture = |path: &Path| {
        let file: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        let frames = file["frames"].as_array().unwrap().clone();
        for f in &frames {
            assert_eq!(f["window"], serde_json::json!([220, 0, 200, 360]), "{f}");
            assert_eq!(f["mode"], "crop", "{f}");
        }
        frames.len()
    };
    assert_eq!(the_picture(&path), 30);
    // Read as a stream (a FIFO), it is planned live, frame by frame: the
    // same picture from the first frame.
    let fifo = dir.join("stream");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let feed = {
        let (from, to) = (input.clone(), fifo.clone());
        std::thread::spawn(move || std::fs::write(&to, std::fs::read(&from).unwrap()))
    };
    let live_path = dir.join("live.json");
    let said = ok(&[
        "run",
        s(&fifo),
        s(&dir.join("live.mkv")),
        "--op",
        "reframe:aspect=9:16",
        "--reframe-path",
        s(&live_path),
    ]);
    feed.join().unwrap().unwrap();
    assert!(
        said.contains("planned live") && said.contains("inside the picture at 220,0 200x360"),
        "{said}"
    );
    assert_eq!(the_picture(&live_path), 30);
}

/// A join into a container that cannot hold the parts' codec, or with an
/// `--audio-from` that is not a file, is refused before anything is
/// written, naming the output's way out or the missing file.
#[test]
fn join_refuses_a_container_that_cannot_hold_the_parts_and_a_missing_source() {
    let dir = tempdir("seg-join-refused");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let parts = segments(&input, &dir, 2, "sobel");
    let webm = dir.join("out.webm");
    let o = join(&webm, &parts, Some(&input));
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("a .webm file cannot hold the parts' video (video/x-h264)")
            && text.contains("name the output .mp4 or .mkv"),
        "{text}"
    );
    assert!(!webm.exists());
    let out = dir.join("out.mp4");
    let o = join(&out, &parts, Some(&dir.join("nosuch.mp4")));
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("cannot read")
            && text.contains("nosuch.mp4")
            && text.contains("no such file"),
        "{text}"
    );
    assert!(!out.exists());
}

#[test]
fn join_refuses_parts_that_do_not_fit_naming_them() {
    let dir = tempdir("seg-misfit");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let a = dir.join("a.mp4");
    let b = dir.join("b.mp4");
    ok(&["run", s(&input), s(&a), "--segment", "0/2", "--op", "sobel"]);
    // The other half, at another size: not from the same job.
    ok(&[
        "run",
        s(&input),
        s(&b),
        "--segment",
        "1/2",
        "--op",
        "retarget:width=50%,mode=exact",
    ]);
    let out = dir.join("out.mp4");
    let refused = join(&out, &[a.clone(), b.clone()], Some(&input));
    let said = stderr(&refused);
    assert!(!refused.status.success());
    assert!(said.contains("b.mp4") && said.contains("width"), "{said}");
    assert!(!out.exists());
    assert!(
        std::fs::read_dir(&dir).unwrap().all(|e| !e
            .unwrap()
            .file_name()
            .to_string_lossy()
            .contains("partial"))
    );
    // The same part twice is refused before anything is read.
    let twice = join(&out, &[a.clone(), a.clone()], None);
    assert!(stderr(&twice).contains("given twice"), "{}", stderr(&twice));
}

/// Fast retargeting remembers its seams from the first frame of a shot on,
/// and forgets them at a cut. A part whose warm-up reaches back to the cut
/// before it (or to the file's start) therefore matches one run exactly;
/// with no warm-up its seams are placed afresh and differ.
#[test]
fn fast_retargeting_parts_warmed_up_past_a_cut_match_one_run() {
    let dir = tempdir("seg-fast");
    // The built-in sample (a pan across a photograph, where the seams'
    // memory matters), then its edges: a cut at frame 45 of 90, away from
    // the boundaries at 30 and 60 (a boundary snaps to a cut within 11).
    let (a, b) = (dir.join("a.mp4"), dir.join("b.mp4"));
    let sample = ["--size", "192x108", "--frames", "45"];
    ok(&[
        &["run", "sample", s(&a), "--op", "gaussian:sigma=0.1"],
        &sample[..],
    ]
    .concat());
    ok(&[&["run", "sample", s(&b), "--op", "sobel"], &sample[..]].concat());
    let input = dir.join("in.mp4");
    let desc = format!(
        "concat name=c ! videoconvert ! x264enc bframes=0 ! h264parse ! mp4mux ! filesink location=\"{}\" \
         filesrc location=\"{}\" ! qtdemux ! h264parse ! avdec_h264 ! c. \
         filesrc location=\"{}\" ! qtdemux ! h264parse ! avdec_h264 ! c.",
        input.display(),
        a.display(),
        b.display()
    );
    gst::init().unwrap();
    // The decoders named, not decodebin: decodebin's late pads made this
    // fail now and then under a loaded machine (qtdemux: not-linked).
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
    let op = "retarget:width=75%";
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", op]);
    let reference = decode_rgba(&single);
    assert_eq!(reference.len(), 90);
    let split = |warmup: &str| {
        // With no warm-up, no boundary may reach the cut (the parts would
        // match one run by the snap, not fail to by the warm-up).
        let no_snap = |args: &[&str]| {
            let said = ok(args);
            if warmup == "0" {
                assert!(said.contains("no scene cut near its boundaries"), "{said}");
            }
            said
        };
        let args = ["--op", op, "--warmup", warmup];
        let parts = parts_with(
            &input,
            &dir,
            3,
            (&format!("w{warmup}"), "mp4"),
            &args,
            no_snap,
        );
        let joined = dir.join(format!("w{warmup}.mp4"));
        let out = join(&joined, &parts, None);
        assert!(out.status.success(), "{}", stderr(&out));
        mad(&decode_rgba(&joined), &reference)
    };
    let (warm, cold) = (split("30"), split("0"));
    eprintln!(
        "fast retargeting in 3 parts: mean absolute difference from one run {warm:.3} levels with 30 warm-up frames, {cold:.3} with none"
    );
    assert_eq!(
        warm, 0.0,
        "warmed up past the cut, the parts must match one run"
    );
    assert!(cold > 0.0, "with no warm-up the seams are placed afresh");
}

/// The GPU host's check (`bench/gpu-check.sh segments`, no software H.264
/// decoder there): a real clip with audio, split over workers sharing one
/// GPU and joined, has the single run's frame count, timestamps and audio;
/// and its parts as raw frames are the single run's, byte for byte.
/// The clip is `SEAMSTREAM_SPLIT_CLIP`.
#[test]
#[ignore = "needs a GPU and SEAMSTREAM_SPLIT_CLIP"]
fn a_real_clip_split_over_gpu_workers_keeps_every_frame_and_the_audio() {
    let input =
        PathBuf::from(std::env::var("SEAMSTREAM_SPLIT_CLIP").expect("SEAMSTREAM_SPLIT_CLIP"));
    let dir = tempdir("seg-gpu");
    for op in ["gaussian:sigma=2", "retarget:width=75%"] {
        let single = dir.join("single.mp4");
        let split = dir.join("split.mp4");
        let fast = ["--preset", "ultrafast"];
        let one = run(&[
            &["run", s(&input), s(&single), "--op", op, "--device", "cuda"],
            &fast[..],
        ]
        .concat());
        assert!(one.status.success(), "{}", stderr(&one));
        let many = run(&[
            &[
                "run",
                s(&input),
                s(&split),
                "--op",
                op,
                "--gpus",
                "1",
                "--workers",
                "4",
            ],
            &fast[..],
        ]
        .concat());
        assert!(many.status.success(), "{}", stderr(&many));
        eprintln!(
            "{op}: one run: {}",
            stderr(&one)
                .lines()
                .find(|l| l.contains(" fps"))
                .unwrap_or("")
        );
        eprintln!(
            "{op}: 4 workers: {}",
            stderr(&many)
                .lines()
                .find(|l| l.contains("segments on"))
                .unwrap_or("")
        );
        let (a, b) = (times(&single), times(&split));
        assert_eq!(a.len(), times(&input).len());
        assert_eq!(a, b, "{op}: the split's timestamps differ");
        assert_eq!(
            audio_packets(&split),
            audio_packets(&input),
            "{op}: the audio is not the source's"
        );
        std::fs::remove_file(&single).unwrap();
        std::fs::remove_file(&split).unwrap();
        // Frame for frame, without decoding H.264 (no software decoder
        // there): raw .y4m, one run against three parts end to end.
        let body = |p: &Path| {
            let bytes = std::fs::read(p).unwrap();
            let start = bytes.iter().position(|&b| b == b'\n').unwrap() + 1;
            bytes[start..].to_vec()
        };
        let single = dir.join("single.y4m");
        let one = run(&["run", s(&input), s(&single), "--op", op, "--device", "cuda"]);
        assert!(one.status.success(), "{}", stderr(&one));
        let must = |args: &[&str]| {
            let o = run(args);
            assert!(o.status.success(), "{}", stderr(&o));
            stderr(&o)
        };
        let parts = parts_with(
            &input,
            &dir,
            3,
            ("part", "y4m"),
            &["--op", op, "--device", "cuda"],
            must,
        );
        let joined: Vec<u8> = parts.iter().flat_map(|p| body(p)).collect();
        assert!(
            body(&single) == joined,
            "{op}: the parts' frames differ from one run's"
        );
        eprintln!(
            "{op}: 3 parts on the GPU, frame for frame as one run ({} bytes)",
            joined.len()
        );
    }
}

/// Ctrl-C (here a SIGINT to the coordinator alone, which passes it on)
/// stops every worker; nothing is written to the output, and no part file
/// that a join would take is left half-written.
#[test]
fn an_interrupted_job_stops_its_workers_and_writes_no_output() {
    let dir = tempdir("seg-stop");
    let input = dir.join("in.mp4");
    ok(&[
        "run",
        "sample",
        s(&input),
        "--size",
        "480x270",
        "--frames",
        "240",
        "--op",
        "gaussian:sigma=0.1",
    ]);
    let out = dir.join("out.mp4");
    // Exact carving on the CPU: seconds a frame, so the job is surely
    // mid-way when it is stopped.
    let mut args = vec![
        "run",
        s(&input),
        s(&out),
        "--workers",
        "2",
        "--op",
        "retarget:width=25%,mode=exact",
    ];
    args.extend(lossless());
    let child = common::video::command(&args).spawn().unwrap();
    let parts = dir.join("out.mp4.parts");
    let done = interrupt(child, &parts, 1500, "the interrupted job");
    let said = stderr(&done);
    assert_eq!(done.status.code(), Some(130), "{said}");
    assert!(
        said.contains("interrupted") && said.contains("was not written"),
        "{said}"
    );
    assert!(!out.exists());
    for k in 0..2 {
        assert!(
            !parts.join(format!("part-{k:05}.mp4")).exists(),
            "part {k} was left as if complete"
        );
    }
}

/// SIGINT to a split job `child` once its second worker has started (its
/// log in `parts`) and `after_ms` more have passed; its end.
fn interrupt(
    child: std::process::Child,
    parts: &Path,
    after_ms: u64,
    what: &str,
) -> std::process::Output {
    let since = std::time::Instant::now();
    while !parts.join("part-00001.log").exists()
        && since.elapsed() < std::time::Duration::from_secs(30)
    {
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(after_ms));
    // SAFETY: kill(2) on the child this test started and has not reaped.
    unsafe {
        libc::kill(child.id() as libc::pid_t, libc::SIGINT);
    }
    common::video::finish(child, what, std::time::Duration::from_secs(60))
}

/// A job stopped while its workers are still starting (held up, injected,
/// before their first frame) is interrupted, not failed: it says so, exits
/// 130, and does not take a worker stopped before its first frame for one
/// that failed (which would stop the job as failed and remove the parts
/// folder).
#[cfg(feature = "fault-injection")]
#[test]
fn a_job_stopped_before_its_workers_first_frames_is_interrupted_not_failed() {
    let dir = tempdir("seg-stop-early");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let out = dir.join("out.mp4");
    let mut args = vec!["run", s(&input), s(&out), "--workers", "2", "--op", "sobel"];
    args.extend(lossless());
    let child = common::video::command(&args)
        .env("SEAMSTREAM_INJECT_SLOW_START_MS", "3000")
        .spawn()
        .unwrap();
    let done = interrupt(
        child,
        &dir.join("out.mp4.parts"),
        500,
        "the job stopped early",
    );
    let said = stderr(&done);
    assert_eq!(done.status.code(), Some(130), "{said}");
    assert!(said.contains("interrupted"), "{said}");
    assert!(!said.contains("failed before its first frame"), "{said}");
    assert!(!out.exists());
}

/// More GPUs than the machine has: refused before any worker starts, with
/// the count (on the GPU host) or with why there is none and the CPU's way
/// (elsewhere); no output and no parts folder left.
#[test]
fn more_gpus_than_the_machine_has_are_refused_and_leave_nothing() {
    let dir = tempdir("seg-too-many-gpus");
    let input = dir.join("in.mp4");
    clip(&input, 20, 10, None);
    let out = dir.join("out.mp4");
    let said = run(&["run", s(&input), s(&out), "--gpus", "16", "--op", "sobel"]);
    assert!(!said.status.success());
    let text = stderr(&said);
    if device() == "cuda" {
        assert!(
            text.contains("`--gpus 16`: this machine has") && text.contains("ask for at most"),
            "{text}"
        );
    } else {
        assert!(
            text.contains("`--gpus 16`: ")
                && (text.contains("no GPU can be used here (") || text.contains("no usable GPU"))
                && text.contains("--workers M --device cpu")
                && !text.contains("at most 0"),
            "{text}"
        );
    }
    assert!(!out.exists());
    assert!(!dir.join("out.mp4.parts").exists());
    assert_eq!(video_frames(&input).unwrap().len(), 20);
}

/// The processes whose command line holds `needle` (as /proc shows them).
fn processes_with(needle: &str) -> Vec<u32> {
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/cmdline"))
                .map(|c| String::from_utf8_lossy(&c).contains(needle))
                .unwrap_or(false)
        })
        .collect()
}

/// A split job's coordinator killed outright (SIGKILL, nothing to catch)
/// takes its workers with it: they get SIGTERM and finish as on Ctrl-C
/// instead of running on alone.
#[test]
fn workers_die_with_their_coordinator() {
    let dir = tempdir("seg-orphans");
    let input = dir.join("in.mp4");
    common::video::test_clip(
        &input,
        150,
        "width=640,height=480,framerate=30/1",
        "x264enc ! mp4mux",
    );
    let out = dir.join("out.mp4");
    // A 601-tap gaussian on 640x480: seconds of work for each worker.
    let mut coordinator = common::video::spawn(&[
        "run",
        s(&input),
        s(&out),
        "--workers",
        "2",
        "--device",
        "cpu",
        "--op",
        "gaussian:sigma=100,radius=300",
    ]);
    let needle = format!(
        "{}\0{}",
        input.display(),
        out.with_extension("mp4.parts").display()
    );
    let started = std::time::Instant::now();
    while processes_with(&needle).len() < 2 {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the workers did not start"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    std::thread::sleep(std::time::Duration::from_millis(500));
    coordinator.kill().unwrap();
    coordinator.wait().unwrap();
    let killed = std::time::Instant::now();
    while !processes_with(&needle).is_empty() {
        assert!(
            killed.elapsed() < std::time::Duration::from_secs(5),
            "workers {:?} outlived their coordinator",
            processes_with(&needle)
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

/// `join` knows the parts by the tags `run --segment` writes into them: it
/// puts them in their own order, and refuses a missing part, a part of
/// another job (other split, other options) and a file that is no part,
/// with or without the source.
#[test]
fn join_orders_the_parts_itself_and_takes_only_one_jobs_whole_set() {
    let dir = tempdir("seg-provenance");
    let input = dir.join("in.mp4");
    clip_with_audio(&input, 2);
    let single = dir.join("single.mp4");
    ok(&["run", s(&input), s(&single), "--op", "sobel"]);
    let p = segments(&input, &dir, 3, "sobel");
    let out = dir.join("out.mp4");
    for audio in [Some(input.as_path()), None] {
        let _ = std::fs::remove_file(&out);
        let shuffled = [p[2].clone(), p[0].clone(), p[1].clone()];
        let joined = join(&out, &shuffled, audio);
        assert!(joined.status.success(), "{}", stderr(&joined));
        assert!(
            stderr(&joined).contains("out of order; joined by their numbers: 0, 1, 2"),
            "{}",
            stderr(&joined)
        );
        assert_eq!(times(&out), times(&single));
    }
    let refused = |parts: &[PathBuf], audio: Option<&Path>, why: &str| {
        let o = dir.join("refused.mp4");
        let r = join(&o, parts, audio);
        assert!(!r.status.success(), "{parts:?} were joined");
        assert!(stderr(&r).contains(why), "{why}: {}", stderr(&r));
        assert!(!o.exists());
    };
    refused(&p[..2], Some(&input), "part 2/3 is missing");
    refused(&p[..2], None, "part 2/3 is missing");
    // A part of the same file split in two.
    let other = dir.join("other");
    std::fs::create_dir_all(&other).unwrap();
    let halves = segments(&input, &other, 2, "sobel");
    refused(
        &[p[0].clone(), halves[1].clone(), p[2].clone()],
        None,
        "is not of the same job",
    );
    // A part made with another op.
    let gauss = dir.join("gauss");
    std::fs::create_dir_all(&gauss).unwrap();
    let g = segments(&input, &gauss, 3, "gaussian:sigma=1");
    refused(
        &[p[0].clone(), g[1].clone(), p[2].clone()],
        Some(&input),
        "made with other options",
    );
    // The source itself is no part.
    refused(
        std::slice::from_ref(&input),
        None,
        "is not a part of a split job",
    );
}

/// What one run refuses, a split job refuses as a whole, leaving nothing:
/// the input as the output, before any worker starts; a device the machine
/// lacks and a video too small for the encoder, when the first worker
/// fails before its first frame (the other workers are stopped). Each ran
/// every worker, then advised rerunning a segment that could not work, and
/// left `OUT.parts`, which blocked the rerun.
#[test]
fn a_split_job_refuses_what_one_run_refuses_and_leaves_nothing() {
    let dir = tempdir("seg-refused");
    let input = dir.join("in.mp4");
    clip(&input, 40, 10, None);
    let before = std::fs::read(&input).unwrap();
    let refused = |args: &[&str], out: &Path, why: &str| {
        let o = run(args);
        let text = stderr(&o);
        assert!(!o.status.success(), "{args:?}: {text}");
        assert!(text.contains(why), "{args:?}: {text}");
        assert!(!text.contains("To finish"), "{args:?}: {text}");
        let parts = out.with_file_name(format!(
            "{}.parts",
            out.file_name().unwrap().to_string_lossy()
        ));
        assert!(!parts.exists(), "{args:?} left {}", parts.display());
    };
    let split = ["--workers", "2", "--op", "sobel"];
    refused(
        &[&["run", s(&input), s(&input)], &split[..]].concat(),
        &input,
        "that is the input",
    );
    assert_eq!(std::fs::read(&input).unwrap(), before);
    let out = dir.join("out.mp4");
    if device() != "cuda" {
        refused(
            &[&["run", s(&input), s(&out), "--device", "cuda"], &split[..]].concat(),
            &out,
            "failed before its first frame",
        );
    }
    let plan = dir.join("plan.json");
    refused(
        &[
            &["run", s(&input), s(&out), "--reframe-path", s(&plan)],
            &split[..],
        ]
        .concat(),
        &out,
        "needs a reframe in the chain",
    );
    assert!(!plan.exists());
    // A mistake in the chain is said before any worker starts, as one run
    // says it.
    let o = run(&[
        "run",
        s(&input),
        s(&out),
        "--workers",
        "2",
        "--op",
        "nosuch",
    ]);
    let text = stderr(&o);
    assert!(!o.status.success(), "{text}");
    assert!(
        text.contains("unknown operation `nosuch`") && !text.contains("before its first frame"),
        "{text}"
    );
    assert!(!dir.join("out.mp4.parts").exists(), "{text}");
    let tiny = dir.join("tiny.mkv");
    gst::init().unwrap();
    let make = format!(
        "videotestsrc num-buffers=20 ! video/x-raw,width=2,height=2,format=RGB ! matroskamux ! filesink location=\"{}\"",
        tiny.display()
    );
    play_to_eos(&gst::parse::launch(&make).unwrap(), "the 2x2 clip");
    refused(
        &[&["run", s(&tiny), s(&out)], &split[..]].concat(),
        &out,
        "takes from 16x16",
    );
    assert!(!out.exists());
}
