//! `integral`: integral images (summed-area tables) of a gray plane.
//!
//! The exact tables are the library API: [`integral`] (u32 sums),
//! [`integral_sq`] (u64 sums of squares) and [`integrals`] (both in one pass),
//! each (W+1)×(H+1) with a zero first row and column, so that
//! `I(x+1, y+1)` is the sum over `x' ≤ x, y' ≤ y`; [`rect_sum_u32`] and
//! [`rect_sum_u64`] read the sum of a rectangle from them. The chain op
//! `integral` only makes a table visible: it scales the u32 table of luma to
//! 0..=255 in a W×H gray frame.
//!
//! The scan runs in horizontal bands, one rayon task each: the column totals
//! of every band are summed first, which gives the integral row just above
//! each band, and then every band scans its rows independently.

use rayon::prelude::*;

use super::params::{OpSpec, Params};
use super::{Op, OpBox};
use crate::error::Result;
use crate::frame::{Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "integral",
    summary: "view of the integral image of luma: 255·I(x+1,y+1)/I(W,H), rounded (exact tables are in the library API)",
    params: &[],
    example: "integral",
};

/// One cell of a table: how two partial sums add up.
trait Cell: Copy + Default + Send + Sync {
    fn add(self, other: Self) -> Self;
}

impl Cell for u32 {
    #[inline]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

impl Cell for u64 {
    #[inline]
    fn add(self, other: Self) -> Self {
        self.wrapping_add(other)
    }
}

/// A table that stores nothing (a zero-sized cell), so that one banded scan
/// serves both one table and two.
#[derive(Clone, Copy, Default)]
struct Skip;

impl Cell for Skip {
    #[inline]
    fn add(self, _other: Self) -> Self {
        Skip
    }
}

/// Source rows per band: one band per thread, as every band but the last
/// costs an extra read of its rows (the column totals); with one thread the
/// scan is a single band.
fn band_rows(height: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    height.div_ceil(threads).max(32)
}

/// Computes up to two tables of `src` in one pass: table A of `fa(v)` and
/// table B of `fb(v)`.
fn scan<A: Cell, B: Cell>(
    src: &Plane<u8>,
    fa: impl Fn(u8) -> A + Sync,
    fb: impl Fn(u8) -> B + Sync,
) -> (Plane<A>, Plane<B>) {
    let (w, h) = (src.width(), src.height());
    let stride = w + 1;
    // The tables themselves: one allocation each per call.
    let mut data_a = vec![A::default(); stride * (h + 1)];
    let mut data_b = vec![B::default(); stride * (h + 1)];
    if w > 0 && h > 0 {
        let band = band_rows(h);
        let bands = h.div_ceil(band);

        // Column totals of every band but the last (one row per band).
        let totals: Vec<(Vec<A>, Vec<B>)> = (0..bands - 1)
            .into_par_iter()
            .map(|b| {
                let mut ca = vec![A::default(); w];
                let mut cb = vec![B::default(); w];
                for y in b * band..(b + 1) * band {
                    for ((a, bb), &v) in ca.iter_mut().zip(cb.iter_mut()).zip(src.row(y)) {
                        *a = a.add(fa(v));
                        *bb = bb.add(fb(v));
                    }
                }
                (ca, cb)
            })
            .collect();

        // The integral row just above each band: the horizontal prefix sum
        // of the column totals of all bands above it.
        let mut above: Vec<(Vec<A>, Vec<B>)> = Vec::with_capacity(bands);
        let mut col_a = vec![A::default(); w];
        let mut col_b = vec![B::default(); w];
        for b in 0..bands {
            let mut row_a = vec![A::default(); stride];
            let mut row_b = vec![B::default(); stride];
            let (mut sa, mut sb) = (A::default(), B::default());
            for (((ra, rb), &ca), &cb) in row_a[1..]
                .iter_mut()
                .zip(row_b[1..].iter_mut())
                .zip(&col_a)
                .zip(&col_b)
            {
                sa = sa.add(ca);
                sb = sb.add(cb);
                *ra = sa;
                *rb = sb;
            }
            above.push((row_a, row_b));
            if let Some((ta, tb)) = totals.get(b) {
                for (c, &t) in col_a.iter_mut().zip(ta) {
                    *c = c.add(t);
                }
                for (c, &t) in col_b.iter_mut().zip(tb) {
                    *c = c.add(t);
                }
            }
        }

        // Every band scans its own rows, starting from the row above it.
        data_a[stride..]
            .par_chunks_mut(band * stride)
            .zip(data_b[stride..].par_chunks_mut(band * stride))
            .zip(above.par_iter())
            .enumerate()
            .for_each(|(b, ((chunk_a, chunk_b), (above_a, above_b)))| {
                for r in 0..chunk_a.len() / stride {
                    let (done_a, rest_a) = chunk_a.split_at_mut(r * stride);
                    let (done_b, rest_b) = chunk_b.split_at_mut(r * stride);
                    let (prev_a, prev_b) = if r == 0 {
                        (&above_a[..], &above_b[..])
                    } else {
                        (&done_a[(r - 1) * stride..], &done_b[(r - 1) * stride..])
                    };
                    scan_row(
                        (&mut rest_a[1..stride], &mut rest_b[1..stride]),
                        (&prev_a[1..stride], &prev_b[1..stride]),
                        src.row(b * band + r),
                        &fa,
                        &fb,
                    );
                }
            });
    }
    (wrap(w + 1, h + 1, data_a), wrap(w + 1, h + 1, data_b))
}

/// One row of both tables: `out[x] = prev[x] + Σ_{x' ≤ x} f(src[x'])`.
/// Unrolled by 8 so that the serial running sum is all that is left per pixel.
#[inline(always)]
fn scan_row<A: Cell, B: Cell>(
    (out_a, out_b): (&mut [A], &mut [B]),
    (prev_a, prev_b): (&[A], &[B]),
    src: &[u8],
    fa: &impl Fn(u8) -> A,
    fb: &impl Fn(u8) -> B,
) {
    const U: usize = 8;
    let (mut sa, mut sb) = (A::default(), B::default());
    let mut oa = out_a.chunks_exact_mut(U);
    let mut ob = out_b.chunks_exact_mut(U);
    let mut pa = prev_a.chunks_exact(U);
    let mut pb = prev_b.chunks_exact(U);
    let mut sv = src.chunks_exact(U);
    for ((((oa, ob), pa), pb), v) in (&mut oa)
        .zip(&mut ob)
        .zip(&mut pa)
        .zip(&mut pb)
        .zip(&mut sv)
    {
        for i in 0..U {
            sa = sa.add(fa(v[i]));
            sb = sb.add(fb(v[i]));
            oa[i] = pa[i].add(sa);
            ob[i] = pb[i].add(sb);
        }
    }
    let rest = oa
        .into_remainder()
        .iter_mut()
        .zip(ob.into_remainder())
        .zip(pa.remainder().iter().zip(pb.remainder()));
    for (((oa, ob), (&pa, &pb)), &v) in rest.zip(sv.remainder()) {
        sa = sa.add(fa(v));
        sb = sb.add(fb(v));
        *oa = pa.add(sa);
        *ob = pb.add(sb);
    }
}

fn wrap<T: Copy>(w: usize, h: usize, data: Vec<T>) -> Plane<T> {
    Plane::from_vec(w, h, data).expect("a table is allocated at its full size")
}

/// The integral image of `src`: (W+1)×(H+1), first row and column zero,
/// `I(x+1, y+1)` = the sum of `src` over `x' ≤ x, y' ≤ y`.
///
/// Sums are u32: exact up to 16.8 million pixels of 255 (a 4K frame fits);
/// beyond that they wrap (`wrapping_add`), as NPP's do. Rectangle sums read
/// with [`rect_sum_u32`] stay exact while the rectangle's own sum fits in u32.
pub fn integral(src: &Plane<u8>) -> Plane<u32> {
    scan(src, |v| v as u32, |_| Skip).0
}

/// The integral image of the squares of `src`, as [`integral`] but in u64,
/// which is exact for any frame size.
pub fn integral_sq(src: &Plane<u8>) -> Plane<u64> {
    scan(src, |v| (v as u64) * (v as u64), |_| Skip).0
}

/// [`integral`] and [`integral_sq`] computed in one pass over `src`.
pub fn integrals(src: &Plane<u8>) -> (Plane<u32>, Plane<u64>) {
    scan(src, |v| v as u32, |v| (v as u64) * (v as u64))
}

/// The sum over the half-open rectangle `[x0, x1) × [y0, y1)` from an
/// integral image, in wrapping arithmetic. Needs `x0 ≤ x1 ≤ W` and
/// `y0 ≤ y1 ≤ H` (the table is (W+1)×(H+1)); panics on coordinates outside
/// the table.
#[inline]
pub fn rect_sum_u32(ii: &Plane<u32>, x0: usize, y0: usize, x1: usize, y1: usize) -> u32 {
    ii.get(x1, y1)
        .wrapping_sub(ii.get(x0, y1))
        .wrapping_sub(ii.get(x1, y0))
        .wrapping_add(ii.get(x0, y0))
}

/// [`rect_sum_u32`] for a squared (u64) integral image.
#[inline]
pub fn rect_sum_u64(ii: &Plane<u64>, x0: usize, y0: usize, x1: usize, y1: usize) -> u64 {
    ii.get(x1, y1)
        .wrapping_sub(ii.get(x0, y1))
        .wrapping_sub(ii.get(x1, y0))
        .wrapping_add(ii.get(x0, y0))
}

/// The chain op's picture: `round(255 · I(x+1, y+1) / I(W, H))` in f64 from
/// the u32 table of `luma` (0 where the total is 0), a W×H gray plane.
pub fn integral_view(luma: &Plane<u8>) -> Plane<u8> {
    let (w, h) = (luma.width(), luma.height());
    if w == 0 || h == 0 {
        return Plane::new(w, h, 0);
    }
    let ii = integral(luma);
    let total = ii.get(w, h);
    let mut out = Plane::new(w, h, 0u8);
    if total == 0 {
        return out;
    }
    let total = total as f64;
    out.par_rows_mut().for_each(|(y, row)| {
        for (o, &s) in row.iter_mut().zip(&ii.row(y + 1)[1..]) {
            // A float-to-int cast saturates, so a wrapped table cannot overflow.
            *o = (255.0 * s as f64 / total).round() as u8;
        }
    });
    out
}

/// The `integral` chain op.
#[derive(Debug)]
pub struct IntegralView;

pub fn build(_p: &Params) -> Result<OpBox> {
    Ok(Box::new(IntegralView))
}

impl Op for IntegralView {
    fn name(&self) -> &'static str {
        "integral"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(Frame::Gray(match frame {
            Frame::Gray(p) => integral_view(p),
            Frame::Rgba(_) => integral_view(&frame.luma()),
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The 5×5 image of seed 004 (figures 8 and 9).
    fn seed_image() -> Plane<u8> {
        let rows: [[u8; 5]; 5] = [
            [1, 2, 0, 1, 2],
            [1, 2, 3, 2, 1],
            [2, 2, 2, 1, 0],
            [1, 2, 3, 0, 1],
            [3, 3, 2, 1, 2],
        ];
        Plane::from_fn(5, 5, |x, y| rows[y][x])
    }

    fn naive<T: Copy + Default + std::ops::Add<Output = T>>(
        src: &Plane<u8>,
        f: impl Fn(u8) -> T,
    ) -> Plane<T> {
        Plane::from_fn(src.width() + 1, src.height() + 1, |x, y| {
            let mut s = T::default();
            for yy in 0..y {
                for xx in 0..x {
                    s = s + f(src.get(xx, yy));
                }
            }
            s
        })
    }

    #[test]
    fn seed_004_example_gives_the_published_table() {
        let ii = integral(&seed_image());
        assert_eq!((ii.width(), ii.height()), (6, 6));
        let inner: [[u32; 5]; 5] = [
            [1, 3, 3, 4, 6],
            [2, 6, 9, 12, 15],
            [4, 10, 15, 19, 22],
            [5, 13, 21, 25, 29],
            [8, 19, 29, 34, 40],
        ];
        for i in 0..6 {
            assert_eq!(ii.get(i, 0), 0, "first row");
            assert_eq!(ii.get(0, i), 0, "first column");
        }
        for (y, row) in inner.iter().enumerate() {
            assert_eq!(&ii.row(y + 1)[1..], row, "row {y}");
        }
    }

    #[test]
    fn seed_004_rect_sum_is_19_minus_4_minus_4_plus_1() {
        // Image rows 1..3 and columns 1..4 (half-open): 2+3+2 + 2+2+1 = 12.
        let ii = integral(&seed_image());
        assert_eq!(
            (ii.get(4, 3), ii.get(1, 3), ii.get(4, 1), ii.get(1, 1)),
            (19, 4, 4, 1)
        );
        assert_eq!(rect_sum_u32(&ii, 1, 1, 4, 3), 12);
        assert_eq!(rect_sum_u32(&ii, 0, 0, 5, 5), 40);
        assert_eq!(
            rect_sum_u32(&ii, 2, 2, 2, 4),
            0,
            "an empty rectangle sums to 0"
        );
    }

    #[test]
    fn squared_integral_equals_a_naive_sum() {
        let img = Plane::from_fn(37, 29, |x, y| ((x * 31 + y * 17 + x * y) % 256) as u8);
        assert_eq!(integral_sq(&img), naive(&img, |v| (v as u64) * (v as u64)));
        assert_eq!(
            rect_sum_u64(&integral_sq(&seed_image()), 1, 1, 4, 3),
            4 + 9 + 4 + 4 + 4 + 1
        );
    }

    #[test]
    fn tall_frames_span_several_bands_and_stay_exact() {
        let img = Plane::from_fn(13, 301, |x, y| ((x * 7 + y * 13) % 251) as u8);
        // Four threads give four bands whatever the machine.
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(4)
            .build()
            .unwrap();
        let (a, b) = pool.install(|| integrals(&img));
        assert_eq!(a, naive(&img, |v| v as u32));
        assert_eq!(b, naive(&img, |v| (v as u64) * (v as u64)));
        assert_eq!(pool.install(|| integral(&img)), a);
        assert_eq!(integral_sq(&img), b);
    }

    #[test]
    fn strided_input_ignores_padding() {
        let data = vec![1u8, 2, 200, 3, 4, 200];
        let img = Plane::from_vec_with_stride(2, 2, 3, data).unwrap();
        assert_eq!(integral(&img).as_slice(), &[0, 0, 0, 0, 1, 3, 0, 4, 10]);
    }

    #[test]
    fn u32_sums_wrap_past_their_range() {
        // 2^32 / 255 ≈ 16.8 million pixels; a 4200×4200 white frame overflows.
        let img = Plane::new(4200, 4200, 255u8);
        let ii = integral(&img);
        let exact = 255u64 * 4200 * 4200;
        assert_eq!(ii.get(4200, 4200), exact as u32);
        assert_ne!(ii.get(4200, 4200) as u64, exact);
        assert_eq!(rect_sum_u32(&ii, 100, 4000, 200, 4200), 255 * 100 * 200);
    }

    #[test]
    fn empty_planes_give_zero_tables() {
        let ii = integral(&Plane::new(0, 3, 0u8));
        assert_eq!((ii.width(), ii.height()), (1, 4));
        assert!(ii.as_slice().iter().all(|&v| v == 0));
    }

    #[test]
    fn view_scales_the_table_to_0_255() {
        let mut op = build(&Params::from_pairs(&SPEC, &[]).unwrap()).unwrap();
        let Frame::Gray(out) = op.apply(&Frame::Gray(seed_image())).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!((out.width(), out.height()), (5, 5));
        assert_eq!(out.get(4, 4), 255);
        assert_eq!(out.get(0, 0), 6); // 255 · 1/40 = 6.375
        assert_eq!(out.get(3, 2), 121); // 255 · 19/40 = 121.125
        let black = Frame::Rgba(Plane::new(3, 2, [0, 0, 0, 255]));
        assert_eq!(op.apply(&black).unwrap(), Frame::Gray(Plane::new(3, 2, 0)));
    }
}
