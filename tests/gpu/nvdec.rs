//! seamstream's NVIDIA decoder (`seamstreamnvdec`) against GStreamer's
//! (`nvh264dec`), on the GPU host: both drive the same hardware, so every
//! frame must come out with the same bytes and timestamp, in system memory
//! and in CUDA memory, on the shared real clips and on a stream with
//! B-frames and a size that is not a multiple of 16 (a cropped picture).
//! Each test skips visibly where there is no GPU or no NVIDIA decoder.

use std::hash::{Hash, Hasher};

use gstreamer as gst;
use gstreamer::prelude::*;
use gstreamer_video::prelude::*;
use seamstream::cuda::testing;

/// Whether both decoders can run here (with why not, printed).
fn both_decoders(what: &str) -> bool {
    if testing::gpu(what).is_none() {
        return false;
    }
    gst::init().unwrap();
    // Named in the pipelines, out of decodebin's choice (other tests in this
    // process autoplug decoders).
    if !seamstream::gst::nvdec::register_with(gst::Rank::NONE) {
        eprintln!("skipped: {what}: seamstream's NVIDIA decoder cannot be registered here");
        return false;
    }
    if gst::ElementFactory::find("nvh264dec").is_none() {
        eprintln!("skipped: {what}: GStreamer has no nvh264dec here");
        return false;
    }
    true
}

/// Each frame of `line` (ending in `appsink name=out`): its timestamp and
/// a hash of its bytes, with the caps the sink took.
fn frames(line: &str) -> (Vec<(Option<gst::ClockTime>, u64)>, String) {
    let (pipe, sink) = crate::common::video::pipeline_with_sink(line, "out");
    pipe.set_state(gst::State::Playing).unwrap();
    let mut out = Vec::new();
    let mut caps = String::new();
    while let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_seconds(60)) {
        if caps.is_empty() {
            caps = sample.caps().unwrap().to_string();
        }
        let buffer = sample.buffer().unwrap();
        let info = gstreamer_video::VideoInfo::from_caps(sample.caps().unwrap()).unwrap();
        let frame =
            gstreamer_video::VideoFrameRef::from_buffer_ref_readable(buffer, &info).unwrap();
        // The shown bytes only: rows may be padded, and padding is anything.
        let (w, h) = (info.width() as usize, info.height() as usize);
        let mut hash = std::collections::hash_map::DefaultHasher::new();
        for (plane, row, rows) in [(0, w, h), (1, w.div_ceil(2) * 2, h.div_ceil(2))] {
            let stride = frame.plane_stride()[plane] as usize;
            let data = frame.plane_data(plane as u32).unwrap();
            for r in 0..rows {
                data[r * stride..r * stride + row].hash(&mut hash);
            }
        }
        out.push((buffer.pts(), hash.finish()));
    }
    let error = pipe
        .bus()
        .unwrap()
        .pop_filtered(&[gst::MessageType::Error])
        .map(|m| format!("{m:?}"));
    let eos = sink.is_eos();
    pipe.set_state(gst::State::Null).unwrap();
    assert!(error.is_none(), "{line}: {error:?}");
    assert!(eos, "{line}: the frames stopped before the end");
    (out, caps)
}

/// Decodes `source` (up to the parsed stream) with both decoders, into
/// system memory and (ours) into CUDA memory downloaded after, and ours with
/// no display delay, and checks every frame is the same.
fn same_frames(source: &str, what: &str) {
    let nv12 = "video/x-raw,format=NV12 ! appsink name=out sync=false";
    let (theirs, _) = frames(&format!("{source} ! nvh264dec ! cudadownload ! {nv12}"));
    let (ours, caps) = frames(&format!("{source} ! seamstreamnvdec ! {nv12}"));
    assert!(!caps.contains("CUDAMemory"), "{caps}");
    let (ours_cuda, _) = frames(&format!(
        "{source} ! seamstreamnvdec ! video/x-raw(memory:CUDAMemory),format=NV12 ! cudadownload ! {nv12}"
    ));
    assert!(theirs.len() > 10, "{what}: {} frames", theirs.len());
    assert_eq!(ours.len(), theirs.len(), "{what}: frames");
    for (i, (a, b)) in ours.iter().zip(&theirs).enumerate() {
        assert_eq!(
            a, b,
            "{what}: frame {i} (timestamp, bytes) differs from nvh264dec's"
        );
    }
    assert_eq!(ours_cuda, ours, "{what}: through CUDA memory");
    // Held for display (the default on a file) or shown at once (live).
    let (at_once, _) = frames(&format!(
        "{source} ! seamstreamnvdec display-delay=0 ! {nv12}"
    ));
    assert_eq!(at_once, ours, "{what}: with no display delay");
}

#[test]
fn the_shared_clips_decode_as_with_nvidias_plugin() {
    if !both_decoders("seamstream's NVIDIA decoder on the shared clips") {
        return;
    }
    let clips = ["dog-walk-720p.mp4", "promo-cuts-titles-720p.mp4"];
    let dir = crate::common::data::CLIPS.dir_with(&clips);
    for clip in clips {
        let source = format!(
            "filesrc location=\"{}\" ! qtdemux ! h264parse",
            dir.join(clip).display()
        );
        same_frames(&source, clip);
    }
}

#[test]
fn b_frames_and_a_cropped_size_decode_as_with_nvidias_plugin() {
    if !both_decoders("seamstream's NVIDIA decoder with B-frames") {
        return;
    }
    if gst::ElementFactory::find("x264enc").is_none() {
        eprintln!("skipped: no x264enc to make the stream");
        return;
    }
    // 330x186: coded as 336x192, shown cropped; 3 B-frames between
    // references, so pictures come out in another order than they go in.
    let file = std::env::temp_dir().join(format!("seamstream-nvdec-{}.mp4", std::process::id()));
    let make = format!(
        "videotestsrc num-buffers=90 pattern=ball ! video/x-raw,width=330,height=186,framerate=30/1 ! x264enc bframes=3 b-adapt=false key-int-max=30 ! video/x-h264,profile=high ! h264parse ! mp4mux ! filesink location=\"{}\"",
        file.display()
    );
    let pipe = gst::parse::launch(&make).unwrap();
    pipe.set_state(gst::State::Playing).unwrap();
    let msg = pipe
        .bus()
        .unwrap()
        .timed_pop_filtered(
            gst::ClockTime::from_seconds(60),
            &[gst::MessageType::Eos, gst::MessageType::Error],
        )
        .unwrap();
    pipe.set_state(gst::State::Null).unwrap();
    assert!(matches!(msg.view(), gst::MessageView::Eos(_)), "{msg:?}");
    let source = format!(
        "filesrc location=\"{}\" ! qtdemux ! h264parse",
        file.display()
    );
    same_frames(&source, "B-frames, 330x186");
    let _ = std::fs::remove_file(&file);
}

/// `run` with seamstream's decoder (the default) against `run` with
/// GStreamer's NVIDIA decoder (`SEAMSTREAM_NVDEC=0`): the same bytes
/// out, into a file and from a reframing that decodes the clip ahead
/// through the library's own pipelines; into null the frames come in CUDA
/// memory; the summary names the decoder.
#[test]
fn run_with_our_decoder_gives_nvidias_plugins_bytes() {
    if !both_decoders("run with seamstream's NVIDIA decoder") {
        return;
    }
    let clip = crate::common::data::CLIPS.file("dog-walk-720p.mp4");
    let ours = [("SEAMSTREAM_NVDEC", "1")];
    let theirs = [("SEAMSTREAM_NVDEC", "0")];
    for (env, decoder) in [(&ours, "seamstreamnvdec"), (&theirs, "nvh264dec")] {
        let json = crate::memory::run(&clip, "null", "gaussian:sigma=2", "cuda", env);
        assert_eq!(crate::memory::field(&json, "memory_in"), "cuda", "{json}");
        assert_eq!(crate::memory::field(&json, "frames_out"), "289", "{json}");
        assert!(json.contains(&format!("decoded by {decoder}")), "{json}");
    }
    let dir = std::env::temp_dir().join(format!("seamstream-nvdec-run-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // (1:1 gives 720x720, a size .y4m takes.)
    for op in ["retarget:width=75%", "reframe:aspect=1:1"] {
        let mut outs = Vec::new();
        for (name, env) in [("ours", &ours), ("theirs", &theirs)] {
            let file = dir.join(format!("{name}.y4m"));
            let json = crate::memory::run(&clip, file.to_str().unwrap(), op, "cuda", env);
            assert_eq!(
                crate::memory::field(&json, "frames_out"),
                "289",
                "{op} {name}: {json}"
            );
            outs.push(std::fs::read(&file).unwrap());
        }
        assert!(outs[0] == outs[1], "{op}: the outputs differ");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
