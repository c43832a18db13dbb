//! GPU `warp`, `integral` and `adaptive` against the CPU reference (skipped
//! without a GPU).

use crate::common::*;
use seamstream::cuda::ops::integral::{IntegralTables, table_len};
use seamstream::cuda::{DevFormat, DevFrame, Gpu};
use seamstream::frame::{Frame, Plane};
use seamstream::ops::integral::{integral, integral_sq};

const FORMATS: [DevFormat; 2] = [DevFormat::Rgba, DevFormat::Gray];
const INTERPOLATIONS: [&str; 3] = ["nearest", "bilinear", "bicubic"];
const BORDERS: [&str; 2] = ["border=constant,value=37", "border=replicate"];

/// Runs every `warp` matrix (the text after `warp:`) with every
/// interpolation and border on random frames of both formats, and demands
/// the CPU's bytes.
fn warp_matches(gpu: &Gpu, seed: u64, w: usize, h: usize, matrices: &[String]) {
    for (j, matrix) in matrices.iter().enumerate() {
        for fmt in FORMATS {
            let f = random_frame(w, h, fmt, seed * 31 + j as u64);
            for interp in INTERPOLATIONS {
                for border in BORDERS {
                    let op = format!("warp:{matrix},interpolation={interp},{border}");
                    let what = format!("{op} on {fmt:?} {w}x{h}");
                    assert_close(&run_gpu(gpu, &op, &f), &run_cpu(&op, &f), 0, &what);
                }
            }
        }
    }
}

/// Rotation by `angle` and scale by `scale` about the frame's centre, as a
/// source→destination affine matrix.
fn rotation(w: usize, h: usize, angle: f64, scale: f64) -> String {
    let (c, s) = (scale * angle.cos(), scale * angle.sin());
    let (cx, cy) = (w as f64 / 2.0, h as f64 / 2.0);
    let (tx, ty) = (cx - c * cx + s * cy, cy - s * cx - c * cy);
    format!("affine=[{c},{},{tx},{s},{c},{ty}]", -s)
}

/// Exact: the kernels evaluate the matrix, floor and weigh in f32 with the
/// CPU's operations in the CPU's order (no fused multiply-adds, IEEE
/// division), so every tap and every rounding is the CPU's.
#[test]
fn warp_affine_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        let matrices = [
            "affine=[1,0,0,0,1,0]".to_string(),
            "affine=[1,0,5,0,1,-3]".to_string(),
            rotation(w, h, 0.3, 1.3),
            rotation(w, h, -2.1, 0.45),
            "affine=[0.8,0.15,2.5,-0.1,0.9,1.25],inverse=true".to_string(),
            // The bench's matrix (src/bench/mod.rs).
            "affine=[0.96,-0.17,40,0.17,0.96,-60]".to_string(),
        ];
        warp_matches(&gpu, i as u64 + 1, w, h, &matrices);
    }
}

/// Exact, as the affine test; the divide is correctly rounded on both sides.
/// The second matrix (destination→source) has a divisor that is exactly 0 on
/// column 2^k and negative beyond it, where points have no source or lie
/// behind the camera.
#[test]
fn warp_perspective_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        let (p6, p7) = (0.2 / w as f64, 0.1 / h as f64);
        let zero_at = 1u64 << (usize::BITS - 1 - w.leading_zeros());
        let matrices = [
            format!("perspective=[0.9,-0.1,12,0.1,0.9,-5,{p6},{p7},1]"),
            format!(
                "perspective=[1,0,0,0,1,0,{},0,1],inverse=true",
                -1.0 / zero_at as f64
            ),
            "perspective=[1,0,-7,0,1,4,0,0,1]".to_string(),
            // The bench's matrix (src/bench/mod.rs).
            "perspective=[0.9,-0.1,30,0.05,0.95,-20,0.00002,0.00001,1]".to_string(),
        ];
        warp_matches(&gpu, i as u64 + 100, w, h, &matrices);
    }
}

/// Exact, as the affine test: an output larger and one smaller than the
/// input, so the grid follows the output and the taps the input.
#[test]
fn warp_to_another_size_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        let matrices = [
            format!(
                "affine=[1.5,0.1,3,0,0.75,-2],size={}x{}",
                w * 3 / 2 + 1,
                h * 3 / 4 + 1
            ),
            format!(
                "perspective=[0.5,0,0,0.02,0.5,1,0.0001,0,1],size={}x{}",
                w / 2 + 1,
                h / 3 + 2
            ),
        ];
        warp_matches(&gpu, i as u64 + 200, w, h, &matrices);
    }
}

/// The GPU tables of a gray frame, each poisoned before the run so that an
/// unwritten cell fails: (u32 sums, u64 squared sums if `squares`).
fn gpu_tables(gpu: &Gpu, frame: &Frame, squares: bool) -> (Vec<u32>, Option<Vec<u64>>) {
    let (w, h) = (frame.width(), frame.height());
    let n = table_len(w, h);
    let stream = gpu.stream();
    let src = DevFrame::upload(gpu, frame).unwrap();
    let mut tables = IntegralTables::new(gpu, w, h, squares).unwrap();
    let mut sum = stream.clone_htod(&vec![0xA5A5_A5A5u32; n]).unwrap();
    let mut sq = stream
        .clone_htod(&vec![0x5A5A_5A5A_5A5A_5A5Au64; n])
        .unwrap();
    tables
        .compute(gpu, &src, &mut sum, squares.then_some(&mut sq))
        .unwrap();
    let sum = stream.clone_dtoh(&sum).unwrap();
    let sq = squares.then(|| stream.clone_dtoh(&sq).unwrap());
    gpu.sync().unwrap();
    (sum, sq)
}

/// The first index where two tables differ.
fn first_difference<T: PartialEq>(a: &[T], b: &[T]) -> Option<usize> {
    a.iter().zip(b).position(|(x, y)| x != y)
}

/// Asserts the GPU tables of `plane`, computed with and without the squared
/// table, equal the CPU's `integral` and `integral_sq`, naming the first
/// differing cell.
fn assert_tables(gpu: &Gpu, plane: &Plane<u8>, what: &str) {
    let (w, h) = (plane.width(), plane.height());
    let frame = Frame::Gray(plane.clone());
    let want = integral(plane).into_packed_vec();
    let want_sq = integral_sq(plane).into_packed_vec();
    for squares in [false, true] {
        let (sum, sq) = gpu_tables(gpu, &frame, squares);
        assert_eq!(sum.len(), want.len(), "{what} {w}x{h}: table size");
        if let Some(i) = first_difference(&sum, &want) {
            panic!(
                "{what} {w}x{h} (squares {squares}): sum at ({}, {}): GPU {}, CPU {}",
                i % (w + 1),
                i / (w + 1),
                sum[i],
                want[i]
            );
        }
        if let Some(sq) = sq
            && let Some(i) = first_difference(&sq, &want_sq)
        {
            panic!(
                "{what} {w}x{h}: squared sum at ({}, {}): GPU {}, CPU {}",
                i % (w + 1),
                i / (w + 1),
                sq[i],
                want_sq[i]
            );
        }
    }
}

fn gray_plane(f: Frame) -> Plane<u8> {
    match f {
        Frame::Gray(p) => p,
        Frame::Rgba(_) => unreachable!("asked for gray"),
    }
}

/// Exact: integer sums, wrapping like the CPU's, so the order of the
/// additions does not matter. Sizes beyond SIZES: 1920 wide (whole words a
/// row, a band cut by the bottom edge), tile edges (128, 256, 129 wide).
#[test]
fn integral_tables_are_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let extra = [(1920, 1080), (256, 33), (129, 17), (128, 16), (2, 200)];
    for (i, &(w, h)) in SIZES.iter().chain(&extra).enumerate() {
        let plane = gray_plane(random_frame(w, h, DevFormat::Gray, i as u64 + 300));
        assert_tables(&gpu, &plane, "random");
    }
}

/// Exact at the largest sums: a white 4K frame sums to 255·3840·2160 ≈ 2.1e9
/// (fits u32) and 255²·3840·2160 ≈ 5.4e11 squared (u64).
#[test]
fn integral_tables_of_a_white_4k_frame_do_not_overflow() {
    let Some(gpu) = gpu() else { return };
    let plane = Plane::new(3840, 2160, 255u8);
    assert_tables(&gpu, &plane, "white");
}

/// Exact: the picture is the CPU's f64 division and rounding of the same
/// table; RGBA goes through the same luma as the CPU.
#[test]
fn integral_view_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in FORMATS {
            let f = random_frame(w, h, fmt, i as u64 + 400);
            let what = format!("integral on {fmt:?} {w}x{h}");
            assert_close(
                &run_gpu(&gpu, "integral", &f),
                &run_cpu("integral", &f),
                0,
                &what,
            );
        }
    }
}

const ADAPTIVE: [&str; 6] = [
    "adaptive",
    "adaptive:method=mean,window=31,c=-2.5",
    "adaptive:method=sauvola,window=31,k=0.3",
    "adaptive:method=sauvola,window=301,k=0.2,r=64,max=200",
    "adaptive:method=niblack,window=15",
    "adaptive:method=niblack,window=3,k=0.5",
];

/// A page: background about 200 and strokes about 40, each with noise of
/// ±12 (xorshift from `seed`); RGBA carries it in R, G and B with a random
/// alpha.
fn document(w: usize, h: usize, fmt: DevFormat, seed: u64) -> Frame {
    let noise = random_frame(w, h, DevFormat::Rgba, seed);
    let Frame::Rgba(noise) = noise else {
        unreachable!()
    };
    let ink = |x: usize, y: usize| (y % 23 < 3 && (x / 9) % 4 != 3) || (x % 37 < 2 && y % 23 < 15);
    let page = Plane::from_fn(w, h, |x, y| {
        let n = noise.get(x, y);
        let base: i32 = if ink(x, y) { 40 } else { 200 };
        let v = (base + n[0] as i32 % 25 - 12) as u8;
        [v, v, v, n[1]]
    });
    match fmt {
        DevFormat::Rgba => Frame::Rgba(page),
        DevFormat::Gray => Frame::Gray(page.map(|p| p[0])),
    }
}

/// Exact: the window sums come from identical tables with the CPU's
/// wrapping arithmetic, and the mean, deviation and level are the CPU's f64
/// operations in its order (no fused multiply-adds; division and sqrt are
/// correctly rounded on both), so every comparison is the CPU's.
#[test]
fn adaptive_is_identical_to_the_cpu_on_random_frames() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in FORMATS {
            let f = random_frame(w, h, fmt, i as u64 + 500);
            for op in ADAPTIVE {
                let what = format!("{op} on {fmt:?} {w}x{h}");
                assert_close(&run_gpu(&gpu, op, &f), &run_cpu(op, &f), 0, &what);
            }
        }
    }
}

/// Exact, as on random frames, on the case the op is for: a noisy page,
/// where the decisions are not a coin toss, so most pixels must agree for
/// the right reason.
#[test]
fn adaptive_is_identical_to_the_cpu_on_a_document() {
    let Some(gpu) = gpu() else { return };
    for &(w, h) in &[(321, 241), (1917, 1081)] {
        for fmt in FORMATS {
            let f = document(w, h, fmt, 600 + w as u64);
            for op in ADAPTIVE {
                let what = format!("{op} on a {fmt:?} {w}x{h} page");
                assert_close(&run_gpu(&gpu, op, &f), &run_cpu(op, &f), 0, &what);
            }
        }
    }
}
