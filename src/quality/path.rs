//! How smoothly a reframing window moves: from the path file the op writes
//! ([`crate::reframe_path`]), the largest jump of the window's centre from
//! one frame to the next and its mean acceleration, both within shots. A
//! step across a shot boundary, or across frames missing from the file,
//! does not count: a cut may move the window anywhere.

use crate::reframe_path::{Mode, ReframePath};

/// The smoothness figures of one path.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Smoothness {
    pub frames: usize,
    pub shots: usize,
    /// The input's width, the scale of [`Smoothness::max_jump_percent`].
    pub input_width: usize,
    /// Frames by mode, in the order of [`Mode::ALL`].
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

/// The smoothness of `path`'s window.
pub fn path_smoothness(path: &ReframePath) -> Smoothness {
    let mut s = Smoothness {
        frames: path.frames.len(),
        shots: path.shots.len(),
        input_width: path.input.0,
        ..Default::default()
    };
    for f in &path.frames {
        if let Some(i) = Mode::ALL.iter().position(|&m| m == f.mode) {
            s.modes[i] += 1;
        }
    }
    let mut largest = 0f64;
    let mut accel = (0f64, 0f64, 0f64);
    // `run`: how many frames back the current unbroken stretch of one shot
    // goes (1 = this frame alone).
    let mut run = 0usize;
    for (i, f) in path.frames.iter().enumerate() {
        let joined = i > 0 && {
            let p = &path.frames[i - 1];
            p.shot == f.shot && p.frame + 1 == f.frame
        };
        run = if joined { run + 1 } else { 1 };
        let c = f.window.centre();
        if run >= 2 {
            let p = path.frames[i - 1].window.centre();
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
            let p = path.frames[i - 1].window.centre();
            let q = path.frames[i - 2].window.centre();
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
