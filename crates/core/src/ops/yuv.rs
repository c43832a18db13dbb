//! `yuv`: NV12/I420 ⇄ RGBA for a colorimetry (BT.709 or BT.601 matrix,
//! limited or full range).
//!
//! Video arrives from decoders as 4:2:0 YUV; the stage converts it to RGBA
//! once, runs the chain, and converts back for encoders. As a chain op, `yuv`
//! makes that round trip on the frame, to preview what 4:2:0 does to it.
//!
//! In f32: Y = Kr·R + Kg·G + Kb·B, Cb = (B − Y)/(2(1 − Kb)), Cr = (R − Y)/(2(1 − Kr)).
//! Limited range stores 16 + 219·Y/255 and 128 + 224·C/255; full range stores
//! Y and 128 + C. Each chroma sample is the mean Cb/Cr of the (up to four)
//! pixels of its 2×2 block; going back, a pixel takes its block's sample.
//! Every stored value is rounded to nearest and saturated.

use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox};
use crate::color::{Colorimetry, Matrix, Range, saturate_u8};
use crate::error::Result;
use crate::frame::{Frame, PixelFormat, Plane, Rgba, Yuv420};

/// Y of one pixel, before scaling: Kr·R + Kg·G + Kb·B in f32.
#[inline]
fn luma_f(p: Rgba, (kr, kg, kb): (f32, f32, f32)) -> f32 {
    kr * p[0] as f32 + kg * p[1] as f32 + kb * p[2] as f32
}

/// RGBA to NV12 or I420.
pub fn rgba_to_yuv420(src: &Plane<Rgba>, format: PixelFormat, c: Colorimetry) -> Result<Yuv420> {
    let (w, h) = (src.width(), src.height());
    let mut out = Yuv420::new(format, w, h)?;
    let (ys, yo, cs) = c.scales();
    let weights = c.matrix.weights();
    use rayon::prelude::*;
    out.y.par_rows_mut().for_each(|(y, row)| {
        for (o, &p) in row.iter_mut().zip(src.row(y)) {
            *o = saturate_u8(luma_f(p, weights) * ys + yo);
        }
    });
    let (cw, ch) = Yuv420::chroma_size(w, h);
    // Chroma samples in parallel by chroma row: each pixel's Cb and Cr of the
    // block's (up to) two rows in a loop that vectorises, then the block
    // sums in the order the definition takes them (row by row, left to
    // right), then laid out for the format.
    let mut uv = Plane::new(cw, ch, (128u8, 128u8));
    let (db, dr) = (2.0 * (1.0 - weights.2), 2.0 * (1.0 - weights.0));
    // Each pixel's Cb and Cr as `to_ycbcr` makes them, a row at a time.
    let chroma_row = |y: usize, cb: &mut [f32], cr: &mut [f32]| {
        for ((p, cb), cr) in src.row(y).iter().zip(cb.iter_mut()).zip(cr.iter_mut()) {
            let l = luma_f(*p, weights);
            *cb = (p[2] as f32 - l) / db;
            *cr = (p[0] as f32 - l) / dr;
        }
    };
    let rows = || [vec![0f32; w], vec![0f32; w], vec![0f32; w], vec![0f32; w]];
    uv.par_rows_mut()
        .for_each_init(rows, |[cb0, cr0, cb1, cr1], (cy, row)| {
            let two = 2 * cy + 1 < h;
            chroma_row(2 * cy, cb0, cr0);
            if two {
                chroma_row(2 * cy + 1, cb1, cr1);
            }
            for (cx, o) in row.iter_mut().enumerate() {
                let (x0, x1) = (2 * cx, (2 * cx + 1).min(w - 1));
                let wide = x1 > x0;
                // Summed row by row, left to right, as the definition does.
                let (mut sb, mut sr, mut n) = (cb0[x0], cr0[x0], 1f32);
                if wide {
                    (sb, sr, n) = (sb + cb0[x1], sr + cr0[x1], n + 1.0);
                }
                if two {
                    (sb, sr, n) = (sb + cb1[x0], sr + cr1[x0], n + 1.0);
                    if wide {
                        (sb, sr, n) = (sb + cb1[x1], sr + cr1[x1], n + 1.0);
                    }
                }
                *o = (
                    saturate_u8(128.0 + sb / n * cs),
                    saturate_u8(128.0 + sr / n * cs),
                );
            }
        });
    match format {
        PixelFormat::Nv12 => {
            out.u.par_rows_mut().for_each(|(cy, row)| {
                for (pair, &(u, v)) in row.chunks_exact_mut(2).zip(uv.row(cy)) {
                    pair.copy_from_slice(&[u, v]);
                }
            });
        }
        _ => {
            for (plane, pick) in [
                (&mut out.u, (|(u, _)| u) as fn((u8, u8)) -> u8),
                (&mut out.v, |(_, v)| v),
            ] {
                plane.par_rows_mut().for_each(|(cy, row)| {
                    for (o, &uv) in row.iter_mut().zip(uv.row(cy)) {
                        *o = pick(uv);
                    }
                });
            }
        }
    }
    Ok(out)
}

/// NV12 or I420 to RGBA (alpha opaque).
///
/// Per pixel: luma = (Y − yo)/ys, cb = (U − 128)/cs, cr = (V − 128)/cs,
/// R = luma + 2(1 − Kr)·cr, B = luma + 2(1 − Kb)·cb, G = (luma − Kr·R −
/// Kb·B)/Kg, each rounded and saturated. The terms that depend on one
/// sample alone come from 256-entry tables computed by the same f32
/// operations, so the result is the formula's to the bit.
pub fn yuv420_to_rgba(src: &Yuv420, c: Colorimetry) -> Plane<Rgba> {
    let (kr, kg, kb) = c.matrix.weights();
    let (ys, yo, cs) = c.scales();
    let table = |f: &dyn Fn(f32) -> f32| -> [f32; 256] { std::array::from_fn(|v| f(v as f32)) };
    let luma = table(&|v| (v - yo) / ys);
    let r_of_v = table(&|v| 2.0 * (1.0 - kr) * ((v - 128.0) / cs));
    let b_of_u = table(&|u| 2.0 * (1.0 - kb) * ((u - 128.0) / cs));
    let w = src.width();
    let mut out = Plane::new(w, src.height(), [0, 0, 0, 255]);
    use rayon::prelude::*;
    // A row in two passes: the table terms gathered into f32 rows, then the
    // arithmetic over whole rows, which vectorises.
    let rows = || (vec![0f32; w], vec![0f32; w], vec![0f32; w]);
    out.par_rows_mut()
        .for_each_init(rows, |(l, rv, bu), (y, row)| {
            let cy = y / 2;
            for (l, &v) in l.iter_mut().zip(src.y.row(y)) {
                *l = luma[v as usize];
            }
            match src.format {
                PixelFormat::Nv12 => {
                    let uv = src.u.row(cy);
                    for x in 0..w {
                        bu[x] = b_of_u[uv[2 * (x / 2)] as usize];
                        rv[x] = r_of_v[uv[2 * (x / 2) + 1] as usize];
                    }
                }
                _ => {
                    let (u, v) = (src.u.row(cy), src.v.row(cy));
                    for x in 0..w {
                        bu[x] = b_of_u[u[x / 2] as usize];
                        rv[x] = r_of_v[v[x / 2] as usize];
                    }
                }
            }
            for (((o, &l), &rv), &bu) in row.iter_mut().zip(&*l).zip(&*rv).zip(&*bu) {
                let r = l + rv;
                let b = l + bu;
                let g = (l - kr * r - kb * b) / kg;
                *o = [saturate_u8(r), saturate_u8(g), saturate_u8(b), 255];
            }
        });
    out
}

pub static SPEC: OpSpec = OpSpec {
    name: "yuv",
    summary: "round trip through 4:2:0 YUV (what an encoder's input does to the frame)",
    params: &[
        ParamSpec::new(
            "matrix",
            Kind::Choice(&["bt709", "bt601"]),
            "bt709",
            "YUV matrix",
        ),
        ParamSpec::new(
            "range",
            Kind::Choice(&["limited", "full"]),
            "limited",
            "value range",
        ),
        ParamSpec::new(
            "format",
            Kind::Choice(&["nv12", "i420"]),
            "i420",
            "chroma layout",
        ),
    ],
    example: "yuv:matrix=bt601,range=full",
};

#[derive(Debug)]
pub struct YuvRoundTrip {
    pub colorimetry: Colorimetry,
    pub format: PixelFormat,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let matrix = if p.word("matrix")? == "bt601" {
        Matrix::Bt601
    } else {
        Matrix::Bt709
    };
    let range = if p.word("range")? == "full" {
        Range::Full
    } else {
        Range::Limited
    };
    let format = if p.word("format")? == "nv12" {
        PixelFormat::Nv12
    } else {
        PixelFormat::I420
    };
    Ok(Box::new(YuvRoundTrip {
        colorimetry: Colorimetry { matrix, range },
        format,
    }))
}

impl Op for YuvRoundTrip {
    fn name(&self) -> &'static str {
        "yuv"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let rgba = frame.to_rgba();
        let yuv = rgba_to_yuv420(&rgba, self.format, self.colorimetry)?;
        let mut back = yuv420_to_rgba(&yuv, self.colorimetry);
        // Alpha does not survive YUV; keep the source's.
        for y in 0..back.height() {
            for (o, i) in back.row_mut(y).iter_mut().zip(rgba.row(y)) {
                o[3] = i[3];
            }
        }
        Ok(match frame {
            Frame::Gray(_) => Frame::Gray(back.map(|p| p[0])),
            Frame::Rgba(_) => Frame::Rgba(back),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[inline]
    fn to_ycbcr(p: Rgba, m: Matrix) -> (f32, f32, f32) {
        let (kr, kg, kb) = m.weights();
        let (r, g, b) = (p[0] as f32, p[1] as f32, p[2] as f32);
        let y = kr * r + kg * g + kb * b;
        (
            y,
            (b - y) / (2.0 * (1.0 - kb)),
            (r - y) / (2.0 * (1.0 - kr)),
        )
    }

    const ALL: [Colorimetry; 4] = [
        Colorimetry {
            matrix: Matrix::Bt709,
            range: Range::Limited,
        },
        Colorimetry {
            matrix: Matrix::Bt709,
            range: Range::Full,
        },
        Colorimetry {
            matrix: Matrix::Bt601,
            range: Range::Limited,
        },
        Colorimetry {
            matrix: Matrix::Bt601,
            range: Range::Full,
        },
    ];

    /// The definitions pixel by pixel, as plainly as they are written in the
    /// docs: the fast conversions must give these bytes exactly.
    fn plain_to_rgba(src: &Yuv420, c: Colorimetry) -> Plane<Rgba> {
        let (kr, kg, kb) = c.matrix.weights();
        let (ys, yo, cs) = c.scales();
        Plane::from_fn(src.width(), src.height(), |x, y| {
            let (u, v) = src.chroma_at(x, y);
            let luma = (src.y.get(x, y) as f32 - yo) / ys;
            let cb = (u as f32 - 128.0) / cs;
            let cr = (v as f32 - 128.0) / cs;
            let r = luma + 2.0 * (1.0 - kr) * cr;
            let b = luma + 2.0 * (1.0 - kb) * cb;
            let g = (luma - kr * r - kb * b) / kg;
            [saturate_u8(r), saturate_u8(g), saturate_u8(b), 255]
        })
    }

    fn plain_chroma(src: &Plane<Rgba>, c: Colorimetry, cx: usize, cy: usize) -> (u8, u8) {
        let (_, _, cs) = c.scales();
        let (mut sb, mut sr, mut n) = (0f32, 0f32, 0f32);
        for y in 2 * cy..(2 * cy + 2).min(src.height()) {
            for &p in &src.row(y)[2 * cx..(2 * cx + 2).min(src.width())] {
                let (_, cb, cr) = to_ycbcr(p, c.matrix);
                sb += cb;
                sr += cr;
                n += 1.0;
            }
        }
        (
            saturate_u8(128.0 + sb / n * cs),
            saturate_u8(128.0 + sr / n * cs),
        )
    }

    #[test]
    fn the_fast_conversions_are_the_definitions_to_the_bit() {
        for (i, &(w, h)) in [(1, 1), (3, 5), (64, 2), (37, 29)].iter().enumerate() {
            for (j, &c) in ALL.iter().enumerate() {
                let mut noise = crate::noise::Noise::new((10 * i + j) as u64);
                let rgba = noise.rgba(w, h);
                for format in [PixelFormat::I420, PixelFormat::Nv12] {
                    let yuv = rgba_to_yuv420(&rgba, format, c).unwrap();
                    let (ys, yo, _) = c.scales();
                    for (x, y) in (0..h).flat_map(|y| (0..w).map(move |x| (x, y))) {
                        let want = saturate_u8(to_ycbcr(rgba.get(x, y), c.matrix).0 * ys + yo);
                        assert_eq!(yuv.y.get(x, y), want, "Y at ({x}, {y}), {c:?}");
                        let (cx, cy) = (x / 2, y / 2);
                        assert_eq!(yuv.chroma_at(x, y), plain_chroma(&rgba, c, cx, cy));
                    }
                    // Random samples, not only those a conversion makes.
                    let mut any = Yuv420::new(format, w, h).unwrap();
                    for p in [&mut any.y, &mut any.u, &mut any.v] {
                        *p = noise.gray(p.width(), p.height());
                    }
                    assert_eq!(yuv420_to_rgba(&any, c), plain_to_rgba(&any, c), "{c:?}");
                }
            }
        }
    }

    #[test]
    fn black_and_white_hit_the_range_ends() {
        let img = Plane::from_fn(2, 1, |x, _| {
            if x == 0 {
                [0, 0, 0, 255]
            } else {
                [255, 255, 255, 255]
            }
        });
        let lim = rgba_to_yuv420(&img, PixelFormat::I420, ALL[0]).unwrap();
        assert_eq!(lim.y.row(0), &[16, 235]);
        assert_eq!(lim.u.get(0, 0), 128);
        let full = rgba_to_yuv420(&img, PixelFormat::I420, ALL[1]).unwrap();
        assert_eq!(full.y.row(0), &[0, 255]);
    }

    #[test]
    fn pure_red_in_bt709_limited_matches_the_standard() {
        // BT.709 limited red: Y 63, Cb 102, Cr 240 (ITU-R BT.709 table values).
        let img = Plane::new(2, 2, [255, 0, 0, 255]);
        let f = rgba_to_yuv420(&img, PixelFormat::Nv12, ALL[0]).unwrap();
        assert_eq!(f.y.get(0, 0), 63);
        assert_eq!(f.chroma_at(0, 0), (102, 240));
    }

    #[test]
    fn flat_colours_survive_the_round_trip_within_two_levels() {
        for c in ALL {
            for fmt in [PixelFormat::Nv12, PixelFormat::I420] {
                for colour in [
                    [200, 30, 90, 255],
                    [12, 240, 128, 255],
                    [128, 128, 128, 255],
                ] {
                    let img = Plane::new(5, 3, colour);
                    let back = yuv420_to_rgba(&rgba_to_yuv420(&img, fmt, c).unwrap(), c);
                    for ch in 0..3 {
                        let d = (back.get(4, 2)[ch] as i32 - colour[ch] as i32).abs();
                        assert!(d <= 2, "{c:?} {fmt} {colour:?} -> {:?}", back.get(4, 2));
                    }
                }
            }
        }
    }

    #[test]
    fn chroma_is_the_mean_of_its_block() {
        // Left column blue, right column red: one chroma sample between them.
        let img = Plane::from_fn(2, 2, |x, _| {
            if x == 0 {
                [0, 0, 255, 255]
            } else {
                [255, 0, 0, 255]
            }
        });
        let f = rgba_to_yuv420(&img, PixelFormat::I420, ALL[1]).unwrap();
        let (_, cb_b, cr_b) = to_ycbcr([0, 0, 255, 255], Matrix::Bt709);
        let (_, cb_r, cr_r) = to_ycbcr([255, 0, 0, 255], Matrix::Bt709);
        assert_eq!(f.u.get(0, 0), saturate_u8(128.0 + (cb_b + cb_r) / 2.0));
        assert_eq!(f.v.get(0, 0), saturate_u8(128.0 + (cr_b + cr_r) / 2.0));
    }
}
