//! `sobel`: the Sobel gradient of the luma, as magnitude or one component.
//!
//! The kernels are applied as correlation in exact integer arithmetic, the
//! anchor at the centre, samples outside the frame read through the border:
//!
//! ```text
//! Gx3 = [-1 0 1]   Gy3 = [-1 -2 -1]
//!       [-2 0 2]         [ 0  0  0]
//!       [-1 0 1]         [ 1  2  1]
//!
//! Gx5 = [1  2 0  -2 -1]   Gy5 = [-1 -4  -6 -4 -1]
//!       [4  8 0  -8 -4]         [-2 -8 -12 -8 -2]
//!       [6 12 0 -12 -6]         [ 0  0   0  0  0]
//!       [4  8 0  -8 -4]         [ 2  8  12  8  2]
//!       [1  2 0  -2 -1]         [ 1  4   6  4  1]
//! ```
//!
//! (Gx5 is, as specified, the negative of OpenCV's 5×5 x-kernel; the sign
//! only shows in [`gradients`] and [`gradient_at`], not in the op's output.)
//!
//! Outputs: `magnitude = saturate_u8(sqrt((gx² + gy²) as f32))`, i.e.
//! min(255, round(√(gx²+gy²))); `dx = min(255, |gx|)`, `dy = min(255, |gy|)`.
//! Gray in gives gray out; RGBA in gives the value in R, G and B with alpha
//! kept.

use rayon::prelude::*;

use super::border::{BORDER_CHOICES, Border};
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox, Pixel};
use crate::color::saturate_u8;
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "sobel",
    summary: "Sobel gradient of the luma: magnitude, |dx| or |dy|, clamped to 255",
    params: &[
        ParamSpec::new("ksize", Kind::Choice(&["3", "5"]), "3", "kernel size"),
        ParamSpec::new(
            "output",
            Kind::Choice(&["magnitude", "dx", "dy"]),
            "magnitude",
            "what to write",
        ),
        ParamSpec::new(
            "border",
            Kind::Choice(BORDER_CHOICES),
            "replicate",
            "how pixels outside the frame are read",
        ),
    ],
    example: "sobel:ksize=5,output=dx",
};

/// The 3×3 x-gradient kernel (row-major, correlation).
pub const GX3: [[i32; 3]; 3] = [[-1, 0, 1], [-2, 0, 2], [-1, 0, 1]];
/// The 3×3 y-gradient kernel.
pub const GY3: [[i32; 3]; 3] = [[-1, -2, -1], [0, 0, 0], [1, 2, 1]];
/// The 5×5 x-gradient kernel.
pub const GX5: [[i32; 5]; 5] = [
    [1, 2, 0, -2, -1],
    [4, 8, 0, -8, -4],
    [6, 12, 0, -12, -6],
    [4, 8, 0, -8, -4],
    [1, 2, 0, -2, -1],
];
/// The 5×5 y-gradient kernel.
pub const GY5: [[i32; 5]; 5] = [
    [-1, -4, -6, -4, -1],
    [-2, -8, -12, -8, -2],
    [0, 0, 0, 0, 0],
    [2, 8, 12, 8, 2],
    [1, 4, 6, 4, 1],
];

/// What the op writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SobelOutput {
    /// min(255, round(√(gx² + gy²))), the square root taken in f32.
    Magnitude,
    /// min(255, |gx|): OpenCV's `convertScaleAbs` of a 16-bit `Sobel(dx=1, dy=0)`.
    Dx,
    /// min(255, |gy|): OpenCV's `convertScaleAbs` of a 16-bit `Sobel(dx=0, dy=1)`.
    Dy,
}

/// The `sobel` op.
#[derive(Debug)]
pub struct Sobel {
    pub ksize: usize,
    pub output: SobelOutput,
    pub border: Border,
}

/// Builds a `sobel` op.
pub fn build(p: &Params) -> Result<OpBox> {
    let ksize = match p.word("ksize")? {
        "3" => 3,
        "5" => 5,
        k => {
            return Err(Error::bad_value(
                SPEC.name,
                "ksize",
                k,
                "expected one of 3, 5",
            ));
        }
    };
    let output = match p.word("output")? {
        "magnitude" => SobelOutput::Magnitude,
        "dx" => SobelOutput::Dx,
        "dy" => SobelOutput::Dy,
        o => {
            return Err(Error::bad_value(
                SPEC.name,
                "output",
                o,
                "expected one of magnitude, dx, dy",
            ));
        }
    };
    Ok(Box::new(Sobel {
        ksize,
        output,
        border: p.border()?,
    }))
}

impl Op for Sobel {
    fn name(&self) -> &'static str {
        "sobel"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(sobel(p, self.ksize, self.output, self.border)),
            Frame::Gray(p) => Frame::Gray(sobel(p, self.ksize, self.output, self.border)),
        })
    }
}

/// The kernels as outer products `G[ky][kx] = col[ky] · row[kx]`; the fast
/// path runs a column pass then a row pass, exact in integers.
struct Separated {
    x_col: &'static [i16],
    x_row: &'static [i16],
    y_col: &'static [i16],
    y_row: &'static [i16],
}

fn separated(ksize: usize) -> Separated {
    match ksize {
        3 => Separated {
            x_col: &[1, 2, 1],
            x_row: &[-1, 0, 1],
            y_col: &[-1, 0, 1],
            y_row: &[1, 2, 1],
        },
        5 => Separated {
            x_col: &[1, 4, 6, 4, 1],
            x_row: &[1, 2, 0, -2, -1],
            y_col: &[-1, -2, 0, 2, 1],
            y_row: &[1, 4, 6, 4, 1],
        },
        k => panic!("sobel: ksize must be 3 or 5, got {k}"),
    }
}

/// Per-row scratch of the fast path. `i16` holds every partial sum: the
/// column pass stays within ±16·255 and the row pass within ±6·16·255 = 24 480.
struct GradScratch {
    /// Column-pass results, border-extended by `a` on each side.
    vx: Vec<i16>,
    vy: Vec<i16>,
    gx: Vec<i16>,
    gy: Vec<i16>,
}

/// The border extension of a row: the indices standing for the `a` samples
/// on each side (`None` = zero).
struct Pads {
    left: Vec<Option<usize>>,
    right: Vec<Option<usize>>,
}

impl Pads {
    fn new(border: Border, w: usize, a: usize) -> Self {
        Self {
            left: (0..a)
                .map(|j| border.index(j as isize - a as isize, w))
                .collect(),
            right: (0..a).map(|j| border.index((w + j) as isize, w)).collect(),
        }
    }

    fn extend(&self, v: &mut [i16]) {
        let (a, w) = (self.left.len(), v.len() - 2 * self.left.len());
        for (j, m) in self.left.iter().enumerate() {
            v[j] = m.map_or(0, |i| v[a + i]);
        }
        for (j, m) in self.right.iter().enumerate() {
            v[a + w + j] = m.map_or(0, |i| v[a + i]);
        }
    }
}

impl GradScratch {
    fn new(w: usize, a: usize) -> Self {
        Self {
            vx: vec![0; w + 2 * a],
            vy: vec![0; w + 2 * a],
            gx: vec![0; w],
            gy: vec![0; w],
        }
    }

    /// Fills `gx`, `gy` with the gradients of row `y`.
    fn row(&mut self, luma: &Plane<u8>, y: usize, k: &Separated, pads: &Pads, border: Border) {
        let (w, h) = (luma.width(), luma.height());
        let a = k.x_col.len() / 2;
        let (vx, vy) = (&mut self.vx[a..a + w], &mut self.vy[a..a + w]);
        vx.fill(0);
        vy.fill(0);
        for (ky, (&cx, &cy)) in k.x_col.iter().zip(k.y_col).enumerate() {
            let Some(sy) = border.index(y as isize + ky as isize - a as isize, h) else {
                continue;
            };
            for ((dx, dy), &l) in vx.iter_mut().zip(vy.iter_mut()).zip(luma.row(sy)) {
                let l = l as i16;
                *dx += cx * l;
                *dy += cy * l;
            }
        }
        pads.extend(&mut self.vx);
        pads.extend(&mut self.vy);
        row_pass(&mut self.gx, &self.vx, k.x_row);
        row_pass(&mut self.gy, &self.vy, k.y_row);
    }
}

/// `g[x] = Σ taps[k] · v[x + k]`, skipping zero taps.
fn row_pass(g: &mut [i16], v: &[i16], taps: &[i16]) {
    let w = g.len();
    g.fill(0);
    for (k, &t) in taps.iter().enumerate() {
        if t != 0 {
            for (g, &v) in g.iter_mut().zip(&v[k..k + w]) {
                *g += t * v;
            }
        }
    }
}

/// The Sobel gradients (gx, gy) of every pixel of `luma` with the `ksize`
/// (3 or 5) kernels of this module, as correlation read through `border`.
///
/// # Panics
/// If `ksize` is not 3 or 5.
pub fn gradients(luma: &Plane<u8>, ksize: usize, border: Border) -> (Plane<i32>, Plane<i32>) {
    let k = separated(ksize);
    let (w, h) = (luma.width(), luma.height());
    let mut gx = Plane::new(w, h, 0i32);
    let mut gy = Plane::new(w, h, 0i32);
    if luma.is_empty() {
        return (gx, gy);
    }
    let a = ksize / 2;
    let pads = Pads::new(border, w, a);
    gx.par_rows_mut()
        .zip(gy.par_rows_mut())
        .with_min_len(8)
        .for_each_init(
            || GradScratch::new(w, a),
            |s, ((y, ox), (_, oy))| {
                s.row(luma, y, &k, &pads, border);
                for (o, &g) in ox.iter_mut().zip(&s.gx) {
                    *o = g as i32;
                }
                for (o, &g) in oy.iter_mut().zip(&s.gy) {
                    *o = g as i32;
                }
            },
        );
    (gx, gy)
}

/// The Sobel gradients (gx, gy) at one pixel, straight from the 2-D kernels;
/// equal to [`gradients`] there. Used to update energies in a band.
///
/// # Panics
/// If `ksize` is not 3 or 5, or `(x, y)` is outside `luma`.
pub fn gradient_at(
    luma: &Plane<u8>,
    x: usize,
    y: usize,
    ksize: usize,
    border: Border,
) -> (i32, i32) {
    assert!(
        x < luma.width() && y < luma.height(),
        "gradient_at: ({x}, {y}) is outside the plane"
    );
    match ksize {
        3 => correlate_at(luma, x, y, &GX3, &GY3, border),
        5 => correlate_at(luma, x, y, &GX5, &GY5, border),
        k => panic!("sobel: ksize must be 3 or 5, got {k}"),
    }
}

fn correlate_at<const N: usize>(
    luma: &Plane<u8>,
    x: usize,
    y: usize,
    gx: &[[i32; N]; N],
    gy: &[[i32; N]; N],
    border: Border,
) -> (i32, i32) {
    let a = (N / 2) as isize;
    let (w, h) = (luma.width(), luma.height());
    let (mut sx, mut sy) = (0, 0);
    for ky in 0..N {
        let Some(yy) = border.index(y as isize + ky as isize - a, h) else {
            continue;
        };
        for kx in 0..N {
            let Some(xx) = border.index(x as isize + kx as isize - a, w) else {
                continue;
            };
            let l = luma.get(xx, yy) as i32;
            sx += gx[ky][kx] * l;
            sy += gy[ky][kx] * l;
        }
    }
    (sx, sy)
}

/// The Sobel edge image of `src`, computed on its luma ([`Pixel::luma`]):
/// the `output` value is written to every filtered channel (gray, or R, G
/// and B) and the other channels (alpha) are copied.
///
/// # Panics
/// If `ksize` is not 3 or 5.
pub fn sobel<P: Pixel>(
    src: &Plane<P>,
    ksize: usize,
    output: SobelOutput,
    border: Border,
) -> Plane<P> {
    let k = separated(ksize);
    if src.is_empty() {
        return src.to_packed();
    }
    let w = src.width();
    let luma = src.map(|p| p.luma());
    let a = ksize / 2;
    let pads = Pads::new(border, w, a);
    let mut out = Plane::new(w, src.height(), P::default());
    out.par_rows_mut().with_min_len(8).for_each_init(
        || (GradScratch::new(w, a), vec![0u8; w]),
        |(s, vals), (y, out_row)| {
            s.row(&luma, y, &k, &pads, border);
            match output {
                SobelOutput::Magnitude => {
                    for ((v, &gx), &gy) in vals.iter_mut().zip(&s.gx).zip(&s.gy) {
                        let (gx, gy) = (gx as i32, gy as i32);
                        *v = saturate_u8(((gx * gx + gy * gy) as f32).sqrt());
                    }
                }
                SobelOutput::Dx => abs_clamped(vals, &s.gx),
                SobelOutput::Dy => abs_clamped(vals, &s.gy),
            }
            for ((o, &p), &v) in out_row.iter_mut().zip(src.row(y)).zip(vals.iter()) {
                let mut q = p;
                for ch in 0..P::FILTERED {
                    q.set_channel(ch, v);
                }
                *o = q;
            }
        },
    );
    out
}

/// `min(255, |g|)`.
fn abs_clamped(vals: &mut [u8], g: &[i16]) {
    for (v, &g) in vals.iter_mut().zip(g) {
        *v = g.unsigned_abs().min(255) as u8;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::params::split_op;

    const BORDERS: [Border; 3] = [Border::Zero, Border::Replicate, Border::Reflect101];

    fn step(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, _| if x < w / 2 { 0 } else { 100 })
    }

    fn noise(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| {
            ((x * 7919 + y * 104_729 + x * y * 31) % 256) as u8
        })
    }

    #[test]
    fn separated_factors_rebuild_the_kernels() {
        for ksize in [3, 5] {
            let k = separated(ksize);
            for ky in 0..ksize {
                for kx in 0..ksize {
                    let (x, y) = (
                        (k.x_col[ky] * k.x_row[kx]) as i32,
                        (k.y_col[ky] * k.y_row[kx]) as i32,
                    );
                    let (wx, wy) = if ksize == 3 {
                        (GX3[ky][kx], GY3[ky][kx])
                    } else {
                        (GX5[ky][kx], GY5[ky][kx])
                    };
                    assert_eq!((x, y), (wx, wy), "ksize {ksize} ({kx}, {ky})");
                }
            }
        }
    }

    #[test]
    fn step_edge_gives_400_at_the_edge_and_0_when_flat() {
        let src = step(8, 6);
        let (gx, gy) = gradients(&src, 3, Border::Replicate);
        for y in 0..6 {
            for x in 0..8 {
                let want = if x == 3 || x == 4 { 400 } else { 0 };
                assert_eq!(gx.get(x, y), want, "({x}, {y})");
                assert_eq!(gy.get(x, y), 0);
            }
        }
        let m = sobel(&src, 3, SobelOutput::Magnitude, Border::Replicate);
        assert_eq!(
            (m.get(3, 2), m.get(4, 2), m.get(1, 2), m.get(6, 2)),
            (255, 255, 0, 0)
        );
        let (gx5, _) = gradients(&src, 5, Border::Replicate);
        // Gx5 as specified is negative on a rising edge: -(1+4+6+4+1)·(2+1)·100.
        assert_eq!(gx5.get(4, 3), -4800);
    }

    #[test]
    fn magnitude_rounds_the_f32_root() {
        // One bright pixel: its neighbours see it through single kernel taps.
        let mut src = Plane::new(5, 5, 0u8);
        src.set(2, 2, 10);
        let (gx, gy) = gradients(&src, 3, Border::Zero);
        let m = sobel(&src, 3, SobelOutput::Magnitude, Border::Zero);
        for y in 0..5 {
            for x in 0..5 {
                let (a, b) = (gx.get(x, y), gy.get(x, y));
                let want = (((a * a + b * b) as f32).sqrt()).round().min(255.0) as u8;
                assert_eq!(m.get(x, y), want);
            }
        }
        assert_eq!(m.get(1, 1), 14); // gx = gy = 10: √200 = 14.14
        assert_eq!(m.get(1, 2), 20); // gx = 20, gy = 0
    }

    #[test]
    fn gradient_at_equals_gradients_everywhere() {
        for (w, h) in [(1, 1), (2, 3), (7, 5), (12, 9)] {
            let src = noise(w, h);
            for ksize in [3, 5] {
                for b in BORDERS {
                    let (gx, gy) = gradients(&src, ksize, b);
                    for y in 0..h {
                        for x in 0..w {
                            assert_eq!(
                                gradient_at(&src, x, y, ksize, b),
                                (gx.get(x, y), gy.get(x, y))
                            );
                        }
                    }
                }
            }
        }
    }

    #[test]
    fn dx_and_dy_swap_under_transpose() {
        let src = noise(9, 6);
        for ksize in [3, 5] {
            for b in BORDERS {
                let dx = sobel(&src, ksize, SobelOutput::Dx, b);
                let dy_t = sobel(&src.transposed(), ksize, SobelOutput::Dy, b);
                assert_eq!(dx, dy_t.transposed(), "ksize {ksize} {b:?}");
                let m = sobel(&src, ksize, SobelOutput::Magnitude, b);
                assert_eq!(
                    m,
                    sobel(&src.transposed(), ksize, SobelOutput::Magnitude, b).transposed()
                );
            }
        }
    }

    #[test]
    fn rgba_works_on_luma_and_keeps_alpha() {
        let src = Plane::from_fn(8, 5, |x, y| {
            let v = if x < 4 { 10 } else { 60 };
            [v, v, v, (x * 20 + y) as u8]
        });
        let out = sobel(&src, 3, SobelOutput::Dx, Border::Reflect101);
        let luma = src.map(|p| p.luma());
        let want = sobel(&luma, 3, SobelOutput::Dx, Border::Reflect101);
        for y in 0..5 {
            for x in 0..8 {
                let v = want.get(x, y);
                assert_eq!(out.get(x, y), [v, v, v, src.get(x, y)[3]]);
            }
        }
        assert_eq!(out.get(4, 2)[0], 200);
    }

    #[test]
    fn op_parses_and_rejects() {
        let (_, pairs) = split_op("sobel:ksize=5,output=dy,border=zero").unwrap();
        let mut op = build(&Params::from_pairs(&SPEC, &pairs).unwrap()).unwrap();
        let src = noise(6, 7);
        let Frame::Gray(out) = op.apply(&Frame::Gray(src.clone())).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(out, sobel(&src, 5, SobelOutput::Dy, Border::Zero));
        let (_, pairs) = split_op("sobel:ksize=7").unwrap();
        let e = Params::from_pairs(&SPEC, &pairs).unwrap_err().to_string();
        assert!(e.contains("ksize=7") && e.contains("3, 5"), "{e}");
    }
}
