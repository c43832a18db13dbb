//! The built-in sample clip: a slow pan and zoom across the bundled
//! photograph ([`crate::io::sample_image`]), rendered at run time.
//!
//! Each frame is the photograph seen through a window of the output's
//! aspect ratio that moves and narrows along an eased path, sampled with the
//! crate's own [`warp`](crate::ops::warp) (affine, bilinear). The frames enter
//! GStreamer through an `appsrc` named [`APPSRC_NAME`] at the head of the
//! input pipeline, with timestamps from the frame rate and EOS after the last
//! frame, so the run loop treats the clip like any other input.

use gstreamer as gst;
use gstreamer_app as gst_app;
use gstreamer_video as gst_video;

use super::TestSettings;
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane, Rgba};
use crate::ops::warp::{Direction, Interpolation, Transform, WarpBorder, warp};

/// The name of the appsrc that [`feed`] serves.
pub const APPSRC_NAME: &str = "seamstream_sample";
/// Frame size of the clip unless the user gives one: 16:9.
pub const DEFAULT_SIZE: (usize, usize) = (480, 270);
/// Length of the clip unless the user gives one: 3 s at 30 fps.
pub const DEFAULT_FRAMES: u64 = 90;

/// Where the window starts and ends: its centre in photo pixels and its
/// zoom (1 = the largest window of the output's aspect that fits the photo).
/// The start shows the whole width; the end closes in on the eyes and nose.
const START: (f64, f64, f64) = (225.5, 140.0, 1.0);
const END: (f64, f64, f64) = (250.0, 170.0, 1.45);

/// The clip: the photograph and the size and length to render it at.
#[derive(Clone, Debug)]
pub struct SampleClip {
    photo: Plane<Rgba>,
    width: usize,
    height: usize,
    frames: u64,
}

impl SampleClip {
    /// A clip of `frames` frames of `width`×`height`.
    pub fn new(width: usize, height: usize, frames: u64) -> Result<Self> {
        if width == 0 || height == 0 || frames == 0 {
            return Err(Error::BadFrame(format!(
                "the sample clip needs a size and a length; got {width}x{height}, {frames} frames"
            )));
        }
        let photo = match crate::io::sample_image()? {
            Frame::Rgba(p) => p,
            gray => gray.to_rgba(),
        };
        Ok(Self {
            photo,
            width,
            height,
            frames,
        })
    }

    pub fn frames(&self) -> u64 {
        self.frames
    }

    /// The destination→source affine matrix of frame `i` (row-major 2×3),
    /// with pixel centres at integer coordinates on both sides.
    pub fn matrix(&self, i: u64) -> [f64; 6] {
        let (pw, ph) = (self.photo.width() as f64, self.photo.height() as f64);
        let aspect = self.width as f64 / self.height as f64;
        let t = if self.frames > 1 {
            i.min(self.frames - 1) as f64 / (self.frames - 1) as f64
        } else {
            0.0
        };
        // Smoothstep: the camera eases in and out instead of jerking.
        let e = t * t * (3.0 - 2.0 * t);
        let lerp = |a: f64, b: f64| a + (b - a) * e;
        let zoom = lerp(START.2, END.2);
        let base_w = pw.min(ph * aspect);
        let win_w = base_w / zoom;
        let win_h = win_w / aspect;
        // Keep the window inside the photo.
        let cx = lerp(START.0, END.0).clamp(win_w / 2.0, pw - win_w / 2.0);
        let cy = lerp(START.1, END.1).clamp(win_h / 2.0, ph - win_h / 2.0);
        let (x0, y0) = (cx - win_w / 2.0, cy - win_h / 2.0);
        let step = win_w / self.width as f64;
        // Destination pixel x covers [x, x+1); its centre maps to the window's
        // x0 + (x + 0.5)·step, which as a pixel centre is 0.5 less.
        [
            step,
            0.0,
            x0 + 0.5 * step - 0.5,
            0.0,
            step,
            y0 + 0.5 * step - 0.5,
        ]
    }

    /// Renders frame `i`.
    pub fn render(&self, i: u64) -> Result<Plane<Rgba>> {
        let transform = Transform::affine(self.matrix(i), Direction::DstToSrc)?;
        Ok(warp(
            &self.photo,
            &transform,
            self.width,
            self.height,
            Interpolation::Bilinear,
            WarpBorder::Replicate,
        ))
    }
}

/// The time of frame `i` at `fps` (numerator, denominator).
fn frame_time(i: u64, fps: (i32, i32)) -> gst::ClockTime {
    let ns = i as u128 * 1_000_000_000 * fps.1.max(1) as u128 / fps.0.max(1) as u128;
    gst::ClockTime::from_nseconds(ns as u64)
}

/// Sets up the appsrc named [`APPSRC_NAME`] in `pipe` to play the clip at
/// `test`'s size and rate, for `test.frames` frames (the default length
/// when `None`); call before the pipeline starts.
pub fn feed(pipe: &gst::Pipeline, test: &TestSettings) -> Result<()> {
    use gst::prelude::*;
    let src = pipe
        .by_name(APPSRC_NAME)
        .and_then(|e| e.downcast::<gst_app::AppSrc>().ok())
        .ok_or_else(|| Error::Pipeline("the sample's input pipeline has no appsrc".into()))?;
    let clip = SampleClip::new(
        test.width,
        test.height,
        test.frames.unwrap_or(DEFAULT_FRAMES),
    )?;
    let info = gst_video::VideoInfo::builder(
        gst_video::VideoFormat::Rgba,
        test.width as u32,
        test.height as u32,
    )
    .fps(gst::Fraction::new(test.fps.0, test.fps.1))
    .build()
    .map_err(|e| crate::gst::gst_call("cannot describe the sample's frames", e))?;
    let caps = info
        .to_caps()
        .map_err(|e| crate::gst::gst_call("cannot make the sample's caps", e))?;
    src.set_caps(Some(&caps));
    src.set_format(gst::Format::Time);
    // Render ahead by a frame or two only; the run loop sets the pace.
    src.set_max_bytes(2 * 4 * (test.width * test.height) as u64);
    let fps = test.fps;
    let mut next = 0u64;
    src.set_callbacks(
        gst_app::AppSrcCallbacks::builder()
            .need_data(move |src, _| {
                if next >= clip.frames() {
                    if next == clip.frames() {
                        next += 1;
                        let _ = src.end_of_stream();
                    }
                    return;
                }
                let plane = match clip.render(next) {
                    Ok(p) => p,
                    Err(e) => {
                        gst::element_error!(
                            src,
                            gst::StreamError::Failed,
                            ["cannot render frame {} of the sample clip: {}", next, e]
                        );
                        return;
                    }
                };
                // One allocation per frame: the buffer GStreamer takes.
                let mut buffer =
                    gst::Buffer::from_mut_slice(plane.into_packed_vec().into_flattened());
                if let Some(b) = buffer.get_mut() {
                    let pts = frame_time(next, fps);
                    b.set_pts(pts);
                    b.set_duration(frame_time(next + 1, fps) - pts);
                }
                next += 1;
                // A refused push means the pipeline is stopping; its bus says why.
                let _ = src.push_buffer(buffer);
            })
            .build(),
    );
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_pans_and_zooms_inside_the_photo() {
        let clip = SampleClip::new(480, 270, 90).unwrap();
        let (pw, ph) = (clip.photo.width() as f64, clip.photo.height() as f64);
        let mut steps = Vec::new();
        for i in 0..90 {
            let m = clip.matrix(i);
            // The corners of the output map inside the photo.
            for (x, y) in [(0.0, 0.0), (479.0, 269.0)] {
                let (sx, sy) = (m[0] * x + m[2], m[4] * y + m[5]);
                assert!(
                    (-0.5..=pw - 0.5).contains(&sx) && (-0.5..=ph - 0.5).contains(&sy),
                    "frame {i}: ({x},{y}) -> ({sx},{sy})"
                );
            }
            steps.push(m[0]);
        }
        // The window narrows steadily: it zooms in, by END's zoom at the end.
        assert!(steps.windows(2).all(|w| w[1] <= w[0]), "{steps:?}");
        assert!((steps[0] / steps[89] - END.2).abs() < 1e-9);
        assert_ne!(clip.render(0).unwrap(), clip.render(89).unwrap());
    }

    #[test]
    fn frame_times_follow_the_rate_without_drift() {
        assert_eq!(frame_time(0, (30, 1)).nseconds(), 0);
        assert_eq!(frame_time(3, (30, 1)).nseconds(), 100_000_000);
        assert_eq!(
            frame_time(30000, (30000, 1001)).nseconds(),
            1_001_000_000_000
        );
    }
}
