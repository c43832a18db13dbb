//! The one place that names both halves of every operation: its spec, its
//! CPU builder (in [`crate::ops`]) and its GPU builder (in
//! [`crate::cuda::ops`]), if it has one.
//!
//! Adding an operation: write `src/ops/NAME.rs` (spec, parameters, CPU
//! reference), `kernels/NAME.cu` and `src/cuda/ops/NAME.rs` (a type with
//! `new(&CpuType)` that implements [`GpuOp`]), and add one line to
//! [`REGISTRY`]. `seamstream ops` then lists it with the devices it runs on,
//! and `tests/gpu/registry.rs` checks its GPU half against the CPU.

use std::any::Any;

use crate::cuda::ops as gpu;
use crate::cuda::{DevFormat, GpuHalves, GpuOp};
use crate::error::{Error, Result};
use crate::ops::params::Media;
use crate::ops::{self, Chain, Op, OpBox, OpSpec, Params};

/// Builds an operation's GPU half from its CPU half.
pub type GpuBuilder = fn(&dyn Op) -> Result<Box<dyn GpuOp>>;

/// An operation's spec and its two halves.
pub struct Entry {
    pub spec: &'static OpSpec,
    /// Builds the CPU half, which defines the operation.
    pub cpu: fn(&Params) -> Result<OpBox>,
    /// Builds the GPU half, whose output equals the CPU's byte for byte:
    /// every operation has both.
    pub gpu: GpuBuilder,
    /// Settings the GPU tests run besides the spec's example, written as in a
    /// chain (the paths through the kernels that the example misses).
    pub gpu_cases: &'static [&'static str],
}

/// The CPU type of an op, taken back from the chain's `dyn Op`.
fn cpu_half<T: Op>(op: &dyn Op) -> Result<&T> {
    (op as &dyn Any).downcast_ref::<T>().ok_or_else(|| {
        Error::Unsupported(format!(
            "`{}` was registered with another CPU type than it was built with",
            op.name()
        ))
    })
}

/// An entry whose GPU half is `$gpu::new(&$cpu)`.
macro_rules! both {
    ($name:ident: $cpu:ty => $gpu:ty $(, cases: $cases:expr)?) => {
        Entry {
            spec: &ops::$name::SPEC,
            cpu: ops::$name::build,
            gpu: |op| Ok(Box::new(<$gpu>::new(cpu_half::<$cpu>(op)?))),
            gpu_cases: both!(@cases $($cases)?),
        }
    };
    (@cases) => { &[] };
    (@cases $cases:expr) => { $cases };
}

/// Every operation, in the order `seamstream ops` lists them.
pub static REGISTRY: &[Entry] = &[
    both!(gray: ops::gray::Gray => gpu::gray::GpuGray, cases: &["gray:matrix=bt709,output=rgba"]),
    both!(yuv: ops::yuv::YuvRoundTrip => gpu::yuv::GpuYuv, cases: &["yuv:matrix=bt709,range=limited"]),
    both!(gaussian: ops::gaussian::Gaussian => gpu::gaussian::GpuGaussian,
        cases: &["gaussian:sigma=6,border=reflect101", "gaussian:sigma=12,border=zero"]),
    both!(boxfilter: ops::boxfilter::BoxFilter => gpu::boxfilter::GpuBox,
        cases: &["box:radius=17,border=replicate"]),
    both!(convolve: ops::convolve::Convolve => gpu::convolve::GpuConvolve,
        cases: &["convolve:row=[0.1,0.2,0.3,0.4],col=[-1,0,2],delta=3.5"]),
    both!(sobel: ops::sobel::Sobel => gpu::sobel::GpuSobel,
        cases: &["sobel:ksize=5,output=dy"]),
    both!(warp: ops::warp::Warp => gpu::warp::GpuWarp,
        cases: &["warp:perspective=[1,0.1,-3,0.05,0.9,4,0.001,0.0005,1],size=20x9,border=replicate"]),
    both!(threshold: ops::threshold::Threshold => gpu::threshold::GpuThreshold,
        cases: &["threshold:t=100,type=trunc"]),
    both!(adaptive: ops::adaptive::Adaptive => gpu::adaptive::GpuAdaptive,
        cases: &["adaptive:method=mean,window=15", "adaptive:method=niblack,window=7"]),
    both!(integral: ops::integral::IntegralView => gpu::integral::GpuIntegralView),
    both!(equalize: ops::equalize::Equalize => gpu::equalize::GpuEqualize),
    both!(retarget: ops::retarget::Retarget => gpu::retarget::GpuRetarget,
        cases: &["retarget:width=75%,mode=fast", "retarget:height=80%,energy=sobel3"]),
    both!(segment: ops::segment::Segment => gpu::segment::GpuSegment,
        cases: &["segment:output=labels"]),
    both!(reframe: ops::reframe::Reframe => gpu::reframe::GpuReframe,
        cases: &["reframe:aspect=1:1,fit=pad,pad=black", "reframe:aspect=9:16,fit=carve",
            "reframe:aspect=21:9,fit=pad"]),
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

/// The GPU half of `op`, with its parameters.
pub fn gpu_half(op: &dyn Op) -> Result<Box<dyn GpuOp>> {
    (lookup(op.name())?.gpu)(op)
}

/// The size and format that come out of `chain` for frames of `width` ×
/// `height` in `format`, on either device (taken from the GPU halves, which
/// know their output formats; building one needs no GPU).
pub fn output_shape(
    chain: &Chain,
    width: usize,
    height: usize,
    format: DevFormat,
) -> Result<(usize, usize, DevFormat)> {
    chain
        .ops()
        .iter()
        .try_fold((width, height, format), |(w, h, f), op| {
            gpu_half(op.as_ref())?.output(w, h, f)
        })
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

impl GpuHalves for Chain {
    fn gpu_halves(&self) -> Result<Vec<Box<dyn GpuOp>>> {
        self.ops().iter().map(|op| gpu_half(op.as_ref())).collect()
    }
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
    fn every_example_and_gpu_case_parses_and_builds() {
        for entry in REGISTRY {
            for text in std::iter::once(&entry.spec.example).chain(entry.gpu_cases) {
                let op = parse_op(text).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(op.name(), entry.spec.name, "{text}");
            }
        }
    }

    /// Building a GPU half needs no GPU (device work waits for `prepare`),
    /// so a wrong type in a registry line fails here, on every machine.
    #[test]
    fn every_gpu_half_takes_its_cpu_half() {
        for entry in REGISTRY {
            let op = parse_op(entry.spec.example).unwrap();
            let half = gpu_half(op.as_ref()).unwrap_or_else(|e| panic!("{}: {e}", entry.spec.name));
            assert_eq!(half.name(), entry.spec.name);
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
