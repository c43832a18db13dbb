//! GPU `threshold` (kernels/threshold.cu): one pass, 2 or 8 16-byte units a
//! thread (`units_per_thread`), the level read from a device scalar. With
//! `t=otsu` two kernels set that scalar first: the luma histogram
//! (kernels/histogram.cuh) and Otsu's level from it, so the frame never goes
//! back to the host.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::error::Result;
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, cuda_err};
use seamstream_core::ops::threshold::{Level, Threshold, ThresholdType};

/// Threads a block of the histogram kernels (`HIST_THREADS` in
/// kernels/histogram.cuh), and of the kernels that load a 256-entry table.
pub(crate) const HIST_THREADS: u32 = 256;

/// One block of [`HIST_THREADS`], one thread a level: otsu_level.
pub(crate) const ONE_BLOCK: LaunchConfig = LaunchConfig {
    grid_dim: (1, 1, 1),
    block_dim: (HIST_THREADS, 1, 1),
    shared_mem_bytes: 0,
};

/// The 16-byte units a thread of a map_units kernel (kernels/common.cuh)
/// takes for frames of `bytes`: 2, or 8 for frames of about 4 units a
/// thread or more at two blocks a multiprocessor. Fewer, busier threads have
/// more loads in flight each and cost less to schedule; on the H100 a 1080p
/// gray threshold takes 2.14 µs with 2 (2.58 with 1) and a 4K one 7.25 with
/// 8 (7.70 with 1), the device-to-device copy of the frame taking 2.41 and
/// 7.46 (bench/results/peers-h100.md).
pub(crate) fn units_per_thread(bytes: usize, sms: u32) -> u32 {
    let units = bytes / 16;
    let per_thread_at_two_blocks_an_sm = units.div_ceil(HIST_THREADS as usize * 2 * sms as usize);
    if per_thread_at_two_blocks_an_sm >= 4 {
        8
    } else {
        2
    }
}

/// The name of a map_units kernel's instantiation for `per_thread`
/// (`threshold_gray` → `threshold_gray_x8`).
pub(crate) fn unit_kernel(name: &str, per_thread: u32) -> String {
    format!("{name}_x{per_thread}")
}

/// Blocks of [`HIST_THREADS`] covering `frame` at `per_thread` units a
/// thread (at least one block: it also does the bytes after the last whole
/// unit).
pub(crate) fn unit_grid(frame: &DevFrame, per_thread: u32) -> LaunchConfig {
    let units = frame.len() / 16;
    LaunchConfig {
        grid_dim: (
            blocks(units.div_ceil(per_thread as usize).max(1), HIST_THREADS),
            1,
            1,
        ),
        block_dim: (HIST_THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The GPU's multiprocessors.
pub(crate) fn sm_count(gpu: &Gpu) -> Result<u32> {
    use cudarc::driver::sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT;
    let sms = gpu
        .ctx()
        .attribute(CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT)
        .map_err(|e| cuda_err("reading the SM count", e))?;
    Ok(sms.max(1) as u32)
}

/// The luma histogram kernel of `file` for frames of `format`.
pub(crate) fn histogram_kernel(gpu: &Gpu, file: &str, format: DevFormat) -> Result<CudaFunction> {
    let name = match format {
        DevFormat::Gray => "luma_histogram_gray",
        DevFormat::Rgba => "luma_histogram_rgba",
    };
    gpu.function(file, name)
}

/// Blocks of the grid-stride histogram: two a multiprocessor, few enough
/// that adding the blocks' bins to the result stays cheap (on the H100 a
/// 1080p gray histogram took 3.4 µs with 264 blocks, 4.3 with 507).
pub(crate) fn histogram_blocks(gpu: &Gpu) -> Result<u32> {
    Ok(2 * sm_count(gpu)?)
}

/// Adds the luma histogram of `input` to `hist` (256 counts, zero before).
pub(crate) fn launch_histogram(
    gpu: &Gpu,
    kernel: &CudaFunction,
    max_blocks: u32,
    input: &DevFrame,
    hist: &mut CudaSlice<u32>,
    what: &str,
) -> Result<()> {
    // A thread a 16-byte unit, up to the cap; then the grid strides.
    let cfg = LaunchConfig {
        grid_dim: (
            blocks(input.len().div_ceil(16), HIST_THREADS).min(max_blocks),
            1,
            1,
        ),
        block_dim: (HIST_THREADS, 1, 1),
        shared_mem_bytes: 0,
    };
    let n32 = (input.width * input.height) as u32;
    let mut b = gpu.stream().launch_builder(kernel);
    b.arg(&input.data).arg(&n32).arg(hist);
    // SAFETY: luma_histogram_{gray,rgba} take (in, n, hist) as pushed; `in`
    // holds n pixels of the format the kernel was chosen for, `hist` 256 u32.
    unsafe { b.launch(cfg) }
        .map_err(|e| cuda_err(&format!("{what}: launching the histogram"), e))?;
    Ok(())
}

/// The kernels' numbering of the types (`THRESH_*` in kernels/threshold.cu).
fn type_code(kind: ThresholdType) -> u32 {
    match kind {
        ThresholdType::Binary => 0,
        ThresholdType::BinaryInv => 1,
        ThresholdType::Trunc => 2,
        ThresholdType::ToZero => 3,
        ThresholdType::ToZeroInv => 4,
    }
}

/// What `prepare` sets up for one input format.
struct Setup {
    apply: CudaFunction,
    /// The level, a u32 the apply kernel reads.
    level: CudaSlice<u32>,
    otsu: Option<Otsu>,
}

/// With `t=otsu`: the kernels that set the level from each frame.
struct Otsu {
    histogram: CudaFunction,
    max_blocks: u32,
    /// 256 counts, kept zero between frames by otsu_level.
    hist: CudaSlice<u32>,
    otsu_level: CudaFunction,
}

#[derive(Clone)]
pub struct GpuThreshold {
    level: Level,
    max: u32,
    kind: u32,
}

/// [`GpuThreshold`] set up for one input format.
struct Ready {
    op: GpuThreshold,
    prepared: Setup,
    per_thread: u32,
}

impl GpuThreshold {
    pub fn new(op: &Threshold) -> Self {
        GpuThreshold {
            level: op.level,
            max: op.max as u32,
            kind: type_code(op.kind),
        }
    }
}

impl GpuOp for GpuThreshold {
    fn name(&self) -> &'static str {
        "threshold"
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
        let apply = gpu.function(
            "threshold.cu",
            &unit_kernel(
                match format {
                    DevFormat::Gray => "threshold_gray",
                    DevFormat::Rgba => "threshold_rgba",
                },
                per_thread,
            ),
        )?;
        let mut level = stream
            .alloc_zeros::<u32>(1)
            .map_err(|e| cuda_err("threshold: allocating the level", e))?;
        let otsu = match self.level {
            Level::Fixed(t) => {
                stream
                    .memcpy_htod(&[t as u32], &mut level)
                    .map_err(|e| cuda_err("threshold: setting the level", e))?;
                None
            }
            Level::Otsu => Some(Otsu {
                histogram: histogram_kernel(gpu, "threshold.cu", format)?,
                max_blocks: histogram_blocks(gpu)?,
                hist: stream
                    .alloc_zeros::<u32>(256)
                    .map_err(|e| cuda_err("threshold: allocating the histogram", e))?,
                otsu_level: gpu.function("threshold.cu", "otsu_level")?,
            }),
        };
        Ok(Box::new(Ready {
            op: self.clone(),
            prepared: Setup { apply, level, otsu },
            per_thread,
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let (op, p) = (&self.op, &mut self.prepared);
        let stream = gpu.stream();
        if let Some(o) = &mut p.otsu {
            launch_histogram(
                gpu,
                &o.histogram,
                o.max_blocks,
                input,
                &mut o.hist,
                "threshold",
            )?;
            let mut b = stream.launch_builder(&o.otsu_level);
            b.arg(&mut o.hist).arg(&mut p.level);
            // SAFETY: otsu_level takes (hist, level): 256 u32 and one u32,
            // run by one block of 256 threads, one a level.
            unsafe { b.launch(ONE_BLOCK) }
                .map_err(|e| cuda_err("threshold: launching otsu_level", e))?;
        }
        let n = (input.width * input.height) as u32;
        let mut b = stream.launch_builder(&p.apply);
        b.arg(&input.data)
            .arg(&mut output.data)
            .arg(&n)
            .arg(&p.level)
            .arg(&op.max)
            .arg(&op.kind);
        // SAFETY: threshold_{gray,rgba}_x{2,8} take (in, out, n, level, max,
        // type) as pushed; in and out hold n pixels of the kernel's format,
        // level one u32; the grid covers the units at the kernel's
        // per_thread (unit_grid).
        unsafe { b.launch(unit_grid(input, self.per_thread)) }
            .map_err(|e| cuda_err("threshold: launching", e))?;
        Ok(())
    }
}
