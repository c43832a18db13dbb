//! A frame between GStreamer's buffers and the chain: the copy of a
//! buffer into a picture (the CPU path's one copy on the streaming thread),
//! a mapped frame's planes for the GPU stage to copy from, and the YUV
//! colorimetry that both the conversion's bytes and the caps follow. Used
//! by the intake, the engine and the output alike.

use gst_video::prelude::*;
use gstreamer as gst;
use gstreamer_video as gst_video;

use super::gst_err;
use crate::color::{Colorimetry, Matrix, Range};
use crate::error::Result;
use crate::frame::{Frame, Picture, PixelFormat, Plane, Yuv420};

/// The YUV colorimetry for frames described by `info`: the input's own when
/// it is YUV, else BT.709 limited range (what encoders expect), as our type
/// and as GStreamer's, so that converted bytes and caps agree.
pub(crate) fn yuv_colorimetry(
    info: &gst_video::VideoInfo,
) -> (Colorimetry, gst_video::VideoColorimetry) {
    let c = info.colorimetry();
    if info.format_info().is_yuv() {
        let matrix = match c.matrix() {
            gst_video::VideoColorMatrix::Bt601 => Matrix::Bt601,
            _ => Matrix::Bt709,
        };
        let range = match c.range() {
            gst_video::VideoColorRange::Range0_255 => Range::Full,
            _ => Range::Limited,
        };
        (Colorimetry { matrix, range }, c)
    } else {
        let bt709 = "bt709".parse().unwrap_or_else(|_| info.colorimetry());
        (Colorimetry::default(), bt709)
    }
}

/// A mapped frame's planes with their strides in bytes, for the GPU stage
/// to copy from.
pub(super) fn planes<'a>(
    vf: &'a gst_video::VideoFrameRef<&gst::BufferRef>,
) -> Result<[(&'a [u8], usize); 3]> {
    let mut planes: [(&[u8], usize); 3] = [(&[], 0); 3];
    for (i, p) in planes.iter_mut().enumerate().take(vf.n_planes() as usize) {
        let data = vf
            .plane_data(i as u32)
            .map_err(|e| gst_err("cannot read an input buffer", e))?;
        *p = (data, vf.plane_stride()[i] as usize);
    }
    Ok(planes)
}

/// Copies a buffer into a picture (the one copy on the streaming thread):
/// RGBA, GRAY8, I420 or NV12, as the input gave it.
pub(crate) fn picture_from_buffer(
    buffer: &gst::BufferRef,
    info: &gst_video::VideoInfo,
) -> Result<Picture> {
    let vf = gst_video::VideoFrameRef::from_buffer_ref_readable(buffer, info)
        .map_err(|e| gst_err("cannot map an input buffer", e))?;
    let (w, h) = (info.width() as usize, info.height() as usize);
    let plane = |i: u32| -> Result<(&[u8], usize)> {
        let data = vf
            .plane_data(i)
            .map_err(|e| gst_err("cannot read an input buffer", e))?;
        Ok((data, vf.plane_stride()[i as usize] as usize))
    };
    let copy_rows = |dst: &mut Plane<u8>, (data, stride): (&[u8], usize)| {
        let n = dst.width();
        for (y, row) in dst.rows_mut().enumerate() {
            row.copy_from_slice(&data[y * stride..y * stride + n]);
        }
    };
    let format = match info.format() {
        gst_video::VideoFormat::I420 => PixelFormat::I420,
        gst_video::VideoFormat::Nv12 => PixelFormat::Nv12,
        gst_video::VideoFormat::Gray8 => {
            let mut p = Plane::new(w, h, 0u8);
            copy_rows(&mut p, plane(0)?);
            return Ok(Picture::Frame(Frame::Gray(p)));
        }
        _ => {
            // One allocation per frame on the CPU path: the chain owns its frames.
            let (data, stride) = plane(0)?;
            let mut p = Plane::new(w, h, [0u8; 4]);
            for (y, row) in p.rows_mut().enumerate() {
                row.as_flattened_mut()
                    .copy_from_slice(&data[y * stride..y * stride + 4 * w]);
            }
            return Ok(Picture::Frame(Frame::Rgba(p)));
        }
    };
    let mut yuv = Yuv420::new(format, w, h)?;
    copy_rows(&mut yuv.y, plane(0)?);
    copy_rows(&mut yuv.u, plane(1)?);
    if format == PixelFormat::I420 {
        copy_rows(&mut yuv.v, plane(2)?);
    }
    Ok(Picture::Yuv(yuv))
}

// The packing is checked against the GPU ring's layouts (`Layout`).
#[cfg(all(test, feature = "cuda"))]
mod tests {
    use super::*;
    use crate::cuda::stage::Layout;
    use crate::noise::Noise;
    use crate::planes::{pack_planes, write_packed, write_yuv};

    const FORMATS: [(gst_video::VideoFormat, PixelFormat); 3] = [
        (gst_video::VideoFormat::Nv12, PixelFormat::Nv12),
        (gst_video::VideoFormat::I420, PixelFormat::I420),
        (gst_video::VideoFormat::Rgba, PixelFormat::Rgba8),
    ];

    /// Input buffers of noise, with GStreamer's own layout and with a video
    /// meta giving wider strides (as decoders do), at odd and even sizes:
    /// the GPU path's one copy (mapped planes into the pinned buffer) gives
    /// the bytes of the old two (into a picture, then into the buffer).
    #[test]
    fn mapped_input_planes_pack_to_the_old_paths_bytes() {
        gst::init().unwrap();
        for (w, h) in [(1usize, 1usize), (5, 3), (321, 241), (64, 48)] {
            for (gf, pf) in FORMATS {
                let info = gst_video::VideoInfo::builder(gf, w as u32, h as u32)
                    .build()
                    .unwrap();
                for padded in [false, true] {
                    let n = info.n_planes() as usize;
                    let mut strides: Vec<i32> = info.stride()[..n].to_vec();
                    let mut offsets: Vec<usize> = info.offset()[..n].to_vec();
                    let mut size = info.size();
                    if padded {
                        size = 0;
                        for i in 0..n {
                            strides[i] += 8 * (i as i32 + 1);
                            offsets[i] = size;
                            let rows = if i == 0 { h } else { h.div_ceil(2) };
                            size += strides[i] as usize * rows;
                        }
                    }
                    let mut buffer =
                        gst::Buffer::from_mut_slice(Noise::new((w * h) as u64).bytes(size));
                    if padded {
                        let b = buffer.get_mut().unwrap();
                        gst_video::VideoMeta::add_full(
                            b,
                            gst_video::VideoFrameFlags::empty(),
                            gf,
                            w as u32,
                            h as u32,
                            &offsets,
                            &strides,
                        )
                        .unwrap();
                    }
                    let layout = Layout::of_format(pf, Colorimetry::default());
                    let mut old = vec![0u8; layout.bytes(w, h).unwrap()];
                    match picture_from_buffer(buffer.as_ref(), &info).unwrap() {
                        Picture::Frame(f) => write_packed(&f, &mut old),
                        Picture::Yuv(y) => write_yuv(&y, &mut old),
                    }
                    let vf =
                        gst_video::VideoFrameRef::from_buffer_ref_readable(buffer.as_ref(), &info)
                            .unwrap();
                    let mut new = vec![0x55u8; old.len()];
                    pack_planes(&planes(&vf).unwrap(), layout.planes(w, h), &mut new).unwrap();
                    assert!(new == old, "{gf:?} {w}x{h} padded {padded}: bytes differ");
                }
            }
        }
    }
}
