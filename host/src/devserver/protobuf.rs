//! Decoding of the few protobuf request bodies kubectl's `create <kind>`
//! generators send (`application/vnd.kubernetes.protobuf`): Namespace,
//! ConfigMap, Secret and ServiceAccount, with the object metadata a client
//! sets (name, generateName, namespace, labels, annotations). Anything else
//! in protobuf is refused with 415; send JSON.
//!
//! Format: the magic `k8s\0`, then a `runtime.Unknown` (1: typeMeta
//! {1: apiVersion, 2: kind}, 2: raw, 3: contentEncoding, 4: contentType)
//! whose `raw` is the typed object in the `k8s.io/api` protobuf schema.

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value, json};

/// The kinds this module decodes.
pub const KINDS: &[&str] = &["Namespace", "ConfigMap", "Secret", "ServiceAccount"];

/// Decode a create/update body into the JSON object it stands for.
pub fn decode(body: &[u8]) -> Result<Value, String> {
    let msg = body
        .strip_prefix(b"k8s\0")
        .ok_or("not a Kubernetes protobuf message (no k8s\\0 prefix)")?;
    let mut api_version = String::new();
    let mut kind = String::new();
    let mut raw: &[u8] = &[];
    for field in Fields::new(msg) {
        match field? {
            (1, Wire::Bytes(type_meta)) => {
                for f in Fields::new(type_meta) {
                    match f? {
                        (1, Wire::Bytes(b)) => api_version = string(b)?,
                        (2, Wire::Bytes(b)) => kind = string(b)?,
                        _ => {}
                    }
                }
            }
            (2, Wire::Bytes(b)) => raw = b,
            (3, Wire::Bytes(b)) if !b.is_empty() => {
                return Err("compressed protobuf bodies are not supported".into());
            }
            _ => {}
        }
    }
    let mut obj = Map::new();
    obj.insert("apiVersion".into(), json!(api_version));
    obj.insert("kind".into(), json!(kind));
    match kind.as_str() {
        "Namespace" => {
            for f in Fields::new(raw) {
                match f? {
                    (1, Wire::Bytes(b)) => {
                        obj.insert("metadata".into(), object_meta(b)?);
                    }
                    (2, Wire::Bytes(spec)) => {
                        let mut finalizers = Vec::new();
                        for f in Fields::new(spec) {
                            if let (1, Wire::Bytes(b)) = f? {
                                finalizers.push(json!(string(b)?));
                            }
                        }
                        if !finalizers.is_empty() {
                            obj.insert("spec".into(), json!({ "finalizers": finalizers }));
                        }
                    }
                    _ => {}
                }
            }
        }
        "ConfigMap" => {
            for f in Fields::new(raw) {
                match f? {
                    (1, Wire::Bytes(b)) => {
                        obj.insert("metadata".into(), object_meta(b)?);
                    }
                    (2, Wire::Bytes(b)) => map_entry(&mut obj, "data", b, false)?,
                    (3, Wire::Bytes(b)) => map_entry(&mut obj, "binaryData", b, true)?,
                    (4, Wire::Varint(v)) => {
                        obj.insert("immutable".into(), json!(v != 0));
                    }
                    _ => {}
                }
            }
        }
        "Secret" => {
            for f in Fields::new(raw) {
                match f? {
                    (1, Wire::Bytes(b)) => {
                        obj.insert("metadata".into(), object_meta(b)?);
                    }
                    (2, Wire::Bytes(b)) => map_entry(&mut obj, "data", b, true)?,
                    (3, Wire::Bytes(b)) if !b.is_empty() => {
                        obj.insert("type".into(), json!(string(b)?));
                    }
                    (4, Wire::Bytes(b)) => map_entry(&mut obj, "stringData", b, false)?,
                    (5, Wire::Varint(v)) => {
                        obj.insert("immutable".into(), json!(v != 0));
                    }
                    _ => {}
                }
            }
        }
        "ServiceAccount" => {
            for f in Fields::new(raw) {
                match f? {
                    (1, Wire::Bytes(b)) => {
                        obj.insert("metadata".into(), object_meta(b)?);
                    }
                    (4, Wire::Varint(v)) => {
                        obj.insert("automountServiceAccountToken".into(), json!(v != 0));
                    }
                    _ => {}
                }
            }
        }
        other => {
            return Err(format!(
                "protobuf bodies are only decoded for {KINDS:?}, not {other:?}; send JSON"
            ));
        }
    }
    obj.entry("metadata").or_insert_with(|| json!({}));
    Ok(Value::Object(obj))
}

fn object_meta(b: &[u8]) -> Result<Value, String> {
    let mut meta = Map::new();
    for f in Fields::new(b) {
        match f? {
            (1, Wire::Bytes(b)) if !b.is_empty() => {
                meta.insert("name".into(), json!(string(b)?));
            }
            (2, Wire::Bytes(b)) if !b.is_empty() => {
                meta.insert("generateName".into(), json!(string(b)?));
            }
            (3, Wire::Bytes(b)) if !b.is_empty() => {
                meta.insert("namespace".into(), json!(string(b)?));
            }
            (11, Wire::Bytes(b)) => map_entry(&mut meta, "labels", b, false)?,
            (12, Wire::Bytes(b)) => map_entry(&mut meta, "annotations", b, false)?,
            _ => {}
        }
    }
    Ok(Value::Object(meta))
}

/// One `map<string, string|bytes>` entry (key = 1, value = 2) into `obj[field]`.
fn map_entry(
    obj: &mut Map<String, Value>,
    field: &str,
    entry: &[u8],
    bytes: bool,
) -> Result<(), String> {
    let mut key = String::new();
    let mut value = Value::String(String::new());
    for f in Fields::new(entry) {
        match f? {
            (1, Wire::Bytes(b)) => key = string(b)?,
            (2, Wire::Bytes(b)) => {
                value = if bytes {
                    json!(STANDARD.encode(b))
                } else {
                    json!(string(b)?)
                }
            }
            _ => {}
        }
    }
    let map = obj
        .entry(field)
        .or_insert_with(|| Value::Object(Map::new()));
    if let Value::Object(m) = map {
        m.insert(key, value);
    }
    Ok(())
}

fn string(b: &[u8]) -> Result<String, String> {
    String::from_utf8(b.to_vec()).map_err(|_| "a protobuf string is not UTF-8".to_string())
}

enum Wire<'a> {
    Varint(u64),
    Bytes(&'a [u8]),
    Fixed,
}

/// Iterator over (field number, value) of one protobuf message.
struct Fields<'a> {
    buf: &'a [u8],
    failed: bool,
}

impl<'a> Fields<'a> {
    fn new(buf: &'a [u8]) -> Self {
        Self { buf, failed: false }
    }

    fn varint(&mut self) -> Result<u64, String> {
        let mut value = 0u64;
        for shift in (0..64).step_by(7) {
            let (&byte, rest) = self.buf.split_first().ok_or("truncated varint")?;
            self.buf = rest;
            value |= u64::from(byte & 0x7f) << shift;
            if byte & 0x80 == 0 {
                return Ok(value);
            }
        }
        Err("varint too long".into())
    }

    fn take(&mut self, n: usize) -> Result<&'a [u8], String> {
        if self.buf.len() < n {
            return Err("truncated protobuf field".into());
        }
        let (head, rest) = self.buf.split_at(n);
        self.buf = rest;
        Ok(head)
    }

    fn field(&mut self) -> Result<(u64, Wire<'a>), String> {
        let tag = self.varint()?;
        let value = match tag & 7 {
            0 => Wire::Varint(self.varint()?),
            1 => {
                self.take(8)?;
                Wire::Fixed
            }
            2 => {
                let len = usize::try_from(self.varint()?).map_err(|_| "length overflow")?;
                Wire::Bytes(self.take(len)?)
            }
            5 => {
                self.take(4)?;
                Wire::Fixed
            }
            other => return Err(format!("unsupported protobuf wire type {other}")),
        };
        Ok((tag >> 3, value))
    }
}

impl<'a> Iterator for Fields<'a> {
    type Item = Result<(u64, Wire<'a>), String>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.failed || self.buf.is_empty() {
            return None;
        }
        let r = self.field();
        self.failed = r.is_err();
        Some(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn field(out: &mut Vec<u8>, number: u8, bytes: &[u8]) {
        out.push((number << 3) | 2);
        out.push(bytes.len() as u8);
        out.extend_from_slice(bytes);
    }

    #[test]
    fn decodes_a_configmap_with_labels_and_data() {
        let mut label = Vec::new();
        field(&mut label, 1, b"app");
        field(&mut label, 2, b"demo");
        let mut meta = Vec::new();
        field(&mut meta, 1, b"cm");
        field(&mut meta, 11, &label);
        let mut data = Vec::new();
        field(&mut data, 1, b"k");
        field(&mut data, 2, b"v");
        let mut raw = Vec::new();
        field(&mut raw, 1, &meta);
        field(&mut raw, 2, &data);
        raw.extend_from_slice(&[4 << 3, 1]);
        let mut tm = Vec::new();
        field(&mut tm, 1, b"v1");
        field(&mut tm, 2, b"ConfigMap");
        let mut body = b"k8s\0".to_vec();
        field(&mut body, 1, &tm);
        field(&mut body, 2, &raw);
        let v = decode(&body).unwrap();
        assert_eq!(
            v,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                   "metadata": {"name": "cm", "labels": {"app": "demo"}},
                   "data": {"k": "v"}, "immutable": true})
        );
    }

    #[test]
    fn refuses_garbage_and_other_kinds() {
        assert!(decode(b"{}").is_err());
        assert!(decode(b"k8s\0\x0a\xff").is_err());
        let mut tm = Vec::new();
        field(&mut tm, 2, b"Pod");
        let mut body = b"k8s\0".to_vec();
        field(&mut body, 1, &tm);
        assert!(decode(&body).unwrap_err().contains("Pod"));
    }
}
