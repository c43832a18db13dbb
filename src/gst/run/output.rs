//! The output side of a run, on the calling thread: the output pipeline,
//! built when the first frame tells the size, the buffers frames go out in,
//! and the end of the output (EOS through to the muxer), with the errors
//! restated where GStreamer's words hide the cause.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::frames::yuv_colorimetry;
use super::{Pixels, RunOptions, Shared, Summary, Timed, element_error, gst_err, poll_bus};
use crate::error::{Error, GstCause, Result};
use crate::frame::{Frame, Picture, PixelFormat};
use crate::gst::audio::Bridge;
use crate::gst::encode::{Encoder, EncoderChoice};
use crate::gst::outfile::OutFile;
use crate::gst::{Container, Output};
use crate::planes::unpack_planes;

/// The encoder a file output uses; an error where encoder options were
/// given for another output.
pub(super) fn encoder(opts: &RunOptions) -> Result<Option<Encoder>> {
    match &opts.output {
        Output::File { container, .. } => opts.encoder.resolve(*container),
        _ if opts.encoder != EncoderChoice::default() => Err(Error::Unsupported(
            "--codec, --crf, --bitrate and --preset apply to file outputs (.mp4, .mkv, .webm)"
                .into(),
        )),
        _ => Ok(None),
    }
}

/// Claims a file output's path (see [`OutFile::open`]).
pub(super) fn claim_file(opts: &RunOptions) -> Result<Option<OutFile>> {
    match &opts.output {
        Output::File { path, container } => Ok(Some(OutFile::open(
            path,
            *container,
            opts.input.local_path().as_deref(),
        )?)),
        _ => Ok(None),
    }
}

/// Why the input's audio goes nowhere, if it does.
pub(super) fn audio_dropped(opts: &RunOptions) -> Option<String> {
    match &opts.output {
        _ if !opts.audio => Some("--no-audio".to_string()),
        _ if opts.span.is_some() => Some(
            "a part of a split job is video only; `seamstream join --audio-from` adds the audio"
                .into(),
        ),
        Output::File {
            container: Container::Y4m,
            ..
        } => Some(".y4m holds video only".into()),
        Output::File { .. } => None,
        _ => Some("the output is not a file".into()),
    }
}

/// Where the video goes, for the summary's stream report.
pub(super) fn describe(opts: &RunOptions, encoder: Option<&Encoder>) -> String {
    match (&opts.output, encoder) {
        (_, Some(e)) => e.describe(),
        (Output::File { .. }, None) => "raw y4m".into(),
        (Output::Fragment(f), _) => crate::error::quoted(f),
        (Output::Display, _) => "display".into(),
        (_, _) => "null".into(),
    }
}

/// The output of a run, as the calling thread feeds it.
pub(super) struct Outlet<'a> {
    opts: &'a RunOptions,
    /// Where a file output writes.
    location: Option<PathBuf>,
    encoder: Option<&'a Encoder>,
    bridge: &'a Bridge,
    shared: Arc<Shared>,
    pipe: Option<OutPipe>,
    buffers: Option<OutBuffers>,
    /// Set when the output pipeline itself failed: it will never finish.
    failed: bool,
    /// Frames pushed into the output.
    pub pushed: u64,
}

impl<'a> Outlet<'a> {
    pub fn new(
        opts: &'a RunOptions,
        location: Option<PathBuf>,
        encoder: Option<&'a Encoder>,
        bridge: &'a Bridge,
        shared: Arc<Shared>,
    ) -> Self {
        Outlet {
            opts,
            location,
            encoder,
            bridge,
            shared,
            pipe: None,
            buffers: None,
            failed: false,
            pushed: 0,
        }
    }

    pub fn is_open(&self) -> bool {
        self.pipe.is_some()
    }

    /// Builds the output for frames like `first`, and notes the sizes in
    /// `summary`.
    pub fn open(&mut self, first: &Timed, summary: &mut Summary) -> Result<()> {
        summary.width_in = first.info.width() as usize;
        summary.height_in = first.info.height() as usize;
        summary.width_out = first.frame.width();
        summary.height_out = first.frame.height();
        let info = match &first.frame {
            Pixels::Buffer(_, i) => i.clone(),
            Pixels::Device(d) => d.info.clone(),
            Pixels::Picture(p) => output_info(
                &first.info,
                p.width(),
                p.height(),
                match p {
                    Picture::Yuv(y) => Some(y.format),
                    Picture::Frame(_) => None,
                },
            )?,
        };
        let location = self.location.as_deref();
        let pipe = open_output(self.opts, first, &info, location, self.encoder, self.bridge)?;
        self.buffers = Some(OutBuffers::new(info)?);
        self.pipe = Some(pipe);
        Ok(())
    }

    /// An error on the output's bus.
    pub fn check(&mut self, summary: &Summary) -> Result<()> {
        if let Some(o) = &self.pipe
            && let Some(Err(e)) = poll_bus(&o.pipe)
        {
            self.failed = true;
            return Err(explain_output_error(e, summary, &self.opts.output));
        }
        Ok(())
    }

    /// Pushes a frame into the output (opened).
    pub fn send(&mut self, t: Timed, summary: &Summary) -> Result<()> {
        if (t.frame.width(), t.frame.height()) != (summary.width_out, summary.height_out) {
            return Err(Error::Pipeline(format!(
                "the frame size changed mid-stream to {}x{}; seamstream needs one size per run",
                t.frame.width(),
                t.frame.height()
            )));
        }
        let start = Instant::now();
        let Some(out) = &self.buffers else {
            return Err(Error::Pipeline("the output was not set up".into()));
        };
        let Timed {
            frame,
            pts,
            duration,
            ..
        } = t;
        let buffer = match frame {
            // Filled by the worker straight from pinned memory.
            Pixels::Buffer(b, _) => b,
            Pixels::Device(d) => d.buffer,
            Pixels::Picture(p) => buffer_from_picture(&p, out, pts, duration)?,
        };
        Shared::add(&self.shared.copy_out_ns, start.elapsed());
        if let Some(o) = &self.pipe
            && let Err(e) = push(&o.pipe, &o.src, buffer)
        {
            self.failed = true;
            return Err(explain_output_error(e, summary, &self.opts.output));
        }
        self.pushed += 1;
        Ok(())
    }

    /// Sends EOS through the output and waits for it, unless the output
    /// failed itself.
    pub fn finish(&self, summary: &Summary) -> Result<()> {
        if self.failed {
            return Ok(());
        }
        finish_output(self.pipe.as_ref())
            .map_err(|e| explain_output_error(e, summary, &self.opts.output))
    }

    /// Stops the output; returns the frames it took.
    pub fn stop(&self) -> u64 {
        let Some(o) = &self.pipe else { return 0 };
        let _ = o.pipe.set_state(gst::State::Null);
        o.accepted.load(Ordering::Relaxed)
    }
}

/// Buffers for the output frames, laid out as the output caps say, from a
/// pool that recycles them once the output is done with them: no
/// allocation, and no page faults on fresh memory, per frame.
pub(crate) struct OutBuffers {
    pub info: gst_video::VideoInfo,
    pool: gst::BufferPool,
}

impl OutBuffers {
    pub fn new(info: gst_video::VideoInfo) -> Result<Self> {
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

    /// A buffer holding packed planes of `shape` (a finished frame's bytes)
    /// at the output layout's offsets and strides.
    pub fn packed(
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

/// The caps of the output frames, `w`×`h` in the 4:2:0 layout `yuv` or
/// RGBA, for input frames described by `info`.
pub(crate) fn output_info(
    info: &gst_video::VideoInfo,
    w: usize,
    h: usize,
    yuv: Option<PixelFormat>,
) -> Result<gst_video::VideoInfo> {
    let (format, colorimetry) = match yuv {
        Some(PixelFormat::Nv12) => (gst_video::VideoFormat::Nv12, yuv_colorimetry(info).1),
        Some(_) => (gst_video::VideoFormat::I420, yuv_colorimetry(info).1),
        None => (gst_video::VideoFormat::Rgba, info.colorimetry()),
    };
    gst_video::VideoInfo::builder(format, w as u32, h as u32)
        .fps(crate::gst::usable_rate(info.fps()))
        .par(info.par())
        .colorimetry(&colorimetry)
        .build()
        .map_err(|e| gst_err("cannot describe the output frames", e))
}

/// Writes `picture` into `b`, the bytes of a frame described by `info`, at
/// its offsets and strides. A gray picture goes into GRAY8 as it is and into
/// RGBA as R = G = B.
pub(crate) fn write_picture(picture: &Picture, info: &gst_video::VideoInfo, b: &mut [u8]) {
    let (off, stride) = (info.offset(), info.stride());
    // Each row's writer says how many bytes it wrote; the row's padding is
    // zeroed, so that a recycled buffer holds the same bytes as a new one.
    let mut rows = |plane: usize, height: usize, row: &dyn Fn(usize, &mut [u8]) -> usize| {
        let (o, s) = (off[plane], stride[plane] as usize);
        for y in 0..height {
            let end = (o + (y + 1) * s).min(b.len());
            let r = &mut b[o + y * s..end];
            let n = row(y, r);
            r[n..].fill(0);
        }
    };
    match picture {
        Picture::Frame(Frame::Rgba(p)) => rows(0, p.height(), &|y, o| {
            o[..4 * p.width()].copy_from_slice(p.row(y).as_flattened());
            4 * p.width()
        }),
        Picture::Frame(Frame::Gray(p)) if info.format() == gst_video::VideoFormat::Gray8 => {
            rows(0, p.height(), &|y, o| {
                o[..p.width()].copy_from_slice(p.row(y));
                p.width()
            })
        }
        Picture::Frame(Frame::Gray(p)) => rows(0, p.height(), &|y, o| {
            for (px, &v) in o.chunks_exact_mut(4).zip(p.row(y)) {
                px.copy_from_slice(&[v, v, v, 255]);
            }
            4 * p.width()
        }),
        Picture::Yuv(yuv) => {
            let planes = [&yuv.y, &yuv.u, &yuv.v];
            for (i, p) in planes
                .into_iter()
                .enumerate()
                .take(info.n_planes() as usize)
            {
                rows(i, p.height(), &|y, o| {
                    o[..p.row(y).len()].copy_from_slice(p.row(y));
                    p.row(y).len()
                });
            }
        }
    }
}

/// A GStreamer buffer holding `picture` in the output layout, from the pool.
pub(crate) fn buffer_from_picture(
    picture: &Picture,
    out: &OutBuffers,
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
) -> Result<gst::Buffer> {
    out.fill(pts, duration, |b| {
        write_picture(picture, &out.info, b);
        Ok(())
    })
}

/// The output pipeline, running.
struct OutPipe {
    pipe: gst::Pipeline,
    src: gst_app::AppSrc,
    /// Frames the output has taken: those its encoder gave out, or that
    /// reached its sink.
    accepted: Arc<AtomicU64>,
}

fn launch(description: &str) -> Result<gst::Pipeline> {
    let element = gst::parse::launch(description)
        .map_err(|e| gst_err(&format!("cannot build `{description}`"), e))?;
    element
        .downcast::<gst::Pipeline>()
        .map_err(|_| Error::Pipeline(format!("`{description}` is not a pipeline")))
}

fn open_output(
    opts: &RunOptions,
    first: &Timed,
    out_info: &gst_video::VideoInfo,
    location: Option<&Path>,
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
    // A part of a split job says who it is, for `join`.
    // Its start as decided (before its first frame); its end as planned (a
    // scene cut found later may move it, and `join` takes the next part's
    // start).
    if let Some(span) = &opts.span
        && let Some(setter) = pipe
            .by_name("seamstream_mux")
            .and_then(|m| m.dynamic_cast::<gst::TagSetter>().ok())
    {
        setter.add_tag::<gst::tags::Comment>(
            &span.tag().comment().as_str(),
            gst::TagMergeMode::Replace,
        );
    }
    let src = pipe
        .by_name("seamstream_out")
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Error::Pipeline("the output pipeline has no appsrc".into()))?;
    let mut caps = out_info
        .to_caps()
        .map_err(|e| gst_err("cannot make the output caps", e))?;
    // Frames left in CUDA memory go out as such (to an output that takes it).
    if let Pixels::Buffer(b, _) = &first.frame
        && crate::gst::cuda::is_cuda(b)
        && let Some(c) = caps.get_mut()
    {
        crate::gst::cuda::into_cuda(c);
    }
    // A part of a split job is encoded at the job's rate, so that its parts
    // join ([`super::super::parts::Span::rate`]).
    if let Some(span) = &opts.span
        && let Some(c) = caps.get_mut()
    {
        c.set("framerate", span.rate);
    }
    let rate = caps
        .structure(0)
        .and_then(|s| s.get::<gst::Fraction>("framerate").ok())
        .unwrap_or(out_info.fps());
    // A variable rate (0/1) encoded into MP4: x264 then times each frame
    // 1 ns long, and MP4 readers drop the last frame, which would be lost.
    // A nominal rate keeps every frame, each at its own time.
    if let Output::File {
        container: Container::Mp4,
        ..
    } = &opts.output
        && encoder.is_some()
        && rate.numer() == 0
        && let Some(c) = caps.get_mut()
    {
        c.set("framerate", NOMINAL_RATE);
    }
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

/// The frame rate an encoder into MP4 is told where the input's is variable
/// (0/1); the frames keep their own times.
const NOMINAL_RATE: gst::Fraction = gst::Fraction::from_integer(30);

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
        Some(gst::MessageView::Error(err)) => Err(element_error(err)),
        _ => Err(Error::Pipeline(format!(
            "the output did not finish within {} s",
            FINISH_TIMEOUT.as_secs()
        ))),
    }
}

/// An output error restated where GStreamer's words hide the cause.
fn explain_output_error(e: Error, summary: &Summary, output: &Output) -> Error {
    let Error::Gst { cause, .. } = &e else {
        return e;
    };
    if *cause == GstCause::NotNegotiated {
        return Error::Pipeline(format!(
            "the output would not take the chain's {}x{} frames (its elements agreed on no \
             format and size: not-negotiated); check the caps in the output, or change the \
             chain's output size",
            summary.width_out, summary.height_out
        ));
    }
    if *cause == GstCause::NoSpaceLeft
        && let Output::File { path, .. } = output
    {
        return Error::Write {
            path: path.clone(),
            reason: format!("the disk is full ({e})"),
        };
    }
    e
}

// The packing is checked against the GPU ring's layouts (`Layout`).
#[cfg(all(test, feature = "cuda"))]
mod tests {
    use super::*;
    use crate::color::Colorimetry;
    use crate::cuda::stage::Layout;
    use crate::frame::DevFormat;
    use crate::frame::{PixelFormat, Plane, Yuv420};
    use crate::noise::Noise;
    use crate::planes::write_yuv;

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
                let out = OutBuffers::new(
                    output_info(&input, w, h, yuv.then_some(PixelFormat::I420)).unwrap(),
                )
                .unwrap();
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
                        let bytes = Noise::new(k as u64 + 3).bytes(p.width() * p.height());
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
                    let px = Noise::new(9).bytes(4 * w * h);
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
