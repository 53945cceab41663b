//! A CRD schema's `x-kubernetes-validations` rules, evaluated with the
//! `cel` crate as apiextensions-apiserver evaluates them with cel-go: at
//! each schema node that has rules, `self` is the node's value and, on an
//! update where the old object has the node, `oldSelf` the old one; a rule
//! that mentions `oldSelf` is a transition rule, skipped without an old
//! value. A rule that is false is a cause at the node's path (or its
//! `fieldPath`): `Invalid value: "<type>": <message>`, the message being
//! the rule's `messageExpression` or `message`, else `failed rule: <rule>`;
//! one that fails to evaluate names the error. The `<nil>` path is the
//! root's, as the server prints it.
//!
//! Besides CEL's standard library, rules have the strings extension that
//! Kubernetes enables (cel-go's `ext.Strings`: `lowerAscii()`, `split()`,
//! `substring()`, `trim()`, `join()`, ...) and, of Kubernetes' own
//! libraries, the lists library's `isSorted()`, `sum()`, `min()` and
//! `max()` and the regex library's `find()` and `findAll()` ([`kubernetes`]).
//! The others (`quantity()`, `url()`, `ip()`, a list's `indexOf()`, ...)
//! are not here: a rule calling one cannot be evaluated, and is reported by
//! [`unchecked`] so that the write's answer says so in a `Warning` header
//! instead of passing it silently.

use std::sync::{Arc, LazyLock};

use cel::objects::ValueType;
use cel::{Context, Env, ExecutionError, Program};
use serde_json::Value;

use super::schema::Cause;

/// CEL's standard library and the extensions Kubernetes enables that the
/// `cel` crate has.
static ENV: LazyLock<Arc<Env>> = LazyLock::new(|| {
    let mut env = Env::stdlib();
    env.add_extension(cel::extensions::strings)
        .expect("the strings extension declares once");
    Arc::new(env)
});

/// The causes of the rules `object` (and `old`, its stored version on an
/// update) breaks.
pub fn check(schema: &Value, object: &Value, old: Option<&Value>) -> Vec<Cause> {
    let mut causes = Vec::new();
    walk(schema, object, old, "", &mut |outcome| {
        if let Outcome::Broken(cause) = outcome {
            causes.push(cause);
        }
    });
    causes
}

/// The rules of `schema` that could not be evaluated over `object` here,
/// each with the reason, for a `Warning` header.
pub fn unchecked(schema: &Value, object: &Value) -> Vec<String> {
    let mut rules = Vec::new();
    walk(schema, object, None, "", &mut |outcome| {
        if let Outcome::Unchecked(rule, why) = outcome {
            rules.push(format!(
                "x-kubernetes-validations rule not checked by the dev server: {rule}: {why}"
            ));
        }
    });
    rules
}

/// What one rule came to.
enum Outcome {
    Broken(Cause),
    Unchecked(String, String),
}

fn walk(
    schema: &Value,
    node: &Value,
    old: Option<&Value>,
    path: &str,
    report: &mut dyn FnMut(Outcome),
) {
    for rule in schema
        .get("x-kubernetes-validations")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        if let Some(outcome) = evaluate(schema, rule, node, old, path) {
            report(outcome);
        }
    }
    match node {
        Value::Object(map) => {
            for (key, value) in map {
                let child = schema
                    .pointer(&format!(
                        "/properties/{}",
                        key.replace('~', "~0").replace('/', "~1")
                    ))
                    .or_else(|| schema.get("additionalProperties").filter(|s| s.is_object()));
                if let Some(child) = child {
                    let old_child = old.and_then(|o| o.get(key));
                    let path = if path.is_empty() {
                        key.clone()
                    } else {
                        format!("{path}.{key}")
                    };
                    walk(child, value, old_child, &path, report);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|s| s.is_object()) {
                for (i, value) in items.iter().enumerate() {
                    walk(item, value, None, &format!("{path}[{i}]"), report);
                }
            }
        }
        _ => {}
    }
}

/// One rule over one node; `None` when it holds (or, as a transition
/// rule, does not apply).
fn evaluate(
    schema: &Value,
    rule: &Value,
    node: &Value,
    old: Option<&Value>,
    path: &str,
) -> Option<Outcome> {
    let text = rule.get("rule").and_then(Value::as_str)?.trim();
    let transition = text.contains("oldSelf");
    if transition && old.is_none() {
        return None;
    }
    let run = |source: &str| -> Result<cel::Value, String> {
        let program = Program::compile(source).map_err(|e| e.to_string())?;
        let mut context = Context::with_env(Arc::clone(&ENV));
        kubernetes(&mut context);
        let value = |v: &Value| cel::to_value(v).map_err(|e| e.to_string());
        context
            .add_variable("self", value(node)?)
            .map_err(|e| e.to_string())?;
        if let Some(old) = old {
            context
                .add_variable("oldSelf", value(old)?)
                .map_err(|e| e.to_string())?;
        }
        program.execute(&context).map_err(|e| match e {
            ExecutionError::UndeclaredReference(name) => {
                format!("undeclared reference to '{name}'")
            }
            other => lower_first(&other.to_string()),
        })
    };
    let message = match run(text) {
        Ok(cel::Value::Bool(true)) => return None,
        Ok(cel::Value::Bool(false)) => rule_message(rule, &run),
        Ok(other) => format!("rule did not evaluate to a bool: {other:?}"),
        Err(why) if why.starts_with("undeclared reference") => {
            return Some(Outcome::Unchecked(text.to_string(), why));
        }
        Err(why) => format!("{why} evaluating rule: {text}"),
    };
    let field = match rule.get("fieldPath").and_then(Value::as_str) {
        Some(relative) if !relative.is_empty() => format!("{path}{relative}")
            .trim_start_matches('.')
            .to_string(),
        _ if path.is_empty() => "<nil>".to_string(),
        _ => path.to_string(),
    };
    let kind = schema
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("object");
    let (reason, body) = match rule.get("reason").and_then(Value::as_str) {
        Some("FieldValueForbidden") => ("FieldValueForbidden", format!("Forbidden: {message}")),
        Some("FieldValueRequired") => ("FieldValueRequired", format!("Required value: {message}")),
        _ => (
            "FieldValueInvalid",
            format!("Invalid value: {kind:?}: {message}"),
        ),
    };
    Some(Outcome::Broken(Cause {
        field,
        reason,
        body,
    }))
}

/// A broken rule's message: its `messageExpression` (when it evaluates to
/// a non-empty string), its `message`, else `failed rule: <rule>`.
fn rule_message(rule: &Value, run: &dyn Fn(&str) -> Result<cel::Value, String>) -> String {
    if let Some(expression) = rule.get("messageExpression").and_then(Value::as_str)
        && let Ok(cel::Value::String(text)) = run(expression)
        && !text.trim().is_empty()
    {
        return text.trim().to_string();
    }
    match rule.get("message").and_then(Value::as_str) {
        Some(message) if !message.trim().is_empty() => message.trim().to_string(),
        _ => format!(
            "failed rule: {}",
            rule["rule"].as_str().unwrap_or_default().trim()
        ),
    }
}

/// The functions of Kubernetes' CEL libraries that the dev server has: the
/// lists library's `isSorted()`, `sum()`, `min()`, `max()`, and the regex
/// library's `find()` and `findAll()`, with their errors as the libraries
/// word them.
fn kubernetes(context: &mut Context) {
    use cel::extractors::This;
    let declared = [
        context.add_function("isSorted", |This(list): This<Arc<Vec<cel::Value>>>| {
            list.windows(2)
                .all(|pair| pair[0].partial_cmp(&pair[1]).is_some_and(|o| o.is_le()))
        }),
        context.add_function("sum", |This(list): This<Arc<Vec<cel::Value>>>| sum(&list)),
        context.add_function("min", |This(list): This<Arc<Vec<cel::Value>>>| {
            extreme(&list, "min", std::cmp::Ordering::Less)
        }),
        context.add_function("max", |This(list): This<Arc<Vec<cel::Value>>>| {
            extreme(&list, "max", std::cmp::Ordering::Greater)
        }),
        context.add_function(
            "find",
            |This(text): This<Arc<String>>,
             pattern: Arc<String>|
             -> Result<cel::Value, ExecutionError> {
                let re = regex(&pattern, "find")?;
                let found = re.find(&text).map(|m| m.as_str().to_string());
                Ok(cel::Value::String(Arc::new(found.unwrap_or_default())))
            },
        ),
        context.add_function(
            "findAll",
            |This(text): This<Arc<String>>,
             pattern: Arc<String>|
             -> Result<cel::Value, ExecutionError> {
                let re = regex(&pattern, "findAll")?;
                let found: Vec<cel::Value> = re
                    .find_iter(&text)
                    .map(|m| cel::Value::String(Arc::new(m.as_str().to_string())))
                    .collect();
                Ok(cel::Value::List(Arc::new(found)))
            },
        ),
    ];
    for result in declared {
        result.expect("Kubernetes' functions do not shadow the standard library's");
    }
}

fn regex(pattern: &str, function: &str) -> Result<regex::Regex, ExecutionError> {
    regex::Regex::new(pattern).map_err(|e| ExecutionError::function_error(function, e))
}

/// A list's sum: 0 for an empty list, else of its elements' type.
fn sum(list: &[cel::Value]) -> Result<cel::Value, ExecutionError> {
    let mut total = cel::Value::Int(0);
    for (i, item) in list.iter().enumerate() {
        total = match (i, &total, item) {
            (0, _, item) => item.clone(),
            (_, cel::Value::Int(a), cel::Value::Int(b)) => {
                a.checked_add(*b)
                    .map(cel::Value::Int)
                    .ok_or_else(|| ExecutionError::function_error("sum", "integer overflow"))?
            }
            (_, cel::Value::UInt(a), cel::Value::UInt(b)) => {
                a.checked_add(*b).map(cel::Value::UInt).ok_or_else(|| {
                    ExecutionError::function_error("sum", "unsigned integer overflow")
                })?
            }
            (_, cel::Value::Float(a), cel::Value::Float(b)) => cel::Value::Float(a + b),
            (_, _, item) => {
                return Err(ExecutionError::function_error(
                    "sum",
                    format!("no such overload: sum of {:?}", item.type_of()),
                ));
            }
        };
    }
    if !matches!(
        total.type_of(),
        ValueType::Int | ValueType::UInt | ValueType::Float
    ) {
        return Err(ExecutionError::function_error("sum", "no such overload"));
    }
    Ok(total)
}

/// A list's least (`Less`) or greatest (`Greater`) element.
fn extreme(
    list: &[cel::Value],
    name: &str,
    keep: std::cmp::Ordering,
) -> Result<cel::Value, ExecutionError> {
    let mut items = list.iter();
    let mut best = items.next().ok_or_else(|| {
        ExecutionError::function_error(name, format!("{name} called on empty list"))
    })?;
    for item in items {
        match item.partial_cmp(best) {
            Some(order) if order == keep => best = item,
            Some(_) => {}
            None => return Err(ExecutionError::function_error(name, "no such overload")),
        }
    }
    Ok(best.clone())
}

fn lower_first(text: &str) -> String {
    let mut chars = text.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.min <= self.max", "message": "min must not exceed max"},
                {"rule": "self.name.startsWith('w')"},
                {"rule": "self.min == oldSelf.min", "message": "min is immutable",
                 "fieldPath": ".min", "reason": "FieldValueForbidden"},
                {"rule": "quantity(self.size).isGreaterThan(quantity('1'))"},
                {"rule": "self.min >= 0", "messageExpression": "'min is ' + string(self.min)"},
            ],
            "properties": {
                "min": {"type": "integer"}, "max": {"type": "integer"},
                "name": {"type": "string"}, "size": {"type": "string"},
                "ports": {"type": "array", "items": {"type": "integer",
                    "x-kubernetes-validations": [{"rule": "self > 0"}]}},
            },
        }}})
    }

    fn messages(causes: &[Cause]) -> Vec<String> {
        causes.iter().map(Cause::message).collect()
    }

    #[test]
    fn a_broken_rule_is_a_cause_at_its_node_with_its_message() {
        let good = json!({"spec": {"min": 1, "max": 2, "name": "w", "size": "2", "ports": [80]}});
        assert!(check(&schema(), &good, None).is_empty());
        let bad = json!({"spec": {"min": -3, "max": -4, "name": "x", "ports": [80, 0]}});
        assert_eq!(
            messages(&check(&schema(), &bad, None)),
            [
                "spec: Invalid value: \"object\": min must not exceed max",
                "spec: Invalid value: \"object\": failed rule: self.name.startsWith('w')",
                "spec: Invalid value: \"object\": min is -3",
                "spec.ports[1]: Invalid value: \"integer\": failed rule: self > 0",
            ]
        );
    }

    #[test]
    fn transition_rules_apply_on_updates_only() {
        let old = json!({"spec": {"min": 1, "max": 5, "name": "w"}});
        let new = json!({"spec": {"min": 2, "max": 5, "name": "w"}});
        assert!(check(&schema(), &new, None).is_empty(), "a create");
        let causes = check(&schema(), &new, Some(&old));
        assert_eq!(messages(&causes), ["spec.min: Forbidden: min is immutable"]);
        assert_eq!(causes[0].reason, "FieldValueForbidden");
    }

    #[test]
    fn the_strings_extension_kubernetes_enables_is_there() {
        let schema = json!({"type": "object", "properties": {"spec": {
            "type": "object",
            "x-kubernetes-validations": [
                {"rule": "self.name.lowerAscii() == self.name", "message": "lower case only"},
                {"rule": "self.hosts.split(',').all(h, h.trim().size() > 0)", "message": "no empty host"},
                {"rule": "self.name.substring(0, 1) != '-'", "message": "no leading dash"},
            ],
            "properties": {"name": {"type": "string"}, "hosts": {"type": "string"}},
        }}});
        let good = json!({"spec": {"name": "web", "hosts": "a, b"}});
        assert!(check(&schema, &good, None).is_empty());
        assert!(unchecked(&schema, &good).is_empty());
        let bad = json!({"spec": {"name": "-Web", "hosts": "a,,b"}});
        assert_eq!(
            messages(&check(&schema, &bad, None)),
            [
                "spec: Invalid value: \"object\": lower case only",
                "spec: Invalid value: \"object\": no empty host",
                "spec: Invalid value: \"object\": no leading dash",
            ]
        );
    }

    #[test]
    fn kubernetes_list_and_regex_functions_are_there() {
        let rules = |rules: Value| {
            json!({"type": "object", "x-kubernetes-validations": rules, "properties": {
                "ports": {"type": "array", "items": {"type": "integer"}},
                "weights": {"type": "array", "items": {"type": "number"}},
                "empty": {"type": "array", "items": {"type": "integer"}},
                "host": {"type": "string"}}})
        };
        let object = json!({"ports": [80, 443, 8080], "weights": [0.5, 0.25],
                            "empty": [], "host": "api.example.com:6443"});
        let holds = rules(json!([
            {"rule": "self.ports.isSorted()"},
            {"rule": "self.ports.sum() == 8603 && self.empty.sum() == 0"},
            {"rule": "self.weights.sum() == 0.75"},
            {"rule": "self.ports.min() == 80 && self.ports.max() == 8080"},
            {"rule": "self.host.find('[0-9]+$') == '6443' && self.host.find('^x') == ''"},
            {"rule": "self.host.findAll('[a-z]+') == ['api', 'example', 'com']"},
        ]));
        assert!(
            check(&holds, &object, None).is_empty(),
            "{:?}",
            messages(&check(&holds, &object, None))
        );
        assert!(unchecked(&holds, &object).is_empty());
        let broken = rules(json!([
            {"rule": "[3, 1].isSorted()"},
            {"rule": "self.empty.min() == 0"},
            {"rule": "self.host.find('(') == ''"},
        ]));
        let found = messages(&check(&broken, &object, None));
        assert_eq!(found.len(), 3, "{found:?}");
        assert_eq!(
            found[0],
            "<nil>: Invalid value: \"object\": failed rule: [3, 1].isSorted()"
        );
        assert!(
            found[1].contains("min called on empty list"),
            "{}",
            found[1]
        );
        assert!(found[2].contains("find"), "{}", found[2]);
    }

    #[test]
    fn an_evaluation_error_names_the_rule_and_a_missing_extension_is_unchecked() {
        let missing = json!({"spec": {"max": 5, "name": "w", "size": "1"}});
        let causes = messages(&check(&schema(), &missing, None));
        assert_eq!(
            causes[0],
            "spec: Invalid value: \"object\": no such key: min evaluating rule: self.min <= self.max"
        );
        assert_eq!(
            unchecked(&schema(), &missing),
            [
                "x-kubernetes-validations rule not checked by the dev server: \
              quantity(self.size).isGreaterThan(quantity('1')): undeclared reference to 'quantity'"
            ]
        );
        let root =
            json!({"type": "object", "x-kubernetes-validations": [{"rule": "has(self.spec)"}]});
        assert_eq!(
            messages(&check(&root, &json!({}), None)),
            ["<nil>: Invalid value: \"object\": failed rule: has(self.spec)"]
        );
    }
}
