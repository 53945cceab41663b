//! The Table columns of the built-in kinds the dev server serves, as
//! kube-apiserver's printers give them (`pkg/printers/internalversion`
//! and, for CRDs, apiextensions' default): `kubectl get pods` shows
//! `NAME READY STATUS RESTARTS AGE`, `-o wide` adds the priority-1
//! columns. Cells are computed from the stored object as the printers
//! compute them; `<none>` where they print it.

use serde_json::{Value, json};

use super::{age, name_column_description};

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
            selector(),
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
            selector(),
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
            selector(),
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

fn containers() -> Column {
    wide(with(
        "Containers",
        "string",
        "Names of each container in the template.",
        |o, _| of_template_containers(o, "name"),
    ))
}

fn images() -> Column {
    wide(with(
        "Images",
        "string",
        "Images referenced by each container in the template.",
        |o, _| of_template_containers(o, "image"),
    ))
}

/// A field of each of a workload template's containers, joined with `,`.
fn of_template_containers(o: &Value, field: &str) -> Value {
    let values: Vec<&str> = o["spec"]["template"]["spec"]["containers"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|c| c[field].as_str())
        .collect();
    json!(values.join(","))
}

fn selector() -> Column {
    wide(with(
        "Selector",
        "string",
        "Label selector for pods. Existing ReplicaSets whose pods are selected by this will be the ones affected by this deployment.",
        |o, _| {
            let selector = &o["spec"]["selector"];
            let mut parts: Vec<String> = pairs(&selector["matchLabels"]).into_iter().collect();
            for requirement in selector["matchExpressions"]
                .as_array()
                .into_iter()
                .flatten()
            {
                let key = requirement["key"].as_str().unwrap_or_default();
                let values: Vec<&str> = requirement["values"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                parts.push(match requirement["operator"].as_str().unwrap_or_default() {
                    "In" => format!("{key} in ({})", values.join(",")),
                    "NotIn" => format!("{key} notin ({})", values.join(",")),
                    "Exists" => key.to_string(),
                    _ => format!("!{key}"),
                });
            }
            json!(if parts.is_empty() {
                "<none>".into()
            } else {
                parts.join(",")
            })
        },
    ))
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
