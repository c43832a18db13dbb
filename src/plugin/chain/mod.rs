//! The two elements, one implementation: `seamstream` takes any chain in
//! `ops`; `seamcarve` builds a `retarget` chain from its properties.

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;

mod imp;

glib::wrapper! {
    /// `seamstream`: a chain of operations, `ops="gaussian:sigma=2,sobel"`.
    pub struct SeamStream(ObjectSubclass<imp::SeamStream>)
        @extends gstreamer_base::BaseTransform, gst::Element, gst::Object;
}

glib::wrapper! {
    /// `seamcarve`: content-aware retargeting to `width` × `height`.
    pub struct SeamCarve(ObjectSubclass<imp::SeamCarve>)
        @extends gstreamer_base::BaseTransform, gst::Element, gst::Object;
}

pub fn register(plugin: Option<&gst::Plugin>) -> Result<(), glib::BoolError> {
    gst::Element::register(
        plugin,
        "seamstream",
        gst::Rank::NONE,
        SeamStream::static_type(),
    )?;
    gst::Element::register(
        plugin,
        "seamcarve",
        gst::Rank::NONE,
        SeamCarve::static_type(),
    )
}
