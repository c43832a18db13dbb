//! Seams that hold still: how fast mode carries its seams from one frame to
//! the next.
//!
//! Seams flicker when they jump: every pixel between a seam's old and new
//! place shifts by one, and in texture that is a visible change. So a
//! shot's seams are placed once ([`Track::place`], from
//! [`super::passes`]) and then *followed*: each frame, every seam moves
//! with the picture's global shift and then looks for a better path within
//! `band` pixels of where it was ([`band_dp`]). A move costs what it
//! changes in the picture (Grundmann et al. 2010, "temporal coherence by
//! appearance"): for a seam at c moving to x in a row, the luma variation
//! between them, |G(x) − G(c)| with G the running sum of |L(i+1) − L(i)|
//! along the row, times `coherence`/100, plus one unit a pixel so that a
//! seam with nothing to gain stays. Moving through a flat wall is free,
//! across grass it is dear. The paths are then sorted and spread apart in
//! each row as a pass's are, so each row still loses k distinct pixels.
//!
//! Which placement a shot starts from: few passes stack seams in wide,
//! cheap areas (few joins, best on lawns and car parks), many passes give
//! each seam its own valley (best where the frame is full of things). Both
//! are made; the stacked one is taken when it has well under the joins'
//! contrast (J, the sum over removed runs of |L(left) − L(right)|) and not
//! much more removed detail (R, the `sobel3` energy of removed pixels):
//! J < 0.65·J' and R < 1.4·R' ([`prefer_stacked`]). Measured on frames of
//! the shared clips, these part the lawns, walkways and car parks (stacked
//! better) from close-ups, dialogue and busy frames (fine better).

use rayon::prelude::*;

use super::energy::{Energy, energy_map};
use super::mask_cost;
use super::motion::MOTION_CAP;
use super::passes::{carve_in_passes, place_seams};
use crate::frame::Plane;

/// Passes of the stacked placement.
pub const STACKED_PASSES: usize = 4;

/// The most follows that settle a new shot's seams on its first frame
/// ([`Track::settle`]); the GPU stops where the CPU does, looking every few
/// follows.
pub const SETTLE_FOLLOWS: usize = 512;

/// The integers of the band DP's sums: i64, or i32 for a frame whose every
/// path's sum fits in it with room ([`frame_base`]), which does twice the
/// lanes at once. Both give the same paths: the sums are the same numbers.
pub trait Lane:
    Copy
    + Ord
    + Default
    + Send
    + Sync
    + std::fmt::Debug
    + From<u8>
    + std::ops::Add<Output = Self>
    + std::ops::Sub<Output = Self>
    + std::ops::Mul<Output = Self>
    + std::ops::Div<Output = Self>
{
    /// Stands for "no path": far above any path's sum, and far from
    /// overflowing when a step's cost is added.
    const OUT: Self;
    /// `v`, which the caller knows fits.
    fn of(v: i64) -> Self;
    /// `v`, which the caller knows fits.
    fn of_u32(v: u32) -> Self;
    fn abs(self) -> Self;
}

impl Lane for i64 {
    const OUT: i64 = i64::MAX / 4;
    #[inline(always)]
    fn of(v: i64) -> i64 {
        v
    }
    #[inline(always)]
    fn of_u32(v: u32) -> i64 {
        v as i64
    }
    #[inline(always)]
    fn abs(self) -> i64 {
        i64::abs(self)
    }
}

impl Lane for i32 {
    const OUT: i32 = i32::MAX / 4;
    #[inline(always)]
    fn of(v: i64) -> i32 {
        v as i32
    }
    #[inline(always)]
    fn of_u32(v: u32) -> i32 {
        v as i32
    }
    #[inline(always)]
    fn abs(self) -> i32 {
        i32::abs(self)
    }
}

/// The seams of one shrink of a stream: `k` increasing columns per row,
/// row-major, on a `width`×`height` plane.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Track {
    pub width: usize,
    pub height: usize,
    pub k: usize,
    pub seams: Vec<u32>,
}

/// What a frame's seams are followed on.
#[derive(Clone, Copy)]
pub struct Costs<'a, T = i64> {
    pub luma: &'a Plane<u8>,
    /// Each pixel's own cost: energy (zero for forward), motion and mask.
    pub base: &'a Plane<T>,
    /// Per row, the running sums of [`gradient_sums`].
    pub grad: &'a Plane<u32>,
    pub forward: bool,
    /// Cost of one level of picture change a move makes.
    pub per_level: i64,
    pub per_level_div: i64,
}

/// The running sums G of |L(x+1) − L(x)| along each row: `w + 1` entries,
/// G(0) = 0.
pub fn gradient_sums(luma: &Plane<u8>) -> Plane<u32> {
    let (w, h) = (luma.width(), luma.height());
    let mut out = Plane::new(w + 1, h, 0u32);
    out.par_rows_mut().for_each(|(y, row)| {
        let l = luma.row(y);
        let mut s = 0u32;
        for x in 0..w {
            row[x] = s;
            if x + 1 < w {
                s += l[x + 1].abs_diff(l[x]) as u32;
            }
        }
        row[w] = s;
    });
    out
}

/// Each pixel's own cost for the band DP: the energy, the motion (levels)
/// times `motion_weight` (a fraction, numerator and denominator), and the
/// mask.
pub fn base_costs(
    luma: &Plane<u8>,
    energy: Energy,
    motion: Option<&Plane<u16>>,
    weight: (i64, i64),
    mask: Option<&Plane<i8>>,
) -> Plane<i64> {
    let map = own_energy(luma, energy);
    fill_base(luma, map.as_ref(), motion, weight, mask)
}

/// A frame's [`base_costs`] in the integers its band DP takes.
pub enum Base {
    Wide(Plane<i64>),
    Narrow(Plane<i32>),
}

/// [`base_costs`], as i32 when every path's sum in the band DP fits in it
/// with room: no mask (a protected pixel costs 2^44), an exact move weight
/// (`per_level` a multiple of `per_level_div`), a row's G within i32 (255
/// levels a pixel), and h rows of the most a row can cost (the largest own
/// cost, a move of `band` pixels through 255 levels each, the distance, a
/// forward step) within half of i32's `OUT`.
#[allow(clippy::too_many_arguments)]
pub fn frame_base(
    luma: &Plane<u8>,
    energy: Energy,
    motion: Option<&Plane<u16>>,
    (num, den): (i64, i64),
    mask: Option<&Plane<i8>>,
    band: usize,
    (per_level, per_level_div): (i64, i64),
) -> Base {
    let map = own_energy(luma, energy);
    let grad_fits = (luma.width() as i64 + 1) * 255 < i32::MAX as i64;
    if mask.is_none() && per_level % per_level_div == 0 && grad_fits {
        let most_energy = map.as_ref().map_or(0, |m| {
            m.as_slice().par_iter().copied().max().unwrap_or(0) as i64
        });
        let most_motion = motion.map_or(0, |m| {
            let most = m.as_slice().par_iter().copied().max().unwrap_or(0) as i64;
            most * num / den
        });
        let band = band as i64;
        let row = most_energy + most_motion + per_level / per_level_div * 255 * band + band + 510;
        if (luma.height() as i64).saturating_mul(row) < (<i32 as Lane>::OUT / 2) as i64 {
            return Base::Narrow(fill_base(luma, map.as_ref(), motion, (num, den), None));
        }
    }
    Base::Wide(fill_base(luma, map.as_ref(), motion, (num, den), mask))
}

/// The energy map of the own costs: none for forward energy (the steps
/// carry it).
fn own_energy(luma: &Plane<u8>, energy: Energy) -> Option<Plane<u32>> {
    (energy != Energy::Forward).then(|| energy_map(luma, energy))
}

/// The own costs from the energy `map`, the motion and the mask, in `T`
/// (which the caller knows holds them).
fn fill_base<T: Lane>(
    luma: &Plane<u8>,
    map: Option<&Plane<u32>>,
    motion: Option<&Plane<u16>>,
    (num, den): (i64, i64),
    mask: Option<&Plane<i8>>,
) -> Plane<T> {
    // The motion's cost by level: motion is capped at MOTION_CAP levels.
    let by_level: [i64; MOTION_CAP as usize + 1] = std::array::from_fn(|m| m as i64 * num / den);
    let mut out = Plane::new(luma.width(), luma.height(), T::default());
    out.par_rows_mut()
        .for_each_init(Vec::new, |sums: &mut Vec<i64>, (y, row)| {
            sums.clear();
            sums.resize(row.len(), 0);
            if let Some(map) = map {
                for (o, &e) in sums.iter_mut().zip(map.row(y)) {
                    *o = e as i64;
                }
            }
            if let Some(m) = motion {
                for (o, &m) in sums.iter_mut().zip(m.row(y)) {
                    *o += match by_level.get(m as usize) {
                        Some(&v) => v,
                        None => m as i64 * num / den,
                    };
                }
            }
            if let Some(m) = mask {
                for (o, &m) in sums.iter_mut().zip(m.row(y)) {
                    *o += mask_cost(m);
                }
            }
            for (o, &v) in row.iter_mut().zip(sums.iter()) {
                *o = T::of(v);
            }
        });
    out
}

/// Reusable buffers of [`band_dp_group`], one set a thread: each seam's
/// two DP rows and steps, and the row below moved onto the band.
#[derive(Debug, Default)]
pub struct BandScratch<T = i64> {
    cum: Vec<T>,
    next: Vec<T>,
    below: Vec<T>,
    back: Vec<i8>,
}

/// How a move's picture change is weighed: `per_level`/`per_level_div` a
/// level, as one multiplication when the division is exact (the default
/// `coherence` gives 100/100), the same integers either way.
#[derive(Clone, Copy)]
enum MoveWeight<T> {
    Times(T),
    Ratio(T, T),
}

impl<T: Lane> MoveWeight<T> {
    fn of(c: &Costs<T>) -> MoveWeight<T> {
        if c.per_level % c.per_level_div == 0 {
            MoveWeight::Times(T::of(c.per_level / c.per_level_div))
        } else {
            MoveWeight::Ratio(T::of(c.per_level), T::of(c.per_level_div))
        }
    }

    /// The cost of `levels` (≥ 0) of picture change.
    #[inline(always)]
    fn of_levels(self, levels: T) -> T {
        match self {
            MoveWeight::Times(m) => m * levels,
            MoveWeight::Ratio(p, d) => p * levels / d,
        }
    }
}

/// Seams followed together in [`Track::follow`]: neighbours, row by row,
/// so that a row's costs are read from the cache by all of them.
const GROUP: usize = 8;

/// One seam's best path within `band` pixels of `centre` (a column a row),
/// by the DP of exact mode (bottom-up, ties to the centre, then left, then
/// right) on the costs plus the cost of moving from the centre; the top
/// row's least (ties to the smaller column). A row with no path (the
/// centre jumps by more than the band allows) keeps the centre.
pub fn band_dp<T: Lane>(c: &Costs<T>, centre: &[u32], band: usize) -> Vec<u32> {
    let mut path = vec![0u32; centre.len()];
    band_dp_group(c, centre, band, &mut BandScratch::default(), &mut path);
    path
}

/// [`band_dp`] of several seams at once: `centres` and `paths` hold one
/// seam after the other, a column a row.
///
/// Lane j of row y is column x = c(y) − band + j. The row below's values
/// are first moved onto this row's lanes (`below[j + 1]` is the value at
/// x, `below[j]` at x − 1, `below[j + 2]` at x + 1; `OUT` beyond its band
/// or the frame), so that every lane reads its three neighbours without a
/// test. Costs stay far below the largest `T` less `OUT`, so sums with
/// `OUT` need no saturation.
pub fn band_dp_group<T: Lane>(
    c: &Costs<T>,
    centres: &[u32],
    band: usize,
    scratch: &mut BandScratch<T>,
    paths: &mut [u32],
) {
    let h = c.luma.height();
    if h == 0 {
        return;
    }
    let n = centres.len() / h;
    let bw = 2 * band + 1;
    let BandScratch {
        cum,
        next,
        below,
        back,
    } = scratch;
    for v in [&mut *cum, &mut *next] {
        v.clear();
        v.resize(n * bw, T::OUT);
    }
    below.clear();
    below.resize(bw + 2, T::OUT);
    back.clear();
    back.resize(n * bw * h, 0);
    let weight = MoveWeight::of(c);
    for y in (0..h).rev() {
        for s in 0..n {
            let centre = &centres[s * h..(s + 1) * h];
            let lanes = s * bw..(s + 1) * bw;
            let row = Lanes {
                cum: &mut cum[lanes.clone()],
                next: &next[lanes],
                below,
                back: &mut back[(s * h + y) * bw..(s * h + y + 1) * bw],
            };
            if c.forward {
                band_row::<T, true>(c, weight, centre, y, band, row);
            } else {
                band_row::<T, false>(c, weight, centre, y, band, row);
            }
        }
        std::mem::swap(cum, next);
    }
    // `next` holds each seam's top row.
    let b = band as i64;
    for s in 0..n {
        let centre = &centres[s * h..(s + 1) * h];
        let path = &mut paths[s * h..(s + 1) * h];
        let top = &next[s * bw..(s + 1) * bw];
        let mut bj = 0;
        for j in 1..bw {
            if top[j] < top[bj] {
                bj = j;
            }
        }
        if top[bj] >= T::OUT {
            path.copy_from_slice(centre);
            continue;
        }
        let steps = &back[s * h * bw..(s + 1) * h * bw];
        let mut x = centre[0] as i64 - b + bj as i64;
        for y in 0..h {
            path[y] = x as u32;
            if y + 1 < h {
                let j = (x - centre[y] as i64 + b) as usize;
                x += steps[y * bw + j] as i64;
            }
        }
    }
}

/// One seam's buffers for one row of the band DP.
struct Lanes<'a, T> {
    cum: &'a mut [T],
    next: &'a [T],
    below: &'a mut [T],
    back: &'a mut [i8],
}

/// Row `y` of one seam's band DP: `cum` from the row below's `next`.
#[inline(always)]
fn band_row<T: Lane, const FORWARD: bool>(
    c: &Costs<T>,
    weight: MoveWeight<T>,
    centre: &[u32],
    y: usize,
    band: usize,
    Lanes {
        cum,
        next,
        below,
        back,
    }: Lanes<T>,
) {
    let (w, h) = (c.luma.width(), c.luma.height());
    let (bw, b) = (2 * band + 1, band as i64);
    let cy = centre[y] as i64;
    let x0 = cy - b;
    // The lanes inside the frame.
    let lo = (-x0).clamp(0, bw as i64) as usize;
    let hi = (w as i64 - x0).clamp(lo as i64, bw as i64) as usize;
    cum[..lo].fill(T::OUT);
    cum[hi..].fill(T::OUT);
    let base = c.base.row(y);
    let g = c.grad.row(y);
    let gc = T::of_u32(g[cy as usize]);
    let row = c.luma.row(y);
    let last = y + 1 == h;
    let down = if last { row } else { c.luma.row(y + 1) };
    let own = |xu: usize| {
        base[xu] + weight.of_levels((T::of_u32(g[xu]) - gc).abs()) + T::of((xu as i64 - cy).abs())
    };
    // Forward energy's step costs from x: to x, x − 1 and x + 1 below.
    let steps = |xu: usize| -> (T, T, T) {
        let zero = T::from(0);
        if !FORWARD {
            return (zero, zero, zero);
        }
        let l = T::from(row[xu.saturating_sub(1)]);
        let r = T::from(row[(xu + 1).min(w - 1)]);
        let up = (r - l).abs();
        if last {
            return (up, up, up);
        }
        let d = T::from(down[xu]);
        (up, up + (d - l).abs(), up + (d - r).abs())
    };
    if last {
        for (j, c) in cum.iter_mut().enumerate().take(hi).skip(lo) {
            let xu = (x0 + j as i64) as usize;
            *c = own(xu) + steps(xu).0;
        }
        return;
    }
    // below[t] = next[t − 1 + s]: lane j − 1 + t of the row below holds
    // this row's x − 1 + t.
    let s = cy - centre[y + 1] as i64;
    below.fill(T::OUT);
    let t_lo = (1 - s).clamp(0, bw as i64 + 2);
    let t_hi = (bw as i64 + 1 - s).clamp(t_lo, bw as i64 + 2);
    if t_lo < t_hi {
        let (t_lo, t_hi) = (t_lo as usize, t_hi as usize);
        let from = (t_lo as i64 - 1 + s) as usize;
        below[t_lo..t_hi].copy_from_slice(&next[from..from + (t_hi - t_lo)]);
    }
    // Lanes of forward energy whose both neighbours are in the frame, with
    // an exact weight: one loop without tests, that vectorises.
    let (mut fast_lo, mut fast_hi) = (lo, lo);
    if let (true, MoveWeight::Times(m)) = (FORWARD, weight) {
        fast_lo = (1 - x0).clamp(lo as i64, hi as i64) as usize;
        fast_hi = (w as i64 - 1 - x0).clamp(fast_lo as i64, hi as i64) as usize;
        let n = fast_hi - fast_lo;
        if n > 0 {
            let xs = (x0 + fast_lo as i64) as usize;
            let lanes = InnerLanes {
                left_px: &row[xs - 1..xs - 1 + n],
                right_px: &row[xs + 1..xs + 1 + n],
                down_px: &down[xs..xs + n],
                base: &base[xs..xs + n],
                g: &g[xs..xs + n],
                below: &below[fast_lo..fast_hi + 2],
                cum: &mut cum[fast_lo..fast_hi],
                back: &mut back[fast_lo..fast_hi],
            };
            // The default coherence weighs a level 1: no multiplication.
            let d0 = T::of(fast_lo as i64 - b);
            if m == T::from(1) {
                inner_lanes::<T, true>(lanes, m, gc, d0);
            } else {
                inner_lanes::<T, false>(lanes, m, gc, d0);
            }
        }
    }
    for j in (lo..fast_lo).chain(fast_hi..hi) {
        let xu = (x0 + j as i64) as usize;
        let (sc, sl, sr) = steps(xu);
        let centre_v = below[j + 1] + sc;
        let left = below[j] + sl;
        let right = below[j + 2] + sr;
        let take_l = left < centre_v;
        let best = if take_l { left } else { centre_v };
        let take_r = right < best;
        let best = if take_r { right } else { best };
        cum[j] = if best >= T::OUT {
            T::OUT
        } else {
            best + own(xu)
        };
        back[j] = if take_r { 1 } else { -(take_l as i8) };
    }
}

impl Track {
    /// The seams of a new shot: the stacked or the fine placement, as the
    /// module says.
    pub fn place(
        luma: &Plane<u8>,
        mask: Option<&Plane<i8>>,
        k: usize,
        fine_passes: usize,
        energy: Energy,
    ) -> Track {
        let (w, h) = (luma.width(), luma.height());
        let stacked = carve_in_passes(luma, mask, k, STACKED_PASSES, energy);
        let seams = if fine_passes > STACKED_PASSES {
            let fine = carve_in_passes(luma, mask, k, fine_passes, energy);
            if prefer_stacked(luma, &stacked, &fine, k) {
                stacked
            } else {
                fine
            }
        } else {
            stacked
        };
        Track {
            width: w,
            height: h,
            k,
            seams,
        }
    }

    /// Follows the seams on the frame they were placed on (no shift),
    /// until a follow changes nothing, [`SETTLE_FOLLOWS`] times at most;
    /// returns how many changed them. A follow that changes nothing is
    /// the last that would: each depends only on the seams and the costs,
    /// so stopping early gives what all the follows would. For the same
    /// reason a seam whose path did not change keeps its band DP's path
    /// from the follow before, and only the seams that moved are followed
    /// again (late follows move a few seams).
    ///
    /// Without this a still shot's seams would settle frame by frame into
    /// their nearby best paths, and the picture would shift on each of its
    /// first frames; settled here, a still shot gives the same frame from
    /// its first on.
    pub fn settle<T: Lane>(
        &mut self,
        costs: &Costs<T>,
        mask: Option<&Plane<i8>>,
        band: usize,
    ) -> usize {
        let mut last = Followed::default();
        for n in 0..SETTLE_FOLLOWS {
            if !self.follow_from(costs, mask, (0, 0), band, &mut last) {
                return n;
            }
        }
        SETTLE_FOLLOWS
    }

    /// Follows the seams by `shift`, or settles them where there is none
    /// (a new shot's first frame).
    pub fn follow_or_settle<T: Lane>(
        &mut self,
        costs: &Costs<T>,
        mask: Option<&Plane<i8>>,
        shift: Option<(i32, i32)>,
        band: usize,
    ) {
        match shift {
            Some(shift) => {
                self.follow(costs, mask, shift, band);
            }
            None => {
                self.settle(costs, mask, band);
            }
        }
    }

    /// This frame's seams: the last frame's moved by `shift` (x, y), each
    /// improved within `band` pixels on `costs`, then spread apart among
    /// the unprotected columns. Returns whether they changed.
    pub fn follow<T: Lane>(
        &mut self,
        costs: &Costs<T>,
        mask: Option<&Plane<i8>>,
        shift: (i32, i32),
        band: usize,
    ) -> bool {
        self.follow_from(costs, mask, shift, band, &mut Followed::default())
    }

    /// [`Track::follow`], taking the band DP's paths from `last` for the
    /// groups of seams whose centres are those of `last` (which must have
    /// been made on the same costs and band), and leaving this follow's
    /// in it.
    fn follow_from<T: Lane>(
        &mut self,
        costs: &Costs<T>,
        mask: Option<&Plane<i8>>,
        shift: (i32, i32),
        band: usize,
        last: &mut Followed,
    ) -> bool {
        let (w, h, k) = (self.width, self.height, self.k);
        let seams = &self.seams;
        // Per frame: every seam's centre and path (seam-major), then the
        // rows.
        let mut centres = vec![0u32; k * h];
        centres
            .par_chunks_mut(h.max(1))
            .enumerate()
            .for_each(|(i, centre)| {
                for (y, c) in centre.iter_mut().enumerate() {
                    let from = (y as i64 - shift.1 as i64).clamp(0, h as i64 - 1) as usize;
                    *c =
                        (seams[from * k + i] as i64 + shift.0 as i64).clamp(0, w as i64 - 1) as u32;
                }
            });
        let fresh = last.centres.len() != k * h;
        if fresh {
            last.paths = vec![0u32; k * h];
        }
        let Followed {
            centres: last_centres,
            paths,
        } = last;
        let chunk = GROUP * h.max(1);
        paths
            .par_chunks_mut(chunk)
            .zip(centres.par_chunks(chunk))
            .enumerate()
            .for_each_init(
                BandScratch::default,
                |scratch, (group, (paths, centres))| {
                    if fresh || last_centres[group * chunk..][..centres.len()] != *centres {
                        band_dp_group(costs, centres, band, scratch, paths);
                    }
                },
            );
        *last_centres = centres;
        let mut desired = vec![0u32; k * h];
        desired.par_chunks_mut(k).enumerate().for_each(|(y, row)| {
            for (i, d) in row.iter_mut().enumerate() {
                *d = paths[i * h + y];
            }
            row.sort_unstable();
        });
        let new = place_seams(&desired, k, mask, w);
        let changed = new != self.seams;
        self.seams = new;
        changed
    }
}

/// A follow's band DP: every seam's centre and path, seam-major.
#[derive(Debug, Default)]
struct Followed {
    centres: Vec<u32>,
    paths: Vec<u32>,
}

/// The inner lanes of a row of forward energy (see [`band_row`]), from
/// the first: its pixel and neighbours, the costs, the row below's values
/// moved onto them (`n + 2`, from the first lane's left), and what they
/// give.
struct InnerLanes<'a, T> {
    left_px: &'a [u8],
    right_px: &'a [u8],
    down_px: &'a [u8],
    base: &'a [T],
    g: &'a [u32],
    below: &'a [T],
    cum: &'a mut [T],
    back: &'a mut [i8],
}

/// [`band_row`]'s inner lanes in one loop without tests, that vectorises:
/// `m` a level of picture change moved (1 when `ONE`), `gc` the centre's
/// G, `d0` the first lane's distance from the centre (signed).
#[inline(always)]
fn inner_lanes<T: Lane, const ONE: bool>(lanes: InnerLanes<T>, m: T, gc: T, d0: T) {
    let n = lanes.cum.len();
    let (left_px, right_px, down_px) = (
        &lanes.left_px[..n],
        &lanes.right_px[..n],
        &lanes.down_px[..n],
    );
    let (base, g) = (&lanes.base[..n], &lanes.g[..n]);
    let (below_l, below_c, below_r) = (
        &lanes.below[..n],
        &lanes.below[1..n + 1],
        &lanes.below[2..n + 2],
    );
    let (cum, back) = (lanes.cum, &mut lanes.back[..n]);
    let mut dist = d0;
    for i in 0..n {
        let (l, r, d) = (
            T::from(left_px[i]),
            T::from(right_px[i]),
            T::from(down_px[i]),
        );
        let up = (r - l).abs();
        let centre_v = below_c[i] + up;
        let left = below_l[i] + up + (d - l).abs();
        let right = below_r[i] + up + (d - r).abs();
        let take_l = left < centre_v;
        let best = if take_l { left } else { centre_v };
        let take_r = right < best;
        let best = if take_r { right } else { best };
        let dg = (T::of_u32(g[i]) - gc).abs();
        let moved = if ONE { dg } else { m * dg };
        let own = base[i] + moved + dist.abs();
        dist = dist + T::from(1);
        cum[i] = if best >= T::OUT { T::OUT } else { best + own };
        back[i] = if take_r { 1 } else { -(take_l as i8) };
    }
}

/// The stacked placement is the better start when its seams' joins are
/// under `STACKED_JOINS.0 / STACKED_JOINS.1` of the fine one's and the
/// detail they remove under `STACKED_DETAIL.0 / STACKED_DETAIL.1` of it
/// (tuned; the GPU's `start_choose` takes the same ratios).
pub const STACKED_JOINS: (u64, u64) = (13, 20);
pub const STACKED_DETAIL: (u64, u64) = (14, 10);

/// Whether the stacked placement is the better start (see the module).
pub fn prefer_stacked(luma: &Plane<u8>, stacked: &[u32], fine: &[u32], k: usize) -> bool {
    let detail = energy_map(luma, Energy::Sobel3);
    let score = |seams: &[u32]| -> (u64, u64) {
        (0..luma.height())
            .into_par_iter()
            .map(|y| {
                let row = luma.row(y);
                let cols = &seams[y * k..(y + 1) * k];
                let (mut joins, mut removed) = (0u64, 0u64);
                let mut i = 0;
                while i < k {
                    // One run of adjacent removed columns, a..=b.
                    let a = cols[i] as usize;
                    while i + 1 < k && cols[i + 1] == cols[i] + 1 {
                        i += 1;
                    }
                    let b = cols[i] as usize;
                    if a > 0 && b + 1 < row.len() {
                        joins += row[a - 1].abs_diff(row[b + 1]) as u64;
                    }
                    removed += (a..=b).map(|x| detail.get(x, y) as u64).sum::<u64>();
                    i += 1;
                }
                (joins, removed)
            })
            .reduce(|| (0, 0), |a, b| (a.0 + b.0, a.1 + b.1))
    };
    let (js, rs) = score(stacked);
    let (jf, rf) = score(fine);
    let ((jn, jd), (dn, dd)) = (STACKED_JOINS, STACKED_DETAIL);
    jd * js < jn * jf && dd * rs < dn * rf
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::retarget::MASK_PROTECT;
    use crate::ops::retarget::tests::noise;

    /// The first band DP's "no path".
    const OUT: i64 = <i64 as Lane>::OUT;

    /// Forward energy's step costs from (x, y): to x (centre), x−1 (left) and
    /// x+1 (right) in row y+1, as `energy::forward_steps` gives them.
    #[inline]
    fn steps(luma: &Plane<u8>, x: usize, y: usize) -> (i64, i64, i64) {
        let (w, h) = (luma.width(), luma.height());
        let row = luma.row(y);
        let l = row[x.saturating_sub(1)] as i64;
        let r = row[(x + 1).min(w - 1)] as i64;
        let up = (r - l).abs();
        if y + 1 >= h {
            return (up, up, up);
        }
        let d = luma.row(y + 1)[x] as i64;
        (up, up + (d - l).abs(), up + (d - r).abs())
    }

    fn costs_of<'a>(luma: &'a Plane<u8>, base: &'a Plane<i64>, grad: &'a Plane<u32>) -> Costs<'a> {
        Costs {
            luma,
            base,
            grad,
            forward: true,
            per_level: 1,
            per_level_div: 1,
        }
    }

    /// The band DP by brute force: every connected path within the band.
    fn band_brute(c: &Costs, centre: &[u32], band: usize) -> i64 {
        let (w, h) = (c.luma.width() as i64, c.luma.height());
        let cost_at = |x: i64, y: usize| {
            let g = c.grad.row(y);
            let cy = centre[y] as i64;
            c.base.get(x as usize, y)
                + c.per_level * (g[x as usize] as i64 - g[cy as usize] as i64).abs()
                    / c.per_level_div
                + (x - cy).abs()
        };
        let mut best = i64::MAX;
        let mut stack: Vec<(usize, i64, i64)> = Vec::new();
        let c0 = centre[0] as i64;
        for x in (c0 - band as i64).max(0)..=(c0 + band as i64).min(w - 1) {
            stack.push((0, x, cost_at(x, 0)));
        }
        while let Some((y, x, acc)) = stack.pop() {
            let (sc, sl, sr) = steps(c.luma, x as usize, y);
            if y + 1 == h {
                best = best.min(acc + sc);
                continue;
            }
            let cn = centre[y + 1] as i64;
            for (d, s) in [(0, sc), (-1, sl), (1, sr)] {
                let xn = x + d;
                if xn < 0 || xn >= w || (xn - cn).abs() > band as i64 {
                    continue;
                }
                stack.push((y + 1, xn, acc + s + cost_at(xn, y + 1)));
            }
        }
        best
    }

    fn path_cost(c: &Costs, centre: &[u32], path: &[u32]) -> i64 {
        let mut total = 0;
        for (y, (&x, &cy)) in path.iter().zip(centre).enumerate() {
            let g = c.grad.row(y);
            total += c.base.get(x as usize, y)
                + c.per_level * (g[x as usize] as i64 - g[cy as usize] as i64).abs()
                    / c.per_level_div
                + (x as i64 - cy as i64).abs();
            let (sc, sl, sr) = steps(c.luma, x as usize, y);
            total += match path.get(y + 1).map(|&n| n as i64 - x as i64) {
                None | Some(0) => sc,
                Some(-1) => sl,
                _ => sr,
            };
        }
        total
    }

    /// The band DP as first written (a test per lane), which the faster
    /// [`band_dp_group`] must reproduce.
    fn band_dp_reference(c: &Costs, centre: &[u32], band: usize) -> Vec<u32> {
        let (w, h) = (c.luma.width() as i64, c.luma.height());
        let bw = 2 * band + 1;
        let b = band as i64;
        // Scratch per seam: the DP's two rows and every step taken.
        let mut cum = vec![OUT; bw];
        let mut next = vec![OUT; bw];
        let mut back = vec![0i8; bw * h];
        for y in (0..h).rev() {
            let cy = centre[y] as i64;
            let base = c.base.row(y);
            let g = c.grad.row(y);
            let gc = g[cy as usize] as i64;
            let below = (y + 1 < h).then(|| centre[y + 1] as i64);
            for (j, out) in cum.iter_mut().enumerate() {
                let x = cy - b + j as i64;
                if x < 0 || x >= w {
                    *out = OUT;
                    continue;
                }
                let xu = x as usize;
                let moved =
                    c.per_level * (g[xu] as i64 - gc).abs() / c.per_level_div + (x - cy).abs();
                let own = base[xu] + moved;
                let (sc, sl, sr) = if c.forward {
                    steps(c.luma, xu, y)
                } else {
                    (0, 0, 0)
                };
                let Some(cb) = below else {
                    *out = own + sc;
                    continue;
                };
                // The DP's value in the row below at column xn, if in its band.
                let at = |xn: i64| -> i64 {
                    let jn = xn - cb + b;
                    if xn < 0 || xn >= w || jn < 0 || jn >= bw as i64 {
                        OUT
                    } else {
                        next[jn as usize]
                    }
                };
                let mut best = at(x).saturating_add(sc);
                let mut step = 0i8;
                let left = at(x - 1).saturating_add(sl);
                if left < best {
                    best = left;
                    step = -1;
                }
                let right = at(x + 1).saturating_add(sr);
                if right < best {
                    best = right;
                    step = 1;
                }
                *out = if best >= OUT { OUT } else { best + own };
                back[y * bw + j] = step;
            }
            std::mem::swap(&mut cum, &mut next);
        }
        // `next` holds the top row.
        let mut bj = 0;
        for j in 1..bw {
            if next[j] < next[bj] {
                bj = j;
            }
        }
        if next[bj] >= OUT {
            return centre.to_vec();
        }
        let mut path = Vec::with_capacity(h);
        let mut x = centre[0] as i64 - b + bj as i64;
        for y in 0..h {
            path.push(x as u32);
            if y + 1 < h {
                let j = (x - centre[y] as i64 + b) as usize;
                x += back[y * bw + j] as i64;
            }
        }
        path
    }

    #[test]
    fn the_band_dp_gives_the_paths_of_the_first_version() {
        let mut draws = crate::noise::Noise::new(7);
        let mut rand = |n: u32| draws.below(u64::from(n.max(1))) as u32;
        let mut scratch = BandScratch::default();
        for seed in 0..300u32 {
            let (w, h) = (1 + rand(70) as usize, 1 + rand(40) as usize);
            // Few levels, so that paths tie often.
            let luma = noise(w, h, seed).map(|v| v / 64 * 64);
            // Costs of every kind: energy, a protected pixel, one to remove.
            let base = Plane::from_fn(w, h, |x, y| match (x * 13 + y * 7 + seed as usize) % 29 {
                0 => super::super::PROTECT_COST,
                1 => -super::super::REMOVE_BONUS,
                v => (v % 3) as i64,
            });
            let grad = gradient_sums(&luma);
            let (per_level, per_level_div) =
                [(100, 100), (3, 7), (0, 100), (250, 100), (200, 100)][(seed as usize / 2) % 5];
            let c = Costs {
                luma: &luma,
                base: &base,
                grad: &grad,
                forward: seed % 5 != 0,
                per_level,
                per_level_div,
            };
            // Centres that wander and sometimes jump further than the band.
            let mut x = rand(w as u32) as i64;
            let centre: Vec<u32> = (0..h)
                .map(|_| {
                    x = match rand(10) {
                        0 => rand(w as u32) as i64,
                        v => (x + v as i64 % 3 - 1).clamp(0, w as i64 - 1),
                    };
                    x as u32
                })
                .collect();
            for band in [1, 2, 5, 15] {
                let mut path = vec![0; h];
                band_dp_group(&c, &centre, band, &mut scratch, &mut path);
                assert_eq!(
                    path,
                    band_dp_reference(&c, &centre, band),
                    "seed {seed}, {w}x{h}, band {band}"
                );
            }
            // Three seams at once: each its own.
            let reversed: Vec<u32> = centre.iter().rev().copied().collect();
            let shifted: Vec<u32> = centre.iter().map(|&x| (x + 3).min(w as u32 - 1)).collect();
            let three = [&centre[..], &reversed, &shifted].concat();
            let mut paths = vec![0; 3 * h];
            band_dp_group(&c, &three, 4, &mut scratch, &mut paths);
            for (s, centre) in three.chunks(h).enumerate() {
                assert_eq!(paths[s * h..(s + 1) * h], band_dp_reference(&c, centre, 4));
            }
            // Costs that fit in i32: the narrow DP's paths are the same.
            let small = base.map(|v| v.clamp(0, 1000));
            let wide = Costs { base: &small, ..c };
            let narrow_base = small.map(|v| v as i32);
            let narrow = Costs {
                luma: &luma,
                base: &narrow_base,
                grad: &grad,
                forward: c.forward,
                per_level,
                per_level_div,
            };
            let mut narrow_scratch = BandScratch::default();
            for band in [1, 5, 15] {
                let mut path = vec![0; h];
                band_dp_group(&narrow, &centre, band, &mut narrow_scratch, &mut path);
                assert_eq!(
                    path,
                    band_dp_reference(&wide, &centre, band),
                    "i32: seed {seed}, {w}x{h}, band {band}"
                );
            }
        }
    }

    #[test]
    fn frame_costs_are_narrow_only_where_every_sum_fits() {
        let luma = super::super::motion::tests::picture(64, 30, 0, 0);
        let motion = Plane::from_fn(64, 30, |x, _| (x % 40) as u16);
        let mask = Plane::from_fn(64, 30, |x, _| if x == 5 { MASK_PROTECT } else { 0 });
        let weight = (1200, 100);
        for energy in [Energy::Forward, Energy::Sobel3, Energy::Basic] {
            let wide = base_costs(&luma, energy, Some(&motion), weight, None);
            match frame_base(&luma, energy, Some(&motion), weight, None, 15, (100, 100)) {
                Base::Narrow(b) => assert_eq!(b.map(|v| v as i64), wide, "{energy:?}"),
                Base::Wide(_) => panic!("{energy:?}: 30 rows fit in i32"),
            }
            // A mask's costs, an inexact weight or a tall frame do not.
            let masked = base_costs(&luma, energy, Some(&motion), weight, Some(&mask));
            match frame_base(
                &luma,
                energy,
                Some(&motion),
                weight,
                Some(&mask),
                15,
                (100, 100),
            ) {
                Base::Wide(b) => assert_eq!(b, masked, "{energy:?}"),
                Base::Narrow(_) => panic!("{energy:?}: a mask is narrow"),
            }
            let inexact = frame_base(&luma, energy, Some(&motion), weight, None, 15, (3, 7));
            assert!(matches!(inexact, Base::Wide(_)), "{energy:?}");
        }
        let tall = Plane::new(4, 200_000, 0u8);
        let far = frame_base(&tall, Energy::Forward, None, weight, None, 15, (100, 100));
        assert!(matches!(far, Base::Wide(_)));
    }

    #[test]
    fn the_band_dp_finds_the_cheapest_path_in_the_band() {
        for seed in 0..30 {
            let (w, h) = (9 + seed as usize % 5, 5 + seed as usize % 3);
            let luma = noise(w, h, seed);
            let base = Plane::from_fn(w, h, |x, y| ((x * 7 + y * 3 + seed as usize) % 11) as i64);
            let grad = gradient_sums(&luma);
            let c = costs_of(&luma, &base, &grad);
            let mut draws = crate::noise::Noise::new(u64::from(seed) + 100);
            let centre: Vec<u32> = (0..h).map(|_| draws.below(w as u64) as u32).collect();
            for band in [1, 2, 3] {
                let path = band_dp(&c, &centre, band);
                let brute = band_brute(&c, &centre, band);
                if brute == i64::MAX {
                    assert_eq!(path, centre, "no path keeps the centre");
                    continue;
                }
                assert_eq!(
                    path_cost(&c, &centre, &path),
                    brute,
                    "seed {seed} band {band}"
                );
                for (y, (&x, &cy)) in path.iter().zip(&centre).enumerate() {
                    assert!(x.abs_diff(cy) as usize <= band, "row {y}");
                }
            }
        }
    }

    #[test]
    fn a_seam_with_nothing_to_gain_stays_and_one_in_the_way_moves() {
        let (w, h) = (30, 12);
        let luma = noise(w, h, 4);
        let grad = gradient_sums(&luma);
        let flat = Plane::new(w, h, 0i64);
        let c = costs_of(&luma, &flat, &grad);
        let centre = vec![15u32; h];
        let mut c2 = c;
        c2.forward = false;
        assert_eq!(band_dp(&c2, &centre, 4), centre);
        // A wall of cost on column 15 pushes the seam aside.
        let wall = Plane::from_fn(w, h, |x, _| if x == 15 { 1_000_000 } else { 0 });
        let c3 = Costs {
            base: &wall,
            forward: false,
            ..c
        };
        let path = band_dp(&c3, &centre, 4);
        assert!(path.iter().all(|&x| x != 15), "{path:?}");
    }

    #[test]
    fn following_a_still_frame_changes_nothing() {
        let luma = noise(48, 20, 9);
        let mut track = Track::place(&luma, None, 12, 8, Energy::Forward);
        let base = base_costs(&luma, Energy::Forward, None, (0, 1), None);
        let grad = gradient_sums(&luma);
        let c = costs_of(&luma, &base, &grad);
        // Seams settle into their cheapest nearby paths within a few frames
        // and then hold still.
        let settled = settle(&mut track, &c);
        for _ in 0..3 {
            track.follow(&c, None, (0, 0), 6);
            assert_eq!(track.seams, settled);
        }
        for y in 0..20 {
            let row = &track.seams[y * 12..(y + 1) * 12];
            assert!(row.windows(2).all(|p| p[0] < p[1]), "row {y}: {row:?}");
        }
    }

    #[test]
    fn settling_gives_the_seams_of_following_until_nothing_changes() {
        // Settling reuses the paths of seams that did not move; plain
        // follows (what the GPU does, SETTLE_FOLLOWS of them) must give
        // the same seams.
        let mut most = 0;
        for seed in 0..6u32 {
            let (w, h, k) = (
                90 + 7 * seed as usize,
                40 + seed as usize,
                20 + 2 * seed as usize,
            );
            let luma = super::super::motion::tests::picture(w, h, seed as i64 * 5, 0);
            let mask = (seed % 2 == 1)
                .then(|| Plane::from_fn(w, h, |x, _| if x % 9 == 4 { MASK_PROTECT } else { 0 }));
            let base = base_costs(&luma, Energy::Forward, None, (0, 1), mask.as_ref());
            let grad = gradient_sums(&luma);
            let c = costs_of(&luma, &base, &grad);
            let placed = Track::place(&luma, mask.as_ref(), k, 8, Energy::Forward);
            let mut settled = placed.clone();
            let moves = settled.settle(&c, mask.as_ref(), 15);
            assert!(moves < SETTLE_FOLLOWS, "seed {seed} never settled");
            let mut followed = placed.clone();
            for _ in 0..SETTLE_FOLLOWS {
                followed.follow(&c, mask.as_ref(), (0, 0), 15);
            }
            assert_eq!(settled, followed, "seed {seed}");
            // Settled: a follow changes nothing.
            assert!(
                !followed.follow(&c, mask.as_ref(), (0, 0), 15),
                "seed {seed}"
            );
            most = most.max(moves);
        }
        assert!(most > 2, "every placement settled within {most} follows");
    }

    /// Follows a still frame until the seams stop moving; returns them.
    fn settle(track: &mut Track, c: &Costs) -> Vec<u32> {
        for _ in 0..20 {
            let before = track.seams.clone();
            track.follow(c, None, (0, 0), 6);
            if track.seams == before {
                return before;
            }
        }
        panic!("the seams never settled");
    }

    #[test]
    fn seams_move_with_the_picture() {
        let scene = noise(70, 16, 2);
        let luma = Plane::from_fn(60, 16, |x, y| scene.get(x + 10, y));
        let mut track = Track::place(&luma, None, 6, 6, Energy::Forward);
        let base = base_costs(&luma, Energy::Forward, None, (0, 1), None);
        let grad = gradient_sums(&luma);
        let settled = settle(&mut track, &costs_of(&luma, &base, &grad));
        // The scene 5 pixels to the right: every seam goes with it.
        let moved = Plane::from_fn(60, 16, |x, y| scene.get(x + 5, y));
        let base = base_costs(&moved, Energy::Forward, None, (0, 1), None);
        let grad = gradient_sums(&moved);
        track.follow(&costs_of(&moved, &base, &grad), None, (5, 0), 3);
        // (The last seam of each row runs into the edge and stops there.)
        let shifted: Vec<u32> = settled.iter().map(|&x| (x + 5).min(59)).collect();
        assert_eq!(track.seams, shifted);
    }

    #[test]
    fn the_stacked_start_wins_on_a_flat_field_and_not_on_the_same_removal() {
        // A flat field beside texture: stacking in the field joins nothing,
        // seams spread through the texture join unlike pixels.
        let field = Plane::from_fn(64, 24, |x, y| {
            if x < 40 {
                80
            } else {
                ((x * 29 + y * 53) % 97) as u8 + 60
            }
        });
        let k = 10;
        let stacked = carve_in_passes(&field, None, k, STACKED_PASSES, Energy::Forward);
        assert!(stacked.iter().all(|&x| x < 40), "{stacked:?}");
        let fine: Vec<u32> = (0..24)
            .flat_map(|_| (0..k as u32).map(|i| 41 + 2 * i))
            .collect();
        assert!(prefer_stacked(&field, &stacked, &fine, k));
        assert!(!prefer_stacked(&field, &fine, &stacked, k));
        // The same removal both ways is not "well under".
        assert!(!prefer_stacked(&field, &fine, &fine, k));
    }
}
