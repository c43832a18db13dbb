//! Colour arithmetic below every other layer: the luma matrices, YUV
//! colorimetry and the rounding every conversion shares. It imports nothing
//! from the crate, so [`crate::frame`] and the operations can both build on it.

/// The luma weights.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Matrix {
    Bt709,
    Bt601,
}

impl Matrix {
    /// (Kr, Kg, Kb).
    pub fn weights(self) -> (f32, f32, f32) {
        match self {
            Matrix::Bt709 => (0.2126, 0.7152, 0.0722),
            Matrix::Bt601 => (0.299, 0.587, 0.114),
        }
    }
}

/// Luma of one pixel; the order of the f32 operations is part of the
/// definition (the GPU kernel does the same, without fused multiply-adds).
#[inline]
pub fn luma(p: [u8; 4], m: Matrix) -> u8 {
    let (kr, kg, kb) = m.weights();
    let y = kr * p[0] as f32 + kg * p[1] as f32 + kb * p[2] as f32;
    saturate_u8(y)
}

#[inline]
pub fn luma709(p: [u8; 4]) -> u8 {
    luma(p, Matrix::Bt709)
}

/// Limited (video, 16–235) or full (0–255) range.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Range {
    Limited,
    Full,
}

/// How YUV values map to RGB.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Colorimetry {
    pub matrix: Matrix,
    pub range: Range,
}

impl Default for Colorimetry {
    fn default() -> Self {
        Self {
            matrix: Matrix::Bt709,
            range: Range::Limited,
        }
    }
}

impl Colorimetry {
    /// (y scale, y offset, c scale) from 0..255 RGB units to stored units.
    pub fn scales(self) -> (f32, f32, f32) {
        match self.range {
            Range::Limited => (219.0 / 255.0, 16.0, 224.0 / 255.0),
            Range::Full => (1.0, 0.0, 1.0),
        }
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
pub(crate) const BELOW_HALF: f32 = 0.499_999_97;
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

    #[test]
    fn primaries_take_their_weights() {
        assert_eq!(luma([255, 0, 0, 255], Matrix::Bt709), 54); // 54.213
        assert_eq!(luma([0, 255, 0, 255], Matrix::Bt709), 182); // 182.376
        assert_eq!(luma([0, 0, 255, 255], Matrix::Bt709), 18); // 18.411
        assert_eq!(luma([255, 0, 0, 255], Matrix::Bt601), 76); // 76.245
        assert_eq!(luma([255, 255, 255, 0], Matrix::Bt709), 255);
        assert_eq!(luma([0, 0, 0, 255], Matrix::Bt601), 0);
    }

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
