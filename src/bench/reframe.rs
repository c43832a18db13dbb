//! `seamstream bench reframe`: how long a reframe takes a frame, the
//! analysis (the detectors, on the host) and the render (on the GPU or the
//! CPU) apart, on the frames of a real clip scaled to the bench's size.
//!
//! The analysis is what `run` does ahead of the render for a file: every
//! frame's thumbnails through [`Analyzer`], faces on every `FACE_EVERY`-th frame (so
//! its time is the detectors' amortised over the frames). The render is
//! the plan replayed, each frame timed from its launch to its end (the GPU
//! synchronised): its whole latency, not a pipelined rate.

use seamstream::ops::params::Media;
use std::time::Instant;

use super::{frame_times, percentile};
use rayon::prelude::*;
use seamstream::cuda::Gpu;
use seamstream::error::Result;
use seamstream::frame::{Frame, Plane, Rgba};
use seamstream::gst::decode::FrameReader;
use seamstream::gst::reframe::reframe_of;
use seamstream::ops::Op;
use seamstream::ops::reframe::analyze::{FACE_EVERY, Thumbs};
use seamstream::ops::reframe::geometry::{Fit, Rect};
use seamstream::ops::reframe::render::resample;
use seamstream::ops::reframe::{MadeFor, plan_video};

/// One case's figures, in milliseconds a frame.
#[derive(Clone, Debug)]
pub struct ReframeTime {
    pub op: String,
    /// The analysis, mean a frame.
    pub analysis: f64,
    /// The render: median and mean a frame, the first frame apart (it
    /// compiles the kernels a chain takes up on its first carve, once a
    /// machine, and sets up the carver).
    pub render_median: f64,
    pub render_mean: f64,
    pub render_first: f64,
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
    let mut chain = seamstream::registry::parse_chain_for(&[op], Media::Video)?;
    let Some((_, r)) = reframe_of(&mut chain) else {
        return Err(seamstream::Error::Unsupported(format!(
            "`bench reframe --op {op}`: expected a reframe op"
        )));
    };
    // As `run` plans a file: thumbnails, then batches of a few face frames
    // a thread, each spread over the threads.
    let start = Instant::now();
    let mut a = r.director.analyzer(w, h, false);
    let batch = FACE_EVERY * rayon::current_num_threads().max(2);
    for (k, chunk) in frames.chunks(batch).enumerate() {
        let thumbs: Vec<Thumbs> = chunk
            .par_iter()
            .enumerate()
            .map(|(i, f)| Thumbs::of(f, k * batch + i))
            .collect();
        a.push_many(&thumbs);
    }
    let obs = a.finish();
    let analysis = start.elapsed().as_secs_f64() * 1e3 / frames.len() as f64;
    let out = r.output_size(w, h)?;
    let (_, plans) = plan_video(&obs, &r.director, (w, h), out);
    let mut fits = [0usize; 3];
    for p in &plans {
        fits[Fit::ALL.iter().position(|&f| f == p.fit).unwrap_or(0)] += 1;
    }
    r.replay(
        plans,
        "the bench's plan".into(),
        Some(MadeFor {
            input: (w, h),
            output: Some(out),
        }),
    );
    let times = frame_times(gpu, &mut chain, frames)?;
    let rest = if times.len() > 1 {
        &times[1..]
    } else {
        &times[..]
    };
    let mut sorted = rest.to_vec();
    sorted.sort_by(f64::total_cmp);
    Ok(ReframeTime {
        op: op.to_string(),
        analysis,
        render_median: percentile(&sorted, 0.5),
        render_mean: rest.iter().sum::<f64>() / rest.len().max(1) as f64,
        render_first: times[0],
        fits,
    })
}
