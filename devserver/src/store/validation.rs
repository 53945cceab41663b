//! The built-in kinds' own validation rules that a reconciler most often
//! meets, as kube-apiserver's `pkg/apis/{core,apps}/validation` words
//! them: a workload's selector (required, not empty, matching its
//! template's labels), counts and strategies (`validation/workload.rs`); a pod template's or Pod's
//! volumes (each named with a unique RFC 1123 label, of exactly one
//! type) and containers (at least one, each named with a unique RFC 1123
//! label and an image, its probes and hooks with one handler each, its
//! ports valid, its environment variables named and each with one
//! source, its volume mounts and devices on the Pod's volumes at paths of
//! their own (`validation/mounts.rs`), its requests within its limits, its
//! policies (a resize policy's too) known, no host port twice) and init containers (the same, a sidecar's restart policy, hooks
//! and probes only on a sidecar); what the
//! spec says of the host's network, DNS (`validation/dns.rs`), scheduling
//! (`validation/scheduling.rs`), security contexts and its single fields
//! (`validation/pod_fields.rs`); a ConfigMap's and Secret's data keys,
//! size and type (`validation/data.rs`); an Event's reporting fields
//! (`validation/event.rs`); a Service's spec (`validation/service.rs`); a
//! Job's and CronJob's (`validation/batch.rs`); volumes, claims and storage
//! classes (`validation/storage.rs`); Endpoints, EndpointSlices, Ingresses,
//! IngressClasses and NetworkPolicies (`validation/networking.rs`);
//! PodDisruptionBudgets, PriorityClasses, ResourceQuotas and LimitRanges
//! (`validation/policy.rs`); HorizontalPodAutoscalers
//! (`validation/autoscaling.rs`).
//! Run on the defaulted object, as the server validates after defaulting;
//! each problem is a cause of a 422.

use std::collections::BTreeMap;

use recon_label_selector::Requirement;
use serde_json::Value;

use super::names;
use super::quantity;
use super::schema::Cause;

mod autoscaling;
mod batch;
mod data;
mod dns;
mod env;
mod event;
mod immutable;
mod label_selector;
mod mounts;
mod networking;
mod pod_fields;
mod policy;
mod probe;
mod scheduling;
mod security_context;
mod service;
mod status;
mod storage;
mod volume_source;
mod workload;

pub(crate) use super::ip::sloppy_ip;
pub(crate) use batch::{generate_selector as generate_job_selector, job_labels_shared};
pub(crate) use service::{
    cluster_ips_related_fields as service_cluster_ip_causes, externally_accessible, is_ipv6,
    needs_health_check, number, present,
};

/// The causes of `object`, an object of `group`/`kind`.
pub fn causes(group: &str, kind: &str, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    match (group, kind) {
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            workload(kind, object, &mut causes);
        }
        ("", "Pod") => {
            pod_spec(object.get("spec"), "spec", Spec::OfPod, &mut causes);
            containers_only_for_pod(object.get("spec").unwrap_or(&Value::Null), &mut causes);
        }
        ("", "Service") => service::validate(object, &mut causes),
        ("", "ConfigMap") => data::config_map(object, &mut causes),
        ("", "Secret") => data::secret(object, &mut causes),
        ("" | "events.k8s.io", "Event") => {
            event::legacy(object, group == "events.k8s.io", &mut causes);
        }
        ("batch", "Job") => batch::job(object, None, &mut causes),
        ("batch", "CronJob") => batch::cron_job(object, None, &mut causes),
        _ => {
            if let Some(check) = one_pass(group, kind) {
                check(kind, object, None, &mut causes);
            }
        }
    }
    causes
}

/// A module's check of a create (`old` none) or an update of `old`.
type OnePass = fn(&str, &Value, Option<&Value>, &mut Vec<Cause>);

/// The check of the kinds whose modules validate a create and an update
/// in one pass, each in its upstream order; none for other kinds.
fn one_pass(group: &str, kind: &str) -> Option<OnePass> {
    Some(match (group, kind) {
        ("", "PersistentVolume" | "PersistentVolumeClaim") | ("storage.k8s.io", "StorageClass") => {
            storage::validate
        }
        ("", "Endpoints") | ("discovery.k8s.io", "EndpointSlice") | ("networking.k8s.io", _) => {
            networking::validate
        }
        ("", "ResourceQuota" | "LimitRange")
        | ("policy", "PodDisruptionBudget")
        | ("scheduling.k8s.io", "PriorityClass") => policy::validate,
        ("autoscaling", "HorizontalPodAutoscaler") => {
            |_, object, old, causes| autoscaling::validate(object, old, causes)
        }
        _ => return None,
    })
}

/// The causes of `object` as a create of `group`/`kind`: [`causes`], and
/// what only a create must meet (an events.k8s.io Event's strict rules, a
/// Pod's ephemeral containers and gated node).
pub fn create_causes(group: &str, kind: &str, object: &Value) -> Vec<Cause> {
    let mut causes = causes(group, kind, object);
    match (group, kind) {
        ("events.k8s.io", "Event") => event::strict_create(object, &mut causes),
        ("", "Pod") => {
            pod_fields::pod_create(object.get("spec").unwrap_or(&Value::Null), &mut causes)
        }
        ("batch", "CronJob") => batch::cron_job_create(object, &mut causes),
        _ => {}
    }
    causes
}

/// The causes of `object` as an update of `old` through `group`/`kind`:
/// [`causes`], then what the update may not change; for a ConfigMap or
/// Secret the other way round, as `ValidateConfigMapUpdate` and
/// `ValidateSecretUpdate` validate the new object last, and a Service's
/// (`ValidateServiceUpdate`) its own checks first. A Job's or CronJob's
/// checks see the old object (`validation/batch.rs`).
pub fn update_causes(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<Cause> {
    if let Some(check) = one_pass(group, kind) {
        let mut found = Vec::new();
        check(kind, object, Some(old), &mut found);
        return found;
    }
    match (group, kind) {
        ("batch", "Job") => {
            let mut found = Vec::new();
            batch::job(object, Some(old), &mut found);
            batch::job_update(object, old, &mut found);
            return found;
        }
        ("batch", "CronJob") => {
            let mut found = Vec::new();
            batch::cron_job(object, Some(old), &mut found);
            return found;
        }
        _ => {}
    }
    if let ("", "Service") = (group, kind) {
        let mut found = Vec::new();
        service::update(object, old, &mut found);
        found.extend(causes(group, kind, object));
        return found;
    }
    if let ("", "ConfigMap" | "Secret") = (group, kind) {
        let mut found = Vec::new();
        immutable::check(group, kind, object, old, &mut found);
        found.extend(causes(group, kind, object));
        return found;
    }
    let mut causes = causes(group, kind, object);
    immutable::check(group, kind, object, old, &mut causes);
    causes
}

/// The causes of `object` as a status write (PUT or PATCH of `/status`)
/// over `old`: what the kind's status strategy's `ValidateUpdate` checks
/// (`validation/status.rs`), which leaves the spec (the stored one)
/// unchecked; a kind whose status strategy that module does not follow
/// meets [`update_causes`].
pub fn status_update_causes(group: &str, kind: &str, object: &Value, old: &Value) -> Vec<Cause> {
    status::causes(group, kind, object, old)
        .unwrap_or_else(|| update_causes(group, kind, object, old))
}

/// The field each message names (`spec.ports[0].port: Invalid value: ...`),
/// for tests that check which fields a check reports, in order.
#[cfg(test)]
fn fields_of(messages: &[String]) -> Vec<&str> {
    messages
        .iter()
        .map(|m| m.split(": ").next().unwrap_or_default())
        .collect()
}

/// `field.Invalid(field, "", detail)`, as the server reports a problem
/// it names no value for (a missing or extra source, an unset field).
fn invalid_unnamed(field: &str, detail: &str) -> Cause {
    names::invalid(field, "", detail.to_string())
}

/// The string at `pointer` in `value`; empty when absent.
pub(crate) fn text<'v>(value: &'v Value, pointer: &str) -> &'v str {
    value
        .pointer(pointer)
        .and_then(Value::as_str)
        .unwrap_or_default()
}

/// `field.Invalid` of a list of strings, in Go's `%#v`.
fn invalid_list(field: &str, values: &[&str], detail: &str) -> Cause {
    Cause::new(
        field,
        "FieldValueInvalid",
        format!(
            "Invalid value: {}: {detail}",
            go_strings("[]string", values)
        ),
    )
}

/// `%#v` of a slice of strings of type `kind`; an empty or absent list
/// shows as the server shows a nil slice, `kind(nil)`.
fn go_strings(kind: &str, values: &[&str]) -> String {
    if values.is_empty() {
        return format!("{kind}(nil)");
    }
    let shown: Vec<String> = values.iter().map(|v| format!("{v:?}")).collect();
    format!("{kind}{{{}}}", shown.join(", "))
}

/// The strings of a list field.
pub(crate) fn strings(list: Option<&Value>) -> Vec<&str> {
    items(list)
        .iter()
        .map(|v| v.as_str().unwrap_or_default())
        .collect()
}

/// A field at `field` that takes one of `supported` (`field.NotSupported`
/// otherwise); an empty value is `Required` with the detail `empty`, or
/// passes where `empty` is `None` (defaulting has filled the field in).
fn one_of(
    value: &str,
    field: &str,
    supported: &[&str],
    empty: Option<&str>,
    causes: &mut Vec<Cause>,
) {
    match (value, empty) {
        ("", None) => {}
        ("", Some(detail)) => causes.push(Cause::required(field, detail)),
        (value, _) if supported.contains(&value) => {}
        (other, _) => causes.push(Cause::not_supported(field, other, supported)),
    }
}

/// A Deployment, ReplicaSet, StatefulSet or DaemonSet: the fields each
/// kind checks first, its selector and template, then the rest
/// (`validation/workload.rs`).
fn workload(kind: &str, object: &Value, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    workload::before_template(kind, spec, causes);
    selector_and_template(kind, object, causes);
    workload::after_template(kind, spec, causes);
}

/// A workload's selector and its pod template.
fn selector_and_template(kind: &str, object: &Value, causes: &mut Vec<Cause>) {
    // As each kind's `Validate...Spec` has it: a DaemonSet's selector may
    // be missing (it then matches nothing), and one it cannot read still
    // has its template checked; the other kinds check no template against
    // a selector they cannot read (`LabelSelectorAsSelector` fails).
    let daemon_set = kind == "DaemonSet";
    let selector = object.pointer("/spec/selector").filter(|s| !s.is_null());
    let mut readable = true;
    match selector {
        Some(selector) => {
            let before = causes.len();
            label_selector::label_selector(selector, "spec.selector", causes);
            readable = causes.len() == before;
        }
        None if !daemon_set => causes.push(Cause::required("spec.selector", "")),
        None => {}
    }
    let empty = selector.is_some_and(|selector| {
        selector
            .get("matchLabels")
            .and_then(Value::as_object)
            .is_none_or(|m| m.is_empty())
            && selector
                .get("matchExpressions")
                .and_then(Value::as_array)
                .is_none_or(|e| e.is_empty())
    });
    let empty_cause = |selector: &Value| {
        // The ReplicaSet's check says "deployment", as upstream's does.
        let noun = match kind {
            "ReplicaSet" => "deployment".to_string(),
            other => other.to_ascii_lowercase(),
        };
        Cause::new(
            "spec.selector",
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: empty selector is invalid for {noun}",
                go_label_selector(selector)
            ),
        )
    };
    let labels = object
        .pointer("/spec/template/metadata/labels")
        .and_then(Value::as_object);
    let mismatch = match selector {
        None => true,
        Some(selector) => !empty && !selects(selector, labels),
    };
    let mismatch_cause = || {
        let labels: BTreeMap<&str, &str> = labels
            .into_iter()
            .flatten()
            .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
            .collect();
        Cause::new(
            "spec.template.metadata.labels",
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: `selector` does not match template `labels`",
                go_string_map(&labels)
            ),
        )
    };
    if daemon_set {
        if readable && mismatch {
            causes.push(mismatch_cause());
        }
        if let Some(selector) = selector.filter(|_| empty) {
            causes.push(empty_cause(selector));
        }
    } else {
        if let Some(selector) = selector.filter(|_| empty) {
            causes.push(empty_cause(selector));
        }
        if let Some(selector) = selector.filter(|_| !readable) {
            // A StatefulSet's cause has no detail.
            let detail = if kind == "StatefulSet" {
                ""
            } else {
                ": invalid label selector"
            };
            causes.push(Cause::new(
                "spec.selector",
                "FieldValueInvalid",
                format!("Invalid value: {}{detail}", go_label_selector(selector)),
            ));
            // A StatefulSet's template rules stand outside its selector's.
            if kind == "StatefulSet" {
                template_rules(kind, object.pointer("/spec/template/spec"), causes);
            }
            return;
        }
        if mismatch {
            causes.push(mismatch_cause());
        }
    }
    // A StatefulSet's template spec goes unchecked
    // (`ValidatePodTemplateSpecForStatefulSet` leaves `ValidatePodTemplateSpec`
    // out, as its mounts may name claim templates); the others check it as
    // `ValidatePodTemplateSpec` does.
    let template = object.pointer("/spec/template/spec");
    if kind != "StatefulSet" {
        pod_spec(template, "spec.template.spec", Spec::OfTemplate, causes);
        if template.is_some_and(|t| !items(t.get("ephemeralContainers")).is_empty()) {
            causes.push(Cause::forbidden(
                "spec.template.spec.ephemeralContainers",
                "ephemeral containers not allowed in pod template",
            ));
        }
    }
    template_rules(kind, template, causes);
}

/// What each workload kind adds to the pod spec's rules for its template
/// (`ValidatePodTemplateSpecForReplicaSet` for a Deployment or ReplicaSet,
/// `ValidateStatefulSetSpec`, `ValidateDaemonSetSpec`): its pods restart
/// `Always` and have no deadline, each kind wording the deadline its way.
fn template_rules(kind: &str, spec: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = spec.unwrap_or(&Value::Null);
    let policy = text(spec, "/restartPolicy");
    if !policy.is_empty() && policy != "Always" {
        causes.push(Cause::not_supported(
            "spec.template.spec.restartPolicy",
            policy,
            &["Always"],
        ));
    }
    let Some(deadline) = spec.get("activeDeadlineSeconds").filter(|d| !d.is_null()) else {
        return;
    };
    let field = "spec.template.spec.activeDeadlineSeconds";
    match kind {
        "Deployment" | "ReplicaSet" => causes.push(Cause::forbidden(
            field,
            "activeDeadlineSeconds in ReplicaSet is not Supported",
        )),
        "StatefulSet" => causes.push(Cause::forbidden(
            field,
            "activeDeadlineSeconds in StatefulSet is not Supported",
        )),
        _ => causes.push(Cause::invalid_number(
            field,
            deadline.as_i64().unwrap_or_default(),
            "activeDeadlineSeconds in DaemonSet is not Supported",
        )),
    }
}

/// Whose spec a pod spec is: a Pod's, or a workload's template's
/// (`PodValidationOptions.ResourceIsPod`).
#[derive(Clone, Copy, PartialEq)]
enum Spec {
    OfPod,
    OfTemplate,
}

/// A Pod's or pod template's spec at `path`, as `ValidatePodSpec` orders
/// its checks: volumes, containers, init containers, host network ports, restart and DNS
/// policy, node selector, security context, affinity, DNS config,
/// readiness and scheduling gates, topology spread constraints, names and
/// deadline, tolerations, host aliases, classes and preemption, OS.
fn pod_spec(spec: Option<&Value>, path: &str, of: Spec, causes: &mut Vec<Cause>) {
    let spec = spec.unwrap_or(&Value::Null);
    let volumes = volumes(spec.get("volumes"), &format!("{path}.volumes"), causes);
    containers(spec, &format!("{path}.containers"), &volumes, causes);
    init_containers(spec, &format!("{path}.initContainers"), &volumes, causes);
    host_network_ports(spec, path, of, causes);
    restart_policy(spec, path, causes);
    dns::policy(spec, path, causes);
    scheduling::node_selector(spec, path, causes);
    security_context::pod(spec, path, causes);
    scheduling::affinity(spec, path, causes);
    dns::config(spec, path, causes);
    pod_fields::readiness_gates(spec, path, causes);
    scheduling::scheduling_gates(spec, path, causes);
    scheduling::topology_spread_constraints(spec, path, causes);
    pod_fields::identity(spec, path, causes);
    scheduling::tolerations(spec, path, causes);
    dns::host_aliases(spec, path, causes);
    pod_fields::scheduling_classes(spec, path, causes);
    pod_fields::os(spec, path, causes);
}

/// What a Pod's containers and init containers meet and a template's do
/// not (`validateContainersOnlyForPod`): an image without leading or
/// trailing whitespace.
fn containers_only_for_pod(spec: &Value, causes: &mut Vec<Cause>) {
    for list in ["containers", "initContainers"] {
        for (i, container) in items(spec.get(list)).iter().enumerate() {
            let image = text(container, "/image");
            if image.trim() != image {
                causes.push(names::invalid(
                    &format!("spec.{list}[{i}].image"),
                    image,
                    "must not have leading or trailing whitespace".into(),
                ));
            }
        }
    }
}

/// On the host's network a container port is the host port: a Pod's (whose
/// host ports defaulting set) must match, a template's may also be unset
/// (`validatePodHostNetworkDeps`).
fn host_network_ports(spec: &Value, path: &str, of: Spec, causes: &mut Vec<Cause>) {
    if spec.get("hostNetwork").and_then(Value::as_bool) != Some(true) {
        return;
    }
    for (i, container) in items(spec.get("containers")).iter().enumerate() {
        for (j, port) in items(container.get("ports")).iter().enumerate() {
            let host = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            let container_port = port
                .get("containerPort")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            if (of == Spec::OfPod || host != 0) && host != container_port {
                causes.push(Cause::invalid_number(
                    &format!("{path}.containers[{i}].ports[{j}].hostPort"),
                    host,
                    "must match `containerPort` when `hostNetwork` is true",
                ));
            }
        }
    }
}

/// A Pod spec's restart policy, under `path` (`validateRestartPolicy`).
/// Defaulting has set a missing one to `Always` before a write is
/// validated.
fn restart_policy(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    one_of(
        text(spec, "/restartPolicy"),
        &format!("{path}.restartPolicy"),
        &["Always", "OnFailure", "Never"],
        None,
        causes,
    );
}

/// A Pod's volumes at `path` (`ValidateVolumes`): each named with a
/// unique RFC 1123 label, of exactly one type, whose source is checked
/// first ([`volume_source`]). The names.
fn volumes<'v>(list: Option<&'v Value>, path: &str, causes: &mut Vec<Cause>) -> Vec<&'v str> {
    let mut names = Vec::new();
    for (i, volume) in items(list).iter().enumerate() {
        let at = format!("{path}[{i}]");
        let before = causes.len();
        // The typed read kept only the fields of a volume: all but its
        // name are volume types, taken in the order the server checks them.
        let mut types: Vec<&str> = volume
            .as_object()
            .into_iter()
            .flatten()
            .filter(|(field, value)| *field != "name" && !value.is_null())
            .map(|(field, _)| field.as_str())
            .collect();
        types.sort_by_key(|t| VOLUME_TYPES.iter().position(|known| known == t));
        match types.as_slice() {
            [] => causes.push(Cause::required(&at, "must specify a volume type")),
            [kind, more @ ..] => {
                volume_source::pod_volume(kind, &volume[*kind], &at, causes);
                for field in more {
                    // The server names a second downward API source so.
                    let field = if *field == "downwardAPI" {
                        "downwarAPI"
                    } else {
                        field
                    };
                    causes.push(Cause::forbidden(
                        &format!("{at}.{field}"),
                        "may not specify more than 1 volume type",
                    ));
                }
            }
        }
        let name = volume.get("name").and_then(Value::as_str).unwrap_or("");
        let name_at = format!("{at}.name");
        if name.is_empty() {
            causes.push(Cause::required(&name_at, ""));
        } else {
            for problem in names::dns1123_label(name) {
                causes.push(names::invalid(&name_at, name, problem));
            }
        }
        if names.contains(&name) {
            causes.push(Cause::duplicate(&name_at, name));
        }
        // Only a volume without errors is one that mounts may name.
        if causes.len() == before {
            names.push(name);
        }
    }
    names
}

/// The volume types in the order `validateVolumeSource` checks them: the
/// first one a volume has is checked, the others are refused.
const VOLUME_TYPES: [&str; 30] = [
    "emptyDir",
    "hostPath",
    "gitRepo",
    "gcePersistentDisk",
    "awsElasticBlockStore",
    "secret",
    "nfs",
    "iscsi",
    "glusterfs",
    "flocker",
    "persistentVolumeClaim",
    "rbd",
    "cinder",
    "cephfs",
    "quobyte",
    "downwardAPI",
    "fc",
    "flexVolume",
    "configMap",
    "azureFile",
    "vsphereVolume",
    "photonPersistentDisk",
    "portworxVolume",
    "azureDisk",
    "storageos",
    "projected",
    "scaleIO",
    "csi",
    "ephemeral",
    "image",
];

/// A container's ports at `path` (`validateContainerPorts`): names valid
/// and unique, port numbers in range, protocols supported.
fn container_ports(list: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let mut seen = Vec::new();
    for (i, port) in items(list).iter().enumerate() {
        let at = format!("{path}[{i}]");
        if let Some(name) = port
            .get("name")
            .and_then(Value::as_str)
            .filter(|n| !n.is_empty())
        {
            let problems = port_name_problems(name);
            if !problems.is_empty() {
                for problem in problems {
                    causes.push(names::invalid(&format!("{at}.name"), name, problem.into()));
                }
            } else if seen.contains(&name) {
                causes.push(Cause::duplicate(&format!("{at}.name"), name));
            } else {
                seen.push(name);
            }
        }
        match port
            .get("containerPort")
            .and_then(Value::as_i64)
            .unwrap_or(0)
        {
            0 => causes.push(Cause::required(&format!("{at}.containerPort"), "")),
            number => port_number(number, &format!("{at}.containerPort"), causes),
        }
        match port.get("hostPort").and_then(Value::as_i64).unwrap_or(0) {
            0 => {}
            number => port_number(number, &format!("{at}.hostPort"), causes),
        }
        match port.get("protocol").and_then(Value::as_str).unwrap_or("") {
            "" => causes.push(Cause::required(&format!("{at}.protocol"), "")),
            "SCTP" | "TCP" | "UDP" => {}
            other => causes.push(Cause::not_supported(
                &format!("{at}.protocol"),
                other,
                &["SCTP", "TCP", "UDP"],
            )),
        }
    }
}

/// A container's resource requirements at `path`
/// (`ValidateResourceRequirements`): no negative quantity; each request
/// at most its limit, equal to it for a resource that cannot be
/// overcommitted (hugepages, extended resources), which needs a limit.
/// Quantities are quoted in the server's canonical form.
fn resources(resources: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    let empty = serde_json::Map::new();
    let quantities = |field: &str| {
        resources
            .and_then(|r| r.get(field))
            .and_then(Value::as_object)
            .unwrap_or(&empty)
    };
    let (limits, requests) = (quantities("limits"), quantities("requests"));
    let quantity = |value: &Value| {
        let text = value.as_str().unwrap_or_default();
        (
            quantity::parse(text),
            quantity::canonical(text).unwrap_or_else(|| text.to_string()),
        )
    };
    let negative = |field: String, value: &Value, causes: &mut Vec<Cause>| {
        let (nanos, text) = quantity(value);
        if nanos.is_some_and(|n| n < 0) {
            causes.push(names::invalid(
                &field,
                &text,
                "must be greater than or equal to 0".into(),
            ));
        }
    };
    for (name, value) in limits {
        negative(format!("{path}.limits[{name}]"), value, causes);
    }
    for (name, value) in requests {
        negative(format!("{path}.requests[{name}]"), value, causes);
        let overcommit = overcommit_allowed(name);
        let (request, request_text) = quantity(value);
        match limits.get(name) {
            Some(limit) => {
                let (limit, limit_text) = quantity(limit);
                let problem = if request != limit && !overcommit {
                    format!("must be equal to {name} limit of {limit_text}")
                } else if request > limit {
                    format!("must be less than or equal to {name} limit of {limit_text}")
                } else {
                    continue;
                };
                causes.push(names::invalid(
                    &format!("{path}.requests"),
                    &request_text,
                    problem,
                ));
            }
            None if !overcommit => causes.push(Cause::required(
                &format!("{path}.limits"),
                "Limit must be set for non overcommitable resources",
            )),
            None => {}
        }
    }
}

/// Whether a resource's request may be below its limit
/// (`IsOvercommitAllowed`): a native resource that is not hugepages.
fn overcommit_allowed(name: &str) -> bool {
    let native = !name.contains('/') || name.contains("kubernetes.io/");
    native && !name.starts_with("hugepages-")
}

/// A port number out of range (`IsValidPortNum`).
fn port_number(number: i64, field: &str, causes: &mut Vec<Cause>) {
    if !(1..=65535).contains(&number) {
        causes.push(Cause::invalid_number(
            field,
            number,
            "must be between 1 and 65535, inclusive",
        ));
    }
}

/// What is wrong with a port's name (`IsValidPortName`: an IANA service
/// name), in apimachinery's words.
fn port_name_problems(name: &str) -> Vec<&'static str> {
    let mut problems = Vec::new();
    if name.len() > 15 {
        problems.push("must be no more than 15 characters");
    }
    if !name
        .bytes()
        .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-')
    {
        problems.push("must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)");
    }
    if !name.bytes().any(|b| b.is_ascii_lowercase()) {
        problems.push("must contain at least one letter (a-z)");
    }
    if name.contains("--") {
        problems.push("must not contain consecutive hyphens");
    }
    if name.starts_with('-') || name.ends_with('-') {
        problems.push("must not begin or end with a hyphen");
    }
    problems
}

/// The items of a list field; none when absent.
pub(crate) fn items(list: Option<&Value>) -> &[Value] {
    list.and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
}

/// Whether a label selector's `matchLabels` and `matchExpressions` hold
/// for `labels`, each as the label selector crate's requirement; an
/// unknown operator holds for nothing.
fn selects(selector: &Value, labels: Option<&serde_json::Map<String, Value>>) -> bool {
    let none = serde_json::Map::new();
    let labels = labels.unwrap_or(&none);
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let equal = selector
        .get("matchLabels")
        .and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| Some(Requirement::Equals(k.clone(), text(v))));
    let expressions = selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|e| {
            let key = e.get("key").map(text).unwrap_or_default();
            let values = || {
                e.get("values")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(text)
                    .collect()
            };
            match e.get("operator").and_then(Value::as_str)? {
                "In" => Some(Requirement::In(key, values())),
                "NotIn" => Some(Requirement::NotIn(key, values())),
                "Exists" => Some(Requirement::Exists(key)),
                "DoesNotExist" => Some(Requirement::DoesNotExist(key)),
                _ => None,
            }
        });
    equal
        .chain(expressions)
        .all(|requirement| requirement.is_some_and(|r| r.matches(labels)))
}

/// Go's `%#v` of a `map[string]string`.
fn go_string_map(map: &BTreeMap<&str, &str>) -> String {
    let entries: Vec<String> = map.iter().map(|(k, v)| format!("{k:?}:{v:?}")).collect();
    format!("map[string]string{{{}}}", entries.join(", "))
}

/// Go's `%#v` of a `*metav1.LabelSelector`, as a message shows it.
fn go_label_selector(selector: &Value) -> String {
    let labels = match selector.get("matchLabels").and_then(Value::as_object) {
        None => "map[string]string(nil)".to_string(),
        Some(labels) => go_string_map(
            &labels
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str().unwrap_or_default()))
                .collect(),
        ),
    };
    let go_strings = |list: Option<&Value>| match list.and_then(Value::as_array) {
        None => "[]string(nil)".to_string(),
        Some(values) => {
            let values: Vec<String> = values
                .iter()
                .map(|v| format!("{:?}", v.as_str().unwrap_or_default()))
                .collect();
            format!("[]string{{{}}}", values.join(", "))
        }
    };
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]v1.LabelSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let items: Vec<String> = list
                .iter()
                .map(|e| {
                    format!(
                        "v1.LabelSelectorRequirement{{Key:{:?}, Operator:{:?}, Values:{}}}",
                        text(e, "/key"),
                        text(e, "/operator"),
                        go_strings(e.get("values"))
                    )
                })
                .collect();
            format!("[]v1.LabelSelectorRequirement{{{}}}", items.join(", "))
        }
    };
    format!("&v1.LabelSelector{{MatchLabels:{labels}, MatchExpressions:{expressions}}}")
}

/// A Pod's containers at `path`, mounting its `volumes`
/// (`validateContainers`): at least one, each valid, named once, with valid
/// hooks and probes and no restart policy of its own; then no host port
/// taken twice across them.
fn containers(spec: &Value, path: &str, volumes: &[&str], causes: &mut Vec<Cause>) {
    let items = items(spec.get("containers"));
    if items.is_empty() {
        causes.push(Cause::required(path, ""));
        return;
    }
    let grace = grace_period(spec);
    let mut seen = Vec::new();
    for (i, container) in items.iter().enumerate() {
        let at = format!("{path}[{i}]");
        container_common(spec, container, &at, volumes, causes);
        // A container without a name counts as named "".
        let name = text(container, "/name");
        if seen.contains(&name) {
            causes.push(Cause::duplicate(&format!("{at}.name"), name));
        } else {
            seen.push(name);
        }
        probe::lifecycle_and_probes(container, &at, grace, causes);
        if container.get("restartPolicy").is_some_and(|p| !p.is_null()) {
            causes.push(Cause::forbidden(
                &format!("{at}.restartPolicy"),
                "may not be set for non-init containers",
            ));
        }
    }
    host_port_conflicts(items, path, causes);
}

/// A Pod's init containers at `path` (`validateInitContainers`): each
/// valid, a restart policy only `Always` (a sidecar), named apart from
/// every container, its own host ports apart, hooks and probes only on a
/// sidecar.
fn init_containers(spec: &Value, path: &str, volumes: &[&str], causes: &mut Vec<Cause>) {
    let grace = grace_period(spec);
    let mut names: Vec<&str> = items(spec.get("containers"))
        .iter()
        .filter_map(|c| c.get("name").and_then(Value::as_str))
        .collect();
    for (i, container) in items(spec.get("initContainers")).iter().enumerate() {
        let at = format!("{path}[{i}]");
        container_common(spec, container, &at, volumes, causes);
        let policy = container.get("restartPolicy").and_then(Value::as_str);
        if let Some(other) = policy.filter(|p| *p != "Always") {
            causes.push(Cause::not_supported(
                &format!("{at}.restartPolicy"),
                other,
                &["Always"],
            ));
        }
        let name = text(container, "/name");
        if names.contains(&name) {
            causes.push(Cause::duplicate(&format!("{at}.name"), name));
        } else if !name.is_empty() {
            names.push(name);
        }
        // Init containers run one by one: each one's ports apart.
        host_port_conflicts(std::slice::from_ref(container), path, causes);
        if policy == Some("Always") {
            probe::lifecycle_and_probes(container, &at, grace, causes);
        } else {
            probe::forbid_lifecycle_and_probes(container, &at, causes);
        }
    }
}

/// A pod spec's termination grace period, as defaulting leaves it.
fn grace_period(spec: &Value) -> i64 {
    spec.get("terminationGracePeriodSeconds")
        .and_then(Value::as_i64)
        .unwrap_or(30)
}

/// What every kind of container of the pod spec `spec` must meet
/// (`validateContainerCommon`): a name that is an RFC 1123 label, an
/// image, a termination message policy, valid ports, environment, mounts
/// of the Pod's `volumes`, a pull policy, resources and security context.
fn container_common(
    spec: &Value,
    container: &Value,
    at: &str,
    volumes: &[&str],
    causes: &mut Vec<Cause>,
) {
    match container
        .get("name")
        .and_then(Value::as_str)
        .filter(|n| !n.is_empty())
    {
        None => causes.push(Cause::required(&format!("{at}.name"), "")),
        Some(name) => {
            for problem in names::dns1123_label(name) {
                causes.push(names::invalid(&format!("{at}.name"), name, problem));
            }
        }
    }
    if text(container, "/image").is_empty() {
        causes.push(Cause::required(&format!("{at}.image"), ""));
    }
    one_of(
        text(container, "/terminationMessagePolicy"),
        &format!("{at}.terminationMessagePolicy"),
        &["File", "FallbackToLogsOnError"],
        Some(""),
        causes,
    );
    container_ports(container.get("ports"), &format!("{at}.ports"), causes);
    env::env(container.get("env"), &format!("{at}.env"), causes);
    env::env_from(container.get("envFrom"), &format!("{at}.envFrom"), causes);
    mounts::volume_mounts(container, &format!("{at}.volumeMounts"), volumes, causes);
    mounts::volume_devices(
        spec,
        container,
        &format!("{at}.volumeDevices"),
        volumes,
        causes,
    );
    one_of(
        text(container, "/imagePullPolicy"),
        &format!("{at}.imagePullPolicy"),
        &["Always", "IfNotPresent", "Never"],
        Some(""),
        causes,
    );
    resources(
        container.get("resources"),
        &format!("{at}.resources"),
        causes,
    );
    resize_policy(spec, container, &format!("{at}.resizePolicy"), causes);
    let host_users = spec.get("hostUsers").and_then(Value::as_bool) != Some(false);
    security_context::container(container, at, host_users, causes);
}

/// A container's resize policy at `path` (`validateResizePolicy`): each
/// resource `cpu` or `memory` once, its restart policy `NotRequired` or
/// `RestartContainer`, and `NotRequired` in a Pod that never restarts.
/// As upstream, the causes but a duplicate's name the list, not the item.
fn resize_policy(spec: &Value, container: &Value, path: &str, causes: &mut Vec<Cause>) {
    let mut seen = Vec::new();
    for (i, policy) in items(container.get("resizePolicy")).iter().enumerate() {
        let resource = text(policy, "/resourceName");
        if seen.contains(&resource) {
            causes.push(Cause::duplicate(&format!("{path}[{i}]"), resource));
        }
        seen.push(resource);
        one_of(resource, path, &["cpu", "memory"], Some(""), causes);
        let restart = text(policy, "/restartPolicy");
        one_of(
            restart,
            path,
            &["NotRequired", "RestartContainer"],
            Some(""),
            causes,
        );
        if text(spec, "/restartPolicy") == "Never" && restart != "NotRequired" {
            causes.push(names::invalid(
                path,
                restart,
                "must be 'NotRequired' when `restartPolicy` is 'Never'".into(),
            ));
        }
    }
}

/// No two of the containers' ports take the same host port, protocol and
/// host IP (`checkHostPortConflicts`).
fn host_port_conflicts(containers: &[Value], path: &str, causes: &mut Vec<Cause>) {
    let mut taken = Vec::new();
    for (i, container) in containers.iter().enumerate() {
        for (j, port) in items(container.get("ports")).iter().enumerate() {
            let number = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0);
            if number == 0 {
                continue;
            }
            let key = format!(
                "{}/{}/{number}",
                text(port, "/protocol"),
                text(port, "/hostIP")
            );
            if taken.contains(&key) {
                causes.push(Cause::duplicate(
                    &format!("{path}[{i}].ports[{j}].hostPort"),
                    &key,
                ));
            } else {
                taken.push(key);
            }
        }
    }
}

#[cfg(test)]
pub(super) mod tests {
    use serde_json::json;

    use super::*;

    /// The messages of what `check` finds in `spec` at `spec`.
    pub(super) fn spec_messages(
        check: fn(&Value, &str, &mut Vec<Cause>),
        spec: Value,
    ) -> Vec<String> {
        let mut causes = Vec::new();
        check(&spec, "spec", &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    /// The messages of `object`'s causes once defaulted, as the server
    /// validates a write.
    fn messages(group: &str, kind: &str, mut object: Value) -> Vec<String> {
        crate::store::defaults::apply(group, kind, &mut object);
        causes(group, kind, &object)
            .iter()
            .map(Cause::message)
            .collect()
    }

    fn deployment(selector: Value, labels: Value, containers: Value) -> Value {
        json!({"spec": {"replicas": 1, "selector": selector,
            "template": {"metadata": {"labels": labels}, "spec": {"containers": containers}}}})
    }

    #[test]
    fn host_ports_are_unique_and_match_container_ports_on_the_host_network() {
        let containers = json!([
            {"name": "a", "image": "nginx", "ports": [
                {"containerPort": 80, "hostPort": 8080, "protocol": "TCP"},
                {"containerPort": 81, "hostPort": 81, "protocol": "UDP"}]},
            {"name": "b", "image": "nginx", "ports": [
                {"containerPort": 82, "hostPort": 8080, "protocol": "TCP"},
                {"containerPort": 83, "hostPort": 8080, "protocol": "TCP", "hostIP": "10.0.0.1"},
                {"containerPort": 84, "protocol": "TCP"}]}]);
        let pod = json!({"spec": {"containers": containers.clone()}});
        assert_eq!(
            messages("", "Pod", pod),
            ["spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\""]
        );
        let pod = json!({"spec": {"hostNetwork": true, "containers": containers.clone()}});
        let mismatch = |at: &str, port: i64| {
            format!(
                "{at}.hostPort: Invalid value: {port}: must match `containerPort` when `hostNetwork` is true"
            )
        };
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[1].ports[0].hostPort: Duplicate value: \"TCP//8080\"".to_string(),
                mismatch("spec.containers[0].ports[0]", 8080),
                mismatch("spec.containers[1].ports[0]", 8080),
                mismatch("spec.containers[1].ports[1]", 8080),
            ]
        );
        // A template may leave the host port to the Pod's defaults.
        let mut set = deployment(
            json!({"matchLabels": {"a": "b"}}),
            json!({"a": "b"}),
            containers,
        );
        set["spec"]["template"]["spec"]["hostNetwork"] = json!(true);
        let found = messages("apps", "Deployment", set);
        assert!(found.iter().all(|m| !m.contains("ports[2]")), "{found:?}");
        assert_eq!(found.len(), 4, "{found:?}");
    }

    #[test]
    fn scheduling_gates_are_unique_qualified_names() {
        let pod = json!({"spec": {"containers": [{"name": "a", "image": "nginx"}],
            "schedulingGates": [{"name": "example.com/quota"}, {"name": "example.com/quota"}, {"name": "-x"}]}});
        let found = messages("", "Pod", pod);
        assert_eq!(
            found[0],
            "spec.schedulingGates[1]: Duplicate value: \"example.com/quota\""
        );
        assert!(
            found[1].starts_with(
                "spec.schedulingGates[2]: Invalid value: \"-x\": name part must consist of"
            ),
            "{found:?}"
        );
        assert_eq!(found.len(), 2);
    }

    /// Each workload kind's pods restart `Always` and have no deadline,
    /// the deadline refused in each kind's words, a StatefulSet's even when
    /// its selector cannot be read.
    #[test]
    fn workload_templates_restart_always_and_have_no_deadline() {
        let mut template = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
            json!([{"name": "web", "image": "nginx"}]),
        );
        template["spec"]["template"]["spec"]["restartPolicy"] = json!("OnFailure");
        template["spec"]["template"]["spec"]["activeDeadlineSeconds"] = json!(30);
        let restart = "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\"";
        let deadline = "spec.template.spec.activeDeadlineSeconds";
        for (kind, refused) in [
            (
                "ReplicaSet",
                "Forbidden: activeDeadlineSeconds in ReplicaSet is not Supported",
            ),
            (
                "StatefulSet",
                "Forbidden: activeDeadlineSeconds in StatefulSet is not Supported",
            ),
            (
                "DaemonSet",
                "Invalid value: 30: activeDeadlineSeconds in DaemonSet is not Supported",
            ),
        ] {
            assert_eq!(
                messages("apps", kind, template.clone()),
                [restart.to_string(), format!("{deadline}: {refused}")],
                "{kind}"
            );
        }
        let mut unreadable = template.clone();
        unreadable["spec"]["selector"] =
            json!({"matchExpressions": [{"key": "app", "operator": "In"}]});
        let statefulset = messages("apps", "StatefulSet", unreadable.clone());
        assert_eq!(statefulset.len(), 4, "{statefulset:?}");
        assert_eq!(statefulset[2], restart);
        assert_eq!(messages("apps", "ReplicaSet", unreadable).len(), 2);
    }

    #[test]
    fn a_workload_s_selector_must_select_its_template() {
        let ok = deployment(
            json!({"matchLabels": {"app": "web"}, "matchExpressions": [{"key": "tier", "operator": "In", "values": ["a", "b"]}]}),
            json!({"app": "web", "tier": "a"}),
            json!([{"name": "web", "image": "nginx"}]),
        );
        assert!(messages("apps", "Deployment", ok).is_empty());
        let mismatch = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "api", "tier": "a"}),
            json!([{"name": "web", "image": "nginx"}]),
        );
        assert_eq!(
            messages("apps", "Deployment", mismatch),
            [
                "spec.template.metadata.labels: Invalid value: map[string]string{\"app\":\"api\", \"tier\":\"a\"}: `selector` does not match template `labels`"
            ]
        );
        let mut missing = deployment(json!(null), json!({}), json!([{"name": "w", "image": "i"}]));
        missing["spec"]["replicas"] = json!(-1);
        // A missing selector is Nothing, which no template matches.
        let no_match = "spec.template.metadata.labels: Invalid value: map[string]string{}: `selector` does not match template `labels`";
        assert_eq!(
            messages("apps", "StatefulSet", missing.clone()),
            [
                "spec.replicas: Invalid value: -1: must be greater than or equal to 0",
                "spec.selector: Required value",
                no_match,
            ]
        );
        // A DaemonSet's may be missing: only the mismatch.
        missing["spec"]["replicas"] = json!(1);
        assert_eq!(messages("apps", "DaemonSet", missing), [no_match]);
        let empty = deployment(
            json!({}),
            json!({"app": "x"}),
            json!([{"name": "w", "image": "i"}]),
        );
        assert!(
            messages("apps", "ReplicaSet", empty)[0]
                .ends_with("empty selector is invalid for deployment"),
            "upstream's ReplicaSet check names deployment"
        );
        // A selector the server cannot read: a Deployment's template goes
        // unchecked, a StatefulSet's cause has no detail, a DaemonSet's
        // template is checked all the same.
        let unreadable = deployment(
            json!({"matchExpressions": [{"key": "a", "operator": "Bogus"}]}),
            json!({"app": "x"}),
            json!([{"name": "w"}]),
        );
        let bogus = "spec.selector.matchExpressions[0].operator: Invalid value: \"Bogus\": not a valid selector operator";
        let shown = "&v1.LabelSelector{MatchLabels:map[string]string(nil), MatchExpressions:[]v1.LabelSelectorRequirement{v1.LabelSelectorRequirement{Key:\"a\", Operator:\"Bogus\", Values:[]string(nil)}}}";
        assert_eq!(
            messages("apps", "Deployment", unreadable.clone()),
            [
                bogus.to_string(),
                format!("spec.selector: Invalid value: {shown}: invalid label selector")
            ]
        );
        assert_eq!(
            messages("apps", "StatefulSet", unreadable.clone())[1],
            format!("spec.selector: Invalid value: {shown}")
        );
        assert_eq!(
            messages("apps", "DaemonSet", unreadable),
            [
                bogus,
                "spec.template.spec.containers[0].image: Required value"
            ]
        );
    }

    #[test]
    fn containers_need_unique_label_names_and_images() {
        let pod = json!({"spec": {"containers": [
            {"name": "web", "image": "nginx"},
            {"name": "web", "image": "nginx"},
            {"name": "Side_Car"},
            {"image": "x"}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[1].name: Duplicate value: \"web\"",
                "spec.containers[2].name: Invalid value: \"Side_Car\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.containers[2].image: Required value",
                "spec.containers[3].name: Required value",
            ]
        );
        assert_eq!(
            messages("", "Pod", json!({"spec": {}})),
            ["spec.containers: Required value"]
        );
    }

    #[test]
    fn volumes_have_one_type_and_unique_names_and_mounts_name_them() {
        let pod = json!({"spec": {
            "volumes": [
                {"name": "data", "emptyDir": {}},
                {"name": "data", "configMap": {"name": "c"}},
                {"name": "none"},
                {"name": "Two", "emptyDir": {}, "secret": {"secretName": "s"}}
            ],
            "containers": [{"name": "web", "image": "nginx", "volumeMounts": [
                {"name": "data", "mountPath": "/data"},
                {"name": "cache", "mountPath": "/data"},
                {"name": "none", "mountPath": ""}
            ]}]
        }});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.volumes[1].name: Duplicate value: \"data\"",
                "spec.volumes[3].secret: Forbidden: may not specify more than 1 volume type",
                "spec.volumes[3].name: Invalid value: \"Two\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.containers[0].volumeMounts[1].name: Not found: \"cache\"",
                "spec.containers[0].volumeMounts[1].mountPath: Invalid value: \"/data\": must be unique",
                // The volume naming no source is an empty directory
                // (`SetDefaults_Volume`), so the mount finds it.
                "spec.containers[0].volumeMounts[2].mountPath: Required value",
            ]
        );
        // A pod template's mounts name its own volumes.
        let deployment = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
            json!([{"name": "web", "image": "nginx", "volumeMounts": [{"name": "gone", "mountPath": "/x"}]}]),
        );
        assert_eq!(
            messages("apps", "Deployment", deployment),
            ["spec.template.spec.containers[0].volumeMounts[0].name: Not found: \"gone\""]
        );
    }

    #[test]
    fn container_ports_are_named_numbered_and_of_a_protocol_as_iana_and_the_server_want() {
        let pod = json!({"spec": {"containers": [{"name": "web", "image": "nginx", "ports": [
            {"name": "http", "containerPort": 80, "protocol": "TCP"},
            {"name": "http", "containerPort": 8080, "protocol": "TCP"},
            {"name": "Metrics--", "containerPort": 70000, "hostPort": -1, "protocol": "QUIC"},
            {"containerPort": 0, "protocol": "UDP"}
        ]}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[0].ports[1].name: Duplicate value: \"http\"",
                "spec.containers[0].ports[2].name: Invalid value: \"Metrics--\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.containers[0].ports[2].name: Invalid value: \"Metrics--\": must not contain consecutive hyphens",
                "spec.containers[0].ports[2].name: Invalid value: \"Metrics--\": must not begin or end with a hyphen",
                "spec.containers[0].ports[2].containerPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[2].hostPort: Invalid value: -1: must be between 1 and 65535, inclusive",
                "spec.containers[0].ports[2].protocol: Unsupported value: \"QUIC\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.containers[0].ports[3].containerPort: Required value",
            ]
        );
    }

    #[test]
    fn requests_stay_within_limits_quoted_in_canonical_form() {
        let pod = |resources: Value| json!({"spec": {"containers": [{"name": "web", "image": "nginx", "resources": resources}]}});
        assert_eq!(
            messages(
                "",
                "Pod",
                pod(json!({"requests": {"cpu": "1.5", "memory": "1Gi"},
                                           "limits": {"cpu": "1000m", "memory": "1024Mi"}}))
            ),
            [
                "spec.containers[0].resources.requests: Invalid value: \"1500m\": must be less than or equal to cpu limit of 1"
            ]
        );
        assert_eq!(
            messages("", "Pod", pod(json!({"limits": {"cpu": "-1"}}))),
            // A Pod requests what it limits (`SetDefaults_Pod`).
            [
                "spec.containers[0].resources.limits[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.containers[0].resources.requests[cpu]: Invalid value: \"-1\": must be greater than or equal to 0"
            ]
        );
        assert_eq!(
            messages(
                "",
                "Pod",
                pod(json!({"requests": {"example.com/gpu": "1"},
                                           "limits": {"example.com/gpu": "2"}}))
            ),
            [
                "spec.containers[0].resources.requests: Invalid value: \"1\": must be equal to example.com/gpu limit of 2"
            ]
        );
        assert_eq!(
            messages(
                "",
                "Pod",
                pod(json!({"requests": {"hugepages-2Mi": "2Mi"}}))
            ),
            [
                "spec.containers[0].resources.limits: Required value: Limit must be set for non overcommitable resources"
            ]
        );
        assert!(
            messages(
                "",
                "Pod",
                pod(json!({"requests": {"cpu": "250m"}, "limits": {"cpu": "1"}}))
            )
            .is_empty()
        );
    }

    /// A Pod of one container `web` with `fields` added to it.
    fn pod_with(fields: Value) -> Value {
        let mut container = json!({"name": "web", "image": "nginx"});
        for (field, value) in fields.as_object().unwrap() {
            container[field] = value.clone();
        }
        json!({"spec": {"containers": [container]}})
    }

    #[test]
    fn a_pod_as_a_real_server_serves_it_is_valid() {
        let pod: Value = serde_json::from_str(include_str!("../../../host/testdata/pod.json"))
            .expect("the fixture parses");
        assert_eq!(messages("", "Pod", pod), Vec::<String>::new());
    }

    #[test]
    fn environment_variables_are_named_with_one_source_each() {
        let ok = pod_with(json!({
            "env": [
                {"name": "MY_ENV.name-1", "value": "x"},
                {"name": "POD", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app']"}}},
                {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "limits.cpu"}}},
                {"name": "KEY", "valueFrom": {"secretKeyRef": {"name": "creds", "key": "token.txt"}}},
            ],
            "envFrom": [{"prefix": "CFG_", "configMapRef": {"name": "settings"}}],
        }));
        assert!(messages("", "Pod", ok).is_empty());
        let bad = pod_with(json!({
            "env": [
                {"name": "1ST"},
                {"value": "x"},
                {"name": "BOTH", "value": "x", "valueFrom": {"configMapKeyRef": {"name": "c", "key": "k"}}},
                {"name": "NONE", "valueFrom": {}},
                {"name": "TWO", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.schedulerName"},
                    "configMapKeyRef": {"name": "c", "key": ".."}}},
            ],
            "envFrom": [{"configMapRef": {"name": "a"}, "secretRef": {"name": ""}}, {}],
        }));
        assert_eq!(
            messages("", "Pod", bad),
            [
                "spec.containers[0].env[0].name: Invalid value: \"1ST\": a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')",
                "spec.containers[0].env[1].name: Required value",
                "spec.containers[0].env[2].valueFrom: Invalid value: \"\": may not be specified when `value` is not empty",
                "spec.containers[0].env[3].valueFrom: Invalid value: \"\": must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
                "spec.containers[0].env[4].valueFrom.fieldRef.fieldPath: Unsupported value: \"spec.schedulerName\": supported values: \"metadata.name\", \"metadata.namespace\", \"metadata.uid\", \"spec.nodeName\", \"spec.serviceAccountName\", \"status.hostIP\", \"status.hostIPs\", \"status.podIP\", \"status.podIPs\"",
                "spec.containers[0].env[4].valueFrom.configMapKeyRef.key: Invalid value: \"..\": must not be '..'",
                "spec.containers[0].env[4].valueFrom: Invalid value: \"\": may not have more than one field specified at a time",
                "spec.containers[0].envFrom[0].secretRef.name: Required value",
                "spec.containers[0].envFrom: Invalid value: \"\": may not have more than one field specified at a time",
                "spec.containers[0].envFrom: Invalid value: \"\": must specify one of: `configMapRef` or `secretRef`",
            ]
        );
    }

    #[test]
    fn probes_and_hooks_have_one_handler_and_sane_timings() {
        let ok = pod_with(json!({
            "livenessProbe": {"httpGet": {"path": "/healthz", "port": "http", "scheme": "HTTP"},
                "periodSeconds": 10, "successThreshold": 1},
            "readinessProbe": {"tcpSocket": {"port": 8080}, "successThreshold": 3},
            "startupProbe": {"exec": {"command": ["true"]}},
            "lifecycle": {"preStop": {"exec": {"command": ["sleep", "5"]}}},
        }));
        assert!(messages("", "Pod", ok).is_empty());
        let bad = pod_with(json!({
            "lifecycle": {"postStart": {"grpc": {"port": 9000}}},
            "livenessProbe": {"exec": {"command": []}, "httpGet": {"path": "/", "port": 80, "scheme": "HTTP"},
                "successThreshold": 2, "periodSeconds": -1},
            "readinessProbe": {"httpGet": {"port": 70000, "scheme": "FTP",
                "httpHeaders": [{"name": "X Bad", "value": "v"}]},
                "terminationGracePeriodSeconds": 5},
            "startupProbe": {"grpc": {"port": 9000}, "terminationGracePeriodSeconds": 0},
        }));
        assert_eq!(
            messages("", "Pod", bad),
            [
                "spec.containers[0].lifecycle.postStart: Required value: must specify a handler type",
                "spec.containers[0].livenessProbe.exec.command: Required value",
                "spec.containers[0].livenessProbe.httpGet: Forbidden: may not specify more than 1 handler type",
                "spec.containers[0].livenessProbe.periodSeconds: Invalid value: -1: must be greater than or equal to 0",
                "spec.containers[0].livenessProbe.successThreshold: Invalid value: 2: must be 1",
                "spec.containers[0].readinessProbe.httpGet.port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.containers[0].readinessProbe.httpGet.scheme: Unsupported value: \"FTP\": supported values: \"HTTP\", \"HTTPS\"",
                "spec.containers[0].readinessProbe.httpGet.httpHeaders: Invalid value: \"X Bad\": a valid HTTP header must consist of alphanumeric characters or '-' (e.g. 'X-Header-Name', regex used for validation is '[-A-Za-z0-9]+')",
                "spec.containers[0].readinessProbe.terminationGracePeriodSeconds: Invalid value: 5: must not be set for readinessProbes",
                "spec.containers[0].startupProbe.terminationGracePeriodSeconds: Invalid value: 0: must be greater than 0",
            ]
        );
    }

    #[test]
    fn a_container_is_checked_whole_before_its_name_is_compared_and_its_hooks_and_probes() {
        let pod = json!({"spec": {"terminationGracePeriodSeconds": 10, "containers": [
            {"name": "web", "image": "nginx", "imagePullPolicy": "Sometimes",
             "terminationMessagePolicy": "Stdout", "env": [{"name": "1X", "value": "v"}],
             "lifecycle": {"preStop": {"sleep": {"seconds": 11}}},
             "restartPolicy": "Always"},
            {"name": "web", "image": "nginx", "lifecycle": {"preStop": {"sleep": {"seconds": 0}}}}]}});
        let found = messages("", "Pod", pod);
        let fields = fields_of(&found);
        assert_eq!(
            fields,
            [
                "spec.containers[0].terminationMessagePolicy",
                "spec.containers[0].env[0].name",
                "spec.containers[0].imagePullPolicy",
                "spec.containers[0].lifecycle.preStop.sleep",
                "spec.containers[0].restartPolicy",
                "spec.containers[1].name",
            ]
        );
        assert_eq!(
            found[3],
            "spec.containers[0].lifecycle.preStop.sleep: Invalid value: 11: must be non-negative and less than terminationGracePeriodSeconds (10)"
        );
        assert_eq!(
            found[4],
            "spec.containers[0].restartPolicy: Forbidden: may not be set for non-init containers"
        );
    }

    #[test]
    fn init_containers_are_sidecars_or_have_no_hooks_and_probes_and_their_names_are_apart() {
        let pod = json!({"spec": {
            "containers": [{"name": "app", "image": "nginx"}],
            "initContainers": [
                {"name": "migrate", "image": "tool", "ports": [
                    {"containerPort": 1, "hostPort": 9000}, {"containerPort": 2, "hostPort": 9000}],
                 "lifecycle": {"postStart": {"exec": {"command": ["x"]}}}, "startupProbe": {"exec": {"command": ["x"]}}},
                {"name": "app", "image": "tool", "restartPolicy": "Never"},
                {"name": "mesh", "image": "envoy", "restartPolicy": "Always", "ports": [{"containerPort": 3, "hostPort": 9000}],
                 "readinessProbe": {"tcpSocket": {"port": 15021}}, "startupProbe": {"exec": {"command": []}}},
                {"name": "mesh", "image": ""}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.initContainers[0].ports[1].hostPort: Duplicate value: \"TCP//9000\"",
                "spec.initContainers[0].lifecycle: Forbidden: may not be set for init containers without restartPolicy=Always",
                "spec.initContainers[0].startupProbe: Forbidden: may not be set for init containers without restartPolicy=Always",
                "spec.initContainers[1].restartPolicy: Unsupported value: \"Never\": supported values: \"Always\"",
                "spec.initContainers[1].name: Duplicate value: \"app\"",
                "spec.initContainers[2].startupProbe.exec.command: Required value",
                "spec.initContainers[3].image: Required value",
                "spec.initContainers[3].name: Duplicate value: \"mesh\"",
            ]
        );
    }

    #[test]
    fn a_stateful_sets_template_spec_is_not_validated_but_its_restart_rules_are() {
        let set = json!({"spec": {"selector": {"matchLabels": {"app": "db"}},
            "template": {"metadata": {"labels": {"app": "db"}}, "spec": {
                "restartPolicy": "OnFailure",
                "containers": [{"name": "db", "image": "", "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "data"}}]}});
        assert_eq!(
            messages("apps", "StatefulSet", set),
            [
                "spec.template.spec.restartPolicy: Unsupported value: \"OnFailure\": supported values: \"Always\""
            ]
        );
    }

    #[test]
    fn a_template_has_no_ephemeral_containers_and_unnamed_containers_share_the_name_nothing() {
        let mut deployment = deployment(
            json!({"matchLabels": {"app": "web"}}),
            json!({"app": "web"}),
            json!([{"image": "nginx"}, {"image": "nginx"}]),
        );
        deployment["spec"]["template"]["spec"]["ephemeralContainers"] =
            json!([{"name": "debug", "image": "busybox"}]);
        assert_eq!(
            messages("apps", "Deployment", deployment),
            [
                "spec.template.spec.containers[0].name: Required value",
                "spec.template.spec.containers[1].name: Required value",
                "spec.template.spec.containers[1].name: Duplicate value: \"\"",
                "spec.template.spec.ephemeralContainers: Forbidden: ephemeral containers not allowed in pod template",
            ]
        );
    }

    #[test]
    fn a_pods_images_have_no_surrounding_whitespace_and_a_templates_may() {
        let containers = json!([{"name": "a", "image": " nginx"}]);
        let pod = json!({"spec": {"containers": containers.clone(),
            "initContainers": [{"name": "b", "image": "busybox\n"}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[0].image: Invalid value: \" nginx\": must not have leading or trailing whitespace",
                "spec.initContainers[0].image: Invalid value: \"busybox\\n\": must not have leading or trailing whitespace",
            ]
        );
        let template = deployment(
            json!({"matchLabels": {"a": "b"}}),
            json!({"a": "b"}),
            containers,
        );
        assert!(messages("apps", "Deployment", template).is_empty());
    }

    /// An events.k8s.io Event as the host records one, in its core form.
    fn recorded_event() -> Value {
        json!({
            "metadata": {"namespace": "default", "name": "web.1"},
            "involvedObject": {"kind": "Foo", "namespace": "default", "name": "web"},
            "eventTime": "2026-11-27T10:00:00.000000Z",
            "reportingComponent": "recon.dev/sample-controller",
            "reportingInstance": "recon-host-0",
            "action": "Sync",
            "reason": "Synced",
            "type": "Normal",
            "message": "Foo synced successfully",
        })
    }

    #[test]
    fn an_events_api_create_meets_the_strict_rules_and_every_write_the_legacy_ones() {
        let create = |object: Value| -> Vec<String> {
            create_causes("events.k8s.io", "Event", &object)
                .iter()
                .map(Cause::message)
                .collect()
        };
        assert_eq!(create(recorded_event()), Vec::<String>::new());
        let mut bad = recorded_event();
        bad["reportingComponent"] = json!("");
        bad["action"] = json!("a".repeat(129));
        bad["type"] = json!("Fatal");
        bad["count"] = json!(3);
        bad["series"] = json!({"count": 1});
        assert_eq!(
            create(bad.clone()),
            [
                "reportingController: Required value",
                "reportingController: Invalid value: \"\": name part must be non-empty",
                "reportingController: Invalid value: \"\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "action: Invalid value: \"\": can have at most 128 characters",
                "series.count: Invalid value: \"\": should be at least 2",
                "series.lastObservedTime: Required value",
                "type: Invalid value: \"\": has invalid value: Fatal",
                "count: Invalid value: \"\": needs to be unset",
            ]
        );
        // An update, or a core Event, meets only the legacy rules, under
        // the core field's name.
        assert_eq!(
            messages("", "Event", bad)[0],
            "reportingComponent: Required value"
        );
        // An old-style core Event (no eventTime) agrees with its object's
        // namespace.
        let old_style = json!({
            "metadata": {"namespace": "team-a", "name": "e"},
            "involvedObject": {"kind": "Pod", "namespace": "team-b", "name": "p"},
            "reason": "Started",
        });
        assert_eq!(
            messages("", "Event", old_style),
            ["involvedObject.namespace: Invalid value: \"team-b\": does not match event.namespace"]
        );
    }

    #[test]
    fn a_resize_policy_names_cpu_or_memory_once_and_never_restarts_a_pod_that_never_restarts() {
        let pod = json!({"spec": {"restartPolicy": "Never", "containers": [{
        "name": "app", "image": "nginx", "resizePolicy": [
            {"resourceName": "cpu", "restartPolicy": "NotRequired"},
            {"resourceName": "cpu", "restartPolicy": "RestartContainer"},
            {"resourceName": "gpu", "restartPolicy": "Sometimes"},
        ]}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[0].resizePolicy[1]: Duplicate value: \"cpu\"",
                "spec.containers[0].resizePolicy: Invalid value: \"RestartContainer\": must be 'NotRequired' when `restartPolicy` is 'Never'",
                "spec.containers[0].resizePolicy: Unsupported value: \"gpu\": supported values: \"cpu\", \"memory\"",
                "spec.containers[0].resizePolicy: Unsupported value: \"Sometimes\": supported values: \"NotRequired\", \"RestartContainer\"",
                "spec.containers[0].resizePolicy: Invalid value: \"Sometimes\": must be 'NotRequired' when `restartPolicy` is 'Never'",
            ]
        );
    }

    #[test]
    fn a_variable_s_field_and_resource_selectors_are_the_downward_api_s() {
        let pod = json!({"spec": {"containers": [{"name": "app", "image": "nginx", "env": [
            {"name": "HOSTS", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "status.hostIPs"}}},
            {"name": "HOST", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.hostname"}}},
            {"name": "APP", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.labels['app']"}}},
            {"name": "CPU", "valueFrom": {"resourceFieldRef": {"resource": "requests.cpu", "divisor": "2"}}},
        ]}]}});
        assert_eq!(
            messages("", "Pod", pod),
            [
                "spec.containers[0].env[1].valueFrom.fieldRef.fieldPath: Invalid value: \"spec.hostname\": error converting fieldPath: field label not supported: spec.hostname",
                "spec.containers[0].env[3].valueFrom.resourceFieldRef.divisor: Invalid value: \"requests.cpu\": only divisor's values 1m and 1 are supported with the cpu resource",
            ]
        );
    }
}
