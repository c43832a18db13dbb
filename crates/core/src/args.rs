//! Values the command line and pipeline files share: a frame size
//! (`1280x720`) and a frame rate (`30`, `29.97`, `30000/1001`).
//!
//! Text goes in, checked numbers come out; an error is an
//! [`Error::BadArgument`] naming the flag and the value as written, with
//! examples of what works.

use crate::error::{Error, Result};

/// The largest side `--size` takes, in pixels.
pub const MAX_SIZE_SIDE: usize = 16384;

/// The highest frame rate, in frames a second (the lowest is 1).
pub const MAX_FPS: i64 = 1000;

/// Rates written as decimals that stand for the NTSC family, N×1000/1001.
const NTSC_RATES: &[(u128, u128, i32)] = &[
    // (numerator, denominator of the decimal as written, N)
    (23976, 1000, 24),
    (2997, 100, 30),
    (47952, 1000, 48),
    (5994, 100, 60),
    (11988, 100, 120),
];

/// `WIDTHxHEIGHT` in pixels, each side from 1 to [`MAX_SIZE_SIDE`]: the
/// size of test sources and the sample clip (`--size`).
pub fn parse_size(text: &str) -> Result<(usize, usize)> {
    let bad = || Error::BadArgument {
        flag: "--size",
        value: text.into(),
        reason: format!(
            "expected WIDTHxHEIGHT in pixels, each from 1 to {MAX_SIZE_SIDE}, e.g. 1920x1080"
        ),
    };
    let (w, h) = text.split_once(['x', 'X']).ok_or_else(bad)?;
    let (w, h): (usize, usize) = (
        w.trim().parse().map_err(|_| bad())?,
        h.trim().parse().map_err(|_| bad())?,
    );
    if !(1..=MAX_SIZE_SIDE).contains(&w) || !(1..=MAX_SIZE_SIDE).contains(&h) {
        return Err(bad());
    }
    Ok((w, h))
}

/// A frame rate as (numerator, denominator), from 1 to [`MAX_FPS`] frames a
/// second (`--fps`). It takes a whole number (`30` → 30/1), a decimal
/// (`12.5` → 25/2, exactly, reduced; `23.976`, `29.97`, `47.952`, `59.94`
/// and `119.88` are the NTSC rates 24000/1001 … 120000/1001, as in video
/// tools) or a fraction (`30000/1001`, `25/1`; reduced).
pub fn parse_fps(text: &str) -> Result<(i32, i32)> {
    let bad = |reason: &str| Error::BadArgument {
        flag: "--fps",
        value: text.into(),
        reason: format!(
            "{reason}; write frames a second from 1 to {MAX_FPS} as a number or a fraction, e.g. 30, 29.97, 12.5 or 30000/1001"
        ),
    };
    let trimmed = text.trim();
    let (num, den) = match trimmed.split_once('/') {
        Some((n, d)) => {
            let n = whole(n.trim()).map_err(|why| bad(&format!("the numerator {why}")))?;
            let d = whole(d.trim()).map_err(|why| bad(&format!("the denominator {why}")))?;
            if d == 0 {
                return Err(bad("the denominator must be greater than 0"));
            }
            (n, d)
        }
        None => {
            if let Some(positive) = trimmed.strip_prefix('-')
                && decimal(positive).is_ok()
            {
                return Err(bad("out of range"));
            }
            let (n, d) = decimal(trimmed).map_err(bad)?;
            match NTSC_RATES.iter().find(|&&(a, b, _)| a * d == n * b) {
                Some(&(_, _, rate)) => return Ok((rate * 1000, 1001)),
                None => (n, d),
            }
        }
    };
    // Compared as fractions, without rounding: num/den in 1..=MAX_FPS.
    // Both are below 10^30, so 1000 × den cannot overflow.
    if num < den || num > MAX_FPS as u128 * den {
        return Err(bad("out of range"));
    }
    let g = gcd(num, den);
    let (num, den) = (num / g, den / g);
    match (i32::try_from(num), i32::try_from(den)) {
        (Ok(n), Ok(d)) => Ok((n, d)),
        _ => Err(bad(&format!(
            "{num}/{den} needs numbers above {} (too precise)",
            i32::MAX
        ))),
    }
}

/// Significant digits a whole number may have: far more than any rate
/// needs, few enough that sums and products stay inside u128.
const MAX_DIGITS: usize = 30;

/// Digits only (no sign) as a number, or why not, to follow "the numerator".
fn whole(text: &str) -> std::result::Result<u128, &'static str> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return Err("is not a whole number");
    }
    // Leading zeros change nothing, however many there are.
    let digits = text.trim_start_matches('0');
    if digits.len() > MAX_DIGITS {
        return Err("is too large");
    }
    Ok(value_of(digits))
}

/// `DIGITS[.DIGITS]` as an exact fraction (numerator, power of ten), or
/// why it is not a rate.
fn decimal(text: &str) -> std::result::Result<(u128, u128), &'static str> {
    let (int, frac) = text.split_once('.').unwrap_or((text, ""));
    let digits_only = |t: &str| t.bytes().all(|b| b.is_ascii_digit());
    if (int.is_empty() && frac.is_empty()) || !digits_only(int) || !digits_only(frac) {
        return Err("not a frame rate");
    }
    // Leading zeros of the whole part and trailing ones of the decimals
    // change nothing, however many there are.
    let int = int.trim_start_matches('0');
    let frac = frac.trim_end_matches('0');
    // Five digits or more are 10000 or more.
    if int.len() > 4 {
        return Err("out of range");
    }
    if frac.len() > 18 {
        return Err("too precise (more than 18 decimals)");
    }
    let den = 10u128.pow(frac.len() as u32);
    Ok((value_of(int) * den + value_of(frac), den))
}

/// The number ASCII digits write; at most [`MAX_DIGITS`] of them.
fn value_of(digits: &str) -> u128 {
    digits.bytes().fold(0, |n, b| n * 10 + u128::from(b - b'0'))
}

pub(crate) fn gcd(mut a: u128, mut b: u128) -> u128 {
    while b != 0 {
        (a, b) = (b, a % b);
    }
    a
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse_and_bad_ones_name_the_value() {
        assert_eq!(parse_size("1920x1080").unwrap(), (1920, 1080));
        assert_eq!(parse_size(" 64 X 48 ").unwrap(), (64, 48));
        assert_eq!(parse_size("16384x1").unwrap(), (16384, 1));
        for bad in ["0x10", "16385x10", "640", "axb", "1e3x10", "-5x5", ""] {
            let e = parse_size(bad).unwrap_err().to_string();
            assert_eq!(
                e,
                format!(
                    "`--size {bad}`: expected WIDTHxHEIGHT in pixels, each from 1 to 16384, e.g. 1920x1080"
                )
            );
        }
    }

    #[test]
    fn whole_and_decimal_rates_are_exact_fractions() {
        assert_eq!(parse_fps("30").unwrap(), (30, 1));
        assert_eq!(parse_fps(" 25 ").unwrap(), (25, 1));
        assert_eq!(parse_fps("12.5").unwrap(), (25, 2));
        assert_eq!(parse_fps("1").unwrap(), (1, 1));
        assert_eq!(parse_fps("1000").unwrap(), (1000, 1));
        assert_eq!(parse_fps("1000.000").unwrap(), (1000, 1));
        assert_eq!(parse_fps("7.25").unwrap(), (29, 4));
        assert_eq!(parse_fps("0030").unwrap(), (30, 1));
        assert_eq!(parse_fps("24.").unwrap(), (24, 1));
        assert_eq!(parse_fps("999.999").unwrap(), (999_999, 1000));
    }

    #[test]
    fn ntsc_decimals_are_the_1001_rates() {
        assert_eq!(parse_fps("29.97").unwrap(), (30000, 1001));
        assert_eq!(parse_fps("29.970").unwrap(), (30000, 1001));
        assert_eq!(parse_fps("23.976").unwrap(), (24000, 1001));
        assert_eq!(parse_fps("59.94").unwrap(), (60000, 1001));
        assert_eq!(parse_fps("47.952").unwrap(), (48000, 1001));
        assert_eq!(parse_fps("119.88").unwrap(), (120000, 1001));
        // Not quite one of them: taken as written.
        assert_eq!(parse_fps("29.98").unwrap(), (1499, 50));
    }

    #[test]
    fn fractions_are_reduced() {
        assert_eq!(parse_fps("30000/1001").unwrap(), (30000, 1001));
        assert_eq!(parse_fps("25/1").unwrap(), (25, 1));
        assert_eq!(parse_fps("60/2").unwrap(), (30, 1));
        assert_eq!(parse_fps(" 24000 / 1001 ").unwrap(), (24000, 1001));
        assert_eq!(parse_fps("1000/1").unwrap(), (1000, 1));
        assert_eq!(parse_fps("2/2").unwrap(), (1, 1));
    }

    #[test]
    fn bad_rates_name_the_value_and_give_examples() {
        for (bad, why) in [
            ("0", "out of range"),
            ("1001", "out of range"),
            ("0.5", "out of range"),
            ("1000.001", "out of range"),
            ("1/2", "out of range"),
            ("30/0", "denominator must be greater than 0"),
            ("-30", "out of range"),
            ("-", "not a frame rate"),
            ("30/-1", "denominator is not a whole number"),
            (
                "1/99999999999999999999999999999999999",
                "denominator is too large",
            ),
            ("1e3/1", "numerator is not a whole number"),
            ("29.97/1", "numerator is not a whole number"),
            ("abc", "not a frame rate"),
            ("NaN", "not a frame rate"),
            ("inf", "not a frame rate"),
            ("1e30", "not a frame rate"),
            ("", "not a frame rate"),
            (".", "not a frame rate"),
            ("30 fps", "not a frame rate"),
            ("99999999999999999999999999999999999", "out of range"),
            ("1000000.5", "out of range"),
            (
                "3000000001/100000000",
                "3000000001/100000000 needs numbers above 2147483647",
            ),
            ("29.970000001", "needs numbers above 2147483647"),
            ("29.9700000000000000001", "more than 18 decimals"),
        ] {
            let e = parse_fps(bad).unwrap_err().to_string();
            assert!(e.starts_with(&format!("`--fps {bad}`: ")), "{e}");
            assert!(e.contains(why), "{bad}: {e}");
            assert!(e.contains("e.g. 30, 29.97, 12.5 or 30000/1001"), "{e}");
        }
    }

    #[test]
    fn a_long_rate_is_shortened_in_the_message() {
        let long = "3".repeat(100_000);
        let e = parse_fps(&long).unwrap_err().to_string();
        assert!(e.contains("(100000 characters)") && e.len() < 300, "{e}");
        let e = parse_size(&long).unwrap_err().to_string();
        assert!(e.contains("(100000 characters)") && e.len() < 300, "{e}");
    }
}
