//! `seamstream bench retarget`: how fast seam carving runs, and how good
//! fast mode is next to exact mode, on a clip made from a bundled photograph.
//!
//! The clip holds still for [`STILL_FRAMES`] frames (with a little sensor
//! noise, different in every frame, as a real static camera gives), then
//! pans slowly sideways, one pixel a frame. Two figures judge fast mode:
//!
//! - the *removed-energy ratio*: the energy of the pixels fast mode removed
//!   ÷ that of the pixels exact mode removed from the same frame, both
//!   measured on the frame's `basic` energy map (1.0 is perfect; fast mode
//!   runs with its memory of the frames before, as in a stream);
//! - the *jitter*: on the still part, the mean horizontal distance between
//!   matching seams of consecutive frames: each removed pixel is matched
//!   with the nearest pixel removed from the same row of the other frame,
//!   both ways (0 is perfect). Matching by rank instead (the i-th removed
//!   pixel of a row with the i-th) would count one seam that moves across
//!   the frame as a shift of every seam it passes.

use std::time::Instant;

use crate::bench::{SETS, percentile, random_frame, time_gpu};
use crate::cuda::stage::GpuChain;
use crate::cuda::{DevFormat, DevFrame, Gpu};
use crate::error::Result;
use crate::frame::{Frame, Plane, Rgba};
use crate::ops::Chain;
use crate::ops::pixel::Pixel;
use crate::ops::retarget::fast::{FastParams, FastState, fast_kept_columns};
use crate::ops::retarget::{Energy, energy_map, exact_kept_columns};
use crate::ops::warp::{Direction, Interpolation, Transform, WarpBorder, warp};

/// Frames of the still part of the clip.
pub const STILL_FRAMES: usize = 30;
/// Frames of the pan.
pub const PAN_FRAMES: usize = 8;
/// Pan frames on which exact mode is run for the energy ratio (it is slow).
pub const RATIO_FRAMES: usize = 3;
/// Sensor noise (standard deviation, levels) of the still part.
pub const NOISE_SIGMA: f32 = 2.0;

/// The clip: `STILL_FRAMES + PAN_FRAMES` frames of `w`×`h` from the bundled
/// photograph, scaled to cover the frame with room to pan.
pub fn clip(w: usize, h: usize) -> Result<Vec<Plane<Rgba>>> {
    let photo = match crate::io::sample_image()? {
        Frame::Rgba(p) => p,
        gray => gray.to_rgba(),
    };
    let (pw, ph) = (photo.width() as f64, photo.height() as f64);
    // Cover the frame, plus the pan's width.
    let pan = PAN_FRAMES as f64;
    let scale = ((w as f64 + pan) / pw).max(h as f64 / ph);
    let mut frames = Vec::new();
    for i in 0..STILL_FRAMES + PAN_FRAMES {
        let shift = i.saturating_sub(STILL_FRAMES - 1) as f64;
        let m = [1.0 / scale, 0.0, shift / scale, 0.0, 1.0 / scale, 0.0];
        let t = Transform::affine(m, Direction::DstToSrc)?;
        let mut f = warp(
            &photo,
            &t,
            w,
            h,
            Interpolation::Bilinear,
            WarpBorder::Replicate,
        );
        if i < STILL_FRAMES {
            add_noise(&mut f, i as u32);
        }
        frames.push(f);
    }
    Ok(frames)
}

/// Deterministic sensor noise, roughly normal with a standard deviation of
/// [`NOISE_SIGMA`] levels, on the colour channels.
fn add_noise(f: &mut Plane<Rgba>, seed: u32) {
    let mut s = seed.wrapping_mul(2_654_435_761).wrapping_add(1);
    let mut uniform = move || {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (s >> 8) as f32 / (1u32 << 24) as f32 - 0.5
    };
    for y in 0..f.height() {
        for p in f.row_mut(y) {
            for c in &mut p[..3] {
                // A sum of four uniforms on [−½, ½) has variance 1/3.
                let n: f32 = (0..4).map(|_| uniform()).sum::<f32>() * 3f32.sqrt() * NOISE_SIGMA;
                *c = (*c as f32 + n).round().clamp(0.0, 255.0) as u8;
            }
        }
    }
}

/// The removed columns of each row (increasing), from the kept ones.
fn removed(kept: &Plane<u32>, w: usize) -> Vec<Vec<u32>> {
    (0..kept.height())
        .map(|y| {
            let mut keep = vec![false; w];
            for &x in kept.row(y) {
                keep[x as usize] = true;
            }
            (0..w as u32).filter(|&x| !keep[x as usize]).collect()
        })
        .collect()
}

/// The distance from `x` to the nearest of `sorted` (non-empty).
fn nearest(sorted: &[u32], x: u32) -> u32 {
    let i = sorted.partition_point(|&v| v < x);
    let right = sorted.get(i).map_or(u32::MAX, |&v| v - x);
    let left = i.checked_sub(1).map_or(u32::MAX, |j| x - sorted[j]);
    left.min(right)
}

/// The summed `basic` energy of the removed pixels.
fn removed_energy(energy: &Plane<u32>, removed: &[Vec<u32>]) -> u64 {
    removed
        .iter()
        .enumerate()
        .map(|(y, r)| {
            r.iter()
                .map(|&x| energy.get(x as usize, y) as u64)
                .sum::<u64>()
        })
        .sum()
}

/// Fast mode's quality on the clip.
#[derive(Clone, Debug)]
pub struct Quality {
    pub width: usize,
    pub height: usize,
    pub target: usize,
    pub passes: usize,
    /// Fast ÷ exact removed energy, mean over the measured pan frames.
    pub energy_ratio: f64,
    /// Mean |Δx| of matching seams between consecutive still frames (px).
    pub jitter_px: f64,
    /// The jitter with seams matched by rank in their row.
    pub jitter_rank_px: f64,
    /// The same without memory (coherence 0, noise 0), for comparison.
    pub jitter_no_memory_px: f64,
}

/// Measures fast mode against exact mode on [`clip`] at `w`×`h`, carving
/// to `target` columns.
pub fn quality(w: usize, h: usize, target: usize, params: &FastParams) -> Result<Quality> {
    let frames = clip(w, h)?;
    let lumas: Vec<Plane<u8>> = frames.iter().map(|f| f.map(|p| p.luma())).collect();
    let run = |params: &FastParams| -> Vec<Vec<Vec<u32>>> {
        let mut state = FastState::default();
        lumas
            .iter()
            .map(|l| {
                let held = state.observe(l, params).clone();
                removed(
                    &fast_kept_columns(&held, target, params, &mut state.vertical),
                    w,
                )
            })
            .collect()
    };
    let fast = run(params);
    let jitter = |seams: &[Vec<Vec<u32>>]| -> f64 {
        let (mut sum, mut n) = (0u64, 0u64);
        for pair in seams[..STILL_FRAMES].windows(2) {
            for (a, b) in pair[0].iter().zip(&pair[1]) {
                for (from, to) in [(a, b), (b, a)] {
                    sum += from.iter().map(|&x| nearest(to, x) as u64).sum::<u64>();
                    n += from.len() as u64;
                }
            }
        }
        sum as f64 / n.max(1) as f64
    };
    let by_rank = |seams: &[Vec<Vec<u32>>]| -> f64 {
        let (mut sum, mut n) = (0u64, 0u64);
        for pair in seams[..STILL_FRAMES].windows(2) {
            for (a, b) in pair[0].iter().zip(&pair[1]) {
                sum += a
                    .iter()
                    .zip(b)
                    .map(|(x, y)| x.abs_diff(*y) as u64)
                    .sum::<u64>();
                n += a.len() as u64;
            }
        }
        sum as f64 / n.max(1) as f64
    };
    let jitter_rank_px = by_rank(&fast);
    let jitter_px = jitter(&fast);
    let jitter_no_memory_px = jitter(&run(&FastParams {
        coherence: 0,
        noise: 0,
        ..*params
    }));
    let mut ratios = Vec::new();
    let measured = (frames.len() - RATIO_FRAMES..frames.len()).collect::<Vec<_>>();
    for &i in &measured {
        let basic = energy_map(&lumas[i], Energy::Basic);
        let exact = removed(&exact_kept_columns(&lumas[i], target, params.energy), w);
        let e_exact = removed_energy(&basic, &exact);
        let e_fast = removed_energy(&basic, &fast[i]);
        ratios.push(e_fast as f64 / e_exact.max(1) as f64);
    }
    Ok(Quality {
        width: w,
        height: h,
        target,
        passes: params.passes,
        energy_ratio: ratios.iter().sum::<f64>() / ratios.len() as f64,
        jitter_px,
        jitter_rank_px,
        jitter_no_memory_px,
    })
}

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
