//! Border modes: how a pixel outside the frame is read.

/// `zero`: outside is 0; `replicate`: the nearest edge pixel (the default);
/// `reflect101`: mirrored without repeating the edge (`gfedcb|abcdefgh|gfedcba`),
/// as OpenCV's BORDER_REFLECT_101.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Border {
    Zero,
    #[default]
    Replicate,
    Reflect101,
}

pub const BORDER_CHOICES: &[&str] = &["zero", "replicate", "reflect101"];

impl Border {
    pub fn parse(name: &str) -> Option<Self> {
        match name {
            "zero" => Some(Border::Zero),
            "replicate" => Some(Border::Replicate),
            "reflect101" => Some(Border::Reflect101),
            _ => None,
        }
    }

    /// The in-frame index that stands for index `i` on an axis of length `n`,
    /// or `None` where the border is zero. `n` must be at least 1.
    #[inline]
    pub fn index(self, i: isize, n: usize) -> Option<usize> {
        let last = n as isize - 1;
        if (0..=last).contains(&i) {
            return Some(i as usize);
        }
        match self {
            Border::Zero => None,
            Border::Replicate => Some(i.clamp(0, last) as usize),
            Border::Reflect101 => {
                if n == 1 {
                    return Some(0);
                }
                let period = 2 * last;
                let m = i.rem_euclid(period);
                Some(if m > last {
                    (period - m) as usize
                } else {
                    m as usize
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reflect101_mirrors_without_repeating_the_edge() {
        let got: Vec<_> = (-3..8)
            .map(|i| Border::Reflect101.index(i, 5).unwrap())
            .collect();
        assert_eq!(got, vec![3, 2, 1, 0, 1, 2, 3, 4, 3, 2, 1]);
    }

    #[test]
    fn reflect101_far_outside_stays_in_range() {
        for i in -50..50 {
            assert!(Border::Reflect101.index(i, 3).unwrap() < 3);
            assert_eq!(Border::Reflect101.index(i, 1), Some(0));
        }
    }

    #[test]
    fn replicate_clamps_and_zero_is_none() {
        assert_eq!(Border::Replicate.index(-4, 5), Some(0));
        assert_eq!(Border::Replicate.index(9, 5), Some(4));
        assert_eq!(Border::Zero.index(-1, 5), None);
        assert_eq!(Border::Zero.index(2, 5), Some(2));
    }
}
