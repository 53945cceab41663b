//! The single fields of a Pod spec that `ValidatePodSpec` checks after its
//! lists: readiness gates' condition types (qualified names), the names it
//! gives the Pod and refers to (service account, node, priority class and
//! runtime class: subdomains; host name and subdomain: labels), its active
//! deadline (1 to 2147483647 seconds) and its preemption policy.

use serde_json::Value;

use super::{Cause, items, names, text};

/// A Pod spec's readiness gates, under `path`.
pub(super) fn readiness_gates(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, gate) in items(spec.get("readinessGates")).iter().enumerate() {
        let condition = text(gate, "/conditionType");
        for problem in names::qualified_name(condition) {
            causes.push(names::invalid(
                &format!("{path}.readinessGates[{i}].conditionType"),
                condition,
                problem,
            ));
        }
    }
}

/// A Pod spec's service account, node, deadline, host name and subdomain,
/// under `path`, in `ValidatePodSpec`'s order.
pub(super) fn identity(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    name(
        spec,
        "serviceAccountName",
        path,
        names::dns1123_subdomain,
        causes,
    );
    name(spec, "nodeName", path, names::dns1123_subdomain, causes);
    if let Some(deadline) = spec.get("activeDeadlineSeconds").and_then(Value::as_i64)
        && !(1..=i64::from(i32::MAX)).contains(&deadline)
    {
        causes.push(Cause::invalid_number(
            &format!("{path}.activeDeadlineSeconds"),
            deadline,
            "must be between 1 and 2147483647, inclusive",
        ));
    }
    name(spec, "hostname", path, names::dns1123_label, causes);
    name(spec, "subdomain", path, names::dns1123_label, causes);
}

/// A Pod spec's priority class, runtime class and preemption policy,
/// under `path`.
pub(super) fn scheduling_classes(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    name(
        spec,
        "priorityClassName",
        path,
        names::dns1123_subdomain,
        causes,
    );
    // A runtime class given as "" is checked; an empty priority class is
    // none.
    if let Some(class) = spec.get("runtimeClassName").and_then(Value::as_str) {
        for problem in names::dns1123_subdomain(class) {
            causes.push(names::invalid(
                &format!("{path}.runtimeClassName"),
                class,
                problem,
            ));
        }
    }
    match spec.get("preemptionPolicy").and_then(Value::as_str) {
        None | Some("PreemptLowerPriority" | "Never") => {}
        Some("") => causes.push(Cause::required(&format!("{path}.preemptionPolicy"), "")),
        Some(other) => causes.push(Cause::not_supported(
            &format!("{path}.preemptionPolicy"),
            other,
            &["PreemptLowerPriority", "Never"],
        )),
    }
}

/// The string `field` of `spec`, when not empty, against `rule`.
fn name(
    spec: &Value,
    field: &str,
    path: &str,
    rule: fn(&str) -> Vec<String>,
    causes: &mut Vec<Cause>,
) {
    let value = text(spec, &format!("/{field}"));
    if value.is_empty() {
        return;
    }
    for problem in rule(value) {
        causes.push(names::invalid(&format!("{path}.{field}"), value, problem));
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn messages(check: fn(&Value, &str, &mut Vec<Cause>), spec: Value) -> Vec<String> {
        let mut causes = Vec::new();
        check(&spec, "spec", &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    const SUBDOMAIN: &str = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
    const LABEL: &str = "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')";

    #[test]
    fn names_and_the_deadline_are_checked_in_order() {
        let spec = json!({"serviceAccountName": "Robot", "nodeName": "node_1",
            "activeDeadlineSeconds": 0, "hostname": "Web", "subdomain": "ok"});
        assert_eq!(
            messages(identity, spec),
            [
                format!("spec.serviceAccountName: Invalid value: \"Robot\": {SUBDOMAIN}"),
                format!("spec.nodeName: Invalid value: \"node_1\": {SUBDOMAIN}"),
                "spec.activeDeadlineSeconds: Invalid value: 0: must be between 1 and 2147483647, inclusive".to_string(),
                format!("spec.hostname: Invalid value: \"Web\": {LABEL}"),
            ]
        );
        assert!(messages(identity, json!({"activeDeadlineSeconds": 2147483647})).is_empty());
    }

    #[test]
    fn readiness_gates_are_qualified_names() {
        let found = messages(
            readiness_gates,
            json!({"readinessGates": [{"conditionType": "example.com/ready"}, {"conditionType": "not ready"}]}),
        );
        assert_eq!(found.len(), 1);
        assert!(
            found[0].starts_with(
                "spec.readinessGates[1].conditionType: Invalid value: \"not ready\": name part must consist of alphanumeric characters"
            ),
            "{}",
            found[0]
        );
    }

    #[test]
    fn classes_and_the_preemption_policy_are_checked() {
        let spec = json!({"priorityClassName": "High", "runtimeClassName": "",
            "preemptionPolicy": "Sometimes"});
        assert_eq!(
            messages(scheduling_classes, spec),
            [
                format!("spec.priorityClassName: Invalid value: \"High\": {SUBDOMAIN}"),
                format!("spec.runtimeClassName: Invalid value: \"\": {SUBDOMAIN}"),
                "spec.preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\"".to_string(),
            ]
        );
        assert_eq!(
            messages(scheduling_classes, json!({"preemptionPolicy": ""})),
            ["spec.preemptionPolicy: Required value"]
        );
        assert!(
            messages(
                scheduling_classes,
                json!({"preemptionPolicy": "Never", "runtimeClassName": "gvisor"})
            )
            .is_empty()
        );
    }
}
