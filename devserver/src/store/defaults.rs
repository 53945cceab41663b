//! The defaults kube-apiserver fills into the built-in kinds the dev server
//! serves, on every write: the `SetDefaults_*` functions of each API group
//! (a Pod template's restart and DNS policy, its volumes' sources and
//! file modes, a Pod's service links, its requests taken from its limits
//! and host ports on the host's network, a container's pull policy and
//! termination message, a workload's strategy and history limit, a
//! StatefulSet's claim templates, a Service's type, session
//! affinity, port protocol and target, traffic policies and a load
//! balancer's node ports and IP mode, a Secret's type) and, at create,
//! what the strategies set (a Namespace's name label and `kubernetes`
//! finalizer). A controller that compares what it wants with what the
//! server holds meets these fields here as on a real cluster. Not here:
//! what admission plugins add (service account, tolerations, priority) and
//! a Service's cluster IPs, IP families and node ports (allocated by the
//! store before it validates, `super::service_alloc`).

use serde_json::{Value, json};

/// Fills in the defaults of a `group`/`kind` object written.
pub fn apply(group: &str, kind: &str, object: &mut Value) {
    match (group, kind) {
        ("", "Namespace") => namespace(object),
        ("", "Secret") => insert(object, "type", json!("Opaque")),
        ("", "Pod") => {
            if let Some(spec) = object.get_mut("spec") {
                pod_spec(spec);
                pod_only(spec);
            }
        }
        ("", "Service") => service(object),
        ("apps", "Deployment" | "ReplicaSet" | "StatefulSet" | "DaemonSet") => {
            if let Some(spec) = object.get_mut("spec") {
                workload_spec(kind, spec);
            }
        }
        _ => {}
    }
}

/// `object[field] = value` unless `object` is no JSON object or has it.
fn insert(object: &mut Value, field: &str, value: Value) {
    if let Some(map) = object.as_object_mut() {
        map.entry(field).or_insert(value);
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
            insert(spec, "strategy", json!({}));
            rolling_update(spec, json!({"maxUnavailable": "25%", "maxSurge": "25%"}));
        }
        "StatefulSet" => {
            insert(spec, "podManagementPolicy", json!("OrderedReady"));
            insert(spec, "updateStrategy", json!({}));
            rolling_update(spec, json!({"partition": 0}));
            insert(
                spec,
                "persistentVolumeClaimRetentionPolicy",
                json!({"whenDeleted": "Retain", "whenScaled": "Retain"}),
            );
            // Each claim template is defaulted as a claim is
            // (`SetDefaults_PersistentVolumeClaim` and its spec's).
            let claims = spec
                .get_mut("volumeClaimTemplates")
                .and_then(Value::as_array_mut);
            for claim in claims.into_iter().flatten() {
                for (part, field, value) in [
                    ("spec", "volumeMode", "Filesystem"),
                    ("status", "phase", "Pending"),
                ] {
                    insert(claim, part, json!({}));
                    if let Some(part) = claim.get_mut(part) {
                        insert(part, field, json!(value));
                    }
                }
            }
        }
        "DaemonSet" => {
            insert(spec, "updateStrategy", json!({}));
            rolling_update(spec, json!({"maxUnavailable": 1, "maxSurge": 0}));
        }
        _ => {}
    }
    if let Some(template) = spec.get_mut("template") {
        // Go's empty time in a template's metadata.
        insert(template, "metadata", json!({}));
        if let Some(metadata) = template.get_mut("metadata") {
            insert(metadata, "creationTimestamp", Value::Null);
        }
        if let Some(pod) = template.get_mut("spec") {
            pod_spec(pod);
        }
    }
}

/// The strategy (`strategy` of a Deployment, `updateStrategy` of the
/// others) is `RollingUpdate` unless set, and a rolling update gets
/// `rolling`'s parameters where it lacks them.
fn rolling_update(spec: &mut Value, rolling: Value) {
    let field = if spec.get("strategy").is_some() {
        "strategy"
    } else {
        "updateStrategy"
    };
    let Some(strategy) = spec.get_mut(field) else {
        return;
    };
    insert(strategy, "type", json!("RollingUpdate"));
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

/// A PodSpec (`SetDefaults_PodSpec`), its volumes and its containers.
fn pod_spec(spec: &mut Value) {
    for (field, value) in [
        ("restartPolicy", json!("Always")),
        ("terminationGracePeriodSeconds", json!(30)),
        ("dnsPolicy", json!("ClusterFirst")),
        ("securityContext", json!({})),
        ("schedulerName", json!("default-scheduler")),
    ] {
        insert(spec, field, value);
    }
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
    let defaults: [(&str, &[(&str, Value)]); 4] = [
        ("hostPath", &[("type", json!(""))]),
        ("iscsi", &[("iscsiInterface", json!("default"))]),
        (
            "azureDisk",
            &[
                ("cachingMode", json!("ReadWrite")),
                ("kind", json!("Shared")),
                ("fsType", json!("ext4")),
                ("readOnly", json!(false)),
            ],
        ),
        (
            "scaleIO",
            &[
                ("storageMode", json!("ThinProvisioned")),
                ("fsType", json!("xfs")),
            ],
        ),
    ];
    for (source, fields_and_values) in defaults {
        if let Some(source) = fields.get_mut(source) {
            for (field, value) in fields_and_values {
                insert(source, field, value.clone());
            }
        }
    }
    if let Some(claim) = fields
        .get_mut("ephemeral")
        .and_then(|e| e.pointer_mut("/volumeClaimTemplate/spec"))
    {
        insert(claim, "volumeMode", json!("Filesystem"));
    }
}

/// The `fieldRef`s of a downward API volume's items: version `v1`
/// (`SetDefaults_ObjectFieldSelector`).
fn field_refs(downward: &mut Value) {
    let items = downward.get_mut("items").and_then(Value::as_array_mut);
    for item in items.into_iter().flatten() {
        if let Some(field_ref) = item.get_mut("fieldRef") {
            insert(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// A PodSpec's init containers and containers.
fn containers_mut(spec: &mut Value) -> impl Iterator<Item = &mut Value> {
    spec.as_object_mut()
        .into_iter()
        .flat_map(|spec| spec.iter_mut())
        .filter(|(key, _)| matches!(key.as_str(), "initContainers" | "containers"))
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
        ("terminationMessagePath", json!("/dev/termination-log")),
        ("terminationMessagePolicy", json!("File")),
        ("imagePullPolicy", json!(pull)),
        ("resources", json!({})),
    ] {
        insert(container, field, value);
    }
    for port in ports(container) {
        insert(port, "protocol", json!("TCP"));
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
            insert(probe, field, json!(value));
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
        if let Some(field_ref) = var.pointer_mut("/valueFrom/fieldRef") {
            insert(field_ref, "apiVersion", json!("v1"));
        }
    }
}

/// A handler's `httpGet`: path `/`, scheme `HTTP`.
fn http_get(handler: &mut Value) {
    if let Some(action) = handler.get_mut("httpGet").filter(|a| a.is_object()) {
        insert(action, "path", json!("/"));
        insert(action, "scheme", json!("HTTP"));
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
    let Some(map) = object.as_object_mut() else {
        return;
    };
    let spec = map.entry("spec").or_insert_with(|| json!({}));
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
        if unset(spec, field) {
            spec[field] = json!(value);
        }
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
        if unset(port, "protocol") {
            port["protocol"] = json!("TCP");
        }
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
    if super::validation::externally_accessible(spec) && unset(spec, "externalTrafficPolicy") {
        spec["externalTrafficPolicy"] = json!("Cluster");
    }
    if matches!(kind.as_str(), "NodePort" | "LoadBalancer" | "ClusterIP") {
        insert(spec, "internalTrafficPolicy", json!("Cluster"));
    }
    if kind == "LoadBalancer" {
        insert(spec, "allocateLoadBalancerNodePorts", json!(true));
    }
}

/// Whether a string field of `object` is absent, null or empty, as Go's
/// zero value.
fn unset(object: &Value, field: &str) -> bool {
    match object.get(field) {
        None | Some(Value::Null) => true,
        Some(value) => value.as_str() == Some(""),
    }
}

/// The next free cluster IP of the Service range 10.96.0.0/12 after
/// `last` (an offset into it; offsets up to 10 are left to the
/// `kubernetes` and DNS Services of a real cluster), skipping those
/// `taken`.
pub fn next_cluster_ip(last: &mut u32, taken: impl Fn(&str) -> bool) -> String {
    loop {
        *last = (*last + 1).max(11) % (1 << 20);
        let ip = format!(
            "10.{}.{}.{}",
            96 + (*last >> 16),
            (*last >> 8) & 0xff,
            *last & 0xff
        );
        if !taken(&ip) {
            return ip;
        }
    }
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
        let mut pod = json!({"spec": deployment["spec"]["template"]["spec"].clone()});
        apply("", "Pod", &mut pod);
        assert_eq!(pod["spec"]["enableServiceLinks"], true);
        assert_eq!(
            pod["spec"]["volumes"],
            deployment["spec"]["template"]["spec"]["volumes"]
        );
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
        assert_eq!(next_cluster_ip(&mut last, |_| false), "10.96.0.11");
        let taken = |ip: &str| ip == "10.96.0.12";
        assert_eq!(next_cluster_ip(&mut last, taken), "10.96.0.13");
        let mut high = 0x1_00ff;
        assert_eq!(next_cluster_ip(&mut high, taken), "10.97.1.0");
    }
}
