//! Copies the face detector's model, which ships in the `rustface` crate
//! (SeetaFace's frontal model), to `$OUT_DIR/seeta_fd_frontal.bin`, where
//! `include_bytes!` takes it: the binary carries it, and nothing is
//! downloaded at run time.

use std::path::{Path, PathBuf};

fn main() {
    let out_dir = std::env::var("OUT_DIR").unwrap();
    copy_face_model(Path::new(&out_dir));
}

/// The workspace's `Cargo.lock`: the first one in this crate's folder or
/// above it.
fn cargo_lock() -> PathBuf {
    let here = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    here.ancestors()
        .map(|d| d.join("Cargo.lock"))
        .find(|p| p.is_file())
        .unwrap_or_else(|| here.join("Cargo.lock"))
}

/// The model file inside the `rustface` package that Cargo.lock names.
const FACE_MODEL: &str = "model/seeta_fd_frontal_v1.0.bin";

/// Finds the `rustface` package Cargo unpacked (its version from
/// Cargo.lock, under `$CARGO_HOME/registry/src`, or a `vendor/` folder) and
/// copies its model next to the generated kernel table.
fn copy_face_model(out_dir: &Path) {
    let lock_file = cargo_lock();
    println!("cargo:rerun-if-changed={}", lock_file.display());
    let lock = std::fs::read_to_string(&lock_file).unwrap_or_default();
    let version = lock
        .split("[[package]]")
        .find(|p| p.contains("name = \"rustface\""))
        .and_then(|p| p.lines().find_map(|l| l.strip_prefix("version = ")))
        .map(|v| v.trim_matches('"').to_string())
        .unwrap_or_else(|| "0.1.7".into());
    let package = format!("rustface-{version}");
    let cargo_home = std::env::var("CARGO_HOME")
        .map(std::path::PathBuf::from)
        .or_else(|_| std::env::var("HOME").map(|h| Path::new(&h).join(".cargo")))
        .unwrap_or_default();
    let vendor = lock_file.parent().unwrap_or(Path::new(".")).join("vendor");
    let mut candidates = vec![vendor.join(&package).join(FACE_MODEL)];
    if let Ok(registries) = std::fs::read_dir(cargo_home.join("registry/src")) {
        for r in registries.flatten() {
            candidates.push(r.path().join(&package).join(FACE_MODEL));
        }
    }
    let Some(found) = candidates.iter().find(|p| p.is_file()) else {
        panic!(
            "the face model {FACE_MODEL} of the `{package}` crate was not found (looked in {}); run `cargo fetch` and build again",
            candidates
                .iter()
                .map(|p| p.display().to_string())
                .collect::<Vec<_>>()
                .join(", ")
        );
    };
    println!("cargo:rerun-if-changed={}", found.display());
    std::fs::copy(found, out_dir.join("seeta_fd_frontal.bin")).expect("copy the face model");
}
