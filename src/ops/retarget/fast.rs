//! `retarget` in fast mode (`mode=fast`, the default in `run`): seam carving
//! for video, many seams per dynamic programme, steered by the last frame.
//!
//! Exact mode finds one seam, removes it and starts again; fast mode removes
//! `k` seams per pass in a few passes (`passes`, default [`DEFAULT_PASSES`]).
//! A pass, on a w×h frame (the GPU does the same steps in the same integers,
//! so both give the same frames):
//!
//! 1. The cost of each pixel: its energy (as exact mode; zero for `forward`,
//!    whose step costs come in the DP), plus, when the last frame carved a
//!    frame of this size, the *temporal cost*
//!    `coherence · unit · min(d, DISTANCE_CAP)`, where d is the distance in
//!    the row to the nearest seam the same pass took in the last frame and
//!    `unit` is one luma level in the energy's scale ([`luma_unit`]). Seams
//!    stay where they were unless the picture gives a reason to move.
//! 2. One DP over the whole frame, exactly exact mode's (same costs, masks,
//!    ties), keeping every pixel's step.
//! 3. The k starts: the k least top-row costs (ties to the smaller column),
//!    in column order. Each follows its steps down. Paths never cross, but
//!    they merge where valleys join.
//! 4. Row by row, merged paths are spread apart: with desired columns d_i
//!    (non-decreasing in i), R_i = i + max_{j≤i}(d_j − j) pushes them right
//!    and L_i = i + min_{j≥i}(d_j − j) left; the seam takes ⌊(L_i + R_i)/2⌋,
//!    clamped to [i, n − k + i]. The result strictly increases, so each row
//!    loses k distinct pixels, and a cluster spreads evenly around where it
//!    wanted to be. Columns are counted among unprotected pixels only (a
//!    protect mask is never carved while a row has k unprotected pixels).
//! 5. The k pixels of each row are removed.
//!
//! Enlarging finds its seams the same way on a copy and inserts beside them,
//! as exact mode does. Both sides: the width first, then the height (exact
//! mode's greedy order needs one seam at a time). A scene cut (the luma
//! changes by more than `cut` levels on average) forgets the last frame.

use rayon::prelude::*;

use super::dp::{DpInput, DpScratch, dp_sweep};
use super::energy::{Energy, energy_map, luma_unit};
use super::exact::insert_chosen;
use super::{CarveOptions, MASK_PROTECT, check_target, combine_masks};
use crate::error::Result;
use crate::frame::Plane;
use crate::ops::pixel::Pixel;

/// Passes per frame unless the op says otherwise.
pub const DEFAULT_PASSES: usize = 4;
/// Temporal cost per pixel of distance, in luma levels, unless the op says
/// otherwise.
pub const DEFAULT_COHERENCE: u32 = 2;
/// Mean luma change (levels) that counts as a scene cut.
pub const DEFAULT_CUT: u32 = 30;
/// Luma change (levels) taken for sensor noise unless the op says otherwise.
pub const DEFAULT_NOISE: u32 = 6;
/// The temporal cost stops growing this far (pixels) from the last seams.
pub const DISTANCE_CAP: u32 = 8;
/// Cut detection compares the luma on a grid of this spacing.
const CUT_GRID: usize = 8;

/// Fast mode's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastParams {
    pub energy: Energy,
    pub passes: usize,
    pub coherence: u32,
    pub cut: u32,
    pub noise: u32,
}

impl Default for FastParams {
    fn default() -> Self {
        Self {
            energy: Energy::Forward,
            passes: DEFAULT_PASSES,
            coherence: DEFAULT_COHERENCE,
            cut: DEFAULT_CUT,
            noise: DEFAULT_NOISE,
        }
    }
}

impl FastParams {
    /// The temporal cost per pixel of distance.
    pub fn step_cost(&self) -> u32 {
        self.coherence * luma_unit(self.energy)
    }
}

/// The seams one pass took: `k` columns per row, increasing, row-major, on a
/// frame of `width`×`height`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PassSeams {
    pub width: usize,
    pub height: usize,
    pub k: usize,
    pub cols: Vec<u32>,
}

impl PassSeams {
    fn row(&self, y: usize) -> &[u32] {
        &self.cols[y * self.k..(y + 1) * self.k]
    }
}

/// What a dimension remembers from the last frame: where its DP paths went
/// (before they were spread apart), in the input frame's columns, sorted per
/// row. Paths, not the pixels removed, because on an unchanged frame the
/// paths are a fixed point: pixels on them pay no temporal cost, so the DP
/// finds them again, while spreading would drift.
#[derive(Clone, Debug, Default)]
pub struct Memory {
    pub paths: Option<PassSeams>,
}

impl Memory {
    /// The last frame's paths, if it took as many from a frame of this size.
    fn last(&self, w: usize, h: usize, k: usize) -> Option<&PassSeams> {
        self.paths
            .as_ref()
            .filter(|s| (s.width, s.height, s.k) == (w, h, k))
    }
}

/// Everything fast mode keeps between frames.
#[derive(Clone, Debug, Default)]
pub struct FastState {
    pub vertical: Memory,
    pub horizontal: Memory,
    /// The luma the seams are searched on: each pixel follows the input
    /// only when it changes by more than the noise level, so that sensor
    /// noise on a still scene moves no seam.
    held: Plane<u8>,
    /// Frames that started afresh after a cut (for reports and tests).
    pub cuts: u64,
}

impl FastState {
    /// Takes the next input's luma: forgets the last frame on a cut (the
    /// luma on a grid changes by more than `cut` levels on average) or a new
    /// size, and returns the luma to search seams on.
    pub fn observe(&mut self, luma: &Plane<u8>, params: &FastParams) -> &Plane<u8> {
        let held = &mut self.held;
        let same_size = (held.width(), held.height()) == (luma.width(), luma.height());
        let cut = !same_size || {
            let (mut diff, mut n) = (0u64, 0u64);
            for y in (0..luma.height()).step_by(CUT_GRID) {
                let (a, b) = (luma.row(y), held.row(y));
                for x in (0..luma.width()).step_by(CUT_GRID) {
                    diff += a[x].abs_diff(b[x]) as u64;
                    n += 1;
                }
            }
            diff > params.cut as u64 * n
        };
        if cut {
            if !held.is_empty() {
                self.cuts += 1;
            }
            self.vertical = Memory::default();
            self.horizontal = Memory::default();
            *held = luma.to_packed();
        } else {
            let noise = params.noise;
            held.par_rows_mut().for_each(|(y, row)| {
                for (h, &v) in row.iter_mut().zip(luma.row(y)) {
                    if v.abs_diff(*h) as u32 > noise {
                        *h = v;
                    }
                }
            });
        }
        &self.held
    }
}

/// The number of seams of each pass when `count` are removed in `passes`.
pub fn pass_sizes(count: usize, passes: usize) -> Vec<usize> {
    let passes = passes.clamp(1, count.max(1));
    (0..passes)
        .map(|p| count / passes + usize::from(p < count % passes))
        .filter(|&k| k > 0)
        .collect()
}

/// Adds the temporal cost to `energy` in place: each pixel pays `step` per
/// pixel of distance from its original column (`origin`) to the nearest
/// of the last frame's paths in its row (`last`), up to
/// [`DISTANCE_CAP`].
pub fn add_temporal_cost(
    energy: &mut Plane<u32>,
    origin: &Plane<u32>,
    last: &PassSeams,
    step: u32,
) {
    energy.par_rows_mut().for_each(|(y, row)| {
        let seams = last.row(y);
        let mut j = 0;
        for (e, &x) in row.iter_mut().zip(origin.row(y)) {
            while j + 1 < seams.len() && seams[j + 1] <= x {
                j += 1;
            }
            let mut d = seams[j].abs_diff(x);
            if let Some(&n) = seams.get(j + 1) {
                d = d.min(n.abs_diff(x));
            }
            *e += step * d.min(DISTANCE_CAP);
        }
    });
}

/// The k starts: the k least costs of the top row (ties to the smaller
/// column), in column order.
pub fn pick_starts(top: &[i64], k: usize) -> Vec<usize> {
    let mut order: Vec<usize> = (0..top.len()).collect();
    order.sort_unstable_by_key(|&x| (top[x], x));
    order.truncate(k);
    order.sort_unstable();
    order
}

/// Spreads merged paths apart in one row: `desired` (non-decreasing, in
/// the ranks of the `n` usable columns) to k strictly increasing ranks in
/// [0, n), as the module's step 4 says.
pub fn spread(desired: &[i64], n: i64, out: &mut [i64]) {
    let k = desired.len() as i64;
    // R_i, then the left push from the right, averaged in place.
    let mut run = i64::MIN;
    for (i, (&d, o)) in desired.iter().zip(out.iter_mut()).enumerate() {
        run = run.max(d - i as i64);
        *o = i as i64 + run;
    }
    let mut run = i64::MAX;
    for (i, (&d, o)) in desired.iter().zip(out.iter_mut()).enumerate().rev() {
        let i = i as i64;
        run = run.min(d - i);
        let mid = (*o + i + run).div_euclid(2);
        *o = mid.clamp(i, n - k + i);
    }
}

/// The paths from `starts` through the DP's steps: `k` columns per row,
/// non-decreasing (paths never cross), row-major.
fn trace_paths(scratch: &DpScratch, starts: &[usize], h: usize) -> Vec<u32> {
    let k = starts.len();
    let mut seam_major = vec![0u32; k * h];
    seam_major
        .par_chunks_mut(h.max(1))
        .zip(starts)
        .for_each(|(path, &x)| scratch.trace(x, h, |y, c| path[y] = c as u32));
    let mut paths = vec![0u32; k * h];
    paths
        .par_chunks_mut(k.max(1))
        .enumerate()
        .for_each(|(y, row)| {
            for (i, r) in row.iter_mut().enumerate() {
                *r = seam_major[i * h + y];
            }
        });
    paths
}

/// Places one pass's seams: `paths` (k per row, row-major) spread apart row
/// by row among the unprotected columns. Returns `k` increasing columns per
/// row, row-major.
fn place_seams(paths: &[u32], k: usize, mask: Option<&Plane<i8>>, w: usize) -> Vec<u32> {
    let mut cols = vec![0u32; paths.len()];
    cols.par_chunks_mut(k.max(1))
        .zip(paths.par_chunks(k.max(1)))
        .enumerate()
        .for_each(|(y, (row, path))| {
            let mut desired: Vec<i64> = path.iter().map(|&c| c as i64).collect();
            let mut out = vec![0i64; k];
            let free: Option<Vec<u32>> = mask.and_then(|m| {
                let free: Vec<u32> = (0..w as u32)
                    .filter(|&x| m.get(x as usize, y) != MASK_PROTECT)
                    .collect();
                (free.len() >= k).then_some(free)
            });
            match &free {
                Some(free) => {
                    for d in &mut desired {
                        *d = free.partition_point(|&c| (c as i64) < *d) as i64;
                    }
                    spread(&desired, free.len() as i64, &mut out);
                    for (r, &o) in row.iter_mut().zip(&out) {
                        *r = free[o as usize];
                    }
                }
                None => {
                    spread(&desired, w as i64, &mut out);
                    for (r, &o) in row.iter_mut().zip(&out) {
                        *r = o as u32;
                    }
                }
            }
        });
    cols
}

/// Removes the `k` increasing columns of each row of `cols` from `plane`.
pub fn remove_columns<T: Copy + Send + Sync>(plane: &mut Plane<T>, cols: &[u32], k: usize) {
    if k == 0 {
        return;
    }
    let w = plane.width();
    plane.par_rows_mut().for_each(|(y, row)| {
        let c = &cols[y * k..(y + 1) * k];
        let mut to = c[0] as usize;
        for (j, &x) in c.iter().enumerate() {
            let from = x as usize + 1;
            let end = c.get(j + 1).map_or(w, |&n| n as usize);
            row.copy_within(from..end, to);
            to += end - from;
        }
    });
    plane.set_width(w - k);
}

/// One pass's result: where the DP's paths went, and the seams placed.
#[derive(Clone, Debug)]
pub struct Pass {
    pub paths: PassSeams,
    pub seams: PassSeams,
}

/// One pass: finds `k` seams of a frame from its luma, steered towards the
/// last frame's paths (`last`, in original columns; each pixel's original
/// column in `origin`).
pub fn find_pass(
    luma: &Plane<u8>,
    mask: Option<&Plane<i8>>,
    k: usize,
    params: &FastParams,
    last: Option<(&Plane<u32>, &PassSeams)>,
) -> Pass {
    let (w, h) = (luma.width(), luma.height());
    let mut energy = energy_map(luma, params.energy);
    if let Some((origin, last)) = last
        && params.coherence > 0
    {
        add_temporal_cost(&mut energy, origin, last, params.step_cost());
    }
    let input = DpInput {
        energy: &energy,
        mask,
        forward_luma: (params.energy == Energy::Forward).then_some(luma),
    };
    let mut scratch = DpScratch::default();
    dp_sweep(&input, &mut scratch);
    let starts = pick_starts(scratch.top(), k);
    let paths = trace_paths(&scratch, &starts, h);
    let seams = place_seams(&paths, k, mask, w);
    let frame = |cols| PassSeams {
        width: w,
        height: h,
        k,
        cols,
    };
    Pass {
        paths: frame(paths),
        seams: frame(seams),
    }
}

/// The state of a frame being carved along vertical seams in passes.
struct FastCarver<P> {
    img: Plane<P>,
    /// The luma seams are searched on (the held luma, carved alongside).
    luma: Plane<u8>,
    mask: Option<Plane<i8>>,
    /// Original column of each pixel.
    origin: Plane<u32>,
}

impl<P: Pixel> FastCarver<P> {
    fn new(img: &Plane<P>, luma: &Plane<u8>, mask: Option<&Plane<i8>>) -> Self {
        let (w, h) = (img.width(), img.height());
        Self {
            img: img.to_packed(),
            luma: luma.to_packed(),
            mask: mask.map(|m| m.to_packed()),
            origin: Plane::from_fn(w, h, |x, _| x as u32),
        }
    }

    /// Removes `count` seams in passes, steered by `memory`, which then
    /// holds this frame's paths.
    fn shrink(&mut self, count: usize, params: &FastParams, memory: &mut Memory) {
        let (w0, h) = (self.img.width(), self.img.height());
        let last = memory.last(w0, h, count).cloned();
        let mut paths: Vec<Vec<u32>> = vec![Vec::with_capacity(count); h];
        for k in pass_sizes(count, params.passes) {
            let pass = find_pass(
                &self.luma,
                self.mask.as_ref(),
                k,
                params,
                last.as_ref().map(|l| (&self.origin, l)),
            );
            for (y, row) in paths.iter_mut().enumerate() {
                let origin = self.origin.row(y);
                row.extend(pass.paths.row(y).iter().map(|&x| origin[x as usize]));
            }
            let cols = &pass.seams.cols;
            remove_columns(&mut self.img, cols, k);
            remove_columns(&mut self.luma, cols, k);
            if let Some(m) = &mut self.mask {
                remove_columns(m, cols, k);
            }
            remove_columns(&mut self.origin, cols, k);
        }
        memory.paths = Some(PassSeams {
            width: w0,
            height: h,
            k: count,
            cols: paths
                .into_iter()
                .flat_map(|mut row| {
                    row.sort_unstable();
                    row
                })
                .collect(),
        });
    }
}

/// Changes the width of `img` to `target` in fast mode, searching seams on
/// `luma` (the frame's, or the held luma of a stream).
pub fn carve_width_fast<P: Pixel>(
    img: Plane<P>,
    luma: Plane<u8>,
    mask: Option<Plane<i8>>,
    target: usize,
    params: &FastParams,
    memory: &mut Memory,
) -> (Plane<P>, Plane<u8>, Option<Plane<i8>>) {
    let w = img.width();
    if target < w {
        let mut c = FastCarver::new(&img, &luma, mask.as_ref());
        c.shrink(w - target, params, memory);
        return (c.img, c.luma, c.mask);
    }
    let (mut img, mut luma, mut mask) = (img, luma, mask);
    let mut left = target - w;
    while left > 0 {
        let (w, h) = (img.width(), img.height());
        let round = left.min((w / 2).max(1));
        let mut c = FastCarver::new(&img, &luma, mask.as_ref());
        c.shrink(round, params, memory);
        let mut chosen = Plane::new(w, h, true);
        for y in 0..h {
            for &x in c.origin.row(y) {
                chosen.set(x as usize, y, false);
            }
        }
        (img, mask) = insert_chosen(&img, mask.as_ref(), &chosen);
        // Inserted pixels have no held luma: the next round reads the frame.
        luma = img.map(|p| p.luma());
        left -= round;
    }
    (img, luma, mask)
}

/// The original column of every pixel fast mode keeps when it carves a
/// frame with luma `luma` to `target` columns, steered by and updating
/// `memory` (for the quality figures).
pub fn fast_kept_columns(
    luma: &Plane<u8>,
    target: usize,
    params: &FastParams,
    memory: &mut Memory,
) -> Plane<u32> {
    let mut c = FastCarver::new(luma, luma, None);
    c.shrink(luma.width().saturating_sub(target), params, memory);
    c.origin
}

/// Seam-carves one frame of a video to `target_w`×`target_h` in fast mode,
/// remembering its seams in `state` for the next frame.
pub fn retarget_fast<P: Pixel>(
    src: &Plane<P>,
    target_w: usize,
    target_h: usize,
    opts: &CarveOptions,
    params: &FastParams,
    state: &mut FastState,
) -> Result<Plane<P>> {
    let (w, h) = (src.width(), src.height());
    check_target("width", target_w, w)?;
    check_target("height", target_h, h)?;
    let mask = combine_masks(w, h, opts)?;
    let luma = state.observe(&src.map(|p| p.luma()), params).clone();
    let (img, luma, mask) = carve_width_fast(
        src.to_packed(),
        luma,
        mask,
        target_w,
        params,
        &mut state.vertical,
    );
    if img.height() == target_h {
        return Ok(img);
    }
    let (timg, _, _) = carve_width_fast(
        img.transposed(),
        luma.transposed(),
        mask.map(|m| m.transposed()),
        target_h,
        params,
        &mut state.horizontal,
    );
    Ok(timg.transposed())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn noise(w: usize, h: usize, seed: u32) -> Plane<u8> {
        let mut s = seed;
        Plane::from_fn(w, h, |_, _| {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            (s >> 16) as u8
        })
    }

    #[test]
    fn spread_keeps_free_paths_and_centres_merged_ones() {
        let mut out = vec![0; 3];
        spread(&[1, 5, 9], 10, &mut out);
        assert_eq!(out, [1, 5, 9]);
        // Three paths merged at 5 spread to 4, 5, 6.
        spread(&[5, 5, 5], 10, &mut out);
        assert_eq!(out, [4, 5, 6]);
        // At the edges the clamp keeps them inside and distinct.
        spread(&[0, 0, 0], 10, &mut out);
        assert_eq!(out, [0, 1, 2]);
        spread(&[9, 9, 9], 10, &mut out);
        assert_eq!(out, [7, 8, 9]);
    }

    #[test]
    fn spread_is_strictly_increasing_and_in_range_for_any_input() {
        let mut s = 5u32;
        for _ in 0..2000 {
            s = s.wrapping_mul(1_103_515_245).wrapping_add(12_345);
            let n = 1 + (s >> 16) as i64 % 40;
            let k = 1 + (s >> 8) as usize % n as usize;
            let mut d: Vec<i64> = (0..k)
                .map(|i| ((s >> (i % 16)) as i64 * 7 + i as i64) % (n + 3))
                .collect();
            d.sort_unstable();
            let mut out = vec![0; k];
            spread(&d, n, &mut out);
            assert!(out.windows(2).all(|p| p[0] < p[1]), "{d:?} -> {out:?}");
            assert!(out[0] >= 0 && out[k - 1] < n, "{d:?} -> {out:?} (n {n})");
        }
    }

    #[test]
    fn pass_sizes_add_up() {
        assert_eq!(pass_sizes(480, 4), [120, 120, 120, 120]);
        assert_eq!(pass_sizes(10, 4), [3, 3, 2, 2]);
        assert_eq!(pass_sizes(2, 4), [1, 1]);
        assert!(pass_sizes(0, 4).is_empty());
    }

    #[test]
    fn every_row_loses_exactly_its_seams() {
        let luma = noise(37, 19, 3);
        let img = luma.map(|v| v as u32 * 1000 + 7);
        let seams = find_pass(&luma, None, 9, &FastParams::default(), None).seams;
        let mut out = img.clone();
        remove_columns(&mut out, &seams.cols, 9);
        assert_eq!(out.width(), 28);
        for y in 0..19 {
            let row = seams.row(y);
            assert!(row.windows(2).all(|p| p[0] < p[1]), "row {y}: {row:?}");
            let kept: Vec<u32> = (0..37)
                .filter(|x| !row.contains(&(*x as u32)))
                .map(|x| img.get(x, y))
                .collect();
            assert_eq!(out.to_packed().row(y), &kept[..], "row {y}");
        }
    }

    #[test]
    fn one_seam_is_the_exact_seam() {
        // With k = 1 nothing merges: the pass is exact mode's seam.
        for kind in [Energy::Basic, Energy::Forward, Energy::Sobel3] {
            let luma = noise(23, 17, 11);
            let params = FastParams {
                energy: kind,
                ..Default::default()
            };
            let seams = find_pass(&luma, None, 1, &params, None).seams;
            let (seam, _) = super::super::vertical_seam(&energy_map(&luma, kind));
            if kind != Energy::Forward {
                let got: Vec<usize> = seams.cols.iter().map(|&c| c as usize).collect();
                assert_eq!(got, seam, "{kind:?}");
            }
            let exact = super::super::exact_kept_columns(&luma, 22, kind);
            for y in 0..17 {
                assert!(!exact.row(y).contains(&seams.cols[y]), "{kind:?} row {y}");
            }
        }
    }

    #[test]
    fn protected_pixels_are_never_carved() {
        let protect = Plane::from_fn(40, 12, |x, _| u8::from((10..20).contains(&x)));
        let marker = Plane::from_fn(40, 12, |x, y| [x as u8, y as u8, 0, 255]);
        let opts = CarveOptions {
            energy: Energy::Forward,
            protect: Some(&protect),
            remove: None,
        };
        let out = retarget_fast(
            &marker,
            25,
            12,
            &opts,
            &FastParams::default(),
            &mut FastState::default(),
        )
        .unwrap();
        for y in 0..12 {
            let kept: Vec<u8> = out.row(y).iter().map(|p| p[0]).collect();
            for x in 10..20u8 {
                assert!(kept.contains(&x), "row {y} lost protected column {x}");
            }
        }
    }

    #[test]
    fn static_frames_give_the_same_output_and_a_cut_resets() {
        let a = noise(64, 20, 1);
        let b = noise(64, 20, 2);
        let params = FastParams::default();
        let opts = CarveOptions::default();
        let mut state = FastState::default();
        let first = retarget_fast(&a, 48, 20, &opts, &params, &mut state).unwrap();
        for _ in 0..3 {
            let again = retarget_fast(&a, 48, 20, &opts, &params, &mut state).unwrap();
            assert_eq!(again, first);
        }
        assert_eq!(state.cuts, 0);
        // A different picture is a cut: the result is that of a first frame.
        let after_cut = retarget_fast(&b, 48, 20, &opts, &params, &mut state).unwrap();
        assert_eq!(state.cuts, 1);
        let fresh = retarget_fast(&b, 48, 20, &opts, &params, &mut FastState::default()).unwrap();
        assert_eq!(after_cut, fresh);
    }

    #[test]
    fn temporal_cost_pulls_seams_to_where_they_were() {
        // Two equally flat valleys; the last frame's seam sat in the right
        // one, so this frame's seam stays there.
        let luma = Plane::from_fn(30, 10, |x, _| if x == 5 || x == 24 { 0 } else { 200 });
        let params = FastParams {
            energy: Energy::Basic,
            ..Default::default()
        };
        let free = find_pass(&luma, None, 1, &params, None).seams;
        assert!(free.cols.iter().all(|&c| c < 10), "{:?}", free.cols);
        let last = PassSeams {
            width: 30,
            height: 10,
            k: 1,
            cols: vec![24; 10],
        };
        let origin = Plane::from_fn(30, 10, |x, _| x as u32);
        let steered = find_pass(&luma, None, 1, &params, Some((&origin, &last))).seams;
        assert!(steered.cols.iter().all(|&c| c > 20), "{:?}", steered.cols);
    }

    #[test]
    fn widths_of_one_and_two_and_no_change_work() {
        let params = FastParams::default();
        let opts = CarveOptions::default();
        for (w, tw) in [(1, 1), (1, 2), (2, 1), (2, 2), (2, 4)] {
            let img = noise(w, 6, 5);
            let mut state = FastState::default();
            for _ in 0..3 {
                let out = retarget_fast(&img, tw, 6, &opts, &params, &mut state).unwrap();
                assert_eq!((out.width(), out.height()), (tw, 6), "{w} -> {tw}");
                if tw == w {
                    assert_eq!(out, img, "{w} -> {tw} changed the frame");
                }
                if tw < w {
                    // Every row keeps one of its own pixels.
                    for y in 0..6 {
                        assert!(img.row(y).contains(&out.get(0, y)), "row {y}");
                    }
                }
            }
        }
    }

    #[test]
    fn enlarging_and_both_sides_reach_the_target() {
        let img = noise(31, 17, 4);
        let mut state = FastState::default();
        let params = FastParams::default();
        let opts = CarveOptions::default();
        for (tw, th) in [(45, 17), (62, 20), (20, 9), (1, 1), (31, 17)] {
            let out = retarget_fast(&img, tw, th, &opts, &params, &mut state).unwrap();
            assert_eq!((out.width(), out.height()), (tw, th));
        }
        assert_eq!(
            retarget_fast(&img, 31, 17, &opts, &params, &mut state).unwrap(),
            img
        );
    }
}
