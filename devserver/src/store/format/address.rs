//! An email address as Go's `net/mail.ParseAddress` reads it, which is
//! what kube-openapi's `email` format asks: one RFC 5322 address, an
//! `addr-spec` (`local@domain`, the domain a dot-atom or a `[...]`
//! literal holding an IP address) or a `name-addr`
//! (`Name <local@domain>`), with comments in parentheses, or a group
//! (`team: a@b.c;`) of exactly one address. Encoded words in names
//! (`=?utf-8?q?...?=`) are checked as Go checks them: one in a charset
//! other than UTF-8, ISO-8859-1 or US-ASCII is an error.

use std::net::IpAddr;

use base64::Engine as _;

/// Whether `text` is a single address `ParseAddress` takes.
pub(super) fn is_email(text: &str) -> bool {
    let mut parser = Parser { s: text.as_bytes() };
    let Ok(addresses) = parser.address(true) else {
        return false;
    };
    parser.skip_cfws() && parser.s.is_empty() && addresses == 1
}

/// The text still to read.
struct Parser<'a> {
    s: &'a [u8],
}

/// A parse that failed; why does not matter here.
struct Invalid;

impl<'a> Parser<'a> {
    /// `parseAddress`: a mailbox, or with `group` a group; the number of
    /// addresses read.
    fn address(&mut self, group: bool) -> Result<usize, Invalid> {
        self.skip_space();
        if self.s.is_empty() {
            return Err(Invalid);
        }
        if self.addr_spec().is_ok() {
            self.skip_space();
            if self.peek() == Some(b'(') {
                self.display_name_comment()?;
            }
            return Ok(1);
        }
        if self.peek() != Some(b'<') {
            self.phrase()?;
        }
        self.skip_space();
        if group && self.consume(b':') {
            return self.group_list();
        }
        if !self.consume(b'<') {
            return Err(Invalid);
        }
        self.addr_spec()?;
        if !self.consume(b'>') {
            return Err(Invalid);
        }
        Ok(1)
    }

    /// `consumeGroupList`, after the `:`.
    fn group_list(&mut self) -> Result<usize, Invalid> {
        let mut count = 0;
        self.skip_space();
        if self.consume(b';') {
            return if self.skip_cfws() {
                Ok(0)
            } else {
                Err(Invalid)
            };
        }
        loop {
            self.skip_space();
            count += self.address(false)?;
            if !self.skip_cfws() {
                return Err(Invalid);
            }
            if self.consume(b';') {
                return if self.skip_cfws() {
                    Ok(count)
                } else {
                    Err(Invalid)
                };
            }
            if !self.consume(b',') {
                return Err(Invalid);
            }
        }
    }

    /// `consumeAddrSpec`: on failure the parser is left where it was.
    fn addr_spec(&mut self) -> Result<(), Invalid> {
        let start = self.s;
        let result = self.addr_spec_parts();
        if result.is_err() {
            self.s = start;
        }
        result
    }

    fn addr_spec_parts(&mut self) -> Result<(), Invalid> {
        self.skip_space();
        if self.s.is_empty() {
            return Err(Invalid);
        }
        if self.peek() == Some(b'"') {
            if self.quoted_string()?.is_empty() {
                return Err(Invalid);
            }
        } else {
            self.atom(true, false)?;
        }
        if !self.consume(b'@') {
            return Err(Invalid);
        }
        self.skip_space();
        if self.s.is_empty() {
            return Err(Invalid);
        }
        if self.peek() == Some(b'[') {
            self.domain_literal()
        } else {
            self.atom(true, false).map(|_| ())
        }
    }

    /// `consumePhrase`: one or more words, the first required.
    fn phrase(&mut self) -> Result<(), Invalid> {
        let mut words = 0;
        loop {
            if words > 0 && !self.skip_cfws() {
                return Err(Invalid);
            }
            self.skip_space();
            if self.s.is_empty() {
                break;
            }
            let word = if self.peek() == Some(b'"') {
                self.quoted_string().map(|_| ())
            } else {
                self.atom(true, true)
                    .and_then(|atom| encoded_word(&atom).map(|_| ()))
            };
            if word.is_err() {
                break;
            }
            words += 1;
        }
        if words == 0 {
            return Err(Invalid);
        }
        Ok(())
    }

    /// `consumeQuotedString`: the text between the quotes, unescaped.
    fn quoted_string(&mut self) -> Result<String, Invalid> {
        let mut i = 1;
        let mut text = String::new();
        let mut escaped = false;
        loop {
            let (c, size) = next_char(&self.s[i..]).ok_or(Invalid)??;
            if escaped {
                if !is_vchar(c) && !is_wsp(c) {
                    return Err(Invalid);
                }
                text.push(c);
                escaped = false;
            } else if is_qtext(c) || is_wsp(c) {
                text.push(c);
            } else if c == '"' {
                break;
            } else if c == '\\' {
                escaped = true;
            } else {
                return Err(Invalid);
            }
            i += size;
        }
        self.s = &self.s[i + 1..];
        Ok(text)
    }

    /// `consumeAtom`: a (dot-)atom; unless `permissive`, without a
    /// leading, trailing or doubled dot.
    fn atom(&mut self, dot: bool, permissive: bool) -> Result<String, Invalid> {
        let mut i = 0;
        while let Some(next) = next_char(&self.s[i..]) {
            let (c, size) = next?;
            if !is_atext(c, dot) {
                break;
            }
            i += size;
        }
        if i == 0 {
            return Err(Invalid);
        }
        let atom = String::from_utf8_lossy(&self.s[..i]).into_owned();
        self.s = &self.s[i..];
        if !permissive && (atom.starts_with('.') || atom.contains("..") || atom.ends_with('.')) {
            return Err(Invalid);
        }
        Ok(atom)
    }

    /// `consumeDomainLiteral`: `[IPv6:...]` with any IP address, else
    /// `[...]` with an IPv4 address (or an IPv4-mapped IPv6 one).
    fn domain_literal(&mut self) -> Result<(), Invalid> {
        if !self.consume(b'[') {
            return Err(Invalid);
        }
        let mut text = String::new();
        loop {
            if self.s.is_empty() {
                return Err(Invalid);
            }
            if self.peek() == Some(b']') {
                break;
            }
            let (c, size) = next_char(self.s).ok_or(Invalid)??;
            if !is_dtext(c) {
                return Err(Invalid);
            }
            text.push(c);
            self.s = &self.s[size..];
        }
        self.consume(b']');
        let valid = match text.strip_prefix("IPv6:") {
            Some(address) => address.parse::<IpAddr>().is_ok(),
            None => match text.parse::<IpAddr>() {
                Ok(IpAddr::V4(_)) => true,
                Ok(IpAddr::V6(v6)) => v6.to_ipv4_mapped().is_some(),
                Err(_) => false,
            },
        };
        if valid { Ok(()) } else { Err(Invalid) }
    }

    /// `consumeDisplayNameComment`, at the `(`.
    fn display_name_comment(&mut self) -> Result<(), Invalid> {
        self.consume(b'(');
        let comment = self.comment().ok_or(Invalid)?;
        let comment = String::from_utf8_lossy(&comment).into_owned();
        for word in comment.split([' ', '\t']).filter(|w| !w.is_empty()) {
            encoded_word(word)?;
        }
        Ok(())
    }

    /// `consumeComment`, after the `(`: its bytes, if it closes.
    fn comment(&mut self) -> Option<Vec<u8>> {
        let mut depth = 1;
        let mut comment = Vec::new();
        while let Some(&b) = self.s.first() {
            if depth == 0 {
                break;
            }
            if b == b'\\' && self.s.len() > 1 {
                self.s = &self.s[1..];
            } else if b == b'(' {
                depth += 1;
            } else if b == b')' {
                depth -= 1;
            }
            if depth > 0 {
                comment.push(self.s[0]);
            }
            self.s = &self.s[1..];
        }
        (depth == 0).then_some(comment)
    }

    /// `skipCFWS`: spaces and comments; false on a comment that does not
    /// close.
    fn skip_cfws(&mut self) -> bool {
        self.skip_space();
        while self.consume(b'(') {
            if self.comment().is_none() {
                return false;
            }
            self.skip_space();
        }
        true
    }

    fn skip_space(&mut self) {
        while let Some(b' ' | b'\t') = self.s.first() {
            self.s = &self.s[1..];
        }
    }

    fn peek(&self) -> Option<u8> {
        self.s.first().copied()
    }

    fn consume(&mut self, b: u8) -> bool {
        if self.peek() == Some(b) {
            self.s = &self.s[1..];
            true
        } else {
            false
        }
    }
}

/// The character at the start of `s` and its length: `None` at the end,
/// `Err` on bytes that are not UTF-8.
fn next_char(s: &[u8]) -> Option<Result<(char, usize), Invalid>> {
    if s.is_empty() {
        return None;
    }
    let valid = match std::str::from_utf8(&s[..s.len().min(4)]) {
        Ok(text) => text,
        Err(e) => std::str::from_utf8(&s[..e.valid_up_to()]).unwrap_or_default(),
    };
    Some(
        valid
            .chars()
            .next()
            .map(|c| (c, c.len_utf8()))
            .ok_or(Invalid),
    )
}

/// `decodeRFC2047Word`: whether `word` is an encoded word (`=?cs?q?..?=`);
/// an error when it is one in a charset Go does not convert.
fn encoded_word(word: &str) -> Result<bool, Invalid> {
    if word.len() < 8
        || !word.starts_with("=?")
        || !word.ends_with("?=")
        || word.matches('?').count() != 4
    {
        return Ok(false);
    }
    let inner = &word[2..word.len() - 2];
    let (charset, rest) = inner.split_once('?').unwrap_or((inner, ""));
    let (encoding, text) = rest.split_once('?').unwrap_or((rest, ""));
    if charset.is_empty() || encoding.len() != 1 {
        return Ok(false);
    }
    let decodes = match encoding {
        "b" | "B" => base64::engine::general_purpose::STANDARD
            .decode(text)
            .is_ok(),
        "q" | "Q" => q_decodes(text.as_bytes()),
        _ => false,
    };
    if !decodes {
        return Ok(false);
    }
    if ["utf-8", "iso-8859-1", "us-ascii"]
        .iter()
        .any(|known| charset.eq_ignore_ascii_case(known))
    {
        Ok(true)
    } else {
        Err(Invalid)
    }
}

/// Whether Q-encoded `text` decodes: `=XX` escapes and printable ASCII.
fn q_decodes(text: &[u8]) -> bool {
    let mut i = 0;
    while i < text.len() {
        match text[i] {
            b'=' => {
                if i + 2 >= text.len()
                    || !text[i + 1].is_ascii_hexdigit()
                    || !text[i + 2].is_ascii_hexdigit()
                {
                    return false;
                }
                i += 2;
            }
            b' '..=b'~' | b'\n' | b'\r' | b'\t' => {}
            _ => return false,
        }
        i += 1;
    }
    true
}

/// RFC 5322 atext (with `dot`, `.` too).
fn is_atext(c: char, dot: bool) -> bool {
    match c {
        '.' => dot,
        '(' | ')' | '<' | '>' | '[' | ']' | ':' | ';' | '@' | '\\' | ',' | '"' => false,
        _ => is_vchar(c),
    }
}

fn is_qtext(c: char) -> bool {
    c != '\\' && c != '"' && is_vchar(c)
}

fn is_dtext(c: char) -> bool {
    c != '[' && c != ']' && c != '\\' && is_vchar(c)
}

/// Visible ASCII, or any character beyond ASCII (RFC 6532).
fn is_vchar(c: char) -> bool {
    ('!'..='~').contains(&c) || !c.is_ascii()
}

fn is_wsp(c: char) -> bool {
    c == ' ' || c == '\t'
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn addresses_go_takes_and_refuses() {
        let good = [
            "blah@gmail.com",
            "test@d.verylongtoplevel",
            "email+tag@gmail.com",
            r#"" "@example.com"#,
            r#""Abc\@def"@example.com"#,
            r#""Fred Bloggs"@example.com"#,
            "customer/department=shipping@example.com",
            "!#$%&'*+-/=?^_`{}|~@example.com",
            "postmaster@☁→❄→☃→☀→☺→☂→☹→✝.ws",
            "root@localhost",
            "John Doe <john@example.com>",
            "<john@example.com>",
            "john@example.com (John Doe)",
            "john@[192.0.2.1]",
            "john@[IPv6:2001:db8::1]",
            "team: john@example.com;",
            "=?utf-8?q?J=C3=B6rg?= <j@example.com>",
        ];
        for text in good {
            assert!(is_email(text), "{text}");
        }
        let bad = [
            "",
            "nobody",
            "somebody@somewhere@com",
            "a..b@example.com",
            ".a@example.com",
            "a@example.com.",
            r#"""@example.com"#,
            "John Doe",
            "John <john@example.com",
            "john@[300.0.0.1]",
            "john@[2001:db8::1]",
            "team: ;",
            "team: a@b.c, d@e.f;",
            "a@b.c, d@e.f",
            "a@b.c (unclosed",
            "=?koi8-r?q?x?= <j@example.com>",
        ];
        for text in bad {
            assert!(!is_email(text), "{text}");
        }
    }
}
