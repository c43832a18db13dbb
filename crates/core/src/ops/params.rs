//! Operation parameters: the spec each operation declares, and the parser for
//! the chain syntax `name:key=value,key=[a,b,c]`.
//!
//! Every operation lists its parameters once, in an [`OpSpec`]. The same table
//! validates user input, fills in defaults and prints `seamstream ops`, so the
//! three can never disagree.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{Error, Result, quoted};

/// What a parameter accepts.
#[derive(Clone, Copy, Debug)]
pub enum Kind {
    /// A real number in `min..=max`.
    Float { min: f64, max: f64 },
    /// A whole number in `min..=max`.
    Int { min: i64, max: i64 },
    /// One of the listed words.
    Choice(&'static [&'static str]),
    /// A whole number in `min..=max`, or one of the listed words.
    IntOrChoice {
        min: i64,
        max: i64,
        choices: &'static [&'static str],
    },
    /// A bracketed list of numbers, `[a,b,...]`, with a length in `lens`.
    List {
        lens: &'static [usize],
        max_len: usize,
    },
    /// A size in pixels (`640`, from 1 to `max_pixels`) or percent of the
    /// input (`75%`, above 0 and at most `max_percent`).
    Size { max_pixels: usize, max_percent: f64 },
    /// A `WIDTHxHEIGHT` size in pixels.
    Dims,
    /// A file path.
    Path,
    /// `true` or `false`.
    Bool,
    /// An aspect ratio, `W:H` (`9:16`) or one number (`0.5625`), between
    /// 1:`max` and `max`:1.
    Ratio { max: f64 },
    /// One of the listed words, or a colour as `#rrggbb` (as ffmpeg and
    /// CSS write it).
    ChoiceOrColour(&'static [&'static str]),
}

impl Kind {
    /// The kind in words, as `seamstream ops` gives it.
    pub fn describe(&self) -> String {
        match self {
            Kind::Float { min, max } => format!("a number from {min} to {max}"),
            Kind::Int { min, max } => format!("a whole number from {min} to {max}"),
            Kind::Choice(c) => format!("one of {}", c.join(", ")),
            Kind::ChoiceOrColour(c) => {
                format!("one of {}, or a colour as #rrggbb (#ff8000)", c.join(", "))
            }
            Kind::IntOrChoice { min, max, choices } => {
                format!(
                    "a whole number from {min} to {max}, or {}",
                    choices.join(", ")
                )
            }
            Kind::List { lens: [], max_len } => {
                format!("a list of 1 to {max_len} numbers in brackets, e.g. [1,2,1]")
            }
            Kind::List { lens, .. } => {
                let l: Vec<String> = lens.iter().map(|l| l.to_string()).collect();
                format!("a list of {} numbers in brackets", l.join(" or "))
            }
            Kind::Size {
                max_pixels,
                max_percent,
            } => format!(
                "pixels from 1 to {max_pixels} (640) or percent of the input above 0 and at most {max_percent}% (75%)"
            ),
            Kind::Dims => "WIDTHxHEIGHT in pixels, e.g. 1280x720".into(),
            Kind::Path => "a file path".into(),
            Kind::Bool => "true or false".into(),
            Kind::Ratio { max } => {
                format!(
                    "an aspect ratio W:H (9:16, 1:1, 4:5; or W/H) or a number, from 1:{max} to {max}:1"
                )
            }
        }
    }
}

/// One parameter of an operation.
#[derive(Clone, Copy, Debug)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: Kind,
    /// The default, written as a user would write it; `None` means the
    /// parameter is optional with no default (or required, see `required`).
    pub default: Option<&'static str>,
    pub required: bool,
    pub help: &'static str,
}

impl ParamSpec {
    pub const fn new(
        name: &'static str,
        kind: Kind,
        default: &'static str,
        help: &'static str,
    ) -> Self {
        Self {
            name,
            kind,
            default: Some(default),
            required: false,
            help,
        }
    }
    pub const fn optional(name: &'static str, kind: Kind, help: &'static str) -> Self {
        Self {
            name,
            kind,
            default: None,
            required: false,
            help,
        }
    }
    pub const fn required(name: &'static str, kind: Kind, help: &'static str) -> Self {
        Self {
            name,
            kind,
            default: None,
            required: true,
            help,
        }
    }
}

/// An operation's name, one-line summary, parameters and an example.
#[derive(Debug)]
pub struct OpSpec {
    pub name: &'static str,
    pub summary: &'static str,
    pub params: &'static [ParamSpec],
    pub example: &'static str,
}

impl OpSpec {
    fn param(&self, key: &str) -> Result<&ParamSpec> {
        self.params
            .iter()
            .find(|p| p.name == key)
            .ok_or_else(|| Error::UnknownKey {
                op: self.name.into(),
                key: key.into(),
                valid: if self.params.is_empty() {
                    "none (this operation takes no parameters)".into()
                } else {
                    self.params
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
    }

    /// A help block for `seamstream ops`.
    pub fn describe(&self) -> String {
        let mut s = format!("{:<10} {}\n", self.name, self.summary);
        for p in self.params {
            let default = match (p.default, p.required) {
                (Some(d), _) => format!(" [default: {d}]"),
                (None, true) => " [required]".into(),
                (None, false) => String::new(),
            };
            s.push_str(&format!(
                "    {:<14} {}; {}{}\n",
                p.name,
                p.help,
                p.kind.describe(),
                default
            ));
        }
        s.push_str(&format!("    e.g. --op {}\n", self.example));
        s
    }
}

/// A size written in pixels or percent.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum SizeSpec {
    Pixels(usize),
    Percent(f64),
}

/// As the chain syntax writes it: `640` or `75%`.
impl std::fmt::Display for SizeSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            SizeSpec::Pixels(p) => write!(f, "{p}"),
            SizeSpec::Percent(p) => write!(f, "{p}%"),
        }
    }
}

impl SizeSpec {
    /// The size in pixels for an input of `input` pixels (at least 0; the
    /// caller checks the range).
    pub fn resolve(self, input: usize) -> usize {
        match self {
            SizeSpec::Pixels(p) => p,
            SizeSpec::Percent(p) => (input as f64 * p / 100.0).round().max(0.0) as usize,
        }
    }
}

/// A validated parameter value.
#[derive(Clone, Debug, PartialEq)]
pub enum Value {
    Num(f64),
    Word(String),
    List(Vec<f64>),
    Size(SizeSpec),
    Dims(usize, usize),
    Path(PathBuf),
    Bool(bool),
    /// An aspect ratio as written: width and height parts (`9:16` is (9, 16),
    /// `0.5625` is (0.5625, 1)).
    Ratio(f64, f64),
}

/// Validated parameters of one operation, defaults filled in.
#[derive(Clone, Debug)]
pub struct Params {
    op: &'static str,
    values: BTreeMap<&'static str, Value>,
    /// The keys the user wrote; the rest of `values` are defaults.
    given: Vec<&'static str>,
    media: Media,
}

/// What an operation is built for: one picture, or the frames of a video
/// stream, where an operation may default otherwise (retarget: fast mode,
/// which follows the last frame's seams, unless `mode` says exact). Given
/// when the operation is built, so that no later call can be forgotten.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Media {
    #[default]
    Image,
    Video,
}

impl Params {
    /// Validates `pairs` (key, raw text) against `spec` and fills defaults.
    pub fn from_pairs(spec: &'static OpSpec, pairs: &[(String, String)]) -> Result<Self> {
        let mut values = BTreeMap::new();
        for (key, raw) in pairs {
            let p = spec.param(key)?;
            if values.contains_key(p.name) {
                return Err(Error::bad_value(spec.name, key, raw, "given twice"));
            }
            values.insert(p.name, parse_value(spec.name, p, raw)?);
        }
        for p in spec.params {
            if values.contains_key(p.name) {
                continue;
            }
            if let Some(d) = p.default {
                values.insert(p.name, parse_value(spec.name, p, d)?);
            } else if p.required {
                return Err(Error::MissingKey {
                    op: spec.name.into(),
                    key: p.name.into(),
                    help: p.kind.describe(),
                });
            }
        }
        let given = pairs
            .iter()
            .filter_map(|(k, _)| spec.params.iter().find(|p| p.name == k))
            .map(|p| p.name)
            .collect();
        Ok(Self {
            op: spec.name,
            values,
            given,
            media: Media::Image,
        })
    }

    /// The same parameters, for `media`.
    pub fn for_media(mut self, media: Media) -> Self {
        self.media = media;
        self
    }

    /// What the operation is built for.
    pub fn media(&self) -> Media {
        self.media
    }

    /// Whether the user gave `key` (rather than leaving it to its default).
    pub fn given(&self, key: &str) -> bool {
        self.given.contains(&key)
    }

    pub fn op(&self) -> &'static str {
        self.op
    }

    pub fn get(&self, key: &str) -> Option<&Value> {
        self.values.get(key)
    }

    pub fn has(&self, key: &str) -> bool {
        self.values.contains_key(key)
    }

    fn missing(&self, key: &str) -> Error {
        Error::op_failed(
            self.op,
            format!("parameter `{key}` has no value (a bug in the op's spec)"),
        )
    }

    pub fn f64(&self, key: &str) -> Result<f64> {
        match self.get(key) {
            Some(Value::Num(v)) => Ok(*v),
            _ => Err(self.missing(key)),
        }
    }

    pub fn f32(&self, key: &str) -> Result<f32> {
        self.f64(key).map(|v| v as f32)
    }

    pub fn usize(&self, key: &str) -> Result<usize> {
        self.f64(key).map(|v| v as usize)
    }

    pub fn opt_f64(&self, key: &str) -> Option<f64> {
        match self.get(key) {
            Some(Value::Num(v)) => Some(*v),
            _ => None,
        }
    }

    pub fn word(&self, key: &str) -> Result<&str> {
        match self.get(key) {
            Some(Value::Word(w)) => Ok(w),
            _ => Err(self.missing(key)),
        }
    }

    pub fn list(&self, key: &str) -> Option<&[f64]> {
        match self.get(key) {
            Some(Value::List(v)) => Some(v),
            _ => None,
        }
    }

    pub fn size(&self, key: &str) -> Option<SizeSpec> {
        match self.get(key) {
            Some(Value::Size(s)) => Some(*s),
            _ => None,
        }
    }

    pub fn dims(&self, key: &str) -> Option<(usize, usize)> {
        match self.get(key) {
            Some(Value::Dims(w, h)) => Some((*w, *h)),
            _ => None,
        }
    }

    pub fn path(&self, key: &str) -> Option<&std::path::Path> {
        match self.get(key) {
            Some(Value::Path(p)) => Some(p),
            _ => None,
        }
    }

    pub fn bool(&self, key: &str) -> Result<bool> {
        match self.get(key) {
            Some(Value::Bool(b)) => Ok(*b),
            _ => Err(self.missing(key)),
        }
    }

    /// An aspect ratio's (width, height) parts, if given.
    pub fn ratio(&self, key: &str) -> Option<(f64, f64)> {
        match self.get(key) {
            Some(Value::Ratio(a, b)) => Some((*a, *b)),
            _ => None,
        }
    }

    pub fn border(&self) -> Result<super::Border> {
        let w = self.word("border")?;
        super::Border::parse(w)
            .ok_or_else(|| Error::bad_value(self.op, "border", w, "unknown border"))
    }
}

/// The number `text` holds, finite and without a sign on zero; the error
/// names `raw` (the whole value, of which `text` may be a part) and says
/// what `key` takes.
fn parse_number(op: &str, key: &str, raw: &str, text: &str, what: &str) -> Result<f64> {
    let v: f64 = text
        .trim()
        .parse()
        .map_err(|_| Error::bad_value(op, key, raw, format!("not a number; expected {what}")))?;
    if !v.is_finite() {
        return Err(Error::bad_value(
            op,
            key,
            raw,
            format!("not a finite number; expected {what}"),
        ));
    }
    // -0 is 0: adding +0 turns -0.0 into +0.0 and leaves the rest alone.
    Ok(v + 0.0)
}

/// A whole number of `raw`, or an error saying what `key` takes.
fn parse_whole(op: &str, key: &str, raw: &str, what: &str) -> Result<f64> {
    let v = parse_number(op, key, raw, raw, what)?;
    if v.fract() != 0.0 {
        return Err(Error::bad_value(
            op,
            key,
            raw,
            format!("not a whole number; expected {what}"),
        ));
    }
    Ok(v)
}

fn check_range(
    op: &str,
    key: &str,
    raw: &str,
    v: f64,
    min: f64,
    max: f64,
    what: &str,
) -> Result<f64> {
    if v < min || v > max {
        return Err(Error::bad_value(
            op,
            key,
            raw,
            format!("out of range; expected {what}"),
        ));
    }
    Ok(v)
}

fn parse_value(op: &str, p: &ParamSpec, raw: &str) -> Result<Value> {
    let raw = raw.trim();
    let key = p.name;
    let what = p.kind.describe();
    match p.kind {
        Kind::Float { min, max } => {
            let v = parse_number(op, key, raw, raw, &what)?;
            check_range(op, key, raw, v, min, max, &what).map(Value::Num)
        }
        Kind::Int { min, max } => {
            let v = parse_whole(op, key, raw, &what)?;
            check_range(op, key, raw, v, min as f64, max as f64, &what).map(Value::Num)
        }
        Kind::Choice(choices) => {
            if choices.contains(&raw) {
                Ok(Value::Word(raw.into()))
            } else {
                Err(Error::bad_value(op, key, raw, format!("expected {what}")))
            }
        }
        Kind::ChoiceOrColour(choices) => {
            let hex = raw.strip_prefix('#').unwrap_or("");
            if choices.contains(&raw)
                || (hex.len() == 6 && hex.chars().all(|c| c.is_ascii_hexdigit()))
            {
                Ok(Value::Word(raw.to_ascii_lowercase()))
            } else {
                Err(Error::bad_value(op, key, raw, format!("expected {what}")))
            }
        }
        Kind::IntOrChoice { min, max, choices } => {
            if choices.contains(&raw) {
                return Ok(Value::Word(raw.into()));
            }
            let v = parse_whole(op, key, raw, &what)?;
            check_range(op, key, raw, v, min as f64, max as f64, &what).map(Value::Num)
        }
        Kind::List { lens, max_len } => {
            let inner = raw
                .strip_prefix('[')
                .and_then(|r| r.strip_suffix(']'))
                .ok_or_else(|| Error::bad_value(op, key, raw, format!("expected {what}")))?;
            let items: Vec<f64> = inner
                .split(',')
                .filter(|s| !s.trim().is_empty())
                .enumerate()
                .map(|(i, s)| {
                    parse_number(op, key, raw, s, &what).map_err(|_| {
                        let item = quoted(s.trim());
                        Error::bad_value(
                            op,
                            key,
                            raw,
                            format!(
                                "item {} ({item}) is not a finite number; expected {what}",
                                i + 1
                            ),
                        )
                    })
                })
                .collect::<Result<_>>()?;
            let ok_len = if lens.is_empty() {
                !items.is_empty() && items.len() <= max_len
            } else {
                lens.contains(&items.len())
            };
            if !ok_len {
                return Err(Error::bad_value(
                    op,
                    key,
                    raw,
                    format!("has {} numbers; expected {what}", items.len()),
                ));
            }
            Ok(Value::List(items))
        }
        Kind::Size {
            max_pixels,
            max_percent,
        } => {
            let out_of_range =
                || Error::bad_value(op, key, raw, format!("out of range; expected {what}"));
            if let Some(pct) = raw.strip_suffix('%') {
                let v = parse_number(op, key, raw, pct, &what)?;
                if v <= 0.0 || v > max_percent {
                    return Err(out_of_range());
                }
                Ok(Value::Size(SizeSpec::Percent(v)))
            } else {
                let v = parse_whole(op, key, raw, &what)?;
                if v < 1.0 || v > max_pixels as f64 {
                    return Err(out_of_range());
                }
                Ok(Value::Size(SizeSpec::Pixels(v as usize)))
            }
        }
        Kind::Dims => {
            let bad = || Error::bad_value(op, key, raw, format!("expected {what}"));
            let (w, h) = raw.split_once(['x', 'X']).ok_or_else(bad)?;
            let w: usize = w.trim().parse().map_err(|_| bad())?;
            let h: usize = h.trim().parse().map_err(|_| bad())?;
            if w == 0 || h == 0 || w > 32768 || h > 32768 {
                return Err(Error::bad_value(
                    op,
                    key,
                    raw,
                    "each side must be from 1 to 32768 pixels",
                ));
            }
            Ok(Value::Dims(w, h))
        }
        Kind::Path => {
            if raw.is_empty() {
                return Err(Error::bad_value(op, key, raw, "expected a file path"));
            }
            Ok(Value::Path(PathBuf::from(raw)))
        }
        Kind::Ratio { max } => {
            let bad = || Error::bad_value(op, key, raw, format!("expected {what}"));
            // W:H, or W/H as ffmpeg's setdar takes it; WxH is a size, which
            // a user who meant a shape is told.
            if let Some((w, h)) = raw.split_once(['x', 'X'])
                && w.parse::<f64>().is_ok()
                && h.parse::<f64>().is_ok()
            {
                return Err(Error::bad_value(
                    op,
                    key,
                    raw,
                    format!("WxH is a size, and a shape is W:H: write {key}={w}:{h}"),
                ));
            }
            let (a, b) = match raw.split_once([':', '/']) {
                Some((a, b)) => (
                    parse_number(op, key, raw, a, &what)?,
                    parse_number(op, key, raw, b, &what)?,
                ),
                None => (parse_number(op, key, raw, raw, &what)?, 1.0),
            };
            if a <= 0.0 || b <= 0.0 {
                return Err(bad());
            }
            let r = a / b;
            if !(1.0 / max..=max).contains(&r) {
                return Err(Error::bad_value(
                    op,
                    key,
                    raw,
                    format!("out of range; expected {what}"),
                ));
            }
            Ok(Value::Ratio(a, b))
        }
        Kind::Bool => match raw {
            "true" | "yes" | "1" => Ok(Value::Bool(true)),
            "false" | "no" | "0" => Ok(Value::Bool(false)),
            _ => Err(Error::bad_value(op, key, raw, "expected true or false")),
        },
    }
}

/// Splits a whole chain written on one line, `gaussian:sigma=2,sobel,
/// retarget:width=75%` (the GStreamer elements' `ops`), into one text per
/// operation: at commas outside brackets, a piece with a `:` or without a
/// `=` starts an operation, and a `key=value` piece belongs to the one
/// before. A `;` always separates operations. A value in double quotes
/// is taken whole (`protect="masks/a,b.png"`).
pub fn split_chain(text: &str) -> Vec<String> {
    let mut ops: Vec<String> = Vec::new();
    let mut depth = 0i32;
    let mut piece = String::new();
    // An empty entry marks a `;`: what follows starts an operation.
    let flush = |piece: &mut String, ops: &mut Vec<String>| {
        let p = piece.trim();
        if !p.is_empty() {
            match ops.last_mut() {
                Some(last) if last.is_empty() => *last = p.to_string(),
                Some(last) if is_pair(p) => {
                    last.push(',');
                    last.push_str(p);
                }
                _ => ops.push(p.to_string()),
            }
        }
        piece.clear();
    };
    let mut in_quotes = false;
    for c in text.chars() {
        match c {
            '"' => in_quotes = !in_quotes,
            _ if in_quotes => {}
            '[' => depth += 1,
            ']' => depth -= 1,
            ',' if depth <= 0 => {
                flush(&mut piece, &mut ops);
                continue;
            }
            ';' if depth <= 0 => {
                flush(&mut piece, &mut ops);
                ops.push(String::new());
                continue;
            }
            _ => {}
        }
        piece.push(c);
    }
    flush(&mut piece, &mut ops);
    ops.retain(|o| !o.is_empty());
    ops
}

/// Whether a piece of a one-line chain is a `key=value` of the operation
/// before it: it has an `=` and no `:` before it (`aspect=9:16` is a pair,
/// `retarget:width=75%` starts an operation).
fn is_pair(piece: &str) -> bool {
    piece.find('=').is_some_and(|eq| !piece[..eq].contains(':'))
}

/// Splits `name:k=v,k=[a,b]` into the name and its (key, value) pairs.
/// Commas inside brackets belong to the value.
pub fn split_op(text: &str) -> Result<(String, Vec<(String, String)>)> {
    let bad = |reason: &str| Error::BadSyntax {
        text: text.into(),
        reason: reason.into(),
    };
    let text_trim = text.trim();
    let (name, rest) = match text_trim.split_once(':') {
        Some((n, r)) => (n.trim(), r),
        None => (text_trim, ""),
    };
    if name.is_empty() {
        return Err(bad(
            "the operation name is empty; write NAME or NAME:key=value,...",
        ));
    }
    let mut pairs = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    let bytes = rest.as_bytes();
    let mut pieces = Vec::new();
    let mut in_quotes = false;
    for (i, &b) in bytes.iter().enumerate() {
        match b {
            b'"' => in_quotes = !in_quotes,
            _ if in_quotes => {}
            b'[' => depth += 1,
            b']' => {
                depth -= 1;
                if depth < 0 {
                    return Err(bad("a `]` has no matching `[`"));
                }
            }
            b',' if depth == 0 => {
                pieces.push(&rest[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if in_quotes {
        return Err(bad("a `\"` is not closed; a quoted value ends with one"));
    }
    if depth != 0 {
        return Err(bad("a `[` is not closed"));
    }
    pieces.push(&rest[start..]);
    for piece in pieces {
        let piece = piece.trim();
        if piece.is_empty() {
            continue;
        }
        let (k, v) = piece
            .split_once('=')
            .ok_or_else(|| bad(&format!("{} is not key=value", quoted(piece))))?;
        let k = k.trim();
        if k.is_empty() {
            return Err(bad(&format!("{} has no key", quoted(piece))));
        }
        let v = v.trim();
        let v = v
            .strip_prefix('"')
            .and_then(|v| v.strip_suffix('"'))
            .unwrap_or(v);
        pairs.push((k.to_string(), v.to_string()));
    }
    Ok((name.to_string(), pairs))
}

/// `value` as one value of `key=value` in a chain's text: in double quotes
/// where it holds what would split it (`,` `;` `[` `]` `=`).
pub fn quote_value(value: &str) -> String {
    if value.contains([',', ';', '[', ']', '=', '"']) {
        format!("\"{value}\"")
    } else {
        value.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chain_on_one_line_splits_into_its_operations() {
        assert_eq!(
            split_chain("gaussian:sigma=2,border=zero,sobel,retarget:width=75%"),
            [
                "gaussian:sigma=2,border=zero",
                "sobel",
                "retarget:width=75%"
            ]
        );
        assert_eq!(
            split_chain("convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0],delta=2; gray"),
            ["convolve:kernel=[0,-1,0,-1,5,-1,0,-1,0],delta=2", "gray"]
        );
        assert!(split_chain(" , ").is_empty());
    }

    #[test]
    fn a_quoted_value_is_taken_whole() {
        let text = r#"retarget:width=50%,protect="masks/a,b;[c].png",energy=basic"#;
        assert_eq!(split_chain(text), [text]);
        let (_, pairs) = split_op(text).unwrap();
        assert_eq!(
            pairs,
            [
                ("width".to_string(), "50%".to_string()),
                ("protect".to_string(), "masks/a,b;[c].png".to_string()),
                ("energy".to_string(), "basic".to_string())
            ]
        );
        // What a GStreamer property gives is quoted where it must be.
        let line = format!("retarget:protect={}", quote_value("m.png,energy=basic"));
        let (_, pairs) = split_op(&line).unwrap();
        assert_eq!(
            pairs,
            [("protect".to_string(), "m.png,energy=basic".to_string())]
        );
        assert_eq!(quote_value("plain.png"), "plain.png");
        let e = split_op(r#"retarget:protect="a.png"#)
            .unwrap_err()
            .to_string();
        assert!(e.contains("not closed"), "{e}");
    }

    static SPEC: OpSpec = OpSpec {
        name: "demo",
        summary: "a test op",
        params: &[
            ParamSpec::new(
                "sigma",
                Kind::Float {
                    min: 0.1,
                    max: 10.0,
                },
                "1",
                "width",
            ),
            ParamSpec::new(
                "t",
                Kind::IntOrChoice {
                    min: 0,
                    max: 255,
                    choices: &["otsu"],
                },
                "128",
                "threshold",
            ),
            ParamSpec::optional(
                "m",
                Kind::List {
                    lens: &[6, 9],
                    max_len: 9,
                },
                "matrix",
            ),
            ParamSpec::optional(
                "width",
                Kind::Size {
                    max_pixels: 65536,
                    max_percent: 200.0,
                },
                "target",
            ),
        ],
        example: "demo:sigma=2",
    };

    fn parse(text: &str) -> Result<Params> {
        let (name, pairs) = split_op(text)?;
        assert_eq!(name, "demo");
        Params::from_pairs(&SPEC, &pairs)
    }

    #[test]
    fn brackets_keep_their_commas() {
        let (name, pairs) = split_op("warp:affine=[1,0,2,0,1,3],interpolation=bicubic").unwrap();
        assert_eq!(name, "warp");
        assert_eq!(
            pairs[0],
            ("affine".to_string(), "[1,0,2,0,1,3]".to_string())
        );
        assert_eq!(pairs[1].0, "interpolation");
    }

    #[test]
    fn defaults_fill_in_and_values_parse() {
        let p = parse("demo:m=[1,0,0,0,1,0],width=75%").unwrap();
        assert_eq!(p.f64("sigma").unwrap(), 1.0);
        assert_eq!(p.list("m").unwrap().len(), 6);
        assert_eq!(p.size("width"), Some(SizeSpec::Percent(75.0)));
        assert_eq!(p.size("width").unwrap().resolve(640), 480);
        assert_eq!(parse("demo:t=otsu").unwrap().word("t").unwrap(), "otsu");
    }

    #[test]
    fn unknown_key_lists_the_valid_ones() {
        let e = parse("demo:sigmaa=2").unwrap_err().to_string();
        assert!(
            e.contains("sigmaa") && e.contains("sigma, t, m, width"),
            "{e}"
        );
    }

    #[test]
    fn out_of_range_names_value_and_range() {
        let e = parse("demo:sigma=40").unwrap_err().to_string();
        assert!(e.contains("sigma=40") && e.contains("0.1 to 10"), "{e}");
        let e = parse("demo:t=256").unwrap_err().to_string();
        assert!(e.contains("otsu") && e.contains("0 to 255"), "{e}");
        let e = parse("demo:m=[1,2,3]").unwrap_err().to_string();
        assert!(e.contains("6 or 9"), "{e}");
        assert!(parse("demo:width=0").is_err());
        assert!(parse("demo:width=-5%").is_err());
    }

    #[test]
    fn a_huge_size_is_echoed_as_written_with_its_range() {
        let e = parse("demo:width=1e30").unwrap_err().to_string();
        assert!(e.contains("`width=1e30`"), "{e}");
        assert!(e.contains("1 to 65536") && e.contains("200%"), "{e}");
        assert!(!e.contains("18446744073709551615"), "{e}");
        let e = parse("demo:width=1e300%").unwrap_err().to_string();
        assert!(e.contains("`width=1e300%`") && e.contains("200%"), "{e}");
        let e = parse("demo:width=NaN%").unwrap_err().to_string();
        assert!(
            e.contains("`width=NaN%`") && e.contains("not a finite"),
            "{e}"
        );
        assert_eq!(
            parse("demo:width=200%").unwrap().size("width"),
            Some(SizeSpec::Percent(200.0))
        );
        assert_eq!(
            parse("demo:width=65536").unwrap().size("width"),
            Some(SizeSpec::Pixels(65536))
        );
        assert!(parse("demo:width=65537").is_err());
        assert!(parse("demo:width=12.5").is_err());
    }

    #[test]
    fn nan_infinity_and_huge_numbers_give_the_range() {
        for bad in ["NaN", "inf", "-infinity", "1e400"] {
            let e = parse(&format!("demo:sigma={bad}")).unwrap_err().to_string();
            assert!(
                e.contains(&format!("`sigma={bad}`")) && e.contains("0.1 to 10"),
                "{e}"
            );
        }
        for bad in ["99999999999999999999", "-1e300", "nan", "2.5"] {
            let e = parse(&format!("demo:t={bad}")).unwrap_err().to_string();
            assert!(
                e.contains(&format!("`t={bad}`")) && e.contains("0 to 255"),
                "{e}"
            );
        }
    }

    #[test]
    fn negative_zero_is_zero() {
        let p = parse("demo:t=-0").unwrap();
        let t = p.f64("t").unwrap();
        assert!(t == 0.0 && t.is_sign_positive(), "{t}");
        let p = parse("demo:m=[-0,0,0,0,-0.0,0]").unwrap();
        assert!(p.list("m").unwrap().iter().all(|v| v.is_sign_positive()));
    }

    #[test]
    fn a_bad_list_item_is_named_with_the_whole_list() {
        let e = parse("demo:m=[1,x,0,0,1,0]").unwrap_err().to_string();
        assert!(e.contains("`m=[1,x,0,0,1,0]`"), "{e}");
        assert!(e.contains("item 2 (`x`)") && e.contains("6 or 9"), "{e}");
        let e = parse("demo:m=[1,0,0,0,1,nan]").unwrap_err().to_string();
        assert!(e.contains("item 6 (`nan`)"), "{e}");
    }

    #[test]
    fn a_long_value_is_shortened_in_the_message() {
        let long = "9".repeat(100_000);
        for text in [
            format!("demo:sigma={long}"),
            format!("demo:t={long}x"),
            format!("demo:m=[{long}]"),
            format!("demo:{long}=1"),
            format!("demo:{long}"),
        ] {
            let e = split_op(&text)
                .and_then(|(_, pairs)| Params::from_pairs(&SPEC, &pairs))
                .unwrap_err()
                .to_string();
            let start: String = e.chars().take(400).collect();
            assert!(e.len() < 400, "{} bytes: {start}", e.len());
            assert!(e.contains(" characters)"), "{e}");
            assert!(e.contains(&"9".repeat(60)), "{e}");
        }
    }

    #[test]
    fn malformed_text_is_a_syntax_error() {
        assert!(split_op("demo:sigma").is_err());
        assert!(split_op("demo:m=[1,2").is_err());
        assert!(split_op(":a=1").is_err());
        assert!(split_op("demo:m=1]").is_err());
    }
}
