//! GPU `adaptive` (kernels/adaptive.cu): luma (RGBA only), its integral
//! tables ([`IntegralTables`]; the squared one only for sauvola and niblack),
//! then one thread a pixel reads its clipped window's sums from them and
//! decides in f64 as the CPU does. Every buffer is made in `prepare`.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::integral::{IntegralTables, Luma, table_len};
use crate::error::{Error, Result};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, check_frames, cuda_err};
use seamstream_core::ops::adaptive::{Adaptive, Method};

/// What `prepare` makes.
struct State {
    width: usize,
    height: usize,
    format: DevFormat,
    luma: Option<Luma>,
    tables: IntegralTables,
    sum: CudaSlice<u32>,
    /// The squared table; one unread cell for method=mean.
    sq: CudaSlice<u64>,
    kernel: CudaFunction,
}

#[derive(Clone)]
pub struct GpuAdaptive {
    method: Method,
    window: usize,
    max: u8,
}

/// [`GpuAdaptive`] set up for one input size and format.
struct Ready {
    op: GpuAdaptive,
    state: State,
}

impl GpuAdaptive {
    pub fn new(op: &Adaptive) -> Self {
        GpuAdaptive {
            method: op.method,
            window: op.window,
            max: op.max,
        }
    }

    /// Whether the level needs the deviation, hence the squared table.
    fn needs_sq(&self) -> bool {
        !matches!(self.method, Method::Mean { .. })
    }
}

impl GpuOp for GpuAdaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let method = match self.method {
            Method::Mean { .. } => "mean",
            Method::Sauvola { .. } => "sauvola",
            Method::Niblack { .. } => "niblack",
        };
        let pixel = match format {
            DevFormat::Rgba => "rgba",
            DevFormat::Gray => "gray",
        };
        let stream = gpu.stream();
        let sq_len = if self.needs_sq() { table_len(w, h) } else { 1 };
        Ok(Box::new(Ready {
            op: self.clone(),
            state: State {
                width: w,
                height: h,
                format,
                luma: Luma::new(gpu, w, h, format)?,
                tables: IntegralTables::new(gpu, w, h, self.needs_sq())?,
                sum: stream
                    .alloc_zeros::<u32>(table_len(w, h))
                    .map_err(|e| cuda_err("adaptive: allocating the table", e))?,
                sq: stream
                    .alloc_zeros::<u64>(sq_len)
                    .map_err(|e| cuda_err("adaptive: allocating the squared table", e))?,
                kernel: gpu.function("adaptive.cu", &format!("adaptive_{method}_{pixel}"))?,
            },
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let needs_sq = self.op.needs_sq();
        let s = &mut self.state;
        let (w, h, format) = (s.width, s.height, s.format);
        check_frames("adaptive", (w, h, format), (w, h, format), input, output)?;
        if w == 0 || h == 0 {
            return Ok(());
        }
        let luma = Luma::of(&mut s.luma, gpu, input)?;
        let sq = needs_sq.then_some(&mut s.sq);
        s.tables.compute(gpu, luma, &mut s.sum, sq)?;
        let (a, b) = match self.op.method {
            Method::Mean { c } => (c, 0.0),
            Method::Sauvola { k, r } => (k, r),
            Method::Niblack { k } => (k, 0.0),
        };
        let side = |n: usize| {
            u32::try_from(n).map_err(|_| Error::BadFrame(format!("adaptive: {n} beyond u32")))
        };
        let (w32, h32, half) = (side(w)?, side(h)?, side(self.op.window / 2)?);
        let max = self.op.max as u32;
        let cfg = LaunchConfig {
            grid_dim: (blocks(w, 32), blocks(h, 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut l = gpu.stream().launch_builder(&s.kernel);
        l.arg(&luma.data).arg(&s.sum).arg(&s.sq);
        if format == DevFormat::Rgba {
            l.arg(&input.data);
        }
        l.arg(&mut output.data).arg(&w32).arg(&h32).arg(&half);
        l.arg(&a).arg(&b).arg(&max);
        // SAFETY: adaptive_*_gray(luma, sum, sq, out, w, h, half, a, b, max)
        // and adaptive_*_rgba(luma, sum, sq, src, out, ...) as pushed, the
        // kernel chosen for this format; luma holds w·h bytes, src and out
        // w·h pixels (checked above), sum (w+1)·(h+1) cells and sq as many
        // where the method reads it (sauvola, niblack).
        unsafe { l.launch(cfg) }.map_err(|e| cuda_err("adaptive: launching", e))?;
        Ok(())
    }
}
