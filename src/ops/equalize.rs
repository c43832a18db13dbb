//! `equalize`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "equalize", summary: "not built yet", params: &[], example: "equalize" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("equalize is not built yet".into()))
}
