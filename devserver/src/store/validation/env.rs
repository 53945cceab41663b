//! A container's environment, as `ValidateEnv` and `ValidateEnvFrom` word
//! it: each variable named (`IsEnvVarName`) with at most one source for
//! its value, and each `envFrom` entry with exactly one source; and the
//! downward API's selectors of a Pod's fields and a container's resources,
//! which a variable and a downward API volume's file share
//! (`validateObjectFieldSelector`, `validateContainerResourceFieldSelector`).

use serde_json::Value;

use super::volume_source::quantity_text;
use super::{Cause, invalid_unnamed, items, names, quantity, text};

/// The downward API fields a variable may take its value from.
const FIELD_PATHS: [&str; 9] = [
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.serviceAccountName",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
];

/// `validContainerResourceFieldPathExpressions`, sorted.
const RESOURCE_FIELDS: [&str; 6] = [
    "limits.cpu",
    "limits.ephemeral-storage",
    "limits.memory",
    "requests.cpu",
    "requests.ephemeral-storage",
    "requests.memory",
];
/// The prefixes of the huge page resources a selector may name.
const HUGE_PAGES: [&str; 2] = ["limits.hugepages-", "requests.hugepages-"];
/// The divisors of a resource counted in bytes.
const BYTE_DIVISORS: [&str; 13] = [
    "1", "1k", "1M", "1G", "1T", "1P", "1E", "1Ki", "1Mi", "1Gi", "1Ti", "1Pi", "1Ei",
];
/// The divisor details of a resource counted in bytes, by what it counts.
const BYTE_DIVISOR_DETAIL: &str = "only divisor's values 1, 1k, 1M, 1G, 1T, 1P, 1E, 1Ki, 1Mi, 1Gi, 1Ti, 1Pi, 1Ei are supported with the";

/// The labels `ConvertDownwardAPIFieldLabel` (`pkg/apis/core/pods`) takes
/// as they are; `spec.host` it turns into `spec.nodeName`.
const POD_FIELD_LABELS: [&str; 14] = [
    "metadata.annotations",
    "metadata.labels",
    "metadata.name",
    "metadata.namespace",
    "metadata.uid",
    "spec.nodeName",
    "spec.restartPolicy",
    "spec.serviceAccountName",
    "spec.schedulerName",
    "status.phase",
    "status.hostIP",
    "status.hostIPs",
    "status.podIP",
    "status.podIPs",
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
        object_field(field_ref, &format!("{path}.fieldRef"), &FIELD_PATHS, causes);
    }
    if let Some(resource_ref) = from.get("resourceFieldRef") {
        sources += 1;
        resource_field(
            resource_ref,
            &format!("{path}.resourceFieldRef"),
            false,
            causes,
        );
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

/// `validateContainerResourceFieldSelector`, of a variable's value or
/// (`volume`) a downward API volume's file, which must also name its
/// container: a resource it may show, and its divisor.
pub(super) fn resource_field(selector: &Value, at: &str, volume: bool, causes: &mut Vec<Cause>) {
    let resource = text(selector, "/resource");
    if volume && text(selector, "/containerName").is_empty() {
        causes.push(Cause::required(&format!("{at}.containerName"), ""));
    } else if resource.is_empty() {
        causes.push(Cause::required(&format!("{at}.resource"), ""));
    } else if !RESOURCE_FIELDS.contains(&resource)
        && !HUGE_PAGES.iter().any(|prefix| resource.starts_with(prefix))
    {
        causes.push(Cause::not_supported(
            &format!("{at}.resource"),
            resource,
            &RESOURCE_FIELDS,
        ));
    }
    divisor(resource, selector, at, causes);
}

/// `validateContainerResourceDivisor`: a set, non-zero divisor is one the
/// resource takes, compared in its canonical form; the value shown is
/// the resource's name.
fn divisor(resource: &str, selector: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(written) = quantity_text(selector.get("divisor")) else {
        return;
    };
    let (Some(nanos), Some(shown)) = (quantity::parse(&written), quantity::canonical(&written))
    else {
        return;
    };
    if nanos == 0 {
        return;
    }
    let bytes = |what: &str| {
        (!BYTE_DIVISORS.contains(&shown.as_str())).then(|| format!("{BYTE_DIVISOR_DETAIL} {what}"))
    };
    let problem = match resource {
        "limits.cpu" | "requests.cpu" => (!["1m", "1"].contains(&shown.as_str())).then(|| {
            "only divisor's values 1m and 1 are supported with the cpu resource".to_string()
        }),
        "limits.memory" | "requests.memory" => bytes("memory resource"),
        "limits.ephemeral-storage" | "requests.ephemeral-storage" => {
            bytes("local ephemeral storage resource")
        }
        _ => None,
    };
    let divisor_at = format!("{at}.divisor");
    if let Some(problem) = problem {
        causes.push(names::invalid(&divisor_at, resource, problem));
    }
    if HUGE_PAGES.iter().any(|prefix| resource.starts_with(prefix))
        && let Some(problem) = bytes("hugepages resource")
    {
        causes.push(names::invalid(&divisor_at, resource, problem));
    }
}

/// `validateObjectFieldSelector`, of a variable's value or a downward API
/// volume's file: a version and path, the path converted
/// (`ConvertDownwardAPIFieldLabel`), a subscript a qualified name, else a
/// field among `expressions` (sorted).
pub(super) fn object_field(
    selector: &Value,
    at: &str,
    expressions: &[&str],
    causes: &mut Vec<Cause>,
) {
    if text(selector, "/apiVersion").is_empty() {
        causes.push(Cause::required(&format!("{at}.apiVersion"), ""));
        return;
    }
    let field_path = text(selector, "/fieldPath");
    let field_path_at = format!("{at}.fieldPath");
    if field_path.is_empty() {
        causes.push(Cause::required(&field_path_at, ""));
        return;
    }
    let internal = match pod_field_label(text(selector, "/apiVersion"), field_path) {
        Ok(internal) => internal,
        Err(problem) => {
            causes.push(names::invalid(
                &field_path_at,
                field_path,
                format!("error converting fieldPath: {problem}"),
            ));
            return;
        }
    };
    if let Some((path, subscript)) = subscripted(internal) {
        // Only these two take a subscript past the conversion.
        let key = if path == "metadata.annotations" {
            subscript.to_lowercase()
        } else {
            subscript.to_string()
        };
        for problem in names::qualified_name(&key) {
            causes.push(names::invalid(at, &key, problem));
        }
    } else if !expressions.contains(&internal) {
        causes.push(Cause::not_supported(&field_path_at, internal, expressions));
    }
}

/// `fieldpath.SplitMaybeSubscriptedPath`: `metadata.labels['key']` as
/// the path and the key.
fn subscripted(field_path: &str) -> Option<(&str, &str)> {
    let (path, subscript) = field_path.strip_suffix("']")?.split_once("['")?;
    (!path.is_empty()).then_some((path, subscript))
}

/// `ConvertDownwardAPIFieldLabel`: a `v1` label of a Pod, as the internal
/// version names it; the error's words otherwise.
fn pod_field_label<'l>(version: &str, label: &'l str) -> Result<&'l str, String> {
    if version != "v1" {
        return Err(format!("unsupported pod version: {version}"));
    }
    if let Some((path, _)) = subscripted(label) {
        return match path {
            "metadata.annotations" | "metadata.labels" => Ok(label),
            _ => Err(format!("field label does not support subscript: {label}")),
        };
    }
    match label {
        "spec.host" => Ok("spec.nodeName"),
        label if POD_FIELD_LABELS.contains(&label) => Ok(label),
        _ => Err(format!("field label not supported: {label}")),
    }
}
