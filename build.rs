//! Embeds every file in `kernels/` (CUDA sources and headers) into the
//! binary: writes `$OUT_DIR/kernels.rs`, a table of (file name, source text),
//! so adding a kernel file needs no table edited by hand.
//!
//! Also copies the face detector's model, which ships in the `rustface`
//! crate (SeetaFace's frontal model), to `$OUT_DIR/seeta_fd_frontal.bin`,
//! where `include_bytes!` takes it: the binary carries it, and nothing is
//! downloaded at run time.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new("kernels");
    println!("cargo:rerun-if-changed=kernels");
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.ends_with(".cu") || n.ends_with(".cuh"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::from("pub static KERNEL_FILES: &[(&str, &str)] = &[\n");
    for n in &names {
        println!("cargo:rerun-if-changed=kernels/{n}");
        let path = std::fs::canonicalize(dir.join(n)).expect("kernel file");
        writeln!(
            out,
            "    ({n:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let out_dir = std::env::var("OUT_DIR").unwrap();
    std::fs::write(Path::new(&out_dir).join("kernels.rs"), out).unwrap();
    copy_face_model(Path::new(&out_dir));
}

/// The model file inside the `rustface` package that Cargo.lock names.
const FACE_MODEL: &str = "model/seeta_fd_frontal_v1.0.bin";

/// Finds the `rustface` package Cargo unpacked (its version from
/// Cargo.lock, under `$CARGO_HOME/registry/src`, or a `vendor/` folder) and
/// copies its model next to the generated kernel table.
fn copy_face_model(out_dir: &Path) {
    println!("cargo:rerun-if-changed=Cargo.lock");
    let lock = std::fs::read_to_string("Cargo.lock").unwrap_or_default();
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
    let mut candidates = vec![Path::new("vendor").join(&package).join(FACE_MODEL)];
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
