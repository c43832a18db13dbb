//! The GPU stage: a chain of [`GpuOp`](super::GpuOp)s run on a ring of slots, so that the
//! upload of frame *i+1* and the download of frame *i−1* overlap the chain's
//! work on frame *i* (DESIGN.md §1).
//!
//! Each slot owns a pinned, write-combined input buffer, a pinned output
//! buffer, the device input frame, one device frame per operation's output,
//! and three events. Uploads run on their own stream, the chain on the
//! compute stream ([`Gpu::stream`]), downloads on a third; events order them,
//! and nothing is allocated per frame. Frames come out in the order they went
//! in.

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use cudarc::driver::{CudaEvent, CudaStream, PinnedHostSlice, sys};

use cudarc::driver::CudaSlice;

use super::ops::yuv::{rgba_to_yuv420, yuv420_len, yuv420_to_rgba};
use super::{DevFormat, DevFrame, Gpu, GpuHalves, Prepared, cuda_err};
use crate::color::Colorimetry;
use crate::error::{Error, Result};
use crate::frame::{Frame, Picture, PixelFormat, Plane, Yuv420};

/// How frames cross PCIe: as the chain's pixels, or as 4:2:0 YUV converted
/// to RGBA on the device after the upload (or from it before the download).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Layout {
    Frame(DevFormat),
    Yuv(PixelFormat, Colorimetry),
}

impl Layout {
    /// Bytes of one `w`×`h` frame in this layout, rows packed.
    pub fn bytes(&self, w: usize, h: usize) -> Result<usize> {
        match *self {
            Layout::Frame(f) => Ok(w * h * f.bytes_per_pixel()),
            Layout::Yuv(f, _) => yuv420_len(f, w, h),
        }
    }

    /// The layout a picture arrives in (YUV with `c`).
    pub fn of(p: &Picture, c: Colorimetry) -> Layout {
        match p {
            Picture::Frame(f) => Layout::Frame(DevFormat::of(f)),
            Picture::Yuv(y) => Layout::Yuv(y.format, c),
        }
    }

    /// The layout of frames in `format` (YUV with `c`).
    pub fn of_format(format: PixelFormat, c: Colorimetry) -> Layout {
        match format {
            PixelFormat::Rgba8 => Layout::Frame(DevFormat::Rgba),
            PixelFormat::Gray8 => Layout::Frame(DevFormat::Gray),
            PixelFormat::Nv12 | PixelFormat::I420 => Layout::Yuv(format, c),
        }
    }

    /// Each plane's bytes a row and rows, in the order [`Layout::bytes`]
    /// counts them (a frame: one plane; NV12: Y, UV; I420: Y, U, V); planes
    /// the layout lacks are `(0, 0)`.
    pub fn planes(&self, w: usize, h: usize) -> [(usize, usize); 3] {
        let (cw, ch) = Yuv420::chroma_size(w, h);
        match *self {
            Layout::Frame(f) => [(w * f.bytes_per_pixel(), h), (0, 0), (0, 0)],
            Layout::Yuv(PixelFormat::Nv12, _) => [(w, h), (2 * cw, ch), (0, 0)],
            Layout::Yuv(..) => [(w, h), (cw, ch), (cw, ch)],
        }
    }
}

/// A frame as a mapped GStreamer buffer holds it: each plane's bytes with
/// its row stride in bytes, in [`Layout::planes`]' order (unused planes
/// empty). [`Stage::push_mapped`] copies it straight into pinned memory.
#[derive(Clone, Copy, Debug)]
pub struct Mapped<'a> {
    /// RGBA, gray, NV12 or I420.
    pub format: PixelFormat,
    pub width: usize,
    pub height: usize,
    pub planes: [(&'a [u8], usize); 3],
}

/// A finished frame in its slot's pinned output buffer, for the consumer of
/// [`Stage::poll_with`] to copy out before the slot is used again: rows
/// packed, planes one after another as [`Layout::planes`] lists them.
#[derive(Clone, Copy, Debug)]
pub struct Finished<'a> {
    pub bytes: &'a [u8],
    pub width: usize,
    pub height: usize,
    pub layout: Layout,
}

impl Finished<'_> {
    /// The frame copied into a new picture.
    pub fn to_picture(&self) -> Result<Picture> {
        let (w, h) = (self.width, self.height);
        Ok(match self.layout {
            Layout::Frame(f) => Picture::Frame(read_packed(self.bytes, w, h, f)?),
            Layout::Yuv(f, _) => Picture::Yuv(read_yuv(self.bytes, f, w, h)?),
        })
    }
}

/// The GPU halves of a chain's operations, prepared for one input size and
/// format, with the size and format after each.
pub struct GpuChain {
    /// Each op's name (for errors) and its prepared half.
    ops: Vec<(&'static str, Box<dyn Prepared>)>,
    /// `shapes[0]` is the input; `shapes[i + 1]` is op `i`'s output.
    shapes: Vec<(usize, usize, DevFormat)>,
}

impl GpuChain {
    /// Builds and prepares every op for `width`×`height` frames of `format`.
    pub fn new(
        gpu: &Gpu,
        chain: &dyn GpuHalves,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<GpuChain> {
        let mut shapes = vec![(width, height, format)];
        let halves = chain.gpu_halves()?;
        let mut ops = Vec::with_capacity(halves.len());
        for g in halves {
            let (w, h, f) = *shapes.last().unwrap_or(&(width, height, format));
            ops.push((g.name(), g.prepare(gpu, w, h, f)?));
            shapes.push(g.output(w, h, f)?);
        }
        Ok(GpuChain { ops, shapes })
    }

    /// The output's width, height and format.
    pub fn output(&self) -> (usize, usize, DevFormat) {
        *self.shapes.last().unwrap_or(&self.shapes[0])
    }

    /// Device frames for every op's output (one set per ring slot).
    pub fn alloc_outputs(&self, gpu: &Gpu) -> Result<Vec<DevFrame>> {
        self.shapes[1..]
            .iter()
            .map(|&(w, h, f)| DevFrame::alloc(gpu, w, h, f))
            .collect()
    }

    /// Enqueues the whole chain on the compute stream; the result is in the
    /// last of `outs`, or in `input` for an empty chain.
    pub fn run(&mut self, gpu: &Gpu, input: &DevFrame, outs: &mut [DevFrame]) -> Result<()> {
        for (i, (name, op)) in self.ops.iter_mut().enumerate() {
            let (done, rest) = outs.split_at_mut(i);
            let src = done.last().unwrap_or(input);
            op.run(gpu, src, &mut rest[0])
                .map_err(|e| Error::OpFailed {
                    op: (*name).into(),
                    reason: format!("on the GPU: {e}"),
                })?;
        }
        Ok(())
    }

    /// One frame through the chain, synchronously (for `image` and tests).
    pub fn apply(&mut self, gpu: &Gpu, frame: &Frame) -> Result<Frame> {
        let input = DevFrame::upload(gpu, frame)?;
        let mut outs = self.alloc_outputs(gpu)?;
        self.run(gpu, &input, &mut outs)?;
        outs.last().unwrap_or(&input).download(gpu)
    }
}

/// Compiles (or loads from the cache) the kernels `chain` and the stage's
/// YUV conversions use, by setting the chain up once on a small frame, so a
/// first start compiles before the stream starts rather than on its first
/// frame (where a live source would drop frames meanwhile). Best effort: a
/// chain that cannot take the small frame is set up on the real one later.
pub fn warm_up(gpu: &Gpu, chain: &dyn GpuHalves) {
    let _ = gpu.function("yuv.cu", "yuv420_to_rgba");
    let _ = GpuChain::new(gpu, chain, 64, 64, DevFormat::Rgba);
}

/// One slot of the ring.
struct Slot {
    host_in: PinnedHostSlice<u8>,
    host_out: PinnedHostSlice<u8>,
    /// The uploaded YUV bytes, when the input layout is YUV.
    yuv_in: Option<CudaSlice<u8>>,
    /// The YUV bytes to download, when the output layout is YUV.
    yuv_out: Option<CudaSlice<u8>>,
    dev_in: DevFrame,
    outs: Vec<DevFrame>,
    uploaded: CudaEvent,
    computed: CudaEvent,
    downloaded: CudaEvent,
}

/// The ring: frames go in with [`Stage::push`] and come out, in order, from
/// `push`, [`Stage::poll`] and [`Stage::finish`].
pub struct Stage<T> {
    gpu: Gpu,
    chain: GpuChain,
    input: Layout,
    output: Layout,
    size: (usize, usize),
    up: Arc<CudaStream>,
    down: Arc<CudaStream>,
    slots: Vec<Slot>,
    /// Slots in flight, oldest first, with what came with each frame.
    in_flight: VecDeque<(usize, T)>,
    /// Frames taken out of the ring and not yet returned.
    ready: VecDeque<(Picture, T)>,
    next: usize,
    /// Run each frame to the end before taking the next (`--no-overlap`).
    serial: bool,
    /// Frames started so far, and the count at which to fail as if the GPU
    /// had (`SEAMSTREAM_INJECT_GPU_FAULT_AFTER`, for tests of what a run
    /// does when the GPU fails mid-file).
    started: u64,
    fault_after: Option<u64>,
    /// Time spent copying frames into the pinned input buffers.
    copy_in: Duration,
}

fn event(gpu: &Gpu) -> Result<CudaEvent> {
    gpu.ctx()
        .new_event(Some(sys::CUevent_flags::CU_EVENT_BLOCKING_SYNC))
        .map_err(|e| cuda_err("creating an event", e))
}

impl<T> Stage<T> {
    /// A ring of `slots` (at least 2) for `width`×`height` input frames of
    /// `format`, giving frames out. Everything is allocated here.
    pub fn new(
        gpu: &Gpu,
        chain: &dyn GpuHalves,
        width: usize,
        height: usize,
        format: DevFormat,
        slots: usize,
    ) -> Result<Stage<T>> {
        Self::with_layouts(
            gpu,
            chain,
            width,
            height,
            Layout::Frame(format),
            None,
            slots,
        )
    }

    /// A ring whose input crosses PCIe in `input`'s layout and whose output
    /// is converted to `yuv_out` (format, colorimetry) on the device when
    /// given; the chain sees RGBA for a YUV input.
    pub fn with_layouts(
        gpu: &Gpu,
        chain: &dyn GpuHalves,
        width: usize,
        height: usize,
        input: Layout,
        yuv_out: Option<(PixelFormat, Colorimetry)>,
        slots: usize,
    ) -> Result<Stage<T>> {
        let format = match input {
            Layout::Frame(f) => f,
            Layout::Yuv(..) => DevFormat::Rgba,
        };
        let chain = GpuChain::new(gpu, chain, width, height, format)?;
        let (ow, oh, of) = chain.output();
        let output = match yuv_out {
            Some((f, c)) => Layout::Yuv(f, c),
            None => Layout::Frame(of),
        };
        let in_bytes = input.bytes(width, height)?.max(1);
        let out_bytes = output.bytes(ow, oh)?.max(1);
        let ctx = gpu.ctx();
        let stream = |what: &str| {
            ctx.new_stream()
                .map_err(|e| cuda_err(&format!("creating the {what} stream"), e))
        };
        let (up, down) = (stream("upload")?, stream("download")?);
        let bytes = |n: usize, what: &str| {
            gpu.stream().alloc_zeros::<u8>(n).map_err(|e| {
                cuda_err(
                    &format!("allocating the {what} ({} MB)", n.div_ceil(1 << 20)),
                    e,
                )
            })
        };
        let slots = (0..slots.max(2))
            .map(|_| {
                // Device memory first: a frame too large for the GPU fails
                // here at once, before gigabytes of host memory are pinned.
                let dev_in = DevFrame::alloc(gpu, width, height, format)?;
                let outs = chain.alloc_outputs(gpu)?;
                let yuv_in = match input {
                    Layout::Yuv(..) => Some(bytes(in_bytes, "YUV input")?),
                    Layout::Frame(_) => None,
                };
                let yuv_out = match output {
                    Layout::Yuv(..) => Some(bytes(out_bytes, "YUV output")?),
                    Layout::Frame(_) => None,
                };
                // SAFETY: the buffers are written (by a copy of a frame, or by
                // a download) before anything reads them.
                let host_in = unsafe {
                    ctx.alloc_pinned_with_flags::<u8>(in_bytes, sys::CU_MEMHOSTALLOC_WRITECOMBINED)
                }
                .map_err(|e| cuda_err("allocating pinned input memory", e))?;
                // SAFETY: as above: a download fills it before it is read.
                let host_out = unsafe { ctx.alloc_pinned_with_flags::<u8>(out_bytes, 0) }
                    .map_err(|e| cuda_err("allocating pinned output memory", e))?;
                Ok(Slot {
                    host_in,
                    host_out,
                    yuv_in,
                    yuv_out,
                    dev_in,
                    outs,
                    uploaded: event(gpu)?,
                    computed: event(gpu)?,
                    downloaded: event(gpu)?,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Stage {
            gpu: gpu.clone(),
            chain,
            input,
            output,
            size: (width, height),
            up,
            down,
            slots,
            in_flight: VecDeque::new(),
            ready: VecDeque::new(),
            next: 0,
            serial: false,
            started: 0,
            fault_after: std::env::var("SEAMSTREAM_INJECT_GPU_FAULT_AFTER")
                .ok()
                .and_then(|v| v.parse().ok()),
            copy_in: Duration::ZERO,
        })
    }

    /// Runs each frame to the end before the next starts (no overlap), for
    /// measuring what the overlap gains.
    pub fn set_serial(&mut self, serial: bool) {
        self.serial = serial;
    }

    pub fn slots(&self) -> usize {
        self.slots.len()
    }

    /// The output frames' width and height, and the layout they come out in.
    pub fn output(&self) -> (usize, usize, Layout) {
        let (w, h, _) = self.chain.output();
        (w, h, self.output)
    }

    /// Frames in the ring.
    pub fn in_flight(&self) -> usize {
        self.in_flight.len()
    }

    /// Time spent so far copying frames into the pinned input buffers (the
    /// host copy of each upload).
    pub fn copy_in_time(&self) -> Duration {
        self.copy_in
    }

    /// Starts `frame` through the ring (with `tag`, returned with its output).
    /// When every slot is busy, first waits for the oldest and returns it.
    pub fn push(&mut self, frame: &Frame, tag: T) -> Result<Vec<(Picture, T)>> {
        self.push_input(Input::Frame(frame), tag)
    }

    /// [`Stage::push`] for a picture in the stage's input layout.
    pub fn push_picture(&mut self, picture: &Picture, tag: T) -> Result<Vec<(Picture, T)>> {
        match picture {
            Picture::Frame(f) => self.push_input(Input::Frame(f), tag),
            Picture::Yuv(y) => self.push_input(Input::Yuv(y), tag),
        }
    }

    /// [`Stage::push`] for a frame in a mapped buffer, copied from its planes
    /// straight into pinned memory. Finished frames go to `out` from their
    /// slots' pinned buffers, oldest first (also those taken to make room
    /// when every slot is busy), instead of coming back as pictures: a ring
    /// is driven either this way, with [`Stage::poll_with`] and
    /// [`Stage::finish_with`], or with the picture methods, not both.
    pub fn push_mapped(
        &mut self,
        frame: &Mapped<'_>,
        tag: T,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        debug_assert!(self.ready.is_empty(), "a ring driven both ways");
        if self.in_flight.len() == self.slots.len() {
            self.take_oldest_with(out)?;
        }
        let s = self.next;
        self.start(s, Input::Mapped(frame))?;
        self.next = (self.next + 1) % self.slots.len();
        self.in_flight.push_back((s, tag));
        if self.serial {
            self.take_oldest_with(out)?;
        }
        self.poll_with(out)
    }

    /// Writes `frame` into every slot's pinned input buffer, for
    /// [`Stage::push_prefilled`].
    pub fn prefill(&mut self, frame: &Frame) -> Result<()> {
        for slot in &mut self.slots {
            let host = slot
                .host_in
                .as_mut_slice()
                .map_err(|e| cuda_err("waiting for an input buffer", e))?;
            write_packed(frame, host);
        }
        Ok(())
    }

    /// Sends the next slot's pinned input as it stands (see
    /// [`Stage::prefill`]): the stage alone, with a source that has its
    /// frames in pinned memory already, as `seamstream bench` measures it.
    /// Its outputs stay in the slots' pinned buffers (a consumer reading
    /// them in place): only the tags of finished frames come back.
    pub fn push_prefilled(&mut self, tag: T) -> Result<Vec<T>> {
        let mut done = Vec::new();
        if self.in_flight.len() == self.slots.len() {
            done.push(self.wait_oldest()?.1);
        }
        let s = self.next;
        self.start(s, Input::Prefilled)?;
        self.next = (self.next + 1) % self.slots.len();
        self.in_flight.push_back((s, tag));
        if self.serial {
            done.push(self.wait_oldest()?.1);
        }
        Ok(done)
    }

    /// Waits for every frame in the ring, leaving the outputs in place.
    pub fn finish_in_place(&mut self) -> Result<Vec<T>> {
        let mut done = Vec::new();
        while !self.in_flight.is_empty() {
            done.push(self.wait_oldest()?.1);
        }
        Ok(done)
    }

    fn push_input(&mut self, frame: Input, tag: T) -> Result<Vec<(Picture, T)>> {
        // Finished frames wait in `ready` until returned, so that an error
        // below loses none of them: `finish` still gives them back.
        if self.in_flight.len() == self.slots.len() {
            let oldest = self.take_oldest()?;
            self.ready.push_back(oldest);
        }
        let s = self.next;
        self.start(s, frame)?;
        self.next = (self.next + 1) % self.slots.len();
        self.in_flight.push_back((s, tag));
        if self.serial {
            let oldest = self.take_oldest()?;
            self.ready.push_back(oldest);
        }
        self.poll()
    }

    /// The frames that have finished, oldest first, without waiting.
    pub fn poll(&mut self) -> Result<Vec<(Picture, T)>> {
        let mut done: Vec<_> = self.ready.drain(..).collect();
        self.poll_with(&mut |f, tag| {
            done.push((f.to_picture()?, tag));
            Ok(())
        })?;
        Ok(done)
    }

    /// Waits for every frame in the ring and returns them in order.
    pub fn finish(&mut self) -> Result<Vec<(Picture, T)>> {
        let mut done: Vec<_> = self.ready.drain(..).collect();
        self.finish_with(&mut |f, tag| {
            done.push((f.to_picture()?, tag));
            Ok(())
        })?;
        Ok(done)
    }

    /// [`Stage::poll`] giving the finished frames to `out` in place.
    pub fn poll_with(&mut self, out: &mut impl FnMut(Finished<'_>, T) -> Result<()>) -> Result<()> {
        debug_assert!(self.ready.is_empty(), "a ring driven both ways");
        while let Some(&(s, _)) = self.in_flight.front() {
            let ready = self.slots[s]
                .downloaded
                .try_is_complete()
                .map_err(|e| cuda_err("asking whether a frame is done", e))?;
            if !ready {
                break;
            }
            self.take_oldest_with(out)?;
        }
        Ok(())
    }

    /// [`Stage::finish`] giving the frames to `out` in place.
    pub fn finish_with(
        &mut self,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        debug_assert!(self.ready.is_empty(), "a ring driven both ways");
        while !self.in_flight.is_empty() {
            self.take_oldest_with(out)?;
        }
        Ok(())
    }

    /// Copies `frame` into slot `s`'s pinned buffer and enqueues its upload,
    /// the chain and the download, ordered by the slot's events.
    fn start(&mut self, s: usize, frame: Input) -> Result<()> {
        if self.fault_after == Some(self.started) {
            return Err(Error::Device(format!(
                "CUDA: the GPU failed after {} frames (injected by SEAMSTREAM_INJECT_GPU_FAULT_AFTER)",
                self.started
            )));
        }
        self.started += 1;
        let gpu = self.gpu.clone();
        let (w, h) = self.size;
        let given = match frame {
            Input::Frame(f) => (f.width(), f.height(), Layout::Frame(DevFormat::of(f))),
            Input::Yuv(y) => (
                y.width(),
                y.height(),
                Layout::Yuv(y.format, self.colorimetry_in()),
            ),
            Input::Mapped(m) => (
                m.width,
                m.height,
                Layout::of_format(m.format, self.colorimetry_in()),
            ),
            Input::Prefilled => (w, h, self.input),
        };
        if given != (w, h, self.input) {
            return Err(Error::BadFrame(format!(
                "the GPU stage was set up for {w}x{h} {:?} frames and got a {}x{} {:?} one; seamstream needs one size and format per run",
                self.input, given.0, given.1, given.2
            )));
        }
        let slot = &mut self.slots[s];
        // Waits for this buffer's last upload (long done: the slot's
        // download, which followed it, has been taken).
        let host = slot
            .host_in
            .as_mut_slice()
            .map_err(|e| cuda_err("waiting for an input buffer", e))?;
        let copy = Instant::now();
        match frame {
            Input::Frame(f) => write_packed(f, host),
            Input::Yuv(y) => write_yuv(y, host),
            Input::Mapped(m) => pack_planes(&m.planes, self.input.planes(w, h), host)?,
            Input::Prefilled => {}
        }
        self.copy_in += copy.elapsed();
        let n = self.input.bytes(w, h)?;
        if n > 0 {
            let up = &self.up;
            match &mut slot.yuv_in {
                Some(d) => up.memcpy_htod(&slot.host_in, &mut d.slice_mut(..n)),
                None => up.memcpy_htod(&slot.host_in, &mut slot.dev_in.data.slice_mut(..n)),
            }
            .map_err(|e| cuda_err("uploading a frame", e))?;
        }
        slot.uploaded
            .record(&self.up)
            .map_err(|e| cuda_err("recording an upload", e))?;
        gpu.stream()
            .wait(&slot.uploaded)
            .map_err(|e| cuda_err("ordering the chain after the upload", e))?;
        if let (Layout::Yuv(f, c), Some(yuv)) = (self.input, &slot.yuv_in) {
            yuv420_to_rgba(&gpu, yuv, f, w, h, c, &mut slot.dev_in)?;
        }
        self.chain.run(&gpu, &slot.dev_in, &mut slot.outs)?;
        let result = slot.outs.last().unwrap_or(&slot.dev_in);
        if let (Layout::Yuv(f, c), Some(yuv)) = (self.output, &mut slot.yuv_out) {
            rgba_to_yuv420(&gpu, result, f, c, yuv)?;
        }
        slot.computed
            .record(gpu.stream())
            .map_err(|e| cuda_err("recording the chain", e))?;
        self.down
            .wait(&slot.computed)
            .map_err(|e| cuda_err("ordering the download after the chain", e))?;
        let n = self.output.bytes(result.width, result.height)?;
        if n > 0 {
            match &slot.yuv_out {
                Some(d) => self.down.memcpy_dtoh(&d.slice(..n), &mut slot.host_out),
                None => self
                    .down
                    .memcpy_dtoh(&result.data.slice(..n), &mut slot.host_out),
            }
            .map_err(|e| cuda_err("downloading a frame", e))?;
        }
        slot.downloaded
            .record(&self.down)
            .map_err(|e| cuda_err("recording a download", e))?;
        Ok(())
    }

    fn colorimetry_in(&self) -> Colorimetry {
        match self.input {
            Layout::Yuv(_, c) => c,
            Layout::Frame(_) => Colorimetry::default(),
        }
    }

    /// Waits for the oldest frame's download; returns its slot and tag.
    fn wait_oldest(&mut self) -> Result<(usize, T)> {
        let (s, tag) = self
            .in_flight
            .pop_front()
            .ok_or_else(|| Error::Device("the GPU stage has no frame in flight".into()))?;
        self.slots[s]
            .downloaded
            .synchronize()
            .map_err(|e| cuda_err("waiting for a frame", e))?;
        Ok((s, tag))
    }

    /// Waits for the oldest frame's download and copies it out.
    fn take_oldest(&mut self) -> Result<(Picture, T)> {
        let mut taken = None;
        self.take_oldest_with(&mut |f, tag| {
            taken = Some((f.to_picture()?, tag));
            Ok(())
        })?;
        taken.ok_or_else(|| Error::Device("the GPU stage gave no frame".into()))
    }

    /// Waits for the oldest frame's download and gives it to `out` in its
    /// slot's pinned buffer.
    fn take_oldest_with(
        &mut self,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        let (s, tag) = self.wait_oldest()?;
        let (width, height, layout) = self.output();
        let bytes = self.slots[s]
            .host_out
            .as_slice()
            .map_err(|e| cuda_err("reading a downloaded frame", e))?;
        let n = layout.bytes(width, height)?;
        let finished = Finished {
            bytes: &bytes[..n],
            width,
            height,
            layout,
        };
        out(finished, tag)
    }
}

/// What [`Stage::start`] copies in.
#[derive(Clone, Copy)]
enum Input<'a> {
    Frame(&'a Frame),
    Yuv(&'a Yuv420),
    Mapped(&'a Mapped<'a>),
    /// What the slot's pinned buffer already holds.
    Prefilled,
}

/// A YUV frame's planes one after another, rows packed (the layout of
/// [`crate::cuda::ops::yuv`]): Y, then U and V (I420) or UV (NV12).
pub fn write_yuv(y: &Yuv420, out: &mut [u8]) {
    let mut at = 0;
    for p in [&y.y, &y.u, &y.v] {
        for r in 0..p.height() {
            let row = p.row(r);
            out[at..at + row.len()].copy_from_slice(row);
            at += row.len();
        }
    }
}

/// Rows this many at a time to a rayon task, for the plane copies: one
/// thread alone does not fill the memory bus.
const ROWS_A_TASK: usize = 16;

/// Bytes a plane of `rows` rows of `row` bytes, `stride` bytes apart, spans
/// (the last row without its padding); `None` if that overflows or the
/// stride is shorter than a row.
fn plane_span(row: usize, rows: usize, stride: usize) -> Option<usize> {
    if rows == 0 || row == 0 {
        return Some(0);
    }
    (stride >= row).then_some(())?;
    stride.checked_mul(rows - 1)?.checked_add(row)
}

/// Copies strided planes (as a mapped buffer holds them) into `out`, rows
/// packed, planes one after another: `shape` gives each plane's bytes a row
/// and rows ([`Layout::planes`]). The bytes of [`write_yuv`] or
/// [`write_packed`] for the same pixels, in one copy.
pub fn pack_planes(
    planes: &[(&[u8], usize); 3],
    shape: [(usize, usize); 3],
    out: &mut [u8],
) -> Result<()> {
    use rayon::prelude::*;
    let mut at = 0;
    for (&(data, stride), (row, rows)) in planes.iter().zip(shape) {
        let n = row * rows;
        if n == 0 {
            continue;
        }
        let span = plane_span(row, rows, stride).filter(|&s| s <= data.len());
        let (Some(_), Some(dst)) = (span, out.get_mut(at..at + n)) else {
            return Err(Error::BadFrame(format!(
                "a plane of {rows} rows of {row} bytes, {stride} bytes apart, does not fit \
                 the {} bytes mapped or the {} bytes of the slot",
                data.len(),
                out.len()
            )));
        };
        dst.par_chunks_mut(row * ROWS_A_TASK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, o) in chunk.chunks_exact_mut(row).enumerate() {
                    let src = (c * ROWS_A_TASK + i) * stride;
                    o.copy_from_slice(&data[src..src + row]);
                }
            });
        at += n;
    }
    Ok(())
}

/// The inverse of [`pack_planes`]: packed planes of `shape` into `dst`, plane
/// `i` starting at `offsets[i]` with rows `strides[i]` bytes apart (a video
/// buffer's layout), the padding after each row zeroed.
pub fn unpack_planes(
    packed: &[u8],
    shape: [(usize, usize); 3],
    dst: &mut [u8],
    offsets: &[usize],
    strides: &[usize],
) -> Result<()> {
    use rayon::prelude::*;
    let mut at = 0;
    for (i, (row, rows)) in shape.into_iter().enumerate() {
        let n = row * rows;
        if n == 0 {
            continue;
        }
        let (off, stride) = match (offsets.get(i), strides.get(i)) {
            (Some(&o), Some(&s)) => (o, s),
            _ => (usize::MAX, 0),
        };
        let span = plane_span(row, rows, stride).and_then(|s| off.checked_add(s));
        let (Some(end), Some(src)) = (span, packed.get(at..at + n)) else {
            return Err(Error::BadFrame(format!(
                "plane {i} ({rows} rows of {row} bytes) has no room in the output layout"
            )));
        };
        // The last row's padding too, where the buffer holds it.
        let padded = off.saturating_add(stride.saturating_mul(rows));
        let Some(plane) = dst.get_mut(off..padded.min(dst.len()).max(end)) else {
            return Err(Error::BadFrame(format!(
                "plane {i} ({rows} rows of {row} bytes, {stride} apart, at {off}) does not fit \
                 a buffer of {} bytes",
                dst.len()
            )));
        };
        plane
            .par_chunks_mut(stride * ROWS_A_TASK)
            .zip(src.par_chunks(row * ROWS_A_TASK))
            .for_each(|(d, s)| {
                for (o, r) in d.chunks_mut(stride).zip(s.chunks_exact(row)) {
                    let (pixels, padding) = o.split_at_mut(row);
                    pixels.copy_from_slice(r);
                    padding.fill(0);
                }
            });
        at += n;
    }
    Ok(())
}

/// The inverse of [`write_yuv`].
pub fn read_yuv(bytes: &[u8], format: PixelFormat, w: usize, h: usize) -> Result<Yuv420> {
    let mut y = Yuv420::new(format, w, h)?;
    let mut at = 0;
    for p in [&mut y.y, &mut y.u, &mut y.v] {
        for row in p.rows_mut() {
            let n = row.len();
            row.copy_from_slice(&bytes[at..at + n]);
            at += n;
        }
    }
    Ok(y)
}

/// Writes a frame's pixels into `out`, rows packed; rows are copied in
/// parallel (one thread alone does not fill the memory bus).
pub fn write_packed(frame: &Frame, out: &mut [u8]) {
    use rayon::prelude::*;
    fn rows<T: Copy + Sync>(
        p: &Plane<T>,
        bpp: usize,
        out: &mut [u8],
        bytes: impl Fn(&[T]) -> &[u8] + Sync,
    ) {
        let row = (bpp * p.width()).max(1);
        out.par_chunks_mut(row * 16)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, o) in chunk.chunks_exact_mut(row).enumerate() {
                    let y = c * 16 + i;
                    if y < p.height() {
                        o.copy_from_slice(bytes(p.row(y)));
                    }
                }
            });
    }
    match frame {
        Frame::Rgba(p) => rows(p, 4, out, |r| r.as_flattened()),
        Frame::Gray(p) => rows(p, 1, out, |r| r),
    }
}

/// A frame from packed rows.
pub fn read_packed(bytes: &[u8], w: usize, h: usize, f: DevFormat) -> Result<Frame> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    Ok(match f {
        DevFormat::Gray => Frame::Gray(Plane::from_vec(w, h, bytes.to_vec())?),
        DevFormat::Rgba => {
            let mut px = vec![[0u8; 4]; w * h];
            px.as_flattened_mut()
                .par_chunks_mut(CHUNK)
                .zip(bytes.par_chunks(CHUNK))
                .for_each(|(d, s)| d.copy_from_slice(s));
            Frame::Rgba(Plane::from_vec(w, h, px)?)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [(usize, usize); 5] = [(1, 1), (5, 3), (17, 3), (64, 48), (321, 241)];

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

    fn random_yuv(format: PixelFormat, w: usize, h: usize, seed: u64) -> Yuv420 {
        let mut y = Yuv420::new(format, w, h).unwrap();
        for (k, p) in [&mut y.y, &mut y.u, &mut y.v].into_iter().enumerate() {
            let bytes = noise(p.width() * p.height(), seed + k as u64);
            *p = Plane::from_vec(p.width(), p.height(), bytes).unwrap();
        }
        y
    }

    /// Rows of `row` bytes from `packed`, `stride` bytes apart, the padding
    /// filled with junk: a plane as a mapped buffer may hold it.
    fn strided(packed: &[u8], row: usize, rows: usize, stride: usize) -> Vec<u8> {
        let mut out = vec![0xEE; stride * rows];
        for y in 0..rows {
            out[y * stride..y * stride + row].copy_from_slice(&packed[y * row..(y + 1) * row]);
        }
        out
    }

    /// Pictures laid out packed the old way (a picture, then `write_yuv` or
    /// `write_packed`), for every input format at odd and even sizes.
    fn cases() -> Vec<(PixelFormat, usize, usize, Vec<u8>)> {
        let mut cases = Vec::new();
        for (i, &(w, h)) in SIZES.iter().enumerate() {
            for format in [PixelFormat::Nv12, PixelFormat::I420] {
                let yuv = random_yuv(format, w, h, 10 * i as u64);
                let mut old = vec![0u8; yuv420_len(format, w, h).unwrap()];
                write_yuv(&yuv, &mut old);
                cases.push((format, w, h, old));
            }
            let px = noise(4 * w * h, 7 + i as u64);
            let rgba = Plane::from_vec(
                w,
                h,
                px.chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect(),
            )
            .unwrap();
            let mut old = vec![0u8; 4 * w * h];
            write_packed(&Frame::Rgba(rgba), &mut old);
            cases.push((PixelFormat::Rgba8, w, h, old));
        }
        cases
    }

    /// Packing mapped planes whose strides exceed their rows gives the bytes
    /// of the old two copies (mapped buffer → picture → pinned buffer).
    #[test]
    fn packing_strided_planes_gives_the_old_paths_bytes() {
        for (format, w, h, old) in cases() {
            let shape = Layout::of_format(format, Colorimetry::default()).planes(w, h);
            let mut at = 0;
            let planes: Vec<(Vec<u8>, usize)> = shape
                .iter()
                .enumerate()
                .map(|(i, &(row, rows))| {
                    let stride = row + 1 + 2 * i;
                    let p = strided(&old[at..at + row * rows], row, rows, stride);
                    at += row * rows;
                    (p, stride)
                })
                .collect();
            let mapped = [0, 1, 2].map(|i| (planes[i].0.as_slice(), planes[i].1));
            let mut out = vec![0x55; old.len()];
            pack_planes(&mapped, shape, &mut out).unwrap();
            assert!(out == old, "{format} {w}x{h}: packed bytes differ");
        }
    }

    /// A plane shorter than its rows and stride say is an error, not a panic.
    #[test]
    fn a_short_mapped_plane_is_an_error() {
        let shape = Layout::Frame(DevFormat::Rgba).planes(4, 3);
        let data = vec![0u8; 16 * 3 - 1];
        let mut out = vec![0u8; 48];
        let planes = [(data.as_slice(), 16), (&[][..], 0), (&[][..], 0)];
        assert!(pack_planes(&planes, shape, &mut out).is_err());
        // A stride shorter than a row.
        let long = vec![0u8; 48];
        let planes = [(long.as_slice(), 15), (&[][..], 0), (&[][..], 0)];
        assert!(pack_planes(&planes, shape, &mut out).is_err());
    }

    /// Unpacking into a dirty buffer at a video layout's offsets and strides
    /// gives the old path's bytes (a zeroed buffer with the rows written at
    /// the same places): every row's padding is zeroed.
    #[test]
    fn unpacking_into_a_strided_layout_gives_the_old_paths_bytes() {
        for (format, w, h, packed) in cases() {
            let shape = Layout::of_format(format, Colorimetry::default()).planes(w, h);
            // GStreamer's strides: rows rounded up to 4 bytes.
            let strides: Vec<usize> = shape
                .iter()
                .map(|&(row, _)| row.next_multiple_of(4))
                .collect();
            let mut offsets = vec![0];
            for (i, &(_, rows)) in shape.iter().enumerate().take(2) {
                offsets.push(offsets[i] + strides[i] * rows);
            }
            let size = offsets[2] + strides[2] * shape[2].1;
            let mut old = vec![0u8; size];
            let mut at = 0;
            for (i, &(row, rows)) in shape.iter().enumerate() {
                for y in 0..rows {
                    let o = offsets[i] + y * strides[i];
                    old[o..o + row].copy_from_slice(&packed[at..at + row]);
                    at += row;
                }
            }
            let mut dst = vec![0xAB; size];
            unpack_planes(&packed, shape, &mut dst, &offsets, &strides).unwrap();
            assert!(dst == old, "{format} {w}x{h}: unpacked bytes differ");
            // The round trip through a packing gives the packed bytes back.
            let planes = [0, 1, 2].map(|i| (&dst[offsets[i]..], strides[i]));
            let mut back = vec![0u8; packed.len()];
            pack_planes(&planes, shape, &mut back).unwrap();
            assert!(back == packed, "{format} {w}x{h}: round trip differs");
            // One byte short of the last row is an error, not a panic.
            let mut short = vec![0u8; size - (strides[2] - shape[2].0) - 1];
            if shape[2].0 > 0 {
                assert!(unpack_planes(&packed, shape, &mut short, &offsets, &strides).is_err());
            }
        }
    }
}
