//! GPU `retarget` in fast mode: the steps of src/ops/retarget_fast.rs (which
//! defines them) with the kernels of kernels/retarget_fast.cu and the DP and
//! layout kernels of exact mode (src/cuda/ops/retarget.rs), so that every
//! frame is the CPU's.
//!
//! The state the CPU keeps between frames stays on the device: the held
//! luma, each dimension's memory of the last frame's paths (as the passes'
//! sorted runs), and a few flags (a cut, whether a memory is valid). What
//! the host can know without reading the device, it tracks itself: the size
//! and seam count each memory was taken with, which decide, as on the CPU,
//! whether a pass is steered at all. Nothing is read back, so the op runs
//! asynchronously in the stage's ring; every buffer is allocated in
//! `prepare`.

use std::sync::Arc;

use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, LaunchConfig, PushKernelArg};

use super::{
    ANCHOR_ROWS, Carve, DpScratch, GpuRetarget, Kernels, MAX_SIDE, PushOptional, alloc, cost_pitch,
    launch, pair, per_pixel, upload_mask,
};
use crate::cuda::{DevFormat, DevFrame, Gpu, blocks, cuda_err};
use crate::error::{Error, Result};
use crate::ops::retarget::fast::{DISTANCE_CAP, FastParams, pass_sizes};
use crate::ops::retarget::{CarveOptions, Energy, combine_masks};

const FILE: &str = "retarget_fast.cu";
/// The state words of kernels/retarget_fast.cu.
const ST_MEM: u32 = 3;
const ST_WORDS: usize = 8;

/// The fast-mode kernels, for one pixel format.
struct FastKernels {
    cut_diff: CudaFunction,
    hold: CudaFunction,
    commit: CudaFunction,
    set: CudaFunction,
    temporal: CudaFunction,
    rank: CudaFunction,
    starts: CudaFunction,
    trace_bands: CudaFunction,
    trace_rows: CudaFunction,
    remember: CudaFunction,
    place: CudaFunction,
    remove_img: CudaFunction,
    origin: CudaFunction,
    chosen_fill: CudaFunction,
    chosen_clear: CudaFunction,
}

impl FastKernels {
    fn load(gpu: &Gpu, format: DevFormat) -> Result<FastKernels> {
        let f = |name: &str| gpu.function(FILE, name);
        Ok(FastKernels {
            cut_diff: f("fast_cut_diff")?,
            hold: f("fast_hold")?,
            commit: f("fast_commit")?,
            set: f("fast_set")?,
            temporal: f("fast_temporal")?,
            rank: f("fast_rank")?,
            starts: f("fast_starts")?,
            trace_bands: f("fast_trace_bands")?,
            trace_rows: f("fast_trace_rows")?,
            remember: f("fast_remember")?,
            place: f("fast_place")?,
            remove_img: f(match format {
                DevFormat::Rgba => "fast_remove_u8x4",
                DevFormat::Gray => "fast_remove_u8",
            })?,
            origin: f("fast_origin")?,
            chosen_fill: f("fast_chosen_fill")?,
            chosen_clear: f("fast_chosen_clear")?,
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

/// One shrink the frame goes through: a w×h plane (rows of `pitch`) loses
/// `count` columns, in the dimension `dim` (0 vertical seams, 1 horizontal).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Shrink {
    dim: usize,
    w: usize,
    h: usize,
    count: usize,
}

/// The shrinks a w×h frame goes through to tw×th, in order (the control
/// flow of `retarget_fast` and `carve_width_fast`): the width, then the
/// height on the transposed frame; an enlarging side shrinks a copy by each
/// round's count.
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
    /// The working frame, its luma, mask and each pixel's original column,
    /// each a pair that removals and transposes move between; `cur` says
    /// which holds them.
    img: [CudaSlice<u8>; 2],
    luma: [CudaSlice<u8>; 2],
    mask: Option<[CudaSlice<u8>; 2]>,
    origin: [CudaSlice<u32>; 2],
    cur: usize,
    /// Enlarging: the frame and mask as they were before a round's carving,
    /// and the columns chosen.
    keep_img: Option<CudaSlice<u8>>,
    keep_mask: Option<CudaSlice<u8>>,
    chosen: CudaSlice<u8>,
    mask_src: Option<CudaSlice<u8>>,
    energy: Option<CudaSlice<u32>>,
    /// The input's luma (packed) and the held luma.
    input_luma: CudaSlice<u8>,
    held: CudaSlice<u8>,
    dp: DpScratch,
    seam: CudaSlice<u32>,
    top: CudaSlice<i64>,
    chosen_cols: CudaSlice<u8>,
    starts: CudaSlice<u32>,
    bands: CudaSlice<u32>,
    paths: CudaSlice<u32>,
    cols: CudaSlice<u32>,
    work: CudaSlice<i32>,
    ranks: CudaSlice<u32>,
    free_cols: CudaSlice<u32>,
    /// Each dimension's memory, and this frame's as it is written.
    mem: [CudaSlice<u32>; 2],
    mem_new: CudaSlice<u32>,
    /// The shape (w, h, count) each dimension's memory was taken with.
    mem_shape: [Option<(usize, usize, usize)>; 2],
    flags: CudaSlice<u64>,
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
        let passes = |s: &Shrink| pass_sizes(s.count, params.passes);
        // Rows a plane of each dimension has: h, then tw.
        let kmax = shrinks
            .iter()
            .map(|s| passes(s).into_iter().max().unwrap_or(0) * s.h)
            .max()
            .unwrap_or(0);
        let mem_len = |dim: usize| {
            shrinks
                .iter()
                .filter(|s| s.dim == dim)
                .map(|s| s.count * s.h)
                .max()
                .unwrap_or(0)
        };
        let enlarge = tw > w || th > h;
        let cap = pitch * pitch_t;
        let side = pitch.max(pitch_t);
        let bpp = format.bytes_per_pixel();
        let mask_src = upload_mask(st, mask)?;
        let has_mask = mask_src.is_some();
        let forward = params.energy == Energy::Forward;
        let pair_u8 = |n: usize, what: &str| -> Result<[CudaSlice<u8>; 2]> {
            Ok([alloc(st, n, what)?, alloc(st, n, what)?])
        };
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
            origin: [
                alloc(st, cap, "the origins")?,
                alloc(st, cap, "the origins")?,
            ],
            cur: 0,
            keep_img: enlarge
                .then(|| alloc(st, cap * bpp, "the frame"))
                .transpose()?,
            keep_mask: (enlarge && has_mask)
                .then(|| alloc(st, cap, "the mask"))
                .transpose()?,
            chosen: alloc(st, if enlarge { cap } else { 1 }, "the chosen columns")?,
            mask_src,
            // Forward energy still needs a plane of zeros for the DP's
            // packing to read nothing from; its costs come from the luma.
            energy: (!forward)
                .then(|| alloc(st, cap, "the energy"))
                .transpose()?,
            input_luma: alloc(st, w * h, "the luma")?,
            held: alloc(st, w * h, "the held luma")?,
            dp: DpScratch::new(st, &[(pitch, h), (pitch_t, pitch)], 1)?,
            seam: alloc(st, side, "a seam")?,
            top: alloc(st, side, "the top row")?,
            chosen_cols: alloc(st, side, "the starts")?,
            starts: alloc(st, side, "the starts")?,
            bands: alloc(st, side * side.div_ceil(ANCHOR_ROWS), "the bands")?,
            paths: alloc(st, kmax, "the paths")?,
            cols: alloc(st, kmax, "the seams")?,
            work: alloc(st, 3 * kmax, "the placing")?,
            ranks: alloc(st, if has_mask { cap } else { 1 }, "the ranks")?,
            free_cols: alloc(st, if has_mask { cap } else { 1 }, "the free columns")?,
            mem: [
                alloc(st, mem_len(0), "the memory")?,
                alloc(st, mem_len(1), "the memory")?,
            ],
            mem_new: alloc(st, mem_len(0).max(mem_len(1)), "the memory")?,
            mem_shape: [None, None],
            flags: alloc(st, ST_WORDS, "the flags")?,
        })
    }

    /// One frame: `input` in, `output` (the target size) out.
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let st = gpu.stream().clone();
        let (w, h, pitch) = (self.width, self.height, self.pitch);
        let (tw, th) = self.target;
        self.observe(&st, input)?;
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
            (&self.held, w),
            (&mut self.luma[0], pitch),
            w,
            h,
        )?;
        if let (Some(src), Some(m)) = (&self.mask_src, &mut self.mask) {
            k.copy(&st, &k.copy_u8, (src, w), (&mut m[0], pitch), w, h)?;
        }
        self.carve_width(&st, 0, pitch, w, h, tw)?;
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
        self.cur ^= 1;
        self.carve_width(&st, 1, pitch_t, h, tw, th)?;
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

    /// The input's luma against the held luma: a cut forgets both
    /// memories; the held luma follows the input beyond the noise level.
    fn observe(&mut self, st: &Arc<CudaStream>, input: &DevFrame) -> Result<()> {
        let (w, h) = (self.width, self.height);
        let k = &self.k;
        k.luma(st, &input.data, &mut self.input_luma, (w, h, w))?;
        let fk = &self.fk;
        let (w32, h32) = (w as u32, h as u32);
        let (noise, cut) = (self.params.noise, self.params.cut);
        let grid = w.div_ceil(8) * h.div_ceil(8);
        let mut b = st.launch_builder(&fk.cut_diff);
        b.arg(&self.input_luma).arg(&self.held).arg(&w32).arg(&h32);
        b.arg(&mut self.flags);
        // SAFETY: fast_cut_diff takes (luma, held, w, h, state); both planes
        // hold w·h bytes, state ST_WORDS words; one thread a grid point.
        unsafe { launch(&mut b, linear(grid.div_ceil(32) * 32), "the cut test") }?;
        let mut b = st.launch_builder(&fk.hold);
        b.arg(&self.input_luma)
            .arg(&mut self.held)
            .arg(&w32)
            .arg(&h32);
        b.arg(&noise).arg(&cut).arg(&self.flags);
        // SAFETY: fast_hold takes (luma, held, w, h, noise, cut, state); one
        // thread a pixel of the w·h planes.
        unsafe { launch(&mut b, linear(w * h), "the held luma") }?;
        let mut b = st.launch_builder(&fk.commit);
        b.arg(&mut self.flags).arg(&w32).arg(&h32).arg(&cut);
        let one = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: fast_commit takes (state, w, h, cut); one thread.
        unsafe { launch(&mut b, one, "the cut decision") }
    }

    /// Carves the working frame (w×h at `pitch`) to `target` wide in
    /// dimension `dim` (carve_width_fast).
    fn carve_width(
        &mut self,
        st: &Arc<CudaStream>,
        dim: usize,
        pitch: usize,
        w: usize,
        h: usize,
        target: usize,
    ) -> Result<()> {
        if target < w {
            return self.shrink(st, dim, pitch, w, h, w - target);
        }
        let mut w = w;
        while w < target {
            let round = (target - w).min((w / 2).max(1));
            let c = self.cur;
            let k = &self.k;
            let keep = self.keep_img.as_mut().expect("allocated when enlarging");
            k.copy(st, &k.copy_img, (&self.img[c], pitch), (keep, pitch), w, h)?;
            if let (Some(m), Some(km)) = (&self.mask, &mut self.keep_mask) {
                k.copy(st, &k.copy_u8, (&m[c], pitch), (km, pitch), w, h)?;
            }
            self.shrink(st, dim, pitch, w, h, round)?;
            // Every column is chosen but those the carved copy kept.
            let (w32, h32, p32, kw32) = (w as u32, h as u32, pitch as u32, (w - round) as u32);
            let fk = &self.fk;
            let mut b = st.launch_builder(&fk.chosen_fill);
            b.arg(&mut self.chosen).arg(&w32).arg(&h32).arg(&p32);
            // SAFETY: fast_chosen_fill takes (chosen, w, h, pitch); chosen
            // holds h rows of `pitch`.
            unsafe { launch(&mut b, per_pixel(w, h), "the chosen columns") }?;
            let mut b = st.launch_builder(&fk.chosen_clear);
            b.arg(&self.origin[self.cur]).arg(&mut self.chosen);
            b.arg(&kw32).arg(&h32).arg(&p32);
            // SAFETY: fast_chosen_clear takes (origin, chosen, kw, h,
            // pitch); origin holds h rows of `pitch` with kw columns below w.
            unsafe { launch(&mut b, per_pixel(w - round, h), "the chosen columns") }?;
            let c = self.cur;
            let k = &self.k;
            let keep = self.keep_img.as_ref().expect("allocated when enlarging");
            let mask = match (&self.keep_mask, &mut self.mask) {
                (Some(km), Some(m)) => Some((km, &mut m[c])),
                _ => None,
            };
            k.insert(
                st,
                (keep, &mut self.img[c]),
                mask,
                &self.chosen,
                (w, h, pitch),
            )?;
            w += round;
            k.luma(st, &self.img[c], &mut self.luma[c], (w, h, pitch))?;
        }
        Ok(())
    }

    /// Removes `count` seams from the working frame (w0×h at `pitch`) in
    /// passes (FastCarver::shrink), steered by dimension `dim`'s memory when
    /// it was taken from a frame of this shape, and writes this frame's.
    fn shrink(
        &mut self,
        st: &Arc<CudaStream>,
        dim: usize,
        pitch: usize,
        w0: usize,
        h: usize,
        count: usize,
    ) -> Result<()> {
        let sizes = pass_sizes(count, self.params.passes);
        let steer = self.params.coherence > 0 && self.mem_shape[dim] == Some((w0, h, count));
        let step = self.params.step_cost();
        let forward = self.params.energy == Energy::Forward;
        let (w0_32, h32, p32, count32) = (w0 as u32, h as u32, pitch as u32, count as u32);
        let runs = sizes.len() as u32;
        let fk = &self.fk;
        let mut b = st.launch_builder(&fk.origin);
        b.arg(&mut self.origin[self.cur])
            .arg(&w0_32)
            .arg(&h32)
            .arg(&p32);
        // SAFETY: fast_origin takes (origin, w, h, pitch); h rows of `pitch`.
        unsafe { launch(&mut b, per_pixel(w0, h), "the origins") }?;
        let (mut w, mut off) = (w0, 0usize);
        for k in sizes {
            let c = self.cur;
            let (w32, k32, off32) = (w as u32, k as u32, off as u32);
            if let Some(e) = &mut self.energy {
                self.k.energy_full(st, &self.luma[c], e, (w, h, pitch))?;
            }
            let mask = self.mask.as_ref().map(|m| &m[c]);
            let dpk = &self.k.seam;
            dpk.prep(
                st,
                (self.energy.as_ref(), mask, &self.luma[c]),
                (w, h, pitch),
                &mut self.dp,
            )?;
            let fk = &self.fk;
            if steer {
                let cp32 = cost_pitch(w) as u32;
                let (dim32, fwd) = (dim as u32, i32::from(forward));
                let mut b = st.launch_builder(&fk.temporal);
                b.arg(&mut self.dp.cost)
                    .arg(&cp32)
                    .arg(&self.origin[c])
                    .arg(&p32);
                b.arg(&self.mem[dim])
                    .arg(&count32)
                    .arg(&runs)
                    .arg(&w32)
                    .arg(&h32);
                b.arg(&step).arg(&fwd).arg(&self.flags).arg(&dim32);
                // SAFETY: fast_temporal takes (cost, cpitch, origin, pitch,
                // mem, K, passes, w, h, step, forward, state, dim); the cost
                // plane has h rows of cost_pitch(w) (prep), origin h rows of
                // `pitch`, mem h rows of K = count written by the last
                // frame's shrink of this shape.
                unsafe { launch(&mut b, per_pixel(w, h), "the temporal cost") }?;
            }
            let extra = if steer {
                (step * DISTANCE_CAP) as i64
            } else {
                0
            };
            dpk.sweep(
                st,
                mask.is_some(),
                extra,
                (w, h, pitch),
                &mut self.dp,
                &mut self.seam,
                0,
                Some(&mut self.top),
            )?;
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
            let block = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: fast_starts takes (chosen, w, starts); k ≤ w of the w
            // columns are chosen and `starts` holds w; one block.
            unsafe { launch(&mut b, block, "the starts") }?;
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
            // back has h rows of `pitch`, paths k·h ≤ its length (plan).
            unsafe { launch(&mut b, cfg, "the paths") }?;
            let mut b = st.launch_builder(&fk.remember);
            b.arg(&self.paths)
                .arg(&self.origin[c])
                .arg(&k32)
                .arg(&h32)
                .arg(&p32);
            b.arg(&mut self.mem_new).arg(&count32).arg(&off32);
            let cfg = LaunchConfig {
                grid_dim: (blocks(k, 256), h as u32, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: fast_remember takes (paths, origin, k, h, pitch, mem,
            // K, off); mem holds h rows of K = count ≥ off + k.
            unsafe { launch(&mut b, cfg, "the memory") }?;
            let mut b = st.launch_builder(&fk.place);
            b.arg(&self.paths).arg(&k32).opt(mask).arg(&w32).arg(&p32);
            b.arg(&mut self.work)
                .arg(&mut self.ranks)
                .arg(&mut self.free_cols);
            b.arg(&mut self.cols);
            let cfg = LaunchConfig {
                grid_dim: (h as u32, 1, 1),
                block_dim: (256, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: fast_place takes (paths, k, mask?, w, pitch, work,
            // ranks, free, cols); one block a row; work holds 3·k·h, ranks
            // and free h rows of `pitch` when there is a mask, cols k·h.
            unsafe { launch(&mut b, cfg, "placing the seams") }?;
            self.remove(st, (w, h, pitch), k)?;
            w -= k;
            off += k;
        }
        let n = count * h;
        let (new, mem) = (&self.mem_new, &mut self.mem[dim]);
        st.memcpy_dtod(&new.slice(..n), &mut mem.slice_mut(..n))
            .map_err(|e| cuda_err("retarget: keeping the memory", e))?;
        let fk = &self.fk;
        let mut b = st.launch_builder(&fk.set);
        let (idx, one) = (ST_MEM + dim as u32, 1u64);
        b.arg(&mut self.flags).arg(&idx).arg(&one);
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (1, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: fast_set takes (state, idx, value); idx < ST_WORDS.
        unsafe { launch(&mut b, cfg, "the memory flag") }?;
        self.mem_shape[dim] = Some((w0, h, count));
        Ok(())
    }

    /// Removes the k columns of `cols` from the working planes, into the
    /// other buffer of each pair.
    fn remove(
        &mut self,
        st: &Arc<CudaStream>,
        (w, h, pitch): (usize, usize, usize),
        k: usize,
    ) -> Result<()> {
        let c = self.cur;
        let (k32, w32, h32, p32) = (k as u32, w as u32, h as u32, pitch as u32);
        let fk = &self.fk;
        let (ia, ib) = pair(&mut self.img, c);
        let (la, lb) = pair(&mut self.luma, c);
        let (oa, ob) = pair(&mut self.origin, c);
        let mut b = st.launch_builder(&fk.remove_img);
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
        b.arg(&*oa).arg(ob).arg(&self.cols);
        b.arg(&k32).arg(&w32).arg(&h32).arg(&p32);
        // SAFETY: fast_remove_* take (si, di, sl, dl, sm?, dm?, so, dout,
        // cols, k, w, h, pitch); every plane holds h rows of `pitch`, cols
        // k increasing columns below w a row.
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
