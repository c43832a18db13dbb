//! Still images in and out (PNG and JPEG, through the `image` crate).
//!
//! Reading gives a gray [`Frame`] for a gray picture and an RGBA one for
//! anything else, as OpenCV and ImageMagick keep gray as gray:
//!
//! - 8-bit gray stays as it is; 16-bit gray becomes 8-bit gray (v / 257,
//!   rounded), since every operation works on 8 bits;
//! - gray with alpha becomes RGBA (R = G = B), so that its alpha is kept:
//!   filters keep alpha, and the output is written with it.
//!
//! A file whose data stops early (a JPEG without its end marker, a PNG
//! without its end chunk) is an error, not a picture half filled with grey.
//! Writing goes to a temporary file beside the target and is renamed into
//! place, so a failure never leaves a partial output file.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::frame::{Frame, Plane};

/// The photograph bundled into the binary, used when no input is given.
pub static SAMPLE_PNG: &[u8] = include_bytes!("../../../examples/data/chelsea.png");

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
    let (w, h) = (img.width() as usize, img.height() as usize);
    if matches!(
        img,
        image::DynamicImage::ImageLuma8(_) | image::DynamicImage::ImageLuma16(_)
    ) {
        return Ok(Frame::Gray(Plane::from_vec(
            w,
            h,
            img.into_luma8().into_raw(),
        )?));
    }
    let rgba = img.into_rgba8();
    let px: Vec<[u8; 4]> = rgba
        .into_raw()
        .chunks_exact(4)
        .map(|c| [c[0], c[1], c[2], c[3]])
        .collect();
    Ok(Frame::Rgba(Plane::from_vec(w, h, px)?))
}

/// The name a message gives a format.
fn format_name(format: image::ImageFormat) -> &'static str {
    match format {
        image::ImageFormat::Png => "PNG",
        image::ImageFormat::Jpeg => "JPEG",
        _ => "image",
    }
}

fn decode_error(path: &Path, format: image::ImageFormat, e: image::ImageError) -> Error {
    match e {
        image::ImageError::Unsupported(u) => read_err(
            path,
            format!("unsupported image format ({u}); use PNG or JPEG"),
        ),
        other => read_err(
            path,
            format!(
                "the {} data is truncated or damaged ({other})",
                format_name(format)
            ),
        ),
    }
}

/// Whether encoded data reaches its format's end.
#[derive(Debug, PartialEq)]
enum Ending {
    Complete,
    Truncated,
    /// The structure is not what the walk expects; the decoder decides.
    Unknown,
}

/// Walks a JPEG's segments to its end marker (FF D9). What follows the end
/// (zero padding, a trailer) does not matter.
fn jpeg_ending(bytes: &[u8]) -> Ending {
    // Past the start marker (FF D8), which `guess_format` has seen.
    let mut i = 2;
    loop {
        // A marker: FF, perhaps more FFs as fill, then its code.
        match bytes.get(i) {
            None => return Ending::Truncated,
            Some(0xFF) => {}
            Some(_) => return Ending::Unknown,
        }
        while bytes.get(i) == Some(&0xFF) {
            i += 1;
        }
        let Some(&code) = bytes.get(i) else {
            return Ending::Truncated;
        };
        i += 1;
        match code {
            0xD9 => return Ending::Complete,
            // TEM, restarts and SOI carry no length.
            0x01 | 0xD0..=0xD8 => continue,
            _ => {}
        }
        let (Some(&hi), Some(&lo)) = (bytes.get(i), bytes.get(i + 1)) else {
            return Ending::Truncated;
        };
        let len = (usize::from(hi) << 8) | usize::from(lo);
        if len < 2 {
            return Ending::Unknown;
        }
        i += len;
        if i > bytes.len() {
            return Ending::Truncated;
        }
        if code == 0xDA {
            // Entropy-coded data follows its scan header: FF 00 is a
            // stuffed FF and FF D0..D7 a restart; any other FF begins the
            // next marker.
            loop {
                let Some(at) = bytes[i..].iter().position(|&b| b == 0xFF) else {
                    return Ending::Truncated;
                };
                i += at;
                match bytes.get(i + 1) {
                    None => return Ending::Truncated,
                    Some(0x00 | 0xD0..=0xD7) => i += 2,
                    Some(_) => break,
                }
            }
        }
    }
}

/// Walks a PNG's chunks to its end chunk (IEND).
fn png_ending(bytes: &[u8]) -> Ending {
    // Past the 8-byte signature, which `guess_format` has seen.
    let mut i = 8;
    loop {
        let Some(head) = bytes.get(i..i + 8) else {
            return Ending::Truncated;
        };
        let len = u32::from_be_bytes([head[0], head[1], head[2], head[3]]) as usize;
        // Length, type, data and CRC.
        let end = i + 12 + len;
        if end > bytes.len() {
            return Ending::Truncated;
        }
        if &head[4..8] == b"IEND" {
            return Ending::Complete;
        }
        i = end;
    }
}

/// An error when `bytes` stop before their format's end.
fn check_complete(bytes: &[u8], format: image::ImageFormat, name: &Path) -> Result<()> {
    let (ending, end) = match format {
        image::ImageFormat::Jpeg => {
            let ending = match jpeg_ending(bytes) {
                // Lost among odd segments: an end marker must be there somewhere.
                Ending::Unknown if !bytes.windows(2).any(|w| w == [0xFF, 0xD9]) => {
                    Ending::Truncated
                }
                e => e,
            };
            (ending, "end marker (FF D9)")
        }
        image::ImageFormat::Png => (png_ending(bytes), "end chunk (IEND)"),
        _ => (Ending::Unknown, ""),
    };
    if ending == Ending::Truncated {
        return Err(read_err(
            name,
            format!(
                "the {} data stops before its {end}: the file is truncated or damaged; copy or export it again",
                format_name(format)
            ),
        ));
    }
    Ok(())
}

/// Reads a PNG or JPEG file as gray or RGBA (see the module's notes).
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
    check_complete(bytes, format, name)?;
    let img = image::load_from_memory_with_format(bytes, format)
        .map_err(|e| decode_error(name, format, e))?;
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A small colour JPEG from the `image` crate's encoder.
    fn jpeg() -> Vec<u8> {
        let img = image::RgbImage::from_fn(32, 24, |x, y| {
            image::Rgb([(x * 8) as u8, (y * 10) as u8, ((x ^ y) * 9) as u8])
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
    fn an_end_marker_inside_a_thumbnail_does_not_count() {
        let whole = jpeg();
        // An APP1 segment (as EXIF thumbnails are) holding FF D9, after SOI.
        let payload = [0xFF, 0xD9, 0xFF, 0xD9, 0x00];
        let mut with_app1 = whole[..2].to_vec();
        with_app1.extend([0xFF, 0xE1, 0x00, (payload.len() + 2) as u8]);
        with_app1.extend(payload);
        with_app1.extend(&whole[2..]);
        assert_eq!(jpeg_ending(&with_app1), Ending::Complete);
        let cut = &with_app1[..with_app1.len() - 40];
        assert_eq!(jpeg_ending(cut), Ending::Truncated);
        assert!(load_image_bytes(cut, Path::new("t.jpg")).is_err());
        assert!(load_image_bytes(&with_app1, Path::new("t.jpg")).is_ok());
    }

    #[test]
    fn fill_bytes_before_the_end_marker_and_zeros_after_it_are_fine() {
        let whole = jpeg();
        let mut filled = whole[..whole.len() - 2].to_vec();
        filled.extend([0xFF, 0xFF, 0xFF, 0xD9, 0, 0, 0]);
        assert_eq!(jpeg_ending(&filled), Ending::Complete);
    }

    #[test]
    fn bytes_that_are_no_marker_leave_it_to_the_decoder() {
        let whole = jpeg();
        let mut odd = whole[..2].to_vec();
        odd.extend([0x00, 0x00]);
        odd.extend(&whole[2..]);
        assert_eq!(jpeg_ending(&odd), Ending::Unknown);
        assert!(check_complete(&odd, image::ImageFormat::Jpeg, Path::new("o.jpg")).is_ok());
        let cut = &odd[..odd.len() - 2];
        let e = check_complete(cut, image::ImageFormat::Jpeg, Path::new("o.jpg")).unwrap_err();
        assert!(e.to_string().contains("truncated"), "{e}");
    }

    #[test]
    fn every_cut_of_a_png_is_found() {
        let mut bytes = Vec::new();
        image::GrayImage::from_fn(9, 7, |x, y| image::Luma([(x * y) as u8]))
            .write_to(
                &mut std::io::Cursor::new(&mut bytes),
                image::ImageFormat::Png,
            )
            .unwrap();
        assert_eq!(png_ending(&bytes), Ending::Complete);
        for cut in 8..bytes.len() {
            assert_eq!(png_ending(&bytes[..cut]), Ending::Truncated, "cut at {cut}");
        }
    }
}
