//! What the GPU tests share: the GPU, or a skip that is visible, and that
//! `SEAMSTREAM_REQUIRE_GPU=1` (set by `bench/gpu-check.sh`) turns into a
//! failure, so that a GPU host on which the GPU cannot be opened fails its
//! round instead of passing every GPU test by skipping it.

use std::io::Write;

use super::Gpu;
use super::module::nvrtc_version;

/// Whether a missing GPU or NVRTC fails the tests that need one.
pub fn required() -> bool {
    std::env::var_os("SEAMSTREAM_REQUIRE_GPU").is_some_and(|v| v != "0" && !v.is_empty())
}

/// Reports that `what` skips because of `why`: one line on stderr, written
/// straight to it (the test harness captures `eprintln!`), so it shows in CI
/// logs; a panic instead when a GPU is required.
pub fn skip(what: &str, why: &str) {
    assert!(
        !required(),
        "{what}: SEAMSTREAM_REQUIRE_GPU is set, and {why}"
    );
    let _ = writeln!(std::io::stderr().lock(), "SKIP: {what}: {why}");
}

/// GPU 0, or `None` after [`skip`] says why.
pub fn gpu(what: &str) -> Option<Gpu> {
    match Gpu::open(0) {
        Ok(gpu) => Some(gpu),
        Err(e) => {
            skip(what, &format!("no usable GPU ({e})"));
            None
        }
    }
}

/// Whether NVRTC can be loaded; when not, [`skip`] has said why.
pub fn nvrtc(what: &str) -> bool {
    match nvrtc_version() {
        Ok(_) => true,
        Err(e) => {
            skip(what, &e.to_string());
            false
        }
    }
}
