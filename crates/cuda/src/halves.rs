//! The GPU half of every operation, by the CPU half it is built from. The
//! operations and their names are `seamstream_core::registry`'s; this table
//! adds, for each, the type in [`crate::ops`] whose output equals the CPU's
//! byte for byte, and the settings the GPU tests run besides the spec's
//! example. A test checks that every registered operation has one.

use std::any::Any;

use seamstream_core::ops::{self, Chain, Op, OpSpec};
use seamstream_core::registry;

use crate::error::{Error, Result};
use crate::ops as gpu;
use crate::{GpuHalves, GpuOp};

/// Builds an operation's GPU half from its CPU half.
pub type GpuBuilder = fn(&dyn Op) -> Result<Box<dyn GpuOp>>;

/// The GPU half of one registered operation.
pub struct Half {
    pub spec: &'static OpSpec,
    pub build: GpuBuilder,
    /// Settings the GPU tests run besides the spec's example, written as in a
    /// chain (the paths through the kernels that the example misses).
    pub cases: &'static [&'static str],
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

/// The half of `ops::$name`, built by `$gpu::new(&$cpu)`.
macro_rules! half {
    ($name:ident: $cpu:ty => $gpu:ty $(, cases: $cases:expr)?) => {
        Half {
            spec: &ops::$name::SPEC,
            build: |op| Ok(Box::new(<$gpu>::new(cpu_half::<$cpu>(op)?))),
            cases: half!(@cases $($cases)?),
        }
    };
    (@cases) => { &[] };
    (@cases $cases:expr) => { $cases };
}

/// Every operation's GPU half, in the registry's order.
pub static HALVES: &[Half] = &[
    half!(gray: ops::gray::Gray => gpu::gray::GpuGray, cases: &["gray:matrix=bt709,output=rgba"]),
    half!(yuv: ops::yuv::YuvRoundTrip => gpu::yuv::GpuYuv, cases: &["yuv:matrix=bt709,range=limited"]),
    half!(gaussian: ops::gaussian::Gaussian => gpu::gaussian::GpuGaussian,
        cases: &["gaussian:sigma=6,border=reflect101", "gaussian:sigma=12,border=zero"]),
    half!(boxfilter: ops::boxfilter::BoxFilter => gpu::boxfilter::GpuBox,
        cases: &["box:radius=17,border=replicate"]),
    half!(convolve: ops::convolve::Convolve => gpu::convolve::GpuConvolve,
        cases: &["convolve:row=[0.1,0.2,0.3,0.4],col=[-1,0,2],delta=3.5"]),
    half!(sobel: ops::sobel::Sobel => gpu::sobel::GpuSobel,
        cases: &["sobel:ksize=5,output=dy"]),
    half!(warp: ops::warp::Warp => gpu::warp::GpuWarp,
        cases: &["warp:perspective=[1,0.1,-3,0.05,0.9,4,0.001,0.0005,1],size=20x9,border=replicate"]),
    half!(threshold: ops::threshold::Threshold => gpu::threshold::GpuThreshold,
        cases: &["threshold:t=100,type=trunc"]),
    half!(adaptive: ops::adaptive::Adaptive => gpu::adaptive::GpuAdaptive,
        cases: &["adaptive:method=mean,window=15", "adaptive:method=niblack,window=7"]),
    half!(integral: ops::integral::IntegralView => gpu::integral::GpuIntegralView),
    half!(equalize: ops::equalize::Equalize => gpu::equalize::GpuEqualize),
    half!(retarget: ops::retarget::Retarget => gpu::retarget::GpuRetarget,
        cases: &["retarget:width=75%,mode=fast", "retarget:height=80%,energy=sobel3"]),
    half!(segment: ops::segment::Segment => gpu::segment::GpuSegment,
        cases: &["segment:output=labels"]),
    half!(reframe: ops::reframe::Reframe => gpu::reframe::GpuReframe,
        cases: &["reframe:aspect=1:1,fit=pad,pad=black", "reframe:aspect=9:16,fit=carve",
            "reframe:aspect=21:9,fit=pad"]),
];

/// The GPU half registered for the operation named `name`.
pub fn half_of(name: &str) -> Result<&'static Half> {
    let entry = registry::lookup(name)?;
    HALVES
        .iter()
        .find(|h| h.spec.name == entry.spec.name)
        .ok_or_else(|| Error::Unsupported(format!("`{name}` has no GPU half")))
}

/// The GPU half of `op`, with its parameters.
pub fn gpu_half(op: &dyn Op) -> Result<Box<dyn GpuOp>> {
    (half_of(op.name())?.build)(op)
}

impl GpuHalves for Chain {
    fn gpu_halves(&self) -> Result<Vec<Box<dyn GpuOp>>> {
        self.ops().iter().map(|op| gpu_half(op.as_ref())).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seamstream_core::registry::{REGISTRY, parse_op};

    /// Every operation runs on both devices: each registered one has one
    /// GPU half, and the table names no other.
    #[test]
    fn every_operation_has_one_gpu_half_in_the_registrys_order() {
        let names = |it: &mut dyn Iterator<Item = &'static str>| it.collect::<Vec<_>>();
        assert_eq!(
            names(&mut HALVES.iter().map(|h| h.spec.name)),
            names(&mut REGISTRY.iter().map(|e| e.spec.name))
        );
    }

    /// Building a GPU half needs no GPU (device work waits for `prepare`),
    /// so a wrong type in a line of the table fails here, on every machine.
    #[test]
    fn every_gpu_half_takes_its_cpu_half_in_every_case() {
        for half in HALVES {
            for text in std::iter::once(&half.spec.example).chain(half.cases) {
                let op = parse_op(text).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(op.name(), half.spec.name, "{text}");
                let built = gpu_half(op.as_ref()).unwrap_or_else(|e| panic!("{text}: {e}"));
                assert_eq!(built.name(), half.spec.name, "{text}");
            }
        }
    }

    /// The GPU half gives the size and layout its CPU half defines
    /// (`Op::output_size`, `Op::output_format`), which the elements offer
    /// downstream before a frame.
    #[test]
    fn every_gpu_half_gives_the_cpu_halfs_output_shape() {
        use crate::DevFormat;
        for half in HALVES {
            for text in std::iter::once(&half.spec.example).chain(half.cases) {
                let op = parse_op(text).unwrap();
                let built = gpu_half(op.as_ref()).unwrap();
                let chain = Chain::new(vec![op]);
                for (w, h) in [(64, 48), (33, 70)] {
                    for f in [DevFormat::Rgba, DevFormat::Gray] {
                        let cpu = chain.output_shape(w, h, f).map_err(|e| e.to_string());
                        let gpu = built.output(w, h, f).map_err(|e| e.to_string());
                        assert_eq!(gpu, cpu, "{text} at {w}x{h} {f:?}");
                    }
                }
            }
        }
    }
}
