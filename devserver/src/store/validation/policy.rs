//! The validation of PodDisruptionBudgets, PriorityClasses, ResourceQuotas
//! and LimitRanges, as kube-apiserver's `pkg/apis/policy/validation`,
//! `pkg/apis/scheduling/validation` and `pkg/apis/core/validation` word it:
//! a PodDisruptionBudget's `minAvailable` and `maxUnavailable` (not both,
//! each a non-negative integer or a percentage up to 100%), its selector
//! (whose expression values may stay invalid on an update of a budget
//! whose selector already was) and unhealthy pod eviction policy
//! (`ValidatePodDisruptionBudgetSpec`, on create and update alike); a
//! PriorityClass's value (at most 1000000000 unless a known system class),
//! `system-` names, preemption policy, and on update its value and
//! preemption policy unchanged (`ValidatePriorityClass`,
//! `ValidatePriorityClassUpdate`); a ResourceQuota's hard resource names
//! and quantities, scopes and scope selector (`ValidateResourceQuotaSpec`;
//! the strategy clears the status before the server validates it);
//! a LimitRange's item types and resource names, and the order of their
//! minima, defaults and maxima (`ValidateLimitRange`).
//!
//! A quantity the server shows as a `resource.Quantity` value (whose
//! `String` method takes a pointer) shows in Go's `%#v`
//! ([`go_quantity`]); a map's entries are checked in key order, where the
//! server's Go map order is random.

use std::collections::BTreeSet;

use serde_json::Value;

use super::workload::IntOrPercent;
use super::{Cause, items, label_selector, names, quantity, text};

/// The causes of `object`, a PodDisruptionBudget, PriorityClass, ResourceQuota or LimitRange, created (`old` none) or updated from
/// `old`, in the order upstream's validation of each kind reports them.
pub(super) fn validate(kind: &str, object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    match kind {
        "PodDisruptionBudget" => pod_disruption_budget(object, old, causes),
        "PriorityClass" => priority_class(object, old, causes),
        "ResourceQuota" => resource_quota(object, causes),
        "LimitRange" => limit_range(object, causes),
        _ => {}
    }
}

/// The text of a quantity as written (a string, or a JSON number).
pub(super) fn quantity_text(value: &Value) -> String {
    match value {
        Value::String(text) => text.clone(),
        other => other.to_string(),
    }
}

/// Go's `%#v` of the `resource.Quantity` that `ParseQuantity` makes of
/// `written`: its integer amount and scale, the text it keeps when the
/// text is already canonical, and its format. A quantity beyond the
/// integer form (more than 18 digits, below nano units) keeps an `inf.Dec`
/// whose address no one can know; it shows as `(*inf.Dec)(...)`.
pub(super) fn go_quantity(written: &str) -> String {
    let shown = |value: i64, scale: i32, cached: &str, format: &str| {
        format!(
            "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{cached:?}, Format:{format:?}}}"
        )
    };
    if written == "0" {
        return shown(0, 0, "0", "DecimalSI");
    }
    let (positive, rest) = match written.as_bytes().first() {
        Some(b'-') => (false, &written[1..]),
        Some(b'+') => (true, &written[1..]),
        _ => (true, written),
    };
    let rest = rest.trim_start_matches('0');
    let digits_end = rest
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(rest.len());
    let (mut num, rest) = rest.split_at(digits_end);
    if num.is_empty() {
        num = "0";
    }
    let (denom, suffix) = match rest.strip_prefix('.') {
        Some(after) => {
            let end = after
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after.len());
            after.split_at(end)
        }
        None => ("", rest),
    };
    let (exponent, format): (i32, &str) = match suffix {
        "" => (0, "DecimalSI"),
        "n" => (-9, "DecimalSI"),
        "u" => (-6, "DecimalSI"),
        "m" => (-3, "DecimalSI"),
        "k" => (3, "DecimalSI"),
        "M" => (6, "DecimalSI"),
        "G" => (9, "DecimalSI"),
        "T" => (12, "DecimalSI"),
        "P" => (15, "DecimalSI"),
        "E" => (18, "DecimalSI"),
        "Ki" => (10, "BinarySI"),
        "Mi" => (20, "BinarySI"),
        "Gi" => (30, "BinarySI"),
        "Ti" => (40, "BinarySI"),
        "Pi" => (50, "BinarySI"),
        "Ei" => (60, "BinarySI"),
        other => (
            other[1.min(other.len())..].parse().unwrap_or(0),
            "DecimalExponent",
        ),
    };
    let digits = (num.len() + denom.len()) as i32;
    let (precision, mut scale, mantissa) = if format == "BinarySI" {
        if denom.is_empty() {
            let precision = 15 - num.len() as i32 - (exponent as f32 * 3.0 / 10.0) as i32 - 1;
            (precision, 0, 1i64 << exponent)
        } else {
            (-1, 0, 1)
        }
    } else {
        (18 - digits, exponent, 1)
    };
    if precision >= 0 {
        scale -= denom.len() as i32;
        let shifted = format!("{num}{denom}");
        if scale >= -9
            && let Ok(value) = shifted.parse::<i64>()
            && let Some(result) = value.checked_mul(mantissa)
        {
            let result = if positive { result } else { -result };
            let canonical = if format == "BinarySI" {
                exponent % 10 == 0 && value & 0x07 != 0
            } else {
                scale % 3 == 0 && !shifted.ends_with("000") && !shifted.starts_with('0')
            };
            return shown(result, scale, if canonical { written } else { "" }, format);
        }
    }
    format!(
        "resource.Quantity{{i:resource.int64Amount{{value:0, scale:0}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(...)}}, s:\"\", Format:{format:?}}}"
    )
}

/// `ValidatePodDisruptionBudgetSpec`, which an update runs too, letting
/// the selector's expression values stay invalid when the stored budget's
/// selector has a problem (`AllowInvalidLabelValueInSelector`).
fn pod_disruption_budget(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let set = |field: &str| spec.get(field).filter(|v| !v.is_null());
    let (min, max) = (set("minAvailable"), set("maxUnavailable"));
    if min.is_some() && max.is_some() {
        // The whole spec, whose Go form has pointer addresses.
        causes.push(Cause::new(
            "spec",
            "FieldValueInvalid",
            "Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set".into(),
        ));
    }
    for (field, value) in [("minAvailable", min), ("maxUnavailable", max)] {
        if let Some(value) = value {
            let bound = IntOrPercent::of(Some(value));
            bound.check(&format!("spec.{field}"), causes);
            bound.at_most_all(&format!("spec.{field}"), causes);
        }
    }
    let selector_problems = |object: &Value| {
        let mut found = Vec::new();
        if let Some(selector) = object.pointer("/spec/selector").filter(|s| !s.is_null()) {
            label_selector::label_selector(selector, "spec.selector", &mut found);
        }
        found
    };
    let allow_invalid_values = old.is_some_and(|old| !selector_problems(old).is_empty());
    causes.extend(selector_problems(object).into_iter().filter(|cause| {
        // An expression value's cause is at `...matchExpressions[i].values[j]`.
        !(allow_invalid_values
            && cause.field.contains(".matchExpressions[")
            && cause.field.ends_with(']')
            && cause.field.contains(".values["))
    }));
    if let Some(policy) = spec
        .get("unhealthyPodEvictionPolicy")
        .and_then(Value::as_str)
        && !matches!(policy, "AlwaysAllow" | "IfHealthyBudget")
    {
        causes.push(Cause::not_supported(
            "spec.unhealthyPodEvictionPolicy",
            policy,
            &["AlwaysAllow", "IfHealthyBudget"],
        ));
    }
}

/// The highest priority a user's class may have.
const HIGHEST_USER_DEFINABLE_PRIORITY: i64 = 1_000_000_000;

/// The system's priority classes: name and value (neither is the global
/// default).
const SYSTEM_PRIORITY_CLASSES: [(&str, i64); 2] = [
    (
        "system-node-critical",
        2 * HIGHEST_USER_DEFINABLE_PRIORITY + 1000,
    ),
    (
        "system-cluster-critical",
        2 * HIGHEST_USER_DEFINABLE_PRIORITY,
    ),
];

/// `ValidatePriorityClass`, then on update `ValidatePriorityClassUpdate`.
fn priority_class(object: &Value, old: Option<&Value>, causes: &mut Vec<Cause>) {
    let name = text(object, "/metadata/name");
    let value = object.get("value").and_then(Value::as_i64).unwrap_or(0);
    let global_default = object
        .get("globalDefault")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if name.starts_with("system-") {
        // `IsKnownSystemPriorityClass`.
        let problem = match SYSTEM_PRIORITY_CLASSES.iter().find(|(n, _)| *n == name) {
            None => Some(format!("{name} is not a known system priority class")),
            Some((_, known)) if *known != value => {
                Some(format!("value of {name} PriorityClass must be {known}"))
            }
            Some(_) if global_default => Some(format!(
                "globalDefault of {name} PriorityClass must be false"
            )),
            Some(_) => None,
        };
        if let Some(problem) = problem {
            causes.push(Cause::forbidden(
                "metadata.name",
                &format!(
                    "priority class names with 'system-' prefix are reserved for system use only. error: {problem}"
                ),
            ));
        }
    } else if value > HIGHEST_USER_DEFINABLE_PRIORITY {
        causes.push(Cause::forbidden(
            "value",
            &format!(
                "maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE_PRIORITY}"
            ),
        ));
    }
    let policy = object.get("preemptionPolicy").and_then(Value::as_str);
    match policy {
        None | Some("PreemptLowerPriority" | "Never") => {}
        Some("") => causes.push(Cause::required("preemptionPolicy", "")),
        Some(other) => causes.push(Cause::not_supported(
            "preemptionPolicy",
            other,
            &["PreemptLowerPriority", "Never"],
        )),
    }
    let Some(old) = old else {
        return;
    };
    if old.get("value").and_then(Value::as_i64).unwrap_or(0) != value {
        causes.push(Cause::forbidden(
            "value",
            "may not be changed in an update.",
        ));
    }
    let old_policy = old.get("preemptionPolicy").and_then(Value::as_str);
    if old_policy != policy {
        let shown = policy.map_or("null".to_string(), |p| format!("{p:?}"));
        causes.push(Cause::new(
            "preemptionPolicy",
            "FieldValueInvalid",
            format!("Invalid value: {shown}: field is immutable"),
        ));
    }
}

/// `IsStandardResourceName`: a resource the API names, or a huge page
/// size's (`IsQuotaHugePageResourceName`).
pub(super) fn standard_resource(name: &str) -> bool {
    const STANDARD: [&str; 20] = [
        "cpu",
        "memory",
        "ephemeral-storage",
        "requests.cpu",
        "requests.memory",
        "requests.ephemeral-storage",
        "limits.cpu",
        "limits.memory",
        "limits.ephemeral-storage",
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "storage",
        "requests.storage",
        "services.nodeports",
        "services.loadbalancers",
    ];
    STANDARD.contains(&name) || huge_pages(name)
}

/// `IsQuotaHugePageResourceName`.
fn huge_pages(name: &str) -> bool {
    name.starts_with("hugepages-") || name.starts_with("requests.hugepages-")
}

/// `IsNativeResource`: unprefixed, or in `kubernetes.io`.
fn native(name: &str) -> bool {
    !name.contains('/') || name.contains("kubernetes.io/")
}

/// `IsExtendedResourceName`: not native, not a request's quota name, and
/// a qualified name as one.
pub(super) fn extended_resource(name: &str) -> bool {
    !native(name)
        && !name.starts_with("requests.")
        && names::qualified_name(&format!("requests.{name}")).is_empty()
}

/// `IsStandardQuotaResourceName`: a standard resource but `storage`.
fn standard_quota_resource(name: &str) -> bool {
    name != "storage" && standard_resource(name)
}

/// `IsIntegerResourceName`: object counts and extended resources.
fn integer_resource(name: &str) -> bool {
    const INTEGER: [&str; 9] = [
        "pods",
        "resourcequotas",
        "services",
        "replicationcontrollers",
        "secrets",
        "configmaps",
        "persistentvolumeclaims",
        "services.nodeports",
        "services.loadbalancers",
    ];
    INTEGER.contains(&name) || extended_resource(name)
}

/// `validateResourceName`: a qualified name; unprefixed, a standard
/// resource.
fn resource_name(name: &str, path: &str, causes: &mut Vec<Cause>) {
    let problems = names::qualified_name(name);
    if !problems.is_empty() {
        for problem in problems {
            causes.push(names::invalid(path, name, problem));
        }
        return;
    }
    if !name.contains('/') && !standard_resource(name) {
        causes.push(names::invalid(
            path,
            name,
            "must be a standard resource type or fully qualified".into(),
        ));
    }
}

/// The quantities of a map field, by resource name.
fn quantities(map: Option<&Value>) -> Vec<(&str, String)> {
    map.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(name, value)| (name.as_str(), quantity_text(value)))
        .collect()
}

/// A quantity as `Quantity.String()` writes it.
fn canonical(written: &str) -> String {
    quantity::canonical(written).unwrap_or_else(|| written.to_string())
}

/// A quantity in nano units.
fn nanos(written: &str) -> i128 {
    quantity::parse(written).unwrap_or(0)
}

/// The scopes a ResourceQuota may name (`IsStandardResourceQuotaScope`;
/// `VolumeAttributesClass` is behind a gate that is off).
const SCOPES: [&str; 6] = [
    "Terminating",
    "NotTerminating",
    "BestEffort",
    "NotBestEffort",
    "PriorityClass",
    "CrossNamespacePodAffinity",
];

/// `IsResourceQuotaScopeValidForResource`.
fn scope_valid_for(scope: &str, resource: &str) -> bool {
    let compute = matches!(
        resource,
        "cpu" | "memory" | "limits.cpu" | "limits.memory" | "requests.cpu" | "requests.memory"
    );
    match scope {
        "Terminating"
        | "NotTerminating"
        | "NotBestEffort"
        | "PriorityClass"
        | "CrossNamespacePodAffinity" => resource == "pods" || compute,
        "BestEffort" => resource == "pods",
        _ => true,
    }
}

/// Go's `%#v` of a `[]core.ResourceQuotaScope`.
fn go_scopes(scopes: &[&str]) -> String {
    if scopes.is_empty() {
        return "[]core.ResourceQuotaScope(nil)".into();
    }
    let shown: Vec<String> = scopes.iter().map(|s| format!("{s:?}")).collect();
    format!("[]core.ResourceQuotaScope{{{}}}", shown.join(", "))
}

/// Go's `%#v` of a `core.ScopeSelector`.
fn go_scope_selector(selector: &Value) -> String {
    let expressions = match selector.get("matchExpressions").and_then(Value::as_array) {
        None => "[]core.ScopedResourceSelectorRequirement(nil)".to_string(),
        Some(list) => {
            let shown: Vec<String> = list
                .iter()
                .map(|e| {
                    format!(
                        "core.ScopedResourceSelectorRequirement{{ScopeName:{:?}, Operator:{:?}, Values:{}}}",
                        text(e, "/scopeName"),
                        text(e, "/operator"),
                        super::go_strings("[]string", &super::strings(e.get("values")))
                    )
                })
                .collect();
            format!(
                "[]core.ScopedResourceSelectorRequirement{{{}}}",
                shown.join(", ")
            )
        }
    };
    format!("core.ScopeSelector{{MatchExpressions:{expressions}}}")
}

/// Whether `scopes` holds both of a pair that cannot go together.
fn conflicting(scopes: &BTreeSet<&str>) -> usize {
    [
        ("BestEffort", "NotBestEffort"),
        ("Terminating", "NotTerminating"),
    ]
    .iter()
    .filter(|(a, b)| scopes.contains(a) && scopes.contains(b))
    .count()
}

/// `ValidateResourceQuotaSpec`: each hard limit's name and quantity, then
/// the scopes and the scope selector.
fn resource_quota(object: &Value, causes: &mut Vec<Cause>) {
    let spec = object.get("spec").unwrap_or(&Value::Null);
    let hard = quantities(spec.get("hard"));
    for (name, written) in &hard {
        let path = format!("spec.hard[{name}]");
        // `ValidateResourceQuotaResourceName`.
        resource_name(name, &path, causes);
        if !name.contains('/') && !standard_quota_resource(name) {
            causes.push(names::invalid(
                &path,
                name,
                "must be a standard resource for quota".into(),
            ));
        }
        // `ValidateResourceQuantityValue`.
        let amount = nanos(written);
        if amount < 0 {
            causes.push(names::invalid(
                &path,
                &canonical(written),
                "must be greater than or equal to 0".into(),
            ));
        }
        if integer_resource(name) && (amount / 1_000_000) % 1000 != 0 {
            causes.push(Cause::new(
                &path,
                "FieldValueInvalid",
                format!(
                    "Invalid value: {}: must be an integer",
                    go_quantity(written)
                ),
            ));
        }
    }
    let scopes = super::strings(spec.get("scopes"));
    let limited: Vec<&str> = hard
        .iter()
        .map(|(name, _)| *name)
        .filter(|name| standard_quota_resource(name))
        .collect();
    // `validateResourceQuotaScopes`.
    if !scopes.is_empty() {
        let invalid = |detail: &str| {
            Cause::new(
                "spec.scopes",
                "FieldValueInvalid",
                format!("Invalid value: {}: {detail}", go_scopes(&scopes)),
            )
        };
        for scope in &scopes {
            if !SCOPES.contains(scope) {
                causes.push(invalid("unsupported scope"));
            }
            for resource in &limited {
                if !scope_valid_for(scope, resource) {
                    causes.push(invalid("unsupported scope applied to resource"));
                }
            }
        }
        for _ in 0..conflicting(&scopes.iter().copied().collect()) {
            causes.push(invalid("conflicting scopes"));
        }
    }
    // `validateScopedResourceSelectorRequirement`.
    let Some(selector) = spec.get("scopeSelector").filter(|s| !s.is_null()) else {
        return;
    };
    let at = "spec.scopeSelector.matchExpressions";
    let mut named = BTreeSet::new();
    for requirement in items(selector.get("matchExpressions")) {
        let scope = text(requirement, "/scopeName");
        if !SCOPES.contains(&scope) {
            causes.push(names::invalid(
                &format!("{at}.scopeName"),
                scope,
                "unsupported scope".into(),
            ));
        }
        for resource in &limited {
            if !scope_valid_for(scope, resource) {
                causes.push(Cause::new(
                    at,
                    "FieldValueInvalid",
                    format!(
                        "Invalid value: {}: unsupported scope applied to resource",
                        go_scope_selector(selector)
                    ),
                ));
            }
        }
        let operator = text(requirement, "/operator");
        if matches!(
            scope,
            "BestEffort"
                | "NotBestEffort"
                | "Terminating"
                | "NotTerminating"
                | "CrossNamespacePodAffinity"
        ) && operator != "Exists"
        {
            causes.push(names::invalid(
                &format!("{at}.operator"),
                operator,
                "must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity".into(),
            ));
        }
        let values = super::strings(requirement.get("values"));
        match operator {
            "In" | "NotIn" if values.is_empty() => causes.push(Cause::required(
                &format!("{at}.values"),
                "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => causes.push(super::invalid_list(
                &format!("{at}.values"),
                &values,
                "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            other => causes.push(names::invalid(
                &format!("{at}.operator"),
                other,
                "not a valid selector operator".into(),
            )),
        }
        named.insert(scope);
    }
    for _ in 0..conflicting(&named) {
        causes.push(Cause::new(
            at,
            "FieldValueInvalid",
            format!("Invalid value: {}: conflicting scopes", go_scopes(&scopes)),
        ));
    }
}

/// `ValidateLimitRange`: each item's type, once; its resource names; no
/// defaults on a Pod's item; a claim's item with a storage bound; then
/// for each resource the order of its minimum, default request, default
/// and maximum, its ratio, and an equal default and default request where
/// the resource cannot be overcommitted.
fn limit_range(object: &Value, causes: &mut Vec<Cause>) {
    let mut types = BTreeSet::new();
    for (i, item) in items(object.pointer("/spec/limits")).iter().enumerate() {
        let at = format!("spec.limits[{i}]");
        let kind = text(item, "/type");
        // `validateLimitRangeTypeName`.
        let problems = names::qualified_name(kind);
        let qualified = problems.is_empty();
        for problem in problems {
            causes.push(names::invalid(&format!("{at}.type"), kind, problem));
        }
        if qualified
            && !kind.contains('/')
            && !matches!(kind, "Pod" | "Container" | "PersistentVolumeClaim")
        {
            causes.push(names::invalid(
                &format!("{at}.type"),
                kind,
                "must be a standard limit type or fully qualified".into(),
            ));
        }
        if !types.insert(kind) {
            causes.push(Cause::duplicate(&format!("{at}.type"), kind));
        }
        let mut keys = BTreeSet::new();
        let mut read = |field: &str, causes: &mut Vec<Cause>| {
            let found = quantities(item.get(field));
            for (name, _) in &found {
                limit_resource_name(kind, name, &format!("{at}.{field}[{name}]"), causes);
                keys.insert(*name);
            }
            found
        };
        let max = read("max", causes);
        let min = read("min", causes);
        let (mut defaults, mut requests) = (Vec::new(), Vec::new());
        if kind == "Pod" {
            for field in ["default", "defaultRequest"] {
                if item
                    .get(field)
                    .and_then(Value::as_object)
                    .is_some_and(|m| !m.is_empty())
                {
                    causes.push(Cause::forbidden(
                        &format!("{at}.{field}"),
                        "may not be specified when `type` is 'Pod'",
                    ));
                }
            }
        } else {
            defaults = read("default", causes);
            requests = read("defaultRequest", causes);
        }
        if kind == "PersistentVolumeClaim"
            && !min.iter().chain(&max).any(|(name, _)| *name == "storage")
        {
            causes.push(Cause::required(
                &format!("{at}.limits"),
                "either minimum or maximum storage value is required, but neither was provided",
            ));
        }
        let ratios = read("maxLimitRequestRatio", causes);
        let find = |list: &[(&str, String)], key: &str| {
            list.iter()
                .find(|(name, _)| *name == key)
                .map(|(_, written)| written.clone())
        };
        for key in keys {
            let (min, max) = (find(&min, key), find(&max, key));
            let (default, request) = (find(&defaults, key), find(&requests, key));
            let ratio = find(&ratios, key);
            let invalid = |field: &str, shown: &str, detail: String| {
                Cause::new(
                    &format!("{at}.{field}[{key}]"),
                    "FieldValueInvalid",
                    format!("Invalid value: {}: {detail}", go_quantity(shown)),
                )
            };
            let s = |written: &String| canonical(written);
            let greater = |a: &String, b: &String| nanos(a) > nanos(b);
            // Each pair that must be ordered, as upstream checks them in
            // turn: the field the cause names, the value it shows, and how
            // its message names the two.
            let ordered = [
                (&min, &max, "min", &min, "min value", "max value"),
                (
                    &min,
                    &request,
                    "defaultRequest",
                    &request,
                    "min value",
                    "default request value",
                ),
                (
                    &request,
                    &max,
                    "defaultRequest",
                    &request,
                    "default request value",
                    "max value",
                ),
                (
                    &request,
                    &default,
                    "defaultRequest",
                    &request,
                    "default request value",
                    "default limit value",
                ),
                (
                    &min,
                    &default,
                    "default",
                    &min,
                    "min value",
                    "default value",
                ),
                (
                    &default,
                    &max,
                    "default",
                    &max,
                    "default value",
                    "max value",
                ),
            ];
            for (low, high, field, shown, low_name, high_name) in ordered {
                if let (Some(low), Some(high), Some(shown)) = (low, high, shown)
                    && greater(low, high)
                {
                    causes.push(invalid(
                        field,
                        shown,
                        format!(
                            "{low_name} {} is greater than {high_name} {}",
                            s(low),
                            s(high)
                        ),
                    ));
                }
            }
            if let Some(ratio) = &ratio {
                if nanos(ratio) < 1_000_000_000 {
                    causes.push(invalid(
                        "maxLimitRequestRatio",
                        ratio,
                        format!("ratio {} is less than 1", s(ratio)),
                    ));
                }
                if let (Some(min), Some(max)) = (&min, &max) {
                    // In milli units, as the server compares them.
                    let milli = |w: &String| {
                        let n = nanos(w);
                        (n / 1_000_000 + i128::from(n % 1_000_000 > 0)) as f64
                    };
                    let limit = milli(max) / milli(min);
                    if milli(ratio) / 1000.0 > limit {
                        causes.push(invalid(
                            "maxLimitRequestRatio",
                            ratio,
                            format!("ratio {} is greater than max/min = {limit:.6}", s(ratio)),
                        ));
                    }
                }
            }
            if let (Some(default), Some(request)) = (&default, &request)
                && !overcommit_allowed(key)
                && nanos(default) != nanos(request)
            {
                causes.push(invalid(
                    "defaultRequest",
                    request,
                    format!(
                        "default value {} must equal to defaultRequest value {} in {key}",
                        s(default),
                        s(request)
                    ),
                ));
            }
        }
    }
}

/// `IsOvercommitAllowed`: a native resource that is not huge pages.
fn overcommit_allowed(name: &str) -> bool {
    native(name) && !name.starts_with("hugepages-")
}

/// An unprefixed resource name of a container: `cpu`, `memory`,
/// `ephemeral-storage` or a huge page size (`IsStandardContainerResourceName`).
pub(super) fn standard_container_resource(name: &str, path: &str, causes: &mut Vec<Cause>) {
    let standard =
        matches!(name, "cpu" | "memory" | "ephemeral-storage") || name.starts_with("hugepages-");
    if !standard {
        causes.push(names::invalid(
            path,
            name,
            "must be a standard resource for containers".into(),
        ));
    }
}

/// `validateLimitRangeResourceName`: a container's or Pod's resource is a
/// container resource (`validateContainerResourceName`), others a resource
/// name (`validateResourceName`).
fn limit_resource_name(kind: &str, name: &str, path: &str, causes: &mut Vec<Cause>) {
    if !matches!(kind, "Pod" | "Container") {
        resource_name(name, path, causes);
        return;
    }
    resource_name(name, path, causes);
    if !name.contains('/') {
        standard_container_resource(name, path, causes);
    } else if !native(name) && !extended_resource(name) {
        causes.push(names::invalid(
            path,
            name,
            "doesn't follow extended resource name standard".into(),
        ));
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn messages(kind: &str, object: &Value, old: Option<&Value>) -> Vec<String> {
        let mut causes = Vec::new();
        validate(kind, object, old, &mut causes);
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn quantities_show_as_go_shows_a_parsed_quantity() {
        let shown = |value: i64, scale: i32, s: &str, format: &str| {
            format!(
                "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{s:?}, Format:{format:?}}}"
            )
        };
        assert_eq!(go_quantity("0"), shown(0, 0, "0", "DecimalSI"));
        assert_eq!(go_quantity("-1"), shown(-1, 0, "-1", "DecimalSI"));
        assert_eq!(go_quantity("0m"), shown(0, -3, "", "DecimalSI"));
        assert_eq!(go_quantity("-100m"), shown(-100, -3, "-100m", "DecimalSI"));
        assert_eq!(go_quantity("-1000m"), shown(-1000, -3, "", "DecimalSI"));
        assert_eq!(go_quantity("1.5"), shown(15, -1, "", "DecimalSI"));
        assert_eq!(go_quantity("-1Ki"), shown(-1024, 0, "-1Ki", "BinarySI"));
        assert_eq!(go_quantity("1024Ki"), shown(1048576, 0, "", "BinarySI"));
        assert_eq!(go_quantity("2e3"), shown(2, 3, "2e3", "DecimalExponent"));
    }

    fn pdb(spec: Value) -> Value {
        json!({"metadata": {"name": "web"}, "spec": spec})
    }

    #[test]
    fn a_budget_sets_one_bound_an_integer_or_a_percentage() {
        let ok = pdb(
            json!({"minAvailable": "50%", "selector": {"matchLabels": {"app": "web"}},
            "unhealthyPodEvictionPolicy": "AlwaysAllow"}),
        );
        assert!(messages("PodDisruptionBudget", &ok, None).is_empty());
        let bad = pdb(json!({"minAvailable": -1, "maxUnavailable": "150%",
            "selector": {"matchLabels": {"app": "web!"}}, "unhealthyPodEvictionPolicy": "Never"}));
        assert_eq!(
            messages("PodDisruptionBudget", &bad, None),
            [
                "spec: Invalid value: policy.PodDisruptionBudgetSpec{...}: minAvailable and maxUnavailable cannot be both set",
                "spec.minAvailable: Invalid value: -1: must be greater than or equal to 0",
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"150%\"}: must not be greater than 100%",
                "spec.selector.matchLabels: Invalid value: \"web!\": a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
                "spec.unhealthyPodEvictionPolicy: Unsupported value: \"Never\": supported values: \"AlwaysAllow\", \"IfHealthyBudget\"",
            ]
        );
        assert_eq!(
            messages(
                "PodDisruptionBudget",
                &pdb(json!({"maxUnavailable": "half"})),
                None
            ),
            [
                "spec.maxUnavailable: Invalid value: intstr.IntOrString{Type:1, IntVal:0, StrVal:\"half\"}: a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')"
            ]
        );
    }

    #[test]
    fn an_update_keeps_invalid_expression_values_the_stored_selector_had() {
        let selector = |value: &str| {
            pdb(json!({"minAvailable": 1, "selector": {"matchExpressions": [
                {"key": "app", "operator": "In", "values": [value]}]}}))
        };
        let bad = selector("a b");
        assert_eq!(messages("PodDisruptionBudget", &bad, None).len(), 1);
        assert_eq!(
            messages("PodDisruptionBudget", &bad, Some(&selector("ok"))).len(),
            1
        );
        assert!(messages("PodDisruptionBudget", &bad, Some(&selector("c d"))).is_empty());
        // An update may change the bounds (since 1.15).
        assert!(
            messages(
                "PodDisruptionBudget",
                &selector("ok"),
                Some(&pdb(json!({"maxUnavailable": 1})))
            )
            .is_empty()
        );
    }

    fn class(name: &str, value: i64) -> Value {
        json!({"metadata": {"name": name}, "value": value, "preemptionPolicy": "PreemptLowerPriority"})
    }

    #[test]
    fn a_priority_class_is_a_users_or_a_known_system_class() {
        assert!(messages("PriorityClass", &class("high", 1_000_000_000), None).is_empty());
        assert!(
            messages(
                "PriorityClass",
                &class("system-node-critical", 2_000_001_000),
                None
            )
            .is_empty()
        );
        assert_eq!(
            messages("PriorityClass", &class("higher", 1_000_000_001), None),
            ["value: Forbidden: maximum allowed value of a user defined priority is 1000000000"]
        );
        let reserved = "metadata.name: Forbidden: priority class names with 'system-' prefix are reserved for system use only. error: ";
        assert_eq!(
            messages("PriorityClass", &class("system-mine", 5), None),
            [format!(
                "{reserved}system-mine is not a known system priority class"
            )]
        );
        assert_eq!(
            messages("PriorityClass", &class("system-cluster-critical", 5), None),
            [format!(
                "{reserved}value of system-cluster-critical PriorityClass must be 2000000000"
            )]
        );
        let mut global = class("system-cluster-critical", 2_000_000_000);
        global["globalDefault"] = json!(true);
        assert_eq!(
            messages("PriorityClass", &global, None),
            [format!(
                "{reserved}globalDefault of system-cluster-critical PriorityClass must be false"
            )]
        );
        let mut never = class("high", 1);
        never["preemptionPolicy"] = json!("Sometimes");
        assert_eq!(
            messages("PriorityClass", &never, None),
            [
                "preemptionPolicy: Unsupported value: \"Sometimes\": supported values: \"PreemptLowerPriority\", \"Never\""
            ]
        );
    }

    #[test]
    fn a_priority_class_keeps_its_value_and_preemption_policy() {
        let mut changed = class("high", 2);
        changed["preemptionPolicy"] = json!("Never");
        assert_eq!(
            messages("PriorityClass", &changed, Some(&class("high", 1))),
            [
                "value: Forbidden: may not be changed in an update.",
                "preemptionPolicy: Invalid value: \"Never\": field is immutable",
            ]
        );
        let mut described = class("high", 1);
        described["description"] = json!("for the web tier");
        assert!(messages("PriorityClass", &described, Some(&class("high", 1))).is_empty());
    }

    #[test]
    fn a_quota_names_quota_resources_with_non_negative_quantities() {
        let quota = json!({"spec": {"hard": {"cpu": "-1", "pods": "1500m", "storage": "1Gi",
            "count/deployments.apps": "2", "bogus": "1", "requests.nvidia.com/gpu": "4", "a/b/c": "1"}}});
        assert_eq!(
            messages("ResourceQuota", &quota, None),
            [
                "spec.hard[a/b/c]: Invalid value: \"a/b/c\": a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')",
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource type or fully qualified",
                "spec.hard[bogus]: Invalid value: \"bogus\": must be a standard resource for quota",
                "spec.hard[cpu]: Invalid value: \"-1\": must be greater than or equal to 0",
                "spec.hard[pods]: Invalid value: resource.Quantity{i:resource.int64Amount{value:1500, scale:-3}, d:resource.infDecAmount{Dec:(*inf.Dec)(nil)}, s:\"1500m\", Format:\"DecimalSI\"}: must be an integer",
                "spec.hard[storage]: Invalid value: \"storage\": must be a standard resource for quota",
            ]
        );
    }

    #[test]
    fn a_quotas_scopes_are_known_fit_its_resources_and_do_not_conflict() {
        let quota = json!({"spec": {"hard": {"pods": "10", "memory": "1Gi"},
            "scopes": ["BestEffort", "NotBestEffort", "Sometimes"]}});
        let scopes = "[]core.ResourceQuotaScope{\"BestEffort\", \"NotBestEffort\", \"Sometimes\"}";
        assert_eq!(
            messages("ResourceQuota", &quota, None),
            [
                format!(
                    "spec.scopes: Invalid value: {scopes}: unsupported scope applied to resource"
                ),
                format!("spec.scopes: Invalid value: {scopes}: unsupported scope"),
                format!("spec.scopes: Invalid value: {scopes}: conflicting scopes"),
            ]
        );
        let selector = json!({"spec": {"hard": {"pods": "10"}, "scopeSelector": {"matchExpressions": [
            {"scopeName": "PriorityClass", "operator": "In", "values": []},
            {"scopeName": "Terminating", "operator": "In", "values": ["x"]},
            {"scopeName": "NotTerminating", "operator": "Exists", "values": ["y"]},
            {"scopeName": "Daily", "operator": "Near"},
        ]}}});
        let at = "spec.scopeSelector.matchExpressions";
        assert_eq!(
            messages("ResourceQuota", &selector, None),
            [
                format!(
                    "{at}.values: Required value: must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"
                ),
                format!(
                    "{at}.operator: Invalid value: \"In\": must be 'Exist' when scope is any of ResourceQuotaScopeTerminating, ResourceQuotaScopeNotTerminating, ResourceQuotaScopeBestEffort, ResourceQuotaScopeNotBestEffort or ResourceQuotaScopeCrossNamespacePodAffinity"
                ),
                format!(
                    "{at}.values: Invalid value: []string{{\"y\"}}: must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"
                ),
                format!("{at}.scopeName: Invalid value: \"Daily\": unsupported scope"),
                format!("{at}.operator: Invalid value: \"Near\": not a valid selector operator"),
                format!("{at}: Invalid value: []core.ResourceQuotaScope(nil): conflicting scopes"),
            ]
        );
    }

    #[test]
    fn a_limit_ranges_minimum_is_below_its_defaults() {
        let range = json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "2"}, "default": {"cpu": "1"},
             "defaultRequest": {"cpu": "1"}},
        ]}});
        let q = |value: i64| {
            format!(
                "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:0}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:\"{value}\", Format:\"DecimalSI\"}}"
            )
        };
        assert_eq!(
            messages("LimitRange", &range, None),
            [
                format!(
                    "spec.limits[0].defaultRequest[cpu]: Invalid value: {}: min value 2 is greater than default request value 1",
                    q(1)
                ),
                format!(
                    "spec.limits[0].default[cpu]: Invalid value: {}: min value 2 is greater than default value 1",
                    q(2)
                ),
            ]
        );
    }

    #[test]
    fn a_limit_ranges_items_are_typed_once_and_ordered() {
        let range = json!({"spec": {"limits": [
            {"type": "Container", "min": {"cpu": "500m"}, "max": {"cpu": "250m"},
             "default": {"cpu": "1"}, "defaultRequest": {"cpu": "2"}, "maxLimitRequestRatio": {"cpu": "500m"}},
            {"type": "Pod", "default": {"memory": "1Gi"}, "max": {"gpu": "1"}},
            {"type": "PersistentVolumeClaim", "max": {"requests.storage": "1Gi"}},
            {"type": "Container"},
            {"type": "Node"},
        ]}});
        let q = |value: i64, scale: i32, s: &str| {
            format!(
                "resource.Quantity{{i:resource.int64Amount{{value:{value}, scale:{scale}}}, d:resource.infDecAmount{{Dec:(*inf.Dec)(nil)}}, s:{s:?}, Format:\"DecimalSI\"}}"
            )
        };
        assert_eq!(
            messages("LimitRange", &range, None),
            [
                format!("spec.limits[0].min[cpu]: Invalid value: {}: min value 500m is greater than max value 250m", q(500, -3, "500m")),
                format!("spec.limits[0].defaultRequest[cpu]: Invalid value: {}: default request value 2 is greater than max value 250m", q(2, 0, "2")),
                format!("spec.limits[0].defaultRequest[cpu]: Invalid value: {}: default request value 2 is greater than default limit value 1", q(2, 0, "2")),
                format!("spec.limits[0].default[cpu]: Invalid value: {}: default value 1 is greater than max value 250m", q(250, -3, "250m")),
                format!("spec.limits[0].maxLimitRequestRatio[cpu]: Invalid value: {}: ratio 500m is less than 1", q(500, -3, "500m")),
                "spec.limits[1].max[gpu]: Invalid value: \"gpu\": must be a standard resource type or fully qualified".to_string(),
                "spec.limits[1].max[gpu]: Invalid value: \"gpu\": must be a standard resource for containers".to_string(),
                "spec.limits[1].default: Forbidden: may not be specified when `type` is 'Pod'".to_string(),
                "spec.limits[2].limits: Required value: either minimum or maximum storage value is required, but neither was provided".to_string(),
                "spec.limits[3].type: Duplicate value: \"Container\"".to_string(),
                "spec.limits[4].type: Invalid value: \"Node\": must be a standard limit type or fully qualified".to_string(),
            ]
        );
        let ratio = json!({"spec": {"limits": [{"type": "Container", "min": {"memory": "1Gi"},
            "max": {"memory": "2Gi"}, "maxLimitRequestRatio": {"memory": "3"}}]}});
        assert_eq!(
            messages("LimitRange", &ratio, None),
            [format!(
                "spec.limits[0].maxLimitRequestRatio[memory]: Invalid value: {}: ratio 3 is greater than max/min = 2.000000",
                q(3, 0, "3")
            )]
        );
    }
}
