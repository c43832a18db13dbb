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
        super::gray::luma709(self)
    }
    #[inline]
    fn splat(v: u8) -> Self {
        [v, v, v, 255]
    }
}

/// Rounds to nearest (half away from zero) and saturates to `u8`; NaN gives 0.
///
/// This is `v.round().clamp(0.0, 255.0) as u8` (checked on every f32 in the
/// tests), written without a call to `roundf` (baseline x86-64 has no
/// rounding instruction) or a saturating conversion, so that loops of it
/// vectorise. After the clamp `c ≥ 0`, so rounding half away from zero is
/// `floor(c + pred(0.5))` (`c + 0.5` would round `pred(0.5)` up).
#[inline]
#[allow(
    clippy::manual_clamp,
    reason = "max/min send NaN to 0, where clamp would keep it"
)]
pub fn saturate_u8(v: f32) -> u8 {
    floor_u8(v.max(0.0).min(255.0) + BELOW_HALF)
}

/// The largest f32 below one half.
const BELOW_HALF: f32 = 0.499_999_97;
/// 2²³: adding it to a value in [0, 2²³) leaves that value rounded to an
/// integer in the low mantissa bits.
const MAGIC: f32 = 8_388_608.0;

/// `floor(c)` for `0 ≤ c < 256` (not NaN), without a saturating conversion:
/// `c + 2²³` holds `c` rounded to the nearest integer in its low mantissa
/// bits, and one is taken off where that is above `c`.
#[inline]
pub(crate) fn floor_u8(c: f32) -> u8 {
    let m = c + MAGIC;
    let nearest = m.to_bits().wrapping_sub(MAGIC.to_bits());
    (nearest - u32::from(m - MAGIC > c)) as u8
}

#[cfg(test)]
mod tests {
    use super::*;

    fn reference(v: f32) -> u8 {
        v.round().clamp(0.0, 255.0) as u8
    }

    #[test]
    fn saturate_u8_rounds_half_away_from_zero_on_every_float_from_a_quarter_to_256() {
        let (lo, hi) = (0.25f32.to_bits(), 256.0f32.to_bits());
        for b in lo..=hi {
            let v = f32::from_bits(b);
            assert_eq!(saturate_u8(v), reference(v), "{v:e}");
        }
        for v in [
            f32::INFINITY,
            f32::NEG_INFINITY,
            -0.0,
            0.0,
            -0.5,
            -0.49999997,
            -1.5,
            -300.0,
            1e30,
            0.1,
            0.5,
            254.5,
        ] {
            assert_eq!(saturate_u8(v), reference(v), "{v:e}");
        }
        assert_eq!(saturate_u8(f32::NAN), 0);
    }
}
