//! A URI as Go's `net/url.ParseRequestURI` reads it, which is what
//! kube-openapi's `uri` format asks: `*`, an absolute path (`/a?b`), or a
//! URI with a scheme (`https://host:8443/p`, `mailto:x@y`); no control
//! characters, `%` escapes well formed, a host of the characters Go allows
//! with a numeric port, a bracketed host an IPv6 address.

use std::net::Ipv6Addr;

/// Whether `text` is a request URI Go parses.
pub(super) fn is_request_uri(text: &str) -> bool {
    if text.is_empty() || text.bytes().any(|b| b < 0x20 || b == 0x7f) {
        return false;
    }
    if text == "*" {
        return true;
    }
    let Some((scheme, rest)) = scheme(text) else {
        return false;
    };
    let rest = match rest.strip_suffix('?') {
        Some(trimmed) if rest.matches('?').count() == 1 => trimmed,
        _ => rest.split_once('?').map_or(rest, |(before, _)| before),
    };
    if !rest.starts_with('/') {
        // With a scheme, an opaque URI (`mailto:x@y`); without, nothing a
        // request names.
        return !scheme.is_empty();
    }
    let mut path = rest;
    if !scheme.is_empty()
        && let Some(after) = rest.strip_prefix("//")
    {
        let (authority, remainder) = after.find('/').map_or((after, ""), |i| after.split_at(i));
        if !is_authority(authority) {
            return false;
        }
        path = remainder;
    }
    unescapes(path, Mode::Path)
}

/// `getScheme`: the scheme (empty when there is none) and the rest;
/// `None` when the text starts with `:`.
fn scheme(text: &str) -> Option<(&str, &str)> {
    for (i, c) in text.bytes().enumerate() {
        match c {
            b'a'..=b'z' | b'A'..=b'Z' => {}
            b'0'..=b'9' | b'+' | b'-' | b'.' if i > 0 => {}
            b':' if i == 0 => return None,
            b':' => return Some((&text[..i], &text[i + 1..])),
            _ => return Some(("", text)),
        }
    }
    Some(("", text))
}

/// `parseAuthority`: `[userinfo@]host[:port]`.
fn is_authority(authority: &str) -> bool {
    let (userinfo, host) = match authority.rfind('@') {
        Some(i) => (Some(&authority[..i]), &authority[i + 1..]),
        None => (None, authority),
    };
    if !is_host(host) {
        return false;
    }
    match userinfo {
        None => true,
        Some(userinfo) => {
            userinfo
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || "-._:~!$&'()*+,;=%@".contains(c))
                && {
                    let (user, password) = userinfo.split_once(':').unwrap_or((userinfo, ""));
                    unescapes(user, Mode::UserPassword) && unescapes(password, Mode::UserPassword)
                }
        }
    }
}

/// `parseHost`: a host and an optional numeric port; a bracketed host an
/// IPv6 address, with an optional `%25` zone.
fn is_host(host: &str) -> bool {
    if host.starts_with('[') {
        let Some(close) = host.rfind(']') else {
            return false;
        };
        if !is_optional_port(&host[close + 1..]) {
            return false;
        }
        let literal = &host[1..close];
        let address = literal.find("%25").map_or(literal, |zone| &literal[..zone]);
        if address.parse::<Ipv6Addr>().is_err() {
            return false;
        }
        if let Some(zone) = host[..close].find("%25") {
            return unescapes(&host[..zone], Mode::Host)
                && unescapes(&host[zone..close], Mode::Zone)
                && unescapes(&host[close..], Mode::Host);
        }
    } else if let Some(colon) = host.rfind(':')
        && !is_optional_port(&host[colon..])
    {
        return false;
    }
    unescapes(host, Mode::Host)
}

/// Empty, or `:` and digits.
fn is_optional_port(port: &str) -> bool {
    port.is_empty()
        || port
            .strip_prefix(':')
            .is_some_and(|digits| digits.bytes().all(|b| b.is_ascii_digit()))
}

/// The part of a URL `unescape` reads, which decides what it refuses.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    Path,
    UserPassword,
    Host,
    Zone,
}

/// Whether Go's `unescape` takes `text`: each `%` starts two hex digits;
/// in a host only non-ASCII bytes (and `%25`) are escaped and no other
/// ASCII character Go would escape appears; a zone escapes no such
/// character but a space.
fn unescapes(text: &str, mode: Mode) -> bool {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b == b'%' {
            if i + 2 >= bytes.len() {
                return false;
            }
            let (high, low) = (bytes[i + 1], bytes[i + 2]);
            if !high.is_ascii_hexdigit() || !low.is_ascii_hexdigit() {
                return false;
            }
            let escaped = &text[i..i + 3];
            let value = hex(high) << 4 | hex(low);
            if mode == Mode::Host && hex(high) < 8 && escaped != "%25" {
                return false;
            }
            if mode == Mode::Zone && escaped != "%25" && value != b' ' && host_escapes(value) {
                return false;
            }
            i += 3;
            continue;
        }
        if matches!(mode, Mode::Host | Mode::Zone) && b < 0x80 && host_escapes(b) {
            return false;
        }
        i += 1;
    }
    true
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
}
