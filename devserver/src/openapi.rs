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
//! `/openapi/v2` is one Swagger 2.0 document for every served kind
//! ([`v2_json`]): the same GET and PATCH per kind, and under `definitions`
//! the schemas in the form kube-apiserver gives them there (named alike,
//! `io.k8s.api.apps.v1.Deployment`, `com.example.v1.Widget`, each kind's
//! tagged with its `x-kubernetes-group-version-kind`): a built-in one's v3
//! schemas with `#/definitions/` references and no defaults, a custom
//! resource's its CRD's stripped of what Swagger 2.0 cannot say, as
//! apiextensions-apiserver does. It is answered in JSON or, as kubectl and
//! most clients ask, in gnostic's protobuf `openapi.v2.Document`
//! ([`gnostic`]), negotiated as kube-openapi's handler does ([`v2_format`]),
//! with an ETag. kubectl still reads it for `kubectl explain
//! --output=plaintext-openapiv2` and where the v3 check does not apply (a
//! `kind: List` file): it then validates the objects itself against these
//! schemas and refuses unknown fields, of built-in kinds too. The document
//! (~0.4 MB either way) is built once per set of served types
//! ([`v2_document`]).

pub mod gnostic;

use std::collections::BTreeSet;
use std::hash::{DefaultHasher, Hash, Hasher};
use std::sync::Arc;

use bytes::Bytes;
use parking_lot::Mutex;
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

/// The query parameters of a PATCH: name, type and description.
const PATCH_PARAMETERS: [(&str, &str, &str); 4] = [
    (
        "dryRun",
        "string",
        "All: validate and answer without persisting",
    ),
    ("fieldManager", "string", "the actor making the change"),
    (
        "fieldValidation",
        "string",
        "Ignore, Warn or Strict: unknown fields of custom resources",
    ),
    ("force", "boolean", "force server-side apply conflicts"),
];

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
        let item = item_path(t);
        let gvk = json!({ "group": t.group, "version": t.version, "kind": t.kind });
        let patch = json!({
            "description": format!("partially update the specified {}", t.kind),
            "operationId": format!("patch{}", t.kind),
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk,
            "parameters": PATCH_PARAMETERS.map(|(name, kind, description)| json!({
                "name": name,
                "in": "query",
                "description": description,
                "schema": { "type": kind, "uniqueItems": true }
            })),
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

/// The content types `/openapi/v2` answers in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum V2Format {
    Json,
    Protobuf,
}

impl V2Format {
    /// The `Content-Type` of the answer.
    pub fn content_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Protobuf => V2_PROTOBUF,
        }
    }
}

/// Media type of the protobuf OpenAPI v2 document, as answered.
pub const V2_PROTOBUF: &str = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

/// The format `/openapi/v2` answers an `Accept` header with, as kube-openapi's
/// handler picks it: the clauses by quality, the more specific first among
/// equals, and the first that JSON, the protobuf type or its older spelling
/// (`...spec.v2@v1.0+protobuf`, which kubectl sends) matches; no header
/// stands for `*/*`, so JSON. `None` (a 406) when nothing matches.
pub fn v2_format(accept: Option<&str>) -> Option<V2Format> {
    const OFFERED: [(&str, V2Format); 3] = [
        ("json", V2Format::Json),
        (
            "com.github.proto-openapi.spec.v2@v1.0+protobuf",
            V2Format::Protobuf,
        ),
        (
            "com.github.proto-openapi.spec.v2.v1.0+protobuf",
            V2Format::Protobuf,
        ),
    ];
    let accept = accept.filter(|a| !a.trim().is_empty()).unwrap_or("*/*");
    let mut clauses: Vec<(f64, &str, &str)> = accept
        .split(',')
        .filter_map(|clause| {
            let mut parts = clause.split(';');
            let range = parts.next()?.trim();
            let (kind, sub) = match range.split_once('/') {
                Some((kind, sub)) => (kind.trim(), sub.trim()),
                None if range == "*" => ("*", "*"),
                None => return None,
            };
            let quality = parts
                .filter_map(|p| p.split_once('='))
                .find(|(name, _)| name.trim() == "q")
                .and_then(|(_, q)| q.trim().parse().ok())
                .unwrap_or(1.0);
            Some((quality, kind, sub))
        })
        .collect();
    clauses.sort_by(|a, b| {
        b.0.total_cmp(&a.0)
            .then((a.1 == "*").cmp(&(b.1 == "*")))
            .then((a.2 == "*").cmp(&(b.2 == "*")))
    });
    clauses.iter().find_map(|(_, kind, sub)| {
        OFFERED
            .iter()
            .find(|(offered, _)| {
                (*kind == "application" || *kind == "*") && (sub == offered || *sub == "*")
            })
            .map(|(_, format)| *format)
    })
}

/// `/openapi/v2` for one set of served types, in both forms, and the ETag
/// both are answered with.
#[derive(Debug)]
pub struct V2Document {
    pub json: Bytes,
    pub protobuf: Bytes,
    pub etag: String,
}

impl V2Document {
    /// The body of the answer in `format`.
    pub fn body(&self, format: V2Format) -> Bytes {
        match format {
            V2Format::Json => self.json.clone(),
            V2Format::Protobuf => self.protobuf.clone(),
        }
    }
}

/// The last document built, and the served types it was built for.
static V2_DOCUMENT: Mutex<Option<(Vec<ResourceType>, Arc<V2Document>)>> = Mutex::new(None);

/// `/openapi/v2` for `types`: built once per set of served types (the
/// document of every built-in kind is ~0.4 MB), then answered from memory
/// until the set changes (a CRD is created, changed or deleted).
pub fn v2_document(types: &[ResourceType]) -> Arc<V2Document> {
    let mut last = V2_DOCUMENT.lock();
    if let Some((built_for, document)) = last.as_ref()
        && built_for.as_slice() == types
    {
        return document.clone();
    }
    let json = v2_json(types);
    let protobuf = gnostic::encode(&json);
    let json = serde_json::to_vec(&json).expect("a JSON value always serializes");
    let mut hasher = DefaultHasher::new();
    json.hash(&mut hasher);
    let document = Arc::new(V2Document {
        etag: format!("\"{:016X}\"", hasher.finish()),
        json: Bytes::from(json),
        protobuf: Bytes::from(protobuf),
    });
    *last = Some((types.to_vec(), document.clone()));
    document
}

/// The schema every PATCH request body is given in Swagger 2.0.
const PATCH: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Patch";

/// `/openapi/v2` as JSON: a Swagger 2.0 document with a GET and a PATCH per
/// served kind (as `/openapi/v3`'s, tagged with the kind's
/// `x-kubernetes-group-version-kind`, the PATCH taking `fieldValidation`) and
/// under `definitions` the schema of every kind with every schema it refers
/// to, as kube-apiserver writes them for Swagger 2.0: a built-in kind's
/// ([`v2_built_in_schema`]) and a custom resource's ([`v2_custom_resource_schema`]).
pub fn v2_json(types: &[ResourceType]) -> Value {
    let mut paths = Map::new();
    let mut definitions = Map::new();
    for t in types {
        let name = match &t.schema {
            Some(schema) => {
                let name = schema_name(t);
                definitions.insert(name.clone(), v2_custom_resource_schema(t, schema));
                add_v2_built_in_schemas(&mut definitions, built_in_schemas::OBJECT_META);
                Some(name)
            }
            None => {
                let name = built_in_schemas::name_of_kind(&t.group, &t.version, &t.kind);
                if let Some(name) = name {
                    add_v2_built_in_schemas(&mut definitions, name);
                }
                name.map(String::from)
            }
        };
        paths.insert(item_path(t), v2_path_item(t, name.as_deref()));
    }
    definitions.insert(
        PATCH.into(),
        json!({
            "description": "Patch is provided to give a concrete name and type to the Kubernetes PATCH request body.",
            "type": "object"
        }),
    );
    json!({
        "swagger": "2.0",
        "info": { "title": "Kubernetes (recon dev-server)", "version": GIT_VERSION },
        "paths": paths,
        "definitions": definitions
    })
}

/// The URL of one object of `t`, with `{namespace}` and `{name}`.
fn item_path(t: &ResourceType) -> String {
    let prefix = if t.group.is_empty() {
        format!("/api/{}", t.version)
    } else {
        format!("/apis/{}/{}", t.group, t.version)
    };
    if t.namespaced {
        format!("{prefix}/namespaces/{{namespace}}/{}/{{name}}", t.plural)
    } else {
        format!("{prefix}/{}/{{name}}", t.plural)
    }
}

/// The Swagger 2.0 path item of one object of `t`: its GET and PATCH, each
/// answering with the kind's schema `definition`.
fn v2_path_item(t: &ResourceType, definition: Option<&str>) -> Value {
    let (id_infix, tag) = operation_id_and_tag(t);
    let gvk = json!({ "group": t.group, "version": t.version, "kind": t.kind });
    let response = |description: &str| match definition {
        Some(name) => json!({
            "description": description,
            "schema": { "$ref": format!("#/definitions/{name}") }
        }),
        None => json!({ "description": description }),
    };
    let mut patch_types = vec![
        "application/json-patch+json",
        "application/merge-patch+json",
    ];
    if t.schema.is_none() {
        patch_types.push("application/strategic-merge-patch+json");
    }
    patch_types.push("application/apply-patch+yaml");
    let mut patch_parameters = vec![json!({
        "name": "body",
        "in": "body",
        "required": true,
        "schema": { "$ref": format!("#/definitions/{PATCH}") }
    })];
    for (name, kind, description) in PATCH_PARAMETERS {
        patch_parameters.push(json!({
            "uniqueItems": true,
            "type": kind,
            "description": description,
            "name": name,
            "in": "query"
        }));
    }
    let mut path_parameters = vec![json!({
        "uniqueItems": true,
        "type": "string",
        "description": format!("name of the {}", t.kind),
        "name": "name",
        "in": "path",
        "required": true
    })];
    if t.namespaced {
        path_parameters.push(json!({
            "uniqueItems": true,
            "type": "string",
            "description": "object name and auth scope, such as for teams and projects",
            "name": "namespace",
            "in": "path",
            "required": true
        }));
    }
    json!({
        "get": {
            "description": format!("read the specified {}", t.kind),
            "consumes": ["*/*"],
            "produces": ["application/json"],
            "tags": [tag],
            "operationId": format!("read{id_infix}"),
            "responses": { "200": response("OK"), "401": { "description": "Unauthorized" } },
            "x-kubernetes-action": "get",
            "x-kubernetes-group-version-kind": gvk
        },
        "patch": {
            "description": format!("partially update the specified {}", t.kind),
            "consumes": patch_types,
            "produces": ["application/json"],
            "tags": [tag],
            "operationId": format!("patch{id_infix}"),
            "parameters": patch_parameters,
            "responses": {
                "200": response("OK"),
                "201": response("Created"),
                "401": { "description": "Unauthorized" }
            },
            "x-kubernetes-action": "patch",
            "x-kubernetes-group-version-kind": gvk
        },
        "parameters": path_parameters
    })
}

/// What follows an operation's verb in its ID, and its tag, as
/// kube-apiserver's `GetOperationIDAndTags` makes them: `AppsV1NamespacedDeployment`
/// and `apps_v1`; the core group is `core`, and `.k8s.io` is dropped from a
/// group (`RbacAuthorizationV1ClusterRole`, `rbacAuthorization_v1`).
fn operation_id_and_tag(t: &ResourceType) -> (String, String) {
    let group = if t.group.is_empty() {
        "core"
    } else {
        t.group.strip_suffix(".k8s.io").unwrap_or(&t.group)
    };
    let scope = if t.namespaced { "Namespaced" } else { "" };
    let id = format!(
        "{}{}{scope}{}",
        operation_id_part(group, true),
        operation_id_part(&t.version, true),
        t.kind
    );
    let tag = format!(
        "{}_{}",
        operation_id_part(group, false),
        operation_id_part(&t.version, false)
    );
    (id, tag)
}

/// kube-openapi's `ToValidOperationID`: the letters, `_` and digits (not
/// leading) of `s`, each after a dropped character upper-cased, and the
/// first one too if `capitalize`.
fn operation_id_part(s: &str, mut capitalize: bool) -> String {
    let mut out = String::new();
    for (i, c) in s.chars().enumerate() {
        if c.is_alphabetic() || c == '_' || (i != 0 && c.is_numeric()) {
            if capitalize {
                out.extend(c.to_uppercase());
                capitalize = false;
            } else {
                out.push(c);
            }
        } else {
            capitalize = true;
        }
    }
    out
}

/// Adds the built-in schema `name` to the Swagger 2.0 `definitions`, with
/// every schema it refers to, each as [`v2_built_in_schema`] writes it.
fn add_v2_built_in_schemas(definitions: &mut Map<String, Value>, name: &str) {
    let mut todo = vec![name];
    while let Some(name) = todo.pop() {
        if definitions.contains_key(name) {
            continue;
        }
        let Some(schema) = built_in_schemas::get(name) else {
            continue;
        };
        built_in_schemas::refs(schema, &mut todo);
        definitions.insert(name.to_string(), v2_built_in_schema(schema));
    }
}

/// A built-in schema in its Swagger 2.0 form, from its OpenAPI v3 form as
/// kube-openapi builds both from one definition: a reference is a `$ref`
/// to `#/definitions/NAME` beside the description where v3 wraps it in a
/// one-member `allOf`, and there are no `default`s (kube-apiserver prunes
/// them from the v2 document).
pub fn v2_built_in_schema(schema: &Value) -> Value {
    let Some(object) = schema.as_object() else {
        return schema.clone();
    };
    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "default" => {}
            "$ref" => {
                out.insert(key.clone(), v2_ref(value));
            }
            "allOf" => match value.as_array().map(Vec::as_slice) {
                Some([only])
                    if only.as_object().is_some_and(|o| o.len() == 1)
                        && only.get("$ref").is_some() =>
                {
                    out.insert("$ref".into(), v2_ref(&only["$ref"]));
                }
                _ => {
                    let members = value.as_array().into_iter().flatten();
                    out.insert(key.clone(), members.map(v2_built_in_schema).collect());
                }
            },
            "properties" => {
                let properties = value.as_object().into_iter().flatten();
                let properties = properties
                    .map(|(name, property)| (name.clone(), v2_built_in_schema(property)))
                    .collect();
                out.insert(key.clone(), Value::Object(properties));
            }
            "items" | "additionalProperties" => {
                out.insert(key.clone(), v2_built_in_schema(value));
            }
            _ => {
                out.insert(key.clone(), value.clone());
            }
        }
    }
    Value::Object(out)
}

/// A v3 reference (`#/components/schemas/NAME`) as a v2 one (`#/definitions/NAME`).
fn v2_ref(target: &Value) -> Value {
    match target.as_str() {
        Some(t) => match t.strip_prefix(V3_REF_PREFIX) {
            Some(name) => json!(format!("#/definitions/{name}")),
            None => target.clone(),
        },
        None => target.clone(),
    }
}

const V3_REF_PREFIX: &str = "#/components/schemas/";

/// The description kube-apiserver gives a custom resource's `metadata`.
const METADATA_DESCRIPTION: &str = "Standard object's metadata. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/// `TypeMeta`'s `apiVersion` and `kind`, as every kind's schema has them.
const TYPE_META: [(&str, &str); 2] = [
    (
        "apiVersion",
        "APIVersion defines the versioned schema of this representation of an object. Servers should convert recognized schemas to the latest internal value, and may reject unrecognized values. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    ),
    (
        "kind",
        "Kind is a string value representing the REST resource this object represents. Servers may infer this from the endpoint the client submits requests to. Cannot be updated. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    ),
];

/// `apiVersion` and `kind` of an embedded resource (a field with
/// `x-kubernetes-embedded-resource`), as kube-apiserver describes them.
const EMBEDDED_TYPE_META: [(&str, &str); 2] = [
    (
        "apiVersion",
        "apiVersion defines the versioned schema of this representation of an object. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#resources",
    ),
    (
        "kind",
        "kind is a string value representing the type of this object. In CamelCase. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#types-kinds",
    ),
];

/// A custom resource's schema in the Swagger 2.0 document, as
/// apiextensions-apiserver's builder writes it with its `V2` option: a
/// schema that keeps unknown fields at its root is only `type: object`
/// (kubectl would refuse every field it does not name); any other is its
/// CRD's made Swagger 2.0 ([`v2_structural`]), with the server's
/// `metadata` (a reference to `ObjectMeta`), `apiVersion` and `kind`. Both
/// are tagged with the kind's `x-kubernetes-group-version-kind`.
pub fn v2_custom_resource_schema(t: &ResourceType, schema: &Value) -> Value {
    let gvk = json!([{ "group": t.group, "version": t.version, "kind": t.kind }]);
    if schema["x-kubernetes-preserve-unknown-fields"] == true {
        return json!({ "type": "object", "x-kubernetes-group-version-kind": gvk });
    }
    let mut v2 = v2_structural(schema);
    if let Some(object) = v2.as_object_mut() {
        let properties = object.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            properties.insert(
                "metadata".into(),
                json!({
                    "$ref": format!("#/definitions/{}", built_in_schemas::OBJECT_META),
                    "description": METADATA_DESCRIPTION
                }),
            );
            for (field, description) in TYPE_META {
                properties.insert(
                    field.into(),
                    json!({ "description": description, "type": "string" }),
                );
            }
        }
        object.insert("x-kubernetes-group-version-kind".into(), gvk);
    }
    v2
}

/// One node of a structural schema made Swagger 2.0, as
/// apiextensions-apiserver's `ToStructuralOpenAPIV2` and the builder after
/// it do, and without what its structural form does not carry:
///
/// - `allOf`, `anyOf`, `oneOf` and `not` go, and so do `default` (pruned
///   from the v2 document), `example` and `externalDocs`;
/// - a `nullable` node loses its type, properties and items (kubectl
///   could not read them for a null), and its parent no longer requires it
///   (a map of nullable values requires nothing);
/// - a node that keeps unknown fields loses its properties and items, and
///   `type: object`;
/// - an array without items loses its type;
/// - an embedded resource that does not keep unknown fields gets
///   `apiVersion`, `kind` and `metadata`, and requires `apiVersion` and
///   `kind`.
///
/// The `x-kubernetes-*` extensions stay, those with a false or empty value
/// dropped.
pub fn v2_structural(node: &Value) -> Value {
    let Some(object) = node.as_object() else {
        return node.clone();
    };
    let flag = |key: &str| object.get(key) == Some(&Value::Bool(true));
    let nullable = flag("nullable");
    let keeps_unknown = flag("x-kubernetes-preserve-unknown-fields");
    let children = !nullable && !keeps_unknown;
    let mut kind = object.get("type").and_then(Value::as_str);
    if nullable
        || (kind == Some("array") && !(children && object.contains_key("items")))
        || (kind == Some("object") && keeps_unknown)
    {
        kind = None;
    }
    let properties = object
        .get("properties")
        .and_then(Value::as_object)
        .filter(|_| children);
    let mut required: Vec<Value> = object
        .get("required")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if let Some(properties) = properties {
        required.retain(|name| {
            let property = name.as_str().and_then(|n| properties.get(n));
            !property.is_some_and(|p| p["nullable"] == true)
        });
    }
    if object
        .get("additionalProperties")
        .is_some_and(|a| a["nullable"] == true)
    {
        required.clear();
    }

    let mut out = Map::new();
    for (key, value) in object {
        match key.as_str() {
            "description"
            | "title"
            | "format"
            | "maximum"
            | "minimum"
            | "maxLength"
            | "minLength"
            | "pattern"
            | "maxItems"
            | "minItems"
            | "multipleOf"
            | "enum"
            | "maxProperties"
            | "minProperties"
            | "x-kubernetes-list-type"
            | "x-kubernetes-map-type" => {
                out.insert(key.clone(), value.clone());
            }
            "exclusiveMaximum"
            | "exclusiveMinimum"
            | "uniqueItems"
            | "x-kubernetes-preserve-unknown-fields"
            | "x-kubernetes-embedded-resource"
            | "x-kubernetes-int-or-string"
                if *value == true =>
            {
                out.insert(key.clone(), value.clone());
            }
            "x-kubernetes-list-map-keys" | "x-kubernetes-validations"
                if value.as_array().is_some_and(|list| !list.is_empty()) =>
            {
                out.insert(key.clone(), value.clone());
            }
            "items" if children => {
                out.insert(key.clone(), v2_structural(value));
            }
            "additionalProperties" => {
                out.insert(key.clone(), v2_structural(value));
            }
            _ => {}
        }
    }
    if let Some(kind) = kind {
        out.insert("type".into(), json!(kind));
    }
    if let Some(properties) = properties {
        let properties = properties
            .iter()
            .map(|(name, property)| (name.clone(), v2_structural(property)))
            .collect();
        out.insert("properties".into(), Value::Object(properties));
    }
    if flag("x-kubernetes-embedded-resource") && !keeps_unknown {
        let properties = out.entry("properties").or_insert_with(|| json!({}));
        if let Some(properties) = properties.as_object_mut() {
            for (field, description) in EMBEDDED_TYPE_META {
                properties.insert(
                    field.into(),
                    json!({ "description": description, "type": "string" }),
                );
            }
            properties.insert(
                "metadata".into(),
                json!({
                    "$ref": format!("#/definitions/{}", built_in_schemas::OBJECT_META),
                    "description": METADATA_DESCRIPTION
                }),
            );
        }
        for field in ["kind", "apiVersion"] {
            if !required.iter().any(|r| r == field) {
                required.push(json!(field));
            }
        }
    }
    if !required.is_empty() {
        out.insert("required".into(), Value::Array(required));
    }
    Value::Object(out)
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

    /// A CRD of `kind` in `example.com/v1` with `schema`, served.
    fn custom_resource(kind: &str, schema: Value) -> ResourceType {
        let plural = format!("{}s", kind.to_ascii_lowercase());
        let crd = json!({
            "apiVersion": "apiextensions.k8s.io/v1",
            "kind": "CustomResourceDefinition",
            "metadata": { "name": format!("{plural}.example.com") },
            "spec": {
                "group": "example.com",
                "scope": "Namespaced",
                "names": { "kind": kind, "plural": plural },
                "versions": [{
                    "name": "v1", "served": true, "storage": true,
                    "schema": { "openAPIV3Schema": schema }
                }]
            }
        });
        let mut spec = crate::store::kinds::parse_crd(&crd).unwrap();
        spec.served.remove(0)
    }

    /// A schema that has a field of each kind the Swagger 2.0 form changes.
    fn widget_schema() -> Value {
        json!({
            "type": "object",
            "required": ["spec"],
            "properties": {
                "spec": {
                    "type": "object",
                    "description": "What the widget should be.",
                    "required": ["size", "note"],
                    "x-kubernetes-validations": [{ "rule": "self.size <= 10", "message": "too big" }],
                    "properties": {
                        "size": { "type": "integer", "minimum": 1, "maximum": 10, "default": 3 },
                        "port": {
                            "x-kubernetes-int-or-string": true,
                            "anyOf": [{ "type": "integer" }, { "type": "string" }]
                        },
                        "note": { "type": "string", "nullable": true, "example": "hi" },
                        "mode": { "type": "string", "enum": ["fast", "slow"], "oneOf": [{ "pattern": "^f" }, { "pattern": "^s" }] },
                        "extra": {
                            "type": "object",
                            "x-kubernetes-preserve-unknown-fields": true,
                            "properties": { "known": { "type": "string" } }
                        },
                        "blobs": {
                            "type": "array",
                            "items": { "type": "object", "x-kubernetes-preserve-unknown-fields": true }
                        },
                        "template": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": true,
                            "properties": { "spec": { "type": "object", "properties": { "image": { "type": "string" } } } }
                        },
                        "labels": {
                            "type": "object",
                            "additionalProperties": { "type": "string" },
                            "x-kubernetes-map-type": "granular"
                        },
                        "ports": {
                            "type": "array",
                            "x-kubernetes-list-type": "map",
                            "x-kubernetes-list-map-keys": ["name"],
                            "items": {
                                "type": "object",
                                "required": ["name"],
                                "properties": { "name": { "type": "string", "maxLength": 15 } }
                            }
                        }
                    }
                }
            }
        })
    }

    fn object_meta_ref() -> Value {
        json!({
            "$ref": "#/definitions/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta",
            "description": METADATA_DESCRIPTION
        })
    }

    /// The served kinds: every built-in one and two custom ones.
    fn served_types() -> Vec<ResourceType> {
        let mut types = crate::store::kinds::builtin_types();
        types.push(custom_resource("Widget", widget_schema()));
        types.push(custom_resource(
            "Gadget",
            json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true }),
        ));
        types
    }

    /// Asserts that `schema` (at `path`) reads as kubectl's OpenAPI v2 model
    /// reads a definition (kube-openapi's `pkg/util/proto`, whose errors make
    /// kubectl refuse the whole document): a `$ref` names a definition and
    /// has no type or properties beside it; one type at most; an array has
    /// one item schema; a primitive is a string, number, integer or boolean.
    fn assert_kubectl_reads(schema: &Value, definitions: &Map<String, Value>, path: &str) {
        if let Some(target) = schema.get("$ref") {
            let name = target
                .as_str()
                .and_then(|t| t.strip_prefix("#/definitions/"))
                .unwrap_or_else(|| panic!("{path}: reference {target}"));
            assert!(
                definitions.contains_key(name),
                "{path}: {name} is not defined"
            );
            assert!(
                schema.get("type").is_none(),
                "{path}: a reference with a type"
            );
            assert!(
                schema.get("properties").is_none(),
                "{path}: a reference with properties"
            );
            return;
        }
        let kind = match &schema["type"] {
            Value::Null => None,
            Value::String(kind) => Some(kind.as_str()),
            other => panic!("{path}: type {other}"),
        };
        match kind {
            None | Some("object") => {
                if let Some(properties) = schema.get("properties") {
                    for (name, property) in properties.as_object().unwrap() {
                        assert_kubectl_reads(property, definitions, &format!("{path}.{name}"));
                    }
                } else if let Some(values) =
                    schema.get("additionalProperties").filter(|v| v.is_object())
                {
                    assert_kubectl_reads(values, definitions, &format!("{path}[*]"));
                }
            }
            Some("array") => {
                let items = &schema["items"];
                assert!(
                    items.is_object(),
                    "{path}: an array without one item schema"
                );
                assert_kubectl_reads(items, definitions, &format!("{path}[]"));
            }
            Some(kind) => assert!(
                ["string", "number", "integer", "boolean"].contains(&kind),
                "{path}: type {kind}"
            ),
        }
    }

    /// Calls `f` with `schema` and every schema inside it (properties,
    /// items, additional properties, `allOf` members).
    fn each_schema(schema: &Value, f: &mut impl FnMut(&Value)) {
        f(schema);
        for property in schema["properties"].as_object().into_iter().flatten() {
            each_schema(property.1, f);
        }
        for sub in [&schema["items"], &schema["additionalProperties"]] {
            if sub.is_object() {
                each_schema(sub, f);
            }
        }
        for member in schema["allOf"].as_array().into_iter().flatten() {
            each_schema(member, f);
        }
    }

    /// Every `$ref` string in `value`, wherever it is.
    fn all_refs<'a>(value: &'a Value, out: &mut Vec<&'a str>) {
        match value {
            Value::Object(map) => {
                for (key, value) in map {
                    match (key.as_str(), value) {
                        ("$ref", Value::String(target)) => out.push(target),
                        _ => all_refs(value, out),
                    }
                }
            }
            Value::Array(items) => items.iter().for_each(|item| all_refs(item, out)),
            _ => {}
        }
    }

    #[test]
    fn every_v2_reference_names_a_definition_kubectl_can_read() {
        let doc = v2_json(&served_types());
        let definitions = doc["definitions"].as_object().unwrap();
        let mut refs = Vec::new();
        all_refs(&doc, &mut refs);
        assert!(refs.len() > 300, "{}", refs.len());
        for target in refs {
            let name = target
                .strip_prefix("#/definitions/")
                .unwrap_or_else(|| panic!("{target}"));
            assert!(
                definitions.contains_key(name),
                "{name} is referred to, not defined"
            );
        }
        for (name, schema) in definitions {
            assert_kubectl_reads(schema, definitions, name);
        }
    }

    #[test]
    fn a_built_in_deployment_is_defined_with_its_kind_and_patched_with_field_validation() {
        let doc = v2_json(&crate::store::kinds::builtin_types());
        let deployment = &doc["definitions"]["io.k8s.api.apps.v1.Deployment"];
        assert_eq!(
            deployment["x-kubernetes-group-version-kind"],
            json!([{ "group": "apps", "kind": "Deployment", "version": "v1" }])
        );
        assert_eq!(
            deployment["properties"]["spec"],
            json!({
                "$ref": "#/definitions/io.k8s.api.apps.v1.DeploymentSpec",
                "description": "Specification of the desired behavior of the Deployment."
            })
        );
        for (name, schema) in doc["definitions"].as_object().unwrap() {
            each_schema(schema, &mut |node| {
                for keyword in ["allOf", "default"] {
                    assert!(node.get(keyword).is_none(), "{name}: {keyword} in {node}");
                }
            });
        }
        let port = &doc["definitions"]["io.k8s.api.core.v1.ContainerPort"];
        assert_eq!(port["properties"]["protocol"]["type"], "string");

        let path = &doc["paths"]["/apis/apps/v1/namespaces/{namespace}/deployments/{name}"];
        let patch = &path["patch"];
        assert_eq!(patch["operationId"], "patchAppsV1NamespacedDeployment");
        assert_eq!(patch["tags"], json!(["apps_v1"]));
        assert_eq!(
            patch["x-kubernetes-group-version-kind"],
            json!({ "group": "apps", "kind": "Deployment", "version": "v1" })
        );
        assert!(
            patch["parameters"]
                .as_array()
                .unwrap()
                .iter()
                .any(|p| p["name"] == "fieldValidation" && p["in"] == "query"),
            "{patch}"
        );
        assert_eq!(
            patch["responses"]["200"]["schema"]["$ref"],
            "#/definitions/io.k8s.api.apps.v1.Deployment"
        );
        let names: Vec<&Value> = path["parameters"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| &p["name"])
            .collect();
        assert_eq!(names, ["name", "namespace"]);
        let roles = &doc["paths"]["/apis/rbac.authorization.k8s.io/v1/clusterroles/{name}"];
        assert_eq!(
            roles["get"]["operationId"],
            "readRbacAuthorizationV1ClusterRole"
        );
        assert_eq!(roles["get"]["tags"], json!(["rbacAuthorization_v1"]));
        let events = &doc["paths"]["/api/v1/namespaces/{namespace}/events/{name}"];
        assert_eq!(events["get"]["operationId"], "readCoreV1NamespacedEvent");
    }

    #[test]
    fn a_custom_resource_schema_is_made_swagger_2() {
        let widget = custom_resource("Widget", widget_schema());
        let v2 = v2_custom_resource_schema(&widget, widget.schema.as_ref().unwrap());
        let type_meta = |field: &str| {
            let description = TYPE_META.iter().find(|(f, _)| *f == field).unwrap().1;
            json!({ "description": description, "type": "string" })
        };
        let embedded = |field: &str| {
            let description = EMBEDDED_TYPE_META
                .iter()
                .find(|(f, _)| *f == field)
                .unwrap()
                .1;
            json!({ "description": description, "type": "string" })
        };
        let unchanged =
            |field: &str| widget_schema()["properties"]["spec"]["properties"][field].clone();
        let expected = json!({
            "type": "object",
            "required": ["spec"],
            "x-kubernetes-group-version-kind": [{ "group": "example.com", "kind": "Widget", "version": "v1" }],
            "properties": {
                "apiVersion": type_meta("apiVersion"),
                "kind": type_meta("kind"),
                "metadata": object_meta_ref(),
                "spec": {
                    "type": "object",
                    "description": "What the widget should be.",
                    "required": ["size"],
                    "x-kubernetes-validations": [{ "rule": "self.size <= 10", "message": "too big" }],
                    "properties": {
                        "size": { "type": "integer", "minimum": 1, "maximum": 10 },
                        "port": { "x-kubernetes-int-or-string": true },
                        "note": {},
                        "mode": { "type": "string", "enum": ["fast", "slow"] },
                        "extra": { "x-kubernetes-preserve-unknown-fields": true },
                        "blobs": { "type": "array", "items": { "x-kubernetes-preserve-unknown-fields": true } },
                        "template": {
                            "type": "object",
                            "x-kubernetes-embedded-resource": true,
                            "required": ["kind", "apiVersion"],
                            "properties": {
                                "apiVersion": embedded("apiVersion"),
                                "kind": embedded("kind"),
                                "metadata": object_meta_ref(),
                                "spec": { "type": "object", "properties": { "image": { "type": "string" } } }
                            }
                        },
                        // Unchanged.
                        "labels": unchanged("labels"),
                        "ports": unchanged("ports"),
                    }
                }
            }
        });
        assert_eq!(v2, expected);

        let gadget = custom_resource(
            "Gadget",
            json!({ "type": "object", "x-kubernetes-preserve-unknown-fields": true }),
        );
        assert_eq!(
            v2_custom_resource_schema(&gadget, gadget.schema.as_ref().unwrap()),
            json!({
                "type": "object",
                "x-kubernetes-group-version-kind": [{ "group": "example.com", "kind": "Gadget", "version": "v1" }]
            })
        );

        let doc = v2_json(&served_types());
        assert_eq!(doc["definitions"]["com.example.v1.Widget"], expected);
        let patch =
            &doc["paths"]["/apis/example.com/v1/namespaces/{namespace}/widgets/{name}"]["patch"];
        assert_eq!(patch["operationId"], "patchExampleComV1NamespacedWidget");
        assert_eq!(
            patch["consumes"],
            json!([
                "application/json-patch+json",
                "application/merge-patch+json",
                "application/apply-patch+yaml"
            ])
        );
    }

    #[test]
    fn the_protobuf_document_decodes_to_the_json_one() {
        let doc = v2_json(&served_types());
        let bytes = gnostic::encode(&doc);
        // `swagger` (field 1) comes first, then `info` (field 2).
        assert_eq!(&bytes[..6], b"\x0a\x032.0\x12");
        assert_eq!(gnostic::decode(&bytes), doc);
    }

    #[test]
    fn a_vendor_extension_is_sent_as_yaml() {
        let doc = v2_json(&crate::store::kinds::builtin_types());
        let bytes = gnostic::encode(&doc);
        let decoded = <gnostic::Document as prost::Message>::decode(bytes.as_slice()).unwrap();
        let deployment = decoded
            .definitions
            .unwrap()
            .additional_properties
            .into_iter()
            .find(|d| d.name == "io.k8s.api.apps.v1.Deployment")
            .and_then(|d| d.value)
            .unwrap();
        let gvk = &deployment.vendor_extension[0];
        assert_eq!(gvk.name, "x-kubernetes-group-version-kind");
        assert_eq!(
            gvk.value.as_ref().unwrap().yaml,
            "- \"group\": \"apps\"\n  \"kind\": \"Deployment\"\n  \"version\": \"v1\"\n"
        );
    }

    #[test]
    fn the_format_is_negotiated_as_kube_openapi_does() {
        let kubectl = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
        assert_eq!(v2_format(Some(kubectl)), Some(V2Format::Protobuf));
        assert_eq!(v2_format(Some(V2_PROTOBUF)), Some(V2Format::Protobuf));
        assert_eq!(v2_format(Some("application/json")), Some(V2Format::Json));
        assert_eq!(v2_format(None), Some(V2Format::Json));
        assert_eq!(v2_format(Some("*/*")), Some(V2Format::Json));
        let preferred = format!("application/json;q=0.5, {V2_PROTOBUF}");
        assert_eq!(v2_format(Some(&preferred)), Some(V2Format::Protobuf));
        assert_eq!(
            v2_format(Some("text/html, application/*;q=0.9")),
            Some(V2Format::Json)
        );
        assert_eq!(v2_format(Some("text/html")), None);
        assert_eq!(v2_format(Some("application/yaml")), None);
    }

    #[test]
    fn the_document_is_built_once_per_set_of_served_types() {
        let types = crate::store::kinds::builtin_types();
        let first = v2_document(&types);
        assert!(Arc::ptr_eq(&first, &v2_document(&types)));
        let served = served_types();
        let with_crds = v2_document(&served);
        assert!(!Arc::ptr_eq(&first, &with_crds));
        assert_ne!(first.etag, with_crds.etag);
        let json: Value = serde_json::from_slice(&with_crds.json).unwrap();
        assert_eq!(json, v2_json(&served));
        assert_eq!(gnostic::decode(&with_crds.protobuf), json);
    }
}
