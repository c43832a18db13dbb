//! What a file's video holds before it is decoded: its coded frames in
//! presentation order, with their timestamps and which of them are
//! keyframes, and the frame rate its caps give, read by demuxing and
//! parsing alone (`filesrc ! parsebin`), so that a long file is counted in
//! a fraction of its decoding time. A plain MP4's frames come from its
//! index instead ([`mp4`]), in milliseconds, and only its first
//! frame is parsed, for the caps. For planning the parts of a job split in
//! time (issue 15, [`crate::split`]).

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;

use crate::error::{Error, Result};

mod mp4;

/// One coded frame of the video.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CodedFrame {
    /// Presentation time.
    pub pts: gst::ClockTime,
    /// Decodable on its own, where decoding can start: the parser's
    /// keyframes (no `DELTA_UNIT` flag), or from an MP4's index its sync
    /// samples (`stss`), where qtdemux's seeks land (the parser may call
    /// another intra frame a keyframe too).
    pub keyframe: bool,
}

/// The first video stream of a file.
#[derive(Clone, Debug, PartialEq)]
pub struct VideoStream {
    /// Its coded frames, in presentation order.
    pub frames: Vec<CodedFrame>,
    /// The frame rate of its caps, as the decoder will pass it on; `None`
    /// where the caps give none or a variable rate (0/1).
    pub frame_rate: Option<gst::Fraction>,
    /// The comment tags of its video, as written (a part of a split job
    /// says who it is in one; [`super::parts::PartTag::of`] reads it).
    pub comments: Vec<String>,
    /// How the video is stored turned, where its tags say it is
    /// (`image-orientation` other than `rotate-0`).
    pub orientation: Option<String>,
    /// The caps of its first coded frame, as the parser gives them.
    pub caps: Option<gst::Caps>,
}

/// How the video of the file at `path` is stored turned, if it is (its
/// first frame's tags); `None` when upright or unreadable.
pub fn orientation(path: &Path) -> Option<String> {
    parse(path, Some(1), false).ok()?.orientation
}

/// How long the parser may stay silent before the file counts as stuck.
const STALL: Duration = Duration::from_secs(30);

/// The coded frames of the first video stream of the file at `path`, in
/// presentation order.
pub fn video_frames(path: &Path) -> Result<Vec<CodedFrame>> {
    Ok(video_stream(path)?.frames)
}

/// The first video stream of the file at `path`: its coded frames and its
/// caps' frame rate.
pub fn video_stream(path: &Path) -> Result<VideoStream> {
    if path.is_file()
        && let Some(frames) = mp4::video_frames(path)
    {
        let first = parse(path, Some(1), false)?;
        return Ok(VideoStream {
            frames,
            frame_rate: first.frame_rate,
            comments: first.comments,
            orientation: first.orientation,
            caps: first.caps,
        });
    }
    parse(path, None, false)
}

/// The first video stream of the file at `path` as parsing every frame
/// gives it (the reference for the index).
pub fn parsed_video_stream(path: &Path) -> Result<VideoStream> {
    parse(path, None, false)
}

/// How many video frames of the file at `path` can be read, up to where
/// its reading fails (a file cut short by a full disk or a killed run); 0
/// when none can.
pub fn readable_frames(path: &Path) -> usize {
    parse(path, None, true).map_or(0, |s| s.frames.len())
}

/// The video frames of the file at `path` read from its MP4 index, if it
/// is a plain MP4 ([`mp4`]); `None`: it must be parsed.
pub fn indexed_video_frames(path: &Path) -> Option<Vec<CodedFrame>> {
    mp4::video_frames(path)
}

/// Parses the first video stream of the file at `path`, up to `limit`
/// frames; `to_error`: a failure after some frames ends the reading there
/// instead of failing it.
fn parse(path: &Path, limit: Option<usize>, to_error: bool) -> Result<VideoStream> {
    let read_error = |reason: String| Error::Read {
        path: path.into(),
        reason,
    };
    if !path.is_file() {
        return Err(read_error(if path.exists() {
            "it is not a regular file (a pipe or a device streams once, and this reads it ahead): save it to a file first".into()
        } else {
            "there is no such file".into()
        }));
    }
    gst::init().map_err(|e| crate::gst::gst_call("GStreamer did not start", e))?;
    let pipe = gst::Pipeline::new();
    super::inject_swallowed_errors(&pipe);
    let src = super::element("filesrc")?;
    src.set_property("location", path.to_string_lossy().as_ref());
    let parse = super::element("parsebin")?;
    // No sink waits to preroll (`async` off): the demuxer feeds every sink
    // from one thread, and a sink waiting for its first buffer would hold
    // back the others' (the appsink blocking it on a video frame while the
    // audio's fakesink waits for one). Frames are pulled as they come, a
    // few at a time.
    let sink = gst_app::AppSink::builder()
        .sync(false)
        .max_buffers(64)
        .build();
    sink.set_property("async", false);
    // The end does not wait for the frames to be pulled: frames are pulled
    // only once the state change to PLAYING returns, and an end that came
    // before it (a short file read at once) waited for them while holding
    // the sink's lock, which that state change needs; the two waited on
    // each other for good (seen once in CI, probing a short clip).
    // The frames queued stay to be pulled; `is_eos` says so after them.
    sink.set_property("wait-on-eos", false);
    pipe.add_many([&src, &parse, sink.upcast_ref()])
        .and_then(|()| src.link(&parse))
        .map_err(|e| crate::gst::gst_call("cannot build the probe", e))?;
    // The first video pad goes to the appsink, every other pad to a
    // fakesink of its own, so that the demuxer never blocks on it.
    let linked = Arc::new(AtomicBool::new(false));
    // Set when a stream that is not video ends with none linked to the
    // appsink: the file has no video, and the appsink would wait forever.
    // (parsebin exposes a file's streams together, so a video stream would
    // have been linked by then.)
    let no_video = Arc::new(AtomicBool::new(false));
    {
        let (pipe, sink) = (pipe.downgrade(), sink.clone());
        let (linked, no_video) = (linked.clone(), no_video.clone());
        parse.connect_pad_added(move |_, pad| {
            let Some(pipe) = pipe.upgrade() else { return };
            let is_video = pad
                .current_caps()
                .or_else(|| Some(pad.query_caps(None)))
                .and_then(|c| c.structure(0).map(|s| s.name().starts_with("video/")))
                .unwrap_or(false);
            let target = if is_video && !linked.swap(true, Ordering::AcqRel) {
                sink.static_pad("sink")
            } else {
                let Ok(fake) = gst::ElementFactory::make("fakesink")
                    .property("sync", false)
                    .property("async", false)
                    .build()
                else {
                    return;
                };
                if pipe.add(&fake).is_err() || fake.sync_state_with_parent().is_err() {
                    return;
                }
                fake.static_pad("sink")
            };
            if !is_video {
                let (linked, no_video) = (linked.clone(), no_video.clone());
                pad.add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, move |_, info| {
                    if let Some(gst::PadProbeData::Event(e)) = &info.data
                        && e.type_() == gst::EventType::Eos
                        && !linked.load(Ordering::Acquire)
                    {
                        no_video.store(true, Ordering::Release);
                    }
                    gst::PadProbeReturn::Ok
                });
            }
            if let Some(target) = target {
                let _ = pad.link(&target);
            }
        });
    }
    // A part's tag and the orientation come as tag events before the
    // first frame.
    let comments = Arc::new(std::sync::Mutex::new(Vec::new()));
    let orientation = Arc::new(std::sync::Mutex::new(None));
    if let Some(pad) = sink.static_pad("sink") {
        let (comments, orientation) = (comments.clone(), orientation.clone());
        pad.add_probe(gst::PadProbeType::EVENT_DOWNSTREAM, move |_, info| {
            if let Some(gst::PadProbeData::Event(e)) = &info.data
                && let gst::EventView::Tag(t) = e.view()
            {
                let tags = t.tag();
                if let Ok(mut seen) = comments.lock() {
                    for c in tags.iter_tag::<gst::tags::Comment>() {
                        if !seen.iter().any(|s| s == c.get()) {
                            seen.push(c.get().to_string());
                        }
                    }
                }
                if let Some(o) = tags.get::<gst::tags::ImageOrientation>()
                    && let Ok(mut slot) = orientation.lock()
                {
                    let o = o.get().to_string();
                    *slot = (o != "rotate-0").then_some(o);
                }
            }
            gst::PadProbeReturn::Ok
        });
    }
    pipe.set_state(gst::State::Playing)
        .map_err(|_| read_error("GStreamer could not start reading it".into()))?;
    let bus = pipe.bus().expect("a pipeline has a bus");
    let mut frames = Vec::new();
    let mut frame_rate = None;
    let mut caps = None;
    // When the last frame came (or the reading started).
    let mut last = std::time::Instant::now();
    let watch = super::EndWatch::default();
    let outcome = loop {
        if let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_mseconds(100)) {
            last = std::time::Instant::now();
            if frames.is_empty() {
                frame_rate = sample.caps().and_then(caps_frame_rate);
                caps = sample.caps_owned();
            }
            if let Some(buffer) = sample.buffer() {
                let Some(pts) = buffer.pts() else {
                    break Err(read_error(format!(
                        "its video frame {} has no presentation time",
                        frames.len()
                    )));
                };
                frames.push(CodedFrame {
                    pts,
                    keyframe: !buffer.flags().contains(gst::BufferFlags::DELTA_UNIT),
                });
            }
            if limit.is_some_and(|n| frames.len() >= n) {
                break Ok(());
            }
            continue;
        }
        let silent = watch.silent(pipe.upcast_ref());
        if sink.is_eos() {
            break Ok(());
        }
        if no_video.load(Ordering::Acquire) {
            break Err(read_error("it has no video stream".into()));
        }
        if let Some(msg) = bus.pop_filtered(&[gst::MessageType::Error])
            && let gst::MessageView::Error(e) = msg.view()
        {
            break Err(read_error(format!(
                "{} (is it a complete, playable video?)",
                e.error()
            )));
        }
        // An error parsebin swallowed (see `EndWatch`).
        if silent {
            break Err(read_error(match frames.len() {
                0 => "GStreamer stopped reading it before any video frame, with no error \
                      (is it a complete, playable video? a file cut short before its index reads so)"
                    .into(),
                n => format!("its reading stopped after {n} frames with no end and no error"),
            }));
        }
        if (frames.is_empty() && stalled(&pipe, STALL)) || last.elapsed() > STALL {
            break Err(read_error(match frames.len() {
                0 => format!("nothing came out of it in {} s", STALL.as_secs()),
                n => format!(
                    "its reading stopped after {n} frames, with no end and no error in {} s",
                    STALL.as_secs()
                ),
            }));
        }
    };
    let _ = pipe.set_state(gst::State::Null);
    if !to_error || frames.is_empty() {
        outcome?;
    }
    if !linked.load(Ordering::Acquire) {
        return Err(read_error("it has no video stream".into()));
    }
    frames.sort_by_key(|f| f.pts);
    let comments = comments.lock().map(|c| c.clone()).unwrap_or_default();
    let orientation = orientation.lock().ok().and_then(|o| o.clone());
    Ok(VideoStream {
        frames,
        frame_rate,
        comments,
        orientation,
        caps,
    })
}

/// The frame rate `caps` give, if they give a fixed one (not 0/1).
fn caps_frame_rate(caps: &gst::CapsRef) -> Option<gst::Fraction> {
    let rate = caps.structure(0)?.get::<gst::Fraction>("framerate").ok()?;
    let rate = super::usable_rate(rate);
    (rate.numer() > 0).then_some(rate)
}

/// Whether the pipeline has been playing for longer than `limit` (its
/// running time); asked while no frame has come.
fn stalled(pipe: &gst::Pipeline, limit: Duration) -> bool {
    pipe.current_running_time()
        .is_some_and(|t| t > gst::ClockTime::from_nseconds(limit.as_nanos() as u64))
}
