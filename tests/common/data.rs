//! Where the tests find the files they read: the photographs of
//! `examples/data` and the shared real clips. The GPU host runs the test
//! binaries from a bundle (bench/gpu-bundle.sh), away from the checkout
//! they were built in, so each folder is looked for in order:
//!
//! 1. the folder its variable names (`SEAMSTREAM_DATA`, `SEAMSTREAM_CLIPS`),
//!    and only that one when it is set;
//! 2. beside the test binary: under each folder above it, the names in
//!    [`Data::beside`] (the bundle's `.gpu/data` and `.gpu/clips`, or the
//!    checkout itself and the `shared/` folder beside it);
//! 3. the checkout this was built from (`CARGO_MANIFEST_DIR`), where it
//!    still exists.
//!
//! A folder counts only if it holds the files asked for. None holding them
//! is a failure naming the variable to set, never a silent skip.

use std::path::{Path, PathBuf};

/// A folder of test data and how to find it.
pub struct Data {
    /// What it is, for the failure's message.
    pub what: &'static str,
    /// The variable that names it.
    pub var: &'static str,
    /// Where it may lie under each folder above the test binary.
    pub beside: &'static [&'static str],
    /// Where it lies in the checkout, relative to its root.
    pub in_tree: &'static str,
}

/// The photographs of `examples/data`.
pub const EXAMPLES: Data = Data {
    what: "the example photographs (examples/data)",
    var: "SEAMSTREAM_DATA",
    beside: &["data", "examples/data"],
    in_tree: "examples/data",
};

/// The shared real clips (`../shared/data/video` beside the checkout).
pub const CLIPS: Data = Data {
    what: "the shared real clips (../shared/data/video)",
    var: "SEAMSTREAM_CLIPS",
    beside: &["clips", "shared/data/video"],
    in_tree: "../shared/data/video",
};

impl Data {
    /// The folder holding every file of `names`; panics, naming the
    /// variable to set and where it looked, if there is none.
    pub fn dir_with(&self, names: &[&str]) -> PathBuf {
        let holds = |d: &Path| names.iter().all(|n| d.join(n).is_file());
        let candidates = self.candidates();
        if let Some(d) = candidates.iter().find(|d| holds(d)) {
            return d.clone();
        }
        let looked: Vec<String> = candidates.iter().map(|d| d.display().to_string()).collect();
        let set = match std::env::var_os(self.var) {
            Some(v) => format!(
                "{} is set to `{}`, which does not hold them",
                self.var,
                Path::new(&v).display()
            ),
            None => format!("set {} to the folder that holds them", self.var),
        };
        panic!(
            "{} not found: no folder holds {} ({set}; looked in {})",
            self.what,
            names.join(", "),
            looked.join(", ")
        );
    }

    /// The file `name` of this data (see [`Data::dir_with`]).
    pub fn file(&self, name: &str) -> PathBuf {
        self.dir_with(&[name]).join(name)
    }

    /// The folders to look in, in order.
    fn candidates(&self) -> Vec<PathBuf> {
        if let Some(v) = std::env::var_os(self.var) {
            return vec![PathBuf::from(v)];
        }
        let mut found = Vec::new();
        if let Some(exe) = std::env::current_exe()
            .ok()
            .and_then(|e| e.canonicalize().ok())
        {
            for above in exe.ancestors().skip(1) {
                found.extend(self.beside.iter().map(|b| above.join(b)));
            }
        }
        let tree = Path::new(env!("CARGO_MANIFEST_DIR")).join(self.in_tree);
        if tree.is_dir() {
            found.push(tree);
        }
        found
    }
}

/// The folder the program is run from: the checkout where it exists (on the
/// GPU host it may not), else the current one.
pub fn checkout_or_here() -> PathBuf {
    let tree = Path::new(env!("CARGO_MANIFEST_DIR"));
    if tree.is_dir() {
        tree.to_path_buf()
    } else {
        PathBuf::from(".")
    }
}
