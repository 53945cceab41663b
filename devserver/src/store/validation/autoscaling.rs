//! The validation of HorizontalPodAutoscalers (autoscaling/v2), as
//! kube-apiserver's `pkg/apis/autoscaling/validation` words it
//! (`validateHorizontalPodAutoscalerSpec`): `minReplicas` at least 1 (0
//! when the stored autoscaler already scales to zero, the `HPAScaleToZero`
//! gate being off), `maxReplicas` above 0 and not below `minReplicas`; a
//! scale target with a kind and a name, each a path segment; each metric
//! of a known type, with the one source its type names (the first source
//! present checked: a metric name, a target of a known type whose values
//! are positive, the target values the source needs); scaling to zero
//! only with an Object or External metric; a behavior's rules (a
//! stabilization window of 0 to 3600 seconds, a known select policy, at
//! least one policy, each of a known type, a positive value and a period
//! of 1 to 1800 seconds).
//!
//! A quantity shows as the server's field errors show a
//! `resource.Quantity`, in Go's `%#v` (`policy::go_quantity`); a pointer's
//! value shows dereferenced.

use serde_json::Value;

use super::policy::{go_quantity, quantity_text};
use super::{Cause, items, names, quantity, text};

/// The largest period of a scaling policy, in seconds.
const MAX_PERIOD_SECONDS: i64 = 1800;
/// The largest stabilization window, in seconds.
const MAX_STABILIZATION_WINDOW_SECONDS: i64 = 3600;

/// The metric source types, sorted as the server lists them.
const METRIC_SOURCE_TYPES: [&str; 5] = [
    "ContainerResource",
    "External",
    "Object",
    "Pods",
    "Resource",
];

/// The causes of `object`, a HorizontalPodAutoscaler, created (`old` none) or updated from
/// `old`, in the order upstream's `ValidateHorizontalPodAutoscaler` and
/// `ValidateHorizontalPodAutoscalerUpdate` report them.
pub(super) fn validate(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    // An update keeps a stored autoscaler's zero minimum valid.
    let lower_bound = match old
        .and_then(|o| o.pointer("/spec/minReplicas"))
        .and_then(Value::as_i64)
    {
        Some(0) => 0,
        _ => 1,
    };
    let min = spec.get("minReplicas").and_then(Value::as_i64);
    if let Some(min) = min.filter(|m| *m < lower_bound) {
        causes.push(Cause::invalid_number(
            "spec.minReplicas",
            min,
            &format!("must be greater than or equal to {lower_bound}"),
        ));
    }
    let max = spec.get("maxReplicas").and_then(Value::as_i64).unwrap_or(0);
    if max < 1 {
        causes.push(Cause::invalid_number(
            "spec.maxReplicas",
            max,
            "must be greater than 0",
        ));
    }
    if min.is_some_and(|min| max < min) {
        causes.push(Cause::invalid_number(
            "spec.maxReplicas",
            max,
            "must be greater than or equal to `minReplicas`",
        ));
    }
    reference(
        spec.get("scaleTargetRef").unwrap_or(&Value::Null),
        "spec.scaleTargetRef",
        causes,
    );
    metrics(spec, min, causes);
    if let Some(behavior) = spec.get("behavior").filter(|b| !b.is_null()) {
        for direction in ["scaleUp", "scaleDown"] {
            if let Some(rules) = behavior.get(direction).filter(|r| !r.is_null()) {
                scaling_rules(rules, &format!("spec.behavior.{direction}"), causes);
            }
        }
    }
}

/// A name that is required and a path segment.
fn segment_name(value: &str, field: &str, required: &str, causes: &mut Vec<Cause>) {
    if value.is_empty() {
        causes.push(Cause::required(field, required));
    }
    for problem in names::path_segment(value) {
        causes.push(names::invalid(field, value, problem));
    }
}

/// `ValidateCrossVersionObjectReference`: a kind and a name.
fn reference(reference: &Value, path: &str, causes: &mut Vec<Cause>) {
    for field in ["kind", "name"] {
        segment_name(
            text(reference, &format!("/{field}")),
            &format!("{path}.{field}"),
            "",
            causes,
        );
    }
}

/// `validateMetrics`: each metric, then an Object or External metric when
/// scaling to zero.
fn metrics(spec: &Value, min: Option<i64>, causes: &mut Vec<Cause>) {
    let list = items(spec.get("metrics"));
    for (i, metric) in list.iter().enumerate() {
        metric_spec(metric, &format!("spec.metrics[{i}]"), causes);
    }
    let scalable_to_zero = list
        .iter()
        .any(|m| matches!(text(m, "/type"), "Object" | "External"));
    if min == Some(0) && !scalable_to_zero {
        causes.push(Cause::forbidden(
            "spec.metrics",
            "must specify at least one Object or External metric to support scaling to zero replicas",
        ));
    }
}

/// `validateMetricSpec`: a known type, the first source present checked,
/// the source the type names present and no other.
fn metric_spec(metric: &Value, path: &str, causes: &mut Vec<Cause>) {
    let kind = text(metric, "/type");
    let type_path = format!("{path}.type");
    if kind.is_empty() {
        causes.push(Cause::required(
            &type_path,
            "must specify a metric source type",
        ));
    }
    if !METRIC_SOURCE_TYPES.contains(&kind) {
        causes.push(Cause::not_supported(&type_path, kind, &METRIC_SOURCE_TYPES));
    }
    let sources = [
        "object",
        "external",
        "pods",
        "resource",
        "containerResource",
    ];
    let present: Vec<&str> = sources
        .into_iter()
        .filter(|s| metric.get(*s).is_some_and(|v| !v.is_null()))
        .collect();
    if let Some(first) = present.first() {
        let source = &metric[*first];
        let at = format!("{path}.{first}");
        match *first {
            "object" => object_source(source, &at, causes),
            "external" => external_source(source, &at, causes),
            "pods" => pods_source(source, &at, causes),
            "resource" => resource_source(source, &at, false, causes),
            _ => resource_source(source, &at, true, causes),
        }
    }
    let expected = match kind {
        "Object" => "object",
        "Pods" => "pods",
        "Resource" => "resource",
        "External" => "external",
        "ContainerResource" => "containerResource",
        other => {
            causes.push(Cause::not_supported(
                &type_path,
                other,
                &METRIC_SOURCE_TYPES,
            ));
            ""
        }
    };
    if !expected.is_empty() && !present.contains(&expected) {
        causes.push(Cause::required(
            &format!("{path}.{expected}"),
            "must populate information for the given metric source",
        ));
    }
    if present.len() != 1 {
        for source in present.iter().filter(|s| **s != expected) {
            causes.push(Cause::forbidden(
                &format!("{path}.{source}"),
                "must populate the given metric source only",
            ));
        }
    }
}

/// A target's quantity at `field`, when set.
fn target_quantity<'v>(target: &'v Value, field: &str) -> Option<&'v Value> {
    target.get(field).filter(|v| !v.is_null())
}

/// `validateObjectSource`.
fn object_source(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    reference(
        source.get("describedObject").unwrap_or(&Value::Null),
        &format!("{path}.describedObject"),
        causes,
    );
    metric_identifier(source, path, causes);
    let target = metric_target(source, path, causes);
    if target_quantity(target, "value").is_none()
        && target_quantity(target, "averageValue").is_none()
    {
        causes.push(Cause::required(
            &format!("{path}.target.averageValue"),
            "must set either a target value or averageValue",
        ));
    }
}

/// `validateExternalSource`.
fn external_source(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    metric_identifier(source, path, causes);
    let target = metric_target(source, path, causes);
    let value = target_quantity(target, "value").is_some();
    let average = target_quantity(target, "averageValue").is_some();
    if !value && !average {
        causes.push(Cause::required(
            &format!("{path}.target.averageValue"),
            "must set either a target value for metric or a per-pod target",
        ));
    }
    if value && average {
        causes.push(Cause::forbidden(
            &format!("{path}.target.value"),
            "may not set both a target value for metric and a per-pod target",
        ));
    }
}

/// `validatePodsSource`.
fn pods_source(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    metric_identifier(source, path, causes);
    let target = metric_target(source, path, causes);
    if target_quantity(target, "averageValue").is_none() {
        causes.push(Cause::required(
            &format!("{path}.target.averageValue"),
            "must specify a positive target averageValue",
        ));
    }
}

/// `validateResourceSource`, and with `container`
/// `validateContainerResourceSource`: a resource name (a container's a
/// standard one), the container's name, a target of a utilization or an
/// average value.
fn resource_source(source: &Value, path: &str, container: bool, causes: &mut Vec<Cause>) {
    let name = text(source, "/name");
    let name_path = format!("{path}.name");
    if name.is_empty() {
        causes.push(Cause::required(&name_path, "must specify a resource name"));
    } else if container {
        container_resource_name(name, &name_path, causes);
    }
    if container {
        let container_name = text(source, "/container");
        let at = format!("{path}.container");
        if container_name.is_empty() {
            causes.push(Cause::required(&at, "must specify a container"));
        } else {
            for problem in names::dns1123_label(container_name) {
                causes.push(names::invalid(&at, container_name, problem));
            }
        }
    }
    let target = metric_target(source, path, causes);
    let utilization = target_quantity(target, "averageUtilization").is_some();
    let average = target_quantity(target, "averageValue").is_some();
    if !utilization && !average {
        causes.push(Cause::required(
            &format!("{path}.target.averageUtilization"),
            "must set either a target raw value or a target utilization",
        ));
    }
    if utilization && average {
        causes.push(Cause::forbidden(
            &format!("{path}.target.averageValue"),
            "may not set both a target raw value and a target utilization",
        ));
    }
}

/// `ValidateContainerResourceName` (`pkg/apis/core/v1/validation`): a
/// qualified name; unprefixed, a standard resource for containers;
/// prefixed outside `kubernetes.io`, an extended resource's name.
fn container_resource_name(name: &str, path: &str, causes: &mut Vec<Cause>) {
    let qualified = names::qualified_name(name);
    let unprefixed = !name.contains('/');
    if !qualified.is_empty() {
        for problem in qualified {
            causes.push(names::invalid(path, name, problem));
        }
    } else if unprefixed && !super::policy::standard_resource(name) {
        causes.push(names::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified".into(),
        ));
    }
    if unprefixed {
        super::policy::standard_container_resource(name, path, causes);
    } else if !name.contains("kubernetes.io/") && !super::policy::extended_resource(name) {
        causes.push(names::invalid(
            path,
            name,
            "doesn't follow extended resource name standard".into(),
        ));
    }
}

/// `validateMetricIdentifier` of a source's `metric`.
fn metric_identifier(source: &Value, path: &str, causes: &mut Vec<Cause>) {
    segment_name(
        text(source, "/metric/name"),
        &format!("{path}.metric.name"),
        "must specify a metric name",
        causes,
    );
}

/// `validateMetricTarget` of a source's `target`, which it returns.
fn metric_target<'v>(source: &'v Value, path: &str, causes: &mut Vec<Cause>) -> &'v Value {
    let target = source.get("target").unwrap_or(&Value::Null);
    let at = format!("{path}.target");
    let kind = text(target, "/type");
    if kind.is_empty() {
        causes.push(Cause::required(
            &format!("{at}.type"),
            "must specify a metric target type",
        ));
    }
    if !matches!(kind, "Utilization" | "Value" | "AverageValue") {
        causes.push(names::invalid(
            &format!("{at}.type"),
            kind,
            "must be either Utilization, Value, or AverageValue".into(),
        ));
    }
    for field in ["value", "averageValue"] {
        if let Some(value) = target_quantity(target, field) {
            let written = quantity_text(value);
            if quantity::parse(&written).is_none_or(|nanos| nanos <= 0) {
                causes.push(Cause::new(
                    &format!("{at}.{field}"),
                    "FieldValueInvalid",
                    format!("Invalid value: {}: must be positive", go_quantity(&written)),
                ));
            }
        }
    }
    if let Some(utilization) = target.get("averageUtilization").and_then(Value::as_i64)
        && utilization < 1
    {
        causes.push(Cause::invalid_number(
            &format!("{at}.averageUtilization"),
            utilization,
            "must be greater than 0",
        ));
    }
    target
}

/// `validateScalingRules`: the window, the select policy, the policies.
fn scaling_rules(rules: &Value, path: &str, causes: &mut Vec<Cause>) {
    if let Some(window) = rules
        .get("stabilizationWindowSeconds")
        .and_then(Value::as_i64)
    {
        let at = format!("{path}.stabilizationWindowSeconds");
        if window < 0 {
            causes.push(Cause::invalid_number(
                &at,
                window,
                "must be greater than or equal to zero",
            ));
        }
        if window > MAX_STABILIZATION_WINDOW_SECONDS {
            causes.push(Cause::invalid_number(
                &at,
                window,
                &format!("must be less than or equal to {MAX_STABILIZATION_WINDOW_SECONDS}"),
            ));
        }
    }
    if let Some(select) = rules.get("selectPolicy").and_then(Value::as_str)
        && !matches!(select, "Disabled" | "Max" | "Min")
    {
        causes.push(Cause::not_supported(
            &format!("{path}.selectPolicy"),
            select,
            &["Disabled", "Max", "Min"],
        ));
    }
    let policies = items(rules.get("policies"));
    if policies.is_empty() {
        causes.push(Cause::required(
            &format!("{path}.policies"),
            "must specify at least one Policy",
        ));
    }
    for (i, policy) in policies.iter().enumerate() {
        let at = format!("{path}.policies[{i}]");
        let kind = text(policy, "/type");
        if !matches!(kind, "Pods" | "Percent") {
            causes.push(Cause::not_supported(
                &format!("{at}.type"),
                kind,
                &["Percent", "Pods"],
            ));
        }
        let number = |field: &str| policy.get(field).and_then(Value::as_i64).unwrap_or(0);
        let value = number("value");
        if value <= 0 {
            causes.push(Cause::invalid_number(
                &format!("{at}.value"),
                value,
                "must be greater than zero",
            ));
        }
        let period = number("periodSeconds");
        if period <= 0 {
            causes.push(Cause::invalid_number(
                &format!("{at}.periodSeconds"),
                period,
                "must be greater than zero",
            ));
        }
        if period > MAX_PERIOD_SECONDS {
            causes.push(Cause::invalid_number(
                &format!("{at}.periodSeconds"),
                period,
                &format!("must be less than or equal to {MAX_PERIOD_SECONDS}"),
            ));
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(object: &Value, old: Option<&Value>) -> Vec<String> {
        let mut causes = Vec::new();
        validate(object, old, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    /// An autoscaler as defaulting leaves it, with `spec` fields replaced.
    fn hpa(fields: Value) -> Value {
        let mut spec = json!({
            "scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
            "minReplicas": 1, "maxReplicas": 5,
            "metrics": [{"type": "Resource", "resource": {"name": "cpu",
                "target": {"type": "Utilization", "averageUtilization": 80}}}],
        });
        for (field, value) in fields.as_object().unwrap() {
            spec[field] = value.clone();
        }
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    #[test]
    fn a_defaulted_autoscaler_is_valid() {
        assert!(messages(&hpa(json!({})), None).is_empty());
        let mut defaulted = json!({"spec": {"scaleTargetRef": {"kind": "Deployment", "name": "web"},
            "maxReplicas": 3, "behavior": {"scaleDown": {"stabilizationWindowSeconds": 60}}}});
        crate::store::defaults::apply("autoscaling", "HorizontalPodAutoscaler", &mut defaulted);
        assert!(messages(&defaulted, None).is_empty());
    }

    #[test]
    fn replicas_are_bounded_and_the_target_named() {
        let bad = hpa(json!({"minReplicas": 0, "maxReplicas": 0,
            "scaleTargetRef": {"kind": "", "name": "a/b%c"}}));
        assert_eq!(
            messages(&bad, None),
            [
                "spec.minReplicas: Invalid value: 0: must be greater than or equal to 1",
                "spec.maxReplicas: Invalid value: 0: must be greater than 0",
                "spec.scaleTargetRef.kind: Required value",
                "spec.scaleTargetRef.name: Invalid value: \"a/b%c\": may not contain '/'",
                "spec.scaleTargetRef.name: Invalid value: \"a/b%c\": may not contain '%'",
                "spec.metrics: Forbidden: must specify at least one Object or External metric to support scaling to zero replicas",
            ]
        );
        assert_eq!(
            messages(&hpa(json!({"minReplicas": 4, "maxReplicas": 3})), None),
            ["spec.maxReplicas: Invalid value: 3: must be greater than or equal to `minReplicas`"]
        );
        // An autoscaler stored at zero may stay there (with an Object metric).
        let zero = hpa(
            json!({"minReplicas": 0, "metrics": [{"type": "Object", "object": {
            "describedObject": {"kind": "Service", "name": "q"}, "metric": {"name": "depth"},
            "target": {"type": "Value", "value": "10"}}}]}),
        );
        assert_eq!(
            messages(&zero, None),
            ["spec.minReplicas: Invalid value: 0: must be greater than or equal to 1"]
        );
        assert!(messages(&zero, Some(&zero)).is_empty());
        assert_eq!(
            messages(&zero, Some(&hpa(json!({})))).len(),
            1,
            "an update from a minimum of 1"
        );
    }

    #[test]
    fn a_metric_has_its_types_source_and_no_other() {
        let bad = hpa(json!({"metrics": [
            {"type": "Pods", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}}},
            {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": 50}},
             "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "1"}}},
            {"type": "Custom"},
            {},
        ]}));
        assert_eq!(
            messages(&bad, None),
            [
                "spec.metrics[0].pods: Required value: must populate information for the given metric source",
                "spec.metrics[1].pods: Forbidden: must populate the given metric source only",
                "spec.metrics[2].type: Unsupported value: \"Custom\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
                "spec.metrics[2].type: Unsupported value: \"Custom\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
                "spec.metrics[3].type: Required value: must specify a metric source type",
                "spec.metrics[3].type: Unsupported value: \"\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
                "spec.metrics[3].type: Unsupported value: \"\": supported values: \"ContainerResource\", \"External\", \"Object\", \"Pods\", \"Resource\"",
            ]
        );
    }

    #[test]
    fn targets_are_of_a_known_type_with_positive_values() {
        let bad = hpa(json!({"metrics": [
            {"type": "Resource", "resource": {"name": "", "target": {"type": "Ratio", "averageUtilization": 0}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue"}}},
            {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue",
                "averageValue": "1Gi", "averageUtilization": 50}}},
            {"type": "Pods", "pods": {"metric": {"name": ""}, "target": {"type": "AverageValue", "averageValue": "0"}}},
            {"type": "Object", "object": {"describedObject": {"kind": "Ingress", "name": "main"},
                "metric": {"name": "rps"}, "target": {"type": "Value"}}},
            {"type": "External", "external": {"metric": {"name": "queue"},
                "target": {"type": "Value", "value": "-1", "averageValue": "100m"}}},
        ]}));
        assert_eq!(
            messages(&bad, None),
            [
                "spec.metrics[0].resource.name: Required value: must specify a resource name",
                "spec.metrics[0].resource.target.type: Invalid value: \"Ratio\": must be either Utilization, Value, or AverageValue",
                "spec.metrics[0].resource.target.averageUtilization: Invalid value: 0: must be greater than 0",
                "spec.metrics[1].resource.target.averageUtilization: Required value: must set either a target raw value or a target utilization",
                "spec.metrics[2].resource.target.averageValue: Forbidden: may not set both a target raw value and a target utilization",
                "spec.metrics[3].pods.metric.name: Required value: must specify a metric name",
                "spec.metrics[3].pods.target.averageValue: Invalid value: resource.Quantity{i:resource.int64Amount{value:0, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"0\", Format:\"DecimalSI\"}: must be positive",
                "spec.metrics[4].object.target.averageValue: Required value: must set either a target value or averageValue",
                "spec.metrics[5].external.target.value: Invalid value: resource.Quantity{i:resource.int64Amount{value:-1, scale:0}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"-1\", Format:\"DecimalSI\"}: must be positive",
                "spec.metrics[5].external.target.value: Forbidden: may not set both a target value for metric and a per-pod target",
            ]
        );
    }

    #[test]
    fn a_container_resource_names_a_container_and_a_container_resource() {
        let bad = hpa(json!({"metrics": [
            {"type": "ContainerResource", "containerResource": {"name": "pods", "container": "",
                "target": {"type": "Utilization", "averageUtilization": 60}}},
            {"type": "ContainerResource", "containerResource": {"name": "cpu", "container": "App_1",
                "target": {"type": "Utilization", "averageUtilization": 60}}},
        ]}));
        assert_eq!(
            messages(&bad, None),
            [
                "spec.metrics[0].containerResource.name: Invalid value: \"pods\": must be a standard resource for containers",
                "spec.metrics[0].containerResource.container: Required value: must specify a container",
                "spec.metrics[1].containerResource.container: Invalid value: \"App_1\": a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
            ]
        );
    }

    #[test]
    fn a_behaviors_rules_are_bounded() {
        let bad = hpa(json!({"behavior": {
            "scaleUp": {"stabilizationWindowSeconds": -1, "selectPolicy": "Avg", "policies": []},
            "scaleDown": {"stabilizationWindowSeconds": 3601, "policies": [
                {"type": "Share", "value": 0, "periodSeconds": 0},
                {"type": "Pods", "value": 1, "periodSeconds": 1801}]},
        }}));
        assert_eq!(
            messages(&bad, None),
            [
                "spec.behavior.scaleUp.stabilizationWindowSeconds: Invalid value: -1: must be greater than or equal to zero",
                "spec.behavior.scaleUp.selectPolicy: Unsupported value: \"Avg\": supported values: \"Disabled\", \"Max\", \"Min\"",
                "spec.behavior.scaleUp.policies: Required value: must specify at least one Policy",
                "spec.behavior.scaleDown.stabilizationWindowSeconds: Invalid value: 3601: must be less than or equal to 3600",
                "spec.behavior.scaleDown.policies[0].type: Unsupported value: \"Share\": supported values: \"Percent\", \"Pods\"",
                "spec.behavior.scaleDown.policies[0].value: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleDown.policies[0].periodSeconds: Invalid value: 0: must be greater than zero",
                "spec.behavior.scaleDown.policies[1].periodSeconds: Invalid value: 1801: must be less than or equal to 1800",
            ]
        );
    }
}
