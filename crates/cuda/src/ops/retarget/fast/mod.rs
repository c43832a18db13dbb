//! GPU `retarget` in fast mode: the steps of src/ops/retarget/fast.rs (which
//! defines them, with motion.rs, passes.rs and temporal.rs) with the kernels
//! of kernels/retarget_fast.cu and the DP and layout kernels of exact mode,
//! so that every frame is the CPU's.
//!
//! The frame's state stays on the device: the last luma, the motion map,
//! and each shrink's seams. One thing comes back each frame: the global
//! shift, the cut test's sums and the still test's count (a few words,
//! after the frame's first kernels), because whether a shot starts and
//! whether the frame is still decide what runs next, and placing and
//! settling a shot's seams costs dozens of DPs and hundreds of follows
//! that a followed frame must not pay. Everything else is enqueued; every
//! buffer is allocated in `prepare`.

use std::sync::Arc;

mod motion;
mod seams;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::dp::{ANCHOR_ROWS, DpScratch, MAX_SIDE};
use super::{
    Carve, GpuRetarget, Kernels, PushOptional, alloc, launch, pair, per_pixel, per_row, upload_mask,
};
use crate::error::{Error, Result};
use crate::{DevFormat, DevFrame, Gpu, blocks, cuda_err};
use seamstream_core::ops::retarget::fast::FastParams;
use seamstream_core::ops::retarget::motion::SEARCH;
use seamstream_core::ops::retarget::{CarveOptions, Energy, combine_masks};

pub(super) const FILE: &str = "retarget_fast.cu";
/// The motion state's words (kernels/retarget_fast.cu).
pub(crate) const MS_LEVEL_X: usize = 0;
pub(crate) const MS_WORDS: usize = 10;
/// The threads of `start_choose`'s one block (its shared sums are sized
/// by it).
pub(crate) const CHOOSE_THREADS: usize = 256;
/// The pyramid of the global shift: (cell side, search radius, block step).
const LEVELS: [(usize, i32, usize); 3] = [(4, SEARCH / 4, 1), (2, 3, 1), (1, 3, 2)];
/// Samples a side of a block of the shift's block matching.
const BLOCK: usize = 8;

/// The fast-mode kernels, for one pixel format.
struct FastKernels {
    cell_sums: CudaFunction,
    shift_vote: CudaFunction,
    shift_mode: CudaFunction,
    cut_sums: CudaFunction,
    motion_cells: CudaFunction,
    motion_grow_rows: CudaFunction,
    motion_grow_cols: CudaFunction,
    motion_pixels: CudaFunction,
    motion_share: CudaFunction,
    gradient_sums: CudaFunction,
    band_costs: CudaFunction,
    band_dp: CudaFunction,
    seams_differ: CudaFunction,
    sort_rows: CudaFunction,
    place: CudaFunction,
    remove: CudaFunction,
    rank: CudaFunction,
    starts: CudaFunction,
    trace_bands: CudaFunction,
    trace_rows: CudaFunction,
    remember: CudaFunction,
    origin: CudaFunction,
    start_sums: CudaFunction,
    start_choose: CudaFunction,
    chosen_from_seams: CudaFunction,
    repeat_u16: CudaFunction,
}

impl FastKernels {
    fn load(gpu: &Gpu, format: DevFormat) -> Result<FastKernels> {
        let f = |name: &str| gpu.function(FILE, name);
        Ok(FastKernels {
            cell_sums: f("cell_sums")?,
            shift_vote: f("shift_vote")?,
            shift_mode: f("shift_mode")?,
            cut_sums: f("cut_sums")?,
            motion_cells: f("motion_cells")?,
            motion_grow_rows: f("motion_grow_rows")?,
            motion_grow_cols: f("motion_grow_cols")?,
            motion_pixels: f("motion_pixels")?,
            motion_share: f("motion_share")?,
            gradient_sums: f("gradient_sums")?,
            band_costs: f("band_costs")?,
            band_dp: f("band_dp")?,
            seams_differ: f("seams_differ")?,
            sort_rows: f("sort_rows")?,
            place: f("place_seams")?,
            remove: f(match format {
                DevFormat::Rgba => "fast_remove_u8x4",
                DevFormat::Gray => "fast_remove_u8",
            })?,
            rank: f("fast_rank")?,
            starts: f("fast_starts")?,
            trace_bands: f("fast_trace_bands")?,
            trace_rows: f("fast_trace_rows")?,
            remember: f("fast_remember")?,
            origin: f("fast_origin")?,
            start_sums: f("start_sums")?,
            start_choose: f("start_choose")?,
            chosen_from_seams: f("chosen_from_seams")?,
            repeat_u16: f("repeat_chosen_u16")?,
        })
    }
}

/// A launch of `n` threads in blocks of 256, one dimension.
fn linear(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks(n.max(1), 256), 1, 1),
        block_dim: (256, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// One block of `threads`.
fn one_block(threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// One shrink the frame goes through: a w×h plane loses `count` columns,
/// in the dimension `dim` (0 vertical seams, 1 horizontal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shrink {
    dim: usize,
    w: usize,
    h: usize,
    count: usize,
}

/// The shrinks a w×h frame goes through to tw×th, in order (the control
/// flow of `retarget_fast` and `Side::carve`): the width, then the height
/// on the transposed frame; an enlarging side follows the seams of each
/// round.
fn plan(w: usize, h: usize, tw: usize, th: usize) -> Vec<Shrink> {
    let mut out = Vec::new();
    let mut side = |dim: usize, w: usize, h: usize, target: usize| {
        if target < w {
            out.push(Shrink {
                dim,
                w,
                h,
                count: w - target,
            });
        }
        let mut cur = w;
        while cur < target {
            let round = (target - cur).min((cur / 2).max(1));
            out.push(Shrink {
                dim,
                w: cur,
                h,
                count: round,
            });
            cur += round;
        }
    };
    side(0, w, h, tw);
    side(1, h, tw, th);
    out
}

/// One shrink's seams on the device (k increasing columns a row), and
/// whether they belong to the current shot.
struct Slot {
    shrink: Shrink,
    seams: CudaSlice<u32>,
    live: bool,
}

/// The global shift's pyramid and the cut test, on the device.
struct ShiftScratch {
    /// Per level, the last and the current frame's cell sums.
    sums: Vec<[CudaSlice<u16>; 2]>,
    votes: CudaSlice<i32>,
    state: CudaSlice<i32>,
    cut: CudaSlice<u64>,
}

/// Everything fast mode's `run` needs, built by `prepare` for one input size
/// and format.
pub(crate) struct State {
    k: Kernels,
    fk: FastKernels,
    params: FastParams,
    width: usize,
    height: usize,
    format: DevFormat,
    target: (usize, usize),
    pitch: usize,
    pitch_t: usize,
    /// The working frame, its luma, mask and motion, each a pair that
    /// removals and transposes move between; `cur` says which holds them.
    img: [CudaSlice<u8>; 2],
    luma: [CudaSlice<u8>; 2],
    mask: Option<[CudaSlice<u8>; 2]>,
    motion: Option<[CudaSlice<u16>; 2]>,
    cur: usize,
    mask_src: Option<CudaSlice<u8>>,
    /// The energy map (every kind but forward) and the `sobel3` detail map
    /// that chooses a shot's start.
    energy: Option<CudaSlice<u32>>,
    detail: CudaSlice<u32>,
    /// Enlarging: the frame, mask and motion as they were before a round,
    /// and the columns chosen.
    keep_img: Option<CudaSlice<u8>>,
    keep_mask: Option<CudaSlice<u8>>,
    keep_motion: Option<CudaSlice<u16>>,
    chosen: CudaSlice<u8>,
    /// The input's luma (packed) and the last frame's.
    input_luma: CudaSlice<u8>,
    last: CudaSlice<u8>,
    has_last: bool,
    /// The luma of the frame the seams were last placed or followed on,
    /// the count of cells of the input beyond the noise of it, and whether
    /// there were none: a still frame keeps its seams (FastState::still).
    reference: CudaSlice<u8>,
    unsettled: CudaSlice<u32>,
    still: bool,
    shift: ShiftScratch,
    /// The motion map's cells (the memory, the fresh cells and their rows
    /// grown), and whether the
    /// memory holds a frame of this shot.
    cells: [CudaSlice<u16>; 3],
    cells_valid: bool,
    /// The count of moved cells, the shot's running mean of the moving
    /// share (valid once `cells_valid`), and the share of the motion weight
    /// that applies (numerator, denominator).
    moved: CudaSlice<u32>,
    moving: CudaSlice<u32>,
    share: CudaSlice<i64>,
    /// Following: the running gradient sums, the band DP's steps, centres
    /// and paths, and the paths sorted.
    grad: CudaSlice<u32>,
    back: CudaSlice<u64>,
    /// The band DP's costs (32 a seam and row): each cell's own, and its
    /// forward terms with whether it is in the frame (band_costs).
    band_own: CudaSlice<i64>,
    band_fwd: CudaSlice<u32>,
    /// Set when a settling follow moved a seam (seams_differ).
    settle_moved: CudaSlice<u32>,
    centres: CudaSlice<u32>,
    paths: CudaSlice<u32>,
    sorted: CudaSlice<u32>,
    work: CudaSlice<i32>,
    ranks: CudaSlice<u32>,
    free_cols: CudaSlice<u32>,
    /// Placing a shot's seams: a copy of the luma, mask and origins carved
    /// pass by pass, the DP's scratch and the passes' buffers, both
    /// placements and the sums that choose between them.
    p_luma: [CudaSlice<u8>; 2],
    p_mask: Option<[CudaSlice<u8>; 2]>,
    p_origin: [CudaSlice<u32>; 2],
    dp: DpScratch,
    seam: CudaSlice<u32>,
    top: CudaSlice<i64>,
    chosen_cols: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    bands: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    p_cur: usize,
    /// A pass's placed seams in original columns, gathered over the passes.
    paths_all: CudaSlice<u32>,
    placed: [CudaSlice<u32>; 2],
    start_sums: CudaSlice<u64>,
    slots: Vec<Slot>,
    /// Shots started after a cut.
    pub(crate) cuts: u64,
}

impl State {
    pub(crate) fn new(
        gpu: &Gpu,
        op: &GpuRetarget,
        params: FastParams,
        (w, h): (usize, usize),
        format: DevFormat,
    ) -> Result<State> {
        let (tw, th) = op.settings.target(w, h)?;
        let (pitch, pitch_t) = (w.max(tw), h.max(th));
        if pitch.max(pitch_t) > MAX_SIDE {
            return Err(Error::GpuLimit(format!(
                "retarget on the GPU takes sides up to {MAX_SIDE} pixels, not {w}x{h} to {tw}x{th}"
            )));
        }
        let opts = CarveOptions {
            energy: params.energy,
            protect: op.settings.protect.as_ref(),
            remove: op.settings.remove.as_ref(),
        };
        let mask = combine_masks(w, h, &opts)?;
        let st = gpu.stream();
        let shrinks = plan(w, h, tw, th);
        // The most seam pixels any shrink has (k·h), and its passes'.
        let most = shrinks.iter().map(|s| s.count * s.h).max().unwrap_or(0);
        let cap = pitch * pitch_t;
        let side = pitch.max(pitch_t);
        let bpp = format.bytes_per_pixel();
        let enlarge = tw > w || th > h;
        let mask_src = upload_mask(st, mask)?;
        let has_mask = mask_src.is_some();
        let moving = params.motion > 0;
        let forward = params.energy == Energy::Forward;
        let pair_u8 = |n: usize, what: &str| -> Result<[CudaSlice<u8>; 2]> {
            Ok([alloc(st, n, what)?, alloc(st, n, what)?])
        };
        let slots = shrinks
            .iter()
            .map(|&s| {
                Ok(Slot {
                    shrink: s,
                    seams: alloc(st, s.count * s.h, "the seams")?,
                    live: false,
                })
            })
            .collect::<Result<Vec<_>>>()?;
        let mut sums = Vec::new();
        let mut votes = 0;
        for &(f, _, step) in &LEVELS {
            let (cw, ch) = (w / f, h / f);
            sums.push([
                alloc(st, cw * ch, "the cell sums")?,
                alloc(st, cw * ch, "the cell sums")?,
            ]);
            votes = votes.max((cw / BLOCK).div_ceil(step) * (ch / BLOCK).div_ceil(step));
        }
        let cells = w.div_ceil(4) * h.div_ceil(4);
        Ok(State {
            k: Kernels::load(gpu, format, params.energy)?,
            fk: FastKernels::load(gpu, format)?,
            params,
            width: w,
            height: h,
            format,
            target: (tw, th),
            pitch,
            pitch_t,
            img: pair_u8(cap * bpp, "the frame")?,
            luma: pair_u8(cap, "the luma")?,
            mask: has_mask.then(|| pair_u8(cap, "the mask")).transpose()?,
            motion: moving
                .then(|| -> Result<[CudaSlice<u16>; 2]> {
                    Ok([alloc(st, cap, "the motion")?, alloc(st, cap, "the motion")?])
                })
                .transpose()?,
            cur: 0,
            mask_src,
            energy: (!forward)
                .then(|| alloc(st, cap, "the energy"))
                .transpose()?,
            detail: alloc(st, cap, "the detail")?,
            keep_img: enlarge
                .then(|| alloc(st, cap * bpp, "the frame"))
                .transpose()?,
            keep_mask: (enlarge && has_mask)
                .then(|| alloc(st, cap, "the mask"))
                .transpose()?,
            keep_motion: (enlarge && moving)
                .then(|| alloc(st, cap, "the motion"))
                .transpose()?,
            chosen: alloc(st, if enlarge { cap } else { 1 }, "the chosen columns")?,
            input_luma: alloc(st, w * h, "the luma")?,
            last: alloc(st, w * h, "the last luma")?,
            has_last: false,
            reference: alloc(st, w * h, "the seams' luma")?,
            unsettled: alloc(st, 1, "the still test")?,
            still: false,
            shift: ShiftScratch {
                sums,
                votes: alloc(st, votes, "the votes")?,
                state: alloc(st, MS_WORDS, "the shift")?,
                cut: alloc(st, 2, "the cut test")?,
            },
            cells: [
                alloc(st, cells, "the motion map")?,
                alloc(st, cells, "the motion map")?,
                alloc(st, cells, "the motion map")?,
            ],
            cells_valid: false,
            moved: alloc(st, 1, "the moved cells")?,
            moving: alloc(st, 1, "the moving share")?,
            share: alloc(st, 2, "the motion's share")?,
            grad: alloc(st, (side + 1) * side, "the gradient sums")?,
            back: alloc(st, most, "the band DP's steps")?,
            band_own: alloc(st, 32 * most, "the band DP's costs")?,
            band_fwd: alloc(st, 32 * most, "the band DP's costs")?,
            settle_moved: alloc(st, 1, "the settling's flag")?,
            centres: alloc(st, most, "the band DP's centres")?,
            paths: alloc(st, most, "the paths")?,
            sorted: alloc(st, most, "the sorted paths")?,
            work: alloc(st, 3 * most, "the placing")?,
            ranks: alloc(st, if has_mask { cap } else { 1 }, "the ranks")?,
            free_cols: alloc(st, if has_mask { cap } else { 1 }, "the free columns")?,
            p_luma: pair_u8(cap, "the luma")?,
            p_mask: has_mask.then(|| pair_u8(cap, "the mask")).transpose()?,
            p_origin: [
                alloc(st, cap, "the origins")?,
                alloc(st, cap, "the origins")?,
            ],
            dp: DpScratch::new(st, &[(pitch, h), (pitch_t, pitch)], 1)?,
            seam: alloc(st, side, "a seam")?,
            top: alloc(st, side, "the top row")?,
            chosen_cols: alloc(st, side, "the starts")?,
            starts: alloc(st, side, "the starts")?,
            bands: alloc(st, side * side.div_ceil(ANCHOR_ROWS), "the bands")?,
            cols: alloc(st, most, "the seams")?,
            p_cur: 0,
            paths_all: alloc(st, most, "the removed columns")?,
            placed: [alloc(st, most, "a start")?, alloc(st, most, "a start")?],
            start_sums: alloc(st, 4 * side, "the start's sums")?,
            slots,
            cuts: 0,
        })
    }

    /// One frame: `input` in, `output` (the target size) out.
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let st = gpu.stream().clone();
        let (w, h, pitch) = (self.width, self.height, self.pitch);
        let (tw, th) = self.target;
        let shift = self.observe(&st, input)?;
        self.cur = 0;
        let k = &self.k;
        k.copy(
            &st,
            &k.copy_img,
            (&input.data, w),
            (&mut self.img[0], pitch),
            w,
            h,
        )?;
        k.copy(
            &st,
            &k.copy_u8,
            (&self.input_luma, w),
            (&mut self.luma[0], pitch),
            w,
            h,
        )?;
        if let (Some(src), Some(m)) = (&self.mask_src, &mut self.mask) {
            k.copy(&st, &k.copy_u8, (src, w), (&mut m[0], pitch), w, h)?;
        }
        if let Some(m) = &mut self.motion {
            let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
            let valid = i32::from(self.cells_valid);
            let mut b = st.launch_builder(&self.fk.motion_pixels);
            b.arg(&self.cells[0]).arg(&w32).arg(&h32).arg(&p32);
            b.arg(&valid).arg(&mut m[0]);
            // SAFETY: motion_pixels takes (cells, w, h, pitch, valid, out);
            // cells hold ⌈w/4⌉·⌈h/4⌉, out h rows of `pitch`.
            unsafe { launch(&mut b, per_pixel(w, h), "the motion map") }?;
        }
        let mut slot = 0;
        self.carve_side(&st, 0, pitch, (w, h), tw, shift, &mut slot)?;
        let k = &self.k;
        if th == h {
            return k.copy(
                &st,
                &k.copy_img,
                (&self.img[self.cur], pitch),
                (&mut output.data, tw),
                tw,
                h,
            );
        }
        // The height on the transposed frame: h wide, tw tall.
        let pitch_t = self.pitch_t;
        let c = self.cur;
        let (a, b) = pair(&mut self.img, c);
        k.transpose(&st, &k.transpose_img, (&*a, pitch), (b, pitch_t), tw, h)?;
        let (a, b) = pair(&mut self.luma, c);
        k.transpose(&st, &k.transpose_u8, (&*a, pitch), (b, pitch_t), tw, h)?;
        if let Some(m) = &mut self.mask {
            let (a, b) = pair(m, c);
            k.transpose(&st, &k.transpose_u8, (&*a, pitch), (b, pitch_t), tw, h)?;
        }
        if let Some(m) = &mut self.motion {
            let (a, b) = pair(m, c);
            k.transpose(&st, &k.transpose_u16, (&*a, pitch), (b, pitch_t), tw, h)?;
        }
        self.cur ^= 1;
        let shift_t = shift.map(|(x, y)| (y, x));
        self.carve_side(&st, 1, pitch_t, (h, tw), th, shift_t, &mut slot)?;
        let k = &self.k;
        k.transpose(
            &st,
            &k.transpose_img,
            (&self.img[self.cur], pitch_t),
            (&mut output.data, tw),
            th,
            tw,
        )
    }

    /// Carves the working frame (w×h at `pitch`) to `target` wide in
    /// dimension `dim` (Side::carve), with the slots from `*slot` on.
    #[allow(clippy::too_many_arguments)]
    fn carve_side(
        &mut self,
        st: &Arc<CudaStream>,
        dim: usize,
        pitch: usize,
        (w, h): (usize, usize),
        target: usize,
        shift: Option<(i32, i32)>,
        slot: &mut usize,
    ) -> Result<()> {
        if target < w {
            let k = w - target;
            self.seams_for(st, *slot, dim, pitch, (w, h), k, shift)?;
            self.remove(st, *slot, (w, h, pitch), k)?;
            *slot += 1;
            return Ok(());
        }
        let mut w = w;
        while w < target {
            let k = (target - w).min((w / 2).max(1));
            self.seams_for(st, *slot, dim, pitch, (w, h), k, shift)?;
            let (w32, h32, p32, k32) = (w as u32, h as u32, pitch as u32, k as u32);
            let mut b = st.launch_builder(&self.fk.chosen_from_seams);
            b.arg(&self.slots[*slot].seams)
                .arg(&k32)
                .arg(&w32)
                .arg(&h32)
                .arg(&p32);
            b.arg(&mut self.chosen);
            // SAFETY: chosen_from_seams takes (seams, k, w, h, pitch,
            // chosen); seams hold k increasing columns below w a row,
            // chosen h rows of `pitch`.
            unsafe { launch(&mut b, per_pixel(w, h), "the chosen columns") }?;
            let c = self.cur;
            let k_ = &self.k;
            let keep = self.keep_img.as_mut().expect("allocated when enlarging");
            k_.copy(st, &k_.copy_img, (&self.img[c], pitch), (keep, pitch), w, h)?;
            if let (Some(m), Some(km)) = (&self.mask, &mut self.keep_mask) {
                k_.copy(st, &k_.copy_u8, (&m[c], pitch), (km, pitch), w, h)?;
            }
            let keep = self.keep_img.as_ref().expect("allocated when enlarging");
            let mask = match (&self.keep_mask, &mut self.mask) {
                (Some(km), Some(m)) => Some((km, &mut m[c])),
                _ => None,
            };
            k_.insert(
                st,
                (keep, &mut self.img[c]),
                mask,
                &self.chosen,
                (w, h, pitch),
            )?;
            if let (Some(m), Some(km)) = (&mut self.motion, &mut self.keep_motion) {
                st.memcpy_dtod(&m[c].slice(..h * pitch), &mut km.slice_mut(..h * pitch))
                    .map_err(|e| cuda_err("retarget: keeping the motion", e))?;
                let mut b = st.launch_builder(&self.fk.repeat_u16);
                b.arg(&*km)
                    .arg(&mut m[c])
                    .arg(&self.chosen)
                    .arg(&w32)
                    .arg(&p32);
                // SAFETY: repeat_chosen_u16 takes (src, dst, chosen, w,
                // pitch), one block a row; both planes and chosen hold h rows
                // of `pitch`, with room for w + k.
                unsafe { launch(&mut b, per_row(h, 256), "the motion's insertion") }?;
            }
            w += k;
            self.k
                .luma(st, &self.img[c], &mut self.luma[c], (w, h, pitch))?;
            *slot += 1;
        }
        Ok(())
    }

    /// Removes slot `slot`'s k seams a row from the working frame, luma,
    /// mask and motion, into the other buffer of each pair.
    fn remove(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        (w, h, pitch): (usize, usize, usize),
        k: usize,
    ) -> Result<()> {
        let c = self.cur;
        let (k32, w32, h32, p32) = (k as u32, w as u32, h as u32, pitch as u32);
        let (ia, ib) = pair(&mut self.img, c);
        let (la, lb) = pair(&mut self.luma, c);
        let mut b = st.launch_builder(&self.fk.remove);
        b.arg(&*ia).arg(ib).arg(&*la).arg(lb);
        match &mut self.mask {
            Some(m) => {
                let (ma, mb) = pair(m, c);
                b.arg(&*ma).arg(mb);
            }
            None => {
                b.opt::<u8>(None).opt_mut::<u8>(None);
            }
        }
        b.opt::<u32>(None).opt_mut::<u32>(None);
        match &mut self.motion {
            Some(m) => {
                let (ma, mb) = pair(m, c);
                b.arg(&*ma).arg(mb);
            }
            None => {
                b.opt::<u16>(None).opt_mut::<u16>(None);
            }
        }
        b.arg(&self.slots[slot].seams)
            .arg(&k32)
            .arg(&w32)
            .arg(&h32)
            .arg(&p32);
        // SAFETY: fast_remove_* take (si, di, sl, dl, sm?, dm?, so?, do?,
        // sv?, dv?, cols, k, w, h, pitch); every plane holds h rows of
        // `pitch`, the seams k increasing columns below w a row.
        unsafe { launch(&mut b, per_pixel(w, h), "removing the seams") }?;
        self.cur ^= 1;
        Ok(())
    }
}

impl Carve for State {
    fn shape(&self) -> ((usize, usize, DevFormat), (usize, usize)) {
        ((self.width, self.height, self.format), self.target)
    }
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        State::carve(self, gpu, input, output)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_plan_follows_the_cpu_control_flow() {
        let s = |dim, w, h, count| Shrink { dim, w, h, count };
        assert_eq!(plan(100, 50, 75, 50), [s(0, 100, 50, 25)]);
        assert_eq!(plan(100, 50, 75, 40), [s(0, 100, 50, 25), s(1, 50, 75, 10)]);
        // Enlarging 10 → 25: rounds of 5, 7, 3 (at most half the width).
        assert_eq!(
            plan(10, 4, 25, 4),
            [s(0, 10, 4, 5), s(0, 15, 4, 7), s(0, 22, 4, 3)]
        );
        assert!(plan(10, 4, 10, 4).is_empty());
    }
}
