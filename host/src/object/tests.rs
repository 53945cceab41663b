//! Tests of the cached object: the fixture round trip, pruning, escapes, the
//! key rules (KEY-01/03/06/07) and a property test against serde_json.

use std::collections::BTreeMap;
use std::fmt;

use proptest::prelude::*;
use proptest::strategy::ValueTree;
use serde::de::{MapAccess, Visitor};
use serde::ser::SerializeMap;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::value::RawValue;
use serde_json::{Value, json};

use super::*;

const FIXTURE: &str = include_str!("../../testdata/pod.json");

/// Removes the whitespace outside strings: compact JSON in document order.
fn compact(pretty: &str) -> String {
    let mut out = String::with_capacity(pretty.len());
    let (mut in_string, mut escaped) = (false, false);
    for c in pretty.chars() {
        if in_string {
            out.push(c);
            match c {
                _ if escaped => escaped = false,
                '\\' => escaped = true,
                '"' => in_string = false,
                _ => {}
            }
        } else if !c.is_ascii_whitespace() {
            in_string = c == '"';
            out.push(c);
        }
    }
    out
}

/// A JSON object's members in document order, values kept as raw text.
struct OrderedMembers(Vec<(String, Box<RawValue>)>);

impl<'de> Deserialize<'de> for OrderedMembers {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl<'de> Visitor<'de> for V {
            type Value = OrderedMembers;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("an object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<OrderedMembers, A::Error> {
                let mut members = Vec::new();
                while let Some(member) = map.next_entry()? {
                    members.push(member);
                }
                Ok(OrderedMembers(members))
            }
        }
        d.deserialize_map(V)
    }
}

impl Serialize for OrderedMembers {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(Some(self.0.len()))?;
        for (k, v) in &self.0 {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// Re-serializes `json` in its member order without `metadata.managedFields`.
fn reserialize_without_managed_fields(json: &str) -> String {
    let mut top: OrderedMembers = serde_json::from_str(json).unwrap();
    for (k, v) in &mut top.0 {
        if k == "metadata" {
            let mut meta: OrderedMembers = serde_json::from_str(v.get()).unwrap();
            meta.0.retain(|(k, _)| k != "managedFields");
            *v = RawValue::from_string(serde_json::to_string(&meta).unwrap()).unwrap();
        }
    }
    serde_json::to_string(&top).unwrap()
}

fn str_map(v: &Value) -> BTreeMap<String, String> {
    v.as_object()
        .map(|m| {
            m.iter()
                .map(|(k, v)| (k.clone(), v.as_str().unwrap().to_owned()))
                .collect()
        })
        .unwrap_or_default()
}

fn owned<'a>(it: impl Iterator<Item = (&'a str, &'a str)>) -> BTreeMap<String, String> {
    it.map(|(k, v)| (k.to_owned(), v.to_owned())).collect()
}

/// Checks every accessor against the same values read through serde_json.
fn assert_matches_value(obj: &Object, v: &Value) {
    let meta = &v["metadata"];
    let s = |v: &Value| v.as_str().unwrap_or("").to_owned();
    let namespace = s(&meta["namespace"]);
    let name = s(&meta["name"]);
    assert_eq!(obj.namespace(), namespace);
    assert_eq!(obj.name(), name);
    let key = if namespace.is_empty() {
        name.clone()
    } else {
        format!("{namespace}/{name}")
    };
    assert_eq!(obj.key(), key);
    assert_eq!(obj.uid(), s(&meta["uid"]));
    assert_eq!(obj.resource_version(), s(&meta["resourceVersion"]));
    assert_eq!(obj.generation(), meta["generation"].as_i64().unwrap_or(0));
    assert_eq!(obj.api_version(), s(&v["apiVersion"]));
    assert_eq!(obj.kind(), s(&v["kind"]));
    assert_eq!(obj.deletion_timestamp(), meta["deletionTimestamp"].as_str());

    let labels = str_map(&meta["labels"]);
    assert_eq!(obj.labels().len(), labels.len());
    assert_eq!(owned(obj.labels()), labels);
    for (k, v) in &labels {
        assert_eq!(obj.label(k), Some(v.as_str()));
    }
    let annotations = str_map(&meta["annotations"]);
    assert_eq!(obj.annotations().len(), annotations.len());
    assert_eq!(owned(obj.annotations()), annotations);
    for (k, v) in &annotations {
        assert_eq!(obj.annotation(k), Some(v.as_str()));
    }
    assert_eq!(obj.label("\u{0}absent"), None);
    assert_eq!(obj.annotation("\u{0}absent"), None);

    let refs: Vec<Value> = meta["ownerReferences"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    assert_eq!(obj.owner_references().len(), refs.len());
    for (got, want) in obj.owner_references().zip(&refs) {
        assert_eq!(got.api_version, s(&want["apiVersion"]));
        assert_eq!(got.kind, s(&want["kind"]));
        assert_eq!(got.name, s(&want["name"]));
        assert_eq!(got.uid, s(&want["uid"]));
        assert_eq!(got.controller, want["controller"] == json!(true));
        assert_eq!(
            got.block_owner_deletion,
            want["blockOwnerDeletion"] == json!(true)
        );
    }
    let controller = refs.iter().position(|r| r["controller"] == json!(true));
    assert_eq!(
        obj.controller_ref(),
        controller.map(|i| obj.owner_references().nth(i).unwrap())
    );

    let finalizers: Vec<String> = meta["finalizers"]
        .as_array()
        .map(|a| a.iter().map(s).collect())
        .unwrap_or_default();
    assert_eq!(obj.finalizers().len(), finalizers.len());
    assert!(obj.finalizers().eq(finalizers.iter().map(String::as_str)));

    assert_eq!(
        obj.has_managed_fields(),
        meta.get("managedFields").is_some()
    );
    assert_eq!(serde_json::from_str::<Value>(&obj.json()).unwrap(), *v);
}

fn without_managed_fields(v: &Value) -> Value {
    let mut v = v.clone();
    v["metadata"]
        .as_object_mut()
        .unwrap()
        .remove("managedFields");
    v
}

#[test]
fn fixture_round_trip() {
    let json = compact(FIXTURE);
    assert_eq!(json.len(), 10_145, "the fixture as compact JSON");
    let value: Value = serde_json::from_str(FIXTURE).unwrap();
    let obj = Object::from_json(&json).unwrap();
    assert_eq!(obj.json(), json, "from_json keeps the JSON byte for byte");
    assert_matches_value(&obj, &value);
    assert_eq!(obj.key(), "perf-anchor-0/svc-0-mstkkct8p7-29pwq");
    assert_eq!(obj.kind(), "Pod");
    assert_eq!(obj.api_version(), "v1");
    assert_eq!(obj.label("app"), Some("svc-0"));
    assert_eq!(obj.controller_ref().unwrap().kind, "ReplicaSet");
    assert!(obj.has_managed_fields());
    assert_eq!(
        format!("{obj:?}"),
        "Object(Pod perf-anchor-0/svc-0-mstkkct8p7-29pwq rv=1162)"
    );
}

#[test]
fn fixture_pruned() {
    let json = compact(FIXTURE);
    let value: Value = serde_json::from_str(FIXTURE).unwrap();
    let expected = reserialize_without_managed_fields(&json);
    assert_eq!(expected.len(), 5_740, "the fixture without managedFields");

    let pruned = Object::from_json_pruned(&json).unwrap();
    assert_eq!(
        pruned.json(),
        expected,
        "byte-identical, compact, same order"
    );
    assert_eq!(
        serde_json::from_str::<Value>(&pruned.json()).unwrap(),
        without_managed_fields(&value)
    );
    assert_matches_value(&pruned, &without_managed_fields(&value));
    assert!(!pruned.has_managed_fields());

    let full = Object::from_json(&json).unwrap();
    assert_eq!(full.without_managed_fields(), pruned);
    let again = pruned.without_managed_fields();
    assert!(again.is_same(&pruned), "a clone when already pruned");
}

#[test]
fn pruning_keeps_pretty_input_valid() {
    let value: Value = serde_json::from_str(FIXTURE).unwrap();
    let pruned = Object::from_json_pruned(FIXTURE).unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(&pruned.json()).unwrap(),
        without_managed_fields(&value)
    );
}

#[test]
fn pruning_any_position_and_duplicates() {
    let cases = [
        (
            r#"{"metadata":{"managedFields":[1],"name":"a","uid":"u"},"kind":"K"}"#,
            r#"{"metadata":{"name":"a","uid":"u"},"kind":"K"}"#,
        ),
        (
            r#"{"metadata":{"name":"a","managedFields":[{"x":"}"}],"uid":"u"}}"#,
            r#"{"metadata":{"name":"a","uid":"u"}}"#,
        ),
        (
            r#"{"metadata":{"managedFields":1,"managedFields":2,"name":"a"}}"#,
            r#"{"metadata":{"name":"a"}}"#,
        ),
        (
            r#"{"metadata":{"name":"a","managedFields":1,"managedFields":2}}"#,
            r#"{"metadata":{"name":"a"}}"#,
        ),
        (
            r#"{ "metadata" : { "managed\u0046ields" : [ ] , "name" : "a" } }"#,
            r#"{ "metadata" : { "name" : "a" } }"#,
        ),
    ];
    for (input, want) in cases {
        let obj = Object::from_json_pruned(input).unwrap();
        assert_eq!(obj.json(), want, "pruning {input}");
        assert_eq!(obj.name(), "a");
        assert!(!obj.has_managed_fields());
        assert!(Object::from_json(input).unwrap().has_managed_fields());
    }
}

#[test]
fn escaped_strings_are_unescaped() {
    let note = "{\"a\": \"b\\c\"}\nline two\t\u{1}";
    let v = json!({
        "apiVersion": "v\"1",
        "kind": "Ki\\nd",
        "metadata": {
            "name": "na\"me",
            "namespace": "n\u{e9}s\n",
            "labels": {"la\"bel": "va\\lue", "plain": "x", "uni": "\u{1F600}"},
            "annotations": {"last-applied": note},
            "finalizers": ["fin/\"alizer\""],
            "ownerReferences": [{"apiVersion": "a\"v", "kind": "k", "name": "n\n", "uid": "u"}]
        }
    });
    let json = serde_json::to_string(&v).unwrap();
    let obj = Object::from_json(&json).unwrap();
    assert_matches_value(&obj, &v);
    assert_eq!(obj.annotation("last-applied"), Some(note));
    assert_eq!(obj.label("la\"bel"), Some("va\\lue"));
    assert_eq!(obj.key(), "n\u{e9}s\n/na\"me");
    assert_eq!(obj.controller_ref(), None);
}

#[test]
fn duplicate_label_keys_keep_the_last() {
    let obj = Object::from_json(r#"{"metadata":{"name":"a","labels":{"k":"1","j":"2","k":"3"}}}"#)
        .unwrap();
    assert_eq!(obj.label("k"), Some("3"));
    assert_eq!(obj.labels().collect::<Vec<_>>(), [("k", "3"), ("j", "2")]);
}

#[test]
fn nulls_read_as_absent() {
    let obj = Object::from_json(
        r#"{"kind":null,"metadata":{"name":"a","namespace":null,"labels":null,"creationTimestamp":null,"generation":null,"deletionTimestamp":null}}"#,
    )
    .unwrap();
    assert_eq!(obj.key(), "a");
    assert_eq!(obj.kind(), "");
    assert_eq!(obj.labels().len(), 0);
    assert_eq!(obj.generation(), 0);
    assert_eq!(obj.deletion_timestamp(), None);
}

#[test]
fn deletion_timestamp_and_generation() {
    let obj = Object::from_json(
        r#"{"metadata":{"name":"a","generation":-7,"deletionTimestamp":"2026-01-01T00:00:00Z","finalizers":["x","y"]}}"#,
    )
    .unwrap();
    assert_eq!(obj.generation(), -7);
    assert_eq!(obj.deletion_timestamp(), Some("2026-01-01T00:00:00Z"));
    assert_eq!(obj.finalizers().collect::<Vec<_>>(), ["x", "y"]);
}

// KEY-01: "namespace/name", or "name" when the namespace is empty.
#[test]
fn key_01_namespace_and_name() {
    let obj = Object::from_json(r#"{"metadata":{"namespace":"default","name":"web"}}"#).unwrap();
    assert_eq!(obj.key(), "default/web");
    assert_eq!((obj.namespace(), obj.name()), ("default", "web"));
}

// KEY-01: cluster-scoped objects (no or empty namespace) are keyed by name.
#[test]
fn key_01_cluster_scoped() {
    for json in [
        r#"{"kind":"Node","metadata":{"name":"node-1"}}"#,
        r#"{"kind":"Node","metadata":{"name":"node-1","namespace":""}}"#,
    ] {
        let obj = Object::from_json(json).unwrap();
        assert_eq!(obj.key(), "node-1");
        assert_eq!(obj.namespace(), "");
        assert_eq!(obj.name(), "node-1");
    }
}

// KEY-03: no readable metadata is an error saying "object has no meta".
#[test]
fn key_03_object_without_meta() {
    for json in [
        r#"{"kind":"Pod"}"#,
        r#"{"kind":"Pod","metadata":null}"#,
        r#"{"kind":"Pod","metadata":"x"}"#,
        r#"{"kind":"Pod","metadata":[]}"#,
    ] {
        let err = Object::from_json(json).unwrap_err();
        assert!(
            err.to_string().contains("object has no meta"),
            "{json}: {err}"
        );
    }
}

#[test]
fn construction_errors_name_the_cause() {
    let msg = |json: &str| Object::from_json(json).unwrap_err().to_string();
    assert!(
        msg("[1]").starts_with("not a JSON object"),
        "{}",
        msg("[1]")
    );
    assert!(msg("\"s\"").starts_with("not a JSON object"));
    assert!(msg("{\"metadata\":").starts_with("invalid JSON"));
    assert!(msg("{} x").starts_with("invalid JSON"));
    assert!(msg(r#"{"metadata":{}}"#).contains("no name"));
    assert!(msg(r#"{"metadata":{"name":""}}"#).contains("no name"));
    assert!(msg(r#"{"metadata":{"generateName":"a-"}}"#).contains("no name"));
    assert!(msg(r#"{"metadata":{"name":"a","labels":{"k":1}}}"#).contains("metadata.labels"));
    assert!(msg(r#"{"metadata":{"name":1}}"#).contains("metadata.name"));
    assert!(msg(r#"{"kind":2,"metadata":{"name":"a"}}"#).contains("kind"));
}

// KEY-06: keys split back into (namespace, name).
#[test]
fn key_06_split_key() {
    assert_eq!(split_key("name"), Ok(("", "name")));
    assert_eq!(split_key("ns/name"), Ok(("ns", "name")));
    assert_eq!(split_key("/name"), Ok(("", "name")));
    assert_eq!(split_key(""), Ok(("", "")));
    let err = split_key("a/b/c").unwrap_err();
    assert_eq!(err.to_string(), "unexpected key format: \"a/b/c\"");
    let obj = Object::from_json(r#"{"metadata":{"namespace":"ns","name":"n"}}"#).unwrap();
    assert_eq!(split_key(obj.key()), Ok((obj.namespace(), obj.name())));
}

// KEY-07: the same object always gives the same key, whatever its member
// order, its other fields or its copy.
#[test]
fn key_07_deterministic() {
    let a = Object::from_json(r#"{"metadata":{"namespace":"ns","name":"n","uid":"1"}}"#).unwrap();
    let b = Object::from_json(r#"{"kind":"X","metadata":{"uid":"2","name":"n","namespace":"ns"}}"#)
        .unwrap();
    assert_eq!(a.key(), b.key());
    assert_eq!(a.key(), a.clone().key());
    assert_eq!(a.key(), Object::from_json(&a.json()).unwrap().key());
}

#[test]
fn equality_is_by_content() {
    let json = r#"{"metadata":{"name":"a"}}"#;
    let a = Object::from_json(json).unwrap();
    let b = Object::from_json(json).unwrap();
    assert!(!a.is_same(&b));
    assert_eq!(a, b);
    assert_ne!(
        a,
        Object::from_json(r#"{"metadata":{"name":"b"}}"#).unwrap()
    );
}

#[test]
fn one_allocation_within_budget() {
    let json = compact(FIXTURE);
    for obj in [
        Object::from_json(&json).unwrap(),
        Object::from_json_pruned(&json).unwrap(),
    ] {
        assert!(obj.heap_size() >= 3 * size_of::<usize>() + obj.buf().len());
        assert!(
            obj.heap_size() <= obj.json().len() + 600,
            "{} bytes for {} of JSON",
            obj.heap_size(),
            obj.json().len()
        );
        let copy = obj.clone();
        assert!(copy.is_same(&obj), "clone shares the allocation");
    }
    // One thin pointer.
    assert_eq!(size_of::<Object>(), size_of::<usize>());
}

#[test]
fn object_is_send_and_sync() {
    fn check<T: Send + Sync>() {}
    check::<Object>();
}

fn text() -> impl Strategy<Value = String> {
    prop_oneof![
        "[a-z0-9.-]{1,10}",
        any::<String>(),
        "[\"\\\\\n\t\u{1}\u{7f}é✓😀/ ]{0,6}",
    ]
}

fn owner_ref() -> impl Strategy<Value = Value> {
    (
        text(),
        text(),
        text(),
        text(),
        any::<Option<bool>>(),
        any::<Option<bool>>(),
    )
        .prop_map(|(api_version, kind, name, uid, controller, block)| {
            let mut r = json!({"apiVersion": api_version, "kind": kind, "name": name, "uid": uid});
            if let Some(c) = controller {
                r["controller"] = json!(c);
            }
            if let Some(b) = block {
                r["blockOwnerDeletion"] = json!(b);
            }
            r
        })
}

prop_compose! {
    fn object_value()(
        name in text().prop_filter("names are not empty", |n| !n.is_empty()),
        namespace in prop_oneof![Just(String::new()), text()],
        uid in proptest::option::of(text()),
        rv in proptest::option::of(text()),
        generation in proptest::option::of(any::<i64>()),
        kind in proptest::option::of(text()),
        labels in proptest::collection::btree_map(text(), text(), 0..6),
        annotations in proptest::collection::btree_map(text(), text(), 0..4),
        owners in proptest::collection::vec(owner_ref(), 0..4),
        finalizers in proptest::collection::vec(text(), 0..3),
        deletion in proptest::option::of(text()),
        managed_fields in any::<bool>(),
    ) -> Value {
        let mut meta = json!({"name": name, "namespace": namespace});
        let m = meta.as_object_mut().unwrap();
        let mut put = |k: &str, v: Option<Value>| { if let Some(v) = v { m.insert(k.into(), v); } };
        put("uid", uid.map(Value::from));
        put("resourceVersion", rv.map(Value::from));
        put("generation", generation.map(Value::from));
        put("labels", (!labels.is_empty()).then(|| json!(labels)));
        put("annotations", Some(json!(annotations)));
        put("ownerReferences", (!owners.is_empty()).then(|| json!(owners)));
        put("finalizers", (!finalizers.is_empty()).then(|| json!(finalizers)));
        put("deletionTimestamp", deletion.map(Value::from));
        put("managedFields", managed_fields.then(|| json!([{"manager": "m", "fieldsV1": {"f:x": {}}}])));
        let mut v = json!({"apiVersion": "v1", "metadata": meta, "spec": {"x": [1, "two"]}});
        if let Some(kind) = kind {
            v["kind"] = json!(kind);
        }
        v
    }
}

/// A dictionary trained on the objects `object_value` makes.
fn dictionary() -> Arc<Dictionary> {
    static DICTIONARY: std::sync::LazyLock<Arc<Dictionary>> = std::sync::LazyLock::new(|| {
        let mut runner = proptest::test_runner::TestRunner::deterministic();
        let (mut samples, mut sizes) = (Vec::new(), Vec::new());
        for _ in 0..200 {
            let v = object_value().new_tree(&mut runner).unwrap().current();
            let json = serde_json::to_string(&v).unwrap();
            samples.extend_from_slice(json.as_bytes());
            sizes.push(json.len());
        }
        Arc::new(Dictionary::train(&samples, &sizes, 4096).unwrap())
    });
    Arc::clone(&DICTIONARY)
}

proptest! {
    #[test]
    fn accessors_agree_with_serde_json(v in object_value()) {
        let json = serde_json::to_string(&v).unwrap();
        let obj = Object::from_json(&json).unwrap();
        prop_assert_eq!(obj.json(), json.as_str());
        assert_matches_value(&obj, &v);

        let stripped = without_managed_fields(&v);
        let pruned = Object::from_json_pruned(&json).unwrap();
        prop_assert_eq!(pruned.json(), serde_json::to_string(&stripped).unwrap());
        assert_matches_value(&pruned, &stripped);
        prop_assert_eq!(obj.without_managed_fields(), pruned.clone());

        // Compressed, an object reads as it did plain and equals it.
        for (plain, value) in [(&obj, &v), (&pruned, &stripped)] {
            if let Some(packed) = plain.compressed(&dictionary()) {
                prop_assert!(packed.is_compressed());
                prop_assert_eq!(packed.json_len(), plain.json().len());
                assert_matches_value(&packed, value);
                prop_assert_eq!(&packed, plain);
                prop_assert_eq!(plain, &packed);
                prop_assert_eq!(packed.without_managed_fields(), pruned.clone());
            }
        }
    }

    #[test]
    fn objects_order_by_key_as_their_keys_do(a in object_value(), b in object_value()) {
        let (a, b) = (
            Object::from_json(&a.to_string()).unwrap(),
            Object::from_json(&b.to_string()).unwrap(),
        );
        prop_assert_eq!(a.cmp_key(&b), a.key().cmp(b.key()));
        prop_assert_eq!(b.cmp_key(&a), b.key().cmp(a.key()));
        prop_assert!(a.cmp_key(&a).is_eq());
        if let Some(packed) = a.compressed(&dictionary()) {
            prop_assert_eq!(packed.cmp_key(&b), a.key().cmp(b.key()));
        }
    }
}
