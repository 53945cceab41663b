//! Events, as `pkg/apis/core/validation/events.go` checks them, on the
//! core Event both APIs store (so with the core fields' names, as the
//! server reports them): the legacy rules every Event meets on every
//! write, through either API (`legacyValidateEvent`), and the strict
//! rules of a create through events.k8s.io (`ValidateEventCreate`); what
//! such an update may not change is `immutable`'s.

use serde_json::Value;

use super::{Cause, invalid_unnamed, names, text};

const REPORTING_INSTANCE_LIMIT: usize = 128;
const ACTION_LIMIT: usize = 128;
const REASON_LIMIT: usize = 128;
const NOTE_LIMIT: usize = 1024;

/// Whether the MicroTime or Time at `pointer` is set.
fn set(event: &Value, pointer: &str) -> bool {
    event.pointer(pointer).is_some_and(|t| !t.is_null())
}

/// The rules of every write of an Event; `events_api` when written
/// through events.k8s.io, which names the reporting controller so.
pub(super) fn legacy(event: &Value, events_api: bool, causes: &mut Vec<Cause>) {
    let namespace = text(event, "/metadata/namespace");
    let involved = text(event, "/involvedObject/namespace");
    let mismatch = || {
        names::invalid(
            "involvedObject.namespace",
            involved,
            "does not match event.namespace".to_string(),
        )
    };
    if !set(event, "/eventTime") {
        // An old-style Event: its namespace is its object's.
        let agrees = match involved {
            "" => namespace.is_empty() || namespace == "default",
            involved => namespace == involved,
        };
        if !agrees {
            causes.push(mismatch());
        }
    } else {
        if involved.is_empty() && namespace != "default" && namespace != "kube-system" {
            causes.push(mismatch());
        }
        let controller_field = if events_api {
            "reportingController"
        } else {
            "reportingComponent"
        };
        let controller = text(event, "/reportingComponent");
        if controller.is_empty() {
            causes.push(Cause::required(controller_field, ""));
        }
        for problem in names::qualified_name(controller) {
            causes.push(names::invalid(controller_field, controller, problem));
        }
        for (field, limit) in [
            ("reportingInstance", REPORTING_INSTANCE_LIMIT),
            ("action", ACTION_LIMIT),
            ("reason", REASON_LIMIT),
        ] {
            let value = text(event, &format!("/{field}"));
            if value.is_empty() {
                causes.push(Cause::required(field, ""));
            }
            if value.len() > limit {
                causes.push(invalid_unnamed(
                    field,
                    &format!("can have at most {limit} characters"),
                ));
            }
        }
        if text(event, "/message").len() > NOTE_LIMIT {
            causes.push(invalid_unnamed(
                "message",
                &format!("can have at most {NOTE_LIMIT} characters"),
            ));
        }
    }
    for problem in names::dns1123_subdomain(namespace) {
        causes.push(names::invalid("namespace", namespace, problem));
    }
}

/// An Event's series, if it has one: a count of at least two and a last
/// observed time (`validateV1EventSeries`).
pub(super) fn series(event: &Value, causes: &mut Vec<Cause>) {
    if let Some(series) = event.get("series").filter(|s| s.is_object()) {
        if series.get("count").and_then(Value::as_i64).unwrap_or(0) < 2 {
            causes.push(invalid_unnamed("series.count", "should be at least 2"));
        }
        if !set(series, "/lastObservedTime") {
            causes.push(Cause::required("series.lastObservedTime", ""));
        }
    }
}

/// The further rules of a create through events.k8s.io: a series of at
/// least two, an `eventTime`, a type of `Normal` or `Warning`, and none
/// of the deprecated core fields.
pub(super) fn strict_create(event: &Value, causes: &mut Vec<Cause>) {
    series(event, causes);
    if !set(event, "/eventTime") {
        causes.push(Cause::required("eventTime", ""));
    }
    let kind = text(event, "/type");
    if kind != "Normal" && kind != "Warning" {
        causes.push(invalid_unnamed(
            "type",
            &format!("has invalid value: {kind}"),
        ));
    }
    for field in ["firstTimestamp", "lastTimestamp"] {
        if set(event, &format!("/{field}")) {
            causes.push(invalid_unnamed(field, "needs to be unset"));
        }
    }
    if event.get("count").and_then(Value::as_i64).unwrap_or(0) != 0 {
        causes.push(invalid_unnamed("count", "needs to be unset"));
    }
    if !text(event, "/source/component").is_empty() || !text(event, "/source/host").is_empty() {
        causes.push(invalid_unnamed("source", "needs to be unset"));
    }
}
