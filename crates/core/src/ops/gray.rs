//! `gray`: RGBA to luma. Y = Kr·R + Kg·G + Kb·B in f32, rounded to nearest.

use super::params::{Kind, OpSpec, ParamSpec, Params};
use super::{Op, OpBox};
use crate::color::Matrix;
use crate::error::Result;
use crate::frame::{DevFormat, Frame, rgba_to_luma};

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

    fn output_format(&self, _: DevFormat) -> DevFormat {
        match self.as_rgba {
            true => DevFormat::Rgba,
            false => DevFormat::Gray,
        }
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
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::color::luma;
    use crate::frame::Plane;

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
