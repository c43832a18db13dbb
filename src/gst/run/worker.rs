//! The chain's thread: takes frames from the intake's channel, runs them
//! through the chain on its backend (the GPU stage may hold a few), and
//! sends the finished ones, in order, to the calling thread; an end mark
//! or an error ends it.

use std::sync::Arc;
use std::sync::atomic::Ordering;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, Sender};
use gstreamer as gst;
use gstreamer_video as gst_video;

use super::intake::{planes, yuv_colorimetry};
use super::output::{OutBuffers, output_info};
use super::{Backend, Msg, Pixels, RunOptions, Shared, Timed, gst_err};
use crate::color::Colorimetry;
use crate::cuda::DevFormat;
use crate::cuda::stage::{Finished, Layout, Stage};
use crate::error::{Error, Result};
use crate::frame::{Frame, Picture, PixelFormat};
use crate::gst::Output;
use crate::ops::Chain;
use crate::ops::yuv::{rgba_to_yuv420, yuv420_to_rgba};
use crate::planes::{pack_planes, plane_shapes};

/// What travels with a frame through the GPU stage.
type Meta = (
    Option<gst::ClockTime>,
    Option<gst::ClockTime>,
    gst_video::VideoInfo,
);

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

/// Starts the chain's thread: frames from `rx`, results to `tx`.
pub(super) fn spawn(
    opts: &RunOptions,
    chain: Chain,
    rx: Receiver<Msg>,
    tx: Sender<Msg>,
    shared: Arc<Shared>,
) -> Result<JoinHandle<()>> {
    let backend = opts.backend.clone();
    let slots = opts.slots;
    // Every file format takes 4:2:0 (encoders and y4m alike): the frames go
    // out as I420 converted here, not by GStreamer.
    let yuv_out = matches!(opts.output, Output::Null | Output::File { .. });
    std::thread::Builder::new()
        .name("seamstream-chain".into())
        .spawn(move || serve(Work::new(chain, backend, slots, yuv_out), &rx, &tx, &shared))
        .map_err(|e| Error::Pipeline(format!("cannot start the chain thread: {e}")))
}

/// The thread's loop: until an end mark, an error, or the run's end.
fn serve(mut work: Work, rx: &Receiver<Msg>, tx: &Sender<Msg>, shared: &Shared) {
    // A fault for the tests: the chain thread panics after N frames.
    let panic_after: Option<u64> = std::env::var("SEAMSTREAM_INJECT_CHAIN_PANIC_AFTER")
        .ok()
        .and_then(|v| v.parse().ok());
    loop {
        // While the GPU holds frames, look for finished ones often,
        // so a live source gets each frame back as soon as it is done.
        let wait = if work.busy() { 1 } else { 50 };
        let msg = match rx.recv_timeout(Duration::from_millis(wait)) {
            Ok(m) => Some(m),
            Err(crossbeam_channel::RecvTimeoutError::Timeout)
                if !shared.abort.load(Ordering::Relaxed) =>
            {
                None
            }
            Err(_) => break,
        };
        let start = Instant::now();
        let (outs, end) = match msg {
            Some(Msg::Frame(t)) => {
                let n = shared.taken.fetch_add(1, Ordering::Relaxed);
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
        Shared::add(&shared.chain_ns, chain);
        Shared::add(&shared.copy_in_ns, copied_in);
        Shared::add(&shared.copy_out_ns, copied_out);
        let frames = |f: Vec<Timed>| f.into_iter().map(|t| Msg::Frame(Box::new(t)));
        let mut msgs: Vec<Msg> = match outs {
            Ok(f) => frames(f).collect(),
            Err(e) => {
                // Frames the GPU finished before the failure are
                // still written, if the ring can give them back.
                let mut m: Vec<Msg> = frames(work.finish().unwrap_or_default()).collect();
                m.push(Msg::Failed(e));
                m
            }
        };
        msgs.extend(end);
        let stop = msgs.iter().any(|m| !matches!(m, Msg::Frame(_)));
        if msgs.into_iter().any(|m| tx.send(m).is_err()) || stop {
            break;
        }
    }
}

/// Waits for the chain's thread; its panic is the run's failure.
pub(super) fn join(worker: JoinHandle<()>) -> Result<()> {
    worker.join().map_err(|payload| {
        Error::Pipeline(format!(
            "the chain thread (seamstream-chain) panicked: {}",
            panic_message(payload.as_ref())
        ))
    })
}

/// A panic's message, as `panic!` gave it.
fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "no message".into())
}

/// The chain on its backend, as the worker thread drives it: frames in,
/// finished frames out in order (the GPU stage may hold a few).
struct Work {
    chain: Chain,
    backend: Backend,
    slots: usize,
    /// Whether the output takes 4:2:0 YUV (an encoder or a null sink), so
    /// the GPU converts before the download.
    yuv_out: bool,
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
    /// Frames the GPU stage has given back and the worker not yet sent on.
    done: Vec<Timed>,
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
            ring: None,
            copied_in: Duration::ZERO,
        }
    }

    fn busy(&self) -> bool {
        self.ring.as_ref().is_some_and(|(s, _)| s.in_flight() > 0)
    }

    fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
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
        if self.ring.is_none() {
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
            let taken = Taken {
                out: OutBuffers::new(output_info(&t.info, ow, oh, yuv)?)?,
                done: Vec::new(),
                copy_out: Duration::ZERO,
            };
            self.ring = Some((stage, taken));
        }
        let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), info)
            .map_err(|e| gst_err("cannot map an input buffer", e))?;
        let mapped = planes(&vf)?;
        // Copied from the mapped planes straight into pinned memory.
        let fill = |host: &mut [u8]| pack_planes(&mapped, plane_shapes(format, w, h), host);
        let meta = (t.pts, t.duration, t.info.clone());
        let Some((stage, taken)) = &mut self.ring else {
            return Ok(Vec::new());
        };
        stage.push((w, h, format), meta, fill, &mut |f, m| taken.take(f, m))?;
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
        let yuv = (self.yuv_out && even).then_some(PixelFormat::I420);
        out_picture(out, c, yuv)
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

    /// Host copy time since the last call: into pinned memory, and out of it.
    fn copy_times(&mut self) -> (Duration, Duration) {
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
    fn take(&mut self, f: Finished<'_>, (pts, duration, info): Meta) -> Result<()> {
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
        });
        Ok(())
    }
}
