//! Property tests of `segment`: on random frames whose sides include 1, 2
//! and 17, every pixel is labelled with the raster index of its segment's
//! first pixel, and every segment is one 4-connected region.

use proptest::prelude::*;
use seamstream::frame::{Frame, Plane};
use seamstream::ops::segment::{Settings, labels};
use seamstream::registry::parse_op;

fn side() -> impl Strategy<Value = usize> {
    prop_oneof![Just(1usize), Just(2), Just(17), 1..=70usize]
}

/// A gray frame of flat blocks (so that leaves merge) plus noise (so that
/// nodes split), sometimes with a row stride wider than the frame.
fn gray() -> impl Strategy<Value = Plane<u8>> {
    (side(), side(), 0..3usize, 1..12usize, 0..40u8).prop_flat_map(|(w, h, pad, block, amp)| {
        let stride = w + pad;
        (
            prop::collection::vec(any::<u8>(), 64),
            prop::collection::vec(any::<u8>(), stride * h),
        )
            .prop_map(move |(levels, noise)| {
                let data = (0..stride * h)
                    .map(|i| {
                        let (x, y) = (i % stride, i / stride);
                        let base = levels[(x / block * 7 + y / block * 3) % 64];
                        base.saturating_add(noise[i] % (amp + 1))
                    })
                    .collect();
                Plane::from_vec_with_stride(w, h, stride, data).expect("size matches")
            })
    })
}

fn settings() -> impl Strategy<Value = Settings> {
    (1..=5u32, 0..=5u32, 0.05..1.0f64, 0.1..4.0f64).prop_map(|(t, m, threshold, alpha)| {
        let tile = 1usize << t;
        Settings::new(tile, 1 << m.min(t), threshold, alpha).expect("valid settings")
    })
}

/// Panics unless every label is the raster index of the first pixel that
/// carries it and each label's pixels form one 4-connected region.
fn check_partition(l: &Plane<u32>) {
    let (w, h) = (l.width(), l.height());
    let mut seen = vec![false; w * h];
    for y in 0..h {
        for x in 0..w {
            let label = l.get(x, y) as usize;
            assert!(
                label < w * h,
                "label {label} at ({x}, {y}) is not a pixel index"
            );
            let (lx, ly) = (label % w, label / w);
            assert!(
                (ly, lx) <= (y, x) && l.get(lx, ly) as usize == label,
                "({x}, {y}) has label {label}, which is not the index of an earlier pixel of it"
            );
            if seen[y * w + x] {
                continue;
            }
            // The first pixel of a segment: flood it, then every pixel of
            // this label must have been reached.
            assert_eq!(label, y * w + x, "({x}, {y}) starts label {label}");
            let mut stack = vec![(x, y)];
            seen[y * w + x] = true;
            let mut reached = 0usize;
            while let Some((px, py)) = stack.pop() {
                reached += 1;
                let mut push = |qx: usize, qy: usize| {
                    if l.get(qx, qy) as usize == label && !seen[qy * w + qx] {
                        seen[qy * w + qx] = true;
                        stack.push((qx, qy));
                    }
                };
                if px > 0 {
                    push(px - 1, py);
                }
                if px + 1 < w {
                    push(px + 1, py);
                }
                if py > 0 {
                    push(px, py - 1);
                }
                if py + 1 < h {
                    push(px, py + 1);
                }
            }
            let total = l
                .as_slice()
                .iter()
                .filter(|&&v| v as usize == label)
                .count();
            assert_eq!(
                reached, total,
                "label {label} is not one 4-connected region"
            );
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn every_pixel_is_labelled_and_segments_are_connected(img in gray(), s in settings()) {
        let l = labels(&img, &s);
        prop_assert_eq!((l.width(), l.height()), (img.width(), img.height()));
        check_partition(&l);
    }

    #[test]
    fn the_op_keeps_size_format_and_alpha(
        img in gray(),
        output in prop::sample::select(vec!["mean", "borders", "labels"]),
    ) {
        let rgba = Frame::Rgba(img.map(|v| [v, v / 2, 255 - v, v ^ 0x5a]));
        let mut op = parse_op(&format!("segment:tile=8,min=1,output={output}")).unwrap();
        let Frame::Rgba(out) = op.apply(&rgba).unwrap() else { panic!("expected RGBA") };
        prop_assert_eq!((out.width(), out.height()), (img.width(), img.height()));
        for y in 0..img.height() {
            for x in 0..img.width() {
                prop_assert_eq!(out.get(x, y)[3], img.get(x, y) ^ 0x5a);
            }
        }
        let Frame::Gray(g) = op.apply(&Frame::Gray(img.clone())).unwrap() else {
            panic!("expected gray")
        };
        prop_assert_eq!((g.width(), g.height()), (img.width(), img.height()));
    }

    /// `output=mean` paints every pixel of a segment with one value, that of
    /// the segment's first pixel.
    #[test]
    fn mean_output_is_flat_on_each_segment(img in gray(), s in settings()) {
        let l = labels(&img, &s);
        let mut op = parse_op(&format!(
            "segment:tile={},min={},threshold={},alpha={}",
            s.tile, s.min, s.threshold, s.alpha
        ))
        .unwrap();
        let Frame::Gray(out) = op.apply(&Frame::Gray(img.clone())).unwrap() else {
            panic!("expected gray")
        };
        for y in 0..img.height() {
            for x in 0..img.width() {
                let first = l.get(x, y) as usize;
                let (fx, fy) = (first % img.width(), first / img.width());
                prop_assert_eq!(out.get(x, y), out.get(fx, fy));
            }
        }
    }
}
