//! A fake cluster for native tests of reconcilers: [`FakeCluster`]
//! implements [`Backend`] over an in-memory object store and enforces the
//! reconciler's manifest the way the host does, so a reconciler runs
//! unchanged against it:
//!
//! ```
//! # use k8s_openapi::api::core::v1::ConfigMap;
//! # use recon_guest_sdk::{Action, Context, Manifest, ObjectKey, Reconciler, Request, Result};
//! # use recon_guest_sdk::testing::FakeCluster;
//! struct Noop;
//! impl Reconciler for Noop {
//!     fn manifest() -> Manifest { Manifest::new::<ConfigMap>("noop") }
//!     fn reconcile(_: &Context<'_>, _: Request) -> Result<Action> { Ok(Action::Done) }
//! }
//! let cluster = FakeCluster::new::<Noop>();
//! assert_eq!(cluster.reconcile(&ObjectKey::namespaced("default", "a")), Ok(Action::Done));
//! ```
//!
//! What it does as the host and API server do:
//! - objects are JSON keyed by (kind, namespace, name); create assigns
//!   `uid`, `resourceVersion` (one incrementing counter) and
//!   `creationTimestamp`, and `generation` 1 to the kinds that have one;
//!   what bumps it is the kind's rule on a real server
//!   (`recon_api_semantics::object::Generation`: `spec` for most built-in
//!   kinds that have one, `spec` or annotations for a Deployment, anything
//!   but metadata and status for custom resources; ConfigMaps, Secrets,
//!   Pods and the like have none); a write that changes nothing keeps the
//!   resourceVersion;
//! - cache reads see only the kinds the manifest caches (the primary kind
//!   and its selector, owned kinds, watches and their selectors); reading
//!   another kind is [`Error::Forbidden`]. Reads drop `metadata.managedFields`
//!   and the manifest's prune fields; lists are ordered by key
//!   (`namespace/name`, compared as strings), as the host orders them;
//! - indexes declared in the manifest, computed from the cached form;
//! - writes need the manifest's permission for the kind and verb
//!   ([`Error::Forbidden`] otherwise); so do events, which need
//!   [`Manifest::records_events`];
//! - replace and update-status with a stale `metadata.resourceVersion`
//!   conflict; without one they are unconditional, except for custom
//!   resources and Leases, where they are [`Error::Invalid`] (the server's
//!   422: those updates must name the version they read); a patch naming
//!   another resourceVersion conflicts;
//! - every kind is treated as having a status subresource: create drops
//!   `status`, replace and patches keep the stored status, status writes
//!   change only `status`;
//! - merge and JSON patches through the json-patch crate; a failed JSON
//!   patch `test` is [`Error::Invalid`], as the API server's 422;
//! - delete honours preconditions and finalizers (sets `deletionTimestamp`;
//!   the object goes when its last finalizer is removed; no finalizer can be
//!   added meanwhile), and collects dependents through owner references
//!   (background, or orphan);
//! - every change — [`FakeCluster::insert`], [`FakeCluster::delete`], the
//!   reconciler's writes and the garbage collection they set off — queues
//!   the primary keys the host's event handlers would queue for it, through
//!   the same rules (`recon-api-semantics`): the object's own key for the
//!   primary kind, its controller owner for an owned kind, the watch's key
//!   mapping for a watched kind, before and after the change
//!   ([`FakeCluster::pending_keys`]); a wrong mapping in the manifest shows
//!   in a guest's tests;
//! - queue calls refuse a key that is not a Kubernetes namespace and name
//!   ([`Error::Invalid`], as the host does);
//! - events, queue calls, successful writes and logs are recorded for assertions.
//!
//! What it approximates: server-side apply is a JSON merge patch of the
//! intent into the stored object (creating it when absent). Fields an
//! earlier apply set and the new intent omits are kept (real apply removes
//! those the field manager owned), lists are replaced whole (real apply
//! merges lists by key), and `force` is ignored (there are no other field
//! managers to conflict with). Timestamps are the constant [`NOW`].

mod store;
#[cfg(test)]
mod tests;

use std::cell::RefCell;
use std::collections::BTreeMap;
use std::time::Duration;

use serde_json::Value;

use crate::backend::{Backend, DeleteOptions, Event, Level, WriteOp};
use crate::context::Context;
use crate::manifest::{IndexSource, KeyMapping, Manifest, Verb};
use crate::reconciler::Reconciler;
use crate::selector::Selector;
use crate::types::{
    Action, Error, Gvk, Meta, Object, ObjectKey, RawObject, Request, Result, gvk_of,
};
use recon_api_semantics::fields::{field_values_in, segments};
use recon_api_semantics::mapping::{self, Watched};
use recon_api_semantics::names::key_problem;
pub use store::NOW;
use store::{Store, meta_of, meta_str, remove_at};

/// A queue call the reconciler made.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum QueueCall {
    Enqueue(ObjectKey),
    EnqueueAfter(ObjectKey, Duration),
    EnqueueRateLimited(ObjectKey),
    Forget(ObjectKey),
}

/// A write the reconciler made that succeeded.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Write {
    pub verb: Verb,
    pub kind: Gvk,
    pub key: ObjectKey,
}

/// A line the reconciler logged.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LogLine {
    pub level: Level,
    pub message: String,
    pub fields: Vec<(String, String)>,
}

#[derive(Default)]
struct State {
    store: Store,
    events: Vec<Event>,
    writes: Vec<Write>,
    queue_calls: Vec<QueueCall>,
    logs: Vec<LogLine>,
    /// Rate-limited requeues per key, as the host's rate limiter counts them.
    requeues: BTreeMap<ObjectKey, u32>,
    /// Primary keys the changes queued, each once, in the order queued.
    pending: Vec<ObjectKey>,
}

/// An in-memory cluster running one reconciler; see the module docs.
pub struct FakeCluster {
    manifest: Manifest,
    reconcile: fn(&Context<'_>, Request) -> Result<Action>,
    /// The kinds the manifest caches and how their changes are queued.
    routes: Vec<Route>,
    state: RefCell<State>,
}

/// A kind the manifest caches and how its changes reach the queue, as the
/// host's event handlers route them.
struct Route {
    kind: Gvk,
    /// The objects admitted (`None`: every object).
    selector: Option<Selector>,
    /// How a change maps to primary keys; `None` for the primary kind,
    /// whose objects are queued by their own keys.
    mapping: Option<KeyMapping>,
}

fn selector(text: &Option<String>) -> Option<Selector> {
    text.as_deref()
        .map(|s| Selector::parse(s).unwrap_or_else(|e| panic!("the manifest's selector: {e}")))
}

fn parse_object<K: Object>(value: &Value) -> K {
    serde_json::from_value(value.clone())
        .unwrap_or_else(|e| panic!("the stored {} does not deserialize: {e}: {value}", K::KIND))
}

impl FakeCluster {
    /// An empty cluster running `R`. Panics when `R`'s manifest is invalid
    /// ([`Manifest::validate`]), as the host would refuse to load it.
    pub fn new<R: Reconciler>() -> Self {
        let manifest = R::manifest();
        if let Err(e) = manifest.validate() {
            panic!("{e}");
        }
        let mut routes = vec![Route {
            kind: manifest.primary.clone(),
            selector: selector(&manifest.primary_label_selector),
            mapping: None,
        }];
        routes.extend(manifest.owns.iter().map(|kind| Route {
            kind: kind.clone(),
            selector: None,
            mapping: Some(KeyMapping::ControllerOwner),
        }));
        routes.extend(manifest.watches.iter().map(|watch| Route {
            kind: watch.kind.clone(),
            selector: selector(&watch.label_selector),
            mapping: Some(watch.mapping.clone()),
        }));
        Self {
            manifest,
            reconcile: R::reconcile,
            routes,
            state: RefCell::new(State::default()),
        }
    }

    pub fn manifest(&self) -> &Manifest {
        &self.manifest
    }

    /// A context over this cluster, for calling SDK helpers directly.
    pub fn context(&self) -> Context<'_> {
        Context::new(self)
    }

    /// Runs one reconcile of `key`, with `attempt` the key's rate-limited
    /// requeues so far, and handles the result as the host does: `Done` and
    /// `RequeueAfter` forget the key's requeues, `Requeue` and errors add one.
    pub fn reconcile(&self, key: &ObjectKey) -> Result<Action> {
        let attempt = self.num_requeues(key);
        let request = Request {
            key: key.clone(),
            attempt,
        };
        let result = (self.reconcile)(&self.context(), request);
        let mut state = self.state.borrow_mut();
        match result {
            Ok(Action::Done) | Ok(Action::RequeueAfter(_)) => {
                state.requeues.remove(key);
            }
            Ok(Action::Requeue) | Err(_) => {
                *state.requeues.entry(key.clone()).or_default() += 1;
            }
        }
        result
    }

    /// Creates or overwrites `obj` as another actor would (no permission
    /// check, status kept, no resourceVersion precondition); returns it as stored.
    pub fn insert<K: Object>(&self, obj: &K) -> K {
        let value = serde_json::to_value(obj).expect("objects serialize");
        let stored = self
            .change(|store| store.insert(&gvk_of::<K>(), value))
            .unwrap_or_else(|e| panic!("insert {}: {e}", K::KIND));
        parse_object(&stored)
    }

    /// The stored `K` (not the cached form: nothing pruned).
    pub fn get<K: Object>(&self, namespace: Option<&str>, name: &str) -> Option<K> {
        let state = self.state.borrow();
        state
            .store
            .get(&gvk_of::<K>(), namespace, name)
            .map(parse_object)
    }

    /// Every stored `K`, in one namespace or all, ordered by key
    /// (`namespace/name`), as the host orders a guest's reads.
    pub fn list<K: Object>(&self, namespace: Option<&str>) -> Vec<K> {
        let kind = gvk_of::<K>();
        let state = self.state.borrow();
        state
            .store
            .of_kind(&kind)
            .filter(|o| namespace.is_none() || meta_str(o, "namespace") == namespace)
            .map(parse_object)
            .collect()
    }

    /// Deletes `namespace/name` as a user would (`kubectl delete`):
    /// finalizers delay it, dependents are collected in the background.
    pub fn delete<K: Object>(&self, namespace: Option<&str>, name: &str) -> Result<()> {
        self.change(|store| {
            store.delete(&gvk_of::<K>(), namespace, name, &DeleteOptions::default())
        })
    }

    /// The primary keys the host would have queued for the changes made so
    /// far — by [`insert`](Self::insert), [`delete`](Self::delete), the
    /// reconciler's writes and what they set off (garbage collection) — each
    /// once, in the order first queued: every changed object of a cached
    /// kind, before and after the change, mapped as the manifest says (its
    /// own key for the primary kind, its controller owner for an owned
    /// kind, the watch's key mapping for a watched kind), through the rules
    /// the host's event handlers apply. (The host's informers see every
    /// change once they watch; changes made before an informer's first list
    /// reach it as their last state only.) The host's tests run the same
    /// changes through both and compare the keys.
    pub fn pending_keys(&self) -> Vec<ObjectKey> {
        self.state.borrow().pending.clone()
    }

    /// [`pending_keys`](Self::pending_keys), emptying them.
    pub fn take_pending_keys(&self) -> Vec<ObjectKey> {
        std::mem::take(&mut self.state.borrow_mut().pending)
    }

    /// Runs `change` on the store and queues the primary keys its changes
    /// map to.
    fn change<T>(&self, change: impl FnOnce(&mut Store) -> Result<T>) -> Result<T> {
        let before = self.state.borrow().store.objects().clone();
        let result = change(&mut self.state.borrow_mut().store);
        let keys = {
            let state = self.state.borrow();
            let after = state.store.objects();
            let mut keys = Vec::new();
            for (key, old) in &before {
                match after.get(key) {
                    Some(new) if new == old => {}
                    Some(new) => {
                        keys.extend(self.mapped_keys(&key.0, old));
                        keys.extend(self.mapped_keys(&key.0, new));
                    }
                    None => keys.extend(self.mapped_keys(&key.0, old)),
                }
            }
            for (key, new) in after {
                if !before.contains_key(key) {
                    keys.extend(self.mapped_keys(&key.0, new));
                }
            }
            keys
        };
        let mut state = self.state.borrow_mut();
        for key in keys {
            if !state.pending.contains(&key) {
                state.pending.push(key);
            }
        }
        result
    }

    /// The primary keys a change of `obj`, of `kind`, maps to, by every
    /// route of its kind that admits it.
    fn mapped_keys(&self, kind: &Gvk, obj: &Value) -> Vec<ObjectKey> {
        let watched = JsonObject(obj);
        let labels = labels_of(obj);
        let primary = &self.manifest.primary;
        let mut keys: Vec<String> = Vec::new();
        for route in self.routes.iter().filter(|route| {
            route.kind == *kind && route.selector.as_ref().is_none_or(|s| s.matches(&labels))
        }) {
            match &route.mapping {
                None => keys.push(mapping::object_key(
                    Some(watched.namespace()),
                    watched.name(),
                )),
                Some(KeyMapping::ControllerOwner) => {
                    keys.extend(mapping::controller_owner_key(primary, &watched));
                }
                Some(KeyMapping::Label(label)) => keys.extend(mapping::label_key(label, &watched)),
                Some(KeyMapping::Annotation(annotation)) => {
                    keys.extend(mapping::annotation_key(annotation, &watched));
                }
                Some(KeyMapping::Namespace) => keys.extend(mapping::namespace_key(&watched)),
                Some(KeyMapping::ByIndex(index)) => {
                    // The primary objects whose index holds the watched
                    // object's name, as the reconciler's `by_index` finds them.
                    let found = self
                        .by_index(primary, index, watched.name())
                        .unwrap_or_default();
                    keys.extend(
                        found
                            .iter()
                            .map(|object| object.meta.key.to_string())
                            .filter(|key| mapping::index_key_admitted(&watched, key)),
                    );
                }
            }
        }
        keys.iter().map(|key| key_of(key)).collect()
    }

    /// Records a queue call of `key`, which the host refuses unless it is
    /// a Kubernetes namespace and name.
    fn queue(&self, key: &ObjectKey, call: QueueCall) -> Result<()> {
        if let Some(problem) = key_problem(key.namespace.as_deref(), &key.name) {
            return Err(Error::Invalid(format!("invalid key: {problem}")));
        }
        self.state.borrow_mut().queue_calls.push(call);
        Ok(())
    }

    /// Events recorded so far, oldest first.
    pub fn events(&self) -> Vec<Event> {
        self.state.borrow().events.clone()
    }

    /// Successful writes so far, oldest first.
    pub fn writes(&self) -> Vec<Write> {
        self.state.borrow().writes.clone()
    }

    /// Queue calls so far, oldest first.
    pub fn queue_calls(&self) -> Vec<QueueCall> {
        self.state.borrow().queue_calls.clone()
    }

    /// Log lines so far, oldest first.
    pub fn logs(&self) -> Vec<LogLine> {
        self.state.borrow().logs.clone()
    }

    /// Forgets recorded events, writes, queue calls and logs (objects and
    /// requeue counts stay).
    pub fn clear_records(&self) {
        let mut state = self.state.borrow_mut();
        state.events.clear();
        state.writes.clear();
        state.queue_calls.clear();
        state.logs.clear();
        state.pending.clear();
    }

    /// The selectors admitting objects of `kind` into the cache; an error
    /// when the manifest does not cache the kind at all.
    fn cache_filters(&self, kind: &Gvk) -> Result<Vec<&Option<Selector>>> {
        let filters: Vec<_> = self
            .routes
            .iter()
            .filter(|route| route.kind == *kind)
            .map(|route| &route.selector)
            .collect();
        if filters.is_empty() {
            return Err(Error::Forbidden(format!(
                "{kind} is not cached for {}: the manifest neither reconciles, owns nor watches it",
                self.manifest.name
            )));
        }
        Ok(filters)
    }

    /// The cached form of the objects of `kind` in `namespace` (or all)
    /// matching `label_selector`.
    fn cached_objects(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Value>> {
        let filters = self.cache_filters(kind)?;
        let selector = label_selector.map(Selector::parse).transpose()?;
        let state = self.state.borrow();
        let objects = state
            .store
            .of_kind(kind)
            .filter(|o| namespace.is_none() || meta_str(o, "namespace") == namespace)
            .filter(|o| {
                let labels = labels_of(o);
                admitted(&filters, &labels) && selector.as_ref().is_none_or(|s| s.matches(&labels))
            })
            .map(|o| self.cached_form(kind, o))
            .collect();
        Ok(objects)
    }

    /// `obj` as the host caches it: without managed fields (unless the
    /// manifest keeps them) and prune fields, and as a
    /// `PartialObjectMetadata` of its metadata alone when the manifest
    /// reads its kind as metadata only.
    fn cached_form(&self, kind: &Gvk, obj: &Value) -> Value {
        let mut obj = if self.manifest.metadata_only.contains(kind) {
            serde_json::json!({
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": obj.get("metadata").cloned().unwrap_or_default(),
            })
        } else {
            obj.clone()
        };
        if !self.manifest.keep_managed_fields.contains(kind) {
            remove_at(&mut obj, &["metadata", "managedFields"]);
        }
        for pruned in self
            .manifest
            .prune_fields
            .iter()
            .filter(|p| p.kind == *kind)
        {
            let segments: Vec<&str> = pruned.path.split('.').collect();
            remove_at(&mut obj, &segments);
        }
        obj
    }

    fn check_write(&self, kind: &Gvk, verb: Verb) -> Result<()> {
        if self.manifest.allows(kind, verb) {
            Ok(())
        } else {
            Err(Error::Forbidden(format!(
                "the manifest of {} does not allow {verb:?} on {kind}",
                self.manifest.name
            )))
        }
    }
}

/// Whether one of the cache's `filters` (from [`FakeCluster::cache_filters`])
/// admits an object with `labels`.
fn admitted(filters: &[&Option<Selector>], labels: &serde_json::Map<String, Value>) -> bool {
    filters
        .iter()
        .any(|f| f.as_ref().is_none_or(|s| s.matches(labels)))
}

fn labels_of(obj: &Value) -> serde_json::Map<String, Value> {
    obj.pointer("/metadata/labels")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

fn raw(obj: Value) -> RawObject {
    RawObject {
        meta: meta_of(&obj),
        json: obj.to_string(),
    }
}

/// The string at `obj[pointer][key]`, as a list of none or one.
fn member(obj: &Value, pointer: &str, key: &str) -> Vec<String> {
    obj.pointer(pointer)
        .and_then(|map| map.get(key))
        .and_then(Value::as_str)
        .map(str::to_string)
        .into_iter()
        .collect()
}

/// The values the index `source` holds for `obj`.
fn index_values(obj: &Value, source: &IndexSource) -> Vec<String> {
    match source {
        IndexSource::Label(key) => member(obj, "/metadata/labels", key),
        IndexSource::Annotation(key) => member(obj, "/metadata/annotations", key),
        IndexSource::Field(path) => strings_at(obj, path),
        IndexSource::Fields(paths) => {
            let mut found: Vec<String> = Vec::new();
            for value in paths.iter().flat_map(|path| strings_at(obj, path)) {
                if !found.contains(&value) {
                    found.push(value);
                }
            }
            found
        }
        IndexSource::OwnerUid => strings_at(obj, "metadata.ownerReferences.uid"),
    }
}

/// The key `namespace/name` or `name` as an [`ObjectKey`].
fn key_of(key: &str) -> ObjectKey {
    match mapping::split_key(key) {
        Some(("", name)) => ObjectKey::cluster(name),
        Some((namespace, name)) => ObjectKey::namespaced(namespace, name),
        // Not a key (an annotation naming `a/b/c`): the host's worker
        // refuses it; kept whole, so a test sees what was queued.
        None => ObjectKey::cluster(key),
    }
}

/// A stored object as the key-mapping rules read it.
struct JsonObject<'a>(&'a Value);

impl JsonObject<'_> {
    fn meta(&self, field: &str) -> &str {
        self.0
            .pointer(&format!("/metadata/{field}"))
            .and_then(Value::as_str)
            .unwrap_or_default()
    }

    fn member(&self, map: &str, key: &str) -> Option<&str> {
        self.0
            .pointer(&format!("/metadata/{map}"))
            .and_then(|m| m.get(key))
            .and_then(Value::as_str)
    }
}

impl Watched for JsonObject<'_> {
    fn namespace(&self) -> &str {
        self.meta("namespace")
    }

    fn name(&self) -> &str {
        self.meta("name")
    }

    fn label(&self, key: &str) -> Option<&str> {
        self.member("labels", key)
    }

    fn annotation(&self, key: &str) -> Option<&str> {
        self.member("annotations", key)
    }

    fn controller_owner(&self) -> Option<(&str, &str, &str)> {
        let owners = self.0.pointer("/metadata/ownerReferences")?.as_array()?;
        let owner = owners
            .iter()
            .find(|o| o.get("controller").and_then(Value::as_bool) == Some(true))?;
        let field = |f: &str| owner.get(f).and_then(Value::as_str).unwrap_or_default();
        Some((field("apiVersion"), field("kind"), field("name")))
    }
}

/// The strings at the dot-separated `path` of `obj`, as the host's field
/// indexes find them.
fn strings_at(obj: &Value, path: &str) -> Vec<String> {
    field_values_in(&[segments(path)], obj)
        .pop()
        .unwrap_or_default()
}

impl Backend for FakeCluster {
    fn get(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<RawObject>> {
        let filters = self.cache_filters(kind)?;
        let state = self.state.borrow();
        let Some(obj) = state.store.get(kind, namespace, name) else {
            return Ok(None);
        };
        Ok(admitted(&filters, &labels_of(obj)).then(|| raw(self.cached_form(kind, obj))))
    }

    fn list(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<RawObject>> {
        let objects = self.cached_objects(kind, namespace, label_selector)?;
        Ok(objects.into_iter().map(raw).collect())
    }

    fn get_meta(&self, kind: &Gvk, namespace: Option<&str>, name: &str) -> Result<Option<Meta>> {
        Ok(Backend::get(self, kind, namespace, name)?.map(|raw| raw.meta))
    }

    fn list_meta(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        label_selector: Option<&str>,
    ) -> Result<Vec<Meta>> {
        let objects = self.cached_objects(kind, namespace, label_selector)?;
        Ok(objects.iter().map(meta_of).collect())
    }

    fn by_index(&self, kind: &Gvk, index: &str, value: &str) -> Result<Vec<RawObject>> {
        let spec = self
            .manifest
            .indexes
            .iter()
            .find(|i| i.name == index && &i.kind == kind)
            .ok_or_else(|| {
                Error::Invalid(format!(
                    "the manifest declares no index {index:?} for {kind}"
                ))
            })?;
        let objects = self.cached_objects(kind, None, None)?;
        Ok(objects
            .into_iter()
            .filter(|o| index_values(o, &spec.source).iter().any(|v| v == value))
            .map(raw)
            .collect())
    }

    fn write(
        &self,
        kind: &Gvk,
        namespace: Option<&str>,
        write: WriteOp<'_>,
    ) -> Result<Option<RawObject>> {
        let verb = write.verb();
        self.check_write(kind, verb)?;
        let stored = match write {
            WriteOp::Delete { name, options } => {
                self.change(|store| store.delete(kind, namespace, name, options))?;
                None
            }
            WriteOp::Create { json } => {
                Some(self.change(|store| store.create(kind, namespace, json))?)
            }
            WriteOp::Replace { name, json, status } => {
                Some(self.change(|store| store.update(kind, namespace, name, json, status))?)
            }
            WriteOp::Patch { name, body, status } => {
                Some(self.change(|store| store.patch(kind, namespace, name, body, status))?)
            }
        }
        .map(raw);
        let key = match &stored {
            Some(stored) => stored.meta.key.clone(),
            None => ObjectKey::new(namespace, write.name().unwrap_or_default()),
        };
        self.state.borrow_mut().writes.push(Write {
            verb,
            kind: kind.clone(),
            key,
        });
        Ok(stored)
    }

    fn record_event(&self, event: &Event) -> Result<()> {
        if !self.manifest.allows_events() {
            return Err(Error::Forbidden(format!(
                "the manifest of {} does not allow recording events (Manifest::records_events)",
                self.manifest.name
            )));
        }
        self.state.borrow_mut().events.push(event.clone());
        Ok(())
    }

    fn enqueue(&self, key: &ObjectKey) -> Result<()> {
        self.queue(key, QueueCall::Enqueue(key.clone()))
    }

    fn enqueue_after(&self, key: &ObjectKey, delay: Duration) -> Result<()> {
        self.queue(key, QueueCall::EnqueueAfter(key.clone(), delay))
    }

    fn enqueue_rate_limited(&self, key: &ObjectKey) -> Result<()> {
        self.queue(key, QueueCall::EnqueueRateLimited(key.clone()))?;
        *self
            .state
            .borrow_mut()
            .requeues
            .entry(key.clone())
            .or_default() += 1;
        Ok(())
    }

    fn forget(&self, key: &ObjectKey) {
        let mut state = self.state.borrow_mut();
        state.queue_calls.push(QueueCall::Forget(key.clone()));
        state.requeues.remove(key);
    }

    fn num_requeues(&self, key: &ObjectKey) -> u32 {
        self.state.borrow().requeues.get(key).copied().unwrap_or(0)
    }

    fn log(&self, level: Level, message: &str, fields: &[(String, String)]) {
        self.state.borrow_mut().logs.push(LogLine {
            level,
            message: message.to_string(),
            fields: fields.to_vec(),
        });
    }
}
