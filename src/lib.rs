//! seamstream: a video pipeline in which GStreamer feeds frames to a chain of
//! image operations (on CUDA, or on the CPU where there is no GPU) and takes
//! the results back.
//!
//! The CPU reference of every operation lives in [`ops`]; [`frame`] holds the
//! host frame types and [`planes`] lays them out as packed bytes; [`io`]
//! reads and writes still images.

// Without CUDA, what only the GPU ring reads (a CUDA buffer's planes, the
// functions that fill the ring) is unused; the CUDA build checks it.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

pub mod gst;
pub mod pipeline;
pub mod plugin;
pub mod quality;
pub mod split;

pub use seamstream_core::{
    args, color, device, error, fault, frame, io, noise, ops, planes, registry,
};
#[cfg(feature = "cuda")]
pub use seamstream_cuda as cuda;
#[cfg(not(feature = "cuda"))]
#[path = "cuda_absent.rs"]
pub mod cuda;

pub use device::Device;
pub use error::{Error, Result};
pub use frame::{Frame, PixelFormat, Plane, Rgba, Yuv420};
pub use ops::{Chain, Op};
