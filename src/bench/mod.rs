//! `seamstream bench`: kernel times per operation, transfer rates, and the
//! GPU stage's throughput with and without overlap.
//!
//! Kernel times are CUDA events around each run on the compute stream, after
//! warm-up, as the median (and 10th/90th percentiles) of many runs. Inputs
//! are random frames. Without a GPU the same operations are timed on the CPU
//! with the wall clock, so the table still means something there.
//!
//! Part of the binary, not of the library: `cli` reads the subcommand's
//! arguments and prints the tables, `retarget` times seam carving.

pub mod cli;
pub mod reframe;
pub mod retarget;

use std::time::Instant;

use seamstream::cuda::Gpu;
#[cfg(feature = "cuda")]
use seamstream::cuda::stage::{Finished, GpuChain, Stage};
#[cfg(feature = "cuda")]
use seamstream::cuda::timing::time_gpu;
#[cfg(feature = "cuda")]
use seamstream::cuda::{DevFrame, cuda_err};
use seamstream::error::Result;
use seamstream::frame::{DevFormat, Frame};
use seamstream::noise::Noise;
// What only the GPU's timings use.
#[cfg(feature = "cuda")]
use {
    seamstream::error::Error,
    seamstream::frame::PixelFormat,
    seamstream::planes::{read_packed, write_packed},
    std::cell::Cell,
};

/// One operation case: a label, the chain text, and the input format.
#[derive(Clone, Debug)]
pub struct Case {
    pub label: &'static str,
    pub op: &'static str,
    pub format: DevFormat,
}

const fn case(label: &'static str, op: &'static str, format: DevFormat) -> Case {
    Case { label, op, format }
}

/// The cases docs/DESIGN.md §5 sets targets for, then the other operations.
pub static CASES: &[Case] = &[
    case(
        "gaussian 17 taps RGBA",
        "gaussian:sigma=2.5",
        DevFormat::Rgba,
    ),
    case(
        "gaussian 17 taps gray",
        "gaussian:sigma=2.5",
        DevFormat::Gray,
    ),
    case("box r=8 gray", "box:radius=8", DevFormat::Gray),
    case(
        "warp affine bilinear RGBA",
        "warp:affine=[0.96,-0.17,40,0.17,0.96,-60]",
        DevFormat::Rgba,
    ),
    case(
        "warp perspective bilinear RGBA",
        "warp:perspective=[0.9,-0.1,30,0.05,0.95,-20,0.00002,0.00001,1]",
        DevFormat::Rgba,
    ),
    case("threshold gray", "threshold:t=128", DevFormat::Gray),
    case("integral u32 gray", "@integral", DevFormat::Gray),
    case(
        "integral u32 + squared gray",
        "@integral+sq",
        DevFormat::Gray,
    ),
    case("RGBA to gray", "gray", DevFormat::Rgba),
    case("threshold otsu gray", "threshold:t=otsu", DevFormat::Gray),
    case("threshold RGBA", "threshold:t=128", DevFormat::Rgba),
    case("box r=8 RGBA", "box:radius=8", DevFormat::Rgba),
    case("sobel 3 gray", "sobel", DevFormat::Gray),
    case("sobel 5 RGBA", "sobel:ksize=5", DevFormat::Rgba),
    case(
        "convolve 5x5 RGBA",
        "convolve:kernel=[1,2,3,2,1,2,4,6,4,2,3,6,9,6,3,2,4,6,4,2,1,2,3,2,1]",
        DevFormat::Rgba,
    ),
    case(
        "adaptive sauvola w=31 gray",
        "adaptive:method=sauvola,window=31",
        DevFormat::Gray,
    ),
    case("equalize gray", "equalize", DevFormat::Gray),
    case("equalize RGBA", "equalize", DevFormat::Rgba),
    case("yuv round trip RGBA", "yuv", DevFormat::Rgba),
    case("segment RGBA", "segment", DevFormat::Rgba),
    case("segment gray", "segment", DevFormat::Gray),
];

/// docs/DESIGN.md §5's targets in µs at (1080p, 4K), by case label (the
/// GPU's).
#[cfg(feature = "cuda")]
pub fn target_us(label: &str) -> Option<(f64, f64)> {
    Some(match label {
        "gaussian 17 taps RGBA" => (20.0, 60.0),
        "gaussian 17 taps gray" => (10.0, 30.0),
        "box r=8 gray" => (10.0, 30.0),
        "warp affine bilinear RGBA" | "warp perspective bilinear RGBA" => (12.0, 40.0),
        "threshold gray" => (5.0, 8.0),
        "integral u32 gray" => (20.0, 50.0),
        "integral u32 + squared gray" => (30.0, 80.0),
        "RGBA to gray" => (6.0, 15.0),
        _ => return None,
    })
}

/// Timing of one case at one size.
#[derive(Clone, Debug)]
pub struct OpTime {
    pub label: String,
    pub width: usize,
    pub height: usize,
    pub p10_us: f64,
    pub median_us: f64,
    pub p90_us: f64,
    pub target_us: Option<f64>,
}

/// Host↔device copy rates from pinned memory.
#[derive(Clone, Debug)]
pub struct TransferTime {
    pub width: usize,
    pub height: usize,
    pub bytes: usize,
    pub up_us: f64,
    pub down_us: f64,
}

impl TransferTime {
    pub fn up_gbs(&self) -> f64 {
        self.bytes as f64 / self.up_us / 1e3
    }
    pub fn down_gbs(&self) -> f64 {
        self.bytes as f64 / self.down_us / 1e3
    }
}

/// The stage's throughput on an in-memory source.
#[derive(Clone, Debug)]
pub struct StageTime {
    pub chain: String,
    pub width: usize,
    pub height: usize,
    pub frames: usize,
    pub slots: usize,
    pub pipelined_ms: f64,
    pub serial_ms: f64,
    pub upload_ms: f64,
    pub chain_ms: f64,
    pub download_ms: f64,
    /// Host copies into and out of the pinned slots, per frame.
    pub host_copy_ms: f64,
}

impl StageTime {
    /// Pipelined time per frame ÷ the largest of upload, chain and download.
    pub fn overlap_ratio(&self) -> f64 {
        self.pipelined_ms / self.upload_ms.max(self.chain_ms).max(self.download_ms)
    }
}

/// A random frame (seeded, so every run times the same pixels).
pub fn random_frame(w: usize, h: usize, format: DevFormat, seed: u64) -> Frame {
    Noise::new(seed).frame(w, h, format == DevFormat::Gray)
}

/// Each frame of `frames` through `chain` in order, timed from its start to
/// its end in milliseconds: on `gpu` (every input uploaded first, the GPU
/// synchronised around each run) or on the CPU.
pub fn frame_times(
    gpu: Option<&Gpu>,
    chain: &mut seamstream::Chain,
    frames: &[Frame],
) -> Result<Vec<f64>> {
    if frames.is_empty() {
        return Ok(Vec::new());
    }
    let mut times = Vec::with_capacity(frames.len());
    match gpu {
        #[cfg(not(feature = "cuda"))]
        Some(gpu) => match *gpu {},
        #[cfg(feature = "cuda")]
        Some(gpu) => {
            let (w, h) = (frames[0].width(), frames[0].height());
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
                let input = f.clone();
                let start = Instant::now();
                std::hint::black_box(chain.apply(input)?);
                times.push(start.elapsed().as_secs_f64() * 1e3);
            }
        }
    }
    Ok(times)
}

pub fn percentile(sorted: &[f64], p: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let i = ((sorted.len() - 1) as f64 * p).round() as usize;
    sorted[i]
}

/// Input/output sets the runs of a timed batch rotate over (run `i` on set
/// `i % SETS`, see [`time_gpu`]), so that at 1080p the data do not all sit
/// in the 50 MB L2 from one run to the next.
pub const SETS: usize = 4;

#[cfg(feature = "cuda")]
/// Times one case on the GPU at `w`×`h`.
pub fn time_case_gpu(gpu: &Gpu, c: &Case, w: usize, h: usize, runs: usize) -> Result<OpTime> {
    let inputs = (0..SETS)
        .map(|i| DevFrame::upload(gpu, &random_frame(w, h, c.format, 7 + i as u64)))
        .collect::<Result<Vec<_>>>()?;
    let times = if let Some(kind) = c.op.strip_prefix('@') {
        integral_tables_gpu(gpu, &inputs, kind.ends_with("+sq"), runs)?
    } else {
        let chain = seamstream::registry::parse_chain(&[c.op])?;
        let mut g = GpuChain::new(gpu, &chain, w, h, c.format)?;
        let mut outs = (0..SETS)
            .map(|_| g.alloc_outputs(gpu))
            .collect::<Result<Vec<_>>>()?;
        time_gpu(gpu, 20, runs, |i| {
            g.run(gpu, &inputs[i % SETS], &mut outs[i % SETS])
        })?
    };
    let target = target_us(c.label).map(|t| if w * h > 1920 * 1088 { t.1 } else { t.0 });
    Ok(OpTime {
        label: c.label.into(),
        width: w,
        height: h,
        p10_us: percentile(&times, 0.1),
        median_us: percentile(&times, 0.5),
        p90_us: percentile(&times, 0.9),
        target_us: target,
    })
}

#[cfg(feature = "cuda")]
/// Times the integral tables alone (not the op's view of them).
fn integral_tables_gpu(
    gpu: &Gpu,
    inputs: &[DevFrame],
    squared: bool,
    runs: usize,
) -> Result<Vec<f64>> {
    use seamstream::cuda::ops::integral::{IntegralTables, table_len};
    let (w, h) = (inputs[0].width, inputs[0].height);
    let mut tables = IntegralTables::new(gpu, w, h, squared)?;
    let n = table_len(w, h);
    let mut sums = Vec::new();
    let mut squares = Vec::new();
    for _ in 0..SETS {
        sums.push(
            gpu.stream()
                .alloc_zeros::<u32>(n)
                .map_err(|e| cuda_err("allocating a sum table", e))?,
        );
        if squared {
            squares.push(
                gpu.stream()
                    .alloc_zeros::<u64>(n)
                    .map_err(|e| cuda_err("allocating a squared table", e))?,
            );
        }
    }
    time_gpu(gpu, 20, runs, |i| {
        let k = i % SETS;
        tables.compute(gpu, &inputs[k], &mut sums[k], squares.get_mut(k))
    })
}

/// Times one case on the CPU at `w`×`h` (wall clock).
pub fn time_case_cpu(c: &Case, w: usize, h: usize, runs: usize) -> Result<OpTime> {
    let frame = random_frame(w, h, c.format, 7);
    let mut times = Vec::with_capacity(runs);
    let mut chain = if c.op.starts_with('@') {
        None
    } else {
        Some(seamstream::registry::parse_chain(&[c.op])?)
    };
    let mut run = || -> Result<f64> {
        let input = frame.clone();
        let start = Instant::now();
        match &mut chain {
            Some(chain) => {
                std::hint::black_box(chain.apply(input)?);
            }
            None => {
                let luma = input.luma();
                if c.op.ends_with("+sq") {
                    std::hint::black_box(seamstream::ops::integral::integrals(&luma));
                } else {
                    std::hint::black_box(seamstream::ops::integral::integral(&luma));
                }
            }
        }
        Ok(start.elapsed().as_secs_f64() * 1e6)
    };
    run()?;
    for _ in 0..runs {
        times.push(run()?);
    }
    times.sort_by(f64::total_cmp);
    Ok(OpTime {
        label: c.label.into(),
        width: w,
        height: h,
        p10_us: percentile(&times, 0.1),
        median_us: percentile(&times, 0.5),
        p90_us: percentile(&times, 0.9),
        target_us: None,
    })
}

#[cfg(feature = "cuda")]
/// Upload and download of an RGBA frame from pinned memory, with events.
pub fn time_transfers(gpu: &Gpu, w: usize, h: usize, runs: usize) -> Result<TransferTime> {
    let bytes = w * h * 4;
    let ctx = gpu.ctx();
    // SAFETY: the pinned buffer is only copied to and from, never read as
    // values before a copy fills it.
    let mut host = unsafe { ctx.alloc_pinned_with_flags::<u8>(bytes, 0) }
        .map_err(|e| cuda_err("allocating pinned memory", e))?;
    let mut dev = DevFrame::alloc(gpu, w, h, DevFormat::Rgba)?;
    let stream = gpu.stream().clone();
    let up = time_gpu(gpu, 5, runs, |_| {
        stream
            .memcpy_htod(&host, &mut dev.data)
            .map_err(|e| cuda_err("uploading", e))
    })?;
    let down = time_gpu(gpu, 5, runs, |_| {
        stream
            .memcpy_dtoh(&dev.data, &mut host)
            .map_err(|e| cuda_err("downloading", e))
    })?;
    Ok(TransferTime {
        width: w,
        height: h,
        bytes,
        up_us: percentile(&up, 0.5),
        down_us: percentile(&down, 0.5),
    })
}

#[cfg(feature = "cuda")]
/// Pushes `frames` in-memory frames through a ring of `slots`, pipelined and
/// then serial, and times the parts.
pub fn time_stage(
    gpu: &Gpu,
    ops: &[String],
    w: usize,
    h: usize,
    frames: usize,
    slots: usize,
) -> Result<StageTime> {
    let chain = seamstream::registry::parse_chain(ops)?;
    let sources: Vec<Frame> = (0..4)
        .map(|i| random_frame(w, h, DevFormat::Rgba, i + 1))
        .collect();
    let wall = |serial: bool| -> Result<f64> {
        let mut stage: Stage<usize> = Stage::new(gpu, &chain, w, h, DevFormat::Rgba, slots)?;
        // The outputs stay in the slots' pinned buffers (a consumer reading
        // them in place): only their count matters.
        let taken = Cell::new(0);
        let mut count = |_: Finished<'_>, _| {
            taken.set(taken.get() + 1);
            Ok(())
        };
        // The source's frames are in pinned memory already (a decoder
        // writing into the slots): each slot is written once, here; the host
        // copy is timed on its own below.
        for i in 0..stage.slots() {
            let fill = |host: &mut [u8]| {
                write_packed(&sources[0], host);
                Ok(())
            };
            stage.push((w, h, PixelFormat::Rgba8), i, fill, &mut count)?;
        }
        stage.finish(&mut count)?;
        // Then frames go in from the pinned input as it stands; serial ones
        // run to the end before the next starts (no overlap).
        let as_it_stands = |_: &mut [u8]| Ok(());
        // Warm-up: the first frames load kernels.
        for i in 0..slots * 2 {
            stage.push((w, h, PixelFormat::Rgba8), i, as_it_stands, &mut count)?;
            if serial {
                stage.finish(&mut count)?;
            }
        }
        stage.finish(&mut count)?;
        taken.set(0);
        let start = Instant::now();
        for i in 0..frames {
            stage.push((w, h, PixelFormat::Rgba8), i, as_it_stands, &mut count)?;
            if serial {
                stage.finish(&mut count)?;
            }
        }
        stage.finish(&mut count)?;
        let out = taken.get();
        if out != frames {
            return Err(Error::Device(format!(
                "the stage gave {out} frames for {frames}"
            )));
        }
        Ok(start.elapsed().as_secs_f64() * 1e3 / frames as f64)
    };
    let pipelined_ms = wall(false)?;
    let serial_ms = wall(true)?;
    let t = time_transfers(gpu, w, h, 50)?;
    let input = DevFrame::upload(gpu, &sources[0])?;
    let mut g = GpuChain::new(gpu, &chain, w, h, DevFormat::Rgba)?;
    let mut outs = g.alloc_outputs(gpu)?;
    let chain_times = time_gpu(gpu, 5, 50, |_| g.run(gpu, &input, &mut outs))?;
    let (ow, oh, of) = g.output();
    let down_ms = t.down_us / 1e3 * (ow * oh * of.bytes_per_pixel()) as f64 / t.bytes as f64;
    // The host copies into and out of the pinned slots, on the CPU.
    let mut pinned = vec![0u8; w * h * 4];
    let start = Instant::now();
    for i in 0..20 {
        write_packed(&sources[i % 4], &mut pinned);
        std::hint::black_box(read_packed(&pinned, w, h, PixelFormat::Rgba8)?);
    }
    let host_copy_ms = start.elapsed().as_secs_f64() * 1e3 / 20.0;
    Ok(StageTime {
        chain: if ops.is_empty() {
            "(empty)".into()
        } else {
            ops.join(" ")
        },
        width: w,
        height: h,
        frames,
        slots,
        pipelined_ms,
        serial_ms,
        upload_ms: t.up_us / 1e3,
        chain_ms: percentile(&chain_times, 0.5) / 1e3,
        download_ms: down_ms,
        host_copy_ms,
    })
}
