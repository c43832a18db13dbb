//! `seamstreamnvdec`: H.264 and H.265 decoded on NVIDIA's hardware decoder
//! in the pipeline's own CUDA context ([`seamstream_cuda::nvdec`]), frames
//! handed on as NV12 in CUDA memory (`video/x-raw(memory:CUDAMemory)`), or
//! in system memory where the next element takes no CUDA memory.
//!
//! `run` on a GPU registers it ([`register`]) above GStreamer's own NVIDIA
//! decoders, so that decodebin takes it first and GStreamer's NVIDIA plugin
//! is never loaded: that plugin probes every GPU, with a CUDA context and
//! encoder sessions on each, before its first frame (1.8 s on an H200 alone,
//! 4–5 s when four of a split job's workers start at once). Streams it does
//! not take (10-bit, 4:2:2, 4:4:4: refused in its caps where the profile
//! says so) go to the next decoder by rank, as before.
//! `SEAMSTREAM_NVDEC=0` turns it off ([`register`]).
//!
//! On input that is not live it lets the hardware run up to four pictures
//! ahead of the one being handed on (`display-delay`, NVIDIA's advice for
//! throughput); on live input it shows each picture as soon as it is
//! decoded, adding no latency.
//!
//! It hands on CUDA memory in a pipeline that was given its CUDA context
//! before it started (`run`'s, which wants device frames) and whose next
//! element takes it, or where the next element takes nothing else;
//! elsewhere (decodebin before a converter, in the library's own decoding
//! pipelines) system memory.

use std::sync::{Mutex, OnceLock};

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_video as gst_video;
use gstreamer_video::prelude::*;
use gstreamer_video::subclass::prelude::*;

use crate::cuda::nvdec::{self, Codec, NvDecoder, Picture};

use crate::gst::cuda::{self as gcuda, ContextSlot};
use crate::planes::DevicePlane;

/// The element's factory name.
pub const NAME: &str = "seamstreamnvdec";

/// The order in which pending frames take the pictures the decoder shows:
/// by presentation time; a frame without one by its decode time, which is
/// where it would be shown (a frame whose picture is not reordered) or
/// before; one without either after them, by arrival. A frame without a
/// presentation time used to go after every timed one: a file `run` made
/// from an AVI with untimed frames had six such frames, each picture after
/// the first of them was handed to the next frame, the times went wrong,
/// and the last three frames were lost (267 of 270 handed on).
fn due(
    pts: Option<gst::ClockTime>,
    dts: Option<gst::ClockTime>,
    number: u32,
) -> (bool, Option<gst::ClockTime>, u32) {
    let at = pts.or(dts);
    (at.is_none(), at, number)
}

glib::wrapper! {
    /// The decoder element.
    pub struct NvDec(ObjectSubclass<imp::NvDec>)
        @extends gst_video::VideoDecoder, gst::Element, gst::Object;
}

/// Registers the decoder for `run`, unless turned off (`SEAMSTREAM_NVDEC=0`,
/// which leaves decoding to GStreamer's NVIDIA decoders), where NVIDIA's
/// decoder library and GStreamer's CUDA library are there; whether it is
/// registered. Its rank is then above GStreamer's NVIDIA decoders
/// (`PRIMARY + 2`), so decodebin takes it first.
pub fn register() -> bool {
    std::env::var("SEAMSTREAM_NVDEC").map_or(true, |v| v != "0")
        && register_with(gst::Rank::PRIMARY + 2)
}

/// Registers the decoder (once for the process, statically, at the rank of
/// the first call) where NVIDIA's decoder library and GStreamer's CUDA
/// library are there; whether it is registered. `gst::Rank::NONE` keeps it
/// out of decodebin's choice (for pipelines that name it).
pub fn register_with(rank: gst::Rank) -> bool {
    static DONE: OnceLock<bool> = OnceLock::new();
    *DONE.get_or_init(|| {
        if nvdec::available().is_err() || gst::init().is_err() || !gcuda::available() {
            return false;
        }
        gcuda::init_memory();
        gst::Element::register(None, NAME, rank, NvDec::static_type()).is_ok()
    })
}

/// Pictures held before the first is shown on input that is not live.
const DEFAULT_DISPLAY_DELAY: u32 = 4;
/// The most the property takes.
const MAX_DISPLAY_DELAY: u32 = 8;

mod imp {
    use super::*;

    /// The negotiated output: its info and whether it is CUDA memory, with
    /// the pool of CUDA memory it is taken from.
    struct Output {
        info: gst_video::VideoInfo,
        pool: Option<gst::BufferPool>,
    }

    pub struct NvDec {
        slot: ContextSlot,
        /// Whether the pipeline gave its CUDA context before the start
        /// (rather than one made for the element): CUDA memory out only then.
        context_given: std::sync::atomic::AtomicBool,
        codec: Mutex<Option<Codec>>,
        decoder: Mutex<Option<NvDecoder>>,
        input: Mutex<
            Option<gst_video::VideoCodecState<'static, gst_video::video_codec_state::Readable>>,
        >,
        output: Mutex<Option<Output>>,
        /// The `display-delay` property: -1 for the default.
        display_delay: std::sync::atomic::AtomicI32,
    }

    impl Default for NvDec {
        fn default() -> Self {
            NvDec {
                slot: ContextSlot::default(),
                context_given: Default::default(),
                codec: Mutex::new(None),
                decoder: Mutex::new(None),
                input: Mutex::new(None),
                output: Mutex::new(None),
                display_delay: std::sync::atomic::AtomicI32::new(-1),
            }
        }
    }

    #[glib::object_subclass]
    impl ObjectSubclass for NvDec {
        const NAME: &'static str = "GstSeamstreamNvDec";
        type Type = super::NvDec;
        type ParentType = gst_video::VideoDecoder;
    }

    impl ObjectImpl for NvDec {
        fn constructed(&self) {
            self.parent_constructed();
            self.obj().set_packetized(true);
        }

        fn properties() -> &'static [glib::ParamSpec] {
            static P: OnceLock<Vec<glib::ParamSpec>> = OnceLock::new();
            P.get_or_init(|| {
                vec![
                    glib::ParamSpecInt::builder("display-delay")
                        .nick("Display delay")
                        .blurb(
                            "Decoded pictures held before the first is handed on: more lets the \
                         hardware run ahead (throughput), 0 adds no latency; -1: 0 on live \
                         input, else 4 (or SEAMSTREAM_NVDEC_DELAY)",
                        )
                        .minimum(-1)
                        .maximum(MAX_DISPLAY_DELAY as i32)
                        .default_value(-1)
                        .mutable_ready()
                        .build(),
                ]
            })
        }

        fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
            if pspec.name() == "display-delay" {
                let v = value.get::<i32>().unwrap_or(-1);
                self.display_delay
                    .store(v, std::sync::atomic::Ordering::Relaxed);
            }
        }

        fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
            match pspec.name() {
                "display-delay" => self
                    .display_delay
                    .load(std::sync::atomic::Ordering::Relaxed)
                    .to_value(),
                _ => unimplemented!("no property {}", pspec.name()),
            }
        }
    }

    impl GstObjectImpl for NvDec {}

    impl ElementImpl for NvDec {
        fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
            static M: OnceLock<gst::subclass::ElementMetadata> = OnceLock::new();
            Some(M.get_or_init(|| {
                gst::subclass::ElementMetadata::new(
                    "seamstream NVIDIA decoder",
                    "Codec/Decoder/Video/Hardware",
                    "H.264 and H.265 on NVIDIA's hardware decoder, in the pipeline's CUDA context",
                    "seamstream",
                )
            }))
        }

        fn pad_templates() -> &'static [gst::PadTemplate] {
            static T: OnceLock<Vec<gst::PadTemplate>> = OnceLock::new();
            T.get_or_init(|| {
                let mut sink = gst::Caps::builder("video/x-h264")
                    .field("stream-format", "byte-stream")
                    .field("alignment", "au")
                    .field(
                        "profile",
                        gst::List::new([
                            "constrained-baseline",
                            "baseline",
                            "main",
                            "high",
                            "constrained-high",
                            "progressive-high",
                        ]),
                    )
                    .build();
                sink.merge(
                    gst::Caps::builder("video/x-h265")
                        .field("stream-format", "byte-stream")
                        .field("alignment", "au")
                        .field("profile", gst::List::new(["main", "main-still-picture"]))
                        .build(),
                );
                let mut src = gst_video::VideoCapsBuilder::new()
                    .features([gcuda::CAPS_FEATURE])
                    .format(gst_video::VideoFormat::Nv12)
                    .build();
                src.merge(
                    gst_video::VideoCapsBuilder::new()
                        .format(gst_video::VideoFormat::Nv12)
                        .build(),
                );
                vec![
                    gst::PadTemplate::new(
                        "sink",
                        gst::PadDirection::Sink,
                        gst::PadPresence::Always,
                        &sink,
                    )
                    .expect("the sink template is valid"),
                    gst::PadTemplate::new(
                        "src",
                        gst::PadDirection::Src,
                        gst::PadPresence::Always,
                        &src,
                    )
                    .expect("the source template is valid"),
                ]
            })
        }

        fn set_context(&self, context: &gst::Context) {
            self.slot
                .set_context(self.obj().upcast_ref(), context, None);
            self.parent_set_context(context)
        }
    }

    fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
        m.lock().unwrap_or_else(|e| e.into_inner())
    }

    impl NvDec {
        fn fail(&self, what: &str, e: impl std::fmt::Display) -> gst::FlowError {
            gst::element_imp_error!(self, gst::StreamError::Decode, ("{what}: {e}"));
            gst::FlowError::Error
        }

        /// The decoder, made for the stream's codec on the pipeline's GPU
        /// when first needed (and again after a flush).
        fn ensure_decoder(&self) -> Result<(), gst::FlowError> {
            let mut decoder = lock(&self.decoder);
            if decoder.is_some() {
                return Ok(());
            }
            let codec = lock(&self.codec).ok_or(gst::FlowError::NotNegotiated)?;
            let gpu = self
                .slot
                .gpu()
                .map_err(|e| self.fail("no CUDA context for the decoder", e))?;
            let delay = self.display_delay();
            gst::debug!(gst::CAT_RUST, imp = self, "display delay {delay}");
            *decoder = Some(
                NvDecoder::new(&gpu, codec, delay)
                    .map_err(|e| self.fail(&format!("cannot decode {}", codec.name()), e))?,
            );
            crate::trace::mark("NVIDIA parser made");
            Ok(())
        }

        /// The display delay for the stream about to be decoded: the
        /// property's, or 0 where upstream is live (no latency added), else
        /// [`DEFAULT_DISPLAY_DELAY`] (`SEAMSTREAM_NVDEC_DELAY` overrides it,
        /// for benchmarks of `run`, whose decoder is chosen by decodebin).
        fn display_delay(&self) -> u32 {
            let set = self
                .display_delay
                .load(std::sync::atomic::Ordering::Relaxed);
            if let Ok(set) = u32::try_from(set) {
                return set;
            }
            let mut q = gst::query::Latency::new();
            if self.obj().sink_pad().peer_query(&mut q) && q.result().0 {
                return 0;
            }
            std::env::var("SEAMSTREAM_NVDEC_DELAY")
                .ok()
                .and_then(|v| v.parse::<u32>().ok())
                .map_or(DEFAULT_DISPLAY_DELAY, |v| v.min(MAX_DISPLAY_DELAY))
        }

        /// Negotiates the output for a `width`×`height` picture, in CUDA
        /// memory where downstream takes it, unless it is negotiated so.
        fn negotiate_for(&self, width: u32, height: u32) -> Result<(), gst::FlowError> {
            if lock(&self.output)
                .as_ref()
                .is_some_and(|o| o.info.width() == width && o.info.height() == height)
            {
                return Ok(());
            }
            let obj = self.obj();
            // CUDA memory where the pipeline gave its context and the caps
            // allowed downstream name it, as NVIDIA's own decoders choose,
            // or where downstream takes nothing else; system memory where
            // they are unknown (no peer yet) or ANY. Each falls back on the
            // other where it is refused.
            let allowed = obj.src_pad().allowed_caps();
            let given = self
                .context_given
                .load(std::sync::atomic::Ordering::Relaxed);
            let (names_cuda, only_cuda) = match allowed.as_ref().filter(|c| !c.is_any()) {
                Some(c) => (
                    c.iter_with_features()
                        .any(|(_, f)| f.contains(gcuda::CAPS_FEATURE)),
                    !c.is_empty()
                        && c.iter_with_features()
                            .all(|(_, f)| f.contains(gcuda::CAPS_FEATURE)),
                ),
                None => (false, false),
            };
            let first = (given && names_cuda) || only_cuda;
            let ((info, caps), cuda) = match self.negotiate_as(width, height, first) {
                Ok(negotiated) => (negotiated, first),
                Err(_) => (self.negotiate_as(width, height, !first)?, !first),
            };
            let pool = if cuda {
                let pool = self
                    .slot
                    .pool(caps.as_ref(), info.size() as u32)
                    .ok_or_else(|| self.fail("no pool of CUDA memory", "GStreamer made none"))?;
                pool.set_active(true)
                    .map_err(|e| self.fail("the pool of CUDA memory would not start", e))?;
                Some(pool)
            } else {
                None
            };
            *lock(&self.output) = Some(Output { info, pool });
            Ok(())
        }

        /// Sets the output to NV12 of `width`×`height`, in CUDA memory or
        /// not, and tells downstream; the output's info and caps where it
        /// agrees.
        fn negotiate_as(
            &self,
            width: u32,
            height: u32,
            cuda: bool,
        ) -> Result<(gst_video::VideoInfo, gst::Caps), gst::FlowError> {
            let obj = self.obj();
            let input = lock(&self.input).clone();
            let mut state =
                obj.set_output_state(gst_video::VideoFormat::Nv12, width, height, input.as_ref())?;
            let info = state.info().clone();
            let mut caps = info.to_caps().map_err(|_| gst::FlowError::NotNegotiated)?;
            if cuda {
                gcuda::into_cuda(caps.make_mut());
                state.set_caps(&caps);
            }
            obj.negotiate(state)?;
            Ok((info, caps))
        }

        /// Hands `picture` on as the output of the frame due first.
        fn show(&self, picture: &Picture) -> Result<gst::FlowSuccess, gst::FlowError> {
            let obj = self.obj();
            // The picture shown is the pending frame due first: pictures are
            // shown in presentation order, and every pending frame has gone
            // to the parser. (Not the picture's tag: NVIDIA's parser hands
            // tags back in display order when they rise in decode order, as
            // frame numbers do, so a B-frame would take its reference's
            // time.) See [`super::due`] for a frame without a time.
            let Some(mut frame) = obj
                .frames()
                .into_iter()
                .min_by_key(|f| super::due(f.pts(), f.dts(), f.system_frame_number()))
            else {
                // No frame pending (after a flush).
                return Ok(gst::FlowSuccess::Ok);
            };
            self.negotiate_for(picture.width as u32, picture.height as u32)?;
            let gpu = self
                .slot
                .gpu()
                .map_err(|e| self.fail("no CUDA context", e))?;
            let output = lock(&self.output);
            let output = output.as_ref().ok_or(gst::FlowError::NotNegotiated)?;
            match &output.pool {
                Some(pool) => {
                    let buffer = pool.acquire_buffer(None)?;
                    let planes = gcuda::device_planes(&buffer, &output.info, true)
                        .ok_or_else(|| self.fail("a CUDA buffer would not map", "no planes"))?;
                    picture
                        .copy_to(&gpu, [planes[0], planes[1]], false)
                        .map_err(|e| self.fail("copying a decoded picture", e))?;
                    frame.set_output_buffer(buffer);
                }
                None => {
                    obj.allocate_output_frame(&mut frame, None)?;
                    let buffer = frame.output_buffer_mut().ok_or(gst::FlowError::Error)?;
                    let mut vframe =
                        gst_video::VideoFrameRef::from_buffer_ref_writable(buffer, &output.info)
                            .map_err(|_| self.fail("an output buffer would not map", "no write"))?;
                    let mut planes = [DevicePlane::default(); 2];
                    for (i, p) in planes.iter_mut().enumerate() {
                        let stride = vframe.plane_stride()[i] as usize;
                        let data = vframe
                            .plane_data_mut(i as u32)
                            .map_err(|e| self.fail("an output plane would not map", e))?;
                        *p = DevicePlane {
                            ptr: data.as_mut_ptr() as u64,
                            pitch: stride,
                        };
                    }
                    picture
                        .copy_to(&gpu, planes, true)
                        .map_err(|e| self.fail("downloading a decoded picture", e))?;
                }
            }
            obj.finish_frame(frame)
        }

        /// Runs `step` on the decoder with [`Self::show`] for its pictures;
        /// the first flow error downstream ends it.
        fn run(
            &self,
            step: impl FnOnce(
                &mut NvDecoder,
                &mut dyn FnMut(&Picture) -> crate::Result<()>,
            ) -> crate::Result<()>,
        ) -> Result<gst::FlowSuccess, gst::FlowError> {
            let mut flow = Ok(gst::FlowSuccess::Ok);
            let mut decoder = lock(&self.decoder);
            let Some(decoder) = decoder.as_mut() else {
                return Ok(gst::FlowSuccess::Ok);
            };
            let mut show = |p: &Picture| {
                if flow.is_ok() {
                    flow = self.show(p);
                }
                match flow {
                    Ok(_) => Ok(()),
                    Err(e) => Err(crate::Error::Pipeline(format!("downstream: {e:?}"))),
                }
            };
            let r = step(decoder, &mut show);
            flow?;
            r.map_err(|e| self.fail("decoding", e))?;
            Ok(gst::FlowSuccess::Ok)
        }
    }

    impl NvDec {
        /// Shows the pictures the decoder still holds, then lets it go: the
        /// next frame (a new stream, or new caps) gets a new one.
        fn end_stream(&self) -> Result<gst::FlowSuccess, gst::FlowError> {
            let flow = self.run(|d, show| d.finish(show));
            *lock(&self.decoder) = None;
            flow
        }
    }

    impl VideoDecoderImpl for NvDec {
        fn start(&self) -> Result<(), gst::ErrorMessage> {
            self.context_given.store(
                self.slot.gpu().is_ok(),
                std::sync::atomic::Ordering::Relaxed,
            );
            self.slot
                .ensure(self.obj().upcast_ref(), None)
                .map_err(|e| gst::error_msg!(gst::LibraryError::Init, ("{e}")))?;
            Ok(())
        }

        fn stop(&self) -> Result<(), gst::ErrorMessage> {
            *lock(&self.decoder) = None;
            *lock(&self.input) = None;
            if let Some(Output { pool: Some(p), .. }) = lock(&self.output).take() {
                let _ = p.set_active(false);
            }
            self.slot.clear();
            Ok(())
        }

        fn set_format(
            &self,
            state: &gst_video::VideoCodecState<'static, gst_video::video_codec_state::Readable>,
        ) -> Result<(), gst::LoggableError> {
            let codec = match state.caps().and_then(|c| c.structure(0)).map(|s| s.name()) {
                Some(n) if n == "video/x-h264" => Codec::H264,
                Some(n) if n == "video/x-h265" => Codec::H265,
                other => {
                    return Err(gst::loggable_error!(
                        gst::CAT_RUST,
                        "not H.264 or H.265: {other:?}"
                    ));
                }
            };
            let mut current = lock(&self.codec);
            if *current != Some(codec) {
                *lock(&self.decoder) = None;
                *current = Some(codec);
            }
            *lock(&self.input) = Some(state.clone());
            Ok(())
        }

        fn handle_frame(
            &self,
            frame: gst_video::VideoCodecFrame,
        ) -> Result<gst::FlowSuccess, gst::FlowError> {
            let tag = frame.system_frame_number() as i64;
            let input = frame.input_buffer_owned().ok_or(gst::FlowError::Error)?;
            // The base class keeps the frame; it is taken back by its number
            // when its picture is shown.
            drop(frame);
            let map = input.map_readable().map_err(|_| gst::FlowError::Error)?;
            self.ensure_decoder()?;
            self.run(|d, show| d.decode(&map, tag, show))
        }

        fn drain(&self) -> Result<gst::FlowSuccess, gst::FlowError> {
            self.end_stream()
        }

        fn finish(&self) -> Result<gst::FlowSuccess, gst::FlowError> {
            self.end_stream()
        }

        fn flush(&self) -> bool {
            // Pictures held for frames the base class lets go are dropped
            // with the parser; the hardware decoder is kept for the frames
            // after the seek (a new one costs the driver's start again).
            let mut decoder = lock(&self.decoder);
            if let Some(d) = decoder.as_mut()
                && let Err(e) = d.restart()
            {
                gst::warning!(gst::CAT_RUST, imp = self, "decoder restart: {e}");
                *decoder = None;
            }
            true
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_frame_without_a_presentation_time_takes_its_place_by_its_decode_time() {
        let ms = gst::ClockTime::from_mseconds;
        // Frames as they wait for pictures: 0 and 40 ms, one with only a
        // decode time (80 ms), then 120 ms, and one with no time at all.
        let mut pending = vec![
            (Some(ms(0)), Some(ms(0)), 0),
            (Some(ms(40)), Some(ms(40)), 1),
            (None, Some(ms(80)), 2),
            (Some(ms(120)), Some(ms(120)), 3),
            (None, None, 4),
        ];
        let mut shown = Vec::new();
        while let Some(i) = (0..pending.len()).min_by_key(|&i| {
            let (p, d, n) = pending[i];
            due(p, d, n)
        }) {
            shown.push(pending.remove(i).2);
        }
        assert_eq!(shown, [0, 1, 2, 3, 4]);
        // A reordered stream (B-frames): presentation times decide.
        assert!(due(Some(ms(80)), Some(ms(40)), 5) > due(Some(ms(40)), Some(ms(80)), 6));
    }
}
