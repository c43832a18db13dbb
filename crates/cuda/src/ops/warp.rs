//! GPU `warp` (kernels/warp.cu), in 32×8 blocks so that a block's taps stay
//! close in the source under rotation and scale: one thread a destination
//! pixel for nearest and bicubic, two vertically adjacent ones for bilinear.
//! The matrix is the CPU op's [`Transform`], already inverted on the host.
//! Bilinear RGBA at 1080p writes 8.3 MB and reads about as much (mostly
//! from L2): about 6 µs of memory traffic; it measures 13.2 µs on the H100,
//! bound by issuing its ~115 instructions a pixel (kernels/warp.cu).

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use crate::error::{Error, Result};
use crate::frame::Rgba;
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, check_frames, cuda_err};
use seamstream_core::ops::warp::{Interpolation, Transform, Warp, WarpBorder};

#[derive(Clone)]
pub struct GpuWarp {
    transform: Transform,
    size: Option<(usize, usize)>,
    interpolation: Interpolation,
    border: WarpBorder,
}

/// [`GpuWarp`] with the kernel for one pixel format.
struct Ready {
    op: GpuWarp,
    kernel: CudaFunction,
    format: DevFormat,
}

/// Whether every source point the destination→source affine `a` gives for
/// a `dw`×`dh` destination lies well inside ±COORD_LIMIT (kernels/warp.cu,
/// 4194300), with finite entries: then the kernel's clamp and NaN test change
/// nothing, and its `_bounded` form leaves them out (about 7 of a pixel's
/// ~110 instructions). The f32 evaluation on the device is within a few
/// ulps of the f64 reach here, far inside the margin.
fn affine_bounded(a: &[f32; 6], dw: usize, dh: usize) -> bool {
    const LIMIT: f64 = 2_000_000.0;
    let (x, y) = (dw.saturating_sub(1) as f64, dh.saturating_sub(1) as f64);
    a.iter().all(|v| v.is_finite())
        && [0, 3].iter().all(|&r| {
            let reach = f64::from(a[r]).abs() * x
                + f64::from(a[r + 1]).abs() * y
                + f64::from(a[r + 2]).abs();
            reach < LIMIT
        })
}

impl GpuWarp {
    pub fn new(op: &Warp) -> Self {
        GpuWarp {
            transform: op.transform,
            size: op.size,
            interpolation: op.interpolation,
            border: op.border,
        }
    }
}

impl GpuOp for GpuWarp {
    fn name(&self) -> &'static str {
        "warp"
    }

    fn output(&self, w: usize, h: usize, f: DevFormat) -> Result<(usize, usize, DevFormat)> {
        let (w, h) = self.size.unwrap_or((w, h));
        Ok((w, h, f))
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let kind = match self.transform {
            Transform::Affine(_) => "affine",
            Transform::Perspective(_) => "perspective",
        };
        let interp = match self.interpolation {
            Interpolation::Nearest => "nearest",
            Interpolation::Bilinear => "bilinear",
            Interpolation::Bicubic => "bicubic",
        };
        let pixel = match format {
            DevFormat::Rgba => "rgba",
            DevFormat::Gray => "gray",
        };
        let (dw, dh, _) = self.output(width, height, format)?;
        let bounded = match self.transform {
            Transform::Affine(a) => {
                self.interpolation == Interpolation::Bilinear && affine_bounded(&a, dw, dh)
            }
            Transform::Perspective(_) => false,
        };
        let name = format!(
            "warp_{kind}_{interp}_{pixel}{}",
            if bounded { "_bounded" } else { "" }
        );
        Ok(Box::new(Ready {
            op: self.clone(),
            kernel: gpu.function("warp.cu", &name)?,
            format,
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let (kernel, format) = (&self.kernel, &self.format);
        let op = &self.op;
        let (dw, dh, _) = op.output(input.width, input.height, *format)?;
        let want_in = (input.width, input.height, *format);
        check_frames("warp", want_in, (dw, dh, *format), input, output)?;
        if dw == 0 || dh == 0 {
            return Ok(());
        }
        let bilinear = op.interpolation == Interpolation::Bilinear;
        if bilinear && u32::try_from(input.width * input.height).is_err() {
            return Err(Error::BadFrame(format!(
                "warp: bilinear indexes the source with u32, {input:?} has 2^32 pixels or more"
            )));
        }
        let int = |n: usize| {
            i32::try_from(n).map_err(|_| Error::BadFrame(format!("warp: side {n} beyond i32")))
        };
        let (sw, sh, dw32, dh32) = (int(input.width)?, int(input.height)?, int(dw)?, int(dh)?);
        let m: [f32; 9] = match op.transform {
            Transform::Affine(a) => std::array::from_fn(|i| if i < 6 { a[i] } else { 0.0 }),
            Transform::Perspective(p) => p,
        };
        // The CPU's fill pixel, channel c in bits 8c..8c+8.
        let fill = match format {
            DevFormat::Rgba => u32::from_le_bytes(op.border.fill::<Rgba>()),
            DevFormat::Gray => op.border.fill::<u8>() as u32,
        };
        let replicate = (op.border == WarpBorder::Replicate) as i32;
        let rows = if bilinear { 2 } else { 1 };
        let cfg = LaunchConfig {
            grid_dim: (blocks(dw, 32), blocks(dh.div_ceil(rows), 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream().launch_builder(kernel);
        b.arg(&input.data).arg(&sw).arg(&sh);
        b.arg(&mut output.data).arg(&dw32).arg(&dh32);
        for v in &m {
            b.arg(v);
        }
        b.arg(&replicate).arg(&fill);
        // SAFETY: warp_*(src, sw, sh, dst, dw, dh, m0..m8, replicate, fill)
        // as pushed; the kernel was chosen for this format, the input holds
        // sw·sh pixels of it (fewer than 2^32 for bilinear, which indexes
        // with u32) and the output dw·dh (checked above); the grid covers
        // dw × dh at `rows` rows a thread.
        unsafe { b.launch(cfg) }.map_err(|e| cuda_err("warp: launching", e))?;
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::affine_bounded;

    #[test]
    fn affine_bounded_accepts_ordinary_warps_only() {
        // A 10° rotation of a 4K frame, and a 2× zoom of 1080p.
        assert!(affine_bounded(
            &[0.98, 0.17, -40.0, -0.17, 0.98, 60.0],
            3840,
            2160
        ));
        assert!(affine_bounded(&[0.5, 0.0, 0.0, 0.0, 0.5, 0.0], 1920, 1080));
        // Points far out (a shift of 10^12, a scale of 3·10^7), and entries
        // that are not finite, go to the checked kernel.
        assert!(!affine_bounded(
            &[1.0, 0.0, -1e12, 0.0, 1.0, 0.0],
            1920,
            1080
        ));
        assert!(!affine_bounded(&[3e7, 0.0, 0.0, 0.0, 1.0, 0.0], 1920, 1080));
        assert!(!affine_bounded(
            &[1.0, f32::NAN, 0.0, 0.0, 1.0, 0.0],
            64,
            64
        ));
        assert!(!affine_bounded(
            &[1.0, 0.0, 0.0, 0.0, f32::INFINITY, 0.0],
            64,
            64
        ));
        // The reach counts the far corner: 1100 · 1919 is beyond the limit.
        assert!(!affine_bounded(&[1100.0, 0.0, 0.0, 0.0, 1.0, 0.0], 1920, 1));
        assert!(affine_bounded(&[1000.0, 0.0, 0.0, 0.0, 1.0, 0.0], 1920, 1));
    }
}
