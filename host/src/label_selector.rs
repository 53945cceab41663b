//! Label selectors as the API server parses them: `k=v`, `k==v`, `k!=v`,
//! `k in (a,b)`, `k notin (a,b)`, `k` (exists) and `!k` (does not exist),
//! joined by commas. Shared by the dev server's lists and watches and the
//! host's cache reads for guests.

/// One requirement of a label selector.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requirement {
    Equals(String, String),
    NotEquals(String, String),
    In(String, Vec<String>),
    NotIn(String, Vec<String>),
    Exists(String),
    DoesNotExist(String),
}

/// A parsed label selector: every requirement must hold. Empty matches all.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct LabelSelector {
    pub requirements: Vec<Requirement>,
}

fn valid_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= 317
        && key
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | '/'))
        && key
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
}

fn valid_value(value: &str) -> bool {
    value.len() <= 63
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// Splits on commas that are not inside parentheses.
fn split_top_level(s: &str) -> Result<Vec<&str>, String> {
    let mut parts = Vec::new();
    let mut depth = 0i32;
    let mut start = 0;
    for (i, c) in s.char_indices() {
        match c {
            '(' => depth += 1,
            ')' => {
                depth -= 1;
                if depth < 0 {
                    return Err("unexpected ')'".into());
                }
            }
            ',' if depth == 0 => {
                parts.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    if depth != 0 {
        return Err("unclosed '('".into());
    }
    parts.push(&s[start..]);
    Ok(parts)
}

fn check_key(key: &str) -> Result<String, String> {
    if valid_key(key) {
        Ok(key.to_string())
    } else {
        Err(format!("invalid label key {key:?}"))
    }
}

fn check_value(value: &str) -> Result<String, String> {
    if valid_value(value) {
        Ok(value.to_string())
    } else {
        Err(format!("invalid label value {value:?}"))
    }
}

fn parse_set(key: &str, rest: &str) -> Result<Vec<String>, String> {
    let rest = rest.trim();
    let inner = rest
        .strip_prefix('(')
        .and_then(|r| r.strip_suffix(')'))
        .ok_or_else(|| format!("expected '(' value list ')' after {key:?}"))?;
    let values: Result<Vec<String>, String> =
        inner.split(',').map(|v| check_value(v.trim())).collect();
    let values = values?;
    if values.is_empty() || (values.len() == 1 && values[0].is_empty()) {
        return Err(format!("empty value list for {key:?}"));
    }
    Ok(values)
}

fn parse_requirement(part: &str) -> Result<Requirement, String> {
    let part = part.trim();
    if part.is_empty() {
        return Err("empty requirement".into());
    }
    if let Some(key) = part.strip_prefix('!') {
        return Ok(Requirement::DoesNotExist(check_key(key.trim())?));
    }
    for (op, ctor) in [("!=", 0u8), ("==", 1), ("=", 2)] {
        if let Some((k, v)) = part.split_once(op) {
            let key = check_key(k.trim())?;
            let value = check_value(v.trim())?;
            return Ok(match ctor {
                0 => Requirement::NotEquals(key, value),
                _ => Requirement::Equals(key, value),
            });
        }
    }
    let mut words = part.splitn(2, char::is_whitespace);
    let key = words.next().unwrap_or("");
    let rest = words.next().unwrap_or("").trim_start();
    if rest.is_empty() {
        if key.contains('(') || key.contains(')') {
            return Err(format!("invalid label key {key:?}"));
        }
        return Ok(Requirement::Exists(check_key(key)?));
    }
    let key = check_key(key)?;
    if let Some(set) = rest.strip_prefix("notin") {
        Ok(Requirement::NotIn(key.clone(), parse_set(&key, set)?))
    } else if let Some(set) = rest.strip_prefix("in") {
        Ok(Requirement::In(key.clone(), parse_set(&key, set)?))
    } else {
        Err(format!(
            "unknown operator in {part:?}: expected =, ==, !=, in, notin"
        ))
    }
}

impl LabelSelector {
    /// Parses a selector string; the error names the problem.
    pub fn parse(s: &str) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(Self::default());
        }
        let requirements = split_top_level(s)?
            .into_iter()
            .map(parse_requirement)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Self { requirements })
    }

    /// True when the selector has no requirements (it matches everything).
    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Whether labels looked up through `get` satisfy every requirement.
    pub fn matches<'a>(&self, get: impl Fn(&str) -> Option<&'a str>) -> bool {
        self.requirements.iter().all(|r| match r {
            Requirement::Equals(k, v) => get(k) == Some(v.as_str()),
            Requirement::NotEquals(k, v) => get(k) != Some(v.as_str()),
            Requirement::In(k, vs) => get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::NotIn(k, vs) => !get(k).is_some_and(|x| vs.iter().any(|v| v == x)),
            Requirement::Exists(k) => get(k).is_some(),
            Requirement::DoesNotExist(k) => get(k).is_none(),
        })
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
        pairs
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect()
    }

    fn get<'a>(labels: &'a BTreeMap<String, String>) -> impl Fn(&str) -> Option<&'a str> {
        move |key| labels.get(key).map(String::as_str)
    }

    #[test]
    fn label_selector_parses_every_operator() {
        let s = LabelSelector::parse("a=1,b==2,c!=3,d in (x, y),e notin (z),f,!g").unwrap();
        assert_eq!(
            s.requirements,
            vec![
                Requirement::Equals("a".into(), "1".into()),
                Requirement::Equals("b".into(), "2".into()),
                Requirement::NotEquals("c".into(), "3".into()),
                Requirement::In("d".into(), vec!["x".into(), "y".into()]),
                Requirement::NotIn("e".into(), vec!["z".into()]),
                Requirement::Exists("f".into()),
                Requirement::DoesNotExist("g".into()),
            ]
        );
        let o = labels(&[("a", "1"), ("b", "2"), ("c", "4"), ("d", "y"), ("f", "")]);
        assert!(s.matches(get(&o)));
        assert!(!s.matches(get(&labels(&[("a", "1")]))));
    }

    #[test]
    fn label_selector_matching_semantics() {
        let o = labels(&[("app", "web"), ("tier", "front")]);
        let m = |s: &str| LabelSelector::parse(s).unwrap().matches(get(&o));
        assert!(m(""));
        assert!(m("app=web"));
        assert!(!m("app=db"));
        assert!(m("app!=db"));
        assert!(m("missing!=x"));
        assert!(m("app in (db,web)"));
        assert!(!m("app notin (db,web)"));
        assert!(m("missing notin (a)"));
        assert!(!m("missing in (a)"));
        assert!(m("tier"));
        assert!(!m("!tier"));
        assert!(m("!missing"));
        assert!(m("example.com/key-1 notin (a)"));
    }

    #[test]
    fn label_selector_errors_name_the_problem() {
        for bad in [
            "a in (x",
            "a in x",
            "a in ()",
            "=x",
            "a=b c",
            "a foo (x)",
            "a,,b",
            "a=)",
            "-a",
        ] {
            let err = LabelSelector::parse(bad).unwrap_err();
            assert!(!err.is_empty(), "{bad}");
        }
        assert!(LabelSelector::parse("a in (x").unwrap_err().contains("("));
        assert!(LabelSelector::parse("a=b c").unwrap_err().contains("b c"));
    }
}
