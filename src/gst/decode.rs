//! Decoding a video to RGBA frames one at a time, for the tools that read
//! clips rather than transform them (`seamstream quality`).
//!
//! Every input goes through the same `uridecodebin ! videoconvert` as
//! `run`'s CPU path, so two clips read here are compared in one colour
//! pipeline.

use std::time::{Duration, Instant};

use gst::prelude::*;
use gst_video::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::{Input, TestSettings};
use crate::error::{Error, Result};
use crate::frame::{Plane, Rgba};
use crate::ops::reframe::analyze::RgbaRows;

/// How long the decoder may stay silent before the input counts as stuck.
const STALL: Duration = Duration::from_secs(30);

/// A video being decoded; [`FrameReader::next_frame`] gives its frames in
/// order.
pub struct FrameReader {
    pipe: gst::Pipeline,
    sink: gst_app::AppSink,
    name: String,
    done: bool,
    fps: Option<f64>,
    /// The presentation time of the frame given last.
    time: Option<gst::ClockTime>,
    /// Tells a reading that ended with nothing posted.
    end_watch: crate::gst::EndWatch,
}

impl FrameReader {
    /// Starts decoding `input` (a file path or URI, as `run` takes it).
    pub fn open(input: &str) -> Result<Self> {
        gst::init().map_err(|e| crate::gst::gst_call("GStreamer did not start", e))?;
        let parsed = Input::parse(input)?;
        if !matches!(parsed, Input::Uri { .. }) {
            return Err(Error::Read {
                path: input.into(),
                reason: "give a video file or a URI".into(),
            });
        }
        // The conversion on a thread of its own (a queue before it): the
        // decoder's thread, copying each picture out of the GPU's memory
        // where NVIDIA's decoder made it, then went on to convert it (a
        // 1080p plan on the H200 host 1.14-1.23 s -> 0.92-0.95 s in three
        // runs of four, the fourth unchanged).
        let description = parsed
            .launch(&TestSettings::default())
            .replace(
                &format!("! {} !", crate::gst::CONVERT),
                &format!(
                    "! queue max-size-buffers=4 max-size-bytes=0 max-size-time=0 ! {} !",
                    crate::gst::CONVERT
                ),
            )
            .replace(
                "appsink name=seamstream_in",
                "appsink name=frames sync=false",
            );
        let pipe = gst::parse::launch(&description)
            .map_err(|e| Error::Pipeline(format!("cannot build `{description}`: {e}")))?
            .downcast::<gst::Pipeline>()
            .map_err(|_| Error::Pipeline(format!("`{description}` is not a pipeline")))?;
        let sink = pipe
            .by_name("frames")
            .and_then(|e| e.downcast::<gst_app::AppSink>().ok())
            .ok_or_else(|| Error::Pipeline("the decoding pipeline has no appsink".into()))?;
        sink.set_max_buffers(4);
        let reader = Self {
            pipe,
            sink,
            name: parsed.to_string(),
            done: false,
            fps: None,
            time: None,
            end_watch: Default::default(),
        };
        reader.pipe.set_state(gst::State::Playing).map_err(|_| {
            reader
                .bus_error()
                .unwrap_or_else(|| Error::Pipeline(format!("`{}` would not start", reader.name)))
        })?;
        Ok(reader)
    }

    fn bus_error(&self) -> Option<Error> {
        let bus = self.pipe.bus()?;
        let msg = bus.pop_filtered(&[gst::MessageType::Error])?;
        match msg.view() {
            gst::MessageView::Error(err) => Some(Error::Read {
                path: self.name.clone().into(),
                reason: format!("{} (is it a complete, playable video?)", err.error()),
            }),
            _ => None,
        }
    }

    /// The next frame, or `None` after the last.
    pub fn next_frame(&mut self) -> Result<Option<Plane<Rgba>>> {
        match self.next_sample()? {
            Some(s) => s.to_plane().map(Some),
            None => Ok(None),
        }
    }

    /// The next frame as the decoder gave it, not copied, or `None` after
    /// the last.
    pub fn next_sample(&mut self) -> Result<Option<RgbaSample>> {
        if self.done {
            return Ok(None);
        }
        let start = Instant::now();
        let sample = loop {
            if let Some(e) = self.bus_error() {
                self.done = true;
                return Err(e);
            }
            if let Some(s) = self
                .sink
                .try_pull_sample(gst::ClockTime::from_mseconds(100))
            {
                break s;
            }
            let silent = self.end_watch.silent(self.pipe.upcast_ref());
            if self.sink.is_eos() {
                self.done = true;
                return Ok(None);
            }
            if silent {
                self.done = true;
                return Err(Error::Read {
                    path: self.name.clone().into(),
                    reason: "its reading stopped with no end and no error \
                             (is it a complete, playable video?)"
                        .into(),
                });
            }
            if start.elapsed() > STALL {
                self.done = true;
                return Err(Error::Read {
                    path: self.name.clone().into(),
                    reason: format!("no frame came in {} s", STALL.as_secs()),
                });
            }
        };
        let bad = |what: &str| read_error(&self.name, what);
        let caps = sample
            .caps()
            .ok_or_else(|| bad("a frame came without caps"))?;
        let info = gst_video::VideoInfo::from_caps(caps).map_err(|_| bad("unusable caps"))?;
        let rate = crate::gst::usable_rate(info.fps());
        if self.fps.is_none() && rate.numer() > 0 && rate.denom() > 0 {
            self.fps = Some(rate.numer() as f64 / rate.denom() as f64);
        }
        let buffer = sample.buffer().ok_or_else(|| bad("a frame came empty"))?;
        self.time = buffer.pts();
        Ok(Some(RgbaSample {
            sample,
            info,
            name: self.name.clone(),
        }))
    }

    /// The frame rate the caps give, once a frame has been read (none for
    /// a variable rate).
    pub fn fps(&self) -> Option<f64> {
        self.fps
    }

    /// The presentation time of the frame [`FrameReader::next_frame`] gave
    /// last, in seconds (`None` for a frame without one).
    pub fn time(&self) -> Option<f64> {
        self.time.map(|t| t.nseconds() as f64 / 1e9)
    }

    /// What the reader was opened on, as the user wrote it.
    pub fn name(&self) -> &str {
        &self.name
    }
}

impl Drop for FrameReader {
    fn drop(&mut self) {
        let _ = self.pipe.set_state(gst::State::Null);
    }
}

/// A decoded RGBA frame in the decoder's buffer ([`FrameReader::next_sample`]):
/// read where it lies ([`RgbaSample::with_rows`]), on any thread, or
/// copied out.
pub struct RgbaSample {
    sample: gst::Sample,
    info: gst_video::VideoInfo,
    /// The input's name, for errors.
    name: String,
}

/// A mapped RGBA frame's rows.
struct MappedRows<'a> {
    data: &'a [u8],
    stride: usize,
    width: usize,
    height: usize,
}

impl RgbaRows for MappedRows<'_> {
    fn width(&self) -> usize {
        self.width
    }
    fn height(&self) -> usize {
        self.height
    }
    fn row(&self, y: usize) -> &[Rgba] {
        self.data[y * self.stride..][..4 * self.width]
            .as_chunks::<4>()
            .0
    }
}

impl RgbaSample {
    /// Width and height.
    pub fn size(&self) -> (usize, usize) {
        (self.info.width() as usize, self.info.height() as usize)
    }

    /// `f` of the frame's rows, mapped for reading while it runs.
    pub fn with_rows<R>(&self, f: impl FnOnce(&dyn RgbaRows) -> R) -> Result<R> {
        let bad = |what: &str| read_error(&self.name, what);
        let buffer = self
            .sample
            .buffer()
            .ok_or_else(|| bad("a frame came empty"))?;
        let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer, &self.info)
            .map_err(|_| bad("cannot map a frame"))?;
        let (width, height) = self.size();
        let data = vf.plane_data(0).map_err(|_| bad("cannot read a frame"))?;
        let stride = vf.plane_stride()[0] as usize;
        if height > 0 && (stride < 4 * width || data.len() < stride * (height - 1) + 4 * width) {
            return Err(bad("a frame is shorter than its caps say"));
        }
        Ok(f(&MappedRows {
            data,
            stride,
            width,
            height,
        }))
    }

    /// The frame, copied out of the decoder's buffer.
    pub fn to_plane(&self) -> Result<Plane<Rgba>> {
        self.with_rows(|rows| {
            let (w, h) = (rows.width(), rows.height());
            // Filled row by row, never zeroed first.
            let mut pixels: Vec<Rgba> = Vec::with_capacity(w * h);
            for y in 0..h {
                pixels.extend_from_slice(rows.row(y));
            }
            Plane::from_vec(w, h, pixels)
        })?
        .map_err(|_| read_error(&self.name, "a frame is shorter than its caps say"))
    }
}

/// A reading error of the input `name`.
fn read_error(name: &str, what: &str) -> Error {
    Error::Read {
        path: name.into(),
        reason: what.into(),
    }
}
