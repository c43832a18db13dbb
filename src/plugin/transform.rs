//! The base transform both elements are: the chain is built from the
//! element's settings on each caps change, the output caps come from the
//! chain's output size and format, and frames go through `run`'s engine
//! ([`Work`]) on the CPU or the GPU. On the GPU the engine's ring of slots
//! holds one frame while the next comes in (`submit_input_buffer` /
//! `generate_output`), so that the upload of one overlaps the work on the
//! other; the latency query reports that frame. In CUDA memory
//! (`video/x-raw(memory:CUDAMemory)`, from NVIDIA's decoder) frames stay on
//! the device, in the context the element shares with its neighbours.

// Without CUDA, `Gpu` has no values, so what follows one is unreachable.
#![cfg_attr(not(feature = "cuda"), allow(unreachable_code, unused_mut))]

use std::collections::VecDeque;
use std::sync::{LazyLock, Mutex, MutexGuard};

use gstreamer as gst;
use gstreamer::glib;
use gstreamer::prelude::*;
use gstreamer_base as gst_base;
use gstreamer_base::prelude::*;
use gstreamer_video as gst_video;

use crate::cuda::Gpu;
use crate::frame::DevFormat;
use crate::frame::PixelFormat;
use crate::gst::cuda;
use crate::gst::run::engine::{DeviceIn, DeviceOut, Pixels, Timed, Work};
use crate::gst::run::{self, Backend};
use crate::ops::params::Media;
use crate::registry;

pub(crate) static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "seamstream",
        gst::DebugColorFlags::empty(),
        Some("seamstream elements"),
    )
});

/// Where the chain runs, as `--device` takes it.
pub(crate) const DEVICE_HELP: &str = crate::Device::EXPECTED;

/// Slots of the GPU ring: one frame held while the next is uploaded.
const SLOTS: usize = 2;

/// The `device` property both elements have.
pub(crate) fn device_property() -> glib::ParamSpec {
    glib::ParamSpecString::builder("device")
        .nick("Device")
        .blurb(DEVICE_HELP)
        .default_value(Some("auto"))
        .mutable_ready()
        .build()
}

/// What both elements are set up with: the chain's text and the device,
/// parsed when the element's properties are read (a device that does not
/// parse keeps its text, for the error `set_caps` gives).
#[derive(Clone, Debug, PartialEq)]
pub struct Settings {
    pub chain: String,
    pub device: Result<crate::Device, String>,
}

impl Settings {
    /// Settings from the properties' text (an empty device is `auto`).
    pub fn new(chain: String, device: &str) -> Settings {
        let device = match device {
            "" => Ok(crate::Device::Auto),
            d => crate::Device::parse(d).ok_or_else(|| d.to_string()),
        };
        Settings { chain, device }
    }

    /// The device, when it may run on a GPU (whose context is then worth
    /// sharing with the neighbours).
    pub fn gpu_device(&self) -> Option<crate::Device> {
        self.device.clone().ok().filter(|d| d.may_use_gpu())
    }

    /// The device as written, for messages.
    pub fn device_text(&self) -> String {
        match &self.device {
            Ok(d) => d.to_string(),
            Err(text) => text.clone(),
        }
    }
}

/// What a caps change sets up.
struct State {
    /// The chain's text, to build it afresh when the stream restarts.
    text: String,
    backend: Backend,
    work: Work,
    in_info: gst_video::VideoInfo,
    out_info: gst_video::VideoInfo,
    /// Whether each side is in CUDA memory.
    in_cuda: bool,
    out_cuda: bool,
    /// The output's 4:2:0 layout, if it is YUV.
    yuv_out: Option<PixelFormat>,
    /// Recycled output buffers in system memory, for frames the CPU makes
    /// (`run`'s pool).
    out: Option<run::OutBuffers>,
}

impl State {
    /// A fresh engine for the same chain (after a flush or a discontinuity:
    /// the next frame starts afresh, as after a scene cut).
    fn fresh_work(&self) -> Result<Work, String> {
        let chain =
            registry::parse_chain_line_for(&self.text, Media::Video).map_err(|e| e.to_string())?;
        let mut work = Work::new(chain, self.backend.clone(), SLOTS, self.yuv_out, false);
        work.set_rate(self.in_info.fps())
            .map_err(|e| e.to_string())?;
        Ok(work)
    }

    /// Frames the GPU ring holds at most between calls.
    fn held(&self) -> usize {
        match self.backend {
            Backend::Cuda(_) => SLOTS - 1,
            Backend::Cpu => 0,
        }
    }

    /// Frames held back at most: the ring's, and the chain's look-ahead.
    fn latency_frames(&self) -> usize {
        self.held() + self.work.delay()
    }
}

/// A format's 4:2:0 layout, if it is one.
fn yuv_layout(f: gst_video::VideoFormat) -> Option<PixelFormat> {
    match f {
        gst_video::VideoFormat::I420 => Some(PixelFormat::I420),
        gst_video::VideoFormat::Nv12 => Some(PixelFormat::Nv12),
        _ => None,
    }
}

/// The format the chain sees for a caps format: 4:2:0 is converted to RGBA.
fn dev_format(f: gst_video::VideoFormat) -> Option<DevFormat> {
    match f {
        gst_video::VideoFormat::Rgba
        | gst_video::VideoFormat::I420
        | gst_video::VideoFormat::Nv12 => Some(DevFormat::Rgba),
        gst_video::VideoFormat::Gray8 => Some(DevFormat::Gray),
        _ => None,
    }
}

/// The caps format of the chain's output: a YUV input's layout while the
/// chain's output is colour, else the chain's own format.
fn video_format(input: gst_video::VideoFormat, out: DevFormat) -> gst_video::VideoFormat {
    match (yuv_layout(input), out) {
        (Some(_), DevFormat::Rgba) => input,
        (_, DevFormat::Rgba) => gst_video::VideoFormat::Rgba,
        (_, DevFormat::Gray) => gst_video::VideoFormat::Gray8,
    }
}

/// System memory in the four formats; CUDA memory in the three GStreamer's
/// CUDA allocator lays out (1.22's has no GRAY8).
fn template_caps() -> gst::Caps {
    let mut caps = gst_video::VideoCapsBuilder::new()
        .format_list([
            gst_video::VideoFormat::Rgba,
            gst_video::VideoFormat::Gray8,
            gst_video::VideoFormat::I420,
            gst_video::VideoFormat::Nv12,
        ])
        .build();
    let in_cuda = gst_video::VideoCapsBuilder::new()
        .features([cuda::CAPS_FEATURE])
        .format_list([
            gst_video::VideoFormat::Rgba,
            gst_video::VideoFormat::I420,
            gst_video::VideoFormat::Nv12,
        ])
        .build();
    caps.merge(in_cuda);
    caps
}

pub(crate) fn pad_templates() -> Vec<gst::PadTemplate> {
    let caps = template_caps();
    vec![
        gst::PadTemplate::new(
            "src",
            gst::PadDirection::Src,
            gst::PadPresence::Always,
            &caps,
        )
        .expect("a valid template"),
        gst::PadTemplate::new(
            "sink",
            gst::PadDirection::Sink,
            gst::PadPresence::Always,
            &caps,
        )
        .expect("a valid template"),
    ]
}

/// The engine behind both elements.
#[derive(Default)]
pub(crate) struct Engine {
    state: Mutex<Option<State>>,
    /// Finished frames not yet pushed: the ring gives them back in bursts,
    /// `generate_output` one a call.
    pending: Mutex<VecDeque<gst::Buffer>>,
    /// GStreamer's CUDA context, shared with the neighbours, from READY on
    /// (when the device may be a GPU and GStreamer's CUDA library works).
    pub cuda: cuda::ContextSlot,
    /// CUDA memory for the output, when it is negotiated.
    pub pool: Mutex<Option<gst::BufferPool>>,
    /// The GPU `start` compiled the kernels on (when not GStreamer's), for
    /// `set_caps` to run on: its kernels are loaded already.
    warm: Mutex<Option<Gpu>>,
}

pub(crate) fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|e| e.into_inner())
}

impl Engine {
    /// Caps on the other side of the element for `caps` on this side
    /// (`direction` is where `caps` are). Downstream, fixed sizes and
    /// formats become the chain's output; upstream, any size of the same
    /// format may come in (the chain decides what it makes of it). With a
    /// CUDA context, CUDA memory in may go out in CUDA memory (first) or in
    /// system memory; system memory stays in system memory, and may come
    /// from CUDA memory.
    pub fn transform_caps(
        settings: &Settings,
        cuda_ok: bool,
        direction: gst::PadDirection,
        caps: &gst::Caps,
    ) -> gst::Caps {
        let chain = registry::parse_chain_line(&settings.chain).ok();
        let mut out = gst::Caps::new_empty();
        let system = gst::CapsFeatures::new_empty();
        let device = gst::CapsFeatures::new([cuda::CAPS_FEATURE]);
        for (s, features) in caps.iter_with_features() {
            let in_cuda = features.contains(cuda::CAPS_FEATURE);
            if in_cuda && !cuda_ok {
                continue;
            }
            let mut s = s.to_owned();
            match direction {
                gst::PadDirection::Sink => {
                    let format = s
                        .get::<&str>("format")
                        .ok()
                        .map(gst_video::VideoFormat::from_string);
                    let shape = (
                        s.get::<i32>("width").ok(),
                        s.get::<i32>("height").ok(),
                        format.and_then(dev_format),
                    );
                    match (shape, &chain, format) {
                        ((Some(w), Some(h), Some(f)), Some(c), Some(vf)) if w > 0 && h > 0 => {
                            // A size the chain refuses is offered as it
                            // came, so that negotiation reaches `set_caps`,
                            // which refuses it naming the property
                            // (dropping it gave "not-negotiated").
                            if let Ok((ow, oh, of)) = c.output_shape(w as usize, h as usize, f) {
                                s.set("width", ow as i32);
                                s.set("height", oh as i32);
                                s.set("format", video_format(vf, of).to_str());
                            }
                        }
                        _ => {
                            s.set("width", gst::IntRange::new(1, i32::MAX));
                            s.set("height", gst::IntRange::new(1, i32::MAX));
                            s.remove_field("format");
                        }
                    }
                }
                _ => {
                    s.set("width", gst::IntRange::new(1, i32::MAX));
                    s.set("height", gst::IntRange::new(1, i32::MAX));
                    s.remove_field("format");
                }
            }
            let outs: &[&gst::CapsFeatures] = match (direction, in_cuda) {
                // CUDA memory in: out in CUDA memory, else downloaded.
                (gst::PadDirection::Sink, true) => &[&device, &system],
                // CUDA memory out comes only from CUDA memory in.
                (_, true) => &[&device],
                // System memory out: from CUDA memory in (preferred: no
                // upload), or from system memory.
                (gst::PadDirection::Src, false) if cuda_ok => &[&device, &system],
                _ => &[&system],
            };
            let caps = out.get_mut().expect("new caps");
            for f in outs {
                caps.append_structure_full(s.clone(), Some((*f).clone()));
            }
        }
        out.intersect_with_mode(&template_caps(), gst::CapsIntersectMode::First)
    }

    /// Compiles (or loads from the cache) the kernels of the chain for the
    /// GPU it will run on, when it will run on one; best effort (set_caps
    /// reports what fails).
    pub fn warm_up(&self, settings: &Settings) {
        let Ok(chain) = registry::parse_chain_line_for(&settings.chain, Media::Video) else {
            return;
        };
        let shared = self.cuda.gpu().ok();
        if let Ok(Some(gpu)) = open_device(&settings.device, shared.as_ref()) {
            #[cfg(feature = "cuda")]
            crate::cuda::stage::warm_up(&gpu, &chain);
            #[cfg(not(feature = "cuda"))]
            let _ = chain;
            *lock(&self.warm) = Some(gpu);
        }
    }

    /// `caps` with its structures in CUDA memory first.
    pub fn cuda_first(caps: gst::Caps) -> gst::Caps {
        let mut out = gst::Caps::new_empty();
        let o = out.get_mut().expect("new caps");
        for cuda in [true, false] {
            for (s, f) in caps.iter_with_features() {
                if f.contains(cuda::CAPS_FEATURE) == cuda {
                    o.append_structure_full(s.to_owned(), Some(f.to_owned()));
                }
            }
        }
        out
    }

    pub fn set_caps(
        &self,
        element: &gst::Element,
        settings: &Settings,
        incaps: &gst::Caps,
        outcaps: &gst::Caps,
    ) -> Result<(), gst::LoggableError> {
        let fail = |what: String| {
            element.post_error_message(gst::error_msg!(gst::LibraryError::Settings, ("{}", what)));
            gst::loggable_error!(CAT, "{}", what)
        };
        // Frames of the old caps go out first.
        self.drain(element);
        let in_info = gst_video::VideoInfo::from_caps(incaps)
            .map_err(|_| gst::loggable_error!(CAT, "unusable input caps {incaps}"))?;
        let out_info = gst_video::VideoInfo::from_caps(outcaps)
            .map_err(|_| gst::loggable_error!(CAT, "unusable output caps {outcaps}"))?;
        let format = dev_format(in_info.format())
            .ok_or_else(|| gst::loggable_error!(CAT, "unsupported format"))?;
        let input = (in_info.width() as usize, in_info.height() as usize, format);
        let chain = registry::parse_chain_line_for(&settings.chain, Media::Video)
            .map_err(|e| fail(format!("ops: {e}")))?;
        let output = chain
            .output_shape(input.0, input.1, input.2)
            .map_err(|e| fail(e.to_string()))?;
        let (in_cuda, out_cuda) = (cuda::caps_in_cuda(incaps), cuda::caps_in_cuda(outcaps));
        let shared = self.cuda.gpu().ok();
        let warm = lock(&self.warm).clone();
        let gpu = open_device(&settings.device, shared.as_ref().or(warm.as_ref())).map_err(fail)?;
        if (in_cuda || out_cuda) && gpu.is_some() && shared.is_none() {
            return Err(fail(format!(
                "device={}: CUDA memory was negotiated without GStreamer's CUDA context",
                settings.device_text()
            )));
        }
        let backend = match (gpu, in_cuda || out_cuda) {
            // In CUDA memory, the GPU of the buffers' context.
            (Some(_), true) => Backend::Cuda(shared.clone().expect("checked above")),
            (Some(gpu), false) => Backend::Cuda(gpu),
            (None, _) => Backend::Cpu,
        };
        let on_gpu = matches!(backend, Backend::Cuda(_));
        gst::debug!(
            CAT,
            obj = element,
            "{input:?} -> {output:?} on {}, in {} memory, out {} memory",
            if on_gpu { "the GPU" } else { "the CPU" },
            if in_cuda { "CUDA" } else { "system" },
            if out_cuda { "CUDA" } else { "system" },
        );
        let yuv_out = yuv_layout(out_info.format());
        // An empty chain, or retargeting to the size the frames have, is
        // passthrough: the buffers go on untouched.
        let same_size = (output.0, output.1) == (input.0, input.1);
        let passthrough =
            chain.names().iter().all(|n| *n == "retarget") && same_size && incaps == outcaps;
        let mut work = Work::new(chain, backend.clone(), SLOTS, yuv_out, false);
        // The rate sets a live reframe's look-ahead, which the latency
        // query reports.
        work.set_rate(in_info.fps())
            .map_err(|e| fail(e.to_string()))?;
        let holds = work.delay() > 0;
        let out = if out_cuda {
            None
        } else {
            Some(run::OutBuffers::new(out_info.clone()).map_err(|e| fail(e.to_string()))?)
        };
        *lock(&self.state) = Some(State {
            text: settings.chain.clone(),
            backend,
            work,
            in_info,
            out_info,
            in_cuda,
            out_cuda,
            yuv_out,
            out,
        });
        if let Some(t) = element.downcast_ref::<gst_base::BaseTransform>() {
            t.set_passthrough(passthrough);
        }
        if on_gpu || holds {
            // The ring holds a frame from now on, or the chain its
            // look-ahead: a live pipeline, which
            // asked for the latency before the caps came, asks again.
            let _ = element.post_message(gst::message::Latency::builder().src(element).build());
        }
        Ok(())
    }

    /// Takes `inbuf` through the chain; what finished (none, or a few from
    /// the ring) waits in `pending`.
    pub fn push(&self, inbuf: gst::Buffer) -> Result<(), gst::ErrorMessage> {
        let mut guard = lock(&self.state);
        let state = guard.as_mut().ok_or_else(|| {
            gst::error_msg!(
                gst::CoreError::Negotiation,
                ("no caps before the first frame")
            )
        })?;
        let failed = |e: String| gst::error_msg!(gst::LibraryError::Failed, ("{}", e));
        let on_gpu = matches!(state.backend, Backend::Cuda(_));
        let frame = if !on_gpu {
            Pixels::Picture(
                run::picture_from_buffer(inbuf.as_ref(), &state.in_info)
                    .map_err(|e| failed(e.to_string()))?,
            )
        } else if state.in_cuda {
            let planes = cuda::device_planes(inbuf.as_ref(), &state.in_info, false)
                .ok_or_else(|| failed("an input buffer is not in CUDA memory".into()))?;
            let out = if state.out_cuda {
                Some(self.device_out(&state.out_info)?)
            } else {
                None
            };
            Pixels::Device(Box::new(DeviceIn {
                buffer: inbuf.clone(),
                planes,
                info: state.in_info.clone(),
                out,
            }))
        } else {
            Pixels::Buffer(inbuf.clone(), state.in_info.clone())
        };
        let timed = Timed {
            frame,
            pts: inbuf.pts(),
            duration: inbuf.duration(),
            info: state.in_info.clone(),
            warmup: false,
        };
        // The chain's errors, with the CPU as the way out where it is one.
        let chain_failed = |e: crate::Error| failed(element_advice(&e.to_string(), &e));
        let mut done = state.work.push(timed).map_err(chain_failed)?;
        let held = state.held();
        done.extend(state.work.settle(held).map_err(chain_failed)?);
        let buffers = done
            .into_iter()
            .map(|t| self.out_buffer(state, t))
            .collect::<Result<Vec<_>, _>>()?;
        lock(&self.pending).extend(buffers);
        Ok(())
    }

    /// An output buffer in CUDA memory, and its device planes to write.
    fn device_out(&self, info: &gst_video::VideoInfo) -> Result<DeviceOut, gst::ErrorMessage> {
        let failed = |e: &str| gst::error_msg!(gst::ResourceError::Failed, ("{}", e));
        let pool = lock(&self.pool)
            .clone()
            .ok_or_else(|| failed("no CUDA memory pool was set up for the output"))?;
        let buffer = pool
            .acquire_buffer(None)
            .map_err(|_| failed("cannot get an output buffer in CUDA memory"))?;
        let planes = cuda::device_planes(buffer.as_ref(), info, true)
            .ok_or_else(|| failed("the CUDA pool gave a buffer not in CUDA memory"))?;
        Ok(DeviceOut {
            buffer,
            planes,
            info: info.clone(),
        })
    }

    /// A finished frame as a buffer laid out as the output caps say.
    fn out_buffer(&self, state: &State, t: Timed) -> Result<gst::Buffer, gst::ErrorMessage> {
        let failed = |e: String| gst::error_msg!(gst::LibraryError::Failed, ("{}", e));
        let mut buffer = match t.frame {
            Pixels::Buffer(b, _) => b,
            Pixels::Device(d) => d.buffer,
            Pixels::Picture(p) => {
                let (w, h) = (p.width(), p.height());
                let (ow, oh) = (
                    state.out_info.width() as usize,
                    state.out_info.height() as usize,
                );
                if (w, h) != (ow, oh) {
                    return Err(failed(format!(
                        "the chain made a {w}x{h} frame where {ow}x{oh} was negotiated"
                    )));
                }
                if let Some(out) = &state.out {
                    return run::buffer_from_picture(&p, out, t.pts, t.duration)
                        .map_err(|e| failed(e.to_string()));
                }
                // CUDA memory out from the CPU: written through its host
                // mapping (GStreamer uploads it when next mapped for CUDA).
                let mut b = lock(&self.pool)
                    .clone()
                    .ok_or_else(|| failed("no CUDA memory pool was set up for the output".into()))?
                    .acquire_buffer(None)
                    .map_err(|_| failed("cannot get an output buffer in CUDA memory".into()))?;
                let mut map = b
                    .make_mut()
                    .map_writable()
                    .map_err(|e| failed(e.to_string()))?;
                run::write_picture(&p, &state.out_info, map.as_mut_slice());
                drop(map);
                b
            }
        };
        buffer = stamp(buffer, &t.pts, &t.duration);
        Ok(buffer)
    }

    /// Every frame still in the chain: those it holds to look ahead (each
    /// repeat of the last frame given an output buffer in CUDA memory
    /// where the frames go out in it), then those in the ring.
    fn finish(&self, state: &mut State) -> crate::Result<Vec<Timed>> {
        let (in_cuda, out_cuda, info) = (state.in_cuda, state.out_cuda, state.out_info.clone());
        let mut out = || {
            (in_cuda && out_cuda)
                .then(|| self.device_out(&info).ok())
                .flatten()
        };
        let mut done = state.work.drain(&mut out)?;
        done.extend(state.work.finish()?);
        Ok(done)
    }

    /// The next finished frame, if any.
    pub fn next(&self) -> Option<gst::Buffer> {
        lock(&self.pending).pop_front()
    }

    /// Waits for every frame in the ring and pushes them, and what was
    /// pending, downstream (before EOS, new caps or a fresh start).
    pub fn drain(&self, element: &gst::Element) {
        let finished = {
            let mut guard = lock(&self.state);
            match guard.as_mut() {
                Some(state) => match self.finish(state) {
                    Ok(done) => done
                        .into_iter()
                        .filter_map(|t| self.out_buffer(state, t).ok())
                        .collect(),
                    Err(e) => {
                        gst::warning!(CAT, obj = element, "frames lost in the ring: {e}");
                        Vec::new()
                    }
                },
                None => Vec::new(),
            }
        };
        lock(&self.pending).extend(finished);
        let Some(src) = element.static_pad("src") else {
            return;
        };
        while let Some(b) = self.next() {
            if src.push(b).is_err() {
                break;
            }
        }
    }

    /// Forgets what the chain carries from frame to frame (fast mode's
    /// seams), after the frames in the ring have gone out (`drain`) or been
    /// dropped (a flush).
    pub fn reset(&self, element: &gst::Element, flushing: bool) {
        if flushing {
            lock(&self.pending).clear();
        } else {
            self.drain(element);
        }
        let mut guard = lock(&self.state);
        if let Some(state) = guard.as_mut()
            && let Ok(work) = state.fresh_work()
        {
            state.work = work;
        }
    }

    /// The frames the element holds back at most, as latency.
    pub fn held(&self) -> Option<gst::ClockTime> {
        let guard = lock(&self.state);
        let state = guard.as_ref()?;
        let fps = state.in_info.fps();
        if fps.numer() <= 0 || fps.denom() <= 0 {
            return None;
        }
        let frame = gst::ClockTime::SECOND.mul_div_floor(fps.denom() as u64, fps.numer() as u64)?;
        Some(frame * state.latency_frames() as u64)
    }

    pub fn stop(&self) {
        *lock(&self.warm) = None;
        *lock(&self.state) = None;
        lock(&self.pending).clear();
    }
}

/// `buffer` with `pts` and `duration`.
fn stamp(
    mut buffer: gst::Buffer,
    pts: &Option<gst::ClockTime>,
    duration: &Option<gst::ClockTime>,
) -> gst::Buffer {
    let b = buffer.make_mut();
    b.set_pts(*pts);
    b.set_duration(*duration);
    buffer
}

/// The GPU for `device` (`shared`, GStreamer's context, where it is on the
/// GPU asked for), `None` for the CPU; an error names the value.
fn open_device(
    device: &Result<crate::Device, String>,
    shared: Option<&Gpu>,
) -> Result<Option<Gpu>, String> {
    let parsed = device
        .clone()
        .map_err(|text| format!("device={text}: expected {DEVICE_HELP}"))?;
    match crate::cuda::place(parsed, shared) {
        Ok(crate::cuda::Placed::Gpu(g)) => Ok(Some(g)),
        Ok(crate::cuda::Placed::Cpu { .. }) => Ok(None),
        Err(e) => Err(element_advice(&format!("device={parsed}: {e}"), &e)),
    }
}

/// An error as the elements say it: where the CPU would avoid it, with
/// `device=cpu` as the way out (the library leaves advice to each
/// interface).
pub(crate) fn element_advice(text: &str, e: &crate::Error) -> String {
    if e.cpu_runs_it() {
        format!("{text}; use device=cpu")
    } else {
        text.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cuda_first_moves_cuda_memory_ahead_and_keeps_the_rest_in_order() {
        gst::init().unwrap();
        let caps: gst::Caps = "video/x-raw, format=NV12; video/x-raw, format=I420; \
                               video/x-raw(memory:CUDAMemory), format=NV12"
            .parse()
            .unwrap();
        let out = Engine::cuda_first(caps);
        let order: Vec<(bool, String)> = out
            .iter_with_features()
            .map(|(s, f)| {
                (
                    f.contains(cuda::CAPS_FEATURE),
                    s.get::<String>("format").unwrap(),
                )
            })
            .collect();
        assert_eq!(
            order,
            [
                (true, "NV12".into()),
                (false, "NV12".into()),
                (false, "I420".into())
            ]
        );
    }
}
