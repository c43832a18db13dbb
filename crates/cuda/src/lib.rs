//! The CUDA backend: the device and its compute stream, kernels compiled at
//! run time by NVRTC (cached on disk), frames on the device, and the GPU
//! half of each operation. Its `unsafe` is the device's: cudarc's launches
//! and copies.
//!
//! cudarc loads `libcuda` and `libnvrtc` when first used, so the crate builds
//! and runs without a CUDA toolkit; [`Gpu::open`] and the compiler check
//! that the libraries are there first (cudarc panics when they are not), and
//! give [`Error::MissingLibrary`] instead.

pub mod halves;
pub(crate) mod launch;
pub mod module;
pub mod nvdec;
pub mod ops;
pub mod pinned;
pub mod shared;
pub mod stage;
#[doc(hidden)]
pub mod testing;
pub mod timing;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use cudarc::driver::{
    CudaContext, CudaFunction, CudaModule, CudaSlice, CudaStream, DevicePtr, DevicePtrMut, sys,
};

// The host half's modules, at this crate's root as at the library's, so
// that a path reads the same in both crates (`crate::frame::…`). Its
// operations are named in full, `seamstream_core::ops::…`, apart from this
// crate's GPU halves, `crate::ops::…`.
use seamstream_core::{color, error, fault, frame, planes};

pub use halves::gpu_half;
pub use seamstream_core::frame::DevFormat;

use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

/// Whether the experiment switch `var` (`SEAMSTREAM_DP_COARSE=0`,
/// `SEAMSTREAM_GRAPHS=0`) turns a faster path off, to compare against it:
/// read only in a build with the `experiments` feature, never for users.
pub(crate) fn switched_off(var: &str) -> bool {
    #[cfg(feature = "experiments")]
    {
        std::env::var(var).is_ok_and(|v| v == "0")
    }
    #[cfg(not(feature = "experiments"))]
    {
        let _ = var;
        false
    }
}

/// A CUDA result as our error, naming what was being done; cudarc's error
/// stays its source.
pub fn cuda_err(doing: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::Cuda {
        doing: doing.into(),
        source: Box::new(e),
    }
}

/// An error unless the CUDA driver library can be loaded: cudarc panics
/// where it cannot, so this is asked before any driver call.
fn driver_present() -> Result<()> {
    // SAFETY: only tries to open the library under its candidate names.
    if unsafe { cudarc::driver::sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::MissingLibrary {
            library: crate::error::CudaLibrary::Driver,
            remedy: "install the NVIDIA driver",
        })
    }
}

/// One GPU, its compute stream, and the kernels loaded on it.
#[derive(Clone)]
pub struct Gpu {
    inner: Arc<Inner>,
}

struct Inner {
    ctx: Arc<CudaContext>,
    stream: Arc<CudaStream>,
    arch: (u32, u32),
    modules: Mutex<HashMap<String, Arc<CudaModule>>>,
    /// The event [`Gpu::order`] records and waits on, made once: a wait
    /// holds the event's state at the time it was enqueued, so the event
    /// can be recorded again at once (under the lock, so that no other
    /// record slips between one call's record and its wait).
    order_event: Mutex<Option<cudarc::driver::CudaEvent>>,
}

impl std::fmt::Debug for Gpu {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "Gpu({}, sm_{}{})",
            self.inner.ctx.ordinal(),
            self.inner.arch.0,
            self.inner.arch.1
        )
    }
}

/// What `seamstream devices` shows of one GPU.
#[derive(Clone, Debug)]
pub struct DeviceInfo {
    pub ordinal: usize,
    pub name: String,
    pub memory_bytes: usize,
    pub compute_capability: (u32, u32),
}

/// The number of GPUs the driver sees; an error if there is no driver.
pub fn device_count() -> Result<usize> {
    driver_present()?;
    CudaContext::device_count()
        .map(|n| n.max(0) as usize)
        .map_err(|e| cuda_err("counting devices", e))
}

/// Every GPU the driver sees.
pub fn devices() -> Result<Vec<DeviceInfo>> {
    (0..device_count()?)
        .map(|i| {
            let ctx = CudaContext::new(i).map_err(|e| cuda_err(&format!("opening GPU {i}"), e))?;
            let (maj, min) = ctx
                .compute_capability()
                .map_err(|e| cuda_err("reading the compute capability", e))?;
            Ok(DeviceInfo {
                ordinal: i,
                name: ctx.name().map_err(|e| cuda_err("reading the name", e))?,
                memory_bytes: ctx
                    .total_mem()
                    .map_err(|e| cuda_err("reading the memory size", e))?,
                compute_capability: (maj as u32, min as u32),
            })
        })
        .collect()
}

/// Where a chain runs, once [`seamstream_core::Device`] is resolved.
#[derive(Debug)]
pub enum Placed {
    Gpu(Gpu),
    /// On the CPU: asked for, or (`auto`) because of `why`.
    Cpu {
        why: Option<Error>,
    },
}

/// The one policy behind `--device`, pipeline files and the elements:
/// `cpu` runs on the CPU; `auto` takes `shared` (a context the caller
/// already has, GStreamer's) or GPU 0, and else the CPU, saying why;
/// `cuda:N` takes `shared` where it is GPU N, else opens GPU N, and is an
/// error when it cannot.
pub fn place(device: seamstream_core::Device, shared: Option<&Gpu>) -> Result<Placed> {
    use seamstream_core::Device;
    match device {
        Device::Cpu => Ok(Placed::Cpu { why: None }),
        Device::Auto => Ok(match shared {
            Some(g) => Placed::Gpu(g.clone()),
            None => match Gpu::open(0) {
                Ok(g) => Placed::Gpu(g),
                Err(e) => Placed::Cpu { why: Some(e) },
            },
        }),
        Device::Cuda(n) => match shared.filter(|g| g.ctx().ordinal() == n) {
            Some(g) => Ok(Placed::Gpu(g.clone())),
            None => Gpu::open(n).map(Placed::Gpu),
        },
    }
}

impl Gpu {
    /// Opens GPU `ordinal`. Errors say whether the driver is missing or the
    /// GPU does not exist, and how many there are.
    pub fn open(ordinal: usize) -> Result<Gpu> {
        let n = device_count()?;
        seamstream_core::trace::mark("CUDA's driver started");
        if n == 0 {
            return Err(Error::NoGpu);
        }
        if ordinal >= n {
            return Err(Error::NoSuchGpu {
                asked: ordinal,
                have: n,
            });
        }
        let ctx = CudaContext::new(ordinal)
            .map_err(|e| cuda_err(&format!("opening GPU {ordinal}"), e))?;
        seamstream_core::trace::mark("CUDA context made");
        Gpu::with_context(ctx)
    }

    /// GPU `ordinal` on a CUDA context someone else made and owns
    /// (GStreamer's, for its CUDA memory), so that both work in one context.
    ///
    /// # Safety
    ///
    /// `handle` must be a live context on GPU `ordinal` that outlives the
    /// returned `Gpu` and every clone of it (cudarc never destroys it: a
    /// reference to its wrapper is kept for the process).
    pub unsafe fn on_context(
        ordinal: usize,
        handle: cudarc::driver::sys::CUcontext,
    ) -> Result<Gpu> {
        driver_present()?;
        let device = cudarc::driver::result::device::get(ordinal as i32)
            .map_err(|e| cuda_err(&format!("opening GPU {ordinal}"), e))?;
        // SAFETY: the caller's promise; cudarc would destroy a context it
        // wraps when the last reference goes, so one is never let go.
        let ctx = unsafe { CudaContext::from_raw_context(ordinal, device, handle) }
            .map_err(|e| cuda_err(&format!("using GStreamer's context on GPU {ordinal}"), e))?;
        std::mem::forget(ctx.clone());
        Gpu::with_context(ctx)
    }

    /// The compute stream and kernel table on `ctx`.
    fn with_context(ctx: Arc<CudaContext>) -> Result<Gpu> {
        let (maj, min) = ctx
            .compute_capability()
            .map_err(|e| cuda_err("reading the compute capability", e))?;
        // The stage orders its streams with its own events; cudarc's
        // per-buffer tracking would add an event record and wait to every
        // launch argument.
        // SAFETY: every buffer is used on one stream, or across streams only
        // behind the stage's events (src/cuda/stage.rs).
        unsafe { ctx.disable_event_tracking() };
        let stream = ctx
            .new_stream()
            .map_err(|e| cuda_err("creating the compute stream", e))?;
        Ok(Gpu {
            inner: Arc::new(Inner {
                ctx,
                stream,
                arch: (maj as u32, min as u32),
                modules: Mutex::new(HashMap::new()),
                order_event: Mutex::new(None),
            }),
        })
    }

    pub fn ctx(&self) -> &Arc<CudaContext> {
        &self.inner.ctx
    }

    /// The GPU's name, as the driver gives it (`GPU` where it gives none).
    pub fn name(&self) -> String {
        self.ctx().name().unwrap_or_else(|_| "GPU".into())
    }

    /// The stream every operation enqueues its kernels on.
    pub fn stream(&self) -> &Arc<CudaStream> {
        &self.inner.stream
    }

    /// The GPU's CUDA ordinal (`cuda:N`).
    pub fn ordinal(&self) -> usize {
        self.inner.ctx.ordinal()
    }

    /// The compute capability, (9, 0) on Hopper.
    pub fn arch(&self) -> (u32, u32) {
        self.inner.arch
    }

    /// Kernel `name` from `kernels/{file}`, compiled for this GPU on first
    /// use (or taken from the disk cache) and kept for the process.
    pub fn function(&self, file: &str, name: &str) -> Result<CudaFunction> {
        let module = {
            let mut modules = self
                .inner
                .modules
                .lock()
                .map_err(|_| Error::Device("the kernel table was poisoned".into()))?;
            match modules.get(file) {
                Some(m) => m.clone(),
                None => {
                    let image = module::compile(file, self.inner.arch)?;
                    let m = self
                        .inner
                        .ctx
                        .load_module(cudarc::nvrtc::Ptx::from_binary(image))
                        .map_err(|e| cuda_err(&format!("loading kernels/{file}"), e))?;
                    modules.insert(file.to_string(), m.clone());
                    m
                }
            }
        };
        module
            .load_function(name)
            .map_err(|e| cuda_err(&format!("kernels/{file} has no kernel `{name}`"), e))
    }

    /// This GPU's stream as another library names streams (`CUstream`).
    pub fn stream_handle(&self) -> usize {
        self.inner.stream.cu_stream() as usize
    }

    /// Orders stream `then` after the work queued so far on stream `first`
    /// (each a `CUstream`; 1 and 2 are the legacy and per-thread default
    /// streams), without waiting on the host: an event recorded on one,
    /// waited for by the other.
    ///
    /// # Safety
    ///
    /// Both must be streams of this GPU's context (or 1 or 2).
    pub unsafe fn order(&self, first: usize, then: usize) -> Result<()> {
        let mut slot = self
            .inner
            .order_event
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        let event = match &mut *slot {
            Some(event) => event,
            None => slot.insert(
                self.inner
                    .ctx
                    .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
                    .map_err(|e| cuda_err("making an event", e))?,
            ),
        };
        // SAFETY: as the caller promises; the event is this context's, and
        // the wait keeps the state it was enqueued with when the event is
        // recorded again.
        unsafe {
            sys::cuEventRecord(event.cu_event(), first as sys::CUstream)
                .result()
                .map_err(|e| cuda_err("marking the caller's stream", e))?;
            sys::cuStreamWaitEvent(then as sys::CUstream, event.cu_event(), 0)
                .result()
                .map_err(|e| cuda_err("ordering the streams", e))
        }
    }

    /// A mark after the work enqueued so far on the compute stream, to ask
    /// later, without waiting, whether that work is done.
    pub fn mark(&self) -> Result<Mark> {
        let event = self
            .inner
            .ctx
            .new_event(Some(sys::CUevent_flags::CU_EVENT_DISABLE_TIMING))
            .map_err(|e| cuda_err("making an event", e))?;
        event
            .record(&self.inner.stream)
            .map_err(|e| cuda_err("marking the compute stream", e))?;
        Ok(Mark(event))
    }

    /// Waits for everything enqueued on the compute stream.
    pub fn sync(&self) -> Result<()> {
        self.inner
            .stream
            .synchronize()
            .map_err(|e| cuda_err("waiting for the GPU", e))
    }

    /// Whether `ptr` is device memory of this GPU's context (memory of
    /// another context, or of none, cannot be copied on its streams).
    pub fn owns(&self, ptr: u64) -> bool {
        let mut ctx: sys::CUcontext = std::ptr::null_mut();
        // SAFETY: the attribute is a CUcontext written into `ctx`; an
        // unknown pointer is an error, not a fault.
        let found = unsafe {
            sys::cuPointerGetAttribute(
                (&mut ctx as *mut sys::CUcontext).cast(),
                sys::CUpointer_attribute::CU_POINTER_ATTRIBUTE_CONTEXT,
                ptr,
            )
        };
        found == sys::CUresult::CUDA_SUCCESS && ctx == self.inner.ctx.cu_ctx()
    }
}

/// A frame in another library's device memory, read in place
/// ([`DevFrame::borrow_device`]); dropping it leaves the memory to its owner.
pub struct BorrowedFrame(std::mem::ManuallyDrop<DevFrame>);

impl std::ops::Deref for BorrowedFrame {
    type Target = DevFrame;

    fn deref(&self) -> &DevFrame {
        &self.0
    }
}

impl Drop for BorrowedFrame {
    fn drop(&mut self) {
        // SAFETY: taken once, here; the slice is leaked, not freed.
        let frame = unsafe { std::mem::ManuallyDrop::take(&mut self.0) };
        let _ = frame.data.leak();
    }
}

/// A point in a GPU's compute stream ([`Gpu::mark`]).
pub struct Mark(cudarc::driver::CudaEvent);

impl Mark {
    /// Whether the work before the mark is done (a failed GPU counts as
    /// done: nothing runs on it any more).
    pub fn is_done(&self) -> bool {
        self.0.try_is_complete().unwrap_or(true)
    }

    /// Waits on the host for the work before the mark.
    pub fn wait(&self) -> Result<()> {
        self.0
            .synchronize()
            .map_err(|e| cuda_err("waiting for the GPU", e))
    }
}

/// A frame in device memory, rows packed (`width * bytes_per_pixel` bytes a
/// row, no padding).
pub struct DevFrame {
    pub width: usize,
    pub height: usize,
    pub format: DevFormat,
    pub data: CudaSlice<u8>,
}

impl std::fmt::Debug for DevFrame {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "DevFrame({}x{} {:?})",
            self.width, self.height, self.format
        )
    }
}

impl DevFrame {
    /// Allocates a frame, every byte zero.
    pub fn alloc(gpu: &Gpu, width: usize, height: usize, format: DevFormat) -> Result<DevFrame> {
        Self::allocate(gpu, width, height, format, true)
    }

    /// Allocates an operation's output, its bytes left as the allocator
    /// gives them: every operation writes the whole of its output (the GPU
    /// tests poison outputs to check, `tests/gpu/registry.rs`), so the
    /// memset of [`DevFrame::alloc`] would be a launch and a pass over the
    /// frame spent for nothing.
    pub fn alloc_output(
        gpu: &Gpu,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<DevFrame> {
        Self::allocate(gpu, width, height, format, false)
    }

    fn allocate(
        gpu: &Gpu,
        width: usize,
        height: usize,
        format: DevFormat,
        zeroed: bool,
    ) -> Result<DevFrame> {
        let bytes = (width * height * format.bytes_per_pixel()).max(1);
        let stream = gpu.stream();
        let data = if zeroed {
            stream.alloc_zeros::<u8>(bytes)
        } else {
            // SAFETY: bytes in device memory, which Rust never reads in
            // place; whatever they hold, they are valid u8s.
            unsafe { stream.alloc::<u8>(bytes) }
        };
        let data = data.map_err(|e| {
            cuda_err(
                &format!(
                    "allocating a {width}x{height} {format:?} frame ({} MB)",
                    bytes.div_ceil(1 << 20)
                ),
                e,
            )
        })?;
        Ok(DevFrame {
            width,
            height,
            format,
            data,
        })
    }

    /// Bytes in one row.
    pub fn pitch(&self) -> usize {
        self.width * self.format.bytes_per_pixel()
    }

    pub fn len(&self) -> usize {
        self.width * self.height * self.format.bytes_per_pixel()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The frame's first byte in device memory, for a caller that hands
    /// the frame on (the Python package's DLPack export); valid while the
    /// frame lives.
    pub fn device_ptr(&self, gpu: &Gpu) -> u64 {
        self.data.device_ptr(gpu.stream()).0
    }

    /// A packed copy, made on the GPU, of a `width`×`height` frame in device
    /// memory that another library owns (a torch or CuPy tensor): its rows
    /// `pitch` bytes apart from `ptr`. Nothing crosses to the host.
    ///
    /// # Safety
    ///
    /// `ptr` must point at `height` rows, `pitch` bytes apart, of device
    /// memory in this GPU's context, each holding the row's pixels, and stay
    /// so until the copy is done ([`Gpu::sync`]).
    pub unsafe fn copy_of_device(
        gpu: &Gpu,
        ptr: u64,
        pitch: usize,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<DevFrame> {
        let mut d = DevFrame::alloc(gpu, width, height, format)?;
        let row = d.pitch();
        let plane = stage::DevicePlane { ptr, pitch };
        let planes = [
            plane,
            stage::DevicePlane::default(),
            stage::DevicePlane::default(),
        ];
        let (packed, _sync) = d.data.device_ptr_mut(gpu.stream());
        stage::copy_planes(
            gpu.stream(),
            (&planes, false),
            packed,
            [(row, height), (0, 0), (0, 0)],
            true,
        )?;
        drop(_sync);
        Ok(d)
    }

    /// Another library's frame in device memory, its rows packed, read in
    /// place: no copy. The frame never frees the memory.
    ///
    /// # Safety
    ///
    /// `ptr` must point at `width`×`height` packed pixels of `format` in
    /// this GPU's context, left alone until the work that reads them is
    /// done (order the owner's stream after this GPU's: [`Gpu::order`]).
    pub unsafe fn borrow_device(
        gpu: &Gpu,
        ptr: u64,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> BorrowedFrame {
        let len = width * height * format.bytes_per_pixel();
        // SAFETY: as the caller promises; `BorrowedFrame` leaks the slice
        // instead of freeing it.
        let data = unsafe { gpu.stream().upgrade_device_ptr::<u8>(ptr, len) };
        BorrowedFrame(std::mem::ManuallyDrop::new(DevFrame {
            width,
            height,
            format,
            data,
        }))
    }

    /// Fills every byte with `value` (tests poison outputs with this).
    pub fn fill(&mut self, gpu: &Gpu, value: u8) -> Result<()> {
        let bytes = vec![value; self.data.len()];
        gpu.stream()
            .memcpy_htod(&bytes, &mut self.data)
            .map_err(|e| cuda_err("filling a frame", e))
    }

    /// Copies a host frame up (synchronous; the stage uses pinned slots).
    pub fn upload(gpu: &Gpu, frame: &Frame) -> Result<DevFrame> {
        let format = DevFormat::of(frame);
        let mut d = DevFrame::alloc(gpu, frame.width(), frame.height(), format)?;
        d.write(gpu, frame)?;
        Ok(d)
    }

    /// Copies a host frame of this frame's size and format into it.
    pub fn write(&mut self, gpu: &Gpu, frame: &Frame) -> Result<()> {
        if (frame.width(), frame.height(), DevFormat::of(frame))
            != (self.width, self.height, self.format)
        {
            return Err(Error::BadFrame(format!(
                "a {}x{} {:?} frame cannot go into a {self:?}",
                frame.width(),
                frame.height(),
                DevFormat::of(frame)
            )));
        }
        let bytes: Vec<u8> = match frame {
            Frame::Rgba(p) => p.clone().into_packed_vec().into_iter().flatten().collect(),
            Frame::Gray(p) => p.clone().into_packed_vec(),
        };
        if bytes.is_empty() {
            return Ok(());
        }
        gpu.stream()
            .memcpy_htod(&bytes, &mut self.data)
            .map_err(|e| cuda_err("uploading a frame", e))
    }

    /// Copies the frame down (synchronous).
    pub fn download(&self, gpu: &Gpu) -> Result<Frame> {
        let mut bytes = vec![0u8; self.data.len()];
        gpu.stream()
            .memcpy_dtoh(&self.data, &mut bytes)
            .map_err(|e| cuda_err("downloading a frame", e))?;
        gpu.sync()?;
        bytes.truncate(self.len());
        Ok(match self.format {
            DevFormat::Gray => Frame::Gray(Plane::from_vec(self.width, self.height, bytes)?),
            DevFormat::Rgba => Frame::Rgba(Plane::from_vec(
                self.width,
                self.height,
                bytes
                    .chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect(),
            )?),
        })
    }
}

/// The GPU half of an operation, holding its parameters.
///
/// Built from the CPU half (see [`crate::registry`]). [`GpuOp::prepare`]
/// sets it up for one input size and format: it compiles the kernels and
/// allocates every scratch buffer, and gives a [`Prepared`] op, the only
/// thing that runs, so that running an op that was never prepared cannot be
/// written.
pub trait GpuOp: Send {
    fn name(&self) -> &'static str;

    /// Size and format of the output for an input of this size and format;
    /// an error if the operation cannot take it. By default the input's.
    fn output(
        &self,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<(usize, usize, DevFormat)> {
        Ok((width, height, format))
    }

    /// The kernel files `prepare` will load on `gpu`, as far as the op can
    /// tell before it sees a frame, so that a first start compiles them all
    /// at once ([`module::prefetch`]). None by default: `prepare` compiles
    /// what it loads, one file after another.
    fn kernel_files(&self, _gpu: &Gpu) -> Vec<String> {
        Vec::new()
    }

    /// The op set up for inputs of this size and format.
    fn prepare(
        &self,
        gpu: &Gpu,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>>;
}

/// A GPU op set up by [`GpuOp::prepare`] for one input size and format. It
/// keeps what an op carries from frame to frame (fast mode's seams).
pub trait Prepared: Send {
    /// Enqueues the work on [`Gpu::stream`], allocating nothing; `output`
    /// has the size and format [`GpuOp::output`] gave, and every one of its
    /// pixels must be written.
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()>;
}

/// What gives the GPU halves of a chain's operations, in order; the
/// registry implements it for [`seamstream_core::ops::Chain`], so that this layer
/// needs to know no operation by name.
pub trait GpuHalves {
    fn gpu_halves(&self) -> Result<Vec<Box<dyn GpuOp>>>;
}

/// An error unless `input` and `output` are the frames an op was prepared
/// for: (width, height, format) each.
pub fn check_frames(
    name: &str,
    want_in: (usize, usize, DevFormat),
    want_out: (usize, usize, DevFormat),
    input: &DevFrame,
    output: &DevFrame,
) -> Result<()> {
    if (input.width, input.height, input.format) != want_in
        || (output.width, output.height, output.format) != want_out
    {
        let ((w, h, f), (ow, oh, of)) = (want_in, want_out);
        return Err(Error::BadFrame(format!(
            "{name} was prepared for {w}x{h} {f:?} to {ow}x{oh} {of:?}, not {input:?} to {output:?}"
        )));
    }
    Ok(())
}

/// Captures what `f` enqueues on `stream` into a CUDA graph (relaxed
/// mode), without running it. `None` where it cannot be captured (`f`
/// failed, or waited on the host): the caller runs the work directly.
pub fn capture(
    stream: &Arc<CudaStream>,
    f: impl FnOnce() -> Result<()>,
) -> Option<cudarc::driver::CudaGraph> {
    use cudarc::driver::sys;
    stream
        .begin_capture(sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_RELAXED)
        .ok()?;
    let ran = f();
    let graph = stream.end_capture(sys::CUgraphInstantiate_flags(0));
    match (ran, graph) {
        (Ok(()), Ok(Some(g))) => Some(g),
        _ => None,
    }
}

/// A grid that covers `n` items with blocks of `block` threads.
pub fn blocks(n: usize, block: u32) -> u32 {
    (n.div_ceil(block as usize)).max(1) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The one device policy: `cpu` asks for nothing; `auto` says why it
    /// takes the CPU where no GPU opens; `cuda:N` is an error there.
    #[test]
    fn a_device_is_placed_by_one_policy() {
        use seamstream_core::Device;
        assert!(matches!(
            place(Device::Cpu, None),
            Ok(Placed::Cpu { why: None })
        ));
        match Gpu::open(0) {
            Ok(_) => assert!(matches!(place(Device::Auto, None), Ok(Placed::Gpu(_)))),
            Err(_) => {
                assert!(matches!(
                    place(Device::Auto, None),
                    Ok(Placed::Cpu { why: Some(_) })
                ));
                assert!(place(Device::Cuda(0), None).unwrap_err().cpu_runs_it());
            }
        }
        let have = device_count().unwrap_or(0);
        assert!(place(Device::Cuda(have + 1), None).is_err());
    }
    use crate::error::ErrorKind;

    /// Where the GPU cannot be opened, the error is typed (no panic from
    /// cudarc's loader, no list of searched file names to cut off).
    #[test]
    fn opening_a_gpu_that_cannot_be_had_is_a_typed_error() {
        match Gpu::open(0) {
            Ok(_) => {}
            Err(e) => {
                assert!(
                    matches!(e.kind(), ErrorKind::NoDriver | ErrorKind::NoGpu),
                    "{e:?}"
                );
                assert!(!e.to_string().contains("searched"), "{e}");
            }
        }
        let e = Gpu::open(usize::MAX).unwrap_err();
        assert!(
            matches!(e.kind(), ErrorKind::NoDriver | ErrorKind::NoGpu),
            "{e:?}"
        );
    }
}
