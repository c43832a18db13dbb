//! Moving subjects against a stretch's background: the median background
//! of the sampled frames in scene coordinates, the boxes of what differs
//! from it (opened and split into components), and boxes kept only where
//! they persist in time. The analysis (`analyze.rs`) drives it.

use super::camera::{Similarity, bilinear};
use super::geometry::Rect;
use crate::frame::Plane;

/// Frames sampled for a stretch's median background.
pub const SAMPLES: usize = 21;
/// The largest share of the picture that may stand out from the
/// background before the frame's moving subjects are dropped.
pub const MAX_MOVING: f64 = 0.4;
/// A moving box covers at least this share of the picture.
pub const MIN_MOVING: f64 = 0.002;

/// A frame of a stretch as the background needs it: its coarse luma and
/// where the scene sits in it (scene point → frame pixel).
pub(super) struct Placed<'a> {
    pub coarse: &'a Plane<u8>,
    pub place: Similarity,
}

/// The scene reaches at most this many frame sizes beyond the frame on
/// each side (a camera that zooms out over a long stretch).
const MAX_REACH: f64 = 1.0;

/// The median background of a stretch in scene coordinates: for each
/// scene pixel, the median of the sampled frames that saw it (at least
/// three), each read between its pixels where the camera put it. Scene
/// pixel `(x, y)` is the scene point `(x, y) + origin`; a pixel too few
/// frames saw holds `None`.
pub(super) struct Background {
    /// Each scene pixel's least and greatest level over its 3×3
    /// neighbourhood: a frame's pixel stands out by its distance from that
    /// range, so that an edge placed a pixel off does not.
    low: Plane<Option<u8>>,
    high: Plane<Option<u8>>,
    origin: (f64, f64),
}

/// A sampled frame, where its point under a scene row's first pixel falls,
/// and that point's step along the row.
type Line<'a> = (&'a Plane<u8>, (f64, f64), (f64, f64));

pub(super) fn median_background(pending: &[Placed]) -> Background {
    use rayon::prelude::*;
    let (w, h) = (pending[0].coarse.width(), pending[0].coarse.height());
    let n = pending.len();
    let picks: Vec<usize> = if n <= SAMPLES {
        (0..n).collect()
    } else {
        (0..SAMPLES).map(|i| i * (n - 1) / (SAMPLES - 1)).collect()
    };
    // The scene's extent: where the sampled frames' corners fall in it.
    let (mut lo_x, mut lo_y, mut hi_x, mut hi_y) = (f64::MAX, f64::MAX, f64::MIN, f64::MIN);
    let (fw, fh) = ((w.max(1) - 1) as f64, (h.max(1) - 1) as f64);
    for &i in &picks {
        let back = pending[i].place.inverse();
        for (x, y) in [(0.0, 0.0), (fw, 0.0), (0.0, fh), (fw, fh)] {
            let (sx, sy) = back.apply(x, y);
            lo_x = lo_x.min(sx);
            lo_y = lo_y.min(sy);
            hi_x = hi_x.max(sx);
            hi_y = hi_y.max(sy);
        }
    }
    let (reach_x, reach_y) = (MAX_REACH * w as f64, MAX_REACH * h as f64);
    let origin = (lo_x.max(-reach_x).floor(), lo_y.max(-reach_y).floor());
    let mw = (hi_x.min(fw + reach_x) - origin.0).ceil().max(0.0) as usize + 1;
    let mh = (hi_y.min(fh + reach_y) - origin.1).ceil().max(0.0) as usize + 1;
    let need = 3.min(picks.len());
    let mut plane: Plane<Option<u8>> = Plane::new(mw, mh, None);
    plane.par_rows_mut().for_each(|(gy, row)| {
        let sy = gy as f64 + origin.1;
        // Each sampled frame's point under this row's first pixel, and its
        // step along the row.
        let lines: Vec<Line> = picks
            .iter()
            .map(|&i| {
                let p = &pending[i];
                (
                    p.coarse,
                    p.place.apply(origin.0, sy),
                    (p.place.a, p.place.b),
                )
            })
            .collect();
        let mut vals = [0u8; SAMPLES];
        for (gx, out) in row.iter_mut().enumerate() {
            let mut k = 0;
            for &(coarse, (x0, y0), (dx, dy)) in &lines {
                let t = gx as f64;
                if let Some(v) = bilinear(coarse, x0 + t * dx, y0 + t * dy) {
                    vals[k] = v.round() as u8;
                    k += 1;
                }
            }
            if k >= need {
                let vals = &mut vals[..k];
                vals.sort_unstable();
                *out = Some(vals[k / 2]);
            }
        }
    });
    let spread = |f: fn(u8, u8) -> u8| {
        let (w, h) = (plane.width(), plane.height());
        Plane::from_fn(w, h, |x, y| {
            let mut acc = plane.get(x, y)?;
            for yy in y.saturating_sub(1)..(y + 2).min(h) {
                for xx in x.saturating_sub(1)..(x + 2).min(w) {
                    if let Some(v) = plane.get(xx, yy) {
                        acc = f(acc, v);
                    }
                }
            }
            Some(acc)
        })
    };
    Background {
        low: spread(u8::min),
        high: spread(u8::max),
        origin,
    }
}

/// What a background can be asked: how far a frame's row `y` lies from
/// it, for a frame where the scene sits as `place` puts it (0 where it has
/// no level).
pub(super) trait Ground {
    fn diff_row(&self, y: usize, place: &Similarity, row: &[u8], out: &mut [u8]);
}

impl Ground for Background {
    fn diff_row(&self, y: usize, place: &Similarity, row: &[u8], out: &mut [u8]) {
        let back = place.inverse();
        let (x0, y0) = back.apply(0.0, y as f64);
        for (x, (o, &v)) in out.iter_mut().zip(row).enumerate() {
            let t = x as f64;
            let (gx, gy) = (
                x0 + t * back.a - self.origin.0,
                y0 + t * back.b - self.origin.1,
            );
            let v = v as f64;
            *o = match (bilinear(&self.low, gx, gy), bilinear(&self.high, gx, gy)) {
                (Some(lo), Some(hi)) => (lo - v).max(v - hi).max(0.0).round() as u8,
                _ => 0,
            };
        }
    }
}

impl Ground for Plane<u8> {
    fn diff_row(&self, y: usize, _place: &Similarity, row: &[u8], out: &mut [u8]) {
        for ((o, &v), &b) in out.iter_mut().zip(row).zip(self.row(y)) {
            *o = b.abs_diff(v);
        }
    }
}

/// The boxes of what stands out of `ground` in `coarse`, in its pixels.
pub(super) fn foreground_boxes(
    coarse: &Plane<u8>,
    ground: &impl Ground,
    place: &Similarity,
) -> Vec<Rect> {
    let (w, h) = (coarse.width(), coarse.height());
    if w < 3 || h < 3 {
        return Vec::new();
    }
    let mut diff = Plane::new(w, h, 0u8);
    for (y, out) in diff.rows_mut().enumerate() {
        ground.diff_row(y, place, coarse.row(y), out);
    }
    // The noise: the median difference.
    let mut hist = [0usize; 256];
    for y in 0..h {
        for &d in diff.row(y) {
            hist[d as usize] += 1;
        }
    }
    let (mut acc, mut median) = (0, 0);
    for (v, &c) in hist.iter().enumerate() {
        acc += c;
        if acc * 2 >= w * h {
            median = v;
            break;
        }
    }
    let threshold = (3 * median as u32 + 6).max(18) as u8;
    // Those above it, counted by the histogram.
    let moving: usize = hist[threshold as usize + 1..].iter().sum();
    if moving as f64 > MAX_MOVING * (w * h) as f64 {
        return Vec::new();
    }
    let mut raw = Plane::new(w, h, false);
    for (y, out) in raw.rows_mut().enumerate() {
        for (o, &d) in out.iter_mut().zip(diff.row(y)) {
            *o = d > threshold;
        }
    }
    // Opened (specks of noise and misalignment go), then closed a little
    // so that a body's parts join.
    let opened = dilate(&erode(&raw));
    let closed = erode(&dilate(&dilate(&opened)));
    let min_area = ((MIN_MOVING * (w * h) as f64) as usize).max(4);
    let mut boxes: Vec<Rect> = components(&closed)
        .into_iter()
        .filter(|(_, area)| *area >= min_area)
        .map(|(r, _)| r)
        .collect();
    merge_touching(&mut boxes, 1, w, h);
    boxes
}

/// Whether all pixels of each one's 3×3 neighbourhood (clipped at the
/// edges) hold.
pub(super) fn erode(p: &Plane<bool>) -> Plane<bool> {
    morph::<false>(p)
}

/// Whether any pixel of each one's 3×3 neighbourhood (clipped at the
/// edges) holds.
pub(super) fn dilate(p: &Plane<bool>) -> Plane<bool> {
    morph::<true>(p)
}

/// [`erode`] (`GROW` false) or [`dilate`]: the neighbourhood is a row's
/// three and a column's three, so along rows, then along columns.
fn morph<const GROW: bool>(p: &Plane<bool>) -> Plane<bool> {
    let (w, h) = (p.width(), p.height());
    let op = |a: bool, b: bool| if GROW { a | b } else { a & b };
    // Each of the three rows is read by three output rows: made once.
    let mut along = Plane::new(w, h, false);
    for (y, out) in along.rows_mut().enumerate() {
        let src = p.row(y);
        if w < 2 {
            out.copy_from_slice(src);
            continue;
        }
        out[0] = op(src[0], src[1]);
        for ((o, a), (b, c)) in out[1..w - 1]
            .iter_mut()
            .zip(&src[..w - 2])
            .zip(src[1..w - 1].iter().zip(&src[2..]))
        {
            *o = op(op(*a, *b), *c);
        }
        out[w - 1] = op(src[w - 2], src[w - 1]);
    }
    let mut out = Plane::new(w, h, false);
    for (y, o) in out.rows_mut().enumerate() {
        let (lo, hi) = (y.saturating_sub(1), (y + 2).min(h));
        o.copy_from_slice(along.row(lo));
        for yy in lo + 1..hi {
            for (v, &a) in o.iter_mut().zip(along.row(yy)) {
                *v = op(*v, a);
            }
        }
    }
    out
}

/// The 8-connected components of a mask: box and pixel count.
pub(super) fn components(p: &Plane<bool>) -> Vec<(Rect, usize)> {
    let (w, h) = (p.width(), p.height());
    let mut seen = vec![false; w * h];
    let mut out = Vec::new();
    let mut stack = Vec::new();
    for y0 in 0..h {
        for x0 in 0..w {
            if seen[y0 * w + x0] || !p.get(x0, y0) {
                continue;
            }
            seen[y0 * w + x0] = true;
            stack.push((x0, y0));
            let (mut x_lo, mut x_hi, mut y_lo, mut y_hi, mut n) = (x0, x0, y0, y0, 0);
            while let Some((x, y)) = stack.pop() {
                n += 1;
                x_lo = x_lo.min(x);
                x_hi = x_hi.max(x);
                y_lo = y_lo.min(y);
                y_hi = y_hi.max(y);
                for yy in y.saturating_sub(1)..(y + 2).min(h) {
                    for xx in x.saturating_sub(1)..(x + 2).min(w) {
                        if !seen[yy * w + xx] && p.get(xx, yy) {
                            seen[yy * w + xx] = true;
                            stack.push((xx, yy));
                        }
                    }
                }
            }
            out.push((Rect::new(x_lo, y_lo, x_hi - x_lo + 1, y_hi - y_lo + 1), n));
        }
    }
    out
}

/// Merges boxes that touch once grown by `g`.
pub(crate) fn merge_touching(boxes: &mut Vec<Rect>, g: usize, w: usize, h: usize) {
    loop {
        let mut merged = false;
        'outer: for i in 0..boxes.len() {
            for j in i + 1..boxes.len() {
                if boxes[i].grown(g, g, w, h).intersect(&boxes[j]).is_some() {
                    boxes[i] = boxes[i].union(&boxes[j]);
                    boxes.swap_remove(j);
                    merged = true;
                    break 'outer;
                }
            }
        }
        if !merged {
            return;
        }
    }
}

/// Keeps the boxes of each frame that a box of at least `need` of the
/// `radius` frames on each side overlaps (a speck of one frame goes).
pub(super) fn confirm_in_time(boxes: &[Vec<Rect>], radius: usize, need: usize) -> Vec<Vec<Rect>> {
    let n = boxes.len();
    (0..n)
        .map(|i| {
            let lo = i.saturating_sub(radius);
            let hi = (i + radius + 1).min(n);
            boxes[i]
                .iter()
                .filter(|b| {
                    let seen = (lo..hi)
                        .filter(|&j| j != i && boxes[j].iter().any(|o| o.intersect(b).is_some()))
                        .count();
                    // A stretch too short to tell keeps what it has.
                    seen >= need.min(hi - lo - 1)
                })
                .copied()
                .collect()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn erosion_and_dilation_are_those_of_the_clipped_neighbourhoods() {
        for (w, h, seed) in [(37, 23, 1), (1, 9, 2), (9, 1, 3), (2, 2, 4), (64, 40, 5)] {
            let noise = crate::ops::retarget::tests::noise(w, h, seed);
            for level in [60, 128, 200] {
                let p = noise.map(|v| v > level);
                let near = |x: usize, y: usize| {
                    (y.saturating_sub(1)..(y + 2).min(h)).flat_map(move |yy| {
                        (x.saturating_sub(1)..(x + 2).min(w)).map(move |xx| (xx, yy))
                    })
                };
                let all = Plane::from_fn(w, h, |x, y| near(x, y).all(|(xx, yy)| p.get(xx, yy)));
                let any = Plane::from_fn(w, h, |x, y| near(x, y).any(|(xx, yy)| p.get(xx, yy)));
                assert_eq!(erode(&p), all, "{w}x{h} above {level}");
                assert_eq!(dilate(&p), any, "{w}x{h} above {level}");
            }
        }
    }
}
