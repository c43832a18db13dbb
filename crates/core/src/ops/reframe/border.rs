//! A picture set inside the frame: a vertical video posted at 16:9 with a
//! blurred, enlarged copy of itself (or black) on either side, a film
//! letterboxed between bars. What lies beside it is fill, no part of the
//! scene, so the reframe plans inside the picture alone: a 9:16 picture
//! pillarboxed in a 16:9 frame reframed to 9:16 is the picture itself.
//!
//! A frame's picture is found on its face picture (the luma at the finest
//! scale the analysis takes, every [`super::analyze::FACE_EVERY`] frames),
//! by what its edges are: a straight edge across the whole frame, in the
//! same place on both sides of the centre, with fill beyond it that has
//! almost no detail of its own (bars of one colour, or a heavy blur) while
//! the picture between has. A shot takes the picture its frames agree on
//! ([`shot_area`]).

use super::geometry::Rect;
use crate::frame::Plane;

/// A step between neighbouring columns (rows) counts in a row (column)
/// when it is at least this many levels.
const STEP: i32 = 2;
/// The picture's edge must step by [`STEP`] in at least this share of the
/// rows along it: an edge across the whole frame, not a title's letters
/// on a plain card. (A parking lot at dusk beside its own blur steps by 2
/// levels or more in 45–60% of its rows, by 3 in fewer.)
const EDGE_COVER: f32 = 0.4;
/// And by at least this many levels on the mean.
const EDGE_STEP: f32 = 1.0;
/// The fill's mean step between neighbours, at most, in levels: a blur or
/// bars, where the picture has detail.
const FILL_DETAIL: f32 = 1.5;
/// And at most this share of the picture's own mean step (a handheld
/// close-up in soft focus steps by 0.5–1.6 levels, its blur beside it by
/// 0.2–0.4).
const FILL_SHARE: f32 = 0.5;
/// The two edges may lie this far from the same distance to the frame's
/// edges (in the plane's pixels): the picture is centred, to within a
/// pixel or two of rounding.
const CENTRED: usize = 2;
/// The fill on either side is at least this share of the frame's length.
const LEAST: f32 = 0.04;
/// The picture is at least this share of the frame's length: a 9:16 video
/// in a 16:9 frame is 0.32 of its width, a film of 2.76:1 letterboxed 0.64
/// of its height; a line of words centred on a plain card is less.
const LEAST_PICTURE: f32 = 0.3;

/// The picture inside `luma`, where fill borders it on both sides of one
/// axis (pillarbox or letterbox, or both); the whole plane where nothing
/// does.
pub fn picture_area(luma: &Plane<u8>) -> Rect {
    let (w, h) = (luma.width(), luma.height());
    let cols = steps(luma, true);
    let rows = steps(luma, false);
    let (x0, x1) = edges(&cols).unwrap_or((0, w));
    let (y0, y1) = edges(&rows).unwrap_or((0, h));
    Rect::new(x0, y0, x1 - x0, y1 - y0)
}

/// The steps between neighbours along columns (`across`: between column
/// i−1 and i, over every row) or rows: for each i ≥ 1, the mean absolute
/// step and the share of the lines whose step is at least [`STEP`].
fn steps(luma: &Plane<u8>, across: bool) -> Vec<(f32, f32)> {
    let (w, h) = (luma.width(), luma.height());
    let (n, lines) = if across { (w, h) } else { (h, w) };
    let mut sum = vec![0u64; n];
    let mut big = vec![0u32; n];
    if across {
        for y in 0..h {
            let row = luma.row(y);
            for i in 1..w {
                let d = (i32::from(row[i]) - i32::from(row[i - 1])).abs();
                sum[i] += d as u64;
                big[i] += u32::from(d >= STEP);
            }
        }
    } else {
        for y in 1..h {
            let (above, row) = (luma.row(y - 1), luma.row(y));
            for (a, b) in above.iter().zip(row) {
                let d = (i32::from(*b) - i32::from(*a)).abs();
                sum[y] += d as u64;
                big[y] += u32::from(d >= STEP);
            }
        }
    }
    let lines = lines.max(1) as f32;
    sum.iter()
        .zip(&big)
        .map(|(&s, &b)| (s as f32 / lines, b as f32 / lines))
        .collect()
}

/// The picture's first and last-plus-one index along one axis, from its
/// steps ([`steps`]): an edge at `a` (between a−1 and a) and at `b`, as far
/// from either end to within [`CENTRED`], fill with little detail outside
/// them and the picture's detail between.
fn edges(steps: &[(f32, f32)]) -> Option<(usize, usize)> {
    let n = steps.len();
    let least = ((LEAST * n as f32).ceil() as usize).max(2);
    if n < 4 * least {
        return None;
    }
    // Sums from the start, and the largest step from the frame's first
    // step past its edge (1) up to each index and from each index to the
    // end, so that each candidate pair costs no pass over the steps.
    let mut sums = vec![0f64; n + 1];
    for (i, s) in steps.iter().enumerate() {
        sums[i + 1] = sums[i] + f64::from(s.0);
    }
    let mean =
        |r: std::ops::Range<usize>| ((sums[r.end] - sums[r.start]) / r.len().max(1) as f64) as f32;
    let mut up_to = vec![0f32; n + 1];
    for i in 1..n {
        up_to[i + 1] = up_to[i].max(steps[i].0);
    }
    let mut from = vec![0f32; n + 1];
    for i in (0..n).rev() {
        from[i] = from[i + 1].max(steps[i].0);
    }
    let mut best: Option<(f32, usize, usize)> = None;
    for a in least..n / 2 - least {
        let (da, ca) = steps[a];
        if ca < EDGE_COVER || da < EDGE_STEP {
            continue;
        }
        let b_mid = n - a;
        let picture = (LEAST_PICTURE * n as f32).ceil() as usize;
        let near =
            b_mid.saturating_sub(CENTRED).max(a + picture)..=(b_mid + CENTRED).min(n - least);
        for (b, &(db, cb)) in steps
            .iter()
            .enumerate()
            .take(*near.end() + 1)
            .skip(*near.start())
        {
            if cb < EDGE_COVER || db < EDGE_STEP {
                continue;
            }
            // The fill, its first step past the frame's edge left out (a
            // codec's edge pixels), and the picture between the edges.
            let fill = mean(1..a).max(mean(b + 1..n));
            let inside = mean(a + 1..b);
            let fill_most = up_to[a].max(from[b + 1]);
            if fill > FILL_DETAIL || fill > FILL_SHARE * inside || fill_most > 0.5 * da.min(db) {
                continue;
            }
            let score = da + db;
            if best.is_none_or(|(s, ..)| score > s) {
                best = Some((score, a, b));
            }
        }
    }
    best.map(|(_, a, b)| (a, b))
}

/// The picture a shot's frames agree on, in the input's pixels, from the
/// pictures found on the frames that were looked at: where at least three
/// in five of them found one, and four in five of those found nearly the
/// same bounds (within `slack` pixels), their innermost bounds, shrunk to
/// even pixels (a window's edges are even); `None` where the picture fills
/// the frame, or the frames disagree. A frame that finds none has lost an
/// edge where the picture's own edge matches the fill (a dark corner
/// beside its own blur); frames that find pictures of other bounds are a
/// scene, not a frame.
pub fn shot_area<'a>(
    found: impl IntoIterator<Item = &'a Rect>,
    input: (usize, usize),
    slack: usize,
) -> Option<Rect> {
    let found: Vec<&Rect> = found.into_iter().collect();
    let full = Rect::new(0, 0, input.0, input.1);
    let framed: Vec<&&Rect> = found.iter().filter(|r| ***r != full).collect();
    if found.is_empty() || 5 * framed.len() < 3 * found.len() {
        return None;
    }
    // The bounds most of them share: the median's, and those near it.
    let mut xs: Vec<(usize, usize, usize, usize)> = framed
        .iter()
        .map(|r| (r.x, r.y, r.right(), r.bottom()))
        .collect();
    xs.sort_unstable();
    let m = xs[xs.len() / 2];
    let near = |a: usize, b: usize| a.abs_diff(b) <= slack;
    let agree: Vec<_> = xs
        .iter()
        .filter(|r| near(r.0, m.0) && near(r.1, m.1) && near(r.2, m.2) && near(r.3, m.3))
        .collect();
    if 5 * agree.len() < 4 * framed.len() {
        return None;
    }
    let x0 = agree.iter().map(|r| r.0).max()?;
    let y0 = agree.iter().map(|r| r.1).max()?;
    let x1 = agree.iter().map(|r| r.2).min()?.min(input.0);
    let y1 = agree.iter().map(|r| r.3).min()?.min(input.1);
    let (x0, y0) = (x0.next_multiple_of(2), y0.next_multiple_of(2));
    let (x1, y1) = (x1 - x1 % 2, y1 - y1 % 2);
    (x1 > x0 && y1 > y0).then(|| Rect::new(x0, y0, x1 - x0, y1 - y0))
}

/// Whether `a` and `b` are one picture's bounds, found by two looks
/// (within `slack` pixels, and the rounding to even ones).
pub fn near(a: Rect, b: Rect, slack: usize) -> bool {
    let near = |p: usize, q: usize| p.abs_diff(q) <= slack + 2;
    near(a.x, b.x) && near(a.y, b.y) && near(a.right(), b.right()) && near(a.bottom(), b.bottom())
}

/// Whether a shot whose own frames do not settle its picture
/// ([`shot_area`]: a shot too short to be looked at, or with an edge lost
/// in half its looks) takes `clip`'s, the picture of the whole video's
/// frames: at most half its looks found none, and every one that found a
/// picture found `clip`'s (within `slack` pixels, and the rounding to even
/// ones).
pub fn takes_clips<'a>(
    found: impl IntoIterator<Item = &'a Rect>,
    clip: Rect,
    input: (usize, usize),
    slack: usize,
) -> bool {
    let full = Rect::new(0, 0, input.0, input.1);
    let (mut looks, mut none) = (0, 0);
    for r in found {
        looks += 1;
        if *r == full {
            none += 1;
        } else if !near(*r, clip, slack) {
            return false;
        }
    }
    2 * none <= looks
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::noise::Noise;

    /// Detail everywhere: noise of ±`amp` around a slow ramp.
    fn scene(w: usize, h: usize, seed: u64, amp: u8) -> Plane<u8> {
        let mut n = Noise::new(seed);
        Plane::from_fn(w, h, |x, y| {
            let base = 60 + (x * 100 / w.max(1)) as i32 + (y * 40 / h.max(1)) as i32;
            let v = base + i32::from(n.byte() % (2 * amp + 1)) - i32::from(amp);
            v.clamp(0, 255) as u8
        })
    }

    /// `inner` set at (x, y) in a frame of `w`×`h` filled by `fill(x, y)`.
    fn framed(
        w: usize,
        h: usize,
        inner: &Plane<u8>,
        at: (usize, usize),
        mut fill: impl FnMut(usize, usize) -> u8,
    ) -> Plane<u8> {
        Plane::from_fn(w, h, |x, y| {
            let (ix, iy) = (x.wrapping_sub(at.0), y.wrapping_sub(at.1));
            if ix < inner.width() && iy < inner.height() {
                inner.get(ix, iy)
            } else {
                fill(x, y)
            }
        })
    }

    #[test]
    fn a_vertical_picture_between_blurred_fill_is_found() {
        // 9:16 at 720 high is 405 wide, at 437 in a 1280 frame: the fill a
        // smooth gradient, as a heavy blur leaves it, darker than the picture.
        let inner = scene(406, 720, 1, 20);
        let f = framed(1280, 720, &inner, (437, 0), |x, y| {
            (40 + x / 40 + y / 60) as u8
        });
        assert_eq!(picture_area(&f), Rect::new(437, 0, 406, 720));
    }

    #[test]
    fn a_letterboxed_film_and_a_black_pillarbox_are_found() {
        let film = scene(640, 268, 2, 12);
        let f = framed(640, 360, &film, (0, 46), |_, _| 16);
        assert_eq!(picture_area(&f), Rect::new(0, 46, 640, 268));
        // 4:3 in 16:9, bars of black with a codec's noise of a level.
        let mut n = Noise::new(9);
        let old = scene(480, 360, 3, 15);
        let f = framed(640, 360, &old, (80, 0), |_, _| n.byte() % 2);
        assert_eq!(picture_area(&f), Rect::new(80, 0, 480, 360));
    }

    #[test]
    fn a_full_frame_a_plain_card_and_a_picture_off_centre_are_not_framed() {
        let full = scene(640, 360, 4, 15);
        assert_eq!(picture_area(&full), Rect::new(0, 0, 640, 360));
        // A title on a plain card: words, not an edge across the frame.
        let words = scene(300, 40, 5, 60);
        let card = framed(640, 360, &words, (170, 160), |_, _| 235);
        assert_eq!(picture_area(&card), Rect::new(0, 0, 640, 360));
        // A plain wall on one side only (a door's edge at x = 100): the
        // picture is not centred between two edges.
        let room = scene(540, 360, 6, 15);
        let f = framed(640, 360, &room, (100, 0), |_, _| 200);
        assert_eq!(picture_area(&f), Rect::new(0, 0, 640, 360));
    }

    #[test]
    fn a_shot_takes_the_picture_most_of_its_frames_agree_on() {
        let input = (1280, 720);
        let full = Rect::new(0, 0, 1280, 720);
        let a = Rect::new(437, 0, 406, 720);
        let b = Rect::new(436, 0, 407, 720);
        // Innermost bounds, at even pixels.
        assert_eq!(
            shot_area([&a, &b, &a, &a, &b], input, 2),
            Some(Rect::new(438, 0, 404, 720))
        );
        // Two frames in five that saw the whole frame (an edge lost in the
        // dark) are outvoted; three are not.
        assert!(shot_area([&a, &a, &a, &full, &full], input, 2).is_some());
        assert_eq!(shot_area([&a, &a, &full, &full, &full], input, 2), None);
        // Frames that disagree (a scene with a still edge that moves).
        let c = Rect::new(300, 0, 680, 720);
        assert_eq!(shot_area([&a, &c, &a, &c, &a], input, 2), None);
        assert_eq!(shot_area([], input, 2), None);
        // A shot that does not settle it alone takes the video's picture
        // where nothing it saw says otherwise.
        let clip = Rect::new(438, 0, 404, 720);
        assert!(takes_clips([], clip, input, 2));
        assert!(takes_clips([&a, &full], clip, input, 2));
        assert!(!takes_clips([&a, &full, &full], clip, input, 2));
        assert!(!takes_clips([&full], clip, input, 2));
        assert!(!takes_clips([&a, &c], clip, input, 2));
    }
}
