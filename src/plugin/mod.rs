//! seamstream as GStreamer elements: `seamstream`, the general chain
//! (`ops="gaussian:sigma=2,sobel"`), and `seamcarve`, retargeting whose output
//! size follows from caps negotiation. Both run the library's chain, on the
//! CPU or the GPU (`device=`), as `run` does. The plugin file
//! (`libgstseamstream.so`, the `plugin/` crate) registers them with
//! [`register`]; applications and tests that link the library call
//! [`register_static`]. One folder an element (`mod.rs` registers,
//! `imp.rs` implements), both subclasses of the abstract base class in
//! `base/` (`GstSeamstreamTransform`), over the engine of `transform.rs`.

mod base;
mod seamcarve;
mod seamstream;
mod transform;

use gstreamer as gst;

/// Registers both elements with `plugin` (or with none: statically).
pub fn register(plugin: Option<&gst::Plugin>) -> Result<(), gst::glib::BoolError> {
    seamstream::register(plugin)?;
    seamcarve::register(plugin)
}

/// Registers the elements statically, for applications and tests that link
/// the library instead of loading the plugin file.
pub fn register_static() -> Result<(), gst::glib::BoolError> {
    register(None)
}
