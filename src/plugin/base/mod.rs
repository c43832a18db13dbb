//! The abstract base class both elements derive from, as GStreamer's own
//! base classes are made: `GstSeamstreamTransform` (a `GstBaseTransform`)
//! does caps, allocation, CUDA contexts and the engine; an element on it
//! implements [`ChainTransformImpl`], whose one method gives the settings
//! (the chain's text and the device) its properties make.

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::subclass::prelude::*;

pub use crate::plugin::transform::Settings;

mod imp;

glib::wrapper! {
    /// The base class of `seamcarve` and `seamstream`.
    pub struct ChainTransform(ObjectSubclass<imp::ChainTransform>)
        @extends gst_base::BaseTransform, gst::Element, gst::Object;
}

/// How an element on [`ChainTransform`] transforms: never in place, and
/// never passed through on equal caps (a chain may keep the size and still
/// change every pixel). Its `BaseTransformImpl` takes these.
pub const MODE: gst_base::subclass::BaseTransformMode =
    gst_base::subclass::BaseTransformMode::NeverInPlace;
pub const PASSTHROUGH_ON_SAME_CAPS: bool = false;
pub const TRANSFORM_IP_ON_PASSTHROUGH: bool = false;

/// What an element on [`ChainTransform`] implements.
pub trait ChainTransformImpl:
    BaseTransformImpl + ObjectSubclass<Type: IsA<ChainTransform>>
{
    /// The chain and device the element's properties give now.
    fn settings(&self) -> Settings;
}

/// The class: `GstBaseTransformClass` and the one virtual method.
#[repr(C)]
pub struct Class {
    parent: gst_base::ffi::GstBaseTransformClass,
    settings: fn(&ChainTransform) -> Settings,
}

unsafe impl ClassStruct for Class {
    type Type = imp::ChainTransform;
}

impl std::ops::Deref for Class {
    type Target = glib::Class<gst_base::BaseTransform>;

    fn deref(&self) -> &Self::Target {
        // SAFETY: `parent` is the first field of a #[repr(C)] struct, and a
        // glib::Class<BaseTransform> is that C struct.
        unsafe { &*(&self.parent as *const _ as *const _) }
    }
}

unsafe impl<T: ChainTransformImpl> IsSubclassable<T> for ChainTransform {
    fn class_init(class: &mut glib::Class<Self>) {
        Self::parent_class_init::<T>(class);
        class.as_mut().settings = |obj| {
            // SAFETY: the class is T's, so every instance of it is a T.
            let imp = unsafe { obj.unsafe_cast_ref::<T::Type>() }.imp();
            imp.settings()
        };
    }
}
