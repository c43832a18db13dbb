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
use seamstream::cuda::{BorrowedFrame, DevFrame, Gpu};

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

/// A CUDA array ready for the chain: read in place where its rows are
/// packed, else copied on the device; and the stream it was made on, which
/// must not reuse its memory before the chain has read it.
pub struct CudaInput {
    pub frame: InputFrame,
    pub producer: Option<usize>,
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

/// A CUDA array as the chain's input, if `obj` is one; `None` for anything
/// else. The chain's stream is ordered after the producer's first.
pub fn frame_from_cuda_array(gpu: &Gpu, obj: &Bound<'_, PyAny>) -> PyResult<Option<CudaInput>> {
    let Ok(cai) = obj.getattr("__cuda_array_interface__") else {
        return Ok(None);
    };
    let wanted = "a CUDA uint8 array H×W×4 (RGBA) or H×W (gray), rows contiguous";
    let shape: Vec<usize> = cai.get_item("shape")?.extract()?;
    let typestr: String = cai.get_item("typestr")?.extract()?;
    let (ptr, _readonly): (usize, bool) = cai.get_item("data")?.extract()?;
    let strides: Option<Vec<isize>> = cai.get_item("strides").ok().and_then(|s| s.extract().ok());
    let bad = || {
        PyValueError::new_err(format!(
            "expected {wanted}; got {typestr} of shape {shape:?}"
        ))
    };
    if typestr != "|u1" {
        return Err(bad());
    }
    let (height, width, format) = match *shape.as_slice() {
        [h, w, 4] if h > 0 && w > 0 => (h, w, DevFormat::Rgba),
        [h, w] if h > 0 && w > 0 => (h, w, DevFormat::Gray),
        _ => return Err(bad()),
    };
    let row = width * format.bytes_per_pixel();
    let pitch = match strides.as_deref() {
        None => row,
        Some([rs, 4, 1]) if format == DevFormat::Rgba && *rs >= row as isize => *rs as usize,
        Some([rs, 1]) if format == DevFormat::Gray && *rs >= row as isize => *rs as usize,
        Some(s) => {
            return Err(PyValueError::new_err(format!(
                "expected {wanted}; got strides {s:?} (make it contiguous first)"
            )));
        }
    };
    // The stream the array was made on (none: it is ready already).
    let producer = cai
        .get_item("stream")
        .ok()
        .and_then(|s| s.extract::<Option<usize>>().ok())
        .flatten()
        .filter(|&h| h != 0);
    if let Some(p) = producer {
        // SAFETY: the interface's stream is the producer's, on this GPU.
        unsafe { gpu.order(p, gpu.stream_handle()) }.map_err(py_err)?;
    }
    let frame = if pitch == row {
        // SAFETY: the interface promises `height` packed rows at `ptr`; the
        // producer's stream is ordered after the chain's reads (or the
        // chain waits) before the caller may reuse them.
        InputFrame::Borrowed(unsafe {
            DevFrame::borrow_device(gpu, ptr as u64, width, height, format)
        })
    } else {
        // SAFETY: as above, `height` rows `pitch` apart.
        InputFrame::Copied(
            unsafe { DevFrame::copy_of_device(gpu, ptr as u64, pitch, width, height, format) }
                .map_err(py_err)?,
        )
    };
    Ok(Some(CudaInput { frame, producer }))
}
