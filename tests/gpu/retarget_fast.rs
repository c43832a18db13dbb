//! GPU `retarget` in fast mode against the CPU's, frame for frame over
//! clips (the mode keeps state between frames: the last luma, the motion
//! map, each shrink's seams, cuts). Every comparison is exact (tolerance
//! 0): both sides do the same integer steps. The clips: random frames with
//! noise and a cut; a photograph panning under a moving block (the global
//! shift and the motion map at work); and the first frames of the shared
//! real footage ([`crate::common::data::CLIPS`]). These skip without a GPU.

use crate::common::{bytes, compare_frames, gpu, random_frame};
use seamstream::cuda::gpu_half;
use seamstream::cuda::{DevFormat, DevFrame, Gpu};
use seamstream::frame::{Frame, Plane, Rgba};
use seamstream::gst::decode::FrameReader;
use seamstream::noise::Noise;
use seamstream::ops::params::SizeSpec;
use seamstream::ops::retarget::fast::{FastParams, FastState};
use seamstream::ops::retarget::{Energy, Mode, Retarget, RetargetSettings};

fn op(tw: usize, th: usize, energy: Energy) -> Retarget {
    Retarget {
        settings: RetargetSettings {
            width: Some(SizeSpec::Pixels(tw)),
            height: Some(SizeSpec::Pixels(th)),
            energy,
            mode: Mode::Fast,
            fast: FastParams {
                energy,
                ..Default::default()
            },
            protect: None,
            remove: None,
        },
        state: FastState::default(),
    }
}

/// `f` with deterministic noise of ±`amp` on every byte but alpha.
fn noisy(f: &Frame, amp: i32, seed: u32) -> Frame {
    let mut n = Noise::new(u64::from(seed));
    let mut jitter = |v: u8| {
        let d = n.below(2 * amp as u64 + 1) as i32 - amp;
        (v as i32 + d).clamp(0, 255) as u8
    };
    match f {
        Frame::Rgba(p) => Frame::Rgba(Plane::from_fn(p.width(), p.height(), |x, y| {
            let px = p.get(x, y);
            [jitter(px[0]), jitter(px[1]), jitter(px[2]), px[3]]
        })),
        Frame::Gray(p) => Frame::Gray(Plane::from_fn(p.width(), p.height(), |x, y| {
            jitter(p.get(x, y))
        })),
    }
}

/// A clip: a still scene with noise, a cut to another scene, and back.
fn clip(w: usize, h: usize, format: DevFormat) -> Vec<Frame> {
    let a = random_frame(w, h, format, 3);
    let b = random_frame(w, h, format, 4);
    vec![
        a.clone(),
        noisy(&a, 3, 1),
        noisy(&a, 3, 2),
        noisy(&a, 20, 3),
        b.clone(),
        noisy(&b, 2, 5),
        a,
    ]
}

/// The bundled photograph panning `pan` pixels a frame (x, y) under a grey
/// block that crosses it, `n` frames of w×h.
fn panning(w: usize, h: usize, pan: (i64, i64), n: usize, format: DevFormat) -> Vec<Frame> {
    let photo = seamstream::io::sample_image().unwrap().to_rgba();
    (0..n)
        .map(|t| {
            let t = t as i64;
            let p: Plane<Rgba> = Plane::from_fn(w, h, |x, y| {
                let bx = 20 + 9 * t;
                if (x as i64) >= bx && (x as i64) < bx + w as i64 / 5 && y > h / 3 && y < h / 2 {
                    return [128, 120, 110, 255];
                }
                let sx = (x as i64 + 60 - pan.0 * t).clamp(0, photo.width() as i64 - 1);
                let sy = (y as i64 + 40 - pan.1 * t).clamp(0, photo.height() as i64 - 1);
                photo.get(sx as usize, sy as usize)
            });
            match format {
                DevFormat::Rgba => Frame::Rgba(p),
                DevFormat::Gray => Frame::Gray(p.map(|px| px[1])),
            }
        })
        .collect()
}

/// [`compare_frames`] for a retarget op given by value.
fn compare(gpu: &Gpu, mut cpu: Retarget, frames: &[Frame], what: &str) {
    compare_frames(gpu, &mut cpu, frames, what);
}

#[test]
fn fast_frames_equal_the_cpu_frame_for_frame() {
    let Some(gpu) = gpu() else { return };
    for (w, h, tw, th) in [
        (17, 3, 12, 3),
        (321, 241, 240, 241),
        (321, 241, 240, 200),
        (1917, 1081, 1437, 1081),
    ] {
        for format in [DevFormat::Rgba, DevFormat::Gray] {
            let frames = clip(w, h, format);
            let what = format!("{w}x{h} -> {tw}x{th} {format:?}");
            compare(&gpu, op(tw, th, Energy::Forward), &frames, &what);
        }
    }
}

#[test]
fn a_pan_under_a_moving_block_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (pan, format) in [
        ((3, 0), DevFormat::Rgba),
        ((-5, 2), DevFormat::Rgba),
        ((0, 0), DevFormat::Gray),
    ] {
        let frames = panning(320, 180, pan, 12, format);
        compare(
            &gpu,
            op(240, 180, Energy::Forward),
            &frames,
            &format!("pan {pan:?} {format:?}"),
        );
        // Both sides, with the height following the picture's rows.
        compare(
            &gpu,
            op(240, 150, Energy::Forward),
            &frames,
            &format!("pan {pan:?} {format:?}, both sides"),
        );
    }
}

#[test]
fn every_energy_and_knob_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let frames = panning(200, 112, (2, 1), 8, DevFormat::Rgba);
    for energy in [
        Energy::Basic,
        Energy::Sobel3,
        Energy::Sobel5,
        Energy::Forward,
    ] {
        for (passes, coherence, motion, band) in [
            (1, 100, 200, 12),
            (4, 0, 0, 1),
            (7, 1000, 1000, 15),
            (32, 50, 800, 5),
        ] {
            let mut o = op(150, 112, energy);
            o.settings.fast.passes = passes;
            o.settings.fast.coherence = coherence;
            o.settings.fast.motion = motion;
            o.settings.fast.band = band;
            compare(
                &gpu,
                o,
                &frames,
                &format!(
                    "{energy:?} passes={passes} coherence={coherence} motion={motion} band={band}"
                ),
            );
        }
    }
}

#[test]
fn four_k_fast_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let frames = panning(3840, 2160, (4, 0), 3, DevFormat::Rgba);
    compare(&gpu, op(2880, 2160, Energy::Forward), &frames, "4K");
}

#[test]
fn enlarging_and_tiny_widths_equal_the_cpu() {
    let Some(gpu) = gpu() else { return };
    for (w, h, tw, th) in [
        (1, 5, 1, 5),
        (2, 5, 1, 5),
        (2, 5, 3, 5),
        (1, 5, 2, 5),
        (40, 30, 40, 30),
        (40, 30, 75, 30),
        (40, 30, 30, 50),
        (64, 48, 100, 20),
    ] {
        for format in [DevFormat::Rgba, DevFormat::Gray] {
            let frames = clip(w, h, format);
            let what = format!("{w}x{h} -> {tw}x{th} {format:?}");
            compare(&gpu, op(tw, th, Energy::Forward), &frames, &what);
        }
    }
    let frames = panning(96, 64, (2, 1), 6, DevFormat::Rgba);
    compare(
        &gpu,
        op(150, 80, Energy::Forward),
        &frames,
        "enlarging a pan",
    );
}

#[test]
fn masks_equal_the_cpu_and_protected_pixels_stay() {
    let Some(gpu) = gpu() else { return };
    let (w, h) = (160, 90);
    // Columns 40..70 protected, a blob marked for removal.
    let protect = Plane::from_fn(w, h, |x, _| u8::from((40..70).contains(&x)));
    let remove = Plane::from_fn(w, h, |x, y| u8::from((100..110).contains(&x) && y < 45));
    // Each pixel says where it came from, so that protected ones can be found.
    let marker = Frame::Rgba(Plane::from_fn(w, h, |x, y| {
        [x as u8, y as u8, (x * 7 + y) as u8, 255]
    }));
    let frames = [marker.clone(), noisy(&marker, 2, 1), marker];
    let mut o = op(110, 90, Energy::Forward);
    o.settings.protect = Some(protect);
    o.settings.remove = Some(remove);
    compare(&gpu, o, &frames, "masks");
    // And on the GPU alone: every protected column survives in every row.
    let mut o = op(110, 90, Energy::Forward);
    o.settings.protect = Some(Plane::from_fn(w, h, |x, _| u8::from((40..70).contains(&x))));
    let mut g = gpu_half(&o)
        .unwrap()
        .prepare(&gpu, w, h, DevFormat::Rgba)
        .unwrap();
    let input = DevFrame::upload(&gpu, &frames[0]).unwrap();
    let mut out = DevFrame::alloc(&gpu, 110, 90, DevFormat::Rgba).unwrap();
    g.run(&gpu, &input, &mut out).unwrap();
    let Frame::Rgba(p) = out.download(&gpu).unwrap() else {
        panic!("RGBA in, RGBA out")
    };
    for y in 0..h {
        let kept: Vec<u8> = p.row(y).iter().map(|px| px[0]).collect();
        for x in 40..70u8 {
            assert!(kept.contains(&x), "row {y} lost protected column {x}");
        }
    }
}

#[test]
fn a_still_clip_gives_its_first_frame_every_time() {
    let Some(gpu) = gpu() else { return };
    let a = random_frame(480, 270, DevFormat::Rgba, 21);
    let mut g = gpu_half(&op(360, 270, Energy::Forward))
        .unwrap()
        .prepare(&gpu, 480, 270, DevFormat::Rgba)
        .unwrap();
    let input = DevFrame::upload(&gpu, &a).unwrap();
    let mut frames = Vec::new();
    for i in 0..12 {
        let mut out = DevFrame::alloc(&gpu, 360, 270, DevFormat::Rgba).unwrap();
        out.fill(&gpu, i as u8).unwrap();
        g.run(&gpu, &input, &mut out).unwrap();
        frames.push(bytes(&out.download(&gpu).unwrap()));
    }
    // A shot's seams settle on its first frame (on noise, the worst case:
    // every path is nearly as good as the next), and a still frame keeps
    // them.
    for (i, f) in frames.iter().enumerate().skip(1) {
        assert!(f == &frames[0], "frame {} differs from the first", i + 1);
    }
    // With ±1 level of noise a frame, the CPU's frames: the seams stay.
    let clip: Vec<Frame> = (0..6).map(|t| noisy(&a, 1, 40 + t)).collect();
    compare(
        &gpu,
        op(360, 270, Energy::Forward),
        &clip,
        "a noisy still clip",
    );
}

#[test]
fn real_footage_equals_the_cpu_frame_for_frame() {
    let Some(gpu) = gpu() else { return };
    // A walkway with people (fixed camera), a handheld close-up (the
    // global shift every frame), and titles with cuts.
    let clips = [
        ("dog-walk-720p.mp4", 30),
        ("cockatoo-handheld-720p.mp4", 30),
        ("promo-cuts-titles-720p.mp4", 90),
    ];
    let dir = crate::common::data::CLIPS.dir_with(&clips.map(|(name, _)| name));
    for (name, frames) in clips {
        let path = dir.join(name);
        let mut reader = FrameReader::open(&path.to_string_lossy()).unwrap();
        let mut clip = Vec::new();
        while clip.len() < frames {
            let Some(f) = reader.next_frame().unwrap() else {
                break;
            };
            clip.push(Frame::Rgba(f));
        }
        let (w, h) = (clip[0].width(), clip[0].height());
        compare(&gpu, op(w * 3 / 4, h, Energy::Forward), &clip, name);
    }
}
