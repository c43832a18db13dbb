//! `seamstream join OUT PART... [--audio-from IN]`: the parts of a job split
//! in time ([`super::parts`]), laid end to end without re-encoding, with the
//! source's audio muxed once beside them, as ffmpeg's concat demuxer and
//! Av1an's final mux do.
//!
//! Before anything is written, every part is read ([`super::probe`]): each
//! carries the tag `run --segment` wrote into it ([`parts::PartTag`]: its
//! number, its frames, the source's size and the job's options), so the
//! parts are put in their own order, and a file that is no part, a missing
//! or incomplete part, or a part of another job is refused by name. With
//! the source given, the parts must hold exactly its frames. Then each
//! part's coded frames are read in turn (`filesrc ! parsebin`) and pushed
//! into one muxer, each part's timestamps moved to where it starts. With
//! the source, that is where the job placed the part's first frame
//! ([`parts::frame_time`]: on the source's caps rate, or at the frame's own
//! time); without it, where the part before ends (its last frame lasts
//! until the next part's first, where the container keeps durations:
//! Matroska without a frame rate does not, and a part's mean frame interval
//! stands in). A part whose video differs from the first's (codec, size,
//! rate, encoder settings) is refused by name. The audio goes through the
//! same [`Bridge`] as `run`'s: copied when the container takes it, else
//! re-encoded once.
//!
//! The output is written beside the target and replaces it only when the
//! join is complete ([`OutFile`]); the parts are never touched.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;

use super::audio::{Bridge, ENCODED_AUDIO, StreamReport};
use super::outfile::{Ending, Kept, OutFile};
use super::{Container, DECODER, Output, parts, probe};
use crate::error::{Error, GstCause, Result};

/// How long a part's reader may stay silent before the join is called stuck.
const STALL: Duration = Duration::from_secs(30);

/// Coded video that `uridecodebin` leaves undecoded in the audio source
/// (its video is not needed).
const CODED_VIDEO: &str = "video/x-h264; video/x-h265; video/x-vp8; video/x-vp9; video/x-av1; \
     video/mpeg; video/x-raw(ANY); image/jpeg; text/x-raw(ANY); subpicture/x-dvd; \
     subpicture/x-dvb; subpicture/x-pgs";

/// What a join did.
#[derive(Clone, Debug, Default)]
pub struct JoinSummary {
    /// Frames of each part, in order.
    pub part_frames: Vec<u64>,
    /// Set when the parts were given out of order: the order they were
    /// joined in, as the parts' own numbers say.
    pub reordered: Option<Vec<u32>>,
    /// The joined video's length.
    pub duration: gst::ClockTime,
    pub seconds: f64,
    pub streams: Vec<StreamReport>,
    pub kept: Option<Kept>,
}

impl JoinSummary {
    pub fn frames(&self) -> u64 {
        self.part_frames.iter().sum()
    }
}

/// Joins `parts` into `out`. With `source` (the file the parts were cut
/// from) the parts must add up to its frames and go where the job placed
/// them, and with `audio` its audio is muxed in.
pub fn join(
    out: &Path,
    parts: &[PathBuf],
    source: Option<&Path>,
    audio: bool,
) -> Result<JoinSummary> {
    let audio_from = source.filter(|_| audio);
    gst::init().map_err(|e| crate::gst::gst_call("GStreamer did not start", e))?;
    let container = match Output::parse(&out.to_string_lossy())? {
        Output::File { container, .. } if container != Container::Y4m => container,
        _ => {
            return Err(Error::Write {
                path: out.into(),
                reason:
                    "join writes .mp4, .mkv or .webm (y4m parts are raw frames: join them with \
                         `cat`); name the output with one of those"
                        .into(),
            });
        }
    };
    if parts.is_empty() {
        return Err(Error::BadArgument {
            flag: "join",
            value: String::new(),
            reason: "no parts given; list them in order, e.g. `seamstream join out.mp4 parts/part-*.mp4 --audio-from in.mp4`".into(),
        });
    }
    for (i, p) in parts.iter().enumerate() {
        if let Some(q) = parts[..i].iter().find(|q| super::outfile::same_file(p, q)) {
            return Err(Error::BadArgument {
                flag: "join",
                value: p.display().to_string(),
                reason: format!(
                    "it is given twice (also as `{}`); each part once, in order",
                    q.display()
                ),
            });
        }
    }
    if let Some(src) = source
        && !src.is_file()
    {
        return Err(Error::Read {
            path: src.into(),
            reason: if src.exists() {
                "it is not a regular file; give the source file the parts were made from".into()
            } else {
                "no such file; give the source file the parts were made from".into()
            },
        });
    }
    let start = Instant::now();
    // Read first: nothing is written for parts that are not one job's,
    // whole and complete. They are joined in their own order.
    let mut streams = Vec::with_capacity(parts.len());
    for p in parts {
        streams.push(probe::video_stream(p)?);
    }
    // The container must take the parts' codec, as they are copied.
    if let Some(name) = streams
        .first()
        .and_then(|s| s.caps.as_ref())
        .and_then(|c| c.structure(0))
        .map(|s| s.name().to_string())
        && super::encode::muxer_takes(container, &name).is_none()
    {
        let takes: Vec<String> = [Container::Mp4, Container::Mkv, Container::Webm]
            .into_iter()
            .filter(|&c| super::encode::muxer_takes(c, &name).is_some())
            .map(|c| format!(".{}", c.extension()))
            .collect();
        return Err(Error::Write {
            path: out.into(),
            reason: format!(
                "a .{} file cannot hold the parts' video ({name}), which the join copies as it is; name the output {}",
                container.extension(),
                takes.join(" or ")
            ),
        });
    }
    let order = check_parts(parts, &streams, source)?;
    let reordered = order.windows(2).any(|w| w[0] > w[1]).then(|| {
        order
            .iter()
            .map(|&i| parts::PartTag::of(&streams[i]).map_or(0, |t| t.index))
            .collect()
    });
    let parts: Vec<PathBuf> = order.iter().map(|&i| parts[i].clone()).collect();
    let parts = parts.as_slice();
    let part_frames: Vec<u64> = order
        .iter()
        .map(|&i| streams[i].frames.len() as u64)
        .collect();
    let mut base = gst::ClockTime::ZERO;
    let mut starts = None;
    if let Some(src) = source {
        let stream = probe::video_stream(src)?;
        let source = &stream.frames;
        let total: u64 = part_frames.iter().sum();
        if total != source.len() as u64 {
            let counts: Vec<String> = parts
                .iter()
                .zip(&part_frames)
                .map(|(p, n)| format!("{}: {n}", p.display()))
                .collect();
            return Err(Error::Pipeline(format!(
                "the parts hold {total} frames, but `{}` has {}: a part is missing, incomplete or from another job ({}); rerun the part that is short (`seamstream run IN PART --segment K/N`) and join again",
                src.display(),
                source.len(),
                counts.join(", ")
            )));
        }
        // The source's first frame's running time, which `run` keeps (its
        // time less the demuxer's segment start), so that the video keeps
        // its place beside the audio.
        if let Some(first) = source.first() {
            base = running_start(src, first.pts)?;
        }
        // Each part's first frame's place on the job's timeline.
        let mut first = 0;
        let mut at = Vec::with_capacity(parts.len());
        for n in &part_frames {
            at.push(parts::frame_time(&stream, first));
            first += n;
        }
        starts = Some(at);
    }
    let inputs: Vec<&Path> = parts.iter().map(|p| p.as_path()).chain(source).collect();
    let file = OutFile::open(out, container, None)?;
    if let Some(p) = inputs.iter().find(|p| super::outfile::same_file(p, out)) {
        let _ = file.close(Ending::Empty);
        return Err(Error::Write {
            path: out.into(),
            reason: format!(
                "that is an input (`{}`); give another output name",
                p.display()
            ),
        });
    }
    let bridge = Bridge::new(match (source, audio) {
        (None, _) => Some("no --audio-from".to_string()),
        (Some(_), false) => Some("--no-audio".to_string()),
        (Some(_), true) => None,
    });
    let placed = Placed { base, starts };
    let first_caps = streams[order[0]]
        .caps
        .clone()
        .ok_or_else(|| part_error(&parts[0], "its video has no caps".into()))?;
    let result = write(
        &file,
        (container, &first_caps),
        parts,
        audio_from,
        &placed,
        &bridge,
    );
    let result = result.map_err(|e| match e {
        Error::Gst {
            cause: GstCause::NoSpaceLeft,
            ..
        } => Error::Write {
            path: out.into(),
            reason: format!(
                "the disk is full ({e}); nothing was kept, and the parts are as they were: free some space and join again"
            ),
        },
        e => e,
    });
    // A failed join leaves nothing: every frame is still in the parts.
    let ending = match &result {
        Ok(_) => Ending::Complete,
        Err(_) => Ending::Empty,
    };
    let kept = file.close(ending)?;
    let duration = result?;
    Ok(JoinSummary {
        part_frames,
        reordered,
        duration,
        seconds: start.elapsed().as_secs_f64(),
        streams: bridge.reports(),
        kept: Some(kept),
    })
}

/// Checks that `parts` (read into `streams`) are the whole of one job and
/// complete, by the tags `run --segment` wrote into them, and that `source`
/// (if given) is the file they were cut from; returns the order to join
/// them in (by their numbers).
fn check_parts(
    parts: &[PathBuf],
    streams: &[probe::VideoStream],
    source: Option<&Path>,
) -> Result<Vec<usize>> {
    let refuse = |reason: String| Error::Pipeline(reason);
    let mut tags = Vec::with_capacity(parts.len());
    for (p, s) in parts.iter().zip(streams) {
        match parts::PartTag::of(s) {
            Some(t) => tags.push(t),
            None => {
                return Err(refuse(format!(
                    "`{}` is not a part of a split job: it carries no part tag (parts are written by `seamstream run IN PART --segment K/N`, or by `run --gpus`/`--workers`)",
                    p.display()
                )));
            }
        }
    }
    let first = &tags[0];
    for (p, t) in parts.iter().zip(&tags).skip(1) {
        let differs = if t.count != first.count {
            Some(format!(
                "it is part {}/{}, not of {}",
                t.index, t.count, first.count
            ))
        } else if t.source.bytes != first.source.bytes || t.total != first.total {
            Some(format!(
                "it was cut from another file ({} frames, {} bytes, against {} frames, {} bytes)",
                t.total, t.source.bytes, first.total, first.source.bytes
            ))
        } else if t.job != first.job {
            Some(format!(
                "it was made with other options ({} against {})",
                t.job, first.job
            ))
        } else {
            None
        };
        if let Some(why) = differs {
            return Err(refuse(format!(
                "`{}` is not of the same job as `{}`: {why}; join the parts of one job",
                p.display(),
                parts[0].display()
            )));
        }
    }
    let mut order: Vec<usize> = (0..parts.len()).collect();
    order.sort_by_key(|&i| tags[i].index);
    for w in order.windows(2) {
        if tags[w[0]].index == tags[w[1]].index {
            return Err(refuse(format!(
                "`{}` and `{}` are both part {}/{}; give each part once",
                parts[w[0]].display(),
                parts[w[1]].display(),
                tags[w[0]].index,
                first.count
            )));
        }
    }
    let given: Vec<u32> = order.iter().map(|&i| tags[i].index).collect();
    if let Some(missing) = (0..first.count).find(|k| !given.contains(k)) {
        return Err(refuse(format!(
            "part {missing}/{} is missing (given: {}); make it with `seamstream run IN PART --segment {missing}/{}` and join again",
            first.count,
            given
                .iter()
                .map(u32::to_string)
                .collect::<Vec<_>>()
                .join(", "),
            first.count
        )));
    }
    // A part ends where the next starts: a boundary near a scene cut moves
    // to it as the parts run, so the part before it may say the end it
    // planned, while the part after it says where it started.
    for (k, &i) in order.iter().enumerate() {
        let (p, t) = (&parts[i], &tags[i]);
        let end = order.get(k + 1).map_or(t.total, |&n| tags[n].start);
        let have = streams[i].frames.len() as u64;
        if end <= t.start {
            return Err(refuse(format!(
                "`{}` (part {}/{}) starts at frame {}, and the next part at frame {end}: the parts overlap; make them again with one `seamstream run IN PART --segment K/{}` each",
                p.display(),
                t.index,
                t.count,
                t.start,
                t.count
            )));
        }
        if have != end - t.start {
            return Err(refuse(format!(
                "`{}` (part {}/{}) holds {have} of its {} frames: it is incomplete; make it again with `seamstream run IN PART --segment {}/{}`",
                p.display(),
                t.index,
                t.count,
                end - t.start,
                t.index,
                t.count
            )));
        }
    }
    if let Some(src) = source {
        let bytes = super::parts::SourceId::of(src).bytes;
        if bytes != first.source.bytes {
            return Err(refuse(format!(
                "the parts were cut from a file of {} bytes, and `{}` has {bytes}: give the source they were made from",
                first.source.bytes,
                src.display()
            )));
        }
    }
    Ok(order)
}

/// Where the parts go: the first from `base`, and, known from the source,
/// each one's start after `base`.
struct Placed {
    base: gst::ClockTime,
    starts: Option<Vec<Option<gst::ClockTime>>>,
}

impl Placed {
    /// Where part `k` starts, given where the part before it ended.
    fn start(&self, k: usize, after: gst::ClockTime) -> gst::ClockTime {
        match self
            .starts
            .as_ref()
            .and_then(|s| s.get(k).copied().flatten())
        {
            Some(t) => self.base + t,
            None => after,
        }
    }
}

/// Writes the joined file at `file`'s location; returns the video's length.
fn write(
    file: &OutFile,
    (container, first_caps): (Container, &gst::Caps),
    parts: &[PathBuf],
    audio_from: Option<&Path>,
    placed: &Placed,
    bridge: &Bridge,
) -> Result<gst::ClockTime> {
    let location = file.location().to_string_lossy().replace('"', "\\\"");
    // The codec's parser before the muxer: parsebin gives H.264 as
    // byte-stream or avc depending on the decoders installed, and MP4 takes
    // only avc (the parser converts).
    let parser = match first_caps.structure(0).map(|s| s.name().to_string()) {
        Some(n) if n == "video/x-h264" => "h264parse",
        Some(n) if n == "video/x-h265" => "h265parse",
        Some(n) if n == "video/x-vp9" => "vp9parse",
        Some(n) if n == "video/x-av1" => "av1parse",
        _ => "identity",
    };
    let description = format!(
        "{} ! filesink location=\"{location}\" appsrc name=join_video format=time block=true max-bytes=8000000 ! queue ! {parser} ! seamstream_mux.video_0",
        container.muxer_launch()
    );
    let pipe = gst::parse::launch(&description)
        .map_err(|e| crate::gst::gst_call("cannot build the join", e))?
        .downcast::<gst::Pipeline>()
        .map_err(|_| Error::Pipeline("the join is not a pipeline".into()))?;
    let src = pipe
        .by_name("join_video")
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Error::Pipeline("the join has no appsrc".into()))?;
    let audio = match audio_from {
        Some(path) => Some(audio_source(path, bridge)?),
        None => None,
    };
    let result = (|| {
        // The source's streams are known before the muxer starts, so that
        // it gets a pad for each audio stream.
        if let Some((a, known)) = &audio {
            a.set_state(gst::State::Playing)
                .map_err(|_| Error::Pipeline("the audio source would not start".into()))?;
            let since = Instant::now();
            while !known.load(Ordering::Acquire) {
                if let Some(e) = bus_error(a) {
                    return Err(e);
                }
                if since.elapsed() > STALL {
                    return Err(Error::Pipeline(
                        "the source's streams did not show in time".into(),
                    ));
                }
                std::thread::sleep(Duration::from_millis(10));
            }
        }
        bridge.connect_output(&pipe, container)?;
        pipe.set_state(gst::State::Playing)
            .map_err(|_| Error::Pipeline("the join's muxer would not start".into()))?;
        let end = feed(&src, parts, placed, &pipe)?;
        let _ = src.end_of_stream();
        wait_eos(&pipe, audio.as_ref().map(|(a, _)| a), file.location())?;
        Ok(end.saturating_sub(placed.base))
    })();
    if result.is_err() {
        bridge.close();
    }
    if let Some((a, _)) = &audio {
        let _ = a.set_state(gst::State::Null);
    }
    let _ = pipe.set_state(gst::State::Null);
    result
}

/// Pushes every part's coded frames into `src`, each part's times moved to
/// where `placed` puts it; returns where the last part ends.
fn feed(
    src: &gst_app::AppSrc,
    parts: &[PathBuf],
    placed: &Placed,
    pipe: &gst::Pipeline,
) -> Result<gst::ClockTime> {
    let mut end = placed.base;
    // The first part's caps, which every other part must match.
    let mut caps: Option<gst::Caps> = None;
    for (k, part) in parts.iter().enumerate() {
        let reader = read_part(part)?;
        let offset = placed.start(k, end);
        let mut first_pts: Option<gst::ClockTime> = None;
        // The part's first and last frames (time, duration) and its frame
        // count, for where it ends.
        let (mut earliest, mut latest) = (None, None);
        let mut frames = 0u64;
        let mut checked = false;
        while let Some(sample) = reader.next(part, || bus_error(pipe))? {
            if !checked {
                let got = sample
                    .caps_owned()
                    .ok_or_else(|| part_error(part, "its video has no caps".into()))?;
                let want = caps.get_or_insert_with(|| {
                    src.set_caps(Some(&got));
                    got.clone()
                });
                if let Some(why) = mismatch(want, &got) {
                    return Err(part_error(
                        part,
                        format!(
                            "it does not fit the first part ({why}); every part must come from one job, with the same options"
                        ),
                    ));
                }
                checked = true;
            }
            let Some(buffer) = sample.buffer() else {
                continue;
            };
            let Some(pts) = buffer.pts() else {
                return Err(part_error(part, "a frame has no presentation time".into()));
            };
            // A part starts at its first keyframe, the first frame read
            // (stamped 0 by `run --segment`).
            let zero = *first_pts.get_or_insert(pts);
            let pts = offset + pts.saturating_sub(zero);
            let mut b = buffer.copy();
            {
                let b = b.make_mut();
                b.set_pts(pts);
                b.set_dts(buffer.dts().and_then(|d| (offset + d).checked_sub(zero)));
                b.set_offset(u64::MAX);
                b.set_offset_end(u64::MAX);
            }
            // A duration of under a microsecond is none: h264parse stamps
            // 1 ns where x264 was given no frame rate.
            let duration = buffer
                .duration()
                .filter(|d| *d >= gst::ClockTime::from_useconds(1));
            earliest = Some(earliest.map_or(pts, |e: gst::ClockTime| e.min(pts)));
            if latest.is_none_or(|(l, _)| pts > l) {
                latest = Some((pts, duration));
            }
            frames += 1;
            src.push_buffer(b).map_err(|e| {
                // The muxer's own error, where it gave one (a full disk).
                bus_error(pipe).unwrap_or_else(|| {
                    Error::Pipeline(format!(
                        "the muxer stopped taking frames ({e:?}) during `{}`",
                        part.display()
                    ))
                })
            })?;
        }
        // A last frame without a duration lasts the part's mean interval.
        if let (Some(first), Some((last, duration))) = (earliest, latest) {
            let mean = (last - first) / frames.saturating_sub(1).max(1);
            end = last + duration.unwrap_or(mean);
        }
    }
    Ok(end)
}

/// The first frame of `path`'s video, as parsebin gives it (`None`: it has
/// none).
fn first_sample(path: &Path) -> Result<Option<gst::Sample>> {
    read_part(path)?.next(path, || None)
}

/// The running time of `pts` in the file's video stream, as a plain
/// reading of the file sees it.
fn running_start(path: &Path, pts: gst::ClockTime) -> Result<gst::ClockTime> {
    Ok(first_sample(path)?
        .and_then(|s| super::running_time(&s, Some(pts)))
        .unwrap_or(pts))
}

/// The first error on the pipeline's bus.
fn bus_error(pipe: &gst::Pipeline) -> Option<Error> {
    let msg = pipe.bus()?.pop_filtered(&[gst::MessageType::Error])?;
    match msg.view() {
        gst::MessageView::Error(e) => Some(super::run::element_error(e)),
        _ => None,
    }
}

/// Why caps `got` differ from the first part's `want`, if they do. The
/// frame rate is not compared: a container guesses it from the part's own
/// frame times (qtdemux does), so the parts of a file whose rate changes
/// give different ones; every frame is placed by its time, and the parts'
/// encoders were given the job's rate.
fn mismatch(want: &gst::Caps, got: &gst::Caps) -> Option<String> {
    let (Some(w), Some(g)) = (want.structure(0), got.structure(0)) else {
        return Some("no caps".into());
    };
    if w.name() != g.name() {
        return Some(format!("codec {} against {}", g.name(), w.name()));
    }
    let field = |s: &gst::StructureRef, k: &str| {
        s.value(k)
            .ok()
            .and_then(|v| v.serialize().ok())
            .map(|v| v.to_string())
    };
    for (key, what) in [
        ("width", "width"),
        ("height", "height"),
        ("pixel-aspect-ratio", "pixel aspect ratio"),
        ("stream-format", "stream format"),
        ("profile", "profile"),
        ("codec_data", "encoder settings (codec data)"),
    ] {
        let (a, b) = (field(w, key), field(g, key));
        if a != b {
            let show = |v: Option<String>| match v {
                Some(v) if v.len() <= 24 => v,
                Some(_) => "other".into(),
                None => "none".into(),
            };
            return Some(format!("{what} {} against {}", show(b), show(a)));
        }
    }
    None
}

fn part_error(part: &Path, reason: String) -> Error {
    Error::Read {
        path: part.into(),
        reason,
    }
}

/// A part's reader: its coded video frames come out of `sink`.
struct Reader {
    pipe: gst::Pipeline,
    sink: gst_app::AppSink,
    /// Tells a part whose reading ended with nothing posted.
    end_watch: crate::gst::EndWatch,
}

impl Reader {
    /// The next coded frame of `part`, or `None` at its end; fails on the
    /// reader's error, on `stop`'s (checked between waits), or when
    /// nothing comes out for STALL.
    fn next(&self, part: &Path, stop: impl Fn() -> Option<Error>) -> Result<Option<gst::Sample>> {
        let since = Instant::now();
        loop {
            if let Some(e) = stop() {
                return Err(e);
            }
            if let Some(sample) = self
                .sink
                .try_pull_sample(gst::ClockTime::from_mseconds(100))
            {
                return Ok(Some(sample));
            }
            let silent = self.end_watch.silent(self.pipe.upcast_ref());
            if self.sink.is_eos() {
                return Ok(None);
            }
            if let Some(e) = self.error() {
                return Err(part_error(part, e));
            }
            if silent {
                return Err(part_error(
                    part,
                    "its reading stopped with no end and no error (is it a complete part?)".into(),
                ));
            }
            if since.elapsed() > STALL {
                return Err(part_error(
                    part,
                    format!("nothing came out of it in {} s", STALL.as_secs()),
                ));
            }
        }
    }

    fn error(&self) -> Option<String> {
        let msg = self.pipe.bus()?.pop_filtered(&[gst::MessageType::Error])?;
        match msg.view() {
            gst::MessageView::Error(e) => Some(format!("{} (is it a complete part?)", e.error())),
            _ => None,
        }
    }
}

impl Drop for Reader {
    fn drop(&mut self) {
        let _ = self.pipe.set_state(gst::State::Null);
    }
}

/// Starts reading `part`'s coded video (its first video stream).
fn read_part(part: &Path) -> Result<Reader> {
    if !part.is_file() {
        return Err(part_error(part, "there is no such file".into()));
    }
    let pipe = gst::Pipeline::new();
    let src = super::element("filesrc")?;
    src.set_property("location", part.to_string_lossy().as_ref());
    let parse = super::element("parsebin")?;
    let sink = gst_app::AppSink::builder()
        .sync(false)
        .max_buffers(16)
        .build();
    pipe.add_many([&src, &parse, sink.upcast_ref()])
        .and_then(|()| src.link(&parse))
        .map_err(|e| crate::gst::gst_call("cannot read the part", e))?;
    let video_in = sink.static_pad("sink").expect("an appsink has a sink pad");
    super::route_first_video(&pipe, &parse, video_in);
    pipe.set_state(gst::State::Playing)
        .map_err(|_| part_error(part, "GStreamer could not start reading it".into()))?;
    Ok(Reader {
        pipe,
        sink,
        end_watch: Default::default(),
    })
}

/// The source's audio, read undecoded into `bridge` (its video is left
/// coded and dropped), and a flag set once all its streams are known.
fn audio_source(path: &Path, bridge: &Bridge) -> Result<(gst::Pipeline, Arc<AtomicBool>)> {
    let uri = gst::glib::filename_to_uri(
        std::fs::canonicalize(path).map_err(|e| part_error(path, e.to_string()))?,
        None,
    )
    .map_err(|e| part_error(path, e.to_string()))?;
    let caps = format!("audio/x-raw(ANY); {ENCODED_AUDIO}; {CODED_VIDEO}");
    let decoder = gst::ElementFactory::make("uridecodebin")
        .name(DECODER)
        .property("uri", uri.as_str())
        .property(
            "caps",
            caps.parse::<gst::Caps>()
                .map_err(|e| crate::gst::gst_call("bad audio caps", e))?,
        )
        .build()
        .map_err(|_| Error::Pipeline("GStreamer has no `uridecodebin` element".into()))?;
    let pipe = gst::Pipeline::new();
    pipe.add(&decoder).map_err(|e| {
        Error::Pipeline(format!(
            "cannot read the audio of `{}`: {e}",
            path.display()
        ))
    })?;
    bridge.attach(&pipe, &decoder);
    let known = Arc::new(AtomicBool::new(false));
    let flag = known.clone();
    decoder.connect_no_more_pads(move |_| flag.store(true, Ordering::Release));
    // Whatever is not audio goes nowhere, without holding the demuxer back.
    let weak = pipe.downgrade();
    decoder.connect_pad_added(move |_, pad| {
        let is_audio = pad
            .current_caps()
            .and_then(|c| c.structure(0).map(|s| s.name().starts_with("audio/")))
            .unwrap_or(false);
        if !is_audio && let Some(pipe) = weak.upgrade() {
            super::discard_pad(&pipe, pad);
        }
    });
    Ok((pipe, known))
}

/// Waits for the muxer's EOS (the file finished), failing on an error of
/// either pipeline.
fn wait_eos(pipe: &gst::Pipeline, audio: Option<&gst::Pipeline>, location: &Path) -> Result<()> {
    let bus = pipe.bus().expect("a pipeline has a bus");
    // The file growing is the muxer's progress (the source's audio may
    // still be coming); STALL without either is a stuck join.
    let size = || std::fs::metadata(location).map_or(0, |m| m.len());
    let (mut written, mut since) = (size(), Instant::now());
    loop {
        let now = size();
        if now != written {
            (written, since) = (now, Instant::now());
        } else if since.elapsed() > STALL {
            return Err(Error::Pipeline(format!(
                "the muxer neither finished `{}` nor wrote to it in {} s",
                location.display(),
                STALL.as_secs()
            )));
        }
        if let Some(msg) = bus.timed_pop_filtered(
            gst::ClockTime::from_mseconds(100),
            &[gst::MessageType::Error, gst::MessageType::Eos],
        ) {
            match msg.view() {
                gst::MessageView::Eos(_) => return Ok(()),
                gst::MessageView::Error(e) => return Err(super::run::element_error(e)),
                _ => {}
            }
        }
        if let Some(a) = audio
            && let Some(msg) = a
                .bus()
                .and_then(|b| b.pop_filtered(&[gst::MessageType::Error]))
            && let gst::MessageView::Error(e) = msg.view()
        {
            return Err(Error::Pipeline(format!(
                "reading the source's audio: {}",
                e.error()
            )));
        }
    }
}
