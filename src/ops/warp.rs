//! `warp`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "warp", summary: "not built yet", params: &[], example: "warp" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("warp is not built yet".into()))
}
