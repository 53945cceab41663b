//! The strings at dot-separated field paths of an object, as field
//! indexes read them (`spec.nodeName`, `spec.volumes.configMap.name`):
//! every list met on the way is descended into, element by element, and
//! the strings found at a path's end are its values (a list of strings
//! there gives each). Numbers, booleans, nulls and objects at the end give
//! nothing.
//!
//! The walk is one pass that follows the paths and skips everything else
//! without building it, over JSON text ([`field_values`], the host's cache)
//! or a parsed value ([`field_values_in`], the SDK's fake cluster).

use std::borrow::Cow;
use std::fmt;

use serde::de::{DeserializeSeed, Deserializer, IgnoredAny, MapAccess, SeqAccess, Visitor};
use serde_json::Value;

/// A dot-separated field path as its segments.
pub fn segments(path: &str) -> Vec<String> {
    path.split('.').map(str::to_string).collect()
}

/// The strings at each dot-separated `paths` (as segments) of `json`,
/// descending into every element of the lists met on the way; one pass,
/// and nothing off the paths is built.
pub fn field_values(paths: &[Vec<String>], json: &str) -> serde_json::Result<Vec<Vec<String>>> {
    let mut deserializer = serde_json::Deserializer::from_str(json);
    let found = walk(paths, &mut deserializer)?;
    deserializer.end()?;
    Ok(found)
}

/// The strings at each of `paths` (as segments) in what `deserializer`
/// holds.
fn walk<'de, D: Deserializer<'de>>(
    paths: &[Vec<String>],
    deserializer: D,
) -> Result<Vec<Vec<String>>, D::Error> {
    let mut found = vec![Vec::new(); paths.len()];
    let active: Vec<usize> = (0..paths.len()).collect();
    Walk {
        paths,
        active: &active,
        depth: 0,
        found: &mut found,
    }
    .deserialize(deserializer)?;
    Ok(found)
}

/// One step of the walk: the paths still followed, how many of their
/// segments are behind, and where their strings go.
struct Walk<'w> {
    paths: &'w [Vec<String>],
    active: &'w [usize],
    depth: usize,
    found: &'w mut Vec<Vec<String>>,
}

impl Walk<'_> {
    fn string(self, value: &str) {
        for &path in self.active {
            if self.paths[path].len() == self.depth {
                self.found[path].push(value.to_string());
            }
        }
    }
}

impl<'de> DeserializeSeed<'de> for Walk<'_> {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Walk<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("JSON")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, value: &str) -> Result<(), E> {
        self.string(value);
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut items: A) -> Result<(), A::Error> {
        while items
            .next_element_seed(Walk {
                paths: self.paths,
                active: self.active,
                depth: self.depth,
                found: &mut *self.found,
            })?
            .is_some()
        {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut members: A) -> Result<(), A::Error> {
        let mut next = Vec::new();
        while let Some(Key(key)) = members.next_key()? {
            next.clear();
            next.extend(self.active.iter().copied().filter(|&path| {
                self.paths[path]
                    .get(self.depth)
                    .is_some_and(|segment| *segment == key)
            }));
            if next.is_empty() {
                members.next_value::<IgnoredAny>()?;
            } else {
                members.next_value_seed(Walk {
                    paths: self.paths,
                    active: &next,
                    depth: self.depth + 1,
                    found: &mut *self.found,
                })?;
            }
        }
        Ok(())
    }
}

/// A member name, borrowed from the JSON unless it has escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> serde::Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl<'de> Visitor<'de> for KeyVisitor {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a member name")
            }
            fn visit_borrowed_str<E>(self, v: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(v)))
            }
            fn visit_str<E>(self, v: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(v.to_string())))
            }
        }
        deserializer.deserialize_str(KeyVisitor)
    }
}

/// The strings at each of `paths` (as segments) in `value`, as
/// [`field_values`] finds them in its JSON text.
pub fn field_values_in(paths: &[Vec<String>], value: &Value) -> Vec<Vec<String>> {
    walk(paths, value).expect("a JSON value walks without error")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_values_handle_escapes_nesting_and_reject_bad_json() {
        let paths = |p: &[&str]| -> Vec<Vec<String>> { p.iter().map(|p| segments(p)).collect() };
        let json =
            r#"{"a\u0062":{"c":["x",{"d":"y"},["z"]]},"ab":{"c":"w"},"n":1,"t":true,"u":null}"#;
        assert_eq!(
            field_values(&paths(&["ab.c", "n", "u", "ab", "ab.c.d"]), json).unwrap(),
            vec![
                vec!["x".to_string(), "z".into(), "w".into()],
                vec![],
                vec![],
                vec![],
                vec!["y".into()]
            ]
        );
        assert!(field_values(&paths(&["a"]), "{\"a\": ").is_err());
        assert!(field_values(&paths(&["a"]), "{} trailing").is_err());
    }

    #[test]
    fn a_parsed_value_gives_what_its_text_gives() {
        let json = r#"{"spec":{"volumes":[{"configMap":{"name":"a"}},{"secret":{"secretName":"s"}},{"configMap":{"name":"b"}}],"nodeName":"n"},"metadata":{"ownerReferences":[{"uid":"u1"},{"uid":"u2"}]}}"#;
        let paths: Vec<Vec<String>> = [
            "spec.volumes.configMap.name",
            "spec.nodeName",
            "metadata.ownerReferences.uid",
            "spec.missing",
        ]
        .iter()
        .map(|p| segments(p))
        .collect();
        let value: Value = serde_json::from_str(json).unwrap();
        assert_eq!(
            field_values_in(&paths, &value),
            field_values(&paths, json).unwrap()
        );
        assert_eq!(
            field_values_in(&paths, &value)[0],
            ["a".to_string(), "b".to_string()]
        );
    }
}
