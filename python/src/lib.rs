//! seamstream for Python: the library's chains on NumPy arrays, on the CPU
//! or a GPU, with no second implementation of anything. `Chain` is the
//! library's `Chain` (or `GpuChain` on a GPU), `read` its `FrameReader`,
//! `ops` its registry. Every call releases the GIL while it works; an error
//! is a Python exception with the library's message, and a panic becomes a
//! `RuntimeError`, never an abort of the interpreter.

#[cfg(feature = "cuda")]
mod cuda;

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, Ordering};

use numpy::{PyArray1, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::exceptions::{PyFileNotFoundError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList, PyTuple};

use seamstream::cuda::{Gpu, Placed};
use seamstream::gst::decode::FrameReader;
use seamstream::ops::params::Media;
use seamstream::{Chain, Device, Error, ErrorKind, Frame, Plane, registry};

/// A library error as the Python exception a user expects: a missing file
/// is `FileNotFoundError`, a bad parameter or input `ValueError`, a GPU or
/// pipeline failure `RuntimeError`.
fn py_err(e: Error) -> PyErr {
    let text = e.to_string();
    match (&e, e.kind()) {
        (Error::Read { path, .. }, _)
            if !path.to_string_lossy().contains("://") && !path.exists() =>
        {
            PyFileNotFoundError::new_err(text)
        }
        (_, ErrorKind::BadParameter | ErrorKind::BadInput) => PyValueError::new_err(text),
        _ => PyRuntimeError::new_err(text),
    }
}

/// `device=` as every interface takes it, or a `ValueError` naming it.
fn device_of(text: &str) -> PyResult<Device> {
    Device::parse(text).ok_or_else(|| {
        PyValueError::new_err(format!("device={text:?}: expected {}", Device::EXPECTED))
    })
}

/// Runs `work`, turning a panic into a `RuntimeError` that says so.
fn guarded<T>(work: impl FnOnce() -> seamstream::Result<T>) -> PyResult<T> {
    match catch_unwind(AssertUnwindSafe(work)) {
        Ok(result) => result.map_err(py_err),
        Err(panic) => {
            let what = panic
                .downcast_ref::<String>()
                .map(String::as_str)
                .or_else(|| panic.downcast_ref::<&str>().copied())
                .unwrap_or("no message");
            Err(PyRuntimeError::new_err(format!(
                "seamstream failed inside (a bug; please report it): {what}"
            )))
        }
    }
}

/// Whether this process has started what does not survive `fork()`:
/// rayon's and GStreamer's threads, a GPU's context.
static STARTED: AtomicBool = AtomicBool::new(false);
/// Set in a child forked after [`STARTED`]: it has none of those threads,
/// and a call that needs them would hang or crash.
static FORKED: AtomicBool = AtomicBool::new(false);

/// Refuses work in a child forked from a process that had started
/// seamstream's threads (with the advice to spawn), and else, with
/// `starts`, notes that they may start now.
fn entering(starts: bool) -> PyResult<()> {
    if FORKED.load(Ordering::Relaxed) {
        return Err(PyRuntimeError::new_err(
            "this process was forked from one that had used seamstream, whose threads (and \
             GPU context) do not survive fork(); start worker processes with the \"spawn\" \
             method instead, e.g. DataLoader(..., multiprocessing_context=\"spawn\") or \
             multiprocessing.get_context(\"spawn\")",
        ));
    }
    if starts {
        STARTED.store(true, Ordering::Relaxed);
    }
    Ok(())
}

/// Registered with `os.register_at_fork` by the package: marks a child
/// forked after seamstream's threads started.
#[pyfunction]
fn _after_fork_in_child() {
    if STARTED.load(Ordering::Relaxed) {
        FORKED.store(true, Ordering::Relaxed);
    }
}

/// The error for a frame that is not a NumPy one: a CUDA array on a CPU
/// chain is named as such (asked only here, off the NumPy path), anything
/// else keeps `e`.
fn not_numpy(frame: &Bound<'_, PyAny>, e: PyErr) -> PyErr {
    #[cfg(feature = "cuda")]
    if cuda::is_on_gpu(frame) {
        return PyValueError::new_err(
            "a CUDA array needs a chain on the GPU: make it with device=\"cuda\"",
        );
    }
    #[cfg(not(feature = "cuda"))]
    let _ = frame;
    e
}

/// The chain on its device: the CPU reference, or the GPU halves prepared
/// for the size and format of the frames seen last.
enum Engine {
    Cpu(Chain),
    Gpu {
        gpu: Box<Gpu>,
        chain: Chain,
        #[cfg_attr(not(feature = "cuda"), allow(dead_code))]
        ready: Option<Prepared>,
    },
}

/// The GPU chain for one input shape.
#[cfg_attr(not(feature = "cuda"), allow(dead_code))]
struct Prepared {
    #[cfg(feature = "cuda")]
    chain: seamstream::cuda::stage::GpuChain,
    shape: (usize, usize, seamstream::DevFormat),
}

impl Engine {
    /// The chain prepared on the GPU for frames of `shape`.
    #[cfg(feature = "cuda")]
    fn prepared(
        gpu: &Gpu,
        chain: &Chain,
        ready: &mut Option<Prepared>,
        shape: (usize, usize, seamstream::DevFormat),
    ) -> seamstream::Result<()> {
        // A new size or format prepares the halves again (fast mode's
        // memory starts afresh, as after a cut).
        if ready.as_ref().is_none_or(|r| r.shape != shape) {
            let g = seamstream::cuda::stage::GpuChain::new(gpu, chain, shape.0, shape.1, shape.2)?;
            *ready = Some(Prepared { chain: g, shape });
        }
        Ok(())
    }

    /// A frame already on the GPU through the chain, the result left there.
    #[cfg(feature = "cuda")]
    fn apply_on_device(
        &mut self,
        input: cuda::CudaInput,
    ) -> seamstream::Result<seamstream::cuda::DevFrame> {
        let Engine::Gpu { gpu, chain, ready } = self else {
            return Err(Error::Unsupported(
                "a CUDA array needs a chain on the GPU: make it with device=\"cuda\"".into(),
            ));
        };
        let frame = &*input.frame;
        let shape = (frame.width, frame.height, frame.format);
        Engine::prepared(gpu, chain, ready, shape)?;
        let r = ready.as_mut().expect("prepared above");
        let mut outs = r.chain.alloc_outputs(gpu)?;
        r.chain.run(gpu, frame, &mut outs)?;
        let out = match outs.pop() {
            Some(out) => out,
            // No operation: the result is a copy of the input.
            // SAFETY: the input's packed pixels, read on the chain's stream
            // after the producer's.
            None => unsafe {
                let ptr = frame.device_ptr(gpu);
                seamstream::cuda::DevFrame::copy_of_device(
                    gpu,
                    ptr,
                    frame.pitch(),
                    shape.0,
                    shape.1,
                    shape.2,
                )
            }?,
        };
        // The input's owner may reuse it once the chain has read it: its
        // stream is ordered after the chain's (a DLPack tensor is held
        // instead, by the caller).
        if let Some(owner) = input.owner {
            // SAFETY: the owner's stream, on this GPU.
            unsafe { gpu.order(gpu.stream_handle(), owner) }?;
        }
        Ok(out)
    }

    fn apply(&mut self, frame: Frame) -> seamstream::Result<Frame> {
        match self {
            Engine::Cpu(chain) => chain.apply(frame),
            #[cfg(feature = "cuda")]
            Engine::Gpu { gpu, chain, ready } => {
                let shape = (
                    frame.width(),
                    frame.height(),
                    seamstream::DevFormat::of(&frame),
                );
                Engine::prepared(gpu, chain, ready, shape)?;
                let r = ready.as_mut().expect("prepared above");
                r.chain.apply(gpu, &frame)
            }
            #[cfg(not(feature = "cuda"))]
            Engine::Gpu { gpu, .. } => match **gpu {},
        }
    }
}

/// A chain of operations, built once from the text of `--op`, applied to
/// frames one after another (it keeps what video needs between them: fast
/// retargeting's seams, the reframe window's path).
#[pyclass(name = "Chain", module = "seamstream")]
struct PyChain {
    engine: Mutex<Engine>,
    ops: Vec<String>,
    device: String,
    /// DLPack tensors the GPU may still be reading.
    #[cfg(feature = "cuda")]
    held: Mutex<cuda::Held>,
}

impl PyChain {
    /// The chain's GPU, if it runs on one.
    #[cfg(feature = "cuda")]
    fn gpu(&self) -> Option<Gpu> {
        match &*self.engine.lock().unwrap_or_else(|e| e.into_inner()) {
            Engine::Gpu { gpu, .. } => Some((**gpu).clone()),
            Engine::Cpu(_) => None,
        }
    }
}

/// The operations given as `Chain("gaussian:sigma=2", "sobel")`, or as one
/// list, `Chain(["gaussian:sigma=2", "sobel"])`.
fn op_texts(args: &Bound<'_, PyTuple>) -> PyResult<Vec<String>> {
    let mut texts = Vec::new();
    for a in args.iter() {
        if let Ok(text) = a.extract::<String>() {
            texts.push(text);
        } else if let Ok(list) = a.extract::<Vec<String>>() {
            texts.extend(list);
        } else {
            return Err(PyValueError::new_err(format!(
                "an operation is text, `name:key=value,...` (e.g. \"gaussian:sigma=2\"); got {}",
                a.get_type().name()?
            )));
        }
    }
    Ok(texts)
}

#[pymethods]
impl PyChain {
    #[new]
    #[pyo3(signature = (*ops, device = "auto"))]
    fn new(ops: &Bound<'_, PyTuple>, device: &str) -> PyResult<Self> {
        let texts = op_texts(ops)?;
        let asked = device_of(device)?;
        // Placing the chain may open a GPU.
        entering(!matches!(asked, Device::Cpu))?;
        // Each call gives its own frame's result: a reframe here looks no
        // frame ahead (`seamstream.run` does).
        let chain = guarded(|| {
            let mut chain = registry::parse_chain_for(&texts, Media::Video)?;
            chain.hold_none()?;
            Ok(chain)
        })?;
        let (engine, device) = match guarded(|| seamstream::cuda::place(asked, None))? {
            Placed::Gpu(gpu) => {
                let name = format!("{gpu:?}");
                let engine = Engine::Gpu {
                    gpu: Box::new(gpu),
                    chain,
                    ready: None,
                };
                (engine, name)
            }
            Placed::Cpu { .. } => (Engine::Cpu(chain), "cpu".to_string()),
        };
        Ok(PyChain {
            engine: Mutex::new(engine),
            ops: texts,
            device,
            #[cfg(feature = "cuda")]
            held: Mutex::default(),
        })
    }

    /// Runs the chain on one frame: a NumPy `uint8` array `H×W×4` (RGBA) or
    /// `H×W` (gray), giving a new one of the same kind at the chain's output
    /// size; or, on a GPU, a CUDA array (anything with
    /// `__cuda_array_interface__` or `__dlpack__`: torch, CuPy, JAX), giving
    /// a `DeviceFrame` on the same GPU (`torch.from_dlpack` takes it), with
    /// nothing copied through the host.
    ///
    /// The call returns before the GPU is done. The chain's work is ordered
    /// after the array's stream and that stream after the chain's reads:
    /// `stream` (a handle, a `torch.cuda.Stream` or a CuPy stream), else the
    /// array's own (`__cuda_array_interface__` v3), else the legacy default
    /// stream, which torch and CuPy use unless told otherwise. A DLPack
    /// producer orders itself; its tensor is held until the chain has read
    /// it.
    #[pyo3(signature = (frame, *, stream = None))]
    fn apply<'py>(
        &self,
        py: Python<'py>,
        frame: &Bound<'py, PyAny>,
        stream: Option<Bound<'py, PyAny>>,
    ) -> PyResult<Bound<'py, PyAny>> {
        entering(true)?;
        #[cfg(feature = "cuda")]
        if let Some(gpu) = self.gpu() {
            let stream = stream.as_ref().map(cuda::stream_handle).transpose()?;
            if let Some(mut input) = cuda::frame_from_cuda_array(&gpu, frame, stream)? {
                let held = input.held.take();
                let out = py.detach(|| {
                    guarded(|| {
                        let mut engine = self.engine.lock().unwrap_or_else(|e| e.into_inner());
                        engine.apply_on_device(input)
                    })
                });
                // A DLPack tensor is given back once the chain has read it;
                // those given before and read by now go back here.
                let mut holding = self.held.lock().unwrap_or_else(|e| e.into_inner());
                holding.release(false);
                if let Some(tensor) = held {
                    holding.keep(&gpu, tensor).map_err(py_err)?;
                }
                return Ok(Bound::new(py, cuda::DeviceFrame::new(out?, gpu))?.into_any());
            }
        }
        if stream.is_some() {
            return Err(PyValueError::new_err(
                "stream= orders a CUDA array's work; a NumPy frame has none (the call \
                 returns with the result)",
            ));
        }
        let input = frame_from_array(frame).map_err(|e| not_numpy(frame, e))?;
        let out = py.detach(|| {
            guarded(|| {
                let mut engine = self.engine.lock().unwrap_or_else(|e| e.into_inner());
                engine.apply(input)
            })
        })?;
        array_from_frame(py, out)
    }

    /// The size a `height`×`width` input comes out at: `(height, width)`.
    fn output_size(&self, height: usize, width: usize) -> PyResult<(usize, usize)> {
        let engine = self.engine.lock().unwrap_or_else(|e| e.into_inner());
        let chain = match &*engine {
            Engine::Cpu(c) | Engine::Gpu { chain: c, .. } => c,
        };
        let (w, h) = guarded(|| chain.output_size(width, height))?;
        Ok((h, w))
    }

    /// Where the chain runs: `cpu`, or the GPU (`Gpu(0, sm_90)`).
    #[getter]
    fn device(&self) -> String {
        self.device.clone()
    }

    /// The operations, as written.
    #[getter]
    fn ops(&self) -> Vec<String> {
        self.ops.clone()
    }

    fn __repr__(&self) -> String {
        format!("Chain({:?}, device={:?})", self.ops, self.device)
    }
}

/// A frame from a NumPy array, or a `ValueError` that says what is wanted.
fn frame_from_array(obj: &Bound<'_, PyAny>) -> PyResult<Frame> {
    let wanted = "a uint8 array H×W×4 (RGBA) or H×W (gray)";
    let array = obj.cast::<numpy::PyUntypedArray>().map_err(|_| {
        PyValueError::new_err(format!(
            "expected {wanted}; got {}",
            obj.get_type()
                .name()
                .map(|n| n.to_string())
                .unwrap_or_default()
        ))
    })?;
    let shape = array.shape().to_vec();
    let dtype = array.dtype().to_string();
    let bad =
        || PyValueError::new_err(format!("expected {wanted}; got {dtype} of shape {shape:?}"));
    let bytes = obj
        .cast::<numpy::PyArrayDyn<u8>>()
        .map_err(|_| bad())?
        .try_readonly()
        .map_err(|_| PyValueError::new_err("the array is being written elsewhere"))?;
    // The pixels copied once, straight from the array's memory where it is
    // contiguous, else read in order (a view, a slice).
    let copied: Vec<u8>;
    let data: &[u8] = match bytes.as_slice() {
        Ok(s) => s,
        Err(_) => {
            copied = bytes.as_array().iter().copied().collect();
            &copied
        }
    };
    let planes = |w: usize, h: usize| w > 0 && h > 0;
    match *shape.as_slice() {
        [h, w, 4] if planes(w, h) => {
            let px: Vec<[u8; 4]> = data.as_chunks::<4>().0.to_vec();
            Plane::from_vec(w, h, px).map(Frame::Rgba).map_err(py_err)
        }
        [h, w] if planes(w, h) => Plane::from_vec(w, h, data.to_vec())
            .map(Frame::Gray)
            .map_err(py_err),
        _ => Err(bad()),
    }
}

/// A frame as a new NumPy array (its pixels moved in, not copied).
fn array_from_frame(py: Python<'_>, frame: Frame) -> PyResult<Bound<'_, PyAny>> {
    let (w, h) = (frame.width(), frame.height());
    match frame {
        Frame::Rgba(p) => {
            let flat = p.into_packed_vec().into_flattened();
            let a = PyArray1::from_vec(py, flat).reshape([h, w, 4])?;
            Ok(a.into_any())
        }
        Frame::Gray(p) => {
            let a = PyArray1::from_vec(py, p.into_packed_vec()).reshape([h, w])?;
            Ok(a.into_any())
        }
    }
}

/// Decoded frames of a video, in order: each an `H×W×4` RGBA array with its
/// presentation time in seconds.
#[pyclass(name = "Reader", module = "seamstream", unsendable)]
struct PyReader {
    reader: Option<FrameReader>,
}

#[pymethods]
impl PyReader {
    fn __iter__(slf: PyRef<'_, Self>) -> PyRef<'_, Self> {
        slf
    }

    fn __next__<'py>(
        &mut self,
        py: Python<'py>,
    ) -> PyResult<Option<(Bound<'py, PyAny>, Option<f64>)>> {
        let Some(reader) = self.reader.as_mut() else {
            return Ok(None);
        };
        let next = guarded(|| reader.next_frame())?;
        match next {
            Some(plane) => {
                let time = reader.time();
                Ok(Some((array_from_frame(py, Frame::Rgba(plane))?, time)))
            }
            None => {
                self.reader = None;
                Ok(None)
            }
        }
    }

    /// The frame rate the file gives (after the first frame; `None` for a
    /// variable rate).
    #[getter]
    fn fps(&self) -> Option<f64> {
        self.reader.as_ref().and_then(FrameReader::fps)
    }
}

/// The decoded frames of the video at `path` (a file or a URI), as
/// `(frame, seconds)` pairs.
#[pyfunction]
fn read(path: &str) -> PyResult<PyReader> {
    entering(true)?;
    let reader = guarded(|| FrameReader::open(path))?;
    Ok(PyReader {
        reader: Some(reader),
    })
}

/// A frame rate as `--fps` takes it: `30`, `29.97` or `30000/1001`.
fn fps_of(value: &Bound<'_, PyAny>) -> PyResult<(i32, i32)> {
    let text = match value.extract::<String>() {
        Ok(t) => t,
        Err(_) => value.str()?.to_string(),
    };
    seamstream::args::parse_fps(&text).map_err(py_err)
}

/// Runs a whole job, as `seamstream run INPUT OUTPUT --op …` does: a file,
/// URI, camera, `test:PATTERN` or `sample` in; a file (its container from
/// the name), `null` or `display` out; audio kept unless `audio=False`;
/// the encoder as `codec`, `crf`, `bitrate` and `preset` say. `progress`,
/// if given, is called with (frames done, frames expected or None) up to
/// ten times a second. Ctrl-C finishes the output so that it plays, then
/// raises `KeyboardInterrupt`. Returns the summary `run --json` prints, as
/// a dict.
#[pyfunction]
#[pyo3(signature = (
    input, output = "out.mp4", ops = Vec::new(), *, device = "auto", progress = None,
    codec = None, crf = None, bitrate = None, preset = None, audio = true,
    size = None, fps = None, frames = None, live = false
))]
#[allow(clippy::too_many_arguments)]
fn run<'py>(
    py: Python<'py>,
    input: &str,
    output: &str,
    ops: Vec<String>,
    device: &str,
    progress: Option<Py<PyAny>>,
    codec: Option<&str>,
    crf: Option<u32>,
    bitrate: Option<u32>,
    preset: Option<String>,
    audio: bool,
    size: Option<(usize, usize)>,
    fps: Option<&Bound<'py, PyAny>>,
    frames: Option<u64>,
    live: bool,
) -> PyResult<Bound<'py, PyAny>> {
    use seamstream::gst::encode::{Codec, EncoderChoice};
    use seamstream::gst::request::RunRequest;
    use seamstream::gst::run::OnProgress;
    entering(true)?;
    use seamstream::gst::{Input, Output};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let device = device_of(device)?;
    let fps = fps.map(fps_of).transpose()?;
    let request = guarded(|| {
        Ok(RunRequest {
            input: Some(Input::parse(input)?),
            output: Some(Output::parse(output)?),
            device: Some(device),
            size,
            fps,
            frames,
            live: Some(live),
            chain: Some(registry::parse_chain_for(&ops, Media::Video)?),
            encoder: EncoderChoice {
                codec: codec.map(Codec::parse).transpose()?,
                crf,
                bitrate,
                preset,
            },
            audio: Some(audio),
            fallback: None,
        })
    })?;
    let stop = Arc::new(AtomicBool::new(false));
    // What the progress callback raised (or Ctrl-C), raised after the
    // output is finished.
    let raised: Arc<Mutex<Option<PyErr>>> = Arc::new(Mutex::new(None));
    let hook = {
        let (stop, raised) = (stop.clone(), raised.clone());
        OnProgress(Arc::new(move |done: u64, total: Option<u64>| {
            Python::attach(|py| {
                let result = py.check_signals().and_then(|()| match &progress {
                    Some(f) => f.call1(py, (done, total)).map(|_| ()),
                    None => Ok(()),
                });
                if let Err(e) = result {
                    stop.store(true, Ordering::Relaxed);
                    let mut slot = raised.lock().unwrap_or_else(|e| e.into_inner());
                    slot.get_or_insert(e);
                }
            })
        }))
    };
    let ran = py.detach(|| guarded(|| request.run(stop, Some(hook))));
    if let Some(e) = raised.lock().unwrap_or_else(|e| e.into_inner()).take() {
        return Err(e);
    }
    let json = ran?.json();
    py.import("json")?.call_method1("loads", (json,))
}

/// The retargeting figures of `result` against `original` (two clips of
/// the same frames), as `seamstream quality ORIGINAL RESULT --json` gives
/// them: similarity and flicker, each beside the original scaled to the
/// result's size, and with `crops` fixed windows, the best of them. The
/// similarity is measured on every `every`-th frame; `frames` stops early.
#[pyfunction]
#[pyo3(signature = (original, result, *, every = 15, frames = None, crops = 9))]
fn quality<'py>(
    py: Python<'py>,
    original: &str,
    result: &str,
    every: usize,
    frames: Option<usize>,
    crops: usize,
) -> PyResult<Bound<'py, PyAny>> {
    use seamstream::quality::Meter;
    use seamstream::quality::report::{Files, compare_files, json};
    entering(true)?;
    if every == 0 {
        return Err(PyValueError::new_err(
            "every=0: give N >= 1 (the similarity is measured on every N-th frame)",
        ));
    }
    let text = py.detach(|| {
        guarded(|| {
            let meter = Meter::new(every).with_crops(crops);
            let meter = compare_files(original, result, meter, frames, |_| {})?;
            let files = Files {
                boxes: None,
                path: None,
                crops,
            };
            Ok(json(&meter.report(), None, &files))
        })
    })?;
    py.import("json")?.call_method1("loads", (text,))
}

/// Every operation, with its parameters, as dicts: `name`, `summary`,
/// `example`, and `params` (each `name`, `kind`, `default`, `required`,
/// `help`).
#[pyfunction]
fn ops(py: Python<'_>) -> PyResult<Bound<'_, PyList>> {
    let list = PyList::empty(py);
    for entry in registry::REGISTRY {
        let spec = entry.spec;
        let op = PyDict::new(py);
        op.set_item("name", spec.name)?;
        op.set_item("summary", spec.summary)?;
        op.set_item("example", spec.example)?;
        let params = PyList::empty(py);
        for p in spec.params {
            let d = PyDict::new(py);
            d.set_item("name", p.name)?;
            d.set_item("kind", p.kind.describe())?;
            d.set_item("default", p.default)?;
            d.set_item("required", p.required)?;
            d.set_item("help", p.help)?;
            params.append(d)?;
        }
        op.set_item("params", params)?;
        list.append(op)?;
    }
    Ok(list)
}

#[pymodule]
fn _seamstream(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<PyChain>()?;
    m.add_class::<PyReader>()?;
    #[cfg(feature = "cuda")]
    m.add_class::<cuda::DeviceFrame>()?;
    m.add_function(wrap_pyfunction!(read, m)?)?;
    m.add_function(wrap_pyfunction!(ops, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(quality, m)?)?;
    m.add_function(wrap_pyfunction!(_after_fork_in_child, m)?)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
