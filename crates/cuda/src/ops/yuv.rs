//! GPU `yuv` (kernels/yuv.cu), one thread a 2×2 block (one chroma sample),
//! and the conversions of the streaming stage: packed NV12/I420 from a
//! decoder to RGBA after upload ([`yuv420_to_rgba`]), and RGBA or gray to
//! NV12/I420 before download ([`rgba_to_yuv420`]).
//!
//! A packed buffer holds [`Yuv420`]'s planes one after another, rows packed:
//! Y (w×h), then NV12's interleaved UV plane (2·cw×ch) or I420's U and V
//! planes (cw×ch each), chroma sizes rounded up ([`Yuv420::chroma_size`]).

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::color::{Colorimetry, Range};
use crate::error::{Error, Result};
use crate::frame::{PixelFormat, Yuv420};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, cuda_err};
use seamstream_core::ops::yuv::YuvRoundTrip;

/// The kernels' colour arguments, in order: Kr, Kg, Kb, then the y scale, y
/// offset and chroma scale of `Colorimetry::scales` in src/ops/yuv.rs (the
/// same f32 constants).
fn coefficients(c: Colorimetry) -> [f32; 6] {
    let (kr, kg, kb) = c.matrix.weights();
    let (ys, yo, cs): (f32, f32, f32) = match c.range {
        Range::Limited => (219.0 / 255.0, 16.0, 224.0 / 255.0),
        Range::Full => (1.0, 0.0, 1.0),
    };
    [kr, kg, kb, ys, yo, cs]
}

/// 1 for NV12, 0 for I420 (the kernels' `nv12` flag); an error for formats
/// that are not 4:2:0.
fn nv12_flag(format: PixelFormat) -> Result<u32> {
    match format {
        PixelFormat::Nv12 => Ok(1),
        PixelFormat::I420 => Ok(0),
        other => Err(Error::BadFrame(format!(
            "{other} is not a 4:2:0 YUV format; use NV12 or I420"
        ))),
    }
}

/// Bytes of a packed NV12 or I420 buffer of `width`×`height`.
pub fn yuv420_len(format: PixelFormat, width: usize, height: usize) -> Result<usize> {
    nv12_flag(format)?;
    let (cw, ch) = Yuv420::chroma_size(width, height);
    Ok(width * height + 2 * cw * ch)
}

/// One thread a chroma sample of a `width`×`height` frame.
fn block_grid(width: usize, height: usize) -> LaunchConfig {
    let (cw, ch) = Yuv420::chroma_size(width, height);
    LaunchConfig {
        grid_dim: (blocks(cw, 32), blocks(ch, 8), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

/// Packed NV12/I420 `src` of `width`×`height` to RGBA in `out` (alpha
/// opaque), the values of [`seamstream_core::ops::yuv::yuv420_to_rgba`]. Enqueued on
/// the compute stream.
pub fn yuv420_to_rgba(
    gpu: &Gpu,
    src: &CudaSlice<u8>,
    format: PixelFormat,
    width: usize,
    height: usize,
    c: Colorimetry,
    out: &mut DevFrame,
) -> Result<()> {
    let nv12 = nv12_flag(format)?;
    let len = yuv420_len(format, width, height)?;
    if src.len() < len {
        return Err(Error::BadFrame(format!(
            "a {width}x{height} {format} frame needs {len} bytes, the buffer has {}",
            src.len()
        )));
    }
    if (out.width, out.height, out.format) != (width, height, DevFormat::Rgba) {
        return Err(Error::BadFrame(format!(
            "a {width}x{height} {format} frame converts to a {width}x{height} RGBA frame, not a {out:?}"
        )));
    }
    let kernel = gpu.function("yuv.cu", "yuv420_to_rgba")?;
    let k = coefficients(c);
    let (w, h) = (width as u32, height as u32);
    let mut b = gpu.stream().launch_builder(&kernel);
    b.arg(src).arg(&mut out.data).arg(&w).arg(&h).arg(&nv12);
    for x in &k {
        b.arg(x);
    }
    // SAFETY: yuv420_to_rgba takes (yuv, out, w, h, nv12, kr, kg, kb, ys,
    // yo, cs) as pushed; src holds the packed w×h frame (checked above) and
    // out w×h RGBA pixels.
    unsafe { b.launch(block_grid(width, height)) }
        .map_err(|e| cuda_err("yuv420_to_rgba: launching", e))?;
    Ok(())
}

/// RGBA (or gray, as R = G = B) `src` to packed NV12/I420 in `out`, the
/// bytes of [`seamstream_core::ops::yuv::rgba_to_yuv420`]. Enqueued on the compute
/// stream.
pub fn rgba_to_yuv420(
    gpu: &Gpu,
    src: &DevFrame,
    format: PixelFormat,
    c: Colorimetry,
    out: &mut CudaSlice<u8>,
) -> Result<()> {
    let nv12 = nv12_flag(format)?;
    let len = yuv420_len(format, src.width, src.height)?;
    if out.len() < len {
        return Err(Error::BadFrame(format!(
            "a {}x{} {format} frame needs {len} bytes, the buffer has {}",
            src.width,
            src.height,
            out.len()
        )));
    }
    let name = match src.format {
        DevFormat::Rgba => "rgba_to_yuv420",
        DevFormat::Gray => "gray_to_yuv420",
    };
    let kernel = gpu.function("yuv.cu", name)?;
    let k = coefficients(c);
    let (w, h) = (src.width as u32, src.height as u32);
    let mut b = gpu.stream().launch_builder(&kernel);
    b.arg(&src.data).arg(out).arg(&w).arg(&h).arg(&nv12);
    for x in &k {
        b.arg(x);
    }
    // SAFETY: {rgba,gray}_to_yuv420 take (in, yuv, w, h, nv12, kr, kg, kb,
    // ys, yo, cs) as pushed; src holds w×h pixels of the kernel's format and
    // out the packed frame's bytes (checked above).
    unsafe { b.launch(block_grid(src.width, src.height)) }
        .map_err(|e| cuda_err(&format!("{name}: launching"), e))?;
    Ok(())
}

/// The `yuv` op: the round trip in one pass, the YUV values kept in
/// registers (they depend only on their own 2×2 block), so it needs no
/// scratch. NV12 and I420 store the same values, so the layout is moot.
pub struct GpuYuv {
    coefficients: [f32; 6],
}

/// [`GpuYuv`] with the kernel for one pixel format.
struct Ready {
    coefficients: [f32; 6],
    kernel: CudaFunction,
}

impl GpuYuv {
    pub fn new(op: &YuvRoundTrip) -> Self {
        GpuYuv {
            coefficients: coefficients(op.colorimetry),
        }
    }
}

impl GpuOp for GpuYuv {
    fn name(&self) -> &'static str {
        "yuv"
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        _: usize,
        _: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let name = match format {
            DevFormat::Rgba => "yuv_round_trip_rgba",
            DevFormat::Gray => "yuv_round_trip_gray",
        };
        Ok(Box::new(Ready {
            coefficients: self.coefficients,
            kernel: gpu.function("yuv.cu", name)?,
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let kernel = &self.kernel;
        let (w, h) = (input.width as u32, input.height as u32);
        let mut b = gpu.stream().launch_builder(kernel);
        b.arg(&input.data).arg(&mut output.data).arg(&w).arg(&h);
        for x in &self.coefficients {
            b.arg(x);
        }
        // SAFETY: yuv_round_trip_{rgba,gray} take (in, out, w, h, kr, kg, kb,
        // ys, yo, cs) as pushed; in and out hold w×h pixels of the kernel's
        // format.
        unsafe { b.launch(block_grid(input.width, input.height)) }
            .map_err(|e| cuda_err("yuv: launching", e))?;
        Ok(())
    }
}
