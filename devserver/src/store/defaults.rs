//! The defaults kube-apiserver fills into the built-in kinds the dev server
//! serves, on every write: the `SetDefaults_*` functions of each API group
//! (a Pod template's restart and DNS policy, its volumes' sources and
//! file modes, a Pod's service links, its requests taken from its limits
//! and host ports on the host's network, a container's pull policy and
//! termination message, a workload's strategy and history limit, a
//! StatefulSet's claim templates, a Service's type, session
//! affinity, port protocol and target, traffic policies and a load
//! balancer's node ports and IP mode, a Secret's type; those of Jobs,
//! CronJobs, claims and volumes, Nodes, Endpoints and EndpointSlices,
//! ReplicationControllers, LimitRanges, NetworkPolicies, IngressClasses,
//! HorizontalPodAutoscalers, StorageClasses and PriorityClasses are in
//! `others`) and, at create, what the strategies set (a Namespace's name
//! label and `kubernetes` finalizer). A controller that compares what it wants with what the
//! server holds meets these fields here as on a real cluster. Not here:
//! what admission plugins add (service account, tolerations, priority) and
//! a Service's cluster IPs, IP families and node ports (allocated by the
//! store before it validates, `super::service_alloc`).

use serde_json::{Value, json};

mod others;

/// Fills in the defaults of a `group`/`kind` object written.
pub fn apply(group: &str, kind: &str, object: &mut Value) {
    match (group, kind) {
        ("", "Namespace") => namespace(object),
        ("", "Secret") => insert_unset(object, "type", json!("Opaque")),
        ("", "Pod") => {
            if let Some(spec) = object.get_mut("spec") {
                pod_spec(spec);
                pod_only(spec);
            }
        }
        ("", "Service") => service(object),
        ("", "PersistentVolumeClaim") => persistent_volume_claim(object),
        ("", "PersistentVolume") => others::persistent_volume(object),
        ("", "Node") => others::node(object),
        ("", "Endpoints") => others::endpoints(object),
        ("", "ReplicationController") => others::replication_controller(object),
        ("", "LimitRange") => others::limit_range(object),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            if let Some(spec) = object.get_mut("spec") {
                workload_spec(kind, spec);
            }
        }
        ("batch", "Job") => others::job(object),
        ("batch", "CronJob") => others::cron_job(object),
        ("discovery.k8s.io", "EndpointSlice") => others::endpoint_slice(object),
        ("networking.k8s.io", "NetworkPolicy") => others::network_policy(object),
        ("networking.k8s.io", "IngressClass") => others::ingress_class(object),
        // Served as autoscaling/v2 only: v2's defaults.
        ("autoscaling", "HorizontalPodAutoscaler") => others::horizontal_pod_autoscaler(object),
        ("storage.k8s.io", "StorageClass") => {
            insert(object, "reclaimPolicy", json!("Delete"));
            insert(object, "volumeBindingMode", json!("Immediate"));
        }
        ("scheduling.k8s.io", "PriorityClass") => {
            insert(object, "preemptionPolicy", json!("PreemptLowerPriority"));
        }
        // A PodDisruptionBudget, an Ingress and a ResourceQuota have no
        // defaults of their own, nor does any other kind served.
        _ => {}
    }
}

/// `object[field] = value` where the field is absent or null: a Go
/// pointer, slice or map left nil (an explicit `null` decodes to nil).
fn insert(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        let slot = map.entry(field).or_insert(Value::Null);
        if slot.is_null() {
            *slot = value;
        }
    }
}

/// `object[field] = value` where the field holds its Go zero value too
/// (`""`, `0`): a field that is no pointer, which the defaulter compares
/// with its zero value (`if obj.DNSPolicy == ""`).
fn insert_unset(object: &mut Value, field: &str, value: Value) {
    if object.is_object() && unset(object, field) {
        object[field] = value;
    }
}

/// A Namespace: the `kubernetes.io/metadata.name` label is always its
/// name; `spec.finalizers` start as `["kubernetes"]`.
fn namespace(object: &mut Value) {
    let name = object.pointer("/metadata/name").cloned();
    if let (Some(name), Some(metadata)) = (name, object.get_mut("metadata")) {
        insert(metadata, "labels", json!({}));
        if let Some(labels) = metadata.get_mut("labels").and_then(Value::as_object_mut) {
            labels.insert("kubernetes.io/metadata.name".into(), name);
        }
    }
    insert(object, "spec", json!({}));
    if let Some(spec) = object.get_mut("spec") {
        insert(spec, "finalizers", json!(["kubernetes"]));
    }
}

/// A Deployment, ReplicaSet, StatefulSet or DaemonSet spec, and its Pod
/// template.
fn workload_spec(kind: &str, spec: &mut Value) {
    if kind != "DaemonSet" {
        insert(spec, "replicas", json!(1));
    }
    if kind != "ReplicaSet" {
        insert(spec, "revisionHistoryLimit", json!(10));
    }
    match kind {
        "Deployment" => {
            insert(spec, "progressDeadlineSeconds", json!(600));
            rolling_update(
                spec,
                "strategy",
                json!({"maxUnavailable": "25%", "maxSurge": "25%"}),
            );
        }
        "StatefulSet" => {
            insert_unset(spec, "podManagementPolicy", json!("OrderedReady"));
            stateful_set_strategy(spec);
            insert(spec, "persistentVolumeClaimRetentionPolicy", json!({}));
            if let Some(policy) = spec.get_mut("persistentVolumeClaimRetentionPolicy") {
                for field in ["whenDeleted", "whenScaled"] {
                    insert_unset(policy, field, json!("Retain"));
                }
            }
            // Each claim template is defaulted as a claim is.
            let claims = spec
                .get_mut("volumeClaimTemplates")
                .and_then(Value::as_array_mut);
            for claim in claims.into_iter().flatten() {
                persistent_volume_claim(claim);
            }
        }
        "DaemonSet" => {
            rolling_update(
                spec,
                "updateStrategy",
                json!({"maxUnavailable": 1, "maxSurge": 0}),
            );
        }
        _ => {}
    }
    if let Some(template) = spec.get_mut("template") {
        pod_template(template);
    }
}

/// A Pod template of a workload, a Job or a ReplicationController: its
/// metadata's empty time and its PodSpec's defaults.
fn pod_template(template: &mut Value) {
    template_metadata(template);
    if let Some(pod) = template.get_mut("spec") {
        pod_spec(pod);
    }
}

/// A template's metadata, never a pointer: there even when unwritten, with
/// Go's empty creation time, which shows as `null`.
fn template_metadata(template: &mut Value) {
    insert(template, "metadata", json!({}));
    if let Some(metadata) = template.get_mut("metadata") {
        insert(metadata, "creationTimestamp", Value::Null);
    }
}

/// A PersistentVolumeClaim, or a StatefulSet's claim template: phase
/// `Pending` (`SetDefaults_PersistentVolumeClaim`) and a file system
/// volume (`SetDefaults_PersistentVolumeClaimSpec`).
fn persistent_volume_claim(claim: &mut Value) {
    insert(claim, "spec", json!({}));
    if let Some(claim_spec) = claim.get_mut("spec") {
        insert(claim_spec, "volumeMode", json!("Filesystem"));
    }
    insert(claim, "status", json!({}));
    if let Some(status) = claim.get_mut("status") {
        insert_unset(status, "phase", json!("Pending"));
    }
}

/// A Deployment's `strategy` or a DaemonSet's `updateStrategy` at `field`:
/// `RollingUpdate` unless typed, and a rolling update gets `rolling`'s
/// parameters where it lacks them (`SetDefaults_Deployment`,
/// `SetDefaults_DaemonSet`).
fn rolling_update(spec: &mut Value, field: &str, rolling: Value) {
    insert(spec, field, json!({}));
    let Some(strategy) = spec.get_mut(field) else {
        return;
    };
    insert_unset(strategy, "type", json!("RollingUpdate"));
    if strategy["type"] != "RollingUpdate" {
        return;
    }
    insert(strategy, "rollingUpdate", json!({}));
    if let (Some(update), Value::Object(rolling)) = (strategy.get_mut("rollingUpdate"), rolling) {
        for (field, value) in rolling {
            insert(update, &field, value);
        }
    }
}

/// A StatefulSet's `updateStrategy` (`SetDefaults_StatefulSet`): an
/// untyped one is a rolling update, given an empty `rollingUpdate`; a
/// rolling update that has one gets partition 0.
fn stateful_set_strategy(spec: &mut Value) {
    insert(spec, "updateStrategy", json!({}));
    let Some(strategy) = spec.get_mut("updateStrategy") else {
        return;
    };
    if unset(strategy, "type") {
        strategy["type"] = json!("RollingUpdate");
        insert(strategy, "rollingUpdate", json!({}));
    }
    if strategy["type"] == "RollingUpdate"
        && let Some(update) = strategy.get_mut("rollingUpdate").filter(|u| u.is_object())
    {
        insert(update, "partition", json!(0));
    }
}

/// A PodSpec (`SetDefaults_PodSpec`), its volumes and its containers.
fn pod_spec(spec: &mut Value) {
    for (field, value) in [
        ("dnsPolicy", "ClusterFirst"),
        ("restartPolicy", "Always"),
        ("schedulerName", "default-scheduler"),
    ] {
        insert_unset(spec, field, json!(value));
    }
    insert(spec, "securityContext", json!({}));
    insert(spec, "terminationGracePeriodSeconds", json!(30));
    let volumes = spec.get_mut("volumes").and_then(Value::as_array_mut);
    for volume in volumes.into_iter().flatten() {
        self::volume(volume);
    }
    for container in containers_mut(spec) {
        self::container(container);
    }
}

/// What `SetDefaults_Pod` adds to a Pod's spec and not to a template's:
/// service links, requests from limits and, on the host's network, host
/// ports equal to the container ports.
fn pod_only(spec: &mut Value) {
    insert(spec, "enableServiceLinks", json!(true));
    requests_from_limits(spec);
    if spec.get("hostNetwork").and_then(Value::as_bool) == Some(true) {
        for container in containers_mut(spec) {
            for port in ports(container) {
                let unset = port.get("hostPort").and_then(Value::as_i64).unwrap_or(0) == 0;
                if let (true, Some(number)) = (unset, port.get("containerPort").cloned()) {
                    port["hostPort"] = number;
                }
            }
        }
    }
}

/// The file mode a Secret, ConfigMap, downward API or projected volume
/// gives its files unless it says otherwise: 0644.
const VOLUME_FILE_MODE: i64 = 0o644;

/// A volume: an empty directory when it names no source
/// (`SetDefaults_Volume`), and each source's defaults (the file mode of
/// the `SetDefaults_*VolumeSource` functions, a host path's unset type, a
/// projected token's hour, an ephemeral claim's file system mode, ...).
fn volume(volume: &mut Value) {
    let Some(fields) = volume.as_object_mut() else {
        return;
    };
    if fields
        .iter()
        .all(|(field, value)| field == "name" || value.is_null())
    {
        fields.insert("emptyDir".into(), json!({}));
    }
    for source in ["secret", "configMap", "downwardAPI", "projected"] {
        if let Some(source) = fields.get_mut(source) {
            insert(source, "defaultMode", json!(VOLUME_FILE_MODE));
        }
    }
    if let Some(downward) = fields.get_mut("downwardAPI") {
        field_refs(downward);
    }
    let projections = fields
        .get_mut("projected")
        .and_then(|p| p.get_mut("sources"))
        .and_then(Value::as_array_mut);
    for projection in projections.into_iter().flatten() {
        if let Some(token) = projection.get_mut("serviceAccountToken") {
            insert(token, "expirationSeconds", json!(3600));
        }
        if let Some(downward) = projection.get_mut("downwardAPI") {
            field_refs(downward);
        }
    }
    if let Some(claim) = fields
        .get_mut("ephemeral")
        .and_then(|e| e.pointer_mut("/volumeClaimTemplate/spec"))
    {
        insert(claim, "volumeMode", json!("Filesystem"));
    }
    volume_sources(volume);
}

/// The defaults of the sources a volume of a Pod and a PersistentVolume
/// both know, at `holder` (a volume, or a PersistentVolume's spec): a host
/// path's unset type, an Azure disk's caching, kind, file system and
/// access, an iSCSI interface, ScaleIO's storage mode and file system, and
/// a Ceph block device's pool, user and keyring (the
/// `SetDefaults_*VolumeSource` and `*PersistentVolumeSource` functions).
fn volume_sources(holder: &mut Value) {
    let Some(fields) = holder.as_object_mut() else {
        return;
    };
    // Pointers: set where nil.
    let pointers: [(&str, &[(&str, Value)]); 2] = [
        ("hostPath", &[("type", json!(""))]),
        (
            "azureDisk",
            &[
                ("cachingMode", json!("ReadWrite")),
                ("kind", json!("Shared")),
                ("fsType", json!("ext4")),
                ("readOnly", json!(false)),
            ],
        ),
    ];
    for (source, fields_and_values) in pointers {
        if let Some(source) = fields.get_mut(source) {
            for (field, value) in fields_and_values {
                insert(source, field, value.clone());
            }
        }
    }
    // Strings: set where empty.
    let strings: [(&str, &[(&str, &str)]); 3] = [
        ("iscsi", &[("iscsiInterface", "default")]),
        (
            "scaleIO",
            &[("storageMode", "ThinProvisioned"), ("fsType", "xfs")],
        ),
        (
            "rbd",
            &[
                ("pool", "rbd"),
                ("user", "admin"),
                ("keyring", "/etc/ceph/keyring"),
            ],
        ),
    ];
    for (source, fields_and_values) in strings {
        if let Some(source) = fields.get_mut(source).filter(|s| s.is_object()) {
            for (field, value) in fields_and_values {
                insert_unset(source, field, json!(value));
            }
        }
    }
}

/// The `fieldRef`s of a downward API volume's items: version `v1`
/// (`SetDefaults_ObjectFieldSelector`).
fn field_refs(downward: &mut Value) {
    let items = downward.get_mut("items").and_then(Value::as_array_mut);
    for item in items.into_iter().flatten() {
        if let Some(field_ref) = item.get_mut("fieldRef").filter(|f| f.is_object()) {
            insert_unset(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// A PodSpec's init, regular and ephemeral containers.
pub(super) fn containers_mut(spec: &mut Value) -> impl Iterator<Item = &mut Value> {
    spec.as_object_mut()
        .into_iter()
        .flat_map(|spec| spec.iter_mut())
        .filter(|(key, _)| {
            matches!(
                key.as_str(),
                "initContainers" | "containers" | "ephemeralContainers"
            )
        })
        .filter_map(|(_, list)| list.as_array_mut())
        .flatten()
}

/// A Pod's (not a template's) containers request what they limit unless
/// they say otherwise (`SetDefaults_Pod`).
fn requests_from_limits(spec: &mut Value) {
    for resources in containers_mut(spec).filter_map(|c| c.get_mut("resources")) {
        let Some(limits) = resources.get("limits").and_then(Value::as_object).cloned() else {
            continue;
        };
        insert(resources, "requests", json!({}));
        if let Some(requests) = resources.get_mut("requests").and_then(Value::as_object_mut) {
            for (name, quantity) in limits {
                requests.entry(name).or_insert(quantity);
            }
        }
    }
}

/// A container: termination message, pull policy (`Always` for a `latest`
/// or untagged image), resources, port protocols, probe timings
/// (`SetDefaults_Probe`), HTTP actions' path and scheme
/// (`SetDefaults_HTTPGetAction`) and downward API fields' version
/// (`SetDefaults_ObjectFieldSelector`).
fn container(container: &mut Value) {
    let image = container["image"].as_str().unwrap_or_default();
    let tag = image
        .rsplit('/')
        .next()
        .and_then(|last| last.split_once(':'))
        .map(|(_, tag)| tag);
    let pull = match (image.contains('@'), tag) {
        (false, None | Some("latest")) => "Always",
        _ => "IfNotPresent",
    };
    for (field, value) in [
        ("terminationMessagePath", "/dev/termination-log"),
        ("terminationMessagePolicy", "File"),
        ("imagePullPolicy", pull),
    ] {
        insert_unset(container, field, json!(value));
    }
    insert(container, "resources", json!({}));
    for port in ports(container) {
        insert_unset(port, "protocol", json!("TCP"));
    }
    for name in ["livenessProbe", "readinessProbe", "startupProbe"] {
        let Some(probe) = container.get_mut(name).filter(|p| p.is_object()) else {
            continue;
        };
        for (field, value) in [
            ("timeoutSeconds", 1),
            ("periodSeconds", 10),
            ("successThreshold", 1),
            ("failureThreshold", 3),
        ] {
            insert_unset(probe, field, json!(value));
        }
        http_get(probe);
    }
    if let Some(lifecycle) = container.get_mut("lifecycle") {
        for hook in ["postStart", "preStop"] {
            if let Some(handler) = lifecycle.get_mut(hook) {
                http_get(handler);
            }
        }
    }
    let env = container.get_mut("env").and_then(Value::as_array_mut);
    for var in env.into_iter().flatten() {
        if let Some(field_ref) = var
            .pointer_mut("/valueFrom/fieldRef")
            .filter(|f| f.is_object())
        {
            insert_unset(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// A handler's `httpGet`: path `/`, scheme `HTTP`.
fn http_get(handler: &mut Value) {
    if let Some(action) = handler.get_mut("httpGet").filter(|a| a.is_object()) {
        insert_unset(action, "path", json!("/"));
        insert_unset(action, "scheme", json!("HTTP"));
    }
}

fn ports(object: &mut Value) -> impl Iterator<Item = &mut Value> {
    object
        .get_mut("ports")
        .and_then(Value::as_array_mut)
        .into_iter()
        .flatten()
}

/// A Service (`SetDefaults_Service`): its spec but the cluster IPs and
/// IP families the registry allocates, and the IP mode of its load
/// balancer's ingress points (`LoadBalancerIPMode`, on since v1.32).
fn service(object: &mut Value) {
    insert(object, "spec", json!({}));
    let Some(spec) = object.get_mut("spec") else {
        return;
    };
    service_spec(spec);
    if spec.get("type").and_then(Value::as_str) != Some("LoadBalancer") {
        return;
    }
    let ingress = object
        .pointer_mut("/status/loadBalancer/ingress")
        .and_then(Value::as_array_mut);
    for point in ingress.into_iter().flatten() {
        let has_ip = point
            .get("ip")
            .and_then(Value::as_str)
            .is_some_and(|ip| !ip.is_empty());
        if has_ip {
            insert(point, "ipMode", json!("VIP"));
        }
    }
}

/// A Service's spec: session affinity (`None`, or `ClientIP` with a
/// three-hour timeout), type, each port's protocol and target (its port
/// when unset, 0 or ""), the external traffic policy of what is reachable
/// from outside, the internal one of the types with a cluster IP, and a
/// load balancer's node ports.
fn service_spec(spec: &mut Value) {
    if !spec.is_object() {
        return;
    }
    for (field, value) in [("sessionAffinity", "None"), ("type", "ClusterIP")] {
        insert_unset(spec, field, json!(value));
    }
    match spec.get("sessionAffinity").and_then(Value::as_str) {
        Some("None") => {
            spec.as_object_mut()
                .map(|s| s.remove("sessionAffinityConfig"));
        }
        Some("ClientIP") => {
            let timeout = spec.pointer("/sessionAffinityConfig/clientIP/timeoutSeconds");
            if timeout.is_none_or(Value::is_null) {
                spec["sessionAffinityConfig"] = json!({"clientIP": {"timeoutSeconds": 10800}});
            }
        }
        _ => {}
    }
    for port in ports(spec) {
        insert_unset(port, "protocol", json!("TCP"));
        let target = port.get("targetPort");
        let untargeted = matches!(target, None | Some(Value::Null))
            || target.and_then(Value::as_i64) == Some(0)
            || target.and_then(Value::as_str) == Some("");
        if untargeted {
            port["targetPort"] = json!(port.get("port").and_then(Value::as_i64).unwrap_or(0));
        }
    }
    let kind = spec
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    if super::validation::externally_accessible(spec) {
        insert_unset(spec, "externalTrafficPolicy", json!("Cluster"));
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        insert(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        insert(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// Whether a field of `object` is absent, null, or holds Go's zero value
/// of a string or number.
fn unset(object: &Value, field: &str) -> bool {
    match object.get(field) {
        None | Some(Value::Null) => true,
        Some(Value::String(text)) => text.is_empty(),
        Some(Value::Number(number)) => number.as_f64() == Some(0.0),
        Some(_) => false,
    }
}

/// The next free cluster IP of the Service range 10.96.0.0/12 after
/// `last` (an offset into it; offsets up to 10 are left to the
/// `kubernetes` and DNS Services of a real cluster, and the range's last
/// address, its broadcast, is never given), skipping those `taken`; none
/// when the range is full.
pub fn next_cluster_ip(last: &mut u32, taken: impl Fn(&str) -> bool) -> Option<String> {
    const SIZE: u32 = 1 << 20;
    for _ in 0..SIZE {
        *last = (*last + 1).max(11);
        if *last >= SIZE - 1 {
            *last = 11;
        }
        let ip = format!(
            "10.{}.{}.{}",
            96 + (*last >> 16),
            (*last >> 8) & 0xff,
            *last & 0xff
        );
        if !taken(&ip) {
            return Some(ip);
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_deployment_gets_its_strategy_limits_and_pod_template_defaults() {
        let mut deployment = json!({"metadata": {"name": "web"}, "spec": {
            "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}}, "spec": {"containers": [
                {"name": "a", "image": "nginx:1.27", "ports": [{"containerPort": 80}]},
                {"name": "b", "image": "registry.local:5000/tool"},
                {"name": "c", "image": "busybox:latest", "imagePullPolicy": "Never"}]}}}});
        apply("apps", "Deployment", &mut deployment);
        let spec = &deployment["spec"];
        assert_eq!(spec["replicas"], 1);
        assert_eq!(spec["revisionHistoryLimit"], 10);
        assert_eq!(spec["progressDeadlineSeconds"], 600);
        assert_eq!(
            spec["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        let template = &spec["template"];
        assert_eq!(template["metadata"]["creationTimestamp"], Value::Null);
        assert_eq!(template["spec"]["restartPolicy"], "Always");
        assert_eq!(template["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(template["spec"]["terminationGracePeriodSeconds"], 30);
        let containers = &template["spec"]["containers"];
        assert_eq!(containers[0]["imagePullPolicy"], "IfNotPresent");
        assert_eq!(
            containers[0]["terminationMessagePath"],
            "/dev/termination-log"
        );
        assert_eq!(containers[0]["ports"][0]["protocol"], "TCP");
        assert_eq!(containers[1]["imagePullPolicy"], "Always", "untagged");
        assert_eq!(containers[2]["imagePullPolicy"], "Never", "kept");
        // A Recreate strategy gets no rolling update; defaults are idempotent.
        let mut recreate = json!({"spec": {"strategy": {"type": "Recreate"}}});
        apply("apps", "Deployment", &mut recreate);
        assert_eq!(recreate["spec"]["strategy"], json!({"type": "Recreate"}));
        let again = {
            let mut d = deployment.clone();
            apply("apps", "Deployment", &mut d);
            d
        };
        assert_eq!(again, deployment);
    }

    #[test]
    fn volumes_get_their_sources_and_file_modes_in_templates_and_pods() {
        let volumes = json!([
            {"name": "scratch"},
            {"name": "config", "configMap": {"name": "app"}},
            {"name": "secret", "secret": {"secretName": "app", "defaultMode": 256}},
            {"name": "info", "downwardAPI": {"items": [
                {"path": "name", "fieldRef": {"fieldPath": "metadata.name"}}]}},
            {"name": "all", "projected": {"sources": [
                {"serviceAccountToken": {"path": "token"}},
                {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}}]}},
            {"name": "host", "hostPath": {"path": "/var/log"}},
            {"name": "claim", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}}
        ]);
        let raw_volumes = volumes.clone();
        let mut deployment = json!({"spec": {"template": {"spec": {
            "volumes": volumes, "containers": [{"name": "a", "image": "nginx"}]}}}});
        apply("apps", "Deployment", &mut deployment);
        let spec = &deployment["spec"]["template"]["spec"];
        let volumes = &spec["volumes"];
        assert_eq!(volumes[0], json!({"name": "scratch", "emptyDir": {}}));
        assert_eq!(volumes[1]["configMap"]["defaultMode"], 420);
        assert_eq!(volumes[2]["secret"]["defaultMode"], 256, "kept");
        assert_eq!(volumes[3]["downwardAPI"]["defaultMode"], 420);
        assert_eq!(
            volumes[3]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
        let projected = &volumes[4]["projected"];
        assert_eq!(projected["defaultMode"], 420);
        assert_eq!(
            projected["sources"][0]["serviceAccountToken"]["expirationSeconds"],
            3600
        );
        assert_eq!(
            projected["sources"][1]["downwardAPI"]["items"][0]["fieldRef"]["apiVersion"],
            "v1"
        );
        assert_eq!(
            volumes[5]["hostPath"],
            json!({"path": "/var/log", "type": ""})
        );
        assert_eq!(
            volumes[6]["ephemeral"]["volumeClaimTemplate"]["spec"]["volumeMode"],
            "Filesystem"
        );
        // Service links are a Pod's default, not a template's.
        assert!(spec.get("enableServiceLinks").is_none());
        // A Pod's volumes, written raw, get the same defaults.
        let mut pod = json!({"spec": {"volumes": raw_volumes,
            "containers": [{"name": "a", "image": "nginx"}]}});
        apply("", "Pod", &mut pod);
        assert_eq!(pod["spec"]["enableServiceLinks"], true);
        assert_eq!(pod["spec"]["volumes"], *volumes);
    }

    #[test]
    fn null_and_go_zero_values_are_defaulted_as_absent_ones() {
        let mut deployment = json!({"spec": {"strategy": null, "template": {"spec": {
            "dnsPolicy": "", "restartPolicy": null, "terminationGracePeriodSeconds": null,
            "volumes": [{"name": "ceph", "rbd": {"monitors": ["m"], "image": "i", "pool": ""}}],
            "containers": [{"name": "a", "image": "nginx:1", "imagePullPolicy": "",
                "terminationMessagePolicy": null, "resources": null,
                "ports": [{"containerPort": 80, "protocol": ""}],
                "readinessProbe": {"httpGet": {"port": 80, "path": "", "scheme": ""}, "successThreshold": 0}}]}}}});
        apply("apps", "Deployment", &mut deployment);
        let spec = &deployment["spec"];
        assert_eq!(
            spec["strategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}})
        );
        let pod = &spec["template"]["spec"];
        assert_eq!(pod["dnsPolicy"], "ClusterFirst");
        assert_eq!(pod["restartPolicy"], "Always");
        assert_eq!(pod["terminationGracePeriodSeconds"], 30);
        assert_eq!(
            pod["volumes"][0]["rbd"],
            json!({"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"})
        );
        let container = &pod["containers"][0];
        assert_eq!(container["imagePullPolicy"], "IfNotPresent");
        assert_eq!(container["terminationMessagePolicy"], "File");
        assert_eq!(container["resources"], json!({}));
        assert_eq!(container["ports"][0]["protocol"], "TCP");
        let probe = &container["readinessProbe"];
        assert_eq!(
            probe["httpGet"],
            json!({"port": 80, "path": "/", "scheme": "HTTP"})
        );
        assert_eq!(probe["successThreshold"], 1);
        // A pointer's zero value is a value: a zero grace period stays.
        let mut zero = json!({"spec": {"terminationGracePeriodSeconds": 0, "containers": []}});
        apply("", "Pod", &mut zero);
        assert_eq!(zero["spec"]["terminationGracePeriodSeconds"], 0);
        let mut secret = json!({"type": ""});
        apply("", "Secret", &mut secret);
        assert_eq!(secret["type"], "Opaque");
    }

    #[test]
    fn a_stateful_sets_strategy_and_retention_policy_are_defaulted_field_by_field() {
        let mut typed = json!({"spec": {"updateStrategy": {"type": "RollingUpdate"},
            "persistentVolumeClaimRetentionPolicy": {"whenDeleted": "Delete"}}});
        apply("apps", "StatefulSet", &mut typed);
        assert_eq!(
            typed["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate"})
        );
        assert_eq!(
            typed["spec"]["persistentVolumeClaimRetentionPolicy"],
            json!({"whenDeleted": "Delete", "whenScaled": "Retain"})
        );
        let mut partial =
            json!({"spec": {"updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {}}}});
        apply("apps", "StatefulSet", &mut partial);
        assert_eq!(
            partial["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        let mut on_delete =
            json!({"spec": {"updateStrategy": {"type": "OnDelete"}, "podManagementPolicy": ""}});
        apply("apps", "StatefulSet", &mut on_delete);
        assert_eq!(
            on_delete["spec"]["updateStrategy"],
            json!({"type": "OnDelete"})
        );
        assert_eq!(on_delete["spec"]["podManagementPolicy"], "OrderedReady");
    }

    #[test]
    fn a_pod_on_the_host_network_gets_host_ports_and_a_template_does_not() {
        let spec = json!({"hostNetwork": true,
            "initContainers": [{"name": "i", "image": "busybox", "ports": [{"containerPort": 9000}]}],
            "containers": [{"name": "a", "image": "nginx", "ports": [
                {"containerPort": 80}, {"containerPort": 443, "hostPort": 8443}]}]});
        let mut pod = json!({"spec": spec.clone()});
        apply("", "Pod", &mut pod);
        assert_eq!(pod["spec"]["containers"][0]["ports"][0]["hostPort"], 80);
        assert_eq!(
            pod["spec"]["containers"][0]["ports"][1]["hostPort"], 8443,
            "kept"
        );
        assert_eq!(
            pod["spec"]["initContainers"][0]["ports"][0]["hostPort"],
            9000
        );
        let mut daemons = json!({"spec": {"template": {"spec": spec}}});
        apply("apps", "DaemonSet", &mut daemons);
        assert!(
            daemons["spec"]["template"]["spec"]["containers"][0]["ports"][0]
                .get("hostPort")
                .is_none()
        );
    }

    #[test]
    fn a_statefulsets_claim_templates_are_defaulted_as_claims() {
        let mut set = json!({"spec": {"volumeClaimTemplates": [
            {"metadata": {"name": "data"}, "spec": {"accessModes": ["ReadWriteOnce"]}},
            {"metadata": {"name": "raw"}, "spec": {"volumeMode": "Block"}}]}});
        apply("apps", "StatefulSet", &mut set);
        let claims = &set["spec"]["volumeClaimTemplates"];
        assert_eq!(claims[0]["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claims[0]["status"], json!({"phase": "Pending"}));
        assert_eq!(claims[1]["spec"]["volumeMode"], "Block");
    }

    #[test]
    fn other_workloads_namespaces_services_and_secrets_get_theirs() {
        let mut set = json!({"spec": {}});
        apply("apps", "StatefulSet", &mut set);
        assert_eq!(set["spec"]["podManagementPolicy"], "OrderedReady");
        assert_eq!(
            set["spec"]["updateStrategy"],
            json!({"type": "RollingUpdate", "rollingUpdate": {"partition": 0}})
        );
        let mut daemons = json!({"spec": {}});
        apply("apps", "DaemonSet", &mut daemons);
        assert!(daemons["spec"].get("replicas").is_none());
        assert_eq!(
            daemons["spec"]["updateStrategy"]["rollingUpdate"]["maxUnavailable"],
            1
        );
        let mut namespace =
            json!({"metadata": {"name": "team-a", "labels": {"kubernetes.io/metadata.name": "x"}}});
        apply("", "Namespace", &mut namespace);
        assert_eq!(
            namespace["metadata"]["labels"]["kubernetes.io/metadata.name"],
            "team-a"
        );
        assert_eq!(namespace["spec"]["finalizers"], json!(["kubernetes"]));
        let mut service = json!({"spec": {"ports": [{"port": 80}, {"port": 53, "protocol": "UDP", "targetPort": "dns"}]}});
        apply("", "Service", &mut service);
        assert_eq!(service["spec"]["type"], "ClusterIP");
        assert_eq!(service["spec"]["sessionAffinity"], "None");
        assert_eq!(
            service["spec"]["ports"][0],
            json!({"port": 80, "protocol": "TCP", "targetPort": 80})
        );
        assert_eq!(
            service["spec"]["ports"][1],
            json!({"port": 53, "protocol": "UDP", "targetPort": "dns"})
        );
        let mut secret = json!({});
        apply("", "Secret", &mut secret);
        assert_eq!(secret["type"], "Opaque");
    }

    #[test]
    fn cluster_ips_are_handed_out_in_the_service_range_skipping_taken_ones() {
        let mut last = 0;
        assert_eq!(next_cluster_ip(&mut last, |_| false).unwrap(), "10.96.0.11");
        let taken = |ip: &str| ip == "10.96.0.12";
        assert_eq!(next_cluster_ip(&mut last, taken).unwrap(), "10.96.0.13");
        let mut high = 0x1_00ff;
        assert_eq!(next_cluster_ip(&mut high, taken).unwrap(), "10.97.1.0");
        // The broadcast address is skipped, the range wraps, and a full
        // range has none.
        let mut end = (1 << 20) - 3;
        assert_eq!(
            next_cluster_ip(&mut end, |_| false).unwrap(),
            "10.111.255.254"
        );
        assert_eq!(next_cluster_ip(&mut end, |_| false).unwrap(), "10.96.0.11");
        assert_eq!(next_cluster_ip(&mut end, |_| true), None);
    }
}
