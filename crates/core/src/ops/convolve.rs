//! `convolve`: a user kernel applied as correlation, exactly as OpenCV's
//! `filter2D` / `sepFilter2D` (the kernel is not flipped), anchored at the
//! centre index `len / 2`.
//!
//! * 2-D (`kernel`, n×n, n ≤ 7, row-major): out = Σ over ky ascending, then kx
//!   ascending, of `k[ky][kx] · src(x + kx − a, y + ky − a)` accumulated in
//!   f32, then `+ delta`, then [`saturate_u8`].
//! * Separable (`row`, `col`, 1..=65 taps each): a row pass (taps over x,
//!   ascending) into an f32 intermediate, then a column pass over it (taps over
//!   y, ascending), then `+ delta`, then `saturate_u8`. [`gaussian`](super::gaussian)
//!   uses the same routine.
//!
//! Samples outside the frame are read through the border mode (`zero` reads 0).
//! On RGBA the first three channels are filtered and alpha is copied.

use rayon::prelude::*;

use super::border::{BORDER_CHOICES, Border};
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox, Pixel};
use crate::color::saturate_u8;
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

/// Longest `row` / `col` list the op accepts.
pub const MAX_SEPARABLE_TAPS: usize = 65;
/// Largest side of a 2-D `kernel`.
pub const MAX_KERNEL_SIDE: usize = 7;

pub static SPEC: OpSpec = OpSpec {
    name: "convolve",
    summary: "a user kernel as correlation (OpenCV filter2D / sepFilter2D), anchor at the centre",
    params: &[
        ParamSpec::optional(
            "kernel",
            Kind::List {
                lens: &[1, 4, 9, 16, 25, 36, 49],
                max_len: 49,
            },
            "an n×n kernel, n from 1 to 7, row-major; or give row and col instead",
        ),
        ParamSpec::optional(
            "row",
            Kind::List {
                lens: &[],
                max_len: MAX_SEPARABLE_TAPS,
            },
            "separable: taps across x (needs col)",
        ),
        ParamSpec::optional(
            "col",
            Kind::List {
                lens: &[],
                max_len: MAX_SEPARABLE_TAPS,
            },
            "separable: taps down y (needs row)",
        ),
        ParamSpec::new(
            "delta",
            Kind::Float {
                min: -1000.0,
                max: 1000.0,
            },
            "0",
            "added before rounding",
        ),
        ParamSpec::new(
            "border",
            Kind::Choice(BORDER_CHOICES),
            "replicate",
            "how pixels outside the frame are read",
        ),
    ],
    example: "convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0]",
};

/// The kernel a `convolve` op applies.
#[derive(Clone, Debug, PartialEq)]
pub enum Kernel {
    /// n×n taps, row-major.
    Full { taps: Vec<f32>, n: usize },
    /// Row taps (over x) and column taps (over y).
    Separable { row: Vec<f32>, col: Vec<f32> },
}

/// The `convolve` op.
#[derive(Debug)]
pub struct Convolve {
    pub kernel: Kernel,
    pub delta: f32,
    pub border: Border,
}

/// Turns a parsed list into f32 taps; a value outside the f32 range is an error.
fn taps_of(key: &str, list: &[f64]) -> Result<Vec<f32>> {
    list.iter()
        .map(|&v| {
            let t = v as f32;
            if t.is_finite() {
                Ok(t)
            } else {
                Err(Error::bad_value(
                    SPEC.name,
                    key,
                    format!("{v:e}"),
                    format!("a tap must be within ±{:e} (the f32 range)", f32::MAX),
                ))
            }
        })
        .collect()
}

fn list_text(list: &[f64]) -> String {
    let items: Vec<String> = list.iter().map(|v| v.to_string()).collect();
    format!("[{}]", items.join(","))
}

/// Builds a `convolve` op: exactly one of `kernel` or `row` + `col`.
pub fn build(p: &Params) -> Result<OpBox> {
    let delta = p.f32("delta")?;
    let border = p.border()?;
    let kernel = match (p.list("kernel"), p.list("row"), p.list("col")) {
        (Some(k), None, None) => {
            let n = (1..=MAX_KERNEL_SIDE).find(|n| n * n == k.len()).ok_or_else(|| {
                Error::bad_value(
                    SPEC.name,
                    "kernel",
                    list_text(k),
                    format!("has {} numbers; expected n×n numbers with n from 1 to {MAX_KERNEL_SIDE}", k.len()),
                )
            })?;
            Kernel::Full {
                taps: taps_of("kernel", k)?,
                n,
            }
        }
        (None, Some(r), Some(c)) => Kernel::Separable {
            row: taps_of("row", r)?,
            col: taps_of("col", c)?,
        },
        (Some(k), _, _) => {
            return Err(Error::bad_value(
                SPEC.name,
                "kernel",
                list_text(k),
                "give either kernel=[...] or row=[...] with col=[...], not both",
            ));
        }
        (None, Some(r), None) => {
            return Err(Error::bad_value(
                SPEC.name,
                "row",
                list_text(r),
                "a separable kernel needs col=[...] too (1 to 65 taps)",
            ));
        }
        (None, None, Some(c)) => {
            return Err(Error::bad_value(
                SPEC.name,
                "col",
                list_text(c),
                "a separable kernel needs row=[...] too (1 to 65 taps)",
            ));
        }
        (None, None, None) => {
            return Err(Error::MissingKey {
                op: SPEC.name.into(),
                key: "kernel".into(),
                help: "give kernel=[...] with n×n numbers (n from 1 to 7), or row=[...] and col=[...] with 1 to 65 numbers each"
                    .into(),
            });
        }
    };
    Ok(Box::new(Convolve {
        kernel,
        delta,
        border,
    }))
}

impl Convolve {
    fn run<P: Pixel>(&self, src: &Plane<P>) -> Plane<P> {
        match &self.kernel {
            Kernel::Full { taps, n } => filter2d(src, taps, *n, self.border, self.delta),
            Kernel::Separable { row, col } => separable(src, row, col, self.border, self.delta),
        }
    }
}

impl Op for Convolve {
    fn name(&self) -> &'static str {
        "convolve"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(self.run(p)),
            Frame::Gray(p) => Frame::Gray(self.run(p)),
        })
    }
}

/// Correlates `src` with an n×n row-major `kernel` anchored at `(n/2, n/2)`:
/// f32 accumulation over ky ascending, then kx ascending, then `+ delta`, then
/// `saturate_u8`. Filters the first `P::FILTERED` channels and copies the rest.
///
/// # Panics
/// If `kernel.len() != n * n` or `n == 0`.
pub fn filter2d<P: Pixel>(
    src: &Plane<P>,
    kernel: &[f32],
    n: usize,
    border: Border,
    delta: f32,
) -> Plane<P> {
    assert!(
        n > 0 && kernel.len() == n * n,
        "filter2d: a {n}×{n} kernel needs {} taps, got {}",
        n * n,
        kernel.len()
    );
    if src.is_empty() {
        return src.to_packed();
    }
    let (w, h) = (src.width(), src.height());
    let c = P::FILTERED;
    let pad = RowPad::new(border, w, n / 2, n - 1 - n / 2);
    let ext_len = (w + n - 1) * c;
    let a = (n / 2) as isize;
    let mut out = Plane::new(w, h, P::default());
    out.par_rows_mut()
        .with_min_len(band_rows(h, n))
        .for_each_init(
            || Scratch::new(n, ext_len, 0, w * c),
            |s, (y, out_row)| {
                // Ring slot = the border-extended f32 row of one source row.
                let first = y as isize - a;
                let Scratch {
                    ring, acc, terms, ..
                } = s;
                ring.advance(first, |v, slot| match border.index(v, h) {
                    Some(sy) => {
                        pad.load(src.row(sy), slot);
                        true
                    }
                    None => false,
                });
                terms.clear();
                for ky in 0..n {
                    if let Some(off) = ring.offset(first + ky as isize) {
                        for kx in 0..n {
                            terms.push((kernel[ky * n + kx], off + kx * c));
                        }
                    }
                }
                mac_row(acc, &ring.data, terms);
                store_row(acc, delta, src.row(y), out_row);
            },
        );
    out
}

/// Separable correlation as OpenCV's `sepFilter2D`: a row pass of `row_taps`
/// (over x, anchor `len/2`) into an f32 intermediate, then a column pass of
/// `col_taps` (over y, anchor `len/2`), each summed in ascending tap order,
/// then `+ delta`, then `saturate_u8`. Filters the first `P::FILTERED`
/// channels and copies the rest.
///
/// # Panics
/// If either tap list is empty.
pub fn separable<P: Pixel>(
    src: &Plane<P>,
    row_taps: &[f32],
    col_taps: &[f32],
    border: Border,
    delta: f32,
) -> Plane<P> {
    assert!(
        !row_taps.is_empty() && !col_taps.is_empty(),
        "separable: tap lists must not be empty"
    );
    if src.is_empty() {
        return src.to_packed();
    }
    let (w, h) = (src.width(), src.height());
    let c = P::FILTERED;
    let (nr, nc) = (row_taps.len(), col_taps.len());
    let pad = RowPad::new(border, w, nr / 2, nr - 1 - nr / 2);
    let ext_len = (w + nr - 1) * c;
    let row_terms: Vec<(f32, usize)> = row_taps
        .iter()
        .enumerate()
        .map(|(k, &t)| (t, k * c))
        .collect();
    let a = (nc / 2) as isize;
    let mut out = Plane::new(w, h, P::default());
    out.par_rows_mut()
        .with_min_len(band_rows(h, nc))
        .for_each_init(
            || Scratch::new(nc, w * c, ext_len, w * c),
            |s, (y, out_row)| {
                // Ring slot = the row pass of one source row.
                let first = y as isize - a;
                let Scratch {
                    ring,
                    ext,
                    acc,
                    terms,
                } = s;
                ring.advance(first, |v, slot| match border.index(v, h) {
                    Some(sy) => {
                        pad.load(src.row(sy), ext);
                        mac_row(slot, ext, &row_terms);
                        true
                    }
                    None => false,
                });
                terms.clear();
                for (k, &t) in col_taps.iter().enumerate() {
                    if let Some(off) = ring.offset(first + k as isize) {
                        terms.push((t, off));
                    }
                }
                mac_row(acc, &ring.data, terms);
                store_row(acc, delta, src.row(y), out_row);
            },
        );
    out
}

/// Rows per rayon job: each job starts by filling a ring of `taps` rows, so
/// jobs are made long enough to amortise that, but there are still at least
/// as many as threads.
fn band_rows(h: usize, taps: usize) -> usize {
    let threads = rayon::current_num_threads().max(1);
    (h.div_ceil(4 * threads))
        .max((4 * taps).min(h.div_ceil(threads)))
        .max(1)
}

/// Per-job scratch: the row ring, one extended source row, the accumulator
/// row and the list of (tap, offset) terms for the current output row.
struct Scratch {
    ring: Ring,
    ext: Vec<f32>,
    acc: Vec<f32>,
    terms: Vec<(f32, usize)>,
}

impl Scratch {
    fn new(slots: usize, slot_len: usize, ext_len: usize, acc_len: usize) -> Self {
        Self {
            ring: Ring::new(slots, slot_len),
            ext: vec![0.0; ext_len],
            acc: vec![0.0; acc_len],
            terms: Vec::with_capacity(MAX_KERNEL_SIDE * MAX_KERNEL_SIDE),
        }
    }
}

/// The last `slots` prepared rows of a sliding window over the border-extended
/// row sequence (virtual row `v` lives in slot `v mod slots`); a virtual row
/// that the border reads as zero is marked absent and contributes nothing.
struct Ring {
    data: Vec<f32>,
    slot_len: usize,
    slots: usize,
    present: Vec<bool>,
    /// Virtual rows `[lo, hi)` are loaded (`None`: nothing yet).
    loaded: Option<(isize, isize)>,
}

impl Ring {
    fn new(slots: usize, slot_len: usize) -> Self {
        Self {
            data: vec![0.0; slots * slot_len],
            slot_len,
            slots,
            present: vec![false; slots],
            loaded: None,
        }
    }

    /// Makes virtual rows `first..first + slots` present, preparing only the
    /// ones not already loaded; `fill(v, slot)` prepares row `v` and returns
    /// false if it is a zero row.
    fn advance(&mut self, first: isize, mut fill: impl FnMut(isize, &mut [f32]) -> bool) {
        let end = first + self.slots as isize;
        let start = match self.loaded {
            Some((lo, hi)) if lo <= first && first <= hi => hi,
            _ => first,
        };
        for v in start..end {
            let s = v.rem_euclid(self.slots as isize) as usize;
            let slot = &mut self.data[s * self.slot_len..(s + 1) * self.slot_len];
            self.present[s] = fill(v, slot);
        }
        self.loaded = Some((first, end));
    }

    /// Offset in `data` of virtual row `v`, `None` for a zero row.
    fn offset(&self, v: isize) -> Option<usize> {
        let s = v.rem_euclid(self.slots as isize) as usize;
        self.present[s].then_some(s * self.slot_len)
    }
}

/// The border extension of one row: the pixel indices that stand for the
/// `before` samples left of the row and the `after` samples right of it.
struct RowPad {
    left: Vec<Option<usize>>,
    right: Vec<Option<usize>>,
}

impl RowPad {
    fn new(border: Border, w: usize, before: usize, after: usize) -> Self {
        Self {
            left: (0..before)
                .map(|j| border.index(j as isize - before as isize, w))
                .collect(),
            right: (0..after)
                .map(|j| border.index((w + j) as isize, w))
                .collect(),
        }
    }

    /// Writes the first `P::FILTERED` channels of `row`, border-extended, into
    /// `ext` as f32, channels interleaved.
    fn load<P: Pixel>(&self, row: &[P], ext: &mut [f32]) {
        let c = P::FILTERED;
        let (l, w) = (self.left.len(), row.len());
        let (head, rest) = ext.split_at_mut(l * c);
        let (body, tail) = rest.split_at_mut(w * c);
        match c {
            1 => load_body::<P, 1>(row, body),
            3 => load_body::<P, 3>(row, body),
            _ => load_body_dyn(row, body),
        }
        for (d, m) in head
            .chunks_exact_mut(c)
            .zip(&self.left)
            .chain(tail.chunks_exact_mut(c).zip(&self.right))
        {
            for (ch, d) in d.iter_mut().enumerate() {
                *d = m.map_or(0.0, |i| row[i].channel(ch) as f32);
            }
        }
    }
}

/// The filtered channels of `row` as f32, `C` of them per pixel; a constant
/// `C` lets the channel loop unroll and the pixel loop vectorise.
#[inline]
fn load_body<P: Pixel, const C: usize>(row: &[P], body: &mut [f32]) {
    let (body, _) = body.as_chunks_mut::<C>();
    for (d, p) in body.iter_mut().zip(row) {
        for (ch, d) in d.iter_mut().enumerate() {
            *d = p.channel(ch) as f32;
        }
    }
}

/// [`load_body`] for any channel count.
fn load_body_dyn<P: Pixel>(row: &[P], body: &mut [f32]) {
    for (d, p) in body.chunks_exact_mut(P::FILTERED).zip(row) {
        for (ch, d) in d.iter_mut().enumerate() {
            *d = p.channel(ch) as f32;
        }
    }
}

/// `dst[i] = Σ t · buf[off + i]` over `terms` in order, starting from 0, in
/// f32 with one fused multiply-add a term (the order and the fusing are part
/// of the definition; without FMA hardware `mul_add` is exact but slow).
/// Built for x86-64-v3 (`.cargo/config.toml`), the blocks are 256-bit
/// vectors: 64 outputs are 8 registers of accumulators.
fn mac_row(dst: &mut [f32], buf: &[f32], terms: &[(f32, usize)]) {
    mac_row_blocked::<64>(dst, buf, terms);
}

/// [`mac_row`] in blocks of `B` outputs: a block of accumulators stays in
/// registers (8 vectors) while every term is added to it. Each term is a
/// fused multiply-add (one rounding, as the GPU's `__fmaf_rn`): the sums are
/// part of the definition, and this halves the GPU's float work.
#[inline(always)]
fn mac_row_blocked<const B: usize>(dst: &mut [f32], buf: &[f32], terms: &[(f32, usize)]) {
    let len = dst.len();
    let mut i = 0;
    while i + B <= len {
        let mut acc = [0.0f32; B];
        for &(t, off) in terms {
            let s = &buf[off + i..off + i + B];
            for (a, &v) in acc.iter_mut().zip(s) {
                *a = t.mul_add(v, *a);
            }
        }
        dst[i..i + B].copy_from_slice(&acc);
        i += B;
    }
    if i < len {
        let acc = &mut dst[i..];
        acc.fill(0.0);
        for &(t, off) in terms {
            let s = &buf[off + i..off + len];
            for (a, &v) in acc.iter_mut().zip(s) {
                *a = t.mul_add(v, *a);
            }
        }
    }
}

/// Writes `saturate_u8(acc + delta)` into the filtered channels of `out`,
/// the other channels coming from `src`.
fn store_row<P: Pixel>(acc: &[f32], delta: f32, src: &[P], out: &mut [P]) {
    match P::FILTERED {
        1 => store_body::<P, 1>(acc, delta, src, out),
        3 => store_body::<P, 3>(acc, delta, src, out),
        _ => {
            for ((o, &s), a) in out.iter_mut().zip(src).zip(acc.chunks_exact(P::FILTERED)) {
                let mut p = s;
                for (ch, &v) in a.iter().enumerate() {
                    p.set_channel(ch, saturate_u8(v + delta));
                }
                *o = p;
            }
        }
    }
}

/// [`store_row`] for a constant channel count `C` (see [`load_body`]).
#[inline]
fn store_body<P: Pixel, const C: usize>(acc: &[f32], delta: f32, src: &[P], out: &mut [P]) {
    let (acc, _) = acc.as_chunks::<C>();
    for ((o, &s), a) in out.iter_mut().zip(src).zip(acc) {
        let mut p = s;
        for (ch, &v) in a.iter().enumerate() {
            p.set_channel(ch, saturate_u8(v + delta));
        }
        *o = p;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::params::split_op;

    fn parse(text: &str) -> Result<OpBox> {
        let (_, pairs) = split_op(text)?;
        build(&Params::from_pairs(&SPEC, &pairs)?)
    }

    fn ramp(w: usize, h: usize) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| ((x * 37 + y * 91 + x * y * 7) % 256) as u8)
    }

    #[test]
    fn identity_kernel_copies_every_border() {
        let src = ramp(9, 7);
        for b in [Border::Zero, Border::Replicate, Border::Reflect101] {
            let k = [0., 0., 0., 0., 1., 0., 0., 0., 0.];
            assert_eq!(filter2d(&src, &k, 3, b, 0.0), src);
            assert_eq!(separable(&src, &[0., 1., 0.], &[0., 1., 0.], b, 0.0), src);
        }
    }

    #[test]
    fn one_at_the_left_reads_the_left_neighbour() {
        // Correlation: out(x) = src(x - 1); convolution would give src(x + 1).
        let src = ramp(8, 5);
        let out = filter2d(
            &src,
            &[0., 0., 0., 1., 0., 0., 0., 0., 0.],
            3,
            Border::Replicate,
            0.0,
        );
        for y in 0..5 {
            assert_eq!(out.get(0, y), src.get(0, y));
            for x in 1..8 {
                assert_eq!(out.get(x, y), src.get(x - 1, y));
            }
        }
    }

    #[test]
    fn zero_border_reads_zero_and_delta_is_added_before_rounding() {
        let src = Plane::new(4, 3, 100u8);
        let out = filter2d(&src, &[1.0; 9], 3, Border::Zero, 0.0);
        assert_eq!(out.get(0, 0), 255); // 4 samples inside: 400
        let out = filter2d(&src, &[1.0 / 9.0; 9], 3, Border::Zero, 0.0);
        assert_eq!(out.get(0, 0), 44); // 400 / 9 = 44.4
        assert_eq!(out.get(1, 1), 100);
        let out = filter2d(&src, &[1.0 / 9.0; 9], 3, Border::Zero, 0.2);
        assert_eq!(out.get(0, 0), 45); // 44.6
        let out = separable(&src, &[0.5], &[0.5], Border::Zero, -0.3);
        assert_eq!(out.get(2, 2), 25); // 24.7
    }

    #[test]
    fn rgba_keeps_alpha_and_filters_colour() {
        let src = Plane::from_fn(6, 4, |x, y| {
            [(x * 40) as u8, (y * 60) as u8, 7, (x * 10 + y) as u8]
        });
        let out = separable(&src, &[1.0, 0.0, 0.0], &[1.0], Border::Replicate, 0.0);
        for y in 0..4 {
            for x in 0..6usize {
                let s = src.get(x.saturating_sub(1), y);
                assert_eq!(out.get(x, y), [s[0], s[1], s[2], src.get(x, y)[3]]);
            }
        }
    }

    #[test]
    fn long_kernels_on_tiny_frames_stay_in_range() {
        let taps: Vec<f32> = (0..65).map(|i| (i % 5) as f32 * 0.01).collect();
        for b in [Border::Zero, Border::Replicate, Border::Reflect101] {
            for (w, h) in [(1, 1), (1, 3), (2, 1), (3, 2)] {
                let src = ramp(w, h);
                let out = separable(&src, &taps, &taps[..64], b, 0.0);
                assert_eq!((out.width(), out.height()), (w, h));
                let out = filter2d(&src, &[0.02; 49], 7, b, 0.0);
                assert_eq!((out.width(), out.height()), (w, h));
            }
        }
    }

    #[test]
    fn strided_input_is_read_through_its_stride() {
        let packed = ramp(5, 4);
        let mut data = Vec::new();
        for y in 0..4 {
            data.extend_from_slice(packed.row(y));
            data.extend_from_slice(&[255, 255, 255]);
        }
        let strided = Plane::from_vec_with_stride(5, 4, 8, data).unwrap();
        let k = [0.1, 0.2, 0.1, 0.0, 0.3, 0.0, 0.1, 0.1, 0.1];
        assert_eq!(
            filter2d(&strided, &k, 3, Border::Reflect101, 0.0),
            filter2d(&packed, &k, 3, Border::Reflect101, 0.0)
        );
    }

    #[test]
    fn op_parses_both_forms_and_runs() {
        let mut op = parse("convolve:row=[1,2,1],col=[0.25,0.5,0.25],delta=1,border=zero").unwrap();
        let f = Frame::Gray(Plane::new(5, 5, 40u8));
        let Frame::Gray(g) = op.apply(&f).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(g.get(2, 2), 161); // 40 * 4 + 1
        let mut op = parse("convolve:kernel=[2]").unwrap();
        let Frame::Gray(g) = op.apply(&f).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(g.get(0, 0), 80);
    }

    #[test]
    fn bad_kernels_are_errors_naming_the_key() {
        let e = parse("convolve:kernel=[1,2,3,4,5,6,7,8,9,10]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("kernel=") && e.contains("49"), "{e}");
        let e = parse("convolve:row=[1,2,1]").unwrap_err().to_string();
        assert!(e.contains("row=") && e.contains("col"), "{e}");
        let e = parse("convolve:col=[1,2,1]").unwrap_err().to_string();
        assert!(e.contains("col=") && e.contains("row"), "{e}");
        let e = parse("convolve:kernel=[1],row=[1,2,1],col=[1]")
            .unwrap_err()
            .to_string();
        assert!(e.contains("kernel") && e.contains("row"), "{e}");
        let e = parse("convolve").unwrap_err().to_string();
        assert!(e.contains("kernel") && e.contains("row"), "{e}");
        let e = parse("convolve:kernel=[1e39]").unwrap_err().to_string();
        assert!(e.contains("kernel=1e39"), "{e}");
        let long = format!("convolve:row=[{}],col=[1]", vec!["1"; 66].join(","));
        let e = parse(&long).unwrap_err().to_string();
        assert!(e.contains("row=") && e.contains("65"), "{e}");
    }
}
