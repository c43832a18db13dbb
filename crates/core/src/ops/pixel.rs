//! The pixel types an operation can run on, so one generic CPU routine serves
//! both gray and RGBA frames.

use crate::frame::Rgba;

/// A pixel of `u8` channels. Filters change the first `FILTERED` channels and
/// keep the rest (the alpha of RGBA), so that an edge or sharpen kernel never
/// turns a picture transparent.
pub trait Pixel: Copy + Send + Sync + Default + PartialEq + std::fmt::Debug + 'static {
    /// Channels in the pixel.
    const CHANNELS: usize;
    /// Channels that filters and warps of colour touch.
    const FILTERED: usize;

    fn channel(self, c: usize) -> u8;
    fn set_channel(&mut self, c: usize, v: u8);
    /// BT.709 luma, rounded to nearest (gray: the value itself).
    fn luma(self) -> u8;
    /// A pixel whose colour channels are `v` (alpha opaque).
    fn splat(v: u8) -> Self;
}

impl Pixel for u8 {
    const CHANNELS: usize = 1;
    const FILTERED: usize = 1;

    #[inline]
    fn channel(self, _c: usize) -> u8 {
        self
    }
    #[inline]
    fn set_channel(&mut self, _c: usize, v: u8) {
        *self = v;
    }
    #[inline]
    fn luma(self) -> u8 {
        self
    }
    #[inline]
    fn splat(v: u8) -> Self {
        v
    }
}

impl Pixel for Rgba {
    const CHANNELS: usize = 4;
    const FILTERED: usize = 3;

    #[inline]
    fn channel(self, c: usize) -> u8 {
        self[c]
    }
    #[inline]
    fn set_channel(&mut self, c: usize, v: u8) {
        self[c] = v;
    }
    #[inline]
    fn luma(self) -> u8 {
        crate::color::luma709(self)
    }
    #[inline]
    fn splat(v: u8) -> Self {
        [v, v, v, 255]
    }
}
