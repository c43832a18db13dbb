//! Fixed crops, the references a moving window is judged against: a window
//! of the result's aspect at full height (at full width when the result is
//! wider than the original), placed at a fraction of the free range, cut
//! from each frame and scaled to the result's size by area interpolation
//! when the sizes differ. The centre crop is the one at ½.

use super::area_scale;
use super::subjects::Rect;
use crate::frame::{Plane, Rgba};

/// The window of `result`'s aspect in a frame of `original` size, at
/// `position` (0 = left or top, 1 = right or bottom) of the free range.
pub fn crop_window(original: (usize, usize), result: (usize, usize), position: f64) -> Rect {
    let ((iw, ih), (ow, oh)) = (original, result);
    let p = position.clamp(0.0, 1.0);
    if ow * ih <= iw * oh {
        // Narrower than (or as wide as) the original: full height.
        let w = ((ih * ow) as f64 / oh as f64).round().clamp(1.0, iw as f64) as usize;
        Rect {
            x: (p * (iw - w) as f64).round() as usize,
            y: 0,
            w,
            h: ih,
        }
    } else {
        let h = ((iw * oh) as f64 / ow as f64).round().clamp(1.0, ih as f64) as usize;
        Rect {
            x: 0,
            y: (p * (ih - h) as f64).round() as usize,
            w: iw,
            h,
        }
    }
}

/// `n` positions evenly over the free range, both ends included: 0, 1/(n−1),
/// …, 1 (9 gives eighths); one is the centre.
pub fn crop_positions(n: usize) -> Vec<f64> {
    match n {
        0 => Vec::new(),
        1 => vec![0.5],
        n => (0..n).map(|i| i as f64 / (n - 1) as f64).collect(),
    }
}

/// `window` of `frame`, scaled to `w`×`h` by area interpolation when its
/// size differs.
pub fn crop_frame(frame: &Plane<Rgba>, window: Rect, w: usize, h: usize) -> Plane<Rgba> {
    let cut = Plane::from_fn(window.w, window.h, |x, y| {
        frame.get(window.x + x, window.y + y)
    });
    if (window.w, window.h) == (w, h) {
        cut
    } else {
        area_scale(&cut, w, h)
    }
}

/// The centre crop of `frame` at the result's size `w`×`h`.
pub fn centre_crop(frame: &Plane<Rgba>, w: usize, h: usize) -> Plane<Rgba> {
    let window = crop_window((frame.width(), frame.height()), (w, h), 0.5);
    crop_frame(frame, window, w, h)
}
