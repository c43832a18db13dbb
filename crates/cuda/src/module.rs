//! Kernel sources, compiled by NVRTC to a cubin for the GPU's own
//! architecture and cached on disk.
//!
//! Every file in `kernels/` is embedded by `build.rs`. A `#include "x.cuh"`
//! line is replaced by that header's text, so NVRTC needs no include path.
//! The cache key is the expanded source's hash, NVRTC's version and the
//! architecture, so a second start compiles nothing and a changed kernel or
//! toolkit is never served stale. The cache lives in `$SEAMSTREAM_CACHE`,
//! else `$XDG_CACHE_HOME/seamstream`, else `~/.cache/seamstream`; when none
//! can be written, kernels are compiled each start.

use std::ffi::{CStr, CString, c_char, c_int};
use std::path::PathBuf;

use cudarc::nvrtc::{result, sys};

use crate::error::{Error, Result};

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The embedded text of `kernels/{name}`.
pub fn source(name: &str) -> Option<&'static str> {
    KERNEL_FILES
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, text)| *text)
}

/// `kernels/{file}` with its `#include "…"` lines replaced by the headers'
/// text (each header once).
///
/// A file may name a variant, `base.cu?NAME=VALUE,…`: the same source with
/// those macros defined first, compiled (and cached) apart, so that a file
/// of many instantiations can build only the one a chain launches (see
/// `kernels/convolve.cu`).
pub fn expand(file: &str) -> Result<String> {
    let (base, defines) = file.split_once('?').unwrap_or((file, ""));
    let text = source(base)
        .ok_or_else(|| Error::Device(format!("there is no kernels/{base} in this build")))?;
    let mut out = String::new();
    let word = |t: &str| !t.is_empty() && t.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    for d in defines.split(',').filter(|d| !d.is_empty()) {
        let (name, value) = d.split_once('=').unwrap_or((d, "1"));
        if !word(name) || !word(value) {
            return Err(Error::Device(format!(
                "kernel variant `{file}`: `{d}` is not NAME=VALUE in letters, digits and _"
            )));
        }
        out.push_str(&format!("#define {name} {value}\n"));
    }
    let mut seen = Vec::new();
    expand_into(base, text, &mut out, &mut seen)?;
    Ok(out)
}

fn expand_into(file: &str, text: &str, out: &mut String, seen: &mut Vec<String>) -> Result<()> {
    for (i, line) in text.lines().enumerate() {
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("#include \"") {
            let header = rest.trim_end_matches('"');
            if seen.iter().any(|s| s == header) {
                continue;
            }
            seen.push(header.to_string());
            if header == crate::shared::HEADER {
                // Made from the Rust constants, not a file.
                out.push_str(&crate::shared::header());
                continue;
            }
            let body = source(header).ok_or_else(|| {
                Error::Device(format!(
                    "kernels/{file}:{}: includes `{header}`, which is not in kernels/",
                    i + 1
                ))
            })?;
            expand_into(header, body, out, seen)?;
        } else if t != "#pragma once" {
            out.push_str(line);
        }
        out.push('\n');
    }
    Ok(())
}

/// An error unless NVRTC can be loaded: cudarc panics where it cannot, so
/// this is asked before any NVRTC call.
fn nvrtc_present() -> Result<()> {
    // SAFETY: only tries to open the library under its candidate names.
    if unsafe { sys::is_culib_present() } {
        Ok(())
    } else {
        Err(Error::MissingLibrary {
            library: crate::error::CudaLibrary::Nvrtc,
            remedy: "install the CUDA toolkit's NVRTC (e.g. the cuda-nvrtc package)",
        })
    }
}

/// NVRTC's version, e.g. (12, 9); an error if `libnvrtc` cannot be loaded.
pub fn nvrtc_version() -> Result<(i32, i32)> {
    nvrtc_present()?;
    let (mut maj, mut min): (c_int, c_int) = (0, 0);
    // SAFETY: nvrtcVersion writes two ints through the pointers, which point
    // at live locals.
    unsafe { sys::nvrtcVersion(&mut maj, &mut min) }
        .result()
        .map_err(|e| Error::Device(format!("NVRTC: {e:?}")))?;
    Ok((maj, min))
}

/// FNV-1a, 64 bits: stable across builds and Rust versions, unlike std's hasher.
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, &b| {
        (h ^ b as u64).wrapping_mul(0x0000_0100_0000_01b3)
    })
}

fn cache_dir() -> Option<PathBuf> {
    if let Some(d) = std::env::var_os("SEAMSTREAM_CACHE") {
        return Some(PathBuf::from(d));
    }
    if let Some(d) = std::env::var_os("XDG_CACHE_HOME") {
        return Some(PathBuf::from(d).join("seamstream"));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache").join("seamstream"))
}

/// Where the cubin of `file` compiled from `source` would be cached.
pub fn cache_path(
    file: &str,
    source: &str,
    nvrtc: (i32, i32),
    arch: (u32, u32),
) -> Option<PathBuf> {
    // A variant (`convolve.cu?SEP_N=17`) is cached as `convolve-SEP_N17-…`.
    let stem = file
        .replace(".cu", "")
        .replace('?', "-")
        .replace('=', "")
        .replace(',', "-");
    let hash = fnv1a(source.as_bytes());
    cache_dir().map(|d| {
        d.join(format!(
            "{stem}-{hash:016x}-nvrtc{}.{}-sm_{}{}.cubin",
            nvrtc.0, nvrtc.1, arch.0, arch.1
        ))
    })
}

/// Counts compiles in this process, so a test can see that a second start
/// compiled nothing.
pub static COMPILES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// The cubin of `kernels/{file}` for compute capability `arch`: from the
/// cache, or compiled and then cached.
pub fn compile(file: &str, arch: (u32, u32)) -> Result<Vec<u8>> {
    let source = expand(file)?;
    compile_source(file, &source, arch)
}

/// Cubins compiled or read in this process, by (file, source hash, arch);
/// the lock is held through a compile, so threads that want the same kernel
/// at once compile it once.
static MEMO: std::sync::Mutex<Vec<(MemoKey, Vec<u8>)>> = std::sync::Mutex::new(Vec::new());

/// (kernel file, source hash, architecture).
type MemoKey = (String, u64, (u32, u32));

/// Compiles CUDA `source` (already expanded) for `arch`, through the
/// in-process memo and the disk cache.
pub fn compile_source(file: &str, source: &str, arch: (u32, u32)) -> Result<Vec<u8>> {
    let key = (file.to_string(), fnv1a(source.as_bytes()), arch);
    let mut memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    if let Some((_, cubin)) = memo.iter().find(|(k, _)| *k == key) {
        return Ok(cubin.clone());
    }
    let cubin = compile_cached(file, source, arch)?;
    memo.push((key, cubin.clone()));
    Ok(cubin)
}

/// Compiles `files` for `arch` at once, one thread a file (each is one
/// NVRTC program), into the in-process memo and the disk cache, so that a
/// first start takes as long as its slowest file, not their sum. Files
/// already memoised are skipped; failures are left for the op that loads
/// the file to report.
pub fn prefetch(files: &[String], arch: (u32, u32)) {
    let todo: Vec<(String, String)> = {
        let memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
        files
            .iter()
            .filter_map(|f| expand(f).ok().map(|src| (f.clone(), src)))
            .filter(|(f, src)| {
                let key = (f.clone(), fnv1a(src.as_bytes()), arch);
                !memo.iter().any(|(k, _)| *k == key)
            })
            .collect()
    };
    let done: Vec<(MemoKey, Vec<u8>)> = std::thread::scope(|s| {
        let handles: Vec<_> = todo
            .iter()
            .map(|(f, src)| {
                s.spawn(move || {
                    compile_cached(f, src, arch)
                        .ok()
                        .map(|cubin| ((f.clone(), fnv1a(src.as_bytes()), arch), cubin))
                })
            })
            .collect();
        handles
            .into_iter()
            .filter_map(|h| h.join().ok().flatten())
            .collect()
    });
    let mut memo = MEMO.lock().unwrap_or_else(|p| p.into_inner());
    for (key, cubin) in done {
        if !memo.iter().any(|(k, _)| *k == key) {
            memo.push((key, cubin));
        }
    }
}

/// Compiles through the disk cache only (what a new process does).
pub fn compile_cached(file: &str, source: &str, arch: (u32, u32)) -> Result<Vec<u8>> {
    let nvrtc = nvrtc_version()?;
    let cached = cache_path(file, source, nvrtc, arch);
    if let Some(p) = &cached
        && let Ok(bytes) = std::fs::read(p)
        && !bytes.is_empty()
    {
        return Ok(bytes);
    }
    let cubin = nvrtc_cubin(file, source, arch)?;
    COMPILES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    if let Some(p) = cached {
        // Best effort: a cache that cannot be written only costs a compile.
        let _ = p
            .parent()
            .map(std::fs::create_dir_all)
            .unwrap_or(Ok(()))
            .and_then(|_| {
                let tmp = p.with_extension(format!("tmp{}", std::process::id()));
                std::fs::write(&tmp, &cubin).and_then(|_| std::fs::rename(&tmp, &p))
            });
    }
    Ok(cubin)
}

/// The options every kernel is compiled with: exact IEEE float arithmetic
/// (the CPU reference is matched bit for bit where it can be), no fused
/// multiply-add where it would change a rounding the CPU makes.
fn options(arch: (u32, u32)) -> Vec<String> {
    vec![
        format!("--gpu-architecture=sm_{}{}", arch.0, arch.1),
        "--std=c++17".into(),
        "--fmad=false".into(),
        "-default-device".into(),
    ]
}

fn log_of(prog: sys::nvrtcProgram) -> String {
    // SAFETY: `prog` is a program that create_program made and that is
    // not yet destroyed (log_of is called between compile and destroy).
    unsafe { result::get_program_log(prog) }
        .map(|l| {
            let bytes: Vec<u8> = l.iter().map(|&c| c as u8).collect();
            CStr::from_bytes_until_nul(&bytes)
                .map(|c| c.to_string_lossy().into_owned())
                .unwrap_or_default()
        })
        .unwrap_or_default()
}

/// One NVRTC compile to a cubin; a failure carries NVRTC's log.
fn nvrtc_cubin(file: &str, source: &str, arch: (u32, u32)) -> Result<Vec<u8>> {
    nvrtc_present()?;
    let src = CString::new(source)
        .map_err(|_| Error::Device(format!("kernels/{file} holds a NUL byte")))?;
    let name = CString::new(file).unwrap_or_default();
    let prog = result::create_program(&src, Some(&name))
        .map_err(|e| Error::Device(format!("NVRTC could not take kernels/{file}: {e:?}")))?;
    // SAFETY: `prog` was just created and is destroyed only below; the
    // options are owned strings that outlive the call.
    let compiled = unsafe { result::compile_program(prog, &options(arch)) };
    let out = match compiled {
        Err(e) => Err(Error::Device(format!(
            "kernels/{file} did not compile for sm_{}{} ({e:?}):\n{}",
            arch.0,
            arch.1,
            log_of(prog).trim_end()
        ))),
        Ok(()) => {
            let mut size = 0usize;
            // SAFETY: `prog` compiled successfully and is still alive;
            // the size is written through a pointer to a live local.
            unsafe { sys::nvrtcGetCUBINSize(prog, &mut size) }
                .result()
                .and_then(|_| {
                    let mut buf = vec![0u8; size];
                    // SAFETY: `buf` holds the `size` bytes that
                    // nvrtcGetCUBINSize reported for this program.
                    unsafe { sys::nvrtcGetCUBIN(prog, buf.as_mut_ptr() as *mut c_char) }
                        .result()
                        .map(|_| buf)
                })
                .map_err(|e| {
                    Error::Device(format!("NVRTC gave no cubin for kernels/{file}: {e:?}"))
                })
        }
    };
    // SAFETY: `prog` is destroyed once, here, after its last use.
    let _ = unsafe { result::destroy_program(prog) };
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_kernel_file_is_embedded_and_its_includes_resolve() {
        assert!(source("common.cuh").is_some());
        for (name, _) in KERNEL_FILES.iter().filter(|(n, _)| n.ends_with(".cu")) {
            let text = expand(name).unwrap();
            assert!(!text.contains("#include \""), "{name}");
        }
    }

    #[test]
    fn a_variant_defines_its_macros_first_and_is_cached_apart() {
        let v = expand("convolve.cu?SEP_N=17,EXTRA").unwrap();
        assert!(
            v.starts_with("#define SEP_N 17\n#define EXTRA 1\n"),
            "{}",
            &v[..60]
        );
        assert_eq!(
            &v[v.find("\n#define EXTRA 1\n").unwrap() + 17..],
            expand("convolve.cu").unwrap()
        );
        let e = expand("convolve.cu?SEP_N=1;rm").unwrap_err().to_string();
        assert!(e.contains("SEP_N=1;rm"), "{e}");
        let name = |f: &str| {
            cache_path(f, "x", (13, 0), (9, 0))
                .map(|p| p.file_name().unwrap().to_string_lossy().into_owned())
        };
        if let (Some(plain), Some(variant)) = (name("convolve.cu"), name("convolve.cu?SEP_N=17")) {
            assert!(plain.starts_with("convolve-"), "{plain}");
            assert!(variant.starts_with("convolve-SEP_N17-"), "{variant}");
        }
    }

    /// Compiles every kernel for sm_90 where NVRTC can be loaded (no GPU
    /// needed), so a kernel that does not compile fails here, not on the
    /// GPU host.
    #[test]
    fn every_kernel_compiles_with_nvrtc_where_it_is_installed() {
        if !crate::testing::nvrtc("the kernel compile test") {
            return;
        }
        let files = KERNEL_FILES
            .iter()
            .map(|(n, _)| n.to_string())
            .filter(|n| n.ends_with(".cu"))
            // The variants convolve.rs loads: every fixed length and size.
            .chain(
                (1..=25)
                    .step_by(2)
                    .map(|n| format!("convolve.cu?SEP_N={n}")),
            )
            .chain((1..=7).map(|n| format!("convolve.cu?F2D_N={n}")));
        for name in files {
            let src = expand(&name).unwrap();
            if let Err(e) = nvrtc_cubin(&name, &src, (9, 0)) {
                panic!("{e}");
            }
        }
    }

    #[test]
    fn a_kernel_that_does_not_compile_gives_nvrtcs_log() {
        if !crate::testing::nvrtc("the NVRTC log test") {
            return;
        }
        let e = nvrtc_cubin(
            "broken.cu",
            "extern \"C\" __global__ void k() { nope; }",
            (9, 0),
        )
        .unwrap_err()
        .to_string();
        assert!(e.contains("broken.cu") && e.contains("nope"), "{e}");
    }

    #[test]
    fn the_cache_key_changes_with_source_nvrtc_and_arch() {
        let a = cache_path("x.cu", "a", (12, 9), (9, 0));
        assert_ne!(a, cache_path("x.cu", "b", (12, 9), (9, 0)));
        assert_ne!(a, cache_path("x.cu", "a", (13, 0), (9, 0)));
        assert_ne!(a, cache_path("x.cu", "a", (12, 9), (8, 9)));
        assert_eq!(a, cache_path("x.cu", "a", (12, 9), (9, 0)));
    }
}
