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
use crate::color::floor_u8;
use crate::error::Result;
use crate::frame::{Frame, Plane};

/// The largest radius; it keeps every window sum below 2³² (see the module docs).
pub const MAX_RADIUS: usize = 1000;

pub static SPEC: OpSpec = OpSpec {
    name: "box",
    summary: "mean over a (2r+1)×(2r+1) window, rounded half up",
    params: &[
        ParamSpec::new(
            "radius",
            Kind::Int {
                min: 0,
                max: MAX_RADIUS as i64,
            },
            "1",
            "pixels on each side of the centre",
        ),
        ParamSpec::new(
            "border",
            Kind::Choice(BORDER_CHOICES),
            "replicate",
            "how pixels outside the frame are read",
        ),
    ],
    example: "box:radius=4,border=reflect101",
};

/// The `box` op.
#[derive(Debug)]
pub struct BoxFilter {
    pub radius: usize,
    pub border: Border,
}

/// Builds a `box` op.
pub fn build(p: &Params) -> Result<OpBox> {
    Ok(Box::new(BoxFilter {
        radius: p.usize("radius")?,
        border: p.border()?,
    }))
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
/// If `radius > MAX_RADIUS`, or `P::CHANNELS` is not 1 to 4.
pub fn box_filter<P: Pixel>(src: &Plane<P>, radius: usize, border: Border) -> Plane<P> {
    assert!(
        radius <= MAX_RADIUS,
        "box_filter: radius {radius} is above {MAX_RADIUS}"
    );
    if src.is_empty() {
        return src.to_packed();
    }
    // A constant channel count lets the channel loops unroll and vectorise.
    // Every channel is summed (whole pixels move through SIMD lanes without
    // shuffles); only the filtered ones are written.
    match P::CHANNELS {
        1 => box_impl::<P, 1>(src, radius, border),
        2 => box_impl::<P, 2>(src, radius, border),
        3 => box_impl::<P, 3>(src, radius, border),
        4 => box_impl::<P, 4>(src, radius, border),
        c => panic!("box_filter: {c} channels; pixels have 1 to 4"),
    }
}

fn box_impl<P: Pixel, const C: usize>(src: &Plane<P>, r: usize, border: Border) -> Plane<P> {
    let (w, h) = (src.width(), src.height());
    let div = Divider::new(((2 * r + 1) * (2 * r + 1)) as u32);
    let left: Vec<Option<usize>> = (0..r)
        .map(|j| border.index(j as isize - r as isize, w))
        .collect();
    let right: Vec<Option<usize>> = (0..r).map(|j| border.index((w + j) as isize, w)).collect();
    // Each job starts by summing up to 2r+1 rows; make jobs long enough to
    // amortise that, with at least as many jobs as threads.
    let threads = rayon::current_num_threads().max(1);
    let band = h
        .div_ceil(4 * threads)
        .max((2 * r + 1).div_ceil(4).min(h.div_ceil(threads)))
        .max(1);

    let mut out = Plane::new(w, h, P::default());
    out.par_rows_mut().with_min_len(band).for_each_init(
        || BoxScratch::<C> {
            col: vec![[0; C]; w],
            prefix: vec![[0; C]; w + 2 * r + 1],
            means: vec![[0; C]; w],
            counts: Vec::new(),
            last: None,
        },
        |s, (y, out_row)| {
            let row_of = |v: isize| border.index(v, h).map(|i| src.row(i));
            // col[x] = Σ over rows v in y−r..=y+r of src(x, v), border-mapped.
            if s.last.is_some_and(|l| l + 1 == y) {
                add_sub_row(
                    &mut s.col,
                    row_of((y + r) as isize),
                    row_of(y as isize - r as isize - 1),
                );
            } else {
                init_column_sums(s, src, border, y, r);
            }
            s.last = Some(y);
            prefix_row(&s.col, &left, &right, &mut s.prefix);
            // Window sum along x = prefix[x + 2r + 1] − prefix[x].
            let span = 2 * r + 1;
            div.means(
                s.prefix[span..].as_flattened(),
                s.prefix[..w].as_flattened(),
                s.means.as_flattened_mut(),
            );
            for ((o, &p), m) in out_row.iter_mut().zip(src.row(y)).zip(&s.means) {
                let mut v = P::default();
                for (ch, &m) in m.iter().enumerate() {
                    v.set_channel(ch, if ch < P::FILTERED { m } else { p.channel(ch) });
                }
                *o = v;
            }
        },
    );
    out
}

/// Per-job scratch of [`box_filter`], `C` channels a pixel.
struct BoxScratch<const C: usize> {
    /// Column sums over the window of the row `last`.
    col: Vec<[u32; C]>,
    /// Prefix sums of `col` along the border-extended row.
    prefix: Vec<[u32; C]>,
    /// The means of the current row.
    means: Vec<[u8; C]>,
    /// How often each source row occurs in a window (when 2r+1 > height).
    counts: Vec<u32>,
    /// The output row `col` belongs to.
    last: Option<usize>,
}

/// `col = Σ rows v in y−r..=y+r` (border-mapped): directly for a short
/// window, else by multiplicity, so that the cost is at most one pass over
/// each source row however large `r` is.
fn init_column_sums<P: Pixel, const C: usize>(
    s: &mut BoxScratch<C>,
    src: &Plane<P>,
    border: Border,
    y: usize,
    r: usize,
) {
    let h = src.height();
    s.col.fill([0; C]);
    let (lo, hi) = (y as isize - r as isize, (y + r) as isize);
    if 2 * r < h {
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
    for (i, &m) in s.counts.iter().enumerate() {
        if m > 0 {
            for (d, p) in s.col.iter_mut().zip(src.row(i)) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_add(m * p.channel(ch) as u32);
                }
            }
        }
    }
}

/// `col += add − sub` channel by channel (wrapping; see the module docs).
fn add_sub_row<P: Pixel, const C: usize>(
    col: &mut [[u32; C]],
    add: Option<&[P]>,
    sub: Option<&[P]>,
) {
    match (add, sub) {
        (Some(a), Some(b)) => {
            for ((d, p), q) in col.iter_mut().zip(a).zip(b) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d
                        .wrapping_add(p.channel(ch) as u32)
                        .wrapping_sub(q.channel(ch) as u32);
                }
            }
        }
        (Some(a), None) => {
            for (d, p) in col.iter_mut().zip(a) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_add(p.channel(ch) as u32);
                }
            }
        }
        (None, Some(b)) => {
            for (d, q) in col.iter_mut().zip(b) {
                for (ch, d) in d.iter_mut().enumerate() {
                    *d = d.wrapping_sub(q.channel(ch) as u32);
                }
            }
        }
        (None, None) => {}
    }
}

/// `prefix[j]` = the sum of the first `j` samples of the border-extended
/// `col` row (`left`, then `col`, then `right`), wrapping.
fn prefix_row<const C: usize>(
    col: &[[u32; C]],
    left: &[Option<usize>],
    right: &[Option<usize>],
    prefix: &mut [[u32; C]],
) {
    let (l, w) = (left.len(), col.len());
    let mut run = [0u32; C];
    prefix[0] = run;
    let zero = [0u32; C];
    for (d, m) in prefix[1..=l].iter_mut().zip(left) {
        step(&mut run, d, m.map_or(&zero, |i| &col[i]));
    }
    let body = &mut prefix[l + 1..=l + w];
    if C == 1 && w >= 64 {
        run = split_prefix(col, body, run);
    } else {
        for (d, v) in body.iter_mut().zip(col) {
            step(&mut run, d, v);
        }
    }
    for (d, m) in prefix[l + w + 1..].iter_mut().zip(right) {
        step(&mut run, d, m.map_or(&zero, |i| &col[i]));
    }
}

/// `run += v; d = run`, wrapping.
#[inline(always)]
fn step<const C: usize>(run: &mut [u32; C], d: &mut [u32; C], v: &[u32; C]) {
    *run = std::array::from_fn(|ch| run[ch].wrapping_add(v[ch]));
    *d = *run;
}

/// The running sums of `col` from `start` into `out`, returning the total;
/// computed as four independent chains over quarters of the row, then
/// offset, so that one channel is not limited by the latency of one chain.
fn split_prefix<const C: usize>(
    col: &[[u32; C]],
    out: &mut [[u32; C]],
    start: [u32; C],
) -> [u32; C] {
    const K: usize = 4;
    let q = col.len() / K;
    let mut runs = [[0u32; C]; K];
    let (c0, c1, c2, c3) = (
        &col[..q],
        &col[q..2 * q],
        &col[2 * q..3 * q],
        &col[3 * q..4 * q],
    );
    let (o0, rest) = out.split_at_mut(q);
    let (o1, rest) = rest.split_at_mut(q);
    let (o2, rest) = rest.split_at_mut(q);
    let o3 = &mut rest[..q];
    let [r0, r1, r2, r3] = &mut runs;
    for i in 0..q {
        step(r0, &mut o0[i], &c0[i]);
        step(r1, &mut o1[i], &c1[i]);
        step(r2, &mut o2[i], &c2[i]);
        step(r3, &mut o3[i], &c3[i]);
    }
    let mut off = start;
    for (s, run) in runs.iter().enumerate() {
        for d in &mut out[s * q..(s + 1) * q] {
            for (d, &o) in d.iter_mut().zip(&off) {
                *d = d.wrapping_add(o);
            }
        }
        for (o, &r) in off.iter_mut().zip(run) {
            *o = o.wrapping_add(r);
        }
    }
    for (d, v) in out[K * q..].iter_mut().zip(&col[K * q..]) {
        step(&mut off, d, v);
    }
    off
}

/// Exact `floor((s + n/2) / n)` for `s ≤ 255·n`, by one multiply: with
/// `Y = s + n/2 + 1/2`, `Y/n` is never an integer and lies at least `1/(2n)`
/// from one, and has the floor of `(s + n/2)/n`. In f64 the two roundings of
/// `Y · fl(1/n)` move it by less than `256 · 2⁻⁵¹`, far below
/// `1/(2n) ≥ 2⁻²³`. In f32 (used while `n ≤ 2¹²`, where `Y` is exact) they
/// move it by less than `256 · 2⁻²³ = 2⁻¹⁵`, below `1/(2n) ≥ 2⁻¹³`.
#[derive(Clone, Copy, Debug)]
enum Divider {
    F32 { half: f32, inv: f32 },
    F64 { half: f64, inv: f64 },
}

impl Divider {
    fn new(n: u32) -> Self {
        if n <= 1 << 12 {
            Divider::F32 {
                half: (n / 2) as f32 + 0.5,
                inv: 1.0 / n as f32,
            }
        } else {
            Divider::F64 {
                half: (n / 2) as f64 + 0.5,
                inv: 1.0 / n as f64,
            }
        }
    }

    /// `floor((s + n/2) / n)` of one sum.
    #[inline]
    fn div(self, s: u32) -> u8 {
        match self {
            Divider::F32 { half, inv } => floor_u8((s as f32 + half) * inv),
            Divider::F64 { half, inv } => ((s as f64 + half) * inv) as u8,
        }
    }

    /// `out[i] = div(hi[i] − lo[i])`, the difference wrapping.
    fn means(self, hi: &[u32], lo: &[u32], out: &mut [u8]) {
        match self {
            Divider::F32 { half, inv } => {
                for ((o, &a), &b) in out.iter_mut().zip(hi).zip(lo) {
                    // The sum is below 2²⁴ here, so the i32 detour is exact
                    // (and converts faster than u32).
                    *o = floor_u8((a.wrapping_sub(b) as i32 as f32 + half) * inv);
                }
            }
            Divider::F64 { .. } => {
                for ((o, &a), &b) in out.iter_mut().zip(hi).zip(lo) {
                    *o = self.div(a.wrapping_sub(b));
                }
            }
        }
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
                    if let (Some(sx), Some(sy)) =
                        (b.index(x as isize + dx, w), b.index(y as isize + dy, h))
                    {
                        s += src.get(sx, sy) as u64;
                    }
                }
            }
            ((s + n / 2) / n) as u8
        })
    }

    fn noise(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| {
            ((x * 7919 + y * 104_729 + x * y * 31) % 251) as u8
        })
    }

    #[test]
    fn divider_is_exact_for_every_sum_in_f32_and_at_every_rounding_edge_in_f64() {
        for r in 0..=MAX_RADIUS as u32 {
            let n = (2 * r + 1) * (2 * r + 1);
            let d = Divider::new(n);
            assert_eq!(matches!(d, Divider::F32 { .. }), r <= 31, "r={r}");
            let check = |s: u32| {
                let want = ((s + n / 2) / n) as u8;
                assert_eq!(d.div(s), want, "n={n} s={s}");
                let mut out = [0u8];
                d.means(&[s.wrapping_add(12345)], &[12345], &mut out);
                assert_eq!(out[0], want, "n={n} s={s}");
            };
            if r <= 31 {
                (0..=255 * n).for_each(check);
            } else {
                // s + n/2 one below, at and one above each multiple k·n.
                for k in 1..=256u32 {
                    for t in [k * n - 1, k * n, k * n + 1] {
                        let s = t - n / 2;
                        if s <= 255 * n {
                            check(s);
                        }
                    }
                }
            }
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
        assert_eq!(
            box_filter(&Plane::new(1, 1, 77u8), 1, Border::Replicate).get(0, 0),
            77
        );
    }

    #[test]
    fn rgba_keeps_alpha() {
        let src = Plane::from_fn(6, 5, |x, y| {
            [
                (x * 40) as u8,
                (y * 50) as u8,
                ((x + y) * 20) as u8,
                (x * y) as u8,
            ]
        });
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
        let Frame::Gray(out) = op.apply(&Frame::Gray(src.clone())).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(out, naive(&src, 2, Border::Zero));
        let (_, pairs) = split_op("box:radius=1001").unwrap();
        let e = Params::from_pairs(&SPEC, &pairs).unwrap_err().to_string();
        assert!(e.contains("radius=1001") && e.contains("0 to 1000"), "{e}");
    }
}
