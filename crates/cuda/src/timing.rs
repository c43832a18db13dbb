//! Kernel times on the compute stream, taken with CUDA events around CUDA
//! graphs, so that the host's launch cost between kernels does not count:
//! `seamstream bench` times the operations with it, and the seam DP's
//! profiler (a test) its sweeps.

use cudarc::driver::sys;

use super::{Gpu, cuda_err};
use crate::error::Result;

/// Runs per timed batch.
const BATCH: usize = 8;

fn event(gpu: &Gpu) -> Result<cudarc::driver::CudaEvent> {
    gpu.ctx()
        .new_event(Some(sys::CUevent_flags::CU_EVENT_DEFAULT))
        .map_err(|e| cuda_err("creating a timing event", e))
}

/// Times `f(i)` (which enqueues one run on the compute stream, the `i`-th
/// of its batch), in µs per run, sorted: `warmup` runs first, then `runs`
/// batches of 8 runs, each batch captured once into a CUDA graph and
/// replayed between two events, so that the host's launch cost between
/// kernels is not counted as the kernels' time. If the work cannot be
/// captured (an op that waits on the host), batches are enqueued directly
/// instead.
pub fn time_gpu(
    gpu: &Gpu,
    warmup: usize,
    runs: usize,
    mut f: impl FnMut(usize) -> Result<()>,
) -> Result<Vec<f64>> {
    for i in 0..warmup {
        f(i)?;
    }
    gpu.sync()?;
    let stream = gpu.stream();
    let batch = |f: &mut dyn FnMut(usize) -> Result<()>| -> Result<()> {
        for i in 0..BATCH {
            f(i)?;
        }
        Ok(())
    };
    let graph = super::capture(stream, || batch(&mut f));
    gpu.sync()?;
    let (start, stop) = (event(gpu)?, event(gpu)?);
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        start.record(stream).map_err(|e| cuda_err("recording", e))?;
        match &graph {
            Some(g) => g.launch().map_err(|e| cuda_err("replaying a graph", e))?,
            None => batch(&mut f)?,
        }
        stop.record(stream).map_err(|e| cuda_err("recording", e))?;
        stop.synchronize()
            .map_err(|e| cuda_err("waiting for a timed run", e))?;
        let ms = start
            .elapsed_ms(&stop)
            .map_err(|e| cuda_err("reading a timer", e))?;
        times.push(ms as f64 * 1e3 / BATCH as f64);
    }
    times.sort_by(f64::total_cmp);
    Ok(times)
}

/// Times the exact seam's DP alone (its two launches, forward energy, no
/// mask) on a `w`×`h` luma plane, rows packed, as [`time_gpu`] does after 3
/// runs of warm-up: the part of an exact seam that is one sweep over the
/// frame. Here, not in the bench, because the DP is the crate's own.
pub fn time_seam_dp(
    gpu: &Gpu,
    luma: &[u8],
    (w, h): (usize, usize),
    runs: usize,
) -> Result<Vec<f64>> {
    use super::ops::retarget::{DpScratch, SeamDp};
    use seamstream_core::ops::retarget::Energy;
    let st = gpu.stream();
    let mut dev = st
        .alloc_zeros::<u8>(w * h)
        .map_err(|e| cuda_err("bench: allocating the luma", e))?;
    st.memcpy_htod(luma, &mut dev)
        .map_err(|e| cuda_err("bench: uploading the luma", e))?;
    let dp = SeamDp::load(gpu, Energy::Forward)?;
    let mut scratch = DpScratch::new(st, &[(w, h)], 1)?;
    let mut seam = st
        .alloc_zeros::<u32>(h)
        .map_err(|e| cuda_err("bench: allocating a seam", e))?;
    time_gpu(gpu, 3, runs, |_| {
        dp.dp(
            st,
            (None, None, &dev),
            (w, h, w),
            &mut scratch,
            &mut seam,
            0,
            None,
        )
    })
}
