//! `seamstream`: the chain from `ops`, on the shared base transform
//! ([`super::super::transform`]).

use std::sync::Mutex;

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::subclass::prelude::*;

use std::sync::LazyLock;

use crate::plugin::base::{self, ChainTransformImpl, Settings};
use crate::plugin::transform::device_property;

/// `seamstream`: the chain from `ops`.
#[derive(Default)]
pub struct SeamStream {
    settings: Mutex<(String, String)>,
}

impl ChainTransformImpl for SeamStream {
    fn settings(&self) -> Settings {
        let s = self.settings.lock().unwrap_or_else(|e| e.into_inner());
        Settings::new(s.0.clone(), &s.1)
    }
}

#[glib::object_subclass]
impl ObjectSubclass for SeamStream {
    const NAME: &'static str = "GstSeamStream";
    type Type = super::SeamStream;
    type ParentType = base::ChainTransform;
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
            _ => s.device_text().to_value(),
        }
    }
}

impl GstObjectImpl for SeamStream {}

impl ElementImpl for SeamStream {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "seamstream chain",
                "Filter/Effect/Video",
                "Runs a chain of image operations (blur, edges, warps, thresholds, seam carving) on the CPU or CUDA",
                "seamstream developers",
            )
        });
        Some(&*META)
    }
}

impl BaseTransformImpl for SeamStream {
    const MODE: gst_base::subclass::BaseTransformMode = base::MODE;
    const PASSTHROUGH_ON_SAME_CAPS: bool = base::PASSTHROUGH_ON_SAME_CAPS;
    const TRANSFORM_IP_ON_PASSTHROUGH: bool = base::TRANSFORM_IP_ON_PASSTHROUGH;
}
