//! The OpenAPI documents the dev server serves, for kubectl and other
//! clients.
//!
//! kubectl (1.27+) asks `/openapi/v3` for the list of group/versions and then
//! `/openapi/v3/{api/v1 | apis/G/V}`: to learn whether the server validates
//! fields itself, it looks for a PATCH operation tagged with the kind's
//! `x-kubernetes-group-version-kind` that accepts the `fieldValidation` query
//! parameter (then `kubectl apply` sends `fieldValidation=Strict` and skips
//! client-side validation); `kubectl explain` reads the kind's schema among
//! `components.schemas`, and `kubectl apply` the patch strategies and list
//! keys of built-in kinds.
//!
//! Each group/version document carries the schemas of its kinds: a
//! built-in kind's, with every schema it refers to, in the form
//! kube-apiserver v1.33 serves them ([`built_in_schemas`]), and a custom
//! resource's, its CRD's.
//!
//! `/openapi/v2` is an empty Swagger 2.0 document (protobuf, as kubectl asks,
//! or JSON): kubectl falls back to client-side validation with it where the
//! v3 check does not apply (a `kind: List` file), finds no schema for the
//! kind and skips validation. The dev server checks the fields of custom
//! resources against their CRD's schema (`fieldValidation` applies there)
//! and not those of built-in kinds.

use std::collections::BTreeSet;

use serde_json::{Map, Value, json};

use super::discovery::GIT_VERSION;
use super::store::{ResourceType, built_in_schemas};

/// The key of a group/version in the v3 root: `api/v1` or `apis/G/V`.
pub fn gv_path(group: &str, version: &str) -> String {
    if group.is_empty() {
        format!("api/{version}")
    } else {
        format!("apis/{group}/{version}")
    }
}

/// `/openapi/v3`: one entry per served group/version.
pub fn v3_root(types: &[ResourceType]) -> Value {
    let mut paths = Map::new();
    for t in types {
        let key = gv_path(&t.group, &t.version);
        let url = format!("/openapi/v3/{key}");
        paths.insert(key, json!({ "serverRelativeURL": url }));
    }
    json!({ "paths": paths })
}

fn query_param(name: &str, description: &str) -> Value {
    json!({
        "name": name,
        "in": "query",
        "description": description,
        "schema": { "type": "string", "uniqueItems": true }
    })
}

/// `/openapi/v3/{gv_path}`, or `None` when nothing is served there.
pub fn v3_group_version(types: &[ResourceType], gv: &str) -> Option<Value> {
    let mut paths = Map::new();
    let mut schemas = Map::new();
    for t in types.iter().filter(|t| gv_path(&t.group, &t.version) == gv) {
        match &t.schema {
            Some(schema) => {
                schemas.insert(schema_name(t), served_schema(t, schema));
            }
            None => add_built_in_schemas(&mut schemas, &t.group, &t.version, &t.kind),
        }
        let prefix = if t.group.is_empty() {
            format!("/api/{}", t.version)
        } else {
            format!("/apis/{}/{}", t.group, t.version)
        };
        let item = if t.namespaced {
            format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
        } else {
            format!("{prefix}/{}/{{name}}", t.plural)
        };
        let gvk = json!({ "group": t.group, "version": t.version, "kind": t.kind });
        let patch = json!({
            "description": format!("partially update the specified {}", t.kind),
            "operationId": format!("patch{}", t.kind),
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
            "parameters": [
                query_param("dryRun", "All: validate and answer without persisting"),
                query_param("fieldManager", "the actor making the change"),
                query_param("fieldValidation", "Ignore, Warn or Strict: unknown fields of custom resources"),
                query_param("force", "force server-side apply conflicts"),
            ],
            "requestBody": {
                "content": {
                    "application/json-patch+json": { "schema": { "type": "object" } },
                    "application/merge-patch+json": { "schema": { "type": "object" } },
                    "application/apply-patch+yaml": { "schema": { "type": "object" } }
                }
            },
            "responses": { "200": { "description": "OK" } }
        });
        let mut get = patch.clone();
        get["operationId"] = json!(format!("read{}", t.kind));
        get["x-kubernetes-action"] = json!("get");
        get["description"] = json!(format!("read the specified {}", t.kind));
        get.as_object_mut().map(|o| o.remove("requestBody"));
        get["parameters"] = json!([]);
        paths.insert(
            item,
            json!({
                "get": get,
                "patch": patch,
                "parameters": [
                    { "name": "name", "in": "path", "required": true, "schema": { "type": "string" } }
                ]
            }),
        );
    }
    if paths.is_empty() {
        return None;
    }
    Some(json!({
        "openapi": "3.0.0",
        "info": { "title": "Kubernetes (recon dev-server)", "version": GIT_VERSION },
        "paths": paths,
        "components": { "schemas": schemas }
    }))
}

/// Adds the built-in schema of `group/version` `kind` to `schemas`, with
/// every schema it refers to; nothing for a kind without one.
fn add_built_in_schemas(schemas: &mut Map<String, Value>, group: &str, version: &str, kind: &str) {
    let mut todo: Vec<&str> = built_in_schemas::name_of_kind(group, version, kind)
        .into_iter()
        .collect();
    let mut added = BTreeSet::new();
    while let Some(name) = todo.pop() {
        if !added.insert(name) {
            continue;
        }
        let Some(schema) = built_in_schemas::get(name) else {
            continue;
        };
        built_in_schemas::refs(schema, &mut todo);
        schemas.insert(name.to_string(), schema.clone());
    }
}

/// A custom resource's schema name as kube-apiserver names it: the group
/// reversed, the version, the kind (`com.example.v1.Widget`).
fn schema_name(t: &ResourceType) -> String {
    let group: Vec<&str> = t.group.split('.').rev().collect();
    format!("{}.{}.{}", group.join("."), t.version, t.kind)
}

/// A custom resource's schema as served: its CRD's, tagged with its kind,
/// with `apiVersion` and `kind` declared (the server's `metadata` schema is
/// not served here).
fn served_schema(t: &ResourceType, schema: &Value) -> Value {
    let mut served = schema.clone();
    served["x-kubernetes-group-version-kind"] =
        json!([{ "group": t.group, "version": t.version, "kind": t.kind }]);
    if let Some(properties) = served
        .as_object_mut()
        .map(|o| o.entry("properties").or_insert_with(|| json!({})))
        .and_then(Value::as_object_mut)
    {
        for field in ["apiVersion", "kind"] {
            properties.insert(field.into(), json!({ "type": "string" }));
        }
    }
    served
}

/// Media type of the protobuf OpenAPI v2 document.
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// `/openapi/v2` as JSON: Swagger 2.0 with no paths or definitions.
pub fn v2_json() -> Value {
    json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes (recon dev-server)", "version": GIT_VERSION },
        "paths": {},
        "definitions": {}
    })
}

/// `/openapi/v2` as protobuf (`openapi.v2.Document`): `swagger` (field 1)
/// and `info` (field 2: `title` = 1, `version` = 2), nothing else.
pub fn v2_protobuf() -> Vec<u8> {
    fn field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
        out.push((number << 3) | 2);
        let mut len = bytes.len();
        loop {
            let byte = (len & 0x7f) as u8;
            len >>= 7;
            if len == 0 {
                out.push(byte);
                break;
            }
            out.push(byte | 0x80);
        }
        out.extend_from_slice(bytes);
    }
    let mut info = Vec::new();
    field(&mut info, 1, b"Kubernetes (recon dev-server)");
    field(&mut info, 2, GIT_VERSION.as_bytes());
    let mut doc = Vec::new();
    field(&mut doc, 1, b"2.0");
    field(&mut doc, 2, &info);
    doc
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_group_version_document_carries_its_kinds_schemas_and_all_they_refer_to() {
        let types = crate::store::kinds::builtin_types();
        let doc = v3_group_version(&types, "apis/apps/v1").unwrap();
        let schemas = doc["components"]["schemas"].as_object().unwrap();
        for name in [
            "io.k8s.api.apps.v1.Deployment",
            "io.k8s.api.apps.v1.DaemonSet",
            "io.k8s.api.core.v1.PodSpec",
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
        ] {
            assert!(schemas.contains_key(name), "{name}");
        }
        assert!(!schemas.contains_key("io.k8s.api.core.v1.ConfigMap"));
        let mut referred = Vec::new();
        schemas
            .values()
            .for_each(|s| built_in_schemas::refs(s, &mut referred));
        for target in referred {
            assert!(
                schemas.contains_key(target),
                "{target} is referred to, not served"
            );
        }
    }

    #[test]
    fn v2_protobuf_is_a_swagger_document() {
        let doc = v2_protobuf();
        assert_eq!(&doc[..5], b"\x0a\x032.0");
        assert_eq!(doc[5], 0x12);
        assert_eq!(doc[6] as usize, doc.len() - 7);
    }
}
