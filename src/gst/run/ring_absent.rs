//! The engine's GPU ring in a build without CUDA: [`Ring`] has no values,
//! as the GPU it would run on has none (`crate::cuda::Gpu`), so
//! [`super::engine::Work`] reads the same in both builds.

use std::time::Duration;

use super::pixels::{OutMemory, Timed};
use crate::cuda::Gpu;
use crate::error::Result;
use crate::frame::PixelFormat;
use crate::ops::Chain;

/// The GPU stage of a chain: none in this build.
pub(crate) enum Ring {}

/// As the CUDA build's: the output's 4:2:0 layout, even sizes only, slots.
pub(crate) type OutLayout = (Option<PixelFormat>, bool, usize);

impl Ring {
    pub fn new(gpu: &Gpu, _: &Chain, _: &Timed, _: OutLayout, _: &OutMemory) -> Result<Ring> {
        match *gpu {}
    }

    pub fn busy(&self) -> bool {
        match *self {}
    }

    pub fn push(&mut self, _: Timed) -> Result<Vec<Timed>> {
        match *self {}
    }

    pub fn settle(&mut self, _: usize) -> Result<Vec<Timed>> {
        match *self {}
    }

    pub fn collect(&mut self, _: bool) -> Result<Vec<Timed>> {
        match *self {}
    }

    pub fn memory_out(&self) -> &'static str {
        match *self {}
    }

    pub fn copy_times(&mut self) -> (Duration, Duration) {
        match *self {}
    }
}
