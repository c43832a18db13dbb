//! GStreamer in and out: what the user names as input and output, turned
//! into pipeline descriptions around an `appsink` (frames in, RGBA) and an
//! `appsrc` (frames out), and the run loop that joins them through the chain.
//!
//! The input pipeline ends in `appsink name=seamstream_in` with RGBA caps; the
//! output pipeline starts at `appsrc name=seamstream_out`, whose caps carry
//! the chain's output size and the input's framerate, pixel aspect ratio and
//! colorimetry. See [`run`].

pub mod audio;
pub mod cuda;
pub mod decode;
pub mod encode;
pub mod join;
#[cfg(feature = "cuda")]
pub mod nvdec;
pub mod outfile;
pub mod parts;
pub mod probe;
pub mod reframe;
pub mod request;
pub mod run;
pub mod sample;

use std::path::{Path, PathBuf};

use gstreamer as gst;

use crate::error::{Error, Result};

/// A failed GStreamer call as our error: what was being done, with
/// GStreamer's error (a `glib::Error`, `BoolError`, …) kept as its source.
pub fn gst_call(doing: &str, e: impl std::error::Error + Send + Sync + 'static) -> Error {
    Error::GstCall {
        doing: doing.into(),
        source: Box::new(e),
    }
}

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
    /// A file path or URI, through uridecodebin; `still`: a local file
    /// that holds one picture (PNG, JPEG, …), repeated like a test source
    /// (`--frames` at `--fps`); `orientation`: a local file's video is
    /// stored turned (its `image-orientation` tag, e.g. `rotate-90` for a
    /// phone held upright), and is turned back as it is meant to be shown;
    /// `streamed`: the path is a FIFO or a device, whose bytes can be read
    /// once only (opened once, by the run itself, and read by `fdsrc`:
    /// `filesrc` opens a file twice, and what a FIFO's writer wrote between
    /// the two is lost, or the second open waits for a writer that is gone).
    Uri {
        uri: String,
        path: Option<PathBuf>,
        still: bool,
        orientation: Option<String>,
        streamed: bool,
    },
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

/// The name of a file input's `uridecodebin`.
pub const DECODER: &str = "seamstream_dec";

/// The colour conversion from a decoder to the chain's RGBA, on every
/// core: `videoconvert` converts on one thread unless told, and at 1080p
/// that thread (6.4 ms a frame on the H200 host's cores) held a file's
/// reframe plan to 8-9 ms a frame, where its analysis takes 1.6. Up to
/// RGBA its stripes give one thread's bytes (4:2:0, 4:2:2, 4:4:4, 10-bit,
/// odd heights: `the_input_conversion_on_every_core_is_one_threads_bytes`);
/// down to 4:2:0 for an encoder they do not (a stripe's edge splits a
/// pair of chroma rows), so the output's conversion keeps one thread.
pub const CONVERT: &str = "videoconvert n-threads=0";

/// Whether GStreamer's `deinterlace` element is installed (in
/// gstreamer1.0-plugins-good); without it interlaced video is carved as it
/// is, and the summary says so.
pub fn can_deinterlace() -> bool {
    gst::init().is_ok() && gst::ElementFactory::find("deinterlace").is_some()
}

/// GStreamer's plugins whose loading is slow: NVIDIA's probes every GPU
/// it can see, its decoders and its encoders (1.8 s on an H200 alone, near
/// 4 s when four processes start at once).
const SLOW_PLUGINS: &[&str] = &["nvcodec"];

/// Loads the [`SLOW_PLUGINS`] on a thread of their own, so that their start
/// runs beside the caller's (CUDA's start, the kernels, a split job's plan)
/// rather than inside the input's first seconds. An input that needs one of
/// them before it is loaded waits on GStreamer's own loading lock; a
/// plugin that is absent or fails to load is left to the pipeline to
/// report, as without this.
pub fn preload_slow_plugins() {
    let _ = std::thread::Builder::new()
        .name("gst-preload".into())
        .spawn(|| {
            if gst::init().is_ok() {
                for name in SLOW_PLUGINS {
                    let _ = gst::Plugin::load_by_name(name);
                }
            }
        });
}

/// Registers seamstream's NVIDIA decoder (`seamstreamnvdec`, above
/// GStreamer's NVIDIA decoders) unless turned off (`SEAMSTREAM_NVDEC=0`),
/// where NVIDIA's decoder library is there; whether it is registered. Never
/// without the `cuda` feature.
pub fn register_nv_decoder() -> bool {
    #[cfg(feature = "cuda")]
    return nvdec::register();
    #[cfg(not(feature = "cuda"))]
    false
}

/// The `fdsrc` that reads a streamed input (a FIFO or a device).
pub(crate) const STREAMED_SOURCE: &str = "seamstream_streamed";

/// Subtitle streams `uridecodebin` gives undecoded (its default).
const SUBTITLES: &str = "text/x-raw(ANY); subpicture/x-dvd; subpicture/x-dvb; subpicture/x-pgs";

/// Whether `text` is a URI, by GStreamer's own test (a scheme, then
/// `://`): `rtspsrc location=rtsp://host/x ! …` is a fragment that holds
/// one, not a URI.
fn is_uri(text: &str) -> bool {
    let Ok(c) = std::ffi::CString::new(text) else {
        return false;
    };
    // SAFETY: gst_uri_is_valid reads the NUL-terminated string and keeps
    // nothing; it needs no initialised GStreamer.
    unsafe { gst::ffi::gst_uri_is_valid(c.as_ptr()) != gst::glib::ffi::GFALSE }
}

/// Whether the file at `path` holds a single picture (PNG, JPEG, BMP,
/// TIFF, WebP), by GStreamer's typefinding on its first bytes. GIFs may
/// move and are read as video.
fn is_still_picture(path: &Path) -> bool {
    use std::io::Read;
    let mut head = Vec::with_capacity(4096);
    let read = std::fs::File::open(path).and_then(|f| f.take(4096).read_to_end(&mut head));
    if read.is_err() || head.is_empty() || gst::init().is_err() {
        return false;
    }
    gstreamer_base::functions::type_find_helper_for_data(None::<&gst::Object>, &head)
        .ok()
        .and_then(|(caps, _)| caps.structure(0).map(|s| s.name().to_string()))
        .is_some_and(|name| {
            matches!(
                name.as_str(),
                "image/png" | "image/jpeg" | "image/bmp" | "image/tiff" | "image/webp"
            )
        })
}

/// Whether `text`, which names no file, is meant as a gst-launch fragment.
fn looks_like_fragment(text: &str) -> bool {
    text.contains('!') || text.contains('=')
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
        // A local file's URI is the file: checked and read as its path.
        if text.starts_with("file://")
            && gst::init().is_ok()
            && let Ok((path, _)) = gst::glib::filename_from_uri(text)
            && let Some(path) = path.to_str()
        {
            return Input::parse(path);
        }
        if is_uri(text) {
            return Ok(Input::Uri {
                uri: text.into(),
                path: None,
                still: false,
                orientation: None,
                streamed: false,
            });
        }
        let path = Path::new(text);
        if !path.exists() && looks_like_fragment(text) {
            return Ok(Input::Fragment(text.into()));
        }
        let regular = match std::fs::metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                return Err(Error::Read {
                    path: path.into(),
                    reason: "no such file; give a video file, a URI, sample, test:PATTERN, camera:/dev/videoN or a gst-launch fragment"
                        .into(),
                });
            }
            Err(e) => {
                return Err(Error::Read {
                    path: path.into(),
                    reason: e.to_string(),
                });
            }
            Ok(m) if m.is_dir() => {
                return Err(Error::Read {
                    path: path.into(),
                    reason: "that is a folder; give a video file in it".into(),
                });
            }
            // A file, or a FIFO or device that streams one.
            Ok(m) => m.is_file(),
        };
        let abs = std::fs::canonicalize(path).map_err(|e| Error::Read {
            path: path.into(),
            reason: e.to_string(),
        })?;
        let uri = gst_uri_from_path(&abs);
        // Only a regular file is looked into first: reading a FIFO's first
        // bytes would take them from the run.
        let still = regular && is_still_picture(&abs);
        let orientation = if regular && !still {
            probe::orientation(&abs)
        } else {
            None
        };
        Ok(Input::Uri {
            uri,
            path: Some(abs),
            still,
            orientation,
            streamed: !regular,
        })
    }

    /// Checks that a camera's device exists, so that a missing camera is an
    /// error naming it rather than v4l2src's; other inputs pass.
    pub fn check_available(&self) -> Result<()> {
        match self {
            Input::Uri {
                uri, path: None, ..
            } => {
                let scheme = uri.split("://").next().unwrap_or_default();
                gst::init().map_err(|e| crate::gst::gst_call("GStreamer did not start", e))?;
                if gst::Element::make_from_uri(gst::URIType::Src, uri, None).is_ok() {
                    Ok(())
                } else {
                    Err(Error::Read {
                        path: uri.into(),
                        reason: format!(
                            "no installed GStreamer source reads {} URIs; check the URI, or \
                             install the plugin that reads them (file, http and rtsp are in \
                             gstreamer1.0-plugins-base/-good)",
                            crate::error::quoted_after("", &format!("{scheme}://"))
                        ),
                    })
                }
            }
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

    /// The local file this input reads, if it is one (a path, or a
    /// `file://` URI).
    pub fn local_path(&self) -> Option<PathBuf> {
        match self {
            Input::Uri { path: Some(p), .. } => Some(p.clone()),
            Input::Uri {
                uri, path: None, ..
            } if uri.starts_with("file://") => {
                gst::glib::filename_from_uri(uri).ok().map(|(p, _)| p)
            }
            _ => None,
        }
    }

    /// Whether frames are known to arrive in real time before the input
    /// starts (and may be dropped when we fall behind): a camera, or
    /// `--live`. Any other input is live when GStreamer says so (it does
    /// not preroll; see `run::intake`).
    pub fn is_live(&self, test: &TestSettings) -> bool {
        matches!(self, Input::Camera { .. }) || test.live
    }

    /// The gst-launch description of the input pipeline, ending in the
    /// appsink. The sample's appsrc gets its caps and frames from
    /// [`sample::feed`] once the pipeline is built.
    pub fn launch(&self, test: &TestSettings) -> String {
        self.launch_as(test, "video/x-raw,format=RGBA")
    }

    /// [`Input::launch`] with the appsink taking `caps` (e.g.
    /// `video/x-raw,format={ I420, NV12, RGBA }`): the GPU backend takes
    /// 4:2:0 YUV as decoders give it, in CUDA memory where NVIDIA's do, and
    /// converts on the device. (`videoconvert` passes CUDA memory through
    /// untouched, and converts only system memory.)
    pub fn launch_as(&self, test: &TestSettings, caps: &str) -> String {
        self.launch_with(test, caps, can_deinterlace())
    }

    /// [`Input::launch_as`], with `deinterlace` after a file's decoder or
    /// not (it takes no CUDA memory through when it must deinterlace, so
    /// the run leaves it out where the decoder's CUDA memory is kept).
    pub fn launch_with(&self, test: &TestSettings, caps: &str, deinterlace: bool) -> String {
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
            // Audio stays encoded: it is copied, or decoded only where the
            // output needs it re-encoded (see [`audio`]).
            Input::Uri {
                uri,
                still,
                orientation,
                streamed,
                ..
            } => {
                let caps = format!(
                    "video/x-raw(ANY); audio/x-raw(ANY); {}; {SUBTITLES}",
                    audio::ENCODED_AUDIO
                );
                let mut decode = if *streamed {
                    // Its descriptor is set when the run opens it.
                    format!(
                        "fdsrc name={STREAMED_SOURCE} ! decodebin name={DECODER} caps=\"{caps}\""
                    )
                } else {
                    format!("uridecodebin name={DECODER} uri=\"{uri}\" caps=\"{caps}\"")
                };
                // Interlaced video is deinterlaced before the chain's
                // spatial work, one frame per frame from its top fields;
                // progressive video passes through untouched.
                if deinterlace {
                    decode.push_str(" ! deinterlace fields=top");
                }
                if orientation.is_some() {
                    // Turned as the file's own tag says (in system memory:
                    // videoflip takes no CUDA memory).
                    decode.push_str(" ! videoflip video-direction=auto");
                }
                if *still {
                    // One picture: repeated like a test source's frames.
                    let n = test
                        .frames
                        .map_or(String::new(), |n| format!(" num-buffers={n}"));
                    format!(
                        "{decode} ! imagefreeze{n} ! video/x-raw,framerate={}/{}",
                        test.fps.0, test.fps.1
                    )
                } else {
                    decode
                }
            }
            Input::Fragment(f) => f.clone(),
        };
        format!("{src} ! {CONVERT} ! {caps} ! appsink name=seamstream_in")
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
    Webm,
    Y4m,
}

impl Container {
    pub fn extension(self) -> &'static str {
        match self {
            Container::Mp4 => "mp4",
            Container::Mkv => "mkv",
            Container::Webm => "webm",
            Container::Y4m => "y4m",
        }
    }

    /// The GStreamer muxer.
    pub fn muxer(self) -> &'static str {
        match self {
            Container::Mp4 => "mp4mux",
            Container::Mkv => "matroskamux",
            Container::Webm => "webmmux",
            Container::Y4m => "y4menc",
        }
    }

    /// The caps the muxer's sink pads for `kind` (`video` or `audio`)
    /// take, as its element factory declares them.
    pub fn muxer_takes(self, kind: &str) -> Option<gst::Caps> {
        gst::ElementFactory::find(self.muxer())?
            .static_pad_templates()
            .into_iter()
            .find(|t| {
                t.direction() == gst::PadDirection::Sink && t.name_template().starts_with(kind)
            })
            .map(|t| t.caps())
    }

    /// The muxer as the output pipeline runs it. MP4 is written in
    /// fragments of a second, each playable once written, and rewritten
    /// as a plain MP4 at the end: a crash or a kill keeps every fragment.
    pub(crate) fn muxer_launch(self) -> String {
        match self {
            Container::Mp4 => {
                "mp4mux name=seamstream_mux fragment-duration=1000 fragment-mode=first-moov-then-finalise"
                    .into()
            }
            c => format!("{} name=seamstream_mux", c.muxer()),
        }
    }
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
    /// Reads what the user wrote: a file ending in .mp4, .mkv, .webm or .y4m,
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
        if path.is_dir() {
            let inside = path.join("out.mp4");
            return Err(Error::Write {
                reason: format!(
                    "that is a folder; give a file in it, e.g. `{}`",
                    inside.display()
                ),
                path,
            });
        }
        let ext = path
            .extension()
            .and_then(|e| e.to_str())
            .map(|e| e.to_ascii_lowercase());
        let container = match ext.as_deref() {
            Some("mp4") => Container::Mp4,
            Some("mkv") => Container::Mkv,
            Some("webm") => Container::Webm,
            Some("y4m") => Container::Y4m,
            _ => {
                return Err(Error::Write {
                    path,
                    reason: "unknown output; give a file ending in .mp4, .mkv, .webm or .y4m, `display`, `null`, or a gst-launch sink fragment".into(),
                });
            }
        };
        Ok(Output::File { path, container })
    }

    /// Checks before any work that `display` has a display to show on.
    /// (A file output is checked as it is opened: [`outfile::OutFile`].)
    pub fn check_display(&self) -> Result<()> {
        if *self == Output::Display {
            return check_display(|k| std::env::var_os(k).is_some_and(|v| !v.is_empty()));
        }
        Ok(())
    }

    /// The gst-launch description of the output pipeline for frames of
    /// `width`×`height`, from the appsrc; a file is written at `location`
    /// through `encoder` (none for .y4m). x264 takes 4:2:0 only at even
    /// sizes; odd sizes are encoded 4:4:4, which keeps every pixel.
    pub fn launch(
        &self,
        width: usize,
        height: usize,
        location: Option<&Path>,
        encoder: Option<&encode::Encoder>,
    ) -> String {
        let yuv = if width.is_multiple_of(2) && height.is_multiple_of(2) {
            "I420"
        } else {
            "Y444"
        };
        let sink = match self {
            Output::File { path, container } => {
                let loc = location
                    .unwrap_or(path)
                    .to_string_lossy()
                    .replace('"', "\\\"");
                // Written as the muxer gives it: filesink's own 64 KB buffer
                // held an .mkv's first seconds, lost to a `kill -9`.
                let file = format!("filesink location=\"{loc}\" buffer-mode=unbuffered");
                match encoder {
                    Some(e) => format!(
                        "videoconvert ! video/x-raw,format={yuv} ! {} ! {} ! {file}",
                        e.launch(),
                        container.muxer_launch()
                    ),
                    None => format!("videoconvert ! y4menc name=seamstream_enc ! {file}"),
                }
            }
            Output::Display => "videoconvert ! autovideosink".into(),
            Output::Null => "fakesink sync=false".into(),
            Output::Fragment(f) => format!("videoconvert ! {f}"),
        };
        format!("appsrc name=seamstream_out format=time ! {sink}")
    }
}

/// The fastest frame rate taken for one: a rate above it (NVIDIA's
/// decoders read 244200/1 from the timing fields x264 writes for a variable
/// rate) says the stream has no fixed rate.
pub(crate) const MAX_FRAME_RATE: i32 = 1000;

/// The frame rate `rate` (from caps) as the run uses it: itself, or 0/1
/// (variable) where it is none or faster than [`MAX_FRAME_RATE`]. An
/// absurd rate given to the encoder times every frame a few microseconds
/// long, and a join then places the next part on top of the last frame.
pub(crate) fn usable_rate(rate: gst::Fraction) -> gst::Fraction {
    let (n, d) = (rate.numer(), rate.denom());
    if n > 0 && d > 0 && i64::from(n) <= i64::from(MAX_FRAME_RATE) * i64::from(d) {
        rate
    } else {
        gst::Fraction::new(0, 1)
    }
}

/// A timestamp of `sample`'s segment as running time, the clock both
/// output pipelines share: a demuxer that starts its segment past zero
/// (an MP4 edit list) shifts video and audio alike, and the output keeps
/// them in step from zero.
pub(crate) fn running_time(
    sample: &gst::Sample,
    ts: Option<gst::ClockTime>,
) -> Option<gst::ClockTime> {
    let ts = ts?;
    match sample
        .segment()
        .and_then(|s| s.downcast_ref::<gst::ClockTime>())
    {
        Some(segment) => segment.to_running_time(ts).or(Some(ts)),
        None => Some(ts),
    }
}

/// Where a sample's buffer ends in its stream's own time, as the input's
/// stated length counts it: its presentation time in the segment's stream
/// time (an MP4's edit list may start its frames after 0), plus its
/// duration.
pub(crate) fn stream_end(sample: &gst::Sample) -> Option<gst::ClockTime> {
    let b = sample.buffer()?;
    let pts = b.pts()?;
    let at = match sample
        .segment()
        .and_then(|s| s.downcast_ref::<gst::ClockTime>())
    {
        Some(segment) => segment.to_stream_time(pts)?,
        None => pts,
    };
    Some(at + b.duration().unwrap_or(gst::ClockTime::ZERO))
}

/// A new element of `factory`, or an error naming the missing one.
pub(crate) fn element(factory: &str) -> crate::error::Result<gst::Element> {
    gst::ElementFactory::make(factory)
        .build()
        .map_err(|_| crate::error::Error::Pipeline(format!("GStreamer has no `{factory}` element")))
}

/// Whether nothing more will flow in `bin`: it has streaming threads (pad
/// tasks) and every one of them has paused. A task pauses after passing
/// its end on or meeting an error, and a paused one moves nothing more;
/// `false` while any runs, or while the elements change under the look.
pub(crate) fn streaming_stopped(bin: &gst::Bin) -> bool {
    use gst::prelude::*;
    let (mut paused, mut running) = (0, 0);
    for element in bin.iterate_recurse().into_iter() {
        let Ok(element) = element else { return false };
        for pad in element.iterate_pads().into_iter() {
            let Ok(pad) = pad else { return false };
            match pad.task_state() {
                gst::TaskState::Started => running += 1,
                gst::TaskState::Paused => paused += 1,
                _ => {}
            }
        }
    }
    paused > 0 && running == 0
}

/// Tells a pipeline whose streaming stopped with no end and no error:
/// [`streaming_stopped`] seen for [`EndWatch::QUIET`] without a break.
/// parsebin and decodebin hold back the errors of an element they are
/// setting up, and drop them once its setup succeeds; a demuxer that fails
/// within that window (an MP4 cut before its index, on a loaded machine)
/// ends the streaming with nothing posted, and a reader waiting for a
/// frame, an end or an error would wait for good.
#[derive(Default)]
pub(crate) struct EndWatch {
    since: std::sync::Mutex<Option<std::time::Instant>>,
}

impl EndWatch {
    /// Long enough for an end already passed on to be seen first.
    const QUIET: std::time::Duration = std::time::Duration::from_millis(500);

    /// Whether `bin`'s streaming has been stopped for [`Self::QUIET`];
    /// looked at before the reader's end, so that an end passed on before
    /// the stop is seen by then.
    pub fn silent(&self, bin: &gst::Bin) -> bool {
        let Ok(mut since) = self.since.lock() else {
            return false;
        };
        if !streaming_stopped(bin) {
            *since = None;
            return false;
        }
        since.get_or_insert_with(std::time::Instant::now).elapsed() >= Self::QUIET
    }
}

/// A fault for the tests (`SEAMSTREAM_INJECT_SWALLOW_ERRORS`): `pipe`'s
/// errors never reach its bus, as when parsebin or decodebin drops one of
/// an element it was setting up (see [`EndWatch`]).
pub(crate) fn inject_swallowed_errors(pipe: &gst::Pipeline) {
    use gst::prelude::*;
    if crate::fault::given("SEAMSTREAM_INJECT_SWALLOW_ERRORS").is_none() {
        return;
    }
    if let Some(bus) = pipe.bus() {
        bus.set_sync_handler(|_, msg| match msg.view() {
            gst::MessageView::Error(_) => gst::BusSyncReply::Drop,
            _ => gst::BusSyncReply::Pass,
        });
    }
}

/// Links the first video pad that `from` adds to `to`, and sends every
/// other pad to [`discard_pad`].
pub(crate) fn route_first_video(pipe: &gst::Pipeline, from: &gst::Element, to: gst::Pad) {
    use gst::prelude::*;
    let weak = pipe.downgrade();
    from.connect_pad_added(move |_, pad| {
        let is_video = pad
            .current_caps()
            .or_else(|| Some(pad.query_caps(None)))
            .and_then(|c| c.structure(0).map(|s| s.name().starts_with("video/")))
            .unwrap_or(false);
        if is_video && !to.is_linked() {
            let _ = pad.link(&to);
        } else if let Some(pipe) = weak.upgrade() {
            discard_pad(&pipe, pad);
        }
    });
}

/// Sends a stream nobody reads to a fakesink of its own that neither syncs
/// nor waits to preroll, so that the demuxer feeding it never blocks on it.
pub(crate) fn discard_pad(pipe: &gst::Pipeline, pad: &gst::Pad) {
    use gst::prelude::*;
    if let Ok(fake) = gst::ElementFactory::make("fakesink")
        .property("sync", false)
        .property("async", false)
        .build()
        && pipe.add(&fake).is_ok()
        && fake.sync_state_with_parent().is_ok()
        && let Some(p) = fake.static_pad("sink")
    {
        let _ = pad.link(&p);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use gst::prelude::*;

    /// Every byte `videoconvert` gives for `format` converted to `to`,
    /// `n` frames of a moving test picture `w`×`h`, the converter given
    /// as `convert`.
    fn converted(convert: &str, format: &str, (w, h): (u32, u32), to: &str) -> Vec<u8> {
        gst::init().unwrap();
        let pipe = gst::parse::launch(&format!(
            "videotestsrc pattern=ball num-buffers=4 ! video/x-raw,format={format},width={w},height={h} \
             ! {convert} ! video/x-raw,format={to} ! appsink name=out sync=false"
        ))
        .unwrap()
        .downcast::<gst::Pipeline>()
        .unwrap();
        let sink = pipe
            .by_name("out")
            .unwrap()
            .downcast::<gstreamer_app::AppSink>()
            .unwrap();
        pipe.set_state(gst::State::Playing).unwrap();
        let mut bytes = Vec::new();
        while let Ok(sample) = sink.pull_sample() {
            let map = sample.buffer().unwrap().map_readable().unwrap();
            bytes.extend_from_slice(&map);
        }
        pipe.set_state(gst::State::Null).unwrap();
        assert_eq!(bytes.len(), 4 * (w * h * 4) as usize, "{format} → {to}");
        bytes
    }

    #[test]
    fn the_input_conversion_on_every_core_is_one_threads_bytes() {
        // The input's conversion runs on every core ([`CONVERT`]); it
        // must give what one thread gives, the chain's frames unchanged.
        // 16 stripes, odd heights and widths, as decoders give them.
        let many = CONVERT.replace("n-threads=0", "n-threads=16");
        assert_ne!(many, CONVERT, "the conversion sets its threads");
        for (format, size) in [
            ("I420", (638, 361)),
            ("NV12", (640, 362)),
            ("Y42B", (320, 181)),
            ("Y444", (322, 180)),
            ("I420_10LE", (320, 179)),
        ] {
            assert!(
                converted(&many, format, size, "RGBA")
                    == converted("videoconvert n-threads=1", format, size, "RGBA"),
                "{format} {size:?} to RGBA on 16 threads differs from one"
            );
        }
    }

    #[test]
    fn a_rate_faster_than_any_video_is_taken_for_a_variable_one() {
        let f = gst::Fraction::new;
        assert_eq!(usable_rate(f(30000, 1001)), f(30000, 1001));
        assert_eq!(usable_rate(f(1000, 1)), f(1000, 1));
        assert_eq!(usable_rate(f(2001, 2)), f(0, 1));
        assert_eq!(usable_rate(f(244200, 1)), f(0, 1));
        assert_eq!(usable_rate(f(0, 1)), f(0, 1));
    }

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
        // A fragment that holds a URI is a fragment (GStreamer's URI test
        // says no: a scheme has no spaces or `=`).
        assert!(matches!(
            Input::parse("rtspsrc location=rtsp://host/x ! rtph264depay ! avdec_h264").unwrap(),
            Input::Fragment(_)
        ));
        assert!(matches!(
            Input::parse("souphttpsrc location=http://h/v.mp4 ! decodebin").unwrap(),
            Input::Fragment(_)
        ));
        // A file whose name has `=` in it is the file.
        let dir = std::env::temp_dir().join(format!("seamstream-input-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let named = dir.join("is-live=true.mp4");
        std::fs::write(&named, b"x").unwrap();
        let parsed = Input::parse(named.to_str().unwrap());
        let _ = std::fs::remove_dir_all(&dir);
        assert!(
            matches!(&parsed, Ok(Input::Uri { path: Some(_), .. })),
            "{parsed:?}"
        );
        let e = Input::parse("/nonexistent/clip.mp4")
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("/nonexistent/clip.mp4") && e.contains("test:PATTERN"),
            "{e}"
        );
        // A file:// URI is its path: missing, it is said so before the run
        // (it was filesrc's "Resource not found" with its element path).
        let e = Input::parse("file:///nonexistent/clip.mp4")
            .unwrap_err()
            .to_string();
        assert!(e.contains("`/nonexistent/clip.mp4`: no such file"), "{e}");
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
        assert!(e.contains(".mp4, .mkv, .webm or .y4m"), "{e}");
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
