//! `integral`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "integral", summary: "not built yet", params: &[], example: "integral" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("integral is not built yet".into()))
}
