//! Decoding of protobuf request bodies (`application/vnd.kubernetes.protobuf`,
//! what kubectl's `create <kind>` generators send) into the JSON objects the
//! store keeps, for every built-in kind the dev server serves but CRDs.
//!
//! Format: the magic `k8s\0`, then a `runtime.Unknown` (decoded by `prost`
//! into the `k8s-pb` bindings) whose `raw` is the typed object in the
//! `k8s.io/api` protobuf schema. That object is read field by field with
//! the table `devserver/openapi/protobuf-fields.json` (written by
//! `scripts/protobuf-fields` from the same bindings): each message's fields
//! by tag, with their JSON names and types. Times, int-or-strings,
//! quantities and raw JSON have their own messages, read into their JSON
//! forms. A tag the table lacks is skipped, as the server skips a field it
//! does not know.
//!
//! Go's protobuf encoding writes every field that is not a pointer, set or
//! not; decoding into Go and encoding as JSON then leaves out the zero
//! scalars (`omitempty`) but never a struct. So a zero scalar (`""`, 0,
//! `false`) or time is left out here too, unless the schema requires the
//! field or it is one of the pointer fields in `ZERO_KEPT`, whose zero a
//! client sets on purpose; a message (an int-or-string, a quantity, a
//! struct) is kept whatever it holds.

use std::collections::HashMap;
use std::sync::LazyLock;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use k8s_pb::apimachinery::pkg::runtime::Unknown;
use prost::Message;
use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::store::{built_in_schemas, format_time};

/// The pointer fields whose zero is kept, by JSON name: a client that
/// sends `replicas: 0`, `runAsUser: 0` or `optional: false` means it. (The
/// protobuf schema does not tell a pointer from a value; a value field of
/// one of these names that is not required keeps a zero Go would leave
/// out.)
const ZERO_KEPT: &[&str] = &[
    // Workloads, Jobs and CronJobs.
    "replicas",
    "revisionHistoryLimit",
    "progressDeadlineSeconds",
    "parallelism",
    "completions",
    "activeDeadlineSeconds",
    "backoffLimit",
    "backoffLimitPerIndex",
    "maxFailedIndexes",
    "manualSelector",
    "ttlSecondsAfterFinished",
    "suspend",
    "startingDeadlineSeconds",
    "successfulJobsHistoryLimit",
    "failedJobsHistoryLimit",
    "minReplicas",
    // Pods and their security contexts and volumes.
    "terminationGracePeriodSeconds",
    "automountServiceAccountToken",
    "enableServiceLinks",
    "shareProcessNamespace",
    "setHostnameAsFQDN",
    "hostUsers",
    "priority",
    "runAsUser",
    "runAsGroup",
    "runAsNonRoot",
    "fsGroup",
    "privileged",
    "allowPrivilegeEscalation",
    "readOnlyRootFilesystem",
    "optional",
    "defaultMode",
    "mode",
    // Services, endpoints, storage classes.
    "allocateLoadBalancerNodePorts",
    "port",
    "ready",
    "serving",
    "terminating",
    "allowVolumeExpansion",
];

/// One field of a message, as the table gives it.
#[derive(Deserialize)]
struct Field {
    /// Its JSON name; none for a Go struct embedded in its parent.
    name: Option<String>,
    /// `string`, `bytes`, `bool`, `int32`, `int64`, `double` or `message`.
    #[serde(rename = "type")]
    wire: Option<String>,
    /// A map's value type (its keys are strings).
    map: Option<String>,
    /// The message a `message` field (or map value) holds, by its OpenAPI name.
    message: Option<String>,
    #[serde(default)]
    repeated: bool,
    #[serde(default)]
    inline: bool,
    /// Its schema requires it: Go writes it even when zero.
    #[serde(default)]
    required: bool,
}

/// Each message's fields by tag.
static FIELDS: LazyLock<HashMap<String, HashMap<u32, Field>>> = LazyLock::new(|| {
    serde_json::from_str(include_str!("../openapi/protobuf-fields.json"))
        .expect("devserver/openapi/protobuf-fields.json is a table of messages")
});

const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";
const INT_OR_STRING: &str = "io.k8s.apimachinery.pkg.util.intstr.IntOrString";
const QUANTITY: &str = "io.k8s.apimachinery.pkg.api.resource.Quantity";
const RAW_JSON: &[&str] = &[
    "io.k8s.apimachinery.pkg.apis.meta.v1.FieldsV1",
    "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.JSON",
];

/// Decode a create/update body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    let msg = body
        .strip_prefix(b"k8s\0")
        .ok_or("not a Kubernetes protobuf message (no k8s\\0 prefix)")?;
    let unknown = Unknown::decode(msg).map_err(|e| format!("malformed protobuf body: {e}"))?;
    if unknown.content_encoding.is_some_and(|e| !e.is_empty()) {
        return Err("compressed protobuf bodies are not supported".into());
    }
    let type_meta = unknown.type_meta.unwrap_or_default();
    let api_version = type_meta.api_version.unwrap_or_default();
    let kind = type_meta.kind.unwrap_or_default();
    let (group, version) = api_version.split_once('/').unwrap_or(("", &api_version));
    let message = built_in_schemas::name_of_kind(group, version, kind.as_str())
        .filter(|_| group != "apiextensions.k8s.io")
        .ok_or_else(|| {
            format!(
                "protobuf bodies are decoded for the built-in kinds but CRDs, not {api_version} {kind:?}; send JSON"
            )
        })?;
    let raw = unknown.raw.unwrap_or_default();
    let mut object = match read_message(message, &raw)? {
        Value::Object(object) => object,
        _ => Map::new(),
    };
    object.insert("apiVersion".into(), json!(api_version));
    object.insert("kind".into(), json!(kind));
    object.entry("metadata").or_insert_with(|| json!({}));
    Ok(Value::Object(object))
}

/// One field's value on the wire.
enum Wire<'a> {
    Varint(u64),
    Fixed64(u64),
    Bytes(&'a [u8]),
    Fixed32,
}

/// The fields of a message, in order: `(tag, value)`.
fn wire_fields(mut bytes: &[u8]) -> Result<Vec<(u32, Wire<'_>)>, String> {
    let mut fields = Vec::new();
    while !bytes.is_empty() {
        let key = varint(&mut bytes)?;
        let tag = u32::try_from(key >> 3).map_err(|_| malformed("a field number out of range"))?;
        let value = match key & 7 {
            0 => Wire::Varint(varint(&mut bytes)?),
            1 => Wire::Fixed64(u64::from_le_bytes(take(&mut bytes, 8)?.try_into().unwrap())),
            2 => {
                let len = usize::try_from(varint(&mut bytes)?)
                    .map_err(|_| malformed("a length out of range"))?;
                Wire::Bytes(take(&mut bytes, len)?)
            }
            5 => {
                take(&mut bytes, 4)?;
                Wire::Fixed32
            }
            other => return Err(malformed(&format!("wire type {other}"))),
        };
        fields.push((tag, value));
    }
    Ok(fields)
}

fn varint(bytes: &mut &[u8]) -> Result<u64, String> {
    let mut value = 0u64;
    for shift in (0..70).step_by(7) {
        let (&byte, rest) = bytes
            .split_first()
            .ok_or_else(|| malformed("a truncated varint"))?;
        *bytes = rest;
        value |= u64::from(byte & 0x7f) << shift;
        if byte & 0x80 == 0 {
            return Ok(value);
        }
    }
    Err(malformed("a varint of more than ten bytes"))
}

fn take<'a>(bytes: &mut &'a [u8], len: usize) -> Result<&'a [u8], String> {
    if bytes.len() < len {
        return Err(malformed("a truncated field"));
    }
    let (head, rest) = bytes.split_at(len);
    *bytes = rest;
    Ok(head)
}

fn malformed(what: &str) -> String {
    format!("malformed protobuf body: {what}")
}

/// A message of the OpenAPI name `name` in its JSON form.
fn read_message(name: &str, bytes: &[u8]) -> Result<Value, String> {
    match name {
        TIME | MICRO_TIME => {
            let (mut seconds, mut nanos) = (0i64, 0i64);
            for (tag, value) in wire_fields(bytes)? {
                match (tag, value) {
                    (1, Wire::Varint(v)) => seconds = v as i64,
                    (2, Wire::Varint(v)) => nanos = i64::from(v as i32),
                    _ => {}
                }
            }
            Ok(match (seconds, nanos) {
                (0, 0) => Value::Null,
                _ => json!(format_time(seconds, nanos, name == MICRO_TIME)),
            })
        }
        INT_OR_STRING => {
            let (mut is_string, mut int, mut string) = (false, 0i64, String::new());
            for (tag, value) in wire_fields(bytes)? {
                match (tag, value) {
                    (1, Wire::Varint(v)) => is_string = v == 1,
                    (2, Wire::Varint(v)) => int = i64::from(v as i32),
                    (3, Wire::Bytes(b)) => string = text(b)?,
                    _ => {}
                }
            }
            Ok(if is_string { json!(string) } else { json!(int) })
        }
        QUANTITY => {
            let mut quantity = String::new();
            for (tag, value) in wire_fields(bytes)? {
                if let (1, Wire::Bytes(b)) = (tag, value) {
                    quantity = text(b)?;
                }
            }
            Ok(json!(quantity))
        }
        _ if RAW_JSON.contains(&name) => {
            let mut raw = Value::Null;
            for (tag, value) in wire_fields(bytes)? {
                if let (1, Wire::Bytes(b)) = (tag, value) {
                    raw = serde_json::from_slice(b)
                        .map_err(|e| malformed(&format!("{name}: {e}")))?;
                }
            }
            Ok(raw)
        }
        _ => {
            let mut object = Map::new();
            read_object(name, bytes, &mut object)?;
            Ok(Value::Object(object))
        }
    }
}

/// The fields of the message `name` into `object` (an embedded struct's
/// into its parent's).
fn read_object(name: &str, bytes: &[u8], object: &mut Map<String, Value>) -> Result<(), String> {
    let Some(fields) = FIELDS.get(name) else {
        return match built_in_schemas::get(name) {
            // A message with no fields of its own: `{}`.
            Some(schema) if schema.get("properties").is_none() && schema["type"] == "object" => {
                Ok(())
            }
            _ => Err(format!(
                "protobuf bodies holding a {name} are not decoded; send JSON"
            )),
        };
    };
    for (tag, value) in wire_fields(bytes)? {
        let Some(field) = fields.get(&tag) else {
            continue;
        };
        if field.inline {
            let Wire::Bytes(bytes) = value else {
                return Err(malformed(&format!("{name}: field {tag} is not a message")));
            };
            read_object(field.message.as_deref().unwrap_or_default(), bytes, object)?;
            continue;
        }
        let json_name = field.name.as_deref().unwrap_or_default();
        if let Some(value_type) = &field.map {
            let Wire::Bytes(entry) = value else {
                return Err(malformed(&format!("{name}.{json_name}: not a map entry")));
            };
            // A value the entry leaves out is its type's zero.
            let mut item = match value_type.as_str() {
                "message" => read_message(field.message.as_deref().unwrap_or_default(), &[])?,
                _ => json!(""),
            };
            let mut key = String::new();
            for (entry_tag, entry_value) in wire_fields(entry)? {
                match entry_tag {
                    1 => {
                        key = scalar("string", None, entry_value)?
                            .as_str()
                            .unwrap_or_default()
                            .into()
                    }
                    2 => item = scalar(value_type, field.message.as_deref(), entry_value)?,
                    _ => {}
                }
            }
            let map = object.entry(json_name).or_insert_with(|| json!({}));
            map[key] = item;
            continue;
        }
        let wire = field.wire.as_deref().unwrap_or_default();
        if field.repeated {
            let items = object.entry(json_name).or_insert_with(|| json!([]));
            match (wire, value) {
                // Packed numbers: one run of varints.
                ("int32" | "int64", Wire::Bytes(mut run)) => {
                    while !run.is_empty() {
                        let v = varint(&mut run)?;
                        items.as_array_mut().unwrap().push(number(wire, v));
                    }
                }
                (_, value) => {
                    let item = scalar(wire, field.message.as_deref(), value)?;
                    items.as_array_mut().unwrap().push(item);
                }
            }
            continue;
        }
        let item = scalar(wire, field.message.as_deref(), value)?;
        let zero = match &item {
            // A zero time: `null`, which a create leaves out.
            Value::Null => true,
            _ if wire == "message" => false,
            Value::String(s) => s.is_empty(),
            Value::Bool(b) => !b,
            Value::Number(n) => n.as_f64() == Some(0.0),
            _ => false,
        };
        if zero && !field.required && !ZERO_KEPT.contains(&json_name) {
            object.remove(json_name);
        } else {
            object.insert(json_name.to_string(), item);
        }
    }
    Ok(())
}

/// A field's value of the type `wire` (`message`: of the message `message`).
fn scalar(wire: &str, message: Option<&str>, value: Wire<'_>) -> Result<Value, String> {
    Ok(match (wire, value) {
        ("string", Wire::Bytes(b)) => json!(text(b)?),
        ("bytes", Wire::Bytes(b)) => json!(STANDARD.encode(b)),
        ("message", Wire::Bytes(b)) => read_message(message.unwrap_or_default(), b)?,
        ("bool", Wire::Varint(v)) => json!(v != 0),
        ("int32" | "int64", Wire::Varint(v)) => number(wire, v),
        ("double", Wire::Fixed64(bits)) => json!(f64::from_bits(bits)),
        (wire, _) => return Err(malformed(&format!("a {wire} field of another wire type"))),
    })
}

/// A varint as the signed number of its type.
fn number(wire: &str, v: u64) -> Value {
    if wire == "int32" {
        json!(v as i32)
    } else {
        json!(v as i64)
    }
}

fn text(bytes: &[u8]) -> Result<String, String> {
    String::from_utf8(bytes.to_vec()).map_err(|_| malformed("a string that is not UTF-8"))
}

#[cfg(test)]
mod tests {
    use k8s_pb::api::apps::v1::{Deployment, DeploymentSpec};
    use k8s_pb::api::core::v1::{
        ConfigMap, ConfigMapEnvSource, Container, EnvFromSource, LocalObjectReference, Namespace,
        NamespaceSpec, PodSpec, PodTemplateSpec, ResourceRequirements, Secret, ServiceAccount,
    };
    use k8s_pb::api::policy::v1::{PodDisruptionBudget, PodDisruptionBudgetSpec};
    use k8s_pb::apimachinery::pkg::api::resource::Quantity;
    use k8s_pb::apimachinery::pkg::apis::meta::v1::{LabelSelector, ObjectMeta, Time};
    use k8s_pb::apimachinery::pkg::runtime::TypeMeta;
    use k8s_pb::apimachinery::pkg::util::intstr::IntOrString;

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
        for (api_version, kind) in [
            ("example.com/v1", "Widget"),
            ("apiextensions.k8s.io/v1", "CustomResourceDefinition"),
        ] {
            assert!(
                decode(&body(api_version, kind, None))
                    .unwrap_err()
                    .contains(kind)
            );
        }
        let gzip = Unknown {
            content_encoding: Some("gzip".into()),
            ..Default::default()
        };
        let mut gz = b"k8s\0".to_vec();
        gz.extend(gzip.encode_to_vec());
        assert!(decode(&gz).unwrap_err().contains("compressed"));
    }

    /// What Go's encoding writes for every field that is no pointer (a
    /// zero string, `false`, 0, a zero time) is left out, as the server's
    /// JSON leaves it out; a pointer's zero that a client means is kept.
    #[test]
    fn decodes_a_deployment_as_kubectl_create_sends_it() {
        let container = Container {
            name: Some("web".into()),
            image: Some("nginx".into()),
            // Written though unset: strings and booleans that are no pointers.
            termination_message_path: Some(String::new()),
            stdin: Some(false),
            resources: Some(ResourceRequirements {
                limits: [(
                    "cpu".into(),
                    Quantity {
                        string: Some("500m".into()),
                    },
                )]
                .into(),
                ..Default::default()
            }),
            env_from: vec![EnvFromSource {
                config_map_ref: Some(ConfigMapEnvSource {
                    local_object_reference: Some(LocalObjectReference {
                        name: Some("settings".into()),
                    }),
                    optional: Some(false),
                }),
                ..Default::default()
            }],
            ..Default::default()
        };
        let deployment = Deployment {
            metadata: Some(ObjectMeta {
                name: Some("web".into()),
                generate_name: Some(String::new()),
                creation_timestamp: Some(Time::default()),
                labels: [("app".into(), "web".into())].into(),
                ..Default::default()
            }),
            spec: Some(DeploymentSpec {
                replicas: Some(0),
                selector: Some(LabelSelector {
                    match_labels: [("app".into(), "web".into())].into(),
                    ..Default::default()
                }),
                template: Some(PodTemplateSpec {
                    metadata: Some(ObjectMeta {
                        creation_timestamp: Some(Time {
                            seconds: Some(1_700_000_000),
                            nanos: Some(0),
                        }),
                        ..Default::default()
                    }),
                    spec: Some(PodSpec {
                        containers: vec![container],
                        ..Default::default()
                    }),
                }),
                strategy: Some(Default::default()),
                min_ready_seconds: Some(0),
                paused: Some(false),
                ..Default::default()
            }),
            status: Some(Default::default()),
        };
        let v = decode(&body(
            "apps/v1",
            "Deployment",
            Some(deployment.encode_to_vec()),
        ))
        .unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "apps/v1", "kind": "Deployment",
                   "metadata": {"name": "web", "labels": {"app": "web"}},
                   "spec": {
                       "replicas": 0,
                       "selector": {"matchLabels": {"app": "web"}},
                       "template": {
                           "metadata": {"creationTimestamp": "2023-11-14T22:13:20Z"},
                           "spec": {"containers": [{
                               "name": "web", "image": "nginx",
                               "resources": {"limits": {"cpu": "500m"}},
                               "envFrom": [{"configMapRef": {"name": "settings", "optional": false}}],
                           }]},
                       },
                       "strategy": {},
                   },
                   "status": {}})
        );
    }

    #[test]
    fn reads_int_or_strings_and_skips_tags_it_does_not_know() {
        let pdb = PodDisruptionBudget {
            metadata: meta("pdb"),
            spec: Some(PodDisruptionBudgetSpec {
                min_available: Some(IntOrString {
                    r#type: Some(1),
                    int_val: Some(0),
                    str_val: Some("50%".into()),
                }),
                // A message: kept though it holds a zero.
                max_unavailable: Some(IntOrString {
                    r#type: Some(0),
                    int_val: Some(0),
                    str_val: None,
                }),
                ..Default::default()
            }),
            status: None,
        };
        let mut raw = pdb.encode_to_vec();
        // Field 99, a string: of a later version than the table's.
        raw.extend([0x9a, 0x06, 0x01, b'x']);
        let v = decode(&body("policy/v1", "PodDisruptionBudget", Some(raw))).unwrap();
        assert_eq!(
            v["spec"],
            json!({"minAvailable": "50%", "maxUnavailable": 0})
        );
    }

    /// A field the schema requires keeps its zero, as Go writes it.
    #[test]
    fn a_required_field_keeps_its_zero() {
        let class = k8s_pb::api::scheduling::v1::PriorityClass {
            metadata: meta("zero"),
            value: Some(0),
            global_default: Some(false),
            ..Default::default()
        };
        let v = decode(&body(
            "scheduling.k8s.io/v1",
            "PriorityClass",
            Some(class.encode_to_vec()),
        ))
        .unwrap();
        assert_eq!(v["value"], 0, "{v}");
        assert!(v.get("globalDefault").is_none(), "{v}");
    }

    /// A map entry may leave out its value: it is its type's zero.
    #[test]
    fn a_map_entry_without_its_value_holds_its_zero() {
        // ObjectMeta field 11 (labels), an entry of field 1 (key) alone.
        let meta = [0x5a, 0x03, 0x0a, 0x01, b'k'];
        let mut raw = vec![0x0a, meta.len() as u8];
        raw.extend(meta);
        let v = decode(&body("v1", "ConfigMap", Some(raw))).unwrap();
        assert_eq!(v["metadata"], json!({"labels": {"k": ""}}));
    }

    #[test]
    fn a_micro_time_keeps_six_digits() {
        assert_eq!(
            format_time(1_700_000_000, 5_000_123, true),
            "2023-11-14T22:13:20.005000Z"
        );
        assert_eq!(
            format_time(1_700_000_000, 5_000_123, false),
            "2023-11-14T22:13:20Z"
        );
    }
}
