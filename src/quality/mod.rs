//! How good a retargeted clip is next to its original: the two figures of
//! docs/DESIGN.md §4, each as a ratio to plain scaling of the same frames.
//!
//! - **Bidirectional similarity** (Simakov et al. 2008). Completeness: for
//!   each 5×5 patch of the original, in Lab (on OpenCV's 8-bit scale), the distance to the nearest
//!   patch of the result (the root mean square of the 75 differences); coherence: the same from each
//!   patch of the result to the original. A patch is only compared with
//!   patches a monotonic resize could have moved it to: rows within ±2 of
//!   the rows a monotonic removal (or insertion) of the height difference
//!   allows, columns within what one of the width difference allows. The
//!   score is the sum of the two means; lower is better. A crop keeps
//!   coherence perfect and loses completeness, scaling distorts every
//!   patch, tears raise coherence.
//! - **Flicker**: the mean absolute change (RGB levels) between consecutive
//!   frames.
//!
//! Both are reported for the result and for the original scaled to the
//! result's size by area interpolation, and as result ÷ scaled: a flicker
//! ratio of 1.0 means the retargeting adds no motion of its own, and a
//! similarity ratio below 1.0 that it keeps more of the picture than
//! scaling would. Frames enter as RGBA ([`Meter::push`]), both clips from
//! the same decoder ([`crate::gst::decode`]), so that a difference in
//! colour conversion does not count.
//!
//! For reframing (a moving window to another aspect), the references are
//! fixed crops ([`crop_window`]): the similarity is also given ÷ the best of
//! [`Meter::with_crops`] fixed windows, and the flicker ÷ the centre
//! crop's. Marked subjects ([`Meter::with_subjects`], [`find_subjects`]) count
//! as kept when they appear unsqueezed and whole in the result, beside the
//! same for scaling and the centre crop; and the window's path, as the op
//! writes it and read by the op's own reader
//! ([`crate::ops::reframe::path::PathFile`]), has its smoothness
//! ([`path_smoothness`]) and gives each result frame's own scale, which
//! the subject search tries first ([`path_scales`], [`Meter::with_path_scales`]).

mod crops;
mod path;
pub mod report;
mod subjects;

pub use crops::{centre_crop, crop_frame, crop_positions, crop_window};
pub use path::{Smoothness, path_scales, path_smoothness};
pub use subjects::{
    CANDIDATES, Found, KEEP_NCC, MIN_SIDE, Rect, SEARCH_SIDE, Subject, Subjects, candidate_scales,
    find_subject, find_subjects,
};

use rayon::prelude::*;

use crate::frame::{Plane, Rgba};

/// The side of a compared patch.
pub const PATCH: usize = 5;
/// Rows a patch may move beyond what the height change allows.
pub const ROW_SLACK: isize = 2;

/// A frame in CIE L*a*b* (D65) on OpenCV's 8-bit scale (L from 0 to 255),
/// one plane a channel, row-major.
#[derive(Clone, Debug)]
pub struct Lab {
    pub width: usize,
    pub height: usize,
    pub l: Vec<f32>,
    pub a: Vec<f32>,
    pub b: Vec<f32>,
}

fn srgb_to_linear() -> [f32; 256] {
    let mut t = [0f32; 256];
    for (i, v) in t.iter_mut().enumerate() {
        let c = i as f64 / 255.0;
        *v = if c <= 0.04045 {
            c / 12.92
        } else {
            ((c + 0.055) / 1.055).powf(2.4)
        } as f32;
    }
    t
}

#[inline]
fn lab_f(t: f32) -> f32 {
    const EPS: f32 = 216.0 / 24389.0;
    const KAPPA: f32 = 24389.0 / 27.0;
    if t > EPS {
        t.cbrt()
    } else {
        (KAPPA * t + 16.0) / 116.0
    }
}

impl Lab {
    /// Converts sRGB pixels (alpha ignored).
    pub fn from_rgba(p: &Plane<Rgba>) -> Self {
        let lin = srgb_to_linear();
        let (w, h) = (p.width(), p.height());
        let mut l = vec![0f32; w * h];
        let mut a = vec![0f32; w * h];
        let mut b = vec![0f32; w * h];
        l.par_chunks_mut(w.max(1))
            .zip(a.par_chunks_mut(w.max(1)))
            .zip(b.par_chunks_mut(w.max(1)))
            .enumerate()
            .for_each(|(y, ((l, a), b))| {
                for (x, px) in p.row(y).iter().enumerate() {
                    let (r, g, bl) = (
                        lin[px[0] as usize],
                        lin[px[1] as usize],
                        lin[px[2] as usize],
                    );
                    // sRGB primaries to XYZ, divided by the D65 white.
                    let fx = lab_f((0.4124564 * r + 0.3575761 * g + 0.1804375 * bl) / 0.95047);
                    let fy = lab_f(0.2126729 * r + 0.7151522 * g + 0.0721750 * bl);
                    let fz = lab_f((0.0193339 * r + 0.119192 * g + 0.9503041 * bl) / 1.08883);
                    // 8-bit Lab as OpenCV gives it (L·255/100, a + 128,
                    // b + 128, rounded; the offsets cancel in differences),
                    // the usual convention of similarity scripts.
                    l[x] = ((116.0 * fy - 16.0) * 2.55).round().clamp(0.0, 255.0);
                    a[x] = (500.0 * (fx - fy)).round().clamp(-128.0, 127.0);
                    b[x] = (200.0 * (fy - fz)).round().clamp(-128.0, 127.0);
                }
            });
        Self {
            width: w,
            height: h,
            l,
            a,
            b,
        }
    }
}

/// The two halves of the bidirectional similarity: the mean distance of
/// each patch to its nearest allowed match, as the root mean square of the
/// Lab differences of its 75 values.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Similarity {
    pub completeness: f64,
    pub coherence: f64,
}

impl Similarity {
    pub fn total(&self) -> f64 {
        self.completeness + self.coherence
    }
}

/// A patch distance from its sum of squared differences.
fn rms(ssd: f32) -> f64 {
    (ssd as f64 / (3 * PATCH * PATCH) as f64).sqrt()
}

/// Rows of source patches one task handles.
const BAND: usize = 16;

/// The least distances of one band of source patch rows: the source's own
/// rows, and the rows of target patches it reached (from `t_row0`).
struct BandBest {
    s_row0: usize,
    s_best: Vec<f32>,
    t_row0: usize,
    t_best: Vec<f32>,
}

/// The offsets (target − source) a monotonic resize from `from` to `to`
/// allows, widened by `slack` on both sides.
fn offsets(from: usize, to: usize, slack: isize) -> std::ops::RangeInclusive<isize> {
    let d = to as isize - from as isize;
    d.min(0) - slack..=d.max(0) + slack
}

/// The bidirectional similarity of `t` (the result) to `s` (the original).
/// Frames smaller than a patch have none; they score zero.
pub fn similarity(s: &Lab, t: &Lab) -> Similarity {
    let (sw, sh, tw, th) = (s.width, s.height, t.width, t.height);
    if sw < PATCH || sh < PATCH || tw < PATCH || th < PATCH {
        return Similarity::default();
    }
    // Patch positions (top-left corners).
    let (snx, sny, tnx, tny) = (
        sw - PATCH + 1,
        sh - PATCH + 1,
        tw - PATCH + 1,
        th - PATCH + 1,
    );
    let dxs = offsets(sw, tw, 0);
    let dys = offsets(sh, th, ROW_SLACK);
    let bands: Vec<BandBest> = (0..sny.div_ceil(BAND))
        .into_par_iter()
        .map(|band| {
            let py0 = band * BAND;
            let py1 = (py0 + BAND).min(sny);
            let t_row0 = (py0 as isize + dys.start()).max(0) as usize;
            let t_row1 = ((py1 as isize - 1 + dys.end()).min(tny as isize - 1) + 1).max(0) as usize;
            let mut out = BandBest {
                s_row0: py0,
                s_best: vec![f32::INFINITY; (py1 - py0) * snx],
                t_row0,
                t_best: vec![f32::INFINITY; t_row1.saturating_sub(t_row0) * tnx],
            };
            let mut e = vec![0f32; (BAND + PATCH - 1) * sw];
            let mut hs = vec![0f32; (BAND + PATCH - 1) * snx];
            for dy in dys.clone() {
                // Source patch rows whose target row exists.
                let ya = py0.max((-dy).max(0) as usize);
                let yb = py1.min((tny as isize - dy).max(0) as usize);
                if ya >= yb {
                    continue;
                }
                let rows = yb - ya + PATCH - 1;
                for dx in dxs.clone() {
                    let xa = (-dx).max(0) as usize;
                    let xb = snx.min((tnx as isize - dx).max(0) as usize);
                    if xa >= xb {
                        continue;
                    }
                    let n = xb - xa + PATCH - 1;
                    // Per-pixel squared difference, then sums of 5 across.
                    for r in 0..rows {
                        let sy = ya + r;
                        let ty = (sy as isize + dy) as usize;
                        let so = sy * sw + xa;
                        let to = ty * tw + (xa as isize + dx) as usize;
                        let (sl, sa, sb) = (&s.l[so..so + n], &s.a[so..so + n], &s.b[so..so + n]);
                        let (tl, ta, tb) = (&t.l[to..to + n], &t.a[to..to + n], &t.b[to..to + n]);
                        let er = &mut e[r * sw..r * sw + n];
                        for i in 0..n {
                            let d0 = sl[i] - tl[i];
                            let d1 = sa[i] - ta[i];
                            let d2 = sb[i] - tb[i];
                            er[i] = d0 * d0 + d1 * d1 + d2 * d2;
                        }
                        let m = n - PATCH + 1;
                        let hr = &mut hs[r * snx..r * snx + m];
                        let er = &e[r * sw..r * sw + n];
                        for i in 0..m {
                            hr[i] = er[i] + er[i + 1] + er[i + 2] + er[i + 3] + er[i + 4];
                        }
                    }
                    let m = xb - xa;
                    for py in ya..yb {
                        let r = py - ya;
                        let row = |k: usize| &hs[(r + k) * snx..(r + k) * snx + m];
                        let (h0, h1, h2, h3, h4) = (row(0), row(1), row(2), row(3), row(4));
                        let so = (py - py0) * snx + xa;
                        let qy = (py as isize + dy) as usize - t_row0;
                        let to = qy * tnx + (xa as isize + dx) as usize;
                        let (sb, tb) = (&mut out.s_best[so..so + m], &mut out.t_best[to..to + m]);
                        for i in 0..m {
                            let d = h0[i] + h1[i] + h2[i] + h3[i] + h4[i];
                            sb[i] = sb[i].min(d);
                            tb[i] = tb[i].min(d);
                        }
                    }
                }
            }
            out
        })
        .collect();
    let mut t_best = vec![f32::INFINITY; tnx * tny];
    let mut s_sum = 0f64;
    for band in &bands {
        s_sum += band.s_best.iter().map(|&v| rms(v)).sum::<f64>();
        let _ = band.s_row0;
        let o = band.t_row0 * tnx;
        for (t, &b) in t_best[o..o + band.t_best.len()]
            .iter_mut()
            .zip(&band.t_best)
        {
            *t = t.min(b);
        }
    }
    // Every target patch has a match when the offsets allow one; a target
    // row beyond every source row's reach (a large enlargement) has none
    // and is left out.
    let reached: Vec<f64> = t_best
        .iter()
        .filter(|v| v.is_finite())
        .map(|&v| rms(v))
        .collect();
    Similarity {
        completeness: s_sum / (snx * sny) as f64,
        coherence: reached.iter().sum::<f64>() / reached.len().max(1) as f64,
    }
}

/// Area-interpolation weights: for each of the `to` outputs, the inputs
/// (first index and weights) that cover it.
fn area_weights(from: usize, to: usize) -> Vec<(usize, Vec<f32>)> {
    let scale = from as f64 / to as f64;
    (0..to)
        .map(|o| {
            let (a, b) = (o as f64 * scale, (o + 1) as f64 * scale);
            let first = a.floor() as usize;
            let last = ((b.ceil() as usize).max(first + 1)).min(from);
            let w: Vec<f32> = (first..last)
                .map(|i| {
                    let lo = a.max(i as f64);
                    let hi = b.min((i + 1) as f64);
                    ((hi - lo).max(0.0) / scale) as f32
                })
                .collect();
            (first, w)
        })
        .collect()
}

/// `src` resized to `w`×`h` by area interpolation (each output pixel the
/// mean of the input area it covers; for enlarging, the covering pixel).
pub fn area_scale(src: &Plane<Rgba>, w: usize, h: usize) -> Plane<Rgba> {
    let (sw, sh) = (src.width(), src.height());
    let xs = area_weights(sw, w);
    let ys = area_weights(sh, h);
    // Rows first, in floats.
    let mut rows = vec![[0f32; 4]; w * sh];
    rows.par_chunks_mut(w.max(1))
        .enumerate()
        .for_each(|(y, out)| {
            let row = src.row(y);
            for (o, (first, wts)) in out.iter_mut().zip(&xs) {
                let mut acc = [0f32; 4];
                for (k, &wt) in wts.iter().enumerate() {
                    let p = row[first + k];
                    for c in 0..4 {
                        acc[c] += wt * p[c] as f32;
                    }
                }
                *o = acc;
            }
        });
    let mut out = Plane::new(w, h, [0u8; 4]);
    out.par_rows_mut().for_each(|(y, orow)| {
        let (first, wts) = &ys[y];
        for (x, o) in orow.iter_mut().enumerate() {
            let mut acc = [0f32; 4];
            for (k, &wt) in wts.iter().enumerate() {
                let p = rows[(first + k) * w + x];
                for c in 0..4 {
                    acc[c] += wt * p[c];
                }
            }
            *o = acc.map(|v| v.round().clamp(0.0, 255.0) as u8);
        }
    });
    out
}

/// The mean absolute difference of the colour channels of two frames of
/// one size.
pub fn mean_abs_diff(a: &Plane<Rgba>, b: &Plane<Rgba>) -> f64 {
    let sum: u64 = (0..a.height())
        .into_par_iter()
        .map(|y| {
            a.row(y)
                .iter()
                .zip(b.row(y))
                .map(|(p, q)| (0..3).map(|c| p[c].abs_diff(q[c]) as u64).sum::<u64>())
                .sum::<u64>()
        })
        .sum();
    sum as f64 / (3 * a.width() * a.height()).max(1) as f64
}

/// One fixed crop's similarity, the mean over the measured frames.
#[derive(Clone, Debug, PartialEq)]
pub struct CropFigure {
    /// Its place in the free range (0 = left or top, 1 = right or bottom).
    pub position: f64,
    /// Its window in pixels of the original.
    pub window: Rect,
    pub similarity: Similarity,
}

/// Boxes kept of those marked: in the result, in plain scaling and in the
/// centre crop.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct KeptCount {
    /// The label, or empty for all boxes.
    pub label: String,
    pub total: usize,
    pub result: usize,
    pub scaled: usize,
    pub centre: usize,
}

impl KeptCount {
    /// The kept fractions: result, scaled, centre crop (0 of 0 is 0).
    pub fn fractions(&self) -> (f64, f64, f64) {
        let n = self.total.max(1) as f64;
        (
            self.result as f64 / n,
            self.scaled as f64 / n,
            self.centre as f64 / n,
        )
    }

    fn add(&mut self, finds: &SubjectFinds) {
        self.total += 1;
        self.result += finds.result.kept() as usize;
        self.scaled += finds.scaled.kept() as usize;
        self.centre += finds.centre.kept() as usize;
    }
}

/// One marked box, looked for in the three.
#[derive(Clone, Debug, PartialEq)]
pub struct SubjectFinds {
    pub subject: Subject,
    pub result: Found,
    pub scaled: Found,
    pub centre: Found,
}

/// The subjects' figures.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct SubjectReport {
    /// Every box of a measured frame.
    pub all: KeptCount,
    /// By label, in the order labels first appear in the file.
    pub labels: Vec<KeptCount>,
    pub boxes: Vec<SubjectFinds>,
    /// Boxes on frames the clip (or `--frames`) did not reach.
    pub unseen: usize,
}

/// The figures of one clip.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Report {
    pub frames: usize,
    /// Frames the similarity was measured on.
    pub similarity_frames: usize,
    pub original: (usize, usize),
    pub size: (usize, usize),
    pub result: Similarity,
    pub scaled: Similarity,
    /// Mean absolute change between consecutive frames.
    pub flicker_result: f64,
    pub flicker_scaled: f64,
    /// The same for the centre crop ([`centre_crop`]).
    pub flicker_centre: f64,
    /// The fixed crops' similarities, by position; empty unless asked for
    /// ([`Meter::with_crops`]).
    pub crops: Vec<CropFigure>,
    /// With boxes ([`Meter::with_subjects`]).
    pub subjects: Option<SubjectReport>,
}

/// `a ÷ b`, where a reference `b` of 0 (a still clip's flicker, a crop
/// that misses nothing) gives 1 if `a` is 0 too and infinity otherwise,
/// not a number that only overflows.
fn ratio(a: f64, b: f64) -> f64 {
    match (a > 0.0, b > 0.0) {
        (_, true) => a / b,
        (false, false) => 1.0,
        (true, false) => f64::INFINITY,
    }
}

impl Report {
    /// Result ÷ scaling for the similarity (lower is better, 1 = as scaling).
    pub fn similarity_ratio(&self) -> f64 {
        ratio(self.result.total(), self.scaled.total())
    }

    /// Result ÷ scaling for the flicker (1 = no motion of its own).
    pub fn flicker_ratio(&self) -> f64 {
        ratio(self.flicker_result, self.flicker_scaled)
    }

    /// Result ÷ the centre crop for the flicker (1 = moves no more than a
    /// fixed window).
    pub fn flicker_centre_ratio(&self) -> f64 {
        ratio(self.flicker_result, self.flicker_centre)
    }

    /// The fixed crop of the lowest mean similarity (the first of equals).
    pub fn best_crop(&self) -> Option<&CropFigure> {
        self.crops.iter().reduce(|best, c| {
            if c.similarity.total() < best.similarity.total() {
                c
            } else {
                best
            }
        })
    }

    /// Result ÷ the best fixed crop for the similarity (below 1: better
    /// than any one fixed window). Where the best crop misses nothing
    /// (similarity 0), 1 if the result misses nothing either, else infinite.
    pub fn best_crop_ratio(&self) -> Option<f64> {
        self.best_crop()
            .map(|c| ratio(self.result.total(), c.similarity.total()))
    }
}

/// The last frame of each clip the flicker compares with.
#[derive(Debug)]
struct Last {
    result: Plane<Rgba>,
    scaled: Plane<Rgba>,
    centre: Plane<Rgba>,
}

/// Takes the frames of an original and its result in order and gathers the
/// figures.
#[derive(Debug)]
pub struct Meter {
    /// The similarity is measured on every `every`-th frame (it costs about
    /// a second a 720p frame on two cores; flicker is measured on all).
    every: usize,
    frame: usize,
    last: Option<Last>,
    flicker: (f64, f64, f64),
    sim: (Similarity, Similarity),
    /// The fixed crops' positions and their similarity sums.
    crops: Vec<(f64, Similarity)>,
    subjects: Option<Subjects>,
    /// The result's scale of each frame index, from the reframe's path
    /// ([`Meter::with_path_scales`]); empty without one.
    path_scales: Vec<f64>,
    finds: Vec<SubjectFinds>,
    report: Report,
    /// Each measured frame: (index, the result's similarity, scaling's).
    pub frames: Vec<(usize, Similarity, Similarity)>,
}

impl Meter {
    pub fn new(every: usize) -> Self {
        Self {
            every: every.max(1),
            frame: 0,
            last: None,
            flicker: (0.0, 0.0, 0.0),
            sim: Default::default(),
            crops: Vec::new(),
            subjects: None,
            path_scales: Vec::new(),
            finds: Vec::new(),
            report: Report::default(),
            frames: Vec::new(),
        }
    }

    /// Also measures the similarity of `n` fixed crops ([`crop_positions`])
    /// on the measured frames; 0 measures none. Each costs as much as the
    /// result's similarity. Where the original and result have one aspect
    /// there is one window, measured once.
    pub fn with_crops(mut self, n: usize) -> Self {
        self.crops = crop_positions(n)
            .into_iter()
            .map(|p| (p, Similarity::default()))
            .collect();
        self
    }

    /// Also looks for these boxes of the original in the result, in plain
    /// scaling and in the centre crop. Their `size` must be the original's.
    pub fn with_subjects(mut self, subjects: Subjects) -> Self {
        self.subjects = Some(subjects);
        self
    }

    /// Also tries, first, the scale the reframe's path gives each result
    /// frame when looking for the boxes in it: `scales[i]` for frame i, the
    /// last for frames past the end ([`path_scales`], as the op replays a
    /// path). The path must be of these clips' sizes; the caller checks.
    pub fn with_path_scales(mut self, scales: Vec<f64>) -> Self {
        self.path_scales = scales;
        self
    }

    /// One frame of each clip. The result's size may not change.
    pub fn push(&mut self, original: &Plane<Rgba>, result: &Plane<Rgba>) -> crate::Result<()> {
        let size = (result.width(), result.height());
        let in_size = (original.width(), original.height());
        if self.frame == 0 {
            self.report.original = in_size;
            self.report.size = size;
            if let Some(s) = &self.subjects
                && s.size != in_size
            {
                return Err(crate::Error::BadFrame(format!(
                    "the boxes are marked on a {}x{} frame (their `size`), but the original is {}x{}",
                    s.size.0, s.size.1, in_size.0, in_size.1
                )));
            }
            if self.crops.len() > 1
                && crop_window(in_size, size, 0.0) == crop_window(in_size, size, 1.0)
            {
                // One aspect: every position is the same window.
                self.crops = vec![(0.5, Similarity::default())];
            }
        } else if size != self.report.size {
            return Err(crate::Error::BadFrame(format!(
                "the result changed size at frame {} from {}x{} to {}x{}",
                self.frame, self.report.size.0, self.report.size.1, size.0, size.1
            )));
        }
        let scaled = area_scale(original, size.0, size.1);
        let centre = centre_crop(original, size.0, size.1);
        if let Some(last) = &self.last {
            self.flicker.0 += mean_abs_diff(result, &last.result);
            self.flicker.1 += mean_abs_diff(&scaled, &last.scaled);
            self.flicker.2 += mean_abs_diff(&centre, &last.centre);
        }
        if self.frame.is_multiple_of(self.every) {
            let s = Lab::from_rgba(original);
            let r = similarity(&s, &Lab::from_rgba(&result.to_packed()));
            let c = similarity(&s, &Lab::from_rgba(&scaled));
            self.frames.push((self.frame, r, c));
            for (sum, v) in [(&mut self.sim.0, r), (&mut self.sim.1, c)] {
                sum.completeness += v.completeness;
                sum.coherence += v.coherence;
            }
            for (position, sum) in &mut self.crops {
                let window = crop_window(in_size, size, *position);
                let v = similarity(
                    &s,
                    &Lab::from_rgba(&crop_frame(original, window, size.0, size.1)),
                );
                sum.completeness += v.completeness;
                sum.coherence += v.coherence;
            }
            self.report.similarity_frames += 1;
        }
        if let Some(subjects) = &self.subjects {
            let here: Vec<&Subject> = subjects
                .boxes
                .iter()
                .filter(|b| b.frame == self.frame)
                .collect();
            if !here.is_empty() {
                let rects: Vec<Rect> = here.iter().map(|b| b.rect).collect();
                let path_scale = self
                    .path_scales
                    .get(self.frame)
                    .or(self.path_scales.last())
                    .copied();
                let found = [
                    find_subjects(original, result, &rects, path_scale),
                    find_subjects(original, &scaled, &rects, None),
                    find_subjects(original, &centre, &rects, None),
                ];
                for (i, b) in here.into_iter().enumerate() {
                    self.finds.push(SubjectFinds {
                        subject: b.clone(),
                        result: found[0][i],
                        scaled: found[1][i],
                        centre: found[2][i],
                    });
                }
            }
        }
        self.last = Some(Last {
            result: result.to_packed(),
            scaled,
            centre,
        });
        self.frame += 1;
        Ok(())
    }

    /// The figures so far.
    pub fn report(&self) -> Report {
        let mut r = self.report.clone();
        r.frames = self.frame;
        let n = r.similarity_frames.max(1) as f64;
        let mean = |s: Similarity| Similarity {
            completeness: s.completeness / n,
            coherence: s.coherence / n,
        };
        r.result = mean(self.sim.0);
        r.scaled = mean(self.sim.1);
        let pairs = self.frame.saturating_sub(1).max(1) as f64;
        r.flicker_result = self.flicker.0 / pairs;
        r.flicker_scaled = self.flicker.1 / pairs;
        r.flicker_centre = self.flicker.2 / pairs;
        if r.similarity_frames > 0 {
            r.crops = self
                .crops
                .iter()
                .map(|&(position, sum)| CropFigure {
                    position,
                    window: crop_window(r.original, r.size, position),
                    similarity: mean(sum),
                })
                .collect();
        }
        r.subjects = self.subjects.as_ref().map(|subjects| {
            let mut s = SubjectReport {
                boxes: self.finds.clone(),
                unseen: subjects.boxes.len() - self.finds.len(),
                ..Default::default()
            };
            for b in &subjects.boxes {
                if !s.labels.iter().any(|k| k.label == b.label) {
                    s.labels.push(KeptCount {
                        label: b.label.clone(),
                        ..Default::default()
                    });
                }
            }
            for f in &self.finds {
                s.all.add(f);
                if let Some(k) = s.labels.iter_mut().find(|k| k.label == f.subject.label) {
                    k.add(f);
                }
            }
            s
        });
        r
    }
}

/// Measures `chain` (built for a video, [`crate::ops::params::Media::Video`],
/// for retargeting's video default) on the frames of `original`, on `gpu` if given (RGBA frames, the stage's
/// chain) or on the CPU, with no encoder between: at most `limit` frames,
/// the similarity on every `every`-th. `progress` hears of each frame.
pub fn measure_chain(
    original: &str,
    chain: crate::ops::Chain,
    gpu: Option<&crate::cuda::Gpu>,
    every: usize,
    limit: Option<usize>,
    progress: impl FnMut(usize),
) -> crate::Result<(Meter, std::time::Duration)> {
    measure_chain_with(original, chain, gpu, Meter::new(every), limit, progress)
}

/// [`measure_chain`] into a meter set up by the caller (fixed crops,
/// subjects: [`Meter::with_crops`], [`Meter::with_subjects`]).
pub fn measure_chain_with(
    original: &str,
    mut chain: crate::ops::Chain,
    gpu: Option<&crate::cuda::Gpu>,
    mut meter: Meter,
    limit: Option<usize>,
    mut progress: impl FnMut(usize),
) -> crate::Result<(Meter, std::time::Duration)> {
    use crate::frame::Frame;
    let mut reader = crate::gst::decode::FrameReader::open(original)?;
    #[cfg(feature = "cuda")]
    let mut gpu_chain: Option<crate::cuda::stage::GpuChain> = None;
    let mut spent = std::time::Duration::ZERO;
    // A chain that holds frames back to look ahead (a reframe planned live:
    // a still picture, a stream) gives the k-th frame's result `delay`
    // frames later, and placeholders first ([`crate::ops::Op::delay`]):
    // each result is measured against its own original, held here until
    // it comes, and the last frame is fed again at the end to get the held
    // ones out, as `run` does.
    let mut delay = None;
    let mut originals = std::collections::VecDeque::new();
    // Frames read, calls made, results measured.
    let (mut fed, mut calls, mut n) = (0, 0, 0);
    loop {
        let frame = if limit.is_none_or(|l| fed < l)
            && let Some(frame) = reader.next_frame()?
        {
            fed += 1;
            progress(fed);
            originals.push_back(frame.clone());
            frame
        } else if n < fed
            && let Some(last) = originals.back()
        {
            last.clone()
        } else {
            break;
        };
        let delay = match delay {
            Some(d) => d,
            None => {
                if let Some(fps) = reader.fps() {
                    chain.set_rate(fps)?;
                }
                *delay.insert(chain.delay())
            }
        };
        let input = Frame::Rgba(frame);
        let start = std::time::Instant::now();
        let out = match gpu {
            None => chain.apply(input)?,
            #[cfg(not(feature = "cuda"))]
            Some(gpu) => match *gpu {},
            #[cfg(feature = "cuda")]
            Some(gpu) => {
                let g = match &mut gpu_chain {
                    Some(g) => g,
                    None => gpu_chain.insert(crate::cuda::stage::GpuChain::new(
                        gpu,
                        &chain,
                        input.width(),
                        input.height(),
                        crate::frame::DevFormat::Rgba,
                    )?),
                };
                g.apply(gpu, &input)?
            }
        };
        spent += start.elapsed();
        calls += 1;
        if calls <= delay {
            // A placeholder, while the look-ahead fills.
            continue;
        }
        let Some(original) = originals.pop_front() else {
            break;
        };
        meter.push(&original, &out.to_rgba())?;
        n += 1;
    }
    if n == 0 {
        return Err(crate::Error::Read {
            path: original.into(),
            reason: "it gave no frame".into(),
        });
    }
    Ok((meter, spent))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise_rgba(w: usize, h: usize, seed: u32) -> Plane<Rgba> {
        let mut n = crate::noise::Noise::new(u64::from(seed));
        Plane::from_fn(w, h, |_, _| [n.byte(), n.byte(), n.byte(), 255])
    }

    /// The similarity by brute force: every pair of patches the offsets
    /// allow, compared directly.
    fn similarity_brute(s: &Lab, t: &Lab) -> Similarity {
        let (snx, sny) = (s.width - 4, s.height - 4);
        let (tnx, tny) = (t.width - 4, t.height - 4);
        let dxs = offsets(s.width, t.width, 0);
        let dys = offsets(s.height, t.height, ROW_SLACK);
        let dist = |px: usize, py: usize, qx: usize, qy: usize| {
            let mut d = 0f64;
            for j in 0..5 {
                for i in 0..5 {
                    let (si, ti) = ((py + j) * s.width + px + i, (qy + j) * t.width + qx + i);
                    for (a, b) in [(&s.l, &t.l), (&s.a, &t.a), (&s.b, &t.b)] {
                        d += ((a[si] - b[ti]) as f64).powi(2);
                    }
                }
            }
            d
        };
        let mut s_best = vec![f64::INFINITY; snx * sny];
        let mut t_best = vec![f64::INFINITY; tnx * tny];
        for py in 0..sny {
            for px in 0..snx {
                for dy in dys.clone() {
                    for dx in dxs.clone() {
                        let (qx, qy) = (px as isize + dx, py as isize + dy);
                        if qx < 0 || qy < 0 || qx >= tnx as isize || qy >= tny as isize {
                            continue;
                        }
                        let d = dist(px, py, qx as usize, qy as usize);
                        s_best[py * snx + px] = s_best[py * snx + px].min(d);
                        let t = &mut t_best[qy as usize * tnx + qx as usize];
                        *t = t.min(d);
                    }
                }
            }
        }
        let mean = |v: &[f64]| v.iter().map(|d| (d / 75.0).sqrt()).sum::<f64>() / v.len() as f64;
        Similarity {
            completeness: mean(&s_best),
            coherence: mean(&t_best),
        }
    }

    #[test]
    fn similarity_equals_the_brute_force_search() {
        for (sw, sh, tw, th) in [(40, 37, 30, 37), (23, 9, 17, 7), (12, 8, 15, 8)] {
            let s = Lab::from_rgba(&noise_rgba(sw, sh, 3));
            let t = Lab::from_rgba(&noise_rgba(tw, th, 4));
            let fast = similarity(&s, &t);
            let slow = similarity_brute(&s, &t);
            for (a, b) in [
                (fast.completeness, slow.completeness),
                (fast.coherence, slow.coherence),
            ] {
                assert!(
                    (a - b).abs() <= 1e-4 * b,
                    "{sw}x{sh}->{tw}x{th}: {a} vs {b}"
                );
            }
        }
    }

    #[test]
    fn a_frame_is_perfectly_similar_to_itself_and_a_crop_is_coherent() {
        let f = noise_rgba(48, 20, 9);
        let s = Lab::from_rgba(&f);
        assert_eq!(similarity(&s, &s).total(), 0.0);
        // A crop: every one of its patches is in the original (coherence
        // 0), but the patches cut away are missing (completeness > 0).
        let crop = Plane::from_fn(36, 20, |x, y| f.get(x + 6, y));
        let c = similarity(&s, &Lab::from_rgba(&crop));
        assert_eq!(c.coherence, 0.0);
        assert!(c.completeness > 10.0, "{c:?}");
    }

    #[test]
    fn removing_a_column_of_a_flat_area_costs_nothing_and_scaling_texture_costs() {
        // Texture on the left, flat on the right: taking flat columns away
        // keeps every patch; squeezing everything distorts the texture.
        let f = Plane::from_fn(60, 20, |x, y| {
            if x < 30 {
                noise_rgba(1, 1, (x * 31 + y * 7) as u32).get(0, 0)
            } else {
                [90, 120, 40, 255]
            }
        });
        let carved = Plane::from_fn(45, 20, |x, y| f.get(x, y));
        let s = Lab::from_rgba(&f);
        let carve = similarity(&s, &Lab::from_rgba(&carved));
        let scale = similarity(&s, &Lab::from_rgba(&area_scale(&f, 45, 20)));
        assert_eq!(carve.total(), 0.0);
        assert!(scale.total() > 1.0, "{scale:?}");
    }

    #[test]
    fn area_scaling_averages_what_each_output_pixel_covers() {
        let f = Plane::from_fn(4, 1, |x, _| [[0, 40, 80, 120][x], 0, 0, 255]);
        let half = area_scale(&f, 2, 1);
        assert_eq!(half.get(0, 0)[0], 20);
        assert_eq!(half.get(1, 0)[0], 100);
        // 4 -> 3: each output covers 4/3 of an input.
        let three = area_scale(&f, 3, 1);
        assert_eq!(three.get(0, 0)[0], 10); // (0·1 + 40·⅓)/(4/3)
        assert_eq!(three.get(1, 0)[0], 60); // (40·⅔ + 80·⅔)/(4/3)
        assert_eq!(three.get(2, 0)[0], 110);
        assert_eq!(area_scale(&f, 4, 1), f);
    }

    #[test]
    fn flicker_of_a_still_clip_is_zero_and_ratios_follow() {
        let a = noise_rgba(32, 18, 1);
        let b = noise_rgba(32, 18, 2);
        let mut m = Meter::new(1);
        for f in [&a, &a, &b] {
            let result = Plane::from_fn(24, 18, |x, y| f.get(x, y));
            m.push(f, &result).unwrap();
        }
        let r = m.report();
        assert_eq!((r.frames, r.similarity_frames), (3, 3));
        assert!(r.flicker_result > 0.0 && r.flicker_scaled > 0.0);
        // Half the pairs are still: the mean is half the one change.
        let one = mean_abs_diff(
            &Plane::from_fn(24, 18, |x, y| a.get(x, y)),
            &Plane::from_fn(24, 18, |x, y| b.get(x, y)),
        );
        assert!((r.flicker_result - one / 2.0).abs() < 1e-9);
        assert!(r.similarity_ratio() < 1.0, "{r:?}");
    }
}
