//! Field selectors as the API server parses them: `metadata.name`,
//! `metadata.namespace` and a kind's own selectable fields, with `=`, `==`
//! and `!=`. Label selectors come from the `recon-label-selector` crate.

use serde_json::Value;

use recon_label_selector::Selector as LabelSelector;

/// Whether an object's `metadata.labels` satisfy `selector`.
pub fn labels_match(selector: &LabelSelector, object: &Value) -> bool {
    match object
        .pointer("/metadata/labels")
        .and_then(Value::as_object)
    {
        Some(labels) => selector.matches(labels),
        None => selector.matches(&serde_json::Map::new()),
    }
}

/// The text of a `metav1.LabelSelector` (`matchLabels` and
/// `matchExpressions`) as Go's `LabelSelectorAsSelector(s).String()` writes
/// it: requirements sorted by key, `key=value`, `key in (a,b)` and
/// `key notin (a,b)` with sorted values, `key`, `!key`; `""` for an empty or
/// missing selector. `None` when an expression is no requirement (an
/// unknown operator, `In` without values, `Exists` with some), where Go's
/// conversion fails.
pub fn label_selector_text(selector: &Value) -> Option<String> {
    let Some(selector) = selector.as_object() else {
        return Some(String::new());
    };
    let text = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut requirements = equal_requirements(selector.get("matchLabels"));
    for e in selector
        .get("matchExpressions")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let key = e.get("key").map(text).unwrap_or_default();
        let mut values: Vec<String> = e
            .get("values")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .map(text)
            .collect();
        values.sort();
        let values = values.join(",");
        let operator = e
            .get("operator")
            .and_then(Value::as_str)
            .unwrap_or_default();
        let requirement = match (operator, values.is_empty()) {
            ("In", false) => format!("{key} in ({values})"),
            ("NotIn", false) => format!("{key} notin ({values})"),
            ("Exists", true) => key.clone(),
            ("DoesNotExist", true) => format!("!{key}"),
            _ => return None,
        };
        requirements.push((key, requirement));
    }
    Some(joined(requirements))
}

/// The text of a `map[string]string` selector (a ReplicationController's)
/// as Go's `labels.SelectorFromSet(set).String()` writes it: `key=value`,
/// sorted by key.
pub fn set_selector_text(set: &Value) -> String {
    joined(equal_requirements(Some(set)))
}

/// A `map[string]string`'s `key=value` requirements, by key.
fn equal_requirements(set: Option<&Value>) -> Vec<(String, String)> {
    set.and_then(Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| (k.clone(), format!("{k}={}", v.as_str().unwrap_or_default())))
        .collect()
}

/// Requirements sorted by key and joined with `,`.
fn joined(mut requirements: Vec<(String, String)>) -> String {
    requirements.sort_by(|a, b| a.0.cmp(&b.0));
    let texts: Vec<String> = requirements.into_iter().map(|(_, text)| text).collect();
    texts.join(",")
}

/// One field-selector requirement: the field it names, read at `path`
/// (`absent` where the object has no value there), compared with `value`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FieldRequirement {
    pub field: String,
    pub path: String,
    /// Where the value is read when the one at `path` is empty.
    pub fallback: Option<&'static str>,
    pub absent: &'static str,
    pub value: String,
    pub negated: bool,
}

/// A field a kind can be selected on, as its `...ToSelectableFields`
/// function writes it: its name, where its value is in the object, and its
/// text when the object has none there (Go's zero value of a field that is
/// no pointer: `0` for a count, `false` for a flag; `""` otherwise).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SelectableField {
    pub name: &'static str,
    path: &'static str,
    fallback: Option<&'static str>,
    absent: &'static str,
}

impl SelectableField {
    /// A field read where its name says, `""` when absent.
    const fn at(name: &'static str) -> Self {
        SelectableField {
            name,
            path: name,
            fallback: None,
            absent: "",
        }
    }

    /// A field read where its name says, `absent` when absent.
    const fn or(name: &'static str, absent: &'static str) -> Self {
        SelectableField {
            name,
            path: name,
            fallback: None,
            absent,
        }
    }

    /// A field read at another path (`name` kept for compatibility as
    /// `metadata.name`, a Job's `status.successful` as `status.succeeded`).
    const fn from(name: &'static str, path: &'static str, absent: &'static str) -> Self {
        SelectableField {
            name,
            path,
            fallback: None,
            absent,
        }
    }

    /// A field read at `path`, or at `fallback` where that is empty (a core
    /// Event's `source`, its source component or else its reporting one).
    const fn either(name: &'static str, path: &'static str, fallback: &'static str) -> Self {
        SelectableField {
            name,
            path,
            fallback: Some(fallback),
            absent: "",
        }
    }
}

/// A parsed field selector over `metadata.name` and `metadata.namespace`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct FieldSelector {
    pub requirements: Vec<FieldRequirement>,
}

/// The fields every kind can be selected on.
pub const METADATA_FIELDS: &[SelectableField] = &[
    SelectableField::at("metadata.name"),
    SelectableField::at("metadata.namespace"),
];

impl FieldSelector {
    /// Parses a selector over `metadata.name` and `metadata.namespace` only.
    pub fn parse(s: &str) -> Result<Self, String> {
        Self::parse_for(s, &[])
    }

    /// Parses a selector over the metadata fields and `extra` (a kind's own
    /// selectable fields, e.g. `spec.nodeName` for pods).
    pub fn parse_for(s: &str, extra: &[SelectableField]) -> Result<Self, String> {
        let s = s.trim();
        if s.is_empty() {
            return Ok(Self::default());
        }
        let mut requirements = Vec::new();
        for part in s.split(',') {
            let part = part.trim();
            let (field, value, negated) = if let Some((f, v)) = part.split_once("!=") {
                (f, v, true)
            } else if let Some((f, v)) = part.split_once("==") {
                (f, v, false)
            } else if let Some((f, v)) = part.split_once('=') {
                (f, v, false)
            } else {
                return Err(format!(
                    "invalid selector: '{s}'; can't understand '{part}'"
                ));
            };
            let field = field.trim();
            let Some(known) = METADATA_FIELDS
                .iter()
                .chain(extra)
                .find(|known| known.name == field)
            else {
                let known: Vec<String> = METADATA_FIELDS
                    .iter()
                    .chain(extra)
                    .map(|f| format!("{:?}", f.name))
                    .collect();
                return Err(format!(
                    "{field:?} is not a known field selector: only {}",
                    known.join(", ")
                ));
            };
            requirements.push(FieldRequirement {
                field: field.to_string(),
                path: known.path.to_string(),
                fallback: known.fallback,
                absent: known.absent,
                value: value.trim().to_string(),
                negated,
            });
        }
        Ok(Self { requirements })
    }

    pub fn is_empty(&self) -> bool {
        self.requirements.is_empty()
    }

    /// Compares each field's text form, as `field_text` reads it.
    pub fn matches(&self, object: &Value) -> bool {
        self.requirements
            .iter()
            .all(|r| (field_text(r, object) == r.value) != r.negated)
    }
}

/// The text of the field `requirement` names: the value at its path as
/// text, or its `absent` text.
fn field_text(requirement: &FieldRequirement, object: &Value) -> String {
    let at = |path: &str| {
        let mut v = Some(object);
        for seg in path.split('.') {
            v = v.and_then(|x| x.get(seg));
        }
        match v {
            None | Some(Value::Null) => requirement.absent.to_string(),
            Some(Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        }
    };
    match (at(&requirement.path), requirement.fallback) {
        (text, Some(fallback)) if text.is_empty() => at(fallback),
        (text, _) => text,
    }
}

/// The selectable fields of a built-in kind beyond the metadata fields.
pub fn kind_fields(group: &str, plural: &str) -> &'static [SelectableField] {
    match (group, plural) {
        ("", "pods") => POD_FIELDS,
        ("", "events") => EVENT_FIELDS,
        ("events.k8s.io", "events") => EVENTS_API_FIELDS,
        ("", "secrets") => SECRET_FIELDS,
        ("", "services") => SERVICE_FIELDS,
        ("", "namespaces") => NAMESPACE_FIELDS,
        ("", "persistentvolumeclaims" | "persistentvolumes") => &[NAME],
        ("", "nodes") => NODE_FIELDS,
        ("", "replicationcontrollers") | ("apps", "replicasets") => REPLICA_SET_FIELDS,
        ("batch", "jobs") => JOB_FIELDS,
        _ => &[],
    }
}

use SelectableField as F;

/// `name`, which Namespaces, volumes and claims keep for compatibility.
const NAME: SelectableField = F::from("name", "metadata.name", "");

const SECRET_FIELDS: &[SelectableField] = &[F::at("type")];
const SERVICE_FIELDS: &[SelectableField] = &[F::at("spec.clusterIP"), F::at("spec.type")];
const NAMESPACE_FIELDS: &[SelectableField] = &[F::at("status.phase"), NAME];
const NODE_FIELDS: &[SelectableField] = &[F::or("spec.unschedulable", "false")];
const REPLICA_SET_FIELDS: &[SelectableField] = &[F::or("status.replicas", "0")];
const JOB_FIELDS: &[SelectableField] = &[F::from("status.successful", "status.succeeded", "0")];

const POD_FIELDS: &[SelectableField] = &[
    F::at("spec.nodeName"),
    F::at("spec.restartPolicy"),
    F::at("spec.schedulerName"),
    F::at("spec.serviceAccountName"),
    F::or("spec.hostNetwork", "false"),
    F::at("status.phase"),
    F::at("status.podIP"),
    F::at("status.nominatedNodeName"),
];

const EVENT_FIELDS: &[SelectableField] = &[
    F::at("involvedObject.kind"),
    F::at("involvedObject.namespace"),
    F::at("involvedObject.name"),
    F::at("involvedObject.uid"),
    F::at("involvedObject.apiVersion"),
    F::at("involvedObject.resourceVersion"),
    F::at("involvedObject.fieldPath"),
    F::at("reason"),
    F::at("reportingComponent"),
    F::either("source", "source.component", "reportingComponent"),
    F::at("type"),
];

/// An events.k8s.io Event's fields, read in the core Event the store keeps
/// (`events::core_field` renames their paths).
const EVENTS_API_FIELDS: &[SelectableField] = &[
    F::at("regarding.kind"),
    F::at("regarding.namespace"),
    F::at("regarding.name"),
    F::at("regarding.uid"),
    F::at("regarding.apiVersion"),
    F::at("regarding.resourceVersion"),
    F::at("regarding.fieldPath"),
    F::at("reason"),
    F::at("reportingController"),
    F::at("type"),
];

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn obj(labels: Value) -> Value {
        json!({"metadata": {"name": "a", "namespace": "ns", "labels": labels}})
    }

    #[test]
    fn field_selector_on_name_and_namespace() {
        let o = obj(json!({}));
        let m = |s: &str| FieldSelector::parse(s).unwrap().matches(&o);
        assert!(m("metadata.name=a"));
        assert!(m("metadata.name==a,metadata.namespace=ns"));
        assert!(!m("metadata.name!=a"));
        assert!(m("metadata.namespace!=other"));
        assert!(
            FieldSelector::parse("spec.nodeName=x")
                .unwrap_err()
                .contains("spec.nodeName")
        );
        let pod = json!({"spec": {"nodeName": "n1", "hostNetwork": true}});
        let f = FieldSelector::parse_for(
            "spec.nodeName=n1,spec.hostNetwork=true",
            kind_fields("", "pods"),
        )
        .unwrap();
        assert!(f.matches(&pod));
        let f = FieldSelector::parse_for("status.phase!=Running", kind_fields("", "pods")).unwrap();
        assert!(f.matches(&pod));
        assert!(FieldSelector::parse("metadata.name").is_err());
    }

    #[test]
    fn services_select_on_type_and_events_on_their_source() {
        let select = |selector: &str, kind: (&str, &str), object: &Value| {
            FieldSelector::parse_for(selector, kind_fields(kind.0, kind.1))
                .unwrap()
                .matches(object)
        };
        let service = json!({"spec": {"type": "LoadBalancer", "clusterIP": "10.96.0.10"}});
        assert!(select("spec.type=LoadBalancer", ("", "services"), &service));
        assert!(select("spec.clusterIP!=None", ("", "services"), &service));
        let kubelet = json!({"source": {"component": "kubelet"}, "reportingComponent": "other"});
        assert!(select("source=kubelet", ("", "events"), &kubelet));
        let reported = json!({"source": {}, "reportingComponent": "recon"});
        assert!(select("source=recon", ("", "events"), &reported));
        assert!(
            FieldSelector::parse_for("source=x", kind_fields("events.k8s.io", "events")).is_err()
        );
    }

    #[test]
    fn a_field_absent_reads_as_go_s_zero_and_some_fields_read_elsewhere() {
        let select = |selector: &str, kind: (&str, &str), object: Value| {
            FieldSelector::parse_for(selector, kind_fields(kind.0, kind.1))
                .unwrap()
                .matches(&object)
        };
        let node = json!({"metadata": {"name": "n1"}, "spec": {}});
        assert!(select(
            "spec.unschedulable=false",
            ("", "nodes"),
            node.clone()
        ));
        assert!(!select("spec.unschedulable=true", ("", "nodes"), node));
        let cordoned = json!({"metadata": {"name": "n2"}, "spec": {"unschedulable": true}});
        assert!(select("spec.unschedulable=true", ("", "nodes"), cordoned));
        let job = json!({"metadata": {"name": "j"}, "status": {}});
        assert!(select("status.successful=0", ("batch", "jobs"), job));
        let done = json!({"metadata": {"name": "j"}, "status": {"succeeded": 3}});
        assert!(select("status.successful=3", ("batch", "jobs"), done));
        let claim = json!({"metadata": {"name": "data"}});
        assert!(select(
            "name=data",
            ("", "persistentvolumeclaims"),
            claim.clone()
        ));
        assert!(!select("name!=data", ("", "persistentvolumeclaims"), claim));
        let rc = json!({"metadata": {"name": "rc"}});
        assert!(select(
            "status.replicas=0",
            ("", "replicationcontrollers"),
            rc
        ));
        assert!(
            FieldSelector::parse_for("status.successful=1", kind_fields("", "pods"))
                .unwrap_err()
                .contains("status.successful")
        );
    }

    #[test]
    fn a_label_selector_reads_as_go_writes_it() {
        let selector = json!({
            "matchLabels": {"tier": "web", "app": "a"},
            "matchExpressions": [
                {"key": "zone", "operator": "NotIn", "values": ["b", "a"]},
                {"key": "env", "operator": "In", "values": ["prod", "dev"]},
                {"key": "canary", "operator": "DoesNotExist"},
                {"key": "team", "operator": "Exists"},
            ],
        });
        assert_eq!(
            label_selector_text(&selector).unwrap(),
            "app=a,!canary,env in (dev,prod),team,tier=web,zone notin (a,b)"
        );
        // A ReplicationController's map, whatever its keys, and nothing.
        assert_eq!(set_selector_text(&json!({"b": "2", "a": "1"})), "a=1,b=2");
        assert_eq!(
            set_selector_text(&json!({"matchLabels": "x"})),
            "matchLabels=x"
        );
        let text = |s: Value| label_selector_text(&s).unwrap();
        assert_eq!(text(json!({})), "");
        assert_eq!(text(Value::Null), "");
        // No requirement: Go's conversion fails.
        for bad in [
            json!({"key": "k", "operator": "In", "values": []}),
            json!({"key": "k", "operator": "Exists", "values": ["v"]}),
            json!({"key": "k", "operator": "Near"}),
        ] {
            assert_eq!(
                label_selector_text(&json!({"matchExpressions": [bad]})),
                None
            );
        }
    }
}
