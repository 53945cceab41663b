//! Where a Pod may run, as `pkg/apis/core/validation` checks it: its node
//! selector's labels, its affinity (`validateAffinity`: node selector
//! terms and requirements, preferred terms' weights, pod affinity terms'
//! label selectors, namespaces and topology keys), its topology spread
//! constraints (`validateTopologySpreadConstraints`), its scheduling
//! gates (`validateSchedulingGates`) and its tolerations
//! (`ValidateTolerations`).

use serde_json::Value;

use super::label_selector::{
    invalid_operator, label_name, label_selector, labels, operator_and_key,
};
use super::{Cause, items, names, text};

/// A Pod spec's node selector, under `path`: labels.
pub(super) fn node_selector(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    labels(
        spec.get("nodeSelector"),
        &format!("{path}.nodeSelector"),
        causes,
    );
}

/// A Pod spec's scheduling gates, under `path`: qualified names, none
/// twice (`validateSchedulingGates`).
pub(super) fn scheduling_gates(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let mut seen = Vec::new();
    for (i, gate) in items(spec.get("schedulingGates")).iter().enumerate() {
        let at = format!("{path}.schedulingGates[{i}]");
        let name = text(gate, "/name");
        for problem in names::qualified_name(name) {
            causes.push(names::invalid(&at, name, problem));
        }
        if seen.contains(&name) {
            causes.push(Cause::duplicate(&at, name));
        }
        seen.push(name);
    }
}

/// A Pod spec's affinity, under `path`.
pub(super) fn affinity(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let Some(affinity) = spec.get("affinity").filter(|a| a.is_object()) else {
        return;
    };
    let at = format!("{path}.affinity");
    if let Some(node) = affinity.get("nodeAffinity").filter(|n| n.is_object()) {
        node_affinity(node, &format!("{at}.nodeAffinity"), causes);
    }
    for kind in ["podAffinity", "podAntiAffinity"] {
        let Some(pod) = affinity.get(kind).filter(|p| p.is_object()) else {
            continue;
        };
        let at = format!("{at}.{kind}");
        let required_at = format!("{at}.requiredDuringSchedulingIgnoredDuringExecution");
        for (i, term) in items(pod.get("requiredDuringSchedulingIgnoredDuringExecution"))
            .iter()
            .enumerate()
        {
            pod_affinity_term(term, &format!("{required_at}[{i}]"), causes);
        }
        preferred(
            pod.get("preferredDuringSchedulingIgnoredDuringExecution"),
            &format!("{at}.preferredDuringSchedulingIgnoredDuringExecution"),
            ("podAffinityTerm", pod_affinity_term),
            causes,
        );
    }
}

/// Checks one part of a Pod spec, at a path, into causes.
type Check = fn(&Value, &str, &mut Vec<Cause>);

/// Preferred terms at `path`: each one's weight, then the term it weighs
/// (its member `inner.0`, checked by `inner.1`).
fn preferred(list: Option<&Value>, path: &str, inner: (&str, Check), causes: &mut Vec<Cause>) {
    let (member, check) = inner;
    for (i, term) in items(list).iter().enumerate() {
        let at = format!("{path}[{i}]");
        weight(term, &at, causes);
        let inner = term.get(member).unwrap_or(&Value::Null);
        check(inner, &format!("{at}.{member}"), causes);
    }
}

fn node_affinity(node: &Value, path: &str, causes: &mut Vec<Cause>) {
    if let Some(selector) = node
        .get("requiredDuringSchedulingIgnoredDuringExecution")
        .filter(|s| s.is_object())
    {
        let at = format!("{path}.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms");
        let terms = items(selector.get("nodeSelectorTerms"));
        if terms.is_empty() {
            causes.push(Cause::required(
                &at,
                "must have at least one node selector term",
            ));
        }
        for (i, term) in terms.iter().enumerate() {
            node_selector_term(term, &format!("{at}[{i}]"), causes);
        }
    }
    preferred(
        node.get("preferredDuringSchedulingIgnoredDuringExecution"),
        &format!("{path}.preferredDuringSchedulingIgnoredDuringExecution"),
        ("preference", node_selector_term),
        causes,
    );
}

/// A preferred term's weight, 1 to 100.
fn weight(term: &Value, path: &str, causes: &mut Vec<Cause>) {
    let weight = term.get("weight").and_then(Value::as_i64).unwrap_or(0);
    if !(1..=100).contains(&weight) {
        causes.push(Cause::invalid_number(
            &format!("{path}.weight"),
            weight,
            "must be in the range 1-100",
        ));
    }
}

fn node_selector_term(term: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (j, requirement) in items(term.get("matchExpressions")).iter().enumerate() {
        let at = format!("{path}.matchExpressions[{j}]");
        operator_and_key(requirement, &at, true, causes);
    }
    for (j, requirement) in items(term.get("matchFields")).iter().enumerate() {
        let at = format!("{path}.matchFields[{j}]");
        let values = items(requirement.get("values"));
        let operator = text(requirement, "/operator");
        match operator {
            "In" | "NotIn" if values.len() != 1 => causes.push(Cause::required(
                &format!("{at}.values"),
                "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
            )),
            "In" | "NotIn" => {}
            _ => causes.push(invalid_operator(&at, operator)),
        }
        // `metadata.name` is the one field a node can be selected by.
        let key = text(requirement, "/key");
        if key == "metadata.name" {
            for (i, value) in values.iter().enumerate() {
                let value = value.as_str().unwrap_or_default();
                for problem in names::dns1123_subdomain(value) {
                    causes.push(names::invalid(&format!("{at}.values[{i}]"), value, problem));
                }
            }
        } else {
            causes.push(names::invalid(
                &format!("{at}.key"),
                key,
                "not a valid field selector key".to_string(),
            ));
        }
    }
}

fn pod_affinity_term(term: &Value, path: &str, causes: &mut Vec<Cause>) {
    for selector in ["labelSelector", "namespaceSelector"] {
        if let Some(value) = term.get(selector).filter(|s| s.is_object()) {
            label_selector(value, &format!("{path}.{selector}"), causes);
        }
    }
    for name in items(term.get("namespaces")) {
        let name = name.as_str().unwrap_or_default();
        for problem in names::dns1123_label(name) {
            // The server names the field `namespace`, singular.
            causes.push(names::invalid(&format!("{path}.namespace"), name, problem));
        }
    }
    let key = text(term, "/topologyKey");
    let at = format!("{path}.topologyKey");
    if key.is_empty() {
        causes.push(Cause::required(&at, "can not be empty"));
    }
    label_name(key, &at, causes);
}

/// A Pod spec's topology spread constraints, under `path`: a positive
/// `maxSkew`, a `topologyKey`, a known `whenUnsatisfiable`, each
/// `{topologyKey, whenUnsatisfiable}` once, a positive `minDomains` only
/// with `DoNotSchedule`, known node inclusion policies, `matchLabelKeys`
/// only beside a label selector and only label names it does not name, and
/// a valid label selector.
pub(super) fn topology_spread_constraints(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    let constraints = items(spec.get("topologySpreadConstraints"));
    for (i, constraint) in constraints.iter().enumerate() {
        let at = format!("{path}.topologySpreadConstraints[{i}]");
        let max_skew = constraint["maxSkew"].as_i64().unwrap_or_default();
        if max_skew <= 0 {
            causes.push(Cause::invalid_number(
                &format!("{at}.maxSkew"),
                max_skew,
                NOT_POSITIVE,
            ));
        }
        let key = text(constraint, "/topologyKey");
        if key.is_empty() {
            causes.push(Cause::required(
                &format!("{at}.topologyKey"),
                "can not be empty",
            ));
        }
        let action = text(constraint, "/whenUnsatisfiable");
        if !SCHEDULE_ACTIONS.contains(&action) {
            causes.push(Cause::not_supported(
                &format!("{at}.whenUnsatisfiable"),
                action,
                &SCHEDULE_ACTIONS,
            ));
        }
        let repeated = constraints[i + 1..].iter().any(|rest| {
            text(rest, "/topologyKey") == key && text(rest, "/whenUnsatisfiable") == action
        });
        if repeated {
            causes.push(Cause::duplicate(
                &format!("{at}.{{topologyKey, whenUnsatisfiable}}"),
                &format!("{{{key}, {action}}}"),
            ));
        }
        if let Some(min_domains) = constraint["minDomains"].as_i64() {
            let field = format!("{at}.minDomains");
            if min_domains <= 0 {
                causes.push(Cause::invalid_number(&field, min_domains, NOT_POSITIVE));
            }
            if action != "DoNotSchedule" {
                causes.push(Cause::invalid_number(
                    &field,
                    min_domains,
                    &format!(
                        "can only use minDomains if whenUnsatisfiable=DoNotSchedule, not {action}"
                    ),
                ));
            }
        }
        for policy in ["nodeAffinityPolicy", "nodeTaintsPolicy"] {
            if let Some(value) = constraint[policy].as_str()
                && !NODE_INCLUSION_POLICIES.contains(&value)
            {
                causes.push(Cause::not_supported(
                    &format!("{at}.{policy}"),
                    value,
                    &NODE_INCLUSION_POLICIES,
                ));
            }
        }
        let selector = constraint.get("labelSelector").filter(|s| s.is_object());
        let selected: Vec<&str> = selector
            .map(|s| {
                let labels = s["matchLabels"].as_object().into_iter().flatten();
                let expressions = items(s.get("matchExpressions")).iter();
                labels
                    .map(|(key, _)| key.as_str())
                    .chain(expressions.map(|e| text(e, "/key")))
                    .collect()
            })
            .unwrap_or_default();
        let label_keys = items(constraint.get("matchLabelKeys"));
        if !label_keys.is_empty() && selector.is_none() {
            causes.push(Cause::forbidden(
                &format!("{at}.matchLabelKeys"),
                "must not be specified when labelSelector is not set",
            ));
        }
        for (j, label) in label_keys.iter().enumerate() {
            let label = label.as_str().unwrap_or_default();
            let field = format!("{at}.matchLabelKeys[{j}]");
            label_name(label, &field, causes);
            if selected.contains(&label) {
                causes.push(names::invalid(
                    &field,
                    label,
                    "exists in both matchLabelKeys and labelSelector".to_string(),
                ));
            }
        }
        if let Some(selector) = selector {
            label_selector(selector, &format!("{at}.labelSelector"), causes);
        }
    }
}

/// `isNotPositiveErrorMsg`.
const NOT_POSITIVE: &str = "must be greater than zero";
/// The `whenUnsatisfiable` actions, sorted as the server lists them.
const SCHEDULE_ACTIONS: [&str; 2] = ["DoNotSchedule", "ScheduleAnyway"];
/// The node inclusion policies, sorted as the server lists them.
const NODE_INCLUSION_POLICIES: [&str; 2] = ["Honor", "Ignore"];

/// A Pod spec's tolerations, under `path`.
pub(super) fn tolerations(spec: &Value, path: &str, causes: &mut Vec<Cause>) {
    for (i, toleration) in items(spec.get("tolerations")).iter().enumerate() {
        let at = format!("{path}.tolerations[{i}]");
        let (key, operator) = (text(toleration, "/key"), text(toleration, "/operator"));
        let (value, effect) = (text(toleration, "/value"), text(toleration, "/effect"));
        if !key.is_empty() {
            label_name(key, &format!("{at}.key"), causes);
        }
        if key.is_empty() && operator != "Exists" {
            causes.push(names::invalid(
                &format!("{at}.operator"),
                operator,
                "operator must be Exists when `key` is empty, which means \"match all values and all keys\"".to_string(),
            ));
        }
        let seconds = toleration.get("tolerationSeconds").filter(|s| !s.is_null());
        if seconds.is_some() && effect != "NoExecute" {
            causes.push(names::invalid(
                &format!("{at}.effect"),
                effect,
                "effect must be 'NoExecute' when `tolerationSeconds` is set".to_string(),
            ));
        }
        match operator {
            "Equal" | "" => {
                let problems = names::label_value(value);
                if !problems.is_empty() {
                    causes.push(names::invalid(
                        &format!("{at}.operator"),
                        value,
                        problems.join(";"),
                    ));
                }
            }
            "Exists" if !value.is_empty() => causes.push(Cause::new(
                &format!("{at}.operator"),
                "FieldValueInvalid",
                format!(
                    "Invalid value: core.Toleration{{Key:{key:?}, Operator:{operator:?}, Value:{value:?}, Effect:{effect:?}, TolerationSeconds:{}}}: value must be empty when `operator` is 'Exists'",
                    // Go shows a set pointer's address, which no other
                    // process can repeat: the value stands in for it.
                    match seconds {
                        None => "(*int64)(nil)".to_string(),
                        Some(seconds) => format!("&{seconds}"),
                    }
                ),
            )),
            "Exists" => {}
            _ => causes.push(Cause::not_supported(
                &format!("{at}.operator"),
                operator,
                &["Equal", "Exists"],
            )),
        }
        if !effect.is_empty() && !["NoSchedule", "PreferNoSchedule", "NoExecute"].contains(&effect)
        {
            causes.push(Cause::not_supported(
                &format!("{at}.effect"),
                effect,
                &["NoSchedule", "PreferNoSchedule", "NoExecute"],
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(check: fn(&Value, &str, &mut Vec<Cause>), spec: Value) -> Vec<String> {
        let mut causes = Vec::new();
        check(&spec, "spec", &mut causes);
        causes
            .iter()
            .map(|c| format!("{}: {}", c.field, c.body))
            .collect()
    }

    #[test]
    fn node_affinity_needs_terms_operators_values_and_weights() {
        let spec = json!({"affinity": {"nodeAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": [{
                "matchExpressions": [
                    {"key": "zone", "operator": "In"},
                    {"key": "gpu", "operator": "Exists", "values": ["a"]},
                    {"key": "cores", "operator": "Gt", "values": ["1", "2"]},
                    {"key": "bad key", "operator": "Equals", "values": ["x"]},
                ],
                "matchFields": [{"key": "metadata.uid", "operator": "In", "values": ["a", "b"]}],
            }]},
            "preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 0, "preference": {}}],
        }}});
        let at = "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0]";
        let messages = messages(affinity, spec);
        assert_eq!(
            messages[..4],
            [
                format!(
                    "{at}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
                ),
                format!(
                    "{at}.matchExpressions[1].values: Forbidden: may not be specified when `operator` is 'Exists' or 'DoesNotExist'"
                ),
                format!(
                    "{at}.matchExpressions[2].values: Required value: must be specified single value when `operator` is 'Lt' or 'Gt'"
                ),
                format!(
                    "{at}.matchExpressions[3].operator: Invalid value: \"Equals\": not a valid selector operator"
                ),
            ]
        );
        assert!(messages[4].starts_with(&format!(
            "{at}.matchExpressions[3].key: Invalid value: \"bad key\": name part must consist of"
        )));
        assert_eq!(
            messages[5..],
            [
                format!("{at}.matchFields[0].values: Required value: must be only one value when `operator` is 'In' or 'NotIn' for node field selector"),
                format!("{at}.matchFields[0].key: Invalid value: \"metadata.uid\": not a valid field selector key"),
                "spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 0: must be in the range 1-100".to_string(),
            ]
        );
        let empty = json!({"affinity": {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {"nodeSelectorTerms": []}}}});
        assert_eq!(
            super::tests::messages(affinity, empty),
            [
                "spec.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms: Required value: must have at least one node selector term"
            ]
        );
    }

    #[test]
    fn pod_affinity_terms_need_a_topology_key_and_valid_selectors() {
        let spec = json!({"affinity": {"podAntiAffinity": {
            "requiredDuringSchedulingIgnoredDuringExecution": [{
                "labelSelector": {"matchExpressions": [{"key": "app", "operator": "In", "values": []}]},
                "namespaces": ["Team"],
            }],
            "preferredDuringSchedulingIgnoredDuringExecution": [{
                "weight": 101,
                "podAffinityTerm": {"topologyKey": "kubernetes.io/hostname"},
            }],
        }}});
        let at = "spec.affinity.podAntiAffinity";
        let messages = messages(affinity, spec);
        assert_eq!(
            messages[0],
            format!(
                "{at}.requiredDuringSchedulingIgnoredDuringExecution[0].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
            )
        );
        assert!(messages[1].starts_with(&format!("{at}.requiredDuringSchedulingIgnoredDuringExecution[0].namespace: Invalid value: \"Team\": a lowercase RFC 1123 label")));
        assert_eq!(
            messages[2],
            format!(
                "{at}.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Required value: can not be empty"
            )
        );
        assert_eq!(
            messages[3],
            format!(
                "{at}.requiredDuringSchedulingIgnoredDuringExecution[0].topologyKey: Invalid value: \"\": name part must be non-empty"
            )
        );
        assert_eq!(
            messages.last().unwrap(),
            &format!(
                "{at}.preferredDuringSchedulingIgnoredDuringExecution[0].weight: Invalid value: 101: must be in the range 1-100"
            )
        );
    }

    #[test]
    fn topology_spread_constraints_need_a_skew_a_key_an_action_and_valid_selectors() {
        let spec = json!({"topologySpreadConstraints": [
            {"maxSkew": 0, "whenUnsatisfiable": "Sometimes", "minDomains": 0,
             "nodeTaintsPolicy": "Always", "matchLabelKeys": ["app"]},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
             "minDomains": 2, "matchLabelKeys": ["app", "pod-template-hash"],
             "labelSelector": {"matchLabels": {"app": "web"}}},
            {"maxSkew": 1, "topologyKey": "zone", "whenUnsatisfiable": "ScheduleAnyway",
             "labelSelector": {"matchExpressions": [{"key": "tier", "operator": "In"}]}},
        ]});
        let at = "spec.topologySpreadConstraints";
        assert_eq!(
            messages(topology_spread_constraints, spec),
            [
                format!("{at}[0].maxSkew: Invalid value: 0: must be greater than zero"),
                format!("{at}[0].topologyKey: Required value: can not be empty"),
                format!(
                    "{at}[0].whenUnsatisfiable: Unsupported value: \"Sometimes\": supported values: \"DoNotSchedule\", \"ScheduleAnyway\""
                ),
                format!("{at}[0].minDomains: Invalid value: 0: must be greater than zero"),
                format!(
                    "{at}[0].minDomains: Invalid value: 0: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not Sometimes"
                ),
                format!(
                    "{at}[0].nodeTaintsPolicy: Unsupported value: \"Always\": supported values: \"Honor\", \"Ignore\""
                ),
                format!(
                    "{at}[0].matchLabelKeys: Forbidden: must not be specified when labelSelector is not set"
                ),
                format!(
                    "{at}[1].{{topologyKey, whenUnsatisfiable}}: Duplicate value: \"{{zone, ScheduleAnyway}}\""
                ),
                format!(
                    "{at}[1].minDomains: Invalid value: 2: can only use minDomains if whenUnsatisfiable=DoNotSchedule, not ScheduleAnyway"
                ),
                format!(
                    "{at}[1].matchLabelKeys[0]: Invalid value: \"app\": exists in both matchLabelKeys and labelSelector"
                ),
                format!(
                    "{at}[2].labelSelector.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or 'NotIn'"
                ),
            ]
        );
    }

    #[test]
    fn tolerations_pair_their_operator_value_key_and_effect() {
        let spec = json!({"tolerations": [
            {"operator": "Equal", "value": "x"},
            {"key": "k", "operator": "Exists", "value": "v"},
            {"key": "k", "operator": "Equals", "effect": "NoRun"},
            {"key": "k", "effect": "NoSchedule", "tolerationSeconds": 60},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ]});
        assert_eq!(
            messages(tolerations, spec),
            [
                "spec.tolerations[0].operator: Invalid value: \"Equal\": operator must be Exists when `key` is empty, which means \"match all values and all keys\"",
                "spec.tolerations[1].operator: Invalid value: core.Toleration{Key:\"k\", Operator:\"Exists\", Value:\"v\", Effect:\"\", TolerationSeconds:(*int64)(nil)}: value must be empty when `operator` is 'Exists'",
                "spec.tolerations[2].operator: Unsupported value: \"Equals\": supported values: \"Equal\", \"Exists\"",
                "spec.tolerations[2].effect: Unsupported value: \"NoRun\": supported values: \"NoSchedule\", \"PreferNoSchedule\", \"NoExecute\"",
                "spec.tolerations[3].effect: Invalid value: \"NoSchedule\": effect must be 'NoExecute' when `tolerationSeconds` is set",
            ]
        );
    }
}
