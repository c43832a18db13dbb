//! GPU `segment` against the CPU reference (skipped without a GPU).
//!
//! Exact (tolerance 0) everywhere: both sides decide splits and merges from
//! the same integer sums with the same correctly rounded f64 operations (no
//! fused multiply-adds), the segments are the connected components of the
//! same pairs of leaves, and labels are canonical (the raster index of each
//! segment's first pixel), so means, borders and false colours are the same
//! bytes.

use std::collections::HashMap;

use crate::common::*;
use seamstream::frame::DevFormat;
use seamstream::frame::{Frame, Plane};
use seamstream::ops::segment::{Settings, label_colour, labels};

const OUTPUTS: [&str; 3] = ["mean", "borders", "labels"];

/// Flat blocks of random levels (so that leaves merge across the tile grid)
/// with noise of ±8 (so that nodes split); from a random frame, so it
/// repeats.
fn blocky_frame(w: usize, h: usize, format: DevFormat, seed: u64) -> Frame {
    let noise = random_frame(w, h, DevFormat::Gray, seed);
    let Frame::Gray(noise) = noise else {
        unreachable!()
    };
    let level =
        |x: usize, y: usize| ((x / 23 * 97 + y / 19 * 57 + (x / 23) * (y / 19) * 13) % 220) as u8;
    let v = |x: usize, y: usize| level(x, y).saturating_add(noise.get(x, y) % 17);
    match format {
        DevFormat::Gray => Frame::Gray(Plane::from_fn(w, h, v)),
        DevFormat::Rgba => Frame::Rgba(Plane::from_fn(w, h, |x, y| {
            let g = v(x, y);
            [g, g / 2 + 40, 255 - g, noise.get(x, y)]
        })),
    }
}

/// The GPU's labels, read back from `output=labels` on an RGBA copy of the
/// frame, must be a function of the CPU's: every CPU segment has one false
/// colour on the GPU. (The other direction may fail on a collision of the
/// 24-bit colours; the byte comparison covers it.)
fn assert_same_partition(gpu: &Frame, cpu_labels: &Plane<u32>, what: &str) {
    let Frame::Rgba(g) = gpu else {
        panic!("{what}: expected RGBA")
    };
    let mut colour_of: HashMap<u32, [u8; 3]> = HashMap::new();
    for y in 0..g.height() {
        for x in 0..g.width() {
            let p = g.get(x, y);
            let c = [p[0], p[1], p[2]];
            let l = cpu_labels.get(x, y);
            let seen = *colour_of.entry(l).or_insert(c);
            assert_eq!(
                seen, c,
                "{what}: CPU segment {l} has two GPU labels, at ({x}, {y})"
            );
            assert_eq!(c, label_colour(l), "{what}: GPU label at ({x}, {y})");
        }
    }
}

fn check(gpu: &seamstream::cuda::Gpu, params: &str, frame: &Frame, what: &str) {
    for output in OUTPUTS {
        let op = format!("segment:{params}output={output}");
        let what = format!("{op} on {what}");
        assert_close(&run_gpu(gpu, &op, frame), &run_cpu(&op, frame), 0, &what);
    }
    // The partition itself, from the labels of the CPU's library API.
    let op = parse_settings(params);
    let rgba = Frame::Rgba(frame.to_rgba());
    let gpu_labels = run_gpu(gpu, &format!("segment:{params}output=labels"), &rgba);
    assert_same_partition(&gpu_labels, &labels(&frame.luma(), &op), what);
}

/// The settings of `key=value,` pairs (defaults where absent).
fn parse_settings(params: &str) -> Settings {
    let get = |key: &str, default: f64| {
        params
            .split(',')
            .filter_map(|kv| kv.split_once('='))
            .find(|(k, _)| *k == key)
            .map_or(default, |(_, v)| v.parse().unwrap())
    };
    Settings::new(
        get("tile", 32.0) as usize,
        get("min", 4.0) as usize,
        get("threshold", 0.5),
        get("alpha", 1.0),
    )
    .unwrap()
}

/// Every harness size, both formats, random and blocky frames, the default
/// parameters and a few others (pixel leaves, a tile of 2, large tiles).
#[test]
fn segment_is_identical_to_the_cpu_on_random_frames() {
    let Some(gpu) = gpu() else { return };
    let params = [
        "",
        "tile=2,min=1,",
        "tile=16,min=1,threshold=0.4,",
        "tile=64,min=8,threshold=0.6,alpha=2,",
        "tile=32,min=32,",
    ];
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in [DevFormat::Rgba, DevFormat::Gray] {
            for (j, p) in params.iter().enumerate() {
                // The largest size with the defaults only: the CPU takes a while.
                if w * h > 4_000_000 && j > 0 {
                    continue;
                }
                let seed = (i * 10 + j) as u64 + 1;
                let random = random_frame(w, h, fmt, seed);
                check(&gpu, p, &random, &format!("random {fmt:?} {w}x{h}"));
                let blocky = blocky_frame(w, h, fmt, seed);
                check(&gpu, p, &blocky, &format!("blocky {fmt:?} {w}x{h}"));
            }
        }
    }
}

/// The bundled photographs, RGBA and their luma, with the defaults and the
/// seed's other thresholds.
#[test]
fn segment_is_identical_to_the_cpu_on_the_photographs() {
    let Some(gpu) = gpu() else { return };
    let names = ["chelsea.png", "coffee.png"];
    let dir = crate::common::data::EXAMPLES.dir_with(&names);
    for path in names.map(|n| dir.join(n)) {
        let rgba = seamstream::io::load_image(&path).unwrap();
        let gray = Frame::Gray(rgba.luma());
        for p in ["", "threshold=0.4,", "threshold=0.6,alpha=2,", "min=1,"] {
            for (f, name) in [(&rgba, "RGBA"), (&gray, "gray")] {
                check(&gpu, p, f, &format!("{} {name}", path.display()));
            }
        }
    }
}
