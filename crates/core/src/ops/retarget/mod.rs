//! `retarget`: content-aware resizing by seam carving (seed 000, with the
//! rules of docs/DESIGN.md §4).
//!
//! A frame goes in, a frame of the target size comes out. The parts:
//!
//! - [`energy`]: how much each pixel matters, in integers;
//! - [`dp`]: the dynamic programme that finds the cheapest seam;
//! - [`exact`]: exact mode, one seam at a time (the default for images);
//! - [`fast`]: fast mode, for video (the default in `run`), with
//!   [`passes`] (many seams from one DP, for a new shot), [`temporal`]
//!   (seams followed from frame to frame) and [`motion`] (global shift and
//!   what moved).
//!
//! The GPU version (src/cuda/ops/retarget) reproduces every frame.

pub mod dp;
pub mod energy;
pub mod exact;
pub mod fast;
pub mod motion;
pub mod passes;
pub mod temporal;

pub use dp::vertical_seam;
pub use energy::{Energy, energy_at, energy_map, isqrt, luma_unit};
pub use exact::{exact_kept_columns, retarget};

pub use dp::OUTSIDE;

use super::params::{Kind, OpSpec, ParamSpec, Params, SizeSpec};
use super::{Op, OpBox};
use crate::error::{Error, Result};
use crate::frame::{Frame, Plane, Rgba};
use fast::{FastParams, FastState, retarget_fast};

/// Extra cost of a protected pixel.
pub const PROTECT_COST: i64 = 1 << 44;
/// Cost taken off a pixel marked for removal.
pub const REMOVE_BONUS: i64 = 1 << 34;

/// A mask pixel's meaning.
pub const MASK_NONE: i8 = 0;
pub const MASK_PROTECT: i8 = 1;
pub const MASK_REMOVE: i8 = -1;

#[inline]
pub(crate) fn mask_cost(m: i8) -> i64 {
    match m {
        MASK_PROTECT => PROTECT_COST,
        MASK_REMOVE => -REMOVE_BONUS,
        _ => 0,
    }
}

/// Options for [`retarget`].
#[derive(Clone, Copy, Debug)]
pub struct CarveOptions<'a> {
    pub energy: Energy,
    /// Pixels that seams avoid (non-zero = protected), same size as the frame.
    pub protect: Option<&'a Plane<u8>>,
    /// Pixels that seams take first (non-zero = remove), same size as the frame.
    pub remove: Option<&'a Plane<u8>>,
}

impl Default for CarveOptions<'_> {
    fn default() -> Self {
        Self {
            energy: Energy::Forward,
            protect: None,
            remove: None,
        }
    }
}

pub fn combine_masks(w: usize, h: usize, opts: &CarveOptions) -> Result<Option<Plane<i8>>> {
    if opts.protect.is_none() && opts.remove.is_none() {
        return Ok(None);
    }
    for (name, m) in [("protect", opts.protect), ("remove", opts.remove)] {
        if let Some(m) = m
            && (m.width(), m.height()) != (w, h)
        {
            return Err(Error::op_failed(
                "retarget",
                format!(
                    "the {name} mask is {}x{} but the frame is {w}x{h}; masks must match the frame size",
                    m.width(),
                    m.height()
                ),
            ));
        }
    }
    Ok(Some(Plane::from_fn(w, h, |x, y| {
        if opts.protect.is_some_and(|m| m.get(x, y) != 0) {
            MASK_PROTECT
        } else if opts.remove.is_some_and(|m| m.get(x, y) != 0) {
            MASK_REMOVE
        } else {
            MASK_NONE
        }
    })))
}

pub(crate) fn check_target(side: &str, target: usize, input: usize) -> Result<()> {
    if target == 0 || target > 2 * input {
        return Err(Error::bad_value(
            "retarget",
            side,
            target,
            format!(
                "the target {side} must be between 1 and {} (2× the input {side}, {input})",
                2 * input
            ),
        ));
    }
    Ok(())
}

/// A target side as the user may write it: at most twice the largest side
/// a frame may have ([`crate::io::MAX_SIDE`]), or 200% (the 2× limit below).
const TARGET_SIDE: Kind = Kind::Size {
    max_pixels: 2 * crate::io::MAX_SIDE as usize,
    max_percent: 200.0,
};

pub static SPEC: OpSpec = OpSpec {
    name: "retarget",
    summary: "content-aware resize by seam carving (changes the frame size)",
    params: &[
        ParamSpec::optional(
            "width",
            TARGET_SIDE,
            "target width, 1 to 2× the input (default: unchanged)",
        ),
        ParamSpec::optional(
            "height",
            TARGET_SIDE,
            "target height, 1 to 2× the input (default: unchanged)",
        ),
        ParamSpec::new(
            "energy",
            Kind::Choice(&["basic", "sobel3", "sobel5", "forward"]),
            "forward",
            "pixel importance",
        ),
        ParamSpec::optional(
            "mode",
            Kind::Choice(&["exact", "fast"]),
            "exact: one seam at a time, the best result; fast: many seams at once, steered by the last frame (default: fast in `run`, exact in `image`)",
        ),
        ParamSpec::new(
            "coherence",
            Kind::Int { min: 0, max: 1000 },
            "100",
            "fast mode: how firmly seams hold still: a seam's move costs this % of the picture change it makes (0: seams move freely)",
        ),
        ParamSpec::new(
            "motion",
            Kind::Int { min: 0, max: 10000 },
            "1200",
            "fast mode: how firmly seams keep off what moves: a level of motion (up to 32) costs this % of a level of energy; ignored while a tenth of the picture or more moves (0: always ignored)",
        ),
        ParamSpec::new(
            "band",
            Kind::Int { min: 1, max: 15 },
            "15",
            "fast mode: pixels a seam may move from one frame to the next",
        ),
        ParamSpec::new(
            "passes",
            Kind::Int { min: 1, max: 64 },
            "32",
            "fast mode: passes that place a new shot's seams, when they beat 4 stacked passes (more: closer to exact mode, slower at cuts)",
        ),
        ParamSpec::new(
            "cut",
            Kind::Int { min: 1, max: 255 },
            "30",
            "fast mode: mean luma change that counts as a scene cut (seams start afresh)",
        ),
        ParamSpec::new(
            "noise",
            Kind::Int { min: 0, max: 255 },
            "12",
            "fast mode: luma change taken for noise, not motion",
        ),
        ParamSpec::optional(
            "protect",
            Kind::Path,
            "mask image (white = never carve), same size as the frame",
        ),
        ParamSpec::optional(
            "remove",
            Kind::Path,
            "mask image (white = carve first), same size as the frame",
        ),
    ],
    example: "retarget:width=75%,energy=forward",
};

/// How seams are found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One seam at a time, each the best of the frame as it is.
    Exact,
    /// Many seams per pass, steered by the last frame ([`fast`]).
    Fast,
}

/// What a `retarget` op is built with, fixed from then on: its parameters
/// with the masks loaded. The GPU half is built from a clone of it.
#[derive(Clone, Debug)]
pub struct RetargetSettings {
    pub width: Option<SizeSpec>,
    pub height: Option<SizeSpec>,
    pub energy: Energy,
    /// As `mode` says, else fast for a video and exact for a picture
    /// ([`crate::ops::params::Media`], given when the op is built).
    pub mode: Mode,
    pub fast: FastParams,
    pub protect: Option<Plane<u8>>,
    pub remove: Option<Plane<u8>>,
}

impl RetargetSettings {
    /// The target size for a w×h input.
    pub fn target(&self, w: usize, h: usize) -> Result<(usize, usize)> {
        target_size(self.width, self.height, w, h)
    }

    /// Fast mode's parameters, in fast mode.
    pub fn fast_mode(&self) -> Option<&FastParams> {
        (self.mode == Mode::Fast).then_some(&self.fast)
    }
}

/// The `retarget` operation: its settings, and fast mode's memory of the
/// last frame.
#[derive(Debug)]
pub struct Retarget {
    pub settings: RetargetSettings,
    pub state: FastState,
}

fn load_mask(p: &Params, key: &str) -> Result<Option<Plane<u8>>> {
    let Some(path) = p.path(key) else {
        return Ok(None);
    };
    let frame = crate::io::load_image(path)
        .map_err(|e| Error::bad_value("retarget", key, path.display(), e.to_string()))?;
    Ok(Some(frame.luma().map(|v| (v >= 128) as u8)))
}

/// Fast mode's parameters from a `retarget` op's.
pub fn fast_params(p: &Params) -> Result<FastParams> {
    let energy = Energy::parse(p.word("energy")?).ok_or_else(|| {
        Error::bad_value(
            "retarget",
            "energy",
            p.word("energy").unwrap_or(""),
            "unknown energy",
        )
    })?;
    Ok(FastParams {
        energy,
        passes: p.usize("passes")?,
        coherence: p.usize("coherence")? as u32,
        motion: p.usize("motion")? as u32,
        band: p.usize("band")?,
        cut: p.usize("cut")? as u32,
        noise: p.usize("noise")? as u32,
    })
}

pub fn build(p: &Params) -> Result<OpBox> {
    let mode = match p.get("mode") {
        None if p.media() == crate::ops::params::Media::Video => Mode::Fast,
        None => Mode::Exact,
        Some(_) if p.word("mode")? == "fast" => Mode::Fast,
        Some(_) => Mode::Exact,
    };
    // The energy is parsed once, with fast mode's parameters.
    let fast = fast_params(p)?;
    Ok(Box::new(Retarget {
        settings: RetargetSettings {
            width: p.size("width"),
            height: p.size("height"),
            energy: fast.energy,
            mode,
            fast,
            protect: load_mask(p, "protect")?,
            remove: load_mask(p, "remove")?,
        },
        state: FastState::default(),
    }))
}

/// The target size for a w×h input (unchanged where a side is not given),
/// or an error naming the side out of range as the user wrote it.
pub fn target_size(
    width: Option<SizeSpec>,
    height: Option<SizeSpec>,
    w: usize,
    h: usize,
) -> Result<(usize, usize)> {
    Ok((
        target_side("width", width, w)?,
        target_side("height", height, h)?,
    ))
}

fn target_side(side: &str, spec: Option<SizeSpec>, input: usize) -> Result<usize> {
    let Some(spec) = spec else {
        check_target(side, input, input)?;
        return Ok(input);
    };
    let target = spec.resolve(input);
    if target == 0 || target > 2 * input {
        let of = match spec {
            SizeSpec::Percent(_) => format!("; {spec} of {input} is {target}"),
            SizeSpec::Pixels(_) => String::new(),
        };
        return Err(Error::bad_value(
            "retarget",
            side,
            spec,
            format!(
                "the target {side} must be between 1 and {} (2× the input {side}, {input}){of}",
                2 * input
            ),
        ));
    }
    Ok(target)
}

impl Op for Retarget {
    fn name(&self) -> &'static str {
        "retarget"
    }

    fn output_size(&self, width: usize, height: usize) -> Result<(usize, usize)> {
        self.settings.target(width, height)
    }

    fn apply(&mut self, frame: &Frame) -> Result<Frame> {
        let s = &self.settings;
        let (tw, th) = s.target(frame.width(), frame.height())?;
        let opts = CarveOptions {
            energy: s.energy,
            protect: s.protect.as_ref(),
            remove: s.remove.as_ref(),
        };
        if let Some(params) = s.fast_mode() {
            let state = &mut self.state;
            return Ok(match frame {
                Frame::Rgba(p) => {
                    Frame::Rgba(retarget_fast::<Rgba>(p, tw, th, &opts, params, state)?)
                }
                Frame::Gray(p) => {
                    Frame::Gray(retarget_fast::<u8>(p, tw, th, &opts, params, state)?)
                }
            });
        }
        Ok(match frame {
            Frame::Rgba(p) => Frame::Rgba(retarget::<Rgba>(p, tw, th, &opts)?),
            Frame::Gray(p) => Frame::Gray(retarget::<u8>(p, tw, th, &opts)?),
        })
    }

    fn remembers(&self) -> bool {
        self.settings.mode == Mode::Fast
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use crate::frame::Plane;

    /// A w×h plane of pseudo-random levels from `seed` (the crate's one
    /// generator, [`crate::noise::Noise`]), the retarget modules' test
    /// picture.
    pub(crate) fn noise(w: usize, h: usize, seed: u32) -> Plane<u8> {
        crate::noise::Noise::new(u64::from(seed)).gray(w, h)
    }
}
