//! Still images in and out (PNG and JPEG, through the `image` crate).
//!
//! Reading gives an RGBA [`Frame`]; writing goes to a temporary file beside
//! the target and is renamed into place, so a failure never leaves a partial
//! output file.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

/// The photograph bundled into the binary, used when no input is given.
pub static SAMPLE_PNG: &[u8] = include_bytes!("../examples/data/chelsea.png");

/// Largest side we accept from an image file.
pub const MAX_SIDE: u32 = 32768;

fn read_err(path: &Path, reason: impl Into<String>) -> Error {
    Error::Read {
        path: path.to_path_buf(),
        reason: reason.into(),
    }
}

fn decoded_to_frame(img: image::DynamicImage, path: &Path) -> Result<Frame> {
    if img.width() == 0 || img.height() == 0 {
        return Err(read_err(path, "the image is empty (0 pixels)"));
    }
    if img.width() > MAX_SIDE || img.height() > MAX_SIDE {
        return Err(read_err(
            path,
            format!(
                "{}x{} is larger than the {MAX_SIDE}-pixel limit per side",
                img.width(),
                img.height()
            ),
        ));
    }
    let rgba = img.into_rgba8();
    let (w, h) = (rgba.width() as usize, rgba.height() as usize);
    let px: Vec<[u8; 4]> = rgba
        .into_raw()
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    Ok(Frame::Rgba(Plane::from_vec(w, h, px)?))
}

fn decode_error(path: &Path, e: image::ImageError) -> Error {
    match e {
        image::ImageError::Unsupported(u) => read_err(
            path,
            format!("unsupported image format ({u}); use PNG or JPEG"),
        ),
        image::ImageError::IoError(io) => read_err(path, io.to_string()),
        other => read_err(path, format!("not a valid image: {other}")),
    }
}

/// Reads a PNG or JPEG file as RGBA.
pub fn load_image(path: &Path) -> Result<Frame> {
    let bytes = std::fs::read(path).map_err(|e| read_err(path, e.to_string()))?;
    load_image_bytes(&bytes, path)
}

/// Decodes PNG or JPEG bytes; `name` is used in messages.
pub fn load_image_bytes(bytes: &[u8], name: &Path) -> Result<Frame> {
    let format = image::guess_format(bytes)
        .map_err(|_| read_err(name, "not a PNG or JPEG file (unrecognised contents)"))?;
    if !matches!(format, image::ImageFormat::Png | image::ImageFormat::Jpeg) {
        return Err(read_err(
            name,
            format!("{format:?} images are not supported; use PNG or JPEG"),
        ));
    }
    let img =
        image::load_from_memory_with_format(bytes, format).map_err(|e| decode_error(name, e))?;
    decoded_to_frame(img, name)
}

/// The bundled sample photograph.
pub fn sample_image() -> Result<Frame> {
    load_image_bytes(SAMPLE_PNG, Path::new("<built-in sample>"))
}

/// The output format an extension asks for.
pub fn output_format(path: &Path) -> Result<image::ImageFormat> {
    let ext = path
        .extension()
        .and_then(|e| e.to_str())
        .map(|e| e.to_ascii_lowercase());
    match ext.as_deref() {
        Some("png") => Ok(image::ImageFormat::Png),
        Some("jpg") | Some("jpeg") => Ok(image::ImageFormat::Jpeg),
        _ => Err(Error::Write {
            path: path.to_path_buf(),
            reason: "unknown output format; the file name must end in .png, .jpg or .jpeg".into(),
        }),
    }
}

fn temp_path(path: &Path) -> PathBuf {
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    path.with_file_name(format!(".{name}.{}.partial", std::process::id()))
}

/// Writes a frame as PNG or JPEG (by extension). Gray frames are written as
/// 8-bit gray; JPEG drops alpha.
pub fn save_image(frame: &Frame, path: &Path) -> Result<()> {
    let format = output_format(path)?;
    let (w, h) = (frame.width() as u32, frame.height() as u32);
    let img: image::DynamicImage = match frame {
        Frame::Gray(p) => image::GrayImage::from_raw(w, h, p.to_packed().into_packed_vec())
            .map(image::DynamicImage::ImageLuma8),
        Frame::Rgba(p) => {
            let raw: Vec<u8> = p
                .to_packed()
                .into_packed_vec()
                .into_iter()
                .flatten()
                .collect();
            image::RgbaImage::from_raw(w, h, raw).map(image::DynamicImage::ImageRgba8)
        }
    }
    .ok_or_else(|| Error::Write {
        path: path.to_path_buf(),
        reason: "frame buffer has the wrong size".into(),
    })?;
    let img = if format == image::ImageFormat::Jpeg && matches!(frame, Frame::Rgba(_)) {
        image::DynamicImage::ImageRgb8(img.into_rgb8())
    } else {
        img
    };
    let tmp = temp_path(path);
    let result = img
        .save_with_format(&tmp, format)
        .map_err(|e| Error::Write {
            path: path.to_path_buf(),
            reason: e.to_string(),
        })
        .and_then(|()| {
            std::fs::rename(&tmp, path).map_err(|e| Error::Write {
                path: path.to_path_buf(),
                reason: e.to_string(),
            })
        });
    if result.is_err() {
        let _ = std::fs::remove_file(&tmp);
    }
    result
}

/// Checks, before any work, that `path` can be created: its folder exists
/// and is writable, and the extension names a format we write.
pub fn check_writable(path: &Path) -> Result<()> {
    output_format(path)?;
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
        _ => PathBuf::from("."),
    };
    let probe = temp_path(path);
    let bad = |reason: String| Error::Write {
        path: path.to_path_buf(),
        reason,
    };
    if !dir.is_dir() {
        return Err(bad(format!(
            "the folder `{}` does not exist",
            dir.display()
        )));
    }
    std::fs::File::create(&probe).map_err(|e| bad(e.to_string()))?;
    let _ = std::fs::remove_file(&probe);
    Ok(())
}
