//! Operations: one file each, holding the parameters and the CPU reference.
//!
//! A frame enters an [`Op`] as a [`Frame`] (RGBA or gray) and leaves as a new
//! frame, possibly of another size (`retarget`, `warp`). The CPU reference
//! here defines each operation exactly; the CUDA kernels are tested against it.
//! Ops are written `name:key=value,...` (see [`params`]), strung together in
//! a [`Chain`], and listed with their GPU halves in [`crate::registry`]; this
//! module knows nothing of the GPU.

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
pub mod reframe;
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
use crate::frame::{DevFormat, Frame};

/// One operation of a chain, built from validated parameters.
pub trait Op: std::any::Any + Send + std::fmt::Debug {
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

    /// The pixel layout that comes out for an input in `input`: the same,
    /// unless the operation makes gray frames (or RGBA from gray).
    fn output_format(&self, input: DevFormat) -> DevFormat {
        input
    }

    /// Whether a frame's output depends on the frames before it (fast
    /// retargeting's seam memory), so that a part of a job split in time
    /// must warm up on the frames before its first.
    fn remembers(&self) -> bool {
        false
    }

    /// Frames the operation holds back to look ahead (live reframing):
    /// what comes out for the k-th frame in is the (k − delay)-th frame's
    /// result, and the first `delay` results are placeholders. Whoever
    /// drives the chain drops those, stamps each result with its own
    /// frame's timing, and at the end feeds the last frame in `delay` more
    /// times to get the held frames out. Known once [`Op::set_rate`] has
    /// been told the source's rate.
    fn delay(&self) -> usize {
        0
    }

    /// The source's frame rate, told before the first frame (ops whose
    /// timing is in seconds).
    fn set_rate(&mut self, _fps: f64) -> Result<()> {
        Ok(())
    }

    /// Holds no frame back from now on ([`Op::delay`] 0), for a caller that
    /// takes each frame's result at once and has no end to drain (a still
    /// image, Python's frame-by-frame calls); an error where the user asked
    /// for a look-ahead in so many words.
    fn hold_none(&mut self) -> Result<()> {
        Ok(())
    }
}

pub type OpBox = Box<dyn Op>;

/// Builds one operation from `name:key=value,...` with its own spec and
/// builder, with no lookup by name (the registry's [`parse_op`] looks the name
/// up; this is for an op's own tests, below the registry).
///
/// [`parse_op`]: crate::registry::parse_op
pub fn parse_with(
    spec: &'static OpSpec,
    build: fn(&Params) -> Result<OpBox>,
    text: &str,
) -> Result<OpBox> {
    let (name, pairs) = params::split_op(text)?;
    if name != spec.name {
        return Err(Error::UnknownOp {
            name,
            valid: spec.name.into(),
        });
    }
    build(&Params::from_pairs(spec, &pairs)?)
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

    /// The operations, in order, to set up before a run (a reframe's plan).
    pub fn ops_mut(&mut self) -> &mut [OpBox] {
        &mut self.ops
    }

    pub fn names(&self) -> Vec<&'static str> {
        self.ops.iter().map(|o| o.name()).collect()
    }

    /// Whether any operation keeps memory from frame to frame ([`Op::remembers`]).
    pub fn remembers(&self) -> bool {
        self.ops.iter().any(|o| o.remembers())
    }

    /// Frames the chain holds back ([`Op::delay`]), all its ops together.
    pub fn delay(&self) -> usize {
        self.ops.iter().map(|o| o.delay()).sum()
    }

    /// Tells every operation the source's frame rate ([`Op::set_rate`]).
    pub fn set_rate(&mut self, fps: f64) -> Result<()> {
        self.ops.iter_mut().try_for_each(|o| o.set_rate(fps))
    }

    /// Makes every operation hold no frame back ([`Op::hold_none`]).
    pub fn hold_none(&mut self) -> Result<()> {
        self.ops.iter_mut().try_for_each(|o| o.hold_none())
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

    /// The size and pixel layout that come out for frames of `width`×`height`
    /// in `format`, on either device: what an element offers downstream
    /// before it has seen a frame.
    pub fn output_shape(
        &self,
        width: usize,
        height: usize,
        format: DevFormat,
    ) -> Result<(usize, usize, DevFormat)> {
        self.ops
            .iter()
            .try_fold((width, height, format), |(w, h, f), op| {
                let (w, h) = op.output_size(w, h)?;
                Ok((w, h, op.output_format(f)))
            })
    }
}
