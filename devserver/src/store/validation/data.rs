//! The data of ConfigMaps and Secrets, as `ValidateConfigMap` and
//! `ValidateSecret` check it: each key a config key (`IsConfigMapKey`), a
//! ConfigMap's key not in both `data` and `binaryData`, at most 1 MiB of
//! values, and a Secret of a known type with the keys its type needs (a
//! service account token's annotation, a Docker config that is a JSON
//! object, basic auth's username or password, an SSH private key, a TLS
//! certificate and key).

use base64::Engine as _;
use serde_json::{Map, Value};

use super::{Cause, names};

/// `core.MaxSecretSize`: the most bytes the values of one ConfigMap or
/// Secret may hold.
const MAX_SIZE: usize = 1024 * 1024;

/// A ConfigMap's data and binary data.
pub(super) fn config_map(object: &Value, causes: &mut Vec<Cause>) {
    let data = map(object, "data");
    let binary = map(object, "binaryData");
    let mut total = 0;
    for (key, value) in data {
        keyed(key, &format!("data[{key}]"), causes);
        if binary.contains_key(key) {
            causes.push(names::invalid(
                &format!("data[{key}]"),
                key,
                "duplicate of key present in binaryData".into(),
            ));
        }
        total += value.as_str().map_or(0, str::len);
    }
    for (key, value) in binary {
        keyed(key, &format!("binaryData[{key}]"), causes);
        total += decoded_len(value);
    }
    if total > MAX_SIZE {
        causes.push(Cause::too_long("", MAX_SIZE));
    }
}

/// A Secret's data, after its `stringData` was folded into it, and what its
/// type needs.
pub(super) fn secret(object: &Value, causes: &mut Vec<Cause>) {
    let data = map(object, "data");
    let mut total = 0;
    for (key, value) in data {
        keyed(key, &format!("data[{key}]"), causes);
        total += decoded_len(value);
    }
    if total > MAX_SIZE {
        causes.push(Cause::too_long("data", MAX_SIZE));
    }
    let required = |key: &str| Cause::required(&format!("data[{key}]"), "");
    match object.get("type").and_then(Value::as_str).unwrap_or("") {
        "kubernetes.io/service-account-token" => {
            let name = object
                .pointer("/metadata/annotations/kubernetes.io~1service-account.name")
                .and_then(Value::as_str)
                .unwrap_or("");
            if name.is_empty() {
                causes.push(Cause::required(
                    "metadata.annotations[kubernetes.io/service-account.name]",
                    "",
                ));
            }
        }
        kind @ ("kubernetes.io/dockercfg" | "kubernetes.io/dockerconfigjson") => {
            let key = if kind == "kubernetes.io/dockercfg" {
                ".dockercfg"
            } else {
                ".dockerconfigjson"
            };
            match data.get(key) {
                None => causes.push(required(key)),
                Some(value) => {
                    if let Some(problem) = json_object_problem(&decoded(value)) {
                        causes.push(names::invalid(
                            &format!("data[{key}]"),
                            "<secret contents redacted>",
                            problem,
                        ));
                    }
                }
            }
        }
        "kubernetes.io/basic-auth"
            if !data.contains_key("username") && !data.contains_key("password") =>
        {
            causes.push(required("username"));
            causes.push(required("password"));
        }
        "kubernetes.io/ssh-auth"
            if data
                .get("ssh-privatekey")
                .is_none_or(|v| decoded_len(v) == 0) =>
        {
            causes.push(required("ssh-privatekey"));
        }
        "kubernetes.io/tls" => {
            for key in ["tls.crt", "tls.key"] {
                if !data.contains_key(key) {
                    causes.push(required(key));
                }
            }
        }
        _ => {}
    }
}

fn map<'v>(object: &'v Value, field: &str) -> &'v Map<String, Value> {
    static EMPTY: std::sync::LazyLock<Map<String, Value>> = std::sync::LazyLock::new(Map::new);
    object
        .get(field)
        .and_then(Value::as_object)
        .unwrap_or(&EMPTY)
}

/// A data key at `field`, against `IsConfigMapKey`.
fn keyed(key: &str, field: &str, causes: &mut Vec<Cause>) {
    for problem in names::config_map_key(key) {
        causes.push(names::invalid(field, key, problem));
    }
}

/// The bytes of a base64 value (the typed read has checked it decodes).
fn decoded(value: &Value) -> Vec<u8> {
    let text = value.as_str().unwrap_or("");
    base64::engine::general_purpose::STANDARD
        .decode(text)
        .unwrap_or_default()
}

fn decoded_len(value: &Value) -> usize {
    decoded(value).len()
}

/// Why Go's `json.Unmarshal` into a `map[string]interface{}` refuses
/// `bytes`, in its words for the common cases: nothing or a cut-off
/// document, a first character no value starts with, a value that is not
/// an object (`null` is one); other syntax errors in serde_json's words.
fn json_object_problem(bytes: &[u8]) -> Option<String> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    let kind = match serde_json::from_slice::<Value>(bytes) {
        Ok(Value::Object(_) | Value::Null) => return None,
        Ok(Value::Array(_)) => "array",
        Ok(Value::String(_)) => "string",
        Ok(Value::Number(_)) => "number",
        Ok(Value::Bool(_)) => "bool",
        Err(e) if e.is_eof() => return Some("unexpected end of JSON input".into()),
        Err(_) if first.is_some_and(|b| !b"{[\"-0123456789tfn".contains(b)) => {
            let c = char::from(*first.expect("checked"));
            return Some(format!(
                "invalid character '{c}' looking for beginning of value"
            ));
        }
        Err(e) => return Some(e.to_string()),
    };
    Some(format!(
        "json: cannot unmarshal {kind} into Go value of type map[string]interface {{}}"
    ))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(check: fn(&Value, &mut Vec<Cause>), object: Value) -> Vec<String> {
        let mut causes = Vec::new();
        check(&object, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    fn b64(text: &str) -> String {
        base64::engine::general_purpose::STANDARD.encode(text)
    }

    #[test]
    fn a_config_maps_keys_are_config_keys_once_and_its_values_at_most_a_mebibyte() {
        let found = messages(
            config_map,
            json!({"data": {"ok.key": "v", "bad key": "v", "both": "v"},
                   "binaryData": {"both": b64("x"), "..hidden": b64("x")}}),
        );
        assert_eq!(
            found,
            [
                "data[bad key]: Invalid value: \"bad key\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')",
                "data[both]: Invalid value: \"both\": duplicate of key present in binaryData",
                "binaryData[..hidden]: Invalid value: \"..hidden\": must not start with '..'",
            ]
        );
        let big = "x".repeat(MAX_SIZE / 2 + 1);
        assert_eq!(
            messages(config_map, json!({"data": {"a": big, "b": big}})),
            [": Too long: may not be more than 1048576 bytes"]
        );
        assert!(messages(config_map, json!({"data": {"a": "x".repeat(MAX_SIZE)}})).is_empty());
    }

    #[test]
    fn a_secret_of_each_type_has_the_keys_it_needs() {
        let secret_of = |kind: &str, data: Value| json!({"type": kind, "data": data});
        assert_eq!(
            messages(
                secret,
                secret_of("kubernetes.io/tls", json!({"tls.crt": b64("c")}))
            ),
            ["data[tls.key]: Required value"]
        );
        assert_eq!(
            messages(secret, secret_of("kubernetes.io/basic-auth", json!({}))),
            [
                "data[username]: Required value",
                "data[password]: Required value"
            ]
        );
        assert!(
            messages(
                secret,
                secret_of("kubernetes.io/basic-auth", json!({"password": ""}))
            )
            .is_empty()
        );
        assert_eq!(
            messages(
                secret,
                secret_of("kubernetes.io/ssh-auth", json!({"ssh-privatekey": ""}))
            ),
            ["data[ssh-privatekey]: Required value"]
        );
        assert_eq!(
            messages(
                secret,
                secret_of("kubernetes.io/service-account-token", json!({}))
            ),
            ["metadata.annotations[kubernetes.io/service-account.name]: Required value"]
        );
        assert_eq!(
            messages(
                secret,
                secret_of("kubernetes.io/dockerconfigjson", json!({}))
            ),
            ["data[.dockerconfigjson]: Required value"]
        );
        let docker = |text: &str| {
            messages(
                secret,
                secret_of(
                    "kubernetes.io/dockerconfigjson",
                    json!({".dockerconfigjson": b64(text)}),
                ),
            )
        };
        assert!(docker(r#"{"auths": {}}"#).is_empty());
        assert!(docker("null").is_empty());
        let redacted = "data[.dockerconfigjson]: Invalid value: \"<secret contents redacted>\"";
        assert_eq!(
            docker("[]"),
            [format!(
                "{redacted}: json: cannot unmarshal array into Go value of type map[string]interface {{}}"
            )]
        );
        assert_eq!(
            docker("{\"auths\": "),
            [format!("{redacted}: unexpected end of JSON input")]
        );
        assert_eq!(
            docker("auths"),
            [format!(
                "{redacted}: invalid character 'a' looking for beginning of value"
            )]
        );
        assert_eq!(
            messages(secret, json!({"type": "Opaque", "data": {"k/v": b64("x")}})),
            [
                "data[k/v]: Invalid value: \"k/v\": a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
            ]
        );
    }
}
