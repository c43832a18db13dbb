//! `warp`: affine and perspective warps, as OpenCV's warpAffine and
//! warpPerspective, with pixel centres at integer coordinates.
//!
//! The user's matrix maps source to destination (or, with `inverse=true`,
//! destination to source). [`Transform`] holds the destination→source
//! mapping, inverted in f64 and then cast to f32; [`warp`] evaluates it for
//! every destination pixel in f32 and samples the source there (nearest,
//! bilinear or bicubic, every channel, alpha too). Taps outside the frame read
//! a constant pixel or the clamped coordinate.

use rayon::prelude::*;

use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::pixel::Pixel;
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "warp",
    summary: "affine or perspective warp, as OpenCV warpAffine / warpPerspective",
    params: &[
        ParamSpec::optional(
            "affine",
            Kind::List {
                lens: &[6],
                max_len: 6,
            },
            "2×3 matrix, row-major, mapping source to destination (give affine or perspective)",
        ),
        ParamSpec::optional(
            "perspective",
            Kind::List {
                lens: &[9],
                max_len: 9,
            },
            "3×3 matrix, row-major, mapping source to destination (give affine or perspective)",
        ),
        ParamSpec::new(
            "inverse",
            Kind::Bool,
            "false",
            "true: the matrix maps destination to source",
        ),
        ParamSpec::optional("size", Kind::Dims, "output size [default: the input size]"),
        ParamSpec::new(
            "interpolation",
            Kind::Choice(&["nearest", "bilinear", "bicubic"]),
            "bilinear",
            "how the source is sampled",
        ),
        ParamSpec::new(
            "border",
            Kind::Choice(&["constant", "replicate"]),
            "constant",
            "what taps outside the source read",
        ),
        ParamSpec::new(
            "value",
            Kind::Int { min: 0, max: 255 },
            "0",
            "the constant border's colour (alpha opaque); also where the perspective divisor is 0",
        ),
    ],
    example: "warp:affine=[0.9,-0.1,12,0.1,0.9,-5],interpolation=bicubic",
};

/// A destination→source mapping in f32, evaluated per destination pixel
/// (x, y) left to right without fused multiply-adds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Transform {
    /// sx = m0·x + m1·y + m2, sy = m3·x + m4·y + m5.
    Affine([f32; 6]),
    /// w = m6·x + m7·y + m8, sx = (m0·x + m1·y + m2)/w,
    /// sy = (m3·x + m4·y + m5)/w; w == 0 gives the border's fill pixel.
    Perspective([f32; 9]),
}

/// Which way a user's matrix maps.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Direction {
    /// Source to destination, as OpenCV without WARP_INVERSE_MAP; inverted.
    SrcToDst,
    /// Destination to source; used as it is.
    DstToSrc,
}

impl Transform {
    /// From a row-major 2×3 matrix. Inversion (`SrcToDst`) is in f64, as
    /// OpenCV's invertAffineTransform; a singular matrix is an error naming it.
    pub fn affine(m: [f64; 6], dir: Direction) -> Result<Self> {
        let d = match dir {
            Direction::DstToSrc => m,
            Direction::SrcToDst => invert_affine(&m).ok_or_else(|| singular("affine", &m))?,
        };
        to_f32("affine", &m, &d).map(Transform::Affine)
    }

    /// From a row-major 3×3 matrix. Inversion (`SrcToDst`) is in f64 by the
    /// adjugate; a singular matrix is an error naming it. The result is not
    /// normalised.
    pub fn perspective(m: [f64; 9], dir: Direction) -> Result<Self> {
        let d = match dir {
            Direction::DstToSrc => m,
            Direction::SrcToDst => invert_3x3(&m).ok_or_else(|| singular("perspective", &m))?,
        };
        to_f32("perspective", &m, &d).map(Transform::Perspective)
    }
}

fn list(m: &[f64]) -> String {
    let items: Vec<String> = m.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(","))
}

fn singular(key: &str, m: &[f64]) -> Error {
    Error::bad_value(
        "warp",
        key,
        list(m),
        "the matrix is singular (determinant 0), so it has no inverse; give an invertible matrix, \
         or inverse=true if it already maps destination to source",
    )
}

fn to_f32<const N: usize>(key: &str, m: &[f64], d: &[f64; N]) -> Result<[f32; N]> {
    let f: [f32; N] = std::array::from_fn(|i| d[i] as f32);
    if f.iter().all(|v| v.is_finite()) {
        Ok(f)
    } else {
        Err(Error::bad_value(
            "warp",
            key,
            list(m),
            "the destination→source matrix has an entry beyond f32's range (±3.4e38)",
        ))
    }
}

/// OpenCV's invertAffineTransform, in f64; `None` when singular.
fn invert_affine(m: &[f64; 6]) -> Option<[f64; 6]> {
    let det = m[0] * m[4] - m[1] * m[3];
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let d = 1.0 / det;
    let (a11, a22, a12, a21) = (m[4] * d, m[0] * d, -m[1] * d, -m[3] * d);
    let b1 = -a11 * m[2] - a12 * m[5];
    let b2 = -a21 * m[2] - a22 * m[5];
    let inv = [a11, a12, b1, a21, a22, b2];
    inv.iter().all(|v| v.is_finite()).then_some(inv)
}

/// The inverse of a 3×3 matrix by the adjugate, in f64; `None` when singular.
fn invert_3x3(m: &[f64; 9]) -> Option<[f64; 9]> {
    let [a, b, c, d, e, f, g, h, i] = *m;
    let (c00, c01, c02) = (e * i - f * h, f * g - d * i, d * h - e * g);
    let det = a * c00 + b * c01 + c * c02;
    if det == 0.0 || !det.is_finite() {
        return None;
    }
    let r = 1.0 / det;
    let inv = [
        c00 * r,
        (c * h - b * i) * r,
        (b * f - c * e) * r,
        c01 * r,
        (a * i - c * g) * r,
        (c * d - a * f) * r,
        c02 * r,
        (b * g - a * h) * r,
        (a * e - b * d) * r,
    ];
    inv.iter().all(|v| v.is_finite()).then_some(inv)
}

/// How the source is sampled at a non-integer point.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Interpolation {
    /// The tap (floor(sx + 0.5), floor(sy + 0.5)).
    Nearest,
    /// (1−fy)·((1−fx)·p00 + fx·p01) + fy·((1−fx)·p10 + fx·p11), f32.
    Bilinear,
    /// OpenCV's cubic (A = −0.75) over 4×4 taps, rows first, f32.
    Bicubic,
}

/// What a tap outside the source reads.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WarpBorder {
    /// `P::splat(value)`: the value in R, G and B, alpha opaque.
    Constant(u8),
    /// The pixel at the clamped coordinate.
    Replicate,
}

impl WarpBorder {
    /// The pixel written where there is no source point at all (perspective
    /// divisor 0, or a coordinate that is NaN): the constant pixel, or
    /// opaque black with `Replicate`, which has nothing to replicate there.
    pub fn fill<P: Pixel>(self) -> P {
        match self {
            WarpBorder::Constant(v) => P::splat(v),
            WarpBorder::Replicate => P::splat(0),
        }
    }
}

/// Coordinates are clamped to ±1e9 before sampling: every point beyond that
/// (and ±∞) already reads the same pixel, and the clamp keeps the integer
/// conversions in range.
const COORD_LIMIT: f32 = 1.0e9;

/// `floor(v)` as an integer for `|v| ≤ COORD_LIMIT`; the same as
/// `v.floor() as isize` but without a call to `floorf` (the x86-64 baseline
/// has no rounding instruction).
#[inline(always)]
fn floor_int(v: f32) -> isize {
    let t = v as i32;
    (if t as f32 > v { t - 1 } else { t }) as isize
}

/// Exactly [`super::pixel::saturate_u8`] (round half away from zero, then
/// saturate), without a call to `roundf`: after the clamp, truncation plus a
/// comparison of the exact fraction rounds the same way, and NaN gives 0.
#[inline(always)]
fn round_u8(v: f32) -> u8 {
    let c = v.max(0.0).min(255.0);
    let t = c as u32;
    (t + ((c - t as f32) >= 0.5) as u32) as u8
}

/// OpenCV's interpolateCubic with A = −0.75, in f32, the same operations.
#[inline(always)]
fn cubic_weights(f: f32) -> [f32; 4] {
    const A: f32 = -0.75;
    let w0 = ((A * (f + 1.0) - 5.0 * A) * (f + 1.0) + 8.0 * A) * (f + 1.0) - 4.0 * A;
    let w1 = ((A + 2.0) * f - (A + 3.0)) * f * f + 1.0;
    let w2 = ((A + 2.0) * (1.0 - f) - (A + 3.0)) * (1.0 - f) * (1.0 - f) + 1.0;
    [w0, w1, w2, 1.0 - w0 - w1 - w2]
}

/// The source with its border rule.
struct Source<'a, P> {
    src: &'a Plane<P>,
    w: isize,
    h: isize,
    replicate: bool,
    fill: P,
}

impl<P: Pixel> Source<'_, P> {
    #[inline(always)]
    fn tap(&self, x: isize, y: isize) -> P {
        if x >= 0 && x < self.w && y >= 0 && y < self.h {
            self.src.get(x as usize, y as usize)
        } else if self.replicate {
            self.src.get(
                x.clamp(0, self.w - 1) as usize,
                y.clamp(0, self.h - 1) as usize,
            )
        } else {
            self.fill
        }
    }

    /// Whether taps `x0+lo ..= x0+hi` by `y0+lo ..= y0+hi` all read the
    /// constant pixel; then any interpolation of them rounds back to it.
    #[inline(always)]
    fn all_constant(&self, x0: isize, y0: isize, lo: isize, hi: isize) -> bool {
        !self.replicate && (x0 + hi < 0 || x0 + lo >= self.w || y0 + hi < 0 || y0 + lo >= self.h)
    }

    /// Whether taps `x0+lo ..= x0+hi` by `y0+lo ..= y0+hi` are all inside.
    #[inline(always)]
    fn inside(&self, x0: isize, y0: isize, lo: isize, hi: isize) -> bool {
        x0 + lo >= 0 && x0 + hi < self.w && y0 + lo >= 0 && y0 + hi < self.h
    }

    /// The clamped coordinates, or `None` for NaN.
    #[inline(always)]
    fn coords(sx: f32, sy: f32) -> Option<(f32, f32)> {
        if sx.is_nan() || sy.is_nan() {
            return None;
        }
        Some((
            sx.clamp(-COORD_LIMIT, COORD_LIMIT),
            sy.clamp(-COORD_LIMIT, COORD_LIMIT),
        ))
    }

    #[inline(always)]
    fn nearest(&self, sx: f32, sy: f32) -> P {
        let Some((sx, sy)) = Self::coords(sx, sy) else {
            return self.fill;
        };
        self.tap(floor_int(sx + 0.5), floor_int(sy + 0.5))
    }

    #[inline(always)]
    fn bilinear(&self, sx: f32, sy: f32) -> P {
        let Some((sx, sy)) = Self::coords(sx, sy) else {
            return self.fill;
        };
        let (x0, y0) = (floor_int(sx), floor_int(sy));
        if self.all_constant(x0, y0, 0, 1) {
            return self.fill;
        }
        let (fx, fy) = (sx - x0 as f32, sy - y0 as f32);
        let [p00, p01, p10, p11] = if self.inside(x0, y0, 0, 1) {
            let (xi, yi) = (x0 as usize, y0 as usize);
            let (r0, r1) = (self.src.row(yi), self.src.row(yi + 1));
            [r0[xi], r0[xi + 1], r1[xi], r1[xi + 1]]
        } else {
            [
                self.tap(x0, y0),
                self.tap(x0 + 1, y0),
                self.tap(x0, y0 + 1),
                self.tap(x0 + 1, y0 + 1),
            ]
        };
        let (gx, gy) = (1.0 - fx, 1.0 - fy);
        let mut o = P::default();
        for c in 0..P::CHANNELS {
            let top = gx * p00.channel(c) as f32 + fx * p01.channel(c) as f32;
            let bot = gx * p10.channel(c) as f32 + fx * p11.channel(c) as f32;
            o.set_channel(c, round_u8(gy * top + fy * bot));
        }
        o
    }

    #[inline(always)]
    fn bicubic(&self, sx: f32, sy: f32) -> P {
        let Some((sx, sy)) = Self::coords(sx, sy) else {
            return self.fill;
        };
        let (x0, y0) = (floor_int(sx), floor_int(sy));
        if self.all_constant(x0, y0, -1, 2) {
            return self.fill;
        }
        let (wx, wy) = (cubic_weights(sx - x0 as f32), cubic_weights(sy - y0 as f32));
        let inside = self.inside(x0, y0, -1, 2);
        let mut acc = [0.0f32; 4];
        for (r, &wr) in wy.iter().enumerate() {
            let y = y0 - 1 + r as isize;
            let taps: [P; 4] = if inside {
                let (xi, row) = (x0 as usize - 1, self.src.row(y as usize));
                [row[xi], row[xi + 1], row[xi + 2], row[xi + 3]]
            } else {
                std::array::from_fn(|i| self.tap(x0 - 1 + i as isize, y))
            };
            for (c, a) in acc.iter_mut().enumerate().take(P::CHANNELS) {
                let mut h = 0.0f32;
                for (t, &wi) in taps.iter().zip(&wx) {
                    h += wi * t.channel(c) as f32;
                }
                *a += wr * h;
            }
        }
        let mut o = P::default();
        for (c, &a) in acc.iter().enumerate().take(P::CHANNELS) {
            o.set_channel(c, round_u8(a));
        }
        o
    }
}

/// Warps `src` into an `out_w`×`out_h` plane: destination pixel (x, y) takes
/// the source sampled at `dst_to_src`(x, y). Rows run in parallel.
pub fn warp<P: Pixel>(
    src: &Plane<P>,
    dst_to_src: &Transform,
    out_w: usize,
    out_h: usize,
    interp: Interpolation,
    border: WarpBorder,
) -> Plane<P> {
    let fill = border.fill::<P>();
    let mut out = Plane::new(out_w, out_h, fill);
    if src.is_empty() {
        // No pixel to read or replicate: every tap is the fill.
        return out;
    }
    let s = Source {
        src,
        w: src.width() as isize,
        h: src.height() as isize,
        replicate: border == WarpBorder::Replicate,
        fill,
    };
    match interp {
        Interpolation::Nearest => map_rows(&mut out, dst_to_src, fill, |x, y| s.nearest(x, y)),
        Interpolation::Bilinear => map_rows(&mut out, dst_to_src, fill, |x, y| s.bilinear(x, y)),
        Interpolation::Bicubic => map_rows(&mut out, dst_to_src, fill, |x, y| s.bicubic(x, y)),
    }
    out
}

/// Evaluates the transform for every pixel of `out` and writes `sample` of
/// the source point. `m1·y` (and the like) are computed once a row, which
/// keeps the left-to-right order of `m0·x + m1·y + m2`.
fn map_rows<P: Pixel>(
    out: &mut Plane<P>,
    t: &Transform,
    fill: P,
    sample: impl Fn(f32, f32) -> P + Sync,
) {
    let t = *t;
    out.par_rows_mut().with_min_len(4).for_each(|(y, row)| {
        let yf = y as f32;
        match t {
            Transform::Affine(m) => {
                let (ry, cy) = (m[1] * yf, m[4] * yf);
                for (x, o) in row.iter_mut().enumerate() {
                    let xf = x as f32;
                    *o = sample(m[0] * xf + ry + m[2], m[3] * xf + cy + m[5]);
                }
            }
            Transform::Perspective(m) => {
                let (ry, cy, wy) = (m[1] * yf, m[4] * yf, m[7] * yf);
                for (x, o) in row.iter_mut().enumerate() {
                    let xf = x as f32;
                    let w = m[6] * xf + wy + m[8];
                    *o = if w == 0.0 {
                        fill
                    } else {
                        sample((m[0] * xf + ry + m[2]) / w, (m[3] * xf + cy + m[5]) / w)
                    };
                }
            }
        }
    });
}

/// The `warp` chain op.
#[derive(Debug)]
pub struct Warp {
    pub transform: Transform,
    /// The output size; `None` keeps the input's.
    pub size: Option<(usize, usize)>,
    pub interpolation: Interpolation,
    pub border: WarpBorder,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let dir = if p.bool("inverse")? {
        Direction::DstToSrc
    } else {
        Direction::SrcToDst
    };
    let transform = match (p.list("affine"), p.list("perspective")) {
        (Some(m), None) => Transform::affine(array("affine", m)?, dir)?,
        (None, Some(m)) => Transform::perspective(array("perspective", m)?, dir)?,
        (Some(_), Some(m)) => {
            return Err(Error::bad_value(
                "warp",
                "perspective",
                list(m),
                "give either affine or perspective, not both",
            ));
        }
        (None, None) => {
            return Err(Error::MissingKey {
                op: "warp".into(),
                key: "affine or perspective".into(),
                help: "affine=[a,b,c,d,e,f] is a 2×3 matrix, perspective=[9 numbers] a 3×3 one, both row-major".into(),
            });
        }
    };
    let interpolation = match p.word("interpolation")? {
        "nearest" => Interpolation::Nearest,
        "bicubic" => Interpolation::Bicubic,
        _ => Interpolation::Bilinear,
    };
    let border = match p.word("border")? {
        "replicate" => WarpBorder::Replicate,
        _ => WarpBorder::Constant(p.f64("value")? as u8),
    };
    Ok(Box::new(Warp {
        transform,
        size: p.dims("size"),
        interpolation,
        border,
    }))
}

fn array<const N: usize>(key: &str, m: &[f64]) -> Result<[f64; N]> {
    m.try_into()
        .map_err(|_| Error::bad_value("warp", key, list(m), format!("expected {N} numbers")))
}

impl Op for Warp {
    fn name(&self) -> &'static str {
        "warp"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let (w, h) = self.output_size(frame.width(), frame.height())?;
        Ok(match frame {
            Frame::Gray(p) => Frame::Gray(warp(
                p,
                &self.transform,
                w,
                h,
                self.interpolation,
                self.border,
            )),
            Frame::Rgba(p) => Frame::Rgba(warp(
                p,
                &self.transform,
                w,
                h,
                self.interpolation,
                self.border,
            )),
        })
    }

    fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        Ok(self.size.unwrap_or((width, height)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::parse_op;
    use crate::ops::pixel::saturate_u8;

    const ALL: [Interpolation; 3] = [
        Interpolation::Nearest,
        Interpolation::Bilinear,
        Interpolation::Bicubic,
    ];

    fn gray(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| ((x * 37 + y * 91 + x * y * 7) % 256) as u8)
    }

    fn rgba(w: usize, h: usize) -> Plane<[u8; 4]> {
        Plane::from_fn(w, h, |x, y| {
            [
                (x * 40) as u8,
                (y * 30) as u8,
                ((x + y) * 11) as u8,
                (x * y) as u8,
            ]
        })
    }

    fn run(text: &str, frame: Frame) -> Frame {
        parse_op(text).unwrap().apply(&frame).unwrap()
    }

    #[test]
    fn fast_round_and_floor_match_the_definitions() {
        let mut vals = vec![
            0.49999997f32,
            0.5,
            1.5,
            2.5,
            254.5,
            254.49998,
            255.4,
            255.5,
            256.0,
            -0.4,
            -0.5,
            -0.6,
            -3.0,
        ];
        vals.extend([
            f32::NAN,
            f32::INFINITY,
            f32::NEG_INFINITY,
            1e30,
            -1e30,
            0.0,
            -0.0,
        ]);
        vals.extend((0..20000).map(|i| i as f32 * 0.0137 - 7.0));
        for v in vals {
            assert_eq!(round_u8(v), saturate_u8(v), "round {v}");
        }
        for v in [
            0.0f32,
            -0.0,
            0.5,
            -0.5,
            -1.0,
            -1.5,
            3.99999,
            -3.00001,
            8388607.5,
            -8388608.5,
            1e9,
            -1e9,
            123456789.0,
        ] {
            assert_eq!(floor_int(v), v.floor() as isize, "floor {v}");
        }
    }

    #[test]
    fn identity_is_an_exact_copy_for_every_interpolation() {
        let (g, c) = (gray(17, 9), rgba(17, 9));
        for interp in ALL {
            for t in [
                Transform::Affine([1., 0., 0., 0., 1., 0.]),
                Transform::Perspective([1., 0., 0., 0., 1., 0., 0., 0., 1.]),
            ] {
                for border in [WarpBorder::Constant(77), WarpBorder::Replicate] {
                    assert_eq!(warp(&g, &t, 17, 9, interp, border), g, "{interp:?} {t:?}");
                    assert_eq!(warp(&c, &t, 17, 9, interp, border), c, "{interp:?} {t:?}");
                }
            }
        }
    }

    #[test]
    fn integer_translation_is_a_shift_with_the_border_value_elsewhere() {
        let src = gray(11, 8);
        for interp in ["nearest", "bilinear", "bicubic"] {
            for (tx, ty) in [(3i64, 2i64), (-4, 1), (0, -5)] {
                let op = format!("warp:affine=[1,0,{tx},0,1,{ty}],interpolation={interp},value=9");
                let Frame::Gray(out) = run(&op, Frame::Gray(src.clone())) else {
                    panic!("expected gray")
                };
                for y in 0..8i64 {
                    for x in 0..11i64 {
                        let (sx, sy) = (x - tx, y - ty);
                        let inside = (0..11).contains(&sx) && (0..8).contains(&sy);
                        let want = if inside {
                            src.get(sx as usize, sy as usize)
                        } else {
                            9
                        };
                        assert_eq!(out.get(x as usize, y as usize), want, "{op} at ({x}, {y})");
                    }
                }
            }
        }
    }

    #[test]
    fn replicate_border_repeats_the_edge() {
        let src = Plane::from_vec(3, 1, vec![10u8, 20, 30]).unwrap();
        let t = Transform::affine([1., 0., -2., 0., 1., 0.], Direction::DstToSrc).unwrap();
        let out = warp(
            &src,
            &t,
            3,
            1,
            Interpolation::Bilinear,
            WarpBorder::Replicate,
        );
        assert_eq!(out.row(0), &[10, 10, 10]);
        let out = warp(
            &src,
            &t,
            3,
            1,
            Interpolation::Bilinear,
            WarpBorder::Constant(5),
        );
        assert_eq!(out.row(0), &[5, 5, 10]);
    }

    #[test]
    fn inverse_true_with_the_inverted_matrix_gives_the_same_frame() {
        let src = Frame::Rgba(rgba(23, 19));
        for interp in ["nearest", "bilinear", "bicubic"] {
            let fwd = run(
                &format!("warp:affine=[2,0,3,0,0.5,-1],interpolation={interp}"),
                src.clone(),
            );
            let inv = run(
                &format!("warp:affine=[0.5,0,-1.5,0,2,2],inverse=true,interpolation={interp}"),
                src.clone(),
            );
            assert_eq!(fwd, inv, "{interp}");
            let fwd = run(
                &format!("warp:perspective=[2,0,3,0,4,-1,0,0,1],interpolation={interp}"),
                src.clone(),
            );
            let inv = run(
                &format!(
                    "warp:perspective=[0.5,0,-1.5,0,0.25,0.25,0,0,1],inverse=true,interpolation={interp}"
                ),
                src.clone(),
            );
            assert_eq!(fwd, inv, "{interp}");
        }
    }

    #[test]
    fn singular_matrix_is_an_error_naming_it() {
        let e = parse_op("warp:affine=[1,2,3,2,4,5]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("affine=[1,2,3,2,4,5]") && e.contains("singular"),
            "{e}"
        );
        let e = parse_op("warp:perspective=[1,2,3,4,5,6,7,8,9]")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("perspective=[1,2,3,4,5,6,7,8,9]") && e.contains("singular"),
            "{e}"
        );
        // Already destination→source: nothing to invert, so it is allowed.
        assert!(parse_op("warp:affine=[1,2,3,2,4,5],inverse=true").is_ok());
    }

    #[test]
    fn exactly_one_matrix_is_required() {
        let e = parse_op("warp").unwrap_err().to_string();
        assert!(e.contains("affine") && e.contains("perspective"), "{e}");
        let e = parse_op("warp:affine=[1,0,0,0,1,0],perspective=[1,0,0,0,1,0,0,0,1]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("not both"), "{e}");
        assert!(parse_op("warp:affine=[1,0,0,0,1]").is_err());
        assert!(
            parse_op("warp:affine=[1e300,0,0,0,1e-300,0]").is_err(),
            "an inverse beyond f32"
        );
    }

    #[test]
    fn perspective_translation_equals_the_affine_one() {
        let src = Frame::Rgba(rgba(21, 13));
        for interp in ["nearest", "bilinear", "bicubic"] {
            let a = run(
                &format!("warp:affine=[1,0,2.25,0,1,-3.5],interpolation={interp}"),
                src.clone(),
            );
            let p = run(
                &format!("warp:perspective=[1,0,2.25,0,1,-3.5,0,0,1],interpolation={interp}"),
                src.clone(),
            );
            assert_eq!(a, p, "{interp}");
        }
    }

    #[test]
    fn size_sets_the_output_and_output_size() {
        let op = parse_op("warp:affine=[0.5,0,0,0,0.5,0],size=7x3").unwrap();
        assert_eq!(op.output_size(20, 10).unwrap(), (7, 3));
        let mut op = op;
        let out = op.apply(&Frame::Gray(gray(20, 10))).unwrap();
        assert_eq!((out.width(), out.height()), (7, 3));
        assert_eq!(
            parse_op("warp:affine=[1,0,0,0,1,0]")
                .unwrap()
                .output_size(20, 10)
                .unwrap(),
            (20, 10)
        );
    }

    #[test]
    fn bilinear_and_bicubic_follow_their_formulas() {
        let src = Plane::from_vec(4, 1, vec![0u8, 100, 100, 100]).unwrap();
        let at = |sx: f32, interp| {
            let t = Transform::Affine([0., 0., sx, 0., 0., 0.]);
            warp(&src, &t, 1, 1, interp, WarpBorder::Replicate).get(0, 0)
        };
        assert_eq!(at(0.5, Interpolation::Bilinear), 50);
        assert_eq!(at(0.25, Interpolation::Bilinear), 25);
        // Cubic weights at 1/2 are (−0.09375, 0.59375, 0.59375, −0.09375):
        // taps 0, 100, 100, 100 give 109.375, an overshoot linear cannot make.
        assert_eq!(at(1.5, Interpolation::Bicubic), 109);
        assert_eq!(cubic_weights(0.5), [-0.09375, 0.59375, 0.59375, -0.09375]);
        assert_eq!(cubic_weights(0.0), [0.0, 1.0, 0.0, 0.0]);
        // Nearest rounds half up: 0.5 → tap 1, 0.49 → tap 0.
        assert_eq!(at(0.49, Interpolation::Nearest), 0);
        assert_eq!(at(0.5, Interpolation::Nearest), 100);
    }

    #[test]
    fn zero_divisor_and_far_points_read_the_border() {
        let src = gray(5, 5);
        // w = x − 2: zero in column 2.
        let t = Transform::Perspective([1., 0., 0., 0., 1., 0., 1., 0., -2.]);
        let out = warp(
            &src,
            &t,
            5,
            5,
            Interpolation::Bilinear,
            WarpBorder::Constant(200),
        );
        assert!((0..5).all(|y| out.get(2, y) == 200));
        let out = warp(
            &src,
            &t,
            5,
            5,
            Interpolation::Bilinear,
            WarpBorder::Replicate,
        );
        assert!((0..5).all(|y| out.get(2, y) == 0));
        // A huge scale sends everything but the origin far away.
        let t = Transform::Affine([1e30, 0., 0., 0., 1e30, 0.]);
        let out = warp(
            &src,
            &t,
            5,
            5,
            Interpolation::Bicubic,
            WarpBorder::Constant(3),
        );
        assert_eq!(out.get(0, 0), src.get(0, 0));
        assert_eq!(out.get(4, 4), 3);
    }

    #[test]
    fn every_channel_is_warped_alpha_too() {
        let src = Plane::from_vec(2, 1, vec![[0u8, 0, 0, 0], [200, 100, 50, 255]]).unwrap();
        let t = Transform::Affine([0., 0., 0.5, 0., 0., 0.]);
        let out = warp(
            &src,
            &t,
            1,
            1,
            Interpolation::Bilinear,
            WarpBorder::Constant(0),
        );
        assert_eq!(out.get(0, 0), [100, 50, 25, 128]);
    }
}
