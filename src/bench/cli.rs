//! The `devices` and `bench` subcommands.

use std::fmt::Write as _;
use std::process::ExitCode;

use anyhow::{Context, bail};
use clap::Args;

use crate::bench::{self, CASES, OpTime, StageTime, TransferTime};
use seamstream::cuda::{self, Gpu};

#[cfg(feature = "cuda")]
/// `seamstream devices`: every GPU, and whether kernels can be compiled.
pub fn devices() -> anyhow::Result<ExitCode> {
    let nvrtc = match cuda::module::nvrtc_version() {
        Ok((maj, min)) => format!("NVRTC {maj}.{min} found"),
        Err(e) => first_line(&e.to_string()),
    };
    match cuda::devices() {
        Err(e) => {
            println!("no GPU: {}", first_line(&e.to_string()));
            println!("{nvrtc}");
            println!("seamstream runs on the CPU here (--device cpu, or auto).");
        }
        Ok(list) if list.is_empty() => {
            println!("the CUDA driver sees no GPU; {nvrtc}");
        }
        Ok(list) => {
            for d in list {
                println!(
                    "cuda:{}  {}  {:.1} GiB  compute capability {}.{}",
                    d.ordinal,
                    d.name,
                    d.memory_bytes as f64 / (1u64 << 30) as f64,
                    d.compute_capability.0,
                    d.compute_capability.1
                );
            }
            println!("{nvrtc}");
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// `seamstream devices` in a build without CUDA: says so.
#[cfg(not(feature = "cuda"))]
pub fn devices() -> anyhow::Result<ExitCode> {
    println!("no GPU: {}", seamstream::Error::NoCudaBuild);
    println!("seamstream runs on the CPU here (--device cpu, or auto).");
    Ok(ExitCode::SUCCESS)
}

fn first_line(text: &str) -> String {
    text.split(" - searched").next().unwrap_or("").to_string()
}

#[derive(Args, Debug)]
#[command(after_help = "Examples:
  seamstream bench                      every part at 1920x1080 and 3840x2160
  seamstream bench ops --filter gaussian
  seamstream bench stage --op gaussian:sigma=2 --frames 500
  seamstream bench retarget --sizes 1920x1080
  seamstream bench reframe --sizes 1920x1080 --clips clip.mp4
  seamstream bench --json > bench.json")]
pub struct BenchArgs {
    /// What to measure: all, ops, transfers, stage, retarget (seam carving's
    /// speed, and its quality on real clips), or reframe (a reframe's
    /// analysis and render a frame, on real clips).
    #[arg(default_value = "all")]
    what: String,
    /// Frame sizes, comma-separated.
    #[arg(long, default_value = "1920x1080,3840x2160", value_name = "WxH,...")]
    sizes: String,
    /// Only the operation cases whose label contains this text.
    #[arg(long)]
    filter: Option<String>,
    /// Timed runs per case (after warm-up); the median is reported.
    #[arg(long, default_value_t = 200)]
    runs: usize,
    /// The chain for the stage measurement (repeatable; default: empty).
    #[arg(long = "op", value_name = "NAME[:k=v,...]")]
    ops: Vec<String>,
    /// Frames pushed through the stage.
    #[arg(long, default_value_t = 300)]
    frames: usize,
    /// Slots in the stage's ring.
    #[arg(long, default_value_t = 3)]
    slots: usize,
    /// Where to measure: auto, cpu, cuda or cuda:N.
    #[arg(long, default_value = "auto")]
    device: String,
    /// Print JSON instead of tables.
    #[arg(long)]
    json: bool,
    /// `bench retarget`: the clips for the quality figures, a folder or
    /// files separated by commas, or `none` [default: ../shared/data/video
    /// if it exists].
    #[arg(long, value_name = "DIR|FILE,...")]
    clips: Option<String>,
    /// `bench retarget`: the modes whose quality is measured: fast, exact
    /// or fast,exact.
    #[arg(long, default_value = "fast", value_name = "MODES")]
    modes: String,
    /// `bench retarget`: measure the similarity on every N-th frame.
    #[arg(long, default_value_t = 15, value_name = "N")]
    every: usize,
    /// `bench retarget`: the quality figures only.
    #[arg(long)]
    no_speed: bool,
}

fn parse_sizes(text: &str) -> anyhow::Result<Vec<(usize, usize)>> {
    text.split(',')
        .map(|s| {
            let (w, h) = s.trim().split_once(['x', 'X']).unwrap_or(("", ""));
            match (w.parse::<usize>(), h.parse::<usize>()) {
                (Ok(w), Ok(h)) if (1..=16384).contains(&w) && (1..=16384).contains(&h) => {
                    Ok((w, h))
                }
                _ => bail!("`--sizes {text}`: `{s}` is not WIDTHxHEIGHT (1 to 16384 each)"),
            }
        })
        .collect()
}

#[derive(Default)]
struct Report {
    device: String,
    ops: Vec<OpTime>,
    transfers: Vec<TransferTime>,
    stages: Vec<StageTime>,
}

pub fn run_bench(a: &BenchArgs) -> anyhow::Result<ExitCode> {
    let sizes = parse_sizes(&a.sizes)?;
    let (do_ops, do_transfers, do_stage) = match a.what.as_str() {
        "all" => (true, true, true),
        "ops" => (true, false, false),
        "transfers" => (false, true, false),
        "stage" => (false, false, true),
        "retarget" | "reframe" => (false, false, false),
        w => bail!(
            "`seamstream bench {w}`: expected all, ops, transfers, stage, retarget or reframe"
        ),
    };
    let device = crate::parse_device(&a.device)?;
    let gpu = match cuda::place(device, None) {
        Ok(cuda::Placed::Gpu(g)) => Some(g),
        Ok(cuda::Placed::Cpu { why }) => {
            if let Some(e) = why {
                eprintln!(
                    "note: no GPU ({}); timing the operations on the CPU",
                    first_line(&e.to_string())
                );
            }
            None
        }
        Err(e) => bail!("`--device {device}`: {}", first_line(&e.to_string())),
    };
    if a.what == "retarget" {
        return retarget_bench(a, &sizes, gpu.as_ref());
    }
    if a.what == "reframe" {
        return reframe_bench(a, &sizes, gpu.as_ref());
    }
    let mut r = Report {
        device: match &gpu {
            Some(g) => format!("{} ({g:?})", g.name()),
            None => "CPU".into(),
        },
        ..Default::default()
    };
    let cases: Vec<_> = CASES
        .iter()
        .filter(|c| {
            a.filter
                .as_ref()
                .is_none_or(|f| c.label.contains(f.as_str()))
        })
        .collect();
    if do_ops {
        for &(w, h) in &sizes {
            for c in &cases {
                let t = match &gpu {
                    #[cfg(feature = "cuda")]
                    Some(g) => bench::time_case_gpu(g, c, w, h, a.runs),
                    #[cfg(not(feature = "cuda"))]
                    Some(g) => match *g {},
                    None => bench::time_case_cpu(c, w, h, a.runs.min(20)),
                };
                match t {
                    Ok(t) => r.ops.push(t),
                    Err(e) => eprintln!("{} at {w}x{h}: {}", c.label, first_line(&e.to_string())),
                }
            }
        }
    }
    #[cfg(not(feature = "cuda"))]
    if let Some(g) = &gpu {
        match *g {}
    }
    #[cfg(feature = "cuda")]
    if let Some(g) = &gpu {
        if do_transfers {
            for &(w, h) in &sizes {
                r.transfers.push(bench::time_transfers(g, w, h, 100)?);
            }
        }
        if do_stage {
            for &(w, h) in &sizes {
                r.stages
                    .push(bench::time_stage(g, &a.ops, w, h, a.frames, a.slots)?);
            }
        }
    }
    if gpu.is_none() && (do_transfers || do_stage) {
        eprintln!("note: transfers and the GPU stage need a GPU; skipped");
    }
    let text = if a.json { json(&r) } else { table(&r) };
    print!("{text}");
    Ok(ExitCode::SUCCESS)
}

fn table(r: &Report) -> String {
    let mut s = String::new();
    let _ = writeln!(s, "device: {}", r.device);
    if !r.ops.is_empty() {
        let _ = writeln!(
            s,
            "\n| operation | size | median µs | p10 µs | p90 µs | target µs | met |\n|---|---|---|---|---|---|---|"
        );
        for t in &r.ops {
            let (target, met) = match t.target_us {
                Some(x) => (
                    format!("{x:.0}"),
                    if t.median_us <= x { "yes" } else { "**no**" },
                ),
                None => ("".into(), ""),
            };
            let _ = writeln!(
                s,
                "| {} | {}x{} | {:.1} | {:.1} | {:.1} | {target} | {met} |",
                t.label, t.width, t.height, t.median_us, t.p10_us, t.p90_us
            );
        }
    }
    if !r.transfers.is_empty() {
        let _ = writeln!(
            s,
            "\n| transfer (pinned, RGBA) | size | MB | up µs | up GB/s | down µs | down GB/s |\n|---|---|---|---|---|---|---|"
        );
        for t in &r.transfers {
            let _ = writeln!(
                s,
                "| frame | {}x{} | {:.1} | {:.1} | {:.1} | {:.1} | {:.1} |",
                t.width,
                t.height,
                t.bytes as f64 / 1e6,
                t.up_us,
                t.up_gbs(),
                t.down_us,
                t.down_gbs()
            );
        }
    }
    if !r.stages.is_empty() {
        let _ = writeln!(
            s,
            "\n| stage: chain | size | slots | frames | pipelined ms/frame (fps) | serial ms/frame (fps) | upload ms | chain ms | download ms | host copies ms | overlap ratio |\n|---|---|---|---|---|---|---|---|---|---|---|"
        );
        for t in &r.stages {
            let _ = writeln!(
                s,
                "| {} | {}x{} | {} | {} | {:.3} ({:.0}) | {:.3} ({:.0}) | {:.3} | {:.3} | {:.3} | {:.3} | {:.2} |",
                t.chain,
                t.width,
                t.height,
                t.slots,
                t.frames,
                t.pipelined_ms,
                1e3 / t.pipelined_ms,
                t.serial_ms,
                1e3 / t.serial_ms,
                t.upload_ms,
                t.chain_ms,
                t.download_ms,
                t.host_copy_ms,
                t.overlap_ratio()
            );
        }
    }
    s
}

fn json(r: &Report) -> String {
    use serde_json::json;
    let ops: Vec<serde_json::Value> = r
        .ops
        .iter()
        .map(|t| {
            json!({
                "op": t.label,
                "width": t.width,
                "height": t.height,
                "median_us": crate::rounded(t.median_us, 3),
                "p10_us": crate::rounded(t.p10_us, 3),
                "p90_us": crate::rounded(t.p90_us, 3),
                "target_us": t.target_us,
            })
        })
        .collect();
    let transfers: Vec<serde_json::Value> = r
        .transfers
        .iter()
        .map(|t| {
            json!({
                "width": t.width,
                "height": t.height,
                "bytes": t.bytes,
                "up_us": crate::rounded(t.up_us, 3),
                "down_us": crate::rounded(t.down_us, 3),
                "up_gbs": crate::rounded(t.up_gbs(), 2),
                "down_gbs": crate::rounded(t.down_gbs(), 2),
            })
        })
        .collect();
    let stages: Vec<serde_json::Value> = r
        .stages
        .iter()
        .map(|t| {
            json!({
                "chain": t.chain,
                "width": t.width,
                "height": t.height,
                "slots": t.slots,
                "frames": t.frames,
                "pipelined_ms": crate::rounded(t.pipelined_ms, 4),
                "serial_ms": crate::rounded(t.serial_ms, 4),
                "upload_ms": crate::rounded(t.upload_ms, 4),
                "chain_ms": crate::rounded(t.chain_ms, 4),
                "download_ms": crate::rounded(t.download_ms, 4),
                "host_copy_ms": crate::rounded(t.host_copy_ms, 4),
                "overlap_ratio": crate::rounded(t.overlap_ratio(), 3),
            })
        })
        .collect();
    let mut text = json!({
        "device": r.device,
        "ops": ops,
        "transfers": transfers,
        "stage": stages,
    })
    .to_string();
    text.push('\n');
    text
}

/// `seamstream bench retarget`: seam-carving speed (exact and fast), and
/// the quality figures of `seamstream quality` on real clips.
fn retarget_bench(
    a: &BenchArgs,
    sizes: &[(usize, usize)],
    gpu: Option<&Gpu>,
) -> anyhow::Result<ExitCode> {
    use crate::bench::retarget as br;
    use seamstream::ops::{params, retarget};
    let text = a.ops.first().map_or("retarget", String::as_str);
    let (name, pairs) = params::split_op(text)?;
    if name != "retarget" || a.ops.len() > 1 {
        bail!(
            "`bench retarget --op {text}`: expected one retarget op, e.g. --op retarget:motion=400"
        );
    }
    // Checked here, so that a bad value fails before any timing.
    params::Params::from_pairs(&retarget::SPEC, &pairs)?;
    let knobs: String = pairs
        .iter()
        .filter(|(k, _)| !matches!(k.as_str(), "width" | "height" | "mode"))
        .map(|(k, v)| format!(",{k}={v}"))
        .collect();
    let fast_op = |w: usize| format!("retarget:width={},mode=fast{knobs}", w * 3 / 4);
    let runs = a.runs.clamp(1, 20);
    let on = if gpu.is_some() { "cuda" } else { "cpu" };
    if !a.no_speed {
        println!("| figure | size | device | ms | target ms |\n|---|---|---|---|---|");
        let row = |what: &str, (w, h): (usize, usize), on: &str, ms: f64, target: &str| {
            println!("| {what} | {w}x{h} | {on} | {ms:.3} | {target} |");
        };
        for &(w, h) in sizes {
            // docs/DESIGN.md's targets: the GPU's at 1080p and 4K, the CPU's
            // (30 fps, 33.3 ms) at 720p.
            let target = |gpu_target: &'static str, cpu_720p: &'static str| match (gpu, w, h) {
                (Some(_), 1920, 1080) => gpu_target,
                (None, 1280, 720) => cpu_720p,
                _ => "",
            };
            let seam = br::time_exact_seam(gpu, w, h, runs)?;
            row("one exact seam", (w, h), on, seam, target("0.15", ""));
            #[cfg(feature = "cuda")]
            if let Some(g) = gpu {
                let dp = br::time_dp(g, w, h, runs.max(20))?;
                row("  of which the DP (forward energy)", (w, h), "cuda", dp, "");
            }
            let (cut, steady) = br::time_fast(gpu, &fast_op(w), w, h, 40)?;
            let fast_target = match (gpu, w, h) {
                (Some(_), 3840, 2160) => "10",
                _ => target("3", "33.3"),
            };
            let to = w * 3 / 4;
            row(
                &format!("to {to}x{h}, fast, a followed frame"),
                (w, h),
                on,
                steady,
                fast_target,
            );
            row(
                &format!("to {to}x{h}, fast, a shot's first frame"),
                (w, h),
                on,
                cut,
                "",
            );
            if gpu.is_some() && w * h <= 1920 * 1080 {
                let op = format!("retarget:width={to},mode=exact");
                let ms = br::time_op(gpu, &op, w, h, runs.min(3))?;
                row(
                    &format!("to {to}x{h}, exact"),
                    (w, h),
                    on,
                    ms,
                    target("60", ""),
                );
            }
        }
    }
    let clips = clip_list(a.clips.as_deref())?;
    if clips.is_empty() {
        eprintln!(
            "note: no clips for the quality figures (give --clips DIR or FILE,FILE; the shared clips are in ../shared/data/video)"
        );
        return Ok(ExitCode::SUCCESS);
    }
    let modes: Vec<&str> = a.modes.split(',').map(str::trim).collect();
    for m in &modes {
        if !matches!(*m, "fast" | "exact") {
            bail!(
                "`--modes {}`: expected fast, exact or both (fast,exact)",
                a.modes
            );
        }
    }
    println!(
        "\nquality, to 3/4 of the width (`seamstream quality`: ratios to area scaling; similarity on every {}th frame):\n",
        a.every
    );
    println!(
        "| clip | mode | frames | similarity ÷ scaling | flicker ÷ scaling | ms a frame ({on}) |\n|---|---|---|---|---|---|"
    );
    for clip in &clips {
        for mode in &modes {
            let op = format!("retarget:width=75%,mode={mode}{knobs}");
            let chain = seamstream::registry::parse_chain_for(
                &[op],
                seamstream::ops::params::Media::Video,
            )?;
            let name = clip.file_name().map_or_else(
                || clip.display().to_string(),
                |n| n.to_string_lossy().into_owned(),
            );
            let (meter, spent) = seamstream::quality::measure_chain(
                &clip.to_string_lossy(),
                chain,
                gpu,
                a.every,
                None,
                |_| {},
            )?;
            let r = meter.report();
            println!(
                "| {name} | {mode} | {} | {:.3} | {:.3} | {:.1} |",
                r.frames,
                r.similarity_ratio(),
                r.flicker_ratio(),
                spent.as_secs_f64() * 1e3 / r.frames.max(1) as f64
            );
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// Frames of each clip `bench reframe` takes (they are held in memory, on
/// the host and the GPU).
const REFRAME_FRAMES: usize = 120;

/// `seamstream bench reframe`: a reframe's time a frame on real clips
/// scaled to each size: the analysis (host) and the render apart.
fn reframe_bench(
    a: &BenchArgs,
    sizes: &[(usize, usize)],
    gpu: Option<&Gpu>,
) -> anyhow::Result<ExitCode> {
    use crate::bench::reframe as br;
    let clips = clip_list(a.clips.as_deref())?;
    let clips: Vec<_> = clips
        .into_iter()
        .filter(|c| c.extension().is_some_and(|e| e == "mp4"))
        .collect();
    if clips.is_empty() {
        bail!(
            "`bench reframe` needs real clips: give --clips DIR or FILE,FILE (the shared clips are in ../shared/data/video)"
        );
    }
    let ops: Vec<String> = if a.ops.is_empty() {
        ["", ",fit=crop", ",fit=carve", ",fit=pad"]
            .iter()
            .map(|f| format!("reframe:aspect=9:16{f}"))
            .collect()
    } else {
        a.ops.clone()
    };
    let n = a.frames.min(REFRAME_FRAMES);
    let on = match gpu {
        Some(g) => g.name(),
        None => format!("CPU, {} threads", rayon::current_num_threads()),
    };
    println!(
        "reframe: ms a frame on the first {n} frames of each clip; the analysis on the host's CPU ({} threads), the render on {on}; the render's figures and the total leave the first frame out (it sets the carver up, and compiles its kernels on a machine's first run)\n",
        rayon::current_num_threads()
    );
    println!(
        "| clip | size | op | analysis | render (median) | render (mean) | total | first frame's render | frames crop/carve/pad |\n|---|---|---|---|---|---|---|---|---|"
    );
    for clip in &clips {
        let name = clip.file_name().map_or_else(
            || clip.display().to_string(),
            |n| n.to_string_lossy().into_owned(),
        );
        for &size in sizes {
            let frames = br::clip_frames(&clip.to_string_lossy(), n, size)?;
            if frames.is_empty() {
                continue;
            }
            for op in &ops {
                let t = br::time_reframe(gpu, op, &frames)?;
                println!(
                    "| {name} | {}x{} | {} | {:.2} | {:.3} | {:.3} | {:.2} | {:.1} | {}/{}/{} |",
                    size.0,
                    size.1,
                    t.op,
                    t.analysis,
                    t.render_median,
                    t.render_mean,
                    t.total(),
                    t.render_first,
                    t.fits[0],
                    t.fits[1],
                    t.fits[2]
                );
            }
        }
    }
    Ok(ExitCode::SUCCESS)
}

/// The clips `--clips` names (a folder's videos, or files separated by
/// commas), or the shared clips beside the checkout when it names none.
fn clip_list(arg: Option<&str>) -> anyhow::Result<Vec<std::path::PathBuf>> {
    use std::path::PathBuf;
    let video = |p: &std::path::Path| {
        p.extension()
            .and_then(|e| e.to_str())
            .is_some_and(|e| matches!(e, "mp4" | "webm" | "mkv" | "mov"))
    };
    let dir_clips = |d: &std::path::Path| -> anyhow::Result<Vec<PathBuf>> {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .with_context(|| format!("`--clips {}`", d.display()))?
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|p| video(p))
            .collect();
        v.sort();
        Ok(v)
    };
    match arg {
        None => {
            let d = std::path::Path::new("../shared/data/video");
            if d.is_dir() {
                dir_clips(d)
            } else {
                Ok(Vec::new())
            }
        }
        Some("none") => Ok(Vec::new()),
        Some(text) => {
            let p = std::path::Path::new(text);
            if p.is_dir() {
                return dir_clips(p);
            }
            text.split(',')
                .map(|f| {
                    let p = PathBuf::from(f.trim());
                    if p.is_file() {
                        Ok(p)
                    } else {
                        bail!("`--clips {text}`: `{f}` is not a file or folder")
                    }
                })
                .collect()
        }
    }
}
