//! A URI as Go's `net/url.ParseRequestURI` reads it, which is what
//! kube-openapi's `uri` format asks: `*`, an absolute path (`/a?b`), or a
//! URI with a scheme (`https://host:8443/p`, `mailto:x@y`); no control
//! characters, `%` escapes well formed, a host of the characters Go allows
//! with a numeric port, a bracketed host an IPv6 address. Its errors are
//! Go's `url.Error`s (`parse "x": invalid URI for request`), which the CEL
//! format library's `format.uri()` reports.

use std::net::Ipv6Addr;

/// Whether `text` is a request URI Go parses.
pub(super) fn is_request_uri(text: &str) -> bool {
    parse_request_uri(text).is_ok()
}

/// `url.ParseRequestURI`: nothing, or Go's error.
pub fn parse_request_uri(text: &str) -> Result<(), String> {
    parse(text).map_err(|why| format!("parse {text:?}: {why}"))
}

fn parse(text: &str) -> Result<(), String> {
    if text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return Err("net/url: invalid control character in URL".to_string());
    }
    if text.is_empty() {
        return Err("empty url".to_string());
    }
    if text == "*" {
        return Ok(());
    }
    let (scheme, rest) = scheme(text)?;
    let rest = match rest.strip_suffix('?') {
        Some(trimmed) if rest.matches('?').count() == 1 => trimmed,
        _ => rest.split_once('?').map_or(rest, |(before, _)| before),
    };
    if !rest.starts_with('/') {
        // With a scheme, an opaque URI (`mailto:x@y`); without, nothing a
        // request names.
        return if scheme.is_empty() {
            Err("invalid URI for request".to_string())
        } else {
            Ok(())
        };
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, remainder) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        authority_problem(authority)?;
        path = remainder;
    }
    unescape(path, Mode::Path)
}

/// `getScheme`: the scheme (empty when there is none) and the rest.
fn scheme(text: &str) -> Result<(&str, &str), String> {
    for (i, c) in text.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return Err("missing protocol scheme".to_string()),
            b':' => return Ok((&text[..i], &text[i + 1..])),
            _ => return Ok(("", text)),
        }
    }
    Ok(("", text))
}

/// `parseAuthority`: `[userinfo@]host[:port]`.
fn authority_problem(authority: &str) -> Result<(), String> {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    host_problem(host)?;
    let Some(userinfo) = userinfo else {
        return Ok(());
    };
    let valid = userinfo
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c));
    if !valid {
        return Err("net/url: invalid userinfo".to_string());
    }
    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
    unescape(user, Mode::UserPassword)?;
    unescape(password, Mode::UserPassword)
}

/// `parseHost`: a host and an optional numeric port; a bracketed host an
/// IPv6 address, with an optional `%25` zone.
fn host_problem(host: &str) -> Result<(), String> {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return Err("missing ']' in host".to_string());
        };
        port_problem(&host[close + 1..])?;
        let literal = &host[1..close];
        let address = literal.find("%25").map_or(literal, |zone| &literal[..zone]);
        if address.parse::<Ipv6Addr>().is_err() {
            return Err(format!("invalid IP-literal {address:?}"));
        }
        if let Some(zone) = host[..close].find("%25") {
            unescape(&host[..zone], Mode::Host)?;
            unescape(&host[zone..close], Mode::Zone)?;
            return unescape(&host[close..], Mode::Host);
        }
    } else if let Some(colon) = host.rfind(':') {
        port_problem(&host[colon..])?;
    }
    unescape(host, Mode::Host)
}

/// `validOptionalPort`: empty, or `:` and digits.
fn port_problem(port: &str) -> Result<(), String> {
    let numeric = port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()));
    if numeric {
        Ok(())
    } else {
        Err(format!("invalid port {port:?} after host"))
    }
}

/// The part of a URL `unescape` reads, which decides what it refuses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    Host,
    Zone,
}

/// Go's `unescape`, which only checks here: each `%` starts two hex
/// digits; in a host only non-ASCII bytes (and `%25`) are escaped and no
/// other ASCII character Go would escape appears; a zone escapes no such
/// character but a space.
fn unescape(text: &str, mode: Mode) -> Result<(), String> {
    let bytes = text.as_bytes();
    let bad_escape = |i: usize| {
        let end = (i + 3).min(bytes.len());
        format!(
            "invalid URL escape {:?}",
            String::from_utf8_lossy(&bytes[i..end])
        )
    };
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            if i + 2 >= bytes.len()
                || !bytes[i + 1].is_ascii_hexdigit()
                || !bytes[i + 2].is_ascii_hexdigit()
            {
                return Err(bad_escape(i));
            }
            let (high, low) = (hex(bytes[i + 1]), hex(bytes[i + 2]));
            let percent = &bytes[i..i + 3] == b"%25";
            if mode == Mode::Host && high < 8 && !percent {
                return Err(bad_escape(i));
            }
            let value = high << 4 | low;
            if mode == Mode::Zone && !percent && value != b' ' && host_escapes(value) {
                return Err(bad_escape(i));
            }
            i += 3;
            continue;
        }
        if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && host_escapes(b) {
            return Err(format!(
                "invalid character {:?} in host name",
                char::from(b).to_string()
            ));
        }
        i += 1;
    }
    Ok(())
}

/// Go's `shouldEscape(c, encodeHost)` for an ASCII byte.
fn host_escapes(c: u8) -> bool {
    !(c.is_ascii_alphanumeric() || b"!$&'()*+,;=:[]<>\"-_.~".contains(&c))
}

fn hex(digit: u8) -> u8 {
    match digit {
        b'0'..=b'9' => digit - b'0',
        b'a'..=b'f' => digit - b'a' + 10,
        _ => digit - b'A' + 10,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn request_uris_go_takes_and_refuses() {
        let good = [
            "*",
            "/",
            "/a/b?c=d",
            "/a%20b",
            "http://somewhere.com",
            "https://user:pass@example.com:8443/p?q#f",
            "https://[::1]:80/",
            "https://[fe80::1%25en0]/",
            "mailto:someone@example.com",
            "urn:isbn:0451450523",
            "http://example.com?",
            "http:///path",
        ];
        for text in good {
            assert!(is_request_uri(text), "{text}");
        }
        let bad = [
            "",
            "somewhere.com",
            "relative/path",
            ":nothing",
            "/a%2",
            "/a%zz",
            "http://exa mple.com/",
            "http://example.com:80a/",
            "http://[::1/",
            "http://[10.0.0.1]/",
            "http://us{er@example.com/",
            "http://%41.com/",
            "/tab\there",
        ];
        for text in bad {
            assert!(!is_request_uri(text), "{text}");
        }
    }

    #[test]
    fn errors_are_gos() {
        let cases = [
            (
                "example.com",
                r#"parse "example.com": invalid URI for request"#,
            ),
            ("", r#"parse "": empty url"#),
            (":x", r#"parse ":x": missing protocol scheme"#),
            ("/a%zz", r#"parse "/a%zz": invalid URL escape "%zz""#),
            ("/a%2", r#"parse "/a%2": invalid URL escape "%2""#),
            (
                "http://a b/",
                r#"parse "http://a b/": invalid character " " in host name"#,
            ),
            (
                "http://a:8x/",
                r#"parse "http://a:8x/": invalid port ":8x" after host"#,
            ),
        ];
        for (text, error) in cases {
            assert_eq!(parse_request_uri(text), Err(error.to_string()), "{text}");
        }
    }
}
