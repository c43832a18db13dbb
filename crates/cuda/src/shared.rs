//! Every constant a kernel shares with the Rust code, written once, in
//! Rust. The kernels take them from `#include "shared.cuh"`, a header the
//! module loader makes from [`CONSTANTS`] (see [`crate::module::expand`]),
//! so a kernel and the code that drives it cannot drift apart: change the
//! Rust constant and the kernels' cache key changes with it.

use seamstream_core::ops::retarget::{self as cpu, OUTSIDE, motion, temporal};

use crate::ops;
use crate::ops::retarget::dp;
use crate::ops::retarget::{ENERGY_BASIC, ENERGY_SOBEL3, ENERGY_SOBEL5};

/// The header's name in `#include` lines.
pub const HEADER: &str = "shared.cuh";

/// (name in the kernels, value), in the order the header defines them.
pub const CONSTANTS: &[(&str, i64)] = &[
    // The masks' codes and costs (ops/retarget/mod.rs).
    ("MASK_PROTECT", cpu::MASK_PROTECT as i64),
    ("MASK_REMOVE", cpu::MASK_REMOVE as i64),
    ("PROTECT_COST", cpu::PROTECT_COST),
    ("REMOVE_BONUS", cpu::REMOVE_BONUS),
    // "Outside" of the band DP (temporal.rs's OUT, the DP's OUTSIDE).
    ("BAND_OUT", OUTSIDE),
    // Motion (ops/retarget/motion.rs).
    ("FLAT", motion::FLAT as i64),
    ("STILL", motion::STILL as i64),
    ("MOTION_CELL", motion::CELL as i64),
    ("MOTION_KEEP", motion::KEEP as i64),
    // The start's choice between stacked and fine seams (temporal.rs).
    ("STACKED_JOINS_NUM", temporal::STACKED_JOINS.0 as i64),
    ("STACKED_JOINS_DEN", temporal::STACKED_JOINS.1 as i64),
    ("STACKED_DETAIL_NUM", temporal::STACKED_DETAIL.0 as i64),
    ("STACKED_DETAIL_DEN", temporal::STACKED_DETAIL.1 as i64),
    (
        "CHOOSE_THREADS",
        crate::ops::retarget::CHOOSE_THREADS as i64,
    ),
    // The fast mode's motion state on the device.
    ("MS_LEVEL_X", crate::ops::retarget::MS_LEVEL_X as i64),
    ("MS_WORDS", crate::ops::retarget::MS_WORDS as i64),
    // Energy kinds.
    ("ENERGY_BASIC", ENERGY_BASIC as i64),
    ("ENERGY_SOBEL3", ENERGY_SOBEL3 as i64),
    ("ENERGY_SOBEL5", ENERGY_SOBEL5 as i64),
    // The seam DP's shape (ops/retarget/dp.rs).
    ("ANCHOR_ROWS", dp::ANCHOR_ROWS as i64),
    ("DP_PAD", dp::DP_PAD as i64),
    ("DP_OWN", dp::DP_OWN as i64),
    ("DP_CLUSTER", dp::DP_CLUSTER as i64),
    ("DP_MAX_WARPS_CLUSTER", dp::DP_MAX_WARPS_CLUSTER as i64),
    ("DP_MAX_WARPS_BLOCK", dp::DP_MAX_WARPS_BLOCK as i64),
    ("DP_MAX_CHUNKS", (dp::MAX_SIDE / dp::ANCHOR_ROWS) as i64),
    ("OUT32", dp::OUT32),
    // The four-row DP (retarget_coarse.cu).
    ("CO_WORDS", dp::CO_WORDS as i64),
    ("CO_CLUSTER", dp::CO_CLUSTER as i64),
    ("CO_HALO", dp::CO_HALO as i64),
    ("CO_RING", dp::CO_RING as i64),
    ("CO_TILE", dp::CO_TILE as i64),
    ("CO_FILL_OWN", dp::CO_FILL_OWN as i64),
    // The filters' tiles and blocks.
    ("BOX_TH", ops::boxfilter::BOX_TH as i64),
    ("BOX_THREADS", ops::boxfilter::BOX_THREADS as i64),
    ("SEP_B", ops::convolve::SEP_B as i64),
    ("SEP_THREADS", ops::convolve::SEP_THREADS as i64),
    ("SEP_TH", ops::convolve::SEP_TH as i64),
    ("SEP_NMAX", ops::convolve::SEP_NMAX as i64),
    ("ROWS_TW", ops::convolve::ROWS_TW as i64),
    ("ROWS_TH", ops::convolve::ROWS_TH as i64),
    ("F2D_TH", ops::convolve::F2D_TH as i64),
    ("F2D_THREADS", ops::convolve::F2D_THREADS as i64),
    ("SOBEL_TW", ops::sobel::TILE as i64),
    ("SOBEL_TH", ops::sobel::TILE as i64),
    ("SOBEL_THREADS", ops::sobel::THREADS as i64),
    ("HIST_THREADS", ops::threshold::HIST_THREADS as i64),
    // Integral images and segmentation.
    ("INTEGRAL_TILE_W", ops::integral::TILE_W as i64),
    ("INTEGRAL_TILE_H", ops::integral::TILE_H as i64),
    ("INTEGRAL_THREADS", ops::integral::THREADS as i64),
    ("INTEGRAL_SCAN_GROUPS", ops::integral::SCAN_GROUPS as i64),
    ("SEGMENT_MAX_LEVELS", ops::segment::MAX_LEVELS as i64),
];

/// The text of `shared.cuh`: a `#define` a constant, an `int` literal where
/// the value fits one (as a hand-written define would be) and a `long long`
/// one where it does not.
pub fn header() -> String {
    let mut out =
        String::from("// shared.cuh: made from seamstream-cuda's shared.rs\n#pragma once\n");
    for (name, v) in CONSTANTS {
        let literal = match i32::try_from(*v) {
            Ok(small) if small < 0 => format!("({small})"),
            Ok(small) => small.to_string(),
            Err(_) => format!("{v}LL"),
        };
        out.push_str(&format!("#define {name} {literal}\n"));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_name_is_defined_once_with_its_type() {
        let text = header();
        for (name, _) in CONSTANTS {
            let defines = format!("#define {name} ");
            assert_eq!(text.matches(&defines).count(), 1, "{name}");
        }
        assert!(
            text.contains("#define PROTECT_COST 17592186044416LL"),
            "{text}"
        );
        assert!(text.contains("#define MASK_REMOVE (-1)"), "{text}");
        assert!(text.contains("#define ANCHOR_ROWS 32\n"), "{text}");
    }

    /// No kernel defines a shared name itself: it would shadow (or clash
    /// with) the Rust value.
    #[test]
    fn no_kernel_defines_a_shared_constant_itself() {
        for (file, text) in crate::module::KERNEL_FILES {
            for (name, _) in CONSTANTS {
                let own = format!("#define {name} ");
                assert!(!text.contains(&own), "kernels/{file} defines {name} itself");
            }
        }
    }
}
