//! Frames that stay on the GPU: a CUDA array in (anything with
//! `__cuda_array_interface__`: torch, CuPy, Numba), copied on the device
//! into the chain's input, and the result out as a [`DeviceFrame`], which
//! torch (`torch.from_dlpack`) and CuPy (`cupy.asarray`) take without a
//! copy. Nothing crosses to the host.
//!
//! The DLPack structs are the C ABI of `dlpack.h` (v0.8, the version
//! `__dlpack__` without `max_version` gives), written out here.

use std::ffi::{CStr, c_void};
use std::sync::Arc;

use pyo3::exceptions::{PyBufferError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyCapsule, PyDict};

use seamstream::DevFormat;
use seamstream::cuda::{BorrowedFrame, DevFrame, Gpu, Mark};

use crate::{guarded, py_err};

/// `DLDeviceType::kDLCUDA`.
const DL_CUDA: i32 = 2;
/// `DLDataTypeCode::kDLUInt`.
const DL_UINT: u8 = 1;

#[repr(C)]
#[derive(Clone, Copy)]
struct DlDevice {
    device_type: i32,
    device_id: i32,
}

#[repr(C)]
struct DlDataType {
    code: u8,
    bits: u8,
    lanes: u16,
}

#[repr(C)]
struct DlTensor {
    data: *mut c_void,
    device: DlDevice,
    ndim: i32,
    dtype: DlDataType,
    shape: *mut i64,
    strides: *mut i64,
    byte_offset: u64,
}

#[repr(C)]
struct DlManagedTensor {
    dl_tensor: DlTensor,
    manager_ctx: *mut c_void,
    deleter: Option<unsafe extern "C" fn(*mut DlManagedTensor)>,
}

/// What an exported tensor keeps alive: the frame and its shape, and the
/// stream its consumer reads it on (waited for before the memory goes back
/// to the GPU's pool).
struct Export {
    frame: Option<Arc<DevFrame>>,
    gpu: Gpu,
    consumer: Option<usize>,
    shape: Vec<i64>,
}

impl Drop for Export {
    fn drop(&mut self) {
        if let Some(consumer) = self.consumer {
            // SAFETY: the consumer's stream, as it gave it to __dlpack__.
            let _ = unsafe { self.gpu.order(consumer, self.gpu.stream_handle()) };
        }
        self.frame.take();
    }
}

/// Frees an exported tensor (called by its consumer, or by the capsule
/// when no one consumed it).
unsafe extern "C" fn delete_export(managed: *mut DlManagedTensor) {
    if managed.is_null() {
        return;
    }
    // SAFETY: `managed` and its context were made by Box::into_raw in
    // `DeviceFrame::__dlpack__`, and DLPack calls the deleter once.
    unsafe {
        let managed = Box::from_raw(managed);
        drop(Box::from_raw(managed.manager_ctx as *mut Export));
    }
}

const DLTENSOR: &CStr = c"dltensor";

/// The capsule's destructor: frees the tensor unless a consumer took it
/// (and renamed the capsule `used_dltensor`).
unsafe extern "C" fn delete_capsule(capsule: *mut pyo3::ffi::PyObject) {
    // SAFETY: a capsule made below; its name tells whether it was consumed.
    unsafe {
        if pyo3::ffi::PyCapsule_IsValid(capsule, DLTENSOR.as_ptr()) == 1 {
            let managed = pyo3::ffi::PyCapsule_GetPointer(capsule, DLTENSOR.as_ptr());
            delete_export(managed as *mut DlManagedTensor);
        }
    }
}

/// A frame on the GPU, the result of `Chain.apply` on a CUDA array:
/// `torch.from_dlpack(frame)` and `cupy.asarray(frame)` take it without a
/// copy; `to_numpy()` downloads it.
#[pyclass(name = "DeviceFrame", module = "seamstream")]
pub struct DeviceFrame {
    frame: Arc<DevFrame>,
    gpu: Gpu,
}

impl DeviceFrame {
    pub fn new(frame: DevFrame, gpu: Gpu) -> Self {
        DeviceFrame {
            frame: Arc::new(frame),
            gpu,
        }
    }

    fn dims(&self) -> Vec<usize> {
        let f = &self.frame;
        match f.format {
            DevFormat::Rgba => vec![f.height, f.width, 4],
            DevFormat::Gray => vec![f.height, f.width],
        }
    }
}

#[pymethods]
impl DeviceFrame {
    /// `(H, W, 4)` or `(H, W)`.
    #[getter]
    fn shape(&self) -> Vec<usize> {
        self.dims()
    }

    /// The GPU's ordinal.
    #[getter]
    fn device(&self) -> usize {
        self.gpu.ordinal()
    }

    /// DLPack's device: (kDLCUDA, ordinal).
    fn __dlpack_device__(&self) -> (i32, i32) {
        (DL_CUDA, self.gpu.ordinal() as i32)
    }

    /// The frame as a DLPack capsule, ready on the consumer's `stream` (a
    /// `CUstream`; None is the legacy default stream, -1 asks for no
    /// ordering): that stream is ordered after the chain's work, without
    /// waiting on the host.
    #[pyo3(signature = (*, stream = None, max_version = None, dl_device = None, copy = None))]
    fn __dlpack__<'py>(
        &self,
        py: Python<'py>,
        stream: Option<Bound<'py, PyAny>>,
        max_version: Option<Bound<'py, PyAny>>,
        dl_device: Option<Bound<'py, PyAny>>,
        copy: Option<bool>,
    ) -> PyResult<Bound<'py, PyCapsule>> {
        let _ = (max_version, dl_device);
        let consumer = match stream {
            None => Some(1),
            Some(s) => match s.extract::<i64>()? {
                -1 => None,
                h if h >= 0 => Some(h as usize),
                h => {
                    return Err(PyValueError::new_err(format!(
                        "stream={h}: not a CUDA stream"
                    )));
                }
            },
        };
        if let Some(consumer) = consumer {
            // SAFETY: the consumer's stream, on this frame's GPU (DLPack's
            // contract for a CUDA tensor).
            unsafe { self.gpu.order(self.gpu.stream_handle(), consumer) }.map_err(py_err)?;
        }
        if copy == Some(true) {
            return Err(PyBufferError::new_err(
                "seamstream's DeviceFrame is exported without a copy; copy=True is not offered",
            ));
        }
        let mut export = Box::new(Export {
            frame: Some(self.frame.clone()),
            gpu: self.gpu.clone(),
            consumer,
            shape: self.dims().iter().map(|&d| d as i64).collect(),
        });
        let managed = Box::new(DlManagedTensor {
            dl_tensor: DlTensor {
                data: self.frame.device_ptr(&self.gpu) as *mut c_void,
                device: DlDevice {
                    device_type: DL_CUDA,
                    device_id: self.gpu.ordinal() as i32,
                },
                ndim: export.shape.len() as i32,
                dtype: DlDataType {
                    code: DL_UINT,
                    bits: 8,
                    lanes: 1,
                },
                shape: export.shape.as_mut_ptr(),
                // Rows packed: compact, C order.
                strides: std::ptr::null_mut(),
                byte_offset: 0,
            },
            manager_ctx: std::ptr::null_mut(),
            deleter: Some(delete_export),
        });
        let mut managed = managed;
        managed.manager_ctx = Box::into_raw(export) as *mut c_void;
        let raw = Box::into_raw(managed);
        // SAFETY: a capsule owning `raw` under the name DLPack consumers
        // look for, freed by `delete_capsule` unless consumed.
        let capsule = unsafe {
            pyo3::ffi::PyCapsule_New(raw as *mut c_void, DLTENSOR.as_ptr(), Some(delete_capsule))
        };
        if capsule.is_null() {
            // SAFETY: not handed to anyone: free it here.
            unsafe { delete_export(raw) };
            return Err(PyErr::fetch(py));
        }
        // SAFETY: a new reference we own.
        let any = unsafe { Bound::from_owned_ptr(py, capsule) };
        Ok(any.cast_into::<PyCapsule>()?)
    }

    /// The CUDA array interface (version 3): CuPy and Numba read it.
    #[getter]
    fn __cuda_array_interface__<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("shape", pyo3::types::PyTuple::new(py, self.dims())?)?;
        d.set_item("typestr", "|u1")?;
        d.set_item("data", (self.frame.device_ptr(&self.gpu), false))?;
        d.set_item("strides", py.None())?;
        // The consumer orders itself after the chain's stream.
        d.set_item("stream", self.gpu.stream_handle())?;
        d.set_item("version", 3)?;
        Ok(d)
    }

    /// The frame copied to the host, as a NumPy array.
    fn to_numpy<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyAny>> {
        let frame = py.detach(|| guarded(|| self.frame.download(&self.gpu)))?;
        crate::array_from_frame(py, frame)
    }

    fn __repr__(&self) -> String {
        format!(
            "DeviceFrame(shape={:?}, device=cuda:{})",
            self.dims(),
            self.gpu.ordinal()
        )
    }
}

/// `CUstream`'s name for the legacy default stream, which torch and CuPy
/// use unless told otherwise.
pub const LEGACY_STREAM: usize = 1;

/// A CUDA array ready for the chain: read in place where its rows are
/// packed, else copied on the device; the stream its owner uses, ordered
/// after the chain's reads so that it cannot reuse the memory before them
/// (none for DLPack, whose producer is not named: its tensor is held
/// instead, [`Held`]).
pub struct CudaInput {
    pub frame: InputFrame,
    pub owner: Option<usize>,
    pub held: Option<DlpackTensor>,
}

pub enum InputFrame {
    Borrowed(BorrowedFrame),
    Copied(DevFrame),
}

impl std::ops::Deref for InputFrame {
    type Target = DevFrame;

    fn deref(&self) -> &DevFrame {
        match self {
            InputFrame::Borrowed(b) => b,
            InputFrame::Copied(c) => c,
        }
    }
}

const WANTED: &str = "a CUDA uint8 array H×W×4 (RGBA) or H×W (gray), rows contiguous";

/// The frame at `ptr` of `shape`, with `element_strides` (None: packed;
/// for uint8, elements are bytes), on `gpu`: borrowed where packed, else
/// copied.
///
/// # Safety
///
/// `ptr` must hold the rows described, in `gpu`'s context, left alone until
/// the chain's stream has read them.
unsafe fn input_frame(
    gpu: &Gpu,
    ptr: u64,
    shape: &[usize],
    element_strides: Option<&[i64]>,
    what: &str,
) -> PyResult<InputFrame> {
    let bad = |why: String| PyValueError::new_err(format!("expected {WANTED}; got {what} {why}"));
    let (height, width, format) = match *shape {
        [h, w, 4] if h > 0 && w > 0 => (h, w, DevFormat::Rgba),
        [h, w] if h > 0 && w > 0 => (h, w, DevFormat::Gray),
        _ => return Err(bad(format!("of shape {shape:?}"))),
    };
    let row = width * format.bytes_per_pixel();
    let pitch = match element_strides {
        None => row,
        Some(&[rs, 4, 1]) if format == DevFormat::Rgba && rs >= row as i64 => rs as usize,
        Some(&[rs, 1]) if format == DevFormat::Gray && rs >= row as i64 => rs as usize,
        Some(s) => {
            return Err(bad(format!(
                "with strides {s:?} (make it contiguous first)"
            )));
        }
    };
    if pitch == row {
        // SAFETY: the caller's promise, rows packed.
        Ok(InputFrame::Borrowed(unsafe {
            DevFrame::borrow_device(gpu, ptr, width, height, format)
        }))
    } else {
        // SAFETY: the caller's promise, `height` rows `pitch` apart.
        Ok(InputFrame::Copied(
            unsafe { DevFrame::copy_of_device(gpu, ptr, pitch, width, height, format) }
                .map_err(py_err)?,
        ))
    }
}

/// A CUDA array as the chain's input, if `obj` is one (`None` for anything
/// else): read through `__cuda_array_interface__` where it has one (torch,
/// CuPy, Numba; the cheaper of the two), else through `__dlpack__` (JAX,
/// and any DLPack producer on a CUDA device).
///
/// `stream` is the stream the caller made the array on, if it said; else
/// the interface's, else the legacy default stream (where torch and CuPy
/// work unless told otherwise). The chain's stream is ordered after it.
pub fn frame_from_cuda_array(
    gpu: &Gpu,
    obj: &Bound<'_, PyAny>,
    stream: Option<usize>,
) -> PyResult<Option<CudaInput>> {
    match obj.getattr("__cuda_array_interface__") {
        Ok(cai) => from_interface(gpu, &cai, stream).map(Some),
        Err(_) if is_cuda_dlpack(obj) => from_dlpack(gpu, obj).map(Some),
        Err(_) => Ok(None),
    }
}

fn from_interface(gpu: &Gpu, cai: &Bound<'_, PyAny>, stream: Option<usize>) -> PyResult<CudaInput> {
    let shape: Vec<usize> = cai.get_item("shape")?.extract()?;
    let typestr: String = cai.get_item("typestr")?.extract()?;
    let (ptr, _readonly): (usize, bool) = cai.get_item("data")?.extract()?;
    if typestr != "|u1" {
        return Err(PyValueError::new_err(format!(
            "expected {WANTED}; got {typestr} of shape {shape:?}"
        )));
    }
    // Strides in bytes, which for uint8 are elements.
    // Absent or None: packed. Anything else must be read, not guessed.
    let strides: Option<Vec<i64>> = match cai.get_item("strides") {
        Ok(s) => s.extract()?,
        Err(_) => None,
    };
    // The producer's stream: the caller's word, else the interface's
    // (version 3; absent or None in torch's version 2, and 0 is none).
    let owner = stream
        .or_else(|| {
            cai.get_item("stream")
                .ok()
                .and_then(|s| s.extract::<Option<usize>>().ok())
                .flatten()
                .filter(|&h| h != 0)
        })
        .unwrap_or(LEGACY_STREAM);
    // SAFETY: the interface's stream (or the default one) is its
    // producer's, on this GPU.
    unsafe { gpu.order(owner, gpu.stream_handle()) }.map_err(py_err)?;
    // SAFETY: the interface promises the rows at `ptr`; the owner's stream
    // is ordered after the chain's reads before the caller may reuse them.
    let frame = unsafe { input_frame(gpu, ptr as u64, &shape, strides.as_deref(), "an array") }?;
    Ok(CudaInput {
        frame,
        owner: Some(owner),
        held: None,
    })
}

/// Whether `obj` is an array on a CUDA device, by either interface.
pub fn is_on_gpu(obj: &Bound<'_, PyAny>) -> bool {
    obj.hasattr("__cuda_array_interface__").unwrap_or(false) || is_cuda_dlpack(obj)
}

/// A stream as `apply(stream=)` takes it: a `CUstream` handle (an int), or
/// an object that carries one (`torch.cuda.Stream.cuda_stream`, CuPy's
/// `Stream.ptr`).
pub fn stream_handle(obj: &Bound<'_, PyAny>) -> PyResult<usize> {
    let handle = if let Ok(h) = obj.extract::<i64>() {
        h
    } else if let Ok(h) = obj.getattr("cuda_stream").and_then(|h| h.extract::<i64>()) {
        h
    } else if let Ok(h) = obj.getattr("ptr").and_then(|h| h.extract::<i64>()) {
        h
    } else {
        return Err(PyValueError::new_err(format!(
            "stream=: expected a CUDA stream (an int handle, a torch.cuda.Stream or a CuPy \
             Stream); got {}",
            obj.get_type().name()?
        )));
    };
    match handle {
        // 0 is the legacy default stream, as torch and CuPy name it.
        0 => Ok(LEGACY_STREAM),
        h if h > 0 => Ok(h as usize),
        h => Err(PyValueError::new_err(format!(
            "stream={h}: not a CUDA stream handle"
        ))),
    }
}

/// Whether `obj` says, through `__dlpack_device__`, that it is on a CUDA
/// device.
fn is_cuda_dlpack(obj: &Bound<'_, PyAny>) -> bool {
    obj.call_method0("__dlpack_device__")
        .and_then(|d| d.extract::<(i32, i32)>())
        .is_ok_and(|(kind, _)| kind == DL_CUDA)
}

/// A DLPack tensor taken from its capsule, held until the chain has read
/// it; its deleter then gives it back to its producer.
pub struct DlpackTensor(*mut DlManagedTensor);

// SAFETY: the pointer is only dereferenced and deleted with the GIL held
// (`Held::release`), from whichever thread holds it.
unsafe impl Send for DlpackTensor {}

impl DlpackTensor {
    /// Gives the tensor back (its producer may then reuse its memory).
    ///
    /// # Safety
    ///
    /// Once, with the GIL held, after the last read of it.
    unsafe fn delete(self) {
        // SAFETY: a tensor taken from a consumed capsule, deleted once.
        unsafe {
            if let Some(deleter) = (*self.0).deleter {
                deleter(self.0);
            }
        }
    }
}

fn from_dlpack(gpu: &Gpu, obj: &Bound<'_, PyAny>) -> PyResult<CudaInput> {
    let py = obj.py();
    // The producer orders its work before the chain's stream (DLPack's
    // contract for `stream`).
    let kwargs = PyDict::new(py);
    kwargs.set_item("stream", gpu.stream_handle())?;
    let capsule = obj.call_method("__dlpack__", (), Some(&kwargs))?;
    let capsule = capsule.cast_into::<PyCapsule>().map_err(|_| {
        PyValueError::new_err("__dlpack__ gave something other than a DLPack capsule")
    })?;
    let raw = capsule.as_ptr();
    // SAFETY: a capsule; its name says whether it holds an unconsumed
    // (unversioned) tensor.
    let managed = unsafe {
        if pyo3::ffi::PyCapsule_IsValid(raw, DLTENSOR.as_ptr()) != 1 {
            return Err(PyValueError::new_err(
                "__dlpack__ gave a capsule that is not an unconsumed `dltensor`",
            ));
        }
        pyo3::ffi::PyCapsule_GetPointer(raw, DLTENSOR.as_ptr()) as *mut DlManagedTensor
    };
    if managed.is_null() {
        return Err(PyErr::fetch(py));
    }
    // Consumed: from here the tensor is ours to delete, not the capsule's.
    // SAFETY: the capsule is valid; renaming is how DLPack marks it taken.
    if unsafe { pyo3::ffi::PyCapsule_SetName(raw, c"used_dltensor".as_ptr()) } != 0 {
        return Err(PyErr::fetch(py));
    }
    let held = DlpackTensor(managed);
    // SAFETY: the producer's tensor, alive until `held` is deleted.
    let t = unsafe { &(*managed).dl_tensor };
    let shape: Vec<usize> = (0..t.ndim.max(0) as usize)
        // SAFETY: `ndim` entries.
        .map(|i| unsafe { *t.shape.add(i) }.max(0) as usize)
        .collect();
    let strides: Option<Vec<i64>> = (!t.strides.is_null())
        // SAFETY: `ndim` entries where not null.
        .then(|| {
            (0..t.ndim as usize)
                .map(|i| unsafe { *t.strides.add(i) })
                .collect()
        });
    let fail = |e: PyErr| {
        // SAFETY: nothing has read it yet; the GIL is held.
        unsafe { DlpackTensor(held.0).delete() };
        e
    };
    if t.device.device_type != DL_CUDA || t.device.device_id as usize != gpu.ordinal() {
        return Err(fail(PyValueError::new_err(format!(
            "the tensor is on DLPack device ({}, {}), not this chain's GPU {} \
             (kDLCUDA is 2): move it there first",
            t.device.device_type,
            t.device.device_id,
            gpu.ordinal()
        ))));
    }
    if (t.dtype.code, t.dtype.bits, t.dtype.lanes) != (DL_UINT, 8, 1) {
        return Err(fail(PyValueError::new_err(format!(
            "expected {WANTED}; got DLPack dtype (code {}, {} bits, {} lanes)",
            t.dtype.code, t.dtype.bits, t.dtype.lanes
        ))));
    }
    let ptr = t.data as u64 + t.byte_offset;
    // SAFETY: the tensor's rows, held (not deleted) until the chain's
    // reads are done.
    let frame =
        unsafe { input_frame(gpu, ptr, &shape, strides.as_deref(), "a tensor") }.map_err(fail)?;
    Ok(CudaInput {
        frame,
        owner: None,
        held: Some(held),
    })
}

/// DLPack tensors the chain has been given and may still be reading, each
/// with an event recorded after its reads: deleted (given back) once the
/// event has passed, at the next call or when the chain goes.
#[derive(Default)]
pub struct Held(Vec<(Mark, DlpackTensor)>);

impl Held {
    /// Keeps `tensor` until the work enqueued so far on `gpu` is done.
    pub fn keep(&mut self, gpu: &Gpu, tensor: DlpackTensor) -> seamstream::Result<()> {
        match gpu.mark() {
            Ok(mark) => {
                self.0.push((mark, tensor));
                Ok(())
            }
            Err(e) => {
                // Without a mark, wait for the reads and give it back.
                let _ = gpu.sync();
                // SAFETY: read (or failed) already; the GIL is held.
                unsafe { tensor.delete() };
                Err(e)
            }
        }
    }

    /// Gives back every tensor whose reads are done; with `wait`, every
    /// tensor, after waiting for its reads. Call with the GIL held (a
    /// producer's deleter may need it).
    pub fn release(&mut self, wait: bool) {
        let mut i = 0;
        while i < self.0.len() {
            let mark = &self.0[i].0;
            if wait {
                let _ = mark.wait();
            }
            if mark.is_done() {
                let (_, tensor) = self.0.swap_remove(i);
                // SAFETY: its reads are done; the caller holds the GIL.
                unsafe { tensor.delete() };
            } else {
                i += 1;
            }
        }
    }
}

impl Drop for Held {
    /// The chain's `Drop`, which Python runs with the GIL held.
    fn drop(&mut self) {
        self.release(true);
    }
}
