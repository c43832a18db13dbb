//! `adaptive`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "adaptive", summary: "not built yet", params: &[], example: "adaptive" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("adaptive is not built yet".into()))
}
