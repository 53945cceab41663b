//! Label selectors and labels, as apimachinery validates them
//! (`ValidateLabelSelector`, `ValidateLabels`, `ValidateLabelName`): in a
//! workload's selector and a pod affinity term's.

use serde_json::Value;

use super::{Cause, forbidden, items, names, required, text};

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
        let values = items(requirement.get("values"));
        let operator = text(requirement, "/operator");
        match operator {
            "In" | "NotIn" if values.is_empty() => causes.push(required(
                &format!("{at}.values"),
                "must be specified when `operator` is 'In' or 'NotIn'",
            )),
            "Exists" | "DoesNotExist" if !values.is_empty() => causes.push(forbidden(
                &format!("{at}.values"),
                "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
            )),
            "In" | "NotIn" | "Exists" | "DoesNotExist" => {}
            _ => causes.push(invalid_operator(&at, operator)),
        }
        label_name(text(requirement, "/key"), &format!("{at}.key"), causes);
        for (j, value) in values.iter().enumerate() {
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

pub(super) fn invalid_operator(path: &str, operator: &str) -> Cause {
    names::invalid(
        &format!("{path}.operator"),
        operator,
        "not a valid selector operator".to_string(),
    )
}
