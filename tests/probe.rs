//! `seamstream::gst::probe`: a file's coded video frames, counted by
//! demuxing and parsing alone (for planning the parts of a split job).

mod common;

use gstreamer as gst;
use seamstream::gst::probe::video_frames;

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
