//! Pipeline files: a run written down in TOML (input, output, device, the
//! encoder, the settings of test sources, and the operations in order), for
//! `seamstream run --pipeline FILE.toml`.
//!
//! ```toml
//! output = "out.mp4"
//! device = "auto"           # auto, cpu, cuda or cuda:N
//! codec = "h264"            # the video encoder, as ffmpeg's -c:v
//! crf = 23                  # constant quality (lower is better), or:
//! bitrate = 4000            # kbit/s
//! preset = "veryfast"       # the encoder's speed preset
//! audio = false             # drop the audio (default: keep it)
//!
//! [input]
//! source = "camera:/dev/video0"
//! fallback = "test:ball"    # when that camera does not exist
//! size = "640x480"          # test sources only, as --size
//! fps = 29.97               # test sources only, as --fps: 30, 29.97 or "30000/1001"
//! frames = 300              # test sources only; 0 = until stopped
//! live = true               # test sources only: real time
//!
//! [[op]]
//! name = "gaussian"
//! sigma = 2
//! ```
//!
//! Every key is optional, but a file must hold something: an empty one is
//! an error. Each `[[op]]` table is written out in the chain syntax
//! (`gaussian:sigma=2`) and parsed by [`registry::parse_op`], so a file is checked
//! by the same code, with the same messages, as `--op`. Every error names the
//! file and the line it is about, and shows the value as written (long ones
//! shortened, see [`quoted`]). The file's settings are plain values here:
//! the encoder keys are checked for their type only, and the command line
//! and the run decide which settings a run uses and whether their values
//! work.

use std::path::{Path, PathBuf};

use toml::Spanned;
use toml::de::{DeArray, DeString, DeTable, DeValue};

use crate::args;
use crate::error::{Error, quoted, quoted_after};
use crate::gst::encode::{Codec, EncoderChoice};
use crate::gst::request::RunRequest;
use crate::gst::{Input, Output};
use crate::ops::{self, Chain};
use crate::registry;

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
#[derive(Debug, Default)]
pub struct PipelineFile {
    pub path: PathBuf,
    /// `[input] source`: anything `seamstream run` takes as its input.
    pub source: Option<Located<String>>,
    /// `[input] fallback`: the input to use when the source is a camera
    /// that does not exist.
    pub fallback: Option<Located<String>>,
    pub output: Option<Located<String>>,
    /// `auto`, `cpu`, `cuda` or `cuda:N`.
    pub device: Option<crate::Device>,
    /// Size, rate (numerator, denominator), length (0 = until stopped) and
    /// liveness of test sources.
    pub size: Option<(usize, usize)>,
    pub fps: Option<(i32, i32)>,
    pub frames: Option<u64>,
    pub live: Option<bool>,
    /// The video encoder's name; its value is the run's to check.
    pub codec: Option<String>,
    /// The encoder's constant-quality level; its value is the run's to check.
    pub crf: Option<u32>,
    /// The encoder's bit rate in kbit/s; its value is the run's to check.
    pub bitrate: Option<u32>,
    /// The encoder's speed preset; its value is the run's to check.
    pub preset: Option<String>,
    /// `false`: drop the input's audio.
    pub audio: Option<bool>,
    pub ops: Vec<OpLine>,
    /// The ops, built.
    pub chain: Chain,
}

/// Keys that belong at the top of the file; TOML puts a key written after an
/// `[[op]]` header into that op, which is an easy slip.
const TOP_LEVEL_KEYS: &[&str] = &[
    "output", "device", "codec", "crf", "bitrate", "preset", "audio", "input", "source", "fallback",
];

/// The keys of the file's top level, in the order the docs give them.
const FILE_KEYS: &[&str] = &[
    "output", "device", "codec", "crf", "bitrate", "preset", "audio", "input", "op",
];

/// The keys of `[input]`.
const INPUT_KEYS: &[&str] = &["source", "fallback", "size", "fps", "frames", "live"];

/// What an empty file is told.
const EMPTY_FILE: &str = "the pipeline file is empty; it needs at least one operation (an [[op]] table with name = \"gaussian\" and the operation's keys) or a setting such as output = \"out.mp4\" or [input] source = \"test:ball\"; the files in pipelines/ are examples";

/// The 1-based line of byte `offset` in `text`.
fn line_of(text: &str, offset: usize) -> usize {
    text.as_bytes()[..offset.min(text.len())]
        .iter()
        .filter(|&&b| b == b'\n')
        .count()
        + 1
}

/// An error, with the byte offset in the file's text that it is about.
type Mistake = (usize, String);

/// `key = value` as the file writes it, in backticks, the value shortened.
fn written(text: &str, key: &str, value: &Spanned<DeValue>) -> String {
    let span = value.span();
    let value_text = text.get(span.start..span.end).unwrap_or("");
    quoted_after(&format!("{key} = "), value_text)
}

/// The value of `key` as a string, or an error saying to quote it.
fn expect_str<'a>(
    text: &str,
    key: &str,
    value: &'a Spanned<DeValue>,
    example: &str,
) -> Result<&'a str, Mistake> {
    match value.get_ref() {
        DeValue::String(s) => Ok(s),
        _ => Err((
            value.span().start,
            format!(
                "{}: expected a string in quotes, e.g. {key} = \"{example}\"",
                written(text, key, value)
            ),
        )),
    }
}

fn expect_bool(text: &str, key: &str, value: &Spanned<DeValue>) -> Result<bool, Mistake> {
    match value.get_ref() {
        DeValue::Boolean(b) => Ok(*b),
        _ => Err((
            value.span().start,
            format!(
                "{}: expected true or false (no quotes)",
                written(text, key, value)
            ),
        )),
    }
}

/// A TOML integer's value; `None` for another type or past an i64.
fn integer(value: &DeValue) -> Option<i64> {
    match value {
        DeValue::Integer(i) => i64::from_str_radix(i.as_str(), i.radix()).ok(),
        _ => None,
    }
}

/// The value of `key` as a whole number from 0 up, `what` saying what it
/// counts.
fn expect_u32(text: &str, key: &str, value: &Spanned<DeValue>, what: &str) -> Result<u32, Mistake> {
    integer(value.get_ref())
        .and_then(|n| u32::try_from(n).ok())
        .ok_or_else(|| {
            (
                value.span().start,
                format!(
                    "{}: expected {what}, a whole number from 0 to {} without quotes",
                    written(text, key, value),
                    u32::MAX
                ),
            )
        })
}

/// An unknown key, with the valid ones.
fn unknown_key(key: &Spanned<DeString>, table: &str, valid: &[&str]) -> Mistake {
    (
        key.span().start,
        format!(
            "unknown key {}{table}; valid keys are: {}",
            quoted(key.get_ref()),
            valid.join(", ")
        ),
    )
}

/// A table's entries in the file's order (the parser keeps them sorted by
/// name), so the first mistake reported is the first one written.
fn in_file_order<'a, 'i>(
    table: &'a DeTable<'i>,
) -> Vec<(&'a Spanned<DeString<'i>>, &'a Spanned<DeValue<'i>>)> {
    let mut entries: Vec<_> = table.iter().collect();
    entries.sort_by_key(|(k, _)| k.span().start);
    entries
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
        let doc = DeTable::parse(text).map_err(|e| {
            let message = e.message().trim().to_string();
            match e.span() {
                Some(span) => FileError::At {
                    path: path.into(),
                    line: line_of(text, span.start),
                    message,
                },
                None => FileError::Invalid {
                    path: path.into(),
                    message,
                },
            }
        })?;
        if doc.get_ref().is_empty() {
            return Err(FileError::Invalid {
                path: path.into(),
                message: EMPTY_FILE.into(),
            });
        }
        let mut file = Self {
            path: path.into(),
            ..Self::default()
        };
        read_settings(&mut file, doc.get_ref(), text).map_err(|(offset, message)| {
            FileError::At {
                path: path.into(),
                line: line_of(text, offset),
                message,
            }
        })?;
        Ok(file)
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

    /// What the file asks of a run, typed: the request the command line is
    /// laid over. Takes the file's chain.
    pub fn request(&mut self) -> Result<RunRequest, FileError> {
        let codec = self
            .codec
            .as_deref()
            .map(Codec::parse)
            .transpose()
            .map_err(|e| FileError::Invalid {
                path: self.path.clone(),
                message: format!("codec: {e}"),
            })?;
        Ok(RunRequest {
            input: self.input()?,
            fallback: self.fallback_input()?,
            output: self.output()?,
            device: self.device,
            size: self.size,
            fps: self.fps,
            frames: self.frames,
            live: self.live,
            chain: Some(std::mem::take(&mut self.chain)),
            encoder: EncoderChoice {
                codec,
                crf: self.crf,
                bitrate: self.bitrate,
                preset: self.preset.clone(),
            },
            audio: self.audio,
        })
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

/// Reads the top level of the file into `s`; an error comes with the byte
/// offset it is about.
fn read_settings(s: &mut PipelineFile, doc: &DeTable, text: &str) -> Result<(), Mistake> {
    let located = |value: &Spanned<DeValue>, v: &str| Located {
        value: v.to_string(),
        line: line_of(text, value.span().start),
    };
    for (key, value) in in_file_order(doc) {
        let k: &str = key.get_ref();
        match k {
            "output" => {
                let v = expect_str(text, k, value, "out.mp4")?;
                s.output = Some(located(value, v));
            }
            "device" => {
                let v = expect_str(text, k, value, "auto")?;
                let Some(device) = crate::Device::parse(v) else {
                    return Err((
                        value.span().start,
                        format!(
                            "{}: expected {}",
                            written(text, k, value),
                            crate::Device::EXPECTED
                        ),
                    ));
                };
                s.device = Some(device);
            }
            "codec" => s.codec = Some(expect_str(text, k, value, "h264")?.to_string()),
            "preset" => s.preset = Some(expect_str(text, k, value, "veryfast")?.to_string()),
            "crf" => s.crf = Some(expect_u32(text, k, value, "a quality level")?),
            "bitrate" => s.bitrate = Some(expect_u32(text, k, value, "kbit/s")?),
            "audio" => s.audio = Some(expect_bool(text, k, value)?),
            "input" => match value.get_ref() {
                DeValue::Table(input) => read_input(input, text, s)?,
                _ => {
                    return Err((
                        value.span().start,
                        format!(
                            "{}: the input is a table: write [input] on a line of its own and its keys (source = \"test:ball\", ...) below it",
                            written(text, k, value)
                        ),
                    ));
                }
            },
            "op" => {
                let mut built = Vec::new();
                for table in op_tables(text, k, value)? {
                    let (line, op) = build_op(table, text)?;
                    s.ops.push(line);
                    built.push(op);
                }
                s.chain = Chain::new(built);
            }
            _ => return Err(unknown_key(key, "", FILE_KEYS)),
        }
    }
    Ok(())
}

/// The tables of `op`, or an error saying how operations are written.
fn op_tables<'a, 'i>(
    text: &str,
    key: &str,
    value: &'a Spanned<DeValue<'i>>,
) -> Result<Vec<(&'a DeTable<'i>, usize)>, Mistake> {
    let how = "operations are [[op]] tables: write [[op]] on a line of its own, then name = \"gaussian\" and the operation's keys below it";
    let DeValue::Array(items) = value.get_ref() else {
        return Err((
            value.span().start,
            format!("{}: {how}", written(text, key, value)),
        ));
    };
    table_items(items).map_err(|item| {
        (
            item.span().start,
            format!("{}: {how}", written(text, key, item)),
        )
    })
}

fn table_items<'a, 'i>(
    items: &'a DeArray<'i>,
) -> Result<Vec<(&'a DeTable<'i>, usize)>, &'a Spanned<DeValue<'i>>> {
    items
        .iter()
        .map(|item| match item.get_ref() {
            DeValue::Table(t) => Ok((t, item.span().start)),
            _ => Err(item),
        })
        .collect()
}

/// Reads `[input]` into `s`.
fn read_input(input: &DeTable, text: &str, s: &mut PipelineFile) -> Result<(), Mistake> {
    let located = |value: &Spanned<DeValue>, v: &str| Located {
        value: v.to_string(),
        line: line_of(text, value.span().start),
    };
    for (key, value) in in_file_order(input) {
        let k: &str = key.get_ref();
        let at = value.span().start;
        match k {
            "source" => s.source = Some(located(value, expect_str(text, k, value, "test:ball")?)),
            "fallback" => {
                s.fallback = Some(located(value, expect_str(text, k, value, "test:ball")?));
            }
            "size" => {
                let v = expect_str(text, k, value, "1280x720")?;
                s.size = Some(args::parse_size(v).map_err(|_| {
                    (
                        at,
                        format!(
                            "{}: expected \"WIDTHxHEIGHT\" in pixels, each from 1 to {}, e.g. \"1280x720\"",
                            written(text, k, value),
                            args::MAX_SIZE_SIDE
                        ),
                    )
                })?);
            }
            "fps" => {
                // The rate as the command line would take it.
                let rate_text = match value.get_ref() {
                    DeValue::String(v) => Some(v.to_string()),
                    DeValue::Integer(_) => integer(value.get_ref()).map(|n| n.to_string()),
                    DeValue::Float(f) => Some(f.as_str().to_string()),
                    _ => None,
                };
                let rate = match rate_text.as_deref().map(args::parse_fps) {
                    Some(Ok(rate)) => rate,
                    Some(Err(Error::BadArgument { reason, .. })) => {
                        return Err((
                            at,
                            format!(
                                "{}: {reason} (here a fraction goes in quotes: fps = \"30000/1001\")",
                                written(text, k, value)
                            ),
                        ));
                    }
                    _ => {
                        return Err((
                            at,
                            format!(
                                "{}: expected a frame rate from 1 to {}: a number (fps = 30, fps = 29.97) or a fraction in quotes (fps = \"30000/1001\")",
                                written(text, k, value),
                                args::MAX_FPS
                            ),
                        ));
                    }
                };
                s.fps = Some(rate);
            }
            "frames" => {
                let n = integer(value.get_ref())
                    .and_then(|n| u64::try_from(n).ok())
                    .ok_or_else(|| {
                        (
                            at,
                            format!(
                                "{}: expected a count of frames, or 0 for until stopped",
                                written(text, k, value)
                            ),
                        )
                    })?;
                s.frames = Some(n);
            }
            "live" => s.live = Some(expect_bool(text, k, value)?),
            _ => return Err(unknown_key(key, " in [input]", INPUT_KEYS)),
        }
    }
    Ok(())
}

/// Characters that the chain syntax gives a meaning to, so that a name,
/// key or text value holding one would be read as something else.
fn has_syntax(text: &str) -> bool {
    // A `:` is safe inside a value (`aspect = "9:16"`): the chain parser
    // takes the name up to the first one.
    text.contains([',', '=', '[', ']'])
}

/// Turns one `[[op]]` table (and the offset of its header) into chain
/// syntax and builds it with the `--op` parser; an error comes with the
/// byte offset it is about.
fn build_op(
    (entries, table_at): (&DeTable, usize),
    text: &str,
) -> Result<(OpLine, ops::OpBox), Mistake> {
    let Some((name_key, name)) = entries.get_key_value("name") else {
        return Err((
            table_at,
            "this [[op]] has no `name`; write e.g. name = \"gaussian\" (`seamstream ops` lists the operations)"
                .into(),
        ));
    };
    let name_at = name_key.span().start;
    let DeValue::String(name_text) = name.get_ref() else {
        return Err((
            name_at,
            format!(
                "{}: the operation's name is a string, e.g. name = \"gaussian\"",
                written(text, "name", name)
            ),
        ));
    };
    // The same lookup `--op` does, before the name goes into the text.
    let entry = registry::lookup(name_text.trim()).map_err(|e| (name_at, e.to_string()))?;
    let params: Vec<_> = in_file_order(entries)
        .into_iter()
        .filter(|(k, _)| k.get_ref() != "name")
        .collect();
    let mut pieces = vec![entry.spec.name.to_string()];
    for (key, value) in &params {
        let key_at = key.span().start;
        let key_text: &str = key.get_ref();
        if has_syntax(key_text) || key_text.contains(':') {
            // No parameter has such a name; the spec says which ones there are.
            let e = ops::Params::from_pairs(entry.spec, &[(key_text.to_string(), String::new())])
                .err()
                .map_or_else(
                    || format!("{} is not a parameter name", quoted(key_text)),
                    |e| e.to_string(),
                );
            return Err((key_at, e));
        }
        let raw = value_text(value.get_ref()).map_err(|reason| {
            let span = value.span();
            let as_written = text.get(span.start..span.end).unwrap_or("");
            (
                key_at,
                Error::bad_value(entry.spec.name, key_text, as_written, reason).to_string(),
            )
        })?;
        pieces.push(format!("{key_text}={raw}"));
    }
    let chain_text = match pieces.split_first() {
        Some((name, rest)) if !rest.is_empty() => format!("{name}:{}", rest.join(",")),
        _ => entry.spec.name.to_string(),
    };
    // A pipeline file's chain runs on a video.
    let op = registry::parse_op_for(&chain_text, crate::ops::params::Media::Video).map_err(|e| {
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
fn value_text(value: &DeValue) -> Result<String, String> {
    match value {
        DeValue::String(s) if has_syntax(s) => Err(
            "a text value cannot hold `,`, `=`, `[` or `]` (write a list as a TOML array, e.g. [1, 2, 3])"
                .into(),
        ),
        DeValue::String(s) => Ok(s.to_string()),
        DeValue::Integer(_) => match integer(value) {
            Some(i) => Ok(i.to_string()),
            None => Err("too large for a 64-bit integer".into()),
        },
        // Display writes the shortest text that reads back as the same f64.
        DeValue::Float(f) => f
            .as_str()
            .parse::<f64>()
            .map(|v| v.to_string())
            .map_err(|_| "not a number".into()),
        DeValue::Boolean(b) => Ok(b.to_string()),
        DeValue::Array(items) => {
            let mut out = Vec::new();
            flatten(items, &mut out)?;
            Ok(format!("[{}]", out.join(",")))
        }
        DeValue::Datetime(_) => Err("a date is not an operation parameter".into()),
        DeValue::Table(_) => {
            Err("a table is not an operation parameter; write key = value in the [[op]]".into())
        }
    }
}

fn flatten(items: &DeArray, out: &mut Vec<String>) -> Result<(), String> {
    for item in items.iter() {
        match item.get_ref() {
            DeValue::Array(inner) => flatten(inner, out)?,
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
            let toml = format!("a = {v:?}");
            let doc = DeTable::parse(&toml).unwrap();
            let text = value_text(doc.get_ref()["a"].get_ref()).unwrap();
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
        let e = err("[input]\nfps = true\n");
        assert!(e.starts_with("pipelines/x.toml:2: `fps = true`"), "{e}");
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
        assert_eq!(f.device, Some(crate::Device::Cuda(1)));
        assert_eq!(
            (f.size, f.fps, f.frames, f.live),
            (Some((320, 240)), Some((25, 1)), Some(0), Some(true))
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
    fn fps_is_a_number_or_a_fraction_in_a_string() {
        for (written, rate) in [
            ("30", (30, 1)),
            ("29.97", (30000, 1001)),
            ("23.976", (24000, 1001)),
            ("12.5", (25, 2)),
            ("30.0", (30, 1)),
            ("\"30000/1001\"", (30000, 1001)),
            ("\"25/1\"", (25, 1)),
            ("\"59.94\"", (60000, 1001)),
        ] {
            let f = parse(&format!("[input]\nfps = {written}\n")).unwrap();
            assert_eq!(f.fps, Some(rate), "fps = {written}");
        }
        for (written, why) in [
            ("0", "out of range"),
            ("1001", "out of range"),
            ("-30", "out of range"),
            ("-0.5", "out of range"),
            ("nan", "30000/1001"),
            ("\"30/0\"", "denominator"),
            ("\"abc\"", "not a frame rate"),
            ("true", "a fraction in quotes"),
            ("[30, 1]", "a fraction in quotes"),
            ("99999999999999999999", "a fraction in quotes"),
        ] {
            let e = err(&format!("\n[input]\nfps = {written}\n"));
            assert!(
                e.starts_with(&format!("pipelines/x.toml:3: `fps = {written}`: ")),
                "{e}"
            );
            assert!(e.contains(why), "fps = {written}: {e}");
        }
    }

    #[test]
    fn an_empty_file_is_an_error_that_says_what_a_file_needs() {
        for text in ["", "\n  \n\t\n", "# only a comment\n   # and another\n"] {
            let e = err(text);
            assert!(
                e.starts_with("pipelines/x.toml: the pipeline file is empty;"),
                "{text:?}: {e}"
            );
            assert!(e.contains("[[op]]") && e.contains("pipelines/"), "{e}");
        }
        // Something in it is enough.
        assert!(parse("device = \"cpu\"\n").is_ok());
    }

    #[test]
    fn encoder_and_audio_keys_are_read_and_type_checked() {
        let f =
            parse("codec = \"h264\"\ncrf = 23\nbitrate = 4000\npreset = \"slow\"\naudio = false\n")
                .unwrap();
        assert_eq!(f.codec.as_deref(), Some("h264"));
        assert_eq!((f.crf, f.bitrate), (Some(23), Some(4000)));
        assert_eq!(f.preset.as_deref(), Some("slow"));
        assert_eq!(f.audio, Some(false));
        let f = parse("output = \"o.mp4\"\n").unwrap();
        assert_eq!(
            (f.codec, f.crf, f.bitrate, f.preset, f.audio),
            (None, None, None, None, None)
        );
        for (line, expect) in [
            ("crf = \"23\"", "expected a quality level, a whole number"),
            ("crf = -1", "expected a quality level"),
            ("crf = 4294967296", "from 0 to 4294967295"),
            ("bitrate = 1.5", "expected kbit/s"),
            ("audio = \"no\"", "expected true or false"),
            (
                "codec = 264",
                "expected a string in quotes, e.g. codec = \"h264\"",
            ),
            ("preset = false", "expected a string in quotes"),
        ] {
            let e = err(&format!("output = \"null\"\n{line}\n"));
            assert!(
                e.starts_with(&format!("pipelines/x.toml:2: `{line}`: ")),
                "{line}: {e}"
            );
            assert!(e.contains(expect), "{line}: {e}");
        }
        // Written under an [[op]], TOML gives it to the op.
        let e = err("[[op]]\nname = \"gaussian\"\ncrf = 20\n");
        assert!(
            e.starts_with("pipelines/x.toml:3: gaussian: unknown parameter `crf`"),
            "{e}"
        );
        assert!(e.contains("above the first [[op]]"), "{e}");
    }

    #[test]
    fn misplaced_tables_and_lists_say_how_to_write_them() {
        let e = err("input = \"test:ball\"\n");
        assert!(
            e.starts_with("pipelines/x.toml:1: `input = \"test:ball\"`: the input is a table"),
            "{e}"
        );
        let e = err("op = \"gaussian\"\n");
        assert!(
            e.starts_with("pipelines/x.toml:1: `op = \"gaussian\"`"),
            "{e}"
        );
        assert!(e.contains("[[op]] tables"), "{e}");
        let e = err("op = [1]\n");
        assert!(e.starts_with("pipelines/x.toml:1: `op = 1`"), "{e}");
        // An inline array of tables is the same as [[op]] headers.
        let f = parse("op = [{ name = \"gaussian\", sigma = 2 }]\n").unwrap();
        assert_eq!(f.ops[0].text, "gaussian:sigma=2");
    }

    #[test]
    fn long_values_are_shortened_in_messages() {
        let long = "q".repeat(100_000);
        // As written: a string's count includes its quotes.
        let shown = format!("{}…` (1000", "q".repeat(59));
        for (text, line) in [
            (format!("\"{long}\" = 1\n"), 1),
            (format!("device = \"{long}\"\n"), 1),
            (format!("[input]\nsize = \"{long}\"\n"), 2),
            (format!("[input]\nfps = \"{long}\"\n"), 2),
            (format!("[input]\n\"{long}\" = 1\n"), 2),
            (format!("[[op]]\nname = \"{long}\"\n"), 2),
            (
                format!("[[op]]\nname = \"gaussian\"\nsigma = \"{long}\"\n"),
                3,
            ),
            (format!("[[op]]\nname = \"gaussian\"\n{long} = 1\n"), 3),
            (
                format!("[[op]]\nname = \"warp\"\naffine = [1, \"{long}\"]\n"),
                3,
            ),
        ] {
            let e = err(&text);
            let start: String = e.chars().take(300).collect();
            assert!(e.len() < 600, "{} bytes: {start}", e.len());
            assert!(
                e.starts_with(&format!("pipelines/x.toml:{line}: ")),
                "{start}"
            );
            assert!(e.contains(&shown), "{start}");
        }
        // A number too long for any integer type.
        let nines = "9".repeat(100_000);
        let e = err(&format!("[[op]]\nname = \"warp\"\naffine = [1, {nines}]\n"));
        assert!(
            e.starts_with(&format!(
                "pipelines/x.toml:3: warp: `affine=[1, {}…` (100005 characters): too large",
                "9".repeat(56)
            )),
            "{}",
            e.chars().take(300).collect::<String>()
        );
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
