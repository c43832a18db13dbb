//! `convolve`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "convolve", summary: "not built yet", params: &[], example: "convolve" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("convolve is not built yet".into()))
}
