//! Reading an object's metadata without unwrapping its options
//! ([`ObjectMetaExt`] on k8s-openapi's `ObjectMeta`), and the merge patches
//! that put labels or annotations on an object only when they are missing
//! ([`Context::ensure_labels`](crate::Context::ensure_labels)).

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::{ObjectMeta, OwnerReference};
use serde_json::{Map, Value};

/// Lookups every reconciler makes on `metadata`.
pub trait ObjectMetaExt {
    /// The value of the label `key`.
    fn label(&self, key: &str) -> Option<&str>;
    /// The value of the annotation `key`.
    fn annotation(&self, key: &str) -> Option<&str>;
    /// True when the finalizer `name` is set.
    fn has_finalizer(&self, name: &str) -> bool;
    /// The owner reference with `controller: true`, if any.
    fn controller_owner(&self) -> Option<&OwnerReference>;
    /// True once deletion has been requested (`deletionTimestamp` is set).
    fn is_being_deleted(&self) -> bool;
}

impl ObjectMetaExt for ObjectMeta {
    fn label(&self, key: &str) -> Option<&str> {
        self.labels.as_ref()?.get(key).map(String::as_str)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.annotations.as_ref()?.get(key).map(String::as_str)
    }

    fn has_finalizer(&self, name: &str) -> bool {
        self.finalizers.iter().flatten().any(|f| f == name)
    }

    fn controller_owner(&self) -> Option<&OwnerReference> {
        self.owner_references
            .iter()
            .flatten()
            .find(|owner| owner.controller == Some(true))
    }

    fn is_being_deleted(&self) -> bool {
        self.deletion_timestamp.is_some()
    }
}

/// The merge patch that sets those of `wanted` that `current` lacks or
/// holds with another value, under `metadata.<field>`; `None` when every
/// one is already there.
pub(crate) fn missing_entries(
    field: &str,
    current: Option<&BTreeMap<String, String>>,
    wanted: &[(&str, &str)],
) -> Option<Value> {
    let missing: Map<String, Value> = wanted
        .iter()
        .filter(|(key, value)| current.and_then(|c| c.get(*key)).map(String::as_str) != Some(value))
        .map(|(key, value)| (key.to_string(), Value::String(value.to_string())))
        .collect();
    if missing.is_empty() {
        return None;
    }
    let mut metadata = Map::new();
    metadata.insert(field.to_string(), Value::Object(missing));
    let mut patch = Map::new();
    patch.insert("metadata".to_string(), Value::Object(metadata));
    Some(Value::Object(patch))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lookups_see_through_absent_maps_and_lists() {
        let empty = ObjectMeta::default();
        assert_eq!(empty.label("a"), None);
        assert_eq!(empty.annotation("a"), None);
        assert!(!empty.has_finalizer("f"));
        assert!(empty.controller_owner().is_none());
        assert!(!empty.is_being_deleted());

        let meta: ObjectMeta = serde_json::from_value(json!({
            "labels": {"app": "web"},
            "annotations": {"team": "a"},
            "finalizers": ["f"],
            "deletionTimestamp": "2026-01-01T00:00:00Z",
            "ownerReferences": [
                {"apiVersion": "v1", "kind": "Node", "name": "n", "uid": "1"},
                {"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "rs", "uid": "2",
                 "controller": true}
            ]
        }))
        .unwrap();
        assert_eq!(meta.label("app"), Some("web"));
        assert_eq!(meta.annotation("team"), Some("a"));
        assert!(meta.has_finalizer("f") && !meta.has_finalizer("g"));
        assert_eq!(meta.controller_owner().unwrap().name, "rs");
        assert!(meta.is_being_deleted());
    }

    #[test]
    fn only_missing_or_different_entries_are_patched() {
        let current = BTreeMap::from([
            ("a".to_string(), "1".to_string()),
            ("b".to_string(), "2".to_string()),
        ]);
        assert_eq!(
            missing_entries(
                "labels",
                Some(&current),
                &[("a", "1"), ("b", "3"), ("c", "4")]
            ),
            Some(json!({"metadata": {"labels": {"b": "3", "c": "4"}}}))
        );
        assert_eq!(
            missing_entries("labels", Some(&current), &[("a", "1")]),
            None
        );
        assert_eq!(
            missing_entries("annotations", None, &[("a", "1")]),
            Some(json!({"metadata": {"annotations": {"a": "1"}}}))
        );
    }
}
