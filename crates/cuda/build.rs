//! Embeds every file in `kernels/` (CUDA sources and headers) into the
//! binary: writes `$OUT_DIR/kernels.rs`, a table of (file name, source text),
//! so adding a kernel file needs no table edited by hand.

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    // The kernels stay at the top of the repository, where they are read.
    let manifest = std::env::var("CARGO_MANIFEST_DIR").unwrap();
    let dir = &Path::new(&manifest).join("../../kernels");
    println!("cargo:rerun-if-changed={}", dir.display());
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
        println!("cargo:rerun-if-changed={}", dir.join(n).display());
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
}
