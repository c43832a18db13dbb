//! The video encoder of a file output, chosen and tuned as in ffmpeg: a
//! codec (`--codec h264|h265|vp9|av1`), constant quality by default
//! (`--crf`, each codec on its own scale), or an average bitrate
//! (`--bitrate` in kbit/s), and a speed preset (`--preset`, x264's names).
//!
//! Everything that would only fail once frames flow is checked before the
//! run starts: that GStreamer has the encoder (naming the package that
//! holds it), that the container takes the codec, and that the frame size
//! is within what the encoder and the container take.

use gstreamer as gst;

use super::Container;
use crate::error::{Error, Result};

/// A video codec, with the GStreamer encoder that writes it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Codec {
    H264,
    H265,
    Vp9,
    Av1,
}

/// The speed presets, fastest first (x264's names; ffmpeg's `-preset`).
pub const PRESETS: [&str; 9] = [
    "ultrafast",
    "superfast",
    "veryfast",
    "faster",
    "fast",
    "medium",
    "slow",
    "slower",
    "veryslow",
];

/// The preset when none is given: ffmpeg's.
pub const DEFAULT_PRESET: &str = "medium";

impl Codec {
    pub fn parse(text: &str) -> Result<Self> {
        match text.trim().to_ascii_lowercase().as_str() {
            "h264" | "x264" | "avc" | "libx264" => Ok(Codec::H264),
            "h265" | "x265" | "hevc" | "libx265" => Ok(Codec::H265),
            "vp9" | "libvpx-vp9" => Ok(Codec::Vp9),
            "av1" | "libaom-av1" => Ok(Codec::Av1),
            _ => Err(Error::Unsupported(format!(
                "{}: expected h264, h265, vp9 or av1",
                crate::error::quoted_after("--codec ", text)
            ))),
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Codec::H264 => "h264",
            Codec::H265 => "h265",
            Codec::Vp9 => "vp9",
            Codec::Av1 => "av1",
        }
    }

    /// The GStreamer encoder and the Debian package that holds it.
    pub fn element(self) -> (&'static str, &'static str) {
        match self {
            Codec::H264 => ("x264enc", "gstreamer1.0-plugins-ugly"),
            Codec::H265 => ("x265enc", "gstreamer1.0-plugins-bad"),
            Codec::Vp9 => ("vp9enc", "gstreamer1.0-plugins-good"),
            Codec::Av1 => ("av1enc", "gstreamer1.0-plugins-bad"),
        }
    }

    /// The parser between encoder and muxer (all four are in
    /// gstreamer1.0-plugins-bad's videoparsersbad), and the caps it gives.
    fn parser(self) -> (&'static str, &'static str) {
        match self {
            Codec::H264 => ("h264parse", "video/x-h264"),
            Codec::H265 => ("h265parse", "video/x-h265"),
            Codec::Vp9 => ("vp9parse", "video/x-vp9"),
            Codec::Av1 => ("av1parse", "video/x-av1"),
        }
    }

    /// The quality scale of `--crf`: lowest (best), highest, and the
    /// default (ffmpeg's where it has one).
    pub fn crf_range(self) -> (u32, u32, u32) {
        match self {
            Codec::H264 => (0, 51, 23),
            Codec::H265 => (0, 51, 28),
            Codec::Vp9 => (0, 63, 31),
            Codec::Av1 => (0, 63, 30),
        }
    }

    /// The largest side the encoder takes (measured with GStreamer 1.22:
    /// x264 and libvpx refuse wider frames; x265 and libaom took 20000).
    fn max_side(self) -> usize {
        match self {
            Codec::H264 | Codec::Vp9 => 16384,
            Codec::H265 | Codec::Av1 => 65536,
        }
    }

    /// The codec a container takes when none is asked for.
    pub fn default_for(container: Container) -> Self {
        match container {
            Container::Webm => Codec::Vp9,
            _ => Codec::H264,
        }
    }
}

/// How the encoder spends bits.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Rate {
    /// Constant quality on the codec's scale (x264's CRF).
    Crf(u32),
    /// An average bitrate in kbit/s.
    Bitrate(u32),
}

/// What the user asked of the encoder; anything left out takes the
/// codec's default.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct EncoderChoice {
    pub codec: Option<Codec>,
    pub crf: Option<u32>,
    pub bitrate: Option<u32>,
    pub preset: Option<String>,
}

impl EncoderChoice {
    fn is_default(&self) -> bool {
        *self == EncoderChoice::default()
    }

    /// The encoder for `container`, every choice checked.
    pub fn resolve(&self, container: Container) -> Result<Option<Encoder>> {
        if container == Container::Y4m {
            if !self.is_default() {
                return Err(Error::Unsupported(
                    "a .y4m file holds raw frames: --codec, --crf, --bitrate and --preset \
                     apply to .mp4, .mkv and .webm outputs"
                        .into(),
                ));
            }
            return Ok(None);
        }
        let codec = self.codec.unwrap_or(Codec::default_for(container));
        let rate = match (self.crf, self.bitrate) {
            (Some(_), Some(_)) => {
                return Err(Error::Unsupported(
                    "--crf and --bitrate both given: choose constant quality (--crf) or an \
                     average bitrate (--bitrate)"
                        .into(),
                ));
            }
            (None, Some(0)) => {
                return Err(Error::Unsupported(
                    "`--bitrate 0`: give kbit/s, e.g. --bitrate 4000 for 1080p".into(),
                ));
            }
            (None, Some(b)) => Rate::Bitrate(b),
            (Some(c), None) => {
                let (lo, hi, _) = codec.crf_range();
                if !(lo..=hi).contains(&c) {
                    return Err(Error::Unsupported(format!(
                        "`--crf {c}`: {} takes {lo} (best) to {hi} (smallest)",
                        codec.name()
                    )));
                }
                Rate::Crf(c)
            }
            (None, None) => Rate::Crf(codec.crf_range().2),
        };
        let preset = match &self.preset {
            None => DEFAULT_PRESET,
            Some(p) => PRESETS
                .iter()
                .copied()
                .find(|&name| name == p.trim().to_ascii_lowercase())
                .ok_or_else(|| {
                    Error::Unsupported(format!(
                        "{}: expected one of {}",
                        crate::error::quoted_after("--preset ", p),
                        PRESETS.join(", ")
                    ))
                })?,
        };
        Ok(Some(Encoder {
            codec,
            rate,
            preset,
            container,
        }))
    }
}

/// A resolved encoder for one container.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Encoder {
    pub codec: Codec,
    pub rate: Rate,
    pub preset: &'static str,
    pub container: Container,
}

impl Encoder {
    /// Checks, before any work, that GStreamer has the encoder and its
    /// parser, that the container takes the codec, and that `w`×`h` frames
    /// are within what both take.
    pub fn check(&self, w: usize, h: usize) -> Result<()> {
        let (element, package) = self.codec.element();
        let (parser, caps_name) = self.codec.parser();
        for (name, package) in [(element, package), (parser, "gstreamer1.0-plugins-bad")] {
            if gst::ElementFactory::find(name).is_none() {
                return Err(Error::Unsupported(format!(
                    "{} output needs GStreamer's `{name}`, which is not installed; install \
                     {package} (or choose another --codec)",
                    self.codec.name()
                )));
            }
        }
        let takes = muxer_takes(self.container, caps_name);
        let ext = self.container.extension();
        let Some((min_w, min_h)) = takes else {
            let others: Vec<&str> = [Codec::H264, Codec::H265, Codec::Vp9, Codec::Av1]
                .into_iter()
                .filter(|c| muxer_takes(self.container, c.parser().1).is_some())
                .map(Codec::name)
                .collect();
            return Err(Error::Unsupported(format!(
                "a .{ext} file cannot hold {}; use --codec {}, or another container",
                self.codec.name(),
                others.join(" or ")
            )));
        };
        let max = self.codec.max_side();
        if w < min_w || h < min_h || w > max || h > max {
            return Err(Error::Unsupported(format!(
                "the output frames are {w}x{h}; {} in .{ext} takes from {min_w}x{min_h} to \
                 {max}x{max} (write .y4m for other sizes, or change the chain's output size)",
                self.codec.name()
            )));
        }
        Ok(())
    }

    /// The gst-launch description from raw frames to the muxer's input.
    pub fn launch(&self) -> String {
        let (element, _) = self.codec.element();
        let (parser, _) = self.codec.parser();
        let speed = PRESETS.iter().position(|&p| p == self.preset).unwrap_or(5);
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
        let settings = match (self.codec, self.rate) {
            // x264's "qual" pass is its CRF, taken from `quantizer`.
            (Codec::H264, Rate::Crf(q)) => format!("pass=qual quantizer={q}"),
            (Codec::H264, Rate::Bitrate(b)) => format!("bitrate={b}"),
            (Codec::H265, Rate::Crf(q)) => format!("option-string=\"crf={q}\""),
            (Codec::H265, Rate::Bitrate(b)) => format!("bitrate={b}"),
            // libvpx's constant-quality mode is "cq", capped by a bitrate
            // set high enough never to bind.
            (Codec::Vp9, Rate::Crf(q)) => {
                format!("end-usage=cq cq-level={q} target-bitrate=200000000")
            }
            (Codec::Vp9, Rate::Bitrate(b)) => {
                format!("end-usage=vbr target-bitrate={}", b as u64 * 1000)
            }
            // av1enc has no CRF setting: a constant quantizer stands in.
            (Codec::Av1, Rate::Crf(q)) => {
                format!("end-usage=q min-quantizer={q} max-quantizer={q}")
            }
            (Codec::Av1, Rate::Bitrate(b)) => format!("end-usage=vbr target-bitrate={b}"),
        };
        let preset = match self.codec {
            Codec::H264 | Codec::H265 => format!("speed-preset={}", self.preset),
            // libvpx: cpu-used 8 (fastest) … 0, in real-time mode.
            Codec::Vp9 => format!(
                "cpu-used={} deadline=1 row-mt=true threads={threads}",
                [8, 8, 7, 6, 5, 4, 2, 1, 0][speed]
            ),
            // libaom: cpu-used 9 (fastest) … 1.
            Codec::Av1 => format!(
                "cpu-used={} row-mt=true threads={threads}",
                [9, 9, 8, 8, 7, 6, 4, 2, 1][speed]
            ),
        };
        // No B-frames in H.264: every frame leaves the encoder in order,
        // which keeps a live output within a frame of its input.
        let extra = if self.codec == Codec::H264 {
            " bframes=0"
        } else {
            ""
        };
        format!("{element} name=seamstream_enc {settings} {preset}{extra} ! {parser}")
    }

    /// As the summary tells it, e.g. `h264 (x264enc, crf 23, medium)`.
    pub fn describe(&self) -> String {
        let rate = match self.rate {
            Rate::Crf(q) => format!("crf {q}"),
            Rate::Bitrate(b) => format!("{b} kbit/s"),
        };
        format!(
            "{} ({}, {rate}, {})",
            self.codec.name(),
            self.codec.element().0,
            self.preset
        )
    }
}

/// The smallest width and height `container`'s muxer takes on its video pads for caps named
/// `caps_name` (e.g. `video/x-h264`); `None` if it takes no such stream.
pub(crate) fn muxer_takes(container: Container, caps_name: &str) -> Option<(usize, usize)> {
    let caps = container.muxer_takes("video")?;
    let s = caps.iter().find(|s| s.name() == caps_name)?;
    let min = |field: &str| -> usize {
        s.get::<gst::IntRange<i32>>(field)
            .map(|r| r.min().max(1) as usize)
            .unwrap_or(1)
    };
    Some((min("width"), min("height")))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codecs_take_ffmpegs_names_and_a_bad_one_is_named() {
        assert_eq!(Codec::parse("libx264").unwrap(), Codec::H264);
        assert_eq!(Codec::parse("HEVC").unwrap(), Codec::H265);
        assert_eq!(Codec::parse("vp9").unwrap(), Codec::Vp9);
        let e = Codec::parse("mpeg2").unwrap_err().to_string();
        assert!(
            e.contains("mpeg2") && e.contains("h264, h265, vp9 or av1"),
            "{e}"
        );
    }

    #[test]
    fn defaults_follow_the_container_and_ffmpeg() {
        let e = EncoderChoice::default()
            .resolve(Container::Mp4)
            .unwrap()
            .unwrap();
        assert_eq!(
            (e.codec, e.rate, e.preset),
            (Codec::H264, Rate::Crf(23), "medium")
        );
        let e = EncoderChoice::default()
            .resolve(Container::Webm)
            .unwrap()
            .unwrap();
        assert_eq!((e.codec, e.rate), (Codec::Vp9, Rate::Crf(31)));
        assert_eq!(
            EncoderChoice::default().resolve(Container::Y4m).unwrap(),
            None
        );
    }

    #[test]
    fn bad_choices_name_the_value_and_the_range() {
        let choice = |crf, bitrate, preset: Option<&str>| EncoderChoice {
            codec: Some(Codec::H264),
            crf,
            bitrate,
            preset: preset.map(Into::into),
        };
        let e = choice(Some(52), None, None)
            .resolve(Container::Mp4)
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("--crf 52") && e.contains("0 (best) to 51"),
            "{e}"
        );
        let e = choice(Some(20), Some(900), None)
            .resolve(Container::Mkv)
            .unwrap_err()
            .to_string();
        assert!(e.contains("--crf and --bitrate"), "{e}");
        let e = choice(None, None, Some("ludicrous"))
            .resolve(Container::Mp4)
            .unwrap_err()
            .to_string();
        assert!(e.contains("ludicrous") && e.contains("veryfast"), "{e}");
        let e = choice(None, Some(800), None)
            .resolve(Container::Y4m)
            .unwrap_err()
            .to_string();
        assert!(e.contains(".y4m"), "{e}");
    }

    #[test]
    fn container_and_size_limits_are_known_before_the_run() {
        gst::init().unwrap();
        let enc = |codec, container| Encoder {
            codec,
            rate: Rate::Crf(30),
            preset: "medium",
            container,
        };
        // mp4mux takes H.264 from 16x16 (an 8x8 stream stalled the old run).
        let e = enc(Codec::H264, Container::Mp4)
            .check(8, 8)
            .unwrap_err()
            .to_string();
        assert!(e.contains("8x8") && e.contains("16x16"), "{e}");
        let e = enc(Codec::H264, Container::Mp4)
            .check(20000, 64)
            .unwrap_err()
            .to_string();
        assert!(e.contains("20000x64") && e.contains("16384"), "{e}");
        assert!(enc(Codec::H264, Container::Mp4).check(16, 16).is_ok());
        let e = enc(Codec::H264, Container::Webm)
            .check(64, 64)
            .unwrap_err()
            .to_string();
        assert!(e.contains(".webm") && e.contains("vp9"), "{e}");
    }
}
