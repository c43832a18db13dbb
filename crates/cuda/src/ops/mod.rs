//! The GPU half of each operation, one file per operation as in `src/ops/`,
//! each with its kernels in `kernels/{name}.cu`. Each half is a type with
//! `new(&CpuType)`, which takes its parameters from the CPU half; the pairs
//! are named in [`crate::registry`].

pub mod adaptive;
pub mod boxfilter;
pub mod convolve;
pub mod equalize;
pub mod gaussian;
pub mod gray;
pub mod integral;
pub mod reframe;
pub mod retarget;
pub mod segment;
pub mod sobel;
pub mod threshold;
pub mod warp;
pub mod yuv;
