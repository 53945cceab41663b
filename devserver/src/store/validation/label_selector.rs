//! Label selectors and labels, as apimachinery validates them
//! (`ValidateLabelSelector`, `ValidateLabels`, `ValidateLabelName`): in a
//! workload's selector and a pod affinity term's.

use serde_json::Value;

use super::{Cause, items, names, text};

/// `ValidateLabelSelector`: its labels, and each requirement's operator,
/// values and key.
pub(super) fn label_selector(selector: &Value, path: &str, causes: &mut Vec<Cause>) {
    labels(
        selector.get("matchLabels"),
        &format!("{path}.matchLabels"),
        causes,
    );
    for (i, requirement) in items(selector.get("matchExpressions")).iter().enumerate() {
        let at = format!("{path}.matchExpressions[{i}]");
        operator_and_key(requirement, &at, false, causes);
        for (j, value) in items(requirement.get("values")).iter().enumerate() {
            let value = value.as_str().unwrap_or_default();
            for problem in names::label_value(value) {
                causes.push(names::invalid(&format!("{at}.values[{j}]"), value, problem));
            }
        }
    }
}

/// `ValidateLabels`: every key a qualified name, every value a label value,
/// both reported at `path`.
pub(super) fn labels(map: Option<&Value>, path: &str, causes: &mut Vec<Cause>) {
    for (key, value) in map.and_then(Value::as_object).into_iter().flatten() {
        label_name(key, path, causes);
        let value = value.as_str().unwrap_or_default();
        for problem in names::label_value(value) {
            causes.push(names::invalid(path, value, problem));
        }
    }
}

/// `ValidateLabelName`: a qualified name.
pub(super) fn label_name(key: &str, path: &str, causes: &mut Vec<Cause>) {
    for problem in names::qualified_name(key) {
        causes.push(names::invalid(path, key, problem));
    }
}

/// A requirement's operator against its number of values, then its key,
/// as `ValidateLabelSelectorRequirement` checks them; with `numeric`, as
/// `ValidateNodeSelectorRequirement` does, which also takes `Gt` and `Lt`
/// with a single value.
pub(super) fn operator_and_key(
    requirement: &Value,
    path: &str,
    numeric: bool,
    causes: &mut Vec<Cause>,
) {
    let values = items(requirement.get("values")).len();
    let values_at = format!("{path}.values");
    match text(requirement, "/operator") {
        "In" | "NotIn" if values == 0 => causes.push(Cause::required(
            &values_at,
            "must be specified when `operator` is 'In' or 'NotIn'",
        )),
        "Exists" | "DoesNotExist" if values > 0 => causes.push(Cause::forbidden(
            &values_at,
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
        )),
        "Gt" | "Lt" if numeric && values != 1 => causes.push(Cause::required(
            &values_at,
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
        )),
        "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
        "Gt" | "Lt" if numeric => {}
        operator => causes.push(invalid_operator(path, operator)),
    }
    label_name(text(requirement, "/key"), &format!("{path}.key"), causes);
}

pub(super) fn invalid_operator(path: &str, operator: &str) -> Cause {
    names::invalid(
        &format!("{path}.operator"),
        operator,
        "not a valid selector operator".to_string(),
    )
}
