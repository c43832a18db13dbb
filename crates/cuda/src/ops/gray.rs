//! GPU `gray` (kernels/gray.cu): one thread a pixel.

use cudarc::driver::{CudaFunction, LaunchConfig, PushKernelArg};

use crate::error::Result;
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, cuda_err};
use seamstream_core::ops::gray::Gray;

#[derive(Clone)]
pub struct GpuGray {
    weights: (f32, f32, f32),
    as_rgba: bool,
}

/// [`GpuGray`] for one input format: its kernel, or none for gray to gray
/// (a copy).
struct Ready {
    weights: (f32, f32, f32),
    kernel: Option<CudaFunction>,
}

impl GpuGray {
    pub fn new(op: &Gray) -> Self {
        GpuGray {
            weights: op.matrix.weights(),
            as_rgba: op.as_rgba,
        }
    }
}

impl GpuOp for GpuGray {
    fn name(&self) -> &'static str {
        "gray"
    }

    fn output(&self, w: usize, h: usize, _: DevFormat) -> Result<(usize, usize, DevFormat)> {
        let f = if self.as_rgba {
            DevFormat::Rgba
        } else {
            DevFormat::Gray
        };
        Ok((w, h, f))
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        _: usize,
        _: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let name = match (format, self.as_rgba) {
            (DevFormat::Rgba, false) => Some("rgba_to_gray"),
            (DevFormat::Rgba, true) => Some("rgba_to_gray_rgba"),
            (DevFormat::Gray, true) => Some("gray_to_rgba"),
            (DevFormat::Gray, false) => None,
        };
        Ok(Box::new(Ready {
            weights: self.weights,
            kernel: name.map(|n| gpu.function("gray.cu", n)).transpose()?,
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let n = input.width * input.height;
        let stream = gpu.stream();
        let Some(kernel) = &self.kernel else {
            // Gray to gray is a copy.
            return stream
                .memcpy_dtod(&input.data, &mut output.data)
                .map_err(|e| cuda_err("gray: copying", e));
        };
        let cfg = LaunchConfig {
            // Four pixels a thread, plus one thread for the remainder.
            grid_dim: (blocks(n / 4 + 1, 256), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        let (kr, kg, kb) = self.weights;
        let n32 = n as u32;
        let mut b = stream.launch_builder(kernel);
        b.arg(&input.data).arg(&mut output.data).arg(&n32);
        if input.format == DevFormat::Rgba {
            b.arg(&kr).arg(&kg).arg(&kb);
        }
        // SAFETY: the kernels take (in, out, n[, kr, kg, kb]) as pushed, and
        // both buffers hold n pixels of the formats the kernel reads/writes.
        unsafe { b.launch(cfg) }.map_err(|e| cuda_err("gray: launching", e))?;
        Ok(())
    }
}
