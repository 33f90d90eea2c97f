//! Go's `time.ParseDuration` (src/time/format.go), the reading of every duration of a KubeVirt CR
//! (a `metav1.Duration` such as `batchEvictionInterval: 1m0s`): shared by the policy (K3), the
//! cluster model and the plugin. Integer arithmetic only, so the module stays small.
//!
//! One difference: Go adds a unit's fraction through a float64 (`0.3333333333333333333h` is 20m in
//! Go), here it is exact and truncated (1199999999999ns); they can differ by a nanosecond only for a
//! fraction of some 13 digits or more.

use std::fmt;

/// Nanoseconds, as Go's `Duration`; `LIMIT` is 1<<63, the magnitude of the most negative one.
const LIMIT: u64 = 1 << 63;

/// Why a text is not a Go duration; shown as Go's error (`time: invalid duration "1"`), the text
/// quoted as Go's `quote` does.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError<'a> {
    /// `time: invalid duration "TEXT"`: no number, a sign or a character out of place, overflow.
    Invalid(&'a str),
    /// `time: missing unit in duration "TEXT"`.
    MissingUnit(&'a str),
    /// `time: unknown unit "UNIT" in duration "TEXT"`.
    UnknownUnit { unit: &'a str, text: &'a str },
}

impl fmt::Display for DurationError<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            DurationError::Invalid(text) => {
                f.write_str("time: invalid duration ")?;
                quote(text, f)
            }
            DurationError::MissingUnit(text) => {
                f.write_str("time: missing unit in duration ")?;
                quote(text, f)
            }
            DurationError::UnknownUnit { unit, text } => {
                f.write_str("time: unknown unit ")?;
                quote(unit, f)?;
                f.write_str(" in duration ")?;
                quote(text, f)
            }
        }
    }
}

impl std::error::Error for DurationError<'_> {}

/// Go's `quote` (src/time/format.go): in double quotes, `"` and `\` escaped, every byte of a
/// control or non-ASCII character as `\xHH`.
fn quote(text: &str, f: &mut fmt::Formatter<'_>) -> fmt::Result {
    f.write_str("\"")?;
    for byte in text.bytes() {
        match byte {
            b'"' | b'\\' => write!(f, "\\{}", byte as char)?,
            0x20..0x80 => write!(f, "{}", byte as char)?,
            _ => write!(f, "\\x{byte:02x}")?,
        }
    }
    f.write_str("\"")
}

/// A Go duration text (`1m0s`, `1h30m`, `-1.5s`, `300ms`, `0`) in nanoseconds, as Go's
/// `time.ParseDuration`: an optional sign, then `0` alone or numbers (digits with an optional
/// fraction) each followed by a unit `ns`, `us`, `µs`, `μs`, `ms`, `s`, `m` or `h`; beyond
/// the range of an `i64` of nanoseconds is an error. Inlined: where only the result's `Ok` is read
/// (K3), the error's making is left out of the module.
#[inline(always)]
pub fn parse(text: &str) -> Result<i64, DurationError<'_>> {
    let invalid = DurationError::Invalid(text);
    let (negative, mut rest) = match text.as_bytes() {
        [b'-', rest @ ..] => (true, rest),
        [b'+', rest @ ..] => (false, rest),
        rest => (false, rest),
    };
    match rest {
        b"0" => return Ok(0),
        [] => return Err(invalid),
        _ => {}
    }
    let mut total: u64 = 0;
    while let [first, ..] = rest {
        if !number(*first) {
            return Err(invalid);
        }
        let (whole, after) = split(rest, |b| !b.is_ascii_digit());
        let value = leading_int(whole).ok_or(invalid)?;
        let (fraction, after) = match after {
            [b'.', after @ ..] => split(after, |b| !b.is_ascii_digit()),
            _ => (&[][..], after),
        };
        if whole.is_empty() && fraction.is_empty() {
            return Err(invalid);
        }
        let (unit, after) = split(after, number);
        if unit.is_empty() {
            return Err(DurationError::MissingUnit(text));
        }
        let Some((unit_ns, most)) = unit_nanoseconds(unit) else {
            // Between ASCII bytes (a number's or the end): a whole text.
            let start = text.len().saturating_sub(unit.len() + after.len());
            let unit = text.get(start..start + unit.len()).unwrap_or_default();
            return Err(DurationError::UnknownUnit { unit, text });
        };
        if value > most {
            return Err(invalid);
        }
        let value = value * unit_ns + fraction_nanoseconds(fraction, unit_ns);
        if value > LIMIT {
            return Err(invalid);
        }
        // As Go's uint64 sum: 1<<63 twice wraps to 0 (Go accepts such a text as 0).
        total = total.wrapping_add(value);
        if total > LIMIT {
            return Err(invalid);
        }
        rest = after;
    }
    if negative {
        Ok((total as i64).wrapping_neg())
    } else {
        i64::try_from(total).map_err(|_| invalid)
    }
}

/// Whether `byte` is part of a number: a digit or the point.
fn number(byte: u8) -> bool {
    byte == b'.' || byte.is_ascii_digit()
}

/// `bytes` split before the first byte that is `end`.
fn split(bytes: &[u8], end: impl Fn(u8) -> bool) -> (&[u8], &[u8]) {
    let at = bytes.iter().position(|&b| end(b)).unwrap_or(bytes.len());
    bytes.split_at_checked(at).unwrap_or((bytes, &[]))
}

/// Go's `leadingInt`: the digits' value, `None` beyond 1<<63.
fn leading_int(digits: &[u8]) -> Option<u64> {
    digits.iter().try_fold(0u64, |value, digit| {
        let value = (value <= LIMIT / 10).then(|| value * 10 + u64::from(digit - b'0'))?;
        (value <= LIMIT).then_some(value)
    })
}

/// The nanoseconds of `0.DIGITS` of a unit, truncated; only the digits Go's `leadingFraction`
/// keeps (it stops before the value passes 1<<63). The digits times the unit, long-multiplied
/// from the last one, carry into the whole nanoseconds.
fn fraction_nanoseconds(digits: &[u8], unit_ns: u64) -> u64 {
    let mut value: u64 = 0;
    let mut kept = 0;
    for &digit in digits {
        if value > (LIMIT - 1) / 10 {
            break;
        }
        let next = value * 10 + u64::from(digit - b'0');
        if next > LIMIT {
            break;
        }
        value = next;
        kept += 1;
    }
    digits.iter().take(kept).rev().fold(0, |carry, digit| {
        (u64::from(digit - b'0') * unit_ns + carry) / 10
    })
}

/// Go's `unitMap` (`µs` is U+00B5, `μs` U+03BC): a unit's nanoseconds and the most of it below
/// 1<<63 nanoseconds.
fn unit_nanoseconds(unit: &[u8]) -> Option<(u64, u64)> {
    let ns = match unit {
        b"ns" => 1,
        b"us" | [0xc2, 0xb5, b's'] | [0xce, 0xbc, b's'] => 1_000,
        b"ms" => 1_000_000,
        b"s" => 1_000_000_000,
        b"m" => 60_000_000_000,
        b"h" => 3_600_000_000_000,
        _ => return None,
    };
    Some((ns, LIMIT / ns))
}

#[cfg(test)]
mod tests {
    use super::{DurationError, parse};
    use rstest::rstest;

    const MICRO: i64 = 1_000;
    const MILLI: i64 = 1_000_000;
    const SECOND: i64 = 1_000_000_000;
    const MINUTE: i64 = 60 * SECOND;
    const HOUR: i64 = 60 * MINUTE;

    /// Go's parseDurationTests (src/time/time_test.go), and what KubeVirt writes.
    #[rstest]
    #[case("0", 0)]
    #[case("5s", 5 * SECOND)]
    #[case("30s", 30 * SECOND)]
    #[case("1478s", 1478 * SECOND)]
    #[case("-5s", -5 * SECOND)]
    #[case("+5s", 5 * SECOND)]
    #[case("-0", 0)]
    #[case("+0", 0)]
    #[case("5.0s", 5 * SECOND)]
    #[case("5.6s", 5 * SECOND + 600 * MILLI)]
    #[case("5.s", 5 * SECOND)]
    #[case(".5s", 500 * MILLI)]
    #[case("1.0s", SECOND)]
    #[case("1.00s", SECOND)]
    #[case("1.004s", SECOND + 4 * MILLI)]
    #[case("1.0040s", SECOND + 4 * MILLI)]
    #[case("100.00100s", 100 * SECOND + MILLI)]
    #[case("10ns", 10)]
    #[case("11us", 11 * MICRO)]
    #[case("12µs", 12 * MICRO)] // U+00B5
    #[case("12μs", 12 * MICRO)] // U+03BC
    #[case("13ms", 13 * MILLI)]
    #[case("14s", 14 * SECOND)]
    #[case("15m", 15 * MINUTE)]
    #[case("16h", 16 * HOUR)]
    #[case("3h30m", 3 * HOUR + 30 * MINUTE)]
    #[case("10.5s4m", 4 * MINUTE + 10 * SECOND + 500 * MILLI)]
    #[case("-2m3.4s", -(2 * MINUTE + 3 * SECOND + 400 * MILLI))]
    #[case("1h2m3s4ms5us6ns", HOUR + 2 * MINUTE + 3 * SECOND + 4 * MILLI + 5 * MICRO + 6)]
    #[case("39h9m14.425s", 39 * HOUR + 9 * MINUTE + 14 * SECOND + 425 * MILLI)]
    #[case("52763797000ns", 52_763_797_000)]
    // Go: 20 * Minute, through a float64 (the module's one difference).
    #[case("0.3333333333333333333h", 20 * MINUTE - 1)]
    #[case("9007199254740993ns", (1 << 53) + 1)]
    #[case("9223372036854775807ns", i64::MAX)]
    #[case("9223372036854775.807us", i64::MAX)]
    #[case("9223372036s854ms775us807ns", i64::MAX)]
    #[case("-9223372036854775808ns", i64::MIN)]
    #[case("-9223372036854775.808us", i64::MIN)]
    #[case("-9223372036s854ms775us808ns", i64::MIN)]
    #[case("-2562047h47m16.854775808s", i64::MIN)]
    #[case("0.100000000000000000000h", 6 * MINUTE)]
    #[case("0.830103483285477580700h", 49 * MINUTE + 48 * SECOND + 372_539_827)]
    // Not in Go's table: KubeVirt's own texts, a fraction below a nanosecond, Go's wrap.
    #[case("1m0s", MINUTE)]
    #[case("1.5h", 90 * MINUTE)]
    #[case("0.1ns", 0)]
    #[case("0.0000000001s", 0)]
    #[case("1.9999999999s", 2 * SECOND - 1)]
    #[case("9223372036854775808ns9223372036854775808ns", 0)]
    fn go_durations(#[case] text: &str, #[case] nanoseconds: i64) {
        assert_eq!(parse(text), Ok(nanoseconds), "{text:?}");
    }

    /// Go's parseDurationErrorTests (those a Rust string can hold), with Go's whole message.
    #[rstest]
    #[case("", r#"time: invalid duration """#)]
    #[case("3", r#"time: missing unit in duration "3""#)]
    #[case("-", r#"time: invalid duration "-""#)]
    #[case("s", r#"time: invalid duration "s""#)]
    #[case(".", r#"time: invalid duration ".""#)]
    #[case("-.", r#"time: invalid duration "-.""#)]
    #[case(".s", r#"time: invalid duration ".s""#)]
    #[case("+.s", r#"time: invalid duration "+.s""#)]
    #[case("1d", r#"time: unknown unit "d" in duration "1d""#)]
    #[case("\u{FFFD}", r#"time: invalid duration "\xef\xbf\xbd""#)]
    #[case(
        "\u{FFFD} hello \u{FFFD} world",
        r#"time: invalid duration "\xef\xbf\xbd hello \xef\xbf\xbd world""#
    )]
    #[case(
        "9223372036854775810ns",
        r#"time: invalid duration "9223372036854775810ns""#
    )]
    #[case(
        "9223372036854775808ns",
        r#"time: invalid duration "9223372036854775808ns""#
    )]
    #[case(
        "-9223372036854775809ns",
        r#"time: invalid duration "-9223372036854775809ns""#
    )]
    #[case("9223372036854776us", r#"time: invalid duration "9223372036854776us""#)]
    #[case("3000000h", r#"time: invalid duration "3000000h""#)]
    #[case(
        "9223372036854775.808us",
        r#"time: invalid duration "9223372036854775.808us""#
    )]
    #[case(
        "9223372036854ms775us808ns",
        r#"time: invalid duration "9223372036854ms775us808ns""#
    )]
    // Not in Go's table: the other paths and the quoting.
    #[case("1", r#"time: missing unit in duration "1""#)]
    #[case("1m1", r#"time: missing unit in duration "1m1""#)]
    #[case("1x", r#"time: unknown unit "x" in duration "1x""#)]
    #[case("1.5.5s", r#"time: missing unit in duration "1.5.5s""#)]
    #[case("1 m", r#"time: unknown unit " m" in duration "1 m""#)]
    #[case(" 1m", r#"time: invalid duration " 1m""#)]
    #[case("1m-1s", r#"time: unknown unit "m-" in duration "1m-1s""#)]
    #[case("+-1s", r#"time: invalid duration "+-1s""#)]
    #[case(
        "99999999999999999999x",
        r#"time: invalid duration "99999999999999999999x""#
    )]
    #[case("1é", r#"time: unknown unit "\xc3\xa9" in duration "1\xc3\xa9""#)]
    #[case("\"1\\\n", r#"time: invalid duration "\"1\\\x0a""#)]
    fn go_errors(#[case] text: &str, #[case] message: &str) {
        let error = parse(text).err();
        assert_eq!(error.map(|e| e.to_string()).as_deref(), Some(message));
    }

    #[test]
    fn the_error_names_the_text() {
        assert_eq!(
            parse("1d"),
            Err(DurationError::UnknownUnit {
                unit: "d",
                text: "1d"
            })
        );
    }
}
