//! `seamstream bench reframe`: how long a reframe takes a frame, the
//! analysis (the detectors, on the host) and the render (on the GPU or the
//! CPU) apart, on the frames of a real clip scaled to the bench's size.
//!
//! The analysis is what `run` does ahead of the render for a file: every
//! frame's thumbnails through [`Analyzer`], faces on every sixth frame (so
//! its time is the detectors' amortised over the frames). The render is
//! the plan replayed, each frame timed from its launch to its end (the GPU
//! synchronised): its whole latency, not a pipelined rate.

use std::time::Instant;

use super::percentile;
use seamstream::cuda::stage::GpuChain;
use seamstream::cuda::{DevFormat, DevFrame, Gpu};
use seamstream::error::Result;
use seamstream::frame::{Frame, Plane, Rgba};
use seamstream::gst::decode::FrameReader;
use seamstream::gst::reframe::reframe_of;
use seamstream::ops::Op;
use seamstream::ops::reframe::analyze::Thumbs;
use seamstream::ops::reframe::geometry::{Fit, Rect};
use seamstream::ops::reframe::plan::FramePlan;
use seamstream::ops::reframe::plan_video;
use seamstream::ops::reframe::render::resample;

/// One case's figures, in milliseconds a frame.
#[derive(Clone, Debug)]
pub struct ReframeTime {
    pub op: String,
    /// The analysis, mean a frame.
    pub analysis: f64,
    /// The render: median and mean a frame.
    pub render_median: f64,
    pub render_mean: f64,
    /// Frames by fit (crop, carve, pad).
    pub fits: [usize; 3],
}

impl ReframeTime {
    /// Analysis and render together, a frame.
    pub fn total(&self) -> f64 {
        self.analysis + self.render_mean
    }
}

/// The first `n` frames of `clip`, scaled (area) to `w`×`h`.
pub fn clip_frames(clip: &str, n: usize, (w, h): (usize, usize)) -> Result<Vec<Frame>> {
    let mut reader = FrameReader::open(clip)?;
    let mut out = Vec::new();
    while out.len() < n {
        let Some(f) = reader.next_frame()? else { break };
        let full = Rect::new(0, 0, f.width(), f.height());
        let scaled: Plane<Rgba> = if (f.width(), f.height()) == (w, h) {
            f
        } else {
            resample(&f, full, w, h)
        };
        out.push(Frame::Rgba(scaled));
    }
    Ok(out)
}

/// Times `op` (a reframe) over `frames`: the analysis on the host, then the
/// render of its plan on `gpu` or the CPU.
pub fn time_reframe(gpu: Option<&Gpu>, op: &str, frames: &[Frame]) -> Result<ReframeTime> {
    let (w, h) = (frames[0].width(), frames[0].height());
    let mut chain = seamstream::registry::parse_chain(&[op])?;
    chain.streaming();
    let Some((_, r)) = reframe_of(&mut chain) else {
        return Err(seamstream::Error::Unsupported(format!(
            "`bench reframe --op {op}`: expected a reframe op"
        )));
    };
    let start = Instant::now();
    let mut a = r.director.analyzer(w, h, false);
    for (i, f) in frames.iter().enumerate() {
        a.push(&Thumbs::of(f, i));
    }
    let obs = a.finish();
    let analysis = start.elapsed().as_secs_f64() * 1e3 / frames.len() as f64;
    let out = r.output_size(w, h)?;
    let (_, plans) = plan_video(&obs, &r.director, (w, h), out);
    let mut fits = [0usize; 3];
    for p in &plans {
        fits[Fit::ALL.iter().position(|&f| f == p.fit).unwrap_or(0)] += 1;
    }
    r.replay(plans.clone(), "the bench's plan".into());
    let times = render_times(gpu, &mut chain, frames, &plans)?;
    let mut sorted = times.clone();
    sorted.sort_by(f64::total_cmp);
    Ok(ReframeTime {
        op: op.to_string(),
        analysis,
        render_median: percentile(&sorted, 0.5),
        render_mean: times.iter().sum::<f64>() / times.len().max(1) as f64,
        fits,
    })
}

fn render_times(
    gpu: Option<&Gpu>,
    chain: &mut seamstream::Chain,
    frames: &[Frame],
    _plans: &[FramePlan],
) -> Result<Vec<f64>> {
    let (w, h) = (frames[0].width(), frames[0].height());
    let mut times = Vec::with_capacity(frames.len());
    match gpu {
        Some(gpu) => {
            let mut g = GpuChain::new(gpu, chain, w, h, DevFormat::Rgba)?;
            let uploads = frames
                .iter()
                .map(|f| DevFrame::upload(gpu, f))
                .collect::<Result<Vec<_>>>()?;
            let mut outs = g.alloc_outputs(gpu)?;
            for input in &uploads {
                gpu.sync()?;
                let start = Instant::now();
                g.run(gpu, input, &mut outs)?;
                gpu.sync()?;
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
        None => {
            for f in frames {
                let start = Instant::now();
                std::hint::black_box(chain.apply(f.clone())?);
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    Ok(times)
}
