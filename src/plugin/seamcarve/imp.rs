//! `seamcarve`: a `retarget` chain from its properties, on the shared base
//! transform ([`super::super::transform`]).

use std::sync::Mutex;

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::prelude::*;
use gstreamer_base::subclass::prelude::*;

use std::sync::LazyLock;

use crate::plugin::base::{self, ChainTransformImpl, Settings};
use crate::plugin::transform::{device_property, lock};

/// `seamcarve`'s properties: `width` and `height` in pixels, `device`, and
/// every other key of the `retarget` operation (mode, energy, the fast-mode
/// knobs, the masks), as its text gives them (unset ones keep the
/// operation's defaults; `mode` is `fast`, for video).
#[derive(Clone, Debug, Default)]
struct CarveSettings {
    width: u32,
    height: u32,
    /// A shape (`9:16`): the element reframes (the `reframe` op) instead of
    /// carving the whole frame.
    aspect: Option<String>,
    /// Seconds a reframe looks ahead (`None`: the op's default).
    lookahead: Option<f64>,
    device: Option<String>,
    keys: Vec<(&'static str, String)>,
}

/// The `retarget` keys that are properties as they are (not width/height).
fn carve_keys() -> impl Iterator<Item = &'static crate::ops::params::ParamSpec> {
    crate::ops::retarget::SPEC
        .params
        .iter()
        .filter(|p| !matches!(p.name, "width" | "height"))
}

/// A key's default as its property shows it.
fn key_default(p: &crate::ops::params::ParamSpec) -> Option<&'static str> {
    match p.name {
        "mode" => Some("fast"),
        _ => p.default,
    }
}

/// The GObject property for a `retarget` key: its range or choices, default
/// and help from the operation's own description.
fn key_property(p: &crate::ops::params::ParamSpec) -> glib::ParamSpec {
    use crate::ops::params::Kind;
    match p.kind {
        Kind::Int { min, max } => glib::ParamSpecInt::builder(p.name)
            .blurb(p.help)
            .minimum(min.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
            .maximum(max.clamp(i32::MIN as i64, i32::MAX as i64) as i32)
            .default_value(key_default(p).and_then(|d| d.parse().ok()).unwrap_or(0))
            .mutable_ready()
            .build(),
        Kind::Choice(choices) => {
            let blurb = format!("{} ({})", p.help, choices.join(", "));
            glib::ParamSpecString::builder(p.name)
                .blurb(Box::leak(blurb.into_boxed_str()))
                .default_value(key_default(p))
                .mutable_ready()
                .build()
        }
        _ => glib::ParamSpecString::builder(p.name)
            .blurb(p.help)
            .default_value(key_default(p))
            .mutable_ready()
            .build(),
    }
}

/// `seamcarve`: a `retarget` chain from its properties.
#[derive(Default)]
pub struct SeamCarve {
    settings: Mutex<CarveSettings>,
}

impl ChainTransformImpl for SeamCarve {
    fn settings(&self) -> Settings {
        let s = lock(&self.settings).clone();
        let mut keys = Vec::new();
        if s.width > 0 {
            keys.push(format!("width={}", s.width));
        }
        if s.height > 0 {
            keys.push(format!("height={}", s.height));
        }
        if let Some(aspect) = &s.aspect {
            // Reframing: a window that follows the subjects, carving or
            // padding as each shot needs, planned live with its look-ahead
            // (which the latency query reports).
            keys.insert(0, format!("aspect={aspect}"));
            if let Some(l) = s.lookahead {
                keys.push(format!("lookahead={l}"));
            }
            let chain = format!("reframe:{}", keys.join(","));
            return Settings::new(chain, s.device.as_deref().unwrap_or(""));
        }
        let chain = if keys.is_empty() {
            String::new()
        } else {
            if !s.keys.iter().any(|(k, _)| *k == "mode") {
                keys.push("mode=fast".into());
            }
            keys.extend(
                s.keys
                    .iter()
                    .map(|(k, v)| format!("{k}={}", crate::ops::params::quote_value(v))),
            );
            format!("retarget:{}", keys.join(","))
        };
        Settings::new(chain, s.device.as_deref().unwrap_or(""))
    }
}

#[glib::object_subclass]
impl ObjectSubclass for SeamCarve {
    const NAME: &'static str = "GstSeamCarve";
    type Type = super::SeamCarve;
    type ParentType = base::ChainTransform;
}

impl ObjectImpl for SeamCarve {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPS: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = vec![
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
                glib::ParamSpecString::builder("aspect")
                    .nick("Aspect")
                    .blurb("Reframe to this shape (9:16, 1:1, 4:5, 21:9) keeping faces, people, animals and text whole, with a window that follows them (carving or padding where they do not fit); unset: carve the whole frame to width x height")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecDouble::builder("lookahead")
                    .nick("Look-ahead")
                    .blurb("With aspect: seconds of frames the reframe sees before it frames one (the shot starts framed for what follows; the window widens and moves before its subjects need it); the frames are held that long, reported as latency; 0 holds none")
                    .minimum(0.0)
                    .maximum(crate::ops::reframe::MAX_LOOKAHEAD)
                    .default_value(crate::ops::reframe::LOOKAHEAD)
                    .mutable_ready()
                    .build(),
                device_property(),
            ];
            props.extend(carve_keys().map(key_property));
            props
        });
        PROPS.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        let mut s = lock(&self.settings);
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
            "device" => s.device = value.get::<Option<String>>().ok().flatten(),
            "lookahead" => s.lookahead = value.get::<f64>().ok(),
            "aspect" => {
                s.aspect = value
                    .get::<Option<String>>()
                    .ok()
                    .flatten()
                    .filter(|a| !a.trim().is_empty());
                drop(s);
                self.obj().reconfigure_src();
            }
            name => {
                let Some(key) = carve_keys().find(|p| p.name == name) else {
                    return;
                };
                let text = match value.get::<i32>() {
                    Ok(n) => Some(n.to_string()),
                    Err(_) => value.get::<Option<String>>().ok().flatten(),
                };
                s.keys.retain(|(k, _)| *k != key.name);
                if let Some(t) = text.filter(|t| !t.is_empty()) {
                    s.keys.push((key.name, t));
                }
            }
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = lock(&self.settings);
        match pspec.name() {
            "width" => s.width.to_value(),
            "height" => s.height.to_value(),
            "device" => s.device.as_deref().unwrap_or("auto").to_value(),
            "aspect" => s.aspect.to_value(),
            "lookahead" => s
                .lookahead
                .unwrap_or(crate::ops::reframe::LOOKAHEAD)
                .to_value(),
            name => {
                let text = s
                    .keys
                    .iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.clone())
                    .or_else(|| {
                        carve_keys()
                            .find(|p| p.name == name)
                            .and_then(key_default)
                            .map(String::from)
                    });
                if pspec.value_type() == glib::Type::I32 {
                    text.and_then(|t| t.parse::<i32>().ok())
                        .unwrap_or(0)
                        .to_value()
                } else {
                    text.to_value()
                }
            }
        }
    }
}

impl GstObjectImpl for SeamCarve {}

impl ElementImpl for SeamCarve {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Seam carving",
                "Filter/Effect/Video/Scaler",
                "Content-aware retargeting: removes the least important seams to reach width x height, or with aspect=9:16 reframes to that shape keeping the subjects whole",
                "seamstream developers",
            )
        });
        Some(&*META)
    }
}

impl BaseTransformImpl for SeamCarve {
    const MODE: gst_base::subclass::BaseTransformMode = base::MODE;
    const PASSTHROUGH_ON_SAME_CAPS: bool = base::PASSTHROUGH_ON_SAME_CAPS;
    const TRANSFORM_IP_ON_PASSTHROUGH: bool = base::TRANSFORM_IP_ON_PASSTHROUGH;
}
