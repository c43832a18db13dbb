//! Energies of seam carving: how much a pixel matters, in integers so that
//! the GPU reproduces every seam exactly (docs/DESIGN.md §4).
//!
//! - `basic` = 181·(|I(x,y)−I(x+1,y)| + |I(x,y)−I(x,y+1)|) + 128·|I(x,y)−I(x+1,y+1)|,
//!   zero outside the frame. That is the seed's (…+ |·|/√2)/3 scaled by 3·181
//!   (181/128 = 1.41406 ≈ √2).
//! - `sobel3`, `sobel5` = ⌊8·√(gx²+gy²)⌋ with the seed's kernels, replicate
//!   border, computed with integer square roots.
//! - `forward` = forward energy (Rubinstein et al. 2008): no energy per pixel;
//!   each DP step costs the new edges the removal would create
//!   (`forward_steps`).

use rayon::prelude::*;

use crate::frame::Plane;
use crate::ops::{Border, sobel};

/// How a pixel's importance is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Energy {
    Basic,
    Sobel3,
    Sobel5,
    Forward,
}

impl Energy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "basic" => Some(Energy::Basic),
            "sobel3" => Some(Energy::Sobel3),
            "sobel5" => Some(Energy::Sobel5),
            "forward" => Some(Energy::Forward),
            _ => None,
        }
    }

    /// How far (in pixels) a pixel's energy looks; bounds the band that must
    /// be recomputed around a removed seam.
    pub fn reach(self) -> usize {
        match self {
            Energy::Basic | Energy::Sobel3 | Energy::Forward => 1,
            Energy::Sobel5 => 2,
        }
    }
}

/// Integer square root: ⌊√n⌋.
#[inline]
pub fn isqrt(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut r = (n as f64).sqrt() as u64;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// Energy of one pixel of `luma` (not used for `forward`).
#[inline]
pub fn energy_at(luma: &Plane<u8>, x: usize, y: usize, kind: Energy) -> u32 {
    match kind {
        Energy::Basic => {
            let (w, h) = (luma.width(), luma.height());
            let i = luma.get(x, y) as i32;
            let at = |xx: usize, yy: usize| {
                if xx < w && yy < h {
                    luma.get(xx, yy) as i32
                } else {
                    0
                }
            };
            let dx = (i - at(x + 1, y)).unsigned_abs();
            let dy = (i - at(x, y + 1)).unsigned_abs();
            let dd = (i - at(x + 1, y + 1)).unsigned_abs();
            181 * (dx + dy) + 128 * dd
        }
        Energy::Sobel3 | Energy::Sobel5 => {
            let k = if kind == Energy::Sobel3 { 3 } else { 5 };
            let (gx, gy) = sobel::gradient_at(luma, x, y, k, Border::Replicate);
            sobel_energy(gx, gy)
        }
        Energy::Forward => 0,
    }
}

#[inline]
pub(crate) fn sobel_energy(gx: i32, gy: i32) -> u32 {
    let n = (gx as i64 * gx as i64 + gy as i64 * gy as i64) as u64;
    isqrt(n * 64) as u32
}

/// The energy map of `luma` (all zero for `forward`).
pub fn energy_map(luma: &Plane<u8>, kind: Energy) -> Plane<u32> {
    let (w, h) = (luma.width(), luma.height());
    let mut out = Plane::new(w, h, 0u32);
    match kind {
        Energy::Forward => {}
        Energy::Basic => out.par_rows_mut().for_each(|(y, row)| {
            for (x, e) in row.iter_mut().enumerate() {
                *e = energy_at(luma, x, y, kind);
            }
        }),
        Energy::Sobel3 | Energy::Sobel5 => {
            let k = if kind == Energy::Sobel3 { 3 } else { 5 };
            let (gx, gy) = sobel::gradients(luma, k, Border::Replicate);
            out.par_rows_mut().for_each(|(y, row)| {
                for ((e, &a), &b) in row.iter_mut().zip(gx.row(y)).zip(gy.row(y)) {
                    *e = sobel_energy(a, b);
                }
            });
        }
    }
    out
}

/// Forward-energy step costs of row `y` towards row y+1: for each x, the
/// cost of stepping to x (centre), x−1 (left) and x+1 (right). Columns
/// outside the frame read the edge column.
pub(crate) fn forward_steps(
    luma: &Plane<u8>,
    y: usize,
    centre: &mut [i64],
    left: &mut [i64],
    right: &mut [i64],
) {
    let w = luma.width();
    let row = luma.row(y);
    let below = if y + 1 < luma.height() {
        luma.row(y + 1)
    } else {
        row
    };
    let last_row = y + 1 >= luma.height();
    let at = |x: usize, l: u8, r: u8| {
        let (l, r, d) = (l as i64, r as i64, below[x] as i64);
        let up = (r - l).abs();
        if last_row {
            (up, up, up)
        } else {
            (up, up + (d - l).abs(), up + (d - r).abs())
        }
    };
    let edge = |x: usize| at(x, row[x.saturating_sub(1)], row[(x + 1).min(w - 1)]);
    let mut put = |x: usize, (c, l, r): (i64, i64, i64)| {
        centre[x] = c;
        left[x] = l;
        right[x] = r;
    };
    put(0, edge(0));
    if w > 1 {
        put(w - 1, edge(w - 1));
    }
    // The interior without clamping, so that it vectorises.
    for x in 1..w.saturating_sub(1) {
        put(x, at(x, row[x - 1], row[x + 1]));
    }
}

/// One luma level of difference, in the energy's own scale.
pub fn luma_unit(kind: Energy) -> u32 {
    match kind {
        // |I(x)−I(x+1)| weighs 181 (above).
        Energy::Basic => 181,
        // ⌊8·|g|⌋ with a step of one level giving |g| = 4 (3×3) or 48 (5×5).
        Energy::Sobel3 => 32,
        Energy::Sobel5 => 384,
        Energy::Forward => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn isqrt_is_exact() {
        for n in 0..20_000u64 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        assert_eq!(isqrt(u32::MAX as u64 * 64), 524_287);
    }

    #[test]
    fn basic_energy_is_zero_on_flat_interior_and_counts_the_outside_as_zero() {
        let luma = Plane::new(4, 3, 10u8);
        let e = energy_map(&luma, Energy::Basic);
        assert_eq!(e.get(1, 1), 0);
        // Last column: right and diagonal neighbours are outside (0).
        assert_eq!(e.get(3, 0), 181 * 10 + 128 * 10);
        assert_eq!(e.get(3, 2), 181 * 20 + 128 * 10);
    }
}
