//! Host frames: a typed plane of pixels with a row stride, and the frame
//! kinds that flow through a chain.
//!
//! A [`Plane`] owns its pixels in row-major order; `stride` (in pixels) may be
//! larger than `width`, which lets seam carving shrink a frame in place with a
//! fixed row pitch. Video enters as NV12/I420 ([`Yuv420`]) or RGBA and is turned
//! into a [`Frame`] (RGBA or gray) before the chain runs.

use crate::color::Matrix;
use crate::error::{Error, Result};

/// One RGBA pixel.
pub type Rgba = [u8; 4];

/// A 2-D array of pixels with a row stride (counted in pixels, not bytes).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Plane<T> {
    width: usize,
    height: usize,
    stride: usize,
    data: Vec<T>,
}

impl<T: Copy> Plane<T> {
    /// A `width`×`height` plane filled with `value`, stride = width.
    pub fn new(width: usize, height: usize, value: T) -> Self {
        Self {
            width,
            height,
            stride: width,
            data: vec![value; width * height],
        }
    }

    /// Wraps row-major `data` (stride = width).
    pub fn from_vec(width: usize, height: usize, data: Vec<T>) -> Result<Self> {
        Self::from_vec_with_stride(width, height, width, data)
    }

    /// Wraps row-major `data` whose rows start `stride` pixels apart.
    pub fn from_vec_with_stride(
        width: usize,
        height: usize,
        stride: usize,
        data: Vec<T>,
    ) -> Result<Self> {
        let needed = if height == 0 {
            0
        } else {
            stride * (height - 1) + width
        };
        if stride < width || data.len() < needed {
            return Err(Error::BadFrame(format!(
                "a {width}x{height} plane with stride {stride} needs {needed} pixels, got {}",
                data.len()
            )));
        }
        Ok(Self {
            width,
            height,
            stride,
            data,
        })
    }

    /// A plane of the given size whose pixels are computed by `f(x, y)`.
    pub fn from_fn(width: usize, height: usize, mut f: impl FnMut(usize, usize) -> T) -> Self {
        let mut data = Vec::with_capacity(width * height);
        for y in 0..height {
            for x in 0..width {
                data.push(f(x, y));
            }
        }
        Self {
            width,
            height,
            stride: width,
            data,
        }
    }

    pub fn width(&self) -> usize {
        self.width
    }
    pub fn height(&self) -> usize {
        self.height
    }
    pub fn stride(&self) -> usize {
        self.stride
    }
    pub fn is_empty(&self) -> bool {
        self.width == 0 || self.height == 0
    }

    /// The visible pixels of row `y`.
    #[inline]
    pub fn row(&self, y: usize) -> &[T] {
        let start = y * self.stride;
        &self.data[start..start + self.width]
    }

    #[inline]
    pub fn row_mut(&mut self, y: usize) -> &mut [T] {
        let start = y * self.stride;
        &mut self.data[start..start + self.width]
    }

    /// Rows as disjoint mutable slices of `stride` pixels (the last may be
    /// shorter); only the first `width` pixels of each are visible.
    pub fn rows_mut(&mut self) -> impl Iterator<Item = &mut [T]> {
        let (w, h) = (self.width, self.height);
        self.data
            .chunks_mut(self.stride.max(1))
            .take(h)
            .map(move |r| &mut r[..w])
    }

    /// Rows as disjoint mutable slices, for rayon.
    pub fn par_rows_mut(
        &mut self,
    ) -> impl rayon::iter::IndexedParallelIterator<Item = (usize, &mut [T])>
    where
        T: Send,
    {
        use rayon::prelude::*;
        let (w, h) = (self.width, self.height);
        self.data
            .par_chunks_mut(self.stride.max(1))
            .take(h)
            .enumerate()
            .map(move |(y, r)| (y, &mut r[..w]))
    }

    #[inline]
    pub fn get(&self, x: usize, y: usize) -> T {
        self.data[y * self.stride + x]
    }

    #[inline]
    pub fn set(&mut self, x: usize, y: usize, v: T) {
        self.data[y * self.stride + x] = v;
    }

    /// The backing storage, including any padding between rows.
    pub fn as_slice(&self) -> &[T] {
        &self.data
    }

    /// A copy with stride = width.
    pub fn to_packed(&self) -> Self {
        if self.stride == self.width {
            return self.clone();
        }
        let mut data = Vec::with_capacity(self.width * self.height);
        for y in 0..self.height {
            data.extend_from_slice(self.row(y));
        }
        Self {
            width: self.width,
            height: self.height,
            stride: self.width,
            data,
        }
    }

    /// Consumes the plane and returns tightly packed row-major pixels.
    pub fn into_packed_vec(self) -> Vec<T> {
        if self.stride == self.width {
            let mut d = self.data;
            d.truncate(self.width * self.height);
            d
        } else {
            self.to_packed().data
        }
    }

    /// A plane of the same size, each pixel mapped by `f`.
    pub fn map<U>(&self, f: impl Fn(T) -> U + Sync) -> Plane<U>
    where
        T: Sync,
        U: Copy + Send + Default,
    {
        use rayon::prelude::*;
        let mut out = Plane::new(self.width, self.height, U::default());
        out.par_rows_mut().for_each(|(y, row)| {
            for (o, &i) in row.iter_mut().zip(self.row(y)) {
                *o = f(i);
            }
        });
        out
    }

    /// The transposed plane (rows become columns).
    pub fn transposed(&self) -> Self {
        Plane::from_fn(self.height, self.width, |x, y| self.get(y, x))
    }

    /// Shrinks the visible width, keeping the stride (used by seam removal).
    pub(crate) fn set_width(&mut self, width: usize) {
        assert!(width <= self.stride);
        self.width = width;
    }
}

/// The pixel layout of a frame.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PixelFormat {
    Rgba8,
    Gray8,
    Nv12,
    I420,
}

impl std::fmt::Display for PixelFormat {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            PixelFormat::Rgba8 => "RGBA",
            PixelFormat::Gray8 => "GRAY8",
            PixelFormat::Nv12 => "NV12",
            PixelFormat::I420 => "I420",
        })
    }
}

/// A frame as the operation chain sees it.
#[derive(Clone, Debug, PartialEq)]
pub enum Frame {
    Rgba(Plane<Rgba>),
    Gray(Plane<u8>),
}

impl Frame {
    pub fn width(&self) -> usize {
        match self {
            Frame::Rgba(p) => p.width(),
            Frame::Gray(p) => p.width(),
        }
    }
    pub fn height(&self) -> usize {
        match self {
            Frame::Rgba(p) => p.height(),
            Frame::Gray(p) => p.height(),
        }
    }
    pub fn format(&self) -> PixelFormat {
        match self {
            Frame::Rgba(_) => PixelFormat::Rgba8,
            Frame::Gray(_) => PixelFormat::Gray8,
        }
    }

    /// Luma of the frame (BT.709), the plane that thresholds, energies and
    /// statistics are computed on.
    pub fn luma(&self) -> Plane<u8> {
        match self {
            Frame::Rgba(p) => rgba_to_luma(p, Matrix::Bt709),
            Frame::Gray(p) => p.clone(),
        }
    }

    /// The frame as RGBA (gray is replicated into R, G and B).
    pub fn to_rgba(&self) -> Plane<Rgba> {
        match self {
            Frame::Rgba(p) => p.clone(),
            Frame::Gray(p) => p.map(|v| [v, v, v, 255]),
        }
    }
}

/// A 4:2:0 frame: full-resolution luma and half-resolution chroma
/// (rounded up for odd sizes), either interleaved (NV12) or planar (I420).
#[derive(Clone, Debug, PartialEq)]
pub struct Yuv420 {
    pub format: PixelFormat,
    pub y: Plane<u8>,
    /// NV12: the interleaved UV plane, `2 * chroma_width` bytes a row.
    /// I420: the U plane.
    pub u: Plane<u8>,
    /// I420: the V plane. NV12: empty.
    pub v: Plane<u8>,
}

impl Yuv420 {
    /// Chroma plane size for a luma size.
    pub fn chroma_size(width: usize, height: usize) -> (usize, usize) {
        (width.div_ceil(2), height.div_ceil(2))
    }

    /// A zeroed frame in `format` (NV12 or I420).
    pub fn new(format: PixelFormat, width: usize, height: usize) -> Result<Self> {
        let (cw, ch) = Self::chroma_size(width, height);
        match format {
            PixelFormat::Nv12 => Ok(Self {
                format,
                y: Plane::new(width, height, 0),
                u: Plane::new(cw * 2, ch, 128),
                v: Plane::new(0, 0, 0),
            }),
            PixelFormat::I420 => Ok(Self {
                format,
                y: Plane::new(width, height, 0),
                u: Plane::new(cw, ch, 128),
                v: Plane::new(cw, ch, 128),
            }),
            other => Err(Error::BadFrame(format!(
                "{other} is not a 4:2:0 YUV format; use NV12 or I420"
            ))),
        }
    }

    pub fn width(&self) -> usize {
        self.y.width()
    }
    pub fn height(&self) -> usize {
        self.y.height()
    }

    /// The (U, V) chroma sample covering luma pixel (x, y).
    #[inline]
    pub fn chroma_at(&self, x: usize, y: usize) -> (u8, u8) {
        let (cx, cy) = (x / 2, y / 2);
        match self.format {
            PixelFormat::Nv12 => (self.u.get(2 * cx, cy), self.u.get(2 * cx + 1, cy)),
            _ => (self.u.get(cx, cy), self.v.get(cx, cy)),
        }
    }
}

/// A frame as it travels between GStreamer and a backend: RGBA or gray
/// pixels, or 4:2:0 YUV as decoders give and encoders take (the GPU stage
/// converts those on the device, so only 1.5 bytes a pixel cross PCIe).
#[derive(Clone, Debug, PartialEq)]
pub enum Picture {
    Frame(Frame),
    Yuv(Yuv420),
}

impl Picture {
    pub fn width(&self) -> usize {
        match self {
            Picture::Frame(f) => f.width(),
            Picture::Yuv(y) => y.width(),
        }
    }

    pub fn height(&self) -> usize {
        match self {
            Picture::Frame(f) => f.height(),
            Picture::Yuv(y) => y.height(),
        }
    }
}

/// The luma plane of an RGBA plane.
pub fn rgba_to_luma(src: &Plane<Rgba>, m: Matrix) -> Plane<u8> {
    use rayon::prelude::*;
    let mut out = Plane::new(src.width(), src.height(), 0u8);
    out.par_rows_mut().for_each(|(y, row)| {
        // A plain loop over two slices (not `Plane::map`), so that it vectorises.
        for (o, &p) in row.iter_mut().zip(src.row(y)) {
            *o = crate::color::luma(p, m);
        }
    });
    out
}

/// The pixel layout of a frame as the GPU holds it, and as an operation
/// gives it ([`crate::ops::Op::output_format`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DevFormat {
    /// 4 bytes a pixel, R G B A.
    Rgba,
    /// 1 byte a pixel.
    Gray,
}

impl DevFormat {
    pub fn bytes_per_pixel(self) -> usize {
        match self {
            DevFormat::Rgba => 4,
            DevFormat::Gray => 1,
        }
    }

    pub fn of(frame: &Frame) -> DevFormat {
        match frame {
            Frame::Rgba(_) => DevFormat::Rgba,
            Frame::Gray(_) => DevFormat::Gray,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strided_plane_rows_skip_padding() {
        let p = Plane::from_vec_with_stride(2, 2, 3, vec![1u8, 2, 99, 3, 4]).unwrap();
        assert_eq!(p.row(0), &[1, 2]);
        assert_eq!(p.row(1), &[3, 4]);
        assert_eq!(p.to_packed().as_slice(), &[1, 2, 3, 4]);
    }

    #[test]
    fn too_short_buffer_is_an_error_not_a_panic() {
        assert!(Plane::from_vec(3, 3, vec![0u8; 8]).is_err());
        assert!(Plane::from_vec_with_stride(4, 2, 3, vec![0u8; 20]).is_err());
    }

    #[test]
    fn transpose_swaps_axes() {
        let p = Plane::from_fn(3, 2, |x, y| (10 * y + x) as u8);
        let t = p.transposed();
        assert_eq!((t.width(), t.height()), (2, 3));
        assert_eq!(t.get(1, 2), 12);
        assert_eq!(t.transposed(), p);
    }

    #[test]
    fn odd_sized_yuv_rounds_chroma_up() {
        let f = Yuv420::new(PixelFormat::I420, 5, 3).unwrap();
        assert_eq!((f.u.width(), f.u.height()), (3, 2));
        let n = Yuv420::new(PixelFormat::Nv12, 5, 3).unwrap();
        assert_eq!(n.u.width(), 6);
        assert!(Yuv420::new(PixelFormat::Rgba8, 5, 3).is_err());
    }
}
