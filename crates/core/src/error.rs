//! The library's error type. Every message names the bad value and, where
//! there is one, the valid choice or range.
//!
//! User text in a message goes through [`quoted`], which shows a long value
//! by its start and its length, so a 100 KB string cannot bury the reason.

use std::path::PathBuf;

/// The most characters of a user's value that a message shows.
pub const SHOWN_CHARS: usize = 60;

/// `text` in backticks, for a message: whole when it has at most
/// [`SHOWN_CHARS`] characters, otherwise its first ones, `…` and its length:
/// ``"`aaaa…` (100000 characters)"``.
pub fn quoted(text: &str) -> String {
    quoted_after("", text)
}

/// `prefix` and `text` in one pair of backticks, only `text` shortened as
/// [`quoted`] does: ``"`--size 1e30x5`"``, ``"`sigma=aaaa…` (100000 characters)"``.
pub fn quoted_after(prefix: &str, text: &str) -> String {
    match text.char_indices().nth(SHOWN_CHARS) {
        None => format!("`{prefix}{text}`"),
        Some((cut, _)) => format!(
            "`{prefix}{}…` ({} characters)",
            &text[..cut],
            text.chars().count()
        ),
    }
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown operation {}; valid operations are: {valid}", quoted(name))]
    UnknownOp { name: String, valid: String },

    #[error(
        "{op}: unknown parameter {}; valid parameters are: {valid}",
        quoted(key)
    )]
    UnknownKey {
        op: String,
        key: String,
        valid: String,
    },

    #[error("{op}: {}: {reason}", quoted_after(&format!("{key}="), value))]
    BadValue {
        op: String,
        key: String,
        value: String,
        reason: String,
    },

    #[error("{op}: missing parameter `{key}` ({help})")]
    MissingKey {
        op: String,
        key: String,
        help: String,
    },

    #[error("cannot parse operation {}: {reason}", quoted(text))]
    BadSyntax { text: String, reason: String },

    #[error("{0}")]
    BadFrame(String),

    #[error("{op}: {reason}")]
    OpFailed { op: String, reason: String },

    #[error("cannot read {}: {reason}", quoted(&path.to_string_lossy()))]
    Read { path: PathBuf, reason: String },

    #[error("cannot write {}: {reason}", quoted(&path.to_string_lossy()))]
    Write { path: PathBuf, reason: String },

    #[error("{0}")]
    Unsupported(String),

    #[error("{0}")]
    Device(String),

    /// What the GPU half cannot take and the CPU half can (a side over the
    /// kernels' limit, more shared memory than this GPU has). The advice to
    /// run on the CPU is the caller's, in its own words (`--device cpu`,
    /// `device=cpu`): see [`Error::cpu_runs_it`].
    #[error("{0}")]
    GpuLimit(String),

    /// A CUDA library that cudarc loads at run time is not installed:
    /// `libcuda.so` (the driver) or `libnvrtc.so` (the kernel compiler).
    #[error("{library} could not be loaded; {remedy}")]
    MissingLibrary {
        library: CudaLibrary,
        remedy: &'static str,
    },

    /// The driver works but sees no GPU.
    #[error("the CUDA driver sees no GPU")]
    NoGpu,

    /// This build has no CUDA backend: it was built without the `cuda`
    /// feature (`--no-default-features`).
    #[error(
        "this seamstream was built without CUDA (cargo's `--no-default-features`); build it with the `cuda` feature to run on a GPU"
    )]
    NoCudaBuild,

    /// The driver works, but GPU `asked` is not one of its `have`.
    #[error(
        "`cuda:{asked}`: there {} {have} GPU{} (cuda:0{}); `seamstream devices` lists them",
        if *have == 1 { "is" } else { "are" },
        if *have == 1 { "" } else { "s" },
        if *have == 1 { String::new() } else { format!(" to cuda:{}", have - 1) }
    )]
    NoSuchGpu { asked: usize, have: usize },

    #[error("{0}")]
    Pipeline(String),

    /// A call of the CUDA driver or NVRTC failed while running: what was
    /// being done, and the library's own error (cudarc's), kept as the
    /// source.
    #[error("CUDA: {doing}: {source}")]
    Cuda {
        doing: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// A GStreamer call failed: what was being done, and GStreamer's own
    /// error (glib's), kept as the source.
    #[error("{doing}: {source}")]
    GstCall {
        doing: String,
        #[source]
        source: Box<dyn std::error::Error + Send + Sync>,
    },

    /// An error a GStreamer element posted, with what callers act on.
    #[error("{element}: {message}")]
    Gst {
        element: String,
        cause: GstCause,
        /// GStreamer's message, with its debug text in brackets.
        message: String,
    },

    /// A command-line value (`--size`, `--fps`) that cannot be used; the
    /// reason says what to write instead.
    #[error("{}: {reason}", quoted_after(&format!("{flag} "), value))]
    BadArgument {
        flag: &'static str,
        value: String,
        reason: String,
    },
}

/// Why a GStreamer element failed, as far as seamstream restates it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum GstCause {
    /// Linked elements agreed on no format (a flow of `not-negotiated`).
    NotNegotiated,
    /// A stream reached a pad linked to nothing (`not-linked`).
    NotLinked,
    /// Typefinding could not tell what the stream is.
    TypeNotFound,
    /// A sink could not write: the disk is full.
    NoSpaceLeft,
    Other,
}

/// A CUDA library loaded at run time.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CudaLibrary {
    /// `libcuda.so`, the driver.
    Driver,
    /// `libnvrtc.so`, which compiles the kernels.
    Nvrtc,
}

impl std::fmt::Display for CudaLibrary {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            CudaLibrary::Driver => "the CUDA driver (libcuda.so)",
            CudaLibrary::Nvrtc => "NVRTC (libnvrtc.so), which compiles the kernels,",
        })
    }
}

/// What kind of failure an [`Error`] is, for callers that act on it (fall
/// back to the CPU, skip a test, choose an exit code) without reading its
/// message.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ErrorKind {
    /// No CUDA driver library: this machine has no NVIDIA driver.
    NoDriver,
    /// The driver works but offers no (such) GPU.
    NoGpu,
    /// NVRTC, which compiles the kernels, is not installed.
    NoCompiler,
    /// An operation, parameter or command-line value that cannot be used.
    BadParameter,
    /// An input (file, frame, stream) that cannot be read or taken.
    BadInput,
    /// An output that cannot be written.
    BadOutput,
    /// GStreamer failed.
    Pipeline,
    /// A CUDA call or an operation failed while running.
    Internal,
    /// The GPU half cannot take it; the CPU half can.
    GpuLimit,
}

impl Error {
    /// The kind of failure.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::MissingLibrary {
                library: CudaLibrary::Nvrtc,
                ..
            } => ErrorKind::NoCompiler,
            Error::MissingLibrary {
                library: CudaLibrary::Driver,
                ..
            } => ErrorKind::NoDriver,
            Error::NoGpu | Error::NoSuchGpu { .. } | Error::NoCudaBuild => ErrorKind::NoGpu,
            Error::UnknownOp { .. }
            | Error::UnknownKey { .. }
            | Error::BadValue { .. }
            | Error::MissingKey { .. }
            | Error::BadSyntax { .. }
            | Error::BadArgument { .. }
            | Error::Unsupported(_) => ErrorKind::BadParameter,
            Error::BadFrame(_) | Error::Read { .. } => ErrorKind::BadInput,
            Error::Write { .. } => ErrorKind::BadOutput,
            Error::Gst {
                cause: GstCause::NoSpaceLeft,
                ..
            } => ErrorKind::BadOutput,
            Error::Pipeline(_) | Error::Gst { .. } | Error::GstCall { .. } => ErrorKind::Pipeline,
            Error::OpFailed { .. } | Error::Device(_) | Error::Cuda { .. } => ErrorKind::Internal,
            Error::GpuLimit(_) => ErrorKind::GpuLimit,
        }
    }

    /// Whether running on the CPU instead would avoid this error: no
    /// driver, no GPU, no kernel compiler, or a GPU limit. The interfaces
    /// add that advice in their own words.
    pub fn cpu_runs_it(&self) -> bool {
        matches!(
            self.kind(),
            ErrorKind::NoDriver | ErrorKind::NoGpu | ErrorKind::NoCompiler | ErrorKind::GpuLimit
        )
    }

    pub fn bad_value(op: &str, key: &str, value: impl ToString, reason: impl Into<String>) -> Self {
        Error::BadValue {
            op: op.into(),
            key: key.into(),
            value: value.to_string(),
            reason: reason.into(),
        }
    }

    pub(crate) fn op_failed(op: &str, reason: impl Into<String>) -> Self {
        Error::OpFailed {
            op: op.into(),
            reason: reason.into(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_values_are_shown_whole() {
        assert_eq!(quoted("1e30"), "`1e30`");
        assert_eq!(quoted(""), "``");
        let sixty = "é".repeat(60);
        assert_eq!(quoted(&sixty), format!("`{sixty}`"));
        assert_eq!(quoted_after("--fps ", "abc"), "`--fps abc`");
    }

    #[test]
    fn long_values_show_their_start_and_length() {
        let long = "a".repeat(100_000);
        assert_eq!(
            quoted(&long),
            format!("`{}…` (100000 characters)", "a".repeat(60))
        );
        // Cut between characters, counted in characters, not bytes.
        let wide = "ü".repeat(61);
        assert_eq!(
            quoted_after("k=", &wide),
            format!("`k={}…` (61 characters)", "ü".repeat(60))
        );
    }

    /// A library's failure keeps the library's error as its source, and its
    /// kind comes from the variant, not the text.
    #[test]
    fn a_librarys_error_stays_the_source_and_gives_the_kind() {
        use std::error::Error as _;
        let io = || std::io::Error::other("the library's words");
        let cuda = Error::Cuda {
            doing: "launching".into(),
            source: Box::new(io()),
        };
        assert_eq!(cuda.to_string(), "CUDA: launching: the library's words");
        assert_eq!(cuda.kind(), ErrorKind::Internal);
        assert_eq!(cuda.source().unwrap().to_string(), "the library's words");
        let gst = Error::GstCall {
            doing: "cannot link".into(),
            source: Box::new(io()),
        };
        assert_eq!(gst.kind(), ErrorKind::Pipeline);
        assert!(gst.source().is_some());
    }

    #[test]
    fn kinds_tell_a_missing_driver_from_a_missing_compiler_and_bad_input() {
        let driver = Error::MissingLibrary {
            library: CudaLibrary::Driver,
            remedy: "install the NVIDIA driver",
        };
        let nvrtc = Error::MissingLibrary {
            library: CudaLibrary::Nvrtc,
            remedy: "install NVRTC",
        };
        assert_eq!(driver.kind(), ErrorKind::NoDriver);
        assert_eq!(nvrtc.kind(), ErrorKind::NoCompiler);
        assert_eq!(
            driver.to_string(),
            "the CUDA driver (libcuda.so) could not be loaded; install the NVIDIA driver"
        );
        assert_eq!(Error::BadFrame("x".into()).kind(), ErrorKind::BadInput);
        // Where the CPU would do it, the caller may say so; not otherwise.
        assert!(driver.cpu_runs_it() && nvrtc.cpu_runs_it());
        assert!(Error::GpuLimit("a side over 8192".into()).cpu_runs_it());
        assert!(Error::NoGpu.cpu_runs_it());
        assert_eq!(
            Error::NoSuchGpu { asked: 7, have: 2 }.to_string(),
            "`cuda:7`: there are 2 GPUs (cuda:0 to cuda:1); `seamstream devices` lists them"
        );
        assert_eq!(
            Error::NoSuchGpu { asked: 1, have: 1 }.to_string(),
            "`cuda:1`: there is 1 GPU (cuda:0); `seamstream devices` lists them"
        );
        assert_eq!(
            Error::NoSuchGpu { asked: 1, have: 1 }.kind(),
            ErrorKind::NoGpu
        );
        assert!(!Error::BadFrame("x".into()).cpu_runs_it());
        assert!(!Error::Pipeline("x".into()).cpu_runs_it());
        assert_eq!(
            Error::bad_value("gaussian", "sigma", "-1", "must be positive").kind(),
            ErrorKind::BadParameter
        );
    }

    #[test]
    fn messages_shorten_the_values_they_echo() {
        let long = "x".repeat(5000);
        let e = Error::BadValue {
            op: "gaussian".into(),
            key: "sigma".into(),
            value: long.clone(),
            reason: "not a number".into(),
        }
        .to_string();
        assert!(e.starts_with("gaussian: `sigma=xxxx"), "{e}");
        assert!(e.ends_with("…` (5000 characters): not a number"), "{e}");
        assert!(e.len() < 150, "{e}");
        let e = Error::UnknownOp {
            name: long,
            valid: "gray".into(),
        }
        .to_string();
        assert!(e.len() < 150, "{e}");
    }
}
