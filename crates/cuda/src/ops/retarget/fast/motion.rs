//! Fast mode's view of motion on the device (src/ops/retarget/motion.rs
//! defines it): the global shift and the cut test, and the motion map.

use std::sync::Arc;

use cudarc::driver::{CudaStream, LaunchConfig, PushKernelArg};

use super::super::launch;
use super::{BLOCK, LEVELS, MS_LEVEL_X, State, linear, one_block};
use crate::error::Result;
use crate::{DevFrame, blocks, cuda_err};
use seamstream_core::ops::retarget::motion::{GROW, MOTION_CAP, MOVING_HIGH, MOVING_LOW};

impl State {
    /// The input's luma against the last frame's (FastState::observe): the
    /// global shift and the cut test on the device, read back; on a cut
    /// every slot is dropped, else the motion map moves on. Returns the
    /// shift, or `None` when a shot starts.
    pub(super) fn observe(
        &mut self,
        st: &Arc<CudaStream>,
        input: &DevFrame,
    ) -> Result<Option<(i32, i32)>> {
        let (w, h) = (self.width, self.height);
        self.k
            .luma(st, &input.data, &mut self.input_luma, (w, h, w))?;
        let mut shift = None;
        self.still = false;
        if self.has_last {
            let (sx, sy, cut, still) = self.shift_and_cut(st)?;
            if !cut {
                shift = Some((sx, sy));
                self.still = still;
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
                // A shot's first frame weighs no motion (FastState::observe:
                // share (0, 1)); its seams are followed as they settle.
                st.memcpy_htod(&[0i64, 1], &mut self.share)
                    .map_err(|e| cuda_err("retarget: clearing the motion's share", e))?;
            }
            Some((sx, sy)) if self.params.motion > 0 => self.update_motion(st, (sx, sy))?,
            Some(_) => {}
        }
        st.memcpy_dtod(&self.input_luma, &mut self.last)
            .map_err(|e| cuda_err("retarget: keeping the luma", e))?;
        if !self.still {
            // This frame's seams are placed or followed on this luma.
            st.memcpy_dtod(&self.input_luma, &mut self.reference)
                .map_err(|e| cuda_err("retarget: keeping the seams' luma", e))?;
        }
        self.has_last = true;
        Ok(shift)
    }

    /// The global shift (motion::global_shift) and the cut test
    /// (fast::is_cut) of the input against the last luma, and the still
    /// test (fast::within_noise) against the seams' luma: (x, y, cut,
    /// still).
    pub(super) fn shift_and_cut(&mut self, st: &Arc<CudaStream>) -> Result<(i32, i32, bool, bool)> {
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
        // The still test: the motion map's cells of the input against the
        // seams' luma, unmoved, into the map's scratch cells (this frame's
        // come later); the count of cells beyond the noise.
        st.memset_zeros(&mut self.unsettled)
            .map_err(|e| cuda_err("retarget: clearing the still test", e))?;
        let (zero, noise) = (0i32, self.params.noise);
        let scratch = &mut self.cells[2];
        let mut b = st.launch_builder(&fk.motion_cells);
        b.arg(&self.input_luma)
            .arg(&self.reference)
            .arg(&w32)
            .arg(&h32);
        b.arg(&zero).arg(&zero).arg(&noise).arg(&MOTION_CAP);
        b.arg(scratch).arg(&mut self.unsettled);
        let (cw, ch) = (w.div_ceil(4), h.div_ceil(4));
        let cfg = LaunchConfig {
            grid_dim: (blocks(cw, 32), blocks(ch, 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        // SAFETY: motion_cells takes (cur, last, w, h, sx, sy, noise, cap,
        // cells, moved); both planes hold w·h, cells ⌈w/4⌉·⌈h/4⌉, moved 1.
        unsafe { launch(&mut b, cfg, "the still test") }?;
        let state = st
            .clone_dtoh(&sh.state)
            .map_err(|e| cuda_err("retarget: reading the shift", e))?;
        let cut = st
            .clone_dtoh(&sh.cut)
            .map_err(|e| cuda_err("retarget: reading the cut test", e))?;
        let unsettled = st
            .clone_dtoh(&self.unsettled)
            .map_err(|e| cuda_err("retarget: reading the still test", e))?;
        let (sx, sy) = (state[MS_LEVEL_X + 4], state[MS_LEVEL_X + 5]);
        let cut = cut[0] > self.params.cut as u64 * cut[1];
        Ok((sx, sy, cut, unsettled[0] == 0))
    }

    /// The motion map after a frame with this shift (MotionMap::update):
    /// fresh cells, grown along the rows, then down the columns into the
    /// memory.
    pub(super) fn update_motion(
        &mut self,
        st: &Arc<CudaStream>,
        (sx, sy): (i32, i32),
    ) -> Result<()> {
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
}
