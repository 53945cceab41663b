//! Discovery documents (`/version`, `/api`, `/api/v1`, `/apis`, `/apis/G`,
//! `/apis/G/V`) built from the kinds the store serves at the moment of the
//! request, so a CRD's kind appears as soon as the store serves it.
//!
//! Only the plain (unaggregated) documents are served: clients that ask for
//! aggregated discovery (`as=APIGroupDiscoveryList`) get `application/json`
//! and fall back to these, as kubectl does.

use std::cmp::Ordering;
use std::collections::BTreeMap;

use recon_api_semantics::api_version;
use serde_json::{Value, json};

use super::store::ResourceType;

/// The `gitVersion` the dev server reports.
pub const GIT_VERSION: &str = "v1.33.0-recon-dev";

/// `/version`.
pub fn version() -> Value {
    json!({
        "major": "1",
        "minor": "33",
        "gitVersion": GIT_VERSION,
        "gitCommit": "0000000000000000000000000000000000000000",
        "gitTreeState": "clean",
        "buildDate": "2026-01-01T00:00:00Z",
        "goVersion": "n/a (recon dev-server, Rust)",
        "compiler": "rustc",
        "platform": format!("{}/{}", std::env::consts::OS, go_arch()),
    })
}

fn go_arch() -> &'static str {
    match std::env::consts::ARCH {
        "x86_64" => "amd64",
        "aarch64" => "arm64",
        other => other,
    }
}

/// `/api`: the core group's versions.
pub fn api_versions(server_address: &str) -> Value {
    json!({
        "kind": "APIVersions",
        "versions": ["v1"],
        "serverAddressByClientCIDRs": [{ "clientCIDR": "0.0.0.0/0", "serverAddress": server_address }],
    })
}

/// Kubernetes version priority: GA before beta before alpha, higher numbers
/// first, then anything else alphabetically. `Less` means "preferred".
pub fn compare_versions(a: &str, b: &str) -> Ordering {
    fn key(v: &str) -> (u8, i64, i64, String) {
        let parse = |rest: &str| -> Option<(u8, i64, i64)> {
            let digits: String = rest.chars().take_while(|c| c.is_ascii_digit()).collect();
            let major: i64 = digits.parse().ok()?;
            let tail = &rest[digits.len()..];
            if tail.is_empty() {
                return Some((0, major, 0));
            }
            for (stage, prefix) in [(1u8, "beta"), (2u8, "alpha")] {
                if let Some(n) = tail.strip_prefix(prefix) {
                    let minor: i64 = n.parse().ok()?;
                    return Some((stage, major, minor));
                }
            }
            None
        };
        match v.strip_prefix('v').and_then(parse) {
            Some((stage, major, minor)) => (stage, -major, -minor, String::new()),
            None => (3, 0, 0, v.to_string()),
        }
    }
    key(a).cmp(&key(b))
}

/// Group name → its versions, most preferred first (core group excluded).
pub fn groups(types: &[ResourceType]) -> BTreeMap<String, Vec<String>> {
    let mut groups: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for t in types.iter().filter(|t| !t.group.is_empty()) {
        let versions = groups.entry(t.group.clone()).or_default();
        if !versions.contains(&t.version) {
            versions.push(t.version.clone());
        }
    }
    for versions in groups.values_mut() {
        versions.sort_by(|a, b| compare_versions(a, b));
    }
    groups
}

fn group_doc(name: &str, versions: &[String]) -> Value {
    let vs: Vec<Value> = versions
        .iter()
        .map(|v| json!({ "groupVersion": format!("{name}/{v}"), "version": v }))
        .collect();
    json!({
        "name": name,
        "versions": vs,
        "preferredVersion": vs.first().cloned().unwrap_or(Value::Null),
    })
}

/// `/apis`: every named group.
pub fn api_group_list(types: &[ResourceType]) -> Value {
    let groups: Vec<Value> = groups(types)
        .iter()
        .map(|(name, versions)| group_doc(name, versions))
        .collect();
    json!({ "kind": "APIGroupList", "apiVersion": "v1", "groups": groups })
}

/// `/apis/{group}`, or `None` when no kind of that group is served.
pub fn api_group(types: &[ResourceType], group: &str) -> Option<Value> {
    let groups = groups(types);
    let versions = groups.get(group)?;
    let mut doc = group_doc(group, versions);
    doc["kind"] = json!("APIGroup");
    doc["apiVersion"] = json!("v1");
    Some(doc)
}

/// `/api/v1` or `/apis/{group}/{version}`, or `None` when nothing is served there.
pub fn api_resource_list(types: &[ResourceType], group: &str, version: &str) -> Option<Value> {
    let mut resources = Vec::new();
    for t in types
        .iter()
        .filter(|t| t.group == group && t.version == version)
    {
        let mut r = json!({
            "name": t.plural,
            "singularName": t.singular,
            "namespaced": t.namespaced,
            "kind": t.kind,
            "verbs": t.verbs,
        });
        if !t.short_names.is_empty() {
            r["shortNames"] = json!(t.short_names);
        }
        if !t.categories.is_empty() {
            r["categories"] = json!(t.categories);
        }
        resources.push(r);
        if t.status_subresource {
            resources.push(json!({
                "name": format!("{}/status", t.plural),
                "singularName": "",
                "namespaced": t.namespaced,
                "kind": t.kind,
                "verbs": ["get", "patch", "update"],
            }));
        }
        if t.scale_subresource {
            resources.push(json!({
                "name": format!("{}/scale", t.plural),
                "singularName": "",
                "namespaced": t.namespaced,
                "group": "autoscaling",
                "version": "v1",
                "kind": "Scale",
                "verbs": ["get", "patch", "update"],
            }));
        }
    }
    if resources.is_empty() {
        return None;
    }
    Some(json!({
        "kind": "APIResourceList",
        "apiVersion": "v1",
        "groupVersion": api_version(group, version),
        "resources": resources,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions_sort_like_kubernetes() {
        let mut vs = vec![
            "v1alpha1", "v2beta1", "v1", "v1beta2", "v2", "foo", "v1beta1",
        ];
        vs.sort_by(|a, b| compare_versions(a, b));
        assert_eq!(
            vs,
            [
                "v2", "v1", "v2beta1", "v1beta2", "v1beta1", "v1alpha1", "foo"
            ]
        );
    }
}
