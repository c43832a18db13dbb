//! GPU `retarget` (kernels/retarget.cu), exact mode: seam carving whose
//! every seam is the CPU's. `src/ops/retarget.rs` defines the rules; this
//! file follows its control flow step for step (greedy order while both
//! sides shrink, then the width, then the height on the transposed frame;
//! enlarging in rounds of at most half the width).
//!
//! The frame is copied once into a working buffer with a fixed row pitch
//! and stays on the device, with its luma, energy, mask, back-pointers and
//! seams. A seam is three launches: the DP (one block sweeps every row, then
//! takes the argmin and walks back), the removal (one block a row, in place)
//! and the energy update in the band the removal disturbed. The host reads
//! back only the two candidate costs of each greedy step (it has to choose
//! a side). Every buffer is allocated in `prepare`.

use std::sync::Arc;

use cudarc::driver::{
    CudaFunction, CudaSlice, CudaStream, LaunchArgs, LaunchConfig, PushKernelArg, sys,
};

use crate::cuda::{DevFormat, DevFrame, Gpu, GpuOp, blocks, cuda_err};
use crate::error::{Error, Result};
use crate::frame::Plane;
use crate::ops::gray::Matrix;
use crate::ops::params::SizeSpec;
use crate::ops::retarget::{
    CarveOptions, Energy, MASK_PROTECT, MASK_REMOVE, OUTSIDE, PROTECT_COST, REMOVE_BONUS, Retarget,
    check_target, combine_masks,
};

const FILE: &str = "retarget.cu";
/// DP_THREADS and ANCHOR_ROWS of kernels/retarget.cu.
const DP_THREADS: usize = 1024;
const ANCHOR_ROWS: usize = 32;
/// Columns a DP thread can own (the widest `seam_dp_k*`).
const DP_MAX_COLS: usize = 16;
/// The longest side (input or target) the DP can sweep.
const MAX_SIDE: usize = DP_THREADS * DP_MAX_COLS;
/// Static shared memory of the DP kernels, kept out of the dynamic budget.
const DP_STATIC_SHARED: usize = 4096;

// The kernels read the mask codes as 1 (protect) and -1 (remove).
const _: () = assert!(MASK_PROTECT == 1 && MASK_REMOVE == -1);

/// An absent plane: the kernels test their optional pointers for null.
static NULL: u64 = 0;

/// Pushes an optional buffer, or null.
trait PushOptional<'a> {
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
unsafe fn launch(b: &mut LaunchArgs, cfg: LaunchConfig, what: &str) -> Result<()> {
    // SAFETY: the caller's contract.
    unsafe { b.launch(cfg) }
        .map(|_| ())
        .map_err(|e| cuda_err(&format!("retarget: launching {what}"), e))
}

/// 32×8 threads a block, a thread a pixel of a w×h plane.
fn per_pixel(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks(w, 32), blocks(h, 8), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

/// One block a row.
fn per_row(h: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (h.max(1) as u32, 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// Dynamic shared memory of the DP for width `w`: two cumulative rows with
/// an OUTSIDE cell at each end, and two u16 jump rows.
fn dp_shared_bytes(w: usize) -> usize {
    2 * (w + 2) * 8 + 2 * w * 2
}

/// The same in i64 cells, for the global fallback.
fn dp_rows_len(w: usize) -> usize {
    dp_shared_bytes(w).div_ceil(8)
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
fn pair<T>(p: &mut [T; 2], cur: usize) -> (&mut T, &mut T) {
    let [a, b] = p;
    if cur == 0 { (a, b) } else { (b, a) }
}

fn alloc<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    stream: &Arc<CudaStream>,
    n: usize,
    what: &str,
) -> Result<CudaSlice<T>> {
    stream
        .alloc_zeros::<T>(n.max(1))
        .map_err(|e| cuda_err(&format!("retarget: allocating {what}"), e))
}

/// The kernels, for one pixel format.
struct Kernels {
    copy_img: CudaFunction,
    transpose_img: CudaFunction,
    remove_rows: CudaFunction,
    remove_cols: CudaFunction,
    insert: CudaFunction,
    /// RGBA to luma; `None` for gray, whose luma is a copy.
    luma_rgba: Option<CudaFunction>,
    copy_u8: CudaFunction,
    transpose_u8: CudaFunction,
    energy_full: CudaFunction,
    energy_band: CudaFunction,
    origin_init: CudaFunction,
    /// `seam_dp_k1` … `seam_dp_k16`: 1, 2, 4, 8, 16 columns a thread.
    dp: Vec<CudaFunction>,
    dp_global: CudaFunction,
    /// Dynamic shared memory the DP may take.
    dp_shared_limit: usize,
    energy: Option<i32>,
    reach: i32,
}

impl Kernels {
    fn load(gpu: &Gpu, format: DevFormat, energy: Energy) -> Result<Kernels> {
        let f = |name: &str| gpu.function(FILE, name);
        let px = match format {
            DevFormat::Rgba => "u8x4",
            DevFormat::Gray => "u8",
        };
        let optin = gpu
            .ctx()
            .attribute(
                sys::CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN,
            )
            .map_err(|e| cuda_err("retarget: reading the shared memory limit", e))?;
        let dp_shared_limit = (optin.max(0) as usize).saturating_sub(DP_STATIC_SHARED);
        let dp = ["1", "2", "4", "8", "16"]
            .iter()
            .map(|k| {
                let func = f(&format!("seam_dp_k{k}"))?;
                func.set_attribute(
                    sys::CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                    dp_shared_limit as i32,
                )
                .map_err(|e| cuda_err("retarget: raising the DP's shared memory", e))?;
                Ok(func)
            })
            .collect::<Result<Vec<_>>>()?;
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
            dp,
            dp_global: f("seam_dp_global")?,
            dp_shared_limit,
            energy: energy_code(energy),
            reach: energy.reach() as i32,
        })
    }

    /// dst = src, w×h elements of the kernel's type (`copy_img` or `copy_u8`).
    fn copy(
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
    fn transpose(
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
    fn luma(
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
    fn energy_full(
        &self,
        st: &Arc<CudaStream>,
        luma: &CudaSlice<u8>,
        energy: &mut CudaSlice<u32>,
        (w, h, pitch): (usize, usize, usize),
    ) -> Result<()> {
        let kind = self.energy.unwrap_or(0);
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

    /// The best seam of a w×h plane into `seam` and its cost into `total`.
    fn dp(
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
    ) -> Result<()> {
        let (energy, mask, luma) = planes;
        let forward = i32::from(self.energy.is_none());
        let (w32, h32, p32) = (w as u32, h as u32, pitch as u32);
        let shared = dp_shared_bytes(w);
        let (func, shared) = if shared <= self.dp_shared_limit {
            let k = w.div_ceil(DP_THREADS).next_power_of_two();
            (&self.dp[k.trailing_zeros() as usize], shared)
        } else {
            (&self.dp_global, 0)
        };
        let DpScratch {
            back,
            anchors,
            rows,
            costs,
        } = scratch;
        let mut total = costs.slice_mut(total..total + 1);
        let mut b = st.launch_builder(func);
        b.opt(energy).opt(mask).arg(luma);
        b.arg(&w32).arg(&h32).arg(&p32).arg(&forward);
        b.arg(&PROTECT_COST).arg(&REMOVE_BONUS).arg(&OUTSIDE);
        b.arg(back).arg(anchors).arg(seam).arg(&mut total);
        if shared == 0 {
            b.opt_mut(rows.as_mut());
        }
        let cfg = LaunchConfig {
            grid_dim: (1, 1, 1),
            block_dim: (DP_THREADS as u32, 1, 1),
            shared_mem_bytes: shared as u32,
        };
        // SAFETY: seam_dp_k* take (energy?, mask?, luma, w, h, pitch,
        // forward, protect, bonus, outside, back, anchors, seam, total) and
        // seam_dp_global also `rows`, allocated for the widest plane when it
        // can be needed; w ≤ 1024·16 (checked in prepare); the planes and
        // `back` hold h rows of `pitch`, `anchors` ⌈(h−1)/32⌉ rows of
        // `pitch`, `seam` h entries; the shared bytes are those the kernel
        // carves for w and within the limit set on the function.
        unsafe { launch(&mut b, cfg, "the seam DP") }
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
    fn insert(
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

/// What the DP writes besides the seam.
struct DpScratch {
    back: CudaSlice<i8>,
    anchors: CudaSlice<u16>,
    /// The DP's rows in global memory, for planes too wide for shared.
    rows: Option<CudaSlice<i64>>,
    /// The total cost of the last seam of each kind (vertical, horizontal).
    costs: CudaSlice<i64>,
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
        let mask_src = match mask {
            Some(m) => {
                let bytes: Vec<u8> = m.into_packed_vec().into_iter().map(|v| v as u8).collect();
                let mut d = alloc::<u8>(st, bytes.len(), "the mask")?;
                st.memcpy_htod(&bytes, &mut d)
                    .map_err(|e| cuda_err("retarget: uploading the mask", e))?;
                Some(d)
            }
            None => None,
        };
        let has_mask = mask_src.is_some();
        let dp_rows = (dp_shared_bytes(side) > k.dp_shared_limit)
            .then(|| alloc::<i64>(st, dp_rows_len(side), "the DP rows"))
            .transpose()?;
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
            dp: DpScratch {
                back: alloc(st, cap, "the DP steps")?,
                anchors: alloc(st, side.div_ceil(ANCHOR_ROWS) * side, "the DP jumps")?,
                rows: dp_rows,
                costs: alloc(st, 2, "the seam costs")?,
            },
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
        k.dp(&st, planes, (w, h, pitch), &mut self.dp, seam_v, 0)?;

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
        k.dp(&st, planes, (h, w, pitch_t), &mut self.dp, seam_h, 1)?;

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
        k.dp(st, planes, (w, h, pitch), &mut self.dp, seam, 0)?;
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

/// The GPU half of [`Retarget`] in exact mode.
pub struct GpuRetarget {
    width: Option<SizeSpec>,
    height: Option<SizeSpec>,
    energy: Energy,
    protect: Option<Plane<u8>>,
    remove: Option<Plane<u8>>,
    state: Option<State>,
}

impl GpuRetarget {
    pub fn new(op: &Retarget) -> Self {
        GpuRetarget {
            width: op.width,
            height: op.height,
            energy: op.energy,
            protect: op.protect.clone(),
            remove: op.remove.clone(),
            state: None,
        }
    }

    /// The target size for a w×h input, as `Retarget::output_size`.
    fn target(&self, w: usize, h: usize) -> Result<(usize, usize)> {
        let tw = self.width.map_or(w, |s| s.resolve(w));
        let th = self.height.map_or(h, |s| s.resolve(h));
        check_target("width", tw, w)?;
        check_target("height", th, h)?;
        Ok((tw, th))
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
        self.state = Some(State::new(gpu, self, (w, h), format)?);
        Ok(())
    }

    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let s = self
            .state
            .as_mut()
            .ok_or_else(|| Error::Device("retarget: run before prepare".into()))?;
        let (tw, th) = s.target;
        if (input.width, input.height, input.format) != (s.width, s.height, s.format)
            || (output.width, output.height, output.format) != (tw, th, s.format)
        {
            return Err(Error::BadFrame(format!(
                "retarget was prepared for {}x{} {:?} to {tw}x{th}, not {input:?} to {output:?}",
                s.width, s.height, s.format
            )));
        }
        s.carve(gpu, input, output)
    }
}
