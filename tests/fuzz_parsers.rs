//! Fuzzing the parsers: random text, and text built from the operations'
//! own specs with hostile values (huge numbers, NaN, brackets, unicode,
//! very long strings), thrown at the op grammar, `--size`, `--fps` and
//! pipeline files. Nothing may panic; every error must name what it is
//! about (the value, shortened, or the file and line) in a message of
//! bounded length; accepted operations must give sane output sizes and run
//! on small frames.
//!
//! Each property runs PROPTEST_CASES cases (256 by default: seconds on two
//! cores). The long run, for after a change to a parser:
//!
//!     PROPTEST_CASES=1000000 cargo test --release --test fuzz_parsers

use std::path::Path;

use proptest::prelude::*;
use seamstream::Error;
use seamstream::args::{parse_fps, parse_size};
use seamstream::frame::Frame;
use seamstream::ops::params::{Kind, split_op};
use seamstream::pipeline::{FileError, PipelineFile};
use seamstream::registry::REGISTRY;

/// No message may be longer than this, however long the input.
const MAX_MESSAGE_CHARS: usize = 1000;

/// How many characters of a value a message shows (the library's limit).
const SHOWN: usize = 60;

/// Checks that `message` shows `value`: whole when short, otherwise its
/// first characters and its length.
fn assert_names(message: &str, value: &str) {
    let count = value.chars().count();
    let start: String = value.chars().take(SHOWN).collect();
    assert!(
        message.contains(&start),
        "message lacks `{start}`: {message}"
    );
    if count > SHOWN {
        assert!(
            message.contains(&format!("({count} characters)")),
            "message lacks the length {count}: {message}"
        );
    }
}

fn assert_bounded(message: &str) {
    let n = message.chars().count();
    assert!(
        n <= MAX_MESSAGE_CHARS,
        "{n} characters: {}",
        message.chars().take(300).collect::<String>()
    );
    assert!(!message.trim().is_empty(), "an empty message");
}

// ---- values ----

/// Numbers as a user might write them, and some no user should.
fn number() -> impl Strategy<Value = String> {
    prop_oneof![
        (-300i64..300).prop_map(|v| v.to_string()),
        any::<i64>().prop_map(|v| v.to_string()),
        any::<u64>().prop_map(|v| v.to_string()),
        any::<f64>().prop_map(|v| v.to_string()),
        (-1000.0f64..1000.0).prop_map(|v| format!("{v:.3}")),
        prop::sample::select(vec![
            "0",
            "-0",
            "-0.0",
            "+1",
            "1e30",
            "1e308",
            "1e309",
            "-1e308",
            "NaN",
            "nan",
            "inf",
            "-inf",
            "infinity",
            "1e-320",
            "0x10",
            "1_000",
            ".5",
            "5.",
            "",
            " ",
            "1 2",
            "٣",
            "１２",
            "18446744073709551616",
            "9223372036854775808",
            "-9223372036854775809",
        ])
        .prop_map(String::from),
        (1usize..400).prop_map(|n| "9".repeat(n)),
    ]
}

/// Text no parser expects: unicode, syntax characters, long runs.
fn junk() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => "\\PC{0,12}",
        2 => "[\\[\\]=,:%x/.0-9 -]{0,16}",
        1 => any::<Vec<u8>>().prop_map(|b| String::from_utf8_lossy(&b).into_owned()),
        1 => (any::<char>(), 61usize..3000).prop_map(|(c, n)| c.to_string().repeat(n)),
        1 => (0usize..3).prop_map(|k| "a".repeat([100_000, 61, 60][k])),
    ]
}

/// A list in brackets: about the right length, of numbers or junk.
fn list(lens: &'static [usize], max_len: usize) -> BoxedStrategy<String> {
    let wanted: Vec<usize> = if lens.is_empty() {
        vec![0, 1, 3, max_len, max_len + 1]
    } else {
        lens.iter()
            .flat_map(|&l| [l.saturating_sub(1), l, l + 1])
            .collect()
    };
    (
        prop::sample::select(wanted),
        prop::collection::vec(prop_oneof![8 => number(), 1 => junk()], 0..70),
        prop::sample::select(vec![
            ("[", "]"),
            ("[", ""),
            ("", "]"),
            ("[[", "]]"),
            ("[", "]]"),
        ]),
    )
        .prop_map(|(len, mut items, (open, close))| {
            items.resize(len, "1".into());
            format!("{open}{}{close}", items.join(","))
        })
        .boxed()
}

/// A value for a parameter of `kind`: mostly the kind's own shapes, with
/// edges and junk mixed in.
fn value_for(kind: Kind) -> BoxedStrategy<String> {
    let own: BoxedStrategy<String> = match kind {
        Kind::Float { min, max } => prop_oneof![
            (min..=max).prop_map(|v| v.to_string()),
            prop::sample::select(vec![min, max, min - 1e-9, max * 1.0001 + 1.0])
                .prop_map(|v| v.to_string()),
        ]
        .boxed(),
        Kind::Int { min, max } => ((min - 2)..=(max + 2)).prop_map(|v| v.to_string()).boxed(),
        Kind::Choice(words) => prop::sample::select(words.to_vec())
            .prop_map(String::from)
            .boxed(),
        Kind::IntOrChoice { min, max, choices } => prop_oneof![
            ((min - 2)..=(max + 2)).prop_map(|v| v.to_string()),
            prop::sample::select(choices.to_vec()).prop_map(String::from),
        ]
        .boxed(),
        Kind::List { lens, max_len } => list(lens, max_len),
        Kind::Size {
            max_pixels,
            max_percent,
        } => prop_oneof![
            (0..=max_pixels.saturating_add(2)).prop_map(|v| v.to_string()),
            (0.0..=max_percent + 1.0).prop_map(|v| format!("{v}%")),
            number().prop_map(|v| format!("{v}%")),
        ]
        .boxed(),
        Kind::Dims => (
            0usize..40000,
            0usize..40000,
            prop::sample::select(vec!["x", "X", "*"]),
        )
            .prop_map(|(w, h, x)| format!("{w}{x}{h}"))
            .boxed(),
        // Paths that name nothing readable as an image (and never a device).
        Kind::Path => "[a-z]{0,8}(\\.png)?".boxed(),
        Kind::Bool => prop::sample::select(vec!["true", "false", "yes", "0", "1", "TRUE"])
            .prop_map(String::from)
            .boxed(),
        Kind::ChoiceOrColour(choices) => prop_oneof![
            prop::sample::select(choices.to_vec()).prop_map(String::from),
            "#[0-9a-fA-F]{6}",
            "#[0-9a-z]{0,8}",
        ]
        .boxed(),
        Kind::Ratio { max } => prop_oneof![
            (0u32..40, 0u32..40).prop_map(|(w, h)| format!("{w}:{h}")),
            (0.0..=max + 1.0).prop_map(|v| v.to_string()),
            prop::sample::select(vec!["9:", ":16", "9:16:1", "-9:16", "9:16%"])
                .prop_map(String::from),
        ]
        .boxed(),
    };
    prop_oneof![6 => own, 2 => number(), 1 => junk()].boxed()
}

/// `name:key=value,...` from the registry, or now and then a mangled one.
fn op_text() -> impl Strategy<Value = String> {
    (0..REGISTRY.len())
        .prop_flat_map(|i| {
            let spec = REGISTRY[i].spec;
            let pair = prop_oneof![
                8 => (0..spec.params.len().max(1)).prop_flat_map(move |p| {
                    match spec.params.get(p) {
                        Some(param) => value_for(param.kind)
                            .prop_map(move |v| format!("{}={v}", param.name))
                            .boxed(),
                        None => junk().prop_map(|v| format!("k={v}")).boxed(),
                    }
                }),
                1 => (junk(), junk()).prop_map(|(k, v)| format!("{k}={v}")),
                1 => junk(),
            ];
            (
                prop_oneof![9 => Just(spec.name.to_string()), 1 => junk()],
                prop::collection::vec(pair, 0..5),
                prop::sample::select(vec![",", ", ", ",,"]),
            )
        })
        .prop_map(|(name, pairs, sep)| {
            if pairs.is_empty() {
                name
            } else {
                format!("{name}:{}", pairs.join(sep))
            }
        })
}

/// A small frame of random pixels, RGBA or gray.
fn frame() -> impl Strategy<Value = Frame> {
    (
        prop::sample::select(vec![(1usize, 1usize), (2, 3), (7, 5), (17, 3), (4, 16)]),
        any::<bool>(),
        any::<u64>(),
    )
        .prop_map(|((w, h), gray, seed)| seamstream::noise::Noise::new(seed).frame(w, h, gray))
}

/// The numbers in a value (`[1,2.5]`, `75%`, `640`).
fn numbers(text: &str) -> Vec<f64> {
    text.split(['[', ']', ',', '%', ' ', '\t'])
        .filter_map(|t| t.parse().ok())
        .collect()
}

/// Checks that `value`, which an error says `key` was given, is what the
/// user wrote for `key` in `text`: the same text, or the same numbers
/// written another way (`[1,0]` for `[1.0, 0]`), never a number the user
/// did not write (`18446744073709551615` for `1e30`).
fn assert_user_value(text: &str, key: &str, value: &str) {
    let Ok((_, pairs)) = split_op(text) else {
        panic!("{text:?}: a value error for text that does not split");
    };
    let raws: Vec<&str> = pairs
        .iter()
        .filter(|(k, _)| k == key)
        .map(|(_, v)| v.trim())
        .collect();
    if raws.contains(&value) {
        return;
    }
    let written: Vec<f64> = raws.iter().flat_map(|r| numbers(r)).collect();
    let echoed = numbers(value);
    assert!(
        !echoed.is_empty() && echoed.iter().all(|n| written.contains(n)),
        "{text:?}: `{key}={value}` is not what was written ({raws:?})"
    );
}

/// What an op error is about, as the error says it.
fn check_op_error(e: &Error, text: &str) {
    let message = e.to_string();
    assert_bounded(&message);
    match e {
        Error::UnknownOp { name, .. } => assert_names(&message, name),
        Error::UnknownKey { op, key, .. } => {
            assert!(message.starts_with(op.as_str()), "{message}");
            assert_names(&message, key);
            let Ok((_, pairs)) = split_op(text) else {
                panic!("{text:?}: an unknown key in text that does not split");
            };
            assert!(pairs.iter().any(|(k, _)| k == key), "{text:?}: {message}");
        }
        Error::BadValue { op, key, value, .. } => {
            assert!(message.starts_with(&format!("{op}: `{key}=")), "{message}");
            assert_names(&message, value);
            assert_user_value(text, key, value);
        }
        Error::MissingKey { op, key, .. } => {
            assert!(message.contains(op.as_str()) && message.contains(key.as_str()));
        }
        Error::BadSyntax { text: t, .. } => {
            assert_eq!(t, text);
            assert_names(&message, text);
        }
        Error::OpFailed { op, .. } => assert!(message.starts_with(op.as_str()), "{message}"),
        other => panic!("{text:?}: an unexpected kind of error: {other}"),
    }
}

proptest! {
    #![proptest_config(ProptestConfig {
        // PROPTEST_CASES, else 256; failures are shrunk, not saved.
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn split_op_never_panics_and_keys_are_clean(text in prop_oneof![op_text(), junk()]) {
        match split_op(&text) {
            Ok((name, pairs)) => {
                prop_assert!(!name.is_empty() && name == name.trim());
                for (k, _) in &pairs {
                    prop_assert!(!k.is_empty() && !k.contains('='), "{k:?}");
                }
            }
            Err(e) => check_op_error(&e, &text),
        }
    }

    #[test]
    fn ops_parse_or_name_the_value_and_run_on_small_frames(
        text in prop_oneof![9 => op_text(), 1 => junk()],
        input in frame(),
    ) {
        let mut chain = match seamstream::registry::parse_chain(&[&text]) {
            Ok(chain) => chain,
            Err(e) => {
                check_op_error(&e, &text);
                return Ok(());
            }
        };
        let op = &chain.ops()[0];
        for (w, h) in [(1, 1), (7, 5), (640, 360), (32768, 32768)] {
            match op.output_size(w, h) {
                Ok((ow, oh)) => {
                    prop_assert!(ow >= 1 && oh >= 1, "{text}: {w}x{h} -> {ow}x{oh}");
                    let (max_w, max_h) = match op.name() {
                        "retarget" => (2 * w, 2 * h),
                        // A side up to 2× the input's, the other from the
                        // aspect, up to 4× (padding widens a frame).
                        "reframe" => (4 * w, 4 * h),
                        "warp" => (32768, 32768),
                        _ => (w + 1, h + 1),
                    };
                    prop_assert!(ow <= max_w && oh <= max_h, "{text}: {w}x{h} -> {ow}x{oh}");
                }
                Err(e) => {
                    prop_assert!(e.to_string().starts_with(op.name()), "{e}");
                    check_op_error(&e, &text);
                }
            }
        }
        let (w, h) = (input.width(), input.height());
        if let Ok((ow, oh)) = chain.output_size(w, h)
            && ow * oh <= 1 << 16
        {
            match chain.apply(input) {
                Ok(out) => prop_assert_eq!((out.width(), out.height()), (ow, oh), "{}", text),
                Err(e) => assert_bounded(&e.to_string()),
            }
        }
    }

    #[test]
    fn sizes_are_in_range_or_named(
        text in prop_oneof![
            (number(), prop::sample::select(vec!["x", "X", " x ", "*", ""]), number())
                .prop_map(|(w, x, h)| format!("{w}{x}{h}")),
            junk(),
        ]
    ) {
        match parse_size(&text) {
            Ok((w, h)) => {
                prop_assert!((1..=16384).contains(&w) && (1..=16384).contains(&h));
                let (tw, th) = text.split_once(['x', 'X']).unwrap();
                prop_assert_eq!(tw.trim().parse::<usize>().ok(), Some(w));
                prop_assert_eq!(th.trim().parse::<usize>().ok(), Some(h));
            }
            Err(e) => {
                let message = e.to_string();
                assert_bounded(&message);
                prop_assert!(message.starts_with("`--size "), "{message}");
                assert_names(&message, &text);
                prop_assert!(message.contains("1920x1080"), "{message}");
            }
        }
    }

    #[test]
    fn decimal_rates_are_exact_or_ntsc(int in 0u64..1200, decimals in "[0-9]{0,7}") {
        let text = if decimals.is_empty() { int.to_string() } else { format!("{int}.{decimals}") };
        // The value as an exact fraction, worked out here.
        let den = 10i128.pow(decimals.len() as u32);
        let num = int as i128 * den + decimals.parse::<i128>().unwrap_or(0);
        let in_range = num >= den && num <= 1000 * den;
        match parse_fps(&text) {
            Ok((n, d)) => {
                prop_assert!(in_range, "{text} -> {n}/{d}");
                let (n, d) = (n as i128, d as i128);
                prop_assert!(d > 0 && gcd(n, d) == 1, "{text} -> {n}/{d}");
                let exact = n * den == num * d;
                let ntsc = d == 1001 && n % 1000 == 0 && (n * den - num * d).abs() * 100 < d * den;
                prop_assert!(exact || ntsc, "{text} -> {n}/{d}");
            }
            Err(e) => {
                let message = e.to_string();
                // Out of range, or too precise for 32-bit numbers.
                prop_assert!(!in_range || message.contains("needs numbers above"), "{message}");
                assert_names(&message, &text);
            }
        }
    }

    #[test]
    fn fraction_rates_are_reduced_and_in_range(a in 0u64..3_000_000_000, b in 0u64..3_000_000) {
        let text = format!("{a}/{b}");
        let (a, b) = (a as i128, b as i128);
        match parse_fps(&text) {
            Ok((n, d)) => {
                prop_assert!(b > 0 && a >= b && a <= 1000 * b, "{text}");
                let (n, d) = (n as i128, d as i128);
                prop_assert!(n * b == a * d && gcd(n, d) == 1, "{text} -> {n}/{d}");
            }
            Err(e) => {
                let g = gcd(a, b).max(1);
                let fits = a / g <= i32::MAX as i128 && b / g <= i32::MAX as i128;
                prop_assert!(b == 0 || a < b || a > 1000 * b || !fits, "{text}: {e}");
                assert_names(&e.to_string(), &text);
            }
        }
    }

    #[test]
    fn any_rate_text_is_in_range_or_named(text in prop_oneof![number(), junk()]) {
        match parse_fps(&text) {
            Ok((n, d)) => prop_assert!(d > 0 && n >= d && n as i64 <= 1000 * d as i64),
            Err(e) => {
                let message = e.to_string();
                assert_bounded(&message);
                prop_assert!(message.starts_with("`--fps "), "{message}");
                assert_names(&message, &text);
                prop_assert!(message.contains("30000/1001"), "{message}");
            }
        }
    }

    #[test]
    fn pipeline_files_parse_or_name_the_file_and_line(text in pipeline_text()) {
        let path = Path::new("fuzz/p.toml");
        match PipelineFile::parse(path, &text) {
            Ok(file) => {
                if let Some(fps) = file.fps {
                    prop_assert!(fps.1 > 0 && fps.0 >= fps.1 && fps.0 as i64 <= 1000 * fps.1 as i64);
                }
                if let Some((w, h)) = file.size {
                    prop_assert!((1..=16384).contains(&w) && (1..=16384).contains(&h));
                }
                prop_assert_eq!(file.ops.len(), file.chain.len());
            }
            Err(e) => {
                let message = e.to_string();
                assert_bounded(&message);
                prop_assert!(message.starts_with("fuzz/p.toml:"), "{message}");
                if let FileError::At { line, .. } = e {
                    prop_assert!(line >= 1 && line <= text.lines().count() + 1, "line {line}: {message}");
                }
            }
        }
    }
}

fn gcd(mut a: i128, mut b: i128) -> i128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a.abs()
}

// ---- pipeline files ----

/// `text` as a TOML basic string.
fn toml_string(text: &str) -> String {
    let mut out = String::from("\"");
    for c in text.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if c.is_control() => out.push_str(&format!("\\u{:04X}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

/// A TOML value: the scalars, arrays (nested), inline tables, and the
/// chain syntax's own values as strings.
fn toml_value() -> impl Strategy<Value = String> {
    let scalar = prop_oneof![
        // As they are (some are no TOML number: a syntax error to report)
        // or in quotes.
        number(),
        number().prop_map(|n| toml_string(&n)),
        any::<i64>().prop_map(|v| v.to_string()),
        prop::sample::select(vec![
            "nan",
            "inf",
            "-inf",
            "1e400",
            "0x1F",
            "1_000",
            "2.5e1",
            "true",
            "false",
            "1979-05-27",
            "30000"
        ])
        .prop_map(String::from),
        junk().prop_map(|s| toml_string(&s)),
        prop::sample::select(vec![
            "75%",
            "640x480",
            "30000/1001",
            "29.97",
            "otsu",
            "test:ball",
            "null",
            "cuda:0",
            "h264"
        ])
        .prop_map(toml_string),
    ];
    scalar.prop_recursive(2, 16, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..7).prop_map(|v| format!("[{}]", v.join(", "))),
            prop::collection::vec(("[a-z]{1,6}", inner), 0..3).prop_map(|kv| {
                let pairs: Vec<String> =
                    kv.into_iter().map(|(k, v)| format!("{k} = {v}")).collect();
                format!("{{ {} }}", pairs.join(", "))
            }),
        ]
    })
}

/// A chain-syntax value as TOML: numbers as numbers where TOML reads them
/// so, lists of numbers as arrays, the rest as strings.
fn as_toml(value: &str) -> String {
    let toml_number = |t: &str| {
        let t = t.trim();
        !t.is_empty()
            && t.parse::<f64>().is_ok_and(f64::is_finite)
            && t.bytes().all(|b| b.is_ascii_digit() || b"-.e".contains(&b))
            && !t.starts_with(['.', 'e'])
            && !t.ends_with(['.', 'e', '-'])
            && !t.contains(".e")
    };
    if toml_number(value) {
        return value.trim().to_string();
    }
    if let Some(inner) = value.strip_prefix('[').and_then(|v| v.strip_suffix(']'))
        && inner.split(',').all(toml_number)
    {
        return value.to_string();
    }
    toml_string(value)
}

/// `key = value` lines for some of `keys` (each at most once), each value
/// from `value(key)`, now and then any key or any value.
fn toml_lines(
    keys: Vec<&'static str>,
    value: fn(&'static str) -> BoxedStrategy<String>,
) -> impl Strategy<Value = Vec<String>> {
    let n = keys.len();
    prop::sample::subsequence(keys, 0..=n)
        .prop_flat_map(move |chosen| {
            chosen
                .into_iter()
                .map(|k| {
                    prop_oneof![
                        12 => value(k).prop_map(move |v| format!("{k} = {v}")),
                        1 => toml_value().prop_map(move |v| format!("{k} = {v}")),
                        1 => ("[a-z]{1,8}", toml_value()).prop_map(|(k, v)| format!("{k} = {v}")),
                        1 => (junk(), toml_value())
                            .prop_map(|(k, v)| format!("{} = {v}", toml_string(&k))),
                    ]
                })
                .collect::<Vec<_>>()
        })
        .prop_shuffle()
}

/// A value of the right type for a top-level or [input] key, mostly.
fn setting_value(key: &'static str) -> BoxedStrategy<String> {
    let strings = |examples: Vec<&'static str>| {
        prop_oneof![
            8 => prop::sample::select(examples).prop_map(toml_string),
            1 => junk().prop_map(|s| toml_string(&s)),
        ]
        .boxed()
    };
    match key {
        "output" => strings(vec!["out.mp4", "null", "display", "x.avi", ""]),
        "device" => strings(vec!["auto", "cpu", "cuda", "cuda:1", "auto", "gpu"]),
        "codec" | "preset" | "source" | "fallback" => {
            strings(vec!["h264", "veryfast", "test:ball", "sample"])
        }
        "crf" | "bitrate" | "frames" => {
            prop_oneof![(-5i64..5_000_000_000).prop_map(|v| v.to_string()), number(),].boxed()
        }
        "audio" | "live" => prop_oneof![
            4 => Just("true".to_string()),
            4 => Just("false".to_string()),
            1 => Just("\"no\"".to_string()),
            1 => Just("1".to_string()),
        ]
        .boxed(),
        "size" => (number(), prop::sample::select(vec!["x", "X", ""]), number())
            .prop_map(|(w, x, h)| toml_string(&format!("{w}{x}{h}")))
            .boxed(),
        "fps" => prop_oneof![
            number(),
            number().prop_map(|n| toml_string(&n)),
            (0u64..100_000, 0u64..2000).prop_map(|(a, b)| toml_string(&format!("{a}/{b}"))),
        ]
        .boxed(),
        _ => toml_value().boxed(),
    }
}

/// An [[op]] table: a registry name (mostly) and some of its parameters,
/// with values from [`value_for`] written as TOML.
fn op_table() -> impl Strategy<Value = String> {
    (0..REGISTRY.len()).prop_flat_map(|i| {
        let spec = REGISTRY[i].spec;
        let params: Vec<usize> = (0..spec.params.len()).collect();
        let n = params.len();
        (
            prop_oneof![
                8 => Just(toml_string(spec.name)),
                1 => toml_value(),
            ],
            prop::sample::subsequence(params, 0..=n).prop_flat_map(move |chosen| {
                chosen
                    .into_iter()
                    .map(|p| {
                        let param = &spec.params[p];
                        prop_oneof![
                            8 => value_for(param.kind)
                                .prop_map(move |v| format!("{} = {}", param.name, as_toml(&v))),
                            1 => toml_value().prop_map(move |v| format!("{} = {v}", param.name)),
                            1 => (
                                prop::sample::select(vec!["output", "crf", "fps", "sigmaa", "\"a=b\""]),
                                toml_value(),
                            )
                                .prop_map(|(k, v)| format!("{k} = {v}")),
                        ]
                    })
                    .collect::<Vec<_>>()
            }),
        )
            .prop_map(|(name, lines)| format!("[[op]]\nname = {name}\n{}", lines.join("\n")))
    })
}

/// A pipeline file: top-level settings, perhaps [input], [[op]] tables,
/// comments and blank lines; or any text.
fn pipeline_text() -> impl Strategy<Value = String> {
    let top = vec![
        "output", "device", "codec", "crf", "bitrate", "preset", "audio",
    ];
    let input = vec!["source", "fallback", "size", "fps", "frames", "live"];
    let structured = (
        toml_lines(top, setting_value),
        prop::option::of(toml_lines(input, setting_value)),
        prop::collection::vec(op_table(), 0..4),
        prop::sample::select(vec!["", "# a comment\n", "\n\n   \n"]),
    )
        .prop_map(|(top, input, ops, filler)| {
            let mut text = format!("{filler}{}\n", top.join("\n"));
            if let Some(lines) = input {
                text.push_str(&format!("[input]\n{}\n", lines.join("\n")));
            }
            for op in ops {
                text.push_str(&op);
                text.push('\n');
            }
            text
        });
    prop_oneof![
        16 => structured,
        1 => junk(),
        1 => Just(String::new()),
        1 => "(#[^\n]*\n|[ \t]*\n){0,4}",
    ]
}
