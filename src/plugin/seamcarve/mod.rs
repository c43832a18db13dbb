//! `seamcarve`: content-aware retargeting to `width` × `height`.

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;

mod imp;

glib::wrapper! {
    /// `seamcarve`: content-aware retargeting to `width` × `height`.
    pub struct SeamCarve(ObjectSubclass<imp::SeamCarve>)
        @extends crate::plugin::base::ChainTransform, gstreamer_base::BaseTransform, gst::Element, gst::Object;
}

pub fn register(plugin: Option<&gst::Plugin>) -> Result<(), glib::BoolError> {
    gst::Element::register(
        plugin,
        "seamcarve",
        gst::Rank::NONE,
        SeamCarve::static_type(),
    )
}
