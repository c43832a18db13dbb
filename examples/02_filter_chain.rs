//! Build an operation chain from the same text the command line takes, and
//! run it on a still image.
//!
//!     cargo run --release --example 02_filter_chain -- examples/data/chelsea.png edges.png

use std::path::PathBuf;

use seamstream::io::{load_image, save_image};

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let input = PathBuf::from(
        args.next()
            .unwrap_or_else(|| "examples/data/chelsea.png".into()),
    );
    let output = PathBuf::from(args.next().unwrap_or_else(|| "edges.png".into()));

    let mut chain = seamstream::registry::parse_chain(&[
        "gaussian:sigma=1.5",
        "sobel:ksize=3",
        "threshold:t=otsu",
    ])?;
    let frame = load_image(&input)?;
    let (w, h) = chain.output_size(frame.width(), frame.height())?;
    let out = chain.apply(frame)?;
    save_image(&out, &output)?;
    println!(
        "{} -> {} ({w}x{h}): {}",
        input.display(),
        output.display(),
        chain.names().join(" -> ")
    );
    Ok(())
}
