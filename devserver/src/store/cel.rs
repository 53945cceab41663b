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
//! libraries, the lists library (`isSorted()`, `sum()`, `min()`, `max()`,
//! `indexOf()`, `lastIndexOf()`), the regex library's `find()` and
//! `findAll()`, the quantity library (`quantity()`, `isQuantity()`,
//! `compareTo()`, `isGreaterThan()`, `add()`, `asInteger()`, ...), IP
//! addresses and CIDRs (`ip()`, `cidr()`, `containsIP()`,
//! `ip.isCanonical()`, `string()`, ...), URLs (`url()`, `getHost()`, ...)
//! and named formats (`format.dns1123Label()`, `format.named()`,
//! `validate()`) ([`library`]). The others (cel-go's sets and two-variable
//! comprehensions, the authorizer library, ...) are not here: a rule
//! calling one cannot be evaluated, and is reported by [`unchecked`] so
//! that the write's answer says so in a `Warning` header instead of
//! passing it silently. The semver and image libraries a v1.33 server
//! declares are not among them: it compiles a new rule in the v1.32
//! environment, which lacks them.

use cel::{ExecutionError, Program};
use serde_json::Value;

use super::schema::Cause;

mod library;

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
        let mut context = library::context();
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
                {"rule": "self.name == '' || isSemver(self.name)"},
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
    fn kubernetes_quantities_compare_add_and_convert() {
        let schema = json!({"type": "object", "properties": {"limit": {"type": "string"},
        "request": {"type": "string"}},
        "x-kubernetes-validations": [
            {"rule": "quantity(self.request).compareTo(quantity(self.limit)) <= 0",
             "message": "request must not exceed limit"},
            {"rule": "isQuantity(self.limit) && quantity(self.limit).isInteger()",
             "message": "limit must be whole"},
        ]});
        let holds = [
            json!({"limit": "2", "request": "1500m"}),
            json!({"limit": "1Gi", "request": "1024Mi"}),
            json!({"limit": "2k", "request": "2e3"}),
        ];
        for object in &holds {
            assert!(check(&schema, object, None).is_empty(), "{object}");
        }
        assert_eq!(
            messages(&check(
                &schema,
                &json!({"limit": "500m", "request": "1"}),
                None
            )),
            [
                "<nil>: Invalid value: \"object\": request must not exceed limit",
                "<nil>: Invalid value: \"object\": limit must be whole",
            ]
        );
        let arithmetic = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "quantity('1').add(quantity('500m')) == quantity('1500m')"},
            {"rule": "quantity('2').sub(1).asInteger() == 1"},
            {"rule": "quantity('-3').sign() == -1 && quantity('0').sign() == 0"},
            {"rule": "quantity('250m').asApproximateFloat() == 0.25"},
            {"rule": "quantity('2Gi').isGreaterThan(quantity('2G')) && quantity('1').isLessThan(2)"},
            {"rule": "!isQuantity('ten')"},
        ]});
        assert!(messages(&check(&arithmetic, &json!({}), None)).is_empty());
        let broken = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "quantity('ten').sign() == 1"},
            {"rule": "quantity('1500m').asInteger() == 1"},
        ]});
        let found = messages(&check(&broken, &json!({}), None));
        assert!(
            found[0].contains("quantities must match the regular expression"),
            "{}",
            found[0]
        );
        assert!(
            found[1].contains("cannot convert value to integer"),
            "{}",
            found[1]
        );
    }

    #[test]
    fn kubernetes_ip_and_cidr_functions_are_there() {
        let holds = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "isIP('10.0.0.1') && !isIP('10.0.0.256') && !isIP('::ffff:10.0.0.1')"},
            {"rule": "ip('10.0.0.1').family() == 4 && ip('fd00::1').family() == 6"},
            {"rule": "ip('127.0.0.1').isLoopback() && ip('0.0.0.0').isUnspecified()"},
            {"rule": "ip('169.254.1.1').isLinkLocalUnicast() && ip('fe80::1').isLinkLocalUnicast()"},
            {"rule": "ip('224.0.0.5').isLinkLocalMulticast() && ip('ff02::1').isLinkLocalMulticast()"},
            {"rule": "ip('10.1.2.3').isGlobalUnicast() && !ip('127.0.0.1').isGlobalUnicast()"},
            {"rule": "ip('10.0.0.1') == ip('10.0.0.1') && ip('10.0.0.1') != ip('10.0.0.2')"},
            {"rule": "isCIDR('10.0.0.0/8') && !isCIDR('10.0.0.0/33') && !isCIDR('10.0.0.0')"},
            {"rule": "cidr('10.0.0.0/8').containsIP(ip('10.1.2.3')) && !cidr('10.0.0.0/8').containsIP('11.0.0.1')"},
            {"rule": "cidr('10.0.0.0/8').containsCIDR('10.1.0.0/16') && !cidr('10.1.0.0/16').containsCIDR('10.0.0.0/8')"},
            {"rule": "cidr('10.1.2.3/8').masked() == cidr('10.0.0.0/8') && cidr('fd00::/64').prefixLength() == 64"},
            {"rule": "!cidr('fd00::/64').containsIP('10.0.0.1')"},
        ]});
        assert_eq!(
            messages(&check(&holds, &json!({}), None)),
            Vec::<String>::new()
        );
        let broken = json!({"type": "object", "x-kubernetes-validations": [{"rule": "ip('nope').family() == 4"}]});
        let found = messages(&check(&broken, &json!({}), None));
        assert!(found[0].contains("parse error"), "{}", found[0]);
    }

    #[test]
    fn kubernetes_url_functions_are_there() {
        let holds = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "isURL('https://example.com:8443/a%20b?x=1&x=2&y=3') && !isURL('not a url') && isURL('/path')"},
            {"rule": "url('https://example.com:8443/a').getScheme() == 'https' && url('/path').getScheme() == ''"},
            {"rule": "url('https://example.com:8443/a').getHost() == 'example.com:8443'"},
            {"rule": "url('https://[::1]:80/').getHostname() == '::1' && url('https://[::1]:80/').getHost() == '[::1]:80'"},
            {"rule": "url('https://example.com:8443/a').getPort() == '8443' && url('https://example.com/a').getPort() == ''"},
            {"rule": "url('https://example.com/a%20b').getEscapedPath() == '/a%20b' && url('/p/q').getEscapedPath() == '/p/q'"},
            {"rule": "url('https://example.com/?x=1&x=2&y=3').getQuery() == {'x': ['1', '2'], 'y': ['3']}"},
        ]});
        assert_eq!(
            messages(&check(&holds, &json!({}), None)),
            Vec::<String>::new()
        );
        let broken = json!({"type": "object", "x-kubernetes-validations": [{"rule": "url('nope').getScheme() == ''"}]});
        let found = messages(&check(&broken, &json!({}), None));
        assert!(found[0].contains("invalid URI for request"), "{}", found[0]);
    }

    #[test]
    fn kubernetes_list_indexes_and_address_strings_are_there() {
        let holds = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "[1, 2, 1].indexOf(1) == 0 && [1, 2, 1].lastIndexOf(1) == 2"},
            {"rule": "['a', 'b'].indexOf('c') == -1 && [].lastIndexOf(1) == -1"},
            {"rule": "'hello'.indexOf('l') == 2 && 'hello'.lastIndexOf('l') == 3"},
            {"rule": "string(ip('fd00:0:0::1')) == 'fd00::1' && string(ip('10.0.0.1')) == '10.0.0.1'"},
            {"rule": "string(cidr('10.1.2.3/8')) == '10.1.2.3/8' && cidr('10.1.2.3/8').ip() == ip('10.1.2.3')"},
            {"rule": "ip.isCanonical('fd00::1') && !ip.isCanonical('fd00:0::1')"},
        ]});
        assert_eq!(
            messages(&check(&holds, &json!({}), None)),
            Vec::<String>::new()
        );
        assert!(unchecked(&holds, &json!({})).is_empty());
    }

    #[test]
    fn kubernetes_named_formats_validate_in_the_servers_words() {
        let holds = json!({"type": "object", "x-kubernetes-validations": [
            {"rule": "!format.dns1123Label().validate('my-name').hasValue()"},
            {"rule": "format.dns1123Label().validate('My_Name').hasValue()"},
            {"rule": "!format.dns1123LabelPrefix().validate('my-prefix-').hasValue()"},
            {"rule": "format.dns1035Label().validate('1abc').hasValue()"},
            {"rule": "!format.named('uuid').value().validate('123e4567-e89b-12d3-a456-426614174000').hasValue()"},
            {"rule": "!format.named('nope').hasValue()"},
            {"rule": "format.byte().validate('aGVsbG8=') == optional.none()"},
            {"rule": "format.uri().validate('x').value() == ['parse \"x\": invalid URI for request']"},
            {"rule": "format.date().validate('2021-13-01').value() == ['invalid date']"},
        ]});
        assert_eq!(
            messages(&check(&holds, &json!({}), None)),
            Vec::<String>::new()
        );
        let schema = json!({"type": "object", "properties": {"name": {"type": "string"}},
        "x-kubernetes-validations": [{
            "rule": "!format.dns1123Label().validate(self.name).hasValue()",
            "messageExpression": "format.dns1123Label().validate(self.name).value().join(', ')",
        }]});
        assert_eq!(
            messages(&check(&schema, &json!({"name": "-x-"}), None)),
            [
                "<nil>: Invalid value: \"object\": a lowercase RFC 1123 label must consist of lower case \
              alphanumeric characters or '-', and must start and end with an alphanumeric character \
              (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')"
            ]
        );
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
              self.name == '' || isSemver(self.name): undeclared reference to 'isSemver'"
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
