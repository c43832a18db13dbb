//! The `reframe` op's window path: the JSON file it writes beside its
//! output, one window a frame in pixels of the input, and its reader.
//! `seamstream quality --reframe-path` reads it for the path's smoothness
//! ([`crate::quality::path_smoothness`]).
//!
//! ```json
//! {"version": 1, "input": [1280, 720], "output": [406, 720],
//!  "shots": [{"first": 0, "last": 119, "mode": "crop", "camera": "still"}],
//!  "frames": [{"frame": 0, "t": 0.0, "shot": 0, "window": [437, 0, 406, 720], "mode": "crop"}]}
//! ```
//!
//! `t`, a shot's `mode` and `camera` are optional; fields not named here
//! are ignored, so the op may write more. Frames come in increasing order
//! of `frame`, each inside its shot's `first..=last`. A message names the
//! field (`frames[3].window`) and what is wrong with it; [`ReframePath::read`]
//! adds the file.

use std::path::Path;

use serde_json::{Map, Value};

use crate::{Error, Result};

/// The format's version, `"version"`.
pub const VERSION: u64 = 1;

/// How a frame was reframed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Mode {
    /// A moving crop window.
    Crop,
    /// Seam carving inside the window.
    Carve,
    /// The window scaled to fit and padded.
    Pad,
}

impl Mode {
    pub const ALL: [Mode; 3] = [Mode::Crop, Mode::Carve, Mode::Pad];

    pub fn name(self) -> &'static str {
        match self {
            Mode::Crop => "crop",
            Mode::Carve => "carve",
            Mode::Pad => "pad",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|m| m.name() == text)
    }
}

/// A window in pixels of the input (may be fractional; for `pad` it may
/// reach beyond the input).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Window {
    pub x: f64,
    pub y: f64,
    pub w: f64,
    pub h: f64,
}

impl Window {
    pub fn centre(&self) -> (f64, f64) {
        (self.x + self.w / 2.0, self.y + self.h / 2.0)
    }
}

/// A shot: frames `first..=last`.
#[derive(Clone, Debug, PartialEq)]
pub struct Shot {
    pub first: usize,
    pub last: usize,
    pub mode: Option<Mode>,
    /// What the op judged the camera to do (`"still"`, `"pan"`, …).
    pub camera: Option<String>,
}

/// One frame's window.
#[derive(Clone, Debug, PartialEq)]
pub struct PathFrame {
    /// The 0-based index of the decoded frame.
    pub frame: usize,
    /// Its time in seconds.
    pub t: Option<f64>,
    /// Its index in [`ReframePath::shots`].
    pub shot: usize,
    pub window: Window,
    pub mode: Mode,
}

/// A whole path file.
#[derive(Clone, Debug, PartialEq)]
pub struct ReframePath {
    /// The input's width and height.
    pub input: (usize, usize),
    /// The output's width and height.
    pub output: (usize, usize),
    pub shots: Vec<Shot>,
    pub frames: Vec<PathFrame>,
}

impl ReframePath {
    /// Reads and checks a path file; the error names the file and the field.
    pub fn read(path: &Path) -> Result<Self> {
        let fail = |reason: String| Error::Read {
            path: path.to_path_buf(),
            reason,
        };
        let text = std::fs::read_to_string(path).map_err(|e| fail(e.to_string()))?;
        Self::parse(&text).map_err(fail)
    }

    /// Parses and checks the text of a path file; the error names the field.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let root: Value = serde_json::from_str(text).map_err(|e| format!("not JSON: {e}"))?;
        let root = object(&root, "the file")?;
        let version = count(required(root, "version", "")?, "version")?;
        if version as u64 != VERSION {
            return Err(format!(
                "version: {version} is not a version this reader knows (it reads {VERSION})"
            ));
        }
        let input = size(required(root, "input", "")?, "input")?;
        let output = size(required(root, "output", "")?, "output")?;
        let mut shots = Vec::new();
        for (i, v) in array(required(root, "shots", "")?, "shots")?
            .iter()
            .enumerate()
        {
            let at = format!("shots[{i}]");
            let o = object(v, &at)?;
            let first = count(required(o, "first", &at)?, &format!("{at}.first"))?;
            let last = count(required(o, "last", &at)?, &format!("{at}.last"))?;
            if last < first {
                return Err(format!("{at}.last: {last} is before first ({first})"));
            }
            let mode = match o.get("mode") {
                None | Some(Value::Null) => None,
                Some(v) => Some(mode(v, &format!("{at}.mode"))?),
            };
            let camera = match o.get("camera") {
                None | Some(Value::Null) => None,
                Some(v) => Some(string(v, &format!("{at}.camera"))?.to_owned()),
            };
            shots.push(Shot {
                first,
                last,
                mode,
                camera,
            });
        }
        let mut frames: Vec<PathFrame> = Vec::new();
        for (i, v) in array(required(root, "frames", "")?, "frames")?
            .iter()
            .enumerate()
        {
            let at = format!("frames[{i}]");
            let o = object(v, &at)?;
            let frame = count(required(o, "frame", &at)?, &format!("{at}.frame"))?;
            if let Some(prev) = frames.last()
                && frame <= prev.frame
            {
                return Err(format!(
                    "{at}.frame: {frame} does not follow {}; frames must be in increasing order",
                    prev.frame
                ));
            }
            let t = match o.get("t") {
                None | Some(Value::Null) => None,
                Some(v) => Some(number(v, &format!("{at}.t"))?),
            };
            let shot = count(required(o, "shot", &at)?, &format!("{at}.shot"))?;
            let Some(s) = shots.get(shot) else {
                return Err(format!(
                    "{at}.shot: {shot} is not a shot (`shots` has {})",
                    shots.len()
                ));
            };
            if frame < s.first || frame > s.last {
                return Err(format!(
                    "{at}.frame: {frame} is outside its shot {shot} (frames {} to {})",
                    s.first, s.last
                ));
            }
            let window = rect(required(o, "window", &at)?, &format!("{at}.window"))?;
            let mode = mode(required(o, "mode", &at)?, &format!("{at}.mode"))?;
            frames.push(PathFrame {
                frame,
                t,
                shot,
                window,
                mode,
            });
        }
        Ok(Self {
            input,
            output,
            shots,
            frames,
        })
    }

    /// The path as a file's text, in the format [`ReframePath::parse`] reads.
    pub fn to_json(&self) -> String {
        let shots: Vec<Value> = self
            .shots
            .iter()
            .map(|s| {
                let mut o = Map::new();
                o.insert("first".into(), s.first.into());
                o.insert("last".into(), s.last.into());
                if let Some(m) = s.mode {
                    o.insert("mode".into(), m.name().into());
                }
                if let Some(c) = &s.camera {
                    o.insert("camera".into(), c.as_str().into());
                }
                Value::Object(o)
            })
            .collect();
        let frames: Vec<Value> = self
            .frames
            .iter()
            .map(|f| {
                let w = &f.window;
                let mut o = Map::new();
                o.insert("frame".into(), f.frame.into());
                if let Some(t) = f.t {
                    o.insert("t".into(), t.into());
                }
                o.insert("shot".into(), f.shot.into());
                o.insert("window".into(), vec![w.x, w.y, w.w, w.h].into());
                o.insert("mode".into(), f.mode.name().into());
                Value::Object(o)
            })
            .collect();
        let mut root = Map::new();
        root.insert("version".into(), VERSION.into());
        root.insert("input".into(), vec![self.input.0, self.input.1].into());
        root.insert("output".into(), vec![self.output.0, self.output.1].into());
        root.insert("shots".into(), shots.into());
        root.insert("frames".into(), frames.into());
        Value::Object(root).to_string()
    }
}

// Field readers shared with the box file (`quality --boxes`): each takes the
// field's name for its message.

/// `key` of `o`, or a message naming `parent.key`.
pub(crate) fn required<'a>(
    o: &'a Map<String, Value>,
    key: &str,
    parent: &str,
) -> std::result::Result<&'a Value, String> {
    o.get(key).ok_or_else(|| {
        if parent.is_empty() {
            format!("`{key}` is missing")
        } else {
            format!("{parent}.{key} is missing")
        }
    })
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

pub(crate) fn object<'a>(
    v: &'a Value,
    at: &str,
) -> std::result::Result<&'a Map<String, Value>, String> {
    v.as_object()
        .ok_or_else(|| format!("{at}: expected an object, found {}", kind(v)))
}

pub(crate) fn array<'a>(v: &'a Value, at: &str) -> std::result::Result<&'a Vec<Value>, String> {
    v.as_array()
        .ok_or_else(|| format!("{at}: expected an array, found {}", kind(v)))
}

pub(crate) fn string<'a>(v: &'a Value, at: &str) -> std::result::Result<&'a str, String> {
    v.as_str()
        .ok_or_else(|| format!("{at}: expected a string, found {}", kind(v)))
}

/// A finite number.
pub(crate) fn number(v: &Value, at: &str) -> std::result::Result<f64, String> {
    v.as_f64()
        .filter(|x| x.is_finite())
        .ok_or_else(|| format!("{at}: expected a number, found {}", kind(v)))
}

/// A whole number ≥ 0 (`3` or `3.0`).
pub(crate) fn count(v: &Value, at: &str) -> std::result::Result<usize, String> {
    let x = number(v, at)?;
    if x < 0.0 || x.fract() != 0.0 || x > u32::MAX as f64 {
        return Err(format!("{at}: expected a whole number ≥ 0, found {v}"));
    }
    Ok(x as usize)
}

/// `[width, height]`, both ≥ 1.
pub(crate) fn size(v: &Value, at: &str) -> std::result::Result<(usize, usize), String> {
    let a = array(v, at)?;
    if a.len() != 2 {
        return Err(format!(
            "{at}: expected [width, height], found {} values",
            a.len()
        ));
    }
    let (w, h) = (count(&a[0], at)?, count(&a[1], at)?);
    if w == 0 || h == 0 {
        return Err(format!("{at}: {w}x{h} is empty; both sides must be ≥ 1"));
    }
    Ok((w, h))
}

/// `[x, y, w, h]`, with `w` and `h` > 0.
pub(crate) fn rect(v: &Value, at: &str) -> std::result::Result<Window, String> {
    let a = array(v, at)?;
    if a.len() != 4 {
        return Err(format!(
            "{at}: expected [x, y, w, h], found {} values",
            a.len()
        ));
    }
    let mut n = [0f64; 4];
    for (x, v) in n.iter_mut().zip(a) {
        *x = number(v, at)?;
    }
    if n[2] <= 0.0 || n[3] <= 0.0 {
        return Err(format!(
            "{at}: the width and height must be > 0, found {} and {}",
            n[2], n[3]
        ));
    }
    Ok(Window {
        x: n[0],
        y: n[1],
        w: n[2],
        h: n[3],
    })
}

fn mode(v: &Value, at: &str) -> std::result::Result<Mode, String> {
    let s = string(v, at)?;
    Mode::parse(s).ok_or_else(|| {
        format!(
            "{at}: {} is not a mode; expected crop, carve or pad",
            crate::error::quoted(s)
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const GOOD: &str = r#"{"version": 1, "input": [1280, 720], "output": [406, 720], "op": "reframe",
        "shots": [{"first": 0, "last": 1, "mode": "crop", "camera": "still", "extra": [1]},
                  {"first": 2, "last": 2}],
        "frames": [{"frame": 0, "t": 0.0, "shot": 0, "window": [437, 0, 406, 720], "mode": "crop", "score": 3},
                   {"frame": 1, "shot": 0, "window": [440.5, 0, 406, 720], "mode": "crop"},
                   {"frame": 2, "shot": 1, "window": [0, 0, 406, 720], "mode": "pad"}]}"#;

    #[test]
    fn a_path_with_extra_fields_reads_and_writes_back_the_same() {
        let p = ReframePath::parse(GOOD).unwrap();
        assert_eq!((p.input, p.output), ((1280, 720), (406, 720)));
        assert_eq!(p.shots[0].camera.as_deref(), Some("still"));
        assert_eq!(p.shots[1].mode, None);
        assert_eq!(p.frames[1].window.x, 440.5);
        assert_eq!(p.frames[1].t, None);
        assert_eq!(p.frames[2].mode, Mode::Pad);
        assert_eq!(ReframePath::parse(&p.to_json()).unwrap(), p);
    }

    #[test]
    fn bad_fields_are_named() {
        for (from, to, says) in [
            (r#""version": 1"#, r#""version": 2"#, "version: 2"),
            (r#""input": [1280, 720]"#, r#""input": [1280]"#, "input:"),
            (
                r#"[440.5, 0, 406, 720]"#,
                r#"[440.5, 0, 406]"#,
                "frames[1].window",
            ),
            (
                r#"[440.5, 0, 406, 720]"#,
                r#"[440.5, 0, -4, 720]"#,
                "frames[1].window",
            ),
            (r#""mode": "pad""#, r#""mode": "zoom""#, "frames[2].mode"),
            (r#""shot": 1,"#, r#""shot": 2,"#, "frames[2].shot"),
            (r#""frame": 1,"#, r#""frame": 0,"#, "frames[1].frame"),
            (r#""frame": 2,"#, r#""frame": 3,"#, "frames[2].frame"),
            (r#""frame": 1,"#, r#""frame": -1,"#, "frames[1].frame"),
            (r#""first": 2"#, r#""first": 3"#, "shots[1].last"),
            (r#""t": 0.0,"#, r#""t": "zero","#, "frames[0].t"),
        ] {
            let text = GOOD.replacen(from, to, 1);
            assert_ne!(text, GOOD, "{from}");
            let e = ReframePath::parse(&text).unwrap_err();
            assert!(e.starts_with(says), "{to}: {e}");
        }
        let e = ReframePath::parse(&GOOD.replacen(r#""window": [0, 0, 406, 720], "#, "", 1))
            .unwrap_err();
        assert_eq!(e, "frames[2].window is missing");
    }
}
