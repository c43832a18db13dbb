//! GPU `retarget` in exact mode: seam carving whose every seam is the
//! CPU's. src/ops/retarget/exact.rs defines the rules; this file follows
//! its control flow step for step (greedy order while both sides shrink,
//! then the width, then the height on the transposed frame; enlarging in
//! rounds of at most half the width).
//!
//! The frame is copied once into a working buffer with a fixed row pitch
//! and stays on the device, with its luma, energy, mask, back-pointers and
//! seams. A seam is the DP ([`SeamDp`](super::SeamDp): the packing of each
//! pixel's costs, then a cluster of 8 SMs sweeps the rows, one at a time
//! or, for forward energy without a mask, four rows a step, and the seam is
//! walked back), the removal (one block a row, in place) and the energy
//! update in the band the removal disturbed. The host reads back only the
//! two candidate costs of each greedy step (it has to choose a side). Every
//! buffer is allocated in `prepare`; a frame that only shrinks replays its
//! seams' launches from a CUDA graph.

use std::sync::Arc;

use cudarc::driver::{CudaGraph, CudaSlice, CudaStream, LaunchConfig, PushKernelArg, sys};

use super::dp::{DpScratch, MAX_SIDE};
use super::{
    Carve, GpuRetarget, Kernels, PushOptional, alloc, launch, pair, per_pixel, per_row, upload_mask,
};
use crate::error::{Error, Result};
use crate::{DevFormat, DevFrame, Gpu, blocks, capture, cuda_err};
use seamstream_core::ops::retarget::{CarveOptions, combine_masks};

/// Everything `run` needs, built by `prepare` for one input size and format.
pub(super) struct State {
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
    /// The seams of a frame that only shrinks, width then height: the same
    /// launches every frame (only the greedy order depends on the content),
    /// captured once into a CUDA graph and replayed, so that 6 launches a
    /// seam cost the GPU no gaps between them. `None` inside: not
    /// capturable, launched directly (as with `SEAMSTREAM_GRAPHS=0`).
    graphs: [Option<Option<Replay>>; 2],
}

/// A captured carve.
struct Replay(CudaGraph);
// SAFETY: a graph's handles belong to the CUDA context, not to a thread;
// `CudaGraph::launch` binds the context to the calling thread, and the
// graph is only reached through `&mut State`.
unsafe impl Send for Replay {}

impl State {
    pub(super) fn new(
        gpu: &Gpu,
        op: &GpuRetarget,
        (w, h): (usize, usize),
        format: DevFormat,
    ) -> Result<State> {
        let (tw, th) = op.settings.target(w, h)?;
        let (pitch, pitch_t) = (w.max(tw), h.max(th));
        let side = pitch.max(pitch_t);
        if side > MAX_SIDE {
            return Err(Error::GpuLimit(format!(
                "retarget on the GPU takes sides up to {MAX_SIDE} pixels, not {w}x{h} to {tw}x{th}"
            )));
        }
        let opts = CarveOptions {
            energy: op.settings.energy,
            protect: op.settings.protect.as_ref(),
            remove: op.settings.remove.as_ref(),
        };
        let mask = combine_masks(w, h, &opts)?;
        let k = Kernels::load(gpu, format, op.settings.energy)?;
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
            // SEAMSTREAM_GRAPHS=0: launched directly, to compare.
            graphs: if crate::switched_off("SEAMSTREAM_GRAPHS") {
                [Some(None), Some(None)]
            } else {
                [None, None]
            },
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
        let replay = w == w0 && h == h0;
        self.shrink(&st, 0, replay, pitch, &mut w, h, tw)?;
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
        self.shrink(&st, 1, replay, pitch_t, &mut side, tw, th)?;
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

    /// [`State::carve_width`], through graph `which` (0: the width, 1: the
    /// height) when the frame only shrinks and `replay` (the greedy order
    /// did not run): captured the first time, replayed after.
    #[allow(clippy::too_many_arguments)]
    fn shrink(
        &mut self,
        st: &Arc<CudaStream>,
        which: usize,
        replay: bool,
        pitch: usize,
        w: &mut usize,
        h: usize,
        target: usize,
    ) -> Result<()> {
        // (Inside a capture already, as the bench's, the launches go into it.)
        let capturing =
            st.capture_status() != Ok(sys::CUstreamCaptureStatus::CU_STREAM_CAPTURE_STATUS_NONE);
        if !replay || target >= *w || capturing {
            return self.carve_width(st, pitch, w, h, target);
        }
        if self.graphs[which].is_none() {
            let mut cw = *w;
            let captured = capture(st, || self.carve_width(st, pitch, &mut cw, h, target));
            self.graphs[which] = Some(captured.map(Replay));
        }
        match &self.graphs[which] {
            Some(Some(g)) => {
                g.0.launch()
                    .map_err(|e| cuda_err("retarget: replaying the seams", e))?;
                *w = target;
                Ok(())
            }
            _ => self.carve_width(st, pitch, w, h, target),
        }
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

impl Carve for State {
    fn shape(&self) -> ((usize, usize, DevFormat), (usize, usize)) {
        ((self.width, self.height, self.format), self.target)
    }
    fn carve(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        State::carve(self, gpu, input, output)
    }
}

/// The launches only exact mode makes.
impl Kernels {
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
}
