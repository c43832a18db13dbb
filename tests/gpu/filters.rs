//! GPU filters (gaussian, box, convolve, sobel) against the CPU reference at
//! every size of `SIZES`, RGBA and gray, every border mode (skipped without a
//! GPU). All are exact: the kernels do the CPU's f32 operations in its order
//! (fused multiply-adds where the CPU's `mul_add` is), or integer arithmetic.

use crate::common::*;
use seamstream::frame::DevFormat;

const BORDERS: [&str; 3] = ["zero", "replicate", "reflect101"];

/// Runs each op (written without its border) with every border on fresh
/// random frames of every size and format, and asserts the GPU's bytes equal
/// the CPU's.
fn assert_identical_everywhere(ops: &[String], seed: u64) {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for (j, fmt) in [DevFormat::Rgba, DevFormat::Gray].into_iter().enumerate() {
            let frame = random_frame(w, h, fmt, seed + 10 * i as u64 + j as u64);
            for op in ops {
                for border in BORDERS {
                    let op = format!("{op},border={border}");
                    let what = format!("{op} on {fmt:?} {w}x{h}");
                    assert_close(&run_gpu(&gpu, &op, &frame), &run_cpu(&op, &frame), 0, &what);
                }
            }
        }
    }
}

/// `n` taps, none zero, of both signs and inexact in binary (so that any
/// change in the order or rounding of the sums shows), summing to about 1.
fn taps(n: usize, salt: usize) -> String {
    let v: Vec<String> = (0..n)
        .map(|i| {
            let k = ((i * 7 + salt * 3) % 11) as f64;
            format!("{:.5}", ((k - 4.0) / 2.5 + 0.6) / n as f64)
        })
        .collect();
    format!("[{}]", v.join(","))
}

/// Exact. σ = 0.5 (5 taps), 2.5 (17 taps, the benchmark's), 4 (25 taps, the
/// longest compiled tap count) and a single tap run the fused kernel
/// compiled for their tap count; σ = 6 (37 taps) the fused kernel with
/// run-time counts; σ = 12 (73 taps) and σ = 100 (601 taps, the largest
/// radius) the two-pass path through an f32 frame.
#[test]
fn gaussian_is_identical_to_the_cpu() {
    let ops = [
        "gaussian:sigma=0.5",
        "gaussian:sigma=2.5",
        "gaussian:sigma=4,radius=12",
        "gaussian:sigma=6",
        "gaussian:sigma=3,radius=0",
        "gaussian:sigma=12",
        "gaussian:sigma=100",
    ]
    .map(String::from);
    assert_identical_everywhere(&ops, 100);
}

/// Exact (integer sums; the tiled kernel's multiply-and-shift division is
/// exact for every sum, see `magic` in src/cuda/ops/boxfilter.rs). Radii 0,
/// 1, 8 (the benchmark's) and 16 run the tiled kernel; 17, 100 and 1000
/// (windows far larger than the small frames) the prefix-sum path.
#[test]
fn box_is_identical_to_the_cpu() {
    let ops = [0, 1, 8, 16, 17, 100, 1000].map(|r| format!("box:radius={r}"));
    assert_identical_everywhere(&ops, 200);
}

/// Exact. Every kernel side from 1 to 7 (even sides anchor at n/2, so the
/// window is lopsided), with and without delta.
#[test]
fn convolve_2d_is_identical_to_the_cpu() {
    let mut ops: Vec<String> = (1..=7)
        .map(|n| {
            let k = taps(n * n, n);
            format!("convolve:kernel={k}")
        })
        .collect();
    ops.push("convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0]".into());
    ops.push(format!("convolve:kernel={},delta=-20.5", taps(9, 1)));
    ops.push(format!("convolve:kernel={},delta=77.25", taps(25, 2)));
    assert_identical_everywhere(&ops, 300);
}

/// Exact. Symmetric and lopsided (even, unequal lengths) tap lists, a single
/// tap, and the longest lists (65), with delta; all run a fused kernel, the
/// first (3 and 3 taps) the one compiled for its tap count.
#[test]
fn convolve_separable_is_identical_to_the_cpu() {
    let ops = [
        "convolve:row=[1,2,1],col=[0.25,0.5,0.25]".to_string(),
        "convolve:row=[0.1,0.2,0.3,0.4],col=[-1,0,2,0.5,0.125,-0.25,0.7]".to_string(),
        format!("convolve:row=[1.5],col={},delta=3.3", taps(9, 4)),
        format!("convolve:row={},col=[0.9]", taps(12, 5)),
        format!("convolve:row={},col={}", taps(65, 6), taps(65, 7)),
        format!(
            "convolve:row={},col={},delta=-9.75",
            taps(64, 8),
            taps(33, 9)
        ),
    ];
    assert_identical_everywhere(&ops, 400);
}

/// Exact: integer gradients, and the magnitude's root taken in f32 by the
/// correctly rounded square root on both sides.
#[test]
fn sobel_is_identical_to_the_cpu() {
    let mut ops = Vec::new();
    for ksize in [3, 5] {
        for output in ["magnitude", "dx", "dy"] {
            ops.push(format!("sobel:ksize={ksize},output={output}"));
        }
    }
    assert_identical_everywhere(&ops, 500);
}
