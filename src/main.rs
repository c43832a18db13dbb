//! The `seamstream` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

mod bench;
mod fanout;
mod quality_cli;
mod run_cli;

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};
use seamstream::error::ErrorKind;

use seamstream::gst::run::Backend;
use seamstream::{Device, Frame, io};

use run_cli::{EncoderArgs, RunArgs, run_join, run_split, run_video};

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
        /// sample: 90]; from a file, a stream or a camera, the most frames
        /// to take, as ffmpeg's -frames:v (the audio ends with them)
        /// [default: all]
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

use seamstream::gst::run::report::rounded;

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
    let (backend, note) = place_backend(device)?;
    if let Some(note) = note {
        eprintln!("{note}");
    }
    Ok(backend)
}

/// [`choose_backend`] with its notice given back instead of printed, for a
/// caller that starts CUDA on a thread of its own.
fn place_backend(device: Device) -> anyhow::Result<(Backend, Option<String>)> {
    use seamstream::cuda::{Placed, place};
    match place(device, None) {
        Ok(Placed::Gpu(gpu)) => Ok((Backend::Cuda(gpu), None)),
        Ok(Placed::Cpu { why }) => Ok((
            Backend::Cpu,
            why.map(|e| format!("note: running on the CPU ({})", why_not_gpu(&e))),
        )),
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
    // One picture: nothing comes after it to look ahead to.
    chain.hold_none()?;
    // Fail before the work, not after it.
    io::check_writable(output)?;
    let frame: Frame = match input {
        Some(path) => io::load_image(path)?,
        None => io::sample_image()?,
    };
    let (w, h) = (frame.width(), frame.height());
    let (ow, oh) = chain.output_size(w, h)?;
    // A reframe says what it chose.
    let reframed = seamstream::gst::reframe::record_still(&mut chain);
    let backend = choose_backend(device)?;
    let name = input.map_or("<built-in sample>".to_string(), |p| p.display().to_string());
    let start = Instant::now();
    let bar = spinner(format!(
        "{name} {w}x{h} -> {ow}x{oh}: {}",
        chain.names().join(" -> ")
    ));
    let result = match &backend {
        Backend::Cpu => chain.apply(frame).map_err(anyhow::Error::from),
        #[cfg(feature = "cuda")]
        Backend::Cuda(gpu) => seamstream::cuda::stage::GpuChain::new(
            gpu,
            &chain,
            w,
            h,
            seamstream::frame::DevFormat::of(&frame),
        )
        .and_then(|mut g| g.apply(gpu, &frame))
        .map_err(anyhow::Error::from),
        #[cfg(not(feature = "cuda"))]
        Backend::Cuda(gpu) => match *gpu {},
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
    if let Some(line) = reframed
        .as_deref()
        .and_then(seamstream::gst::reframe::describe_still)
    {
        eprintln!("  {line}");
    }
    Ok(())
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

fn main() -> ExitCode {
    // The process's start, which a split job's worker reports its own
    // start cost against (and the trace times its steps from).
    seamstream::trace::start();
    seamstream::trace::mark("process started");
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
    seamstream::trace::mark("returning from main");
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
