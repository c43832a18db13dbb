//! A video track's frames read from an MP4 or QuickTime file's index (its
//! `moov` box: the sample table), without reading a sample: the times and
//! keyframes [`super`] would otherwise get by demuxing and parsing
//! every frame. Reading the index costs milliseconds however long the file
//! is; parsing it all took 0.2 s for 3.5 minutes of 720p and 2.3 s for an
//! hour, four processes at once (bench/results/segments.md).
//!
//! Only a plain file is read this way: one video track, not fragmented, at
//! most one edit that shows every frame, every sample inside the file.
//! Anything else gives `None`, and the caller parses the file as before;
//! so where this answers, it answers as qtdemux would: a frame's time is
//! `(decode time + composition offset + shift) · 10⁹ / timescale`, rounded
//! down, the shift lifting negative composition offsets to 0, and the
//! keyframes are the sync samples (`stss`; all frames without one).

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use gstreamer as gst;

use super::CodedFrame;

/// The largest `moov` read (a sample table of hours of video is a few MB).
const MAX_MOOV: u64 = 256 << 20;

/// The frames of the file's one video track, in presentation order, from
/// its index; `None` where the file is not a plain MP4 that this reads.
pub fn video_frames(path: &Path) -> Option<Vec<CodedFrame>> {
    let mut file = File::open(path).ok()?;
    let length = file.metadata().ok()?.len();
    let moov = read_moov(&mut file, length)?;
    let (movie_timescale, tracks) = parse_moov(&moov)?;
    let mut video = tracks.into_iter().filter(|t| t.handler == *b"vide");
    let track = video.next()?;
    if video.next().is_some() {
        return None;
    }
    track.frames(movie_timescale, length)
}

/// The `moov` box's body; `None` for a fragmented file (`moof`), or one
/// without a `moov`.
fn read_moov(file: &mut File, length: u64) -> Option<Vec<u8>> {
    let mut at = 0u64;
    let mut moov = None;
    while at + 8 <= length {
        file.seek(SeekFrom::Start(at)).ok()?;
        let mut head = [0u8; 16];
        file.read_exact(&mut head[..8]).ok()?;
        let size32 = u32::from_be_bytes(head[..4].try_into().ok()?);
        let kind: [u8; 4] = head[4..8].try_into().ok()?;
        let (size, header) = match size32 {
            0 => (length - at, 8),
            1 => {
                file.read_exact(&mut head[8..16]).ok()?;
                (u64::from_be_bytes(head[8..16].try_into().ok()?), 16)
            }
            n => (u64::from(n), 8),
        };
        if size < header || at + size > length {
            return None;
        }
        match &kind {
            b"moof" => return None,
            b"moov" if moov.is_none() => {
                let body = size - header;
                if body > MAX_MOOV {
                    return None;
                }
                let mut bytes = vec![0u8; body as usize];
                file.read_exact(&mut bytes).ok()?;
                moov = Some(bytes);
            }
            _ => {}
        }
        at += size;
    }
    moov
}

/// The boxes in `bytes`, as (type, body).
fn boxes(mut bytes: &[u8]) -> impl Iterator<Item = ([u8; 4], &[u8])> {
    std::iter::from_fn(move || {
        if bytes.len() < 8 {
            return None;
        }
        let size32 = u32::from_be_bytes(bytes[..4].try_into().ok()?) as usize;
        let kind: [u8; 4] = bytes[4..8].try_into().ok()?;
        let (size, header) = match size32 {
            0 => (bytes.len(), 8),
            1 => (
                usize::try_from(u64::from_be_bytes(bytes.get(8..16)?.try_into().ok()?)).ok()?,
                16,
            ),
            n => (n, 8),
        };
        if size < header || size > bytes.len() {
            bytes = &[];
            return None;
        }
        let body = &bytes[header..size];
        bytes = &bytes[size..];
        Some((kind, body))
    })
}

fn child<'a>(bytes: &'a [u8], kind: &[u8; 4]) -> Option<&'a [u8]> {
    boxes(bytes).find(|(k, _)| k == kind).map(|(_, b)| b)
}

/// Big-endian readers over a box's body.
struct Cursor<'a>(&'a [u8]);

impl Cursor<'_> {
    fn take(&mut self, n: usize) -> Option<&[u8]> {
        let (head, rest) = (self.0.get(..n)?, self.0.get(n..)?);
        self.0 = rest;
        Some(head)
    }
    fn u8(&mut self) -> Option<u8> {
        Some(self.take(1)?[0])
    }
    fn u16(&mut self) -> Option<u16> {
        Some(u16::from_be_bytes(self.take(2)?.try_into().ok()?))
    }
    fn u32(&mut self) -> Option<u32> {
        Some(u32::from_be_bytes(self.take(4)?.try_into().ok()?))
    }
    fn u64(&mut self) -> Option<u64> {
        Some(u64::from_be_bytes(self.take(8)?.try_into().ok()?))
    }
    /// A full box's version, its flags skipped.
    fn version(&mut self) -> Option<u8> {
        let v = self.u8()?;
        self.take(3)?;
        Some(v)
    }
    /// An entry count, checked against the bytes left (`size` bytes each).
    fn count(&mut self, size: usize) -> Option<usize> {
        let n = self.u32()? as usize;
        (n.checked_mul(size)? <= self.0.len()).then_some(n)
    }
}

/// What a track's index says.
#[derive(Default)]
struct Track {
    handler: [u8; 4],
    timescale: u32,
    /// Edits: (duration in the movie's timescale, media time, rate ×65536).
    edits: Vec<(u64, i64, u32)>,
    /// Runs of decode-time steps: (samples, step).
    steps: Vec<(u32, u32)>,
    /// Runs of composition offsets: (samples, offset).
    offsets: Vec<(u32, i32)>,
    /// Sync samples, counted from 1; `None`: every sample is one.
    sync: Option<Vec<u32>>,
    sizes: Vec<u32>,
    /// Chunk runs: (first chunk from 1, samples a chunk).
    chunk_runs: Vec<(u32, u32)>,
    chunk_offsets: Vec<u64>,
    /// Boxes this does not read the way qtdemux would (`cslg`, `stz2`).
    unread: bool,
}

/// The movie's timescale and its tracks.
fn parse_moov(moov: &[u8]) -> Option<(u32, Vec<Track>)> {
    let mut movie_timescale = None;
    let mut tracks = Vec::new();
    for (kind, body) in boxes(moov) {
        match &kind {
            b"mvex" => return None,
            b"mvhd" => {
                let mut c = Cursor(body);
                let skip = if c.version()? == 1 { 16 } else { 8 };
                c.take(skip)?;
                movie_timescale = Some(c.u32()?);
            }
            b"trak" => tracks.push(parse_trak(body)?),
            _ => {}
        }
    }
    Some((movie_timescale?, tracks))
}

fn parse_trak(trak: &[u8]) -> Option<Track> {
    let mut t = Track::default();
    if let Some(elst) = child(trak, b"edts").and_then(|e| child(e, b"elst")) {
        let mut c = Cursor(elst);
        let long = c.version()? == 1;
        let n = c.count(if long { 20 } else { 12 })?;
        for _ in 0..n {
            let (duration, media_time) = if long {
                (c.u64()?, c.u64()? as i64)
            } else {
                (u64::from(c.u32()?), i64::from(c.u32()? as i32))
            };
            let rate = (u32::from(c.u16()?) << 16) | u32::from(c.u16()?);
            t.edits.push((duration, media_time, rate));
        }
    }
    let mdia = child(trak, b"mdia")?;
    let mut c = Cursor(child(mdia, b"mdhd")?);
    let skip = if c.version()? == 1 { 16 } else { 8 };
    c.take(skip)?;
    t.timescale = c.u32()?;
    let mut c = Cursor(child(mdia, b"hdlr")?);
    c.version()?;
    c.u32()?;
    t.handler = c.take(4)?.try_into().ok()?;
    if t.handler != *b"vide" {
        return Some(t);
    }
    let stbl = child(child(mdia, b"minf")?, b"stbl")?;
    for (kind, body) in boxes(stbl) {
        let mut c = Cursor(body);
        match &kind {
            b"stts" => {
                c.version()?;
                for _ in 0..c.count(8)? {
                    t.steps.push((c.u32()?, c.u32()?));
                }
            }
            b"ctts" => {
                c.version()?;
                for _ in 0..c.count(8)? {
                    t.offsets.push((c.u32()?, c.u32()? as i32));
                }
            }
            b"stss" => {
                c.version()?;
                let n = c.count(4)?;
                t.sync = Some((0..n).map(|_| c.u32()).collect::<Option<_>>()?);
            }
            b"stsz" => {
                c.version()?;
                let size = c.u32()?;
                let n = c.u32()? as usize;
                t.sizes = if size == 0 {
                    if n.checked_mul(4)? > c.0.len() {
                        return None;
                    }
                    (0..n).map(|_| c.u32()).collect::<Option<_>>()?
                } else {
                    vec![size; n]
                };
            }
            b"stsc" => {
                c.version()?;
                for _ in 0..c.count(12)? {
                    let (first, per_chunk) = (c.u32()?, c.u32()?);
                    c.u32()?;
                    t.chunk_runs.push((first, per_chunk));
                }
            }
            b"stco" => {
                c.version()?;
                for _ in 0..c.count(4)? {
                    t.chunk_offsets.push(u64::from(c.u32()?));
                }
            }
            b"co64" => {
                c.version()?;
                for _ in 0..c.count(8)? {
                    t.chunk_offsets.push(c.u64()?);
                }
            }
            b"cslg" | b"stz2" => t.unread = true,
            _ => {}
        }
    }
    Some(t)
}

impl Track {
    /// The frames in presentation order, if the track is plain (see the
    /// module's comment) and its samples lie within a file of `length`
    /// bytes.
    fn frames(&self, movie_timescale: u32, length: u64) -> Option<Vec<CodedFrame>> {
        let n = self.sizes.len();
        if self.unread || n == 0 || self.timescale == 0 || !self.inside(length) {
            return None;
        }
        let expand = |runs: &[(u32, i64)]| -> Option<Vec<i64>> {
            let mut all = Vec::with_capacity(n);
            for &(count, v) in runs {
                all.extend(std::iter::repeat_n(v, count as usize));
                if all.len() > n {
                    return None;
                }
            }
            (all.len() == n).then_some(all)
        };
        let steps: Vec<(u32, i64)> = self.steps.iter().map(|&(c, s)| (c, i64::from(s))).collect();
        let steps = expand(&steps)?;
        let offsets = if self.offsets.is_empty() {
            vec![0; n]
        } else {
            let runs: Vec<(u32, i64)> = self
                .offsets
                .iter()
                .map(|&(c, o)| (c, i64::from(o)))
                .collect();
            expand(&runs)?
        };
        let shift = offsets.iter().copied().min().unwrap_or(0).min(0).abs();
        let mut decode = 0i64;
        let mut shown = Vec::with_capacity(n);
        for (step, offset) in steps.iter().zip(&offsets) {
            shown.push(decode + offset + shift);
            decode += step;
        }
        let first = *shown.iter().min()?;
        let last = *shown.iter().max()?;
        match self.edits.as_slice() {
            [] => {}
            // One edit at normal speed that shows every frame.
            &[(duration, media_time, 0x1_0000)] if shift == 0 && media_time >= 0 => {
                // The last frame starts before the edit ends: last / media
                // timescale < media time / media timescale + duration /
                // movie timescale, multiplied out.
                let movie = i128::from(movie_timescale.max(1));
                let before_end = i128::from(last) * movie
                    < i128::from(media_time) * movie
                        + i128::from(duration) * i128::from(self.timescale);
                if media_time > first || (duration > 0 && !before_end) {
                    return None;
                }
            }
            _ => return None,
        }
        let mut keyframe = vec![self.sync.is_none(); n];
        if let Some(sync) = &self.sync {
            if sync.is_empty() {
                return None;
            }
            for &s in sync {
                *keyframe.get_mut((s as usize).checked_sub(1)?)? = true;
            }
        }
        let timescale = u128::from(self.timescale);
        let mut frames: Vec<CodedFrame> = shown
            .iter()
            .zip(keyframe)
            .map(|(&t, keyframe)| {
                let ns = u128::try_from(t).ok()? * 1_000_000_000 / timescale;
                Some(CodedFrame {
                    pts: gst::ClockTime::from_nseconds(u64::try_from(ns).ok()?),
                    keyframe,
                })
            })
            .collect::<Option<_>>()?;
        frames.sort_by_key(|f| f.pts);
        Some(frames)
    }

    /// Whether every sample's bytes lie within the file (a file cut short
    /// keeps an index of frames it no longer holds).
    fn inside(&self, length: u64) -> bool {
        let chunks = self.chunk_offsets.len();
        let mut sample = 0usize;
        for (i, &(first, per_chunk)) in self.chunk_runs.iter().enumerate() {
            let next = self
                .chunk_runs
                .get(i + 1)
                .map_or(chunks + 1, |r| r.0 as usize);
            let first = first as usize;
            if first == 0 || next < first {
                return false;
            }
            for chunk in first..next.min(chunks + 1) {
                let mut end = self.chunk_offsets[chunk - 1];
                for _ in 0..per_chunk {
                    let Some(&size) = self.sizes.get(sample) else {
                        return false;
                    };
                    end += u64::from(size);
                    sample += 1;
                }
                if end > length {
                    return false;
                }
            }
        }
        sample == self.sizes.len()
    }
}
