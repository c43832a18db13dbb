//! GPU `retarget` (kernels/retarget.cu): the op, [`GpuRetarget`], for both
//! modes, and what the modes share: the kernels of one pixel format
//! (`Kernels`) and the helpers that launch them and allocate their
//! buffers. src/ops/retarget/ defines the rules; the GPU reproduces every
//! frame:
//!
//! - `dp`: the seam DP (`SeamDp`), which both modes sweep;
//! - `exact`: exact mode's state, one seam at a time, every seam the
//!   CPU's;
//! - `fast`: fast mode's state (kernels/retarget_fast.cu), on the same DP
//!   and layout kernels.
//!
//! Test-only: `tests.rs` checks the DP's schedule and the GPU's DP against
//! the CPU's; `profile.rs` measures the DP on the GPU, by hand.

pub(crate) mod dp;
pub(crate) use fast::{CHOOSE_THREADS, MS_LEVEL_X, MS_WORDS};
mod exact;
mod fast;
#[cfg(test)]
mod profile;
#[cfg(test)]
mod tests;

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg,
};

use crate::color::Matrix;
use crate::error::Result;
use crate::frame::Plane;
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, check_frames, cuda_err};
use seamstream_core::ops::retarget::{
    Energy, MASK_PROTECT, MASK_REMOVE, Retarget, RetargetSettings,
};

pub(crate) use dp::{DpScratch, SeamDp};

const FILE: &str = "retarget.cu";

// The kernels read the mask codes as 1 (protect) and -1 (remove).
const _: () = assert!(MASK_PROTECT == 1 && MASK_REMOVE == -1);

/// An absent plane: the kernels test their optional pointers for null.
static NULL: u64 = 0;

/// Pushes an optional buffer, or null.
pub(crate) trait PushOptional<'a> {
    fn opt<T>(&mut self, s: Option<&'a CudaSlice<T>>) -> &mut Self;
    fn opt_mut<T>(&mut self, s: Option<&'a mut CudaSlice<T>>) -> &mut Self;
}

impl<'a> PushOptional<'a> for LaunchArgs<'a> {
    fn opt<T>(&mut self, s: Option<&'a CudaSlice<T>>) -> &mut Self {
        match s {
            Some(s) => self.arg(s),
            None => self.arg(&NULL),
        }
    }
    fn opt_mut<T>(&mut self, s: Option<&'a mut CudaSlice<T>>) -> &mut Self {
        match s {
            Some(s) => self.arg(s),
            None => self.arg(&NULL),
        }
    }
}

/// Launches `b`.
///
/// # Safety
/// The arguments pushed must be those of the kernel, in order and type, and
/// every buffer must hold what the kernel reads and writes for `cfg`.
pub(crate) unsafe fn launch(b: &mut LaunchArgs, cfg: LaunchConfig, what: &str) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { b.launch(cfg) }
        .map(|_| ())
        .map_err(|e| cuda_err(&format!("retarget: launching {what}"), e))
}

/// 32×8 threads a block, a thread a pixel of a w×h plane.
pub(crate) fn per_pixel(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks(w, 32), blocks(h, 8), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

/// One block a row.
pub(crate) fn per_row(h: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (h.max(1) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// The energy kinds as the kernels take them (`ENERGY_*`, given them by
/// [`crate::shared`]).
pub(crate) const ENERGY_BASIC: i32 = 0;
pub(crate) const ENERGY_SOBEL3: i32 = 1;
pub(crate) const ENERGY_SOBEL5: i32 = 2;

/// `ENERGY_*` of the kernels; `None` for forward energy (no energy map).
fn energy_code(e: Energy) -> Option<i32> {
    match e {
        Energy::Basic => Some(ENERGY_BASIC),
        Energy::Sobel3 => Some(ENERGY_SOBEL3),
        Energy::Sobel5 => Some(ENERGY_SOBEL5),
        Energy::Forward => None,
    }
}

/// The two buffers of a pair as (current, other).
pub(crate) fn pair<T>(p: &mut [T; 2], cur: usize) -> (&mut T, &mut T) {
    let [a, b] = p;
    if cur == 0 { (a, b) } else { (b, a) }
}

pub(crate) fn alloc<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>> {
    stream
        .alloc_zeros::<T>(n.max(1))
        .map_err(|e| cuda_err(&format!("retarget: allocating {what}"), e))
}

/// The combined mask (the CPU's i8 codes, packed) on the device, as bytes.
pub(crate) fn upload_mask(
    st: &Arc<CudaStream>,
    mask: Option<Plane<i8>>,
) -> Result<Option<CudaSlice<u8>>> {
    let Some(m) = mask else { return Ok(None) };
    let bytes: Vec<u8> = m.into_packed_vec().into_iter().map(|v| v as u8).collect();
    let mut d = alloc::<u8>(st, bytes.len(), "the mask")?;
    st.memcpy_htod(&bytes, &mut d)
        .map_err(|e| cuda_err("retarget: uploading the mask", e))?;
    Ok(Some(d))
}

/// The kernels, for one pixel format. The launches that only exact mode
/// makes (removals, the energy band, the origin map) are in exact.rs.
pub(crate) struct Kernels {
    pub(crate) copy_img: CudaFunction,
    pub(crate) transpose_img: CudaFunction,
    remove_rows: CudaFunction,
    remove_cols: CudaFunction,
    insert: CudaFunction,
    /// RGBA to luma; `None` for gray, whose luma is a copy.
    luma_rgba: Option<CudaFunction>,
    pub(crate) copy_u8: CudaFunction,
    pub(crate) transpose_u8: CudaFunction,
    /// Fast mode's motion plane.
    pub(crate) transpose_u16: CudaFunction,
    energy_full: CudaFunction,
    energy_band: CudaFunction,
    origin_init: CudaFunction,
    pub(crate) seam: SeamDp,
    energy: Option<i32>,
    reach: i32,
}

impl Kernels {
    pub(crate) fn load(gpu: &Gpu, format: DevFormat, energy: Energy) -> Result<Kernels> {
        let f = |name: &str| gpu.function(FILE, name);
        let px = match format {
            DevFormat::Rgba => "u8x4",
            DevFormat::Gray => "u8",
        };
        Ok(Kernels {
            copy_img: f(&format!("copy_{px}"))?,
            transpose_img: f(&format!("transpose_{px}"))?,
            remove_rows: f(&format!("remove_rows_{px}"))?,
            remove_cols: f(&format!("remove_cols_{px}"))?,
            insert: f(&format!("insert_seams_{px}"))?,
            luma_rgba: match format {
                DevFormat::Rgba => Some(f("luma_u8x4")?),
                DevFormat::Gray => None,
            },
            copy_u8: f("copy_u8")?,
            transpose_u8: f("transpose_u8")?,
            transpose_u16: f("transpose_u16")?,
            energy_full: f("energy_full_u8")?,
            energy_band: f("energy_band_u8")?,
            origin_init: f("origin_init")?,
            seam: SeamDp::load(gpu, energy)?,
            energy: energy_code(energy),
            reach: energy.reach() as i32,
        })
    }

    /// dst = src, w×h elements of the kernel's type (`copy_img` or `copy_u8`).
    pub(crate) fn copy(
        &self,
        st: &Arc<CudaStream>,
        func: &CudaFunction,
        (src, src_pitch): (&CudaSlice<u8>, usize),
        (dst, dst_pitch): (&mut CudaSlice<u8>, usize),
        w: usize,
        h: usize,
    ) -> Result<()> {
        let (sp, dp, w32, h32) = (src_pitch as u32, dst_pitch as u32, w as u32, h as u32);
        let mut b = st.launch_builder(func);
        b.arg(src).arg(&sp).arg(dst).arg(&dp).arg(&w32).arg(&h32);
        // SAFETY: copy_* take (src, spitch, dst, dpitch, w, h); both buffers
        // hold h rows of their pitch in the kernel's element type.
        unsafe { launch(&mut b, per_pixel(w, h), "a copy") }
    }

    /// dst (h×w) = the transpose of src (w×h), `transpose_img`,
    /// `transpose_u8` or (`T` = u16) `transpose_u16`.
    pub(crate) fn transpose<T>(
        &self,
        st: &Arc<CudaStream>,
        func: &CudaFunction,
        (src, src_pitch): (&CudaSlice<T>, usize),
        (dst, dst_pitch): (&mut CudaSlice<T>, usize),
        w: usize,
        h: usize,
    ) -> Result<()> {
        let (sp, dp, w32, h32) = (src_pitch as u32, dst_pitch as u32, w as u32, h as u32);
        let mut b = st.launch_builder(func);
        b.arg(src).arg(&sp).arg(dst).arg(&dp).arg(&w32).arg(&h32);
        let cfg = LaunchConfig {
            grid_dim: (blocks(w, 32), blocks(h, 32), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: transpose_* take (src, spitch, dst, dpitch, w, h); src
        // holds h rows of its pitch, dst w rows of its pitch (≥ h).
        unsafe { launch(&mut b, cfg, "a transpose") }
    }

    /// The luma of the image (pitch `pitch`) into `luma` (same pitch).
    pub(crate) fn luma(
        &self,
        st: &Arc<CudaStream>,
        img: &CudaSlice<u8>,
        luma: &mut CudaSlice<u8>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let Some(func) = &self.luma_rgba else {
            return self.copy(st, &self.copy_u8, (img, pitch), (luma, pitch), w, h);
        };
        let (kr, kg, kb) = Matrix::Bt709.weights();
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let mut b = st.launch_builder(func);
        b.arg(img).arg(luma).arg(&w32).arg(&h32).arg(&p32);
        b.arg(&kr).arg(&kg).arg(&kb);
        // SAFETY: luma_u8x4 takes (img, luma, w, h, pitch, kr, kg, kb); img
        // holds h rows of `pitch` RGBA pixels, luma h rows of `pitch` bytes.
        unsafe { launch(&mut b, per_pixel(w, h), "luma") }
    }

    /// The whole energy map of a luma plane.
    pub(crate) fn energy_full(
        &self,
        st: &Arc<CudaStream>,
        luma: &CudaSlice<u8>,
        energy: &mut CudaSlice<u32>,
        dims: (usize, usize, usize),
    ) -> Result<()> {
        self.energy_of(st, luma, energy, dims, self.energy.unwrap_or(0))
    }

    /// The whole `sobel3` energy map of a luma plane, whatever the op's kind.
    pub(crate) fn sobel3_map(
        &self,
        st: &Arc<CudaStream>,
        luma: &CudaSlice<u8>,
        energy: &mut CudaSlice<u32>,
        dims: (usize, usize, usize),
    ) -> Result<()> {
        let kind = energy_code(Energy::Sobel3).unwrap_or(1);
        self.energy_of(st, luma, energy, dims, kind)
    }

    fn energy_of(
        &self,
        st: &Arc<CudaStream>,
        luma: &CudaSlice<u8>,
        energy: &mut CudaSlice<u32>,
        (w, h, pitch): (usize, usize, usize),
        kind: i32,
    ) -> Result<()> {
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let mut b = st.launch_builder(&self.energy_full);
        b.arg(luma)
            .arg(energy)
            .arg(&w32)
            .arg(&h32)
            .arg(&p32)
            .arg(&kind);
        // SAFETY: energy_full_u8 takes (luma, energy, w, h, pitch, kind);
        // both planes hold h rows of `pitch` elements.
        unsafe { launch(&mut b, per_pixel(w, h), "the energy map") }
    }

    /// The image (and mask) w wide with a new pixel after every chosen one.
    pub(crate) fn insert(
        &self,
        st: &Arc<CudaStream>,
        img: (&CudaSlice<u8>, &mut CudaSlice<u8>),
        mask: Option<(&CudaSlice<u8>, &mut CudaSlice<u8>)>,
        chosen: &CudaSlice<u8>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let (w32, p32) = (w as u32, pitch as u32);
        let (msrc, mdst) = mask.unzip();
        let mut b = st.launch_builder(&self.insert);
        b.arg(img.0).arg(img.1).opt(msrc).opt_mut(mdst);
        b.arg(chosen).arg(&w32).arg(&p32);
        // SAFETY: insert_seams_* take (src, dst, msrc?, mdst?, chosen, w,
        // pitch), one block for each of the h rows; every plane holds h rows
        // of `pitch`, and w plus the chosen pixels of a row fit the pitch.
        unsafe { launch(&mut b, per_row(h, 256), "the seam insertion") }
    }
}

/// A prepared mode: exact ([`exact::State`]) or fast
/// ([`fast::State`]).
pub(crate) trait Carve: Send {
    /// What it was prepared for: (w, h, format) in, (tw, th) out.
    fn shape(&self) -> ((usize, usize, DevFormat), (usize, usize));
    /// One frame: `input` in, `output` (the target size) out.
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()>;
}

/// The GPU half of [`Retarget`], exact or fast.
pub struct GpuRetarget {
    /// The CPU half's settings, as it was built.
    pub(crate) settings: RetargetSettings,
}

/// [`GpuRetarget`] set up for one input size and format: either mode's state.
struct Ready(Box<dyn Carve>);

impl GpuRetarget {
    pub fn new(op: &Retarget) -> Self {
        GpuRetarget {
            settings: op.settings.clone(),
        }
    }
}

impl GpuOp for GpuRetarget {
    fn name(&self) -> &'static str {
        "retarget"
    }

    fn output(&self, w: usize, h: usize, format: DevFormat) -> Result<(usize, usize, DevFormat)> {
        let (tw, th) = self.settings.target(w, h)?;
        Ok((tw, th, format))
    }

    fn kernel_files(&self, gpu: &Gpu) -> Vec<String> {
        let energy = self.settings.energy;
        let mut files = vec![FILE.to_string(), dp::file_for(gpu, energy)];
        if energy == Energy::Forward && gpu.arch().0 >= 9 {
            files.push(dp::COARSE_FILE.to_string());
        }
        if self.settings.fast_mode().is_some() {
            files.push(fast::FILE.to_string());
        }
        files
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let state: Box<dyn Carve> = match self.settings.fast_mode() {
            Some(&params) => Box::new(fast::State::new(gpu, self, params, (w, h), format)?),
            None => Box::new(exact::State::new(gpu, self, (w, h), format)?),
        };
        Ok(Box::new(Ready(state)))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let s = &mut self.0;
        let ((w, h, format), (tw, th)) = s.shape();
        check_frames("retarget", (w, h, format), (tw, th, format), input, output)?;
        s.carve(gpu, input, output)
    }
}
