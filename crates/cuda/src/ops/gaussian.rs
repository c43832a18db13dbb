//! GPU `gaussian`: the op's taps over x and then over y through convolve's
//! `Separable` (kernels/convolve.cu), as the CPU runs them through
//! `convolve::separable`, so the two agree bit for bit. Up to 25 taps the
//! fused kernel compiled for the tap count runs.

use super::convolve::Separable;
use crate::error::Result;
use crate::{DevFormat, Gpu, GpuOp, Prepared};
use seamstream_core::ops::gaussian::Gaussian;

/// The GPU half of [`Gaussian`].
pub struct GpuGaussian {
    sep: Separable,
}

impl GpuGaussian {
    pub fn new(op: &Gaussian) -> Self {
        GpuGaussian {
            sep: Separable::new("gaussian", &op.taps, &op.taps, 0.0, op.border),
        }
    }
}

impl GpuOp for GpuGaussian {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn output(&self, w: usize, h: usize, f: DevFormat) -> Result<(usize, usize, DevFormat)> {
        self.sep.output(w, h, f)
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        self.sep.prepare(gpu, w, h, format)
    }
}
