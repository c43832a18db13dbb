//! `equalize`: histogram equalisation through a lookup table built from the
//! luma histogram (seed 002): cdf by scan, then
//! `LUT[v] = round((cdf[v] − cdf_min) · 255 / (N − cdf_min))` in exact integer
//! arithmetic. A constant frame passes unchanged.

use rayon::prelude::*;

use super::params::{OpSpec, Params};
use super::pixel::Pixel;
use super::threshold::luma_histogram;
use super::{Op, OpBox};
use crate::error::Result;
use crate::frame::{Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "equalize",
    summary: "histogram equalisation of luma; RGBA: the luma table applied to R, G and B",
    params: &[],
    example: "equalize",
};

/// The equalisation table for a histogram of `n` pixels, or `None` for a
/// constant frame (`n == cdf_min`, or an empty histogram), which passes
/// unchanged. `n` is the histogram's total. Values below the lowest present
/// one map to 0; the rest to `((cdf[v] − cdf_min)·255 + (N − cdf_min)/2) /
/// (N − cdf_min)` in u64, that is rounded half up.
pub fn equalize_lut(hist: &[u32; 256], n: u64) -> Option<[u8; 256]> {
    let cdf_min = hist.iter().find(|&&c| c > 0).map(|&c| c as u64)?;
    if n <= cdf_min {
        return None;
    }
    let range = n - cdf_min;
    let mut lut = [0u8; 256];
    let mut cdf = 0u64;
    for (l, &c) in lut.iter_mut().zip(hist) {
        cdf += c as u64;
        if cdf >= cdf_min {
            // `min` guards against a caller's `n` below the histogram's total.
            *l = (((cdf - cdf_min) * 255 + range / 2) / range).min(255) as u8;
        }
    }
    Some(lut)
}

/// Equalises `src`. Gray: the table applied to the value. RGBA: the table
/// from the luma histogram applied to R, G and B alike, alpha kept. This
/// roughly keeps hue, and is a deliberate choice: OpenCV's equalizeHist only
/// takes single channels, and equalising R, G and B apart would shift colours.
pub fn equalize<P: Pixel>(src: &Plane<P>) -> Plane<P> {
    let n = (src.width() * src.height()) as u64;
    let Some(lut) = equalize_lut(&luma_histogram(src), n) else {
        return src.clone();
    };
    let mut out = Plane::new(src.width(), src.height(), P::default());
    out.par_rows_mut().for_each(|(y, row)| {
        // A local copy of the table, so that byte stores cannot alias it.
        let table = lut;
        for (o, &p) in row.iter_mut().zip(src.row(y)) {
            *o = p;
            for c in 0..P::FILTERED {
                o.set_channel(c, table[p.channel(c) as usize]);
            }
        }
    });
    out
}

/// The `equalize` chain op.
#[derive(Debug)]
pub struct Equalize;

pub fn build(_p: &Params) -> Result<OpBox> {
    Ok(Box::new(Equalize))
}

impl Op for Equalize {
    fn name(&self) -> &'static str {
        "equalize"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Gray(p) => Frame::Gray(equalize(p)),
            Frame::Rgba(p) => Frame::Rgba(equalize(p)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::threshold::histogram;

    #[test]
    fn constant_frame_is_unchanged() {
        let img = Plane::new(7, 5, 93u8);
        assert_eq!(equalize(&img), img);
        assert_eq!(equalize_lut(&histogram(&img), 35), None);
        let rgba = Plane::new(3, 3, [10u8, 20, 30, 40]);
        assert_eq!(equalize(&rgba), rgba);
    }

    #[test]
    fn two_level_frame_maps_to_0_and_255() {
        let img = Plane::from_fn(6, 4, |x, y| if (x + y) % 3 == 0 { 100 } else { 140 });
        let out = equalize(&img);
        for y in 0..4 {
            for x in 0..6 {
                assert_eq!(out.get(x, y), if img.get(x, y) == 100 { 0 } else { 255 });
            }
        }
    }

    #[test]
    fn lut_is_monotone_and_spans_0_to_255() {
        let mut hist = [0u32; 256];
        for (v, h) in hist.iter_mut().enumerate().skip(20).take(200) {
            *h = (v as u32 * 7919) % 13 + 1;
        }
        let n = hist.iter().map(|&c| c as u64).sum();
        let lut = equalize_lut(&hist, n).unwrap();
        assert!(lut.windows(2).all(|w| w[0] <= w[1]), "{lut:?}");
        assert_eq!((lut[0], lut[20], lut[219], lut[255]), (0, 0, 255, 255));
    }

    #[test]
    fn lut_rounds_exactly_half_up() {
        // Levels 0, 1, 2 with counts 1, 1, 2: N = 4, cdf_min = 1, range 3.
        // v=1: 255/3 = 85; v=2: 765/3 = 255.
        let mut hist = [0u32; 256];
        hist[0] = 1;
        hist[1] = 1;
        hist[2] = 2;
        let lut = equalize_lut(&hist, 4).unwrap();
        assert_eq!(&lut[..3], &[0, 85, 255]);
        // N = 9, cdf_min = 1, range 8: v=1 has cdf 2 → (255 + 4) / 8 = 32 (31.875).
        hist[2] = 7;
        assert_eq!(equalize_lut(&hist, 9).unwrap()[1], 32);
    }

    #[test]
    fn rgba_applies_the_luma_table_and_keeps_alpha() {
        let img = Plane::from_vec(2, 1, vec![[50u8, 50, 50, 3], [200, 200, 200, 250]]).unwrap();
        let out = equalize(&img);
        assert_eq!(out.row(0), &[[0, 0, 0, 3], [255, 255, 255, 250]]);
        // Channels other than luma's go through the same table.
        let img = Plane::from_vec(2, 1, vec![[50u8, 60, 40, 3], [200, 60, 200, 250]]).unwrap();
        let lut = equalize_lut(&luma_histogram(&img), 2).unwrap();
        let out = equalize(&img);
        assert_eq!(out.get(0, 0), [lut[50], lut[60], lut[40], 3]);
        assert_eq!(out.get(1, 0)[3], 250);
    }
}
