//! GPU `retarget` (exact mode) against the CPU reference (skipped without a
//! GPU).
//!
//! Every comparison is exact (tolerance 0): energies are integers and the DP
//! compares the same i64 sums with the same tie rules, so every seam is the
//! CPU's; removal copies pixels and insertion takes the same integer means.
//! One wrong seam anywhere moves pixels and fails the frame.

use std::path::PathBuf;

use crate::common::*;
use seamstream::cuda::{DevFormat, Gpu};
use seamstream::frame::{Frame, Plane};

const ENERGIES: [&str; 4] = ["basic", "sobel3", "sobel5", "forward"];
const FORMATS: [DevFormat; 2] = [DevFormat::Rgba, DevFormat::Gray];

/// Runs `op` on both backends and demands identical frames.
fn check(gpu: &Gpu, op: &str, frame: &Frame) {
    let what = format!(
        "{op} on {:?} {}x{}",
        DevFormat::of(frame),
        frame.width(),
        frame.height()
    );
    assert_close(&run_gpu(gpu, op, frame), &run_cpu(op, frame), 0, &what);
}

/// Each energy on random frames of both formats; a case is the input's
/// width and height and the op's size arguments.
fn check_energies(gpu: &Gpu, cases: &[(usize, usize, &str)]) {
    for (i, &(w, h, args)) in cases.iter().enumerate() {
        for energy in ENERGIES {
            for fmt in FORMATS {
                let f = random_frame(w, h, fmt, 31 * i as u64 + 7);
                check(gpu, &format!("retarget:{args},energy={energy}"), &f);
            }
        }
    }
}

/// Large flat areas and repeated steps: most seams meet ties (equal costs,
/// equal neighbours), so the tie rules decide them.
fn blocky_frame(w: usize, h: usize, fmt: DevFormat) -> Frame {
    let v = |x: usize, y: usize| (((x / 16 + y / 12) % 3) * 90 + (x / 40) * 7) as u8;
    match fmt {
        DevFormat::Gray => Frame::Gray(Plane::from_fn(w, h, v)),
        DevFormat::Rgba => Frame::Rgba(Plane::from_fn(w, h, |x, y| {
            let a = v(x, y);
            [a, a / 2, 255 - a, 200]
        })),
    }
}

fn photo(name: &str) -> Frame {
    let path = crate::common::data::EXAMPLES.file(name);
    seamstream::io::load_image(&path).unwrap_or_else(|e| panic!("{name}: {e}"))
}

/// A mask image in the temporary directory, removed when dropped.
struct MaskFile(PathBuf);

impl MaskFile {
    fn new(name: &str, w: usize, h: usize, on: impl Fn(usize, usize) -> bool) -> MaskFile {
        let path = std::env::temp_dir().join(format!(
            "seamstream-gpu-retarget-{}-{name}.png",
            std::process::id()
        ));
        let plane = Plane::from_fn(w, h, |x, y| if on(x, y) { 255u8 } else { 0 });
        seamstream::io::save_image(&Frame::Gray(plane), &path).unwrap();
        MaskFile(path)
    }

    fn path(&self) -> String {
        self.0.display().to_string()
    }
}

impl Drop for MaskFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Exact: only vertical seams, down to one column.
#[test]
fn shrinking_the_width_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (2, 5, "width=1"),
            (17, 3, "width=9"),
            (17, 3, "width=1"),
            (321, 241, "width=75%"),
        ],
    );
}

/// Exact: horizontal seams on the transposed frame, including a frame one
/// pixel wide (the transposed DP is one row tall).
#[test]
fn shrinking_the_height_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (1, 9, "height=4"),
            (5, 2, "height=1"),
            (17, 3, "height=2"),
            (321, 241, "height=180"),
        ],
    );
}

/// Exact: both sides shrink, so each step compares the best vertical and
/// horizontal costs (read back from the device) as the CPU does.
#[test]
fn shrinking_both_sides_follows_the_cpus_greedy_order() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (2, 2, "width=1,height=1"),
            (17, 9, "width=9,height=4"),
            (321, 241, "width=280,height=200"),
        ],
    );
}

/// Exact: the k best seams found first, then a mean pixel inserted beside
/// each, in rounds of at most half the width (so 2× takes several rounds).
#[test]
fn enlarging_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (1, 9, "width=2"),
            (2, 7, "width=4"),
            (17, 3, "width=34"),
            (17, 3, "height=6"),
            (321, 241, "width=400"),
            (321, 241, "height=300"),
            (100, 60, "width=190,height=110"),
        ],
    );
}

/// Exact: one side grows while the other shrinks (the width is carved
/// first, then the height on the transposed frame).
#[test]
fn growing_one_side_and_shrinking_the_other_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (64, 48, "width=40,height=90"),
            (64, 48, "width=100,height=30"),
        ],
    );
}

/// Exact: a target equal to the input is a copy.
#[test]
fn a_target_equal_to_the_input_gives_the_input() {
    let Some(gpu) = gpu() else { return };
    for fmt in FORMATS {
        for (w, h) in [(1, 1), (17, 3), (321, 241)] {
            let f = random_frame(w, h, fmt, 3);
            for op in ["retarget", &format!("retarget:width={w},height={h}")] {
                check(&gpu, op, &f);
                assert_close(&run_gpu(&gpu, op, &f), &f, 0, op);
            }
        }
    }
}

/// Exact: flat areas make many seams tie; the tie rules (centre, then
/// left, then right; the smallest start column) must match.
#[test]
fn ties_are_broken_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for energy in ENERGIES {
        for fmt in FORMATS {
            let f = blocky_frame(203, 97, fmt);
            for args in ["width=150", "height=60", "width=170,height=80", "width=300"] {
                check(&gpu, &format!("retarget:{args},energy={energy}"), &f);
            }
        }
    }
}

/// Exact: protected pixels cost 2^44 more and pixels to remove 2^34 less,
/// as on the CPU, in every mode (masks are carved, transposed and enlarged
/// with the frame).
#[test]
fn protect_and_remove_masks_steer_the_seams_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (121, 87);
    let protect = MaskFile::new("protect", w, h, |x, y| {
        (30..60).contains(&x) && (20..70).contains(&y)
    });
    let remove = MaskFile::new("remove", w, h, |x, y| {
        let (dx, dy) = (x as i64 - 90, y as i64 - 40);
        dx * dx + dy * dy < 15 * 15
    });
    let masks = [
        format!("protect={}", protect.path()),
        format!("remove={}", remove.path()),
        format!("protect={},remove={}", protect.path(), remove.path()),
    ];
    for (i, m) in masks.iter().enumerate() {
        for energy in ENERGIES {
            for fmt in FORMATS {
                let f = random_frame(w, h, fmt, 50 + i as u64);
                for args in ["width=80", "height=50", "width=100,height=70", "width=200"] {
                    check(&gpu, &format!("retarget:{args},energy={energy},{m}"), &f);
                }
            }
        }
    }
}

/// A mask of another size is refused when the op is prepared, as the CPU
/// refuses it when applied.
#[test]
fn a_mask_of_another_size_is_refused() {
    let Some(gpu) = gpu() else { return };
    let mask = MaskFile::new("small", 10, 10, |x, _| x < 5);
    let op = format!("retarget:width=10,protect={}", mask.path());
    let g =
        seamstream::cuda::gpu_half(seamstream::registry::parse_op(&op).unwrap().as_ref()).unwrap();
    let Err(e) = g.prepare(&gpu, 20, 10, DevFormat::Rgba) else {
        panic!("a 10x10 mask was taken for 20x10 frames")
    };
    let e = e.to_string();
    assert!(e.contains("10x10") && e.contains("20x10"), "{e}");
}

/// Exact on photographs (structure, not noise): every energy on one, both
/// sides and gray on it too, and the 600-wide one.
#[test]
fn photos_are_carved_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let chelsea = photo("chelsea.png");
    for energy in ENERGIES {
        check(
            &gpu,
            &format!("retarget:width=80%,energy={energy}"),
            &chelsea,
        );
    }
    check(&gpu, "retarget:width=95%,height=95%,energy=basic", &chelsea);
    let gray = Frame::Gray(chelsea.luma());
    check(&gpu, "retarget:height=85%,energy=sobel3", &gray);
    let coffee = photo("coffee.png");
    check(&gpu, "retarget:width=75%,energy=forward", &coffee);
}

/// Exact: frames wide enough that the DP's sweep spreads windows over many
/// warps of each block (1100: 18 windows), over more windows than warps
/// (4200: 66), and frames 1, 2, 33 and 65 rows tall (no band, one short
/// band, one full band, two bands and a one-row band).
#[test]
fn wide_and_short_frames_are_carved_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(
        &gpu,
        &[
            (1100, 40, "width=1094"),
            (4200, 12, "width=4198"),
            (50, 1, "width=45"),
            (50, 2, "width=40"),
            (70, 33, "width=62"),
            (70, 65, "width=62"),
            (70, 34, "height=30"),
        ],
    );
}

/// Exact: tall frames, whose vertical seams cross many bands of the DP
/// (1100 rows: 35), and whose horizontal seams run on a 1100-wide
/// transposed frame; sobel5 on 2100 rows takes the DP's 64-bit sums even
/// without a mask.
#[test]
fn tall_frames_are_carved_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    check_energies(&gpu, &[(40, 1100, "width=37"), (40, 1100, "height=1096")]);
    for fmt in FORMATS {
        let f = random_frame(30, 2100, fmt, 5);
        check(&gpu, "retarget:width=28,energy=sobel5", &f);
    }
}

/// Exact: masks on a frame of many windows, so that protected and removed
/// pixels (64-bit sums) meet the windows' overlaps and the bands' edges.
#[test]
fn masks_on_wide_frames_steer_the_seams_as_on_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (700, 70);
    let protect = MaskFile::new("wide-protect", w, h, |x, y| {
        (60..200).contains(&x) && (10..60).contains(&y) || (x / 7 + y) % 13 == 0
    });
    let remove = MaskFile::new("wide-remove", w, h, |x, y| {
        (x as i64 - 450).abs() + (y as i64 - 33).abs() < 30
    });
    let m = format!("protect={},remove={}", protect.path(), remove.path());
    for energy in ENERGIES {
        for fmt in FORMATS {
            let f = random_frame(w, h, fmt, 77);
            for args in ["width=690", "height=64", "width=695,height=66"] {
                check(&gpu, &format!("retarget:{args},energy={energy},{m}"), &f);
            }
        }
    }
}

/// Exact: one prepared carver takes frame after frame of new content. The
/// GPU captures a frame's seams (when it only shrinks) into a CUDA graph
/// and replays it, so every frame after the first runs the replay: each
/// must still be the CPU's carve of that frame, for the width and for the
/// height, 1080p wide (the four-row DP) and small.
#[test]
fn a_prepared_carver_carves_each_new_frame_as_on_the_cpu() {
    use seamstream::cuda::DevFrame;
    use seamstream::cuda::gpu_half;
    use seamstream::registry::parse_op;
    let Some(gpu) = gpu() else { return };
    for (w, h, args) in [
        (1920, 64, "width=1900"),
        (96, 80, "height=70"),
        (96, 80, "width=75%"),
    ] {
        let op = format!("retarget:{args},energy=forward");
        let cpu_op = parse_op(&op).unwrap();
        let g = gpu_half(cpu_op.as_ref()).unwrap();
        let (ow, oh, of) = g.output(w, h, DevFormat::Rgba).unwrap();
        let mut g = g.prepare(&gpu, w, h, DevFormat::Rgba).unwrap();
        for seed in 0..3 {
            let frame = random_frame(w, h, DevFormat::Rgba, 100 + seed);
            let input = DevFrame::upload(&gpu, &frame).unwrap();
            let mut out = DevFrame::alloc(&gpu, ow, oh, of).unwrap();
            g.run(&gpu, &input, &mut out).unwrap();
            let what = format!("{op} at {w}x{h}, frame {seed} of one carver");
            assert_close(
                &out.download(&gpu).unwrap(),
                &run_cpu(&op, &frame),
                0,
                &what,
            );
        }
    }
}
