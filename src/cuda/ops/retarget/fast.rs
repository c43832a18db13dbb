//! GPU `retarget` in fast mode: the steps of src/ops/retarget/fast.rs (which
//! defines them, with motion.rs, passes.rs and temporal.rs) with the kernels
//! of kernels/retarget_fast.cu and the DP and layout kernels of exact mode,
//! so that every frame is the CPU's.
//!
//! The frame's state stays on the device: the last luma, the motion map,
//! and each shrink's seams. One thing comes back each frame: the global
//! shift and the cut test's sums (a few words, after the frame's first
//! kernels), because whether a shot starts decides what runs next, and
//! placing a shot's seams costs dozens of DPs that a followed frame must
//! not pay. Everything else is enqueued; every buffer is allocated in
//! `prepare`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::dp::{ANCHOR_ROWS, DpScratch, MAX_SIDE};
use super::{
    Carve, GpuRetarget, Kernels, PushOptional, alloc, launch, pair, per_pixel, per_row, upload_mask,
};
use crate::cuda::{DevFormat, DevFrame, Gpu, blocks, cuda_err};
use crate::error::{Error, Result};
use crate::ops::retarget::energy::luma_unit;
use crate::ops::retarget::fast::FastParams;
use crate::ops::retarget::motion::{GROW, MOTION_CAP, MOVING_HIGH, MOVING_LOW, SEARCH};
use crate::ops::retarget::passes::pass_sizes;
use crate::ops::retarget::temporal::STACKED_PASSES;
use crate::ops::retarget::{CarveOptions, Energy, combine_masks};

const FILE: &str = "retarget_fast.cu";
/// The motion state's words (kernels/retarget_fast.cu).
const MS_LEVEL_X: usize = 0;
const MS_WORDS: usize = 10;
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
    band_dp: CudaFunction,
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
            band_dp: f("band_dp")?,
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
        let (tw, th) = op.target(w, h)?;
        let (pitch, pitch_t) = (w.max(tw), h.max(th));
        if pitch.max(pitch_t) > MAX_SIDE {
            return Err(Error::Unsupported(format!(
                "retarget on the GPU takes sides up to {MAX_SIDE} pixels, not {w}x{h} to {tw}x{th}; use --device cpu"
            )));
        }
        let opts = CarveOptions {
            energy: params.energy,
            protect: op.protect.as_ref(),
            remove: op.remove.as_ref(),
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

    /// The input's luma against the last frame's (FastState::observe): the
    /// global shift and the cut test on the device, read back; on a cut
    /// every slot is dropped, else the motion map moves on. Returns the
    /// shift, or `None` when a shot starts.
    fn observe(&mut self, st: &Arc<CudaStream>, input: &DevFrame) -> Result<Option<(i32, i32)>> {
        let (w, h) = (self.width, self.height);
        self.k
            .luma(st, &input.data, &mut self.input_luma, (w, h, w))?;
        let mut shift = None;
        if self.has_last {
            let (sx, sy, cut) = self.shift_and_cut(st)?;
            if !cut {
                shift = Some((sx, sy));
            }
        }
        match shift {
            None => {
                if self.has_last {
                    self.cuts += 1;
                }
                for s in &mut self.slots {
                    s.live = false;
                }
                self.cells_valid = false;
            }
            Some((sx, sy)) if self.params.motion > 0 => self.update_motion(st, (sx, sy))?,
            Some(_) => {}
        }
        st.memcpy_dtod(&self.input_luma, &mut self.last)
            .map_err(|e| cuda_err("retarget: keeping the luma", e))?;
        self.has_last = true;
        Ok(shift)
    }

    /// The global shift (motion::global_shift) and the cut test
    /// (fast::is_cut) of the input against the last luma: (x, y, cut).
    fn shift_and_cut(&mut self, st: &Arc<CudaStream>) -> Result<(i32, i32, bool)> {
        let (w, h) = (self.width, self.height);
        let fk = &self.fk;
        let sh = &mut self.shift;
        for (level, &(f, r, step)) in LEVELS.iter().enumerate() {
            let (cw, ch) = (w / f, h / f);
            let (f32_, w32, h32) = (f as u32, w as u32, h as u32);
            for (luma, out) in [(&self.last, 0), (&self.input_luma, 1)] {
                let mut b = st.launch_builder(&fk.cell_sums);
                b.arg(luma).arg(&w32).arg(&w32).arg(&h32).arg(&f32_);
                b.arg(&mut sh.sums[level][out]);
                let cfg = LaunchConfig {
                    grid_dim: (blocks(cw, 32), blocks(ch, 8), 1),
                    block_dim: (32, 8, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: cell_sums takes (luma, pitch, w, h, f, out); luma
                // holds h rows of w, out (w/f)·(h/f).
                unsafe { launch(&mut b, cfg, "the cell sums") }?;
            }
            let n = (cw / BLOCK).div_ceil(step) * (ch / BLOCK).div_ceil(step);
            let (cw32, ch32, step32, unit, lv) = (
                cw as u32,
                ch as u32,
                step as u32,
                (f * f) as u32,
                level as u32,
            );
            if n > 0 {
                let [prev, cur] = &sh.sums[level];
                let mut b = st.launch_builder(&fk.shift_vote);
                b.arg(prev).arg(cur).arg(&cw32).arg(&ch32).arg(&step32);
                b.arg(&r)
                    .arg(&unit)
                    .arg(&lv)
                    .arg(&sh.state)
                    .arg(&mut sh.votes);
                let cfg = LaunchConfig {
                    grid_dim: (n as u32, 1, 1),
                    block_dim: (256, 1, 1),
                    shared_mem_bytes: 0,
                };
                // SAFETY: shift_vote takes (prev, cur, cw, ch, step, r, unit,
                // level, state, votes); both planes hold cw·ch, votes n ≤ its
                // length (prepare), state MS_WORDS with level − 1's answer;
                // (2r + 1)² ≤ 256 candidates.
                unsafe { launch(&mut b, cfg, "the shift's votes") }?;
            }
            let n32 = n as u32;
            let mut b = st.launch_builder(&fk.shift_mode);
            b.arg(&sh.votes)
                .arg(&n32)
                .arg(&r)
                .arg(&lv)
                .arg(&mut sh.state);
            // SAFETY: shift_mode takes (votes, n, r, level, state); votes
            // holds n, state MS_WORDS; 2r + 1 ≤ 33.
            unsafe { launch(&mut b, one_block(256), "the shift") }?;
        }
        st.memset_zeros(&mut sh.cut)
            .map_err(|e| cuda_err("retarget: clearing the cut test", e))?;
        let (w32, h32) = (w as u32, h as u32);
        let mut b = st.launch_builder(&fk.cut_sums);
        b.arg(&self.input_luma).arg(&self.last).arg(&w32).arg(&h32);
        b.arg(&sh.state).arg(&mut sh.cut);
        let points = w.div_ceil(8) * h.div_ceil(8);
        // SAFETY: cut_sums takes (cur, last, w, h, state, sums); both
        // planes hold w·h, state MS_WORDS, sums 2; one thread a grid point,
        // whole warps.
        unsafe { launch(&mut b, linear(points.div_ceil(32) * 32), "the cut test") }?;
        let state = st
            .clone_dtoh(&sh.state)
            .map_err(|e| cuda_err("retarget: reading the shift", e))?;
        let cut = st
            .clone_dtoh(&sh.cut)
            .map_err(|e| cuda_err("retarget: reading the cut test", e))?;
        let (sx, sy) = (state[MS_LEVEL_X + 4], state[MS_LEVEL_X + 5]);
        Ok((sx, sy, cut[0] > self.params.cut as u64 * cut[1]))
    }

    /// The motion map after a frame with this shift (MotionMap::update):
    /// fresh cells, grown along the rows, then down the columns into the
    /// memory.
    fn update_motion(&mut self, st: &Arc<CudaStream>, (sx, sy): (i32, i32)) -> Result<()> {
        let (w, h) = (self.width, self.height);
        let (cw, ch) = (w.div_ceil(4), h.div_ceil(4));
        let (w32, h32, cw32, ch32) = (w as u32, h as u32, cw as u32, ch as u32);
        let (noise, grow, keep) = (self.params.noise, GROW as u32, i32::from(self.cells_valid));
        let cfg = LaunchConfig {
            grid_dim: (blocks(cw, 32), blocks(ch, 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        st.memset_zeros(&mut self.moved)
            .map_err(|e| cuda_err("retarget: clearing the moved cells", e))?;
        let fk = &self.fk;
        let [memory, fresh, rows] = &mut self.cells;
        let mut b = st.launch_builder(&fk.motion_cells);
        b.arg(&self.input_luma).arg(&self.last).arg(&w32).arg(&h32);
        b.arg(&sx).arg(&sy).arg(&noise).arg(&MOTION_CAP);
        b.arg(&mut *fresh).arg(&mut self.moved);
        // SAFETY: motion_cells takes (cur, last, w, h, sx, sy, noise, cap,
        // cells, moved); both planes hold w·h, cells ⌈w/4⌉·⌈h/4⌉, moved 1.
        unsafe { launch(&mut b, cfg, "the motion cells") }?;
        let (cells32, first) = ((cw * ch) as u32, i32::from(!self.cells_valid));
        let (lo, hi) = (MOVING_LOW, MOVING_HIGH);
        let mut b = st.launch_builder(&fk.motion_share);
        b.arg(&self.moved)
            .arg(&cells32)
            .arg(&first)
            .arg(&lo)
            .arg(&hi);
        b.arg(&mut self.moving).arg(&mut self.share);
        // SAFETY: motion_share takes (moved, cells, first, lo, hi, moving,
        // share); moved and moving hold 1, share 2; one thread.
        unsafe { launch(&mut b, one_block(1), "the motion's share") }?;
        let mut b = st.launch_builder(&fk.motion_grow_rows);
        b.arg(&*fresh)
            .arg(&mut *rows)
            .arg(&cw32)
            .arg(&ch32)
            .arg(&grow);
        // SAFETY: motion_grow_rows takes (src, dst, cw, ch, r); both hold
        // cw·ch.
        unsafe { launch(&mut b, cfg, "the motion map's rows") }?;
        let mut b = st.launch_builder(&fk.motion_grow_cols);
        b.arg(&*rows)
            .arg(memory)
            .arg(&cw32)
            .arg(&ch32)
            .arg(&grow)
            .arg(&keep);
        // SAFETY: motion_grow_cols takes (src, memory, cw, ch, r, keep);
        // both hold cw·ch.
        unsafe { launch(&mut b, cfg, "the motion map's columns") }?;
        self.cells_valid = true;
        Ok(())
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

    /// Slot `slot`'s seams for the working frame (w×h at `pitch`, k to
    /// remove): followed from the last frame's when they belong to this
    /// shot, else placed anew (Side::seams).
    #[allow(clippy::too_many_arguments)]
    fn seams_for(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        dim: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
        shift: Option<(i32, i32)>,
    ) -> Result<()> {
        let want = Shrink {
            dim,
            w,
            h,
            count: k,
        };
        if self.slots.get(slot).map(|s| s.shrink) != Some(want) {
            return Err(Error::Device(format!(
                "retarget: the plan has no {w}x{h} shrink by {k} at step {slot}"
            )));
        }
        match shift {
            Some(shift) if self.slots[slot].live => self.follow(st, slot, pitch, (w, h), k, shift),
            _ => {
                self.place(st, slot, pitch, (w, h), k)?;
                self.slots[slot].live = true;
                Ok(())
            }
        }
    }

    /// Track::follow on the device: every seam's band DP around the last
    /// frame's moved by `shift`, the paths sorted in each row, spread apart.
    #[allow(clippy::too_many_arguments)]
    fn follow(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
        (sx, sy): (i32, i32),
    ) -> Result<()> {
        let c = self.cur;
        if let Some(e) = &mut self.energy {
            self.k.energy_full(st, &self.luma[c], e, (w, h, pitch))?;
        }
        let (w32, h32, p32, k32, g32) = (
            w as u32,
            h as u32,
            pitch as u32,
            k as u32,
            (pitch + 1) as u32,
        );
        let fk = &self.fk;
        let mut b = st.launch_builder(&fk.gradient_sums);
        b.arg(&self.luma[c])
            .arg(&p32)
            .arg(&w32)
            .arg(&mut self.grad)
            .arg(&g32);
        // SAFETY: gradient_sums takes (luma, pitch, w, out, opitch), one
        // block a row; luma holds h rows of `pitch`, out h rows of
        // pitch + 1 ≥ w + 1.
        unsafe { launch(&mut b, per_row(h, 256), "the gradient sums") }?;
        let unit = luma_unit(self.params.energy) as i64;
        let band = self.params.band as i32;
        let forward = i32::from(self.params.energy == Energy::Forward);
        let per_level = self.params.coherence as i64 * unit;
        let motion_num = self.params.motion as i64 * unit;
        let hundred = 100i64;
        let mask = self.mask.as_ref().map(|m| &m[c]);
        let motion = self.motion.as_ref().map(|m| &m[c]);
        let mut b = st.launch_builder(&fk.band_dp);
        b.arg(&self.slots[slot].seams).arg(&k32).arg(&sx).arg(&sy);
        b.arg(&self.luma[c])
            .opt(self.energy.as_ref())
            .opt(motion)
            .opt(mask);
        b.arg(&p32).arg(&self.grad).arg(&g32).arg(&w32).arg(&h32);
        b.arg(&band).arg(&forward).arg(&per_level).arg(&hundred);
        b.arg(&motion_num).arg(&hundred).arg(&self.share);
        b.arg(&mut self.back)
            .arg(&mut self.centres)
            .arg(&mut self.paths);
        let cfg = LaunchConfig {
            grid_dim: (blocks(k, 4), 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: band_dp takes (seams, k, sx, sy, luma, energy?, motion?,
        // mask?, pitch, grad, gpitch, w, h, band, forward, per_level,
        // per_level_div, motion_num, motion_den, share, back, centres,
        // paths); share holds 2 (written with the motion map); one
        // warp a seam; the planes hold h rows of `pitch`, grad h rows of
        // gpitch, seams, back, centres and paths k·h each (prepare sized
        // them for the largest shrink); 2·band + 1 ≤ 31.
        unsafe { launch(&mut b, cfg, "the band DP") }?;
        self.sort_rows(st, h, k)?;
        self.place_seams(st, h, k, w, pitch, true)?;
        let n = k * h;
        let (cols, seams) = (&self.cols, &mut self.slots[slot].seams);
        st.memcpy_dtod(&cols.slice(..n), &mut seams.slice_mut(..n))
            .map_err(|e| cuda_err("retarget: keeping the seams", e))
    }

    /// `paths` (k a row) sorted into `sorted`.
    fn sort_rows(&mut self, st: &Arc<CudaStream>, h: usize, k: usize) -> Result<()> {
        let k32 = k as u32;
        let mut b = st.launch_builder(&self.fk.sort_rows);
        b.arg(&self.paths).arg(&k32).arg(&mut self.sorted);
        // SAFETY: sort_rows takes (src, k, dst), one block a row; both hold
        // k·h.
        unsafe { launch(&mut b, per_row(h, 256), "sorting the paths") }
    }

    /// place_seams of `sorted` (or, for a pass, of `paths`) into `cols`,
    /// among the unprotected columns of the working mask (or of the
    /// passes' mask).
    fn place_seams(
        &mut self,
        st: &Arc<CudaStream>,
        h: usize,
        k: usize,
        w: usize,
        pitch: usize,
        working: bool,
    ) -> Result<()> {
        let (k32, w32, p32) = (k as u32, w as u32, pitch as u32);
        let mask = if working {
            self.mask.as_ref().map(|m| &m[self.cur])
        } else {
            self.p_mask.as_ref().map(|m| &m[self.p_cur])
        };
        let desired = if working { &self.sorted } else { &self.paths };
        let mut b = st.launch_builder(&self.fk.place);
        b.arg(desired).arg(&k32).opt(mask).arg(&w32).arg(&p32);
        b.arg(&mut self.work)
            .arg(&mut self.ranks)
            .arg(&mut self.free_cols);
        b.arg(&mut self.cols);
        // SAFETY: place_seams takes (paths, k, mask?, w, pitch, work, ranks,
        // free, cols); one block a row; work holds 3·k·h, ranks and free h
        // rows of `pitch` when there is a mask, paths and cols k·h.
        unsafe { launch(&mut b, per_row(h, 256), "placing the seams") }
    }

    /// Track::place on the device: the stacked placement, and the fine one
    /// when `passes` is more, chosen between by their joins and removed
    /// detail; into slot `slot`'s seams.
    fn place(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
    ) -> Result<()> {
        let n = k * h;
        self.passes(st, pitch, (w, h), k, STACKED_PASSES, 0)?;
        if self.params.passes <= STACKED_PASSES {
            let (placed, seams) = (&self.placed[0], &mut self.slots[slot].seams);
            return st
                .memcpy_dtod(&placed.slice(..n), &mut seams.slice_mut(..n))
                .map_err(|e| cuda_err("retarget: keeping the seams", e));
        }
        self.passes(st, pitch, (w, h), k, self.params.passes, 1)?;
        let c = self.cur;
        self.k
            .sobel3_map(st, &self.luma[c], &mut self.detail, (w, h, pitch))?;
        let (w32, h32, p32, k32) = (w as u32, h as u32, pitch as u32, k as u32);
        let fk = &self.fk;
        for (i, placed) in self.placed.iter().enumerate() {
            let mut sums = self.start_sums.slice_mut(2 * i * h..(2 * i + 2) * h);
            let mut b = st.launch_builder(&fk.start_sums);
            b.arg(&self.luma[c])
                .arg(&self.detail)
                .arg(&p32)
                .arg(&w32)
                .arg(&h32);
            b.arg(placed).arg(&k32).arg(&mut sums);
            // SAFETY: start_sums takes (luma, detail, pitch, w, h, seams, k,
            // sums); the planes hold h rows of `pitch`, seams k·h increasing
            // columns below w a row, sums 2·h.
            unsafe { launch(&mut b, linear(h), "the start's sums") }?;
        }
        let n32 = n as u32;
        let [stacked, fine] = &self.placed;
        let mut b = st.launch_builder(&fk.start_choose);
        b.arg(&self.start_sums)
            .arg(&h32)
            .arg(stacked)
            .arg(fine)
            .arg(&n32);
        b.arg(&mut self.slots[slot].seams);
        // SAFETY: start_choose takes (sums, h, stacked, fine, n, out); sums
        // holds 4·h (the stacked joins and detail, then the fine ones),
        // stacked, fine and out n; one block of 256.
        unsafe { launch(&mut b, one_block(256), "choosing the start") }
    }

    /// carve_in_passes on the device: `count` seams of the working luma and
    /// mask (w×h at `pitch`) in `passes` passes, as original columns sorted
    /// in each row, into `placed[into]`.
    fn passes(
        &mut self,
        st: &Arc<CudaStream>,
        pitch: usize,
        (w0, h): (usize, usize),
        count: usize,
        passes: usize,
        into: usize,
    ) -> Result<()> {
        let c = self.cur;
        let k_ = &self.k;
        k_.copy(
            st,
            &k_.copy_u8,
            (&self.luma[c], pitch),
            (&mut self.p_luma[0], pitch),
            w0,
            h,
        )?;
        if let (Some(m), Some(pm)) = (&self.mask, &mut self.p_mask) {
            k_.copy(st, &k_.copy_u8, (&m[c], pitch), (&mut pm[0], pitch), w0, h)?;
        }
        self.p_cur = 0;
        let (w0_32, h32, p32, count32) = (w0 as u32, h as u32, pitch as u32, count as u32);
        let mut b = st.launch_builder(&self.fk.origin);
        b.arg(&mut self.p_origin[0]).arg(&w0_32).arg(&h32).arg(&p32);
        // SAFETY: fast_origin takes (origin, w, h, pitch); h rows of `pitch`.
        unsafe { launch(&mut b, per_pixel(w0, h), "the origins") }?;
        let (mut w, mut off) = (w0, 0usize);
        for k in pass_sizes(count, passes) {
            let pc = self.p_cur;
            let (w32, k32, off32) = (w as u32, k as u32, off as u32);
            if let Some(e) = &mut self.energy {
                self.k.energy_full(st, &self.p_luma[pc], e, (w, h, pitch))?;
            }
            let mask = self.p_mask.as_ref().map(|m| &m[pc]);
            let dpk = &self.k.seam;
            dpk.dp(
                st,
                (self.energy.as_ref(), mask, &self.p_luma[pc]),
                (w, h, pitch),
                &mut self.dp,
                &mut self.seam,
                0,
                Some(&mut self.top),
            )?;
            let fk = &self.fk;
            let mut b = st.launch_builder(&fk.rank);
            b.arg(&self.top)
                .arg(&w32)
                .arg(&k32)
                .arg(&mut self.chosen_cols);
            // SAFETY: fast_rank takes (top, w, k, chosen); top and chosen
            // hold w entries; one thread a column, blocks of 256.
            unsafe { launch(&mut b, linear(w), "the starts") }?;
            let mut b = st.launch_builder(&fk.starts);
            b.arg(&self.chosen_cols).arg(&w32).arg(&mut self.starts);
            // SAFETY: fast_starts takes (chosen, w, starts); k ≤ w of the w
            // columns are chosen and `starts` holds w; one block.
            unsafe { launch(&mut b, one_block(1024), "the starts") }?;
            let bands = h.div_ceil(ANCHOR_ROWS);
            let mut b = st.launch_builder(&fk.trace_bands);
            b.arg(&self.dp.anchors)
                .arg(&self.starts)
                .arg(&k32)
                .arg(&h32)
                .arg(&p32);
            b.arg(&mut self.bands);
            // SAFETY: fast_trace_bands takes (anchors, starts, k, h, pitch,
            // col); anchors as the DP wrote them, col k·⌈h/32⌉ ≤ its length.
            unsafe { launch(&mut b, linear(k), "the paths") }?;
            let mut b = st.launch_builder(&fk.trace_rows);
            b.arg(&self.dp.back)
                .arg(&self.bands)
                .arg(&k32)
                .arg(&h32)
                .arg(&p32);
            b.arg(&mut self.paths);
            let cfg = LaunchConfig {
                grid_dim: (blocks(k, 64), bands as u32, 1),
                block_dim: (64, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: fast_trace_rows takes (back, col, k, h, pitch, paths);
            // back has h rows of `pitch`, paths k·h ≤ its length.
            unsafe { launch(&mut b, cfg, "the paths") }?;
            self.place_seams(st, h, k, w, pitch, false)?;
            let fk = &self.fk;
            let mut b = st.launch_builder(&fk.remember);
            b.arg(&self.cols)
                .arg(&self.p_origin[pc])
                .arg(&k32)
                .arg(&h32)
                .arg(&p32);
            b.arg(&mut self.paths_all).arg(&count32).arg(&off32);
            let cfg = LaunchConfig {
                grid_dim: (blocks(k, 256), h as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: fast_remember takes (cols, origin, k, h, pitch, removed,
            // K, off); removed holds h rows of K = count ≥ off + k.
            unsafe { launch(&mut b, cfg, "the removed columns") }?;
            // Carve the passes' luma, mask and origins.
            let (la, lb) = pair(&mut self.p_luma, pc);
            let (oa, ob) = pair(&mut self.p_origin, pc);
            let mut b = st.launch_builder(&fk.remove);
            b.opt::<u8>(None).opt_mut::<u8>(None).arg(&*la).arg(lb);
            match &mut self.p_mask {
                Some(m) => {
                    let (ma, mb) = pair(m, pc);
                    b.arg(&*ma).arg(mb);
                }
                None => {
                    b.opt::<u8>(None).opt_mut::<u8>(None);
                }
            }
            b.arg(&*oa).arg(ob).opt::<u16>(None).opt_mut::<u16>(None);
            b.arg(&self.cols).arg(&k32).arg(&w32).arg(&h32).arg(&p32);
            // SAFETY: fast_remove_* take (si?, di?, sl, dl, sm?, dm?, so, do,
            // sv?, dv?, cols, k, w, h, pitch); every plane holds h rows of
            // `pitch`, cols k increasing columns below w a row.
            unsafe { launch(&mut b, per_pixel(w, h), "the passes' removal") }?;
            self.p_cur ^= 1;
            w -= k;
            off += k;
        }
        // The removed columns, sorted in each row.
        let k32 = count as u32;
        let mut b = st.launch_builder(&self.fk.sort_rows);
        b.arg(&self.paths_all).arg(&k32).arg(&mut self.placed[into]);
        // SAFETY: sort_rows takes (src, k, dst), one block a row; both hold
        // count·h.
        unsafe { launch(&mut b, per_row(h, 256), "sorting the removed columns") }
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
