//! A container's environment, as `ValidateEnv` and `ValidateEnvFrom` word
//! it: each variable named (`IsEnvVarName`) with at most one source for
//! its value, and each `envFrom` entry with exactly one source.

use serde_json::Value;

use super::{Cause, invalid_unnamed, items, names, text};

/// The downward API fields a variable may take its value from.
const FIELD_PATHS: [&str; 8] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.podIP",
    "status.podIPs",
];

/// The container resources a variable may take its value from.
const RESOURCE_FIELDS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];

/// A container's `env` at `path`.
pub(super) fn env(list: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    for (i, var) in items(list).iter().enumerate() {
        let at = format!("{path}[{i}]");
        match text(var, "/name") {
            "" => causes.push(Cause::required(&format!("{at}.name"), "")),
            name => {
                for problem in names::env_var_name(name) {
                    causes.push(names::invalid(&format!("{at}.name"), name, problem));
                }
            }
        }
        if let Some(from) = var.get("valueFrom").filter(|v| v.is_object()) {
            value_from(
                from,
                !text(var, "/value").is_empty(),
                &format!("{at}.valueFrom"),
                causes,
            );
        }
    }
}

/// A variable's `valueFrom` at `path` (`validateEnvVarValueFrom`): one
/// source, and none beside a `value`.
fn value_from(from: &Value, has_value: bool, path: &str, causes: &mut Vec<Cause>) {
    let mut sources = 0;
    if let Some(field_ref) = from.get("fieldRef") {
        sources += 1;
        object_field(field_ref, &format!("{path}.fieldRef"), causes);
    }
    if let Some(resource_ref) = from.get("resourceFieldRef") {
        sources += 1;
        let at = format!("{path}.resourceFieldRef.resource");
        match text(resource_ref, "/resource") {
            "" => causes.push(Cause::required(&at, "")),
            resource
                if RESOURCE_FIELDS.contains(&resource)
                    || resource.starts_with("requests.hugepages-")
                    || resource.starts_with("limits.hugepages-") => {}
            resource => causes.push(Cause::not_supported(&at, resource, &RESOURCE_FIELDS)),
        }
    }
    for source in ["configMapKeyRef", "secretKeyRef"] {
        if let Some(selector) = from.get(source) {
            sources += 1;
            key_selector(selector, &format!("{path}.{source}"), causes);
        }
    }
    if sources == 0 {
        causes.push(invalid_unnamed(
            path,
            "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ));
    } else if has_value {
        causes.push(invalid_unnamed(
            path,
            "may not be specified when `value` is not empty",
        ));
    } else if sources > 1 {
        causes.push(invalid_unnamed(
            path,
            "may not have more than one field specified at a time",
        ));
    }
}

/// A downward API `fieldRef` (`validateObjectFieldSelector`).
fn object_field(selector: &Value, path: &str, causes: &mut Vec<Cause>) {
    if text(selector, "/apiVersion").is_empty() {
        causes.push(Cause::required(&format!("{path}.apiVersion"), ""));
        return;
    }
    let field_path = text(selector, "/fieldPath");
    if field_path.is_empty() {
        causes.push(Cause::required(&format!("{path}.fieldPath"), ""));
        return;
    }
    let subscripted = ["metadata.labels['", "metadata.annotations['"]
        .iter()
        .any(|prefix| field_path.starts_with(prefix) && field_path.ends_with("']"));
    if !subscripted && !FIELD_PATHS.contains(&field_path) {
        causes.push(Cause::not_supported(
            &format!("{path}.fieldPath"),
            field_path,
            &FIELD_PATHS,
        ));
    }
}

/// A `configMapKeyRef` or `secretKeyRef`: a valid object name and key.
fn key_selector(selector: &Value, path: &str, causes: &mut Vec<Cause>) {
    let name = text(selector, "/name");
    for problem in names::dns1123_subdomain(name) {
        causes.push(names::invalid(&format!("{path}.name"), name, problem));
    }
    match text(selector, "/key") {
        "" => causes.push(Cause::required(&format!("{path}.key"), "")),
        key => {
            for problem in names::config_map_key(key) {
                causes.push(names::invalid(&format!("{path}.key"), key, problem));
            }
        }
    }
}

/// A container's `envFrom` at `path`: each entry's prefix a valid
/// variable name, and exactly one source, named.
pub(super) fn env_from(list: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    for (i, entry) in items(list).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let prefix = text(entry, "/prefix");
        if !prefix.is_empty() {
            for problem in names::env_var_name(prefix) {
                causes.push(names::invalid(&format!("{at}.prefix"), prefix, problem));
            }
        }
        let mut sources = 0;
        for source in ["configMapRef", "secretRef"] {
            let Some(reference) = entry.get(source) else {
                continue;
            };
            sources += 1;
            let name_at = format!("{at}.{source}.name");
            match text(reference, "/name") {
                "" => causes.push(Cause::required(&name_at, "")),
                name => {
                    for problem in names::dns1123_subdomain(name) {
                        causes.push(names::invalid(&name_at, name, problem));
                    }
                }
            }
        }
        // The server names the list, not the entry, here.
        match sources {
            0 => causes.push(invalid_unnamed(
                path,
                "must specify one of: `configMapRef` or `secretRef`",
            )),
            1 => {}
            _ => causes.push(invalid_unnamed(
                path,
                "may not have more than one field specified at a time",
            )),
        }
    }
}
