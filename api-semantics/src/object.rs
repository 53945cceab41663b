//! What a write changes, by the API server's rules: the metadata an update
//! cannot change, whether it bumps `metadata.generation`, and whether it
//! changes nothing at all (and so keeps the resourceVersion).

use serde_json::{Map, Value};

/// Whether the part of an object whose change bumps `generation` changed
/// from `old` to `new`: `spec` when either side has one, else everything
/// but metadata and status.
pub fn spec_changed(old: &Value, new: &Value) -> bool {
    if old.get("spec").is_some() || new.get("spec").is_some() {
        old.get("spec") != new.get("spec")
    } else {
        !equal_except(old, new, |k| {
            matches!(k, "metadata" | "status" | "apiVersion" | "kind")
        })
    }
}

/// Whether two objects are equal but for `metadata.resourceVersion`.
pub fn equal_but_resource_version(a: &Value, b: &Value) -> bool {
    equal_except(a, b, |k| k == "metadata")
        && match (a.get("metadata"), b.get("metadata")) {
            (Some(ma), Some(mb)) => equal_except(ma, mb, |k| k == "resourceVersion"),
            (ma, mb) => ma == mb,
        }
}

/// The metadata an update cannot change: the server keeps the stored
/// object's values (or their absence) whatever the body says.
pub const KEPT_ON_UPDATE: [&str; 5] = [
    "uid",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "generation",
];

/// Sets in `meta` (an update's metadata) the [`KEPT_ON_UPDATE`] members of
/// the stored object's `stored` metadata, removing those it lacks.
pub fn keep_server_metadata(stored: &Map<String, Value>, meta: &mut Map<String, Value>) {
    for field in KEPT_ON_UPDATE {
        match stored.get(field) {
            Some(value) => meta.insert(field.to_string(), value.clone()),
            None => meta.remove(field),
        };
    }
}

/// Whether `a` and `b` are equal leaving out the top-level members `skip`
/// names (compared in place: no copies).
fn equal_except(a: &Value, b: &Value, skip: impl Fn(&str) -> bool) -> bool {
    match (a.as_object(), b.as_object()) {
        (Some(a), Some(b)) => {
            let kept = |m: &Map<String, Value>| m.keys().filter(|k| !skip(k)).count();
            kept(a) == kept(b)
                && a.iter()
                    .filter(|(k, _)| !skip(k))
                    .all(|(k, v)| b.get(k) == Some(v))
        }
        _ => a == b,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn generation_follows_spec_or_everything_but_metadata_and_status() {
        let deployment = |replicas: i64, label: &str| {
            json!({"kind": "Deployment", "metadata": {"labels": {"a": label}},
                   "spec": {"replicas": replicas}, "status": {"replicas": 0}})
        };
        assert!(!spec_changed(&deployment(1, "x"), &deployment(1, "y")));
        assert!(spec_changed(&deployment(1, "x"), &deployment(2, "x")));
        // A spec added or removed is a change.
        assert!(spec_changed(&json!({"data": 1}), &json!({"spec": {}})));
        // Without a spec, anything but metadata, status and the type.
        assert!(spec_changed(&json!({"data": 1}), &json!({"data": 2})));
        assert!(!spec_changed(
            &json!({"apiVersion": "v1", "data": 1, "metadata": {"name": "a"}}),
            &json!({"apiVersion": "v2", "data": 1, "metadata": {"name": "b"}, "status": 1})
        ));
    }

    #[test]
    fn write_comparisons_leave_out_only_what_they_name() {
        let a = json!({"metadata": {"name": "a", "resourceVersion": "1"}, "data": {"k": "v"}});
        let b = json!({"metadata": {"name": "a", "resourceVersion": "2"}, "data": {"k": "v"}});
        let no_rv = json!({"metadata": {"name": "a"}, "data": {"k": "v"}});
        assert!(equal_but_resource_version(&a, &b));
        assert!(equal_but_resource_version(&a, &no_rv));
        assert!(!equal_but_resource_version(
            &a,
            &json!({"metadata": {"name": "a"}, "data": {"k": "w"}})
        ));
        // Only the resourceVersion goes: an empty metadata is not a missing one.
        let only_rv = json!({"metadata": {"resourceVersion": "1"}, "data": {"k": "v"}});
        assert!(!equal_but_resource_version(
            &only_rv,
            &json!({"data": {"k": "v"}})
        ));

        // Without spec: everything but metadata, status, apiVersion and kind.
        assert!(!spec_changed(
            &json!({"kind": "ConfigMap", "metadata": {"generation": 1}, "status": {"x": 1}, "data": 1}),
            &json!({"metadata": {"generation": 2}, "data": 1}),
        ));
        assert!(spec_changed(&json!({"data": 1}), &json!({"data": 2})));
        assert!(spec_changed(
            &json!({"data": 1}),
            &json!({"data": 1, "extra": 2})
        ));
        // With spec on either side: spec alone.
        assert!(!spec_changed(
            &json!({"spec": {"a": 1}, "data": 1}),
            &json!({"spec": {"a": 1}, "data": 2}),
        ));
        assert!(spec_changed(
            &json!({"data": 1}),
            &json!({"spec": {}, "data": 1})
        ));
    }

    #[test]
    fn an_update_keeps_the_server_owned_metadata() {
        let stored = json!({"uid": "u", "generation": 3, "name": "a"});
        let mut meta =
            json!({"uid": "forged", "deletionTimestamp": "t", "name": "a", "labels": {}});
        keep_server_metadata(stored.as_object().unwrap(), meta.as_object_mut().unwrap());
        assert_eq!(
            meta,
            json!({"uid": "u", "generation": 3, "name": "a", "labels": {}})
        );
    }
}
