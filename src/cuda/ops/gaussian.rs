//! GPU `gaussian`: the op's taps over x and then over y through convolve's
//! [`Separable`] (kernels/convolve.cu), as the CPU runs them through
//! `convolve::separable`, so the two agree bit for bit.

use super::convolve::Separable;
use crate::cuda::{DevFormat, DevFrame, Gpu, GpuOp};
use crate::error::Result;
use crate::ops::gaussian::Gaussian;

/// The GPU half of [`Gaussian`].
pub struct GpuGaussian(Separable);

impl GpuGaussian {
    pub fn new(op: &Gaussian) -> Self {
        GpuGaussian(Separable::new(
            "gaussian", &op.taps, &op.taps, 0.0, op.border,
        ))
    }
}

impl GpuOp for GpuGaussian {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn output(&self, w: usize, h: usize, f: DevFormat) -> Result<(usize, usize, DevFormat)> {
        self.0.output(w, h, f)
    }

    fn prepare(&mut self, gpu: &Gpu, w: usize, h: usize, format: DevFormat) -> Result<()> {
        self.0.prepare(gpu, w, h, format)
    }

    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        self.0.run(gpu, input, output)
    }
}
