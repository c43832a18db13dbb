//! Whether marked subjects survive the retargeting: boxes drawn on frames
//! of the original (`quality --boxes FILE`), each looked for in the
//! result's frame of the same index at one overall scale.
//!
//! A box is *kept* when its content appears whole in the result: the
//! Pearson correlation (normalised cross-correlation of mean-removed luma)
//! between the box, resampled to the scale, and the result at the best
//! position is at least [`KEEP_NCC`]. The scale is uniform; the candidates
//! are the frame's own scale from the reframe's path when there is one
//! (`quality --reframe-path`: a zoom fits a window of any size to the
//! output), then out_h/in_h and out_w/in_w (a crop or carve at full
//! height, a letterbox that fits the width), and the best one counts. A
//! box squeezed, cut by the frame's edge or carved through correlates less
//! and is lost, as is one too large for the result at every scale or
//! smaller than [`MIN_SIDE`] pixels a side at all.
//!
//! The box is resampled by area interpolation onto its rounded size at the
//! scale (round(w·s)×round(h·s); the two axes' scales differ by under a
//! pixel over the box). The search is coarse to fine: both images are first
//! reduced by block means of k×k, k = ⌊smaller side of the scaled box ÷
//! [`SEARCH_SIDE`]⌋ (at least 1), so that the box keeps at least 24 pixels
//! a side there; every position of the box inside the reduced result is
//! scored, and the [`CANDIDATES`] best (at least three reduced pixels apart)
//! are each followed down through factors k/2, k/4, …, 1 within the
//! uncertainty of the coarser level. The correlation that decides is the
//! one at full resolution. Flat boxes (luma standard deviation below one
//! level) have no pattern to find and count as lost.

use std::path::Path;

use rayon::prelude::*;
use serde::Deserialize;
use serde::de::{self, Deserializer};

use crate::frame::{Plane, Rgba};
use crate::{Error, Result};

/// The least correlation of a kept box.
pub const KEEP_NCC: f64 = 0.8;
/// The least smaller side of the box in the coarse search, pixels.
pub const SEARCH_SIDE: usize = 24;
/// Coarse positions followed down to full resolution.
pub const CANDIDATES: usize = 6;
/// The least side of a box at the scale: a smaller one has too few pixels
/// for a correlation to tell it from chance (13×13 boxes of smooth texture
/// reach 0.8 somewhere in a frame by chance), and counts as lost.
pub const MIN_SIDE: usize = 16;

/// A box in pixels: left, top, width, height.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Rect {
    pub x: usize,
    pub y: usize,
    pub w: usize,
    pub h: usize,
}

/// A box marked on one frame of the original.
#[derive(Clone, Debug, PartialEq)]
pub struct Subject {
    /// The 0-based index of the decoded frame.
    pub frame: usize,
    pub label: String,
    pub rect: Rect,
}

/// A box file:
/// `{"clip": "dog-walk-720p.mp4", "size": [1280, 720], "boxes": [{"frame": 30, "label": "woman", "box": [x, y, w, h]}]}`.
/// `clip` is for people; `size` must be the original's; fields not named
/// are ignored; a box without `label` is labelled `subject`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Subjects {
    pub clip: Option<String>,
    pub size: (usize, usize),
    pub boxes: Vec<Subject>,
}

impl Subjects {
    /// Reads and checks a box file; the error names the file and the field.
    pub fn read(path: &Path) -> Result<Self> {
        let fail = |reason: String| Error::Read {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(&text).map_err(fail)
    }

    /// Parses and checks a box file's text; the error names the field
    /// (`boxes[3].frame: …`).
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        // Through a `Value`, so that serde's messages carry no position
        // that the field's name, put before them, would repeat.
        let root: serde_json::Value =
            serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        // serde reads a struct from a list by position, and would name the
        // list's first box a bad `clip`.
        if root.is_array() {
            return Err(r#"the boxes alone: a box file gives the frame size they are marked in as well, {"size": [width, height], "boxes": [...]}"#.to_owned());
        }
        let file = BoxFile::deserialize(root).map_err(|e| {
            let message = e.to_string();
            match message.strip_prefix('.') {
                Some(m) => m.to_owned(),
                None => message,
            }
        })?;
        let (fw, fh) = size(&file.size, "size")?;
        let mut boxes = Vec::with_capacity(file.boxes.0.len());
        for (i, b) in file.boxes.0.into_iter().enumerate() {
            let at = format!("boxes[{i}]");
            let frame = count(b.frame, &format!("{at}.frame"))?;
            let field = format!("{at}.box");
            let [x, y, w, h] = <[f64; 4]>::try_from(b.rect.as_slice()).map_err(|_| {
                format!(
                    "{field}: expected [x, y, w, h], found {} values",
                    b.rect.len()
                )
            })?;
            if w <= 0.0 || h <= 0.0 {
                return Err(format!(
                    "{field}: the width and height must be > 0, found {w} and {h}"
                ));
            }
            let r = Rect {
                x: x.round().max(0.0) as usize,
                y: y.round().max(0.0) as usize,
                w: w.round() as usize,
                h: h.round() as usize,
            };
            if x < -0.5 || y < -0.5 || r.w == 0 || r.h == 0 || r.x + r.w > fw || r.y + r.h > fh {
                return Err(format!(
                    "{field}: [{x}, {y}, {w}, {h}] is not a box inside the {fw}x{fh} frame of `size`"
                ));
            }
            boxes.push(Subject {
                frame,
                label: b.label.unwrap_or_else(|| "subject".to_owned()),
                rect: r,
            });
        }
        Ok(Self {
            clip: file.clip,
            size: (fw, fh),
            boxes,
        })
    }
}

/// A box file as written. Numbers are read as JSON has them and checked
/// after ([`Subjects::parse`]), so that `3.0` is a frame and `1.5` is not,
/// with a message naming the field. Each field is read through a function
/// that puts `.name` (and a box's `[i]`) before a message from within it
/// ([`named`]), so that serde's own, such as `invalid type: string "2",
/// expected f64`, also say where: `boxes[1].frame: invalid type: …`.
#[derive(Deserialize)]
#[serde(expecting = r#"a box file: {"size": [width, height], "boxes": [...]}"#)]
struct BoxFile {
    #[serde(default, deserialize_with = "clip")]
    clip: Option<String>,
    #[serde(deserialize_with = "size_field")]
    size: Vec<f64>,
    #[serde(deserialize_with = "boxes")]
    boxes: Boxes,
}

/// One box as written.
#[derive(Deserialize)]
#[serde(expecting = r#"a box: {"frame": N, "label": "...", "box": [x, y, w, h]}"#)]
struct BoxEntry {
    #[serde(deserialize_with = "frame")]
    frame: f64,
    #[serde(default, deserialize_with = "label")]
    label: Option<String>,
    #[serde(rename = "box", deserialize_with = "box_field")]
    rect: Vec<f64>,
}

/// `inner`, a message from within `part` (`.size`, `[2]`): the path grows
/// when `inner` names a part itself, else `part: inner`.
fn within(part: &str, inner: &str) -> String {
    if inner.starts_with(['.', '[']) {
        format!("{part}{inner}")
    } else {
        format!("{part}: {inner}")
    }
}

/// `T` read from the field `name`, its message put within `.name`.
fn named<'de, D, T>(d: D, name: &str) -> std::result::Result<T, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    T::deserialize(d).map_err(|e| de::Error::custom(within(&format!(".{name}"), &e.to_string())))
}

fn clip<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    named(d, "clip")
}

fn size_field<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<f64>, D::Error> {
    named(d, "size")
}

fn frame<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<f64, D::Error> {
    named(d, "frame")
}

fn label<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Option<String>, D::Error> {
    named(d, "label")
}

fn box_field<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Vec<f64>, D::Error> {
    named(d, "box")
}

fn boxes<'de, D: Deserializer<'de>>(d: D) -> std::result::Result<Boxes, D::Error> {
    named(d, "boxes")
}

/// The boxes, read one by one so that a message names the box's index
/// (`[2]`, within `.boxes`).
struct Boxes(Vec<BoxEntry>);

impl<'de> Deserialize<'de> for Boxes {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        struct Each;
        impl<'de> de::Visitor<'de> for Each {
            type Value = Boxes;

            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an array of boxes")
            }

            fn visit_seq<A: de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> std::result::Result<Boxes, A::Error> {
                let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
                loop {
                    let at = format!("[{}]", out.len());
                    match seq.next_element::<BoxEntry>() {
                        Ok(Some(b)) => out.push(b),
                        Ok(None) => return Ok(Boxes(out)),
                        Err(e) => return Err(de::Error::custom(within(&at, &e.to_string()))),
                    }
                }
            }
        }
        d.deserialize_seq(Each)
    }
}

/// A whole number from 0 to 4,294,967,295 (`3` or `3.0`).
fn count(x: f64, at: &str) -> std::result::Result<usize, String> {
    if x < 0.0 || x.fract() != 0.0 {
        return Err(format!("{at}: expected a whole number ≥ 0, found {x}"));
    }
    if x > u32::MAX as f64 {
        return Err(format!(
            "{at}: {x} is past the largest number a frame or a size may be ({})",
            u32::MAX
        ));
    }
    Ok(x as usize)
}

/// `[width, height]`, both whole and ≥ 1.
fn size(v: &[f64], at: &str) -> std::result::Result<(usize, usize), String> {
    let [w, h] = <[f64; 2]>::try_from(v)
        .map_err(|_| format!("{at}: expected [width, height], found {} values", v.len()))?;
    let (w, h) = (count(w, at)?, count(h, at)?);
    if w == 0 || h == 0 {
        return Err(format!("{at}: {w}x{h} is empty; both sides must be ≥ 1"));
    }
    Ok((w, h))
}

/// Where a box was found in a result frame.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Found {
    /// The correlation at the best position, −1 to 1; −1 when the box fits
    /// the result at no candidate scale (or is under [`MIN_SIDE`] at all).
    pub ncc: f64,
    /// The scale it was found at (0 when it fits at none).
    pub scale: f64,
    /// The box at that scale and position, in pixels of the result.
    pub at: Option<Rect>,
}

impl Found {
    const NOWHERE: Found = Found {
        ncc: -1.0,
        scale: 0.0,
        at: None,
    };

    pub fn kept(&self) -> bool {
        self.ncc >= KEEP_NCC
    }
}

/// Luma (BT.601 weights on the decoded RGB), less 128 so that sums of
/// squares keep their precision in f32.
#[derive(Clone, Debug)]
struct Gray {
    w: usize,
    h: usize,
    v: Vec<f32>,
}

impl Gray {
    fn from_rgba(p: &Plane<Rgba>) -> Self {
        let (w, h) = (p.width(), p.height());
        let mut v = vec![0f32; w * h];
        v.par_chunks_mut(w.max(1)).enumerate().for_each(|(y, row)| {
            for (o, px) in row.iter_mut().zip(p.row(y)) {
                *o = 0.299 * px[0] as f32 + 0.587 * px[1] as f32 + 0.114 * px[2] as f32 - 128.0;
            }
        });
        Self { w, h, v }
    }

    /// Block means of f×f; a partial block at the right or bottom is left
    /// out.
    fn shrink(&self, f: usize) -> Gray {
        if f == 1 {
            return self.clone();
        }
        let (w, h) = (self.w / f, self.h / f);
        let mut v = vec![0f32; w * h];
        let inv = 1.0 / (f * f) as f32;
        v.par_chunks_mut(w.max(1)).enumerate().for_each(|(y, row)| {
            for (x, o) in row.iter_mut().enumerate() {
                let mut s = 0f32;
                for j in 0..f {
                    let r = &self.v[(y * f + j) * self.w + x * f..][..f];
                    s += r.iter().sum::<f32>();
                }
                *o = s * inv;
            }
        });
        Gray { w, h, v }
    }

    /// The area `r` resampled to `tw`×`th` by area interpolation.
    fn resample(&self, r: Rect, tw: usize, th: usize) -> Gray {
        let xs = super::area_weights(r.w, tw);
        let ys = super::area_weights(r.h, th);
        let mut rows = vec![0f32; tw * r.h];
        for (y, out) in rows.chunks_mut(tw).enumerate() {
            let src = &self.v[(r.y + y) * self.w + r.x..][..r.w];
            for (o, (first, wts)) in out.iter_mut().zip(&xs) {
                *o = wts
                    .iter()
                    .enumerate()
                    .map(|(k, &wt)| wt * src[first + k])
                    .sum();
            }
        }
        let mut v = vec![0f32; tw * th];
        for (out, (first, wts)) in v.chunks_mut(tw).zip(&ys) {
            for (k, &wt) in wts.iter().enumerate() {
                for (o, &s) in out.iter_mut().zip(&rows[(first + k) * tw..][..tw]) {
                    *o += wt * s;
                }
            }
        }
        Gray { w: tw, h: th, v }
    }
}

/// A box to look for: its values less their mean, and their norm.
struct Template {
    w: usize,
    h: usize,
    v: Vec<f32>,
    norm: f64,
}

impl Template {
    fn new(g: Gray) -> Self {
        let n = (g.w * g.h).max(1) as f64;
        let mean = g.v.iter().map(|&x| x as f64).sum::<f64>() / n;
        let v: Vec<f32> = g.v.iter().map(|&x| (x as f64 - mean) as f32).collect();
        let norm = v.iter().map(|&x| x as f64 * x as f64).sum::<f64>().sqrt();
        Template {
            w: g.w,
            h: g.h,
            v,
            norm,
        }
    }

    /// Whether the luma varies enough (a standard deviation of a level) to
    /// have a pattern to find.
    fn textured(&self) -> bool {
        self.norm * self.norm >= (self.w * self.h) as f64
    }
}

/// The correlation from the sum of template × window, and the window's sum
/// and sum of squares over `n` pixels.
fn pearson(cross: f64, sum: f64, squares: f64, n: f64, norm: f64) -> f64 {
    let var = squares - sum * sum / n;
    if var <= 1e-3 * n || norm <= 0.0 {
        return 0.0;
    }
    (cross / (norm * var.sqrt())).clamp(-1.0, 1.0)
}

/// The correlation of `t` with `g` at (x, y), computed directly.
fn ncc_at(t: &Template, g: &Gray, x: usize, y: usize) -> f64 {
    let (mut sum, mut squares, mut cross) = (0f64, 0f64, 0f64);
    for j in 0..t.h {
        let row = &g.v[(y + j) * g.w + x..][..t.w];
        let trow = &t.v[j * t.w..][..t.w];
        let (mut a, mut b, mut c) = (0f32, 0f32, 0f32);
        for (&w, &tv) in row.iter().zip(trow) {
            a += w;
            b += w * w;
            c += tv * w;
        }
        sum += a as f64;
        squares += b as f64;
        cross += c as f64;
    }
    pearson(cross, sum, squares, (t.w * t.h) as f64, t.norm)
}

/// The correlation of `t` at every position inside `g`, row-major over
/// (g.w − t.w + 1) × (g.h − t.h + 1); the window sums from integral images.
fn ncc_map(t: &Template, g: &Gray) -> (usize, usize, Vec<f32>) {
    let (nx, ny) = (g.w - t.w + 1, g.h - t.h + 1);
    let iw = g.w + 1;
    let mut sums = vec![0f64; iw * (g.h + 1)];
    let mut squares = vec![0f64; iw * (g.h + 1)];
    for y in 0..g.h {
        let (mut s, mut q) = (0f64, 0f64);
        for x in 0..g.w {
            let v = g.v[y * g.w + x] as f64;
            s += v;
            q += v * v;
            sums[(y + 1) * iw + x + 1] = sums[y * iw + x + 1] + s;
            squares[(y + 1) * iw + x + 1] = squares[y * iw + x + 1] + q;
        }
    }
    let window = |i: &[f64], x: usize, y: usize| {
        i[(y + t.h) * iw + x + t.w] - i[y * iw + x + t.w] - i[(y + t.h) * iw + x] + i[y * iw + x]
    };
    let n = (t.w * t.h) as f64;
    let mut map = vec![0f32; nx * ny];
    map.par_chunks_mut(nx).enumerate().for_each(|(y, out)| {
        let mut cross = vec![0f32; nx];
        for j in 0..t.h {
            let row = &g.v[(y + j) * g.w..][..g.w];
            let trow = &t.v[j * t.w..][..t.w];
            for (x, c) in cross.iter_mut().enumerate() {
                *c += row[x..x + t.w]
                    .iter()
                    .zip(trow)
                    .map(|(&a, &b)| a * b)
                    .sum::<f32>();
            }
        }
        for (x, o) in out.iter_mut().enumerate() {
            *o = pearson(
                cross[x] as f64,
                window(&sums, x, y),
                window(&squares, x, y),
                n,
                t.norm,
            ) as f32;
        }
    });
    (nx, ny, map)
}

/// The best positions of a map, each at least three cells from the others.
fn peaks(nx: usize, map: &[f32], n: usize) -> Vec<(usize, usize)> {
    let mut picked: Vec<(usize, usize)> = Vec::new();
    while picked.len() < n {
        let best = map
            .iter()
            .enumerate()
            .filter(|&(i, _)| {
                let (x, y) = (i % nx, i / nx);
                picked
                    .iter()
                    .all(|&(px, py)| x.abs_diff(px) > 2 || y.abs_diff(py) > 2)
            })
            .max_by(|a, b| a.1.total_cmp(b.1));
        match best {
            Some((i, _)) => picked.push((i % nx, i / nx)),
            None => break,
        }
    }
    picked
}

/// The result's luma reduced by each factor asked for, made once.
struct Pyramid<'a> {
    full: &'a Gray,
    levels: Vec<(usize, Gray)>,
}

impl Pyramid<'_> {
    fn level(&mut self, f: usize) -> &Gray {
        if f == 1 {
            return self.full;
        }
        let i = match self.levels.iter().position(|(k, _)| *k == f) {
            Some(i) => i,
            None => {
                self.levels.push((f, self.full.shrink(f)));
                self.levels.len() - 1
            }
        };
        &self.levels[i].1
    }
}

/// `rect` of `original` looked for in `result` at scale `s`.
fn find_at_scale(original: &Gray, result: &mut Pyramid, rect: Rect, s: f64) -> Found {
    let (tw, th) = (
        (rect.w as f64 * s).round() as usize,
        (rect.h as f64 * s).round() as usize,
    );
    let (rw, rh) = (result.full.w, result.full.h);
    if tw < MIN_SIDE || th < MIN_SIDE || tw > rw || th > rh {
        return Found::NOWHERE;
    }
    let scaled = original.resample(rect, tw, th);
    let full = Template::new(scaled.clone());
    if !full.textured() {
        return Found {
            ncc: 0.0,
            scale: s,
            at: None,
        };
    }
    let k = (tw.min(th) / SEARCH_SIDE).max(1);
    let coarse = Template::new(scaled.shrink(k));
    let (nx, _, map) = ncc_map(&coarse, result.level(k));
    let mut best = Found::NOWHERE;
    for (mut px, mut py) in peaks(nx, &map, CANDIDATES) {
        let mut pf = k;
        let mut score = map[py * nx + px] as f64;
        while pf > 1 {
            let f = pf / 2;
            let t = if f == 1 {
                None
            } else {
                Some(Template::new(scaled.shrink(f)))
            };
            let t = t.as_ref().unwrap_or(&full);
            let g = result.level(f);
            let r = pf.div_ceil(f) + 1;
            let (cx, cy) = (px * pf / f, py * pf / f);
            let (mx, my) = (g.w - t.w, g.h - t.h);
            score = f64::NEG_INFINITY;
            for y in cy.saturating_sub(r)..=(cy + r).min(my) {
                for x in cx.saturating_sub(r)..=(cx + r).min(mx) {
                    let v = ncc_at(t, g, x, y);
                    if v > score {
                        (score, px, py) = (v, x, y);
                    }
                }
            }
            pf = f;
        }
        if score > best.ncc {
            best = Found {
                ncc: score,
                scale: s,
                at: Some(Rect {
                    x: px,
                    y: py,
                    w: tw,
                    h: th,
                }),
            };
        }
    }
    best
}

/// The overall scales a result of `result` size may have shown a frame of
/// `original` size at: `path`'s first, the scale the reframe's path gives
/// the frame ([`crate::quality::path_scales`]: a zoom's window fitted to
/// the output's width is at neither fixed one), then height to height and
/// width to width; each once.
pub fn candidate_scales(
    original: (usize, usize),
    result: (usize, usize),
    path: Option<f64>,
) -> Vec<f64> {
    let by_height = result.1 as f64 / original.1 as f64;
    let by_width = result.0 as f64 / original.0 as f64;
    let mut scales: Vec<f64> = Vec::with_capacity(3);
    for s in path.into_iter().chain([by_height, by_width]) {
        if !scales.iter().any(|&c| (c - s).abs() < 1e-12) {
            scales.push(s);
        }
    }
    scales
}

/// Looks for each box of `original` in `result` (the frame of the same
/// index) at each candidate scale ([`candidate_scales`], `path_scale`
/// first), and gives the best find of each; of equal correlations, the
/// earlier scale's.
pub fn find_subjects(
    original: &Plane<Rgba>,
    result: &Plane<Rgba>,
    rects: &[Rect],
    path_scale: Option<f64>,
) -> Vec<Found> {
    let o = Gray::from_rgba(original);
    let r = Gray::from_rgba(result);
    let mut pyramid = Pyramid {
        full: &r,
        levels: Vec::new(),
    };
    let scales = candidate_scales((o.w, o.h), (r.w, r.h), path_scale);
    rects
        .iter()
        .map(|&rect| {
            scales
                .iter()
                .map(|&s| find_at_scale(&o, &mut pyramid, rect, s))
                .fold(Found::NOWHERE, |a, b| if b.ncc > a.ncc { b } else { a })
        })
        .collect()
}

/// One box looked for at the fixed scales; see [`find_subjects`].
pub fn find_subject(original: &Plane<Rgba>, result: &Plane<Rgba>, rect: Rect) -> Found {
    find_subjects(original, result, &[rect], None)[0]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::Noise;
    use crate::quality::area_scale;

    /// Random texture at several scales (bilinear cells of 32 down to 2
    /// pixels, and a little pixel noise), each channel its own, so that no two
    /// places look alike, a squeeze or a shift decorrelates it, and halving
    /// the size keeps most of the pattern.
    fn textured(w: usize, h: usize, seed: u64) -> Plane<Rgba> {
        let mut noise = Noise::new(seed);
        let mut layers: Vec<(usize, usize, Vec<f32>, f32)> = Vec::new();
        for (cell, amp) in [(32usize, 1.0f32), (16, 0.7), (8, 0.5), (4, 0.35), (2, 0.25)] {
            let (gw, gh) = (w / cell + 2, h / cell + 2);
            let grid: Vec<f32> = (0..gw * gh * 3)
                .map(|_| noise.byte() as f32 / 255.0 - 0.5)
                .collect();
            layers.push((cell, gw, grid, amp));
        }
        Plane::from_fn(w, h, |x, y| {
            let mut px = [0u8, 0, 0, 255];
            for (c, out) in px[..3].iter_mut().enumerate() {
                let mut v = 0.15 * (noise.byte() as f32 / 255.0 - 0.5);
                for (cell, gw, grid, amp) in &layers {
                    let (fx, fy) = (x as f32 / *cell as f32, y as f32 / *cell as f32);
                    let (ix, iy) = (fx as usize, fy as usize);
                    let (tx, ty) = (fx - ix as f32, fy - iy as f32);
                    let g = |i: usize, j: usize| grid[((j * gw) + i) * 3 + c];
                    let top = g(ix, iy) * (1.0 - tx) + g(ix + 1, iy) * tx;
                    let bottom = g(ix, iy + 1) * (1.0 - tx) + g(ix + 1, iy + 1) * tx;
                    v += amp * (top * (1.0 - ty) + bottom * ty);
                }
                *out = (128.0 + 100.0 * v).round().clamp(0.0, 255.0) as u8;
            }
            px
        })
    }

    fn cut(f: &Plane<Rgba>, x: usize, y: usize, w: usize, h: usize) -> Plane<Rgba> {
        Plane::from_fn(w, h, |i, j| f.get(x + i, y + j))
    }

    const W: usize = 320;
    const H: usize = 180;
    const BOX: Rect = Rect {
        x: 120,
        y: 50,
        w: 60,
        h: 60,
    };

    #[test]
    fn a_crop_that_contains_the_box_keeps_it_where_it_was_put() {
        let f = textured(W, H, 1);
        let crop = cut(&f, 100, 0, 100, H);
        let found = find_subject(&f, &crop, BOX);
        assert!(found.kept(), "{found:?}");
        assert!(found.ncc > 0.999, "{found:?}");
        assert_eq!(found.scale, 1.0);
        assert_eq!(
            found.at,
            Some(Rect {
                x: 20,
                y: 50,
                w: 60,
                h: 60
            })
        );
    }

    #[test]
    fn a_crop_that_cuts_half_the_box_away_loses_it() {
        let f = textured(W, H, 2);
        // The box spans x 120..180; the crop starts at 150.
        let crop = cut(&f, 150, 0, 100, H);
        let found = find_subject(&f, &crop, BOX);
        assert!(!found.kept(), "{found:?}");
    }

    #[test]
    fn a_box_squeezed_to_60_percent_of_its_width_is_lost() {
        let f = textured(W, H, 3);
        // The whole frame squeezed: both candidate scales (1 by height, 0.6 by
        // width) see the box at the wrong aspect.
        let squeezed = area_scale(&f, W * 6 / 10, H);
        let found = find_subject(&f, &squeezed, BOX);
        assert!(!found.kept(), "whole frame: {found:?}");
        // Only the box squeezed, the rest left as it was.
        let small = area_scale(&cut(&f, BOX.x, BOX.y, BOX.w, BOX.h), 36, BOX.h);
        let local = Plane::from_fn(W - 24, H, |x, y| {
            if x < BOX.x {
                f.get(x, y)
            } else if x < BOX.x + 36 {
                if (BOX.y..BOX.y + BOX.h).contains(&y) {
                    small.get(x - BOX.x, y - BOX.y)
                } else {
                    f.get(BOX.x + (x - BOX.x) * 60 / 36, y)
                }
            } else {
                f.get(x + 24, y)
            }
        });
        let found = find_subject(&f, &local, BOX);
        assert!(!found.kept(), "the box alone: {found:?}");
        // The same frame with the box unsqueezed would have been found.
        assert!(find_subject(&f, &f, BOX).ncc > 0.999);
    }

    #[test]
    fn forty_columns_carved_out_of_the_box_lose_it() {
        let f = textured(W, H, 4);
        let wide = Rect {
            x: 100,
            y: 50,
            w: 120,
            h: 80,
        };
        // Columns 140..180 (inside the box) taken out of every row.
        let carved = Plane::from_fn(W - 40, H, |x, y| f.get(if x < 140 { x } else { x + 40 }, y));
        let found = find_subject(&f, &carved, wide);
        assert!(!found.kept(), "{found:?}");
        // Forty columns outside the box cost it nothing.
        let beside = Plane::from_fn(W - 40, H, |x, y| f.get(if x < 240 { x } else { x + 40 }, y));
        let found = find_subject(&f, &beside, wide);
        assert!(found.kept() && found.ncc > 0.999, "{found:?}");
    }

    #[test]
    fn a_frame_letterboxed_at_half_size_keeps_its_boxes_at_scale_one_half() {
        let f = textured(W, H, 5);
        let half = area_scale(&f, W / 2, H / 2);
        // 9:16 at half the width: the picture fits the width, bars above and
        // below.
        let (ow, oh, top) = (W / 2, 284, (284 - H / 2) / 2);
        let boxed = Plane::from_fn(ow, oh, |x, y| {
            if (top..top + H / 2).contains(&y) {
                half.get(x, y - top)
            } else {
                [0, 0, 0, 255]
            }
        });
        for rect in [
            BOX,
            Rect {
                x: 0,
                y: 0,
                w: 80,
                h: 50,
            },
            Rect {
                x: 231,
                y: 97,
                w: 71,
                h: 53,
            },
        ] {
            let found = find_subject(&f, &boxed, rect);
            assert!(found.kept(), "{rect:?}: {found:?}");
            assert_eq!(found.scale, 0.5, "{rect:?}");
            let at = found.at.unwrap();
            assert!(
                at.x.abs_diff(rect.x / 2) <= 1 && at.y.abs_diff(top + rect.y / 2) <= 1,
                "{rect:?} found at {at:?}"
            );
        }
    }

    #[test]
    fn a_box_too_large_at_full_scale_and_too_small_at_the_other_is_lost() {
        let f = textured(W, H, 6);
        // 30 wide: the 60-pixel box fits at scale 1 (by height) no more
        // than at 30/320 (by width), where it would be 6 pixels a side.
        let narrow = cut(&f, BOX.x, 0, 30, H);
        let found = find_subject(&f, &narrow, BOX);
        assert_eq!(found, Found::NOWHERE);
        assert!(!found.kept());
    }

    #[test]
    fn the_path_scale_is_tried_first_and_each_scale_once() {
        let by_height = 284.0 / 180.0;
        assert_eq!(
            candidate_scales((320, 180), (120, 284), Some(0.6)),
            [0.6, by_height, 0.375]
        );
        assert_eq!(
            candidate_scales((320, 180), (120, 284), None),
            [by_height, 0.375]
        );
        assert_eq!(candidate_scales((320, 180), (160, 90), Some(0.5)), [0.5]);
    }

    #[test]
    fn a_window_fitted_to_the_width_at_0_6_is_found_only_at_the_paths_scale() {
        // A zoom: the window x 60..260 of 320x180 at 0.6 (120x108) in a
        // 120x284 frame; the fixed scales are 1.58 and 0.375.
        let f = textured(W, H, 7);
        let picture = area_scale(&cut(&f, 60, 0, 200, 180), 120, 108);
        let zoom = Plane::from_fn(120, 284, |x, y| {
            if (88..196).contains(&y) {
                picture.get(x, y - 88)
            } else {
                [0, 0, 0, 255]
            }
        });
        let found = find_subjects(&f, &zoom, &[BOX], Some(0.6))[0];
        assert!(found.kept() && found.scale == 0.6, "{found:?}");
        let found = find_subjects(&f, &zoom, &[BOX], None)[0];
        assert!(!found.kept(), "{found:?}");
    }

    #[test]
    fn a_bad_box_file_is_refused_naming_the_file_the_box_and_the_field() {
        let dir = std::env::temp_dir().join(format!("seamstream-boxes-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("marked.json");
        let good = r#"{"size": [320, 180], "boxes": [{"frame": 0, "box": [0, 0, 40, 40]},
                                                    {"frame": 3, "label": "cat", "box": [8, 8, 40, 40]}]}"#;
        std::fs::write(&file, good).unwrap();
        let s = Subjects::read(&file).unwrap();
        assert_eq!(
            (s.boxes[0].label.as_str(), s.boxes[1].frame),
            ("subject", 3)
        );
        for (from, to, says) in [
            (
                r#""frame": 3"#,
                r#""frame": "3""#,
                "boxes[1].frame: invalid type",
            ),
            (
                r#""frame": 3"#,
                r#""frame": -3"#,
                "boxes[1].frame: expected a whole number",
            ),
            (
                r#""frame": 3"#,
                r#""frame": 99999999999"#,
                "boxes[1].frame: 99999999999 is past the largest number",
            ),
            (
                r#""label": "cat""#,
                r#""label": 7"#,
                "boxes[1].label: invalid type",
            ),
            (
                r#", "box": [8, 8, 40, 40]"#,
                "",
                "boxes[1]: missing field `box`",
            ),
            (
                "[8, 8, 40, 40]",
                "[300, 8, 40, 40]",
                "boxes[1].box: [300, 8, 40, 40] is not a box",
            ),
            ("[8, 8, 40, 40]", "{}", "boxes[1].box: invalid type: map"),
            (
                r#"{"frame": 0, "box": [0, 0, 40, 40]}"#,
                "5",
                "boxes[0]: invalid type: integer `5`, expected a box",
            ),
            ("\"boxes\"", "\"box\"", "missing field `boxes`"),
        ] {
            let bad = good.replacen(from, to, 1);
            assert_ne!(bad, good, "{from}");
            std::fs::write(&file, &bad).unwrap();
            let e = Subjects::read(&file).unwrap_err().to_string();
            assert!(e.contains("marked.json") && e.contains(says), "{to}: {e}");
        }
        // The boxes alone: read by position, they were a bad `clip`.
        std::fs::write(&file, r#"[{"frame": 0, "box": [0, 0, 40, 40]}]"#).unwrap();
        let e = Subjects::read(&file).unwrap_err().to_string();
        assert!(
            e.contains(r#"{"size": [width, height], "boxes": [...]}"#),
            "{e}"
        );
    }
}
