//! Pinned host memory handed to GStreamer: a pool of blocks of one size,
//! each returning to the pool when the last buffer made of it is dropped.
//! The GPU stage downloads a finished frame straight into a block, and the
//! block goes to the encoder as the buffer's memory: one copy over PCIe and
//! none on the host, and nothing allocated once the pool holds as many
//! blocks as the encoder keeps frames.

use std::sync::{Arc, Mutex};

use cudarc::driver::PinnedHostSlice;

use super::{Gpu, cuda_err};
use crate::error::Result;

/// Blocks of `len` bytes of pinned host memory on a GPU's context.
#[derive(Clone)]
pub struct PinnedPool {
    gpu: Gpu,
    len: usize,
    free: Arc<Mutex<Vec<PinnedHostSlice<u8>>>>,
}

impl PinnedPool {
    pub fn new(gpu: &Gpu, len: usize) -> PinnedPool {
        PinnedPool {
            gpu: gpu.clone(),
            len: len.max(1),
            free: Arc::default(),
        }
    }

    /// A block: one given back earlier, or a new one.
    pub fn take(&self) -> Result<PinnedBlock> {
        let reused = self.free.lock().unwrap_or_else(|e| e.into_inner()).pop();
        let mut slice = match reused {
            Some(s) => s,
            // SAFETY: the block is written (by a download) before it is
            // read; `PinnedBlock` hands out its bytes only as a slice of it.
            None => unsafe { self.gpu.ctx().alloc_pinned::<u8>(self.len) }
                .map_err(|e| cuda_err("allocating pinned output memory", e))?,
        };
        let ptr = slice
            .as_mut_ptr()
            .map_err(|e| cuda_err("waiting for a pinned block", e))?;
        Ok(PinnedBlock {
            slice: Some(slice),
            ptr,
            home: self.free.clone(),
        })
    }
}

/// One block of a [`PinnedPool`], back in the pool when dropped.
pub struct PinnedBlock {
    slice: Option<PinnedHostSlice<u8>>,
    /// The block's first byte: fixed for its life, read once.
    ptr: *mut u8,
    home: Arc<Mutex<Vec<PinnedHostSlice<u8>>>>,
}

// SAFETY: the block owns its memory (`ptr` points into `slice`, which is
// Send); nothing else aliases it while the block lives.
unsafe impl Send for PinnedBlock {}

impl PinnedBlock {
    /// The address the download writes to.
    pub fn addr(&self) -> u64 {
        self.ptr as u64
    }

    pub fn len(&self) -> usize {
        self.slice.as_ref().map_or(0, |s| s.len())
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

impl AsRef<[u8]> for PinnedBlock {
    fn as_ref(&self) -> &[u8] {
        // SAFETY: `ptr` is the start of the block's `len` bytes, alive
        // while the block is.
        unsafe { std::slice::from_raw_parts(self.ptr, self.len()) }
    }
}

impl AsMut<[u8]> for PinnedBlock {
    fn as_mut(&mut self) -> &mut [u8] {
        // SAFETY: as above, borrowed mutably through the block.
        unsafe { std::slice::from_raw_parts_mut(self.ptr, self.len()) }
    }
}

impl Drop for PinnedBlock {
    fn drop(&mut self) {
        if let Some(s) = self.slice.take() {
            self.home.lock().unwrap_or_else(|e| e.into_inner()).push(s);
        }
    }
}
