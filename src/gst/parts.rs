//! One part of a job split in time (`run IN PART --segment K/N`): which of
//! a file's frames it processes, chosen by presentation time so that no
//! frame is lost or doubled at a boundary, and how its output is stamped.
//!
//! Every task plans on its own, from the file alone, and all reach the same
//! plan: the coded frames are counted by [`probe`](super::probe) (a plain
//! MP4 from its index), the N ranges are equal ([`crate::split::plan`]),
//! and a boundary moves. For a chain that remembers earlier frames it moves
//! to a scene cut within a second of it, where the chain's memory resets:
//! cuts are looked for only around the two boundaries of the part (a few
//! seconds decoded small), with the same measure as fast retargeting's
//! shot detection. For a chain without memory, where a part starts changes
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
use std::time::{Duration, Instant};

use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video::prelude::*;

use super::probe::{self, VideoStream};
use crate::error::{Error, Result};
use crate::frame::Plane;
use crate::ops::retarget::fast::{DEFAULT_CUT, is_cut};
use crate::ops::retarget::motion::global_shift;
use crate::split::{Segment, plan};

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

/// The largest width the cut search compares at: the decoded luma is
/// subsampled to it (the measure is a mean over a grid anyway).
const CUT_WIDTH: usize = 320;

/// How long a decode for the cut search may stay silent.
const STALL: Duration = Duration::from_secs(30);

/// The most pixels a split job's cut search decodes on the CPU (about 500
/// frames of 1080p) rather than on a hardware decoder. On the GPU host,
/// with two workers starting at once, NVIDIA's decoder gave its first frame
/// 1.0–1.2 s into the search and took 1.5–1.9 s for 176 frames of 1080p
/// (`bench/results/multi-gpu.md`); `avdec_h264` took 0.49 s for the same
/// frames on two cores of the build machine.
const CPU_SEARCH_PIXELS: u64 = 1 << 30;

/// The frames one part of a split job takes, by presentation time.
#[derive(Clone, Debug, PartialEq)]
pub struct Span {
    pub segment: Segment,
    /// The part's frames, counted in presentation order over the whole file.
    pub range: Range<u64>,
    /// Frames in the whole file.
    pub total: u64,
    /// Frames before the part that the chain runs on first.
    pub warmup: u64,
    /// Whether the part starts at a detected scene cut (or the file's start).
    pub at_cut: bool,
    /// Whether the part starts at a keyframe, where its decoding starts.
    pub at_keyframe: bool,
    /// How long the planning took: counting the file's frames, and looking
    /// for cuts near the part's boundaries (`None`: not looked for, the
    /// chain has no memory).
    pub counting: Duration,
    pub cut_search: Option<CutSearch>,
    /// The clock the part's frames are stamped on: the caps' rate (`None`
    /// where they say 0/1: each frame keeps its own time).
    pub clock: Option<FrameClock>,
    /// The source's caps rate (0/1: variable), which every part of the job
    /// is encoded at, wherever in the file it starts: a decoder that reads
    /// a rate from the stream may give each part another, and `join` takes
    /// only parts of one rate.
    pub rate: gst::Fraction,
    /// Who the part is, written into its container's tags for `join`.
    pub tag: PartTag,
    /// Presentation times from the first warm-up frame on: the warm-up
    /// frames, the part's, then the next part's first frame if there is one.
    pts: Vec<gst::ClockTime>,
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

/// What the search for scene cuts near a part's boundaries cost.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CutSearch {
    /// The whole search.
    pub time: Duration,
    /// Frames decoded (from the keyframe before each window to its end).
    pub decoded: u64,
    /// From the start to the first decoded frame.
    pub first_frame: Duration,
    /// The decoder the search used (its factory's name).
    pub decoder: String,
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
        let warmup = warmup.unwrap_or(DEFAULT_WARMUP_SECONDS * per_second);
        let ideal = |i: u64| (i * total + count / 2) / count;
        let keyframes: Vec<u64> = (0..total)
            .filter(|&i| stream.frames[i as usize].keyframe)
            .collect();
        let mut cuts = Vec::new();
        let (snap, cut_search) = if remembers {
            let snap = (SNAP_SECONDS * per_second).min(total / count / 4);
            let bounds: Vec<u64> = [segment.index as u64, segment.index as u64 + 1]
                .into_iter()
                .filter(|&i| i > 0 && i < count && snap > 0)
                .map(ideal)
                .collect();
            let size = stream.caps.as_ref().and_then(|c| {
                let s = c.structure(0)?;
                Some(s.get::<i32>("width").ok()? as u64 * s.get::<i32>("height").ok()? as u64)
            });
            let (found, mut search) =
                find_cuts(path, &pts, &keyframes, &bounds, snap, size.unwrap_or(0))?;
            cuts = found;
            search.time = started.elapsed() - counting;
            (snap, Some(search))
        } else {
            let snap = (KEYFRAME_SNAP_SECONDS * per_second).min(total / count / 4);
            (snap, None)
        };
        let candidates = if remembers { &cuts } else { &keyframes };
        let range = segment.frames(&plan(total, segment.count, candidates, snap)?);
        let warmup = if remembers {
            warmup.min(range.start)
        } else {
            0
        };
        let from = (range.start - warmup) as usize;
        let to = (range.end as usize + 1).min(pts.len());
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
            at_cut: range.start == 0 || cuts.contains(&range.start),
            at_keyframe: keyframes.binary_search(&range.start).is_ok(),
            counting,
            cut_search,
            range,
            total,
            warmup,
            clock,
            rate: stream.frame_rate.unwrap_or(gst::Fraction::new(0, 1)),
            pts: pts[from..to].to_vec(),
        })
    }

    /// The part's frame count.
    pub fn frames(&self) -> u64 {
        self.range.end - self.range.start
    }

    /// Where decoding starts: the first warm-up frame's time (the input
    /// seeks to the keyframe at or before it).
    pub fn seek_to(&self) -> gst::ClockTime {
        self.pts[0]
    }

    /// Where the frame stamped `pts` falls.
    pub fn place(&self, pts: gst::ClockTime) -> Place {
        let start = self.pts[self.warmup as usize];
        let end = self.pts.get((self.warmup + self.frames()) as usize);
        if pts < self.pts[0] {
            return Place::Before;
        }
        if end.is_some_and(|&e| pts >= e) {
            return Place::After;
        }
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
        let i = self.range.start - self.warmup + next as u64 - 1;
        Place::Part {
            pts: clock.at(i) - clock.at(self.range.start),
            duration: Some(clock.at(i + 1) - clock.at(i)),
        }
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

/// The scene cuts within `snap` frames of each frame of `bounds` (in
/// order, further apart than twice `snap`): frames whose luma differs from
/// the frame before by more than fast retargeting's cut level, the global
/// shift taken out. `keyframes` (frame numbers, in order) and `pixels` (a
/// frame's, 0 where unknown) say how much decoding that takes.
fn find_cuts(
    path: &Path,
    pts: &[gst::ClockTime],
    keyframes: &[u64],
    bounds: &[u64],
    snap: u64,
    pixels: u64,
) -> Result<(Vec<u64>, CutSearch)> {
    let windows: Vec<(usize, usize)> = bounds
        .iter()
        .map(|&at| {
            let first = at.saturating_sub(snap + 1) as usize;
            (first, ((at + snap) as usize).min(pts.len() - 1))
        })
        .collect();
    if windows.is_empty() {
        return Ok((Vec::new(), CutSearch::default()));
    }
    let times: Vec<_> = windows.iter().map(|&(a, b)| (pts[a], pts[b])).collect();
    let index = |p: gst::ClockTime| pts.binary_search(&p).ok().map(|i| i as u64);
    let mut cuts = Vec::new();
    let frames = frames_to_decode(&windows, keyframes);
    // SEAMSTREAM_CUT_SEARCH=cpu or =hardware decides it (for benchmarks).
    let on_cpu = match std::env::var("SEAMSTREAM_CUT_SEARCH").as_deref() {
        Ok("cpu") => true,
        Ok("hardware") => false,
        _ => pixels > 0 && frames.saturating_mul(pixels) <= CPU_SEARCH_PIXELS,
    };
    let (decoded, search) = decode_luma(path, &times, on_cpu)?;
    for ((first, _), lumas) in windows.iter().zip(decoded) {
        for w in lumas.windows(2) {
            let (Some(a), Some(b)) = (index(w[0].0), index(w[1].0)) else {
                continue;
            };
            if b == a + 1
                && b > *first as u64
                && is_cut(
                    &w[0].1,
                    &w[1].1,
                    global_shift(&w[0].1, &w[1].1),
                    DEFAULT_CUT,
                )
            {
                cuts.push(b);
            }
        }
    }
    Ok((cuts, search))
}

/// Decoded frames' small luma planes, with their times.
type Lumas = Vec<(gst::ClockTime, Plane<u8>)>;

/// For each window of `windows` (in order), the frames stamped from its
/// start to its end (inclusive) of the file's video, as small luma planes
/// with their times: one decoder, seeking from window to window (a
/// decoder's start costs more than its seek, NVDEC's most). `on_cpu` keeps
/// hardware decoders out where a software one takes the stream.
fn decode_luma(
    path: &Path,
    windows: &[(gst::ClockTime, gst::ClockTime)],
    on_cpu: bool,
) -> Result<(Vec<Lumas>, CutSearch)> {
    let started = Instant::now();
    let mut search = CutSearch::default();
    let read_error = |reason: String| Error::Read {
        path: path.into(),
        reason,
    };
    let pipe = gst::Pipeline::new();
    // As `run` reads a file: audio stops undecoded (a decodebin would decode
    // it too, or stall on it where no decoder is installed), and goes to a
    // fakesink with every other stream that is not the video.
    let uri = gst::glib::filename_to_uri(
        std::fs::canonicalize(path).map_err(|e| read_error(e.to_string()))?,
        None,
    )
    .map_err(|e| read_error(e.to_string()))?;
    let stop_at = format!(
        "video/x-raw(ANY); audio/x-raw(ANY); {}",
        super::audio::ENCODED_AUDIO
    );
    let decode = gst::ElementFactory::make("uridecodebin")
        .property("uri", uri.as_str())
        .property(
            "caps",
            stop_at
                .parse::<gst::Caps>()
                .map_err(|e| crate::gst::gst_call("bad caps", e))?,
        )
        .build()
        .map_err(|_| Error::Pipeline("GStreamer has no `uridecodebin` element".into()))?;
    if on_cpu {
        skip_hardware_decoders(&decode);
    }
    let convert = super::element("videoconvert")?;
    // The decoder's own 4:2:0 (whose first plane is the luma), not a
    // conversion: scaling or converting after a GPU decoder makes GStreamer
    // set up its CUDA and GL converters, seconds on the GPU host.
    let caps = gst::Caps::builder("video/x-raw")
        .field("format", gst::List::new(["NV12", "I420"]))
        .build();
    let sink = gst_app::AppSink::builder()
        .caps(&caps)
        .sync(false)
        .max_buffers(4)
        .build();
    pipe.add_many([&decode, &convert, sink.upcast_ref()])
        .and_then(|()| convert.link(&sink))
        .map_err(|e| crate::gst::gst_call("cannot build the cut search", e))?;
    let video_in = convert
        .static_pad("sink")
        .expect("videoconvert has a sink pad");
    super::route_first_video(&pipe, &decode, video_in);
    let mut window = |i: usize, (from, to): (gst::ClockTime, gst::ClockTime)| {
        if i == 0 {
            seek_paused(&pipe, from)?;
            pipe.set_state(gst::State::Playing)
                .map_err(|_| read_error("GStreamer could not start decoding it".into()))?;
        } else {
            // Playing: a flushing seek drops what is queued from the
            // window before (and anything stale is earlier than `from`).
            pipe.seek_simple(
                gst::SeekFlags::FLUSH | gst::SeekFlags::KEY_UNIT | gst::SeekFlags::SNAP_BEFORE,
                from,
            )
            .map_err(|_| read_error(format!("it cannot seek to {from}")))?;
        }
        {
            let mut frames = Vec::new();
            let mut quiet = Instant::now();
            loop {
                if let Some(sample) = sink.try_pull_sample(gst::ClockTime::from_mseconds(100)) {
                    quiet = Instant::now();
                    if search.decoded == 0 {
                        search.first_frame = started.elapsed();
                        search.decoder = video_decoder(&pipe).unwrap_or_default();
                    }
                    search.decoded += 1;
                    let (Some(buffer), Some(pts)) =
                        (sample.buffer(), sample.buffer().and_then(|b| b.pts()))
                    else {
                        continue;
                    };
                    if pts < from {
                        continue;
                    }
                    if pts > to {
                        break Ok(frames);
                    }
                    frames.push((pts, luma(&sample, buffer)?));
                    continue;
                }
                if sink.is_eos() {
                    break Ok(frames);
                }
                if let Some(e) = bus_error(&pipe) {
                    break Err(read_error(e));
                }
                if quiet.elapsed() > STALL {
                    break Err(read_error(format!(
                        "no frame came out of it in {} s",
                        STALL.as_secs()
                    )));
                }
            }
        }
    };
    let outcome = windows
        .iter()
        .enumerate()
        .map(|(i, &w)| window(i, w))
        .collect::<Result<Vec<Lumas>>>();
    let _ = pipe.set_state(gst::State::Null);
    Ok((outcome?, search))
}

/// Makes `decodebin` (or `uridecodebin`) pass over hardware decoders
/// wherever a software decoder of primary rank takes the same stream
/// ([`passed_over`]): for a few hundred frames, a hardware decoder's start
/// (a CUDA context, the decoder's surfaces, while the run's own GPU start
/// runs beside it) costs more than decoding them on the CPU with FFmpeg's
/// threaded decoders (`avdec_*`, primary rank). Lesser software decoders
/// are slower than that start: `openh264dec` (marginal rank) took 2.0–2.6 s
/// for the 176 frames NVIDIA's decoder took 1.5 s for, on the GPU host.
fn skip_hardware_decoders(decodebin: &gst::Element) {
    // The signal is answered with GST_AUTOPLUG_SELECT_TRY (0) or _SKIP (2).
    let answer = |skip: bool| {
        gst::glib::Type::from_name("GstAutoplugSelectResult")
            .and_then(gst::glib::EnumClass::with_type)
            .and_then(|class| class.to_value(if skip { 2 } else { 0 }))
    };
    if answer(false).is_none() {
        return;
    }
    decodebin.connect("autoplug-select", false, move |args| {
        let caps = args.get(2).and_then(|a| a.get::<gst::Caps>().ok());
        let factory = args
            .get(3)
            .and_then(|a| a.get::<gst::ElementFactory>().ok());
        answer(caps.zip(factory).is_some_and(|(c, f)| passed_over(&f, &c)))
    });
}

/// Whether `factory` is a hardware decoder and a software decoder of
/// primary rank takes `caps` too.
fn passed_over(factory: &gst::ElementFactory, caps: &gst::Caps) -> bool {
    let hardware = |f: &gst::ElementFactory| {
        f.metadata(gst::ELEMENT_METADATA_KLASS)
            .is_some_and(|k| k.contains("Decoder") && k.contains("Hardware"))
    };
    hardware(factory)
        && gst::ElementFactory::factories_with_type(
            gst::ElementFactoryType::DECODER | gst::ElementFactoryType::MEDIA_VIDEO,
            gst::Rank::PRIMARY,
        )
        .into_iter()
        .any(|f| !hardware(&f) && f.can_sink_all_caps(caps))
}

/// Frames decoded to see every window of frames `(first, last)`: each from
/// the keyframe at or before its first (`keyframes` in order).
fn frames_to_decode(windows: &[(usize, usize)], keyframes: &[u64]) -> u64 {
    windows
        .iter()
        .map(|&(a, b)| {
            let key = keyframes[..keyframes.partition_point(|&k| k <= a as u64)]
                .last()
                .copied()
                .unwrap_or(0);
            (b as u64 + 1).saturating_sub(key)
        })
        .sum()
}

/// The name of the video decoder's factory in `pipe`, if it has one.
fn video_decoder(pipe: &gst::Pipeline) -> Option<String> {
    pipe.iterate_recurse()
        .into_iter()
        .filter_map(|e| e.ok())
        .filter_map(|e| e.factory())
        .find(|f| {
            f.metadata(gst::ELEMENT_METADATA_KLASS)
                .is_some_and(|k| k.contains("Decoder/Video"))
        })
        .map(|f| f.name().to_string())
}

/// A decoded 4:2:0 frame's luma, subsampled to at most [`CUT_WIDTH`] wide.
fn luma(sample: &gst::Sample, buffer: &gst::BufferRef) -> Result<Plane<u8>> {
    let bad = || Error::Pipeline("cannot read a decoded frame".into());
    let info = sample
        .caps()
        .and_then(|c| gstreamer_video::VideoInfo::from_caps(c).ok())
        .ok_or_else(bad)?;
    let frame = gstreamer_video::VideoFrameRef::from_buffer_ref_readable(buffer, &info)
        .map_err(|_| bad())?;
    let (w, h) = (info.width() as usize, info.height() as usize);
    let stride = frame.plane_stride()[0] as usize;
    let data = frame.plane_data(0).map_err(|_| bad())?;
    let step = w.div_ceil(CUT_WIDTH).max(1);
    let (sw, sh) = (w.div_ceil(step), h.div_ceil(step));
    let mut out = Vec::with_capacity(sw * sh);
    for y in (0..h).step_by(step) {
        let row = &data[y * stride..y * stride + w];
        out.extend(row.iter().step_by(step));
    }
    Plane::from_vec(sw, sh, out)
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

    /// A decoder element that only says what it is (never run): hardware,
    /// for H.264 and for a codec no software decoder takes.
    mod fake_hardware {
        use gstreamer::glib;
        use gstreamer::subclass::prelude::*;

        glib::wrapper! {
            pub struct Decoder(ObjectSubclass<imp::Decoder>) @extends gstreamer::Element, gstreamer::Object;
        }

        mod imp {
            use super::*;

            #[derive(Default)]
            pub struct Decoder;

            #[glib::object_subclass]
            impl ObjectSubclass for Decoder {
                const NAME: &'static str = "SeamstreamTestHardwareDecoder";
                type Type = super::Decoder;
                type ParentType = gstreamer::Element;
            }
            impl ObjectImpl for Decoder {}
            impl GstObjectImpl for Decoder {}
            impl ElementImpl for Decoder {
                fn metadata() -> Option<&'static gstreamer::subclass::ElementMetadata> {
                    static M: std::sync::OnceLock<gstreamer::subclass::ElementMetadata> =
                        std::sync::OnceLock::new();
                    Some(M.get_or_init(|| {
                        gstreamer::subclass::ElementMetadata::new(
                            "test decoder",
                            "Codec/Decoder/Video/Hardware",
                            "says it decodes",
                            "seamstream tests",
                        )
                    }))
                }
                fn pad_templates() -> &'static [gstreamer::PadTemplate] {
                    static T: std::sync::OnceLock<Vec<gstreamer::PadTemplate>> =
                        std::sync::OnceLock::new();
                    T.get_or_init(|| {
                        let sink: gstreamer::Caps =
                            "video/x-h264; video/x-seamstream-test".parse().unwrap();
                        let src: gstreamer::Caps = "video/x-raw".parse().unwrap();
                        vec![
                            gstreamer::PadTemplate::new(
                                "sink",
                                gstreamer::PadDirection::Sink,
                                gstreamer::PadPresence::Always,
                                &sink,
                            )
                            .unwrap(),
                            gstreamer::PadTemplate::new(
                                "src",
                                gstreamer::PadDirection::Src,
                                gstreamer::PadPresence::Always,
                                &src,
                            )
                            .unwrap(),
                        ]
                    })
                }
            }
        }
    }

    #[test]
    fn the_cut_search_passes_over_hardware_decoders_where_software_ones_take_the_stream() {
        gst::init().unwrap();
        gst::Element::register(
            None,
            "seamstreamtesthwdec",
            gst::Rank::PRIMARY + 10,
            fake_hardware::Decoder::static_type(),
        )
        .unwrap();
        let hardware = gst::ElementFactory::find("seamstreamtesthwdec").unwrap();
        let h264: gst::Caps = "video/x-h264,stream-format=byte-stream,alignment=au"
            .parse()
            .unwrap();
        // avdec_h264 is of primary rank; openh264dec, marginal, is not
        // enough.
        let avdec = gst::ElementFactory::find("avdec_h264").is_some();
        assert_eq!(passed_over(&hardware, &h264), avdec);
        // No software decoder for it: the hardware one is kept.
        let own: gst::Caps = "video/x-seamstream-test".parse().unwrap();
        assert!(!passed_over(&hardware, &own));
        // A software decoder is never passed over.
        if let Some(avdec) = gst::ElementFactory::find("avdec_h264") {
            assert!(!passed_over(&avdec, &h264));
        }
    }

    #[test]
    fn a_window_is_decoded_from_the_keyframe_before_it() {
        let keyframes = [0, 250, 289, 539];
        // From 289 to 350, then from 250 (the window starts at 260).
        assert_eq!(
            frames_to_decode(&[(300, 350), (260, 270)], &keyframes),
            62 + 21
        );
        // Starting on a keyframe.
        assert_eq!(frames_to_decode(&[(289, 289)], &keyframes), 1);
        // None listed: from the first frame.
        assert_eq!(frames_to_decode(&[(5, 9)], &[]), 10);
    }

    /// A part of frames 10.. after `warmup` warm-up frames, presented at
    /// `times` (ms), without a clock (a variable rate).
    fn span(times: &[u64], warmup: u64, frames: u64) -> Span {
        Span {
            segment: Segment { index: 1, count: 3 },
            range: 10..10 + frames,
            total: 100,
            warmup,
            at_cut: false,
            at_keyframe: false,
            counting: Duration::ZERO,
            cut_search: None,
            clock: None,
            rate: gst::Fraction::new(0, 1),
            tag: PartTag::default(),
            pts: times
                .iter()
                .map(|&t| gst::ClockTime::from_mseconds(t))
                .collect(),
        }
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
