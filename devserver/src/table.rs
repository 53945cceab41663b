//! `meta.k8s.io` Tables of custom resources, as kube-apiserver answers
//! `kubectl get` (`Accept: application/json;as=Table;g=meta.k8s.io;v=v1`):
//! a `Name` column, then the CRD version's `additionalPrinterColumns` (or
//! `Age` when it has none), each cell read through the column's JSONPath,
//! a `date` cell shown as an age (`5m`, `3h`), each row carrying the
//! object's `PartialObjectMetadata`. The built-in kinds are answered with
//! plain objects, which kubectl prints with its own columns.

use serde_json::{Value, json};

use super::store::ResourceType;

/// The Table of `objects` of `rt` (a custom resource), `version` the
/// `meta.k8s.io` version asked for, `resource_version` the list's.
pub fn table(
    rt: &ResourceType,
    version: &str,
    objects: &[Value],
    resource_version: Option<&str>,
    now: i64,
) -> Value {
    let columns = columns(rt);
    let definitions: Vec<Value> = std::iter::once(name_column())
        .chain(columns.iter().map(|c| {
            json!({
                "name": c["name"],
                "type": c["type"],
                "format": c.get("format").cloned().unwrap_or(json!("")),
                "description": c.get("description").cloned().unwrap_or(json!("")),
                "priority": c.get("priority").cloned().unwrap_or(json!(0)),
            })
        }))
        .collect();
    let rows: Vec<Value> = objects
        .iter()
        .map(|object| {
            let cells: Vec<Value> = std::iter::once(object["metadata"]["name"].clone())
                .chain(columns.iter().map(|c| cell(c, object, now)))
                .collect();
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
    let mut metadata = json!({});
    if let Some(rv) = resource_version {
        metadata["resourceVersion"] = json!(rv);
    }
    json!({
        "kind": "Table",
        "apiVersion": format!("meta.k8s.io/{version}"),
        "metadata": metadata,
        "columnDefinitions": definitions,
        "rows": rows,
    })
}

fn name_column() -> Value {
    json!({
        "name": "Name", "type": "string", "format": "name", "priority": 0,
        "description": "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names",
    })
}

/// The columns after `Name`: the printer columns, or `Age`.
fn columns(rt: &ResourceType) -> Vec<Value> {
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

/// Seconds since the epoch of an RFC 3339 UTC timestamp
/// (`2026-11-26T16:41:48Z`).
fn seconds_since_epoch(text: &str) -> Option<i64> {
    let digits = |range: std::ops::Range<usize>| text.get(range)?.parse::<i64>().ok();
    let (year, month, day) = (digits(0..4)?, digits(5..7)?, digits(8..10)?);
    let (hour, minute, second) = (digits(11..13)?, digits(14..16)?, digits(17..19)?);
    // Days from the civil date (Howard Hinnant's algorithm).
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    let days = era * 146_097 + doe - 719_468;
    Some(days * 86_400 + hour * 3600 + minute * 60 + second)
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
