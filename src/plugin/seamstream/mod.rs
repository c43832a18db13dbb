//! `seamstream`: a chain of operations, `ops="gaussian:sigma=2,sobel"`.

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;

mod imp;

glib::wrapper! {
    /// `seamstream`: a chain of operations, `ops="gaussian:sigma=2,sobel"`.
    pub struct SeamStream(ObjectSubclass<imp::SeamStream>)
        @extends crate::plugin::base::ChainTransform, gstreamer_base::BaseTransform, gst::Element, gst::Object;
}

pub fn register(plugin: Option<&gst::Plugin>) -> Result<(), glib::BoolError> {
    gst::Element::register(
        plugin,
        "seamstream",
        gst::Rank::NONE,
        SeamStream::static_type(),
    )
}
