//! The `metav1.Time` and `metav1.MicroTime` fields of a built-in kind's
//! written body, decoded and written back as kube-apiserver's typed
//! decoder and encoder do. The fields are found through the kind's schema
//! (every property that refers to `Time` or `MicroTime`, in lists and maps
//! too: a Deployment condition's `lastUpdateTime`, a disruption budget's
//! `disruptedPods`, a Lease's `renewTime`).
//!
//! - A Time parses as Go's `time.Parse(time.RFC3339, ...)` reads it
//!   (`2006-01-02T15:04:05Z07:00`, an hour of one digit and a fraction of
//!   a second after `.` or `,` allowed, the day checked against its month
//!   once the text is read) and is written back in UTC to the second
//!   (`2026-11-26T16:41:48Z`): the fraction is dropped, as Go's RFC 3339
//!   layout writes none.
//! - A MicroTime parses only with exactly six fractional digits (Go's
//!   layout `2006-01-02T15:04:05.000000Z07:00`) and is written back in UTC
//!   (`2026-11-26T16:41:48.123456Z`).
//! - Go's zero time (`0001-01-01T00:00:00Z`) is `null`, in either.
//! - Anything else is the decoder's 400 with Go's parse error.
//! - A Time or MicroTime that is no pointer in Go (a condition's
//!   `lastTransitionTime` and `lastProbeTime`, a container state's
//!   `startedAt`, a core Event's `eventTime` and `firstTimestamp`;
//!   [`VALUES`]) encodes its zero as `null`, so a struct that leaves one
//!   out is stored with `null` there; a pointer left out or sent as
//!   `null` (a Job's `startTime`) is left out.

use jiff::Timestamp;
use serde_json::Value;

use super::built_in_schemas;

const TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.Time";
const MICRO_TIME: &str = "io.k8s.apimachinery.pkg.apis.meta.v1.MicroTime";

/// The Time and MicroTime fields that are no pointer in Go (`metav1.Time`,
/// not `*metav1.Time`), by schema: each encodes as `null` when unset. (The
/// schemas do not tell a pointer from a value; this list is read from the
/// v1.33 API types. `ObjectMeta.creationTimestamp` is the defaults'; an
/// events.k8s.io Event's `eventTime` is required by its validation.)
const VALUES: &[(&str, &[&str])] = &[
    (
        "io.k8s.api.apps.v1.DaemonSetCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.apps.v1.DeploymentCondition",
        &["lastTransitionTime", "lastUpdateTime"],
    ),
    (
        "io.k8s.api.apps.v1.ReplicaSetCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.apps.v1.StatefulSetCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.autoscaling.v2.HorizontalPodAutoscalerCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.batch.v1.JobCondition",
        &["lastProbeTime", "lastTransitionTime"],
    ),
    ("io.k8s.api.core.v1.ContainerStateRunning", &["startedAt"]),
    (
        "io.k8s.api.core.v1.ContainerStateTerminated",
        &["finishedAt", "startedAt"],
    ),
    (
        "io.k8s.api.core.v1.Event",
        &["eventTime", "firstTimestamp", "lastTimestamp"],
    ),
    ("io.k8s.api.core.v1.EventSeries", &["lastObservedTime"]),
    (
        "io.k8s.api.core.v1.NamespaceCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.core.v1.NodeCondition",
        &["lastHeartbeatTime", "lastTransitionTime"],
    ),
    (
        "io.k8s.api.core.v1.PersistentVolumeClaimCondition",
        &["lastProbeTime", "lastTransitionTime"],
    ),
    (
        "io.k8s.api.core.v1.PodCondition",
        &["lastProbeTime", "lastTransitionTime"],
    ),
    (
        "io.k8s.api.core.v1.ReplicationControllerCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.api.events.v1.Event",
        &["deprecatedFirstTimestamp", "deprecatedLastTimestamp"],
    ),
    (
        "io.k8s.apiextensions-apiserver.pkg.apis.apiextensions.v1.CustomResourceDefinitionCondition",
        &["lastTransitionTime"],
    ),
    (
        "io.k8s.apimachinery.pkg.apis.meta.v1.Condition",
        &["lastTransitionTime"],
    ),
];

/// Go's `time.RFC3339`, a Time's layout.
const TIME_LAYOUT: &str = "2006-01-02T15:04:05Z07:00";
/// A MicroTime's layout.
const MICRO_TIME_LAYOUT: &str = "2006-01-02T15:04:05.000000Z07:00";

/// Rewrites the Time and MicroTime fields of `body`, written as
/// `group/version` `kind`, as the server stores them; the message of the
/// first that does not parse.
pub fn normalize(group: &str, version: &str, kind: &str, body: &mut Value) -> Result<(), String> {
    if let Some(name) = built_in_schemas::name_of_kind(group, version, kind)
        && let Some(schema) = built_in_schemas::get(name)
    {
        walk_object(body, name, schema)?;
    }
    Ok(())
}

/// Normalizes `value`, of the schema `node`, and everything in it.
fn walk(value: &mut Value, node: &Value) -> Result<(), String> {
    match built_in_schemas::reference(node) {
        Some(TIME) => return time(value, Layout::Time),
        Some(MICRO_TIME) => return time(value, Layout::MicroTime),
        Some(name) => {
            if let Some(schema) = built_in_schemas::get(name) {
                return walk_object(value, name, schema);
            }
        }
        None => {}
    }
    let schema = built_in_schemas::resolve(node);
    match value {
        Value::Object(fields) => {
            if let Some(entry) = schema.get("additionalProperties") {
                for field in fields.values_mut() {
                    walk(field, entry)?;
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items") {
                for value in items {
                    walk(value, item)?;
                }
            }
        }
        _ => {}
    }
    Ok(())
}

/// Normalizes `value`, of the named schema `name`: its properties, and
/// `null` for the value Times it leaves out.
fn walk_object(value: &mut Value, name: &str, schema: &Value) -> Result<(), String> {
    let Some(properties) = schema.get("properties") else {
        return walk(value, schema);
    };
    let Value::Object(fields) = value else {
        return Ok(());
    };
    for (field, value) in fields.iter_mut() {
        if let Some(property) = properties.get(field) {
            walk(value, property)?;
        }
    }
    let values = VALUES
        .iter()
        .find(|(schema, _)| *schema == name)
        .map_or(&[][..], |(_, values)| *values);
    // A pointer sent as `null` decodes as nil, which its `omitempty` leaves out.
    fields.retain(|field, value| {
        !(value.is_null()
            && !values.contains(&field.as_str())
            && properties
                .get(field)
                .and_then(built_in_schemas::reference)
                .is_some_and(|r| r == TIME || r == MICRO_TIME))
    });
    for field in values {
        fields.entry(*field).or_insert(Value::Null);
    }
    Ok(())
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Layout {
    Time,
    MicroTime,
}

impl Layout {
    fn text(self) -> &'static str {
        match self {
            Layout::Time => TIME_LAYOUT,
            Layout::MicroTime => MICRO_TIME_LAYOUT,
        }
    }
}

/// A Time or MicroTime field's stored form.
fn time(value: &mut Value, layout: Layout) -> Result<(), String> {
    let other = match value {
        Value::Null => return Ok(()),
        Value::String(text) => {
            *value = parse(text, layout)?;
            return Ok(());
        }
        Value::Bool(_) => "bool",
        Value::Number(_) => "number",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    };
    Err(format!(
        "json: cannot unmarshal {other} into Go value of type string"
    ))
}

/// The stored form of `text`, or Go's parse error.
fn parse(text: &str, layout: Layout) -> Result<Value, String> {
    let parsed = Parsed::read(text, layout).map_err(|problem| match problem {
        Problem::Element { rest, element } => format!(
            "parsing time {text:?} as {:?}: cannot parse {rest:?} as {element:?}",
            layout.text()
        ),
        Problem::Range(what) => format!("parsing time {text:?}: {what} out of range"),
        Problem::Extra(rest) => format!("parsing time {text:?}: extra text: {rest:?}"),
    })?;
    let timestamp = parsed
        .timestamp()
        .map_err(|e| format!("parsing time {text:?} as {:?}: {e}", layout.text()))?;
    // A Time is stored to the second (protobuf drops its fraction); a
    // MicroTime keeps its fraction, and is zero only without one.
    // (Seconds before 1970 count toward zero, their fraction negative.)
    let floor = timestamp.as_second() - i64::from(timestamp.subsec_nanosecond() < 0);
    let zero = match layout {
        Layout::Time => floor == GO_ZERO_TIME,
        Layout::MicroTime => {
            timestamp.as_second() == GO_ZERO_TIME && timestamp.subsec_nanosecond() == 0
        }
    };
    if zero {
        return Ok(Value::Null);
    }
    let written = match layout {
        Layout::Time => timestamp.strftime("%Y-%m-%dT%H:%M:%SZ"),
        Layout::MicroTime => timestamp.strftime("%Y-%m-%dT%H:%M:%S%.6fZ"),
    };
    Ok(Value::String(written.to_string()))
}

/// Go's zero `time.Time`, 0001-01-01T00:00:00Z, in Unix seconds: a Time
/// or MicroTime holding it encodes as `null`.
const GO_ZERO_TIME: i64 = -62_135_596_800;

/// Why Go's `time.Parse` refused a text.
enum Problem<'a> {
    /// The text from `rest` on does not match the layout's `element`.
    Element {
        rest: &'a str,
        element: &'static str,
    },
    /// A field out of its range (`month`, `day`, `hour`, ...).
    Range(&'static str),
    /// Text after the layout's end.
    Extra(&'a str),
}

/// The fields of a time as Go's `time.Parse` reads them.
struct Parsed {
    year: i16,
    month: i8,
    day: i8,
    hour: i8,
    minute: i8,
    second: i8,
    nanosecond: i32,
    /// The zone's offset east of UTC, in seconds.
    offset: i32,
}

impl Parsed {
    /// Walks `text` through the layout's elements in order, as Go does:
    /// the first element that does not match, or the first field out of
    /// range, is the error.
    fn read(text: &str, layout: Layout) -> Result<Parsed, Problem<'_>> {
        let mut rest = text;
        let year = number_after(&mut rest, "", "2006", 4)?;
        let month = number_after(&mut rest, "-", "01", 2)?;
        if !(1..=12).contains(&month) {
            return Err(Problem::Range("month"));
        }
        // Go checks the day against its month once the text is read.
        let day = number_after(&mut rest, "-", "02", 2)?;
        // The hour, unlike the other fields, may have one digit.
        let hour = match rest.as_bytes() {
            [b'T', first, second, ..] if first.is_ascii_digit() && !second.is_ascii_digit() => {
                number_after(&mut rest, "T", "15", 1)?
            }
            _ => number_after(&mut rest, "T", "15", 2)?,
        };
        if hour >= 24 {
            return Err(Problem::Range("hour"));
        }
        let minute = number_after(&mut rest, ":", "04", 2)?;
        if minute >= 60 {
            return Err(Problem::Range("minute"));
        }
        let second = number_after(&mut rest, ":", "05", 2)?;
        if second >= 60 {
            return Err(Problem::Range("second"));
        }
        let nanosecond = match layout {
            // A fraction the layout does not name is read all the same.
            Layout::Time => match rest.as_bytes() {
                [b'.' | b',', digit, ..] if digit.is_ascii_digit() => {
                    let digits = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
                    let nanos = fraction(&rest[1..=digits]);
                    rest = &rest[1 + digits..];
                    nanos
                }
                _ => 0,
            },
            Layout::MicroTime => {
                let valid = rest.len() >= 7
                    && matches!(rest.as_bytes()[0], b'.' | b',')
                    && rest.as_bytes()[1..7].iter().all(u8::is_ascii_digit);
                if !valid {
                    return Err(Problem::Element {
                        rest,
                        element: ".000000",
                    });
                }
                let nanos = fraction(&rest[1..7]);
                rest = &rest[7..];
                nanos
            }
        };
        let offset = zone(&mut rest)?;
        if !rest.is_empty() {
            return Err(Problem::Extra(rest));
        }
        if day < 1 || day > days_in(month, year) {
            return Err(Problem::Range("day"));
        }
        Ok(Parsed {
            year: i16::try_from(year).expect("four digits"),
            month: month as i8,
            day: day as i8,
            hour: hour as i8,
            minute: minute as i8,
            second: second as i8,
            nanosecond,
            offset,
        })
    }

    fn timestamp(&self) -> Result<Timestamp, jiff::Error> {
        let civil = jiff::civil::DateTime::new(
            self.year,
            self.month,
            self.day,
            self.hour,
            self.minute,
            self.second,
            self.nanosecond,
        )?;
        let offset = jiff::tz::Offset::from_seconds(self.offset)?;
        offset.to_timestamp(civil)
    }
}

/// The literal `literal` (if any), then `digits` digits as the layout's
/// `element`.
fn number_after<'a>(
    rest: &mut &'a str,
    literal: &'static str,
    element: &'static str,
    digits: usize,
) -> Result<i32, Problem<'a>> {
    let Some(after) = rest.strip_prefix(literal) else {
        return Err(Problem::Element {
            rest,
            element: literal,
        });
    };
    let valid = after.len() >= digits && after.as_bytes()[..digits].iter().all(u8::is_ascii_digit);
    if !valid {
        return Err(Problem::Element {
            rest: after,
            element,
        });
    }
    let (head, tail) = after.split_at(digits);
    *rest = tail;
    Ok(head.parse().expect("ASCII digits"))
}

/// Go's `Z07:00`: `Z`, or a sign, two digits, `:` and two digits; the
/// offset in seconds.
fn zone<'a>(rest: &mut &'a str) -> Result<i32, Problem<'a>> {
    if let Some(after) = rest.strip_prefix('Z') {
        *rest = after;
        return Ok(0);
    }
    let b = rest.as_bytes();
    let valid = b.len() >= 6
        && matches!(b[0], b'+' | b'-')
        && b[3] == b':'
        && [1, 2, 4, 5].iter().all(|&i| b[i].is_ascii_digit());
    if !valid {
        return Err(Problem::Element {
            rest,
            element: "Z07:00",
        });
    }
    let hours: i32 = rest[1..3].parse().expect("ASCII digits");
    let minutes: i32 = rest[4..6].parse().expect("ASCII digits");
    if hours > 24 {
        return Err(Problem::Range("time zone offset hour"));
    }
    if minutes > 60 {
        return Err(Problem::Range("time zone offset minute"));
    }
    let sign = if b[0] == b'-' { -1 } else { 1 };
    *rest = &rest[6..];
    Ok(sign * (hours * 3600 + minutes * 60))
}

/// Nanoseconds of the fractional digits `digits` (the first nine count).
fn fraction(digits: &str) -> i32 {
    let kept = &digits[..digits.len().min(9)];
    let value: i32 = kept.parse().expect("ASCII digits");
    value * 10_i32.pow(9 - kept.len() as u32)
}

/// The days of `month` in `year`, leap years included.
fn days_in(month: i32, year: i32) -> i32 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn lease(renew_time: Value) -> Result<Value, String> {
        let mut lease = json!({"spec": {"renewTime": renew_time}});
        normalize("coordination.k8s.io", "v1", "Lease", &mut lease).map(|()| lease)
    }

    #[test]
    fn micro_times_are_stored_in_utc_with_six_digits() {
        let mut lease = json!({"spec": {
            "acquireTime": "2026-11-26T16:41:48.123456Z",
            "renewTime": "2026-11-26T18:41:48.000001+02:00",
        }});
        normalize("coordination.k8s.io", "v1", "Lease", &mut lease).unwrap();
        assert_eq!(lease["spec"]["acquireTime"], "2026-11-26T16:41:48.123456Z");
        assert_eq!(lease["spec"]["renewTime"], "2026-11-26T16:41:48.000001Z");
    }

    #[test]
    fn a_micro_time_of_another_form_is_go_s_parse_error() {
        for (text, rest, element) in [
            ("2026-11-26T16:41:48Z", "Z", ".000000"),
            ("2026-11-26T16:41:48.123Z", ".123Z", ".000000"),
            ("2026-11-26T16:41:48.123456789Z", "789Z", "Z07:00"),
            ("2026-11-26 16:41:48.123456Z", " 16:41:48.123456Z", "T"),
            ("yesterday", "yesterday", "2006"),
        ] {
            assert_eq!(
                lease(json!(text)),
                Err(format!(
                    "parsing time {text:?} as \"2006-01-02T15:04:05.000000Z07:00\": cannot parse {rest:?} as {element:?}"
                ))
            );
        }
        assert_eq!(
            lease(json!("2026-13-26T16:41:48.000000Z")),
            Err("parsing time \"2026-13-26T16:41:48.000000Z\": month out of range".into())
        );
        assert_eq!(
            lease(json!(5)),
            Err("json: cannot unmarshal number into Go value of type string".into())
        );
    }

    #[test]
    fn times_are_stored_in_utc_to_the_second_wherever_the_schema_has_them() {
        let mut deployment = json!({
            "metadata": {"name": "web"},
            "status": {"conditions": [{
                "type": "Available",
                "status": "True",
                "lastUpdateTime": "2026-11-26T18:41:48.987654+02:00",
                "lastTransitionTime": "2026-11-26T16:41:48,5Z",
            }, {
                "type": "Progressing",
                "status": "True",
                "lastUpdateTime": null,
                "lastTransitionTime": "0001-01-01T00:00:00Z",
            }]},
        });
        normalize("apps", "v1", "Deployment", &mut deployment).unwrap();
        let conditions = &deployment["status"]["conditions"];
        assert_eq!(conditions[0]["lastUpdateTime"], "2026-11-26T16:41:48Z");
        assert_eq!(conditions[0]["lastTransitionTime"], "2026-11-26T16:41:48Z");
        assert_eq!(conditions[1]["lastUpdateTime"], Value::Null);
        assert_eq!(conditions[1]["lastTransitionTime"], Value::Null);
        // A map of Times.
        let mut budget =
            json!({"status": {"disruptedPods": {"web-0": "2026-11-26T16:41:48.1-01:30"}}});
        normalize("policy", "v1", "PodDisruptionBudget", &mut budget).unwrap();
        assert_eq!(
            budget["status"]["disruptedPods"]["web-0"],
            "2026-11-26T18:11:48Z"
        );
    }

    #[test]
    fn a_time_of_another_form_is_go_s_parse_error() {
        let job = |start: &str| {
            let mut job = json!({"status": {"startTime": start}});
            normalize("batch", "v1", "Job", &mut job).map(|()| job)
        };
        for (text, message) in [
            (
                "2026-11-26",
                "parsing time \"2026-11-26\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"T\"",
            ),
            (
                "2026-11-26T16:41:48",
                "parsing time \"2026-11-26T16:41:48\" as \"2006-01-02T15:04:05Z07:00\": cannot parse \"\" as \"Z07:00\"",
            ),
            (
                "2026-02-30T16:41:48Z",
                "parsing time \"2026-02-30T16:41:48Z\": day out of range",
            ),
            (
                "2026-11-26T24:00:00Z",
                "parsing time \"2026-11-26T24:00:00Z\": hour out of range",
            ),
            (
                "2026-11-26T16:41:48Zoo",
                "parsing time \"2026-11-26T16:41:48Zoo\": extra text: \"oo\"",
            ),
        ] {
            assert_eq!(job(text), Err(message.to_string()), "{text}");
        }
        assert_eq!(
            job("2028-02-29T00:00:00Z").unwrap()["status"]["startTime"],
            "2028-02-29T00:00:00Z"
        );
    }

    #[test]
    fn a_time_that_is_no_pointer_is_null_when_left_out_and_a_pointer_stays_out() {
        let mut pod = json!({"status": {
            "conditions": [{"type": "Ready", "status": "True"}],
            "containerStatuses": [{"name": "app", "state": {"running": {}}}],
        }});
        normalize("", "v1", "Pod", &mut pod).unwrap();
        assert_eq!(
            pod["status"]["conditions"][0],
            json!({"type": "Ready", "status": "True", "lastProbeTime": null, "lastTransitionTime": null})
        );
        assert_eq!(
            pod["status"]["containerStatuses"][0]["state"]["running"],
            json!({"startedAt": null})
        );
        assert_eq!(pod["status"].get("startTime"), None);
        let mut job = json!({"status": {"active": 1}});
        normalize("batch", "v1", "Job", &mut job).unwrap();
        assert_eq!(job, json!({"status": {"active": 1}}));
        let mut event = json!({"reason": "Synced"});
        normalize("", "v1", "Event", &mut event).unwrap();
        assert_eq!(event["firstTimestamp"], Value::Null);
        assert_eq!(event["lastTimestamp"], Value::Null);
    }

    #[test]
    fn go_reads_a_one_digit_hour_a_comma_and_the_day_last() {
        let job = |start: &str| {
            let mut job = json!({"status": {"startTime": start}});
            normalize("batch", "v1", "Job", &mut job).map(|()| job["status"]["startTime"].clone())
        };
        assert_eq!(
            job("2026-11-26T1:02:03Z"),
            Ok(json!("2026-11-26T01:02:03Z"))
        );
        assert_eq!(
            job("2026-11-32T25:00:00Z"),
            Err("parsing time \"2026-11-32T25:00:00Z\": hour out of range".into())
        );
        assert_eq!(
            job("2026-11-00T10:00:00Z"),
            Err("parsing time \"2026-11-00T10:00:00Z\": day out of range".into())
        );
        assert_eq!(
            lease(json!("2026-11-26T16:41:48,250000Z")).unwrap()["spec"]["renewTime"],
            "2026-11-26T16:41:48.250000Z"
        );
        assert_eq!(
            lease(json!("0001-01-01T00:00:00.000000Z")).unwrap()["spec"]["renewTime"],
            Value::Null
        );
        assert_eq!(
            lease(json!("0001-01-01T00:00:00.500000Z")).unwrap()["spec"]["renewTime"],
            "0001-01-01T00:00:00.500000Z"
        );
        assert_eq!(job("0001-01-01T00:00:00.5Z"), Ok(Value::Null));
    }

    #[test]
    fn a_pointer_sent_as_null_is_left_out_and_a_value_series_time_is_null() {
        let mut job = json!({"status": {"startTime": null, "active": 1}});
        normalize("batch", "v1", "Job", &mut job).unwrap();
        assert_eq!(job, json!({"status": {"active": 1}}));
        let mut event = json!({"reason": "Synced", "series": {"count": 2}});
        normalize("", "v1", "Event", &mut event).unwrap();
        assert_eq!(
            event["series"],
            json!({"count": 2, "lastObservedTime": null})
        );
    }

    #[test]
    fn a_core_event_without_an_event_time_has_null() {
        let mut event = json!({"reason": "Synced"});
        normalize("", "v1", "Event", &mut event).unwrap();
        assert_eq!(event["eventTime"], Value::Null);
        let mut event = json!({"reason": "Synced"});
        normalize("events.k8s.io", "v1", "Event", &mut event).unwrap();
        assert_eq!(event.get("eventTime"), None);
        assert_eq!(event["deprecatedFirstTimestamp"], Value::Null);
        // Kinds without a built-in schema, and fields no Time, are left as they are.
        let mut cm = json!({"data": {"renewTime": "now"}});
        normalize("", "v1", "ConfigMap", &mut cm).unwrap();
        assert_eq!(cm["data"]["renewTime"], "now");
        let mut foo = json!({"spec": {"at": "now"}});
        normalize("example.com", "v1", "Foo", &mut foo).unwrap();
        assert_eq!(foo["spec"]["at"], "now");
    }
}
