//! Server-side apply with field ownership, as structured-merge-diff does
//! it. Each manager owns a set of fields (`metadata.managedFields`, in
//! FieldsV1). An apply merges the manager's configuration into the object
//! (maps field by field, associative lists item by item by their keys,
//! sets by value, other lists whole); it conflicts when it would change a
//! field another manager owns (409, each field a cause) unless forced,
//! when the fields move to it; and it removes the fields the manager
//! applied before and no longer applies, unless another manager owns them.
//!
//! Which lists are associative, as structured-merge-diff reads an OpenAPI
//! schema: its `x-kubernetes-list-type` (`atomic`, `set`, or `map` keyed
//! by its `x-kubernetes-list-map-keys`, a key's schema `default` standing
//! for it when an item omits it), else a strategic merge patch strategy
//! (`merge` with a merge key: a map keyed by it; without: a set), else
//! atomic. A map, a field's value or an associative list's item, is owned
//! field by field, or whole where its schema says
//! `x-kubernetes-map-type: atomic`. The schema is a custom resource's (its CRD's) or a built-in
//! kind's ([`built_in_schemas`]), and every object's `metadata` is read
//! as the built-in ObjectMeta.

use std::collections::BTreeMap;

use serde_json::{Map, Value, json};

use super::built_in_schemas;
use super::meta::now_rfc3339;
use super::{ApiError, ResourceType, Subresource};

/// How a list merges and how its items are owned.
#[derive(Debug, Clone, PartialEq, Eq)]
enum ListType {
    /// Replaced whole, owned as one field.
    Atomic,
    /// Items are values, each owned alone.
    Set,
    /// Items are objects told apart by these fields, each owned alone.
    Map(Vec<KeyField>),
}

/// A key field of an associative list's items.
#[derive(Debug, Clone, PartialEq, Eq)]
struct KeyField {
    name: String,
    /// The key of an item that omits the field.
    default: Option<Value>,
}

impl KeyField {
    fn new(name: &str, default: Option<Value>) -> KeyField {
        KeyField {
            name: name.to_string(),
            default,
        }
    }

    /// The field's value in `item`, or its default.
    fn of<'v>(&'v self, item: &'v Map<String, Value>) -> Option<&'v Value> {
        item.get(&self.name).or(self.default.as_ref())
    }
}

/// What is known of a node's type: its schema (`None`: not declared), a
/// custom resource's (its CRD's) or a built-in kind's. Only a built-in
/// schema's references (`$ref`, to the other built-in schemas) are
/// followed: a CRD's schema has none that kube-apiserver would take.
#[derive(Debug, Clone, Copy)]
struct Shape<'a> {
    node: Option<&'a Value>,
    built_in: bool,
}

impl<'a> Shape<'a> {
    /// The shape of an object of `rt`.
    fn of(rt: &'a ResourceType) -> Shape<'a> {
        match rt.schema.as_deref() {
            Some(schema) => Shape {
                node: Some(schema),
                built_in: false,
            },
            None => Shape {
                node: built_in_schemas::name_of_kind(&rt.group, &rt.version, &rt.kind)
                    .and_then(built_in_schemas::get),
                built_in: true,
            },
        }
    }

    fn at(self, node: Option<&'a Value>) -> Shape<'a> {
        Shape { node, ..self }
    }

    /// This node's schema, with a built-in reference followed.
    fn resolved(self) -> Option<&'a Value> {
        match self.built_in {
            true => self.node.map(built_in_schemas::resolve),
            false => self.node,
        }
    }

    /// The shape of the field `name` of this object (`root`: the object
    /// itself, whose `metadata` is ObjectMeta).
    fn field(self, name: &str, root: bool) -> Shape<'a> {
        if root && name == "metadata" {
            return Shape {
                node: built_in_schemas::get(built_in_schemas::OBJECT_META),
                built_in: true,
            };
        }
        self.at(self.resolved().and_then(|n| {
            n.get("properties")
                .and_then(|p| p.get(name))
                .or_else(|| n.get("additionalProperties").filter(|a| a.is_object()))
        }))
    }

    /// The shape of the items of this list.
    fn items(self) -> Shape<'a> {
        self.at(self.node.and_then(|n| n.get("items")))
    }

    /// How this list merges.
    fn list_type(self) -> ListType {
        let node = self.node.unwrap_or(&Value::Null);
        let text = |key: &str| node.get(key).and_then(Value::as_str);
        match text("x-kubernetes-list-type") {
            Some("set") => ListType::Set,
            Some("map") => ListType::Map(
                node.get("x-kubernetes-list-map-keys")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .map(|name| self.key_field(name))
                    .collect(),
            ),
            Some(_) => ListType::Atomic,
            None => match (
                text("x-kubernetes-patch-strategy"),
                text("x-kubernetes-patch-merge-key"),
            ) {
                (Some("merge" | "merge,retainKeys"), Some(key)) => {
                    ListType::Map(vec![self.key_field(key)])
                }
                (Some("merge" | "merge,retainKeys"), None) => ListType::Set,
                _ => ListType::Atomic,
            },
        }
    }

    /// Whether this map (a field's value or a list's item) is owned and
    /// replaced whole: `x-kubernetes-map-type: atomic` on the node, or else
    /// on the schema it refers to (a LabelSelector, an OwnerReference).
    fn is_atomic_map(self) -> bool {
        fn map_type(node: &Value) -> Option<&str> {
            node.get("x-kubernetes-map-type").and_then(Value::as_str)
        }
        self.node
            .and_then(|node| map_type(node).or_else(|| self.resolved().and_then(map_type)))
            == Some("atomic")
    }

    /// The key field `name` of this list's items, with its default.
    fn key_field(self, name: &str) -> KeyField {
        let default = self
            .items()
            .resolved()
            .and_then(|item| item.pointer(&format!("/properties/{name}/default")))
            .cloned();
        KeyField::new(name, default)
    }
}

/// A set of fields as FieldsV1 nests it: members `f:NAME` (a map's
/// field), `k:{KEYS}` (an associative list's item), `v:VALUE` (a set's
/// item). A member without members owns its field whole; one with members
/// owns them, and itself too when `itself` (`.`, an item's existence).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct FieldSet {
    members: BTreeMap<String, FieldSet>,
    itself: bool,
}

impl FieldSet {
    /// A member: `None` when it owns nothing.
    fn node(owns_itself: bool, members: BTreeMap<String, FieldSet>) -> Option<FieldSet> {
        if members.is_empty() {
            owns_itself.then(FieldSet::default)
        } else {
            Some(FieldSet {
                members,
                itself: owns_itself,
            })
        }
    }

    fn owns_itself(&self) -> bool {
        self.itself || self.members.is_empty()
    }

    pub(super) fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Reads a `fieldsV1` value.
    pub(super) fn from_v1(value: &Value) -> FieldSet {
        let mut set = FieldSet::default();
        for (key, child) in value.as_object().into_iter().flatten() {
            if key == "." {
                set.itself = true;
            } else {
                set.members.insert(key.clone(), FieldSet::from_v1(child));
            }
        }
        if set.members.is_empty() {
            set.itself = false;
        }
        set
    }

    /// The `fieldsV1` value, as structured-merge-diff writes a set: a
    /// member owned whole is `{}`; one with members carries `.` when it is
    /// owned itself too.
    pub(super) fn to_v1(&self) -> Value {
        let mut out = Map::new();
        for (key, member) in &self.members {
            out.insert(key.clone(), member.to_v1());
        }
        if self.itself && !self.members.is_empty() && !out.contains_key(".") {
            out.insert(".".into(), json!({}));
        }
        Value::Object(out)
    }

    fn union(&self, other: &FieldSet) -> FieldSet {
        let mut members = self.members.clone();
        for (key, theirs) in &other.members {
            let merged = match members.get(key) {
                None => theirs.clone(),
                Some(mine) => {
                    let owns = mine.owns_itself() || theirs.owns_itself();
                    FieldSet::node(owns, mine.union(theirs).members).unwrap_or_default()
                }
            };
            members.insert(key.clone(), merged);
        }
        FieldSet {
            members,
            itself: false,
        }
    }

    /// What this set owns that `other` does not. With `items_stay`, an
    /// item of which `other` owns anything keeps its own existence (the
    /// removal of fields a manager stops applying leaves an item another
    /// manager has fields of).
    fn minus(&self, other: &FieldSet, items_stay: bool) -> FieldSet {
        let mut members = BTreeMap::new();
        for (key, mine) in &self.members {
            let Some(theirs) = other.members.get(key) else {
                members.insert(key.clone(), mine.clone());
                continue;
            };
            let item = key.starts_with("k:") || key.starts_with("v:");
            let owns = mine.owns_itself() && !theirs.owns_itself() && !(items_stay && item);
            let below = if theirs.owns_itself() && theirs.members.is_empty() {
                BTreeMap::new()
            } else {
                mine.minus(theirs, items_stay).members
            };
            if let Some(node) = FieldSet::node(owns, below) {
                members.insert(key.clone(), node);
            }
        }
        FieldSet {
            members,
            itself: false,
        }
    }

    /// What both sets own.
    fn intersect(&self, other: &FieldSet) -> FieldSet {
        let mut members = BTreeMap::new();
        for (key, mine) in &self.members {
            let Some(theirs) = other.members.get(key) else {
                continue;
            };
            let owns = mine.owns_itself() && theirs.owns_itself();
            let below = if mine.members.is_empty() {
                theirs.members.clone()
            } else if theirs.members.is_empty() {
                mine.members.clone()
            } else {
                mine.intersect(theirs).members
            };
            if let Some(node) = FieldSet::node(owns, below) {
                members.insert(key.clone(), node);
            }
        }
        FieldSet {
            members,
            itself: false,
        }
    }

    /// The paths of the members that own themselves.
    fn leaves(&self) -> Vec<Vec<String>> {
        let mut out = Vec::new();
        let mut path = Vec::new();
        self.collect_leaves(&mut path, &mut out);
        out
    }

    fn collect_leaves(&self, path: &mut Vec<String>, out: &mut Vec<Vec<String>>) {
        for (key, member) in &self.members {
            path.push(key.clone());
            if member.owns_itself() {
                out.push(path.clone());
            }
            member.collect_leaves(path, out);
            path.pop();
        }
    }

    /// A set owning exactly `paths` (each a leaf).
    fn of_paths(paths: &[Vec<String>]) -> FieldSet {
        let mut set = FieldSet::default();
        for path in paths {
            let mut node = &mut set;
            for key in path {
                node = node.members.entry(key.clone()).or_default();
            }
            node.itself = true;
        }
        normalize(&mut set);
        set
    }
}

/// Clears `itself` where a node has no members (a leaf already owns itself).
fn normalize(set: &mut FieldSet) {
    for member in set.members.values_mut() {
        normalize(member);
    }
    if set.members.is_empty() {
        set.itself = false;
    }
}

/// The fields an applied configuration sets, or an object has: every
/// field but `apiVersion`, `kind` and the metadata the server owns; the
/// status only through the status subresource where there is one, and
/// nothing else through it.
fn fields_of(object: &Value, rt: &ResourceType, subresource: Option<Subresource>) -> FieldSet {
    let Some(map) = object.as_object() else {
        return FieldSet::default();
    };
    let mut set = object_fields(map, Shape::of(rt), true);
    match subresource {
        Some(Subresource::Status) => set.members.retain(|k, _| k == "f:status"),
        _ if rt.status_subresource => {
            set.members.remove("f:status");
        }
        _ => {}
    }
    set
}

/// Metadata the server sets, never owned.
const SERVER_METADATA: &[&str] = &[
    "name",
    "namespace",
    "uid",
    "resourceVersion",
    "generation",
    "creationTimestamp",
    "deletionTimestamp",
    "deletionGracePeriodSeconds",
    "managedFields",
    "selfLink",
];

fn object_fields(map: &Map<String, Value>, shape: Shape, root: bool) -> FieldSet {
    let mut set = FieldSet::default();
    for (key, value) in map {
        if root && matches!(key.as_str(), "apiVersion" | "kind") {
            continue;
        }
        let member = if root && key == "metadata" {
            let mut meta = value.clone();
            if let Some(meta) = meta.as_object_mut() {
                meta.retain(|k, _| !SERVER_METADATA.contains(&k.as_str()));
                if meta.is_empty() {
                    continue;
                }
            }
            value_fields(&meta, shape.field(key, root))
        } else {
            value_fields(value, shape.field(key, root))
        };
        set.members.insert(format!("f:{key}"), member);
    }
    set
}

/// The fields of `value`, of shape `shape`.
fn value_fields(value: &Value, shape: Shape) -> FieldSet {
    match value {
        Value::Object(map) if !map.is_empty() && !shape.is_atomic_map() => {
            object_fields(map, shape, false)
        }
        Value::Array(items) if !items.is_empty() => {
            let members = match shape.list_type() {
                ListType::Atomic => return FieldSet::default(),
                ListType::Set => items
                    .iter()
                    .map(|item| (format!("v:{item}"), FieldSet::default()))
                    .collect(),
                ListType::Map(keys) => items
                    .iter()
                    .filter_map(|item| {
                        let key = item_key(item, &keys)?;
                        let member = if shape.items().is_atomic_map() {
                            FieldSet::default()
                        } else {
                            let fields = object_fields(item.as_object()?, shape.items(), false);
                            FieldSet::node(true, fields.members)?
                        };
                        Some((format!("k:{key}"), member))
                    })
                    .collect(),
            };
            FieldSet {
                members,
                itself: false,
            }
        }
        _ => FieldSet::default(),
    }
}

/// An associative list item's key: its key fields (or their defaults), as
/// JSON.
fn item_key(item: &Value, keys: &[KeyField]) -> Option<String> {
    let object = item.as_object()?;
    let key: Map<String, Value> = keys
        .iter()
        .filter_map(|k| Some((k.name.clone(), k.of(object)?.clone())))
        .collect();
    (!key.is_empty()).then(|| Value::Object(key).to_string())
}

/// Where a walk down an object is: the node's shape, and whether it is the
/// object itself.
#[derive(Clone, Copy)]
struct Place<'s> {
    shape: Shape<'s>,
    root: bool,
}

impl<'s> Place<'s> {
    fn top(shape: Shape<'s>) -> Place<'s> {
        Place { shape, root: true }
    }

    /// The place of the member `key` of this node.
    fn member(self, key: &str) -> Place<'s> {
        let shape = match key.strip_prefix("f:") {
            Some(name) => self.shape.field(name, self.root),
            None => self.shape.items(),
        };
        Place { shape, root: false }
    }
}

/// The value at the member `key` of `value`, at `place`.
fn child<'v>(value: &'v Value, key: &str, place: Place) -> Option<&'v Value> {
    if let Some(name) = key.strip_prefix("f:") {
        return value.as_object()?.get(name);
    }
    let items = value.as_array()?;
    if let Some(keys) = key.strip_prefix("k:") {
        let want: Map<String, Value> = serde_json::from_str(keys).ok()?;
        let fields = match place.shape.list_type() {
            ListType::Map(fields) => fields,
            ListType::Atomic | ListType::Set => Vec::new(),
        };
        let field_of =
            |item: &'v Map<String, Value>, name: &str| match fields.iter().find(|k| k.name == name)
            {
                Some(key) => key.of(item),
                None => item.get(name),
            };
        return items.iter().find(|item| {
            item.as_object()
                .is_some_and(|item| want.iter().all(|(k, v)| field_of(item, k) == Some(v)))
        });
    }
    let want: Value = serde_json::from_str(key.strip_prefix("v:")?).ok()?;
    items.iter().find(|item| **item == want)
}

fn at<'v>(value: &'v Value, path: &[String], shape: Shape) -> Option<&'v Value> {
    let mut place = Place::top(shape);
    let mut value = value;
    for key in path {
        value = child(value, key, place)?;
        place = place.member(key);
    }
    Some(value)
}

/// The fields of `set` that `config` sets to something other than `live`
/// has: a leaf's value, an item's existence.
fn changed(set: &FieldSet, config: &Value, live: &Value, shape: Shape) -> FieldSet {
    let paths: Vec<Vec<String>> = set
        .leaves()
        .into_iter()
        .filter(|path| {
            let (new, old) = (at(config, path, shape), at(live, path, shape));
            let item = path
                .last()
                .is_some_and(|k| k.starts_with("k:") || k.starts_with("v:"));
            if item && at_members(set, path) {
                new.is_some() != old.is_some()
            } else {
                new != old
            }
        })
        .collect();
    FieldSet::of_paths(&paths)
}

/// Whether the member at `path` of `set` has members of its own.
fn at_members(set: &FieldSet, path: &[String]) -> bool {
    path.iter()
        .try_fold(set, |node, key| node.members.get(key))
        .is_some_and(|node| !node.members.is_empty())
}

/// Merges an applied configuration into `live`.
fn merge(live: &mut Value, config: &Value, shape: Shape, root: bool) {
    let (Some(live), Some(config)) = (live.as_object_mut(), config.as_object()) else {
        *live = config.clone();
        return;
    };
    if !root && shape.is_atomic_map() {
        *live = config.clone();
        return;
    }
    for (key, value) in config {
        let shape = shape.field(key, root);
        match (live.get_mut(key), value) {
            (Some(old @ Value::Object(_)), Value::Object(_)) => merge(old, value, shape, false),
            (Some(Value::Array(old)), Value::Array(new)) => merge_list(old, new, shape),
            _ => {
                live.insert(key.clone(), value.clone());
            }
        }
    }
}

fn merge_list(live: &mut Vec<Value>, config: &[Value], shape: Shape) {
    match shape.list_type() {
        ListType::Atomic => *live = config.to_vec(),
        ListType::Set => {
            for item in config {
                if !live.contains(item) {
                    live.push(item.clone());
                }
            }
        }
        ListType::Map(keys) => {
            for item in config {
                let key = item_key(item, &keys);
                match live
                    .iter_mut()
                    .find(|old| key.is_some() && item_key(old, &keys) == key)
                {
                    Some(old) => merge(old, item, shape.items(), false),
                    None => live.push(item.clone()),
                }
            }
        }
    }
}

/// Removes the fields of `set` from `value`, at `place`.
fn remove(value: &mut Value, set: &FieldSet, place: Place) {
    for (key, member) in &set.members {
        if let Some(name) = key.strip_prefix("f:") {
            let Some(object) = value.as_object_mut() else {
                continue;
            };
            if member.members.is_empty() {
                object.remove(name);
            } else if let Some(field) = object.get_mut(name) {
                remove(field, member, place.member(key));
            }
            continue;
        }
        let Some(position) = child(value, key, place).and_then(|found| {
            value
                .as_array()?
                .iter()
                .position(|item| std::ptr::eq(item, found))
        }) else {
            continue;
        };
        let items = value.as_array_mut().expect("an array, found above");
        if member.owns_itself() {
            items.remove(position);
        } else {
            remove(&mut items[position], member, place.member(key));
        }
    }
}

/// One `managedFields` entry.
#[derive(Debug, Clone)]
struct Entry {
    manager: String,
    operation: String,
    api_version: String,
    time: Option<String>,
    subresource: Option<String>,
    fields: FieldSet,
}

impl Entry {
    fn parse(value: &Value) -> Entry {
        let text = |k: &str| value.get(k).and_then(Value::as_str).map(str::to_string);
        Entry {
            manager: text("manager").unwrap_or_default(),
            operation: text("operation").unwrap_or_default(),
            api_version: text("apiVersion").unwrap_or_default(),
            time: text("time"),
            subresource: text("subresource"),
            fields: FieldSet::from_v1(value.get("fieldsV1").unwrap_or(&Value::Null)),
        }
    }

    fn to_value(&self) -> Value {
        let mut entry = json!({
            "manager": self.manager,
            "operation": self.operation,
            "apiVersion": self.api_version,
            "fieldsType": "FieldsV1",
            "fieldsV1": self.fields.to_v1(),
        });
        if let Some(time) = &self.time {
            entry["time"] = json!(time);
        }
        if let Some(subresource) = &self.subresource {
            entry["subresource"] = json!(subresource);
        }
        entry
    }

    fn is(&self, manager: &str, operation: &str, subresource: Option<&str>) -> bool {
        self.manager == manager
            && self.operation == operation
            && self.subresource.as_deref() == subresource
    }

    /// How a conflict names the manager, as the apiserver prints it.
    fn describe(&self) -> String {
        let mut name = format!("{:?}", self.manager);
        if let Some(subresource) = &self.subresource {
            name = format!("{name} with subresource {subresource:?}");
        }
        if self.operation != "Update" {
            return name;
        }
        match &self.time {
            Some(time) => format!("{name} using {} at {time}", self.api_version),
            None => format!("{name} using {}", self.api_version),
        }
    }
}

fn entries_of(object: &Value) -> Vec<Entry> {
    object
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(Entry::parse)
        .collect()
}

fn set_entries(object: &mut Value, entries: &[Entry]) {
    let list: Vec<Value> = entries
        .iter()
        .filter(|e| !e.fields.is_empty())
        .map(Entry::to_value)
        .collect();
    if let Some(meta) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        if list.is_empty() {
            meta.remove("managedFields");
        } else {
            meta.insert("managedFields".into(), Value::Array(list));
        }
    }
}

/// A field path as conflicts print it: `.spec.containers[name="c"].image`.
fn path_text(path: &[String]) -> String {
    let mut out = String::new();
    for key in path {
        if let Some(name) = key.strip_prefix("f:") {
            out.push('.');
            out.push_str(name);
        } else if let Some(keys) = key.strip_prefix("k:") {
            let keys: Map<String, Value> = serde_json::from_str(keys).unwrap_or_default();
            let parts: Vec<String> = keys.iter().map(|(k, v)| format!("{k}={v}")).collect();
            out.push_str(&format!("[{}]", parts.join(",")));
        } else if let Some(value) = key.strip_prefix("v:") {
            out.push_str(&format!("[={value}]"));
        }
    }
    out
}

/// The 409 of an apply that would change fields other managers own.
fn conflict_error(conflicts: &[(Entry, Vec<String>)]) -> ApiError {
    let count: usize = conflicts.iter().map(|(_, paths)| paths.len()).sum();
    let causes: Vec<Value> = conflicts
        .iter()
        .flat_map(|(entry, paths)| {
            paths.iter().map(|path| {
                json!({"type": "FieldManagerConflict",
                       "message": format!("conflict with {}", entry.describe()),
                       "field": path})
            })
        })
        .collect();
    let message = if count == 1 {
        let (entry, paths) = &conflicts[0];
        format!(
            "Apply failed with 1 conflict: conflict with {}: {}",
            entry.describe(),
            paths[0]
        )
    } else {
        let mut by_manager: Vec<&(Entry, Vec<String>)> = conflicts.iter().collect();
        by_manager.sort_by(|a, b| a.0.manager.cmp(&b.0.manager));
        let mut lines = Vec::new();
        for (entry, paths) in by_manager {
            lines.push(format!("conflicts with {}:", entry.describe()));
            lines.extend(paths.iter().map(|p| format!("- {p}")));
        }
        format!("Apply failed with {count} conflicts: {}", lines.join("\n"))
    };
    ApiError::apply_conflict(message, causes)
}

/// The subresource a managedFields entry names (`status`; scale writes
/// are recorded against the object).
fn status_only(subresource: Option<Subresource>) -> Option<&'static str> {
    (subresource == Some(Subresource::Status)).then_some("status")
}

/// What an apply asks.
pub(super) struct Apply<'a> {
    pub manager: &'a str,
    pub force: bool,
    pub config: &'a Value,
    pub subresource: Option<Subresource>,
}

/// The object `live` becomes when `apply.manager` applies its
/// configuration: merged, with the fields it no longer applies removed,
/// and the owners updated; or the 409 of its conflicts.
pub(super) fn apply(live: &Value, apply: &Apply, rt: &ResourceType) -> Result<Value, ApiError> {
    let subresource = status_only(apply.subresource);
    let applied = fields_of(apply.config, rt, apply.subresource);
    let changing = changed(&applied, apply.config, live, Shape::of(rt));
    let mut entries = entries_of(live);
    let mut conflicts = Vec::new();
    for entry in &mut entries {
        if entry.is(apply.manager, "Apply", subresource) {
            continue;
        }
        let contested = changing.intersect(&entry.fields);
        if contested.is_empty() {
            continue;
        }
        if apply.force {
            entry.fields = entry.fields.minus(&contested, false);
        } else {
            let paths: Vec<String> = contested.leaves().iter().map(|p| path_text(p)).collect();
            conflicts.push((entry.clone(), paths));
        }
    }
    if !conflicts.is_empty() {
        return Err(conflict_error(&conflicts));
    }
    let mine = entries
        .iter()
        .position(|e| e.is(apply.manager, "Apply", subresource));
    let before = mine.map(|i| entries[i].fields.clone()).unwrap_or_default();
    let others = entries
        .iter()
        .enumerate()
        .filter(|(i, _)| Some(*i) != mine)
        .fold(FieldSet::default(), |all, (_, e)| all.union(&e.fields));
    let mut object = live.clone();
    let mut config = apply.config.clone();
    if let Some(config) = config.as_object_mut() {
        // The server's metadata stays the server's.
        if let Some(meta) = config.get_mut("metadata").and_then(Value::as_object_mut) {
            meta.retain(|k, _| !SERVER_METADATA.contains(&k.as_str()) || k == "name");
        }
        config.remove("apiVersion");
        config.remove("kind");
    }
    merge(&mut object, &config, Shape::of(rt), true);
    let dropped = before.minus(&applied, false).minus(&others, true);
    remove(&mut object, &dropped, Place::top(Shape::of(rt)));
    let entry = Entry {
        manager: apply.manager.to_string(),
        operation: "Apply".into(),
        api_version: rt.api_version(),
        // Applying the same fields again keeps the entry's time, so a
        // no-op apply writes nothing.
        time: match mine {
            Some(i) if entries[i].fields == applied => entries[i].time.clone(),
            _ => Some(now_rfc3339()),
        },
        subresource: subresource.map(str::to_string),
        fields: applied,
    };
    match mine {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    set_entries(&mut object, &entries);
    Ok(object)
}

/// Records an update of `old` to `new` by `manager` in `new`'s
/// managedFields: the fields it set or changed become its own (an `Update`
/// entry of its apiVersion) and no longer anyone else's, and the fields it
/// removed no one's. A write that changes nothing records nothing.
pub(super) fn record_update(
    old: &Value,
    new: &mut Value,
    manager: &str,
    rt: &ResourceType,
    subresource: Option<Subresource>,
) {
    let before = fields_of(old, rt, subresource);
    let after = fields_of(new, rt, subresource);
    let set = changed(&after, new, old, Shape::of(rt));
    let removed = before.minus(&after, false);
    if set.is_empty() && removed.is_empty() {
        return;
    }
    let taken = set.union(&removed);
    let subresource = status_only(subresource);
    let api_version = rt.api_version();
    let mut entries = entries_of(new);
    let mine = entries
        .iter()
        .position(|e| e.is(manager, "Update", subresource) && e.api_version == api_version);
    for (i, entry) in entries.iter_mut().enumerate() {
        if Some(i) != mine {
            entry.fields = entry.fields.minus(&taken, false);
        }
    }
    let before_mine = mine.map(|i| entries[i].fields.clone()).unwrap_or_default();
    let entry = Entry {
        manager: manager.to_string(),
        operation: "Update".into(),
        api_version,
        time: Some(now_rfc3339()),
        subresource: subresource.map(str::to_string),
        fields: before_mine.union(&set).minus(&removed, false),
    };
    match mine {
        Some(i) => entries[i] = entry,
        None => entries.push(entry),
    }
    set_entries(new, &entries);
}

/// The managedFields entry of a write by `manager` that creates `object`:
/// an apply's (`operation` `Apply`) or any other create's (`Update`),
/// owning every field the write set.
pub(super) fn created_by(
    manager: &str,
    operation: &str,
    object: &Value,
    rt: &ResourceType,
    subresource: Option<Subresource>,
) -> Value {
    Entry {
        manager: manager.to_string(),
        operation: operation.to_string(),
        api_version: rt.api_version(),
        time: Some(now_rfc3339()),
        subresource: status_only(subresource).map(str::to_string),
        fields: fields_of(object, rt, subresource),
    }
    .to_value()
}

#[cfg(test)]
mod tests;
