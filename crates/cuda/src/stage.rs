//! The GPU stage: a chain of [`GpuOp`](super::GpuOp)s run on a ring of slots, so that the
//! upload of frame *i+1* and the download of frame *i−1* overlap the chain's
//! work on frame *i* (docs/DESIGN.md §1).
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

use cudarc::driver::{CudaEvent, CudaSlice, CudaStream, DevicePtr, PinnedHostSlice, sys};

use super::ops::yuv::{rgba_to_yuv420, yuv420_len, yuv420_to_rgba};
use super::{DevFormat, DevFrame, Gpu, GpuHalves, Prepared, cuda_err};
use crate::color::Colorimetry;
use crate::error::{Error, Result};
use crate::frame::{Frame, Picture, PixelFormat};
pub use crate::planes::DevicePlane;
use crate::planes::{plane_shapes, read_packed, read_yuv};

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

    /// The pixel format of frames in this layout (the inverse of
    /// [`Layout::of_format`]).
    pub fn format(&self) -> PixelFormat {
        match *self {
            Layout::Frame(DevFormat::Rgba) => PixelFormat::Rgba8,
            Layout::Frame(DevFormat::Gray) => PixelFormat::Gray8,
            Layout::Yuv(f, _) => f,
        }
    }

    /// Each plane's bytes a row and rows, in the order [`Layout::bytes`]
    /// counts them ([`plane_shapes`]).
    pub fn planes(&self, w: usize, h: usize) -> [(usize, usize); 3] {
        plane_shapes(self.format(), w, h)
    }
}

/// Where a frame comes into the ring from: written by `fill` into the slot's
/// pinned buffer and uploaded, or copied from device memory (planes in the
/// ring's input layout) on the device.
pub enum Source<F> {
    Host(F),
    Device([DevicePlane; 3]),
}

/// Where a finished frame goes instead of its slot's pinned buffer (planes
/// in the ring's output layout): device memory (GStreamer's CUDA memory),
/// copied on the device; or pinned host memory that is handed on as it is
/// (a buffer for the encoder), which the download writes straight into.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Target {
    Device([DevicePlane; 3]),
    Pinned([DevicePlane; 3]),
}

/// Copies a frame's planes between memory of its own (`planes`, each with
/// its own pitch: device memory, or pinned host memory when `on_host`) and
/// a packed device buffer (`packed`: rows packed, planes of `shape` one
/// after another), on `stream`; into the packed buffer when `inward`, out
/// of it otherwise.
pub(crate) fn copy_planes(
    stream: &CudaStream,
    (planes, on_host): (&[DevicePlane; 3], bool),
    packed: u64,
    shape: [(usize, usize); 3],
    inward: bool,
) -> Result<()> {
    let mut at = 0u64;
    for (plane, (row, rows)) in planes.iter().zip(shape) {
        if row * rows == 0 {
            continue;
        }
        if plane.ptr == 0 || plane.pitch < row {
            return Err(Error::BadFrame(format!(
                "a device plane of {rows} rows of {row} bytes is given {} bytes apart at {:#x}",
                plane.pitch, plane.ptr
            )));
        }
        let (src, src_pitch, dst, dst_pitch) = if inward {
            (plane.ptr, plane.pitch, packed + at, row)
        } else {
            (packed + at, row, plane.ptr, plane.pitch)
        };
        let device = sys::CUmemorytype::CU_MEMORYTYPE_DEVICE;
        let (src_type, dst_type) = match (on_host, inward) {
            (false, _) => (device, device),
            (true, true) => (sys::CUmemorytype::CU_MEMORYTYPE_HOST, device),
            (true, false) => (device, sys::CUmemorytype::CU_MEMORYTYPE_HOST),
        };
        let host = sys::CUmemorytype::CU_MEMORYTYPE_HOST;
        let copy = sys::CUDA_MEMCPY2D {
            srcXInBytes: 0,
            srcY: 0,
            srcMemoryType: src_type,
            srcHost: if src_type == host {
                src as *const std::ffi::c_void
            } else {
                std::ptr::null()
            },
            srcDevice: src,
            srcArray: std::ptr::null_mut(),
            srcPitch: src_pitch,
            dstXInBytes: 0,
            dstY: 0,
            dstMemoryType: dst_type,
            dstHost: if dst_type == host {
                dst as *mut std::ffi::c_void
            } else {
                std::ptr::null_mut()
            },
            dstDevice: dst,
            dstArray: std::ptr::null_mut(),
            dstPitch: dst_pitch,
            WidthInBytes: row,
            Height: rows,
        };
        // SAFETY: both sides hold at least `rows` rows of `row` bytes at
        // their pitches: the packed buffer was allocated for the layout, and
        // the caller's planes come from a mapped buffer of the negotiated
        // size (device memory, or pinned host memory the caller allocated
        // for the layout), kept alive until the copy's event is done.
        unsafe { sys::cuMemcpy2DAsync_v2(&copy, stream.cu_stream()) }
            .result()
            .map_err(|e| cuda_err("copying a frame in device memory", e))?;
        at += (row * rows) as u64;
    }
    Ok(())
}

/// A finished frame in its slot's pinned output buffer, for the consumer of
/// [`Stage::push`], [`Stage::poll`] and [`Stage::finish`] to copy out before
/// the slot is used again: rows packed, planes one after another as
/// [`Layout::planes`] lists them. A frame the ring was told to leave in
/// device memory has no bytes here.
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
            Layout::Frame(_) => {
                Picture::Frame(read_packed(self.bytes, w, h, self.layout.format())?)
            }
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
            .map(|&(w, h, f)| DevFrame::alloc_output(gpu, w, h, f))
            .collect()
    }

    /// Enqueues the whole chain on the compute stream; the result is in the
    /// last of `outs`, or in `input` for an empty chain.
    pub fn run(&mut self, gpu: &Gpu, input: &DevFrame, outs: &mut [DevFrame]) -> Result<()> {
        for (i, (name, op)) in self.ops.iter_mut().enumerate() {
            let (done, rest) = outs.split_at_mut(i);
            let src = done.last().unwrap_or(input);
            op.run(gpu, src, &mut rest[0]).map_err(|e| match e {
                // The op's own failure says its name once.
                Error::OpFailed { op, reason } if op == *name => Error::OpFailed {
                    op,
                    reason: format!("on the GPU: {reason}"),
                },
                e => Error::OpFailed {
                    op: (*name).into(),
                    reason: format!("on the GPU: {e}"),
                },
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
    // Every file the chain will load, compiled at once on parallel threads.
    let mut files = vec!["yuv.cu".to_string()];
    if let Ok(halves) = chain.gpu_halves() {
        for g in &halves {
            files.extend(g.kernel_files(gpu));
        }
    }
    super::module::prefetch(&files, gpu.arch());
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

/// The ring: frames go in with [`Stage::push`] and come out, in order, to
/// the consumer given to `push`, [`Stage::poll`] and [`Stage::finish`], in
/// their slots' pinned buffers.
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
    in_flight: VecDeque<(usize, T, bool)>,
    /// (Each with whether its result went to the caller's memory.)
    next: usize,
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
        // The slots' device memory was allocated and zeroed in the compute
        // stream's order (`cuMemAllocAsync`, which may hand out a block freed
        // in that stream with work still queued on it, and a memset); the
        // stream-ordered allocator lets another stream use it only after an
        // event that follows both. The upload stream writes a slot's input
        // first, so both streams wait here once. (Later uploads into a slot
        // follow its download.)
        for (s, what) in [(&up, "upload"), (&down, "download")] {
            s.join(gpu.stream()).map_err(|e| {
                cuda_err(
                    &format!("ordering the {what} stream after the allocations"),
                    e,
                )
            })?;
        }
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
            next: 0,
            started: 0,
            fault_after: crate::fault::after("SEAMSTREAM_INJECT_GPU_FAULT_AFTER"),
            copy_in: Duration::ZERO,
        })
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

    /// Starts a `width`×`height` frame in `format` through the ring, with
    /// `tag` (given back with its output): `fill` writes it into the slot's
    /// pinned input buffer, in the stage's input layout ([`Layout::planes`];
    /// [`crate::planes`] has the writers). When every slot is busy, first
    /// waits for the oldest frame. Finished frames go to `out` in their
    /// slots' pinned buffers, oldest first.
    pub fn push(
        &mut self,
        shape: (usize, usize, PixelFormat),
        tag: T,
        fill: impl FnOnce(&mut [u8]) -> Result<()>,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        self.push_from(shape, tag, Source::Host(fill), None, out)
    }

    /// [`Stage::push`] from either side of PCIe: the frame comes from `src`,
    /// and the result goes to `dst` (planes in the output layout) when
    /// given, else to the slot's pinned buffer. The caller keeps the memory
    /// of both alive until the frame comes out.
    pub fn push_from(
        &mut self,
        (width, height, format): (usize, usize, PixelFormat),
        tag: T,
        src: Source<impl FnOnce(&mut [u8]) -> Result<()>>,
        dst: Option<Target>,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        if self.in_flight.len() == self.slots.len() {
            self.take_oldest(out)?;
        }
        let s = self.next;
        self.start(s, (width, height, format), src, dst)?;
        self.next = (self.next + 1) % self.slots.len();
        self.in_flight.push_back((s, tag, dst.is_some()));
        self.poll(out)
    }

    /// Gives the frames that have finished to `out`, oldest first, without
    /// waiting.
    pub fn poll(&mut self, out: &mut impl FnMut(Finished<'_>, T) -> Result<()>) -> Result<()> {
        while let Some(&(s, ..)) = self.in_flight.front() {
            let ready = self.slots[s]
                .downloaded
                .try_is_complete()
                .map_err(|e| cuda_err("asking whether a frame is done", e))?;
            if !ready {
                break;
            }
            self.take_oldest(out)?;
        }
        Ok(())
    }

    /// Waits for the oldest frames until the ring holds at most `held`, and
    /// gives them to `out` in order.
    pub fn settle(
        &mut self,
        held: usize,
        out: &mut impl FnMut(Finished<'_>, T) -> Result<()>,
    ) -> Result<()> {
        while self.in_flight.len() > held {
            self.take_oldest(out)?;
        }
        Ok(())
    }

    /// Waits for every frame in the ring and gives them to `out` in order.
    pub fn finish(&mut self, out: &mut impl FnMut(Finished<'_>, T) -> Result<()>) -> Result<()> {
        while !self.in_flight.is_empty() {
            self.take_oldest(out)?;
        }
        Ok(())
    }

    /// Has `fill` write a `width`×`height` frame in `format` into slot `s`'s
    /// pinned buffer and enqueues its upload, the chain and the download,
    /// ordered by the slot's events.
    fn start(
        &mut self,
        s: usize,
        (width, height, format): (usize, usize, PixelFormat),
        src: Source<impl FnOnce(&mut [u8]) -> Result<()>>,
        dst: Option<Target>,
    ) -> Result<()> {
        if self.fault_after == Some(self.started) {
            return Err(Error::Device(format!(
                "CUDA: the GPU failed after {} frames (injected by SEAMSTREAM_INJECT_GPU_FAULT_AFTER)",
                self.started
            )));
        }
        self.started += 1;
        let gpu = self.gpu.clone();
        let (w, h) = self.size;
        let given = Layout::of_format(format, self.colorimetry_in());
        if (width, height, given) != (w, h, self.input) {
            return Err(Error::BadFrame(format!(
                "the GPU stage was set up for {w}x{h} {:?} frames and got a {width}x{height} {given:?} one; seamstream needs one size and format per run",
                self.input
            )));
        }
        let slot = &mut self.slots[s];
        let n = self.input.bytes(w, h)?;
        match src {
            Source::Host(fill) => {
                // Waits for this buffer's last upload (long done: the slot's
                // download, which followed it, has been taken).
                let host = slot
                    .host_in
                    .as_mut_slice()
                    .map_err(|e| cuda_err("waiting for an input buffer", e))?;
                let copy = Instant::now();
                fill(host)?;
                self.copy_in += copy.elapsed();
                if n > 0 {
                    let up = &self.up;
                    match &mut slot.yuv_in {
                        Some(d) => up.memcpy_htod(&slot.host_in, &mut d.slice_mut(..n)),
                        None => up.memcpy_htod(&slot.host_in, &mut slot.dev_in.data.slice_mut(..n)),
                    }
                    .map_err(|e| cuda_err("uploading a frame", e))?;
                }
            }
            Source::Device(planes) => {
                let packed = match &slot.yuv_in {
                    Some(d) => d.device_ptr(&self.up).0,
                    None => slot.dev_in.data.device_ptr(&self.up).0,
                };
                let planes = (&planes, false);
                copy_planes(&self.up, planes, packed, self.input.planes(w, h), true)?;
            }
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
        let (ow, oh) = (result.width, result.height);
        let n = self.output.bytes(ow, oh)?;
        let packed = match &slot.yuv_out {
            Some(d) => d.slice(..n),
            None => result.data.slice(..n),
        };
        match dst {
            Some(Target::Device(planes) | Target::Pinned(planes)) => {
                let on_host = matches!(dst, Some(Target::Pinned(_)));
                let at = packed.device_ptr(&self.down).0;
                let shape = self.output.planes(ow, oh);
                copy_planes(&self.down, (&planes, on_host), at, shape, false)?;
            }
            None if n > 0 => self
                .down
                .memcpy_dtoh(&packed, &mut slot.host_out)
                .map_err(|e| cuda_err("downloading a frame", e))?,
            None => {}
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
    fn wait_oldest(&mut self) -> Result<(usize, T, bool)> {
        let (s, tag, elsewhere) = self
            .in_flight
            .pop_front()
            .ok_or_else(|| Error::Device("the GPU stage has no frame in flight".into()))?;
        self.slots[s]
            .downloaded
            .synchronize()
            .map_err(|e| cuda_err("waiting for a frame", e))?;
        Ok((s, tag, elsewhere))
    }

    /// Waits for the oldest frame's download and gives it to `out` in its
    /// slot's pinned buffer.
    fn take_oldest(&mut self, out: &mut impl FnMut(Finished<'_>, T) -> Result<()>) -> Result<()> {
        let (s, tag, elsewhere) = self.wait_oldest()?;
        let (width, height, layout) = self.output();
        let bytes = self.slots[s]
            .host_out
            .as_slice()
            .map_err(|e| cuda_err("reading a downloaded frame", e))?;
        let n = if elsewhere {
            0
        } else {
            layout.bytes(width, height)?
        };
        let finished = Finished {
            bytes: &bytes[..n],
            width,
            height,
            layout,
        };
        out(finished, tag)
    }
}
