//! `sobel`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "sobel", summary: "not built yet", params: &[], example: "sobel" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("sobel is not built yet".into()))
}
