//! Where a chain runs, as every interface names it: `--device`, a pipeline
//! file's `device`, the elements' `device` property. One type, parsed in
//! one place; each interface words its own error around
//! [`Device::EXPECTED`].

use std::fmt;

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Device {
    /// The GPU when one works (and every op of the chain has a GPU half),
    /// else the CPU, said in one line.
    #[default]
    Auto,
    Cpu,
    /// The GPU of this CUDA ordinal (`cuda` is `cuda:0`).
    Cuda(usize),
}

impl Device {
    /// What a device is written as, for error messages and help.
    pub const EXPECTED: &'static str =
        "auto (the GPU when one works), cpu, cuda or cuda:N (N a GPU index)";

    /// Whether a GPU may run the chain (`auto` or `cuda:N`), so that a
    /// GPU context is worth sharing.
    pub fn may_use_gpu(self) -> bool {
        self != Device::Cpu
    }

    /// The GPU asked for by its ordinal (`cuda:N`); `None` for `auto` (any)
    /// and `cpu`.
    pub fn ordinal(self) -> Option<usize> {
        match self {
            Device::Cuda(n) => Some(n),
            _ => None,
        }
    }

    /// `auto`, `cpu`, `cuda` or `cuda:N`; `None` for anything else.
    pub fn parse(text: &str) -> Option<Device> {
        match text {
            "auto" => Some(Device::Auto),
            "cpu" => Some(Device::Cpu),
            "cuda" => Some(Device::Cuda(0)),
            _ => text
                .strip_prefix("cuda:")
                .and_then(|n| n.parse().ok())
                .map(Device::Cuda),
        }
    }
}

impl fmt::Display for Device {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Device::Auto => write!(f, "auto"),
            Device::Cpu => write!(f, "cpu"),
            Device::Cuda(n) => write!(f, "cuda:{n}"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_spelling_parses_and_prints_back() {
        for (text, device) in [
            ("auto", Device::Auto),
            ("cpu", Device::Cpu),
            ("cuda", Device::Cuda(0)),
            ("cuda:3", Device::Cuda(3)),
        ] {
            assert_eq!(Device::parse(text), Some(device), "{text}");
            assert_eq!(Device::parse(&device.to_string()), Some(device));
        }
        for bad in ["gpu", "cuda:", "cuda:-1", "cuda:x", "CPU", " cpu", ""] {
            assert_eq!(Device::parse(bad), None, "{bad:?}");
        }
    }
}
