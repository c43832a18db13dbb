//! Many seams from one dynamic programme: how fast mode places the seams of
//! a new shot (and of the first frame).
//!
//! Exact mode finds one seam, removes it and starts again. Here `count`
//! seams are removed in a few passes ([`pass_sizes`]); a pass, on a w×h
//! frame (the GPU does the same steps in the same integers):
//!
//! 1. One DP over the whole frame, exactly exact mode's (same costs, masks,
//!    ties), keeping every pixel's step.
//! 2. The k starts: the k least top-row costs (ties to the smaller column),
//!    in column order. Each follows its steps down. Paths never cross, but
//!    they merge where valleys join.
//! 3. Row by row, merged paths are spread apart ([`spread`]): with desired
//!    columns d_i (non-decreasing in i), R_i = i + max_{j≤i}(d_j − j) pushes
//!    them right and L_i = i + min_{j≥i}(d_j − j) left; the seam takes
//!    ⌊(L_i + R_i)/2⌋, clamped to [i, n − k + i]. The result strictly
//!    increases, so each row loses k distinct pixels, and a cluster spreads
//!    evenly around where it wanted to be. Columns are counted among
//!    unprotected pixels only (a protect mask is never carved while a row
//!    has k unprotected pixels).
//! 4. The k pixels of each row are removed.
//!
//! Few passes stack seams side by side in the valleys (few, clean joins);
//! many passes come close to exact mode (each seam in its own valley).

use rayon::prelude::*;

use super::MASK_PROTECT;
use super::dp::{DpInput, DpScratch, dp_sweep};
use super::energy::{Energy, energy_map};
use crate::frame::Plane;

/// The number of seams of each pass when `count` are removed in `passes`.
pub fn pass_sizes(count: usize, passes: usize) -> Vec<usize> {
    let passes = passes.clamp(1, count.max(1));
    (0..passes)
        .map(|p| count / passes + usize::from(p < count % passes))
        .filter(|&k| k > 0)
        .collect()
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
/// [0, n), as the module's step 3 says.
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

/// Places seams: `desired` (k columns per row, non-decreasing, row-major)
/// spread apart row by row among the unprotected columns of a `w`-wide
/// frame. Returns `k` increasing columns per row, row-major.
pub fn place_seams(desired: &[u32], k: usize, mask: Option<&Plane<i8>>, w: usize) -> Vec<u32> {
    let mut cols = vec![0u32; desired.len()];
    cols.par_chunks_mut(k.max(1))
        .zip(desired.par_chunks(k.max(1)))
        .enumerate()
        .for_each(|(y, (row, path))| {
            // Allocations per row: this runs once a pass, not per pixel.
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

/// `plane` without the `k` increasing columns of each row of `cols`, as a
/// new packed plane (what [`remove_columns`] then packing gives, in one
/// pass).
pub fn without_columns<T: Copy + Default + Send + Sync>(
    plane: &Plane<T>,
    cols: &[u32],
    k: usize,
) -> Plane<T> {
    let w = plane.width();
    if k == 0 {
        return plane.to_packed();
    }
    let mut out = Plane::new(w - k, plane.height(), T::default());
    out.par_rows_mut().for_each(|(y, row)| {
        let src = plane.row(y);
        let c = &cols[y * k..(y + 1) * k];
        let first = c[0] as usize;
        row[..first].copy_from_slice(&src[..first]);
        let mut to = first;
        for (j, &x) in c.iter().enumerate() {
            let from = x as usize + 1;
            let end = c.get(j + 1).map_or(w, |&n| n as usize);
            row[to..to + end - from].copy_from_slice(&src[from..end]);
            to += end - from;
        }
    });
    out
}

/// One pass: `k` seams of a frame from its luma, as k increasing columns
/// per row, row-major.
pub fn find_pass(luma: &Plane<u8>, mask: Option<&Plane<i8>>, k: usize, energy: Energy) -> Vec<u32> {
    let (w, h) = (luma.width(), luma.height());
    let map = energy_map(luma, energy);
    let input = DpInput {
        energy: &map,
        mask,
        forward_luma: (energy == Energy::Forward).then_some(luma),
    };
    let mut scratch = DpScratch::default();
    dp_sweep(&input, &mut scratch);
    let starts = pick_starts(scratch.top(), k);
    let paths = trace_paths(&scratch, &starts, h);
    place_seams(&paths, k, mask, w)
}

/// The `count` seams of a frame with luma `luma`, found in `passes` passes:
/// `count` increasing columns per row (of this frame), row-major.
pub fn carve_in_passes(
    luma: &Plane<u8>,
    mask: Option<&Plane<i8>>,
    count: usize,
    passes: usize,
    energy: Energy,
) -> Vec<u32> {
    let (w, h) = (luma.width(), luma.height());
    let mut luma = luma.to_packed();
    let mut mask = mask.map(|m| m.to_packed());
    let mut origin = Plane::from_fn(w, h, |x, _| x as u32);
    let mut removed: Vec<Vec<u32>> = vec![Vec::with_capacity(count); h];
    for k in pass_sizes(count, passes) {
        let cols = find_pass(&luma, mask.as_ref(), k, energy);
        for (y, row) in removed.iter_mut().enumerate() {
            let o = origin.row(y);
            row.extend(cols[y * k..(y + 1) * k].iter().map(|&x| o[x as usize]));
        }
        remove_columns(&mut luma, &cols, k);
        if let Some(m) = &mut mask {
            remove_columns(m, &cols, k);
        }
        remove_columns(&mut origin, &cols, k);
    }
    removed
        .into_iter()
        .flat_map(|mut row| {
            row.sort_unstable();
            row
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::retarget::tests::noise;

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
        let mut noise = crate::noise::Noise::new(5);
        for _ in 0..2000 {
            let n = 1 + noise.below(40) as i64;
            let k = 1 + noise.below(n as u64) as usize;
            let mut d: Vec<i64> = (0..k).map(|_| noise.below(n as u64 + 3) as i64).collect();
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
        let seams = find_pass(&luma, None, 9, Energy::Forward);
        let mut out = img.clone();
        remove_columns(&mut out, &seams, 9);
        assert_eq!(out.width(), 28);
        assert_eq!(without_columns(&img, &seams, 9), out.to_packed());
        for y in 0..19 {
            let row = &seams[y * 9..(y + 1) * 9];
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
            let seams = find_pass(&luma, None, 1, kind);
            if kind != Energy::Forward {
                let (seam, _) = super::super::vertical_seam(&energy_map(&luma, kind));
                let got: Vec<usize> = seams.iter().map(|&c| c as usize).collect();
                assert_eq!(got, seam, "{kind:?}");
            }
            let exact = super::super::exact_kept_columns(&luma, 22, kind);
            for (y, seam) in seams.iter().enumerate() {
                assert!(!exact.row(y).contains(seam), "{kind:?} row {y}");
            }
        }
    }

    #[test]
    fn passes_remove_distinct_columns_and_spare_protected_ones() {
        let luma = noise(40, 12, 8);
        let mask = Plane::from_fn(40, 12, |x, _| {
            if (10..20).contains(&x) {
                MASK_PROTECT
            } else {
                0
            }
        });
        for passes in [1, 4, 15] {
            let cols = carve_in_passes(&luma, Some(&mask), 15, passes, Energy::Forward);
            for y in 0..12 {
                let row = &cols[y * 15..(y + 1) * 15];
                assert!(row.windows(2).all(|p| p[0] < p[1]), "{passes}: {row:?}");
                assert!(row.iter().all(|&x| !(10..20).contains(&x)), "{row:?}");
            }
        }
    }
}
