//! Kubernetes resource quantities (`500m`, `1.5Gi`, `2e3`): parsed into
//! nano units, and written back in the canonical form the API server's
//! `Quantity.String()` gives them (`1.5` is `1500m`, `1.5Gi` is `1536Mi`,
//! `2000` is `2k`), as its messages quote them.

/// One unit in nano units.
const NANO: i128 = 1_000_000_000;

/// kube-apiserver's message for a quantity it cannot parse
/// (`resource.ErrFormatWrong`).
pub const QUANTITY_FORMAT: &str =
    "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

/// A Kubernetes quantity (`500m`, `1.5Gi`, `2e3`, `128974848`) in units of
/// 10⁻⁹, rounded up as the API rounds below its nano scale; `None` when it
/// is not a quantity. Values beyond `i128` saturate.
pub fn parse(text: &str) -> Option<i128> {
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.' || c == '+' || c == '-'))
        .unwrap_or(text.len());
    let (number, suffix) = text.split_at(split);
    let (negative, digits) = match number.as_bytes().first()? {
        b'-' => (true, &number[1..]),
        b'+' => (false, &number[1..]),
        _ => (false, number),
    };
    let (whole, fraction) = digits.split_once('.').unwrap_or((digits, ""));
    let all_digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    if whole.is_empty() && fraction.is_empty() || !all_digits(whole) || !all_digits(fraction) {
        return None;
    }
    let (exp10, exp2): (i32, u32) = match suffix {
        "" => (0, 0),
        "n" => (-9, 0),
        "u" => (-6, 0),
        "m" => (-3, 0),
        "k" => (3, 0),
        "M" => (6, 0),
        "G" => (9, 0),
        "T" => (12, 0),
        "P" => (15, 0),
        "E" => (18, 0),
        "Ki" => (0, 10),
        "Mi" => (0, 20),
        "Gi" => (0, 30),
        "Ti" => (0, 40),
        "Pi" => (0, 50),
        "Ei" => (0, 60),
        exponent => {
            let rest = exponent.strip_prefix(['e', 'E'])?;
            let unsigned = rest.strip_prefix(['+', '-']).unwrap_or(rest);
            if unsigned.is_empty() || !all_digits(unsigned) {
                return None;
            }
            (rest.parse().ok()?, 0)
        }
    };
    // The digits as one integer, scaled to nano units.
    let mut mantissa: i128 = 0;
    for b in whole.bytes().chain(fraction.bytes()) {
        mantissa = mantissa
            .saturating_mul(10)
            .saturating_add(i128::from(b - b'0'));
    }
    let scale = 9 + exp10 - fraction.len() as i32;
    let mut nanos = if scale >= 0 {
        10i128
            .checked_pow(scale as u32)
            .map_or(i128::MAX, |p| mantissa.saturating_mul(p))
    } else {
        match 10i128.checked_pow(scale.unsigned_abs()) {
            Some(p) => mantissa / p + i128::from(mantissa % p != 0),
            None => i128::from(mantissa != 0),
        }
    };
    nanos = nanos.saturating_mul(1i128.checked_shl(exp2).unwrap_or(i128::MAX));
    Some(if negative { -nanos } else { nanos })
}

/// How a quantity was written, which its canonical form keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Format {
    /// Powers of 1024 (`Ki`, `Mi`, ...).
    BinarySi,
    /// Powers of 1000 (`m`, `k`, `M`, ...) or none.
    DecimalSi,
    /// A power of ten (`2e3`).
    DecimalExponent,
}

fn format_of(text: &str) -> Format {
    if text.ends_with('i') {
        Format::BinarySi
    } else if text.contains(['e', 'E']) {
        Format::DecimalExponent
    } else {
        Format::DecimalSi
    }
}

/// `text` as the API server writes the quantity back (`Quantity.String()`);
/// `None` when it is not a quantity.
pub fn canonical(text: &str) -> Option<String> {
    let nanos = parse(text)?;
    let format = match format_of(text) {
        // Binary suffixes hold whole numbers from 1024 up; anything else
        // is written in decimal.
        Format::BinarySi if nanos % NANO != 0 || nanos.abs() < 1024 * NANO => Format::DecimalSi,
        format => format,
    };
    let sign = if nanos < 0 { "-" } else { "" };
    let magnitude = nanos.unsigned_abs();
    if magnitude == 0 {
        return Some("0".into());
    }
    Some(match format {
        Format::BinarySi => {
            let mut value = magnitude / NANO as u128;
            let mut suffix = 0;
            while suffix < 6 && value.is_multiple_of(1024) {
                value /= 1024;
                suffix += 1;
            }
            let suffix = ["", "Ki", "Mi", "Gi", "Ti", "Pi", "Ei"][suffix];
            format!("{sign}{value}{suffix}")
        }
        Format::DecimalSi | Format::DecimalExponent => {
            // The largest power of 1000 that leaves a whole mantissa,
            // from nano (10⁻⁹) up to exa (10¹⁸).
            let mut exponent = -9;
            let mut value = magnitude;
            while exponent < 18 && value.is_multiple_of(1000) {
                value /= 1000;
                exponent += 3;
            }
            let suffix = match format {
                Format::DecimalExponent if exponent == 0 => String::new(),
                Format::DecimalExponent => format!("e{exponent}"),
                _ => ["n", "u", "m", "", "k", "M", "G", "T", "P", "E"][(exponent + 9) as usize / 3]
                    .to_string(),
            };
            format!("{sign}{value}{suffix}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quantities_parse_in_every_notation() {
        assert_eq!(parse("1"), Some(1_000_000_000));
        assert_eq!(parse("500m"), Some(500_000_000));
        assert_eq!(parse("0.5"), Some(500_000_000));
        assert_eq!(parse(".5"), Some(500_000_000));
        assert_eq!(parse("1Ki"), Some(1024 * 1_000_000_000));
        assert_eq!(parse("1.5Gi"), Some(1_610_612_736 * 1_000_000_000));
        assert_eq!(parse("128974848"), Some(128_974_848 * 1_000_000_000));
        assert_eq!(parse("2e3"), parse("2k"));
        assert_eq!(parse("1E-3"), parse("1m"));
        assert_eq!(parse("-1"), Some(-1_000_000_000));
        // Below a nano, rounded up.
        assert_eq!(parse("0.0000000001"), Some(1));
        for bad in ["", "m", "abc", "1.2.3", "1x", "1Kib", "1e", "--1", "1 Gi"] {
            assert_eq!(parse(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn quantities_are_written_back_in_canonical_form() {
        for (written, canonical_form) in [
            ("1", "1"),
            ("500m", "500m"),
            ("0.5", "500m"),
            ("1.5", "1500m"),
            ("1000m", "1"),
            ("2000", "2k"),
            ("1500", "1500"),
            ("0", "0"),
            ("128974848", "128974848"),
            ("129e6", "129e6"),
            ("2e3", "2e3"),
            ("1E-3", "1e-3"),
            ("1Ki", "1Ki"),
            ("1024Ki", "1Mi"),
            ("1.5Gi", "1536Mi"),
            ("0.5Ki", "512"),
            ("100Mi", "100Mi"),
            ("-1Gi", "-1Gi"),
            ("-250m", "-250m"),
        ] {
            assert_eq!(
                canonical(written).as_deref(),
                Some(canonical_form),
                "{written}"
            );
        }
        assert_eq!(canonical("1x"), None);
    }
}
