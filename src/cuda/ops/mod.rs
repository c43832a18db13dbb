//! The GPU half of each operation, one file per operation as in `src/ops/`,
//! each with its kernels in `kernels/{name}.cu`. An op's CPU type builds its
//! GPU half through [`crate::ops::Op::cuda`].

pub mod adaptive;
pub mod boxfilter;
pub mod convolve;
pub mod equalize;
pub mod gaussian;
pub mod gray;
pub mod integral;
pub mod retarget;
pub mod segment;
pub mod sobel;
pub mod threshold;
pub mod warp;
pub mod yuv;
