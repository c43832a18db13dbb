//! Audio beside the video, as ffmpeg's `-c:a copy` habit expects: each
//! audio stream of a file input goes to a file output untouched when the
//! container takes its codec, and is re-encoded when it does not (AAC for
//! .mp4, Opus for .mkv and .webm), with its timestamps, so it stays in sync
//! with the video frames, whose timestamps the chain keeps.
//!
//! The input pipeline's `uridecodebin` stops at encoded audio
//! ([`ENCODED_AUDIO`]); each audio pad feeds an appsink, whose samples go
//! to an appsrc in the output pipeline. The output is built on the first
//! video frame, so samples that come earlier wait in the [`Bridge`].

use std::sync::{Arc, Mutex};

use gst::prelude::*;
use gstreamer as gst;
use gstreamer_app as gst_app;

use super::Container;
use crate::error::{Error, Result};

/// The encoded audio that `uridecodebin` hands over undecoded.
pub const ENCODED_AUDIO: &str = "audio/mpeg; audio/x-ac3; audio/x-eac3; audio/x-opus; \
     audio/x-vorbis; audio/x-flac; audio/x-alac; audio/x-dts; audio/AMR; audio/AMR-WB";

/// What happened to one input stream, for the summary.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StreamReport {
    /// `video`, `audio`, or the caps' media type.
    pub kind: String,
    /// The stream as the input gave it, e.g. `aac 44100 Hz 2 ch`.
    pub what: String,
    /// What the run did with it.
    pub action: String,
}

/// One audio stream on its way from the input to the output.
struct Stream {
    caps: gst::Caps,
    pending: Vec<gst::Sample>,
    /// Following the video ([`Bridge::follow_video`]): samples at or past
    /// the video's time so far, held until it gets there.
    held: std::collections::VecDeque<gst::Sample>,
    /// The input's stream has ended (its end goes on once nothing is held).
    input_ended: bool,
    src: Option<gst_app::AppSrc>,
    ended: bool,
    action: String,
}

#[derive(Default)]
struct State {
    streams: Vec<Stream>,
    /// Set when the run ends: later samples are dropped.
    closed: bool,
    /// Following the video: the running time it has reached (`None` before
    /// its first frame), and where it was cut, if it was.
    follow: Option<Follow>,
    /// Where the latest audio sample taken ends, in its stream's time.
    end: Option<gst::ClockTime>,
}

#[derive(Clone, Copy, Debug, Default)]
struct Follow {
    reached: Option<gst::ClockTime>,
    cut: Option<gst::ClockTime>,
}

/// A sample's time (its running time, as [`Bridge::take`] sets it).
fn sample_time(sample: &gst::Sample) -> Option<gst::ClockTime> {
    sample.buffer().and_then(|b| b.pts())
}

impl Stream {
    /// Passes `sample` on to the output, or keeps it until the output
    /// exists.
    fn pass(&mut self, sample: gst::Sample) {
        match &self.src {
            // The appsrc queues without bound (compressed audio is small,
            // and the demuxer interleaves it with the video it waits on).
            Some(src) => {
                let _ = src.push_sample(&sample);
            }
            None => self.pending.push(sample),
        }
    }

    /// Passes on the held samples before `t`; with `cut`, drops the rest
    /// and ends the stream. A stream whose input has ended ends once
    /// nothing is held.
    fn release(&mut self, t: gst::ClockTime, cut: bool) {
        while let Some(s) = self.held.front() {
            if sample_time(s).is_some_and(|p| p >= t) {
                break;
            }
            let s = self.held.pop_front().expect("a front sample");
            self.pass(s);
        }
        if cut {
            self.held.clear();
        }
        if cut || (self.input_ended && self.held.is_empty()) {
            self.end();
        }
    }

    fn end(&mut self) {
        if self.ended {
            return;
        }
        self.ended = true;
        if let Some(src) = &self.src {
            let _ = src.end_of_stream();
        }
    }
}

/// The input's audio streams, carried to the output. Cheap to clone.
#[derive(Clone, Default)]
pub struct Bridge {
    state: Arc<Mutex<State>>,
    /// Why audio is not carried (`--no-audio`, an output with no audio),
    /// or `None` to carry it.
    drop_reason: Option<String>,
}

impl Bridge {
    /// A bridge for an output that takes audio, or that drops it for
    /// `drop_reason`.
    pub fn new(drop_reason: Option<String>) -> Self {
        Bridge {
            state: Arc::default(),
            drop_reason,
        }
    }

    /// Links each audio pad that `decodebin` (the input's uridecodebin)
    /// adds to an appsink feeding this bridge; other pads are reported as
    /// dropped when they are not video.
    pub fn attach(&self, pipe: &gst::Pipeline, decodebin: &gst::Element) {
        let bridge = self.clone();
        let pipe = pipe.downgrade();
        decodebin.connect_pad_added(move |_, pad| {
            let Some(pipe) = pipe.upgrade() else { return };
            let caps = pad.current_caps().unwrap_or_else(|| pad.query_caps(None));
            let Some(name) = caps.structure(0).map(|s| s.name().to_string()) else {
                return;
            };
            if !name.starts_with("audio/") {
                return;
            }
            let index = bridge.add_stream(caps);
            if bridge.drop_reason.is_some() {
                return;
            }
            if let Err(e) = bridge.link_sink(&pipe, pad, index) {
                bridge.set_action(index, format!("dropped: {e}"));
            }
        });
    }

    fn add_stream(&self, caps: gst::Caps) -> usize {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let action = self
            .drop_reason
            .clone()
            .map_or_else(|| "waiting".to_string(), |r| format!("dropped: {r}"));
        s.streams.push(Stream {
            caps,
            pending: Vec::new(),
            held: Default::default(),
            input_ended: false,
            src: None,
            ended: false,
            action,
        });
        s.streams.len() - 1
    }

    /// The input's audio streams found, and where the audio read from
    /// them ends (in its streams' time; `None` where none was read, as
    /// when audio is dropped).
    pub fn extent(&self) -> (usize, Option<gst::ClockTime>) {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        (s.streams.len(), s.end)
    }

    fn set_action(&self, index: usize, action: String) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = s.streams.get_mut(index) {
            st.action = action;
        }
    }

    fn link_sink(&self, pipe: &gst::Pipeline, pad: &gst::Pad, index: usize) -> Result<()> {
        let sink = gst_app::AppSink::builder()
            .name(format!("seamstream_audio_in{index}"))
            .sync(false)
            .build();
        let (on_sample, on_eos) = (self.clone(), self.clone());
        sink.set_callbacks(
            gst_app::AppSinkCallbacks::builder()
                .new_sample(move |sink| {
                    let sample = sink.pull_sample().map_err(|_| gst::FlowError::Eos)?;
                    on_sample.take(index, sample);
                    Ok(gst::FlowSuccess::Ok)
                })
                .eos(move |_| on_eos.end(index))
                .build(),
        );
        pipe.add(&sink)
            .map_err(|e| crate::gst::gst_call("cannot add an audio sink", e))?;
        sink.sync_state_with_parent()
            .map_err(|e| crate::gst::gst_call("cannot start an audio sink", e))?;
        pad.link(
            &sink
                .static_pad("sink")
                .ok_or_else(|| Error::Pipeline("an audio sink has no pad".into()))?,
        )
        .map_err(|e| Error::Pipeline(format!("cannot link the audio stream: {e:?}")))?;
        Ok(())
    }

    /// A sample from the input, its timestamps made running time (see
    /// [`super::running_time`]): on to the output, or kept until it
    /// exists.
    fn take(&self, index: usize, sample: gst::Sample) {
        // Where it ends in its stream's time, before the times are made
        // running time.
        let end = super::stream_end(&sample);
        let sample = match sample.buffer() {
            Some(b) => {
                let mut b = b.copy();
                let buffer = b.make_mut();
                let pts = super::running_time(&sample, buffer.pts());
                let dts = buffer.dts().and_then(|t| {
                    sample
                        .segment()
                        .and_then(|s| s.downcast_ref::<gst::ClockTime>())
                        .and_then(|s| s.to_running_time(t))
                });
                buffer.set_pts(pts);
                buffer.set_dts(dts);
                let caps = sample.caps_owned();
                let mut builder = gst::Sample::builder().buffer(&b);
                if let Some(caps) = &caps {
                    builder = builder.caps(caps);
                }
                builder.build()
            }
            None => return,
        };
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.end = s.end.max(end);
        if s.closed {
            return;
        }
        let follow = s.follow;
        let Some(st) = s.streams.get_mut(index) else {
            return;
        };
        if st.ended {
            return;
        }
        match (follow, sample_time(&sample)) {
            // Past the cut: the stream is over.
            (Some(Follow { cut: Some(c), .. }), Some(t)) if t >= c => st.release(c, true),
            (Some(Follow { cut: Some(_), .. }), _) => st.pass(sample),
            // Ahead of the video (or before its first frame): held.
            (Some(Follow { reached, .. }), t)
                if !st.held.is_empty() || reached.is_none_or(|r| t.is_none_or(|t| t >= r)) =>
            {
                st.held.push_back(sample)
            }
            _ => st.pass(sample),
        }
    }

    /// The input's stream `index` has ended: so does the output's, once
    /// what is held for the video has gone on (or been cut).
    fn end(&self, index: usize) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(st) = s.streams.get_mut(index) {
            st.input_ended = true;
            if st.held.is_empty() {
                st.end();
            }
        }
    }

    /// The video has ended without a cut: what is held goes on, and the
    /// audio is no longer held.
    pub fn video_ended(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if s.follow.is_none_or(|f| f.cut.is_some()) {
            return;
        }
        s.follow = None;
        for st in &mut s.streams {
            st.release(gst::ClockTime::MAX, false);
        }
    }

    /// Makes the audio follow the video: a sample goes on only once the
    /// video has reached its time ([`Bridge::video_reached`]), so that a
    /// cut of the video ([`Bridge::cut`]) cuts the audio at the same time.
    pub fn follow_video(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.follow.get_or_insert_with(Follow::default);
    }

    /// The video has been taken up to running time `t` (a frame's end):
    /// the audio before it goes on.
    pub fn video_reached(&self, t: gst::ClockTime) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(f) = s.follow.as_mut() else {
            return;
        };
        if f.cut.is_some() || f.reached.is_some_and(|r| r >= t) {
            return;
        }
        f.reached = Some(t);
        for st in &mut s.streams {
            st.release(t, false);
        }
    }

    /// The video ends at running time `t`: the audio before it goes on, the
    /// rest is dropped, and every audio stream ends there (those still
    /// short of `t` end when their next sample reaches it, or with the
    /// input).
    pub fn cut(&self, t: gst::ClockTime) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(f) = s.follow.as_mut() else {
            return;
        };
        f.cut = Some(t);
        for st in &mut s.streams {
            let past = st.held.back().and_then(sample_time).is_some_and(|p| p >= t);
            st.release(t, past);
        }
    }

    /// Adds a branch per audio stream to the output pipeline, into its
    /// muxer `seamstream_mux` (a `container` file): a copy when the muxer
    /// takes the codec, else decoded and re-encoded. Call before the output
    /// starts; samples that came before are pushed in.
    pub fn connect_output(&self, pipe: &gst::Pipeline, container: Container) -> Result<()> {
        if self.drop_reason.is_some() {
            return Ok(());
        }
        let mux = pipe
            .by_name("seamstream_mux")
            .ok_or_else(|| Error::Pipeline("the output has no muxer".into()))?;
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        for (i, st) in s.streams.iter_mut().enumerate() {
            if st.action.starts_with("dropped") {
                continue;
            }
            let copy = muxer_takes_audio(container, &st.caps);
            let (branch, action) = if copy {
                ("identity".to_string(), "copied".to_string())
            } else {
                let (enc, name) = audio_encoder(container).ok_or_else(|| {
                    Error::Unsupported(format!(
                        "the input's {} audio must be re-encoded for .{}, and no encoder \
                         for it is installed (install gstreamer1.0-plugins-base for Opus, \
                         gstreamer1.0-libav for AAC), or use --no-audio",
                        describe_caps(&st.caps),
                        container.extension()
                    ))
                })?;
                (
                    format!("decodebin ! audioconvert ! audioresample ! {enc}"),
                    format!(
                        "re-encoded to {name}: .{} does not take it",
                        container.extension()
                    ),
                )
            };
            let bin = branch_bin(&format!("queue name=first ! {branch} name=last"))?;
            let src = gst_app::AppSrc::builder()
                .name(format!("seamstream_audio_out{i}"))
                .caps(&st.caps)
                .format(gst::Format::Time)
                .max_bytes(0)
                .build();
            pipe.add_many([src.upcast_ref::<gst::Element>(), bin.upcast_ref()])
                .map_err(|e| crate::gst::gst_call("cannot add the audio branch", e))?;
            src.link(&bin)
                .map_err(|e| crate::gst::gst_call("cannot link the audio branch", e))?;
            let mux_pad = mux.request_pad_simple("audio_%u").ok_or_else(|| {
                Error::Pipeline(format!("{} takes no audio stream", container.muxer()))
            })?;
            bin.static_pad("src")
                .ok_or_else(|| Error::Pipeline("the audio branch has no output".into()))?
                .link(&mux_pad)
                .map_err(|e| {
                    Error::Pipeline(format!(
                        "the muxer would not take the {} audio: {e:?}",
                        describe_caps(&st.caps)
                    ))
                })?;
            for sample in st.pending.drain(..) {
                let _ = src.push_sample(&sample);
            }
            if st.ended {
                let _ = src.end_of_stream();
            }
            st.src = Some(src);
            st.action = action;
        }
        Ok(())
    }

    /// Ends every audio stream in the output (a stop or a failure: no more
    /// input comes), so the muxer can finish.
    pub fn close(&self) {
        let mut s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.closed = true;
        for st in &s.streams {
            if let Some(src) = &st.src {
                let _ = src.end_of_stream();
            }
        }
    }

    /// The audio streams and what happened to each.
    pub fn reports(&self) -> Vec<StreamReport> {
        let s = self.state.lock().unwrap_or_else(|e| e.into_inner());
        s.streams
            .iter()
            .map(|st| StreamReport {
                kind: "audio".into(),
                what: describe_caps(&st.caps),
                action: if st.action == "waiting" {
                    "dropped: the output never started".into()
                } else {
                    st.action.clone()
                },
            })
            .collect()
    }
}

/// A bin of `description`, whose elements `first` and `last` give its
/// pads. (Ghosting the unlinked pads would take a pad that decodebin links
/// only once it knows the stream.)
fn branch_bin(description: &str) -> Result<gst::Bin> {
    let bad = |e: String| Error::Pipeline(format!("cannot build `{description}`: {e}"));
    let bin =
        gst::parse::bin_from_description(description, false).map_err(|e| bad(e.to_string()))?;
    for (element, pad) in [("first", "sink"), ("last", "src")] {
        let target = bin
            .by_name(element)
            .and_then(|e| e.static_pad(pad))
            .ok_or_else(|| bad(format!("no {pad} pad")))?;
        let ghost = gst::GhostPad::builder_with_target(&target)
            .map_err(|e| bad(e.to_string()))?
            .name(pad)
            .build();
        bin.add_pad(&ghost).map_err(|e| bad(e.to_string()))?;
    }
    Ok(bin)
}

/// Whether `container`'s muxer takes audio of `caps` as it is.
fn muxer_takes_audio(container: Container, caps: &gst::Caps) -> bool {
    container
        .muxer_takes("audio")
        .is_some_and(|takes| takes.can_intersect(caps))
}

/// The first installed audio encoder for `container`, as a launch
/// fragment, and its codec's name.
fn audio_encoder(container: Container) -> Option<(&'static str, &'static str)> {
    let choices: &[(&str, &str, &str)] = match container {
        Container::Mp4 => &[
            ("avenc_aac", "avenc_aac bitrate=192000", "AAC"),
            ("voaacenc", "voaacenc bitrate=192000", "AAC"),
            ("fdkaacenc", "fdkaacenc", "AAC"),
            ("opusenc", "opusenc bitrate=128000", "Opus"),
        ],
        Container::Mkv | Container::Webm => &[
            ("opusenc", "opusenc bitrate=128000", "Opus"),
            ("vorbisenc", "vorbisenc", "Vorbis"),
        ],
        Container::Y4m => &[],
    };
    choices
        .iter()
        .find(|(element, ..)| gst::ElementFactory::find(element).is_some())
        .map(|&(_, launch, name)| (launch, name))
}

/// Caps as a person reads them: `aac 48000 Hz 2 ch`, `vorbis 44100 Hz 1 ch`.
pub fn describe_caps(caps: &gst::Caps) -> String {
    let Some(s) = caps.structure(0) else {
        return "unknown".into();
    };
    let codec = match s.name().as_str() {
        "audio/mpeg" => match s.get::<i32>("mpegversion") {
            Ok(1) => "mp3".to_string(),
            _ => "aac".to_string(),
        },
        "audio/x-raw" => "pcm".into(),
        name => name
            .trim_start_matches("audio/")
            .trim_start_matches("x-")
            .to_string(),
    };
    let mut text = codec;
    if let Ok(rate) = s.get::<i32>("rate") {
        text.push_str(&format!(" {rate} Hz"));
    }
    if let Ok(ch) = s.get::<i32>("channels") {
        text.push_str(&format!(" {ch} ch"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn containers_take_what_their_muxers_take() {
        gst::init().unwrap();
        let aac: gst::Caps = "audio/mpeg,mpegversion=4,stream-format=raw,rate=44100,channels=2"
            .parse()
            .unwrap();
        let vorbis: gst::Caps = "audio/x-vorbis,rate=44100,channels=1".parse().unwrap();
        assert!(muxer_takes_audio(Container::Mp4, &aac));
        assert!(muxer_takes_audio(Container::Mkv, &aac));
        assert!(!muxer_takes_audio(Container::Webm, &aac));
        assert!(muxer_takes_audio(Container::Webm, &vorbis));
        assert!(!muxer_takes_audio(Container::Mp4, &vorbis));
        assert_eq!(describe_caps(&aac), "aac 44100 Hz 2 ch");
        assert_eq!(describe_caps(&vorbis), "vorbis 44100 Hz 1 ch");
    }
}
