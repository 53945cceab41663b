//! A Service's spec as kube-apiserver v1.33 validates it
//! (`ValidateService` in `pkg/apis/core/validation`), in its order, each
//! problem a cause of the write's 422: the topology annotations agree;
//! ports are required unless the Service is headless or `ExternalName`; a
//! `LoadBalancer` or `NodePort` Service is not headless; an
//! `ExternalName` Service has no cluster IPs, IP families or family
//! policy and an external name that is a DNS-1123 subdomain (a trailing
//! dot allowed); each port (`validateServicePort`) is named when there
//! are several (a DNS-1123 label, each name once), numbered 1..65535, of
//! protocol `SCTP`, `TCP` or `UDP`, its `targetPort` a number in range or
//! an IANA port name, its `appProtocol` a qualified name; the selector's
//! labels; session affinity and its client IP timeout (1..86400 s); cluster
//! IPs, IP families and family policy
//! (`ValidateServiceClusterIPsRelatedFields`); external IPs (IP addresses
//! as v1.33's legacy parser reads them, none unspecified, loopback or
//! link-local); the type; node ports only for types that have them, no
//! node port or port and protocol twice (a duplicate port shown as Go's
//! `%#v` of the `core.ServicePort` key); source ranges (CIDRs, only for
//! `LoadBalancer`, from the field or its annotation);
//! `allocateLoadBalancerNodePorts` and `loadBalancerClass` only for
//! `LoadBalancer`; external and internal traffic policies and the health
//! check node port; the traffic distribution (`PreferClose` alone, as
//! v1.33 leaves `PreferSameTrafficDistribution` off).
//!
//! An update first meets what `ValidateServiceUpdate` checks against the
//! old object (cluster IPs and IP families that may not change, a load
//! balancer class kept, a health check node port kept), then all of the
//! above. The Service's name and metadata are checked with every object's
//! (`names.rs`); the allocation the registry does before validating
//! (cluster IPs, node ports, IP families) is `super::super::service_alloc`'s.
//!
//! Not checked: values the server prints by a pointer's address (none
//! here: a pointer field is shown by its value, as the server's
//! `field.Error` dereferences it); the `StrictIPCIDRValidation` rules v1.33
//! leaves off (leading zeros, IPv4-mapped IPv6 addresses and CIDRs with
//! host bits are accepted, as there).

use std::net::IpAddr;

use serde_json::Value;

use super::super::ip::sloppy_cidr;
use super::super::names;
use super::{
    Cause, go_strings, invalid_list, items, label_selector, one_of, port_name_problems,
    port_number, sloppy_ip, strings, text,
};

const SUPPORTED_TYPES: [&str; 4] = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];
const SUPPORTED_PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const SUPPORTED_AFFINITIES: [&str; 2] = ["ClientIP", "None"];
const SUPPORTED_TRAFFIC_POLICIES: [&str; 2] = ["Cluster", "Local"];
const SUPPORTED_FAMILIES: [&str; 2] = ["IPv4", "IPv6"];
const SUPPORTED_FAMILY_POLICIES: [&str; 3] = ["PreferDualStack", "RequireDualStack", "SingleStack"];
/// `core.MaxClientIPServiceAffinitySeconds`.
const MAX_AFFINITY_SECONDS: i64 = 86400;
const TOPOLOGY_HINTS: &str = "service.kubernetes.io/topology-aware-hints";
const TOPOLOGY_MODE: &str = "service.kubernetes.io/topology-mode";
const SOURCE_RANGES: &str = "service.beta.kubernetes.io/load-balancer-source-ranges";
const ONLY_LOAD_BALANCER: &str = "may only be used when `type` is 'LoadBalancer'";
const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";

/// `ValidateService`: the causes of a Service `object`.
pub(super) fn validate(object: &Value, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    topology_annotations(object, causes);
    let kind = text(spec, "/type");
    let headless = is_headless(spec);
    let ports = items(spec.get("ports"));
    if ports.is_empty() && !headless && kind != "ExternalName" {
        causes.push(Cause::required("spec.ports", ""));
    }
    match kind {
        "LoadBalancer" | "NodePort" if headless => causes.push(names::invalid(
            "spec.clusterIPs[0]",
            "None",
            format!("may not be set to 'None' for {kind} services"),
        )),
        "ExternalName" => external_name(spec, causes),
        _ => {}
    }
    let mut port_names = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        service_port(
            port,
            ports.len() > 1,
            &mut port_names,
            &format!("spec.ports[{i}]"),
            causes,
        );
    }
    if let Some(selector) = present(spec, "selector") {
        label_selector::labels(Some(selector), "spec.selector", causes);
    }
    session_affinity(spec, causes);
    cluster_ips_related_fields(spec, causes);
    for (i, ip) in strings(spec.get("externalIPs")).into_iter().enumerate() {
        let at = format!("spec.externalIPs[{i}]");
        match sloppy_ip(ip) {
            None => causes.push(names::invalid(&at, ip, INVALID_IP.into())),
            Some(address) => non_special_ip(ip, address, &at, causes),
        }
    }
    one_of(kind, "spec.type", &SUPPORTED_TYPES, Some(""), causes);
    if kind == "ClusterIP" {
        for (i, port) in ports.iter().enumerate() {
            if number(port, "nodePort") != 0 {
                causes.push(Cause::forbidden(
                    &format!("spec.ports[{i}].nodePort"),
                    "may not be used when `type` is 'ClusterIP'",
                ));
            }
        }
    }
    duplicate_ports(ports, causes);
    source_ranges(object, spec, kind, causes);
    if present(spec, "allocateLoadBalancerNodePorts").is_some() && kind != "LoadBalancer" {
        causes.push(Cause::forbidden(
            "spec.allocateLoadBalancerNodePorts",
            ONLY_LOAD_BALANCER,
        ));
    }
    if kind == "LoadBalancer" && present(spec, "allocateLoadBalancerNodePorts").is_none() {
        // The server's path has no `spec.` here.
        causes.push(Cause::required("allocateLoadBalancerNodePorts", ""));
    }
    load_balancer_class(spec, causes);
    external_traffic_policy(spec, causes);
    internal_traffic_policy(spec, causes);
    if let Some(distribution) = present(spec, "trafficDistribution") {
        let distribution = distribution.as_str().unwrap_or_default();
        if distribution != "PreferClose" {
            causes.push(Cause::not_supported(
                "spec.trafficDistribution",
                distribution,
                &["PreferClose"],
            ));
        }
    }
}

/// What `ValidateServiceUpdate` checks of `new` against `old` before it
/// validates `new` whole: the cluster IPs and IP families kept
/// (`validateUpgradeDowngradeClusterIPs`, `validateUpgradeDowngradeIPFamilies`),
/// the load balancer class (`validateLoadBalancerClassField`, which also
/// checks the new class again) and the health check node port
/// (`validateServiceExternalTrafficFieldsUpdate`).
pub(super) fn update(new: &Value, old: &Value, causes: &mut Vec<Cause>) {
    let spec = new.get("spec").unwrap_or(&Value::Null);
    let old_spec = old.get("spec").unwrap_or(&Value::Null);
    cluster_ips_kept(spec, old_spec, causes);
    families_kept(spec, old_spec, causes);
    let load_balancer = |s: &Value| text(s, "/type") == "LoadBalancer";
    if load_balancer(old_spec)
        && load_balancer(spec)
        && present(old_spec, "loadBalancerClass") != present(spec, "loadBalancerClass")
    {
        causes.push(Cause::new(
            "spec.loadBalancerClass",
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: may not change once set",
                go_optional_string(present(spec, "loadBalancerClass"))
            ),
        ));
    }
    load_balancer_class(spec, causes);
    if needs_health_check(old_spec)
        && needs_health_check(spec)
        && number(spec, "healthCheckNodePort") != number(old_spec, "healthCheckNodePort")
    {
        causes.push(Cause::forbidden(
            "spec.healthCheckNodePort",
            "field is immutable",
        ));
    }
}

/// `ValidateServiceClusterIPsRelatedFields`: `clusterIP` and `clusterIPs`
/// agree, the families and policy are known, the cluster IPs are addresses
/// ('None' alone, at most two, one of each family) of the families named.
/// Nothing for an `ExternalName` Service. The registry runs it before it
/// allocates, as `ValidateService` does after.
pub(crate) fn cluster_ips_related_fields(spec: &Value, causes: &mut Vec<Cause>) {
    if text(spec, "/type") == "ExternalName" {
        return;
    }
    let cluster_ip = text(spec, "/clusterIP");
    let cluster_ips = strings(spec.get("clusterIPs"));
    if !cluster_ip.is_empty() {
        if cluster_ips.is_empty() {
            causes.push(Cause::required("spec.clusterIPs", ""));
        } else if cluster_ips[0] != cluster_ip {
            causes.push(invalid_list(
                "spec.clusterIPs",
                &cluster_ips,
                "first value must match `clusterIP`",
            ));
        }
    } else if !cluster_ips.is_empty() {
        causes.push(invalid_list(
            "spec.clusterIPs",
            &cluster_ips,
            "must be empty when `clusterIP` is not specified",
        ));
    }
    let families = strings(spec.get("ipFamilies"));
    for (i, family) in families.iter().enumerate() {
        let at = format!("spec.ipFamilies[{i}]");
        if !SUPPORTED_FAMILIES.contains(family) {
            causes.push(Cause::not_supported(&at, family, &SUPPORTED_FAMILIES));
        }
        if families[..i].contains(family) {
            causes.push(Cause::duplicate(&at, family));
        }
    }
    if let Some(policy) = present(spec, "ipFamilyPolicy") {
        let policy = policy.as_str().unwrap_or_default();
        if !SUPPORTED_FAMILY_POLICIES.contains(&policy) {
            causes.push(Cause::not_supported(
                "spec.ipFamilyPolicy",
                policy,
                &SUPPORTED_FAMILY_POLICIES,
            ));
        }
    }
    let mut invalid_ips = false;
    for (i, ip) in cluster_ips.iter().enumerate() {
        if i == 0 && *ip == "None" {
            if cluster_ips.len() > 1 {
                invalid_ips = true;
                causes.push(invalid_list(
                    "spec.clusterIPs",
                    &cluster_ips,
                    "'None' must be the first and only value",
                ));
            }
            continue;
        }
        if sloppy_ip(ip).is_none() {
            invalid_ips = true;
            causes.push(names::invalid(
                &format!("spec.clusterIPs[{i}]"),
                ip,
                INVALID_IP.into(),
            ));
        }
    }
    if cluster_ips.len() > 2 {
        causes.push(invalid_list(
            "spec.clusterIPs",
            &cluster_ips,
            "may only hold up to 2 values",
        ));
    }
    // The server stops here when an address is wrong, not to skew what
    // follows.
    if invalid_ips {
        return;
    }
    if cluster_ips.len() > 1 {
        // `IsDualStackIPStrings`: one address of each family.
        let v6 = cluster_ips.iter().filter(|ip| is_ipv6(ip)).count();
        if v6 == 0 || v6 == cluster_ips.len() {
            causes.push(invalid_list(
                "spec.clusterIPs",
                &cluster_ips,
                "may specify no more than one IP for each IP family",
            ));
        }
    }
    if !is_headless(spec) && !cluster_ips.is_empty() && !families.is_empty() {
        for (i, ip) in cluster_ips.iter().enumerate().take(families.len()) {
            let wrong = match families[i] {
                "IPv4" => is_ipv6(ip),
                "IPv6" => !is_ipv6(ip),
                _ => false,
            };
            if wrong {
                causes.push(names::invalid(
                    &format!("spec.clusterIPs[{i}]"),
                    ip,
                    format!(
                        "expected an {} value as indicated by `ipFamilies[{i}]`",
                        families[i]
                    ),
                ));
            }
        }
    }
}

/// Whether `value` is an IPv6 address as `netutils.IsIPv6String` has it:
/// an IPv4-mapped IPv6 address is IPv4.
pub(crate) fn is_ipv6(value: &str) -> bool {
    match sloppy_ip(value) {
        Some(IpAddr::V6(address)) => address.to_ipv4_mapped().is_none(),
        _ => false,
    }
}

/// `isHeadlessService`: `clusterIPs` is `["None"]`.
fn is_headless(spec: &Value) -> bool {
    strings(spec.get("clusterIPs")) == ["None"]
}

/// `ExternallyAccessible`: a load balancer, a node port, or a cluster IP
/// with external IPs.
pub(crate) fn externally_accessible(spec: &Value) -> bool {
    match text(spec, "/type") {
        "LoadBalancer" | "NodePort" => true,
        "ClusterIP" => !items(spec.get("externalIPs")).is_empty(),
        _ => false,
    }
}

/// `NeedsHealthCheck`: a load balancer whose external traffic stays
/// local.
pub(crate) fn needs_health_check(spec: &Value) -> bool {
    text(spec, "/type") == "LoadBalancer" && text(spec, "/externalTrafficPolicy") == "Local"
}

/// The topology mode and the deprecated hints annotation agree when both
/// are set.
fn topology_annotations(object: &Value, causes: &mut Vec<Cause>) {
    let annotation = |key: &str| {
        object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(key))
            .and_then(Value::as_str)
    };
    if let (Some(hints), Some(mode)) = (annotation(TOPOLOGY_HINTS), annotation(TOPOLOGY_MODE))
        && hints != mode
    {
        causes.push(names::invalid(
            &format!("metadata.annotations[{TOPOLOGY_MODE}]"),
            mode,
            format!("must match annotations[{TOPOLOGY_HINTS}] when both are specified"),
        ));
    }
}

/// An `ExternalName` Service: no cluster IPs or families, and a name.
fn external_name(spec: &Value, causes: &mut Vec<Cause>) {
    let refused = "may not be set for ExternalName services";
    if !items(spec.get("clusterIPs")).is_empty() {
        causes.push(Cause::forbidden("spec.clusterIPs", refused));
    }
    if !items(spec.get("ipFamilies")).is_empty() {
        causes.push(Cause::forbidden("spec.ipFamilies", refused));
    }
    if present(spec, "ipFamilyPolicy").is_some() {
        causes.push(Cause::forbidden("spec.ipFamilyPolicy", refused));
    }
    // A CNAME may end in a dot, as a fully qualified name.
    let name = text(spec, "/externalName");
    let name = name.strip_suffix('.').unwrap_or(name);
    if name.is_empty() {
        causes.push(Cause::required("spec.externalName", ""));
    } else {
        for problem in names::dns1123_subdomain(name) {
            causes.push(names::invalid("spec.externalName", name, problem));
        }
    }
}

/// `validateServicePort`: the name (required among several, a label,
/// once), number, protocol, target and application protocol.
fn service_port(
    port: &Value,
    require_name: bool,
    names_seen: &mut Vec<String>,
    path: &str,
    causes: &mut Vec<Cause>,
) {
    let name = text(port, "/name");
    let name_at = format!("{path}.name");
    if require_name && name.is_empty() {
        causes.push(Cause::required(&name_at, ""));
    } else if !name.is_empty() {
        for problem in names::dns1123_label(name) {
            causes.push(names::invalid(&name_at, name, problem));
        }
        if names_seen.iter().any(|seen| seen == name) {
            causes.push(Cause::duplicate(&name_at, name));
        } else {
            names_seen.push(name.to_string());
        }
    }
    port_number(number(port, "port"), &format!("{path}.port"), causes);
    one_of(
        text(port, "/protocol"),
        &format!("{path}.protocol"),
        &SUPPORTED_PROTOCOLS,
        Some(""),
        causes,
    );
    let target_at = format!("{path}.targetPort");
    match port.get("targetPort") {
        Some(Value::String(target)) => {
            for problem in port_name_problems(target) {
                causes.push(names::invalid(&target_at, target, problem.into()));
            }
        }
        target => {
            let target = target.and_then(Value::as_i64).unwrap_or(0);
            port_number(target, &target_at, causes);
        }
    }
    if let Some(app_protocol) = present(port, "appProtocol") {
        let app_protocol = app_protocol.as_str().unwrap_or_default();
        for problem in names::qualified_name(app_protocol) {
            causes.push(names::invalid(
                &format!("{path}.appProtocol"),
                app_protocol,
                problem,
            ));
        }
    }
}

/// Session affinity is known; `ClientIP` has a timeout in range, `None`
/// no configuration.
fn session_affinity(spec: &Value, causes: &mut Vec<Cause>) {
    let affinity = text(spec, "/sessionAffinity");
    one_of(
        affinity,
        "spec.sessionAffinity",
        &SUPPORTED_AFFINITIES,
        Some(""),
        causes,
    );
    let config = present(spec, "sessionAffinityConfig");
    let at = "spec.sessionAffinityConfig";
    match affinity {
        // `validateClientIPAffinityConfig`.
        "ClientIP" => {
            let why = "when session affinity type is ClientIP";
            let Some(config) = config else {
                causes.push(Cause::required(at, why));
                return;
            };
            let Some(client_ip) = present(config, "clientIP") else {
                causes.push(Cause::required(&format!("{at}.clientIP"), why));
                return;
            };
            let timeout_at = format!("{at}.clientIP.timeoutSeconds");
            let Some(timeout) = present(client_ip, "timeoutSeconds") else {
                causes.push(Cause::required(&timeout_at, why));
                return;
            };
            let timeout = timeout.as_i64().unwrap_or(0);
            if timeout <= 0 || timeout > MAX_AFFINITY_SECONDS {
                causes.push(Cause::invalid_number(
                    &timeout_at,
                    timeout,
                    &format!("must be greater than 0 and less than {MAX_AFFINITY_SECONDS}"),
                ));
            }
        }
        "None" if config.is_some() => causes.push(Cause::forbidden(
            at,
            "must not be set when session affinity is None",
        )),
        _ => {}
    }
}

/// `ValidateNonSpecialIP` (which `ValidateEndpointIP` is too): not
/// unspecified, loopback or link-local.
pub(super) fn non_special_ip(text: &str, address: IpAddr, at: &str, causes: &mut Vec<Cause>) {
    // Go's `net.IP` checks an IPv4-mapped IPv6 address as IPv4.
    let address = match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    };
    let (unspecified, loopback, link_local, link_local_multicast) = match address {
        IpAddr::V4(v4) => (
            v4.is_unspecified(),
            v4.is_loopback(),
            v4.is_link_local(),
            v4.octets()[..3] == [224, 0, 0],
        ),
        IpAddr::V6(v6) => {
            let segments = v6.segments();
            (
                v6.is_unspecified(),
                v6.is_loopback(),
                segments[0] & 0xffc0 == 0xfe80,
                segments[0] & 0xff0f == 0xff02,
            )
        }
    };
    let mut refuse = |detail: String| causes.push(names::invalid(at, text, detail));
    if unspecified {
        refuse(format!("may not be unspecified ({text})"));
    }
    if loopback {
        refuse("may not be in the loopback range (127.0.0.0/8, ::1/128)".into());
    }
    if link_local {
        refuse("may not be in the link-local range (169.254.0.0/16, fe80::/10)".into());
    }
    if link_local_multicast {
        refuse("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)".into());
    }
}

/// No node port twice for a protocol, and no port twice for a protocol,
/// the latter shown as the server's `core.ServicePort` key.
fn duplicate_ports(ports: &[Value], causes: &mut Vec<Cause>) {
    let mut node_ports = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let node_port = number(port, "nodePort");
        if node_port == 0 {
            continue;
        }
        let key = (text(port, "/protocol"), node_port);
        if node_ports.contains(&key) {
            causes.push(Cause::new(
                &format!("spec.ports[{i}].nodePort"),
                "FieldValueDuplicate",
                format!("Duplicate value: {node_port}"),
            ));
        }
        node_ports.push(key);
    }
    let mut seen = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let key = (text(port, "/protocol"), number(port, "port"));
        if seen.contains(&key) {
            causes.push(Cause::new(
                &format!("spec.ports[{i}]"),
                "FieldValueDuplicate",
                format!(
                    "Duplicate value: core.ServicePort{{Name:\"\", Protocol:{:?}, AppProtocol:(*string)(nil), Port:{}, TargetPort:intstr.IntOrString{{Type:0, IntVal:0, StrVal:\"\"}}, NodePort:0}}",
                    key.0, key.1
                ),
            ));
        }
        seen.push(key);
    }
}

/// Source ranges from the field (the server's path capitalized as it is)
/// or else its annotation: only for a load balancer, each a CIDR once
/// trimmed of spaces.
fn source_ranges(object: &Value, spec: &Value, kind: &str, causes: &mut Vec<Cause>) {
    let ranges = strings(spec.get("loadBalancerSourceRanges"));
    let annotation = object
        .pointer("/metadata/annotations")
        .and_then(|a| a.get(SOURCE_RANGES))
        .and_then(Value::as_str);
    if !ranges.is_empty() {
        let at = "spec.LoadBalancerSourceRanges";
        if kind != "LoadBalancer" {
            causes.push(Cause::forbidden(at, ONLY_LOAD_BALANCER));
        }
        for (i, range) in ranges.iter().enumerate() {
            let range = range.trim();
            if sloppy_cidr(range).is_none() {
                causes.push(names::invalid(
                    &format!("{at}[{i}]"),
                    range,
                    INVALID_CIDR.into(),
                ));
            }
        }
    } else if let Some(value) = annotation {
        let at = format!("metadata.annotations[{SOURCE_RANGES}]");
        if kind != "LoadBalancer" {
            causes.push(Cause::forbidden(&at, ONLY_LOAD_BALANCER));
        }
        let value = value.trim();
        if !value.is_empty() {
            for range in value.split(',').map(str::trim) {
                if sloppy_cidr(range).is_none() {
                    causes.push(names::invalid(&at, range, INVALID_CIDR.into()));
                }
            }
        }
    }
}

/// `validateLoadBalancerClassField` for the new object: a load
/// balancer's class is a qualified name; other types have none.
fn load_balancer_class(spec: &Value, causes: &mut Vec<Cause>) {
    let Some(class) = present(spec, "loadBalancerClass") else {
        return;
    };
    if text(spec, "/type") == "LoadBalancer" {
        let class = class.as_str().unwrap_or_default();
        for problem in names::qualified_name(class) {
            causes.push(names::invalid("spec.loadBalancerClass", class, problem));
        }
    } else {
        causes.push(Cause::forbidden(
            "spec.loadBalancerClass",
            ONLY_LOAD_BALANCER,
        ));
    }
}

/// `validateServiceExternalTrafficPolicy`: a policy exactly for what is
/// reachable from outside, a health check node port exactly for a local
/// load balancer.
fn external_traffic_policy(spec: &Value, causes: &mut Vec<Cause>) {
    let policy = text(spec, "/externalTrafficPolicy");
    let at = "spec.externalTrafficPolicy";
    if !externally_accessible(spec) {
        if !policy.is_empty() {
            causes.push(names::invalid(
                at,
                policy,
                "may only be set for externally-accessible services".into(),
            ));
        }
    } else {
        one_of(policy, at, &SUPPORTED_TRAFFIC_POLICIES, Some(""), causes);
    }
    let health_check = number(spec, "healthCheckNodePort");
    let at = "spec.healthCheckNodePort";
    if !needs_health_check(spec) {
        if health_check != 0 {
            causes.push(Cause::invalid_number(
                at,
                health_check,
                "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
            ));
        }
    } else if health_check == 0 {
        causes.push(Cause::required(at, ""));
    } else {
        port_number(health_check, at, causes);
    }
}

/// `validateServiceInternalTrafficFieldsValue`: required for the types
/// with a cluster IP, and known.
fn internal_traffic_policy(spec: &Value, causes: &mut Vec<Cause>) {
    let at = "spec.internalTrafficPolicy";
    match present(spec, "internalTrafficPolicy") {
        None => {
            if matches!(
                text(spec, "/type"),
                "NodePort" | "LoadBalancer" | "ClusterIP"
            ) {
                causes.push(Cause::required(at, ""));
            }
        }
        Some(policy) => {
            let policy = policy.as_str().unwrap_or_default();
            if !SUPPORTED_TRAFFIC_POLICIES.contains(&policy) {
                causes.push(Cause::not_supported(
                    at,
                    policy,
                    &SUPPORTED_TRAFFIC_POLICIES,
                ));
            }
        }
    }
}

/// `validateUpgradeDowngradeClusterIPs`: the primary cluster IP stays,
/// and a secondary one goes only with a single-stack policy. Nothing to
/// or from `ExternalName`, or headless to headless.
fn cluster_ips_kept(spec: &Value, old_spec: &Value, causes: &mut Vec<Cause>) {
    let external = |s: &Value| text(s, "/type") == "ExternalName";
    if external(spec) || external(old_spec) || (is_headless(spec) && is_headless(old_spec)) {
        return;
    }
    let (now, was) = (
        strings(spec.get("clusterIPs")),
        strings(old_spec.get("clusterIPs")),
    );
    let changed = |at: &str| invalid_list(at, &now, "may not change once set");
    if now.len() == was.len() {
        for (i, before) in was.iter().enumerate() {
            if *before != now[i] {
                causes.push(changed(&format!("spec.clusterIPs[{i}]")));
            }
        }
    } else if was.len() > now.len() {
        if now.is_empty() {
            causes.push(invalid_list(
                "spec.clusterIPs[0]",
                &now,
                "primary clusterIP can not be unset",
            ));
        }
        if !was.is_empty() && !now.is_empty() && now[0] != was[0] {
            causes.push(changed("spec.clusterIPs[0]"));
        }
        if now.len() == 1 {
            single_stack_policy(spec, "clusterIP", causes);
        }
    } else if !was.is_empty() && now[0] != was[0] {
        causes.push(changed("spec.clusterIPs[0]"));
    }
}

/// `validateUpgradeDowngradeIPFamilies`: the primary family stays, and a
/// secondary one goes only with a single-stack policy. Nothing to or from
/// `ExternalName` or headless, or while headless.
fn families_kept(spec: &Value, old_spec: &Value, causes: &mut Vec<Cause>) {
    let external = |s: &Value| text(s, "/type") == "ExternalName";
    if external(spec) || external(old_spec) || is_headless(spec) || is_headless(old_spec) {
        return;
    }
    let (now, was) = (
        strings(spec.get("ipFamilies")),
        strings(old_spec.get("ipFamilies")),
    );
    let cluster_ips = strings(spec.get("clusterIPs"));
    // As the server words it, a changed primary family in a list of
    // another length shows the cluster IPs.
    let changed = || {
        invalid_list(
            "spec.ipFamilies[0]",
            &cluster_ips,
            "may not change once set",
        )
    };
    if now.len() == was.len() {
        for (i, before) in was.iter().enumerate() {
            if *before != now[i] {
                causes.push(Cause::new(
                    "spec.ipFamilies[0]",
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: {}: may not change once set",
                        go_families(&now)
                    ),
                ));
            }
        }
    } else if was.len() > now.len() {
        if cluster_ips.is_empty() {
            causes.push(Cause::new(
                "spec.ipFamilies[0]",
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: primary ipFamily can not be unset",
                    go_families(&now)
                ),
            ));
        }
        if !now.is_empty() && now[0] != was[0] {
            causes.push(changed());
        }
        if now.len() == 1 {
            single_stack_policy(spec, "ipFamily", causes);
        }
    } else if !was.is_empty() && !now.is_empty() && now[0] != was[0] {
        causes.push(changed());
    }
}

/// A downgrade's policy must be `SingleStack`; an unset one is shown as
/// the server shows a nil pointer.
fn single_stack_policy(spec: &Value, released: &str, causes: &mut Vec<Cause>) {
    let policy = present(spec, "ipFamilyPolicy").and_then(Value::as_str);
    if policy != Some("SingleStack") {
        causes.push(names::invalid(
            "spec.ipFamilyPolicy",
            policy.unwrap_or("null"),
            format!("must be set to 'SingleStack' when releasing the secondary {released}"),
        ));
    }
}

/// A list of IP families in Go's `%#v`.
fn go_families(values: &[&str]) -> String {
    go_strings("[]core.IPFamily", values)
}

/// A `*string` field as `field.Invalid` shows it: its value, or `"null"`.
fn go_optional_string(value: Option<&Value>) -> String {
    format!("{:?}", value.and_then(Value::as_str).unwrap_or("null"))
}

/// The field `name` of `value` unless absent or null.
pub(crate) fn present<'v>(value: &'v Value, name: &str) -> Option<&'v Value> {
    value.get(name).filter(|v| !v.is_null())
}

/// An integer field; 0 when absent.
pub(crate) fn number(value: &Value, name: &str) -> i64 {
    value.get(name).and_then(Value::as_i64).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The messages of a Service `object`, defaulted as the server
    /// defaults it before validation.
    fn object_messages(mut object: Value) -> Vec<String> {
        crate::store::defaults::apply("", "Service", &mut object);
        let mut causes = Vec::new();
        validate(&object, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    /// The messages of a Service of `spec`.
    fn messages(spec: Value) -> Vec<String> {
        object_messages(json!({"metadata": {"name": "svc"}, "spec": spec}))
    }

    const WEB: [(&str, i64); 1] = [("web", 80)];

    fn ports(list: &[(&str, i64)]) -> Value {
        list.iter()
            .map(|(name, port)| json!({"name": name, "port": port}))
            .collect()
    }

    #[test]
    fn ports_are_required_unless_headless_or_an_external_name() {
        assert_eq!(messages(json!({})), ["spec.ports: Required value"]);
        let headless = json!({"clusterIP": "None", "clusterIPs": ["None"]});
        assert!(messages(headless).is_empty());
        // Headless is what `clusterIPs` says; the store fills it in from
        // `clusterIP` before validation.
        assert_eq!(
            messages(json!({"clusterIP": "None"})),
            [
                "spec.ports: Required value",
                "spec.clusterIPs: Required value"
            ]
        );
        let external = json!({"type": "ExternalName", "externalName": "db.example.com."});
        assert!(messages(external).is_empty());
    }

    #[test]
    fn an_external_name_is_a_subdomain_without_cluster_ips() {
        assert_eq!(
            messages(json!({"type": "ExternalName"})),
            ["spec.externalName: Required value"]
        );
        assert_eq!(
            messages(json!({"type": "ExternalName", "externalName": ".",
                "clusterIP": "10.96.0.20", "clusterIPs": ["10.96.0.20"],
                "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack"})),
            [
                "spec.clusterIPs: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilies: Forbidden: may not be set for ExternalName services",
                "spec.ipFamilyPolicy: Forbidden: may not be set for ExternalName services",
                "spec.externalName: Required value",
            ]
        );
        assert_eq!(
            messages(json!({"type": "ExternalName", "externalName": "Db_Host.."})),
            [
                "spec.externalName: Invalid value: \"Db_Host.\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
            ]
        );
        // An external name has no internal traffic policy by default.
        assert_eq!(
            messages(
                json!({"type": "ExternalName", "externalName": "db", "internalTrafficPolicy": "Cluster"})
            ),
            Vec::<String>::new()
        );
    }

    #[test]
    fn ports_are_named_among_several_and_numbered_with_known_protocols() {
        let spec = json!({"ports": [
            {"port": 80},
            {"name": "Web", "port": 70000, "protocol": "QUIC", "targetPort": "Http--"},
            {"name": "web", "port": 81, "targetPort": 0, "appProtocol": "-bad"},
            {"name": "web", "port": 82, "targetPort": 65536}
        ]});
        assert_eq!(
            messages(spec),
            [
                "spec.ports[0].name: Required value",
                "spec.ports[1].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "spec.ports[1].port: Invalid value: 70000: must be between 1 and 65535, inclusive",
                "spec.ports[1].protocol: Unsupported value: \"QUIC\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "spec.ports[1].targetPort: Invalid value: \"Http--\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ports[1].targetPort: Invalid value: \"Http--\": must not contain consecutive hyphens",
                "spec.ports[1].targetPort: Invalid value: \"Http--\": must not begin or end with a hyphen",
                // A target of 0 is defaulted to the port.
                "spec.ports[2].appProtocol: Invalid value: \"-bad\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                "spec.ports[3].name: Duplicate value: \"web\"",
                "spec.ports[3].targetPort: Invalid value: 65536: must be between 1 and 65535, inclusive",
            ]
        );
        // One port needs no name; a port without a number has a target of
        // 0 too.
        assert_eq!(
            messages(json!({"ports": [{"protocol": "UDP"}]})),
            [
                "spec.ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ports[0].targetPort: Invalid value: 0: must be between 1 and 65535, inclusive",
            ]
        );
    }

    #[test]
    fn no_port_or_node_port_twice_for_a_protocol() {
        let spec = json!({"type": "NodePort", "ports": [
            {"name": "a", "port": 53, "nodePort": 30053},
            {"name": "b", "port": 53, "protocol": "UDP", "nodePort": 30053},
            {"name": "c", "port": 53, "nodePort": 30053}
        ]});
        assert_eq!(
            messages(spec),
            [
                "spec.ports[2].nodePort: Duplicate value: 30053",
                "spec.ports[2]: Duplicate value: core.ServicePort{Name:\"\", Protocol:\"TCP\", AppProtocol:(*string)(nil), Port:53, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:\"\"}, NodePort:0}",
            ]
        );
        assert_eq!(
            messages(json!({"ports": [{"port": 80, "nodePort": 30080}]})),
            ["spec.ports[0].nodePort: Forbidden: may not be used when `type` is 'ClusterIP'"]
        );
    }

    #[test]
    fn session_affinity_is_known_and_a_client_ip_timeout_within_a_day() {
        let mut service = json!({"spec": {"ports": ports(&WEB), "sessionAffinity": "ClientIP"}});
        crate::store::defaults::apply("", "Service", &mut service);
        assert_eq!(
            service["spec"]["sessionAffinityConfig"],
            json!({"clientIP": {"timeoutSeconds": 10800}})
        );
        assert_eq!(
            messages(json!({"ports": ports(&WEB), "sessionAffinity": "ClientIP",
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 86401}}})),
            [
                "spec.sessionAffinityConfig.clientIP.timeoutSeconds: Invalid value: 86401: must be greater than 0 and less than 86400"
            ]
        );
        assert_eq!(
            messages(json!({"ports": ports(&WEB), "sessionAffinity": "Sticky",
                "sessionAffinityConfig": {"clientIP": {"timeoutSeconds": 5}}})),
            [
                "spec.sessionAffinity: Unsupported value: \"Sticky\": supported values: \"ClientIP\", \"None\""
            ]
        );
    }

    #[test]
    fn cluster_ips_match_the_cluster_ip_and_their_families() {
        let check = |spec: Value| {
            let mut causes = Vec::new();
            cluster_ips_related_fields(&spec, &mut causes);
            causes.iter().map(Cause::message).collect::<Vec<_>>()
        };
        assert_eq!(
            check(json!({"clusterIP": "10.96.0.5", "clusterIPs": ["10.96.0.6"]})),
            [
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.6\"}: first value must match `clusterIP`"
            ]
        );
        assert_eq!(
            check(
                json!({"clusterIPs": ["10.96.0.6"], "ipFamilies": ["IPv5", "IPv5"],
                "ipFamilyPolicy": "DualStack"})
            ),
            [
                "spec.clusterIPs: Invalid value: []string{\"10.96.0.6\"}: must be empty when `clusterIP` is not specified",
                "spec.ipFamilies[0]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"",
                "spec.ipFamilies[1]: Unsupported value: \"IPv5\": supported values: \"IPv4\", \"IPv6\"",
                "spec.ipFamilies[1]: Duplicate value: \"IPv5\"",
                "spec.ipFamilyPolicy: Unsupported value: \"DualStack\": supported values: \"PreferDualStack\", \"RequireDualStack\", \"SingleStack\"",
            ]
        );
        // An invalid address stops the checks that follow.
        assert_eq!(
            check(json!({"clusterIP": "None", "clusterIPs": ["None", "10.96.0.300", "10.96.0.7"]})),
            [
                "spec.clusterIPs: Invalid value: []string{\"None\", \"10.96.0.300\", \"10.96.0.7\"}: 'None' must be the first and only value",
                "spec.clusterIPs[1]: Invalid value: \"10.96.0.300\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "spec.clusterIPs: Invalid value: []string{\"None\", \"10.96.0.300\", \"10.96.0.7\"}: may only hold up to 2 values",
            ]
        );
        // Leading zeros are read as decimal, as v1.33's legacy parser
        // reads them; an IPv4-mapped address is IPv4.
        assert_eq!(
            check(
                json!({"clusterIP": "010.96.0.7", "clusterIPs": ["010.96.0.7", "::ffff:10.96.0.8"]})
            ),
            [
                "spec.clusterIPs: Invalid value: []string{\"010.96.0.7\", \"::ffff:10.96.0.8\"}: may specify no more than one IP for each IP family"
            ]
        );
        assert_eq!(
            check(
                json!({"clusterIP": "fd00::7", "clusterIPs": ["fd00::7", "10.96.0.8"],
                "ipFamilies": ["IPv4", "IPv6"]})
            ),
            [
                "spec.clusterIPs[0]: Invalid value: \"fd00::7\": expected an IPv4 value as indicated by `ipFamilies[0]`",
                "spec.clusterIPs[1]: Invalid value: \"10.96.0.8\": expected an IPv6 value as indicated by `ipFamilies[1]`",
            ]
        );
        assert!(check(json!({"type": "ExternalName", "clusterIPs": ["x"]})).is_empty());
    }

    #[test]
    fn external_ips_are_addresses_that_are_not_special() {
        let spec = json!({"ports": ports(&WEB), "externalIPs": [
            "203.0.113.7", "0.0.0.0", "127.0.0.1", "169.254.1.1", "224.0.0.5",
            "::ffff:127.0.0.1", "fe80::1", "ff02::1", "example.com"
        ]});
        assert_eq!(
            messages(spec),
            [
                "spec.externalIPs[1]: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                "spec.externalIPs[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "spec.externalIPs[3]: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "spec.externalIPs[4]: Invalid value: \"224.0.0.5\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                "spec.externalIPs[5]: Invalid value: \"::ffff:127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "spec.externalIPs[6]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "spec.externalIPs[7]: Invalid value: \"ff02::1\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
                "spec.externalIPs[8]: Invalid value: \"example.com\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
            ]
        );
        // External IPs make a ClusterIP Service reachable from outside: it
        // gets an external traffic policy.
        let mut service = json!({"spec": {"ports": ports(&WEB), "externalIPs": ["203.0.113.7"]}});
        crate::store::defaults::apply("", "Service", &mut service);
        assert_eq!(service["spec"]["externalTrafficPolicy"], "Cluster");
    }

    #[test]
    fn the_type_is_known_and_node_ports_and_load_balancers_are_not_headless() {
        assert_eq!(
            messages(json!({"type": "Ingress", "ports": ports(&WEB)})),
            [
                "spec.type: Unsupported value: \"Ingress\": supported values: \"ClusterIP\", \"ExternalName\", \"LoadBalancer\", \"NodePort\""
            ]
        );
        assert_eq!(
            messages(
                json!({"type": "NodePort", "clusterIP": "None", "clusterIPs": ["None"], "ports": ports(&WEB)})
            ),
            [
                "spec.clusterIPs[0]: Invalid value: \"None\": may not be set to 'None' for NodePort services"
            ]
        );
    }

    #[test]
    fn source_ranges_belong_to_load_balancers_and_are_cidrs() {
        assert_eq!(
            messages(json!({"ports": ports(&WEB),
                "loadBalancerSourceRanges": [" 10.0.0.0/8 ", "10.0.0.1", "10.0.0.0/33"]})),
            [
                "spec.LoadBalancerSourceRanges: Forbidden: may only be used when `type` is 'LoadBalancer'",
                "spec.LoadBalancerSourceRanges[1]: Invalid value: \"10.0.0.1\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.LoadBalancerSourceRanges[2]: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
            ]
        );
        let service = json!({
            "metadata": {"annotations": {SOURCE_RANGES: " 192.168.0.0/16, nope "}},
            "spec": {"type": "LoadBalancer", "ports": ports(&WEB)},
        });
        assert_eq!(
            object_messages(service),
            [
                "metadata.annotations[service.beta.kubernetes.io/load-balancer-source-ranges]: Invalid value: \"nope\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"
            ]
        );
    }

    #[test]
    fn load_balancer_fields_and_traffic_policies_fit_the_type() {
        let mut service = json!({"spec": {"type": "LoadBalancer", "ports": ports(&WEB)}});
        crate::store::defaults::apply("", "Service", &mut service);
        assert_eq!(service["spec"]["allocateLoadBalancerNodePorts"], true);
        assert_eq!(service["spec"]["externalTrafficPolicy"], "Cluster");
        assert_eq!(service["spec"]["internalTrafficPolicy"], "Cluster");
        assert_eq!(
            messages(
                json!({"ports": ports(&WEB), "allocateLoadBalancerNodePorts": false,
                "loadBalancerClass": "example.com/lb", "externalTrafficPolicy": "Local",
                "healthCheckNodePort": 30001, "internalTrafficPolicy": "Node",
                "trafficDistribution": "PreferSameZone"})
            ),
            [
                "spec.allocateLoadBalancerNodePorts: Forbidden: may only be used when `type` is 'LoadBalancer'",
                "spec.loadBalancerClass: Forbidden: may only be used when `type` is 'LoadBalancer'",
                "spec.externalTrafficPolicy: Invalid value: \"Local\": may only be set for externally-accessible services",
                "spec.healthCheckNodePort: Invalid value: 30001: may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
                "spec.internalTrafficPolicy: Unsupported value: \"Node\": supported values: \"Cluster\", \"Local\"",
                "spec.trafficDistribution: Unsupported value: \"PreferSameZone\": supported values: \"PreferClose\"",
            ]
        );
        assert_eq!(
            messages(json!({"type": "LoadBalancer", "ports": ports(&WEB),
                "loadBalancerClass": "example.com/", "externalTrafficPolicy": "Local"})),
            [
                "spec.loadBalancerClass: Invalid value: \"example.com/\": name part must be non-empty",
                "spec.loadBalancerClass: Invalid value: \"example.com/\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
                // The registry allocates it before validation.
                "spec.healthCheckNodePort: Required value",
            ]
        );
        assert_eq!(
            messages(json!({"type": "NodePort", "ports": ports(&WEB),
                "externalTrafficPolicy": "Everywhere"})),
            [
                "spec.externalTrafficPolicy: Unsupported value: \"Everywhere\": supported values: \"Cluster\", \"Local\""
            ]
        );
    }

    #[test]
    fn the_topology_annotations_agree() {
        let service = json!({
            "metadata": {"annotations": {TOPOLOGY_HINTS: "Auto", TOPOLOGY_MODE: "auto"}},
            "spec": {"ports": ports(&WEB)},
        });
        assert_eq!(
            object_messages(service),
            [
                "metadata.annotations[service.kubernetes.io/topology-mode]: Invalid value: \"auto\": must match annotations[service.kubernetes.io/topology-aware-hints] when both are specified"
            ]
        );
    }

    /// The causes come in `ValidateService`'s order, whatever the order of
    /// the fields.
    #[test]
    fn causes_come_in_the_servers_order() {
        let spec = json!({
            "trafficDistribution": "Anywhere",
            "internalTrafficPolicy": "Node",
            "loadBalancerSourceRanges": ["x"],
            "type": "Ingress",
            "externalIPs": ["127.0.0.1"],
            "sessionAffinity": "Sticky",
            "selector": {"app": "a b"},
            "ports": [{"port": 0}],
        });
        let found = messages(spec);
        let fields = crate::store::validation::fields_of(&found);
        assert_eq!(
            fields,
            [
                "spec.ports[0].port",
                "spec.ports[0].targetPort",
                "spec.selector",
                "spec.sessionAffinity",
                "spec.externalIPs[0]",
                "spec.type",
                "spec.LoadBalancerSourceRanges",
                "spec.LoadBalancerSourceRanges[0]",
                "spec.internalTrafficPolicy",
                "spec.trafficDistribution",
            ]
        );
    }

    fn update_messages(new: Value, old: Value) -> Vec<String> {
        let mut causes = Vec::new();
        update(&new, &old, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn an_update_keeps_cluster_ips_families_class_and_health_check_port() {
        let old = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.11",
            "clusterIPs": ["10.96.0.11"], "ipFamilies": ["IPv4"]}});
        let moved = json!({"spec": {"type": "ClusterIP", "clusterIP": "10.96.0.99",
            "clusterIPs": ["10.96.0.99"], "ipFamilies": ["IPv6"]}});
        assert_eq!(
            update_messages(moved, old.clone()),
            [
                "spec.clusterIPs[0]: Invalid value: []string{\"10.96.0.99\"}: may not change once set",
                "spec.ipFamilies[0]: Invalid value: []core.IPFamily{\"IPv6\"}: may not change once set",
            ]
        );
        let headless = json!({"spec": {"clusterIP": "None", "clusterIPs": ["None"]}});
        assert_eq!(update_messages(headless.clone(), old.clone()).len(), 1);
        assert!(update_messages(headless.clone(), headless).is_empty());
        let external = json!({"spec": {"type": "ExternalName", "externalName": "example.com"}});
        assert!(update_messages(external, old.clone()).is_empty());
        assert!(update_messages(old.clone(), old).is_empty());

        let balancer = |class: Option<&str>, health_check: i64| {
            json!({"spec": {"type": "LoadBalancer", "loadBalancerClass": class,
                "externalTrafficPolicy": "Local", "healthCheckNodePort": health_check}})
        };
        assert_eq!(
            update_messages(
                balancer(None, 30002),
                balancer(Some("example.com/lb"), 30001)
            ),
            [
                "spec.loadBalancerClass: Invalid value: \"null\": may not change once set",
                "spec.healthCheckNodePort: Forbidden: field is immutable",
            ]
        );
        // The new class's format is checked here, and again with the rest.
        assert_eq!(
            update_messages(balancer(Some("-x"), 30001), balancer(Some("-x"), 30001)).len(),
            1
        );
    }

    #[test]
    fn a_released_secondary_cluster_ip_needs_a_single_stack_policy() {
        let old = json!({"spec": {"clusterIP": "10.96.0.11",
            "clusterIPs": ["10.96.0.11", "fd00::11"], "ipFamilies": ["IPv4", "IPv6"],
            "ipFamilyPolicy": "PreferDualStack"}});
        let new = json!({"spec": {"clusterIP": "10.96.0.11", "clusterIPs": ["10.96.0.11"],
            "ipFamilies": ["IPv4"], "ipFamilyPolicy": "PreferDualStack"}});
        assert_eq!(
            update_messages(new, old),
            [
                "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary clusterIP",
                "spec.ipFamilyPolicy: Invalid value: \"PreferDualStack\": must be set to 'SingleStack' when releasing the secondary ipFamily",
            ]
        );
    }
}
