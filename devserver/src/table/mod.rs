//! `meta.k8s.io` Tables, as kube-apiserver answers `kubectl get`
//! (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`). A custom
//! resource's columns are `Name`, then its CRD version's
//! `additionalPrinterColumns` (or `Age` when it has none), each cell read
//! through the column's JSONPath, a `date` cell shown as an age (`5m`,
//! `3h`); a built-in kind's are its printer's (`printers`). Each row
//! carries the object's `PartialObjectMetadata`.

mod printers;

use serde_json::{Value, json};

use super::store::ResourceType;

/// A column's definition and its cell of an object.
type Column<'a> = (Value, Box<dyn Fn(&Value) -> Value + 'a>);

/// The Table of `objects` of `rt`, `version` the `meta.k8s.io` version
/// asked for, `list_metadata` the list's (its resourceVersion, continue
/// token and remaining count; `{}` for one object), `now` in seconds since
/// the epoch.
pub fn table(
    rt: &ResourceType,
    version: &str,
    objects: &[Value],
    list_metadata: &Value,
    now: i64,
) -> Value {
    let built_in = recon_api_semantics::is_built_in_group(&rt.group)
        .then(|| printers::columns(&rt.group, &rt.kind))
        .flatten();
    let columns: Vec<Column> = match built_in {
        Some(columns) => columns
            .into_iter()
            .map(|c| {
                let definition = json!({
                    "name": c.name, "type": c.kind, "format": c.format,
                    "description": c.description, "priority": c.priority,
                });
                (
                    definition,
                    Box::new(move |o: &Value| c.cell(o, now)) as Box<dyn Fn(&Value) -> Value>,
                )
            })
            .collect(),
        None => std::iter::once((
            name_column(),
            Box::new(|o: &Value| o["metadata"]["name"].clone()) as Box<dyn Fn(&Value) -> Value>,
        ))
        .chain(custom_columns(rt).into_iter().map(|c| {
            let definition = json!({
                "name": c["name"],
                "type": c["type"],
                "format": c.get("format").cloned().unwrap_or(json!("")),
                "description": c.get("description").cloned().unwrap_or(json!("")),
                "priority": c.get("priority").cloned().unwrap_or(json!(0)),
            });
            (
                definition,
                Box::new(move |o: &Value| cell(&c, o, now)) as Box<dyn Fn(&Value) -> Value>,
            )
        }))
        .collect(),
    };
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let cells: Vec<Value> = columns.iter().map(|(_, cell)| cell(object)).collect();
            json!({
                "cells": cells,
                "object": {
                    "kind": "PartialObjectMetadata",
                    "apiVersion": format!("meta.k8s.io/{version}"),
                    "metadata": object["metadata"],
                },
            })
        })
        .collect();
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": list_metadata,
        "columnDefinitions": columns.into_iter().map(|(d, _)| d).collect::<Vec<_>>(),
        "rows": rows,
    })
}

/// The description kube-apiserver gives the `Name` column.
fn name_column_description() -> &'static str {
    "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names"
}

fn name_column() -> Value {
    json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": name_column_description(),
    })
}

/// A custom resource's columns after `Name`: its printer columns, or `Age`.
fn custom_columns(rt: &ResourceType) -> Vec<Value> {
    match rt.printer_columns.as_deref() {
        Some(columns) if !columns.is_empty() => columns.clone(),
        _ => vec![json!({
            "name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp",
            "description": "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata",
        })],
    }
}

/// A row's cell of `column`: the value at its JSONPath (the first of
/// several), a `date` as an age; null when there is none.
fn cell(column: &Value, object: &Value, now: i64) -> Value {
    let path = column["jsonPath"].as_str().unwrap_or_default();
    let Some(value) = json_path(object, path).into_iter().next() else {
        return Value::Null;
    };
    match (column["type"].as_str(), value.as_str()) {
        (Some("date"), Some(text)) => match seconds_since_epoch(text) {
            Some(then) => json!(human_age(now - then)),
            None => value.clone(),
        },
        _ => value.clone(),
    }
}

/// The values at a printer column's JSONPath: `.a.b`, `.a[0].b`, `.a[*].b`
/// and the filter `.a[?(@.type=="Ready")].status`.
pub fn json_path<'a>(object: &'a Value, path: &str) -> Vec<&'a Value> {
    let path = path.trim().trim_start_matches('{').trim_end_matches('}');
    let mut current = vec![object];
    let mut rest = path.trim_start_matches('$');
    while !rest.is_empty() {
        if let Some(after) = rest.strip_prefix('[') {
            let Some(end) = after.find(']') else {
                return Vec::new();
            };
            let selector = &after[..end];
            rest = &after[end + 1..];
            current = current
                .into_iter()
                .flat_map(|v| select(v, selector))
                .collect();
        } else if let Some(after) = rest.strip_prefix('.') {
            let end = after.find(['.', '[']).unwrap_or(after.len());
            let field = &after[..end];
            rest = &after[end..];
            if field.is_empty() {
                continue;
            }
            current = current.into_iter().filter_map(|v| v.get(field)).collect();
        } else {
            return Vec::new();
        }
    }
    current
}

/// The elements of a list that `selector` (`0`, `*`, `?(@.k=="v")`) picks.
fn select<'a>(list: &'a Value, selector: &str) -> Vec<&'a Value> {
    let Some(items) = list.as_array() else {
        return Vec::new();
    };
    if selector == "*" {
        return items.iter().collect();
    }
    if let Ok(index) = selector.parse::<usize>() {
        return items.get(index).into_iter().collect();
    }
    let Some(filter) = selector
        .strip_prefix("?(@.")
        .and_then(|f| f.strip_suffix(')'))
    else {
        return Vec::new();
    };
    let Some((field, wanted)) = filter.split_once("==") else {
        return Vec::new();
    };
    let wanted = wanted.trim().trim_matches(|c| c == '"' || c == '\'');
    items
        .iter()
        .filter(|item| match &item[field.trim()] {
            Value::String(s) => s == wanted,
            // A number or boolean, as its JSON text.
            other => serde_json::to_string(other).is_ok_and(|text| text == wanted),
        })
        .collect()
}

/// Seconds since the epoch of an RFC 3339 timestamp
/// (`2026-11-26T16:41:48Z`).
fn seconds_since_epoch(text: &str) -> Option<i64> {
    text.parse::<jiff::Timestamp>().ok().map(|t| t.as_second())
}

/// The age of a timestamp as the printers show it (`translateTimestampSince`):
/// `<unknown>` when there is none.
fn age(timestamp: &Value, now: i64) -> String {
    match timestamp.as_str().and_then(seconds_since_epoch) {
        Some(then) => human_age(now - then),
        None => "<unknown>".into(),
    }
}

/// An age as kubectl shows it (`apimachinery`'s `HumanDuration`): `45s`,
/// `5m30s` under ten minutes, `42m`, `3h20m` under eight hours, `10h`,
/// `2d5h` under two days, `9d`, `2y30d` past two years.
pub fn human_age(seconds: i64) -> String {
    let s = seconds.max(0);
    let (minutes, hours, days) = (s / 60, s / 3600, s / 86_400);
    match s {
        _ if s < 60 * 2 => format!("{s}s"),
        _ if minutes < 10 => match s % 60 {
            0 => format!("{minutes}m"),
            rest => format!("{minutes}m{rest}s"),
        },
        _ if minutes < 60 * 3 => format!("{minutes}m"),
        _ if hours < 8 => match minutes % 60 {
            0 => format!("{hours}h"),
            rest => format!("{hours}h{rest}m"),
        },
        _ if hours < 48 => format!("{hours}h"),
        _ if hours < 24 * 8 => match hours % 24 {
            0 => format!("{days}d"),
            rest => format!("{days}d{rest}h"),
        },
        _ if days < 365 * 2 => format!("{days}d"),
        _ if days < 365 * 8 => match days % 365 {
            0 => format!("{}y", days / 365),
            rest => format!("{}y{rest}d", days / 365),
        },
        _ => format!("{}y", days / 365),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::kinds::builtin_types;

    /// The Table of one built-in object: its column names (wide ones
    /// marked `+`) and its row's cells.
    fn printed(group: &str, kind: &str, object: Value) -> (Vec<String>, Vec<Value>) {
        let rt = builtin_types()
            .into_iter()
            .find(|t| t.group == group && t.kind == kind)
            .expect("a built-in kind");
        let now = seconds_since_epoch("2026-11-26T17:00:00Z").unwrap();
        let t = table(&rt, "v1", &[object], &json!({"resourceVersion": "7"}), now);
        assert_eq!(t["metadata"]["resourceVersion"], "7");
        let names = t["columnDefinitions"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| {
                let wide = if c["priority"] == 1 { "+" } else { "" };
                format!("{wide}{}", c["name"].as_str().unwrap())
            })
            .collect();
        (names, t["rows"][0]["cells"].as_array().unwrap().clone())
    }

    const CREATED: &str = "2026-11-26T16:55:00Z";

    #[test]
    fn a_pod_prints_readiness_status_restarts_and_its_wide_columns() {
        let pod = json!({"metadata": {"name": "p", "creationTimestamp": CREATED},
            "spec": {"containers": [{"name": "a"}, {"name": "b"}], "nodeName": "n1"},
            "status": {"phase": "Running", "podIP": "10.0.0.5", "containerStatuses": [
                {"name": "a", "ready": true, "restartCount": 2, "state": {"running": {}}},
                {"name": "b", "ready": false, "restartCount": 1,
                 "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}});
        let (names, cells) = printed("", "Pod", pod);
        assert_eq!(
            names,
            [
                "Name",
                "Ready",
                "Status",
                "Restarts",
                "Age",
                "+IP",
                "+Node",
                "+Nominated Node",
                "+Readiness Gates"
            ]
        );
        assert_eq!(
            cells,
            [
                json!("p"),
                json!("1/2"),
                json!("CrashLoopBackOff"),
                json!("3"),
                json!("5m"),
                json!("10.0.0.5"),
                json!("n1"),
                json!("<none>"),
                json!("<none>")
            ]
        );
    }

    #[test]
    fn workloads_services_and_bindings_print_as_kubectl_shows_them() {
        let deployment = json!({"metadata": {"name": "web", "creationTimestamp": CREATED},
            "spec": {"replicas": 3, "selector": {"matchLabels": {"app": "web"}},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
            "status": {"readyReplicas": 2, "updatedReplicas": 3, "availableReplicas": 2}});
        let (names, cells) = printed("apps", "Deployment", deployment);
        assert_eq!(
            names,
            [
                "Name",
                "Ready",
                "Up-to-date",
                "Available",
                "Age",
                "+Containers",
                "+Images",
                "+Selector"
            ]
        );
        assert_eq!(
            cells,
            [
                json!("web"),
                json!("2/3"),
                json!(3),
                json!(2),
                json!("5m"),
                json!("nginx"),
                json!("nginx:1.27"),
                json!("app=web")
            ]
        );
        let service = json!({"metadata": {"name": "svc", "creationTimestamp": CREATED},
            "spec": {"type": "NodePort", "clusterIP": "10.96.0.10", "selector": {"app": "web"},
                     "ports": [{"port": 80, "protocol": "TCP", "nodePort": 30080},
                               {"port": 53, "protocol": "UDP"}]}});
        let (names, cells) = printed("", "Service", service);
        assert_eq!(
            names,
            [
                "Name",
                "Type",
                "Cluster-IP",
                "External-IP",
                "Port(s)",
                "Age",
                "+Selector"
            ]
        );
        assert_eq!(
            cells,
            [
                json!("svc"),
                json!("NodePort"),
                json!("10.96.0.10"),
                json!("<none>"),
                json!("80:30080/TCP,53/UDP"),
                json!("5m"),
                json!("app=web")
            ]
        );
        let binding = json!({"metadata": {"name": "b", "creationTimestamp": CREATED},
            "roleRef": {"kind": "ClusterRole", "name": "view"},
            "subjects": [{"kind": "User", "name": "ann"},
                         {"kind": "ServiceAccount", "name": "robot", "namespace": "ops"}]});
        let (_, cells) = printed("rbac.authorization.k8s.io", "ClusterRoleBinding", binding);
        assert_eq!(
            cells,
            [
                json!("b"),
                json!("ClusterRole/view"),
                json!("5m"),
                json!("ann"),
                json!(""),
                json!("ops/robot")
            ]
        );
        let (names, cells) = printed(
            "",
            "Secret",
            json!({"metadata": {"name": "s"}, "type": "Opaque", "data": {"a": "", "b": ""}}),
        );
        assert_eq!(names, ["Name", "Type", "Data", "Age"]);
        assert_eq!(
            cells,
            [json!("s"), json!("Opaque"), json!(2), json!("<unknown>")]
        );
    }

    #[test]
    fn an_event_prints_when_and_what_before_any_name() {
        let event = json!({"metadata": {"name": "e1", "creationTimestamp": CREATED},
            "type": "Warning", "reason": "Failed", "message": "it broke",
            "involvedObject": {"kind": "Pod", "name": "p"},
            "source": {"component": "kubelet"}, "count": 4,
            "lastTimestamp": "2026-11-26T16:59:00Z", "firstTimestamp": CREATED});
        let (names, cells) = printed("", "Event", event);
        assert_eq!(
            names,
            [
                "Last Seen",
                "Type",
                "Reason",
                "Object",
                "+Subobject",
                "+Source",
                "Message",
                "+First Seen",
                "+Count",
                "+Name"
            ]
        );
        assert_eq!(
            cells,
            [
                json!("60s"),
                json!("Warning"),
                json!("Failed"),
                json!("pod/p"),
                json!(""),
                json!("kubelet"),
                json!("it broke"),
                json!("5m"),
                json!("4"),
                json!("e1")
            ]
        );
    }

    #[test]
    fn json_paths_read_fields_indexes_wildcards_and_filters() {
        let foo = json!({"spec": {"replicas": 3, "ports": [{"port": 80}, {"port": 443}]},
            "status": {"conditions": [{"type": "Synced", "status": "False"},
                                      {"type": "Ready", "status": "True"}]}});
        assert_eq!(json_path(&foo, ".spec.replicas"), [&json!(3)]);
        assert_eq!(json_path(&foo, ".spec.ports[1].port"), [&json!(443)]);
        assert_eq!(
            json_path(&foo, ".spec.ports[*].port"),
            [&json!(80), &json!(443)]
        );
        assert_eq!(
            json_path(&foo, r#".status.conditions[?(@.type=="Ready")].status"#),
            [&json!("True")]
        );
        assert!(json_path(&foo, ".spec.missing").is_empty());
        assert!(json_path(&foo, ".spec.ports[7]").is_empty());
    }

    #[test]
    fn ages_read_as_kubectl_shows_them() {
        let cases = [
            (5, "5s"),
            (119, "119s"),
            (330, "5m30s"),
            (600, "10m"),
            (2520, "42m"),
            (3 * 3600 + 20 * 60, "3h20m"),
            (10 * 3600, "10h"),
            (2 * 86_400 + 5 * 3600, "2d5h"),
            (9 * 86_400, "9d"),
            (800 * 86_400, "2y70d"),
        ];
        for (seconds, shown) in cases {
            assert_eq!(human_age(seconds), shown, "{seconds}");
        }
        assert_eq!(seconds_since_epoch("1970-01-02T00:00:01Z"), Some(86_401));
        assert_eq!(
            seconds_since_epoch("2026-11-26T16:41:48Z"),
            Some(1_795_711_308)
        );
    }
}
