//! The fake cluster's object store: objects as JSON keyed by kind,
//! namespace and name, and the API server's write semantics over them
//! (server-owned metadata, resourceVersion preconditions, status
//! subresource, merge / JSON / apply patches, finalizers, owner garbage
//! collection). It knows nothing of manifests or permissions.

use std::collections::BTreeMap;

use recon_api_semantics::mapping::cmp_keys;
use recon_api_semantics::object::{
    Generation, equal_but_resource_version, keep_server_metadata, unconditional_update_allowed,
};
use recon_api_semantics::writes::delete_precondition_failure;
use serde_json::{Map, Value, json};

use crate::backend::{DeleteOptions, PatchBody, Propagation};
use crate::types::{Error, Gvk, Meta, ObjectKey, OwnerRef, Result};

/// Every timestamp the fake writes (creation, deletion): tests stay deterministic.
pub const NOW: &str = "2025-01-01T00:00:00Z";

/// Where an object is stored.
pub type Key = (Gvk, Option<String>, String);

fn store_key(kind: &Gvk, namespace: Option<&str>, name: &str) -> Key {
    (
        kind.clone(),
        namespace.map(str::to_string),
        name.to_string(),
    )
}

#[derive(Default)]
pub struct Store {
    objects: BTreeMap<Key, Value>,
    /// The last resourceVersion handed out; one counter for every kind, as etcd's.
    resource_version: u64,
    /// The last uid suffix handed out.
    uids: u64,
}

// ------------------------------------------------------------------ JSON helpers

fn metadata(obj: &Value) -> Option<&Map<String, Value>> {
    obj.get("metadata").and_then(Value::as_object)
}

/// `obj.metadata`, created empty if absent; `obj` must be an object.
fn metadata_mut(obj: &mut Value) -> &mut Map<String, Value> {
    let map = obj.as_object_mut().expect("objects are JSON objects");
    let meta = map
        .entry("metadata")
        .or_insert_with(|| Value::Object(Map::new()));
    if !meta.is_object() {
        *meta = Value::Object(Map::new());
    }
    meta.as_object_mut()
        .expect("metadata was just made an object")
}

pub fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    metadata(obj)?.get(field)?.as_str()
}

fn has_finalizers(obj: &Value) -> bool {
    metadata(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

fn finalizers(obj: &Value) -> Vec<&str> {
    metadata(obj)
        .and_then(|m| m.get("finalizers"))
        .and_then(Value::as_array)
        .map(|f| f.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

fn owner_uids(obj: &Value) -> Vec<&str> {
    metadata(obj)
        .and_then(|m| m.get("ownerReferences"))
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str))
                .collect()
        })
        .unwrap_or_default()
}

fn string_pairs(map: Option<&Value>) -> Vec<(String, String)> {
    map.and_then(Value::as_object)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The metadata of a stored object, as the host parses it for the cache.
pub fn meta_of(obj: &Value) -> Meta {
    let empty = Map::new();
    let m = metadata(obj).unwrap_or(&empty);
    let text = |field: &str| m.get(field).and_then(Value::as_str).map(str::to_string);
    let owner_references = m
        .get("ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .map(|r| {
                    let text = |f: &str| r.get(f).and_then(Value::as_str).unwrap_or("").to_string();
                    let flag = |f: &str| r.get(f).and_then(Value::as_bool).unwrap_or(false);
                    OwnerRef {
                        api_version: text("apiVersion"),
                        kind: text("kind"),
                        name: text("name"),
                        uid: text("uid"),
                        controller: flag("controller"),
                        block_owner_deletion: flag("blockOwnerDeletion"),
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    Meta {
        key: ObjectKey {
            namespace: text("namespace"),
            name: text("name").unwrap_or_default(),
        },
        uid: text("uid").unwrap_or_default(),
        resource_version: text("resourceVersion").unwrap_or_default(),
        generation: m.get("generation").and_then(Value::as_i64).unwrap_or(0),
        labels: string_pairs(m.get("labels")),
        annotations: string_pairs(m.get("annotations")),
        owner_references,
        finalizers: finalizers(obj).into_iter().map(str::to_string).collect(),
        deletion_timestamp: text("deletionTimestamp"),
    }
}

/// Removes the member at the dot-separated `path`, in every element of the
/// lists met on the way.
pub fn remove_at(value: &mut Value, path: &[&str]) {
    match (value, path) {
        (Value::Array(items), [_, ..]) => {
            for item in items {
                remove_at(item, path);
            }
        }
        (Value::Object(map), [last]) => {
            map.remove(*last);
        }
        (Value::Object(map), [first, rest @ ..]) => {
            if let Some(child) = map.get_mut(*first) {
                remove_at(child, rest);
            }
        }
        _ => {}
    }
}

fn conflict(kind: &Gvk, name: &str) -> Error {
    Error::Conflict(format!(
        "Operation cannot be fulfilled on {} {name:?}: the object has been modified; \
         please apply your changes to the latest version and try again",
        kind.kind
    ))
}

/// Checks `body` is an object whose `apiVersion` and `kind` (filled in when
/// absent) are `kind`'s.
fn check_type(kind: &Gvk, body: &mut Value) -> Result<()> {
    let Some(map) = body.as_object_mut() else {
        return Err(Error::Invalid("the body must be a JSON object".into()));
    };
    for (field, expected) in [
        ("apiVersion", kind.api_version()),
        ("kind", kind.kind.clone()),
    ] {
        match map.get(field).and_then(Value::as_str) {
            None | Some("") => {
                map.insert(field.to_string(), Value::String(expected));
            }
            Some(actual) if actual == expected => {}
            Some(actual) => {
                return Err(Error::Invalid(format!(
                    "the {field} in the data ({actual}) does not match the expected {field} ({expected})"
                )));
            }
        }
    }
    Ok(())
}

/// The namespace a write goes to: the request's, which the body may repeat
/// but not contradict, else the body's.
fn namespace_of(namespace: Option<&str>, body: &Value) -> Result<Option<String>> {
    let in_body = meta_str(body, "namespace").filter(|ns| !ns.is_empty());
    match (namespace, in_body) {
        (Some(ns), Some(body_ns)) if ns != body_ns => Err(Error::Invalid(
            "the namespace of the provided object does not match the namespace sent on the request"
                .into(),
        )),
        (Some(ns), _) => Ok(Some(ns.to_string())),
        (None, body_ns) => Ok(body_ns.map(str::to_string)),
    }
}

fn parse(json: &str) -> Result<Value> {
    serde_json::from_str(json).map_err(|e| Error::Invalid(format!("invalid JSON: {e}")))
}

impl Store {
    pub fn get(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Option<&Value> {
        self.objects.get(&store_key(kind, namespace, name))
    }

    /// Every object, by kind, namespace and name.
    pub fn objects(&self) -> &BTreeMap<Key, Value> {
        &self.objects
    }

    /// The objects of `kind`, ordered by key (`namespace/name`), as the
    /// host hands a guest's reads over.
    pub fn of_kind<'a>(&'a self, kind: &'a Gvk) -> impl Iterator<Item = &'a Value> {
        let mut objects: Vec<_> = self
            .objects
            .range((kind.clone(), None, String::new())..)
            .take_while(move |((k, _, _), _)| k == kind)
            .collect();
        objects.sort_by(|((_, a_ns, a), _), ((_, b_ns, b), _)| {
            cmp_keys((a_ns.as_deref(), a), (b_ns.as_deref(), b))
        });
        objects.into_iter().map(|(_, v)| v)
    }

    /// Stores `obj` with a new resourceVersion; returns it as stored.
    fn commit(&mut self, key: Key, mut obj: Value) -> Value {
        self.resource_version += 1;
        metadata_mut(&mut obj).insert(
            "resourceVersion".into(),
            json!(self.resource_version.to_string()),
        );
        self.objects.insert(key, obj.clone());
        obj
    }

    fn new_uid(&mut self) -> String {
        self.uids += 1;
        format!("00000000-0000-0000-0000-{:012}", self.uids)
    }

    /// Creates or overwrites an object as the cluster's other actors would
    /// (status included, no preconditions): server metadata is kept or assigned.
    pub fn insert(&mut self, kind: &Gvk, mut body: Value) -> Result<Value> {
        check_type(kind, &mut body)?;
        let namespace = namespace_of(None, &body)?;
        let name = meta_str(&body, "name")
            .filter(|n| !n.is_empty())
            .ok_or_else(|| Error::Invalid("metadata.name is required".into()))?
            .to_string();
        let key = (kind.clone(), namespace, name);
        let rule = Generation::of(&kind.group, &kind.kind);
        let (uid, created, generation) = match self.objects.get(&key) {
            Some(old) => (
                meta_str(old, "uid").unwrap_or_default().to_string(),
                meta_str(old, "creationTimestamp")
                    .unwrap_or(NOW)
                    .to_string(),
                rule.at_create().map(|first| {
                    metadata(old)
                        .and_then(|m| m.get("generation"))
                        .and_then(Value::as_i64)
                        .unwrap_or(first)
                        + i64::from(rule.bumped(old, &body))
                }),
            ),
            None => (self.new_uid(), NOW.to_string(), rule.at_create()),
        };
        let meta = metadata_mut(&mut body);
        meta.insert("uid".into(), json!(uid));
        meta.insert("creationTimestamp".into(), json!(created));
        match generation {
            Some(generation) => meta.insert("generation".into(), json!(generation)),
            None => meta.remove("generation"),
        };
        Ok(self.commit(key, body))
    }

    /// POST: a new object; status is dropped as for kinds with a status subresource.
    pub fn create(&mut self, kind: &Gvk, namespace: Option<&str>, json: &str) -> Result<Value> {
        self.create_value(kind, namespace, parse(json)?)
    }

    fn create_value(
        &mut self,
        kind: &Gvk,
        namespace: Option<&str>,
        mut body: Value,
    ) -> Result<Value> {
        check_type(kind, &mut body)?;
        let namespace = namespace_of(namespace, &body)?;
        let name = match meta_str(&body, "name").filter(|n| !n.is_empty()) {
            Some(name) => name.to_string(),
            None => {
                let prefix = meta_str(&body, "generateName")
                    .filter(|p| !p.is_empty())
                    .ok_or_else(|| {
                        Error::Invalid(
                            "metadata.name: Required value: name or generateName is required"
                                .into(),
                        )
                    })?
                    .to_string();
                format!("{prefix}{:05}", self.uids + 1)
            }
        };
        let key = (kind.clone(), namespace.clone(), name.clone());
        if self.objects.contains_key(&key) {
            return Err(Error::AlreadyExists(format!(
                "{} {name:?} already exists",
                kind.kind
            )));
        }
        let uid = self.new_uid();
        if let Some(map) = body.as_object_mut() {
            map.remove("status");
        }
        let meta = metadata_mut(&mut body);
        for field in [
            "resourceVersion",
            "deletionTimestamp",
            "deletionGracePeriodSeconds",
            "managedFields",
        ] {
            meta.remove(field);
        }
        meta.insert("name".into(), json!(name));
        if let Some(ns) = namespace {
            meta.insert("namespace".into(), json!(ns));
        }
        meta.insert("uid".into(), json!(uid));
        meta.insert("creationTimestamp".into(), json!(NOW));
        match Generation::of(&kind.group, &kind.kind).at_create() {
            Some(generation) => meta.insert("generation".into(), json!(generation)),
            None => meta.remove("generation"),
        };
        Ok(self.commit(key, body))
    }

    /// PUT of the object, or of its status subresource (`status_only`).
    pub fn update(
        &mut self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
        json: &str,
        status_only: bool,
    ) -> Result<Value> {
        let body = parse(json)?;
        let unversioned = meta_str(&body, "resourceVersion").is_none_or(str::is_empty);
        let exists = self.objects.contains_key(&store_key(kind, namespace, name));
        if exists && unversioned && !unconditional_update_allowed(&kind.group, &kind.kind) {
            return Err(Error::Invalid(format!(
                "{} {name:?} is invalid: metadata.resourceVersion: Invalid value: 0x0: \
                 must be specified for an update",
                kind.kind
            )));
        }
        self.update_value(kind, namespace, name, body, status_only)
    }

    fn update_value(
        &mut self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        status_only: bool,
    ) -> Result<Value> {
        let key = store_key(kind, namespace, name);
        let existing = self.objects.get(&key).ok_or(Error::NotFound)?.clone();
        check_type(kind, &mut body)?;
        namespace_of(namespace, &body)?;
        match meta_str(&body, "name") {
            Some(body_name) if !body_name.is_empty() && body_name != name => {
                return Err(Error::Invalid(format!(
                    "the name of the object ({body_name}) does not match the name on the URL ({name})"
                )));
            }
            _ => {}
        }
        let current = meta_str(&existing, "resourceVersion").unwrap_or("");
        match meta_str(&body, "resourceVersion") {
            Some(rv) if !rv.is_empty() && rv != current => return Err(conflict(kind, name)),
            _ => {}
        }
        let mut new = if status_only {
            let mut new = existing.clone();
            let map = new
                .as_object_mut()
                .expect("stored objects are JSON objects");
            match body.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
            new
        } else {
            let map = body.as_object_mut().expect("checked to be an object");
            match existing.get("status") {
                Some(status) => map.insert("status".into(), status.clone()),
                None => map.remove("status"),
            };
            body
        };
        let old_meta = metadata(&existing).cloned().unwrap_or_default();
        let meta = metadata_mut(&mut new);
        meta.insert("name".into(), json!(name));
        match namespace {
            Some(ns) => meta.insert("namespace".into(), json!(ns)),
            None => meta.remove("namespace"),
        };
        keep_server_metadata(&old_meta, meta);
        let deleting = old_meta.contains_key("deletionTimestamp");
        let old_finalizers = finalizers(&existing);
        if deleting
            && let Some(added) = finalizers(&new)
                .into_iter()
                .find(|f| !old_finalizers.contains(f))
        {
            return Err(Error::Invalid(format!(
                "metadata.finalizers: Forbidden: no new finalizers can be added if the object \
                 is being deleted, found new finalizers [{added}]"
            )));
        }
        if Generation::of(&kind.group, &kind.kind).bumped(&existing, &new) {
            let generation = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            metadata_mut(&mut new).insert("generation".into(), json!(generation + 1));
        }
        if equal_but_resource_version(&new, &existing) {
            return Ok(existing);
        }
        if deleting && !has_finalizers(&new) {
            let removed = self.commit(key.clone(), new);
            self.remove(&key, Propagation::Background);
            return Ok(removed);
        }
        Ok(self.commit(key, new))
    }

    /// PATCH of the object, or of its status subresource (`status_only`).
    /// Apply is approximated as a JSON merge patch of the intent, creating
    /// the object when absent.
    pub fn patch(
        &mut self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
        body: &PatchBody,
        status_only: bool,
    ) -> Result<Value> {
        let key = store_key(kind, namespace, name);
        let existing = self.objects.get(&key);
        let mut target = match body {
            PatchBody::Apply(apply) => {
                let mut intent = parse(&apply.json)?;
                if !intent.is_object() {
                    return Err(Error::Invalid(
                        "the applied configuration must be a JSON object".into(),
                    ));
                }
                let Some(existing) = existing else {
                    if status_only {
                        return Err(Error::NotFound);
                    }
                    metadata_mut(&mut intent).insert("name".into(), json!(name));
                    return self.create_value(kind, namespace, intent);
                };
                let mut target = existing.clone();
                json_patch::merge(&mut target, &intent);
                target
            }
            PatchBody::Merge(json) => {
                let patch = parse(json)?;
                if !patch.is_object() {
                    return Err(Error::Invalid("a merge patch must be a JSON object".into()));
                }
                let mut target = existing.ok_or(Error::NotFound)?.clone();
                json_patch::merge(&mut target, &patch);
                target
            }
            PatchBody::Json(json) => {
                let operations: json_patch::Patch = serde_json::from_str(json)
                    .map_err(|e| Error::Invalid(format!("invalid JSON patch: {e}")))?;
                let mut target = existing.ok_or(Error::NotFound)?.clone();
                json_patch::patch(&mut target, &operations).map_err(|e| {
                    Error::Invalid(format!(
                        "the server rejected our request due to an error in our request: {e}"
                    ))
                })?;
                target
            }
        };
        // A patch naming the current resourceVersion (or none) is
        // unconditional; one naming another version conflicts.
        let current = self
            .objects
            .get(&key)
            .and_then(|o| meta_str(o, "resourceVersion"))
            .map(str::to_string);
        if meta_str(&target, "resourceVersion").map(str::to_string) == current {
            metadata_mut(&mut target).remove("resourceVersion");
        }
        self.update_value(kind, namespace, name, target, status_only)
    }

    /// DELETE: with finalizers the object only gets a deletionTimestamp.
    pub fn delete(
        &mut self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<()> {
        let key = store_key(kind, namespace, name);
        let existing = self.objects.get(&key).ok_or(Error::NotFound)?;
        if let Some(why) = delete_precondition_failure(
            existing,
            options.precondition_uid.as_deref(),
            options.precondition_resource_version.as_deref(),
        ) {
            return Err(Error::Conflict(why));
        }
        self.delete_object(&key, options.propagation.unwrap_or(Propagation::Background));
        Ok(())
    }

    fn delete_object(&mut self, key: &Key, propagation: Propagation) {
        let Some(obj) = self.objects.get(key) else {
            return;
        };
        if !has_finalizers(obj) {
            self.remove(key, propagation);
            return;
        }
        if meta_str(obj, "deletionTimestamp").is_none() {
            let mut obj = obj.clone();
            let meta = metadata_mut(&mut obj);
            meta.insert("deletionTimestamp".into(), json!(NOW));
            meta.insert("deletionGracePeriodSeconds".into(), json!(0));
            self.commit(key.clone(), obj);
        }
    }

    /// Removes an object, then collects its dependents: orphaned (their
    /// owner references to it dropped), or deleted once none of their
    /// owners exist any more.
    fn remove(&mut self, key: &Key, propagation: Propagation) {
        let Some(obj) = self.objects.remove(key) else {
            return;
        };
        let Some(uid) = meta_str(&obj, "uid").filter(|u| !u.is_empty()) else {
            return;
        };
        let dependents: Vec<Key> = self
            .objects
            .iter()
            .filter(|(_, o)| owner_uids(o).contains(&uid))
            .map(|(k, _)| k.clone())
            .collect();
        for dependent in dependents {
            if propagation == Propagation::Orphan {
                let mut obj = self.objects[&dependent].clone();
                let meta = metadata_mut(&mut obj);
                if let Some(Value::Array(refs)) = meta.get_mut("ownerReferences") {
                    refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(uid));
                    if refs.is_empty() {
                        meta.remove("ownerReferences");
                    }
                }
                self.commit(dependent, obj);
            } else {
                let owners_left = owner_uids(&self.objects[&dependent]).iter().any(|owner| {
                    self.objects
                        .values()
                        .any(|o| meta_str(o, "uid") == Some(owner))
                });
                if !owners_left {
                    self.delete_object(&dependent, Propagation::Background);
                }
            }
        }
    }
}
