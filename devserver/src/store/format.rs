//! The string `format`s a custom resource's schema may name, checked as
//! kube-openapi's format registry (`strfmt.Default`) checks them, for the
//! names apiextensions-apiserver keeps in a v1.33 CRD schema (its
//! `supportedVersionedFormats`): `bsonobjectid`, `uri`, `email`,
//! `hostname`, `ipv4`, `ipv6`, `cidr`, `mac`, `uuid`, `uuid3`, `uuid4`,
//! `uuid5`, `isbn`, `isbn10`, `isbn13`, `creditcard`, `ssn`, `hexcolor`,
//! `rgbcolor`, `byte`, `password`, `date`, `duration` and `datetime`. A
//! name is compared without its `-` (`date-time` is `datetime`), as both
//! normalize it; any other name is dropped from the schema by the server,
//! and is not checked here either.

use std::sync::LazyLock;

use regex::Regex;

use super::ip::{sloppy_cidr, sloppy_ip};

mod address;
mod duration;
mod request_uri;

pub use request_uri::parse_request_uri;

/// Whether `text` is of `format`; `None` when the format is not checked.
pub fn check(format: &str, text: &str) -> Option<bool> {
    let valid = match format.replace('-', "").as_str() {
        "bsonobjectid" => text.len() == 24 && text.bytes().all(|b| b.is_ascii_hexdigit()),
        "uri" => request_uri::is_request_uri(text),
        "email" => address::is_email(text),
        "hostname" => is_hostname(text),
        // kube-openapi's `IsIPv4` and `IsIPv6`: an address `ParseIPSloppy`
        // reads, with a `.` or a `:` (`::ffff:10.0.0.1` is both).
        "ipv4" => text.contains('.') && sloppy_ip(text).is_some(),
        "ipv6" => text.contains(':') && sloppy_ip(text).is_some(),
        "cidr" => sloppy_cidr(text).is_some(),
        "mac" => is_mac(text),
        "uuid" => UUID.is_match(text),
        "uuid3" => UUID3.is_match(text),
        "uuid4" => UUID4.is_match(text),
        "uuid5" => UUID5.is_match(text),
        "isbn" => is_isbn10(text) || is_isbn13(text),
        "isbn10" => is_isbn10(text),
        "isbn13" => is_isbn13(text),
        "creditcard" => is_credit_card(text),
        "ssn" => text.len() == 11 && SSN.is_match(text),
        "hexcolor" => HEX_COLOR.is_match(text),
        "rgbcolor" => RGB_COLOR.is_match(text),
        "byte" => BASE64.is_match(text),
        "password" => true,
        "date" => is_date(text),
        "duration" => duration::is_duration(text),
        "datetime" => text.parse::<jiff::Timestamp>().is_ok(),
        _ => return None,
    };
    Some(valid)
}

static UUID: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
        .expect("a valid pattern")
});
static UUID3: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?3[0-9a-f]{3}-?[0-9a-f]{4}-?[0-9a-f]{12}$")
        .expect("a valid pattern")
});
static UUID4: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?4[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
        .expect("a valid pattern")
});
static UUID5: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("(?i)^[0-9a-f]{8}-?[0-9a-f]{4}-?5[0-9a-f]{3}-?[89ab][0-9a-f]{3}-?[0-9a-f]{12}$")
        .expect("a valid pattern")
});
/// kube-openapi's `HostnamePattern`: one label, or labels separated by
/// dots and ending in a top-level label of 2 to 63 letters; letters,
/// digits and Unicode letters and symbols, dashes inside a label.
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^([a-zA-Z0-9\p{S}\p{L}]((-?[a-zA-Z0-9\p{S}\p{L}]{0,62})?)|([a-zA-Z0-9\p{S}\p{L}](([-a-zA-Z0-9\p{S}\p{L}]{0,61}[a-zA-Z0-9\p{S}\p{L}])?)(\.)){1,}([a-zA-Z\p{L}]){2,63})$",
    )
    .expect("a valid pattern")
});
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").expect("a valid pattern"));
/// govalidator's `RGBcolor`, Go's `\s` and `\d` being ASCII.
static RGB_COLOR: LazyLock<Regex> = LazyLock::new(|| {
    let byte = "(0|[1-9][0-9]?|1[0-9][0-9]?|2[0-4][0-9]|25[0-5])";
    let space = r"[\t\n\f\r ]*";
    Regex::new(&format!(
        r"^rgb\({space}{byte}{space},{space}{byte}{space},{space}{byte}{space}\)$"
    ))
    .expect("a valid pattern")
});
/// govalidator's `SSN` (with a length of 11: both separators present).
static SSN: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^[0-9]{3}[- ]?[0-9]{2}[- ]?[0-9]{4}$").expect("a valid pattern"));
/// govalidator's `Base64`: whole groups of four, padded; not empty.
static BASE64: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new("^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=|[A-Za-z0-9+/]{4})$")
        .expect("a valid pattern")
});
/// govalidator's `CreditCard`, over the digits alone.
static CREDIT_CARD: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        "^(?:4[0-9]{12}(?:[0-9]{3})?|5[1-5][0-9]{14}|6(?:011|5[0-9][0-9])[0-9]{12}|3[47][0-9]{13}|3(?:0[0-5]|[68][0-9])[0-9]{11}|(?:2131|1800|35[0-9]{3})[0-9]{11})$",
    )
    .expect("a valid pattern")
});

/// govalidator's `IsISBN10`: spaces and dashes dropped, nine digits and a
/// digit or `X`, the weighted sum a multiple of 11.
fn is_isbn10(text: &str) -> bool {
    let digits = isbn_digits(text);
    let d = digits.as_bytes();
    let shaped = d.len() == 10
        && d[..9].iter().all(u8::is_ascii_digit)
        && (d[9].is_ascii_digit() || d[9] == b'X');
    if !shaped {
        return false;
    }
    let weighted: u32 = d[..9]
        .iter()
        .zip(1..)
        .map(|(digit, weight)| weight * u32::from(digit - b'0'))
        .sum();
    let last = if d[9] == b'X' {
        10
    } else {
        u32::from(d[9] - b'0')
    };
    (weighted + 10 * last).is_multiple_of(11)
}

/// govalidator's `IsISBN13`: spaces and dashes dropped, 13 digits, the
/// last the check digit of the others weighted 1, 3, 1, ...
fn is_isbn13(text: &str) -> bool {
    let digits = isbn_digits(text);
    let d = digits.as_bytes();
    if d.len() != 13 || !d.iter().all(u8::is_ascii_digit) {
        return false;
    }
    let weighted: u32 = d[..12]
        .iter()
        .zip([1, 3].into_iter().cycle())
        .map(|(digit, weight)| weight * u32::from(digit - b'0'))
        .sum();
    u32::from(d[12] - b'0') == (10 - weighted % 10) % 10
}

/// The text without Go's `\s` characters and dashes.
fn isbn_digits(text: &str) -> String {
    text.chars()
        .filter(|c| !matches!(c, '\t' | '\n' | '\u{c}' | '\r' | ' ' | '-'))
        .collect()
}

/// govalidator's `IsCreditCard`: the digits, whatever else is mixed in,
/// of a known card's shape and with a valid Luhn check digit.
fn is_credit_card(text: &str) -> bool {
    let digits: String = text.chars().filter(char::is_ascii_digit).collect();
    if !CREDIT_CARD.is_match(&digits) {
        return false;
    }
    let sum: u32 = digits
        .bytes()
        .rev()
        .enumerate()
        .map(|(i, b)| {
            let digit = u32::from(b - b'0');
            match (i % 2 == 1, digit * 2) {
                (true, doubled) if doubled >= 10 => doubled % 10 + 1,
                (true, doubled) => doubled,
                (false, _) => digit,
            }
        })
        .sum();
    sum.is_multiple_of(10)
}

/// A hardware address as Go's `net.ParseMAC` reads it: 6, 8 or 20 bytes,
/// as pairs of hex digits separated by `:` or `-`, or as groups of four
/// separated by `.`.
fn is_mac(text: &str) -> bool {
    let hex =
        |part: &str, len: usize| part.len() == len && part.bytes().all(|b| b.is_ascii_hexdigit());
    let sized = |bytes: usize| matches!(bytes, 6 | 8 | 20);
    for separator in [':', '-'] {
        if text.contains(separator) {
            let parts: Vec<&str> = text.split(separator).collect();
            return sized(parts.len()) && parts.iter().all(|p| hex(p, 2));
        }
    }
    let groups: Vec<&str> = text.split('.').collect();
    groups.len() > 1 && sized(groups.len() * 2) && groups.iter().all(|g| hex(g, 4))
}

/// A full date, `2006-01-02` with two-digit months and days, that exists.
fn is_date(text: &str) -> bool {
    let digits = text.len() == 10
        && text.bytes().enumerate().all(|(i, b)| {
            if i == 4 || i == 7 {
                b == b'-'
            } else {
                b.is_ascii_digit()
            }
        });
    digits && jiff::civil::Date::strptime("%Y-%m-%d", text).is_ok()
}

/// [`HOSTNAME`], at most 255 bytes in all and 63 in each label.
fn is_hostname(text: &str) -> bool {
    HOSTNAME.is_match(text) && text.len() <= 255 && text.split('.').all(|l| l.len() <= 63)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_checked_format_takes_its_values_and_refuses_others() {
        let cases: &[(&str, &[&str], &[&str])] = &[
            (
                "uuid",
                &[
                    "6ba7b810-9dad-11d1-80b4-00c04fd430c8",
                    "6BA7B8109DAD11D180B400C04FD430C8",
                ],
                &["6ba7b810-9dad-11d1-80b4", "not-a-uuid"],
            ),
            (
                "uuid4",
                &["f47ac10b-58cc-4372-a567-0e02b2c3d479"],
                &["6ba7b810-9dad-11d1-80b4-00c04fd430c8"],
            ),
            (
                "ipv4",
                &["10.0.0.1", "192.168.1.01", "::ffff:10.0.0.1"],
                &["10.0.0.256", "::1", "10.0.0", "198.168.254.2.2", "+1.2.3.4"],
            ),
            ("ipv6", &["::1", "fd00::1"], &["10.0.0.1", "fd00:::1"]),
            (
                "cidr",
                &["10.0.0.0/8", "fd00::/64", "192.0.02.1/24", "10.0.0.0/08"],
                &[
                    "10.0.0.0/33",
                    "10.0.0.0",
                    "x/8",
                    "10.0.0.0/+8",
                    "fd00::/129",
                ],
            ),
            (
                "mac",
                &["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e"],
                &["00:1a:2b:3c:4d", "00:1a:2b:3c:4d:zz"],
            ),
            (
                "hostname",
                &[
                    "example.com",
                    "a",
                    "888.com",
                    "1.2.3.com",
                    "x-y",
                    "www.詹姆斯.london",
                    "ex$ample",
                ],
                &[
                    "-bad.example",
                    "a..b",
                    "under_score",
                    "1.1.1.1",
                    "a.b.c.d",
                    "www.example-.org",
                    "x.",
                ],
            ),
            (
                "byte",
                &["aGVsbG8=", "aGVsbG8h"],
                &["not base64!", "", "aGVsbG8"],
            ),
            ("date", &["2024-02-29"], &["2023-02-29", "2024-1-1"]),
            (
                "date-time",
                &["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123+02:00"],
                &["2024-01-02", "yesterday"],
            ),
            ("hexcolor", &["#fff", "a0b1c2"], &["#ffff", "#ggg"]),
            (
                "rgbcolor",
                &["rgb(255,255,255)", "rgb( 0 , 10 , 200 )"],
                &["rgb(300,0,0)", "rgb(1,2)", "rgba(1,2,3,4)"],
            ),
            ("password", &["anything"], &[]),
            (
                "isbn10",
                &["0321751043", "0-321-75104-3", "080442957X"],
                &["836217463", "0321751044"],
            ),
            (
                "isbn13",
                &["978-0321751041", "9780321751041"],
                &["978-0321751042", "0321751043"],
            ),
            ("isbn", &["0321751043", "978-0321751041"], &["12345"]),
            (
                "creditcard",
                &[
                    "4111-1111-1111-1111",
                    "4012 8888 8888 1881",
                    "378282246310005",
                ],
                &["9999-9999-9999-999", "4111-1111-1111-1112"],
            ),
            (
                "ssn",
                &["111-11-1111", "999 99 9999"],
                &["999 99 999", "111111111", "111-111111"],
            ),
            (
                "bsonobjectid",
                &["507f1f77bcf86cd799439011", "507F1F77BCF86CD799439011"],
                &["507f1f77bcf86cd79943901", "507f1f77bcf86cd79943901z"],
            ),
            ("duration", &["1h30m", "3 weeks"], &["soon", "1"]),
            ("uri", &["https://example.com/a", "/p"], &["example.com"]),
            (
                "email",
                &["a@example.com", "A <a@example.com>"],
                &["nobody"],
            ),
        ];
        for (format, good, bad) in cases {
            for text in *good {
                assert_eq!(check(format, text), Some(true), "{format} {text}");
            }
            for text in *bad {
                assert_eq!(check(format, text), Some(false), "{format} {text}");
            }
        }
    }

    #[test]
    fn names_compare_without_dashes_and_others_are_not_checked() {
        assert_eq!(check("is-bn", "12345"), Some(false));
        assert_eq!(check("date_time", "yesterday"), None);
        assert_eq!(check("UUID", "x"), None);
        assert_eq!(check("int32", "1"), None);
        assert_eq!(check("quantity", "x"), None);
        assert_eq!(check("k8s-short-name", "X"), None);
    }
}
