//! The schemas a server serves for custom resources, and the check of field
//! paths against them. kube-apiserver's OpenAPI v3 document of a
//! group/version (`/openapi/v3/apis/G/V`, found through `/openapi/v3`)
//! holds each custom resource's structural schema, tagged with its
//! `x-kubernetes-group-version-kind`: what k8s-openapi's types are to the
//! built-in kinds ([`crate::built_in_kinds`]), that schema is to a custom
//! resource, so a guest's misspelt index or prune path of one is found at
//! start.

use serde_json::Value;

use super::client::{ApiClient, SendError};
use super::status::{ApiError, ApiErrorKind};
use crate::built_in_kinds::{FieldEnd, FieldPathError, Problem, object_field_path};
use recon_api_semantics::Gvk;

/// A custom resource's served schema, with the document's components its
/// references point into.
#[derive(Debug, Clone)]
pub struct ServedSchema {
    kind: String,
    schema: Value,
    components: Value,
}

/// The schema the server serves for `gvk`, or `None` when it serves none
/// (a kind without a schema, a server without OpenAPI v3).
pub async fn served_schema(
    client: &ApiClient,
    gvk: &Gvk,
) -> Result<Option<ServedSchema>, ApiError> {
    let root = get(client, "/openapi/v3").await?;
    let key = if gvk.group.is_empty() {
        format!("api/{}", gvk.version)
    } else {
        format!("apis/{}/{}", gvk.group, gvk.version)
    };
    let Some(url) = root
        .pointer(&format!(
            "/paths/{}/serverRelativeURL",
            key.replace('/', "~1")
        ))
        .and_then(Value::as_str)
    else {
        return Ok(None);
    };
    let document = get(client, url).await?;
    Ok(ServedSchema::of(gvk, &document))
}

async fn get(client: &ApiClient, path: &str) -> Result<Value, ApiError> {
    let request = http::Request::get(path)
        .header(http::header::ACCEPT, "application/json")
        .body(Vec::new())
        .map_err(|e| ApiError::new(ApiErrorKind::Other, e.to_string()))?;
    let body = client
        .send_for_bytes(request)
        .await
        .map_err(|e: SendError| e.to_api_error())?;
    serde_json::from_slice(&body).map_err(|e| {
        ApiError::new(
            ApiErrorKind::Other,
            format!("{path}: malformed OpenAPI document: {e}"),
        )
    })
}

impl ServedSchema {
    /// The schema of `gvk` in a group/version's OpenAPI v3 `document`.
    pub fn of(gvk: &Gvk, document: &Value) -> Option<ServedSchema> {
        let components = document.pointer("/components/schemas")?;
        let tagged = |schema: &&Value| {
            schema
                .get("x-kubernetes-group-version-kind")
                .and_then(Value::as_array)
                .is_some_and(|kinds| {
                    kinds.iter().any(|k| {
                        k["group"] == gvk.group.as_str()
                            && k["version"] == gvk.version.as_str()
                            && k["kind"] == gvk.kind.as_str()
                    })
                })
        };
        let schema = components.as_object()?.values().find(tagged)?;
        Some(ServedSchema {
            kind: gvk.kind.clone(),
            schema: schema.clone(),
            components: components.clone(),
        })
    }

    /// What the dot-separated `path` reaches in the kind's objects, or why
    /// it reaches nothing. Lists on the way are descended into, as indexes
    /// read them; `metadata`, `apiVersion` and `kind` are every object's.
    pub fn field_path(&self, path: &str) -> Result<FieldEnd, FieldPathError> {
        if let Some(common) = object_field_path(&self.kind, path) {
            return common;
        }
        let segments: Vec<&str> = path.split('.').collect();
        let error = |at: usize, problem| FieldPathError {
            kind: self.kind.clone(),
            path: path.to_string(),
            at: segments[..at].join("."),
            problem: Box::new(problem),
        };
        let mut node = self.items(&self.schema);
        for (at, segment) in segments.iter().enumerate() {
            let properties = node.get("properties").and_then(Value::as_object);
            let additional = node.get("additionalProperties");
            node = match properties.and_then(|p| p.get(*segment)) {
                Some(child) => self.items(child),
                None => match additional {
                    Some(child) if child.is_object() => self.items(child),
                    Some(Value::Bool(true)) => return Ok(FieldEnd::Any),
                    _ => match self.end(node) {
                        FieldEnd::Any => return Ok(FieldEnd::Any),
                        FieldEnd::Object => {
                            let fields = properties
                                .map(|p| p.keys().cloned().collect())
                                .unwrap_or_default();
                            let type_name = match at {
                                0 => self.kind.clone(),
                                _ => "object".to_string(),
                            };
                            return Err(error(
                                at,
                                Problem::NoField {
                                    segment: segment.to_string(),
                                    type_name,
                                    fields,
                                },
                            ));
                        }
                        end => {
                            return Err(error(
                                at,
                                Problem::Below {
                                    segment: segment.to_string(),
                                    end,
                                },
                            ));
                        }
                    },
                },
            };
        }
        Ok(self.end(node))
    }

    /// `schema` with its reference followed and its lists' items taken.
    fn items<'a>(&'a self, mut schema: &'a Value) -> &'a Value {
        loop {
            schema = self.resolved(schema);
            match schema.get("items") {
                Some(items) if schema["type"] == "array" => schema = items,
                _ => return schema,
            }
        }
    }

    /// `schema`, or what its `$ref` (or `allOf` of one) points to in the
    /// document's components.
    fn resolved<'a>(&'a self, schema: &'a Value) -> &'a Value {
        let reference = schema
            .get("$ref")
            .or_else(|| schema.pointer("/allOf/0/$ref"))
            .and_then(Value::as_str)
            .and_then(|r| r.strip_prefix("#/components/schemas/"));
        reference
            .and_then(|name| self.components.get(name))
            .unwrap_or(schema)
    }

    /// What a value of `schema` is.
    fn end(&self, schema: &Value) -> FieldEnd {
        let flag = |name: &str| schema.get(name).and_then(Value::as_bool) == Some(true);
        if flag("x-kubernetes-int-or-string") {
            return FieldEnd::Any;
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("string") => FieldEnd::String,
            Some("integer") => FieldEnd::Scalar("an integer"),
            Some("number") => FieldEnd::Scalar("a number"),
            Some("boolean") => FieldEnd::Scalar("a boolean"),
            Some("object") if schema.get("properties").is_some() => FieldEnd::Object,
            Some("object") if schema.get("additionalProperties").is_some() => FieldEnd::Map,
            Some("object") if !flag("x-kubernetes-preserve-unknown-fields") => FieldEnd::Object,
            _ => FieldEnd::Any,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn widgets() -> ServedSchema {
        let document = json!({"components": {"schemas": {
            "io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta": {"type": "object"},
            "com.example.v1.Widget": {
                "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Widget"}],
                "type": "object",
                "properties": {
                    "metadata": {"allOf": [{"$ref": "#/components/schemas/io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"}]},
                    "spec": {"type": "object", "properties": {
                        "configMapName": {"type": "string"},
                        "replicas": {"type": "integer"},
                        "port": {"x-kubernetes-int-or-string": true},
                        "selector": {"type": "object", "additionalProperties": {"type": "string"}},
                        "raw": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "volumes": {"type": "array", "items": {"type": "object", "properties": {
                            "configMap": {"type": "object", "properties": {"name": {"type": "string"}}},
                            "tags": {"type": "array", "items": {"type": "string"}}}}}
                    }}
                }
            }
        }}});
        ServedSchema::of(&Gvk::new("example.com", "v1", "Widget"), &document).unwrap()
    }

    #[test]
    fn the_schema_is_found_by_its_kind() {
        let document = json!({"components": {"schemas": {"x": {
            "x-kubernetes-group-version-kind": [{"group": "example.com", "version": "v1", "kind": "Gadget"}]}}}});
        assert!(ServedSchema::of(&Gvk::new("example.com", "v1", "Widget"), &document).is_none());
        assert!(ServedSchema::of(&Gvk::new("example.com", "v1", "Gadget"), &document).is_some());
    }

    #[test]
    fn paths_reach_what_the_schema_declares() {
        let widgets = widgets();
        for (path, end) in [
            ("spec.configMapName", FieldEnd::String),
            ("spec.volumes.configMap.name", FieldEnd::String),
            ("spec.volumes.tags", FieldEnd::String),
            ("spec.replicas", FieldEnd::Scalar("an integer")),
            ("spec.port", FieldEnd::Any),
            ("spec.selector", FieldEnd::Map),
            ("spec.selector.app", FieldEnd::String),
            ("spec.raw.anything.below", FieldEnd::Any),
            ("spec.volumes", FieldEnd::Object),
            ("metadata.labels.app", FieldEnd::String),
            ("metadata.name", FieldEnd::String),
        ] {
            assert_eq!(widgets.field_path(path), Ok(end), "{path}");
        }
    }

    #[test]
    fn a_misspelt_path_names_the_field_it_lacks() {
        let widgets = widgets();
        assert_eq!(
            widgets
                .field_path("spec.volumes.configMap.nme")
                .unwrap_err()
                .to_string(),
            "field path \"spec.volumes.configMap.nme\": Widget's spec.volumes.configMap (object) has no field \"nme\"; did you mean \"name\"?"
        );
        assert_eq!(
            widgets.field_path("sepc.x").unwrap_err().to_string(),
            "field path \"sepc.x\": a Widget (Widget) has no field \"sepc\"; did you mean \"spec\"?"
        );
        assert_eq!(
            widgets
                .field_path("spec.replicas.x")
                .unwrap_err()
                .to_string(),
            "field path \"spec.replicas.x\": Widget's spec.replicas is an integer, which has no field \"x\""
        );
        assert!(
            widgets
                .field_path("metadata.lables")
                .unwrap_err()
                .to_string()
                .contains("Widget's metadata (ObjectMeta) has no field \"lables\"; did you mean \"labels\"?")
        );
    }
}
