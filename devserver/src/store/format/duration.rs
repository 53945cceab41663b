//! A duration as kube-openapi's `duration` format reads it
//! (`strfmt.ParseDuration`): Go's `time.ParseDuration` (`1h30m`, `-1.5s`,
//! `300ms`), else the Scala-like form (`3 weeks`, `1 day 2 hours`): one or
//! more numbers each followed by a word, at least one of which names a
//! unit.

use std::sync::LazyLock;

use regex::Regex;

/// Whether `text` is a duration `strfmt.ParseDuration` takes.
pub(super) fn is_duration(text: &str) -> bool {
    go_duration(text).is_some() || scala_duration(text)
}

/// Go's `time.ParseDuration`: `[-+]?([0-9]*(\.[0-9]*)?[a-z]+)+`, or `0`,
/// within ±2⁶³ nanoseconds; the total in nanoseconds, unsigned.
fn go_duration(text: &str) -> Option<u64> {
    const LIMIT: u64 = 1 << 63;
    let (negative, mut s) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if s == "0" {
        return Some(0);
    }
    if s.is_empty() {
        return None;
    }
    let mut total: u64 = 0;
    while !s.is_empty() {
        if !(s.starts_with('.') || s.starts_with(|c: char| c.is_ascii_digit())) {
            return None;
        }
        let digits = s.len() - s.trim_start_matches(|c: char| c.is_ascii_digit()).len();
        let mut whole: u64 = 0;
        for b in s[..digits].bytes() {
            if whole > LIMIT / 10 {
                return None;
            }
            whole = whole * 10 + u64::from(b - b'0');
            if whole > LIMIT {
                return None;
            }
        }
        s = &s[digits..];
        let (mut fraction, mut scale, mut fraction_digits) = (0u64, 1f64, 0);
        if let Some(after) = s.strip_prefix('.') {
            fraction_digits =
                after.len() - after.trim_start_matches(|c: char| c.is_ascii_digit()).len();
            let mut overflow = false;
            for b in after[..fraction_digits].bytes() {
                if overflow || fraction > (LIMIT - 1) / 10 {
                    overflow = true;
                    continue;
                }
                fraction = fraction * 10 + u64::from(b - b'0');
                scale *= 10.0;
            }
            s = &after[fraction_digits..];
        }
        if digits == 0 && fraction_digits == 0 {
            return None;
        }
        let unit_len = s
            .find(|c: char| c == '.' || c.is_ascii_digit())
            .unwrap_or(s.len());
        if unit_len == 0 {
            return None;
        }
        let unit: u64 = match &s[..unit_len] {
            "ns" => 1,
            "us" | "\u{b5}s" | "\u{3bc}s" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        s = &s[unit_len..];
        if whole > LIMIT / unit {
            return None;
        }
        let mut value = whole * unit;
        if fraction > 0 {
            value += (fraction as f64 * (unit as f64 / scale)) as u64;
            if value > LIMIT {
                return None;
            }
        }
        total += value;
        if total > LIMIT {
            return None;
        }
    }
    if !negative && total > LIMIT - 1 {
        return None;
    }
    Some(total)
}

/// `^\s*(?:\d+\s*[A-Za-zµ]+\s*)+$`, Go's `\s` and `\d` being ASCII.
static SCALA: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r"^[\t\n\f\r ]*(?:[0-9]+[\t\n\f\r ]*[A-Za-zµ]+[\t\n\f\r ]*)+$")
        .expect("a valid pattern")
});
/// Each number and its word.
static SCALA_PART: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(r"([0-9]+)[\t\n\f\r ]*([A-Za-zµ]+)").expect("a valid pattern"));

/// The units of the Scala-like form, each with its spellings; a word is a
/// unit when it equals one of them, ignoring case, or starts with the
/// last (`weeks`, `hours`).
const UNITS: [&[&str]; 8] = [
    &["ns", "nano"],
    &["us", "µs", "micro"],
    &["ms", "milli"],
    &["s", "sec"],
    &["m", "min"],
    &["h", "hr", "hour"],
    &["d", "day"],
    &["w", "wk", "week"],
];

/// The Scala-like form: numbers that fit an `int`, at least one word that
/// names a unit.
fn scala_duration(text: &str) -> bool {
    if !SCALA.is_match(text) {
        return false;
    }
    let mut named = false;
    for part in SCALA_PART.captures_iter(text) {
        if part[1].parse::<i64>().is_err() {
            return false;
        }
        let word = part[2].to_lowercase();
        for spellings in UNITS {
            let last = spellings.len() - 1;
            for (i, spelling) in spellings.iter().enumerate() {
                if (i == last && word.starts_with(spelling)) || spelling.eq_ignore_ascii_case(&word)
                {
                    named = true;
                }
            }
        }
    }
    named
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_and_scala_durations_are_taken_and_others_refused() {
        let good = [
            "0",
            "-0",
            "1h30m",
            "1.5s",
            ".5s",
            "5.s",
            "300ms",
            "-2562047h47m16.854775808s",
            "1µs",
            "3 weeks",
            "1 day 2 hours",
            "22 ns",
            "5 sec",
            "2 weeks 3 foos",
        ];
        for text in good {
            assert!(is_duration(text), "{text}");
        }
        let bad = [
            "",
            "1",
            "1.5",
            ".s",
            "1x",
            "1h m",
            "2562047h47m16.854775808s",
            "99999999999999999999h",
            "3 foos",
            "weeks",
            "99999999999999999999 days",
        ];
        for text in bad {
            assert!(!is_duration(text), "{text}");
        }
    }
}
