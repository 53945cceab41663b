//! [`Context`]: the typed API a reconciler uses, over any [`Backend`]. Cache
//! reads, writes through the host's client, the workqueue, logs and events,
//! with objects as k8s-openapi types (or hand-written custom resources) that
//! cross the boundary as JSON. Untyped `*_raw` reads serve kinds known only
//! by their [`Gvk`].

use std::fmt::Display;
use std::time::Duration;

use serde::Deserialize;
use serde_json::Value;

use crate::backend::{
    ApplyPatch, Backend, DeleteOptions, Event, EventType, Level, PatchBody, WriteOp,
};
use crate::types::{Error, Gvk, Meta, Object, ObjectKey, RawObject, Result, gvk_of};

/// The guest's view of the host during one reconcile.
#[derive(Clone, Copy)]
pub struct Context<'a> {
    backend: &'a dyn Backend,
}

/// `obj` as JSON with `apiVersion` and `kind` filled in from `K` where the
/// object leaves them out (a hand-written custom resource need not carry
/// them; k8s-openapi's types write their own). The object is written
/// straight to text: building a `serde_json::Value` first would instantiate
/// every field's serializer a second time in the component.
fn to_json<K: Object>(obj: &K) -> Result<String> {
    let json = serde_json::to_string(obj)?;
    let Some(fields) = json.strip_prefix('{') else {
        return Err(Error::Invalid(format!(
            "a {} does not serialize as a JSON object",
            K::KIND
        )));
    };
    let present: TypeMeta = serde_json::from_str(&json)?;
    let mut head = String::from("{");
    for (name, value, present) in [
        ("apiVersion", K::API_VERSION, present.api_version),
        ("kind", K::KIND, present.kind),
    ] {
        if !present {
            head.push_str(&format!("\"{name}\":{},", serde_json::to_string(value)?));
        }
    }
    if head.len() == 1 {
        return Ok(json);
    }
    if fields.trim_start() == "}" {
        head.pop();
    }
    Ok(head + fields)
}

/// Which of `apiVersion` and `kind` an object's JSON has at its top level,
/// whatever their values (`null` included).
#[derive(serde::Deserialize)]
struct TypeMeta {
    #[serde(rename = "apiVersion", default, deserialize_with = "present")]
    api_version: bool,
    #[serde(default, deserialize_with = "present")]
    kind: bool,
}

fn present<'de, D: serde::Deserializer<'de>>(value: D) -> std::result::Result<bool, D::Error> {
    serde::de::IgnoredAny::deserialize(value).map(|_| true)
}

/// The name in `obj`'s metadata, which writes to an existing object need.
fn name_of<K: Object>(obj: &K) -> Result<&str> {
    obj.metadata()
        .name
        .as_deref()
        .ok_or_else(|| Error::Invalid(format!("the {} has no metadata.name", K::KIND)))
}

fn parse_all<K: Object>(objects: Vec<RawObject>) -> Result<Vec<K>> {
    objects.iter().map(RawObject::parse).collect()
}

impl<'a> Context<'a> {
    pub fn new(backend: &'a dyn Backend) -> Self {
        Self { backend }
    }

    /// The untyped backend, for writes to kinds known only by their [`Gvk`].
    pub fn backend(&self) -> &'a dyn Backend {
        self.backend
    }

    // ---------------------------------------------------------------- cache

    /// The cached `K` `namespace/name`; `None` when it is not in the cache.
    pub fn get<K: Object>(&self, namespace: Option<&str>, name: &str) -> Result<Option<K>> {
        self.get_raw(&gvk_of::<K>(), namespace, name)?
            .map(|raw| raw.parse())
            .transpose()
    }

    /// As [`Context::get`], metadata only: no JSON crosses the boundary and
    /// nothing is parsed.
    pub fn get_meta<K: Object>(&self, namespace: Option<&str>, name: &str) -> Result<Option<Meta>> {
        self.backend.get_meta(&gvk_of::<K>(), namespace, name)
    }

    /// Cached objects of `K`, in one namespace or all, optionally filtered by
    /// a label selector (`app=web,tier!=db`).
    pub fn list<K: Object>(
        &self,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<K>> {
        parse_all(self.list_raw(&gvk_of::<K>(), namespace, label_selector)?)
    }

    /// As [`Context::list`], metadata only: no JSON crosses the boundary.
    pub fn list_meta<K: Object>(
        &self,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Meta>> {
        self.list_meta_raw(&gvk_of::<K>(), namespace, label_selector)
    }

    /// Cached objects of `K` whose index `index` (declared in the manifest) holds `value`.
    pub fn by_index<K: Object>(&self, index: &str, value: &str) -> Result<Vec<K>> {
        parse_all(self.by_index_raw(&gvk_of::<K>(), index, value)?)
    }

    pub fn get_raw(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Option<RawObject>> {
        self.backend.get(kind, namespace, name)
    }

    pub fn list_raw(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<RawObject>> {
        self.backend.list(kind, namespace, label_selector)
    }

    pub fn list_meta_raw(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Meta>> {
        self.backend.list_meta(kind, namespace, label_selector)
    }

    pub fn by_index_raw(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<RawObject>> {
        self.backend.by_index(kind, index, value)
    }

    // --------------------------------------------------------------- client

    /// Creates `obj` in the namespace its metadata names; returns it as stored.
    pub fn create<K: Object>(&self, obj: &K) -> Result<K> {
        let json = to_json(obj)?;
        self.write_object(
            obj.metadata().namespace.as_deref(),
            WriteOp::Create { json: &json },
        )
    }

    /// Replaces `obj` (PUT). With `metadata.resourceVersion` set, a stale
    /// version is [`Error::Conflict`]; without, the replace is unconditional,
    /// except for custom resources and Leases, where the server refuses it
    /// ([`Error::Invalid`]).
    pub fn replace<K: Object>(&self, obj: &K) -> Result<K> {
        self.replace_object(obj, false)
    }

    /// Server-side apply of the intent `obj`, forcing ownership of
    /// conflicting fields as controllers do. Creates the object if absent.
    /// The field manager is the manifest's name.
    pub fn apply<K: Object>(&self, obj: &K) -> Result<K> {
        self.apply_with_force(obj, true)
    }

    /// Server-side apply; without `force`, fields another manager owns are a conflict.
    pub fn apply_with_force<K: Object>(&self, obj: &K, force: bool) -> Result<K> {
        let body = PatchBody::Apply(ApplyPatch {
            json: to_json(obj)?,
            force,
        });
        self.patch(obj.metadata().namespace.as_deref(), name_of(obj)?, &body)
    }

    /// Applies an RFC 7386 JSON merge patch to `namespace/name`.
    pub fn patch_merge<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<K> {
        self.patch(namespace, name, &PatchBody::Merge(patch.to_string()))
    }

    /// [`Context::patch_merge`] answering with the stored object's metadata
    /// only: the reply is not parsed into a `K`.
    pub fn patch_merge_meta<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<Meta> {
        let body = PatchBody::Merge(patch.to_string());
        let write = WriteOp::Patch {
            name,
            body: &body,
            status: false,
        };
        match self.backend.write(&gvk_of::<K>(), namespace, write)? {
            Some(stored) => Ok(stored.meta),
            None => Err(Error::Other(format!(
                "the host answered a patch of {} with no object",
                gvk_of::<K>()
            ))),
        }
    }

    /// Applies an RFC 6902 JSON patch (an array of operations) to `namespace/name`.
    pub fn patch_json<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        operations: &Value,
    ) -> Result<K> {
        self.patch(namespace, name, &PatchBody::Json(operations.to_string()))
    }

    fn patch<K: Object>(&self, namespace: Option<&str>, name: &str, body: &PatchBody) -> Result<K> {
        let write = WriteOp::Patch {
            name,
            body,
            status: false,
        };
        self.write_object(namespace, write)
    }

    /// Replaces the status subresource with `obj`'s status; nothing else
    /// changes. A stale `metadata.resourceVersion` is [`Error::Conflict`].
    pub fn update_status<K: Object>(&self, obj: &K) -> Result<K> {
        self.replace_object(obj, true)
    }

    /// Merge-patches the status subresource of `namespace/name`:
    /// `patch` is `{"status": {...}}`.
    pub fn patch_status<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<K> {
        let write = WriteOp::Patch {
            name,
            body: &PatchBody::Merge(patch.to_string()),
            status: true,
        };
        self.write_object(namespace, write)
    }

    /// Requests deletion of `namespace/name`; with finalizers the object
    /// stays (with a deletionTimestamp) until they are removed.
    pub fn delete<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<()> {
        let write = WriteOp::Delete { name, options };
        self.backend
            .write(&gvk_of::<K>(), namespace, write)
            .map(|_| ())
    }

    /// Deletes the object, if it still exists: true when it did, false when
    /// it was already gone (`not-found`, which a retry of a delete often
    /// meets).
    pub fn delete_if_exists<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<bool> {
        match self.delete::<K>(namespace, name, options) {
            Ok(()) => Ok(true),
            Err(Error::NotFound) => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// [`Context::patch_merge`], with `None` when the object is gone.
    pub fn patch_merge_if_exists<K: Object>(
        &self,
        namespace: Option<&str>,
        name: &str,
        patch: &Value,
    ) -> Result<Option<K>> {
        match self.patch_merge::<K>(namespace, name, patch) {
            Ok(patched) => Ok(Some(patched)),
            Err(Error::NotFound) => Ok(None),
            Err(e) => Err(e),
        }
    }

    /// Sets the labels of `wanted` that `obj` lacks or holds with another
    /// value, in one merge patch, answering with the stored metadata; `None`
    /// (and no write) when all are there already.
    pub fn ensure_labels<K: Object>(
        &self,
        obj: &K,
        wanted: &[(&str, &str)],
    ) -> Result<Option<Meta>> {
        let patch = crate::meta::missing_entries("labels", obj.metadata().labels.as_ref(), wanted);
        self.patch_missing(obj, patch)
    }

    /// [`Context::ensure_labels`] for annotations.
    pub fn ensure_annotations<K: Object>(
        &self,
        obj: &K,
        wanted: &[(&str, &str)],
    ) -> Result<Option<Meta>> {
        let current = obj.metadata().annotations.as_ref();
        let patch = crate::meta::missing_entries("annotations", current, wanted);
        self.patch_missing(obj, patch)
    }

    fn patch_missing<K: Object>(&self, obj: &K, patch: Option<Value>) -> Result<Option<Meta>> {
        let Some(patch) = patch else {
            return Ok(None);
        };
        let namespace = obj.metadata().namespace.as_deref();
        self.patch_merge_meta::<K>(namespace, name_of(obj)?, &patch)
            .map(Some)
    }

    /// PUT of `obj`, or of its status subresource when `status`.
    fn replace_object<K: Object>(&self, obj: &K, status: bool) -> Result<K> {
        let json = to_json(obj)?;
        let write = WriteOp::Replace {
            name: name_of(obj)?,
            json: &json,
            status,
        };
        self.write_object(obj.metadata().namespace.as_deref(), write)
    }

    /// A write of a `K` that answers with the object as stored.
    fn write_object<K: Object>(&self, namespace: Option<&str>, write: WriteOp<'_>) -> Result<K> {
        match self.backend.write(&gvk_of::<K>(), namespace, write)? {
            Some(stored) => stored.parse(),
            None => Err(Error::Other(format!(
                "the host answered a {:?} of {} with no object",
                write.verb(),
                gvk_of::<K>()
            ))),
        }
    }

    /// Records an Event about `obj`; the manifest must allow it
    /// ([`Manifest::records_events`](crate::Manifest::records_events)), else
    /// [`Error::Forbidden`].
    pub fn event<K: Object>(
        &self,
        obj: &K,
        event_type: EventType,
        reason: &str,
        action: &str,
        note: &str,
    ) -> Result<()> {
        let meta = obj.metadata();
        self.backend.record_event(&Event {
            regarding_kind: gvk_of::<K>(),
            regarding: ObjectKey::of(obj),
            regarding_uid: meta.uid.clone().unwrap_or_default(),
            event_type,
            reason: reason.to_string(),
            action: action.to_string(),
            note: note.to_string(),
        })
    }

    // ---------------------------------------------------------------- queue

    /// Queues `key` now (deduplicated with pending entries). A key that is
    /// not a Kubernetes name (and namespace) is [`Error::Invalid`]; while
    /// the guest's queue holds as many keys as the host allows, the add is
    /// [`Error::Unavailable`].
    pub fn enqueue(&self, key: &ObjectKey) -> Result<()> {
        self.backend.enqueue(key)
    }

    /// Queues `key` after `delay`; an earlier pending time wins. Fails as
    /// [`Context::enqueue`] does.
    pub fn enqueue_after(&self, key: &ObjectKey, delay: Duration) -> Result<()> {
        self.backend.enqueue_after(key, delay)
    }

    /// Queues `key` after the host's rate-limiter delay for it. Fails as
    /// [`Context::enqueue`] does.
    pub fn enqueue_rate_limited(&self, key: &ObjectKey) -> Result<()> {
        self.backend.enqueue_rate_limited(key)
    }

    /// Ends `key`'s backoff history.
    pub fn forget(&self, key: &ObjectKey) {
        self.backend.forget(key);
    }

    /// Rate-limited requeues of `key` since it was last forgotten.
    pub fn num_requeues(&self, key: &ObjectKey) -> u32 {
        self.backend.num_requeues(key)
    }

    // ------------------------------------------------------------------ log

    /// Logs `message` with key/value `fields`:
    /// `ctx.log(Level::Info, "scaled", &[("replicas", &3)])`.
    pub fn log(&self, level: Level, message: &str, fields: &[(&str, &dyn Display)]) {
        let fields: Vec<(String, String)> = fields
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        self.backend.log(level, message, &fields);
    }

    pub fn trace(&self, message: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Trace, message, fields);
    }

    pub fn debug(&self, message: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Debug, message, fields);
    }

    pub fn info(&self, message: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Info, message, fields);
    }

    pub fn warn(&self, message: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Warn, message, fields);
    }

    pub fn error(&self, message: &str, fields: &[(&str, &dyn Display)]) {
        self.log(Level::Error, message, fields);
    }
}

#[cfg(test)]
mod tests {
    use k8s_openapi::api::core::v1::ConfigMap;
    use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
    use k8s_openapi::{Metadata, NamespaceResourceScope, Resource};
    use serde::{Deserialize, Serialize};
    use serde_json::{Value, json};

    use super::to_json;

    /// A custom resource that writes `apiVersion` and `kind` only when set
    /// (`Some(None)`: as `null`), and its metadata only when it has some.
    #[derive(Default, Serialize, Deserialize)]
    struct Widget {
        #[serde(rename = "apiVersion", skip_serializing_if = "Option::is_none")]
        api_version: Option<Option<String>>,
        #[serde(skip_serializing_if = "Option::is_none")]
        kind: Option<String>,
        #[serde(default, skip_serializing_if = "is_empty")]
        metadata: ObjectMeta,
    }

    fn is_empty(meta: &ObjectMeta) -> bool {
        meta == &ObjectMeta::default()
    }

    impl Resource for Widget {
        const API_VERSION: &'static str = "example.com/v1";
        const GROUP: &'static str = "example.com";
        const KIND: &'static str = "Widget";
        const VERSION: &'static str = "v1";
        const URL_PATH_SEGMENT: &'static str = "widgets";
        type Scope = NamespaceResourceScope;
    }

    impl Metadata for Widget {
        type Ty = ObjectMeta;
        fn metadata(&self) -> &ObjectMeta {
            &self.metadata
        }
        fn metadata_mut(&mut self) -> &mut ObjectMeta {
            &mut self.metadata
        }
    }

    fn written(widget: &Widget) -> Value {
        serde_json::from_str(&to_json(widget).unwrap()).expect("to_json writes JSON")
    }

    #[test]
    fn an_object_without_type_meta_gets_its_kinds() {
        let named = Widget {
            metadata: ObjectMeta {
                name: Some("a".into()),
                ..ObjectMeta::default()
            },
            ..Widget::default()
        };
        assert_eq!(
            written(&named),
            json!({"apiVersion": "example.com/v1", "kind": "Widget", "metadata": {"name": "a"}})
        );
        assert_eq!(
            written(&Widget::default()),
            json!({"apiVersion": "example.com/v1", "kind": "Widget"})
        );
    }

    #[test]
    fn type_meta_the_object_writes_is_kept_as_written() {
        let kind_only = Widget {
            kind: Some("Other".into()),
            ..Widget::default()
        };
        assert_eq!(
            written(&kind_only),
            json!({"apiVersion": "example.com/v1", "kind": "Other"})
        );
        let null_version = Widget {
            api_version: Some(None),
            ..Widget::default()
        };
        assert_eq!(
            written(&null_version),
            json!({"apiVersion": null, "kind": "Widget"})
        );
        let config_map = ConfigMap {
            metadata: ObjectMeta {
                name: Some("c".into()),
                ..ObjectMeta::default()
            },
            ..ConfigMap::default()
        };
        let json = to_json(&config_map).unwrap();
        assert_eq!(json, serde_json::to_string(&config_map).unwrap());
        assert_eq!(
            serde_json::from_str::<Value>(&json).unwrap(),
            json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}})
        );
    }
}
