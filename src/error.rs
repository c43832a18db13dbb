//! The library's error type. Every message names the bad value and, where
//! there is one, the valid choice or range.

use std::path::PathBuf;

pub type Result<T, E = Error> = std::result::Result<T, E>;

#[derive(Debug, thiserror::Error)]
pub enum Error {
    #[error("unknown operation `{name}`; valid operations are: {valid}")]
    UnknownOp { name: String, valid: String },

    #[error("{op}: unknown parameter `{key}`; valid parameters are: {valid}")]
    UnknownKey {
        op: String,
        key: String,
        valid: String,
    },

    #[error("{op}: `{key}={value}`: {reason}")]
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

    #[error("cannot parse operation `{text}`: {reason}")]
    BadSyntax { text: String, reason: String },

    #[error("{0}")]
    BadFrame(String),

    #[error("{op}: {reason}")]
    OpFailed { op: String, reason: String },

    #[error("cannot read `{path}`: {reason}")]
    Read { path: PathBuf, reason: String },

    #[error("cannot write `{path}`: {reason}")]
    Write { path: PathBuf, reason: String },

    #[error("{0}")]
    Unsupported(String),

    #[error("{0}")]
    Device(String),

    #[error("{0}")]
    Pipeline(String),
}

impl Error {
    pub(crate) fn bad_value(
        op: &str,
        key: &str,
        value: impl ToString,
        reason: impl Into<String>,
    ) -> Self {
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
