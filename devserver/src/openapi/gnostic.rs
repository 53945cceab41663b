//! The protobuf form of `/openapi/v2`: gnostic's `openapi.v2.Document`
//! (github.com/google/gnostic-models, `openapiv2/OpenAPIv2.proto`), the
//! messages and fields of it the dev server's document fills, and the
//! conversion of the JSON Swagger 2.0 document into them, as kube-apiserver
//! makes its protobuf form (gnostic's `ParseDocument` of the JSON, then
//! `proto.Marshal`).
//!
//! Field numbers are the proto file's. Scalars are proto3's: a zero, `false`
//! or empty string is not sent, so `minimum: 0` does not survive, as it does
//! not from kube-apiserver. `default`, `enum`, `example` and vendor
//! extensions are `Any` messages whose `yaml` is the value as YAML (block
//! style, every string double-quoted), which clients read with a YAML parser.
//! Keys outside what a Swagger 2.0 document, path item, operation, parameter,
//! response or schema object names are not carried (the document has none:
//! the round trip test compares every key).

use prost::Message;
use serde_json::{Map, Value};

/// `openapi.v2.Document`.
#[derive(Clone, PartialEq, Message)]
pub struct Document {
    #[prost(string, tag = "1")]
    pub swagger: String,
    #[prost(message, optional, tag = "2")]
    pub info: Option<Info>,
    #[prost(message, optional, tag = "8")]
    pub paths: Option<Paths>,
    #[prost(message, optional, tag = "9")]
    pub definitions: Option<Definitions>,
}

/// `openapi.v2.Info`.
#[derive(Clone, PartialEq, Message)]
pub struct Info {
    #[prost(string, tag = "1")]
    pub title: String,
    #[prost(string, tag = "2")]
    pub version: String,
    #[prost(string, tag = "3")]
    pub description: String,
}

/// `openapi.v2.Paths`.
#[derive(Clone, PartialEq, Message)]
pub struct Paths {
    #[prost(message, repeated, tag = "1")]
    pub vendor_extension: Vec<NamedAny>,
    #[prost(message, repeated, tag = "2")]
    pub path: Vec<NamedPathItem>,
}

/// `openapi.v2.NamedPathItem`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedPathItem {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<PathItem>,
}

/// `openapi.v2.PathItem`.
#[derive(Clone, PartialEq, Message)]
pub struct PathItem {
    #[prost(message, optional, tag = "2")]
    pub get: Option<Operation>,
    #[prost(message, optional, tag = "3")]
    pub put: Option<Operation>,
    #[prost(message, optional, tag = "4")]
    pub post: Option<Operation>,
    #[prost(message, optional, tag = "5")]
    pub delete: Option<Operation>,
    #[prost(message, optional, tag = "8")]
    pub patch: Option<Operation>,
    #[prost(message, repeated, tag = "9")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, repeated, tag = "10")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.Operation`.
#[derive(Clone, PartialEq, Message)]
pub struct Operation {
    #[prost(string, repeated, tag = "1")]
    pub tags: Vec<String>,
    #[prost(string, tag = "2")]
    pub summary: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "5")]
    pub operation_id: String,
    #[prost(string, repeated, tag = "6")]
    pub produces: Vec<String>,
    #[prost(string, repeated, tag = "7")]
    pub consumes: Vec<String>,
    #[prost(message, repeated, tag = "8")]
    pub parameters: Vec<ParametersItem>,
    #[prost(message, optional, tag = "9")]
    pub responses: Option<Responses>,
    #[prost(string, repeated, tag = "10")]
    pub schemes: Vec<String>,
    #[prost(bool, tag = "11")]
    pub deprecated: bool,
    #[prost(message, repeated, tag = "13")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.ParametersItem` (a parameter; never a JSON reference here).
#[derive(Clone, PartialEq, Message)]
pub struct ParametersItem {
    #[prost(message, optional, tag = "1")]
    pub parameter: Option<Parameter>,
}

/// `openapi.v2.Parameter`: a body parameter or another.
#[derive(Clone, PartialEq, Message)]
pub struct Parameter {
    #[prost(oneof = "ParameterOneof", tags = "1, 2")]
    pub oneof: Option<ParameterOneof>,
}

/// The `oneof` of `openapi.v2.Parameter`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum ParameterOneof {
    #[prost(message, boxed, tag = "1")]
    BodyParameter(Box<BodyParameter>),
    #[prost(message, tag = "2")]
    NonBodyParameter(NonBodyParameter),
}

/// `openapi.v2.BodyParameter`.
#[derive(Clone, PartialEq, Message)]
pub struct BodyParameter {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(string, tag = "2")]
    pub name: String,
    #[prost(string, tag = "3")]
    pub r#in: String,
    #[prost(bool, tag = "4")]
    pub required: bool,
    #[prost(message, optional, tag = "5")]
    pub schema: Option<Schema>,
}

/// `openapi.v2.NonBodyParameter`: a query or a path parameter here.
#[derive(Clone, PartialEq, Message)]
pub struct NonBodyParameter {
    #[prost(oneof = "NonBodyOneof", tags = "3, 4")]
    pub oneof: Option<NonBodyOneof>,
}

/// The `oneof` of `openapi.v2.NonBodyParameter`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum NonBodyOneof {
    #[prost(message, tag = "3")]
    QueryParameterSubSchema(QueryParameterSubSchema),
    #[prost(message, tag = "4")]
    PathParameterSubSchema(PathParameterSubSchema),
}

/// `openapi.v2.QueryParameterSubSchema`.
#[derive(Clone, PartialEq, Message)]
pub struct QueryParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "6")]
    pub r#type: String,
    #[prost(bool, tag = "20")]
    pub unique_items: bool,
}

/// `openapi.v2.PathParameterSubSchema`.
#[derive(Clone, PartialEq, Message)]
pub struct PathParameterSubSchema {
    #[prost(bool, tag = "1")]
    pub required: bool,
    #[prost(string, tag = "2")]
    pub r#in: String,
    #[prost(string, tag = "3")]
    pub description: String,
    #[prost(string, tag = "4")]
    pub name: String,
    #[prost(string, tag = "5")]
    pub r#type: String,
    #[prost(bool, tag = "19")]
    pub unique_items: bool,
}

/// `openapi.v2.Responses`.
#[derive(Clone, PartialEq, Message)]
pub struct Responses {
    #[prost(message, repeated, tag = "1")]
    pub response_code: Vec<NamedResponseValue>,
}

/// `openapi.v2.NamedResponseValue`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedResponseValue {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<ResponseValue>,
}

/// `openapi.v2.ResponseValue` (a response; never a JSON reference here).
#[derive(Clone, PartialEq, Message)]
pub struct ResponseValue {
    #[prost(message, optional, tag = "1")]
    pub response: Option<Response>,
}

/// `openapi.v2.Response`.
#[derive(Clone, PartialEq, Message)]
pub struct Response {
    #[prost(string, tag = "1")]
    pub description: String,
    #[prost(message, optional, tag = "2")]
    pub schema: Option<SchemaItem>,
}

/// `openapi.v2.SchemaItem` (a schema; never a file schema here).
#[derive(Clone, PartialEq, Message)]
pub struct SchemaItem {
    #[prost(message, optional, tag = "1")]
    pub schema: Option<Schema>,
}

/// `openapi.v2.Definitions`.
#[derive(Clone, PartialEq, Message)]
pub struct Definitions {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `openapi.v2.NamedSchema`.
#[derive(Clone, PartialEq, Message)]
pub struct NamedSchema {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Schema>,
}

/// `openapi.v2.Schema`, but `xml` and `externalDocs`.
#[derive(Clone, PartialEq, Message)]
pub struct Schema {
    #[prost(string, tag = "1")]
    pub r#ref: String,
    #[prost(string, tag = "2")]
    pub format: String,
    #[prost(string, tag = "3")]
    pub title: String,
    #[prost(string, tag = "4")]
    pub description: String,
    #[prost(message, optional, tag = "5")]
    pub default: Option<Any>,
    #[prost(double, tag = "6")]
    pub multiple_of: f64,
    #[prost(double, tag = "7")]
    pub maximum: f64,
    #[prost(bool, tag = "8")]
    pub exclusive_maximum: bool,
    #[prost(double, tag = "9")]
    pub minimum: f64,
    #[prost(bool, tag = "10")]
    pub exclusive_minimum: bool,
    #[prost(int64, tag = "11")]
    pub max_length: i64,
    #[prost(int64, tag = "12")]
    pub min_length: i64,
    #[prost(string, tag = "13")]
    pub pattern: String,
    #[prost(int64, tag = "14")]
    pub max_items: i64,
    #[prost(int64, tag = "15")]
    pub min_items: i64,
    #[prost(bool, tag = "16")]
    pub unique_items: bool,
    #[prost(int64, tag = "17")]
    pub max_properties: i64,
    #[prost(int64, tag = "18")]
    pub min_properties: i64,
    #[prost(string, repeated, tag = "19")]
    pub required: Vec<String>,
    #[prost(message, repeated, tag = "20")]
    pub r#enum: Vec<Any>,
    #[prost(message, optional, tag = "21")]
    pub additional_properties: Option<AdditionalPropertiesItem>,
    #[prost(message, optional, tag = "22")]
    pub r#type: Option<TypeItem>,
    #[prost(message, optional, tag = "23")]
    pub items: Option<ItemsItem>,
    #[prost(message, repeated, tag = "24")]
    pub all_of: Vec<Schema>,
    #[prost(message, optional, tag = "25")]
    pub properties: Option<Properties>,
    #[prost(string, tag = "26")]
    pub discriminator: String,
    #[prost(bool, tag = "27")]
    pub read_only: bool,
    #[prost(message, optional, tag = "30")]
    pub example: Option<Any>,
    #[prost(message, repeated, tag = "31")]
    pub vendor_extension: Vec<NamedAny>,
}

/// `openapi.v2.AdditionalPropertiesItem`: a schema or a boolean.
#[derive(Clone, PartialEq, Message)]
pub struct AdditionalPropertiesItem {
    #[prost(oneof = "AdditionalPropertiesOneof", tags = "1, 2")]
    pub oneof: Option<AdditionalPropertiesOneof>,
}

/// The `oneof` of `openapi.v2.AdditionalPropertiesItem`.
#[derive(Clone, PartialEq, prost::Oneof)]
pub enum AdditionalPropertiesOneof {
    #[prost(message, boxed, tag = "1")]
    Schema(Box<Schema>),
    #[prost(bool, tag = "2")]
    Boolean(bool),
}

/// `openapi.v2.TypeItem`.
#[derive(Clone, PartialEq, Message)]
pub struct TypeItem {
    #[prost(string, repeated, tag = "1")]
    pub value: Vec<String>,
}

/// `openapi.v2.ItemsItem`.
#[derive(Clone, PartialEq, Message)]
pub struct ItemsItem {
    #[prost(message, repeated, tag = "1")]
    pub schema: Vec<Schema>,
}

/// `openapi.v2.Properties`.
#[derive(Clone, PartialEq, Message)]
pub struct Properties {
    #[prost(message, repeated, tag = "1")]
    pub additional_properties: Vec<NamedSchema>,
}

/// `openapi.v2.NamedAny`: a vendor extension.
#[derive(Clone, PartialEq, Message)]
pub struct NamedAny {
    #[prost(string, tag = "1")]
    pub name: String,
    #[prost(message, optional, tag = "2")]
    pub value: Option<Any>,
}

/// `openapi.v2.Any`: a value as YAML (`yaml`, field 2).
#[derive(Clone, PartialEq, Message)]
pub struct Any {
    #[prost(string, tag = "2")]
    pub yaml: String,
}

/// The protobuf form of the JSON Swagger 2.0 document `doc`.
pub fn encode(doc: &Value) -> Vec<u8> {
    document(doc).encode_to_vec()
}

fn document(doc: &Value) -> Document {
    let info = doc.get("info").map(|info| Info {
        title: string(&info["title"]),
        version: string(&info["version"]),
        description: string(&info["description"]),
    });
    let paths = doc.get("paths").map(|paths| Paths {
        vendor_extension: vendor_extensions(paths),
        path: entries(paths)
            .filter(|(name, _)| name.starts_with('/'))
            .map(|(name, item)| NamedPathItem {
                name: name.clone(),
                value: Some(path_item(item)),
            })
            .collect(),
    });
    let definitions = doc.get("definitions").map(|definitions| Definitions {
        additional_properties: named_schemas(definitions),
    });
    Document {
        swagger: string(&doc["swagger"]),
        info,
        paths,
        definitions,
    }
}

fn path_item(item: &Value) -> PathItem {
    let operation = |method: &str| item.get(method).map(operation);
    PathItem {
        get: operation("get"),
        put: operation("put"),
        post: operation("post"),
        delete: operation("delete"),
        patch: operation("patch"),
        parameters: parameters(&item["parameters"]),
        vendor_extension: vendor_extensions(item),
    }
}

fn operation(op: &Value) -> Operation {
    let responses = op.get("responses").map(|responses| Responses {
        response_code: entries(responses)
            .map(|(code, response)| NamedResponseValue {
                name: code.clone(),
                value: Some(ResponseValue {
                    response: Some(Response {
                        description: string(&response["description"]),
                        schema: response.get("schema").map(|s| SchemaItem {
                            schema: Some(schema(s)),
                        }),
                    }),
                }),
            })
            .collect(),
    });
    Operation {
        tags: strings(&op["tags"]),
        summary: string(&op["summary"]),
        description: string(&op["description"]),
        operation_id: string(&op["operationId"]),
        produces: strings(&op["produces"]),
        consumes: strings(&op["consumes"]),
        parameters: parameters(&op["parameters"]),
        responses,
        schemes: strings(&op["schemes"]),
        deprecated: op["deprecated"] == true,
        vendor_extension: vendor_extensions(op),
    }
}

/// Each parameter as gnostic tells them apart: by `in`.
fn parameters(list: &Value) -> Vec<ParametersItem> {
    let Some(list) = list.as_array() else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|p| {
            let oneof = match p["in"].as_str()? {
                "body" => ParameterOneof::BodyParameter(Box::new(BodyParameter {
                    description: string(&p["description"]),
                    name: string(&p["name"]),
                    r#in: "body".into(),
                    required: p["required"] == true,
                    schema: p.get("schema").map(schema),
                })),
                "query" => {
                    let (required, description, name, r#type, unique_items) = non_body(p);
                    let query = QueryParameterSubSchema {
                        r#in: "query".into(),
                        required,
                        description,
                        name,
                        r#type,
                        unique_items,
                    };
                    let oneof = Some(NonBodyOneof::QueryParameterSubSchema(query));
                    ParameterOneof::NonBodyParameter(NonBodyParameter { oneof })
                }
                "path" => {
                    let (required, description, name, r#type, unique_items) = non_body(p);
                    let path = PathParameterSubSchema {
                        r#in: "path".into(),
                        required,
                        description,
                        name,
                        r#type,
                        unique_items,
                    };
                    let oneof = Some(NonBodyOneof::PathParameterSubSchema(path));
                    ParameterOneof::NonBodyParameter(NonBodyParameter { oneof })
                }
                _ => return None,
            };
            Some(ParametersItem {
                parameter: Some(Parameter { oneof: Some(oneof) }),
            })
        })
        .collect()
}

/// What a query and a path parameter have alike: `required`,
/// `description`, `name`, `type` and `uniqueItems`.
fn non_body(p: &Value) -> (bool, String, String, String, bool) {
    (
        p["required"] == true,
        string(&p["description"]),
        string(&p["name"]),
        string(&p["type"]),
        p["uniqueItems"] == true,
    )
}

fn schema(s: &Value) -> Schema {
    let additional_properties = match s.get("additionalProperties") {
        Some(Value::Bool(allowed)) => Some(AdditionalPropertiesOneof::Boolean(*allowed)),
        Some(sub) if sub.is_object() => {
            Some(AdditionalPropertiesOneof::Schema(Box::new(schema(sub))))
        }
        _ => None,
    };
    let r#type = match s.get("type") {
        Some(Value::String(t)) => Some(TypeItem {
            value: vec![t.clone()],
        }),
        Some(types @ Value::Array(_)) => Some(TypeItem {
            value: strings(types),
        }),
        _ => None,
    };
    let items = match s.get("items") {
        Some(Value::Array(list)) => Some(ItemsItem {
            schema: list.iter().map(schema).collect(),
        }),
        Some(item) if item.is_object() => Some(ItemsItem {
            schema: vec![schema(item)],
        }),
        _ => None,
    };
    Schema {
        r#ref: string(&s["$ref"]),
        format: string(&s["format"]),
        title: string(&s["title"]),
        description: string(&s["description"]),
        default: s.get("default").map(any),
        multiple_of: s["multipleOf"].as_f64().unwrap_or_default(),
        maximum: s["maximum"].as_f64().unwrap_or_default(),
        exclusive_maximum: s["exclusiveMaximum"] == true,
        minimum: s["minimum"].as_f64().unwrap_or_default(),
        exclusive_minimum: s["exclusiveMinimum"] == true,
        max_length: s["maxLength"].as_i64().unwrap_or_default(),
        min_length: s["minLength"].as_i64().unwrap_or_default(),
        pattern: string(&s["pattern"]),
        max_items: s["maxItems"].as_i64().unwrap_or_default(),
        min_items: s["minItems"].as_i64().unwrap_or_default(),
        unique_items: s["uniqueItems"] == true,
        max_properties: s["maxProperties"].as_i64().unwrap_or_default(),
        min_properties: s["minProperties"].as_i64().unwrap_or_default(),
        required: strings(&s["required"]),
        r#enum: s["enum"]
            .as_array()
            .into_iter()
            .flatten()
            .map(any)
            .collect(),
        additional_properties: additional_properties
            .map(|oneof| AdditionalPropertiesItem { oneof: Some(oneof) }),
        r#type,
        items,
        all_of: s["allOf"]
            .as_array()
            .into_iter()
            .flatten()
            .map(schema)
            .collect(),
        properties: s.get("properties").map(|properties| Properties {
            additional_properties: named_schemas(properties),
        }),
        discriminator: string(&s["discriminator"]),
        read_only: s["readOnly"] == true,
        example: s.get("example").map(any),
        vendor_extension: vendor_extensions(s),
    }
}

fn named_schemas(map: &Value) -> Vec<NamedSchema> {
    entries(map)
        .map(|(name, s)| NamedSchema {
            name: name.clone(),
            value: Some(schema(s)),
        })
        .collect()
}

/// The `x-` keys of `object`, in key order.
fn vendor_extensions(object: &Value) -> Vec<NamedAny> {
    entries(object)
        .filter(|(name, _)| name.starts_with("x-"))
        .map(|(name, value)| NamedAny {
            name: name.clone(),
            value: Some(any(value)),
        })
        .collect()
}

fn entries(object: &Value) -> impl Iterator<Item = (&String, &Value)> {
    object.as_object().into_iter().flat_map(Map::iter)
}

fn string(value: &Value) -> String {
    value.as_str().unwrap_or_default().to_string()
}

fn strings(list: &Value) -> Vec<String> {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

fn any(value: &Value) -> Any {
    let mut yaml = String::new();
    write_yaml(&mut yaml, value, 0, false);
    Any { yaml }
}

/// Appends `value` as block YAML whose lines start at column `indent` (the
/// first line's indentation already written when `inline`): a non-empty
/// array as `- ` items, a non-empty object as `"key": value` lines, anything
/// else as its JSON text, which YAML reads alike (a double-quoted string,
/// a number, `true`, `null`, `[]`, `{}`).
fn write_yaml(out: &mut String, value: &Value, indent: usize, mut inline: bool) {
    let mut pad = |out: &mut String| {
        if !inline {
            out.push_str(&" ".repeat(indent));
        }
        inline = false;
    };
    match value {
        Value::Array(items) if !items.is_empty() => {
            for item in items {
                pad(out);
                out.push_str("- ");
                write_yaml(out, item, indent + 2, true);
            }
        }
        Value::Object(map) if !map.is_empty() => {
            for (key, item) in map {
                pad(out);
                out.push_str(&Value::from(key.as_str()).to_string());
                out.push(':');
                if is_block(item) {
                    out.push('\n');
                    write_yaml(out, item, indent + 2, false);
                } else {
                    out.push(' ');
                    write_yaml(out, item, indent, true);
                }
            }
        }
        scalar => {
            pad(out);
            out.push_str(&scalar.to_string());
            out.push('\n');
        }
    }
}

fn is_block(value: &Value) -> bool {
    match value {
        Value::Array(items) => !items.is_empty(),
        Value::Object(map) => !map.is_empty(),
        _ => false,
    }
}

/// The JSON document a protobuf `Document` stands for, the `Any` values
/// read back as YAML: the inverse of [`encode`], for tests.
#[cfg(test)]
pub fn decode(bytes: &[u8]) -> Value {
    use serde_json::json;

    fn any_json(any: &Any) -> Value {
        serde_saphyr::from_str(&any.yaml).unwrap_or_else(|e| panic!("not YAML ({e}): {}", any.yaml))
    }
    fn put(out: &mut Map<String, Value>, key: &str, value: Value) {
        let empty = match &value {
            Value::String(s) => s.is_empty(),
            Value::Bool(b) => !b,
            Value::Array(a) => a.is_empty(),
            Value::Number(n) => n.as_f64() == Some(0.0),
            _ => false,
        };
        if !empty {
            out.insert(key.into(), value);
        }
    }
    fn number(n: f64) -> Value {
        if n.fract() == 0.0 && n.abs() < 1e15 {
            json!(n as i64)
        } else {
            json!(n)
        }
    }
    fn extensions(out: &mut Map<String, Value>, list: &[NamedAny]) {
        for ext in list {
            let value = ext.value.as_ref().map(any_json).unwrap_or(Value::Null);
            out.insert(ext.name.clone(), value);
        }
    }
    fn schema_json(s: &Schema) -> Value {
        let mut out = Map::new();
        put(&mut out, "$ref", json!(s.r#ref));
        put(&mut out, "format", json!(s.format));
        put(&mut out, "title", json!(s.title));
        put(&mut out, "description", json!(s.description));
        if let Some(default) = &s.default {
            out.insert("default".into(), any_json(default));
        }
        put(&mut out, "multipleOf", number(s.multiple_of));
        put(&mut out, "maximum", number(s.maximum));
        put(&mut out, "exclusiveMaximum", json!(s.exclusive_maximum));
        put(&mut out, "minimum", number(s.minimum));
        put(&mut out, "exclusiveMinimum", json!(s.exclusive_minimum));
        put(&mut out, "maxLength", json!(s.max_length));
        put(&mut out, "minLength", json!(s.min_length));
        put(&mut out, "pattern", json!(s.pattern));
        put(&mut out, "maxItems", json!(s.max_items));
        put(&mut out, "minItems", json!(s.min_items));
        put(&mut out, "uniqueItems", json!(s.unique_items));
        put(&mut out, "maxProperties", json!(s.max_properties));
        put(&mut out, "minProperties", json!(s.min_properties));
        put(&mut out, "required", json!(s.required));
        put(
            &mut out,
            "enum",
            Value::Array(s.r#enum.iter().map(any_json).collect()),
        );
        match s
            .additional_properties
            .as_ref()
            .and_then(|a| a.oneof.as_ref())
        {
            Some(AdditionalPropertiesOneof::Schema(sub)) => {
                out.insert("additionalProperties".into(), schema_json(sub));
            }
            Some(AdditionalPropertiesOneof::Boolean(allowed)) => {
                out.insert("additionalProperties".into(), json!(allowed));
            }
            None => {}
        }
        if let Some(t) = &s.r#type {
            let value = match t.value.as_slice() {
                [one] => json!(one),
                many => json!(many),
            };
            out.insert("type".into(), value);
        }
        if let Some(items) = &s.items {
            let value = match items.schema.as_slice() {
                [one] => schema_json(one),
                many => Value::Array(many.iter().map(schema_json).collect()),
            };
            out.insert("items".into(), value);
        }
        put(
            &mut out,
            "allOf",
            Value::Array(s.all_of.iter().map(schema_json).collect()),
        );
        if let Some(properties) = &s.properties {
            out.insert(
                "properties".into(),
                named_json(&properties.additional_properties),
            );
        }
        put(&mut out, "discriminator", json!(s.discriminator));
        put(&mut out, "readOnly", json!(s.read_only));
        if let Some(example) = &s.example {
            out.insert("example".into(), any_json(example));
        }
        extensions(&mut out, &s.vendor_extension);
        Value::Object(out)
    }
    fn named_json(list: &[NamedSchema]) -> Value {
        let map = list
            .iter()
            .map(|n| {
                let value = n.value.as_ref().map(schema_json).unwrap_or(Value::Null);
                (n.name.clone(), value)
            })
            .collect();
        Value::Object(map)
    }
    fn parameters_json(list: &[ParametersItem]) -> Value {
        let list = list.iter().map(|item| {
            let mut out = Map::new();
            match item.parameter.as_ref().and_then(|p| p.oneof.as_ref()) {
                Some(ParameterOneof::BodyParameter(p)) => {
                    put(&mut out, "description", json!(p.description));
                    put(&mut out, "name", json!(p.name));
                    put(&mut out, "in", json!(p.r#in));
                    put(&mut out, "required", json!(p.required));
                    if let Some(s) = &p.schema {
                        out.insert("schema".into(), schema_json(s));
                    }
                }
                Some(ParameterOneof::NonBodyParameter(p)) => {
                    let fields = match &p.oneof {
                        Some(NonBodyOneof::QueryParameterSubSchema(q)) => Some((
                            q.required,
                            &q.r#in,
                            &q.description,
                            &q.name,
                            &q.r#type,
                            q.unique_items,
                        )),
                        Some(NonBodyOneof::PathParameterSubSchema(q)) => Some((
                            q.required,
                            &q.r#in,
                            &q.description,
                            &q.name,
                            &q.r#type,
                            q.unique_items,
                        )),
                        None => None,
                    };
                    if let Some((required, r#in, description, name, r#type, unique)) = fields {
                        put(&mut out, "required", json!(required));
                        put(&mut out, "in", json!(r#in));
                        put(&mut out, "description", json!(description));
                        put(&mut out, "name", json!(name));
                        put(&mut out, "type", json!(r#type));
                        put(&mut out, "uniqueItems", json!(unique));
                    }
                }
                None => {}
            }
            Value::Object(out)
        });
        Value::Array(list.collect())
    }
    fn operation_json(op: &Operation) -> Value {
        let mut out = Map::new();
        put(&mut out, "tags", json!(op.tags));
        put(&mut out, "summary", json!(op.summary));
        put(&mut out, "description", json!(op.description));
        put(&mut out, "operationId", json!(op.operation_id));
        put(&mut out, "produces", json!(op.produces));
        put(&mut out, "consumes", json!(op.consumes));
        put(&mut out, "parameters", parameters_json(&op.parameters));
        if let Some(responses) = &op.responses {
            let map = responses
                .response_code
                .iter()
                .map(|r| {
                    let mut response = Map::new();
                    let value = r.value.as_ref().and_then(|v| v.response.as_ref());
                    if let Some(value) = value {
                        put(&mut response, "description", json!(value.description));
                        if let Some(s) = value.schema.as_ref().and_then(|s| s.schema.as_ref()) {
                            response.insert("schema".into(), schema_json(s));
                        }
                    }
                    (r.name.clone(), Value::Object(response))
                })
                .collect();
            out.insert("responses".into(), Value::Object(map));
        }
        put(&mut out, "schemes", json!(op.schemes));
        put(&mut out, "deprecated", json!(op.deprecated));
        extensions(&mut out, &op.vendor_extension);
        Value::Object(out)
    }

    let doc = Document::decode(bytes).expect("an openapi.v2.Document");
    let mut out = Map::new();
    put(&mut out, "swagger", json!(doc.swagger));
    if let Some(info) = &doc.info {
        let mut map = Map::new();
        put(&mut map, "title", json!(info.title));
        put(&mut map, "version", json!(info.version));
        put(&mut map, "description", json!(info.description));
        out.insert("info".into(), Value::Object(map));
    }
    if let Some(paths) = &doc.paths {
        let mut map = Map::new();
        for named in &paths.path {
            let mut item = Map::new();
            if let Some(value) = &named.value {
                let methods = [
                    ("get", &value.get),
                    ("put", &value.put),
                    ("post", &value.post),
                    ("delete", &value.delete),
                    ("patch", &value.patch),
                ];
                for (method, op) in methods {
                    if let Some(op) = op {
                        item.insert(method.into(), operation_json(op));
                    }
                }
                put(&mut item, "parameters", parameters_json(&value.parameters));
                extensions(&mut item, &value.vendor_extension);
            }
            map.insert(named.name.clone(), Value::Object(item));
        }
        extensions(&mut map, &paths.vendor_extension);
        out.insert("paths".into(), Value::Object(map));
    }
    if let Some(definitions) = &doc.definitions {
        out.insert(
            "definitions".into(),
            named_json(&definitions.additional_properties),
        );
    }
    Value::Object(out)
}
