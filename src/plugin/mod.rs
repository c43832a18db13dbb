//! seamstream as GStreamer elements (`libseamstream.so`, loaded with
//! `GST_PLUGIN_PATH=target/release`): `seamstream`, the general chain
//! (`ops="gaussian:sigma=2,sobel"`), and `seamcarve`, retargeting whose output
//! size follows from caps negotiation. Both run the library's chain, on the
//! CPU or the GPU (`device=`), as `run` does.

mod chain;

use gstreamer as gst;

gst::plugin_define!(
    seamstream,
    env!("CARGO_PKG_DESCRIPTION"),
    plugin_init,
    concat!(env!("CARGO_PKG_VERSION"), "-", env!("COMMIT_ID")),
    "MIT/X11",
    env!("CARGO_PKG_NAME"),
    env!("CARGO_PKG_NAME"),
    "https://example.invalid/seamstream",
    env!("BUILD_REL_DATE")
);

fn plugin_init(plugin: &gst::Plugin) -> Result<(), gst::glib::BoolError> {
    chain::register(plugin)
}

/// Registers the elements statically, for applications and tests that link
/// the library instead of loading the plugin file.
pub fn register_static() -> Result<(), gst::glib::BoolError> {
    plugin_register_static()
}
