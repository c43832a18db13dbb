//! Seeded pseudo-random data for tests and benchmarks: one xorshift
//! generator, so that a failure repeats from its seed and every test, bench
//! and property draws from the same source.

use crate::frame::{Frame, Plane, Rgba};

/// A xorshift64 generator (Marsaglia's 13, 7, 17), seeded through a
/// multiplicative hash so that neighbouring seeds give unrelated streams.
#[derive(Clone, Debug)]
pub struct Noise(u64);

impl Noise {
    pub fn new(seed: u64) -> Self {
        Noise(seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1)
    }

    /// The next 64 bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        self.0 = x;
        x
    }

    /// A byte from the middle bits.
    pub fn byte(&mut self) -> u8 {
        (self.next_u64() >> 24) as u8
    }

    /// A value in `0..n` (`n` > 0; the bias is below 2⁻³² for the sizes
    /// tests use).
    pub fn below(&mut self, n: u64) -> u64 {
        (self.next_u64() >> 16) % n
    }

    /// `n` random bytes.
    pub fn bytes(&mut self, n: usize) -> Vec<u8> {
        (0..n).map(|_| self.byte()).collect()
    }

    /// A gray plane of random bytes.
    pub fn gray(&mut self, width: usize, height: usize) -> Plane<u8> {
        Plane::from_fn(width, height, |_, _| self.byte())
    }

    /// An RGBA plane of random bytes, alpha included.
    pub fn rgba(&mut self, width: usize, height: usize) -> Plane<Rgba> {
        Plane::from_fn(width, height, |_, _| {
            [self.byte(), self.byte(), self.byte(), self.byte()]
        })
    }

    /// A frame of random bytes, gray or RGBA.
    pub fn frame(&mut self, width: usize, height: usize, gray: bool) -> Frame {
        if gray {
            Frame::Gray(self.gray(width, height))
        } else {
            Frame::Rgba(self.rgba(width, height))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_seed_repeats_and_seeds_differ() {
        let a: Vec<u64> = (0..4)
            .map({
                let mut n = Noise::new(7);
                move |_| n.next_u64()
            })
            .collect();
        let mut n = Noise::new(7);
        assert_eq!(a, (0..4).map(|_| n.next_u64()).collect::<Vec<_>>());
        assert_ne!(Noise::new(8).next_u64(), a[0]);
        // Every byte value turns up in a few thousand draws.
        let mut n = Noise::new(1);
        let mut seen = [false; 256];
        (0..10_000).for_each(|_| seen[n.byte() as usize] = true);
        assert!(seen.iter().all(|&s| s));
        assert!((0..1000).all(|_| n.below(3) < 3));
    }
}
