//! Fast mode's seams on the device (src/ops/retarget/temporal.rs and
//! passes.rs define them): followed from the last frame within a band, or
//! placed anew for a shot in passes of many seams.

use std::sync::Arc;

use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};

use super::super::dp::ANCHOR_ROWS;
use super::super::{PushOptional, launch, pair, per_pixel, per_row};
use super::{CHOOSE_THREADS, Shrink, State, linear, one_block};
use crate::error::{Error, Result};
use crate::{blocks, cuda_err};
use seamstream_core::ops::retarget::Energy;
use seamstream_core::ops::retarget::energy::luma_unit;
use seamstream_core::ops::retarget::passes::pass_sizes;
use seamstream_core::ops::retarget::temporal::{SETTLE_FOLLOWS, STACKED_PASSES};

/// Settling follows between two looks at whether the seams still move: a
/// look waits for the GPU, and a new shot settles in a few follows where
/// [`SETTLE_FOLLOWS`] is the most.
const SETTLE_BATCH: usize = 4;

impl State {
    /// Slot `slot`'s seams for the working frame (w×h at `pitch`, k to
    /// remove): kept on a still frame or followed from the last frame's
    /// when they belong to this shot, else placed anew and settled
    /// (Side::seams).
    #[allow(clippy::too_many_arguments)]
    pub(super) fn seams_for(
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
            // A still frame keeps the seams as they are.
            Some(_) if self.slots[slot].live && self.still => Ok(()),
            Some(shift) if self.slots[slot].live => self.follow(st, slot, pitch, (w, h), k, shift),
            _ => {
                self.place(st, slot, pitch, (w, h), k)?;
                self.slots[slot].live = true;
                self.settle(st, slot, pitch, (w, h), k)
            }
        }
    }

    /// Track::settle on the device: follows of the new seams on the frame
    /// they were placed on (no shift), on costs made once, until one moves
    /// nothing, as the CPU stops, or [`SETTLE_FOLLOWS`]. The GPU looks every
    /// [`SETTLE_BATCH`] follows (a look waits for it); the follows past the
    /// CPU's stop move nothing, so the seams are the CPU's.
    pub(super) fn settle(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
    ) -> Result<()> {
        self.follow_costs(st, pitch, (w, h))?;
        let mut done = 0;
        while done < SETTLE_FOLLOWS {
            let batch = SETTLE_BATCH.min(SETTLE_FOLLOWS - done);
            for f in 1..=batch {
                self.follow_step(st, slot, pitch, (w, h), k, (0, 0), f == batch)?;
            }
            done += batch;
            let moved = st
                .clone_dtoh(&self.settle_moved)
                .map_err(|e| cuda_err("retarget: reading whether the seams settled", e))?;
            // A follow that moves nothing is where the CPU stops; every
            // later one would move nothing either.
            if moved.first() == Some(&0) {
                break;
            }
        }
        Ok(())
    }

    /// Track::follow on the device: every seam's band DP around the last
    /// frame's moved by `shift`, the paths sorted in each row, spread apart.
    #[allow(clippy::too_many_arguments)]
    pub(super) fn follow(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
        shift: (i32, i32),
    ) -> Result<()> {
        self.follow_costs(st, pitch, (w, h))?;
        self.follow_step(st, slot, pitch, (w, h), k, shift, false)
    }

    /// The costs a follow reads besides the working luma, motion and mask:
    /// the energy map (every kind but forward) and the gradient sums.
    fn follow_costs(
        &mut self,
        st: &Arc<CudaStream>,
        pitch: usize,
        (w, h): (usize, usize),
    ) -> Result<()> {
        let c = self.cur;
        if let Some(e) = &mut self.energy {
            self.k.energy_full(st, &self.luma[c], e, (w, h, pitch))?;
        }
        let (w32, p32, g32) = (w as u32, pitch as u32, (pitch + 1) as u32);
        let mut b = st.launch_builder(&self.fk.gradient_sums);
        b.arg(&self.luma[c])
            .arg(&p32)
            .arg(&w32)
            .arg(&mut self.grad)
            .arg(&g32);
        // SAFETY: gradient_sums takes (luma, pitch, w, out, opitch), one
        // block a row; luma holds h rows of `pitch`, out h rows of
        // pitch + 1 ≥ w + 1.
        unsafe { launch(&mut b, per_row(h, 256), "the gradient sums") }
    }

    /// One follow on the costs of [`State::follow_costs`]: the band DP,
    /// the sort and the spreading, into slot `slot`'s seams; with `check`,
    /// `settle_moved` says afterwards whether any seam moved.
    #[allow(clippy::too_many_arguments)]
    fn follow_step(
        &mut self,
        st: &Arc<CudaStream>,
        slot: usize,
        pitch: usize,
        (w, h): (usize, usize),
        k: usize,
        (sx, sy): (i32, i32),
        check: bool,
    ) -> Result<()> {
        let c = self.cur;
        let (w32, h32, p32, k32, g32) = (
            w as u32,
            h as u32,
            pitch as u32,
            k as u32,
            (pitch + 1) as u32,
        );
        let fk = &self.fk;
        let unit = luma_unit(self.params.energy) as i64;
        let band = self.params.band as i32;
        let forward = i32::from(self.params.energy == Energy::Forward);
        let per_level = self.params.coherence as i64 * unit;
        let motion_num = self.params.motion as i64 * unit;
        let hundred = 100i64;
        let mask = self.mask.as_ref().map(|m| &m[c]);
        let motion = self.motion.as_ref().map(|m| &m[c]);
        let mut b = st.launch_builder(&fk.band_costs);
        b.arg(&self.slots[slot].seams).arg(&k32).arg(&sx).arg(&sy);
        b.arg(&self.luma[c])
            .opt(self.energy.as_ref())
            .opt(motion)
            .opt(mask);
        b.arg(&p32).arg(&self.grad).arg(&g32).arg(&w32).arg(&h32);
        b.arg(&band).arg(&forward).arg(&per_level).arg(&hundred);
        b.arg(&motion_num).arg(&hundred).arg(&self.share);
        b.arg(&mut self.band_own)
            .arg(&mut self.band_fwd)
            .arg(&mut self.centres);
        let cfg = LaunchConfig {
            grid_dim: (blocks(k * h, 8), 1, 1),
            block_dim: (256, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: band_costs takes (seams, k, sx, sy, luma, energy?,
        // motion?, mask?, pitch, grad, gpitch, w, h, band, forward,
        // per_level, per_level_div, motion_num, motion_den, share, own, fwd,
        // centres), one warp a seam and row; share holds 2 (written with the
        // motion map, or (0, 1) at a cut); the planes hold h rows of
        // `pitch`, grad h rows of gpitch, seams and centres k·h, own and fwd
        // 32·k·h (prepare sized them for the largest shrink); 2·band + 1 ≤ 31.
        unsafe { launch(&mut b, cfg, "the band DP's costs") }?;
        let mut b = st.launch_builder(&fk.band_dp);
        b.arg(&k32).arg(&w32).arg(&h32).arg(&band);
        b.arg(&self.band_own).arg(&self.band_fwd);
        b.arg(&mut self.back)
            .arg(&self.centres)
            .arg(&mut self.paths);
        let cfg = LaunchConfig {
            grid_dim: (blocks(k, 4), 1, 1),
            block_dim: (128, 1, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: band_dp takes (k, w, h, band, own, fwd, back, centres,
        // paths), one warp a seam; own and fwd hold 32·k·h (band_costs
        // wrote them), back, centres and paths k·h.
        unsafe { launch(&mut b, cfg, "the band DP") }?;
        self.sort_rows(st, h, k)?;
        self.place_seams(st, h, k, w, pitch, true)?;
        let n = k * h;
        if check {
            st.memset_zeros(&mut self.settle_moved)
                .map_err(|e| cuda_err("retarget: clearing the settling's flag", e))?;
            let n32 = n as u32;
            let mut b = st.launch_builder(&self.fk.seams_differ);
            b.arg(&self.cols)
                .arg(&self.slots[slot].seams)
                .arg(&n32)
                .arg(&mut self.settle_moved);
            // SAFETY: seams_differ takes (a, b, n, flag); cols and the
            // slot's seams hold k·h ≥ n, flag 1.
            unsafe { launch(&mut b, linear(n), "comparing the seams") }?;
        }
        let (cols, seams) = (&self.cols, &mut self.slots[slot].seams);
        st.memcpy_dtod(&cols.slice(..n), &mut seams.slice_mut(..n))
            .map_err(|e| cuda_err("retarget: keeping the seams", e))
    }

    /// `paths` (k a row) sorted into `sorted`.
    pub(super) fn sort_rows(&mut self, st: &Arc<CudaStream>, h: usize, k: usize) -> Result<()> {
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
    pub(super) fn place_seams(
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
    pub(super) fn place(
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
        // stacked, fine and out n; one block of CHOOSE_THREADS.
        unsafe {
            launch(
                &mut b,
                one_block(CHOOSE_THREADS as u32),
                "choosing the start",
            )
        }
    }

    /// carve_in_passes on the device: `count` seams of the working luma and
    /// mask (w×h at `pitch`) in `passes` passes, as original columns sorted
    /// in each row, into `placed[into]`.
    pub(super) fn passes(
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
}
