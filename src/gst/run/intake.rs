//! The input side of a run: the input pipeline, and its appsink's callback,
//! which takes each frame out of GStreamer on the streaming thread and hands
//! it to the worker's channel; and the explanations of inputs that give no
//! video.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use gst::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::engine::DeviceIn;
use super::frames::picture_from_buffer;
use super::{Backend, Msg, Pixels, RunOptions, Shared, Timed, gst_err, poll_bus};
use crate::error::{Error, GstCause, Result};
use crate::gst::audio::Bridge;
use crate::gst::cuda::PipelineContext;
use crate::gst::parts::{Held, Place, Span, seek_paused};
use crate::gst::{Input, running_time};

/// How long a file input may take to give its first frame before the run
/// is called stuck (a damaged file can leave the demuxer waiting forever).
const FIRST_FRAME_TIMEOUT: Duration = Duration::from_secs(20);

/// The input pipeline, its appsink handing frames to the worker.
pub(super) struct Intake<'a> {
    pub opts: &'a RunOptions,
    pub pipe: gst::Pipeline,
    pub live: bool,
    pub shared: Arc<Shared>,
    /// Caps of every stream the input's elements have shown.
    streams: Arc<Mutex<Vec<String>>>,
    /// The video decoders decodebin plugged, by factory name.
    decoders: Arc<Mutex<Vec<String>>>,
    /// Set once the decoder has shown every stream: with none of them
    /// video, the run ends there (an audio file's sound would otherwise
    /// flow on).
    all_streams_known: Arc<AtomicBool>,
    /// When the input was started.
    started: Instant,
    /// Tells a file input whose streaming ended with nothing posted.
    end_watch: crate::gst::EndWatch,
    /// A streamed input (a FIFO or a device), opened once by the run and
    /// read by `fdsrc` through its descriptor; kept open until the end.
    _streamed: Option<std::fs::File>,
}

impl<'a> Intake<'a> {
    /// Builds the input pipeline, its audio going to `bridge`, and connects
    /// its appsink to the worker's channel (`frames`: its two ends; the
    /// receiver drops the oldest frame of a live input).
    pub fn open(
        opts: &'a RunOptions,
        cuda: Option<&PipelineContext>,
        bridge: &Bridge,
        frames: (&Sender<Msg>, &Receiver<Msg>),
        shared: Arc<Shared>,
    ) -> Result<Self> {
        let (pipe, streamed) = launch_input(opts, cuda)?;
        // Every handler of the decoder's pads is connected before the
        // pipeline starts: PAUSED starts its streaming threads, which may
        // show the streams before this thread goes on (on a busy machine
        // they did, and the audio stream was never carried).
        let all_streams_known = Arc::new(AtomicBool::new(false));
        if let Some(decoder) = pipe.by_name(crate::gst::DECODER) {
            bridge.attach(&pipe, &decoder);
            let known = all_streams_known.clone();
            decoder.connect_no_more_pads(move |_| known.store(true, Ordering::Relaxed));
        }
        let streams = watch_streams(&pipe);
        let decoders = watch_decoders(&pipe);
        // Live is GStreamer's answer, whatever the input's text: a live
        // source does not preroll in PAUSED (RTSP, UDP, a camera, any
        // fragment with a live source); `--live` forces it. Where PAUSED
        // fails, `play` reports the input's error.
        let answer = pipe.set_state(gst::State::Paused);
        // A test's stand-in for a busy machine: this thread slow to go on
        // once the streaming threads have started.
        if let Some(ms) = crate::fault::after("SEAMSTREAM_INJECT_SLOW_START_MS") {
            std::thread::sleep(Duration::from_millis(ms));
        }
        let live = opts.input.is_live(&opts.test)
            || matches!(answer, Ok(gst::StateChangeSuccess::NoPreroll));
        let appsink = pipe
            .by_name("seamstream_in")
            .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
            .ok_or_else(|| Error::Pipeline("the input pipeline has no appsink".into()))?;
        appsink.set_property("sync", live);
        appsink.set_max_buffers(1);
        // The CPU chain takes frames copied out; the GPU stage copies from
        // GStreamer's buffer itself, straight into pinned memory, or on the
        // device from CUDA memory in the run's context.
        let take = match (&opts.backend, cuda) {
            (Backend::Cpu, _) => Take::Copy,
            (_, Some(c)) => Take::Device(c.clone()),
            (_, None) => Take::Buffer,
        };
        // With `--frames`, the audio follows the video, to be cut with it.
        let limit = opts.frame_limit().map(|n| {
            bridge.follow_video();
            (n, bridge.clone())
        });
        connect(
            &appsink,
            (live, take, deinterlaces(cuda)),
            (opts.span.clone(), limit),
            frames,
            shared.clone(),
        );
        Ok(Intake {
            opts,
            pipe,
            live,
            shared,
            streams,
            decoders,
            all_streams_known,
            started: Instant::now(),
            end_watch: Default::default(),
            _streamed: streamed,
        })
    }

    /// Starts the input.
    pub fn play(&mut self) -> Result<()> {
        self.started = Instant::now();
        // A part of a split job decodes from the keyframe before its warm-up.
        if let Some(span) = &self.opts.span {
            seek_paused(&self.pipe, span.seek_to())?;
        }
        self.pipe
            .set_state(gst::State::Playing)
            .map_err(|_| match poll_bus(&self.pipe) {
                Some(Err(e)) => e,
                _ => Error::Pipeline(format!(
                    "the input `{}` would not start",
                    self.opts.input.launch(&self.opts.test)
                )),
            })?;
        Ok(())
    }

    /// When [`Intake::play`] started the input.
    pub fn started(&self) -> Instant {
        self.started
    }

    /// The input's length as its container states it (its longest
    /// stream's), where the pipeline knows one.
    pub fn stated_length(&self) -> Option<gst::ClockTime> {
        self.pipe.query_duration::<gst::ClockTime>()
    }

    /// Takes no more frames (a stop request).
    pub fn close(&self) {
        self.shared.closing.store(true, Ordering::Relaxed);
    }

    /// Why the run cannot go on, as the input tells it: an error on its
    /// bus, streams of which none is video, or no first frame in time.
    pub fn check(&self) -> Result<()> {
        let no_frame_yet = || self.shared.frames_in.load(Ordering::Relaxed) == 0;
        if let Some(Err(e)) = poll_bus(&self.pipe) {
            let input = &self.opts.input;
            return Err(explain_input_error(e, input, &self.streams, no_frame_yet()));
        }
        if self.all_streams_known.load(Ordering::Relaxed) && no_frame_yet() {
            let seen = self.streams.lock().map(|s| s.clone()).unwrap_or_default();
            if !seen.iter().any(|c| c.starts_with("video/x-raw")) {
                return Err(not_video(&self.opts.input, &seen));
            }
        }
        if self.live
            && no_frame_yet()
            && self.started.elapsed() > FIRST_FRAME_TIMEOUT
            && !self.shared.said_waiting.swap(true, Ordering::Relaxed)
        {
            // A live source may wait for its sender (UDP, a camera that is
            // still opening): said once, and waited for.
            eprintln!(
                "the live input has given no frame in {} s; still waiting (Ctrl-C stops)",
                FIRST_FRAME_TIMEOUT.as_secs()
            );
        }
        // An error the decoder swallowed (see `EndWatch`): no frame, and
        // nothing will flow any more.
        if !self.live && no_frame_yet() && self.end_watch.silent(self.pipe.upcast_ref()) {
            return Err(Error::Pipeline(
                "the input's reading stopped before its first frame, with no error \
                 (is it a complete, playable video? a file cut short before its index reads so)"
                    .into(),
            ));
        }
        if !self.live && no_frame_yet() && self.started.elapsed() > FIRST_FRAME_TIMEOUT {
            return Err(Error::Pipeline(format!(
                "the input gave no frame in {} s; is it a complete, playable video?",
                FIRST_FRAME_TIMEOUT.as_secs()
            )));
        }
        Ok(())
    }

    /// The raw video streams the input's decoder gave, as caps, in order
    /// (the first is the one processed).
    pub fn video_streams(&self) -> Vec<gst::Caps> {
        self.streams
            .lock()
            .map(|s| s.clone())
            .unwrap_or_default()
            .iter()
            .filter(|c| c.starts_with("video/x-raw"))
            .filter_map(|c| c.parse::<gst::Caps>().ok())
            .collect()
    }

    /// The factory names of the input's video decoders (decodebin's
    /// choice), e.g. `seamstreamnvdec`, `nvh264dec` or `avdec_h264`.
    pub fn video_decoders(&self) -> Vec<String> {
        self.decoders.lock().map(|d| d.clone()).unwrap_or_default()
    }

    /// Stops the input.
    pub fn stop(&self) {
        let _ = self.pipe.set_state(gst::State::Null);
    }
}

/// Sets the appsink's callbacks: each sample goes to `tx` as a [`Timed`]
/// frame (taken as `take` says), then the end of the
/// stream as [`Msg::Eos`].
fn connect(
    appsink: &gst_app::AppSink,
    (live, take, deinterlaced): (bool, Take, bool),
    (span, limit): (Option<Span>, Option<(u64, Bridge)>),
    (tx, rx_oldest): (&Sender<Msg>, &Receiver<Msg>),
    shared: Arc<Shared>,
) {
    let (tx, rx_oldest, eos_tx) = (tx.clone(), rx_oldest.clone(), tx.clone());
    let eos_shared = shared.clone();
    let eos_bridge = limit.as_ref().map(|(_, b)| b.clone());
    let mut stamper = Stamper::default();
    // Frames taken, against `limit`.
    let mut count = 0u64;
    // Takes one frame out of GStreamer (from either callback).
    let take_one = move |span: Option<&Span>,
                         sample: gst::Sample|
          -> std::result::Result<gst::FlowSuccess, gst::FlowError> {
        if shared.closing.load(Ordering::Relaxed) {
            return Err(gst::FlowError::Eos);
        }
        // A part of a split job: frames before its warm-up are
        // dropped uncopied, and the next part's first ends it.
        let place = span.map(|s| {
            let pts = sample.buffer().and_then(|b| b.pts());
            pts.map(|p| s.place(p))
        });
        match place {
            Some(Some(Place::Before)) => return Ok(gst::FlowSuccess::Ok),
            Some(Some(Place::After)) => {
                shared.closing.store(true, Ordering::Relaxed);
                let _ = hand_over_waiting(&tx, Msg::Eos, &shared);
                return Err(gst::FlowError::Eos);
            }
            Some(None) => {
                let e = Error::Pipeline(
                    "a frame of the input has no presentation time, so the part cannot be found by time".into(),
                );
                let _ = hand_over_waiting(&tx, Msg::Failed(e), &shared);
                return Err(gst::FlowError::Error);
            }
            _ => {}
        }
        // `--frames`: the next frame ends the video, and the audio
        // with it, at its time.
        if let Some((n, bridge)) = &limit {
            let pts = sample.buffer().and_then(|b| b.pts());
            let time = running_time(&sample, pts);
            if count >= *n {
                if let Some(t) = time {
                    bridge.cut(t);
                }
                shared.cut.store(true, Ordering::Relaxed);
                shared.closing.store(true, Ordering::Relaxed);
                let _ = hand_over_waiting(&tx, Msg::Eos, &shared);
                return Err(gst::FlowError::Eos);
            }
            count += 1;
            let duration = sample.buffer().and_then(|b| b.duration());
            if let Some(t) = time {
                bridge.video_reached(duration.map_or(t, |d| t + d));
            }
        }
        if let Some(end) = crate::gst::stream_end(&sample) {
            shared
                .video_end_ns
                .fetch_max(end.nseconds(), Ordering::Relaxed);
        }
        let start = Instant::now();
        // The frame's caps are read once, by take_sample; an
        // interlaced frame where nothing deinterlaces is refused.
        let msg = take_sample(&sample, &take).and_then(|t| {
            match refuse_interlaced(deinterlaced, &t.info) {
                Some(why) => Err(Error::Unsupported(why)),
                None => Ok(t),
            }
        });
        let msg = msg.map(|mut t| {
            if stamper.stamp(&mut t) {
                shared.untimed.fetch_add(1, Ordering::Relaxed);
            }
            match place {
                Some(Some(Place::Warmup)) => t.warmup = true,
                Some(Some(Place::Part { pts, duration })) => {
                    t.pts = Some(pts);
                    t.duration = duration.or(t.duration);
                }
                _ => {}
            }
            t
        });
        Shared::add(&shared.copy_in_ns, start.elapsed());
        shared.frames_in.fetch_add(1, Ordering::Relaxed);
        if let Ok(Timed {
            frame: Pixels::Device(_),
            ..
        }) = &msg
        {
            shared.frames_in_cuda.fetch_add(1, Ordering::Relaxed);
        }
        let msg = match msg {
            Ok(t) => Msg::Frame(Box::new(t)),
            Err(e) => Msg::Failed(e),
        };
        if live {
            hand_over_newest(&tx, &rx_oldest, msg, &shared)
        } else {
            hand_over_waiting(&tx, msg, &shared)
        }
    };
    // A part of a split job holds back the frames around a boundary that
    // may move to a scene cut until it is decided ([`Held`]); both
    // callbacks run on the streaming thread, one at a time.
    let state = Arc::new(Mutex::new((span, Held::default(), take_one)));
    let eos_state = state.clone();
    let mut decoded = false;
    appsink.set_callbacks(
        gst_app::AppSinkCallbacks::builder()
            .new_sample(move |sink| {
                let sample = sink.pull_sample().map_err(|_| gst::FlowError::Eos)?;
                if !decoded {
                    decoded = true;
                    crate::trace::mark("first frame decoded");
                }
                let mut state = state.lock().map_err(|_| gst::FlowError::Error)?;
                let (span, held, take) = &mut *state;
                let samples = match span {
                    Some(s) => held.admit(s, sample),
                    None => vec![sample],
                };
                for sample in samples {
                    take(span.as_ref(), sample)?;
                }
                Ok(gst::FlowSuccess::Ok)
            })
            .eos(move |_| {
                crate::trace::mark("end of the input");
                // Frames still held (a window cut short by the end).
                if let Ok(mut state) = eos_state.lock() {
                    let (span, held, take) = &mut *state;
                    if let Some(s) = span {
                        for sample in held.finish(s) {
                            if take(Some(s), sample).is_err() {
                                break;
                            }
                        }
                    }
                }
                // The video ended before `--frames`: the audio is all kept.
                if let Some(bridge) = &eos_bridge {
                    bridge.video_ended();
                }
                // Never block the streaming thread past the end of the run.
                let mut msg = Msg::Eos;
                while let Err(crossbeam_channel::SendTimeoutError::Timeout(m)) =
                    eos_tx.send_timeout(msg, Duration::from_millis(50))
                {
                    if eos_shared.abort.load(Ordering::Relaxed) {
                        break;
                    }
                    msg = m;
                }
            })
            .build(),
    );
}

/// The least time between two frames that a file keeps apart. OpenCV's
/// `Megamind.avi`, decoded, gives frames 1.001001000 s and 1.001001001 s:
/// 1 ns apart, they went into an MP4 (whose clock ticks every 1/24000 s)
/// with one time, and its reader gave the second none; a millisecond is a
/// thousand frames a second.
const MIN_STEP: gst::ClockTime = gst::ClockTime::from_mseconds(1);

/// Times for frames that come without one, or with one less than
/// [`MIN_STEP`] after the frame before's (a stream whose timing the
/// demuxer or decoder lost, as at a concatenated file's second clip). A
/// frame without a time is timed one frame after the frame before (a frame
/// lasting its own duration, else one frame of the caps' rate, else of 30
/// fps). A frame that has the frame before's time, or nearly, is timed
/// half a frame after it: one frame after would be where the next frame's
/// own time is (a concatenated clip's: 1 ns apart again, and every frame
/// after it would be retimed, drifting from its sound). The encoder would
/// lose such a frame's time, and the muxer then refuses it ("Buffer has no
/// PTS").
#[derive(Default)]
pub(super) struct Stamper {
    /// The last frame's time, and when the frame after it starts.
    last: Option<(gst::ClockTime, gst::ClockTime)>,
}

impl Stamper {
    /// Gives `t` a time if it has none or one too close after the frame
    /// before's (returns whether it did), and notes where the next frame
    /// starts.
    pub(super) fn stamp(&mut self, t: &mut Timed) -> bool {
        let fps = t.info.fps();
        let frame = match (u64::try_from(fps.numer()), u64::try_from(fps.denom())) {
            (Ok(n), Ok(d)) if n > 0 && d > 0 => {
                gst::ClockTime::from_nseconds(d * 1_000_000_000 / n)
            }
            _ => gst::ClockTime::from_nseconds(1_000_000_000 / 30),
        };
        let retimed = match (t.pts, self.last) {
            (None, None) => Some(gst::ClockTime::ZERO),
            (None, Some((_, next))) => Some(next),
            (Some(pts), Some((last, next))) if pts < last + MIN_STEP => {
                Some(last + (next.saturating_sub(last) / 2).max(MIN_STEP))
            }
            _ => None,
        };
        if retimed.is_some() {
            t.pts = retimed;
        }
        let pts = t.pts.unwrap_or_default();
        self.last = Some((pts, pts + t.duration.unwrap_or(frame)));
        retimed.is_some()
    }
}

/// How the appsink callback takes a sample's frame.
#[derive(Clone)]
enum Take {
    /// Copied out into a picture (the CPU backend).
    Copy,
    /// The buffer itself, which the GPU stage copies from.
    Buffer,
    /// The buffer itself, and where it is CUDA memory in the run's
    /// context, its device planes, which the GPU stage copies from on the
    /// device.
    Device(PipelineContext),
}

/// A sample as a frame for the worker, taken as `take` says.
fn take_sample(sample: &gst::Sample, take: &Take) -> Result<Timed> {
    let caps = sample
        .caps()
        .ok_or_else(|| Error::Pipeline("an input sample has no caps".into()))?;
    let info =
        gst_video::VideoInfo::from_caps(caps).map_err(|e| gst_err("unusable input caps", e))?;
    let buffer = sample
        .buffer()
        .ok_or_else(|| Error::Pipeline("an input sample has no buffer".into()))?;
    let owned = || {
        sample
            .buffer_owned()
            .ok_or_else(|| Error::Pipeline("an input sample has no buffer".into()))
    };
    let frame = match take {
        Take::Copy => Pixels::Picture(picture_from_buffer(buffer, &info)?),
        Take::Device(c) => match c.planes(buffer, &info, false) {
            Some(planes) => Pixels::Device(Box::new(DeviceIn {
                buffer: owned()?,
                planes,
                info: info.clone(),
                out: None,
            })),
            // System memory, or CUDA memory of another context (mapped for
            // reading, GStreamer downloads it).
            None => Pixels::Buffer(owned()?, info.clone()),
        },
        Take::Buffer => Pixels::Buffer(owned()?, info.clone()),
    };
    Ok(Timed {
        frame,
        pts: running_time(sample, buffer.pts()),
        duration: buffer.duration(),
        info,
        warmup: false,
    })
}

/// A live source's frame into the channel: newest frames win, so a full
/// channel makes room by dropping its oldest frame (counted).
fn hand_over_newest(
    tx: &Sender<Msg>,
    rx_oldest: &Receiver<Msg>,
    mut msg: Msg,
    shared: &Shared,
) -> std::result::Result<gst::FlowSuccess, gst::FlowError> {
    loop {
        match tx.try_send(msg) {
            Ok(()) => return Ok(gst::FlowSuccess::Ok),
            Err(crossbeam_channel::TrySendError::Full(m)) => {
                if rx_oldest.try_recv().is_ok() {
                    shared.dropped.fetch_add(1, Ordering::Relaxed);
                }
                msg = m;
            }
            Err(crossbeam_channel::TrySendError::Disconnected(_)) => {
                return Err(gst::FlowError::Flushing);
            }
        }
    }
}

/// A file's frame into the channel: waits for room (nothing is lost),
/// unless the run is over.
fn hand_over_waiting(
    tx: &Sender<Msg>,
    mut msg: Msg,
    shared: &Shared,
) -> std::result::Result<gst::FlowSuccess, gst::FlowError> {
    loop {
        match tx.send_timeout(msg, Duration::from_millis(50)) {
            Ok(()) => return Ok(gst::FlowSuccess::Ok),
            Err(crossbeam_channel::SendTimeoutError::Timeout(m))
                if !shared.abort.load(Ordering::Relaxed) =>
            {
                msg = m
            }
            Err(_) => return Err(gst::FlowError::Flushing),
        }
    }
}

/// What the appsink takes in system memory.
const SYSTEM_CAPS: &str = "video/x-raw,format={ I420, NV12, RGBA }";

/// Builds the input pipeline, explaining a source that cannot link to video
/// conversion, and sets up the sample clip's appsrc. With `cuda`, the
/// appsink also takes CUDA memory, and the pipeline's elements (NVIDIA's
/// decoder) work in that context.
fn launch_input(
    opts: &RunOptions,
    cuda: Option<&PipelineContext>,
) -> Result<(gst::Pipeline, Option<std::fs::File>)> {
    // Both backends take the decoder's 4:2:0 as it is and convert it with
    // the same arithmetic (the `yuv` op's), so a file gives the same frames
    // on either device.
    let caps = match cuda {
        // NVIDIA's decoders give NV12 (8-bit) in CUDA memory.
        Some(_) => format!(
            "video/x-raw({}),format={{ NV12, I420 }};{SYSTEM_CAPS}",
            crate::gst::cuda::CAPS_FEATURE
        ),
        None => SYSTEM_CAPS.to_string(),
    };
    let description = opts
        .input
        .launch_with(&opts.test, &caps, deinterlaces(cuda));
    let pipe = gst::parse::launch(&description).map_err(|e| {
        // GStreamer's own answer (the error's domain and code), not its text.
        let unlinked = e.kind::<gst::ParseError>() == Some(gst::ParseError::Link);
        match &opts.input {
            Input::Fragment(f) if unlinked => not_video(
                &opts.input,
                &fragment_caps(f).into_iter().collect::<Vec<_>>(),
            ),
            _ => gst_err(&format!("cannot build `{description}`"), e),
        }
    })?;
    let pipe = pipe
        .downcast::<gst::Pipeline>()
        .map_err(|_| Error::Pipeline(format!("`{description}` is not a pipeline")))?;
    crate::gst::inject_swallowed_errors(&pipe);
    if opts.input == Input::Sample {
        crate::gst::sample::feed(&pipe, &opts.test)?;
    }
    if let Some(c) = cuda {
        // Kept by the pipeline, and set on each element as it is added.
        pipe.set_context(c.context());
    }
    let streamed = match &opts.input {
        Input::Uri {
            path: Some(path),
            streamed: true,
            ..
        } => Some(open_streamed(&pipe, path)?),
        _ => None,
    };
    Ok((pipe, streamed))
}

/// Whether the input deinterlaces: where GStreamer can, in system memory
/// (with the decoder's CUDA memory kept, `deinterlace` is left out: it is
/// not known to pass that memory through; interlaced video is refused
/// there instead, see [`refuse_interlaced`]).
fn deinterlaces(cuda: Option<&PipelineContext>) -> bool {
    cuda.is_none() && crate::gst::can_deinterlace()
}

/// Why a run that does not deinterlace refuses an interlaced frame of
/// `mode`, or `None` where it takes it.
pub(super) fn refuse_interlaced(deinterlaced: bool, info: &gst_video::VideoInfo) -> Option<String> {
    let mode = info.interlace_mode();
    if deinterlaced || mode == gst_video::VideoInterlaceMode::Progressive {
        return None;
    }
    Some(format!(
        "the input is interlaced ({}); {}",
        mode.to_str(),
        if crate::gst::can_deinterlace() {
            "the GPU path, which keeps the decoder's CUDA memory, does not deinterlace yet: run it with --device cpu, which deinterlaces before the chain"
        } else {
            "GStreamer's deinterlace element is not installed (gstreamer1.0-plugins-good): install it, and the run deinterlaces before the chain"
        }
    ))
}

/// Opens a FIFO or a device for the pipeline's `fdsrc` (waiting, as any
/// reader of a FIFO does, for its writer to open it).
fn open_streamed(pipe: &gst::Pipeline, path: &std::path::Path) -> Result<std::fs::File> {
    use std::os::fd::AsRawFd;
    let file = std::fs::File::open(path).map_err(|e| Error::Read {
        path: path.into(),
        reason: e.to_string(),
    })?;
    let src = pipe
        .by_name(crate::gst::STREAMED_SOURCE)
        .ok_or_else(|| Error::Pipeline("the input has no fdsrc".into()))?;
    src.set_property("fd", file.as_raw_fd());
    Ok(file)
}

/// What a gst-launch source fragment gives, as caps text, found by building
/// it alone; `None` if that fails too.
fn fragment_caps(fragment: &str) -> Option<String> {
    let bin = gst::parse::bin_from_description(fragment, true).ok()?;
    let pad = bin.static_pad("src")?;
    Some(pad.query_caps(None).to_string())
}

/// Records the caps of every pad the input's elements add as streams turn
/// up (uridecodebin, decodebin, demuxers), so that an input with no video
/// stream can be told apart from a broken one.
/// Records the factory name of each video decoder added anywhere in `pipe`.
fn watch_decoders(pipe: &gst::Pipeline) -> Arc<Mutex<Vec<String>>> {
    let decoders = Arc::new(Mutex::new(Vec::new()));
    let d = decoders.clone();
    pipe.connect_deep_element_added(move |_, _, element| {
        let Some(f) = element.factory() else { return };
        let klass = f.metadata(gst::ELEMENT_METADATA_KLASS).unwrap_or_default();
        if klass.contains("Decoder")
            && klass.contains("Video")
            && let Ok(mut d) = d.lock()
        {
            d.push(f.name().to_string());
        }
    });
    decoders
}

fn watch_streams(pipe: &gst::Pipeline) -> Arc<Mutex<Vec<String>>> {
    let seen = Arc::new(Mutex::new(Vec::new()));
    for element in pipe.iterate_elements().into_iter().flatten() {
        let seen = seen.clone();
        element.connect_pad_added(move |_, pad| {
            if pad.direction() != gst::PadDirection::Src {
                return;
            }
            let caps = pad.current_caps().unwrap_or_else(|| pad.query_caps(None));
            if let Ok(mut seen) = seen.lock() {
                seen.push(caps.to_string());
            }
        });
    }
    seen
}

/// An input error that came before the first frame, restated when the
/// input turned out to have no raw video to give.
fn explain_input_error(
    e: Error,
    input: &Input,
    streams: &Mutex<Vec<String>>,
    before_first: bool,
) -> Error {
    if !before_first {
        return e;
    }
    let streams = streams.lock().map(|s| s.clone()).unwrap_or_default();
    let any_raw_video = streams.iter().any(|c| c.starts_with("video/x-raw"));
    if !streams.is_empty() && !any_raw_video {
        return not_video(input, &streams);
    }
    let cause = match &e {
        Error::Gst { cause, .. } => *cause,
        _ => GstCause::Other,
    };
    // qtdemux reads a stream it cannot seek in (a pipe, a FIFO) from the
    // front, and gives up when the index is not in its first 10 MB.
    if let Error::Gst { message, .. } = &e
        && message.contains("no 'moov' atom")
    {
        return Error::Pipeline(format!(
            "the input `{input}` is an MP4 (or QuickTime) file whose index, its `moov` box, \
             comes after its first 10 MB, and it came as a stream (a pipe or a FIFO), which \
             cannot be read from its end: give the file itself, stream it as Matroska, or \
             move the index to the front first (`ffmpeg -i IN -c copy -movflags +faststart \
             OUT`, or GStreamer's `mp4mux faststart=true`)"
        ));
    }
    if cause == GstCause::TypeNotFound {
        return Error::Pipeline(format!(
            "the input `{input}` is not a video file GStreamer recognises (its type could not \
             be determined); is it a complete video file?"
        ));
    }
    if streams.is_empty() && cause == GstCause::NotLinked {
        return Error::Pipeline(format!(
            "the input `{input}` gave no stream that could be turned into video frames; \
             does it have a video stream? ({e})"
        ));
    }
    e
}

/// The error for an input whose streams (`caps`, as text) hold no raw video.
fn not_video(input: &Input, caps: &[String]) -> Error {
    // Caps of raw audio list every format and rate; the head says enough.
    let short = |c: &String| {
        let head: String = c.chars().take(80).collect();
        if head.len() < c.len() {
            format!("{head}…")
        } else {
            head
        }
    };
    let gives = if caps.is_empty() {
        "something other than video".to_string()
    } else {
        caps.iter().map(short).collect::<Vec<_>>().join("; ")
    };
    let hint = if !caps.is_empty() && caps.iter().all(|c| c.starts_with("audio/")) {
        "it is audio only: there is no video stream to process"
    } else if caps.iter().any(|c| c.starts_with("video/")) {
        match input {
            Input::Fragment(_) => {
                "that is encoded video; decode it in the fragment (`... ! decodebin`)"
            }
            _ => {
                "no decoder for that video is installed (gstreamer1.0-libav and \
                 gstreamer1.0-plugins-bad/-ugly hold most)"
            }
        }
    } else {
        "give an input with a video stream"
    };
    Error::Pipeline(format!(
        "the input `{input}` has no video stream seamstream can take: it gives `{gives}`, \
         which cannot be turned into video frames; {hint}"
    ))
}

#[cfg(test)]
mod tests {

    use super::*;

    /// Frames without a time are timed one frame after the frame before,
    /// those too close after it to be kept apart half a frame after it;
    /// the others keep theirs.
    #[test]
    fn a_frame_a_nanosecond_after_the_one_before_is_timed_apart_from_it() {
        gst::init().unwrap();
        let info = gst_video::VideoInfo::builder(gst_video::VideoFormat::Rgba, 2, 2)
            .fps(gst::Fraction::new(24000, 1001))
            .build()
            .unwrap();
        let ns = gst::ClockTime::from_nseconds;
        let frame = ns(41_708_375);
        let mut stamper = Stamper::default();
        let mut stamp = |pts: Option<gst::ClockTime>| {
            let mut t = Timed {
                frame: Pixels::Picture(crate::frame::Picture::Frame(crate::frame::Frame::Gray(
                    crate::frame::Plane::new(2, 2, 0),
                ))),
                pts,
                duration: Some(frame),
                info: info.clone(),
                warmup: false,
            };
            let untimed = stamper.stamp(&mut t);
            (t.pts.unwrap().nseconds(), untimed)
        };
        let half = frame.nseconds() / 2;
        assert_eq!(stamp(Some(ns(1_001_001_000))), (1_001_001_000, false));
        // 1 ns later: half a frame after the one before, clear of the
        // next frame's own time.
        assert_eq!(stamp(Some(ns(1_001_001_001))), (1_001_001_000 + half, true));
        // The next frame on time keeps its time.
        assert_eq!(stamp(Some(ns(1_042_709_376))), (1_042_709_376, false));
        // No time: one frame after the one before.
        assert_eq!(stamp(None), (1_042_709_376 + frame.nseconds(), true));
        // The same time again: half a frame after.
        let last = 1_042_709_376 + frame.nseconds();
        assert_eq!(stamp(Some(ns(last))), (last + half, true));
        let last = last + half;
        // Two milliseconds after is a frame of its own (500 fps).
        assert_eq!(stamp(Some(ns(last + 2_000_000))), (last + 2_000_000, false));
    }

    /// Where the run does not deinterlace (the GPU path that keeps the
    /// decoder's CUDA memory), an interlaced frame is refused with its
    /// reason and what to do; progressive ones pass, and a run that
    /// deinterlaces takes any.
    #[test]
    fn an_interlaced_frame_is_refused_only_where_nothing_deinterlaces() {
        gst::init().unwrap();
        let info = |mode| {
            gst_video::VideoInfo::builder(gst_video::VideoFormat::I420, 64, 48)
                .interlace_mode(mode)
                .build()
                .unwrap()
        };
        let woven = info(gst_video::VideoInterlaceMode::Interleaved);
        let why = refuse_interlaced(false, &woven).unwrap();
        assert!(why.contains("interlaced (interleaved)"), "{why}");
        assert!(
            why.contains("--device cpu") || why.contains("plugins-good"),
            "{why}"
        );
        assert!(refuse_interlaced(true, &woven).is_none());
        let plain = info(gst_video::VideoInterlaceMode::Progressive);
        assert!(refuse_interlaced(false, &plain).is_none());
    }
}
