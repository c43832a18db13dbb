//! Embeds every file in `kernels/` (CUDA sources and headers) into the
//! binary: writes `$OUT_DIR/kernels.rs`, a table of (file name, source text),
//! so adding a kernel file needs no table edited by hand.

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
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("kernels.rs");
    std::fs::write(dest, out).unwrap();
}
