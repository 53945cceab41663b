use serde_json::{Value, json};

use super::*;
use crate::ops::Captured;

fn fields(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

/// [`super::emit`] of one record.
fn emit(
    level: Level,
    guest: &str,
    key: &str,
    message: &str,
    fields: &[(String, String)],
    max_value: usize,
) {
    let record = Record {
        level,
        guest,
        key,
        message,
        fields,
    };
    super::emit(&record, max_value);
}

/// The JSON records `f` logs, at `filter`.
fn json_records(filter: &str, f: impl FnOnce()) -> Vec<Value> {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .json()
        .with_env_filter(tracing_subscriber::EnvFilter::new(filter))
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, f);
    out.text()
        .lines()
        .map(|line| serde_json::from_str(line).unwrap())
        .collect()
}

#[test]
fn a_guest_s_fields_are_fields_of_their_own_in_json() {
    let records = json_records("info", || {
        emit(
            Level::INFO,
            "mirror",
            "ns/a",
            "copied",
            &fields(&[("target", "team-b"), ("bytes", "2048")]),
            4096,
        );
    });
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(records[0]["target"], "guest");
    assert_eq!(records[0]["level"], "INFO");
    assert_eq!(
        records[0]["fields"],
        json!({"message": "copied", "guest": "mirror", "key": "ns/a",
               "target": "team-b", "bytes": "2048"})
    );
}

#[test]
fn a_guest_s_fields_are_fields_of_their_own_in_text() {
    let out = Captured::default();
    let writer = out.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_ansi(false)
        .with_writer(move || writer.clone())
        .finish();
    tracing::subscriber::with_default(subscriber, || {
        emit(
            Level::WARN,
            "mirror",
            "ns/a",
            "write refused",
            &fields(&[("reason", "conflict")]),
            4096,
        );
    });
    let text = out.text();
    assert!(
        text.contains(
            "WARN guest: write refused guest=\"mirror\" key=\"ns/a\" reason=\"conflict\""
        ),
        "{text}"
    );
}

#[test]
fn host_names_are_prefixed_repeats_dropped_and_the_filter_applies() {
    let records = json_records("guest=warn", || {
        emit(
            Level::INFO,
            "g",
            "k",
            "filtered out",
            &fields(&[("a", "1")]),
            4096,
        );
        emit(
            Level::ERROR,
            "g",
            "k",
            "kept",
            &fields(&[("key", "x"), ("a", "1"), ("a", "2"), ("", "no name")]),
            4096,
        );
    });
    assert_eq!(records.len(), 1, "{records:?}");
    assert_eq!(
        records[0]["fields"],
        json!({"message": "kept", "guest": "g", "key": "k", "field.key": "x", "a": "1"})
    );
}

#[test]
fn values_share_the_line_limit() {
    let records = json_records("info", || {
        emit(
            Level::INFO,
            "g",
            "k",
            "m",
            &fields(&[("a", &"x".repeat(30)), ("b", &"y".repeat(30))]),
            40,
        );
    });
    assert_eq!(records[0]["fields"]["a"], "x".repeat(30));
    assert_eq!(records[0]["fields"]["b"], "y".repeat(10));
}

#[test]
fn records_past_the_caps_carry_their_fields_joined() {
    let many: Vec<(String, String)> = (0..=MAX_FIELDS)
        .map(|i| (format!("f{i}"), i.to_string()))
        .collect();
    let odd = fields(&[("has space", "v")]);
    let long = fields(&[(&"n".repeat(MAX_NAME_LEN + 1), "v")]);
    let records = json_records("info", || {
        emit(Level::INFO, "g", "k", "many", &many, 4096);
        emit(Level::INFO, "g", "k", "odd", &odd, 4096);
        emit(Level::INFO, "g", "k", "long", &long, 4096);
    });
    assert_eq!(records.len(), 3);
    let joined = records[0]["fields"]["fields"].as_str().unwrap();
    assert!(joined.starts_with("f0=\"0\" f1=\"1\""), "{joined}");
    assert!(records[0]["fields"].get("f0").is_none());
    assert_eq!(records[1]["fields"]["fields"], "has space=\"v\"");
    assert!(
        records[2]["fields"]["fields"]
            .as_str()
            .unwrap()
            .ends_with("=\"v\"")
    );
}

#[test]
fn callsites_stop_at_their_caps_and_records_still_arrive() {
    let sites = Callsites::new(3, 12);
    let records = json_records("info", || {
        for name in ["aaaa", "bbbb", "aaaa", "cccccccc", "dd", "ee", "ff"] {
            let fields = fields(&[(name, "v")]);
            let record = Record {
                level: Level::INFO,
                guest: "g",
                key: "k",
                message: name,
                fields: &fields,
            };
            emit_with(&sites, &record, 4096);
        }
    });
    let own: Vec<bool> = records
        .iter()
        .map(|r| r["fields"].get("fields").is_none())
        .collect();
    // aaaa, bbbb, aaaa again (no new callsite), cccccccc past the 12 name
    // bytes, dd the third callsite, ee and ff past three.
    assert_eq!(own, [true, true, true, false, true, false, false]);
    assert_eq!(records[3]["fields"]["fields"], "cccccccc=\"v\"");
    let sites = sites.lock();
    assert_eq!((sites.by_names.len(), sites.name_bytes), (3, 10));
}
