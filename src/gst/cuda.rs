//! The few calls of GStreamer's CUDA library (`libgstcuda-1.0`, GStreamer
//! 1.22's nvcodec) that `video/x-raw(memory:CUDAMemory)` needs, for the
//! elements and for `run`: sharing one CUDA context with the neighbours
//! (NVIDIA's decoder, `cudadownload`), reading and writing CUDA memory in
//! place, and a pool of it for the output. Debian ships the library without a Rust binding, so
//! the symbols are looked up when first needed: the plugin still loads, and
//! works in system memory, where the library is missing.
//!
//! One context for both: the elements take GStreamer's `GstCudaContext`
//! (found in the pipeline, or made and announced by
//! `gst_cuda_ensure_element_context`) and run cudarc on its `CUcontext`;
//! `run`, which has its GPU before its pipelines, wraps the GPU's context in
//! a `GstCudaContext` and sets it on them ([`PipelineContext`]).

// Without CUDA, `Gpu` has no values, so what follows one is unreachable.
#![cfg_attr(not(feature = "cuda"), allow(unreachable_code, unused_mut))]

use std::ffi::{c_int, c_void};
use std::sync::atomic::{AtomicPtr, Ordering};
use std::sync::{Mutex, OnceLock};

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::glib::translate::{FromGlibPtrFull, FromGlibPtrNone, ToGlibPtr};
use gstreamer::prelude::*;
use gstreamer_video as gst_video;

use crate::cuda::Gpu;
use crate::planes::DevicePlane;

/// `GST_MAP_CUDA`: `GST_MAP_FLAG_LAST << 1`, a mapping that gives the
/// device pointer.
const MAP_CUDA: u32 = gst::ffi::GST_MAP_FLAG_LAST << 1;

/// The caps feature of CUDA memory.
pub const CAPS_FEATURE: &str = "memory:CUDAMemory";

/// The context type GStreamer's CUDA elements share.
const CONTEXT_TYPE: &str = "gst.cuda.context";

type GBool = glib::ffi::gboolean;

/// The library's entry points used here.
struct Api {
    _lib: libloading::Library,
    load_library: unsafe extern "C" fn() -> GBool,
    ensure_element_context:
        unsafe extern "C" fn(*mut gst::ffi::GstElement, c_int, *mut *mut c_void) -> GBool,
    handle_set_context: unsafe extern "C" fn(
        *mut gst::ffi::GstElement,
        *mut gst::ffi::GstContext,
        c_int,
        *mut *mut c_void,
    ) -> GBool,
    handle_context_query: unsafe extern "C" fn(
        *mut gst::ffi::GstElement,
        *mut gst::ffi::GstQuery,
        *mut c_void,
    ) -> GBool,
    context_get_handle: unsafe extern "C" fn(*mut c_void) -> *mut c_void,
    buffer_pool_new: unsafe extern "C" fn(*mut c_void) -> *mut gst::ffi::GstBufferPool,
    is_cuda_memory: unsafe extern "C" fn(*mut gst::ffi::GstMemory) -> GBool,
    context_new_wrapped: unsafe extern "C" fn(*mut c_void, c_int) -> *mut c_void,
    context_new_cuda_context: unsafe extern "C" fn(*mut c_void) -> *mut gst::ffi::GstContext,
    memory_init_once: unsafe extern "C" fn(),
}

/// The library, loaded once; `None` (with why) where it is missing or has
/// no CUDA driver to load.
fn api() -> Result<&'static Api, &'static str> {
    static API: OnceLock<Result<Api, String>> = OnceLock::new();
    API.get_or_init(|| {
        // SAFETY: loading GStreamer's own library, whose initialisers only
        // register GObject types.
        let lib = unsafe { libloading::Library::new("libgstcuda-1.0.so.0") }
            .map_err(|e| format!("libgstcuda-1.0.so.0 is missing ({e})"))?;
        macro_rules! sym {
            ($name:literal) => {
                // SAFETY: the symbol's C signature (gstcudautils.h,
                // gstcudacontext.h, gstcudabufferpool.h, gstcudamemory.h of
                // GStreamer 1.22) matches the field's type.
                *unsafe { lib.get(concat!($name, "\0").as_bytes()) }
                    .map_err(|e| format!("libgstcuda-1.0 has no {} ({e})", $name))?
            };
        }
        let api = Api {
            load_library: sym!("gst_cuda_load_library"),
            ensure_element_context: sym!("gst_cuda_ensure_element_context"),
            handle_set_context: sym!("gst_cuda_handle_set_context"),
            handle_context_query: sym!("gst_cuda_handle_context_query"),
            context_get_handle: sym!("gst_cuda_context_get_handle"),
            buffer_pool_new: sym!("gst_cuda_buffer_pool_new"),
            is_cuda_memory: sym!("gst_is_cuda_memory"),
            context_new_wrapped: sym!("gst_cuda_context_new_wrapped"),
            context_new_cuda_context: sym!("gst_context_new_cuda_context"),
            memory_init_once: sym!("gst_cuda_memory_init_once"),
            _lib: lib,
        };
        // SAFETY: no arguments; loads libcuda's entry points into the
        // library (FALSE where there is no driver).
        if unsafe { (api.load_library)() } == 0 {
            return Err("the CUDA driver could not be loaded by libgstcuda".into());
        }

        Ok(api)
    })
    .as_ref()
    .map_err(|e| e.as_str())
}

/// Whether GStreamer's CUDA library and the CUDA driver are there (so CUDA
/// memory can be offered before the context is made, when pipelines link).
pub fn available() -> bool {
    api().is_ok()
}

/// Makes the library's allocator of CUDA memory (once; GStreamer must be
/// initialised). NVIDIA's plugin does as it loads; where seamstream's
/// decoder stands in for the plugin's, nothing else would, and a pool's
/// buffers would have no allocator.
pub fn init_memory() {
    if let Ok(api) = api() {
        // SAFETY: no arguments; idempotent (a GLib once).
        unsafe { (api.memory_init_once)() };
    }
}

/// An element's share of GStreamer's CUDA context: the `GstCudaContext`
/// pointer the library's helpers fill in (with a reference the element
/// owns), from `ensure` or from `set_context`, which the helpers call into
/// while they run, and our GPU on it.
#[derive(Default)]
pub struct ContextSlot {
    raw: AtomicPtr<c_void>,
    gpu: Mutex<Option<Gpu>>,
}

impl ContextSlot {
    fn id(ordinal: Option<usize>) -> c_int {
        ordinal.map_or(-1, |o| o as c_int)
    }

    /// The context: one already set on the element, one a neighbour or the
    /// application has, or a new one announced to the pipeline
    /// (`gst_cuda_ensure_element_context`). `ordinal` is the device asked
    /// for, `None` for any. An error says why there is none.
    pub fn ensure(&self, element: &gst::Element, ordinal: Option<usize>) -> Result<(), String> {
        let api = api()?;
        // SAFETY: a live element; the slot receives a full reference (here
        // or through `set_context`, which the helper may call) or stays null.
        let ok = unsafe {
            (api.ensure_element_context)(
                element.to_glib_none().0,
                Self::id(ordinal),
                self.raw.as_ptr(),
            )
        };
        if ok == 0 || self.raw.load(Ordering::Acquire).is_null() {
            return Err("GStreamer could not make a CUDA context".into());
        }
        self.gpu().map(|_| ())
    }

    /// `set_context`: takes the pipeline's CUDA context from `context`,
    /// unless the element has one.
    pub fn set_context(
        &self,
        element: &gst::Element,
        context: &gst::Context,
        ordinal: Option<usize>,
    ) {
        if context.context_type() != CONTEXT_TYPE {
            return;
        }
        let Ok(api) = api() else {
            return;
        };
        // SAFETY: live element and context; the slot receives a full
        // reference, or is left as it is.
        unsafe {
            (api.handle_set_context)(
                element.to_glib_none().0,
                context.to_glib_none().0,
                Self::id(ordinal),
                self.raw.as_ptr(),
            )
        };
    }

    /// Our GPU on the context, once there is one.
    pub fn gpu(&self) -> Result<Gpu, String> {
        let mut gpu = self.gpu.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(g) = gpu.as_ref() {
            return Ok(g.clone());
        }
        let raw = self.raw.load(Ordering::Acquire);
        if raw.is_null() {
            return Err("no CUDA context yet".into());
        }
        // SAFETY: a live GstCudaContext the slot holds a reference to.
        let object = unsafe { gst::Object::from_glib_none(raw as *mut gst::ffi::GstObject) };
        let g = gpu_on(&object)?;
        *gpu = Some(g.clone());
        Ok(g)
    }

    /// Answers a neighbour's context query with the element's context.
    pub fn answer_query(&self, element: &gst::Element, query: &mut gst::QueryRef) -> bool {
        let gst::QueryViewMut::Context(q) = query.view_mut() else {
            return false;
        };
        let raw = self.raw.load(Ordering::Acquire);
        if q.context_type() != CONTEXT_TYPE || raw.is_null() {
            return false;
        }
        let Ok(api) = api() else {
            return false;
        };
        // SAFETY: live element, query and context (not transferred).
        unsafe {
            (api.handle_context_query)(element.to_glib_none().0, query.as_mut_ptr(), raw) != 0
        }
    }

    /// A pool of CUDA memory on the context, for output buffers of `caps`.
    pub fn pool(&self, caps: &gst::CapsRef, size: u32) -> Option<gst::BufferPool> {
        let raw = self.raw.load(Ordering::Acquire);
        if raw.is_null() {
            return None;
        }
        // SAFETY: a live GstCudaContext the slot holds a reference to.
        pool_on(raw, caps, size)
    }

    /// Lets the context go (back in NULL).
    pub fn clear(&self) {
        *self.gpu.lock().unwrap_or_else(|e| e.into_inner()) = None;
        let raw = self.raw.swap(std::ptr::null_mut(), Ordering::AcqRel);
        if !raw.is_null() {
            // SAFETY: the reference the slot held.
            unsafe { gst::ffi::gst_object_unref(raw as *mut gst::ffi::GstObject) };
        }
    }
}

impl Drop for ContextSlot {
    fn drop(&mut self) {
        self.clear();
    }
}

/// A pool of CUDA memory on the `GstCudaContext` `raw` (live), for buffers
/// of `caps`, at least two of them.
fn pool_on(raw: *mut c_void, caps: &gst::CapsRef, size: u32) -> Option<gst::BufferPool> {
    let api = api().ok()?;
    // SAFETY: a live GstCudaContext (the caller's); the pool comes with a
    // full reference.
    let pool = unsafe { (api.buffer_pool_new)(raw) };
    if pool.is_null() {
        return None;
    }
    // SAFETY: a new pool, reference transferred to us.
    let pool = unsafe { gst::BufferPool::from_glib_full(pool) };
    let caps = caps.to_owned();
    let mut config = pool.config();
    config.set_params(Some(&caps), size, 2, 0);
    config.add_option(gst_video::BUFFER_POOL_OPTION_VIDEO_META.as_ref());
    if pool.set_config(config).is_err() {
        // The pool changed the configuration (CUDA memory pads its rows, so
        // the size grows; the video meta gives the strides): take its own,
        // if it still holds frames of `caps`.
        let config = pool.config();
        config.validate_params(Some(&caps), size, 2, 0).ok()?;
        pool.set_config(config).ok()?;
    }
    Some(pool)
}

/// GStreamer's CUDA context on a GPU of ours: a `GstCudaContext` wrapping
/// the GPU's own CUDA context, which `run` sets on its pipelines, so that
/// NVIDIA's decoder works in it and hands its frames over in device memory
/// the ring copies from on the device, and on which `run`'s pool of CUDA
/// memory is made.
#[derive(Clone, Debug)]
pub struct PipelineContext {
    /// The `GstCudaContext`, kept for the process (see [`GPUS`]: a wrapped
    /// context never destroys the CUDA context, which the GPU owns).
    object: gst::Object,
    context: gst::Context,
    gpu: Gpu,
}

impl PipelineContext {
    /// GStreamer's context on `gpu`; an error says why there is none
    /// (GStreamer's CUDA library or the driver missing).
    #[cfg(not(feature = "cuda"))]
    pub fn wrap(gpu: &Gpu) -> Result<PipelineContext, String> {
        match *gpu {}
    }

    /// GStreamer's context on `gpu`; an error says why there is none
    /// (GStreamer's CUDA library or the driver missing).
    #[cfg(feature = "cuda")]
    pub fn wrap(gpu: &Gpu) -> Result<PipelineContext, String> {
        let api = api()?;
        let ctx = gpu.ctx();
        // SAFETY: a live CUDA context and its device; the wrapper does not
        // own the context (it never destroys it), and the GPU, which does,
        // is kept beside it.
        let raw =
            unsafe { (api.context_new_wrapped)(ctx.cu_ctx() as *mut c_void, ctx.cu_device()) };
        if raw.is_null() {
            return Err("GStreamer could not wrap the GPU's CUDA context".into());
        }
        // SAFETY: a new GstCudaContext; taking it with a reference of our own
        // (sinking it if floating) keeps it for the process.
        let object = unsafe { gst::Object::from_glib_none(raw as *mut gst::ffi::GstObject) };
        // SAFETY: a live GstCudaContext; the GstContext comes with a full
        // reference and holds one of the CUDA context.
        let context = unsafe { (api.context_new_cuda_context)(raw) };
        if context.is_null() {
            return Err("GStreamer could not make a pipeline context of the GPU's".into());
        }
        // SAFETY: as above: a new GstContext, reference transferred to us.
        let context = unsafe { gst::Context::from_glib_full(context) };
        GPUS.lock().unwrap_or_else(|e| e.into_inner()).push((
            object.as_ptr() as usize,
            object.clone(),
            gpu.clone(),
        ));
        Ok(PipelineContext {
            object,
            context,
            gpu: gpu.clone(),
        })
    }

    /// The context to set on a pipeline (`gst_element_set_context`): its
    /// elements, and those added later (decodebin's decoder), take it.
    pub fn context(&self) -> &gst::Context {
        &self.context
    }

    /// A pool of CUDA memory on the context, for buffers of `caps`.
    pub fn pool(&self, caps: &gst::CapsRef, size: u32) -> Option<gst::BufferPool> {
        pool_on(self.object.as_ptr() as *mut c_void, caps, size)
    }

    /// The device planes of `buffer` (see [`device_planes`]) when it is CUDA
    /// memory in this context; `None` for other memory, or CUDA memory of
    /// another context (a decoder that made its own), which the caller
    /// reads through a mapping instead.
    pub fn planes(
        &self,
        buffer: &gst::BufferRef,
        info: &gst_video::VideoInfo,
        write: bool,
    ) -> Option<[DevicePlane; 3]> {
        let planes = device_planes(buffer, info, write)?;
        self.gpu.owns(planes[0].ptr).then_some(planes)
    }
}

/// The GPUs made on GStreamer's contexts so far, with a reference to each
/// context: kept for the process, so that a context is never destroyed
/// under cudarc's handle of it, and every element on one context shares one
/// set of loaded kernels.
static GPUS: Mutex<Vec<(usize, gst::Object, Gpu)>> = Mutex::new(Vec::new());

/// Our GPU on the `GstCudaContext` `object`.
fn gpu_on(object: &gst::Object) -> Result<Gpu, String> {
    let api = api()?;
    let mut gpus = GPUS.lock().unwrap_or_else(|e| e.into_inner());
    let key = object.as_ptr() as usize;
    if let Some((_, _, gpu)) = gpus.iter().find(|(k, ..)| *k == key) {
        return Ok(gpu.clone());
    }
    let ordinal = object.property::<u32>("cuda-device-id") as usize;
    // SAFETY: a live GstCudaContext; the handle stays valid while the
    // context lives, which the table below makes the process's lifetime.
    let handle = unsafe { (api.context_get_handle)(object.as_ptr() as *mut c_void) };
    // SAFETY: as above; the context is GStreamer's, never destroyed by cudarc.
    let gpu = unsafe { Gpu::on_context(ordinal, handle as _) }.map_err(|e| e.to_string())?;
    gpus.push((key, object.clone(), gpu.clone()));
    Ok(gpu)
}

/// Whether `buffer` is one block of CUDA memory (what GStreamer's CUDA
/// elements and pools make).
pub fn is_cuda(buffer: &gst::BufferRef) -> bool {
    let Ok(api) = api() else {
        return false;
    };
    buffer.n_memory() == 1 && {
        let mem = buffer.peek_memory(0);
        // SAFETY: a live memory of the buffer.
        unsafe { (api.is_cuda_memory)(mem.as_mut_ptr()) != 0 }
    }
}

/// The device planes of a CUDA-memory `buffer` laid out as `info` (or as
/// its video meta says), mapped for reading or writing: the device pointer
/// of its one memory, at each plane's offset and stride. The mapping is
/// released at once: GStreamer's CUDA memory stays where it is while the
/// buffer lives (the caller keeps it), and a write mapping marks it for a
/// download before the next CPU read.
pub fn device_planes(
    buffer: &gst::BufferRef,
    info: &gst_video::VideoInfo,
    write: bool,
) -> Option<[DevicePlane; 3]> {
    if !is_cuda(buffer) {
        return None;
    }
    let mem = buffer.peek_memory(0);
    let flags = MAP_CUDA
        | if write {
            gst::ffi::GST_MAP_WRITE
        } else {
            gst::ffi::GST_MAP_READ
        };
    let mut map = std::mem::MaybeUninit::<gst::ffi::GstMapInfo>::zeroed();
    // SAFETY: a live CUDA memory; mapped and unmapped with the same info.
    let base = unsafe {
        if gst::ffi::gst_memory_map(mem.as_mut_ptr(), map.as_mut_ptr(), flags) == 0 {
            return None;
        }
        let base = (*map.as_ptr()).data as u64;
        gst::ffi::gst_memory_unmap(mem.as_mut_ptr(), map.as_mut_ptr());
        base
    };
    let (offsets, strides): (Vec<usize>, Vec<i32>) = match buffer.meta::<gst_video::VideoMeta>() {
        Some(m) => (m.offset().to_vec(), m.stride().to_vec()),
        None => (info.offset().to_vec(), info.stride().to_vec()),
    };
    let mut planes = [DevicePlane::default(); 3];
    for (i, p) in planes.iter_mut().enumerate().take(info.n_planes() as usize) {
        *p = DevicePlane {
            ptr: base + *offsets.get(i)? as u64,
            pitch: usize::try_from(*strides.get(i)?).ok()?,
        };
    }
    Some(planes)
}

/// Marks `caps`' first structure as CUDA memory.
pub fn into_cuda(caps: &mut gst::CapsRef) {
    caps.set_features(0, Some(gst::CapsFeatures::new([CAPS_FEATURE])));
}

/// Whether caps structure `i` of `caps` is in CUDA memory.
pub fn caps_in_cuda(caps: &gst::CapsRef) -> bool {
    caps.features(0).is_some_and(|f| f.contains(CAPS_FEATURE))
}
