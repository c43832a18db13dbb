//! GPU `segment` (kernels/segment.cu): luma (RGBA only), its integral
//! tables ([`IntegralTables`], u32 sums and u64 squares), one split kernel
//! a level (every node of the level decides at once from its children's
//! statistics), one thread a pixel to find its leaf, a lock-free union-find
//! over the leaves (atomic hooking of the larger root under the smaller),
//! labels by pointer jumping with per-segment colour sums, then the
//! painting. Each root is the smallest leaf id of its set, the raster index
//! of the segment's first pixel, so labels and outputs are the CPU's
//! exactly. Every buffer is made in `prepare`.

use cudarc::driver::{CudaFunction, CudaSlice, DeviceRepr, LaunchConfig, PushKernelArg};

use super::integral::{IntegralTables, Luma, table_len};
use crate::error::{Error, Result};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, check_frames, cuda_err};
use seamstream_core::ops::segment::{Output, Segment, Settings};

/// MAX_LEVELS and struct Levels of kernels/segment.cu: per level its node
/// side and, above the leaves' level, its nodes a row and the start of its
/// split flags.
pub(crate) const MAX_LEVELS: usize = 11;

#[repr(C)]
#[derive(Clone, Copy, Default)]
struct Levels {
    side: [u32; MAX_LEVELS],
    nx: [u32; MAX_LEVELS],
    offset: [u32; MAX_LEVELS],
}

// SAFETY: plain `repr(C)` u32 arrays, laid out as the kernel's struct.
unsafe impl DeviceRepr for Levels {}

/// Kernels, one for each step; `sums` is the kernel that also adds colours
/// (output=mean), else the plain labelling one.
struct Kernels {
    split: CudaFunction,
    leaves: CudaFunction,
    merge: CudaFunction,
    labels: CudaFunction,
    paint: CudaFunction,
}

/// What `prepare` makes.
struct State {
    width: usize,
    height: usize,
    format: DevFormat,
    luma: Option<Luma>,
    tables: IntegralTables,
    sum: CudaSlice<u32>,
    sq: CudaSlice<u64>,
    levels: Levels,
    /// Levels that have split flags (the leaves' level has none).
    depth: u32,
    /// Nodes of each level with flags: (nx, ny).
    grids: Vec<(u32, u32)>,
    flags: CudaSlice<u8>,
    /// Per pixel: its leaf's id (the leaf's top-left pixel index).
    leaf: CudaSlice<u32>,
    /// Per leaf id: its union-find parent and its level.
    parent: CudaSlice<u32>,
    level: CudaSlice<u8>,
    /// Per pixel: its label.
    label: CudaSlice<u32>,
    /// Per root: sums of R, G, B (gray: the value) and the pixel count;
    /// one unread cell unless output=mean.
    sums: CudaSlice<u64>,
    kernels: Kernels,
}

#[derive(Clone)]
pub struct GpuSegment {
    settings: Settings,
    output: Output,
}

/// [`GpuSegment`] set up for one input size and format.
struct Ready {
    op: GpuSegment,
    state: State,
}

impl GpuSegment {
    pub fn new(op: &Segment) -> Self {
        GpuSegment {
            settings: op.settings,
            output: op.output,
        }
    }
}

/// A size as the kernels' u32.
fn side(n: usize) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::BadFrame(format!("segment: {n} is beyond u32")))
}

impl GpuOp for GpuSegment {
    fn name(&self) -> &'static str {
        "segment"
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        let n = w * h;
        // Labels are u32 pixel indices.
        side(n)?;
        let s = &self.settings;
        let depth = s.depth();
        let mut levels = Levels::default();
        let mut grids = Vec::new();
        let mut flags_len = 0usize;
        for l in 0..=depth as usize {
            let node = s.tile >> l;
            levels.side[l] = side(node)?;
            if l < depth as usize {
                let (nx, ny) = (w.div_ceil(node), h.div_ceil(node));
                levels.nx[l] = side(nx)?;
                levels.offset[l] = side(flags_len)?;
                grids.push((side(nx)?, side(ny)?));
                flags_len += nx * ny;
            }
        }
        side(flags_len)?;
        let pixel = match format {
            DevFormat::Rgba => "rgba",
            DevFormat::Gray => "gray",
        };
        let mean = self.output == Output::Mean;
        let paint = match self.output {
            Output::Mean => "mean",
            Output::Borders => "borders",
            Output::Labels => "labels",
        };
        let f = |name: &str| gpu.function("segment.cu", name);
        let kernels = Kernels {
            split: f("segment_split")?,
            leaves: f("segment_leaves")?,
            merge: f("segment_merge")?,
            labels: if mean {
                f(&format!("segment_labels_sums_{pixel}"))?
            } else {
                f("segment_labels")?
            },
            paint: f(&format!("segment_paint_{paint}_{pixel}"))?,
        };
        let stream = gpu.stream();
        let alloc = |what: &str, e| cuda_err(&format!("segment: allocating {what}"), e);
        let cells = n.max(1);
        Ok(Box::new(Ready {
            op: self.clone(),
            state: State {
                width: w,
                height: h,
                format,
                luma: Luma::new(gpu, w, h, format)?,
                tables: IntegralTables::new(gpu, w, h, true)?,
                sum: stream
                    .alloc_zeros::<u32>(table_len(w, h))
                    .map_err(|e| alloc("the table", e))?,
                sq: stream
                    .alloc_zeros::<u64>(table_len(w, h))
                    .map_err(|e| alloc("the squared table", e))?,
                levels,
                depth,
                grids,
                flags: stream
                    .alloc_zeros::<u8>(flags_len.max(1))
                    .map_err(|e| alloc("the split flags", e))?,
                leaf: stream
                    .alloc_zeros::<u32>(cells)
                    .map_err(|e| alloc("the leaf map", e))?,
                parent: stream
                    .alloc_zeros::<u32>(cells)
                    .map_err(|e| alloc("the union-find parents", e))?,
                level: stream
                    .alloc_zeros::<u8>(cells)
                    .map_err(|e| alloc("the leaf levels", e))?,
                label: stream
                    .alloc_zeros::<u32>(cells)
                    .map_err(|e| alloc("the labels", e))?,
                sums: stream
                    .alloc_zeros::<u64>(if mean { 4 * cells } else { 1 })
                    .map_err(|e| alloc("the colour sums", e))?,
                kernels,
            },
        }))
    }
}

impl Prepared for Ready {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let st = &mut self.state;
        let (w, h, format) = (st.width, st.height, st.format);
        check_frames("segment", (w, h, format), (w, h, format), input, output)?;
        if w == 0 || h == 0 {
            return Ok(());
        }
        let luma = Luma::of(&mut st.luma, gpu, input)?;
        st.tables
            .compute(gpu, luma, &mut st.sum, Some(&mut st.sq))?;
        let stream = gpu.stream();
        let launched = |what: &str, e| cuda_err(&format!("segment: launching {what}"), e);
        let (w32, h32) = (side(w)?, side(h)?);
        let (threshold, alpha) = (self.op.settings.threshold, self.op.settings.alpha);
        for (l, &(nx, ny)) in st.grids.iter().enumerate() {
            let cfg = LaunchConfig {
                grid_dim: (blocks(nx as usize, 32), blocks(ny as usize, 8), 1),
                block_dim: (32, 8, 1),
                shared_mem_bytes: 0,
            };
            let (node, offset) = (st.levels.side[l], st.levels.offset[l]);
            let mut b = stream.launch_builder(&st.kernels.split);
            b.arg(&st.sum).arg(&st.sq).arg(&w32).arg(&h32).arg(&node);
            b.arg(&nx).arg(&ny).arg(&threshold).arg(&alpha);
            b.arg(&mut st.flags).arg(&offset);
            // SAFETY: segment_split(sum, sq, w, h, side, nx, ny, threshold,
            // alpha, flags, offset) as pushed; the tables hold (w+1)·(h+1)
            // cells and flags has nx·ny cells from offset for this level
            // (sized in prepare).
            unsafe { b.launch(cfg) }.map_err(|e| launched("the split", e))?;
        }
        let pixels = LaunchConfig {
            grid_dim: (blocks(w, 32), blocks(h, 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mean = self.op.output == Output::Mean;
        let with_sums = u32::from(mean);
        let mut b = stream.launch_builder(&st.kernels.leaves);
        b.arg(&st.flags)
            .arg(&st.levels)
            .arg(&st.depth)
            .arg(&w32)
            .arg(&h32);
        b.arg(&mut st.leaf).arg(&mut st.parent).arg(&mut st.level);
        b.arg(&mut st.sums).arg(&with_sums);
        // SAFETY: segment_leaves(flags, levels, depth, w, h, leaf, parent,
        // level, sums, with_sums) as pushed; Levels is the kernel's struct
        // (repr(C)), flags covers every level below depth, leaf, parent and
        // level hold w·h cells, and sums 4·w·h where with_sums is set.
        unsafe { b.launch(pixels) }.map_err(|e| launched("the leaves", e))?;
        let tile = side(self.op.settings.tile)?;
        let mut b = stream.launch_builder(&st.kernels.merge);
        b.arg(&st.sum).arg(&st.sq).arg(&st.level).arg(&st.leaf);
        b.arg(&mut st.parent)
            .arg(&tile)
            .arg(&w32)
            .arg(&h32)
            .arg(&threshold);
        // SAFETY: segment_merge(sum, sq, level, leaf, parent, tile, w, h,
        // threshold) as pushed; sizes as above.
        unsafe { b.launch(pixels) }.map_err(|e| launched("the merge", e))?;
        let mut b = stream.launch_builder(&st.kernels.labels);
        if mean {
            b.arg(&input.data);
        }
        b.arg(&st.leaf).arg(&st.parent).arg(&w32).arg(&h32);
        b.arg(&mut st.label);
        if mean {
            b.arg(&mut st.sums);
        }
        // SAFETY: segment_labels(leaf, parent, w, h, label), or with the
        // sums segment_labels_sums_{gray,rgba}(src, leaf, parent, w, h,
        // label, sums) as pushed, the kernel chosen for this format; src
        // holds w·h pixels (checked above), the rest as above.
        unsafe { b.launch(pixels) }.map_err(|e| launched("the labels", e))?;
        let mut b = stream.launch_builder(&st.kernels.paint);
        b.arg(&input.data)
            .arg(&st.label)
            .arg(&st.sums)
            .arg(&w32)
            .arg(&h32);
        b.arg(&mut output.data);
        // SAFETY: segment_paint_*(src, label, sums, w, h, out) as pushed,
        // the kernel chosen for this output and format; src and out hold
        // w·h pixels (checked above); sums is read for output=mean only,
        // where it holds 4·w·h cells.
        unsafe { b.launch(pixels) }.map_err(|e| launched("the painting", e))?;
        Ok(())
    }
}
