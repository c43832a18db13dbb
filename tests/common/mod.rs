//! Shared by the tests: for the GPU ones, the GPU (or a visible skip),
//! random frames, running one op on both backends, and comparisons; for the
//! end-to-end ones, [`video`]; where the data files are, [`data`].
#![allow(dead_code)]

pub mod data;
pub mod video;

#[cfg(feature = "cuda")]
use seamstream::cuda::{DevFrame, Gpu, gpu_half};
use seamstream::frame::{DevFormat, Frame};
use seamstream::noise::Noise;
use seamstream::registry::parse_op;

/// Sizes every kernel is checked at (docs/DESIGN.md §6, issue 4).
pub const SIZES: &[(usize, usize)] = &[(1, 1), (17, 3), (321, 241), (1917, 1081), (3840, 2160)];

#[cfg(feature = "cuda")]
/// The GPU, or `None` after printing why these tests skip. The notice is
/// written straight to stderr (not through `eprintln!`, which the test
/// harness captures), once per test binary, so it shows in CI logs.
/// With `SEAMSTREAM_REQUIRE_GPU=1` a missing GPU fails instead.
pub fn gpu() -> Option<Gpu> {
    use seamstream::cuda::testing::{required, skip};
    static NOTICE: std::sync::Once = std::sync::Once::new();
    match Gpu::open(0) {
        Ok(g) => Some(g),
        Err(e) => {
            let why = format!("no usable GPU ({e})");
            if required() {
                skip("this GPU test", &why); // fails
            }
            NOTICE.call_once(|| skip("GPU tests in this binary skip", &why));
            None
        }
    }
}

/// A frame of random bytes (xorshift from `seed`, so failures repeat).
pub fn random_frame(w: usize, h: usize, format: DevFormat, seed: u64) -> Frame {
    Noise::new(seed).frame(w, h, format == DevFormat::Gray)
}

#[cfg(feature = "cuda")]
/// Runs `op` (chain syntax) on `frame` on the GPU twice, with the output
/// poisoned with two different bytes first; both runs must agree, so a
/// pixel the kernel never wrote fails. Returns the output.
pub fn run_gpu(gpu: &Gpu, op: &str, frame: &Frame) -> Frame {
    let cpu_op = parse_op(op).unwrap_or_else(|e| panic!("{op}: {e}"));
    let g = gpu_half(cpu_op.as_ref()).unwrap_or_else(|e| panic!("{op}: {e}"));
    let format = DevFormat::of(frame);
    let (w, h) = (frame.width(), frame.height());
    let (ow, oh, of) = g.output(w, h, format).unwrap();
    let mut g = g.prepare(gpu, w, h, format).unwrap();
    let input = DevFrame::upload(gpu, frame).unwrap();
    let mut outs = Vec::new();
    for poison in [0xA5u8, 0x5A] {
        let mut out = DevFrame::alloc(gpu, ow, oh, of).unwrap();
        out.fill(gpu, poison).unwrap();
        g.run(gpu, &input, &mut out)
            .unwrap_or_else(|e| panic!("{op}: {e}"));
        outs.push(out.download(gpu).unwrap());
    }
    assert!(
        bytes(&outs[0]) == bytes(&outs[1]),
        "{op} at {w}x{h}: some output pixels were never written (they kept the poison)"
    );
    outs.pop().unwrap()
}

/// Runs `op` on the CPU reference.
pub fn run_cpu(op: &str, frame: &Frame) -> Frame {
    parse_op(op).unwrap().apply(frame).unwrap()
}

/// The frame's bytes, rows packed.
pub fn bytes(f: &Frame) -> Vec<u8> {
    match f {
        Frame::Rgba(p) => p.clone().into_packed_vec().into_iter().flatten().collect(),
        Frame::Gray(p) => p.clone().into_packed_vec(),
    }
}

/// Asserts the two frames have the same size and format and that no byte
/// differs by more than `tolerance`; the message shows the first difference.
pub fn assert_close(gpu: &Frame, cpu: &Frame, tolerance: u8, what: &str) {
    assert_eq!(
        (gpu.width(), gpu.height(), DevFormat::of(gpu)),
        (cpu.width(), cpu.height(), DevFormat::of(cpu)),
        "{what}: size or format"
    );
    let (a, b) = (bytes(gpu), bytes(cpu));
    let bpp = DevFormat::of(cpu).bytes_per_pixel();
    if let Some(i) = a
        .iter()
        .zip(&b)
        .position(|(x, y)| x.abs_diff(*y) > tolerance)
    {
        let px = i / bpp;
        panic!(
            "{what}: byte {} of pixel ({}, {}) is {} on the GPU and {} on the CPU (tolerance {tolerance})",
            i % bpp,
            px % cpu.width(),
            px / cpu.width(),
            a[i],
            b[i]
        );
    }
}

#[cfg(feature = "cuda")]
/// Runs `cpu` (an op that keeps state from frame to frame) and its GPU half
/// over `frames` in order, asserting every output equal; each GPU output
/// buffer is filled with another byte first, so a pixel left unwritten
/// shows.
pub fn compare_frames(gpu: &Gpu, cpu: &mut dyn seamstream::ops::Op, frames: &[Frame], what: &str) {
    let g = gpu_half(cpu).unwrap_or_else(|e| panic!("{what}: {e}"));
    let format = DevFormat::of(&frames[0]);
    let (w, h) = (frames[0].width(), frames[0].height());
    let (ow, oh, of) = g.output(w, h, format).unwrap();
    let mut g = g
        .prepare(gpu, w, h, format)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, f) in frames.iter().enumerate() {
        let want = cpu.apply(f).unwrap();
        let input = DevFrame::upload(gpu, f).unwrap();
        let mut out = DevFrame::alloc(gpu, ow, oh, of).unwrap();
        out.fill(gpu, 0xA5 ^ (i as u8).wrapping_mul(0x3D)).unwrap();
        g.run(gpu, &input, &mut out)
            .unwrap_or_else(|e| panic!("{what} frame {i}: {e}"));
        let got = out.download(gpu).unwrap();
        assert_close(&got, &want, 0, &format!("{what} frame {i}"));
    }
}
