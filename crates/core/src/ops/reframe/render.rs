//! A frame of the output from its window and [`Layout`]: resampling in
//! integers, carving inside the window, and padding (docs/reframe.md).
//!
//! Every step is integer arithmetic over tables made once on the host
//! ([`Taps`]), so the GPU (src/cuda/ops/reframe.rs) gives the same bytes
//! by running the same sums over the same tables.
//!
//! - **Resampling** is separable: a pass along rows into 16-bit
//!   intermediates, `(Σ wᵢ·pᵢ + 32) >> 6`, then along columns,
//!   `(Σ wᵢ·mᵢ + 2²¹) >> 22`, with weights of 14 bits that sum to 2¹⁴:
//!   area averages to shrink, bilinear (pixel centres aligned) to enlarge.
//! - **Narrowing** (the carve fit) is a resampling too, along a map that
//!   keeps the subjects' columns (rows) at the window's scale and narrows
//!   the rest alike ([`narrow_map`]): whole columns move, so nothing tears
//!   and no subject is cut or squeezed. Made ahead, a frame's map is the
//!   mean of those about it, so the picture between the subjects does not
//!   swim with every box found a few pixels apart; live, it stays as it
//!   was while the subjects move within some slack, and eases from the
//!   last frame's when one leaves it. Either way the subjects' spans are
//!   then put back at the scale where the smoothed map has them
//!   ([`anchor_spans`]). (Fast mode's seams inside the window, tried
//!   first, tore walls and ground into blocks around the subjects' boxes.)
//! - **Padding** is a solid colour, or the window's centre at the output's
//!   shape, shrunk to an eighth, box-blurred twice, enlarged again and
//!   darkened to three quarters, as a blurred backdrop.

use rayon::prelude::*;

use super::geometry::{Layout, Rect};
use super::plan::FramePlan;
use crate::frame::Plane;
use crate::ops::pixel::Pixel;

/// Bits of a resampling weight.
pub const WEIGHT_BITS: u32 = 14;
/// Bits the row pass drops, so its sums fit 16 bits.
pub const MID_SHIFT: u32 = 6;
/// The backdrop is made at 1/`BACKDROP_SHRINK` of the output's size.
pub const BACKDROP_SHRINK: usize = 8;
/// Radius and passes of the backdrop's box blur (at the small size).
pub const BLUR_RADIUS: usize = 2;
pub const BLUR_PASSES: usize = 2;

/// A resampling table from `n` inputs to `m` outputs: for each output, the
/// first input and `taps` weights (zero-padded), which sum to 2¹⁴.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Taps {
    pub taps: usize,
    pub first: Vec<u32>,
    pub weights: Vec<u16>,
}

impl Taps {
    /// The table from `n` to `m` samples (both at least 1).
    pub fn new(n: usize, m: usize) -> Taps {
        let (n, m) = (n.max(1), m.max(1));
        let one = 1u32 << WEIGHT_BITS;
        let mut rows: Vec<(u32, Vec<u32>)> = Vec::with_capacity(m);
        if n == m {
            rows.extend((0..m).map(|o| (o as u32, vec![one])));
        } else if m < n {
            // Area: each output averages the span of inputs it covers.
            let r = n as f64 / m as f64;
            for o in 0..m {
                let (a, b) = (o as f64 * r, (o + 1) as f64 * r);
                let first = a.floor() as usize;
                let last = (b.ceil() as usize).min(n).max(first + 1);
                let w: Vec<f64> = (first..last)
                    .map(|i| (b.min((i + 1) as f64) - a.max(i as f64)).max(0.0) / r)
                    .collect();
                rows.push((first as u32, quantise(&w)));
            }
        } else {
            // Bilinear with pixel centres aligned; the edges repeat.
            let r = n as f64 / m as f64;
            for o in 0..m {
                let s = ((o as f64 + 0.5) * r - 0.5).max(0.0);
                let i = (s.floor() as usize).min(n - 1);
                let f = s - i as f64;
                if i + 1 >= n || f == 0.0 {
                    rows.push((i as u32, vec![one]));
                } else {
                    rows.push((i as u32, quantise(&[1.0 - f, f])));
                }
            }
        }
        Taps::from_rows(n, rows)
    }

    /// The table of `rows`, one an output: its first input and weights
    /// (summing to 2¹⁴), over `n` inputs.
    fn from_rows(n: usize, rows: Vec<(u32, Vec<u32>)>) -> Taps {
        let m = rows.len();
        let taps = rows.iter().map(|(_, w)| w.len()).max().unwrap_or(1).min(n);
        let mut first = Vec::with_capacity(m);
        let mut weights = vec![0u16; m * taps];
        for (o, (f, w)) in rows.into_iter().enumerate() {
            // A row near the end starts early enough that all its taps lie
            // inside the input, its weights moved along: the padding
            // weights are zero and point at real samples.
            let start = (f as usize).min(n - taps);
            let d = f as usize - start;
            first.push(start as u32);
            for (k, &v) in w.iter().enumerate() {
                weights[o * taps + d + k] = v as u16;
            }
        }
        Taps {
            taps,
            first,
            weights,
        }
    }

    /// The table from `n` to `m` samples along a monotonic map whose
    /// inverse `inv` takes an output coordinate (0..=m) to the input's
    /// (0..=n): where an output covers a sample or more, the area it covers;
    /// where less, bilinear at its centre.
    pub fn by_map(n: usize, m: usize, inv: impl Fn(f64) -> f64) -> Taps {
        let (n, m) = (n.max(1), m.max(1));
        let one = 1u32 << WEIGHT_BITS;
        let rows = (0..m)
            .map(|o| {
                let a = inv(o as f64).clamp(0.0, n as f64);
                let b = inv((o + 1) as f64).clamp(a, n as f64);
                if b - a >= 1.0 {
                    let first = (a.floor() as usize).min(n - 1);
                    let last = (b.ceil() as usize).min(n).max(first + 1);
                    let w: Vec<f64> = (first..last)
                        .map(|i| (b.min((i + 1) as f64) - a.max(i as f64)).max(0.0) / (b - a))
                        .collect();
                    (first as u32, quantise(&w))
                } else {
                    let c = (inv(o as f64 + 0.5) - 0.5).clamp(0.0, (n - 1) as f64);
                    let i = c.floor() as usize;
                    let f = c - i as f64;
                    if i + 1 >= n || f == 0.0 {
                        (i as u32, vec![one])
                    } else {
                        (i as u32, quantise(&[1.0 - f, f]))
                    }
                }
            })
            .collect();
        Taps::from_rows(n, rows)
    }

    /// Outputs in the table.
    pub fn len(&self) -> usize {
        self.first.len()
    }

    pub fn is_empty(&self) -> bool {
        self.first.is_empty()
    }
}

/// Weights (summing to 1) as integers of [`WEIGHT_BITS`] bits that sum to
/// exactly 2¹⁴: rounded, the remainder given to the largest.
fn quantise(w: &[f64]) -> Vec<u32> {
    let one = 1i64 << WEIGHT_BITS;
    let mut q: Vec<i64> = w.iter().map(|&v| (v * one as f64).round() as i64).collect();
    let diff = one - q.iter().sum::<i64>();
    let big = (0..q.len())
        .max_by_key(|&i| (q[i], usize::MAX - i))
        .unwrap_or(0);
    q[big] += diff;
    q.into_iter().map(|v| v.max(0) as u32).collect()
}

/// `src`'s rectangle `r` resampled to `w`×`h` by the tables of [`Taps`]
/// (rows, then columns).
pub fn resample<P: Pixel>(src: &Plane<P>, r: Rect, w: usize, h: usize) -> Plane<P> {
    if (r.w, r.h) == (w, h) {
        let mut out = Plane::new(w, h, P::default());
        for (y, row) in out.rows_mut().enumerate() {
            row.copy_from_slice(&src.row(r.y + y)[r.x..r.x + w]);
        }
        return out;
    }
    let (tx, ty) = (Taps::new(r.w, w), Taps::new(r.h, h));
    resample_with(src, r, &tx, &ty)
}

/// [`resample`] with tables already made.
///
/// Every tap is summed, those of weight zero too: they add nothing, and
/// [`Taps`] points them at samples inside the input.
pub fn resample_with<P: Pixel>(src: &Plane<P>, r: Rect, tx: &Taps, ty: &Taps) -> Plane<P> {
    let (w, h) = (tx.len(), ty.len());
    let n = P::CHANNELS;
    let shift = 2 * WEIGHT_BITS - MID_SHIFT;
    let round = 1u32 << (shift - 1);
    // The row pass on every input row the column pass reads: one frame's
    // intermediates, made per call as the window changes size.
    // Rows are independent in both passes, and every sum is an integer's,
    // so the rows run on rayon's threads with the same bytes as in order
    // (a 1080p window narrowed to 9:16 took 9.5 ms a frame on one thread).
    let mut mid = vec![0u16; r.h * w * n];
    mid.par_chunks_exact_mut((w * n).max(1))
        .enumerate()
        .for_each(|(yy, mid_row)| {
            let line = &src.row(r.y + yy)[r.x..r.x + r.w];
            // The usual widths of a table get their own copies of the loop.
            match tx.taps {
                1 => row_pass(line, tx, 1, mid_row),
                2 => row_pass(line, tx, 2, mid_row),
                3 => row_pass(line, tx, 3, mid_row),
                4 => row_pass(line, tx, 4, mid_row),
                5 => row_pass(line, tx, 5, mid_row),
                taps => row_pass(line, tx, taps, mid_row),
            }
        });
    let mut out = Plane::new(w, h, P::default());
    out.par_rows_mut().for_each_init(
        // One output row's sums, reused for every row a thread takes.
        || vec![0u32; w * n],
        |acc, (y, orow)| {
            let f = ty.first[y] as usize;
            let wt = &ty.weights[y * ty.taps..(y + 1) * ty.taps];
            acc.fill(0);
            for (k, &wk) in wt.iter().enumerate() {
                let m = &mid[(f + k) * w * n..(f + k + 1) * w * n];
                for (a, &v) in acc.iter_mut().zip(m) {
                    *a += wk as u32 * v as u32;
                }
            }
            for (o, a) in orow.iter_mut().zip(acc.chunks_exact(n)) {
                for (c, &v) in a.iter().enumerate() {
                    o.set_channel(c, ((v + round) >> shift).min(255) as u8);
                }
            }
        },
    );
    out
}

/// [`resample_with`] pixel by pixel, skipping zero weights: the reference
/// the row-wise passes must agree with.
#[cfg(test)]
fn resample_by_pixel<P: Pixel>(src: &Plane<P>, r: Rect, tx: &Taps, ty: &Taps) -> Plane<P> {
    let (w, h) = (tx.len(), ty.len());
    let n = P::CHANNELS;
    let round_mid = 1u32 << (MID_SHIFT - 1);
    let shift = 2 * WEIGHT_BITS - MID_SHIFT;
    let round = 1u32 << (shift - 1);
    let rows = r.h;
    let mut mid = vec![0u16; rows * w * n];
    for yy in 0..rows {
        let line = src.row(r.y + yy);
        for x in 0..w {
            let f = tx.first[x] as usize;
            let wt = &tx.weights[x * tx.taps..(x + 1) * tx.taps];
            for c in 0..n {
                let mut acc = 0u32;
                for (k, &wk) in wt.iter().enumerate() {
                    if wk != 0 {
                        acc += wk as u32 * line[r.x + f + k].channel(c) as u32;
                    }
                }
                mid[(yy * w + x) * n + c] = ((acc + round_mid) >> MID_SHIFT) as u16;
            }
        }
    }
    let mut out = Plane::new(w, h, P::default());
    for y in 0..h {
        let f = ty.first[y] as usize;
        let wt = &ty.weights[y * ty.taps..(y + 1) * ty.taps];
        let orow = out.row_mut(y);
        for (x, o) in orow.iter_mut().enumerate() {
            for c in 0..n {
                let mut acc = 0u32;
                for (k, &wk) in wt.iter().enumerate() {
                    if wk != 0 {
                        acc += wk as u32 * mid[((f + k) * w + x) * n + c] as u32;
                    }
                }
                o.set_channel(c, ((acc + round) >> shift).min(255) as u8);
            }
        }
    }
    out
}

/// One row of [`resample_with`]'s row pass: `line` by the table `tx` of
/// `taps` taps into `mid`, `(Σ wᵢ·pᵢ + 32) >> 6` per channel.
#[inline(always)]
fn row_pass<P: Pixel>(line: &[P], tx: &Taps, taps: usize, mid: &mut [u16]) {
    let n = P::CHANNELS;
    let round_mid = 1u32 << (MID_SHIFT - 1);
    let firsts = tx.first.iter();
    for ((o, &f), wt) in mid
        .chunks_exact_mut(n)
        .zip(firsts)
        .zip(tx.weights.chunks_exact(taps))
    {
        let f = f as usize;
        let px = &line[f..f + taps];
        // Four lanes whatever the channels (a gray pixel fills all four
        // with its one), so that the sums run side by side.
        let mut acc = [0u32; 4];
        for (&wk, &p) in wt.iter().zip(px) {
            for (c, a) in acc.iter_mut().enumerate() {
                *a += wk as u32 * p.channel(c.min(n - 1)) as u32;
            }
        }
        for (m, a) in o.iter_mut().zip(acc) {
            *m = ((a + round_mid) >> MID_SHIFT) as u16;
        }
    }
}

/// A box blur of radius `r` along rows then columns, the edges repeated:
/// `(Σ + (2r+1)/2) / (2r+1)` per channel.
pub fn box_blur<P: Pixel>(p: &Plane<P>, r: usize) -> Plane<P> {
    let (w, h) = (p.width(), p.height());
    let n = (2 * r + 1) as u32;
    let at = |i: isize, len: usize| i.clamp(0, len as isize - 1) as usize;
    let rows = Plane::from_fn(w, h, |x, y| {
        let mut px = P::default();
        for c in 0..P::CHANNELS {
            let s: u32 = (-(r as isize)..=r as isize)
                .map(|d| p.get(at(x as isize + d, w), y).channel(c) as u32)
                .sum();
            px.set_channel(c, ((s + n / 2) / n) as u8);
        }
        px
    });
    Plane::from_fn(w, h, |x, y| {
        let mut px = P::default();
        for c in 0..P::CHANNELS {
            let s: u32 = (-(r as isize)..=r as isize)
                .map(|d| rows.get(x, at(y as isize + d, h)).channel(c) as u32)
                .sum();
            px.set_channel(c, ((s + n / 2) / n) as u8);
        }
        px
    })
}

/// What fills the output around a padded picture.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pad {
    /// A blurred, darkened copy of the window's centre.
    Blur,
    /// A solid colour (RGB; gray frames take its luma).
    Color([u8; 3]),
}

impl Pad {
    /// `blur`, `black`, `white`, `gray` or `#RRGGBB`.
    pub fn parse(text: &str) -> Option<Pad> {
        Some(match text {
            "blur" => Pad::Blur,
            "black" => Pad::Color([0, 0, 0]),
            "white" => Pad::Color([255, 255, 255]),
            "gray" | "grey" => Pad::Color([128, 128, 128]),
            _ => {
                let hex = text.strip_prefix('#')?;
                if hex.len() != 6 || !hex.chars().all(|c| c.is_ascii_hexdigit()) {
                    return None;
                }
                let v = u32::from_str_radix(hex, 16).ok()?;
                Pad::Color([(v >> 16) as u8, (v >> 8) as u8, v as u8])
            }
        })
    }

    pub fn name(&self) -> String {
        match self {
            Pad::Blur => "blur".into(),
            Pad::Color(c) => format!("#{:02x}{:02x}{:02x}", c[0], c[1], c[2]),
        }
    }
}

/// A darkened level of the backdrop: three quarters, rounded down.
#[inline]
pub fn darken(v: u8) -> u8 {
    ((v as u32 * 3) >> 2) as u8
}

/// The part of `window` behind a padded picture: its centre at the
/// output's shape (the whole window when it has that shape or is
/// narrower… in both directions, the largest such rectangle inside it).
pub fn backdrop_source(window: Rect, out: (usize, usize)) -> Rect {
    let (ow, oh) = (out.0.max(1), out.1.max(1));
    let (w, h) = (window.w.max(1), window.h.max(1));
    if w * oh > ow * h {
        let cw = (h * ow / oh).clamp(1, w);
        Rect::new(window.x + (w - cw) / 2, window.y, cw, h)
    } else {
        let ch = (w * oh / ow).clamp(1, h);
        Rect::new(window.x, window.y + (h - ch) / 2, w, ch)
    }
}

/// The size the backdrop is blurred at.
pub fn backdrop_size(out: (usize, usize)) -> (usize, usize) {
    (
        out.0.div_ceil(BACKDROP_SHRINK).max(1),
        out.1.div_ceil(BACKDROP_SHRINK).max(1),
    )
}

/// The blurred backdrop of a padded frame, at the output's size.
pub fn backdrop<P: Pixel>(src: &Plane<P>, window: Rect, out: (usize, usize)) -> Plane<P> {
    let (bw, bh) = backdrop_size(out);
    let mut small = resample(src, backdrop_source(window, out), bw, bh);
    for _ in 0..BLUR_PASSES {
        small = box_blur(&small, BLUR_RADIUS);
    }
    let mut big = resample(&small, Rect::new(0, 0, bw, bh), out.0, out.1);
    for y in 0..out.1 {
        for p in big.row_mut(y) {
            for c in 0..P::FILTERED {
                p.set_channel(c, darken(p.channel(c)));
            }
        }
    }
    big
}

/// A pixel of a solid colour.
pub fn solid<P: Pixel>(rgb: [u8; 3]) -> P {
    let mut p = P::splat(0);
    if P::CHANNELS == 1 {
        p.set_channel(0, crate::color::luma709([rgb[0], rgb[1], rgb[2], 255]));
    } else {
        for (c, v) in rgb.into_iter().enumerate() {
            p.set_channel(c, v);
        }
    }
    p
}

/// Where each output sample's edge 0..=`m` of a window `n` samples long
/// (along the axis it is cut on), narrowed to `m`, lies in the window: the
/// subjects' spans (`keep`, in the window's samples) at `scale` (the
/// window's uniform scale, output ÷ input, as the layout has it),
/// everything between them narrowed alike to make up the length. Whole
/// columns (rows) move, so nothing tears; the subjects are neither cut nor
/// squeezed. Where they leave no room (or there are none), the whole window
/// is scaled alike.
pub fn narrow_map(n: usize, m: usize, scale: f64, keep: &[(usize, usize)]) -> Vec<f64> {
    let (n, m) = (n.max(1), m.max(1));
    let merged = merge_spans(keep, n);
    let kept: usize = merged.iter().map(|(a, b)| b - a).sum();
    let rest = m as f64 - kept as f64 * scale;
    let uniform = n as f64 / m as f64;
    if kept == 0 || kept >= n || rest <= 0.0 {
        return (0..=m).map(|o| o as f64 * uniform).collect();
    }
    let squeeze = (rest / (n - kept) as f64).min(scale);
    // The map's pieces: (input start, output start, slope).
    let mut pieces: Vec<(f64, f64, f64)> = Vec::with_capacity(2 * merged.len() + 1);
    let (mut x, mut o) = (0usize, 0.0f64);
    for &(a, b) in &merged {
        if a > x {
            pieces.push((x as f64, o, squeeze));
            o += (a - x) as f64 * squeeze;
        }
        pieces.push((a as f64, o, scale));
        o += (b - a) as f64 * scale;
        x = b;
    }
    if x < n {
        pieces.push((x as f64, o, squeeze));
    }
    sample_pieces(&pieces, n, m)
}

/// A map (output edge → input position, `m` + 1 of them) from its linear
/// pieces: (input start, output start, slope, output per input), in order.
fn sample_pieces(pieces: &[(f64, f64, f64)], n: usize, m: usize) -> Vec<f64> {
    (0..=m)
        .map(|out| {
            let out = out as f64;
            let i = pieces.partition_point(|p| p.1 <= out).saturating_sub(1);
            let (x0, o0, k) = pieces[i];
            (x0 + (out - o0) / k).clamp(0.0, n as f64)
        })
        .collect()
}

/// Where `map` (as [`narrow_map`] gives it, non-decreasing) puts input
/// position `x`, in outputs.
fn map_inverse(map: &[f64], x: f64) -> f64 {
    let i = map.partition_point(|&v| v <= x);
    if i == 0 {
        return 0.0;
    }
    if i >= map.len() {
        return (map.len() - 1) as f64;
    }
    let (a, b) = (map[i - 1], map[i]);
    (i - 1) as f64 + if b > a { (x - a) / (b - a) } else { 0.0 }
}

/// `smooth`, a mean of maps (or one eased from the last frame's), with
/// this frame's subjects' spans (`keep`) put back at `scale`: each span
/// where `smooth` has its centre, the picture between them narrowed
/// evenly. A mean of maps that place a subject at different outputs
/// narrows the subject's own columns where they do not overlap (promo's
/// small print, kept in every frame of its shot but at outputs 20 pixels
/// apart, came out at 0.80 of the scale, too narrow to match). `None` when
/// the spans so placed would overlap, or would leave a gap wider than at
/// `scale` or narrowed to nothing: the frame's own map serves then.
fn anchor_spans(
    smooth: &[f64],
    n: usize,
    m: usize,
    scale: f64,
    keep: &[(usize, usize)],
) -> Option<Vec<f64>> {
    let merged = merge_spans(keep, n);
    if merged.is_empty() {
        return Some(smooth.to_vec());
    }
    let kept: usize = merged.iter().map(|(a, b)| b - a).sum();
    if kept >= n || kept as f64 * scale >= m as f64 {
        return None;
    }
    // Each span's output start.
    let starts: Vec<f64> = merged
        .iter()
        .map(|&(a, b)| {
            let len = (b - a) as f64 * scale;
            let centre = map_inverse(smooth, (a + b) as f64 / 2.0);
            let start = centre - len / 2.0;
            if a == 0 {
                0.0
            } else if b == n {
                m as f64 - len
            } else {
                start.clamp(0.0, m as f64 - len)
            }
        })
        .collect();
    // A span may start at a fraction of an output: the taps are made from
    // the map's values, linear between them.
    let mut pieces: Vec<(f64, f64, f64)> = Vec::with_capacity(2 * merged.len() + 1);
    let (mut x, mut o) = (0usize, 0.0f64);
    for (&(a, b), &start) in merged.iter().zip(&starts) {
        if a > x {
            let slope = (start - o) / (a - x) as f64;
            if !(slope > 1e-3 && slope <= scale + 1e-9) {
                return None;
            }
            pieces.push((x as f64, o, slope));
        } else if (start - o).abs() > 1e-9 {
            return None;
        }
        pieces.push((a as f64, start, scale));
        o = start + (b - a) as f64 * scale;
        x = b;
    }
    if x < n {
        let slope = (m as f64 - o) / (n - x) as f64;
        if !(slope > 1e-3 && slope <= scale + 1e-9) {
            return None;
        }
        pieces.push((x as f64, o, slope));
    } else if (o - m as f64).abs() > 1e-6 {
        return None;
    }
    Some(sample_pieces(&pieces, n, m))
}

/// `spans` clipped to 0..`n`, sorted, and those that touch or overlap
/// merged.
fn merge_spans(spans: &[(usize, usize)], n: usize) -> Vec<(usize, usize)> {
    let mut spans: Vec<(usize, usize)> = spans
        .iter()
        .map(|&(a, b)| (a.min(n), b.min(n)))
        .filter(|(a, b)| b > a)
        .collect();
    spans.sort_unstable();
    let mut merged: Vec<(usize, usize)> = Vec::with_capacity(spans.len());
    for (a, b) in spans {
        match merged.last_mut() {
            Some(last) if a <= last.1 => last.1 = last.1.max(b),
            _ => merged.push((a, b)),
        }
    }
    merged
}

/// The table of a map sampled at the output's sample edges (as
/// [`narrow_map`] gives it), linear between them.
pub fn map_taps(n: usize, map: &[f64]) -> Taps {
    let m = map.len().saturating_sub(1).max(1);
    Taps::by_map(n, m, |o| {
        let i = (o.floor() as usize).min(m - 1);
        let f = o - i as f64;
        map[i] + (map[(i + 1).min(m)] - map[i]) * f
    })
}

/// How much of a new frame's map the narrowing takes: the rest is the last
/// frame's, so that boxes found a few pixels apart from frame to frame do
/// not make the picture between them swim as much.
pub const NARROW_TAKE: f64 = 0.2;

/// Live, a new narrowing map holds each subject's span this much of its
/// length wider on either side, where that leaves the rest of the window
/// [`LIVE_SLACK_ROOM`] of the output: the map then stays as it is while the
/// subjects move within their slack ([`shows_whole`]), instead of moving
/// every column between them whenever a box moves a pixel.
pub const LIVE_SLACK: f64 = 0.05;
/// Live, the frames a narrowing map is held with no subject in the window
/// (boxes missed for a frame or two) before it eases back to narrowing the
/// window alike.
pub const LIVE_GONE: usize = 8;
/// The least share of the narrowed length left to what is narrowed, after
/// the subjects' spans with their slack.
pub const LIVE_SLACK_ROOM: f64 = 0.05;

/// `spans` each widened by [`LIVE_SLACK`] of its length on either side
/// (within 0..`n`), where the widened spans at `scale` leave
/// [`LIVE_SLACK_ROOM`] of `m`; else `spans` as they are.
fn with_slack(spans: &[(usize, usize)], n: usize, m: usize, scale: f64) -> Vec<(usize, usize)> {
    let wide: Vec<(usize, usize)> = spans
        .iter()
        .map(|&(a, b)| {
            let s = (LIVE_SLACK * (b - a) as f64).round() as usize;
            (a.saturating_sub(s), (b + s).min(n))
        })
        .collect();
    let kept: usize = merge_spans(&wide, n).iter().map(|(a, b)| b - a).sum();
    if kept < n && kept as f64 * scale <= (1.0 - LIVE_SLACK_ROOM) * m as f64 {
        wide
    } else {
        spans.to_vec()
    }
}

/// Whether `map` shows each of `spans` whole: at `scale`, to within half an
/// output sample over the span.
fn shows_whole(map: &[f64], scale: f64, spans: &[(usize, usize)]) -> bool {
    spans.iter().all(|&(a, b)| {
        let shown = map_inverse(map, b as f64) - map_inverse(map, a as f64);
        shown >= (b - a) as f64 * scale - 0.5
    })
}

/// The narrowing's memory from frame to frame, within one shot, window
/// length and output length: the last map.
#[derive(Clone, Debug, Default)]
pub struct Narrower {
    last: Option<NarrowState>,
}

#[derive(Clone, Debug)]
struct NarrowState {
    key: (usize, usize, usize, bool),
    map: Vec<f64>,
    /// Whether the map was made for no subject (it narrows the window
    /// alike).
    alike: bool,
    /// Live, the frames in a row with no subject.
    unseen: usize,
    /// Live, whether the map is still easing away from spans it held for
    /// subjects that have all gone (it is then not held, until it gets
    /// there).
    settling: bool,
}

/// Offline, the narrowing's map is the mean of the maps of this many
/// frames either side (of the same shot and sizes): centred, so it does not
/// lag. The plan holds the kept columns still over stretches
/// ([`super::plan`]'s `hold_narrowing`), so this only eases the change from
/// one stretch to the next, over 7 frames (a quarter of a second at 30 fps;
/// over 17, when the radius was 8 and the columns followed every box, the
/// changes overlapped and the picture between the subjects swam in nearly
/// every frame).
pub const NARROW_RADIUS: usize = 3;

/// The subjects' spans along the axis a layout cuts, in its window's
/// samples.
fn spans_in(w: Rect, keep: &[Rect], along_x: bool) -> Vec<(usize, usize)> {
    keep.iter()
        .filter_map(|k| k.intersect(&w))
        .map(|r| {
            if along_x {
                (r.x - w.x, r.right() - w.x)
            } else {
                (r.y - w.y, r.bottom() - w.y)
            }
        })
        .collect()
}

impl Narrower {
    /// The row and column tables of `plan`'s layout `lay`, which narrows
    /// its window: its subjects at the window's scale, the rest narrowed
    /// ([`narrow_map`]) along the axis the window is cut on. `around` are
    /// the plans of the frames about this one when the plan was made ahead
    /// (the map is then their mean), and empty live (the map is then eased
    /// from the last frame's).
    pub fn tables(&mut self, lay: &Layout, plan: &FramePlan, around: &[FramePlan]) -> (Taps, Taps) {
        let w = lay.window;
        let (sw, sh) = lay.scaled;
        let (cw, ch) = lay.carved;
        let along_x = cw < sw;
        let (n, m, scale) = if along_x {
            (w.w, cw, sw as f64 / w.w.max(1) as f64)
        } else {
            (w.h, ch, sh as f64 / w.h.max(1) as f64)
        };
        let key = (plan.shot, n, m, along_x);
        let own = spans_in(w, &plan.keep, along_x);
        let like = |p: &&FramePlan| {
            p.shot == plan.shot
                && p.fit == plan.fit
                && p.carve_to == plan.carve_to
                && (p.window.w, p.window.h) == (w.w, w.h)
        };
        let state = if around.iter().any(|p| like(&p)) {
            let mut sum = vec![0.0; m + 1];
            let mut count = 0.0;
            let mut all = own.clone();
            for p in around.iter().filter(like) {
                let spans = spans_in(p.window, &p.keep, along_x);
                let map = narrow_map(n, m, scale, &spans);
                for (s, v) in sum.iter_mut().zip(map) {
                    *s += v;
                }
                count += 1.0;
                all.extend(spans);
            }
            let mean: Vec<f64> = sum.into_iter().map(|v| v / count).collect();
            // Every subject about the frame at the scale, where they leave
            // room: what jitters from frame to frame is then held too.
            let map = anchor_spans(&mean, n, m, scale, &all)
                .or_else(|| anchor_spans(&mean, n, m, scale, &own))
                .unwrap_or_else(|| narrow_map(n, m, scale, &own));
            NarrowState {
                key,
                map,
                alike: own.is_empty(),
                unseen: 0,
                settling: false,
            }
        } else {
            let last = self.last.take().filter(|l| l.key == key);
            match last {
                // The last map still shows every subject whole: it stays as
                // it is, and nothing between the subjects moves. Spans it
                // holds for subjects that have gone stay held while others
                // are in the window, but once none has been for
                // [`LIVE_GONE`] frames the map eases back to the window
                // narrowed alike, all the way, before it holds again: held
                // for no subject, it would narrow one found by nothing (a
                // cockatoo's head) for nothing.
                Some(last)
                    if !last.settling
                        && shows_whole(&last.map, scale, &own)
                        && (!own.is_empty() || last.alike || last.unseen < LIVE_GONE) =>
                {
                    let unseen = if own.is_empty() { last.unseen + 1 } else { 0 };
                    NarrowState { unseen, ..last }
                }
                last => {
                    // A new map, holding each subject with room to move
                    // about before the next one.
                    let stale = last.as_ref().is_some_and(|l| l.settling || own.is_empty());
                    let slack = with_slack(&own, n, m, scale);
                    let target = narrow_map(n, m, scale, &slack);
                    let (map, close) = match last {
                        None => (target, true),
                        Some(last) => {
                            let eased: Vec<f64> = target
                                .iter()
                                .zip(&last.map)
                                .map(|(v, l)| l + (v - l) * NARROW_TAKE)
                                .collect();
                            let close = eased.iter().zip(&target).all(|(e, t)| (e - t).abs() < 0.5);
                            if close {
                                // Within half a sample of where it goes:
                                // there at once, so that it then holds.
                                (target, true)
                            } else if let Some(a) = anchor_spans(&eased, n, m, scale, &slack)
                                .or_else(|| anchor_spans(&eased, n, m, scale, &own))
                            {
                                (a, false)
                            } else {
                                (target, true)
                            }
                        }
                    };
                    NarrowState {
                        key,
                        map,
                        alike: own.is_empty(),
                        unseen: 0,
                        settling: stale && !close,
                    }
                }
            }
        };
        let taps = map_taps(n, &state.map);
        self.last = Some(state);
        if along_x {
            (taps, Taps::new(w.h, ch))
        } else {
            (Taps::new(w.w, cw), taps)
        }
    }
}

/// One output frame of `out` = (width, height) from `src` by `plan`'s
/// layout `lay`; `around` are the plans about it, when made ahead
/// ([`Narrower::tables`]).
pub fn render<P: Pixel>(
    src: &Plane<P>,
    lay: &Layout,
    out: (usize, usize),
    pad: Pad,
    (plan, around): (&FramePlan, &[FramePlan]),
    narrower: &mut Narrower,
) -> Plane<P> {
    let content = if lay.carved != lay.scaled {
        let (tx, ty) = narrower.tables(lay, plan, around);
        resample_with(src, lay.window, &tx, &ty)
    } else {
        resample(src, lay.window, lay.scaled.0, lay.scaled.1)
    };
    let c = lay.content;
    if (c.w, c.h) == out {
        return content;
    }
    let mut canvas = match pad {
        Pad::Blur => backdrop(src, lay.window, out),
        Pad::Color(rgb) => Plane::new(out.0, out.1, solid::<P>(rgb)),
    };
    for y in 0..c.h {
        canvas.row_mut(c.y + y)[c.x..c.x + c.w].copy_from_slice(content.row(y));
    }
    canvas
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Rgba;
    use crate::ops::reframe::geometry::Fit;

    #[test]
    fn tables_sum_to_one_and_stay_inside_the_input() {
        for (n, m) in [
            (1, 1),
            (1, 5),
            (5, 1),
            (1280, 406),
            (406, 1280),
            (720, 228),
            (7, 3),
        ] {
            let t = Taps::new(n, m);
            assert_eq!(t.len(), m);
            for o in 0..m {
                let w = &t.weights[o * t.taps..(o + 1) * t.taps];
                assert_eq!(
                    w.iter().map(|&v| v as u32).sum::<u32>(),
                    1 << WEIGHT_BITS,
                    "{n}->{m} at {o}"
                );
                assert!(
                    t.first[o] as usize + t.taps <= n.max(t.taps),
                    "{n}->{m} at {o}"
                );
                for (k, &v) in w.iter().enumerate() {
                    if v != 0 {
                        assert!((t.first[o] as usize + k) < n, "{n}->{m} at {o} tap {k}");
                    }
                }
            }
        }
    }

    #[test]
    fn resampling_by_rows_is_resampling_by_pixel() {
        let gray = crate::ops::retarget::tests::noise(123, 77, 7);
        let rgba: Plane<Rgba> = {
            let (a, b) = (
                crate::ops::retarget::tests::noise(123, 77, 8),
                crate::ops::retarget::tests::noise(123, 77, 9),
            );
            Plane::from_fn(123, 77, |x, y| {
                [gray.get(x, y), a.get(x, y), b.get(x, y), 255]
            })
        };
        let windows = [
            Rect::new(0, 0, 123, 77),
            Rect::new(17, 5, 91, 63),
            Rect::new(100, 70, 23, 7),
            Rect::new(3, 2, 1, 1),
        ];
        let sizes = [
            (40, 25),
            (13, 71),
            (200, 150),
            (1, 1),
            (91, 63),
            (7, 300),
            (245, 3),
        ];
        for r in windows {
            for (w, h) in sizes {
                let (tx, ty) = (Taps::new(r.w, w), Taps::new(r.h, h));
                assert_eq!(
                    resample_with(&gray, r, &tx, &ty),
                    resample_by_pixel(&gray, r, &tx, &ty),
                    "gray {r:?} to {w}x{h}"
                );
                assert_eq!(
                    resample_with(&rgba, r, &tx, &ty),
                    resample_by_pixel(&rgba, r, &tx, &ty),
                    "rgba {r:?} to {w}x{h}"
                );
            }
        }
    }

    #[test]
    fn halving_averages_pairs_and_a_flat_picture_stays_flat() {
        let p = Plane::from_fn(8, 2, |x, _| (x * 10) as u8);
        let half = resample(&p, Rect::new(0, 0, 8, 2), 4, 1);
        // (0+10)/2 = 5, (20+30)/2 = 25, …
        assert_eq!(half.row(0), &[5, 25, 45, 65]);
        let flat = Plane::new(37, 11, [200u8, 100, 50, 255]);
        for (w, h) in [(13, 5), (100, 40), (37, 11), (1, 1)] {
            let r = resample(&flat, Rect::new(0, 0, 37, 11), w, h);
            assert!(
                r.as_slice().iter().all(|&p| p == [200, 100, 50, 255]),
                "{w}x{h}"
            );
        }
    }

    #[test]
    fn a_crop_at_full_scale_copies_the_window() {
        let src = Plane::from_fn(40, 10, |x, y| [x as u8, y as u8, 7, 255]);
        let lay = Layout::new(Rect::new(12, 0, 6, 10), Fit::Crop, (6, 10));
        let out = render(
            &src,
            &lay,
            (6, 10),
            Pad::Blur,
            (&plan(&lay, &[]), &[]),
            &mut Narrower::default(),
        );
        assert_eq!(
            out,
            Plane::from_fn(6, 10, |x, y| [x as u8 + 12, y as u8, 7, 255])
        );
    }

    #[test]
    fn padding_surrounds_the_whole_window_scaled_down() {
        let src: Plane<Rgba> = Plane::from_fn(64, 36, |x, _| [(x * 4) as u8, 0, 0, 255]);
        let out = (18, 32);
        let lay = Layout::new(Rect::new(0, 0, 64, 36), Fit::Pad, out);
        let black = render(
            &src,
            &lay,
            out,
            Pad::Color([0, 0, 0]),
            (&plan(&lay, &[]), &[]),
            &mut Narrower::default(),
        );
        let c = lay.content;
        assert_eq!((c.w, c.h), (18, 10));
        assert_eq!(black.get(5, 0), [0, 0, 0, 255]);
        // The picture's left edge is dark, its right edge bright: all of it
        // is there, scaled.
        let mid = c.y + c.h / 2;
        assert!(black.get(0, mid)[0] < 16 && black.get(17, mid)[0] > 230);
        let blur = render(
            &src,
            &lay,
            out,
            Pad::Blur,
            (&plan(&lay, &[]), &[]),
            &mut Narrower::default(),
        );
        assert_eq!(blur.get(9, mid), black.get(9, mid));
        // The backdrop is the blurred centre of the window, darkened.
        let top = blur.get(9, 0)[0];
        assert!(top > 60 && top < 160, "{top}");
    }

    /// A plan of `lay`'s window and fit, keeping `keep`.
    fn plan(lay: &Layout, keep: &[Rect]) -> FramePlan {
        FramePlan {
            window: lay.window,
            fit: lay.fit,
            carve_to: None,
            shot: 0,
            keep: keep.to_vec(),
        }
    }

    #[test]
    fn narrowing_leaves_the_subject_whole_and_narrows_beside_it() {
        // Columns numbered; a subject in columns 25..35; narrowed 40%.
        let lay = Layout::new(Rect::new(0, 0, 60, 20), Fit::Carve, (36, 20));
        let marked = Plane::from_fn(60, 20, |x, y| [x as u8, y as u8, 0, 255]);
        let subject = Rect::new(25, 0, 10, 20);
        let p = plan(&lay, &[subject]);
        let out = render(
            &marked,
            &lay,
            (36, 20),
            Pad::Blur,
            (&p, &[]),
            &mut Narrower::default(),
        );
        assert_eq!((out.width(), out.height()), (36, 20));
        for y in 0..20 {
            let xs: Vec<u8> = out.row(y).iter().map(|p| p[0]).collect();
            let at = xs
                .iter()
                .position(|&x| x == 25)
                .expect("subject's first column");
            assert_eq!(
                &xs[at..at + 10],
                &(25..35).collect::<Vec<u8>>()[..],
                "row {y}"
            );
            // Whole columns move: every row alike, and in order.
            assert_eq!(xs, out.row(0).iter().map(|p| p[0]).collect::<Vec<_>>());
            assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{xs:?}");
        }
        // Beside it, the picture is narrowed: its ends are still there.
        assert!(out.get(0, 0)[0] <= 1 && out.get(35, 0)[0] >= 58);
    }

    #[test]
    fn the_narrowing_map_keeps_the_spans_at_the_scale_and_spans_the_window() {
        let map = narrow_map(100, 40, 0.5, &[(30, 50), (45, 60)]);
        assert_eq!(map.len(), 41);
        assert_eq!((map[0], map[40]), (0.0, 100.0));
        assert!(map.windows(2).all(|w| w[0] < w[1]));
        // 30..60 merged: at 0.5, each output inside it covers 2 inputs;
        // outside, 70 inputs share the other 25 outputs.
        let inside = map
            .windows(2)
            .filter(|w| w[0] >= 30.0 - 1e-9 && w[1] <= 60.0 + 1e-9)
            .inspect(|w| assert!((w[1] - w[0] - 2.0).abs() < 1e-9, "{w:?}"))
            .count();
        assert_eq!(inside, 14, "{map:?}");
        assert!(
            map.windows(2)
                .all(|w| w[1] - w[0] < 2.8 + 1e-9 || w[0] >= 30.0 - 1e-9)
        );
        // No room for the spans: the window scaled alike.
        let map = narrow_map(100, 10, 0.5, &[(0, 90)]);
        assert!(map.windows(2).all(|w| (w[1] - w[0] - 10.0).abs() < 1e-9));
    }

    #[test]
    fn made_ahead_the_map_holds_still_where_the_boxes_jitter() {
        // A still subject whose box is found a few columns apart from frame
        // to frame: alone, each frame's map moves with its box; made ahead,
        // the mean of the maps about each frame moves far less.
        let lay = Layout::new(Rect::new(0, 0, 120, 20), Fit::Carve, (72, 20));
        let jitter = [
            0usize, 3, 1, 4, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2, 4, 1, 3, 0, 2,
        ];
        let plans: Vec<FramePlan> = jitter
            .iter()
            .map(|&j| plan(&lay, &[Rect::new(48 + j, 0, 20 - j, 20)]))
            .collect();
        let moved = |radius: Option<usize>| -> u32 {
            let around = |i: usize| radius.map_or(&plans[..0], |r| &plans[i - r..=i + r]);
            let mut n = Narrower::default();
            let a = n.tables(&lay, &plans[10], around(10)).0;
            let mut n = Narrower::default();
            let b = n.tables(&lay, &plans[11], around(11)).0;
            a.first
                .iter()
                .zip(&b.first)
                .map(|(x, y)| x.abs_diff(*y))
                .sum()
        };
        let alone = moved(None);
        let ahead = moved(Some(8));
        assert!(alone > 0, "the boxes differ");
        assert!(4 * ahead <= alone, "alone {alone}, made ahead {ahead}");
    }

    #[test]
    fn live_the_map_holds_while_the_subject_moves_within_its_slack() {
        // Columns numbered; a subject 20 columns wide found a few columns
        // apart from frame to frame, then gone 20 columns on.
        let lay = Layout::new(Rect::new(0, 0, 120, 20), Fit::Carve, (72, 20));
        let marked = Plane::from_fn(120, 20, |x, y| [x as u8, y as u8, 0, 255]);
        let at = |x: usize| plan(&lay, &[Rect::new(x, 0, 20, 20)]);
        let whole = |out: &Plane<[u8; 4]>, x: usize| {
            let xs: Vec<u8> = out.row(0).iter().map(|p| p[0]).collect();
            let inside: Vec<u8> = xs
                .iter()
                .copied()
                .filter(|&v| (x as u8 + 1..x as u8 + 19).contains(&v))
                .collect();
            inside.len() == 18 && inside.windows(2).all(|w| w[1] == w[0] + 1)
        };
        let mut narrower = Narrower::default();
        let first = narrower.tables(&lay, &at(48), &[]).0;
        // Within its slack (a column either side): the same table, so
        // nothing between the subject and the window's edges moves.
        for x in [49, 47, 48, 49] {
            let taps = narrower.tables(&lay, &at(x), &[]).0;
            assert_eq!(taps, first, "subject at {x}");
            let out = render(
                &marked,
                &lay,
                (72, 20),
                Pad::Blur,
                (&at(x), &[]),
                &mut narrower,
            );
            assert!(whole(&out, x), "subject at {x}");
        }
        // Past it: a new map, which shows the subject whole.
        let out = render(
            &marked,
            &lay,
            (72, 20),
            Pad::Blur,
            (&at(70), &[]),
            &mut narrower,
        );
        assert!(whole(&out, 70));
        assert_ne!(narrower.tables(&lay, &at(70), &[]).0, first);
    }

    #[test]
    fn live_a_map_held_for_a_subject_that_has_gone_eases_back_to_narrowing_alike() {
        let lay = Layout::new(Rect::new(0, 0, 120, 20), Fit::Carve, (72, 20));
        let subject = plan(&lay, &[Rect::new(48, 0, 20, 20)]);
        let none = plan(&lay, &[]);
        let alike = Narrower::default().tables(&lay, &none, &[]).0;
        let mut narrower = Narrower::default();
        let held = narrower.tables(&lay, &subject, &[]).0;
        assert_ne!(held, alike);
        // Missed for a few frames: held as it was.
        for k in 0..LIVE_GONE {
            assert_eq!(narrower.tables(&lay, &none, &[]).0, held, "frame {k}");
        }
        // Gone: eased back, every frame changing, until the window is
        // narrowed alike, which then holds.
        let mut last = held;
        let mut frames = 0;
        while last != alike {
            let taps = narrower.tables(&lay, &none, &[]).0;
            assert_ne!(taps, last, "eased in every frame until it gets there");
            last = taps;
            frames += 1;
            assert!(frames < 60, "never got there");
        }
        assert!(frames > 1, "eased, not at once");
        assert_eq!(narrower.tables(&lay, &none, &[]).0, alike);
    }

    #[test]
    fn made_ahead_a_subject_kept_in_every_frame_stays_at_the_scale() {
        // Columns numbered; the subject (columns 100..130) is kept in every
        // frame, but every other frame also keeps 20..100 beside it, so
        // the maps about a frame place the subject at outputs 30 apart.
        // Their mean alone would narrow its columns; anchored, every output
        // column inside it is the next input column (the scale is 1).
        let lay = Layout::new(Rect::new(0, 0, 200, 10), Fit::Carve, (120, 10));
        assert_eq!((lay.scaled, lay.carved), ((200, 10), (120, 10)));
        let marked = Plane::from_fn(200, 10, |x, y| [x as u8, y as u8, 0, 255]);
        let subject = Rect::new(100, 0, 30, 10);
        let beside = Rect::new(20, 0, 80, 10);
        let plans: Vec<FramePlan> = (0..7)
            .map(|i| match i % 2 {
                0 => plan(&lay, &[subject]),
                _ => plan(&lay, &[beside, subject]),
            })
            .collect();
        for (i, around) in [(3, &plans[..]), (2, &plans[..]), (3, &plans[..0])] {
            let mut narrower = Narrower::default();
            if around.is_empty() {
                // Live: eased from the frame before, which kept less.
                narrower.tables(&lay, &plans[2], &[]);
            }
            let out = render(
                &marked,
                &lay,
                (120, 10),
                Pad::Blur,
                (&plans[i], around),
                &mut narrower,
            );
            let xs: Vec<u8> = out.row(5).iter().map(|p| p[0]).collect();
            let inside: Vec<u8> = xs
                .iter()
                .copied()
                .filter(|&v| (101..129).contains(&v))
                .collect();
            assert_eq!(inside.len(), 28, "frame {i}: {xs:?}");
            assert!(
                inside.windows(2).all(|w| w[1] == w[0] + 1),
                "frame {i}: {xs:?}"
            );
            assert!(xs.windows(2).all(|w| w[0] <= w[1]), "{xs:?}");
        }
    }

    #[test]
    fn pad_colours_parse() {
        assert_eq!(Pad::parse("#ff8000"), Some(Pad::Color([255, 128, 0])));
        assert_eq!(Pad::parse("blur"), Some(Pad::Blur));
        assert_eq!(Pad::parse("#ff80"), None);
        assert_eq!(Pad::parse("red"), None);
        assert_eq!(Pad::Color([1, 2, 255]).name(), "#0102ff");
    }
}
