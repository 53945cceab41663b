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

/// Where a built-in kind's objects live.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Scope {
    Namespaced,
    Cluster,
}

/// The subresources a built-in kind serves.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Subresources {
    Neither,
    Status,
    StatusAndScale,
}

/// What sets a built-in kind apart from most, as its registry in
/// kube-apiserver says.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Trait {
    /// In the `all` category, which `kubectl get all` lists.
    All,
    /// A DELETE answers with the deleted object (the registry's
    /// `ReturnDeletedObject`); other kinds answer with a `Status` once the
    /// object is gone.
    ReturnsDeleted,
    /// A PUT creates the object when it is missing (the strategy's
    /// `AllowCreateOnUpdate`); for other kinds, CRDs and custom resources
    /// it is a 404.
    CreatesOnUpdate,
}

use Scope::{Cluster, Namespaced};
use Subresources::{Neither, Status, StatusAndScale};
use Trait::{All, CreatesOnUpdate, ReturnsDeleted};

/// A built-in kind's group/version, kind, resource, scope, subresources,
/// short names and traits.
type BuiltIn = (
    &'static str,
    &'static str,
    &'static str,
    Scope,
    Subresources,
    &'static [&'static str],
    &'static [Trait],
);

/// Every built-in kind the store serves, as kube-apiserver v1.33 serves it:
/// group/version, kind, resource, scope, subresources, short names and
/// traits. Other built-in kinds are 404 unless a CRD serves them.
#[rustfmt::skip]
const BUILT_IN: &[BuiltIn] = &[
    ("v1",                            "Namespace",                 "namespaces",                 Cluster,     Status,          &["ns"],         &[ReturnsDeleted]),
    ("v1",                            "Node",                      "nodes",                      Cluster,     Status,          &["no"],         &[]),
    ("v1",                            "PersistentVolume",          "persistentvolumes",          Cluster,     Status,          &["pv"],         &[ReturnsDeleted]),
    ("v1",                            "ConfigMap",                 "configmaps",                 Namespaced,  Neither,         &["cm"],         &[]),
    ("v1",                            "Secret",                    "secrets",                    Namespaced,  Neither,         &[],             &[]),
    ("v1",                            "Pod",                       "pods",                       Namespaced,  Status,          &["po"],         &[All, ReturnsDeleted]),
    ("v1",                            "Service",                   "services",                   Namespaced,  Status,          &["svc"],        &[All, ReturnsDeleted, CreatesOnUpdate]),
    ("v1",                            "ServiceAccount",            "serviceaccounts",            Namespaced,  Neither,         &["sa"],         &[ReturnsDeleted]),
    ("v1",                            "Event",                     "events",                     Namespaced,  Neither,         &["ev"],         &[CreatesOnUpdate]),
    ("v1",                            "Endpoints",                 "endpoints",                  Namespaced,  Neither,         &["ep"],         &[CreatesOnUpdate]),
    ("v1",                            "PersistentVolumeClaim",     "persistentvolumeclaims",     Namespaced,  Status,          &["pvc"],        &[ReturnsDeleted]),
    ("v1",                            "ReplicationController",     "replicationcontrollers",     Namespaced,  StatusAndScale,  &["rc"],         &[All]),
    ("v1",                            "ResourceQuota",             "resourcequotas",             Namespaced,  Status,          &["quota"],      &[ReturnsDeleted]),
    ("v1",                            "LimitRange",                "limitranges",                Namespaced,  Neither,         &["limits"],     &[CreatesOnUpdate]),
    ("events.k8s.io/v1",              "Event",                     "events",                     Namespaced,  Neither,         &["ev"],         &[CreatesOnUpdate]),
    ("apps/v1",                       "Deployment",                "deployments",                Namespaced,  StatusAndScale,  &["deploy"],     &[All]),
    ("apps/v1",                       "ReplicaSet",                "replicasets",                Namespaced,  StatusAndScale,  &["rs"],         &[All]),
    ("apps/v1",                       "StatefulSet",               "statefulsets",               Namespaced,  StatusAndScale,  &["sts"],        &[All]),
    ("apps/v1",                       "DaemonSet",                 "daemonsets",                 Namespaced,  Status,          &["ds"],         &[All]),
    ("batch/v1",                      "Job",                       "jobs",                       Namespaced,  Status,          &[],             &[All]),
    ("batch/v1",                      "CronJob",                   "cronjobs",                   Namespaced,  Status,          &["cj"],         &[All]),
    ("autoscaling/v2",                "HorizontalPodAutoscaler",   "horizontalpodautoscalers",   Namespaced,  Status,          &["hpa"],        &[All]),
    ("policy/v1",                     "PodDisruptionBudget",       "poddisruptionbudgets",       Namespaced,  Status,          &["pdb"],        &[]),
    ("discovery.k8s.io/v1",           "EndpointSlice",             "endpointslices",             Namespaced,  Neither,         &[],             &[]),
    ("networking.k8s.io/v1",          "Ingress",                   "ingresses",                  Namespaced,  Status,          &["ing"],        &[]),
    ("networking.k8s.io/v1",          "NetworkPolicy",             "networkpolicies",            Namespaced,  Neither,         &["netpol"],     &[]),
    ("networking.k8s.io/v1",          "IngressClass",              "ingressclasses",             Cluster,     Neither,         &[],             &[]),
    ("storage.k8s.io/v1",             "StorageClass",              "storageclasses",             Cluster,     Neither,         &["sc"],         &[ReturnsDeleted]),
    ("scheduling.k8s.io/v1",          "PriorityClass",             "priorityclasses",            Cluster,     Neither,         &["pc"],         &[]),
    ("coordination.k8s.io/v1",        "Lease",                     "leases",                     Namespaced,  Neither,         &[],             &[CreatesOnUpdate]),
    // RBAC objects are stored and served (so `kubectl apply -k deploy/kustomize`
    // works) but never enforced: the dev server does no authorization.
    ("rbac.authorization.k8s.io/v1",  "ClusterRole",               "clusterroles",               Cluster,     Neither,         &[],             &[CreatesOnUpdate]),
    ("rbac.authorization.k8s.io/v1",  "ClusterRoleBinding",        "clusterrolebindings",        Cluster,     Neither,         &[],             &[CreatesOnUpdate]),
    ("rbac.authorization.k8s.io/v1",  "Role",                      "roles",                      Namespaced,  Neither,         &[],             &[CreatesOnUpdate]),
    ("rbac.authorization.k8s.io/v1",  "RoleBinding",               "rolebindings",               Namespaced,  Neither,         &[],             &[CreatesOnUpdate]),
    ("apiextensions.k8s.io/v1",       "CustomResourceDefinition",  "customresourcedefinitions",  Cluster,     Status,          &["crd", "crds"], &[]),
];

/// Every built-in kind the store serves.
pub fn builtin_types() -> Vec<ResourceType> {
    BUILT_IN
        .iter()
        .map(
            |&(group_version, kind, plural, scope, subresources, short_names, traits)| {
                let (group, version) = group_version.split_once('/').unwrap_or(("", group_version));
                ResourceType {
                    group: group.into(),
                    version: version.into(),
                    kind: kind.into(),
                    plural: plural.into(),
                    singular: kind.to_ascii_lowercase(),
                    namespaced: scope == Namespaced,
                    status_subresource: subresources != Neither,
                    scale_subresource: subresources == StatusAndScale,
                    scale_paths: None,
                    list_kind: format!("{kind}List"),
                    short_names: short_names.iter().map(|s| s.to_string()).collect(),
                    categories: if traits.contains(&All) {
                        vec!["all".to_string()]
                    } else {
                        Vec::new()
                    },
                    verbs: VERBS.iter().map(|s| s.to_string()).collect(),
                    returns_deleted_object: traits.contains(&ReturnsDeleted),
                    create_on_update: traits.contains(&CreatesOnUpdate),
                    unconditional_update: recon_api_semantics::object::unconditional_update_allowed(
                        group, kind,
                    ),
                    schema: None,
                    printer_columns: None,
                }
            },
        )
        .collect()
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
