//! Security contexts, as `pkg/apis/core/validation` checks them: user and
//! group ids within 0..=2147483647 on the Pod's (`fsGroup`, `runAsUser`,
//! `runAsGroup`, `supplementalGroups`) and each container's (`runAsUser`,
//! `runAsGroup`), and a shared process namespace not with the host's
//! (both set at the spec in v1, and reported under `securityContext`,
//! where the internal type keeps them).

use serde_json::Value;

use super::{Cause, items};

/// `IsValidUserID` and `IsValidGroupID`: the range of a Linux id.
const MAX_ID: i64 = 2_147_483_647;

fn id(value: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    if let Some(id) = value.and_then(Value::as_i64)
        && !(0..=MAX_ID).contains(&id)
    {
        causes.push(Cause::invalid_number(
            path,
            id,
            &format!("must be between 0 and {MAX_ID}, inclusive"),
        ));
    }
}

/// A Pod spec's security context, under `path`
/// (`validatePodSpecSecurityContext`).
pub(super) fn pod(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let at = format!("{path}.securityContext");
    if let Some(context) = spec.get("securityContext").filter(|c| c.is_object()) {
        for field in ["fsGroup", "runAsUser", "runAsGroup"] {
            id(context.get(field), &format!("{at}.{field}"), causes);
        }
        for (i, group) in items(context.get("supplementalGroups")).iter().enumerate() {
            id(
                Some(group),
                &format!("{at}.supplementalGroups[{i}]"),
                causes,
            );
        }
    }
    let set = |field: &str| spec.get(field).and_then(Value::as_bool) == Some(true);
    if set("hostPID") && set("shareProcessNamespace") {
        causes.push(Cause::new(
            &format!("{at}.shareProcessNamespace"),
            "FieldValueInvalid",
            "Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled".into(),
        ));
    }
}

/// A container's security context, under `path` (its ids, as
/// `ValidateSecurityContext` checks them).
pub(super) fn container(container: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(context) = container.get("securityContext").filter(|c| c.is_object()) else {
        return;
    };
    for field in ["runAsUser", "runAsGroup"] {
        id(
            context.get(field),
            &format!("{path}.securityContext.{field}"),
            causes,
        );
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn ids_are_linux_ids_and_the_host_pid_namespace_is_not_shared() {
        let spec = json!({
            "hostPID": true,
            "shareProcessNamespace": true,
            "securityContext": {"runAsUser": -1, "fsGroup": 2147483648_i64, "supplementalGroups": [5, -2]},
            "containers": [{"securityContext": {"runAsGroup": -3}}],
        });
        let mut causes = Vec::new();
        pod(&spec, "spec", &mut causes);
        container(&spec["containers"][0], "spec.containers[0]", &mut causes);
        let messages: Vec<String> = causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.body))
            .collect();
        let range = "must be between 0 and 2147483647, inclusive";
        assert_eq!(
            messages,
            [
                format!("spec.securityContext.fsGroup: Invalid value: 2147483648: {range}"),
                format!("spec.securityContext.runAsUser: Invalid value: -1: {range}"),
                format!("spec.securityContext.supplementalGroups[1]: Invalid value: -2: {range}"),
                "spec.securityContext.shareProcessNamespace: Invalid value: true: ShareProcessNamespace and HostPID cannot both be enabled".to_string(),
                format!("spec.containers[0].securityContext.runAsGroup: Invalid value: -3: {range}"),
            ]
        );
    }
}
