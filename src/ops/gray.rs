//! `gray`: RGBA to luma. Y = Kr·R + Kg·G + Kb·B in f32, rounded to nearest.

use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox};
use crate::error::Result;
use crate::frame::{Frame, Plane, Rgba};

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
pub fn luma(p: Rgba, m: Matrix) -> u8 {
    let (kr, kg, kb) = m.weights();
    let y = kr * p[0] as f32 + kg * p[1] as f32 + kb * p[2] as f32;
    super::pixel::saturate_u8(y)
}

#[inline]
pub fn luma709(p: Rgba) -> u8 {
    luma(p, Matrix::Bt709)
}

/// The luma plane of an RGBA plane.
pub fn rgba_to_luma(src: &Plane<Rgba>, m: Matrix) -> Plane<u8> {
    use rayon::prelude::*;
    let mut out = Plane::new(src.width(), src.height(), 0u8);
    out.par_rows_mut().for_each(|(y, row)| {
        // A plain loop over two slices (not `Plane::map`), so that it vectorises.
        for (o, &p) in row.iter_mut().zip(src.row(y)) {
            *o = luma(p, m);
        }
    });
    out
}

pub static SPEC: OpSpec = OpSpec {
    name: "gray",
    summary: "RGBA to luma (Y = 0.2126R + 0.7152G + 0.0722B for bt709)",
    params: &[
        ParamSpec::new(
            "matrix",
            Kind::Choice(&["bt709", "bt601"]),
            "bt709",
            "luma weights",
        ),
        ParamSpec::new(
            "output",
            Kind::Choice(&["gray", "rgba"]),
            "gray",
            "a gray frame, or gray written to R, G and B",
        ),
    ],
    example: "gray:matrix=bt601",
};

#[derive(Debug)]
pub struct Gray {
    pub matrix: Matrix,
    pub as_rgba: bool,
}

pub fn build(p: &Params) -> Result<OpBox> {
    let matrix = if p.word("matrix")? == "bt601" {
        Matrix::Bt601
    } else {
        Matrix::Bt709
    };
    Ok(Box::new(Gray {
        matrix,
        as_rgba: p.word("output")? == "rgba",
    }))
}

impl Op for Gray {
    fn name(&self) -> &'static str {
        "gray"
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let y = match frame {
            Frame::Rgba(p) => rgba_to_luma(p, self.matrix),
            Frame::Gray(p) => p.clone(),
        };
        Ok(if self.as_rgba {
            Frame::Rgba(y.map(|v| [v, v, v, 255]))
        } else {
            Frame::Gray(y)
        })
    }

    fn cuda(&self) -> Result<Box<dyn crate::cuda::GpuOp>> {
        Ok(Box::new(crate::cuda::ops::gray::GpuGray::new(self)))
    }
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

    #[test]
    fn gray_as_rgba_keeps_size_and_is_opaque() {
        let f = Frame::Rgba(Plane::new(3, 2, [10, 200, 30, 7]));
        let mut op = Gray {
            matrix: Matrix::Bt709,
            as_rgba: true,
        };
        let out = op.apply(&f).unwrap();
        let Frame::Rgba(p) = out else {
            panic!("expected RGBA")
        };
        let y = luma([10, 200, 30, 7], Matrix::Bt709);
        assert_eq!(p.get(2, 1), [y, y, y, 255]);
    }
}
