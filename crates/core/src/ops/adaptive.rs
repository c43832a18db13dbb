//! `adaptive`: local thresholds (mean − c, Sauvola, Niblack) from the local
//! mean and standard deviation of luma, read from the integral and squared
//! integral images.
//!
//! The window (side `window`, centred) is clipped at the frame borders, so a
//! border pixel's statistics come from the in-frame part only. A pixel whose
//! luma is above its local level becomes `max`, the rest 0; RGBA output takes
//! the result in R, G and B and keeps alpha.

use rayon::prelude::*;

use super::integral::integrals;
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::pixel::Pixel;
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

const METHODS: &[&str] = &["mean", "sauvola", "niblack"];

pub static SPEC: OpSpec = OpSpec {
    name: "adaptive",
    summary: "local threshold of luma: mean − c, Sauvola or Niblack over a window clipped at the borders",
    params: &[
        ParamSpec::new(
            "method",
            Kind::Choice(METHODS),
            "mean",
            "mean: T = m − c; sauvola: T = m·(1 + k·(s/r − 1)); niblack: T = m + k·s",
        ),
        ParamSpec::new(
            "window",
            Kind::Int { min: 3, max: 1001 },
            "15",
            "side of the centred window, odd",
        ),
        ParamSpec::new(
            "c",
            Kind::Float {
                min: -255.0,
                max: 255.0,
            },
            "5",
            "offset below the mean (method=mean)",
        ),
        ParamSpec::optional(
            "k",
            Kind::Float {
                min: -2.0,
                max: 2.0,
            },
            "weight of the deviation (sauvola: default 0.34, niblack: default -0.2)",
        ),
        ParamSpec::new(
            "r",
            Kind::Float {
                min: 1.0,
                max: 255.0,
            },
            "128",
            "dynamic range of the deviation (sauvola)",
        ),
        ParamSpec::new(
            "max",
            Kind::Int { min: 0, max: 255 },
            "255",
            "value of pixels above their level",
        ),
    ],
    example: "adaptive:method=sauvola,window=31,k=0.3",
};

/// How the local level T comes from the local mean m and deviation s.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Method {
    /// T = m − c.
    Mean { c: f64 },
    /// T = m·(1 + k·(s/r − 1)).
    Sauvola { k: f64, r: f64 },
    /// T = m + k·s.
    Niblack { k: f64 },
}

impl Method {
    /// The level for local mean `m` and standard deviation `s`.
    #[inline]
    pub fn level(self, m: f64, s: f64) -> f64 {
        match self {
            Method::Mean { c } => m - c,
            Method::Sauvola { k, r } => m * (1.0 + k * (s / r - 1.0)),
            Method::Niblack { k } => m + k * s,
        }
    }
}

/// Thresholds `src` against local levels over a `window`×`window` square
/// centred on each pixel and clipped to the frame. With n in-frame pixels
/// and S, SQ their luma sum and squared sum (from [`integrals`]), in f64:
/// m = S/n, var = max(0, SQ/n − m·m), s = √var; the output is `max` where
/// luma > T, else 0. Gray in, gray out; RGBA: R, G and B take the result,
/// alpha is kept. `window` must be odd (an even one is an error).
pub fn adaptive<P: Pixel>(
    src: &Plane<P>,
    method: Method,
    window: usize,
    max: u8,
) -> Result<Plane<P>> {
    if window.is_multiple_of(2) {
        return Err(Error::bad_value(
            "adaptive",
            "window",
            window,
            "must be odd, e.g. 15",
        ));
    }
    // One copy of the loop per method, each with its level rule inlined
    // (`move`, so the loop holds the parameters by value).
    Ok(match method {
        Method::Mean { c } => {
            run::<P, false>(src, window, max, move |m, s| Method::Mean { c }.level(m, s))
        }
        Method::Sauvola { k, r } => run::<P, true>(src, window, max, move |m, s| {
            Method::Sauvola { k, r }.level(m, s)
        }),
        Method::Niblack { k } => run::<P, true>(src, window, max, move |m, s| {
            Method::Niblack { k }.level(m, s)
        }),
    })
}

/// The local statistics of one pixel from its window's in-frame pixel count
/// `n`, sum `s` and squared sum `sq` (unused unless `SD`), and the output
/// value for its luma `v`.
#[inline(always)]
fn decide<const SD: bool>(
    v: u8,
    n: f64,
    s: u32,
    sq: u64,
    max: u8,
    level: &impl Fn(f64, f64) -> f64,
) -> u8 {
    let m = s as f64 / n;
    let sd = if SD {
        (sq as f64 / n - m * m).max(0.0).sqrt()
    } else {
        0.0
    };
    if v as f64 > level(m, sd) { max } else { 0 }
}

/// [`adaptive`] for one level rule; `SD` says whether it needs the deviation.
fn run<P: Pixel, const SD: bool>(
    src: &Plane<P>,
    window: usize,
    max: u8,
    level: impl Fn(f64, f64) -> f64 + Sync,
) -> Plane<P> {
    // One luma plane a frame: the integrals are taken of it.
    let luma = src.map(|p| p.luma());
    let (ii, sq) = integrals(&luma);
    let (w, h) = (src.width(), src.height());
    let half = window / 2;
    // Columns whose window is not clipped horizontally: x − half ≥ 0 and
    // x + half + 1 ≤ w. There the loop runs over plain slices and vectorises.
    let inner = half..(w.saturating_sub(half)).max(half);
    let mut out = src.to_packed();
    out.par_rows_mut().for_each(|(y, row)| {
        let (y0, y1) = (y.saturating_sub(half), (y + half + 1).min(h));
        let (top, bot) = (ii.row(y0), ii.row(y1));
        let (top_sq, bot_sq) = (sq.row(y0), sq.row(y1));
        let rows = (y1 - y0) as f64;
        let lum = luma.row(y);
        // The rectangle sums of `rect_sum_u32` / `rect_sum_u64`, read from rows.
        let rect = |x0: usize, x1: usize| {
            let s = bot[x1]
                .wrapping_sub(bot[x0])
                .wrapping_sub(top[x1])
                .wrapping_add(top[x0]);
            let q = if SD {
                bot_sq[x1]
                    .wrapping_sub(bot_sq[x0])
                    .wrapping_sub(top_sq[x1])
                    .wrapping_add(top_sq[x0])
            } else {
                0
            };
            (s, q)
        };
        let edge = |x: usize| {
            let (x0, x1) = (x.saturating_sub(half), (x + half + 1).min(w));
            let (s, q) = rect(x0, x1);
            decide::<SD>(lum[x], (x1 - x0) as f64 * rows, s, q, max, &level)
        };
        for x in (0..inner.start.min(w)).chain(inner.end..w) {
            set(&mut row[x], edge(x));
        }
        let n = window as f64 * rows;
        let span = 2 * half + 1;
        // Interior, in runs of 64 so that the decisions fill a small array
        // first; the pixels are written after.
        let mut values = [0u8; 64];
        for start in inner.clone().step_by(values.len()) {
            let len = values.len().min(inner.end - start);
            let (x0, x1) = (start - half, start - half + span);
            let cols = (
                &bot[x1..][..len],
                &bot[x0..][..len],
                &top[x1..][..len],
                &top[x0..][..len],
            );
            let sq_cols = if SD {
                (
                    &bot_sq[x1..][..len],
                    &bot_sq[x0..][..len],
                    &top_sq[x1..][..len],
                    &top_sq[x0..][..len],
                )
            } else {
                (&[][..], &[][..], &[][..], &[][..])
            };
            let lum = &lum[start..][..len];
            for j in 0..len {
                let s = cols.0[j]
                    .wrapping_sub(cols.1[j])
                    .wrapping_sub(cols.2[j])
                    .wrapping_add(cols.3[j]);
                let q = if SD {
                    sq_cols.0[j]
                        .wrapping_sub(sq_cols.1[j])
                        .wrapping_sub(sq_cols.2[j])
                        .wrapping_add(sq_cols.3[j])
                } else {
                    0
                };
                values[j] = decide::<SD>(lum[j], n, s, q, max, &level);
            }
            for (o, &v) in row[start..start + len].iter_mut().zip(&values[..len]) {
                set(o, v);
            }
        }
    });
    out
}

/// Writes the decision to the colour channels, keeping alpha.
#[inline(always)]
fn set<P: Pixel>(o: &mut P, v: u8) {
    for c in 0..P::FILTERED {
        o.set_channel(c, v);
    }
}

/// The `adaptive` chain op.
#[derive(Debug)]
pub struct Adaptive {
    pub method: Method,
    pub window: usize,
    pub max: u8,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let window = p.usize("window")?;
    if window.is_multiple_of(2) {
        return Err(Error::bad_value(
            "adaptive",
            "window",
            window,
            format!(
                "must be odd, from 3 to 1001; try {} or {}",
                window - 1,
                window + 1
            ),
        ));
    }
    let k = p.opt_f64("k");
    let method = match p.word("method")? {
        "mean" => {
            if let Some(k) = k {
                return Err(Error::bad_value(
                    "adaptive",
                    "k",
                    k,
                    "k is used by method=sauvola and method=niblack; method=mean uses c",
                ));
            }
            Method::Mean { c: p.f64("c")? }
        }
        "sauvola" => Method::Sauvola {
            k: k.unwrap_or(0.34),
            r: p.f64("r")?,
        },
        "niblack" => Method::Niblack {
            k: k.unwrap_or(-0.2),
        },
        other => {
            return Err(Error::bad_value(
                "adaptive",
                "method",
                other,
                format!("expected one of {}", METHODS.join(", ")),
            ));
        }
    };
    Ok(Box::new(Adaptive {
        method,
        window,
        max: p.f64("max")? as u8,
    }))
}

impl Op for Adaptive {
    fn name(&self) -> &'static str {
        "adaptive"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Gray(p) => Frame::Gray(adaptive(p, self.method, self.window, self.max)?),
            Frame::Rgba(p) => Frame::Rgba(adaptive(p, self.method, self.window, self.max)?),
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

    /// A bright page (200, with a gentle gradient) with a dark 2-pixel stroke
    /// (30) along row 10 and column 20.
    fn page() -> Plane<u8> {
        Plane::from_fn(40, 24, |x, y| {
            if is_stroke(x, y) {
                30
            } else {
                190 + (x / 4) as u8
            }
        })
    }

    fn is_stroke(x: usize, y: usize) -> bool {
        (10..12).contains(&y) || (20..22).contains(&x)
    }

    /// The definition pixel by pixel, summing each clipped window directly.
    fn reference(img: &Plane<u8>, method: Method, window: usize, max: u8) -> Plane<u8> {
        let (w, h, half) = (img.width(), img.height(), window / 2);
        Plane::from_fn(w, h, |x, y| {
            let (x0, x1) = (x.saturating_sub(half), (x + half + 1).min(w));
            let (y0, y1) = (y.saturating_sub(half), (y + half + 1).min(h));
            let (mut s, mut q) = (0u64, 0u64);
            for yy in y0..y1 {
                for xx in x0..x1 {
                    let v = img.get(xx, yy) as u64;
                    s += v;
                    q += v * v;
                }
            }
            let n = ((x1 - x0) * (y1 - y0)) as f64;
            let m = s as f64 / n;
            let sd = (q as f64 / n - m * m).max(0.0).sqrt();
            if img.get(x, y) as f64 > method.level(m, sd) {
                max
            } else {
                0
            }
        })
    }

    #[test]
    fn every_method_matches_the_direct_window_sums() {
        let img = Plane::from_fn(150, 37, |x, y| {
            ((x * 29 + y * 53 + (x * y) % 17 * 9) % 256) as u8
        });
        let methods = [
            Method::Mean { c: 3.5 },
            Method::Mean { c: -2.0 },
            Method::Sauvola { k: 0.34, r: 128.0 },
            Method::Niblack { k: -0.2 },
        ];
        for method in methods {
            for window in [3, 15, 71, 149, 301] {
                assert_eq!(
                    adaptive(&img, method, window, 200).unwrap(),
                    reference(&img, method, window, 200),
                    "{method:?} {window}"
                );
            }
        }
    }

    #[test]
    fn flat_frame_is_all_max_for_mean_with_positive_c() {
        let img = Plane::new(9, 7, 120u8);
        let out = adaptive(&img, Method::Mean { c: 5.0 }, 5, 200).unwrap();
        assert_eq!(out, Plane::new(9, 7, 200));
        // With c < 0 the level is above every pixel.
        let out = adaptive(&img, Method::Mean { c: -1.0 }, 5, 200).unwrap();
        assert_eq!(out, Plane::new(9, 7, 0));
    }

    #[test]
    fn dark_stroke_on_bright_page_is_found_by_mean_and_sauvola() {
        let img = page();
        for method in [
            Method::Mean { c: 5.0 },
            Method::Sauvola { k: 0.34, r: 128.0 },
        ] {
            let out = adaptive(&img, method, 15, 255).unwrap();
            for y in 0..img.height() {
                for x in 0..img.width() {
                    let want = if is_stroke(x, y) { 0 } else { 255 };
                    assert_eq!(out.get(x, y), want, "{method:?} at ({x}, {y})");
                }
            }
        }
    }

    #[test]
    fn niblack_level_follows_mean_plus_k_times_deviation() {
        // [0, 100, 0]: at x=1 the window holds all three, m = 33.3 and
        // s = √(10000/3 − m²) = 47.1, so T = 33.3 − 0.2·47.1 = 23.9 < 100;
        // at x=0 it holds {0, 100}: m = 50, s = 50, T = 40 > 0.
        let img = Plane::from_fn(3, 1, |x, _| if x == 1 { 100 } else { 0 });
        let out = adaptive(&img, Method::Niblack { k: -0.2 }, 3, 255).unwrap();
        assert_eq!(out.row(0), &[0, 255, 0]);
        let out = adaptive(&img, Method::Niblack { k: 1.5 }, 3, 255).unwrap();
        assert_eq!(
            out.row(0),
            &[0, 0, 0],
            "T = 33.3 + 1.5·47.1 = 104 is above 100"
        );
    }

    #[test]
    fn window_larger_than_the_frame_is_clipped() {
        // In a 5×1 frame with a 101 window every pixel sees the whole frame: m = 30.
        let img = Plane::from_vec(5, 1, vec![10u8, 20, 30, 40, 50]).unwrap();
        let out = adaptive(&img, Method::Mean { c: 0.0 }, 101, 1).unwrap();
        assert_eq!(out.row(0), &[0, 0, 0, 1, 1]);
        // Corner clipping: at x=0 a 3-window covers {10, 20}: m = 15 > 10.
        let out = adaptive(&img, Method::Mean { c: 0.0 }, 3, 1).unwrap();
        assert_eq!(out.row(0), &[0, 0, 0, 0, 1]);
    }

    #[test]
    fn even_window_is_an_error_naming_window() {
        let e = parse_op("adaptive:window=16").unwrap_err().to_string();
        assert!(e.contains("window=16") && e.contains("odd"), "{e}");
        assert!(adaptive(&Plane::new(3, 3, 0u8), Method::Mean { c: 1.0 }, 4, 255).is_err());
        assert!(parse_op("adaptive:window=1").is_err());
        assert!(parse_op("adaptive:window=1003").is_err());
    }

    #[test]
    fn k_with_mean_is_an_error_and_defaults_depend_on_method() {
        let e = parse_op("adaptive:k=0.5").unwrap_err().to_string();
        assert!(e.contains("k=0.5") && e.contains("sauvola"), "{e}");
        assert!(parse_op("adaptive:method=niblack").is_ok());
        assert!(parse_op("adaptive:method=sauvola,k=0.2,r=64").is_ok());
    }

    #[test]
    fn rgba_writes_colour_and_keeps_alpha() {
        let img = Plane::from_fn(6, 6, |x, y| {
            if x == 2 && y == 3 {
                [0u8, 0, 0, 77]
            } else {
                [200, 210, 220, 9]
            }
        });
        let mut op = parse_op("adaptive:window=5,max=250").unwrap();
        let Frame::Rgba(out) = op.apply(&Frame::Rgba(img)).unwrap() else {
            panic!("expected RGBA")
        };
        assert_eq!(out.get(2, 3), [0, 0, 0, 77]);
        assert_eq!(out.get(0, 0), [250, 250, 250, 9]);
    }
}
