//! `gaussian`: a separable Gaussian blur.
//!
//! Taps `g[i] = exp(−i² / (2σ²))` for `i` in `−r..=r`, computed in f64,
//! normalised to sum 1 in f64 and cast to f32; the same taps are applied over
//! x and then over y by [`convolve::separable`] (so rounding and border
//! handling are those of `convolve`). The radius defaults to ⌈3σ⌉ (computed
//! in f64). On RGBA the first three channels are blurred and alpha is copied.

use super::border::{BORDER_CHOICES, Border};
use super::convolve;
use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox, Pixel};
use crate::error::Result;
use crate::frame::{Frame, Plane};

pub static SPEC: OpSpec = OpSpec {
    name: "gaussian",
    summary: "Gaussian blur, separable, taps exp(-i²/2σ²) normalised to sum 1",
    params: &[
        ParamSpec::new(
            "sigma",
            Kind::Float {
                min: 0.1,
                max: 100.0,
            },
            "1",
            "standard deviation in pixels",
        ),
        ParamSpec::optional(
            "radius",
            Kind::Int { min: 0, max: 300 },
            "taps on each side of the centre [default: ⌈3σ⌉]",
        ),
        ParamSpec::new(
            "border",
            Kind::Choice(BORDER_CHOICES),
            "replicate",
            "how pixels outside the frame are read",
        ),
    ],
    example: "gaussian:sigma=2.5,border=reflect101",
};

/// The `gaussian` op.
#[derive(Debug)]
pub struct Gaussian {
    pub sigma: f64,
    pub radius: usize,
    pub border: Border,
    pub taps: Vec<f32>,
}

impl Gaussian {
    /// A blur of `sigma` with `radius` taps each side of the centre.
    pub fn new(sigma: f64, radius: usize, border: Border) -> Self {
        Self {
            sigma,
            radius,
            border,
            taps: gaussian_taps(sigma, radius),
        }
    }
}

/// The radius used when none is given: ⌈3σ⌉, computed in f64.
pub fn default_radius(sigma: f64) -> usize {
    (3.0 * sigma).ceil() as usize
}

/// Builds a `gaussian` op; `radius` defaults to ⌈3σ⌉.
pub fn build(p: &Params) -> Result<OpBox> {
    let sigma = p.f64("sigma")?;
    let radius = match p.opt_f64("radius") {
        Some(r) => r as usize,
        None => default_radius(sigma),
    };
    Ok(Box::new(Gaussian::new(sigma, radius, p.border()?)))
}

impl Op for Gaussian {
    fn name(&self) -> &'static str {
        "gaussian"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let (t, b) = (&self.taps, self.border);
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(convolve::separable(p, t, t, b, 0.0)),
            Frame::Gray(p) => Frame::Gray(convolve::separable(p, t, t, b, 0.0)),
        })
    }
}

/// The `2·radius + 1` taps of a Gaussian of `sigma`: `exp(−i²/(2σ²))` for
/// `i = −radius..=radius` in f64, divided by their f64 sum, cast to f32.
pub fn gaussian_taps(sigma: f64, radius: usize) -> Vec<f32> {
    let r = radius as i64;
    let g: Vec<f64> = (-r..=r)
        .map(|i| (-((i * i) as f64) / (2.0 * sigma * sigma)).exp())
        .collect();
    let sum: f64 = g.iter().sum();
    g.iter().map(|v| (v / sum) as f32).collect()
}

/// Blurs `src` with a Gaussian of `sigma` and `radius`: the separable
/// correlation of [`gaussian_taps`] over x, then over y, no delta.
pub fn gaussian<P: Pixel>(src: &Plane<P>, sigma: f64, radius: usize, border: Border) -> Plane<P> {
    let taps = gaussian_taps(sigma, radius);
    convolve::separable(src, &taps, &taps, border, 0.0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::params::split_op;

    fn parse(text: &str) -> Result<OpBox> {
        let (_, pairs) = split_op(text)?;
        build(&Params::from_pairs(&SPEC, &pairs)?)
    }

    #[test]
    fn taps_are_symmetric_peaked_and_sum_to_one() {
        let t = gaussian_taps(1.0, 3);
        assert_eq!(t.len(), 7);
        for i in 0..3 {
            assert_eq!(t[i], t[6 - i]);
            assert!(t[i] < t[i + 1]);
        }
        let sum: f64 = t.iter().map(|&v| v as f64).sum();
        assert!((sum - 1.0).abs() < 1e-6, "{sum}");
        // exp(-1/2) / (1 + 2e^-1/2 + 2e^-2 + 2e^-9/2)
        let e = |x: f64| (-x).exp();
        let norm = 1.0 + 2.0 * (e(0.5) + e(2.0) + e(4.5));
        assert_eq!(t[2], (e(0.5) / norm) as f32);
        assert_eq!(gaussian_taps(5.0, 0), vec![1.0]);
    }

    #[test]
    fn default_radius_is_three_sigma_rounded_up() {
        assert_eq!(default_radius(1.0), 3);
        assert_eq!(default_radius(0.1), 1);
        assert_eq!(default_radius(2.5), 8);
        assert_eq!(default_radius(100.0), 300);
        let op = parse("gaussian:sigma=2").unwrap();
        assert!(format!("{op:?}").contains("radius: 6"), "{op:?}");
        let op = parse("gaussian:sigma=2,radius=0").unwrap();
        assert!(format!("{op:?}").contains("radius: 0"), "{op:?}");
    }

    #[test]
    fn constant_frame_stays_constant() {
        let src = Plane::new(13, 9, 173u8);
        for b in [Border::Replicate, Border::Reflect101] {
            assert_eq!(gaussian(&src, 2.0, 6, b), src);
        }
        let out = gaussian(&src, 1.0, 3, Border::Zero);
        assert_eq!(out.get(6, 4), 173);
        assert!(out.get(0, 0) < 173);
    }

    #[test]
    fn an_impulse_spreads_as_the_outer_product_of_the_taps() {
        let mut src = Plane::new(9, 9, 0u8);
        src.set(4, 4, 200);
        let out = gaussian(&src, 1.0, 3, Border::Zero);
        let t = gaussian_taps(1.0, 3);
        for y in 0..9usize {
            for x in 0..9usize {
                let want = if x.abs_diff(4) <= 3 && y.abs_diff(4) <= 3 {
                    // The row pass gives t[kx] * 200, the column pass multiplies by t[ky].
                    crate::color::saturate_u8(t[3 + 4 - y] * (t[3 + 4 - x] * 200.0))
                } else {
                    0
                };
                assert_eq!(out.get(x, y), want, "({x}, {y})");
            }
        }
        assert!(out.get(4, 4) > out.get(5, 4) && out.get(5, 4) > out.get(6, 4));
    }

    #[test]
    fn op_blurs_rgba_and_keeps_alpha() {
        let src = Plane::from_fn(8, 6, |x, y| {
            [(x * 30) as u8, (y * 40) as u8, 90, (x + 10 * y) as u8]
        });
        let mut op = parse("gaussian:sigma=1.5,border=reflect101").unwrap();
        let Frame::Rgba(out) = op.apply(&Frame::Rgba(src.clone())).unwrap() else {
            panic!("expected RGBA")
        };
        assert_eq!(out, gaussian(&src, 1.5, 5, Border::Reflect101));
        for y in 0..6 {
            for x in 0..8 {
                assert_eq!(out.get(x, y)[3], src.get(x, y)[3]);
                assert_eq!(out.get(x, y)[2], 90);
            }
        }
        assert_ne!(out.get(0, 0)[0], src.get(0, 0)[0]);
    }

    #[test]
    fn sigma_out_of_range_is_an_error() {
        let e = parse("gaussian:sigma=0").unwrap_err().to_string();
        assert!(e.contains("sigma=0") && e.contains("0.1 to 100"), "{e}");
        let e = parse("gaussian:radius=301").unwrap_err().to_string();
        assert!(e.contains("radius=301") && e.contains("0 to 300"), "{e}");
    }
}
