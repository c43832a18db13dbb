//! `seamstream quality`: the retargeting figures of a clip and its result.

use seamstream::ops::params::Media;
use std::process::ExitCode;
use std::time::Duration;

use anyhow::bail;
use seamstream::gst::run::Backend;
use seamstream::ops::reframe::geometry::Fit;
use seamstream::ops::reframe::path::PathFile;
use seamstream::quality::report::{Files, json};
use seamstream::quality::{Found, Meter, Report, Smoothness, Subjects, path_scales};

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
For reframing (another aspect by a moving window), also:
  similarity ÷ the best fixed crop: of --crops windows of the result's aspect
              (full height, or full width when the result is wider) evenly over
              the free range, the one of the lowest mean similarity; below 1
              beats every fixed window. Each costs as much as the result's
              similarity; --crops 0 leaves them out
  flicker ÷ the centre crop's: 1 = moves no more than a fixed window
  subjects kept (--boxes): boxes marked on the original's frames, kept when
              found in the result's frame of the same index at one overall
              scale (with --reframe-path first the frame's own, e.g. a zoom's;
              then out_h/in_h or out_w/in_w) with a correlation of luma
              >= 0.8; beside it the same for scaling and the centre crop
  window path (--reframe-path, the file `run --reframe-path` writes): the
              largest jump of the window's centre from one frame to the next
              and its mean acceleration, within shots
Box file: {\"size\": [1280, 720], \"boxes\": [{\"frame\": 30, \"label\": \"woman\",
  \"box\": [x, y, w, h]}, ...]} in pixels of the original, frames counted from 0.
In the JSON an infinite ratio (a reference of 0, e.g. a best crop that
misses nothing) is null.
Both clips are decoded by the same GStreamer path, so colour conversion does
not count. With --op the chain runs here on the original's frames, with no
encoder between.
Examples:
  seamstream run clip.mp4 4x3.mp4 --op retarget:width=75%
  seamstream quality clip.mp4 4x3.mp4
  seamstream quality clip.mp4 --op retarget:width=75%,mode=exact --every 30
  seamstream quality clip.mp4 --op retarget:width=75% --json
  seamstream quality clip.mp4 9x16.mp4 --boxes boxes.json --reframe-path 9x16.path.json
  seamstream quality clip.mp4 9x16.mp4 --boxes boxes.json --crops 0 --every 30"
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
    /// Fixed crops the similarity is also compared with (evenly over the
    /// free range, ends included; 9 = eighths); 0 for none. Each costs as
    /// much as the result's similarity (about a second of CPU a 720p frame
    /// to 9:16).
    #[arg(long, default_value_t = 9, value_name = "N")]
    crops: usize,
    /// Boxes marked on frames of the original (JSON): report how many the
    /// result keeps.
    #[arg(long, value_name = "FILE")]
    boxes: Option<std::path::PathBuf>,
    /// The window path the reframe op wrote (JSON, as `run --reframe-path`
    /// writes it): report its smoothness, and look for the boxes at each
    /// frame's own scale first.
    #[arg(long = "reframe-path", value_name = "FILE")]
    reframe_path: Option<std::path::PathBuf>,
    /// Also print the similarity of every measured frame, and every box.
    #[arg(long)]
    each: bool,
    /// Print the figures as JSON.
    #[arg(long)]
    json: bool,
}

/// A note when a box file names another clip than the original (by file
/// name: a copy renamed or moved is still the same clip to a user, so this
/// only warns): boxes of another video give figures that mean nothing.
fn other_clip(named: Option<&str>, original: &str, file: &std::path::Path) -> Option<String> {
    let base = |p: &str| {
        std::path::Path::new(p)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
    };
    let (named, original) = (base(named?)?, base(original)?);
    (named != original).then(|| {
        format!(
            "note: {} marks boxes on {named}, and the original is {original}; give the box file of this clip",
            file.display()
        )
    })
}

pub fn run_quality(a: &QualityArgs) -> anyhow::Result<ExitCode> {
    if a.every == 0 {
        bail!("`--every 0`: give N ≥ 1 (the similarity is measured on every N-th frame)");
    }
    // The files are read before the clips, so that a mistake in one shows
    // at once.
    let subjects = a.boxes.as_deref().map(Subjects::read).transpose()?;
    if let (Some(s), Some(file)) = (&subjects, &a.boxes)
        && let Some(line) = other_clip(s.clip.as_deref(), &a.original, file)
    {
        eprintln!("{line}");
    }
    // With --op, a reframe plans the clip first (as `run` does), and its
    // plan is the path measured; --reframe-path then writes it (or, if it
    // exists, replays it). With another op, or a result given, the path
    // file is only read.
    let mut chain = None;
    let mut path = None;
    let mut read_path = a.reframe_path.as_ref();
    if !a.ops.is_empty() {
        let mut c = seamstream::registry::parse_chain_for(&a.ops, Media::Video)?;
        if seamstream::gst::reframe::reframe_of(&mut c).is_some() {
            let input = seamstream::gst::Input::parse(&a.original)?;
            let planned = super::run_cli::plan_reframe(
                &mut c,
                &input,
                a.reframe_path.as_deref(),
                false,
                a.frames.map(|n| n as u64),
            )?;
            path = planned.and_then(|p| p.path);
            read_path = None;
        }
        chain = Some(c);
    }
    if let Some(p) = read_path {
        path = Some(PathFile::load(p)?);
    }
    let mut meter = Meter::new(a.every).with_crops(a.crops);
    if let Some(s) = subjects {
        meter = meter.with_subjects(s);
    }
    if let Some(p) = &path {
        // Its sizes are checked against the clips' once they are known,
        // below.
        meter = meter.with_path_scales(path_scales(p));
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
        (Some(r), true) => {
            seamstream::quality::report::compare_files(&a.original, r, meter, a.frames, |n| {
                bar.set_position(n as u64)
            })?
        }
        (None, false) => {
            let chain = match chain {
                Some(c) => c,
                None => seamstream::registry::parse_chain_for(&a.ops, Media::Video)?,
            };
            let backend = super::choose_backend(super::parse_device(&a.device)?)?;
            let gpu = match &backend {
                Backend::Cuda(g) => Some(g),
                Backend::Cpu => None,
            };
            seamstream::quality::measure_chain_with(
                &a.original,
                chain,
                gpu,
                meter,
                a.frames,
                |n| bar.set_position(n as u64),
            )?
            .0
        }
    };
    bar.finish_and_clear();
    let r = meter.report();
    let path_name = a
        .reframe_path
        .clone()
        .unwrap_or_else(|| std::path::PathBuf::from("the plan"));
    let smoothness = match (&path, Some(&path_name)) {
        (Some(p), Some(file)) => {
            let wrong = |field: &str, theirs: (usize, usize), ours: (usize, usize), what: &str| {
                anyhow::anyhow!(
                    "`{}`: {field} is {}x{}, but {what} is {}x{}; is it the path of this clip?",
                    file.display(),
                    theirs.0,
                    theirs.1,
                    ours.0,
                    ours.1
                )
            };
            let (input, output) = ((p.input[0], p.input[1]), (p.output[0], p.output[1]));
            if input != r.original {
                return Err(wrong("input", input, r.original, "the original"));
            }
            if output != r.size {
                return Err(wrong("output", output, r.size, "the result"));
            }
            if a.frames.is_none() && p.frames.len() != r.frames {
                eprintln!(
                    "note: `{}` has {} frames, the clips {}",
                    file.display(),
                    p.frames.len(),
                    r.frames
                );
            }
            Some(seamstream::quality::path_smoothness(p))
        }
        _ => None,
    };
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
    if a.each
        && let Some(s) = &r.subjects
    {
        for b in &s.boxes {
            let r = &b.subject.rect;
            eprintln!(
                "frame {} {} [{}, {}, {}, {}]: result {}, scaled {}, centre crop {}",
                b.subject.frame,
                b.subject.label,
                r.x,
                r.y,
                r.w,
                r.h,
                found_text(&b.result),
                found_text(&b.scaled),
                found_text(&b.centre)
            );
        }
    }
    let files = Files {
        boxes: a.boxes.as_deref(),
        path: a.reframe_path.as_deref(),
        crops: a.crops,
    };
    if a.json {
        println!("{}", json(&r, smoothness.as_ref(), &files));
    } else {
        print!("{}", table(&a.original, &r, smoothness.as_ref(), &files));
    }
    Ok(ExitCode::SUCCESS)
}

fn found_text(f: &Found) -> String {
    match f.at {
        Some(at) => format!(
            "{} (ncc {:.3} at scale {:.3}, [{}, {}, {}, {}])",
            if f.kept() { "kept" } else { "lost" },
            f.ncc,
            f.scale,
            at.x,
            at.y,
            at.w,
            at.h
        ),
        None => "lost (fits at no scale, or flat)".into(),
    }
}

/// `position` of the free range as a fraction of `n − 1` steps ("3/8").
fn position_text(position: f64, n: usize) -> String {
    if n <= 1 {
        return "centre".into();
    }
    format!("{}/{}", (position * (n - 1) as f64).round(), n - 1)
}

fn table(name: &str, r: &Report, smoothness: Option<&Smoothness>, files: &Files) -> String {
    use std::fmt::Write;
    let mut t = format!(
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
    );
    let _ = write!(
        t,
        "              result   centre   ratio   (the centre crop: fixed, of the result's aspect)
flicker     {:8.3} {:8.3} {:7.3}
",
        r.flicker_result,
        r.flicker_centre,
        r.flicker_centre_ratio()
    );
    if let (Some(best), Some(ratio)) = (r.best_crop(), r.best_crop_ratio()) {
        let worst = r
            .crops
            .iter()
            .map(|c| c.similarity.total())
            .fold(f64::NEG_INFINITY, f64::max);
        let n = if r.crops.len() > 1 { files.crops } else { 1 };
        let _ = write!(
            t,
            "              result best crop  ratio   (the best of {} fixed crops: {}, x {} y {}; the worst {:.2})
similarity  {:8.2} {:8.2} {:7.3}
",
            r.crops.len(),
            position_text(best.position, n),
            best.window.x,
            best.window.y,
            worst,
            r.result.total(),
            best.similarity.total(),
            ratio
        );
    }
    if let Some(s) = &r.subjects {
        let frames = {
            let mut f: Vec<usize> = s.boxes.iter().map(|b| b.subject.frame).collect();
            f.dedup();
            f.len()
        };
        let _ = writeln!(
            t,
            "subjects kept{}: {} boxes on {frames} frame{}{}",
            files
                .boxes
                .map(|p| format!(" ({})", p.display()))
                .unwrap_or_default(),
            s.all.total,
            if frames == 1 { "" } else { "s" },
            if s.unseen > 0 {
                format!(", {} more on frames not reached", s.unseen)
            } else {
                String::new()
            }
        );
        let _ = writeln!(t, "              result        scaled        centre crop");
        let row = |t: &mut String, label: &str, k: &seamstream::quality::KeptCount| {
            let (fr, fs, fc) = k.fractions();
            let _ = writeln!(
                t,
                "  {label:10} {:>5} {:.2}   {:>5} {:.2}   {:>5} {:.2}",
                format!("{}/{}", k.result, k.total),
                fr,
                format!("{}/{}", k.scaled, k.total),
                fs,
                format!("{}/{}", k.centre, k.total),
                fc
            );
        };
        row(&mut t, "all", &s.all);
        if s.labels.len() > 1 {
            for k in &s.labels {
                row(&mut t, &k.label, k);
            }
        }
    }
    if let Some(p) = smoothness {
        let modes: Vec<String> = Fit::ALL
            .iter()
            .zip(p.modes)
            .filter(|(_, n)| *n > 0)
            .map(|(m, n)| format!("{} {n}", m.name()))
            .collect();
        let _ = write!(
            t,
            "window path{}: {} frames, {} shot{} ({})
  largest jump   x {:.1} px, y {:.1} px a frame ({:.2}% of the width){}, over {} steps within shots
  mean |accel|   {:.3} px a frame² (x {:.3}, y {:.3}) over {} triples
",
            files
                .path
                .map(|f| format!(" ({})", f.display()))
                .unwrap_or_default(),
            p.frames,
            p.shots,
            if p.shots == 1 { "" } else { "s" },
            modes.join(", "),
            p.max_jump.0,
            p.max_jump.1,
            p.max_jump_percent(),
            p.max_jump_frame
                .map(|f| format!(" at frame {f}"))
                .unwrap_or_default(),
            p.steps,
            p.mean_accel,
            p.mean_accel_xy.0,
            p.mean_accel_xy.1,
            p.triples
        );
    }
    t
}
