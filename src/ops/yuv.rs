//! `yuv`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "yuv", summary: "not built yet", params: &[], example: "yuv" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("yuv is not built yet".into()))
}
