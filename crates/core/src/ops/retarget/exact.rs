//! `retarget` in exact mode: one seam at a time, each the best of the frame
//! as it is, the energy brought up to date around each removal (seed 000).
//! The default for still images; src/cuda/ops/retarget reproduces every
//! seam.

use rayon::prelude::*;

use super::dp::{DpInput, DpScratch, dp_seam};
use super::energy::{Energy, energy_at, energy_map};
use super::{CarveOptions, MASK_NONE, check_target, combine_masks};
use crate::error::Result;
use crate::frame::Plane;
use crate::ops::pixel::Pixel;

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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::retarget::energy::forward_steps;

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
        use crate::ops::retarget::dp::vertical_seam;
        let mut noise = crate::noise::Noise::new(99);
        let mut rnd = move || noise.byte();
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
    fn band_update_equals_full_recompute() {
        for kind in [Energy::Basic, Energy::Sobel3, Energy::Sobel5] {
            let img = crate::ops::retarget::tests::noise(23, 11, 7);
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
        assert!(
            e.contains("width=21") && e.contains("between 1 and 20"),
            "{e}"
        );
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
