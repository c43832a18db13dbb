//! `seamstream bench retarget`: how fast seam carving runs.

use seamstream::ops::params::Media;
use std::time::Instant;

use super::{SETS, frame_times, percentile, random_frame};
#[cfg(feature = "cuda")]
use seamstream::cuda::DevFrame;
use seamstream::cuda::Gpu;
#[cfg(feature = "cuda")]
use seamstream::cuda::stage::GpuChain;
#[cfg(feature = "cuda")]
use seamstream::cuda::timing::{time_gpu, time_seam_dp};
use seamstream::error::Result;
use seamstream::frame::DevFormat;
use seamstream::frame::Frame;

/// The median time (ms) of `op` on RGBA frames of `w`×`h`, on the GPU when
/// one is given (CUDA events, as the other operations) or else on the CPU
/// (wall clock); `runs` timed runs after one warm-up.
pub fn time_op(gpu: Option<&Gpu>, op: &str, w: usize, h: usize, runs: usize) -> Result<f64> {
    let frames: Vec<Frame> = (0..SETS)
        .map(|i| random_frame(w, h, DevFormat::Rgba, 11 + i as u64))
        .collect();
    let mut chain = seamstream::registry::parse_chain(&[op])?;
    let times = match gpu {
        #[cfg(not(feature = "cuda"))]
        Some(gpu) => match *gpu {},
        #[cfg(feature = "cuda")]
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

#[cfg(feature = "cuda")]
/// The DP alone (its two launches, forward energy, no mask) on a random
/// w×h luma plane, in ms: the part of an exact seam that is one sweep over
/// the frame.
pub fn time_dp(gpu: &Gpu, w: usize, h: usize, runs: usize) -> Result<f64> {
    let luma = match random_frame(w, h, DevFormat::Gray, 5) {
        Frame::Gray(p) => p.into_packed_vec(),
        rgba => rgba.luma().into_packed_vec(),
    };
    let times = time_seam_dp(gpu, &luma, (w, h), runs)?;
    Ok(percentile(&times, 0.5) / 1e3)
}

/// Fast mode's frame times (ms) at `w`×`h` on a stream: the bundled photo
/// panning two pixels a frame, to and fro, with `op`; on the GPU when one
/// is given, else on the CPU. Returns (the first frame, which places a new
/// shot's seams; the median of the `frames` after it, which follow them).
/// Each frame is timed from its launch to its end (the GPU synchronised),
/// so the GPU figure is the frame's whole latency, not a pipelined rate.
pub fn time_fast(
    gpu: Option<&Gpu>,
    op: &str,
    w: usize,
    h: usize,
    frames: usize,
) -> Result<(f64, f64)> {
    let photo = seamstream::io::sample_image()?.to_rgba();
    let span = 16usize;
    let scale =
        ((w + span * 2) as f64 / photo.width() as f64).max(h as f64 / photo.height() as f64);
    let frame_at = |t: usize| -> Frame {
        // Ping-pong, so that consecutive frames always differ by one step.
        let k = t % (2 * span);
        let off = if k < span { k } else { 2 * span - k } as f64 * 2.0;
        Frame::Rgba(seamstream::frame::Plane::from_fn(w, h, |x, y| {
            let sx = ((x as f64 + off) / scale) as usize;
            let sy = (y as f64 / scale) as usize;
            photo.get(sx.min(photo.width() - 1), sy.min(photo.height() - 1))
        }))
    };
    let inputs: Vec<Frame> = (0..=frames).map(frame_at).collect();
    let mut chain = seamstream::registry::parse_chain_for(&[op], Media::Video)?;
    let times = frame_times(gpu, &mut chain, &inputs)?;
    let first = times[0];
    let mut rest = times[1..].to_vec();
    rest.sort_by(f64::total_cmp);
    Ok((first, percentile(&rest, 0.5)))
}
