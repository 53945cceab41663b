//! The validation of Endpoints, EndpointSlices, Ingresses, IngressClasses
//! and NetworkPolicies, as kube-apiserver v1.33's `pkg/apis/core/validation`,
//! `pkg/apis/discovery/validation` and `pkg/apis/networking/validation`
//! word it, each kind's causes in its upstream order.
//!
//! An Ingress (`ValidateIngressCreate`, `ValidateIngressUpdate`): rules or
//! a default backend; each rule's host a DNS subdomain, or a wildcard one,
//! not an IP address; each HTTP path with a path type (`Exact` and `Prefix`
//! an absolute path without `//`, `/./`, `/../`, `%2f`, or a `/.` or `/..`
//! ending; `ImplementationSpecific` an absolute path or none) and a
//! backend that is a resource (kind and name path segments) or a service
//! (a DNS-1035 label, a port name or number, not both); TLS hosts and
//! secret names; the class name a subdomain; on create, no class
//! annotation beside the class field. An update keeps accepting the
//! invalid secret names and wildcard-host rules its old object had.
//!
//! An IngressClass (`ValidateIngressClass`, `ValidateIngressClassUpdate`):
//! a controller that is a domain-prefixed path of at most 250 bytes and,
//! on update, unchanged (checked first); parameters with a kind, a name
//! and a scope (`Namespace` with a namespace, `Cluster` without).
//!
//! A NetworkPolicy (`ValidateNetworkPolicySpec`): its pod selector; each
//! ingress and egress rule's ports (protocol, port number or name,
//! `endPort` only after a numeric port) and peers (a selector or an
//! `ipBlock`, not both, its CIDR and its exceptions strictly inside it);
//! at most two known policy types. An update whose old pod selector was
//! invalid lets selector values stay invalid.
//!
//! An EndpointSlice (`ValidateEndpointSlice`): an address type; at most
//! 1000 endpoints, each with 1 to 100 addresses of that type (IP addresses
//! as v1.33's legacy parser reads them, none unspecified, loopback or
//! link-local; FQDNs), node name, topology labels, hostname and zone
//! hints; ports named apart with a protocol and application protocol; on
//! update, the address type unchanged (checked last).
//!
//! Endpoints (`ValidateEndpoints`): each subset has addresses, each
//! address an IP (as for an EndpointSlice, the special ranges checked only
//! once the rest of the address is valid), hostname and node name; each
//! port named when there are several, numbered, with a protocol.
//!
//! Not checked: the rules v1.33 leaves behind feature gates that are off
//! (`StrictIPCIDRValidation`, an EndpointSlice's node hints), and an
//! Ingress's status.

use std::net::IpAddr;
use std::sync::LazyLock;

use regex::Regex;
use serde_json::Value;

use super::super::ip;
use super::service::non_special_ip;
use super::{
    Cause, go_strings, invalid_unnamed, items, label_selector, names, port_name_problems,
    port_number, present, sloppy_ip, strings, text,
};

const INVALID_IP: &str = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)";
const INVALID_CIDR: &str = "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)";
const PROTOCOLS: [&str; 3] = ["SCTP", "TCP", "UDP"];
const INGRESS_CLASS_ANNOTATION: &str = "kubernetes.io/ingress.class";
const MAX_CONTROLLER: usize = 250;
const MAX_ENDPOINTS: usize = 1000;
const MAX_ADDRESSES: usize = 100;
const MAX_TOPOLOGY_LABELS: usize = 16;
const MAX_ZONE_HINTS: usize = 8;
const MAX_PORTS: usize = 20000;
const ZONE_LABEL: &str = "topology.kubernetes.io/zone";
const DNS1123_SUBDOMAIN: &str = "[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*";
const HTTP_PATH: &str = "[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+";

static WILDCARD_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^\\*\\.{DNS1123_SUBDOMAIN}$")).expect("a valid pattern"));
static HTTP_PATH_RE: LazyLock<Regex> =
    LazyLock::new(|| Regex::new(&format!("^{HTTP_PATH}$")).expect("a valid pattern"));

/// The causes of `object`, an Endpoints, EndpointSlice, Ingress,
/// IngressClass or NetworkPolicy, created (`old` none) or updated from
/// `old`, each kind's in its upstream order.
pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    match kind {
        "Ingress" => ingress(object, old, causes),
        "IngressClass" => ingress_class(object, old, causes),
        "NetworkPolicy" => network_policy(object, old, causes),
        "EndpointSlice" => endpoint_slice(object, old, causes),
        "Endpoints" => endpoints(object, causes),
        _ => {}
    }
}

/// `field.TooMany(field, actual, max)`.
fn too_many(field: &str, actual: usize, max: usize) -> Cause {
    Cause::new(
        field,
        "FieldValueTooMany",
        format!("Too many: {actual}: must have at most {max} items"),
    )
}

/// Each of `problems` as `field.Invalid(field, value, problem)`.
fn invalid_each(field: &str, value: &str, problems: Vec<String>, causes: &mut Vec<Cause>) {
    for problem in problems {
        causes.push(names::invalid(field, value, problem));
    }
}

/// apimachinery's `RegexError`: the message, examples and pattern.
fn regex_error(message: &str, pattern: &str, examples: &[&str]) -> String {
    if examples.is_empty() {
        return format!("{message} (regex used for validation is '{pattern}')");
    }
    let examples: Vec<String> = examples.iter().map(|e| format!("'{e}', ")).collect();
    format!(
        "{message} (e.g. {}regex used for validation is '{pattern}')",
        examples.join(" or ")
    )
}

/// `IsWildcardDNS1123Subdomain`: `*.` and a subdomain.
fn wildcard_subdomain(value: &str) -> Vec<String> {
    let mut problems = Vec::new();
    if value.len() > 253 {
        problems.push("must be no more than 253 characters".to_string());
    }
    if !WILDCARD_RE.is_match(value) {
        problems.push(regex_error(
            "a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character",
            &format!("\\*\\.{DNS1123_SUBDOMAIN}"),
            &["*.example.com"],
        ));
    }
    problems
}

/// A host of an Ingress's rule or TLS entry: a wildcard subdomain when it
/// holds `*`, else a subdomain. Whether it was a wildcard.
fn host(value: &str, field: &str, causes: &mut Vec<Cause>) -> bool {
    if value.contains('*') {
        invalid_each(field, value, wildcard_subdomain(value), causes);
        true
    } else {
        invalid_each(field, value, names::dns1123_subdomain(value), causes);
        false
    }
}

/// The `kind` and `name` of a typed reference at `path`: required, each a
/// path segment.
fn kind_and_name(reference: &Value, path: &str, causes: &mut Vec<Cause>) {
    for field in ["kind", "name"] {
        let at = format!("{path}.{field}");
        match text(reference, &format!("/{field}")) {
            "" => causes.push(Cause::required(&at, "")),
            value => invalid_each(&at, value, names::path_segment(value), causes),
        }
    }
}

/// A reference's optional `apiGroup`: a subdomain when set.
fn api_group(reference: &Value, path: &str, causes: &mut Vec<Cause>) {
    if let Some(group) = present(reference, "apiGroup") {
        let group = group.as_str().unwrap_or_default();
        invalid_each(
            &format!("{path}.apiGroup"),
            group,
            names::dns1123_subdomain(group),
            causes,
        );
    }
}

// Ingresses.

/// `ValidateIngressCreate` (`old` none) or `ValidateIngressUpdate`.
fn ingress(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let old_spec = old.map(|o| o.get("spec").unwrap_or(&Value::Null));
    // What an update lets stay as its old object had it.
    let allow_invalid_secret = old_spec.is_some_and(|s| {
        items(s.get("tls")).iter().any(|tls| {
            let name = text(tls, "/secretName");
            !name.is_empty() && !names::dns1123_subdomain(name).is_empty()
        })
    });
    let allow_invalid_wildcard_rule = old_spec.is_some_and(|s| {
        items(s.get("rules")).iter().any(|rule| {
            let mut found = Vec::new();
            rule_value(rule, "", &mut found);
            text(rule, "/host").contains('*') && !found.is_empty()
        })
    });
    let rules = items(spec.get("rules"));
    let default_backend = present(spec, "defaultBackend");
    if rules.is_empty() && default_backend.is_none() {
        let shown = match present(spec, "rules") {
            None => "[]networking.IngressRule(nil)",
            Some(_) => "[]networking.IngressRule{}",
        };
        causes.push(Cause::new(
            "spec",
            "FieldValueInvalid",
            format!("Invalid value: {shown}: either `defaultBackend` or `rules` must be specified"),
        ));
    }
    if let Some(backend) = default_backend {
        ingress_backend(backend, "spec.defaultBackend", causes);
    }
    for (i, rule) in rules.iter().enumerate() {
        let at = format!("spec.rules[{i}]");
        let name = text(rule, "/host");
        let mut wildcard = false;
        if !name.is_empty() {
            let host_at = format!("{at}.host");
            if sloppy_ip(name).is_some() {
                causes.push(names::invalid(
                    &host_at,
                    name,
                    "must be a DNS name, not an IP address".into(),
                ));
            }
            wildcard = host(name, &host_at, causes);
        }
        if !wildcard || !allow_invalid_wildcard_rule {
            rule_value(rule, &at, causes);
        }
    }
    for (t, tls) in items(spec.get("tls")).iter().enumerate() {
        for (i, name) in strings(tls.get("hosts")).into_iter().enumerate() {
            host(name, &format!("spec.tls[{t}].hosts[{i}]"), causes);
        }
        let secret = text(tls, "/secretName");
        if !allow_invalid_secret && !secret.is_empty() {
            invalid_each(
                &format!("spec.tls[{t}].secretName"),
                secret,
                names::dns1123_subdomain(secret),
                causes,
            );
        }
    }
    if let Some(class) = present(spec, "ingressClassName") {
        let class = class.as_str().unwrap_or_default();
        invalid_each(
            "spec.ingressClassName",
            class,
            names::dns1123_subdomain(class),
            causes,
        );
    }
    if old.is_none() && present(spec, "ingressClassName").is_some() {
        let annotation = object
            .pointer("/metadata/annotations")
            .and_then(|a| a.get(INGRESS_CLASS_ANNOTATION))
            .and_then(Value::as_str);
        if let Some(value) = annotation {
            causes.push(names::invalid(
                &format!("annotations.{INGRESS_CLASS_ANNOTATION}"),
                value,
                "can not be set when the class field is also set".into(),
            ));
        }
    }
}

/// `validateIngressRuleValue`: a rule's HTTP paths at `path`.
fn rule_value(rule: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(http) = present(rule, "http") else {
        return;
    };
    let paths = items(http.get("paths"));
    if paths.is_empty() {
        causes.push(Cause::required(&format!("{path}.http.paths"), ""));
    }
    for (i, entry) in paths.iter().enumerate() {
        http_path(entry, &format!("{path}.http.paths[{i}]"), causes);
    }
}

/// `validateHTTPIngressPath`: a path type, the path it allows, the backend.
fn http_path(entry: &Value, at: &str, causes: &mut Vec<Cause>) {
    let Some(path_type) = present(entry, "pathType") else {
        causes.push(Cause::required(
            &format!("{at}.pathType"),
            "pathType must be specified",
        ));
        return;
    };
    let path = text(entry, "/path");
    let path_at = format!("{at}.path");
    let absolute = |causes: &mut Vec<Cause>| {
        if !path.starts_with('/') {
            causes.push(names::invalid(
                &path_at,
                path,
                "must be an absolute path".into(),
            ));
        }
    };
    match path_type.as_str().unwrap_or_default() {
        "Exact" | "Prefix" => {
            absolute(causes);
            if !path.is_empty() {
                for sequence in ["//", "/./", "/../", "%2f", "%2F"] {
                    if path.contains(sequence) {
                        causes.push(names::invalid(
                            &path_at,
                            path,
                            format!("must not contain '{sequence}'"),
                        ));
                    }
                }
                for suffix in ["/..", "/."] {
                    if path.ends_with(suffix) {
                        causes.push(names::invalid(
                            &path_at,
                            path,
                            format!("cannot end with '{suffix}'"),
                        ));
                    }
                }
            }
        }
        "ImplementationSpecific" => {
            if !path.is_empty() {
                absolute(causes);
            }
        }
        other => causes.push(Cause::not_supported(
            &format!("{at}.pathType"),
            other,
            &["Exact", "ImplementationSpecific", "Prefix"],
        )),
    }
    ingress_backend(
        entry.get("backend").unwrap_or(&Value::Null),
        &format!("{at}.backend"),
        causes,
    );
}

/// `validateIngressBackend`: a resource or a service (named with a
/// DNS-1035 label, its port by name or number), not both.
fn ingress_backend(backend: &Value, at: &str, causes: &mut Vec<Cause>) {
    match (present(backend, "resource"), present(backend, "service")) {
        (Some(_), Some(_)) => causes.push(invalid_unnamed(
            at,
            "cannot set both resource and service backends",
        )),
        (Some(resource), None) => {
            let path = format!("{at}.resource");
            api_group(resource, &path, causes);
            kind_and_name(resource, &path, causes);
        }
        (None, Some(service)) => {
            let name = text(service, "/name");
            let name_at = format!("{at}.service.name");
            if name.is_empty() {
                causes.push(Cause::required(&name_at, ""));
            } else {
                invalid_each(&name_at, name, names::dns1035_label(name), causes);
            }
            let port_name = text(service, "/port/name");
            let port = service
                .pointer("/port/number")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            match (port_name.is_empty(), port == 0) {
                (false, false) => causes.push(invalid_unnamed(
                    at,
                    "cannot set both port name & port number",
                )),
                (false, true) => {
                    for problem in port_name_problems(port_name) {
                        causes.push(names::invalid(
                            &format!("{at}.service.port.name"),
                            port_name,
                            problem.into(),
                        ));
                    }
                }
                (true, false) => port_number(port, &format!("{at}.service.port.number"), causes),
                (true, true) => causes.push(Cause::required(at, "port name or number is required")),
            }
        }
        (None, None) => causes.push(invalid_unnamed(
            at,
            "resource or service backend is required",
        )),
    }
}

// IngressClasses.

/// `ValidateIngressClass`, after `validateIngressClassSpecUpdate` on an
/// update.
fn ingress_class(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let controller = text(object, "/spec/controller");
    if let Some(old) = old
        && text(old, "/spec/controller") != controller
    {
        causes.push(names::invalid(
            "spec.controller",
            controller,
            "field is immutable".into(),
        ));
    }
    let at = "spec.controller";
    if controller.is_empty() {
        causes.push(Cause::required(at, ""));
    } else {
        if controller.len() > MAX_CONTROLLER {
            causes.push(Cause::too_long(at, MAX_CONTROLLER));
        }
        domain_prefixed_path(controller, at, causes);
    }
    let Some(parameters) = object.pointer("/spec/parameters").filter(|p| !p.is_null()) else {
        return;
    };
    let path = "spec.parameters";
    api_group(parameters, path, causes);
    kind_and_name(parameters, path, causes);
    let Some(scope) = present(parameters, "scope") else {
        causes.push(Cause::required(&format!("{path}.scope"), ""));
        return;
    };
    let namespace = present(parameters, "namespace");
    let namespace_at = format!("{path}.namespace");
    match scope.as_str().unwrap_or_default() {
        "Namespace" => match namespace {
            None => causes.push(Cause::required(
                &namespace_at,
                "`parameters.scope` is set to 'Namespace'",
            )),
            Some(namespace) => {
                let namespace = namespace.as_str().unwrap_or_default();
                invalid_each(
                    &namespace_at,
                    namespace,
                    names::dns1123_label(namespace),
                    causes,
                );
            }
        },
        "Cluster" => {
            if namespace.is_some() {
                causes.push(Cause::forbidden(
                    &namespace_at,
                    "`parameters.scope` is set to 'Cluster'",
                ));
            }
        }
        other => causes.push(Cause::not_supported(
            &format!("{path}.scope"),
            other,
            &["Cluster", "Namespace"],
        )),
    }
}

/// `IsDomainPrefixedPath` of a non-empty value: `host/path`, the host a
/// subdomain, the path of URL path characters.
fn domain_prefixed_path(value: &str, at: &str, causes: &mut Vec<Cause>) {
    let Some((host, path)) = value
        .split_once('/')
        .filter(|(host, path)| !host.is_empty() && !path.is_empty())
    else {
        causes.push(names::invalid(
            at,
            value,
            "must be a domain-prefixed path (such as \"acme.io/foo\")".into(),
        ));
        return;
    };
    invalid_each(at, host, names::dns1123_subdomain(host), causes);
    if !HTTP_PATH_RE.is_match(path) {
        causes.push(names::invalid(
            at,
            path,
            regex_error("must be a valid path", HTTP_PATH, &[]),
        ));
    }
}

// NetworkPolicies.

/// `ValidateNetworkPolicySpec`, with the options `ValidationOptionsForNetworking`
/// takes from `old`.
fn network_policy(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let allow_invalid_values = old.is_some_and(|old| {
        let mut found = Vec::new();
        selector(
            old.pointer("/spec/podSelector").unwrap_or(&Value::Null),
            "",
            false,
            &mut found,
        );
        !found.is_empty()
    });
    selector(
        spec.get("podSelector").unwrap_or(&Value::Null),
        "spec.podSelector",
        allow_invalid_values,
        causes,
    );
    for (direction, peers) in [("ingress", "from"), ("egress", "to")] {
        for (i, rule) in items(spec.get(direction)).iter().enumerate() {
            let at = format!("spec.{direction}[{i}]");
            for (j, port) in items(rule.get("ports")).iter().enumerate() {
                policy_port(port, &format!("{at}.ports[{j}]"), causes);
            }
            for (j, peer) in items(rule.get(peers)).iter().enumerate() {
                policy_peer(
                    peer,
                    &format!("{at}.{peers}[{j}]"),
                    allow_invalid_values,
                    causes,
                );
            }
        }
    }
    let types = strings(spec.get("policyTypes"));
    if types.len() > 2 {
        causes.push(Cause::new(
            "spec.policyTypes",
            "FieldValueInvalid",
            format!(
                "Invalid value: {}: may not specify more than two policyTypes",
                go_strings("[]networking.PolicyType", &types)
            ),
        ));
        return;
    }
    for (i, kind) in types.into_iter().enumerate() {
        if kind != "Ingress" && kind != "Egress" {
            causes.push(Cause::not_supported(
                &format!("spec.policyTypes[{i}]"),
                kind,
                &["Ingress", "Egress"],
            ));
        }
    }
}

/// `ValidateLabelSelector`, its requirements' values unchecked when
/// `allow_invalid_values`.
fn selector(selector: &Value, path: &str, allow_invalid_values: bool, causes: &mut Vec<Cause>) {
    if !allow_invalid_values {
        label_selector::label_selector(selector, path, causes);
        return;
    }
    label_selector::labels(
        selector.get("matchLabels"),
        &format!("{path}.matchLabels"),
        causes,
    );
    for (i, requirement) in items(selector.get("matchExpressions")).iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        label_selector::operator_and_key(requirement, &at, false, causes);
    }
}

/// `ValidateNetworkPolicyPort`: a known protocol, a port number or name,
/// an end port only after a port number, and not before it.
fn policy_port(port: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(protocol) = present(port, "protocol") {
        let protocol = protocol.as_str().unwrap_or_default();
        if !PROTOCOLS.contains(&protocol) {
            causes.push(Cause::not_supported(
                &format!("{at}.protocol"),
                protocol,
                &["TCP", "UDP", "SCTP"],
            ));
        }
    }
    let end = present(port, "endPort").map(|e| e.as_i64().unwrap_or(0));
    let end_at = format!("{at}.endPort");
    let port_at = format!("{at}.port");
    match present(port, "port") {
        Some(Value::String(name)) => {
            if let Some(end) = end {
                causes.push(Cause::invalid_number(
                    &end_at,
                    end,
                    "may not be specified when `port` is non-numeric",
                ));
            }
            for problem in port_name_problems(name) {
                causes.push(names::invalid(&port_at, name, problem.into()));
            }
        }
        Some(number) => {
            let number = number.as_i64().unwrap_or(0);
            port_number(number, &port_at, causes);
            if let Some(end) = end {
                if end < number {
                    causes.push(Cause::invalid_number(
                        &end_at,
                        end,
                        "must be greater than or equal to `port`",
                    ));
                }
                port_number(end, &end_at, causes);
            }
        }
        None => {
            if let Some(end) = end {
                causes.push(Cause::invalid_number(
                    &end_at,
                    end,
                    "may not be specified when `port` is not specified",
                ));
            }
        }
    }
}

/// `ValidateNetworkPolicyPeer`: a pod or namespace selector, or an IP
/// block alone.
fn policy_peer(peer: &Value, at: &str, allow_invalid_values: bool, causes: &mut Vec<Cause>) {
    let mut count = 0;
    for field in ["podSelector", "namespaceSelector"] {
        if let Some(found) = present(peer, field) {
            count += 1;
            selector(
                found,
                &format!("{at}.{field}"),
                allow_invalid_values,
                causes,
            );
        }
    }
    let block = present(peer, "ipBlock");
    if let Some(block) = block {
        count += 1;
        ip_block(block, &format!("{at}.ipBlock"), causes);
    }
    if count == 0 {
        causes.push(Cause::required(at, "must specify a peer"));
    } else if count > 1 && block.is_some() {
        causes.push(Cause::forbidden(
            at,
            "may not specify both ipBlock and another peer",
        ));
    }
}

/// `ValidateIPBlock`: a CIDR, and exceptions that are CIDRs strictly
/// inside it.
fn ip_block(block: &Value, at: &str, causes: &mut Vec<Cause>) {
    let cidr = text(block, "/cidr");
    let cidr_at = format!("{at}.cidr");
    if cidr.is_empty() {
        causes.push(Cause::required(&cidr_at, ""));
        return;
    }
    let Some(network) = sloppy_cidr(cidr) else {
        causes.push(names::invalid(&cidr_at, cidr, INVALID_CIDR.into()));
        return;
    };
    for (i, except) in strings(block.get("except")).into_iter().enumerate() {
        let except_at = format!("{at}.except[{i}]");
        let Some(inner) = sloppy_cidr(except) else {
            causes.push(names::invalid(&except_at, except, INVALID_CIDR.into()));
            continue;
        };
        if !network.contains(inner.address) || network.length >= inner.length {
            causes.push(names::invalid(
                &except_at,
                except,
                "must be a strict subset of `cidr`".into(),
            ));
        }
    }
}

/// A network as `netutils.ParseCIDRSloppy` reads it: its masked address
/// and prefix length.
struct Network {
    address: IpAddr,
    length: u32,
}

impl Network {
    /// Whether `address` is inside, as Go's `IPNet.Contains` has it (an
    /// address of the other family is not).
    fn contains(&self, address: IpAddr) -> bool {
        match (self.address, address) {
            (IpAddr::V4(net), IpAddr::V4(ip)) => {
                masked(u32::from(ip).into(), self.length, 32) == u128::from(u32::from(net))
            }
            (IpAddr::V6(net), IpAddr::V6(ip)) => {
                masked(u128::from(ip), self.length, 128) == u128::from(net)
            }
            _ => false,
        }
    }
}

/// `value`'s first `length` of `bits` bits.
fn masked(value: u128, length: u32, bits: u32) -> u128 {
    if length == 0 {
        return 0;
    }
    let keep = (u128::MAX >> (128 - bits)) & !((1u128 << (bits - length)) - 1);
    value & keep
}

/// `netutils.ParseCIDRSloppy`'s network: the address masked to its prefix.
fn sloppy_cidr(value: &str) -> Option<Network> {
    let (address, length) = ip::sloppy_cidr(value)?;
    let address = match address {
        IpAddr::V4(v4) => IpAddr::V4((masked(u32::from(v4).into(), length, 32) as u32).into()),
        IpAddr::V6(v6) => IpAddr::V6(masked(u128::from(v6), length, 128).into()),
    };
    Some(Network { address, length })
}

// EndpointSlices and Endpoints.

/// `ValidateEndpointSlice`, and on update the address type kept
/// (`ValidateEndpointSliceUpdate`).
fn endpoint_slice(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let address_type = text(object, "/addressType");
    match address_type {
        "" => causes.push(Cause::required("addressType", "")),
        "FQDN" | "IPv4" | "IPv6" => {}
        other => causes.push(Cause::not_supported(
            "addressType",
            other,
            &["FQDN", "IPv4", "IPv6"],
        )),
    }
    slice_endpoints(items(object.get("endpoints")), address_type, causes);
    slice_ports(items(object.get("ports")), causes);
    if let Some(old) = old
        && text(old, "/addressType") != address_type
    {
        causes.push(names::invalid(
            "addressType",
            address_type,
            "field is immutable".into(),
        ));
    }
}

/// An EndpointSlice's endpoints (`validateEndpoints`).
fn slice_endpoints(endpoints: &[Value], address_type: &str, causes: &mut Vec<Cause>) {
    if endpoints.len() > MAX_ENDPOINTS {
        causes.push(too_many("endpoints", endpoints.len(), MAX_ENDPOINTS));
        return;
    }
    for (i, endpoint) in endpoints.iter().enumerate() {
        let at = format!("endpoints[{i}]");
        let addresses_at = format!("{at}.addresses");
        let addresses = strings(endpoint.get("addresses"));
        if addresses.is_empty() {
            causes.push(Cause::required(
                &addresses_at,
                "must contain at least 1 address",
            ));
        } else if addresses.len() > MAX_ADDRESSES {
            causes.push(too_many(&addresses_at, addresses.len(), MAX_ADDRESSES));
        }
        for (j, address) in addresses.into_iter().enumerate() {
            let address_at = format!("{addresses_at}[{j}]");
            match address_type {
                "IPv4" | "IPv6" => {
                    let Some(ip) = sloppy_ip(address) else {
                        causes.push(names::invalid(&address_at, address, INVALID_IP.into()));
                        continue;
                    };
                    let v4 = unmapped(ip).is_ipv4();
                    if address_type == "IPv4" && !v4 {
                        causes.push(names::invalid(
                            &address_at,
                            address,
                            "must be an IPv4 address".into(),
                        ));
                    }
                    if address_type == "IPv6" && v4 {
                        causes.push(names::invalid(
                            &address_at,
                            address,
                            "must be an IPv6 address".into(),
                        ));
                    }
                    non_special_ip(address, ip, &address_at, causes);
                }
                "FQDN" => fully_qualified_domain_name(address, &address_at, causes),
                _ => {}
            }
        }
        if let Some(node) = present(endpoint, "nodeName") {
            let node = node.as_str().unwrap_or_default();
            invalid_each(
                &format!("{at}.nodeName"),
                node,
                names::dns1123_subdomain(node),
                causes,
            );
        }
        let topology_at = format!("{at}.deprecatedTopology");
        let topology = endpoint.get("deprecatedTopology");
        let labels = topology.and_then(Value::as_object);
        let count = labels.map_or(0, |l| l.len());
        if count > MAX_TOPOLOGY_LABELS {
            causes.push(too_many(&topology_at, count, MAX_TOPOLOGY_LABELS));
        }
        label_selector::labels(topology, &topology_at, causes);
        if labels.is_some_and(|l| l.contains_key(ZONE_LABEL)) {
            causes.push(Cause::new(
                &format!("{topology_at}[{ZONE_LABEL}]"),
                "InternalError",
                "Internal error: reserved key was not removed in conversion".into(),
            ));
        }
        if let Some(hostname) = present(endpoint, "hostname") {
            let hostname = hostname.as_str().unwrap_or_default();
            invalid_each(
                &format!("{at}.hostname"),
                hostname,
                names::dns1123_label(hostname),
                causes,
            );
        }
        if let Some(hints) = present(endpoint, "hints") {
            zone_hints(hints, &format!("{at}.hints"), causes);
        }
    }
}

/// `validateHints`: at most 8 zones, each named once with a label value.
fn zone_hints(hints: &Value, at: &str, causes: &mut Vec<Cause>) {
    let zones = items(hints.get("forZones"));
    let zones_at = format!("{at}.forZones");
    if zones.len() > MAX_ZONE_HINTS {
        causes.push(too_many(&zones_at, zones.len(), MAX_ZONE_HINTS));
        return;
    }
    let mut seen = Vec::new();
    for (i, zone) in zones.iter().enumerate() {
        let name = text(zone, "/name");
        let name_at = format!("{zones_at}[{i}].name");
        if seen.contains(&name) {
            causes.push(Cause::duplicate(&name_at, name));
        } else {
            seen.push(name);
        }
        invalid_each(&name_at, name, names::label_value(name), causes);
    }
}

/// An EndpointSlice's ports (`validatePorts`): at most 20000, named
/// apart (the unnamed too), each with a known protocol.
fn slice_ports(ports: &[Value], causes: &mut Vec<Cause>) {
    if ports.len() > MAX_PORTS {
        causes.push(too_many("ports", ports.len(), MAX_PORTS));
        return;
    }
    let mut seen = Vec::new();
    for (i, port) in ports.iter().enumerate() {
        let at = format!("ports[{i}]");
        let name = text(port, "/name");
        let name_at = format!("{at}.name");
        if !name.is_empty() {
            invalid_each(&name_at, name, names::dns1123_label(name), causes);
        }
        if seen.contains(&name) {
            causes.push(Cause::duplicate(&name_at, name));
        } else {
            seen.push(name);
        }
        match present(port, "protocol") {
            None => causes.push(Cause::required(&format!("{at}.protocol"), "")),
            Some(protocol) => {
                let protocol = protocol.as_str().unwrap_or_default();
                if !PROTOCOLS.contains(&protocol) {
                    causes.push(Cause::not_supported(
                        &format!("{at}.protocol"),
                        protocol,
                        &PROTOCOLS,
                    ));
                }
            }
        }
        app_protocol(port, &at, causes);
    }
}

/// A port's optional application protocol: a qualified name.
fn app_protocol(port: &Value, at: &str, causes: &mut Vec<Cause>) {
    if let Some(protocol) = present(port, "appProtocol") {
        let protocol = protocol.as_str().unwrap_or_default();
        invalid_each(
            &format!("{at}.appProtocol"),
            protocol,
            names::qualified_name(protocol),
            causes,
        );
    }
}

/// `IsFullyQualifiedDomainName`: a subdomain (a trailing dot allowed) of
/// at least two labels.
fn fully_qualified_domain_name(value: &str, at: &str, causes: &mut Vec<Cause>) {
    if value.is_empty() {
        causes.push(Cause::required(at, ""));
        return;
    }
    let name = value.strip_suffix('.').unwrap_or(value);
    let problems = names::dns1123_subdomain(name);
    if !problems.is_empty() {
        invalid_each(at, name, problems, causes);
        return;
    }
    if !name.contains('.') {
        causes.push(names::invalid(
            at,
            name,
            "should be a domain with at least two segments separated by dots".into(),
        ));
        return;
    }
    for label in name.split('.') {
        invalid_each(at, label, names::dns1123_label(label), causes);
    }
}

/// An IPv4-mapped IPv6 address as the IPv4 address Go's `net.IP` takes it
/// for.
fn unmapped(address: IpAddr) -> IpAddr {
    match address {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(address, IpAddr::V4),
        v4 => v4,
    }
}

/// `ValidateEndpoints`: each subset's addresses, not-ready addresses and
/// ports.
fn endpoints(object: &Value, causes: &mut Vec<Cause>) {
    for (i, subset) in items(object.get("subsets")).iter().enumerate() {
        let at = format!("subsets[{i}]");
        let ready = items(subset.get("addresses"));
        let not_ready = items(subset.get("notReadyAddresses"));
        if ready.is_empty() && not_ready.is_empty() {
            causes.push(Cause::required(
                &at,
                "must specify `addresses` or `notReadyAddresses`",
            ));
        }
        for (field, list) in [("addresses", ready), ("notReadyAddresses", not_ready)] {
            for (j, address) in list.iter().enumerate() {
                endpoint_address(address, &format!("{at}.{field}[{j}]"), causes);
            }
        }
        let ports = items(subset.get("ports"));
        for (j, port) in ports.iter().enumerate() {
            endpoint_port(port, ports.len() > 1, &format!("{at}.ports[{j}]"), causes);
        }
    }
}

/// `validateEndpointAddress`: an IP address, hostname and node name; the
/// special ranges only once those are valid.
fn endpoint_address(address: &Value, at: &str, causes: &mut Vec<Cause>) {
    let before = causes.len();
    let ip = text(address, "/ip");
    let ip_at = format!("{at}.ip");
    let parsed = sloppy_ip(ip);
    if parsed.is_none() {
        causes.push(names::invalid(&ip_at, ip, INVALID_IP.into()));
    }
    let hostname = text(address, "/hostname");
    if !hostname.is_empty() {
        invalid_each(
            &format!("{at}.hostname"),
            hostname,
            names::dns1123_label(hostname),
            causes,
        );
    }
    if let Some(node) = present(address, "nodeName") {
        let node = node.as_str().unwrap_or_default();
        invalid_each(
            &format!("{at}.nodeName"),
            node,
            names::dns1123_subdomain(node),
            causes,
        );
    }
    if causes.len() == before
        && let Some(parsed) = parsed
    {
        non_special_ip(ip, parsed, &ip_at, causes);
    }
}

/// `validateEndpointPort`: a name (required among several, a DNS-1123
/// label), a port number, a protocol, an application protocol.
fn endpoint_port(port: &Value, require_name: bool, at: &str, causes: &mut Vec<Cause>) {
    let name = text(port, "/name");
    let name_at = format!("{at}.name");
    if require_name && name.is_empty() {
        causes.push(Cause::required(&name_at, ""));
    } else if !name.is_empty() {
        invalid_each(&name_at, name, names::dns1123_label(name), causes);
    }
    let number = port.get("port").and_then(Value::as_i64).unwrap_or(0);
    port_number(number, &format!("{at}.port"), causes);
    match text(port, "/protocol") {
        "" => causes.push(Cause::required(&format!("{at}.protocol"), "")),
        protocol if PROTOCOLS.contains(&protocol) => {}
        protocol => causes.push(Cause::not_supported(
            &format!("{at}.protocol"),
            protocol,
            &PROTOCOLS,
        )),
    }
    app_protocol(port, at, causes);
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// The messages of `object` of `group`/`kind`, defaulted as the server
    /// defaults it, created (`old` none) or updated from `old`.
    fn check(group: &str, kind: &str, mut object: Value, old: Option<Value>) -> Vec<String> {
        crate::store::defaults::apply(group, kind, &mut object);
        let mut causes = Vec::new();
        validate(kind, &object, old.as_ref(), &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    fn ingress(spec: Value) -> Vec<String> {
        check("networking.k8s.io", "Ingress", json!({"spec": spec}), None)
    }

    fn policy(spec: Value) -> Vec<String> {
        check(
            "networking.k8s.io",
            "NetworkPolicy",
            json!({"spec": spec}),
            None,
        )
    }

    fn slice(object: Value) -> Vec<String> {
        check("discovery.k8s.io", "EndpointSlice", object, None)
    }

    fn service_backend(name: &str, port: Value) -> Value {
        json!({"service": {"name": name, "port": port}})
    }

    #[test]
    fn an_ingress_has_rules_or_a_default_backend() {
        assert_eq!(
            ingress(json!({})),
            [
                "spec: Invalid value: []networking.IngressRule(nil): either `defaultBackend` or `rules` must be specified"
            ]
        );
        assert_eq!(
            ingress(json!({"rules": []})),
            [
                "spec: Invalid value: []networking.IngressRule{}: either `defaultBackend` or `rules` must be specified"
            ]
        );
        let ok = json!({"defaultBackend": service_backend("web", json!({"number": 80})),
            "rules": [{"host": "*.example.com", "http": {"paths": [
                {"path": "/", "pathType": "Prefix", "backend": service_backend("web", json!({"name": "http"}))},
                {"pathType": "ImplementationSpecific",
                 "backend": {"resource": {"apiGroup": "k8s.example.com", "kind": "StorageBucket", "name": "static"}}}]}}],
            "tls": [{"hosts": ["a.example.com", "*.example.com"], "secretName": "tls"}],
            "ingressClassName": "nginx"});
        assert_eq!(ingress(ok), Vec::<String>::new());
    }

    #[test]
    fn an_ingress_path_has_a_type_and_an_absolute_clean_path() {
        let backend = service_backend("web", json!({"number": 80}));
        let paths = json!([
            {"path": "/a", "backend": backend},
            {"path": "a//b/.", "pathType": "Exact", "backend": backend},
            {"path": "/x/../%2F/..", "pathType": "Prefix", "backend": backend},
            {"path": "rel", "pathType": "ImplementationSpecific", "backend": backend},
            {"path": "/", "pathType": "Regex", "backend": backend},
        ]);
        assert_eq!(
            ingress(json!({"rules": [{"http": {"paths": paths}}, {"http": {"paths": []}}]})),
            [
                "spec.rules[0].http.paths[0].pathType: Required value: pathType must be specified",
                "spec.rules[0].http.paths[1].path: Invalid value: \"a//b/.\": must be an absolute path",
                "spec.rules[0].http.paths[1].path: Invalid value: \"a//b/.\": must not contain '//'",
                "spec.rules[0].http.paths[1].path: Invalid value: \"a//b/.\": cannot end with '/.'",
                "spec.rules[0].http.paths[2].path: Invalid value: \"/x/../%2F/..\": must not contain '/../'",
                "spec.rules[0].http.paths[2].path: Invalid value: \"/x/../%2F/..\": must not contain '%2F'",
                "spec.rules[0].http.paths[2].path: Invalid value: \"/x/../%2F/..\": cannot end with '/..'",
                "spec.rules[0].http.paths[3].path: Invalid value: \"rel\": must be an absolute path",
                "spec.rules[0].http.paths[4].pathType: Unsupported value: \"Regex\": supported values: \"Exact\", \"ImplementationSpecific\", \"Prefix\"",
                "spec.rules[1].http.paths: Required value",
            ]
        );
    }

    #[test]
    fn an_ingress_backend_is_a_resource_or_a_service_with_one_port() {
        let path = |backend: Value| json!({"path": "/", "pathType": "Prefix", "backend": backend});
        let paths = json!([
            path(json!({})),
            path(json!({"resource": {"kind": "K", "name": "n"}, "service": {"name": "s"}})),
            path(service_backend("", json!({}))),
            path(service_backend(
                "9web",
                json!({"name": "http", "number": 80})
            )),
            path(service_backend("web", json!({"name": "HTTP"}))),
            path(service_backend("web", json!({"number": 70000}))),
            path(json!({"resource": {"apiGroup": "Bad_Group", "kind": "a/b", "name": ".."}})),
            path(json!({"resource": {}})),
        ]);
        let at = |i: usize| format!("spec.rules[0].http.paths[{i}].backend");
        assert_eq!(
            ingress(json!({"rules": [{"host": "example.com", "http": {"paths": paths}}]})),
            [
                format!(
                    "{}: Invalid value: \"\": resource or service backend is required",
                    at(0)
                ),
                format!(
                    "{}: Invalid value: \"\": cannot set both resource and service backends",
                    at(1)
                ),
                format!("{}.service.name: Required value", at(2)),
                format!("{}: Required value: port name or number is required", at(2)),
                format!(
                    "{}.service.name: Invalid value: \"9web\": a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
                    at(3)
                ),
                format!(
                    "{}: Invalid value: \"\": cannot set both port name & port number",
                    at(3)
                ),
                format!(
                    "{}.service.port.name: Invalid value: \"HTTP\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                    at(4)
                ),
                format!(
                    "{}.service.port.name: Invalid value: \"HTTP\": must contain at least one letter (a-z)",
                    at(4)
                ),
                format!(
                    "{}.service.port.number: Invalid value: 70000: must be between 1 and 65535, inclusive",
                    at(5)
                ),
                format!(
                    "{}.resource.apiGroup: Invalid value: \"Bad_Group\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                    at(6)
                ),
                format!(
                    "{}.resource.kind: Invalid value: \"a/b\": may not contain '/'",
                    at(6)
                ),
                format!(
                    "{}.resource.name: Invalid value: \"..\": may not be '..'",
                    at(6)
                ),
                format!("{}.resource.kind: Required value", at(7)),
                format!("{}.resource.name: Required value", at(7)),
            ]
        );
    }

    #[test]
    fn ingress_hosts_are_dns_names_or_wildcards_and_tls_names_subdomains() {
        let backend = service_backend("web", json!({"number": 80}));
        let found = ingress(json!({"defaultBackend": backend,
            "rules": [{"host": "10.0.0.1"}, {"host": "a.*.com"}, {"host": "Web.example.com"}],
            "tls": [{}, {"hosts": ["*"], "secretName": "Bad"}],
            "ingressClassName": "Nginx"}));
        let fields = crate::store::validation::fields_of(&found);
        assert_eq!(
            fields,
            [
                "spec.rules[0].host",
                "spec.rules[1].host",
                "spec.rules[2].host",
                "spec.tls[1].hosts[0]",
                "spec.tls[1].secretName",
                "spec.ingressClassName",
            ]
        );
        assert_eq!(
            found[0],
            "spec.rules[0].host: Invalid value: \"10.0.0.1\": must be a DNS name, not an IP address"
        );
        assert_eq!(
            found[1],
            "spec.rules[1].host: Invalid value: \"a.*.com\": a wildcard DNS-1123 subdomain must start with '*.', followed by a valid DNS subdomain, which must consist of lower case alphanumeric characters, '-' or '.' and end with an alphanumeric character (e.g. '*.example.com', regex used for validation is '\\*\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')"
        );
    }

    #[test]
    fn an_ingress_create_has_no_class_annotation_beside_the_class_field() {
        let object = json!({"metadata": {"annotations": {"kubernetes.io/ingress.class": "nginx"}},
            "spec": {"ingressClassName": "nginx",
                "defaultBackend": service_backend("web", json!({"number": 80}))}});
        assert_eq!(
            check("networking.k8s.io", "Ingress", object.clone(), None),
            [
                "annotations.kubernetes.io/ingress.class: Invalid value: \"nginx\": can not be set when the class field is also set"
            ]
        );
        let old = object.clone();
        assert!(check("networking.k8s.io", "Ingress", object, Some(old)).is_empty());
    }

    #[test]
    fn an_ingress_update_keeps_accepting_what_its_old_object_had() {
        let spec = json!({"rules": [{"host": "*.example.com", "http": {"paths": [
            {"path": "/", "pathType": "Prefix", "backend": {}}]}}],
            "tls": [{"secretName": "Bad"}]});
        let object = json!({"spec": spec});
        assert_eq!(
            check("networking.k8s.io", "Ingress", object.clone(), None).len(),
            2
        );
        let old = object.clone();
        assert!(check("networking.k8s.io", "Ingress", object, Some(old)).is_empty());
    }

    #[test]
    fn an_ingress_class_has_a_fixed_domain_prefixed_controller_and_scoped_parameters() {
        let class = |spec: Value, old: Option<Value>| {
            check(
                "networking.k8s.io",
                "IngressClass",
                json!({"spec": spec}),
                old,
            )
        };
        assert_eq!(
            class(
                json!({"controller": "example.com/ingress",
                "parameters": {"kind": "Params", "name": "p"}}),
                None
            ),
            Vec::<String>::new()
        );
        assert_eq!(class(json!({}), None), ["spec.controller: Required value"]);
        assert_eq!(
            class(json!({"controller": "nginx"}), None),
            [
                "spec.controller: Invalid value: \"nginx\": must be a domain-prefixed path (such as \"acme.io/foo\")"
            ]
        );
        assert_eq!(
            class(json!({"controller": "Acme.io/a b"}), None),
            [
                "spec.controller: Invalid value: \"Acme.io\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
                "spec.controller: Invalid value: \"a b\": must be a valid path (regex used for validation is '[A-Za-z0-9/\\-._~%!$&'()*+,;=:]+')",
            ]
        );
        let long = format!("example.com/{}", "a".repeat(250));
        assert_eq!(
            class(json!({"controller": long}), None),
            ["spec.controller: Too long: may not be more than 250 bytes"]
        );
        assert_eq!(
            class(
                json!({"controller": "example.com/b", "parameters": {"kind": "K", "name": "n", "scope": "Namespace"}}),
                Some(json!({"spec": {"controller": "example.com/a"}}))
            ),
            [
                "spec.controller: Invalid value: \"example.com/b\": field is immutable",
                "spec.parameters.namespace: Required value: `parameters.scope` is set to 'Namespace'",
            ]
        );
        assert_eq!(
            class(
                json!({"controller": "example.com/a",
                "parameters": {"kind": "K", "name": "n", "namespace": "ns"}}),
                None
            ),
            ["spec.parameters.namespace: Forbidden: `parameters.scope` is set to 'Cluster'"]
        );
        assert_eq!(
            class(
                json!({"controller": "example.com/a",
                "parameters": {"kind": "K", "name": "n", "scope": "Global"}}),
                None
            ),
            [
                "spec.parameters.scope: Unsupported value: \"Global\": supported values: \"Cluster\", \"Namespace\""
            ]
        );
    }

    #[test]
    fn network_policy_ports_have_a_protocol_a_port_and_an_end_after_it() {
        let ports = json!([
            {"protocol": "ICMP", "port": 0},
            {"port": 8080, "endPort": 80},
            {"port": "web", "endPort": 90},
            {"endPort": 90},
            {"port": "Web_1"},
            {"port": 1000, "endPort": 70000},
        ]);
        assert_eq!(
            policy(json!({"ingress": [{"ports": ports}]})),
            [
                "spec.ingress[0].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"TCP\", \"UDP\", \"SCTP\"",
                "spec.ingress[0].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "spec.ingress[0].ports[1].endPort: Invalid value: 80: must be greater than or equal to `port`",
                "spec.ingress[0].ports[2].endPort: Invalid value: 90: may not be specified when `port` is non-numeric",
                "spec.ingress[0].ports[3].endPort: Invalid value: 90: may not be specified when `port` is not specified",
                "spec.ingress[0].ports[4].port: Invalid value: \"Web_1\": must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)",
                "spec.ingress[0].ports[5].endPort: Invalid value: 70000: must be between 1 and 65535, inclusive",
            ]
        );
    }

    #[test]
    fn network_policy_peers_are_selectors_or_an_ip_block_inside_its_cidr() {
        let peers = json!([
            {},
            {"podSelector": {}, "ipBlock": {"cidr": "10.0.0.0/8"}},
            {"ipBlock": {}},
            {"ipBlock": {"cidr": "10.0.0.0/33"}},
            {"ipBlock": {"cidr": "10.1.2.3/16", "except": ["10.1.128.0/17", "10.2.0.0/24", "10.1.0.0/16", "x", "2001:db8::/64"]}},
            {"namespaceSelector": {"matchExpressions": [{"key": "team", "operator": "In"}]}},
        ]);
        assert_eq!(
            policy(json!({"egress": [{"to": peers}]})),
            [
                "spec.egress[0].to[0]: Required value: must specify a peer",
                "spec.egress[0].to[1]: Forbidden: may not specify both ipBlock and another peer",
                "spec.egress[0].to[2].ipBlock.cidr: Required value",
                "spec.egress[0].to[3].ipBlock.cidr: Invalid value: \"10.0.0.0/33\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.egress[0].to[4].ipBlock.except[1]: Invalid value: \"10.2.0.0/24\": must be a strict subset of `cidr`",
                "spec.egress[0].to[4].ipBlock.except[2]: Invalid value: \"10.1.0.0/16\": must be a strict subset of `cidr`",
                "spec.egress[0].to[4].ipBlock.except[3]: Invalid value: \"x\": must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
                "spec.egress[0].to[4].ipBlock.except[4]: Invalid value: \"2001:db8::/64\": must be a strict subset of `cidr`",
                "spec.egress[0].to[5].namespaceSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'",
            ]
        );
    }

    #[test]
    fn network_policy_types_are_at_most_two_known_ones() {
        assert_eq!(
            policy(json!({"policyTypes": ["Ingress", "Egress", "Ingress"]})),
            [
                "spec.policyTypes: Invalid value: []networking.PolicyType{\"Ingress\", \"Egress\", \"Ingress\"}: may not specify more than two policyTypes"
            ]
        );
        assert_eq!(
            policy(
                json!({"podSelector": {"matchLabels": {"app": "-x"}}, "policyTypes": ["Inbound"]})
            ),
            [
                "spec.podSelector.matchLabels: Invalid value: \"-x\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "spec.policyTypes[0]: Unsupported value: \"Inbound\": supported values: \"Ingress\", \"Egress\"",
            ]
        );
        assert!(policy(json!({"egress": [{}]})).is_empty());
    }

    #[test]
    fn a_network_policy_update_from_an_invalid_selector_lets_selector_values_stay_invalid() {
        let bad = json!({"spec": {"podSelector": {"matchExpressions": [
            {"key": "app", "operator": "In", "values": ["-bad"]}]}}});
        let found = check("networking.k8s.io", "NetworkPolicy", bad.clone(), None);
        assert_eq!(found.len(), 1);
        assert!(found[0].starts_with(
            "spec.podSelector.matchExpressions[0].values[0]: Invalid value: \"-bad\""
        ));
        assert!(check("networking.k8s.io", "NetworkPolicy", bad.clone(), Some(bad)).is_empty());
    }

    #[test]
    fn an_endpoint_slice_has_an_address_type_and_addresses_of_it() {
        assert_eq!(slice(json!({})), ["addressType: Required value"]);
        assert_eq!(
            slice(json!({"addressType": "IP"})),
            [
                "addressType: Unsupported value: \"IP\": supported values: \"FQDN\", \"IPv4\", \"IPv6\""
            ]
        );
        let endpoints = json!([
            {"addresses": ["10.0.0.1", "010.000.000.002", "::ffff:10.0.0.3"]},
            {"addresses": []},
            {"addresses": ["2001:db8::1", "10.0.0.256", "127.0.0.1", "0.0.0.0", "169.254.1.1", "224.0.0.1"]},
        ]);
        assert_eq!(
            slice(json!({"addressType": "IPv4", "endpoints": endpoints})),
            [
                "endpoints[1].addresses: Required value: must contain at least 1 address",
                "endpoints[2].addresses[0]: Invalid value: \"2001:db8::1\": must be an IPv4 address",
                "endpoints[2].addresses[1]: Invalid value: \"10.0.0.256\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "endpoints[2].addresses[2]: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "endpoints[2].addresses[3]: Invalid value: \"0.0.0.0\": may not be unspecified (0.0.0.0)",
                "endpoints[2].addresses[4]: Invalid value: \"169.254.1.1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "endpoints[2].addresses[5]: Invalid value: \"224.0.0.1\": may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)",
            ]
        );
        assert_eq!(
            slice(
                json!({"addressType": "IPv6", "endpoints": [{"addresses": ["10.0.0.1", "fe80::1"]}]})
            ),
            [
                "endpoints[0].addresses[0]: Invalid value: \"10.0.0.1\": must be an IPv6 address",
                "endpoints[0].addresses[1]: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
            ]
        );
        assert_eq!(
            slice(
                json!({"addressType": "FQDN", "endpoints": [{"addresses": ["example.com.", "localhost", "Bad.com"]}]})
            ),
            [
                "endpoints[0].addresses[1]: Invalid value: \"localhost\": should be a domain with at least two segments separated by dots",
                "endpoints[0].addresses[2]: Invalid value: \"Bad.com\": a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
            ]
        );
        let many: Vec<Value> = (0..1001)
            .map(|_| json!({"addresses": ["10.0.0.1"]}))
            .collect();
        assert_eq!(
            slice(json!({"addressType": "IPv4", "endpoints": many})),
            ["endpoints: Too many: 1001: must have at most 1000 items"]
        );
    }

    #[test]
    fn an_endpoint_slices_endpoints_and_ports_have_valid_names_and_its_type_stays() {
        let object = json!({"addressType": "IPv4",
            "endpoints": [{"addresses": ["10.0.0.1"], "nodeName": "Node_1", "hostname": "a.b",
                "deprecatedTopology": {"topology.kubernetes.io/zone": "a"},
                "hints": {"forZones": [{"name": "a"}, {"name": "a"}]}}],
            "ports": [{"port": 80}, {"port": 81}, {"name": "Web", "protocol": "ICMP", "appProtocol": "a/b/c"}]});
        let found = slice(object.clone());
        let fields = crate::store::validation::fields_of(&found);
        assert_eq!(
            fields,
            [
                "endpoints[0].nodeName",
                "endpoints[0].deprecatedTopology[topology.kubernetes.io/zone]",
                "endpoints[0].hostname",
                "endpoints[0].hints.forZones[1].name",
                "ports[1].name",
                "ports[2].name",
                "ports[2].protocol",
                "ports[2].appProtocol",
            ]
        );
        assert_eq!(found[4], "ports[1].name: Duplicate value: \"\"");
        let ok = json!({"addressType": "IPv4", "endpoints": [{"addresses": ["10.0.0.1"]}]});
        let old = json!({"addressType": "IPv6"});
        assert_eq!(
            check("discovery.k8s.io", "EndpointSlice", ok, Some(old)),
            ["addressType: Invalid value: \"IPv4\": field is immutable"]
        );
    }

    #[test]
    fn endpoints_subsets_have_valid_addresses_and_ports() {
        let subsets = json!([
            {"ports": [{"port": 80}]},
            {"addresses": [{"ip": "10.0.0.1", "hostname": "web-0", "nodeName": "node-1"},
                {"ip": "127.0.0.1"}, {"ip": "nope", "hostname": "Bad"}, {"ip": "127.0.0.2", "hostname": "Bad"}],
             "notReadyAddresses": [{"ip": "fe80::1"}],
             "ports": [{"port": 0, "protocol": "ICMP"}, {"name": "Web", "port": 81, "appProtocol": "-h2"}]},
        ]);
        assert_eq!(
            check("", "Endpoints", json!({"subsets": subsets}), None),
            [
                "subsets[0]: Required value: must specify `addresses` or `notReadyAddresses`",
                "subsets[1].addresses[1].ip: Invalid value: \"127.0.0.1\": may not be in the loopback range (127.0.0.0/8, ::1/128)",
                "subsets[1].addresses[2].ip: Invalid value: \"nope\": must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)",
                "subsets[1].addresses[2].hostname: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[1].addresses[3].hostname: Invalid value: \"Bad\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[1].notReadyAddresses[0].ip: Invalid value: \"fe80::1\": may not be in the link-local range (169.254.0.0/16, fe80::/10)",
                "subsets[1].ports[0].name: Required value",
                "subsets[1].ports[0].port: Invalid value: 0: must be between 1 and 65535, inclusive",
                "subsets[1].ports[0].protocol: Unsupported value: \"ICMP\": supported values: \"SCTP\", \"TCP\", \"UDP\"",
                "subsets[1].ports[1].name: Invalid value: \"Web\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
                "subsets[1].ports[1].appProtocol: Invalid value: \"-h2\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
            ]
        );
    }
}
