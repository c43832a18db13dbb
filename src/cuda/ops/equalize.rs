//! GPU `equalize` (kernels/equalize.cu): the luma histogram
//! (kernels/histogram.cuh), the table from its CDF in one block, and the
//! table applied 16 bytes a thread; the frame never goes back to the host.

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::threshold::{
    ONE_BLOCK, histogram_blocks, histogram_kernel, launch_histogram, unit_grid,
};
use crate::cuda::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, cuda_err};
use crate::error::Result;
use crate::ops::equalize::Equalize;

/// What `prepare` sets up for one input format.
struct Ready {
    histogram: CudaFunction,
    max_blocks: u32,
    lut: CudaFunction,
    apply: CudaFunction,
    /// 256 counts, kept zero between frames by equalize_lut.
    hist: CudaSlice<u32>,
    table: CudaSlice<u8>,
}

#[derive(Default)]
pub struct GpuEqualize;

impl GpuEqualize {
    pub fn new(_: &Equalize) -> Self {
        GpuEqualize
    }
}

impl GpuOp for GpuEqualize {
    fn name(&self) -> &'static str {
        "equalize"
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        _: usize,
        _: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let stream = gpu.stream();
        Ok(Box::new(Ready {
            histogram: histogram_kernel(gpu, "equalize.cu", format)?,
            max_blocks: histogram_blocks(gpu)?,
            lut: gpu.function("equalize.cu", "equalize_lut")?,
            apply: gpu.function(
                "equalize.cu",
                match format {
                    DevFormat::Gray => "equalize_gray",
                    DevFormat::Rgba => "equalize_rgba",
                },
            )?,
            hist: stream
                .alloc_zeros::<u32>(256)
                .map_err(|e| cuda_err("equalize: allocating the histogram", e))?,
            table: stream
                .alloc_zeros::<u8>(256)
                .map_err(|e| cuda_err("equalize: allocating the table", e))?,
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let p = self;
        let stream = gpu.stream();
        launch_histogram(
            gpu,
            &p.histogram,
            p.max_blocks,
            input,
            &mut p.hist,
            "equalize",
        )?;
        let mut b = stream.launch_builder(&p.lut);
        b.arg(&mut p.hist).arg(&mut p.table);
        // SAFETY: equalize_lut takes (hist, lut): 256 u32 and 256 bytes, run
        // by one block of 256 threads, one a level.
        unsafe { b.launch(ONE_BLOCK) }
            .map_err(|e| cuda_err("equalize: launching equalize_lut", e))?;
        let n = (input.width * input.height) as u32;
        let mut b = stream.launch_builder(&p.apply);
        b.arg(&input.data)
            .arg(&mut output.data)
            .arg(&n)
            .arg(&p.table);
        // SAFETY: equalize_{gray,rgba} take (in, out, n, lut) as pushed; in
        // and out hold n pixels of the kernel's format, lut 256 bytes. The
        // grid is the one-thread-a-unit grid of blocks of 256 they expect.
        unsafe { b.launch(unit_grid(input)) }.map_err(|e| cuda_err("equalize: launching", e))?;
        Ok(())
    }
}
