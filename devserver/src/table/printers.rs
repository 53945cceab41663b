//! The Table columns of the built-in kinds the dev server serves, as
//! kube-apiserver's printers give them (`pkg/printers/internalversion`
//! and, for CRDs, apiextensions' default): `kubectl get pods` shows
//! `NAME READY STATUS RESTARTS AGE`, `-o wide` adds the priority-1
//! columns. Cells are computed from the stored object as the printers
//! compute them; `<none>` where they print it.

use std::collections::BTreeSet;

use serde_json::{Value, json};

use super::{age, human_age, name_column_description, seconds_since_epoch};
use crate::store::canonical_quantity;
use crate::store::selector::label_selector_text;

/// One column: its definition's fields and how a row's cell is computed.
pub struct Column {
    pub name: &'static str,
    pub kind: &'static str,
    pub format: &'static str,
    pub description: &'static str,
    pub priority: u8,
    pub cell: Cell,
}

/// How a column's cell is read from an object.
#[derive(Clone, Copy)]
pub enum Cell {
    /// The integer at a JSON pointer, 0 when absent.
    Count(&'static str),
    /// The string at a JSON pointer, else the fallback.
    Text(&'static str, &'static str),
    /// The string at a JSON pointer when it is set, even empty; else the
    /// fallback (a Go pointer field).
    Optional(&'static str, &'static str),
    /// Computed from the object and the time now (seconds since the epoch).
    Computed(fn(&Value, i64) -> Value),
}

impl Column {
    /// This column's cell of `object`.
    pub fn cell(&self, object: &Value, now: i64) -> Value {
        let at = |pointer: &str| object.pointer(pointer).unwrap_or(&Value::Null);
        match self.cell {
            Cell::Count(pointer) => json!(int(at(pointer))),
            Cell::Text(pointer, fallback) => text_or(at(pointer), fallback),
            Cell::Optional(pointer, unset) => json!(at(pointer).as_str().unwrap_or(unset)),
            Cell::Computed(compute) => compute(object, now),
        }
    }
}

const AGE_DESCRIPTION: &str = "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

fn column(name: &'static str, kind: &'static str, description: &'static str, cell: Cell) -> Column {
    Column {
        name,
        kind,
        format: "",
        description,
        priority: 0,
        cell,
    }
}

/// A column of the integer at `pointer`.
fn count(name: &'static str, description: &'static str, pointer: &'static str) -> Column {
    column(name, "integer", description, Cell::Count(pointer))
}

/// A column of the string at `pointer`, `fallback` when there is none.
fn text(
    name: &'static str,
    description: &'static str,
    pointer: &'static str,
    fallback: &'static str,
) -> Column {
    column(name, "string", description, Cell::Text(pointer, fallback))
}

/// A column of the string at `pointer`, even an empty one; `unset` when
/// there is none.
fn optional(
    name: &'static str,
    description: &'static str,
    pointer: &'static str,
    unset: &'static str,
) -> Column {
    column(name, "string", description, Cell::Optional(pointer, unset))
}

/// A column computed by `cell`.
fn with(
    name: &'static str,
    kind: &'static str,
    description: &'static str,
    cell: fn(&Value, i64) -> Value,
) -> Column {
    column(name, kind, description, Cell::Computed(cell))
}

fn wide(mut column: Column) -> Column {
    column.priority = 1;
    column
}

fn name() -> Column {
    Column {
        format: "name",
        ..text("Name", name_column_description(), "/metadata/name", "")
    }
}

fn age_column() -> Column {
    with("Age", "string", AGE_DESCRIPTION, |o, now| {
        json!(age(&o["metadata"]["creationTimestamp"], now))
    })
}

fn created_at() -> Column {
    with("Created At", "date", AGE_DESCRIPTION, |o, _| {
        o["metadata"]["creationTimestamp"].clone()
    })
}

/// The columns of a built-in `group`/`kind`; `None` for a custom resource.
pub fn columns(group: &str, kind: &str) -> Option<Vec<Column>> {
    Some(match (group, kind) {
        ("", "Namespace") => vec![
            name(),
            text("Status", "The status of the namespace", "/status/phase", ""),
            age_column(),
        ],
        ("", "ConfigMap") => vec![
            name(),
            with("Data", "integer", "Number of data entries", |o, _| {
                json!(len(&o["data"]) + len(&o["binaryData"]))
            }),
            age_column(),
        ],
        ("", "Secret") => vec![
            name(),
            text("Type", "The type of the secret", "/type", ""),
            with("Data", "integer", "Number of data entries", |o, _| {
                json!(len(&o["data"]))
            }),
            age_column(),
        ],
        ("", "ServiceAccount") => vec![
            name(),
            with("Secrets", "integer", "Number of secrets", |o, _| {
                json!(len(&o["secrets"]))
            }),
            age_column(),
        ],
        ("", "Pod") => pod_columns(),
        ("", "Service") => service_columns(),
        ("" | "events.k8s.io", "Event") => event_columns(),
        ("apps", "Deployment") => vec![
            name(),
            ready_of_desired(),
            count(
                "Up-to-date",
                "Total number of non-terminated pods targeted by this deployment that have the desired template spec.",
                "/status/updatedReplicas",
            ),
            count(
                "Available",
                "Total number of available pods (ready for at least minReadySeconds) targeted by this deployment.",
                "/status/availableReplicas",
            ),
            age_column(),
            containers(),
            images(),
            selector(DEPLOYMENT_SELECTOR),
        ],
        ("apps", "ReplicaSet") => vec![
            name(),
            with("Desired", "integer", "Number of desired pods.", |o, _| {
                json!(desired(o))
            }),
            count("Current", "Number of actual replicas.", "/status/replicas"),
            count(
                "Ready",
                "The number of ready replicas for this replica set.",
                "/status/readyReplicas",
            ),
            age_column(),
            containers(),
            images(),
            selector(DEPLOYMENT_SELECTOR),
        ],
        ("apps", "StatefulSet") => vec![
            name(),
            ready_of_desired(),
            age_column(),
            containers(),
            images(),
        ],
        ("apps", "DaemonSet") => vec![
            name(),
            count(
                "Desired",
                "The total number of nodes that should be running the daemon pod (including nodes correctly running the daemon pod).",
                "/status/desiredNumberScheduled",
            ),
            count(
                "Current",
                "The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod.",
                "/status/currentNumberScheduled",
            ),
            count(
                "Ready",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready.",
                "/status/numberReady",
            ),
            count(
                "Up-to-date",
                "The total number of nodes that are running updated daemon pod",
                "/status/updatedNumberScheduled",
            ),
            count(
                "Available",
                "The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)",
                "/status/numberAvailable",
            ),
            with(
                "Node Selector",
                "string",
                "NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node.",
                |o, _| {
                    json!(
                        pairs(&o["spec"]["template"]["spec"]["nodeSelector"])
                            .unwrap_or_else(|| "<none>".into())
                    )
                },
            ),
            age_column(),
            containers(),
            images(),
            selector(DEPLOYMENT_SELECTOR),
        ],
        ("coordination.k8s.io", "Lease") => vec![
            name(),
            text(
                "Holder",
                "The holder of the lease",
                "/spec/holderIdentity",
                "<unknown>",
            ),
            age_column(),
        ],
        ("rbac.authorization.k8s.io", "ClusterRole" | "Role") => vec![name(), created_at()],
        ("rbac.authorization.k8s.io", "ClusterRoleBinding" | "RoleBinding") => vec![
            name(),
            with("Role", "string", "Role of the binding", |o, _| {
                let role = &o["roleRef"];
                json!(format!(
                    "{}/{}",
                    role["kind"].as_str().unwrap_or_default(),
                    role["name"].as_str().unwrap_or_default()
                ))
            }),
            age_column(),
            wide(with("Users", "string", "Users in the binding", |o, _| {
                subjects(o, "User")
            })),
            wide(with("Groups", "string", "Groups in the binding", |o, _| {
                subjects(o, "Group")
            })),
            wide(with(
                "ServiceAccounts",
                "string",
                "ServiceAccounts in the binding",
                |o, _| subjects(o, "ServiceAccount"),
            )),
        ],
        ("apiextensions.k8s.io", "CustomResourceDefinition") => vec![name(), created_at()],
        ("", "ReplicationController") => replication_controller_columns(),
        ("", "Node") => node_columns(),
        ("", "PersistentVolume") => persistent_volume_columns(),
        ("", "PersistentVolumeClaim") => persistent_volume_claim_columns(),
        ("", "Endpoints") => vec![
            name(),
            with("Endpoints", "string", ENDPOINTS_SUBSETS, |o, _| {
                json!(format_endpoints(o))
            }),
            age_column(),
        ],
        ("", "ResourceQuota") => vec![
            name(),
            with(
                "Request",
                "string",
                "Request represents a minimum amount of cpu/memory that a container may consume.",
                |o, _| json!(quota_usage(o, false)),
            ),
            with(
                "Limit",
                "string",
                "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node.",
                |o, _| json!(quota_usage(o, true)),
            ),
            age_column(),
        ],
        // No printer: the default table's columns.
        ("", "LimitRange") => vec![name(), created_at()],
        ("batch", "Job") => job_columns(),
        ("batch", "CronJob") => cron_job_columns(),
        ("autoscaling", "HorizontalPodAutoscaler") => horizontal_pod_autoscaler_columns(),
        ("policy", "PodDisruptionBudget") => vec![
            name(),
            with(
                "Min Available",
                "string",
                "The minimum number of pods that must be available.",
                |o, _| json!(int_or_string(&o["spec"]["minAvailable"])),
            ),
            with(
                "Max Unavailable",
                "string",
                "The maximum number of pods that may be unavailable.",
                |o, _| json!(int_or_string(&o["spec"]["maxUnavailable"])),
            ),
            count(
                "Allowed Disruptions",
                "Calculated number of pods that may be disrupted at this time.",
                "/status/disruptionsAllowed",
            ),
            age_column(),
        ],
        ("discovery.k8s.io", "EndpointSlice") => endpoint_slice_columns(),
        ("networking.k8s.io", "Ingress") => ingress_columns(),
        ("networking.k8s.io", "IngressClass") => vec![
            name(),
            text(
                "Controller",
                "Controller that is responsible for handling this class",
                "/spec/controller",
                "",
            ),
            with(
                "Parameters",
                "string",
                "A reference to a resource with additional parameters",
                |o, _| {
                    let parameters = &o["spec"]["parameters"];
                    if !parameters.is_object() {
                        return json!("<none>");
                    }
                    let mut kind = str_of(&parameters["kind"]).to_string();
                    if let Some(group) = parameters["apiGroup"].as_str() {
                        kind = format!("{kind}.{group}");
                    }
                    json!(format!("{kind}/{}", str_of(&parameters["name"])))
                },
            ),
            age_column(),
        ],
        ("networking.k8s.io", "NetworkPolicy") => vec![
            name(),
            with(
                "Pod-Selector",
                "string",
                "Selects the pods to which this NetworkPolicy object applies.  The array of ingress rules is applied to any pods selected by this field. Multiple network policies can select the same set of pods.  In this case, the ingress rules for each are combined additively. This field is NOT optional and follows standard label selector semantics. An empty podSelector matches all pods in this namespace.",
                |o, _| json!(format_label_selector(&o["spec"]["podSelector"])),
            ),
            age_column(),
        ],
        ("storage.k8s.io", "StorageClass") => storage_class_columns(),
        ("scheduling.k8s.io", "PriorityClass") => vec![
            name(),
            count(
                "Value",
                "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.",
                "/value",
            ),
            with(
                "Global-Default",
                "boolean",
                "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.",
                |o, _| json!(o["globalDefault"].as_bool().unwrap_or(false)),
            ),
            age_column(),
            optional(
                "PreemptionPolicy",
                "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
                "/preemptionPolicy",
                "",
            ),
        ],
        _ => return None,
    })
}

fn pod_columns() -> Vec<Column> {
    vec![
        name(),
        with(
            "Ready",
            "string",
            "The aggregate readiness state of this pod for accepting traffic.",
            |o, _| {
                let total = o["spec"]["containers"].as_array().map_or(0, Vec::len);
                let ready = o["status"]["containerStatuses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter(|s| s["ready"] == true)
                    .count();
                json!(format!("{ready}/{total}"))
            },
        ),
        with(
            "Status",
            "string",
            "The aggregate status of the containers in this pod.",
            |o, _| json!(pod_status(o)),
        ),
        with(
            "Restarts",
            "string",
            "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
            |o, _| {
                let restarts: i64 = o["status"]["containerStatuses"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|s| int(&s["restartCount"]))
                    .sum();
                json!(restarts.to_string())
            },
        ),
        age_column(),
        wide(text(
            "IP",
            "IP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
            "/status/podIP",
            "<none>",
        )),
        wide(text(
            "Node",
            "NodeName is a request to schedule this pod onto a specific node. If it is non-empty, the scheduler simply schedules this pod onto that node, assuming that it fits resource requirements.",
            "/spec/nodeName",
            "<none>",
        )),
        wide(text(
            "Nominated Node",
            "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
            "/status/nominatedNodeName",
            "<none>",
        )),
        wide(with(
            "Readiness Gates",
            "string",
            "If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to \"True\" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates",
            |o, _| match o["spec"]["readinessGates"].as_array() {
                Some(gates) if !gates.is_empty() => {
                    let met = gates
                        .iter()
                        .filter(|g| {
                            o["status"]["conditions"]
                                .as_array()
                                .into_iter()
                                .flatten()
                                .any(|c| c["type"] == g["conditionType"] && c["status"] == "True")
                        })
                        .count();
                    json!(format!("{met}/{}", gates.len()))
                }
                _ => json!("<none>"),
            },
        )),
    ]
}

/// A Pod's STATUS as the printer reduces it: its phase, or the reason of
/// a terminating Pod, a status reason, or a container's waiting or
/// terminated reason.
fn pod_status(pod: &Value) -> String {
    let mut reason = pod["status"]["reason"]
        .as_str()
        .or_else(|| pod["status"]["phase"].as_str())
        .unwrap_or_default()
        .to_string();
    for status in pod["status"]["containerStatuses"]
        .as_array()
        .into_iter()
        .flatten()
    {
        let state = &status["state"];
        if let Some(waiting) = state["waiting"]["reason"]
            .as_str()
            .filter(|r| !r.is_empty())
        {
            reason = waiting.to_string();
        } else if let Some(terminated) = state["terminated"].as_object() {
            reason = match terminated.get("reason").and_then(Value::as_str) {
                Some(r) if !r.is_empty() => r.to_string(),
                _ => match terminated.get("signal").and_then(Value::as_i64) {
                    Some(signal) if signal != 0 => format!("Signal:{signal}"),
                    _ => format!("ExitCode:{}", int(&terminated["exitCode"])),
                },
            };
        }
    }
    if pod["metadata"]["deletionTimestamp"].is_string() {
        reason = "Terminating".into();
    }
    reason
}

fn service_columns() -> Vec<Column> {
    vec![
        name(),
        text(
            "Type",
            "type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer.",
            "/spec/type",
            "",
        ),
        text(
            "Cluster-IP",
            "clusterIP is the IP address of the service and is usually assigned randomly.",
            "/spec/clusterIP",
            "<none>",
        ),
        with(
            "External-IP",
            "string",
            "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.",
            |o, _| {
                let mut ips: Vec<&str> = o["status"]["loadBalancer"]["ingress"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|i| i["ip"].as_str().or_else(|| i["hostname"].as_str()))
                    .collect();
                ips.extend(
                    o["spec"]["externalIPs"]
                        .as_array()
                        .into_iter()
                        .flatten()
                        .filter_map(Value::as_str),
                );
                match (o["spec"]["type"].as_str(), ips.is_empty()) {
                    (Some("ExternalName"), _) => text_or(&o["spec"]["externalName"], "<none>"),
                    (Some("LoadBalancer"), true) => json!("<pending>"),
                    (_, true) => json!("<none>"),
                    (_, false) => json!(ips.join(",")),
                }
            },
        ),
        with(
            "Port(s)",
            "string",
            "The list of ports that are exposed by this service.",
            |o, _| {
                let ports: Vec<String> = o["spec"]["ports"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .map(|p| {
                        let protocol = p["protocol"].as_str().unwrap_or("TCP");
                        match p["nodePort"].as_i64() {
                            Some(node) if node != 0 => {
                                format!("{}:{node}/{protocol}", int(&p["port"]))
                            }
                            _ => format!("{}/{protocol}", int(&p["port"])),
                        }
                    })
                    .collect();
                json!(if ports.is_empty() {
                    "<none>".into()
                } else {
                    ports.join(",")
                })
            },
        ),
        age_column(),
        wide(with(
            "Selector",
            "string",
            "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
            |o, _| json!(pairs(&o["spec"]["selector"]).unwrap_or_else(|| "<none>".into())),
        )),
    ]
}

/// An Event's columns, read from a core Event or its `events.k8s.io`
/// form (`note`, `regarding`, `deprecatedCount`, ...).
fn event_columns() -> Vec<Column> {
    fn first<'a>(o: &'a Value, fields: &[&str]) -> &'a Value {
        fields
            .iter()
            .map(|f| o.pointer(f).unwrap_or(&Value::Null))
            .find(|v| !v.is_null())
            .unwrap_or(&Value::Null)
    }
    fn last_seen(o: &Value) -> &Value {
        first(
            o,
            &[
                "/series/lastObservedTime",
                "/lastTimestamp",
                "/deprecatedLastTimestamp",
                "/eventTime",
                "/metadata/creationTimestamp",
            ],
        )
    }
    vec![
        with(
            "Last Seen",
            "string",
            "Time when this Event was last observed.",
            |o, now| json!(age(last_seen(o), now)),
        ),
        text(
            "Type",
            "Type of this event (Normal, Warning), new types could be added in the future",
            "/type",
            "",
        ),
        text(
            "Reason",
            "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
            "/reason",
            "",
        ),
        with(
            "Object",
            "string",
            "The object that this event is about.",
            |o, _| {
                let object = first(o, &["/involvedObject", "/regarding"]);
                json!(format!(
                    "{}/{}",
                    object["kind"]
                        .as_str()
                        .unwrap_or_default()
                        .to_ascii_lowercase(),
                    object["name"].as_str().unwrap_or_default()
                ))
            },
        ),
        wide(with(
            "Subobject",
            "string",
            "The field of the object that this event is about.",
            |o, _| {
                text_or(
                    first(o, &["/involvedObject/fieldPath", "/regarding/fieldPath"]),
                    "",
                )
            },
        )),
        wide(with(
            "Source",
            "string",
            "The component reporting this event. Should be a short machine understandable string.",
            |o, _| {
                let component = first(o, &["/source/component", "/reportingController"]);
                let host = first(o, &["/source/host", "/deprecatedSource/host"]);
                match (component.as_str(), host.as_str()) {
                    (Some(c), Some(h)) if !h.is_empty() => json!(format!("{c}, {h}")),
                    (Some(c), _) => json!(c),
                    _ => json!(""),
                }
            },
        )),
        with(
            "Message",
            "string",
            "A human-readable description of the status of this operation.",
            |o, _| text_or(first(o, &["/message", "/note"]), ""),
        ),
        wide(with(
            "First Seen",
            "string",
            "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
            |o, now| {
                let first_seen = first(
                    o,
                    &[
                        "/firstTimestamp",
                        "/deprecatedFirstTimestamp",
                        "/eventTime",
                        "/metadata/creationTimestamp",
                    ],
                );
                json!(age(first_seen, now))
            },
        )),
        wide(with(
            "Count",
            "string",
            "The number of times this event has occurred.",
            |o, _| {
                let count = first(o, &["/series/count", "/count", "/deprecatedCount"]);
                json!(int(count).max(1).to_string())
            },
        )),
        wide(name()),
    ]
}

/// A workload's `READY`: ready replicas of the desired ones.
fn ready_of_desired() -> Column {
    with(
        "Ready",
        "string",
        "Number of the pod with ready state",
        |o, _| {
            let ready = int(&o["status"]["readyReplicas"]);
            json!(format!("{ready}/{}", desired(o)))
        },
    )
}

const CONTAINERS_DESCRIPTION: &str = "Names of each container in the template.";
const IMAGES_DESCRIPTION: &str = "Images referenced by each container in the template.";

fn containers() -> Column {
    wide(with(
        "Containers",
        "string",
        CONTAINERS_DESCRIPTION,
        |o, _| layout_containers(&o["spec"]["template"], "name"),
    ))
}

fn images() -> Column {
    wide(with("Images", "string", IMAGES_DESCRIPTION, |o, _| {
        layout_containers(&o["spec"]["template"], "image")
    }))
}

/// A field of each of a pod template's containers, joined with `,`
/// (`layoutContainerCells`).
fn layout_containers(template: &Value, field: &str) -> Value {
    let values: Vec<&str> = list(&template["spec"]["containers"])
        .iter()
        .map(|c| str_of(&c[field]))
        .collect();
    json!(values.join(","))
}

const DEPLOYMENT_SELECTOR: &str = "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.";

/// The wide `Selector` column of a workload's `spec.selector`.
fn selector(description: &'static str) -> Column {
    wide(with("Selector", "string", description, |o, _| {
        json!(format_label_selector(&o["spec"]["selector"]))
    }))
}

/// A label selector as `metav1.FormatLabelSelector` prints it: as
/// `LabelSelectorAsSelector` writes it, `<none>` when it selects nothing
/// or everything, `<error>` when an expression is not a requirement.
fn format_label_selector(selector: &Value) -> String {
    match label_selector_text(selector) {
        None => "<error>".into(),
        Some(text) if text.is_empty() => "<none>".into(),
        Some(text) => text,
    }
}

/// A duration as `duration.HumanDuration` gives it: `<invalid>` more than
/// a second below zero.
fn human_duration(seconds: i64) -> String {
    if seconds < -1 {
        "<invalid>".into()
    } else {
        human_age(seconds)
    }
}

/// Whether the first of `o`'s status conditions of `kind` is `True`
/// (`hasJobCondition`).
fn condition_true(o: &Value, kind: &str) -> bool {
    list(&o["status"]["conditions"])
        .iter()
        .find(|c| c["type"] == kind)
        .is_some_and(|c| c["status"] == "True")
}

fn deleting(o: &Value) -> bool {
    !o["metadata"]["deletionTimestamp"].is_null()
}

fn job_columns() -> Vec<Column> {
    vec![
        name(),
        with("Status", "string", "Status of the job.", |o, _| {
            json!(if condition_true(o, "Complete") {
                "Complete"
            } else if condition_true(o, "Failed") {
                "Failed"
            } else if deleting(o) {
                "Terminating"
            } else if condition_true(o, "Suspended") {
                "Suspended"
            } else if condition_true(o, "FailureTarget") {
                "FailureTarget"
            } else {
                "Running"
            })
        }),
        with(
            "Completions",
            "string",
            "The number of pods which reached phase Succeeded. The value increases monotonically for a given spec. However, it may decrease in reaction to scale down of elastic indexed jobs.",
            |o, _| {
                let succeeded = int(&o["status"]["succeeded"]);
                let parallelism = int(&o["spec"]["parallelism"]);
                json!(match o["spec"]["completions"].as_i64() {
                    Some(completions) => format!("{succeeded}/{completions}"),
                    None if parallelism > 1 => format!("{succeeded}/1 of {parallelism}"),
                    None => format!("{succeeded}/1"),
                })
            },
        ),
        with(
            "Duration",
            "string",
            "Time required to complete the job.",
            |o, now| {
                let at = |field: &str| o["status"][field].as_str().and_then(seconds_since_epoch);
                json!(match (at("startTime"), at("completionTime")) {
                    (None, _) => String::new(),
                    (Some(start), None) => human_duration(now - start),
                    (Some(start), Some(end)) => human_duration(end - start),
                })
            },
        ),
        age_column(),
        containers(),
        images(),
        selector(JOB_SELECTOR),
    ]
}

const JOB_SELECTOR: &str = "A label query over pods that should match the pod count. Normally, the system sets this field for you. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors";

fn cron_job_columns() -> Vec<Column> {
    vec![
        name(),
        text(
            "Schedule",
            "The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron.",
            "/spec/schedule",
            "",
        ),
        optional(
            "Timezone",
            "The time zone name for the given schedule, see https://en.wikipedia.org/wiki/List_of_tz_database_time_zones. If not specified, this will default to the time zone of the kube-controller-manager process. The set of valid time zone names and the time zone offset is loaded from the system-wide time zone database by the API server during CronJob validation and the controller manager during execution. If no system-wide time zone database can be found a bundled version of the database is used instead. If the time zone name becomes invalid during the lifetime of a CronJob or due to a change in host configuration, the controller will stop creating new new Jobs and will create a system event with the reason UnknownTimeZone. More information can be found in https://kubernetes.io/docs/concepts/workloads/controllers/cron-jobs/#time-zones",
            "/spec/timeZone",
            "<none>",
        ),
        with(
            "Suspend",
            "boolean",
            "This flag tells the controller to suspend subsequent executions, it does not apply to already started executions.  Defaults to false.",
            |o, _| {
                json!(match o["spec"]["suspend"].as_bool() {
                    Some(true) => "True",
                    Some(false) => "False",
                    None => "<unset>",
                })
            },
        ),
        with(
            "Active",
            "integer",
            "A list of pointers to currently running jobs.",
            |o, _| json!(list(&o["status"]["active"]).len()),
        ),
        with(
            "Last Schedule",
            "string",
            "Information when was the last time the job was successfully scheduled.",
            |o, now| match &o["status"]["lastScheduleTime"] {
                Value::Null => json!("<none>"),
                time => json!(age(time, now)),
            },
        ),
        age_column(),
        wide(with(
            "Containers",
            "string",
            CONTAINERS_DESCRIPTION,
            |o, _| layout_containers(&o["spec"]["jobTemplate"]["spec"]["template"], "name"),
        )),
        wide(with("Images", "string", IMAGES_DESCRIPTION, |o, _| {
            layout_containers(&o["spec"]["jobTemplate"]["spec"]["template"], "image")
        })),
        wide(with("Selector", "string", JOB_SELECTOR, |o, _| {
            json!(format_label_selector(
                &o["spec"]["jobTemplate"]["spec"]["selector"]
            ))
        })),
    ]
}

fn replication_controller_columns() -> Vec<Column> {
    vec![
        name(),
        with(
            "Desired",
            "integer",
            "Replicas is the number of desired replicas. This is a pointer to distinguish between explicit zero and unspecified. Defaults to 1. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            |o, _| json!(desired(o)),
        ),
        count(
            "Current",
            "Replicas is the most recently observed number of replicas. More info: https://kubernetes.io/docs/concepts/workloads/controllers/replicationcontroller#what-is-a-replicationcontroller",
            "/status/replicas",
        ),
        count(
            "Ready",
            "The number of ready replicas for this replication controller.",
            "/status/readyReplicas",
        ),
        age_column(),
        containers(),
        images(),
        wide(with(
            "Selector",
            "string",
            "Selector is a label query over pods that should match the Replicas count. If Selector is empty, it is defaulted to the labels present on the Pod template. Label keys and values that must match in order to be controlled by this replication controller, if empty defaulted to labels on Pod template. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/labels/#label-selectors",
            |o, _| json!(pairs(&o["spec"]["selector"]).unwrap_or_else(|| "<none>".into())),
        )),
    ]
}

const NODE_ADDRESSES: &str = "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/reference/node/node-status/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

fn node_columns() -> Vec<Column> {
    vec![
        name(),
        with("Status", "string", "The status of the node", |o, _| {
            // The last Ready condition counts.
            let ready = list(&o["status"]["conditions"])
                .iter()
                .rfind(|c| c["type"] == "Ready");
            let mut status = vec![match ready {
                Some(c) if c["status"] == "True" => "Ready",
                Some(_) => "NotReady",
                None => "Unknown",
            }];
            if o["spec"]["unschedulable"] == true {
                status.push("SchedulingDisabled");
            }
            json!(status.join(","))
        }),
        with("Roles", "string", "The roles of the node", |o, _| {
            let mut roles = BTreeSet::new();
            for (key, value) in o["metadata"]["labels"].as_object().into_iter().flatten() {
                if let Some(role) = key.strip_prefix("node-role.kubernetes.io/") {
                    if !role.is_empty() {
                        roles.insert(role);
                    }
                } else if key == "kubernetes.io/role" && !str_of(value).is_empty() {
                    roles.insert(str_of(value));
                }
            }
            let roles: Vec<&str> = roles.into_iter().collect();
            json!(if roles.is_empty() {
                "<none>".into()
            } else {
                roles.join(",")
            })
        }),
        age_column(),
        text(
            "Version",
            "Kubelet Version reported by the node.",
            "/status/nodeInfo/kubeletVersion",
            "",
        ),
        wide(with("Internal-IP", "string", NODE_ADDRESSES, |o, _| {
            json!(node_address(o, "InternalIP"))
        })),
        wide(with("External-IP", "string", NODE_ADDRESSES, |o, _| {
            json!(node_address(o, "ExternalIP"))
        })),
        wide(text(
            "OS-Image",
            "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
            "/status/nodeInfo/osImage",
            "<unknown>",
        )),
        wide(text(
            "Kernel-Version",
            "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
            "/status/nodeInfo/kernelVersion",
            "<unknown>",
        )),
        wide(text(
            "Container-Runtime",
            "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
            "/status/nodeInfo/containerRuntimeVersion",
            "<unknown>",
        )),
    ]
}

/// A Node's first address of `kind`, `<none>` when it has none.
fn node_address<'a>(node: &'a Value, kind: &str) -> &'a str {
    list(&node["status"]["addresses"])
        .iter()
        .find(|a| a["type"] == kind)
        .map_or("<none>", |a| str_of(&a["address"]))
}

/// A volume's or claim's access modes, once each in the order
/// `RWO,ROX,RWX,RWOP` (`GetAccessModesAsString`).
fn access_modes(modes: &Value) -> String {
    let modes = list(modes);
    let shown: Vec<&str> = [
        ("ReadWriteOnce", "RWO"),
        ("ReadOnlyMany", "ROX"),
        ("ReadWriteMany", "RWX"),
        ("ReadWriteOncePod", "RWOP"),
    ]
    .into_iter()
    .filter(|(mode, _)| modes.iter().any(|m| m == *mode))
    .map(|(_, short)| short)
    .collect();
    shown.join(",")
}

/// The storage class of a volume or claim: the beta annotation's, else
/// `spec.storageClassName`.
fn storage_class(o: &Value) -> Value {
    match &o["metadata"]["annotations"]["volume.beta.kubernetes.io/storage-class"] {
        Value::String(class) => json!(class),
        _ => json!(str_of(&o["spec"]["storageClassName"])),
    }
}

/// A Volume's or claim's phase, `Terminating` once it is being deleted.
fn volume_phase(o: &Value) -> Value {
    if deleting(o) {
        json!("Terminating")
    } else {
        json!(str_of(&o["status"]["phase"]))
    }
}

fn persistent_volume_columns() -> Vec<Column> {
    vec![
        name(),
        with(
            "Capacity",
            "string",
            "capacity is the description of the persistent volume's resources and capacity. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#capacity",
            |o, _| json!(quantity(&o["spec"]["capacity"]["storage"], "0")),
        ),
        with(
            "Access Modes",
            "string",
            "accessModes contains all ways the volume can be mounted. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes",
            |o, _| json!(access_modes(&o["spec"]["accessModes"])),
        ),
        text(
            "Reclaim Policy",
            "persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim. Valid options are Retain (default for manually created PersistentVolumes), Delete (default for dynamically provisioned PersistentVolumes), and Recycle (deprecated). Recycle must be supported by the volume plugin underlying this PersistentVolume. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#reclaiming",
            "/spec/persistentVolumeReclaimPolicy",
            "",
        ),
        with(
            "Status",
            "string",
            "phase indicates if a volume is available, bound to a claim, or released by a claim. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#phase",
            |o, _| volume_phase(o),
        ),
        with(
            "Claim",
            "string",
            "claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim. Expected to be non-nil when bound. claim.VolumeName is the authoritative bind between PV and PVC. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#binding",
            |o, _| {
                let claim = &o["spec"]["claimRef"];
                json!(if claim.is_object() {
                    format!("{}/{}", str_of(&claim["namespace"]), str_of(&claim["name"]))
                } else {
                    String::new()
                })
            },
        ),
        with(
            "StorageClass",
            "string",
            "StorageClass of the pv",
            |o, _| storage_class(o),
        ),
        optional(
            "VolumeAttributesClass",
            "VolumeAttributesClass of the pv",
            "/spec/volumeAttributesClassName",
            "<unset>",
        ),
        text(
            "Reason",
            "reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI.",
            "/status/reason",
            "",
        ),
        age_column(),
        wide(optional(
            "VolumeMode",
            "volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state. Value of Filesystem is implied when not included in spec.",
            "/spec/volumeMode",
            "<unset>",
        )),
    ]
}

fn persistent_volume_claim_columns() -> Vec<Column> {
    vec![
        name(),
        with(
            "Status",
            "string",
            "phase represents the current phase of PersistentVolumeClaim.",
            |o, _| volume_phase(o),
        ),
        text(
            "Volume",
            "volumeName is the binding reference to the PersistentVolume backing this claim.",
            "/spec/volumeName",
            "",
        ),
        // Capacity and access modes only once the claim names its volume.
        with(
            "Capacity",
            "string",
            "capacity represents the actual resources of the underlying volume.",
            |o, _| {
                json!(if str_of(&o["spec"]["volumeName"]).is_empty() {
                    String::new()
                } else {
                    quantity(&o["status"]["capacity"]["storage"], "0")
                })
            },
        ),
        with(
            "Access Modes",
            "string",
            "accessModes contains the actual access modes the volume backing the PVC has. More info: https://kubernetes.io/docs/concepts/storage/persistent-volumes#access-modes-1",
            |o, _| {
                json!(if str_of(&o["spec"]["volumeName"]).is_empty() {
                    String::new()
                } else {
                    access_modes(&o["status"]["accessModes"])
                })
            },
        ),
        with(
            "StorageClass",
            "string",
            "StorageClass of the pvc",
            |o, _| storage_class(o),
        ),
        optional(
            "VolumeAttributesClass",
            "VolumeAttributesClass of the pvc",
            "/spec/volumeAttributesClassName",
            "<unset>",
        ),
        age_column(),
        wide(optional(
            "VolumeMode",
            "volumeMode defines what type of volume is required by the claim. Value of Filesystem is implied when not included in claim spec.",
            "/spec/volumeMode",
            "<unset>",
        )),
    ]
}

const ENDPOINTS_SUBSETS: &str = "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.";

/// An Endpoints' addresses (`formatEndpoints`): `ip:port` for each address
/// and port of each subset (the IP alone when it has no ports), the first
/// three and how many more; `<none>` without subsets.
fn format_endpoints(o: &Value) -> String {
    let subsets = list(&o["subsets"]);
    if subsets.is_empty() {
        return "<none>".into();
    }
    let (mut shown, mut more, mut count) = (Vec::new(), false, 0);
    for subset in subsets {
        let addresses = list(&subset["addresses"]);
        let ports = list(&subset["ports"]);
        // A port of `None` is a headless subset's bare IP.
        let ports: Vec<Option<i64>> = if ports.is_empty() {
            vec![None]
        } else {
            ports.iter().map(|p| Some(int(&p["port"]))).collect()
        };
        for port in ports {
            count += addresses.len();
            for address in addresses {
                if shown.len() == 3 {
                    more = true;
                    break;
                }
                let ip = str_of(&address["ip"]);
                shown.push(match port {
                    None => ip.to_string(),
                    Some(port) if ip.contains(':') => format!("[{ip}]:{port}"),
                    Some(port) => format!("{ip}:{port}"),
                });
            }
        }
    }
    let joined = shown.join(",");
    if more {
        format!("{joined} + {} more...", count - 3)
    } else {
        joined
    }
}

/// The first three of `items` and how many more (`listWithMoreString`):
/// `<unset>` when there are none.
fn with_more(items: Vec<String>) -> String {
    let count = items.len();
    let joined = items[..count.min(3)].join(",");
    if count > 3 {
        format!("{joined} + {} more...", count - 3)
    } else if joined.is_empty() {
        "<unset>".into()
    } else {
        joined
    }
}

fn endpoint_slice_columns() -> Vec<Column> {
    vec![
        name(),
        text(
            "AddressType",
            "addressType specifies the type of address carried by this EndpointSlice. All addresses in this slice must be the same type. This field is immutable after creation. The following address types are currently supported: * IPv4: Represents an IPv4 Address. * IPv6: Represents an IPv6 Address. * FQDN: Represents a Fully Qualified Domain Name.",
            "/addressType",
            "",
        ),
        with(
            "Ports",
            "string",
            "ports specifies the list of network ports exposed by each endpoint in this slice. Each port must have a unique name. When ports is empty, it indicates that there are no defined ports. When a port is defined with a nil port value, it indicates \"all ports\". Each slice may include a maximum of 100 ports.",
            |o, _| {
                let ports = list(&o["ports"]).iter().map(|p| {
                    match (p["port"].as_i64(), p["name"].as_str()) {
                        (Some(port), _) => port.to_string(),
                        (None, Some(name)) => name.to_string(),
                        (None, None) => "*".into(),
                    }
                });
                json!(with_more(ports.collect()))
            },
        ),
        with(
            "Endpoints",
            "string",
            "endpoints is a list of unique endpoints in this slice. Each slice may include a maximum of 1000 endpoints.",
            |o, _| {
                let addresses = list(&o["endpoints"])
                    .iter()
                    .flat_map(|e| list(&e["addresses"]))
                    .map(|a| str_of(a).to_string());
                json!(with_more(addresses.collect()))
            },
        ),
        age_column(),
    ]
}

fn ingress_columns() -> Vec<Column> {
    vec![
        name(),
        optional(
            "Class",
            "The name of the IngressClass resource that should be used for additional configuration",
            "/spec/ingressClassName",
            "<none>",
        ),
        with(
            "Hosts",
            "string",
            "Hosts that incoming requests are matched against before the ingress rule",
            |o, _| {
                let rules = list(&o["spec"]["rules"]);
                let (mut hosts, mut more) = (Vec::new(), false);
                for rule in rules {
                    if hosts.len() == 3 {
                        more = true;
                    }
                    match rule["host"].as_str() {
                        Some(host) if !more && !host.is_empty() => hosts.push(host),
                        _ => {}
                    }
                }
                json!(match (hosts.is_empty(), more) {
                    (true, _) => "*".to_string(),
                    (false, true) => format!("{} + {} more...", hosts.join(","), rules.len() - 3),
                    (false, false) => hosts.join(","),
                })
            },
        ),
        with(
            "Address",
            "string",
            "Address is a list containing ingress points for the load-balancer",
            |o, _| {
                let addresses: BTreeSet<&str> = list(&o["status"]["loadBalancer"]["ingress"])
                    .iter()
                    .filter_map(|i| {
                        [&i["ip"], &i["hostname"]]
                            .into_iter()
                            .map(str_of)
                            .find(|a| !a.is_empty())
                    })
                    .collect();
                json!(addresses.into_iter().collect::<Vec<_>>().join(","))
            },
        ),
        with(
            "Ports",
            "string",
            "Ports of TLS configurations that open",
            |o, _| {
                json!(if list(&o["spec"]["tls"]).is_empty() {
                    "80"
                } else {
                    "80, 443"
                })
            },
        ),
        age_column(),
    ]
}

fn storage_class_columns() -> Vec<Column> {
    vec![
        Column {
            format: "name",
            ..with("Name", "string", name_column_description(), |o, _| {
                let annotations = &o["metadata"]["annotations"];
                let default = annotations["storageclass.kubernetes.io/is-default-class"] == "true"
                    || annotations["storageclass.beta.kubernetes.io/is-default-class"] == "true";
                let name = str_of(&o["metadata"]["name"]);
                json!(if default {
                    format!("{name} (default)")
                } else {
                    name.to_string()
                })
            })
        },
        text(
            "Provisioner",
            "provisioner indicates the type of the provisioner.",
            "/provisioner",
            "",
        ),
        optional(
            "ReclaimPolicy",
            "reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class. Defaults to Delete.",
            "/reclaimPolicy",
            "Delete",
        ),
        optional(
            "VolumeBindingMode",
            "volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound.  When unset, VolumeBindingImmediate is used. This field is only honored by servers that enable the VolumeScheduling feature.",
            "/volumeBindingMode",
            "Immediate",
        ),
        with(
            "AllowVolumeExpansion",
            "string",
            "allowVolumeExpansion shows whether the storage class allow volume expand.",
            |o, _| json!(o["allowVolumeExpansion"].as_bool().unwrap_or(false)),
        ),
        age_column(),
    ]
}

fn horizontal_pod_autoscaler_columns() -> Vec<Column> {
    vec![
        name(),
        with(
            "Reference",
            "string",
            "scaleTargetRef points to the target resource to scale, and is used to the pods for which metrics should be collected, as well as to actually change the replica count.",
            |o, _| {
                let target = &o["spec"]["scaleTargetRef"];
                json!(format!(
                    "{}/{}",
                    str_of(&target["kind"]),
                    str_of(&target["name"])
                ))
            },
        ),
        with(
            "Targets",
            "string",
            "metrics contains the specifications for which to use to calculate the desired replica count (the maximum replica count across all metrics will be used).  The desired replica count is calculated multiplying the ratio between the target value and the current value by the current number of pods.  Ergo, metrics used must decrease as the pod count is increased, and vice-versa.  See the individual metric source types for more information about how each type of metric must respond.",
            |o, _| json!(hpa_targets(o)),
        ),
        with(
            "MinPods",
            "string",
            "minReplicas is the lower limit for the number of replicas to which the autoscaler can scale down.  It defaults to 1 pod.  minReplicas is allowed to be 0 if the alpha feature gate HPAScaleToZero is enabled and at least one Object or External metric is configured.  Scaling is active as long as at least one metric value is available.",
            |o, _| match o["spec"]["minReplicas"].as_i64() {
                Some(min) => json!(min.to_string()),
                None => json!("<unset>"),
            },
        ),
        with(
            "MaxPods",
            "string",
            "maxReplicas is the upper limit for the number of replicas to which the autoscaler can scale up. It cannot be less that minReplicas.",
            |o, _| json!(int(&o["spec"]["maxReplicas"])),
        ),
        with(
            "Replicas",
            "string",
            "currentReplicas is current number of replicas of pods managed by this autoscaler, as last seen by the autoscaler.",
            |o, _| json!(int(&o["status"]["currentReplicas"])),
        ),
        age_column(),
    ]
}

/// An HPA's metrics against their current values (`formatHPAMetrics`):
/// `cpu: 45%/80%`, `<unknown>` for a value not yet read, the first two
/// and how many more; `<none>` without metrics.
fn hpa_targets(o: &Value) -> String {
    let specs = list(&o["spec"]["metrics"]);
    if specs.is_empty() {
        return "<none>".into();
    }
    let statuses = list(&o["status"]["currentMetrics"]);
    let unknown = || "<unknown>".to_string();
    let mut shown: Vec<String> = Vec::new();
    for (i, spec) in specs.iter().enumerate() {
        let status = statuses.get(i).unwrap_or(&Value::Null);
        let field = match str_of(&spec["type"]) {
            "External" => "external",
            "Pods" => "pods",
            "Object" => "object",
            "Resource" => "resource",
            "ContainerResource" => "containerResource",
            _ => {
                shown.push("<unknown type>".into());
                continue;
            }
        };
        let source = &spec[field];
        let target = &source["target"];
        let current = &status[field];
        let current = |value: &str| {
            if current.is_object() {
                quantity(&current["current"][value], "<nil>")
            } else {
                unknown()
            }
        };
        let target_of = |value: &str| quantity(&target[value], "<nil>");
        shown.push(match field {
            "pods" => format!("{}/{}", current("averageValue"), target_of("averageValue")),
            "external" | "object" if target["averageValue"].is_null() => {
                format!("{}/{}", current("value"), target_of("value"))
            }
            "external" | "object" => {
                // The current average only when there is one.
                let now = match &status[field]["current"]["averageValue"] {
                    Value::Null => unknown(),
                    _ => current("averageValue"),
                };
                format!("{now}/{} (avg)", target_of("averageValue"))
            }
            _ => {
                let resource = str_of(&source["name"]);
                if target["averageValue"].is_null() {
                    let percent = |v: &Value| v.as_i64().map(|p| format!("{p}%"));
                    let now = percent(&status[field]["current"]["averageUtilization"])
                        .unwrap_or_else(unknown);
                    let wanted =
                        percent(&target["averageUtilization"]).unwrap_or_else(|| "<auto>".into());
                    format!("{resource}: {now}/{wanted}")
                } else {
                    format!(
                        "{resource}: {}/{}",
                        current("averageValue"),
                        target_of("averageValue")
                    )
                }
            }
        });
    }
    let count = shown.len();
    if count > 2 {
        format!("{} + {} more...", shown[..2].join(", "), count - 2)
    } else {
        shown.join(", ")
    }
}

/// A ResourceQuota's usage of each hard limit (`resource: used/hard`, by
/// resource name): the `limits.*` ones, or all others.
fn quota_usage(o: &Value, limits: bool) -> String {
    let status = &o["status"];
    let mut resources: Vec<&String> = status["hard"]
        .as_object()
        .into_iter()
        .flat_map(|hard| hard.keys())
        .collect();
    resources.sort();
    let usage: Vec<String> = resources
        .into_iter()
        .filter(|r| {
            let pieces: Vec<&str> = r.split('.').collect();
            (pieces.len() > 1 && pieces[0] == "limits") == limits
        })
        .map(|r| {
            format!(
                "{r}: {}/{}",
                quantity(&status["used"][r.as_str()], "0"),
                quantity(&status["hard"][r.as_str()], "0")
            )
        })
        .collect();
    usage.join(", ")
}

/// A quantity as the API server writes it back (`Quantity.String()`:
/// `1536Mi` for `1.5Gi`), `absent` when there is none (`0` for a missing
/// map entry, `<nil>` for an unset field).
fn quantity(value: &Value, absent: &str) -> String {
    match value {
        Value::String(text) => canonical_quantity(text).unwrap_or_else(|| text.clone()),
        Value::Number(number) => number.to_string(),
        _ => absent.into(),
    }
}

/// An int-or-string (`1`, `50%`), `N/A` when unset.
fn int_or_string(value: &Value) -> String {
    match value {
        Value::Number(number) => number.to_string(),
        Value::String(text) => text.clone(),
        _ => "N/A".into(),
    }
}

/// `k=v` pairs of a string map, sorted by key and joined with `,`; `None`
/// when it is empty.
fn pairs(map: &Value) -> Option<String> {
    let map = map.as_object().filter(|m| !m.is_empty())?;
    let mut pairs: Vec<String> = map
        .iter()
        .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or_default()))
        .collect();
    pairs.sort();
    Some(pairs.join(","))
}

/// A binding's subjects of `kind`, joined with `,` (`namespace/name` for
/// service accounts).
fn subjects(binding: &Value, kind: &str) -> Value {
    let names: Vec<String> = binding["subjects"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["kind"] == kind)
        .map(|s| {
            let name = s["name"].as_str().unwrap_or_default();
            match s["namespace"].as_str() {
                Some(ns) if kind == "ServiceAccount" => format!("{ns}/{name}"),
                _ => name.to_string(),
            }
        })
        .collect();
    json!(names.join(", "))
}

/// `spec.replicas`, 1 when unset (as the API defaults it).
fn desired(o: &Value) -> i64 {
    o["spec"]["replicas"].as_i64().unwrap_or(1)
}

fn int(value: &Value) -> i64 {
    value.as_i64().unwrap_or(0)
}

fn len(value: &Value) -> usize {
    match value {
        Value::Object(map) => map.len(),
        Value::Array(list) => list.len(),
        _ => 0,
    }
}

fn text_or(value: &Value, fallback: &str) -> Value {
    match value.as_str() {
        Some(text) if !text.is_empty() => json!(text),
        _ => json!(fallback),
    }
}

/// The elements of a list, none when it is not one.
fn list(value: &Value) -> &[Value] {
    value.as_array().map_or(&[], Vec::as_slice)
}

/// The string `value` holds, empty when it holds none.
fn str_of(value: &Value) -> &str {
    value.as_str().unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    const NOW: &str = "2026-11-26T17:00:00Z";
    /// Five minutes before `NOW`.
    const CREATED: &str = "2026-11-26T16:55:00Z";

    /// A kind's column names, wide ones marked `+`.
    fn names(group: &str, kind: &str) -> Vec<String> {
        columns(group, kind)
            .expect("a printed kind")
            .iter()
            .map(|c| {
                let wide = if c.priority == 1 { "+" } else { "" };
                format!("{wide}{}", c.name)
            })
            .collect()
    }

    /// A kind's row of `object` at `NOW`.
    fn cells(group: &str, kind: &str, object: &Value) -> Vec<Value> {
        let now = seconds_since_epoch(NOW).unwrap();
        columns(group, kind)
            .expect("a printed kind")
            .iter()
            .map(|c| c.cell(object, now))
            .collect()
    }

    /// The cell of the column `name` of `object`.
    fn cell(group: &str, kind: &str, name: &str, object: Value) -> Value {
        let at = columns(group, kind)
            .expect("a printed kind")
            .iter()
            .position(|c| c.name == name)
            .expect("a column");
        cells(group, kind, &object)[at].clone()
    }

    fn meta(name: &str) -> Value {
        json!({"name": name, "creationTimestamp": CREATED})
    }

    #[test]
    fn a_job_prints_its_status_completions_and_duration() {
        assert_eq!(
            names("batch", "Job"),
            [
                "Name",
                "Status",
                "Completions",
                "Duration",
                "Age",
                "+Containers",
                "+Images",
                "+Selector"
            ]
        );
        let done = json!({"metadata": meta("pi"),
            "spec": {"completions": 1, "parallelism": 1,
                     "selector": {"matchLabels": {"batch.kubernetes.io/controller-uid": "u1"}},
                     "template": {"spec": {"containers": [{"name": "pi", "image": "perl:5.34"}]}}},
            "status": {"succeeded": 1, "startTime": "2026-11-26T16:55:00Z",
                       "completionTime": "2026-11-26T16:56:30Z",
                       "conditions": [{"type": "SuccessCriteriaMet", "status": "True"},
                                      {"type": "Complete", "status": "True"}]}});
        assert_eq!(
            cells("batch", "Job", &done),
            [
                json!("pi"),
                json!("Complete"),
                json!("1/1"),
                json!("90s"),
                json!("5m"),
                json!("pi"),
                json!("perl:5.34"),
                json!("batch.kubernetes.io/controller-uid=u1")
            ]
        );
        let running = json!({"metadata": meta("j"), "spec": {"completions": 3},
            "status": {"startTime": "2026-11-26T16:50:00Z"}});
        assert_eq!(cell("batch", "Job", "Status", running.clone()), "Running");
        assert_eq!(cell("batch", "Job", "Completions", running.clone()), "0/3");
        assert_eq!(cell("batch", "Job", "Duration", running), "10m");
        let status = |conditions: Value, deleted: bool| {
            let mut job = json!({"metadata": meta("j"), "status": {"conditions": conditions}});
            if deleted {
                job["metadata"]["deletionTimestamp"] = json!(NOW);
            }
            cell("batch", "Job", "Status", job)
        };
        let failed = json!([{"type": "Complete", "status": "False"},
                            {"type": "Failed", "status": "True"}]);
        assert_eq!(status(failed, false), "Failed");
        let suspended = json!([{"type": "Suspended", "status": "True"}]);
        assert_eq!(status(suspended.clone(), false), "Suspended");
        assert_eq!(status(suspended, true), "Terminating");
        let target = json!([{"type": "FailureTarget", "status": "True"}]);
        assert_eq!(status(target, false), "FailureTarget");
        let parallel = json!({"spec": {"parallelism": 2}, "status": {"succeeded": 1}});
        assert_eq!(cell("batch", "Job", "Completions", parallel), "1/1 of 2");
        let unstarted = json!({"spec": {}});
        assert_eq!(
            cell("batch", "Job", "Completions", unstarted.clone()),
            "0/1"
        );
        assert_eq!(cell("batch", "Job", "Duration", unstarted.clone()), "");
        assert_eq!(cell("batch", "Job", "Selector", unstarted), "<none>");
    }

    #[test]
    fn a_cron_job_prints_its_schedule_and_last_run() {
        assert_eq!(
            names("batch", "CronJob"),
            [
                "Name",
                "Schedule",
                "Timezone",
                "Suspend",
                "Active",
                "Last Schedule",
                "Age",
                "+Containers",
                "+Images",
                "+Selector"
            ]
        );
        let cron = json!({"metadata": meta("hello"),
            "spec": {"schedule": "*/5 * * * *", "suspend": false,
                     "jobTemplate": {"spec": {"template": {"spec": {"containers": [
                         {"name": "hello", "image": "busybox:1.36"},
                         {"name": "side", "image": "pause"}]}}}}},
            "status": {"active": [{"name": "hello-1"}, {"name": "hello-2"}],
                       "lastScheduleTime": "2026-11-26T16:58:00Z"}});
        assert_eq!(
            cells("batch", "CronJob", &cron),
            [
                json!("hello"),
                json!("*/5 * * * *"),
                json!("<none>"),
                json!("False"),
                json!(2),
                json!("2m"),
                json!("5m"),
                json!("hello,side"),
                json!("busybox:1.36,pause"),
                json!("<none>")
            ]
        );
        let bare = json!({"spec": {"timeZone": "Etc/UTC"}});
        assert_eq!(cell("batch", "CronJob", "Suspend", bare.clone()), "<unset>");
        assert_eq!(
            cell("batch", "CronJob", "Timezone", bare.clone()),
            "Etc/UTC"
        );
        assert_eq!(cell("batch", "CronJob", "Active", bare.clone()), 0);
        assert_eq!(cell("batch", "CronJob", "Last Schedule", bare), "<none>");
    }

    #[test]
    fn claims_and_volumes_print_capacity_access_modes_and_class() {
        assert_eq!(
            names("", "PersistentVolumeClaim"),
            [
                "Name",
                "Status",
                "Volume",
                "Capacity",
                "Access Modes",
                "StorageClass",
                "VolumeAttributesClass",
                "Age",
                "+VolumeMode"
            ]
        );
        let bound = json!({"metadata": meta("data"),
            "spec": {"volumeName": "pv-1", "storageClassName": "standard",
                     "volumeMode": "Filesystem", "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Bound", "capacity": {"storage": "10240Mi"},
                       "accessModes": ["ReadOnlyMany", "ReadWriteOnce", "ReadOnlyMany"]}});
        assert_eq!(
            cells("", "PersistentVolumeClaim", &bound),
            [
                json!("data"),
                json!("Bound"),
                json!("pv-1"),
                json!("10Gi"),
                json!("RWO,ROX"),
                json!("standard"),
                json!("<unset>"),
                json!("5m"),
                json!("Filesystem")
            ]
        );
        let pending = json!({"metadata": {"name": "p", "deletionTimestamp": NOW,
                "annotations": {"volume.beta.kubernetes.io/storage-class": "slow"}},
            "spec": {"storageClassName": "fast", "resources": {"requests": {"storage": "1Gi"}}},
            "status": {"phase": "Pending", "accessModes": ["ReadWriteOnce"]}});
        assert_eq!(
            cells("", "PersistentVolumeClaim", &pending)[1..7],
            [
                json!("Terminating"),
                json!(""),
                json!(""),
                json!(""),
                json!("slow"),
                json!("<unset>")
            ]
        );

        assert_eq!(
            names("", "PersistentVolume"),
            [
                "Name",
                "Capacity",
                "Access Modes",
                "Reclaim Policy",
                "Status",
                "Claim",
                "StorageClass",
                "VolumeAttributesClass",
                "Reason",
                "Age",
                "+VolumeMode"
            ]
        );
        let volume = json!({"metadata": meta("pv-1"),
            "spec": {"capacity": {"storage": "5Gi"},
                     "accessModes": ["ReadWriteOncePod", "ReadWriteMany"],
                     "persistentVolumeReclaimPolicy": "Retain",
                     "claimRef": {"namespace": "ns", "name": "data"},
                     "storageClassName": "manual", "volumeAttributesClassName": "gold",
                     "volumeMode": "Block"},
            "status": {"phase": "Bound"}});
        assert_eq!(
            cells("", "PersistentVolume", &volume),
            [
                json!("pv-1"),
                json!("5Gi"),
                json!("RWX,RWOP"),
                json!("Retain"),
                json!("Bound"),
                json!("ns/data"),
                json!("manual"),
                json!("gold"),
                json!(""),
                json!("5m"),
                json!("Block")
            ]
        );
        let bare =
            json!({"metadata": {"name": "pv-2"}, "status": {"phase": "Failed", "reason": "Oops"}});
        assert_eq!(
            cells("", "PersistentVolume", &bare),
            [
                json!("pv-2"),
                json!("0"),
                json!(""),
                json!(""),
                json!("Failed"),
                json!(""),
                json!(""),
                json!("<unset>"),
                json!("Oops"),
                json!("<unknown>"),
                json!("<unset>")
            ]
        );
    }

    #[test]
    fn a_node_prints_its_readiness_roles_and_addresses() {
        assert_eq!(
            names("", "Node"),
            [
                "Name",
                "Status",
                "Roles",
                "Age",
                "Version",
                "+Internal-IP",
                "+External-IP",
                "+OS-Image",
                "+Kernel-Version",
                "+Container-Runtime"
            ]
        );
        let node = json!({"metadata": {"name": "n1", "creationTimestamp": CREATED, "labels": {
                "node-role.kubernetes.io/control-plane": "", "node-role.kubernetes.io/": "",
                "node-role.kubernetes.io/etcd": "yes", "kubernetes.io/role": "worker",
                "kubernetes.io/hostname": "n1"}},
            "spec": {"unschedulable": true},
            "status": {"conditions": [{"type": "MemoryPressure", "status": "False"},
                                      {"type": "Ready", "status": "True"}],
                       "addresses": [{"type": "Hostname", "address": "n1"},
                                     {"type": "InternalIP", "address": "10.0.0.7"},
                                     {"type": "InternalIP", "address": "10.0.0.8"}],
                       "nodeInfo": {"kubeletVersion": "v1.33.1", "kernelVersion": "6.1.0",
                                    "containerRuntimeVersion": "containerd://2.0.0"}}});
        assert_eq!(
            cells("", "Node", &node),
            [
                json!("n1"),
                json!("Ready,SchedulingDisabled"),
                json!("control-plane,etcd,worker"),
                json!("5m"),
                json!("v1.33.1"),
                json!("10.0.0.7"),
                json!("<none>"),
                json!("<unknown>"),
                json!("6.1.0"),
                json!("containerd://2.0.0")
            ]
        );
        let not_ready = json!({"status": {"conditions": [{"type": "Ready", "status": "Unknown"}]}});
        assert_eq!(cell("", "Node", "Status", not_ready), "NotReady");
        let unknown = json!({"metadata": {"name": "n2"}});
        assert_eq!(cell("", "Node", "Status", unknown.clone()), "Unknown");
        assert_eq!(cell("", "Node", "Roles", unknown), "<none>");
    }

    #[test]
    fn endpoints_and_slices_print_their_first_three_addresses() {
        assert_eq!(names("", "Endpoints"), ["Name", "Endpoints", "Age"]);
        let endpoints = json!({"metadata": meta("web"), "subsets": [
            {"addresses": [{"ip": "10.0.0.1"}, {"ip": "10.0.0.2"}],
             "ports": [{"name": "http", "port": 80}, {"name": "https", "port": 443}]}]});
        assert_eq!(
            cells("", "Endpoints", &endpoints),
            [
                json!("web"),
                json!("10.0.0.1:80,10.0.0.2:80,10.0.0.1:443 + 1 more..."),
                json!("5m")
            ]
        );
        let headless = json!({"subsets": [{"addresses": [{"ip": "fd00::1"}]},
            {"addresses": [{"ip": "fd00::2"}], "ports": [{"port": 8080}]}]});
        assert_eq!(
            cell("", "Endpoints", "Endpoints", headless),
            "fd00::1,[fd00::2]:8080"
        );
        assert_eq!(
            cell("", "Endpoints", "Endpoints", json!({"subsets": []})),
            "<none>"
        );

        assert_eq!(
            names("discovery.k8s.io", "EndpointSlice"),
            ["Name", "AddressType", "Ports", "Endpoints", "Age"]
        );
        let slice = json!({"metadata": meta("web-abc"), "addressType": "IPv4",
            "ports": [{"name": "http", "port": 80}, {"name": "metrics"}, {}],
            "endpoints": [{"addresses": ["10.0.0.1", "10.0.0.2"]}, {"addresses": ["10.0.0.3"]},
                          {"addresses": ["10.0.0.4", "10.0.0.5", "10.0.0.6"]}]});
        assert_eq!(
            cells("discovery.k8s.io", "EndpointSlice", &slice),
            [
                json!("web-abc"),
                json!("IPv4"),
                json!("80,metrics,*"),
                json!("10.0.0.1,10.0.0.2,10.0.0.3 + 3 more..."),
                json!("5m")
            ]
        );
        let empty = json!({"addressType": "IPv6", "endpoints": [],
            "ports": [{"port": 1}, {"port": 2}, {"port": 3}, {"port": 4}]});
        assert_eq!(
            cells("discovery.k8s.io", "EndpointSlice", &empty)[2..4],
            [json!("1,2,3 + 1 more..."), json!("<unset>")]
        );
    }

    #[test]
    fn quotas_limit_ranges_and_controllers_print_as_kubectl_shows_them() {
        assert_eq!(
            names("", "ResourceQuota"),
            ["Name", "Request", "Limit", "Age"]
        );
        let quota = json!({"metadata": meta("compute"), "status": {
            "hard": {"pods": "10", "requests.cpu": "1", "limits.memory": "2Gi", "limits.cpu": "2"},
            "used": {"pods": "3", "requests.cpu": "500m", "limits.cpu": "1"}}});
        assert_eq!(
            cells("", "ResourceQuota", &quota),
            [
                json!("compute"),
                json!("pods: 3/10, requests.cpu: 500m/1"),
                json!("limits.cpu: 1/2, limits.memory: 0/2Gi"),
                json!("5m")
            ]
        );

        assert_eq!(names("", "LimitRange"), ["Name", "Created At"]);
        let range = json!({"metadata": meta("limits")});
        assert_eq!(
            cells("", "LimitRange", &range),
            [json!("limits"), json!(CREATED)]
        );

        assert_eq!(
            names("", "ReplicationController"),
            [
                "Name",
                "Desired",
                "Current",
                "Ready",
                "Age",
                "+Containers",
                "+Images",
                "+Selector"
            ]
        );
        let controller = json!({"metadata": meta("rc"),
            "spec": {"replicas": 3, "selector": {"tier": "fe", "app": "web"},
                     "template": {"spec": {"containers": [{"name": "nginx", "image": "nginx:1.27"}]}}},
            "status": {"replicas": 3, "readyReplicas": 2}});
        assert_eq!(
            cells("", "ReplicationController", &controller),
            [
                json!("rc"),
                json!(3),
                json!(3),
                json!(2),
                json!("5m"),
                json!("nginx"),
                json!("nginx:1.27"),
                json!("app=web,tier=fe")
            ]
        );
    }

    #[test]
    fn ingresses_print_hosts_addresses_and_ports() {
        assert_eq!(
            names("networking.k8s.io", "Ingress"),
            ["Name", "Class", "Hosts", "Address", "Ports", "Age"]
        );
        let ingress = json!({"metadata": meta("web"),
            "spec": {"ingressClassName": "nginx",
                     "rules": [{"host": "a.example.com"}, {}, {"host": "b.example.com"}],
                     "tls": [{"hosts": ["a.example.com"], "secretName": "tls"}]},
            "status": {"loadBalancer": {"ingress": [{"hostname": "lb.example.com"},
                {"ip": "203.0.113.9"}, {"ip": "203.0.113.9", "hostname": "x"}]}}});
        assert_eq!(
            cells("networking.k8s.io", "Ingress", &ingress),
            [
                json!("web"),
                json!("nginx"),
                json!("a.example.com,b.example.com"),
                json!("203.0.113.9,lb.example.com"),
                json!("80, 443"),
                json!("5m")
            ]
        );
        let many = json!({"spec": {"rules": [{"host": "a"}, {"host": "b"}, {"host": "c"},
                                              {"host": "d"}, {}]}});
        assert_eq!(
            cells("networking.k8s.io", "Ingress", &many)[1..5],
            [
                json!("<none>"),
                json!("a,b,c + 2 more..."),
                json!(""),
                json!("80")
            ]
        );
        assert_eq!(
            cell(
                "networking.k8s.io",
                "Ingress",
                "Hosts",
                json!({"spec": {"rules": [{}]}})
            ),
            "*"
        );

        assert_eq!(
            names("networking.k8s.io", "IngressClass"),
            ["Name", "Controller", "Parameters", "Age"]
        );
        let class = json!({"metadata": meta("external-lb"),
            "spec": {"controller": "example.com/ingress-controller",
                     "parameters": {"apiGroup": "k8s.example.com", "kind": "IngressParameters",
                                    "name": "external-lb"}}});
        assert_eq!(
            cells("networking.k8s.io", "IngressClass", &class),
            [
                json!("external-lb"),
                json!("example.com/ingress-controller"),
                json!("IngressParameters.k8s.example.com/external-lb"),
                json!("5m")
            ]
        );
        let core = json!({"spec": {"parameters": {"kind": "ConfigMap", "name": "cm"}}});
        assert_eq!(
            cell("networking.k8s.io", "IngressClass", "Parameters", core),
            "ConfigMap/cm"
        );
        assert_eq!(
            cell(
                "networking.k8s.io",
                "IngressClass",
                "Parameters",
                json!({"spec": {}})
            ),
            "<none>"
        );
    }

    #[test]
    fn network_policies_and_budgets_print_their_selectors_and_bounds() {
        assert_eq!(
            names("networking.k8s.io", "NetworkPolicy"),
            ["Name", "Pod-Selector", "Age"]
        );
        let policy = json!({"metadata": meta("db"), "spec": {"podSelector": {
            "matchLabels": {"role": "db"},
            "matchExpressions": [{"key": "tier", "operator": "DoesNotExist"},
                                 {"key": "env", "operator": "In", "values": ["prod", "dev"]}]}}});
        assert_eq!(
            cells("networking.k8s.io", "NetworkPolicy", &policy),
            [
                json!("db"),
                json!("env in (dev,prod),role=db,!tier"),
                json!("5m")
            ]
        );
        let all = json!({"spec": {"podSelector": {}}});
        assert_eq!(
            cell("networking.k8s.io", "NetworkPolicy", "Pod-Selector", all),
            "<none>"
        );
        let wrong = json!({"spec": {"podSelector": {"matchExpressions": [
            {"key": "a", "operator": "Exists", "values": ["x"]}]}}});
        assert_eq!(
            cell("networking.k8s.io", "NetworkPolicy", "Pod-Selector", wrong),
            "<error>"
        );

        assert_eq!(
            names("policy", "PodDisruptionBudget"),
            [
                "Name",
                "Min Available",
                "Max Unavailable",
                "Allowed Disruptions",
                "Age"
            ]
        );
        let budget = json!({"metadata": meta("pdb"), "spec": {"minAvailable": 2},
            "status": {"disruptionsAllowed": 1}});
        assert_eq!(
            cells("policy", "PodDisruptionBudget", &budget),
            [
                json!("pdb"),
                json!("2"),
                json!("N/A"),
                json!(1),
                json!("5m")
            ]
        );
        let percent = json!({"spec": {"maxUnavailable": "25%"}});
        assert_eq!(
            cells("policy", "PodDisruptionBudget", &percent)[1..4],
            [json!("N/A"), json!("25%"), json!(0)]
        );
    }

    #[test]
    fn an_autoscaler_prints_its_targets_against_current_values() {
        assert_eq!(
            names("autoscaling", "HorizontalPodAutoscaler"),
            [
                "Name",
                "Reference",
                "Targets",
                "MinPods",
                "MaxPods",
                "Replicas",
                "Age"
            ]
        );
        let cpu = json!({"type": "Resource", "resource": {"name": "cpu",
            "target": {"type": "Utilization", "averageUtilization": 80}}});
        let hpa = json!({"metadata": meta("web"),
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 2, "maxReplicas": 10, "metrics": [cpu]}});
        assert_eq!(
            cells("autoscaling", "HorizontalPodAutoscaler", &hpa),
            [
                json!("web"),
                json!("Deployment/web"),
                json!("cpu: <unknown>/80%"),
                json!("2"),
                json!(10),
                json!(0),
                json!("5m")
            ]
        );
        let targets = |spec: Value, status: Value| {
            let hpa = json!({"spec": spec, "status": status});
            cell("autoscaling", "HorizontalPodAutoscaler", "Targets", hpa)
        };
        let read = json!({"currentReplicas": 3, "currentMetrics": [{"type": "Resource",
            "resource": {"name": "cpu", "current": {"averageUtilization": 45, "averageValue": "90m"}}}]});
        assert_eq!(targets(json!({"metrics": [cpu]}), read), "cpu: 45%/80%");
        let three = json!({"metrics": [
            {"type": "Resource", "resource": {"name": "memory",
                "target": {"type": "AverageValue", "averageValue": "500Mi"}}},
            {"type": "Pods", "pods": {"metric": {"name": "rps"},
                "target": {"type": "AverageValue", "averageValue": "1k"}}},
            {"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "Value", "value": "100"}}}]});
        let memory = json!({"currentMetrics": [{"type": "Resource",
            "resource": {"name": "memory", "current": {"averageValue": "300Mi"}}}]});
        assert_eq!(
            targets(three, memory),
            "memory: 300Mi/500Mi, <unknown>/1k + 1 more..."
        );
        let object = json!({"metrics": [{"type": "Object", "object": {
            "describedObject": {"kind": "Service", "name": "s"}, "metric": {"name": "hits"},
            "target": {"type": "AverageValue", "averageValue": "5"}}}]});
        let value_only = json!({"currentMetrics": [{"type": "Object",
            "object": {"current": {"value": "7"}}}]});
        assert_eq!(targets(object, value_only), "<unknown>/5 (avg)");
        let auto = json!({"metrics": [{"type": "ContainerResource", "containerResource": {
            "name": "cpu", "container": "app", "target": {"type": "Utilization"}}},
            {"type": "Bogus"}]});
        assert_eq!(
            targets(auto, json!({})),
            "cpu: <unknown>/<auto>, <unknown type>"
        );
        assert_eq!(targets(json!({}), json!({})), "<none>");
        assert_eq!(
            cell(
                "autoscaling",
                "HorizontalPodAutoscaler",
                "MinPods",
                json!({"spec": {}})
            ),
            "<unset>"
        );
    }

    #[test]
    fn storage_and_priority_classes_print_their_defaults() {
        assert_eq!(
            names("storage.k8s.io", "StorageClass"),
            [
                "Name",
                "Provisioner",
                "ReclaimPolicy",
                "VolumeBindingMode",
                "AllowVolumeExpansion",
                "Age"
            ]
        );
        let class = json!({"metadata": {"name": "standard", "creationTimestamp": CREATED,
                "annotations": {"storageclass.kubernetes.io/is-default-class": "true"}},
            "provisioner": "rancher.io/local-path", "volumeBindingMode": "WaitForFirstConsumer"});
        assert_eq!(
            cells("storage.k8s.io", "StorageClass", &class),
            [
                json!("standard (default)"),
                json!("rancher.io/local-path"),
                json!("Delete"),
                json!("WaitForFirstConsumer"),
                json!(false),
                json!("5m")
            ]
        );
        let beta = json!({"metadata": {"name": "fast",
                "annotations": {"storageclass.beta.kubernetes.io/is-default-class": "true"}},
            "reclaimPolicy": "Retain", "allowVolumeExpansion": true});
        assert_eq!(
            cells("storage.k8s.io", "StorageClass", &beta)[..5],
            [
                json!("fast (default)"),
                json!(""),
                json!("Retain"),
                json!("Immediate"),
                json!(true)
            ]
        );
        let plain = json!({"metadata": {"name": "slow",
            "annotations": {"storageclass.kubernetes.io/is-default-class": "false"}}});
        assert_eq!(
            cell("storage.k8s.io", "StorageClass", "Name", plain),
            "slow"
        );
        let columns = columns("storage.k8s.io", "StorageClass").unwrap();
        assert_eq!(columns[0].format, "name");

        assert_eq!(
            names("scheduling.k8s.io", "PriorityClass"),
            ["Name", "Value", "Global-Default", "Age", "PreemptionPolicy"]
        );
        let high = json!({"metadata": meta("high"), "value": 1_000_000,
            "globalDefault": true, "preemptionPolicy": "Never"});
        assert_eq!(
            cells("scheduling.k8s.io", "PriorityClass", &high),
            [
                json!("high"),
                json!(1_000_000),
                json!(true),
                json!("5m"),
                json!("Never")
            ]
        );
        let bare = json!({"metadata": {"name": "low"}});
        assert_eq!(
            cells("scheduling.k8s.io", "PriorityClass", &bare)[1..],
            [json!(0), json!(false), json!("<unknown>"), json!("")]
        );
    }

    #[test]
    fn label_selectors_print_their_requirements_sorted_by_key() {
        let selector = json!({"matchLabels": {"b": "2", "a": "1"},
            "matchExpressions": [{"key": "c", "operator": "NotIn", "values": ["z", "y"]},
                                 {"key": "aa", "operator": "Exists"}]});
        assert_eq!(format_label_selector(&selector), "a=1,aa,b=2,c notin (y,z)");
        assert_eq!(format_label_selector(&Value::Null), "<none>");
        let empty_in = json!({"matchExpressions": [{"key": "k", "operator": "In", "values": []}]});
        assert_eq!(format_label_selector(&empty_in), "<error>");
    }
}
