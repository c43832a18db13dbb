//! GPU `reframe` (kernels/reframe.cu): the same frames as the CPU's
//! (src/ops/reframe/render.rs), step by step, over the same tables.
//!
//! The decisions are the CPU's own code: a [`Director`] cloned from the op
//! plans each frame. A plan made ahead (every file `run` renders) needs
//! nothing from the GPU; live planning reads back each frame's thumbnails
//! (a few hundred kilobytes, and on every `FACE_EVERY`-th frame the face picture)
//! made on the device by the CPU's box means. Then:
//!
//! - the window is copied (a crop at full scale) or resampled by the row
//!   and column passes over [`Taps`] tables uploaded once a size;
//! - a narrowing resamples the window by the tables that keep the frame's
//!   subjects at the window's scale and narrow the rest, made on the host
//!   and uploaded each frame;
//! - padding is a fill, or the backdrop: the window's centre shrunk, blurred
//!   twice each way, enlarged and darkened, before the picture is copied
//!   onto it.

use std::collections::{HashMap, VecDeque};

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use crate::color::Matrix;
use crate::error::{Error, Result};
use crate::frame::{Plane, Rgba};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, cuda_err};
use seamstream_core::ops::reframe::analyze::{Thumbs, face_factor, face_frame, thumb_factor};
use seamstream_core::ops::reframe::geometry::{Layout, Rect};
use seamstream_core::ops::reframe::plan::FramePlan;
use seamstream_core::ops::reframe::render::{
    BLUR_PASSES, BLUR_RADIUS, NARROW_RADIUS, Narrower, Pad, Taps, backdrop_size, backdrop_source,
    solid,
};
use seamstream_core::ops::reframe::{Director, Record, Reframe, Target};

const FILE: &str = "reframe.cu";

/// The GPU half of `reframe`.
pub struct GpuReframe {
    target: Target,
    pad: Pad,
    director: Director,
    record: Option<std::sync::Arc<std::sync::Mutex<Record>>>,
}

impl GpuReframe {
    pub fn new(op: &Reframe) -> Self {
        GpuReframe {
            target: op.target,
            pad: op.pad,
            director: op.director.clone(),
            record: op.record.clone(),
        }
    }
}

impl GpuOp for GpuReframe {
    fn name(&self) -> &'static str {
        "reframe"
    }

    fn output(&self, w: usize, h: usize, format: DevFormat) -> Result<(usize, usize, DevFormat)> {
        let (ow, oh) = self.target.size(w, h)?;
        Ok((ow, oh, format))
    }

    fn kernel_files(&self, gpu: &Gpu) -> Vec<String> {
        let _ = gpu;
        vec![FILE.to_string()]
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let out = self.target.size(w, h)?;
        let px = match format {
            DevFormat::Rgba => "u8x4",
            DevFormat::Gray => "u8",
        };
        let f = |name: &str| gpu.function(FILE, &format!("{name}_{px}"));
        let st = gpu.stream();
        let (tf, ff) = (thumb_factor(w, h), face_factor(w, h));
        let (tw, th) = (w / tf, h / tf);
        let (fw, fh) = (w / ff, h / ff);
        let alloc = |n: usize, what: &str| -> Result<CudaSlice<u8>> {
            st.alloc_zeros::<u8>(n.max(1))
                .map_err(|e| cuda_err(&format!("reframe: allocating {what}"), e))
        };
        let live = self.director.needs_thumbs();
        Ok(Box::new(Ready {
            director: self.director.clone(),
            pad: self.pad,
            record: self.record.clone(),
            input: (w, h),
            out,
            format,
            k: Kernels {
                thumb: f("thumb")?,
                face: f("face_luma")?,
                rows: f("rows")?,
                cols: f("cols")?,
                copy: f("copy_rect")?,
                blur: f("blur")?,
                fill: f("fill")?,
            },
            thumb: if live {
                Some(alloc(tw * th * 4, "the thumbnail")?)
            } else {
                None
            },
            face: if live {
                Some(alloc(fw * fh, "the face picture")?)
            } else {
                None
            },
            sizes: ((tf, tw, th), (ff, fw, fh)),
            tables: HashMap::new(),
            mid: None,
            small: None,
            narrower: Narrower::default(),
            held: VecDeque::new(),
            spare: Vec::new(),
        }))
    }
}

struct Kernels {
    thumb: CudaFunction,
    face: CudaFunction,
    rows: CudaFunction,
    cols: CudaFunction,
    copy: CudaFunction,
    blur: CudaFunction,
    fill: CudaFunction,
}

/// A resampling table on the device.
struct DevTaps {
    taps: u32,
    first: CudaSlice<u32>,
    weights: CudaSlice<u16>,
}

struct Ready {
    director: Director,
    pad: Pad,
    record: Option<std::sync::Arc<std::sync::Mutex<Record>>>,
    input: (usize, usize),
    out: (usize, usize),
    format: DevFormat,
    k: Kernels,
    thumb: Option<CudaSlice<u8>>,
    face: Option<CudaSlice<u8>>,
    /// (factor, width, height) of the thumbnail and the face picture.
    sizes: ((usize, usize, usize), (usize, usize, usize)),
    /// Tables by (from, to) length.
    tables: HashMap<(usize, usize), DevTaps>,
    /// The row pass's 16-bit sums, grown as needed.
    mid: Option<CudaSlice<u16>>,
    /// The backdrop at its small size, and its blur's scratch.
    small: Option<[DevFrame; 2]>,
    narrower: Narrower,
    /// Live look-ahead: copies of the frames seen and not yet framed,
    /// oldest first, and spare ones to copy the next into (made on the
    /// first frames, [`Director::delay`] + 1 in all).
    held: VecDeque<DevFrame>,
    spare: Vec<DevFrame>,
}

/// 32×8 threads a block, a thread a pixel of a w×h area.
fn per_pixel(w: usize, h: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks(w.max(1), 32), blocks(h.max(1), 8), 1),
        block_dim: (32, 8, 1),
        shared_mem_bytes: 0,
    }
}

fn launch(b: &mut cudarc::driver::LaunchArgs, cfg: LaunchConfig, what: &str) -> Result<()> {
    // SAFETY: every caller pushes the arguments of the kernel it launches,
    // in order and type, over buffers that hold what the kernel reads and
    // writes for `cfg` (checked where they are made).
    unsafe { b.launch(cfg) }
        .map(|_| ())
        .map_err(|e| cuda_err(&format!("reframe: launching {what}"), e))
}

/// A table on the device.
fn upload(gpu: &Gpu, t: &Taps) -> Result<DevTaps> {
    let st = gpu.stream();
    let up = |e| cuda_err("reframe: uploading a resampling table", e);
    Ok(DevTaps {
        taps: t.taps as u32,
        first: st.clone_htod(&t.first).map_err(up)?,
        weights: st.clone_htod(&t.weights).map_err(up)?,
    })
}

/// The row and column passes of a resampling, with their scratch.
struct Pass<'a> {
    k: &'a Kernels,
    format: DevFormat,
    /// The row pass's 16-bit sums, grown as needed.
    mid: &'a mut Option<CudaSlice<u16>>,
}

impl Pass<'_> {
    /// `src` (sw wide) in rectangle `r` resampled by the tables `tx` and
    /// `ty`, written at `at` of `dst` (dw wide); `darken` for the backdrop.
    #[allow(clippy::too_many_arguments)]
    fn run(
        self,
        gpu: &Gpu,
        (src, sw): (&CudaSlice<u8>, usize),
        r: Rect,
        (tx, ty): (&DevTaps, &DevTaps),
        (dst, dw): (&mut CudaSlice<u8>, usize),
        at: (usize, usize),
        darken: bool,
    ) -> Result<()> {
        let (w, h) = (tx.first.len(), ty.first.len());
        let c = self.format.bytes_per_pixel();
        let need = w * r.h * c;
        if self.mid.as_ref().is_none_or(|m| m.len() < need) {
            *self.mid = Some(
                gpu.stream()
                    .alloc_zeros::<u16>(need.max(1))
                    .map_err(|e| cuda_err("reframe: allocating the row pass", e))?,
            );
        }
        let Some(mid) = self.mid.as_mut() else {
            return Err(Error::Unsupported("reframe: no row pass buffer".into()));
        };
        let st = gpu.stream();
        let (sw32, x0, y0, rows, w32) = (sw as u32, r.x as u32, r.y as u32, r.h as u32, w as u32);
        let mut b = st.launch_builder(&self.k.rows);
        b.arg(src).arg(&sw32).arg(&x0).arg(&y0).arg(&rows);
        b.arg(&tx.first)
            .arg(&tx.weights)
            .arg(&tx.taps)
            .arg(&mut *mid)
            .arg(&w32);
        launch(&mut b, per_pixel(w, r.h), "the row pass")?;
        let (h32, dw32, ox, oy, dark) = (
            h as u32,
            dw as u32,
            at.0 as u32,
            at.1 as u32,
            i32::from(darken),
        );
        let mut b = st.launch_builder(&self.k.cols);
        b.arg(&*mid)
            .arg(&w32)
            .arg(&ty.first)
            .arg(&ty.weights)
            .arg(&ty.taps);
        b.arg(&h32).arg(dst).arg(&dw32).arg(&ox).arg(&oy).arg(&dark);
        launch(&mut b, per_pixel(w, h), "the column pass")
    }
}

impl Ready {
    /// The table from `n` to `m` samples, uploaded on first use.
    fn table(&mut self, gpu: &Gpu, n: usize, m: usize) -> Result<()> {
        if self.tables.contains_key(&(n, m)) {
            return Ok(());
        }
        let t = upload(gpu, &Taps::new(n, m))?;
        self.tables.insert((n, m), t);
        Ok(())
    }

    /// `src` (sw wide) in rectangle `r` resampled to `w`×`h`, written at
    /// `at` of `dst` (dw wide); `darken` for the backdrop.
    #[allow(clippy::too_many_arguments)]
    fn resample(
        &mut self,
        gpu: &Gpu,
        (src, sw): (&CudaSlice<u8>, usize),
        r: Rect,
        (w, h): (usize, usize),
        dst: &mut CudaSlice<u8>,
        dw: usize,
        at: (usize, usize),
        darken: bool,
    ) -> Result<()> {
        self.table(gpu, r.w, w)?;
        self.table(gpu, r.h, h)?;
        let (Some(tx), Some(ty)) = (self.tables.get(&(r.w, w)), self.tables.get(&(r.h, h))) else {
            return Err(Error::Unsupported("reframe: a table went missing".into()));
        };
        let pass = Pass {
            k: &self.k,
            format: self.format,
            mid: &mut self.mid,
        };
        pass.run(gpu, (src, sw), r, (tx, ty), (dst, dw), at, darken)
    }

    /// A `w`×`h` rectangle from `from` of `src` (sw wide) to `to` of `dst`
    /// (dw wide).
    #[allow(clippy::too_many_arguments)]
    fn copy(
        &self,
        gpu: &Gpu,
        (src, sw): (&CudaSlice<u8>, usize),
        from: (usize, usize),
        (w, h): (usize, usize),
        (dst, dw): (&mut CudaSlice<u8>, usize),
        to: (usize, usize),
    ) -> Result<()> {
        let a = [sw, from.0, from.1, w, h].map(|v| v as u32);
        let (dw32, ox, oy) = (dw as u32, to.0 as u32, to.1 as u32);
        let mut b = gpu.stream().launch_builder(&self.k.copy);
        b.arg(src)
            .arg(&a[0])
            .arg(&a[1])
            .arg(&a[2])
            .arg(&a[3])
            .arg(&a[4]);
        b.arg(dst).arg(&dw32).arg(&ox).arg(&oy);
        launch(&mut b, per_pixel(w, h), "a copy")
    }

    /// The frame's thumbnails, made on the device and read back.
    fn thumbs(&mut self, gpu: &Gpu, input: &DevFrame, index: usize) -> Result<Thumbs> {
        let ((tf, tw, th), (ff, fw, fh)) = self.sizes;
        let (Some(thumb), Some(face)) = (&mut self.thumb, &mut self.face) else {
            return Err(Error::Unsupported("reframe: no thumbnail buffers".into()));
        };
        let st = gpu.stream().clone();
        let (w32, tf32, tw32, th32) = (self.input.0 as u32, tf as u32, tw as u32, th as u32);
        let mut b = st.launch_builder(&self.k.thumb);
        b.arg(&input.data)
            .arg(&w32)
            .arg(&tf32)
            .arg(&mut *thumb)
            .arg(&tw32)
            .arg(&th32);
        launch(&mut b, per_pixel(tw, th), "the thumbnail")?;
        let faces = face_frame(index);
        if faces {
            let (kr, kg, kb) = Matrix::Bt709.weights();
            let (ff32, fw32, fh32) = (ff as u32, fw as u32, fh as u32);
            let mut b = st.launch_builder(&self.k.face);
            b.arg(&input.data).arg(&w32).arg(&ff32).arg(&mut *face);
            b.arg(&fw32).arg(&fh32).arg(&kr).arg(&kg).arg(&kb);
            launch(&mut b, per_pixel(fw, fh), "the face picture")?;
        }
        let down = |e| cuda_err("reframe: reading the thumbnails back", e);
        let bytes = st.clone_dtoh(&*thumb).map_err(down)?;
        let px: Vec<Rgba> = bytes[..tw * th * 4]
            .chunks_exact(4)
            .map(|c| [c[0], c[1], c[2], c[3]])
            .collect();
        let face = if faces {
            let bytes = st.clone_dtoh(&*face).map_err(down)?;
            Some(Plane::from_vec(fw, fh, bytes[..fw * fh].to_vec())?)
        } else {
            None
        };
        Ok(Thumbs {
            thumb: Plane::from_vec(tw, th, px)?,
            face,
        })
    }

    /// The padding of the whole output: a colour, or the backdrop.
    fn padding(
        &mut self,
        gpu: &Gpu,
        input: &DevFrame,
        window: Rect,
        output: &mut DevFrame,
    ) -> Result<()> {
        let (ow, oh) = self.out;
        match self.pad {
            Pad::Color(rgb) => {
                let p: Rgba = match self.format {
                    DevFormat::Rgba => solid::<Rgba>(rgb),
                    DevFormat::Gray => {
                        let v = solid::<u8>(rgb);
                        [v, v, v, 255]
                    }
                };
                let px = u32::from_le_bytes(p);
                let (w32, h32) = (ow as u32, oh as u32);
                let mut b = gpu.stream().launch_builder(&self.k.fill);
                b.arg(&mut output.data).arg(&w32).arg(&h32).arg(&px);
                launch(&mut b, per_pixel(ow, oh), "the padding")
            }
            Pad::Blur => {
                let (bw, bh) = backdrop_size(self.out);
                if self
                    .small
                    .as_ref()
                    .is_none_or(|s| (s[0].width, s[0].height) != (bw, bh))
                {
                    self.small = Some([
                        DevFrame::alloc(gpu, bw, bh, self.format)?,
                        DevFrame::alloc(gpu, bw, bh, self.format)?,
                    ]);
                }
                let Some(mut small) = self.small.take() else {
                    return Err(Error::Unsupported("reframe: no backdrop buffers".into()));
                };
                let src = backdrop_source(window, self.out);
                let [a, b] = &mut small;
                self.resample(
                    gpu,
                    (&input.data, self.input.0),
                    src,
                    (bw, bh),
                    &mut a.data,
                    bw,
                    (0, 0),
                    false,
                )?;
                let (w32, h32, r) = (bw as u32, bh as u32, BLUR_RADIUS as i32);
                // Each pass: rows from `a` into `b`, then columns back.
                for _ in 0..BLUR_PASSES {
                    let mut l = gpu.stream().launch_builder(&self.k.blur);
                    let d0 = 0i32;
                    l.arg(&a.data)
                        .arg(&mut b.data)
                        .arg(&w32)
                        .arg(&h32)
                        .arg(&r)
                        .arg(&d0);
                    launch(&mut l, per_pixel(bw, bh), "the backdrop's blur")?;
                    let mut l = gpu.stream().launch_builder(&self.k.blur);
                    let d1 = 1i32;
                    l.arg(&b.data)
                        .arg(&mut a.data)
                        .arg(&w32)
                        .arg(&h32)
                        .arg(&r)
                        .arg(&d1);
                    launch(&mut l, per_pixel(bw, bh), "the backdrop's blur")?;
                }
                let res = self.resample(
                    gpu,
                    (&a.data, bw),
                    Rect::new(0, 0, bw, bh),
                    (ow, oh),
                    &mut output.data,
                    ow,
                    (0, 0),
                    true,
                );
                self.small = Some(small);
                res
            }
        }
    }

    /// The picture of a layout that does not carve, onto the output.
    fn place(
        &mut self,
        gpu: &Gpu,
        input: &DevFrame,
        lay: &Layout,
        output: &mut DevFrame,
    ) -> Result<()> {
        let c = lay.content;
        let w = lay.window;
        if (w.w, w.h) == lay.scaled {
            return self.copy(
                gpu,
                (&input.data, self.input.0),
                (w.x, w.y),
                (w.w, w.h),
                (&mut output.data, self.out.0),
                (c.x, c.y),
            );
        }
        self.resample(
            gpu,
            (&input.data, self.input.0),
            w,
            lay.scaled,
            &mut output.data,
            self.out.0,
            (c.x, c.y),
            false,
        )
    }

    /// A narrowing: the window resampled by the tables that keep the
    /// subjects at its scale and narrow the rest ([`narrow_tables`], made
    /// on the host each frame), onto the output.
    fn narrow(
        &mut self,
        gpu: &Gpu,
        input: &DevFrame,
        lay: &Layout,
        plan: &FramePlan,
        output: &mut DevFrame,
    ) -> Result<()> {
        let around = self.director.around(NARROW_RADIUS);
        let (tx, ty) = self.narrower.tables(lay, plan, around);
        let (tx, ty) = (upload(gpu, &tx)?, upload(gpu, &ty)?);
        let c = lay.content;
        let pass = Pass {
            k: &self.k,
            format: self.format,
            mid: &mut self.mid,
        };
        pass.run(
            gpu,
            (&input.data, self.input.0),
            lay.window,
            (&tx, &ty),
            (&mut output.data, self.out.0),
            (c.x, c.y),
            false,
        )
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let thumbs = if self.director.needs_thumbs() {
            let i = self.director.frame();
            Some(self.thumbs(gpu, input, i)?)
        } else {
            None
        };
        let plan = self.director.next(self.input, self.out, thumbs)?;
        if self.director.delay() == 0 {
            return match plan {
                Some(plan) => self.frame(gpu, input, plan, output),
                None => self.placeholder(gpu, output),
            };
        }
        // Looking ahead: this frame is copied to wait its turn, and the
        // oldest held one is framed (the copies are on the stream, in
        // order, so a copy is reused only after the work that reads it).
        let mut copy = match self.spare.pop() {
            Some(f) => f,
            None => DevFrame::alloc(gpu, input.width, input.height, input.format)?,
        };
        gpu.stream()
            .memcpy_dtod(&input.data, &mut copy.data)
            .map_err(|e| cuda_err("reframe: holding a frame to look ahead", e))?;
        self.held.push_back(copy);
        let Some(plan) = plan else {
            return self.placeholder(gpu, output);
        };
        let Some(oldest) = self.held.pop_front() else {
            return Err(Error::Unsupported(
                "reframe: a planned frame is not held".into(),
            ));
        };
        let done = self.frame(gpu, &oldest, plan, output);
        self.spare.push(oldest);
        done
    }
}

impl Ready {
    /// `input` framed by `plan` into `output`, and the plan recorded.
    fn frame(
        &mut self,
        gpu: &Gpu,
        input: &DevFrame,
        plan: FramePlan,
        output: &mut DevFrame,
    ) -> Result<()> {
        let lay = plan.layout(self.out);
        if lay.content != Rect::new(0, 0, self.out.0, self.out.1) {
            self.padding(gpu, input, lay.window, output)?;
        }
        if lay.carved != lay.scaled {
            self.narrow(gpu, input, &lay, &plan, output)?;
        } else {
            self.place(gpu, input, &lay, output)?;
        }
        if let Some(r) = &self.record
            && let Ok(mut r) = r.lock()
        {
            r.push(plan, self.director.live_picture());
        }
        Ok(())
    }

    /// Black: what goes out while the look-ahead fills (dropped by the
    /// engine, as the CPU's placeholders are).
    fn placeholder(&self, gpu: &Gpu, output: &mut DevFrame) -> Result<()> {
        let (ow, oh) = self.out;
        let (w32, h32) = (ow as u32, oh as u32);
        let px = u32::from_le_bytes([0, 0, 0, 255]);
        let mut b = gpu.stream().launch_builder(&self.k.fill);
        b.arg(&mut output.data).arg(&w32).arg(&h32).arg(&px);
        launch(&mut b, per_pixel(ow, oh), "the placeholder")
    }
}
