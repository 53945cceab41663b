//! A container's probes and lifecycle hooks, as `validateProbe`,
//! `validateHandler` and `validateLifecycle` word them: exactly one handler
//! (`exec` with a command, `httpGet` with a path, port and scheme,
//! `tcpSocket` or `grpc` with a port, a hook's `sleep` within the grace
//! period), non-negative timings, a success threshold of 1 for liveness
//! and startup probes, no grace period for a readiness probe; and none of
//! them on an init container that does not restart.

use serde_json::Value;

use super::{Cause, names, port_name_problems, port_number};

/// The lifecycle hooks and probes of the container at `at`, in the order
/// `validateContainers` checks them (`validateLifecycle`, then
/// `validateLivenessProbe`, `validateReadinessProbe` and
/// `validateStartupProbe`, each a probe's own rules and then its kind's).
/// `grace` is the pod's termination grace period, which bounds a hook's
/// sleep.
pub(super) fn lifecycle_and_probes(
    container: &Value,
    at: &str,
    grace: i64,
    causes: &mut Vec<Cause>,
) {
    if let Some(lifecycle) = container.get("lifecycle").filter(|l| l.is_object()) {
        for hook in ["postStart", "preStop"] {
            if let Some(hook_handler) = lifecycle.get(hook).filter(|h| !h.is_null()) {
                let at = format!("{at}.lifecycle.{hook}");
                handler(hook_handler, &at, &HOOK_HANDLERS, grace, causes);
            }
        }
    }
    let probe = |name: &str| container.get(name).filter(|p| p.is_object());
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(found) = probe(name) else {
            continue;
        };
        let at = format!("{at}.{name}");
        self::probe(found, &at, causes);
        if name == "readinessProbe" {
            if let Some(grace) = found
                .get("terminationGracePeriodSeconds")
                .and_then(Value::as_i64)
            {
                causes.push(Cause::invalid_number(
                    &format!("{at}.terminationGracePeriodSeconds"),
                    grace,
                    "must not be set for readinessProbes",
                ));
            }
        } else if let Some(threshold) = found
            .get("successThreshold")
            .and_then(Value::as_i64)
            .filter(|t| *t != 1)
        {
            causes.push(Cause::invalid_number(
                &format!("{at}.successThreshold"),
                threshold,
                "must be 1",
            ));
        }
    }
}

/// An init container that does not restart (a sidecar's
/// `restartPolicy: Always` is absent) may have no hooks and no probes.
pub(super) fn forbid_lifecycle_and_probes(container: &Value, at: &str, causes: &mut Vec<Cause>) {
    for field in [
        "lifecycle",
        "livenessProbe",
        "readinessProbe",
        "startupProbe",
    ] {
        if container.get(field).is_some_and(|v| !v.is_null()) {
            causes.push(Cause::forbidden(
                &format!("{at}.{field}"),
                "may not be set for init containers without restartPolicy=Always",
            ));
        }
    }
}

/// The handlers a probe may have, in the order `validateHandler` takes
/// them.
const PROBE_HANDLERS: [&str; 4] = ["exec", "httpGet", "tcpSocket", "grpc"];
/// The handlers a lifecycle hook may have.
const HOOK_HANDLERS: [&str; 4] = ["exec", "httpGet", "tcpSocket", "sleep"];

/// One probe at `path`: its handler and timings.
fn probe(probe: &Value, path: &str, causes: &mut Vec<Cause>) {
    // A probe has no sleep, so no grace period bounds it.
    handler(probe, path, &PROBE_HANDLERS, 0, causes);
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

/// A probe's or hook's handler at `path`: exactly one of `kinds`, each
/// checked as `validateHandler` checks it; a hook's sleep lasts from 0 to
/// the pod's grace period (v1.33 allows a zero sleep).
fn handler(handler: &Value, path: &str, kinds: &[&str], grace: i64, causes: &mut Vec<Cause>) {
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
            "sleep" => {
                let seconds = action.get("seconds").and_then(Value::as_i64).unwrap_or(0);
                if !(0..=grace).contains(&seconds) {
                    causes.push(Cause::invalid_number(
                        &at,
                        seconds,
                        &format!(
                            "must be non-negative and less than terminationGracePeriodSeconds ({grace})"
                        ),
                    ));
                }
            }
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
