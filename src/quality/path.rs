//! What the reframe op's path file says about the result, read by the op's
//! own reader ([`PathFile`]): how smoothly the window moves (the largest
//! jump of its centre from one frame to the next and its mean
//! acceleration, both within shots), and the scale each frame of the
//! result shows its window at ([`path_scales`]), which the subject search
//! tries first. A step across a shot boundary, or across frames missing
//! from the file, does not count towards the smoothness: a cut may move
//! the window anywhere.

use crate::ops::reframe::geometry::Fit;
use crate::ops::reframe::path::{FrameEntry, PathFile};

/// The smoothness figures of one path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Smoothness {
    pub frames: usize,
    /// Shots, by the frames' shot indices.
    pub shots: usize,
    /// The input's width, the scale of [`Smoothness::max_jump_percent`].
    pub input_width: usize,
    /// Frames by mode, in the order of [`Fit::ALL`].
    pub modes: [usize; 3],
    /// Consecutive frame pairs within one shot.
    pub steps: usize,
    /// The largest |x_t − x_{t−1}| and |y_t − y_{t−1}| of the centre over
    /// those pairs, pixels a frame (each its own maximum).
    pub max_jump: (f64, f64),
    /// The frame the larger of the two largest jumps lands on.
    pub max_jump_frame: Option<usize>,
    /// Consecutive frame triples within one shot.
    pub triples: usize,
    /// The mean of |c_t − 2c_{t−1} + c_{t−2}| of the centre c over those
    /// triples: Euclidean, pixels a frame².
    pub mean_accel: f64,
    /// The same a coordinate (mean absolute second difference of x, of y).
    pub mean_accel_xy: (f64, f64),
}

impl Smoothness {
    /// The larger of the two largest jumps as a percentage of the input's
    /// width.
    pub fn max_jump_percent(&self) -> f64 {
        100.0 * self.max_jump.0.max(self.max_jump.1) / self.input_width.max(1) as f64
    }
}

/// The centre of a frame's window, in pixels of the input.
fn centre(f: &FrameEntry) -> (f64, f64) {
    let w = &f.window;
    (w.x as f64 + w.w as f64 / 2.0, w.y as f64 + w.h as f64 / 2.0)
}

/// The smoothness of `path`'s window. The op writes frames in order; an
/// editor need not, so they are taken in order of `frame` (a frame named
/// twice breaks the stretch, as a missing one does).
pub fn path_smoothness(path: &PathFile) -> Smoothness {
    // Once a path, not per frame: the frames in order.
    let mut frames: Vec<&FrameEntry> = path.frames.iter().collect();
    frames.sort_by_key(|f| f.frame);
    // The frames' shots (a live path lists a shot whose window widened as
    // one part for each fit).
    let shots = match frames.is_empty() {
        true => path.shots.len(),
        false => frames.windows(2).filter(|w| w[0].shot != w[1].shot).count() + 1,
    };
    let mut s = Smoothness {
        frames: path.frames.len(),
        shots,
        input_width: path.input[0],
        ..Default::default()
    };
    for f in &frames {
        if let Some(i) = Fit::ALL.iter().position(|&m| m == f.mode) {
            s.modes[i] += 1;
        }
    }
    let mut largest = 0f64;
    let mut accel = (0f64, 0f64, 0f64);
    // `run`: how many frames back the current unbroken stretch of one shot
    // goes (1 = this frame alone).
    let mut run = 0usize;
    for (i, f) in frames.iter().enumerate() {
        let joined = i > 0 && {
            let p = frames[i - 1];
            p.shot == f.shot && p.frame + 1 == f.frame
        };
        run = if joined { run + 1 } else { 1 };
        let c = centre(f);
        if run >= 2 {
            let p = centre(frames[i - 1]);
            let (dx, dy) = ((c.0 - p.0).abs(), (c.1 - p.1).abs());
            s.steps += 1;
            s.max_jump.0 = s.max_jump.0.max(dx);
            s.max_jump.1 = s.max_jump.1.max(dy);
            if dx.max(dy) > largest {
                largest = dx.max(dy);
                s.max_jump_frame = Some(f.frame);
            }
        }
        if run >= 3 {
            let p = centre(frames[i - 1]);
            let q = centre(frames[i - 2]);
            let (ax, ay) = (c.0 - 2.0 * p.0 + q.0, c.1 - 2.0 * p.1 + q.1);
            s.triples += 1;
            accel.0 += ax.abs();
            accel.1 += ay.abs();
            accel.2 += ax.hypot(ay);
        }
    }
    if s.triples > 0 {
        let n = s.triples as f64;
        s.mean_accel_xy = (accel.0 / n, accel.1 / n);
        s.mean_accel = accel.2 / n;
    }
    s
}

/// The uniform scale from the input to the result of each frame index, as
/// the op renders the path: frame i by [`PathFile::plans`]'s i-th plan (a
/// frame left out holds the one before; past the last, the last holds),
/// its window scaled by [`Layout::scale`] (out_h / window_h for a crop or
/// a carve, the fitting side's ratio for a pad, a zoom's window included).
/// Empty for a path of no frames.
pub fn path_scales(path: &PathFile) -> Vec<f64> {
    let out = (path.output[0], path.output[1]);
    path.plans()
        .iter()
        .map(|p| {
            let (num, den) = p.layout(out).scale();
            num as f64 / den as f64
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::reframe::geometry::Rect;
    use crate::ops::reframe::path::{ShotEntry, VERSION};

    /// A path of `frames` (frame, shot, window, fit) into a 100x200 output
    /// of a 1000x500 input.
    fn path(frames: &[(usize, usize, Rect, Fit)]) -> PathFile {
        PathFile {
            version: VERSION,
            input: [1000, 500],
            output: [100, 200],
            fps: None,
            pad: "blur".into(),
            shots: vec![
                ShotEntry {
                    first: 0,
                    last: 3,
                    mode: Fit::Crop,
                    camera: "pan".into(),
                },
                ShotEntry {
                    first: 4,
                    last: 9,
                    mode: Fit::Pad,
                    camera: "still".into(),
                },
            ],
            frames: frames
                .iter()
                .map(|&(frame, shot, window, mode)| FrameEntry {
                    frame,
                    t: None,
                    shot,
                    window,
                    mode,
                    carve_to: None,
                    content: None,
                    keep: Vec::new(),
                })
                .collect(),
        }
    }

    /// A 100x200 crop window centred at (cx, cy).
    fn at(cx: usize, cy: usize) -> Rect {
        Rect::new(cx - 50, cy - 100, 100, 200)
    }

    #[test]
    fn frames_out_of_order_count_as_in_order_and_modes_are_tallied() {
        let ordered = [
            (0, 0, at(100, 250), Fit::Crop),
            (1, 0, at(102, 250), Fit::Crop),
            (2, 0, at(106, 250), Fit::Carve),
            (4, 1, at(800, 300), Fit::Pad),
            (5, 1, at(800, 303), Fit::Pad),
        ];
        let s = path_smoothness(&path(&ordered));
        // Steps 0→1 (2), 1→2 (4), 4→5 (3); one triple (0, 1, 2): 2.
        assert_eq!((s.steps, s.triples, s.modes), (3, 1, [2, 1, 2]));
        assert_eq!((s.max_jump, s.max_jump_frame), ((4.0, 3.0), Some(2)));
        assert_eq!(s.mean_accel, 2.0);
        let mut shuffled = ordered;
        shuffled.reverse();
        assert_eq!(path_smoothness(&path(&shuffled)), s);
    }

    #[test]
    fn a_shot_listed_in_parts_counts_once() {
        // Two parts listed (crop, then pad), as a live path lists a shot
        // whose window widened; every frame is of shot 0.
        let p = path(&[
            (0, 0, at(500, 250), Fit::Crop),
            (4, 0, Rect::new(0, 0, 1000, 500), Fit::Pad),
        ]);
        assert_eq!(p.shots.len(), 2);
        assert_eq!(path_smoothness(&p).shots, 1);
    }

    #[test]
    fn a_zoom_frame_has_its_own_scale_and_the_last_frame_holds() {
        // Frame 0: a crop of the output's shape (scale 1); frame 1: a zoom,
        // a 250x125 window fitted to the 100-pixel width (0.4); frame 2 is
        // left out and holds frame 1; frame 3: the whole input padded
        // (100/1000).
        let p = path(&[
            (0, 0, at(500, 250), Fit::Crop),
            (1, 0, Rect::new(300, 100, 250, 125), Fit::Pad),
            (3, 0, Rect::new(0, 0, 1000, 500), Fit::Pad),
        ]);
        assert_eq!(path_scales(&p), [1.0, 0.4, 0.4, 0.1]);
        assert!(path_scales(&path(&[])).is_empty());
    }
}
