//! The single fields of a Pod spec that `ValidatePodSpec` checks after its
//! lists: readiness gates' condition types (qualified names), the names it
//! gives the Pod and refers to (service account, node, priority class and
//! runtime class: subdomains; host name and subdomain: labels), its active
//! deadline (1 to 2147483647 seconds), its preemption policy and its OS
//! (and no field of the other OS); and what only a Pod's create must meet.
//!
//! On a real server a Pod's service account, priority class and runtime
//! class first meet the ServiceAccount, Priority and RuntimeClass admission
//! plugins, which refuse one that does not exist with a 403 (and Priority
//! sets the preemption policy); the dev server runs no admission, so a Pod
//! meets these rules as a pod template does.

use serde_json::Value;

use super::{Cause, items, names, one_of, security_context, text};

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

/// A Pod spec's Windows host process containers and host user namespace
/// (`security_context::host_process_and_users`), then its service
/// account, node, deadline, host name and subdomain, under `path`, in
/// `ValidatePodSpec`'s order.
pub(super) fn identity(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    security_context::host_process_and_users(spec, path, causes);
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
    if let Some(policy) = spec.get("preemptionPolicy").and_then(Value::as_str) {
        one_of(
            policy,
            &format!("{path}.preemptionPolicy"),
            &["PreemptLowerPriority", "Never"],
            Some(""),
            causes,
        );
    }
}

/// A Pod spec's OS, under `path`, last of `ValidatePodSpec`: `linux` or
/// `windows` (`validateOS`), and then none of the other OS's fields
/// (`validateLinux`, `validateWindows`), the Pod's and each container's.
pub(super) fn os(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(os) = spec.get("os").filter(|o| o.is_object()) else {
        return;
    };
    let forbid = |causes: &mut Vec<Cause>, field: String, detail: &str| {
        causes.push(Cause::forbidden(&field, detail));
    };
    let context = spec.get("securityContext").filter(|c| c.is_object());
    let set = |object: Option<&Value>, field: &str| {
        object
            .and_then(|o| o.get(field))
            .is_some_and(|v| !v.is_null())
    };
    match text(os, "/name") {
        "" => causes.push(Cause::required(
            &format!("{path}.os.name"),
            "cannot be empty",
        )),
        "linux" => {
            let linux = "windows options cannot be set for a linux pod";
            if set(context, "windowsOptions") {
                forbid(
                    causes,
                    format!("{path}.securityContext.windowsOptions"),
                    linux,
                );
            }
            for (at, container) in containers(spec, path) {
                if set(container.get("securityContext"), "windowsOptions") {
                    forbid(
                        causes,
                        format!("{at}.securityContext.windowsOptions"),
                        linux,
                    );
                }
            }
        }
        "windows" => {
            let windows = "cannot be set for a windows pod";
            let on = |field: &str| spec.get(field).and_then(Value::as_bool) == Some(true);
            for (field, present) in [
                (
                    "securityContext.appArmorProfile",
                    set(context, "appArmorProfile"),
                ),
                (
                    "securityContext.seLinuxOptions",
                    set(context, "seLinuxOptions"),
                ),
                ("hostUsers", set(Some(spec), "hostUsers")),
                ("hostPID", on("hostPID")),
                ("hostIPC", on("hostIPC")),
                (
                    "securityContext.seccompProfile",
                    set(context, "seccompProfile"),
                ),
                ("securityContext.fsGroup", set(context, "fsGroup")),
                (
                    "securityContext.fsGroupChangePolicy",
                    set(context, "fsGroupChangePolicy"),
                ),
                (
                    "securityContext.sysctls",
                    !items(context.and_then(|c| c.get("sysctls"))).is_empty(),
                ),
                (
                    "shareProcessNamespace",
                    set(Some(spec), "shareProcessNamespace"),
                ),
                ("securityContext.runAsUser", set(context, "runAsUser")),
                ("securityContext.runAsGroup", set(context, "runAsGroup")),
                (
                    "securityContext.supplementalGroups",
                    set(context, "supplementalGroups"),
                ),
                (
                    "securityContext.supplementalGroupsPolicy",
                    set(context, "supplementalGroupsPolicy"),
                ),
                (
                    "securityContext.seLinuxChangePolicy",
                    set(context, "seLinuxChangePolicy"),
                ),
            ] {
                if present {
                    forbid(causes, format!("{path}.{field}"), windows);
                }
            }
            for (at, container) in containers(spec, path) {
                let context = container.get("securityContext").filter(|c| c.is_object());
                for field in [
                    "appArmorProfile",
                    "seLinuxOptions",
                    "seccompProfile",
                    "capabilities",
                    "readOnlyRootFilesystem",
                    "privileged",
                    "allowPrivilegeEscalation",
                    "procMount",
                    "runAsUser",
                    "runAsGroup",
                ] {
                    if set(context, field) {
                        forbid(causes, format!("{at}.securityContext.{field}"), windows);
                    }
                }
            }
        }
        other => causes.push(Cause::not_supported(
            &format!("{path}.os"),
            other,
            &["linux", "windows"],
        )),
    }
}

/// A Pod spec's init, regular and ephemeral containers with their paths,
/// in the order `VisitContainersWithPath` visits them.
pub(super) fn containers<'v>(spec: &'v Value, path: &str) -> Vec<(String, &'v Value)> {
    ["initContainers", "containers", "ephemeralContainers"]
        .iter()
        .flat_map(|list| {
            items(spec.get(*list))
                .iter()
                .enumerate()
                .map(move |(i, c)| (format!("{path}.{list}[{i}]"), c))
        })
        .collect()
}

/// What only a Pod's create must meet (`ValidatePodCreate`): no ephemeral
/// containers, and no node while scheduling gates remain.
pub(super) fn pod_create(spec: &Value, causes: &mut Vec<Cause>) {
    if !items(spec.get("ephemeralContainers")).is_empty() {
        causes.push(Cause::forbidden(
            "spec.ephemeralContainers",
            "cannot be set on create",
        ));
    }
    if !text(spec, "/nodeName").is_empty() && !items(spec.get("schedulingGates")).is_empty() {
        causes.push(Cause::forbidden(
            "spec.nodeName",
            "cannot be set until all schedulingGates have been cleared",
        ));
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
    use super::super::tests::spec_messages as messages;
    use super::*;
    use serde_json::json;

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

    #[test]
    fn the_os_is_linux_or_windows_and_forbids_the_other_oss_fields() {
        assert_eq!(
            messages(os, json!({"os": {"name": "plan9"}})),
            ["spec.os: Unsupported value: \"plan9\": supported values: \"linux\", \"windows\""]
        );
        assert_eq!(
            messages(os, json!({"os": {}})),
            ["spec.os.name: Required value: cannot be empty"]
        );
        let linux = json!({"os": {"name": "linux"},
            "securityContext": {"windowsOptions": {"runAsUserName": "u"}},
            "initContainers": [{"securityContext": {"windowsOptions": {}}}],
            "containers": [{"securityContext": {"runAsUser": 1}}]});
        assert_eq!(
            messages(os, linux),
            [
                "spec.securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
                "spec.initContainers[0].securityContext.windowsOptions: Forbidden: windows options cannot be set for a linux pod",
            ]
        );
        let windows = json!({"os": {"name": "windows"}, "hostPID": true, "hostIPC": false,
            "securityContext": {"runAsUser": 1, "sysctls": []},
            "containers": [{"securityContext": {"privileged": false, "windowsOptions": {}}}]});
        assert_eq!(
            messages(os, windows),
            [
                "spec.hostPID: Forbidden: cannot be set for a windows pod",
                "spec.securityContext.runAsUser: Forbidden: cannot be set for a windows pod",
                "spec.containers[0].securityContext.privileged: Forbidden: cannot be set for a windows pod",
            ]
        );
    }

    #[test]
    fn a_pods_create_has_no_ephemeral_containers_and_no_node_while_gated() {
        let mut causes = Vec::new();
        pod_create(
            &json!({"nodeName": "n1", "schedulingGates": [{"name": "g"}],
                "ephemeralContainers": [{"name": "debug", "image": "busybox"}]}),
            &mut causes,
        );
        let found: Vec<String> = causes.iter().map(Cause::message).collect();
        assert_eq!(
            found,
            [
                "spec.ephemeralContainers: Forbidden: cannot be set on create",
                "spec.nodeName: Forbidden: cannot be set until all schedulingGates have been cleared",
            ]
        );
        let mut causes = Vec::new();
        pod_create(&json!({"nodeName": "n1"}), &mut causes);
        assert!(causes.is_empty());
    }
}
