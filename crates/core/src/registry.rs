//! Every operation by name: its spec and its CPU builder (in [`crate::ops`]),
//! which defines it, and the parsing of `name:key=value,…` into operations
//! and chains. The GPU halves are named beside these in `seamstream-cuda`'s
//! `halves`, which checks that each operation here has one.
//!
//! Adding an operation: write `ops/NAME.rs` (spec, parameters, CPU
//! reference) and add one line to [`REGISTRY`]; then its GPU half
//! (`kernels/NAME.cu`, and in `seamstream-cuda` `ops/NAME.rs`, a type with
//! `new(&CpuType)` implementing `GpuOp`, and one line in `halves.rs`).
//! `seamstream ops` then lists it with the devices it runs on, and
//! `tests/gpu/registry.rs` checks its GPU half against the CPU.

use crate::error::{Error, Result};
use crate::ops::params::Media;
use crate::ops::{self, Chain, OpBox, OpSpec, Params};

/// An operation's spec and its CPU builder.
pub struct Entry {
    pub spec: &'static OpSpec,
    /// Builds the CPU half, which defines the operation.
    pub cpu: fn(&Params) -> Result<OpBox>,
}

/// An entry for `ops::$name` (its `SPEC` and `build`).
macro_rules! entry {
    ($name:ident) => {
        Entry {
            spec: &ops::$name::SPEC,
            cpu: ops::$name::build,
        }
    };
}

/// Every operation, in the order `seamstream ops` lists them.
pub static REGISTRY: &[Entry] = &[
    entry!(gray),
    entry!(yuv),
    entry!(gaussian),
    entry!(boxfilter),
    entry!(convolve),
    entry!(sobel),
    entry!(warp),
    entry!(threshold),
    entry!(adaptive),
    entry!(integral),
    entry!(equalize),
    entry!(retarget),
    entry!(segment),
    entry!(reframe),
];

/// The registry entry for an operation name.
pub fn lookup(name: &str) -> Result<&'static Entry> {
    REGISTRY
        .iter()
        .find(|e| e.spec.name == name)
        .ok_or_else(|| Error::UnknownOp {
            name: name.into(),
            valid: REGISTRY
                .iter()
                .map(|e| e.spec.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Builds an operation from its name and (key, raw value) pairs.
pub fn build_op(name: &str, pairs: &[(String, String)]) -> Result<OpBox> {
    build_op_for(name, pairs, Media::Image)
}

/// [`build_op`] for `media` (a video's operations may default otherwise).
pub fn build_op_for(name: &str, pairs: &[(String, String)], media: Media) -> Result<OpBox> {
    let entry = lookup(name)?;
    let params = Params::from_pairs(entry.spec, pairs)?.for_media(media);
    (entry.cpu)(&params)
}

/// Builds an operation from `name:key=value,...`, for a picture.
pub fn parse_op(text: &str) -> Result<OpBox> {
    parse_op_for(text, Media::Image)
}

/// [`parse_op`] for `media`.
pub fn parse_op_for(text: &str, media: Media) -> Result<OpBox> {
    let (name, pairs) = ops::params::split_op(text)?;
    build_op_for(&name, &pairs, media)
}

/// Builds a chain from `name:key=value,...` texts, in order, for a picture.
pub fn parse_chain<S: AsRef<str>>(texts: &[S]) -> Result<Chain> {
    parse_chain_for(texts, Media::Image)
}

/// [`parse_chain`] for `media`: [`Media::Video`] for a run's chain.
pub fn parse_chain_for<S: AsRef<str>>(texts: &[S], media: Media) -> Result<Chain> {
    texts
        .iter()
        .map(|t| parse_op_for(t.as_ref(), media))
        .collect::<Result<Vec<_>>>()
        .map(Chain::new)
}

/// A chain from one line, `gaussian:sigma=2,sobel` (see
/// [`ops::params::split_chain`]).
pub fn parse_chain_line(text: &str) -> Result<Chain> {
    parse_chain(&ops::params::split_chain(text))
}

/// [`parse_chain_line`] for `media`.
pub fn parse_chain_line_for(text: &str, media: Media) -> Result<Chain> {
    parse_chain_for(&ops::params::split_chain(text), media)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What an op is built for decides its defaults when it is built:
    /// retarget is fast on a video and exact on a picture unless `mode`
    /// says otherwise (it was set by a later call that six places had to
    /// remember).
    #[test]
    fn a_video_is_carved_fast_and_a_picture_exactly_unless_told() {
        let fast = |text: &str, media| parse_op_for(text, media).unwrap().remembers();
        assert!(fast("retarget:width=75%", Media::Video));
        assert!(!fast("retarget:width=75%", Media::Image));
        assert!(!fast("retarget:width=75%,mode=exact", Media::Video));
        assert!(fast("retarget:width=75%,mode=fast", Media::Image));
        assert!(
            parse_chain_line_for("gaussian:sigma=2,retarget:width=50%", Media::Video)
                .unwrap()
                .remembers()
        );
        assert!(!parse_chain(&["retarget:width=50%"]).unwrap().remembers());
    }

    #[test]
    fn unknown_op_lists_every_valid_name() {
        let e = parse_op("blur:sigma=2").unwrap_err().to_string();
        assert!(e.contains("`blur`"), "{e}");
        for entry in REGISTRY {
            assert!(e.contains(entry.spec.name), "{e} lacks {}", entry.spec.name);
        }
    }

    #[test]
    fn a_long_operation_name_is_shortened_in_the_message() {
        let long = "b".repeat(100_000);
        let e = parse_op(&format!("{long}:sigma=1"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with(&format!(
                "unknown operation `{}…` (100000 characters);",
                "b".repeat(60)
            )),
            "{}",
            e.chars().take(300).collect::<String>()
        );
        assert!(e.contains("gaussian"), "{e}");
    }

    #[test]
    fn retarget_sizes_are_echoed_as_written() {
        let e = parse_op("retarget:width=1e30").unwrap_err().to_string();
        assert!(e.contains("`width=1e30`") && e.contains("65536"), "{e}");
        assert!(!e.contains("18446744073709551615"), "{e}");
        let op = parse_op("retarget:width=0.01%").unwrap();
        let e = op.output_size(100, 50).unwrap_err().to_string();
        assert!(e.contains("`width=0.01%`"), "{e}");
        assert!(e.contains("0.01% of 100 is 0"), "{e}");
        let op = parse_op("retarget:height=150").unwrap();
        let e = op.output_size(100, 50).unwrap_err().to_string();
        assert!(
            e.contains("`height=150`") && e.contains("between 1 and 100"),
            "{e}"
        );
        assert_eq!(
            parse_op("retarget:width=200%")
                .unwrap()
                .output_size(100, 50)
                .unwrap(),
            (200, 50)
        );
    }

    #[test]
    fn every_default_in_every_spec_is_valid() {
        for entry in REGISTRY {
            match Params::from_pairs(entry.spec, &[]) {
                Ok(_) | Err(Error::MissingKey { .. }) => {}
                Err(e) => panic!("{}: {e}", entry.spec.name),
            }
        }
    }

    #[test]
    fn every_example_parses_and_builds() {
        for entry in REGISTRY {
            let op = parse_op(entry.spec.example)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.spec.example));
            assert_eq!(op.name(), entry.spec.name, "{}", entry.spec.example);
        }
    }

    #[test]
    fn names_are_unique() {
        for (i, a) in REGISTRY.iter().enumerate() {
            assert!(
                REGISTRY[i + 1..].iter().all(|b| b.spec.name != a.spec.name),
                "{} is registered twice",
                a.spec.name
            );
        }
    }
}
