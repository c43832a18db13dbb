//! `retarget`: content-aware resizing by seam carving (seed 000, with the
//! rules of DESIGN.md §4).
//!
//! A frame goes in, a frame of the target size comes out. Energy is computed
//! on luma in integers, so that the GPU can reproduce every seam exactly:
//!
//! - `basic` = 181·(|I(x,y)−I(x+1,y)| + |I(x,y)−I(x,y+1)|) + 128·|I(x,y)−I(x+1,y+1)|,
//!   zero outside the frame. That is the seed's (…+ |·|/√2)/3 scaled by 3·181
//!   (181/128 = 1.41406 ≈ √2).
//! - `sobel3`, `sobel5` = ⌊8·√(gx²+gy²)⌋ with the seed's kernels, replicate
//!   border, computed with integer square roots.
//! - `forward` = forward energy (Rubinstein et al. 2008): no energy per pixel;
//!   each DP step costs the new edges the removal would create.
//!
//! Seams are vertical; horizontal seams are found on the transposed frame.
//! The dynamic programme runs from the bottom row up, as the seed does, so a
//! seam is read from the top row down: M(x,H−1) = c(x,H−1) and
//! M(x,y) = c(x,y) + min over d∈{0,−1,+1} of (M(x+d,y+1) + t_d(x,y)), ties to
//! the centre, then left, then right; the seam starts at the smallest M in
//! the top row (ties to the smallest column) and follows the stored choices.
//! Cumulative sums are i64; a protected pixel costs 2^44 more and a pixel to
//! remove 2^34 less, which dominates any natural energy of a seam.

use rayon::prelude::*;

use super::params::{Kind, OpSpec, ParamSpec, Params, SizeSpec};
use super::pixel::Pixel;
use super::retarget_fast::{FastParams, FastState, retarget_fast};
use super::{Border, Op, OpBox, sobel};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane, Rgba};

/// How a pixel's importance is measured.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Energy {
    Basic,
    Sobel3,
    Sobel5,
    Forward,
}

impl Energy {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "basic" => Some(Energy::Basic),
            "sobel3" => Some(Energy::Sobel3),
            "sobel5" => Some(Energy::Sobel5),
            "forward" => Some(Energy::Forward),
            _ => None,
        }
    }

    /// How far (in pixels) a pixel's energy looks; bounds the band that must
    /// be recomputed around a removed seam.
    pub(crate) fn reach(self) -> usize {
        match self {
            Energy::Basic | Energy::Sobel3 | Energy::Forward => 1,
            Energy::Sobel5 => 2,
        }
    }
}

/// Extra cost of a protected pixel.
pub const PROTECT_COST: i64 = 1 << 44;
/// Cost taken off a pixel marked for removal.
pub const REMOVE_BONUS: i64 = 1 << 34;

/// A mask pixel's meaning.
pub const MASK_NONE: i8 = 0;
pub const MASK_PROTECT: i8 = 1;
pub const MASK_REMOVE: i8 = -1;

#[inline]
fn mask_cost(m: i8) -> i64 {
    match m {
        MASK_PROTECT => PROTECT_COST,
        MASK_REMOVE => -REMOVE_BONUS,
        _ => 0,
    }
}

/// Integer square root: ⌊√n⌋.
#[inline]
pub fn isqrt(n: u64) -> u64 {
    if n == 0 {
        return 0;
    }
    let mut r = (n as f64).sqrt() as u64;
    while r * r > n {
        r -= 1;
    }
    while (r + 1) * (r + 1) <= n {
        r += 1;
    }
    r
}

/// Energy of one pixel of `luma` (not used for `forward`).
#[inline]
pub fn energy_at(luma: &Plane<u8>, x: usize, y: usize, kind: Energy) -> u32 {
    match kind {
        Energy::Basic => {
            let (w, h) = (luma.width(), luma.height());
            let i = luma.get(x, y) as i32;
            let at = |xx: usize, yy: usize| {
                if xx < w && yy < h {
                    luma.get(xx, yy) as i32
                } else {
                    0
                }
            };
            let dx = (i - at(x + 1, y)).unsigned_abs();
            let dy = (i - at(x, y + 1)).unsigned_abs();
            let dd = (i - at(x + 1, y + 1)).unsigned_abs();
            181 * (dx + dy) + 128 * dd
        }
        Energy::Sobel3 | Energy::Sobel5 => {
            let k = if kind == Energy::Sobel3 { 3 } else { 5 };
            let (gx, gy) = sobel::gradient_at(luma, x, y, k, Border::Replicate);
            sobel_energy(gx, gy)
        }
        Energy::Forward => 0,
    }
}

#[inline]
fn sobel_energy(gx: i32, gy: i32) -> u32 {
    let n = (gx as i64 * gx as i64 + gy as i64 * gy as i64) as u64;
    isqrt(n * 64) as u32
}

/// The energy map of `luma` (all zero for `forward`).
pub fn energy_map(luma: &Plane<u8>, kind: Energy) -> Plane<u32> {
    let (w, h) = (luma.width(), luma.height());
    let mut out = Plane::new(w, h, 0u32);
    match kind {
        Energy::Forward => {}
        Energy::Basic => out.par_rows_mut().for_each(|(y, row)| {
            for (x, e) in row.iter_mut().enumerate() {
                *e = energy_at(luma, x, y, kind);
            }
        }),
        Energy::Sobel3 | Energy::Sobel5 => {
            let k = if kind == Energy::Sobel3 { 3 } else { 5 };
            let (gx, gy) = sobel::gradients(luma, k, Border::Replicate);
            out.par_rows_mut().for_each(|(y, row)| {
                for ((e, &a), &b) in row.iter_mut().zip(gx.row(y)).zip(gy.row(y)) {
                    *e = sobel_energy(a, b);
                }
            });
        }
    }
    out
}

/// Forward-energy step costs of row `y` towards row y+1: for each x, the
/// cost of stepping to x (centre), x−1 (left) and x+1 (right). Columns
/// outside the frame read the edge column.
fn forward_steps(
    luma: &Plane<u8>,
    y: usize,
    centre: &mut [i64],
    left: &mut [i64],
    right: &mut [i64],
) {
    let w = luma.width();
    let row = luma.row(y);
    let below = if y + 1 < luma.height() {
        luma.row(y + 1)
    } else {
        row
    };
    let last_row = y + 1 >= luma.height();
    let at = |x: usize, l: u8, r: u8| {
        let (l, r, d) = (l as i64, r as i64, below[x] as i64);
        let up = (r - l).abs();
        if last_row {
            (up, up, up)
        } else {
            (up, up + (d - l).abs(), up + (d - r).abs())
        }
    };
    let edge = |x: usize| at(x, row[x.saturating_sub(1)], row[(x + 1).min(w - 1)]);
    let mut put = |x: usize, (c, l, r): (i64, i64, i64)| {
        centre[x] = c;
        left[x] = l;
        right[x] = r;
    };
    put(0, edge(0));
    if w > 1 {
        put(w - 1, edge(w - 1));
    }
    // The interior without clamping, so that it vectorises.
    for x in 1..w.saturating_sub(1) {
        put(x, at(x, row[x - 1], row[x + 1]));
    }
}

/// Stands for "no neighbour" beyond the frame's edges; large, but far from
/// overflowing when step costs are added.
pub(crate) const OUTSIDE: i64 = i64::MAX / 4;

/// Reusable buffers for the dynamic programme.
#[derive(Debug, Default)]
pub(crate) struct DpScratch {
    /// Cumulative costs of the row being computed and of the row below,
    /// each with an `OUTSIDE` cell at both ends (index x + 1 is column x).
    cum: Vec<i64>,
    next: Vec<i64>,
    cost: Vec<i64>,
    step_centre: Vec<i64>,
    step_left: Vec<i64>,
    step_right: Vec<i64>,
    /// Per row, the step taken from each pixel: −1, 0 or +1.
    back: Vec<i8>,
}

/// Where the DP reads its costs: the energy map (zero for `forward`), the
/// mask, and for `forward` the luma that step costs come from.
pub(crate) struct DpInput<'a> {
    pub energy: &'a Plane<u32>,
    pub mask: Option<&'a Plane<i8>>,
    pub forward_luma: Option<&'a Plane<u8>>,
}

impl DpInput<'_> {
    fn pixel_costs(&self, y: usize, out: &mut [i64]) {
        for (o, &e) in out.iter_mut().zip(self.energy.row(y)) {
            *o = e as i64;
        }
        if let Some(m) = self.mask {
            for (o, &m) in out.iter_mut().zip(m.row(y)) {
                *o += mask_cost(m);
            }
        }
    }
}

/// Runs the DP over the frame, bottom-up: fills `scratch.back` with every
/// pixel's step (row-major, w per row; the last row's are 0) and leaves the
/// top row's cumulative costs in `scratch.next[1..=w]`.
pub(crate) fn dp_sweep(input: &DpInput, scratch: &mut DpScratch) {
    let (w, h) = (input.energy.width(), input.energy.height());
    let DpScratch {
        cum,
        next,
        cost,
        step_centre,
        step_left,
        step_right,
        back,
    } = scratch;
    for v in [&mut *cum, &mut *next] {
        v.clear();
        v.resize(w + 2, OUTSIDE);
    }
    for v in [
        &mut *cost,
        &mut *step_centre,
        &mut *step_left,
        &mut *step_right,
    ] {
        v.clear();
        v.resize(w, 0);
    }
    back.clear();
    back.resize(w * h, 0);
    input.pixel_costs(h - 1, &mut next[1..=w]);
    if let Some(luma) = input.forward_luma {
        forward_steps(luma, h - 1, step_centre, step_left, step_right);
        for (n, &c) in next[1..=w].iter_mut().zip(step_centre.iter()) {
            *n += c;
        }
    }
    for y in (0..h - 1).rev() {
        input.pixel_costs(y, cost);
        if let Some(luma) = input.forward_luma {
            forward_steps(luma, y, step_centre, step_left, step_right);
        }
        let steps = (&step_centre[..], &step_left[..], &step_right[..]);
        min3_row(
            next,
            cost,
            steps,
            &mut cum[1..=w],
            &mut back[y * w..(y + 1) * w],
        );
        std::mem::swap(cum, next);
    }
}

impl DpScratch {
    /// The top row's cumulative costs after [`dp_sweep`].
    pub(crate) fn top(&self) -> &[i64] {
        &self.next[1..self.next.len() - 1]
    }

    /// The path from column `x` of the top row down, after [`dp_sweep`]:
    /// calls `visit(y, column)` for every row.
    pub(crate) fn trace(&self, mut x: usize, h: usize, mut visit: impl FnMut(usize, usize)) {
        let w = self.cost.len();
        visit(0, x);
        for y in 0..h - 1 {
            x = (x as isize + self.back[y * w + x] as isize) as usize;
            visit(y + 1, x);
        }
    }
}

/// Runs the DP over the frame. Writes the seam (a column per row, top to
/// bottom) and returns its total cost.
fn dp_seam(input: &DpInput, scratch: &mut DpScratch, seam: &mut Vec<usize>) -> i64 {
    let h = input.energy.height();
    dp_sweep(input, scratch);
    // The least top-row cost, ties to the smallest column.
    let (start, total) =
        scratch
            .top()
            .iter()
            .enumerate()
            .fold(
                (0, i64::MAX),
                |(bx, bv), (x, &v)| if v < bv { (x, v) } else { (bx, bv) },
            );
    seam.clear();
    scratch.trace(start, h, |_, x| seam.push(x));
    total
}

/// One DP row: cum[x] = cost[x] + the least of next[x] + centre[x],
/// next[x−1] + left[x] and next[x+1] + right[x], ties to the centre, then
/// left, then right. `next` is padded with `OUTSIDE` at both ends. Written
/// without branches so that it vectorises.
#[inline]
fn min3_row(
    next: &[i64],
    cost: &[i64],
    (centre, left, right): (&[i64], &[i64], &[i64]),
    cum: &mut [i64],
    back: &mut [i8],
) {
    let w = cost.len();
    // Every slice cut to exactly `w`, so that the loop has no bounds checks.
    let (l_in, c_in, r_in) = (&next[..w], &next[1..=w], &next[2..w + 2]);
    let (centre, left, right, cum, back) = (
        &centre[..w],
        &left[..w],
        &right[..w],
        &mut cum[..w],
        &mut back[..w],
    );
    for x in 0..w {
        let c = c_in[x] + centre[x];
        let l = l_in[x] + left[x];
        let r = r_in[x] + right[x];
        let take_l = l < c;
        let best = if take_l { l } else { c };
        let take_r = r < best;
        let best = if take_r { r } else { best };
        cum[x] = best + cost[x];
        back[x] = if take_r {
            1
        } else if take_l {
            -1
        } else {
            0
        };
    }
}

/// The least-energy vertical seam of an energy map (columns from top to
/// bottom) and its total energy.
pub fn vertical_seam(energy: &Plane<u32>) -> (Vec<usize>, i64) {
    let mut seam = Vec::new();
    if energy.is_empty() {
        return (seam, 0);
    }
    let input = DpInput {
        energy,
        mask: None,
        forward_luma: None,
    };
    let total = dp_seam(&input, &mut DpScratch::default(), &mut seam);
    (seam, total)
}

/// Removes pixel `seam[y]` from each row `y`, in place; the stride stays.
fn remove_from<T: Copy + Send>(plane: &mut Plane<T>, seam: &[usize]) {
    let w = plane.width();
    plane.par_rows_mut().for_each(|(y, row)| {
        let x = seam[y];
        row.copy_within(x + 1..w, x);
    });
    plane.set_width(w - 1);
}

/// The state of carving one frame along vertical seams.
#[derive(Debug)]
struct Carver<P> {
    img: Plane<P>,
    luma: Plane<u8>,
    energy: Plane<u32>,
    mask: Option<Plane<i8>>,
    /// Original column of each pixel, kept when seams are recorded for
    /// enlarging.
    origin: Option<Plane<u32>>,
    kind: Energy,
    scratch: DpScratch,
    seam: Vec<usize>,
}

impl<P: Pixel> Carver<P> {
    fn new(img: Plane<P>, mask: Option<Plane<i8>>, kind: Energy, track_origin: bool) -> Self {
        let luma = img.map(|p| p.luma());
        let energy = energy_map(&luma, kind);
        let origin =
            track_origin.then(|| Plane::from_fn(img.width(), img.height(), |x, _| x as u32));
        Self {
            img,
            luma,
            energy,
            mask,
            origin,
            kind,
            scratch: DpScratch::default(),
            seam: Vec::new(),
        }
    }

    /// Finds the best seam into `self.seam` and returns its total cost.
    fn find_seam(&mut self) -> i64 {
        let input = DpInput {
            energy: &self.energy,
            mask: self.mask.as_ref(),
            forward_luma: (self.kind == Energy::Forward).then_some(&self.luma),
        };
        dp_seam(&input, &mut self.scratch, &mut self.seam)
    }

    /// Removes `self.seam` from every plane and brings the energy up to date
    /// in the band the removal disturbed.
    fn remove_seam(&mut self) {
        let seam = &self.seam;
        remove_from(&mut self.img, seam);
        remove_from(&mut self.luma, seam);
        if let Some(m) = &mut self.mask {
            remove_from(m, seam);
        }
        if let Some(o) = &mut self.origin {
            remove_from(o, seam);
        }
        remove_from(&mut self.energy, seam);
        if self.kind == Energy::Forward {
            return;
        }
        let (w, h) = (self.luma.width(), self.luma.height());
        if w == 0 {
            return;
        }
        let reach = self.kind.reach();
        let (luma, kind) = (&self.luma, self.kind);
        self.energy.par_rows_mut().for_each(|(y, row)| {
            // Pixel (x, y) reads pixels up to `reach` away; it changed if any
            // of those moved, i.e. near a seam pixel of rows y−reach..=y+reach.
            let rows = y.saturating_sub(reach)..=(y + reach).min(h - 1);
            let lo = rows.clone().map(|r| seam[r]).min().unwrap_or(0);
            let hi = rows.map(|r| seam[r]).max().unwrap_or(0);
            let x0 = lo.saturating_sub(reach + 1);
            let x1 = (hi + reach).min(w - 1);
            for (x, e) in row.iter_mut().enumerate().take(x1 + 1).skip(x0) {
                *e = energy_at(luma, x, y, kind);
            }
        });
    }
}

/// Options for [`retarget`].
#[derive(Clone, Copy, Debug)]
pub struct CarveOptions<'a> {
    pub energy: Energy,
    /// Pixels that seams avoid (non-zero = protected), same size as the frame.
    pub protect: Option<&'a Plane<u8>>,
    /// Pixels that seams take first (non-zero = remove), same size as the frame.
    pub remove: Option<&'a Plane<u8>>,
}

impl Default for CarveOptions<'_> {
    fn default() -> Self {
        Self {
            energy: Energy::Forward,
            protect: None,
            remove: None,
        }
    }
}

pub(crate) fn combine_masks(w: usize, h: usize, opts: &CarveOptions) -> Result<Option<Plane<i8>>> {
    if opts.protect.is_none() && opts.remove.is_none() {
        return Ok(None);
    }
    for (name, m) in [("protect", opts.protect), ("remove", opts.remove)] {
        if let Some(m) = m
            && (m.width(), m.height()) != (w, h)
        {
            return Err(Error::op_failed(
                "retarget",
                format!(
                    "the {name} mask is {}x{} but the frame is {w}x{h}; masks must match the frame size",
                    m.width(),
                    m.height()
                ),
            ));
        }
    }
    Ok(Some(Plane::from_fn(w, h, |x, y| {
        if opts.protect.is_some_and(|m| m.get(x, y) != 0) {
            MASK_PROTECT
        } else if opts.remove.is_some_and(|m| m.get(x, y) != 0) {
            MASK_REMOVE
        } else {
            MASK_NONE
        }
    })))
}

/// Removes `count` vertical seams.
fn shrink_width<P: Pixel>(
    img: Plane<P>,
    mask: Option<Plane<i8>>,
    count: usize,
    kind: Energy,
) -> (Plane<P>, Option<Plane<i8>>) {
    let mut c = Carver::new(img, mask, kind, false);
    for _ in 0..count {
        c.find_seam();
        c.remove_seam();
    }
    (c.img.to_packed(), c.mask.map(|m| m.to_packed()))
}

/// The rounded mean of the seam pixel and its left and right neighbours.
fn mean3<P: Pixel>(row: &[P], x: usize) -> P {
    let lo = x.saturating_sub(1);
    let hi = (x + 1).min(row.len() - 1);
    let n = (hi - lo + 1) as u32;
    let mut out = row[x];
    for c in 0..P::CHANNELS {
        let s: u32 = row[lo..=hi].iter().map(|p| p.channel(c) as u32).sum();
        out.set_channel(c, ((s + n / 2) / n) as u8);
    }
    out
}

/// Inserts `count` vertical seams: the `count` best seams are found at once
/// (by removing them from a copy), and each gets a new pixel beside it, the
/// mean of the seam pixel and its neighbours. More than half the width is
/// inserted in rounds of at most half the current width (seed 000).
fn enlarge_width<P: Pixel>(
    mut img: Plane<P>,
    mut mask: Option<Plane<i8>>,
    count: usize,
    kind: Energy,
) -> (Plane<P>, Option<Plane<i8>>) {
    let mut left = count;
    while left > 0 {
        let (w, h) = (img.width(), img.height());
        let round = left.min((w / 2).max(1));
        let mut c = Carver::new(img.clone(), mask.clone(), kind, true);
        // Original columns chosen in each row.
        let mut chosen = Plane::new(w, h, false);
        for _ in 0..round {
            c.find_seam();
            let origin = c.origin.as_ref().expect("origin is tracked when enlarging");
            for (y, &x) in c.seam.iter().enumerate() {
                chosen.set(origin.get(x, y) as usize, y, true);
            }
            c.remove_seam();
        }
        (img, mask) = insert_chosen(&img, mask.as_ref(), &chosen);
        left -= round;
    }
    (img, mask)
}

/// Puts a new pixel after every chosen pixel of each row (the mean of it and
/// its neighbours; the mask's value is repeated). Every row must have the
/// same number of chosen pixels.
pub(crate) fn insert_chosen<P: Pixel>(
    img: &Plane<P>,
    mask: Option<&Plane<i8>>,
    chosen: &Plane<bool>,
) -> (Plane<P>, Option<Plane<i8>>) {
    let (w, h) = (img.width(), img.height());
    let round = (0..w).filter(|&x| chosen.get(x, 0)).count();
    let nw = w + round;
    let mut out = Plane::new(nw, h, P::default());
    let mut out_mask = mask.map(|_| Plane::new(nw, h, MASK_NONE));
    for y in 0..h {
        let (src, pick) = (img.row(y), chosen.row(y));
        let mut o = 0;
        let dst = out.row_mut(y);
        for x in 0..w {
            dst[o] = src[x];
            o += 1;
            if pick[x] {
                dst[o] = mean3(src, x);
                o += 1;
            }
        }
        if let (Some(m), Some(om)) = (&mask, &mut out_mask) {
            let (msrc, mdst) = (m.row(y), om.row_mut(y));
            let mut o = 0;
            for x in 0..w {
                mdst[o] = msrc[x];
                o += 1;
                if pick[x] {
                    mdst[o] = msrc[x];
                    o += 1;
                }
            }
        }
    }
    (out, out_mask)
}

/// The original column of every pixel that exact mode keeps when it carves
/// `img` to `target` columns (for the quality figures of `bench retarget`).
pub fn exact_kept_columns<P: Pixel>(img: &Plane<P>, target: usize, kind: Energy) -> Plane<u32> {
    let mut c = Carver::new(img.to_packed(), None, kind, true);
    for _ in target..img.width() {
        c.find_seam();
        c.remove_seam();
    }
    c.origin.expect("origin is tracked").to_packed()
}

/// Changes the width by `delta` seams (negative: remove).
fn carve_width<P: Pixel>(
    img: Plane<P>,
    mask: Option<Plane<i8>>,
    target: usize,
    kind: Energy,
) -> (Plane<P>, Option<Plane<i8>>) {
    let w = img.width();
    if target < w {
        shrink_width(img, mask, w - target, kind)
    } else if target > w {
        enlarge_width(img, mask, target - w, kind)
    } else {
        (img, mask)
    }
}

fn transpose_pair<P: Pixel>(
    img: Plane<P>,
    mask: Option<Plane<i8>>,
) -> (Plane<P>, Option<Plane<i8>>) {
    (img.transposed(), mask.map(|m| m.transposed()))
}

/// Seam-carves `src` to `target_w`×`target_h`. Each target must be from 1 to
/// twice the input. Shrinking both sides removes, at each step, the cheaper
/// of the best vertical and best horizontal seam until one target is met,
/// then carries on in the other dimension; enlarging comes after shrinking.
pub fn retarget<P: Pixel>(
    src: &Plane<P>,
    target_w: usize,
    target_h: usize,
    opts: &CarveOptions,
) -> Result<Plane<P>> {
    let (w, h) = (src.width(), src.height());
    check_target("width", target_w, w)?;
    check_target("height", target_h, h)?;
    let mut mask = combine_masks(w, h, opts)?;
    let mut img = src.to_packed();
    let kind = opts.energy;

    // Both dimensions shrink: greedy order by seam cost.
    while img.width() > target_w && img.height() > target_h {
        let mut vertical = Carver::new(img.clone(), mask.clone(), kind, false);
        let (timg, tmask) = transpose_pair(img.clone(), mask.clone());
        let mut horizontal = Carver::new(timg, tmask, kind, false);
        let cv = vertical.find_seam();
        let ch = horizontal.find_seam();
        if cv <= ch {
            vertical.remove_seam();
            img = vertical.img.to_packed();
            mask = vertical.mask.map(|m| m.to_packed());
        } else {
            horizontal.remove_seam();
            let (i, m) = transpose_pair(
                horizontal.img.to_packed(),
                horizontal.mask.map(|m| m.to_packed()),
            );
            img = i;
            mask = m;
        }
    }
    let (img, mask) = carve_width(img, mask, target_w, kind);
    if img.height() != target_h {
        let (timg, tmask) = transpose_pair(img, mask);
        let (timg, _) = carve_width(timg, tmask, target_h, kind);
        return Ok(timg.transposed());
    }
    Ok(img)
}

pub(crate) fn check_target(side: &str, target: usize, input: usize) -> Result<()> {
    if target == 0 || target > 2 * input {
        return Err(Error::bad_value(
            "retarget",
            side,
            target,
            format!(
                "the target {side} must be between 1 and 2× the input {side} ({})",
                2 * input
            ),
        ));
    }
    Ok(())
}

pub static SPEC: OpSpec = OpSpec {
    name: "retarget",
    summary: "content-aware resize by seam carving (changes the frame size)",
    params: &[
        ParamSpec::optional(
            "width",
            Kind::Size,
            "target width, 1 to 2× the input (default: unchanged)",
        ),
        ParamSpec::optional(
            "height",
            Kind::Size,
            "target height, 1 to 2× the input (default: unchanged)",
        ),
        ParamSpec::new(
            "energy",
            Kind::Choice(&["basic", "sobel3", "sobel5", "forward"]),
            "forward",
            "pixel importance",
        ),
        ParamSpec::optional(
            "mode",
            Kind::Choice(&["exact", "fast"]),
            "exact: one seam at a time, the best result; fast: many seams at once, steered by the last frame (default: fast in `run`, exact in `image`)",
        ),
        ParamSpec::new(
            "passes",
            Kind::Int { min: 1, max: 64 },
            "4",
            "fast mode: passes per frame (more: closer to exact, slower)",
        ),
        ParamSpec::new(
            "coherence",
            Kind::Int { min: 0, max: 64 },
            "2",
            "fast mode: luma levels a seam pays per pixel it moves from the last frame's (0: no memory)",
        ),
        ParamSpec::new(
            "cut",
            Kind::Int { min: 1, max: 255 },
            "30",
            "fast mode: mean luma change that counts as a scene cut (seams start afresh)",
        ),
        ParamSpec::new(
            "noise",
            Kind::Int { min: 0, max: 255 },
            "6",
            "fast mode: luma change taken for sensor noise (seams of a still scene hold still)",
        ),
        ParamSpec::optional(
            "protect",
            Kind::Path,
            "mask image (white = never carve), same size as the frame",
        ),
        ParamSpec::optional(
            "remove",
            Kind::Path,
            "mask image (white = carve first), same size as the frame",
        ),
    ],
    example: "retarget:width=75%,energy=forward",
};

/// How seams are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One seam at a time, each the best of the frame as it is.
    Exact,
    /// Many seams per pass, steered by the last frame (src/ops/retarget_fast.rs).
    Fast,
}

/// The `retarget` operation with its masks loaded.
#[derive(Debug)]
pub struct Retarget {
    pub width: Option<SizeSpec>,
    pub height: Option<SizeSpec>,
    pub energy: Energy,
    /// `None`: not given; [`Op::streaming`] makes it fast, otherwise exact.
    pub mode: Option<Mode>,
    pub fast: FastParams,
    pub protect: Option<Plane<u8>>,
    pub remove: Option<Plane<u8>>,
    /// Fast mode's memory of the last frame.
    pub state: FastState,
}

fn load_mask(p: &Params, key: &str) -> Result<Option<Plane<u8>>> {
    let Some(path) = p.path(key) else {
        return Ok(None);
    };
    let frame = crate::io::load_image(path)
        .map_err(|e| Error::bad_value("retarget", key, path.display(), e.to_string()))?;
    Ok(Some(frame.luma().map(|v| (v >= 128) as u8)))
}

/// Fast mode's parameters from a `retarget` op's.
pub fn fast_params(p: &Params) -> Result<FastParams> {
    let energy = Energy::parse(p.word("energy")?).ok_or_else(|| {
        Error::bad_value(
            "retarget",
            "energy",
            p.word("energy").unwrap_or(""),
            "unknown energy",
        )
    })?;
    Ok(FastParams {
        energy,
        passes: p.usize("passes")?,
        coherence: p.usize("coherence")? as u32,
        cut: p.usize("cut")? as u32,
        noise: p.usize("noise")? as u32,
    })
}

pub fn build(p: &Params) -> Result<OpBox> {
    let mode = match p.get("mode") {
        None => None,
        Some(_) if p.word("mode")? == "fast" => Some(Mode::Fast),
        Some(_) => Some(Mode::Exact),
    };
    let energy = Energy::parse(p.word("energy")?).ok_or_else(|| {
        Error::bad_value(
            "retarget",
            "energy",
            p.word("energy").unwrap_or(""),
            "unknown energy",
        )
    })?;
    Ok(Box::new(Retarget {
        width: p.size("width"),
        height: p.size("height"),
        energy,
        mode,
        fast: fast_params(p)?,
        protect: load_mask(p, "protect")?,
        remove: load_mask(p, "remove")?,
        state: FastState::default(),
    }))
}

impl Retarget {
    fn target(&self, w: usize, h: usize) -> Result<(usize, usize)> {
        target_size(self.width, self.height, w, h)
    }
}

/// The target size for a w×h input (unchanged where a side is not given),
/// or an error naming the side out of range.
pub(crate) fn target_size(
    width: Option<SizeSpec>,
    height: Option<SizeSpec>,
    w: usize,
    h: usize,
) -> Result<(usize, usize)> {
    let tw = width.map_or(w, |s| s.resolve(w));
    let th = height.map_or(h, |s| s.resolve(h));
    check_target("width", tw, w)?;
    check_target("height", th, h)?;
    Ok((tw, th))
}

impl Op for Retarget {
    fn name(&self) -> &'static str {
        "retarget"
    }

    fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        self.target(width, height)
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let (tw, th) = self.target(frame.width(), frame.height())?;
        let opts = CarveOptions {
            energy: self.energy,
            protect: self.protect.as_ref(),
            remove: self.remove.as_ref(),
        };
        if self.mode == Some(Mode::Fast) {
            let (params, state) = (&self.fast, &mut self.state);
            return Ok(match frame {
                Frame::Rgba(p) => {
                    Frame::Rgba(retarget_fast::<Rgba>(p, tw, th, &opts, params, state)?)
                }
                Frame::Gray(p) => {
                    Frame::Gray(retarget_fast::<u8>(p, tw, th, &opts, params, state)?)
                }
            });
        }
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(retarget::<Rgba>(p, tw, th, &opts)?),
            Frame::Gray(p) => Frame::Gray(retarget::<u8>(p, tw, th, &opts)?),
        })
    }

    fn streaming(&mut self) {
        self.mode.get_or_insert(Mode::Fast);
    }

    fn cuda(&self) -> Result<Box<dyn crate::cuda::GpuOp>> {
        Ok(Box::new(crate::cuda::ops::retarget::GpuRetarget::new(self)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The energies whose cumulative map is seed 000's figure 2.6.
    fn seed_energy() -> Plane<u32> {
        let cum = [
            [9, 10, 12, 15],
            [9, 6, 13, 16],
            [13, 5, 15, 9],
            [2, 8, 6, 5],
        ];
        Plane::from_fn(4, 4, |x, y| {
            if y == 3 {
                return cum[3][x];
            }
            let below = &cum[y + 1];
            let m = (x.saturating_sub(1)..=(x + 1).min(3))
                .map(|i| below[i])
                .min()
                .unwrap();
            cum[y][x] - m
        })
    }

    #[test]
    fn seam_of_seed_example_is_0_1_1_0() {
        let (seam, total) = vertical_seam(&seed_energy());
        assert_eq!(seam, vec![0, 1, 1, 0]);
        assert_eq!(total, 9);
    }

    #[test]
    fn ties_go_to_centre_then_left_then_right() {
        // Flat energy: every step ties; the seam goes straight down column 0.
        let flat = Plane::new(5, 4, 1u32);
        assert_eq!(vertical_seam(&flat).0, vec![0, 0, 0, 0]);
        // Left and right tie below the centre: left wins.
        let e = Plane::from_fn(
            3,
            2,
            |x, y| if y == 0 { [9, 0, 9][x] } else { [1, 5, 1][x] },
        );
        assert_eq!(vertical_seam(&e).0, vec![1, 0]);
        // Only the right is cheaper: right.
        let e = Plane::from_fn(
            3,
            2,
            |x, y| if y == 0 { [9, 0, 9][x] } else { [5, 5, 1][x] },
        );
        assert_eq!(vertical_seam(&e).0, vec![1, 2]);
    }

    /// Every seam of a small frame, as columns from top to bottom.
    fn all_seams(w: usize, h: usize) -> Vec<Vec<usize>> {
        let mut seams: Vec<Vec<usize>> = (0..w).map(|x| vec![x]).collect();
        for _ in 1..h {
            seams = seams
                .into_iter()
                .flat_map(|s| {
                    let x = *s.last().unwrap() as isize;
                    (x - 1..=x + 1)
                        .filter(|&n| n >= 0 && (n as usize) < w)
                        .map(move |n| {
                            let mut t = s.clone();
                            t.push(n as usize);
                            t
                        })
                })
                .collect();
        }
        seams
    }

    fn forward_cost(luma: &Plane<u8>, seam: &[usize]) -> i64 {
        let (w, h) = (luma.width(), luma.height());
        let (mut c, mut l, mut r) = (vec![0; w], vec![0; w], vec![0; w]);
        let mut total = 0;
        for y in 0..h {
            forward_steps(luma, y, &mut c, &mut l, &mut r);
            let x = seam[y];
            total += match seam.get(y + 1).map(|&n| n as isize - x as isize) {
                None | Some(0) => c[x],
                Some(-1) => l[x],
                _ => r[x],
            };
        }
        total
    }

    #[test]
    fn dp_finds_the_cheapest_of_all_seams() {
        let mut s = 99u32;
        let mut rnd = move || {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (s >> 16) as u8
        };
        for (w, h) in [(1, 1), (1, 4), (2, 3), (3, 3), (5, 4), (4, 5), (6, 3)] {
            for _ in 0..20 {
                let luma = Plane::from_fn(w, h, |_, _| rnd() % 8);
                let energy = energy_map(&luma, Energy::Basic);
                let (seam, total) = vertical_seam(&energy);
                let cost = |s: &[usize]| {
                    s.iter()
                        .enumerate()
                        .map(|(y, &x)| energy.get(x, y) as i64)
                        .sum::<i64>()
                };
                let best = all_seams(w, h).iter().map(|s| cost(s)).min().unwrap();
                assert_eq!((total, cost(&seam)), (best, best), "basic {w}x{h}");

                let mut c = Carver::new(luma.clone(), None, Energy::Forward, false);
                let total = c.find_seam();
                let best = all_seams(w, h)
                    .iter()
                    .map(|s| forward_cost(&luma, s))
                    .min()
                    .unwrap();
                assert_eq!(
                    (total, forward_cost(&luma, &c.seam)),
                    (best, best),
                    "forward {w}x{h}"
                );
            }
        }
    }

    #[test]
    fn isqrt_is_exact() {
        for n in 0..20_000u64 {
            let r = isqrt(n);
            assert!(r * r <= n && (r + 1) * (r + 1) > n, "{n}");
        }
        assert_eq!(isqrt(u32::MAX as u64 * 64), 524_287);
    }

    #[test]
    fn basic_energy_is_zero_on_flat_interior_and_counts_the_outside_as_zero() {
        let luma = Plane::new(4, 3, 10u8);
        let e = energy_map(&luma, Energy::Basic);
        assert_eq!(e.get(1, 1), 0);
        // Last column: right and diagonal neighbours are outside (0).
        assert_eq!(e.get(3, 0), 181 * 10 + 128 * 10);
        assert_eq!(e.get(3, 2), 181 * 20 + 128 * 10);
    }

    #[test]
    fn band_update_equals_full_recompute() {
        for kind in [Energy::Basic, Energy::Sobel3, Energy::Sobel5] {
            let mut s = 7u32;
            let img = Plane::from_fn(23, 11, |_, _| {
                s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
                (s >> 16) as u8
            });
            let mut c = Carver::new(img, None, kind, false);
            for _ in 0..15 {
                c.find_seam();
                c.remove_seam();
                let full = energy_map(&c.luma.to_packed(), kind);
                assert_eq!(
                    c.energy.to_packed(),
                    full,
                    "{kind:?} at width {}",
                    c.img.width()
                );
            }
        }
    }

    #[test]
    fn forward_energy_prefers_the_seam_that_leaves_no_new_edge() {
        // A diagonal step edge: removing along the edge creates no new edges.
        let img = Plane::from_fn(8, 6, |x, y| if x > y { 200u8 } else { 20 });
        let mut c = Carver::new(img.clone(), None, Energy::Forward, false);
        c.find_seam();
        // Each removed pixel sits next to the edge, one per row, moving right.
        for w in c.seam.windows(2) {
            assert!(w[1] as isize - w[0] as isize <= 1 && w[0] as isize - w[1] as isize <= 1);
        }
        let out = retarget(&img, 7, 6, &CarveOptions::default()).unwrap();
        // No row gains a third level: the edge stays a clean step.
        for y in 0..6 {
            assert!(
                out.row(y).iter().all(|&v| v == 20 || v == 200),
                "row {y}: {:?}",
                out.row(y)
            );
        }
    }

    #[test]
    fn enlarging_inserts_means_beside_the_seam() {
        let img = Plane::from_fn(4, 1, |x, _| [0u8, 30, 60, 90][x]);
        let out = retarget(
            &img,
            5,
            1,
            &CarveOptions {
                energy: Energy::Basic,
                ..Default::default()
            },
        )
        .unwrap();
        assert_eq!(out.width(), 5);
        // Every source pixel is still there in order, plus one mean.
        let row = out.row(0).to_vec();
        let mut it = row.iter();
        for v in [0u8, 30, 60, 90] {
            assert!(it.any(|&r| r == v), "{row:?}");
        }
    }

    #[test]
    fn target_out_of_range_is_an_error_naming_the_range() {
        let img = Plane::new(10, 4, 0u8);
        let e = retarget(&img, 21, 4, &CarveOptions::default())
            .unwrap_err()
            .to_string();
        assert!(e.contains("width=21") && e.contains("(20)"), "{e}");
        assert!(retarget(&img, 0, 4, &CarveOptions::default()).is_err());
        assert!(retarget(&img, 10, 9, &CarveOptions::default()).is_err());
    }

    #[test]
    fn mask_of_another_size_is_an_error() {
        let img = Plane::new(10, 4, 0u8);
        let mask = Plane::new(9, 4, 1u8);
        let e = retarget(
            &img,
            8,
            4,
            &CarveOptions {
                protect: Some(&mask),
                ..Default::default()
            },
        )
        .unwrap_err();
        assert!(e.to_string().contains("9x4"), "{e}");
    }
}
