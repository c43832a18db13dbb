//! The `seamstream` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod bench;
mod fanout;
mod quality_cli;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use seamstream::error::ErrorKind;

use seamstream::cuda::DevFormat;
use seamstream::cuda::stage::GpuChain;
use seamstream::gst::run::Backend;
use seamstream::ops::Chain;
use seamstream::ops::params::Media;
use seamstream::{Device, Frame, args, io};

const OP_HELP: &str = "An operation, NAME[:key=value,...]; repeat to chain them, applied in order.
List values go in brackets, sizes are pixels or percent. `seamstream ops` lists
every operation with its parameters and defaults.
Examples:
  --op gaussian:sigma=2 --op threshold:t=120,type=binary_inv
  --op warp:affine=[0.9,-0.1,12,0.1,0.9,-5],interpolation=bicubic
  --op threshold:t=otsu
  --op retarget:width=75%,protect=face.png";

#[derive(Parser, Debug)]
#[command(
    name = "seamstream",
    version,
    about = "Video and image operations on CUDA or the CPU: filters, warps, thresholds, equalisation and seam-carving retargeting",
    after_help = "Examples:
  seamstream run                                     # carve the built-in sample clip from 16:9 to 4:3 -> out.mp4
  seamstream image                                   # retarget the built-in sample to 75% width -> out.png
  seamstream image photo.jpg small.png --op retarget:width=640
  seamstream image doc.png bw.png --op adaptive:method=sauvola,window=25
  seamstream ops                                     # every operation and its parameters"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Apply an operation chain to a PNG or JPEG image.
    #[command(after_help = "Examples:
  seamstream image                                   # built-in sample, retarget:width=75%, -> out.png
  seamstream image in.png out.png --op gaussian:sigma=2 --op sobel
  seamstream image in.jpg out.jpg --op warp:affine=[1,0.2,0,0,1,0],interpolation=bicubic
  seamstream image in.png out.png --op retarget:width=80%,height=90%,protect=mask.png")]
    Image {
        /// Input PNG or JPEG; without it, the built-in sample photograph.
        input: Option<PathBuf>,
        /// Output file; .png, .jpg or .jpeg.
        #[arg(default_value = "out.png")]
        output: PathBuf,
        #[arg(long = "op", value_name = "NAME[:k=v,...]", help = "An operation; repeatable (see below)", long_help = OP_HELP)]
        ops: Vec<String>,
        /// Where to run: auto (GPU if one works, else CPU), cpu, cuda or cuda:N.
        #[arg(long, default_value = "auto", value_name = "DEVICE")]
        device: String,
    },
    /// Run a video through the chain: GStreamer in, chain, GStreamer out.
    #[command(
        after_help = "Inputs: sample (the built-in clip: a pan and zoom across the bundled photo);
a file or URI; test:PATTERN (videotestsrc: smpte, ball, snow, ...);
camera:/dev/videoN; or a gst-launch source fragment.
Outputs: a file (.mp4 or .mkv: H.264 by default; .webm: VP9; .y4m: raw); display;
null; or a gst-launch sink fragment. Files are encoded at constant quality
(--crf), or at --bitrate; the input's audio is copied, or re-encoded when the
container cannot hold it (--no-audio drops it).
Files are never destroyed: the output is written to NAME.partial.EXT and
replaces NAME.EXT only when complete; an output that is the input is refused.
With no arguments: the sample clip through retarget:width=75% (16:9 to 4:3)
into out.mp4.
A pipeline file (--pipeline, see pipelines/) gives the input, output, device,
test-source settings and operations; what the command line gives wins.
Ctrl-C during a file job ends it cleanly: the output holds every frame so far.
Examples:
  seamstream run                                     # the sample clip, retargeted to 4:3 -> out.mp4
  seamstream run test:ball out.mp4 --frames 120 --op retarget:width=75%
  seamstream run clip.mp4 small.mkv --op gaussian:sigma=1.5
  seamstream run clip.mp4 out.webm --codec vp9 --crf 35 --op retarget:width=75%
  seamstream run clip.mp4 out.mp4 --codec h265 --preset fast --no-audio
  seamstream run camera:/dev/video0 display --op sobel
  seamstream run --pipeline pipelines/camera-edges.toml
  seamstream run --pipeline pipelines/document-binarize.toml -o bw.mkv --frames 30"
    )]
    Run {
        /// Input: sample, a file, URI, test:PATTERN, camera:/dev/videoN or a
        /// gst-launch fragment [default: the pipeline file's, else sample]
        input: Option<String>,
        /// Output: .mp4, .mkv or .y4m file, display, null, or a gst-launch
        /// fragment [default: the pipeline file's, else out.mp4]
        output: Option<String>,
        /// The output, as an option: with --pipeline it replaces the file's
        /// output and keeps its input.
        #[arg(
            short = 'o',
            long = "output",
            id = "output_flag",
            value_name = "OUTPUT"
        )]
        output_flag: Option<String>,
        /// The input, as an option: with --pipeline it replaces the file's
        /// input and keeps its output. As in ffmpeg, `-i IN OUT` works: a
        /// positional argument fills whichever of input and output is left.
        #[arg(short = 'i', long = "input", id = "input_flag", value_name = "INPUT")]
        input_flag: Option<String>,
        #[arg(long = "op", value_name = "NAME[:k=v,...]", help = "An operation; repeatable (see `seamstream image --help`)", long_help = OP_HELP)]
        ops: Vec<String>,
        /// A pipeline file (TOML): input, output, device, test-source settings
        /// and operations. Arguments given here win over it.
        #[arg(long, value_name = "FILE.toml")]
        pipeline: Option<PathBuf>,
        /// Frame size of test: sources and the sample clip [default: the
        /// pipeline file's, else 1280x720; the sample: 480x270]
        #[arg(long, value_name = "WxH")]
        size: Option<String>,
        /// Frame rate of test: sources and the sample clip: 30, 29.97,
        /// 12.5 or 30000/1001 [default: the pipeline file's, else 30]
        #[arg(long, value_name = "RATE")]
        fps: Option<String>,
        /// Frames from test: sources and still pictures (PNG, JPEG, …), 0 =
        /// until stopped [default: the pipeline file's, else 300; the
        /// sample: 90]
        #[arg(long)]
        frames: Option<u64>,
        /// Take the input as live (real time, frames dropped when we fall
        /// behind) and make test: sources real-time; inputs GStreamer
        /// reports live (RTSP, UDP, cameras, live fragments) are live
        /// without it.
        #[arg(long)]
        live: bool,
        /// Where to run: auto, cpu, cuda or cuda:N [default: the pipeline
        /// file's, else auto]
        #[arg(long, value_name = "DEVICE")]
        device: Option<String>,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
        /// Video codec of a file output: h264, h265, vp9 or av1 [default:
        /// vp9 for .webm, else h264]
        #[arg(long, value_name = "CODEC")]
        codec: Option<String>,
        /// Constant quality, on the codec's scale (lower is better): h264 and
        /// h265 0-51 [default 23, 28], vp9 and av1 0-63 [default 31, 30]
        #[arg(long, value_name = "N", conflicts_with = "bitrate")]
        crf: Option<u32>,
        /// An average bitrate in kbit/s instead of constant quality
        #[arg(long, value_name = "KBIT/S")]
        bitrate: Option<u32>,
        /// Encoder speed: ultrafast, superfast, veryfast, faster, fast,
        /// medium, slow, slower or veryslow [default: medium]
        #[arg(long, value_name = "PRESET")]
        preset: Option<String>,
        /// Leave the input's audio out of the output.
        #[arg(long)]
        no_audio: bool,
        /// Process only the K-th (from 0) of N equal parts of a video file,
        /// into a video-only part for `seamstream join` (e.g. 2/8).
        #[arg(long, value_name = "K/N")]
        segment: Option<String>,
        /// With --segment or --gpus: frames before a part that an operation
        /// with memory (fast retargeting) runs on first, their output
        /// dropped [default: 10 s of frames]
        #[arg(long, value_name = "FRAMES")]
        warmup: Option<u64>,
        /// Split the job over this many GPUs of this machine (or `all`),
        /// one worker process each, and join the parts into the output
        /// (or, with output `null`, drop them: the job's speed alone)
        #[arg(long, value_name = "N|all", conflicts_with = "segment")]
        gpus: Option<String>,
        /// Worker processes for a split job [default: one per GPU]; with
        /// --device cpu and no --gpus, the job is split over CPU workers
        #[arg(long, value_name = "M", conflicts_with = "segment")]
        workers: Option<u32>,
        /// Keep the parts of a split job (in OUT.parts/) after the join
        #[arg(long)]
        keep_parts: bool,
        /// With a reframe op: write its window, frame by frame, to this JSON
        /// file (for editors); if the file exists, replay it instead
        #[arg(long, value_name = "FILE.json")]
        reframe_path: Option<PathBuf>,
    },
    /// Join the parts of a split job (`run --segment K/N`) into one file,
    /// without re-encoding, with the source's audio.
    #[command(
        after_help = "The parts are laid end to end in the order given; each must come from the same
job (same options), and with --audio-from they must hold exactly the source's
frames. The audio is copied from the source once (re-encoded only where the
container cannot hold it). OUT is written beside itself and replaces an
existing file only when complete; the parts are left as they are.
Examples:
  seamstream run in.mp4 parts/part-0.mp4 --segment 0/3 --op gaussian:sigma=2   # and 1/3, 2/3
  seamstream join out.mp4 parts/part-0.mp4 parts/part-1.mp4 parts/part-2.mp4 --audio-from in.mp4"
    )]
    Join {
        /// The joined file: .mp4, .mkv or .webm
        output: PathBuf,
        /// The parts, in order
        #[arg(required = true, value_name = "PART")]
        parts: Vec<PathBuf>,
        /// The source the parts were cut from: its audio is muxed in, the
        /// parts must hold all its frames, and each goes where the job
        /// placed it on the source's timeline
        #[arg(long, value_name = "IN")]
        audio_from: Option<PathBuf>,
    },
    /// List every operation with its parameters and defaults.
    Ops,
    /// List the GPUs, with name, memory, compute capability, and whether
    /// NVRTC (which compiles the kernels) was found.
    Devices,
    /// Measure kernel times per operation, transfers, and the GPU stage.
    Bench(bench::cli::BenchArgs),
    /// Judge a retargeted clip against its original: similarity and flicker,
    /// each as a ratio to plain scaling.
    Quality(quality_cli::QualityArgs),
}

fn parse_device(text: &str) -> anyhow::Result<Device> {
    Device::parse(text).with_context(|| format!("`--device {text}`: expected {}", Device::EXPECTED))
}

/// The error as the command line says it: where running on the CPU would
/// avoid it (the library's errors leave that advice to each interface),
/// with `--device cpu` added, unless the message already gives a way out.
fn with_advice(e: &anyhow::Error) -> String {
    let text = format!("{e:#}");
    let cpu_runs_it = e
        .chain()
        .filter_map(|c| c.downcast_ref::<seamstream::Error>())
        .any(seamstream::Error::cpu_runs_it);
    if cpu_runs_it && !text.contains("--device cpu") {
        format!("{text}; use --device cpu")
    } else {
        text
    }
}

/// Why the GPU cannot be used, in a few words and without advice (the
/// caller gives that: a note that the CPU runs, or what to pass instead).
fn why_not_gpu(e: &seamstream::Error) -> String {
    match e.kind() {
        ErrorKind::NoDriver => "no NVIDIA driver: libcuda.so could not be loaded".into(),
        _ => e.to_string(),
    }
}

/// Resolves `--device`. `auto` takes the GPU when one works, and otherwise
/// says in one line why it runs on the CPU (every operation has both
/// halves); `cuda`/`cuda:N` is an error when that GPU cannot be used.
fn choose_backend(device: Device) -> anyhow::Result<Backend> {
    use seamstream::cuda::{Placed, place};
    match place(device, None) {
        Ok(Placed::Gpu(gpu)) => Ok(Backend::Cuda(gpu)),
        Ok(Placed::Cpu { why }) => {
            if let Some(e) = why {
                eprintln!("note: running on the CPU ({})", why_not_gpu(&e));
            }
            Ok(Backend::Cpu)
        }
        Err(e) => bail!(
            "`--device {device}`: {}; use --device cpu or auto",
            why_not_gpu(&e)
        ),
    }
}

fn spinner(message: String) -> indicatif::ProgressBar {
    let bar = indicatif::ProgressBar::new_spinner();
    bar.set_style(
        indicatif::ProgressStyle::with_template("{spinner} {msg} [{elapsed}]")
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    bar.set_message(message);
    bar.enable_steady_tick(Duration::from_millis(120));
    bar
}

fn run_image(
    input: Option<&Path>,
    output: &Path,
    op_texts: &[String],
    device: &str,
) -> anyhow::Result<()> {
    let device = parse_device(device)?;
    let mut op_texts = op_texts.to_vec();
    if op_texts.is_empty() {
        op_texts.push("retarget:width=75%".into());
        eprintln!("note: no --op given; using {}", op_texts[0]);
    }
    let mut chain = seamstream::registry::parse_chain(&op_texts)?;
    // Fail before the work, not after it.
    io::check_writable(output)?;
    let frame: Frame = match input {
        Some(path) => io::load_image(path)?,
        None => io::sample_image()?,
    };
    let (w, h) = (frame.width(), frame.height());
    let (ow, oh) = chain.output_size(w, h)?;
    let backend = choose_backend(device)?;
    let name = input.map_or("<built-in sample>".to_string(), |p| p.display().to_string());
    let start = Instant::now();
    let bar = spinner(format!(
        "{name} {w}x{h} -> {ow}x{oh}: {}",
        chain.names().join(" -> ")
    ));
    let result = match &backend {
        Backend::Cpu => chain.apply(frame).map_err(anyhow::Error::from),
        Backend::Cuda(gpu) => GpuChain::new(gpu, &chain, w, h, DevFormat::of(&frame))
            .and_then(|mut g| g.apply(gpu, &frame))
            .map_err(anyhow::Error::from),
    };
    bar.finish_and_clear();
    let out = result?;
    io::save_image(&out, output)
        .with_context(|| "the chain ran, but its result could not be saved")?;
    eprintln!(
        "wrote {} ({}x{}) in {:.2} s: {}",
        output.display(),
        out.width(),
        out.height(),
        start.elapsed().as_secs_f64(),
        chain.names().join(" -> ")
    );
    Ok(())
}

struct RunArgs<'a> {
    input: Option<&'a str>,
    output: Option<&'a str>,
    ops: &'a [String],
    pipeline: Option<&'a Path>,
    size: Option<&'a str>,
    fps: Option<&'a str>,
    frames: Option<u64>,
    live: bool,
    device: Option<&'a str>,
    json: bool,
    encoder: EncoderArgs<'a>,
    no_audio: bool,
    segment: Option<&'a str>,
    warmup: Option<u64>,
    reframe_path: Option<&'a Path>,
}

/// The encoder flags as given.
struct EncoderArgs<'a> {
    codec: Option<&'a str>,
    crf: Option<u32>,
    bitrate: Option<u32>,
    preset: Option<&'a str>,
}

/// The input a pipeline file names (the sample clip if none), or its
/// fallback when that is a camera that does not exist here; the fallback
/// runs live, as the camera would have.
fn file_input(
    file: &seamstream::pipeline::PipelineFile,
    live: &mut bool,
) -> anyhow::Result<seamstream::gst::Input> {
    use seamstream::gst::Input;
    let Some(input) = file.input()? else {
        return Ok(Input::Sample);
    };
    if input.check_available().is_ok() {
        return Ok(input);
    }
    let Some(fallback) = file.fallback_input()? else {
        return Ok(input);
    };
    eprintln!(
        "note: {input} does not exist here; using the live test source {fallback} instead (the fallback in {})",
        file.path.display()
    );
    *live = true;
    Ok(fallback)
}

/// The encoder and audio keys of a pipeline file.
#[derive(Default)]
struct FileEncoderKeys {
    codec: Option<String>,
    crf: Option<u32>,
    bitrate: Option<u32>,
    preset: Option<String>,
    audio: Option<bool>,
}

fn file_encoder_keys(file: Option<&seamstream::pipeline::PipelineFile>) -> FileEncoderKeys {
    file.map_or_else(FileEncoderKeys::default, |f| FileEncoderKeys {
        codec: f.codec.clone(),
        crf: f.crf,
        bitrate: f.bitrate,
        preset: f.preset.clone(),
        audio: f.audio,
    })
}

fn run_video(a: RunArgs) -> anyhow::Result<ExitCode> {
    use seamstream::gst::encode::{Codec, EncoderChoice};
    use seamstream::gst::outfile::Kept;
    use seamstream::gst::{Input, Output, TestSettings, run, sample};
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
    // The command line's, else the file's (parsed with it), else auto.
    let device = match a.device {
        Some(text) => parse_device(text)?,
        None => file.as_ref().and_then(|f| f.device).unwrap_or_default(),
    };
    let mut live = a.live || file.as_ref().is_some_and(|f| f.live == Some(true));
    let input = match (a.input, &file) {
        (Some(text), _) => Input::parse(text)?,
        (None, Some(f)) => file_input(f, &mut live)?,
        (None, None) => Input::Sample,
    };
    input.check_available()?;
    let is_sample = input == Input::Sample;
    let (default_size, default_frames) = if is_sample {
        (sample::DEFAULT_SIZE, sample::DEFAULT_FRAMES)
    } else {
        ((1280, 720), 300)
    };
    let (width, height) = match a.size {
        Some(text) => args::parse_size(text)?,
        None => file.as_ref().and_then(|f| f.size).unwrap_or(default_size),
    };
    let fps = match a.fps {
        Some(text) => args::parse_fps(text)?,
        None => file.as_ref().and_then(|f| f.fps).unwrap_or((30, 1)),
    };
    let frames = a
        .frames
        .or(file.as_ref().and_then(|f| f.frames))
        .unwrap_or(default_frames);
    let mut chain = match &mut file {
        Some(f) => std::mem::take(&mut f.chain),
        None if !a.ops.is_empty() => seamstream::registry::parse_chain_for(a.ops, Media::Video)?,
        None if is_sample => {
            let default = "retarget:width=75%";
            eprintln!("note: no --op given; using {default} (16:9 -> 4:3)");
            seamstream::registry::parse_chain_for(&[default], Media::Video)?
        }
        None => Chain::default(),
    };
    let output = match (a.output, &file) {
        (Some(text), _) => Output::parse(text)?,
        (None, Some(f)) => f.output()?.map_or_else(|| Output::parse("out.mp4"), Ok)?,
        (None, None) => Output::parse("out.mp4")?,
    };
    output.check_display()?;
    let keys = file_encoder_keys(file.as_ref());
    let encoder = EncoderChoice {
        codec: a
            .encoder
            .codec
            .map(str::to_string)
            .or(keys.codec)
            .as_deref()
            .map(Codec::parse)
            .transpose()?,
        crf: a.encoder.crf.or(keys.crf),
        bitrate: a.encoder.bitrate.or(keys.bitrate),
        preset: a.encoder.preset.map(str::to_string).or(keys.preset),
    };
    let audio = !a.no_audio && keys.audio.unwrap_or(true);
    let mut reframe = plan_reframe(&mut chain, &input, a.reframe_path, live)?;
    if a.warmup.is_some() && a.segment.is_none() {
        bail!("--warmup applies to a part of a split job: use it with --segment K/N or --gpus");
    }
    let mut span = a
        .segment
        .map(|text| plan_segment(text, &input, &output, a.warmup, &chain))
        .transpose()?;
    if let Some(span) = &mut span {
        // The job as `join` compares its parts: the chain and the encoder.
        span.tag.job = format!(
            "ops [{}]; pipeline {}; {:?}",
            a.ops.join(" "),
            a.pipeline
                .map_or("none".into(), |p| p.display().to_string()),
            encoder
        );
    }
    let backend = choose_backend(device)?;
    // The kernels are compiled (or read from the cache) before the source
    // starts, so that a live source loses no frames to it; the time is its
    // own line of the summary.
    let kernels = match &backend {
        Backend::Cuda(gpu) => {
            use std::sync::atomic::Ordering::Relaxed;
            let bar = spinner(
                "preparing the CUDA kernels (compiled on a first start, then cached)".into(),
            );
            let compiled = seamstream::cuda::module::COMPILES.load(Relaxed);
            let start = std::time::Instant::now();
            seamstream::cuda::stage::warm_up(gpu, &chain);
            bar.finish_and_clear();
            Some(Kernels {
                seconds: start.elapsed().as_secs_f64(),
                compiled: seamstream::cuda::module::COMPILES.load(Relaxed) - compiled,
            })
        }
        Backend::Cpu => None,
    };
    let test = TestSettings {
        width,
        height,
        fps,
        frames: (frames > 0).then_some(frames),
        live,
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
    };
    let s = run::run(&opts, chain, stop)?;
    if opts.span.is_some()
        && let Some(t0) = PROCESS_START.get()
    {
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

fn run_join(
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
fn run_split(
    a: &RunArgs,
    gpus: Option<&str>,
    workers: Option<u32>,
    keep_parts: bool,
) -> anyhow::Result<ExitCode> {
    let (Some(input), Some(output)) = (a.input, a.output) else {
        bail!("--gpus and --workers split a file: give the input file and the output file");
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
    fanout::run(fanout::Job {
        input: input.into(),
        output: output.into(),
        gpus: gpus.map(fanout::Gpus::parse).transpose()?,
        workers,
        forward,
        audio: !a.no_audio,
        keep_parts,
    })
}

/// Plans `--segment K/N` of a file input into a file output, and says in
/// one line which frames the part takes.
fn plan_segment(
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
    let warm = match span.warmup {
        0 => String::new(),
        n => format!(", after {n} warm-up frames"),
    };
    let start = match (span.range.start, span.at_cut, span.at_keyframe) {
        (0, _, _) => "",
        (_, true, _) => ", from a scene cut",
        (_, false, true) => ", from a keyframe",
        _ => "",
    };
    let cuts = match &span.cut_search {
        Some(c) => format!(
            "cuts looked for in {:.2} s: {} frames decoded by {}, the first after {:.2} s",
            c.time.as_secs_f64(),
            c.decoded,
            if c.decoder.is_empty() {
                "?"
            } else {
                &c.decoder
            },
            c.first_frame.as_secs_f64()
        ),
        None => "no cut search: the chain has no memory".into(),
    };
    eprintln!(
        "segment {text}: frames {}..{} of {}{start}{warm} (frames counted in {:.2} s, {cuts})",
        span.range.start,
        span.range.end,
        span.total,
        span.counting.as_secs_f64(),
    );
    Ok(span)
}

/// The CUDA kernels' preparation before a run: its time, and how many
/// kernel files NVRTC compiled (the others came from the cache).
struct Kernels {
    seconds: f64,
    compiled: usize,
}

/// The run's summary as one JSON object.
/// Plans the chain's reframe (if any) before the run, with a bar while a
/// file is analysed.
fn plan_reframe(
    chain: &mut seamstream::Chain,
    input: &seamstream::gst::Input,
    path_file: Option<&Path>,
    live: bool,
) -> anyhow::Result<Option<seamstream::gst::reframe::Planned>> {
    let bar = indicatif::ProgressBar::hidden();
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{spinner} planning the reframe: frame {pos} analysed [{elapsed}]",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_spinner()),
    );
    let mut shown = false;
    let planned = seamstream::gst::reframe::prepare(chain, input, path_file, live, |n| {
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

/// The summary's lines on a reframe: where its plan came from, and each
/// shot's fit and camera.
fn reframe_lines(r: &seamstream::gst::reframe::Planned) -> Vec<String> {
    use seamstream::gst::reframe::{Source, describe_shots};
    let how = match &r.source {
        Source::Planned { seconds } => format!(
            "reframe: {} frames analysed and planned ahead in {seconds:.1} s",
            r.frames
        ),
        Source::Replayed(p) => format!("reframe: replayed {}", p.display()),
        Source::Live => "reframe: planned live, frame by frame".into(),
    };
    let mut lines = vec![format!("{how}; {} shots:", r.shots.len())];
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

fn summary_json(
    s: &seamstream::gst::run::Summary,
    kernels: Option<&Kernels>,
    reframe: Option<&seamstream::gst::reframe::Planned>,
) -> String {
    use seamstream::gst::outfile::Kept;
    use serde_json::json;
    // Rounded as the text summary shows them (a NaN would be null).
    let round = |x: f64, places: i32| {
        let scale = 10f64.powi(places);
        (x * scale).round() / scale
    };
    let streams: Vec<serde_json::Value> = s
        .streams
        .iter()
        .map(|st| json!({"type": st.kind, "stream": st.what, "action": st.action}))
        .collect();
    let (output, partial) = match &s.kept {
        Some(Kept::Target(p)) => (Some(p.to_string_lossy()), false),
        Some(Kept::Partial(p)) => (Some(p.to_string_lossy()), true),
        _ => (None, false),
    };
    let reframe = reframe.map(|r| {
        use seamstream::gst::reframe::Source;
        let shots: Vec<serde_json::Value> = r
            .shots
            .iter()
            .map(|s| {
                json!({"first": s.first, "last": s.last,
                    "mode": s.fit.name(), "camera": s.camera.name()})
            })
            .collect();
        let (source, file) = match &r.source {
            Source::Planned { .. } => ("planned", r.written.as_ref()),
            Source::Replayed(p) => ("replayed", Some(p)),
            Source::Live => ("live", r.written.as_ref()),
        };
        json!({"plan": source, "path": file.map(|p| p.to_string_lossy()), "shots": shots})
    });
    json!({
        "frames_in": s.frames_in,
        "frames_out": s.frames_out,
        "dropped": s.dropped,
        "seconds": round(s.seconds, 3),
        "fps": round(s.fps(), 2),
        "ms_copy_in": round(s.ms_copy_in, 3),
        "ms_chain": round(s.ms_chain, 3),
        "ms_copy_out": round(s.ms_copy_out, 3),
        "memory_in": s.memory_in,
        "memory_out": s.memory_out,
        "size_in": [s.width_in, s.height_in],
        "size_out": [s.width_out, s.height_out],
        "interrupted": s.interrupted,
        "live": s.live,
        "output": output,
        "partial": partial,
        "kernel_seconds": kernels.map(|k| round(k.seconds, 3)),
        "kernels_compiled": kernels.map(|k| k.compiled),
        "streams": streams,
        "reframe": reframe,
    })
    .to_string()
}

fn list_ops() {
    use std::io::Write;
    let mut text = String::from(
        "Operations (write NAME:key=value,...; borders are zero, replicate or reflect101).\n\
         Each runs on the CPU and on an NVIDIA GPU (--device), with the same bytes.\n\n",
    );
    for entry in seamstream::registry::REGISTRY {
        text.push_str(&format!("{}\n", entry.spec.describe()));
    }
    // A closed pipe (`seamstream ops | head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

/// A tuning knob for experiments (`SEAMSTREAM_QUEUE`, `SEAMSTREAM_SLOTS`):
/// its value from the environment, else `default`.
fn tuning(name: &str, default: usize) -> usize {
    std::env::var(name)
        .ok()
        .and_then(|v| v.parse().ok())
        .filter(|&n| n > 0)
        .unwrap_or(default)
}

/// Places the positional file arguments of `run` in the slots that `-i` and
/// `-o` leave open, in order: `run IN OUT`, `run -i IN OUT` (ffmpeg's form) and
/// `run -o OUT IN` all mean the same.
fn place_files<'a>(
    positional: [Option<&'a str>; 2],
    input_flag: Option<&'a str>,
    output_flag: Option<&'a str>,
) -> anyhow::Result<(Option<&'a str>, Option<&'a str>)> {
    let mut slots = [input_flag, output_flag];
    for arg in positional.into_iter().flatten() {
        match slots.iter_mut().find(|slot| slot.is_none()) {
            Some(slot) => *slot = Some(arg),
            None => bail!(
                "{}: one file too many: the input is {} and the output {}; give each once, \
                 as a flag (-i, -o) or in place",
                seamstream::error::quoted(arg),
                seamstream::error::quoted(slots[0].unwrap_or_default()),
                seamstream::error::quoted(slots[1].unwrap_or_default()),
            ),
        }
    }
    Ok((slots[0], slots[1]))
}

/// When the process started: a split job's worker reports its own start
/// cost against it.
static PROCESS_START: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();

fn main() -> ExitCode {
    PROCESS_START.get_or_init(std::time::Instant::now);
    let cli = Cli::parse();
    let result = match &cli.command {
        Command::Image {
            input,
            output,
            ops,
            device,
        } => run_image(input.as_deref(), output, ops, device).map(|()| ExitCode::SUCCESS),
        Command::Run {
            input,
            input_flag,
            output,
            output_flag,
            ops,
            pipeline,
            size,
            fps,
            frames,
            live,
            device,
            json,
            codec,
            crf,
            bitrate,
            preset,
            no_audio,
            segment,
            warmup,
            gpus,
            workers,
            keep_parts,
            reframe_path,
        } => match place_files(
            [input.as_deref(), output.as_deref()],
            input_flag.as_deref(),
            output_flag.as_deref(),
        ) {
            // A usage error, as clap's own: exit 2.
            Err(e) => {
                eprintln!("error: {e:#}");
                return ExitCode::from(2);
            }
            Ok((input, output)) => {
                let a = RunArgs {
                    input,
                    output,
                    ops,
                    pipeline: pipeline.as_deref(),
                    size: size.as_deref(),
                    fps: fps.as_deref(),
                    frames: *frames,
                    live: *live,
                    device: device.as_deref(),
                    json: *json,
                    encoder: EncoderArgs {
                        codec: codec.as_deref(),
                        crf: *crf,
                        bitrate: *bitrate,
                        preset: preset.as_deref(),
                    },
                    no_audio: *no_audio,
                    segment: segment.as_deref(),
                    warmup: *warmup,
                    reframe_path: reframe_path.as_deref(),
                };
                if gpus.is_some() || workers.is_some() {
                    run_split(&a, gpus.as_deref(), *workers, *keep_parts)
                } else {
                    run_video(a)
                }
            }
        },
        Command::Join {
            output,
            parts,
            audio_from,
        } => run_join(output, parts, audio_from.as_deref()),
        Command::Ops => {
            list_ops();
            Ok(ExitCode::SUCCESS)
        }
        Command::Devices => bench::cli::devices(),
        Command::Bench(args) => bench::cli::run_bench(args),
        Command::Quality(args) => quality_cli::run_quality(args),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {}", with_advice(&e));
            ExitCode::FAILURE
        }
    }
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

    #[test]
    fn file_arguments_fill_the_slots_flags_leave_open() {
        let place = |pos: [Option<&'static str>; 2], i, o| place_files(pos, i, o).unwrap();
        assert_eq!(
            place([Some("a"), Some("b")], None, None),
            (Some("a"), Some("b"))
        );
        assert_eq!(
            place([Some("b"), None], Some("a"), None),
            (Some("a"), Some("b"))
        );
        assert_eq!(
            place([Some("a"), None], None, Some("b")),
            (Some("a"), Some("b"))
        );
        assert_eq!(place([None, None], Some("a"), None), (Some("a"), None));
        let e = place_files([Some("x"), None], Some("a"), Some("b")).unwrap_err();
        assert!(e.to_string().contains("`x`: one file too many"), "{e}");
    }

    #[test]
    fn the_cli_adds_the_cpu_as_the_way_out_where_it_is_one() {
        let limit = anyhow::Error::new(seamstream::Error::GpuLimit(
            "retarget on the GPU takes sides up to 8192 pixels".into(),
        ));
        assert_eq!(
            with_advice(&limit),
            "retarget on the GPU takes sides up to 8192 pixels; use --device cpu"
        );
        let wrapped = limit.context("the run failed");
        assert!(with_advice(&wrapped).ends_with("; use --device cpu"));
        let bad = anyhow::Error::new(seamstream::Error::BadFrame("odd".into()));
        assert_eq!(with_advice(&bad), "odd");
        // Said once where the message gives it already.
        let said = anyhow::anyhow!("`--device cuda:0`: no GPU; use --device cpu or auto");
        assert_eq!(
            with_advice(&said),
            "`--device cuda:0`: no GPU; use --device cpu or auto"
        );
    }

    #[test]
    fn device_names_parse_and_bad_ones_name_the_value() {
        assert_eq!(parse_device("cuda:1").unwrap(), Device::Cuda(1));
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
        let e = parse_device("gpu").unwrap_err().to_string();
        assert!(e.contains("gpu") && e.contains("cuda:N"), "{e}");
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
