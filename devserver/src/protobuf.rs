//! Decoding of the few protobuf request bodies kubectl's `create <kind>`
//! generators send (`application/vnd.kubernetes.protobuf`): Namespace,
//! ConfigMap, Secret and ServiceAccount, with the object metadata a client
//! sets (name, generateName, namespace, labels, annotations). Anything else
//! in protobuf is refused with 415; send JSON.
//!
//! Format: the magic `k8s\0`, then a `runtime.Unknown` whose `raw` is the
//! typed object in the `k8s.io/api` protobuf schema. The wire format is
//! decoded by `prost` into the `k8s-pb` bindings; this module only turns the
//! typed messages into the JSON objects the store keeps.

use std::collections::BTreeMap;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_pb::api::core::v1::{ConfigMap, Namespace, Secret, ServiceAccount};
use k8s_pb::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde_json::{Map, Value, json};

/// The kinds this module decodes.
pub const KINDS: &[&str] = &["Namespace", "ConfigMap", "Secret", "ServiceAccount"];

/// Decode a create/update body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    let msg = body
        .strip_prefix(b"k8s\0")
        .ok_or("not a Kubernetes protobuf message (no k8s\\0 prefix)")?;
    let unknown = Unknown::decode(msg).map_err(wire_error)?;
    if unknown.content_encoding.is_some_and(|e| !e.is_empty()) {
        return Err("compressed protobuf bodies are not supported".into());
    }
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let raw = unknown.raw.unwrap_or_default();
    let raw = raw.as_slice();

    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    let metadata = match kind.as_str() {
        "Namespace" => {
            let ns = Namespace::decode(raw).map_err(wire_error)?;
            let finalizers = ns.spec.map(|s| s.finalizers).unwrap_or_default();
            if !finalizers.is_empty() {
                obj.insert("spec".into(), json!({ "finalizers": finalizers }));
            }
            ns.metadata
        }
        "ConfigMap" => {
            let cm = ConfigMap::decode(raw).map_err(wire_error)?;
            insert_map(&mut obj, "data", cm.data);
            insert_map(&mut obj, "binaryData", base64_values(cm.binary_data));
            if let Some(immutable) = cm.immutable {
                obj.insert("immutable".into(), json!(immutable));
            }
            cm.metadata
        }
        "Secret" => {
            let secret = Secret::decode(raw).map_err(wire_error)?;
            insert_map(&mut obj, "data", base64_values(secret.data));
            if let Some(ty) = secret.r#type.filter(|t| !t.is_empty()) {
                obj.insert("type".into(), json!(ty));
            }
            insert_map(&mut obj, "stringData", secret.string_data);
            if let Some(immutable) = secret.immutable {
                obj.insert("immutable".into(), json!(immutable));
            }
            secret.metadata
        }
        "ServiceAccount" => {
            let sa = ServiceAccount::decode(raw).map_err(wire_error)?;
            if let Some(automount) = sa.automount_service_account_token {
                obj.insert("automountServiceAccountToken".into(), json!(automount));
            }
            sa.metadata
        }
        other => {
            return Err(format!(
                "protobuf bodies are only decoded for {KINDS:?}, not {other:?}; send JSON"
            ));
        }
    };
    obj.insert("metadata".into(), object_meta(metadata.unwrap_or_default()));
    Ok(Value::Object(obj))
}

/// The metadata fields a client sets on create; the server owns the rest.
fn object_meta(meta: ObjectMeta) -> Value {
    let mut out = Map::new();
    for (field, value) in [
        ("name", meta.name),
        ("generateName", meta.generate_name),
        ("namespace", meta.namespace),
    ] {
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            out.insert(field.into(), json!(v));
        }
    }
    insert_map(&mut out, "labels", meta.labels);
    insert_map(&mut out, "annotations", meta.annotations);
    Value::Object(out)
}

/// `obj[field] = map`, unless the map is empty (absent on the wire).
fn insert_map(obj: &mut Map<String, Value>, field: &str, map: BTreeMap<String, String>) {
    if !map.is_empty() {
        obj.insert(field.into(), json!(map));
    }
}

/// `bytes` map values as the base64 strings their JSON form carries.
fn base64_values(map: BTreeMap<String, Vec<u8>>) -> BTreeMap<String, String> {
    map.into_iter()
        .map(|(k, v)| (k, STANDARD.encode(v)))
        .collect()
}

fn wire_error(e: prost::DecodeError) -> String {
    format!("malformed protobuf body: {e}")
}

#[cfg(test)]
mod tests {
    use k8s_pb::api::core::v1::NamespaceSpec;
    use k8s_pb::apimachinery::pkg::runtime::TypeMeta;

    use super::*;

    fn body(api_version: &str, kind: &str, raw: Option<Vec<u8>>) -> Vec<u8> {
        let unknown = Unknown {
            type_meta: Some(TypeMeta {
                api_version: Some(api_version.into()),
                kind: Some(kind.into()),
            }),
            raw,
            content_encoding: None,
            content_type: None,
        };
        let mut out = b"k8s\0".to_vec();
        out.extend(unknown.encode_to_vec());
        out
    }

    fn meta(name: &str) -> Option<ObjectMeta> {
        Some(ObjectMeta {
            name: Some(name.into()),
            ..Default::default()
        })
    }

    #[test]
    fn decodes_a_configmap_with_labels_and_data() {
        let cm = ConfigMap {
            metadata: Some(ObjectMeta {
                name: Some("cm".into()),
                labels: [("app".into(), "demo".into())].into(),
                ..Default::default()
            }),
            data: [("k".into(), "v".into())].into(),
            binary_data: [("b".into(), b"foo".to_vec())].into(),
            immutable: Some(true),
        };
        let v = decode(&body("v1", "ConfigMap", Some(cm.encode_to_vec()))).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm", "labels": {"app": "demo"}},
                   "data": {"k": "v"}, "binaryData": {"b": "Zm9v"}, "immutable": true})
        );
    }

    #[test]
    fn decodes_a_secret_a_namespace_and_a_serviceaccount() {
        let secret = Secret {
            metadata: Some(ObjectMeta {
                generate_name: Some("s-".into()),
                namespace: Some("ns".into()),
                annotations: [("a".into(), "b".into())].into(),
                ..Default::default()
            }),
            data: [("k".into(), b"fooba".to_vec())].into(),
            string_data: [("t".into(), "text".into())].into(),
            r#type: Some("Opaque".into()),
            immutable: None,
        };
        let v = decode(&body("v1", "Secret", Some(secret.encode_to_vec()))).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Secret",
                   "metadata": {"generateName": "s-", "namespace": "ns",
                                "annotations": {"a": "b"}},
                   "data": {"k": "Zm9vYmE="}, "stringData": {"t": "text"},
                   "type": "Opaque"})
        );

        let ns = Namespace {
            metadata: meta("team"),
            spec: Some(NamespaceSpec {
                finalizers: vec!["kubernetes".into()],
            }),
            status: None,
        };
        let v = decode(&body("v1", "Namespace", Some(ns.encode_to_vec()))).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"},
                   "spec": {"finalizers": ["kubernetes"]}})
        );

        let sa = ServiceAccount {
            metadata: meta("bot"),
            automount_service_account_token: Some(false),
            ..Default::default()
        };
        let v = decode(&body("v1", "ServiceAccount", Some(sa.encode_to_vec()))).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "bot"},
                   "automountServiceAccountToken": false})
        );

        let v = decode(&body("v1", "Namespace", None)).unwrap();
        assert_eq!(v["metadata"], json!({}));
    }

    #[test]
    fn refuses_garbage_compression_and_other_kinds() {
        assert!(decode(b"{}").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        let mut truncated = body("v1", "ConfigMap", Some(b"\x0a\x05ab".to_vec()));
        assert!(decode(&truncated).unwrap_err().contains("malformed"));
        truncated.truncate(truncated.len() - 1);
        assert!(decode(&truncated).is_err());
        assert!(
            decode(&body("v1", "Pod", None))
                .unwrap_err()
                .contains("Pod")
        );
        let gzip = Unknown {
            content_encoding: Some("gzip".into()),
            ..Default::default()
        };
        let mut gz = b"k8s\0".to_vec();
        gz.extend(gzip.encode_to_vec());
        assert!(decode(&gz).unwrap_err().contains("compressed"));
    }
}
