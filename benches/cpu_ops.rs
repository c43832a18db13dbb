//! CPU reference timings at 1920×1080, one benchmark per operation. The
//! table in bench/results/ is made from these (see its README for the
//! command); OpenCV's figures for the same work come from bench/opencv_cpu.py.

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use seamstream::frame::{Frame, PixelFormat, Plane};
use seamstream::ops::{integral, retarget, yuv};

const W: usize = 1920;
const H: usize = 1080;

/// A deterministic frame with texture at several scales, so that data-dependent
/// work (Otsu, seams) does realistic amounts of it.
fn test_rgba() -> Plane<[u8; 4]> {
    Plane::from_fn(W, H, |x, y| {
        let n = ((x as u64 * 2_654_435_761) ^ (y as u64 * 40_503))
            .wrapping_mul(0x9E37_79B9_7F4A_7C15)
            >> 59;
        let r = ((x / 7 + y / 5) % 256) as u8;
        let g = (((x as f32 * 0.01).sin() * 100.0 + 128.0) as u8).wrapping_add(n as u8);
        let b = ((x ^ y) % 256) as u8;
        [r, g, b, 255]
    })
}

fn bench_op(c: &mut Criterion, label: &str, op_text: &str, frame: &Frame) {
    let mut op = seamstream::registry::parse_op(op_text).expect("a valid op");
    c.bench_function(label, |b| {
        b.iter(|| black_box(op.apply(black_box(frame)).expect("op runs")))
    });
}

fn cpu_ops(c: &mut Criterion) {
    let rgba = test_rgba();
    let color = Frame::Rgba(rgba.clone());
    let gray_plane = rgba.map(seamstream::color::luma709);
    let gray = Frame::Gray(gray_plane.clone());

    bench_op(c, "gray rgba->gray", "gray", &color);
    c.bench_function("yuv rgba->i420->rgba", |b| {
        b.iter(|| {
            let y = yuv::rgba_to_yuv420(
                &rgba,
                PixelFormat::I420,
                seamstream::color::Colorimetry::default(),
            )
            .unwrap();
            black_box(yuv::yuv420_to_rgba(
                &y,
                seamstream::color::Colorimetry::default(),
            ))
        })
    });
    let colorimetry = seamstream::color::Colorimetry::default();
    let i420 = yuv::rgba_to_yuv420(&rgba, PixelFormat::I420, colorimetry).unwrap();
    c.bench_function("yuv rgba->i420", |b| {
        b.iter(|| black_box(yuv::rgba_to_yuv420(&rgba, PixelFormat::I420, colorimetry).unwrap()))
    });
    c.bench_function("yuv i420->rgba", |b| {
        b.iter(|| black_box(yuv::yuv420_to_rgba(&i420, colorimetry)))
    });
    bench_op(c, "gaussian s2.5 17tap rgba", "gaussian:sigma=2.5", &color);
    bench_op(c, "gaussian s2.5 17tap gray", "gaussian:sigma=2.5", &gray);
    bench_op(c, "box r8 gray", "box:radius=8", &gray);
    bench_op(
        c,
        "convolve 5x5 gray",
        "convolve:kernel=[1,4,6,4,1,4,16,24,16,4,6,24,36,24,6,4,16,24,16,4,1,4,6,4,1]",
        &gray,
    );
    bench_op(c, "sobel3 magnitude gray", "sobel", &gray);
    bench_op(
        c,
        "warp affine bilinear rgba",
        "warp:affine=[0.98,-0.17,40,0.17,0.98,-30]",
        &color,
    );
    bench_op(
        c,
        "warp perspective bilinear rgba",
        "warp:perspective=[1.02,0.05,-20,0.01,1.01,5,0.00001,0.00002,1]",
        &color,
    );
    bench_op(c, "threshold t128 gray", "threshold:t=128", &gray);
    bench_op(c, "threshold otsu gray", "threshold:t=otsu", &gray);
    bench_op(
        c,
        "adaptive sauvola w15 gray",
        "adaptive:method=sauvola,window=15",
        &gray,
    );
    c.bench_function("integral u32 gray", |b| {
        b.iter(|| black_box(integral::integral(black_box(&gray_plane))))
    });
    c.bench_function("integral u32+u64 gray", |b| {
        b.iter(|| black_box(integral::integrals(black_box(&gray_plane))))
    });
    bench_op(c, "equalize gray", "equalize", &gray);

    let mut g = c.benchmark_group("retarget");
    g.sample_size(10).measurement_time(Duration::from_secs(20));
    for (energy, e) in [
        ("basic", retarget::Energy::Basic),
        ("forward", retarget::Energy::Forward),
    ] {
        let opts = retarget::CarveOptions {
            energy: e,
            ..Default::default()
        };
        g.bench_function(format!("exact 20 seams rgba {energy}"), |b| {
            b.iter(|| black_box(retarget::retarget(&rgba, W - 20, H, &opts).unwrap()))
        });
    }
    g.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = cpu_ops
}
criterion_main!(benches);
