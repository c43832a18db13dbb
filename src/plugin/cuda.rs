//! The few calls of GStreamer's CUDA library (`libgstcuda-1.0`, GStreamer
//! 1.22's nvcodec) the elements need for `video/x-raw(memory:CUDAMemory)`:
//! sharing one CUDA context with the neighbours (NVIDIA's decoder,
//! `cudadownload`), reading and writing CUDA memory in place, and a pool of
//! it for the output. Debian ships the library without a Rust binding, so
//! the symbols are looked up when first needed: the plugin still loads, and
//! works in system memory, where the library is missing.
//!
//! One context for both: the elements take GStreamer's `GstCudaContext`
//! (found in the pipeline, or made and announced by
//! `gst_cuda_ensure_element_context`) and run cudarc on its `CUcontext`.

use std::ffi::{c_int, c_void};
use std::sync::{Mutex, OnceLock};

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::glib::translate::{FromGlibPtrFull, ToGlibPtr};
use gstreamer::prelude::*;
use gstreamer_video as gst_video;

use crate::cuda::Gpu;
use crate::cuda::stage::DevicePlane;

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

/// An element's share of GStreamer's CUDA context, with our GPU on it.
pub struct Context {
    /// The `GstCudaContext` (a reference this element owns).
    object: gst::Object,
    pub gpu: Gpu,
}

impl Context {
    fn ptr(&self) -> *mut c_void {
        self.object.as_ptr() as *mut c_void
    }

    /// A pool of CUDA memory on this context, for output buffers of `caps`.
    pub fn pool(&self, caps: &gst::Caps, size: u32) -> Option<gst::BufferPool> {
        let api = api().ok()?;
        // SAFETY: the context is a live GstCudaContext; the pool comes with
        // a full reference.
        let raw = unsafe { (api.buffer_pool_new)(self.ptr()) };
        if raw.is_null() {
            return None;
        }
        // SAFETY: a new pool, reference transferred to us.
        let pool = unsafe { gst::BufferPool::from_glib_full(raw) };
        let mut config = pool.config();
        config.set_params(Some(caps), size, 2, 0);
        config.add_option(gst_video::BUFFER_POOL_OPTION_VIDEO_META.as_ref());
        pool.set_config(config).ok()?;
        Some(pool)
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

/// The element's CUDA context: one already set on it, one a neighbour or
/// the application has, or a new one announced to the pipeline
/// (`gst_cuda_ensure_element_context`). `ordinal` is the device asked for,
/// `None` for any. An error says why there is none.
pub fn ensure(
    element: &gst::Element,
    ordinal: Option<usize>,
    have: Option<Context>,
) -> Result<Context, String> {
    if let Some(c) = have {
        return Ok(c);
    }
    let api = api()?;
    let mut raw: *mut c_void = std::ptr::null_mut();
    let id = ordinal.map_or(-1, |o| o as c_int);
    // SAFETY: a live element; `raw` receives a full reference or stays null.
    let ok = unsafe { (api.ensure_element_context)(element.to_glib_none().0, id, &mut raw) };
    if ok == 0 || raw.is_null() {
        return Err("GStreamer could not make a CUDA context".into());
    }
    // SAFETY: a GstCudaContext with a reference transferred to us.
    let object = unsafe { gst::Object::from_glib_full(raw as *mut gst::ffi::GstObject) };
    let gpu = gpu_on(&object)?;
    Ok(Context { object, gpu })
}

/// `set_context`: takes the pipeline's CUDA context from `context` unless
/// the element has one; gives the element's context back either way.
pub fn set_context(
    element: &gst::Element,
    context: &gst::Context,
    ordinal: Option<usize>,
    have: Option<Context>,
) -> Option<Context> {
    if have.is_some() || context.context_type() != CONTEXT_TYPE {
        return have;
    }
    let api = api().ok()?;
    let mut raw: *mut c_void = std::ptr::null_mut();
    let id = ordinal.map_or(-1, |o| o as c_int);
    // SAFETY: live element and context; `raw` receives a full reference to
    // the context's GstCudaContext or stays null.
    unsafe {
        (api.handle_set_context)(
            element.to_glib_none().0,
            context.to_glib_none().0,
            id,
            &mut raw,
        )
    };
    if raw.is_null() {
        return None;
    }
    // SAFETY: as above.
    let object = unsafe { gst::Object::from_glib_full(raw as *mut gst::ffi::GstObject) };
    let gpu = gpu_on(&object).ok()?;
    Some(Context { object, gpu })
}

/// Answers a neighbour's context query with the element's CUDA context.
pub fn answer_query(element: &gst::Element, query: &mut gst::QueryRef, ctx: &Context) -> bool {
    let gst::QueryViewMut::Context(q) = query.view_mut() else {
        return false;
    };
    if q.context_type() != CONTEXT_TYPE {
        return false;
    }
    let Ok(api) = api() else {
        return false;
    };
    // SAFETY: live element, query and context (not transferred).
    unsafe {
        (api.handle_context_query)(element.to_glib_none().0, query.as_mut_ptr(), ctx.ptr()) != 0
    }
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

/// Whether caps structure `i` of `caps` is in CUDA memory.
pub fn caps_in_cuda(caps: &gst::CapsRef) -> bool {
    caps.features(0)
        .is_some_and(|f| f.contains(CAPS_FEATURE))
}
