//! The OpenAPI v3 schemas of the built-in kinds the dev server serves, and
//! of every schema they refer to, in the form kube-apiserver v1.33 serves
//! them under `components.schemas` (`devserver/openapi/built-in-v1.33.json`,
//! which scripts/openapi-definitions writes; its source lacks some `enum`
//! lists and the `default` values but for the list keys'). The OpenAPI documents serve them;
//! server-side apply reads the associative lists of built-in kinds (and of
//! every object's metadata) from them.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::{Map, Value};

/// The schema of every object's `metadata`.
pub const OBJECT_META: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta";

const REF_PREFIX: &str = "#/components/schemas/";

static SCHEMAS: LazyLock<Map<String, Value>> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../../openapi/built-in-v1.33.json"))
        .expect("devserver/openapi/built-in-v1.33.json is a map of schemas")
});

/// The schema named `name` (`io.k8s.api.apps.v1.Deployment`).
pub fn get(name: &str) -> Option<&'static Value> {
    SCHEMAS.get(name)
}

/// The name of the schema of the built-in kind `group/version` `kind`: the
/// one whose `x-kubernetes-group-version-kind` names it.
pub fn name_of_kind(group: &str, version: &str, kind: &str) -> Option<&'static str> {
    BY_KIND
        .get(&(group.to_string(), version.to_string(), kind.to_string()))
        .copied()
}

/// The name of each kind's schema, by group, version and kind.
static BY_KIND: LazyLock<HashMap<(String, String, String), &'static str>> = LazyLock::new(|| {
    let mut by_kind = HashMap::new();
    for (name, schema) in SCHEMAS.iter() {
        for gvk in schema["x-kubernetes-group-version-kind"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let part = |key: &str| gvk[key].as_str().unwrap_or_default().to_string();
            by_kind.insert(
                (part("group"), part("version"), part("kind")),
                name.as_str(),
            );
        }
    }
    by_kind
});

/// The name of the schema `node` refers to: its `$ref`'s, alone or as the
/// one member of an `allOf` (beside a description).
pub fn reference(node: &Value) -> Option<&str> {
    node["$ref"]
        .as_str()
        .or_else(|| match node["allOf"].as_array().map(Vec::as_slice) {
            Some([only]) => only["$ref"].as_str(),
            _ => None,
        })
        .and_then(|target| target.strip_prefix(REF_PREFIX))
}

/// The schema `node` stands for: the one it refers to ([`reference()`]),
/// else `node` itself.
pub fn resolve(node: &Value) -> &Value {
    match reference(node).and_then(get) {
        Some(schema) => resolve(schema),
        None => node,
    }
}

/// The names of the schemas `schema` refers to, pushed onto `out`.
pub fn refs<'a>(schema: &'a Value, out: &mut Vec<&'a str>) {
    match schema {
        Value::Object(map) => {
            for (key, value) in map {
                match (key.as_str(), value) {
                    ("$ref", Value::String(target)) => out.extend(target.strip_prefix(REF_PREFIX)),
                    _ => refs(value, out),
                }
            }
        }
        Value::Array(items) => items.iter().for_each(|item| refs(item, out)),
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_built_in_kind_has_its_schema_and_all_it_refers_to() {
        for t in super::super::kinds::builtin_types() {
            let name = name_of_kind(&t.group, &t.version, &t.kind)
                .unwrap_or_else(|| panic!("no schema for {}/{} {}", t.group, t.version, t.kind));
            let schema = get(name).expect("a kind's schema is among them");
            let mut todo = vec![name];
            refs(schema, &mut todo);
            for target in todo {
                let referred = get(target).unwrap_or_else(|| panic!("{name} refers to {target}"));
                let mut further = Vec::new();
                refs(referred, &mut further);
                for next in further {
                    assert!(get(next).is_some(), "{target} refers to {next}");
                }
            }
        }
    }

    #[test]
    fn a_reference_resolves_to_the_schema_it_names() {
        let spec = &get("io.k8s.api.apps.v1.Deployment").unwrap()["properties"]["spec"];
        assert!(spec.get("allOf").is_some(), "a described reference: {spec}");
        assert_eq!(
            resolve(spec),
            get("io.k8s.api.apps.v1.DeploymentSpec").unwrap()
        );
        let containers = &get("io.k8s.api.core.v1.PodSpec").unwrap()["properties"]["containers"];
        assert_eq!(
            resolve(&containers["items"]),
            get("io.k8s.api.core.v1.Container").unwrap()
        );
        assert_eq!(resolve(containers), containers);
    }
}
