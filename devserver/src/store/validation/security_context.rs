//! Security contexts, as `pkg/apis/core/validation` checks them: user and
//! group ids within 0..=2147483647 on the Pod's (`fsGroup`, `runAsUser`,
//! `runAsGroup`, `supplementalGroups`) and each container's (`runAsUser`,
//! `runAsGroup`), a shared process namespace not with the host's (both set
//! at the spec in v1, and reported under `securityContext`, where the
//! internal type keeps them), the Pod's sysctls (valid names, each once,
//! none of a namespace shared with the host), file system group change,
//! supplemental groups and SELinux change policies (`Recursive` alone, the
//! SELinuxMount gate being off in v1.33), seccomp and AppArmor profiles
//! and Windows options (a gMSA credential spec's name and size, a
//! `runAsUserName`'s length and form), the Pod's and each container's; a
//! container's proc mount (`Default` or `Unmasked`, `Unmasked` only where
//! the Pod's `hostUsers` is false) and `allowPrivilegeEscalation: false`
//! neither with `privileged: true` nor with `CAP_SYS_ADMIN` added; Windows
//! host process containers (the Pod's `hostProcess` and each container's
//! alike where both are set, all of the Pod's containers host process
//! ones or none, and only on the host's network); and no host namespace
//! beside `hostUsers: false`.
//!
//! The dev server models kube-apiserver run with `--allow-privileged=true`,
//! as kubeadm and kind run it: a privileged container and host process
//! containers are allowed, never `Forbidden: disallowed by cluster
//! policy`. Upstream checks no capability but `CAP_SYS_ADMIN`, and that
//! only beside `allowPrivilegeEscalation: false`.
//!
//! A security context or
//! seccomp profile shown whole in a message (`allowPrivilegeEscalation`,
//! a local profile beside another type) shows a set pointer's value after
//! `&` where Go shows its address.

use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::volume_source::local_descending_path;
use super::{Cause, items, names, one_of, pod_fields, text};

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
    windows_options(context, &at, causes);
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
        // The profile shown whole, its local profile after `&`.
        (_, Some(_)) => causes.push(Cause::new(
            &format!("{at}.localhostProfile"),
            "FieldValueInvalid",
            format!(
                "Invalid value: core.SeccompProfile{{{}}}: can only be set when seccomp type is Localhost",
                go_fields(profile, PROFILE)
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

/// A container's security context, under `path`, as
/// `ValidateSecurityContext` checks it: `privileged` (allowed, the dev
/// server modelling `--allow-privileged=true`), its ids, its proc mount,
/// its seccomp profile, `allowPrivilegeEscalation: false` beside privilege
/// or `CAP_SYS_ADMIN`, its Windows options and its AppArmor profile; an
/// `Unmasked` proc mount only where the Pod's `hostUsers` is false
/// (`host_users` is whether the Pod shares the host's user namespace).
pub(super) fn container(container: &Value, path: &str, host_users: bool, causes: &mut Vec<Cause>) {
    let Some(context) = container.get("securityContext").filter(|c| c.is_object()) else {
        return;
    };
    let at = format!("{path}.securityContext");
    for field in ["runAsUser", "runAsGroup"] {
        id(context.get(field), &format!("{at}.{field}"), causes);
    }
    policy(context, "procMount", &at, &PROC_MOUNTS, causes);
    if host_users && text(context, "/procMount") == "Unmasked" {
        causes.push(names::invalid(
            &format!("{at}.procMount"),
            "Unmasked",
            "`hostUsers` must be false to use `Unmasked`".into(),
        ));
    }
    seccomp_profile(context, &at, causes);
    if context
        .get("allowPrivilegeEscalation")
        .and_then(Value::as_bool)
        == Some(false)
    {
        let refuse = |causes: &mut Vec<Cause>, detail: &str| {
            causes.push(Cause::new(
                &at,
                "FieldValueInvalid",
                format!("Invalid value: {}: {detail}", go_security_context(context)),
            ));
        };
        if context.get("privileged").and_then(Value::as_bool) == Some(true) {
            refuse(
                causes,
                "cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
            );
        }
        for added in items(context.pointer("/capabilities/add")) {
            if added.as_str() == Some("CAP_SYS_ADMIN") {
                refuse(
                    causes,
                    "cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
                );
            }
        }
    }
    windows_options(context, &at, causes);
    app_armor_profile(context, &at, causes);
}

/// The proc mount types (`ValidateProcMountType`).
const PROC_MOUNTS: [&str; 2] = ["Default", "Unmasked"];

/// `maxGMSACredentialSpecLengthInKiB`.
const MAX_GMSA_CREDENTIAL_SPEC_KIB: usize = 64;
/// `maxRunAsUserNameDomainLength`: a domain must be shorter.
const MAX_RUN_AS_USER_NAME_DOMAIN: usize = 256;
/// `maxRunAsUserNameUserLength`.
const MAX_RUN_AS_USER_NAME_USER: usize = 104;

/// `validNetBiosRegex`: a NetBIOS domain name.
static NET_BIOS_RE: LazyLock<Regex> = LazyLock::new(|| {
    Regex::new(r#"^[^\\/:\*\?"<>|\.][^\\/:\*\?"<>|]{0,14}$"#).expect("a valid pattern")
});
/// `validWindowsUserDomainDNSRegex`: a DNS domain name.
static WINDOWS_DNS_DOMAIN_RE: LazyLock<Regex> = LazyLock::new(|| {
    let label = "[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?";
    Regex::new(&format!(r"^{label}(?:\.{label})*$")).expect("a valid pattern")
});
/// `invalidUserNameCharsRegex`.
const USER_NAME_FORBIDDEN: &str = r#""/\:;|=,+*?<>@[]"#;

/// The Windows options of a security context under `at`
/// (`validateWindowsSecurityContextOptions`): a gMSA credential spec name
/// that is a subdomain, a credential spec neither empty nor over 64 KiB,
/// and a `runAsUserName` of a user and an optional domain.
fn windows_options(context: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(options) = context.get("windowsOptions").filter(|o| o.is_object()) else {
        return;
    };
    let at = format!("{at}.windowsOptions");
    let field = |name: &str| options.get(name).and_then(Value::as_str);
    if let Some(name) = field("gmsaCredentialSpecName") {
        for problem in names::dns1123_subdomain(name) {
            causes.push(names::invalid(
                &format!("{at}.gmsaCredentialSpecName"),
                name,
                problem,
            ));
        }
    }
    if let Some(spec) = field("gmsaCredentialSpec") {
        let spec_at = format!("{at}.gmsaCredentialSpec");
        if spec.is_empty() {
            causes.push(names::invalid(
                &spec_at,
                spec,
                "gmsaCredentialSpec cannot be an empty string".into(),
            ));
        } else if spec.len() > MAX_GMSA_CREDENTIAL_SPEC_KIB * 1024 {
            causes.push(names::invalid(
                &spec_at,
                spec,
                format!("gmsaCredentialSpec size must be under {MAX_GMSA_CREDENTIAL_SPEC_KIB} KiB"),
            ));
        }
    }
    if let Some(name) = field("runAsUserName") {
        let user_at = format!("{at}.runAsUserName");
        for problem in run_as_user_name(name) {
            causes.push(names::invalid(&user_at, name, problem));
        }
    }
}

/// What is wrong with a Windows `runAsUserName`, `DOMAIN\USER` or `USER`,
/// in `validateWindowsSecurityContextOptions`' words and order.
fn run_as_user_name(name: &str) -> Vec<String> {
    if name.is_empty() {
        return vec!["runAsUserName cannot be an empty string".into()];
    }
    if name.chars().any(|c| c.is_ascii_control()) {
        return vec!["runAsUserName cannot contain control characters".into()];
    }
    let parts: Vec<&str> = name.split('\\').collect();
    let (domain, user) = match parts[..] {
        [user] => (None, user),
        [domain, user] => (Some(domain), user),
        _ => return vec!["runAsUserName cannot contain more than one backslash".into()],
    };
    let mut problems = Vec::new();
    if domain.unwrap_or_default().len() >= MAX_RUN_AS_USER_NAME_DOMAIN {
        problems.push(format!(
            "runAsUserName's Domain length must be under {MAX_RUN_AS_USER_NAME_DOMAIN} characters"
        ));
    }
    if let Some(domain) = domain
        && !(NET_BIOS_RE.is_match(domain) || WINDOWS_DNS_DOMAIN_RE.is_match(domain))
    {
        problems.push("runAsUserName's Domain doesn't match the NetBios nor the DNS format".into());
    }
    if user.is_empty() {
        problems.push("runAsUserName's User cannot be empty".into());
    } else if user.len() > MAX_RUN_AS_USER_NAME_USER {
        problems.push(format!(
            "runAsUserName's User length must not be longer than {MAX_RUN_AS_USER_NAME_USER} characters"
        ));
    }
    if !user.is_empty() && user.chars().all(|c| c == '.' || c == ' ') {
        problems.push("runAsUserName's User cannot contain only periods or spaces".into());
    }
    if user.chars().any(|c| USER_NAME_FORBIDDEN.contains(c)) {
        problems.push(format!(
            "runAsUserName's User cannot contain the following characters: {USER_NAME_FORBIDDEN}"
        ));
    }
    problems
}

/// A Pod spec's Windows host process containers, under `path`
/// (`validateWindowsHostProcessPod`): each container's `hostProcess` the
/// Pod's where both are set; if any container is a host process one (its
/// own or the Pod's `hostProcess` true), all are, and the Pod is on the
/// host's network. Then no host namespace where the Pod has its own user
/// namespace (`validateHostUsers`), as `ValidatePodSpec` checks both
/// after its topology spread constraints.
pub(super) fn host_process_and_users(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let host_process = |context: Option<&Value>| {
        context
            .and_then(|c| c.pointer("/windowsOptions/hostProcess"))
            .and_then(Value::as_bool)
    };
    let pod = host_process(spec.get("securityContext"));
    let containers = pod_fields::containers(spec, path);
    let mut host_process_containers = 0;
    for (at, container) in &containers {
        let own = host_process(container.get("securityContext"));
        if let (Some(pod), Some(own)) = (pod, own)
            && pod != own
        {
            causes.push(Cause::new(
                &format!("{at}.securityContext.windowsOptions.hostProcess"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: {own}: pod hostProcess value must be identical if both are specified, was {pod}"
                ),
            ));
        }
        if own.or(pod) == Some(true) {
            host_process_containers += 1;
        }
    }
    let on = |field: &str| spec.get(field).and_then(Value::as_bool) == Some(true);
    if host_process_containers > 0 {
        if host_process_containers != containers.len() {
            causes.push(names::invalid(
                path,
                "",
                "If pod contains any hostProcess containers then all containers must be HostProcess containers".into(),
            ));
        }
        if !on("hostNetwork") {
            causes.push(Cause::new(
                &format!("{path}.hostNetwork"),
                "FieldValueInvalid",
                "Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers".into(),
            ));
        }
    }
    if spec.get("hostUsers").and_then(Value::as_bool) == Some(false) {
        // Upstream names the two last by their Go fields.
        for (field, reported) in [
            ("hostNetwork", "hostNetwork"),
            ("hostPID", "HostPID"),
            ("hostIPC", "HostIPC"),
        ] {
            if on(field) {
                causes.push(Cause::forbidden(
                    &format!("{path}.{reported}"),
                    "when `pod.Spec.HostUsers` is false",
                ));
            }
        }
    }
}

/// How a field of an internal type shows in Go's `%#v`.
enum Go {
    /// A string: quoted, `""` when unset.
    Text,
    /// A pointer to a scalar of the type: `(*T)(nil)` when unset, else the
    /// value after `&`, standing in for the address Go shows.
    Pointer(&'static str),
    /// A slice of strings of the type: `[]T(nil)` when unset.
    Slice(&'static str),
    /// A pointer to a struct of the type and fields, shown as `&T{...}`.
    Struct(&'static str, &'static [(&'static str, &'static str, Go)]),
}

/// `core.Capabilities`.
const CAPABILITIES: &[(&str, &str, Go)] = &[
    ("Add", "add", Go::Slice("core.Capability")),
    ("Drop", "drop", Go::Slice("core.Capability")),
];
/// `core.SELinuxOptions`.
const SE_LINUX_OPTIONS: &[(&str, &str, Go)] = &[
    ("User", "user", Go::Text),
    ("Role", "role", Go::Text),
    ("Type", "type", Go::Text),
    ("Level", "level", Go::Text),
];
/// `core.WindowsSecurityContextOptions`.
const WINDOWS_OPTIONS: &[(&str, &str, Go)] = &[
    (
        "GMSACredentialSpecName",
        "gmsaCredentialSpecName",
        Go::Pointer("string"),
    ),
    (
        "GMSACredentialSpec",
        "gmsaCredentialSpec",
        Go::Pointer("string"),
    ),
    ("RunAsUserName", "runAsUserName", Go::Pointer("string")),
    ("HostProcess", "hostProcess", Go::Pointer("bool")),
];
/// `core.SeccompProfile` and `core.AppArmorProfile`.
const PROFILE: &[(&str, &str, Go)] = &[
    ("Type", "type", Go::Text),
    (
        "LocalhostProfile",
        "localhostProfile",
        Go::Pointer("string"),
    ),
];
/// `core.SecurityContext`, its fields in v1.33's order.
const SECURITY_CONTEXT: &[(&str, &str, Go)] = &[
    (
        "Capabilities",
        "capabilities",
        Go::Struct("core.Capabilities", CAPABILITIES),
    ),
    ("Privileged", "privileged", Go::Pointer("bool")),
    (
        "SELinuxOptions",
        "seLinuxOptions",
        Go::Struct("core.SELinuxOptions", SE_LINUX_OPTIONS),
    ),
    (
        "WindowsOptions",
        "windowsOptions",
        Go::Struct("core.WindowsSecurityContextOptions", WINDOWS_OPTIONS),
    ),
    ("RunAsUser", "runAsUser", Go::Pointer("int64")),
    ("RunAsGroup", "runAsGroup", Go::Pointer("int64")),
    ("RunAsNonRoot", "runAsNonRoot", Go::Pointer("bool")),
    (
        "ReadOnlyRootFilesystem",
        "readOnlyRootFilesystem",
        Go::Pointer("bool"),
    ),
    (
        "AllowPrivilegeEscalation",
        "allowPrivilegeEscalation",
        Go::Pointer("bool"),
    ),
    ("ProcMount", "procMount", Go::Pointer("core.ProcMountType")),
    (
        "SeccompProfile",
        "seccompProfile",
        Go::Struct("core.SeccompProfile", PROFILE),
    ),
    (
        "AppArmorProfile",
        "appArmorProfile",
        Go::Struct("core.AppArmorProfile", PROFILE),
    ),
];

/// Go's `%#v` of the `core.SecurityContext` that `context` converts to.
fn go_security_context(context: &Value) -> String {
    format!(
        "core.SecurityContext{{{}}}",
        go_fields(context, SECURITY_CONTEXT)
    )
}

/// The fields of a struct in Go's `%#v`, `Name:value` comma-separated.
fn go_fields(object: &Value, fields: &[(&str, &str, Go)]) -> String {
    let shown: Vec<String> = fields
        .iter()
        .map(|(name, json, kind)| format!("{name}:{}", go_value(object.get(*json), kind)))
        .collect();
    shown.join(", ")
}

/// A field's `value` (`None` or null when unset) in Go's `%#v`.
fn go_value(value: Option<&Value>, kind: &Go) -> String {
    let value = value.filter(|v| !v.is_null());
    match (kind, value) {
        (Go::Text, value) => format!("{:?}", value.and_then(Value::as_str).unwrap_or_default()),
        (Go::Pointer(go) | Go::Struct(go, _), None) => format!("(*{go})(nil)"),
        (Go::Slice(go), None) => format!("[]{go}(nil)"),
        (Go::Pointer(_), Some(Value::String(text))) => format!("&{text:?}"),
        (Go::Pointer(_), Some(scalar)) => format!("&{scalar}"),
        (Go::Slice(go), Some(list)) => {
            let shown: Vec<String> = items(Some(list))
                .iter()
                .map(|item| format!("{:?}", item.as_str().unwrap_or_default()))
                .collect();
            format!("[]{go}{{{}}}", shown.join(", "))
        }
        (Go::Struct(go, fields), Some(object)) => format!("&{go}{{{}}}", go_fields(object, fields)),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::super::fields_of;
    use super::super::tests::spec_messages;
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
        container(
            &spec["containers"][0],
            "spec.containers[0]",
            true,
            &mut causes,
        );
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
        let host_users = spec.get("hostUsers").and_then(Value::as_bool) != Some(false);
        for list in ["containers", "initContainers"] {
            for (i, c) in items(spec.get(list)).iter().enumerate() {
                container(c, &format!("spec.{list}[{i}]"), host_users, &mut causes);
            }
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
                "spec.containers[0].securityContext.seccompProfile.localhostProfile: Invalid value: core.SeccompProfile{Type:\"RuntimeDefault\", LocalhostProfile:&\"p.json\"}: can only be set when seccomp type is Localhost",
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

    #[test]
    fn privilege_is_allowed_but_not_beside_no_privilege_escalation() {
        let privileged = json!({"containers": [{"securityContext": {"privileged": true}}]});
        assert!(messages(privileged).is_empty());
        let spec = json!({"containers": [
            {"securityContext": {"privileged": true, "allowPrivilegeEscalation": false, "runAsUser": 1000}},
            {"securityContext": {"allowPrivilegeEscalation": false,
                "capabilities": {"add": ["CAP_SYS_ADMIN", "NET_ADMIN"], "drop": []},
                "seccompProfile": {"type": "Localhost", "localhostProfile": "p.json"}}},
            {"securityContext": {"allowPrivilegeEscalation": true, "privileged": true,
                "capabilities": {"add": ["CAP_SYS_ADMIN"]}}},
            {"securityContext": {"allowPrivilegeEscalation": false, "capabilities": {"add": ["SYS_ADMIN"]}}}]});
        assert_eq!(
            messages(spec),
            [
                "spec.containers[0].securityContext: Invalid value: core.SecurityContext{Capabilities:(*core.Capabilities)(nil), Privileged:&true, SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:&1000, RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:&false, ProcMount:(*core.ProcMountType)(nil), SeccompProfile:(*core.SeccompProfile)(nil), AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set `allowPrivilegeEscalation` to false and `privileged` to true",
                "spec.containers[1].securityContext: Invalid value: core.SecurityContext{Capabilities:&core.Capabilities{Add:[]core.Capability{\"CAP_SYS_ADMIN\", \"NET_ADMIN\"}, Drop:[]core.Capability{}}, Privileged:(*bool)(nil), SELinuxOptions:(*core.SELinuxOptions)(nil), WindowsOptions:(*core.WindowsSecurityContextOptions)(nil), RunAsUser:(*int64)(nil), RunAsGroup:(*int64)(nil), RunAsNonRoot:(*bool)(nil), ReadOnlyRootFilesystem:(*bool)(nil), AllowPrivilegeEscalation:&false, ProcMount:(*core.ProcMountType)(nil), SeccompProfile:&core.SeccompProfile{Type:\"Localhost\", LocalhostProfile:&\"p.json\"}, AppArmorProfile:(*core.AppArmorProfile)(nil)}: cannot set `allowPrivilegeEscalation` to false and `capabilities.Add` CAP_SYS_ADMIN",
            ]
        );
    }

    #[test]
    fn a_container_checks_its_fields_in_upstream_order() {
        let spec = json!({"hostUsers": false, "containers": [{"securityContext": {
            "windowsOptions": {"runAsUserName": ""},
            "appArmorProfile": {"type": "Strict"},
            "allowPrivilegeEscalation": false, "privileged": true,
            "seccompProfile": {"type": "Strict"},
            "procMount": "Masked",
            "runAsGroup": -1}}]});
        assert_eq!(
            fields_of(&messages(spec)),
            [
                "spec.containers[0].securityContext.runAsGroup",
                "spec.containers[0].securityContext.procMount",
                "spec.containers[0].securityContext.seccompProfile.type",
                "spec.containers[0].securityContext",
                "spec.containers[0].securityContext.windowsOptions.runAsUserName",
                "spec.containers[0].securityContext.appArmorProfile.type",
            ]
        );
    }

    #[test]
    fn a_proc_mount_is_default_or_unmasked_and_unmasked_only_in_a_user_namespace() {
        let spec = json!({
            "containers": [{"securityContext": {"procMount": "Unmasked"}},
                           {"securityContext": {"procMount": "Default"}},
                           {"securityContext": {"procMount": ""}}],
            "initContainers": [{"securityContext": {"procMount": "Unmasked"}}]});
        let unsupported = "spec.containers[2].securityContext.procMount: Unsupported value: \"\": supported values: \"Default\", \"Unmasked\"";
        assert_eq!(
            messages(spec.clone()),
            [
                "spec.containers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`",
                unsupported,
                "spec.initContainers[0].securityContext.procMount: Invalid value: \"Unmasked\": `hostUsers` must be false to use `Unmasked`",
            ]
        );
        let mut own_users = spec;
        own_users["hostUsers"] = json!(false);
        assert_eq!(messages(own_users), [unsupported]);
    }

    #[test]
    fn windows_options_name_a_credential_spec_and_a_user() {
        let spec = json!({
            "securityContext": {
                "seccompProfile": {"type": "Strict"},
                "windowsOptions": {"gmsaCredentialSpecName": "Web_Spec", "gmsaCredentialSpec": "",
                                   "runAsUserName": "a\\b\\c"},
                "appArmorProfile": {"type": "Strict"}},
            "containers": [
                {"securityContext": {"windowsOptions": {"gmsaCredentialSpec": "x".repeat(65537),
                                                         "runAsUserName": "tab\there"}}},
                {"securityContext": {"windowsOptions": {"gmsaCredentialSpec": "x".repeat(65536),
                                                         "runAsUserName": ".bad:domain\\"}}},
                {"securityContext": {"windowsOptions": {"runAsUserName": format!("{}\\..", "d".repeat(256))}}},
                {"securityContext": {"windowsOptions": {"runAsUserName": "u".repeat(105) + "@"}}},
                {"securityContext": {"windowsOptions": {"runAsUserName": "CORP\\svc", "hostProcess": false}}},
                {"securityContext": {"windowsOptions": {"runAsUserName": "corp.example.com\\NT AUTHORITY"}}}]});
        let subdomain = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')";
        let found = messages(spec);
        assert_eq!(
            found[..4],
            [
                "spec.securityContext.seccompProfile.type: Unsupported value: \"Strict\": supported values: \"Localhost\", \"RuntimeDefault\", \"Unconfined\"".to_string(),
                format!("spec.securityContext.windowsOptions.gmsaCredentialSpecName: Invalid value: \"Web_Spec\": {subdomain}"),
                "spec.securityContext.windowsOptions.gmsaCredentialSpec: Invalid value: \"\": gmsaCredentialSpec cannot be an empty string".to_string(),
                "spec.securityContext.windowsOptions.runAsUserName: Invalid value: \"a\\\\b\\\\c\": runAsUserName cannot contain more than one backslash".to_string(),
            ]
        );
        assert_eq!(
            fields_of(&found[4..]),
            [
                "spec.securityContext.appArmorProfile.type",
                "spec.containers[0].securityContext.windowsOptions.gmsaCredentialSpec",
                "spec.containers[0].securityContext.windowsOptions.runAsUserName",
                "spec.containers[1].securityContext.windowsOptions.runAsUserName",
                "spec.containers[1].securityContext.windowsOptions.runAsUserName",
                "spec.containers[2].securityContext.windowsOptions.runAsUserName",
                "spec.containers[2].securityContext.windowsOptions.runAsUserName",
                "spec.containers[2].securityContext.windowsOptions.runAsUserName",
                "spec.containers[3].securityContext.windowsOptions.runAsUserName",
                "spec.containers[3].securityContext.windowsOptions.runAsUserName",
            ]
        );
        let details: Vec<&str> = found[5..]
            .iter()
            .map(|m| m.rsplit_once("\": ").map(|(_, d)| d).unwrap_or_default())
            .collect();
        assert_eq!(
            details,
            [
                "gmsaCredentialSpec size must be under 64 KiB",
                "runAsUserName cannot contain control characters",
                "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
                "runAsUserName's User cannot be empty",
                "runAsUserName's Domain length must be under 256 characters",
                "runAsUserName's Domain doesn't match the NetBios nor the DNS format",
                "runAsUserName's User cannot contain only periods or spaces",
                "runAsUserName's User length must not be longer than 104 characters",
                "runAsUserName's User cannot contain the following characters: \"/\\:;|=,+*?<>@[]",
            ]
        );
    }

    #[test]
    fn a_netbios_domain_is_at_most_15_characters_and_a_dns_one_any_subdomain() {
        assert!(run_as_user_name("ABCDEFGHIJKLMNO\\u").is_empty());
        assert!(run_as_user_name("a-b.example.com\\u").is_empty());
        assert_eq!(
            run_as_user_name("ABCDEFGHIJKLMNOP_\\u"),
            ["runAsUserName's Domain doesn't match the NetBios nor the DNS format"]
        );
        assert!(run_as_user_name("ABCDEFGHIJKLMNOP\\u").is_empty());
    }

    #[test]
    fn host_process_containers_are_all_or_none_and_on_the_host_network() {
        let spec = json!({
            "securityContext": {"windowsOptions": {"hostProcess": true}},
            "initContainers": [{"securityContext": {"windowsOptions": {"hostProcess": false}}}],
            "containers": [{}, {"securityContext": {"windowsOptions": {"hostProcess": true}}}]});
        assert_eq!(
            spec_messages(host_process_and_users, spec),
            [
                "spec.initContainers[0].securityContext.windowsOptions.hostProcess: Invalid value: false: pod hostProcess value must be identical if both are specified, was true",
                "spec: Invalid value: \"\": If pod contains any hostProcess containers then all containers must be HostProcess containers",
                "spec.hostNetwork: Invalid value: false: hostNetwork must be true if pod contains any hostProcess containers",
            ]
        );
        let all = json!({"hostNetwork": true,
            "containers": [{"securityContext": {"windowsOptions": {"hostProcess": true}}}]});
        assert!(spec_messages(host_process_and_users, all).is_empty());
        let none = json!({"securityContext": {"windowsOptions": {"hostProcess": false}},
            "containers": [{"securityContext": {"windowsOptions": {"hostProcess": false}}}]});
        assert!(spec_messages(host_process_and_users, none).is_empty());
    }

    #[test]
    fn a_pod_in_its_own_user_namespace_shares_no_host_namespace() {
        let spec = json!({"hostUsers": false, "hostNetwork": true, "hostPID": true, "hostIPC": true,
            "containers": [{}]});
        assert_eq!(
            spec_messages(host_process_and_users, spec),
            [
                "spec.hostNetwork: Forbidden: when `pod.Spec.HostUsers` is false",
                "spec.HostPID: Forbidden: when `pod.Spec.HostUsers` is false",
                "spec.HostIPC: Forbidden: when `pod.Spec.HostUsers` is false",
            ]
        );
        let shared = json!({"hostUsers": true, "hostNetwork": true, "hostPID": true});
        assert!(spec_messages(host_process_and_users, shared).is_empty());
    }
}
