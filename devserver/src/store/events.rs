//! events.k8s.io/v1 Events and core/v1 Events are one storage, as in
//! kube-apiserver: an events.k8s.io Event is stored as the core Event it
//! converts to, and shown converted back (kube-apiserver's
//! `pkg/apis/events/v1/conversion.go`); its field selectors name the core
//! Event's fields through the same mapping. So an Event recorded through
//! either API is listed and watched through both.

use serde_json::{Map, Value, json};

use super::ResourceType;

/// The fields events.k8s.io/v1 names differently from core/v1, as
/// (events.k8s.io, core); every other field has one name in both.
const RENAMED: &[(&str, &str)] = &[
    ("regarding", "involvedObject"),
    ("note", "message"),
    ("reportingController", "reportingComponent"),
    ("deprecatedSource", "source"),
    ("deprecatedFirstTimestamp", "firstTimestamp"),
    ("deprecatedLastTimestamp", "lastTimestamp"),
    ("deprecatedCount", "count"),
];

/// Whether `rt` is events.k8s.io's Event, kept as core Events.
pub(super) fn is_events_api(rt: &ResourceType) -> bool {
    rt.group == "events.k8s.io" && rt.plural == "events"
}

/// An events.k8s.io Event as the core Event it is stored as.
pub(super) fn to_core(event: Value) -> Value {
    rename(event, "v1", |field| {
        RENAMED
            .iter()
            .find(|(events, _)| *events == field)
            .map(|(_, core)| *core)
    })
}

/// A stored core Event as `rt` (events.k8s.io's Event) shows it.
pub(super) fn from_core(event: &Value, rt: &ResourceType) -> Value {
    rename(event.clone(), &rt.api_version(), |field| {
        RENAMED
            .iter()
            .find(|(_, core)| *core == field)
            .map(|(events, _)| *events)
    })
}

/// The core Event's field an events.k8s.io field selector names
/// (`regarding.kind` is `involvedObject.kind`): the object's renames, which
/// the events API's field label conversion also makes for the fields it
/// lets a selector name (`regarding.*`, `reportingController`).
pub(super) fn core_field(field: &str) -> String {
    let (head, rest) = field
        .split_once('.')
        .map_or((field, None), |(h, r)| (h, Some(r)));
    let head = RENAMED
        .iter()
        .find(|(events, _)| *events == head)
        .map_or(head, |(_, core)| *core);
    match rest {
        Some(rest) => format!("{head}.{rest}"),
        None => head.to_string(),
    }
}

fn rename(
    event: Value,
    api_version: &str,
    renamed: impl Fn(&str) -> Option<&'static str>,
) -> Value {
    let Value::Object(fields) = event else {
        return event;
    };
    let mut out = Map::with_capacity(fields.len());
    for (field, value) in fields {
        match renamed(&field) {
            Some(to) => out.insert(to.to_string(), value),
            None => out.insert(field, value),
        };
    }
    out.insert("apiVersion".into(), json!(api_version));
    Value::Object(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::kinds;

    fn events_api() -> ResourceType {
        kinds::builtin_types()
            .into_iter()
            .find(|t| t.group == "events.k8s.io" && t.plural == "events")
            .expect("events.k8s.io is served")
    }

    #[test]
    fn an_events_api_event_round_trips_through_its_core_form() {
        let event = json!({
            "apiVersion": "events.k8s.io/v1",
            "kind": "Event",
            "metadata": {"name": "e", "namespace": "default"},
            "eventTime": "2024-01-02T03:04:05.000000Z",
            "regarding": {"kind": "Pod", "name": "web"},
            "note": "pulled",
            "reason": "Pulled",
            "type": "Normal",
            "action": "Pull",
            "reportingController": "kubelet",
            "reportingInstance": "node-1",
            "deprecatedSource": {"component": "kubelet"},
            "deprecatedFirstTimestamp": "2024-01-02T03:04:05Z",
            "deprecatedLastTimestamp": "2024-01-02T03:04:06Z",
            "deprecatedCount": 2,
            "series": {"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"},
        });
        let core = to_core(event.clone());
        assert_eq!(core["apiVersion"], "v1");
        assert_eq!(core["involvedObject"]["name"], "web");
        assert_eq!(core["message"], "pulled");
        assert_eq!(core["reportingComponent"], "kubelet");
        assert_eq!(core["source"]["component"], "kubelet");
        assert_eq!(core["firstTimestamp"], "2024-01-02T03:04:05Z");
        assert_eq!(core["lastTimestamp"], "2024-01-02T03:04:06Z");
        assert_eq!(core["count"], 2);
        assert_eq!(core["series"]["count"], 2);
        for (events, _) in RENAMED {
            assert!(core.get(events).is_none(), "{events} is renamed");
        }
        assert_eq!(from_core(&core, &events_api()), event);
    }

    #[test]
    fn field_selectors_name_the_core_fields() {
        assert_eq!(core_field("regarding.kind"), "involvedObject.kind");
        assert_eq!(
            core_field("regarding.fieldPath"),
            "involvedObject.fieldPath"
        );
        assert_eq!(core_field("reportingController"), "reportingComponent");
        assert_eq!(core_field("reason"), "reason");
        assert_eq!(core_field("metadata.name"), "metadata.name");
        // Not renamed: only a whole first segment is.
        assert_eq!(core_field("regardingX.kind"), "regardingX.kind");
    }
}
