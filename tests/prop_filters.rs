//! Property tests of the linear filters (gaussian, box, convolve, sobel)
//! against naive definitions written here, on random frames whose sides
//! include 1, 2 and 17, in every border mode.

use proptest::prelude::*;
use seamstream::frame::{Frame, Plane};
use seamstream::ops::sobel::SobelOutput;
use seamstream::ops::{Border, boxfilter, convolve, gaussian, sobel};
use seamstream::registry::parse_op;

const BORDERS: [Border; 3] = [Border::Zero, Border::Replicate, Border::Reflect101];

fn border() -> impl Strategy<Value = Border> {
    prop::sample::select(BORDERS.to_vec())
}

fn side() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(2), Just(17), 1..=40usize]
}

/// A gray plane, sometimes with a row stride wider than the frame (the
/// padding holds garbage that must never be read).
fn gray() -> impl Strategy<Value = Plane<u8>> {
    (side(), side(), 0..3usize).prop_flat_map(|(w, h, pad)| {
        let stride = w + pad;
        prop::collection::vec(any::<u8>(), stride * h)
            .prop_map(move |d| Plane::from_vec_with_stride(w, h, stride, d).expect("size matches"))
    })
}

fn rgba() -> impl Strategy<Value = Plane<[u8; 4]>> {
    (side(), side()).prop_flat_map(|(w, h)| {
        prop::collection::vec(any::<[u8; 4]>(), w * h)
            .prop_map(move |d| Plane::from_vec(w, h, d).expect("size matches"))
    })
}

/// Taps in -2..=2 with two decimals, so sums stay small and exact-ish.
fn taps(len: impl Into<prop::collection::SizeRange>) -> impl Strategy<Value = Vec<f32>> {
    prop::collection::vec((-200i32..=200).prop_map(|v| v as f32 / 100.0), len)
}

fn naive_box(src: &Plane<u8>, r: usize, b: Border) -> Plane<u8> {
    let (w, h) = (src.width(), src.height());
    let n = ((2 * r + 1) * (2 * r + 1)) as u64;
    Plane::from_fn(w, h, |x, y| {
        let ri = r as isize;
        let mut s = 0u64;
        for dy in -ri..=ri {
            for dx in -ri..=ri {
                if let (Some(sx), Some(sy)) =
                    (b.index(x as isize + dx, w), b.index(y as isize + dy, h))
                {
                    s += src.get(sx, sy) as u64;
                }
            }
        }
        ((s + n / 2) / n) as u8
    })
}

/// Direct correlation summed in f64 (a different order and precision from
/// the f32 reference, hence the 1 LSB tolerance where it is compared).
fn naive_filter2d(src: &Plane<u8>, k: &[f32], n: usize, b: Border, delta: f32) -> Plane<u8> {
    let (w, h) = (src.width(), src.height());
    let a = (n / 2) as isize;
    Plane::from_fn(w, h, |x, y| {
        let mut s = 0f64;
        for ky in 0..n {
            for kx in 0..n {
                let sx = b.index(x as isize + kx as isize - a, w);
                let sy = b.index(y as isize + ky as isize - a, h);
                if let (Some(sx), Some(sy)) = (sx, sy) {
                    s += k[ky * n + kx] as f64 * src.get(sx, sy) as f64;
                }
            }
        }
        (s + delta as f64).round().clamp(0.0, 255.0) as u8
    })
}

fn max_diff(a: &Plane<u8>, b: &Plane<u8>) -> u8 {
    assert_eq!((a.width(), a.height()), (b.width(), b.height()));
    let mut m = 0;
    for y in 0..a.height() {
        for (p, q) in a.row(y).iter().zip(b.row(y)) {
            m = m.max(p.abs_diff(*q));
        }
    }
    m
}

fn same_shape_and_alpha(src: &Plane<[u8; 4]>, out: &Plane<[u8; 4]>) {
    assert_eq!((out.width(), out.height()), (src.width(), src.height()));
    for y in 0..src.height() {
        for (p, q) in src.row(y).iter().zip(out.row(y)) {
            assert_eq!(p[3], q[3], "alpha changed");
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn gaussian_of_a_constant_is_that_constant(
        (w, h) in (side(), side()),
        v in any::<u8>(),
        sigma in 0.1f64..6.0,
        radius in prop::option::of(0usize..12),
        b in border(),
    ) {
        let r = radius.unwrap_or((3.0 * sigma).ceil() as usize);
        let src = Plane::new(w, h, v);
        let out = gaussian::gaussian(&src, sigma, r, b);
        for y in 0..h {
            for x in 0..w {
                let interior = x >= r && y >= r && x + r < w && y + r < h;
                if b != Border::Zero || interior {
                    prop_assert_eq!(out.get(x, y), v, "({}, {}) r={} {:?}", x, y, r, b);
                }
            }
        }
    }

    #[test]
    fn box_equals_the_naive_window_sum(
        src in gray(),
        pick in 0..5usize,
        b in border(),
    ) {
        let big = src.width().max(src.height()) + 3;
        let r = [0, 1, 2, 5, big][pick];
        prop_assert_eq!(boxfilter::box_filter(&src, r, b), naive_box(&src, r, b));
    }

    #[test]
    fn box_of_a_constant_is_that_constant(
        (w, h) in (side(), side()),
        v in any::<u8>(),
        r in 0usize..60,
        reflect in any::<bool>(),
    ) {
        let b = if reflect { Border::Reflect101 } else { Border::Replicate };
        let src = Plane::new(w, h, v);
        prop_assert_eq!(boxfilter::box_filter(&src, r, b), src);
    }

    #[test]
    fn filter2d_equals_a_direct_correlation_within_one_lsb(
        src in gray(),
        (n, k) in (1usize..=7).prop_flat_map(|n| (Just(n), taps(n * n))),
        delta in -20f32..20.0,
        b in border(),
    ) {
        let got = convolve::filter2d(&src, &k, n, b, delta);
        prop_assert!(max_diff(&got, &naive_filter2d(&src, &k, n, b, delta)) <= 1);
    }

    #[test]
    fn separable_equals_filter2d_of_the_outer_product_within_one_lsb(
        src in gray(),
        row in taps(1..=7usize),
        col in taps(1..=7usize),
        b in border(),
    ) {
        // filter2d takes a square kernel: centre the shorter list in the
        // longer length (zero taps), which keeps the anchor at len/2 only
        // for odd lengths, so make both odd.
        let odd = |mut t: Vec<f32>| {
            if t.len().is_multiple_of(2) {
                t.push(0.0);
            }
            t
        };
        let (row, col) = (odd(row), odd(col));
        let n = row.len().max(col.len());
        let (pr, pc) = ((n - row.len()) / 2, (n - col.len()) / 2);
        let mut k = vec![0f32; n * n];
        for (i, &c) in col.iter().enumerate() {
            for (j, &r) in row.iter().enumerate() {
                k[(i + pc) * n + j + pr] = c * r;
            }
        }
        let sep = convolve::separable(&src, &row, &col, b, 0.0);
        prop_assert!(max_diff(&sep, &convolve::filter2d(&src, &k, n, b, 0.0)) <= 1);
    }

    #[test]
    fn sobel_gradient_at_matches_gradients_and_dx_dy_swap_under_transpose(
        src in gray(),
        five in any::<bool>(),
        b in border(),
    ) {
        let ksize = if five { 5 } else { 3 };
        let (gx, gy) = sobel::gradients(&src, ksize, b);
        for y in 0..src.height() {
            for x in 0..src.width() {
                prop_assert_eq!(sobel::gradient_at(&src, x, y, ksize, b), (gx.get(x, y), gy.get(x, y)));
            }
        }
        let dx = sobel::sobel(&src, ksize, SobelOutput::Dx, b);
        let dy_t = sobel::sobel(&src.transposed(), ksize, SobelOutput::Dy, b);
        prop_assert_eq!(dx, dy_t.transposed());
    }

    #[test]
    fn filters_keep_size_type_and_alpha_on_rgba(
        src in rgba(),
        b in border(),
        sigma in 0.1f64..20.0,
        radius in 0usize..80,
        k in taps(9),
        row in taps(1..=65usize),
        col in taps(1..=65usize),
        five in any::<bool>(),
        out in 0..3usize,
    ) {
        let ksize = if five { 5 } else { 3 };
        let output = [SobelOutput::Magnitude, SobelOutput::Dx, SobelOutput::Dy][out];
        same_shape_and_alpha(&src, &gaussian::gaussian(&src, sigma, radius, b));
        same_shape_and_alpha(&src, &boxfilter::box_filter(&src, radius, b));
        same_shape_and_alpha(&src, &convolve::filter2d(&src, &k, 3, b, 1.5));
        same_shape_and_alpha(&src, &convolve::separable(&src, &row, &col, b, -3.0));
        same_shape_and_alpha(&src, &sobel::sobel(&src, ksize, output, b));
    }

    #[test]
    fn ops_built_from_text_keep_size_and_pixel_type(
        gray_src in gray(),
        rgba_src in rgba(),
        b in border(),
        sigma in 0.1f64..10.0,
        radius in 0usize..50,
        row in taps(1..=65usize),
        five in any::<bool>(),
    ) {
        let list = |t: &[f32]| t.iter().map(|v| v.to_string()).collect::<Vec<_>>().join(",");
        let border = ["zero", "replicate", "reflect101"][BORDERS.iter().position(|&x| x == b).unwrap_or(1)];
        let texts = [
            format!("gaussian:sigma={sigma},border={border}"),
            format!("gaussian:sigma={sigma},radius={radius},border={border}"),
            format!("box:radius={radius},border={border}"),
            format!("convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0],delta=2,border={border}"),
            format!("convolve:row=[{}],col=[{}],border={border}", list(&row), list(&row[..row.len().div_ceil(2)])),
            format!("sobel:ksize={},output=dy,border={border}", if five { 5 } else { 3 }),
        ];
        for text in &texts {
            let mut op = parse_op(text).map_err(|e| TestCaseError::fail(format!("{text}: {e}")))?;
            let out = op.apply(&Frame::Gray(gray_src.clone())).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let Frame::Gray(g) = out else { return Err(TestCaseError::fail(format!("{text}: gray in, not gray out"))) };
            prop_assert_eq!((g.width(), g.height()), (gray_src.width(), gray_src.height()));
            let out = op.apply(&Frame::Rgba(rgba_src.clone())).map_err(|e| TestCaseError::fail(e.to_string()))?;
            let Frame::Rgba(p) = out else { return Err(TestCaseError::fail(format!("{text}: RGBA in, not RGBA out"))) };
            same_shape_and_alpha(&rgba_src, &p);
        }
    }
}

#[test]
fn identity_kernel_is_a_copy_and_a_left_one_shifts_right() {
    let src = Plane::from_fn(17, 9, |x, y| (x * 13 + y * 29) as u8);
    for b in BORDERS {
        assert_eq!(
            convolve::filter2d(&src, &[0., 0., 0., 0., 1., 0., 0., 0., 0.], 3, b, 0.0),
            src
        );
        // Correlation: a 1 left of the anchor reads the pixel to the left, so
        // the picture moves one pixel right (convolution would move it left).
        let out = convolve::filter2d(&src, &[0., 0., 0., 1., 0., 0., 0., 0., 0.], 3, b, 0.0);
        for y in 0..9 {
            for x in 1..17 {
                assert_eq!(out.get(x, y), src.get(x - 1, y));
            }
        }
        let out = convolve::separable(&src, &[1., 0., 0.], &[1.], b, 0.0);
        assert_eq!(out.get(5, 4), src.get(4, 4));
    }
}

#[test]
fn convolve_parameter_errors_name_the_key() {
    let e = parse_op("convolve:kernel=[1,2,3,4,5,6,7,8,9,10]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("kernel"), "{e}");
    let e = parse_op("convolve:row=[1,2,1]").unwrap_err().to_string();
    assert!(e.contains("row") && e.contains("col"), "{e}");
    let e = parse_op("convolve:kernel=[0,0,0,0,1,0,0,0,0],row=[1]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("kernel") && e.contains("row"), "{e}");
}

#[test]
fn sobel_step_edge_is_400_and_clamps_to_255() {
    let src = Plane::from_fn(10, 6, |x, _| if x < 5 { 0 } else { 100 });
    let (gx, gy) = sobel::gradients(&src, 3, Border::Replicate);
    assert_eq!(
        (
            gx.get(4, 3).abs(),
            gx.get(5, 3).abs(),
            gx.get(1, 3),
            gx.get(8, 3)
        ),
        (400, 400, 0, 0)
    );
    assert!(gy.as_slice().iter().all(|&g| g == 0));
    let m = sobel::sobel(&src, 3, SobelOutput::Magnitude, Border::Replicate);
    assert_eq!((m.get(4, 3), m.get(5, 3), m.get(2, 3)), (255, 255, 0));
}
