//! The built-in resource types and the types a CRD serves.

use std::sync::Arc;

use serde_json::Value;

use super::{ResourceType, ScalePaths};

const VERBS: &[&str] = &[
    "create",
    "delete",
    "deletecollection",
    "get",
    "list",
    "patch",
    "update",
    "watch",
];

/// The built-in kinds whose DELETE answers with the deleted object, as
/// kube-apiserver's registries set `ReturnDeletedObject` (pods, services,
/// nodes, persistent volumes and their claims, storage classes and the
/// like, of which the dev server serves these); every other built-in kind
/// answers with a `Status` once the object is gone.
const RETURN_DELETED_OBJECT: &[(&str, &str)] = &[
    ("", "namespaces"),
    ("", "pods"),
    ("", "serviceaccounts"),
    ("", "services"),
];

/// The built-in kinds a PUT creates when missing, as their strategies'
/// `AllowCreateOnUpdate` says (Services, Events, Leases, RBAC objects);
/// the other built-in kinds, CRDs and custom resources answer 404.
const CREATE_ON_UPDATE: &[(&str, &str)] = &[
    ("", "services"),
    ("", "events"),
    ("events.k8s.io", "events"),
    ("coordination.k8s.io", "leases"),
    ("rbac.authorization.k8s.io", "roles"),
    ("rbac.authorization.k8s.io", "rolebindings"),
    ("rbac.authorization.k8s.io", "clusterroles"),
    ("rbac.authorization.k8s.io", "clusterrolebindings"),
];

/// The built-in kinds `kubectl get all` lists (the real server's `all` category).
fn in_category_all(group: &str, plural: &str) -> bool {
    matches!(
        (group, plural),
        ("", "pods" | "services" | "replicationcontrollers")
            | (
                "apps",
                "deployments" | "replicasets" | "statefulsets" | "daemonsets"
            )
            | ("batch", "jobs" | "cronjobs")
            | ("autoscaling", "horizontalpodautoscalers")
    )
}

#[allow(clippy::too_many_arguments)]
fn builtin(
    group: &str,
    version: &str,
    kind: &str,
    plural: &str,
    namespaced: bool,
    status: bool,
    scale: bool,
    short_names: &[&str],
) -> ResourceType {
    ResourceType {
        group: group.into(),
        version: version.into(),
        kind: kind.into(),
        plural: plural.into(),
        singular: kind.to_ascii_lowercase(),
        namespaced,
        status_subresource: status,
        scale_subresource: scale,
        scale_paths: None,
        list_kind: format!("{kind}List"),
        short_names: short_names.iter().map(|s| s.to_string()).collect(),
        categories: if in_category_all(group, plural) {
            vec!["all".to_string()]
        } else {
            Vec::new()
        },
        verbs: VERBS.iter().map(|s| s.to_string()).collect(),
        returns_deleted_object: RETURN_DELETED_OBJECT.contains(&(group, plural)),
        create_on_update: CREATE_ON_UPDATE.contains(&(group, plural)),
        unconditional_update: recon_api_semantics::object::unconditional_update_allowed(
            group, kind,
        ),
        schema: None,
        printer_columns: None,
    }
}

/// Every built-in kind the store serves.
pub fn builtin_types() -> Vec<ResourceType> {
    vec![
        builtin(
            "",
            "v1",
            "Namespace",
            "namespaces",
            false,
            true,
            false,
            &["ns"],
        ),
        builtin(
            "",
            "v1",
            "ConfigMap",
            "configmaps",
            true,
            false,
            false,
            &["cm"],
        ),
        builtin("", "v1", "Secret", "secrets", true, false, false, &[]),
        builtin("", "v1", "Pod", "pods", true, true, false, &["po"]),
        builtin("", "v1", "Service", "services", true, true, false, &["svc"]),
        builtin(
            "",
            "v1",
            "ServiceAccount",
            "serviceaccounts",
            true,
            false,
            false,
            &["sa"],
        ),
        builtin("", "v1", "Event", "events", true, false, false, &["ev"]),
        builtin(
            "events.k8s.io",
            "v1",
            "Event",
            "events",
            true,
            false,
            false,
            &["ev"],
        ),
        builtin(
            "apps",
            "v1",
            "Deployment",
            "deployments",
            true,
            true,
            true,
            &["deploy"],
        ),
        builtin(
            "apps",
            "v1",
            "ReplicaSet",
            "replicasets",
            true,
            true,
            true,
            &["rs"],
        ),
        builtin(
            "apps",
            "v1",
            "StatefulSet",
            "statefulsets",
            true,
            true,
            true,
            &["sts"],
        ),
        builtin(
            "apps",
            "v1",
            "DaemonSet",
            "daemonsets",
            true,
            true,
            false,
            &["ds"],
        ),
        builtin(
            "coordination.k8s.io",
            "v1",
            "Lease",
            "leases",
            true,
            false,
            false,
            &[],
        ),
        // RBAC objects are stored and served (so `kubectl apply -k deploy/kustomize`
        // works) but never enforced: the dev server does no authorization.
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRole",
            "clusterroles",
            false,
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "ClusterRoleBinding",
            "clusterrolebindings",
            false,
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "Role",
            "roles",
            true,
            false,
            false,
            &[],
        ),
        builtin(
            "rbac.authorization.k8s.io",
            "v1",
            "RoleBinding",
            "rolebindings",
            true,
            false,
            false,
            &[],
        ),
        builtin(
            "apiextensions.k8s.io",
            "v1",
            "CustomResourceDefinition",
            "customresourcedefinitions",
            false,
            true,
            false,
            &["crd", "crds"],
        ),
    ]
}

/// Whether a type is the CRD type itself.
pub fn is_crd_type(group: &str, plural: &str) -> bool {
    group == "apiextensions.k8s.io" && plural == "customresourcedefinitions"
}

/// The validated essentials of a CRD.
pub struct CrdSpec {
    pub group: String,
    pub plural: String,
    pub kind: String,
    pub singular: String,
    pub list_kind: String,
    pub short_names: Vec<String>,
    pub namespaced: bool,
    /// The served versions' resource types.
    pub served: Vec<ResourceType>,
}

fn str_at<'a>(v: &'a Value, ptr: &str) -> Option<&'a str> {
    v.pointer(ptr)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

/// Reads a CRD object; the error lists the invalid fields (422).
pub fn parse_crd(crd: &Value) -> Result<CrdSpec, String> {
    let group = str_at(crd, "/spec/group").ok_or("spec.group: Required value")?;
    let plural = str_at(crd, "/spec/names/plural").ok_or("spec.names.plural: Required value")?;
    let kind = str_at(crd, "/spec/names/kind").ok_or("spec.names.kind: Required value")?;
    let name = str_at(crd, "/metadata/name").unwrap_or("");
    if name != format!("{plural}.{group}") {
        return Err(format!(
            "metadata.name: Invalid value: {name:?}: must be spec.names.plural+\".\"+spec.group"
        ));
    }
    let namespaced = match str_at(crd, "/spec/scope") {
        Some("Namespaced") => true,
        Some("Cluster") => false,
        other => {
            return Err(format!(
                "spec.scope: Unsupported value: {:?}: supported values: \"Cluster\", \"Namespaced\"",
                other.unwrap_or("")
            ));
        }
    };
    let singular = str_at(crd, "/spec/names/singular")
        .map(str::to_string)
        .unwrap_or_else(|| kind.to_ascii_lowercase());
    let list_kind = str_at(crd, "/spec/names/listKind")
        .map(str::to_string)
        .unwrap_or_else(|| format!("{kind}List"));
    let strings = |pointer: &str| -> Vec<String> {
        crd.pointer(pointer)
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(|s| s.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let short_names = strings("/spec/names/shortNames");
    let categories = strings("/spec/names/categories");
    let versions = crd
        .pointer("/spec/versions")
        .and_then(Value::as_array)
        .filter(|v| !v.is_empty())
        .ok_or(
            "spec.versions: Invalid value: must have exactly one version marked as storage version",
        )?;
    let mut served = Vec::new();
    for v in versions {
        let vname = str_at(v, "/name").ok_or("spec.versions[].name: Required value")?;
        if !v.get("served").and_then(Value::as_bool).unwrap_or(false) {
            continue;
        }
        served.push(ResourceType {
            group: group.into(),
            version: vname.into(),
            kind: kind.into(),
            plural: plural.into(),
            singular: singular.clone(),
            namespaced,
            status_subresource: v.pointer("/subresources/status").is_some(),
            scale_subresource: v.pointer("/subresources/scale").is_some(),
            scale_paths: v
                .pointer("/subresources/scale")
                .map(|scale| Arc::new(ScalePaths::of(scale))),
            list_kind: list_kind.clone(),
            short_names: short_names.clone(),
            categories: categories.clone(),
            verbs: VERBS.iter().map(|s| s.to_string()).collect(),
            // apiextensions' custom resource store returns them.
            returns_deleted_object: true,
            // A POST creates one; every update names the version it read.
            create_on_update: false,
            unconditional_update: recon_api_semantics::object::unconditional_update_allowed(
                group, kind,
            ),
            schema: v
                .pointer("/schema/openAPIV3Schema")
                .filter(|s| s.is_object())
                .map(|s| Arc::new(s.clone())),
            printer_columns: Some(Arc::new(
                v.get("additionalPrinterColumns")
                    .and_then(Value::as_array)
                    .cloned()
                    .unwrap_or_default(),
            )),
        });
    }
    Ok(CrdSpec {
        group: group.into(),
        plural: plural.into(),
        kind: kind.into(),
        singular,
        list_kind,
        short_names,
        namespaced,
        served,
    })
}

/// The built-in type served as `plural`, for tests.
#[cfg(test)]
pub(crate) fn builtin_type(plural: &str) -> ResourceType {
    builtin_types()
        .into_iter()
        .find(|t| t.plural == plural)
        .expect("a built-in plural")
}
