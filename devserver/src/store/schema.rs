//! Custom resources' structural schemas (a CRD version's
//! `schema.openAPIV3Schema`), applied to every write as
//! apiextensions-apiserver applies them: fields the schema does not declare
//! are pruned (their paths reported, for `fieldValidation`), nulls of
//! fields that are not `nullable` dropped, `default`s filled in, and the
//! result validated — type, `required`, `enum`, bounds, lengths,
//! `pattern`, `format` ([`format`]), item and property counts, then the
//! uniqueness of `x-kubernetes-list-type` `set` items and `map` keys — each
//! violation one cause of a 422. `apiVersion`, `kind` and `metadata` of the
//! object (and of an `x-kubernetes-embedded-resource`) are the server's and
//! left alone. CEL rules (`x-kubernetes-validations`) are `cel`'s.

use serde_json::{Map, Value};

use super::format;

/// One violation of a schema, as a `metav1.StatusCause`: the field's path,
/// the reason (`FieldValueInvalid`, ...) and the message without the path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cause {
    pub field: String,
    pub reason: &'static str,
    pub body: String,
}

impl Cause {
    /// A cause of `reason` at `field`.
    pub fn new(field: &str, reason: &'static str, body: String) -> Cause {
        Cause {
            field: field.to_string(),
            reason,
            body,
        }
    }

    /// `field.Required(field, detail)`: "Required value", and the detail.
    pub fn required(field: &str, detail: &str) -> Cause {
        let body = if detail.is_empty() {
            "Required value".to_string()
        } else {
            format!("Required value: {detail}")
        };
        Cause::new(field, "FieldValueRequired", body)
    }

    /// `field.Forbidden(field, detail)`: "Forbidden", and the detail.
    pub fn forbidden(field: &str, detail: &str) -> Cause {
        Cause::new(field, "FieldValueForbidden", format!("Forbidden: {detail}"))
    }

    /// `field.Invalid` of a number: `Invalid value: 3: DETAIL`.
    pub fn invalid_number(field: &str, value: i64, detail: &str) -> Cause {
        Cause::new(
            field,
            "FieldValueInvalid",
            format!("Invalid value: {value}: {detail}"),
        )
    }

    /// `field.NotSupported` of a string among `supported`.
    pub fn not_supported(field: &str, value: &str, supported: &[&str]) -> Cause {
        let supported: Vec<String> = supported.iter().map(|s| format!("{s:?}")).collect();
        Cause::new(
            field,
            "FieldValueNotSupported",
            format!(
                "Unsupported value: {value:?}: supported values: {}",
                supported.join(", ")
            ),
        )
    }

    /// `field.TooLong(field, "", max)`: the value is left out.
    pub fn too_long(field: &str, max: usize) -> Cause {
        Cause::new(
            field,
            "FieldValueTooLong",
            format!("Too long: may not be more than {max} bytes"),
        )
    }

    /// `field.Duplicate(field, value)`.
    pub fn duplicate(field: &str, value: &str) -> Cause {
        Cause::new(
            field,
            "FieldValueDuplicate",
            format!("Duplicate value: {value:?}"),
        )
    }

    /// `field: body`, as the Invalid message lists it.
    pub fn message(&self) -> String {
        format!("{}: {}", self.field, self.body)
    }
}

/// Prunes what `schema` does not declare from `object` (dropping nulls of
/// non-nullable fields) and fills in defaults; the pruned fields' paths,
/// sorted (`spec.extra`, `spec.items[0].extra`).
pub fn prune_and_default(schema: &Value, object: &mut Value) -> Vec<String> {
    let mut pruned = Vec::new();
    walk(schema, object, "", true, &mut pruned);
    pruned.sort();
    pruned
}

/// The fields of `object` that `schema` does not declare, leaving it as it
/// is.
pub fn unknown_fields(schema: &Value, object: &Value) -> Vec<String> {
    prune_and_default(schema, &mut object.clone())
}

/// Whether `key` of an object at `path` is the server's: `apiVersion`,
/// `kind` and `metadata` of the object itself or of an embedded resource.
fn is_server_field(key: &str, root: bool, schema: &Value) -> bool {
    (root || flag(schema, "x-kubernetes-embedded-resource"))
        && matches!(key, "apiVersion" | "kind" | "metadata")
}

fn flag(schema: &Value, name: &str) -> bool {
    schema.get(name).and_then(Value::as_bool) == Some(true)
}

fn join(path: &str, key: &str) -> String {
    match path {
        "" => key.to_string(),
        _ => format!("{path}.{key}"),
    }
}

/// The schema of an object's field `key`: its property, else the schema of
/// `additionalProperties`; `None` when the field is not declared.
fn field_schema<'a>(schema: &'a Value, key: &str) -> Option<&'a Value> {
    schema
        .pointer("/properties")
        .and_then(|p| p.get(key))
        .or_else(|| schema.get("additionalProperties").filter(|a| a.is_object()))
}

/// Whether undeclared fields of an object stay.
fn keeps_unknown(schema: &Value) -> bool {
    flag(schema, "x-kubernetes-preserve-unknown-fields")
        || schema.get("additionalProperties") == Some(&Value::Bool(true))
}

fn walk(schema: &Value, node: &mut Value, path: &str, root: bool, pruned: &mut Vec<String>) {
    match node {
        Value::Object(map) => {
            let keys: Vec<String> = map.keys().cloned().collect();
            for key in keys {
                if is_server_field(&key, root, schema) {
                    continue;
                }
                match field_schema(schema, &key) {
                    Some(child) => {
                        if map[&key].is_null() && !flag(child, "nullable") {
                            map.remove(&key);
                        }
                    }
                    None if keeps_unknown(schema) => {}
                    None => {
                        map.remove(&key);
                        pruned.push(join(path, &key));
                    }
                }
            }
            default_missing(schema, map);
            for (key, value) in map.iter_mut() {
                if is_server_field(key, root, schema) {
                    continue;
                }
                if let Some(child) = field_schema(schema, key) {
                    walk(child, value, &join(path, key), false, pruned);
                }
            }
        }
        Value::Array(items) => {
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for (i, value) in items.iter_mut().enumerate() {
                    walk(item, value, &format!("{path}[{i}]"), false, pruned);
                }
            }
        }
        _ => {}
    }
}

/// Fills in the declared defaults of the fields `map` lacks.
fn default_missing(schema: &Value, map: &mut Map<String, Value>) {
    let Some(properties) = schema.get("properties").and_then(Value::as_object) else {
        return;
    };
    for (key, property) in properties {
        if let Some(default) = property.get("default")
            && !map.contains_key(key)
        {
            map.insert(key.clone(), default.clone());
        }
    }
}

/// Every violation of `schema` by `object`, in document order.
pub fn validate(schema: &Value, object: &Value) -> Vec<Cause> {
    let mut causes = Vec::new();
    check(schema, object, "", true, &mut causes);
    duplicates(schema, object, "", &mut causes);
    causes
}

/// The items of `set` lists that repeat an earlier one, and the items of
/// `map` lists whose keys do, each a `Duplicate value` at its index (its
/// first repeat only), as apiextensions' list-type validation finds them
/// after the schema's own checks.
fn duplicates(schema: &Value, node: &Value, path: &str, causes: &mut Vec<Cause>) {
    match node {
        Value::Array(items) => {
            let keys: Option<Vec<Value>> =
                match schema.get("x-kubernetes-list-type").and_then(Value::as_str) {
                    Some("set") => Some(items.clone()),
                    Some("map") => {
                        let names: Vec<&str> = schema
                            .get("x-kubernetes-list-map-keys")
                            .and_then(Value::as_array)
                            .into_iter()
                            .flatten()
                            .filter_map(Value::as_str)
                            .collect();
                        Some(items.iter().map(|item| map_key(&names, item)).collect())
                    }
                    _ => None,
                };
            let mut seen: Vec<(&Value, bool)> = Vec::new();
            for (i, key) in keys.iter().flatten().enumerate() {
                match seen.iter_mut().find(|(k, _)| *k == key) {
                    Some((_, reported)) if !*reported => {
                        *reported = true;
                        causes.push(Cause {
                            field: format!("{path}[{i}]"),
                            reason: "FieldValueDuplicate",
                            body: format!("Duplicate value: {}", go_value(key)),
                        });
                    }
                    Some(_) => {}
                    None => seen.push((key, false)),
                }
            }
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for (i, value) in items.iter().enumerate() {
                    duplicates(item, value, &format!("{path}[{i}]"), causes);
                }
            }
        }
        Value::Object(map) => {
            for (key, value) in map {
                if let Some(child) = field_schema(schema, key) {
                    duplicates(child, value, &join(path, key), causes);
                }
            }
        }
        _ => {}
    }
}

/// The key of a `map` list's item: its key fields that it has (one key
/// field: the map of it alone, or `{}` when missing).
fn map_key(names: &[&str], item: &Value) -> Value {
    let fields = names
        .iter()
        .filter_map(|name| Some((name.to_string(), item.get(*name)?.clone())))
        .collect();
    Value::Object(fields)
}

/// A value as Go's `field.Duplicate` prints it: `%q` for strings, `%v` for
/// numbers and booleans, `%#v` for objects and lists.
fn go_value(value: &Value) -> String {
    match value {
        Value::String(s) => format!("{s:?}"),
        Value::Null => "null".to_string(),
        Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::Array(_) | Value::Object(_) => go_sharp(value),
    }
}

/// Go's `%#v` of an unstructured value (a `map[string]interface {}`'s
/// keys sorted, as Go prints them).
fn go_sharp(value: &Value) -> String {
    match value {
        Value::Null => "interface {}(nil)".to_string(),
        Value::String(s) => format!("{s:?}"),
        Value::Bool(_) | Value::Number(_) => value.to_string(),
        Value::Array(items) => {
            let items: Vec<String> = items.iter().map(go_sharp).collect();
            format!("[]interface {{}}{{{}}}", items.join(", "))
        }
        Value::Object(map) => {
            let mut fields: Vec<(&String, &Value)> = map.iter().collect();
            fields.sort_by_key(|(k, _)| *k);
            let fields: Vec<String> = fields
                .iter()
                .map(|(k, v)| format!("{k:?}:{}", go_sharp(v)))
                .collect();
            format!("map[string]interface {{}}{{{}}}", fields.join(", "))
        }
    }
}

/// The JSON type of `value` as OpenAPI names it; an integral number is an
/// integer.
fn type_of(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Value::Number(n) if n.as_f64().is_some_and(|f| f.fract() == 0.0) => "integer",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Whether a value of type `got` satisfies the schema's `type`.
fn type_matches(schema: &Value, got: &str) -> bool {
    if flag(schema, "x-kubernetes-int-or-string") {
        return matches!(got, "integer" | "string");
    }
    match schema.get("type").and_then(Value::as_str) {
        None => true,
        Some("number") => matches!(got, "number" | "integer"),
        Some(want) => want == got,
    }
}

/// The causes found at one path.
struct Report<'a> {
    path: &'a str,
    causes: &'a mut Vec<Cause>,
}

impl Report<'_> {
    fn push(&mut self, reason: &'static str, body: String) {
        self.causes.push(Cause {
            field: self.path.to_string(),
            reason,
            body,
        });
    }

    /// `Invalid value: VALUE: PATH in body DETAIL`.
    fn invalid(&mut self, value: impl std::fmt::Display, detail: String) {
        let body = format!("Invalid value: {value}: {} in body {detail}", self.path);
        self.push("FieldValueInvalid", body);
    }
}

fn check(schema: &Value, node: &Value, path: &str, root: bool, causes: &mut Vec<Cause>) {
    let got = type_of(node);
    if node.is_null() && flag(schema, "nullable") {
        return;
    }
    let mut report = Report { path, causes };
    if !type_matches(schema, got) {
        // apiextensions gives an int-or-string node both types
        // (`ConvertJSONSchemaPropsWithPostProcess`), joined in the message.
        let want = if flag(schema, "x-kubernetes-int-or-string") {
            "integer,string"
        } else {
            schema
                .get("type")
                .and_then(Value::as_str)
                .unwrap_or("string")
        };
        report.invalid(
            format!("{got:?}"),
            format!("must be of type {want}: {got:?}"),
        );
        return;
    }
    if let Some(allowed) = schema.get("enum").and_then(Value::as_array)
        && !allowed.contains(node)
    {
        let allowed: Vec<String> = allowed.iter().map(Value::to_string).collect();
        let body = format!(
            "Unsupported value: {node}: supported values: {}",
            allowed.join(", ")
        );
        report.push("FieldValueNotSupported", body);
    }
    // A bound `name` of the schema that `length` passes (above a maximum,
    // below a minimum).
    let count = |name: &str| schema.get(name).and_then(Value::as_u64);
    let over = |name: &str, length: u64| count(name).filter(|max| length > *max);
    let under = |name: &str, length: u64| count(name).filter(|min| length < *min);
    match node {
        Value::Number(n) => {
            let value = n.as_f64().unwrap_or_default();
            for (bound, exclusive, side, beyond) in [
                (
                    "minimum",
                    "exclusiveMinimum",
                    "greater",
                    f64::lt as fn(&f64, &f64) -> bool,
                ),
                ("maximum", "exclusiveMaximum", "less", f64::gt),
            ] {
                let Some(limit) = schema.get(bound).and_then(Value::as_f64) else {
                    continue;
                };
                let exclusive = flag(schema, exclusive);
                if beyond(&value, &limit) || exclusive && value == limit {
                    let than = if exclusive {
                        "than"
                    } else {
                        "than or equal to"
                    };
                    report.invalid(n, format!("should be {side} {than} {limit}"));
                }
            }
        }
        Value::String(s) => {
            let length = s.chars().count() as u64;
            if let Some(max) = over("maxLength", length) {
                report.push(
                    "FieldValueTooLong",
                    format!("Too long: may not be longer than {max}"),
                );
            }
            if let Some(min) = under("minLength", length) {
                report.invalid(
                    format!("{s:?}"),
                    format!("should be at least {min} chars long"),
                );
            }
            if let Some(pattern) = schema.get("pattern").and_then(Value::as_str)
                && regex::Regex::new(pattern).is_ok_and(|re| !re.is_match(s))
            {
                report.invalid(format!("{s:?}"), format!("should match '{pattern}'"));
            }
            if let Some(name) = schema.get("format").and_then(Value::as_str)
                && format::check(name, s) == Some(false)
            {
                report.invalid(format!("{s:?}"), format!("must be of type {name}: {s:?}"));
            }
        }
        Value::Array(items) => {
            let length = items.len() as u64;
            if let Some(max) = over("maxItems", length) {
                let body = format!("Too many: {length}: must have at most {max} items");
                report.push("FieldValueTooMany", body);
            }
            if let Some(min) = under("minItems", length) {
                report.invalid(length, format!("should have at least {min} items"));
            }
            if let Some(item) = schema.get("items").filter(|i| i.is_object()) {
                for (i, value) in items.iter().enumerate() {
                    check(item, value, &format!("{path}[{i}]"), false, causes);
                }
            }
        }
        Value::Object(map) => {
            let required = schema.get("required").and_then(Value::as_array);
            for field in required.into_iter().flatten().filter_map(Value::as_str) {
                if !map.contains_key(field) {
                    report.causes.push(Cause::required(&join(path, field), ""));
                }
            }
            let length = map.len() as u64;
            if let Some(max) = over("maxProperties", length) {
                report.invalid(length, format!("should have at most {max} properties"));
            }
            if let Some(min) = under("minProperties", length) {
                report.invalid(length, format!("should have at least {min} properties"));
            }
            for (key, value) in map {
                if is_server_field(key, root, schema) {
                    continue;
                }
                if let Some(child) = field_schema(schema, key) {
                    check(child, value, &join(path, key), false, causes);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn schema() -> Value {
        json!({
            "type": "object",
            "properties": {
                "spec": {
                    "type": "object",
                    "required": ["deploymentName"],
                    "properties": {
                        "deploymentName": {"type": "string", "minLength": 1, "maxLength": 20,
                                           "pattern": "^[a-z][a-z0-9-]*$"},
                        "replicas": {"type": "integer", "minimum": 1, "maximum": 10, "default": 1},
                        "mode": {"type": "string", "enum": ["fast", "safe"]},
                        "ratio": {"type": "number", "nullable": true},
                        "port": {"x-kubernetes-int-or-string": true},
                        "labels": {"type": "object", "additionalProperties": {"type": "string"}},
                        "extra": {"type": "object", "x-kubernetes-preserve-unknown-fields": true},
                        "items": {"type": "array", "maxItems": 2, "items": {
                            "type": "object",
                            "properties": {"name": {"type": "string"},
                                           "weight": {"type": "integer", "default": 5}}
                        }}
                    }
                },
                "status": {"type": "object", "properties": {"ready": {"type": "boolean"}}}
            }
        })
    }

    #[test]
    fn undeclared_fields_are_pruned_and_reported_and_defaults_filled_in() {
        let mut foo = json!({
            "apiVersion": "example.com/v1", "kind": "Foo",
            "metadata": {"name": "x", "labels": {"a": "b"}},
            "spec": {
                "deploymentName": "web",
                "colour": "blue",
                "ratio": null,
                "mode": null,
                "labels": {"k": "v"},
                "extra": {"anything": {"goes": 1}},
                "items": [{"name": "a", "stray": true}, {"name": "b", "weight": 2}]
            },
            "unknownTop": 1
        });
        let pruned = prune_and_default(&schema(), &mut foo);
        assert_eq!(pruned, ["spec.colour", "spec.items[0].stray", "unknownTop"]);
        assert_eq!(
            foo,
            json!({
                "apiVersion": "example.com/v1", "kind": "Foo",
                "metadata": {"name": "x", "labels": {"a": "b"}},
                "spec": {
                    "deploymentName": "web",
                    "replicas": 1,
                    "ratio": null,
                    "labels": {"k": "v"},
                    "extra": {"anything": {"goes": 1}},
                    "items": [{"name": "a", "weight": 5}, {"name": "b", "weight": 2}]
                }
            })
        );
        assert!(validate(&schema(), &foo).is_empty());
    }

    #[test]
    fn violations_are_reported_each_with_its_field_and_the_server_s_words() {
        let foo = json!({
            "spec": {
                "deploymentName": "Web_1",
                "replicas": "three",
                "mode": "slow",
                "port": true,
                "labels": {"k": 1},
                "items": [{"name": 1}, {}, {}]
            },
            "status": {"ready": "yes"}
        });
        let messages: Vec<String> = validate(&schema(), &foo)
            .iter()
            .map(Cause::message)
            .collect();
        assert_eq!(
            messages,
            [
                "spec.deploymentName: Invalid value: \"Web_1\": spec.deploymentName in body should match '^[a-z][a-z0-9-]*$'",
                "spec.items: Too many: 3: must have at most 2 items",
                "spec.items[0].name: Invalid value: \"integer\": spec.items[0].name in body must be of type string: \"integer\"",
                "spec.labels.k: Invalid value: \"integer\": spec.labels.k in body must be of type string: \"integer\"",
                "spec.mode: Unsupported value: \"slow\": supported values: \"fast\", \"safe\"",
                "spec.port: Invalid value: \"boolean\": spec.port in body must be of type integer,string: \"boolean\"",
                "spec.replicas: Invalid value: \"string\": spec.replicas in body must be of type integer: \"string\"",
                "status.ready: Invalid value: \"string\": status.ready in body must be of type boolean: \"string\"",
            ]
        );
        let causes = validate(&schema(), &json!({"spec": {"replicas": 0}}));
        let reasons: Vec<(&str, &str)> = causes
            .iter()
            .map(|c| (c.field.as_str(), c.reason))
            .collect();
        assert_eq!(
            reasons,
            [
                ("spec.deploymentName", "FieldValueRequired"),
                ("spec.replicas", "FieldValueInvalid")
            ]
        );
        assert_eq!(
            causes[1].body,
            "Invalid value: 0: spec.replicas in body should be greater than or equal to 1"
        );
        let long = validate(
            &schema(),
            &json!({"spec": {"deploymentName": "", "replicas": 11}}),
        );
        let bodies: Vec<&str> = long.iter().map(|c| c.body.as_str()).collect();
        assert_eq!(
            bodies,
            [
                "Invalid value: \"\": spec.deploymentName in body should be at least 1 chars long",
                "Invalid value: \"\": spec.deploymentName in body should match '^[a-z][a-z0-9-]*$'",
                "Invalid value: 11: spec.replicas in body should be less than or equal to 10",
            ]
        );
        let too_long = validate(
            &schema(),
            &json!({"spec": {"deploymentName": "a".repeat(21)}}),
        );
        assert_eq!(too_long[0].reason, "FieldValueTooLong");
        assert_eq!(too_long[0].body, "Too long: may not be longer than 20");
    }

    #[test]
    fn formats_and_list_types_are_checked_in_the_server_s_words() {
        let schema = json!({"type": "object", "properties": {"spec": {"type": "object", "properties": {
            "id": {"type": "string", "format": "uuid"},
            "note": {"type": "string", "format": "no-such-format"},
            "tags": {"type": "array", "x-kubernetes-list-type": "set", "items": {"type": "string"}},
            "ports": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["port", "protocol"],
                      "items": {"type": "object", "properties": {
                          "port": {"type": "integer"}, "protocol": {"type": "string"}}}},
            "items": {"type": "array", "x-kubernetes-list-type": "map",
                      "x-kubernetes-list-map-keys": ["name"],
                      "items": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "plain": {"type": "array", "items": {"type": "string"}}
        }}}});
        let object = json!({"spec": {
            "id": "not-a-uuid",
            "note": "anything",
            "tags": ["a", "b", "a", "a", "b"],
            "ports": [{"port": 80, "protocol": "TCP"}, {"port": 80, "protocol": "UDP"},
                      {"protocol": "TCP", "port": 80}],
            "items": [{"name": "x"}, {"name": "x"}, {}, {}],
            "plain": ["a", "a"]
        }});
        let messages: Vec<String> = validate(&schema, &object)
            .iter()
            .map(Cause::message)
            .collect();
        assert_eq!(
            messages,
            [
                "spec.id: Invalid value: \"not-a-uuid\": spec.id in body must be of type uuid: \"not-a-uuid\"",
                "spec.items[1]: Duplicate value: map[string]interface {}{\"name\":\"x\"}",
                "spec.items[3]: Duplicate value: map[string]interface {}{}",
                "spec.ports[2]: Duplicate value: map[string]interface {}{\"port\":80, \"protocol\":\"TCP\"}",
                "spec.tags[2]: Duplicate value: \"a\"",
                "spec.tags[4]: Duplicate value: \"b\"",
            ]
        );
        let valid = json!({"spec": {"id": "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "tags": ["a", "b"],
                                    "items": [{"name": "x"}, {"name": "y"}]}});
        assert!(validate(&schema, &valid).is_empty());
    }

    #[test]
    fn an_integral_number_is_an_integer_and_an_integer_a_number() {
        let schema = json!({"type": "object", "properties": {
            "i": {"type": "integer"}, "n": {"type": "number"}}});
        assert!(validate(&schema, &json!({"i": 2.0, "n": 3})).is_empty());
        assert_eq!(validate(&schema, &json!({"i": 2.5})).len(), 1);
    }
}
