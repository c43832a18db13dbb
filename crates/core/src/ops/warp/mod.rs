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
use crate::color::saturate_u8;
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
            "colour of border=constant, alpha opaque (with replicate, points with no source are black)",
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

/// Coordinates are clamped to ±4194300 (just under 2^22) before sampling.
/// For a source up to 4 million pixels a side this changes no output: a
/// point that far out has only its outermost taps' value to read, and there
/// f32 keeps at most a half in the fraction, so every weighting of equal taps
/// is exact. It keeps the rounding tricks below in range. NaN becomes the
/// lower limit here and is flagged apart.
const COORD_LIMIT: f32 = 4_194_300.0;

/// 1.5·2^23: adding it to a float below 2^22 in magnitude rounds that float
/// to an integer (ties to even) held in the low mantissa bits.
const MAGIC: f32 = 12_582_912.0;
const MAGIC_BITS: i32 = 0x4B40_0000;

// Not `clamp`: that keeps NaN, and here NaN must become a number.
#[allow(clippy::manual_clamp)]
#[inline(always)]
fn clamp_coord(v: f32) -> f32 {
    v.max(-COORD_LIMIT).min(COORD_LIMIT)
}

/// `(floor(v), floor(v) as i32)` for `|v| < 2^22`, exactly as `f32::floor`,
/// without a call to `floorf` (the x86-64 baseline has no rounding
/// instruction) and without a saturating float-to-int conversion, so that it
/// vectorises.
#[inline(always)]
fn floor_parts(v: f32) -> (f32, i32) {
    let r = (v + MAGIC) - MAGIC;
    let f = if r > v { r - 1.0 } else { r };
    (f, (f + MAGIC).to_bits() as i32 - MAGIC_BITS)
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

/// Destination pixels handled together: coordinates, weights and rounding
/// run over a block as plain array loops, which vectorise; only the taps are
/// read one pixel at a time.
const BLOCK: usize = 32;
type Lanes = [f32; BLOCK];
type Ints = [i32; BLOCK];

/// Whether every lane of `v` lies in `lo..=hi`.
#[inline(always)]
fn all_within(v: &Ints, lo: i32, hi: i32) -> bool {
    v.iter().fold(true, |ok, &x| ok & (x >= lo) & (x <= hi))
}

/// The source with its border rule.
struct Source<'a, P> {
    src: &'a Plane<P>,
    data: &'a [P],
    stride: usize,
    w: i32,
    h: i32,
    replicate: bool,
    fill: P,
}

impl<P: Pixel> Source<'_, P> {
    #[inline(always)]
    fn tap(&self, x: i32, y: i32) -> P {
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

    /// The `N×N` taps whose top-left is (x0 + lo, y0 + lo), for every lane
    /// of a block, converted by `conv`, into `out[r·N + c][lane]`.
    #[inline(always)]
    fn gather<const N: usize, T: Copy>(
        &self,
        xi: &Ints,
        yi: &Ints,
        lo: i32,
        n: usize,
        conv: impl Fn(P) -> T,
        out: &mut [[T; BLOCK]],
    ) {
        let hi = lo + N as i32 - 1;
        if all_within(xi, -lo, self.w - 1 - hi) && all_within(yi, -lo, self.h - 1 - hi) {
            // The whole block reads inside the frame (most blocks do).
            for i in 0..BLOCK {
                let k = (yi[i] + lo) as usize * self.stride + (xi[i] + lo) as usize;
                for r in 0..N {
                    let row = &self.data[k + r * self.stride..][..N];
                    for (c, &p) in row.iter().enumerate() {
                        out[r * N + c][i] = conv(p);
                    }
                }
            }
            return;
        }
        for i in 0..n {
            let (x0, y0) = (xi[i] + lo, yi[i] + lo);
            let (x1, y1) = (x0 + N as i32 - 1, y0 + N as i32 - 1);
            if x0 >= 0 && x1 < self.w && y0 >= 0 && y1 < self.h {
                let k = y0 as usize * self.stride + x0 as usize;
                for r in 0..N {
                    let row = &self.data[k + r * self.stride..][..N];
                    for (c, &p) in row.iter().enumerate() {
                        out[r * N + c][i] = conv(p);
                    }
                }
            } else if !self.replicate && (x1 < 0 || x0 >= self.w || y1 < 0 || y0 >= self.h) {
                // Every tap is the constant pixel, which any interpolation
                // of them rounds back to.
                let fill = conv(self.fill);
                for t in out.iter_mut() {
                    t[i] = fill;
                }
            } else {
                for r in 0..N {
                    for c in 0..N {
                        out[r * N + c][i] = conv(self.tap(x0 + c as i32, y0 + r as i32));
                    }
                }
            }
        }
    }
}

/// A pixel's channels packed into a u32, channel c in bits 8c..8c+8, so
/// that the blending loops read any channel of a block with a shift and a
/// mask, which vectorises.
#[inline(always)]
fn pack<P: Pixel>(p: P) -> u32 {
    (0..P::CHANNELS).fold(0, |v, c| v | (p.channel(c) as u32) << (8 * c))
}

#[inline(always)]
fn unpack<P: Pixel>(v: u32) -> P {
    let mut p = P::default();
    for c in 0..P::CHANNELS {
        p.set_channel(c, (v >> (8 * c)) as u8);
    }
    p
}

/// The source points of one block of destination pixels: `xf` holds the
/// pixels' x as f32, `yf` their row. A lane with no source point (w == 0)
/// gets NaN.
#[inline(always)]
fn block_coords(t: &Transform, xf: &Lanes, yf: f32, sx: &mut Lanes, sy: &mut Lanes) {
    match *t {
        Transform::Affine(m) => {
            // m1·y is computed once a row; the order stays m0·x + m1·y + m2.
            let (ry, cy) = (m[1] * yf, m[4] * yf);
            for i in 0..BLOCK {
                sx[i] = m[0] * xf[i] + ry + m[2];
                sy[i] = m[3] * xf[i] + cy + m[5];
            }
        }
        Transform::Perspective(m) => {
            let (ry, cy, wy) = (m[1] * yf, m[4] * yf, m[7] * yf);
            for i in 0..BLOCK {
                let w = m[6] * xf[i] + wy + m[8];
                let (nx, ny) = (m[0] * xf[i] + ry + m[2], m[3] * xf[i] + cy + m[5]);
                sx[i] = if w == 0.0 { f32::NAN } else { nx / w };
                sy[i] = if w == 0.0 { f32::NAN } else { ny / w };
            }
        }
    }
}

/// Splits source points into the integer tap (floor of `v + shift`) and the
/// fraction; `bad` marks lanes with no source point.
#[inline(always)]
fn split(sx: &Lanes, sy: &Lanes, shift: f32) -> (Ints, Ints, Lanes, Lanes, [bool; BLOCK]) {
    let (mut xi, mut yi) = ([0i32; BLOCK], [0i32; BLOCK]);
    let (mut fx, mut fy) = ([0f32; BLOCK], [0f32; BLOCK]);
    let mut bad = [false; BLOCK];
    for i in 0..BLOCK {
        bad[i] = sx[i].is_nan() | sy[i].is_nan();
        let (x, y) = (clamp_coord(sx[i]) + shift, clamp_coord(sy[i]) + shift);
        let ((x0, xn), (y0, yn)) = (floor_parts(x), floor_parts(y));
        (xi[i], yi[i]) = (xn, yn);
        fx[i] = x - x0;
        fy[i] = y - y0;
    }
    (xi, yi, fx, fy, bad)
}

fn nearest_block<P: Pixel>(s: &Source<P>, sx: &Lanes, sy: &Lanes, out: &mut [P]) {
    let (xi, yi, _, _, bad) = split(sx, sy, 0.5);
    let mut t = [[P::default(); BLOCK]; 1];
    s.gather::<1, P>(&xi, &yi, 0, out.len(), |p| p, &mut t);
    for (i, o) in out.iter_mut().enumerate() {
        *o = if bad[i] { s.fill } else { t[0][i] };
    }
}

/// Channel `c` of packed taps as f32.
#[inline(always)]
fn chan(v: u32, c: usize) -> f32 {
    ((v >> (8 * c)) & 0xFF) as f32
}

fn bilinear_block<P: Pixel>(s: &Source<P>, sx: &Lanes, sy: &Lanes, out: &mut [P]) {
    let (xi, yi, fx, fy, bad) = split(sx, sy, 0.0);
    let mut t = [[0u32; BLOCK]; 4];
    s.gather::<2, u32>(&xi, &yi, 0, out.len(), pack, &mut t);
    let mut res = [0u32; BLOCK];
    for c in 0..P::CHANNELS {
        for i in 0..BLOCK {
            let (gx, gy) = (1.0 - fx[i], 1.0 - fy[i]);
            let top = gx * chan(t[0][i], c) + fx[i] * chan(t[1][i], c);
            let bot = gx * chan(t[2][i], c) + fx[i] * chan(t[3][i], c);
            res[i] |= (saturate_u8(gy * top + fy[i] * bot) as u32) << (8 * c);
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = if bad[i] { s.fill } else { unpack(res[i]) };
    }
}

fn bicubic_block<P: Pixel>(s: &Source<P>, sx: &Lanes, sy: &Lanes, out: &mut [P]) {
    let (xi, yi, fx, fy, bad) = split(sx, sy, 0.0);
    let (mut wx, mut wy) = ([[0f32; BLOCK]; 4], [[0f32; BLOCK]; 4]);
    for i in 0..BLOCK {
        let (a, b) = (cubic_weights(fx[i]), cubic_weights(fy[i]));
        for k in 0..4 {
            wx[k][i] = a[k];
            wy[k][i] = b[k];
        }
    }
    let mut t = [[0u32; BLOCK]; 16];
    s.gather::<4, u32>(&xi, &yi, -1, out.len(), pack, &mut t);
    let mut res = [0u32; BLOCK];
    for c in 0..P::CHANNELS {
        // Rows first (horizontal weights), then the vertical sum, per lane
        // in the order h = w0·t0 + w1·t1 + w2·t2 + w3·t3.
        let mut acc = [0f32; BLOCK];
        for (r, wr) in wy.iter().enumerate() {
            let mut h = [0f32; BLOCK];
            for (k, wk) in wx.iter().enumerate() {
                let taps = &t[r * 4 + k];
                for i in 0..BLOCK {
                    h[i] += wk[i] * chan(taps[i], c);
                }
            }
            for i in 0..BLOCK {
                acc[i] += wr[i] * h[i];
            }
        }
        for i in 0..BLOCK {
            res[i] |= (saturate_u8(acc[i]) as u32) << (8 * c);
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        *o = if bad[i] { s.fill } else { unpack(res[i]) };
    }
}

#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod avx2_rgba;

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
    if src.is_empty() || out_w == 0 || out_h == 0 {
        // No pixel to read or replicate: every tap is the fill.
        return Plane::new(out_w, out_h, fill);
    }
    // Every pixel is written below; zeros are the cheapest start.
    let mut out = Plane::new(out_w, out_h, P::default());
    // Taps are within 2^22 of the origin, so i32 sides are enough.
    let side = |n: usize| i32::try_from(n).unwrap_or(i32::MAX);
    let s = Source {
        src,
        data: src.as_slice(),
        stride: src.stride(),
        w: side(src.width()),
        h: side(src.height()),
        replicate: border == WarpBorder::Replicate,
        fill,
    };
    // Every x as f32, padded to whole blocks: one small allocation a frame.
    let xs: Vec<f32> = (0..out_w.div_ceil(BLOCK) * BLOCK)
        .map(|x| x as f32)
        .collect();
    let (x_blocks, _) = xs.as_chunks::<BLOCK>();
    let kernel = match interp {
        Interpolation::Nearest => nearest_block::<P>,
        Interpolation::Bilinear => bilinear_block::<P>,
        Interpolation::Bicubic => bicubic_block::<P>,
    };
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    if interp == Interpolation::Bilinear && s.data.len() <= i32::MAX as usize {
        use std::any::Any;
        let rgba_src = (src as &dyn Any).downcast_ref::<Plane<crate::frame::Rgba>>();
        let rgba_out = (&mut out as &mut dyn Any).downcast_mut::<Plane<crate::frame::Rgba>>();
        if let (Some(src), Some(rgba_out)) = (rgba_src, rgba_out) {
            let s = Source {
                src,
                data: src.as_slice(),
                stride: src.stride(),
                w: s.w,
                h: s.h,
                replicate: s.replicate,
                fill: border.fill(),
            };
            rgba_out
                .par_rows_mut()
                .with_min_len(4)
                .for_each(|(y, row)| {
                    // SAFETY: the build enables AVX2 (the cfg), all it needs.
                    unsafe { avx2_rgba::bilinear_span(&s, dst_to_src, y, 0, row) }
                });
            return out;
        }
    }
    out.par_rows_mut().with_min_len(4).for_each(|(y, row)| {
        let (mut sx, mut sy) = ([0f32; BLOCK], [0f32; BLOCK]);
        for (chunk, xf) in row.chunks_mut(BLOCK).zip(x_blocks) {
            block_coords(dst_to_src, xf, y as f32, &mut sx, &mut sy);
            kernel(&s, &sx, &sy, chunk);
        }
    });
    out
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
    /// This op from `name:key=value,...`.
    fn parse_op(text: &str) -> crate::error::Result<crate::ops::OpBox> {
        crate::ops::parse_with(&SPEC, build, text)
    }

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

    /// The per-pixel definition written the plain way (`f32::floor`,
    /// `saturate_u8`, one pixel at a time), to check the block pipeline.
    fn reference<P: Pixel>(
        src: &Plane<P>,
        t: &Transform,
        out_w: usize,
        out_h: usize,
        interp: Interpolation,
        border: WarpBorder,
    ) -> Plane<P> {
        let fill = border.fill::<P>();
        let (w, h) = (src.width() as i64, src.height() as i64);
        let tap = |x: i64, y: i64| -> P {
            if (0..w).contains(&x) && (0..h).contains(&y) {
                src.get(x as usize, y as usize)
            } else if border == WarpBorder::Replicate {
                src.get(x.clamp(0, w - 1) as usize, y.clamp(0, h - 1) as usize)
            } else {
                fill
            }
        };
        Plane::from_fn(out_w, out_h, |x, y| {
            let (xf, yf) = (x as f32, y as f32);
            let (sx, sy) = match *t {
                Transform::Affine(m) => {
                    (m[0] * xf + m[1] * yf + m[2], m[3] * xf + m[4] * yf + m[5])
                }
                Transform::Perspective(m) => {
                    let w = m[6] * xf + m[7] * yf + m[8];
                    if w == 0.0 {
                        return fill;
                    }
                    (
                        (m[0] * xf + m[1] * yf + m[2]) / w,
                        (m[3] * xf + m[4] * yf + m[5]) / w,
                    )
                }
            };
            if sx.is_nan() || sy.is_nan() {
                return fill;
            }
            let (sx, sy) = (
                sx.clamp(-COORD_LIMIT, COORD_LIMIT),
                sy.clamp(-COORD_LIMIT, COORD_LIMIT),
            );
            let mut o = P::default();
            match interp {
                Interpolation::Nearest => {
                    o = tap((sx + 0.5).floor() as i64, (sy + 0.5).floor() as i64)
                }
                Interpolation::Bilinear => {
                    let (x0, y0) = (sx.floor(), sy.floor());
                    let (fx, fy) = (sx - x0, sy - y0);
                    let (x0, y0) = (x0 as i64, y0 as i64);
                    let p = [
                        tap(x0, y0),
                        tap(x0 + 1, y0),
                        tap(x0, y0 + 1),
                        tap(x0 + 1, y0 + 1),
                    ];
                    for c in 0..P::CHANNELS {
                        let ch = |k: usize| p[k].channel(c) as f32;
                        let v = (1.0 - fy) * ((1.0 - fx) * ch(0) + fx * ch(1))
                            + fy * ((1.0 - fx) * ch(2) + fx * ch(3));
                        o.set_channel(c, saturate_u8(v));
                    }
                }
                Interpolation::Bicubic => {
                    let (x0, y0) = (sx.floor(), sy.floor());
                    let (wx, wy) = (cubic_weights(sx - x0), cubic_weights(sy - y0));
                    let (x0, y0) = (x0 as i64, y0 as i64);
                    for c in 0..P::CHANNELS {
                        let mut v = 0.0f32;
                        for (r, &wr) in wy.iter().enumerate() {
                            let mut hsum = 0.0f32;
                            for (k, &wk) in wx.iter().enumerate() {
                                hsum += wk
                                    * tap(x0 - 1 + k as i64, y0 - 1 + r as i64).channel(c) as f32;
                            }
                            v += wr * hsum;
                        }
                        o.set_channel(c, saturate_u8(v));
                    }
                }
            }
            o
        })
    }

    #[test]
    fn block_pipeline_matches_the_per_pixel_definition() {
        let transforms = [
            // Rotation by 0.3 rad with scale 1.3 and a shift.
            Transform::affine(
                [
                    1.3 * 0.955,
                    -1.3 * 0.296,
                    4.5,
                    1.3 * 0.296,
                    1.3 * 0.955,
                    -3.25,
                ],
                Direction::SrcToDst,
            )
            .unwrap(),
            Transform::affine([0.37, 0.11, -2.0, -0.05, 2.9, 1.0], Direction::DstToSrc).unwrap(),
            // A homography whose divisor changes sign inside the frame.
            Transform::Perspective([1.1, 0.2, -3.0, -0.1, 0.9, 2.0, 0.05, -0.02, -0.5]),
            Transform::perspective(
                [0.9, -0.1, 12.0, 0.1, 0.9, -5.0, 0.001, 0.002, 1.0],
                Direction::SrcToDst,
            )
            .unwrap(),
            // Far away: everything but a corner is border.
            Transform::Affine([0.0, 0.0, -1e12, 0.0, 3e7, 0.0]),
        ];
        let (g, c) = (gray(37, 23), rgba(37, 23));
        for t in &transforms {
            for interp in ALL {
                for border in [WarpBorder::Constant(201), WarpBorder::Replicate] {
                    for (ow, oh) in [(41, 29), (64, 3), (1, 1)] {
                        let what = format!("{t:?} {interp:?} {border:?} {ow}x{oh}");
                        assert_eq!(
                            warp(&g, t, ow, oh, interp, border),
                            reference(&g, t, ow, oh, interp, border),
                            "{what}"
                        );
                        assert_eq!(
                            warp(&c, t, ow, oh, interp, border),
                            reference(&c, t, ow, oh, interp, border),
                            "{what}"
                        );
                    }
                }
            }
        }
    }

    /// RGBA pixels with every channel different, from a hash of (x, y).
    fn noisy_rgba(w: usize, h: usize) -> Plane<[u8; 4]> {
        Plane::from_fn(w, h, |x, y| {
            let n = ((x as u64 * 2_654_435_761) ^ (y as u64 * 40_503 + 7))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15);
            (n >> 32).to_le_bytes()[..4].try_into().unwrap()
        })
    }

    #[test]
    fn rgba_bilinear_matches_the_per_pixel_definition_at_borders_and_odd_sizes() {
        let transforms = [
            // A rotation by 10° with a shift, as the benchmark's.
            Transform::affine([0.98, -0.17, 4.0, 0.17, 0.98, -3.0], Direction::SrcToDst).unwrap(),
            // Magnified 7×: many pixels share taps; and shrunk 3×.
            Transform::Affine([1.0 / 7.0, 0.0, -0.3, 0.0, 1.0 / 7.0, 0.6]),
            Transform::Affine([3.0, 0.4, -5.5, -0.2, 3.0, 2.25]),
            // Mostly outside the source.
            Transform::Affine([1.0, 0.0, 30.5, 0.0, 1.0, -20.25]),
            // Points far beyond the source, and NaN or infinite ones.
            Transform::Affine([1e30, 0.0, -1e30, 0.0, 1e20, 0.0]),
            Transform::Affine([f32::NAN, 0.0, 0.0, 0.0, 1.0, 0.0]),
            Transform::Affine([1.0, 0.0, 0.0, 0.0, 1.0, f32::INFINITY]),
            Transform::Affine([0.0, 0.0, f32::NEG_INFINITY, 0.0, 0.0, 1.0]),
            // w = x − 13: zero in column 13 (inside the second group of 8),
            // tiny and huge source points beside it, negative to the left.
            Transform::Perspective([1.0, 0.0, 0.0, 0.0, 1.0, 0.0, 1.0, 0.0, -13.0]),
            // w = y − 2 + 0.001·x: zero nowhere exactly, sign change per row.
            Transform::Perspective([0.5, 0.1, 1.0, -0.1, 0.8, 2.0, 0.001, 1.0, -2.0]),
            Transform::perspective(
                [1.02, 0.05, -2.0, 0.01, 1.01, 0.5, 0.001, 0.002, 1.0],
                Direction::SrcToDst,
            )
            .unwrap(),
        ];
        let sources = [(1, 1), (1, 5), (5, 1), (2, 2), (37, 23), (64, 3)];
        let outputs = [
            (1, 1),
            (7, 3),
            (8, 2),
            (9, 5),
            (17, 1),
            (33, 19),
            (300, 2),
            (41, 40),
        ];
        let padded = noisy_rgba(40, 23);
        let strided = Plane::from_vec_with_stride(37, 23, 40, padded.as_slice().to_vec()).unwrap();
        // Opaque, and opaque but for one pixel: alpha is copied where all
        // its taps agree.
        let opaque = |w, h| noisy_rgba(w, h).map(|[r, g, b, _]| [r, g, b, 255]);
        let mut almost = opaque(37, 23);
        almost.set(20, 11, [1, 2, 3, 4]);
        let planes = sources
            .iter()
            .flat_map(|&(w, h)| [noisy_rgba(w, h), opaque(w, h)])
            .chain([strided, almost])
            // Channels all 255 or all 0 between varying alpha: the blend must
            // round back to exactly 255 and 0.
            .chain([Plane::from_fn(9, 7, |x, y| {
                [255, 0, 255, (x * 30 + y) as u8]
            })]);
        for src in planes {
            let (sw, sh) = (src.width(), src.height());
            for t in &transforms {
                for border in [WarpBorder::Constant(201), WarpBorder::Replicate] {
                    for (ow, oh) in outputs {
                        assert_eq!(
                            warp(&src, t, ow, oh, Interpolation::Bilinear, border),
                            reference(&src, t, ow, oh, Interpolation::Bilinear, border),
                            "{sw}x{sh} source, {t:?} {border:?} {ow}x{oh}"
                        );
                    }
                }
            }
        }
    }

    #[test]
    fn strided_source_is_read_through_its_stride() {
        let packed = gray(9, 7);
        let mut data = vec![0u8; 12 * 7];
        for y in 0..7 {
            data[y * 12..y * 12 + 9].copy_from_slice(packed.row(y));
        }
        let strided = Plane::from_vec_with_stride(9, 7, 12, data).unwrap();
        let t = Transform::Affine([0.8, 0.1, 0.7, -0.2, 1.1, 0.4]);
        for interp in ALL {
            let b = WarpBorder::Replicate;
            assert_eq!(
                warp(&strided, &t, 11, 8, interp, b),
                warp(&packed, &t, 11, 8, interp, b),
                "{interp:?}"
            );
        }
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
        // A few ulps either side of every k + 0.5, where rounding turns.
        for k in 0..=256 {
            let half = k as f32 + 0.5;
            let (mut lo, mut hi) = (half, half);
            for _ in 0..4 {
                lo = f32::from_bits(lo.to_bits() - 1);
                hi = f32::from_bits(hi.to_bits() + 1);
                vals.extend([lo, hi]);
            }
        }
        for v in vals {
            assert_eq!(
                saturate_u8(v),
                if v.is_nan() {
                    0
                } else {
                    v.round().clamp(0.0, 255.0) as u8
                },
                "round {v}"
            );
        }
        let mut floors = vec![
            0.0f32, -0.0, 0.5, -0.5, -1.0, -1.5, 3.99999, -3.00001, 4194300.5, -4194300.5,
            2097151.8,
        ];
        floors.extend((0..20000).map(|i| i as f32 * 0.731 - 7000.0));
        floors.extend((0..1000).map(|i| (i as f32 - 500.0) * 4194.3 + 0.25));
        for v in floors {
            let (f, n) = floor_parts(v);
            assert_eq!((f, n), (v.floor(), v.floor() as i32), "floor {v}");
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
