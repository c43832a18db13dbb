//! The engine behind `run` and the GStreamer elements: a chain on its
//! backend, frames in and finished frames out in order. On the CPU a frame
//! goes through at once; on the GPU through the ring of slots
//! ([`Stage`]), which may hold a few, from system memory or from
//! GStreamer's CUDA memory, and back to either.

use std::time::{Duration, Instant};

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_video as gst_video;

use super::frames::{planes, yuv_colorimetry};
use super::output::{OutBuffers, output_info};
use super::{Backend, gst_err};
use crate::color::Colorimetry;
use crate::cuda::DevFormat;
use crate::cuda::pinned::PinnedPool;
use crate::cuda::stage::{DevicePlane, Finished, Layout, Source, Stage, Target};
use crate::error::{Error, Result};
use crate::frame::{Frame, Picture, PixelFormat};
use crate::gst::cuda::PipelineContext;
use crate::ops::Chain;
use crate::ops::yuv::{rgba_to_yuv420, yuv420_to_rgba};
use crate::planes::{pack_planes, plane_shapes};

/// A frame's pixels between the threads.
pub(crate) enum Pixels {
    /// Copied out of GStreamer (the CPU backend), or made by the chain.
    Picture(Picture),
    /// A GStreamer buffer laid out as the info says: an input frame for the
    /// GPU stage to copy from, or a finished one to push as it is.
    Buffer(gst::Buffer, gst_video::VideoInfo),
    /// A buffer in GStreamer's CUDA memory.
    /// (Boxed: its planes make it the largest.)
    Device(Box<DeviceIn>),
}

/// A frame in GStreamer's CUDA memory, laid out as `info` says, for the GPU
/// stage to copy from on the device; the result goes into `out` (a buffer
/// in CUDA memory) when given, else comes back in system memory.
pub(crate) struct DeviceIn {
    pub buffer: gst::Buffer,
    pub planes: [DevicePlane; 3],
    pub info: gst_video::VideoInfo,
    pub out: Option<DeviceOut>,
}

/// An output buffer in CUDA memory for the GPU stage to write into.
pub(crate) struct DeviceOut {
    pub buffer: gst::Buffer,
    pub planes: [DevicePlane; 3],
    pub info: gst_video::VideoInfo,
}

impl Pixels {
    pub fn width(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.width(),
            Pixels::Buffer(_, info) => info.width() as usize,
            Pixels::Device(d) => d.info.width() as usize,
        }
    }

    pub fn height(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.height(),
            Pixels::Buffer(_, info) => info.height() as usize,
            Pixels::Device(d) => d.info.height() as usize,
        }
    }
}

/// A frame with its timing and the caps it arrived with.
pub(crate) struct Timed {
    pub frame: Pixels,
    pub pts: Option<gst::ClockTime>,
    pub duration: Option<gst::ClockTime>,
    pub info: gst_video::VideoInfo,
    /// A warm-up frame of a part of a split job: it goes through the chain
    /// (whose memory it fills) but not into the output.
    pub warmup: bool,
}

/// What travels with a frame through the GPU stage: its timing and caps,
/// and for a frame in device memory, its buffer (kept until the copy from
/// it is done) and the output buffer the result goes into.
struct Meta {
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    info: gst_video::VideoInfo,
    warmup: bool,
    _input: Option<gst::Buffer>,
    out: Option<(gst::Buffer, gst_video::VideoInfo)>,
}

/// A picture as the chain takes it: 4:2:0 becomes RGBA by the `yuv` op's
/// arithmetic (the GPU stage's, so both devices see the same frames).
pub(crate) fn chain_frame(picture: Picture, c: Colorimetry) -> Frame {
    match picture {
        Picture::Frame(f) => f,
        Picture::Yuv(y) => Frame::Rgba(yuv420_to_rgba(&y, c)),
    }
}

/// The chain's output as it leaves: in the 4:2:0 layout `yuv`, by the same
/// arithmetic, or as it is.
pub(crate) fn out_picture(
    frame: Frame,
    c: Colorimetry,
    yuv: Option<PixelFormat>,
) -> Result<Picture> {
    Ok(match yuv {
        Some(layout) => Picture::Yuv(rgba_to_yuv420(&frame.to_rgba(), layout, c)?),
        None => Picture::Frame(frame),
    })
}

/// Where the GPU stage writes finished frames that no caller's buffer
/// awaits.
#[derive(Clone, Debug, Default)]
pub(crate) enum OutMemory {
    /// Into the slot's pinned buffer, then copied into a buffer of the
    /// output's pool.
    #[default]
    Slot,
    /// Straight into pinned host memory that goes on as the buffer (to an
    /// encoder, a file, a fragment): one download, no host copy.
    Pinned,
    /// Into GStreamer's CUDA memory on the run's context, for an output that
    /// takes it: no download at all.
    Cuda(PipelineContext),
}

/// Buffers the GPU stage writes finished frames into, as [`OutMemory`]
/// says, laid out as the output's caps (`info`).
enum Sink {
    Slot,
    Pinned(PinnedPool, gst_video::VideoInfo),
    Cuda(gst::BufferPool, PipelineContext, gst_video::VideoInfo),
}

impl Sink {
    fn new(memory: &OutMemory, gpu: &crate::cuda::Gpu, info: &gst_video::VideoInfo) -> Sink {
        let pinned = || Sink::Pinned(PinnedPool::new(gpu, info.size()), info.clone());
        match memory {
            OutMemory::Slot => Sink::Slot,
            OutMemory::Pinned => pinned(),
            // Where GStreamer cannot make the pool: pinned memory instead.
            OutMemory::Cuda(ctx) => Self::cuda(ctx, info).unwrap_or_else(pinned),
        }
    }

    /// Buffers from a pool of CUDA memory on the run's context.
    fn cuda(ctx: &PipelineContext, info: &gst_video::VideoInfo) -> Option<Sink> {
        let mut caps = info.to_caps().ok()?;
        crate::gst::cuda::into_cuda(caps.get_mut()?);
        let pool = ctx.pool(&caps, u32::try_from(info.size()).ok()?)?;
        pool.set_active(true).ok()?;
        Some(Sink::Cuda(pool, ctx.clone(), info.clone()))
    }

    /// Where the frames go, as the summary says it.
    fn memory(&self) -> &'static str {
        match self {
            Sink::Slot => "system",
            Sink::Pinned(..) => "pinned",
            Sink::Cuda(..) => "cuda",
        }
    }

    /// A buffer stamped `pts` and `duration` for the next finished frame,
    /// with where its planes are; `None` for the slot's own buffer.
    fn next(
        &self,
        pts: Option<gst::ClockTime>,
        duration: Option<gst::ClockTime>,
    ) -> Result<Option<(gst::Buffer, gst_video::VideoInfo, Target)>> {
        let (mut buffer, info, target) = match self {
            Sink::Slot => return Ok(None),
            Sink::Pinned(pool, info) => {
                let block = pool.take()?;
                let base = block.addr();
                let mut planes = [DevicePlane::default(); 3];
                for (i, p) in planes.iter_mut().enumerate().take(info.n_planes() as usize) {
                    *p = DevicePlane {
                        ptr: base + info.offset()[i] as u64,
                        pitch: info.stride()[i] as usize,
                    };
                }
                let buffer = gst::Buffer::from_mut_slice(block);
                (buffer, info, Target::Pinned(planes))
            }
            Sink::Cuda(pool, ctx, info) => {
                let buffer = pool
                    .acquire_buffer(None)
                    .map_err(|e| gst_err("cannot get a buffer of CUDA memory", e))?;
                let planes = ctx.planes(buffer.as_ref(), info, true).ok_or_else(|| {
                    Error::Pipeline("a buffer of the CUDA pool is not in the run's context".into())
                })?;
                (buffer, info, Target::Device(planes))
            }
        };
        let b = buffer.make_mut();
        b.set_pts(pts);
        b.set_duration(duration);
        Ok(Some((buffer, info.clone(), target)))
    }
}

/// The chain on its backend, as `run`'s worker thread and the elements
/// drive it: frames in, finished frames out in order (the GPU stage may
/// hold a few).
pub(crate) struct Work {
    chain: Chain,
    backend: Backend,
    slots: usize,
    /// Where finished frames go when the caller gives no buffer.
    memory: OutMemory,
    /// The 4:2:0 layout the output takes (an encoder's I420, or the
    /// element's negotiated format), so the GPU converts before the
    /// download; only at even sizes when `even_only` (encoders).
    yuv_out: Option<PixelFormat>,
    even_only: bool,
    /// The GPU stage, set up on the first frame, and where its finished
    /// frames go.
    ring: Option<(Stage<Meta>, Taken)>,
    /// The stage's copy-in time already counted.
    copied_in: Duration,
}

/// The GPU stage's finished frames, copied out of their slots.
struct Taken {
    /// Buffers for the GPU's finished frames.
    out: OutBuffers,
    /// Buffers the stage writes them into itself.
    sink: Sink,
    /// Frames the GPU stage has given back and the worker not yet sent on.
    done: Vec<Timed>,
    /// Time spent copying frames out of pinned memory since last counted.
    copy_out: Duration,
}

impl Work {
    pub fn new(
        chain: Chain,
        backend: Backend,
        slots: usize,
        yuv_out: Option<PixelFormat>,
        even_only: bool,
    ) -> Self {
        Work {
            chain,
            backend,
            slots,
            memory: OutMemory::Slot,
            yuv_out,
            even_only,
            ring: None,
            copied_in: Duration::ZERO,
        }
    }

    /// Finished frames go into `memory` when the caller gives no buffer.
    pub fn with_memory(self, memory: OutMemory) -> Self {
        Work { memory, ..self }
    }

    pub fn busy(&self) -> bool {
        self.ring.as_ref().is_some_and(|(s, _)| s.in_flight() > 0)
    }

    pub fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
        let Backend::Cuda(gpu) = &self.backend else {
            let Pixels::Picture(picture) = t.frame else {
                return Err(Error::Pipeline(
                    "the CPU backend takes frames copied out of GStreamer's buffers".into(),
                ));
            };
            let picture = self.cpu(picture, yuv_colorimetry(&t.info).0)?;
            let frame = Pixels::Picture(picture);
            return Ok(vec![Timed { frame, ..t }]);
        };
        let info = match &t.frame {
            Pixels::Buffer(_, info) => info.clone(),
            Pixels::Device(d) => d.info.clone(),
            Pixels::Picture(_) => {
                return Err(Error::Pipeline(
                    "the GPU backend takes frames in GStreamer's buffers".into(),
                ));
            }
        };
        let format = match info.format() {
            gst_video::VideoFormat::I420 => PixelFormat::I420,
            gst_video::VideoFormat::Nv12 => PixelFormat::Nv12,
            gst_video::VideoFormat::Gray8 => PixelFormat::Gray8,
            _ => PixelFormat::Rgba8,
        };
        let (w, h) = (info.width() as usize, info.height() as usize);
        if self.ring.is_none() {
            // Set up on the first frame, which tells the size and format.
            let (c, _) = yuv_colorimetry(&info);
            let (ow, oh) = self.chain.output_size(w, h)?;
            // Encoders take 4:2:0 at even sizes (odd ones go out as RGBA and
            // GStreamer makes them 4:4:4).
            let even = ow % 2 == 0 && oh % 2 == 0;
            let yuv_out = self
                .yuv_out
                .filter(|_| even || !self.even_only)
                .map(|f| (f, c));
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
            let yuv = match layout {
                Layout::Yuv(f, _) => Some(f),
                Layout::Frame(_) => None,
            };
            let out_info = output_info(&t.info, ow, oh, yuv)?;
            // A gray result leaves as a picture (made RGBA on the host).
            let memory = match layout {
                Layout::Frame(DevFormat::Gray) => &OutMemory::Slot,
                _ => &self.memory,
            };
            let taken = Taken {
                sink: Sink::new(memory, gpu, &out_info),
                out: OutBuffers::new(out_info)?,
                done: Vec::new(),
                copy_out: Duration::ZERO,
            };
            self.ring = Some((stage, taken));
        }
        let Some((stage, taken)) = &mut self.ring else {
            return Ok(Vec::new());
        };
        match t.frame {
            Pixels::Device(d) => {
                let DeviceIn {
                    buffer,
                    planes,
                    out,
                    ..
                } = *d;
                let out = match out {
                    Some(o) => Some((o.buffer, o.info, Target::Device(o.planes))),
                    None => taken.sink.next(t.pts, t.duration)?,
                };
                let dst = out.as_ref().map(|o| o.2);
                let meta = Meta {
                    pts: t.pts,
                    duration: t.duration,
                    info: t.info,
                    warmup: t.warmup,
                    _input: Some(buffer),
                    out: out.map(|o| (o.0, o.1)),
                };
                let src = Source::Device::<fn(&mut [u8]) -> Result<()>>(planes);
                let mut take = |f: Finished<'_>, m: Meta| taken.take(f, m);
                stage.push_from((w, h, format), meta, src, dst, &mut take)?;
            }
            Pixels::Buffer(buffer, _) => {
                let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), &info)
                    .map_err(|e| gst_err("cannot map an input buffer", e))?;
                let mapped = planes(&vf)?;
                // Copied from the mapped planes straight into pinned memory.
                let fill = |host: &mut [u8]| pack_planes(&mapped, plane_shapes(format, w, h), host);
                let out = taken.sink.next(t.pts, t.duration)?;
                let dst = out.as_ref().map(|o| o.2);
                let meta = Meta {
                    pts: t.pts,
                    duration: t.duration,
                    info: t.info,
                    warmup: t.warmup,
                    _input: None,
                    out: out.map(|o| (o.0, o.1)),
                };
                let mut take = |f: Finished<'_>, m: Meta| taken.take(f, m);
                stage.push_from((w, h, format), meta, Source::Host(fill), dst, &mut take)?;
            }
            Pixels::Picture(_) => {}
        }
        Ok(std::mem::take(&mut taken.done))
    }

    /// One picture through the chain on the CPU, by the GPU stage's data
    /// path and arithmetic: 4:2:0 in becomes RGBA by the `yuv` op's
    /// conversion, and the result goes out as I420 by the same conversion
    /// where the GPU's would (`yuv_out`, even sizes), so that both devices
    /// give the encoder the same bytes.
    fn cpu(&mut self, picture: Picture, c: Colorimetry) -> Result<Picture> {
        let out = self.chain.apply(chain_frame(picture, c))?;
        let even = out.width() % 2 == 0 && out.height() % 2 == 0;
        let yuv = self.yuv_out.filter(|_| even || !self.even_only);
        out_picture(out, c, yuv)
    }

    /// Waits for the oldest frames until the GPU stage holds at most
    /// `held`, and gives them back.
    pub fn settle(&mut self, held: usize) -> Result<Vec<Timed>> {
        let Some((stage, taken)) = &mut self.ring else {
            return Ok(Vec::new());
        };
        stage.settle(held, &mut |f: Finished<'_>, m: Meta| taken.take(f, m))?;
        Ok(std::mem::take(&mut taken.done))
    }

    pub fn poll(&mut self) -> Result<Vec<Timed>> {
        self.collect(false)
    }

    /// Waits for every frame in the GPU stage; also gives back the frames
    /// a failed push had taken out of it.
    pub fn finish(&mut self) -> Result<Vec<Timed>> {
        self.collect(true)
    }

    /// The frames the GPU stage has finished (all of them, waiting, when
    /// `wait`), copied out of their slots.
    fn collect(&mut self, wait: bool) -> Result<Vec<Timed>> {
        let Some((stage, taken)) = &mut self.ring else {
            return Ok(Vec::new());
        };
        let mut take = |f: Finished<'_>, m| taken.take(f, m);
        if wait {
            stage.finish(&mut take)?;
        } else {
            stage.poll(&mut take)?;
        }
        Ok(std::mem::take(&mut taken.done))
    }

    /// Where the GPU stage's finished frames go (`system`, `pinned` or
    /// `cuda`, as [`OutMemory`]); `None` before the first frame and on the
    /// CPU.
    pub fn memory_out(&self) -> Option<&'static str> {
        self.ring.as_ref().map(|(_, t)| t.sink.memory())
    }

    /// Host copy time since the last call: into pinned memory, and out of it.
    pub fn copy_times(&mut self) -> (Duration, Duration) {
        let Some((stage, taken)) = &mut self.ring else {
            return (Duration::ZERO, Duration::ZERO);
        };
        let copied_in = stage.copy_in_time();
        let since = copied_in.saturating_sub(self.copied_in);
        self.copied_in = copied_in;
        (since, std::mem::take(&mut taken.copy_out))
    }
}

impl Taken {
    /// Copies a finished frame out of its pinned buffer into an output
    /// buffer; a gray one into a picture, which the output thread makes RGBA
    /// as it does the CPU's.
    fn take(&mut self, f: Finished<'_>, meta: Meta) -> Result<()> {
        let Meta {
            pts,
            duration,
            info,
            warmup,
            out,
            ..
        } = meta;
        if let Some((buffer, out_info)) = out {
            // Written where it goes (device memory, or pinned memory handed
            // on as it is): nothing to copy.
            self.done.push(Timed {
                frame: Pixels::Buffer(buffer, out_info),
                pts,
                duration,
                info,
                warmup,
            });
            return Ok(());
        }
        let start = Instant::now();
        let frame = match f.layout {
            Layout::Frame(DevFormat::Gray) => Pixels::Picture(f.to_picture()?),
            _ => {
                let shape = f.layout.planes(f.width, f.height);
                let buffer = self.out.packed(f.bytes, shape, pts, duration)?;
                Pixels::Buffer(buffer, self.out.info.clone())
            }
        };
        self.copy_out += start.elapsed();
        self.done.push(Timed {
            frame,
            pts,
            duration,
            info,
            warmup,
        });
        Ok(())
    }
}
