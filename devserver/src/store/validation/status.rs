//! Status writes (PUT or PATCH of a `/status` subresource) as
//! kube-apiserver v1.33 validates them: not with the kind's own rules but
//! with its status strategy's `ValidateUpdate`, which checks the status
//! alone (the spec is the stored one) and, for some kinds, what the status
//! may not undo. Covered: the workloads' counts
//! (`ValidateDeploymentStatusUpdate`, `ValidateReplicaSetStatusUpdate`,
//! `ValidateStatefulSetStatusUpdate`, `ValidateDaemonSetStatusUpdate`), a
//! Job's status and its transitions (`ValidateJobUpdateStatus`, with the
//! options v1.33's `getStatusValidationOptions` sets while `JobManagedBy`
//! is on), a Pod's nominated node, container states and addresses
//! (`ValidatePodStatusUpdate`), a Service's load balancer status
//! (`ValidateServiceStatusUpdate`), a ReplicationController's counts
//! (`ValidateReplicationControllerStatusUpdate`), a Namespace's phase
//! (`ValidateNamespaceStatusUpdate`), an Ingress's load balancer status
//! (`ValidateIngressStatusUpdate`), a claim's capacity
//! (`ValidatePersistentVolumeClaimStatusUpdate`), a PodDisruptionBudget's
//! conditions and counts (`ValidatePodDisruptionBudgetStatusUpdate`) and an
//! autoscaler's replicas (`ValidateHorizontalPodAutoscalerStatusUpdate`).
//! Each list is in upstream's order; the metadata checks every strategy
//! starts with are `names.rs`'s, on every write.
//!
//! A value the server shows through a pointer is shown dereferenced, as
//! `field.Error` does: a time as Go's `time.Time.String()` in UTC (the
//! server's local zone), a struct of the internal types as Go's `%#v`.
//!
//! Upstream's copies read: the Job rules and their options from a
//! `pkg/apis/batch/validation` of the v1.31-v1.33 line (the options as
//! v1.33's strategy sets them, JobManagedBy being beta there); the
//! workloads' from a v1.27-or-later `pkg/apis/apps/validation`. Not
//! checked: a Pod's condition types (whose field path v1.33 words
//! differently from later releases), its resource claim statuses, container
//! users and allocated resource health; a claim's allocated resources and
//! their statuses, and its `resourceVersion` (a status write here always
//! carries the stored one).

use std::net::IpAddr;

use jiff::Timestamp;
use serde_json::Value;

use super::super::names;
use super::{Cause, items, sloppy_ip, text};

/// `apimachineryvalidation.IsNegativeErrorMsg`.
const NEGATIVE: &str = "must be greater than or equal to 0";
/// The workloads' message for a count above `status.replicas`.
const ABOVE_REPLICAS: &str = "cannot be greater than status.replicas";
const DECREMENTED: &str = "cannot be decremented";
/// `supportedLoadBalancerIPMode`, sorted.
const IP_MODES: [&str; 2] = ["Proxy", "VIP"];
const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
/// `metav1validation.ValidateCondition`'s limits and reason format.
const MAX_REASON_LENGTH: usize = 1024;
const MAX_MESSAGE_LENGTH: usize = 32 * 1024;
const CONDITION_STATUSES: [&str; 3] = ["False", "True", "Unknown"];
const REASON_FORMAT: &str = "a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'ReasonA',  or 'ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')";

/// The causes of `new`, a status write over `old` of `group`/`kind`, as
/// the kind's status strategy's `ValidateUpdate` finds them; `None` for a
/// kind whose status strategy is not followed here.
pub(super) fn causes(group: &str, kind: &str, new: &Value, old: &Value) -> Option<Vec<Cause>> {
    let status = new.get("status").unwrap_or(&Value::Null);
    let was = old.get("status").unwrap_or(&Value::Null);
    let mut causes = Vec::new();
    match (group, kind) {
        ("apps", "Deployment") => deployment(status, was, &mut causes),
        ("apps", "ReplicaSet") => replica_set(status, &mut causes),
        ("apps", "StatefulSet") => stateful_set(status, was, &mut causes),
        ("apps", "DaemonSet") => daemon_set(status, was, &mut causes),
        ("batch", "Job") => job::update(new, old, &mut causes),
        ("", "Pod") => pod(new, status, was, &mut causes),
        ("", "Service") => load_balancer(new, &mut causes),
        ("", "ReplicationController") => replica_set(status, &mut causes),
        ("", "Namespace") => namespace(new, status, &mut causes),
        ("networking.k8s.io", "Ingress") => ingress_load_balancer(status, was, &mut causes),
        ("", "PersistentVolumeClaim") => claim(status, &mut causes),
        ("policy", "PodDisruptionBudget") => disruption_budget(status, &mut causes),
        ("autoscaling", "HorizontalPodAutoscaler") => autoscaler(status, &mut causes),
        _ => return None,
    }
    Some(causes)
}

/// An integer field of `status`; 0 when absent, as Go's zero value.
fn count(status: &Value, name: &str) -> i64 {
    optional(status, name).unwrap_or(0)
}

/// An integer field behind a pointer: `None` when absent or null.
fn optional(status: &Value, name: &str) -> Option<i64> {
    status.get(name).and_then(Value::as_i64)
}

/// `ValidateNonnegativeField` of `status.NAME`.
fn non_negative(value: i64, name: &str, causes: &mut Vec<Cause>) {
    if value < 0 {
        causes.push(Cause::invalid_number(
            &format!("status.{name}"),
            value,
            NEGATIVE,
        ));
    }
}

/// Each of `names` of `status` not negative, in order.
fn counts(status: &Value, names: &[&str], causes: &mut Vec<Cause>) {
    for name in names {
        non_negative(count(status, name), name, causes);
    }
}

/// A pointer field of `status` not negative when set.
fn optional_count(status: &Value, name: &str, causes: &mut Vec<Cause>) {
    if let Some(value) = optional(status, name) {
        non_negative(value, name, causes);
    }
}

/// Each of `names` at most `status.replicas`.
fn within_replicas(status: &Value, names: &[&str], causes: &mut Vec<Cause>) {
    let replicas = count(status, "replicas");
    for name in names {
        let value = count(status, name);
        if value > replicas {
            causes.push(Cause::invalid_number(
                &format!("status.{name}"),
                value,
                ABOVE_REPLICAS,
            ));
        }
    }
}

/// `availableReplicas` at most `readyReplicas`, in the kind's `detail`.
fn available_within_ready(status: &Value, detail: &str, causes: &mut Vec<Cause>) {
    let available = count(status, "availableReplicas");
    if available > count(status, "readyReplicas") {
        causes.push(Cause::invalid_number(
            "status.availableReplicas",
            available,
            detail,
        ));
    }
}

/// `apivalidation.IsDecremented` of `collisionCount`: lowered or dropped
/// (shown as 0 then).
fn collision_count_kept(status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    let (now, before) = (
        optional(status, "collisionCount"),
        optional(was, "collisionCount"),
    );
    let decremented = match (now, before) {
        (None, Some(_)) => true,
        (Some(now), Some(before)) => now < before,
        _ => false,
    };
    if decremented {
        causes.push(Cause::invalid_number(
            "status.collisionCount",
            now.unwrap_or(0),
            DECREMENTED,
        ));
    }
}

/// `ValidateDeploymentStatusUpdate`: `ValidateDeploymentStatus`, then the
/// collision count kept.
fn deployment(status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    counts(
        status,
        &[
            "observedGeneration",
            "replicas",
            "updatedReplicas",
            "readyReplicas",
            "availableReplicas",
            "unavailableReplicas",
        ],
        causes,
    );
    optional_count(status, "collisionCount", causes);
    within_replicas(
        status,
        &["updatedReplicas", "readyReplicas", "availableReplicas"],
        causes,
    );
    available_within_ready(status, "cannot be greater than readyReplicas", causes);
    collision_count_kept(status, was, causes);
}

/// `ValidateReplicaSetStatusUpdate` (`ValidateReplicaSetStatus`), and a
/// ReplicationController's (`ValidateReplicationControllerStatus`), which
/// checks the same counts in the same words.
fn replica_set(status: &Value, causes: &mut Vec<Cause>) {
    counts(
        status,
        &[
            "replicas",
            "fullyLabeledReplicas",
            "readyReplicas",
            "availableReplicas",
            "observedGeneration",
        ],
        causes,
    );
    within_replicas(
        status,
        &["fullyLabeledReplicas", "readyReplicas", "availableReplicas"],
        causes,
    );
    available_within_ready(status, "cannot be greater than readyReplicas", causes);
}

/// `ValidateStatefulSetStatusUpdate`: `ValidateStatefulSetStatus`, then
/// the collision count kept.
fn stateful_set(status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    counts(
        status,
        &[
            "replicas",
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        causes,
    );
    optional_count(status, "observedGeneration", causes);
    optional_count(status, "collisionCount", causes);
    within_replicas(
        status,
        &[
            "readyReplicas",
            "currentReplicas",
            "updatedReplicas",
            "availableReplicas",
        ],
        causes,
    );
    available_within_ready(
        status,
        "cannot be greater than status.readyReplicas",
        causes,
    );
    collision_count_kept(status, was, causes);
}

/// `ValidateDaemonSetStatusUpdate`: `validateDaemonSetStatus`, then the
/// collision count kept.
fn daemon_set(status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    counts(
        status,
        &[
            "currentNumberScheduled",
            "numberMisscheduled",
            "desiredNumberScheduled",
            "numberReady",
            "observedGeneration",
            "updatedNumberScheduled",
            "numberAvailable",
            "numberUnavailable",
        ],
        causes,
    );
    optional_count(status, "collisionCount", causes);
    collision_count_kept(status, was, causes);
}

/// `ValidatePodStatusUpdate`, past the metadata (`names.rs`): a newly
/// nominated node's name, the QoS class kept, no terminated container made to run again
/// unless the pod (or, for an init container, the sidecar) restarts it,
/// then the pod's and host's IP addresses. Its spec is the stored one, so
/// `status.nodeName` cannot change here.
fn pod(pod: &Value, status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    let nominated = text(status, "/nominatedNodeName");
    if !nominated.is_empty() && nominated != text(was, "/nominatedNodeName") {
        for problem in names::dns1123_subdomain(nominated) {
            causes.push(names::invalid(
                "status.nominatedNodeName",
                nominated,
                problem,
            ));
        }
    }
    let qos = text(status, "/qosClass");
    if qos != text(was, "/qosClass") {
        causes.push(names::invalid(
            "status.qosClass",
            qos,
            "field is immutable".into(),
        ));
    }
    let spec = pod.get("spec").unwrap_or(&Value::Null);
    let restart = text(spec, "/restartPolicy");
    let transitions = |list: &str, restart: &str, sidecars: &[&str], causes: &mut Vec<Cause>| {
        terminated_stay(
            items(status.get(list)),
            items(was.get(list)),
            &format!("status.{list}"),
            restart,
            sidecars,
            causes,
        );
    };
    transitions("containerStatuses", restart, &[], causes);
    let sidecars: Vec<&str> = items(spec.get("initContainers"))
        .iter()
        .filter(|c| text(c, "/restartPolicy") == "Always")
        .map(|c| text(c, "/name"))
        .collect();
    transitions("initContainerStatuses", restart, &sidecars, causes);
    // The kubelet never restarts an ephemeral container.
    transitions("ephemeralContainerStatuses", "Never", &[], causes);
    // v1's `podIP` is the internal type's first pod IP, and wins over a
    // `podIPs` that disagrees (`Convert_v1_PodStatus_To_core_PodStatus`).
    let pod_ip = text(status, "/podIP");
    let mut pod_ips = ips_of(status.get("podIPs"));
    if !pod_ip.is_empty() && pod_ips.first() != Some(&pod_ip) {
        pod_ips = vec![pod_ip];
    }
    pod_ip_list("podIPs", &pod_ips, "PodIP", false, causes);
    let host_ips = ips_of(status.get("hostIPs"));
    if let Some(first) = host_ips
        .first()
        .filter(|ip| **ip != text(status, "/hostIP"))
    {
        causes.push(names::invalid(
            "status.hostIPs[0].ip",
            first,
            "must be equal to `hostIP`".into(),
        ));
    }
    pod_ip_list("hostIPs", &host_ips, "HostIP", true, causes);
}

/// The addresses of a `podIPs` or `hostIPs` list.
fn ips_of(list: Option<&Value>) -> Vec<&str> {
    items(list).iter().map(|ip| text(ip, "/ip")).collect()
}

/// `validatePodIPs` or `validateHostIPs` past the host IP's agreement:
/// each address as the legacy parser reads it, at most one of each family
/// (`netutils.IsDualStackIPStrings`, whose error on an address it cannot
/// read is an internal error of the list), and each address once, its
/// duplicates reported after the families (pod IPs) or before them
/// (`duplicates_first`, host IPs).
fn pod_ip_list(
    list: &str,
    ips: &[&str],
    kind: &str,
    duplicates_first: bool,
    causes: &mut Vec<Cause>,
) {
    let at = format!("status.{list}");
    for (i, ip) in ips.iter().enumerate() {
        if sloppy_ip(ip).is_none() {
            causes.push(names::invalid(&format!("{at}[{i}]"), ip, INVALID_IP.into()));
        }
    }
    if ips.len() < 2 {
        return;
    }
    let duplicates = |causes: &mut Vec<Cause>| {
        for (i, ip) in ips.iter().enumerate() {
            if ips[..i].contains(ip) {
                causes.push(Cause::new(
                    &format!("{at}[{i}]"),
                    "FieldValueDuplicate",
                    format!("Duplicate value: core.{kind}{{IP:{ip:?}}}"),
                ));
            }
        }
    };
    if duplicates_first {
        duplicates(causes);
    }
    let parsed: Option<Vec<_>> = ips.iter().map(|ip| sloppy_ip(ip)).collect();
    let dual_stack = match parsed {
        Some(parsed) => {
            // Go counts an IPv4-mapped IPv6 address as IPv4 (`To4`).
            let v4 = |ip: &IpAddr| match ip {
                IpAddr::V4(_) => true,
                IpAddr::V6(v6) => v6.to_ipv4_mapped().is_some(),
            };
            parsed.iter().any(v4) && !parsed.iter().all(v4)
        }
        None => {
            causes.push(Cause::new(
                &at,
                "InternalError",
                "Internal error: failed to check for dual stack with error:ip <nil> is invalid"
                    .into(),
            ));
            false
        }
    };
    if !dual_stack || ips.len() > 2 {
        let shown: Vec<String> = ips
            .iter()
            .map(|ip| format!("core.{kind}{{IP:{ip:?}}}"))
            .collect();
        causes.push(Cause::new(
            &at,
            "FieldValueInvalid",
            format!(
                "Invalid value: []core.{kind}{{{}}}: may specify no more than one IP for each IP family",
                shown.join(", ")
            ),
        ));
    }
    if !duplicates_first {
        duplicates(causes);
    }
}

/// `ValidateNamespaceStatusUpdate`, past the metadata: the phase `Active`
/// unless the Namespace is being deleted, then `Terminating` (at upstream's
/// `status.Phase`).
fn namespace(namespace: &Value, status: &Value, causes: &mut Vec<Cause>) {
    let phase = text(status, "/phase");
    let deleting = namespace
        .pointer("/metadata/deletionTimestamp")
        .is_some_and(|t| !t.is_null());
    let (wanted, detail) = if deleting {
        (
            "Terminating",
            "may only be 'Terminating' if `deletionTimestamp` is not empty",
        )
    } else {
        (
            "Active",
            "may only be 'Active' if `deletionTimestamp` is empty",
        )
    };
    if phase != wanted {
        causes.push(names::invalid("status.Phase", phase, detail.into()));
    }
}

/// `ValidateIngressStatusUpdate` (`ValidateIngressLoadBalancerStatus`):
/// each ingress point's IP as the legacy parser reads it (an IP the old
/// status had is kept as it is), its hostname a DNS-1123 subdomain that is
/// not an IP address.
fn ingress_load_balancer(status: &Value, was: &Value, causes: &mut Vec<Cause>) {
    let old_ips: Vec<&str> = items(was.pointer("/loadBalancer/ingress"))
        .iter()
        .map(|point| text(point, "/ip"))
        .filter(|ip| !ip.is_empty())
        .collect();
    for (i, point) in items(status.pointer("/loadBalancer/ingress"))
        .iter()
        .enumerate()
    {
        let at = format!("status.loadBalancer.ingress[{i}]");
        let ip = text(point, "/ip");
        if !ip.is_empty() && !old_ips.contains(&ip) && sloppy_ip(ip).is_none() {
            causes.push(names::invalid(&format!("{at}.ip"), ip, INVALID_IP.into()));
        }
        hostname(point, &at, causes);
    }
}

/// An ingress point's hostname, if any: a DNS-1123 subdomain that is not
/// an IP address.
fn hostname(point: &Value, at: &str, causes: &mut Vec<Cause>) {
    let hostname = text(point, "/hostname");
    if hostname.is_empty() {
        return;
    }
    let host_at = format!("{at}.hostname");
    for problem in names::dns1123_subdomain(hostname) {
        causes.push(names::invalid(&host_at, hostname, problem));
    }
    if sloppy_ip(hostname).is_some() {
        causes.push(names::invalid(
            &host_at,
            hostname,
            "must be a DNS name, not an IP address".into(),
        ));
    }
}

/// `ValidateContainerStateTransition` (and its init container form, which
/// lets `sidecars` restart): unless the pod restarts `Always`, or
/// `OnFailure` and the container failed, a container that had terminated
/// stays terminated; each cause is at the old status's index.
fn terminated_stay(
    now: &[Value],
    before: &[Value],
    at: &str,
    restart: &str,
    sidecars: &[&str],
    causes: &mut Vec<Cause>,
) {
    if restart == "Always" {
        return;
    }
    let terminated = |s: &Value| s.pointer("/state/terminated").is_some_and(|t| !t.is_null());
    for (i, old) in before.iter().enumerate() {
        let Some(ended) = old.pointer("/state/terminated").filter(|t| !t.is_null()) else {
            continue;
        };
        let failed = count(ended, "exitCode") != 0;
        let name = text(old, "/name");
        if failed && restart == "OnFailure" || sidecars.contains(&name) {
            continue;
        }
        for new in now {
            if text(new, "/name") == name && !terminated(new) {
                causes.push(Cause::forbidden(
                    &format!("{at}[{i}].state"),
                    "may not be transitioned to non-terminated state",
                ));
            }
        }
    }
}

/// `ValidateServiceStatusUpdate` (`ValidateLoadBalancerStatus`): ingress
/// points only on a `LoadBalancer` Service (`AllowServiceLBStatusOnNonLB`
/// is off in v1.33), each IP as the legacy parser reads it (the strict
/// rules v1.33 leaves off), its `ipMode` only beside an IP and known, its
/// hostname a DNS-1123 subdomain that is not an IP address.
fn load_balancer(service: &Value, causes: &mut Vec<Cause>) {
    let ingress = items(service.pointer("/status/loadBalancer/ingress"));
    let at = "status.loadBalancer.ingress";
    if text(service, "/spec/type") != "LoadBalancer" && !ingress.is_empty() {
        causes.push(Cause::forbidden(
            at,
            "may only be used when `spec.type` is 'LoadBalancer'",
        ));
        return;
    }
    for (i, point) in ingress.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let ip = text(point, "/ip");
        if !ip.is_empty() && sloppy_ip(ip).is_none() {
            causes.push(names::invalid(&format!("{at}.ip"), ip, INVALID_IP.into()));
        }
        let mode_at = format!("{at}.ipMode");
        match point.get("ipMode").and_then(Value::as_str) {
            None if !ip.is_empty() => causes.push(Cause::required(
                &mode_at,
                "must be specified when `ip` is set",
            )),
            None => {}
            Some(_) if ip.is_empty() => causes.push(Cause::forbidden(
                &mode_at,
                "may not be specified when `ip` is not set",
            )),
            Some(mode) if !IP_MODES.contains(&mode) => {
                causes.push(Cause::not_supported(&mode_at, mode, &IP_MODES));
            }
            Some(_) => {}
        }
        hostname(point, &at, causes);
    }
}

/// `ValidatePersistentVolumeClaimStatusUpdate`, its capacity: each
/// quantity not negative (`validateBasicResource`, which shows the value
/// rounded away from zero), in key order as Go's map is unordered.
fn claim(status: &Value, causes: &mut Vec<Cause>) {
    let Some(capacity) = status.get("capacity").and_then(Value::as_object) else {
        return;
    };
    for (resource, quantity) in capacity {
        let nanos = quantity
            .as_str()
            .and_then(super::quantity::parse)
            .unwrap_or(0);
        if nanos < 0 {
            let units = -((-nanos + 999_999_999) / 1_000_000_000);
            causes.push(Cause::new(
                &format!("status.capacity[{resource}]"),
                "FieldValueInvalid",
                format!("Invalid value: {units}: must be a valid resource quantity"),
            ));
        }
    }
}

/// `ValidatePodDisruptionBudgetStatusUpdate` for policy/v1: the
/// conditions (`ValidateConditions`), then the counts.
fn disruption_budget(status: &Value, causes: &mut Vec<Cause>) {
    conditions(items(status.get("conditions")), "status.conditions", causes);
    counts(
        status,
        &[
            "disruptionsAllowed",
            "currentHealthy",
            "desiredHealthy",
            "expectedPods",
        ],
        causes,
    );
}

/// `ValidateHorizontalPodAutoscalerStatusUpdate`: the current and desired
/// replicas not negative.
fn autoscaler(status: &Value, causes: &mut Vec<Cause>) {
    counts(status, &["currentReplicas", "desiredReplicas"], causes);
}

/// `metav1validation.ValidateConditions`: each type once, then each
/// condition (`ValidateCondition`): its type a qualified name, a known
/// status, an observed generation not negative, a transition time, a
/// reason of the condition format and length, a message of bounded length.
fn conditions(list: &[Value], at: &str, causes: &mut Vec<Cause>) {
    let mut seen: Vec<&str> = Vec::new();
    for (i, condition) in list.iter().enumerate() {
        let at = format!("{at}[{i}]");
        let kind = text(condition, "/type");
        if seen.contains(&kind) {
            causes.push(Cause::duplicate(&format!("{at}.type"), kind));
        } else {
            seen.push(kind);
        }
        for problem in names::qualified_name(kind) {
            causes.push(names::invalid(&format!("{at}.type"), kind, problem));
        }
        let status = text(condition, "/status");
        if !CONDITION_STATUSES.contains(&status) {
            causes.push(Cause::not_supported(
                &format!("{at}.status"),
                status,
                &CONDITION_STATUSES,
            ));
        }
        let generation = count(condition, "observedGeneration");
        if generation < 0 {
            causes.push(Cause::invalid_number(
                &format!("{at}.observedGeneration"),
                generation,
                "must be greater than or equal to zero",
            ));
        }
        if text(condition, "/lastTransitionTime").is_empty() {
            causes.push(Cause::required(
                &format!("{at}.lastTransitionTime"),
                "must be set",
            ));
        }
        let reason = text(condition, "/reason");
        if reason.is_empty() {
            causes.push(Cause::required(&format!("{at}.reason"), "must be set"));
        } else {
            if !is_condition_reason(reason) {
                causes.push(names::invalid(
                    &format!("{at}.reason"),
                    reason,
                    REASON_FORMAT.into(),
                ));
            }
            if reason.len() > MAX_REASON_LENGTH {
                causes.push(Cause::too_long(&format!("{at}.reason"), MAX_REASON_LENGTH));
            }
        }
        if text(condition, "/message").len() > MAX_MESSAGE_LENGTH {
            causes.push(Cause::too_long(
                &format!("{at}.message"),
                MAX_MESSAGE_LENGTH,
            ));
        }
    }
}

/// `[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?`.
fn is_condition_reason(reason: &str) -> bool {
    let bytes = reason.as_bytes();
    let inner = |b: &u8| b.is_ascii_alphanumeric() || matches!(b, b'_' | b',' | b':');
    let last = |b: &u8| b.is_ascii_alphanumeric() || *b == b'_';
    match bytes {
        [] => false,
        [first] => first.is_ascii_alphabetic(),
        [first, middle @ .., end] => {
            first.is_ascii_alphabetic() && middle.iter().all(inner) && last(end)
        }
    }
}

/// A time field of `status`; `None` when absent, null or unreadable.
fn time(status: &Value, name: &str) -> Option<Timestamp> {
    status
        .get(name)
        .and_then(Value::as_str)
        .and_then(|t| t.parse().ok())
}

/// Go's `time.Time.String()` of a time in UTC:
/// `2026-01-01 10:00:00 +0000 UTC`, fractional seconds only when set.
fn go_time(time: Timestamp) -> String {
    format!("{} +0000 UTC", time.strftime("%Y-%m-%d %H:%M:%S%.f"))
}

/// A Job's status write: `ValidateJobUpdateStatus` past its metadata,
/// with the options v1.33's `getStatusValidationOptions` sets while
/// `JobManagedBy` is on (beta, on by default): most rules run only when a
/// field they read changed, so a status already in breach may still take
/// unrelated updates.
mod job {
    use jiff::Timestamp;
    use serde_json::Value;

    use super::super::strings;
    use super::{Cause, count, go_time, items, names, non_negative, optional, text, time};

    /// The rules `getStatusValidationOptions` turns on for one write
    /// (`JobStatusValidationOptions`); those it always sets are left out.
    struct Options {
        decreasing_succeeded: bool,
        invalid_completed_indexes: bool,
        invalid_failed_indexes: bool,
        completed_indexes_for_non_indexed: bool,
        failed_indexes_without_backoff_limit_per_index: bool,
        failed_indexes_overlapping_completed: bool,
        failed_without_failure_target: bool,
        complete_without_success_criteria_met: bool,
        finished_with_active: bool,
        finished_without_start_time: bool,
        finished_with_uncounted: bool,
        start_time_update_unsuspended: bool,
        completion_before_start: bool,
        not_complete_with_completion_time: bool,
        complete_without_completion_time: bool,
        complete_with_failed: bool,
        complete_with_failure_target: bool,
        more_ready_than_active: bool,
        finished_with_terminating: bool,
    }

    /// One side of the write: the Job's spec and status.
    struct Job<'v> {
        spec: &'v Value,
        status: &'v Value,
    }

    impl<'v> Job<'v> {
        fn of(object: &'v Value) -> Job<'v> {
            Job {
                spec: object.get("spec").unwrap_or(&Value::Null),
                status: object.get("status").unwrap_or(&Value::Null),
            }
        }

        /// `IsConditionTrue`: a condition of `kind` with status `True`.
        fn has(&self, kind: &str) -> bool {
            items(self.status.get("conditions"))
                .iter()
                .any(|c| text(c, "/type") == kind && text(c, "/status") == "True")
        }

        fn complete(&self) -> bool {
            self.has("Complete")
        }

        fn failed(&self) -> bool {
            self.has("Failed")
        }

        fn failure_target(&self) -> bool {
            self.has("FailureTarget")
        }

        fn success_criteria_met(&self) -> bool {
            self.has("SuccessCriteriaMet")
        }

        /// `IsJobFinished`.
        fn finished(&self) -> bool {
            self.complete() || self.failed()
        }

        fn indexed(&self) -> bool {
            text(self.spec, "/completionMode") == "Indexed"
        }

        fn completed_indexes(&self) -> &'v str {
            text(self.status, "/completedIndexes")
        }

        fn failed_indexes(&self) -> Option<&'v str> {
            self.status.get("failedIndexes").and_then(Value::as_str)
        }

        fn time(&self, name: &str) -> Option<Timestamp> {
            time(self.status, name)
        }

        /// `uncountedTerminatedPods` as `apiequality.Semantic` compares
        /// it: set or not, then its lists (an empty list equal to none).
        fn uncounted(&self) -> Option<[Vec<&'v str>; 2]> {
            self.status
                .get("uncountedTerminatedPods")
                .filter(|u| !u.is_null())
                .map(|u| [strings(u.get("succeeded")), strings(u.get("failed"))])
        }
    }

    /// `ValidateJobStatusUpdate` of `new` over `old`.
    pub(super) fn update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
        let (job, was) = (Job::of(new), Job::of(old));
        let options = options(&job, &was);
        validate(&job, &options, causes);
        for kind in ["Failed", "Complete", "FailureTarget"] {
            if was.has(kind) && !job.has(kind) {
                causes.push(conditions_cause(&format!(
                    "cannot disable the terminal {kind}=True condition"
                )));
            }
        }
        let failed = count(job.status, "failed");
        if failed < count(was.status, "failed") {
            causes.push(Cause::invalid_number(
                "status.failed",
                failed,
                "cannot decrease the failed counter",
            ));
        }
        let succeeded = count(job.status, "succeeded");
        if options.decreasing_succeeded && succeeded < count(was.status, "succeeded") {
            causes.push(Cause::invalid_number(
                "status.succeeded",
                succeeded,
                "cannot decrease the succeeded counter",
            ));
        }
        if let (Some(now), Some(before)) = (job.time("completionTime"), was.time("completionTime"))
            && now != before
        {
            causes.push(time_cause(
                "status.completionTime",
                now,
                "completionTime cannot be mutated",
            ));
        }
        let suspended = job.spec.get("suspend").and_then(Value::as_bool) == Some(true);
        if options.start_time_update_unsuspended && was.time("startTime").is_some() && !suspended {
            causes.push(Cause::required(
                "status.startTime",
                "startTime cannot be removed for unsuspended job",
            ));
        }
        if was.success_criteria_met() && !job.success_criteria_met() {
            causes.push(conditions_cause(
                "cannot disable the SuccessCriteriaMet=True condition",
            ));
        }
        if was.complete() && !was.success_criteria_met() && job.success_criteria_met() {
            causes.push(conditions_cause(
                "cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions",
            ));
        }
    }

    /// `getStatusValidationOptions` under `JobManagedBy`.
    fn options(job: &Job, was: &Job) -> Options {
        let finished = job.finished() != was.finished();
        let complete = job.complete() != was.complete();
        let failed = job.failed() != was.failed();
        let failure_target = job.failure_target() != was.failure_target();
        let success_criteria_met = job.success_criteria_met() != was.success_criteria_met();
        let completed_indexes = job.completed_indexes() != was.completed_indexes();
        let failed_indexes = job.failed_indexes() != was.failed_indexes();
        let active = count(job.status, "active") != count(was.status, "active");
        let ready = optional(job.status, "ready") != optional(was.status, "ready");
        let terminating =
            optional(job.status, "terminating") != optional(was.status, "terminating");
        let start_time = job.time("startTime") != was.time("startTime");
        let completion_time = job.time("completionTime") != was.time("completionTime");
        let uncounted = job.uncounted() != was.uncounted();
        Options {
            // An indexed Job whose completions follow its parallelism may
            // be scaled down, and its succeeded count with it.
            decreasing_succeeded: !job.indexed()
                || optional(job.spec, "completions") != optional(job.spec, "parallelism"),
            invalid_completed_indexes: completed_indexes,
            invalid_failed_indexes: failed_indexes,
            completed_indexes_for_non_indexed: completed_indexes,
            failed_indexes_without_backoff_limit_per_index: failed_indexes,
            failed_indexes_overlapping_completed: failed_indexes || completed_indexes,
            failed_without_failure_target: failed || failed_indexes,
            complete_without_success_criteria_met: complete || success_criteria_met,
            finished_with_active: finished || active,
            finished_without_start_time: finished || start_time,
            finished_with_uncounted: finished || uncounted,
            start_time_update_unsuspended: start_time,
            completion_before_start: start_time || completion_time,
            not_complete_with_completion_time: complete || completion_time,
            complete_without_completion_time: complete || completion_time,
            complete_with_failed: complete || failed,
            complete_with_failure_target: complete || failure_target,
            more_ready_than_active: ready || active,
            finished_with_terminating: finished || terminating,
        }
    }

    /// `validateJobStatus`, with `AllowForSuccessCriteriaMetInExtendedScope`
    /// set (as it always is under `JobManagedBy`).
    fn validate(job: &Job, options: &Options, causes: &mut Vec<Cause>) {
        let status = job.status;
        for name in ["active", "succeeded", "failed"] {
            non_negative(count(status, name), name, causes);
        }
        for name in ["ready", "terminating"] {
            if let Some(value) = optional(status, name) {
                non_negative(value, name, causes);
            }
        }
        uncounted_uids(status, causes);
        let (complete, failed) = (job.complete(), job.failed());
        if options.complete_with_failed && complete && failed {
            causes.push(conditions_cause(
                "cannot set Complete=True and Failed=true conditions",
            ));
        }
        if options.complete_with_failure_target && complete && job.failure_target() {
            causes.push(conditions_cause(
                "cannot set Complete=True and FailureTarget=true conditions",
            ));
        }
        let (start, completion) = (job.time("startTime"), job.time("completionTime"));
        if options.not_complete_with_completion_time
            && let Some(completion) = completion.filter(|_| !complete)
        {
            causes.push(time_cause(
                "status.completionTime",
                completion,
                "cannot set completionTime when there is no Complete=True condition",
            ));
        }
        if options.complete_without_completion_time && completion.is_none() && complete {
            causes.push(Cause::required(
                "status.completionTime",
                "completionTime is required for Complete jobs",
            ));
        }
        if options.completion_before_start
            && let (Some(start), Some(completion)) = (start, completion)
            && completion < start
        {
            causes.push(time_cause(
                "status.completionTime",
                completion,
                "completionTime cannot be set before startTime",
            ));
        }
        if options.failed_without_failure_target && failed && !job.failure_target() {
            causes.push(conditions_cause(
                "cannot set Failed=True condition without the FailureTarget=true condition",
            ));
        }
        if options.complete_without_success_criteria_met && complete && !job.success_criteria_met()
        {
            causes.push(conditions_cause(
                "cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
            ));
        }
        let finished = job.finished();
        let active = count(status, "active");
        if options.finished_with_active && active > 0 && finished {
            causes.push(Cause::invalid_number(
                "status.active",
                active,
                "active>0 is invalid for finished job",
            ));
        }
        if options.finished_without_start_time && start.is_none() && finished {
            causes.push(Cause::required(
                "status.startTime",
                "startTime is required for finished job",
            ));
        }
        if options.finished_with_uncounted
            && finished
            && job
                .uncounted()
                .is_some_and(|[s, f]| !s.is_empty() || !f.is_empty())
        {
            causes.push(Cause::new(
                "status.uncountedTerminatedPods",
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: uncountedTerminatedPods needs to be empty for finished job",
                    go_uncounted(&status["uncountedTerminatedPods"])
                ),
            ));
        }
        indexes(job, options, causes);
        let terminating = optional(status, "terminating").unwrap_or(0);
        if options.finished_with_terminating && terminating > 0 && finished {
            causes.push(Cause::invalid_number(
                "status.terminating",
                terminating,
                "terminating>0 is invalid for finished job",
            ));
        }
        if options.more_ready_than_active
            && let Some(ready) = optional(status, "ready").filter(|r| *r > active)
        {
            causes.push(Cause::invalid_number(
                "status.ready",
                ready,
                "cannot set more ready pods than active",
            ));
        }
        let met = job.success_criteria_met();
        if met && failed {
            causes.push(conditions_cause(
                "cannot set SuccessCriteriaMet=True and Failed=true conditions",
            ));
        }
        if met && job.failure_target() {
            causes.push(conditions_cause(
                "cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
            ));
        }
        let success_policy = job.spec.get("successPolicy").is_some_and(|p| !p.is_null());
        if success_policy && !met && complete {
            causes.push(conditions_cause(
                "cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
            ));
        }
    }

    /// The uncounted pods' UIDs: none empty, none twice across both lists.
    fn uncounted_uids(status: &Value, causes: &mut Vec<Cause>) {
        let Some(uncounted) = status
            .get("uncountedTerminatedPods")
            .filter(|u| !u.is_null())
        else {
            return;
        };
        let mut seen: Vec<&str> = Vec::new();
        for list in ["succeeded", "failed"] {
            for (i, uid) in strings(uncounted.get(list)).into_iter().enumerate() {
                let at = format!("status.uncountedTerminatedPods.{list}[{i}]");
                if uid.is_empty() {
                    causes.push(names::invalid(&at, uid, "must not be empty".into()));
                } else if seen.contains(&uid) {
                    causes.push(Cause::duplicate(&at, uid));
                } else {
                    seen.push(uid);
                }
            }
        }
    }

    /// The completed and failed indexes: well formed below the
    /// completions, completed ones only for an indexed Job, failed ones
    /// only with a backoff limit per index and apart from the completed.
    fn indexes(job: &Job, options: &Options, causes: &mut Vec<Cause>) {
        let completions = optional(job.spec, "completions");
        let per_index = job
            .spec
            .get("backoffLimitPerIndex")
            .is_some_and(|l| !l.is_null());
        let completed = job.completed_indexes();
        let failed = job.failed_indexes();
        if options.invalid_completed_indexes
            && let Some(completions) = completions
            && let Err(problem) = indexes_format(completed, completions)
        {
            causes.push(names::invalid(
                "status.completedIndexes",
                completed,
                format!("error parsing completedIndexes: {problem}"),
            ));
        }
        if options.invalid_failed_indexes
            && per_index
            && let (Some(completions), Some(failed)) = (completions, failed)
            && let Err(problem) = indexes_format(failed, completions)
        {
            causes.push(names::invalid(
                "status.failedIndexes",
                failed,
                format!("error parsing failedIndexes: {problem}"),
            ));
        }
        if options.completed_indexes_for_non_indexed && !completed.is_empty() && !job.indexed() {
            causes.push(names::invalid(
                "status.completedIndexes",
                completed,
                "cannot set non-empty completedIndexes when non-indexed completion mode".into(),
            ));
        }
        if options.failed_indexes_without_backoff_limit_per_index
            && !per_index
            && let Some(failed) = failed
        {
            causes.push(names::invalid(
                "status.failedIndexes",
                failed,
                "cannot set non-null failedIndexes when backoffLimitPerIndex is null".into(),
            ));
        }
        if options.failed_indexes_overlapping_completed
            && let (Some(completions), Some(failed)) = (completions, failed)
            && let Err(problem) = apart(completed, failed, completions)
        {
            causes.push(names::invalid("status.failedIndexes", failed, problem));
        }
    }

    /// `validateIndexesFormat`: intervals in increasing order, each below
    /// `completions`.
    fn indexes_format(indexes: &str, completions: i64) -> Result<(), String> {
        if indexes.is_empty() {
            return Ok(());
        }
        let mut last: Option<i64> = None;
        for fragment in indexes.split(',') {
            let (x, y) = interval(fragment, completions)?;
            if let Some(last) = last.filter(|l| *l >= x) {
                return Err(format!(
                    "non-increasing order, previous: {last}, current: {x}"
                ));
            }
            last = Some(y);
        }
        Ok(())
    }

    /// `parseIndexInterval`: `x` or `x-y`, `x < y < completions`.
    fn interval(fragment: &str, completions: i64) -> Result<(i64, i64), String> {
        let limits: Vec<&str> = fragment.split('-').collect();
        if limits.len() > 2 {
            return Err(format!(
                "the fragment {fragment:?} violates the requirement that an index interval can have at most two parts separated by '-'"
            ));
        }
        let limit = |text: &str| -> Result<i64, String> {
            let value = go_atoi(text)
                .ok_or_else(|| format!("cannot convert string to integer for index: {text:?}"))?;
            if value >= completions {
                return Err(format!("too large index: {text:?}"));
            }
            Ok(value)
        };
        let x = limit(limits[0])?;
        let Some(second) = limits.get(1) else {
            return Ok((x, x));
        };
        let y = limit(second)?;
        if x >= y {
            return Err(format!("non-increasing order, previous: {x}, current: {y}"));
        }
        Ok((x, y))
    }

    /// Go's `strconv.Atoi`: an optional sign and decimal digits, in range.
    fn go_atoi(text: &str) -> Option<i64> {
        let digits = text.strip_prefix(['+', '-']).unwrap_or(text);
        if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        text.strip_prefix('+').unwrap_or(text).parse().ok()
    }

    /// `validateFailedIndexesNotOverlapCompleted`: walks both interval
    /// lists in step, skipping intervals that do not parse (the format
    /// check reports them).
    fn apart(completed: &str, failed: &str, completions: i64) -> Result<(), String> {
        if completed.is_empty() || failed.is_empty() {
            return Ok(());
        }
        let completed: Vec<&str> = completed.split(',').collect();
        let failed: Vec<&str> = failed.split(',').collect();
        let (mut c, mut f) = (0, 0);
        let mut completed_at = interval(completed[0], completions);
        let mut failed_at = interval(failed[0], completions);
        while c < completed.len() && f < failed.len() {
            match (&completed_at, &failed_at) {
                (Ok((cx, cy)), Ok((fx, fy))) => {
                    if cx <= fy && fx <= cy {
                        return Err(format!(
                            "failedIndexes and completedIndexes overlap at index: {}",
                            cx.max(fx)
                        ));
                    }
                    if cx <= fx {
                        c += 1;
                        if let Some(next) = completed.get(c) {
                            completed_at = interval(next, completions);
                        }
                    } else {
                        f += 1;
                        if let Some(next) = failed.get(f) {
                            failed_at = interval(next, completions);
                        }
                    }
                }
                (Err(_), _) => {
                    c += 1;
                    if let Some(next) = completed.get(c) {
                        completed_at = interval(next, completions);
                    }
                }
                (_, Err(_)) => {
                    f += 1;
                    if let Some(next) = failed.get(f) {
                        failed_at = interval(next, completions);
                    }
                }
            }
        }
        Ok(())
    }

    /// `field.Invalid(status.conditions, field.OmitValueType{}, detail)`:
    /// the value left out.
    fn conditions_cause(detail: &str) -> Cause {
        Cause::new(
            "status.conditions",
            "FieldValueInvalid",
            format!("Invalid value: {detail}"),
        )
    }

    /// `field.Invalid` of a `*metav1.Time`, shown by its `String()`.
    fn time_cause(field: &str, time: Timestamp, detail: &str) -> Cause {
        Cause::new(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {}: {detail}", go_time(time)),
        )
    }

    /// `%#v` of the internal `batch.UncountedTerminatedPods`.
    fn go_uncounted(uncounted: &Value) -> String {
        let list = |name: &str| match uncounted.get(name).and_then(Value::as_array) {
            None => "[]types.UID(nil)".to_string(),
            Some(uids) => {
                let shown: Vec<String> = uids
                    .iter()
                    .map(|u| format!("{:?}", u.as_str().unwrap_or_default()))
                    .collect();
                format!("[]types.UID{{{}}}", shown.join(", "))
            }
        };
        format!(
            "batch.UncountedTerminatedPods{{Succeeded:{}, Failed:{}}}",
            list("succeeded"),
            list("failed")
        )
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::{Cause, status_update_causes, update_causes};

    /// The messages of a status write of `status` over `old`'s, both on
    /// an object of `spec`.
    fn write(group: &str, kind: &str, spec: Value, status: Value, old: Value) -> Vec<String> {
        let new = json!({"metadata": {"name": "x"}, "spec": spec, "status": status});
        let old = json!({"metadata": {"name": "x"}, "spec": spec, "status": old});
        status_update_causes(group, kind, &new, &old)
            .iter()
            .map(Cause::message)
            .collect()
    }

    #[test]
    fn a_deployments_counts_are_not_negative_nor_above_its_replicas() {
        let found = write(
            "apps",
            "Deployment",
            json!({}),
            json!({"observedGeneration": -1, "replicas": 2, "updatedReplicas": 3,
                   "readyReplicas": 1, "availableReplicas": 2, "unavailableReplicas": -2,
                   "collisionCount": 1}),
            json!({"collisionCount": 2}),
        );
        assert_eq!(
            found,
            [
                "status.observedGeneration: Invalid value: -1: must be greater than or equal to 0",
                "status.unavailableReplicas: Invalid value: -2: must be greater than or equal to 0",
                "status.updatedReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than readyReplicas",
                "status.collisionCount: Invalid value: 1: cannot be decremented",
            ]
        );
    }

    #[test]
    fn replica_sets_stateful_sets_and_daemon_sets_check_their_own_counts() {
        assert_eq!(
            write(
                "apps",
                "ReplicaSet",
                json!({}),
                json!({"replicas": 1, "fullyLabeledReplicas": 2, "readyReplicas": -1}),
                json!({}),
            ),
            [
                "status.readyReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 2: cannot be greater than status.replicas",
                // 0 available is more than -1 ready.
                "status.availableReplicas: Invalid value: 0: cannot be greater than readyReplicas",
            ]
        );
        assert_eq!(
            write(
                "apps",
                "StatefulSet",
                json!({}),
                json!({"replicas": 2, "readyReplicas": 1, "currentReplicas": 3,
                       "availableReplicas": 2, "observedGeneration": -4}),
                json!({"collisionCount": 0}),
            ),
            [
                "status.observedGeneration: Invalid value: -4: must be greater than or equal to 0",
                "status.currentReplicas: Invalid value: 3: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 2: cannot be greater than status.readyReplicas",
                "status.collisionCount: Invalid value: 0: cannot be decremented",
            ]
        );
        assert_eq!(
            write(
                "apps",
                "DaemonSet",
                json!({}),
                json!({"numberMisscheduled": -1, "numberUnavailable": -3, "collisionCount": -1}),
                json!({}),
            ),
            [
                "status.numberMisscheduled: Invalid value: -1: must be greater than or equal to 0",
                "status.numberUnavailable: Invalid value: -3: must be greater than or equal to 0",
                "status.collisionCount: Invalid value: -1: must be greater than or equal to 0",
            ]
        );
    }

    #[test]
    fn a_status_write_leaves_the_spec_unchecked_and_other_kinds_meet_their_update_rules() {
        // A Deployment without a selector fails its own rules, not its
        // status strategy's.
        let spec = json!({"template": {"spec": {"containers": []}}});
        let deployment =
            json!({"metadata": {"name": "x"}, "spec": spec, "status": {"replicas": 1}});
        assert!(!update_causes("apps", "Deployment", &deployment, &deployment).is_empty());
        assert_eq!(
            write(
                "apps",
                "Deployment",
                spec,
                json!({"replicas": 1}),
                json!({})
            ),
            Vec::<String>::new()
        );
        let quota = json!({"metadata": {"name": "x"}, "spec": {"hard": {"cpu": "-1"}}});
        let found = update_causes("", "ResourceQuota", &quota, &quota);
        assert!(!found.is_empty());
        assert_eq!(
            status_update_causes("", "ResourceQuota", &quota, &quota),
            found
        );
    }

    #[test]
    fn a_namespace_s_phase_follows_its_deletion_and_a_controller_s_counts_a_replica_set_s() {
        let namespace = |deleted: bool, phase: &str| {
            let mut new = json!({"metadata": {"name": "x"}, "status": {"phase": phase}});
            if deleted {
                new["metadata"]["deletionTimestamp"] = json!("2026-11-26T16:41:48Z");
            }
            status_update_causes("", "Namespace", &new, &new)
                .iter()
                .map(Cause::message)
                .collect::<Vec<_>>()
        };
        assert!(namespace(false, "Active").is_empty());
        assert_eq!(
            namespace(false, "Terminating"),
            [
                "status.Phase: Invalid value: \"Terminating\": may only be 'Active' if `deletionTimestamp` is empty"
            ]
        );
        assert_eq!(
            namespace(true, "Active"),
            [
                "status.Phase: Invalid value: \"Active\": may only be 'Terminating' if `deletionTimestamp` is not empty"
            ]
        );
        assert_eq!(
            write(
                "",
                "ReplicationController",
                json!({}),
                json!({"replicas": -1}),
                json!({})
            ),
            [
                "status.replicas: Invalid value: -1: must be greater than or equal to 0",
                "status.fullyLabeledReplicas: Invalid value: 0: cannot be greater than status.replicas",
                "status.readyReplicas: Invalid value: 0: cannot be greater than status.replicas",
                "status.availableReplicas: Invalid value: 0: cannot be greater than status.replicas",
            ]
        );
    }

    #[test]
    fn an_ingress_status_names_addresses_and_hosts_keeping_old_addresses() {
        let found = write(
            "networking.k8s.io",
            "Ingress",
            json!({}),
            json!({"loadBalancer": {"ingress": [
                {"ip": "1.2.3.999"}, {"ip": "old"}, {"hostname": "10.0.0.1"}]}}),
            json!({"loadBalancer": {"ingress": [{"ip": "old"}]}}),
        );
        assert_eq!(
            found,
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"1.2.3.999\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.loadBalancer.ingress[2].hostname: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address",
            ]
        );
    }

    #[test]
    fn a_pods_qos_class_is_kept_and_its_addresses_named_once() {
        let found = write(
            "",
            "Pod",
            json!({"restartPolicy": "Always", "containers": [{"name": "app"}]}),
            json!({"qosClass": "Guaranteed",
                   "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.1"}],
                   "hostIP": "10.0.0.9", "hostIPs": [{"ip": "10.0.0.9"}, {"ip": "10.0.0.9"}]}),
            json!({"qosClass": "BestEffort"}),
        );
        assert_eq!(
            found,
            [
                "status.qosClass: Invalid value: \"Guaranteed\": field is immutable",
                "status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:\"10.0.0.1\"}, core.PodIP{IP:\"10.0.0.1\"}}: may specify no more than one IP for each IP family",
                "status.podIPs[1]: Duplicate value: core.PodIP{IP:\"10.0.0.1\"}",
                "status.hostIPs[1]: Duplicate value: core.HostIP{IP:\"10.0.0.9\"}",
                "status.hostIPs: Invalid value: []core.HostIP{core.HostIP{IP:\"10.0.0.9\"}, core.HostIP{IP:\"10.0.0.9\"}}: may specify no more than one IP for each IP family",
            ]
        );
    }

    #[test]
    fn a_pods_status_keeps_terminated_containers_and_names_its_node_and_addresses() {
        let spec = json!({"restartPolicy": "OnFailure",
            "containers": [{"name": "app"}, {"name": "done"}],
            "initContainers": [{"name": "init"}, {"name": "mesh", "restartPolicy": "Always"}]});
        let terminated = |code: i64| json!({"terminated": {"exitCode": code}});
        let was = json!({
            "containerStatuses": [{"name": "app", "state": terminated(1)},
                                  {"name": "done", "state": terminated(0)}],
            "initContainerStatuses": [{"name": "init", "state": terminated(0)},
                                      {"name": "mesh", "state": terminated(0)}],
            "ephemeralContainerStatuses": [{"name": "debug", "state": terminated(1)}]});
        let running = json!({"running": {}});
        let found = write(
            "",
            "Pod",
            spec.clone(),
            json!({"nominatedNodeName": "Node_1",
                "containerStatuses": [{"name": "app", "state": running},
                                      {"name": "done", "state": running}],
                "initContainerStatuses": [{"name": "init", "state": running},
                                          {"name": "mesh", "state": running}],
                "ephemeralContainerStatuses": [{"name": "debug", "state": {"waiting": {}}}],
                "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
                "hostIP": "192.0.2.1", "hostIPs": [{"ip": "192.0.2.2"}, {"ip": "nope"}]}),
            was.clone(),
        );
        assert_eq!(
            found,
            [
                "status.nominatedNodeName: Invalid value: \"Node_1\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "status.containerStatuses[1].state: Forbidden: may not be transitioned to non-terminated state",
                "status.initContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
                "status.ephemeralContainerStatuses[0].state: Forbidden: may not be transitioned to non-terminated state",
                "status.podIPs: Invalid value: []core.PodIP{core.PodIP{IP:\"10.0.0.1\"}, core.PodIP{IP:\"10.0.0.2\"}}: may specify no more than one IP for each IP family",
                "status.hostIPs[0].ip: Invalid value: \"192.0.2.2\": must be equal to `hostIP`",
                "status.hostIPs[1]: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.hostIPs: Internal error: failed to check for dual stack with error:ip <nil> is invalid",
                "status.hostIPs: Invalid value: []core.HostIP{core.HostIP{IP:\"192.0.2.2\"}, core.HostIP{IP:\"nope\"}}: may specify no more than one IP for each IP family",
            ]
        );
        // A pod that restarts always may run any container again; a pod IP
        // pair of both families, the old nomination and `podIP` over a
        // disagreeing list pass.
        let mut always = spec;
        always["restartPolicy"] = json!("Always");
        let mut was = was;
        was["nominatedNodeName"] = json!("Node_1");
        assert_eq!(
            write(
                "",
                "Pod",
                always,
                json!({"nominatedNodeName": "Node_1",
                    "containerStatuses": [{"name": "app", "state": {"running": {}}}],
                    "podIP": "10.0.0.1", "podIPs": [{"ip": "10.0.0.9"}, {"ip": "10.0.0.2"}],
                    "hostIP": "192.0.2.1", "hostIPs": [{"ip": "192.0.2.1"}, {"ip": "2001:db8::1"}]}),
                was,
            ),
            Vec::<String>::new()
        );
    }

    /// A Job's spec, of `fields` over a plain one.
    fn job_spec(fields: Value) -> Value {
        let mut spec = json!({"completions": 1, "parallelism": 1, "completionMode": "NonIndexed",
            "suspend": false, "backoffLimit": 6});
        for (field, value) in fields.as_object().unwrap() {
            spec[field] = value.clone();
        }
        spec
    }

    fn condition(kind: &str) -> Value {
        json!({"type": kind, "status": "True"})
    }

    const START: &str = "2026-01-01T10:00:00Z";

    #[test]
    fn a_jobs_counts_and_uncounted_pods() {
        let found = write(
            "batch",
            "Job",
            job_spec(json!({})),
            json!({"active": -1, "failed": -2, "ready": -1,
                   "uncountedTerminatedPods": {"succeeded": ["a", ""], "failed": ["a"]}}),
            json!({}),
        );
        assert_eq!(
            found,
            [
                "status.active: Invalid value: -1: must be greater than or equal to 0",
                "status.failed: Invalid value: -2: must be greater than or equal to 0",
                "status.ready: Invalid value: -1: must be greater than or equal to 0",
                "status.uncountedTerminatedPods.succeeded[1]: Invalid value: \"\": must not be empty",
                "status.uncountedTerminatedPods.failed[0]: Duplicate value: \"a\"",
                "status.failed: Invalid value: -2: cannot decrease the failed counter",
            ]
        );
    }

    #[test]
    fn a_job_finishes_only_whole() {
        // Complete alone: no completion time, no SuccessCriteriaMet, pods
        // still active and uncounted, no start time.
        let found = write(
            "batch",
            "Job",
            job_spec(json!({})),
            json!({"active": 1, "conditions": [condition("Complete")],
                   "uncountedTerminatedPods": {"succeeded": ["a"]}}),
            json!({"active": 1}),
        );
        assert_eq!(
            found,
            [
                "status.completionTime: Required value: completionTime is required for Complete jobs",
                "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                "status.active: Invalid value: 1: active>0 is invalid for finished job",
                "status.startTime: Required value: startTime is required for finished job",
                "status.uncountedTerminatedPods: Invalid value: batch.UncountedTerminatedPods{Succeeded:[]types.UID{\"a\"}, Failed:[]types.UID(nil)}: uncountedTerminatedPods needs to be empty for finished job",
            ]
        );
        // As the Job controller finishes one.
        let done = json!({"startTime": START, "completionTime": "2026-01-01T10:05:00Z",
            "succeeded": 1, "uncountedTerminatedPods": {},
            "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
        assert_eq!(
            write(
                "batch",
                "Job",
                job_spec(json!({})),
                done,
                json!({"startTime": START, "active": 1, "ready": 0})
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn completion_times_follow_start_times_and_the_complete_condition() {
        let found = write(
            "batch",
            "Job",
            job_spec(json!({})),
            json!({"startTime": START, "completionTime": "2026-01-01T09:59:59.5Z", "active": 1}),
            json!({"startTime": START, "active": 1}),
        );
        assert_eq!(
            found,
            [
                "status.completionTime: Invalid value: 2026-01-01 09:59:59.5 +0000 UTC: cannot set completionTime when there is no Complete=True condition",
                "status.completionTime: Invalid value: 2026-01-01 09:59:59.5 +0000 UTC: completionTime cannot be set before startTime",
            ]
        );
    }

    #[test]
    fn a_job_keeps_its_terminal_conditions_counters_and_times() {
        let was = json!({"startTime": START, "completionTime": "2026-01-01T10:05:00Z",
            "succeeded": 2, "failed": 1,
            "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
        let found = write(
            "batch",
            "Job",
            job_spec(json!({})),
            json!({"completionTime": "2026-01-01T10:06:00Z", "succeeded": 1,
                   "conditions": [condition("Failed")]}),
            was,
        );
        assert_eq!(
            found,
            [
                "status.completionTime: Invalid value: 2026-01-01 10:06:00 +0000 UTC: cannot set completionTime when there is no Complete=True condition",
                "status.conditions: Invalid value: cannot set Failed=True condition without the FailureTarget=true condition",
                "status.startTime: Required value: startTime is required for finished job",
                "status.conditions: Invalid value: cannot disable the terminal Complete=True condition",
                "status.failed: Invalid value: 0: cannot decrease the failed counter",
                "status.succeeded: Invalid value: 1: cannot decrease the succeeded counter",
                "status.completionTime: Invalid value: 2026-01-01 10:06:00 +0000 UTC: completionTime cannot be mutated",
                "status.startTime: Required value: startTime cannot be removed for unsuspended job",
                "status.conditions: Invalid value: cannot disable the SuccessCriteriaMet=True condition",
            ]
        );
    }

    #[test]
    fn a_breach_already_stored_is_reported_only_when_its_fields_change() {
        // Finished with active pods: a write of another field passes, one
        // that changes the active count does not.
        let was = json!({"startTime": START, "completionTime": START, "active": 2,
            "conditions": [condition("SuccessCriteriaMet"), condition("Complete")]});
        let mut now = was.clone();
        now["ready"] = json!(1);
        assert_eq!(
            write(
                "batch",
                "Job",
                job_spec(json!({})),
                now.clone(),
                was.clone()
            ),
            Vec::<String>::new()
        );
        now["active"] = json!(1);
        assert_eq!(
            write("batch", "Job", job_spec(json!({})), now, was),
            ["status.active: Invalid value: 1: active>0 is invalid for finished job"]
        );
    }

    #[test]
    fn indexes_are_well_formed_below_completions_and_apart() {
        let indexed = job_spec(
            json!({"completionMode": "Indexed", "completions": 5, "parallelism": 5,
            "backoffLimitPerIndex": 1}),
        );
        let found = write(
            "batch",
            "Job",
            indexed.clone(),
            json!({"completedIndexes": "0,2-1", "failedIndexes": "1-2,9"}),
            json!({}),
        );
        assert_eq!(
            found,
            [
                "status.completedIndexes: Invalid value: \"0,2-1\": error parsing completedIndexes: non-increasing order, previous: 2, current: 1",
                "status.failedIndexes: Invalid value: \"1-2,9\": error parsing failedIndexes: too large index: \"9\"",
            ]
        );
        assert_eq!(
            write(
                "batch",
                "Job",
                indexed,
                json!({"completedIndexes": "0-1,3", "failedIndexes": "2,3-4"}),
                json!({}),
            ),
            [
                "status.failedIndexes: Invalid value: \"2,3-4\": failedIndexes and completedIndexes overlap at index: 3"
            ]
        );
        let found = write(
            "batch",
            "Job",
            job_spec(json!({"completions": 3})),
            json!({"completedIndexes": "1,x", "failedIndexes": "0-1-2"}),
            json!({}),
        );
        assert_eq!(
            found,
            [
                "status.completedIndexes: Invalid value: \"1,x\": error parsing completedIndexes: cannot convert string to integer for index: \"x\"",
                "status.completedIndexes: Invalid value: \"1,x\": cannot set non-empty completedIndexes when non-indexed completion mode",
                "status.failedIndexes: Invalid value: \"0-1-2\": cannot set non-null failedIndexes when backoffLimitPerIndex is null",
            ]
        );
    }

    #[test]
    fn success_criteria_agree_with_failure_and_the_success_policy() {
        let spec = job_spec(
            json!({"completionMode": "Indexed", "completions": 2, "parallelism": 2,
            "successPolicy": {"rules": [{"succeededCount": 1}]}}),
        );
        let found = write(
            "batch",
            "Job",
            spec.clone(),
            json!({"startTime": START, "completionTime": START, "ready": 2, "active": 1,
                   "conditions": [condition("FailureTarget"), condition("SuccessCriteriaMet"),
                                  condition("Complete")]}),
            json!({"startTime": START, "active": 2}),
        );
        assert_eq!(
            found,
            [
                "status.conditions: Invalid value: cannot set Complete=True and FailureTarget=true conditions",
                "status.active: Invalid value: 1: active>0 is invalid for finished job",
                "status.ready: Invalid value: 2: cannot set more ready pods than active",
                "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True and FailureTarget=true conditions",
            ]
        );
        let complete = json!({"startTime": START, "completionTime": START,
            "conditions": [condition("Complete")]});
        assert_eq!(
            write(
                "batch",
                "Job",
                spec.clone(),
                complete.clone(),
                json!({"startTime": START})
            ),
            [
                "status.conditions: Invalid value: cannot set Complete=True condition without the SuccessCriteriaMet=true condition",
                "status.conditions: Invalid value: cannot set Complete=True for Job with SuccessPolicy unless SuccessCriteriaMet=True",
            ]
        );
        let mut late = complete.clone();
        late["conditions"] = json!([condition("Complete"), condition("SuccessCriteriaMet")]);
        assert_eq!(
            write("batch", "Job", spec, late, complete),
            [
                "status.conditions: Invalid value: cannot set SuccessCriteriaMet=True for Job already has Complete=true conditions"
            ]
        );
    }

    #[test]
    fn a_services_load_balancer_status() {
        assert_eq!(
            write(
                "",
                "Service",
                json!({"type": "ClusterIP"}),
                json!({"loadBalancer": {"ingress": [{"ip": "nope"}]}}),
                json!({}),
            ),
            [
                "status.loadBalancer.ingress: Forbidden: may only be used when `spec.type` is 'LoadBalancer'"
            ]
        );
        assert_eq!(
            write(
                "",
                "Service",
                json!({"type": "LoadBalancer"}),
                json!({"loadBalancer": {"ingress": [
                    {"ip": "10.0.0.300", "ipMode": "VIP"},
                    {"ip": "10.0.0.1"},
                    {"hostname": "10.0.0.2", "ipMode": "Proxy"},
                    {"ip": "010.0.0.3", "ipMode": "Direct", "hostname": "lb.example.com"}]}}),
                json!({}),
            ),
            [
                "status.loadBalancer.ingress[0].ip: Invalid value: \"10.0.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "status.loadBalancer.ingress[1].ipMode: Required value: must be specified when `ip` is set",
                "status.loadBalancer.ingress[2].ipMode: Forbidden: may not be specified when `ip` is not set",
                "status.loadBalancer.ingress[2].hostname: Invalid value: \"10.0.0.2\": must be a DNS name, not an IP address",
                "status.loadBalancer.ingress[3].ipMode: Unsupported value: \"Direct\": supported values: \"Proxy\", \"VIP\"",
            ]
        );
    }

    #[test]
    fn claims_budgets_and_autoscalers() {
        assert_eq!(
            write(
                "",
                "PersistentVolumeClaim",
                json!({"accessModes": ["ReadWriteOnce"]}),
                json!({"phase": "Bound", "capacity": {"storage": "-1500m", "cpu": "1"}}),
                json!({}),
            ),
            ["status.capacity[storage]: Invalid value: -2: must be a valid resource quantity"]
        );
        assert_eq!(
            write(
                "policy",
                "PodDisruptionBudget",
                json!({}),
                json!({"disruptionsAllowed": -1, "expectedPods": -2, "conditions": [
                    {"type": "DisruptionAllowed", "status": "Maybe", "reason": "1st",
                     "lastTransitionTime": START, "observedGeneration": -1},
                    {"type": "DisruptionAllowed", "status": "True"}]}),
                json!({}),
            ),
            [
                "status.conditions[0].status: Unsupported value: \"Maybe\": supported values: \"False\", \"True\", \"Unknown\"",
                "status.conditions[0].observedGeneration: Invalid value: -1: must be greater than or equal to zero",
                "status.conditions[0].reason: Invalid value: \"1st\": a condition reason must start with alphabetic character, optionally followed by a string of alphanumeric characters or '_,:', and must end with an alphanumeric character or '_' (e.g. 'ReasonA',  or 'ReasonB', regex used for validation is '[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?')",
                "status.conditions[1].type: Duplicate value: \"DisruptionAllowed\"",
                "status.conditions[1].lastTransitionTime: Required value: must be set",
                "status.conditions[1].reason: Required value: must be set",
                "status.disruptionsAllowed: Invalid value: -1: must be greater than or equal to 0",
                "status.expectedPods: Invalid value: -2: must be greater than or equal to 0",
            ]
        );
        assert_eq!(
            write(
                "autoscaling",
                "HorizontalPodAutoscaler",
                json!({}),
                json!({"currentReplicas": -1, "desiredReplicas": -2}),
                json!({}),
            ),
            [
                "status.currentReplicas: Invalid value: -1: must be greater than or equal to 0",
                "status.desiredReplicas: Invalid value: -2: must be greater than or equal to 0",
            ]
        );
    }
}
