//! What travels between the run's threads and through the engine: a
//! frame's pixels (a picture, a GStreamer buffer, or CUDA memory) with its
//! timing, and where the GPU stage puts finished frames.

use gstreamer as gst;
use gstreamer_video as gst_video;

use crate::frame::Picture;
use crate::gst::cuda::PipelineContext;
use crate::planes::DevicePlane;

/// A frame's pixels between the threads.
pub(crate) enum Pixels {
    /// Copied out of GStreamer (the CPU backend), or made by the chain.
    Picture(Picture),
    /// A GStreamer buffer laid out as the info says: an input frame for the
    /// GPU stage to copy from, or a finished one to push as it is.
    Buffer(gst::Buffer, gst_video::VideoInfo),
    /// A buffer in GStreamer's CUDA memory.
    /// (Boxed: its planes make it the largest.)
    Device(Box<DeviceIn>),
}

/// A frame in GStreamer's CUDA memory, laid out as `info` says, for the GPU
/// stage to copy from on the device; the result goes into `out` (a buffer
/// in CUDA memory) when given, else comes back in system memory.
pub(crate) struct DeviceIn {
    pub buffer: gst::Buffer,
    pub planes: [DevicePlane; 3],
    pub info: gst_video::VideoInfo,
    pub out: Option<DeviceOut>,
}

/// An output buffer in CUDA memory for the GPU stage to write into.
pub(crate) struct DeviceOut {
    pub buffer: gst::Buffer,
    pub planes: [DevicePlane; 3],
    pub info: gst_video::VideoInfo,
}

impl Pixels {
    pub fn width(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.width(),
            Pixels::Buffer(_, info) => info.width() as usize,
            Pixels::Device(d) => d.info.width() as usize,
        }
    }

    pub fn height(&self) -> usize {
        match self {
            Pixels::Picture(p) => p.height(),
            Pixels::Buffer(_, info) => info.height() as usize,
            Pixels::Device(d) => d.info.height() as usize,
        }
    }
}

/// A frame with its timing and the caps it arrived with.
pub(crate) struct Timed {
    pub frame: Pixels,
    pub pts: Option<gst::ClockTime>,
    pub duration: Option<gst::ClockTime>,
    pub info: gst_video::VideoInfo,
    /// A warm-up frame of a part of a split job: it goes through the chain
    /// (whose memory it fills) but not into the output.
    pub warmup: bool,
}

/// Where the GPU stage writes finished frames that no caller's buffer
/// awaits.
#[derive(Clone, Debug, Default)]
pub(crate) enum OutMemory {
    /// Into the slot's pinned buffer, then copied into a buffer of the
    /// output's pool.
    #[default]
    Slot,
    /// Straight into pinned host memory that goes on as the buffer (to an
    /// encoder, a file, a fragment): one download, no host copy.
    Pinned,
    /// Into GStreamer's CUDA memory on the run's context, for an output that
    /// takes it: no download at all.
    Cuda(PipelineContext),
}
