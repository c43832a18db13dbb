//! One part of a job split in time (`run IN PART --segment K/N`): which of
//! a file's frames it processes, chosen by presentation time so that no
//! frame is lost or doubled at a boundary, and how its output is stamped.
//!
//! Every task plans on its own, from the file alone, and all reach the same
//! plan: the coded frames are counted by [`probe`](super::probe) (a plain
//! MP4 from its index), the N ranges are equal ([`crate::split::plan`]),
//! and a boundary moves. For a chain that remembers earlier frames it moves
//! to a scene cut within a second of it, where the chain's memory resets,
//! with the same measure as fast retargeting's shot detection: the part
//! looks for it in its own decoded frames ([`Held`]), which pass the
//! boundary's window anyway (the part before ends there; the part after
//! warms up through it), holding the window's frames back until its last
//! is seen; both parts see the same frames and decide the same. Nothing is
//! decoded twice, and no second decoder starts (on the GPU host a search
//! by a decoder of its own cost a worker 1.4–1.9 s before its first frame).
//! For a chain without memory, where a part starts changes
//! nothing in its frames: it moves to a keyframe within five seconds, so
//! that the part's decoding starts right at its first frame, and nothing is
//! decoded to plan it. Either snap is at most a quarter of a part, so no
//! other boundary can move these two.
//!
//! A part's frames are stamped from 0 on one clock that every part of the
//! job shares, [`FrameClock`]: frame `i` of the file at `i` frames of the
//! rate its caps give (the rate the encoder is told, and the one a single
//! run's caps carry), not at its own timestamp. A part stamped by its own
//! timestamps takes their gaps along (a file looped or concatenated with
//! `-c copy` jumps where a copy starts, a variable rate wanders), and a
//! demuxer reading the part back guesses its rate from its frames'
//! durations (qtdemux does): one part would read as 53/2 fps beside the
//! others' 30/1, and `join` refuses it. Where the caps say 0/1 (a variable
//! rate: no clock to put frames on), or where the frames keep other times
//! than the caps' rate (a rate that changes partway; [`FrameClock::of`]),
//! each frame keeps its own time from the
//! part's first, and the parts' caps say 0/1 as the source's do. Either
//! way each part's last frame lasts until the next part's first, so parts
//! laid end to end ([`super::join`]) make one timeline. An operation that
//! remembers earlier frames (fast retargeting) first runs on `warmup`
//! frames before the part, whose output is dropped.

use std::ops::Range;
use std::path::Path;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use gstreamer as gst;
use gstreamer_video::prelude::*;

use super::probe::{self, VideoStream};
use crate::error::{Error, Result};
use crate::frame::Plane;
use crate::ops::retarget::fast::{DEFAULT_CUT, is_cut};
use crate::ops::retarget::motion::global_shift;
use crate::split::{Segment, plan, plan_led};

/// The warm-up of a part whose chain remembers, when `--warmup` is not
/// given: this many seconds of frames. Fast retargeting's memory lasts a
/// shot and resets at a cut, so only a warm-up that reaches back to the
/// cut before the part makes it match one run; a fixed few frames within a
/// shot change nothing (bench/results/segments.md). Ten seconds reach back
/// past most shots of edited video.
pub const DEFAULT_WARMUP_SECONDS: u64 = 10;

/// How far a boundary may move to a scene cut, in seconds of video.
const SNAP_SECONDS: u64 = 1;

/// How far a boundary of a chain without memory may move to a keyframe, in
/// seconds of video: half of the longest usual keyframe interval (x264's
/// default is 250 frames, 10 s at 25 fps).
const KEYFRAME_SNAP_SECONDS: u64 = 5;

/// The largest width a boundary's cut is looked for at: the decoded luma is
/// subsampled to it (the measure is a mean over a grid anyway).
const CUT_WIDTH: usize = 320;

/// How long the input may take to preroll before a part's seek.
const STALL: Duration = Duration::from_secs(30);

/// The most bytes a part holds back while it looks for a scene cut near a
/// boundary (the window's decoded frames, 4:2:0): this caps the snap of
/// large frames (4K at 60 fps would hold 122 frames of 12 MB otherwise).
const HOLD_BYTES: u64 = 1 << 30;

/// The frames one part of a split job takes, by presentation time.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub segment: Segment,
    /// The part's frames as planned, counted in presentation order over
    /// the whole file: the even split, moved to keyframes for a chain
    /// without memory. A boundary with a window moves to the scene cut found
    /// there as the part is decoded: [`Span::range`] says where it is.
    pub planned: Range<u64>,
    /// Frames in the whole file.
    pub total: u64,
    /// Whether the part starts at a keyframe, where its decoding starts.
    pub at_keyframe: bool,
    /// How long counting the file's frames took.
    pub counting: Duration,
    /// How far a boundary may move to a scene cut, in frames (0: it stays;
    /// a chain without memory).
    pub snap: u64,
    /// Frames each part after the first runs before its own (its warm-up
    /// and its start's window), which the plan evens out.
    lead: u64,
    /// The part's boundaries that may still move to a scene cut, in order:
    /// the frames around each, held back until the last is seen.
    windows: Vec<Window>,
    /// The part's frames as decided so far (shared by the clones: the
    /// intake decides, the output tags the part and checks it).
    decided: Decided,
    /// The clock the part's frames are stamped on: the caps' rate (`None`
    /// where they say 0/1: each frame keeps its own time).
    pub clock: Option<FrameClock>,
    /// The source's caps rate (0/1: variable), which every part of the job
    /// is encoded at, wherever in the file it starts: a decoder that reads
    /// a rate from the stream may give each part another, and `join` takes
    /// only parts of one rate.
    pub rate: gst::Fraction,
    /// Who the part is, written into its container's tags for `join` (its
    /// frames as planned; [`Span::tag`] gives them as decided).
    tag: PartTag,
    /// The file's number of the first frame decoded (the first warm-up
    /// frame, or the first of a window before the part).
    first: u64,
    /// Presentation times from frame `first` on: the warm-up frames, the
    /// part's, and those after it up to the end of its last window (or the
    /// next part's first frame).
    pts: Vec<gst::ClockTime>,
}

/// The frames `first..=last` of the file, around the boundary that starts
/// part `boundary` of the job: a scene cut among them moves it.
#[derive(Clone, Debug, PartialEq)]
struct Window {
    first: u64,
    last: u64,
    boundary: u32,
}

/// A part's frames as decided, shared by the clones of its [`Span`], and
/// whether its start and its end are at a scene cut.
#[derive(Clone, Debug, Default)]
struct Decided(Arc<Mutex<(Range<u64>, [bool; 2])>>);

impl Decided {
    fn new(range: Range<u64>) -> Decided {
        Decided(Arc::new(Mutex::new((range, [false; 2]))))
    }

    fn read(&self) -> (Range<u64>, [bool; 2]) {
        self.0
            .lock()
            .map(|r| r.clone())
            .unwrap_or_else(|e| e.into_inner().clone())
    }

    fn get(&self) -> Range<u64> {
        self.read().0
    }

    /// Moves the start (`end` false) or the end to `at`, at a cut or not.
    fn set(&self, end: bool, at: u64, cut: bool) {
        let mut r = self.0.lock().unwrap_or_else(|e| e.into_inner());
        if end {
            r.0.end = at;
        } else {
            r.0.start = at;
        }
        r.1[usize::from(end)] = cut;
    }
}

impl PartialEq for Decided {
    fn eq(&self, other: &Self) -> bool {
        self.read() == other.read()
    }
}

/// A source file as the parts remember it: its size and modification time
/// (a file edited or replaced since is another source).
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SourceId {
    pub bytes: u64,
    pub modified_ns: u128,
}

impl SourceId {
    /// The file at `path` now (zeros where it cannot be read).
    pub fn of(path: &Path) -> SourceId {
        let meta = std::fs::metadata(path).ok();
        SourceId {
            bytes: meta.as_ref().map_or(0, |m| m.len()),
            modified_ns: meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map_or(0, |d| d.as_nanos()),
        }
    }
}

/// Who a part is: its place in the job, its frames, the source it was cut
/// from and the job's chain and encoder. `run --segment` writes it into the
/// part's container tags (a comment, [`PartTag::PREFIX`] then JSON), and
/// `join` checks the parts by it: order, completeness, one job.
#[derive(Clone, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct PartTag {
    pub index: u32,
    pub count: u32,
    pub start: u64,
    /// The end as planned when the part's output opened: a boundary may
    /// still move to a scene cut found as the part runs, so `join` ends a
    /// part where the next one starts.
    pub end: u64,
    pub total: u64,
    pub source: SourceId,
    /// The chain and the encoder's settings, as `run` was given them.
    pub job: String,
}

impl PartTag {
    /// The comment tag's start, which marks it as a part's.
    pub const PREFIX: &'static str = "seamstream-part ";

    /// The comment text written into the part.
    pub fn comment(&self) -> String {
        format!(
            "{}{}",
            Self::PREFIX,
            serde_json::to_string(self).unwrap_or_default()
        )
    }

    /// The tag a comment holds, if it is a part's.
    pub fn from_comment(text: &str) -> Option<PartTag> {
        serde_json::from_str(text.strip_prefix(Self::PREFIX)?).ok()
    }

    /// Who `stream`'s file is, where it is a part of a split job (the last
    /// part tag among its comments).
    pub fn of(stream: &VideoStream) -> Option<PartTag> {
        stream
            .comments
            .iter()
            .rev()
            .find_map(|c| Self::from_comment(c))
    }
}

/// The share of a file's frame intervals that must be one frame of its
/// caps' rate (within 2 %, or the 1 ms a container rounds to) for its parts
/// to be stamped on that rate.
const CLOCK_KEPT: f64 = 0.9;

/// The times a split job's frames are stamped at: `frames` frames every
/// `ns` nanoseconds, frame `i` of the file (in presentation order) at
/// `i · ns / frames`, rounded. Every part of a job derives the same clock
/// from the file alone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FrameClock {
    frames: u64,
    ns: u64,
}

impl FrameClock {
    /// A fixed frame rate (`None` for 0/1 or a negative one).
    pub fn from_rate(rate: gst::Fraction) -> Option<FrameClock> {
        let (n, d) = (
            u64::try_from(rate.numer()).ok()?,
            u64::try_from(rate.denom()).ok()?,
        );
        (n > 0 && d > 0).then(|| FrameClock {
            frames: n,
            ns: d * 1_000_000_000,
        })
    }

    /// When frame `i` is presented.
    pub fn at(self, i: u64) -> gst::ClockTime {
        let t = (u128::from(i) * u128::from(self.ns) + u128::from(self.frames / 2))
            / u128::from(self.frames);
        gst::ClockTime::from_nseconds(t.min(u128::from(u64::MAX)) as u64)
    }

    /// The clock of `stream`'s frames: its caps' rate, where its frames
    /// keep to it. A file whose frames keep other times (a rate that
    /// changes partway, which the caps give as the mean or the first
    /// rate) has none, and its frames keep their own times, as in one run;
    /// a few jumps (a file looped or concatenated) keep the clock.
    pub fn of(stream: &VideoStream) -> Option<FrameClock> {
        let clock = stream.frame_rate.and_then(FrameClock::from_rate)?;
        let step = clock.ns as f64 / clock.frames as f64;
        let steps: Vec<f64> = stream
            .frames
            .windows(2)
            .map(|w| (w[1].pts - w[0].pts).nseconds() as f64)
            .collect();
        // A container rounds times to its timescale (Matroska: 1 ms).
        let near = (step / 50.0).max(1.1e6);
        let on_clock = steps.iter().filter(|&&d| (d - step).abs() <= near).count();
        (on_clock as f64 >= CLOCK_KEPT * steps.len() as f64).then_some(clock)
    }

    /// Whole frames in a second (at least 1).
    pub fn per_second(self) -> u64 {
        (u128::from(self.frames) * 1_000_000_000 / u128::from(self.ns)).max(1) as u64
    }
}

/// Where a decoded frame falls, by its presentation time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    /// Before the warm-up: decoded only to reach it.
    Before,
    /// A warm-up frame: through the chain, not into the output.
    Warmup,
    /// One of the part's frames, stamped from the part's start on the job's
    /// clock, lasting one frame of it; without a clock, at its own time
    /// less the part's first, lasting until the next frame (`None` for the
    /// file's last frame: its own).
    Part {
        pts: gst::ClockTime,
        duration: Option<gst::ClockTime>,
    },
    /// The next part's: the part is complete.
    After,
}

impl Span {
    /// Plans `segment` of the video file at `path`: its frames and, when
    /// `remembers`, up to `warmup` frames before them (by default
    /// [`DEFAULT_WARMUP_SECONDS`] of them).
    pub fn plan(
        path: &Path,
        segment: Segment,
        warmup: Option<u64>,
        remembers: bool,
    ) -> Result<Span> {
        let started = Instant::now();
        let stream = probe::video_stream(path)?;
        let counting = started.elapsed();
        let pts: Vec<gst::ClockTime> = stream.frames.iter().map(|f| f.pts).collect();
        if let Some(w) = pts.windows(2).find(|w| w[0] == w[1]) {
            return Err(Error::Read {
                path: path.into(),
                reason: format!(
                    "two of its video frames are stamped {}, so it cannot be split by time; remux it first (e.g. ffmpeg -i IN -c copy OUT.mkv)",
                    w[0]
                ),
            });
        }
        let total = pts.len() as u64;
        let count = u64::from(segment.count);
        // Fails with a clear message when there are more parts than frames.
        plan(total, segment.count, &[], 0)?;
        let clock = FrameClock::of(&stream);
        // A second of frames, for the snap and the warm-up: at the caps'
        // rate, else from the median interval (which a gap does not move).
        let per_second = clock.map_or_else(|| frames_a_second(&pts), FrameClock::per_second);
        let given = warmup.is_some();
        let warmup = warmup.unwrap_or(DEFAULT_WARMUP_SECONDS * per_second);
        let keyframes: Vec<u64> = (0..total)
            .filter(|&i| stream.frames[i as usize].keyframe)
            .collect();
        let quarter = total / count / 4;
        let (range, snap, windows, lead) = if remembers {
            // Every part plans the same snap: from the file alone.
            let bytes = stream.caps.as_ref().and_then(|c| {
                let s = c.structure(0)?;
                let (w, h) = (s.get::<i32>("width").ok()?, s.get::<i32>("height").ok()?);
                Some((w.max(1) as u64 * h.max(1) as u64 * 3).div_ceil(2))
            });
            let held = bytes.map_or(u64::MAX, |b| (HOLD_BYTES / b).saturating_sub(2) / 2);
            let snap = (SNAP_SECONDS * per_second).min(quarter).min(held);
            let (snap, lead, parts) =
                even_work(total, segment.count, snap, warmup, given, &keyframes)?;
            let range = segment.frames(&parts);
            let windows = [segment.index, segment.index + 1]
                .into_iter()
                .filter(|&k| k > 0 && k < segment.count && snap > 0)
                .map(|k| {
                    let at = if k == segment.index {
                        range.start
                    } else {
                        range.end
                    };
                    Window {
                        first: at.saturating_sub(snap + 1),
                        last: (at + snap).min(total - 1),
                        boundary: k,
                    }
                })
                .collect::<Vec<_>>();
            (range, snap, windows, lead)
        } else {
            let snap = (KEYFRAME_SNAP_SECONDS * per_second).min(quarter);
            let range = segment.frames(&plan(total, segment.count, &keyframes, snap)?);
            (range, 0, Vec::new(), 0)
        };
        // The warm-up reaches back from the start's window (the earliest
        // the part may start), or from the part's start.
        let first = match windows.first() {
            Some(w) if w.boundary == segment.index => {
                warmup_start(range.start, snap, warmup, given, &keyframes)
            }
            _ if remembers => range.start.saturating_sub(warmup),
            _ => range.start,
        };
        let last = windows
            .iter()
            .find(|w| w.boundary == segment.index + 1)
            .map_or(range.end, |w| w.last + 1);
        let to = (last as usize + 1).min(pts.len());
        let tag = PartTag {
            index: segment.index,
            count: segment.count,
            start: range.start,
            end: range.end,
            total,
            source: SourceId::of(path),
            job: String::new(),
        };
        Ok(Span {
            tag,
            segment,
            at_keyframe: keyframes.binary_search(&range.start).is_ok(),
            counting,
            snap,
            lead,
            windows,
            decided: Decided::new(range.clone()),
            planned: range,
            total,
            clock,
            rate: stream.frame_rate.unwrap_or(gst::Fraction::new(0, 1)),
            first,
            pts: pts[first as usize..to].to_vec(),
        })
    }

    /// The part's frames as decided so far: as planned, with each boundary
    /// whose window has been seen at its scene cut.
    pub fn range(&self) -> Range<u64> {
        self.decided.get()
    }

    /// The part's frame count (as decided so far).
    pub fn frames(&self) -> u64 {
        let r = self.range();
        r.end - r.start
    }

    /// Frames through the chain before the part (as decided so far).
    pub fn warmup(&self) -> u64 {
        self.range().start - self.first
    }

    /// Whether the part's start and its end were found at a scene cut.
    pub fn at_cut(&self) -> (bool, bool) {
        let [start, end] = self.decided.read().1;
        (start, end)
    }

    /// Who the part is, with its frames as decided so far, for `join`.
    pub fn tag(&self) -> PartTag {
        let r = self.range();
        PartTag {
            start: r.start,
            end: r.end,
            ..self.tag.clone()
        }
    }

    /// Sets the job's description in the part's tag.
    pub fn set_job(&mut self, job: String) {
        self.tag.job = job;
    }

    /// Where decoding starts: the first warm-up frame's time (the input
    /// seeks to the keyframe at or before it).
    pub fn seek_to(&self) -> gst::ClockTime {
        self.pts[0]
    }

    /// Where the frame stamped `pts` falls, as the part is decided so far.
    pub fn place(&self, pts: gst::ClockTime) -> Place {
        let range = self.range();
        let at = |i: u64| self.pts.get((i - self.first) as usize).copied();
        if pts < self.pts[0] {
            return Place::Before;
        }
        if at(range.end).is_some_and(|e| pts >= e) {
            return Place::After;
        }
        let start = at(range.start).unwrap_or(self.pts[0]);
        if pts < start {
            return Place::Warmup;
        }
        let next = self.pts.partition_point(|&p| p <= pts);
        let Some(clock) = self.clock else {
            return Place::Part {
                pts: pts - start,
                duration: self.pts.get(next).map(|&n| n - pts),
            };
        };
        // The frame's number in the file: that of the last frame presented
        // at or before `pts` (the decoder gives the parser's times back).
        let i = self.first + next as u64 - 1;
        Place::Part {
            pts: clock.at(i) - clock.at(range.start),
            duration: Some(clock.at(i + 1) - clock.at(i)),
        }
    }

    /// The file's number of the frame stamped `pts` (`None` before the first
    /// decoded).
    fn index(&self, pts: gst::ClockTime) -> Option<u64> {
        let next = self.pts.partition_point(|&p| p <= pts);
        (next > 0).then(|| self.first + next as u64 - 1)
    }

    /// Moves the boundary of `window` to the scene cut among `lumas` (the
    /// window's frames by number, in order; `None` for one that could not
    /// be read), as [`plan`] moves a boundary to the nearest cut: every part
    /// of the job sees the same frames there and decides the same.
    fn decide(&self, window: &Window, lumas: &[(u64, Option<Plane<u8>>)]) {
        let cuts: Vec<u64> = lumas
            .windows(2)
            .filter_map(|w| match (&w[0], &w[1]) {
                ((a, Some(x)), (b, Some(y)))
                    if *b == a + 1
                        && *b > window.first
                        && is_cut(x, y, global_shift(x, y), DEFAULT_CUT) =>
                {
                    Some(*b)
                }
                _ => None,
            })
            .collect();
        let Ok(bounds) = plan_led(self.total, self.segment.count, &cuts, self.snap, self.lead)
        else {
            return;
        };
        if let Some(r) = bounds.get(window.boundary as usize) {
            let end = window.boundary != self.segment.index;
            self.decided.set(end, r.start, cuts.contains(&r.start));
        }
    }
}

/// The frames a part holds back while it looks for a scene cut near a
/// boundary, in its own decoded frames: each window's frames wait until its
/// last is seen, then go on, placed by the boundary decided.
#[derive(Default)]
pub struct Held {
    /// The next window of the span to decide.
    next: usize,
    frames: Vec<gst::Sample>,
    lumas: Vec<(u64, Option<Plane<u8>>)>,
}

impl Held {
    /// Takes the next decoded frame; returns the frames to place now, in
    /// order (none while a window is seen).
    pub fn admit(&mut self, span: &Span, sample: gst::Sample) -> Vec<gst::Sample> {
        let Some(window) = span.windows.get(self.next) else {
            return vec![sample];
        };
        let index = sample
            .buffer()
            .and_then(|b| b.pts())
            .and_then(|p| span.index(p));
        match index {
            // Before the window (or before the part's first frame decoded,
            // from the keyframe before it): placed now.
            None => vec![sample],
            Some(i) if i < window.first => vec![sample],
            Some(i) if i <= window.last => {
                let luma = sample.buffer().and_then(|b| luma(&sample, b));
                self.lumas.push((i, luma));
                self.frames.push(sample);
                if i < window.last {
                    return Vec::new();
                }
                self.decide(span)
            }
            // Past the window with its last frame missing (a decoder that
            // dropped frames): decided on what was seen.
            Some(_) => {
                let mut out = self.decide(span);
                out.extend(self.admit(span, sample));
                out
            }
        }
    }

    /// The frames still held at the end of the stream (a window cut short),
    /// placed by what was seen of it.
    pub fn finish(&mut self, span: &Span) -> Vec<gst::Sample> {
        if self.frames.is_empty() {
            return Vec::new();
        }
        self.decide(span)
    }

    fn decide(&mut self, span: &Span) -> Vec<gst::Sample> {
        if let Some(window) = span.windows.get(self.next) {
            span.decide(window, &self.lumas);
            self.next += 1;
        }
        self.lumas.clear();
        std::mem::take(&mut self.frames)
    }
}

/// The parts of a job whose chain remembers, with their work made equal:
/// each part after the first warms up from before its start's window, so
/// it is shorter by the mean of what an even split's boundaries lead by.
/// Returns the snap (made smaller where a part would be too short for its
/// two windows not to meet: a part holds them one after the other, and its
/// neighbours must each see a whole one), the lead and the parts.
fn even_work(
    total: u64,
    count: u32,
    mut snap: u64,
    warmup: u64,
    given: bool,
    keyframes: &[u64],
) -> Result<(u64, u64, Vec<Range<u64>>)> {
    loop {
        let start = |at: u64| warmup_start(at, snap, warmup, given, keyframes);
        let even = plan_led(total, count, &[], snap, warmup + snap + 1)?;
        let leads: Vec<u64> = even[1..].iter().map(|r| r.start - start(r.start)).collect();
        let lead = leads.iter().sum::<u64>() / (leads.len() as u64).max(1);
        let parts = plan_led(total, count, &[], snap, lead)?;
        let shortest = parts.iter().map(|r| r.end - r.start).min().unwrap_or(0);
        if snap == 0 || shortest >= 2 * snap + 3 {
            return Ok((snap, lead, parts));
        }
        snap = shortest.saturating_sub(3) / 2;
    }
}

/// Where the warm-up of a part starting at `at` (a boundary that may move
/// by `snap` frames) starts: `warmup` frames before its window. A warm-up
/// of the default length starts at a keyframe, where its decoding starts
/// (the frames from the keyframe before are decoded anyway): the keyframe
/// after that point where it leaves at least half the warm-up, else the one
/// before. A warm-up given (`--warmup`) is kept to as given.
fn warmup_start(at: u64, snap: u64, warmup: u64, given: bool, keyframes: &[u64]) -> u64 {
    let window = at.saturating_sub(snap + 1);
    let nominal = window.saturating_sub(warmup);
    if given || warmup == 0 {
        return nominal;
    }
    let i = keyframes.partition_point(|&k| k < nominal);
    match keyframes.get(i) {
        Some(&k) if k == nominal || k + warmup / 2 <= window => k,
        _ => i
            .checked_sub(1)
            .map_or(nominal, |j| keyframes[j].min(nominal)),
    }
}

/// When frame `i` (in presentation order) of a file split in time is
/// presented, counted from its first frame, as the parts are stamped: at
/// `i` frames of its caps' rate, or without one at the frame's own time
/// (`None` past its last frame).
pub fn frame_time(stream: &VideoStream, i: u64) -> Option<gst::ClockTime> {
    match FrameClock::of(stream) {
        Some(clock) => Some(clock.at(i)),
        None => {
            let first = stream.frames.first()?.pts;
            Some(stream.frames.get(usize::try_from(i).ok()?)?.pts - first)
        }
    }
}

/// Frames in a second of the video, from its median frame interval (0
/// for a single frame).
fn frames_a_second(pts: &[gst::ClockTime]) -> u64 {
    let mut steps: Vec<u64> = pts.windows(2).map(|w| (w[1] - w[0]).nseconds()).collect();
    if steps.is_empty() {
        return 0;
    }
    let mid = steps.len() / 2;
    let step = *steps.select_nth_unstable(mid).1;
    1_000_000_000u64.checked_div(step).unwrap_or(0)
}

/// How a pixel's bytes in a frame's first plane make a luma level.
type Level = Box<dyn Fn(&[u8]) -> u8>;

/// A decoded frame's luma, subsampled to at most [`CUT_WIDTH`] wide: the
/// first plane of a planar YUV or gray format (of 8 bits, or of more taken
/// to 8), or BT.601's luma of a packed RGB format of 8 bits (what the CPU
/// chain takes); `None` for other formats. A frame in CUDA memory is read
/// through a map, which downloads it.
fn luma(sample: &gst::Sample, buffer: &gst::BufferRef) -> Option<Plane<u8>> {
    let info = sample
        .caps()
        .and_then(|c| gstreamer_video::VideoInfo::from_caps(c).ok())?;
    let format = info.format_info();
    let (depth, shift, bytes) = (
        format.depth()[0],
        format.shift()[0],
        format.pixel_stride()[0] as usize,
    );
    let offsets = format.poffset();
    // How a sample of the first plane becomes a luma level.
    let level: Level = match (depth, bytes) {
        // Packed YUV (YUY2, v210, AYUV) has no plane of luma alone.
        (8, 1) if format.is_yuv() || format.is_gray() => Box::new(|v| v[0]),
        (9..=16, 2) if (format.is_yuv() || format.is_gray()) && format.is_le() => {
            Box::new(move |v| {
                let v = u16::from_le_bytes([v[0], v[1]]) >> shift;
                (v >> (depth - 8)).min(255) as u8
            })
        }
        (8, 3 | 4) if format.is_rgb() && format.n_planes() == 1 => {
            let (r, g, b) = (
                offsets[0] as usize,
                offsets[1] as usize,
                offsets[2] as usize,
            );
            Box::new(move |v| {
                let y = 66 * u32::from(v[r]) + 129 * u32::from(v[g]) + 25 * u32::from(v[b]);
                ((y + 128) >> 8) as u8 + 16
            })
        }
        _ => return None,
    };
    let frame = gstreamer_video::VideoFrameRef::from_buffer_ref_readable(buffer, &info).ok()?;
    let (w, h) = (info.width() as usize, info.height() as usize);
    let stride = frame.plane_stride()[0] as usize;
    let data = frame.plane_data(0).ok()?;
    let step = w.div_ceil(CUT_WIDTH).max(1);
    let (sw, sh) = (w.div_ceil(step), h.div_ceil(step));
    let mut out = Vec::with_capacity(sw * sh);
    for y in (0..h).step_by(step) {
        let row = data.get(y * stride..y * stride + w * bytes)?;
        out.extend(row.chunks_exact(bytes).step_by(step).map(&level));
    }
    Plane::from_vec(sw, sh, out).ok()
}

/// The first error on the pipeline's bus, as text.
fn bus_error(pipe: &gst::Pipeline) -> Option<String> {
    let msg = pipe.bus()?.pop_filtered(&[gst::MessageType::Error])?;
    match msg.view() {
        gst::MessageView::Error(e) => {
            Some(format!("{} (is it a complete, playable video?)", e.error()))
        }
        _ => None,
    }
}

/// Prerolls `pipe` and seeks it to the keyframe at or before `to`, so that
/// playing it decodes from there.
pub(crate) fn seek_paused(pipe: &gst::Pipeline, to: gst::ClockTime) -> Result<()> {
    let failed = |what: &str| {
        Error::Pipeline(match bus_error(pipe) {
            Some(e) => format!("{what}: {e}"),
            None => what.to_string(),
        })
    };
    pipe.set_state(gst::State::Paused)
        .map_err(|_| failed("the input would not start"))?;
    let (changed, _, _) = pipe.state(gst::ClockTime::from_seconds(STALL.as_secs()));
    changed.map_err(|_| failed("the input would not start"))?;
    if to > gst::ClockTime::ZERO {
        pipe.seek_simple(
            gst::SeekFlags::FLUSH | gst::SeekFlags::KEY_UNIT | gst::SeekFlags::SNAP_BEFORE,
            to,
        )
        .map_err(|_| failed(&format!("the input cannot seek to {to}")))?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A part of frames 10.. after `warmup` warm-up frames, presented at
    /// `times` (ms), without a clock (a variable rate).
    fn span(times: &[u64], warmup: u64, frames: u64) -> Span {
        let range = 10..10 + frames;
        Span {
            segment: Segment { index: 1, count: 3 },
            planned: range.clone(),
            decided: Decided::new(range),
            total: 100,
            first: 10 - warmup,
            at_keyframe: false,
            counting: Duration::ZERO,
            snap: 0,
            lead: 0,
            windows: Vec::new(),
            clock: None,
            rate: gst::Fraction::new(0, 1),
            tag: PartTag::default(),
            pts: times
                .iter()
                .map(|&t| gst::ClockTime::from_mseconds(t))
                .collect(),
        }
    }

    /// Part `index` of a 40-frame file (a frame every 40 ms) in two, the
    /// boundary at 20 free to move 5 frames: its window is frames 14..=25.
    fn windowed(index: u32) -> Span {
        let ms = gst::ClockTime::from_mseconds;
        let planned = if index == 0 { 0..20 } else { 20..40 };
        let (first, to) = if index == 0 { (0, 27) } else { (14, 40) };
        Span {
            segment: Segment { index, count: 2 },
            decided: Decided::new(planned.clone()),
            planned,
            total: 40,
            first,
            at_keyframe: false,
            counting: Duration::ZERO,
            snap: 5,
            lead: 0,
            windows: vec![Window {
                first: 14,
                last: 25,
                boundary: 1,
            }],
            clock: None,
            rate: gst::Fraction::new(0, 1),
            tag: PartTag::default(),
            pts: (first..to).map(|i| ms(40 * i)).collect(),
        }
    }

    /// Frame `i` of a clip whose picture changes completely at `cut`.
    fn frame(i: u64, cut: u64) -> gst::Sample {
        let caps = gstreamer_video::VideoInfo::builder(gstreamer_video::VideoFormat::Gray8, 16, 8)
            .build()
            .unwrap()
            .to_caps()
            .unwrap();
        let level = if i < cut { 40 } else { 210 };
        // A little texture, the same in every frame of a shot.
        let pixels: Vec<u8> = (0..16 * 8).map(|p| level + (p % 7) as u8).collect();
        let mut buffer = gst::Buffer::from_slice(pixels);
        buffer
            .get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(40 * i));
        gst::Sample::builder().buffer(&buffer).caps(&caps).build()
    }

    /// Feeds `span` the frames from `from` on (until one is after the
    /// part); returns the file's numbers of the frames let through, each
    /// with the number of frames given by then.
    fn feed(span: &Span, from: u64, cut: u64) -> Vec<(u64, u64)> {
        let mut held = Held::default();
        let mut out = Vec::new();
        for i in from..40 {
            for s in held.admit(span, frame(i, cut)) {
                let pts = s.buffer().unwrap().pts().unwrap();
                out.push((pts.mseconds() / 40, i));
            }
        }
        out
    }

    #[test]
    fn both_parts_move_their_boundary_to_the_cut_found_in_their_own_frames() {
        gst::init().unwrap();
        let ms = gst::ClockTime::from_mseconds;
        // The cut at 17, three frames before the even split.
        let after = windowed(1);
        let passed = feed(&after, 10, 17);
        // Frames before the window pass at once; the window's wait for its
        // last (25), then go on in order.
        assert_eq!(passed[..4], [(10, 10), (11, 11), (12, 12), (13, 13)]);
        assert!(passed[4..16].iter().all(|&(_, given)| given == 25));
        assert_eq!(
            passed.iter().map(|p| p.0).collect::<Vec<_>>(),
            (10..40).collect::<Vec<_>>()
        );
        assert_eq!(after.range(), 17..40);
        assert_eq!(after.at_cut(), (true, false));
        assert_eq!(after.warmup(), 3);
        assert_eq!(after.place(ms(40 * 16)), Place::Warmup);
        assert_eq!(
            after.place(ms(40 * 17)),
            Place::Part {
                pts: ms(0),
                duration: Some(ms(40))
            }
        );
        assert_eq!(after.tag().start, 17);
        let before = windowed(0);
        feed(&before, 0, 17);
        assert_eq!(before.range(), 0..17);
        assert_eq!(before.place(ms(40 * 17)), Place::After);
        // No cut in the window: the boundary stays where it was planned.
        let (before, after) = (windowed(0), windowed(1));
        feed(&before, 0, 30);
        feed(&after, 14, 30);
        assert_eq!((before.range(), after.range()), (0..20, 20..40));
        assert_eq!(
            (before.at_cut(), after.at_cut()),
            ((false, false), (false, false))
        );
        // A cut right at the planned boundary: it stays, and says so.
        let (before, after) = (windowed(0), windowed(1));
        feed(&before, 0, 20);
        feed(&after, 14, 20);
        assert_eq!((before.range(), after.range()), (0..20, 20..40));
        assert_eq!(
            (before.at_cut(), after.at_cut()),
            ((false, true), (true, false))
        );
        // A cut beyond the snap (5 frames) does not move it either.
        let after = windowed(1);
        feed(&after, 14, 26);
        assert_eq!(after.range(), 20..40);
    }

    #[test]
    fn a_default_warm_up_starts_at_a_keyframe_and_a_given_one_where_it_says() {
        let keyframes: Vec<u64> = (0..100).map(|i| i * 250).collect();
        // The window of a part at 9264 starts at 9234; 290 frames before it
        // is 8944, and the keyframe after (9000) leaves 234 frames of it.
        assert_eq!(warmup_start(9264, 29, 290, false, &keyframes), 9000);
        // From 9100, the keyframe after (9250) would leave 140 of 290: the
        // one before.
        assert_eq!(warmup_start(9420, 29, 290, false, &keyframes), 9000);
        // On a keyframe already.
        assert_eq!(warmup_start(9320, 29, 290, false, &keyframes), 9000);
        // Given, or none: as it says.
        assert_eq!(warmup_start(9264, 29, 290, true, &keyframes), 8944);
        assert_eq!(warmup_start(9264, 29, 0, false, &keyframes), 9234);
        // Near the file's start, and with no keyframes known.
        assert_eq!(warmup_start(100, 29, 290, false, &keyframes), 0);
        assert_eq!(warmup_start(9264, 29, 290, false, &[]), 8944);
    }

    #[test]
    fn a_parts_windows_never_meet() {
        // 24 frames in 3, a warm-up longer than the file (each part's lead
        // is its start, 14 on average, held to half a part by the plan, 4):
        // the middle part has 6 frames, too few for two windows of a snap
        // of 2 (6 frames each), so the snap becomes 1.
        let (snap, lead, parts) = even_work(24, 3, 2, 100, true, &[]).unwrap();
        assert_eq!((snap, lead), (1, 14));
        assert_eq!(parts, [0..11, 11..17, 17..24]);
        // A long file keeps its snap, its parts shorter after the first by
        // the lead (290 frames of warm-up and the window).
        let (snap, lead, parts) = even_work(18_207, 2, 29, 290, true, &[]).unwrap();
        assert_eq!((snap, lead), (29, 320));
        assert_eq!(parts[0].end, 9264);
    }

    #[test]
    fn a_window_cut_short_by_the_end_is_decided_on_what_was_seen() {
        gst::init().unwrap();
        let after = windowed(1);
        let mut held = Held::default();
        let mut passed = 0;
        for i in 14..22 {
            passed += held.admit(&after, frame(i, 19)).len();
        }
        assert_eq!(passed, 0);
        assert_eq!(held.finish(&after).len(), 8);
        assert_eq!(after.range(), 19..40);
        assert!(held.finish(&after).is_empty());
    }

    #[test]
    fn frames_fall_before_in_and_after_the_part_by_time() {
        let ms = gst::ClockTime::from_mseconds;
        // Two warm-up frames, three of the part's, then the next part's first.
        let s = span(&[100, 140, 180, 220, 270, 300], 2, 3);
        assert_eq!(s.seek_to(), ms(100));
        assert_eq!(s.place(ms(60)), Place::Before);
        assert_eq!(s.place(ms(100)), Place::Warmup);
        assert_eq!(s.place(ms(140)), Place::Warmup);
        assert_eq!(
            s.place(ms(180)),
            Place::Part {
                pts: ms(0),
                duration: Some(ms(40))
            }
        );
        // The last frame lasts until the next part's first: no gap.
        assert_eq!(
            s.place(ms(270)),
            Place::Part {
                pts: ms(90),
                duration: Some(ms(30))
            }
        );
        assert_eq!(s.place(ms(300)), Place::After);
        assert_eq!(s.place(ms(400)), Place::After);
    }

    #[test]
    fn the_files_last_part_keeps_its_last_frames_duration() {
        let ms = gst::ClockTime::from_mseconds;
        let s = span(&[0, 40, 80], 0, 3);
        assert_eq!(
            s.place(ms(80)),
            Place::Part {
                pts: ms(80),
                duration: None
            }
        );
        assert_eq!(
            s.place(ms(500)),
            Place::Part {
                pts: ms(500),
                duration: None
            }
        );
    }

    #[test]
    fn on_a_clock_frames_are_stamped_by_their_number_not_their_time() {
        let ms = gst::ClockTime::from_mseconds;
        // A warm-up frame, then three frames of the part with a jump of
        // 1.9 s between the second and third (where a looped copy starts),
        // then the next part's first.
        let mut s = span(&[360, 400, 440, 2380, 2420], 1, 3);
        s.clock = FrameClock::from_rate(gst::Fraction::new(25, 1));
        assert_eq!(s.place(ms(360)), Place::Warmup);
        let stamps: Vec<Place> = [400, 440, 2380].map(|t| s.place(ms(t))).to_vec();
        let want: Vec<Place> = [0, 40, 80]
            .map(|t| Place::Part {
                pts: ms(t),
                duration: Some(ms(40)),
            })
            .to_vec();
        assert_eq!(stamps, want);
        assert_eq!(s.place(ms(2420)), Place::After);
        // The file's last part: its last frame lasts one frame too.
        let mut last = span(&[0, 40, 100], 0, 3);
        last.clock = s.clock;
        assert_eq!(
            last.place(ms(100)),
            Place::Part {
                pts: ms(80),
                duration: Some(ms(40))
            }
        );
    }

    #[test]
    fn a_file_keeps_its_caps_clock_only_where_its_frames_keep_to_it() {
        let stream = |rate: (i32, i32), ms: &[u64]| VideoStream {
            frames: ms
                .iter()
                .map(|&t| probe::CodedFrame {
                    pts: gst::ClockTime::from_nseconds(t * 1_000_000),
                    keyframe: false,
                })
                .collect(),
            frame_rate: Some(gst::Fraction::new(rate.0, rate.1)),
            comments: Vec::new(),
            orientation: None,
            caps: None,
        };
        // 25 fps, in Matroska's whole milliseconds, with one jump (a loop).
        let mut looped: Vec<u64> = (0..40).map(|i| i * 40).collect();
        looped.extend((0..20).map(|i| 1_600 + 130 + i * 40));
        assert!(FrameClock::of(&stream((25, 1), &looped)).is_some());
        // 30000/1001 rounded to milliseconds (33 or 34 apart).
        let ntsc: Vec<u64> = (0..60).map(|i| i * 1001 / 30).collect();
        assert!(FrameClock::of(&stream((30000, 1001), &ntsc)).is_some());
        // 30 fps for 45 frames, then 24 fps, with caps giving the mean rate
        // or the first: the frames keep their own times.
        let mut changing: Vec<u64> = (0..45).map(|i| i * 1001 / 30).collect();
        changing.extend((0..36).map(|i| 1_502 + i * 1001 / 24));
        assert!(FrameClock::of(&stream((82, 3), &changing)).is_none());
        assert!(FrameClock::of(&stream((30000, 1001), &changing)).is_none());
    }

    #[test]
    fn a_clock_counts_from_the_files_first_frame_without_drifting() {
        let ntsc = FrameClock::from_rate(gst::Fraction::new(30000, 1001)).unwrap();
        let ns = gst::ClockTime::from_nseconds;
        assert_eq!(ntsc.at(0), ns(0));
        assert_eq!(ntsc.at(1), ns(33_366_667));
        assert_eq!(ntsc.at(3), ns(100_100_000));
        // No drift: 30 000 frames are exactly 1001 s.
        assert_eq!(ntsc.at(30_000), gst::ClockTime::from_seconds(1001));
        assert_eq!(ntsc.per_second(), 29);
        // Stamps within a part are differences on the file's clock, so parts
        // laid end to end give every frame its place.
        let mut s = span(&[0, 1, 2, 3], 0, 3);
        s.clock = Some(ntsc);
        assert_eq!(
            s.place(gst::ClockTime::from_mseconds(2)),
            Place::Part {
                pts: ntsc.at(12) - ntsc.at(10),
                duration: Some(ntsc.at(13) - ntsc.at(12))
            }
        );
        for variable in [gst::Fraction::new(0, 1), gst::Fraction::new(-25, 1)] {
            assert_eq!(FrameClock::from_rate(variable), None);
        }
    }

    #[test]
    fn a_second_of_frames_comes_from_the_median_interval() {
        let ms = gst::ClockTime::from_mseconds;
        let at_25fps: Vec<gst::ClockTime> = (0..100).map(|i| ms(40 * i)).collect();
        assert_eq!(frames_a_second(&at_25fps), 25);
        // A few long gaps (a variable frame rate) do not move it.
        let mut vfr = at_25fps.clone();
        vfr.extend((0..10).map(|i| ms(4000 + 500 * i)));
        assert_eq!(frames_a_second(&vfr), 25);
        assert_eq!(frames_a_second(&at_25fps[..1]), 0);
    }
}
