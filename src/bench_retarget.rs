//! `seamstream bench retarget`: how fast seam carving runs.

use std::time::Instant;

use crate::bench::{SETS, percentile, random_frame, time_gpu};
use crate::cuda::stage::GpuChain;
use crate::cuda::{DevFormat, DevFrame, Gpu};
use crate::error::Result;
use crate::frame::Frame;
use crate::ops::Chain;
use crate::ops::retarget::Energy;

/// The median time (ms) of `op` on RGBA frames of `w`×`h`, on the GPU when
/// one is given (CUDA events, as the other operations) or else on the CPU
/// (wall clock); `runs` timed runs after one warm-up.
pub fn time_op(gpu: Option<&Gpu>, op: &str, w: usize, h: usize, runs: usize) -> Result<f64> {
    let frames: Vec<Frame> = (0..SETS)
        .map(|i| random_frame(w, h, DevFormat::Rgba, 11 + i as u64))
        .collect();
    let mut chain = Chain::parse(&[op])?;
    let times = match gpu {
        Some(gpu) => {
            let inputs = frames
                .iter()
                .map(|f| DevFrame::upload(gpu, f))
                .collect::<Result<Vec<_>>>()?;
            let mut g = GpuChain::new(gpu, &chain, w, h, DevFormat::Rgba)?;
            let mut outs = (0..SETS)
                .map(|_| g.alloc_outputs(gpu))
                .collect::<Result<Vec<_>>>()?;
            time_gpu(gpu, 1, runs, |i| {
                g.run(gpu, &inputs[i % SETS], &mut outs[i % SETS])
            })?
        }
        None => {
            chain.apply(frames[0].clone())?;
            let mut t = (0..runs)
                .map(|i| {
                    let start = Instant::now();
                    chain.apply(frames[i % SETS].clone()).map(|out| {
                        std::hint::black_box(out);
                        start.elapsed().as_secs_f64() * 1e6
                    })
                })
                .collect::<Result<Vec<_>>>()?;
            t.sort_by(f64::total_cmp);
            t
        }
    };
    Ok(percentile(&times, 0.5) / 1e3)
}

/// Time of one exact seam (ms) at `w`×`h`: removing 33 seams against
/// removing 1, over 32, so that the copies in and out do not count.
pub fn time_exact_seam(gpu: Option<&Gpu>, w: usize, h: usize, runs: usize) -> Result<f64> {
    let one = time_op(
        gpu,
        &format!("retarget:width={},mode=exact", w - 1),
        w,
        h,
        runs,
    )?;
    let many = time_op(
        gpu,
        &format!("retarget:width={},mode=exact", w - 33),
        w,
        h,
        runs,
    )?;
    Ok((many - one) / 32.0)
}

/// The DP alone (its two launches, forward energy, no mask) on a random
/// w×h luma plane, in ms: the part of an exact seam that is one sweep over
/// the frame.
pub fn time_dp(gpu: &Gpu, w: usize, h: usize, runs: usize) -> Result<f64> {
    use crate::cuda::ops::retarget::{DpScratch, SeamDp};
    let st = gpu.stream();
    let luma = match random_frame(w, h, DevFormat::Gray, 5) {
        Frame::Gray(p) => p.into_packed_vec(),
        rgba => rgba.luma().into_packed_vec(),
    };
    let mut dev = st
        .alloc_zeros::<u8>(w * h)
        .map_err(|e| crate::cuda::cuda_err("bench: allocating the luma", e))?;
    st.memcpy_htod(&luma, &mut dev)
        .map_err(|e| crate::cuda::cuda_err("bench: uploading the luma", e))?;
    let dp = SeamDp::load(gpu, Energy::Forward)?;
    let mut scratch = DpScratch::new(st, &[(w, h)], 1)?;
    let mut seam = st
        .alloc_zeros::<u32>(h)
        .map_err(|e| crate::cuda::cuda_err("bench: allocating a seam", e))?;
    let times = time_gpu(gpu, 3, runs, |_| {
        dp.dp(
            st,
            (None, None, &dev),
            (w, h, w),
            &mut scratch,
            &mut seam,
            0,
            None,
        )
    })?;
    Ok(percentile(&times, 0.5) / 1e3)
}
