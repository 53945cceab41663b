//! Security contexts, as `pkg/apis/core/validation` checks them: user and
//! group ids within 0..=2147483647 on the Pod's (`fsGroup`, `runAsUser`,
//! `runAsGroup`, `supplementalGroups`) and each container's (`runAsUser`,
//! `runAsGroup`), a shared process namespace not with the host's (both set
//! at the spec in v1, and reported under `securityContext`, where the
//! internal type keeps them), the Pod's sysctls (valid names, each once,
//! none of a namespace shared with the host), file system group change,
//! supplemental groups and SELinux change policies (`Recursive` alone, the
//! SELinuxMount gate being off in v1.33), and seccomp and AppArmor
//! profiles, the Pod's and each container's.
//!
//! Not checked: `privileged` (a cluster's `--allow-privileged`),
//! `allowPrivilegeEscalation` beside privilege or `CAP_SYS_ADMIN`, proc
//! mounts and Windows options.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::volume_source::local_descending_path;
use super::{Cause, items, names, one_of, text};

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
    let Some(context) = spec.get("securityContext").filter(|c| c.is_object()) else {
        return;
    };
    sysctls(spec, context, &format!("{at}.sysctls"), causes);
    policy(
        context,
        "fsGroupChangePolicy",
        &at,
        &["Always", "OnRootMismatch"],
        causes,
    );
    seccomp_profile(context, &at, causes);
    app_armor_profile(context, &at, causes);
    policy(
        context,
        "supplementalGroupsPolicy",
        &at,
        &["Merge", "Strict"],
        causes,
    );
    // v1.33 leaves the SELinuxMount gate off, so only `Recursive` is
    // allowed (`useOnlyRecursiveSELinuxChangePolicy`).
    policy(context, "seLinuxChangePolicy", &at, &["Recursive"], causes);
}

/// The types of a seccomp or AppArmor profile.
const PROFILE_TYPES: [&str; 3] = ["Localhost", "RuntimeDefault", "Unconfined"];

/// `field` of `context`, when set, one of `supported` (an empty one is
/// unsupported too).
fn policy(context: &Value, field: &str, at: &str, supported: &[&str], causes: &mut Vec<Cause>) {
    if let Some(value) = context.get(field).and_then(Value::as_str)
        && !supported.contains(&value)
    {
        causes.push(Cause::not_supported(
            &format!("{at}.{field}"),
            value,
            supported,
        ));
    }
}

/// `SysctlContainSlashFmt`, as the message quotes the compiled pattern.
const SYSCTL_NAME: &str = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
static SYSCTL_NAME_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(SYSCTL_NAME).expect("a valid pattern"));

/// The Pod's sysctls at `at` (`validateSysctls`): each named, validly and
/// once, and none of the network or IPC namespace where the Pod shares
/// the host's (`ValidateHostSysctl`).
fn sysctls(spec: &Value, context: &Value, at: &str, causes: &mut Vec<Cause>) {
    let mut seen = Vec::new();
    for (i, sysctl) in items(context.get("sysctls")).iter().enumerate() {
        let field = format!("{at}[{i}].name");
        let name = text(sysctl, "/name");
        if name.is_empty() {
            causes.push(Cause::required(&field, ""));
        } else if name.len() > 253 || !SYSCTL_NAME_RE.is_match(name) {
            causes.push(names::invalid(
                &field,
                name,
                format!("must have at most 253 characters and match regex {SYSCTL_NAME}"),
            ));
        } else if seen.contains(&name) {
            causes.push(Cause::duplicate(&field, name));
        }
        let host = |field: &str| spec.get(field).and_then(Value::as_bool) == Some(true);
        match sysctl_namespace(name) {
            Some(Namespace::Net) if host("hostNetwork") => causes.push(names::invalid(
                &field,
                name,
                "may not be specified when 'hostNetwork' is true".into(),
            )),
            Some(Namespace::Ipc) if host("hostIPC") => causes.push(names::invalid(
                &field,
                name,
                "may not be specified when 'hostIPC' is true".into(),
            )),
            _ => {}
        }
        seen.push(name);
    }
}

/// The kernel namespace a sysctl belongs to.
enum Namespace {
    Net,
    Ipc,
}

/// `sysctl.GetNamespace`: the namespace of a sysctl named with dots, or
/// with slashes where its first separator is one.
fn sysctl_namespace(name: &str) -> Option<Namespace> {
    let name = match name.find(['.', '/']) {
        Some(at) if name[at..].starts_with('/') => name
            .chars()
            .map(|c| match c {
                '/' => '.',
                '.' => '/',
                other => other,
            })
            .collect(),
        _ => name.to_string(),
    };
    if name == "kernel.sem"
        || ["kernel.shm", "kernel.msg", "fs.mqueue."]
            .iter()
            .any(|p| name.starts_with(p))
    {
        Some(Namespace::Ipc)
    } else if name.starts_with("net.") {
        Some(Namespace::Net)
    } else {
        None
    }
}

/// A security context's seccomp profile under `at`
/// (`validateSeccompProfileField`).
fn seccomp_profile(context: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(profile) = context.get("seccompProfile").filter(|p| p.is_object()) else {
        return;
    };
    let at = format!("{at}.seccompProfile");
    let kind = text(profile, "/type");
    one_of(
        kind,
        &format!("{at}.type"),
        &PROFILE_TYPES,
        Some("type is required when seccompProfile is set"),
        causes,
    );
    let local = profile.get("localhostProfile").and_then(Value::as_str);
    match (kind, local) {
        ("Localhost", None) => causes.push(Cause::required(
            &format!("{at}.localhostProfile"),
            "must be set when seccomp type is Localhost",
        )),
        ("Localhost", Some(path)) => {
            local_descending_path(path, &format!("{at}.localhostProfile"), causes)
        }
        // Go shows the profile's pointer there; this shows its value.
        (_, Some(path)) => causes.push(Cause::new(
            &format!("{at}.localhostProfile"),
            "FieldValueInvalid",
            format!(
                "Invalid value: core.SeccompProfile{{Type:{kind:?}, LocalhostProfile:{path:?}}}: can only be set when seccomp type is Localhost"
            ),
        )),
        (_, None) => {}
    }
}

/// A security context's AppArmor profile under `at`
/// (`ValidateAppArmorProfileField`).
fn app_armor_profile(context: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(profile) = context.get("appArmorProfile").filter(|p| p.is_object()) else {
        return;
    };
    let at = format!("{at}.appArmorProfile");
    let local = profile.get("localhostProfile").and_then(Value::as_str);
    let local_at = format!("{at}.localhostProfile");
    match text(profile, "/type") {
        "Localhost" => {
            let required =
                || Cause::required(&local_at, "must be set when AppArmor type is Localhost");
            let Some(path) = local else {
                causes.push(required());
                return;
            };
            if path.trim() != path {
                causes.push(names::invalid(
                    &local_at,
                    path,
                    "must not be padded with whitespace".into(),
                ));
            } else if path.is_empty() {
                causes.push(required());
            }
            // PATH_MAX - 1.
            if path.len() > 4095 {
                causes.push(Cause::too_long(&local_at, 4095));
            }
        }
        "RuntimeDefault" | "Unconfined" => {
            if let Some(path) = local {
                causes.push(names::invalid(
                    &local_at,
                    path,
                    "can only be set when AppArmor type is Localhost".into(),
                ));
            }
        }
        other => one_of(
            other,
            &format!("{at}.type"),
            &PROFILE_TYPES,
            Some("type is required when appArmorProfile is set"),
            causes,
        ),
    }
}

/// A container's security context, under `path` (its ids and profiles,
/// as `ValidateSecurityContext` checks them).
pub(super) fn container(container: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(context) = container.get("securityContext").filter(|c| c.is_object()) else {
        return;
    };
    let at = format!("{path}.securityContext");
    for field in ["runAsUser", "runAsGroup"] {
        id(context.get(field), &format!("{at}.{field}"), causes);
    }
    seccomp_profile(context, &at, causes);
    app_armor_profile(context, &at, causes);
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

    fn messages(spec: Value) -> Vec<String> {
        let mut causes = Vec::new();
        pod(&spec, "spec", &mut causes);
        for (i, c) in items(spec.get("containers")).iter().enumerate() {
            container(c, &format!("spec.containers[{i}]"), &mut causes);
        }
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn sysctls_are_valid_names_once_and_not_of_a_namespace_shared_with_the_host() {
        let spec = json!({"hostNetwork": true, "securityContext": {"sysctls": [
            {"name": "kernel.shm_rmid_forced", "value": "1"},
            {"name": "net.core.somaxconn", "value": "1024"},
            {"name": "net/ipv4/ip_local_port_range", "value": "1 2"},
            {"name": "Kernel.Bad", "value": "1"},
            {"name": "kernel.shm_rmid_forced", "value": "0"},
            {"value": "1"}]}});
        let pattern = "^([a-z0-9]([-_a-z0-9]*[a-z0-9])?[\\./])*[a-z0-9]([-_a-z0-9]*[a-z0-9])?$";
        assert_eq!(
            messages(spec),
            [
                "spec.securityContext.sysctls[1].name: Invalid value: \"net.core.somaxconn\": may not be specified when 'hostNetwork' is true".to_string(),
                "spec.securityContext.sysctls[2].name: Invalid value: \"net/ipv4/ip_local_port_range\": may not be specified when 'hostNetwork' is true".to_string(),
                format!("spec.securityContext.sysctls[3].name: Invalid value: \"Kernel.Bad\": must have at most 253 characters and match regex {pattern}"),
                "spec.securityContext.sysctls[4].name: Duplicate value: \"kernel.shm_rmid_forced\"".to_string(),
                "spec.securityContext.sysctls[5].name: Required value".to_string(),
            ]
        );
        let ipc = json!({"hostIPC": true, "securityContext": {"sysctls": [
            {"name": "kernel.msgmax", "value": "1"}, {"name": "fs.mqueue.msg_max", "value": "1"},
            {"name": "kernel.sem", "value": "1"}, {"name": "vm.swappiness", "value": "1"}]}});
        assert_eq!(messages(ipc).len(), 3);
    }

    #[test]
    fn policies_and_profiles_are_checked_for_the_pod_and_each_container() {
        let spec = json!({
            "securityContext": {
                "fsGroupChangePolicy": "Sometimes",
                "seccompProfile": {"type": "Localhost", "localhostProfile": "../escape.json"},
                "appArmorProfile": {"type": "Localhost", "localhostProfile": " padded"},
                "supplementalGroupsPolicy": "Loose",
                "seLinuxChangePolicy": "MountOption"},
            "containers": [
                {"securityContext": {"seccompProfile": {"type": "RuntimeDefault", "localhostProfile": "p.json"},
                                     "appArmorProfile": {"type": "Unconfined", "localhostProfile": "p"}}},
                {"securityContext": {"seccompProfile": {}, "appArmorProfile": {"type": "Strict"}}},
                {"securityContext": {"seccompProfile": {"type": "Localhost"},
                                     "appArmorProfile": {"type": "Localhost", "localhostProfile": ""}}}]});
        assert_eq!(
            messages(spec),
            [
                "spec.securityContext.fsGroupChangePolicy: Unsupported value: \"Sometimes\": supported values: \"Always\", \"OnRootMismatch\"",
                "spec.securityContext.seccompProfile.localhostProfile: Invalid value: \"../escape.json\": must not contain '..'",
                "spec.securityContext.appArmorProfile.localhostProfile: Invalid value: \" padded\": must not be padded with whitespace",
                "spec.securityContext.supplementalGroupsPolicy: Unsupported value: \"Loose\": supported values: \"Merge\", \"Strict\"",
                "spec.securityContext.seLinuxChangePolicy: Unsupported value: \"MountOption\": supported values: \"Recursive\"",
                "spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: core.SeccompProfile{Type:\"RuntimeDefault\", LocalhostProfile:\"p.json\"}: can only be set when seccomp type is Localhost",
                "spec.containers[0].securityContext.appArmorProfile.localhostProfile: Invalid value: \"p\": can only be set when AppArmor type is Localhost",
                "spec.containers[1].securityContext.seccompProfile.type: Required value: type is required when seccompProfile is set",
                "spec.containers[1].securityContext.appArmorProfile.type: Unsupported value: \"Strict\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"",
                "spec.containers[2].securityContext.seccompProfile.localhostProfile: Required value: must be set when seccomp type is Localhost",
                "spec.containers[2].securityContext.appArmorProfile.localhostProfile: Required value: must be set when AppArmor type is Localhost",
            ]
        );
    }

    #[test]
    fn an_app_armor_profile_path_is_at_most_path_max() {
        let long = "p".repeat(4096);
        let spec = json!({"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": long}}});
        assert_eq!(
            messages(spec),
            [
                "spec.securityContext.appArmorProfile.localhostProfile: Too long: may not be more than 4095 bytes"
            ]
        );
        let spec = json!({"securityContext": {"appArmorProfile": {"type": "Localhost", "localhostProfile": "p".repeat(4095)}}});
        assert!(messages(spec).is_empty());
    }
}
