//! The reframe's decisions as JSON, for editors, and back (docs/reframe.md):
//!
//! ```json
//! {"version": 1, "input": [1280, 720], "output": [406, 720], "fps": 29.97,
//!  "pad": "blur",
//!  "shots": [{"first": 0, "last": 119, "mode": "crop", "camera": "still"}],
//!  "frames": [{"frame": 0, "t": 0.0, "shot": 0, "window": [437, 0, 405, 720],
//!              "mode": "crop", "content": [0, 0, 406, 720],
//!              "keep": [[520, 210, 160, 480]]}]}
//! ```
//!
//! `window` is the rectangle of the input the frame shows, `mode` how it
//! becomes the output (crop, carve, pad), `carve_to` (carve only) how wide
//! the window is carved before it is scaled to fit and padded (absent: to
//! the output's shape, no padding), `content` where the picture lands in
//! the output (the rest is padding), `keep` what carving passes beside.
//! Replaying reads `window`, `mode`, `carve_to` and `keep` (the rest is for
//! people); a frame left out holds the one before it.
//!
//! User hints are boxes that must stay in the window for a stretch of
//! time: `{"boxes": [{"box": [x, y, w, h], "from": 2.0, "to": 5.5}]}` in
//! seconds (or `"first"`/`"last"` frames; neither: the whole video).

use std::path::Path;

use serde::{Deserialize, Serialize};

use super::geometry::{Fit, Rect};
use super::plan::{FramePlan, ShotPlan};
use crate::error::{Error, Result};

/// The format's version.
pub const VERSION: u32 = 1;

/// The largest frame number a path file may give: over 38 hours at 30 fps.
/// A plan is held for every frame up to the last one named (a frame left
/// out holds the one before), so a stray number (a time in milliseconds, a
/// typo) would otherwise ask for memory without end.
pub const MAX_FRAME: usize = 1 << 22;

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct PathFile {
    pub version: u32,
    pub input: [usize; 2],
    pub output: [usize; 2],
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fps: Option<f64>,
    #[serde(default = "blur")]
    pub pad: String,
    #[serde(default)]
    pub shots: Vec<ShotEntry>,
    pub frames: Vec<FrameEntry>,
}

fn blur() -> String {
    "blur".into()
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct ShotEntry {
    pub first: usize,
    pub last: usize,
    pub mode: Fit,
    pub camera: String,
}

#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct FrameEntry {
    pub frame: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub t: Option<f64>,
    #[serde(default)]
    pub shot: usize,
    pub window: Rect,
    pub mode: Fit,
    /// A carve's length after carving, in the window's pixels, when the
    /// carved window is then scaled down and padded.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub carve_to: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<Rect>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub keep: Vec<Rect>,
}

impl PathFile {
    /// The file for a plan.
    pub fn new(
        input: (usize, usize),
        output: (usize, usize),
        fps: Option<f64>,
        pad: &str,
        shots: &[ShotPlan],
        frames: &[FramePlan],
    ) -> PathFile {
        PathFile {
            version: VERSION,
            input: [input.0, input.1],
            output: [output.0, output.1],
            fps,
            pad: pad.into(),
            shots: shots
                .iter()
                .map(|s| ShotEntry {
                    first: s.first,
                    last: s.last,
                    mode: s.fit,
                    camera: s.camera.name().into(),
                })
                .collect(),
            frames: frames
                .iter()
                .enumerate()
                .map(|(i, f)| FrameEntry {
                    frame: i,
                    t: fps.map(|r| (i as f64 / r * 1e4).round() / 1e4),
                    shot: f.shot,
                    window: f.window,
                    mode: f.fit,
                    carve_to: f.carve_to,
                    content: Some(f.layout(output).content),
                    keep: f.keep.clone(),
                })
                .collect(),
        }
    }

    /// Reads and checks a path file.
    pub fn load(path: &Path) -> Result<PathFile> {
        let read = |reason: String| Error::Read {
            path: path.into(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
        let file: PathFile =
            serde_json::from_str(&text).map_err(|e| read(format!("not a reframe path ({e})")))?;
        if file.version != VERSION {
            return Err(read(format!(
                "version {} is not one this seamstream reads (it reads {VERSION})",
                file.version
            )));
        }
        for (what, [w, h]) in [("input", file.input), ("output", file.output)] {
            if w == 0 || h == 0 {
                return Err(read(format!(
                    "the {what} size [{w}, {h}] is not a size; give [width, height], both above 0"
                )));
            }
        }
        if let Some(f) = file.frames.iter().find(|f| f.frame > MAX_FRAME) {
            return Err(read(format!(
                "frame {}: frame numbers go up to {MAX_FRAME} (over 38 hours at 30 fps); count the frames of this video from 0",
                f.frame
            )));
        }
        let [w, h] = file.input;
        for f in &file.frames {
            if !f.window.fits(w, h) {
                return Err(read(format!(
                    "frame {}: the window {:?} does not lie inside the {w}x{h} input; give [x, y, width, height] with x + width <= {w} and y + height <= {h}",
                    f.frame,
                    <[usize; 4]>::from(f.window)
                )));
            }
        }
        Ok(file)
    }

    /// Writes the file as JSON, through a temporary file renamed into
    /// place.
    pub fn save(&self, path: &Path) -> Result<()> {
        let write = |reason: String| Error::Write {
            path: path.into(),
            reason,
        };
        let text = serde_json::to_string_pretty(self).map_err(|e| write(e.to_string()))?;
        let tmp = path.with_extension("json.partial");
        std::fs::write(&tmp, text + "\n").map_err(|e| write(e.to_string()))?;
        std::fs::rename(&tmp, path).map_err(|e| write(e.to_string()))
    }

    /// The plan of every frame index up to the last the file names; a
    /// frame left out holds the one before.
    pub fn plans(&self) -> Vec<FramePlan> {
        let mut frames: Vec<&FrameEntry> = self.frames.iter().collect();
        frames.sort_by_key(|f| f.frame);
        let Some(last) = frames.last().map(|f| f.frame) else {
            return Vec::new();
        };
        let mut out: Vec<FramePlan> = Vec::with_capacity(last + 1);
        let mut it = frames.into_iter().peekable();
        for i in 0..=last {
            let mut cur = None;
            while let Some(f) = it.next_if(|f| f.frame <= i) {
                cur = Some(f);
            }
            let plan = match (cur, out.last()) {
                (Some(f), _) => FramePlan {
                    window: f.window,
                    fit: f.mode,
                    carve_to: f.carve_to,
                    shot: f.shot,
                    keep: f.keep.clone(),
                },
                (None, Some(prev)) => prev.clone(),
                (None, None) => continue,
            };
            out.push(plan);
        }
        out
    }
}

/// A user's box that must stay in the window, over a stretch of frames.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Hint {
    pub rect: Rect,
    /// First and last frame (inclusive); `None`: from the start, to the end.
    pub first: Option<usize>,
    pub last: Option<usize>,
}

#[derive(Deserialize)]
struct HintFile {
    boxes: Vec<HintEntry>,
}

/// One box of a hints file. A key it does not know is refused: a typo
/// ("form" for "from") would otherwise hold the box over the whole clip.
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct HintEntry {
    #[serde(rename = "box")]
    rect: Rect,
    from: Option<f64>,
    to: Option<f64>,
    first: Option<usize>,
    last: Option<usize>,
    /// One frame only (as the boxes marked for `quality --boxes` give it).
    frame: Option<usize>,
    /// The user's name for the box; not read.
    #[serde(rename = "label")]
    _label: Option<String>,
}

impl Hint {
    /// Reads a hints file; times in seconds become frames at `fps`.
    pub fn load(path: &Path, fps: f64) -> Result<Vec<Hint>> {
        let read = |reason: String| Error::Read {
            path: path.into(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| read(e.to_string()))?;
        let not_hints = |e: serde_json::Error| {
            read(format!(
                "not a hints file ({e}); write {{\"boxes\": [{{\"box\": [x, y, w, h], \"from\": 0.0, \"to\": 5.0}}]}}"
            ))
        };
        // The boxes, or a file with them under "boxes".
        let value: serde_json::Value = serde_json::from_str(&text).map_err(not_hints)?;
        let boxes: Vec<HintEntry> = if value.is_array() {
            serde_json::from_value(value).map_err(not_hints)?
        } else {
            serde_json::from_value::<HintFile>(value)
                .map_err(not_hints)?
                .boxes
        };
        boxes
            .into_iter()
            .enumerate()
            .map(|(i, b)| {
                if b.rect.w == 0 || b.rect.h == 0 {
                    return Err(read(format!(
                        "box {}: width and height must be above 0",
                        i + 1
                    )));
                }
                if let (Some(from), Some(to)) = (b.from, b.to)
                    && to < from
                {
                    return Err(read(format!(
                        "box {}: \"to\" ({to} s) is before \"from\" ({from} s); give the times in order",
                        i + 1
                    )));
                }
                if let (Some(first), Some(last)) = (b.first, b.last)
                    && last < first
                {
                    return Err(read(format!(
                        "box {}: \"last\" (frame {last}) is before \"first\" (frame {first}); give the frames in order",
                        i + 1
                    )));
                }
                if let Some(f) = b.frame
                    && (b.first, b.last, b.from, b.to) != (None, None, None, None)
                {
                    return Err(read(format!(
                        "box {}: \"frame\" ({f}) with \"first\", \"last\", \"from\" or \"to\"; give one frame, or a range",
                        i + 1
                    )));
                }
                let frame = |s: f64| (s * fps).round().max(0.0) as usize;
                Ok(Hint {
                    rect: b.rect,
                    first: b.frame.or(b.first).or(b.from.map(frame)),
                    last: b.frame.or(b.last).or(b.to.map(frame)),
                })
            })
            .collect()
    }

    /// Whether the hint holds on frame `i`.
    pub fn covers(&self, i: usize) -> bool {
        self.first.is_none_or(|f| i >= f) && self.last.is_none_or(|l| i <= l)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ops::reframe::plan::Camera;

    fn dir() -> std::path::PathBuf {
        let d = std::env::temp_dir().join(format!("seamstream-path-{}", std::process::id()));
        std::fs::create_dir_all(&d).unwrap();
        d
    }

    #[test]
    fn a_path_written_reads_back_the_same_and_gaps_hold() {
        let frames: Vec<FramePlan> = (0..3)
            .map(|i| FramePlan {
                window: Rect::new(10 * i, 0, 405, 720),
                fit: Fit::Crop,
                carve_to: None,
                shot: 0,
                keep: vec![Rect::new(100, 100, 50, 50)],
            })
            .collect();
        let shots = [ShotPlan {
            shot: 0,
            first: 0,
            last: 2,
            fit: Fit::Crop,
            camera: Camera::Pan,
            len: 405,
            picture: None,
        }];
        let file = PathFile::new((1280, 720), (406, 720), Some(30.0), "blur", &shots, &frames);
        let p = dir().join("path.json");
        file.save(&p).unwrap();
        let back = PathFile::load(&p).unwrap();
        assert_eq!(back, file);
        assert_eq!(back.plans(), frames);
        // An editor keeps frames 0 and 2 only: frame 1 holds frame 0.
        let mut edited = back.clone();
        edited.frames.remove(1);
        let plans = edited.plans();
        assert_eq!(plans.len(), 3);
        assert_eq!(plans[1].window, frames[0].window);
    }

    #[test]
    fn a_window_outside_the_input_is_refused_with_its_frame() {
        let p = dir().join("bad.json");
        std::fs::write(
            &p,
            r#"{"version": 1, "input": [1280, 720], "output": [406, 720],
                "frames": [{"frame": 7, "window": [1000, 0, 405, 720], "mode": "crop"}]}"#,
        )
        .unwrap();
        let e = PathFile::load(&p).unwrap_err().to_string();
        assert!(e.contains("frame 7") && e.contains("1280x720"), "{e}");
        // A frame number no video reaches is refused, not planned for (a
        // plan for every frame up to it would not fit in memory).
        std::fs::write(
            &p,
            r#"{"version": 1, "input": [1280, 720], "output": [406, 720],
                "frames": [{"frame": 0, "window": [0, 0, 406, 720], "mode": "crop"},
                           {"frame": 1000000000000, "window": [0, 0, 406, 720], "mode": "crop"}]}"#,
        )
        .unwrap();
        let e = PathFile::load(&p).unwrap_err().to_string();
        assert!(
            e.contains("frame 1000000000000") && e.contains("count the frames"),
            "{e}"
        );
        std::fs::write(&p, "{").unwrap();
        assert!(
            PathFile::load(&p)
                .unwrap_err()
                .to_string()
                .contains("not a reframe path")
        );
    }

    #[test]
    fn hints_take_seconds_or_frames() {
        let p = dir().join("hints.json");
        std::fs::write(
            &p,
            r#"{"boxes": [{"box": [1, 2, 3, 4], "from": 1.0, "to": 2.0},
                          {"box": [5, 6, 7, 8], "first": 3},
                          {"box": [0, 0, 9, 9]}]}"#,
        )
        .unwrap();
        let h = Hint::load(&p, 25.0).unwrap();
        assert_eq!((h[0].first, h[0].last), (Some(25), Some(50)));
        // The boxes alone, and one frame's box with its label (as the boxes
        // marked for `quality --boxes` are written).
        std::fs::write(
            &p,
            r#"[{"box": [1, 2, 3, 4], "to": 2.0}, {"frame": 7, "label": "dog", "box": [5, 6, 7, 8]}]"#,
        )
        .unwrap();
        let l = Hint::load(&p, 25.0).unwrap();
        assert_eq!((l[0].first, l[0].last), (None, Some(50)));
        assert_eq!(
            (l[1].rect, l[1].first, l[1].last),
            (Rect::new(5, 6, 7, 8), Some(7), Some(7))
        );
        assert!(h[1].covers(3) && !h[1].covers(2) && h[1].covers(1000));
        assert!(h[2].covers(0));
        std::fs::write(&p, r#"{"boxes": [{"box": [1, 2, 0, 4]}]}"#).unwrap();
        assert!(
            Hint::load(&p, 25.0)
                .unwrap_err()
                .to_string()
                .contains("box 1")
        );
        // Times or frames out of order would make a hint that never holds.
        for (text, says) in [
            (
                r#"{"boxes": [{"box": [0, 0, 9, 9]}, {"box": [1, 2, 3, 4], "from": 5, "to": 2}]}"#,
                r#"box 2: "to" (2 s) is before "from" (5 s)"#,
            ),
            (
                r#"{"boxes": [{"box": [1, 2, 3, 4], "first": 9, "last": 3}]}"#,
                r#"box 1: "last" (frame 3) is before "first" (frame 9)"#,
            ),
            // A misspelt key would hold the box over the whole clip.
            (
                r#"{"boxes": [{"box": [1, 2, 3, 4], "form": 1.0, "to": 3.0}]}"#,
                "unknown field `form`",
            ),
            (
                r#"[{"box": [1, 2, 3, 4], "frame": 4, "first": 2}]"#,
                r#"box 1: "frame" (4) with"#,
            ),
        ] {
            std::fs::write(&p, text).unwrap();
            let e = Hint::load(&p, 25.0).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("hints.json"), "{e}");
        }
    }
}
