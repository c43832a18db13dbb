//! The `seamstream image` and `ops` commands, run as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

mod common;

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_seamstream"))
}

fn tempdir(name: &str) -> common::video::TempDir {
    common::video::tempdir(&format!("cli-{name}"))
}

fn run(args: &[&str], dir: &Path) -> Output {
    bin()
        .args(args)
        .current_dir(dir)
        .output()
        .expect("the binary runs")
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

fn sample() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/data/chelsea.png")
}

fn size_of(path: &Path) -> (u32, u32) {
    image::image_dimensions(path).expect("a readable image")
}

/// Folder entries, to catch partial output files.
fn entries(dir: &Path) -> Vec<String> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect()
}

#[test]
fn image_without_arguments_retargets_the_built_in_sample_to_out_png() {
    let dir = tempdir("default");
    let o = run(&["image", "--device", "cpu"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    // The sample is 451x300; 75% of 451 is 338.
    assert_eq!(size_of(&dir.join("out.png")), (338, 300));
    assert_eq!(entries(&dir), vec!["out.png".to_string()]);
}

#[test]
fn a_chain_runs_in_order_and_writes_jpeg() {
    let dir = tempdir("chain");
    let input = sample();
    let args = [
        "image",
        input.to_str().unwrap(),
        "o.jpg",
        "--op",
        "gaussian:sigma=2",
        "--op",
        "threshold:t=otsu,type=binary_inv",
    ];
    let o = run(&args, &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(size_of(&dir.join("o.jpg")), (451, 300));
}

#[test]
fn retarget_takes_pixels_and_percent_in_both_dimensions() {
    let dir = tempdir("both");
    let input = sample();
    let o = run(
        &[
            "image",
            input.to_str().unwrap(),
            "o.png",
            "--op",
            "retarget:width=440,height=95%,energy=basic",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(size_of(&dir.join("o.png")), (440, 285));
}

fn assert_fails_cleanly(args: &[&str], name: &str, expect: &[&str]) {
    let dir = tempdir(name);
    let o = run(args, &dir);
    let err = stderr(&o);
    assert_eq!(o.status.code(), Some(1), "{name}: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    for e in expect {
        assert!(err.contains(e), "{name}: expected `{e}` in: {err}");
    }
    assert!(entries(&dir).is_empty(), "{name}: left {:?}", entries(&dir));
}

/// A picture reframed is the picture's own window, not the black a live
/// reframe gives while it fills its look-ahead: one image looks at nothing
/// ahead, and a look-ahead asked for in so many words is refused, named.
#[test]
fn an_image_reframes_at_once_and_refuses_a_look_ahead() {
    let dir = tempdir("reframe-image");
    let input = sample();
    let o = run(
        &[
            "image",
            input.to_str().unwrap(),
            "out.png",
            "--op",
            "reframe:aspect=1:1",
            "--device",
            "cpu",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    let out = image::open(dir.join("out.png")).unwrap().to_luma8();
    assert_eq!(out.dimensions(), (300, 300));
    let mean = out.pixels().map(|p| p.0[0] as f64).sum::<f64>() / (300.0 * 300.0);
    assert!(mean > 40.0, "the picture is black (mean {mean:.1})");
    assert_fails_cleanly(
        &[
            "image",
            input.to_str().unwrap(),
            "out.png",
            "--op",
            "reframe:aspect=1:1,lookahead=0.3",
            "--device",
            "cpu",
        ],
        "reframe-lookahead",
        &["lookahead", "0.3", "lookahead=0"],
    );
}

/// A picture's reframe says what it chose: its fit and window, and the
/// picture set inside the frame that it kept to, where there is one (a
/// vertical picture posted at 16:9 between plain bars).
#[test]
fn an_image_reframe_says_what_it_chose() {
    let dir = tempdir("reframe-said");
    // Texture in 202 columns at 219 of a 640x360 frame, plain grey beside.
    let pillar = image::RgbImage::from_fn(640, 360, |x, y| {
        let v = if (219..421).contains(&x) {
            (80 + (x * 7919 + y * 104_729) % 97) as u8
        } else {
            40
        };
        image::Rgb([v, v, v])
    });
    pillar.save(dir.join("pillar.png")).unwrap();
    let said = |input: &str, aspect: &str| {
        let o = run(
            &[
                "image",
                input,
                "out.png",
                "--op",
                &format!("reframe:aspect={aspect}"),
                "--device",
                "cpu",
            ],
            &dir,
        );
        assert!(o.status.success(), "{}", stderr(&o));
        stderr(&o)
    };
    let text = said("pillar.png", "9:16");
    assert!(
        text.contains(
            "reframe: crop, the window at 220,0 200x360, inside the picture at 220,0 200x360"
        ),
        "{text}"
    );
    let text = said(sample().to_str().unwrap(), "1:1");
    assert!(
        text.contains("reframe: crop, the window at ") && !text.contains("inside the picture"),
        "{text}"
    );
}

#[test]
fn a_missing_input_names_the_file() {
    assert_fails_cleanly(
        &["image", "/nonexistent/cat.png", "o.png"],
        "missing",
        &["/nonexistent/cat.png"],
    );
}

#[test]
fn an_unsupported_or_corrupt_input_says_so() {
    let dir = tempdir("formats");
    std::fs::write(dir.join("notes.txt"), b"hello, not an image").unwrap();
    let p = dir.join("notes.txt");
    assert_fails_cleanly(
        &["image", p.to_str().unwrap(), "o.png"],
        "txt",
        &["not a PNG or JPEG"],
    );
    // A PNG cut in half.
    let bytes = std::fs::read(sample()).unwrap();
    std::fs::write(dir.join("cut.png"), &bytes[..bytes.len() / 2]).unwrap();
    let p = dir.join("cut.png");
    assert_fails_cleanly(
        &["image", p.to_str().unwrap(), "o.png"],
        "cut",
        &["cut.png"],
    );
    // A GIF is an image, but not one we take.
    std::fs::write(dir.join("a.gif"), b"GIF89a\x01\x00\x01\x00\x00\x00\x00;").unwrap();
    let p = dir.join("a.gif");
    assert_fails_cleanly(
        &["image", p.to_str().unwrap(), "o.png"],
        "gif",
        &["PNG or JPEG"],
    );
}

#[test]
fn an_unknown_output_extension_is_refused_before_work() {
    let input = sample();
    assert_fails_cleanly(
        &["image", input.to_str().unwrap(), "o.bmp"],
        "ext",
        &[".png, .jpg or .jpeg"],
    );
}

#[test]
fn an_unwritable_output_is_caught_before_processing() {
    let input = sample();
    assert_fails_cleanly(
        &["image", input.to_str().unwrap(), "/nonexistent-dir/x/o.png"],
        "unwritable",
        &["does not exist"],
    );
}

#[test]
fn retarget_sizes_out_of_range_name_the_range() {
    let input = sample();
    let i = input.to_str().unwrap();
    assert_fails_cleanly(
        &["image", i, "o.png", "--op", "retarget:width=1000"],
        "wide",
        &["width=1000", "902"],
    );
    assert_fails_cleanly(
        &["image", i, "o.png", "--op", "retarget:height=0"],
        "zero",
        &["height=0"],
    );
    assert_fails_cleanly(
        &["image", i, "o.png", "--op", "retarget:width=250%"],
        "pct",
        &["width"],
    );
}

#[test]
fn a_mask_of_the_wrong_size_is_refused() {
    let dir = tempdir("maskfile");
    let mask = dir.join("mask.png");
    image::GrayImage::new(10, 10).save(&mask).unwrap();
    let input = sample();
    let op = format!("retarget:width=90%,protect={}", mask.display());
    assert_fails_cleanly(
        &["image", input.to_str().unwrap(), "o.png", "--op", &op],
        "mask",
        &["10x10", "451x300"],
    );
}

#[test]
fn a_protect_mask_keeps_the_marked_region() {
    let dir = tempdir("protect");
    // Protect the middle third of the sample; carve 100 columns.
    let mask = dir.join("mask.png");
    image::GrayImage::from_fn(451, 300, |x, _| {
        image::Luma([if (150..300).contains(&x) { 255 } else { 0 }])
    })
    .save(&mask)
    .unwrap();
    let input = sample();
    let op = format!("retarget:width=351,protect={}", mask.display());
    let o = run(
        &["image", input.to_str().unwrap(), "o.png", "--op", &op],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(size_of(&dir.join("o.png")), (351, 300));
}

#[test]
fn unknown_ops_and_keys_list_the_valid_choices() {
    assert_fails_cleanly(
        &["image", "--op", "blur"],
        "op",
        &["`blur`", "gaussian", "retarget"],
    );
    assert_fails_cleanly(
        &["image", "--op", "gaussian:size=3"],
        "key",
        &["`size`", "sigma"],
    );
    assert_fails_cleanly(
        &["image", "--op", "threshold:type=binary2"],
        "choice",
        &["binary2", "tozero_inv"],
    );
    assert_fails_cleanly(
        &["image", "--op", "gaussian:sigma=[1,2"],
        "syntax",
        &["not closed"],
    );
}

#[test]
fn a_gpu_that_cannot_be_used_is_a_clear_error() {
    match seamstream::cuda::device_count() {
        // No driver (CI): `cuda` names the device, says why, and the way out.
        Err(_) | Ok(0) => assert_fails_cleanly(
            &["image", "--device", "cuda"],
            "cuda",
            &["--device cuda:0", "--device cpu"],
        ),
        // A GPU host: an ordinal past the last GPU says how many there are.
        Ok(_) => assert_fails_cleanly(
            &["image", "--device", "cuda:99"],
            "cuda99",
            &["cuda:99", "seamstream devices"],
        ),
    }
    assert_fails_cleanly(&["image", "--device", "tpu"], "tpu", &["tpu", "cuda:N"]);
}

#[test]
fn ops_lists_every_operation_with_defaults() {
    let o = bin().arg("ops").output().unwrap();
    assert!(o.status.success());
    let text = String::from_utf8_lossy(&o.stdout);
    let names = [
        "gray",
        "yuv",
        "gaussian",
        "box",
        "convolve",
        "sobel",
        "warp",
        "threshold",
        "adaptive",
        "integral",
        "equalize",
        "retarget",
    ];
    for name in names {
        assert!(
            text.lines().any(|l| l.starts_with(&format!("{name} "))),
            "{name} missing from:\n{text}"
        );
    }
    assert!(text.contains("[default: replicate]"), "{text}");
    // Where they run is said once: every op has both halves (the
    // registry's type holds a GPU half for each).
    assert!(
        text.contains("Each runs on the CPU and on an NVIDIA GPU"),
        "{text}"
    );
}

/// The colour type (byte 25) and bit depth (byte 24) from a PNG's header,
/// read straight from the file: 0 is gray, 2 RGB, 4 gray+alpha, 6 RGBA.
fn png_colour_type(path: &Path) -> (u8, u8) {
    let bytes = std::fs::read(path).unwrap();
    assert_eq!(&bytes[12..16], b"IHDR", "{}", path.display());
    (bytes[25], bytes[24])
}

/// The number of colour components in a JPEG's frame header (SOF0..SOF2).
fn jpeg_components(path: &Path) -> u8 {
    let bytes = std::fs::read(path).unwrap();
    let sof = bytes
        .windows(2)
        .position(|w| w[0] == 0xFF && (0xC0..=0xC2).contains(&w[1]))
        .expect("a frame header");
    // FF Cn, length (2), precision (1), height (2), width (2), components.
    bytes[sof + 9]
}

/// A 40x30 gray picture with some structure, so that filters change it.
fn gray_picture() -> image::GrayImage {
    image::GrayImage::from_fn(40, 30, |x, y| image::Luma([((x * 7 + y * 13) % 256) as u8]))
}

#[test]
fn a_gray_png_stays_gray_through_the_chain() {
    let dir = tempdir("gray-png");
    gray_picture().save(dir.join("in.png")).unwrap();
    let o = run(
        &[
            "image",
            "in.png",
            "out.png",
            "--op",
            "gaussian:sigma=1",
            "--device",
            "cpu",
        ],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_colour_type(&dir.join("out.png")), (0, 8));
    // Blurred, not copied: the ramp's jumps (where it wraps at 256) soften.
    let out = image::open(dir.join("out.png")).unwrap().into_luma8();
    assert_eq!(out.dimensions(), (40, 30));
    assert!(
        out.pixels()
            .zip(gray_picture().pixels())
            .any(|(a, b)| a != b)
    );
}

#[test]
fn a_gray_jpeg_stays_gray() {
    let dir = tempdir("gray-jpeg");
    gray_picture().save(dir.join("in.jpg")).unwrap();
    assert_eq!(jpeg_components(&dir.join("in.jpg")), 1);
    let o = run(
        &["image", "in.jpg", "out.jpg", "--op", "box:radius=1"],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(jpeg_components(&dir.join("out.jpg")), 1);
    let o = run(&["image", "in.jpg", "out.png", "--op", "sobel"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_colour_type(&dir.join("out.png")).0, 0);
}

#[test]
fn every_operation_takes_a_gray_image() {
    let dir = tempdir("gray-ops");
    gray_picture().save(dir.join("in.png")).unwrap();
    for entry in seamstream::registry::REGISTRY {
        let example = entry.spec.example;
        let o = run(
            &[
                "image", "in.png", "out.png", "--op", example, "--device", "cpu",
            ],
            &dir,
        );
        assert!(o.status.success(), "{example}: {}", stderr(&o));
        // `gray` may be asked for RGBA; everything else keeps gray.
        let (colour, _) = png_colour_type(&dir.join("out.png"));
        assert!(
            colour == 0 || example.contains("rgba"),
            "{example}: colour type {colour}"
        );
    }
}

#[test]
fn gray_with_alpha_keeps_its_alpha_and_16_bit_gray_becomes_8_bit_gray() {
    let dir = tempdir("gray-alpha");
    let la = image::GrayAlphaImage::from_fn(16, 8, |x, _| image::LumaA([100, (x * 16) as u8]));
    la.save(dir.join("la.png")).unwrap();
    let o = run(
        &["image", "la.png", "out.png", "--op", "gaussian:sigma=1"],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_colour_type(&dir.join("out.png")), (6, 8));
    let out = image::open(dir.join("out.png")).unwrap().into_rgba8();
    for (x, y, p) in out.enumerate_pixels() {
        assert_eq!(p.0, [100, 100, 100, (x * 16) as u8], "({x}, {y})");
    }

    // 0x8080 of 0xFFFF is 128 of 255.
    let deep =
        image::ImageBuffer::<image::Luma<u16>, Vec<u16>>::from_pixel(12, 6, image::Luma([0x8080]));
    image::DynamicImage::ImageLuma16(deep)
        .save(dir.join("deep.png"))
        .unwrap();
    assert_eq!(png_colour_type(&dir.join("deep.png")), (0, 16));
    let o = run(
        &["image", "deep.png", "out.png", "--op", "gaussian:sigma=1"],
        &dir,
    );
    assert!(o.status.success(), "{}", stderr(&o));
    assert_eq!(png_colour_type(&dir.join("out.png")), (0, 8));
    let out = image::open(dir.join("out.png")).unwrap().into_luma8();
    assert!(out.pixels().all(|p| p.0 == [128]));
}

/// A noisy 64x48 colour JPEG, as the `image` crate encodes it.
fn noisy_jpeg() -> Vec<u8> {
    let mut noise = seamstream::noise::Noise::new(12345);
    let img = image::RgbImage::from_fn(64, 48, |_, _| {
        let v = noise.byte();
        image::Rgb([v, v.wrapping_mul(3), v ^ 0x55])
    });
    let mut bytes = Vec::new();
    img.write_to(
        &mut std::io::Cursor::new(&mut bytes),
        image::ImageFormat::Jpeg,
    )
    .unwrap();
    bytes
}

#[test]
fn a_truncated_jpeg_is_an_error_naming_the_file() {
    let dir = tempdir("cut-jpeg");
    let bytes = noisy_jpeg();
    assert_eq!(&bytes[bytes.len() - 2..], [0xFF, 0xD9], "ends with EOI");
    // The scan data starts after the start-of-scan marker (FF DA).
    let sos = bytes
        .windows(2)
        .position(|w| w == [0xFF, 0xDA])
        .expect("a scan");
    assert!(bytes.len() - sos > 1000, "a scan of some length");
    let cuts = [
        ("half.jpg", (sos + bytes.len()) / 2),
        ("no-eoi.jpg", bytes.len() - 2),
        ("header.jpg", sos + 4),
    ];
    for (name, cut) in cuts {
        std::fs::write(dir.join(name), &bytes[..cut]).unwrap();
        let p = dir.join(name);
        assert_fails_cleanly(
            &["image", p.to_str().unwrap(), "o.png"],
            name,
            &[name, "truncated or damaged"],
        );
    }
    // Zero padding after the end marker is common and harmless.
    let mut padded = bytes.clone();
    padded.extend([0u8; 64]);
    std::fs::write(dir.join("padded.jpg"), &padded).unwrap();
    let o = run(&["image", "padded.jpg", "o.png", "--op", "sobel"], &dir);
    assert!(o.status.success(), "{}", stderr(&o));
}

#[test]
fn a_truncated_png_is_an_error_naming_the_file() {
    let dir = tempdir("cut-png");
    let mut bytes = Vec::new();
    gray_picture()
        .write_to(
            &mut std::io::Cursor::new(&mut bytes),
            image::ImageFormat::Png,
        )
        .unwrap();
    let cuts = [
        ("half.png", bytes.len() / 2),
        // Every pixel is there; the end chunk (IEND, 12 bytes) is not.
        ("no-iend.png", bytes.len() - 12),
        ("header.png", 20),
    ];
    for (name, cut) in cuts {
        std::fs::write(dir.join(name), &bytes[..cut]).unwrap();
        let p = dir.join(name);
        assert_fails_cleanly(
            &["image", p.to_str().unwrap(), "o.png"],
            name,
            &[name, "truncated or damaged"],
        );
    }
}
