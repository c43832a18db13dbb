//! `gaussian`: placeholder until its CPU reference lands.

use super::params::{OpSpec, Params};
use super::OpBox;
use crate::error::{Error, Result};

pub static SPEC: OpSpec = OpSpec { name: "gaussian", summary: "not built yet", params: &[], example: "gaussian" };

pub fn build(_p: &Params) -> Result<OpBox> {
    Err(Error::Unsupported("gaussian is not built yet".into()))
}
