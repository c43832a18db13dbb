//! GPU colour ops against the CPU reference (skipped without a GPU).

use crate::common::*;
use seamstream::color::{Colorimetry, Matrix, Range};
use seamstream::cuda::gpu_half;
use seamstream::cuda::ops::yuv::{rgba_to_yuv420, yuv420_len, yuv420_to_rgba};
use seamstream::cuda::{DevFormat, DevFrame, Gpu};
use seamstream::frame::{Frame, PixelFormat, Plane, Yuv420};
use seamstream::ops::yuv::{rgba_to_yuv420 as cpu_to_yuv420, yuv420_to_rgba as cpu_to_rgba};
use seamstream::registry::parse_op;

/// Exact: the kernel does the CPU's f32 operations in the same order,
/// without fused multiply-adds, and rounds the same way.
#[test]
fn gray_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for op in ["gray", "gray:matrix=bt601", "gray:output=rgba"] {
            for fmt in [DevFormat::Rgba, DevFormat::Gray] {
                let f = random_frame(w, h, fmt, i as u64 + 1);
                let what = format!("{op} on {fmt:?} {w}x{h}");
                assert_close(&run_gpu(&gpu, op, &f), &run_cpu(op, &f), 0, &what);
            }
        }
    }
}

// ---- yuv ----

/// Every colorimetry the CPU knows.
fn colorimetries() -> Vec<Colorimetry> {
    let mut all = Vec::new();
    for matrix in [Matrix::Bt709, Matrix::Bt601] {
        for range in [Range::Limited, Range::Full] {
            all.push(Colorimetry { matrix, range });
        }
    }
    all
}

/// The CPU's frame from a packed buffer (Y, then UV or U and V).
fn unpack(format: PixelFormat, w: usize, h: usize, bytes: &[u8]) -> Yuv420 {
    let (cw, ch) = Yuv420::chroma_size(w, h);
    let (y, chroma) = bytes.split_at(w * h);
    let y = Plane::from_vec(w, h, y.to_vec()).unwrap();
    match format {
        PixelFormat::Nv12 => Yuv420 {
            format,
            y,
            u: Plane::from_vec(2 * cw, ch, chroma.to_vec()).unwrap(),
            v: Plane::new(0, 0, 0),
        },
        _ => {
            let (u, v) = chroma.split_at(cw * ch);
            Yuv420 {
                format,
                y,
                u: Plane::from_vec(cw, ch, u.to_vec()).unwrap(),
                v: Plane::from_vec(cw, ch, v.to_vec()).unwrap(),
            }
        }
    }
}

/// The CPU frame's planes packed one after another.
fn pack(f: &Yuv420) -> Vec<u8> {
    [&f.y, &f.u, &f.v]
        .into_iter()
        .flat_map(|p| p.clone().into_packed_vec())
        .collect()
}

/// Exact, and every byte written: random bytes (every Y, U, V value, not
/// only those an encoder produces) decoded on both sides, the GPU's output
/// poisoned with two different bytes. The kernel does the CPU's f32
/// operations in its order, without fused multiply-adds, with IEEE division.
#[test]
fn yuv420_to_rgba_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for format in [PixelFormat::Nv12, PixelFormat::I420] {
            let len = yuv420_len(format, w, h).unwrap();
            let bytes = bytes(&random_frame(len, 1, DevFormat::Gray, i as u64 + 40));
            let src = gpu.stream().clone_htod(&bytes).unwrap();
            let cpu_yuv = unpack(format, w, h, &bytes);
            for c in colorimetries() {
                let cpu = Frame::Rgba(cpu_to_rgba(&cpu_yuv, c));
                let mut outs = Vec::new();
                for poison in [0xA5u8, 0x5A] {
                    let mut out = DevFrame::alloc(&gpu, w, h, DevFormat::Rgba).unwrap();
                    out.fill(&gpu, poison).unwrap();
                    yuv420_to_rgba(&gpu, &src, format, w, h, c, &mut out).unwrap();
                    outs.push(out.download(&gpu).unwrap());
                }
                let what = format!("{format} {c:?} to RGBA at {w}x{h}");
                assert_close(&outs[0], &cpu, 0, &what);
                assert_close(&outs[1], &cpu, 0, &what);
            }
        }
    }
}

/// Exact, and every byte written: RGBA and gray frames (gray as R = G = B,
/// as the CPU's `Frame::to_rgba`) encoded on both sides, the GPU's buffer
/// poisoned with two different bytes; the bytes of Y and both chroma planes
/// must be identical, odd sizes' partial blocks included.
#[test]
fn rgba_to_yuv420_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in [DevFormat::Rgba, DevFormat::Gray] {
            let frame = random_frame(w, h, fmt, i as u64 + 50);
            let src = DevFrame::upload(&gpu, &frame).unwrap();
            for format in [PixelFormat::Nv12, PixelFormat::I420] {
                let len = yuv420_len(format, w, h).unwrap();
                for c in colorimetries() {
                    let cpu = pack(&cpu_to_yuv420(&frame.to_rgba(), format, c).unwrap());
                    assert_eq!(cpu.len(), len, "yuv420_len of {format} at {w}x{h}");
                    for poison in [0xA5u8, 0x5A] {
                        let mut out = gpu.stream().clone_htod(&vec![poison; len]).unwrap();
                        rgba_to_yuv420(&gpu, &src, format, c, &mut out).unwrap();
                        let got = gpu.stream().clone_dtoh(&out).unwrap();
                        if let Some(k) = got.iter().zip(&cpu).position(|(a, b)| a != b) {
                            panic!(
                                "{fmt:?} to {format} {c:?} at {w}x{h}: byte {k} of {len} is {} on the GPU and {} on the CPU (poison {poison:#x})",
                                got[k], cpu[k]
                            );
                        }
                    }
                }
            }
        }
    }
}

/// Exact: the `yuv` op's one-pass round trip against the CPU's two
/// conversions, every colorimetry and layout, RGBA (alpha kept) and gray.
#[test]
fn yuv_round_trip_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for matrix in ["bt709", "bt601"] {
            for range in ["limited", "full"] {
                for format in ["i420", "nv12"] {
                    let op = format!("yuv:matrix={matrix},range={range},format={format}");
                    for fmt in [DevFormat::Rgba, DevFormat::Gray] {
                        let f = random_frame(w, h, fmt, i as u64 + 60);
                        let what = format!("{op} on {fmt:?} {w}x{h}");
                        assert_close(&run_gpu(&gpu, &op, &f), &run_cpu(&op, &f), 0, &what);
                    }
                }
            }
        }
    }
}

#[test]
fn yuv_buffers_have_the_cpu_frames_size_and_other_formats_are_refused() {
    for &(w, h) in SIZES.iter().chain(&[(2, 2), (5, 3), (4, 7)]) {
        for format in [PixelFormat::Nv12, PixelFormat::I420] {
            let cpu = pack(&Yuv420::new(format, w, h).unwrap()).len();
            assert_eq!(yuv420_len(format, w, h).unwrap(), cpu, "{format} {w}x{h}");
        }
    }
    assert!(yuv420_len(PixelFormat::Rgba8, 4, 4).is_err());
}

// ---- threshold and equalize ----

/// Runs `op` with one GPU half on each frame in turn (all of one size and
/// format), as a stream does, the output poisoned; returns the outputs.
/// Catches state left from one frame in the next (a histogram not cleared).
fn run_gpu_frames(gpu: &Gpu, op: &str, frames: &[Frame]) -> Vec<Frame> {
    let g = gpu_half(parse_op(op).unwrap().as_ref()).unwrap();
    let (w, h, format) = (
        frames[0].width(),
        frames[0].height(),
        DevFormat::of(&frames[0]),
    );
    let mut g = g.prepare(gpu, w, h, format).unwrap();
    frames
        .iter()
        .enumerate()
        .map(|(k, f)| {
            let input = DevFrame::upload(gpu, f).unwrap();
            let mut out = DevFrame::alloc(gpu, w, h, format).unwrap();
            out.fill(gpu, 0xA5 ^ k as u8).unwrap();
            g.run(gpu, &input, &mut out).unwrap();
            out.download(gpu).unwrap()
        })
        .collect()
}

/// `f` with each pixel's value (gray) or colour (RGBA, alpha kept) replaced
/// by `g` of its first byte.
fn remap(f: &Frame, g: impl Fn(u8) -> [u8; 3] + Sync) -> Frame {
    match f {
        Frame::Gray(p) => Frame::Gray(p.map(|v| g(v)[0])),
        Frame::Rgba(p) => Frame::Rgba(p.map(|q| {
            let [r, gg, b] = g(q[0]);
            [r, gg, b, q[3]]
        })),
    }
}

/// A frame of two levels at random: gray 40 and 200; RGBA two colours whose
/// lumas (bt709) are 140 and 63.
fn two_level(w: usize, h: usize, fmt: DevFormat, seed: u64) -> Frame {
    remap(&random_frame(w, h, fmt, seed), |v| {
        if v < 128 {
            [40, 180, 40]
        } else {
            [200, 20, 90]
        }
    })
}

const TYPES: [&str; 5] = ["binary", "binary_inv", "trunc", "tozero", "tozero_inv"];

/// Exact (integer rules on the CPU's luma): every type, fixed levels
/// including both ends and Otsu's, RGBA (decided on luma, alpha kept) and
/// gray, at every size, covering whole 16-byte units and the tail.
#[test]
fn threshold_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in [DevFormat::Rgba, DevFormat::Gray] {
            let f = random_frame(w, h, fmt, i as u64 + 70);
            for kind in TYPES {
                for level in ["0", "97", "255", "otsu"] {
                    let op = format!("threshold:type={kind},t={level},max=201");
                    let what = format!("{op} on {fmt:?} {w}x{h}");
                    assert_close(&run_gpu(&gpu, &op, &f), &run_cpu(&op, &f), 0, &what);
                }
            }
        }
    }
}

/// Exact: Otsu's level chosen on the device equals the CPU's `otsu()`,
/// shown through `trunc` (whose output holds t): on random frames; on
/// two-level frames, where every t between the levels ties and the smallest
/// must win; on constant frames (t = 0). Frames go through one GPU half in
/// turn, so a histogram left over from the frame before would show.
#[test]
fn otsu_level_is_the_cpus_including_ties() {
    let Some(gpu) = gpu() else { return };
    let op = "threshold:t=otsu,type=trunc";
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in [DevFormat::Rgba, DevFormat::Gray] {
            let seed = 10 * i as u64 + 80;
            let frames = [
                random_frame(w, h, fmt, seed),
                two_level(w, h, fmt, seed + 1),
                remap(&random_frame(w, h, fmt, seed + 2), |_| [77, 77, 77]),
                random_frame(w, h, fmt, seed + 3),
            ];
            for (k, (gpu_out, f)) in run_gpu_frames(&gpu, op, &frames)
                .iter()
                .zip(&frames)
                .enumerate()
            {
                let what = format!("{op} on {fmt:?} {w}x{h}, frame {k}");
                assert_close(gpu_out, &run_cpu(op, f), 0, &what);
            }
        }
    }
}

/// Exact (u64 integer table as `equalize_lut`): random frames, frames of a
/// narrow range (most levels absent, rounding of the table exercised),
/// two-level frames and constant frames (unchanged), RGBA (the luma table on
/// R, G and B, alpha kept) and gray, through one GPU half in turn.
#[test]
fn equalize_is_identical_to_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (i, &(w, h)) in SIZES.iter().enumerate() {
        for fmt in [DevFormat::Rgba, DevFormat::Gray] {
            let seed = 10 * i as u64 + 90;
            let frames = [
                random_frame(w, h, fmt, seed),
                remap(&random_frame(w, h, fmt, seed + 1), |v| {
                    [100 + v % 21, 110 + v % 7, 95 + v % 13]
                }),
                two_level(w, h, fmt, seed + 2),
                remap(&random_frame(w, h, fmt, seed + 3), |_| [93, 17, 250]),
                random_frame(w, h, fmt, seed + 4),
            ];
            for (k, (gpu_out, f)) in run_gpu_frames(&gpu, "equalize", &frames)
                .iter()
                .zip(&frames)
                .enumerate()
            {
                let what = format!("equalize on {fmt:?} {w}x{h}, frame {k}");
                assert_close(gpu_out, &run_cpu("equalize", f), 0, &what);
            }
            // And through the harness: two runs, output poisoned.
            let what = format!("equalize on {fmt:?} {w}x{h}");
            assert_close(
                &run_gpu(&gpu, "equalize", &frames[0]),
                &run_cpu("equalize", &frames[0]),
                0,
                &what,
            );
        }
    }
}
