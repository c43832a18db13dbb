//! The seam DP on the GPU ([`SeamDp`]), which exact and fast mode both
//! sweep: the window shapes and limits of kernels/retarget.cu's `dp_prep`
//! and `seam_dp_*` kernels, their loading and launches, and what they write
//! besides the seam ([`DpScratch`]). Every seam is the CPU's
//! (src/ops/retarget/dp.rs): warps on 8 SMs advance overlapping windows 16
//! (or 32) rows between barriers, then one block takes the argmin and walks
//! back; tests.rs checks the schedule against the row-by-row DP. Forward
//! energy without a mask on Hopper takes the four-row DP instead
//! (kernels/retarget_coarse.cu: a quarter of the sequential steps, the
//! same outputs); SEAMSTREAM_DP_COARSE=0 turns it off, to compare (read in a build with
//! the `experiments` feature).

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg, sys};

use super::{FILE, PushOptional, alloc, launch, per_pixel};
use crate::error::{Error, Result};
use crate::{Gpu, cuda_err};
use seamstream_core::ops::retarget::{Energy, OUTSIDE, PROTECT_COST, REMOVE_BONUS};

/// Every how many rows the DP keeps a jump table (`anchors`), ANCHOR_ROWS
/// of kernels/retarget.cu.
pub(crate) const ANCHOR_ROWS: usize = 32;
/// The longest side (input or target) the DP can sweep: DP_MAX_CHUNKS
/// anchor rows of kernels/retarget.cu (and u16 columns).
pub(crate) const MAX_SIDE: usize = 16384;
/// DP_PAD and DP_OWN of the kernels: the wide window shape's halo and
/// owned columns (and the cost plane's padding).
pub(crate) const DP_PAD: usize = 32;
pub(crate) const DP_OWN: usize = 64;
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
pub(super) struct Shape {
    pub(super) lc: usize,
}
impl Shape {
    pub(super) const WIDE: Shape = Shape { lc: 4 };
    pub(super) const NARROW: Shape = Shape { lc: 2 };
    pub(super) fn own(self) -> usize {
        16 * self.lc
    }
    #[cfg(test)]
    pub(super) fn halo(self) -> usize {
        8 * self.lc
    }
    #[cfg(test)]
    pub(super) fn band(self) -> usize {
        8 * self.lc
    }
    pub(super) fn ring_bytes(self) -> usize {
        DP_RING_BYTES / 4 * self.lc
    }
}
const _: () = assert!(DP_OWN == 64 && DP_PAD == 32 && ANCHOR_ROWS == 32);
/// DP_CLUSTER, DP_MAX_WARPS_CLUSTER and DP_MAX_WARPS_BLOCK of the kernels.
pub(crate) const DP_CLUSTER: usize = 8;
pub(crate) const DP_MAX_WARPS_CLUSTER: usize = 8;
pub(crate) const DP_MAX_WARPS_BLOCK: usize = 16;
/// Static shared memory of the sweep, kept out of the dynamic budget.
const DP_STATIC_SHARED: usize = 2048;
/// OUT32 of the kernels: "outside" for the 32-bit sweep.
pub(crate) const OUT32: i64 = 1 << 30;
/// The four-row DP (kernels/retarget_coarse.cu): its file, the words of a
/// cell's taps (CO_WORDS), its sweep's cluster, halo and taps ring
/// (CO_CLUSTER, CO_HALO, CO_RING).
pub(super) const COARSE_FILE: &str = "retarget_coarse.cu";
pub(crate) const CO_WORDS: usize = 5;
pub(crate) const CO_CLUSTER: usize = 8;
pub(crate) const CO_HALO: usize = 32;
pub(crate) const CO_RING: usize = 8;
/// The columns of a taps block (CO_TILE), and a fill block's owned columns
/// and threads (CO_FILL_OWN, CO_FILL).
pub(crate) const CO_TILE: usize = 256;
pub(crate) const CO_FILL_OWN: usize = 256;
const CO_FILL: usize = CO_FILL_OWN + 2 * ANCHOR_ROWS;
/// The widest plane (8K UHD): a sweep block gives each column of its span
/// a thread, at most 1024 (wider planes take the row-by-row sweep).
const CO_MAX_WIDTH: usize = 7680;
const _: () = assert!((CO_MAX_WIDTH / CO_CLUSTER).next_multiple_of(4) + 2 * CO_HALO <= 1024);

/// The four-row DP's kernels.
struct Coarse {
    taps: CudaFunction,
    sweep: CudaFunction,
    fill: CudaFunction,
    walk: CudaFunction,
}

impl Coarse {
    /// Where clusters run (Hopper on) and a whole one fits.
    fn load(gpu: &Gpu) -> Result<Option<Coarse>> {
        if gpu.arch().0 < 9 {
            return Ok(None);
        }
        let f = |name: &str| gpu.function(COARSE_FILE, name);
        let walk = f("coarse_walk")?;
        let sweep = f("coarse_sweep")?;
        let widest = coarse_config(CO_MAX_WIDTH);
        sweep
            .set_attribute(
                sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                widest.shared_mem_bytes as i32,
            )
            .map_err(|e| cuda_err("retarget: raising the DP sweep's shared memory", e))?;
        if !sweep
            .occupancy_max_active_clusters(widest, gpu.stream())
            .is_ok_and(|n| n >= 1)
        {
            return Ok(None);
        }
        Ok(Some(Coarse {
            taps: f("coarse_taps")?,
            sweep,
            fill: f("coarse_fill")?,
            walk,
        }))
    }
}

/// The columns each block of the four-row sweep owns for width `w`: a
/// multiple of 4, at least the halo.
fn sweep_own(w: usize) -> usize {
    w.div_ceil(CO_CLUSTER).next_multiple_of(4).max(CO_HALO)
}

/// The four-row sweep's launch for width `w`: a thread a column of each
/// block's span (its owned columns and CO_HALO either side), and shared
/// memory for the taps ring and two rows of sums with their pads.
fn coarse_config(w: usize) -> LaunchConfig {
    let span = sweep_own(w) + 2 * CO_HALO;
    LaunchConfig {
        grid_dim: (CO_CLUSTER as u32, 1, 1),
        block_dim: (span.next_multiple_of(32) as u32, 1, 1),
        shared_mem_bytes: ((CO_RING * CO_WORDS * span + 2 * (span + 8)) * 4) as u32,
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

/// The DP's kernels for one energy: `dp_prep` and the sweeps with 32-bit
/// and with 64-bit sums.
pub(crate) struct SeamDp {
    prep: CudaFunction,
    sweep32: CudaFunction,
    sweep64: CudaFunction,
    /// Whether the sweeps run as a cluster of DP_CLUSTER blocks (else as
    /// one block).
    pub(super) cluster: bool,
    /// Their window shape.
    pub(super) shape: Shape,
    /// The most warps a block of the sweep may have.
    pub(super) max_warps: usize,
    forward: bool,
    row_bound: i64,
    /// The four-row DP, where it loads (forward energy on Hopper on): it
    /// takes every plane without a mask up to CO_MAX_WIDTH wide.
    coarse: Option<Coarse>,
}

/// The file of the sweeps [`SeamDp::load`] picks on `gpu` for `energy`:
/// the narrow cluster shape on Hopper on, else the one block. (Where a
/// cluster turns out not to fit, `load` takes the block's file too.)
pub(super) fn file_for(gpu: &Gpu, energy: Energy) -> String {
    let kind = if energy == Energy::Forward {
        "forward"
    } else {
        "energy"
    };
    let shape = match (gpu.arch().0 >= 9, DP_NARROW) {
        (true, true) => "cluster2",
        (true, false) => "cluster",
        (false, _) => "block",
    };
    format!("retarget_dp_{shape}_{kind}.cu")
}

impl SeamDp {
    pub(crate) fn load(gpu: &Gpu, energy: Energy) -> Result<SeamDp> {
        let coarse = !crate::switched_off("SEAMSTREAM_DP_COARSE");
        SeamDp::load_with(gpu, energy, true, DP_NARROW, coarse)
    }

    /// With `clusters` false, the one-block sweeps even where clusters run,
    /// clusters in the narrow window shape or not, and the four-row DP or
    /// not (so that tests check every sweep).
    pub(super) fn load_with(
        gpu: &Gpu,
        energy: Energy,
        clusters: bool,
        narrow: bool,
        coarse: bool,
    ) -> Result<SeamDp> {
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
                // Each shape and kind is a file of its own, so that a
                // first start compiles only the sweeps it launches.
                let file = format!("retarget_dp_{name}_{kind}.cu");
                let func = gpu.function(&file, &format!("seam_dp_{name}_{bits}_{kind}"))?;
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
            coarse: if coarse && clusters && forward {
                Coarse::load(gpu)?
            } else {
                None
            },
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
        if let Some(co) = &self.coarse
            && !masked
            && w <= CO_MAX_WIDTH
            && (h as i64) * self.row_bound < OUT32
        {
            return self.coarse(co, st, (w, h, pitch), scratch, seam, total, top);
        }
        self.sweep(st, masked, 0, (w, h, pitch), scratch, seam, total, top)
    }

    /// The four-row DP over the costs `prep` packed (forward energy, no
    /// mask, 32-bit sums): the same outputs as [`SeamDp::sweep`].
    #[allow(clippy::too_many_arguments)]
    fn coarse(
        &self,
        co: &Coarse,
        st: &Arc<CudaStream>,
        (w, h, pitch): (usize, usize, usize),
        scratch: &mut DpScratch,
        seam: &mut CudaSlice<u32>,
        total: usize,
        top: Option<&mut CudaSlice<i64>>,
    ) -> Result<()> {
        let cpitch = cost_pitch(w);
        let groups = (h - 1) / 4;
        let chunks = (h - 1).div_ceil(ANCHOR_ROWS);
        let fits = outputs_fit(scratch, (w, h, pitch), seam, total, top.as_deref())
            && (groups * CO_WORDS + 1) * cpitch <= scratch.taps.len()
            && ((h - 1) / ANCHOR_ROWS + 1) * pitch <= scratch.mrows.len()
            && h * pitch <= scratch.paths.len()
            && w <= scratch.rows.len()
            && h * cpitch <= scratch.cost.len();
        if !fits {
            return Err(no_room(w, h, pitch));
        }
        let (w32, h32, p32, c32, g32) = (
            w as u32,
            h as u32,
            pitch as u32,
            cpitch as u32,
            groups as u32,
        );
        let DpScratch {
            back,
            anchors,
            cost,
            rows,
            costs,
            taps,
            mrows,
            paths,
        } = scratch;
        let mut b = st.launch_builder(&co.taps);
        b.arg(&*cost)
            .arg(&mut *taps)
            .arg(&w32)
            .arg(&h32)
            .arg(&c32)
            .arg(&g32);
        b.arg(&mut *rows).arg(&mut *mrows).arg(&p32);
        let cfg = LaunchConfig {
            grid_dim: (w.div_ceil(CO_TILE) as u32 + 1, groups.max(1) as u32, 1),
            block_dim: (CO_TILE as u32, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: coarse_taps takes (cost, taps, w, h, cpitch, groups,
        // xrows, mrows, pitch); a block a tile of CO_TILE columns of a group
        // and a last one; checked above: `cost` holds h rows of cpitch as dp_prep
        // wrote them, `taps` 5·groups + 1 rows of cpitch, xrows 2·w ints,
        // mrows ⌊(h−1)/32⌋ + 1 rows of pitch.
        unsafe { launch(&mut b, cfg, "the DP's taps") }?;
        let own = sweep_own(w) as u32;
        let mut b = st.launch_builder(&co.sweep);
        b.arg(&*taps).arg(&w32).arg(&g32).arg(&c32).arg(&own);
        b.arg(&*rows).arg(&mut *mrows).arg(&p32);
        let cfg = coarse_config(w);
        // SAFETY: coarse_sweep takes (taps, w, groups, cpitch, own, xrows,
        // mrows, pitch), a cluster of CO_CLUSTER blocks with the shared
        // memory coarse_config gives; it reads the taps of columns below w
        // (and up to 3 past it, within cost_pitch(w)), xrows' w ints, and
        // writes mrows' rows up to ⌊(h−1)/32⌋ (checked above).
        unsafe { launch(&mut b, cfg, "the DP's sweep") }?;
        if chunks > 0 {
            let mut b = st.launch_builder(&co.fill);
            b.arg(&*cost).arg(&w32).arg(&h32).arg(&c32);
            b.arg(&*mrows).arg(&p32).arg(&mut *back).arg(&mut *anchors);
            b.arg(&mut *paths);
            let cfg = LaunchConfig {
                grid_dim: (w.div_ceil(CO_FILL_OWN) as u32, chunks as u32, 1),
                block_dim: (CO_FILL as u32, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: coarse_fill takes (cost, w, h, cpitch, mrows, pitch,
            // back, anchors, paths), a block a tile of CO_FILL_OWN columns
            // of a chunk of 32 rows, CO_FILL threads; back and paths hold h
            // rows of pitch, anchors a row a chunk.
            unsafe { launch(&mut b, cfg, "the DP's fill") }?;
        }
        let mut total = costs.slice_mut(total..total + 1);
        let mut b = st.launch_builder(&co.walk);
        b.arg(&*mrows).arg(&w32).arg(&h32).arg(&p32);
        b.arg(&*paths).arg(&*anchors).arg(seam).arg(&mut total);
        b.opt_mut(top);
        // SAFETY: coarse_walk takes (mrows, w, h, pitch, paths, anchors,
        // seam, total, top?); one block; `seam` holds h entries, `top` w.
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1024, 1, 1),
            shared_mem_bytes: 0,
        };
        unsafe { launch(&mut b, cfg, "the seam's walk") }
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
        let fits = outputs_fit(scratch, (w, h, pitch), seam, total, top.as_deref())
            && h * cpitch <= scratch.cost.len()
            && 3 * w <= scratch.rows.len();
        if !fits {
            return Err(no_room(w, h, pitch));
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
            ..
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

/// Whether the DP's outputs have room for a w×h plane at `pitch`: its
/// steps, jumps, seam, cost slot and top row.
fn outputs_fit(
    scratch: &DpScratch,
    (w, h, pitch): (usize, usize, usize),
    seam: &CudaSlice<u32>,
    total: usize,
    top: Option<&CudaSlice<i64>>,
) -> bool {
    (1..=MAX_SIDE).contains(&w)
        && (1..=MAX_SIDE).contains(&h)
        && w <= pitch
        && h * pitch <= scratch.back.len()
        && h.div_ceil(ANCHOR_ROWS) * pitch <= scratch.anchors.len()
        && total < scratch.costs.len()
        && h <= seam.len()
        && top.is_none_or(|t| w <= t.len())
}

fn no_room(w: usize, h: usize, pitch: usize) -> Error {
    Error::Device(format!(
        "retarget: the DP was given a {w}x{h} plane (pitch {pitch}) it has no room for"
    ))
}

/// `grid` blocks of `warps` warps, each with its warps' prefetch rings for
/// windows of `shape`.
pub(super) fn sweep_config(grid: usize, warps: usize, shape: Shape) -> LaunchConfig {
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
    pub(super) rows: CudaSlice<i64>,
    /// Seam costs: the DP writes the slot it is given.
    pub(crate) costs: CudaSlice<i64>,
    /// The four-row DP's taps (5 words a cell of every fourth row, rows of
    /// `cost_pitch(w)`) and its sums at the rows that are multiples of 32.
    pub(super) taps: CudaSlice<u32>,
    pub(super) mrows: CudaSlice<i32>,
    /// The four-row DP's paths: paths[y·pitch + x], for y in (32c, 32c +
    /// 32], is the column at row y of the best path from (x, 32c).
    pub(super) paths: CudaSlice<u16>,
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
            taps: alloc(
                st,
                most(&|p, h| ((h.max(1) - 1) / 4 * CO_WORDS + 1) * cost_pitch(p)),
                "the DP taps",
            )?,
            mrows: alloc(
                st,
                most(&|p, h| ((h.max(1) - 1) / ANCHOR_ROWS + 1) * p),
                "the DP rows",
            )?,
            paths: alloc(st, most(&|p, h| p * h), "the DP paths")?,
        })
    }
}
