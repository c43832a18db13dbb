//! Faces, by SeetaFace's funnel-structured cascade (the `rustface` crate),
//! whose frontal model ships in that crate and is embedded at build time
//! (build.rs): nothing is downloaded at run time.

use std::sync::OnceLock;

use super::geometry::Rect;
use crate::frame::Plane;

/// The picture must be at least this large (the cascade panics on less).
/// Its window is 40 pixels and its pyramid starts at the picture's own
/// size (rustface leaves the smallest face it is given unused), so the
/// smallest face found is 40 pixels of the picture.
pub const MIN_FACE: u32 = 20;
/// Each level of the pyramid this share of the one above: 0.7 covers the
/// scales the 40-pixel window tolerates with two thirds of the work of
/// rustface's 0.8.
pub const PYRAMID_STEP: f32 = 0.7;
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

/// Runs `f` on this thread's detector. The cascade runs on the calling
/// thread (rustface without its `rayon` feature); should `f` itself come
/// back here, as it did when the cascade shared its work and a thread
/// waiting inside it took up another frame's detection, that detection
/// gets a detector of its own rather than the busy one.
fn with_detector<R>(
    model: &rustface::Model,
    f: impl FnOnce(&mut dyn rustface::Detector) -> R,
) -> R {
    let make = || {
        let mut d = rustface::create_detector_with_model(model.clone());
        d.set_min_face_size(MIN_FACE);
        d.set_score_thresh(MIN_SCORE);
        d.set_pyramid_scale_factor(PYRAMID_STEP);
        d.set_slide_window_step(4, 4);
        d
    };
    DETECTOR.with(|cell| match cell.try_borrow_mut() {
        Ok(mut slot) => f(slot.get_or_insert_with(make).as_mut()),
        Err(_) => f(make().as_mut()),
    })
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
        let faces = with_detector(model, |d| d.detect(&image));
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

    #[test]
    fn a_detection_inside_another_on_the_same_thread_gets_its_own_detector() {
        // What rayon's work stealing does on a many-core host: a thread
        // waiting inside one frame's cascade takes up another frame's. It
        // panicked on the thread's detector being borrowed already.
        let model = model().unwrap();
        let picture = Plane::new(64, 48, 90u8);
        let image = rustface::ImageData::new(picture.as_slice(), 64, 48);
        let found = with_detector(model, |outer| {
            let inner = with_detector(model, |d| d.detect(&image).len());
            (outer.detect(&image).len(), inner)
        });
        assert_eq!(found, (0, 0));
    }
}
