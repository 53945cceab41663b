//! A kind of object: its API group, version and kind ([`Gvk`]), and
//! whether its group is one the API server serves itself.

use std::fmt;

/// A group, version and kind; the core group is `""`.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
pub struct Gvk {
    /// API group, `""` for the core group.
    pub group: String,
    /// Version, e.g. `v1`.
    pub version: String,
    /// Kind, e.g. `ConfigMap`.
    pub kind: String,
}

impl Gvk {
    /// A GVK.
    pub fn new(group: &str, version: &str, kind: &str) -> Self {
        Gvk {
            group: group.to_string(),
            version: version.to_string(),
            kind: kind.to_string(),
        }
    }

    /// From an `apiVersion` (`v1`, `apps/v1`) and a kind.
    pub fn from_api_version(api_version: &str, kind: &str) -> Self {
        match api_version.split_once('/') {
            Some((group, version)) => Gvk::new(group, version, kind),
            None => Gvk::new("", api_version, kind),
        }
    }

    /// The kind of the k8s-openapi type `K`.
    #[cfg(feature = "k8s-openapi")]
    pub fn of<K: k8s_openapi::Resource>() -> Self {
        Gvk::new(K::GROUP, K::VERSION, K::KIND)
    }

    /// The `apiVersion` of objects of this kind: `v1`, `apps/v1`.
    pub fn api_version(&self) -> String {
        api_version(&self.group, &self.version)
    }
}

/// The `apiVersion` of `version` in `group`: `v1` in the core group (`""`),
/// else `group/version`.
pub fn api_version(group: &str, version: &str) -> String {
    if group.is_empty() {
        version.to_string()
    } else {
        format!("{group}/{version}")
    }
}

impl fmt::Display for Gvk {
    /// As Kubernetes prints one: `apps/v1, Kind=Deployment`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}, Kind={}", self.api_version(), self.kind)
    }
}

/// The API groups kube-apiserver serves itself; a kind in any other group
/// is a custom resource.
const BUILT_IN_GROUPS: [&str; 23] = [
    "",
    "admissionregistration.k8s.io",
    "apiextensions.k8s.io",
    "apiregistration.k8s.io",
    "apps",
    "authentication.k8s.io",
    "authorization.k8s.io",
    "autoscaling",
    "batch",
    "certificates.k8s.io",
    "coordination.k8s.io",
    "discovery.k8s.io",
    "events.k8s.io",
    "flowcontrol.apiserver.k8s.io",
    "internal.apiserver.k8s.io",
    "networking.k8s.io",
    "node.k8s.io",
    "policy",
    "rbac.authorization.k8s.io",
    "resource.k8s.io",
    "scheduling.k8s.io",
    "storage.k8s.io",
    "storagemigration.k8s.io",
];

/// Whether `group` is one kube-apiserver serves itself (a kind in any other
/// group is a custom resource).
pub fn is_built_in_group(group: &str) -> bool {
    BUILT_IN_GROUPS.contains(&group)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn api_versions_round_trip_with_the_core_group_empty() {
        for (api_version, group, version) in [("v1", "", "v1"), ("apps/v1", "apps", "v1")] {
            let gvk = Gvk::from_api_version(api_version, "K");
            assert_eq!(gvk, Gvk::new(group, version, "K"));
            assert_eq!(gvk.api_version(), api_version);
        }
        assert_eq!(
            Gvk::new("apps", "v1", "Deployment").to_string(),
            "apps/v1, Kind=Deployment"
        );
    }
}
