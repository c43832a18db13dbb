//! GPU `reframe` against the CPU's, frame for frame (tolerance 0): live
//! planning (the thumbnails made on the device and read back, the frames
//! held on the device to look ahead), plans made
//! ahead and replayed (crop, carve, carve then pad, pad with a backdrop or a
//! colour), gray and RGBA, odd sizes, and the first frames of a shared
//! real clip ([`crate::common::data::CLIPS`]) planned as `run` plans a file. These
//! skip without a GPU.

use crate::common::{compare_frames, gpu};
use seamstream::frame::{Frame, Plane};
use seamstream::gst::decode::FrameReader;
use seamstream::ops::Op;
use seamstream::ops::reframe::analyze::{Analyzer, Thumbs};
use seamstream::ops::reframe::{Reframe, plan_video};
use seamstream::registry::parse_op;

/// A scene of soft texture with two figures: one walking right, one
/// standing; `cut` frames later, another scene.
fn clip(w: usize, h: usize, n: usize, cut: usize, gray: bool) -> Vec<Frame> {
    let noise = seamstream::noise::Noise::new(11).frame(w / 8 + 1, h / 8 + 1, true);
    let Frame::Gray(ground) = noise else {
        unreachable!()
    };
    (0..n)
        .map(|t| {
            let second = t >= cut;
            let walker = w / 10 + t * w / 100;
            let p = Plane::from_fn(w, h, |x, y| {
                let (fw, fh) = (w / 12 + 1, h / 2 + 1);
                if (walker..walker + fw).contains(&x) && (h / 3..h / 3 + fh).contains(&y) {
                    return [220, 180, 150, 255];
                }
                if (w * 3 / 4..w * 3 / 4 + fw).contains(&x) && (h / 4..h / 4 + fh).contains(&y) {
                    return [40, 60, 160, 255];
                }
                let g = ground.get(x / 8, y / 8) / 4 + if second { 150 } else { 40 };
                [g, g.wrapping_add(10), g, 255]
            });
            if gray {
                Frame::Gray(p.map(|px| px[1]))
            } else {
                Frame::Rgba(p)
            }
        })
        .collect()
}

fn reframe(text: &str) -> Reframe {
    let op = parse_op(text).unwrap_or_else(|e| panic!("{text}: {e}"));
    let any: Box<dyn std::any::Any> = op;
    *any.downcast::<Reframe>().unwrap()
}

/// The op with a plan made ahead over `frames`, as `run` makes one for a
/// file.
fn planned(text: &str, frames: &[Frame]) -> Reframe {
    let mut op = reframe(text);
    let (w, h) = (frames[0].width(), frames[0].height());
    let mut a: Analyzer = op.director.analyzer(w, h, false);
    for (i, f) in frames.iter().enumerate() {
        a.push(&Thumbs::of(f, i));
    }
    let out = op.output_size(w, h).unwrap();
    let (_, plans) = plan_video(&a.finish(), &op.director, (w, h), out);
    op.replay(plans, "the test's plan".into(), None);
    op
}

#[test]
fn live_planning_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (w, h) in [(640, 360), (333, 187)] {
        for gray in [false, true] {
            let frames = clip(w, h, 22, 15, gray);
            // Looking ahead (0.4 s by default: 12 frames held, whose
            // placeholders both give black; 0.2 s: 6), and not.
            for text in [
                "reframe:aspect=9:16",
                "reframe:aspect=9:16,fit=carve,pad=black,lookahead=0",
                "reframe:aspect=1:1,fit=pad,lookahead=0.2",
                "reframe:aspect=21:9,lookahead=0",
            ] {
                let what = format!("{text} live {w}x{h} gray={gray}");
                compare_frames(&gpu, &mut reframe(text), &frames, &what);
            }
        }
    }
}

#[test]
fn replayed_plans_equal_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (w, h) in [(640, 360), (1280, 720), (333, 187)] {
        for gray in [false, true] {
            let frames = clip(w, h, 12, 7, gray);
            for text in [
                "reframe:aspect=9:16",
                "reframe:aspect=9:16,fit=carve",
                "reframe:aspect=9:16,fit=carve,carve=10",
                "reframe:aspect=4:5,fit=pad,pad=gray",
                "reframe:aspect=1:1,fit=pad",
            ] {
                let what = format!("{text} planned {w}x{h} gray={gray}");
                compare_frames(&gpu, &mut planned(text, &frames), &frames, &what);
            }
        }
    }
}

#[test]
fn a_real_clip_planned_ahead_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let file = crate::common::data::CLIPS.file("dog-walk-720p.mp4");
    let mut reader = FrameReader::open(file.to_str().unwrap_or_default())
        .unwrap_or_else(|e| panic!("{}: {e}", file.display()));
    let mut frames = Vec::new();
    while frames.len() < 40 {
        match reader.next_frame() {
            Ok(Some(f)) => frames.push(Frame::Rgba(f)),
            _ => break,
        }
    }
    for text in [
        "reframe:aspect=9:16",
        "reframe:aspect=1:1",
        "reframe:aspect=9:16,fit=carve",
    ] {
        compare_frames(
            &gpu,
            &mut planned(text, &frames),
            &frames,
            &format!("{text} on dog-walk"),
        );
    }
}
