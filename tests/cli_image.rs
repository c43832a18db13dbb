//! The `seamstream image` and `ops` commands, run as a user runs them.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_seamstream"))
}

fn tempdir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("seamstream-cli-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
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
}
