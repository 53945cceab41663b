//! What the Service registry of kube-apiserver v1.33 does to a written
//! Service before it validates it (`pkg/registry/core/service/storage`:
//! `beginCreate` and `beginUpdate` run before the strategy's
//! `Validate`), for a single-stack IPv4 cluster whose Service range is
//! 10.96.0.0/12 and node port range 30000-32767:
//!
//! - the IP family fields (`initIPFamilyFields`): a policy where none is
//!   given (`SingleStack`; `RequireDualStack` for a headless Service
//!   without a selector, which then has both families; an update's old
//!   policy), the cluster IP fields checked alone first
//!   (`ValidateServiceClusterIPsRelatedFields`, the request refused with
//!   only those causes), a single-stack policy with two IPs or families,
//!   families taken from the cluster IPs, IPv6 and dual stack refused as
//!   not configured on this cluster, `[IPv4]` where none is given;
//! - the cluster IP (`allocClusterIPs`): the next free one of the range,
//!   or the one asked for, refused when outside the range (`the provided
//!   network does not match the current range`, the network and broadcast
//!   addresses included, as the ServiceCIDR allocator of v1.33 has it) or
//!   held by another Service (`provided IP is already allocated`); none for
//!   an `ExternalName` or headless Service; on update, only for a Service
//!   that stops being an `ExternalName`;
//! - node ports (`initNodePorts`, `updateNodePorts`) for a `NodePort`
//!   Service and a `LoadBalancer` one that allocates them: the one asked
//!   for, shared by ports of the same number, refused outside the range or
//!   when taken (`provided port is already allocated`), else the lowest
//!   free one of the range's dynamic band (30086 and up, then the static
//!   band; the server picks at random within the band); and a health check
//!   node port for a local load balancer (`allocHealthCheckNodePort`,
//!   whose refusal is a 500 as there);
//! - on update, the allocated values an update leaves out kept
//!   (`patchAllocatedValues`: node ports by port name, the health check
//!   node port; the cluster IPs are `objects.rs`'s), and the fields a new
//!   type no longer uses dropped when unchanged (the strategy's
//!   `dropTypeDependentFields`, after allocation, as `PrepareForUpdate`
//!   runs after `beginUpdate`).
//!
//! Not done: the dual-stack paths (no IPv6 range here), the `kubernetes`
//! Service's own 10.96.0.1 (the dev server has no such Service, so the
//! address is free), and an update's duplicate node port of one protocol,
//! which the server refuses with a 500 before validation and the dev
//! server leaves to validation's `Duplicate value`.

use std::collections::BTreeSet;
use std::net::{IpAddr, Ipv4Addr};

use serde_json::{Value, json};

use super::defaults;
use super::schema::Cause;
use super::validation::{
    externally_accessible, is_ipv6, items, needs_health_check, number, present,
    service_cluster_ip_causes, sloppy_ip, strings, text,
};

/// The Service range's network and broadcast addresses.
const RANGE_FIRST: Ipv4Addr = Ipv4Addr::new(10, 96, 0, 0);
const RANGE_LAST: Ipv4Addr = Ipv4Addr::new(10, 111, 255, 255);
/// The node port range, and where its dynamic band starts
/// (`ServiceNodePortStaticSubrange`: min(max(16, size/32), 128) ports
/// kept for static use).
const NODE_PORT_FIRST: i64 = 30000;
const NODE_PORT_LAST: i64 = 32767;
const NODE_PORT_DYNAMIC: i64 = 30086;

/// Why the registry refuses a Service before validation: a 422 with
/// these causes, or a 500 with this message.
#[derive(Debug, PartialEq)]
pub(super) enum Refusal {
    Invalid(Vec<Cause>),
    Internal(String),
}

/// What the other Services hold: their cluster IPs and node ports
/// (health check ones too).
#[derive(Debug, Default)]
pub(super) struct Taken {
    pub cluster_ips: BTreeSet<IpAddr>,
    pub node_ports: BTreeSet<i64>,
}

impl Taken {
    /// What `services` hold.
    pub(super) fn of<'a>(services: impl Iterator<Item = &'a Value>) -> Taken {
        let mut taken = Taken::default();
        for service in services {
            let spec = service.get("spec").unwrap_or(&Value::Null);
            for ip in strings(spec.get("clusterIPs")) {
                if let Some(address) = sloppy_ip(ip) {
                    taken.cluster_ips.insert(address);
                }
            }
            taken.node_ports.extend(node_ports(spec));
            let health_check = number(spec, "healthCheckNodePort");
            if health_check != 0 {
                taken.node_ports.insert(health_check);
            }
        }
        taken
    }
}

/// `beginCreate`: normalizes and allocates the created `service`'s IPs
/// and ports; `last_cluster_ip` is the store's allocation cursor.
pub(super) fn create(
    service: &mut Value,
    taken: &mut Taken,
    last_cluster_ip: &mut u32,
) -> Result<(), Refusal> {
    let Some(spec) = service.get_mut("spec").filter(|s| s.is_object()) else {
        return Ok(());
    };
    // `normalizeClusterIPs`: a create that names `clusterIP` alone.
    let cluster_ip = text(spec, "/clusterIP").to_string();
    if !cluster_ip.is_empty() && strings(spec.get("clusterIPs")).is_empty() {
        spec["clusterIPs"] = json!([cluster_ip]);
    }
    init_ip_families(spec, None)?;
    allocate_cluster_ips(spec, taken, last_cluster_ip)?;
    if matches!(text(spec, "/type"), "NodePort" | "LoadBalancer") {
        init_node_ports(spec, taken)?;
    }
    if needs_health_check(spec) {
        health_check_node_port(spec, taken)?;
    }
    Ok(())
}

/// `beginUpdate` of `old` to `service` (whose cluster IPs the store has
/// already kept and normalized), then the strategy's
/// `dropTypeDependentFields`.
pub(super) fn update(
    service: &mut Value,
    old: &Value,
    taken: &mut Taken,
    last_cluster_ip: &mut u32,
) -> Result<(), Refusal> {
    let old_spec = old.get("spec").unwrap_or(&Value::Null);
    // What the Service held stays allocated until the update commits: no
    // port it holds is handed out again.
    taken.node_ports.extend(node_ports(old_spec));
    let held_check = number(old_spec, "healthCheckNodePort");
    if held_check != 0 {
        taken.node_ports.insert(held_check);
    }
    let Some(spec) = service.get_mut("spec").filter(|s| s.is_object()) else {
        return Ok(());
    };
    patch_allocated_ports(spec, old_spec);
    init_ip_families(spec, Some(old_spec))?;
    if text(old_spec, "/type") == "ExternalName" && text(spec, "/type") != "ExternalName" {
        allocate_cluster_ips(spec, taken, last_cluster_ip)?;
    }
    if matches!(text(spec, "/type"), "NodePort" | "LoadBalancer") {
        update_node_ports(spec, old_spec, taken)?;
    }
    if !needs_health_check(old_spec) && needs_health_check(spec) {
        health_check_node_port(spec, taken)?;
    }
    drop_type_dependent_fields(service, old);
    hide_on_read(service);
    Ok(())
}

/// `initIPFamilyFields` of a Service's `spec`, `old` its spec before an
/// update.
fn init_ip_families(spec: &mut Value, old: Option<&Value>) -> Result<(), Refusal> {
    if text(spec, "/type") == "ExternalName" || matching_prefer_dual_stack(spec, old) {
        return Ok(());
    }
    if present(spec, "ipFamilyPolicy").is_none() {
        let old_policy = old.and_then(|o| present(o, "ipFamilyPolicy")).cloned();
        spec["ipFamilyPolicy"] = match old_policy {
            Some(policy) => policy,
            None if headless_without_selector(spec) => json!("RequireDualStack"),
            None => json!("SingleStack"),
        };
    }
    let mut causes = Vec::new();
    service_cluster_ip_causes(spec, &mut causes);
    if !causes.is_empty() {
        return Err(Refusal::Invalid(causes));
    }
    let policy = text(spec, "/ipFamilyPolicy").to_string();
    let policy_invalid = |detail: &str| {
        Cause::new(
            "spec.ipFamilyPolicy",
            "FieldValueInvalid",
            format!("Invalid value: {policy:?}: {detail}"),
        )
    };
    if let Some(old) = old {
        let same_ips = strings(spec.get("clusterIPs")) == strings(old.get("clusterIPs"))
            && text(spec, "/clusterIP") == text(old, "/clusterIP");
        let same_families = strings(spec.get("ipFamilies")) == strings(old.get("ipFamilies"));
        if policy == "SingleStack" {
            // Clear intent: the secondary values go.
            for (field, same) in [("clusterIPs", same_ips), ("ipFamilies", same_families)] {
                if let Some(list) = spec.get_mut(field).and_then(Value::as_array_mut)
                    && same
                    && list.len() > 1
                {
                    list.truncate(1);
                }
            }
        } else {
            let reduced = |field: &str| {
                let now = items(spec.get(field)).len();
                now > 0 && now < items(old.get(field)).len()
            };
            if reduced("clusterIPs") {
                causes.push(policy_invalid(
                    "must be 'SingleStack' to release the secondary cluster IP",
                ));
            }
            if reduced("ipFamilies") {
                causes.push(policy_invalid(
                    "must be 'SingleStack' to release the secondary IP family",
                ));
            }
        }
    }
    if policy == "SingleStack" {
        if items(spec.get("clusterIPs")).len() == 2 {
            causes.push(policy_invalid(
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple cluster IPs are specified",
            ));
        }
        if items(spec.get("ipFamilies")).len() == 2 {
            causes.push(policy_invalid(
                "must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified",
            ));
        }
    }
    // The families follow the cluster IPs where they are not given.
    let cluster_ips: Vec<String> = strings(spec.get("clusterIPs"))
        .into_iter()
        .map(str::to_string)
        .collect();
    let mut families: Vec<String> = strings(spec.get("ipFamilies"))
        .into_iter()
        .map(str::to_string)
        .collect();
    for (i, ip) in cluster_ips.iter().enumerate() {
        if ip == "None" {
            break;
        }
        if i < families.len() {
            continue;
        }
        if is_ipv6(ip) {
            let shown: Vec<String> = cluster_ips.iter().map(|ip| format!("{ip:?}")).collect();
            causes.push(Cause::new(
                &format!("spec.clusterIPs[{i}]"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: []string{{{}}}: IPv6 is not configured on this cluster",
                    shown.join(", ")
                ),
            ));
        } else {
            families.push("IPv4".into());
        }
    }
    if !causes.is_empty() {
        return Err(Refusal::Invalid(causes));
    }
    if headless_without_selector(spec) {
        if families.is_empty() {
            families.push("IPv4".into());
        }
        if families.len() < 2 && policy != "SingleStack" {
            let other = if families[0] == "IPv4" {
                "IPv6"
            } else {
                "IPv4"
            };
            families.push(other.into());
        }
        spec["ipFamilies"] = json!(families);
        return Ok(());
    }
    if policy == "RequireDualStack" {
        causes.push(policy_invalid(
            "this cluster is not configured for dual-stack services",
        ));
    }
    for (i, family) in families.iter().enumerate() {
        if family != "IPv4" {
            causes.push(Cause::new(
                &format!("spec.ipFamilies[{i}]"),
                "FieldValueInvalid",
                format!("Invalid value: {family:?}: not configured on this cluster"),
            ));
        }
    }
    if !causes.is_empty() {
        return Err(Refusal::Invalid(causes));
    }
    if families.is_empty() {
        families.push("IPv4".into());
    }
    spec["ipFamilies"] = json!(families);
    Ok(())
}

/// `isMatchingPreferDualStackClusterIPFields`: an update that keeps a
/// `PreferDualStack` Service's type, IPs and families is left as it is.
fn matching_prefer_dual_stack(spec: &Value, old: Option<&Value>) -> bool {
    let Some(old) = old else {
        return false;
    };
    let prefer = |s: &Value| {
        present(s, "ipFamilyPolicy").is_none_or(|p| p.as_str() == Some("PreferDualStack"))
    };
    present(spec, "ipFamilyPolicy").is_some()
        && text(old, "/type") == text(spec, "/type")
        && matches!(
            text(spec, "/type"),
            "ClusterIP" | "NodePort" | "LoadBalancer"
        )
        && prefer(spec)
        && prefer(old)
        && text(spec, "/clusterIP") == text(old, "/clusterIP")
        && strings(spec.get("clusterIPs")) == strings(old.get("clusterIPs"))
        && strings(spec.get("ipFamilies")) == strings(old.get("ipFamilies"))
}

/// A headless Service without a selector, which gets both families.
fn headless_without_selector(spec: &Value) -> bool {
    text(spec, "/clusterIP") == "None"
        && spec
            .get("selector")
            .and_then(Value::as_object)
            .is_none_or(|s| s.is_empty())
}

/// `allocClusterIPs` on a single-stack IPv4 range: the IPv4 family's
/// cluster IP, asked for or the next free one.
fn allocate_cluster_ips(
    spec: &mut Value,
    taken: &mut Taken,
    last_cluster_ip: &mut u32,
) -> Result<(), Refusal> {
    if text(spec, "/type") == "ExternalName"
        || strings(spec.get("clusterIPs")).first() == Some(&"None")
    {
        return Ok(());
    }
    let asked = strings(spec.get("clusterIPs"))
        .first()
        .map(|ip| ip.to_string());
    let ip = match asked.filter(|ip| !ip.is_empty()) {
        Some(ip) => {
            let refused = |why: &str| {
                let shown: Vec<String> = strings(spec.get("clusterIPs"))
                    .iter()
                    .map(|ip| format!("{ip:?}"))
                    .collect();
                Refusal::Invalid(vec![Cause::new(
                    "spec.clusterIPs",
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: []string{{{}}}: failed to allocate IP {ip}: {why}",
                        shown.join(", ")
                    ),
                )])
            };
            let address = sloppy_ip(&ip).ok_or_else(|| refused("not an IP address"))?;
            let in_range = match address {
                IpAddr::V4(v4) => v4 > RANGE_FIRST && v4 < RANGE_LAST,
                IpAddr::V6(_) => false,
            };
            if !in_range {
                return Err(refused(
                    "the provided network does not match the current range",
                ));
            }
            if taken.cluster_ips.contains(&address) {
                return Err(refused("provided IP is already allocated"));
            }
            taken.cluster_ips.insert(address);
            ip
        }
        None => {
            let ip = defaults::next_cluster_ip(last_cluster_ip, |ip| {
                sloppy_ip(ip).is_some_and(|a| taken.cluster_ips.contains(&a))
            })
            .ok_or_else(|| {
                Refusal::Internal("failed to allocate a serviceIP: range is full".into())
            })?;
            if let Some(address) = sloppy_ip(&ip) {
                taken.cluster_ips.insert(address);
            }
            ip
        }
    };
    spec["clusterIP"] = json!(ip);
    let mut cluster_ips: Vec<Value> = items(spec.get("clusterIPs")).to_vec();
    match cluster_ips.first_mut() {
        Some(first) => *first = json!(ip),
        None => cluster_ips.push(json!(ip)),
    }
    spec["clusterIPs"] = Value::Array(cluster_ips);
    Ok(())
}

/// `shouldAllocateNodePorts`: a `NodePort` Service, or a `LoadBalancer`
/// that allocates them.
fn allocates_node_ports(spec: &Value) -> bool {
    match text(spec, "/type") {
        "NodePort" => true,
        "LoadBalancer" => spec
            .get("allocateLoadBalancerNodePorts")
            .and_then(Value::as_bool)
            .unwrap_or(false),
        _ => false,
    }
}

/// Reserves `port` for this Service, as the port allocator's `Allocate`.
fn reserve(port: i64, taken: &mut Taken) -> Result<(), String> {
    if !(NODE_PORT_FIRST..=NODE_PORT_LAST).contains(&port) {
        return Err(format!(
            "provided port is not in the valid range. The range of valid ports is {NODE_PORT_FIRST}-{NODE_PORT_LAST}"
        ));
    }
    if !taken.node_ports.insert(port) {
        return Err("provided port is already allocated".into());
    }
    Ok(())
}

/// The lowest free node port of the dynamic band, then of the static
/// one, reserved (`AllocateNext`).
fn next_node_port(taken: &mut Taken) -> Result<i64, Refusal> {
    let free = (NODE_PORT_DYNAMIC..=NODE_PORT_LAST)
        .chain(NODE_PORT_FIRST..NODE_PORT_DYNAMIC)
        .find(|port| !taken.node_ports.contains(port))
        .ok_or_else(|| Refusal::Internal("failed to allocate a nodePort: range is full".into()))?;
    taken.node_ports.insert(free);
    Ok(free)
}

/// A node port refused for port `i` of the Service.
fn node_port_refused(i: usize, port: i64, why: String) -> Refusal {
    Refusal::Invalid(vec![Cause::invalid_number(
        &format!("spec.ports[{i}].nodePort"),
        port,
        &why,
    )])
}

/// `initNodePorts`: each port's node port, the one asked for (by this
/// port or another of the same number) or the next free one; ports of
/// the same number share one.
fn init_node_ports(spec: &mut Value, taken: &mut Taken) -> Result<(), Refusal> {
    let allocate = allocates_node_ports(spec);
    let ports: Vec<Value> = items(spec.get("ports")).to_vec();
    let mut by_number: Vec<(i64, i64)> = Vec::new();
    let mut chosen = Vec::with_capacity(ports.len());
    for (i, port) in ports.iter().enumerate() {
        let (number_, node_port) = (number(port, "port"), number(port, "nodePort"));
        if node_port == 0 && !allocate {
            chosen.push(0);
            continue;
        }
        let shared = by_number
            .iter()
            .find(|(n, _)| *n == number_)
            .map(|(_, p)| *p);
        let value = match shared {
            None => {
                // The first node port asked for by a port of this number.
                let requested = ports
                    .iter()
                    .find(|p| number(p, "port") == number_ && number(p, "nodePort") != 0)
                    .map(|p| number(p, "nodePort"));
                let value = match requested {
                    Some(requested) => {
                        reserve(requested, taken)
                            .map_err(|why| node_port_refused(i, requested, why))?;
                        requested
                    }
                    None => next_node_port(taken)?,
                };
                by_number.push((number_, value));
                value
            }
            Some(shared) if node_port == 0 => shared,
            Some(shared) if node_port == shared => shared,
            Some(_) => {
                reserve(node_port, taken).map_err(|why| node_port_refused(i, node_port, why))?;
                node_port
            }
        };
        chosen.push(value);
    }
    set_node_ports(spec, &chosen);
    Ok(())
}

/// `updateNodePorts`: a node port asked for that the Service did not
/// hold is reserved, a missing one allocated.
fn update_node_ports(spec: &mut Value, old: &Value, taken: &mut Taken) -> Result<(), Refusal> {
    let allocate = allocates_node_ports(spec);
    let held = node_ports(old);
    let mut reserved = Vec::new();
    let mut chosen = Vec::new();
    for (i, port) in items(spec.get("ports")).iter().enumerate() {
        let node_port = number(port, "nodePort");
        if node_port == 0 && !allocate {
            chosen.push(0);
        } else if node_port != 0 {
            if !held.contains(&node_port) && !reserved.contains(&node_port) {
                reserve(node_port, taken).map_err(|why| node_port_refused(i, node_port, why))?;
                reserved.push(node_port);
            }
            chosen.push(node_port);
        } else {
            chosen.push(next_node_port(taken)?);
        }
    }
    set_node_ports(spec, &chosen);
    Ok(())
}

/// `allocHealthCheckNodePort`: the one asked for, or the next free one;
/// a refusal is the server's internal error.
fn health_check_node_port(spec: &mut Value, taken: &mut Taken) -> Result<(), Refusal> {
    let asked = number(spec, "healthCheckNodePort");
    if asked != 0 {
        return reserve(asked, taken).map_err(|why| {
            Refusal::Internal(format!(
                "failed to allocate requested HealthCheck NodePort {asked}: {why}"
            ))
        });
    }
    // The server's message names the port it was asked for: 0.
    let port = next_node_port(taken).map_err(|_| {
        Refusal::Internal("failed to allocate a HealthCheck NodePort 0: range is full".into())
    })?;
    spec["healthCheckNodePort"] = json!(port);
    Ok(())
}

/// `patchAllocatedValues` for node ports: while both old and new use
/// them, a port without a node port gets its old one (by port name)
/// unless another port now holds it; likewise the health check node port.
fn patch_allocated_ports(spec: &mut Value, old: &Value) {
    let uses_node_ports = |s: &Value| matches!(text(s, "/type"), "NodePort" | "LoadBalancer");
    if uses_node_ports(old) && uses_node_ports(spec) {
        let now = node_ports(spec);
        let used: Vec<i64> = node_ports(old)
            .into_iter()
            .filter(|p| now.contains(p))
            .collect();
        let old_ports = items(old.get("ports"));
        let by_name = |name: &str| {
            old_ports
                .iter()
                .rev()
                .find(|p| text(p, "/name") == name)
                .map_or(0, |p| number(p, "nodePort"))
        };
        let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten() {
            if number(port, "nodePort") == 0 {
                let old_value = by_name(text(port, "/name"));
                if old_value != 0 && !used.contains(&old_value) {
                    port["nodePort"] = json!(old_value);
                }
            }
        }
    }
    if needs_health_check(old)
        && needs_health_check(spec)
        && number(spec, "healthCheckNodePort") == 0
    {
        let old_value = number(old, "healthCheckNodePort");
        if old_value != 0 {
            spec["healthCheckNodePort"] = json!(old_value);
        }
    }
}

/// The strategy's `dropTypeDependentFields`: what the new type does not
/// use and the update left as it was goes (cluster IPs and families, node
/// ports, the health check node port, a load balancer's node port
/// allocation and class, the external traffic policy), and a Service
/// that is no load balancer has an empty load balancer status.
/// What the registry's `defaultOnRead` hides from every answer: an
/// `ExternalName` Service's internal traffic policy, which an update from
/// another type leaves in place.
fn hide_on_read(service: &mut Value) {
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    if spec.get("type").and_then(Value::as_str) == Some("ExternalName") {
        spec.remove("internalTrafficPolicy");
    }
}

fn drop_type_dependent_fields(service: &mut Value, old: &Value) {
    let old_spec = old.get("spec").unwrap_or(&Value::Null);
    let Some(spec) = service.get_mut("spec").and_then(Value::as_object_mut) else {
        return;
    };
    let view = Value::Object(spec.clone());
    let same = |field: &str| present(&view, field) == present(old_spec, field);
    let load_balancer = |s: &Value| text(s, "/type") == "LoadBalancer";
    if text(old_spec, "/type") != "ExternalName" && text(&view, "/type") == "ExternalName" {
        if same("clusterIP")
            && strings(view.get("clusterIPs")) == strings(old_spec.get("clusterIPs"))
        {
            spec.remove("clusterIP");
            spec.remove("clusterIPs");
        }
        if strings(view.get("ipFamilies")) == strings(old_spec.get("ipFamilies")) {
            spec.remove("ipFamilies");
        }
        if same("ipFamilyPolicy") {
            spec.remove("ipFamilyPolicy");
        }
    }
    let uses_node_ports = |s: &Value| matches!(text(s, "/type"), "NodePort" | "LoadBalancer");
    let held = node_ports(old_spec);
    if uses_node_ports(old_spec)
        && !uses_node_ports(&view)
        && node_ports(&view).iter().all(|p| held.contains(p))
    {
        let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
        for port in ports.into_iter().flatten() {
            port.as_object_mut().map(|p| p.remove("nodePort"));
        }
    }
    if needs_health_check(old_spec) && !needs_health_check(&view) && same("healthCheckNodePort") {
        spec.remove("healthCheckNodePort");
    }
    if load_balancer(old_spec) && !load_balancer(&view) {
        let both = present(&view, "allocateLoadBalancerNodePorts").is_some()
            && present(old_spec, "allocateLoadBalancerNodePorts").is_some();
        if both && same("allocateLoadBalancerNodePorts") {
            spec.remove("allocateLoadBalancerNodePorts");
        }
        if same("loadBalancerClass") {
            spec.remove("loadBalancerClass");
        }
    }
    if externally_accessible(old_spec)
        && !externally_accessible(&view)
        && same("externalTrafficPolicy")
    {
        spec.remove("externalTrafficPolicy");
    }
    if !load_balancer(&view)
        && let Some(status) = service.get_mut("status").and_then(Value::as_object_mut)
    {
        status.insert("loadBalancer".into(), json!({}));
    }
}

/// Sets each port's node port, 0 removing it.
fn set_node_ports(spec: &mut Value, chosen: &[i64]) {
    let ports = spec.get_mut("ports").and_then(Value::as_array_mut);
    for (port, value) in ports.into_iter().flatten().zip(chosen) {
        if *value == 0 {
            port.as_object_mut().map(|p| p.remove("nodePort"));
        } else {
            port["nodePort"] = json!(value);
        }
    }
}

/// The node ports a Service's ports hold.
fn node_ports(spec: &Value) -> Vec<i64> {
    items(spec.get("ports"))
        .iter()
        .map(|p| number(p, "nodePort"))
        .filter(|p| *p != 0)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn service(spec: Value) -> Value {
        let mut service = json!({"metadata": {"name": "svc"}, "spec": spec});
        defaults::apply("", "Service", &mut service);
        service
    }

    fn messages(refusal: Refusal) -> Vec<String> {
        match refusal {
            Refusal::Invalid(causes) => causes.iter().map(Cause::message).collect(),
            Refusal::Internal(message) => vec![format!("500: {message}")],
        }
    }

    /// A create of `spec` among `others`: the spec allocated, or the
    /// refusal's messages.
    fn create_among(others: &[Value], spec: Value) -> Result<Value, Vec<String>> {
        let mut taken = Taken::of(others.iter());
        let mut created = service(spec);
        let mut last = 0;
        create(&mut created, &mut taken, &mut last).map_err(messages)?;
        Ok(created["spec"].clone())
    }

    #[test]
    fn a_cluster_ip_is_the_next_free_one_or_one_of_the_range_not_taken() {
        let web = json!({"ports": [{"port": 80}]});
        let first = create_among(&[], web.clone()).unwrap();
        assert_eq!(first["clusterIPs"], json!(["10.96.0.11"]));
        assert_eq!(first["ipFamilies"], json!(["IPv4"]));
        assert_eq!(first["ipFamilyPolicy"], "SingleStack");
        let others = [json!({"spec": {"clusterIPs": ["10.96.0.11", "fd00::1"]}})];
        assert_eq!(
            create_among(&others, web.clone()).unwrap()["clusterIP"],
            "10.96.0.12"
        );
        let asking = |ip: &str| json!({"clusterIP": ip, "ports": [{"port": 80}]});
        assert_eq!(
            create_among(&others, asking("10.96.0.11")),
            Err(vec![
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.11\"}: failed to allocate IP 10.96.0.11: provided IP is already allocated".to_string()
            ])
        );
        for outside in ["10.0.0.1", "10.96.0.0", "10.111.255.255"] {
            assert_eq!(
                create_among(&[], asking(outside)),
                Err(vec![format!(
                    "spec.clusterIPs: Invalid value: []string{{\"{outside}\"}}: failed to allocate IP {outside}: the provided network does not match the current range"
                )])
            );
        }
        assert_eq!(
            create_among(&[], asking("10.111.255.254")).unwrap()["clusterIPs"],
            json!(["10.111.255.254"])
        );
    }

    #[test]
    fn families_are_checked_alone_first_and_ipv6_is_not_configured() {
        // Only the cluster IP fields' causes: the ports are not looked at.
        assert_eq!(
            create_among(&[], json!({"clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.6"]})),
            Err(vec![
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.6\"}: first value must match `clusterIP`".to_string()
            ])
        );
        assert_eq!(
            create_among(&[], json!({"clusterIP": "fd00::5", "ports": [{"port": 80}]})),
            Err(vec![
                "spec.clusterIPs[0]: Invalid value: []string{\"fd00::5\"}: IPv6 is not configured on this cluster".to_string()
            ])
        );
        assert_eq!(
            create_among(&[], json!({"ipFamilies": ["IPv4", "IPv6"], "ports": [{"port": 80}]})),
            Err(vec![
                "spec.ipFamilyPolicy: Invalid value: \"SingleStack\": must be 'RequireDualStack' or 'PreferDualStack' when multiple IP families are specified".to_string()
            ])
        );
        assert_eq!(
            create_among(
                &[],
                json!({"ipFamilyPolicy": "RequireDualStack", "ipFamilies": ["IPv6"]})
            ),
            Err(vec![
                "spec.ipFamilyPolicy: Invalid value: \"RequireDualStack\": this cluster is not configured for dual-stack services".to_string(),
                "spec.ipFamilies[0]: Invalid value: \"IPv6\": not configured on this cluster".to_string(),
            ])
        );
        // A headless Service without a selector asks for both families.
        let headless = create_among(&[], json!({"clusterIP": "None"})).unwrap();
        assert_eq!(headless["clusterIPs"], json!(["None"]));
        assert_eq!(headless["ipFamilyPolicy"], "RequireDualStack");
        assert_eq!(headless["ipFamilies"], json!(["IPv4", "IPv6"]));
        let selecting = create_among(&[], json!({"clusterIP": "None", "selector": {"a": "b"}}));
        assert_eq!(selecting.unwrap()["ipFamilies"], json!(["IPv4"]));
        let external = create_among(&[], json!({"type": "ExternalName", "externalName": "db"}));
        assert!(external.unwrap().get("ipFamilies").is_none());
    }

    #[test]
    fn node_ports_are_shared_by_port_number_and_taken_once() {
        let spec = create_among(
            &[],
            json!({"type": "NodePort", "ports": [
                {"name": "dns", "port": 53},
                {"name": "dns-udp", "port": 53, "protocol": "UDP"},
                {"name": "web", "port": 80, "nodePort": 30080}]}),
        )
        .unwrap();
        let node_ports: Vec<&Value> = items(spec.get("ports"))
            .iter()
            .map(|p| &p["nodePort"])
            .collect();
        assert_eq!(node_ports, [&json!(30086), &json!(30086), &json!(30080)]);
        let others =
            [json!({"spec": {"ports": [{"nodePort": 30080}], "healthCheckNodePort": 30086}})];
        let asking = |node_port: i64| json!({"type": "NodePort", "ports": [{"port": 80, "nodePort": node_port}]});
        assert_eq!(
            create_among(&others, asking(30080)),
            Err(vec![
                "spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"
                    .to_string()
            ])
        );
        assert_eq!(
            create_among(&others, asking(8080)),
            Err(vec![
                "spec.ports[0].nodePort: Invalid value: 8080: provided port is not in the valid range. The range of valid ports is 30000-32767".to_string()
            ])
        );
        // A load balancer that allocates none has none, but its health
        // check node port.
        let balancer = create_among(
            &others,
            json!({"type": "LoadBalancer", "allocateLoadBalancerNodePorts": false,
                "externalTrafficPolicy": "Local", "ports": [{"port": 80}]}),
        )
        .unwrap();
        assert!(balancer["ports"][0].get("nodePort").is_none());
        assert_eq!(balancer["healthCheckNodePort"], 30087);
        assert_eq!(
            create_among(
                &others,
                json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                    "healthCheckNodePort": 30086, "ports": [{"port": 80}]})
            ),
            Err(vec![
                "500: failed to allocate requested HealthCheck NodePort 30086: provided port is already allocated".to_string()
            ])
        );
    }

    #[test]
    fn an_update_keeps_node_ports_and_drops_what_the_new_type_does_not_use() {
        let old = create_among(
            &[],
            json!({"type": "LoadBalancer", "externalTrafficPolicy": "Local",
                "ports": [{"name": "web", "port": 80}]}),
        )
        .unwrap();
        let old =
            json!({"spec": old, "status": {"loadBalancer": {"ingress": [{"ip": "1.2.3.4"}]}}});
        let updated = |spec: Value| {
            let mut new = service(spec);
            // The store keeps the stored status on a write of the spec.
            new["status"] = old["status"].clone();
            let mut taken = Taken::default();
            let mut last = 0;
            update(&mut new, &old, &mut taken, &mut last).map(|()| new)
        };
        // A PUT that leaves the node ports out keeps them.
        let mut spec = old["spec"].clone();
        spec["ports"] = json!([{"name": "web", "port": 8080}]);
        spec.as_object_mut().unwrap().remove("healthCheckNodePort");
        let kept = updated(spec).unwrap();
        assert_eq!(kept["spec"]["ports"][0]["nodePort"], 30086);
        assert_eq!(kept["spec"]["healthCheckNodePort"], 30087);
        // A port added beside them gets a port the Service does not hold.
        let mut spec = old["spec"].clone();
        spec["ports"] = json!([{"name": "web", "port": 80}, {"name": "admin", "port": 81}]);
        let added = updated(spec).unwrap();
        assert_eq!(added["spec"]["ports"][0]["nodePort"], 30086);
        assert_eq!(added["spec"]["ports"][1]["nodePort"], 30088);
        // A type changed alone drops what the new type does not use.
        let mut spec = old["spec"].clone();
        spec["type"] = json!("ClusterIP");
        let changed = updated(spec).unwrap();
        for dropped in [
            "/spec/ports/0/nodePort",
            "/spec/healthCheckNodePort",
            "/spec/allocateLoadBalancerNodePorts",
            "/spec/externalTrafficPolicy",
        ] {
            assert!(changed.pointer(dropped).is_none(), "{dropped}");
        }
        assert_eq!(changed["status"]["loadBalancer"], json!({}));
        // From an external name, the Service gets a cluster IP.
        let external = json!({"spec": {"type": "ExternalName", "externalName": "db"}});
        let mut new = service(json!({"ports": [{"port": 80}]}));
        let (mut taken, mut last) = (Taken::default(), 0);
        update(&mut new, &external, &mut taken, &mut last).unwrap();
        assert_eq!(new["spec"]["clusterIPs"], json!(["10.96.0.11"]));
    }

    #[test]
    fn an_external_name_service_shows_no_internal_traffic_policy_after_an_update() {
        let old = json!({"spec": create_among(&[], json!({"ports": [{"port": 80}]})).unwrap()});
        assert_eq!(old["spec"]["internalTrafficPolicy"], "Cluster");
        let mut new = service(
            json!({"type": "ExternalName", "externalName": "db.example.com",
            "internalTrafficPolicy": "Cluster"}),
        );
        update(&mut new, &old, &mut Taken::default(), &mut 0).unwrap();
        assert!(new["spec"].get("internalTrafficPolicy").is_none());
    }
}
