//! The `run` and `join` commands of the binary: their arguments gathered
//! from the command line and a pipeline file, a split job's segment and a
//! reframe planned, the run, and its summary as text or JSON.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

use anyhow::{Context, bail};
use seamstream::args;
use seamstream::gst::run::Backend;
use seamstream::ops::Chain;
use seamstream::ops::params::Media;

use super::{fanout, parse_device, place_backend, spinner};
use seamstream::gst::run::report::summary_json;
use seamstream::trace;

pub(crate) struct RunArgs<'a> {
    pub(crate) input: Option<&'a str>,
    pub(crate) output: Option<&'a str>,
    pub(crate) ops: &'a [String],
    pub(crate) pipeline: Option<&'a Path>,
    pub(crate) size: Option<&'a str>,
    pub(crate) fps: Option<&'a str>,
    pub(crate) frames: Option<u64>,
    pub(crate) live: bool,
    pub(crate) device: Option<&'a str>,
    pub(crate) json: bool,
    pub(crate) encoder: EncoderArgs<'a>,
    pub(crate) no_audio: bool,
    pub(crate) segment: Option<&'a str>,
    pub(crate) warmup: Option<u64>,
    pub(crate) reframe_path: Option<&'a Path>,
}

/// The encoder flags as given.
pub(crate) struct EncoderArgs<'a> {
    pub(crate) codec: Option<&'a str>,
    pub(crate) crf: Option<u32>,
    pub(crate) bitrate: Option<u32>,
    pub(crate) preset: Option<&'a str>,
}

pub(crate) fn run_video(a: RunArgs) -> anyhow::Result<ExitCode> {
    use seamstream::gst::encode::{Codec, EncoderChoice};
    use seamstream::gst::outfile::Kept;
    use seamstream::gst::request::RunRequest;
    use seamstream::gst::{Input, Output, run};
    use seamstream::pipeline::PipelineFile;
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    // What the command line gives wins over the pipeline file.
    let mut file = a.pipeline.map(PipelineFile::load).transpose()?;
    if let Some(f) = &file
        && !a.ops.is_empty()
    {
        bail!(
            "both --op and --pipeline {} give operations; put the chain in one place: the file's [[op]] tables, or --op without --pipeline",
            f.path.display()
        );
    }
    // What the command line asks, laid over what the file asks; the
    // defaults are the request's (gst::request).
    let cli = RunRequest {
        input: a.input.map(Input::parse).transpose()?,
        fallback: None,
        output: a.output.map(Output::parse).transpose()?,
        device: a.device.map(parse_device).transpose()?,
        size: a.size.map(args::parse_size).transpose()?,
        fps: a.fps.map(args::parse_fps).transpose()?,
        frames: a.frames,
        live: a.live.then_some(true),
        chain: match a.ops.is_empty() {
            true => None,
            false => Some(seamstream::registry::parse_chain_for(a.ops, Media::Video)?),
        },
        encoder: EncoderChoice {
            codec: a.encoder.codec.map(Codec::parse).transpose()?,
            crf: a.encoder.crf,
            bitrate: a.encoder.bitrate,
            preset: a.encoder.preset.map(str::to_string),
        },
        audio: a.no_audio.then_some(false),
    };
    let mut request = match &mut file {
        Some(f) => cli.over(f.request()?),
        None => cli,
    };
    let chosen = request.input()?;
    if let (Some(note), Some(f)) = (&chosen.note, &file) {
        eprintln!("note: {note} (the fallback in {})", f.path.display());
    }
    let live = request.live(&chosen);
    let input = chosen.input;
    input.check_available()?;
    let is_sample = input == Input::Sample;
    check_made_input(&input, a.size, a.fps)?;
    let test = request.test_settings(&input, live);
    if let (Some(n), Some(segment)) = (a.frames, a.segment)
        && !matches!(input, Input::Sample | Input::Test { .. })
    {
        bail!(
            "--frames {n} with --segment {segment}: a part of a split job takes the frames its segment says; leave out --frames"
        );
    }
    let mut chain = match request.chain.take() {
        Some(chain) => chain,
        None if is_sample => {
            let default = "retarget:width=75%";
            eprintln!("note: no --op given; using {default} (16:9 -> 4:3)");
            seamstream::registry::parse_chain_for(&[default], Media::Video)?
        }
        None => Chain::default(),
    };
    let output = request.output()?;
    output.check_display()?;
    let encoder = request.encoder.clone();
    let audio = request.audio();
    let device = request.device.unwrap_or_default();
    // On a GPU, H.264 and H.265 are decoded by seamstream's own NVIDIA
    // decoder, in the run's CUDA context: GStreamer's NVIDIA plugin, which
    // probes every GPU as it loads (seconds a worker when several start at
    // once), is then not loaded for them. Without it (SEAMSTREAM_NVDEC=0, or
    // no NVIDIA decoder library) that plugin loads beside CUDA's start and a
    // split job's plan.
    if device != seamstream::Device::Cpu && !seamstream::gst::register_nv_decoder() {
        seamstream::gst::preload_slow_plugins();
    }
    trace::mark("arguments read, decoder registered");
    let mut reframe = plan_reframe(&mut chain, &input, a.reframe_path, live, a.frames)?;
    let placing = std::thread::spawn(move || {
        let placed = place_backend(device);
        trace::mark("device opened");
        placed
    });
    if a.warmup.is_some() && a.segment.is_none() {
        bail!("--warmup applies to a part of a split job: use it with --segment K/N or --gpus");
    }
    let mut span = a
        .segment
        .map(|text| plan_segment(text, &input, &output, a.warmup, &chain))
        .transpose()?;
    trace::mark("segment planned");
    if let Some(span) = &mut span {
        // The job as `join` compares its parts: the chain and the encoder.
        span.set_job(format!(
            "ops [{}]; pipeline {}; {:?}",
            a.ops.join(" "),
            a.pipeline
                .map_or("none".into(), |p| p.display().to_string()),
            encoder
        ));
    }
    let (backend, note) = placing.join().map_err(|_| {
        anyhow::anyhow!("starting CUDA failed unexpectedly; run with --device cpu")
    })??;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    // The kernels are compiled (or read from the cache) before the source
    // starts, so that a live source loses no frames to it; the time is its
    // own line of the summary.
    let kernels = match &backend {
        Backend::Cuda(_) => {
            let bar = spinner(
                "preparing the CUDA kernels (compiled on a first start, then cached)".into(),
            );
            let kernels = seamstream::gst::run::report::Kernels::prepare(&backend, &chain);
            bar.finish_and_clear();
            trace::mark("kernels ready");
            kernels
        }
        Backend::Cpu => None,
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Ctrl-C or SIGTERM asks for EOS; the output is then finalised. A
        // second one only says so; a third ends the process at once, as in
        // ffmpeg (an .mp4 keeps every fragment written even then).
        let presses = std::sync::atomic::AtomicU32::new(0);
        ctrlc::set_handler(move || {
            stop.store(true, Ordering::Relaxed);
            match presses.fetch_add(1, Ordering::Relaxed) {
                0 => {}
                1 => eprintln!(
                    "\nfinishing the output so that it plays; press Ctrl-C again to quit at once"
                ),
                _ => std::process::exit(130),
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let opts = run::RunOptions {
        input,
        output,
        test,
        queue: tuning("SEAMSTREAM_QUEUE", 2),
        backend,
        slots: tuning("SEAMSTREAM_SLOTS", 3),
        encoder,
        audio,
        span,
        on_progress: None,
        // The command line's only: a pipeline file's `frames` is for its
        // test sources and pictures (as its comments say), not a cap on a
        // file given with -i.
        frames: a.frames,
    };
    let s = run::run(&opts, chain, stop)?;
    trace::mark("run finished");
    if let Some(span) = &opts.span
        && span.snap > 0
        && span.segment.count > 1
    {
        eprintln!("{}", segment_decided(span));
    }
    if opts.span.is_some() {
        let t0 = trace::start();
        // A worker's fixed cost (process, CUDA, kernels, plan, the source's
        // start and end) beside its frames' time: what keeps N workers
        // from N times one.
        let all = t0.elapsed().as_secs_f64();
        eprintln!(
            "segment timing: {:.2} s in all, {:.2} s from the source's start to its end, {:.2} s before and after",
            all,
            s.seconds,
            (all - s.seconds).max(0.0)
        );
    }
    if let Some(r) = &mut reframe {
        r.finish((s.width_in, s.height_in), (s.width_out, s.height_out))?;
    }
    if a.json {
        println!("{}", summary_json(&s, kernels.as_ref(), reframe.as_ref()));
    } else {
        if let Some(k) = &kernels {
            eprintln!(
                "CUDA kernels ready in {:.2} s, before the source started ({} compiled by NVRTC, the rest from the cache)",
                k.seconds, k.compiled
            );
        }
        eprintln!(
            "{} frames in, {} out, {} dropped, {:.1} fps; {}x{} -> {}x{}; ms a frame: copy in {:.2}, chain {:.2}, copy out {:.2}; memory in {}, out {}",
            s.frames_in,
            s.frames_out,
            s.dropped,
            s.fps(),
            s.width_in,
            s.height_in,
            s.width_out,
            s.height_out,
            s.ms_copy_in,
            s.ms_chain,
            s.ms_copy_out,
            s.memory_in,
            s.memory_out,
        );
        for (i, st) in s.streams.iter().enumerate() {
            eprintln!("  stream {i}: {} {}: {}", st.kind, st.what, st.action);
        }
        if let Some(r) = &reframe {
            for line in reframe_lines(r) {
                eprintln!("{line}");
            }
            if let Some(line) = replay_ran_out(r, s.frames_in) {
                eprintln!("{line}");
            }
        }
        if let Some(e) = &s.ended_early {
            eprintln!("warning: {}", ended_early_line(e));
        }
        match (&s.kept, s.interrupted) {
            (Some(Kept::Target(p)), true) => {
                eprintln!("interrupted: {} holds every frame so far", p.display())
            }
            (Some(Kept::Partial(p)), true) => eprintln!(
                "interrupted: the frames so far are in {}; the existing output was left as it was",
                p.display()
            ),
            (Some(Kept::Target(p)), false) => eprintln!("wrote {}", p.display()),
            (_, true) => eprintln!("interrupted"),
            _ => {}
        }
    }
    // 130: the shell's code for a job ended by SIGINT.
    Ok(if s.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

/// What the summary says of an input whose video ended before its stated
/// length.
fn ended_early_line(e: &seamstream::gst::run::EndedEarly) -> String {
    format!(
        "the input ends at {:.2} s, {:.2} s before the {:.2} s its container states: \
         it may be cut short (a download or a copy that stopped); every frame it holds was \
         processed and written",
        e.end,
        e.stated - e.end,
        e.stated
    )
}

/// `--size` and `--fps` make the frames of what the run makes itself (the
/// sample, `test:` sources; `--fps`, a still picture's too). A video file,
/// a stream, a camera or a source fragment brings its own size and rate:
/// given for one, they are refused rather than silently ignored.
fn check_made_input(
    input: &seamstream::gst::Input,
    size: Option<&str>,
    fps: Option<&str>,
) -> anyhow::Result<()> {
    use seamstream::gst::Input;
    let caps = "video/x-raw,width=640,height=480,framerate=30/1";
    // What to do instead, for a flag the input does not take.
    let instead = |flag: &str| -> anyhow::Result<String> {
        Ok(match (input, size) {
            (Input::Uri { .. }, Some(size)) if flag == "--size" => {
                let (w, h) = args::parse_size(size)?;
                format!("to scale its frames, add --op reframe:width={w},height={h}")
            }
            (Input::Uri { .. }, _) => {
                "leave out --fps: every frame it holds is written at its own times".into()
            }
            (Input::Camera { device }, _) => format!(
                "a camera runs at the mode it offers first; to ask for one, give the source as a fragment: \"v4l2src device={device} ! {caps}\""
            ),
            _ => format!("put the caps in the fragment: \"... ! {caps}\""),
        })
    };
    let (sized, timed) = match input {
        Input::Sample | Input::Test { .. } => (true, true),
        Input::Uri { still, .. } => (false, *still),
        Input::Camera { .. } | Input::Fragment(_) => (false, false),
    };
    if let Some(size) = size.filter(|_| !sized) {
        bail!(
            "--size {size}: {input} has its own frame size (--size sets the size of test: sources and the sample); {}",
            instead("--size")?
        );
    }
    if let Some(fps) = fps.filter(|_| !timed) {
        bail!(
            "--fps {fps}: {input} has its own frame rate (--fps sets the rate of test: sources, the sample and still pictures); {}",
            instead("--fps")?
        );
    }
    Ok(())
}

pub(crate) fn run_join(
    output: &Path,
    parts: &[PathBuf],
    audio_from: Option<&Path>,
) -> anyhow::Result<ExitCode> {
    use seamstream::gst::outfile::Kept;
    let bar = spinner(format!(
        "joining {} parts into {}",
        parts.len(),
        output.display()
    ));
    let result = seamstream::gst::join::join(output, parts, audio_from, true);
    bar.finish_and_clear();
    let s = result?;
    if let Some(order) = &s.reordered {
        let order: Vec<String> = order.iter().map(u32::to_string).collect();
        eprintln!(
            "the parts were given out of order; joined by their numbers: {}",
            order.join(", ")
        );
    }
    let counts: Vec<String> = s.part_frames.iter().map(u64::to_string).collect();
    eprintln!(
        "{} frames from {} parts ({}), {:.2} s of video, in {:.2} s",
        s.frames(),
        parts.len(),
        counts.join(" + "),
        s.duration.nseconds() as f64 / 1e9,
        s.seconds
    );
    for st in &s.streams {
        eprintln!("  {} {}: {}", st.kind, st.what, st.action);
    }
    if let Some(Kept::Target(p)) = &s.kept {
        eprintln!("wrote {}", p.display());
    }
    Ok(ExitCode::SUCCESS)
}

/// `run --gpus`/`--workers`: the job over worker processes, each given
/// `run`'s other options as they came.
pub(crate) fn run_split(
    a: &RunArgs,
    gpus: Option<&str>,
    workers: Option<u32>,
    keep_parts: bool,
) -> anyhow::Result<ExitCode> {
    let (Some(input), Some(output)) = (a.input, a.output) else {
        bail!("--gpus and --workers split a file: give the input file and the output file");
    };
    if let Some(n) = a.frames {
        bail!(
            "--frames {n} with --gpus or --workers: a split job takes the whole file; for its first {n} frames, leave out --gpus and --workers"
        );
    }
    // The chain as every worker will read it: a mistake in it is said at
    // once, as a single run says it, before any worker starts.
    let mut chain = match (a.ops.is_empty(), a.pipeline) {
        (false, _) => Some(seamstream::registry::parse_chain_for(a.ops, Media::Video)?),
        (true, Some(file)) => seamstream::pipeline::PipelineFile::load(file)?
            .request()?
            .chain
            .take(),
        (true, None) => None,
    };
    let e = &a.encoder;
    if output == "null"
        && (e.codec.is_some() || e.crf.is_some() || e.bitrate.is_some() || e.preset.is_some())
    {
        bail!(
            "--codec, --crf, --bitrate and --preset apply to file outputs (.mp4, .mkv, .webm), not to null"
        );
    }
    if let (Some(_), Some(d)) = (gpus, a.device)
        && d != "cuda"
        && d != "auto"
    {
        bail!(
            "--gpus puts each worker on a GPU of its own; leave out `--device {d}` (or split over CPU workers with --workers M --device cpu)"
        );
    }
    let mut forward: Vec<std::ffi::OsString> = Vec::new();
    let mut pass = |flag: &str, value: Option<String>| {
        if let Some(v) = value {
            forward.push(flag.into());
            forward.push(v.into());
        }
    };
    for op in a.ops {
        pass("--op", Some(op.clone()));
    }
    pass("--pipeline", a.pipeline.map(|p| p.display().to_string()));
    if gpus.is_none() {
        pass("--device", a.device.map(str::to_string));
    }
    pass("--codec", a.encoder.codec.map(str::to_string));
    pass("--crf", a.encoder.crf.map(|v| v.to_string()));
    pass("--bitrate", a.encoder.bitrate.map(|v| v.to_string()));
    pass("--preset", a.encoder.preset.map(str::to_string));
    pass("--warmup", a.warmup.map(|v| v.to_string()));
    // A reframe is planned once, here, over the whole input, and every
    // worker replays the plan for its segment (each would otherwise analyse
    // the whole input before its first frame); the path goes where
    // `--reframe-path` says, else to a file of its own for the job.
    let reframes = chain
        .as_mut()
        .is_some_and(|c| seamstream::gst::reframe::reframe_of(c).is_some());
    let plan = match &mut chain {
        Some(chain) if reframes => {
            let path = match a.reframe_path {
                Some(p) => p.to_path_buf(),
                None => std::env::temp_dir().join(format!(
                    "seamstream-reframe-{}.path.json",
                    std::process::id()
                )),
            };
            if !path.exists() {
                let source = seamstream::gst::Input::parse(input)?;
                if let Some(r) = plan_reframe(chain, &source, Some(&path), false, None)? {
                    // The job's own path file goes with the job: not named.
                    for line in reframe_lines(&r) {
                        if a.reframe_path.is_some() || !line.starts_with("  path written") {
                            eprintln!("{line}");
                        }
                    }
                }
            }
            pass("--reframe-path", Some(path.display().to_string()));
            Some((path, a.reframe_path.is_none()))
        }
        _ => {
            if let Some(p) = a.reframe_path {
                return Err(seamstream::gst::reframe::no_reframe_for(p).into());
            }
            None
        }
    };
    let ran = fanout::run(fanout::Job {
        input: input.into(),
        output: output.into(),
        gpus: gpus.map(fanout::Gpus::parse).transpose()?,
        workers,
        forward,
        audio: !a.no_audio,
        keep_parts,
    });
    if let Some((path, true)) = plan {
        let _ = std::fs::remove_file(path);
    }
    ran
}

/// Plans `--segment K/N` of a file input into a file output, and says in
/// one line which frames the part takes.
pub(crate) fn plan_segment(
    text: &str,
    input: &seamstream::gst::Input,
    output: &seamstream::gst::Output,
    warmup: Option<u64>,
    chain: &Chain,
) -> anyhow::Result<seamstream::gst::parts::Span> {
    use seamstream::gst::Output;
    use seamstream::gst::parts::Span;
    let segment = seamstream::split::Segment::parse(text)?;
    let Some(path) = input.local_path() else {
        bail!("`--segment {text}`: the input must be a video file, not {input}");
    };
    if let seamstream::gst::Input::Uri { streamed: true, .. } = input {
        bail!(
            "`--segment {text}`: `{input}` is a pipe or a device, read once as it streams; a job split in time reads its input more than once: save it to a file first"
        );
    }
    // null: the part is processed and dropped (a split job's speed without
    // its encoders).
    if !matches!(output, Output::File { .. } | Output::Null) {
        bail!(
            "`--segment {text}`: a part goes to a file (e.g. part-{}.mp4) for `seamstream join`, or to null, not to {}",
            segment.index,
            match output {
                Output::Display => "the display",
                _ => "a sink fragment",
            }
        );
    }
    let span = Span::plan(&path, segment, warmup, chain.remembers())?;
    let warm = match span.warmup() {
        0 => String::new(),
        n => format!(", after {n} warm-up frames"),
    };
    let start = match (span.planned.start, span.at_keyframe) {
        (0, _) => "",
        (_, true) => ", from a keyframe",
        _ => "",
    };
    let cuts = if span.snap > 0 {
        format!(
            "a boundary moves to a scene cut within {} frames of it, looked for in the part's own frames",
            span.snap
        )
    } else if chain.remembers() {
        "the parts are too short for a boundary to move".into()
    } else {
        "no cut search: the chain has no memory".into()
    };
    eprintln!(
        "segment {text}: frames {}..{} of {}{start}{warm} (frames counted in {:.2} s; {cuts})",
        span.planned.start,
        span.planned.end,
        span.total,
        span.counting.as_secs_f64(),
    );
    Ok(span)
}

/// Plans the chain's reframe (if any) before the run, with a bar while a
/// file is analysed.
pub(crate) fn plan_reframe(
    chain: &mut seamstream::Chain,
    input: &seamstream::gst::Input,
    path_file: Option<&Path>,
    live: bool,
    frames: Option<u64>,
) -> anyhow::Result<Option<seamstream::gst::reframe::Planned>> {
    let bar = indicatif::ProgressBar::hidden();
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} planning the reframe: frame {pos} analysed [{elapsed}]",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let mut shown = false;
    let planned = seamstream::gst::reframe::prepare(chain, input, path_file, live, frames, |n| {
        if !shown {
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.enable_steady_tick(Duration::from_millis(120));
            shown = true;
        }
        bar.set_position(n as u64);
    })?;
    bar.finish_and_clear();
    Ok(planned)
}

/// A part's frames as decided once it ran, where a boundary could move to
/// a scene cut.
fn segment_decided(span: &seamstream::gst::parts::Span) -> String {
    let range = span.range();
    let moved = match span.at_cut() {
        (true, true) => ", both boundaries at scene cuts",
        (true, false) => ", from a scene cut",
        (false, true) => ", to a scene cut",
        (false, false) => ", no scene cut near its boundaries",
    };
    format!(
        "segment {}/{}: frames {}..{} of {}{moved}, after {} warm-up frames",
        span.segment.index,
        span.segment.count,
        range.start,
        range.end,
        span.total,
        span.warmup()
    )
}

/// The summary's lines on a reframe: where its plan came from, and each
/// shot's fit and camera.
pub(crate) fn reframe_lines(r: &seamstream::gst::reframe::Planned) -> Vec<String> {
    use seamstream::gst::reframe::{Source, describe_shots};
    let how = match &r.source {
        Source::Planned { seconds } => format!(
            "reframe: {} frames analysed and planned ahead in {seconds:.1} s",
            r.frames
        ),
        Source::Replayed(p) => format!("reframe: replayed {}", p.display()),
        Source::Live { ahead } if *ahead > 0.0 => {
            format!(
                "reframe: planned live, each frame seeing {ahead} s ahead (held back that long)"
            )
        }
        Source::Live { .. } => "reframe: planned live, frame by frame".into(),
    };
    let mut lines = vec![format!("{how}; {} shots:", shot_count(&r.shots))];
    lines.extend(
        describe_shots(&r.shots, r.fps)
            .into_iter()
            .map(|l| format!("  {l}")),
    );
    if let (Some(p), false) = (&r.written, matches!(r.source, Source::Replayed(_))) {
        lines.push(format!(
            "  path written to {} (pass it again to replay it)",
            p.display()
        ));
    }
    lines
}

/// The shots of a summary's parts (a live shot's widened and narrowed
/// parts are one shot).
fn shot_count(parts: &[seamstream::ops::reframe::plan::ShotPlan]) -> usize {
    parts.windows(2).filter(|w| w[0].shot != w[1].shot).count() + usize::from(!parts.is_empty())
}

/// Where a replayed path file names fewer frames than the run read: the
/// frames past its last held its last window, which the user should know
/// (a file cut short, or one made for a shorter cut of the video).
pub(crate) fn replay_ran_out(
    r: &seamstream::gst::reframe::Planned,
    frames_in: u64,
) -> Option<String> {
    use seamstream::gst::reframe::Source;
    let Source::Replayed(p) = &r.source else {
        return None;
    };
    let named = r.frames as u64;
    (named > 0 && frames_in > named).then(|| {
        format!(
            "  note: {} plans frames 0-{} only; frames {}-{} kept the last one's window",
            p.display(),
            named - 1,
            named,
            frames_in - 1
        )
    })
}

/// A tuning knob for experiments (`SEAMSTREAM_QUEUE`, `SEAMSTREAM_SLOTS`):
/// its value from the environment, else `default`.
pub(crate) fn tuning(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `--json` is JSON whatever the summary holds: text with quotes,
    /// backslashes and control characters escaped, a NaN as null (the
    /// hand-written writer printed `NaN`, which no parser takes).
    #[test]
    fn the_json_summary_parses_whatever_it_holds() {
        let mut s = seamstream::gst::run::Summary {
            seconds: f64::NAN,
            ms_chain: f64::INFINITY,
            ..Default::default()
        };
        s.streams.push(seamstream::gst::audio::StreamReport {
            kind: "video".into(),
            what: "a \"quoted\" \\ name\twith\ncontrols".into(),
            action: "sobel -> null".into(),
        });
        let text = summary_json(&s, None, None);
        let v: serde_json::Value =
            serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"));
        assert!(v["seconds"].is_null(), "{text}");
        assert!(v["ms_chain"].is_null(), "{text}");
        assert_eq!(
            v["streams"][0]["stream"],
            "a \"quoted\" \\ name\twith\ncontrols"
        );
        assert_eq!(v["frames_out"], 0);
    }
}
