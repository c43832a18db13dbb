//! The run loop: appsink → chain → appsrc, on three threads joined by bounded
//! channels (docs/DESIGN.md §1).
//!
//! - GStreamer's streaming thread (the appsink callback) copies each frame
//!   out of its buffer (for the GPU it hands over the buffer itself) and
//!   hands it to a bounded channel; for a file it waits when the channel is
//!   full (backpressure, nothing lost), for a live source it drops the oldest
//!   queued frame instead and counts it.
//! - A worker thread runs the chain. The GPU stage copies each input buffer
//!   straight into pinned memory and each result straight out of it into an
//!   output buffer: one host copy each way.
//! - The calling thread pushes results into the appsrc, builds the output
//!   pipeline when the first frame tells the output size, and watches both
//!   buses. A stop request (Ctrl-C) closes the intake, lets the frames
//!   already taken run through, then sends EOS so files are finalised. The
//!   stop does not rely on GStreamer passing an EOS event through the input,
//!   which is lost when it comes before the source has started.
//!
//! `intake` holds the input pipeline and the appsink callback, `worker` the
//! chain's thread, `output` the output pipeline and `progress` the bar;
//! [`run`] puts them together.

mod frames;
mod intake;
pub(crate) use frames::picture_from_buffer;
pub(crate) use output::{OutBuffers, buffer_from_picture, write_picture};
pub(crate) mod engine;
use engine::{Pixels, Timed};
mod output;
mod pixels;
mod progress;
pub mod report;
pub use progress::PROGRESS_LINES;
#[cfg(feature = "cuda")]
mod ring;
#[cfg(not(feature = "cuda"))]
#[path = "ring_absent.rs"]
mod ring;
mod worker;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::Duration;

use crossbeam_channel::{Receiver, Sender, bounded};
use gst::prelude::*;
use gstreamer as gst;

use super::audio::{Bridge, StreamReport};
use super::encode::EncoderChoice;
use super::outfile::{Ending, Kept};
use super::{Input, Output, TestSettings};
use crate::cuda::Gpu;
use crate::error::{Error, GstCause, Result};
use crate::gst::cuda::PipelineContext;
use crate::ops::Chain;
use crate::trace;
use engine::OutMemory;
use intake::Intake;
use output::Outlet;
use progress::{Progress, expected_frames};

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
    /// The encoder of a file output.
    pub encoder: EncoderChoice,
    /// Carry the input's audio to a file output (`--no-audio` clears it).
    pub audio: bool,
    /// One part of a job split in time (`--segment K/N`): only its frames
    /// go out, stamped from 0, video only.
    pub span: Option<super::parts::Span>,
    /// Told the frames written so far and the expected total, at most ten
    /// times a second and once at the end (the Python package's `progress`).
    pub on_progress: Option<OnProgress>,
    /// The most video frames to take from an input that is read, not made
    /// (a file, a stream, a camera), as ffmpeg's `-frames:v`: the run ends
    /// after them, and the audio with them. `None`: all of them. (Test
    /// sources, the sample and still pictures make `test.frames` frames.)
    pub frames: Option<u64>,
}

impl RunOptions {
    /// [`RunOptions::frames`] where it applies to the input.
    pub(super) fn frame_limit(&self) -> Option<u64> {
        match &self.input {
            Input::Sample | Input::Test { .. } | Input::Uri { still: true, .. } => None,
            // 0, as for test sources: all of them.
            _ => self.frames.filter(|&n| n > 0),
        }
    }
}

/// A caller's progress hook: told (frames done, frames expected).
#[derive(Clone)]
pub struct OnProgress(pub Arc<dyn Fn(u64, Option<u64>) + Send + Sync>);

impl std::fmt::Debug for OnProgress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("OnProgress")
    }
}

/// What happened, for the summary line and `--json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub frames_in: u64,
    /// Frames the output took (for a file, frames the encoder gave out).
    pub frames_out: u64,
    pub dropped: u64,
    /// Frames that came without a presentation time, or with one not after
    /// the frame before's: each was timed after the frame before
    /// ([`intake::Stamper`]).
    pub untimed: u64,
    pub seconds: f64,
    /// Milliseconds per frame in each stage: the host copy in (out of
    /// GStreamer's buffer; for the GPU, into pinned memory), the chain, and
    /// the host copy out (into the output buffer).
    pub ms_copy_in: f64,
    pub ms_chain: f64,
    pub ms_copy_out: f64,
    /// Where the frames came from and went: `system` memory (copied on the
    /// host), `cuda` memory (copied on the device), `pinned` (downloaded
    /// straight into the buffers handed on), or `mixed`.
    pub memory_in: &'static str,
    pub memory_out: &'static str,
    pub width_in: usize,
    pub height_in: usize,
    pub width_out: usize,
    pub height_out: usize,
    pub interrupted: bool,
    /// Whether the input was live (GStreamer's answer, or `--live`): frames
    /// were dropped when the chain fell behind, instead of waited for.
    pub live: bool,
    /// Every input stream, and what happened to it.
    pub streams: Vec<StreamReport>,
    /// Where a file output's frames are.
    pub kept: Option<Kept>,
    /// The input ended well before the length its container states (a
    /// file cut short): where its streams ended and that length, in
    /// seconds.
    pub ended_early: Option<EndedEarly>,
}

/// Where an input's streams ended (its video, and its audio where it has
/// any), against the length its container states.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct EndedEarly {
    pub end: f64,
    pub stated: f64,
}

/// An input whose streams end this many of its video frames, and at least
/// [`SHORT_SECONDS`], before its stated length ended early (a container's
/// rounding stays under it). Its audio counts where it has any, so that
/// audio that runs on after the last frame is no early end; where the
/// audio was not read (dropped), nothing is said.
pub const SHORT_FRAMES: f64 = 2.0;
pub const SHORT_SECONDS: f64 = 0.25;

/// Whether a run that read its input to the end found its video ending
/// early ([`SHORT_FRAMES`]); `None` where it stopped on purpose (a stop,
/// `--frames`, a part of a split job), the input is live, or either length
/// is unknown.
fn ended_early(
    opts: &RunOptions,
    summary: &Summary,
    (video_end_ns, audio): (u64, (usize, Option<gst::ClockTime>)),
    stated: Option<gst::ClockTime>,
    cut: bool,
) -> Option<EndedEarly> {
    if summary.interrupted || summary.live || cut || opts.span.is_some() {
        return None;
    }
    let frames = summary.frames_in;
    if frames == 0 || video_end_ns == 0 {
        return None;
    }
    let audio_end = match audio {
        (0, _) => 0,
        (_, Some(t)) => t.nseconds(),
        (_, None) => return None,
    };
    let video_end = video_end_ns as f64 / 1e9;
    let end = video_end_ns.max(audio_end) as f64 / 1e9;
    let stated = stated?.nseconds() as f64 / 1e9;
    let frame = video_end / frames as f64;
    (stated - end > (SHORT_FRAMES * frame).max(SHORT_SECONDS)).then_some(EndedEarly { end, stated })
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

enum Msg {
    /// Boxed: a YUV picture's planes make `Timed` several times the others.
    Frame(Box<Timed>),
    Eos,
    Failed(Error),
}

/// What the three threads share: the counts for the summary, and the flags
/// that end the intake and the run.
#[derive(Default)]
struct Shared {
    /// Frames the appsink callback handed on (or failed to).
    frames_in: AtomicU64,
    /// Of those, frames in CUDA memory, for the GPU stage to copy on the
    /// device.
    frames_in_cuda: AtomicU64,
    /// Where the GPU stage writes finished frames (as the worker found it).
    memory_out: std::sync::OnceLock<&'static str>,
    /// Frames a live intake dropped to make room.
    dropped: AtomicU64,
    /// Frames that came without a presentation time, or one not after the
    /// frame before's, and were timed after it ([`intake::Stamper`]).
    untimed: AtomicU64,
    /// Whether the intake has said that a live input keeps it waiting.
    said_waiting: std::sync::atomic::AtomicBool,
    /// Frames the worker took; with the dropped ones, the frames that came
    /// in (a frame that slips in behind a stop's end mark is not counted).
    taken: AtomicU64,
    /// Nanoseconds spent in each stage, as [`Summary`] reports them.
    copy_in_ns: AtomicU64,
    chain_ns: AtomicU64,
    copy_out_ns: AtomicU64,
    /// Set when the run ends, so that neither the appsink callback nor the
    /// worker waits on a channel nobody will serve again (the callback keeps
    /// its sender alive until the pipeline is gone).
    abort: AtomicBool,
    /// Set on a stop request: the callback takes no more frames.
    closing: AtomicBool,
    /// Set when the input's video was cut at `--frames`.
    cut: AtomicBool,
    /// Where the latest frame taken ends, in its stream's time (ns).
    video_end_ns: AtomicU64,
}

impl Shared {
    fn add(counter: &AtomicU64, time: Duration) {
        counter.fetch_add(time.as_nanos() as u64, Ordering::Relaxed);
    }

    /// The counts and the milliseconds per frame of each stage, into
    /// `summary`; `pushed` frames went into the output.
    fn report(&self, summary: &mut Summary, pushed: u64) {
        let load = |n: &AtomicU64| n.load(Ordering::Relaxed);
        let per = |ns: u64, n: u64| {
            if n > 0 {
                ns as f64 / n as f64 / 1e6
            } else {
                0.0
            }
        };
        summary.dropped = load(&self.dropped);
        summary.untimed = load(&self.untimed);
        summary.frames_in = load(&self.taken) + summary.dropped;
        summary.ms_copy_in = per(load(&self.copy_in_ns), load(&self.frames_in));
        summary.ms_chain = per(load(&self.chain_ns), load(&self.taken));
        summary.ms_copy_out = per(load(&self.copy_out_ns), pushed);
        summary.memory_in = match (load(&self.frames_in_cuda), load(&self.frames_in)) {
            (0, _) => "system",
            (cuda, all) if cuda == all => "cuda",
            _ => "mixed",
        };
        summary.memory_out = self.memory_out.get().copied().unwrap_or("system");
    }
}

fn gst_err(context: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    crate::gst::gst_call(context, e)
}

/// The first error or EOS on a bus, without waiting.
/// An element's error message as a typed error: the cause is read from
/// the error's domain and code, and for a failed flow (which GStreamer
/// reports only in its debug text) from the flow's name there.
pub(super) fn element_error(err: &gst::message::Error) -> Error {
    let element = err
        .src()
        .map(|s| s.path_string().to_string())
        .unwrap_or_else(|| "pipeline".into());
    let (error, debug) = (err.error(), err.debug().map(|d| d.to_string()));
    let flow = |name: &str| debug.as_deref().is_some_and(|d| d.contains(name));
    let cause = if error.matches(gst::StreamError::TypeNotFound) {
        GstCause::TypeNotFound
    } else if error.matches(gst::ResourceError::NoSpaceLeft) {
        GstCause::NoSpaceLeft
    } else if flow("not-negotiated") {
        GstCause::NotNegotiated
    } else if flow("not-linked") {
        GstCause::NotLinked
    } else {
        GstCause::Other
    };
    let debug = debug.map(|d| format!(" ({d})")).unwrap_or_default();
    Error::Gst {
        element,
        cause,
        message: format!("{error}{debug}"),
    }
}

fn poll_bus(pipeline: &gst::Pipeline) -> Option<std::result::Result<(), Error>> {
    let bus = pipeline.bus()?;
    while let Some(msg) = bus.pop_filtered(&[gst::MessageType::Error, gst::MessageType::Eos]) {
        match msg.view() {
            gst::MessageView::Error(err) => return Some(Err(element_error(err))),
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
    trace::mark("GStreamer started");
    let encoder = output::encoder(opts)?;
    opts.output.check_display()?;
    opts.input.check_available()?;
    // Claimed before the input starts: refused at once if it is the input
    // or another run is writing it; nothing existing is touched.
    let file = output::claim_file(opts)?;
    let bridge = Bridge::new(output::audio_dropped(opts));
    let chain_names = match chain.names() {
        names if names.is_empty() => "no operations".to_string(),
        names => names.join(" -> "),
    };
    let shared = Arc::new(Shared::default());
    let (frames_tx, frames_rx) = bounded(opts.queue.max(1));
    let (done_tx, done_rx) = bounded(opts.queue.max(1));
    // On the GPU, GStreamer's CUDA elements share the GPU's context, so that
    // NVIDIA's decoder hands its frames over in device memory.
    // `SEAMSTREAM_HOST_COPIES=1` takes the old path, through system memory
    // both ways, for comparison.
    let host_copies = std::env::var_os("SEAMSTREAM_HOST_COPIES").is_some_and(|v| v == "1");
    let cuda = match &opts.backend {
        Backend::Cuda(gpu) if !host_copies => PipelineContext::wrap(gpu).ok(),
        _ => None,
    };
    let memory = match host_copies {
        true => OutMemory::Slot,
        false => out_memory(opts, cuda.as_ref()),
    };
    let mut intake = Intake::open(
        opts,
        cuda.as_ref(),
        &bridge,
        (&frames_tx, &frames_rx),
        shared.clone(),
    )?;
    trace::mark("input opened");
    let worker = worker::spawn(opts, chain, memory, frames_rx, done_tx, shared.clone())?;
    intake.play()?;
    trace::mark("input playing");

    let mut summary = Summary {
        live: intake.live,
        ..Summary::default()
    };
    let location = file.as_ref().map(|f| f.location().to_path_buf());
    let mut out = Outlet::new(opts, location, encoder.as_ref(), &bridge, shared.clone());
    let result = deliver(&intake, &frames_tx, &done_rx, &stop, &mut out, &mut summary);
    let stated = intake.stated_length();
    // Finish the output file whatever happened, so frames already written
    // stay playable; an output that failed itself cannot finish.
    // After a cut at `--frames` the audio before the cut has gone on (the
    // demuxer gives it with or ahead of its video), and it ends there too.
    if result.is_err() || summary.interrupted || shared.cut.load(Ordering::Relaxed) {
        bridge.close();
    }
    trace::mark("last frame out");
    let finish = out.finish(&summary);
    trace::mark("output finished");
    shared.abort.store(true, Ordering::Relaxed);
    drop(done_rx);
    drop(frames_tx);
    // A panic in the chain is the run's failure, whatever the loop saw.
    let result = worker::join(worker).and(result);
    intake.stop();
    summary.frames_out = out.stop();
    trace::mark("pipelines stopped");
    summary.seconds = intake.started().elapsed().as_secs_f64();
    shared.report(&mut summary, out.pushed);
    if result.is_ok() {
        summary.ended_early = ended_early(
            opts,
            &summary,
            (shared.video_end_ns.load(Ordering::Relaxed), bridge.extent()),
            stated,
            shared.cut.load(Ordering::Relaxed),
        );
    }
    let result = result
        .and(finish)
        .and_then(|()| check_part(opts, &summary))
        .and_then(|()| check_some_frames(opts, &summary));
    let ending = match &result {
        _ if summary.frames_out == 0 => Ending::Empty,
        // A part file must hold its whole part, or be absent: a stopped
        // part stays in the partial file, where no join picks it up.
        Ok(()) if summary.interrupted && opts.span.is_some() => Ending::Failed,
        Ok(()) if summary.interrupted => Ending::Interrupted,
        Ok(()) => Ending::Complete,
        Err(_) => Ending::Failed,
    };
    summary.kept = file.map(|f| f.close(ending)).transpose()?;
    if let Err(e) = result {
        return Err(match &summary.kept {
            // What the file holds, read back: a full disk leaves fewer
            // frames than the muxer was given, or none that play.
            Some(Kept::Partial(p)) => match crate::gst::probe::readable_frames(p) {
                0 => {
                    let _ = std::fs::remove_file(p);
                    Error::Pipeline(format!(
                        "{e}\nNo frame reached the file in a form that plays, so it was removed; the output was not replaced."
                    ))
                }
                n => Error::Pipeline(format!(
                    "{e}\nThe {n} frames that reached the file before the failure are in `{}`; the output was not replaced.",
                    p.display()
                )),
            },
            _ => e,
        });
    }
    let turned = match &opts.input {
        crate::gst::Input::Uri {
            orientation: Some(o),
            ..
        } => format!(" (stored turned, {o}: shown upright)"),
        _ => String::new(),
    };
    let videos = intake.video_streams();
    let mut changed = videos.first().map(changed_on_the_way).unwrap_or_default();
    if summary.untimed > 0 {
        changed.push_str(&match summary.untimed {
            1 => "; 1 frame had no time, or the time of a frame before it: it was timed after the frame before".to_string(),
            n => format!("; {n} frames had no time, or the time of a frame before them: each was timed after the frame before"),
        });
    }
    summary.streams.push(StreamReport {
        kind: "video".into(),
        what: format!(
            "{}x{}{turned}{}",
            summary.width_in,
            summary.height_in,
            match intake.video_decoders().as_slice() {
                [] => String::new(),
                d => format!(", decoded by {}", d.join(" and ")),
            }
        ),
        action: format!(
            "{chain_names} -> {}{changed}",
            output::describe(opts, encoder.as_ref())
        ),
    });
    for caps in videos.iter().skip(1) {
        let size = caps
            .structure(0)
            .and_then(|s| Some((s.get::<i32>("width").ok()?, s.get::<i32>("height").ok()?)))
            .map_or("?".into(), |(w, h)| format!("{w}x{h}"));
        summary.streams.push(StreamReport {
            kind: "video".into(),
            what: size,
            action: "dropped (the first video stream is the one processed)".into(),
        });
    }
    summary.streams.extend(bridge.reports());
    Ok(summary)
}

/// What the run changes in a video stream of `caps` beyond its chain: the
/// chain works on 8-bit 4:2:0 (or RGBA) frames, progressive; said as
/// `; 10-bit made 8-bit, 4:4:4 made 4:2:0, interlaced (interleaved)
/// deinterlaced …` (empty when nothing changes).
fn changed_on_the_way(caps: &gst::Caps) -> String {
    let Some(s) = caps.structure(0) else {
        return String::new();
    };
    let mut notes = Vec::new();
    if let Ok(name) = s.get::<&str>("format") {
        let info = gstreamer_video::VideoFormatInfo::from_format(
            gstreamer_video::VideoFormat::from_string(name),
        );
        if info.format() != gstreamer_video::VideoFormat::Unknown {
            let depth = info.depth().first().copied().unwrap_or(8);
            if depth > 8 {
                notes.push(format!("{depth}-bit ({name}) made 8-bit"));
            }
            let sub = |v: &[u32]| v.get(1).copied().unwrap_or(0);
            let chroma = match (sub(info.w_sub()), sub(info.h_sub())) {
                _ if info.is_gray() || info.is_rgb() => None,
                (0, 0) => Some("4:4:4"),
                (1, 0) => Some("4:2:2"),
                (2, 0) => Some("4:1:1"),
                _ => None,
            };
            if let Some(c) = chroma {
                notes.push(format!("{c} ({name}) made 4:2:0"));
            }
        }
    }
    if let Ok(mode) = s.get::<&str>("interlace-mode")
        && mode != "progressive"
    {
        notes.push(if crate::gst::can_deinterlace() {
            format!("interlaced ({mode}) deinterlaced from its top fields, a frame per frame")
        } else {
            format!(
                "interlaced ({mode}) taken as progressive: GStreamer's deinterlace element is not installed (gstreamer1.0-plugins-good)"
            )
        });
    }
    if notes.is_empty() {
        String::new()
    } else {
        format!("; {}", notes.join(", "))
    }
}

/// Where the GPU stage writes finished frames: GStreamer's CUDA memory for
/// an output that takes it (null), else pinned memory handed on as the
/// buffer; the CPU backend makes its frames on the host.
fn out_memory(opts: &RunOptions, cuda: Option<&PipelineContext>) -> OutMemory {
    match (&opts.backend, cuda, &opts.output) {
        (Backend::Cpu, ..) => OutMemory::Slot,
        (_, Some(c), Output::Null) => OutMemory::Cuda(c.clone()),
        _ => OutMemory::Pinned,
    }
}

/// A run that ended by itself before any frame came in failed: its input
/// gave no video (a file cut before its first whole frame, a stream that
/// ended at once), and nothing was written.
fn check_some_frames(opts: &RunOptions, summary: &Summary) -> Result<()> {
    if summary.frames_in > 0 || summary.interrupted {
        return Ok(());
    }
    Err(Error::Pipeline(format!(
        "the input `{}` ended before its first video frame, so nothing was written; \
         is it a complete, playable video? (a file cut short ends so: try it in a player)",
        opts.input
    )))
}

/// A part of a split job that ended without being stopped must hold every
/// frame of its plan: a decoder that lost frames after the seek, or a file
/// that ends early, fails the part rather than leaving a gap in the join.
fn check_part(opts: &RunOptions, summary: &Summary) -> Result<()> {
    let Some(span) = &opts.span else {
        return Ok(());
    };
    if summary.interrupted || summary.frames_out == span.frames() {
        return Ok(());
    }
    let range = span.range();
    Err(Error::Pipeline(format!(
        "segment {}/{} should hold frames {}..{} of {} ({} frames), but {} came out; the part is incomplete and must not be joined",
        span.segment.index,
        span.segment.count,
        range.start,
        range.end,
        span.total,
        span.frames(),
        summary.frames_out
    )))
}

/// The calling thread's part: takes the worker's frames into the output
/// until the end of the stream, an error, or `stop` (then the intake closes
/// and an end mark goes in behind the frames already queued), watching both
/// pipelines meanwhile.
fn deliver(
    intake: &Intake,
    frames_tx: &Sender<Msg>,
    done_rx: &Receiver<Msg>,
    stop: &AtomicBool,
    out: &mut Outlet,
    summary: &mut Summary,
) -> Result<()> {
    let progress = Progress::new(intake.live, intake.opts.on_progress.clone());
    let mut marker = None;
    let mut warming = false;
    // A fault for the tests of split jobs: the process ends at once (no
    // clean-up at all, as if killed) after this many frames went out.
    let kill_after = crate::fault::after("SEAMSTREAM_INJECT_KILL_AFTER");
    let result = loop {
        if stop.load(Ordering::Relaxed) && !summary.interrupted {
            summary.interrupted = true;
            intake.close();
            marker = Some(Msg::Eos);
        }
        // The mark goes in as soon as there is room; the worker drains the
        // frames ahead of it meanwhile.
        if let Some(m) = marker.take()
            && let Err(crossbeam_channel::TrySendError::Full(m)) = frames_tx.try_send(m)
        {
            marker = Some(m);
        }
        if let Err(e) = intake.check() {
            break Err(e);
        }
        if let Err(e) = out.check(summary) {
            break Err(e);
        }
        let msg = match done_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            // The worker always ends with an end mark or an error; a closed
            // channel without one means it died (see the join in `run`).
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                break Err(Error::Pipeline(
                    "the chain thread stopped without finishing".into(),
                ));
            }
        };
        match msg {
            // A warm-up frame has filled the chain's memory; it goes no further.
            Msg::Frame(t) if t.warmup => {
                if !out.is_open() && !warming {
                    warming = true;
                    trace::mark("first warm-up frame through the chain");
                }
                continue;
            }
            Msg::Frame(t) => {
                if !out.is_open() {
                    trace::mark("first frame through the chain");
                    if let Err(e) = out.open(&t, summary) {
                        break Err(e);
                    }
                    progress.start(expected_frames(intake.opts, &intake.pipe, &t.info));
                }
                if let Err(e) = out.send(*t, summary) {
                    break Err(e);
                }
                progress.frame(intake.shared.dropped.load(Ordering::Relaxed));
                if kill_after.is_some_and(|n| out.pushed >= n) {
                    std::process::abort();
                }
            }
            Msg::Eos => break Ok(()),
            Msg::Failed(e) => break Err(e),
        }
    };
    progress.finish();
    result
}
