//! A container's probes and lifecycle hooks, as `validateProbe`,
//! `validateHandler` and `validateLifecycle` word them: exactly one handler
//! (`exec` with a command, `httpGet` with a path, port and scheme,
//! `tcpSocket` or `grpc` with a port), non-negative timings, and a
//! success threshold of 1 for liveness and startup probes.

use serde_json::Value;

use super::{Cause, names, port_name_problems, port_number};

/// The probes and lifecycle hooks of the container at `at`, in the order
/// `validateContainers` checks them.
pub(super) fn probes(container: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(lifecycle) = container.get("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get(hook) {
                self::handler(handler, &format!("{at}.lifecycle.{hook}"), false, causes);
            }
        }
    }
    let probe = |name: &str| container.get(name).filter(|p| p.is_object());
    if let Some(liveness) = probe("livenessProbe") {
        self::probe(liveness, &format!("{at}.livenessProbe"), causes);
    }
    if let Some(grace) = probe("readinessProbe")
        .and_then(|p| p.get("terminationGracePeriodSeconds"))
        .and_then(Value::as_i64)
    {
        causes.push(Cause::invalid_number(
            &format!("{at}.readinessProbe.terminationGracePeriodSeconds"),
            grace,
            "must not be set for readinessProbes",
        ));
    }
    if let Some(startup) = probe("startupProbe") {
        self::probe(startup, &format!("{at}.startupProbe"), causes);
    }
    for name in ["livenessProbe", "startupProbe"] {
        let threshold = probe(name).and_then(|p| p.get("successThreshold").and_then(Value::as_i64));
        if let Some(threshold) = threshold.filter(|t| *t != 1) {
            causes.push(Cause::invalid_number(
                &format!("{at}.{name}.successThreshold"),
                threshold,
                "must be 1",
            ));
        }
    }
    if let Some(readiness) = probe("readinessProbe") {
        self::probe(readiness, &format!("{at}.readinessProbe"), causes);
    }
}

/// One probe at `path`: its handler and timings.
fn probe(probe: &Value, path: &str, causes: &mut Vec<Cause>) {
    handler(probe, path, true, causes);
    for field in [
        "initialDelaySeconds",
        "timeoutSeconds",
        "periodSeconds",
        "successThreshold",
        "failureThreshold",
    ] {
        if let Some(value) = probe.get(field).and_then(Value::as_i64).filter(|v| *v < 0) {
            causes.push(Cause::invalid_number(
                &format!("{path}.{field}"),
                value,
                "must be greater than or equal to 0",
            ));
        }
    }
    if let Some(grace) = probe
        .get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .filter(|g| *g <= 0)
    {
        causes.push(Cause::invalid_number(
            &format!("{path}.terminationGracePeriodSeconds"),
            grace,
            "must be greater than 0",
        ));
    }
}

/// A probe's or hook's handler at `path`: exactly one of `exec`,
/// `httpGet`, `tcpSocket` and (for probes) `grpc`.
fn handler(handler: &Value, path: &str, grpc: bool, causes: &mut Vec<Cause>) {
    let kinds: &[&str] = if grpc {
        &["exec", "httpGet", "tcpSocket", "grpc"]
    } else {
        &["exec", "httpGet", "tcpSocket"]
    };
    let mut handlers = 0;
    for kind in kinds {
        let Some(action) = handler.get(*kind).filter(|a| !a.is_null()) else {
            continue;
        };
        let at = format!("{path}.{kind}");
        if handlers > 0 {
            causes.push(Cause::forbidden(
                &at,
                "may not specify more than 1 handler type",
            ));
            continue;
        }
        handlers += 1;
        match *kind {
            "exec" => {
                let command = action.get("command").and_then(Value::as_array);
                if command.is_none_or(Vec::is_empty) {
                    causes.push(Cause::required(&format!("{at}.command"), ""));
                }
            }
            "httpGet" => http_get(action, &at, causes),
            _ => port_number_or_name(action.get("port"), &format!("{at}.port"), causes),
        }
    }
    if handlers == 0 {
        causes.push(Cause::required(path, "must specify a handler type"));
    }
}

/// An `httpGet` action (`validateHTTPGetAction`).
fn http_get(action: &Value, at: &str, causes: &mut Vec<Cause>) {
    if action
        .get("path")
        .and_then(Value::as_str)
        .is_none_or(str::is_empty)
    {
        causes.push(Cause::required(&format!("{at}.path"), ""));
    }
    port_number_or_name(action.get("port"), &format!("{at}.port"), causes);
    let scheme = action.get("scheme").and_then(Value::as_str).unwrap_or("");
    if scheme != "HTTP" && scheme != "HTTPS" {
        causes.push(Cause::not_supported(
            &format!("{at}.scheme"),
            scheme,
            &["HTTP", "HTTPS"],
        ));
    }
    let headers = action.get("httpHeaders").and_then(Value::as_array);
    for header in headers.into_iter().flatten() {
        let name = header.get("name").and_then(Value::as_str).unwrap_or("");
        for problem in names::http_header_name(name) {
            causes.push(names::invalid(&format!("{at}.httpHeaders"), name, problem));
        }
    }
}

/// A port by number or by name (`ValidatePortNumOrName`); an absent one
/// is the number 0.
fn port_number_or_name(port: Option<&Value>, at: &str, causes: &mut Vec<Cause>) {
    match port {
        Some(Value::String(name)) => {
            for problem in port_name_problems(name) {
                causes.push(names::invalid(at, name, problem.into()));
            }
        }
        other => port_number(other.and_then(Value::as_i64).unwrap_or(0), at, causes),
    }
}
