//! Label selectors in the API server's string form: `a=b` (or `a==b`),
//! `a!=b`, `a in (x,y)`, `a notin (x)`, `a` (exists) and `!a` (does not
//! exist), joined by commas; every requirement must hold and the empty
//! selector matches everything. Keys and values are checked as the API
//! server checks them. The recon host filters guests' cache reads and the
//! dev server's lists and watches with it; in the guest SDK, the fake
//! cluster filters lists with it and guests can match labels they hold.

use std::collections::BTreeMap;
use std::fmt;

/// Why a selector does not parse: the selector and the problem.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseError(pub String);

impl fmt::Display for ParseError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for ParseError {}

type Result<T> = std::result::Result<T, ParseError>;

/// One requirement of a selector.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Requirement {
    /// `key=value` or `key==value`.
    Equals(String, String),
    /// `key!=value`: also holds when the label is absent.
    NotEquals(String, String),
    /// `key in (a,b)`.
    In(String, Vec<String>),
    /// `key notin (a,b)`: also holds when the label is absent.
    NotIn(String, Vec<String>),
    /// `key`: the label exists.
    Exists(String),
    /// `!key`: the label does not exist.
    DoesNotExist(String),
}

/// A parsed label selector: every requirement must hold.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Selector {
    /// The requirements, in the order written.
    pub requirements: Vec<Requirement>,
}

/// Something labels can be looked up in.
pub trait Labels {
    /// The value of the label `key`, if set.
    fn label(&self, key: &str) -> Option<&str>;
}

impl Labels for BTreeMap<String, String> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).map(String::as_str)
    }
}

impl Labels for [(String, String)] {
    fn label(&self, key: &str) -> Option<&str> {
        self.iter().find(|(k, _)| k == key).map(|(_, v)| v.as_str())
    }
}

impl Labels for Vec<(String, String)> {
    fn label(&self, key: &str) -> Option<&str> {
        self.as_slice().label(key)
    }
}

/// `metadata.labels` of an object held as JSON (non-string values are absent).
impl Labels for serde_json::Map<String, serde_json::Value> {
    fn label(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(serde_json::Value::as_str)
    }
}

impl Requirement {
    /// Whether `labels` satisfy the requirement.
    pub fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        match self {
            Requirement::Equals(k, v) => labels.label(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => labels.label(k) != Some(v.as_str()),
            Requirement::In(k, values) => labels
                .label(k)
                .is_some_and(|actual| values.iter().any(|v| v == actual)),
            Requirement::NotIn(k, values) => !labels
                .label(k)
                .is_some_and(|actual| values.iter().any(|v| v == actual)),
            Requirement::Exists(k) => labels.label(k).is_some(),
            Requirement::DoesNotExist(k) => labels.label(k).is_none(),
        }
    }
}

impl fmt::Display for Requirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Requirement::Equals(k, v) => write!(f, "{k}={v}"),
            Requirement::NotEquals(k, v) => write!(f, "{k}!={v}"),
            Requirement::In(k, values) => write!(f, "{k} in ({})", values.join(",")),
            Requirement::NotIn(k, values) => write!(f, "{k} notin ({})", values.join(",")),
            Requirement::Exists(k) => f.write_str(k),
            Requirement::DoesNotExist(k) => write!(f, "!{k}"),
        }
    }
}

impl fmt::Display for Selector {
    /// The string form, which [`Selector::parse`] reads back.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, requirement) in self.requirements.iter().enumerate() {
            if i > 0 {
                f.write_str(",")?;
            }
            write!(f, "{requirement}")?;
        }
        Ok(())
    }
}

impl Selector {
    /// Parses the string form; the error names the selector and the problem.
    pub fn parse(text: &str) -> Result<Self> {
        let tokens = tokenize(text);
        let mut parser = Parser {
            tokens: &tokens,
            at: 0,
            text,
        };
        let mut requirements = Vec::new();
        if parser.peek().is_none() {
            return Ok(Self { requirements });
        }
        loop {
            requirements.push(parser.requirement()?);
            match parser.next() {
                None => return Ok(Self { requirements }),
                Some(Token::Comma) => {}
                Some(other) => return Err(parser.error(&format!("expected ',', found {other}"))),
            }
        }
    }

    /// Whether `labels` satisfy every requirement.
    pub fn matches(&self, labels: &(impl Labels + ?Sized)) -> bool {
        self.requirements.iter().all(|r| r.matches(labels))
    }

    /// True for the empty selector, which matches everything.
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Token<'a> {
    Word(&'a str),
    Not,
    Equals,
    DoubleEquals,
    NotEquals,
    Comma,
    Open,
    Close,
}

impl fmt::Display for Token<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Token::Word(w) => write!(f, "{w:?}"),
            Token::Not => f.write_str("'!'"),
            Token::Equals => f.write_str("'='"),
            Token::DoubleEquals => f.write_str("'=='"),
            Token::NotEquals => f.write_str("'!='"),
            Token::Comma => f.write_str("','"),
            Token::Open => f.write_str("'('"),
            Token::Close => f.write_str("')'"),
        }
    }
}

fn is_special(c: char) -> bool {
    matches!(c, '!' | '=' | ',' | '(' | ')') || c.is_whitespace()
}

fn tokenize(text: &str) -> Vec<Token<'_>> {
    let mut tokens = Vec::new();
    let mut rest = text;
    while let Some(c) = rest.chars().next() {
        let (token, len) = match c {
            c if c.is_whitespace() => (None, c.len_utf8()),
            '!' if rest.starts_with("!=") => (Some(Token::NotEquals), 2),
            '!' => (Some(Token::Not), 1),
            '=' if rest.starts_with("==") => (Some(Token::DoubleEquals), 2),
            '=' => (Some(Token::Equals), 1),
            ',' => (Some(Token::Comma), 1),
            '(' => (Some(Token::Open), 1),
            ')' => (Some(Token::Close), 1),
            _ => {
                let len = rest.find(is_special).unwrap_or(rest.len());
                (Some(Token::Word(&rest[..len])), len)
            }
        };
        tokens.extend(token);
        rest = &rest[len..];
    }
    tokens
}

struct Parser<'t, 'a> {
    tokens: &'t [Token<'a>],
    at: usize,
    text: &'t str,
}

impl<'a> Parser<'_, 'a> {
    fn peek(&self) -> Option<Token<'a>> {
        self.tokens.get(self.at).copied()
    }

    fn next(&mut self) -> Option<Token<'a>> {
        let token = self.peek();
        self.at += 1;
        token
    }

    fn error(&self, why: &str) -> ParseError {
        ParseError(format!("label selector {:?}: {why}", self.text))
    }

    fn key(&mut self) -> Result<String> {
        match self.next() {
            Some(Token::Word(word)) => {
                check_key(word).map_err(|why| self.error(&why))?;
                Ok(word.to_string())
            }
            Some(other) => Err(self.error(&format!("expected a label key, found {other}"))),
            None => Err(self.error("expected a label key, found the end")),
        }
    }

    /// A value after `=`, `==` or `!=`; the empty value is allowed.
    fn value(&mut self) -> Result<String> {
        match self.peek() {
            Some(Token::Word(word)) => {
                self.at += 1;
                check_value(word).map_err(|why| self.error(&why))?;
                Ok(word.to_string())
            }
            Some(Token::Comma) | None => Ok(String::new()),
            Some(other) => Err(self.error(&format!("expected a label value, found {other}"))),
        }
    }

    /// `( value, ... )` after `in` or `notin`; as in the API server, `()`
    /// is the set holding the empty value.
    fn values(&mut self) -> Result<Vec<String>> {
        if self.next() != Some(Token::Open) {
            return Err(self.error("expected '(' after in/notin"));
        }
        let mut values = Vec::new();
        loop {
            match self.peek() {
                Some(Token::Comma) | Some(Token::Close) => values.push(String::new()),
                _ => values.push(self.value()?),
            }
            match self.next() {
                Some(Token::Comma) => {}
                Some(Token::Close) => return Ok(values),
                _ => return Err(self.error("expected ',' or ')' in a value set")),
            }
        }
    }

    fn requirement(&mut self) -> Result<Requirement> {
        if self.peek() == Some(Token::Not) {
            self.at += 1;
            return Ok(Requirement::DoesNotExist(self.key()?));
        }
        let key = self.key()?;
        match self.peek() {
            None | Some(Token::Comma) => Ok(Requirement::Exists(key)),
            Some(Token::Equals) | Some(Token::DoubleEquals) => {
                self.at += 1;
                Ok(Requirement::Equals(key, self.value()?))
            }
            Some(Token::NotEquals) => {
                self.at += 1;
                Ok(Requirement::NotEquals(key, self.value()?))
            }
            Some(Token::Word("in")) => {
                self.at += 1;
                Ok(Requirement::In(key, self.values()?))
            }
            Some(Token::Word("notin")) => {
                self.at += 1;
                Ok(Requirement::NotIn(key, self.values()?))
            }
            Some(other) => Err(self.error(&format!(
                "expected =, ==, !=, in or notin after {key:?}, found {other}"
            ))),
        }
    }
}

/// A name segment of a key, or a non-empty value: at most 63 characters,
/// alphanumerics with `-`, `_`, `.` inside.
fn valid_name(s: &str) -> bool {
    let alnum = |c: Option<char>| c.is_some_and(|c| c.is_ascii_alphanumeric());
    !s.is_empty()
        && s.len() <= 63
        && alnum(s.chars().next())
        && alnum(s.chars().next_back())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// A DNS subdomain (the prefix of a key): lowercase labels joined by dots.
fn valid_prefix(s: &str) -> bool {
    s.len() <= 253
        && s.split('.').all(|label| {
            !label.is_empty()
                && label.len() <= 63
                && !label.starts_with('-')
                && !label.ends_with('-')
                && label
                    .chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '-')
        })
}

fn check_key(key: &str) -> std::result::Result<(), String> {
    let valid = match key.split_once('/') {
        Some((prefix, name)) => valid_prefix(prefix) && valid_name(name),
        None => valid_name(key),
    };
    if valid {
        Ok(())
    } else {
        Err(format!("invalid label key {key:?}"))
    }
}

fn check_value(value: &str) -> std::result::Result<(), String> {
    if value.is_empty() || valid_name(value) {
        Ok(())
    } else {
        Err(format!("invalid label value {value:?}"))
    }
}

#[cfg(test)]
mod tests {
    use proptest::prelude::*;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn s(v: &str) -> String {
        v.to_string()
    }

    #[test]
    fn parses_every_operator() {
        let sel =
            Selector::parse("a=1, b==2,c!=3, d in (x, y),e notin (z),f,!g,recon.dev/x=,h in ()")
                .unwrap();
        assert_eq!(
            sel.requirements,
            vec![
                Requirement::Equals(s("a"), s("1")),
                Requirement::Equals(s("b"), s("2")),
                Requirement::NotEquals(s("c"), s("3")),
                Requirement::In(s("d"), vec![s("x"), s("y")]),
                Requirement::NotIn(s("e"), vec![s("z")]),
                Requirement::Exists(s("f")),
                Requirement::DoesNotExist(s("g")),
                Requirement::Equals(s("recon.dev/x"), s("")),
                Requirement::In(s("h"), vec![s("")]),
            ]
        );
    }

    #[test]
    fn the_empty_selector_matches_everything() {
        for text in ["", "   "] {
            let sel = Selector::parse(text).unwrap();
            assert!(sel.is_empty());
            assert!(sel.matches(&labels(&[])));
            assert!(sel.matches(&labels(&[("a", "b")])));
        }
    }

    #[test]
    fn matching_follows_the_api_server() {
        let l = labels(&[("app", "web"), ("tier", "front")]);
        let m = |text: &str| Selector::parse(text).unwrap().matches(&l);
        assert!(m("app=web"));
        assert!(!m("app=db"));
        assert!(m("app!=db"));
        assert!(m("missing!=x"), "!= holds when the label is absent");
        assert!(m("tier in (front,back)"));
        assert!(!m("tier in (back)"));
        assert!(!m("missing in (x)"));
        assert!(m("tier notin (back)"));
        assert!(
            m("missing notin (x)"),
            "notin holds when the label is absent"
        );
        assert!(!m("tier notin (front)"));
        assert!(m("app"));
        assert!(!m("missing"));
        assert!(m("!missing"));
        assert!(!m("!app"));
        assert!(m("app=web,tier=front"));
        assert!(!m("app=web,tier=back"));
        assert!(m("example.com/key-1 notin (a)"));
    }

    #[test]
    fn malformed_selectors_are_invalid() {
        for text in [
            "a in (",
            "a in (x",
            "a in x",
            "a notin",
            "a b",
            "=b",
            "!",
            "a,",
            ",a",
            "a=b=c",
            "a=(b)",
            "-a=b",
            "a=b-",
            "Example.com/a=b",
            "a/b/c",
            "a=b)",
        ] {
            let error = Selector::parse(text).expect_err(text);
            assert!(
                error.0.contains(&format!("{text:?}")),
                "the error names the selector: {error}"
            );
        }
    }

    #[test]
    fn json_labels_match() {
        let json = serde_json::json!({"app": "web", "n": 1});
        let map = json.as_object().unwrap();
        assert!(Selector::parse("app=web").unwrap().matches(map));
        assert!(
            Selector::parse("!n").unwrap().matches(map),
            "non-strings are not labels"
        );
    }

    fn name() -> impl Strategy<Value = String> {
        "[a-z0-9]([a-z0-9._-]{0,8}[a-z0-9])?"
    }

    fn key() -> impl Strategy<Value = String> {
        (
            proptest::option::of("[a-z0-9]{1,5}(\\.[a-z0-9]{1,5}){0,2}"),
            name(),
        )
            .prop_map(|(prefix, name)| match prefix {
                Some(prefix) => format!("{prefix}/{name}"),
                None => name,
            })
    }

    fn value() -> impl Strategy<Value = String> {
        prop_oneof![Just(String::new()), name()]
    }

    fn requirement() -> impl Strategy<Value = Requirement> {
        let values = || proptest::collection::vec(value(), 1..4);
        prop_oneof![
            (key(), value()).prop_map(|(k, v)| Requirement::Equals(k, v)),
            (key(), value()).prop_map(|(k, v)| Requirement::NotEquals(k, v)),
            (key(), values()).prop_map(|(k, vs)| Requirement::In(k, vs)),
            (key(), values()).prop_map(|(k, vs)| Requirement::NotIn(k, vs)),
            key().prop_map(Requirement::Exists),
            key().prop_map(Requirement::DoesNotExist),
        ]
    }

    fn selector() -> impl Strategy<Value = Selector> {
        proptest::collection::vec(requirement(), 0..5)
            .prop_map(|requirements| Selector { requirements })
    }

    /// The meaning of a requirement, stated independently of `matches`.
    fn holds(requirement: &Requirement, labels: &BTreeMap<String, String>) -> bool {
        match requirement {
            Requirement::Equals(k, v) => labels.get(k) == Some(v),
            Requirement::NotEquals(k, v) => labels.get(k) != Some(v),
            Requirement::In(k, vs) => labels.get(k).is_some_and(|a| vs.contains(a)),
            Requirement::NotIn(k, vs) => labels.get(k).is_none_or(|a| !vs.contains(a)),
            Requirement::Exists(k) => labels.contains_key(k),
            Requirement::DoesNotExist(k) => !labels.contains_key(k),
        }
    }

    proptest! {
        #[test]
        fn printing_then_parsing_gives_the_selector_back(sel in selector()) {
            prop_assert_eq!(Selector::parse(&sel.to_string()).unwrap(), sel);
        }

        #[test]
        fn extra_whitespace_changes_nothing(sel in selector()) {
            let spaced = sel
                .to_string()
                .replace(',', " , ")
                .replace('(', " ( ")
                .replace(')', " ) ")
                .replace("!=", " != ");
            prop_assert_eq!(Selector::parse(&spaced).unwrap(), sel);
        }

        #[test]
        fn a_selector_matches_exactly_when_every_requirement_holds(
            sel in selector(),
            pairs in proptest::collection::btree_map(key(), value(), 0..6),
        ) {
            let expected = sel.requirements.iter().all(|r| holds(r, &pairs));
            prop_assert_eq!(sel.matches(&pairs), expected);
        }

        #[test]
        fn parsing_arbitrary_text_never_panics(text in "[a-z!=,() /.-]{0,24}") {
            let _ = Selector::parse(&text);
        }
    }
}
