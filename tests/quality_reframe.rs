//! The reframing measures of `seamstream quality`: subjects kept, fixed
//! crops, flicker against the centre crop, and the window path's
//! smoothness; on synthetic frames whose answers are known by construction,
//! and once through the binary. The box search itself (kept, cropped,
//! squeezed, carved, letterboxed) is tested in `src/quality/subjects.rs`.

mod common;

use seamstream::frame::{Plane, Rgba};
use seamstream::noise::Noise;
use seamstream::ops::reframe::path::PathFile;
use seamstream::quality::{
    Meter, Rect, Subject, Subjects, area_scale, crop_window, path_scales, path_smoothness,
};

/// Random texture at several scales (bilinear cells of 32 down to 2
/// pixels, and a little pixel noise), each channel its own, so that no two
/// places look alike, a squeeze or a shift decorrelates it, and halving
/// the size keeps most of the pattern.
fn textured(w: usize, h: usize, seed: u64) -> Plane<Rgba> {
    let mut noise = Noise::new(seed);
    let mut layers: Vec<(usize, usize, Vec<f32>, f32)> = Vec::new();
    for (cell, amp) in [(32usize, 1.0f32), (16, 0.7), (8, 0.5), (4, 0.35), (2, 0.25)] {
        let (gw, gh) = (w / cell + 2, h / cell + 2);
        let grid: Vec<f32> = (0..gw * gh * 3)
            .map(|_| noise.byte() as f32 / 255.0 - 0.5)
            .collect();
        layers.push((cell, gw, grid, amp));
    }
    Plane::from_fn(w, h, |x, y| {
        let mut px = [0u8, 0, 0, 255];
        for (c, out) in px[..3].iter_mut().enumerate() {
            let mut v = 0.15 * (noise.byte() as f32 / 255.0 - 0.5);
            for (cell, gw, grid, amp) in &layers {
                let (fx, fy) = (x as f32 / *cell as f32, y as f32 / *cell as f32);
                let (ix, iy) = (fx as usize, fy as usize);
                let (tx, ty) = (fx - ix as f32, fy - iy as f32);
                let g = |i: usize, j: usize| grid[((j * gw) + i) * 3 + c];
                let top = g(ix, iy) * (1.0 - tx) + g(ix + 1, iy) * tx;
                let bottom = g(ix, iy + 1) * (1.0 - tx) + g(ix + 1, iy + 1) * tx;
                v += amp * (top * (1.0 - ty) + bottom * ty);
            }
            *out = (128.0 + 100.0 * v).round().clamp(0.0, 255.0) as u8;
        }
        px
    })
}

fn cut(f: &Plane<Rgba>, x: usize, y: usize, w: usize, h: usize) -> Plane<Rgba> {
    Plane::from_fn(w, h, |i, j| f.get(x + i, y + j))
}

#[test]
fn crop_windows_take_full_height_or_full_width_by_aspect() {
    // 16:9 to 9:16: 406 wide at full height, free range 874.
    let c = |p| crop_window((1280, 720), (406, 720), p);
    assert_eq!(
        c(0.0),
        Rect {
            x: 0,
            y: 0,
            w: 406,
            h: 720
        }
    );
    assert_eq!(
        c(0.5),
        Rect {
            x: 437,
            y: 0,
            w: 406,
            h: 720
        }
    );
    assert_eq!(
        c(1.0),
        Rect {
            x: 874,
            y: 0,
            w: 406,
            h: 720
        }
    );
    // A 1080x1920 result of 720p: the same window, to be scaled up.
    assert_eq!(crop_window((1280, 720), (1080, 1920), 0.5).w, 405);
    // 4:3 to 16:9 is wider: full width, 360 rows, centred at 60.
    assert_eq!(
        crop_window((640, 480), (1280, 720), 0.5),
        Rect {
            x: 0,
            y: 60,
            w: 640,
            h: 360
        }
    );
}

/// A clip panning right by `speed` pixels a frame over a wide texture.
fn pan(frames: usize, w: usize, h: usize, speed: usize) -> Vec<Plane<Rgba>> {
    let world = textured(w + frames * speed, h, 7);
    (0..frames)
        .map(|i| cut(&world, i * speed, 0, w, h))
        .collect()
}

#[test]
fn the_best_fixed_crop_is_the_one_window_that_holds_all_the_texture() {
    // 96x40 to 1:1: 40-pixel windows, free range 56; the one at 2/8 is at
    // x 14 and alone holds all of x 20..48, the only texture: it misses
    // nothing (completeness and coherence 0) and every other window cuts
    // the texture.
    let (w, h) = (96, 40);
    assert_eq!(
        crop_window((w, h), (h, h), 0.25),
        Rect {
            x: 14,
            y: 0,
            w: 40,
            h: 40
        }
    );
    let world = textured(w + 6, h, 8);
    let mut meter = Meter::new(1).with_crops(9);
    for i in 0..3 {
        let f = Plane::from_fn(w, h, |x, y| {
            if (20..48).contains(&x) {
                world.get(x + 2 * i, y)
            } else {
                [90, 100, 110, 255]
            }
        });
        meter.push(&f, &area_scale(&f, h, h)).unwrap();
    }
    let r = meter.report();
    let positions: Vec<f64> = r.crops.iter().map(|c| c.position).collect();
    assert_eq!(
        positions,
        (0..9).map(|i| i as f64 / 8.0).collect::<Vec<_>>()
    );
    let best = r.best_crop().unwrap();
    assert_eq!((best.position, best.window.x), (0.25, 14));
    assert_eq!(best.similarity.total(), 0.0);
    assert!(
        r.crops
            .iter()
            .filter(|c| c.position != 0.25)
            .all(|c| c.similarity.total() > 0.0),
        "{:?}",
        r.crops
    );
    // Scaling squeezes the texture: far worse than the best crop.
    assert!(r.result.total() > 0.0);
    assert!(r.best_crop_ratio().unwrap() > 1e6);
}

#[test]
fn a_result_that_is_a_fixed_crop_scores_as_that_crop() {
    let (w, h) = (72, 40);
    let clip = pan(3, w, h, 3);
    // 9:16 of 40 rows is 23 wide (22.5 rounded): free range 49; the result
    // is the crop at 3/8 of it.
    let window = crop_window((w, h), (23, h), 0.375);
    assert_eq!((window.x, window.w), (18, 23));
    let mut meter = Meter::new(1).with_crops(9);
    for f in &clip {
        meter.push(f, &cut(f, window.x, 0, window.w, h)).unwrap();
    }
    let r = meter.report();
    assert_eq!(r.crops.len(), 9);
    assert_eq!(r.crops[3].window, window);
    assert_eq!(r.crops[3].similarity, r.result);
    assert!(r.result.total() > 0.0);
    let best = r.best_crop().unwrap();
    assert!(
        r.crops
            .iter()
            .all(|c| c.similarity.total() >= best.similarity.total())
    );
    assert!(r.best_crop_ratio().unwrap() >= 1.0);
}

#[test]
fn the_centre_crop_flickers_as_much_as_itself_and_a_wandering_window_more() {
    let (w, h) = (72, 40);
    let clip = pan(6, w, h, 2);
    let centre = crop_window((w, h), (23, h), 0.5);
    let mut still = Meter::new(100).with_crops(0);
    let mut wander = Meter::new(100).with_crops(0);
    for (i, f) in clip.iter().enumerate() {
        still.push(f, &cut(f, centre.x, 0, 23, h)).unwrap();
        // The window jumps 10 pixels left and right every frame.
        let x = if i % 2 == 0 {
            centre.x - 10
        } else {
            centre.x + 10
        };
        wander.push(f, &cut(f, x, 0, 23, h)).unwrap();
    }
    let (s, m) = (still.report(), wander.report());
    assert!(s.crops.is_empty() && s.best_crop_ratio().is_none());
    assert!(s.flicker_centre > 0.0);
    assert_eq!(s.flicker_centre_ratio(), 1.0);
    assert_eq!(m.flicker_centre, s.flicker_centre);
    assert!(
        m.flicker_centre_ratio() > 1.5,
        "{}",
        m.flicker_centre_ratio()
    );
}

#[test]
fn subjects_are_counted_for_the_result_scaling_and_the_centre_crop_by_label() {
    let (w, h) = (640, 360);
    let frames: Vec<Plane<Rgba>> = (0..3).map(|i| textured(w, h, 20 + i)).collect();
    // The result: a 9:16 window at the left edge (0..202).
    let (ow, oh) = (202, 360);
    let centre = crop_window((w, h), (ow, oh), 0.5);
    assert_eq!((centre.x, centre.w), (219, 202));
    // Boxes of 160 pixels: 50 at the scale by width (202/640); at half
    // that, chance correlations of this texture come near 0.8.
    let rect = |x, y, w, h| Rect { x, y, w, h };
    let boxes = vec![
        // In the left window only.
        Subject {
            frame: 0,
            label: "left".into(),
            rect: rect(20, 80, 160, 160),
        },
        // In the centre window only.
        Subject {
            frame: 2,
            label: "middle".into(),
            rect: rect(240, 120, 160, 160),
        },
        // In the left window only, on the same frame as the last.
        Subject {
            frame: 2,
            label: "left".into(),
            rect: rect(20, 200, 160, 140),
        },
        // Past the clip's end.
        Subject {
            frame: 9,
            label: "left".into(),
            rect: rect(0, 0, 30, 30),
        },
    ];
    let mut meter = Meter::new(10).with_crops(0).with_subjects(Subjects {
        clip: None,
        size: (w, h),
        boxes,
    });
    for f in &frames {
        meter.push(f, &cut(f, 0, 0, ow, oh)).unwrap();
    }
    let s = meter.report().subjects.unwrap();
    assert_eq!((s.all.total, s.unseen), (3, 1));
    assert_eq!(
        (s.all.result, s.all.scaled, s.all.centre),
        (2, 0, 1),
        "{:?}",
        s.boxes
    );
    let labels: Vec<_> = s
        .labels
        .iter()
        .map(|k| (k.label.as_str(), k.total, k.result, k.scaled, k.centre))
        .collect();
    assert_eq!(labels, [("left", 2, 2, 0, 0), ("middle", 1, 0, 0, 1)]);
    assert_eq!(s.all.fractions(), (2.0 / 3.0, 0.0, 1.0 / 3.0));
}

#[test]
fn boxes_on_a_frame_of_another_size_are_refused() {
    let f = textured(64, 36, 1);
    let mut meter = Meter::new(1).with_subjects(Subjects {
        clip: None,
        size: (1280, 720),
        boxes: Vec::new(),
    });
    let e = meter.push(&f, &f).unwrap_err().to_string();
    assert!(e.contains("1280x720") && e.contains("64x36"), "{e}");
}

#[test]
fn box_file_errors_name_the_field() {
    let good = r#"{"clip": "a.mp4", "size": [320, 180], "note": "x",
        "boxes": [{"frame": 1, "label": "dog", "box": [10, 20, 30, 40], "who": 1},
                  {"frame": 2, "box": [0, 0, 320, 180]}]}"#;
    let s = Subjects::parse(good).unwrap();
    assert_eq!(s.size, (320, 180));
    assert_eq!(
        s.boxes[0].rect,
        Rect {
            x: 10,
            y: 20,
            w: 30,
            h: 40
        }
    );
    assert_eq!(s.boxes[1].label, "subject");
    for (from, to, says) in [
        ("[0, 0, 320, 180]", "[1, 0, 320, 180]", "boxes[1].box"),
        ("[10, 20, 30, 40]", "[10, 20, 30]", "boxes[0].box"),
        (r#""frame": 2"#, r#""frame": "2""#, "boxes[1].frame"),
        (r#""size": [320, 180]"#, r#""size": [320, 0]"#, "size"),
        (r#""label": "dog""#, r#""label": 3"#, "boxes[0].label"),
        (
            r#", "box": [0, 0, 320, 180]"#,
            "",
            "boxes[1]: missing field `box`",
        ),
        (
            r#""size": [320, 180]"#,
            r#""size": "320x180""#,
            "size: invalid type",
        ),
        (
            r#""clip": "a.mp4""#,
            r#""clip": ["a.mp4"]"#,
            "clip: invalid type",
        ),
    ] {
        let text = good.replacen(from, to, 1);
        assert_ne!(text, good);
        let e = Subjects::parse(&text).unwrap_err();
        assert!(e.starts_with(says), "{to}: {e}");
    }
    let dir = common::video::tempdir("boxes");
    let file = dir.join("b.json");
    std::fs::write(&file, good.replacen("\"boxes\"", "\"boxen\"", 1)).unwrap();
    let e = Subjects::read(&file).unwrap_err().to_string();
    assert!(
        e.contains("b.json") && e.contains("missing field `boxes`"),
        "{e}"
    );
    // A bad box names the file, the box and the field.
    std::fs::write(&file, good.replacen(r#""frame": 2"#, r#""frame": 2.5"#, 1)).unwrap();
    let e = Subjects::read(&file).unwrap_err().to_string();
    assert!(
        e.contains("b.json")
            && e.contains("boxes[1].frame: expected a whole number ≥ 0, found 2.5"),
        "{e}"
    );
}

fn path_text(centres: &[(usize, usize, f64, f64)]) -> String {
    // (frame, shot, centre x, centre y) with a 100x200 window.
    let frames: Vec<String> = centres
        .iter()
        .map(|&(frame, shot, cx, cy)| {
            format!(
                r#"{{"frame": {frame}, "t": {}, "shot": {shot}, "window": [{}, {}, 100, 200], "mode": "crop"}}"#,
                frame as f64 / 25.0,
                cx - 50.0,
                cy - 100.0
            )
        })
        .collect();
    format!(
        r#"{{"version": 1, "input": [1000, 500], "output": [100, 200], "writer": "test",
            "shots": [{{"first": 0, "last": 3, "mode": "crop", "camera": "pan"}},
                      {{"first": 4, "last": 9, "mode": "crop", "camera": "still"}}],
            "frames": [{}]}}"#,
        frames.join(",")
    )
}

#[test]
fn path_smoothness_counts_jumps_and_acceleration_within_shots_only() {
    // Shot 0: x 100, 102, 106, 106 (steps 2, 4, 0; second differences 2, −4);
    // then a cut to 800; shot 1: y moves 300, 303, then frame 7 is missing,
    // then frames 8 and 9.
    let text = path_text(&[
        (0, 0, 100.0, 250.0),
        (1, 0, 102.0, 250.0),
        (2, 0, 106.0, 250.0),
        (3, 0, 106.0, 250.0),
        (4, 1, 800.0, 300.0),
        (5, 1, 800.0, 303.0),
        (6, 1, 800.0, 303.0),
        (8, 1, 500.0, 100.0),
        (9, 1, 500.0, 101.0),
    ]);
    let p: PathFile = serde_json::from_str(&text).unwrap();
    let s = path_smoothness(&p);
    assert_eq!((s.frames, s.shots, s.modes), (9, 2, [9, 0, 0]));
    // Steps: 0→1, 1→2, 2→3, 4→5, 5→6, 8→9 (not 3→4: a cut; not 6→8: a gap).
    assert_eq!(s.steps, 6);
    assert_eq!(s.max_jump, (4.0, 3.0));
    assert_eq!(s.max_jump_frame, Some(2));
    assert!((s.max_jump_percent() - 0.4).abs() < 1e-12);
    // Triples: (0,1,2) 2; (1,2,3) 4; (4,5,6) 3 (in y).
    assert_eq!(s.triples, 3);
    assert!((s.mean_accel - 3.0).abs() < 1e-12, "{s:?}");
    assert!((s.mean_accel_xy.0 - 2.0).abs() < 1e-12);
    assert!((s.mean_accel_xy.1 - 1.0).abs() < 1e-12);
}

#[test]
fn a_still_window_is_perfectly_smooth() {
    let text = path_text(&[
        (0, 0, 500.0, 250.0),
        (1, 0, 500.0, 250.0),
        (2, 0, 500.0, 250.0),
    ]);
    let s = path_smoothness(&serde_json::from_str(&text).unwrap());
    assert_eq!((s.steps, s.triples), (2, 1));
    assert_eq!((s.max_jump, s.mean_accel), ((0.0, 0.0), 0.0));
}

#[test]
fn path_file_errors_name_the_file_and_what_is_wrong() {
    // The op's own reader reads the path: its messages name the file, and
    // the value or the frame that is wrong.
    let dir = common::video::tempdir("path");
    let file = dir.join("window-path.json");
    let text = path_text(&[(0, 0, 500.0, 250.0), (1, 0, 500.0, 250.0)]);
    std::fs::write(&file, &text).unwrap();
    assert_eq!(PathFile::load(&file).unwrap().frames.len(), 2);
    for (from, to, says) in [
        (r#""mode": "crop"}"#, r#""mode": "slide"}"#, "`slide`"),
        (
            r#"[450, 150, 100, 200]"#,
            r#"[450, 150, 100]"#,
            "invalid length 3",
        ),
        (
            r#"[450, 150, 100, 200]"#,
            r#"[950, 150, 100, 200]"#,
            "frame 0",
        ),
        (
            r#""output": [100, 200]"#,
            r#""output": "100x200""#,
            "\"100x200\"",
        ),
        (r#""version": 1"#, r#""version": 3"#, "version 3"),
    ] {
        let bad = text.replacen(from, to, 1);
        assert_ne!(bad, text, "{from}");
        std::fs::write(&file, bad).unwrap();
        let e = PathFile::load(&file).unwrap_err().to_string();
        assert!(
            e.contains("window-path.json") && e.contains(says),
            "{to}: {e}"
        );
    }
    std::fs::write(&file, "{\"version\": 1,").unwrap();
    let e = PathFile::load(&file).unwrap_err().to_string();
    assert!(
        e.contains("window-path.json") && e.contains("not a reframe path"),
        "{e}"
    );
}

#[test]
fn a_zoom_letterboxed_at_0_6_keeps_its_box_with_the_path_and_loses_it_without() {
    // 320x180 to 120x284: the fixed scales are 284/180 (1.58) and 120/320
    // (0.375). The zoom shows the window x 60..260 (200x180) fitted to the
    // output's width, at 0.6: 120x108 with bars above and below.
    let (w, h, ow, oh) = (320, 180, 120, 284);
    let f = textured(w, h, 31);
    let picture = area_scale(&cut(&f, 60, 0, 200, 180), 120, 108);
    let top = (oh - 108) / 2;
    let result = Plane::from_fn(ow, oh, |x, y| {
        if (top..top + 108).contains(&y) {
            picture.get(x, y - top)
        } else {
            [0, 0, 0, 255]
        }
    });
    let path: PathFile = serde_json::from_str(&format!(
        r#"{{"version": 1, "input": [{w}, {h}], "output": [{ow}, {oh}],
            "shots": [{{"first": 0, "last": 0, "mode": "pad", "camera": "zoom"}}],
            "frames": [{{"frame": 0, "shot": 0, "window": [60, 0, 200, 180], "mode": "pad",
                         "content": [0, {top}, 120, 108]}}]}}"#
    ))
    .unwrap();
    assert_eq!(path_scales(&path), [0.6]);
    let dog = Rect {
        x: 120,
        y: 50,
        w: 60,
        h: 60,
    };
    let look = |scales: Vec<f64>| {
        let mut meter = Meter::new(1)
            .with_crops(0)
            .with_subjects(Subjects {
                clip: None,
                size: (w, h),
                boxes: vec![Subject {
                    frame: 0,
                    label: "dog".into(),
                    rect: dog,
                }],
            })
            .with_path_scales(scales);
        meter.push(&f, &result).unwrap();
        meter.report().subjects.unwrap().boxes[0].result
    };
    let with_path = look(path_scales(&path));
    assert!(with_path.kept() && with_path.ncc > 0.99, "{with_path:?}");
    assert_eq!(with_path.scale, 0.6);
    // (120 − 60) · 0.6 = 36 across, 50 · 0.6 = 30 below the bar.
    let at = with_path.at.unwrap();
    assert!(
        at.x.abs_diff(36) <= 1 && at.y.abs_diff(top + 30) <= 1 && (at.w, at.h) == (36, 36),
        "{at:?}"
    );
    let without = look(Vec::new());
    assert!(!without.kept(), "{without:?}");
    assert_ne!(without.scale, 0.6);
}

#[test]
fn the_binary_prints_the_reframing_figures_and_names_a_bad_file() {
    use common::video::{run, stderr, tempdir};
    let dir = tempdir("quality-reframe");
    let clip = dir.join("clip.mp4");
    let o = run(&[
        "run",
        "test:smpte",
        clip.to_str().unwrap(),
        "--frames",
        "6",
        "--size",
        "128x72",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let boxes = dir.join("boxes.json");
    std::fs::write(
        &boxes,
        r#"{"size": [128, 72], "boxes": [{"frame": 1, "label": "ball", "box": [40, 10, 48, 48]}]}"#,
    )
    .unwrap();
    // A path of the result's size, still but for one 6-pixel step.
    let frames: Vec<String> = (0..6)
        .map(|i| {
            let x = if i < 3 { 32 } else { 38 };
            format!(r#"{{"frame": {i}, "shot": 0, "window": [{x}, 0, 64, 72], "mode": "carve"}}"#)
        })
        .collect();
    let path = dir.join("path.json");
    std::fs::write(
        &path,
        format!(
            r#"{{"version": 1, "input": [128, 72], "output": [64, 72],
                "shots": [{{"first": 0, "last": 5, "mode": "carve", "camera": "pan"}}],
                "frames": [{}]}}"#,
            frames.join(",")
        ),
    )
    .unwrap();
    let args = |extra: &[&str]| {
        let mut a = vec![
            "quality",
            clip.to_str().unwrap(),
            "--op",
            "retarget:width=50%",
            "--device",
            "cpu",
            "--every",
            "3",
            "--crops",
            "3",
            "--boxes",
        ];
        a.push(boxes.to_str().unwrap());
        a.extend_from_slice(extra);
        a.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let a = args(&["--reframe-path", path.to_str().unwrap(), "--json"]);
    let o = run(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["size"], serde_json::json!([64, 72]));
    assert_eq!(v["similarity"]["crops"].as_array().unwrap().len(), 3);
    assert!(v["similarity"]["best_crop"]["ratio"].as_f64().unwrap() > 0.0);
    assert!(v["flicker"]["centre_ratio"].as_f64().unwrap() >= 0.0);
    assert_eq!(v["subjects"]["total"], 1);
    assert!(v["subjects"]["boxes"][0]["result"]["kept"].is_boolean());
    assert_eq!(v["subjects"]["labels"]["ball"]["total"], 1);
    assert_eq!(v["path"]["max_jump"]["x"], 6.0);
    assert_eq!(v["path"]["steps"], 5);
    assert_eq!(v["path"]["modes"]["carve"], 6);
    // The text table names the same parts.
    let o = run(&args(&["--reframe-path", path.to_str().unwrap()])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    let text = String::from_utf8_lossy(&o.stdout);
    for part in [
        "best crop",
        "centre",
        "subjects kept",
        "window path",
        "x 6.0 px",
    ] {
        assert!(text.contains(part), "{part}: {text}");
    }
    assert!(!stderr(&o).contains("marks boxes on"), "{}", stderr(&o));
    // A box file that names another clip is measured, with a note; one that
    // names this clip's file (wherever it lies) is not noted.
    for (named, noted) in [("other.mp4", true), ("/elsewhere/clip.mp4", false)] {
        std::fs::write(
            &boxes,
            format!(
                r#"{{"clip": "{named}", "size": [128, 72], "boxes": [{{"frame": 1, "box": [40, 10, 48, 48]}}]}}"#
            ),
        )
        .unwrap();
        let o = run(&args(&["--reframe-path", path.to_str().unwrap()])
            .iter()
            .map(String::as_str)
            .collect::<Vec<_>>());
        let e = stderr(&o);
        assert!(o.status.success(), "{e}");
        assert_eq!(
            e.contains("marks boxes on other.mp4, and the original is clip.mp4"),
            noted,
            "{named}: {e}"
        );
    }
    // A path of another size is refused with the file and the field.
    std::fs::write(
        &path,
        std::fs::read_to_string(&path)
            .unwrap()
            .replace("[64, 72]", "[72, 128]"),
    )
    .unwrap();
    let o = run(&args(&["--reframe-path", path.to_str().unwrap()])
        .iter()
        .map(String::as_str)
        .collect::<Vec<_>>());
    assert!(!o.status.success());
    let e = stderr(&o);
    assert!(e.contains("path.json") && e.contains("output"), "{e}");
}

/// A reframe of a still picture is planned live, holding 0.4 s of frames
/// back to look ahead: what comes out first are placeholders, and each
/// result comes `delay` frames after its own frame. `quality` measures
/// each result against its own original and drains the held frames at the
/// end, so a still picture in a still window flickers not at all and a box
/// on its first frame is found. (It paired each result with the frame fed
/// in with it: the first 12 results were black, a box on frame 0 was lost,
/// and the still picture "flickered" 0.41.)
#[test]
fn a_live_planned_reframe_is_measured_frame_against_its_own_frame() {
    use common::video::{run, stderr, tempdir};
    let dir = tempdir("quality-live-reframe");
    let (w, h) = (320, 180);
    let picture = textured(w, h, 7);
    let png = dir.join("still.png");
    let bytes: Vec<u8> = picture.as_slice().iter().flatten().copied().collect();
    image::RgbaImage::from_raw(w as u32, h as u32, bytes)
        .unwrap()
        .save(&png)
        .unwrap();
    let boxes = dir.join("boxes.json");
    std::fs::write(
        &boxes,
        r#"{"size": [320, 180], "boxes": [{"frame": 0, "box": [140, 40, 40, 100]},
                                          {"frame": 29, "box": [140, 40, 40, 100]}]}"#,
    )
    .unwrap();
    let quality = |extra: &[&str]| {
        let mut a = vec![
            "quality",
            png.to_str().unwrap(),
            "--op",
            "reframe:aspect=9:16",
            "--device",
            "cpu",
            "--frames",
            "30",
            "--every",
            "10",
        ];
        a.extend_from_slice(extra);
        run(&a)
    };
    let o = quality(&["--boxes", boxes.to_str().unwrap(), "--json"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["frames"], 30, "every frame measured, the held ones too");
    assert_eq!(v["flicker"]["result"], 0.0, "{}", v["flicker"]);
    // Still against still: as still as the centre crop, a ratio of 1.
    assert_eq!(v["flicker"]["centre_ratio"], 1.0, "{}", v["flicker"]);
    for b in v["subjects"]["boxes"].as_array().unwrap() {
        assert_eq!(b["result"]["kept"], true, "{b}");
    }
    // The text table gives the ratio of two still clips as 1, not a
    // number that overflowed.
    let o = quality(&["--crops", "0"]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "{}", stderr(&o));
    let flicker: Vec<&str> = text.lines().filter(|l| l.starts_with("flicker")).collect();
    assert_eq!(flicker.len(), 2, "{text}");
    for line in flicker {
        assert!(line.trim_end().ends_with(" 1.000"), "{line}");
    }
}
