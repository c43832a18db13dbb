//! The kernel cache: a second compile of the same source comes from disk.
//! Needs NVRTC but no GPU; its own test binary, because it sets
//! `SEAMSTREAM_CACHE` for the process.

use std::sync::atomic::Ordering;

use seamstream::cuda::module::{COMPILES, compile_cached, compile_source, expand, nvrtc_version};

#[test]
fn a_second_start_compiles_nothing_and_a_changed_arch_compiles_again() {
    if !seamstream::cuda::testing::nvrtc("kernel cache test") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("seamstream-cache-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    // SAFETY: the only test in this binary; nothing else reads the
    // environment concurrently.
    unsafe { std::env::set_var("SEAMSTREAM_CACHE", &dir) };
    let src = expand("gray.cu").unwrap();
    let a = compile_cached("gray.cu", &src, (9, 0)).unwrap();
    assert_eq!(COMPILES.load(Ordering::Relaxed), 1);
    let b = compile_cached("gray.cu", &src, (9, 0)).unwrap();
    assert_eq!(
        COMPILES.load(Ordering::Relaxed),
        1,
        "the second start compiled"
    );
    assert_eq!(a, b);
    compile_cached("gray.cu", &src, (8, 0)).unwrap();
    assert_eq!(
        COMPILES.load(Ordering::Relaxed),
        2,
        "another arch must compile"
    );
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A kernel that does not compile is an error that names the file and
/// carries NVRTC's log (injected: a source with an undeclared name).
#[test]
fn a_kernel_that_fails_to_compile_shows_nvrtcs_log() {
    if nvrtc_version().is_err() {
        return;
    }
    let e = compile_source(
        "injected.cu",
        "extern \"C\" __global__ void k(int* o) { *o = not_declared_anywhere; }",
        (9, 0),
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("kernels/injected.cu did not compile"), "{e}");
    assert!(
        e.contains("not_declared_anywhere"),
        "NVRTC's log is missing: {e}"
    );
}
