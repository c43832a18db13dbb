//! GPU colour ops against the CPU reference (skipped without a GPU).

mod common;

use common::*;
use seamstream::cuda::DevFormat;

/// Exact: the kernel does the CPU's f32 operations in the same order,
/// without fused multiply-adds, and rounds the same way.
#[test]
fn gray_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for op in ["gray", "gray:matrix=bt601", "gray:output=rgba"] {
            for fmt in [DevFormat::Rgba, DevFormat::Gray] {
                let f = random_frame(w, h, fmt, i as u64 + 1);
                let what = format!("{op} on {fmt:?} {w}x{h}");
                assert_close(&run_gpu(&gpu, op, &f), &run_cpu(op, &f), 0, &what);
            }
        }
    }
}
