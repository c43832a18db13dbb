//! The CUDA backend's place in a build without it (`--no-default-features`,
//! no cudarc): no GPU can be opened, so `auto` runs on the CPU and
//! `cuda:N` is an error that says why ([`Error::NoCudaBuild`]). [`Gpu`] has
//! no values, so the pipeline's GPU paths need no switch of their own where
//! they only pass one on; the paths that drive the GPU are compiled only
//! with the `cuda` feature.

use crate::device::Device;
use crate::error::{Error, Result};

/// A GPU, which this build cannot open: no value of it exists.
#[derive(Clone, Debug)]
pub enum Gpu {}

impl Gpu {
    /// A GPU on a CUDA context that GStreamer made: none in this build.
    ///
    /// # Safety
    ///
    /// None needed here; the signature is the CUDA backend's.
    pub unsafe fn on_context(_ordinal: usize, _handle: *mut std::ffi::c_void) -> Result<Gpu> {
        Err(Error::NoCudaBuild)
    }

    /// The GPU's name.
    pub fn name(&self) -> String {
        match *self {}
    }

    /// Whether `ptr` is memory on this GPU's context.
    pub fn owns(&self, _ptr: u64) -> bool {
        match *self {}
    }
}

/// Where a chain runs, once [`Device`] is resolved (as the CUDA backend's).
#[derive(Debug)]
pub enum Placed {
    Gpu(Gpu),
    /// On the CPU: asked for, or (`auto`) because of `why`.
    Cpu {
        why: Option<Error>,
    },
}

/// `cpu` and `auto` run on the CPU, `auto` saying why; `cuda:N` is an error.
pub fn place(device: Device, _shared: Option<&Gpu>) -> Result<Placed> {
    match device {
        Device::Cpu => Ok(Placed::Cpu { why: None }),
        Device::Auto => Ok(Placed::Cpu {
            why: Some(Error::NoCudaBuild),
        }),
        Device::Cuda(_) => Err(Error::NoCudaBuild),
    }
}

/// The number of GPUs this build can use: an error that says why none.
pub fn device_count() -> Result<usize> {
    Err(Error::NoCudaBuild)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn auto_runs_on_the_cpu_and_a_named_gpu_is_an_error_that_says_why() {
        assert!(matches!(
            place(Device::Cpu, None),
            Ok(Placed::Cpu { why: None })
        ));
        assert!(matches!(
            place(Device::Auto, None),
            Ok(Placed::Cpu {
                why: Some(Error::NoCudaBuild)
            })
        ));
        let e = place(Device::Cuda(0), None).unwrap_err();
        assert!(e.to_string().contains("without CUDA"), "{e}");
        assert!(e.cpu_runs_it(), "{e}");
    }
}
