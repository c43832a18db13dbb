//! The run loop: appsink → chain → appsrc, on three threads joined by bounded
//! channels (DESIGN.md §1).
//!
//! - GStreamer's streaming thread (the appsink callback) copies each frame
//!   out of its buffer and hands it to a bounded channel; for a file it waits
//!   when the channel is full (backpressure, nothing lost), for a live source
//!   it drops the oldest queued frame instead and counts it.
//! - A worker thread runs the chain.
//! - The calling thread pushes results into the appsrc, builds the output
//!   pipeline when the first frame tells the output size, and watches both
//!   buses. A stop request (Ctrl-C) closes the intake, lets the frames
//!   already taken run through, then sends EOS so files are finalised. The
//!   stop does not rely on GStreamer passing an EOS event through the input,
//!   which is lost when it comes before the source has started.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use gst::prelude::*;
use gst_video::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::{Input, Output, TestSettings};
use crate::cuda::stage::Stage;
use crate::cuda::{DevFormat, Gpu};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};
use crate::ops::Chain;

/// How long a file input may take to give its first frame before the run
/// is called stuck (a damaged file can leave the demuxer waiting forever).
const FIRST_FRAME_TIMEOUT: Duration = Duration::from_secs(20);

/// Where the chain runs.
#[derive(Clone, Debug, Default)]
pub enum Backend {
    #[default]
    Cpu,
    /// The GPU stage, with its ring of slots.
    Cuda(Gpu),
}

/// What to run.
#[derive(Clone, Debug)]
pub struct RunOptions {
    pub input: Input,
    pub output: Output,
    pub test: TestSettings,
    /// Frames that may wait between the stages.
    pub queue: usize,
    pub backend: Backend,
    /// Slots in the GPU stage's ring.
    pub slots: usize,
}

/// What happened, for the summary line and `--json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub frames_in: u64,
    pub frames_out: u64,
    pub dropped: u64,
    pub seconds: f64,
    /// Milliseconds per frame in each stage.
    pub ms_copy_in: f64,
    pub ms_chain: f64,
    pub ms_copy_out: f64,
    pub width_in: usize,
    pub height_in: usize,
    pub width_out: usize,
    pub height_out: usize,
    pub interrupted: bool,
}

impl Summary {
    pub fn fps(&self) -> f64 {
        if self.seconds > 0.0 {
            self.frames_out as f64 / self.seconds
        } else {
            0.0
        }
    }
}

/// A frame with its timing and the caps it arrived with.
struct Timed {
    frame: Frame,
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    info: gst_video::VideoInfo,
}

enum Msg {
    Frame(Timed),
    Eos,
    Failed(Error),
}

/// What travels with a frame through the GPU stage.
type Meta = (
    Option<gst::ClockTime>,
    Option<gst::ClockTime>,
    gst_video::VideoInfo,
);

/// The chain on its backend, as the worker thread drives it: frames in,
/// finished frames out in order (the GPU stage may hold a few).
struct Work {
    chain: Chain,
    backend: Backend,
    slots: usize,
    stage: Option<Stage<Meta>>,
}

impl Work {
    fn new(chain: Chain, backend: Backend, slots: usize) -> Self {
        Work {
            chain,
            backend,
            slots,
            stage: None,
        }
    }

    fn busy(&self) -> bool {
        self.stage.as_ref().is_some_and(|s| s.in_flight() > 0)
    }

    fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
        let Backend::Cuda(gpu) = &self.backend else {
            let frame = self.chain.apply(t.frame)?;
            return Ok(vec![Timed { frame, ..t }]);
        };
        if self.stage.is_none() {
            // Set up on the first frame, which tells the size.
            let f = &t.frame;
            self.stage = Some(Stage::new(
                gpu,
                &self.chain,
                f.width(),
                f.height(),
                DevFormat::of(f),
                self.slots,
            )?);
        }
        let stage = self.stage.as_mut().expect("set up above");
        let done = stage.push(&t.frame, (t.pts, t.duration, t.info))?;
        Ok(Self::timed(done))
    }

    fn poll(&mut self) -> Result<Vec<Timed>> {
        match &mut self.stage {
            Some(s) => Ok(Self::timed(s.poll()?)),
            None => Ok(Vec::new()),
        }
    }

    fn finish(&mut self) -> Result<Vec<Timed>> {
        match &mut self.stage {
            Some(s) => Ok(Self::timed(s.finish()?)),
            None => Ok(Vec::new()),
        }
    }

    fn timed(done: Vec<(Frame, Meta)>) -> Vec<Timed> {
        done.into_iter()
            .map(|(frame, (pts, duration, info))| Timed {
                frame,
                pts,
                duration,
                info,
            })
            .collect()
    }
}

fn gst_err(context: &str, e: impl std::fmt::Display) -> Error {
    Error::Pipeline(format!("{context}: {e}"))
}

fn launch(description: &str) -> Result<gst::Pipeline> {
    let element = gst::parse::launch(description)
        .map_err(|e| gst_err(&format!("cannot build `{description}`"), e))?;
    element
        .downcast::<gst::Pipeline>()
        .map_err(|_| Error::Pipeline(format!("`{description}` is not a pipeline")))
}

/// Builds the input pipeline, explaining a source that cannot link to video
/// conversion, and sets up the sample clip's appsrc.
fn launch_input(opts: &RunOptions) -> Result<gst::Pipeline> {
    let description = opts.input.launch(&opts.test);
    let pipe = gst::parse::launch(&description).map_err(|e| {
        let message = e.to_string();
        match &opts.input {
            Input::Fragment(f) if message.contains("could not link") => not_video(
                &opts.input,
                &fragment_caps(f).into_iter().collect::<Vec<_>>(),
            ),
            _ => gst_err(&format!("cannot build `{description}`"), e),
        }
    })?;
    let pipe = pipe
        .downcast::<gst::Pipeline>()
        .map_err(|_| Error::Pipeline(format!("`{description}` is not a pipeline")))?;
    if opts.input == Input::Sample {
        super::sample::feed(&pipe, &opts.test)?;
    }
    Ok(pipe)
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
fn watch_streams(pipe: &gst::Pipeline) -> Arc<std::sync::Mutex<Vec<String>>> {
    let seen = Arc::new(std::sync::Mutex::new(Vec::new()));
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
    streams: &std::sync::Mutex<Vec<String>>,
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
    if streams.is_empty() && e.to_string().contains("not-linked") {
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

/// Copies an RGBA buffer into a frame (the one copy on the streaming thread).
fn frame_from_buffer(buffer: &gst::BufferRef, info: &gst_video::VideoInfo) -> Result<Frame> {
    let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer, info)
        .map_err(|e| gst_err("cannot map an input buffer", e))?;
    let (w, h) = (info.width() as usize, info.height() as usize);
    let stride = vf.plane_stride()[0] as usize;
    let data = vf
        .plane_data(0)
        .map_err(|e| gst_err("cannot read an input buffer", e))?;
    // One allocation per frame on the CPU path: the chain owns its frames.
    let mut plane = Plane::new(w, h, [0u8; 4]);
    for (y, row) in plane.rows_mut().enumerate() {
        row.as_flattened_mut()
            .copy_from_slice(&data[y * stride..y * stride + 4 * w]);
    }
    Ok(Frame::Rgba(plane))
}

fn buffer_from_frame(
    frame: &Frame,
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
) -> gst::Buffer {
    // One allocation per frame (the buffer GStreamer takes), written row by
    // row straight from the frame.
    let mut bytes = Vec::with_capacity(4 * frame.width() * frame.height());
    match frame {
        Frame::Rgba(p) => {
            (0..p.height()).for_each(|y| bytes.extend_from_slice(p.row(y).as_flattened()))
        }
        Frame::Gray(p) => (0..p.height())
            .for_each(|y| bytes.extend(p.row(y).iter().flat_map(|&v| [v, v, v, 255]))),
    }
    let mut buffer = gst::Buffer::from_mut_slice(bytes);
    if let Some(b) = buffer.get_mut() {
        b.set_pts(pts);
        b.set_duration(duration);
    }
    buffer
}

/// The first error or EOS on a bus, without waiting.
fn poll_bus(pipeline: &gst::Pipeline) -> Option<std::result::Result<(), Error>> {
    let bus = pipeline.bus()?;
    while let Some(msg) = bus.pop_filtered(&[gst::MessageType::Error, gst::MessageType::Eos]) {
        match msg.view() {
            gst::MessageView::Error(err) => {
                let who = err
                    .src()
                    .map(|s| s.path_string().to_string())
                    .unwrap_or_else(|| "pipeline".into());
                let debug = err.debug().map(|d| format!(" ({d})")).unwrap_or_default();
                return Some(Err(Error::Pipeline(format!(
                    "{who}: {}{debug}",
                    err.error()
                ))));
            }
            gst::MessageView::Eos(_) => return Some(Ok(())),
            _ => {}
        }
    }
    None
}

/// Runs the input through `chain` to the output until EOS, an error, or
/// `stop` (then EOS is sent, so a file output is still finalised).
pub fn run(opts: &RunOptions, chain: Chain, stop: Arc<AtomicBool>) -> Result<Summary> {
    gst::init().map_err(|e| gst_err("GStreamer did not start", e))?;
    opts.output.check_writable()?;
    let live = opts.input.is_live(&opts.test);
    opts.input.check_available()?;
    let in_pipe = launch_input(opts)?;
    let streams = watch_streams(&in_pipe);
    let appsink = in_pipe
        .by_name("seamstream_in")
        .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
        .ok_or_else(|| Error::Pipeline("the input pipeline has no appsink".into()))?;
    appsink.set_property("sync", live);
    appsink.set_max_buffers(1);

    let (in_tx, in_rx): (Sender<Msg>, Receiver<Msg>) = bounded(opts.queue.max(1));
    let (out_tx, out_rx): (Sender<Msg>, Receiver<Msg>) = bounded(opts.queue.max(1));
    // Set when the run ends, so that neither the appsink callback nor the
    // worker waits on a channel nobody will serve again (the callback keeps
    // its sender alive until the pipeline is gone).
    let abort = Arc::new(AtomicBool::new(false));
    // Set on a stop request: the callback takes no more frames.
    let closing = Arc::new(AtomicBool::new(false));
    // The main thread's way to put its end-of-stream mark behind the frames
    // already queued when a stop comes.
    let marker_tx = in_tx.clone();
    let dropped = Arc::new(AtomicU64::new(0));
    let copy_in_ns = Arc::new(AtomicU64::new(0));
    let frames_in = Arc::new(AtomicU64::new(0));

    {
        let (tx, rx_oldest) = (in_tx.clone(), in_rx.clone());
        let (dropped, copy_in_ns, frames_in) =
            (dropped.clone(), copy_in_ns.clone(), frames_in.clone());
        let eos_tx = in_tx.clone();
        let (abort, eos_abort) = (abort.clone(), abort.clone());
        let closing = closing.clone();
        appsink.set_callbacks(
            gst_app::AppSinkCallbacks::builder()
                .new_sample(move |sink| {
                    let sample = sink.pull_sample().map_err(|_| gst::FlowError::Eos)?;
                    if closing.load(Ordering::Relaxed) {
                        return Err(gst::FlowError::Eos);
                    }
                    let start = Instant::now();
                    let msg = (|| {
                        let caps = sample
                            .caps()
                            .ok_or_else(|| Error::Pipeline("an input sample has no caps".into()))?;
                        let info = gst_video::VideoInfo::from_caps(caps)
                            .map_err(|e| gst_err("unusable input caps", e))?;
                        let buffer = sample.buffer().ok_or_else(|| {
                            Error::Pipeline("an input sample has no buffer".into())
                        })?;
                        let frame = frame_from_buffer(buffer, &info)?;
                        Ok(Timed {
                            frame,
                            pts: buffer.pts(),
                            duration: buffer.duration(),
                            info,
                        })
                    })();
                    copy_in_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    frames_in.fetch_add(1, Ordering::Relaxed);
                    let msg = match msg {
                        Ok(t) => Msg::Frame(t),
                        Err(e) => Msg::Failed(e),
                    };
                    if live {
                        // Newest frames win: make room by dropping the oldest.
                        let mut msg = msg;
                        loop {
                            match tx.try_send(msg) {
                                Ok(()) => break,
                                Err(crossbeam_channel::TrySendError::Full(m)) => {
                                    if rx_oldest.try_recv().is_ok() {
                                        dropped.fetch_add(1, Ordering::Relaxed);
                                    }
                                    msg = m;
                                }
                                Err(crossbeam_channel::TrySendError::Disconnected(_)) => {
                                    return Err(gst::FlowError::Flushing);
                                }
                            }
                        }
                    } else {
                        // Files: wait for room (nothing is lost), unless the run is over.
                        let mut msg = msg;
                        loop {
                            match tx.send_timeout(msg, Duration::from_millis(50)) {
                                Ok(()) => break,
                                Err(crossbeam_channel::SendTimeoutError::Timeout(m))
                                    if !abort.load(Ordering::Relaxed) =>
                                {
                                    msg = m
                                }
                                Err(_) => return Err(gst::FlowError::Flushing),
                            }
                        }
                    }
                    Ok(gst::FlowSuccess::Ok)
                })
                .eos(move |_| {
                    // Never block the streaming thread past the end of the run.
                    let mut msg = Msg::Eos;
                    while let Err(crossbeam_channel::SendTimeoutError::Timeout(m)) =
                        eos_tx.send_timeout(msg, Duration::from_millis(50))
                    {
                        if eos_abort.load(Ordering::Relaxed) {
                            break;
                        }
                        msg = m;
                    }
                })
                .build(),
        );
    }
    drop(in_tx);

    let chain_ns = Arc::new(AtomicU64::new(0));
    // Frames the worker took; with the dropped ones, the frames that came in
    // (a frame that slips in behind a stop's end mark is not counted).
    let taken = Arc::new(AtomicU64::new(0));
    let worker = {
        let (chain_ns, abort, taken) = (chain_ns.clone(), abort.clone(), taken.clone());
        let backend = opts.backend.clone();
        let slots = opts.slots;
        std::thread::Builder::new()
            .name("seamstream-chain".into())
            .spawn(move || {
                let mut work = Work::new(chain, backend, slots);
                loop {
                    // While the GPU holds frames, look for finished ones often,
                    // so a live source gets each frame back as soon as it is done.
                    let wait = if work.busy() { 1 } else { 50 };
                    let msg = match in_rx.recv_timeout(Duration::from_millis(wait)) {
                        Ok(m) => Some(m),
                        Err(crossbeam_channel::RecvTimeoutError::Timeout)
                            if !abort.load(Ordering::Relaxed) =>
                        {
                            None
                        }
                        Err(_) => break,
                    };
                    let start = Instant::now();
                    let (outs, end) = match msg {
                        Some(Msg::Frame(t)) => {
                            taken.fetch_add(1, Ordering::Relaxed);
                            (work.push(t), None)
                        }
                        Some(other) => (work.finish(), Some(other)),
                        None => (work.poll(), None),
                    };
                    chain_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    let mut msgs: Vec<Msg> = match outs {
                        Ok(frames) => frames.into_iter().map(Msg::Frame).collect(),
                        Err(e) => vec![Msg::Failed(e)],
                    };
                    msgs.extend(end);
                    let stop = msgs.iter().any(|m| !matches!(m, Msg::Frame(_)));
                    if msgs.into_iter().any(|m| out_tx.send(m).is_err()) || stop {
                        break;
                    }
                }
            })
            .map_err(|e| Error::Pipeline(format!("cannot start the chain thread: {e}")))?
    };

    let started = Instant::now();
    in_pipe
        .set_state(gst::State::Playing)
        .map_err(|_| match poll_bus(&in_pipe) {
            Some(Err(e)) => e,
            _ => Error::Pipeline(format!(
                "the input `{}` would not start",
                opts.input.launch(&opts.test)
            )),
        })?;

    let mut summary = Summary::default();
    let progress = Progress::new(live);
    let mut out_pipe: Option<(gst::Pipeline, gst_app::AppSrc)> = None;
    let mut copy_out_ns = 0u64;
    let mut marker = None;
    let result: Result<()> = loop {
        if stop.load(Ordering::Relaxed) && !summary.interrupted {
            summary.interrupted = true;
            closing.store(true, Ordering::Relaxed);
            marker = Some(Msg::Eos);
        }
        // The mark goes in as soon as there is room; the worker drains the
        // frames ahead of it meanwhile.
        if let Some(m) = marker.take()
            && let Err(crossbeam_channel::TrySendError::Full(m)) = marker_tx.try_send(m)
        {
            marker = Some(m);
        }
        if let Some(Err(e)) = poll_bus(&in_pipe) {
            let before_first = frames_in.load(Ordering::Relaxed) == 0;
            break Err(explain_input_error(e, &opts.input, &streams, before_first));
        }
        if !live
            && frames_in.load(Ordering::Relaxed) == 0
            && started.elapsed() > FIRST_FRAME_TIMEOUT
        {
            break Err(Error::Pipeline(format!(
                "the input gave no frame in {} s; is it a complete, playable video?",
                FIRST_FRAME_TIMEOUT.as_secs()
            )));
        }
        if let Some((p, _)) = &out_pipe
            && let Some(Err(e)) = poll_bus(p)
        {
            break Err(e);
        }
        let msg = match out_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => break Ok(()),
        };
        match msg {
            Msg::Frame(t) => {
                if out_pipe.is_none() {
                    summary.width_in = t.info.width() as usize;
                    summary.height_in = t.info.height() as usize;
                    summary.width_out = t.frame.width();
                    summary.height_out = t.frame.height();
                    match open_output(opts, &t) {
                        Ok(o) => out_pipe = Some(o),
                        Err(e) => break Err(e),
                    }
                    progress.start(expected_frames(opts, &in_pipe, &t.info));
                }
                if (t.frame.width(), t.frame.height()) != (summary.width_out, summary.height_out) {
                    break Err(Error::Pipeline(format!(
                        "the frame size changed mid-stream to {}x{}; seamstream needs one size per run",
                        t.frame.width(),
                        t.frame.height()
                    )));
                }
                let start = Instant::now();
                let buffer = buffer_from_frame(&t.frame, t.pts, t.duration);
                copy_out_ns += start.elapsed().as_nanos() as u64;
                if let Some((p, src)) = &out_pipe
                    && let Err(e) = push(p, src, buffer)
                {
                    break Err(e);
                }
                summary.frames_out += 1;
                progress.frame(dropped.load(Ordering::Relaxed));
            }
            Msg::Eos => break Ok(()),
            Msg::Failed(e) => break Err(e),
        }
    };
    // Finish the output file whatever happened, so frames already written stay playable.
    progress.finish();
    let finish = finish_output(out_pipe.as_ref());
    abort.store(true, Ordering::Relaxed);
    drop(out_rx);
    drop(marker_tx);
    let _ = worker.join();
    let _ = in_pipe.set_state(gst::State::Null);
    if let Some((p, _)) = &out_pipe {
        let _ = p.set_state(gst::State::Null);
    }
    summary.seconds = started.elapsed().as_secs_f64();
    summary.dropped = dropped.load(Ordering::Relaxed);
    summary.frames_in = taken.load(Ordering::Relaxed) + summary.dropped;
    let per = |ns: u64, n: u64| {
        if n > 0 {
            ns as f64 / n as f64 / 1e6
        } else {
            0.0
        }
    };
    summary.ms_copy_in = per(
        copy_in_ns.load(Ordering::Relaxed),
        frames_in.load(Ordering::Relaxed),
    );
    summary.ms_chain = per(
        chain_ns.load(Ordering::Relaxed),
        taken.load(Ordering::Relaxed),
    );
    summary.ms_copy_out = per(copy_out_ns, summary.frames_out);
    if result.is_err() && summary.frames_out == 0 {
        // Nothing was written: leave no empty or broken file behind.
        opts.output.remove_file();
    }
    result?;
    finish?;
    Ok(summary)
}

/// Frames a file job should give, for the progress bar: the test source's
/// count, or the duration times the frame rate; `None` if unknown.
fn expected_frames(
    opts: &RunOptions,
    pipe: &gst::Pipeline,
    info: &gst_video::VideoInfo,
) -> Option<u64> {
    match opts.input {
        Input::Test { .. } => return opts.test.frames,
        Input::Sample => return Some(opts.test.frames.unwrap_or(super::sample::DEFAULT_FRAMES)),
        _ => {}
    }
    let duration = pipe.query_duration::<gst::ClockTime>()?;
    let fps = info.fps();
    if fps.numer() <= 0 || fps.denom() <= 0 {
        return None;
    }
    Some(duration.nseconds() * fps.numer() as u64 / fps.denom() as u64 / 1_000_000_000)
}

/// A progress bar for file jobs (frames, fps, ETA) and a rolling rate for
/// live ones; drawn on stderr only when it is a terminal.
struct Progress {
    bar: indicatif::ProgressBar,
    live: bool,
}

impl Progress {
    fn new(live: bool) -> Self {
        Self {
            bar: indicatif::ProgressBar::hidden(),
            live,
        }
    }

    fn start(&self, total: Option<u64>) {
        let (template, len) = match (self.live, total) {
            (false, Some(n)) => ("{bar:40} {pos}/{len} frames, {fps}, ETA {eta}", Some(n)),
            _ => ("{spinner} {pos} frames, {fps} {msg}", None),
        };
        if let Some(n) = len {
            self.bar.set_length(n);
        }
        if let Ok(style) = indicatif::ProgressStyle::with_template(template) {
            let fps = |s: &indicatif::ProgressState, w: &mut dyn std::fmt::Write| {
                let _ = write!(w, "{:.1} fps", s.per_sec());
            };
            self.bar.set_style(style.with_key("fps", fps));
        }
        self.bar
            .set_draw_target(indicatif::ProgressDrawTarget::stderr());
    }

    fn frame(&self, dropped: u64) {
        self.bar.inc(1);
        if self.live && dropped > 0 {
            self.bar.set_message(format!("({dropped} dropped)"));
        }
    }

    fn finish(&self) {
        self.bar.finish_and_clear();
    }
}

fn open_output(opts: &RunOptions, first: &Timed) -> Result<(gst::Pipeline, gst_app::AppSrc)> {
    let (w, h) = (first.frame.width(), first.frame.height());
    if let Output::File {
        container: super::Container::Y4m,
        ..
    } = &opts.output
        && (!w.is_multiple_of(8) || !h.is_multiple_of(2))
    {
        // GStreamer 1.22's y4menc writes its row strides (padded to 4 bytes)
        // into the file, which is only right when no row needs padding.
        return Err(Error::Pipeline(format!(
            "the frames are {w}x{h}, and .y4m output needs a width that is a multiple of 8 and an even height here (GStreamer 1.22's y4menc writes broken files otherwise); use .mp4 or .mkv, or such a size"
        )));
    }
    let description = opts.output.launch(w, h);
    let pipe = launch(&description)?;
    let src = pipe
        .by_name("seamstream_out")
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Error::Pipeline("the output pipeline has no appsrc".into()))?;
    let info = &first.info;
    let out_info = gst_video::VideoInfo::builder(
        gst_video::VideoFormat::Rgba,
        first.frame.width() as u32,
        first.frame.height() as u32,
    )
    .fps(info.fps())
    .par(info.par())
    .colorimetry(&info.colorimetry())
    .build()
    .map_err(|e| gst_err("cannot describe the output frames", e))?;
    let caps = out_info
        .to_caps()
        .map_err(|e| gst_err("cannot make the output caps", e))?;
    src.set_caps(Some(&caps));
    src.set_format(gst::Format::Time);
    // Not `block`: a blocked push would wait forever on an output that has
    // failed; `push` waits for room itself and watches the bus meanwhile.
    src.set_block(false);
    src.set_max_bytes(
        OUTPUT_QUEUE_FRAMES * 4 * (first.frame.width() * first.frame.height()) as u64,
    );
    pipe.set_state(gst::State::Playing)
        .map_err(|_| match poll_bus(&pipe) {
            Some(Err(e)) => e,
            _ => Error::Pipeline(format!("the output `{description}` would not start")),
        })?;
    Ok((pipe, src))
}

/// Frames the output's appsrc may hold before `push` waits.
const OUTPUT_QUEUE_FRAMES: u64 = 2;

/// Pushes one buffer into the output, first waiting while its queue is full;
/// an error on the output bus meanwhile ends the wait with that error.
fn push(pipe: &gst::Pipeline, src: &gst_app::AppSrc, buffer: gst::Buffer) -> Result<()> {
    while src.current_level_bytes() >= src.max_bytes() {
        if let Some(Err(e)) = poll_bus(pipe) {
            return Err(e);
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    src.push_buffer(buffer).map_err(|_| match poll_bus(pipe) {
        Some(Err(e)) => e,
        _ => Error::Pipeline("the output pipeline stopped taking frames".into()),
    })?;
    Ok(())
}

/// Sends EOS into the output and waits until it has gone through (the muxer
/// has written its index) or an error says why not.
fn finish_output(out: Option<&(gst::Pipeline, gst_app::AppSrc)>) -> Result<()> {
    let Some((pipe, src)) = out else {
        return Ok(());
    };
    let _ = src.end_of_stream();
    let bus = pipe
        .bus()
        .ok_or_else(|| Error::Pipeline("the output pipeline has no bus".into()))?;
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_seconds(60),
        &[gst::MessageType::Error, gst::MessageType::Eos],
    );
    match msg.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::Eos(_)) => Ok(()),
        Some(gst::MessageView::Error(err)) => Err(Error::Pipeline(format!(
            "while finishing the output: {}",
            err.error()
        ))),
        _ => Err(Error::Pipeline(
            "the output did not finish within 60 s".into(),
        )),
    }
}
