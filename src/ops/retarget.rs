//! `retarget`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "retarget", summary: "not built yet", params: &[], example: "retarget" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("retarget is not built yet".into()))
}
