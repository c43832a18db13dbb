//! Every GPU test, in one test binary: each module checks one part of the
//! GPU half against the CPU's (or the GPU's own paths), and skips visibly
//! without a GPU (`SEAMSTREAM_REQUIRE_GPU=1` makes a missing GPU fail).
//!
//! One binary instead of one per file: the GPU host takes the tests as a
//! bundle of at most 64 MiB, and each binary carries the whole library
//! (about 6 MB stripped). Run one part by its module:
//! `cargo test --release --test gpu -- retarget_fast::`.

#[path = "../common/mod.rs"]
mod common;

mod color;
mod elements;
mod filters;
mod geometry;
mod memory;
mod nvdec;
mod reframe;
mod registry;
mod retarget;
mod retarget_fast;
mod segment;
mod stage;
