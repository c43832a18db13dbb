//! `box`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "box", summary: "not built yet", params: &[], example: "box" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("box is not built yet".into()))
}
