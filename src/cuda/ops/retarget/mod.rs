//! GPU `retarget` (kernels/retarget.cu): the op, [`GpuRetarget`], for both
//! modes, and exact mode's state: seam carving whose every seam is the
//! CPU's (fast mode's state is in `retarget_fast.rs`, on the same DP). `src/ops/retarget.rs` defines the rules; this
//! file follows its control flow step for step (greedy order while both
//! sides shrink, then the width, then the height on the transposed frame;
//! enlarging in rounds of at most half the width).
//!
//! The frame is copied once into a working buffer with a fixed row pitch
//! and stays on the device, with its luma, energy, mask, back-pointers and
//! seams. A seam is four launches: the DP's packing of each pixel's costs,
//! the DP's sweep ([`SeamDp`]: warps on 8 SMs advance overlapping windows
//! 16 (or 32) rows between barriers, then one block takes the argmin and
//! walks back), the removal (one block a row, in place) and the energy update in
//! the band the removal disturbed. The host reads back only the two
//! candidate costs of each greedy step (it has to choose a side). Every
//! buffer is allocated in `prepare`.

mod fast;

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg, sys,
};

use crate::cuda::{DevFormat, DevFrame, Gpu, GpuOp, blocks, check_frames, cuda_err};
use crate::error::{Error, Result};
use crate::frame::Plane;
use crate::ops::gray::Matrix;
use crate::ops::params::SizeSpec;
use crate::ops::retarget::fast::FastParams;
use crate::ops::retarget::{
    CarveOptions, Energy, MASK_PROTECT, MASK_REMOVE, Mode, OUTSIDE, PROTECT_COST, REMOVE_BONUS,
    Retarget, combine_masks, target_size,
};

const FILE: &str = "retarget.cu";
/// Every how many rows the DP keeps a jump table (`anchors`), ANCHOR_ROWS
/// of kernels/retarget.cu.
pub(crate) const ANCHOR_ROWS: usize = 32;
/// The longest side (input or target) the DP can sweep: DP_MAX_CHUNKS
/// anchor rows of kernels/retarget.cu (and u16 columns).
pub(crate) const MAX_SIDE: usize = 16384;
/// DP_PAD and DP_OWN of the kernels: the wide window shape's halo and
/// owned columns (and the cost plane's padding).
const DP_PAD: usize = 32;
const DP_OWN: usize = 64;
/// Shared memory of one warp's prefetch ring in the wide shape: DP_DEPTH
/// rows of 32 lanes' 16 bytes.
const DP_RING_BYTES: usize = 16 * 32 * 16;
/// Whether clusters sweep in the narrow window shape (`DpShape<2>` of the
/// kernels: 32 owned columns a window, 2 a lane, bands of 16 rows; the
/// `seam_dp_cluster2_*` kernels): twice the warps of the wide shape, so
/// that at 1080p two share each scheduler and hide each other's latency.
/// False: the wide shape (`seam_dp_cluster_*`), as the one block always.
const DP_NARROW: bool = true;
/// A window shape (`DpShape<LC>` of the kernels): columns a lane; owned
/// columns, halo, band rows and ring bytes follow.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Shape {
    lc: usize,
}
impl Shape {
    const WIDE: Shape = Shape { lc: 4 };
    const NARROW: Shape = Shape { lc: 2 };
    fn own(self) -> usize {
        16 * self.lc
    }
    #[cfg(test)]
    fn halo(self) -> usize {
        8 * self.lc
    }
    #[cfg(test)]
    fn band(self) -> usize {
        8 * self.lc
    }
    fn ring_bytes(self) -> usize {
        DP_RING_BYTES / 4 * self.lc
    }
}
const _: () = assert!(DP_OWN == 64 && DP_PAD == 32 && ANCHOR_ROWS == 32);
/// DP_CLUSTER, DP_MAX_WARPS_CLUSTER and DP_MAX_WARPS_BLOCK of the kernels.
const DP_CLUSTER: usize = 8;
const DP_MAX_WARPS_CLUSTER: usize = 8;
const DP_MAX_WARPS_BLOCK: usize = 16;
/// Static shared memory of the sweep, kept out of the dynamic budget.
const DP_STATIC_SHARED: usize = 2048;
/// OUT32 of the kernels: "outside" for the 32-bit sweep.
const OUT32: i64 = 1 << 30;

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

/// The row pitch (elements) of the DP's packed plane for width `w`: column
/// x at x + DP_PAD, and room for the last window's right halo.
pub(crate) fn cost_pitch(w: usize) -> usize {
    w.div_ceil(DP_OWN) * DP_OWN + 2 * DP_PAD
}

/// The most any one row adds to a seam's cost without a mask: the largest
/// energy of the kind (181·510 + 128·255 for basic, 8·√2·2040 for sobel3,
/// 8·√2·24480 for sobel5) or, for forward energy, a step (255 + 255).
pub(crate) fn row_cost_bound(e: Energy) -> i64 {
    match e {
        Energy::Basic => 1 << 17,
        Energy::Sobel3 => 1 << 15,
        Energy::Sobel5 => 1 << 19,
        Energy::Forward => 1 << 9,
    }
}

/// `ENERGY_*` of the kernels; `None` for forward energy (no energy map).
fn energy_code(e: Energy) -> Option<i32> {
    match e {
        Energy::Basic => Some(0),
        Energy::Sobel3 => Some(1),
        Energy::Sobel5 => Some(2),
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

/// The kernels, for one pixel format.
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

    /// dst (h×w) = the transpose of src (w×h), `transpose_img` or `transpose_u8`.
    pub(crate) fn transpose(
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

    /// The energy in the band around `seam`, just removed (the plane is now
    /// `w` wide).
    fn energy_band(
        &self,
        st: &Arc<CudaStream>,
        luma: &CudaSlice<u8>,
        energy: &mut CudaSlice<u32>,
        seam: &CudaSlice<u32>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let kind = self.energy.unwrap_or(0);
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let mut b = st.launch_builder(&self.energy_band);
        b.arg(luma)
            .arg(energy)
            .arg(seam)
            .arg(&w32)
            .arg(&h32)
            .arg(&p32);
        b.arg(&kind).arg(&self.reach);
        let cfg = LaunchConfig {
            grid_dim: (blocks(h, 8), 1, 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: energy_band_u8 takes (luma, energy, seam, w, h, pitch,
        // kind, reach); the planes hold h rows of `pitch`, the seam h columns.
        unsafe { launch(&mut b, cfg, "the energy band") }
    }

    /// Removes `seam` (a column per row) from each plane given, in place.
    #[allow(clippy::too_many_arguments)]
    fn remove_rows(
        &self,
        st: &Arc<CudaStream>,
        img: Option<&mut CudaSlice<u8>>,
        luma: &mut CudaSlice<u8>,
        mask: Option<&mut CudaSlice<u8>>,
        energy: Option<&mut CudaSlice<u32>>,
        origin: Option<(&mut CudaSlice<u32>, &mut CudaSlice<u8>)>,
        seam: &CudaSlice<u32>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let (w32, p32) = (w as u32, pitch as u32);
        let (origin, chosen) = origin.unzip();
        let mut b = st.launch_builder(&self.remove_rows);
        b.opt_mut(img).arg(luma).opt_mut(mask).opt_mut(energy);
        b.opt_mut(origin)
            .opt_mut(chosen)
            .arg(seam)
            .arg(&w32)
            .arg(&p32);
        // SAFETY: remove_rows_* take (img?, luma, mask?, energy?, origin?,
        // chosen?, seam, w, pitch), one block for each of the h rows; every
        // plane holds h rows of `pitch` and the seam h columns below w.
        unsafe { launch(&mut b, per_row(h, 256), "a seam removal") }
    }

    /// Removes the horizontal `seam` (a row per column) of the image, luma
    /// and mask into their other buffers.
    fn remove_cols(
        &self,
        st: &Arc<CudaStream>,
        img: (&CudaSlice<u8>, &mut CudaSlice<u8>),
        luma: (&CudaSlice<u8>, &mut CudaSlice<u8>),
        mask: Option<(&CudaSlice<u8>, &mut CudaSlice<u8>)>,
        seam: &CudaSlice<u32>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let (msrc, mdst) = mask.unzip();
        let mut b = st.launch_builder(&self.remove_cols);
        b.arg(img.0).arg(img.1).arg(luma.0).arg(luma.1);
        b.opt(msrc)
            .opt_mut(mdst)
            .arg(seam)
            .arg(&w32)
            .arg(&h32)
            .arg(&p32);
        // SAFETY: remove_cols_* take (isrc, idst, lsrc, ldst, msrc?, mdst?,
        // seam, w, h, pitch); every plane holds h rows of `pitch`, the seam
        // w rows below h.
        unsafe { launch(&mut b, per_pixel(w, h), "a horizontal seam removal") }
    }

    /// Each pixel's own column into `origin`, and `chosen` cleared.
    fn origin_init(
        &self,
        st: &Arc<CudaStream>,
        origin: &mut CudaSlice<u32>,
        chosen: &mut CudaSlice<u8>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let mut b = st.launch_builder(&self.origin_init);
        b.arg(origin).arg(chosen).arg(&w32).arg(&h32).arg(&p32);
        // SAFETY: origin_init takes (origin, chosen, w, h, pitch); both hold
        // h rows of `pitch`.
        unsafe { launch(&mut b, per_pixel(w, h), "the origin map") }
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

/// The DP's kernels for one energy: `dp_prep` and the sweeps with 32-bit
/// and with 64-bit sums.
pub(crate) struct SeamDp {
    prep: CudaFunction,
    sweep32: CudaFunction,
    sweep64: CudaFunction,
    /// Whether the sweeps run as a cluster of DP_CLUSTER blocks (else as
    /// one block).
    cluster: bool,
    /// Their window shape.
    shape: Shape,
    /// The most warps a block of the sweep may have.
    max_warps: usize,
    forward: bool,
    row_bound: i64,
}

impl SeamDp {
    pub(crate) fn load(gpu: &Gpu, energy: Energy) -> Result<SeamDp> {
        SeamDp::load_with(gpu, energy, true, DP_NARROW)
    }

    /// With `clusters` false, the one-block sweeps even where clusters run,
    /// and clusters in the narrow window shape or not (so that tests check
    /// every sweep).
    fn load_with(gpu: &Gpu, energy: Energy, clusters: bool, narrow: bool) -> Result<SeamDp> {
        let forward = energy == Energy::Forward;
        let kind = if forward { "forward" } else { "energy" };
        let optin = gpu
            .ctx()
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .map_err(|e| cuda_err("retarget: reading the shared memory limit", e))?;
        let shared_limit = (optin.max(0) as usize).saturating_sub(DP_STATIC_SHARED);
        let sweeps = |name: &str, shape: Shape, warps: usize| {
            let load = |bits: &str| -> Result<CudaFunction> {
                let func = gpu.function(FILE, &format!("seam_dp_{name}_{bits}_{kind}"))?;
                func.set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    (warps * shape.ring_bytes()) as i32,
                )
                .map_err(|e| cuda_err("retarget: raising the DP's shared memory", e))?;
                Ok(func)
            };
            Result::Ok((load("i32")?, load("i64")?))
        };
        // Clusters (Hopper on) where a whole one of the widest blocks fits.
        let mut cluster = None;
        let (name, shape) = if narrow {
            ("cluster2", Shape::NARROW)
        } else {
            ("cluster", Shape::WIDE)
        };
        if clusters
            && gpu.arch().0 >= 9
            && DP_MAX_WARPS_CLUSTER * shape.ring_bytes() <= shared_limit
        {
            let (s32, s64) = sweeps(name, shape, DP_MAX_WARPS_CLUSTER)?;
            let widest = sweep_config(DP_CLUSTER, DP_MAX_WARPS_CLUSTER, shape);
            let fits = |f: &CudaFunction| {
                f.occupancy_max_active_clusters(widest, gpu.stream())
                    .is_ok_and(|n| n >= 1)
            };
            if fits(&s32) && fits(&s64) {
                cluster = Some((s32, s64));
            }
        }
        let (cluster, shape, max_warps, (sweep32, sweep64)) = match cluster {
            Some(s) => (true, shape, DP_MAX_WARPS_CLUSTER, s),
            None => {
                let warps = (shared_limit / DP_RING_BYTES).min(DP_MAX_WARPS_BLOCK);
                if warps == 0 {
                    return Err(Error::Unsupported(format!(
                        "retarget on the GPU needs {DP_RING_BYTES} bytes of shared memory a block; this GPU gives {shared_limit}"
                    )));
                }
                let sweeps = sweeps("block", Shape::WIDE, warps)?;
                (false, Shape::WIDE, warps, sweeps)
            }
        };
        Ok(SeamDp {
            prep: gpu.function(FILE, "dp_prep")?,
            sweep32,
            sweep64,
            cluster,
            shape,
            max_warps,
            forward,
            row_bound: row_cost_bound(energy),
        })
    }

    /// The best seam of a w×h plane (energy for every kind but forward,
    /// mask if any, luma for forward; all at row pitch `pitch`) into `seam`
    /// (a column per row, top to bottom) and its cost into
    /// `scratch.costs[total]`. Also leaves in `scratch.back` the step of
    /// every pixel's best path to the next row, in `scratch.anchors` where
    /// it is ANCHOR_ROWS rows down (kernels/retarget.cu, `dp_sweep`, says
    /// exactly) and, when `top` is given, the top row's cumulative costs in
    /// `top[..w]`. Two launches; allocates nothing.
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn dp(
        &self,
        st: &Arc<CudaStream>,
        planes: (
            Option<&CudaSlice<u32>>,
            Option<&CudaSlice<u8>>,
            &CudaSlice<u8>,
        ),
        (w, h, pitch): (usize, usize, usize),
        scratch: &mut DpScratch,
        seam: &mut CudaSlice<u32>,
        total: usize,
        top: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        self.prep(st, planes, (w, h, pitch), scratch)?;
        let masked = planes.1.is_some();
        self.sweep(st, masked, 0, (w, h, pitch), scratch, seam, total, top)
    }

    /// The DP's first launch: each pixel's packed costs into
    /// `scratch.cost` (rows of `cost_pitch(w)`, column x at x + DP_PAD),
    /// which a caller may add to before [`SeamDp::sweep`].
    pub(crate) fn prep(
        &self,
        st: &Arc<CudaStream>,
        planes: (
            Option<&CudaSlice<u32>>,
            Option<&CudaSlice<u8>>,
            &CudaSlice<u8>,
        ),
        (w, h, pitch): (usize, usize, usize),
        scratch: &mut DpScratch,
    ) -> Result<()> {
        let (energy, mask, luma) = planes;
        let cpitch = cost_pitch(w);
        let fits = (1..=MAX_SIDE).contains(&w)
            && (1..=MAX_SIDE).contains(&h)
            && w <= pitch
            && h * pitch <= scratch.back.len()
            && h * cpitch <= scratch.cost.len()
            && (self.forward || energy.is_some());
        if !fits {
            return Err(Error::Device(format!(
                "retarget: the DP was given a {w}x{h} plane (pitch {pitch}) it has no room for"
            )));
        }
        let (w32, h32, p32, c32) = (w as u32, h as u32, pitch as u32, cpitch as u32);
        let forward = i32::from(self.forward);
        let mut b = st.launch_builder(&self.prep);
        b.opt(energy).opt(mask).arg(luma).arg(&mut scratch.cost);
        b.arg(&w32).arg(&h32).arg(&p32).arg(&c32).arg(&forward);
        // SAFETY: dp_prep takes (energy?, mask?, luma, cost, w, h, pitch,
        // cpitch, forward); the planes hold h rows of `pitch` (energy is
        // given unless forward), `cost` h rows of `cpitch` ≥ w + DP_PAD
        // (checked above).
        unsafe { launch(&mut b, per_pixel(w, h), "the DP's costs") }
    }

    /// The DP's sweep over the packed costs [`SeamDp::prep`] left (with
    /// `extra` more per row than the kind's bound where a caller added to
    /// them; `masked` when a mask went in).
    #[allow(clippy::too_many_arguments)]
    pub(crate) fn sweep(
        &self,
        st: &Arc<CudaStream>,
        masked: bool,
        extra: i64,
        (w, h, pitch): (usize, usize, usize),
        scratch: &mut DpScratch,
        seam: &mut CudaSlice<u32>,
        total: usize,
        top: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        let cpitch = cost_pitch(w);
        let fits = (1..=MAX_SIDE).contains(&w)
            && (1..=MAX_SIDE).contains(&h)
            && w <= pitch
            && h * pitch <= scratch.back.len()
            && h.div_ceil(ANCHOR_ROWS) * pitch <= scratch.anchors.len()
            && h * cpitch <= scratch.cost.len()
            && 3 * w <= scratch.rows.len()
            && total < scratch.costs.len()
            && h <= seam.len()
            && top.as_ref().is_none_or(|t| w <= t.len());
        if !fits {
            return Err(Error::Device(format!(
                "retarget: the DP was given a {w}x{h} plane (pitch {pitch}) it has no room for"
            )));
        }
        let (w32, h32, p32, c32) = (w as u32, h as u32, pitch as u32, cpitch as u32);
        // 32-bit sums where none can reach OUT32 (see dp_sweep).
        let narrow = !masked && (h as i64) * (self.row_bound + extra) < OUT32;
        let func = if narrow { &self.sweep32 } else { &self.sweep64 };
        let windows = w.div_ceil(self.shape.own());
        let cfg = if self.cluster {
            let warps = windows.div_ceil(DP_CLUSTER).clamp(1, DP_MAX_WARPS_CLUSTER);
            sweep_config(DP_CLUSTER, warps, self.shape)
        } else {
            sweep_config(1, windows.clamp(1, self.max_warps), self.shape)
        };
        let DpScratch {
            back,
            anchors,
            cost,
            rows,
            costs,
        } = scratch;
        let mut total = costs.slice_mut(total..total + 1);
        let mut b = st.launch_builder(func);
        b.arg(&*cost).arg(&w32).arg(&h32).arg(&p32).arg(&c32);
        b.arg(&PROTECT_COST).arg(&REMOVE_BONUS).arg(&OUTSIDE);
        b.arg(back).arg(anchors).arg(seam).arg(&mut total);
        b.opt_mut(top).arg(rows);
        // SAFETY: seam_dp_* take (cost, w, h, pitch, cpitch, protect,
        // bonus, outside, back, anchors, seam, total, top?, xrows); checked
        // above: 1 ≤ w, h ≤ MAX_SIDE, `cost` holds h rows of `cpitch` as
        // dp_prep wrote them, `back` h rows of `pitch`, `anchors`
        // ⌈h/32⌉ ≥ ⌈(h−1)/32⌉ rows of `pitch`, `seam` h entries, `top` (if
        // any) w, `xrows` 3·w i64; the 32-bit sweep only without a mask; the
        // block and cluster sizes and the shared bytes are those the kernels
        // were built and their attributes set for.
        unsafe { launch(&mut b, cfg, "the seam DP") }
    }
}

/// `grid` blocks of `warps` warps, each with its warps' prefetch rings for
/// windows of `shape`.
fn sweep_config(grid: usize, warps: usize, shape: Shape) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (grid as u32, 1, 1),
        block_dim: (32 * warps as u32, 1, 1),
        shared_mem_bytes: (warps * shape.ring_bytes()) as u32,
    }
}

/// What the DP writes besides the seam, and its scratch.
pub(crate) struct DpScratch {
    /// back[y·pitch + x]: the step (−1, 0, +1) from (x, y) to row y + 1.
    pub(crate) back: CudaSlice<i8>,
    /// anchors[c·pitch + x]: the column at row min(32(c + 1), h − 1)
    /// reached from (x, 32c).
    pub(crate) anchors: CudaSlice<u16>,
    /// Each pixel's packed costs (dp_prep), rows of `cost_pitch(w)`.
    pub(crate) cost: CudaSlice<u32>,
    /// The two rows of sums that cross the sweep's barriers, and a row of
    /// jumps (3·w).
    rows: CudaSlice<i64>,
    /// Seam costs: the DP writes the slot it is given.
    pub(crate) costs: CudaSlice<i64>,
}

impl DpScratch {
    /// Room for planes of every `(pitch, height)` in `shapes` (a plane's
    /// width is at most its pitch), and `slots` seam costs.
    pub(crate) fn new(
        st: &Arc<CudaStream>,
        shapes: &[(usize, usize)],
        slots: usize,
    ) -> Result<DpScratch> {
        let most = |f: &dyn Fn(usize, usize) -> usize| {
            shapes.iter().map(|&(p, h)| f(p, h)).max().unwrap_or(0)
        };
        Ok(DpScratch {
            back: alloc(st, most(&|p, h| p * h), "the DP steps")?,
            anchors: alloc(
                st,
                most(&|p, h| h.div_ceil(ANCHOR_ROWS) * p),
                "the DP jumps",
            )?,
            cost: alloc(st, most(&|p, h| cost_pitch(p) * h), "the DP costs")?,
            rows: alloc(st, most(&|p, _| 3 * p), "the DP rows")?,
            costs: alloc(st, slots, "the seam costs")?,
        })
    }
}

/// Everything `run` needs, built by `prepare` for one input size and format.
struct State {
    k: Kernels,
    width: usize,
    height: usize,
    format: DevFormat,
    target: (usize, usize),
    /// Row pitches (elements) of the frame as it is and transposed.
    pitch: usize,
    pitch_t: usize,
    /// The frame, and the buffer it moves to (insertions, transposes,
    /// horizontal removals); `cur` says which holds it.
    img: [CudaSlice<u8>; 2],
    cur: usize,
    /// Luma of the frame, and a second luma plane (transposed luma for the
    /// greedy order's horizontal candidate, the target of a horizontal removal).
    luma: CudaSlice<u8>,
    luma_t: CudaSlice<u8>,
    /// The combined mask as uploaded, the working pair (switching with
    /// `img`), and a scratch plane (the carver's copy when enlarging, the
    /// transposed mask in the greedy order).
    mask_src: Option<CudaSlice<u8>>,
    mask: Option<[CudaSlice<u8>; 2]>,
    mask_t: Option<CudaSlice<u8>>,
    energy: Option<CudaSlice<u32>>,
    /// Enlarging: each pixel's original column, and the columns chosen
    /// (a single cell when the frame only shrinks).
    origin: CudaSlice<u32>,
    chosen: CudaSlice<u8>,
    dp: DpScratch,
    /// The vertical and the horizontal seam.
    seams: [CudaSlice<u32>; 2],
}

impl State {
    fn new(
        gpu: &Gpu,
        op: &GpuRetarget,
        (w, h): (usize, usize),
        format: DevFormat,
    ) -> Result<State> {
        let (tw, th) = op.target(w, h)?;
        let (pitch, pitch_t) = (w.max(tw), h.max(th));
        let side = pitch.max(pitch_t);
        if side > MAX_SIDE {
            return Err(Error::Unsupported(format!(
                "retarget on the GPU takes sides up to {MAX_SIDE} pixels, not {w}x{h} to {tw}x{th}; use --device cpu"
            )));
        }
        let opts = CarveOptions {
            energy: op.energy,
            protect: op.protect.as_ref(),
            remove: op.remove.as_ref(),
        };
        let mask = combine_masks(w, h, &opts)?;
        let k = Kernels::load(gpu, format, op.energy)?;
        let st = gpu.stream();
        // The frame's planes are `pitch` wide and up to `h` tall, the
        // transposed ones `pitch_t` wide and up to `pitch` tall.
        let cap = pitch * pitch_t;
        let greedy = tw < w && th < h;
        let enlarge = tw > w || th > h;
        let bpp = format.bytes_per_pixel();
        let mask_src = upload_mask(st, mask)?;
        let has_mask = mask_src.is_some();
        Ok(State {
            width: w,
            height: h,
            format,
            target: (tw, th),
            pitch,
            pitch_t,
            img: [
                alloc(st, cap * bpp, "the frame")?,
                alloc(st, cap * bpp, "the frame")?,
            ],
            cur: 0,
            luma: alloc(st, cap, "the luma")?,
            luma_t: alloc(st, if greedy { cap } else { 1 }, "the luma")?,
            mask_src,
            mask: if has_mask {
                Some([alloc(st, cap, "the mask")?, alloc(st, cap, "the mask")?])
            } else {
                None
            },
            mask_t: has_mask.then(|| alloc(st, cap, "the mask")).transpose()?,
            energy: k
                .energy
                .is_some()
                .then(|| alloc(st, cap, "the energy"))
                .transpose()?,
            origin: alloc(st, if enlarge { cap } else { 1 }, "the origins")?,
            chosen: alloc(st, if enlarge { cap } else { 1 }, "the chosen columns")?,
            dp: DpScratch::new(st, &[(pitch, pitch_t), (pitch_t, pitch)], 2)?,
            seams: [alloc(st, side, "a seam")?, alloc(st, side, "a seam")?],
            k,
        })
    }

    /// The whole frame: `input` in, `output` (the target size) out.
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let st = gpu.stream().clone();
        let (w0, h0, pitch) = (self.width, self.height, self.pitch);
        let (tw, th) = self.target;
        self.cur = 0;
        let k = &self.k;
        k.copy(
            &st,
            &k.copy_img,
            (&input.data, w0),
            (&mut self.img[0], pitch),
            w0,
            h0,
        )?;
        k.luma(&st, &self.img[0], &mut self.luma, (w0, h0, pitch))?;
        if let (Some(src), Some(m)) = (&self.mask_src, &mut self.mask) {
            k.copy(&st, &k.copy_u8, (src, w0), (&mut m[0], pitch), w0, h0)?;
        }
        let (mut w, mut h) = (w0, h0);
        while w > tw && h > th {
            if self.greedy_step(gpu, w, h)? {
                w -= 1;
            } else {
                h -= 1;
            }
        }
        self.carve_width(&st, pitch, &mut w, h, tw)?;
        let k = &self.k;
        if h == th {
            let img = &self.img[self.cur];
            return k.copy(
                &st,
                &k.copy_img,
                (img, pitch),
                (&mut output.data, tw),
                tw,
                h,
            );
        }
        // The height on the transposed frame: h wide, tw tall.
        let pitch_t = self.pitch_t;
        let (a, b) = pair(&mut self.img, self.cur);
        k.transpose(&st, &k.transpose_img, (&*a, pitch), (b, pitch_t), tw, h)?;
        if let Some(m) = &mut self.mask {
            let (a, b) = pair(m, self.cur);
            k.transpose(&st, &k.transpose_u8, (&*a, pitch), (b, pitch_t), tw, h)?;
        }
        self.cur ^= 1;
        k.luma(&st, &self.img[self.cur], &mut self.luma, (h, tw, pitch_t))?;
        let mut side = h;
        self.carve_width(&st, pitch_t, &mut side, tw, th)?;
        let k = &self.k;
        let img = &self.img[self.cur];
        k.transpose(
            &st,
            &k.transpose_img,
            (img, pitch_t),
            (&mut output.data, tw),
            th,
            tw,
        )
    }

    /// One step of the greedy order on the frame (w×h, both above their
    /// targets): removes the cheaper of the best vertical and the best
    /// horizontal seam, the vertical on a tie. Returns whether it was the
    /// vertical. Each side's energy is computed afresh, as the CPU does.
    fn greedy_step(&mut self, gpu: &Gpu, w: usize, h: usize) -> Result<bool> {
        let st = gpu.stream().clone();
        let (pitch, pitch_t) = (self.pitch, self.pitch_t);
        let k = &self.k;
        let cur = self.cur;
        let mask = self.mask.as_mut().map(|m| pair(m, cur));
        let [seam_v, seam_h] = &mut self.seams;
        if let Some(e) = &mut self.energy {
            k.energy_full(&st, &self.luma, e, (w, h, pitch))?;
        }
        let m = mask.as_ref().map(|(a, _)| &**a);
        let planes = (self.energy.as_ref(), m, &self.luma);
        k.seam
            .dp(&st, planes, (w, h, pitch), &mut self.dp, seam_v, 0, None)?;

        k.transpose(
            &st,
            &k.transpose_u8,
            (&self.luma, pitch),
            (&mut self.luma_t, pitch_t),
            w,
            h,
        )?;
        if let (Some((m, _)), Some(mt)) = (&mask, &mut self.mask_t) {
            k.transpose(&st, &k.transpose_u8, (&**m, pitch), (mt, pitch_t), w, h)?;
        }
        if let Some(e) = &mut self.energy {
            k.energy_full(&st, &self.luma_t, e, (h, w, pitch_t))?;
        }
        let planes = (self.energy.as_ref(), self.mask_t.as_ref(), &self.luma_t);
        k.seam
            .dp(&st, planes, (h, w, pitch_t), &mut self.dp, seam_h, 1, None)?;

        let mut costs = [0i64; 2];
        st.memcpy_dtoh(&self.dp.costs, &mut costs)
            .map_err(|e| cuda_err("retarget: reading the seam costs", e))?;
        gpu.sync()?;
        if costs[0] <= costs[1] {
            let img = &mut self.img[cur];
            let m = mask.map(|(a, _)| a);
            k.remove_rows(
                &st,
                Some(img),
                &mut self.luma,
                m,
                None,
                None,
                seam_v,
                (w, h, pitch),
            )?;
            return Ok(true);
        }
        let (a, b) = pair(&mut self.img, cur);
        let m = mask.map(|(a, b)| (&*a, b));
        let luma = (&self.luma, &mut self.luma_t);
        k.remove_cols(&st, (&*a, b), luma, m, seam_h, (w, h, pitch))?;
        std::mem::swap(&mut self.luma, &mut self.luma_t);
        self.cur ^= 1;
        Ok(false)
    }

    /// Carves the frame (w×h at `pitch`, its luma current) to `target`
    /// wide, as `carve_width` on the CPU; leaves the luma current.
    fn carve_width(
        &mut self,
        st: &Arc<CudaStream>,
        pitch: usize,
        w: &mut usize,
        h: usize,
        target: usize,
    ) -> Result<()> {
        let k = &self.k;
        if target < *w {
            if let Some(e) = &mut self.energy {
                k.energy_full(st, &self.luma, e, (*w, h, pitch))?;
            }
            while *w > target {
                self.remove_one(st, pitch, *w, h, false)?;
                *w -= 1;
            }
            return Ok(());
        }
        while *w < target {
            let round = (target - *w).min((*w / 2).max(1));
            let k = &self.k;
            if let (Some(m), Some(mt)) = (&self.mask, &mut self.mask_t) {
                k.copy(st, &k.copy_u8, (&m[self.cur], pitch), (mt, pitch), *w, h)?;
            }
            k.origin_init(st, &mut self.origin, &mut self.chosen, (*w, h, pitch))?;
            if let Some(e) = &mut self.energy {
                k.energy_full(st, &self.luma, e, (*w, h, pitch))?;
            }
            for cw in (*w - round + 1..=*w).rev() {
                self.remove_one(st, pitch, cw, h, true)?;
            }
            let k = &self.k;
            let (src, dst) = pair(&mut self.img, self.cur);
            let src = &*src;
            let mask = self.mask.as_mut().map(|m| {
                let (a, b) = pair(m, self.cur);
                (&*a, b)
            });
            k.insert(st, (src, dst), mask, &self.chosen, (*w, h, pitch))?;
            self.cur ^= 1;
            *w += round;
            k.luma(st, &self.img[self.cur], &mut self.luma, (*w, h, pitch))?;
        }
        Ok(())
    }

    /// Finds the best vertical seam of the w×h frame (its energy current)
    /// and removes it, bringing the energy up to date in the band. When
    /// `enlarging`, the carver works on the luma and the mask copy only,
    /// and marks the seam's original columns instead of moving the frame.
    fn remove_one(
        &mut self,
        st: &Arc<CudaStream>,
        pitch: usize,
        w: usize,
        h: usize,
        enlarging: bool,
    ) -> Result<()> {
        let k = &self.k;
        let seam = &mut self.seams[0];
        let mask = if enlarging {
            self.mask_t.as_mut()
        } else {
            self.mask.as_mut().map(|m| &mut m[self.cur])
        };
        let planes = (self.energy.as_ref(), mask.as_deref(), &self.luma);
        k.seam
            .dp(st, planes, (w, h, pitch), &mut self.dp, seam, 0, None)?;
        let (img, origin) = if enlarging {
            (None, Some((&mut self.origin, &mut self.chosen)))
        } else {
            (Some(&mut self.img[self.cur]), None)
        };
        let energy = self.energy.as_mut();
        k.remove_rows(
            st,
            img,
            &mut self.luma,
            mask,
            energy,
            origin,
            seam,
            (w, h, pitch),
        )?;
        if let Some(e) = &mut self.energy {
            k.energy_band(st, &self.luma, e, seam, (w - 1, h, pitch))?;
        }
        Ok(())
    }
}

/// A prepared mode: exact ([`State`]) or fast
/// ([`fast::State`]).
pub(crate) trait Carve: Send {
    /// What it was prepared for: (w, h, format) in, (tw, th) out.
    fn shape(&self) -> ((usize, usize, DevFormat), (usize, usize));
    /// One frame: `input` in, `output` (the target size) out.
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()>;
}

impl Carve for State {
    fn shape(&self) -> ((usize, usize, DevFormat), (usize, usize)) {
        ((self.width, self.height, self.format), self.target)
    }
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        State::carve(self, gpu, input, output)
    }
}

/// The GPU half of [`Retarget`], exact or fast.
pub struct GpuRetarget {
    pub(crate) width: Option<SizeSpec>,
    pub(crate) height: Option<SizeSpec>,
    pub(crate) energy: Energy,
    /// Fast mode's parameters; `None` in exact mode.
    pub(crate) fast: Option<FastParams>,
    pub(crate) protect: Option<Plane<u8>>,
    pub(crate) remove: Option<Plane<u8>>,
    state: Option<Box<dyn Carve>>,
}

impl GpuRetarget {
    pub fn new(op: &Retarget) -> Self {
        GpuRetarget {
            width: op.width,
            height: op.height,
            energy: op.energy,
            fast: (op.mode == Some(Mode::Fast)).then_some(op.fast),
            protect: op.protect.clone(),
            remove: op.remove.clone(),
            state: None,
        }
    }

    /// The target size for a w×h input, as `Retarget::output_size`.
    pub(crate) fn target(&self, w: usize, h: usize) -> Result<(usize, usize)> {
        target_size(self.width, self.height, w, h)
    }
}

impl GpuOp for GpuRetarget {
    fn name(&self) -> &'static str {
        "retarget"
    }

    fn output(&self, w: usize, h: usize, format: DevFormat) -> Result<(usize, usize, DevFormat)> {
        let (tw, th) = self.target(w, h)?;
        Ok((tw, th, format))
    }

    fn prepare(&mut self, gpu: &Gpu, w: usize, h: usize, format: DevFormat) -> Result<()> {
        self.state = None;
        self.state = Some(match self.fast {
            Some(params) => Box::new(fast::State::new(gpu, self, params, (w, h), format)?),
            None => Box::new(State::new(gpu, self, (w, h), format)?),
        });
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let s = self
            .state
            .as_mut()
            .ok_or_else(|| Error::Device("retarget: run before prepare".into()))?;
        let ((w, h, format), (tw, th)) = s.shape();
        check_frames("retarget", (w, h, format), (tw, th, format), input, output)?;
        s.carve(gpu, input, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::retarget::dp::{DpInput, DpScratch as CpuDp, dp_sweep};

    /// A plane's inputs to the DP (energy zero for forward).
    struct Input {
        w: usize,
        h: usize,
        forward: bool,
        energy: Plane<u32>,
        mask: Option<Plane<i8>>,
        luma: Plane<u8>,
    }

    /// What the DP gives: steps ((h − 1)·w), jumps (⌈(h−1)/32⌉·w), the
    /// top row's sums, the seam and its cost.
    #[derive(Debug, PartialEq)]
    struct Dp {
        back: Vec<i8>,
        anchors: Vec<u16>,
        top: Vec<i64>,
        seam: Vec<usize>,
        total: i64,
    }

    fn rng(seed: u64) -> impl FnMut() -> u32 {
        let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
        move || {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x >> 32) as u32
        }
    }

    /// Values below `levels` (few levels: many ties); `mask`: none, all
    /// zero, or random codes (a fifth protected, a fifth to remove).
    /// Energies of `levels` 0 (1) fall to the right (left), so that every
    /// path drifts a column a row, as far as a band lets it.
    fn input(w: usize, h: usize, forward: bool, levels: u32, mask: u8, seed: u64) -> Input {
        let mut r = rng(seed);
        let luma = Plane::from_fn(w, h, |_, _| (r() % levels.clamp(2, 256)) as u8);
        let energy = Plane::from_fn(w, h, |x, _| match (forward, levels) {
            (true, _) => 0,
            (false, 0) => 7 * (w - x) as u32,
            (false, 1) => 7 * x as u32,
            _ => r() % levels,
        });
        let mask = match mask {
            0 => None,
            1 => Some(Plane::from_fn(w, h, |_, _| 0i8)),
            _ => Some(Plane::from_fn(w, h, |_, _| match r() % 5 {
                0 => MASK_PROTECT,
                1 => MASK_REMOVE,
                _ => 0,
            })),
        };
        Input {
            w,
            h,
            forward,
            energy,
            mask,
            luma,
        }
    }

    /// dp_prep's packed word of every pixel (row-major, w a row).
    fn words(i: &Input) -> Vec<u32> {
        let (w, h) = (i.w, i.h);
        let mut out = Vec::with_capacity(w * h);
        for y in 0..h {
            for x in 0..w {
                let m = match i.mask.as_ref().map_or(0, |m| m.get(x, y)) {
                    MASK_PROTECT => 1 << 30,
                    MASK_REMOVE => 2 << 30,
                    _ => 0,
                };
                let v = if i.forward {
                    let l = i.luma.get(x.saturating_sub(1), y) as i32;
                    let r = i.luma.get((x + 1).min(w - 1), y) as i32;
                    let up = (r - l).unsigned_abs();
                    let (mut ul, mut ur) = (up, up);
                    if y + 1 < h {
                        let d = i.luma.get(x, y + 1) as i32;
                        ul += (d - l).unsigned_abs();
                        ur += (d - r).unsigned_abs();
                    }
                    up | ul << 10 | ur << 20
                } else {
                    i.energy.get(x, y)
                };
                out.push(m | v);
            }
        }
        out
    }

    /// dp_unpack: (pixel cost, centre, left and right steps).
    fn unpack(word: u32, forward: bool) -> (i64, i64, i64, i64) {
        let field = |k: u32| ((word >> (10 * k)) & 0x3FF) as i64;
        let (pc, up, ul, ur) = if forward {
            (0, field(0), field(1), field(2))
        } else {
            ((word & 0x3FFF_FFFF) as i64, 0, 0, 0)
        };
        let m = match word >> 30 {
            1 => PROTECT_COST,
            2 => -REMOVE_BONUS,
            _ => 0,
        };
        (pc + m, up, ul, ur)
    }

    /// The least of `top`, ties to the smallest column.
    fn argmin(top: &[i64]) -> (usize, i64) {
        top.iter().enumerate().fold(
            (0, i64::MAX),
            |(bx, bv), (x, &v)| if v < bv { (x, v) } else { (bx, bv) },
        )
    }

    /// Row after row over whole rows, as the CPU's min3_row; the jumps by
    /// walking the steps.
    fn reference(i: &Input) -> Dp {
        let (w, h) = (i.w, i.h);
        let words = words(i);
        let mut below = vec![OUTSIDE; w + 2];
        for x in 0..w {
            let (pc, up, _, _) = unpack(words[(h - 1) * w + x], i.forward);
            below[x + 1] = pc + up;
        }
        let mut back = vec![0i8; (h - 1) * w];
        for y in (0..h - 1).rev() {
            let mut here = vec![OUTSIDE; w + 2];
            for x in 0..w {
                let (pc, up, ul, ur) = unpack(words[y * w + x], i.forward);
                let (c, l, r) = (below[x + 1] + up, below[x] + ul, below[x + 2] + ur);
                let take_l = l < c;
                let best = if take_l { l } else { c };
                let take_r = r < best;
                here[x + 1] = if take_r { r } else { best } + pc;
                back[y * w + x] = if take_r { 1 } else { -(take_l as i8) };
            }
            below = here;
        }
        let top = below[1..=w].to_vec();
        let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
        let mut anchors = vec![0u16; chunks * w];
        for c in 0..chunks {
            for x0 in 0..w {
                let mut x = x0;
                for y in c * ANCHOR_ROWS..((c + 1) * ANCHOR_ROWS).min(h - 1) {
                    x = (x as isize + back[y * w + x] as isize) as usize;
                }
                anchors[c * w + x0] = x as u16;
            }
        }
        let (mut x, total) = argmin(&top);
        let mut seam = vec![x];
        for y in 0..h - 1 {
            x = (x as isize + back[y * w + x] as isize) as usize;
            seam.push(x);
        }
        Dp {
            back,
            anchors,
            top,
            seam,
            total,
        }
    }

    /// The sweep's schedule (dp_sweep in kernels/retarget.cu) on the CPU:
    /// windows of 128 columns owning 64, bands of 32 rows, "outside" at a
    /// window's edges and beyond the frame, jumps restarting each band,
    /// only owned columns crossing a band, 32-bit sums when `narrow`, and
    /// the tail's walk. Words beyond the frame are junk, as on the device.
    fn model(i: &Input, narrow: bool, shape: Shape) -> Dp {
        let (own, halo, lc) = (shape.own(), shape.halo(), shape.lc);
        // The columns a window computes.
        let win = own + 2 * halo;
        let (w, h) = (i.w, i.h);
        let words = words(i);
        let mut junk = rng(99);
        let word = |x: isize, y: usize, junk: &mut dyn FnMut() -> u32| {
            if (0..w as isize).contains(&x) {
                let v = words[y * w + x as usize];
                // The 32-bit sweep reads no mask (the host gives it none).
                if narrow { v & 0x3FFF_FFFF } else { v }
            } else {
                junk() & if narrow { 0x3FFF_FFFF } else { !0 }
            }
        };
        let out = if narrow { OUT32 } else { OUTSIDE };
        let windows = w.div_ceil(own);
        let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
        let bands = (h - 1).div_ceil(shape.band());
        const UNSET: i64 = i64::MIN;
        let (mut xin, mut xout) = (vec![UNSET; w], vec![UNSET; w]);
        let mut jumps: Vec<Option<isize>> = vec![None; w];
        let mut back = vec![None; (h - 1) * w];
        let mut anchors = vec![None; chunks * w];
        let owned = move |g: usize| (g * own..(g + 1) * own).filter(move |&x| x < w);
        for g in 0..windows {
            for x in owned(g) {
                let (pc, up, _, _) = unpack(word(x as isize, h - 1, &mut junk), i.forward);
                xin[x] = pc + up;
            }
        }
        for c in (0..bands).rev() {
            let (y0, y1) = (shape.band() * c, (shape.band() * (c + 1)).min(h - 1));
            // The band's jumps restart at an anchor row, else carry on
            // from the band below's; its top row's are anchors at an
            // anchor row, else cross the barrier (never both: one buffer).
            let restart = y1 % ANCHOR_ROWS == 0 || y1 == h - 1;
            let anchored = y0 % ANCHOR_ROWS == 0;
            assert!(restart || anchored, "a band reads and writes the jumps");
            for g in 0..windows {
                let x0 = (g * own) as isize - halo as isize;
                let col = |k: usize| x0 + k as isize;
                let inside = |k: usize| (0..w as isize).contains(&col(k));
                let mut b: Vec<i64> = (0..win)
                    .map(|k| {
                        if inside(k) {
                            assert_ne!(xin[col(k) as usize], UNSET, "read before written");
                            xin[col(k) as usize]
                        } else {
                            out
                        }
                    })
                    .collect();
                let mut jm: Vec<isize> = (0..win)
                    .map(|k| {
                        if !restart && inside(k) {
                            jumps[col(k) as usize].expect("a jump read before written")
                        } else {
                            0
                        }
                    })
                    .collect();
                for k in 0..y1 - y0 {
                    let y = y1 - 1 - k;
                    let (mut nb, mut nj) = (vec![0i64; win], vec![0isize; win]);
                    for q in 0..win {
                        let (pc, up, ul, ur) = unpack(word(col(q), y, &mut junk), i.forward);
                        // The shuffles do not wrap: lane 0 (31) reads its
                        // own last (first) column as its left (right).
                        let left = if q == 0 { b[lc - 1] } else { b[q - 1] };
                        let right = if q == win - 1 { b[win - lc] } else { b[q + 1] };
                        let (cc, l, r) = (b[q] + up, left + ul, right + ur);
                        let take_l = l < cc;
                        let best = if take_l { l } else { cc };
                        let take_r = r < best;
                        let best = if take_r { r } else { best };
                        nb[q] = if inside(q) { best + pc } else { out };
                        if narrow {
                            assert!(i32::try_from(nb[q]).is_ok(), "a 32-bit sum overflows");
                        }
                        let step = if take_r { 1 } else { -(take_l as isize) };
                        let jl = if q == 0 { jm[lc - 1] } else { jm[q - 1] };
                        let jr = if q == win - 1 {
                            jm[win - lc]
                        } else {
                            jm[q + 1]
                        };
                        nj[q] = match (k == 0 && restart, step) {
                            (true, _) => col(q) + step,
                            (_, 1) => jr,
                            (_, -1) => jl,
                            _ => jm[q],
                        };
                        if (halo..halo + own).contains(&q) && inside(q) {
                            let cell = &mut back[y * w + col(q) as usize];
                            assert!(cell.is_none(), "a step written twice");
                            *cell = Some(step as i8);
                        }
                    }
                    (b, jm) = (nb, nj);
                }
                for x in owned(g) {
                    let q = (x as isize - x0) as usize;
                    xout[x] = b[q];
                    if anchored {
                        anchors[y0 / ANCHOR_ROWS * w + x] = Some(jm[q] as u16);
                    } else {
                        jumps[x] = Some(jm[q]);
                    }
                }
            }
            std::mem::swap(&mut xin, &mut xout);
        }
        let top = xin;
        let (col, total) = argmin(&top);
        let back: Vec<i8> = back
            .into_iter()
            .map(|s| s.expect("a step not written"))
            .collect();
        let anchors: Vec<u16> = anchors
            .into_iter()
            .map(|a| a.expect("a jump not written"))
            .collect();
        let mut seam = vec![0; h];
        seam[0] = col;
        let mut x = col;
        for c in 0..chunks {
            let mut s = x;
            for y in c * ANCHOR_ROWS..((c + 1) * ANCHOR_ROWS).min(h - 1) {
                s = (s as isize + back[y * w + s] as isize) as usize;
                seam[y + 1] = s;
            }
            x = anchors[c * w + x] as usize;
            assert_eq!(x, s, "a jump disagrees with the steps");
        }
        Dp {
            back,
            anchors,
            top,
            seam,
            total,
        }
    }

    /// The CPU's own DP on the same input: its top row and its seam.
    fn cpu(i: &Input) -> (Vec<i64>, Vec<usize>) {
        let energy = if i.forward {
            Plane::from_fn(i.w, i.h, |_, _| 0u32)
        } else {
            i.energy.clone()
        };
        let input = DpInput {
            energy: &energy,
            mask: i.mask.as_ref(),
            forward_luma: i.forward.then_some(&i.luma),
        };
        let mut s = CpuDp::default();
        dp_sweep(&input, &mut s);
        let top = s.top().to_vec();
        let mut seam = Vec::new();
        s.trace(argmin(&top).0, i.h, |_, x| seam.push(x));
        (top, seam)
    }

    const SHAPES: &[(usize, usize)] = &[
        (1, 1),
        (1, 40),
        (40, 1),
        (2, 2),
        (3, 33),
        (31, 34),
        (64, 65),
        (65, 66),
        (97, 31),
        (128, 97),
        (129, 64),
        (200, 100),
        (257, 45),
    ];

    /// Exact: the sweep's windows, bands and jumps give every step, jump,
    /// top-row sum and seam of the plain row-by-row DP, whose top row and
    /// seam are the CPU's; with 32- and 64-bit sums alike.
    #[test]
    fn the_sweeps_schedule_reproduces_the_row_by_row_dp() {
        for (n, &(w, h)) in SHAPES.iter().enumerate() {
            for forward in [true, false] {
                for (levels, mask) in [
                    (3, 0),
                    (256, 0),
                    (4, 1),
                    (3, 2),
                    (200, 2),
                    (0, 0),
                    (1, 0),
                    (1, 1),
                ] {
                    let i = input(w, h, forward, levels, mask, 7 * n as u64 + levels as u64);
                    let what = format!("{w}x{h} forward={forward} levels={levels} mask={mask}");
                    let want = reference(&i);
                    let (top, seam) = cpu(&i);
                    assert_eq!((&want.top, &want.seam), (&top, &seam), "reference, {what}");
                    for shape in [Shape::WIDE, Shape::NARROW] {
                        assert_eq!(model(&i, false, shape), want, "64-bit {shape:?}, {what}");
                        if mask == 0 {
                            assert_eq!(model(&i, true, shape), want, "32-bit {shape:?}, {what}");
                        }
                    }
                }
            }
        }
    }

    /// Exact: the energy-only DP is the CPU's `vertical_seam`.
    #[test]
    fn the_sweeps_schedule_finds_the_cpus_vertical_seam() {
        for (n, &(w, h)) in SHAPES.iter().enumerate() {
            for levels in [0, 1, 5] {
                let i = input(w, h, false, levels, 0, n as u64);
                let (seam, total) = crate::ops::retarget::vertical_seam(&i.energy);
                for shape in [Shape::WIDE, Shape::NARROW] {
                    let got = model(&i, true, shape);
                    assert_eq!((&got.seam, got.total), (&seam, total), "{w}x{h} {shape:?}");
                }
            }
        }
    }

    /// The bounds that allow 32-bit sums hold for every energy's largest
    /// value (and the packed word's 24 bits).
    #[test]
    fn energies_stay_below_their_row_bound() {
        use crate::ops::retarget::energy_map;
        // Patterns of 0 and 255 that maximise each gradient: lone dots
        // (basic), an edge and a diagonal edge (Sobel), a checkerboard.
        let pattern = |f: fn(usize, usize) -> bool| {
            Plane::from_fn(12, 12, move |x, y| if f(x, y) { 255u8 } else { 0 })
        };
        let planes = [
            pattern(|x, y| x % 2 == 0 && y % 2 == 0),
            pattern(|x, _| x < 6),
            pattern(|x, y| x + y < 12),
            pattern(|x, y| (x + y) % 2 == 0),
        ];
        for e in [Energy::Basic, Energy::Sobel3, Energy::Sobel5] {
            for l in &planes {
                let most = energy_map(l, e).as_slice().iter().copied().max().unwrap();
                assert!((most as i64) < row_cost_bound(e), "{e:?}: {most}");
            }
        }
        assert!(row_cost_bound(Energy::Sobel5) < 1 << 24);
        assert!(255 + 255 < row_cost_bound(Energy::Forward));
    }

    /// A plane at row pitch `pitch` on the device.
    fn upload<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits + Copy + Default>(
        st: &Arc<CudaStream>,
        p: &Plane<T>,
        pitch: usize,
    ) -> CudaSlice<T> {
        let mut host = vec![T::default(); pitch * p.height()];
        for y in 0..p.height() {
            host[y * pitch..y * pitch + p.width()].copy_from_slice(p.row(y));
        }
        let mut d = st.alloc_zeros::<T>(host.len()).unwrap();
        st.memcpy_htod(&host, &mut d).unwrap();
        d
    }

    /// Exact, on the GPU (skipped without one): `SeamDp::dp` writes every
    /// step, jump and top-row sum and the seam and cost of the row-by-row
    /// DP, in clusters of either window shape and in one block, with 32-
    /// and 64-bit sums, from one window to the widest plane and at pitches
    /// of every alignment.
    #[test]
    fn the_gpu_dp_writes_what_the_cpu_dp_finds() {
        let Ok(gpu) = Gpu::open(0) else {
            eprintln!("SKIP: no GPU");
            return;
        };
        let st = gpu.stream().clone();
        let shapes: &[(usize, usize)] = &[
            (1, 1),
            (1, 40),
            (40, 1),
            (2, 2),
            (5, 33),
            (65, 34),
            (130, 65),
            (513, 40),
            (1300, 70),
            (4200, 35),
            (MAX_SIDE, 3),
            (3, 2000),
            (700, 1100),
        ];
        for energy in [Energy::Forward, Energy::Basic] {
            let forward = energy == Energy::Forward;
            for (clusters, narrow) in [(true, true), (true, false), (false, false)] {
                let dp = SeamDp::load_with(&gpu, energy, clusters, narrow).unwrap();
                for (n, &(w, h)) in shapes.iter().enumerate() {
                    for (levels, mask) in [(3, 0), (256, 0), (256, 1), (3, 2), (0, 0), (1, 1)] {
                        let i = input(w, h, forward, levels, mask, n as u64 * 5 + mask as u64);
                        let what = format!(
                            "{w}x{h} {energy:?} clusters={clusters} narrow={narrow} levels={levels} mask={mask}"
                        );
                        let pitch = w + n % 4;
                        let mut scratch = DpScratch::new(&st, &[(pitch, h)], 2).unwrap();
                        let e = upload(&st, &i.energy, pitch);
                        let m = i.mask.as_ref().map(|m| {
                            upload(&st, &Plane::from_fn(w, h, |x, y| m.get(x, y) as u8), pitch)
                        });
                        let l = upload(&st, &i.luma, pitch);
                        let mut seam = st.alloc_zeros::<u32>(h).unwrap();
                        let mut top = st.alloc_zeros::<i64>(w).unwrap();
                        let planes = ((!forward).then_some(&e), m.as_ref(), &l);
                        dp.dp(
                            &st,
                            planes,
                            (w, h, pitch),
                            &mut scratch,
                            &mut seam,
                            1,
                            Some(&mut top),
                        )
                        .unwrap();
                        let back = st.clone_dtoh(&scratch.back).unwrap();
                        let anchors = st.clone_dtoh(&scratch.anchors).unwrap();
                        let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
                        let got = Dp {
                            back: (0..(h - 1) * w)
                                .map(|k| back[k / w * pitch + k % w])
                                .collect(),
                            anchors: (0..chunks * w)
                                .map(|k| anchors[k / w * pitch + k % w])
                                .collect(),
                            top: st.clone_dtoh(&top).unwrap(),
                            seam: st
                                .clone_dtoh(&seam)
                                .unwrap()
                                .iter()
                                .map(|&x| x as usize)
                                .collect(),
                            total: st.clone_dtoh(&scratch.costs).unwrap()[1],
                        };
                        assert_eq!(got, reference(&i), "{what}");
                    }
                }
            }
        }
    }

    /// Words of one block's record in the profiled sweeps (DP_PROF_* of
    /// kernels/retarget.cu).
    const PROF_HEADER: usize = 16;
    const PROF_BAND: usize = 8;
    const PROF_SLOT: usize = PROF_HEADER + PROF_BAND * (MAX_SIDE / ANCHOR_ROWS);
    const PROF_START: usize = 0;
    const PROF_START_CLK: usize = 1;
    const PROF_SWEPT_FROM: usize = 2;
    const PROF_SWEPT: usize = 3;
    const PROF_ARGMIN: usize = 4;
    const PROF_ANCHORS: usize = 5;
    const PROF_END_CLK: usize = 6;
    const PROF_END: usize = 7;
    const PROF_BANDS: usize = 8;
    const PROF_WINDOWS: usize = 9;
    /// DP_GROUP of the kernels: the rows a warp fetches and sweeps at a
    /// time (the record's "first group" is a window's first DP_GROUP rows).
    const PROF_GROUP: usize = 4;

    /// Launches the profiled sweep `name` (`seam_dp_{cluster|block}_*_profile`)
    /// over the packed costs in `scratch`, as [`SeamDp::sweep`] launches
    /// the plain one (`warps` a block, windows of `shape`), its record into
    /// `prof`.
    #[allow(clippy::too_many_arguments)]
    fn sweep_profiled(
        gpu: &Gpu,
        name: &str,
        cluster: bool,
        shape: Shape,
        warps: usize,
        (w, h, pitch): (usize, usize, usize),
        scratch: &mut DpScratch,
        seam: &mut CudaSlice<u32>,
        prof: &mut CudaSlice<u64>,
    ) {
        let func = gpu.function(FILE, name).unwrap();
        func.set_attribute(
            sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
            (warps * shape.ring_bytes()) as i32,
        )
        .unwrap();
        let cfg = sweep_config(if cluster { DP_CLUSTER } else { 1 }, warps, shape);
        let (w32, h32, p32, c32) = (w as u32, h as u32, pitch as u32, cost_pitch(w) as u32);
        let st = gpu.stream();
        let mut total = scratch.costs.slice_mut(1..2);
        let mut b = st.launch_builder(&func);
        b.arg(&scratch.cost).arg(&w32).arg(&h32).arg(&p32).arg(&c32);
        b.arg(&PROTECT_COST).arg(&REMOVE_BONUS).arg(&OUTSIDE);
        b.arg(&mut scratch.back).arg(&mut scratch.anchors).arg(seam);
        b.arg(&mut total).opt_mut(None::<&mut CudaSlice<i64>>);
        b.arg(&mut scratch.rows).arg(prof);
        // SAFETY: the profiled sweeps take the plain ones' arguments (see
        // SeamDp::sweep, whose checks the caller's shapes pass) and then
        // `prof`, which holds the two records of PROF_SLOT words they write.
        unsafe { launch(&mut b, cfg, name) }.unwrap();
    }

    /// Prints one block's record: where the sweep's time goes (bands of
    /// `band` rows).
    fn print_profile(what: &str, r: &[u64], h: usize, band: usize) {
        let ns = |a: usize, b: usize| r[b].wrapping_sub(r[a]) as f64;
        let total = ns(PROF_START, PROF_END);
        let ghz = r[PROF_END_CLK].wrapping_sub(r[PROF_START_CLK]) as f64 / total;
        let (nb, nwin) = (r[PROF_BANDS] as usize, r[PROF_WINDOWS] as usize);
        println!(
            "  {what}: {:.1} us in all at {ghz:.2} GHz, {nb} bands, {nwin} window(s) a warp; bottom row + first barrier {:.2} us; sweep {:.1} us",
            total / 1e3,
            ns(PROF_START, PROF_SWEPT_FROM) / 1e3,
            ns(PROF_SWEPT_FROM, PROF_SWEPT) / 1e3,
        );
        if nb == 0 || ghz <= 0.0 {
            return;
        }
        let mut sum = [0f64; 7];
        let (mut rows_all, mut firsts_all) = (0usize, 0usize);
        println!(
            "    band rows | compute  fence  barrier (ns) | cycles a row: wait  first-group  row  fetch"
        );
        for c in (0..nb.min(MAX_SIDE / ANCHOR_ROWS)).rev() {
            let b = &r[PROF_HEADER + PROF_BAND * c..][..PROF_BAND];
            let rows = (band * c + band).min(h - 1) - band * c;
            let n = (rows * nwin) as f64;
            let firsts = (rows.min(PROF_GROUP) * nwin) as f64;
            let d = |i: usize, j: usize| b[j].wrapping_sub(b[i]) as f64;
            let v = [
                d(0, 1),
                d(1, 2),
                d(2, 3),
                b[4] as f64,
                b[5] as f64,
                b[6] as f64,
                b[7] as f64,
            ];
            for (s, x) in sum.iter_mut().zip(v) {
                *s += x;
            }
            rows_all += rows * nwin;
            firsts_all += rows.min(PROF_GROUP) * nwin;
            if c >= nb - 2 || c < 2 || c % 8 == 0 {
                println!(
                    "    {c:4} {rows:4} | {:7.0} {:6.0} {:8.0} | {:14.1} {:10.0} {:5.1} {:12.1}",
                    v[0],
                    v[1],
                    v[2],
                    v[3] / n,
                    v[4] / firsts,
                    v[5] / (n - firsts).max(1.0),
                    v[6] / n,
                );
            }
        }
        let n = rows_all as f64;
        let firsts = firsts_all as f64;
        println!(
            "    mean a band: compute {:.0} ns, fence {:.0} ns, barrier {:.0} ns; a row ({n} rows): {:.1} ns in all, cycles: wait {:.1}, row with its store {:.1} (in a window's first group {:.0}), fetch {:.1}",
            sum[0] / nb as f64,
            sum[1] / nb as f64,
            sum[2] / nb as f64,
            sum[0] / n,
            sum[3] / n,
            sum[5] / (n - firsts).max(1.0),
            sum[4] / firsts,
            sum[6] / n,
        );
        println!(
            "    in all: compute {:.1} us (of which rows {:.1} us), fence {:.1} us, barrier {:.1} us",
            sum[0] / 1e3,
            (sum[3] + sum[4] + sum[5] + sum[6]) / ghz / 1e3,
            sum[1] / 1e3,
            sum[2] / 1e3,
        );
        if r[PROF_ARGMIN] != 0 {
            println!(
                "    tail: argmin {:.2} us, anchors {:.2} us, walk {:.2} us",
                ns(PROF_SWEPT, PROF_ARGMIN) / 1e3,
                ns(PROF_ARGMIN, PROF_ANCHORS) / 1e3,
                ns(PROF_ANCHORS, PROF_END) / 1e3,
            );
        }
    }

    /// Not a check but a measurement, on the GPU, run by hand
    /// (`profile_the_dp_on_the_gpu --ignored --nocapture`): the exact DP at
    /// 1920×1080 with forward energy and no mask. Prints the median of 50
    /// runs (CUDA graphs of 8, events) of the packing, the sweeps with
    /// 32- and 64-bit sums, in a cluster and in one block, and then the
    /// profiled sweeps' record of where the time goes (warp 0 of the first
    /// and of the last block: each band's compute, release fence and barrier
    /// wait, and cycles a row waiting for the ring, computing, storing and
    /// refilling; then the argmin, anchors and walk). Every sweep's seam
    /// must be the CPU's.
    #[test]
    #[ignore]
    fn profile_the_dp_on_the_gpu() {
        let Ok(gpu) = Gpu::open(0) else {
            eprintln!("SKIP: no GPU");
            return;
        };
        let st = gpu.stream().clone();
        let (w, h, pitch) = (1920, 1080, 1920);
        let i = input(w, h, true, 256, 0, 11);
        let cpu = reference(&i);
        let l = upload(&st, &i.luma, pitch);
        let mut scratch = DpScratch::new(&st, &[(pitch, h)], 2).unwrap();
        let mut seam = st.alloc_zeros::<u32>(h).unwrap();
        let median = |t: Vec<f64>| t[t.len() / 2];
        let seam_is_the_cpus = |seam: &CudaSlice<u32>, what: &str| {
            let got: Vec<usize> = st
                .clone_dtoh(seam)
                .unwrap()
                .iter()
                .map(|&x| x as usize)
                .collect();
            assert_eq!(got, cpu.seam, "{what}: the seam");
        };
        println!("DP at {w}x{h}, forward energy, no mask (us, median of 50):");
        let mut block_warps = 0;
        for (clusters, narrow) in [(true, true), (true, false), (false, false)] {
            let dp = SeamDp::load_with(&gpu, Energy::Forward, clusters, narrow).unwrap();
            if !dp.cluster {
                block_warps = dp.max_warps;
            }
            let planes = (None, None, &l);
            let prep = median(
                crate::bench::time_gpu(&gpu, 3, 50, |_| {
                    dp.prep(&st, planes, (w, h, pitch), &mut scratch)
                })
                .unwrap(),
            );
            let both = median(
                crate::bench::time_gpu(&gpu, 3, 50, |_| {
                    dp.dp(&st, planes, (w, h, pitch), &mut scratch, &mut seam, 1, None)
                })
                .unwrap(),
            );
            let mut sweeps = [0.0; 2];
            for (wide, t) in [false, true].into_iter().zip(&mut sweeps) {
                dp.prep(&st, planes, (w, h, pitch), &mut scratch).unwrap();
                *t = median(
                    crate::bench::time_gpu(&gpu, 3, 50, |_| {
                        dp.sweep(
                            &st,
                            wide,
                            0,
                            (w, h, pitch),
                            &mut scratch,
                            &mut seam,
                            1,
                            None,
                        )
                    })
                    .unwrap(),
                );
                let what = format!("clusters={} {:?} wide={wide}", dp.cluster, dp.shape);
                seam_is_the_cpus(&seam, &what);
            }
            println!(
                "  {}: prep {prep:.1}, prep + sweep {both:.1}, sweep i32 {:.1}, sweep i64 {:.1}",
                match (dp.cluster, dp.shape == Shape::NARROW) {
                    (true, true) => "cluster of 8, narrow windows",
                    (true, false) => "cluster of 8, wide windows",
                    _ => "one block",
                },
                sweeps[0],
                sweeps[1],
            );
        }

        // The profiled sweeps (after the packing they sweep).
        SeamDp::load(&gpu, Energy::Forward)
            .unwrap()
            .prep(&st, (None, None, &l), (w, h, pitch), &mut scratch)
            .unwrap();
        let mut prof = st.alloc_zeros::<u64>(2 * PROF_SLOT).unwrap();
        let wide = w.div_ceil(Shape::WIDE.own());
        let mut kernels = vec![(
            "seam_dp_block_i32_forward_profile".to_string(),
            false,
            Shape::WIDE,
            wide.clamp(1, block_warps.max(1)),
        )];
        if gpu.arch().0 >= 9 {
            for (bits, shape, name) in [
                ("i32", Shape::WIDE, "cluster"),
                ("i64", Shape::WIDE, "cluster"),
                ("i32", Shape::NARROW, "cluster2"),
                ("i64", Shape::NARROW, "cluster2"),
            ] {
                let windows = w.div_ceil(shape.own());
                let warps = windows.div_ceil(DP_CLUSTER).clamp(1, DP_MAX_WARPS_CLUSTER);
                let name = format!("seam_dp_{name}_{bits}_forward_profile");
                kernels.push((name, true, shape, warps));
            }
        }
        for (name, cluster, shape, warps) in kernels {
            let run = |scratch: &mut DpScratch, seam: &mut CudaSlice<u32>, prof: &mut _| {
                sweep_profiled(
                    &gpu,
                    &name,
                    cluster,
                    shape,
                    warps,
                    (w, h, pitch),
                    scratch,
                    seam,
                    prof,
                );
                Ok(())
            };
            let timed = median(
                crate::bench::time_gpu(&gpu, 3, 50, |_| run(&mut scratch, &mut seam, &mut prof))
                    .unwrap(),
            );
            st.memset_zeros(&mut prof).unwrap();
            run(&mut scratch, &mut seam, &mut prof).unwrap();
            let r = st.clone_dtoh(&prof).unwrap();
            seam_is_the_cpus(&seam, &name);
            println!("{name} ({warps} warps a block): {timed:.1} us (median of 50, profiled)");
            print_profile("first block", &r[..PROF_SLOT], h, shape.band());
            if cluster {
                print_profile("last block", &r[PROF_SLOT..], h, shape.band());
            }
        }
    }
}
