//! Faces, by SeetaFace's funnel-structured cascade (the `rustface` crate),
//! whose frontal model ships in that crate and is embedded at build time
//! (build.rs): nothing is downloaded at run time.

use std::sync::OnceLock;

use super::geometry::Rect;
use crate::frame::Plane;

/// The smallest face the cascade looks for, in the pixels it runs on (its
/// floor is 20).
pub const MIN_FACE: u32 = 20;
/// The cascade's score a face must reach (rustface's examples use 2.0;
/// higher drops more false faces in foliage and texture).
pub const MIN_SCORE: f64 = 3.0;

static MODEL: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/seeta_fd_frontal.bin"));

/// The parsed model, shared: parsing it takes a few milliseconds.
fn model() -> Option<&'static rustface::Model> {
    static PARSED: OnceLock<Option<rustface::Model>> = OnceLock::new();
    PARSED
        .get_or_init(|| rustface::read_model(std::io::Cursor::new(MODEL)).ok())
        .as_ref()
}

thread_local! {
    /// Each thread's detector, made on its first use (the cascade keeps
    /// scratch buffers, and is not `Send`).
    static DETECTOR: std::cell::RefCell<Option<Box<dyn rustface::Detector>>> =
        const { std::cell::RefCell::new(None) };
}

/// A face detector over gray pictures.
#[derive(Clone, Copy, Debug, Default)]
pub struct Faces;

impl Faces {
    pub fn new() -> Faces {
        Faces
    }

    /// Whether the model loaded (it always should: it is embedded).
    pub fn ready(&self) -> bool {
        model().is_some()
    }

    /// The faces in `luma`, as rectangles of its pixels, best first.
    pub fn detect(&self, luma: &Plane<u8>) -> Vec<(Rect, f64)> {
        let (w, h) = (luma.width(), luma.height());
        // The cascade needs a window of 20 pixels and panics on less.
        if w < MIN_FACE as usize || h < MIN_FACE as usize {
            return Vec::new();
        }
        let Some(model) = model() else {
            return Vec::new();
        };
        let packed = luma.to_packed();
        let image = rustface::ImageData::new(packed.as_slice(), w as u32, h as u32);
        let faces = DETECTOR.with_borrow_mut(|slot| {
            let d = slot.get_or_insert_with(|| {
                let mut d = rustface::create_detector_with_model(model.clone());
                d.set_min_face_size(MIN_FACE);
                d.set_score_thresh(MIN_SCORE);
                d.set_pyramid_scale_factor(0.8);
                d.set_slide_window_step(4, 4);
                d
            });
            d.detect(&image)
        });
        let mut found: Vec<(Rect, f64)> = faces
            .iter()
            .filter_map(|f| {
                let b = f.bbox();
                let x = b.x().max(0) as usize;
                let y = b.y().max(0) as usize;
                let r = (b.x() + b.width() as i32).clamp(0, w as i32) as usize;
                let bot = (b.y() + b.height() as i32).clamp(0, h as i32) as usize;
                (r > x && bot > y).then(|| (Rect::new(x, y, r - x, bot - y), f.score()))
            })
            .collect();
        found.sort_by(|a, b| b.1.total_cmp(&a.1));
        found
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_embedded_model_loads_and_a_blank_picture_has_no_face() {
        let faces = Faces::new();
        assert!(faces.ready());
        assert!(faces.detect(&Plane::new(120, 90, 128u8)).is_empty());
        // Too small for the cascade's window: no panic, no face.
        assert!(faces.detect(&Plane::new(19, 200, 0u8)).is_empty());
        assert!(faces.detect(&Plane::new(0, 0, 0u8)).is_empty());
    }
}
