//! The `seamstream` command line.

use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use clap::{Parser, Subcommand};

use seamstream::ops::{self, Chain};
use seamstream::{Frame, io};

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
        after_help = "Inputs: a file or URI; test:PATTERN (videotestsrc: smpte, ball, snow, ...);
camera:/dev/videoN; or a gst-launch source fragment.
Outputs: a file (.mp4 and .mkv with x264, .y4m raw); display; null; or a
gst-launch sink fragment.
Ctrl-C during a file job ends it cleanly: the output holds every frame so far.
Examples:
  seamstream run test:ball out.mp4 --frames 120 --op retarget:width=75%
  seamstream run clip.mp4 small.mkv --op gaussian:sigma=1.5
  seamstream run camera:/dev/video0 display --op sobel"
    )]
    Run {
        /// Input: file, URI, test:PATTERN, camera:/dev/videoN or a gst-launch fragment.
        #[arg(default_value = "test:ball")]
        input: String,
        /// Output: .mp4, .mkv or .y4m file, display, null, or a gst-launch fragment.
        #[arg(default_value = "out.mp4")]
        output: String,
        #[arg(long = "op", value_name = "NAME[:k=v,...]", help = "An operation; repeatable (see `seamstream image --help`)", long_help = OP_HELP)]
        ops: Vec<String>,
        /// Frame size of test: sources.
        #[arg(long, default_value = "1280x720", value_name = "WxH")]
        size: String,
        /// Frame rate of test: sources.
        #[arg(long, default_value_t = 30)]
        fps: i32,
        /// Frames from test: sources (0 = until stopped).
        #[arg(long, default_value_t = 300)]
        frames: u64,
        /// Make test: sources live (real time, frames dropped when we fall behind).
        #[arg(long)]
        live: bool,
        /// Where to run: auto, cpu, cuda or cuda:N.
        #[arg(long, default_value = "auto", value_name = "DEVICE")]
        device: String,
        /// Print the summary as JSON.
        #[arg(long)]
        json: bool,
    },
    /// List every operation with its parameters and defaults.
    Ops,
}

/// The backend a `--device` value selects.
#[derive(Debug, PartialEq)]
enum Device {
    Cpu,
    Auto,
    Cuda(usize),
}

fn parse_device(text: &str) -> anyhow::Result<Device> {
    match text {
        "cpu" => Ok(Device::Cpu),
        "auto" => Ok(Device::Auto),
        "cuda" => Ok(Device::Cuda(0)),
        _ => {
            if let Some(n) = text.strip_prefix("cuda:")
                && let Ok(n) = n.parse()
            {
                return Ok(Device::Cuda(n));
            }
            bail!("`--device {text}`: expected auto, cpu, cuda or cuda:N (N a GPU index)")
        }
    }
}

/// Resolves the device to the CPU backend, the only one built so far.
fn choose_backend(device: Device) -> anyhow::Result<()> {
    match device {
        Device::Cpu => Ok(()),
        Device::Auto => {
            eprintln!("note: the CUDA backend is not built yet; running on the CPU");
            Ok(())
        }
        Device::Cuda(n) => bail!(
            "`--device cuda{}`: the CUDA backend is not built yet; use --device cpu or auto",
            if n == 0 {
                String::new()
            } else {
                format!(":{n}")
            }
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
    let mut chain = Chain::parse(&op_texts)?;
    // Fail before the work, not after it.
    io::check_writable(output)?;
    let frame: Frame = match input {
        Some(path) => io::load_image(path)?,
        None => io::sample_image()?,
    };
    let (w, h) = (frame.width(), frame.height());
    let (ow, oh) = chain.output_size(w, h)?;
    choose_backend(device)?;
    let name = input.map_or("<built-in sample>".to_string(), |p| p.display().to_string());
    let start = Instant::now();
    let bar = spinner(format!(
        "{name} {w}x{h} -> {ow}x{oh}: {}",
        chain.names().join(" -> ")
    ));
    let result = chain.apply(frame);
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

fn parse_size(text: &str) -> anyhow::Result<(usize, usize)> {
    let bad = || {
        anyhow::anyhow!(
            "`--size {text}`: expected WIDTHxHEIGHT in pixels, each from 1 to 16384, e.g. 1920x1080"
        )
    };
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (usize, usize) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(1..=16384).contains(&w) || !(1..=16384).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

struct RunArgs<'a> {
    input: &'a str,
    output: &'a str,
    ops: &'a [String],
    size: &'a str,
    fps: i32,
    frames: u64,
    live: bool,
    device: &'a str,
    json: bool,
}

fn run_video(a: RunArgs) -> anyhow::Result<ExitCode> {
    use seamstream::gst::{Input, Output, TestSettings, run};
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, Ordering};

    let device = parse_device(a.device)?;
    let (width, height) = parse_size(a.size)?;
    if !(1..=1000).contains(&a.fps) {
        bail!("`--fps {}`: expected a frame rate from 1 to 1000", a.fps);
    }
    let chain = Chain::parse(a.ops)?;
    let input = Input::parse(a.input)?;
    let output = Output::parse(a.output)?;
    output.check_writable()?;
    choose_backend(device)?;
    let test = TestSettings {
        width,
        height,
        fps: (a.fps, 1),
        frames: (a.frames > 0).then_some(a.frames),
        live: a.live,
    };
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        // Ctrl-C or SIGTERM asks for EOS; the output is then finalised. A
        // second one, while that is under way, ends the process at once.
        ctrlc::set_handler(move || {
            if stop.swap(true, Ordering::Relaxed) {
                std::process::exit(130);
            }
        })
        .context("cannot install the Ctrl-C handler")?;
    }
    let opts = run::RunOptions {
        input,
        output,
        test,
        queue: 2,
    };
    let s = run::run(&opts, chain, stop)?;
    if a.json {
        println!(
            "{{\"frames_in\":{},\"frames_out\":{},\"dropped\":{},\"seconds\":{:.3},\"fps\":{:.2},\"ms_copy_in\":{:.3},\"ms_chain\":{:.3},\"ms_copy_out\":{:.3},\"size_in\":[{},{}],\"size_out\":[{},{}],\"interrupted\":{}}}",
            s.frames_in,
            s.frames_out,
            s.dropped,
            s.seconds,
            s.fps(),
            s.ms_copy_in,
            s.ms_chain,
            s.ms_copy_out,
            s.width_in,
            s.height_in,
            s.width_out,
            s.height_out,
            s.interrupted
        );
    } else {
        eprintln!(
            "{} frames in, {} out, {} dropped, {:.1} fps; {}x{} -> {}x{}; ms a frame: copy in {:.2}, chain {:.2}, copy out {:.2}{}",
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
            if s.interrupted {
                "; interrupted: the output holds every frame so far"
            } else {
                ""
            }
        );
    }
    // 130: the shell's code for a job ended by SIGINT.
    Ok(if s.interrupted {
        ExitCode::from(130)
    } else {
        ExitCode::SUCCESS
    })
}

fn list_ops() {
    use std::io::Write;
    let mut text = String::from(
        "Operations (write NAME:key=value,...; borders are zero, replicate or reflect101):\n\n",
    );
    for entry in ops::REGISTRY {
        text.push_str(&entry.spec.describe());
        text.push('\n');
    }
    // A closed pipe (`seamstream ops | head`) is not an error worth a message.
    let _ = std::io::stdout().lock().write_all(text.as_bytes());
}

fn main() -> ExitCode {
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
            output,
            ops,
            size,
            fps,
            frames,
            live,
            device,
            json,
        } => run_video(RunArgs {
            input,
            output,
            ops,
            size,
            fps: *fps,
            frames: *frames,
            live: *live,
            device,
            json: *json,
        }),
        Command::Ops => {
            list_ops();
            Ok(ExitCode::SUCCESS)
        }
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("error: {e:#}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn device_names_parse_and_bad_ones_name_the_value() {
        assert_eq!(parse_device("cuda:1").unwrap(), Device::Cuda(1));
        assert_eq!(parse_device("cpu").unwrap(), Device::Cpu);
        let e = parse_device("gpu").unwrap_err().to_string();
        assert!(e.contains("gpu") && e.contains("cuda:N"), "{e}");
    }

    #[test]
    fn cuda_is_a_clear_not_built_error() {
        let e = choose_backend(Device::Cuda(0)).unwrap_err().to_string();
        assert!(e.contains("not built yet"), "{e}");
    }

    #[test]
    fn cli_definition_is_consistent() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
