//! The string `format`s a custom resource's schema may name, checked as
//! kube-openapi's format registry checks them (`uuid`, `ipv4`, `cidr`,
//! `byte`, `date-time`, ...). A format outside this list is not checked,
//! as the server ignores formats it does not know; `email`, `uri`, `isbn`,
//! `creditcard`, `ssn` and `duration` are among those the dev server
//! leaves unchecked.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
use std::sync::LazyLock;

use base64::Engine as _;
use regex::Regex;

/// Whether `text` is of `format`; `None` when the format is not checked.
/// Names compare as the registry compares them: without `-` and `_`
/// (`date-time` is `datetime`).
pub fn check(format: &str, text: &str) -> Option<bool> {
    let name: String = format.chars().filter(|c| *c != '-' && *c != '_').collect();
    let valid = match name.as_str() {
        "uuid" => UUID.is_match(text),
        "uuid3" => UUID3.is_match(text),
        "uuid4" => UUID4.is_match(text),
        "uuid5" => UUID5.is_match(text),
        "ipv4" => text.parse::<Ipv4Addr>().is_ok(),
        "ipv6" => text.parse::<Ipv6Addr>().is_ok(),
        "cidr" => is_cidr(text),
        "mac" => is_mac(text),
        "hostname" => is_hostname(text),
        "byte" => base64::engine::general_purpose::STANDARD
            .decode(text)
            .is_ok(),
        "date" => is_date(text),
        "datetime" => text.parse::<jiff::Timestamp>().is_ok(),
        "hexcolor" => HEX_COLOR.is_match(text),
        "password" => true,
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
static HOSTNAME: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(
        r"^[a-zA-Z](([-0-9a-zA-Z]+)?[0-9a-zA-Z])?(\.[a-zA-Z](([-0-9a-zA-Z]+)?[0-9a-zA-Z])?)*$",
    )
    .expect("a valid pattern")
});
static HEX_COLOR: LazyLock<Regex> =
    LazyLock::new(|| Regex::new("^#?([0-9a-fA-F]{3}|[0-9a-fA-F]{6})$").expect("a valid pattern"));

/// An address and a prefix length that fits it (`10.0.0.0/8`, `fd00::/64`).
fn is_cidr(text: &str) -> bool {
    let Some((address, prefix)) = text.split_once('/') else {
        return false;
    };
    let Ok(prefix) = prefix.parse::<u8>() else {
        return false;
    };
    match address.parse::<IpAddr>() {
        Ok(IpAddr::V4(_)) => prefix <= 32,
        Ok(IpAddr::V6(_)) => prefix <= 128,
        Err(_) => false,
    }
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

/// RFC 1034 labels, at most 63 characters each and 255 in all.
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
            ("ipv4", &["10.0.0.1"], &["10.0.0.256", "::1", "10.0.0"]),
            ("ipv6", &["::1", "fd00::1"], &["10.0.0.1", "fd00:::1"]),
            (
                "cidr",
                &["10.0.0.0/8", "fd00::/64"],
                &["10.0.0.0/33", "10.0.0.0", "x/8"],
            ),
            (
                "mac",
                &["00:1a:2b:3c:4d:5e", "00-1A-2B-3C-4D-5E", "001a.2b3c.4d5e"],
                &["00:1a:2b:3c:4d", "00:1a:2b:3c:4d:zz"],
            ),
            (
                "hostname",
                &["example.com", "a"],
                &["-bad.example", "a..b", "under_score"],
            ),
            ("byte", &["aGVsbG8=", ""], &["not base64!"]),
            ("date", &["2024-02-29"], &["2023-02-29", "2024-1-1"]),
            (
                "date-time",
                &["2024-01-02T03:04:05Z", "2024-01-02T03:04:05.123+02:00"],
                &["2024-01-02", "yesterday"],
            ),
            ("hexcolor", &["#fff", "a0b1c2"], &["#ffff", "#ggg"]),
            ("password", &["anything"], &[]),
        ];
        for (format, good, bad) in cases {
            for text in *good {
                assert_eq!(check(format, text), Some(true), "{format} {text}");
            }
            for text in *bad {
                assert_eq!(check(format, text), Some(false), "{format} {text}");
            }
        }
        assert_eq!(check("email", "nobody"), None);
        assert_eq!(check("int32", "1"), None);
    }
}
