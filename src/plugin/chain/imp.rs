//! One base transform for both elements: the chain is built from the
//! element's settings on each caps change, the output caps come from the
//! chain's output size and format, and each buffer goes through the chain on
//! the CPU or the GPU.

use std::sync::{LazyLock, Mutex};

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::subclass::prelude::*;
use gstreamer_video as gst_video;
use gstreamer_video::prelude::*;

use crate::color::Colorimetry;
use crate::cuda::stage::GpuChain;
use crate::cuda::{DevFormat, Gpu};
use crate::frame::PixelFormat;
use crate::gst::run;
use crate::ops::Chain;
use crate::registry;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "seamstream",
        gst::DebugColorFlags::empty(),
        Some("seamstream elements"),
    )
});

/// Where the chain runs, as `--device` takes it.
const DEVICE_HELP: &str = "auto (the GPU when one works), cpu, cuda or cuda:N";

/// The `device` property both elements have.
fn device_property() -> glib::ParamSpec {
    glib::ParamSpecString::builder("device")
        .nick("Device")
        .blurb(DEVICE_HELP)
        .default_value(Some("auto"))
        .mutable_ready()
        .build()
}

/// What both elements are set up with: the chain's text and the device.
#[derive(Clone, Debug, PartialEq)]
struct Settings {
    chain: String,
    device: String,
}

/// What a caps change sets up.
struct State {
    /// The chain's text, to build it afresh when the stream restarts.
    text: String,
    chain: Chain,
    gpu: Option<(Gpu, GpuChain)>,
    /// The chain's frames: the input's size and format as the chain sees
    /// them (4:2:0 comes in as RGBA), and what comes out.
    input: (usize, usize, DevFormat),
    output: (usize, usize, DevFormat),
    in_info: gst_video::VideoInfo,
    out_info: gst_video::VideoInfo,
    /// The output's 4:2:0 layout, if it is YUV, and the colorimetry both
    /// conversions use (the input's, as `run` does).
    yuv_out: Option<PixelFormat>,
    colorimetry: Colorimetry,
}

/// A format's 4:2:0 layout, if it is one.
fn yuv_layout(f: gst_video::VideoFormat) -> Option<PixelFormat> {
    match f {
        gst_video::VideoFormat::I420 => Some(PixelFormat::I420),
        gst_video::VideoFormat::Nv12 => Some(PixelFormat::Nv12),
        _ => None,
    }
}

/// The format the chain sees for a caps format: 4:2:0 is converted to RGBA.
fn dev_format(f: gst_video::VideoFormat) -> Option<DevFormat> {
    match f {
        gst_video::VideoFormat::Rgba
        | gst_video::VideoFormat::I420
        | gst_video::VideoFormat::Nv12 => Some(DevFormat::Rgba),
        gst_video::VideoFormat::Gray8 => Some(DevFormat::Gray),
        _ => None,
    }
}

/// The caps format of the chain's output: a YUV input's layout while the
/// chain's output is colour, else the chain's own format.
fn video_format(input: gst_video::VideoFormat, out: DevFormat) -> gst_video::VideoFormat {
    match (yuv_layout(input), out) {
        (Some(_), DevFormat::Rgba) => input,
        (_, DevFormat::Rgba) => gst_video::VideoFormat::Rgba,
        (_, DevFormat::Gray) => gst_video::VideoFormat::Gray8,
    }
}

fn template_caps() -> gst::Caps {
    gst_video::VideoCapsBuilder::new()
        .format_list([
            gst_video::VideoFormat::Rgba,
            gst_video::VideoFormat::Gray8,
            gst_video::VideoFormat::I420,
            gst_video::VideoFormat::Nv12,
        ])
        .build()
}

fn pad_templates() -> Vec<gst::PadTemplate> {
    let caps = template_caps();
    vec![
        gst::PadTemplate::new(
            "src",
            gst::PadDirection::Src,
            gst::PadPresence::Always,
            &caps,
        )
        .expect("a valid template"),
        gst::PadTemplate::new(
            "sink",
            gst::PadDirection::Sink,
            gst::PadPresence::Always,
            &caps,
        )
        .expect("a valid template"),
    ]
}

/// The engine behind both elements.
#[derive(Default)]
struct Engine {
    state: Mutex<Option<State>>,
}

impl Engine {
    /// Caps on the other side of the element for `caps` on this side
    /// (`direction` is where `caps` are). Downstream, fixed sizes and
    /// formats become the chain's output; upstream, any size of the same
    /// format may come in (the chain decides what it makes of it).
    fn transform_caps(
        settings: &Settings,
        direction: gst::PadDirection,
        caps: &gst::Caps,
    ) -> gst::Caps {
        let chain = registry::parse_chain_line(&settings.chain).ok();
        let mut out = gst::Caps::new_empty();
        for s in caps.iter() {
            let mut s = s.to_owned();
            match direction {
                gst::PadDirection::Sink => {
                    let format = s
                        .get::<&str>("format")
                        .ok()
                        .map(gst_video::VideoFormat::from_string);
                    let shape = (
                        s.get::<i32>("width").ok(),
                        s.get::<i32>("height").ok(),
                        format.and_then(dev_format),
                    );
                    match (shape, &chain, format) {
                        ((Some(w), Some(h), Some(f)), Some(c), Some(vf)) if w > 0 && h > 0 => {
                            match registry::output_shape(c, w as usize, h as usize, f) {
                                Ok((ow, oh, of)) => {
                                    s.set("width", ow as i32);
                                    s.set("height", oh as i32);
                                    s.set("format", video_format(vf, of).to_str());
                                }
                                Err(_) => continue,
                            }
                        }
                        _ => {
                            s.set("width", gst::IntRange::new(1, i32::MAX));
                            s.set("height", gst::IntRange::new(1, i32::MAX));
                            s.remove_field("format");
                        }
                    }
                }
                _ => {
                    s.set("width", gst::IntRange::new(1, i32::MAX));
                    s.set("height", gst::IntRange::new(1, i32::MAX));
                    s.remove_field("format");
                }
            }
            out.get_mut().expect("new caps").append_structure(s);
        }
        out.intersect(&template_caps())
    }

    fn set_caps(
        &self,
        element: &gst::Element,
        settings: &Settings,
        incaps: &gst::Caps,
        outcaps: &gst::Caps,
    ) -> Result<(), gst::LoggableError> {
        let fail = |what: String| {
            element.post_error_message(gst::error_msg!(gst::LibraryError::Settings, ("{}", what)));
            gst::loggable_error!(CAT, "{}", what)
        };
        let in_info = gst_video::VideoInfo::from_caps(incaps)
            .map_err(|_| gst::loggable_error!(CAT, "unusable input caps {incaps}"))?;
        let out_info = gst_video::VideoInfo::from_caps(outcaps)
            .map_err(|_| gst::loggable_error!(CAT, "unusable output caps {outcaps}"))?;
        let format = dev_format(in_info.format())
            .ok_or_else(|| gst::loggable_error!(CAT, "unsupported format"))?;
        let input = (in_info.width() as usize, in_info.height() as usize, format);
        let colorimetry = run::yuv_colorimetry(&in_info).0;
        let mut chain =
            registry::parse_chain_line(&settings.chain).map_err(|e| fail(format!("ops: {e}")))?;
        chain.streaming();
        let output = registry::output_shape(&chain, input.0, input.1, input.2)
            .map_err(|e| fail(e.to_string()))?;
        let gpu = open_device(&settings.device, &chain).map_err(fail)?;
        let gpu = match gpu {
            Some(gpu) => {
                let g = GpuChain::new(&gpu, &chain, input.0, input.1, input.2)
                    .map_err(|e| fail(e.to_string()))?;
                Some((gpu, g))
            }
            None => None,
        };
        gst::debug!(
            CAT,
            obj = element,
            "{input:?} -> {output:?} on {}",
            if gpu.is_some() { "the GPU" } else { "the CPU" }
        );
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = Some(State {
            text: settings.chain.clone(),
            chain,
            gpu,
            input,
            output,
            yuv_out: yuv_layout(out_info.format()),
            colorimetry,
            in_info,
            out_info,
        });
        Ok(())
    }

    fn transform(
        &self,
        inbuf: &gst::Buffer,
        outbuf: &mut gst::BufferRef,
    ) -> Result<gst::FlowSuccess, gst::FlowError> {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let state = guard.as_mut().ok_or(gst::FlowError::NotNegotiated)?;
        let picture = run::picture_from_buffer(inbuf.as_ref(), &state.in_info).map_err(|e| {
            gst::error!(CAT, "{e}");
            gst::FlowError::Error
        })?;
        let frame = run::chain_frame(picture, state.colorimetry);
        let out = match &mut state.gpu {
            Some((gpu, g)) => g.apply(gpu, &frame),
            None => state.chain.apply(frame),
        }
        .and_then(|f| run::out_picture(f, state.colorimetry, state.yuv_out))
        .map_err(|e| {
            gst::error!(CAT, "{e}");
            gst::FlowError::Error
        })?;
        if (out.width(), out.height()) != (state.output.0, state.output.1) {
            return Err(gst::FlowError::NotNegotiated);
        }
        let mut map = outbuf.map_writable().map_err(|_| gst::FlowError::Error)?;
        run::write_picture(&out, &state.out_info, map.as_mut_slice());
        Ok(gst::FlowSuccess::Ok)
    }

    /// Forgets what the chain carries from frame to frame (fast mode's
    /// seams): after a flush or a discontinuity, the next frame starts
    /// afresh, as after a scene cut.
    fn reset(&self) {
        let mut guard = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let Some(state) = guard.as_mut() else {
            return;
        };
        if let Ok(mut chain) = registry::parse_chain_line(&state.text) {
            chain.streaming();
            state.chain = chain;
        }
        if let Some((gpu, g)) = &mut state.gpu {
            let (w, h, f) = state.input;
            if let Ok(fresh) = GpuChain::new(gpu, &state.chain, w, h, f) {
                *g = fresh;
            }
        }
    }

    fn stop(&self) {
        *self.state.lock().unwrap_or_else(|e| e.into_inner()) = None;
    }
}

/// The GPU for `device`, `None` for the CPU; an error names the value.
fn open_device(device: &str, chain: &Chain) -> Result<Option<Gpu>, String> {
    let ordinal = match device {
        "cpu" => return Ok(None),
        "auto" => {
            return Ok(match Gpu::open(0) {
                Ok(gpu) if registry::first_cpu_only(chain).is_none() => Some(gpu),
                _ => None,
            });
        }
        "cuda" => 0,
        d => match d.strip_prefix("cuda:").and_then(|n| n.parse().ok()) {
            Some(n) => n,
            None => return Err(format!("device={d}: expected {DEVICE_HELP}")),
        },
    };
    Gpu::open(ordinal)
        .map(Some)
        .map_err(|e| format!("device={device}: {e}").replace("--device cpu", "device=cpu"))
}

/// What both elements share given their settings: `ElementImpl` (with the
/// element's long name, class and description) and `BaseTransformImpl`.
macro_rules! chain_transform {
    ($ty:ident, $long:literal, $klass:literal, $description:literal) => {
        impl ElementImpl for $ty {
            fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
                static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
                    gst::subclass::ElementMetadata::new(
                        $long,
                        $klass,
                        $description,
                        "seamstream developers",
                    )
                });
                Some(&*META)
            }

            fn pad_templates() -> &'static [gst::PadTemplate] {
                static T: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(pad_templates);
                T.as_ref()
            }
        }

        impl BaseTransformImpl for $ty {
            const MODE: gst_base::subclass::BaseTransformMode =
                gst_base::subclass::BaseTransformMode::NeverInPlace;
            const PASSTHROUGH_ON_SAME_CAPS: bool = false;
            const TRANSFORM_IP_ON_PASSTHROUGH: bool = false;

            fn transform_caps(
                &self,
                direction: gst::PadDirection,
                caps: &gst::Caps,
                filter: Option<&gst::Caps>,
            ) -> Option<gst::Caps> {
                let settings = self.settings();
                let other = Engine::transform_caps(&settings, direction, caps);
                Some(match filter {
                    Some(f) => f.intersect_with_mode(&other, gst::CapsIntersectMode::First),
                    None => other,
                })
            }

            fn set_caps(
                &self,
                incaps: &gst::Caps,
                outcaps: &gst::Caps,
            ) -> Result<(), gst::LoggableError> {
                let settings = self.settings();
                self.engine
                    .set_caps(self.obj().upcast_ref(), &settings, incaps, outcaps)
            }

            fn unit_size(&self, caps: &gst::Caps) -> Option<usize> {
                gst_video::VideoInfo::from_caps(caps)
                    .map(|info| info.size())
                    .ok()
            }

            fn transform(
                &self,
                inbuf: &gst::Buffer,
                outbuf: &mut gst::BufferRef,
            ) -> Result<gst::FlowSuccess, gst::FlowError> {
                self.engine.transform(inbuf, outbuf)
            }

            fn stop(&self) -> Result<(), gst::ErrorMessage> {
                self.engine.stop();
                Ok(())
            }

            fn sink_event(&self, event: gst::Event) -> bool {
                if let gst::EventView::FlushStop(_) = event.view() {
                    self.engine.reset();
                }
                self.parent_sink_event(event)
            }

            fn before_transform(&self, inbuf: &gst::BufferRef) {
                if inbuf.flags().contains(gst::BufferFlags::DISCONT) {
                    self.engine.reset();
                }
            }
        }

        impl GstObjectImpl for $ty {}
    };
}

/// `seamstream`: the chain from `ops`.
#[derive(Default)]
pub struct SeamStream {
    settings: Mutex<(String, String)>,
    engine: Engine,
}

impl SeamStream {
    fn settings(&self) -> Settings {
        let s = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        Settings {
            chain: s.0.clone(),
            device: if s.1.is_empty() {
                "auto".into()
            } else {
                s.1.clone()
            },
        }
    }
}

#[glib::object_subclass]
impl ObjectSubclass for SeamStream {
    const NAME: &'static str = "GstSeamStream";
    type Type = super::SeamStream;
    type ParentType = gst_base::BaseTransform;
}

impl ObjectImpl for SeamStream {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPS: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            vec![
                glib::ParamSpecString::builder("ops")
                    .nick("Operations")
                    .blurb("The chain, as seamstream's --op: gaussian:sigma=2,sobel,retarget:width=75%")
                    .default_value(Some(""))
                    .mutable_ready()
                    .build(),
                device_property(),
            ]
        });
        PROPS.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        let text: String = value
            .get::<Option<String>>()
            .ok()
            .flatten()
            .unwrap_or_default();
        let mut s = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        match pspec.name() {
            "ops" => s.0 = text,
            _ => s.1 = text,
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = self.settings();
        match pspec.name() {
            "ops" => s.chain.to_value(),
            _ => s.device.to_value(),
        }
    }
}

chain_transform!(
    SeamStream,
    "seamstream chain",
    "Filter/Effect/Video",
    "Runs a chain of image operations (blur, edges, warps, thresholds, seam carving) on the CPU or CUDA"
);

/// `seamcarve`'s properties.
#[derive(Clone, Debug)]
struct CarveSettings {
    width: u32,
    height: u32,
    mode: String,
    energy: String,
    device: String,
}

impl Default for CarveSettings {
    fn default() -> Self {
        CarveSettings {
            width: 0,
            height: 0,
            mode: "fast".into(),
            energy: "forward".into(),
            device: "auto".into(),
        }
    }
}

/// `seamcarve`: a `retarget` chain from its properties.
#[derive(Default)]
pub struct SeamCarve {
    settings: Mutex<CarveSettings>,
    engine: Engine,
}

impl SeamCarve {
    fn settings(&self) -> Settings {
        let s = self
            .settings
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .clone();
        let mut keys = Vec::new();
        if s.width > 0 {
            keys.push(format!("width={}", s.width));
        }
        if s.height > 0 {
            keys.push(format!("height={}", s.height));
        }
        let chain = if keys.is_empty() {
            String::new()
        } else {
            format!(
                "retarget:{},mode={},energy={}",
                keys.join(","),
                s.mode,
                s.energy
            )
        };
        Settings {
            chain,
            device: s.device,
        }
    }
}

#[glib::object_subclass]
impl ObjectSubclass for SeamCarve {
    const NAME: &'static str = "GstSeamCarve";
    type Type = super::SeamCarve;
    type ParentType = gst_base::BaseTransform;
}

impl ObjectImpl for SeamCarve {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPS: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            vec![
                glib::ParamSpecUInt::builder("width")
                    .nick("Width")
                    .blurb("Output width in pixels (0: the input's); may change while playing")
                    .maximum(65536)
                    .default_value(0)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("height")
                    .nick("Height")
                    .blurb("Output height in pixels (0: the input's); may change while playing")
                    .maximum(65536)
                    .default_value(0)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecString::builder("mode")
                    .nick("Mode")
                    .blurb(
                        "fast (video: seams follow the last frame) or exact (one seam at a time)",
                    )
                    .default_value(Some("fast"))
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("energy")
                    .nick("Energy")
                    .blurb("pixel importance: basic, sobel3, sobel5 or forward")
                    .default_value(Some("forward"))
                    .mutable_ready()
                    .build(),
                device_property(),
            ]
        });
        PROPS.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        let mut s = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        let text = || {
            value
                .get::<Option<String>>()
                .ok()
                .flatten()
                .unwrap_or_default()
        };
        match pspec.name() {
            "width" | "height" => {
                let v = value.get().unwrap_or(0);
                if pspec.name() == "width" {
                    s.width = v;
                } else {
                    s.height = v;
                }
                drop(s);
                // Negotiated again before the next frame: the new size
                // goes downstream as new caps.
                self.obj().reconfigure_src();
            }
            "mode" => s.mode = text(),
            "energy" => s.energy = text(),
            _ => s.device = text(),
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        match pspec.name() {
            "width" => s.width.to_value(),
            "height" => s.height.to_value(),
            "mode" => s.mode.to_value(),
            "energy" => s.energy.to_value(),
            _ => s.device.to_value(),
        }
    }
}

chain_transform!(
    SeamCarve,
    "Seam carving",
    "Filter/Effect/Video/Scaler",
    "Content-aware retargeting: removes the least important seams to reach width x height"
);
