//! The GPU half of the engine ([`super::engine::Work`]): the ring of slots
//! (`cuda::stage::Stage`) set up on a chain's first frame, the buffers its
//! finished frames go into ([`OutMemory`]), and the frames it gives back.
//! A build without CUDA has `ring_absent.rs` here instead, whose [`Ring`]
//! has no values.

use std::time::{Duration, Instant};

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_video as gst_video;

use super::frames::{planes, yuv_colorimetry};
use super::gst_err;
use super::output::{OutBuffers, output_info};
use super::pixels::{DeviceIn, OutMemory, Pixels, Timed};
use crate::cuda::Gpu;
use crate::cuda::pinned::PinnedPool;
use crate::cuda::stage::{Finished, Layout, Source, Stage, Target};
use crate::error::{Error, Result};
use crate::frame::{DevFormat, PixelFormat};
use crate::gst::cuda::PipelineContext;
use crate::ops::Chain;
use crate::planes::{DevicePlane, pack_planes, plane_shapes};

/// The GPU stage of a chain, and where its finished frames go.
pub(crate) struct Ring {
    stage: Stage<Meta>,
    taken: Taken,
    /// The stage's copy-in time already counted.
    copied_in: Duration,
}

/// What the output takes, for the ring's set-up: the 4:2:0 layout it
/// converts to before the download, whether only at even sizes
/// (encoders), and the number of slots.
pub(crate) type OutLayout = (Option<PixelFormat>, bool, usize);

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

/// The size and layout of a frame for the GPU stage.
fn input_shape(t: &Timed) -> Result<(gst_video::VideoInfo, PixelFormat, usize, usize)> {
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
    Ok((info, format, w, h))
}

impl Ring {
    /// The stage for `chain` on `gpu`, set up for frames like `first`,
    /// whose finished frames go into `memory` when no buffer awaits them.
    pub fn new(
        gpu: &Gpu,
        chain: &Chain,
        first: &Timed,
        (yuv_out, even_only, slots): OutLayout,
        memory: &OutMemory,
    ) -> Result<Ring> {
        let (info, format, w, h) = input_shape(first)?;
        let (c, _) = yuv_colorimetry(&info);
        let (ow, oh) = chain.output_size(w, h)?;
        // Encoders take 4:2:0 at even sizes (odd ones go out as RGBA and
        // GStreamer makes them 4:4:4).
        let even = ow % 2 == 0 && oh % 2 == 0;
        let yuv_out = yuv_out.filter(|_| even || !even_only).map(|f| (f, c));
        let stage = Stage::with_layouts(
            gpu,
            chain,
            w,
            h,
            Layout::of_format(format, c),
            yuv_out,
            slots,
        )?;
        let (ow, oh, layout) = stage.output();
        let yuv = match layout {
            Layout::Yuv(f, _) => Some(f),
            Layout::Frame(_) => None,
        };
        let out_info = output_info(&first.info, ow, oh, yuv)?;
        // A gray result leaves as a picture (made RGBA on the host).
        let memory = match layout {
            Layout::Frame(DevFormat::Gray) => &OutMemory::Slot,
            _ => memory,
        };
        let taken = Taken {
            sink: Sink::new(memory, gpu, &out_info),
            out: OutBuffers::new(out_info)?,
            done: Vec::new(),
            copy_out: Duration::ZERO,
        };
        Ok(Ring {
            stage,
            taken,
            copied_in: Duration::ZERO,
        })
    }

    pub fn busy(&self) -> bool {
        self.stage.in_flight() > 0
    }

    /// Puts `t` into the ring, and gives back the frames finished meanwhile.
    pub fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
        let (info, format, w, h) = input_shape(&t)?;
        let Ring { stage, taken, .. } = self;
        let Timed {
            frame,
            pts,
            duration,
            info: caps,
            warmup,
        } = t;
        // What goes with the frame through the stage: its timing and caps,
        // the input buffer kept until the copy from it is done, and the
        // output buffer the result goes into.
        let meta = |input, out: Option<(gst::Buffer, gst_video::VideoInfo, Target)>| Meta {
            pts,
            duration,
            info: caps,
            warmup,
            _input: input,
            out: out.map(|o| (o.0, o.1)),
        };
        match frame {
            Pixels::Device(d) => {
                let DeviceIn {
                    buffer,
                    planes,
                    out,
                    ..
                } = *d;
                let out = match out {
                    Some(o) => Some((o.buffer, o.info, Target::Device(o.planes))),
                    None => taken.sink.next(pts, duration)?,
                };
                let dst = out.as_ref().map(|o| o.2);
                let meta = meta(Some(buffer), out);
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
                let out = taken.sink.next(pts, duration)?;
                let dst = out.as_ref().map(|o| o.2);
                let meta = meta(None, out);
                let mut take = |f: Finished<'_>, m: Meta| taken.take(f, m);
                stage.push_from((w, h, format), meta, Source::Host(fill), dst, &mut take)?;
            }
            Pixels::Picture(_) => {}
        }
        Ok(std::mem::take(&mut taken.done))
    }

    /// Waits for the oldest frames until the stage holds at most `held`,
    /// and gives them back.
    pub fn settle(&mut self, held: usize) -> Result<Vec<Timed>> {
        let Ring { stage, taken, .. } = self;
        stage.settle(held, &mut |f: Finished<'_>, m: Meta| taken.take(f, m))?;
        Ok(std::mem::take(&mut taken.done))
    }

    /// The frames the stage has finished (all of them, waiting, when
    /// `wait`), copied out of their slots.
    pub fn collect(&mut self, wait: bool) -> Result<Vec<Timed>> {
        let Ring { stage, taken, .. } = self;
        let mut take = |f: Finished<'_>, m| taken.take(f, m);
        if wait {
            stage.finish(&mut take)?;
        } else {
            stage.poll(&mut take)?;
        }
        Ok(std::mem::take(&mut taken.done))
    }

    /// Where the finished frames go (`system`, `pinned` or `cuda`).
    pub fn memory_out(&self) -> &'static str {
        self.taken.sink.memory()
    }

    /// Host copy time since the last call: into pinned memory, and out of it.
    pub fn copy_times(&mut self) -> (Duration, Duration) {
        let copied_in = self.stage.copy_in_time();
        let since = copied_in.saturating_sub(self.copied_in);
        self.copied_in = copied_in;
        (since, std::mem::take(&mut self.taken.copy_out))
    }
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
