//! `seamstream::gst::probe`: a file's coded video frames, counted by
//! demuxing and parsing alone (for planning the parts of a split job).

mod common;

use gstreamer as gst;
use seamstream::gst::probe::{
    indexed_video_frames, parsed_video_stream, video_frames, video_stream,
};

use common::video::{clip_with_audio, play_to_eos, tempdir};

/// 50 frames at 25 fps, a keyframe every 10 (no scene-cut keyframes), with
/// B-frames so that decode order differs from presentation order.
fn clip(path: &std::path::Path) {
    gst::init().unwrap();
    let desc = format!(
        "videotestsrc num-buffers=50 pattern=ball ! video/x-raw,width=64,height=48,framerate=25/1 ! \
         x264enc key-int-max=10 bframes=2 option-string=scenecut=0 ! h264parse ! mp4mux ! \
         filesink location=\"{}\"",
        path.display()
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
}

#[test]
fn counts_every_frame_in_presentation_order_with_its_keyframes() {
    let dir = tempdir("probe");
    let path = dir.join("gop10.mp4");
    clip(&path);
    let frames = video_frames(&path).unwrap();
    assert_eq!(frames.len(), 50);
    // 40 ms apart from the first, in order.
    for (i, w) in frames.windows(2).enumerate() {
        assert_eq!(
            w[1].pts - w[0].pts,
            gst::ClockTime::from_mseconds(40),
            "frames {i} and {}",
            i + 1
        );
    }
    let keys: Vec<usize> = (0..frames.len()).filter(|&i| frames[i].keyframe).collect();
    assert_eq!(keys, vec![0, 10, 20, 30, 40]);
}

#[test]
fn a_clip_with_audio_counts_only_its_video() {
    let dir = tempdir("probe-audio");
    let path = dir.join("av.mp4");
    clip_with_audio(&path, 2);
    let frames = video_frames(&path).unwrap();
    assert_eq!(frames.len(), 50);
    assert!(frames[0].keyframe);
}

#[test]
fn a_missing_file_or_one_without_video_is_an_error_naming_it() {
    let dir = tempdir("probe-bad");
    let missing = dir.join("nothing-here.mp4");
    let e = video_frames(&missing).unwrap_err().to_string();
    assert!(
        e.contains("nothing-here.mp4") && e.contains("no such file"),
        "{e}"
    );

    gst::init().unwrap();
    let audio = dir.join("tone.mka");
    let desc = format!(
        "audiotestsrc num-buffers=20 ! audioconvert ! vorbisenc ! matroskamux ! filesink location=\"{}\"",
        audio.display()
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the audio file");
    let e = video_frames(&audio).unwrap_err().to_string();
    assert!(
        e.contains("tone.mka") && e.contains("no video stream"),
        "{e}"
    );

    let junk = dir.join("junk.mp4");
    std::fs::write(&junk, b"not a video at all").unwrap();
    let e = video_frames(&junk).unwrap_err().to_string();
    assert!(
        e.contains("junk.mp4") && e.contains("playable video"),
        "{e}"
    );
}

/// Frames read from a plain MP4's index are the frames parsing gives:
/// times, order and keyframes, with B-frames (composition offsets and an
/// edit), audio beside, clips laid end to end by `concat`, the index
/// before the frames. A file the index does not read (one cut short,
/// Matroska, a fragmented MP4) is parsed.
#[test]
fn an_mp4s_index_gives_the_frames_parsing_gives() {
    let dir = tempdir("probe-index");
    let bframes = dir.join("bframes.mp4");
    clip(&bframes);
    let audio = dir.join("audio.mp4");
    clip_with_audio(&audio, 2);
    let twice = dir.join("twice.mp4");
    let copy = format!(
        "filesrc location=\"{}\" ! qtdemux ! h264parse ! c.",
        bframes.display()
    );
    let desc = format!(
        "concat name=c ! h264parse ! mp4mux ! filesink location=\"{}\" {copy} {copy}",
        twice.display()
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "making the clip");
    for path in [&bframes, &audio, &twice] {
        let parsed = parsed_video_stream(path).unwrap();
        let indexed = indexed_video_frames(path)
            .unwrap_or_else(|| panic!("{}: the index was not read", path.display()));
        assert_eq!(indexed, parsed.frames, "{}", path.display());
        assert_eq!(video_stream(path).unwrap(), parsed, "{}", path.display());
    }
    assert_eq!(indexed_video_frames(&twice).unwrap().len(), 100);
    // The index first (faststart), then the file cut short: the index
    // still lists every frame, but not every frame is there.
    let fast = dir.join("faststart.mp4");
    let desc = format!(
        "filesrc location=\"{}\" ! qtdemux ! h264parse ! mp4mux faststart=true ! filesink location=\"{}\"",
        bframes.display(),
        fast.display()
    );
    play_to_eos(&gst::parse::launch(&desc).unwrap(), "remuxing the clip");
    assert_eq!(
        indexed_video_frames(&fast),
        Some(parsed_video_stream(&fast).unwrap().frames)
    );
    let mut bytes = std::fs::read(&fast).unwrap();
    bytes.truncate(bytes.len() * 2 / 3);
    // Its `mdat` said to run to the end of the file (size 0), as a file
    // written without finishing its last box does.
    let mdat = bytes.windows(4).position(|w| w == b"mdat").unwrap();
    bytes[mdat - 4..mdat].fill(0);
    let cut = dir.join("cut.mp4");
    std::fs::write(&cut, &bytes).unwrap();
    assert_eq!(indexed_video_frames(&cut), None);
    assert!(parsed_video_stream(&cut).map_or(true, |s| s.frames.len() < 50));
    for (name, mux) in [
        ("clip.mkv", "matroskamux"),
        ("fragments.mp4", "mp4mux fragment-duration=400"),
    ] {
        let path = dir.join(name);
        let desc = format!(
            "filesrc location=\"{}\" ! qtdemux ! h264parse ! {mux} ! filesink location=\"{}\"",
            bframes.display(),
            path.display()
        );
        play_to_eos(&gst::parse::launch(&desc).unwrap(), "remuxing the clip");
        assert_eq!(indexed_video_frames(&path), None, "{name}");
        let parsed = parsed_video_stream(&path).unwrap();
        assert!(!parsed.frames.is_empty(), "{name}");
        assert_eq!(video_stream(&path).unwrap(), parsed, "{name}");
    }
}
