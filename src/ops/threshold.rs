//! `threshold`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "threshold", summary: "not built yet", params: &[], example: "threshold" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("threshold is not built yet".into()))
}
