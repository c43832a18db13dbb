//! The camera's move from one frame to the next as a similarity: a zoom,
//! a turn and a translation to a fraction of a pixel, refined from the
//! whole-pixel global shift ([`crate::ops::retarget::motion::global_shift`]).
//!
//! The offline background of a stretch (`foreground.rs`) is the median of
//! its frames placed in the scene's coordinates. Placed by whole pixels, a
//! slow push-in or a drift of a fraction of a pixel a frame (Big Buck
//! Bunny's opening: 5% over 132 frames) reads as a still camera, the
//! median is misplaced by a dozen pixels by the clip's end, and every edge
//! of the scene stands out as if it moved. Placed by the similarity, the
//! scene's edges meet.
//!
//! The fit is Lucas–Kanade's inverse compositional one (Baker and
//! Matthews, 2004) on the thumbnails' textured pixels, with Tukey's
//! weights so that what moves against the scene (a third of the picture,
//! a juggler) does not pull the camera with it.

use crate::frame::Plane;
use crate::ops::retarget::motion::Shift;

/// A similarity of the plane: `(x, y)` goes to `(a·x − b·y + tx,
/// b·x + a·y + ty)`, in pixels.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Similarity {
    pub a: f64,
    pub b: f64,
    pub tx: f64,
    pub ty: f64,
}

impl Similarity {
    pub const IDENTITY: Similarity = Similarity {
        a: 1.0,
        b: 0.0,
        tx: 0.0,
        ty: 0.0,
    };

    /// A move by whole pixels.
    pub fn shift(s: Shift) -> Similarity {
        Similarity {
            tx: s.0 as f64,
            ty: s.1 as f64,
            ..Similarity::IDENTITY
        }
    }

    pub fn apply(&self, x: f64, y: f64) -> (f64, f64) {
        (
            self.a * x - self.b * y + self.tx,
            self.b * x + self.a * y + self.ty,
        )
    }

    /// `self` after `first`: `first` applied, then `self`.
    pub fn after(&self, first: &Similarity) -> Similarity {
        let (tx, ty) = self.apply(first.tx, first.ty);
        Similarity {
            a: self.a * first.a - self.b * first.b,
            b: self.b * first.a + self.a * first.b,
            tx,
            ty,
        }
    }

    pub fn inverse(&self) -> Similarity {
        let n = self.a * self.a + self.b * self.b;
        let (a, b) = (self.a / n, -self.b / n);
        Similarity {
            a,
            b,
            tx: -(a * self.tx - b * self.ty),
            ty: -(b * self.tx + a * self.ty),
        }
    }

    /// The scale it zooms by.
    pub fn scale(&self) -> f64 {
        self.a.hypot(self.b)
    }

    /// The same move on a picture shrunk by `f` (pixel `X` of it covers
    /// pixels `f·X .. f·X + f` of this one's).
    pub fn shrunk(&self, f: usize) -> Similarity {
        // x = f·X + c with c = (f − 1)/2, the centres' offset; X' = (S(x)
        // − c)/f.
        let f = f as f64;
        let c = (f - 1.0) / 2.0;
        let (tx, ty) = self.apply(c, c);
        Similarity {
            a: self.a,
            b: self.b,
            tx: (tx - c) / f,
            ty: (ty - c) / f,
        }
    }
}

/// Gauss–Newton steps at most.
const STEPS: usize = 12;
/// Pixels whose gradient (levels a pixel, the larger of the two axes') is
/// at least this steer the fit; the rest carry too little.
const MIN_GRADIENT: i32 = 3;
/// A fit that ends further than this from where it started, in pixels at
/// the picture's corners, is not believed.
const MAX_DRIFT: f64 = 2.0;
/// Textured pixels a fit needs, and the most it uses.
const MIN_POINTS: usize = 64;
const MAX_POINTS: usize = 4096;

/// A picture to align others to: its textured pixels, each with its
/// steepest-descent row (the gradient times the warp's derivative at the
/// identity, in coordinates about the centre, so that zoom and move do
/// not mix). Made once, it aligns any number of pictures.
#[derive(Clone)]
pub struct Template {
    points: Vec<(f64, f64, f64, [f64; 4])>,
    centre: (f64, f64),
    size: (usize, usize),
}

impl std::fmt::Debug for Template {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Template")
            .field("points", &self.points.len())
            .field("size", &self.size)
            .finish()
    }
}

impl Template {
    /// `None` where the picture carries too little texture to align to.
    pub fn of(luma: &Plane<u8>) -> Option<Template> {
        let (w, h) = (luma.width(), luma.height());
        if w < 8 || h < 8 {
            return None;
        }
        let (cx, cy) = ((w - 1) as f64 / 2.0, (h - 1) as f64 / 2.0);
        let mut points = Vec::new();
        for y in (2..h - 2).step_by(2) {
            let (up, row, down) = (luma.row(y - 1), luma.row(y), luma.row(y + 1));
            for x in (2..w - 2).step_by(2) {
                let gx = row[x + 1] as i32 - row[x - 1] as i32;
                let gy = down[x] as i32 - up[x] as i32;
                if gx.abs().max(gy.abs()) < 2 * MIN_GRADIENT {
                    continue;
                }
                let (gx, gy) = (gx as f64 / 2.0, gy as f64 / 2.0);
                let (u, v) = (x as f64 - cx, y as f64 - cy);
                let sd = [gx * u + gy * v, gy * u - gx * v, gx, gy];
                points.push((x as f64, y as f64, row[x] as f64, sd));
            }
        }
        // Evenly thinned to at most MAX_POINTS: as many tell the move to
        // a hundredth of a pixel, and the fits run one frame after another.
        let k = points.len().div_ceil(MAX_POINTS).max(1);
        if k > 1 {
            points = points.into_iter().step_by(k).collect();
        }
        (points.len() >= MIN_POINTS).then_some(Template {
            points,
            centre: (cx, cy),
            size: (w, h),
        })
    }

    /// Where the template's content is in `cur`: content at `p` in the
    /// template is at `align(cur, start).apply(p)` in `cur`, fitted from
    /// `start`. `None` where too little of it is seen in `cur`, or the fit
    /// does not settle within [`MAX_DRIFT`] of `start`.
    pub fn align(&self, cur: &Plane<u8>, start: Similarity) -> Option<Similarity> {
        if (cur.width(), cur.height()) != self.size {
            return None;
        }
        let (cx, cy) = self.centre;
        let mut warp = start;
        let mut residuals = vec![0f64; self.points.len()];
        let mut first = None;
        for _ in 0..STEPS {
            self.residuals(cur, &warp, &mut residuals);
            // Tukey's biweight, its scale from the median residual.
            let mut mags: Vec<f64> = residuals
                .iter()
                .filter(|r| !r.is_nan())
                .map(|r| r.abs())
                .collect();
            if mags.len() < MIN_POINTS {
                return None;
            }
            let mid = mags.len() / 2;
            let median = *mags.select_nth_unstable_by(mid, f64::total_cmp).1;
            let c = 4.685 * (1.4826 * median).max(1.0);
            if first.is_none() {
                first = Some((c, cost(&residuals, c)));
            }
            let mut hess = [[0f64; 4]; 4];
            let mut grad = [0f64; 4];
            for (&r, (_, _, _, sd)) in residuals.iter().zip(&self.points) {
                if r.is_nan() || r.abs() >= c {
                    continue;
                }
                let k = 1.0 - (r / c) * (r / c);
                let wgt = k * k;
                for ((g, row), &si) in grad.iter_mut().zip(hess.iter_mut()).zip(sd) {
                    *g += wgt * si * r;
                    for (h, &sj) in row.iter_mut().zip(sd) {
                        *h += wgt * si * sj;
                    }
                }
            }
            let d = solve(hess, grad)?;
            // The step, about the centre, in the plane's coordinates; the
            // warp composed with its inverse.
            let step = Similarity {
                a: 1.0 + d[0],
                b: d[1],
                tx: d[2] - d[0] * cx + d[1] * cy,
                ty: d[3] - d[1] * cx - d[0] * cy,
            };
            warp = warp.after(&step.inverse());
            if d[2].abs().max(d[3].abs()) < 1e-2 && d[0].abs().max(d[1].abs()) < 1e-5 {
                break;
            }
        }
        let (w, h) = ((self.size.0 - 1) as f64, (self.size.1 - 1) as f64);
        let drift = [(0.0, 0.0), (w, 0.0), (0.0, h), (w, h)]
            .iter()
            .map(|&(x, y)| {
                let (p, q) = (warp.apply(x, y), start.apply(x, y));
                (p.0 - q.0).hypot(p.1 - q.1)
            })
            .fold(0.0, f64::max);
        if drift > MAX_DRIFT {
            return None;
        }
        let (c, before) = first?;
        self.residuals(cur, &warp, &mut residuals);
        let after = cost(&residuals, c);
        Some(if after <= (1.0 - GAIN) * before {
            warp
        } else {
            start
        })
    }

    /// Each point's residual where `warp` takes it in `cur`; NaN where that
    /// is off the picture.
    fn residuals(&self, cur: &Plane<u8>, warp: &Similarity, out: &mut [f64]) {
        for (r, &(x, y, t, _)) in out.iter_mut().zip(&self.points) {
            let (qx, qy) = warp.apply(x, y);
            *r = bilinear(cur, qx, qy).map_or(f64::NAN, |v| v - t);
        }
    }
}

/// A fit must lower the points' mean cost by this share, or the start
/// stands: where the picture says little (a plain car park with a few
/// painted lines), the fit wanders along the lines with the noise, and its
/// small steps add up.
const GAIN: f64 = 0.05;

/// The mean of Tukey's cost over the residuals (NaN ones left out), at
/// scale `c`.
fn cost(residuals: &[f64], c: f64) -> f64 {
    let (mut sum, mut n) = (0.0, 0usize);
    for &r in residuals {
        if r.is_nan() {
            continue;
        }
        n += 1;
        sum += if r.abs() >= c {
            1.0
        } else {
            let k = 1.0 - (r / c) * (r / c);
            1.0 - k * k * k
        };
    }
    if n == 0 {
        f64::INFINITY
    } else {
        sum / n as f64
    }
}

/// A pixel as [`bilinear`] reads it: its level, or `None` where it has
/// none (a scene pixel too few frames saw).
pub trait Level: Copy {
    fn level(self) -> Option<f64>;
}

impl Level for u8 {
    fn level(self) -> Option<f64> {
        Some(self as f64)
    }
}

impl Level for Option<u8> {
    fn level(self) -> Option<f64> {
        self.map(f64::from)
    }
}

/// `p` at `(x, y)` between its pixels; `None` off the picture, or where a
/// pixel around it has no level.
pub fn bilinear<T: Level>(p: &Plane<T>, x: f64, y: f64) -> Option<f64> {
    let (w, h) = (p.width(), p.height());
    if !(x >= 0.0 && y >= 0.0 && x <= (w - 1) as f64 && y <= (h - 1) as f64) {
        return None;
    }
    let (x0, y0) = (x.floor() as usize, y.floor() as usize);
    let (x1, y1) = ((x0 + 1).min(w - 1), (y0 + 1).min(h - 1));
    let (fx, fy) = (x - x0 as f64, y - y0 as f64);
    let (r0, r1) = (p.row(y0), p.row(y1));
    let (a, b) = (r0[x0].level()?, r0[x1].level()?);
    let (c, d) = (r1[x0].level()?, r1[x1].level()?);
    let top = a + fx * (b - a);
    let bottom = c + fx * (d - c);
    Some(top + fy * (bottom - top))
}

/// `m⁻¹ v` by Gaussian elimination with partial pivoting; `None` when `m`
/// is (nearly) singular.
fn solve(mut m: [[f64; 4]; 4], mut v: [f64; 4]) -> Option<[f64; 4]> {
    let scale = (0..4).map(|i| m[i][i].abs()).fold(0.0, f64::max);
    if scale == 0.0 {
        return None;
    }
    for col in 0..4 {
        let pivot = (col..4).max_by(|&i, &j| m[i][col].abs().total_cmp(&m[j][col].abs()))?;
        if m[pivot][col].abs() < 1e-9 * scale {
            return None;
        }
        m.swap(col, pivot);
        v.swap(col, pivot);
        let (pivot_row, pivot_v) = (m[col], v[col]);
        for (row, vr) in m.iter_mut().zip(v.iter_mut()).skip(col + 1) {
            let f = row[col] / pivot_row[col];
            for (a, b) in row[col..].iter_mut().zip(&pivot_row[col..]) {
                *a -= f * b;
            }
            *vr -= f * pivot_v;
        }
    }
    let mut x = [0f64; 4];
    for row in (0..4).rev() {
        let s: f64 = (row + 1..4).map(|k| m[row][k] * x[k]).sum();
        x[row] = (v[row] - s) / m[row][row];
    }
    Some(x)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The camera's move from `prev` to `cur`: content at `p` in `prev` is at
    /// `camera(prev, cur, s).apply(p)` in `cur`, fitted from the whole-pixel
    /// shift `s`; the shift itself where the fit fails.
    fn camera(prev: &Plane<u8>, cur: &Plane<u8>, start: Shift) -> Similarity {
        let whole = Similarity::shift(start);
        Template::of(prev)
            .and_then(|t| t.align(cur, whole))
            .unwrap_or(whole)
    }

    /// A smooth textured scene seen through `view` (frame pixel → scene
    /// point), `w`×`h`.
    fn seen(view: &Similarity, w: usize, h: usize) -> Plane<u8> {
        let scene = |x: f64, y: f64| {
            128.0
                + 50.0 * (x / 7.3).sin() * (y / 5.1).cos()
                + 30.0 * ((x + 2.0 * y) / 11.7).sin()
                + 20.0 * ((x - y) / 3.9).cos()
        };
        Plane::from_fn(w, h, |x, y| {
            let (sx, sy) = view.apply(x as f64, y as f64);
            scene(sx, sy).round().clamp(0.0, 255.0) as u8
        })
    }

    fn close(a: &Similarity, b: &Similarity, tol: f64) -> bool {
        // Compared where they take the picture's corners and centre.
        [
            (0.0, 0.0),
            (239.0, 0.0),
            (0.0, 134.0),
            (239.0, 134.0),
            (120.0, 67.0),
        ]
        .iter()
        .all(|&(x, y)| {
            let (p, q) = (a.apply(x, y), b.apply(x, y));
            (p.0 - q.0).hypot(p.1 - q.1) <= tol
        })
    }

    #[test]
    fn composing_and_inverting_agree() {
        let s = Similarity {
            a: 1.02,
            b: -0.01,
            tx: 3.5,
            ty: -1.25,
        };
        let t = Similarity {
            a: 0.97,
            b: 0.02,
            tx: -0.5,
            ty: 2.0,
        };
        let (x, y) = (17.0, -4.0);
        let (p, q) = t.apply(x, y);
        let both = s.after(&t).apply(x, y);
        let each = s.apply(p, q);
        assert!((both.0 - each.0).abs() < 1e-12 && (both.1 - each.1).abs() < 1e-12);
        assert!(close(&s.after(&s.inverse()), &Similarity::IDENTITY, 1e-9));
    }

    #[test]
    fn a_slow_zoom_and_a_drift_of_a_fraction_of_a_pixel_are_found() {
        // The scene seen at frame 1 is frame 0's zoomed in by 0.4% about
        // a point off centre and moved by (0.3, −0.45): what a push-in
        // gives, under a pixel a frame, so the whole-pixel shift is 0.
        let (w, h) = (240, 135);
        let view0 = Similarity::IDENTITY;
        let zoom = Similarity {
            a: 1.0 / 1.004,
            b: 0.0,
            tx: 0.3,
            ty: -0.45,
        };
        let (prev, cur) = (seen(&view0, w, h), seen(&zoom, w, h));
        // Content at p in prev is at zoom⁻¹(p) in cur.
        let truth = zoom.inverse();
        let found = camera(&prev, &cur, (0, 0));
        assert!(
            close(&found, &truth, 0.1),
            "found {found:?}, the move was {truth:?}"
        );
        // The whole-pixel shift alone misses by more than a third of a
        // pixel at the corners.
        assert!(!close(&Similarity::IDENTITY, &truth, 0.3));
    }

    #[test]
    fn a_large_figure_moving_across_does_not_move_the_camera() {
        // The camera drifts by (0.5, 0.25); a flat block a quarter of the
        // picture's width moves 6 px the other way over it.
        let (w, h) = (240, 135);
        let drift = Similarity {
            tx: -0.5,
            ty: -0.25,
            ..Similarity::IDENTITY
        };
        let prev = seen(&Similarity::IDENTITY, w, h);
        let mut cur = seen(&drift, w, h);
        let mut prev_with = prev.clone();
        let texture = |x: usize, y: usize| ((x * 37 + y * 91 + x * y) % 211) as u8 + 20;
        for y in 30..110 {
            for x in 100..160 {
                prev_with.set(x, y, texture(x, y));
                cur.set(x - 6, y, texture(x, y));
            }
        }
        let found = camera(&prev_with, &cur, (0, 0));
        assert!(
            close(&found, &drift.inverse(), 0.15),
            "found {found:?}, the camera's move was {:?}",
            drift.inverse()
        );
    }

    #[test]
    fn a_still_camera_over_a_plain_ground_with_a_few_lines_stays_still() {
        // A car park seen from above: plain asphalt, two painted lines, and
        // each frame's own noise of up to 7 levels. Each frame is fitted to
        // the first from where the last one was put, as the analysis does;
        // over 100 frames the place must not wander.
        let (w, h) = (240, 135);
        let frame = |seed: u32| {
            let noise = crate::ops::retarget::tests::noise(w, h, seed);
            Plane::from_fn(w, h, |x, y| {
                let line = (x + y / 3 == 60 || x == 200 + y / 10) as u8 * 40;
                80 + line + noise.get(x, y) / 32
            })
        };
        let key = Template::of(&frame(1)).expect("the lines give texture enough");
        let mut place = Similarity::IDENTITY;
        for t in 2..102 {
            place = key.align(&frame(t), place).unwrap_or(place);
        }
        assert!(
            close(&place, &Similarity::IDENTITY, 0.5),
            "after 100 frames the still camera is put at {place:?}"
        );
    }

    #[test]
    fn a_plain_picture_keeps_the_whole_pixel_shift() {
        let flat = Plane::new(240, 135, 90u8);
        assert_eq!(camera(&flat, &flat, (3, -1)), Similarity::shift((3, -1)));
    }

    #[test]
    fn on_a_picture_shrunk_the_same_move_is_found_in_its_pixels() {
        // A point of the shrunk picture, taken to the full one's pixels,
        // moved there, and brought back, lands where the shrunk move puts
        // it.
        let s = Similarity {
            a: 1.01,
            b: 0.0,
            tx: 2.0,
            ty: -4.0,
        };
        let half = s.shrunk(2);
        // Shrunk pixel X covers full pixels 2X, 2X+1: centre 2X + 0.5.
        for &(x, y) in &[(0.0, 0.0), (10.0, 20.0), (100.0, 50.0)] {
            let (fx, fy) = s.apply(2.0 * x + 0.5, 2.0 * y + 0.5);
            let (hx, hy) = half.apply(x, y);
            assert!((hx - (fx - 0.5) / 2.0).abs() < 1e-12);
            assert!((hy - (fy - 0.5) / 2.0).abs() < 1e-12);
        }
    }
}
