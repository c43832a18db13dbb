//! Retarget a photograph to 4:3 with the library API, protecting nothing.
//!
//!     cargo run --release --example 01_retarget_image -- examples/data/coffee.png coffee-4x3.png

use std::path::PathBuf;

use seamstream::Frame;
use seamstream::io::{load_image, save_image};
use seamstream::ops::retarget::{CarveOptions, Energy, retarget};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "examples/data/coffee.png".into()),
    );
    let output = PathBuf::from(args.next().unwrap_or_else(|| "retargeted.png".into()));

    // A gray picture is carved as RGBA here, to keep the example short.
    let img = load_image(&input)?.to_rgba();
    // 4:3 at the same height.
    let width = img.height() * 4 / 3;
    let opts = CarveOptions {
        energy: Energy::Forward,
        ..Default::default()
    };
    let out = retarget(&img, width.min(2 * img.width()), img.height(), &opts)?;
    save_image(&Frame::Rgba(out), &output)?;
    println!(
        "{} -> {} ({}x{})",
        input.display(),
        output.display(),
        width,
        img.height()
    );
    Ok(())
}
