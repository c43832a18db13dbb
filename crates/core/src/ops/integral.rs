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
//! Each table is built in bands of rows in parallel and written once; the
//! row prefix sums are vectorised with AVX2 where the build has it.

use std::mem::MaybeUninit;

use rayon::prelude::*;

use super::params::{OpSpec, Params};
use super::{Op, OpBox};
use crate::error::Result;
use crate::frame::{DevFormat, Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "integral",
    summary: "view of the integral image of luma: 255·I(x+1,y+1)/I(W,H), rounded (exact tables are in the library API)",
    params: &[],
    example: "integral",
};

/// A cell of an integral table. The u32 table sums the values and the u64
/// table sums their squares; both wrap on overflow.
trait Cell: Copy + Default + Send + Sync {
    /// Whether finished rows go to the table by non-temporal stores
    /// ([`copy_to_table`]).
    const STREAM: bool;
    /// `col[x] += f(src[x])`: the column sums of a band, a row at a time.
    fn add_values(src: &[u8], col: &mut [Self]);
    /// `col[x] += f(src[0]) + … + f(src[x])`: one table row from the row above.
    fn add_row_prefix(src: &[u8], col: &mut [Self]);
    fn add(self, other: Self) -> Self;
}

impl Cell for u32 {
    // The 8 MB table at 1080p stays in this machine's cache between frames;
    // streaming it measured slower (0.46 → 0.64 ms).
    const STREAM: bool = false;
    #[inline]
    fn add_values(src: &[u8], col: &mut [u32]) {
        for (c, &v) in col.iter_mut().zip(src) {
            *c = c.wrapping_add(v as u32);
        }
    }
    #[inline]
    fn add_row_prefix(src: &[u8], col: &mut [u32]) {
        // SAFETY: the build enables AVX2 (the cfg), which is all it needs.
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        unsafe {
            avx2::add_row_prefix_u32(src, col)
        };
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        add_row_prefix_scalar(src, col, |v| v as u32);
    }
    #[inline]
    fn add(self, other: u32) -> u32 {
        self.wrapping_add(other)
    }
}

impl Cell for u64 {
    // 16 MB at 1080p, beside the u32 table in `integrals`: streaming saves
    // reading every line in first (2.1 → 1.6 ms for both tables).
    const STREAM: bool = true;
    #[inline]
    fn add_values(src: &[u8], col: &mut [u64]) {
        for (c, &v) in col.iter_mut().zip(src) {
            *c = c.wrapping_add((v as u64) * (v as u64));
        }
    }
    #[inline]
    fn add_row_prefix(src: &[u8], col: &mut [u64]) {
        // SAFETY: the build enables AVX2 (the cfg), which is all it needs.
        #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
        unsafe {
            avx2::add_row_prefix_u64_squares(src, col)
        };
        #[cfg(not(all(target_arch = "x86_64", target_feature = "avx2")))]
        add_row_prefix_scalar(src, col, |v| (v as u64) * (v as u64));
    }
    #[inline]
    fn add(self, other: u64) -> u64 {
        self.wrapping_add(other)
    }
}

/// The portable [`Cell::add_row_prefix`]: one serial add a pixel.
#[cfg_attr(all(target_arch = "x86_64", target_feature = "avx2"), allow(dead_code))]
#[inline]
fn add_row_prefix_scalar<T: Cell>(src: &[u8], col: &mut [T], f: impl Fn(u8) -> T) {
    let mut run = T::default();
    for (c, &v) in col.iter_mut().zip(src) {
        run = run.add(f(v));
        *c = c.add(run);
    }
}

/// Row prefix sums eight (u32) or four (u64) pixels at a time: a prefix
/// inside each 128-bit half by two shifted adds, the low half's total added
/// to the high half, then the running total of the row so far. Integer adds
/// wrap, so any order gives the same sums as the scalar loop.
#[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
mod avx2 {
    use std::arch::x86_64::*;

    #[target_feature(enable = "avx2")]
    pub(super) fn add_row_prefix_u32(src: &[u8], col: &mut [u32]) {
        let n = src.len().min(col.len());
        let (src, col) = (&src[..n], &mut col[..n]);
        let mut srcs = src.chunks_exact(8);
        let mut cols = col.chunks_exact_mut(8);
        let mut carry = _mm256_setzero_si256();
        for (s, c) in (&mut srcs).zip(&mut cols) {
            let bytes = u64::from_le_bytes(s.try_into().expect("chunks of 8"));
            let mut v = _mm256_cvtepu8_epi32(_mm_cvtsi64_si128(bytes as i64));
            v = _mm256_add_epi32(v, _mm256_slli_si256::<4>(v));
            v = _mm256_add_epi32(v, _mm256_slli_si256::<8>(v));
            // Low half's last sum, into every lane of the high half only.
            let low_total = _mm256_shuffle_epi32::<0xFF>(_mm256_permute2x128_si256::<0x08>(v, v));
            v = _mm256_add_epi32(_mm256_add_epi32(v, low_total), carry);
            carry = _mm256_permutevar8x32_epi32(v, _mm256_set1_epi32(7));
            // SAFETY: `c` is a chunk of exactly 8 u32 (32 bytes), and the
            // unaligned load and store touch only those bytes.
            unsafe {
                let p = c.as_mut_ptr().cast::<__m256i>();
                _mm256_storeu_si256(p, _mm256_add_epi32(_mm256_loadu_si256(p), v));
            }
        }
        let mut run = _mm256_extract_epi32::<7>(carry) as u32;
        for (c, &v) in cols.into_remainder().iter_mut().zip(srcs.remainder()) {
            run = run.wrapping_add(v as u32);
            *c = c.wrapping_add(run);
        }
    }

    /// Copies `src` to `dst` by non-temporal 32-byte stores.
    ///
    /// # Safety
    /// `dst` must start on a 32-byte boundary and be as long as `src`, and
    /// its length in bytes a multiple of 32.
    #[target_feature(enable = "avx2")]
    pub(super) unsafe fn stream_copy<T: Copy>(src: &[T], dst: &mut [std::mem::MaybeUninit<T>]) {
        let bytes = std::mem::size_of_val(src);
        let (from, to) = (src.as_ptr().cast::<u8>(), dst.as_mut_ptr().cast::<u8>());
        for k in (0..bytes).step_by(32) {
            // SAFETY: `k + 32 ≤ bytes`, within both slices (the caller's
            // lengths), and `to + k` is 32-byte aligned as the caller promised.
            unsafe {
                let v = _mm256_loadu_si256(from.add(k).cast());
                _mm256_stream_si256(to.add(k).cast(), v);
            }
        }
    }

    #[target_feature(enable = "avx2")]
    pub(super) fn add_row_prefix_u64_squares(src: &[u8], col: &mut [u64]) {
        let n = src.len().min(col.len());
        let (src, col) = (&src[..n], &mut col[..n]);
        let mut srcs = src.chunks_exact(4);
        let mut cols = col.chunks_exact_mut(4);
        let mut carry = _mm256_setzero_si256();
        for (s, c) in (&mut srcs).zip(&mut cols) {
            let bytes = u32::from_le_bytes(s.try_into().expect("chunks of 4"));
            let v = _mm256_cvtepu8_epi64(_mm_cvtsi32_si128(bytes as i32));
            let mut v = _mm256_mul_epu32(v, v);
            v = _mm256_add_epi64(v, _mm256_slli_si256::<8>(v));
            let low_total = _mm256_shuffle_epi32::<0xEE>(_mm256_permute2x128_si256::<0x08>(v, v));
            v = _mm256_add_epi64(_mm256_add_epi64(v, low_total), carry);
            carry = _mm256_permute4x64_epi64::<0xFF>(v);
            // SAFETY: `c` is a chunk of exactly 4 u64 (32 bytes), and the
            // unaligned load and store touch only those bytes.
            unsafe {
                let p = c.as_mut_ptr().cast::<__m256i>();
                _mm256_storeu_si256(p, _mm256_add_epi64(_mm256_loadu_si256(p), v));
            }
        }
        let mut run = _mm256_extract_epi64::<3>(carry) as u64;
        for (c, &v) in cols.into_remainder().iter_mut().zip(srcs.remainder()) {
            run = run.wrapping_add((v as u64) * (v as u64));
            *c = c.wrapping_add(run);
        }
    }
}

/// Copies a finished row into a table too large to cache. With AVX2 the
/// aligned middle goes by non-temporal stores, where a plain store would
/// first read each line in.
#[inline]
fn copy_to_table<T: Copy>(row: &[T], table: &mut [MaybeUninit<T>]) {
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    {
        // Elements before the first 32-byte boundary, then whole 32 bytes.
        let head_len = table.as_ptr().align_offset(32);
        let n = row.len().min(table.len());
        let per_vector = 32 / std::mem::size_of::<T>();
        let body_len = n.saturating_sub(head_len) / per_vector * per_vector;
        if head_len + body_len <= n {
            let (head, rest) = table[..n].split_at_mut(head_len);
            head.write_copy_of_slice(&row[..head_len]);
            let (body, tail) = rest.split_at_mut(body_len);
            // SAFETY: the build enables AVX2 (the cfg); the two slices are
            // the same length and `body` starts on a 32-byte boundary.
            unsafe { avx2::stream_copy(&row[head_len..head_len + body_len], body) };
            tail.write_copy_of_slice(&row[head_len + body_len..n]);
            return;
        }
    }
    table.write_copy_of_slice(row);
}

/// Orders the non-temporal stores of [`copy_to_table`] before the table is
/// handed on (a no-op without AVX2).
#[inline]
fn store_fence() {
    // SAFETY: the build enables AVX2 and so SSE (the cfg), all it needs.
    #[cfg(all(target_arch = "x86_64", target_feature = "avx2"))]
    unsafe {
        std::arch::x86_64::_mm_sfence()
    };
}

/// Rows a band of [`table`] takes at least.
const MIN_BAND_ROWS: usize = 32;

/// The table of `src` (values for u32, squares for u64): (W+1)×(H+1), first
/// row and column zero, every cell written once.
///
/// The rows are cut into bands that run in parallel, each in three steps:
/// the column sums of every band (a vectorised pass over the bytes), the
/// table row above a band from the sums of the bands before it, and then the
/// band's rows, each the row above plus the row's prefix sums (vectorised in
/// [`Cell::add_row_prefix`]). A row is built in `col` (in L1) and copied
/// into the table. The table is written into uninitialised capacity: zeroing
/// it first would cost a whole extra write (8 MB for u32 at 1080p).
fn table<T: Cell>(src: &Plane<u8>) -> Plane<T> {
    let (w, h) = (src.width(), src.height());
    let stride = w + 1;
    if w == 0 || h == 0 {
        return Plane::new(stride, h + 1, T::default());
    }
    // A few bands a thread, so that a late thread still finds work.
    let band_rows = h
        .div_ceil(4 * rayon::current_num_threads())
        .max(MIN_BAND_ROWS);
    let bands = h.div_ceil(band_rows);
    // Small per-call buffers: the column sums of each band but the last.
    let sums: Vec<Vec<T>> = (0..bands - 1)
        .into_par_iter()
        .map(|b| {
            let mut col = vec![T::default(); w];
            for y in b * band_rows..(b + 1) * band_rows {
                T::add_values(src.row(y), &mut col);
            }
            col
        })
        .collect();
    // The table's one allocation, filled below before `set_len`.
    let mut data: Vec<T> = Vec::with_capacity(stride * (h + 1));
    let (first_row, mut rest) = data.spare_capacity_mut()[..stride * (h + 1)].split_at_mut(stride);
    for cell in first_row {
        cell.write(T::default());
    }
    let mut chunks = Vec::with_capacity(bands);
    for b in 0..bands {
        let rows = band_rows.min(h - b * band_rows);
        let (chunk, tail) = rest.split_at_mut(rows * stride);
        chunks.push((b, chunk));
        rest = tail;
    }
    chunks.into_par_iter().for_each(|(b, chunk)| {
        let mut col = vec![T::default(); w];
        for s in &sums[..b] {
            for (c, &v) in col.iter_mut().zip(s) {
                *c = c.add(v);
            }
        }
        let mut run = T::default();
        for c in col.iter_mut() {
            run = run.add(*c);
            *c = run;
        }
        for (row, y) in chunk.chunks_exact_mut(stride).zip(b * band_rows..) {
            T::add_row_prefix(src.row(y), &mut col);
            row[0].write(T::default());
            if T::STREAM {
                copy_to_table(&col, &mut row[1..]);
            } else {
                row[1..].write_copy_of_slice(&col);
            }
        }
        store_fence();
    });
    // SAFETY: the first row and every band's rows (together rows 1..=h, as
    // the bands cover 0..h) were written above, so all `stride·(h+1)`
    // elements within the capacity are initialised.
    unsafe { data.set_len(stride * (h + 1)) };
    Plane::from_vec(stride, h + 1, data).expect("a table is built at its full size")
}

/// The integral image of `src`: (W+1)×(H+1), first row and column zero,
/// `I(x+1, y+1)` = the sum of `src` over `x' ≤ x, y' ≤ y`.
///
/// Sums are u32: exact up to 16.8 million pixels of 255 (a 4K frame fits);
/// beyond that they wrap (`wrapping_add`), as NPP's do. Rectangle sums read
/// with [`rect_sum_u32`] stay exact while the rectangle's own sum fits in u32.
pub fn integral(src: &Plane<u8>) -> Plane<u32> {
    table(src)
}

/// The integral image of the squares of `src`, as [`integral`] but in u64,
/// which is exact for any frame size.
pub fn integral_sq(src: &Plane<u8>) -> Plane<u64> {
    table(src)
}

/// [`integral`] and [`integral_sq`] of `src`, computed together.
///
/// The two tables are independent, so they are built side by side, each
/// itself in parallel bands.
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

    fn output_format(&self, _: DevFormat) -> DevFormat {
        DevFormat::Gray
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

    /// The table by the recurrence I(x+1, y+1) = v + I(x, y+1) + I(x+1, y)
    /// − I(x, y), one cell at a time, in wrapping arithmetic.
    fn recurrence<T: Copy + Default + PartialEq + std::fmt::Debug>(
        src: &Plane<u8>,
        f: impl Fn(u8) -> T,
        add: impl Fn(T, T) -> T,
        sub: impl Fn(T, T) -> T,
    ) -> Plane<T> {
        let mut t = Plane::new(src.width() + 1, src.height() + 1, T::default());
        for y in 0..src.height() {
            for x in 0..src.width() {
                let v = sub(
                    add(add(f(src.get(x, y)), t.get(x, y + 1)), t.get(x + 1, y)),
                    t.get(x, y),
                );
                t.set(x + 1, y + 1, v);
            }
        }
        t
    }

    #[test]
    fn banded_vectorised_tables_equal_the_recurrence_on_awkward_sizes() {
        let sizes = [
            (1, 1),
            (1, 70),
            (2, 3),
            (3, 1),
            (7, 65),
            (8, 8),
            (9, 33),
            (17, 100),
            (33, 257),
            (64, 31),
            (1917, 5),
        ];
        let pools = [1, 2, 3, 7].map(|n| {
            rayon::ThreadPoolBuilder::new()
                .num_threads(n)
                .build()
                .unwrap()
        });
        for (w, h) in sizes {
            // Mostly bright, so that the squares are large, with some noise.
            let img = Plane::from_fn(w, h, |x, y| {
                let n = (x as u64 * 2_654_435_761) ^ (y as u64 * 40_503);
                (255 - (n.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> 58)) as u8
            });
            let sums = recurrence(&img, |v| v as u32, u32::wrapping_add, u32::wrapping_sub);
            let squares = recurrence(
                &img,
                |v| (v as u64) * (v as u64),
                u64::wrapping_add,
                u64::wrapping_sub,
            );
            for pool in &pools {
                let n = pool.current_num_threads();
                assert_eq!(
                    pool.install(|| integral(&img)),
                    sums,
                    "{w}x{h}, {n} threads"
                );
                assert_eq!(
                    pool.install(|| integral_sq(&img)),
                    squares,
                    "{w}x{h}, {n} threads"
                );
            }
        }
    }

    #[test]
    fn row_prefix_equals_the_portable_loop_for_every_tail_length() {
        for n in 0..40 {
            let src: Vec<u8> = (0..n).map(|i| (250 - i * 37 % 200) as u8).collect();
            let start32: Vec<u32> = (0..n).map(|i| u32::MAX - 1000 + i as u32 * 77).collect();
            let (mut fast, mut portable) = (start32.clone(), start32);
            u32::add_row_prefix(&src, &mut fast);
            add_row_prefix_scalar(&src, &mut portable, |v| v as u32);
            assert_eq!(fast, portable, "u32, {n} pixels");
            let start64: Vec<u64> = (0..n)
                .map(|i| u64::MAX - 100_000 + i as u64 * 9_999)
                .collect();
            let (mut fast, mut portable) = (start64.clone(), start64);
            u64::add_row_prefix(&src, &mut fast);
            add_row_prefix_scalar(&src, &mut portable, |v| (v as u64) * (v as u64));
            assert_eq!(fast, portable, "u64, {n} pixels");
        }
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
