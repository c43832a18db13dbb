//! `segment`: quad-tree forest split-and-merge segmentation (seed 004
//! §2.3.8, after Eskelinen, Tirronen and Rossi 2013), on luma.
//!
//! The frame is tiled into square roots of side `tile` (a power of two); the
//! roots along the right and bottom edges are clipped to the frame. A node
//! splits into four while it is not consistent (Eq. 2.11 over its children)
//! and is larger than `min`; the leaves are then merged with union-find where
//! 4-adjacent leaves are similar (Eq. 2.10). Every node's mean and standard
//! deviation come in O(1) from the integral and squared integral images of
//! luma ([`integrals`]).
//!
//! [`labels`] is the library API: a `Plane<u32>` whose value at each pixel
//! is the raster index `y·W + x` of its segment's first pixel (in raster
//! order), so labels are canonical: they depend on the partition only, and
//! the GPU writes the very same numbers. The chain op paints each segment
//! with its mean colour (`output=mean`), draws the borders over the frame
//! (`borders`), or shows the labels in false colour (`labels`).
//!
//! The seed leaves much open (and its pseudocode merges in list order, which
//! depends on the order of the segments). Every decision below is made so
//! that the partition is a pure function of the pixels, which a parallel
//! implementation reproduces exactly:
//!
//! - Statistics are integer sums (u32 sums of a node from the u32 table are
//!   exact for nodes up to 4096 pixels on a side; the tile is at most 1024),
//!   turned into a mean and deviation in f64 by one fixed sequence of
//!   correctly rounded operations ([`Stats::mean_sd`]), so the CPU and the
//!   GPU (no fused multiply-adds) get the same bits.
//! - Split ([`consistent`]): the node's children's ranges `m ± α·s` must
//!   overlap by at least `threshold` of their union: `min(hi) − max(lo) ≥
//!   threshold · (max(hi) − min(lo))`. Written as a product, equal point
//!   ranges (flat children, 0/0 in the seed's ratio) are consistent. Nodes
//!   of side `min` are leaves; a clipped node with one child (the same
//!   pixels) is passed through to that child, which is tested in its turn.
//! - `min` (default 4) is not in the seed, which splits down to pixels. But
//!   below 4×4 a node's children are points or near-points whose ranges
//!   never overlap unless equal, so any textured area shatters into pixels,
//!   and the merge test (below) cannot join pixels (their deviation is 0):
//!   on the bundled photographs `min=1` leaves 30 000 to 50 000 segments and
//!   two thirds of the pixels in segments under 64 pixels; `min=4` gives
//!   about 2 000 segments that follow the objects, at the price of borders
//!   on a 4-pixel grid.
//! - Merge ([`similar`]): every pair of 4-adjacent leaves with `|m1 − m2| <
//!   threshold · (s1 + s2)`, or equal means (0/0 in Eq. 2.10, which the
//!   seed leaves undefined), is joined. The segments are the connected
//!   components of these pairs, which do not depend on the order in which
//!   pairs are joined: that is what makes a parallel union-find give the same
//!   partition. Statistics are the leaves' own, not those of segments as they
//!   grow, which would make the result depend on the merge order (rounds of
//!   simultaneous merges with segment statistics were tried: they chain
//!   across weak edges and merged the face of `astronaut` into its suit).
//! - A one-pixel leaf (with `min=1`, or a root clipped to one pixel) has a
//!   deviation of 0 by construction, not by content, so Eq. 2.10 would keep
//!   it apart from its neighbours (noise at the edge of a region would stay
//!   as specks). In the merge test it takes the deviation of its parent node,
//!   which measures the local contrast it came from.
//! - The same `threshold` serves both tests; the seed gives 0.4 to 0.6 for
//!   both criteria.

use rayon::prelude::*;

use super::integral::{integrals, rect_sum_u32, rect_sum_u64};
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::pixel::Pixel;
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

const OUTPUTS: &[&str] = &["mean", "borders", "labels"];

pub static SPEC: OpSpec = OpSpec {
    name: "segment",
    summary: "quad-tree forest split-and-merge segmentation of luma (seed 004): segments painted with their mean colour, their borders, or false-colour labels",
    params: &[
        ParamSpec::new(
            "tile",
            Kind::Int { min: 2, max: 1024 },
            "32",
            "side of the quad-tree roots, a power of two",
        ),
        ParamSpec::new(
            "min",
            Kind::Int { min: 1, max: 1024 },
            "4",
            "side of the smallest nodes (a power of two up to tile; left out, 4 or tile if that is smaller): the finest detail a border follows",
        ),
        ParamSpec::new(
            "threshold",
            Kind::Float {
                min: 0.05,
                max: 1.0,
            },
            "0.5",
            "split a node unless its children's ranges m ± alpha·s overlap by this fraction of their union; merge neighbours with |m1 − m2| / (s1 + s2) below it (the seed uses 0.4 to 0.6)",
        ),
        ParamSpec::new(
            "alpha",
            Kind::Float { min: 0.1, max: 8.0 },
            "1",
            "standard deviations on each side of the mean in the split test",
        ),
        ParamSpec::new(
            "output",
            Kind::Choice(OUTPUTS),
            "mean",
            "mean: each segment in its mean colour; borders: segment borders drawn over the frame; labels: false colours",
        ),
    ],
    example: "segment:tile=32,threshold=0.5,output=borders",
};

/// The parameters of the split and merge tests.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Settings {
    /// Side of the roots, a power of two from 2 to 1024.
    pub tile: usize,
    /// Side of the smallest nodes, a power of two up to `tile`: nodes this
    /// small are leaves.
    pub min: usize,
    pub threshold: f64,
    pub alpha: f64,
}

impl Settings {
    /// Checks `tile` and `min` (the ranges of `threshold` and `alpha` are
    /// the spec's).
    pub fn new(tile: usize, min: usize, threshold: f64, alpha: f64) -> Result<Settings> {
        let power = |key: &str, v: usize, lo: usize, hi: usize| {
            if v.is_power_of_two() && (lo..=hi).contains(&v) {
                return Ok(());
            }
            let below = (v.checked_next_power_of_two().map_or(hi, |p| p / 2)).clamp(lo, hi);
            let above = (below * 2).min(hi);
            let try_ = if below == above {
                format!("{below}")
            } else {
                format!("{below} or {above}")
            };
            Err(Error::bad_value(
                "segment",
                key,
                v,
                format!("must be a power of two from {lo} to {hi}; try {try_}"),
            ))
        };
        power("tile", tile, 2, 1024)?;
        power("min", min, 1, tile)?;
        Ok(Settings {
            tile,
            min,
            threshold,
            alpha,
        })
    }

    /// Levels below the roots: the roots are level 0, nodes of side `min`
    /// level `depth`.
    pub fn depth(&self) -> u32 {
        (self.tile / self.min).trailing_zeros()
    }
}

/// What the chain op writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Output {
    /// Each segment in its mean colour (R, G, B; alpha kept).
    Mean,
    /// The frame with each segment's border in [`BORDER_RGBA`] (gray: 255).
    Borders,
    /// The labels in false colour ([`label_colour`]).
    Labels,
}

/// The colour of borders on RGBA frames (alpha is kept); gray frames get 255.
pub const BORDER_RGBA: [u8; 3] = [255, 0, 0];

/// Pixel count, luma sum and squared sum of a rectangle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stats {
    pub n: u64,
    pub sum: u64,
    pub sq: u64,
}

impl Stats {
    /// The statistics of `[x0, x1) × [y0, y1)` from the tables of
    /// [`integrals`], in O(1). Exact while the rectangle's sum fits u32.
    #[inline]
    pub fn of_rect(
        ii: &Plane<u32>,
        sq: &Plane<u64>,
        x0: usize,
        y0: usize,
        x1: usize,
        y1: usize,
    ) -> Stats {
        Stats {
            n: ((x1 - x0) * (y1 - y0)) as u64,
            sum: rect_sum_u32(ii, x0, y0, x1, y1) as u64,
            sq: rect_sum_u64(sq, x0, y0, x1, y1),
        }
    }

    /// (mean, standard deviation) in f64: m = sum/n, s = √max(0, sq/n − m·m),
    /// the operations (each correctly rounded) in this order, as the GPU
    /// does them. A flat rectangle gets exactly 0.
    #[inline]
    pub fn mean_sd(self) -> (f64, f64) {
        let n = self.n as f64;
        let m = self.sum as f64 / n;
        let var = self.sq as f64 / n - m * m;
        (m, var.max(0.0).sqrt())
    }
}

/// Eq. 2.11: whether children with (mean, deviation) `children` are one
/// region: their ranges `m ± α·s` overlap by at least `threshold` of their
/// union. The products and sums are in this order on the GPU too.
#[inline]
pub fn consistent(children: &[(f64, f64)], s: &Settings) -> bool {
    let (mut lo_max, mut lo_min) = (f64::NEG_INFINITY, f64::INFINITY);
    let (mut hi_max, mut hi_min) = (f64::NEG_INFINITY, f64::INFINITY);
    for &(m, sd) in children {
        let r = s.alpha * sd;
        let (lo, hi) = (m - r, m + r);
        lo_max = lo_max.max(lo);
        lo_min = lo_min.min(lo);
        hi_max = hi_max.max(hi);
        hi_min = hi_min.min(hi);
    }
    hi_min - lo_max >= s.threshold * (hi_max - lo_min)
}

/// Eq. 2.10: whether two leaves with (mean, deviation) `a` and `b` belong to
/// one segment: `|m1 − m2| < threshold · (s1 + s2)`, or equal means.
#[inline]
pub fn similar(a: (f64, f64), b: (f64, f64), threshold: f64) -> bool {
    let d = (a.0 - b.0).abs();
    d == 0.0 || d < threshold * (a.1 + b.1)
}

/// A node of the forest: level `level` (0 = roots, side `tile >> level`),
/// the `ix`-th column and `iy`-th row of nodes of that level, clipped to the
/// frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Node {
    level: u32,
    x0: usize,
    y0: usize,
    x1: usize,
    y1: usize,
}

/// The split test and leaf statistics of one frame.
struct Forest<'a> {
    settings: &'a Settings,
    ii: Plane<u32>,
    sq: Plane<u64>,
    w: usize,
    h: usize,
}

impl Forest<'_> {
    fn side(&self, level: u32) -> usize {
        self.settings.tile >> level
    }

    /// The node of `level` whose nominal square starts at (x0, y0).
    fn node(&self, level: u32, x0: usize, y0: usize) -> Node {
        let side = self.side(level);
        Node {
            level,
            x0,
            y0,
            x1: (x0 + side).min(self.w),
            y1: (y0 + side).min(self.h),
        }
    }

    fn stats(&self, n: &Node) -> Stats {
        Stats::of_rect(&self.ii, &self.sq, n.x0, n.y0, n.x1, n.y1)
    }

    /// The children that hold pixels (1, 2 or 4 of them).
    fn children(&self, n: &Node) -> impl Iterator<Item = Node> + '_ {
        let half = self.side(n.level + 1);
        let level = n.level + 1;
        let (x0, y0, x1, y1) = (n.x0, n.y0, n.x1, n.y1);
        [(0, 0), (1, 0), (0, 1), (1, 1)]
            .into_iter()
            .filter(move |&(dx, dy)| x0 + dx * half < x1 && y0 + dy * half < y1)
            .map(move |(dx, dy)| self.node(level, x0 + dx * half, y0 + dy * half))
    }

    /// Whether the node divides: it is larger than `min` and either has one
    /// child (a clipped node, the same pixels) or is not consistent.
    fn splits(&self, n: &Node) -> bool {
        if n.level == self.settings.depth() {
            return false;
        }
        let mut ms = [(0.0, 0.0); 4];
        let mut k = 0;
        for c in self.children(n) {
            ms[k] = self.stats(&c).mean_sd();
            k += 1;
        }
        k == 1 || !consistent(&ms[..k], self.settings)
    }

    /// The (mean, deviation) a leaf brings to the merge test: its own, or for
    /// a one-pixel leaf its parent's deviation (see the module comment).
    fn merge_stats(&self, n: &Node) -> (f64, f64) {
        let st = self.stats(n);
        let (m, sd) = st.mean_sd();
        if st.n > 1 || n.level == 0 {
            return (m, sd);
        }
        let mask = !(self.side(n.level - 1) - 1);
        let parent = self.node(n.level - 1, n.x0 & mask, n.y0 & mask);
        (m, self.stats(&parent).mean_sd().1)
    }

    /// Appends the leaves under `n` to `out`.
    fn leaves(&self, n: Node, out: &mut Vec<Node>) {
        if self.splits(&n) {
            for c in self.children(&n) {
                self.leaves(c, out);
            }
        } else {
            out.push(n);
        }
    }
}

/// Union-find over leaves; each root keeps the smallest key (top-left pixel
/// index) of its set.
struct Sets {
    parent: Vec<u32>,
    key: Vec<u32>,
}

impl Sets {
    fn find(&mut self, mut a: u32) -> u32 {
        while self.parent[a as usize] != a {
            let p = self.parent[a as usize];
            // Path halving.
            self.parent[a as usize] = self.parent[p as usize];
            a = p;
        }
        a
    }

    fn union(&mut self, a: u32, b: u32) {
        let (ra, rb) = (self.find(a), self.find(b));
        if ra == rb {
            return;
        }
        let (keep, child) = if self.key[ra as usize] < self.key[rb as usize] {
            (ra, rb)
        } else {
            (rb, ra)
        };
        self.parent[child as usize] = keep;
    }
}

/// The segments of `luma`: each pixel's label is the raster index `y·W + x`
/// of its segment's first pixel. Every pixel is labelled; segments are
/// 4-connected.
pub fn labels(luma: &Plane<u8>, settings: &Settings) -> Plane<u32> {
    let (w, h) = (luma.width(), luma.height());
    if w == 0 || h == 0 {
        return Plane::new(w, h, 0);
    }
    assert!(
        w.checked_mul(h).is_some_and(|n| n <= u32::MAX as usize),
        "segment: labels are u32 pixel indices"
    );
    let (ii, sq) = integrals(luma);
    let forest = Forest {
        settings,
        ii,
        sq,
        w,
        h,
    };
    // Leaves, one row of roots at a time in parallel; within a row, roots
    // left to right and each tree depth first (the order does not matter to
    // the result).
    let tile = settings.tile;
    let rows: Vec<Vec<Node>> = (0..h.div_ceil(tile))
        .into_par_iter()
        .map(|r| {
            let mut out = Vec::new();
            for c in 0..w.div_ceil(tile) {
                forest.leaves(forest.node(0, c * tile, r * tile), &mut out);
            }
            out
        })
        .collect();
    let leaves: Vec<Node> = rows.into_iter().flatten().collect();
    let stats: Vec<(f64, f64)> = leaves.par_iter().map(|n| forest.merge_stats(n)).collect();
    // Each pixel's leaf (an index into `leaves`).
    let mut leaf = Plane::new(w, h, 0u32);
    for (i, n) in leaves.iter().enumerate() {
        for y in n.y0..n.y1 {
            leaf.row_mut(y)[n.x0..n.x1].fill(i as u32);
        }
    }
    let mut sets = Sets {
        parent: (0..leaves.len() as u32).collect(),
        key: leaves.iter().map(|n| (n.y0 * w + n.x0) as u32).collect(),
    };
    let mut join = |a: u32, b: u32| {
        if a != b && similar(stats[a as usize], stats[b as usize], settings.threshold) {
            sets.union(a, b);
        }
    };
    for y in 0..h {
        let row = leaf.row(y);
        for x in 0..w {
            if x + 1 < w {
                join(row[x], row[x + 1]);
            }
            if y + 1 < h {
                join(row[x], leaf.get(x, y + 1));
            }
        }
    }
    let label: Vec<u32> = (0..leaves.len() as u32)
        .map(|i| {
            let r = sets.find(i);
            sets.key[r as usize]
        })
        .collect();
    leaf.par_rows_mut().for_each(|(_, row)| {
        for v in row {
            *v = label[*v as usize];
        }
    });
    leaf
}

/// Each segment of `labels` painted with the mean of its pixels, per colour
/// channel, rounded half up in integers: `(2·sum + n) / (2·n)`; alpha kept.
pub fn paint_mean<P: Pixel>(src: &Plane<P>, labels: &Plane<u32>) -> Plane<P> {
    let (w, h) = (src.width(), src.height());
    // Sums by label (a pixel index), so W·H entries; only roots are touched.
    let mut sums = vec![[0u64; 4]; w * h];
    for y in 0..h {
        for (&l, &p) in labels.row(y).iter().zip(src.row(y)) {
            let s = &mut sums[l as usize];
            for (c, sc) in s.iter_mut().enumerate().take(P::FILTERED) {
                *sc += p.channel(c) as u64;
            }
            s[3] += 1;
        }
    }
    let mut out = src.to_packed();
    out.par_rows_mut().for_each(|(y, row)| {
        for (o, &l) in row.iter_mut().zip(labels.row(y)) {
            let s = &sums[l as usize];
            for c in 0..P::FILTERED {
                o.set_channel(c, ((2 * s[c] + s[3]) / (2 * s[3])) as u8);
            }
        }
    });
    out
}

/// Whether (x, y) is on a border: its right or lower neighbour is in
/// another segment (so each border is one pixel wide, on the left or upper
/// segment's side).
#[inline]
fn on_border(labels: &Plane<u32>, x: usize, y: usize) -> bool {
    let l = labels.get(x, y);
    (x + 1 < labels.width() && labels.get(x + 1, y) != l)
        || (y + 1 < labels.height() && labels.get(x, y + 1) != l)
}

/// `src` with border pixels (`on_border`) in [`BORDER_RGBA`] (gray: 255),
/// alpha kept.
pub fn draw_borders<P: Pixel>(src: &Plane<P>, labels: &Plane<u32>) -> Plane<P> {
    let mut out = src.to_packed();
    out.par_rows_mut().for_each(|(y, row)| {
        for (x, o) in row.iter_mut().enumerate() {
            if on_border(labels, x, y) {
                let colour = if P::FILTERED == 1 {
                    [255; 3]
                } else {
                    BORDER_RGBA
                };
                for (c, &v) in colour.iter().enumerate().take(P::FILTERED) {
                    o.set_channel(c, v);
                }
            }
        }
    });
    out
}

/// The false colour of a label: the bytes 0, 1, 2 of a 32-bit integer hash
/// of it (lowbias32), so neighbouring segments differ at a glance.
#[inline]
pub fn label_colour(label: u32) -> [u8; 3] {
    let mut x = label;
    x ^= x >> 16;
    x = x.wrapping_mul(0x7feb_352d);
    x ^= x >> 15;
    x = x.wrapping_mul(0x846c_a68b);
    x ^= x >> 16;
    [x as u8, (x >> 8) as u8, (x >> 16) as u8]
}

/// The labels in false colour ([`label_colour`]): RGBA frames get the three
/// bytes in R, G, B (alpha kept), gray frames the first.
pub fn paint_labels<P: Pixel>(src: &Plane<P>, labels: &Plane<u32>) -> Plane<P> {
    let mut out = src.to_packed();
    out.par_rows_mut().for_each(|(y, row)| {
        for (o, &l) in row.iter_mut().zip(labels.row(y)) {
            for (c, &v) in label_colour(l).iter().enumerate().take(P::FILTERED) {
                o.set_channel(c, v);
            }
        }
    });
    out
}

/// The `segment` chain op.
#[derive(Debug)]
pub struct Segment {
    pub settings: Settings,
    pub output: Output,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let tile = p.usize("tile")?;
    // The default must not contradict a small tile the user chose.
    let min = if p.given("min") {
        p.usize("min")?
    } else {
        p.usize("min")?.min(tile)
    };
    let settings = Settings::new(tile, min, p.f64("threshold")?, p.f64("alpha")?)?;
    let output = match p.word("output")? {
        "mean" => Output::Mean,
        "borders" => Output::Borders,
        "labels" => Output::Labels,
        other => {
            return Err(Error::bad_value(
                "segment",
                "output",
                other,
                format!("expected one of {}", OUTPUTS.join(", ")),
            ));
        }
    };
    Ok(Box::new(Segment { settings, output }))
}

impl Segment {
    fn paint<P: Pixel>(&self, src: &Plane<P>, labels: &Plane<u32>) -> Plane<P> {
        match self.output {
            Output::Mean => paint_mean(src, labels),
            Output::Borders => draw_borders(src, labels),
            Output::Labels => paint_labels(src, labels),
        }
    }
}

impl Op for Segment {
    fn name(&self) -> &'static str {
        "segment"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let l = labels(&frame.luma(), &self.settings);
        Ok(match frame {
            Frame::Gray(p) => Frame::Gray(self.paint(p, &l)),
            Frame::Rgba(p) => Frame::Rgba(self.paint(p, &l)),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    /// This op from `name:key=value,...`.
    fn parse_op(text: &str) -> crate::error::Result<crate::ops::OpBox> {
        crate::ops::parse_with(&SPEC, build, text)
    }

    fn settings() -> Settings {
        Settings::new(16, 4, 0.5, 1.0).unwrap()
    }

    /// xorshift noise in `-amp..=amp`.
    fn noise(seed: u64) -> impl FnMut(i32) -> i32 {
        let mut x = seed | 1;
        move |amp| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % (2 * amp as u64 + 1)) as i32 - amp
        }
    }

    #[test]
    fn node_mean_and_deviation_from_the_tables_equal_direct_sums() {
        let mut r = noise(7);
        let img = Plane::from_fn(45, 38, |_, _| (128 + r(127)) as u8);
        let (ii, sq) = integrals(&img);
        for &(x0, y0, x1, y1) in &[
            (0, 0, 45, 38),
            (3, 5, 4, 6),
            (16, 16, 32, 32),
            (40, 7, 45, 38),
        ] {
            let (m, s) = Stats::of_rect(&ii, &sq, x0, y0, x1, y1).mean_sd();
            let px: Vec<f64> = (y0..y1)
                .flat_map(|y| (x0..x1).map(move |x| (x, y)))
                .map(|(x, y)| img.get(x, y) as f64)
                .collect();
            let n = px.len() as f64;
            let dm = px.iter().sum::<f64>() / n;
            let ds = (px.iter().map(|v| (v - dm) * (v - dm)).sum::<f64>() / n).sqrt();
            assert!((m - dm).abs() < 1e-9, "{m} {dm}");
            assert!((s - ds).abs() < 1e-9, "{s} {ds}");
        }
        let flat = Plane::new(5, 5, 77u8);
        let (ii, sq) = integrals(&flat);
        assert_eq!(Stats::of_rect(&ii, &sq, 1, 1, 4, 5).mean_sd(), (77.0, 0.0));
    }

    #[test]
    fn split_test_is_range_overlap_and_flat_children_are_consistent() {
        let s = settings();
        // [9, 11] and [10, 12]: overlap 1 of union 3.
        assert!(!consistent(&[(10.0, 1.0), (11.0, 1.0)], &s));
        // [9, 11] and [9.5, 11.5]: overlap 1.5 of union 2.5.
        assert!(consistent(&[(10.0, 1.0), (10.5, 1.0)], &s));
        assert!(consistent(&[(5.0, 0.0); 4], &s));
        assert!(!consistent(&[(5.0, 0.0), (6.0, 0.0)], &s));
        assert!(similar((5.0, 0.0), (5.0, 0.0), 0.5));
        assert!(!similar((5.0, 0.0), (6.0, 0.0), 0.5));
        assert!(similar((5.0, 1.0), (5.9, 1.0), 0.5));
        assert!(!similar((5.0, 1.0), (6.0, 1.0), 0.5));
    }

    /// Four flat quadrants (40, 100, 160, 220) with noise of ±6, split at
    /// (x, y); the number of distinct labels.
    fn quadrants(w: usize, h: usize, x: usize, y: usize, s: &Settings) -> (Plane<u32>, usize) {
        let mut r = noise(99);
        let img = Plane::from_fn(w, h, |px, py| {
            let base = [[40, 100], [160, 220]][(py >= y) as usize][(px >= x) as usize];
            (base + r(6)) as u8
        });
        let l = labels(&img, s);
        let mut distinct: Vec<u32> = l.as_slice().to_vec();
        distinct.sort_unstable();
        distinct.dedup();
        (l, distinct.len())
    }

    #[test]
    fn four_noisy_flat_quadrants_give_four_segments() {
        let s = settings();
        let (l, n) = quadrants(64, 48, 32, 16, &s);
        assert_eq!(n, 4);
        assert_eq!(
            (l.get(0, 0), l.get(63, 0), l.get(0, 47), l.get(63, 47)),
            (0, 32, 16 * 64, 16 * 64 + 32)
        );
        // Quadrant edges off the tile grid (on the grid of `min`) split the
        // roots across them down to 4×4 leaves, which join their quadrant;
        // the frame's edges clip the last roots.
        let (l, n) = quadrants(70, 45, 36, 20, &s);
        assert_eq!(n, 4, "{:?}", l.as_slice());
        assert_eq!(l.get(35, 19), 0);
        assert_eq!(l.get(36, 19), 36);
        assert_eq!(l.get(35, 20), 20 * 70);
        assert_eq!(l.get(69, 44), 20 * 70 + 36);
    }

    #[test]
    fn tiny_and_clipped_frames_are_labelled() {
        let s = Settings::new(16, 1, 0.5, 1.0).unwrap();
        assert_eq!(labels(&Plane::new(1, 1, 9u8), &s).as_slice(), &[0]);
        let two = Plane::from_vec(2, 1, vec![0u8, 255]).unwrap();
        assert_eq!(labels(&two, &s).as_slice(), &[0, 1]);
        let flat = Plane::new(33, 17, 4u8);
        assert!(labels(&flat, &s).as_slice().iter().all(|&l| l == 0));
    }

    #[test]
    fn mean_output_paints_each_segment_its_rounded_mean_and_keeps_alpha() {
        // Two flat halves; the right has colours averaging to x.5.
        let img = Plane::from_fn(4, 2, |x, y| {
            if x < 2 {
                [10, 20, 30, 7]
            } else {
                [200 + (y as u8), 100, 50, 9]
            }
        });
        let mut op = parse_op("segment:tile=2,min=1").unwrap();
        let Frame::Rgba(out) = op.apply(&Frame::Rgba(img)).unwrap() else {
            panic!("expected RGBA")
        };
        assert_eq!(out.get(0, 1), [10, 20, 30, 7]);
        // Luma of rows 0 and 1 of the right half differs by 0 or 1, so the
        // halves of the right side may or may not split; either way R is the
        // mean of the pixels of its segment.
        let r = out.get(3, 0)[0];
        assert!(r == 200 || r == 201, "{r}");
        assert_eq!(out.get(3, 1)[3], 9);
    }

    #[test]
    fn borders_and_labels_outputs_mark_segment_edges() {
        let img = Plane::from_fn(8, 4, |x, _| if x < 4 { 0u8 } else { 200 });
        let mut op = parse_op("segment:tile=4,output=borders").unwrap();
        let Frame::Gray(out) = op.apply(&Frame::Gray(img.clone())).unwrap() else {
            panic!("expected gray")
        };
        for y in 0..4 {
            let row: Vec<u8> = out.row(y).to_vec();
            assert_eq!(row, [0, 0, 0, 255, 200, 200, 200, 200], "row {y}");
        }
        let mut op = parse_op("segment:tile=4,output=labels").unwrap();
        let Frame::Gray(out) = op.apply(&Frame::Gray(img)).unwrap() else {
            panic!("expected gray")
        };
        assert_eq!(out.get(0, 3), label_colour(0)[0]);
        assert_eq!(out.get(7, 0), label_colour(4)[0]);
    }

    #[test]
    fn bad_parameters_name_the_value() {
        let e = parse_op("segment:tile=12").unwrap_err().to_string();
        assert!(
            e.contains("tile") && e.contains("12") && e.contains("power of two"),
            "{e}"
        );
        let e = parse_op("segment:tile=2048").unwrap_err().to_string();
        assert!(e.contains("tile") && e.contains("2048"), "{e}");
        let e = parse_op("segment:threshold=1.5").unwrap_err().to_string();
        assert!(e.contains("threshold") && e.contains("1.5"), "{e}");
        let e = parse_op("segment:alpha=0").unwrap_err().to_string();
        assert!(e.contains("alpha"), "{e}");
        let e = parse_op("segment:output=edges").unwrap_err().to_string();
        assert!(e.contains("output") && e.contains("edges"), "{e}");
    }

    #[test]
    fn a_small_tile_lowers_the_default_min_but_not_a_given_one() {
        let op = parse_op("segment:tile=2").unwrap();
        assert!(format!("{op:?}").contains("min: 2"), "{op:?}");
        let e = parse_op("segment:tile=2,min=4").unwrap_err().to_string();
        assert!(e.contains("`min=4`") && e.contains("1 to 2"), "{e}");
    }
}
