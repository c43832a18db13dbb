//! Motion between consecutive frames, for fast mode: the global shift of
//! the picture (a pan, a shaking hand), so that seams move with it, and
//! where things moved beyond it, so that seams keep off them.
//!
//! All in integers, so that the GPU finds the same shift and the same map:
//!
//! - **Global shift** ([`global_shift`]): block matching on a pyramid. On
//!   luma summed over 4×4 cells, each block of 8×8 cells finds its best
//!   offset within ±[`SEARCH`]/4 cells by the sum of absolute differences
//!   (ties to the smaller offset). A block whose best and worst offsets
//!   differ by less than [`FLAT`] levels a pixel is flat and does not vote;
//!   one whose best beats no motion by less than [`STILL`] a pixel votes for
//!   no motion. The most common vote wins if at least a third of the voters
//!   cast it (else the level keeps the coarser answer; at the top, no
//!   shift). The same again on 2×2 sums within ±3 of twice that, and on
//!   pixels (every other block each way) within ±3 of twice that. A car
//!   crossing a still scene is a minority of blocks and moves nothing.
//! - **Motion map** ([`MotionMap`]): |luma − last luma moved by the shift|
//!   less `noise`, the largest of each 4×4 cell, grown by [`GROW`] cells
//!   each way, and remembered: each frame keeps the larger of the new value
//!   and 3/4 of the old, so a person who stops for a moment stays covered.
//!   Motion marks what matters only while little of the picture moves:
//!   [`motion_share`] weighs it by a shot's running mean of the share of
//!   cells that moved, fully up to 10%, not at all from 16%.

use rayon::prelude::*;

use crate::frame::Plane;

/// Cells of the coarse scale: 4×4 pixels.
pub const CELL: usize = 4;
/// The largest shift looked for, in pixels each way.
pub const SEARCH: i32 = 16;
/// Blocks whose best and worst matches differ by less than this many
/// levels a pixel cannot tell a shift: they do not vote.
pub const FLAT: u32 = 8;
/// A block votes for no motion unless a shift beats it by this many levels
/// a pixel.
pub const STILL: u32 = 1;
/// Cells the motion map grows by each way.
pub const GROW: usize = 4;
/// What the motion map keeps of itself each frame, in sixteenths.
pub const KEEP: u32 = 12;
/// The most a cell's motion counts for (levels). Past it, motion says only
/// that something moved: a ball that flies by with high contrast does not
/// push seams further than a car that rolls by with little, and seams do
/// not chase the changing contrast of what moves.
pub const MOTION_CAP: u32 = 32;

/// Luma summed over `f`×`f` cells (the last partial cells dropped).
pub fn cell_sums(luma: &Plane<u8>, f: usize) -> Plane<u16> {
    match f {
        1 => sums_of::<1>(luma),
        2 => sums_of::<2>(luma),
        4 => sums_of::<4>(luma),
        _ => {
            let (w, h) = (luma.width() / f, luma.height() / f);
            let mut out = Plane::new(w, h, 0u16);
            out.par_rows_mut().for_each(|(y, row)| {
                for j in 0..f {
                    let src = &luma.row(y * f + j)[..w * f];
                    for (o, cell) in row.iter_mut().zip(src.chunks_exact(f)) {
                        *o += cell.iter().map(|&v| v as u16).sum::<u16>();
                    }
                }
            });
            out
        }
    }
}

/// [`cell_sums`] for cells of a side known when compiling.
fn sums_of<const F: usize>(luma: &Plane<u8>) -> Plane<u16> {
    let (w, h) = (luma.width() / F, luma.height() / F);
    let mut out = Plane::new(w, h, 0u16);
    out.par_rows_mut().for_each(|(y, row)| {
        for j in 0..F {
            let src = &luma.row(y * F + j)[..w * F];
            for (o, cell) in row.iter_mut().zip(src.chunks_exact(F)) {
                *o += cell.iter().map(|&v| v as u16).sum::<u16>();
            }
        }
    });
    out
}

/// A motion vector (x, y).
pub type Shift = (i32, i32);

/// Whether `a` is the better of two equally good offsets: the smaller
/// |x| + |y|, then the smaller (y, x).
fn nearer(a: Shift, b: Shift) -> bool {
    let (na, nb) = (a.0.abs() + a.1.abs(), b.0.abs() + b.1.abs());
    na < nb || (na == nb && (a.1, a.0) < (b.1, b.0))
}

/// Samples a side of a block of the shift's block matching.
const BLOCK: usize = 8;

/// The sum of absolute differences of two `BLOCK`×`BLOCK` blocks, given
/// by their rows.
#[inline(always)]
fn block_sad(cur: &[[u16; BLOCK]; BLOCK], prev: &Plane<u16>, px: usize, py: usize) -> u32 {
    let mut sad = 0u32;
    for (j, c) in cur.iter().enumerate() {
        let p: &[u16; BLOCK] = prev.row(py + j)[px..px + BLOCK]
            .try_into()
            .expect("a block's row");
        for (a, b) in c.iter().zip(p) {
            sad += a.abs_diff(*b) as u32;
        }
    }
    sad
}

/// Block matching on `cur` against `prev` (values `unit` per level): each
/// `BLOCK`×`BLOCK` block at (bx·step, by·step) blocks finds its offset
/// within `centre` ± `r`; returns the winning vote (see the module).
fn vote(
    prev: &Plane<u16>,
    cur: &Plane<u16>,
    step: usize,
    centre: Shift,
    r: i32,
    unit: u32,
) -> Option<Shift> {
    let bs = BLOCK;
    let (bw, bh) = (cur.width() / bs, cur.height() / bs);
    let blocks: Vec<(usize, usize)> = (0..bh)
        .step_by(step)
        .flat_map(|by| (0..bw).step_by(step).map(move |bx| (bx, by)))
        .collect();
    let n = (bs * bs) as u32 * unit;
    let votes: Vec<Option<Shift>> = blocks
        .par_iter()
        .map(|&(bx, by)| {
            let (x0, y0) = ((bx * bs) as i32, (by * bs) as i32);
            let (pw, ph) = (prev.width() as i32, prev.height() as i32);
            let block: [[u16; BLOCK]; BLOCK] = std::array::from_fn(|j| {
                cur.row(y0 as usize + j)[x0 as usize..x0 as usize + bs]
                    .try_into()
                    .expect("a block's row")
            });
            let mut best: Option<(u32, Shift)> = None;
            let (mut worst, mut still) = (0u32, None);
            for sy in centre.1 - r..=centre.1 + r {
                for sx in centre.0 - r..=centre.0 + r {
                    // The block's content was at (x − sx, y − sy) before.
                    let (px, py) = (x0 - sx, y0 - sy);
                    if px < 0 || py < 0 || px + bs as i32 > pw || py + bs as i32 > ph {
                        continue;
                    }
                    let sad = block_sad(&block, prev, px as usize, py as usize);
                    if (sx, sy) == (0, 0) {
                        still = Some(sad);
                    }
                    worst = worst.max(sad);
                    if best.is_none_or(|(b, v)| sad < b || (sad == b && nearer((sx, sy), v))) {
                        best = Some((sad, (sx, sy)));
                    }
                }
            }
            let (best, v) = best?;
            if worst - best < FLAT * n {
                return None;
            }
            if still.is_some_and(|s| s - best < STILL * n) {
                return Some((0, 0));
            }
            Some(v)
        })
        .collect();
    let mut counts: Vec<(Shift, usize)> = Vec::new();
    for v in votes.into_iter().flatten() {
        match counts.iter_mut().find(|(s, _)| *s == v) {
            Some((_, c)) => *c += 1,
            None => counts.push((v, 1)),
        }
    }
    let voters: usize = counts.iter().map(|(_, c)| c).sum();
    let &(mode, n) = counts.iter().reduce(|a, b| {
        if b.1 > a.1 || (b.1 == a.1 && nearer(b.0, a.0)) {
            b
        } else {
            a
        }
    })?;
    (3 * n >= voters).then_some(mode)
}

/// The levels of the global shift's search: (cell side, search radius,
/// block step). ÷4, ÷2, ÷1: blocks of 8×8 samples; each level searches
/// around twice the coarser one's answer.
const LEVELS: [(usize, i32, usize); 3] = [(4, SEARCH / 4, 1), (2, 3, 1), (1, 3, 2)];

/// A frame's luma summed over the cells of each level of the global
/// shift's search: made once a frame, and kept as the next frame's `prev`.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Pyramid {
    levels: [Plane<u16>; 3],
}

impl Pyramid {
    pub fn of(luma: &Plane<u8>) -> Pyramid {
        Pyramid {
            levels: LEVELS.map(|(f, _, _)| cell_sums(luma, f)),
        }
    }

    /// The luma's size (the finest level's).
    fn size(&self) -> (usize, usize) {
        (self.levels[2].width(), self.levels[2].height())
    }
}

/// The global shift from `prev` to `cur` (content at x in `prev` is at
/// x + shift in `cur`), within ±[`SEARCH`] pixels each way; see the module.
pub fn global_shift(prev: &Plane<u8>, cur: &Plane<u8>) -> Shift {
    if (prev.width(), prev.height()) != (cur.width(), cur.height()) {
        return (0, 0);
    }
    pyramid_shift(&Pyramid::of(prev), &Pyramid::of(cur))
}

/// [`global_shift`] on the frames' pyramids.
pub fn pyramid_shift(prev: &Pyramid, cur: &Pyramid) -> Shift {
    if prev.size() != cur.size() {
        return (0, 0);
    }
    let mut at = (0, 0);
    for (level, &(f, r, step)) in LEVELS.iter().enumerate() {
        let centre = (at.0 * 2, at.1 * 2);
        let (p, q) = (&prev.levels[level], &cur.levels[level]);
        at = vote(p, q, step, centre, r, (f * f) as u32).unwrap_or(centre);
    }
    at
}

/// Where things moved lately, on the coarse grid of `CELL`×`CELL` cells
/// (partial cells at the edges included).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MotionMap {
    cells: Plane<u16>,
}

impl MotionMap {
    /// Forgets everything (a cut).
    pub fn clear(&mut self) {
        self.cells = Plane::default();
    }

    /// Takes a new frame: `cur` against `prev` moved by `shift`. Returns the
    /// share of cells that moved in this frame, in 1/65536.
    pub fn update(&mut self, prev: &Plane<u8>, cur: &Plane<u8>, shift: Shift, noise: u32) -> u32 {
        let (w, h) = (cur.width(), cur.height());
        let (cw, ch) = (w.div_ceil(CELL), h.div_ceil(CELL));
        // The pixels whose place in `prev` is inside the frame: x − sx in
        // [0, w).
        let sx = shift.0 as i64;
        let x_lo = sx.clamp(0, w as i64) as usize;
        let x_hi = (w as i64 + sx).clamp(x_lo as i64, w as i64) as usize;
        // Levels past 255 leave nothing of a u8 difference.
        let noise = noise.min(255) as u8;
        let mut fresh = Plane::new(cw, ch, 0u16);
        fresh
            .par_rows_mut()
            .for_each_init(Vec::new, |diffs: &mut Vec<u8>, (cy, row)| {
                // Each pixel's change less the noise, the largest of the
                // cell's rows.
                diffs.clear();
                diffs.resize(w, 0);
                for y in cy * CELL..((cy + 1) * CELL).min(h) {
                    let py = y as i64 - shift.1 as i64;
                    if py < 0 || py >= h as i64 || x_lo == x_hi {
                        continue;
                    }
                    let c = &cur.row(y)[x_lo..x_hi];
                    let from = (x_lo as i64 - sx) as usize;
                    let p = &prev.row(py as usize)[from..from + (x_hi - x_lo)];
                    for ((d, &a), &b) in diffs[x_lo..x_hi].iter_mut().zip(c).zip(p) {
                        *d = (*d).max(a.abs_diff(b).saturating_sub(noise));
                    }
                }
                for (o, cell) in row.iter_mut().zip(diffs.chunks(CELL)) {
                    let m = cell.iter().copied().max().unwrap_or(0) as u32;
                    *o = m.min(MOTION_CAP) as u16;
                }
            });
        let moved = fresh.as_slice().iter().filter(|&&v| v > 0).count() as u64;
        let share = (moved * 65536 / (cw * ch).max(1) as u64) as u32;
        let grown = grow(&fresh, GROW);
        let same = (self.cells.width(), self.cells.height()) == (cw, ch);
        if same {
            let old = &self.cells;
            let mut cells = grown;
            cells.par_rows_mut().for_each(|(y, row)| {
                for (v, &o) in row.iter_mut().zip(old.row(y)) {
                    *v = (*v).max((o as u32 * KEEP / 16) as u16);
                }
            });
            self.cells = cells;
        } else {
            self.cells = grown;
        }
        share
    }

    /// The motion (levels) at pixel (x, y).
    #[inline]
    pub fn at(&self, x: usize, y: usize) -> u16 {
        if self.cells.is_empty() {
            return 0;
        }
        self.cells.get(x / CELL, y / CELL)
    }

    /// The map at full resolution, `w`×`h` pixels.
    pub fn pixels(&self, w: usize, h: usize) -> Plane<u16> {
        let mut out = Plane::new(w, h, 0u16);
        if self.cells.is_empty() {
            return out;
        }
        out.par_rows_mut().for_each(|(y, row)| {
            let cells = self.cells.row(y / CELL);
            for (x, o) in row.iter_mut().enumerate() {
                *o = cells[x / CELL];
            }
        });
        out
    }
}

/// Below this share of moving cells (in 1/65536, 7%; a shot's running
/// mean) motion weighs fully ...
pub const MOVING_LOW: u32 = 4588;
/// ... and from this share (10%) not at all: when a tenth of the picture or
/// more moves (a dialogue that fills the frame, film grain, a handheld
/// close-up), keeping what moves at full size makes the result change more
/// between frames than the scaled clip does, and motion no longer tells
/// what matters. On the shared clips at the default noise (12), the moving
/// share is 3–5% where motion helps (a dog walked, a juggler, cars in a
/// parking lot, a flower opening) and 11% on the grainy film dialogue.
pub const MOVING_HIGH: u32 = 6554;

/// The share (numerator, denominator) of the motion weight that applies
/// when a running mean `moving` (1/65536) of the cells moves: 1 up to
/// [`MOVING_LOW`], falling to 0 at [`MOVING_HIGH`].
pub fn motion_share(moving: u32) -> (i64, i64) {
    let span = (MOVING_HIGH - MOVING_LOW) as i64;
    ((MOVING_HIGH as i64 - moving as i64).clamp(0, span), span)
}

/// The running mean of the moving share: 31/32 of the last and 1/32 of the
/// new, in integers.
pub fn running_moving(last: u32, share: u32) -> u32 {
    (31 * last + share) / 32
}

/// The largest value within `r` cells each way (a square).
fn grow(p: &Plane<u16>, r: usize) -> Plane<u16> {
    let (w, h) = (p.width(), p.height());
    let mut rows = Plane::new(w, h, 0u16);
    rows.par_rows_mut().for_each(|(y, row)| {
        let src = p.row(y);
        for (x, o) in row.iter_mut().enumerate() {
            *o = src[x.saturating_sub(r)..(x + r + 1).min(w)]
                .iter()
                .copied()
                .max()
                .unwrap_or(0);
        }
    });
    let mut out = Plane::new(w, h, 0u16);
    out.par_rows_mut().for_each(|(y, row)| {
        for yy in y.saturating_sub(r)..(y + r + 1).min(h) {
            for (o, &v) in row.iter_mut().zip(rows.row(yy)) {
                *o = (*o).max(v);
            }
        }
    });
    out
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// A picture with detail at every scale, as a photograph has (noise
    /// blurred over 1, 4 and 16 pixels, added), `dx`, `dy` pixels along.
    pub(crate) fn picture(w: usize, h: usize, dx: i64, dy: i64) -> Plane<u8> {
        const SIDE: i64 = 512;
        let noise = |x: i64, y: i64| -> i64 {
            // splitmix64 of the position.
            let mut s = (x.rem_euclid(SIDE) * SIDE + y.rem_euclid(SIDE)) as u64;
            s = s.wrapping_add(0x9E37_79B9_7F4A_7C15);
            s = (s ^ (s >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            s = (s ^ (s >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            ((s ^ (s >> 31)) >> 56) as i64
        };
        let blur = |x: i64, y: i64, r: i64| -> i64 {
            let mut t = 0;
            for j in -r..=r {
                for i in -r..=r {
                    t += noise(x + i, y + j);
                }
            }
            t / ((2 * r + 1) * (2 * r + 1))
        };
        Plane::from_fn(w, h, |x, y| {
            let (x, y) = (x as i64 - dx, y as i64 - dy);
            let v = (3 * (blur(x / 8, y / 8, 1) - 128)
                + 2 * (blur(x / 2, y / 2, 1) - 128)
                + (noise(x, y) - 128))
                / 2
                + 128;
            v.clamp(0, 255) as u8
        })
    }

    /// The motion map by its definition, pixel by pixel: a frame's cells
    /// (the largest change less the noise, capped), grown, and kept.
    fn map_by_definition(
        old: Option<&Plane<u16>>,
        prev: &Plane<u8>,
        cur: &Plane<u8>,
        (sx, sy): Shift,
        noise: u32,
    ) -> Plane<u16> {
        let (w, h) = (cur.width() as i64, cur.height() as i64);
        let (cw, ch) = (cur.width().div_ceil(CELL), cur.height().div_ceil(CELL));
        let fresh = Plane::from_fn(cw, ch, |cx, cy| {
            let mut m = 0u32;
            for y in (cy * CELL) as i64..((cy + 1) * CELL) as i64 {
                for x in (cx * CELL) as i64..((cx + 1) * CELL) as i64 {
                    let (px, py) = (x - sx as i64, y - sy as i64);
                    if x < w && y < h && px >= 0 && px < w && py >= 0 && py < h {
                        let d = cur.get(x as usize, y as usize);
                        let d = d.abs_diff(prev.get(px as usize, py as usize)) as u32;
                        m = m.max(d.saturating_sub(noise));
                    }
                }
            }
            m.min(MOTION_CAP) as u16
        });
        Plane::from_fn(cw, ch, |cx, cy| {
            let mut m = 0;
            for y in cy.saturating_sub(GROW)..(cy + GROW + 1).min(ch) {
                for x in cx.saturating_sub(GROW)..(cx + GROW + 1).min(cw) {
                    m = m.max(fresh.get(x, y));
                }
            }
            old.map_or(m, |o| m.max((o.get(cx, cy) as u32 * KEEP / 16) as u16))
        })
    }

    #[test]
    fn the_motion_map_follows_its_definition_for_any_shift() {
        for (i, (w, h)) in [(64, 48), (37, 23), (5, 3), (130, 66)]
            .into_iter()
            .enumerate()
        {
            let prev = picture(w, h, 0, 0);
            let cur = picture(w, h, i as i64 * 3 - 2, 1 - i as i64);
            let later = picture(w, h, 7, -5);
            for shift in [(0, 0), (3, -2), (-7, 5), (-40, 0), (0, 70), (16, 16)] {
                for noise in [0, 12, 300] {
                    let mut map = MotionMap::default();
                    map.update(&prev, &cur, shift, noise);
                    let first = map_by_definition(None, &prev, &cur, shift, noise);
                    assert_eq!(map.cells, first, "{w}x{h} {shift:?} {noise}");
                    map.update(&cur, &later, shift, noise);
                    let second = map_by_definition(Some(&first), &cur, &later, shift, noise);
                    assert_eq!(map.cells, second, "{w}x{h} {shift:?} {noise}, kept");
                }
            }
        }
    }

    #[test]
    fn cell_sums_add_up_each_cell() {
        let luma = picture(37, 21, 0, 0);
        for f in [1, 2, 4] {
            let sums = cell_sums(&luma, f);
            assert_eq!((sums.width(), sums.height()), (37 / f, 21 / f));
            for (x, y) in [(0, 0), (37 / f - 1, 21 / f - 1), (3, 2)] {
                let want: u16 = (0..f * f)
                    .map(|i| luma.get(x * f + i % f, y * f + i / f) as u16)
                    .sum();
                assert_eq!(sums.get(x, y), want, "f {f} ({x}, {y})");
            }
        }
    }

    #[test]
    fn a_pan_is_found_to_the_pixel() {
        for shift in [
            (0i32, 0i32),
            (3, 0),
            (-1, -1),
            (-7, 2),
            (13, -11),
            (-15, -6),
            (16, 16),
        ] {
            let prev = picture(320, 180, 0, 0);
            let cur = picture(320, 180, shift.0 as i64, shift.1 as i64);
            assert_eq!(global_shift(&prev, &cur), shift, "{shift:?}");
        }
    }

    #[test]
    fn an_object_crossing_a_still_scene_moves_nothing() {
        let prev = picture(320, 180, 0, 0);
        let mut cur = prev.clone();
        // A bright car, 60×40, that moved 12 pixels to the left.
        for y in 60..100 {
            for x in 100..160 {
                cur.set(x, y, 250);
            }
        }
        assert_eq!(global_shift(&prev, &cur), (0, 0));
    }

    #[test]
    fn a_flat_picture_has_no_shift() {
        let flat = Plane::new(128, 96, 90u8);
        assert_eq!(global_shift(&flat, &flat), (0, 0));
    }

    #[test]
    fn the_motion_map_covers_what_moved_and_fades() {
        let prev = picture(64, 48, 0, 0);
        let mut cur = prev.clone();
        cur.set(30, 20, prev.get(30, 20).wrapping_add(100));
        let mut map = MotionMap::default();
        map.update(&prev, &cur, (0, 0), 8);
        // Grown by GROW cells around the changed pixel's cell (7, 5), and
        // capped at MOTION_CAP levels (the change is 100 less noise 8).
        assert_eq!(map.at(30, 20) as u32, MOTION_CAP);
        assert!(map.at((7 - GROW) * CELL, 20) > 0 && map.at(30, (5 + GROW) * CELL) > 0);
        assert_eq!(map.at(0, 0), 0);
        assert_eq!(map.at((7 + GROW + 1) * CELL, 20), 0);
        // A still frame: the memory fades by KEEP/16.
        let before = map.at(30, 20) as u32;
        map.update(&cur, &cur, (0, 0), 8);
        assert_eq!(map.at(30, 20) as u32, before * KEEP / 16);
        // Changes within the noise level are not motion.
        let mut quiet = MotionMap::default();
        let mut noisy = prev.clone();
        noisy.set(3, 3, prev.get(3, 3).saturating_add(5));
        quiet.update(&prev, &noisy, (0, 0), 8);
        assert_eq!(quiet.at(3, 3), 0);
    }
}
