//! The dev API server's storage engine: an in-memory store
//! with Kubernetes API semantics (resourceVersions, list paging over
//! consistent snapshots, watch with history replay, optimistic concurrency,
//! generation, status and scale subresources, merge / JSON / strategic merge
//! patch, simplified server-side apply, finalizers, garbage collection,
//! namespace deletion, CRDs and their schemas). A development and test tool, not a
//! production API server.
//!
//! Objects are `serde_json::Value`s keyed per resource type by (namespace,
//! name). One mutex guards all state; watch events are sent to every
//! watcher's unbounded channel under that lock, so each watcher sees the
//! commit order.
//!
//! # Layout
//! - This module: the served resource types, the state behind the lock, its
//!   one write path (`commit`: indexes, history, watchers), the list
//!   snapshots kept for `continue`, and serving the kinds of CRDs.
//! - `meta`: metadata helpers (names, owners, timestamps, uids, a Secret's
//!   `stringData`, managedFields entries).
//! - `objects`: create, update and get, and the scale subresource.
//! - [`patch`]: the PATCH verb, strategic merge patch and apply.
//! - `list`: list options, paging and `continue` tokens, [`ListBody`].
//! - `watch`: watches, history replay, bookmarks, compaction.
//! - `gc`: deletion, finalizers, garbage collection and namespace
//!   termination.
//! - [`kinds`], [`selector`], [`ApiError`]: the built-in kinds and CRD
//!   parsing, field selectors, the errors as metav1 `Status`.
//! - `schema`: a custom resource's structural schema on its writes
//!   (pruning, defaults, validation).
//! - `defaults`: the defaults of the built-in kinds (and the range of
//!   Service cluster IPs).
//! - `qos`: a Pod's QoS class and the resource quantities it reads.
//! - `cel`: a CRD schema's `x-kubernetes-validations` rules.
//! - `times`: Time and MicroTime fields, decoded and stored as the server's.
//! - `disabled_fields`: pod spec fields of gates v1.33 leaves off, dropped.
//!
//! # What differs from a real API server
//! - Built-in kinds are read through their API types (`typed`) and
//!   validated in part (`validation`: metadata, Pods and pod templates,
//!   workloads, Services, ConfigMaps and Secrets); their defaults are
//!   `defaults`'s. Custom resources meet their CRD's schema and its CEL
//!   rules (`cel`), formats and list types. Status in a create body is
//!   dropped for kinds with a status subresource, as their strategies do
//!   (a Node keeps it; a custom resource gets none, a built-in kind the
//!   zero status Go writes, a Pod `Pending` and its QoS class, `qos`); a
//!   test that needs a status writes it through the status subresource, as
//!   a controller does.
//!   PUTs follow each kind's `AllowCreateOnUpdate` and
//!   `AllowUnconditionalUpdate` ([`ResourceType`]).
//! - Core/v1 and events.k8s.io/v1 Events are one storage, converted as the
//!   real server converts them (`events`). The versions of a CRD share storage and
//!   objects are only relabelled with the requested apiVersion (no
//!   conversion).
//! - Strategic merge patch merges lists as the built-in kinds' OpenAPI
//!   schemas give their patch strategies (see [`patch`]); a custom resource
//!   refuses it with 415, as the real server does.
//! - Server-side apply has field ownership (`apply`), with list and map
//!   types read from the kind's OpenAPI schema ([`built_in_schemas`] for
//!   the built-in kinds).
//! - Deletion: propagation as `gc.rs` describes, the garbage collector's
//!   work done within the write that calls for it (a DELETE answers with
//!   the object as it stood pending; the finalizers then go as soon as
//!   nothing holds them). There is no grace period
//!   (deletionGracePeriodSeconds is 0).
//! - `resourceVersionMatch=Exact` on list is only served for the current
//!   resourceVersion (older ones get 410 Expired); NotOlderThan always
//!   serves the current state. A list with `resourceVersion` greater than the
//!   current one fails at once with 504 `ResourceVersionTooLarge`; a watch
//!   from a future version waits for it.
//! - CRD scale subresources use `.spec.replicas` / `.status.replicas`
//!   whatever the CRD's paths say.
//! - Deleting a CRD removes its objects at once (ignoring their finalizers)
//!   and ends the watches on it.
//! - A patch or update that changes nothing writes nothing (no new
//!   resourceVersion, no event), as the real server; a re-apply of the same
//!   configuration by the same manager keeps its managedFields entry.
//! - Field selectors: `metadata.name` / `metadata.namespace` on every kind,
//!   plus a few kind-specific fields ([`selector::kind_fields`]: pod
//!   `spec.nodeName` / `status.phase`, event `involvedObject.*`, ...).
//! - No admission (service accounts, tolerations, priorities), no
//!   ServiceAccount tokens; a Secret's `stringData` is folded into `data`.
//!
//! # For the HTTP layer
//! - Errors: reply with status `ApiError::code` and the body
//!   [`ApiError::to_status`] (a metav1 `Status`).
//! - Lists: serialize [`ListBody`] (no copies of the items).
//! - Watches: send each [`WatchEvent`] as its `Serialize` form
//!   (`{"type","object"}`). A watch from a compacted version yields one
//!   `ERROR` event (a 410 `Status`) and ends: send it with HTTP 200 and close,
//!   as the real server does. `next()` returning `None` means the store
//!   closed the watch (`drop_watches`, CRD deleted): end the response.
//!   `timeoutSeconds` is the HTTP layer's.
//! - Bookmarks: when the client allows them, periodically call
//!   [`Watch::bookmark`]; `Some(rv)` means every event up to `rv` has been
//!   taken, so send [`bookmark_event`]`(rt, rv)`; `None` means drain first.
//! - Subresources: GET `/status` is [`Store::get`]; GET `/scale` is
//!   [`Store::get_scale`]; PUT/PATCH pass `Some(Subresource::…)`.
//!   DELETE on a collection is [`Store::delete_collection`].

mod apply;
pub mod built_in_schemas;
mod cel;
mod defaults;
mod disabled_fields;
mod error;
mod events;
mod format;
mod gc;
mod ip;
pub mod kinds;
mod list;
mod meta;
mod names;
mod objects;
pub mod patch;
mod qos;
mod quantity;
mod schema;
pub mod selector;
mod service_alloc;
#[cfg(test)]
mod tests;
mod times;
pub mod typed;
mod validation;
mod watch;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};

pub use cel::unchecked as unchecked_rules;
pub use error::ApiError;
pub use list::{CONTINUE_EXPIRED_MESSAGE, ListBody, ListParams, ListResult};
pub use meta::{deletion_pending, format_time, new_uid, now_rfc3339};
pub use patch::{Patch, PatchKind, Patched};
pub(crate) use quantity::canonical as canonical_quantity;
pub use recon_api_semantics::writes::{DeleteOptions, PropagationPolicy};
pub use schema::{Cause, unknown_fields};
pub use watch::{Watch, WatchEvent, WatchEventKind, WatchParams, bookmark_event, bookmark_object};

use meta::{meta_mut, meta_str, owner_uids};
use watch::{HistEvent, Watcher};

/// A served resource type (one version of one kind), for discovery.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ResourceType {
    /// `""` for the core group.
    pub group: String,
    pub version: String,
    pub kind: String,
    pub plural: String,
    pub singular: String,
    pub namespaced: bool,
    pub status_subresource: bool,
    pub scale_subresource: bool,
    /// A custom resource's scale paths (its CRD's `subresources.scale`);
    /// `None` for a built-in kind, whose scale reads `spec.replicas`,
    /// `status.replicas` and `spec.selector`.
    pub scale_paths: Option<Arc<ScalePaths>>,
    pub list_kind: String,
    pub short_names: Vec<String>,
    /// The groups of kinds it belongs to (`all`), which discovery lists
    /// and `kubectl get CATEGORY` reads.
    pub categories: Vec<String>,
    pub verbs: Vec<String>,
    /// A DELETE that removes an object answers with the object (the
    /// registry's `ReturnDeletedObject`), not a `Status` naming it.
    pub returns_deleted_object: bool,
    /// A PUT to a missing name creates the object (the strategy's
    /// `AllowCreateOnUpdate`).
    pub create_on_update: bool,
    /// A PUT without `metadata.resourceVersion` overwrites whatever is
    /// stored (`AllowUnconditionalUpdate`); where not, it is a 422.
    pub unconditional_update: bool,
    /// A custom resource version's structural schema
    /// (`schema.openAPIV3Schema`), applied to its writes.
    pub schema: Option<Arc<Value>>,
    /// A custom resource version's `additionalPrinterColumns` (empty when
    /// it has none), for the Tables of `kubectl get`; `None` for a
    /// built-in kind.
    pub printer_columns: Option<Arc<Vec<Value>>>,
}

/// Where a custom resource keeps what its `scale` subresource shows, as
/// JSON pointers (from the CRD's `.spec.replicas`-style paths).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScalePaths {
    pub spec_replicas: String,
    pub status_replicas: String,
    /// A string field holding the selector in its serialized form.
    pub label_selector: Option<String>,
}

impl ScalePaths {
    /// The paths of a CRD version's `subresources.scale`.
    pub fn of(scale: &Value) -> ScalePaths {
        let pointer = |field: &str| {
            scale
                .get(field)
                .and_then(Value::as_str)
                .filter(|path| !path.is_empty())
                .map(|path| format!("/{}", path.trim_start_matches('.').replace('.', "/")))
        };
        ScalePaths {
            spec_replicas: pointer("specReplicasPath").unwrap_or_else(|| "/spec/replicas".into()),
            status_replicas: pointer("statusReplicasPath")
                .unwrap_or_else(|| "/status/replicas".into()),
            label_selector: pointer("labelSelectorPath"),
        }
    }
}

impl ResourceType {
    /// Whether the kind is one of the server's own, not a CRD's.
    pub fn is_built_in(&self) -> bool {
        self.printer_columns.is_none()
    }

    /// `v1` for the core group, `group/version` otherwise.
    pub fn api_version(&self) -> String {
        recon_api_semantics::api_version(&self.group, &self.version)
    }

    /// Whether `api_version` is [`ResourceType::api_version`], without
    /// building it.
    fn is_api_version(&self, api_version: &str) -> bool {
        if self.group.is_empty() {
            api_version == self.version
        } else {
            api_version
                .strip_prefix(self.group.as_str())
                .and_then(|rest| rest.strip_prefix('/'))
                == Some(self.version.as_str())
        }
    }

    fn key(&self) -> TypeKey {
        (self.group.clone(), self.plural.clone())
    }

    /// Where its objects are kept: under its own key, but events.k8s.io
    /// Events are core Events ([`events`]).
    fn storage_key(&self) -> TypeKey {
        if events::is_events_api(self) {
            (String::new(), "events".into())
        } else {
            self.key()
        }
    }
}

/// Store tuning.
#[derive(Debug, Clone)]
pub struct StoreConfig {
    /// Watch events kept for replay; older versions get 410.
    pub history_limit: usize,
    /// List snapshots kept for `continue` tokens.
    pub snapshot_limit: usize,
}

impl Default for StoreConfig {
    fn default() -> Self {
        Self {
            history_limit: 10_000,
            snapshot_limit: 64,
        }
    }
}

/// A subresource addressed by a write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Subresource {
    Status,
    Scale,
}

type TypeKey = (String, String);
type ObjKey = (String, String);
type Objects = BTreeMap<ObjKey, Arc<Value>>;

#[derive(Clone)]
struct TypeInfo {
    /// Served versions; the first is the storage version for built-ins.
    versions: Vec<ResourceType>,
}

struct Snapshot {
    tk: TypeKey,
    rv: u64,
    objects: Arc<Objects>,
}

struct State {
    config: StoreConfig,
    rv: u64,
    types: BTreeMap<TypeKey, TypeInfo>,
    /// The built-in types (strategic merge knows their list keys).
    builtin: HashSet<TypeKey>,
    objects: HashMap<TypeKey, Arc<Objects>>,
    /// uid → where the object lives.
    uids: HashMap<String, (TypeKey, ObjKey)>,
    /// owner uid → dependents.
    dependents: HashMap<String, HashSet<(TypeKey, ObjKey)>>,
    history: VecDeque<HistEvent>,
    /// Watches from a version below this get 410.
    compacted: u64,
    snapshots: VecDeque<Snapshot>,
    watchers: Vec<Watcher>,
    /// The offset in the Service range of the last cluster IP handed out.
    last_cluster_ip: u32,
}

/// The in-memory store. Cheap to share behind the `Arc` [`Store::new`] returns.
pub struct Store {
    shared: Arc<Mutex<State>>,
}

/// The object as the requested version shows it (CRD versions share
/// storage, events.k8s.io Events are core Events).
fn relabel(obj: &Arc<Value>, rt: &ResourceType) -> Arc<Value> {
    if obj.get("kind").and_then(Value::as_str) == Some("Status") {
        return obj.clone();
    }
    if events::is_events_api(rt) {
        return Arc::new(events::from_core(obj, rt));
    }
    if obj
        .get("apiVersion")
        .and_then(Value::as_str)
        .is_some_and(|v| rt.is_api_version(v))
    {
        obj.clone()
    } else {
        let mut v = (**obj).clone();
        v["apiVersion"] = json!(rt.api_version());
        Arc::new(v)
    }
}

fn namespace_type() -> ResourceType {
    kinds::builtin_types()
        .into_iter()
        .find(|t| t.plural == "namespaces")
        .expect("namespaces is built in")
}

impl State {
    /// The served version of `rt` (the caller's copy may be stale).
    fn served(&self, rt: &ResourceType) -> Result<ResourceType, ApiError> {
        self.types
            .get(&rt.key())
            .and_then(|t| t.versions.iter().find(|v| v.version == rt.version))
            .cloned()
            .ok_or_else(ApiError::resource_not_served)
    }

    /// The served version of `rt`, which must have a scale subresource.
    fn served_with_scale(&self, rt: &ResourceType) -> Result<ResourceType, ApiError> {
        let rt = self.served(rt)?;
        if !rt.scale_subresource {
            return Err(ApiError::resource_not_served());
        }
        Ok(rt)
    }

    fn obj_key(rt: &ResourceType, namespace: Option<&str>, name: &str) -> ObjKey {
        let ns = if rt.namespaced {
            namespace.unwrap_or("").to_string()
        } else {
            String::new()
        };
        (ns, name.to_string())
    }

    fn lookup(&self, tk: &TypeKey, key: &ObjKey) -> Option<Arc<Value>> {
        self.objects.get(tk)?.get(key).cloned()
    }

    /// The key and the stored object `name` of the served type `rt`, or a
    /// 404 naming it.
    fn existing(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<(ObjKey, Arc<Value>), ApiError> {
        let key = Self::obj_key(rt, namespace, name);
        let obj = self
            .lookup(&rt.storage_key(), &key)
            .ok_or_else(|| ApiError::not_found(rt, name))?;
        Ok((key, obj))
    }

    fn namespace_obj(&self, ns: &str) -> Option<Arc<Value>> {
        self.lookup(
            &(String::new(), "namespaces".into()),
            &(String::new(), ns.to_string()),
        )
    }

    /// Writes (or removes, for `Deleted`) an object: stamps a new
    /// resourceVersion, updates the indexes, records history and notifies
    /// watchers. Returns the stored object.
    fn commit(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        mut obj: Value,
        kind: WatchEventKind,
    ) -> Arc<Value> {
        self.rv += 1;
        let rv = self.rv;
        meta_mut(&mut obj).insert("resourceVersion".into(), json!(rv.to_string()));
        let obj = Arc::new(obj);
        let map = Arc::make_mut(self.objects.entry(tk.clone()).or_default());
        let prev = if kind == WatchEventKind::Deleted {
            map.remove(&key)
        } else {
            map.insert(key.clone(), obj.clone())
        };
        if let Some(p) = &prev {
            for owner in owner_uids(p) {
                if let Some(set) = self.dependents.get_mut(&owner) {
                    set.remove(&(tk.clone(), key.clone()));
                    if set.is_empty() {
                        self.dependents.remove(&owner);
                    }
                }
            }
            if let Some(uid) = meta_str(p, "uid") {
                self.uids.remove(uid);
            }
        }
        if kind != WatchEventKind::Deleted {
            for owner in owner_uids(&obj) {
                self.dependents
                    .entry(owner)
                    .or_default()
                    .insert((tk.clone(), key.clone()));
            }
            if let Some(uid) = meta_str(&obj, "uid") {
                self.uids.insert(uid.to_string(), (tk.clone(), key.clone()));
            }
        }
        // Watchers.
        self.watchers.retain(|w| {
            if w.selection.tk != *tk || rv <= w.after {
                return !w.tx.is_closed();
            }
            match w.translate(kind, &obj, prev.as_ref()) {
                Some(ev) => w.tx.send(ev).is_ok(),
                None => !w.tx.is_closed(),
            }
        });
        // History.
        self.history.push_back(HistEvent {
            rv,
            tk: tk.clone(),
            kind,
            object: obj.clone(),
            prev,
        });
        while self.history.len() > self.config.history_limit {
            if let Some(old) = self.history.pop_front() {
                self.compacted = old.rv;
            }
        }
        obj
    }

    /// The objects of `tk` as they were at `rv`: the current ones with
    /// every later change undone from the history (each event keeps the
    /// object it replaced); `None` once the history no longer reaches back
    /// to `rv`.
    fn objects_at(&self, tk: &TypeKey, rv: u64) -> Option<Arc<Objects>> {
        if rv < self.compacted {
            return None;
        }
        let mut objects = self.objects.get(tk).cloned().unwrap_or_default();
        let first = self.history.partition_point(|h| h.rv <= rv);
        let map = Arc::make_mut(&mut objects);
        for event in self.history.range(first..).rev().filter(|h| h.tk == *tk) {
            let key = (
                meta_str(&event.object, "namespace")
                    .unwrap_or("")
                    .to_string(),
                meta_str(&event.object, "name").unwrap_or("").to_string(),
            );
            match &event.prev {
                Some(before) => map.insert(key, Arc::clone(before)),
                None => map.remove(&key),
            };
        }
        Some(objects)
    }

    /// Keeps `objects`, the state of `tk` at `rv`, for `continue` tokens
    /// (once per type and version).
    fn keep_snapshot(&mut self, tk: &TypeKey, rv: u64, objects: &Arc<Objects>) {
        if self.snapshots.iter().any(|s| s.tk == *tk && s.rv == rv) {
            return;
        }
        self.snapshots.push_back(Snapshot {
            tk: tk.clone(),
            rv,
            objects: Arc::clone(objects),
        });
        while self.snapshots.len() > self.config.snapshot_limit {
            self.snapshots.pop_front();
        }
    }

    // ------------------------------------------------------------ CRDs

    /// (Re)serves the kind of a stored CRD.
    fn serve_crd(&mut self, crd: &Value) {
        if let Ok(spec) = kinds::parse_crd(crd) {
            let tk = (spec.group.clone(), spec.plural.clone());
            if spec.served.is_empty() {
                self.types.remove(&tk);
            } else {
                self.types.insert(
                    tk.clone(),
                    TypeInfo {
                        versions: spec.served,
                    },
                );
                self.objects.entry(tk).or_default();
            }
        }
    }

    /// Stops serving a removed CRD's kind: its objects go (DELETED events)
    /// and its watches end.
    fn unserve_crd(&mut self, crd: &Value) {
        let Ok(spec) = kinds::parse_crd(crd) else {
            return;
        };
        let tk = (spec.group, spec.plural);
        let keys: Vec<ObjKey> = self
            .objects
            .get(&tk)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        for key in keys {
            if let Some(obj) = self.lookup(&tk, &key) {
                self.remove(&tk, key, &obj);
            }
        }
        self.types.remove(&tk);
        self.objects.remove(&tk);
        self.watchers.retain(|w| w.selection.tk != tk);
    }
}

impl Store {
    /// A store with the built-in kinds and the namespaces `default`,
    /// `kube-system` and `kube-public`.
    pub fn new(config: StoreConfig) -> Arc<Store> {
        let mut state = State {
            config,
            rv: 0,
            types: BTreeMap::new(),
            builtin: HashSet::new(),
            objects: HashMap::new(),
            uids: HashMap::new(),
            dependents: HashMap::new(),
            history: VecDeque::new(),
            compacted: 0,
            snapshots: VecDeque::new(),
            watchers: Vec::new(),
            last_cluster_ip: 0,
        };
        for rt in kinds::builtin_types() {
            state.builtin.insert(rt.key());
            state.objects.entry(rt.storage_key()).or_default();
            state
                .types
                .insert(rt.key(), TypeInfo { versions: vec![rt] });
        }
        let ns = namespace_type();
        for name in ["default", "kube-system", "kube-public"] {
            state
                .create(&ns, None, json!({"metadata": {"name": name}}), None)
                .expect("initial namespaces");
        }
        Arc::new(Store {
            shared: Arc::new(Mutex::new(state)),
        })
    }

    /// A scratch copy of the store's objects and types, for a `dryRun`
    /// request: the write runs there exactly as it would here (defaults,
    /// validation, garbage collection, a CRD served), and nothing of it
    /// reaches this store or its watchers. Copies the indexes (uids,
    /// dependents); the objects themselves are shared.
    pub fn dry_run(&self) -> Store {
        let state = self.shared.lock();
        let scratch = State {
            config: state.config.clone(),
            rv: state.rv,
            types: state.types.clone(),
            builtin: state.builtin.clone(),
            objects: state.objects.clone(),
            uids: state.uids.clone(),
            dependents: state.dependents.clone(),
            history: VecDeque::new(),
            compacted: state.rv,
            snapshots: VecDeque::new(),
            watchers: Vec::new(),
            last_cluster_ip: state.last_cluster_ip,
        };
        Store {
            shared: Arc::new(Mutex::new(scratch)),
        }
    }

    /// Every served type: the built-ins and each served version of each CRD.
    pub fn resource_types(&self) -> Vec<ResourceType> {
        let state = self.shared.lock();
        state
            .types
            .values()
            .flat_map(|t| t.versions.iter().cloned())
            .collect()
    }

    /// The served type for a URL's group, version and plural.
    pub fn resource_type(&self, group: &str, version: &str, plural: &str) -> Option<ResourceType> {
        let state = self.shared.lock();
        state
            .types
            .get(&(group.to_string(), plural.to_string()))?
            .versions
            .iter()
            .find(|v| v.version == version)
            .cloned()
    }

    /// The current (last written) resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.shared.lock().rv
    }
}
