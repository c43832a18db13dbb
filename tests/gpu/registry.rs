//! One GPU check for every registered operation: each op runs, on both
//! halves, on random frames of awkward sizes (gray and RGBA, three frames in
//! a row so that ops that keep state from frame to frame are followed), and
//! the GPU's bytes must equal the CPU's. Where the CPU half refuses a frame, the GPU half
//! must refuse it too. A new op is covered by registering it.
//!
//! Skipped without a GPU; `SEAMSTREAM_REQUIRE_GPU=1` makes that a failure.

use crate::common::{assert_close, gpu};
use seamstream::cuda::gpu_half;
use seamstream::cuda::halves::HALVES;
use seamstream::cuda::{DevFormat, DevFrame, Gpu, GpuOp};
use seamstream::error::Result;
use seamstream::frame::Frame;
use seamstream::noise::Noise;
use seamstream::registry::parse_op;

/// Sizes that catch edge handling: a single pixel, odd and prime sides,
/// shapes narrower than a warp or taller than wide, and a frame of several
/// thread blocks that is a multiple of nothing.
const SIZES: [(usize, usize); 6] = [(1, 1), (2, 3), (17, 3), (3, 17), (321, 241), (640, 361)];

/// Frames in a row, through one instance of each half.
const FRAMES: usize = 3;

/// Runs `op` on the GPU over `frames`, each output first filled with a
/// byte that differs from frame to frame, so that a pixel the kernel never
/// writes shows as a difference from the CPU.
fn run_gpu(gpu: &Gpu, op: &dyn GpuOp, frames: &[Frame]) -> Result<Vec<Frame>> {
    let (w, h, format) = (
        frames[0].width(),
        frames[0].height(),
        DevFormat::of(&frames[0]),
    );
    let (ow, oh, of) = op.output(w, h, format)?;
    let mut op = op.prepare(gpu, w, h, format)?;
    frames
        .iter()
        .enumerate()
        .map(|(k, frame)| {
            let input = DevFrame::upload(gpu, frame)?;
            let mut out = DevFrame::alloc(gpu, ow, oh, of)?;
            out.fill(gpu, 0xA5 ^ (k as u8).wrapping_mul(0x3D))?;
            op.run(gpu, &input, &mut out)?;
            out.download(gpu)
        })
        .collect()
}

fn check(gpu: &Gpu, text: &str, seed: u64) {
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for gray in [false, true] {
            let what = format!("`{text}` on {} {w}x{h}", if gray { "gray" } else { "RGBA" });
            let mut noise = Noise::new(seed + 2 * i as u64 + gray as u64);
            let frames: Vec<Frame> = (0..FRAMES).map(|_| noise.frame(w, h, gray)).collect();
            let mut cpu = parse_op(text).unwrap_or_else(|e| panic!("{what}: {e}"));
            let half = gpu_half(cpu.as_ref()).unwrap_or_else(|e| panic!("{what}: {e}"));
            let on_cpu: Result<Vec<Frame>> = frames.iter().map(|f| cpu.apply(f)).collect();
            let on_gpu = run_gpu(gpu, half.as_ref(), &frames);
            match (on_cpu, on_gpu) {
                (Ok(c), Ok(g)) => {
                    for (k, (g, c)) in g.iter().zip(&c).enumerate() {
                        assert_close(g, c, 0, &format!("{what}, frame {k}"));
                    }
                }
                (Err(_), Err(_)) => {}
                (Ok(_), Err(e)) => panic!("{what}: the CPU takes it, the GPU refuses: {e}"),
                (Err(e), Ok(_)) => panic!("{what}: the GPU takes it, the CPU refuses: {e}"),
            }
        }
    }
}

#[test]
fn every_gpu_half_equals_its_cpu_half_on_awkward_sizes() {
    let Some(gpu) = gpu() else { return };
    let mut checked = 0;
    for (n, half) in HALVES.iter().enumerate() {
        for (c, text) in std::iter::once(&half.spec.example)
            .chain(half.cases)
            .enumerate()
        {
            check(&gpu, text, 1000 * n as u64 + 100 * c as u64);
            checked += 1;
        }
    }
    assert!(checked >= HALVES.len(), "only {checked} settings checked");
}
