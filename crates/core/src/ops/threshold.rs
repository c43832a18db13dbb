//! `threshold`: a fixed or Otsu threshold, with OpenCV's five types and its
//! strict `>` comparison.
//!
//! A gray frame is thresholded on its value. An RGBA frame is decided on its
//! luma ([`Pixel::luma`]); the result, computed from luma, goes to R, G and B
//! and alpha is kept. With `t=otsu` the level is chosen per frame from the
//! luma histogram ([`histogram`], [`otsu`]).

use rayon::prelude::*;

use super::params::{Kind, OpSpec, ParamSpec, Params, Value};
use super::pixel::Pixel;
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

const TYPES: &[&str] = &["binary", "binary_inv", "trunc", "tozero", "tozero_inv"];

pub static SPEC: OpSpec = OpSpec {
    name: "threshold",
    summary: "fixed or Otsu threshold on luma (strict >, as OpenCV)",
    params: &[
        ParamSpec::new(
            "t",
            Kind::IntOrChoice {
                min: 0,
                max: 255,
                choices: &["otsu"],
            },
            "128",
            "the level (a pixel is above it when v > t); otsu picks it per frame",
        ),
        ParamSpec::new(
            "max",
            Kind::Int { min: 0, max: 255 },
            "255",
            "the value of binary and binary_inv",
        ),
        ParamSpec::new(
            "type",
            Kind::Choice(TYPES),
            "binary",
            "binary: v>t ? max : 0; binary_inv: v>t ? 0 : max; trunc: v>t ? t : v; tozero: v>t ? v : 0; tozero_inv: v>t ? 0 : v",
        ),
    ],
    example: "threshold:t=otsu,type=binary_inv",
};

/// OpenCV's threshold types.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ThresholdType {
    /// `v > t ? max : 0`
    Binary,
    /// `v > t ? 0 : max`
    BinaryInv,
    /// `v > t ? t : v`
    Trunc,
    /// `v > t ? v : 0`
    ToZero,
    /// `v > t ? 0 : v`
    ToZeroInv,
}

impl ThresholdType {
    /// The type for its name in the chain syntax.
    pub fn parse(name: &str) -> Option<Self> {
        Some(match name {
            "binary" => Self::Binary,
            "binary_inv" => Self::BinaryInv,
            "trunc" => Self::Trunc,
            "tozero" => Self::ToZero,
            "tozero_inv" => Self::ToZeroInv,
            _ => return None,
        })
    }

    /// The output for value `v`.
    #[inline]
    pub fn apply(self, v: u8, t: u8, max: u8) -> u8 {
        // (type, v > t) → output, as the table in OpenCV's documentation.
        match (self, v > t) {
            (Self::Binary, true) => max,
            (Self::Binary, false) => 0,
            (Self::BinaryInv, true) => 0,
            (Self::BinaryInv, false) => max,
            (Self::Trunc, true) => t,
            (Self::Trunc, false) => v,
            (Self::ToZero, true) => v,
            (Self::ToZero, false) => 0,
            (Self::ToZeroInv, true) => 0,
            (Self::ToZeroInv, false) => v,
        }
    }

    /// The whole mapping as a table indexed by value.
    pub fn lut(self, t: u8, max: u8) -> [u8; 256] {
        std::array::from_fn(|v| self.apply(v as u8, t, max))
    }
}

/// The 256-bin histogram of a gray plane.
pub fn histogram(luma: &Plane<u8>) -> [u32; 256] {
    luma_histogram(luma)
}

/// The 256-bin histogram of the luma of any plane, without building a luma
/// plane first. Counts are u32 (frames up to 4 G pixels).
pub fn luma_histogram<P: Pixel>(src: &Plane<P>) -> [u32; 256] {
    // Bands of rows in parallel, each counted into four sub-histograms of
    // its own (on the stack), so that runs of one value do not serialise on
    // a single counter. A band hands on its 1 KB of counts once; folding
    // row by row moved the 4 KB of sub-histograms once a row, which was
    // half the time of equalize.
    let h = src.height();
    let band_rows = h.div_ceil(4 * rayon::current_num_threads()).max(16);
    (0..h.div_ceil(band_rows))
        .into_par_iter()
        .map(|b| {
            let mut subs = [[0u32; 256]; 4];
            for y in b * band_rows..((b + 1) * band_rows).min(h) {
                let row = src.row(y);
                let mut quads = row.chunks_exact(4);
                for q in &mut quads {
                    subs[0][q[0].luma() as usize] += 1;
                    subs[1][q[1].luma() as usize] += 1;
                    subs[2][q[2].luma() as usize] += 1;
                    subs[3][q[3].luma() as usize] += 1;
                }
                for p in quads.remainder() {
                    subs[0][p.luma() as usize] += 1;
                }
            }
            std::array::from_fn(|v| subs[0][v] + subs[1][v] + subs[2][v] + subs[3][v])
        })
        .reduce(
            || [0u32; 256],
            |mut a: [u32; 256], b| {
                for (x, y) in a.iter_mut().zip(&b) {
                    *x += y;
                }
                a
            },
        )
}

/// Otsu's level, as OpenCV's THRESH_OTSU: the `t` maximising the
/// between-class variance with class 0 = `v ≤ t`, computed in f64 as
/// `num = S·w0 − s0·N`, `sigma = num² / (w0·w1)`; the first maximum wins
/// (ties go to the smallest `t`). A histogram with fewer than two levels
/// (a constant frame) gives 0, as OpenCV.
pub fn otsu(hist: &[u32; 256]) -> u8 {
    let n: u64 = hist.iter().map(|&c| c as u64).sum();
    let total: u64 = hist
        .iter()
        .enumerate()
        .map(|(v, &c)| v as u64 * c as u64)
        .sum();
    let (mut w0, mut s0) = (0u64, 0u64);
    let (mut best, mut best_t) = (0.0f64, 0u8);
    for (t, &c) in hist.iter().enumerate() {
        w0 += c as u64;
        s0 += t as u64 * c as u64;
        let w1 = n - w0;
        if w0 == 0 || w1 == 0 {
            continue;
        }
        let num = total as f64 * w0 as f64 - s0 as f64 * n as f64;
        let sigma = num * num / (w0 as f64 * w1 as f64);
        if sigma > best {
            best = sigma;
            best_t = t as u8;
        }
    }
    best_t
}

/// Thresholds `src` at `t`. Gray: on the value. RGBA: decided on luma, the
/// result (computed from luma) written to R, G and B, alpha kept.
pub fn threshold<P: Pixel>(src: &Plane<P>, t: u8, max: u8, kind: ThresholdType) -> Plane<P> {
    use ThresholdType::*;
    // One loop per type, each with its rule inlined (a compare and a select,
    // which vectorise on gray).
    match kind {
        Binary => map_luma(src, move |v| Binary.apply(v, t, max)),
        BinaryInv => map_luma(src, move |v| BinaryInv.apply(v, t, max)),
        Trunc => map_luma(src, move |v| Trunc.apply(v, t, max)),
        ToZero => map_luma(src, move |v| ToZero.apply(v, t, max)),
        ToZeroInv => map_luma(src, move |v| ToZeroInv.apply(v, t, max)),
    }
}

/// Each pixel's colour channels set to `f(luma)`, alpha kept.
pub(crate) fn map_luma<P: Pixel>(
    src: &Plane<P>,
    f: impl Fn(u8) -> u8 + Sync + Send + Copy,
) -> Plane<P> {
    let (w, h) = (src.width(), src.height());
    if P::CHANNELS == 1 && src.stride() == w {
        // Gray: written straight into the new plane's memory (no zero fill
        // first), in chunks long enough to vectorise, each a plain loop.
        // (RGBA's luma does not vectorise this way; it keeps the row loop
        // below.)
        let n = w * h;
        let mut data: Vec<P> = Vec::with_capacity(n);
        data.spare_capacity_mut()[..n]
            .par_chunks_mut(1 << 16)
            .zip(src.as_slice()[..n].par_chunks(1 << 16))
            .for_each(|(out, input)| {
                let rule = f;
                for (o, &p) in out.iter_mut().zip(input) {
                    let r = rule(p.luma());
                    let mut v = p;
                    for ch in 0..P::FILTERED {
                        v.set_channel(ch, r);
                    }
                    o.write(v);
                }
            });
        // SAFETY: the chunks above cover the first n elements, and each
        // element of each chunk was written.
        unsafe { data.set_len(n) };
        return Plane::from_vec(w, h, data).expect("the source's size");
    }
    let mut out = Plane::new(src.width(), src.height(), P::default());
    out.par_rows_mut().for_each(|(y, row)| {
        // A local copy: stores of bytes may alias anything reached through
        // a reference, which would reload the rule for every pixel.
        let rule = f;
        for (o, &p) in row.iter_mut().zip(src.row(y)) {
            let r = rule(p.luma());
            *o = p;
            for c in 0..P::FILTERED {
                o.set_channel(c, r);
            }
        }
    });
    out
}

/// Where the level comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Level {
    Fixed(u8),
    Otsu,
}

/// The `threshold` chain op.
#[derive(Debug)]
pub struct Threshold {
    pub level: Level,
    pub max: u8,
    pub kind: ThresholdType,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let level = match p.get("t") {
        Some(Value::Word(w)) if w == "otsu" => Level::Otsu,
        _ => Level::Fixed(p.f64("t")? as u8),
    };
    let word = p.word("type")?;
    let kind = ThresholdType::parse(word).ok_or_else(|| {
        Error::bad_value(
            "threshold",
            "type",
            word,
            format!("expected one of {}", TYPES.join(", ")),
        )
    })?;
    Ok(Box::new(Threshold {
        level,
        max: p.f64("max")? as u8,
        kind,
    }))
}

impl Threshold {
    fn run<P: Pixel>(&self, src: &Plane<P>) -> Plane<P> {
        let t = match self.level {
            Level::Fixed(t) => t,
            Level::Otsu => otsu(&luma_histogram(src)),
        };
        threshold(src, t, self.max, self.kind)
    }
}

impl Op for Threshold {
    fn name(&self) -> &'static str {
        "threshold"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Gray(p) => Frame::Gray(self.run(p)),
            Frame::Rgba(p) => Frame::Rgba(self.run(p)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// This op from `name:key=value,...`.
    fn parse_op(text: &str) -> crate::error::Result<crate::ops::OpBox> {
        crate::ops::parse_with(&SPEC, build, text)
    }

    fn ramp() -> Plane<u8> {
        Plane::from_fn(16, 16, |x, y| (y * 16 + x) as u8)
    }

    #[test]
    fn comparison_is_strict_at_t() {
        let img = Plane::from_vec(3, 1, vec![99u8, 100, 101]).unwrap();
        let out = threshold(&img, 100, 255, ThresholdType::Binary);
        assert_eq!(out.row(0), &[0, 0, 255]);
        let out = threshold(&img, 100, 7, ThresholdType::BinaryInv);
        assert_eq!(out.row(0), &[7, 7, 0]);
    }

    #[test]
    fn all_five_types_on_a_ramp_follow_their_formulas() {
        let img = ramp();
        let (t, max) = (77u8, 200u8);
        type Rule = fn(u8) -> u8;
        let rules: [(ThresholdType, Rule); 5] = [
            (ThresholdType::Binary, |v| if v > 77 { 200 } else { 0 }),
            (ThresholdType::BinaryInv, |v| if v > 77 { 0 } else { 200 }),
            (ThresholdType::Trunc, |v| if v > 77 { 77 } else { v }),
            (ThresholdType::ToZero, |v| if v > 77 { v } else { 0 }),
            (ThresholdType::ToZeroInv, |v| if v > 77 { 0 } else { v }),
        ];
        for (kind, rule) in rules {
            let out = threshold(&img, t, max, kind);
            for v in 0..=255u8 {
                let (x, y) = (v as usize % 16, v as usize / 16);
                assert_eq!(out.get(x, y), rule(v), "{kind:?} at v={v}");
            }
        }
    }

    #[test]
    fn otsu_of_two_levels_lies_between_them() {
        let mut hist = [0u32; 256];
        hist[40] = 300;
        hist[180] = 20;
        let t = otsu(&hist);
        assert!((40..180).contains(&t), "t = {t}");
        // Every t in 40..180 splits the classes the same way, so the first wins.
        assert_eq!(t, 40);
    }

    #[test]
    fn otsu_of_a_constant_frame_is_0() {
        let img = Plane::new(9, 4, 173u8);
        assert_eq!(otsu(&histogram(&img)), 0);
        assert_eq!(otsu(&[0; 256]), 0);
    }

    #[test]
    fn otsu_separates_three_clusters_at_the_larger_gap() {
        let img = Plane::from_fn(30, 1, |x, _| [10u8, 20, 200][x % 3]);
        let t = otsu(&histogram(&img));
        assert!((20..200).contains(&t), "t = {t}");
    }

    #[test]
    fn histogram_equals_a_plain_count_for_any_thread_count() {
        let pools = [1, 2, 3, 7].map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        });
        for (w, h) in [
            (1, 1),
            (3, 17),
            (5, 100),
            (7, 333),
            (1917, 3),
            (0, 4),
            (4, 0),
        ] {
            let gray = Plane::from_fn(w, h, |x, y| ((x * 7 + y * 13 + x * y) % 251) as u8);
            let rgba = gray.map(|v| [v, v.wrapping_mul(3), 255 - v, v]);
            let (mut plain_gray, mut plain_rgba) = ([0u32; 256], [0u32; 256]);
            for y in 0..h {
                for x in 0..w {
                    plain_gray[gray.get(x, y) as usize] += 1;
                    plain_rgba[rgba.get(x, y).luma() as usize] += 1;
                }
            }
            for pool in &pools {
                let n = pool.current_num_threads();
                assert_eq!(
                    pool.install(|| histogram(&gray)),
                    plain_gray,
                    "{w}x{h}, {n} threads"
                );
                assert_eq!(
                    pool.install(|| luma_histogram(&rgba)),
                    plain_rgba,
                    "{w}x{h}, {n} threads"
                );
            }
        }
    }

    #[test]
    fn histogram_counts_every_pixel_of_odd_widths() {
        let img = Plane::from_fn(7, 33, |x, y| ((x + y) % 3) as u8);
        let h = histogram(&img);
        assert_eq!(h.iter().sum::<u32>(), 7 * 33);
        assert_eq!(
            h[0],
            (0..7 * 33).filter(|i| (i % 7 + i / 7) % 3 == 0).count() as u32
        );
        let rgba = Plane::new(5, 3, [255u8, 0, 0, 9]);
        assert_eq!(luma_histogram(&rgba)[54], 15);
    }

    #[test]
    fn rgba_is_decided_on_luma_and_keeps_alpha() {
        // Pure green has luma 182, pure red 54.
        let img = Plane::from_vec(2, 1, vec![[0u8, 255, 0, 17], [255, 0, 0, 200]]).unwrap();
        let out = threshold(&img, 100, 255, ThresholdType::Binary);
        assert_eq!(out.row(0), &[[255, 255, 255, 17], [0, 0, 0, 200]]);
        let out = threshold(&img, 100, 255, ThresholdType::Trunc);
        assert_eq!(out.row(0), &[[100, 100, 100, 17], [54, 54, 54, 200]]);
    }

    #[test]
    fn op_parses_otsu_and_types() {
        let mut op = parse_op("threshold:t=otsu,type=binary_inv,max=9").unwrap();
        let img = Plane::from_fn(4, 1, |x, _| if x < 2 { 10 } else { 90 });
        let Frame::Gray(out) = op.apply(&Frame::Gray(img)).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(out.row(0), &[9, 9, 0, 0]);
        let e = parse_op("threshold:type=tozero_invert")
            .unwrap_err()
            .to_string();
        assert!(e.contains("tozero_inv") && e.contains("binary_inv"), "{e}");
        assert!(parse_op("threshold:t=256").is_err());
    }
}
