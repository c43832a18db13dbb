//! `reframe`: video to any shape (9:16, 1:1, 4:5, 4:3, 21:9) that keeps its
//! subjects whole, by a moving window, narrowed beside the subjects, or padding
//! (docs/reframe.md, docs/DESIGN.md §4).
//!
//! The parts:
//!
//! - [`analyze`]: shots, and the subjects of each frame: faces
//!   ([`faces`]), text ([`text`]) and what moves against the background;
//! - [`plan`]: per shot, the fit (crop, carve, pad) and the camera's path,
//!   offline over the whole shot or live frame by frame, each frame seeing
//!   the next [`LOOKAHEAD`] seconds (the op holds the frames that long);
//! - [`path`]: the plan as JSON, written for editors and replayed;
//! - [`render`]: a frame of the output from its window, in integers that
//!   the GPU repeats (src/cuda/ops/reframe.rs);
//! - [`geometry`]: rectangles and layouts.
//!
//! On a file, `run` plans the whole video first (src/gst/reframe.rs): it
//! decodes it once for the analysis, plans every shot with the shot in
//! view, and then renders with the plan ([`Reframe::replay`]). A live
//! source or an element plans as frames come ([`Director`]), holding back
//! [`Director::delay`] frames to look ahead ([`crate::ops::Op::delay`]); a
//! still image, or Python's frame-by-frame calls, hold none
//! ([`crate::ops::Op::hold_none`]).

pub mod analyze;
pub mod border;
pub mod camera;
pub mod faces;
mod foreground;
pub mod geometry;
pub mod path;
pub mod plan;
pub mod render;
pub mod text;

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;

use super::params::{Kind, OpSpec, ParamSpec, Params, SizeSpec};
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};
use analyze::{Analyzer, Apart, Found, Observation, Subject, Thumbs};
use geometry::{Fit, Rect, even_side, same_shape};
use path::Hint;
use plan::{CameraChoice, FitChoice, FramePlan, LivePlanner, Settings, ShotPlan};
use render::{Narrower, Pad, render};

/// Frames a second assumed until the source tells (live planning's speeds
/// and holds are in seconds).
pub const DEFAULT_FPS: f64 = 30.0;

/// Seconds live planning looks ahead by default (`lookahead=`): with the
/// GPU ring's frame, under the half second of latency a live reframe may
/// add at 30 fps and above.
pub const LOOKAHEAD: f64 = 0.4;

/// The longest look-ahead, in seconds (`lookahead=`'s bound; the latency a
/// live reframe may add).
pub const MAX_LOOKAHEAD: f64 = 0.5;

/// Live, seconds after a face frame that its faces (and the picture found
/// inside it) join what the planner sees of it, or when it is framed, if
/// sooner: the cascade runs on a thread of its own beside the frames that
/// follow ([`analyze::Analyzer::push_apart`]). On the frame's own thread
/// it took 0.1–0.3 s a face frame, every tenth frame, and dog-walk fed in
/// real time dropped 30 of its 289 frames on 2 cores and 64–69 on 16
/// (`bench/results/reframe-quality.md`, "Live, stop 58"); now none. Always
/// this many frames later, however soon the cascade ends, so the plans do
/// not depend on the machine's speed.
pub const FACE_LAG: f64 = 0.2;

/// A target side as the user may write it.
const TARGET_SIDE: Kind = Kind::Size {
    max_pixels: 2 * crate::io::MAX_SIDE as usize,
    max_percent: 200.0,
};

pub static SPEC: OpSpec = OpSpec {
    name: "reframe",
    summary: "reframe video to another shape (9:16, 1:1, 4:5, 21:9) keeping faces, people, animals and text whole: a moving window, narrowed beside the subjects, or padding",
    params: &[
        ParamSpec::optional(
            "aspect",
            Kind::Ratio { max: 10.0 },
            "the output's shape; its size is the largest of that shape inside the input (9:16 of 1280x720 is 406x720)",
        ),
        ParamSpec::optional(
            "width",
            TARGET_SIDE,
            "output width (with aspect: the height follows)",
        ),
        ParamSpec::optional(
            "height",
            TARGET_SIDE,
            "output height (with aspect: the width follows)",
        ),
        ParamSpec::new(
            "fit",
            Kind::Choice(&["auto", "crop", "carve", "pad"]),
            "auto",
            "per shot: auto crops when the subjects fit the window, else narrows the picture beside them (whole columns; the subjects keep their shape), else pads; or always one",
        ),
        ParamSpec::new(
            "carve",
            Kind::Int { min: 0, max: 75 },
            "20",
            "the largest share (%) of a window that carving narrows away, beside the subjects (whole columns, so nothing tears; more keeps the subjects larger and makes what lies between them swim more as they move)",
        ),
        ParamSpec::new(
            "pad",
            Kind::ChoiceOrColour(&["blur", "black", "white", "gray"]),
            "blur",
            "what fills the output around a padded picture: a blurred copy of the picture, or a colour",
        ),
        ParamSpec::new(
            "camera",
            Kind::Choice(&["auto", "still"]),
            "auto",
            "auto: still while the subjects stay, else holds joined by quick eased moves, or a smooth pan or track; still: one window a shot",
        ),
        ParamSpec::new(
            "speed",
            Kind::Int { min: 1, max: 90 },
            "25",
            "the camera's top speed, % of the input width a second (a frame's move is at most 1.5%)",
        ),
        ParamSpec::new("faces", Kind::Bool, "true", "find faces (SeetaFace)"),
        ParamSpec::new("text", Kind::Bool, "true", "find on-screen text and titles"),
        ParamSpec::new(
            "motion",
            Kind::Bool,
            "true",
            "find what moves against the background (people, animals, vehicles)",
        ),
        ParamSpec::new(
            "lookahead",
            Kind::Float {
                min: 0.0,
                max: MAX_LOOKAHEAD,
            },
            "0.4",
            "live planning only: seconds of frames seen before one is framed (so a shot starts framed for what follows, and the window widens and moves before its subjects need it); the frames are held back that long, 0 holds none",
        ),
        ParamSpec::new(
            "cut",
            Kind::Int { min: 1, max: 255 },
            "30",
            "mean luma change that counts as a scene cut (the window may jump only there)",
        ),
        ParamSpec::optional(
            "path",
            Kind::Path,
            "replay a reframe path (JSON, as run --reframe-path writes it)",
        ),
        ParamSpec::optional(
            "hints",
            Kind::Path,
            "JSON boxes to keep in the window: {\"boxes\": [{\"box\": [x,y,w,h], \"from\": 2.0, \"to\": 5.5}]}",
        ),
        ParamSpec::optional(
            "protect",
            Kind::Path,
            "mask image (white = keep in the window, never carved), same size as the frame",
        ),
    ],
    example: "reframe:aspect=9:16",
};

/// What the output's size is asked as.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Target {
    pub aspect: Option<(f64, f64)>,
    pub width: Option<SizeSpec>,
    pub height: Option<SizeSpec>,
}

impl Target {
    /// The output's size for a `w`×`h` input.
    pub fn size(&self, w: usize, h: usize) -> Result<(usize, usize)> {
        let side = |key: &str, spec: SizeSpec, input: usize| -> Result<usize> {
            let v = spec.resolve(input);
            if v == 0 || v > 2 * input.max(1) {
                return Err(Error::bad_value(
                    "reframe",
                    key,
                    spec,
                    format!(
                        "the output {key} must be from 1 to 2x the input's ({})",
                        2 * input
                    ),
                ));
            }
            Ok(v)
        };
        let (ow, oh) = match (self.aspect, self.width, self.height) {
            (_, Some(ws), Some(hs)) => (side("width", ws, w)?, side("height", hs, h)?),
            (Some((a, b)), Some(ws), None) => {
                let ow = side("width", ws, w)?;
                (ow, even_side(ow as f64 * b / a, 4 * h.max(1)))
            }
            (Some((a, b)), None, Some(hs)) => {
                let oh = side("height", hs, h)?;
                (even_side(oh as f64 * a / b, 4 * w.max(1)), oh)
            }
            (Some((a, b)), None, None) => {
                // The input's side that is kept, made even where it is odd
                // (4:2:0 video has even sides; 640x361 to 1:1 was 362x361,
                // neither square nor even), and the other from it.
                let even = |n: usize| if n > 1 { n - n % 2 } else { n };
                let (w2, h2) = (even(w), even(h));
                if a * h2 as f64 <= b * w2 as f64 {
                    (even_side(h2 as f64 * a / b, w2), h2)
                } else {
                    (w2, even_side(w2 as f64 * b / a, h2))
                }
            }
            (None, Some(ws), None) => (side("width", ws, w)?, h),
            (None, None, Some(hs)) => (w, side("height", hs, h)?),
            (None, None, None) => {
                return Err(Error::MissingKey {
                    op: "reframe".into(),
                    key: "aspect".into(),
                    help:
                        "give the output's shape, e.g. reframe:aspect=9:16, or its width and height"
                            .into(),
                });
            }
        };
        Ok((ow.max(1), oh.max(1)))
    }
}

/// Decides each frame's window: from a plan made ahead (replay), or live
/// from each frame's thumbnails. The CPU op and the GPU half each hold one.
#[derive(Clone, Debug)]
pub struct Director {
    pub fit: FitChoice,
    pub carve: f64,
    pub camera: CameraChoice,
    pub speed: f64,
    pub cut: u32,
    pub detect: (bool, bool, bool),
    pub fps: f64,
    pub hints: Vec<Hint>,
    /// The protect mask's bounding box.
    pub protect: Option<Rect>,
    /// Seconds live planning looks ahead (see [`Director::delay`]).
    pub lookahead: f64,
    /// A plan made ahead.
    replay: Option<Replay>,
    live: Option<(Analyzer, LivePlanner)>,
    /// Live: the observations of the frames seen and not yet planned,
    /// oldest first.
    pending: VecDeque<Observation>,
    /// Live: face frames' finer looks, running apart.
    beside: Beside,
    frame: usize,
}

/// The thread that runs live face frames' finer looks ([`Apart`]) beside
/// the frames that follow, started on the first, and the looks it has in
/// hand, by frame, oldest first. A clone has none (directors are cloned
/// before their first frame).
#[derive(Debug, Default)]
struct Beside {
    jobs: Option<crossbeam_channel::Sender<(Apart, crossbeam_channel::Sender<Found>)>>,
    running: VecDeque<(usize, crossbeam_channel::Receiver<Found>)>,
}

impl Clone for Beside {
    fn clone(&self) -> Self {
        Beside::default()
    }
}

impl Beside {
    /// Starts frame `i`'s look; on this thread if none other can be had.
    fn start(&mut self, i: usize, look: Apart) {
        let (tx, rx) = crossbeam_channel::bounded(1);
        if self.jobs.is_none() {
            let (jobs, queue) =
                crossbeam_channel::unbounded::<(Apart, crossbeam_channel::Sender<Found>)>();
            let thread = std::thread::Builder::new()
                .name("seamstream-faces".into())
                .spawn(move || {
                    for (look, back) in queue {
                        let _ = back.send(look.run());
                    }
                });
            if thread.is_ok() {
                self.jobs = Some(jobs);
            }
        }
        let look = match &self.jobs {
            Some(jobs) => jobs
                .send((look, tx.clone()))
                .err()
                .map(|e| e.into_inner().0),
            None => Some(look),
        };
        if let Some(look) = look {
            let _ = tx.send(look.run());
        }
        self.running.push_back((i, rx));
    }

    /// Adds the looks of frames up to `last` (waiting for them) to
    /// `pending`, whose first observation is frame `first`'s.
    fn settle(&mut self, first: usize, last: usize, pending: &mut VecDeque<Observation>) {
        while let Some(&(i, _)) = self.running.front()
            && i <= last
        {
            let Some((i, rx)) = self.running.pop_front() else {
                break;
            };
            if let (Ok(found), Some(obs)) = (
                rx.recv(),
                i.checked_sub(first).and_then(|k| pending.get_mut(k)),
            ) {
                found.add_to(obs);
            }
        }
    }
}

/// A plan made ahead: its frames, where it came from (for messages), and
/// what it was made for, where known.
#[derive(Clone, Debug)]
struct Replay {
    plans: Arc<Vec<FramePlan>>,
    source: String,
    made_for: Option<MadeFor>,
}

/// The frames a plan was made for, and (for a path file) the output's
/// size: a plan replayed at another shape would frame every window for the
/// wrong one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MadeFor {
    pub input: (usize, usize),
    pub output: Option<(usize, usize)>,
}

impl Director {
    /// The planner's settings for a `w`×`h` input and an `out` output.
    pub fn settings(&self, input: (usize, usize), out: (usize, usize)) -> Settings {
        Settings {
            input,
            output: out,
            fit: self.fit,
            carve: self.carve,
            camera: self.camera,
            speed: self.speed,
            fps: self.fps,
        }
    }

    /// Whether the next frame's plan needs its thumbnails (live planning).
    pub fn needs_thumbs(&self) -> bool {
        self.replay.is_none()
    }

    /// Frames live planning sees before it plans one: [`Director::lookahead`]
    /// seconds at the source's rate, rounded, but never more than fit in
    /// [`MAX_LOOKAHEAD`] (0.5 s at 25 fps is 12 frames, not 13); none for a
    /// plan made ahead. (Rounded down, 0.4 s at 29.97 fps would be 11
    /// frames, and dog-walk 9:16 live lost a box of 19 and flickered 1.46×
    /// the centre crop instead of 1.33×.)
    pub fn delay(&self) -> usize {
        if self.replay.is_some() {
            return 0;
        }
        let most = (MAX_LOOKAHEAD * self.fps + 1e-6).floor();
        (self.lookahead * self.fps).round().min(most) as usize
    }

    /// The frame index the next plan is for.
    pub fn frame(&self) -> usize {
        self.frame
    }

    /// The plans made ahead for the frames within `radius` of the last one
    /// [`Director::next`] gave, itself included; none live.
    pub fn around(&self, radius: usize) -> &[FramePlan] {
        let Some(Replay { plans, .. }) = &self.replay else {
            return &[];
        };
        let i = self
            .frame
            .saturating_sub(1)
            .min(plans.len().saturating_sub(1));
        &plans[i.saturating_sub(radius)..(i + radius + 1).min(plans.len())]
    }

    /// Refuses a hint box that does not lie inside a `w`×`h` frame, naming
    /// the box and the frame (a box made for another size of the video
    /// would otherwise keep whatever part of it falls in the frame).
    pub fn check_hints(&self, w: usize, h: usize) -> Result<()> {
        match self.hints.iter().position(|hint| !hint.rect.fits(w, h)) {
            None => Ok(()),
            Some(k) => Err(Error::op_failed(
                "reframe",
                format!(
                    "hints box {}: {:?} does not lie inside the {w}x{h} frame; give [x, y, width, height] with x + width <= {w} and y + height <= {h}",
                    k + 1,
                    <[usize; 4]>::from(self.hints[k].rect)
                ),
            )),
        }
    }

    /// The hints and the protect mask that hold on frame `i`, as subjects.
    pub fn user_subjects(&self, i: usize) -> Vec<Subject> {
        self.hints
            .iter()
            .filter(|h| h.covers(i))
            .map(|h| h.rect)
            .chain(self.protect)
            .map(|rect| Subject {
                rect,
                kind: analyze::Kind::Hint,
                required: true,
            })
            .collect()
    }

    /// The analysis every frame goes through (a new one for live use).
    pub fn analyzer(&self, w: usize, h: usize, live: bool) -> Analyzer {
        let mut a = Analyzer::new(w, h, self.cut, live);
        (a.faces, a.text, a.moving) = self.detect;
        a
    }

    /// The plan of the frame [`Director::delay`] frames before this one,
    /// for a `w`×`h` input and an `out` output (`None` for the first
    /// `delay` frames); `thumbs` of this frame when
    /// [`Director::needs_thumbs`].
    pub fn next(
        &mut self,
        (w, h): (usize, usize),
        out: (usize, usize),
        thumbs: Option<Thumbs>,
    ) -> Result<Option<FramePlan>> {
        let i = self.frame;
        self.frame += 1;
        if let Some(Replay {
            plans,
            source,
            made_for,
        }) = &self.replay
        {
            if let Some(MadeFor {
                input: (mw, mh), ..
            }) = *made_for
                && (mw, mh) != (w, h)
            {
                return Err(Error::op_failed(
                    "reframe",
                    format!(
                        "{source} was made for {mw}x{mh} frames, and these are {w}x{h}: give this video's path file, or remove it to plan again"
                    ),
                ));
            }
            if let Some(MadeFor {
                output: Some((fw, fh)),
                ..
            }) = *made_for
                && !same_shape((fw, fh), out)
            {
                let g = crate::args::gcd(fw as u128, fh as u128).max(1) as usize;
                return Err(Error::op_failed(
                    "reframe",
                    format!(
                        "{source} frames a {fw}x{fh} output, and this reframe makes {}x{}: ask for its shape (aspect={}:{}, or width={fw},height={fh}), or name a new path file to plan again",
                        out.0,
                        out.1,
                        fw / g,
                        fh / g
                    ),
                ));
            }
            let plan =
                plans.get(i).or(plans.last()).cloned().ok_or_else(|| {
                    Error::op_failed("reframe", format!("{source} has no frames"))
                })?;
            if !plan.window.fits(w, h) {
                return Err(Error::op_failed(
                    "reframe",
                    format!(
                        "frame {i} of {source}: the window {:?} does not lie inside the {w}x{h} frame (was the path made for another video?)",
                        <[usize; 4]>::from(plan.window)
                    ),
                ));
            }
            return Ok(Some(plan));
        }
        let thumbs = thumbs.ok_or_else(|| {
            Error::op_failed("reframe", "live planning needs the frame's thumbnails")
        })?;
        let settings = self.settings((w, h), out);
        if self
            .live
            .as_ref()
            .is_none_or(|(_, p)| p.settings.input != (w, h) || p.settings.output != out)
        {
            self.live = Some((self.analyzer(w, h, true), LivePlanner::new(settings)));
            self.pending.clear();
            self.beside.running.clear();
        }
        if i == 0 {
            self.check_hints(w, h)?;
        }
        let user = self.user_subjects(i);
        let delay = self.delay();
        let Some((analyzer, planner)) = &mut self.live else {
            return Err(Error::op_failed(
                "reframe",
                "the live planner did not start",
            ));
        };
        let (obs, apart) = analyzer.push_apart(thumbs);
        let mut obs = obs.unwrap_or_default();
        obs.subjects.extend(user);
        self.pending.push_back(obs);
        if let Some(look) = apart {
            self.beside.start(i, look);
        }
        // Faces join [`FACE_LAG`] after their frame, and always before it
        // is framed.
        let lag = ((FACE_LAG * self.fps).round() as usize).min(delay);
        if let Some(last) = i.checked_sub(lag) {
            let first = i + 1 - self.pending.len();
            self.beside.settle(first, last, &mut self.pending);
        }
        if self.pending.len() <= delay {
            return Ok(None);
        }
        let Some(obs) = self.pending.pop_front() else {
            return Ok(None);
        };
        // What follows in the same shot.
        let pending = self.pending.make_contiguous();
        let same_shot = pending.iter().take_while(|o| !o.cut).count();
        let plan = planner.next(obs, &pending[..same_shot]);
        if !plan.window.fits(w, h) {
            return Err(Error::op_failed(
                "reframe",
                format!(
                    "frame {}: the planned window {:?} does not lie inside the {w}x{h} frame",
                    i - delay,
                    <[usize; 4]>::from(plan.window)
                ),
            ));
        }
        Ok(Some(plan))
    }

    /// The picture set inside the frame that live planning planned its
    /// last frame in (`None`: the whole frame, or not planned live).
    pub fn live_picture(&self) -> Option<Rect> {
        self.live.as_ref().and_then(|(_, p)| p.picture())
    }

    /// The shots of live planning so far.
    pub fn live_shots(&self) -> Vec<ShotPlan> {
        self.live
            .as_ref()
            .map(|(_, p)| p.shots().to_vec())
            .unwrap_or_default()
    }
}

/// The `reframe` operation.
#[derive(Debug)]
pub struct Reframe {
    pub target: Target,
    pub pad: Pad,
    pub director: Director,
    /// The protect mask, as loaded (white = keep).
    pub protect: Option<Plane<u8>>,
    pub hints_file: Option<PathBuf>,
    /// A path file to replay, as given by `path=`.
    pub path_file: Option<PathBuf>,
    narrower: Narrower,
    /// Live: the frames seen and not yet framed, oldest first
    /// ([`Director::delay`] of them).
    held: VecDeque<Frame>,
    /// Whether `lookahead=` was written (a caller that cannot look ahead
    /// refuses it then, instead of dropping it).
    lookahead_given: bool,
    /// The shots so far, and every frame's plan when asked to keep them
    /// (shared with whoever reports them or writes them out after a run).
    pub record: Option<Arc<std::sync::Mutex<Record>>>,
}

/// What a live reframe keeps of its plans for after the run.
#[derive(Clone, Debug, Default)]
pub struct Record {
    /// The shots, for the summary (their memory grows with the shots).
    pub shots: plan::ShotLog,
    /// Every frame's plan, for a path file; `None` when none is asked for
    /// (a camera may run for days).
    pub plans: Option<Vec<FramePlan>>,
}

impl Record {
    /// A record that keeps every plan when `plans`, else only the shots.
    pub fn new(plans: bool) -> Self {
        Record {
            shots: plan::ShotLog::default(),
            plans: plans.then(Vec::new),
        }
    }

    /// The next frame's plan, made inside `picture` (a picture set inside
    /// the frame) or on the whole frame.
    pub fn push(&mut self, plan: FramePlan, picture: Option<Rect>) {
        self.shots.push_inside(&plan, picture);
        if let Some(p) = &mut self.plans {
            p.push(plan);
        }
    }
}

fn load_mask(path: &std::path::Path) -> Result<Plane<u8>> {
    let frame = crate::io::load_image(path)
        .map_err(|e| Error::bad_value("reframe", "protect", path.display(), e.to_string()))?;
    Ok(frame.luma().map(|v| (v >= 128) as u8))
}

/// The bounding box of a mask's set pixels.
fn mask_box(m: &Plane<u8>) -> Option<Rect> {
    let (mut x0, mut y0, mut x1, mut y1) = (usize::MAX, usize::MAX, 0, 0);
    for y in 0..m.height() {
        for (x, &v) in m.row(y).iter().enumerate() {
            if v != 0 {
                x0 = x0.min(x);
                y0 = y0.min(y);
                x1 = x1.max(x + 1);
                y1 = y1.max(y + 1);
            }
        }
    }
    (x1 > x0).then(|| Rect::new(x0, y0, x1 - x0, y1 - y0))
}

pub fn build(p: &Params) -> Result<OpBox> {
    let fit = match p.word("fit")? {
        "crop" => FitChoice::Only(Fit::Crop),
        "carve" => FitChoice::Only(Fit::Carve),
        "pad" => FitChoice::Only(Fit::Pad),
        _ => FitChoice::Auto,
    };
    let camera = match p.word("camera")? {
        "still" => CameraChoice::Still,
        _ => CameraChoice::Auto,
    };
    let pad = Pad::parse(p.word("pad")?).ok_or_else(|| {
        Error::bad_value(
            "reframe",
            "pad",
            p.word("pad").unwrap_or(""),
            "unknown padding",
        )
    })?;
    let protect = p.path("protect").map(load_mask).transpose()?;
    let hints_file = p.path("hints").map(PathBuf::from);
    let hints = match &hints_file {
        Some(f) => Hint::load(f, DEFAULT_FPS)
            .map_err(|e| Error::bad_value("reframe", "hints", f.display(), e.to_string()))?,
        None => Vec::new(),
    };
    let target = Target {
        aspect: p.ratio("aspect"),
        width: p.size("width"),
        height: p.size("height"),
    };
    if target.aspect.is_none() && target.width.is_none() && target.height.is_none() {
        return Err(Error::MissingKey {
            op: "reframe".into(),
            key: "aspect".into(),
            help: "give the output's shape, e.g. reframe:aspect=9:16 (or 1:1, 4:5), or its width and height".into(),
        });
    }
    let director = Director {
        fit,
        carve: p.usize("carve")? as f64 / 100.0,
        camera,
        speed: p.usize("speed")? as f64 / 100.0,
        cut: p.usize("cut")? as u32,
        detect: (p.bool("faces")?, p.bool("text")?, p.bool("motion")?),
        fps: DEFAULT_FPS,
        hints,
        protect: protect.as_ref().and_then(mask_box),
        lookahead: p.f64("lookahead")?,
        replay: None,
        live: None,
        pending: VecDeque::new(),
        beside: Beside::default(),
        frame: 0,
    };
    let mut op = Reframe {
        target,
        pad,
        director,
        protect,
        hints_file,
        path_file: p.path("path").map(PathBuf::from),
        narrower: Narrower::default(),
        held: VecDeque::new(),
        lookahead_given: p.given("lookahead"),
        record: None,
    };
    if let Some(f) = op.path_file.clone() {
        let file = path::PathFile::load(&f)
            .map_err(|e| Error::bad_value("reframe", "path", f.display(), e.to_string()))?;
        let made_for = MadeFor {
            input: (file.input[0], file.input[1]),
            output: Some((file.output[0], file.output[1])),
        };
        op.replay(file.plans(), f.display().to_string(), Some(made_for));
    }
    Ok(Box::new(op))
}

impl Reframe {
    /// Renders frames by a plan made ahead (frame by frame, from the
    /// first); `source` names it in messages. Frames of another size than
    /// `made_for`'s input, and an output of another shape than its output
    /// (where given), are refused.
    pub fn replay(&mut self, plans: Vec<FramePlan>, source: String, made_for: Option<MadeFor>) {
        self.director.replay = Some(Replay {
            plans: Arc::new(plans),
            source,
            made_for,
        });
    }

    /// Whether frames follow a plan made ahead.
    pub fn replaying(&self) -> bool {
        self.director.replay.is_some()
    }

    /// The source's frame rate, for speeds and hints given in seconds.
    pub fn set_rate(&mut self, fps: f64) -> Result<()> {
        if fps.is_finite() && fps > 0.0 {
            self.director.fps = fps;
            if let Some(f) = &self.hints_file {
                self.director.hints = Hint::load(f, fps)?;
            }
        }
        Ok(())
    }

    /// The shots planned live so far.
    pub fn live_shots(&self) -> Vec<ShotPlan> {
        self.director.live_shots()
    }
}

impl Op for Reframe {
    fn name(&self) -> &'static str {
        "reframe"
    }

    fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        self.target.size(width, height)
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let (w, h) = (frame.width(), frame.height());
        let out = self.output_size(w, h)?;
        if let Some(m) = &self.protect
            && (m.width(), m.height()) != (w, h)
        {
            return Err(Error::op_failed(
                "reframe",
                format!(
                    "the protect mask is {}x{} but the frame is {w}x{h}; masks must match the frame size",
                    m.width(),
                    m.height()
                ),
            ));
        }
        let thumbs = self
            .director
            .needs_thumbs()
            .then(|| Thumbs::of(frame, self.director.frame()));
        let plan = self.director.next((w, h), out, thumbs)?;
        // Looking ahead, this frame waits its turn and the oldest held one
        // is framed; until one is, a black placeholder goes out (dropped
        // by whoever drives the chain, see [`Op::delay`]).
        let holds = self.director.delay() > 0;
        if holds {
            self.held.push_back(frame.clone());
        }
        let Some(plan) = plan else {
            return Ok(placeholder(frame, out));
        };
        let oldest = if holds { self.held.pop_front() } else { None };
        let frame = oldest.as_ref().unwrap_or(frame);
        let lay = plan.layout(out);
        let around = self.director.around(render::NARROW_RADIUS);
        let result = match frame {
            Frame::Rgba(p) => Frame::Rgba(render(
                p,
                &lay,
                out,
                self.pad,
                (&plan, around),
                &mut self.narrower,
            )),
            Frame::Gray(p) => Frame::Gray(render(
                p,
                &lay,
                out,
                self.pad,
                (&plan, around),
                &mut self.narrower,
            )),
        };
        if let Some(r) = &self.record
            && let Ok(mut r) = r.lock()
        {
            r.push(plan, self.director.live_picture());
        }
        Ok(result)
    }

    fn remembers(&self) -> bool {
        true
    }

    fn delay(&self) -> usize {
        self.director.delay()
    }

    fn set_rate(&mut self, fps: f64) -> Result<()> {
        Reframe::set_rate(self, fps)
    }

    fn hold_none(&mut self) -> Result<()> {
        if self.lookahead_given && self.director.lookahead > 0.0 {
            return Err(Error::bad_value(
                "reframe",
                "lookahead",
                self.director.lookahead,
                "frames held back to look ahead come out only when the stream ends, and this takes each frame's result at once: give lookahead=0, or run the video with `seamstream run` or the elements",
            ));
        }
        self.director.lookahead = 0.0;
        Ok(())
    }
}

/// A black `out`-sized frame of `like`'s layout: what goes out while a
/// live reframe fills its look-ahead.
fn placeholder(like: &Frame, (w, h): (usize, usize)) -> Frame {
    match like {
        Frame::Rgba(_) => Frame::Rgba(Plane::new(w, h, [0, 0, 0, 255])),
        Frame::Gray(_) => Frame::Gray(Plane::new(w, h, 0)),
    }
}

/// The observations of a whole video, planned: shots and frames.
pub fn plan_video(
    obs: &[Observation],
    director: &Director,
    input: (usize, usize),
    out: (usize, usize),
) -> (Vec<ShotPlan>, Vec<FramePlan>) {
    plan::plan_offline(obs, &director.settings(input, out))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::parse_with;

    fn op(text: &str) -> Result<OpBox> {
        parse_with(&SPEC, build, text)
    }

    #[test]
    fn a_face_frames_look_joins_the_plan_at_its_time_however_soon_it_is_done() {
        // Live, a face frame's finer look runs apart. What it finds (here
        // the picture between black bars) joins its frame's observation
        // FACE_LAG after the frame, never sooner, even when the look is
        // long done: so the plan does not depend on the machine's speed.
        use std::time::{Duration, Instant};
        let mut d = Director {
            fit: FitChoice::Auto,
            carve: 0.2,
            camera: CameraChoice::Auto,
            speed: 0.25,
            cut: 30,
            detect: (true, true, true),
            fps: DEFAULT_FPS,
            hints: Vec::new(),
            protect: None,
            lookahead: LOOKAHEAD,
            replay: None,
            live: None,
            pending: VecDeque::new(),
            beside: Beside::default(),
            frame: 0,
        };
        let (w, h) = (640, 360);
        let frame = Frame::Rgba(Plane::from_fn(w, h, |x, y| {
            if (160..480).contains(&x) {
                [(x * 7 + y * 13) as u8, (x * 3) as u8, (y * 5) as u8, 255]
            } else {
                [0, 0, 0, 255]
            }
        }));
        let lag = (FACE_LAG * d.fps).round() as usize;
        assert!(lag >= 2 && lag < d.delay());
        for i in 0..=lag {
            let t = Thumbs::of(&frame, i);
            let plan = d.next((w, h), (202, 360), Some(t)).unwrap();
            assert!(plan.is_none(), "frame {i} is held back");
            if i == 0 {
                let start = Instant::now();
                while d
                    .beside
                    .running
                    .front()
                    .is_some_and(|(_, rx)| rx.is_empty())
                {
                    assert!(
                        start.elapsed() < Duration::from_secs(60),
                        "the look never ended"
                    );
                    std::thread::sleep(Duration::from_millis(5));
                }
            }
            let joined = d.pending[0].picture.is_some();
            assert_eq!(
                joined,
                i == lag,
                "frame {i}: frame 0's look joined too early or late"
            );
        }
    }

    #[test]
    fn awkward_sizes_and_noise_never_panic_and_windows_stay_inside() {
        for text in [
            "reframe:aspect=9:16",
            "reframe:aspect=1:1,fit=pad,pad=black",
            "reframe:aspect=9:16,fit=carve",
            "reframe:aspect=21:9,fit=pad",
        ] {
            for (w, h) in [(1, 1), (2, 3), (17, 3), (3, 17), (321, 241), (640, 361)] {
                for gray in [false, true] {
                    for seed in 0..6u64 {
                        let mut noise = crate::noise::Noise::new(seed);
                        let mut r = op(text).unwrap();
                        let out = r.output_size(w, h).unwrap();
                        for i in 0..3 {
                            let f = noise.frame(w, h, gray);
                            let o = r.apply(&f).unwrap_or_else(|e| {
                                panic!("{text} {w}x{h} gray={gray} seed {seed} frame {i}: {e}")
                            });
                            assert_eq!((o.width(), o.height()), out);
                        }
                    }
                }
            }
        }
    }

    /// An aspect alone keeps the input's side, made even where it is odd,
    /// so that the output has the asked shape and even sides.
    #[test]
    fn an_aspect_of_an_odd_sided_input_is_that_shape_with_even_sides() {
        let size = |aspect: (f64, f64), w, h| {
            Target {
                aspect: Some(aspect),
                width: None,
                height: None,
            }
            .size(w, h)
            .unwrap()
        };
        assert_eq!(size((1.0, 1.0), 640, 361), (360, 360));
        assert_eq!(size((1.0, 1.0), 361, 640), (360, 360));
        assert_eq!(size((9.0, 16.0), 641, 361), (202, 360));
        assert_eq!(size((16.0, 9.0), 361, 641), (360, 202));
        assert_eq!(size((1.0, 1.0), 1280, 720), (720, 720));
        assert_eq!(size((9.0, 16.0), 1, 1), (1, 1));
    }

    /// Looking ahead by 3 frames (0.1 s at 30 fps), frame k's picture comes
    /// out for the (k+3)-th frame in, after 3 black placeholders; without,
    /// at once. Each frame is one flat level, so that whatever the window,
    /// what comes out tells which frame it was.
    #[test]
    fn a_look_ahead_holds_each_frame_back_by_its_delay() {
        let flat = |i: usize| Frame::Rgba(Plane::new(64, 36, [8 * i as u8, 0, 0, 255]));
        let level = |f: &Frame| match f {
            Frame::Rgba(p) => p.get(p.width() / 2, p.height() / 2)[0],
            Frame::Gray(_) => panic!("an RGBA frame gives an RGBA frame"),
        };
        for (lookahead, delay) in [("0.1", 3), ("0", 0)] {
            let text = format!(
                "reframe:aspect=1:1,lookahead={lookahead},faces=false,text=false,motion=false"
            );
            let mut r = op(&text).unwrap();
            assert_eq!(r.delay(), delay, "{text}");
            for k in 0..10 {
                let out = r.apply(&flat(k)).unwrap();
                assert_eq!((out.width(), out.height()), (36, 36), "{text}: frame {k}");
                let want = k.checked_sub(delay).map_or(0, |j| 8 * j as u8);
                assert_eq!(level(&out), want, "{text}: output {k}");
            }
        }
        // At 60 frames a second, the same time is twice the frames; a plan
        // made ahead needs none.
        let mut r = op("reframe:aspect=1:1,lookahead=0.1").unwrap();
        r.set_rate(60.0).unwrap();
        assert_eq!(r.delay(), 6);
        // Never more than half a second: at 25 fps that is 12 frames (12.5
        // rounded would be 0.52 s); 0.4 s at 29.97 fps is 12 (11.99).
        let mut r = op("reframe:aspect=1:1,lookahead=0.5").unwrap();
        r.set_rate(25.0).unwrap();
        assert_eq!(r.delay(), 12);
        let mut r = op("reframe:aspect=1:1").unwrap();
        r.set_rate(30000.0 / 1001.0).unwrap();
        assert_eq!(r.delay(), 12);
    }

    #[test]
    fn a_hint_box_outside_the_frame_is_refused_naming_it() {
        let dir = std::env::temp_dir().join(format!("seamstream-hints-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("hints.json");
        std::fs::write(
            &file,
            r#"{"boxes": [{"box": [0, 0, 8, 8]}, {"box": [60, 0, 10, 10]}]}"#,
        )
        .unwrap();
        let mut r = op(&format!("reframe:aspect=9:16,hints={}", file.display())).unwrap();
        let f = crate::noise::Noise::new(1).frame(64, 48, false);
        let e = r.apply(&f).unwrap_err().to_string();
        assert!(
            e.contains("hints box 2: [60, 0, 10, 10] does not lie inside the 64x48 frame"),
            "{e}"
        );
        // Inside a larger frame, the same file is taken.
        let mut r = op(&format!("reframe:aspect=9:16,hints={}", file.display())).unwrap();
        let f = crate::noise::Noise::new(1).frame(96, 48, false);
        assert!(r.apply(&f).is_ok());
    }

    #[test]
    fn padding_takes_a_colour_as_rrggbb() {
        // The whole frame a hint: at 9:16 it is scaled down and padded,
        // above and below, in the colour asked for.
        let dir = std::env::temp_dir().join(format!("seamstream-padrgb-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("all.json");
        std::fs::write(&file, r#"{"boxes": [{"box": [0, 0, 64, 48]}]}"#).unwrap();
        let text = format!(
            "reframe:aspect=9:16,fit=pad,pad=#FF8000,lookahead=0,hints={}",
            file.display()
        );
        let mut r = op(&text).unwrap();
        let f = crate::noise::Noise::new(2).frame(64, 48, false);
        let Frame::Rgba(o) = r.apply(&f).unwrap() else {
            panic!("an RGBA frame gives an RGBA frame")
        };
        assert_eq!(o.get(0, 0), [255, 128, 0, 255]);
        assert_eq!(o.get(o.width() - 1, o.height() - 1), [255, 128, 0, 255]);
        // A colour of another form is refused, saying what is taken.
        let e = op("reframe:aspect=9:16,pad=#ff80").unwrap_err().to_string();
        assert!(e.contains("or a colour as #rrggbb"), "{e}");
    }

    #[test]
    fn shapes_give_the_sizes_users_expect() {
        let size = |t: &str, w, h| op(t).unwrap().output_size(w, h).unwrap();
        assert_eq!(size("reframe:aspect=9:16", 1280, 720), (406, 720));
        assert_eq!(size("reframe:aspect=9:16", 1920, 1080), (608, 1080));
        assert_eq!(size("reframe:aspect=1:1", 1280, 720), (720, 720));
        assert_eq!(size("reframe:aspect=4:5", 1280, 720), (576, 720));
        assert_eq!(size("reframe:aspect=21:9", 1280, 720), (1280, 548));
        assert_eq!(size("reframe:aspect=0.5625", 1280, 720), (406, 720));
        assert_eq!(
            size("reframe:aspect=9:16,height=1280", 1280, 720),
            (720, 1280)
        );
        assert_eq!(
            size("reframe:width=608,height=1080", 1920, 1080),
            (608, 1080)
        );
    }

    #[test]
    fn a_missing_or_bad_shape_says_what_to_write() {
        let e = op("reframe").unwrap_err().to_string();
        assert!(e.contains("aspect=9:16"), "{e}");
        let e = op("reframe:aspect=9:0").unwrap_err().to_string();
        assert!(e.contains("aspect ratio"), "{e}");
        let e = op("reframe:aspect=100:1").unwrap_err().to_string();
        assert!(e.contains("out of range"), "{e}");
        // A size written for a shape says how to write the shape.
        let e = op("reframe:aspect=9x16").unwrap_err().to_string();
        assert!(e.contains("write aspect=9:16"), "{e}");
        // W/H, as ffmpeg's setdar takes it, is W:H.
        let size = |t: &str| op(t).unwrap().output_size(1280, 720).unwrap();
        assert_eq!(size("reframe:aspect=9/16"), (406, 720));
    }

    #[test]
    fn a_video_keeps_its_subject_in_the_window_frame_after_frame() {
        // A bright figure walks in from the right onto a dark, lightly
        // textured ground, and on to the left.
        let ground = crate::ops::retarget::tests::noise(80, 45, 7);
        let frame = |x: usize| {
            Frame::Rgba(Plane::from_fn(640, 360, |px, py| {
                if (x..x + 40).contains(&px) && (120..320).contains(&py) {
                    [230, 200, 180, 255]
                } else {
                    let v = 40 + ground.get(px / 8, py / 8) / 8;
                    [v, v, v, 255]
                }
            }))
        };
        let mut r = op("reframe:aspect=9:16,faces=false").unwrap();
        let mut whole = 0;
        for t in 0..60 {
            let x = 640usize.saturating_sub(4 * t);
            let out = r.apply(&frame(x)).unwrap();
            assert_eq!((out.width(), out.height()), (202, 360));
            // The figure's colour, whole: 40 columns of it in row 200.
            let Frame::Rgba(o) = out else { unreachable!() };
            let lit = o.row(200).iter().filter(|p| p[0] == 230).count();
            // Once it is well inside the picture, the camera has it.
            if x < 560 {
                whole += usize::from(lit == 40);
            }
        }
        // From x = 556 (frame 21) on: 39 frames. The camera starts at the
        // centre and takes the figure once it is clear of the edge; it must
        // travel 175 px to the right, at most 9.6 px a frame (1.5% of the
        // width) while the figure closes at 4: about 11 frames late.
        assert!(whole >= 27, "whole in {whole} of 39 frames");
    }
}
