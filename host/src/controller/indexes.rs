//! Declared indexes computed natively: a manifest's index specs become the
//! indexer's index functions, under names private to the guest.

use std::borrow::Cow;

use serde_json::Value;

use crate::informer::indexer::{IndexFunc, index_func};
use crate::informer::object::Object;
use crate::runtime::manifest::IndexSource;

/// The indexer's name for `guest`'s index `index`: guests never see each
/// other's indexes, whatever they name them.
pub fn indexer_name(guest: &str, index: &str) -> String {
    format!("{guest}/{index}")
}

/// The index function of a declared source.
pub fn index_function(source: &IndexSource) -> IndexFunc {
    match source.clone() {
        IndexSource::Label(label) => index_func(move |object: &Object| {
            Ok(object
                .label(&label)
                .map(|v| vec![Cow::Borrowed(v)])
                .unwrap_or_default())
        }),
        IndexSource::Annotation(annotation) => index_func(move |object: &Object| {
            Ok(object
                .annotation(&annotation)
                .map(|v| vec![Cow::Borrowed(v)])
                .unwrap_or_default())
        }),
        IndexSource::OwnerUid => index_func(|object: &Object| {
            Ok(object
                .owner_references()
                .map(|owner| Cow::Borrowed(owner.uid))
                .collect())
        }),
        IndexSource::Field(path) => {
            let segments: Vec<String> = path.split('.').map(str::to_string).collect();
            index_func(move |object: &Object| {
                let value: Value = serde_json::from_str(object.json()).map_err(|e| {
                    crate::informer::indexer::IndexError::Func(format!(
                        "{}: not JSON: {e}",
                        object.key()
                    ))
                })?;
                let mut found = Vec::new();
                collect_strings(&value, &segments, &mut found);
                Ok(found.into_iter().map(Cow::Owned).collect())
            })
        }
    }
}

/// The strings at `path` under `value`, descending into every element of
/// the lists met on the way.
fn collect_strings(value: &Value, path: &[String], out: &mut Vec<String>) {
    match value {
        Value::Array(items) => {
            for item in items {
                collect_strings(item, path, out);
            }
        }
        _ => match path.split_first() {
            None => {
                if let Value::String(s) = value {
                    out.push(s.clone());
                }
            }
            Some((first, rest)) => {
                if let Some(next) = value.get(first) {
                    collect_strings(next, rest, out);
                }
            }
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pod() -> Object {
        Object::from_json(
            r#"{"apiVersion":"v1","kind":"Pod","metadata":{"name":"p","namespace":"ns",
            "labels":{"app":"web"},"annotations":{"team":"a"},
            "ownerReferences":[{"apiVersion":"apps/v1","kind":"ReplicaSet","name":"rs","uid":"u1","controller":true},
                               {"apiVersion":"v1","kind":"Node","name":"n","uid":"u2"}]},
            "spec":{"volumes":[{"name":"a","secret":{"secretName":"s1"}},{"name":"b","configMap":{"name":"c"}},
                               {"name":"c","secret":{"secretName":"s2"}}],"nodeName":"n1"}}"#,
        )
        .unwrap()
    }

    fn values(source: IndexSource) -> Vec<String> {
        let object = pod();
        index_function(&source)(&object)
            .unwrap()
            .into_iter()
            .map(Cow::into_owned)
            .collect()
    }

    #[test]
    fn every_source_indexes_what_it_names() {
        assert_eq!(values(IndexSource::Label("app".into())), ["web"]);
        assert!(values(IndexSource::Label("missing".into())).is_empty());
        assert_eq!(values(IndexSource::Annotation("team".into())), ["a"]);
        assert_eq!(values(IndexSource::OwnerUid), ["u1", "u2"]);
        assert_eq!(values(IndexSource::Field("spec.nodeName".into())), ["n1"]);
        assert_eq!(
            values(IndexSource::Field("spec.volumes.secret.secretName".into())),
            ["s1", "s2"]
        );
        assert!(values(IndexSource::Field("spec.volumes".into())).is_empty());
        assert!(values(IndexSource::Field("spec.nope.x".into())).is_empty());
    }

    #[test]
    fn names_are_private_to_the_guest() {
        assert_ne!(indexer_name("a", "x"), indexer_name("b", "x"));
    }
}
