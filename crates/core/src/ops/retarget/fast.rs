//! `retarget` in fast mode (`mode=fast`, the default in `run`): seam carving
//! for video that holds still.
//!
//! Real footage is judged by two figures (docs/DESIGN.md §4, `seamstream
//! quality`): how much of the picture is kept, and how much the result
//! changes between frames beyond what scaling would. Carving each frame
//! afresh keeps the picture but is chaotic: codec noise alone moves seams,
//! and every moved seam shifts the texture beside it. So a shot's seams are
//! placed once and then followed:
//!
//! 1. **Motion** ([`super::motion`]): the global shift from the last frame
//!    (block matching, the most common motion of textured blocks), and a
//!    map of what moved beyond it, grown and remembered for a few frames.
//! 2. **Cuts** ([`FastState::observe`]): the first frame, a new size, or a
//!    mean luma change above `cut` levels on an 8-pixel grid, once the
//!    global shift is taken out (a fast pan is no cut), start a new shot:
//!    every memory is dropped.
//! 3. **Placing** a new shot's seams ([`super::temporal::Track::place`]):
//!    stacked (4 passes) or fine (`passes` passes) by the seams' joins and
//!    the detail they remove; then **settling** them on that same frame
//!    ([`super::temporal::Track::settle`]): followed as in step 4, with no
//!    shift, until a follow changes nothing (at most
//!    [`super::temporal::SETTLE_FOLLOWS`] times), so that a still shot
//!    gives the same frame from its first on.
//! 4. **Following** ([`super::temporal::Track::follow`]): each seam moves
//!    with the global shift, then takes its best path within `band` pixels
//!    on the costs of this frame: the energy, `motion`% of a level a level
//!    of motion (seams keep off people and cars that move, even smooth ones
//!    that gradient energy would carve; less so as more of the picture
//!    moves), and `coherence`% of the picture change the move makes.
//!    A **still** frame, within `noise` levels at every pixel of the frame
//!    the seams were last placed or followed on, keeps them as they are:
//!    following only chases the codec's noise there, and a seam that a
//!    level of noise tips moves the texture beside it.
//!
//! Enlarging follows the seams of each round on a copy and inserts beside
//! them, as exact mode does. Both sides: the width first, then the height
//! on the transposed frame, each with its own seams. The GPU does every
//! step in the same integers (src/cuda/ops/retarget), so both give the
//! same frames.

use std::borrow::Cow;

use rayon::prelude::*;

use super::energy::{Energy, luma_unit};
use super::exact::insert_chosen;
use super::motion::{MotionMap, Pyramid, Shift, motion_share, pyramid_shift, running_moving};
use super::passes::without_columns;
use super::temporal::{Base, Costs, Track, frame_base, gradient_sums};
use super::{CarveOptions, check_target, combine_masks};

use crate::error::Result;
use crate::frame::Plane;
use crate::ops::pixel::Pixel;

/// Passes of the fine placement of a new shot's seams.
pub const DEFAULT_PASSES: usize = 32;
/// Percent of the picture change a seam's move makes that the move costs.
pub const DEFAULT_COHERENCE: u32 = 100;
/// Percent of a level of energy that a level of motion costs.
pub const DEFAULT_MOTION: u32 = 1200;
/// Pixels a seam may move in a frame.
pub const DEFAULT_BAND: usize = 15;
/// Mean luma change (levels) that counts as a scene cut.
pub const DEFAULT_CUT: u32 = 30;
/// Luma change (levels) taken for noise, not motion.
pub const DEFAULT_NOISE: u32 = 12;
/// Cut detection compares the luma on a grid of this spacing.
const CUT_GRID: usize = 8;

/// Fast mode's knobs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FastParams {
    pub energy: Energy,
    pub passes: usize,
    pub coherence: u32,
    pub motion: u32,
    pub band: usize,
    pub cut: u32,
    pub noise: u32,
}

impl Default for FastParams {
    fn default() -> Self {
        Self {
            energy: Energy::Forward,
            passes: DEFAULT_PASSES,
            coherence: DEFAULT_COHERENCE,
            motion: DEFAULT_MOTION,
            band: DEFAULT_BAND,
            cut: DEFAULT_CUT,
            noise: DEFAULT_NOISE,
        }
    }
}

/// Everything fast mode keeps between frames.
#[derive(Clone, Debug, Default)]
pub struct FastState {
    /// The last input's luma, and its sums for the global shift.
    last: Plane<u8>,
    pyramid: Pyramid,
    motion: MotionMap,
    /// The seams of each shrink, per dimension: the width's (or its
    /// enlarging rounds'), then the height's.
    tracks: [Vec<Track>; 2],
    /// Shots started after a cut (for reports and tests).
    pub cuts: u64,
    /// The last global shift found.
    pub shift: Shift,
    /// The shot's running mean of the share of the picture that moves
    /// (1/65536), and the share of the motion weight that applies (see
    /// [`super::motion::motion_share`]).
    moving: Option<u32>,
    share: (i64, i64),
    /// The luma of the frame the seams were last placed or followed on.
    reference: Plane<u8>,
    /// Whether the last input was within `noise` levels of `reference` at
    /// every pixel: a still frame, which keeps the seams as they are.
    pub still: bool,
}

impl FastState {
    /// The seams of the shot's shrinks: the width's (or its enlarging
    /// rounds'), then the height's (for reports and tests).
    pub fn tracks(&self) -> &[Vec<Track>; 2] {
        &self.tracks
    }

    /// Takes the next input's luma: on a cut (or a first frame, or a new
    /// size) forgets everything and returns `None`, else brings the motion
    /// map up to date, tells whether the frame is still, and returns the
    /// global shift.
    pub fn observe(&mut self, luma: &Plane<u8>, params: &FastParams) -> Option<Shift> {
        let same = (self.last.width(), self.last.height()) == (luma.width(), luma.height());
        let pyramid = Pyramid::of(luma);
        let shift = if same {
            pyramid_shift(&self.pyramid, &pyramid)
        } else {
            (0, 0)
        };
        self.pyramid = pyramid;
        if !same || is_cut(&self.last, luma, shift, params.cut) {
            if !self.last.is_empty() {
                self.cuts += 1;
            }
            self.tracks = Default::default();
            self.motion.clear();
            self.shift = (0, 0);
            self.moving = None;
            self.share = (0, 1);
            self.last = luma.to_packed();
            self.reference = self.last.clone();
            self.still = false;
            return None;
        }
        self.shift = shift;
        self.still = within_noise(&self.reference, luma, params.noise);
        if !self.still {
            self.reference = luma.to_packed();
        }
        if params.motion > 0 {
            let moved = self.motion.update(&self.last, luma, shift, params.noise);
            let moving = self.moving.map_or(moved, |m| running_moving(m, moved));
            self.moving = Some(moving);
            self.share = motion_share(moving);
        }
        self.last = luma.to_packed();
        Some(shift)
    }
}

/// Whether `cur` starts a new shot after `last`: the mean |cur − last moved
/// by `shift`| on a grid of every `CUT_GRID`-th pixel (points the shift
/// brings in from outside left out) is above `cut` levels.
pub fn is_cut(last: &Plane<u8>, cur: &Plane<u8>, shift: Shift, cut: u32) -> bool {
    let (w, h) = (cur.width() as i64, cur.height() as i64);
    let (mut diff, mut n) = (0u64, 0u64);
    for y in (0..h).step_by(CUT_GRID) {
        let py = y - shift.1 as i64;
        if py < 0 || py >= h {
            continue;
        }
        let (a, b) = (cur.row(y as usize), last.row(py as usize));
        for x in (0..w).step_by(CUT_GRID) {
            let px = x - shift.0 as i64;
            if px >= 0 && px < w {
                diff += a[x as usize].abs_diff(b[px as usize]) as u64;
                n += 1;
            }
        }
    }
    diff > cut as u64 * n
}

/// Whether every pixel of `cur` is within `noise` levels of `reference`.
pub fn within_noise(reference: &Plane<u8>, cur: &Plane<u8>, noise: u32) -> bool {
    // A u8 difference is never above 255.
    let noise = noise.min(255) as u8;
    (0..cur.height()).into_par_iter().all(|y| {
        let (a, b) = (reference.row(y), cur.row(y));
        a.iter().zip(b).all(|(&p, &q)| p.abs_diff(q) <= noise)
    })
}

/// What the carving of a frame takes from [`FastState::observe`]: the
/// shift (`None` at a cut), the share of the motion weight, and whether
/// the frame is still.
#[derive(Clone, Copy)]
struct Seen {
    shift: Option<Shift>,
    share: (i64, i64),
    still: bool,
}

/// What one side's carving works on: the frame, its luma, mask and motion,
/// changed together.
struct Side<'a, P: Clone> {
    /// The frame: the input itself until a seam changes it.
    img: Cow<'a, Plane<P>>,
    luma: Plane<u8>,
    mask: Option<Plane<i8>>,
    motion: Option<Plane<u16>>,
}

impl<P: Pixel> Side<'_, P> {
    fn transposed(self) -> Self {
        Side {
            img: Cow::Owned(self.img.transposed()),
            luma: self.luma.transposed(),
            mask: self.mask.map(|m| m.transposed()),
            motion: self.motion.map(|m| m.transposed()),
        }
    }

    /// Brings `tracks[slot]` to the `k` seams to take from this frame: the
    /// track's, followed, when it was made on a frame of this shape in this
    /// shot; else new ones, placed and settled.
    fn seams(
        &self,
        k: usize,
        params: &FastParams,
        Seen {
            shift,
            share,
            still,
        }: Seen,
        slot: usize,
        tracks: &mut Vec<Track>,
    ) {
        let (w, h) = (self.luma.width(), self.luma.height());
        let mask = self.mask.as_ref();
        let live = shift.is_some()
            && tracks
                .get(slot)
                .is_some_and(|t| (t.width, t.height, t.k) == (w, h, k));
        if live && still {
            return;
        }
        if !live {
            let t = Track::place(&self.luma, mask, k, params.passes, params.energy);
            tracks.truncate(slot);
            tracks.push(t);
        }
        let unit = luma_unit(params.energy) as i64;
        let per_level = (params.coherence as i64 * unit, 100);
        let base = frame_base(
            &self.luma,
            params.energy,
            self.motion.as_ref(),
            (params.motion as i64 * unit * share.0, 100 * share.1),
            mask,
            params.band,
            per_level,
        );
        let grad = gradient_sums(&self.luma);
        let track = &mut tracks[slot];
        // A new shot's seams settle on its first frame.
        let shift = shift.filter(|_| live);
        match &base {
            Base::Narrow(base) => {
                let costs = self.costs(base, &grad, params, per_level);
                track.follow_or_settle(&costs, mask, shift, params.band);
            }
            Base::Wide(base) => {
                let costs = self.costs(base, &grad, params, per_level);
                track.follow_or_settle(&costs, mask, shift, params.band);
            }
        }
    }

    /// The band DP's costs of this side, on `base`.
    fn costs<'a, T>(
        &'a self,
        base: &'a Plane<T>,
        grad: &'a Plane<u32>,
        params: &FastParams,
        (per_level, per_level_div): (i64, i64),
    ) -> Costs<'a, T> {
        Costs {
            luma: &self.luma,
            base,
            grad,
            forward: params.energy == Energy::Forward,
            per_level,
            per_level_div,
        }
    }

    /// Removes `k` seams a row: from the frame, and when `aux` from its
    /// luma, mask and motion too (which are dropped otherwise: nothing
    /// reads them after the last shrink).
    fn remove(&mut self, cols: &[u32], k: usize, aux: bool) {
        self.img = Cow::Owned(without_columns(&self.img, cols, k));
        if !aux {
            self.luma = Plane::default();
            self.mask = None;
            self.motion = None;
            return;
        }
        self.luma = without_columns(&self.luma, cols, k);
        self.mask = self.mask.take().map(|m| without_columns(&m, cols, k));
        self.motion = self.motion.take().map(|m| without_columns(&m, cols, k));
    }

    /// Changes the width to `target`, with the seams of `tracks`.
    /// `aux`: whether the luma, mask and motion are read afterwards.
    fn carve(
        mut self,
        target: usize,
        params: &FastParams,
        seen: Seen,
        tracks: &mut Vec<Track>,
        aux: bool,
    ) -> Self {
        let w = self.img.width();
        if target < w {
            let k = w - target;
            self.seams(k, params, seen, 0, tracks);
            self.remove(&tracks[0].seams, k, aux);
            return self;
        }
        let mut round = 0;
        while self.img.width() < target {
            let (w, h) = (self.img.width(), self.img.height());
            let k = (target - w).min((w / 2).max(1));
            self.seams(k, params, seen, round, tracks);
            let cols = &tracks[round].seams;
            let mut chosen = Plane::new(w, h, false);
            for y in 0..h {
                for &x in &cols[y * k..(y + 1) * k] {
                    chosen.set(x as usize, y, true);
                }
            }
            let (img, mask) = insert_chosen(&self.img, self.mask.as_ref(), &chosen);
            self.motion = self.motion.map(|m| repeat_chosen(&m, &chosen, k));
            self.luma = img.map(|p| p.luma());
            self.img = Cow::Owned(img);
            self.mask = mask;
            round += 1;
        }
        self
    }
}

/// Repeats each chosen pixel of every row (as [`insert_chosen`] does for a
/// mask).
fn repeat_chosen<T: Copy + Default>(p: &Plane<T>, chosen: &Plane<bool>, k: usize) -> Plane<T> {
    let (w, h) = (p.width(), p.height());
    let mut out = Plane::new(w + k, h, T::default());
    for y in 0..h {
        let (src, pick) = (p.row(y), chosen.row(y));
        let dst = out.row_mut(y);
        let mut o = 0;
        for x in 0..w {
            dst[o] = src[x];
            o += 1;
            if pick[x] {
                dst[o] = src[x];
                o += 1;
            }
        }
    }
    out
}

/// Seam-carves one frame of a video to `target_w`×`target_h` in fast mode,
/// keeping its seams in `state` for the next frame.
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
    let luma = src.map(|p| p.luma());
    let shift = state.observe(&luma, params);
    let motion = (params.motion > 0).then(|| state.motion.pixels(w, h));
    let seen = Seen {
        shift,
        share: state.share,
        still: state.still,
    };
    let side = Side {
        img: Cow::Borrowed(src),
        luma,
        mask,
        motion,
    }
    .carve(target_w, params, seen, &mut state.tracks[0], target_h != h);
    if target_h == h {
        // The input itself when nothing changed, packed as every result.
        return Ok(match side.img {
            Cow::Borrowed(p) => p.to_packed(),
            Cow::Owned(p) => p,
        });
    }
    // The height, as the width of the transposed frame: its columns move
    // with the picture's rows.
    let seen_t = Seen {
        shift: shift.map(|(x, y)| (y, x)),
        ..seen
    };
    let side = side
        .transposed()
        .carve(target_h, params, seen_t, &mut state.tracks[1], false);
    Ok(side.img.transposed())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::frame::Rgba;
    use crate::ops::retarget::passes::without_columns;
    use crate::ops::retarget::tests::noise;

    #[test]
    fn protected_pixels_are_never_carved() {
        let protect = Plane::from_fn(40, 12, |x, _| u8::from((10..20).contains(&x)));
        let marker = Plane::from_fn(40, 12, |x, y| [x as u8, y as u8, 0, 255]);
        let opts = CarveOptions {
            energy: Energy::Forward,
            protect: Some(&protect),
            remove: None,
        };
        let mut state = FastState::default();
        for _ in 0..3 {
            let out =
                retarget_fast::<Rgba>(&marker, 25, 12, &opts, &FastParams::default(), &mut state)
                    .unwrap();
            for y in 0..12 {
                let kept: Vec<u8> = out.row(y).iter().map(|p| p[0]).collect();
                for x in 10..20u8 {
                    assert!(kept.contains(&x), "row {y} lost protected column {x}");
                }
            }
        }
    }

    #[test]
    fn still_frames_give_the_same_output_and_a_cut_resets() {
        let a = noise(64, 20, 1);
        let b = noise(64, 20, 2);
        let params = FastParams::default();
        let opts = CarveOptions::default();
        let mut state = FastState::default();
        // A shot's seams settle on its first frame: a still picture gives
        // that frame from then on.
        let first = retarget_fast(&a, 48, 20, &opts, &params, &mut state).unwrap();
        for i in 2..=6 {
            let again = retarget_fast(&a, 48, 20, &opts, &params, &mut state).unwrap();
            assert_eq!(again, first, "frame {i} differs from the first");
        }
        assert_eq!(state.cuts, 0);
        // A different picture is a cut: the result is that of a first frame,
        // and holds from there.
        let after_cut = retarget_fast(&b, 48, 20, &opts, &params, &mut state).unwrap();
        assert_eq!(state.cuts, 1);
        let fresh = retarget_fast(&b, 48, 20, &opts, &params, &mut FastState::default()).unwrap();
        assert_eq!(after_cut, fresh);
        for i in 2..=4 {
            let again = retarget_fast(&b, 48, 20, &opts, &params, &mut state).unwrap();
            assert_eq!(again, after_cut, "frame {i} after the cut differs");
        }
    }

    /// `picture` with −1, 0 or +1 level on every pixel (a position hash),
    /// a different pattern each `seed`: the noise of a still shot from a
    /// codec, and more.
    fn with_noise(picture: &Plane<u8>, seed: u64) -> Plane<u8> {
        Plane::from_fn(picture.width(), picture.height(), |x, y| {
            let mut s = ((x as u64) << 32) ^ ((y as u64) << 8) ^ seed;
            s = s.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            s ^= s >> 29;
            s = s.wrapping_mul(0xBF58_476D_1CE4_E5B9);
            s ^= s >> 32;
            let v = picture.get(x, y);
            match s % 3 {
                0 => v.saturating_add(1),
                1 => v.saturating_sub(1),
                _ => v,
            }
        })
    }

    /// Carves `frames` as one shot to 3/4 of their width, both sides the
    /// width's; asserts that every frame loses the seams of the first.
    fn assert_still(frames: &[Plane<u8>], what: &str) {
        let (w, h) = (frames[0].width(), frames[0].height());
        let (tw, k) = (w * 3 / 4, w - w * 3 / 4);
        let (params, opts) = (FastParams::default(), CarveOptions::default());
        let mut state = FastState::default();
        retarget_fast(&frames[0], tw, h, &opts, &params, &mut state).unwrap();
        let seams = state.tracks()[0][0].seams.clone();
        for (i, f) in frames.iter().enumerate().skip(1) {
            let out = retarget_fast(f, tw, h, &opts, &params, &mut state).unwrap();
            assert_eq!(state.cuts, 0, "{what}");
            assert!(
                state.tracks()[0][0].seams == seams,
                "{what}: frame {} moved the seams of frame 1",
                i + 1
            );
            assert_eq!(
                out,
                without_columns(f, &seams, k),
                "{what}: frame {}",
                i + 1
            );
        }
    }

    #[test]
    fn a_still_photograph_with_noise_keeps_the_seams_of_its_first_frame() {
        // Detail at every scale, as a photograph has, and ±1 level of noise
        // on every pixel, a new pattern each frame.
        let photo = super::super::motion::tests::picture(192, 108, 0, 0);
        let frames: Vec<Plane<u8>> = (0..8).map(|t| with_noise(&photo, t)).collect();
        assert_still(&frames, "a photograph");
    }

    #[test]
    fn changes_within_the_noise_add_up_until_the_seams_follow_again() {
        // A patch that brightens by 5 levels a frame: within the noise (12)
        // of the frame the seams were followed on for two frames, then not.
        let photo = super::super::motion::tests::picture(96, 40, 0, 0);
        let (params, opts) = (FastParams::default(), CarveOptions::default());
        let mut state = FastState::default();
        let mut still = Vec::new();
        for t in 0..6u8 {
            let frame = Plane::from_fn(96, 40, |x, y| {
                let v = photo.get(x, y);
                if (30..50).contains(&x) && y < 20 {
                    v.saturating_add(5 * t).min(250)
                } else {
                    v
                }
            });
            retarget_fast(&frame, 72, 40, &opts, &params, &mut state).unwrap();
            still.push(state.still);
        }
        assert_eq!(still, [false, true, true, false, true, true]);
        assert_eq!(state.cuts, 0);
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
            for _ in 0..2 {
                let out = retarget_fast(&img, tw, th, &opts, &params, &mut state).unwrap();
                assert_eq!((out.width(), out.height()), (tw, th));
            }
        }
        assert_eq!(
            retarget_fast(&img, 31, 17, &opts, &params, &mut state).unwrap(),
            img
        );
    }

    #[test]
    fn a_pan_carries_the_seams_with_the_picture() {
        // A scene panning 3 pixels a frame: once the seams have settled,
        // each frame's result is the last one's moved by the pan, away from
        // the edge that new picture comes in at.
        let scene = super::super::motion::tests::picture(260, 64, 0, 0);
        let frame = |t: usize| Plane::from_fn(160, 64, |x, y| scene.get(x + 60 - 3 * t, y));
        let params = FastParams {
            motion: 0,
            ..Default::default()
        };
        let opts = CarveOptions::default();
        let mut state = FastState::default();
        let mut outs = Vec::new();
        for t in 0..10 {
            outs.push(retarget_fast(&frame(t), 120, 64, &opts, &params, &mut state).unwrap());
        }
        assert_eq!((state.shift, state.cuts), ((3, 0), 0));
        let (a, b) = (&outs[8], &outs[9]);
        let same = (0..64)
            .map(|y| {
                (20..100)
                    .filter(|&x| a.get(x, y) == b.get(x + 3, y))
                    .count()
            })
            .sum::<usize>();
        assert!(same * 10 >= 64 * 80 * 9, "{same} of {}", 64 * 80);
    }
}
