//! The base class of both elements (`GstSeamstreamTransform`, abstract):
//! everything but the settings, which each element makes from its own
//! properties and gives through [`super::ChainTransformImpl::settings`].

use std::sync::LazyLock;

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer::subclass::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::prelude::*;
use gstreamer_base::subclass::base_transform::GenerateOutputSuccess;
use gstreamer_base::subclass::prelude::*;
use gstreamer_video as gst_video;

use crate::gst::cuda;
use crate::plugin::transform::{CAT, Engine, Settings, lock, pad_templates};

/// The engine, which every element on the base holds.
#[derive(Default)]
pub struct ChainTransform {
    engine: Engine,
}

impl ChainTransform {
    /// The element's settings as they stand, from its class's `settings`.
    fn settings(&self) -> Settings {
        let obj = self.obj();
        (obj.class().as_ref().settings)(&obj)
    }
}

#[glib::object_subclass]
impl ObjectSubclass for ChainTransform {
    const NAME: &'static str = "GstSeamstreamTransform";
    const ABSTRACT: bool = true;
    type Type = super::ChainTransform;
    type ParentType = gst_base::BaseTransform;
    type Class = super::Class;

    fn class_init(class: &mut Self::Class) {
        // Never called for the abstract class itself; each element's
        // class sets its own (super::ChainTransform's IsSubclassable).
        class.settings = |_| Settings::new(String::new(), "auto");
    }
}

impl ObjectImpl for ChainTransform {}

impl GstObjectImpl for ChainTransform {}

impl ElementImpl for ChainTransform {
    fn pad_templates() -> &'static [gst::PadTemplate] {
        static T: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(pad_templates);
        T.as_ref()
    }

    fn set_context(&self, context: &gst::Context) {
        if let Some(device) = self.settings().gpu_device() {
            self.engine
                .cuda
                .set_context(self.obj().upcast_ref(), context, device.ordinal());
        }
        self.parent_set_context(context)
    }

    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        match transition {
            gst::StateChange::NullToReady => {
                // The CUDA context comes before the neighbours open
                // (NVIDIA's decoder asks for one when it does).
                if let Some(device) = self.settings().gpu_device()
                    && let Err(e) = self
                        .engine
                        .cuda
                        .ensure(self.obj().upcast_ref(), device.ordinal())
                {
                    gst::info!(CAT, imp = self, "no CUDA memory: {e}");
                    self.engine.cuda.clear();
                }
            }
            gst::StateChange::ReadyToNull => {
                *lock(&self.engine.pool) = None;
                self.engine.cuda.clear();
            }
            _ => {}
        }
        self.parent_change_state(transition)
    }
}

impl BaseTransformImpl for ChainTransform {
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
        // Before READY (when gst-launch links), CUDA memory is
        // offered wherever GStreamer's CUDA library works; set_caps
        // refuses it if no context came after all.
        let cuda_ok = settings.gpu_device().is_some()
            && (self.engine.cuda.gpu().is_ok() || cuda::available());
        let other = Engine::transform_caps(&settings, cuda_ok, direction, caps);
        Some(match filter {
            Some(f) => f.intersect_with_mode(&other, gst::CapsIntersectMode::First),
            None => other,
        })
    }

    fn fixate_caps(
        &self,
        direction: gst::PadDirection,
        caps: &gst::Caps,
        othercaps: gst::Caps,
    ) -> gst::Caps {
        // Frames that come in CUDA memory stay there where the peer
        // takes it, whatever order the peer lists its caps in.
        let othercaps = if direction == gst::PadDirection::Sink && cuda::caps_in_cuda(caps) {
            Engine::cuda_first(othercaps)
        } else {
            othercaps
        };
        self.parent_fixate_caps(direction, caps, othercaps)
    }

    fn set_caps(&self, incaps: &gst::Caps, outcaps: &gst::Caps) -> Result<(), gst::LoggableError> {
        let settings = self.settings();
        self.engine
            .set_caps(self.obj().upcast_ref(), &settings, incaps, outcaps)
    }

    fn decide_allocation(
        &self,
        query: &mut gst::query::Allocation,
    ) -> Result<(), gst::LoggableError> {
        let (caps, _) = query.get();
        let in_cuda = caps.is_some_and(cuda::caps_in_cuda);
        let pool = match (in_cuda, caps) {
            (true, Some(caps)) => {
                let ctx = &self.engine.cuda;
                let info = gst_video::VideoInfo::from_caps(caps)
                    .map_err(|_| gst::loggable_error!(CAT, "unusable caps {caps}"))?;
                let size = info.size() as u32;
                let pool = ctx
                    .pool(caps, size)
                    .ok_or_else(|| gst::loggable_error!(CAT, "cannot make a CUDA memory pool"))?;
                if query.allocation_pools().next().is_none() {
                    query.add_allocation_pool(Some(&pool), size, 2, 0);
                } else {
                    query.set_nth_allocation_pool(0, Some(&pool), size, 2, 0);
                }
                Some(pool)
            }
            _ => None,
        };
        self.parent_decide_allocation(query)?;
        if let Some(p) = &pool
            && !p.is_active()
        {
            p.set_active(true)
                .map_err(|_| gst::loggable_error!(CAT, "cannot start the CUDA pool"))?;
        }
        *lock(&self.engine.pool) = pool;
        Ok(())
    }

    fn query(&self, direction: gst::PadDirection, query: &mut gst::QueryRef) -> bool {
        if self
            .engine
            .cuda
            .answer_query(self.obj().upcast_ref(), query)
        {
            return true;
        }
        let answered = BaseTransformImplExt::parent_query(self, direction, query);
        if let (true, gst::PadDirection::Src, gst::QueryViewMut::Latency(q)) =
            (answered, direction, query.view_mut())
        {
            // The ring holds a frame back on the GPU.
            let held = self.engine.held().unwrap_or(gst::ClockTime::ZERO);
            let (live, min, max) = q.result();
            q.set(live, min + held, max.map(|m| m + held));
        }
        answered
    }

    fn generate_output(&self) -> Result<GenerateOutputSuccess, gst::FlowError> {
        if let Some(inbuf) = self.take_queued_buffer() {
            if self.obj().is_passthrough() {
                return Ok(GenerateOutputSuccess::Buffer(inbuf));
            }
            if inbuf.flags().contains(gst::BufferFlags::DISCONT) {
                self.engine.reset(self.obj().upcast_ref(), false);
            }
            if let Err(e) = self.engine.push(inbuf) {
                self.post_error_message(e);
                return Err(gst::FlowError::Error);
            }
        }
        Ok(match self.engine.next() {
            Some(b) => GenerateOutputSuccess::Buffer(b),
            None => GenerateOutputSuccess::NoOutput,
        })
    }

    fn start(&self) -> Result<(), gst::ErrorMessage> {
        // The kernels are compiled (or read from the cache) now,
        // before the source starts, not on a live stream's first
        // frame.
        self.engine.warm_up(&self.settings());
        Ok(())
    }

    fn stop(&self) -> Result<(), gst::ErrorMessage> {
        self.engine.stop();
        Ok(())
    }

    fn sink_event(&self, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::FlushStop(_) => self.engine.reset(self.obj().upcast_ref(), true),
            gst::EventView::Eos(_) => self.engine.drain(self.obj().upcast_ref()),
            _ => {}
        }
        self.parent_sink_event(event)
    }
}
