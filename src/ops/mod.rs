//! Operations: one file each, holding the parameters and the CPU reference.
//!
//! A frame enters an [`Op`] as a [`Frame`] (RGBA or gray) and leaves as a new
//! frame, possibly of another size (`retarget`, `warp`). The CPU reference
//! here defines each operation exactly; the CUDA kernels are tested against it.
//! Ops are written `name:key=value,...` (see [`params`]), listed by
//! [`REGISTRY`], and strung together in a [`Chain`].

pub mod adaptive;
pub mod border;
pub mod boxfilter;
pub mod convolve;
pub mod equalize;
pub mod gaussian;
pub mod gray;
pub mod integral;
pub mod params;
pub mod pixel;
pub mod retarget;
pub mod segment;
pub mod sobel;
pub mod threshold;
pub mod warp;
pub mod yuv;

pub use border::Border;
pub use params::{OpSpec, Params};
pub use pixel::Pixel;

use crate::error::{Error, Result};
use crate::frame::Frame;

/// One operation of a chain, built from validated parameters.
pub trait Op: Send + std::fmt::Debug {
    /// The operation's name as written in a chain.
    fn name(&self) -> &'static str;

    /// Runs the operation on one frame. `&mut self` lets an operation keep
    /// state from frame to frame (temporal seam carving).
    fn apply(&mut self, frame: &Frame) -> Result<Frame>;

    /// The output size for an input of `width`×`height`; an error if the
    /// operation cannot take that size.
    fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        Ok((width, height))
    }

    /// Called once before a video stream: an operation whose best default
    /// differs for video takes it (retarget: fast mode unless told).
    fn streaming(&mut self) {}

    /// The operation's GPU half, with the same parameters.
    fn cuda(&self) -> Result<Box<dyn crate::cuda::GpuOp>> {
        Err(Error::Unsupported(format!(
            "`{}` has no GPU version yet; use --device cpu",
            self.name()
        )))
    }
}

pub type OpBox = Box<dyn Op>;

/// An operation's spec and constructor.
pub struct Entry {
    pub spec: &'static OpSpec,
    pub build: fn(&Params) -> Result<OpBox>,
}

/// Every operation, in the order `seamstream ops` lists them.
pub static REGISTRY: &[Entry] = &[
    Entry {
        spec: &gray::SPEC,
        build: gray::build,
    },
    Entry {
        spec: &yuv::SPEC,
        build: yuv::build,
    },
    Entry {
        spec: &gaussian::SPEC,
        build: gaussian::build,
    },
    Entry {
        spec: &boxfilter::SPEC,
        build: boxfilter::build,
    },
    Entry {
        spec: &convolve::SPEC,
        build: convolve::build,
    },
    Entry {
        spec: &sobel::SPEC,
        build: sobel::build,
    },
    Entry {
        spec: &warp::SPEC,
        build: warp::build,
    },
    Entry {
        spec: &threshold::SPEC,
        build: threshold::build,
    },
    Entry {
        spec: &adaptive::SPEC,
        build: adaptive::build,
    },
    Entry {
        spec: &integral::SPEC,
        build: integral::build,
    },
    Entry {
        spec: &equalize::SPEC,
        build: equalize::build,
    },
    Entry {
        spec: &retarget::SPEC,
        build: retarget::build,
    },
    Entry {
        spec: &segment::SPEC,
        build: segment::build,
    },
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
    let entry = lookup(name)?;
    let params = Params::from_pairs(entry.spec, pairs)?;
    (entry.build)(&params)
}

/// Builds an operation from `name:key=value,...`.
pub fn parse_op(text: &str) -> Result<OpBox> {
    let (name, pairs) = params::split_op(text)?;
    build_op(&name, &pairs)
}

/// Operations applied in order.
#[derive(Debug, Default)]
pub struct Chain {
    ops: Vec<OpBox>,
}

impl Chain {
    pub fn new(ops: Vec<OpBox>) -> Self {
        Self { ops }
    }

    /// Parses each `name:key=value,...` in order.
    pub fn parse<S: AsRef<str>>(texts: &[S]) -> Result<Self> {
        texts
            .iter()
            .map(|t| parse_op(t.as_ref()))
            .collect::<Result<Vec<_>>>()
            .map(Self::new)
    }

    pub fn is_empty(&self) -> bool {
        self.ops.is_empty()
    }

    pub fn len(&self) -> usize {
        self.ops.len()
    }

    /// The operations, in order.
    pub fn ops(&self) -> &[OpBox] {
        &self.ops
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.ops.iter().map(|o| o.name()).collect()
    }

    /// Tells every operation that frames come from a video stream.
    pub fn streaming(&mut self) {
        for op in &mut self.ops {
            op.streaming();
        }
    }

    /// Runs every operation in order.
    pub fn apply(&mut self, frame: Frame) -> Result<Frame> {
        let mut cur = frame;
        for op in &mut self.ops {
            cur = op.apply(&cur)?;
        }
        Ok(cur)
    }

    /// The size that comes out for an input of `width`×`height`.
    pub fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        self.ops
            .iter()
            .try_fold((width, height), |(w, h), op| op.output_size(w, h))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(e.contains("`height=150`") && e.contains("(100)"), "{e}");
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
    fn every_example_parses() {
        for entry in REGISTRY {
            let (name, pairs) = params::split_op(entry.spec.example).unwrap();
            assert_eq!(name, entry.spec.name);
            Params::from_pairs(entry.spec, &pairs)
                .unwrap_or_else(|e| panic!("{}: {e}", entry.spec.example));
        }
    }
}
