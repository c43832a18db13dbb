//! Pipeline files: a run written down in TOML (input, output, device, the
//! settings of test sources, and the operations in order), for
//! `seamstream run --pipeline FILE.toml`.
//!
//! ```toml
//! output = "out.mp4"
//! device = "auto"
//!
//! [input]
//! source = "camera:/dev/video0"
//! fallback = "test:ball"    # when that camera does not exist
//! size = "640x480"          # test sources only
//!
//! [[op]]
//! name = "gaussian"
//! sigma = 2
//! ```
//!
//! Each `[[op]]` table is written out in the chain syntax
//! (`gaussian:sigma=2`) and parsed by [`ops::parse_op`], so a file is checked
//! by the same code, with the same messages, as `--op`. Every error names the
//! file and the line it is about. The file's settings are plain values here;
//! the command line decides which of them a run uses.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use toml::Spanned;

use crate::error::Error;
use crate::gst::{Input, Output};
use crate::ops::{self, Chain};

/// A pipeline file that cannot be read or used.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read pipeline file `{}`: {reason}", path.display())]
    Read { path: PathBuf, reason: String },

    #[error("{}:{line}: {message}", path.display())]
    At {
        path: PathBuf,
        line: usize,
        message: String,
    },

    #[error("{}: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

/// A value from the file with the line it is on.
#[derive(Clone, Debug, PartialEq)]
pub struct Located<T> {
    pub value: T,
    pub line: usize,
}

/// One `[[op]]` table in chain syntax.
#[derive(Clone, Debug, PartialEq)]
pub struct OpLine {
    /// `name:key=value,...`, as `--op` takes it.
    pub text: String,
    /// The line of the op's `name`.
    pub line: usize,
}

/// A pipeline file, read and checked. Each setting is `None` where the file
/// leaves it out.
#[derive(Debug)]
pub struct PipelineFile {
    pub path: PathBuf,
    /// `[input] source`: anything `seamstream run` takes as its input.
    pub source: Option<Located<String>>,
    /// `[input] fallback`: the input to use when the source is a camera
    /// that does not exist.
    pub fallback: Option<Located<String>>,
    pub output: Option<Located<String>>,
    /// `auto`, `cpu`, `cuda` or `cuda:N`.
    pub device: Option<String>,
    /// Size, rate, length (0 = until stopped) and liveness of test sources.
    pub size: Option<(usize, usize)>,
    pub fps: Option<i32>,
    pub frames: Option<u64>,
    pub live: Option<bool>,
    pub ops: Vec<OpLine>,
    /// The ops, built.
    pub chain: Chain,
}

type OpTable = BTreeMap<Spanned<String>, Spanned<toml::Value>>;

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Doc {
    output: Option<Spanned<String>>,
    device: Option<Spanned<String>>,
    input: Option<InputDoc>,
    #[serde(default)]
    op: Vec<Spanned<OpTable>>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct InputDoc {
    source: Option<Spanned<String>>,
    fallback: Option<Spanned<String>>,
    size: Option<Spanned<String>>,
    fps: Option<Spanned<i64>>,
    frames: Option<Spanned<i64>>,
    live: Option<bool>,
}

/// Keys that belong at the top of the file; TOML puts a key written after an
/// `[[op]]` header into that op, which is an easy slip.
const TOP_LEVEL_KEYS: &[&str] = &["output", "device", "input", "source", "fallback"];

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

impl PipelineFile {
    /// Reads and checks the file at `path`.
    pub fn load(path: &Path) -> Result<Self, FileError> {
        let text = std::fs::read_to_string(path).map_err(|e| FileError::Read {
            path: path.into(),
            reason: e.to_string(),
        })?;
        Self::parse(path, &text)
    }

    /// Checks `text`, the contents of the file at `path` (named in errors).
    pub fn parse(path: &Path, text: &str) -> Result<Self, FileError> {
        let at = |offset: usize, message: String| FileError::At {
            path: path.into(),
            line: line_of(text, offset),
            message,
        };
        let doc: Doc = toml::from_str(text).map_err(|e| {
            // serde says "field"; the file's author wrote a key.
            let message = e.message().trim().replace("unknown field", "unknown key");
            match e.span() {
                Some(span) => at(span.start, message),
                None => FileError::Invalid {
                    path: path.into(),
                    message,
                },
            }
        })?;
        let located = |s: Option<Spanned<String>>| {
            s.map(|s| Located {
                line: line_of(text, s.span().start),
                value: s.into_inner(),
            })
        };

        let device = match doc.device {
            Some(d) if !valid_device(d.get_ref()) => {
                return Err(at(
                    d.span().start,
                    format!(
                        "`device = \"{}\"`: expected auto, cpu, cuda or cuda:N (N a GPU index)",
                        d.get_ref()
                    ),
                ));
            }
            d => d.map(Spanned::into_inner),
        };
        let input = doc.input.unwrap_or(InputDoc {
            source: None,
            fallback: None,
            size: None,
            fps: None,
            frames: None,
            live: None,
        });
        let size = match input.size {
            Some(s) => Some(parse_size(s.get_ref()).ok_or_else(|| {
                at(
                    s.span().start,
                    format!(
                        "`size = \"{}\"`: expected \"WIDTHxHEIGHT\" in pixels, each from 1 to 16384, e.g. \"1280x720\"",
                        s.get_ref()
                    ),
                )
            })?),
            None => None,
        };
        let fps = match input.fps {
            Some(f) if !(1..=1000).contains(f.get_ref()) => {
                return Err(at(
                    f.span().start,
                    format!(
                        "`fps = {}`: expected a frame rate from 1 to 1000",
                        f.get_ref()
                    ),
                ));
            }
            f => f.map(|f| *f.get_ref() as i32),
        };
        let frames = match input.frames {
            Some(n) if *n.get_ref() < 0 => {
                return Err(at(
                    n.span().start,
                    format!(
                        "`frames = {}`: expected a count of frames, or 0 for until stopped",
                        n.get_ref()
                    ),
                ));
            }
            n => n.map(|n| *n.get_ref() as u64),
        };

        let mut ops = Vec::new();
        let mut built = Vec::new();
        for table in &doc.op {
            let (op, op_box) =
                build_op(table, text).map_err(|(offset, message)| at(offset, message))?;
            ops.push(op);
            built.push(op_box);
        }
        Ok(Self {
            path: path.into(),
            source: located(input.source),
            fallback: located(input.fallback),
            output: located(doc.output),
            device,
            size,
            fps,
            frames,
            live: input.live,
            ops,
            chain: Chain::new(built),
        })
    }

    /// An error about line `line` of this file.
    pub fn error_at(&self, line: usize, e: impl std::fmt::Display) -> FileError {
        FileError::At {
            path: self.path.clone(),
            line,
            message: e.to_string(),
        }
    }

    /// The file's input source, parsed; `None` if it names none.
    pub fn input(&self) -> Result<Option<Input>, FileError> {
        self.source
            .as_ref()
            .map(|s| {
                Input::parse(&s.value).map_err(|e| self.error_at(s.line, format!("input: {e}")))
            })
            .transpose()
    }

    /// The file's fallback input, parsed; `None` if it names none.
    pub fn fallback_input(&self) -> Result<Option<Input>, FileError> {
        self.fallback
            .as_ref()
            .map(|s| {
                Input::parse(&s.value).map_err(|e| self.error_at(s.line, format!("fallback: {e}")))
            })
            .transpose()
    }

    /// The file's output, parsed; `None` if it names none.
    pub fn output(&self) -> Result<Option<Output>, FileError> {
        self.output
            .as_ref()
            .map(|s| {
                Output::parse(&s.value).map_err(|e| self.error_at(s.line, format!("output: {e}")))
            })
            .transpose()
    }
}

fn valid_device(text: &str) -> bool {
    matches!(text, "auto" | "cpu" | "cuda")
        || text
            .strip_prefix("cuda:")
            .is_some_and(|n| n.parse::<usize>().is_ok())
}

fn parse_size(text: &str) -> Option<(usize, usize)> {
    let (w, h) = text.split_once(['x', 'X'])?;
    let (w, h): (usize, usize) = (w.trim().parse().ok()?, h.trim().parse().ok()?);
    ((1..=16384).contains(&w) && (1..=16384).contains(&h)).then_some((w, h))
}

/// Characters that the chain syntax gives a meaning to, so that a name,
/// key or text value holding one would be read as something else.
fn has_syntax(text: &str) -> bool {
    text.contains([':', ',', '=', '[', ']'])
}

/// Turns one `[[op]]` table into chain syntax and builds it with the `--op`
/// parser; an error comes with the byte offset it is about.
fn build_op(table: &Spanned<OpTable>, text: &str) -> Result<(OpLine, ops::OpBox), (usize, String)> {
    let entries = table.get_ref();
    let Some((name_key, name)) = entries.get_key_value("name") else {
        return Err((
            table.span().start,
            "this [[op]] has no `name`; write e.g. name = \"gaussian\" (`seamstream ops` lists the operations)"
                .into(),
        ));
    };
    let name_at = name_key.span().start;
    let toml::Value::String(name) = name.get_ref() else {
        return Err((
            name_at,
            format!(
                "`name = {}`: the operation's name is a string, e.g. name = \"gaussian\"",
                name.get_ref()
            ),
        ));
    };
    // The same lookup `--op` does, before the name goes into the text.
    let entry = ops::lookup(name.trim()).map_err(|e| (name_at, e.to_string()))?;
    let mut params: Vec<(&Spanned<String>, &Spanned<toml::Value>)> = entries
        .iter()
        .filter(|(k, _)| k.get_ref() != "name")
        .collect();
    // In the file's order, so the text reads as the file does.
    params.sort_by_key(|(k, _)| k.span().start);
    let mut pieces = vec![entry.spec.name.to_string()];
    for (key, value) in &params {
        let key_at = key.span().start;
        if has_syntax(key.get_ref()) {
            // No parameter has such a name; the spec says which ones there are.
            let e = ops::Params::from_pairs(entry.spec, &[(key.get_ref().clone(), String::new())])
                .err()
                .map_or_else(
                    || format!("`{}` is not a parameter name", key.get_ref()),
                    |e| e.to_string(),
                );
            return Err((key_at, e));
        }
        let raw = value_text(value.get_ref()).map_err(|reason| {
            (
                key_at,
                Error::bad_value(entry.spec.name, key.get_ref(), value.get_ref(), reason)
                    .to_string(),
            )
        })?;
        pieces.push(format!("{}={raw}", key.get_ref()));
    }
    let chain_text = match pieces.split_first() {
        Some((name, rest)) if !rest.is_empty() => format!("{name}:{}", rest.join(",")),
        _ => entry.spec.name.to_string(),
    };
    let op = ops::parse_op(&chain_text).map_err(|e| {
        let key = match &e {
            Error::UnknownKey { key, .. }
            | Error::BadValue { key, .. }
            | Error::MissingKey { key, .. } => Some(key.as_str()),
            _ => None,
        };
        let offset = key
            .and_then(|k| entries.get_key_value(k))
            .map_or(name_at, |(k, _)| k.span().start);
        let mut message = e.to_string();
        if let Error::UnknownKey { key, .. } = &e
            && TOP_LEVEL_KEYS.contains(&key.as_str())
        {
            message.push_str(&format!(
                " (`{key}` belongs above the first [[op]]: TOML puts every key after an [[op]] line into that op)"
            ));
        }
        (offset, message)
    })?;
    let line = line_of(text, name_at);
    Ok((
        OpLine {
            text: chain_text,
            line,
        },
        op,
    ))
}

/// A TOML value as the chain syntax writes it: numbers and booleans as
/// themselves, strings as they are, arrays (nested ones flattened, row-major)
/// as `[a,b,...]`.
fn value_text(value: &toml::Value) -> Result<String, String> {
    match value {
        toml::Value::String(s) if has_syntax(s) => Err(
            "a text value cannot hold `:`, `,`, `=`, `[` or `]` (write a list as a TOML array, e.g. [1, 2, 3])"
                .into(),
        ),
        toml::Value::String(s) => Ok(s.clone()),
        toml::Value::Integer(i) => Ok(i.to_string()),
        // Display writes the shortest text that reads back as the same f64.
        toml::Value::Float(f) => Ok(f.to_string()),
        toml::Value::Boolean(b) => Ok(b.to_string()),
        toml::Value::Array(items) => {
            let mut out = Vec::new();
            flatten(items, &mut out)?;
            Ok(format!("[{}]", out.join(",")))
        }
        toml::Value::Datetime(_) => Err("a date is not an operation parameter".into()),
        toml::Value::Table(_) => {
            Err("a table is not an operation parameter; write key = value in the [[op]]".into())
        }
    }
}

fn flatten(items: &[toml::Value], out: &mut Vec<String>) -> Result<(), String> {
    for item in items {
        match item {
            toml::Value::Array(inner) => flatten(inner, out)?,
            other => out.push(value_text(other)?),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> Result<PipelineFile, FileError> {
        PipelineFile::parse(Path::new("pipelines/x.toml"), text)
    }

    fn err(text: &str) -> String {
        parse(text).unwrap_err().to_string()
    }

    #[test]
    fn toml_values_become_chain_syntax() {
        let f = parse(
            r#"
[[op]]
name = "gaussian"
sigma = 2
border = "reflect101"

[[op]]
name = "warp"
affine = [0.9, -0.1, 12, 0.1, 0.9, -5.5]
inverse = false
interpolation = "bicubic"

[[op]]
name = "convolve"
kernel = [[0, 1, 0], [1, -4, 1], [0, 1, 0]]

[[op]]
name = "retarget"
width = "75%"

[[op]]
name = "equalize"
"#,
        )
        .unwrap();
        let texts: Vec<&str> = f.ops.iter().map(|o| o.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "gaussian:sigma=2,border=reflect101",
                "warp:affine=[0.9,-0.1,12,0.1,0.9,-5.5],inverse=false,interpolation=bicubic",
                "convolve:kernel=[0,1,0,1,-4,1,0,1,0]",
                "retarget:width=75%",
                "equalize",
            ]
        );
        assert_eq!(
            f.ops.iter().map(|o| o.line).collect::<Vec<_>>(),
            [3, 8, 14, 18, 22]
        );
        assert_eq!(
            f.chain.names(),
            ["gaussian", "warp", "convolve", "retarget", "equalize"]
        );
    }

    #[test]
    fn floats_keep_their_value_in_text() {
        for v in [0.1, 1e-7, 2.5e10, -0.333333333333, 7.0] {
            let text = value_text(&toml::Value::Float(v)).unwrap();
            assert_eq!(text.parse::<f64>().unwrap(), v, "{text}");
        }
    }

    #[test]
    fn unknown_op_is_reported_with_file_and_line() {
        let e = err(
            "output = \"null\"\n\n[[op]]\nname = \"gaussian\"\n\n[[op]]\nname = \"blurr\"\nsigma = 2\n",
        );
        assert!(
            e.starts_with("pipelines/x.toml:7: unknown operation `blurr`; valid operations are: "),
            "{e}"
        );
        assert!(e.contains("gaussian") && e.contains("retarget"), "{e}");
    }

    #[test]
    fn bad_keys_and_values_are_reported_on_their_own_line() {
        let e = err("[[op]]\nname = \"gaussian\"\nsigma = 2\nsigmaa = 3\n");
        assert!(
            e.starts_with("pipelines/x.toml:4: gaussian: unknown parameter `sigmaa`"),
            "{e}"
        );
        let e = err("[[op]]\nname = \"gaussian\"\n\nsigma = 400\n");
        assert!(
            e.starts_with("pipelines/x.toml:4: gaussian: `sigma=400`"),
            "{e}"
        );
        let e = err("[[op]]\nname = \"warp\"\naffine = [1, 2, 3]\n");
        assert!(
            e.starts_with("pipelines/x.toml:3: warp: `affine=[1,2,3]`"),
            "{e}"
        );
        assert!(e.contains("6 numbers"), "{e}");
        let e = err("[[op]]\nname = \"threshold\"\nt = \"otsu,type=trunc\"\n");
        assert!(e.starts_with("pipelines/x.toml:3: threshold: `t="), "{e}");
        assert!(e.contains("cannot hold"), "{e}");
        let e = err("[[op]]\nname = \"gaussian\"\n\"sigma=3\" = 1\n");
        assert!(
            e.starts_with("pipelines/x.toml:3: gaussian: unknown parameter `sigma=3`"),
            "{e}"
        );
        // A required parameter that is missing points at the op.
        let e = err("\n[[op]]\nname = \"warp\"\n");
        assert!(e.starts_with("pipelines/x.toml:3: warp: missing"), "{e}");
    }

    #[test]
    fn an_op_without_a_name_points_at_its_table() {
        let e = err("[[op]]\nname = \"sobel\"\n\n[[op]]\nsigma = 2\n");
        assert!(e.starts_with("pipelines/x.toml:"), "{e}");
        assert!(e.contains("has no `name`"), "{e}");
        let line: usize = e.split(':').nth(1).unwrap().parse().unwrap();
        assert!((4..=5).contains(&line), "{e}");
        let e = err("[[op]]\nname = 3\n");
        assert!(e.starts_with("pipelines/x.toml:2: `name = 3`"), "{e}");
    }

    #[test]
    fn unknown_and_misplaced_keys_are_errors() {
        let e = err("outptu = \"x.mp4\"\n");
        assert!(
            e.starts_with("pipelines/x.toml:1: unknown key `outptu`"),
            "{e}"
        );
        assert!(e.contains("output"), "{e}");
        let e = err("[input]\nsource = \"test:ball\"\nsize = \"64x48\"\nframs = 3\n");
        assert!(
            e.starts_with("pipelines/x.toml:4: unknown key `frams`"),
            "{e}"
        );
        // `output` written below an op belongs to that op in TOML.
        let e = err("[[op]]\nname = \"gaussian\"\noutput = \"x.mp4\"\n");
        assert!(
            e.starts_with("pipelines/x.toml:3: gaussian: unknown parameter `output`"),
            "{e}"
        );
        assert!(e.contains("above the first [[op]]"), "{e}");
        let e = err("[input]\nfps = \"30\"\n");
        assert!(e.starts_with("pipelines/x.toml:2:"), "{e}");
        let e = err("output = \"x.mp4\"\n[[op]\nname = \"gaussian\"\n");
        assert!(e.starts_with("pipelines/x.toml:2:"), "{e}");
    }

    #[test]
    fn settings_are_read_and_checked() {
        let f = parse(
            r#"
output = "o.mkv"
device = "cuda:1"

[input]
source = "camera:/dev/video0"
fallback = "test:ball"
size = "320x240"
fps = 25
frames = 0
live = true
"#,
        )
        .unwrap();
        assert_eq!(f.source.as_ref().unwrap().value, "camera:/dev/video0");
        assert_eq!(f.source.as_ref().unwrap().line, 6);
        assert_eq!(f.fallback.as_ref().unwrap().value, "test:ball");
        assert_eq!(f.output.as_ref().unwrap().value, "o.mkv");
        assert_eq!(f.device.as_deref(), Some("cuda:1"));
        assert_eq!(
            (f.size, f.fps, f.frames, f.live),
            (Some((320, 240)), Some(25), Some(0), Some(true))
        );
        assert!(f.chain.is_empty());
        assert!(matches!(f.input().unwrap(), Some(Input::Camera { .. })));
        assert!(matches!(
            f.fallback_input().unwrap(),
            Some(Input::Test { .. })
        ));

        let e = err("[input]\nsize = \"640\"\n");
        assert!(e.starts_with("pipelines/x.toml:2: `size = \"640\"`"), "{e}");
        let e = err("[input]\nfps = 0\n");
        assert!(e.starts_with("pipelines/x.toml:2: `fps = 0`"), "{e}");
        let e = err("[input]\nframes = -1\n");
        assert!(e.starts_with("pipelines/x.toml:2: `frames = -1`"), "{e}");
        let e = err("device = \"gpu\"\n");
        assert!(
            e.starts_with("pipelines/x.toml:1: `device = \"gpu\"`"),
            "{e}"
        );
        let f = parse("\n\noutput = \"x.avi\"\n").unwrap();
        let e = f.output().unwrap_err().to_string();
        assert!(e.starts_with("pipelines/x.toml:3: output:"), "{e}");
    }

    #[test]
    fn every_shipped_pipeline_file_parses() {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("pipelines");
        let mut n = 0;
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "toml") {
                let f = PipelineFile::load(&path).unwrap_or_else(|e| panic!("{e}"));
                assert!(!f.chain.is_empty(), "{}", path.display());
                assert!(
                    f.source.is_some() && f.output.is_some(),
                    "{}",
                    path.display()
                );
                n += 1;
            }
        }
        assert!(n >= 4, "only {n} pipeline files in {}", dir.display());
    }
}
