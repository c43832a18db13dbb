//! Host frames as packed bytes, the layout the GPU stage's pinned buffers
//! hold: rows packed, planes one after another (a frame: one plane; NV12:
//! Y, UV; I420: Y, U, V), as [`plane_shapes`] lists them. Also planes at a
//! video buffer's strides, packed and unpacked in one copy each. Frame
//! types in, bytes out, and back; nothing here knows the GPU or GStreamer.

use crate::error::{Error, Result};
use crate::frame::{Frame, PixelFormat, Plane, Yuv420};

/// Each plane's bytes a row and rows for a `w`×`h` frame in `format`, in the
/// order the packed layout holds them; planes the format lacks are `(0, 0)`.
pub fn plane_shapes(format: PixelFormat, w: usize, h: usize) -> [(usize, usize); 3] {
    let (cw, ch) = Yuv420::chroma_size(w, h);
    match format {
        PixelFormat::Rgba8 => [(4 * w, h), (0, 0), (0, 0)],
        PixelFormat::Gray8 => [(w, h), (0, 0), (0, 0)],
        PixelFormat::Nv12 => [(w, h), (2 * cw, ch), (0, 0)],
        PixelFormat::I420 => [(w, h), (cw, ch), (cw, ch)],
    }
}

/// A YUV frame's planes one after another, rows packed (the layout the
/// GPU's YUV conversions take): Y, then U and V (I420) or UV (NV12).
pub fn write_yuv(y: &Yuv420, out: &mut [u8]) {
    let mut at = 0;
    for p in [&y.y, &y.u, &y.v] {
        for r in 0..p.height() {
            let row = p.row(r);
            out[at..at + row.len()].copy_from_slice(row);
            at += row.len();
        }
    }
}

/// Rows this many at a time to a rayon task, for the plane copies: one
/// thread alone does not fill the memory bus.
const ROWS_A_TASK: usize = 16;

/// Bytes a plane of `rows` rows of `row` bytes, `stride` bytes apart, spans
/// (the last row without its padding); `None` if that overflows or the
/// stride is shorter than a row.
fn plane_span(row: usize, rows: usize, stride: usize) -> Option<usize> {
    if rows == 0 || row == 0 {
        return Some(0);
    }
    (stride >= row).then_some(())?;
    stride.checked_mul(rows - 1)?.checked_add(row)
}

/// Copies strided planes (as a mapped buffer holds them) into `out`, rows
/// packed, planes one after another: `shape` gives each plane's bytes a row
/// and rows ([`plane_shapes`]). The bytes of [`write_yuv`] or
/// [`write_packed`] for the same pixels, in one copy.
pub fn pack_planes(
    planes: &[(&[u8], usize); 3],
    shape: [(usize, usize); 3],
    out: &mut [u8],
) -> Result<()> {
    use rayon::prelude::*;
    let mut at = 0;
    for (&(data, stride), (row, rows)) in planes.iter().zip(shape) {
        let n = row * rows;
        if n == 0 {
            continue;
        }
        let span = plane_span(row, rows, stride).filter(|&s| s <= data.len());
        let (Some(_), Some(dst)) = (span, out.get_mut(at..at + n)) else {
            return Err(Error::BadFrame(format!(
                "a plane of {rows} rows of {row} bytes, {stride} bytes apart, does not fit \
                 the {} bytes mapped or the {} bytes of the slot",
                data.len(),
                out.len()
            )));
        };
        dst.par_chunks_mut(row * ROWS_A_TASK)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, o) in chunk.chunks_exact_mut(row).enumerate() {
                    let src = (c * ROWS_A_TASK + i) * stride;
                    o.copy_from_slice(&data[src..src + row]);
                }
            });
        at += n;
    }
    Ok(())
}

/// The inverse of [`pack_planes`]: packed planes of `shape` into `dst`, plane
/// `i` starting at `offsets[i]` with rows `strides[i]` bytes apart (a video
/// buffer's layout), the padding after each row zeroed.
pub fn unpack_planes(
    packed: &[u8],
    shape: [(usize, usize); 3],
    dst: &mut [u8],
    offsets: &[usize],
    strides: &[usize],
) -> Result<()> {
    use rayon::prelude::*;
    let mut at = 0;
    for (i, (row, rows)) in shape.into_iter().enumerate() {
        let n = row * rows;
        if n == 0 {
            continue;
        }
        let (off, stride) = match (offsets.get(i), strides.get(i)) {
            (Some(&o), Some(&s)) => (o, s),
            _ => (usize::MAX, 0),
        };
        let span = plane_span(row, rows, stride).and_then(|s| off.checked_add(s));
        let (Some(end), Some(src)) = (span, packed.get(at..at + n)) else {
            return Err(Error::BadFrame(format!(
                "plane {i} ({rows} rows of {row} bytes) has no room in the output layout"
            )));
        };
        // The last row's padding too, where the buffer holds it.
        let padded = off.saturating_add(stride.saturating_mul(rows));
        let Some(plane) = dst.get_mut(off..padded.min(dst.len()).max(end)) else {
            return Err(Error::BadFrame(format!(
                "plane {i} ({rows} rows of {row} bytes, {stride} apart, at {off}) does not fit \
                 a buffer of {} bytes",
                dst.len()
            )));
        };
        plane
            .par_chunks_mut(stride * ROWS_A_TASK)
            .zip(src.par_chunks(row * ROWS_A_TASK))
            .for_each(|(d, s)| {
                for (o, r) in d.chunks_mut(stride).zip(s.chunks_exact(row)) {
                    let (pixels, padding) = o.split_at_mut(row);
                    pixels.copy_from_slice(r);
                    padding.fill(0);
                }
            });
        at += n;
    }
    Ok(())
}

/// The inverse of [`write_yuv`].
pub fn read_yuv(bytes: &[u8], format: PixelFormat, w: usize, h: usize) -> Result<Yuv420> {
    let mut y = Yuv420::new(format, w, h)?;
    let mut at = 0;
    for p in [&mut y.y, &mut y.u, &mut y.v] {
        for row in p.rows_mut() {
            let n = row.len();
            row.copy_from_slice(&bytes[at..at + n]);
            at += n;
        }
    }
    Ok(y)
}

/// Writes a frame's pixels into `out`, rows packed; rows are copied in
/// parallel (one thread alone does not fill the memory bus).
pub fn write_packed(frame: &Frame, out: &mut [u8]) {
    use rayon::prelude::*;
    fn rows<T: Copy + Sync>(
        p: &Plane<T>,
        bpp: usize,
        out: &mut [u8],
        bytes: impl Fn(&[T]) -> &[u8] + Sync,
    ) {
        let row = (bpp * p.width()).max(1);
        out.par_chunks_mut(row * 16)
            .enumerate()
            .for_each(|(c, chunk)| {
                for (i, o) in chunk.chunks_exact_mut(row).enumerate() {
                    let y = c * 16 + i;
                    if y < p.height() {
                        o.copy_from_slice(bytes(p.row(y)));
                    }
                }
            });
    }
    match frame {
        Frame::Rgba(p) => rows(p, 4, out, |r| r.as_flattened()),
        Frame::Gray(p) => rows(p, 1, out, |r| r),
    }
}

/// A frame from packed rows of RGBA or gray (YUV is [`read_yuv`]'s).
pub fn read_packed(bytes: &[u8], w: usize, h: usize, format: PixelFormat) -> Result<Frame> {
    use rayon::prelude::*;
    const CHUNK: usize = 1 << 16;
    Ok(match format {
        PixelFormat::Gray8 => Frame::Gray(Plane::from_vec(w, h, bytes.to_vec())?),
        PixelFormat::Nv12 | PixelFormat::I420 => {
            return Err(Error::BadFrame(format!(
                "{format} bytes are planes of YUV, not a packed frame"
            )));
        }
        PixelFormat::Rgba8 => {
            let mut px = vec![[0u8; 4]; w * h];
            px.as_flattened_mut()
                .par_chunks_mut(CHUNK)
                .zip(bytes.par_chunks(CHUNK))
                .for_each(|(d, s)| d.copy_from_slice(s));
            Frame::Rgba(Plane::from_vec(w, h, px)?)
        }
    })
}

/// One plane of a frame in device memory (GStreamer's CUDA memory): its
/// first byte and the bytes from one row to the next.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DevicePlane {
    pub ptr: u64,
    pub pitch: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIZES: [(usize, usize); 5] = [(1, 1), (5, 3), (17, 3), (64, 48), (321, 241)];

    /// Seeded random bytes.
    fn noise(n: usize, seed: u64) -> Vec<u8> {
        crate::noise::Noise::new(seed).bytes(n)
    }

    fn random_yuv(format: PixelFormat, w: usize, h: usize, seed: u64) -> Yuv420 {
        let mut y = Yuv420::new(format, w, h).unwrap();
        for (k, p) in [&mut y.y, &mut y.u, &mut y.v].into_iter().enumerate() {
            let bytes = noise(p.width() * p.height(), seed + k as u64);
            *p = Plane::from_vec(p.width(), p.height(), bytes).unwrap();
        }
        y
    }

    /// Bytes of a packed `w`×`h` frame in `format`.
    fn packed_len(format: PixelFormat, w: usize, h: usize) -> usize {
        plane_shapes(format, w, h)
            .iter()
            .map(|(row, rows)| row * rows)
            .sum()
    }

    /// Rows of `row` bytes from `packed`, `stride` bytes apart, the padding
    /// filled with junk: a plane as a mapped buffer may hold it.
    fn strided(packed: &[u8], row: usize, rows: usize, stride: usize) -> Vec<u8> {
        let mut out = vec![0xEE; stride * rows];
        for y in 0..rows {
            out[y * stride..y * stride + row].copy_from_slice(&packed[y * row..(y + 1) * row]);
        }
        out
    }

    /// Pictures laid out packed the old way (a picture, then `write_yuv` or
    /// `write_packed`), for every input format at odd and even sizes.
    fn cases() -> Vec<(PixelFormat, usize, usize, Vec<u8>)> {
        let mut cases = Vec::new();
        for (i, &(w, h)) in SIZES.iter().enumerate() {
            for format in [PixelFormat::Nv12, PixelFormat::I420] {
                let yuv = random_yuv(format, w, h, 10 * i as u64);
                let mut old = vec![0u8; packed_len(format, w, h)];
                write_yuv(&yuv, &mut old);
                cases.push((format, w, h, old));
            }
            let px = noise(4 * w * h, 7 + i as u64);
            let rgba = Plane::from_vec(
                w,
                h,
                px.chunks_exact(4)
                    .map(|c| [c[0], c[1], c[2], c[3]])
                    .collect(),
            )
            .unwrap();
            let mut old = vec![0u8; 4 * w * h];
            write_packed(&Frame::Rgba(rgba), &mut old);
            cases.push((PixelFormat::Rgba8, w, h, old));
        }
        cases
    }

    /// Packing mapped planes whose strides exceed their rows gives the bytes
    /// of the old two copies (mapped buffer → picture → pinned buffer).
    #[test]
    fn packing_strided_planes_gives_the_old_paths_bytes() {
        for (format, w, h, old) in cases() {
            let shape = plane_shapes(format, w, h);
            let mut at = 0;
            let planes: Vec<(Vec<u8>, usize)> = shape
                .iter()
                .enumerate()
                .map(|(i, &(row, rows))| {
                    let stride = row + 1 + 2 * i;
                    let p = strided(&old[at..at + row * rows], row, rows, stride);
                    at += row * rows;
                    (p, stride)
                })
                .collect();
            let mapped = [0, 1, 2].map(|i| (planes[i].0.as_slice(), planes[i].1));
            let mut out = vec![0x55; old.len()];
            pack_planes(&mapped, shape, &mut out).unwrap();
            assert!(out == old, "{format} {w}x{h}: packed bytes differ");
        }
    }

    /// Reading packed bytes back gives the frame or the YUV picture that
    /// was written; YUV bytes are not a packed frame.
    #[test]
    fn packed_bytes_read_back_as_written() {
        for (format, w, h, packed) in cases() {
            let mut again = vec![0u8; packed.len()];
            match format {
                PixelFormat::Rgba8 => {
                    write_packed(&read_packed(&packed, w, h, format).unwrap(), &mut again)
                }
                _ => {
                    assert!(read_packed(&packed, w, h, format).is_err());
                    write_yuv(&read_yuv(&packed, format, w, h).unwrap(), &mut again);
                }
            }
            assert!(again == packed, "{format} {w}x{h}: read back differs");
        }
        let gray = noise(15, 1);
        let Frame::Gray(p) = read_packed(&gray, 5, 3, PixelFormat::Gray8).unwrap() else {
            panic!("gray bytes read as another format")
        };
        assert_eq!(p.as_slice(), &gray[..]);
    }

    /// A plane shorter than its rows and stride say is an error, not a panic.
    #[test]
    fn a_short_mapped_plane_is_an_error() {
        let shape = plane_shapes(PixelFormat::Rgba8, 4, 3);
        let data = vec![0u8; 16 * 3 - 1];
        let mut out = vec![0u8; 48];
        let planes = [(data.as_slice(), 16), (&[][..], 0), (&[][..], 0)];
        assert!(pack_planes(&planes, shape, &mut out).is_err());
        // A stride shorter than a row.
        let long = vec![0u8; 48];
        let planes = [(long.as_slice(), 15), (&[][..], 0), (&[][..], 0)];
        assert!(pack_planes(&planes, shape, &mut out).is_err());
    }

    /// Unpacking into a dirty buffer at a video layout's offsets and strides
    /// gives the old path's bytes (a zeroed buffer with the rows written at
    /// the same places): every row's padding is zeroed.
    #[test]
    fn unpacking_into_a_strided_layout_gives_the_old_paths_bytes() {
        for (format, w, h, packed) in cases() {
            let shape = plane_shapes(format, w, h);
            // GStreamer's strides: rows rounded up to 4 bytes.
            let strides: Vec<usize> = shape
                .iter()
                .map(|&(row, _)| row.next_multiple_of(4))
                .collect();
            let mut offsets = vec![0];
            for (i, &(_, rows)) in shape.iter().enumerate().take(2) {
                offsets.push(offsets[i] + strides[i] * rows);
            }
            let size = offsets[2] + strides[2] * shape[2].1;
            let mut old = vec![0u8; size];
            let mut at = 0;
            for (i, &(row, rows)) in shape.iter().enumerate() {
                for y in 0..rows {
                    let o = offsets[i] + y * strides[i];
                    old[o..o + row].copy_from_slice(&packed[at..at + row]);
                    at += row;
                }
            }
            let mut dst = vec![0xAB; size];
            unpack_planes(&packed, shape, &mut dst, &offsets, &strides).unwrap();
            assert!(dst == old, "{format} {w}x{h}: unpacked bytes differ");
            // The round trip through a packing gives the packed bytes back.
            let planes = [0, 1, 2].map(|i| (&dst[offsets[i]..], strides[i]));
            let mut back = vec![0u8; packed.len()];
            pack_planes(&planes, shape, &mut back).unwrap();
            assert!(back == packed, "{format} {w}x{h}: round trip differs");
            // One byte short of the last row is an error, not a panic.
            let mut short = vec![0u8; size - (strides[2] - shape[2].0) - 1];
            if shape[2].0 > 0 {
                assert!(unpack_planes(&packed, shape, &mut short, &offsets, &strides).is_err());
            }
        }
    }
}
