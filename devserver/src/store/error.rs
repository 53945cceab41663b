//! API errors and their metav1 `Status` form.

use serde_json::{Value, json};

use super::ResourceType;
use super::schema::Cause;

/// An error as the API server reports it: HTTP code, machine reason and a
/// message, with optional `details` (name, group, kind, causes).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("{code} {reason}: {message}")]
pub struct ApiError {
    /// The HTTP status code, also the `Status`'s `code`.
    pub code: u16,
    /// The machine-readable reason, e.g. `NotFound`.
    pub reason: String,
    /// The human-readable message.
    pub message: String,
    /// The `Status`'s `details`, as sent.
    pub details: Option<Value>,
}

fn qualified(rt: &ResourceType) -> String {
    if rt.group.is_empty() {
        rt.plural.clone()
    } else {
        format!("{}.{}", rt.plural, rt.group)
    }
}

fn details(rt: &ResourceType, name: &str) -> Value {
    let mut d = json!({"name": name, "kind": rt.plural});
    if !rt.group.is_empty() {
        d["group"] = json!(rt.group);
    }
    d
}

impl ApiError {
    /// An error without details.
    pub fn new(code: u16, reason: &str, message: impl Into<String>) -> Self {
        Self {
            code,
            reason: reason.into(),
            message: message.into(),
            details: None,
        }
    }

    /// 422 of an operation of a JSON patch that cannot apply (a failed
    /// `test`, a missing path), as the patch handler builds it with
    /// `NewGenericServerResponse`: a fixed message, empty details.
    pub fn json_patch_failed() -> Self {
        Self::new(
            422,
            "Invalid",
            "the server rejected our request due to an error in our request",
        )
        .with_details(json!({}))
    }

    fn with_details(mut self, d: Value) -> Self {
        self.details = Some(d);
        self
    }

    /// 409 Conflict of a server-side apply that would change fields other
    /// managers own: each field a `FieldManagerConflict` cause.
    pub fn apply_conflict(message: String, causes: Vec<Value>) -> Self {
        Self::new(409, "Conflict", message).with_details(json!({ "causes": causes }))
    }

    /// 404 `<plural> "<name>" not found`.
    pub fn not_found(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            404,
            "NotFound",
            format!("{} \"{name}\" not found", qualified(rt)),
        )
        .with_details(details(rt, name))
    }

    /// 404 for a type the server does not serve.
    pub fn resource_not_served() -> Self {
        Self::new(
            404,
            "NotFound",
            "the server could not find the requested resource",
        )
    }

    /// 409 `<plural> "<name>" already exists`.
    pub fn already_exists(rt: &ResourceType, name: &str) -> Self {
        Self::new(
            409,
            "AlreadyExists",
            format!("{} \"{name}\" already exists", qualified(rt)),
        )
        .with_details(details(rt, name))
    }

    /// 409 Conflict with the real optimistic-concurrency message.
    pub fn conflict(rt: &ResourceType, name: &str) -> Self {
        Self::conflict_message(
            rt,
            name,
            "the object has been modified; please apply your changes to the latest version and try again",
        )
    }

    /// 409 Conflict: `Operation cannot be fulfilled on <plural> "<name>": <why>`.
    pub fn conflict_message(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            409,
            "Conflict",
            format!(
                "Operation cannot be fulfilled on {} \"{name}\": {why}",
                qualified(rt)
            ),
        )
        .with_details(details(rt, name))
    }

    /// 422 Invalid: `<Kind> "<name>" is invalid: <why>`.
    pub fn invalid(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            422,
            "Invalid",
            format!("{} \"{name}\" is invalid: {why}", rt.kind),
        )
        .with_details(details(rt, name))
    }

    /// 422 Invalid with a cause per violation, as `errors.NewInvalid`
    /// builds it: `<Kind>.<group> "<name>" is invalid: <cause>` (several
    /// causes in brackets), the causes in `details`.
    pub fn invalid_causes(rt: &ResourceType, name: &str, causes: &[Cause]) -> Self {
        Self::invalid_of(rt, &rt.kind, name, causes)
    }

    /// 422 for a PUT without `metadata.resourceVersion` where the kind's
    /// strategy takes no unconditional update. The generic registry names
    /// the resource where the kind would be
    /// (`leases.coordination.k8s.io "l" is invalid: ...`).
    pub fn resource_version_required(rt: &ResourceType, name: &str) -> Self {
        let cause = Cause {
            field: "metadata.resourceVersion".into(),
            reason: "FieldValueInvalid",
            body: "Invalid value: 0x0: must be specified for an update".into(),
        };
        Self::invalid_of(rt, &rt.plural, name, &[cause])
    }

    /// `errors.NewInvalid` for `kind` (the kind, or the resource) in
    /// `rt`'s group.
    fn invalid_of(rt: &ResourceType, kind: &str, name: &str, causes: &[Cause]) -> Self {
        let qualified_kind = if rt.group.is_empty() {
            kind.to_string()
        } else {
            format!("{kind}.{}", rt.group)
        };
        let messages: Vec<String> = causes.iter().map(Cause::message).collect();
        let why = match messages.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let mut details = json!({
            "name": name,
            "kind": kind,
            "causes": causes.iter().map(|c| json!({
                "reason": c.reason, "message": c.body, "field": c.field,
            })).collect::<Vec<_>>(),
        });
        if !rt.group.is_empty() {
            details["group"] = json!(rt.group);
        }
        Self::new(
            422,
            "Invalid",
            format!("{qualified_kind} \"{name}\" is invalid: {why}"),
        )
        .with_details(details)
    }

    /// 422 for request options (`ListOptions`, ...) of `meta.k8s.io`, as
    /// `errors.NewInvalid(GroupKind{meta.k8s.io, kind}, "", errs)`: the
    /// message `<kind>.meta.k8s.io "" is invalid: <cause>` (several causes
    /// in brackets), the causes in `details`.
    pub fn invalid_options(kind: &str, causes: &[Cause]) -> Self {
        let messages: Vec<String> = causes.iter().map(Cause::message).collect();
        let why = match messages.as_slice() {
            [one] => one.clone(),
            many => format!("[{}]", many.join(", ")),
        };
        let causes: Vec<Value> = causes
            .iter()
            .map(|c| json!({"reason": c.reason, "message": c.body, "field": c.field}))
            .collect();
        Self::new(
            422,
            "Invalid",
            format!("{kind}.meta.k8s.io \"\" is invalid: {why}"),
        )
        .with_details(json!({"group": "meta.k8s.io", "kind": kind, "causes": causes}))
    }

    /// 400 BadRequest.
    pub fn bad_request(message: impl Into<String>) -> Self {
        Self::new(400, "BadRequest", message)
    }

    /// 410 Expired (Gone).
    pub fn expired(message: impl Into<String>) -> Self {
        Self::new(410, "Expired", message)
    }

    /// 504 Timeout with cause `ResourceVersionTooLarge`.
    pub fn too_large_resource_version(requested: u64, current: u64) -> Self {
        Self::new(
            504,
            "Timeout",
            format!(
                "Too large resource version: {requested}, current: {current}"
            ),
        )
        .with_details(json!({
            "causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
            "retryAfterSeconds": 1
        }))
    }

    /// 405 MethodNotAllowed.
    pub fn method_not_allowed(message: impl Into<String>) -> Self {
        Self::new(405, "MethodNotAllowed", message)
    }

    /// 403 Forbidden: `<plural> "<name>" is forbidden: <why>`.
    pub fn forbidden(rt: &ResourceType, name: &str, why: &str) -> Self {
        Self::new(
            403,
            "Forbidden",
            format!("{} \"{name}\" is forbidden: {why}", qualified(rt)),
        )
        .with_details(details(rt, name))
    }

    /// 429 TooManyRequests with `retryAfterSeconds` (for fault injection;
    /// send `Retry-After` too).
    pub fn too_many_requests(retry_after_seconds: u64) -> Self {
        Self::new(
            429,
            "TooManyRequests",
            "Too many requests, please try again later.",
        )
        .with_details(json!({"retryAfterSeconds": retry_after_seconds}))
    }

    /// 500 InternalError (for fault injection).
    pub fn internal(message: &str) -> Self {
        Self::new(
            500,
            "InternalError",
            format!("Internal error occurred: {message}"),
        )
        .with_details(json!({"causes": [{"message": message}]}))
    }

    /// 503 ServiceUnavailable: the server cannot serve now.
    pub fn service_unavailable(message: &str) -> Self {
        Self::new(503, "ServiceUnavailable", message.to_string())
    }

    /// 401 Unauthorized.
    pub fn unauthorized() -> Self {
        Self::new(401, "Unauthorized", "Unauthorized")
    }

    /// The metav1 `Status` object the HTTP layer sends with `code`.
    pub fn to_status(&self) -> Value {
        let mut s = json!({
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason,
            "code": self.code,
        });
        if let Some(d) = &self.details {
            s["details"] = d.clone();
        }
        s
    }
}
