//! Seam carving invariants on random frames, and fast mode on a still
//! shot of real footage (where the shared clips are given).

use proptest::prelude::*;
use seamstream::frame::{Plane, Rgba};
use seamstream::gst::decode::FrameReader;
use seamstream::ops::retarget::fast::{FastParams, FastState, retarget_fast};
use seamstream::ops::retarget::passes::without_columns;
use seamstream::ops::retarget::{CarveOptions, Energy, retarget};

const ENERGIES: [Energy; 4] = [
    Energy::Basic,
    Energy::Sobel3,
    Energy::Sobel5,
    Energy::Forward,
];

/// A frame whose pixels carry their own coordinates (R = x, B = y) and
/// random-looking luma from the seed (G), so a carved frame tells where each
/// surviving pixel came from.
fn tagged(w: usize, h: usize, seed: u64) -> Plane<Rgba> {
    Plane::from_fn(w, h, |x, y| {
        let n = (x as u64 * 7919 + y as u64 * 104_729 + seed)
            .wrapping_mul(6_364_136_223_846_793_005)
            >> 56;
        [x as u8, n as u8, y as u8, 255]
    })
}

fn origin_x(p: Rgba) -> usize {
    p[0] as usize
}

/// For each row of `out` (one column narrower than `src`), the removed
/// column, checking that the survivors keep their order.
fn removed_columns(src: &Plane<Rgba>, out: &Plane<Rgba>) -> Vec<usize> {
    (0..src.height())
        .map(|y| {
            let xs: Vec<usize> = out.row(y).iter().map(|&p| origin_x(p)).collect();
            assert!(
                xs.windows(2).all(|w| w[0] < w[1]),
                "row {y} lost its order: {xs:?}"
            );
            (0..src.width())
                .find(|x| !xs.contains(x))
                .expect("one column removed")
        })
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(48))]

    #[test]
    fn one_seam_removes_one_connected_pixel_per_row(
        w in prop_oneof![Just(2usize), Just(17), 2usize..40],
        h in prop_oneof![Just(1usize), Just(2), Just(17), 1usize..30],
        seed in any::<u64>(),
        e in 0usize..4,
    ) {
        let src = tagged(w, h, seed);
        let out = retarget(&src, w - 1, h, &CarveOptions { energy: ENERGIES[e], ..Default::default() }).unwrap();
        prop_assert_eq!((out.width(), out.height()), (w - 1, h));
        let seam = removed_columns(&src, &out);
        for pair in seam.windows(2) {
            prop_assert!(pair[0].abs_diff(pair[1]) <= 1, "seam jumps: {:?}", seam);
        }
        // Rows keep their own pixels.
        for y in 0..h {
            prop_assert!(out.row(y).iter().all(|p| p[2] as usize == y));
        }
    }

    #[test]
    fn any_target_from_1_to_twice_the_size_comes_out_at_that_size(
        w in prop_oneof![Just(1usize), Just(2), Just(17), 1usize..20],
        h in prop_oneof![Just(1usize), Just(2), Just(17), 1usize..20],
        tw_frac in 0.0f64..1.0, th_frac in 0.0f64..1.0,
        seed in any::<u64>(), e in 0usize..4,
    ) {
        let src = tagged(w, h, seed);
        let tw = 1 + ((2 * w - 1) as f64 * tw_frac) as usize;
        let th = 1 + ((2 * h - 1) as f64 * th_frac) as usize;
        let out = retarget(&src, tw, th, &CarveOptions { energy: ENERGIES[e], ..Default::default() }).unwrap();
        prop_assert_eq!((out.width(), out.height()), (tw, th));
    }

    #[test]
    fn gray_and_rgba_agree_on_the_seams(
        w in 3usize..30, h in 1usize..20, k in 1usize..3, seed in any::<u64>(),
    ) {
        let gray = Plane::from_fn(w, h, |x, y| ((x as u64 * 31 + y as u64 * 17 + seed % 1000) % 251) as u8);
        let rgba = gray.map(|v| [v, v, v, 255]);
        let opts = CarveOptions { energy: Energy::Basic, ..Default::default() };
        let g = retarget(&gray, w - k, h, &opts).unwrap();
        let c = retarget(&rgba, w - k, h, &opts).unwrap();
        prop_assert_eq!(g, c.map(|p| p[0]));
    }
}

#[test]
fn protected_pixels_are_never_carved() {
    let (w, h) = (40, 24);
    let src = tagged(w, h, 3);
    // Protect a vertical band of 12 columns; carve away 20 of the other 28.
    let protect = Plane::from_fn(w, h, |x, _| (10..22).contains(&x) as u8);
    for energy in ENERGIES {
        let out = retarget(
            &src,
            w - 20,
            h,
            &CarveOptions {
                energy,
                protect: Some(&protect),
                remove: None,
            },
        )
        .unwrap();
        for y in 0..h {
            let xs: Vec<usize> = out.row(y).iter().map(|&p| origin_x(p)).collect();
            for x in 10..22 {
                assert!(
                    xs.contains(&x),
                    "{energy:?}: protected ({x},{y}) was carved"
                );
            }
        }
    }
}

#[test]
fn pixels_marked_for_removal_go_first() {
    let (w, h) = (40, 24);
    let src = tagged(w, h, 5);
    // A slanted 4-pixel-wide stripe; removing 4 seams must take all of it.
    let stripe = |x: usize, y: usize| (10 + y / 3..14 + y / 3).contains(&x);
    let remove = Plane::from_fn(w, h, |x, y| stripe(x, y) as u8);
    for energy in ENERGIES {
        let out = retarget(
            &src,
            w - 4,
            h,
            &CarveOptions {
                energy,
                protect: None,
                remove: Some(&remove),
            },
        )
        .unwrap();
        for y in 0..h {
            for &p in out.row(y) {
                assert!(
                    !stripe(origin_x(p), y),
                    "{energy:?}: marked pixel ({}, {y}) survived",
                    origin_x(p)
                );
            }
        }
    }
}

#[test]
fn carving_removes_the_flat_background_before_the_detail() {
    // Detailed texture on the left third, flat black on the rest: shrinking
    // by a third keeps every textured column. (Black, because `basic` counts
    // the outside of the frame as 0, which makes a bright edge row costly.)
    let (w, h) = (30, 12);
    let src = Plane::from_fn(w, h, |x, y| {
        if x < 10 {
            ((x * 97 + y * 61) % 255 + 1) as u8
        } else {
            0
        }
    });
    for energy in ENERGIES {
        let out = retarget(
            &src,
            20,
            h,
            &CarveOptions {
                energy,
                ..Default::default()
            },
        )
        .unwrap();
        for y in 0..h {
            assert_eq!(&out.row(y)[..10], &src.row(y)[..10], "{energy:?} row {y}");
        }
    }
}

#[test]
fn enlarging_keeps_every_source_pixel_in_order() {
    let (w, h) = (20, 9);
    let src = tagged(w, h, 11);
    // 70% more: two rounds.
    let out = retarget(
        &src,
        34,
        h,
        &CarveOptions {
            energy: Energy::Basic,
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(out.width(), 34);
    for y in 0..h {
        // Inserted pixels are means; the originals appear as a subsequence.
        let row = out.row(y);
        let mut i = 0;
        for x in 0..w {
            let p = src.get(x, y);
            while i < row.len() && row[i] != p {
                i += 1;
            }
            assert!(
                i < row.len(),
                "row {y}: source pixel {x} missing or out of order"
            );
            i += 1;
        }
    }
}

/// The first frame of a shared clip, from `SEAMSTREAM_VIDEO_DIR` (the
/// shared clips, ../shared/data/video), if set.
fn shared_frame(name: &str) -> Option<Plane<Rgba>> {
    let Some(dir) = std::env::var_os("SEAMSTREAM_VIDEO_DIR") else {
        eprintln!("SKIP: set SEAMSTREAM_VIDEO_DIR to the shared clips to run this on {name}");
        return None;
    };
    let path = std::path::Path::new(&dir).join(name);
    let mut reader = FrameReader::open(&path.to_string_lossy())
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    Some(reader.next_frame().unwrap().expect("a first frame"))
}

#[test]
fn a_still_shot_of_real_footage_with_noise_keeps_the_seams_of_its_first_frame() {
    let Some(frame) = shared_frame("dog-walk-720p.mp4") else {
        return;
    };
    let (w, h) = (frame.width(), frame.height());
    let (tw, k) = (w * 3 / 4, w - w * 3 / 4);
    // The frame again and again, each time with −1, 0 or +1 level on each
    // channel of each pixel.
    let noisy = |t: u64| {
        Plane::from_fn(w, h, |x, y| {
            let p = frame.get(x, y);
            let mut s =
                (x as u64 * 7919 + y as u64 * 104_729 + t).wrapping_mul(6_364_136_223_846_793_005);
            let mut jitter = |v: u8| {
                s = s.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                match s >> 62 {
                    0 => v.saturating_add(1),
                    1 => v.saturating_sub(1),
                    _ => v,
                }
            };
            [jitter(p[0]), jitter(p[1]), jitter(p[2]), p[3]]
        })
    };
    let (params, opts) = (FastParams::default(), CarveOptions::default());
    let mut state = FastState::default();
    retarget_fast(&noisy(0), tw, h, &opts, &params, &mut state).unwrap();
    let seams = state.tracks()[0][0].seams.clone();
    for t in 1..6 {
        let input = noisy(t);
        let out = retarget_fast(&input, tw, h, &opts, &params, &mut state).unwrap();
        assert!(
            state.tracks()[0][0].seams == seams,
            "frame {} moved the seams of the first",
            t + 1
        );
        assert_eq!(out, without_columns(&input, &seams, k), "frame {}", t + 1);
    }
    assert_eq!(state.cuts, 0);
}
