//! `seamstream quality`: the retargeting figures of a clip and its result.

use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use seamstream::gst::decode::FrameReader;
use seamstream::gst::run::Backend;
use seamstream::quality::{Meter, Report};

#[derive(clap::Args, Debug)]
#[command(
    after_help = "Figures, each as a ratio to the original scaled to the result's size (area
interpolation) on the same frames:
  similarity  bidirectional similarity (Simakov et al. 2008): 5x5 Lab patches of
              each clip against their nearest allowed match in the other; lower
              is better, below 1 keeps more of the picture than scaling
  flicker     mean absolute change between consecutive frames; 1 = no motion of
              the retargeting's own
Targets (docs/DESIGN.md §4): similarity <= 1.00 (<= 0.45 where carving pays), flicker <= 1.20.
Both clips are decoded by the same GStreamer path, so colour conversion does
not count. With --op the chain runs here on the original's frames, with no
encoder between.
Examples:
  seamstream run clip.mp4 4x3.mp4 --op retarget:width=75%
  seamstream quality clip.mp4 4x3.mp4
  seamstream quality clip.mp4 --op retarget:width=75%,mode=exact --every 30
  seamstream quality clip.mp4 --op retarget:width=75% --json"
)]
pub struct QualityArgs {
    /// The original clip: a file or URI.
    original: String,
    /// The retargeted clip, with the same frames; or give --op instead.
    result: Option<String>,
    /// Make the result here with this operation (repeatable, as in `run`).
    #[arg(long = "op", value_name = "NAME[:k=v,...]")]
    ops: Vec<String>,
    /// With --op: where the chain runs (auto, cpu, cuda or cuda:N).
    #[arg(long, default_value = "auto", value_name = "DEVICE")]
    device: String,
    /// Measure the similarity on every N-th frame (it takes about a second a
    /// 720p frame on two cores); flicker uses every frame.
    #[arg(long, default_value_t = 10, value_name = "N")]
    every: usize,
    /// Stop after this many frames.
    #[arg(long, value_name = "N")]
    frames: Option<usize>,
    /// Also print the similarity of every measured frame.
    #[arg(long)]
    each: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

pub fn run_quality(a: &QualityArgs) -> anyhow::Result<ExitCode> {
    if a.every == 0 {
        bail!("`--every 0`: give N ≥ 1 (the similarity is measured on every N-th frame)");
    }
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} measuring: frame {pos} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.enable_steady_tick(Duration::from_millis(120));
    let meter = match (&a.result, a.ops.is_empty()) {
        (Some(_), false) => {
            bail!("give the retargeted clip or --op, not both: with --op the result is made here")
        }
        (None, true) => bail!(
            "give the retargeted clip (`seamstream quality ORIGINAL RESULT`) or an operation to make it with (`--op retarget:width=75%`)"
        ),
        (Some(r), true) => compare_files(&a.original, r, a.every, a.frames, &bar)?,
        (None, false) => {
            let chain = seamstream::registry::parse_chain(&a.ops)?;
            let backend = super::choose_backend(super::parse_device(&a.device)?, &chain)?;
            let gpu = match &backend {
                Backend::Cuda(g) => Some(g),
                Backend::Cpu => None,
            };
            seamstream::quality::measure_chain(&a.original, chain, gpu, a.every, a.frames, |n| {
                bar.set_position(n as u64)
            })?
            .0
        }
    };
    bar.finish_and_clear();
    let r = meter.report();
    if a.each {
        for (i, res, sc) in &meter.frames {
            eprintln!(
                "frame {i}: similarity {:.3} (completeness {:.3}, coherence {:.3}), scaled {:.3}, ratio {:.3}",
                res.total(),
                res.completeness,
                res.coherence,
                sc.total(),
                res.total() / sc.total().max(f64::MIN_POSITIVE)
            );
        }
    }
    if a.json {
        println!("{}", json(&r));
    } else {
        print!("{}", table(&a.original, &r));
    }
    Ok(ExitCode::SUCCESS)
}

/// Reads two clips side by side into a meter.
fn compare_files(
    original: &str,
    result: &str,
    every: usize,
    limit: Option<usize>,
    bar: &indicatif::ProgressBar,
) -> anyhow::Result<Meter> {
    let mut reader = FrameReader::open(result)?;
    let mut original_reader = FrameReader::open(original)?;
    let mut meter = Meter::new(every);
    let mut n = 0;
    while limit.is_none_or(|l| n < l) {
        let Some(frame) = original_reader.next_frame()? else {
            break;
        };
        let out = reader.next_frame()?.with_context(|| {
            format!(
                "`{}` ended after {n} frames while the original goes on; the clips must have the same frames",
                reader.name()
            )
        })?;
        meter.push(&frame, &out)?;
        n += 1;
        bar.set_position(n as u64);
    }
    if n == 0 {
        bail!("`{original}` gave no frame");
    }
    if limit.is_none() && reader.next_frame()?.is_some() {
        bail!(
            "`{}` has more frames than the original's {n}; the clips must have the same frames",
            reader.name()
        );
    }
    Ok(meter)
}

fn json(r: &Report) -> String {
    format!(
        "{{\"frames\":{},\"similarity_frames\":{},\"original\":[{},{}],\"size\":[{},{}],\"similarity\":{{\"result\":{:.4},\"scaled\":{:.4},\"ratio\":{:.4},\"completeness\":[{:.4},{:.4}],\"coherence\":[{:.4},{:.4}]}},\"flicker\":{{\"result\":{:.4},\"scaled\":{:.4},\"ratio\":{:.4}}}}}",
        r.frames,
        r.similarity_frames,
        r.original.0,
        r.original.1,
        r.size.0,
        r.size.1,
        r.result.total(),
        r.scaled.total(),
        r.similarity_ratio(),
        r.result.completeness,
        r.scaled.completeness,
        r.result.coherence,
        r.scaled.coherence,
        r.flicker_result,
        r.flicker_scaled,
        r.flicker_ratio()
    )
}

fn table(name: &str, r: &Report) -> String {
    format!(
        "{name}: {}x{} -> {}x{}, {} frames (similarity on {})
              result   scaled   ratio
similarity  {:8.2} {:8.2} {:7.3}   (completeness {:.2} / {:.2}, coherence {:.2} / {:.2})
flicker     {:8.3} {:8.3} {:7.3}
",
        r.original.0,
        r.original.1,
        r.size.0,
        r.size.1,
        r.frames,
        r.similarity_frames,
        r.result.total(),
        r.scaled.total(),
        r.similarity_ratio(),
        r.result.completeness,
        r.scaled.completeness,
        r.result.coherence,
        r.scaled.coherence,
        r.flicker_result,
        r.flicker_scaled,
        r.flicker_ratio()
    )
}
