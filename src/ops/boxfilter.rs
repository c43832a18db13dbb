//! `box`: the mean over a (2r+1)×(2r+1) window of border-extended samples.
//!
//! With `S` the exact integer sum of the window and `n = (2r+1)²`, the output
//! is `(S + n/2) / n` in integer division (round half up). The cost does not
//! grow with `r`: a running sum down the rows of the border-extended row
//! sequence, then prefix sums along each border-extended row (length
//! `width + 2r`). On RGBA the first three channels are filtered and alpha is
//! copied.
//!
//! All sums are `u32` with wrapping arithmetic. That is exact: every window
//! sum is at most `(2·1000 + 1)² · 255 = 1_021_020_255 < 2³²`, so a difference
//! of two prefix sums (or a running sum after its add and subtract) is right
//! modulo 2³² and therefore right, even where a prefix itself wraps.

use rayon::prelude::*;

use super::border::{BORDER_CHOICES, Border};
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox, Pixel};
use crate::error::Result;
use crate::frame::{Frame, Plane};

/// The largest radius; it keeps every window sum below 2³² (see the module docs).
pub const MAX_RADIUS: usize = 1000;

pub static SPEC: OpSpec = OpSpec {
    name: "box",
    summary: "mean over a (2r+1)×(2r+1) window, rounded half up",
    params: &[
        ParamSpec::new("radius", Kind::Int { min: 0, max: MAX_RADIUS as i64 }, "1", "pixels on each side of the centre"),
        ParamSpec::new("border", Kind::Choice(BORDER_CHOICES), "replicate", "how pixels outside the frame are read"),
    ],
    example: "box:radius=4,border=reflect101",
};

/// The `box` op.
#[derive(Debug)]
pub struct BoxFilter {
    pub radius: usize,
    pub border: Border,
}

pub fn build(p: &Params) -> Result<OpBox> {
    Ok(Box::new(BoxFilter { radius: p.usize("radius")?, border: p.border()? }))
}

impl Op for BoxFilter {
    fn name(&self) -> &'static str {
        "box"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(box_filter(p, self.radius, self.border)),
            Frame::Gray(p) => Frame::Gray(box_filter(p, self.radius, self.border)),
        })
    }
}

/// The box mean of `src` over a `(2·radius+1)²` window read through `border`:
/// `(S + n/2) / n` with `S` the exact window sum and `n = (2·radius+1)²`.
/// Filters the first `P::FILTERED` channels and copies the rest. The cost per
/// pixel does not depend on `radius`.
///
/// # Panics
/// If `radius > MAX_RADIUS`.
pub fn box_filter<P: Pixel>(src: &Plane<P>, radius: usize, border: Border) -> Plane<P> {
    assert!(radius <= MAX_RADIUS, "box_filter: radius {radius} is above {MAX_RADIUS}");
    if src.is_empty() {
        return src.to_packed();
    }
    let (w, h, r) = (src.width(), src.height(), radius);
    let c = P::FILTERED;
    let n = ((2 * r + 1) * (2 * r + 1)) as u32;
    let div = Divider::new(n);
    let left: Vec<Option<usize>> = (0..r).map(|j| border.index(j as isize - r as isize, w)).collect();
    let right: Vec<Option<usize>> = (0..r).map(|j| border.index((w + j) as isize, w)).collect();
    let threads = rayon::current_num_threads().max(1);
    let band = h.div_ceil(4 * threads).max((2 * r + 1).div_ceil(4).min(h.div_ceil(threads))).max(1);

    let mut out = Plane::new(w, h, P::default());
    out.par_rows_mut().with_min_len(band).for_each_init(
        || BoxScratch {
            col: vec![0; w * c],
            prefix: vec![0; (w + 2 * r + 1) * c],
            means: vec![0; w * c],
            counts: Vec::new(),
            last: None,
        },
        |s, (y, out_row)| {
            let row_of = |v: isize| border.index(v, h).map(|i| src.row(i));
            // col[x] = Σ over rows v in y−r..=y+r of src(x, v), border-mapped.
            if s.last.is_some_and(|l| l + 1 == y) {
                let add = row_of((y + r) as isize);
                let sub = row_of(y as isize - r as isize - 1);
                add_sub_row(&mut s.col, add, sub);
            } else {
                init_column_sums(s, src, border, y, r);
            }
            s.last = Some(y);
            prefix_row::<P>(&s.col, &left, &right, &mut s.prefix);
            let span = (2 * r + 1) * c;
            for ((m, &hi), &lo) in s.means.iter_mut().zip(&s.prefix[span..]).zip(&s.prefix[..w * c]) {
                *m = div.div(hi.wrapping_sub(lo));
            }
            for ((o, &p), q) in out_row.iter_mut().zip(src.row(y)).zip(s.means.chunks_exact(c)) {
                let mut v = p;
                for (ch, &q) in q.iter().enumerate() {
                    v.set_channel(ch, q);
                }
                *o = v;
            }
        },
    );
    out
}

/// Per-job scratch of [`box_filter`].
struct BoxScratch {
    /// Column sums over the window of the last row done, channels interleaved.
    col: Vec<u32>,
    /// Prefix sums of `col` along the border-extended row.
    prefix: Vec<u32>,
    /// The means of the current row, channels interleaved.
    means: Vec<u8>,
    /// How often each source row occurs in a window (when 2r+1 > height).
    counts: Vec<u32>,
    /// The output row `col` belongs to.
    last: Option<usize>,
}

/// `col = Σ rows v in y−r..=y+r` (border-mapped): directly for a short
/// window, else by multiplicity, so that the cost is at most one pass over
/// each source row however large `r` is.
fn init_column_sums<P: Pixel>(s: &mut BoxScratch, src: &Plane<P>, border: Border, y: usize, r: usize) {
    let h = src.height();
    s.col.fill(0);
    let (lo, hi) = (y as isize - r as isize, (y + r) as isize);
    if 2 * r + 1 <= h {
        for v in lo..=hi {
            add_sub_row(&mut s.col, border.index(v, h).map(|i| src.row(i)), None);
        }
        return;
    }
    s.counts.clear();
    s.counts.resize(h, 0);
    for v in lo..=hi {
        // A virtual row the border reads as zero adds nothing.
        if let Some(i) = border.index(v, h) {
            s.counts[i] += 1;
        }
    }
    let c = P::FILTERED;
    for (i, &m) in s.counts.iter().enumerate() {
        if m > 0 {
            for (d, p) in s.col.chunks_exact_mut(c).zip(src.row(i)) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_add(m * p.channel(ch) as u32);
                }
            }
        }
    }
}

/// `col += add − sub` channel by channel (wrapping; see the module docs).
fn add_sub_row<P: Pixel>(col: &mut [u32], add: Option<&[P]>, sub: Option<&[P]>) {
    let c = P::FILTERED;
    match (add, sub) {
        (Some(a), Some(b)) => {
            for ((d, p), q) in col.chunks_exact_mut(c).zip(a).zip(b) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_add(p.channel(ch) as u32).wrapping_sub(q.channel(ch) as u32);
                }
            }
        }
        (Some(a), None) => {
            for (d, p) in col.chunks_exact_mut(c).zip(a) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_add(p.channel(ch) as u32);
                }
            }
        }
        (None, Some(b)) => {
            for (d, q) in col.chunks_exact_mut(c).zip(b) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_sub(q.channel(ch) as u32);
                }
            }
        }
        (None, None) => {}
    }
}

/// `prefix[j·c + ch]` = sum of the first `j` samples of channel `ch` of the
/// border-extended `col` row (`left`, then `col`, then `right`).
fn prefix_row<P: Pixel>(col: &[u32], left: &[Option<usize>], right: &[Option<usize>], prefix: &mut [u32]) {
    let c = P::FILTERED;
    let mut run = [0u32; 4];
    prefix[..c].fill(0);
    let mut dst = prefix[c..].chunks_exact_mut(c);
    let mut push = |vals: &[u32]| {
        if let Some(d) = dst.next() {
            for ((d, r), &v) in d.iter_mut().zip(run.iter_mut()).zip(vals) {
                *r = r.wrapping_add(v);
                *d = *r;
            }
        }
    };
    let zero = [0u32; 4];
    for m in left {
        push(m.map_or(&zero[..c], |i| &col[i * c..i * c + c]));
    }
    for v in col.chunks_exact(c) {
        push(v);
    }
    for m in right {
        push(m.map_or(&zero[..c], |i| &col[i * c..i * c + c]));
    }
}

/// Exact `floor((s + n/2) / n)` for `s ≤ 255·n`, by one f64 multiply: with
/// `Y = s + n/2 + 1/2`, `Y/n` is never an integer and lies at least `1/(2n)`
/// from one, while the two roundings of `Y · fl(1/n)` move it by less than
/// `256 · 2⁻⁵¹`, far below `1/(2n) ≥ 2⁻²³`; and `Y/n` has the floor of
/// `(s + n/2)/n`.
#[derive(Clone, Copy, Debug)]
struct Divider {
    half: f64,
    inv: f64,
}

impl Divider {
    fn new(n: u32) -> Self {
        Self { half: (n / 2) as f64 + 0.5, inv: 1.0 / n as f64 }
    }

    #[inline]
    fn div(self, s: u32) -> u8 {
        ((s as f64 + self.half) * self.inv) as u8
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::params::split_op;

    fn naive(src: &Plane<u8>, r: usize, b: Border) -> Plane<u8> {
        let (w, h) = (src.width(), src.height());
        let n = ((2 * r + 1) * (2 * r + 1)) as u64;
        Plane::from_fn(w, h, |x, y| {
            let mut s = 0u64;
            for dy in -(r as isize)..=r as isize {
                for dx in -(r as isize)..=r as isize {
                    if let (Some(sx), Some(sy)) = (b.index(x as isize + dx, w), b.index(y as isize + dy, h)) {
                        s += src.get(sx, sy) as u64;
                    }
                }
            }
            ((s + n / 2) / n) as u8
        })
    }

    fn noise(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| ((x * 7919 + y * 104_729 + x * y * 31) % 251) as u8)
    }

    #[test]
    fn divider_is_exact_at_every_rounding_edge() {
        for r in 0..=MAX_RADIUS as u32 {
            let n = (2 * r + 1) * (2 * r + 1);
            let d = Divider::new(n);
            for k in 0..=255u32 {
                // s + n/2 one below, at and one above the multiple k·n.
                for t in [k * n, k * n + 1, (k * n).wrapping_sub(1)] {
                    let s = t.wrapping_sub(n / 2);
                    if t >= n / 2 && s <= 255 * n {
                        assert_eq!(d.div(s) as u32, (s + n / 2) / n, "n={n} s={s}");
                    }
                }
            }
        }
        let d = Divider::new(9);
        for s in 0..=255 * 9 {
            assert_eq!(d.div(s) as u32, (s + 4) / 9);
        }
    }

    #[test]
    fn equals_the_naive_window_sum() {
        let src = noise(11, 8);
        for b in [Border::Zero, Border::Replicate, Border::Reflect101] {
            for r in [0, 1, 2, 3, 5, 9, 23] {
                assert_eq!(box_filter(&src, r, b), naive(&src, r, b), "r={r} {b:?}");
            }
        }
    }

    #[test]
    fn radius_zero_is_a_copy_and_a_constant_stays_constant() {
        let src = noise(7, 5);
        assert_eq!(box_filter(&src, 0, Border::Zero), src);
        let flat = Plane::new(9, 4, 201u8);
        for b in [Border::Replicate, Border::Reflect101] {
            for r in [1, 3, 50] {
                assert_eq!(box_filter(&flat, r, b), flat);
            }
        }
    }

    #[test]
    fn zero_border_darkens_the_corner() {
        let flat = Plane::new(5, 5, 90u8);
        let out = box_filter(&flat, 1, Border::Zero);
        assert_eq!(out.get(0, 0), 40); // 4 · 90 / 9
        assert_eq!(out.get(2, 0), 60); // 6 · 90 / 9
        assert_eq!(out.get(2, 2), 90);
    }

    #[test]
    fn rounds_half_up() {
        // 3x3 window with sum 4 + 8·0 → 4/9 = 0.44 → 0; sum 5 → 0.56 → 1.
        let mut p = Plane::new(3, 3, 0u8);
        p.set(1, 1, 4);
        assert_eq!(box_filter(&p, 1, Border::Zero).get(1, 1), 0);
        p.set(1, 1, 5);
        assert_eq!(box_filter(&p, 1, Border::Zero).get(1, 1), 1);
        // A 1x1 frame with replicate: n = 9 copies of one value.
        assert_eq!(box_filter(&Plane::new(1, 1, 77u8), 1, Border::Replicate).get(0, 0), 77);
    }

    #[test]
    fn rgba_keeps_alpha() {
        let src = Plane::from_fn(6, 5, |x, y| [(x * 40) as u8, (y * 50) as u8, ((x + y) * 20) as u8, (x * y) as u8]);
        let out = box_filter(&src, 2, Border::Reflect101);
        let red = naive(&src.map(|p| p[0]), 2, Border::Reflect101);
        for y in 0..5 {
            for x in 0..6 {
                assert_eq!(out.get(x, y)[3], src.get(x, y)[3]);
                assert_eq!(out.get(x, y)[0], red.get(x, y));
            }
        }
    }

    #[test]
    fn op_parses_radius_and_border() {
        let (_, pairs) = split_op("box:radius=2,border=zero").unwrap();
        let mut op = build(&Params::from_pairs(&SPEC, &pairs).unwrap()).unwrap();
        let src = noise(6, 6);
        let Frame::Gray(out) = op.apply(&Frame::Gray(src.clone())).unwrap() else { panic!("expected gray") };
        assert_eq!(out, naive(&src, 2, Border::Zero));
        let (_, pairs) = split_op("box:radius=1001").unwrap();
        let e = Params::from_pairs(&SPEC, &pairs).unwrap_err().to_string();
        assert!(e.contains("radius=1001") && e.contains("0 to 1000"), "{e}");
    }
}
