//! `integral`: integral images (summed-area tables) of a gray plane.
//!
//! The exact tables are the library API: [`integral`] (u32 sums),
//! [`integral_sq`] (u64 sums of squares) and [`integrals`] (both at once),
//! each (W+1)×(H+1) with a zero first row and column, so that
//! `I(x+1, y+1)` is the sum over `x' ≤ x, y' ≤ y`; [`rect_sum_u32`] and
//! [`rect_sum_u64`] read the sum of a rectangle from them. The chain op
//! `integral` only makes a table visible: it scales the u32 table of luma to
//! 0..=255 in a W×H gray frame.
//!
//! Each table is one sequential, write-once pass; [`integrals`] builds its
//! two tables on two threads.

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

/// The table of `f(src)`: (W+1)×(H+1), first row and column zero, in one
/// sequential pass that writes every cell of the table once.
///
/// The table is the result, so it is allocated here, but with capacity only
/// and filled by `extend`: a zeroed allocation (`vec![0; n]`) would cost a
/// whole extra write of the table (a memset of 8 MB for u32 at 1080p, about
/// a third of the work). One row of running column sums (`col`, in L1) is the
/// only temporary (two, as rows go in pairs): each row is
/// `col += prefix(f(src row))`, and the new `col` is appended to the table as
/// it is made. The former two-band parallel scan (zeroed tables plus a pass
/// of column totals) measured no faster at 1080p on 2 threads (1.33 ms
/// against 1.34 ms), and this leaves the second thread to [`integrals`].
/// Pairs of rows: 1.19 → 1.08 ms; groups of four measured slower (1.30 ms).
fn table<T: Copy + Default>(
    src: &Plane<u8>,
    f: impl Fn(u8) -> T,
    add: impl Fn(T, T) -> T,
) -> Plane<T> {
    let (w, h) = (src.width(), src.height());
    let stride = w + 1;
    let mut data = Vec::with_capacity(stride * (h + 1));
    let mut col = vec![T::default(); w];
    let mut upper = vec![T::default(); w];
    data.resize(stride, T::default());
    // Rows go in pairs: the two running sums are independent chains of adds,
    // which the CPU overlaps, where one row alone waits on each add.
    let mut y = 0;
    while y + 1 < h {
        let (a, b) = (src.row(y), src.row(y + 1));
        let (mut run_a, mut run_b) = (T::default(), T::default());
        for (((c, u), &va), &vb) in col.iter_mut().zip(upper.iter_mut()).zip(a).zip(b) {
            run_a = add(run_a, f(va));
            run_b = add(run_b, f(vb));
            *u = add(*c, run_a);
            *c = add(*u, run_b);
        }
        data.push(T::default());
        data.extend_from_slice(&upper);
        data.push(T::default());
        data.extend_from_slice(&col);
        y += 2;
    }
    if y < h {
        data.push(T::default());
        let mut run = T::default();
        for (c, &v) in col.iter_mut().zip(src.row(y)) {
            run = add(run, f(v));
            *c = add(*c, run);
        }
        data.extend_from_slice(&col);
    }
    Plane::from_vec(w + 1, h + 1, data).expect("a table is built at its full size")
}

/// The integral image of `src`: (W+1)×(H+1), first row and column zero,
/// `I(x+1, y+1)` = the sum of `src` over `x' ≤ x, y' ≤ y`.
///
/// Sums are u32: exact up to 16.8 million pixels of 255 (a 4K frame fits);
/// beyond that they wrap (`wrapping_add`), as NPP's do. Rectangle sums read
/// with [`rect_sum_u32`] stay exact while the rectangle's own sum fits in u32.
pub fn integral(src: &Plane<u8>) -> Plane<u32> {
    table(src, |v| v as u32, u32::wrapping_add)
}

/// The integral image of the squares of `src`, as [`integral`] but in u64,
/// which is exact for any frame size.
pub fn integral_sq(src: &Plane<u8>) -> Plane<u64> {
    table(src, |v| (v as u64) * (v as u64), u64::wrapping_add)
}

/// [`integral`] and [`integral_sq`] of `src`, computed together.
///
/// The two tables are independent, so they are built on two threads, each in
/// one write-once pass.
pub fn integrals(src: &Plane<u8>) -> (Plane<u32>, Plane<u64>) {
    rayon::join(|| integral(src), || integral_sq(src))
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
