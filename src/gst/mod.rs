//! GStreamer in and out: what the user names as input and output, turned
//! into pipeline descriptions around an `appsink` (frames in, RGBA) and an
//! `appsrc` (frames out), and the run loop that joins them through the chain.
//!
//! The input pipeline ends in `appsink name=seamstream_in` with RGBA caps; the
//! output pipeline starts at `appsrc name=seamstream_out`, whose caps carry
//! the chain's output size and the input's framerate, pixel aspect ratio and
//! colorimetry. See [`run`].

pub mod decode;
pub mod run;
pub mod sample;

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};

/// Where frames come from.
#[derive(Clone, Debug, PartialEq)]
pub enum Input {
    /// `sample`: the built-in clip, a pan and zoom across the bundled
    /// photograph rendered at run time (see [`sample`]), with the size, rate
    /// and length of [`TestSettings`].
    Sample,
    /// `test:PATTERN`: videotestsrc with that pattern (smpte, ball, snow, …).
    Test { pattern: String },
    /// `camera:/dev/videoN`: v4l2src.
    Camera { device: String },
    /// A file path or URI, through uridecodebin.
    Uri { uri: String, path: Option<PathBuf> },
    /// Any gst-launch source fragment, e.g. `videotestsrc ! video/x-raw,width=640`.
    Fragment(String),
}

/// Size, rate and length for `test:` sources.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TestSettings {
    pub width: usize,
    pub height: usize,
    pub fps: (i32, i32),
    /// Frames to produce; `None` = until stopped.
    pub frames: Option<u64>,
    /// Produce frames in real time, as a camera would.
    pub live: bool,
}

impl Default for TestSettings {
    fn default() -> Self {
        Self {
            width: 1280,
            height: 720,
            fps: (30, 1),
            frames: Some(300),
            live: false,
        }
    }
}

fn looks_like_fragment(text: &str) -> bool {
    text.contains(" ! ") || text.contains('=') && !text.contains("://")
}

impl Input {
    /// Reads what the user wrote: `sample`, `test:PATTERN`,
    /// `camera:/dev/videoN`, a URI, a gst-launch fragment, or a file path
    /// (which must exist; a file named `sample` is written `./sample`).
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        if text == "sample" {
            return Ok(Input::Sample);
        }
        if let Some(p) = text.strip_prefix("test:") {
            let pattern = if p.is_empty() { "smpte" } else { p };
            return Ok(Input::Test {
                pattern: pattern.into(),
            });
        }
        if let Some(d) = text.strip_prefix("camera:") {
            let device = if d.is_empty() { "/dev/video0" } else { d };
            return Ok(Input::Camera {
                device: device.into(),
            });
        }
        if text.contains("://") {
            return Ok(Input::Uri {
                uri: text.into(),
                path: None,
            });
        }
        if looks_like_fragment(text) {
            return Ok(Input::Fragment(text.into()));
        }
        let path = Path::new(text);
        if !path.is_file() {
            return Err(Error::Read {
                path: path.into(),
                reason: "no such file; give a video file, a URI, sample, test:PATTERN, camera:/dev/videoN or a gst-launch fragment"
                    .into(),
            });
        }
        let abs = std::fs::canonicalize(path).map_err(|e| Error::Read {
            path: path.into(),
            reason: e.to_string(),
        })?;
        let uri = gst_uri_from_path(&abs);
        Ok(Input::Uri {
            uri,
            path: Some(abs),
        })
    }

    /// Checks that a camera's device exists, so that a missing camera is an
    /// error naming it rather than v4l2src's; other inputs pass.
    pub fn check_available(&self) -> Result<()> {
        match self {
            Input::Camera { device } if !Path::new(device).exists() => Err(Error::Read {
                path: device.into(),
                reason:
                    "there is no such camera; `ls /dev/video*` lists the cameras on this machine, \
                         and without one a test source such as test:ball (with --live) stands in"
                        .into(),
            }),
            _ => Ok(()),
        }
    }

    /// Whether frames arrive in real time (and may be dropped when we fall behind).
    pub fn is_live(&self, test: &TestSettings) -> bool {
        match self {
            Input::Camera { .. } => true,
            Input::Test { .. } => test.live,
            Input::Fragment(f) => f.contains("is-live=true") || f.contains("v4l2src"),
            Input::Uri { .. } | Input::Sample => false,
        }
    }

    /// The gst-launch description of the input pipeline, ending in the
    /// appsink. The sample's appsrc gets its caps and frames from
    /// [`sample::feed`] once the pipeline is built.
    pub fn launch(&self, test: &TestSettings) -> String {
        self.launch_as(test, "RGBA")
    }

    /// [`Input::launch`] with the appsink taking any of `formats` (caps
    /// syntax, e.g. `{ I420, NV12, RGBA }`): the GPU backend takes 4:2:0 YUV
    /// as decoders give it and converts on the device.
    pub fn launch_as(&self, test: &TestSettings, formats: &str) -> String {
        let src = match self {
            Input::Sample => format!("appsrc name={} format=time", sample::APPSRC_NAME),
            Input::Test { pattern } => {
                let n = test
                    .frames
                    .map_or(String::new(), |n| format!(" num-buffers={n}"));
                format!(
                    "videotestsrc pattern={pattern}{n} is-live={} ! video/x-raw,width={},height={},framerate={}/{}",
                    test.live, test.width, test.height, test.fps.0, test.fps.1
                )
            }
            Input::Camera { device } => format!("v4l2src device={device}"),
            Input::Uri { uri, .. } => format!("uridecodebin uri=\"{uri}\""),
            Input::Fragment(f) => f.clone(),
        };
        format!("{src} ! videoconvert ! video/x-raw,format={formats} ! appsink name=seamstream_in")
    }
}

/// As the user would write it: `sample`, `test:ball`, the file's path, …
impl std::fmt::Display for Input {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Input::Sample => write!(f, "sample"),
            Input::Test { pattern } => write!(f, "test:{pattern}"),
            Input::Camera { device } => write!(f, "camera:{device}"),
            Input::Uri {
                path: Some(path), ..
            } => write!(f, "{}", path.display()),
            Input::Uri { uri, .. } => write!(f, "{uri}"),
            Input::Fragment(text) => write!(f, "{text}"),
        }
    }
}

/// A file URI for an absolute path, with the characters a URI cannot hold
/// escaped.
fn gst_uri_from_path(path: &Path) -> String {
    let mut uri = String::from("file://");
    for b in path.to_string_lossy().bytes() {
        match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'/' | b'-' | b'_' | b'.' | b'~' => {
                uri.push(b as char)
            }
            _ => uri.push_str(&format!("%{b:02X}")),
        }
    }
    uri
}

/// `display` needs an X or Wayland display: without one autovideosink
/// tries every sink it knows, and on GStreamer 1.22 one of them (DirectFB)
/// crashes the process instead of failing.
fn check_display(is_set: impl Fn(&str) -> bool) -> Result<()> {
    if is_set("DISPLAY") || is_set("WAYLAND_DISPLAY") {
        return Ok(());
    }
    Err(Error::Pipeline(
        "`display`: there is no display here (neither DISPLAY nor WAYLAND_DISPLAY is set); \
         write to a file (out.mp4) or `null` instead, or name a sink as a gst-launch fragment"
            .into(),
    ))
}

/// A file container, chosen by the output's extension.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Container {
    Mp4,
    Mkv,
    Y4m,
}

/// Where frames go.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    File { path: PathBuf, container: Container },
    Display,
    Null,
    Fragment(String),
}

impl Output {
    /// Reads what the user wrote: a file ending in .mp4, .mkv or .y4m,
    /// `display`, `null`, or a gst-launch sink fragment.
    pub fn parse(text: &str) -> Result<Self> {
        let text = text.trim();
        match text {
            "display" => return Ok(Output::Display),
            "null" => return Ok(Output::Null),
            _ => {}
        }
        if looks_like_fragment(text) {
            return Ok(Output::Fragment(text.into()));
        }
        let path = PathBuf::from(text);
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        let container = match ext.as_deref() {
            Some("mp4") => Container::Mp4,
            Some("mkv") => Container::Mkv,
            Some("y4m") => Container::Y4m,
            _ => {
                return Err(Error::Write {
                    path,
                    reason: "unknown output; give a file ending in .mp4, .mkv or .y4m, `display`, `null`, or a gst-launch sink fragment".into(),
                });
            }
        };
        Ok(Output::File { path, container })
    }

    /// Checks before any work that a file output can be created, and that
    /// `display` has a display to show on.
    pub fn check_writable(&self) -> Result<()> {
        if *self == Output::Display {
            return check_display(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()));
        }
        let Output::File { path, .. } = self else {
            return Ok(());
        };
        let bad = |reason: String| Error::Write {
            path: path.clone(),
            reason,
        };
        let dir = match path.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        if !dir.is_dir() {
            return Err(bad(format!(
                "the folder `{}` does not exist",
                dir.display()
            )));
        }
        let existed = path.exists();
        std::fs::OpenOptions::new()
            .append(true)
            .create(true)
            .open(path)
            .map_err(|e| bad(e.to_string()))?;
        if !existed {
            let _ = std::fs::remove_file(path);
        }
        Ok(())
    }

    /// Deletes a file output (after a run that wrote no frame).
    pub fn remove_file(&self) {
        if let Output::File { path, .. } = self {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The gst-launch description of the output pipeline for frames of
    /// `width`×`height`, from the appsrc. x264 takes 4:2:0 only at even
    /// sizes; odd sizes are encoded 4:4:4, which keeps every pixel.
    pub fn launch(&self, width: usize, height: usize) -> String {
        let yuv = if width.is_multiple_of(2) && height.is_multiple_of(2) {
            "I420"
        } else {
            "Y444"
        };
        let sink = match self {
            Output::File { path, container } => {
                let loc = path.to_string_lossy().replace('"', "\\\"");
                match container {
                    Container::Mp4 => format!(
                        "videoconvert ! video/x-raw,format={yuv} ! x264enc speed-preset=veryfast bframes=0 ! h264parse ! mp4mux ! filesink location=\"{loc}\""
                    ),
                    Container::Mkv => format!(
                        "videoconvert ! video/x-raw,format={yuv} ! x264enc speed-preset=veryfast bframes=0 ! h264parse ! matroskamux ! filesink location=\"{loc}\""
                    ),
                    Container::Y4m => {
                        format!("videoconvert ! y4menc ! filesink location=\"{loc}\"")
                    }
                }
            }
            Output::Display => "videoconvert ! autovideosink".into(),
            Output::Null => "fakesink sync=false".into(),
            Output::Fragment(f) => format!("videoconvert ! {f}"),
        };
        format!("appsrc name=seamstream_out format=time ! {sink}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn inputs_are_recognised_by_their_form() {
        assert_eq!(
            Input::parse("test:ball").unwrap(),
            Input::Test {
                pattern: "ball".into()
            }
        );
        assert_eq!(
            Input::parse("camera:/dev/video2").unwrap(),
            Input::Camera {
                device: "/dev/video2".into()
            }
        );
        assert!(matches!(
            Input::parse("rtsp://cam/stream").unwrap(),
            Input::Uri { .. }
        ));
        assert!(matches!(
            Input::parse("videotestsrc pattern=snow ! video/x-raw,width=64").unwrap(),
            Input::Fragment(_)
        ));
        let e = Input::parse("/nonexistent/clip.mp4")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/clip.mp4") && e.contains("test:PATTERN"),
            "{e}"
        );
    }

    #[test]
    fn sample_is_the_built_in_clip_and_a_missing_camera_is_named() {
        assert_eq!(Input::parse("sample").unwrap(), Input::Sample);
        assert!(
            Input::Sample
                .launch(&TestSettings::default())
                .starts_with("appsrc name=seamstream_sample")
        );
        let cam = Input::parse("camera:/dev/video-none").unwrap();
        let e = cam.check_available().unwrap_err().to_string();
        assert!(
            e.contains("/dev/video-none") && e.contains("ls /dev/video*") && e.contains("test:"),
            "{e}"
        );
        assert!(Input::Sample.check_available().is_ok());
    }

    #[test]
    fn display_without_a_display_is_refused_with_a_way_out() {
        let e = check_display(|_| false).unwrap_err().to_string();
        assert!(e.contains("DISPLAY") && e.contains("null"), "{e}");
        assert!(check_display(|k| k == "WAYLAND_DISPLAY").is_ok());
    }

    #[test]
    fn file_uris_escape_odd_characters() {
        assert_eq!(
            gst_uri_from_path(Path::new("/a b/c#.mp4")),
            "file:///a%20b/c%23.mp4"
        );
    }

    #[test]
    fn outputs_pick_the_container_from_the_extension() {
        assert!(matches!(
            Output::parse("x.MP4").unwrap(),
            Output::File {
                container: Container::Mp4,
                ..
            }
        ));
        assert!(matches!(
            Output::parse("x.mkv").unwrap(),
            Output::File {
                container: Container::Mkv,
                ..
            }
        ));
        assert!(matches!(
            Output::parse("x.y4m").unwrap(),
            Output::File {
                container: Container::Y4m,
                ..
            }
        ));
        assert_eq!(Output::parse("null").unwrap(), Output::Null);
        assert!(matches!(
            Output::parse("fakesink sync=true").unwrap(),
            Output::Fragment(_)
        ));
        let e = Output::parse("x.avi").unwrap_err().to_string();
        assert!(e.contains(".mp4, .mkv or .y4m"), "{e}");
    }

    #[test]
    fn test_source_description_carries_size_rate_and_count() {
        let t = TestSettings {
            width: 321,
            height: 241,
            fps: (25, 1),
            frames: Some(7),
            live: false,
        };
        let d = Input::Test {
            pattern: "smpte".into(),
        }
        .launch(&t);
        assert!(
            d.contains("num-buffers=7") && d.contains("width=321,height=241,framerate=25/1"),
            "{d}"
        );
        assert!(d.ends_with("appsink name=seamstream_in"), "{d}");
    }
}
