//! `libgstseamstream.so`, the GStreamer plugin: its description and entry
//! point. The elements live in the library (`seamstream::plugin`), so that
//! applications and tests can register them without loading this file.

use gstreamer as gst;

gst::plugin_define!(
    seamstream,
    env!("CARGO_PKG_DESCRIPTION"),
    plugin_init,
    concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID")),
    "MIT/X11",
    "seamstream",
    "seamstream",
    "https://example.invalid/seamstream",
    env!("BUILD_REL_DATE")
);

fn plugin_init(plugin: &gst::Plugin) -> Result<(), gst::glib::BoolError> {
    seamstream::plugin::register(Some(plugin))
}
