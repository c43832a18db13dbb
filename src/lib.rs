//! seamstream: a video pipeline in which GStreamer feeds frames to a chain of
//! image operations (on CUDA, or on the CPU where there is no GPU) and takes
//! the results back.
//!
//! The library's entry points (docs/DESIGN.md §7):
//!
//! - **A chain from text**: [`registry::parse_chain`] and
//!   [`registry::parse_op`] take the grammar of `--op`
//!   (`gaussian:sigma=2`, `retarget:width=75%`); [`registry::REGISTRY`]
//!   lists every operation with its parameters.
//! - **Each operation's CPU reference**, which defines it: the modules of
//!   [`ops`], applied to a [`Frame`] by [`Op::apply`] or [`Chain::apply`].
//! - **The same chain on a GPU**: [`cuda::stage::GpuChain`] (with the
//!   default `cuda` feature; [`Device`] says where a chain runs).
//! - **Still pictures** in and out: [`io`].
//! - **The GStreamer elements**, linked in: [`plugin::register_static`].
//!
//! ```
//! use seamstream::{Frame, registry};
//!
//! let mut chain = registry::parse_chain(&["gaussian:sigma=2", "retarget:width=75%"])?;
//! let picture = Frame::Rgba(seamstream::Plane::from_fn(64, 48, |x, y| {
//!     [x as u8, y as u8, 128, 255]
//! }));
//! let out = chain.apply(picture)?;
//! assert_eq!((out.width(), out.height()), (48, 48));
//! # Ok::<(), seamstream::Error>(())
//! ```
//!
//! The other modules are public for seamstream's own binary and tests, and
//! hidden from these pages: they are not an API and change without notice.

// Without CUDA, what only the GPU ring reads (a CUDA buffer's planes, the
// functions that fill the ring) is unused; the CUDA build checks it.
#![cfg_attr(not(feature = "cuda"), allow(dead_code))]

pub mod plugin;

pub use seamstream_core::{error, frame, io, ops, registry};
#[cfg(feature = "cuda")]
pub use seamstream_cuda as cuda;
#[cfg(not(feature = "cuda"))]
#[path = "cuda_absent.rs"]
pub mod cuda;

pub use seamstream_core::device::Device;
pub use seamstream_core::error::{Error, ErrorKind, Result};
pub use seamstream_core::frame::{DevFormat, Frame, PixelFormat, Plane, Rgba, Yuv420};
pub use seamstream_core::ops::{Chain, Op};

// For the binary and the tests only.
#[doc(hidden)]
pub mod gst;
#[doc(hidden)]
pub mod pipeline;
#[doc(hidden)]
pub mod quality;
#[doc(hidden)]
pub mod split;
#[doc(hidden)]
pub use seamstream_core::trace;
#[doc(hidden)]
pub use seamstream_core::{args, color, device, fault, noise, planes};
