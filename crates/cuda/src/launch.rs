//! What the GPU halves share to launch their kernels: the kernels' codes for
//! borders and formats, frame checks and sizes, shared-memory limits, and
//! the tiled launch grid most filters use.

use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute};
use cudarc::driver::{CudaFunction, LaunchConfig};

use super::{DevFormat, DevFrame, Gpu, blocks, cuda_err};
use crate::error::{Error, Result};
use seamstream_core::ops::border::Border;

/// A launch over `frame` in blocks that each cover a `tile` of (columns,
/// rows), with `threads` threads a block and `smem` bytes of dynamic shared
/// memory.
pub(crate) fn tiled(frame: &DevFrame, tile: (u32, u32), threads: u32, smem: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (blocks(frame.width, tile.0), blocks(frame.height, tile.1), 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: smem,
    }
}

/// What a filter checks before it launches: `input` is the frame it was
/// prepared for; its sides as the kernels' `int`s, or `None` for an empty
/// frame, which has nothing to launch.
pub(crate) fn filter_dims(
    name: &str,
    prepared: (usize, usize, DevFormat),
    input: &DevFrame,
) -> Result<Option<(i32, i32)>> {
    check_prepared(name, prepared, input)?;
    if input.is_empty() {
        return Ok(None);
    }
    dims(input).map(Some)
}

/// The kernels' border numbering (kernels/common.cuh).
pub(crate) fn border_code(border: Border) -> i32 {
    match border {
        Border::Zero => 0,
        Border::Replicate => 1,
        Border::Reflect101 => 2,
    }
}

/// The kernel-name suffix of a format.
pub(crate) fn suffix(format: DevFormat) -> &'static str {
    match format {
        DevFormat::Gray => "u8",
        DevFormat::Rgba => "u8x4",
    }
}

/// The channels a filter changes: gray, or R, G and B (alpha is copied).
pub(crate) fn channels(format: DevFormat) -> usize {
    match format {
        DevFormat::Gray => 1,
        DevFormat::Rgba => 3,
    }
}

/// Bytes of one shared-memory tile row of `cols` pixels: an odd number of
/// 4-byte words (`tile_pitch` in kernels/filters.cuh).
pub(crate) fn tile_pitch_bytes(format: DevFormat, cols: usize) -> usize {
    match format {
        DevFormat::Gray => 4 * (cols.div_ceil(4) | 1),
        DevFormat::Rgba => 4 * (cols | 1),
    }
}

/// Lets `func` use `bytes` of dynamic shared memory a block, or says that
/// this GPU cannot. The limit is set to all the GPU allows beside the
/// function's static shared memory, the same for every op sharing the
/// function, so one op never lowers another's.
pub(crate) fn allow_shared(gpu: &Gpu, func: &CudaFunction, bytes: usize, what: &str) -> Result<()> {
    let optin = gpu
        .ctx()
        .attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map_err(|e| cuda_err("reading the shared memory size", e))?;
    let fixed = func
        .shared_size_bytes()
        .map_err(|e| cuda_err("reading a kernel's shared memory size", e))?;
    let max = (optin - fixed).max(0);
    if bytes > max as usize {
        return Err(Error::GpuLimit(format!(
            "{what} needs {} KiB of shared memory a block and this GPU has {} KiB",
            bytes.div_ceil(1024),
            max / 1024
        )));
    }
    func.set_attribute(
        CUfunction_attribute::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
        max,
    )
    .map_err(|e| {
        cuda_err(
            &format!("{what}: allowing {bytes} bytes of shared memory"),
            e,
        )
    })
}

/// An error unless `input` has the size and format the op was prepared for.
pub(crate) fn check_prepared(
    name: &str,
    (w, h, f): (usize, usize, DevFormat),
    input: &DevFrame,
) -> Result<()> {
    if (w, h, f) == (input.width, input.height, input.format) {
        Ok(())
    } else {
        Err(Error::BadFrame(format!(
            "{name} was prepared for {w}x{h} {f:?} frames and got a {input:?}"
        )))
    }
}

/// The frame size as the kernels' `int w, int h`; an error where their
/// `int` indices (up to 3 planes of w × (h + 1)) could overflow.
pub(crate) fn dims(f: &DevFrame) -> Result<(i32, i32)> {
    if f.width.saturating_mul(f.height + 1) > i32::MAX as usize / 4 {
        return Err(Error::BadFrame(format!(
            "{f:?} is too large for the GPU filter kernels"
        )));
    }
    Ok((f.width as i32, f.height as i32))
}
