//! IP addresses and CIDRs as kube-apiserver reads them where it validates
//! one: `netutils.ParseIPSloppy` and `netutils.ParseCIDRSloppy`
//! (k8s.io/utils/net), Go 1.16's `net.ParseIP` and `net.ParseCIDR` kept
//! for old objects' sake, which read an IPv4 octet's leading zeros as
//! decimal (`010.0.0.1` is 10.0.0.1). Every check of an address in the
//! dev server (validation, custom resources' `ipv4` and `cidr` formats,
//! the Service IP allocator) reads it here.

use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};

/// `netutils.ParseIPSloppy`: IPv4 when a `.` comes before any `:`, its
/// four octets of any number of decimal digits each at most 255; else
/// IPv6, an embedded IPv4 part (`::ffff:010.0.0.1`) read the same way.
pub(crate) fn sloppy_ip(text: &str) -> Option<IpAddr> {
    match text.find(['.', ':']) {
        Some(i) if text.as_bytes()[i] == b'.' => ipv4(text).map(IpAddr::V4),
        Some(_) => ipv6(text).map(IpAddr::V6),
        None => None,
    }
}

/// `netutils.ParseCIDRSloppy`: an address (IPv4 first, then IPv6, as
/// above), `/`, and a prefix length of decimal digits within the
/// address's bits; the address as written (not masked) and the length.
pub(crate) fn sloppy_cidr(text: &str) -> Option<(IpAddr, u32)> {
    let (address, length) = text.split_once('/')?;
    let (address, bits) = match ipv4(address) {
        Some(v4) => (IpAddr::V4(v4), 32),
        None => (IpAddr::V6(ipv6(address)?), 128),
    };
    Some((address, decimal(length, bits)?))
}

/// Go 1.16's `parseIPv4`: four `.`-separated octets of decimal digits.
fn ipv4(text: &str) -> Option<Ipv4Addr> {
    let mut octets = [0u8; 4];
    let mut parts = text.split('.');
    for octet in &mut octets {
        *octet = u8::try_from(decimal(parts.next()?, 255)?).ok()?;
    }
    parts.next().is_none().then_some(Ipv4Addr::from(octets))
}

/// Go 1.16's `parseIPv6`: groups of any number of hex digits up to
/// `ffff` (`::00001` is `::1`), an embedded IPv4 part read as [`ipv4`]
/// reads one.
fn ipv6(text: &str) -> Option<Ipv6Addr> {
    let (head, tail) = text.rsplit_once(':')?;
    let groups = |text: &str| -> Option<String> {
        let groups: Option<Vec<&str>> = text.split(':').map(group).collect();
        Some(groups?.join(":"))
    };
    if tail.contains('.') {
        format!("{}:{}", groups(head)?, ipv4(tail)?).parse().ok()
    } else {
        groups(text)?.parse().ok()
    }
}

/// A group of hex digits with its leading zeros beyond four dropped, as
/// Go's `xtoi` reads it; an empty group (of `::`) as it is.
fn group(digits: &str) -> Option<&str> {
    if digits.len() <= 4 {
        return Some(digits);
    }
    let significant = digits.trim_start_matches('0');
    let kept = &digits[digits.len() - significant.len().max(1)..];
    (kept.len() <= 4).then_some(kept)
}

/// Decimal digits (at least one, leading zeros allowed) of a value at
/// most `most`.
fn decimal(text: &str, most: u32) -> Option<u32> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let mut value: u32 = 0;
    for b in text.bytes() {
        value = value.checked_mul(10)?.checked_add(u32::from(b - b'0'))?;
    }
    (value <= most).then_some(value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_read_as_go_1_16_reads_them() {
        for (text, address) in [
            ("10.0.0.1", "10.0.0.1"),
            ("010.000.0.01", "10.0.0.1"),
            ("0001.2.3.4", "1.2.3.4"),
            ("0.0.0.0", "0.0.0.0"),
            ("::ffff:1.2.3.4", "::ffff:1.2.3.4"),
            ("::ffff:010.0.0.1", "::ffff:10.0.0.1"),
            ("fe80::1", "fe80::1"),
            ("::00001", "::1"),
            ("fe80::0000ffff", "fe80::ffff"),
        ] {
            assert_eq!(sloppy_ip(text), Some(address.parse().unwrap()), "{text}");
        }
        for bad in [
            "",
            "1.2.3",
            "1.2.3.4.5",
            "1.2.3.256",
            "1.2.3.-4",
            " 1.2.3.4",
            "1.2.3.4 ",
            "fe80::1%eth0",
            "::ffff:1.2.3.256",
            "::10000",
            "localhost",
        ] {
            assert_eq!(sloppy_ip(bad), None, "{bad}");
        }
    }

    #[test]
    fn cidrs_keep_their_address_and_length() {
        assert_eq!(
            sloppy_cidr("010.1.2.3/8"),
            Some(("10.1.2.3".parse().unwrap(), 8))
        );
        assert_eq!(
            sloppy_cidr("fd00::/64"),
            Some(("fd00::".parse().unwrap(), 64))
        );
        assert_eq!(
            sloppy_cidr("::ffff:1.2.3.4/96"),
            Some(("::ffff:1.2.3.4".parse().unwrap(), 96))
        );
        assert_eq!(
            sloppy_cidr("1.2.3.4/032"),
            Some(("1.2.3.4".parse().unwrap(), 32))
        );
        for bad in [
            "1.2.3.4",
            "1.2.3.4/33",
            "1.2.3.4/",
            "1.2.3.4/-1",
            "fd00::/129",
            "/8",
        ] {
            assert_eq!(sloppy_cidr(bad), None, "{bad}");
        }
    }
}
