//! GPU `integral` (kernels/integral.cu): [`IntegralTables`] computes the
//! exact summed-area tables of a gray frame on the device (u32 sums, and u64
//! squared sums if asked), for `adaptive`, for `seamstream bench`, and for
//! the `integral` op, which scales the u32 table into a picture as the CPU's
//! `integral_view`.
//!
//! The tables take three passes over 16×128 tiles: per-tile column and row
//! sums, a scan of the column sums down the bands, then each tile writes its
//! part of the table once from those carries. At 1080p that moves about
//! 2 × 2 MB of pixels and 8.3 MB of u32 table (25 MB with the u64 table),
//! with a few hundred kB of carries between the passes.

use cudarc::driver::{CudaFunction, CudaSlice, LaunchConfig, PushKernelArg};

use super::gray::GpuGray;
use crate::color::Matrix;
use crate::error::{Error, Result};
use crate::{DevFormat, DevFrame, Gpu, GpuOp, Prepared, blocks, check_frames, cuda_err};
use seamstream_core::ops::gray::Gray;
use seamstream_core::ops::integral::IntegralView;

/// TILE_W, TILE_H, THREADS and SCAN_GROUPS of kernels/integral.cu.
pub(crate) const TILE_W: usize = 128;
pub(crate) const TILE_H: usize = 16;
pub(crate) const THREADS: u32 = 128;
pub(crate) const SCAN_GROUPS: u32 = 16;

/// Cells in the table of a `width`×`height` frame: (W+1)×(H+1), row-major.
pub fn table_len(width: usize, height: usize) -> usize {
    (width + 1) * (height + 1)
}

/// A side as the kernels' u32.
fn side(n: usize, what: &str) -> Result<u32> {
    u32::try_from(n).map_err(|_| Error::BadFrame(format!("{what}: {n} is beyond u32")))
}

/// The three passes of one table kind (u32 only, or u32 with u64 squares).
struct Passes {
    tile_sums: CudaFunction,
    band_scan: CudaFunction,
    tiles: CudaFunction,
}

impl Passes {
    fn load(gpu: &Gpu, suffix: &str) -> Result<Passes> {
        let f = |name: &str| gpu.function("integral.cu", &format!("{name}{suffix}"));
        Ok(Passes {
            tile_sums: f("integral_tile_sums")?,
            band_scan: f("integral_band_scan")?,
            tiles: f("integral_tiles")?,
        })
    }
}

/// The carries of the squared table and its kernels.
struct Squares {
    passes: Passes,
    cols: CudaSlice<u64>,
    rows: CudaSlice<u64>,
}

/// Kernels and scratch for the integral tables of gray frames of one size;
/// everything is allocated by [`IntegralTables::new`], so
/// [`IntegralTables::compute`] only enqueues kernels.
pub struct IntegralTables {
    width: usize,
    height: usize,
    /// Tile columns and bands of tiles.
    tile_cols: usize,
    bands: usize,
    plain: Passes,
    squares: Option<Squares>,
    /// Per band: the column sums, then the tiles' totals (scanned in place).
    cols: CudaSlice<u32>,
    /// Per row: its sum over each tile.
    rows: CudaSlice<u32>,
}

impl IntegralTables {
    /// For `width`×`height` gray frames; `squares`: the u64 table of squares
    /// may be asked for too.
    pub fn new(gpu: &Gpu, width: usize, height: usize, squares: bool) -> Result<IntegralTables> {
        side(width + 1, "integral: the table width")?;
        side(height + 1, "integral: the table height")?;
        let (tile_cols, bands) = (width.div_ceil(TILE_W), height.div_ceil(TILE_H));
        let (cols_len, rows_len) = (
            (bands * (width + tile_cols)).max(1),
            (height * tile_cols).max(1),
        );
        let stream = gpu.stream();
        let squares = if squares {
            Some(Squares {
                passes: Passes::load(gpu, "_sq")?,
                cols: stream
                    .alloc_zeros::<u64>(cols_len)
                    .map_err(|e| cuda_err("integral: allocating squared column sums", e))?,
                rows: stream
                    .alloc_zeros::<u64>(rows_len)
                    .map_err(|e| cuda_err("integral: allocating squared row sums", e))?,
            })
        } else {
            None
        };
        Ok(IntegralTables {
            width,
            height,
            tile_cols,
            bands,
            plain: Passes::load(gpu, "")?,
            squares,
            cols: stream
                .alloc_zeros::<u32>(cols_len)
                .map_err(|e| cuda_err("integral: allocating column sums", e))?,
            rows: stream
                .alloc_zeros::<u32>(rows_len)
                .map_err(|e| cuda_err("integral: allocating row sums", e))?,
        })
    }

    /// Enqueues the table of `src` (gray, of the size given to `new`) into
    /// `sum`, and with `sq` the table of its squares into `sq` (which needs
    /// `squares` at `new`). Both are row-major (W+1)×(H+1) ([`table_len`]
    /// cells at least), first row and column zero, identical to the CPU's
    /// `integral` / `integral_sq`.
    pub fn compute(
        &mut self,
        gpu: &Gpu,
        src: &DevFrame,
        sum: &mut CudaSlice<u32>,
        sq: Option<&mut CudaSlice<u64>>,
    ) -> Result<()> {
        let (w, h) = (self.width, self.height);
        if (src.width, src.height, src.format) != (w, h, DevFormat::Gray) {
            return Err(Error::BadFrame(format!(
                "integral: tables for {w}x{h} gray frames cannot take a {src:?}"
            )));
        }
        let n = table_len(w, h);
        let short = |len: usize, what: &str| {
            Error::BadFrame(format!(
                "integral: the {what} table holds {len} cells; a {w}x{h} frame needs {n}"
            ))
        };
        if sum.len() < n {
            return Err(short(sum.len(), "u32"));
        }
        if let Some(q) = &sq
            && q.len() < n
        {
            return Err(short(q.len(), "u64"));
        }
        let stream = gpu.stream();
        if w == 0 || h == 0 {
            // The table is its zero first row and column.
            stream
                .memset_zeros(&mut sum.slice_mut(..n))
                .map_err(|e| cuda_err("integral: zeroing", e))?;
            if let Some(q) = sq {
                stream
                    .memset_zeros(&mut q.slice_mut(..n))
                    .map_err(|e| cuda_err("integral: zeroing", e))?;
            }
            return Ok(());
        }
        let (w32, h32) = (side(w, "integral")?, side(h, "integral")?);
        let (nt, nb) = (self.tile_cols as u32, self.bands as u32);
        let ncols = w32 + nt;
        let tiles = LaunchConfig {
            grid_dim: (nt, nb, 1),
            block_dim: (THREADS, 1, 1),
            shared_mem_bytes: 0,
        };
        let scan = LaunchConfig {
            grid_dim: (blocks(ncols as usize, 32), 1, 1),
            block_dim: (32, SCAN_GROUPS, 1),
            shared_mem_bytes: 0,
        };
        let launched = |e| cuda_err("integral: launching", e);
        match (sq, &mut self.squares) {
            (None, _) => {
                let p = &self.plain;
                let mut b = stream.launch_builder(&p.tile_sums);
                b.arg(&src.data).arg(&w32).arg(&h32).arg(&nt);
                b.arg(&mut self.cols).arg(&mut self.rows);
                // SAFETY: integral_tile_sums(src, w, h, nt, cols, rows) as
                // pushed; src holds w·h bytes, cols nb·(w + nt) and rows h·nt
                // cells (allocated in `new` for this size).
                unsafe { b.launch(tiles) }.map_err(launched)?;
                let mut b = stream.launch_builder(&p.band_scan);
                b.arg(&ncols).arg(&nb).arg(&mut self.cols);
                // SAFETY: integral_band_scan(ncols, nb, cols); cols holds
                // nb·ncols cells.
                unsafe { b.launch(scan) }.map_err(launched)?;
                let mut b = stream.launch_builder(&p.tiles);
                b.arg(&src.data).arg(&w32).arg(&h32).arg(&nt);
                b.arg(&self.cols).arg(&self.rows).arg(sum);
                // SAFETY: integral_tiles(src, w, h, nt, cols, rows, sum) as
                // pushed; the sizes are as above and sum holds (w+1)·(h+1)
                // cells (checked).
                unsafe { b.launch(tiles) }.map_err(launched)?;
            }
            (Some(q), Some(s)) => {
                let p = &s.passes;
                let mut b = stream.launch_builder(&p.tile_sums);
                b.arg(&src.data).arg(&w32).arg(&h32).arg(&nt);
                b.arg(&mut self.cols).arg(&mut self.rows);
                b.arg(&mut s.cols).arg(&mut s.rows);
                // SAFETY: integral_tile_sums_sq(src, w, h, nt, cols, rows,
                // cols_sq, rows_sq) as pushed; src holds w·h bytes, cols and
                // cols_sq nb·(w + nt), rows and rows_sq h·nt cells.
                unsafe { b.launch(tiles) }.map_err(launched)?;
                let mut b = stream.launch_builder(&p.band_scan);
                b.arg(&ncols).arg(&nb).arg(&mut self.cols).arg(&mut s.cols);
                // SAFETY: integral_band_scan_sq(ncols, nb, cols, cols_sq);
                // both hold nb·ncols cells.
                unsafe { b.launch(scan) }.map_err(launched)?;
                let mut b = stream.launch_builder(&p.tiles);
                b.arg(&src.data).arg(&w32).arg(&h32).arg(&nt);
                b.arg(&self.cols).arg(&self.rows).arg(&s.cols).arg(&s.rows);
                b.arg(sum).arg(q);
                // SAFETY: integral_tiles_sq(src, w, h, nt, cols, rows,
                // cols_sq, rows_sq, sum, sq) as pushed; sizes as above, and
                // sum and sq hold (w+1)·(h+1) cells (checked).
                unsafe { b.launch(tiles) }.map_err(launched)?;
            }
            (Some(_), None) => {
                return Err(Error::Device(
                    "integral: the squared table needs IntegralTables::new with squares = true"
                        .into(),
                ));
            }
        }
        Ok(())
    }
}

/// The luma plane that `integral` and `adaptive` work on: BT.709 luma of an
/// RGBA input (the `gray` op's GPU half, as the CPU's `Frame::luma`) into a
/// plane made in `prepare`; a gray input is its own luma.
pub(crate) struct Luma {
    gray: Box<dyn Prepared>,
    pub(crate) plane: DevFrame,
}

impl Luma {
    /// `None` for gray inputs, which need no plane.
    pub(crate) fn new(gpu: &Gpu, w: usize, h: usize, format: DevFormat) -> Result<Option<Luma>> {
        Ok(match format {
            DevFormat::Gray => None,
            DevFormat::Rgba => {
                let gray = GpuGray::new(&Gray {
                    matrix: Matrix::Bt709,
                    as_rgba: false,
                });
                Some(Luma {
                    gray: gray.prepare(gpu, w, h, format)?,
                    plane: DevFrame::alloc(gpu, w, h, DevFormat::Gray)?,
                })
            }
        })
    }

    /// Enqueues the luma of `input` (RGBA, of the plane's size).
    pub(crate) fn run(&mut self, gpu: &Gpu, input: &DevFrame) -> Result<()> {
        self.gray.run(gpu, input, &mut self.plane)
    }

    /// The luma of `input`: enqueued into `luma`'s plane for RGBA, `input`
    /// itself for gray (`luma` is `None`).
    pub(crate) fn of<'a>(
        luma: &'a mut Option<Luma>,
        gpu: &Gpu,
        input: &'a DevFrame,
    ) -> Result<&'a DevFrame> {
        match luma {
            Some(l) => {
                l.run(gpu, input)?;
                Ok(&l.plane)
            }
            None => Ok(input),
        }
    }
}

/// What `prepare` makes for the `integral` op.
struct ViewState {
    width: usize,
    height: usize,
    format: DevFormat,
    luma: Option<Luma>,
    tables: IntegralTables,
    sum: CudaSlice<u32>,
    view: CudaFunction,
}

/// The `integral` op: luma's u32 table, scaled to 0..=255 in a gray frame.
#[derive(Default)]
pub struct GpuIntegralView;

impl GpuIntegralView {
    pub fn new(_: &IntegralView) -> Self {
        GpuIntegralView
    }
}

impl GpuOp for GpuIntegralView {
    fn name(&self) -> &'static str {
        "integral"
    }

    fn output(&self, w: usize, h: usize, _: DevFormat) -> Result<(usize, usize, DevFormat)> {
        Ok((w, h, DevFormat::Gray))
    }

    fn prepare(
        &self,
        gpu: &Gpu,
        w: usize,
        h: usize,
        format: DevFormat,
    ) -> Result<Box<dyn Prepared>> {
        Ok(Box::new(ViewState {
            width: w,
            height: h,
            format,
            luma: Luma::new(gpu, w, h, format)?,
            tables: IntegralTables::new(gpu, w, h, false)?,
            sum: gpu
                .stream()
                .alloc_zeros::<u32>(table_len(w, h))
                .map_err(|e| cuda_err("integral: allocating the table", e))?,
            view: gpu.function("integral.cu", "integral_view")?,
        }))
    }
}

impl Prepared for ViewState {
    fn run(&mut self, gpu: &Gpu, input: &DevFrame, output: &mut DevFrame) -> Result<()> {
        let s = self;
        let (w, h) = (s.width, s.height);
        check_frames(
            "integral",
            (w, h, s.format),
            (w, h, DevFormat::Gray),
            input,
            output,
        )?;
        if w == 0 || h == 0 {
            return Ok(());
        }
        let luma = Luma::of(&mut s.luma, gpu, input)?;
        s.tables.compute(gpu, luma, &mut s.sum, None)?;
        let (w32, h32) = (side(w, "integral")?, side(h, "integral")?);
        let cfg = LaunchConfig {
            grid_dim: (blocks(w, 32), blocks(h, 8), 1),
            block_dim: (32, 8, 1),
            shared_mem_bytes: 0,
        };
        let mut b = gpu.stream().launch_builder(&s.view);
        b.arg(&s.sum).arg(&w32).arg(&h32).arg(&mut output.data);
        // SAFETY: integral_view(sum, w, h, out) as pushed; sum holds
        // (w+1)·(h+1) cells and the output w·h bytes (checked above).
        unsafe { b.launch(cfg) }.map_err(|e| cuda_err("integral: launching the view", e))?;
        Ok(())
    }
}
