//! What a write changes, by the API server's rules: the metadata an update
//! cannot change, whether a kind has a `metadata.generation` and which
//! changes bump it, whether an update must name the version it read, and
//! whether a write changes nothing at all (and so keeps the
//! resourceVersion).

use serde_json::{Map, Value};

use crate::is_built_in_group;

/// How a kind's `metadata.generation` moves, as kube-apiserver's REST
/// strategy for the kind moves it (1.28): set to 1 at create and bumped by
/// the changes named, or absent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Generation {
    /// No generation: ConfigMap, Secret, Service, Pod, Namespace, Lease,
    /// Event and every other built-in kind not named below.
    None,
    /// Bumped when `spec` changes: ReplicaSet, StatefulSet, DaemonSet, Job,
    /// CronJob, ReplicationController, PodDisruptionBudget, Ingress,
    /// NetworkPolicy, CustomResourceDefinition, webhook configurations.
    Spec,
    /// Bumped when `spec` or `metadata.annotations` change: Deployment
    /// (its annotations are copied to its ReplicaSets).
    SpecOrAnnotations,
    /// Bumped when anything but metadata changes, or `metadata.labels`:
    /// EndpointSlice (which has no status).
    AllButMetadataOrLabels,
    /// Set to 1 at create and never bumped: PriorityClass.
    CreateOnly,
    /// Bumped when anything but metadata and status changes: custom
    /// resources (whatever group they are in, unless a built-in group).
    AllButMetadataAndStatus,
}

impl Generation {
    /// The rule of the kind `kind` in the API group `group`.
    pub fn of(group: &str, kind: &str) -> Generation {
        match (group, kind) {
            ("apps", "Deployment") => Generation::SpecOrAnnotations,
            ("apps", "ReplicaSet" | "StatefulSet" | "DaemonSet")
            | ("batch", "Job" | "CronJob")
            | ("", "ReplicationController")
            | ("policy", "PodDisruptionBudget")
            | ("networking.k8s.io", "Ingress" | "IngressClass" | "NetworkPolicy")
            | ("apiextensions.k8s.io", "CustomResourceDefinition")
            | (
                "admissionregistration.k8s.io",
                "ValidatingWebhookConfiguration" | "MutatingWebhookConfiguration",
            ) => Generation::Spec,
            ("discovery.k8s.io", "EndpointSlice") => Generation::AllButMetadataOrLabels,
            ("scheduling.k8s.io", "PriorityClass") => Generation::CreateOnly,
            _ if is_built_in_group(group) => Generation::None,
            _ => Generation::AllButMetadataAndStatus,
        }
    }

    /// The generation of a newly created object: 1, or none.
    pub fn at_create(self) -> Option<i64> {
        (self != Generation::None).then_some(1)
    }

    /// Whether a write from `old` to `new` bumps the generation.
    pub fn bumped(self, old: &Value, new: &Value) -> bool {
        match self {
            Generation::None | Generation::CreateOnly => false,
            Generation::Spec => old.get("spec") != new.get("spec"),
            Generation::SpecOrAnnotations => {
                let annotations = |object: &Value| {
                    object
                        .pointer("/metadata/annotations")
                        .filter(|a| a.as_object().is_some_and(|a| !a.is_empty()))
                        .cloned()
                };
                old.get("spec") != new.get("spec") || annotations(old) != annotations(new)
            }
            Generation::AllButMetadataOrLabels => {
                let labels = |object: &Value| {
                    object
                        .pointer("/metadata/labels")
                        .filter(|l| l.as_object().is_some_and(|l| !l.is_empty()))
                        .cloned()
                };
                !equal_except(old, new, |k| {
                    matches!(k, "metadata" | "apiVersion" | "kind")
                }) || labels(old) != labels(new)
            }
            Generation::AllButMetadataAndStatus => !equal_except(old, new, |k| {
                matches!(k, "metadata" | "status" | "apiVersion" | "kind")
            }),
        }
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

/// Whether an update of a `group`/`kind` object may leave out
/// `metadata.resourceVersion` and overwrite whatever is stored (the
/// strategy's `AllowUnconditionalUpdate`). Leases, PodDisruptionBudgets,
/// CRDs and custom resources may not: their updates name the version they
/// read, else the server answers 422 (`metadata.resourceVersion: Invalid
/// value: 0x0: must be specified for an update`).
pub fn unconditional_update_allowed(group: &str, kind: &str) -> bool {
    crate::kind::is_built_in_group(group)
        && !matches!(
            (group, kind),
            ("coordination.k8s.io", "Lease")
                | ("policy", "PodDisruptionBudget")
                | ("apiextensions.k8s.io", "CustomResourceDefinition")
        )
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
    fn leases_crds_and_custom_resources_take_no_unconditional_update() {
        assert!(unconditional_update_allowed("", "ConfigMap"));
        assert!(unconditional_update_allowed("apps", "Deployment"));
        assert!(!unconditional_update_allowed(
            "coordination.k8s.io",
            "Lease"
        ));
        assert!(!unconditional_update_allowed(
            "apiextensions.k8s.io",
            "CustomResourceDefinition"
        ));
        assert!(!unconditional_update_allowed(
            "policy",
            "PodDisruptionBudget"
        ));
        assert!(!unconditional_update_allowed("example.com", "Widget"));
    }

    #[test]
    fn each_kind_has_its_strategy_s_generation() {
        assert_eq!(Generation::of("", "ConfigMap"), Generation::None);
        assert_eq!(Generation::of("", "Pod"), Generation::None);
        assert_eq!(
            Generation::of("coordination.k8s.io", "Lease"),
            Generation::None
        );
        assert_eq!(
            Generation::of("apps", "Deployment"),
            Generation::SpecOrAnnotations
        );
        assert_eq!(Generation::of("apps", "ReplicaSet"), Generation::Spec);
        assert_eq!(
            Generation::of("apiextensions.k8s.io", "CustomResourceDefinition"),
            Generation::Spec
        );
        // Custom resources, in groups of their own or under k8s.io.
        for group in ["samplecontroller.k8s.io", "example.com"] {
            assert_eq!(
                Generation::of(group, "Foo"),
                Generation::AllButMetadataAndStatus
            );
        }
        assert_eq!(
            Generation::of("networking.k8s.io", "IngressClass"),
            Generation::Spec
        );
        assert_eq!(
            Generation::of("discovery.k8s.io", "EndpointSlice"),
            Generation::AllButMetadataOrLabels
        );
        assert_eq!(
            Generation::of("scheduling.k8s.io", "PriorityClass"),
            Generation::CreateOnly
        );
        assert_eq!(Generation::None.at_create(), None);
        assert_eq!(Generation::Spec.at_create(), Some(1));
        assert_eq!(Generation::CreateOnly.at_create(), Some(1));
    }

    #[test]
    fn what_bumps_the_generation_depends_on_the_rule() {
        let deployment = |replicas: i64, label: &str, note: Option<&str>| {
            let mut d = json!({"kind": "Deployment", "metadata": {"labels": {"a": label}},
                   "spec": {"replicas": replicas}, "status": {"replicas": 0}});
            if let Some(note) = note {
                d["metadata"]["annotations"] = json!({"note": note});
            }
            d
        };
        let rules = [Generation::Spec, Generation::SpecOrAnnotations];
        for rule in rules {
            assert!(!rule.bumped(&deployment(1, "x", None), &deployment(1, "y", None)));
            assert!(rule.bumped(&deployment(1, "x", None), &deployment(2, "x", None)));
            // A spec added or removed is a change.
            assert!(rule.bumped(&json!({"data": 1}), &json!({"spec": {}})));
        }
        // Annotations: the Deployment's rule alone; none and empty are equal.
        let (plain, noted) = (deployment(1, "x", None), deployment(1, "x", Some("n")));
        assert!(Generation::SpecOrAnnotations.bumped(&plain, &noted));
        assert!(!Generation::Spec.bumped(&plain, &noted));
        let mut empty = plain.clone();
        empty["metadata"]["annotations"] = json!({});
        assert!(!Generation::SpecOrAnnotations.bumped(&plain, &empty));
        // Custom resources: anything but metadata, status and the type.
        let custom = Generation::AllButMetadataAndStatus;
        assert!(custom.bumped(&json!({"data": 1}), &json!({"data": 2})));
        assert!(custom.bumped(
            &json!({"spec": {"a": 1}, "data": 1}),
            &json!({"spec": {"a": 1}, "data": 2})
        ));
        assert!(!custom.bumped(
            &json!({"apiVersion": "v1", "data": 1, "metadata": {"name": "a"}}),
            &json!({"apiVersion": "v2", "data": 1, "metadata": {"name": "b"}, "status": 1})
        ));
        // No generation, or one set at create only: nothing bumps it.
        for rule in [Generation::None, Generation::CreateOnly] {
            assert!(!rule.bumped(&json!({"value": 1}), &json!({"value": 2})));
        }
        // An EndpointSlice's: anything but metadata, and its labels (none
        // and empty are equal), not its annotations.
        let slice = |port: i64, labels: Value, annotations: Value| {
            json!({"metadata": {"labels": labels, "annotations": annotations},
                   "addressType": "IPv4", "ports": [{"port": port}]})
        };
        let rule = Generation::AllButMetadataOrLabels;
        let base = slice(80, json!({"a": "1"}), json!({}));
        assert!(rule.bumped(&base, &slice(81, json!({"a": "1"}), json!({}))));
        assert!(rule.bumped(&base, &slice(80, json!({"a": "2"}), json!({}))));
        assert!(!rule.bumped(&base, &slice(80, json!({"a": "1"}), json!({"n": "x"}))));
        assert!(!rule.bumped(
            &slice(80, json!({}), json!({})),
            &slice(80, Value::Null, json!({}))
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
