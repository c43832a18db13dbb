//! The GPU stage (the ring of slots) against the CPU chain, and the GPU's
//! failure modes (skipped without a GPU).

use crate::common::*;
use seamstream::color::Colorimetry;
use seamstream::cuda::stage::{Finished, Layout, Stage};
use seamstream::cuda::{DevFormat, DevFrame};
use seamstream::frame::{Frame, Picture, PixelFormat};
use seamstream::ops::yuv::{rgba_to_yuv420, yuv420_to_rgba};
use seamstream::planes::{pack_planes, plane_shapes, write_packed, write_yuv};

fn frame(p: Picture) -> Frame {
    match p {
        Picture::Frame(f) => f,
        Picture::Yuv(_) => panic!("the stage gave YUV where frames were asked for"),
    }
}

/// Pushes a picture into the ring, written packed into the slot's pinned
/// buffer.
fn push_picture<T>(
    stage: &mut Stage<T>,
    picture: &Picture,
    tag: T,
    out: &mut impl FnMut(Finished<'_>, T) -> seamstream::Result<()>,
) -> seamstream::Result<()> {
    let format = match picture {
        Picture::Frame(f) => f.format(),
        Picture::Yuv(y) => y.format,
    };
    let fill = |host: &mut [u8]| {
        match picture {
            Picture::Frame(f) => write_packed(f, host),
            Picture::Yuv(y) => write_yuv(y, host),
        }
        Ok(())
    };
    let shape = (picture.width(), picture.height(), format);
    stage.push(shape, tag, fill, out)
}

const CHAIN: &[&str] = &[
    "gaussian:sigma=1.5",
    "threshold:t=90,type=tozero",
    "gray:output=rgba",
];

/// 500 frames through a 3-slot ring: every frame comes out, in order, equal
/// to the CPU chain's output (exact: each op's test shows it exact).
#[test]
fn five_hundred_frames_come_out_in_order_equal_to_the_cpu_chain() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (321, 241);
    let chain = seamstream::registry::parse_chain(CHAIN).unwrap();
    let mut cpu = seamstream::registry::parse_chain(CHAIN).unwrap();
    let mut stage: Stage<usize> = Stage::new(&gpu, &chain, w, h, DevFormat::Rgba, 3).unwrap();
    // Eight distinct inputs, cycled; frame i is input i % 8.
    let inputs: Vec<Frame> = (0..8)
        .map(|i| random_frame(w, h, DevFormat::Rgba, i + 1))
        .collect();
    let expected: Vec<Frame> = inputs
        .iter()
        .map(|f| cpu.apply(f.clone()).unwrap())
        .collect();
    let mut out = Vec::new();
    let mut take = |f: Finished<'_>, i| {
        out.push((f.to_picture()?, i));
        Ok(())
    };
    for i in 0..500 {
        let input = Picture::Frame(inputs[i % 8].clone());
        push_picture(&mut stage, &input, i, &mut take).unwrap();
        if i % 7 == 0 {
            stage.poll(&mut take).unwrap();
        }
    }
    stage.finish(&mut take).unwrap();
    assert_eq!(out.len(), 500, "frames lost or added");
    for (k, (picture, i)) in out.into_iter().enumerate() {
        assert_eq!(i, k, "frame {i} came out at place {k}");
        assert_close(&frame(picture), &expected[i % 8], 0, &format!("frame {i}"));
    }
}

/// Serial use (each frame finished before the next goes in, the bench's
/// serial figure) gives the same frames as the pipelined ring.
#[test]
fn serial_and_pipelined_rings_agree() {
    let Some(gpu) = gpu() else { return };
    let chain = seamstream::registry::parse_chain(CHAIN).unwrap();
    let inputs: Vec<Picture> = (0..5)
        .map(|i| Picture::Frame(random_frame(64, 48, DevFormat::Rgba, 50 + i)))
        .collect();
    let mut runs = Vec::new();
    for serial in [false, true] {
        let mut stage: Stage<()> = Stage::new(&gpu, &chain, 64, 48, DevFormat::Rgba, 2).unwrap();
        let mut out = Vec::new();
        let mut take = |f: Finished<'_>, i| {
            out.push((f.to_picture()?, i));
            Ok(())
        };
        for f in &inputs {
            push_picture(&mut stage, f, (), &mut take).unwrap();
            if serial {
                stage.finish(&mut take).unwrap();
            }
        }
        stage.finish(&mut take).unwrap();
        runs.push(
            out.into_iter()
                .map(|(p, _)| bytes(&frame(p)))
                .collect::<Vec<_>>(),
        );
    }
    assert_eq!(runs[0], runs[1]);
}

/// A frame of a size other than the ring was set up for is refused clearly.
#[test]
fn a_frame_of_another_size_is_refused() {
    let Some(gpu) = gpu() else { return };
    let chain = seamstream::registry::parse_chain(&["gray"]).unwrap();
    let mut stage: Stage<()> = Stage::new(&gpu, &chain, 64, 48, DevFormat::Rgba, 2).unwrap();
    let other = Picture::Frame(random_frame(65, 48, DevFormat::Rgba, 1));
    let e = push_picture(&mut stage, &other, (), &mut |_, _| Ok(()))
        .unwrap_err()
        .to_string();
    assert!(e.contains("64x48") && e.contains("65x48"), "{e}");
}

/// A frame too large for GPU memory is an error naming the allocation, not a
/// crash or a hang.
#[test]
fn a_frame_too_large_for_gpu_memory_is_a_clear_error() {
    let Some(gpu) = gpu() else { return };
    let e = DevFrame::alloc(&gpu, 300_000, 300_000, DevFormat::Rgba)
        .unwrap_err()
        .to_string();
    assert!(e.contains("300000x300000") && e.contains("MB"), "{e}");
    let chain = seamstream::registry::parse_chain(&["gaussian"]).unwrap();
    // 360 GB a frame: more than any GPU has, so that the first allocation
    // fails at once. (A 90 GB frame fitted once on an H200 and held the
    // memory while the tests beside it ran out.)
    let e = Stage::<()>::new(&gpu, &chain, 300_000, 300_000, DevFormat::Rgba, 3)
        .err()
        .expect("a 360 GB frame cannot fit")
        .to_string();
    // Either an op refuses the size, or an allocation fails; both say so.
    assert!(e.contains("CUDA") || e.contains("300000"), "{e}");
}

/// Kernel file names and kernel names that do not exist are errors that say
/// which.
#[test]
fn a_missing_kernel_is_named() {
    let Some(gpu) = gpu() else { return };
    let e = gpu
        .function("gray.cu", "no_such_kernel")
        .unwrap_err()
        .to_string();
    assert!(e.contains("no_such_kernel"), "{e}");
    let e = gpu.function("nope.cu", "k").unwrap_err().to_string();
    assert!(e.contains("nope.cu"), "{e}");
}

/// YUV in and YUV out, as from a decoder to an encoder: the stage converts
/// on the device and equals the CPU's conversions around the CPU chain
/// (exact: the yuv kernels and the ops are each exact), at odd and even
/// sizes, NV12 in and I420 out.
#[test]
fn yuv_in_and_out_equal_the_cpu_conversions_around_the_chain() {
    let Some(gpu) = gpu() else { return };
    let c = Colorimetry::default();
    for (w, h) in [(64, 48), (321, 241)] {
        let chain = seamstream::registry::parse_chain(CHAIN).unwrap();
        let mut cpu = seamstream::registry::parse_chain(CHAIN).unwrap();
        let mut stage: Stage<usize> = Stage::with_layouts(
            &gpu,
            &chain,
            w,
            h,
            Layout::Yuv(PixelFormat::Nv12, c),
            Some((PixelFormat::I420, c)),
            3,
        )
        .unwrap();
        let mut inputs = Vec::new();
        let mut out = Vec::new();
        let mut take = |f: Finished<'_>, i| {
            out.push((f.to_picture()?, i));
            Ok(())
        };
        for i in 0..10 {
            let Frame::Rgba(rgba) = random_frame(w, h, DevFormat::Rgba, 100 + i as u64) else {
                unreachable!()
            };
            let yuv = rgba_to_yuv420(&rgba, PixelFormat::Nv12, c).unwrap();
            push_picture(&mut stage, &Picture::Yuv(yuv.clone()), i, &mut take).unwrap();
            inputs.push(yuv);
        }
        stage.finish(&mut take).unwrap();
        assert_eq!(out.len(), 10);
        for (picture, i) in out {
            let Picture::Yuv(got) = picture else {
                panic!("frame {i} came out as a frame, not YUV")
            };
            let rgba = Frame::Rgba(yuv420_to_rgba(&inputs[i], c));
            let done = cpu.apply(rgba).unwrap().to_rgba();
            let want = rgba_to_yuv420(&done, PixelFormat::I420, c).unwrap();
            assert!(
                got == want,
                "frame {i} at {w}x{h}: YUV bytes differ from the CPU's"
            );
        }
    }
}

/// Frames pushed from mapped planes with padded strides, packed into the
/// slots in one copy (as `run` drives the ring), equal those pushed from
/// pictures, frame for frame and in order (exact: the same bytes cross
/// PCIe), for NV12 and I420 in at an odd and an even size, and RGBA in.
#[test]
fn mapped_planes_in_and_frames_taken_in_place_equal_the_picture_path() {
    let Some(gpu) = gpu() else { return };
    let c = Colorimetry::default();
    for (w, h) in [(64, 48), (321, 241)] {
        for format in [PixelFormat::Nv12, PixelFormat::I420, PixelFormat::Rgba8] {
            let input = Layout::of_format(format, c);
            let yuv_out = (w % 2 == 0).then_some((PixelFormat::I420, c));
            let chain = seamstream::registry::parse_chain(CHAIN).unwrap();
            let ring = || -> Stage<usize> {
                Stage::with_layouts(&gpu, &chain, w, h, input, yuv_out, 3).unwrap()
            };
            let (mut old, mut new) = (ring(), ring());
            let (mut want, mut got) = (Vec::new(), Vec::new());
            let mut take_old = |f: Finished<'_>, i| {
                want.push((f.to_picture()?, i));
                Ok(())
            };
            let mut take_new = |f: Finished<'_>, i| {
                got.push((f.to_picture()?, i));
                Ok(())
            };
            for i in 0..7 {
                let Frame::Rgba(rgba) = random_frame(w, h, DevFormat::Rgba, 200 + i as u64) else {
                    unreachable!()
                };
                let picture = match format {
                    PixelFormat::Rgba8 => Picture::Frame(Frame::Rgba(rgba)),
                    f => Picture::Yuv(rgba_to_yuv420(&rgba, f, c).unwrap()),
                };
                // Each plane's rows laid out 5 bytes wider than they are.
                let rows: Vec<Vec<&[u8]>> = match &picture {
                    Picture::Frame(Frame::Rgba(p)) => {
                        vec![(0..h).map(|y| p.row(y).as_flattened()).collect()]
                    }
                    Picture::Yuv(y) => [&y.y, &y.u, &y.v]
                        .into_iter()
                        .filter(|p| p.width() > 0)
                        .map(|p| (0..p.height()).map(|r| p.row(r)).collect())
                        .collect(),
                    _ => unreachable!(),
                };
                let strided: Vec<(Vec<u8>, usize)> = rows
                    .iter()
                    .map(|plane| {
                        let stride = plane[0].len() + 5;
                        let mut b = vec![0xEE; stride * plane.len()];
                        for (y, r) in plane.iter().enumerate() {
                            b[y * stride..y * stride + r.len()].copy_from_slice(r);
                        }
                        (b, stride)
                    })
                    .collect();
                let mut planes: [(&[u8], usize); 3] = [(&[], 0); 3];
                for (p, (b, stride)) in planes.iter_mut().zip(&strided) {
                    *p = (b.as_slice(), *stride);
                }
                let fill = |host: &mut [u8]| pack_planes(&planes, plane_shapes(format, w, h), host);
                new.push((w, h, format), i, fill, &mut take_new).unwrap();
                push_picture(&mut old, &picture, i, &mut take_old).unwrap();
            }
            new.finish(&mut take_new).unwrap();
            old.finish(&mut take_old).unwrap();
            assert_eq!(got.len(), 7, "{format} {w}x{h}: frames lost or added");
            for (k, ((g, i), (o, j))) in got.iter().zip(&want).enumerate() {
                assert_eq!((*i, *j), (k, k), "{format} {w}x{h}: out of order");
                assert!(
                    g == o,
                    "{format} {w}x{h}: frame {k} differs from the picture path's"
                );
            }
            assert!(new.copy_in_time() > std::time::Duration::ZERO);
        }
    }
}

/// `cuda:N` past the last GPU names N and how many GPUs there are.
#[test]
fn an_ordinal_past_the_last_gpu_says_how_many_there_are() {
    let Some(_) = gpu() else { return };
    let n = seamstream::cuda::device_count().unwrap();
    let e = seamstream::cuda::Gpu::open(7.max(n))
        .unwrap_err()
        .to_string();
    assert!(e.contains(&format!("cuda:{}", 7.max(n))), "{e}");
    assert!(e.contains(&format!("{n} GPU")), "{e}");
}

/// When the GPU fails mid-file, `auto` does not switch to the CPU halfway:
/// the run fails with a message and exit 1, and the file holds the frames
/// written before the failure, playable.
// A fault injected: only with the `fault-injection` feature (the tests' command).
#[cfg(feature = "fault-injection")]
#[test]
fn a_gpu_failure_mid_file_fails_clearly_and_keeps_the_frames_written() {
    let Some(_) = gpu() else { return };
    let dir = std::env::temp_dir().join(format!("seamstream-gpufault-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let out = dir.join("o.mp4");
    let run = |args: &[&str], fault: Option<&str>| {
        let mut c = std::process::Command::new(crate::common::video::binary());
        c.args(args);
        if let Some(n) = fault {
            c.env("SEAMSTREAM_INJECT_GPU_FAULT_AFTER", n);
        }
        c.output().unwrap()
    };
    let o = run(
        &[
            "run",
            "test:ball",
            out.to_str().unwrap(),
            "--frames",
            "100",
            "--size",
            "320x240",
            "--op",
            "gaussian:sigma=2",
            "--device",
            "auto",
        ],
        Some("40"),
    );
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("GPU failed after 40 frames"), "{err}");
    assert!(
        !err.contains("running on the CPU"),
        "switched backends: {err}"
    );
    // A failed run never becomes the output: its frames stay in the
    // partial file beside it, and the error says where.
    let partial = dir.join("o.partial.mp4");
    assert!(!out.exists(), "a failed run was renamed to the output");
    assert!(err.contains("o.partial.mp4"), "{err}");
    // Read the file back with seamstream itself and count its frames.
    let back = run(
        &[
            "run",
            partial.to_str().unwrap(),
            "null",
            "--device",
            "cpu",
            "--json",
        ],
        None,
    );
    let json = String::from_utf8_lossy(&back.stdout);
    assert!(
        back.status.success(),
        "{}",
        String::from_utf8_lossy(&back.stderr)
    );
    let n: u64 = json
        .split("\"frames_out\":")
        .nth(1)
        .and_then(|r| r.split(',').next())
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("no frame count in {json}"));
    // The injected failure leaves the GPU working, so the frames already in
    // the ring are drained and written too: all 40 started before it.
    assert_eq!(n, 40, "the file holds {n} frames: {err}");
    let _ = std::fs::remove_dir_all(&dir);
}

/// One data path for both devices: a real clip, decoded once by GStreamer
/// into 4:2:0, converted to RGBA by the `yuv` op's arithmetic, run through
/// the chain and converted back to I420 the same way, gives the same bytes
/// with `--device cpu` as with `--device cuda` (raw .y4m, so that no encoder
/// stands between the two).
#[test]
fn a_real_clip_gives_the_same_bytes_on_either_device() {
    let Some(_) = gpu() else { return };
    let clip = data::CLIPS.file("dog-walk-720p.mp4");
    let out = std::env::temp_dir().join(format!("seamstream-devices-{}", std::process::id()));
    std::fs::create_dir_all(&out).unwrap();
    for ops in [
        &["gaussian:sigma=2", "sobel:output=dx"][..],
        &["retarget:width=75%"][..],
        &[
            "warp:affine=[0.9,-0.1,12,0.1,0.9,-5],interpolation=bicubic",
            "gray",
        ][..],
    ] {
        let outputs: Vec<Vec<u8>> = ["cpu", "cuda"]
            .iter()
            .map(|device| {
                let file = out.join(format!("{device}.y4m"));
                let mut args = vec!["run", clip.to_str().unwrap(), file.to_str().unwrap()];
                for op in ops {
                    args.extend(["--op", op]);
                }
                args.extend(["--device", device]);
                let o = std::process::Command::new(crate::common::video::binary())
                    .args(&args)
                    .output()
                    .unwrap();
                assert!(
                    o.status.success(),
                    "{ops:?} on {device}: {}",
                    String::from_utf8_lossy(&o.stderr)
                );
                std::fs::read(&file).unwrap()
            })
            .collect();
        assert!(
            outputs[0].len() > 1_000_000,
            "{ops:?}: {} bytes",
            outputs[0].len()
        );
        if let Some(i) = outputs[0].iter().zip(&outputs[1]).position(|(a, b)| a != b) {
            panic!("{ops:?}: the devices differ first at byte {i} of the .y4m");
        }
        assert_eq!(outputs[0].len(), outputs[1].len(), "{ops:?}");
    }
    let _ = std::fs::remove_dir_all(&out);
}

/// A run on the GPU prepares its kernels before the source starts and says
/// so: with an empty cache NVRTC compiles them (counted in the summary), and
/// the next run finds them all in the cache.
#[test]
fn kernels_are_prepared_before_the_run_and_counted_in_the_summary() {
    let Some(_) = gpu() else { return };
    if !seamstream::cuda::testing::nvrtc("the kernels' first start") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("seamstream-firststart-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let field = |json: &str, key: &str| -> String {
        json.split(&format!("\"{key}\":"))
            .nth(1)
            .and_then(|r| r.split([',', '}']).next())
            .unwrap_or_else(|| panic!("no {key} in {json}"))
            .to_string()
    };
    let run = || {
        let o = std::process::Command::new(crate::common::video::binary())
            .args([
                "run",
                "test:ball",
                "null",
                "--frames",
                "3",
                "--size",
                "320x240",
                "--op",
                "gaussian:sigma=2",
                "--device",
                "cuda",
                "--json",
            ])
            .env("SEAMSTREAM_CACHE", dir.join("cache"))
            .output()
            .unwrap();
        assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
        String::from_utf8_lossy(&o.stdout).to_string()
    };
    let first = run();
    let compiled: usize = field(&first, "kernels_compiled").parse().unwrap();
    assert!(compiled >= 1, "an empty cache compiled nothing: {first}");
    assert!(
        field(&first, "kernel_seconds").parse::<f64>().is_ok(),
        "{first}"
    );
    let second = run();
    assert_eq!(field(&second, "kernels_compiled"), "0", "{second}");
    let _ = std::fs::remove_dir_all(&dir);
}
