//! The run loop: appsink → chain → appsrc, on three threads joined by bounded
//! channels (DESIGN.md §1).
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

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender, bounded};
use gst::prelude::*;
use gst_video::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::audio::{Bridge, StreamReport};
use super::encode::{Encoder, EncoderChoice};
use super::outfile::{Ending, Kept, OutFile};
use super::{Container, Input, Output, TestSettings};
use crate::color::{Colorimetry, Matrix, Range};
use crate::cuda::stage::{Finished, Layout, Mapped, Stage, unpack_planes};
use crate::cuda::{DevFormat, Gpu};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};
use crate::frame::{Picture, PixelFormat, Yuv420};
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
    /// The encoder of a file output.
    pub encoder: EncoderChoice,
    /// Carry the input's audio to a file output (`--no-audio` clears it).
    pub audio: bool,
}

/// What happened, for the summary line and `--json`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Summary {
    pub frames_in: u64,
    /// Frames the output took (for a file, frames the encoder gave out).
    pub frames_out: u64,
    pub dropped: u64,
    pub seconds: f64,
    /// Milliseconds per frame in each stage: the host copy in (out of
    /// GStreamer's buffer; for the GPU, into pinned memory), the chain, and
    /// the host copy out (into the output buffer).
    pub ms_copy_in: f64,
    pub ms_chain: f64,
    pub ms_copy_out: f64,
    pub width_in: usize,
    pub height_in: usize,
    pub width_out: usize,
    pub height_out: usize,
    pub interrupted: bool,
    /// Every input stream, and what happened to it.
    pub streams: Vec<StreamReport>,
    /// Where a file output's frames are.
    pub kept: Option<Kept>,
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

/// A frame's pixels between the threads.
enum Pixels {
    /// Copied out of GStreamer (the CPU backend), or made by the chain.
    Picture(Picture),
    /// A GStreamer buffer laid out as the info says: an input frame for the
    /// GPU stage to copy from, or a finished one to push as it is.
    Buffer(gst::Buffer, gst_video::VideoInfo),
}

impl Pixels {
    fn width(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.width(),
            Pixels::Buffer(_, info) => info.width() as usize,
        }
    }

    fn height(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.height(),
            Pixels::Buffer(_, info) => info.height() as usize,
        }
    }
}

/// A frame with its timing and the caps it arrived with.
struct Timed {
    frame: Pixels,
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    info: gst_video::VideoInfo,
}

enum Msg {
    /// Boxed: a YUV picture's planes make `Timed` several times the others.
    Frame(Box<Timed>),
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
    /// Whether the output takes 4:2:0 YUV (an encoder or a null sink), so
    /// the GPU converts before the download.
    yuv_out: bool,
    stage: Option<Stage<Meta>>,
    /// Buffers for the GPU's finished frames.
    out: Option<OutBuffers>,
    /// Frames the GPU stage has given back and the worker not yet sent on.
    done: Vec<Timed>,
    /// The stage's copy-in time already counted.
    copied_in: Duration,
    /// Time spent copying frames out of pinned memory since last counted.
    copy_out: Duration,
}

impl Work {
    fn new(chain: Chain, backend: Backend, slots: usize, yuv_out: bool) -> Self {
        Work {
            chain,
            backend,
            slots,
            yuv_out,
            stage: None,
            out: None,
            done: Vec::new(),
            copied_in: Duration::ZERO,
            copy_out: Duration::ZERO,
        }
    }

    fn busy(&self) -> bool {
        self.stage.as_ref().is_some_and(|s| s.in_flight() > 0)
    }

    fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
        let Backend::Cuda(gpu) = &self.backend else {
            let Pixels::Picture(Picture::Frame(f)) = t.frame else {
                return Err(Error::Pipeline(
                    "the CPU backend takes RGBA frames; the input gave YUV".into(),
                ));
            };
            let frame = Pixels::Picture(Picture::Frame(self.chain.apply(f)?));
            return Ok(vec![Timed { frame, ..t }]);
        };
        let Pixels::Buffer(buffer, info) = &t.frame else {
            return Err(Error::Pipeline(
                "the GPU backend takes frames in GStreamer's buffers".into(),
            ));
        };
        let format = match info.format() {
            gst_video::VideoFormat::I420 => PixelFormat::I420,
            gst_video::VideoFormat::Nv12 => PixelFormat::Nv12,
            _ => PixelFormat::Rgba8,
        };
        let (w, h) = (info.width() as usize, info.height() as usize);
        if self.stage.is_none() {
            // Set up on the first frame, which tells the size and format.
            let (c, _) = yuv_colorimetry(info);
            let (ow, oh) = self.chain.output_size(w, h)?;
            // Encoders take 4:2:0 at even sizes (odd ones go out as RGBA and
            // GStreamer makes them 4:4:4).
            let yuv_out =
                (self.yuv_out && ow % 2 == 0 && oh % 2 == 0).then_some((PixelFormat::I420, c));
            let stage = Stage::with_layouts(
                gpu,
                &self.chain,
                w,
                h,
                Layout::of_format(format, c),
                yuv_out,
                self.slots,
            )?;
            let (ow, oh, layout) = stage.output();
            let yuv = matches!(layout, Layout::Yuv(..));
            self.out = Some(OutBuffers::new(output_info(&t.info, ow, oh, yuv)?)?);
            self.stage = Some(stage);
        }
        let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), info)
            .map_err(|e| gst_err("cannot map an input buffer", e))?;
        let mapped = Mapped {
            format,
            width: w,
            height: h,
            planes: planes(&vf)?,
        };
        let meta = (t.pts, t.duration, t.info.clone());
        if let Work {
            stage: Some(stage),
            out: Some(out),
            done,
            copy_out,
            ..
        } = self
        {
            stage.push_mapped(&mapped, meta, &mut |f, m| {
                Self::take(out, done, copy_out, f, m)
            })?;
        }
        Ok(std::mem::take(&mut self.done))
    }

    fn poll(&mut self) -> Result<Vec<Timed>> {
        self.collect(false)
    }

    /// Waits for every frame in the GPU stage; also gives back the frames
    /// a failed push had taken out of it.
    fn finish(&mut self) -> Result<Vec<Timed>> {
        self.collect(true)
    }

    /// The frames the GPU stage has finished (all of them, waiting, when
    /// `wait`), copied out of their slots.
    fn collect(&mut self, wait: bool) -> Result<Vec<Timed>> {
        if let Work {
            stage: Some(stage),
            out: Some(out),
            done,
            copy_out,
            ..
        } = self
        {
            let mut take = |f: Finished<'_>, m| Self::take(out, done, copy_out, f, m);
            if wait {
                stage.finish_with(&mut take)?;
            } else {
                stage.poll_with(&mut take)?;
            }
        }
        Ok(std::mem::take(&mut self.done))
    }

    /// Copies a finished frame out of its pinned buffer into an output
    /// buffer; a gray one into a picture, which the output thread makes RGBA
    /// as it does the CPU's.
    fn take(
        out: &OutBuffers,
        done: &mut Vec<Timed>,
        copy_out: &mut Duration,
        f: Finished<'_>,
        (pts, duration, info): Meta,
    ) -> Result<()> {
        let start = Instant::now();
        let frame = match f.layout {
            Layout::Frame(DevFormat::Gray) => Pixels::Picture(f.to_picture()?),
            _ => {
                let shape = f.layout.planes(f.width, f.height);
                let buffer = out.packed(f.bytes, shape, pts, duration)?;
                Pixels::Buffer(buffer, out.info.clone())
            }
        };
        *copy_out += start.elapsed();
        done.push(Timed {
            frame,
            pts,
            duration,
            info,
        });
        Ok(())
    }

    /// Host copy time since the last call: into pinned memory, and out of it.
    fn copy_times(&mut self) -> (Duration, Duration) {
        let copied_in = self
            .stage
            .as_ref()
            .map_or(Duration::ZERO, |s| s.copy_in_time());
        let since = copied_in.saturating_sub(self.copied_in);
        self.copied_in = copied_in;
        (since, std::mem::take(&mut self.copy_out))
    }
}

/// Buffers for the output frames, laid out as the output caps say, from a
/// pool that recycles them once the output is done with them: no
/// allocation, and no page faults on fresh memory, per frame.
struct OutBuffers {
    info: gst_video::VideoInfo,
    pool: gst::BufferPool,
}

impl OutBuffers {
    fn new(info: gst_video::VideoInfo) -> Result<Self> {
        let caps = info
            .to_caps()
            .map_err(|e| gst_err("cannot make the output caps", e))?;
        let size = u32::try_from(info.size())
            .map_err(|_| Error::Pipeline("the output frames are too large".into()))?;
        let pool = gst::BufferPool::new();
        let mut config = pool.config();
        // No upper bound: an encoder holds frames for its lookahead.
        config.set_params(Some(&caps), size, 0, 0);
        pool.set_config(config)
            .and_then(|()| pool.set_active(true))
            .map_err(|e| gst_err("cannot set up the output buffers", e))?;
        Ok(OutBuffers { info, pool })
    }

    /// A buffer stamped with `pts` and `duration` whose bytes `write` fills.
    fn fill(
        &self,
        pts: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
        write: impl FnOnce(&mut [u8]) -> Result<()>,
    ) -> Result<gst::Buffer> {
        let mut buffer = self
            .pool
            .acquire_buffer(None)
            .map_err(|e| gst_err("cannot get an output buffer", e))?;
        let b = buffer
            .get_mut()
            .ok_or_else(|| Error::Pipeline("an output buffer came shared".into()))?;
        b.set_pts(pts);
        b.set_duration(duration);
        let mut map = b
            .map_writable()
            .map_err(|e| gst_err("cannot write an output buffer", e))?;
        write(map.as_mut_slice())?;
        drop(map);
        Ok(buffer)
    }

    /// A buffer holding packed planes of `shape` (a [`Finished`] frame's
    /// bytes) at the output layout's offsets and strides.
    fn packed(
        &self,
        bytes: &[u8],
        shape: [(usize, usize); 3],
        pts: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
    ) -> Result<gst::Buffer> {
        let mut strides = [0usize; 3];
        for (s, &i) in strides.iter_mut().zip(self.info.stride()) {
            *s = i as usize;
        }
        self.fill(pts, duration, |dst| {
            unpack_planes(bytes, shape, dst, self.info.offset(), &strides)
        })
    }
}

impl Drop for OutBuffers {
    fn drop(&mut self) {
        // Buffers still out are freed as they come back.
        let _ = self.pool.set_active(false);
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
    let formats = match opts.backend {
        Backend::Cpu => "RGBA",
        Backend::Cuda(_) => "{ I420, NV12, RGBA }",
    };
    let description = opts.input.launch_as(&opts.test, formats);
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
    if e.to_string().contains("Could not determine type of stream") {
        return Error::Pipeline(format!(
            "the input `{input}` is not a video file GStreamer recognises (its type could not \
             be determined); is it a complete video file?"
        ));
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

/// The YUV colorimetry for frames described by `info`: the input's own when
/// it is YUV, else BT.709 limited range (what encoders expect), as our type
/// and as GStreamer's, so that converted bytes and caps agree.
fn yuv_colorimetry(info: &gst_video::VideoInfo) -> (Colorimetry, gst_video::VideoColorimetry) {
    let c = info.colorimetry();
    if info.format_info().is_yuv() {
        let matrix = match c.matrix() {
            gst_video::VideoColorMatrix::Bt601 => Matrix::Bt601,
            _ => Matrix::Bt709,
        };
        let range = match c.range() {
            gst_video::VideoColorRange::Range0_255 => Range::Full,
            _ => Range::Limited,
        };
        (Colorimetry { matrix, range }, c)
    } else {
        let bt709 = "bt709".parse().unwrap_or_else(|_| info.colorimetry());
        (Colorimetry::default(), bt709)
    }
}

/// A mapped frame's planes with their strides in bytes, for the GPU stage
/// to copy from.
fn planes<'a>(vf: &'a gst_video::VideoFrameRef<&gst::BufferRef>) -> Result<[(&'a [u8], usize); 3]> {
    let mut planes: [(&[u8], usize); 3] = [(&[], 0); 3];
    for (i, p) in planes.iter_mut().enumerate().take(vf.n_planes() as usize) {
        let data = vf
            .plane_data(i as u32)
            .map_err(|e| gst_err("cannot read an input buffer", e))?;
        *p = (data, vf.plane_stride()[i] as usize);
    }
    Ok(planes)
}

/// Copies a buffer into a picture (the one copy on the streaming thread):
/// RGBA for the CPU backend; RGBA, I420 or NV12 for the GPU, which converts
/// YUV itself.
fn picture_from_buffer(buffer: &gst::BufferRef, info: &gst_video::VideoInfo) -> Result<Picture> {
    let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer, info)
        .map_err(|e| gst_err("cannot map an input buffer", e))?;
    let (w, h) = (info.width() as usize, info.height() as usize);
    let plane = |i: u32| -> Result<(&[u8], usize)> {
        let data = vf
            .plane_data(i)
            .map_err(|e| gst_err("cannot read an input buffer", e))?;
        Ok((data, vf.plane_stride()[i as usize] as usize))
    };
    let copy_rows = |dst: &mut Plane<u8>, (data, stride): (&[u8], usize)| {
        let n = dst.width();
        for (y, row) in dst.rows_mut().enumerate() {
            row.copy_from_slice(&data[y * stride..y * stride + n]);
        }
    };
    let format = match info.format() {
        gst_video::VideoFormat::I420 => PixelFormat::I420,
        gst_video::VideoFormat::Nv12 => PixelFormat::Nv12,
        _ => {
            // One allocation per frame on the CPU path: the chain owns its frames.
            let (data, stride) = plane(0)?;
            let mut p = Plane::new(w, h, [0u8; 4]);
            for (y, row) in p.rows_mut().enumerate() {
                row.as_flattened_mut()
                    .copy_from_slice(&data[y * stride..y * stride + 4 * w]);
            }
            return Ok(Picture::Frame(Frame::Rgba(p)));
        }
    };
    let mut yuv = Yuv420::new(format, w, h)?;
    copy_rows(&mut yuv.y, plane(0)?);
    copy_rows(&mut yuv.u, plane(1)?);
    if format == PixelFormat::I420 {
        copy_rows(&mut yuv.v, plane(2)?);
    }
    Ok(Picture::Yuv(yuv))
}

/// The caps of the output frames, `w`×`h` in I420 (`yuv`) or RGBA, for
/// input frames described by `info`.
fn output_info(
    info: &gst_video::VideoInfo,
    w: usize,
    h: usize,
    yuv: bool,
) -> Result<gst_video::VideoInfo> {
    let (format, colorimetry) = if yuv {
        (gst_video::VideoFormat::I420, yuv_colorimetry(info).1)
    } else {
        (gst_video::VideoFormat::Rgba, info.colorimetry())
    };
    gst_video::VideoInfo::builder(format, w as u32, h as u32)
        .fps(info.fps())
        .par(info.par())
        .colorimetry(&colorimetry)
        .build()
        .map_err(|e| gst_err("cannot describe the output frames", e))
}

/// A GStreamer buffer holding `picture` in the output layout, from the pool.
fn buffer_from_picture(
    picture: &Picture,
    out: &OutBuffers,
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
) -> Result<gst::Buffer> {
    let info = &out.info;
    out.fill(pts, duration, |b| {
        // Written row by row straight from the picture; RGBA rows are packed.
        match picture {
            Picture::Frame(Frame::Rgba(p)) => {
                for (o, y) in b
                    .chunks_exact_mut((4 * p.width()).max(1))
                    .zip(0..p.height())
                {
                    o.copy_from_slice(p.row(y).as_flattened());
                }
            }
            Picture::Frame(Frame::Gray(p)) => {
                for (o, y) in b
                    .chunks_exact_mut((4 * p.width()).max(1))
                    .zip(0..p.height())
                {
                    for (px, &v) in o.chunks_exact_mut(4).zip(p.row(y)) {
                        px.copy_from_slice(&[v, v, v, 255]);
                    }
                }
            }
            Picture::Yuv(yuv) => {
                // Planes at GStreamer's offsets and strides for these caps.
                b.fill(0);
                for (i, p) in [&yuv.y, &yuv.u, &yuv.v]
                    .into_iter()
                    .enumerate()
                    .take(info.n_planes() as usize)
                {
                    let (off, stride) = (info.offset()[i], info.stride()[i] as usize);
                    for y in 0..p.height() {
                        let row = p.row(y);
                        b[off + y * stride..off + y * stride + row.len()].copy_from_slice(row);
                    }
                }
            }
        }
        Ok(())
    })
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
    let encoder = match &opts.output {
        Output::File { container, .. } => opts.encoder.resolve(*container)?,
        _ if opts.encoder != EncoderChoice::default() => {
            return Err(Error::Unsupported(
                "--codec, --crf, --bitrate and --preset apply to file outputs (.mp4, .mkv, .webm)"
                    .into(),
            ));
        }
        _ => None,
    };
    opts.output.check_display()?;
    let live = opts.input.is_live(&opts.test);
    opts.input.check_available()?;
    // Claimed before the input starts: refused at once if it is the input
    // or another run is writing it; nothing existing is touched.
    let file = match &opts.output {
        Output::File { path, container } => Some(OutFile::open(
            path,
            *container,
            opts.input.local_path().as_deref(),
        )?),
        _ => None,
    };
    let drop_audio = match &opts.output {
        _ if !opts.audio => Some("--no-audio".to_string()),
        Output::File {
            container: Container::Y4m,
            ..
        } => Some(".y4m holds video only".into()),
        Output::File { .. } => None,
        _ => Some("the output is not a file".into()),
    };
    let bridge = Bridge::new(drop_audio);
    let chain_names = match chain.names() {
        names if names.is_empty() => "no operations".to_string(),
        names => names.join(" -> "),
    };
    let in_pipe = launch_input(opts)?;
    // Set once the decoder has shown every stream: with none of them video,
    // the run ends there (an audio file's sound would otherwise flow on).
    let all_streams_known = Arc::new(AtomicBool::new(false));
    if let Some(decoder) = in_pipe.by_name(super::DECODER) {
        bridge.attach(&in_pipe, &decoder);
        let known = all_streams_known.clone();
        decoder.connect_no_more_pads(move |_| known.store(true, Ordering::Relaxed));
    }
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
    let copy_out_ns = Arc::new(AtomicU64::new(0));
    let frames_in = Arc::new(AtomicU64::new(0));
    // The CPU chain takes frames copied out; the GPU stage copies from
    // GStreamer's buffer itself, straight into pinned memory.
    let copy_frames = matches!(opts.backend, Backend::Cpu);

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
                        let frame = if copy_frames {
                            Pixels::Picture(picture_from_buffer(buffer, &info)?)
                        } else {
                            let owned = sample.buffer_owned().ok_or_else(|| {
                                Error::Pipeline("an input sample has no buffer".into())
                            })?;
                            Pixels::Buffer(owned, info.clone())
                        };
                        Ok(Timed {
                            frame,
                            pts: running_time(&sample, buffer.pts()),
                            duration: buffer.duration(),
                            info,
                        })
                    })();
                    copy_in_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                    frames_in.fetch_add(1, Ordering::Relaxed);
                    let msg = match msg {
                        Ok(t) => Msg::Frame(Box::new(t)),
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
        let (copy_in_ns, copy_out_ns) = (copy_in_ns.clone(), copy_out_ns.clone());
        let backend = opts.backend.clone();
        let slots = opts.slots;
        let yuv_out = matches!(
            opts.output,
            Output::Null
                | Output::File {
                    container: super::Container::Mp4 | super::Container::Mkv,
                    ..
                }
        );
        std::thread::Builder::new()
            .name("seamstream-chain".into())
            .spawn(move || {
                let mut work = Work::new(chain, backend, slots, yuv_out);
                // A fault for the tests: the chain thread panics after N frames.
                let panic_after: Option<u64> = std::env::var("SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER")
                    .ok()
                    .and_then(|v| v.parse().ok());
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
                            let n = taken.fetch_add(1, Ordering::Relaxed);
                            if panic_after == Some(n) {
                                panic!("injected by SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER={n}");
                            }
                            (work.push(*t), None)
                        }
                        Some(other) => (work.finish(), Some(other)),
                        None => (work.poll(), None),
                    };
                    // The host copies in and out of pinned memory count as
                    // copies, not as the chain.
                    let (copied_in, copied_out) = work.copy_times();
                    let chain = start.elapsed().saturating_sub(copied_in + copied_out);
                    chain_ns.fetch_add(chain.as_nanos() as u64, Ordering::Relaxed);
                    copy_in_ns.fetch_add(copied_in.as_nanos() as u64, Ordering::Relaxed);
                    copy_out_ns.fetch_add(copied_out.as_nanos() as u64, Ordering::Relaxed);
                    let frames = |f: Vec<Timed>| f.into_iter().map(|t| Msg::Frame(Box::new(t)));
                    let mut msgs: Vec<Msg> = match outs {
                        Ok(f) => frames(f).collect(),
                        Err(e) => {
                            // Frames the GPU finished before the failure are
                            // still written, if the ring can give them back.
                            let mut m: Vec<Msg> =
                                frames(work.finish().unwrap_or_default()).collect();
                            m.push(Msg::Failed(e));
                            m
                        }
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
    let mut out_pipe: Option<OutPipe> = None;
    // Set when the output pipeline itself failed: it will never finish.
    let mut out_failed = false;
    let mut out_buffers: Option<OutBuffers> = None;
    let mut marker = None;
    let mut pushed = 0u64;
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
        if all_streams_known.load(Ordering::Relaxed) && frames_in.load(Ordering::Relaxed) == 0 {
            let seen = streams.lock().map(|s| s.clone()).unwrap_or_default();
            if !seen.iter().any(|c| c.starts_with("video/x-raw")) {
                break Err(not_video(&opts.input, &seen));
            }
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
        if let Some(o) = &out_pipe
            && let Some(Err(e)) = poll_bus(&o.pipe)
        {
            out_failed = true;
            break Err(explain_output_error(e, &summary, &opts.output));
        }
        let msg = match out_rx.recv_timeout(Duration::from_millis(50)) {
            Ok(m) => m,
            Err(crossbeam_channel::RecvTimeoutError::Timeout) => continue,
            // The worker always ends with an end mark or an error; a closed
            // channel without one means it died (see the join below).
            Err(crossbeam_channel::RecvTimeoutError::Disconnected) => {
                break Err(Error::Pipeline(
                    "the chain thread stopped without finishing".into(),
                ));
            }
        };
        match msg {
            Msg::Frame(t) => {
                if out_pipe.is_none() {
                    summary.width_in = t.info.width() as usize;
                    summary.height_in = t.info.height() as usize;
                    summary.width_out = t.frame.width();
                    summary.height_out = t.frame.height();
                    let info = match &t.frame {
                        Pixels::Buffer(_, i) => Ok(i.clone()),
                        Pixels::Picture(p) => output_info(
                            &t.info,
                            p.width(),
                            p.height(),
                            matches!(p, Picture::Yuv(_)),
                        ),
                    };
                    let opened = info.and_then(|i| {
                        let location = file.as_ref().map(OutFile::location);
                        let o = open_output(opts, &t, &i, location, encoder.as_ref(), &bridge)?;
                        Ok((o, OutBuffers::new(i)?))
                    });
                    match opened {
                        Ok((o, b)) => {
                            out_pipe = Some(o);
                            out_buffers = Some(b);
                        }
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
                let Some(out) = &out_buffers else {
                    break Err(Error::Pipeline("the output was not set up".into()));
                };
                let Timed {
                    frame,
                    pts,
                    duration,
                    ..
                } = *t;
                let buffer = match frame {
                    // Filled by the worker straight from pinned memory.
                    Pixels::Buffer(b, _) => b,
                    Pixels::Picture(p) => match buffer_from_picture(&p, out, pts, duration) {
                        Ok(b) => b,
                        Err(e) => break Err(e),
                    },
                };
                copy_out_ns.fetch_add(start.elapsed().as_nanos() as u64, Ordering::Relaxed);
                if let Some(o) = &out_pipe
                    && let Err(e) = push(&o.pipe, &o.src, buffer)
                {
                    out_failed = true;
                    break Err(explain_output_error(e, &summary, &opts.output));
                }
                pushed += 1;
                progress.frame(dropped.load(Ordering::Relaxed));
            }
            Msg::Eos => break Ok(()),
            Msg::Failed(e) => break Err(e),
        }
    };
    // Finish the output file whatever happened, so frames already written
    // stay playable; an output that failed itself cannot finish.
    progress.finish();
    if result.is_err() || summary.interrupted {
        bridge.close();
    }
    let finish = if out_failed {
        Ok(())
    } else {
        finish_output(out_pipe.as_ref())
            .map_err(|e| explain_output_error(e, &summary, &opts.output))
    };
    abort.store(true, Ordering::Relaxed);
    drop(out_rx);
    drop(marker_tx);
    // A panic in the chain is the run's failure, whatever the loop saw.
    let result = match worker.join() {
        Err(payload) => Err(Error::Pipeline(format!(
            "the chain thread (seamstream-chain) panicked: {}",
            panic_message(payload.as_ref())
        ))),
        Ok(()) => result,
    };
    let _ = in_pipe.set_state(gst::State::Null);
    if let Some(o) = &out_pipe {
        let _ = o.pipe.set_state(gst::State::Null);
        summary.frames_out = o.accepted.load(Ordering::Relaxed);
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
    summary.ms_copy_out = per(copy_out_ns.load(Ordering::Relaxed), pushed);
    let result = result.and(finish);
    let ending = match &result {
        _ if summary.frames_out == 0 => Ending::Empty,
        Ok(()) if summary.interrupted => Ending::Interrupted,
        Ok(()) => Ending::Complete,
        Err(_) => Ending::Failed,
    };
    summary.kept = file.map(|f| f.close(ending)).transpose()?;
    if let Err(e) = result {
        return Err(match &summary.kept {
            Some(Kept::Partial(p)) => Error::Pipeline(format!(
                "{e}\nThe {} frames written before the failure are in `{}`; the output was not replaced.",
                summary.frames_out,
                p.display()
            )),
            _ => e,
        });
    }
    summary.streams.push(StreamReport {
        kind: "video".into(),
        what: format!("{}x{}", summary.width_in, summary.height_in),
        action: match (&opts.output, &encoder) {
            (_, Some(e)) => format!("{chain_names} -> {}", e.describe()),
            (Output::File { .. }, None) => format!("{chain_names} -> raw y4m"),
            (Output::Fragment(f), _) => format!("{chain_names} -> {}", crate::error::quoted(f)),
            (Output::Display, _) => format!("{chain_names} -> display"),
            (_, _) => format!("{chain_names} -> null"),
        },
    });
    summary.streams.extend(bridge.reports());
    Ok(summary)
}

/// An output error restated where GStreamer's words hide the cause.
fn explain_output_error(e: Error, summary: &Summary, output: &Output) -> Error {
    let text = e.to_string();
    if text.contains("not-negotiated") {
        return Error::Pipeline(format!(
            "the output would not take the chain's {}x{} frames (its elements agreed on no \
             format and size: not-negotiated); check the caps in the output, or change the \
             chain's output size",
            summary.width_out, summary.height_out
        ));
    }
    if text.contains("No space left")
        && let Output::File { path, .. } = output
    {
        return Error::Write {
            path: path.clone(),
            reason: format!("the disk is full ({text})"),
        };
    }
    e
}

/// A timestamp of `sample`'s segment as running time, the clock both
/// output pipelines share: a demuxer that starts its segment past zero
/// (an MP4 edit list) shifts video and audio alike, and the output keeps
/// them in step from zero.
pub(crate) fn running_time(
    sample: &gst::Sample,
    ts: Option<gst::ClockTime>,
) -> Option<gst::ClockTime> {
    let ts = ts?;
    match sample
        .segment()
        .and_then(|s| s.downcast_ref::<gst::ClockTime>())
    {
        Some(segment) => segment.to_running_time(ts).or(Some(ts)),
        None => Some(ts),
    }
}

/// A panic's message, as `panic!` gave it.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
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

/// The output pipeline, running.
struct OutPipe {
    pipe: gst::Pipeline,
    src: gst_app::AppSrc,
    /// Frames the output has taken: those its encoder gave out, or that
    /// reached its sink.
    accepted: Arc<AtomicU64>,
}

fn open_output(
    opts: &RunOptions,
    first: &Timed,
    out_info: &gst_video::VideoInfo,
    location: Option<&std::path::Path>,
    encoder: Option<&Encoder>,
    bridge: &Bridge,
) -> Result<OutPipe> {
    let (w, h) = (first.frame.width(), first.frame.height());
    if let Output::File {
        container: Container::Y4m,
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
    if let Some(e) = encoder {
        e.check(w, h)?;
    }
    let description = opts.output.launch(w, h, location, encoder);
    let pipe = launch(&description)?;
    let src = pipe
        .by_name("seamstream_out")
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Error::Pipeline("the output pipeline has no appsrc".into()))?;
    let caps = out_info
        .to_caps()
        .map_err(|e| gst_err("cannot make the output caps", e))?;
    src.set_caps(Some(&caps));
    src.set_format(gst::Format::Time);
    // Not `block`: a blocked push would wait forever on an output that has
    // failed; `push` waits for room itself and watches the bus meanwhile.
    src.set_block(false);
    src.set_max_bytes(OUTPUT_QUEUE_FRAMES * out_info.size() as u64);
    if let Output::File { container, .. } = &opts.output
        && *container != Container::Y4m
    {
        bridge.connect_output(&pipe, *container)?;
    }
    let accepted = count_accepted(&pipe)?;
    pipe.set_state(gst::State::Playing)
        .map_err(|_| match poll_bus(&pipe) {
            Some(Err(e)) => e,
            _ => Error::Pipeline(format!("the output `{description}` would not start")),
        })?;
    Ok(OutPipe {
        pipe,
        src,
        accepted,
    })
}

/// Counts the frames the output takes: the buffers out of its encoder
/// (`seamstream_enc`), or else into its sinks.
fn count_accepted(pipe: &gst::Pipeline) -> Result<Arc<AtomicU64>> {
    let count = Arc::new(AtomicU64::new(0));
    let pads: Vec<gst::Pad> = match pipe.by_name("seamstream_enc") {
        Some(enc) => enc.static_pad("src").into_iter().collect(),
        None => pipe
            .iterate_sinks()
            .into_iter()
            .flatten()
            .filter_map(|sink| sink.static_pad("sink"))
            .collect(),
    };
    if pads.is_empty() {
        return Err(Error::Pipeline(
            "the output has no sink to count its frames at".into(),
        ));
    }
    for pad in pads {
        let count = count.clone();
        pad.add_probe(gst::PadProbeType::BUFFER, move |_, _| {
            count.fetch_add(1, Ordering::Relaxed);
            gst::PadProbeReturn::Ok
        });
    }
    Ok(count)
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

/// How long the output may take to finish after its last frame.
const FINISH_TIMEOUT: Duration = Duration::from_secs(60);

/// Sends EOS into the output and waits until it has gone through (the muxer
/// has written its index) or an error says why not. Audio streams end on
/// their own, or were closed by the caller.
fn finish_output(out: Option<&OutPipe>) -> Result<()> {
    let Some(o) = out else {
        return Ok(());
    };
    let _ = o.src.end_of_stream();
    let bus = o
        .pipe
        .bus()
        .ok_or_else(|| Error::Pipeline("the output pipeline has no bus".into()))?;
    let msg = bus.timed_pop_filtered(
        gst::ClockTime::from_nseconds(FINISH_TIMEOUT.as_nanos() as u64),
        &[gst::MessageType::Error, gst::MessageType::Eos],
    );
    match msg.as_ref().map(|m| m.view()) {
        Some(gst::MessageView::Eos(_)) => Ok(()),
        Some(gst::MessageView::Error(err)) => Err(Error::Pipeline(format!(
            "while finishing the output, {}: {}",
            err.src()
                .map(|s| s.name().to_string())
                .unwrap_or_else(|| "the output".into()),
            err.error()
        ))),
        _ => Err(Error::Pipeline(format!(
            "the output did not finish within {} s",
            FINISH_TIMEOUT.as_secs()
        ))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::Colorimetry;
    use crate::cuda::stage::{pack_planes, write_packed, write_yuv};

    /// Bytes from a seeded generator (xorshift).
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        (0..n)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 24) as u8
            })
            .collect()
    }

    const FORMATS: [(gst_video::VideoFormat, PixelFormat); 3] = [
        (gst_video::VideoFormat::Nv12, PixelFormat::Nv12),
        (gst_video::VideoFormat::I420, PixelFormat::I420),
        (gst_video::VideoFormat::Rgba, PixelFormat::Rgba8),
    ];

    /// Input buffers of noise, with GStreamer's own layout and with a video
    /// meta giving wider strides (as decoders do), at odd and even sizes:
    /// the GPU path's one copy (mapped planes into the pinned buffer) gives
    /// the bytes of the old two (into a picture, then into the buffer).
    #[test]
    fn mapped_input_planes_pack_to_the_old_paths_bytes() {
        gst::init().unwrap();
        for (w, h) in [(1usize, 1usize), (5, 3), (321, 241), (64, 48)] {
            for (gf, pf) in FORMATS {
                let info = gst_video::VideoInfo::builder(gf, w as u32, h as u32)
                    .build()
                    .unwrap();
                for padded in [false, true] {
                    let n = info.n_planes() as usize;
                    let mut strides: Vec<i32> = info.stride()[..n].to_vec();
                    let mut offsets: Vec<usize> = info.offset()[..n].to_vec();
                    let mut size = info.size();
                    if padded {
                        size = 0;
                        for i in 0..n {
                            strides[i] += 8 * (i as i32 + 1);
                            offsets[i] = size;
                            let rows = if i == 0 { h } else { h.div_ceil(2) };
                            size += strides[i] as usize * rows;
                        }
                    }
                    let mut buffer = gst::Buffer::from_mut_slice(noise(size, (w * h) as u64));
                    if padded {
                        let b = buffer.get_mut().unwrap();
                        gst_video::VideoMeta::add_full(
                            b,
                            gst_video::VideoFrameFlags::empty(),
                            gf,
                            w as u32,
                            h as u32,
                            &offsets,
                            &strides,
                        )
                        .unwrap();
                    }
                    let layout = Layout::of_format(pf, Colorimetry::default());
                    let mut old = vec![0u8; layout.bytes(w, h).unwrap()];
                    match picture_from_buffer(buffer.as_ref(), &info).unwrap() {
                        Picture::Frame(f) => write_packed(&f, &mut old),
                        Picture::Yuv(y) => write_yuv(&y, &mut old),
                    }
                    let vf =
                        gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), &info)
                            .unwrap();
                    let mut new = vec![0x55u8; old.len()];
                    pack_planes(&planes(&vf).unwrap(), layout.planes(w, h), &mut new).unwrap();
                    assert!(new == old, "{gf:?} {w}x{h} padded {padded}: bytes differ");
                }
            }
        }
    }

    /// Output buffers from the pool, the first one dirtied and given back
    /// so that the next reuses it: a finished frame's packed planes written
    /// in give the old path's bytes (a zeroed buffer with each plane's rows
    /// at the caps' offsets and strides), I420 with padded rows included.
    #[test]
    fn output_buffers_hold_the_old_paths_bytes() {
        gst::init().unwrap();
        let pts = Some(gst::ClockTime::from_mseconds(40));
        let duration = Some(gst::ClockTime::from_mseconds(20));
        for (w, h) in [(2, 2), (322, 242), (64, 48), (5, 3)] {
            for yuv in [true, false] {
                if yuv && (w % 2 == 1 || h % 2 == 1) {
                    continue;
                }
                let input = gst_video::VideoInfo::builder(gst_video::VideoFormat::Nv12, 8, 8)
                    .build()
                    .unwrap();
                let out = OutBuffers::new(output_info(&input, w, h, yuv).unwrap()).unwrap();
                let dirty = out
                    .fill(None, None, |b| {
                        b.fill(0xAB);
                        Ok(())
                    })
                    .unwrap();
                drop(dirty);
                let (picture, packed) = if yuv {
                    let mut y = Yuv420::new(PixelFormat::I420, w, h).unwrap();
                    for (k, p) in [&mut y.y, &mut y.u, &mut y.v].into_iter().enumerate() {
                        let bytes = noise(p.width() * p.height(), k as u64 + 3);
                        *p = Plane::from_vec(p.width(), p.height(), bytes).unwrap();
                    }
                    let mut packed = vec![
                        0u8;
                        Layout::Yuv(PixelFormat::I420, Colorimetry::default())
                            .bytes(w, h)
                            .unwrap()
                    ];
                    write_yuv(&y, &mut packed);
                    (Picture::Yuv(y), packed)
                } else {
                    let px = noise(4 * w * h, 9);
                    let p = Plane::from_vec(
                        w,
                        h,
                        px.chunks_exact(4)
                            .map(|c| [c[0], c[1], c[2], c[3]])
                            .collect(),
                    )
                    .unwrap();
                    (Picture::Frame(Frame::Rgba(p)), px)
                };
                let layout = match picture {
                    Picture::Yuv(_) => Layout::Yuv(PixelFormat::I420, Colorimetry::default()),
                    Picture::Frame(_) => Layout::Frame(DevFormat::Rgba),
                };
                let new = out
                    .packed(&packed, layout.planes(w, h), pts, duration)
                    .unwrap();
                let old = buffer_from_picture(&picture, &out, pts, duration).unwrap();
                assert_eq!((new.pts(), new.duration()), (pts, duration));
                assert_eq!(new.size(), out.info.size());
                let (new, old) = (new.map_readable().unwrap(), old.map_readable().unwrap());
                assert!(
                    new.as_slice() == old.as_slice(),
                    "{w}x{h} yuv {yuv}: output bytes differ"
                );
            }
        }
    }
}
