//! The dynamic programme of seam carving, on the CPU.
//!
//! Seams are vertical; horizontal seams are found on the transposed frame.
//! The programme runs from the bottom row up, as the seed does, so a seam is
//! read from the top row down: M(x,H−1) = c(x,H−1) and
//! M(x,y) = c(x,y) + min over d∈{0,−1,+1} of (M(x+d,y+1) + t_d(x,y)), ties to
//! the centre, then left, then right; the seam starts at the smallest M in
//! the top row (ties to the smallest column) and follows the stored choices.
//! Cumulative sums are i64; a protected pixel costs 2^44 more and a pixel to
//! remove 2^34 less, which dominates any natural energy of a seam.

use super::energy::forward_steps;
use super::mask_cost;
use crate::frame::Plane;

/// Stands for "no neighbour" beyond the frame's edges; large, but far from
/// overflowing when step costs are added.
pub const OUTSIDE: i64 = i64::MAX / 4;

/// Reusable buffers for the dynamic programme.
#[derive(Debug, Default)]
pub struct DpScratch {
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
pub struct DpInput<'a> {
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
pub fn dp_sweep(input: &DpInput, scratch: &mut DpScratch) {
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
    pub fn top(&self) -> &[i64] {
        &self.next[1..self.next.len() - 1]
    }

    /// The path from column `x` of the top row down, after [`dp_sweep`]:
    /// calls `visit(y, column)` for every row.
    pub fn trace(&self, mut x: usize, h: usize, mut visit: impl FnMut(usize, usize)) {
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
pub(crate) fn dp_seam(input: &DpInput, scratch: &mut DpScratch, seam: &mut Vec<usize>) -> i64 {
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
}
