//! What an update may not change, as each kind's update validation has
//! it: a Pod's spec beyond its images, active deadline and added
//! tolerations (`ValidatePodUpdate`), a workload's selector (the apps/v1 strategies), a StatefulSet's
//! spec beyond the fields it lets change (`ValidateStatefulSetUpdate`), the
//! data of a ConfigMap or Secret marked `immutable` and a Secret's type
//! (`ValidateConfigMapUpdate`, `ValidateSecretUpdate`), and an Event
//! updated through events.k8s.io (`ValidateEventUpdate`, on the core Event
//! both APIs store). Values are shown as the server's `field.Invalid`
//! shows Go values. A Service's (`ValidateServiceUpdate`) are
//! `service.rs`'s, checked before the new object as the server does.

use serde_json::{Map, Value};

use super::{Cause, go_label_selector};

const IMMUTABLE: &str = "field is immutable";

/// `field.Invalid(field, value, "field is immutable")`, `value` shown as Go does.
fn immutable(field: &str, value: String) -> Cause {
    Cause::new(
        field,
        "FieldValueInvalid",
        format!("Invalid value: {value}: {IMMUTABLE}"),
    )
}

/// The causes an update of `old` to `new` through `group`/`kind` meets
/// for changing what it may not.
pub(super) fn check(group: &str, kind: &str, new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    match (group, kind) {
        ("apps", "Deployment" | "ReplicaSet" | "DaemonSet") => {
            let selector = |o: &Value| semantic(o.pointer("/spec/selector"));
            if selector(new) != selector(old) {
                let shown =
                    go_label_selector(new.pointer("/spec/selector").unwrap_or(&Value::Null));
                causes.push(immutable("spec.selector", shown));
            }
        }
        ("apps", "StatefulSet") => stateful_set(new, old, causes),
        ("", "ConfigMap") => marked_immutable(new, old, &["data", "binaryData"], causes),
        ("", "Secret") => {
            let (now, was) = (super::text(new, "/type"), super::text(old, "/type"));
            if now != was {
                causes.push(immutable("type", format!("{now:?}")));
            }
            marked_immutable(new, old, &["data"], causes);
        }
        ("", "Pod") => pod(new, old, causes),
        ("events.k8s.io", "Event") => event(new, old, causes),
        _ => {}
    }
}

/// `value` as apimachinery's semantic equality of typed objects compares
/// it: an empty map or list, a null, and a zero value (`false`, `0`,
/// `""`), which a typed field holds when absent, are the same as none.
pub(super) fn semantic(value: Option<&Value>) -> Option<Value> {
    match value? {
        Value::Null | Value::Bool(false) => None,
        Value::Number(n) if n.as_f64() == Some(0.0) => None,
        Value::String(text) if text.is_empty() => None,
        Value::Object(map) => {
            let kept: Map<String, Value> = map
                .iter()
                .filter_map(|(k, v)| semantic(Some(v)).map(|v| (k.clone(), v)))
                .collect();
            (!kept.is_empty()).then_some(Value::Object(kept))
        }
        Value::Array(items) if items.is_empty() => None,
        Value::Array(items) => Some(Value::Array(
            items
                .iter()
                .map(|item| semantic(Some(item)).unwrap_or(Value::Null))
                .collect(),
        )),
        other => Some(other.clone()),
    }
}

/// What a Pod update may change, as the server lists it.
const POD_UPDATABLE: &str = "`spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)";

/// A Pod's spec: its active deadline may only shrink, its tolerations
/// only grow (or change their `tolerationSeconds`), and nothing else but
/// its containers' images may change. The server follows the Forbidden
/// message with a diff of the specs, which is not repeated here.
fn pod(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let (Some(spec), Some(was)) = (new.get("spec"), old.get("spec")) else {
        return;
    };
    let deadline = |s: &Value| s.get("activeDeadlineSeconds").and_then(Value::as_i64);
    match (deadline(spec), deadline(was)) {
        (Some(now), _) if !(0..=i64::from(i32::MAX)).contains(&now) => {
            causes.push(Cause::invalid_number(
                "spec.activeDeadlineSeconds",
                now,
                &format!("must be between 0 and {}, inclusive", i32::MAX),
            ));
            return;
        }
        (Some(now), Some(before)) if now > before => {
            causes.push(Cause::invalid_number(
                "spec.activeDeadlineSeconds",
                now,
                "must be less than or equal to previous value",
            ));
            return;
        }
        (None, Some(_)) => causes.push(Cause::new(
            "spec.activeDeadlineSeconds",
            "FieldValueInvalid",
            "Invalid value: null: must not update from a positive integer to nil value".into(),
        )),
        _ => {}
    }
    // Containers may be neither added nor removed; nothing else is
    // compared then.
    for list in ["containers", "initContainers"] {
        if super::items(spec.get(list)).len() != super::items(was.get(list)).len() {
            causes.push(Cause::forbidden(
                &format!("spec.{list}"),
                "pod updates may not add or remove containers",
            ));
            return;
        }
    }
    // Scheduling gates may only be removed.
    let gate_name = |gate: &Value| super::text(gate, "/name").to_string();
    let gates_before: Vec<String> = super::items(was.get("schedulingGates"))
        .iter()
        .map(gate_name)
        .collect();
    for (i, gate) in super::items(spec.get("schedulingGates")).iter().enumerate() {
        let name = gate_name(gate);
        if !gates_before.contains(&name) {
            causes.push(Cause::forbidden(
                &format!("spec.schedulingGates[{i}].name"),
                &format!("only deletion is allowed, but found new scheduling gate '{name}'"),
            ));
        }
    }
    let tolerations = super::items(spec.get("tolerations"));
    let kept = super::items(was.get("tolerations")).iter().all(|before| {
        tolerations
            .iter()
            .any(|now| without_seconds(now) == without_seconds(before))
    });
    if !kept {
        causes.push(Cause::forbidden(
            "spec.tolerations",
            "existing toleration can not be modified except its tolerationSeconds",
        ));
    }
    // The spec with what may change taken from the old one.
    let mut munged = spec.clone();
    for list in ["containers", "initContainers"] {
        let images = super::items(was.get(list));
        if let Some(containers) = munged.get_mut(list).and_then(Value::as_array_mut) {
            for (container, before) in containers.iter_mut().zip(images) {
                container["image"] = before.get("image").cloned().unwrap_or(Value::Null);
            }
        }
    }
    let Some(munged_spec) = munged.as_object_mut() else {
        return;
    };
    for field in ["activeDeadlineSeconds", "schedulingGates", "tolerations"] {
        match was.get(field) {
            Some(value) => munged_spec.insert(field.to_string(), value.clone()),
            None => munged_spec.remove(field),
        };
    }
    let grace = |s: &Value| {
        s.get("terminationGracePeriodSeconds")
            .and_then(Value::as_i64)
    };
    if grace(was).is_some_and(|g| g < 0) && grace(spec) == Some(1) {
        munged_spec.insert(
            "terminationGracePeriodSeconds".to_string(),
            was["terminationGracePeriodSeconds"].clone(),
        );
    }
    if semantic(Some(&munged)) != semantic(Some(was)) {
        causes.push(Cause::forbidden(
            "spec",
            &format!("pod updates may not change fields other than {POD_UPDATABLE}"),
        ));
    }
}

/// A toleration but its `tolerationSeconds`.
fn without_seconds(toleration: &Value) -> Option<Value> {
    let mut toleration = toleration.clone();
    if let Some(map) = toleration.as_object_mut() {
        map.remove("tolerationSeconds");
    }
    semantic(Some(&toleration))
}

/// The StatefulSet spec fields an update may change.
const STATEFUL_SET_MUTABLE: [&str; 6] = [
    "replicas",
    "ordinals",
    "template",
    "updateStrategy",
    "persistentVolumeClaimRetentionPolicy",
    "minReadySeconds",
];

fn stateful_set(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let fixed = |o: &Value| {
        let mut spec = o.get("spec").cloned().unwrap_or_default();
        if let Some(spec) = spec.as_object_mut() {
            for field in STATEFUL_SET_MUTABLE {
                spec.remove(field);
            }
        }
        semantic(Some(&spec))
    };
    if fixed(new) != fixed(old) {
        causes.push(Cause::forbidden(
            "spec",
            "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
        ));
    }
}

/// A ConfigMap's or Secret's `fields` (and the mark itself) once `old`
/// is marked `immutable`.
fn marked_immutable(new: &Value, old: &Value, fields: &[&str], causes: &mut Vec<Cause>) {
    let marked = |o: &Value| o.get("immutable").and_then(Value::as_bool) == Some(true);
    if !marked(old) {
        return;
    }
    let detail = "field is immutable when `immutable` is set";
    if !marked(new) {
        causes.push(Cause::forbidden("immutable", detail));
    }
    // A null map is none, as a Go map decoded from it is nil.
    let map = |o: &Value, field: &str| o.get(field).filter(|v| !v.is_null()).cloned();
    for field in fields {
        if map(new, field) != map(old, field) {
            causes.push(Cause::forbidden(field, detail));
        }
    }
}

/// An Event's fields, by their core names, and how each is shown.
enum Shown {
    Text,
    Count,
    Time,
    Reference { pointer: bool },
    Source,
}

/// The Event fields an events.k8s.io update may not change, in the
/// order the server checks them: (stored name, reported name, shape).
const EVENT_FIXED: [(&str, &str, Shown); 13] = [
    (
        "involvedObject",
        "involvedObject",
        Shown::Reference { pointer: false },
    ),
    ("reason", "reason", Shown::Text),
    ("message", "message", Shown::Text),
    ("source", "source", Shown::Source),
    ("firstTimestamp", "firstTimestamp", Shown::Time),
    ("lastTimestamp", "lastTimestamp", Shown::Time),
    ("count", "count", Shown::Count),
    ("type", "type", Shown::Text),
    ("eventTime", "eventTime", Shown::Time),
    ("action", "action", Shown::Text),
    ("related", "related", Shown::Reference { pointer: true }),
    ("reportingComponent", "reportingController", Shown::Text),
    ("reportingInstance", "reportingInstance", Shown::Text),
];

fn event(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    if semantic(new.get("series")) != semantic(old.get("series")) {
        super::event::series(new, causes);
    }
    for (stored, reported, shown) in &EVENT_FIXED {
        let (now, was) = (new.get(*stored), old.get(*stored));
        if semantic(now) == semantic(was) {
            continue;
        }
        let value = now.unwrap_or(&Value::Null);
        let text = |v: &Value| format!("{:?}", v.as_str().unwrap_or_default());
        let shown = match shown {
            Shown::Text => text(value),
            Shown::Count => value.as_i64().unwrap_or(0).to_string(),
            Shown::Time => go_time(value),
            Shown::Reference { pointer } => go_reference(value, *pointer),
            Shown::Source => format!(
                "core.EventSource{{Component:{}, Host:{}}}",
                text(&value["component"]),
                text(&value["host"])
            ),
        };
        causes.push(immutable(reported, shown));
    }
}

/// Go's `time.Time.String()` of an RFC 3339 time (the zero time when
/// unset): `2024-01-02 03:04:05.5 +0000 UTC`.
fn go_time(value: &Value) -> String {
    let Some(time) = value
        .as_str()
        .and_then(|t| t.parse::<jiff::Timestamp>().ok())
    else {
        return "0001-01-01 00:00:00 +0000 UTC".to_string();
    };
    let seconds = time.strftime("%Y-%m-%d %H:%M:%S").to_string();
    let nanos = time.subsec_nanosecond();
    let fraction = if nanos == 0 {
        String::new()
    } else {
        format!(".{nanos:09}").trim_end_matches('0').to_string()
    };
    format!("{seconds}{fraction} +0000 UTC")
}

/// Go's `%#v` of a `core.ObjectReference` (`&` before a pointer's, `null`
/// for a nil one).
fn go_reference(value: &Value, pointer: bool) -> String {
    if pointer && value.is_null() {
        return "null".to_string();
    }
    let fields: Vec<String> = [
        ("Kind", "kind"),
        ("Namespace", "namespace"),
        ("Name", "name"),
        ("UID", "uid"),
        ("APIVersion", "apiVersion"),
        ("ResourceVersion", "resourceVersion"),
        ("FieldPath", "fieldPath"),
    ]
    .iter()
    .map(|(go, json)| format!("{go}:{:?}", value[*json].as_str().unwrap_or_default()))
    .collect();
    let amp = if pointer { "&" } else { "" };
    format!("{amp}core.ObjectReference{{{}}}", fields.join(", "))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(group: &str, kind: &str, new: &Value, old: &Value) -> Vec<String> {
        let mut causes = Vec::new();
        check(group, kind, new, old, &mut causes);
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.body))
            .collect()
    }

    #[test]
    fn a_workloads_selector_may_not_change_but_an_empty_map_is_no_change() {
        let old = json!({"spec": {"selector": {"matchLabels": {"app": "web"}}}});
        let new = json!({"spec": {"selector": {"matchLabels": {"app": "web2"}}}});
        assert_eq!(
            messages("apps", "Deployment", &new, &old),
            [
                "spec.selector: Invalid value: &v1.LabelSelector{MatchLabels:map[string]string{\"app\":\"web2\"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}: field is immutable"
            ]
        );
        let same =
            json!({"spec": {"selector": {"matchLabels": {"app": "web"}, "matchExpressions": []}}});
        assert!(messages("apps", "ReplicaSet", &same, &old).is_empty());
    }

    #[test]
    fn a_stateful_set_changes_only_the_fields_it_lets_change() {
        let old = json!({"spec": {"replicas": 1, "serviceName": "db", "template": {"a": 1}}});
        let scaled = json!({"spec": {"replicas": 3, "serviceName": "db", "template": {"a": 2}}});
        assert!(messages("apps", "StatefulSet", &scaled, &old).is_empty());
        let renamed = json!({"spec": {"replicas": 1, "serviceName": "other"}});
        assert_eq!(
            messages("apps", "StatefulSet", &renamed, &old),
            [
                "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', 'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden"
            ]
        );
    }

    #[test]
    fn an_immutable_config_map_keeps_its_data_and_its_mark() {
        let old = json!({"immutable": true, "data": {"k": "v"}});
        let new = json!({"data": {"k": "w"}, "binaryData": {"b": "AA=="}});
        assert_eq!(
            messages("", "ConfigMap", &new, &old),
            [
                "immutable: Forbidden: field is immutable when `immutable` is set",
                "data: Forbidden: field is immutable when `immutable` is set",
                "binaryData: Forbidden: field is immutable when `immutable` is set",
            ]
        );
        let unmarked = json!({"data": {"k": "v"}});
        assert!(messages("", "ConfigMap", &new, &unmarked).is_empty());
    }

    #[test]
    fn a_pod_changes_only_its_images_deadline_and_tolerations() {
        let old = json!({"spec": {
            "containers": [{"name": "c", "image": "nginx:1.26", "resources": {}}],
            "activeDeadlineSeconds": 600,
            "tolerations": [{"key": "k", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 60}],
        }});
        let mut new = old.clone();
        new["metadata"] = json!({"labels": {"a": "b"}});
        new["spec"]["containers"][0]["image"] = json!("nginx:1.27");
        new["spec"]["activeDeadlineSeconds"] = json!(300);
        new["spec"]["tolerations"][0]["tolerationSeconds"] = json!(30);
        new["spec"]["tolerations"]
            .as_array_mut()
            .unwrap()
            .push(json!({"key": "other", "operator": "Exists"}));
        assert!(messages("", "Pod", &new, &old).is_empty());
        new["spec"]["containers"][0]["env"] = json!([{"name": "A", "value": "1"}]);
        new["spec"]["activeDeadlineSeconds"] = json!(900);
        assert_eq!(
            messages("", "Pod", &new, &old),
            [
                "spec.activeDeadlineSeconds: Invalid value: 900: must be less than or equal to previous value"
            ]
        );
        new["spec"]["activeDeadlineSeconds"] = json!(600);
        new["spec"]["tolerations"] = json!([]);
        assert_eq!(
            messages("", "Pod", &new, &old),
            [
                "spec.tolerations: Forbidden: existing toleration can not be modified except its tolerationSeconds".to_string(),
                format!("spec: Forbidden: pod updates may not change fields other than {POD_UPDATABLE}"),
            ]
        );
    }

    #[test]
    fn a_pod_may_neither_add_containers_nor_gates_and_zero_values_are_no_change() {
        let old = json!({"spec": {"containers": [{"name": "c", "image": "a"}]}});
        let mut new = old.clone();
        new["spec"]["hostNetwork"] = json!(false);
        new["spec"]["priority"] = json!(0);
        assert!(messages("", "Pod", &new, &old).is_empty());
        new["spec"]["schedulingGates"] = json!([{"name": "wait"}]);
        assert_eq!(
            messages("", "Pod", &new, &old),
            [
                "spec.schedulingGates[0].name: Forbidden: only deletion is allowed, but found new scheduling gate 'wait'"
            ]
        );
        new["spec"]["containers"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "d", "image": "b"}));
        assert_eq!(
            messages("", "Pod", &new, &old),
            ["spec.containers: Forbidden: pod updates may not add or remove containers"]
        );
        let gated = json!({"spec": {"containers": [{"name": "c", "image": "a"}], "schedulingGates": [{"name": "wait"}]}});
        assert!(
            messages("", "Pod", &old, &gated).is_empty(),
            "a gate may go"
        );
    }

    #[test]
    fn a_secrets_type_never_changes() {
        let old = json!({"type": "Opaque", "data": {"k": "dg=="}});
        let new = json!({"type": "kubernetes.io/tls", "data": {"k": "dg=="}});
        assert_eq!(
            messages("", "Secret", &new, &old),
            ["type: Invalid value: \"kubernetes.io/tls\": field is immutable"]
        );
    }

    #[test]
    fn an_events_api_update_changes_only_the_series() {
        let old = json!({
            "involvedObject": {"kind": "Pod", "namespace": "default", "name": "p"},
            "reason": "Pulled", "message": "pulled", "type": "Normal", "action": "Pull",
            "eventTime": "2024-01-02T03:04:05.000000Z",
            "reportingComponent": "kubelet", "reportingInstance": "node-1",
        });
        let mut new = old.clone();
        new["series"] = json!({"count": 2, "lastObservedTime": "2024-01-02T03:04:06.000000Z"});
        assert!(messages("events.k8s.io", "Event", &new, &old).is_empty());
        assert!(
            messages("", "Event", &json!({}), &old).is_empty(),
            "the core API checks no field"
        );
        new["message"] = json!("changed");
        new["eventTime"] = json!("2024-01-02T03:04:05.250000Z");
        new["involvedObject"]["name"] = json!("q");
        new["series"] = json!({"count": 1});
        assert_eq!(
            messages("events.k8s.io", "Event", &new, &old),
            [
                "series.count: Invalid value: \"\": should be at least 2",
                "series.lastObservedTime: Required value",
                "involvedObject: Invalid value: core.ObjectReference{Kind:\"Pod\", Namespace:\"default\", Name:\"q\", UID:\"\", APIVersion:\"\", ResourceVersion:\"\", FieldPath:\"\"}: field is immutable",
                "message: Invalid value: \"changed\": field is immutable",
                "eventTime: Invalid value: 2024-01-02 03:04:05.25 +0000 UTC: field is immutable",
            ]
        );
    }
}
