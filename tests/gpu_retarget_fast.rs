//! GPU `retarget` in fast mode against the CPU's, frame for frame over short
//! clips (the mode keeps state between frames: held luma, memory of the last
//! paths, cuts). Every comparison is exact (tolerance 0): both sides do the
//! same integer steps. These skip without a GPU.

mod common;

use common::{assert_close, bytes, gpu, random_frame};
use seamstream::cuda::{DevFormat, DevFrame, Gpu};
use seamstream::frame::{Frame, Plane};
use seamstream::ops::Op;
use seamstream::ops::params::SizeSpec;
use seamstream::ops::retarget::fast::{FastParams, FastState};
use seamstream::ops::retarget::{Energy, Mode, Retarget};

fn op(tw: usize, th: usize, energy: Energy) -> Retarget {
    Retarget {
        width: Some(SizeSpec::Pixels(tw)),
        height: Some(SizeSpec::Pixels(th)),
        energy,
        mode: Some(Mode::Fast),
        fast: FastParams {
            energy,
            ..Default::default()
        },
        protect: None,
        remove: None,
        state: FastState::default(),
    }
}

/// `f` with deterministic noise of ±`amp` on every byte but alpha.
fn noisy(f: &Frame, amp: i32, seed: u32) -> Frame {
    let mut s = seed.wrapping_mul(2_654_435_761) | 1;
    let mut jitter = |v: u8| {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        (v as i32 + (s % (2 * amp as u32 + 1)) as i32 - amp).clamp(0, 255) as u8
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

/// Runs `cpu` and its GPU half over `frames`, asserting every output equal.
fn compare(gpu: &Gpu, mut cpu: Retarget, frames: &[Frame], what: &str) {
    let mut g = cpu.cuda().unwrap_or_else(|e| panic!("{what}: {e}"));
    let format = DevFormat::of(&frames[0]);
    let (w, h) = (frames[0].width(), frames[0].height());
    let (ow, oh, of) = g.output(w, h, format).unwrap();
    g.prepare(gpu, w, h, format)
        .unwrap_or_else(|e| panic!("{what}: {e}"));
    for (i, f) in frames.iter().enumerate() {
        let want = cpu.apply(f).unwrap();
        let input = DevFrame::upload(gpu, f).unwrap();
        let mut out = DevFrame::alloc(gpu, ow, oh, of).unwrap();
        out.fill(gpu, 0xA5).unwrap();
        g.run(gpu, &input, &mut out)
            .unwrap_or_else(|e| panic!("{what} frame {i}: {e}"));
        let got = out.download(gpu).unwrap();
        assert_close(&got, &want, 0, &format!("{what} frame {i}"));
    }
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
fn every_energy_and_pass_count_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let frames = clip(200, 90, DevFormat::Rgba);
    for energy in [
        Energy::Basic,
        Energy::Sobel3,
        Energy::Sobel5,
        Energy::Forward,
    ] {
        for (passes, coherence) in [(1, 2), (3, 0), (7, 64)] {
            let mut o = op(150, 90, energy);
            o.fast.passes = passes;
            o.fast.coherence = coherence;
            compare(
                &gpu,
                o,
                &frames,
                &format!("{energy:?} passes={passes} coherence={coherence}"),
            );
        }
    }
}

#[test]
fn four_k_fast_equals_the_cpu() {
    let Some(gpu) = gpu() else { return };
    let a = random_frame(3840, 2160, DevFormat::Rgba, 9);
    let frames = [a.clone(), noisy(&a, 3, 1)];
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
    o.protect = Some(protect);
    o.remove = Some(remove);
    compare(&gpu, o, &frames, "masks");
    // And on the GPU alone: every protected column survives in every row.
    let mut o = op(110, 90, Energy::Forward);
    o.protect = Some(Plane::from_fn(w, h, |x, _| u8::from((40..70).contains(&x))));
    let mut g = o.cuda().unwrap();
    g.prepare(&gpu, w, h, DevFormat::Rgba).unwrap();
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
fn a_perfectly_still_clip_gives_the_same_frame_every_time() {
    let Some(gpu) = gpu() else { return };
    let a = random_frame(480, 270, DevFormat::Rgba, 21);
    let mut g = op(360, 270, Energy::Forward).cuda().unwrap();
    g.prepare(&gpu, 480, 270, DevFormat::Rgba).unwrap();
    let input = DevFrame::upload(&gpu, &a).unwrap();
    let mut first = None;
    for i in 0..6 {
        let mut out = DevFrame::alloc(&gpu, 360, 270, DevFormat::Rgba).unwrap();
        out.fill(&gpu, i as u8).unwrap();
        g.run(&gpu, &input, &mut out).unwrap();
        let got = bytes(&out.download(&gpu).unwrap());
        match &first {
            None => first = Some(got),
            Some(f) => assert!(f == &got, "frame {i} differs from frame 0"),
        }
    }
}
