//! Property tests of warp, threshold, adaptive, integral and equalize through
//! the public API, on random frames of awkward sizes (1, 2, 17 and others up
//! to 40 a side).

use proptest::prelude::*;
use seamstream::frame::{Frame, Plane};
use seamstream::ops::warp::{Direction, Interpolation, Transform, WarpBorder};
use seamstream::ops::{Pixel, adaptive, equalize, integral, threshold, warp};
use seamstream::registry::parse_op;

fn side() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(2), Just(17), 1..=40usize]
}

fn gray_frame() -> impl Strategy<Value = Plane<u8>> {
    (side(), side()).prop_flat_map(|(w, h)| {
        proptest::collection::vec(any::<u8>(), w * h)
            .prop_map(move |d| Plane::from_vec(w, h, d).expect("sized data"))
    })
}

fn rgba_frame() -> impl Strategy<Value = Plane<[u8; 4]>> {
    (side(), side()).prop_flat_map(|(w, h)| {
        proptest::collection::vec(any::<[u8; 4]>(), w * h)
            .prop_map(move |d| Plane::from_vec(w, h, d).expect("sized data"))
    })
}

fn interpolation() -> impl Strategy<Value = Interpolation> {
    prop_oneof![
        Just(Interpolation::Nearest),
        Just(Interpolation::Bilinear),
        Just(Interpolation::Bicubic)
    ]
}

fn border() -> impl Strategy<Value = WarpBorder> {
    prop_oneof![
        any::<u8>().prop_map(WarpBorder::Constant),
        Just(WarpBorder::Replicate)
    ]
}

fn naive_sum(img: &Plane<u8>, x0: usize, y0: usize, x1: usize, y1: usize, sq: bool) -> u64 {
    let mut s = 0u64;
    for y in y0..y1 {
        for x in x0..x1 {
            let v = img.get(x, y) as u64;
            s += if sq { v * v } else { v };
        }
    }
    s
}

fn alpha_kept(src: &Plane<[u8; 4]>, out: &Plane<[u8; 4]>) -> bool {
    (0..src.height()).all(|y| src.row(y).iter().zip(out.row(y)).all(|(a, b)| a[3] == b[3]))
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn integral_tables_equal_naive_sums(img in gray_frame(), r in any::<[u16; 4]>()) {
        let (w, h) = (img.width(), img.height());
        let (ii, sq) = integral::integrals(&img);
        prop_assert_eq!((ii.width(), ii.height()), (w + 1, h + 1));
        prop_assert_eq!(&integral::integral(&img), &ii);
        prop_assert_eq!(&integral::integral_sq(&img), &sq);
        for y in 0..=h {
            for x in 0..=w {
                prop_assert_eq!(ii.get(x, y) as u64, naive_sum(&img, 0, 0, x, y, false));
                prop_assert_eq!(sq.get(x, y), naive_sum(&img, 0, 0, x, y, true));
            }
        }
        let (xa, xb) = (r[0] as usize % (w + 1), r[1] as usize % (w + 1));
        let (ya, yb) = (r[2] as usize % (h + 1), r[3] as usize % (h + 1));
        let (x0, x1, y0, y1) = (xa.min(xb), xa.max(xb), ya.min(yb), ya.max(yb));
        prop_assert_eq!(integral::rect_sum_u32(&ii, x0, y0, x1, y1) as u64, naive_sum(&img, x0, y0, x1, y1, false));
        prop_assert_eq!(integral::rect_sum_u64(&sq, x0, y0, x1, y1), naive_sum(&img, x0, y0, x1, y1, true));
    }

    #[test]
    fn integral_view_is_gray_of_the_input_size(img in rgba_frame()) {
        let mut op = parse_op("integral").unwrap();
        let out = op.apply(&Frame::Rgba(img.clone())).unwrap();
        let Frame::Gray(p) = out else { panic!("expected gray") };
        prop_assert_eq!((p.width(), p.height()), (img.width(), img.height()));
        // The table only grows, so its view does along rows and columns.
        for y in 0..p.height() {
            prop_assert!(p.row(y).windows(2).all(|w| w[0] <= w[1]));
        }
    }

    #[test]
    fn random_warps_never_panic_and_keep_the_asked_size(
        img in rgba_frame(),
        m in proptest::array::uniform9(-3.0f64..3.0),
        shift in (-50.0f64..50.0, -50.0f64..50.0),
        persp in (-0.05f64..0.05, -0.05f64..0.05),
        perspective in any::<bool>(),
        inverse in any::<bool>(),
        interp in interpolation(),
        border in border(),
        out in (side(), side()),
    ) {
        let dir = if inverse { Direction::DstToSrc } else { Direction::SrcToDst };
        let t = if perspective {
            Transform::perspective([m[0], m[1], shift.0, m[3], m[4], shift.1, persp.0, persp.1, m[8]], dir)
        } else {
            Transform::affine([m[0], m[1], shift.0, m[3], m[4], shift.1], dir)
        };
        // A random matrix may be singular; that is an error, never a panic.
        let Ok(t) = t else { return Ok(()) };
        let res = warp::warp(&img, &t, out.0, out.1, interp, border);
        prop_assert_eq!((res.width(), res.height()), out);
        let gray = img.map(|p| p.luma());
        let res = warp::warp(&gray, &t, out.0, out.1, interp, border);
        prop_assert_eq!((res.width(), res.height()), out);
    }

    #[test]
    fn warp_op_output_size_matches_what_apply_gives(
        img in gray_frame(),
        out in (side(), side()),
        use_size in any::<bool>(),
        interp in prop_oneof![Just("nearest"), Just("bilinear"), Just("bicubic")],
    ) {
        let size = if use_size { format!(",size={}x{}", out.0, out.1) } else { String::new() };
        let mut op = parse_op(&format!("warp:affine=[0.7,0.2,3,-0.1,1.3,-2],interpolation={interp}{size}")).unwrap();
        let want = op.output_size(img.width(), img.height()).unwrap();
        let got = op.apply(&Frame::Gray(img.clone())).unwrap();
        prop_assert_eq!((got.width(), got.height()), want);
        prop_assert_eq!(want, if use_size { out } else { (img.width(), img.height()) });
    }

    #[test]
    fn identity_warp_copies_every_channel(img in rgba_frame(), interp in interpolation(), border in border()) {
        let (w, h) = (img.width(), img.height());
        let t = Transform::affine([1.0, 0.0, 0.0, 0.0, 1.0, 0.0], Direction::SrcToDst).unwrap();
        prop_assert_eq!(&warp::warp(&img, &t, w, h, interp, border), &img);
        let t = Transform::perspective([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0], Direction::DstToSrc).unwrap();
        prop_assert_eq!(&warp::warp(&img, &t, w, h, interp, border), &img);
    }

    #[test]
    fn integer_translation_shifts_and_fills(
        img in gray_frame(),
        tx in -45i32..45,
        ty in -45i32..45,
        value in any::<u8>(),
        interp in interpolation(),
    ) {
        let (w, h) = (img.width() as i32, img.height() as i32);
        let t = Transform::affine([1.0, 0.0, tx as f64, 0.0, 1.0, ty as f64], Direction::SrcToDst).unwrap();
        let out = warp::warp(&img, &t, w as usize, h as usize, interp, WarpBorder::Constant(value));
        for y in 0..h {
            for x in 0..w {
                let (sx, sy) = (x - tx, y - ty);
                let inside = (0..w).contains(&sx) && (0..h).contains(&sy);
                let want = if inside { img.get(sx as usize, sy as usize) } else { value };
                prop_assert_eq!(out.get(x as usize, y as usize), want);
            }
        }
    }

    #[test]
    fn uniform_frame_stays_uniform_under_replicate(
        colour in any::<[u8; 4]>(),
        (w, h) in (side(), side()),
        m in proptest::array::uniform6(-4.0f64..4.0),
        interp in interpolation(),
    ) {
        let img = Plane::new(w, h, colour);
        let Ok(t) = Transform::affine(m, Direction::SrcToDst) else { return Ok(()) };
        let out = warp::warp(&img, &t, 23, 9, interp, WarpBorder::Replicate);
        prop_assert!(out.as_slice().iter().all(|&p| p == colour));
    }

    #[test]
    fn threshold_follows_luma_and_keeps_alpha(
        img in rgba_frame(),
        t in any::<u8>(),
        max in any::<u8>(),
        kind in prop_oneof![
            Just(threshold::ThresholdType::Binary),
            Just(threshold::ThresholdType::BinaryInv),
            Just(threshold::ThresholdType::Trunc),
            Just(threshold::ThresholdType::ToZero),
            Just(threshold::ThresholdType::ToZeroInv),
        ],
    ) {
        let out = threshold::threshold(&img, t, max, kind);
        prop_assert!(alpha_kept(&img, &out));
        for y in 0..img.height() {
            for (p, o) in img.row(y).iter().zip(out.row(y)) {
                let v = p.luma();
                let want = match kind {
                    threshold::ThresholdType::Binary => if v > t { max } else { 0 },
                    threshold::ThresholdType::BinaryInv => if v > t { 0 } else { max },
                    threshold::ThresholdType::Trunc => if v > t { t } else { v },
                    threshold::ThresholdType::ToZero => if v > t { v } else { 0 },
                    threshold::ThresholdType::ToZeroInv => if v > t { 0 } else { v },
                };
                prop_assert_eq!([o[0], o[1], o[2]], [want; 3]);
            }
        }
    }

    #[test]
    fn otsu_of_two_levels_separates_them(a in 0u8..255, gap in 1u8..=255, na in 1u32..5000, nb in 1u32..5000) {
        let b = a.saturating_add(gap);
        prop_assume!(a < b);
        let mut hist = [0u32; 256];
        hist[a as usize] = na;
        hist[b as usize] = nb;
        let t = threshold::otsu(&hist);
        prop_assert!(a <= t && t < b, "a={} b={} t={}", a, b, t);
    }

    #[test]
    fn otsu_op_on_any_frame_gives_a_binary_frame(img in gray_frame()) {
        let mut op = parse_op("threshold:t=otsu,max=200").unwrap();
        let Frame::Gray(out) = op.apply(&Frame::Gray(img.clone())).unwrap() else { panic!("expected gray") };
        prop_assert_eq!((out.width(), out.height()), (img.width(), img.height()));
        prop_assert!(out.as_slice().iter().all(|&v| v == 0 || v == 200));
    }

    #[test]
    fn adaptive_is_binary_keeps_alpha_and_size(
        img in rgba_frame(),
        half in 1usize..45,
        method in prop_oneof![
            (-20.0f64..20.0).prop_map(|c| adaptive::Method::Mean { c }),
            (-1.0f64..1.0, 1.0f64..255.0).prop_map(|(k, r)| adaptive::Method::Sauvola { k, r }),
            (-1.0f64..1.0).prop_map(|k| adaptive::Method::Niblack { k }),
        ],
        max in any::<u8>(),
    ) {
        let out = adaptive::adaptive(&img, method, 2 * half + 1, max).unwrap();
        prop_assert_eq!((out.width(), out.height()), (img.width(), img.height()));
        prop_assert!(alpha_kept(&img, &out));
        prop_assert!(out.as_slice().iter().all(|p| p[0] == p[1] && p[1] == p[2] && (p[0] == 0 || p[0] == max)));
    }

    #[test]
    fn adaptive_mean_of_a_flat_frame_is_all_max(v in any::<u8>(), (w, h) in (side(), side()), half in 1usize..30) {
        let img = Plane::new(w, h, v);
        let out = adaptive::adaptive(&img, adaptive::Method::Mean { c: 1.0 }, 2 * half + 1, 255).unwrap();
        prop_assert!(out.as_slice().iter().all(|&o| o == 255));
    }

    #[test]
    fn equalize_is_monotone_in_the_value(img in gray_frame()) {
        let out = equalize::equalize(&img);
        prop_assert_eq!((out.width(), out.height()), (img.width(), img.height()));
        let mut pairs: Vec<(u8, u8)> = img.as_slice().iter().copied().zip(out.as_slice().iter().copied()).collect();
        pairs.sort();
        prop_assert!(pairs.windows(2).all(|w| w[0].1 <= w[1].1));
        // Equal values map to equal values.
        prop_assert!(pairs.windows(2).all(|w| w[0].0 != w[1].0 || w[0].1 == w[1].1));
    }

    #[test]
    fn equalize_keeps_alpha_and_constant_frames(img in rgba_frame(), v in any::<[u8; 4]>()) {
        let out = equalize::equalize(&img);
        prop_assert!(alpha_kept(&img, &out));
        let flat = Plane::new(img.width(), img.height(), v);
        prop_assert_eq!(&equalize::equalize(&flat), &flat);
    }
}
