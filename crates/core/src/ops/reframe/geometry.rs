//! Where the window is and how it lands in the output: rectangles, the
//! axis a reframe moves along, and a frame's [`Layout`].
//!
//! A frame of the output is made in three steps from its window (a
//! rectangle of the input): the window is scaled uniformly (`scaled`),
//! carved along the crop axis down to `carved`, and placed at `content`
//! in the output, whatever is left around it being padding. Which of the
//! three a frame uses is its [`Fit`]:
//!
//! - **crop**: the window has the output's shape; scaled to the output;
//! - **carve**: the window is wider (taller) than the output's shape, scaled
//!   to the output's height (width) and carved to its width (height);
//! - **pad**: the whole window scaled to fit inside the output, centred on a
//!   padding of a blurred copy of the picture or a solid colour.

use serde::{Deserialize, Serialize};

/// A rectangle in pixels: left, top, width, height.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(from = "[usize; 4]", into = "[usize; 4]")]
pub struct Rect {
    pub x: usize,
    pub y: usize,
    pub w: usize,
    pub h: usize,
}

impl From<[usize; 4]> for Rect {
    fn from([x, y, w, h]: [usize; 4]) -> Self {
        Rect { x, y, w, h }
    }
}

impl From<Rect> for [usize; 4] {
    fn from(r: Rect) -> Self {
        [r.x, r.y, r.w, r.h]
    }
}

impl Rect {
    pub const fn new(x: usize, y: usize, w: usize, h: usize) -> Self {
        Rect { x, y, w, h }
    }

    pub fn right(&self) -> usize {
        self.x + self.w
    }

    pub fn bottom(&self) -> usize {
        self.y + self.h
    }

    pub fn area(&self) -> usize {
        self.w * self.h
    }

    /// Whether the rectangle lies inside a `w`×`h` frame and is not empty.
    pub fn fits(&self, w: usize, h: usize) -> bool {
        self.w > 0 && self.h > 0 && self.right() <= w && self.bottom() <= h
    }

    /// The smallest rectangle holding both.
    pub fn union(&self, o: &Rect) -> Rect {
        let (x, y) = (self.x.min(o.x), self.y.min(o.y));
        Rect::new(
            x,
            y,
            self.right().max(o.right()) - x,
            self.bottom().max(o.bottom()) - y,
        )
    }

    /// The overlap, if any.
    pub fn intersect(&self, o: &Rect) -> Option<Rect> {
        let (x, y) = (self.x.max(o.x), self.y.max(o.y));
        let (r, b) = (self.right().min(o.right()), self.bottom().min(o.bottom()));
        (r > x && b > y).then(|| Rect::new(x, y, r - x, b - y))
    }

    /// The rectangle scaled by `num / den` (corners rounded outwards).
    pub fn scaled(&self, num: usize, den: usize) -> Rect {
        let x = self.x * num / den;
        let y = self.y * num / den;
        Rect::new(
            x,
            y,
            (self.right() * num).div_ceil(den) - x,
            (self.bottom() * num).div_ceil(den) - y,
        )
    }

    /// The rectangle grown by `dx` left and right and `dy` up and down,
    /// clipped to a `w`×`h` frame.
    pub fn grown(&self, dx: usize, dy: usize, w: usize, h: usize) -> Rect {
        let x = self.x.saturating_sub(dx);
        let y = self.y.saturating_sub(dy);
        Rect::new(
            x,
            y,
            (self.right() + dx).min(w) - x,
            (self.bottom() + dy).min(h) - y,
        )
    }

    /// The interval the rectangle covers along `axis`: (start, end).
    pub fn span(&self, axis: Axis) -> (usize, usize) {
        match axis {
            Axis::Horizontal => (self.x, self.right()),
            Axis::Vertical => (self.y, self.bottom()),
        }
    }
}

/// The direction the window moves in: along the width when the output is
/// narrower than the input (16:9 to 9:16), along the height when it is
/// wider (16:9 to 21:9).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Axis {
    Horizontal,
    Vertical,
}

impl Axis {
    /// The axis for an input of `w`×`h` and an output of `ow`×`oh`.
    pub fn of(w: usize, h: usize, ow: usize, oh: usize) -> Axis {
        // ow/oh < w/h: the output is narrower.
        if ow * h <= w * oh {
            Axis::Horizontal
        } else {
            Axis::Vertical
        }
    }

    /// (along, across) of a size.
    pub fn split(self, (w, h): (usize, usize)) -> (usize, usize) {
        match self {
            Axis::Horizontal => (w, h),
            Axis::Vertical => (h, w),
        }
    }

    /// A size from (along, across).
    pub fn join(self, along: usize, across: usize) -> (usize, usize) {
        match self {
            Axis::Horizontal => (along, across),
            Axis::Vertical => (across, along),
        }
    }

    /// A window at `pos` along the axis, `len` long, covering the whole
    /// input across.
    pub fn window(self, pos: usize, len: usize, (w, h): (usize, usize)) -> Rect {
        match self {
            Axis::Horizontal => Rect::new(pos, 0, len, h),
            Axis::Vertical => Rect::new(0, pos, w, len),
        }
    }
}

/// How a frame's window becomes the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fit {
    Crop,
    Carve,
    Pad,
}

impl Fit {
    /// Every fit, in the order reports list them.
    pub const ALL: [Fit; 3] = [Fit::Crop, Fit::Carve, Fit::Pad];

    pub fn name(self) -> &'static str {
        match self {
            Fit::Crop => "crop",
            Fit::Carve => "carve",
            Fit::Pad => "pad",
        }
    }
}

/// How one frame is made: the window, its uniformly scaled size, the size
/// carving leaves, and where that lands in the output.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Layout {
    pub window: Rect,
    pub fit: Fit,
    pub scaled: (usize, usize),
    pub carved: (usize, usize),
    pub content: Rect,
}

/// `v · num / den`, rounded to nearest, at least 1.
fn scale_round(v: usize, num: usize, den: usize) -> usize {
    ((v * num * 2 + den) / (2 * den)).max(1)
}

impl Layout {
    /// The layout of `window` (which must lie inside the input) with `fit`
    /// for an `out` = (width, height) output. A crop window of another
    /// shape than the output's is stretched to it; a carve window smaller
    /// than the output's shape is scaled to fill it.
    pub fn new(window: Rect, fit: Fit, out: (usize, usize)) -> Layout {
        let (ow, oh) = out;
        let full = Rect::new(0, 0, ow, oh);
        let (w, h) = (window.w.max(1), window.h.max(1));
        match fit {
            Fit::Crop => Layout {
                window,
                fit,
                scaled: out,
                carved: out,
                content: full,
            },
            Fit::Carve => {
                // Scaled to the output's height (width) and carved to its
                // width (height): along the wider of the two ratios.
                let scaled = if w * oh >= ow * h {
                    (scale_round(w, oh, h).max(ow), oh)
                } else {
                    (ow, scale_round(h, ow, w).max(oh))
                };
                Layout {
                    window,
                    fit,
                    scaled,
                    carved: out,
                    content: full,
                }
            }
            Fit::Pad => {
                let (sw, sh) = if w * oh >= ow * h {
                    (ow, scale_round(h, ow, w).min(oh))
                } else {
                    (scale_round(w, oh, h).min(ow), oh)
                };
                Layout {
                    window,
                    fit,
                    scaled: (sw, sh),
                    carved: (sw, sh),
                    content: Rect::new((ow - sw) / 2, (oh - sh) / 2, sw, sh),
                }
            }
        }
    }

    /// A carve that narrows the window (along the axis it is wider than the
    /// output's shape) to `carve_to` of its pixels, then scales it
    /// uniformly to fit the output, padded across when that leaves room:
    /// crop, carve and pad together. `carve_to` at the output's shape is
    /// [`Fit::Carve`]'s layout; at the window's own length, [`Fit::Pad`]'s.
    pub fn carved_to(window: Rect, carve_to: usize, out: (usize, usize)) -> Layout {
        let (ow, oh) = out;
        let (w, h) = (window.w.max(1), window.h.max(1));
        let wide = w * oh >= ow * h;
        // The carved window's size, in input pixels.
        let (kw, kh) = if wide {
            (carve_to.clamp(1, w), h)
        } else {
            (w, carve_to.clamp(1, h))
        };
        // The uniform scale that fits the carved window in the output.
        let (num, den) = if kw * oh >= ow * kh {
            (ow, kw)
        } else {
            (oh, kh)
        };
        let scaled = (
            scale_round(w, num, den).max(if wide { 1 } else { ow }),
            scale_round(h, num, den).max(if wide { oh } else { 1 }),
        );
        let scaled = (scaled.0.min(2 * w.max(ow)), scaled.1.min(2 * h.max(oh)));
        let carved = if wide {
            (ow.min(scaled.0), scale_round(h, num, den).min(oh))
        } else {
            (scale_round(w, num, den).min(ow), oh.min(scaled.1))
        };
        let scaled = if wide {
            (scaled.0, carved.1)
        } else {
            (carved.0, scaled.1)
        };
        let fit = if carved == scaled {
            Fit::Pad
        } else {
            Fit::Carve
        };
        Layout {
            window,
            fit,
            scaled,
            carved,
            content: Rect::new((ow - carved.0) / 2, (oh - carved.1) / 2, carved.0, carved.1),
        }
    }

    /// The uniform scale from the window to the output, as (num, den).
    pub fn scale(&self) -> (usize, usize) {
        if self.scaled.0 * self.window.h >= self.scaled.1 * self.window.w {
            (self.scaled.1, self.window.h.max(1))
        } else {
            (self.scaled.0, self.window.w.max(1))
        }
    }
}

/// An output side for a ratio: `v`, rounded to the nearest even number
/// (encoders take 4:2:0 at even sizes), at least 1 and at most `limit`.
pub fn even_side(v: f64, limit: usize) -> usize {
    if v < 2.0 {
        // At least 1 wins over at most `limit`.
        return 1;
    }
    let even = ((v / 2.0).round() * 2.0) as usize;
    if even > limit {
        // The input's own side is the largest; keep it even when it can be.
        limit - limit % 2
    } else {
        even
    }
    .max(1)
}

/// Whether two output sizes have the same shape, to within the rounding of
/// a size to whole (even) pixels: 2%.
pub fn same_shape(a: (usize, usize), b: (usize, usize)) -> bool {
    let (ra, rb) = (
        a.0 as f64 / a.1.max(1) as f64,
        b.0 as f64 / b.1.max(1) as f64,
    );
    (ra - rb).abs() <= 0.02 * rb
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sixteen_nine_to_nine_sixteen_gives_the_usual_sizes() {
        // 720 · 9/16 = 405 → 406; 1080 · 9/16 = 607.5 → 608.
        assert_eq!(even_side(720.0 * 9.0 / 16.0, 1280), 406);
        assert_eq!(even_side(1080.0 * 9.0 / 16.0, 1920), 608);
        assert_eq!(even_side(1280.0 * 9.0 / 21.0, 720), 548);
        assert_eq!(even_side(0.4, 10), 1);
        assert_eq!(even_side(1000.0, 721), 720);
    }

    #[test]
    fn each_fit_lays_the_window_out_as_described() {
        let out = (406, 720);
        let crop = Layout::new(Rect::new(100, 0, 406, 720), Fit::Crop, out);
        assert_eq!(
            (crop.scaled, crop.content),
            (out, Rect::new(0, 0, 406, 720))
        );
        let carve = Layout::new(Rect::new(100, 0, 600, 720), Fit::Carve, out);
        assert_eq!((carve.scaled, carve.carved), ((600, 720), out));
        // A 1080p window into a 720p-high output: scaled by 2/3 first.
        let carve = Layout::new(Rect::new(0, 0, 900, 1080), Fit::Carve, out);
        assert_eq!(carve.scaled, (600, 720));
        let pad = Layout::new(Rect::new(0, 0, 1280, 720), Fit::Pad, out);
        // 720 · 406/1280 = 228.4 → 228, centred.
        assert_eq!(pad.scaled, (406, 228));
        assert_eq!(pad.content, Rect::new(0, 246, 406, 228));
        assert_eq!(pad.scale(), (228, 720));
        // A wider output (16:9 to 21:9) pads left and right.
        let pad = Layout::new(Rect::new(0, 0, 300, 720), Fit::Pad, (1280, 548));
        assert_eq!(pad.scaled, (228, 548));
        assert_eq!(pad.content.x, (1280 - 228) / 2);
    }

    #[test]
    fn carving_to_a_width_then_padding_keeps_one_scale() {
        let out = (406, 720);
        // 1000 wide carved to 600, then scaled by 406/600 and padded.
        let l = Layout::carved_to(Rect::new(100, 0, 1000, 720), 600, out);
        assert_eq!(l.fit, Fit::Carve);
        assert_eq!(l.scaled, (677, 487));
        assert_eq!(l.carved, (406, 487));
        assert_eq!(l.content, Rect::new(0, 116, 406, 487));
        // Carved to the output's shape: the plain carve.
        let plain = Layout::carved_to(Rect::new(100, 0, 1000, 720), 406, out);
        assert_eq!(
            plain,
            Layout::new(Rect::new(100, 0, 1000, 720), Fit::Carve, out)
        );
        // Not carved at all: the pad.
        let pad = Layout::carved_to(Rect::new(0, 0, 1280, 720), 1280, out);
        assert_eq!(pad, Layout::new(Rect::new(0, 0, 1280, 720), Fit::Pad, out));
    }

    #[test]
    fn rectangles_clip_grow_and_scale() {
        let r = Rect::new(10, 20, 30, 40);
        assert_eq!(r.grown(15, 5, 50, 62), Rect::new(0, 15, 50, 47));
        assert_eq!(r.scaled(1, 3), Rect::new(3, 6, 11, 14));
        assert_eq!(
            r.intersect(&Rect::new(35, 0, 10, 100)),
            Some(Rect::new(35, 20, 5, 40))
        );
        assert_eq!(r.intersect(&Rect::new(40, 0, 10, 100)), None);
        assert_eq!(r.union(&Rect::new(0, 0, 1, 1)), Rect::new(0, 0, 40, 60));
        assert_eq!(Axis::of(1280, 720, 406, 720), Axis::Horizontal);
        assert_eq!(Axis::of(1280, 720, 1280, 548), Axis::Vertical);
    }
}
