//! GPU `sobel` (kernels/sobel.cu): one kernel a 32×32 tile, the luma of the
//! tile and its halo in shared memory, integer gradients, exact as the CPU.

use cudarc::driver::{CudaFunction, PushKernelArg};

use crate::color::Matrix;
use crate::error::Result;
use crate::launch::{border_code, filter_dims, suffix, tiled};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, cuda_err};
use seamstream_core::ops::border::Border;
use seamstream_core::ops::sobel::{Sobel, SobelOutput};

/// Output tile side and threads of the kernels (`SOBEL_TW`, `SOBEL_THREADS`).
pub(crate) const TILE: u32 = 32;
pub(crate) const THREADS: u32 = 256;

/// The GPU half of [`Sobel`].
#[derive(Clone)]
pub struct GpuSobel {
    ksize: usize,
    output: SobelOutput,
    border: Border,
}

/// [`GpuSobel`] with its kernel, for one input size and format.
struct Ready {
    op: GpuSobel,
    kernel: CudaFunction,
    shape: (usize, usize, DevFormat),
}

impl GpuSobel {
    pub fn new(op: &Sobel) -> Self {
        GpuSobel {
            ksize: op.ksize,
            output: op.output,
            border: op.border,
        }
    }
}

impl GpuOp for GpuSobel {
    fn name(&self) -> &'static str {
        "sobel"
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let name = format!("sobel{}_{}", self.ksize, suffix(format));
        Ok(Box::new(Ready {
            op: self.clone(),
            kernel: gpu.function("sobel.cu", &name)?,
            shape: (w, h, format),
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let Some((w, h)) = filter_dims("sobel", self.shape, input)? else {
            return Ok(());
        };
        let kernel = &self.kernel;
        let out: i32 = match self.op.output {
            SobelOutput::Magnitude => 0,
            SobelOutput::Dx => 1,
            SobelOutput::Dy => 2,
        };
        let border = border_code(self.op.border);
        // Pixel::luma of RGBA is BT.709.
        let (kr, kg, kb) = Matrix::Bt709.weights();
        let cfg = tiled(input, (TILE, TILE), THREADS, 0);
        let mut b = gpu.stream().launch_builder(kernel);
        b.arg(&input.data)
            .arg(&mut output.data)
            .arg(&w)
            .arg(&h)
            .arg(&out)
            .arg(&border)
            .arg(&kr)
            .arg(&kg)
            .arg(&kb);
        // SAFETY: sobel{3,5}_* take (src, dst, w, h, output, border, kr, kg,
        // kb) as pushed; src and dst hold w·h pixels of the kernel's format.
        unsafe { b.launch(cfg) }.map_err(|e| cuda_err("sobel: launching", e))?;
        Ok(())
    }
}
