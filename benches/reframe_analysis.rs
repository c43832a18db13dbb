//! The reframe's analysis and render, stage by stage, on 720p frames: the
//! first frames of `SEAMSTREAM_BENCH_CLIP` (a video file) when it is set,
//! else a synthetic scene (a textured ground with a figure walking over it).
//!
//!     SEAMSTREAM_BENCH_CLIP=dog-walk-720p.mp4 cargo bench --bench reframe_analysis

use std::hint::black_box;
use std::time::Duration;

use criterion::{Criterion, criterion_group, criterion_main};
use seamstream::frame::{Frame, Plane, Rgba};
use seamstream::ops::reframe::analyze::{Analyzer, FACE_EVERY, Thumbs};
use seamstream::ops::reframe::faces::Faces;
use seamstream::ops::reframe::geometry::{Fit, Layout, Rect};
use seamstream::ops::reframe::plan::FramePlan;
use seamstream::ops::reframe::render::{Narrower, Pad, render};
use seamstream::ops::reframe::text::text_blocks;

/// Frames in the analysis benchmark: a few face frames' worth.
const FRAMES: usize = 4 * FACE_EVERY;

fn synthetic(t: usize) -> Plane<Rgba> {
    let x0 = 200 + 12 * t;
    Plane::from_fn(1280, 720, |x, y| {
        if (x0..x0 + 90).contains(&x) && (260..620).contains(&y) {
            [40, 60, 90, 255]
        } else {
            let n = (((x / 6) as u64 * 2_654_435_761) ^ ((y / 6) as u64 * 40_503))
                .wrapping_mul(0x9E37_79B9_7F4A_7C15)
                >> 58;
            let v = 90 + n as u8 + (y / 8) as u8;
            [v, v.wrapping_add(10), v / 2 + 40, 255]
        }
    })
}

fn frames() -> Vec<Plane<Rgba>> {
    if let Ok(clip) = std::env::var("SEAMSTREAM_BENCH_CLIP") {
        let mut reader =
            seamstream::gst::decode::FrameReader::open(&clip).expect("SEAMSTREAM_BENCH_CLIP opens");
        let mut out = Vec::with_capacity(FRAMES);
        while out.len() < FRAMES {
            match reader.next_frame().expect("the clip decodes") {
                Some(f) => out.push(f),
                None => break,
            }
        }
        assert!(!out.is_empty(), "{clip} has no frames");
        return out;
    }
    (0..FRAMES).map(synthetic).collect()
}

fn reframe(c: &mut Criterion) {
    let frames: Vec<Frame> = frames().into_iter().map(Frame::Rgba).collect();
    let (w, h) = (frames[0].width(), frames[0].height());
    let thumbs: Vec<Thumbs> = frames
        .iter()
        .enumerate()
        .map(|(i, f)| Thumbs::of(f, i))
        .collect();
    let luma = thumbs[1].thumb.map(seamstream::color::luma709);
    let face = thumbs[0].face.clone().expect("frame 0 is a face frame");

    c.bench_function("reframe thumbs", |b| {
        b.iter(|| black_box(Thumbs::of(&frames[1], 1)))
    });
    c.bench_function("reframe thumbs, face frame", |b| {
        b.iter(|| black_box(Thumbs::of(&frames[0], 0)))
    });
    c.bench_function("reframe text", |b| b.iter(|| black_box(text_blocks(&luma))));
    let mut g = c.benchmark_group("slow");
    g.sample_size(10).measurement_time(Duration::from_secs(10));
    g.bench_function("reframe faces", |b| {
        b.iter(|| black_box(Faces::new().detect(&face)))
    });
    g.bench_function(
        format!("reframe analysis of {} frames, faces off", thumbs.len()),
        |b| {
            b.iter(|| {
                let mut a = Analyzer::new(w, h, 30, false);
                a.faces = false;
                a.push_many(&thumbs);
                black_box(a.finish())
            })
        },
    );
    g.bench_function(
        format!("reframe analysis of {} frames", thumbs.len()),
        |b| {
            b.iter(|| {
                let mut a = Analyzer::new(w, h, 30, false);
                a.push_many(&thumbs);
                black_box(a.finish())
            })
        },
    );
    g.finish();

    let Frame::Rgba(src) = &frames[0] else {
        unreachable!("the frames are RGBA")
    };
    let out = (406, 720);
    let window = Rect::new(104, 0, 1043, 720);
    let keep = vec![Rect::new(372, 384, 276, 180)];
    let plan = |lay: &Layout| FramePlan {
        window: lay.window,
        fit: lay.fit,
        carve_to: None,
        shot: 0,
        keep: keep.clone(),
    };
    let mut narrower = Narrower::default();
    for (name, lay) in [
        (
            "pad 1043x720 -> 406x720",
            Layout::new(window, Fit::Pad, out),
        ),
        (
            "narrow 1043x720 -> 406x720",
            Layout::carved_to(window, 834, out),
        ),
        (
            "crop 406x720",
            Layout::new(Rect::new(300, 0, 406, 720), Fit::Crop, out),
        ),
    ] {
        let p = plan(&lay);
        c.bench_function(&format!("reframe render, {name}"), |b| {
            b.iter(|| black_box(render(src, &lay, out, Pad::Blur, (&p, &[]), &mut narrower)))
        });
    }
}

criterion_group! {
    name = benches;
    config = Criterion::default().sample_size(20).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(4));
    targets = reframe
}
criterion_main!(benches);
