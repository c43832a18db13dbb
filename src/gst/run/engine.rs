//! The engine behind `run` and the GStreamer elements: a chain on its
//! backend, frames in and finished frames out in order. On the CPU a frame
//! goes through at once; on the GPU through the ring of slots
//! ([`super::ring`]), which may hold a few, from system memory or from
//! GStreamer's CUDA memory, and back to either.

use std::collections::VecDeque;
use std::time::Duration;

use gstreamer as gst;
use gstreamer_video as gst_video;

use super::Backend;
use super::frames::yuv_colorimetry;
pub(crate) use super::pixels::{DeviceIn, DeviceOut, OutMemory, Pixels, Timed};
use super::ring::Ring;
use crate::color::Colorimetry;
use crate::error::{Error, Result};
use crate::frame::{Frame, Picture, PixelFormat};
use crate::ops::Chain;
use crate::ops::yuv::{rgba_to_yuv420, yuv420_to_rgba};

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
    ring: Option<Ring>,
    /// What the chain holds back to look ahead ([`crate::ops::Op::delay`]).
    ahead: Ahead,
}

/// The frames a chain that looks ahead holds: their timing (each result
/// goes out with its own frame's), the placeholders still to drop, and the
/// last frame in, fed again at the end to get the held ones out.
#[derive(Default)]
struct Ahead {
    /// Frames held, known from the first frame on.
    delay: Option<usize>,
    /// The timing of the frames in and not yet out, oldest first.
    stamps: VecDeque<Stamp>,
    /// Results still to drop (placeholders, or the repeats of a drain).
    dropping: usize,
    last: Option<Pixels>,
}

/// A frame's timing and caps.
struct Stamp {
    pts: Option<gst::ClockTime>,
    duration: Option<gst::ClockTime>,
    info: gst_video::VideoInfo,
    warmup: bool,
}

/// The same pixels again, to feed a chain once more (a picture copied, a
/// buffer shared; a frame in CUDA memory without the output buffer it may
/// have had, which the drain asks the caller for).
fn again(p: &Pixels) -> Pixels {
    match p {
        Pixels::Picture(pic) => Pixels::Picture(pic.clone()),
        Pixels::Buffer(b, info) => Pixels::Buffer(b.clone(), info.clone()),
        Pixels::Device(d) => Pixels::Device(Box::new(DeviceIn {
            buffer: d.buffer.clone(),
            planes: d.planes,
            info: d.info.clone(),
            out: None,
        })),
    }
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
            ahead: Ahead::default(),
        }
    }

    /// Frames the chain holds back to look ahead: known from the first
    /// frame (whose rate it is told), or from the rate given to
    /// [`Work::set_rate`].
    pub fn delay(&self) -> usize {
        self.ahead.delay.unwrap_or_else(|| self.chain.delay())
    }

    /// Tells the chain the source's rate before the first frame (the
    /// elements, from their caps), so that [`Work::delay`] is known.
    pub fn set_rate(&mut self, fps: gst::Fraction) -> Result<()> {
        if fps.numer() > 0 && fps.denom() > 0 {
            self.chain
                .set_rate(fps.numer() as f64 / fps.denom() as f64)?;
        }
        Ok(())
    }

    /// Finished frames go into `memory` when the caller gives no buffer.
    pub fn with_memory(self, memory: OutMemory) -> Self {
        Work { memory, ..self }
    }

    pub fn busy(&self) -> bool {
        self.ring.as_ref().is_some_and(Ring::busy)
    }

    pub fn push(&mut self, t: Timed) -> Result<Vec<Timed>> {
        if self.ahead.delay.is_none() {
            self.set_rate(t.info.fps())?;
            let delay = self.chain.delay();
            self.ahead.delay = Some(delay);
            self.ahead.dropping = delay;
        }
        if self.delay() > 0 {
            self.ahead.stamps.push_back(Stamp {
                pts: t.pts,
                duration: t.duration,
                info: t.info.clone(),
                warmup: t.warmup,
            });
            // (A picture is kept by `feed`, without a copy where it can.)
            if !matches!(t.frame, Pixels::Picture(_)) {
                self.ahead.last = Some(again(&t.frame));
            }
        }
        let done = self.feed(t)?;
        Ok(self.stamped(done))
    }

    /// The results as they go out: with a look-ahead, the placeholders
    /// dropped and each frame stamped with its own timing and caps.
    fn stamped(&mut self, done: Vec<Timed>) -> Vec<Timed> {
        if self.delay() == 0 {
            return done;
        }
        let ahead = &mut self.ahead;
        done.into_iter()
            .filter_map(|mut t| {
                if ahead.dropping > 0 {
                    ahead.dropping -= 1;
                    return None;
                }
                let s = ahead.stamps.pop_front()?;
                if let Pixels::Buffer(b, _) = &mut t.frame {
                    let b = b.make_mut();
                    b.set_pts(s.pts);
                    b.set_duration(s.duration);
                }
                (t.pts, t.duration, t.info, t.warmup) = (s.pts, s.duration, s.info, s.warmup);
                Some(t)
            })
            .collect()
    }

    /// Gets out the frames the chain holds to look ahead, by feeding it the
    /// last frame again as many times (each repeat's output buffer from
    /// `out`, where the frames had their own in CUDA memory), and waits
    /// for them all.
    pub fn drain(&mut self, out: &mut dyn FnMut() -> Option<DeviceOut>) -> Result<Vec<Timed>> {
        let delay = self.delay();
        let mut done = Vec::new();
        if delay == 0 || self.ahead.stamps.is_empty() {
            return Ok(done);
        }
        let (Some(last), Some(info)) = (
            self.ahead.last.take(),
            self.ahead.stamps.back().map(|s| s.info.clone()),
        ) else {
            return Ok(done);
        };
        for _ in 0..delay {
            let mut frame = again(&last);
            if let Pixels::Device(d) = &mut frame {
                d.out = out();
            }
            let t = Timed {
                frame,
                pts: None,
                duration: None,
                info: info.clone(),
                warmup: false,
            };
            let outs = self.feed(t)?;
            done.extend(self.stamped(outs));
        }
        done.extend(self.collect(true)?);
        // The chain now holds the repeats: whatever follows them out is
        // dropped.
        self.ahead.dropping = delay;
        self.ahead.stamps.clear();
        Ok(done)
    }

    /// `t` into the chain on its backend.
    fn feed(&mut self, t: Timed) -> Result<Vec<Timed>> {
        let Backend::Cuda(gpu) = &self.backend else {
            let Pixels::Picture(picture) = t.frame else {
                return Err(Error::Pipeline(
                    "the CPU backend takes frames copied out of GStreamer's buffers".into(),
                ));
            };
            let c = yuv_colorimetry(&t.info).0;
            let input = if self.ahead.delay.is_some_and(|d| d > 0) {
                // Kept to feed again at the end ([`Work::drain`]): a 4:2:0
                // picture is converted from, not copied.
                let input = match &picture {
                    Picture::Yuv(y) => Frame::Rgba(yuv420_to_rgba(y, c)),
                    Picture::Frame(f) => f.clone(),
                };
                self.ahead.last = Some(Pixels::Picture(picture));
                input
            } else {
                chain_frame(picture, c)
            };
            let frame = Pixels::Picture(self.cpu(input, c)?);
            return Ok(vec![Timed { frame, ..t }]);
        };
        if self.ring.is_none() {
            // Set up on the first frame, which tells the size and format.
            let sizes = (self.yuv_out, self.even_only, self.slots);
            self.ring = Some(Ring::new(gpu, &self.chain, &t, sizes, &self.memory)?);
        }
        match &mut self.ring {
            Some(ring) => ring.push(t),
            None => Ok(Vec::new()),
        }
    }

    /// One picture through the chain on the CPU, by the GPU stage's data
    /// path and arithmetic: 4:2:0 in becomes RGBA by the `yuv` op's
    /// conversion, and the result goes out as I420 by the same conversion
    /// where the GPU's would (`yuv_out`, even sizes), so that both devices
    /// give the encoder the same bytes.
    fn cpu(&mut self, input: Frame, c: Colorimetry) -> Result<Picture> {
        let out = self.chain.apply(input)?;
        let even = out.width() % 2 == 0 && out.height() % 2 == 0;
        let yuv = self.yuv_out.filter(|_| even || !self.even_only);
        out_picture(out, c, yuv)
    }

    /// Waits for the oldest frames until the GPU stage holds at most
    /// `held`, and gives them back.
    pub fn settle(&mut self, held: usize) -> Result<Vec<Timed>> {
        let done = match &mut self.ring {
            Some(ring) => ring.settle(held)?,
            None => Vec::new(),
        };
        Ok(self.stamped(done))
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
        let done = match &mut self.ring {
            Some(ring) => ring.collect(wait)?,
            None => Vec::new(),
        };
        Ok(self.stamped(done))
    }

    /// Where the GPU stage's finished frames go (`system`, `pinned` or
    /// `cuda`, as [`OutMemory`]); `None` before the first frame and on the
    /// CPU.
    pub fn memory_out(&self) -> Option<&'static str> {
        self.ring.as_ref().map(Ring::memory_out)
    }

    /// Host copy time since the last call: into pinned memory, and out of it.
    pub fn copy_times(&mut self) -> (Duration, Duration) {
        match &mut self.ring {
            Some(ring) => ring.copy_times(),
            None => (Duration::ZERO, Duration::ZERO),
        }
    }
}
