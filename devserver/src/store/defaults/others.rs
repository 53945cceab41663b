//! The defaults of the kinds beyond Pods, Services, Namespaces, Secrets
//! and the `apps` workloads: Jobs and CronJobs, the core kinds of storage,
//! nodes, endpoints, replication and limits, and the kinds of the
//! discovery, networking and autoscaling groups.

use serde_json::{Map, Value, json};

use super::{insert, insert_unset, pod_template, template_metadata, volume_sources};

/// Whether `object[field]` is a Go pointer, slice or map left nil: absent
/// or null.
fn nil(object: &Value, field: &str) -> bool {
    object.get(field).is_none_or(Value::is_null)
}

/// Whether `object[field]` is a Go slice or map of length 0: nil, or
/// empty.
fn empty(object: &Value, field: &str) -> bool {
    match object.get(field) {
        Some(Value::Object(map)) => map.is_empty(),
        Some(Value::Array(list)) => list.is_empty(),
        _ => nil(object, field),
    }
}

/// The `spec` of `object`, a struct in Go, there even when unwritten.
fn spec(object: &mut Value) -> Option<&mut Value> {
    insert(object, "spec", json!({}));
    object.get_mut("spec").filter(|spec| spec.is_object())
}

/// `labels` as `object`'s labels where it has none
/// (`SetDefaults_Job`, `SetDefaults_ReplicationController`). An empty
/// map copied would not show, so only labels are.
fn labels_unless_labelled(object: &mut Value, labels: &Value) {
    if labels.as_object().is_none_or(Map::is_empty) {
        return;
    }
    insert(object, "metadata", json!({}));
    if let Some(metadata) = object.get_mut("metadata").filter(|m| m.is_object())
        && empty(metadata, "labels")
    {
        metadata["labels"] = labels.clone();
    }
}

/// A Job (`SetDefaults_Job`, with `JobPodReplacementPolicy` on): one
/// completion and one Pod at a time when it says neither, six retries (or
/// all of them with a per-index limit), a non-indexed, running Job with a
/// generated selector whose Pods are replaced once terminated (once failed
/// under a Pod failure policy), the template's labels as its own where it
/// has none; its failure policy's conditions and its Pod template.
pub(super) fn job(object: &mut Value) {
    let template_labels = object
        .pointer("/spec/template/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(spec) = spec(object) else {
        return;
    };
    if nil(spec, "completions") && nil(spec, "parallelism") {
        spec["completions"] = json!(1);
    }
    insert(spec, "parallelism", json!(1));
    let backoff_limit = if nil(spec, "backoffLimitPerIndex") {
        6
    } else {
        i32::MAX
    };
    insert(spec, "backoffLimit", json!(backoff_limit));
    insert(spec, "completionMode", json!("NonIndexed"));
    insert(spec, "suspend", json!(false));
    let replacement = if nil(spec, "podFailurePolicy") {
        "TerminatingOrFailed"
    } else {
        "Failed"
    };
    insert(spec, "podReplacementPolicy", json!(replacement));
    insert(spec, "manualSelector", json!(false));
    job_spec_parts(spec);
    labels_unless_labelled(object, &template_labels);
}

/// What a Job's spec gets wherever it is, a CronJob's Job template too:
/// its failure policy's condition patterns' status `True`
/// (`SetDefaults_PodFailurePolicyOnPodConditionsPattern`) and its Pod
/// template's defaults.
fn job_spec_parts(spec: &mut Value) {
    let rules = spec
        .pointer_mut("/podFailurePolicy/rules")
        .and_then(Value::as_array_mut);
    for rule in rules.into_iter().flatten() {
        let patterns = rule
            .get_mut("onPodConditions")
            .and_then(Value::as_array_mut);
        for pattern in patterns.into_iter().flatten() {
            insert_unset(pattern, "status", json!("True"));
        }
    }
    if let Some(template) = spec.get_mut("template") {
        pod_template(template);
    }
}

/// A CronJob (`SetDefaults_CronJob`): concurrent runs allowed, not
/// suspended, three successful and one failed Job kept. Its Job template
/// gets no Job's defaults (`SetDefaults_Job` is the Job's own), only those
/// of the types within it.
pub(super) fn cron_job(object: &mut Value) {
    let Some(spec) = spec(object) else {
        return;
    };
    insert_unset(spec, "concurrencyPolicy", json!("Allow"));
    insert(spec, "suspend", json!(false));
    insert(spec, "successfulJobsHistoryLimit", json!(3));
    insert(spec, "failedJobsHistoryLimit", json!(1));
    if let Some(template) = spec.get_mut("jobTemplate").filter(|t| t.is_object()) {
        template_metadata(template);
        if let Some(job_spec) = template.get_mut("spec").filter(|s| s.is_object()) {
            job_spec_parts(job_spec);
        }
    }
}

/// A PersistentVolume (`SetDefaults_PersistentVolume`): phase `Pending`,
/// reclaim policy `Retain`, a file system volume, and its source's
/// defaults, those of a Pod's volume of the same source.
pub(super) fn persistent_volume(object: &mut Value) {
    insert(object, "status", json!({}));
    if let Some(status) = object.get_mut("status") {
        insert_unset(status, "phase", json!("Pending"));
    }
    let Some(spec) = spec(object) else {
        return;
    };
    insert_unset(spec, "persistentVolumeReclaimPolicy", json!("Retain"));
    insert(spec, "volumeMode", json!("Filesystem"));
    volume_sources(spec);
}

/// A Node: what it can allocate is its capacity unless it says
/// (`SetDefaults_NodeStatus`).
pub(super) fn node(object: &mut Value) {
    let Some(status) = object.get_mut("status").filter(|s| s.is_object()) else {
        return;
    };
    let capacity = status.get("capacity").and_then(Value::as_object);
    if nil(status, "allocatable") && capacity.is_some_and(|c| !c.is_empty()) {
        status["allocatable"] = status["capacity"].clone();
    }
}

/// Endpoints: each port's protocol `TCP` (`SetDefaults_Endpoints`).
pub(super) fn endpoints(object: &mut Value) {
    let subsets = object.get_mut("subsets").and_then(Value::as_array_mut);
    for subset in subsets.into_iter().flatten() {
        for port in super::ports(subset) {
            insert_unset(port, "protocol", json!("TCP"));
        }
    }
}

/// A ReplicationController (`SetDefaults_ReplicationController`): its
/// template's labels as its selector and its own labels where it has none,
/// one replica, and its Pod template's defaults.
pub(super) fn replication_controller(object: &mut Value) {
    let template_labels = object
        .pointer("/spec/template/metadata/labels")
        .cloned()
        .unwrap_or(Value::Null);
    let Some(spec) = spec(object) else {
        return;
    };
    if template_labels.as_object().is_some_and(|l| !l.is_empty()) && empty(spec, "selector") {
        spec["selector"] = template_labels.clone();
    }
    insert(spec, "replicas", json!(1));
    if let Some(template) = spec.get_mut("template").filter(|t| t.is_object()) {
        pod_template(template);
    }
    labels_unless_labelled(object, &template_labels);
}

/// A LimitRange: each item of type `Container` gets default limits from
/// its maxima, and default requests from its default limits, then from its
/// minima (`SetDefaults_LimitRangeItem`).
pub(super) fn limit_range(object: &mut Value) {
    let limits = object
        .pointer_mut("/spec/limits")
        .and_then(Value::as_array_mut);
    for item in limits.into_iter().flatten() {
        if item.get("type").and_then(Value::as_str) != Some("Container") {
            continue;
        }
        insert(item, "default", json!({}));
        insert(item, "defaultRequest", json!({}));
        for (from, to) in [
            ("max", "default"),
            ("default", "defaultRequest"),
            ("min", "defaultRequest"),
        ] {
            let Some(quantities) = item.get(from).and_then(Value::as_object).cloned() else {
                continue;
            };
            if let Some(target) = item.get_mut(to).and_then(Value::as_object_mut) {
                for (resource, quantity) in quantities {
                    target.entry(resource).or_insert(quantity);
                }
            }
        }
        // Go's empty maps are not shown (`omitempty`).
        if let Some(item) = item.as_object_mut() {
            for field in ["default", "defaultRequest"] {
                if item
                    .get(field)
                    .and_then(Value::as_object)
                    .is_some_and(|m| m.is_empty())
                {
                    item.remove(field);
                }
            }
        }
    }
}

/// An EndpointSlice: each port named `""` and of protocol `TCP` unless it
/// says (`SetDefaults_EndpointPort`).
pub(super) fn endpoint_slice(object: &mut Value) {
    for port in super::ports(object) {
        insert(port, "name", json!(""));
        insert(port, "protocol", json!("TCP"));
    }
}

/// A NetworkPolicy: each rule's ports of protocol `TCP` unless they say
/// (`SetDefaults_NetworkPolicyPort`), and policy types `Ingress`, and
/// `Egress` too when it has egress rules, unless it names them
/// (`SetDefaults_NetworkPolicy`).
pub(super) fn network_policy(object: &mut Value) {
    let Some(spec) = spec(object) else {
        return;
    };
    for direction in ["ingress", "egress"] {
        let rules = spec.get_mut(direction).and_then(Value::as_array_mut);
        for rule in rules.into_iter().flatten() {
            for port in super::ports(rule) {
                insert(port, "protocol", json!("TCP"));
            }
        }
    }
    if empty(spec, "policyTypes") {
        let mut types = vec![json!("Ingress")];
        if !empty(spec, "egress") {
            types.push(json!("Egress"));
        }
        spec["policyTypes"] = Value::Array(types);
    }
}

/// An IngressClass: its parameters' scope `Cluster` unless it says
/// (`SetDefaults_IngressClass`).
pub(super) fn ingress_class(object: &mut Value) {
    if let Some(parameters) = object
        .pointer_mut("/spec/parameters")
        .filter(|p| p.is_object())
    {
        insert(parameters, "scope", json!("Cluster"));
    }
}

/// A HorizontalPodAutoscaler of `autoscaling/v2`
/// (`SetDefaults_HorizontalPodAutoscaler`): one replica at least, a CPU
/// utilization target of 80% when it names no metric, and a behavior, when
/// it has one, whose scale-up and scale-down rules are the defaults but
/// for the fields it sets (`GenerateHPAScaleUpRules`,
/// `GenerateHPAScaleDownRules`).
pub(super) fn horizontal_pod_autoscaler(object: &mut Value) {
    let Some(spec) = spec(object) else {
        return;
    };
    insert(spec, "minReplicas", json!(1));
    if empty(spec, "metrics") {
        spec["metrics"] = json!([{"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}}]);
    }
    let Some(behavior) = spec.get_mut("behavior").filter(|b| b.is_object()) else {
        return;
    };
    let scale_up = json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
        {"type": "Pods", "value": 4, "periodSeconds": 15},
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    // No stabilization window: the controller's flag sets it.
    let scale_down = json!({"selectPolicy": "Max", "policies": [
        {"type": "Percent", "value": 100, "periodSeconds": 15}]});
    for (direction, defaults) in [("scaleUp", scale_up), ("scaleDown", scale_down)] {
        let rules = scaling_rules(behavior.get(direction), defaults);
        behavior[direction] = rules;
    }
}

/// `defaults` with each of the fields `copyHPAScalingRules` copies that
/// `rules` sets, not nil, taken from `rules`; an empty list of policies
/// replaces the default ones and, empty, is not shown (`omitempty`).
fn scaling_rules(rules: Option<&Value>, mut defaults: Value) -> Value {
    if let (Some(Value::Object(rules)), Some(merged)) = (rules, defaults.as_object_mut()) {
        for field in [
            "selectPolicy",
            "stabilizationWindowSeconds",
            "policies",
            "tolerance",
        ] {
            match rules.get(field) {
                None | Some(Value::Null) => {}
                Some(Value::Array(items)) if items.is_empty() => {
                    merged.remove(field);
                }
                Some(value) => {
                    merged.insert(field.into(), value.clone());
                }
            }
        }
    }
    defaults
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::super::apply;

    fn defaulted(group: &str, kind: &str, mut object: Value) -> Value {
        apply(group, kind, &mut object);
        object
    }

    fn template() -> Value {
        json!({"metadata": {"labels": {"app": "batch"}},
            "spec": {"restartPolicy": "Never", "containers": [{"name": "a", "image": "busybox:1.36"}]}})
    }

    #[test]
    fn a_job_gets_one_completion_at_a_time_six_retries_and_its_templates_labels() {
        let job = defaulted(
            "batch",
            "Job",
            json!({"metadata": {"name": "once"}, "spec": {"template": template()}}),
        );
        let spec = &job["spec"];
        assert_eq!(spec["completions"], 1);
        assert_eq!(spec["parallelism"], 1);
        assert_eq!(spec["backoffLimit"], 6);
        assert_eq!(spec["completionMode"], "NonIndexed");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["podReplacementPolicy"], "TerminatingOrFailed");
        assert_eq!(spec["manualSelector"], false);
        assert_eq!(job["metadata"]["labels"], json!({"app": "batch"}));
        let pod = &spec["template"];
        assert_eq!(pod["metadata"]["creationTimestamp"], Value::Null);
        assert_eq!(pod["spec"]["restartPolicy"], "Never", "kept");
        assert_eq!(pod["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(pod["spec"]["terminationGracePeriodSeconds"], 30);
        assert_eq!(
            pod["spec"]["containers"][0]["imagePullPolicy"],
            "IfNotPresent"
        );
        assert!(pod["spec"].get("enableServiceLinks").is_none());
        // Idempotent.
        assert_eq!(defaulted("batch", "Job", job.clone()), job);
    }

    #[test]
    fn a_jobs_set_fields_are_kept_and_its_conditional_defaults_follow_them() {
        // Parallelism alone leaves completions unset (a work queue).
        let queue = defaulted(
            "batch",
            "Job",
            json!({"spec": {"parallelism": 3, "template": template()}}),
        );
        assert!(queue["spec"].get("completions").is_none());
        assert_eq!(queue["spec"]["parallelism"], 3);
        // Completions alone: one Pod at a time.
        let serial = defaulted(
            "batch",
            "Job",
            json!({"spec": {"completions": 5, "template": template()}}),
        );
        assert_eq!(serial["spec"]["completions"], 5);
        assert_eq!(serial["spec"]["parallelism"], 1);
        // A per-index limit makes the global one unbounded.
        let indexed = defaulted(
            "batch",
            "Job",
            json!({"spec": {"completions": 4, "completionMode": "Indexed",
                "backoffLimitPerIndex": 1, "template": template()}}),
        );
        assert_eq!(indexed["spec"]["backoffLimit"], 2147483647);
        assert_eq!(indexed["spec"]["completionMode"], "Indexed");
        // A failure policy waits for failed Pods; its patterns are `True`.
        let policy = defaulted(
            "batch",
            "Job",
            json!({"spec": {"backoffLimit": 0, "suspend": true, "template": template(),
                "podFailurePolicy": {"rules": [
                    {"action": "Ignore", "onPodConditions": [{"type": "DisruptionTarget"},
                        {"type": "Custom", "status": "False"}]},
                    {"action": "FailJob", "onExitCodes": {"operator": "In", "values": [42]}}]}}}),
        );
        let spec = &policy["spec"];
        assert_eq!(spec["backoffLimit"], 0);
        assert_eq!(spec["suspend"], true);
        assert_eq!(spec["podReplacementPolicy"], "Failed");
        let patterns = &spec["podFailurePolicy"]["rules"][0]["onPodConditions"];
        assert_eq!(
            *patterns,
            json!([{"type": "DisruptionTarget", "status": "True"},
                {"type": "Custom", "status": "False"}])
        );
        // A chosen replacement policy and labels of its own are kept.
        let labelled = defaulted(
            "batch",
            "Job",
            json!({"metadata": {"labels": {"team": "a"}},
                "spec": {"podReplacementPolicy": "Failed", "template": template()}}),
        );
        assert_eq!(labelled["metadata"]["labels"], json!({"team": "a"}));
        assert_eq!(labelled["spec"]["podReplacementPolicy"], "Failed");
    }

    #[test]
    fn a_cronjob_gets_its_policy_and_limits_and_its_job_template_no_job_defaults() {
        let cron = defaulted(
            "batch",
            "CronJob",
            json!({"spec": {"schedule": "*/5 * * * *", "jobTemplate": {"spec": {
                "podFailurePolicy": {"rules": [{"action": "Ignore",
                    "onPodConditions": [{"type": "DisruptionTarget"}]}]},
                "template": template()}}}}),
        );
        let spec = &cron["spec"];
        assert_eq!(spec["concurrencyPolicy"], "Allow");
        assert_eq!(spec["suspend"], false);
        assert_eq!(spec["successfulJobsHistoryLimit"], 3);
        assert_eq!(spec["failedJobsHistoryLimit"], 1);
        let job_template = &spec["jobTemplate"];
        assert_eq!(job_template["metadata"], json!({"creationTimestamp": null}));
        let job = &job_template["spec"];
        for field in [
            "completions",
            "parallelism",
            "backoffLimit",
            "completionMode",
            "suspend",
            "podReplacementPolicy",
            "manualSelector",
        ] {
            assert!(job.get(field).is_none(), "{field}");
        }
        assert_eq!(
            job["podFailurePolicy"]["rules"][0]["onPodConditions"][0]["status"],
            "True"
        );
        assert_eq!(job["template"]["spec"]["dnsPolicy"], "ClusterFirst");
        assert_eq!(
            job["template"]["metadata"]["creationTimestamp"],
            Value::Null
        );
        let set = defaulted(
            "batch",
            "CronJob",
            json!({"spec": {"concurrencyPolicy": "Forbid", "suspend": true,
                "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 5}}),
        );
        assert_eq!(
            set["spec"],
            json!({"concurrencyPolicy": "Forbid", "suspend": true,
                "successfulJobsHistoryLimit": 0, "failedJobsHistoryLimit": 5})
        );
    }

    #[test]
    fn claims_and_volumes_are_pending_file_systems_and_volumes_are_retained() {
        let claim = defaulted(
            "",
            "PersistentVolumeClaim",
            json!({"spec": {"accessModes": ["ReadWriteOnce"],
                "resources": {"requests": {"storage": "1Gi"}}}}),
        );
        assert_eq!(claim["spec"]["volumeMode"], "Filesystem");
        assert_eq!(claim["status"], json!({"phase": "Pending"}));
        let bound = defaulted(
            "",
            "PersistentVolumeClaim",
            json!({"spec": {"volumeMode": "Block"}, "status": {"phase": "Bound"}}),
        );
        assert_eq!(bound["spec"]["volumeMode"], "Block");
        assert_eq!(bound["status"]["phase"], "Bound");
        let volume = defaulted(
            "",
            "PersistentVolume",
            json!({"spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"],
                "hostPath": {"path": "/data"}}}),
        );
        assert_eq!(volume["status"], json!({"phase": "Pending"}));
        let spec = &volume["spec"];
        assert_eq!(spec["persistentVolumeReclaimPolicy"], "Retain");
        assert_eq!(spec["volumeMode"], "Filesystem");
        assert_eq!(spec["hostPath"], json!({"path": "/data", "type": ""}));
        assert!(spec.get("emptyDir").is_none());
        let sources = defaulted(
            "",
            "PersistentVolume",
            json!({"spec": {"persistentVolumeReclaimPolicy": "Delete", "volumeMode": "Block",
                "iscsi": {"targetPortal": "10.0.0.1:3260", "iqn": "iqn.x", "lun": 0}}}),
        );
        assert_eq!(sources["spec"]["persistentVolumeReclaimPolicy"], "Delete");
        assert_eq!(sources["spec"]["volumeMode"], "Block");
        assert_eq!(sources["spec"]["iscsi"]["iscsiInterface"], "default");
        let rbd = defaulted(
            "",
            "PersistentVolume",
            json!({"spec": {"rbd": {"monitors": ["m"], "image": "i"},
                "scaleIO": {"gateway": "g", "system": "s", "secretRef": {"name": "x"}}}}),
        );
        assert_eq!(
            rbd["spec"]["rbd"],
            json!({"monitors": ["m"], "image": "i", "pool": "rbd", "user": "admin",
                "keyring": "/etc/ceph/keyring"})
        );
        assert_eq!(rbd["spec"]["scaleIO"]["storageMode"], "ThinProvisioned");
        assert_eq!(rbd["spec"]["scaleIO"]["fsType"], "xfs");
    }

    #[test]
    fn a_node_allocates_its_capacity_and_endpoints_ports_are_tcp() {
        let node = defaulted(
            "",
            "Node",
            json!({"status": {"capacity": {"cpu": "4", "pods": "110"}}}),
        );
        assert_eq!(
            node["status"]["allocatable"],
            json!({"cpu": "4", "pods": "110"})
        );
        let own = defaulted(
            "",
            "Node",
            json!({"status": {"capacity": {"cpu": "4"}, "allocatable": {"cpu": "3500m"}}}),
        );
        assert_eq!(own["status"]["allocatable"], json!({"cpu": "3500m"}));
        let bare = defaulted("", "Node", json!({"metadata": {"name": "n"}}));
        assert!(bare.get("status").is_none());
        let empty = defaulted("", "Node", json!({"status": {"capacity": {}}}));
        assert!(empty["status"].get("allocatable").is_none(), "{empty}");
        let endpoints = defaulted(
            "",
            "Endpoints",
            json!({"subsets": [{"addresses": [{"ip": "10.0.0.1"}],
                "ports": [{"port": 80}, {"port": 53, "protocol": "UDP"}]}]}),
        );
        assert_eq!(
            endpoints["subsets"][0]["ports"],
            json!([{"port": 80, "protocol": "TCP"}, {"port": 53, "protocol": "UDP"}])
        );
    }

    #[test]
    fn a_replication_controller_selects_and_is_labelled_by_its_templates_labels() {
        let rc = defaulted(
            "",
            "ReplicationController",
            json!({"metadata": {"name": "web"}, "spec": {"template": template()}}),
        );
        assert_eq!(rc["spec"]["selector"], json!({"app": "batch"}));
        assert_eq!(rc["metadata"]["labels"], json!({"app": "batch"}));
        assert_eq!(rc["spec"]["replicas"], 1);
        assert_eq!(
            rc["spec"]["template"]["spec"]["schedulerName"],
            "default-scheduler"
        );
        let own = defaulted(
            "",
            "ReplicationController",
            json!({"metadata": {"labels": {"tier": "web"}}, "spec": {"replicas": 0,
                "selector": {"app": "batch", "v": "1"}, "template": template()}}),
        );
        assert_eq!(own["spec"]["selector"], json!({"app": "batch", "v": "1"}));
        assert_eq!(own["metadata"]["labels"], json!({"tier": "web"}));
        assert_eq!(own["spec"]["replicas"], 0);
        let untemplated = defaulted("", "ReplicationController", json!({"spec": {}}));
        assert_eq!(untemplated["spec"], json!({"replicas": 1}));
    }

    #[test]
    fn a_limit_ranges_container_items_fill_defaults_from_max_default_and_min() {
        let range = defaulted(
            "",
            "LimitRange",
            json!({"spec": {"limits": [
                {"type": "Container", "max": {"cpu": "2", "memory": "1Gi"},
                    "min": {"cpu": "100m", "ephemeral-storage": "1Gi"},
                    "default": {"memory": "512Mi"}},
                {"type": "Container"},
                {"type": "Pod", "max": {"cpu": "4"}}]}}),
        );
        let limits = &range["spec"]["limits"];
        // Default limits from maxima where unset; default requests from
        // default limits, then minima.
        assert_eq!(limits[0]["default"], json!({"cpu": "2", "memory": "512Mi"}));
        assert_eq!(
            limits[0]["defaultRequest"],
            json!({"cpu": "2", "memory": "512Mi", "ephemeral-storage": "1Gi"})
        );
        // Empty maps are not shown, as Go's omitempty leaves them out.
        assert_eq!(limits[1], json!({"type": "Container"}));
        assert_eq!(limits[2], json!({"type": "Pod", "max": {"cpu": "4"}}));
        let requested = defaulted(
            "",
            "LimitRange",
            json!({"spec": {"limits": [{"type": "Container", "min": {"cpu": "100m"},
                "defaultRequest": {"cpu": "250m"}}]}}),
        );
        assert_eq!(
            requested["spec"]["limits"][0]["defaultRequest"],
            json!({"cpu": "250m"})
        );
    }

    #[test]
    fn endpoint_slice_ports_are_unnamed_tcp_unless_they_say() {
        let slice = defaulted(
            "discovery.k8s.io",
            "EndpointSlice",
            json!({"addressType": "IPv4", "endpoints": [], "ports": [
                {"port": 80}, {"name": "dns", "protocol": "UDP", "port": 53}]}),
        );
        assert_eq!(
            slice["ports"],
            json!([{"name": "", "protocol": "TCP", "port": 80},
                {"name": "dns", "protocol": "UDP", "port": 53}])
        );
    }

    #[test]
    fn a_network_policys_types_follow_its_rules_and_its_ports_are_tcp() {
        let ingress = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"podSelector": {}, "ingress": [{"ports": [{"port": 80}]}]}}),
        );
        assert_eq!(ingress["spec"]["policyTypes"], json!(["Ingress"]));
        assert_eq!(
            ingress["spec"]["ingress"][0]["ports"][0],
            json!({"port": 80, "protocol": "TCP"})
        );
        let both = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"podSelector": {}, "egress": [{"ports": [{"port": 53, "protocol": "UDP"}, {}]}]}}),
        );
        assert_eq!(both["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
        assert_eq!(
            both["spec"]["egress"][0]["ports"],
            json!([{"port": 53, "protocol": "UDP"}, {"protocol": "TCP"}])
        );
        let egress_only = defaulted(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": {"podSelector": {}, "policyTypes": ["Egress"]}}),
        );
        assert_eq!(egress_only["spec"]["policyTypes"], json!(["Egress"]));
        let empty = defaulted("networking.k8s.io", "NetworkPolicy", json!({}));
        assert_eq!(empty["spec"]["policyTypes"], json!(["Ingress"]));
    }

    #[test]
    fn an_ingress_class_parameters_are_cluster_scoped_unless_they_say() {
        let class = defaulted(
            "networking.k8s.io",
            "IngressClass",
            json!({"spec": {"controller": "example.com/ingress",
                "parameters": {"kind": "Params", "name": "p"}}}),
        );
        assert_eq!(class["spec"]["parameters"]["scope"], "Cluster");
        let namespaced = defaulted(
            "networking.k8s.io",
            "IngressClass",
            json!({"spec": {"parameters": {"kind": "P", "name": "p",
                "scope": "Namespace", "namespace": "x"}}}),
        );
        assert_eq!(namespaced["spec"]["parameters"]["scope"], "Namespace");
        let bare = defaulted(
            "networking.k8s.io",
            "IngressClass",
            json!({"spec": {"controller": "c"}}),
        );
        assert_eq!(bare["spec"], json!({"controller": "c"}));
    }

    #[test]
    fn an_autoscaler_gets_a_cpu_target_and_its_behaviors_rules_field_by_field() {
        let hpa = defaulted(
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"maxReplicas": 5,
                "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}),
        );
        let spec = &hpa["spec"];
        assert_eq!(spec["minReplicas"], 1);
        assert_eq!(
            spec["metrics"],
            json!([{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}])
        );
        assert!(spec.get("behavior").is_none(), "no behavior stays none");
        let tuned = defaulted(
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"minReplicas": 2, "maxReplicas": 5,
                "metrics": [{"type": "Resource", "resource": {"name": "memory",
                    "target": {"type": "AverageValue", "averageValue": "1Gi"}}}],
                "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60,
                    "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]}}}}),
        );
        let spec = &tuned["spec"];
        assert_eq!(spec["minReplicas"], 2);
        assert_eq!(spec["metrics"][0]["resource"]["name"], "memory");
        assert_eq!(
            spec["behavior"]["scaleUp"],
            json!({"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [
                {"type": "Pods", "value": 4, "periodSeconds": 15},
                {"type": "Percent", "value": 100, "periodSeconds": 15}]})
        );
        assert_eq!(
            spec["behavior"]["scaleDown"],
            json!({"stabilizationWindowSeconds": 60, "selectPolicy": "Max",
                "policies": [{"type": "Pods", "value": 1, "periodSeconds": 60}]})
        );
        let empty = defaulted(
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"behavior": {"scaleUp": {"selectPolicy": "Disabled"}}}}),
        );
        let behavior = &empty["spec"]["behavior"];
        assert_eq!(behavior["scaleUp"]["selectPolicy"], "Disabled");
        assert_eq!(behavior["scaleUp"]["stabilizationWindowSeconds"], 0);
        assert_eq!(
            behavior["scaleDown"],
            json!({"selectPolicy": "Max", "policies": [
                {"type": "Percent", "value": 100, "periodSeconds": 15}]})
        );
        assert_eq!(
            defaulted("autoscaling", "HorizontalPodAutoscaler", tuned.clone()),
            tuned
        );
        // Only the rules' own fields are copied; an empty list of policies
        // replaces the defaults and is not shown.
        let cleared = defaulted(
            "autoscaling",
            "HorizontalPodAutoscaler",
            json!({"spec": {"behavior": {"scaleDown": {"policies": [], "other": 1}}}}),
        );
        assert_eq!(
            cleared["spec"]["behavior"]["scaleDown"],
            json!({"selectPolicy": "Max"})
        );
    }

    #[test]
    fn storage_and_priority_classes_get_their_policies() {
        let class = defaulted(
            "storage.k8s.io",
            "StorageClass",
            json!({"provisioner": "example.com/disk"}),
        );
        assert_eq!(class["reclaimPolicy"], "Delete");
        assert_eq!(class["volumeBindingMode"], "Immediate");
        let retained = defaulted(
            "storage.k8s.io",
            "StorageClass",
            json!({"provisioner": "p", "reclaimPolicy": "Retain",
                "volumeBindingMode": "WaitForFirstConsumer"}),
        );
        assert_eq!(retained["reclaimPolicy"], "Retain");
        assert_eq!(retained["volumeBindingMode"], "WaitForFirstConsumer");
        let priority = defaulted("scheduling.k8s.io", "PriorityClass", json!({"value": 1000}));
        assert_eq!(priority["preemptionPolicy"], "PreemptLowerPriority");
        let never = defaulted(
            "scheduling.k8s.io",
            "PriorityClass",
            json!({"value": 1000, "preemptionPolicy": "Never"}),
        );
        assert_eq!(never["preemptionPolicy"], "Never");
    }

    #[test]
    fn budgets_ingresses_and_quotas_get_none() {
        for (group, kind, object) in [
            (
                "policy",
                "PodDisruptionBudget",
                json!({"spec": {"minAvailable": 1}}),
            ),
            (
                "networking.k8s.io",
                "Ingress",
                json!({"spec": {"rules": [{"host": "a.example"}]}}),
            ),
            (
                "",
                "ResourceQuota",
                json!({"spec": {"hard": {"pods": "10"}}}),
            ),
        ] {
            assert_eq!(defaulted(group, kind, object.clone()), object, "{kind}");
        }
    }
}
