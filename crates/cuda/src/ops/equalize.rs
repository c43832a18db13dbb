//! GPU `equalize` (kernels/equalize.cu): the luma histogram
//! (kernels/histogram.cuh), then one kernel whose every block makes the table
//! from the histogram's CDF and applies it; the frame never goes back to the
//! host. Two launches a frame: the table used to be a launch of its own, which
//! cost more than making it in every block.

use cudarc::driver::{CudaFunction, CudaSlice, PushKernelArg};

use super::threshold::{
    histogram_blocks, histogram_kernel, launch_histogram, sm_count, unit_grid, unit_kernel,
    units_per_thread,
};
use crate::error::Result;
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, cuda_err};
use seamstream_core::ops::equalize::Equalize;

/// What `prepare` sets up for one input format.
struct Ready {
    histogram: CudaFunction,
    max_blocks: u32,
    per_thread: u32,
    apply: CudaFunction,
    /// 256 counts, and the apply kernel's count of finished blocks, both
    /// kept zero between frames by its last block.
    hist: CudaSlice<u32>,
    done: CudaSlice<u32>,
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
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let stream = gpu.stream();
        let per_thread =
            units_per_thread(width * height * format.bytes_per_pixel(), sm_count(gpu)?);
        Ok(Box::new(Ready {
            histogram: histogram_kernel(gpu, "equalize.cu", format)?,
            max_blocks: histogram_blocks(gpu)?,
            per_thread,
            apply: gpu.function(
                "equalize.cu",
                &unit_kernel(
                    match format {
                        DevFormat::Gray => "equalize_gray",
                        DevFormat::Rgba => "equalize_rgba",
                    },
                    per_thread,
                ),
            )?,
            hist: stream
                .alloc_zeros::<u32>(256)
                .map_err(|e| cuda_err("equalize: allocating the histogram", e))?,
            done: stream
                .alloc_zeros::<u32>(1)
                .map_err(|e| cuda_err("equalize: allocating the block count", e))?,
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
        let n = (input.width * input.height) as u32;
        let mut b = stream.launch_builder(&p.apply);
        b.arg(&input.data)
            .arg(&mut output.data)
            .arg(&n)
            .arg(&mut p.hist)
            .arg(&mut p.done);
        // SAFETY: equalize_{gray,rgba}_x{2,8} take (in, out, n, hist, done)
        // as pushed; in and out hold n pixels of the kernel's format, hist
        // 256 u32, done one u32 (zero between frames). Blocks of 256
        // threads, one a table entry, covering the units at the kernel's
        // per_thread (unit_grid).
        unsafe { b.launch(unit_grid(input, p.per_thread)) }
            .map_err(|e| cuda_err("equalize: launching", e))?;
        Ok(())
    }
}
