//! What each frame holds that a reframe must keep: faces, text, and what
//! moves against the background; and where shots start.
//!
//! Everything runs on small pictures made from the frame by box means
//! ([`Thumbs`]): a *thumbnail* about 480 pixels wide (cut detection, the
//! camera's shift, text, the background model) and, on every
//! [`FACE_EVERY`]-th frame, a luma picture twice as large for faces. Both
//! are exact integer means, so the GPU makes the same ones.
//!
//! - **Shots**: the thumbnail's mean luma change after the camera's global
//!   shift is taken out, above `cut` levels (as fast retargeting's cuts);
//!   and a fade or dissolve through one colour, at its first blank frame
//!   ([`BLANK`]): title cards that fade one into the next show one card
//!   each, and the window may change unseen where the picture is blank.
//! - **Moving subjects**: each frame against a model of the shot's
//!   background, made on a picture half the thumbnail's size in the
//!   coordinates of the scene (frames placed by their accumulated shift, so
//!   a pan keeps one background). Offline, the background of a stretch of up
//!   to [`SEGMENT`] frames is the median of [`SAMPLES`] frames spread over
//!   it, so a woman and a dog who move about the whole shot stand out in
//!   every frame even when they pause; live, it is a running mean.
//!   Differences above the frame's noise, opened to drop specks, grouped
//!   into boxes; a box counts when its neighbours in time see one there too.
//!   A frame where more than [`MAX_MOVING`] of the picture stands out (a
//!   handheld camera that turns or zooms) has no moving subjects.
//! - **Faces** ([`super::faces`]), grown to the head (hair, ears, chin);
//!   the planner holds the shoulders where it has room.
//! - **Text** ([`super::text`]) on every thumbnail, and on a title card (a
//!   plain ground) everything it shows ([`card_blocks`]); what moves on a
//!   card or a blank frame is no subject, and neither is what a blank frame
//!   still shows faintly. Offline, small print
//!   (letters under 6 thumbnail pixels: a 20-px legal line at 720p) also
//!   on the face picture, kept where the next face frame or the last sees
//!   it too, and given to the frames nearest its face frame.

use super::camera::{Similarity, Template};
use super::faces::Faces;
use super::foreground::{Placed, confirm_in_time, foreground_boxes, median_background};
use super::geometry::Rect;
use super::text::{card_blocks, luma_histogram, shrink, small_text_blocks, text_blocks};
use crate::frame::{Frame, Plane, Rgba};
use crate::ops::retarget::fast::is_cut;
use crate::ops::retarget::motion::{Shift, global_shift};

/// The thumbnail's target width and height: the factor is the smallest
/// whole number that brings the frame within them.
pub const THUMB_SIZE: (usize, usize) = (480, 270);
/// Faces are looked for on every this-many frames (three times a second at
/// 30 fps; the plan holds a subject for a while either side, and what moves
/// is found on every frame).
pub const FACE_EVERY: usize = 10;
/// Frames in the offline background model's stretch, and frames sampled
/// for its median.
pub const SEGMENT: usize = 600;
pub use super::foreground::{MAX_MOVING, MIN_MOVING, SAMPLES};
/// Text at least this share of the frame's height is required.
pub const MIN_TEXT: f64 = 0.015;
/// Text must be seen in half the frames within this many either side.
const TEXT_RADIUS: usize = 6;
/// A frame whose thumbnail's luma spreads by less than this (its standard
/// deviation, in levels) is blank: the middle of a fade or a dissolve
/// through one colour. The first blank frame after one that is not starts
/// a shot. Promo's title cards, which fade one into the next through
/// white, go down to 0.4–2.3 between cards; every frame of the other shared
/// clips spreads by 10 levels or more (parking-lot at dusk the least).
pub const BLANK: f64 = 3.0;
/// A blank frame within this many frames of a cut starts no shot of its
/// own (a cut into a fade).
pub const FADE_AFTER_CUT: usize = 5;

/// Whether a picture of luma histogram `hist` is a blank frame
/// ([`BLANK`]).
fn blank(hist: &[usize; 256]) -> bool {
    let n: usize = hist.iter().sum();
    if n == 0 {
        return false;
    }
    let (sum, sq) = hist
        .iter()
        .enumerate()
        .fold((0f64, 0f64), |(s, q), (v, &c)| {
            let v = v as f64;
            (s + v * c as f64, q + v * v * c as f64)
        });
    let mean = sum / n as f64;
    (sq / n as f64 - mean * mean).max(0.0) < BLANK * BLANK
}

/// What a subject is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Kind {
    Face,
    Text,
    Moving,
    /// A user's hint or protect mask.
    Hint,
}

/// Something a frame holds, in the input's pixels.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Subject {
    pub rect: Rect,
    pub kind: Kind,
    /// The window must hold it whole (if it can).
    pub required: bool,
}

/// What the analysis found in one frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Observation {
    /// The frame starts a shot.
    pub cut: bool,
    /// The camera's shift from the last frame, in thumbnail pixels: the
    /// picture's global shift, unless its textured background stood still
    /// (something large crossed a still scene).
    pub shift: Shift,
    pub subjects: Vec<Subject>,
    /// On a frame looked at for faces: the picture inside the frame, where
    /// fill borders it (a pillarbox or letterbox, [`super::border`]), else
    /// the whole frame; in the input's pixels.
    pub picture: Option<Rect>,
}

/// The thumbnail factor for a `w`×`h` input.
pub fn thumb_factor(w: usize, h: usize) -> usize {
    w.div_ceil(THUMB_SIZE.0)
        .max(h.div_ceil(THUMB_SIZE.1))
        .max(1)
}

/// The face picture's factor: half the thumbnail's (at least 1).
pub fn face_factor(w: usize, h: usize) -> usize {
    (thumb_factor(w, h) / 2).max(1)
}

/// Whether frame `i` is one faces are looked for on.
pub fn face_frame(i: usize) -> bool {
    i.is_multiple_of(FACE_EVERY)
}

/// A picture's rows of RGBA, whatever holds them: a frame, or a decoder's
/// buffer read where it lies (a 1080p frame is 8 MB to copy).
pub trait RgbaRows: Sync {
    fn width(&self) -> usize;
    fn height(&self) -> usize;
    /// Row `y`, `width` pixels.
    fn row(&self, y: usize) -> &[Rgba];
}

impl RgbaRows for Plane<Rgba> {
    fn width(&self) -> usize {
        Plane::width(self)
    }
    fn height(&self) -> usize {
        Plane::height(self)
    }
    fn row(&self, y: usize) -> &[Rgba] {
        Plane::row(self, y)
    }
}

/// `p` shrunk by `f` in both directions by box means, the remainder
/// dropped: (Σ + f²/2) / f² per channel.
pub fn box_shrink_rgba(p: &Plane<Rgba>, f: usize) -> Plane<Rgba> {
    box_shrink_rows(p, f)
}

fn box_shrink_rows<P: RgbaRows + ?Sized>(p: &P, f: usize) -> Plane<Rgba> {
    // The usual factors get their own copies of the loop, in which a
    // block's width is a constant.
    match f {
        2 => box_shrink_rgba_by(p, 2),
        3 => box_shrink_rgba_by(p, 3),
        4 => box_shrink_rgba_by(p, 4),
        _ => box_shrink_rgba_by(p, f),
    }
}

#[inline(always)]
fn box_shrink_rgba_by<P: RgbaRows + ?Sized>(p: &P, f: usize) -> Plane<Rgba> {
    let (w, h) = (p.width() / f, p.height() / f);
    let n = (f * f) as u32;
    let mut out = Plane::new(w, h, [0u8; 4]);
    // The sums down each column (per channel) of a band of `f` rows,
    // reused for every band.
    let mut columns = vec![0u32; w * f * 4];
    for (y, row) in out.rows_mut().enumerate() {
        columns.fill(0);
        for dy in 0..f {
            let band = p.row(y * f + dy)[..w * f].as_flattened();
            for (c, &v) in columns.iter_mut().zip(band) {
                *c += v as u32;
            }
        }
        for (o, block) in row.iter_mut().zip(columns.chunks_exact(4 * f)) {
            let mut s = [0u32; 4];
            for px in block.chunks_exact(4) {
                for c in 0..4 {
                    s[c] += px[c];
                }
            }
            *o = s.map(|v| ((v + n / 2) / n) as u8);
        }
    }
    out
}

/// The BT.709 luma of `p`, on the calling thread (the thumbnails are made
/// beside the threads that analyse, and are too small to share out).
fn luma_of<P: RgbaRows + ?Sized>(p: &P) -> Plane<u8> {
    let mut out = Plane::new(p.width(), p.height(), 0u8);
    for (y, row) in out.rows_mut().enumerate() {
        for (o, &px) in row.iter_mut().zip(p.row(y)) {
            *o = crate::color::luma709(px);
        }
    }
    out
}

/// The pictures the analysis takes from one frame.
#[derive(Clone, Debug)]
pub struct Thumbs {
    /// The frame shrunk by [`thumb_factor`].
    pub thumb: Plane<Rgba>,
    /// On a face frame, the luma shrunk by [`face_factor`].
    pub face: Option<Plane<u8>>,
}

impl Thumbs {
    /// The thumbnails of frame `index` of a video.
    pub fn of(frame: &Frame, index: usize) -> Thumbs {
        match frame {
            Frame::Rgba(p) => Thumbs::of_rows(p, index),
            Frame::Gray(g) => {
                let (w, h) = (g.width(), g.height());
                let thumb = box_shrink_rgba(&g.map(|v| [v, v, v, 255]), thumb_factor(w, h));
                let face = face_frame(index).then(|| face_picture(g.clone(), w, h));
                Thumbs { thumb, face }
            }
        }
    }

    /// The thumbnails of frame `index` of a video, from its rows where they
    /// lie: the same as [`Thumbs::of`] the frame they make.
    pub fn of_rows<P: RgbaRows + ?Sized>(p: &P, index: usize) -> Thumbs {
        let (w, h) = (p.width(), p.height());
        let thumb = box_shrink_rows(p, thumb_factor(w, h));
        let face = face_frame(index).then(|| face_picture(luma_of(p), w, h));
        Thumbs { thumb, face }
    }
}

/// A `w`×`h` frame's luma `luma` shrunk to its face picture.
fn face_picture(luma: Plane<u8>, w: usize, h: usize) -> Plane<u8> {
    match face_factor(w, h) {
        // Shrinking by 1 is a copy.
        1 => luma,
        f => shrink(&luma, f),
    }
}

/// What a face frame's finer look needs of its analysis, in a copy that
/// may go to another thread (live, the cascade runs beside the frames that
/// follow: [`Analyzer::push_apart`]).
#[derive(Clone, Copy, Debug)]
struct FinerLook {
    width: usize,
    height: usize,
    faces: bool,
    text: bool,
    live: bool,
}

impl FinerLook {
    /// What a face frame's face picture `face` shows, beside the
    /// thumbnail's `subjects`: small print, faces, the picture set inside
    /// the frame.
    fn look_finer(&self, face: &Plane<u8>, subjects: &[Subject]) -> Finer {
        let fine = (self.text && !self.live).then(|| self.find_small_text(face, subjects));
        let mut faces = Vec::new();
        if self.faces {
            self.find_faces(face, &mut faces);
        }
        Finer {
            fine,
            faces,
            picture: self.picture_in(face),
        }
    }

    /// The picture inside the frame, found on its face picture, in the
    /// input's pixels: the whole frame where no fill borders it.
    fn picture_in(&self, face: &Plane<u8>) -> Rect {
        let area = super::border::picture_area(face);
        if (area.w, area.h) == (face.width(), face.height()) {
            return Rect::new(0, 0, self.width, self.height);
        }
        self.face_to_input(face, area)
    }

    /// `r` on the face picture `face`, in the input's pixels (clipped to
    /// the frame: the face picture drops a remainder of its factor).
    fn face_to_input(&self, face: &Plane<u8>, r: Rect) -> Rect {
        let ff = (self.width / face.width().max(1)).max(1);
        let r = r.scaled(ff, 1);
        Rect::new(
            r.x,
            r.y,
            r.w.min(self.width - r.x),
            r.h.min(self.height - r.y),
        )
    }

    /// The text blocks of the face picture `face` (finer than the
    /// thumbnail) that none of the thumbnail's text `found` overlaps, in
    /// the input's pixels.
    fn find_small_text(&self, face: &Plane<u8>, found: &[Subject]) -> Vec<Rect> {
        small_text_blocks(face)
            .into_iter()
            .map(|r| self.face_to_input(face, r))
            .filter(|r| {
                !found
                    .iter()
                    .any(|s| s.kind == Kind::Text && s.rect.intersect(r).is_some())
            })
            .collect()
    }

    fn find_faces(&self, face: &Plane<u8>, out: &mut Vec<Subject>) {
        let ff = (self.width / face.width().max(1)).max(1);
        for (r, _) in Faces::new().detect(face) {
            let r = r.scaled(ff, 1);
            // The head: a quarter of a face each side (ears and hair), half
            // a face above and below (hair, chin and neck). The planner
            // holds the shoulders where it has room (`plan::shoulders`).
            let (fw, fh) = (r.w, r.h);
            let x = r.x.saturating_sub(fw / 4);
            let y = r.y.saturating_sub(fh / 2);
            let rect = Rect::new(
                x,
                y,
                (r.right() + fw / 4).min(self.width) - x,
                (r.bottom() + fh / 2).min(self.height) - y,
            );
            out.push(Subject {
                rect,
                kind: Kind::Face,
                required: true,
            });
        }
    }
}

/// The analysis of one video, frame by frame.
#[derive(Clone, Debug)]
pub struct Analyzer {
    width: usize,
    height: usize,
    /// Thumbnail factor.
    f: usize,
    cut: u32,
    pub faces: bool,
    pub text: bool,
    pub moving: bool,
    /// Live: a running background; otherwise the offline median.
    live: bool,
    frame: usize,
    last: Plane<u8>,
    /// Whether the last frame was blank ([`BLANK`]), and the frames since
    /// the last shot started.
    last_blank: bool,
    since_cut: usize,
    /// The scene's position in the current frame (accumulated shifts), in
    /// thumbnail pixels: live's background.
    offset: (i64, i64),
    /// Offline: where the scene sits in the current frame's thumbnail
    /// (scene point → pixel; the scene's coordinates are the shot's first
    /// thumbnail's), and the frame the camera's moves are fitted to.
    place: Similarity,
    key: Option<Key>,
    /// Offline: the frames of the current stretch, waiting for its
    /// background.
    pending: Vec<Pending>,
    /// Offline: finished observations, in order.
    done: Vec<Observation>,
    /// Live: the running background (levels × 16) in scene coordinates of
    /// the coarse picture, and where its origin is in the current frame.
    background: Option<(Plane<u16>, (i64, i64))>,
    /// Live: the moving boxes of the last frames, for the check in time.
    recent: Vec<Vec<Rect>>,
}

/// What one frame shows by itself: its thumbnail's luma, that shrunk by 2
/// for the background model, and its faces and text.
struct Look {
    luma: Plane<u8>,
    /// The frame is blank ([`BLANK`]).
    blank: bool,
    /// The frame is a title card ([`card_blocks`]) or blank: what it
    /// shows is held as text, and what moves on it (words fading in) is no
    /// subject.
    card: bool,
    coarse: Plane<u8>,
    subjects: Vec<Subject>,
    /// Offline, on a face frame: the text blocks of the face picture that
    /// no text found on the thumbnail overlaps, in the input's pixels.
    fine: Option<Vec<Rect>>,
    /// On a face frame, the picture inside the frame ([`Observation::picture`]).
    picture: Option<Rect>,
}

/// The face picture of `t` that [`FinerLook::look_finer`] looks at, beside
/// its thumbnail's `look`: a face frame's, unless the frame is blank.
fn finer_to_look<'a>(t: &'a Thumbs, look: &Look) -> Option<&'a Plane<u8>> {
    t.face.as_ref().filter(|_| !look.blank)
}

/// What a face frame's finer picture adds to its [`Look`].
#[derive(Debug)]
struct Finer {
    fine: Option<Vec<Rect>>,
    faces: Vec<Subject>,
    picture: Rect,
}

impl Look {
    fn add(&mut self, f: Finer) {
        self.fine = f.fine;
        self.subjects.extend(f.faces);
        self.picture = Some(f.picture);
    }
}

/// Live: a face frame's finer look (its faces, the picture inside the
/// frame), taken out of [`Analyzer::push_apart`] to run on another thread;
/// [`Found::add_to`] puts what it finds into the frame's observation.
#[derive(Debug)]
pub struct Apart {
    look: FinerLook,
    face: Plane<u8>,
    subjects: Vec<Subject>,
}

/// What an [`Apart`] look found.
#[derive(Debug)]
pub struct Found {
    finer: Finer,
    /// Where its faces go among the frame's subjects: after its text and
    /// before what moves, where [`Analyzer::push`] puts them.
    at: usize,
}

impl Apart {
    /// The look itself (a face frame's cascade: a tenth of a second or
    /// more on one thread).
    pub fn run(self) -> Found {
        // A slow cascade, for the tests: the plans must not change.
        if let Some(ms) = crate::fault::after("SEAMSTREAM_INJECT_SLOW_FACES_MS") {
            std::thread::sleep(std::time::Duration::from_millis(ms));
        }
        Found {
            at: self.subjects.len(),
            finer: self.look.look_finer(&self.face, &self.subjects),
        }
    }
}

impl Found {
    /// Adds what was found to the observation [`Analyzer::push_apart`]
    /// gave for the frame: it is then the one [`Analyzer::push`] gives.
    pub fn add_to(self, obs: &mut Observation) {
        let at = self.at.min(obs.subjects.len());
        obs.subjects.splice(at..at, self.finer.faces);
        obs.picture = Some(self.finer.picture);
    }
}

/// From one frame to the next: the picture's global shift, whether the
/// camera itself moved, and whether the frame starts a shot.
#[derive(Clone, Copy, Debug)]
struct Step {
    /// The global shift: where live's background model places the frame.
    shift: Shift,
    /// The camera's own shift: the global one, unless the textured
    /// background stood still ([`still_background`]); what tells a
    /// handheld shot.
    camera: Shift,
    cut: bool,
}

/// The step from `prev` to `luma`; `luma` starts a shot when it is the
/// first frame, a new size, or a change above `cut`.
fn step(prev: &Plane<u8>, luma: &Plane<u8>, cut: u32) -> Step {
    if prev.is_empty() || (prev.width(), prev.height()) != (luma.width(), luma.height()) {
        return Step {
            shift: (0, 0),
            camera: (0, 0),
            cut: true,
        };
    }
    let shift = global_shift(prev, luma);
    let still = shift != (0, 0) && still_background(prev, luma);
    Step {
        shift,
        camera: if still { (0, 0) } else { shift },
        cut: is_cut(prev, luma, shift, cut),
    }
}

/// Of the most textured pixels, the share that must stay within the noise
/// of the last frame for the camera to have stood still, in percent.
///
/// Chosen on two clips, measured with a prototype (each pixel's own change,
/// on 480×270 pictures): the shared parking lot cut to 80% and enlarged (a
/// still camera; cars pass close and fill most of the textured blocks, so
/// the global shift followed them in 58 of 377 frames), where half of
/// those frames kept 59% or more of their textured pixels still and a
/// quarter under 42%; and the handheld cockatoo, whose shifted frames kept
/// 6–24% (nine in ten of them; 63% at most). With the rule, the enlarged
/// parking lot's moving frames went from 60–63 to 24–25, cockatoo's from
/// 68 to 66 (bench/results/reframe-quality.md, stop 53).
pub const STILL_TEXTURE: usize = 30;

/// Whether the camera stood still from `prev` to `cur` although the global
/// shift found a move: something large moved across a still scene (a car
/// that passes close, over a background too plain to outvote it). A camera
/// that moves, even by less than a pixel, changes every textured pixel by
/// about its gradient times the move; a still one leaves the textured
/// background within the noise, which the plainest half of the picture
/// shows. So: the pixels whose gradient is in the top tenth, and the share
/// of them whose change is at most twice the noise and 2 levels.
fn still_background(prev: &Plane<u8>, cur: &Plane<u8>) -> bool {
    let (w, h) = (cur.width(), cur.height());
    if w < 2 || h < 2 {
        return false;
    }
    // Each pixel's gradient in `prev` (to its right and below) and its
    // change, on a grid of every other pixel each way (plenty for a
    // share).
    let mut pairs: Vec<(u8, u8)> = Vec::with_capacity(w * h / 4);
    for y in (0..h - 1).step_by(2) {
        let (p, below) = (prev.row(y), prev.row(y + 1));
        let (c, c_below) = (cur.row(y), cur.row(y + 1));
        for x in (0..w - 1).step_by(2) {
            let g = p[x].abs_diff(p[x + 1]).max(p[x].abs_diff(below[x]));
            // The change over the gradient's three pixels: an edge that
            // moves off changes its other side.
            let d = p[x]
                .abs_diff(c[x])
                .max(p[x + 1].abs_diff(c[x + 1]))
                .max(below[x].abs_diff(c_below[x]));
            pairs.push((g, d));
        }
    }
    let mut grads = [0usize; 256];
    for &(g, _) in &pairs {
        grads[g as usize] += 1;
    }
    // The gradient below which half the pixels lie, and the one above
    // which a tenth do.
    let level = |share: usize| {
        let mut seen = 0;
        grads
            .iter()
            .position(|&c| {
                seen += c;
                seen * 100 >= share * pairs.len()
            })
            .unwrap_or(255) as u8
    };
    let (plain, textured) = (level(50), level(90));
    let mut changes = [0usize; 256];
    let mut n_plain = 0;
    for &(g, d) in &pairs {
        if g <= plain {
            changes[d as usize] += 1;
            n_plain += 1;
        }
    }
    let mut seen = 0;
    let noise = changes
        .iter()
        .position(|&c| {
            seen += c;
            2 * seen >= n_plain
        })
        .unwrap_or(255);
    let bound = (2 * noise + 2).min(255) as u8;
    let (mut still, mut n) = (0, 0);
    for &(g, d) in &pairs {
        if g > textured {
            n += 1;
            still += usize::from(d <= bound);
        }
    }
    // Nothing above the tenth's level (a plain picture): nothing to tell.
    n > 0 && still * 100 >= STILL_TEXTURE * n
}

/// The frame the camera's moves are fitted to, and where the scene sits in
/// it.
#[derive(Clone, Debug)]
struct Key {
    template: Template,
    place: Similarity,
}

/// A frame is fitted to the key while it sees the key's centre within this
/// share of its width and height of its own, and its scale within this
/// share of the key's; beyond, it becomes the key.
const KEY_REACH: f64 = 0.15;

/// A frame of the current stretch: its coarse luma, where the scene sits
/// in it, and what else was found in it.
#[derive(Clone, Debug)]
struct Pending {
    coarse: Plane<u8>,
    card: bool,
    place: Similarity,
    obs: Observation,
    fine: Option<Vec<Rect>>,
}

impl Analyzer {
    /// The analysis of a `width`×`height` video; `cut` as fast
    /// retargeting's; `live`: a running background instead of the offline
    /// median.
    pub fn new(width: usize, height: usize, cut: u32, live: bool) -> Analyzer {
        Analyzer {
            width,
            height,
            f: thumb_factor(width, height),
            cut,
            faces: true,
            text: true,
            moving: true,
            live,
            frame: 0,
            last: Plane::default(),
            last_blank: false,
            since_cut: 0,
            offset: (0, 0),
            place: Similarity::IDENTITY,
            key: None,
            pending: Vec::new(),
            done: Vec::new(),
            background: None,
            recent: Vec::new(),
        }
    }

    /// Takes the next frame's thumbnails. Live, returns its observation at
    /// once; offline, `None` (see [`Analyzer::finish`]).
    pub fn push(&mut self, t: &Thumbs) -> Option<Observation> {
        let look = self.look(t);
        let step = step(&self.last, &look.luma, self.cut);
        self.take(look, step)
    }

    /// Live: as [`Analyzer::push`], but a face frame's finer look is left
    /// out of the observation and given back, to be done apart (beside the
    /// frames that follow) and added with [`Found::add_to`].
    pub fn push_apart(&mut self, t: Thumbs) -> (Option<Observation>, Option<Apart>) {
        let look = self.look_at(&t);
        // The face picture goes with the look, not copied.
        let apart = t.face.filter(|_| !look.blank).map(|face| Apart {
            look: self.finer(),
            face,
            subjects: look.subjects.clone(),
        });
        let step = step(&self.last, &look.luma, self.cut);
        (self.take(look, step), apart)
    }

    /// Offline: takes the next frames' thumbnails, as [`Analyzer::push`]
    /// one by one would, with what each frame shows by itself found on
    /// all threads at once. Live, the frames' observations.
    pub fn push_many(&mut self, thumbs: &[Thumbs]) -> Vec<Observation> {
        use rayon::prelude::*;
        if self.live {
            return thumbs.iter().filter_map(|t| self.push(t)).collect();
        }
        // Held for the batch only: each frame's luma is the next one's
        // reference for the camera's shift. The face pictures' work (a
        // face frame's cascade takes as long as a few dozen thumbnails)
        // is a task each, after the thumbnails: so no thread holds two
        // while another has none.
        let mut looks: Vec<Look> = thumbs.par_iter().map(|t| self.look_at(t)).collect();
        let faces: Vec<(usize, &Plane<u8>)> = thumbs
            .iter()
            .enumerate()
            .filter_map(|(i, t)| finer_to_look(t, &looks[i]).map(|f| (i, f)))
            .collect();
        let finer = self.finer();
        let finer: Vec<(usize, Finer)> = faces
            .into_par_iter()
            .with_max_len(1)
            .map(|(i, face)| (i, finer.look_finer(face, &looks[i].subjects)))
            .collect();
        for (i, f) in finer {
            looks[i].add(f);
        }
        let steps: Vec<Step> = (0..looks.len())
            .into_par_iter()
            .map(|i| {
                let prev = if i == 0 {
                    &self.last
                } else {
                    &looks[i - 1].luma
                };
                step(prev, &looks[i].luma, self.cut)
            })
            .collect();
        for (look, step) in looks.into_iter().zip(steps) {
            self.take(look, step);
        }
        Vec::new()
    }

    /// What a face frame's finer look needs of this analysis.
    fn finer(&self) -> FinerLook {
        FinerLook {
            width: self.width,
            height: self.height,
            faces: self.faces,
            text: self.text,
            live: self.live,
        }
    }

    /// What frame `t` shows by itself, whatever the frames around it.
    fn look(&self, t: &Thumbs) -> Look {
        let mut look = self.look_at(t);
        if let Some(face) = finer_to_look(t, &look) {
            look.add(self.finer().look_finer(face, &look.subjects));
        }
        look
    }

    /// What frame `t` shows on its thumbnail; on a face frame, what its
    /// face picture shows is [`FinerLook::look_finer`]'s.
    fn look_at(&self, t: &Thumbs) -> Look {
        let luma = luma_of(&t.thumb);
        let coarse = shrink(&luma, 2);
        let hist = luma_histogram(&luma);
        let blank = blank(&hist);
        if blank {
            // What a blank frame still shows (the last words of a title
            // that fades out) is too faint to hold the window to: live,
            // they held a fade's new shot as wide as the old title.
            return Look {
                blank,
                card: true,
                luma,
                coarse,
                subjects: Vec::new(),
                fine: t.face.as_ref().map(|_| Vec::new()),
                picture: None,
            };
        }
        let mut subjects = Vec::new();
        let card = self.text && self.find_text(&luma, &hist, &mut subjects);
        Look {
            blank,
            card,
            luma,
            coarse,
            subjects,
            fine: None,
            picture: None,
        }
    }

    /// The frame after the last: its look, the camera's shift to it and
    /// whether it starts a shot.
    fn take(&mut self, look: Look, step: Step) -> Option<Observation> {
        let Step { shift, camera, cut } = step;
        self.frame += 1;
        // A fade through one colour starts a shot at its first blank frame.
        let fade = look.blank && !self.last_blank && self.since_cut >= FADE_AFTER_CUT;
        let cut = cut || fade;
        self.last_blank = look.blank;
        self.since_cut = if cut { 1 } else { self.since_cut + 1 };
        if cut {
            self.offset = (0, 0);
            if !self.live {
                self.flush();
            }
            self.background = None;
            self.recent.clear();
        } else {
            self.offset.0 += shift.0 as i64;
            self.offset.1 += shift.1 as i64;
        }
        if !self.live {
            self.follow(&look.luma, camera, cut);
        }
        let obs = Observation {
            cut,
            shift: camera,
            subjects: look.subjects,
            picture: look.picture,
        };
        let fine = look.fine;
        let card = look.card;
        self.last = look.luma;
        let coarse = look.coarse;
        let offset = (self.offset.0 / 2, self.offset.1 / 2);
        if self.live {
            let mut obs = obs;
            if self.moving {
                let boxes = self.live_moving(&coarse, offset, shift, cut);
                if !card {
                    self.add_moving(&mut obs, &boxes);
                }
            }
            return Some(obs);
        }
        self.pending.push(Pending {
            coarse,
            card,
            place: self.place.shrunk(2),
            obs,
            fine,
        });
        if self.pending.len() >= SEGMENT {
            self.flush();
        }
        None
    }

    /// Offline: every frame's observation, once the last is pushed.
    pub fn finish(mut self) -> Vec<Observation> {
        self.flush();
        self.done
    }

    /// A rectangle of the thumbnail (shrunk by `f` more) in the input's
    /// pixels.
    fn to_input(&self, r: Rect, f: usize) -> Rect {
        let s = self.f * f;
        let r = r.scaled(s, 1);
        Rect::new(
            r.x.min(self.width.saturating_sub(1)),
            r.y.min(self.height.saturating_sub(1)),
            r.w.min(self.width - r.x.min(self.width.saturating_sub(1))),
            r.h.min(self.height - r.y.min(self.height.saturating_sub(1))),
        )
    }

    /// The text of `luma` (of histogram `hist`); on a title card
    /// ([`card_blocks`]), whatever else it shows (a logo) as well. Whether
    /// it is a card.
    fn find_text(&self, luma: &Plane<u8>, hist: &[usize; 256], out: &mut Vec<Subject>) -> bool {
        let blocks = text_blocks(luma);
        let card = card_blocks(luma, hist);
        let is_card = card.is_some();
        let shown: Vec<Rect> = card
            .into_iter()
            .flatten()
            .filter(|c| {
                !blocks
                    .iter()
                    .any(|b| b.intersect(c).is_some_and(|i| i.area() == c.area()))
            })
            .collect();
        for r in blocks.into_iter().chain(shown) {
            out.push(self.text_subject(self.to_input(r, 1)));
        }
        is_card
    }

    /// A block of text in the input's pixels as a subject: with a little
    /// margin, so that no letter's edge is carved.
    fn text_subject(&self, rect: Rect) -> Subject {
        let m = (rect.h / 4).max(2);
        let rect = rect.grown(m, m, self.width, self.height);
        Subject {
            rect,
            kind: Kind::Text,
            required: rect.h as f64 >= MIN_TEXT * self.height as f64,
        }
    }

    fn add_moving(&self, obs: &mut Observation, boxes: &[Rect]) {
        for &b in boxes {
            obs.subjects.push(Subject {
                rect: self.to_input(b, 2),
                kind: Kind::Moving,
                required: true,
            });
        }
    }

    /// Offline: the background of the pending stretch, and each of its
    /// frames' moving boxes.
    fn flush(&mut self) {
        let pending = std::mem::take(&mut self.pending);
        if pending.is_empty() {
            return;
        }
        let boxes: Vec<Vec<Rect>> = if self.moving {
            use rayon::prelude::*;
            let placed: Vec<Placed> = pending
                .iter()
                .map(|p| Placed {
                    coarse: &p.coarse,
                    place: p.place,
                })
                .collect();
            let bg = median_background(&placed);
            pending
                .par_iter()
                .map(|p| foreground_boxes(&p.coarse, &bg, &p.place))
                .collect()
        } else {
            vec![Vec::new(); pending.len()]
        };
        let confirmed = confirm_in_time(&boxes, 3, 2);
        // Text stays put for a while; a detection in leaves or water
        // flickers: kept when seen in half the frames around.
        let text: Vec<Vec<Rect>> = pending
            .iter()
            .map(|p| {
                p.obs
                    .subjects
                    .iter()
                    .filter(|s| s.kind == Kind::Text)
                    .map(|s| s.rect)
                    .collect()
            })
            .collect();
        let text_ok = confirm_in_time(&text, TEXT_RADIUS, TEXT_RADIUS);
        // Small print, found on the face frames only: kept where the face
        // frame before or after sees it too, and given to every frame of
        // the stretch whose nearest face frame it is.
        let face_frames: Vec<usize> = (0..pending.len())
            .filter(|&i| pending[i].fine.is_some())
            .collect();
        let fine: Vec<Vec<Rect>> = face_frames
            .iter()
            .map(|&i| pending[i].fine.clone().unwrap_or_default())
            .collect();
        let fine_ok = confirm_in_time(&fine, 1, 1);
        let nearest = |i: usize| {
            let k = face_frames.partition_point(|&f| f < i);
            [k.checked_sub(1), (k < face_frames.len()).then_some(k)]
                .into_iter()
                .flatten()
                .min_by_key(|&k| face_frames[k].abs_diff(i))
        };
        let mut small = Vec::with_capacity(pending.len());
        for i in 0..pending.len() {
            small.push(nearest(i).map_or(&[][..], |k| &fine_ok[k][..]));
        }
        for (((p, b), t), fine) in pending.into_iter().zip(confirmed).zip(text_ok).zip(small) {
            let mut obs = p.obs;
            obs.subjects
                .retain(|s| s.kind != Kind::Text || t.contains(&s.rect));
            for &r in fine {
                obs.subjects.push(self.text_subject(r));
            }
            if !p.card {
                self.add_moving(&mut obs, &b);
            }
            self.done.push(obs);
        }
    }

    /// Offline: where the scene sits in `luma`, the next frame, whose
    /// camera moved by about `shift` (whole pixels) since the last:
    /// fitted to the key frame, not to the last frame, so that a camera
    /// that stands still stays still and one that creeps by a fraction of
    /// a pixel a frame adds up (`camera.rs`).
    fn follow(&mut self, luma: &Plane<u8>, shift: Shift, cut: bool) {
        let guess = if cut {
            Similarity::IDENTITY
        } else {
            Similarity::shift(shift).after(&self.place)
        };
        let fitted = if cut {
            None
        } else {
            self.key.as_ref().and_then(|k| {
                let to_key = guess.after(&k.place.inverse());
                k.template
                    .align(luma, to_key)
                    .map(|w| (w, w.after(&k.place)))
            })
        };
        let (w, h) = (luma.width() as f64, luma.height() as f64);
        let near = |s: &Similarity| {
            let (x, y) = s.apply((w - 1.0) / 2.0, (h - 1.0) / 2.0);
            (x - (w - 1.0) / 2.0).abs() <= KEY_REACH * w
                && (y - (h - 1.0) / 2.0).abs() <= KEY_REACH * h
                && (s.scale() - 1.0).abs() <= KEY_REACH
        };
        self.place = fitted.map_or(guess, |(_, p)| p);
        if !fitted.is_some_and(|(to_key, _)| near(&to_key)) {
            self.key = Template::of(luma).map(|template| Key {
                template,
                place: self.place,
            });
        }
    }

    /// Live: this frame's moving boxes against the running background,
    /// which it then joins.
    fn live_moving(
        &mut self,
        coarse: &Plane<u8>,
        offset: (i64, i64),
        _shift: Shift,
        cut: bool,
    ) -> Vec<Rect> {
        let (w, h) = (coarse.width(), coarse.height());
        let fresh = || {
            (
                Plane::from_fn(w, h, |x, y| coarse.get(x, y) as u16 * 16),
                offset,
            )
        };
        if cut || self.background.is_none() {
            self.background = Some(fresh());
            self.recent.clear();
            return Vec::new();
        }
        let Some((bg, origin)) = self.background.take() else {
            return Vec::new();
        };
        // The background moved with the scene: index it where the scene is
        // now; pixels it never saw take the frame's.
        let (dx, dy) = (offset.0 - origin.0, offset.1 - origin.1);
        let moved = Plane::from_fn(w, h, |x, y| {
            let (sx, sy) = (x as i64 - dx, y as i64 - dy);
            if sx >= 0 && sy >= 0 && (sx as usize) < w && (sy as usize) < h {
                bg.get(sx as usize, sy as usize)
            } else {
                coarse.get(x, y) as u16 * 16
            }
        });
        let level = Plane::from_fn(w, h, |x, y| ((moved.get(x, y) + 8) / 16) as u8);
        let boxes = foreground_boxes(coarse, &level, &Similarity::IDENTITY);
        let updated = Plane::from_fn(w, h, |x, y| {
            let b = moved.get(x, y) as i32;
            let c = coarse.get(x, y) as i32 * 16;
            (b + (c - b) / 16) as u16
        });
        self.background = Some((updated, offset));
        self.recent.push(boxes);
        if self.recent.len() > 3 {
            self.recent.remove(0);
        }
        // Seen in two of the last three frames.
        let last = self.recent.len() - 1;
        self.recent[last]
            .iter()
            .filter(|b| {
                self.recent[..last]
                    .iter()
                    .filter(|fr| fr.iter().any(|o| o.intersect(b).is_some()))
                    .count()
                    >= 1
            })
            .copied()
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A textured scene, 1280×720, with a dark figure 80×300 at `x`.
    fn scene(x: usize) -> Frame {
        let ground = crate::ops::retarget::tests::noise(160, 90, 5);
        Frame::Rgba(Plane::from_fn(1280, 720, |px, py| {
            if (x..x + 80).contains(&px) && (300..600).contains(&py) {
                [20, 30, 40, 255]
            } else {
                // Soft texture: a cell of the noise every 8 pixels, dimmed.
                let v = 100 + ground.get(px / 8, py / 8) / 4;
                [v, v, v, 255]
            }
        }))
    }

    /// A thumbnail's luma, 320×180: a still ground, a gentle ramp with a
    /// faint line every 32 px (too faint for its blocks to vote on the
    /// global shift, not for its gradient to stand out), and a board of
    /// 16-px squares, 96×96, at `x`; the whole picture moved right by
    /// `pan`.
    fn crossing(x: usize, pan: usize) -> Plane<u8> {
        Plane::from_fn(320, 180, |px, py| {
            let px = px.saturating_sub(pan);
            if (x..x + 96).contains(&px) && (40..136).contains(&py) {
                if ((px - x) / 16 + (py - 40) / 16).is_multiple_of(2) {
                    30
                } else {
                    220
                }
            } else {
                let line = if px % 32 == 7 { 12 } else { 0 };
                (60 + (px + py) / 8 + line) as u8
            }
        })
    }

    #[test]
    fn a_large_thing_crossing_a_still_scene_moves_no_camera() {
        // The premise: the board outvotes the faint ground, so the
        // picture's global shift follows it.
        let (a, b) = (crossing(100, 0), crossing(104, 0));
        assert_eq!(global_shift(&a, &b), (4, 0));
        let s = step(&a, &b, 30);
        assert_eq!(s.shift, (4, 0), "the scene's model follows the picture");
        assert_eq!(s.camera, (0, 0), "the ground stood still: no camera move");
        assert!(!s.cut);
        // The whole picture moved by 2 px: the camera moved, ground and all.
        let panned = crossing(100, 2);
        let s = step(&a, &panned, 30);
        assert_ne!(s.camera, (0, 0), "a pan is the camera's: {s:?}");
        assert_eq!(s.camera, s.shift);
    }

    /// Frame `i`'s thumbnails of the scene between black bars, its figure
    /// walking.
    fn barred_thumbs(i: usize) -> Thumbs {
        let Frame::Rgba(p) = scene(420 + 6 * i) else {
            unreachable!()
        };
        let barred = Plane::from_fn(1280, 720, |x, y| {
            if (320..960).contains(&x) {
                p.get(x, y)
            } else {
                [0, 0, 0, 255]
            }
        });
        Thumbs::of(&Frame::Rgba(barred), i)
    }

    #[test]
    fn frames_analysed_in_batches_are_seen_as_one_by_one() {
        // Planning a file looks at a batch's frames on all threads, each
        // face frame's finer picture a task of its own; it must see what
        // looking at the frames in order sees. The scene between black
        // bars, its figure walking: the face frames find the picture.
        let frames: Vec<Thumbs> = (0..26).map(barred_thumbs).collect();
        let mut one = Analyzer::new(1280, 720, 30, false);
        for t in &frames {
            assert!(one.push(t).is_none());
        }
        let one = one.finish();
        let mut many = Analyzer::new(1280, 720, 30, false);
        for batch in frames.chunks(7) {
            many.push_many(batch);
        }
        let many = many.finish();
        assert_eq!(one.len(), 26);
        let pictures: Vec<usize> = (0..26).filter(|&i| one[i].picture.is_some()).collect();
        assert_eq!(
            pictures,
            [0, 10, 20],
            "the face frames look for the picture"
        );
        let bars = one[10].picture.unwrap();
        assert!(
            bars.x >= 300 && bars.right() <= 980 && bars.w < 1280,
            "the picture between the bars: {bars:?}"
        );
        for (i, (a, b)) in one.iter().zip(&many).enumerate() {
            assert_eq!(a, b, "frame {i}");
        }
    }

    #[test]
    fn a_face_frame_looked_at_apart_is_seen_as_at_once() {
        // Live, a face frame's finer look runs beside the frames that
        // follow and is added to its observation later: the observation
        // must then be the one looking at it at once gives. The scene
        // between black bars, its figure walking: the face frames find
        // the picture.
        let mut at_once = Analyzer::new(1280, 720, 30, true);
        let mut apart = Analyzer::new(1280, 720, 30, true);
        let mut looked = Vec::new();
        for i in 0..22 {
            let t = barred_thumbs(i);
            let want = at_once.push(&t).unwrap();
            let (got, look) = apart.push_apart(t);
            let mut got = got.unwrap();
            assert_eq!(look.is_some(), face_frame(i), "frame {i}");
            if let Some(look) = look {
                assert_eq!(got.picture, None, "frame {i}: added only when found");
                look.run().add_to(&mut got);
                looked.push(i);
            }
            assert_eq!(got, want, "frame {i}");
        }
        assert_eq!(looked, [0, 10, 20]);
        // What is found goes where looking at once puts it: faces after
        // the frame's text, before what moves.
        let subject = |x, kind| Subject {
            rect: Rect::new(x, 0, 10, 10),
            kind,
            required: true,
        };
        let mut obs = Observation {
            subjects: vec![subject(0, Kind::Text), subject(20, Kind::Moving)],
            ..Observation::default()
        };
        let found = Found {
            at: 1,
            finer: Finer {
                fine: None,
                faces: vec![subject(40, Kind::Face)],
                picture: Rect::new(0, 0, 1280, 720),
            },
        };
        found.add_to(&mut obs);
        let kinds: Vec<Kind> = obs.subjects.iter().map(|s| s.kind).collect();
        assert_eq!(kinds, [Kind::Text, Kind::Face, Kind::Moving]);
        assert_eq!(obs.picture, Some(Rect::new(0, 0, 1280, 720)));
    }

    #[test]
    fn thumbnails_shrink_by_whole_factors() {
        assert_eq!(thumb_factor(1280, 720), 3);
        assert_eq!(thumb_factor(1920, 1080), 4);
        assert_eq!(thumb_factor(640, 480), 2);
        assert_eq!(thumb_factor(100, 50), 1);
        assert_eq!(face_factor(1920, 1080), 2);
        let p = Plane::from_fn(7, 4, |x, y| [(x * 10) as u8, y as u8, 0, 255]);
        let s = box_shrink_rgba(&p, 2);
        assert_eq!((s.width(), s.height()), (3, 2));
        assert_eq!(s.get(1, 1), [25, 3, 0, 255]);
    }

    #[test]
    fn a_figure_that_walks_across_a_still_scene_is_found_in_every_frame() {
        let mut a = Analyzer::new(1280, 720, 30, false);
        a.faces = false;
        a.text = false;
        for t in 0..30 {
            a.push(&Thumbs::of(&scene(100 + 30 * t), t));
        }
        let obs = a.finish();
        assert_eq!(obs.len(), 30);
        assert!(obs[0].cut && obs[1..].iter().all(|o| !o.cut));
        for (t, o) in obs.iter().enumerate() {
            let x = 100 + 30 * t;
            let moving: Vec<_> = o
                .subjects
                .iter()
                .filter(|s| s.kind == Kind::Moving)
                .collect();
            assert!(!moving.is_empty(), "frame {t}: nothing found");
            let figure = Rect::new(x, 300, 80, 300);
            let r = moving[0].rect;
            let overlap = r.intersect(&figure).map_or(0, |i| i.area());
            assert!(
                overlap * 10 >= figure.area() * 8,
                "frame {t}: {r:?} against {figure:?}"
            );
            assert!(r.w <= 140 && r.h <= 360, "frame {t}: {r:?} is too large");
        }
    }

    /// A scene of grass-like texture seen by a camera that pushes in slowly
    /// (5% over 60 frames, under a thumbnail pixel a frame at the edges),
    /// with a dark figure 100×240 that walks across it: frame `t`.
    fn push_in(t: usize) -> Frame {
        let zoom = 1.0 + 0.05 * t as f64 / 59.0;
        let fx = 560.0 + 8.0 * t as f64;
        Frame::Rgba(Plane::from_fn(1280, 720, |px, py| {
            // Frame pixel → scene point, about the picture's centre.
            let (sx, sy) = (
                640.0 + (px as f64 - 640.0) / zoom,
                360.0 + (py as f64 - 360.0) / zoom,
            );
            if (fx..fx + 100.0).contains(&sx) && (300.0..540.0).contains(&sy) {
                return [25, 30, 35, 255];
            }
            let v = 120.0
                + 45.0 * (sx / 23.0).sin() * (sy / 31.0).cos()
                + 35.0 * ((sx + 1.7 * sy) / 41.0).sin();
            let v = v.round() as u8;
            [v, v, v, 255]
        }))
    }

    #[test]
    fn a_slow_push_in_moves_the_background_with_the_camera() {
        let mut a = Analyzer::new(1280, 720, 30, false);
        a.faces = false;
        a.text = false;
        for t in 0..60 {
            a.push(&Thumbs::of(&push_in(t), t));
        }
        let obs = a.finish();
        assert!(obs[1..].iter().all(|o| !o.cut));
        for (t, o) in obs.iter().enumerate() {
            let zoom = 1.0 + 0.05 * t as f64 / 59.0;
            let at = |s: f64, c: f64| (c + (s - c) * zoom) as usize;
            let x = at(560.0 + 8.0 * t as f64, 640.0);
            let figure = Rect::new(x, at(300.0, 360.0), 100, 240);
            let moving: Vec<Rect> = o
                .subjects
                .iter()
                .filter(|s| s.kind == Kind::Moving)
                .map(|s| s.rect)
                .collect();
            // The figure is found, and nothing of the scene's edges with
            // it: all that moves lies about the figure.
            assert!(
                moving.iter().any(|r| r.intersect(&figure).is_some()),
                "frame {t}: the figure at {figure:?} is not among {moving:?}"
            );
            let near = figure.grown(60, 60, 1280, 720);
            assert!(
                moving
                    .iter()
                    .all(|r| r.intersect(&near).is_some_and(|i| i.area() == r.area())),
                "frame {t}: {moving:?} reaches beyond the figure at {figure:?}"
            );
        }
    }

    /// A light 1280×720 frame with a line of ten dark outlined letters
    /// `h` pixels high (widths differ, as letters' do) from (500, 640),
    /// and the line's box.
    fn small_print(h: usize) -> (Frame, Rect) {
        let mut spans = Vec::new();
        let mut at = 500;
        for i in 0..10 {
            let lw = h / 2 + (i * 7) % 5 * 2;
            spans.push((at, at + lw));
            at += lw + h / 3;
        }
        let (y0, y1) = (640, 640 + h);
        let line = Rect::new(500, y0, spans[9].1 - 500, h);
        let frame = Frame::Rgba(Plane::from_fn(1280, 720, |px, py| {
            let ink = (y0..y1).contains(&py)
                && spans.iter().any(|&(a, b)| {
                    (a..b).contains(&px)
                        && (px < a + 2 || px + 2 >= b || py < y0 + 2 || py + 2 >= y1)
                });
            if ink {
                [30, 30, 30, 255]
            } else {
                [220, 220, 220, 255]
            }
        }));
        (frame, line)
    }

    #[test]
    fn small_print_below_the_thumbnails_reach_is_kept_on_every_frame() {
        let (frame, line) = small_print(14);
        let t = Thumbs::of(&frame, 0);
        // The thumbnail alone does not see it: its letters are 4–5 pixels.
        assert!(text_blocks(&luma_of(&t.thumb)).is_empty());
        let mut a = Analyzer::new(1280, 720, 30, false);
        a.faces = false;
        a.moving = false;
        for i in 0..35 {
            a.push(&Thumbs::of(&frame, i));
        }
        for (i, o) in a.finish().iter().enumerate() {
            let text: Vec<_> = o.subjects.iter().filter(|s| s.kind == Kind::Text).collect();
            assert_eq!(text.len(), 1, "frame {i}: {:?}", o.subjects);
            let r = text[0].rect;
            assert!(text[0].required, "frame {i}");
            assert!(
                r.x <= line.x
                    && r.y <= line.y
                    && r.bottom() >= line.bottom()
                    && r.right() >= line.right(),
                "frame {i}: {r:?} does not hold {line:?}"
            );
            assert!(r.h <= 40, "frame {i}: {r:?} is too tall");
        }
    }

    /// Two title cards, dark letters on white, the first fading out to
    /// white and the second fading in (as promo's do): the first blank
    /// frame starts a shot, and no other frame does; the faintest frames
    /// either side (letters a fifth of their contrast) are not blank, and
    /// the words left faintly on the blank frame are no subject.
    #[test]
    fn a_fade_through_white_between_title_cards_starts_a_shot() {
        let card = |x0: usize, alpha: f64| {
            Frame::Rgba(Plane::from_fn(1280, 720, |x, y| {
                let ink =
                    (x0..x0 + 400).contains(&x) && (300..380).contains(&y) && (x / 12) % 2 == 0;
                let v = if ink {
                    (250.0 - 220.0 * alpha).round() as u8
                } else {
                    250
                };
                [v, v, v, 255]
            }))
        };
        // At the fade's middle the words are still there, faintly (as
        // promo's are): too faint to hold the window to.
        let alphas = [1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 0.8, 0.6, 0.4, 0.2, 0.08];
        let mut frames: Vec<Frame> = alphas.iter().map(|&a| card(100, a)).collect();
        frames.extend(alphas.iter().rev().skip(1).map(|&a| card(700, a)));
        frames.extend((0..5).map(|_| card(700, 1.0)));
        let mut a = Analyzer::new(1280, 720, 30, false);
        a.faces = false;
        a.moving = false;
        for (i, f) in frames.iter().enumerate() {
            a.push(&Thumbs::of(f, i));
        }
        // Live, where no frame's text is checked against its neighbours'.
        let mut live = Analyzer::new(1280, 720, 30, true);
        live.faces = false;
        live.moving = false;
        let seen: Vec<Observation> = frames
            .iter()
            .enumerate()
            .filter_map(|(i, f)| live.push(&Thumbs::of(f, i)))
            .collect();
        assert!(seen[10].subjects.is_empty(), "{:?}", seen[10].subjects);
        assert!(!seen[9].subjects.is_empty() && !seen[11].subjects.is_empty());
        let obs = a.finish();
        let cuts: Vec<usize> = obs
            .iter()
            .enumerate()
            .filter(|(_, o)| o.cut)
            .map(|(i, _)| i)
            .collect();
        assert_eq!(cuts, vec![0, 10]);
    }

    #[test]
    fn a_still_scene_has_no_moving_subject_and_a_new_one_is_a_cut() {
        let mut a = Analyzer::new(1280, 720, 30, true);
        a.faces = false;
        let still = scene(500);
        for t in 0..5 {
            let o = a.push(&Thumbs::of(&still, t)).unwrap();
            assert_eq!(o.cut, t == 0);
            assert!(o.subjects.is_empty(), "frame {t}: {:?}", o.subjects);
        }
        let other = Frame::Rgba(Plane::new(1280, 720, [250, 250, 250, 255]));
        assert!(a.push(&Thumbs::of(&other, 5)).unwrap().cut);
    }
}
