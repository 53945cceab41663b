//! `metav1.MicroTime` fields, decoded and stored as kube-apiserver does: a
//! MicroTime parses only as RFC 3339 with exactly six fractional digits
//! (Go's layout `2006-01-02T15:04:05.000000Z07:00`), anything else is the
//! decoder's 400, and it is written back in UTC
//! (`2026-11-26T16:41:48.123456Z`). The fields are those of the kinds the
//! dev server serves: a Lease's acquire and renew times, an Event's event
//! time and its series' last observed time. A core Event without an
//! `eventTime` is stored with `null`, as its non-pointer Go field encodes.

use jiff::Timestamp;
use serde_json::Value;

/// Go's layout for a MicroTime.
const LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";

/// The MicroTime fields of a `group`/`kind` object, as JSON pointers.
fn fields(group: &str, kind: &str) -> &'static [&'static str] {
    match (group, kind) {
        ("coordination.k8s.io", "Lease") => &["/spec/acquireTime", "/spec/renewTime"],
        ("" | "events.k8s.io", "Event") => &["/eventTime", "/series/lastObservedTime"],
        _ => &[],
    }
}

/// Rewrites the MicroTime fields of a written object in UTC with six
/// fractional digits; the message of the first that does not parse.
pub fn normalize(group: &str, kind: &str, object: &mut Value) -> Result<(), String> {
    for pointer in fields(group, kind) {
        let Some(field) = object.pointer_mut(pointer) else {
            continue;
        };
        match field {
            Value::Null => {}
            Value::String(text) => *text = parse(text)?,
            other => {
                return Err(format!(
                    "json: cannot unmarshal {} into Go value of type string",
                    json_type(other)
                ));
            }
        }
    }
    if (group, kind) == ("", "Event")
        && let Some(event) = object.as_object_mut()
    {
        event.entry("eventTime").or_insert(Value::Null);
    }
    Ok(())
}

/// A MicroTime in its stored form, or Go's parse error.
fn parse(text: &str) -> Result<String, String> {
    check_layout(text).map_err(|(rest, element)| {
        format!("parsing time {text:?} as {LAYOUT:?}: cannot parse {rest:?} as {element:?}")
    })?;
    let time: Timestamp = text
        .parse()
        .map_err(|e| format!("parsing time {text:?} as {LAYOUT:?}: {e}"))?;
    Ok(time.strftime("%Y-%m-%dT%H:%M:%S%.6fZ").to_string())
}

/// Walks `text` through the layout's elements as Go's `time.Parse` does;
/// at the first mismatch, the rest of the text and the element it failed.
fn check_layout(text: &str) -> Result<(), (&str, &'static str)> {
    // (Go's element, the literal it starts with, the digits it takes)
    const ELEMENTS: [(&str, &str, usize); 12] = [
        ("2006", "", 4),
        ("-", "-", 0),
        ("01", "", 2),
        ("-", "-", 0),
        ("02", "", 2),
        ("T", "T", 0),
        ("15", "", 2),
        (":", ":", 0),
        ("04", "", 2),
        (":", ":", 0),
        ("05", "", 2),
        (".000000", ".", 6),
    ];
    let mut rest = text;
    for (element, literal, digits) in ELEMENTS {
        rest = rest
            .strip_prefix(literal)
            .filter(|r| r.len() >= digits && r.as_bytes()[..digits].iter().all(u8::is_ascii_digit))
            .map(|r| &r[digits..])
            .ok_or((rest, element))?;
    }
    let zone_ok = rest == "Z"
        || (rest.len() == 6
            && matches!(rest.as_bytes()[0], b'+' | b'-')
            && rest.as_bytes()[3] == b':'
            && [1, 2, 4, 5]
                .iter()
                .all(|&i| rest.as_bytes()[i].is_ascii_digit()));
    if zone_ok {
        Ok(())
    } else {
        Err((rest, "Z07:00"))
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
        Value::Null | Value::String(_) => "string",
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn micro_times_are_stored_in_utc_with_six_digits() {
        let mut lease = json!({"spec": {
            "acquireTime": "2026-11-26T16:41:48.123456Z",
            "renewTime": "2026-11-26T18:41:48.000001+02:00",
        }});
        normalize("coordination.k8s.io", "Lease", &mut lease).unwrap();
        assert_eq!(lease["spec"]["acquireTime"], "2026-11-26T16:41:48.123456Z");
        assert_eq!(lease["spec"]["renewTime"], "2026-11-26T16:41:48.000001Z");
    }

    #[test]
    fn anything_else_is_go_s_parse_error() {
        for (text, rest, element) in [
            ("2026-11-26T16:41:48Z", "Z", ".000000"),
            ("2026-11-26T16:41:48.123Z", ".123Z", ".000000"),
            ("2026-11-26T16:41:48.123456789Z", "789Z", "Z07:00"),
            ("2026-11-26 16:41:48.123456Z", " 16:41:48.123456Z", "T"),
            ("yesterday", "yesterday", "2006"),
        ] {
            let mut lease = json!({"spec": {"renewTime": text}});
            assert_eq!(
                normalize("coordination.k8s.io", "Lease", &mut lease),
                Err(format!(
                    "parsing time {text:?} as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse {rest:?} as {element:?}"
                ))
            );
        }
        // In range for the layout, out of range for a calendar.
        let mut lease = json!({"spec": {"renewTime": "2026-13-26T16:41:48.000000Z"}});
        assert!(normalize("coordination.k8s.io", "Lease", &mut lease).is_err());
        let mut lease = json!({"spec": {"renewTime": 5}});
        assert!(normalize("coordination.k8s.io", "Lease", &mut lease).is_err());
    }

    #[test]
    fn a_core_event_without_an_event_time_has_null() {
        let mut event = json!({"reason": "Synced"});
        normalize("", "Event", &mut event).unwrap();
        assert_eq!(event["eventTime"], Value::Null);
        let mut event = json!({"reason": "Synced"});
        normalize("events.k8s.io", "Event", &mut event).unwrap();
        assert_eq!(event.get("eventTime"), None);
        // Other kinds' fields are left as they are.
        let mut cm = json!({"data": {"renewTime": "now"}});
        normalize("", "ConfigMap", &mut cm).unwrap();
        assert_eq!(cm["data"]["renewTime"], "now");
    }
}
