//! seamstream's host half, which knows nothing of GStreamer or the GPU: the
//! error type, colour, host frames and their device layouts, still images,
//! and every operation's spec, parameters and CPU reference, which defines
//! the operation. The GPU halves (`seamstream-cuda`) and the pipeline
//! (`seamstream`) build on it.

pub mod args;
pub mod color;
pub mod device;
pub mod error;
pub mod fault;
pub mod frame;
pub mod io;
pub mod noise;
pub mod ops;
pub mod planes;
pub mod registry;
#[doc(hidden)]
pub mod trace;

pub use device::Device;
pub use error::{Error, Result};
pub use frame::{Frame, PixelFormat, Plane, Rgba, Yuv420};
pub use ops::{Chain, Op};
