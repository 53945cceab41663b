//! The dev API server's storage engine: an in-memory, schema-free store
//! with Kubernetes API semantics (resourceVersions, list paging over
//! consistent snapshots, watch with history replay, optimistic concurrency,
//! generation, status and scale subresources, merge / JSON / strategic merge
//! patch, simplified server-side apply, finalizers, garbage collection,
//! namespace deletion and CRDs). A development and test tool, not a
//! production API server.
//!
//! Objects are `serde_json::Value`s keyed per resource type by (namespace,
//! name). One mutex guards all state; watch events are sent to every
//! watcher's unbounded channel under that lock, so each watcher sees the
//! commit order.
//!
//! # What differs from a real API server
//! - No schemas, defaulting or validation beyond names, namespaces,
//!   apiVersion/kind and CRD essentials. Status in a create body is kept for
//!   every kind (the real server drops it for some kinds).
//! - Core/v1 and events.k8s.io/v1 events are stored separately (the real
//!   server converts between them). The versions of a CRD share storage and
//!   objects are only relabelled with the requested apiVersion (no
//!   conversion).
//! - Strategic merge patch uses a fixed table of merge keys for the built-in
//!   kinds (see [`patch::merge_key`]); for CRDs it is a merge patch with the
//!   directives removed (the real server refuses it with 415).
//! - Server-side apply is a merge patch (lists replaced, `null` deletes)
//!   that records the manager in `metadata.managedFields`; there is no
//!   field ownership, so no conflicts are ever reported, `force` is accepted
//!   and ignored, and fields a manager stops applying are not removed.
//! - Deletion: Foreground propagation is treated as Background; Orphan
//!   removes the owner's references from its dependents at once (no
//!   `orphan` finalizer). Garbage collection runs synchronously when an
//!   owner is removed: a dependent is deleted when none of its
//!   ownerReferences' uids exists any more. Objects created with references
//!   to uids that never existed are not collected. There is no grace period
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
//! - No admission, no defaulting of Deployments/Services, no clusterIP,
//!   no ServiceAccount tokens; a Secret's `stringData` is folded into `data`.
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

mod error;
pub mod kinds;
pub mod patch;
pub mod selector;
#[cfg(test)]
mod tests;

use std::collections::{BTreeMap, HashMap, HashSet, VecDeque};
use std::ops::Bound;
use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, URL_SAFE_NO_PAD};
use parking_lot::Mutex;
use recon_api_semantics::object::{equal_but_resource_version, keep_server_metadata, spec_changed};
use serde_json::{Map, Value, json};
use tokio::sync::mpsc;

pub use error::ApiError;
use selector::{FieldSelector, labels_match};

use recon_label_selector::Selector as LabelSelector;

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
    pub list_kind: String,
    pub short_names: Vec<String>,
    pub verbs: Vec<String>,
}

impl ResourceType {
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

/// List options, as strings straight from the query.
#[derive(Debug, Clone, Default)]
pub struct ListParams {
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    pub limit: Option<u64>,
    pub continue_token: Option<String>,
    pub resource_version: Option<String>,
    pub resource_version_match: Option<String>,
}

/// One page of a list.
#[derive(Debug, Clone)]
pub struct ListResult {
    pub items: Vec<Arc<Value>>,
    /// The list's resourceVersion (the snapshot's).
    pub resource_version: u64,
    pub continue_token: Option<String>,
    /// Items left after this page (only without selectors, as the real server).
    pub remaining_item_count: Option<u64>,
}

/// Watch options, as strings straight from the query.
#[derive(Debug, Clone, Default)]
pub struct WatchParams {
    pub resource_version: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEventKind {
    Added,
    Modified,
    Deleted,
    /// The object is a metav1 `Status`.
    Error,
}

impl WatchEventKind {
    /// The wire name: `ADDED`, `MODIFIED`, `DELETED`, `ERROR`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Error => "ERROR",
        }
    }
}

/// One watch event.
#[derive(Debug, Clone)]
pub struct WatchEvent {
    pub kind: WatchEventKind,
    pub object: Arc<Value>,
}

/// Merge, JSON, strategic merge or server-side apply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PatchKind {
    Merge,
    Json,
    StrategicMerge,
    Apply { field_manager: String, force: bool },
}

/// A patch request.
#[derive(Debug, Clone)]
pub struct Patch {
    pub kind: PatchKind,
    pub body: Value,
}

pub use recon_api_semantics::writes::{DeleteOptions, PropagationPolicy};

/// An open watch: events in commit order; `None` once the store closed it
/// (`drop_watches`, a 410, or its CRD was deleted).
pub struct Watch {
    rx: mpsc::UnboundedReceiver<WatchEvent>,
    shared: Arc<Mutex<State>>,
}

impl Watch {
    /// The next event, or `None` when the watch ended.
    pub async fn next(&mut self) -> Option<WatchEvent> {
        self.rx.recv().await
    }

    /// The next event if one is already queued.
    pub fn try_next(&mut self) -> Option<WatchEvent> {
        self.rx.try_recv().ok()
    }

    /// The resourceVersion a BOOKMARK may carry now: the store's current
    /// version when every event up to it has been taken from this watch,
    /// else `None` (drain the events first).
    pub fn bookmark(&self) -> Option<u64> {
        let state = self.shared.lock();
        if self.rx.is_empty() {
            Some(state.rv)
        } else {
            None
        }
    }
}

/// A BOOKMARK event's object for `rt` at `resource_version`.
pub fn bookmark_object(rt: &ResourceType, resource_version: u64) -> Value {
    json!({
        "kind": rt.kind,
        "apiVersion": rt.api_version(),
        "metadata": {"resourceVersion": resource_version.to_string()},
    })
}

/// The continue message of the real server's 410.
pub const CONTINUE_EXPIRED_MESSAGE: &str = "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retry with the inconsistent list.";

type TypeKey = (String, String);
type ObjKey = (String, String);
type Objects = BTreeMap<ObjKey, Arc<Value>>;

struct TypeInfo {
    /// Served versions; the first is the storage version for built-ins.
    versions: Vec<ResourceType>,
}

struct HistEvent {
    rv: u64,
    tk: TypeKey,
    kind: WatchEventKind,
    object: Arc<Value>,
    prev: Option<Arc<Value>>,
}

struct Watcher {
    tk: TypeKey,
    namespace: Option<String>,
    labels: LabelSelector,
    fields: FieldSelector,
    /// Only events after this version are sent.
    after: u64,
    /// The version requested by the client, for relabelling CRD objects.
    rt: ResourceType,
    tx: mpsc::UnboundedSender<WatchEvent>,
}

impl Watcher {
    fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.namespace
            && namespace_of(obj) != ns
        {
            return false;
        }
        labels_match(&self.labels, obj) && self.fields.matches(obj)
    }

    /// The event this watcher sees for a change, with the filtered-watch
    /// transitions (stops matching → DELETED, starts matching → ADDED).
    fn translate(
        &self,
        kind: WatchEventKind,
        obj: &Arc<Value>,
        prev: Option<&Arc<Value>>,
    ) -> Option<WatchEvent> {
        let kind = match kind {
            WatchEventKind::Modified => {
                let was = prev.is_some_and(|p| self.matches(p));
                match (was, self.matches(obj)) {
                    (true, true) => WatchEventKind::Modified,
                    (true, false) => WatchEventKind::Deleted,
                    (false, true) => WatchEventKind::Added,
                    (false, false) => return None,
                }
            }
            k => {
                if !self.matches(obj) {
                    return None;
                }
                k
            }
        };
        Some(WatchEvent {
            kind,
            object: relabel(obj, &self.rt),
        })
    }
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
}

/// The in-memory store. Cheap to share behind the `Arc` [`Store::new`] returns.
pub struct Store {
    shared: Arc<Mutex<State>>,
}

// ---------------------------------------------------------------- helpers

fn namespace_of(obj: &Value) -> &str {
    obj.pointer("/metadata/namespace")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn name_of(obj: &Value) -> &str {
    obj.pointer("/metadata/name")
        .and_then(Value::as_str)
        .unwrap_or("")
}

fn meta_str<'a>(obj: &'a Value, field: &str) -> Option<&'a str> {
    obj.get("metadata")
        .and_then(|m| m.get(field))
        .and_then(Value::as_str)
}

fn meta_mut(obj: &mut Value) -> &mut Map<String, Value> {
    if !obj.get("metadata").is_some_and(Value::is_object) {
        obj["metadata"] = json!({});
    }
    obj["metadata"]
        .as_object_mut()
        .expect("metadata is an object")
}

fn finalizers_of(obj: &Value) -> bool {
    obj.pointer("/metadata/finalizers")
        .and_then(Value::as_array)
        .is_some_and(|f| !f.is_empty())
}

fn owner_uids(obj: &Value) -> Vec<String> {
    obj.pointer("/metadata/ownerReferences")
        .and_then(Value::as_array)
        .map(|refs| {
            refs.iter()
                .filter_map(|r| r.get("uid").and_then(Value::as_str).map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// The object as the requested version shows it (CRD versions share storage).
fn relabel(obj: &Arc<Value>, rt: &ResourceType) -> Arc<Value> {
    if obj.get("kind").and_then(Value::as_str) == Some("Status") {
        return obj.clone();
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

/// RFC 3339 UTC, seconds precision.
pub fn now_rfc3339() -> String {
    let secs = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0);
    format_rfc3339(secs)
}

fn format_rfc3339(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    // Civil-from-days (Howard Hinnant).
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

/// A random version-4 UUID in its text form.
pub fn new_uid() -> String {
    let mut b = fastrand::u128(..).to_be_bytes();
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn random_suffix() -> String {
    const ALPHABET: &[u8] = b"bcdfghjklmnpqrstvwxz2456789";
    (0..5)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
}

/// A Secret's `stringData` is written into `data` (base64) and dropped, as
/// the real server does.
fn encode_string_data(secret: &mut Value) {
    let Some(Value::Object(string_data)) =
        secret.as_object_mut().and_then(|m| m.remove("stringData"))
    else {
        return;
    };
    if !secret.get("data").is_some_and(Value::is_object) {
        secret["data"] = json!({});
    }
    for (k, v) in string_data {
        let text = match v {
            Value::String(s) => s,
            other => other.to_string(),
        };
        secret["data"][k] = json!(STANDARD.encode(text));
    }
}

fn encode_continue(rv: u64, last: &ObjKey) -> String {
    // As the real server: raw URL-safe base64 of a small JSON document.
    URL_SAFE_NO_PAD
        .encode(json!({"v": "meta.k8s.io/v1", "rv": rv, "ns": last.0, "name": last.1}).to_string())
}

fn decode_continue(token: &str) -> Option<(u64, ObjKey)> {
    let v: Value = serde_json::from_slice(&URL_SAFE_NO_PAD.decode(token).ok()?).ok()?;
    Some((
        v.get("rv")?.as_u64()?,
        (
            v.get("ns")?.as_str()?.to_string(),
            v.get("name")?.as_str()?.to_string(),
        ),
    ))
}

fn parse_rv(s: &str) -> Result<u64, ApiError> {
    s.parse::<u64>()
        .map_err(|_| ApiError::bad_request(format!("invalid resource version {s:?}")))
}

fn parse_selectors(
    rt: &ResourceType,
    label: Option<&str>,
    field: Option<&str>,
) -> Result<(LabelSelector, FieldSelector), ApiError> {
    let labels = LabelSelector::parse(label.unwrap_or(""))
        .map_err(|e| ApiError::bad_request(format!("unable to parse requirement: {e}")))?;
    let fields = FieldSelector::parse_for(
        field.unwrap_or(""),
        selector::kind_fields(&rt.group, &rt.plural),
    )
    .map_err(|e| ApiError::bad_request(format!("invalid field selector: {e}")))?;
    Ok((labels, fields))
}

fn invalid_list_options(why: &str) -> ApiError {
    ApiError::new(
        422,
        "Invalid",
        format!("ListOptions.meta.k8s.io \"\" is invalid: {why}"),
    )
}

/// The real server's checks of resourceVersion / resourceVersionMatch /
/// continue combinations.
fn validate_list_versions(params: &ListParams, has_continue: bool) -> Result<(), ApiError> {
    let rv = params.resource_version.as_deref().unwrap_or("");
    let rv_match = params.resource_version_match.as_deref().unwrap_or("");
    if has_continue && !rv_match.is_empty() {
        return Err(invalid_list_options(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden when continue is provided",
        ));
    }
    if has_continue && !rv.is_empty() && rv != "0" {
        return Err(ApiError::bad_request(
            "specifying resource version is not allowed when using continue",
        ));
    }
    match rv_match {
        "" => Ok(()),
        _ if rv.is_empty() => Err(invalid_list_options(
            "resourceVersionMatch: Forbidden: resourceVersionMatch is forbidden unless resourceVersion is provided",
        )),
        "Exact" if rv == "0" => Err(invalid_list_options(
            "resourceVersionMatch: Forbidden: resourceVersionMatch \"exact\" is forbidden for resourceVersion \"0\"",
        )),
        "Exact" | "NotOlderThan" => Ok(()),
        other => Err(invalid_list_options(&format!(
            "resourceVersionMatch: Unsupported value: \"{other}\": supported values: \"Exact\", \"NotOlderThan\", \"\""
        ))),
    }
}

fn namespace_type() -> ResourceType {
    kinds::builtin_types()
        .into_iter()
        .find(|t| t.plural == "namespaces")
        .expect("namespaces is built in")
}

// ---------------------------------------------------------------- state

impl State {
    /// The served version of `rt` (the caller's copy may be stale).
    fn served(&self, rt: &ResourceType) -> Result<ResourceType, ApiError> {
        self.types
            .get(&rt.key())
            .and_then(|t| t.versions.iter().find(|v| v.version == rt.version))
            .cloned()
            .ok_or_else(ApiError::resource_not_served)
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
            if w.tk != *tk || rv <= w.after {
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
        self.watchers.retain(|w| w.tk != tk);
    }

    // ------------------------------------------------------------ deletion

    /// Removes an object for good, then collects what depended on it.
    fn remove(&mut self, tk: &TypeKey, key: ObjKey, obj: &Value) -> Arc<Value> {
        let removed = self.commit(tk, key.clone(), obj.clone(), WatchEventKind::Deleted);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.unserve_crd(obj);
        }
        if let Some(uid) = meta_str(obj, "uid") {
            self.collect_dependents(uid);
        }
        // A terminating namespace goes once its last object is gone.
        if !key.0.is_empty() {
            let ns = key.0.clone();
            if let Some(nsobj) = self.namespace_obj(&ns)
                && nsobj.pointer("/metadata/deletionTimestamp").is_some()
            {
                self.finish_namespace(&ns);
            }
        }
        removed
    }

    /// Background garbage collection: dependents none of whose owners exist.
    fn collect_dependents(&mut self, owner_uid: &str) {
        let Some(deps) = self.dependents.get(owner_uid).cloned() else {
            return;
        };
        let mut deps: Vec<_> = deps.into_iter().collect();
        deps.sort();
        for (tk, key) in deps {
            let Some(obj) = self.lookup(&tk, &key) else {
                continue;
            };
            let orphaned = owner_uids(&obj).iter().all(|u| !self.uids.contains_key(u));
            if orphaned {
                self.delete_object(&tk, key, obj, PropagationPolicy::Background);
            }
        }
    }

    /// Deletes a stored object: finalizers delay it, namespaces terminate.
    fn delete_object(
        &mut self,
        tk: &TypeKey,
        key: ObjKey,
        obj: Arc<Value>,
        policy: PropagationPolicy,
    ) -> Arc<Value> {
        if policy == PropagationPolicy::Orphan
            && let Some(uid) = meta_str(&obj, "uid")
        {
            self.orphan_dependents(uid);
        }
        if tk.0.is_empty() && tk.1 == "namespaces" {
            return self.delete_namespace(&key.1, obj);
        }
        if finalizers_of(&obj) {
            if obj.pointer("/metadata/deletionTimestamp").is_some() {
                return obj;
            }
            let mut v = (*obj).clone();
            let m = meta_mut(&mut v);
            m.insert("deletionTimestamp".into(), json!(now_rfc3339()));
            m.insert("deletionGracePeriodSeconds".into(), json!(0));
            return self.commit(tk, key, v, WatchEventKind::Modified);
        }
        self.remove(tk, key, &obj)
    }

    fn orphan_dependents(&mut self, owner_uid: &str) {
        let Some(deps) = self.dependents.get(owner_uid).cloned() else {
            return;
        };
        let mut deps: Vec<_> = deps.into_iter().collect();
        deps.sort();
        for (tk, key) in deps {
            let Some(obj) = self.lookup(&tk, &key) else {
                continue;
            };
            let mut v = (*obj).clone();
            if let Some(refs) = v
                .pointer_mut("/metadata/ownerReferences")
                .and_then(Value::as_array_mut)
            {
                refs.retain(|r| r.get("uid").and_then(Value::as_str) != Some(owner_uid));
                if refs.is_empty() {
                    meta_mut(&mut v).remove("ownerReferences");
                }
            }
            self.commit(&tk, key, v, WatchEventKind::Modified);
        }
    }

    fn delete_namespace(&mut self, name: &str, obj: Arc<Value>) -> Arc<Value> {
        let nstk: TypeKey = (String::new(), "namespaces".into());
        let key: ObjKey = (String::new(), name.to_string());
        if obj.pointer("/metadata/deletionTimestamp").is_none() {
            let mut v = (*obj).clone();
            meta_mut(&mut v).insert("deletionTimestamp".into(), json!(now_rfc3339()));
            v["status"] = json!({"phase": "Terminating"});
            self.commit(&nstk, key.clone(), v, WatchEventKind::Modified);
        }
        let namespaced: Vec<TypeKey> = self
            .types
            .iter()
            .filter(|(_, t)| t.versions.first().is_some_and(|v| v.namespaced))
            .map(|(k, _)| k.clone())
            .collect();
        for tk in namespaced {
            let keys: Vec<ObjKey> = self
                .objects
                .get(&tk)
                .map(|m| {
                    m.range((name.to_string(), String::new())..)
                        .take_while(|(k, _)| k.0 == name)
                        .map(|(k, _)| k.clone())
                        .collect()
                })
                .unwrap_or_default();
            for k in keys {
                if let Some(o) = self.lookup(&tk, &k) {
                    self.delete_object(&tk, k, o, PropagationPolicy::Background);
                }
            }
        }
        self.finish_namespace(name);
        self.namespace_obj(name)
            .or_else(|| {
                self.history
                    .iter()
                    .rev()
                    .find(|h| h.tk == nstk && name_of(&h.object) == name)
                    .map(|h| h.object.clone())
            })
            .unwrap_or(obj)
    }

    /// Removes a terminating namespace once nothing is left in it.
    fn finish_namespace(&mut self, ns: &str) {
        let empty = self.objects.iter().all(|(_, m)| {
            m.range((ns.to_string(), String::new())..)
                .next()
                .is_none_or(|(k, _)| k.0 != ns)
        });
        if !empty {
            return;
        }
        let nstk: TypeKey = (String::new(), "namespaces".into());
        let key: ObjKey = (String::new(), ns.to_string());
        if let Some(obj) = self.lookup(&nstk, &key)
            && obj.pointer("/metadata/deletionTimestamp").is_some()
            && !finalizers_of(&obj)
        {
            self.remove(&nstk, key, &obj);
        }
    }

    // ------------------------------------------------------------ writes

    fn check_type_fields(rt: &ResourceType, body: &mut Value) -> Result<(), ApiError> {
        if !body.is_object() {
            return Err(ApiError::bad_request(
                "the body of the request must be a JSON object",
            ));
        }
        let api_version = rt.api_version();
        match body.get("apiVersion").and_then(Value::as_str) {
            None | Some("") => body["apiVersion"] = json!(api_version),
            Some(v) if v == api_version => {}
            Some(v) => {
                return Err(ApiError::bad_request(format!(
                    "the API version in the data ({v}) does not match the expected API version ({api_version})"
                )));
            }
        }
        match body.get("kind").and_then(Value::as_str) {
            None | Some("") => body["kind"] = json!(rt.kind),
            Some(k) if k == rt.kind => {}
            Some(k) => {
                return Err(ApiError::bad_request(format!(
                    "the kind in the data ({k}) does not match the expected kind ({})",
                    rt.kind
                )));
            }
        }
        Ok(())
    }

    fn create(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        mut body: Value,
        managed: Option<Value>,
    ) -> Result<Arc<Value>, ApiError> {
        let rt = self.served(rt)?;
        Self::check_type_fields(&rt, &mut body)?;
        let tk = rt.key();
        let meta = meta_mut(&mut body);
        // Namespace.
        let ns = if rt.namespaced {
            let body_ns = meta.get("namespace").and_then(Value::as_str).unwrap_or("");
            let ns = match namespace {
                Some(ns) if !ns.is_empty() => {
                    if !body_ns.is_empty() && body_ns != ns {
                        return Err(ApiError::bad_request(
                            "the namespace of the provided object does not match the namespace sent on the request",
                        ));
                    }
                    ns.to_string()
                }
                _ if !body_ns.is_empty() => body_ns.to_string(),
                _ => {
                    return Err(ApiError::bad_request(
                        "a namespace is required for namespaced resources",
                    ));
                }
            };
            meta.insert("namespace".into(), json!(ns));
            ns
        } else {
            meta.remove("namespace");
            String::new()
        };
        // Name.
        let name = match meta.get("name").and_then(Value::as_str) {
            Some(n) if !n.is_empty() => n.to_string(),
            _ => match meta.get("generateName").and_then(Value::as_str) {
                Some(prefix) if !prefix.is_empty() => {
                    let prefix = prefix.to_string();
                    loop {
                        let candidate = format!("{prefix}{}", random_suffix());
                        if self.lookup(&tk, &(ns.clone(), candidate.clone())).is_none() {
                            break candidate;
                        }
                    }
                }
                _ => {
                    return Err(ApiError::invalid(
                        &rt,
                        "",
                        "metadata.name: Required value: name or generateName is required",
                    ));
                }
            },
        };
        if name.contains('/') || name == "." || name == ".." {
            return Err(ApiError::invalid(
                &rt,
                &name,
                &format!("metadata.name: Invalid value: {name:?}: may not contain '/'"),
            ));
        }
        let meta = meta_mut(&mut body);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            match self.namespace_obj(&ns) {
                None => return Err(ApiError::not_found(&namespace_type(), &ns)),
                Some(n) if n.pointer("/metadata/deletionTimestamp").is_some() => {
                    return Err(ApiError::forbidden(
                        &rt,
                        &name,
                        &format!(
                            "unable to create new content in namespace {ns} because it is being terminated"
                        ),
                    ));
                }
                Some(_) => {}
            }
        }
        let key = (ns, name.clone());
        if self.lookup(&tk, &key).is_some() {
            return Err(ApiError::already_exists(&rt, &name));
        }
        let meta = meta_mut(&mut body);
        meta.remove("resourceVersion");
        meta.remove("deletionTimestamp");
        meta.remove("deletionGracePeriodSeconds");
        meta.remove("selfLink");
        meta.insert("uid".into(), json!(new_uid()));
        meta.insert("creationTimestamp".into(), json!(now_rfc3339()));
        meta.insert("generation".into(), json!(1));
        if let Some(entry) = managed {
            meta.insert("managedFields".into(), json!([entry]));
        }
        if tk.0.is_empty() && tk.1 == "namespaces" {
            body["status"] = json!({"phase": "Active"});
        }
        if kinds::is_crd_type(&tk.0, &tk.1) {
            let spec = kinds::parse_crd(&body).map_err(|e| ApiError::invalid(&rt, &name, &e))?;
            let now = now_rfc3339();
            let condition = |t: &str, reason: &str, message: &str| json!({"type": t, "status": "True", "lastTransitionTime": now, "reason": reason, "message": message});
            body["status"] = json!({
                "conditions": [
                    condition("NamesAccepted", "NoConflicts", "no conflicts found"),
                    condition("Established", "InitialNamesAccepted", "the initial names have been accepted"),
                ],
                "acceptedNames": {
                    "plural": spec.plural, "singular": spec.singular, "kind": spec.kind,
                    "listKind": spec.list_kind, "shortNames": spec.short_names,
                },
                "storedVersions": body.pointer("/spec/versions").and_then(Value::as_array)
                    .map(|vs| vs.iter().filter(|v| v.get("storage").and_then(Value::as_bool) == Some(true))
                        .filter_map(|v| v.get("name").cloned()).collect::<Vec<_>>())
                    .unwrap_or_default(),
            });
        }
        if tk.0.is_empty() && tk.1 == "secrets" {
            encode_string_data(&mut body);
        }
        let stored = self.commit(&tk, key, body, WatchEventKind::Added);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.serve_crd(&stored);
        }
        Ok(relabel(&stored, &rt))
    }

    /// Replaces an object (PUT, patches and subresources all end here).
    fn update(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        mut body: Value,
        subresource: Option<Subresource>,
    ) -> Result<Arc<Value>, ApiError> {
        let rt = self.served(rt)?;
        if subresource == Some(Subresource::Status) && !rt.status_subresource {
            return Err(ApiError::resource_not_served());
        }
        let tk = rt.key();
        let key = Self::obj_key(&rt, namespace, name);
        let existing = self
            .lookup(&tk, &key)
            .ok_or_else(|| ApiError::not_found(&rt, name))?;
        Self::check_type_fields(&rt, &mut body)?;
        let body_name = meta_str(&body, "name").unwrap_or("");
        if !body_name.is_empty() && body_name != name {
            return Err(ApiError::bad_request(format!(
                "the name of the object ({body_name}) does not match the name on the URL ({name})"
            )));
        }
        if rt.namespaced {
            let body_ns = meta_str(&body, "namespace").unwrap_or("");
            if !body_ns.is_empty() && body_ns != key.0 {
                return Err(ApiError::bad_request(
                    "the namespace of the provided object does not match the namespace sent on the request",
                ));
            }
        }
        let current_rv = meta_str(&existing, "resourceVersion").unwrap_or("");
        match meta_str(&body, "resourceVersion") {
            Some(rv) if !rv.is_empty() && rv != current_rv => {
                return Err(ApiError::conflict(&rt, name));
            }
            _ => {}
        }
        let mut new = match subresource {
            Some(Subresource::Status) => {
                let mut v = (*existing).clone();
                match body.get("status") {
                    Some(s) => v["status"] = s.clone(),
                    None => {
                        if let Some(m) = v.as_object_mut() {
                            m.remove("status");
                        }
                    }
                }
                v
            }
            _ => {
                if rt.status_subresource {
                    match existing.get("status") {
                        Some(s) => body["status"] = s.clone(),
                        None => {
                            if let Some(m) = body.as_object_mut() {
                                m.remove("status");
                            }
                        }
                    }
                }
                body
            }
        };
        // System metadata is the server's.
        let old_meta = existing.get("metadata").cloned().unwrap_or_default();
        let meta = meta_mut(&mut new);
        meta.insert("name".into(), json!(name));
        if rt.namespaced {
            meta.insert("namespace".into(), json!(key.0));
        } else {
            meta.remove("namespace");
        }
        keep_server_metadata(old_meta.as_object().unwrap_or(&Map::new()), meta);
        meta.remove("selfLink");
        if !meta.contains_key("managedFields")
            && let Some(mf) = old_meta.get("managedFields")
        {
            meta.insert("managedFields".into(), mf.clone());
        }
        if spec_changed(&existing, &new) {
            let g = old_meta
                .get("generation")
                .and_then(Value::as_i64)
                .unwrap_or(0);
            meta_mut(&mut new).insert("generation".into(), json!(g + 1));
        }
        if kinds::is_crd_type(&tk.0, &tk.1) {
            kinds::parse_crd(&new).map_err(|e| ApiError::invalid(&rt, name, &e))?;
        }
        if equal_but_resource_version(&new, &existing) {
            return Ok(relabel(&existing, &rt));
        }
        let is_namespace = tk.0.is_empty() && tk.1 == "namespaces";
        if new.pointer("/metadata/deletionTimestamp").is_some() && !finalizers_of(&new) {
            if is_namespace {
                // A namespace goes only once it is empty as well.
                let name = key.1.clone();
                let stored = self.commit(&tk, key, new, WatchEventKind::Modified);
                self.finish_namespace(&name);
                return Ok(relabel(&stored, &rt));
            }
            let removed = self.remove(&tk, key, &new);
            return Ok(relabel(&removed, &rt));
        }
        if tk.0.is_empty() && tk.1 == "secrets" {
            encode_string_data(&mut new);
        }
        let stored = self.commit(&tk, key, new, WatchEventKind::Modified);
        if kinds::is_crd_type(&tk.0, &tk.1) {
            self.serve_crd(&stored);
        }
        Ok(relabel(&stored, &rt))
    }

    fn scale_of(rt: &ResourceType, obj: &Value) -> Value {
        let selector = obj
            .pointer("/spec/selector/matchLabels")
            .and_then(Value::as_object)
            .map(|m| {
                m.iter()
                    .map(|(k, v)| format!("{k}={}", v.as_str().unwrap_or("")))
                    .collect::<Vec<_>>()
                    .join(",")
            });
        let mut scale = json!({
            "kind": "Scale",
            "apiVersion": "autoscaling/v1",
            "metadata": {
                "name": name_of(obj),
                "uid": obj.pointer("/metadata/uid").cloned().unwrap_or(Value::Null),
                "resourceVersion": obj.pointer("/metadata/resourceVersion").cloned().unwrap_or(Value::Null),
                "creationTimestamp": obj.pointer("/metadata/creationTimestamp").cloned().unwrap_or(Value::Null),
            },
            "spec": {"replicas": obj.pointer("/spec/replicas").and_then(Value::as_i64).unwrap_or(1)},
            "status": {"replicas": obj.pointer("/status/replicas").and_then(Value::as_i64).unwrap_or(0)},
        });
        if rt.namespaced {
            scale["metadata"]["namespace"] = json!(namespace_of(obj));
        }
        if let Some(s) = selector {
            scale["status"]["selector"] = json!(s);
        }
        scale
    }

    fn update_scale(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        scale: &Value,
    ) -> Result<Value, ApiError> {
        let rt = self.served(rt)?;
        if !rt.scale_subresource {
            return Err(ApiError::resource_not_served());
        }
        let key = Self::obj_key(&rt, namespace, name);
        let existing = self
            .lookup(&rt.key(), &key)
            .ok_or_else(|| ApiError::not_found(&rt, name))?;
        let replicas = scale
            .pointer("/spec/replicas")
            .and_then(Value::as_i64)
            .ok_or_else(|| ApiError::invalid(&rt, name, "spec.replicas: Required value"))?;
        if replicas < 0 {
            return Err(ApiError::invalid(
                &rt,
                name,
                &format!(
                    "spec.replicas: Invalid value: {replicas}: must be greater than or equal to 0"
                ),
            ));
        }
        let mut new = (*existing).clone();
        if !new.get("spec").is_some_and(Value::is_object) {
            new["spec"] = json!({});
        }
        new["spec"]["replicas"] = json!(replicas);
        if let Some(rv) = meta_str(scale, "resourceVersion") {
            meta_mut(&mut new).insert("resourceVersion".into(), json!(rv));
        }
        let stored = self.update(&rt, namespace, name, new, None)?;
        Ok(Self::scale_of(&rt, &stored))
    }
}

// ---------------------------------------------------------------- public API

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
        };
        for rt in kinds::builtin_types() {
            state.builtin.insert(rt.key());
            state.objects.entry(rt.key()).or_default();
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

    /// One object.
    pub fn get(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let state = self.shared.lock();
        let rt = state.served(rt)?;
        state
            .lookup(&rt.key(), &State::obj_key(&rt, namespace, name))
            .map(|o| (*relabel(&o, &rt)).clone())
            .ok_or_else(|| ApiError::not_found(&rt, name))
    }

    /// The autoscaling/v1 `Scale` of a deployment, replica set, stateful set
    /// (or a CRD with a scale subresource).
    pub fn get_scale(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
    ) -> Result<Value, ApiError> {
        let state = self.shared.lock();
        let rt = state.served(rt)?;
        if !rt.scale_subresource {
            return Err(ApiError::resource_not_served());
        }
        let obj = state
            .lookup(&rt.key(), &State::obj_key(&rt, namespace, name))
            .ok_or_else(|| ApiError::not_found(&rt, name))?;
        Ok(State::scale_of(&rt, &obj))
    }

    /// Sets `spec.replicas` from a `Scale` (its resourceVersion, when set,
    /// must be current); returns the new `Scale`.
    pub fn update_scale(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        scale: Value,
    ) -> Result<Value, ApiError> {
        self.shared.lock().update_scale(rt, namespace, name, &scale)
    }

    /// A page of objects, sorted by (namespace, name).
    pub fn list(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &ListParams,
    ) -> Result<ListResult, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let tk = rt.key();
        let (labels, fields) = parse_selectors(
            &rt,
            params.label_selector.as_deref(),
            params.field_selector.as_deref(),
        )?;
        let ns_filter = namespace.filter(|n| rt.namespaced && !n.is_empty());
        let continue_token = params.continue_token.as_deref().filter(|t| !t.is_empty());
        validate_list_versions(params, continue_token.is_some())?;
        let (snap_rv, objects, start) = if let Some(token) = continue_token {
            let (rv, last) = decode_continue(token)
                .ok_or_else(|| ApiError::bad_request("continue key is not valid"))?;
            let snap = state
                .snapshots
                .iter()
                .find(|s| s.tk == tk && s.rv == rv)
                .filter(|_| rv >= state.compacted)
                .ok_or_else(|| ApiError::expired(CONTINUE_EXPIRED_MESSAGE))?;
            (rv, snap.objects.clone(), Some(last))
        } else {
            let current = state.rv;
            if let Some(s) = params.resource_version.as_deref().filter(|s| !s.is_empty()) {
                let n = parse_rv(s)?;
                if n > current {
                    return Err(ApiError::too_large_resource_version(n, current));
                }
                let exact = params.resource_version_match.as_deref() == Some("Exact");
                if exact && n != current {
                    return Err(ApiError::expired(
                        "The resourceVersion for the provided list is too old.",
                    ));
                }
            }
            let objects = state.objects.get(&tk).cloned().unwrap_or_default();
            (current, objects, None)
        };
        let limit = params.limit.filter(|l| *l > 0).map(|l| l as usize);
        let lower = match (&start, ns_filter) {
            (Some(last), _) => Bound::Excluded(last.clone()),
            (None, Some(ns)) => Bound::Included((ns.to_string(), String::new())),
            (None, None) => Bound::Unbounded,
        };
        let mut items = Vec::new();
        let mut last_key: Option<ObjKey> = None;
        let mut more = false;
        let mut iter = objects.range((lower, Bound::Unbounded));
        for (k, obj) in iter.by_ref() {
            if let Some(ns) = ns_filter
                && k.0 != ns
            {
                if k.0.as_str() > ns {
                    break;
                }
                continue;
            }
            if !labels_match(&labels, obj) || !fields.matches(obj) {
                continue;
            }
            if limit.is_some_and(|l| items.len() >= l) {
                more = true;
                break;
            }
            items.push(relabel(obj, &rt));
            last_key = Some(k.clone());
        }
        let mut result = ListResult {
            items,
            resource_version: snap_rv,
            continue_token: None,
            remaining_item_count: None,
        };
        if more && let Some(last) = last_key {
            if labels.is_empty() && fields.is_empty() {
                let remaining = objects
                    .range((Bound::Excluded(last.clone()), Bound::Unbounded))
                    .take_while(|(k, _)| ns_filter.is_none_or(|ns| k.0 == ns))
                    .count();
                result.remaining_item_count = Some(remaining as u64);
            }
            result.continue_token = Some(encode_continue(snap_rv, &last));
            state.keep_snapshot(&tk, snap_rv, &objects);
        }
        Ok(result)
    }

    /// Opens a watch; see the module doc for the replay rules.
    pub fn watch(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &WatchParams,
    ) -> Result<Watch, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let tk = rt.key();
        let (labels, fields) = parse_selectors(
            &rt,
            params.label_selector.as_deref(),
            params.field_selector.as_deref(),
        )?;
        let from = match params.resource_version.as_deref() {
            None | Some("") | Some("0") => None,
            Some(s) => Some(parse_rv(s)?),
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let watcher = Watcher {
            tk: tk.clone(),
            namespace: namespace
                .filter(|n| rt.namespaced && !n.is_empty())
                .map(str::to_string),
            labels,
            fields,
            after: 0,
            rt: rt.clone(),
            tx,
        };
        let watch = Watch {
            rx,
            shared: self.shared.clone(),
        };
        match from {
            None => {
                if let Some(objects) = state.objects.get(&tk) {
                    for obj in objects.values() {
                        if watcher.matches(obj) {
                            let _ = watcher.tx.send(WatchEvent {
                                kind: WatchEventKind::Added,
                                object: relabel(obj, &rt),
                            });
                        }
                    }
                }
            }
            Some(n) if n < state.compacted => {
                let err = ApiError::expired(format!(
                    "too old resource version: {n} ({})",
                    state.compacted
                ));
                let _ = watcher.tx.send(WatchEvent {
                    kind: WatchEventKind::Error,
                    object: Arc::new(err.to_status()),
                });
                return Ok(watch);
            }
            Some(n) => {
                let first = state.history.partition_point(|h| h.rv <= n);
                for h in state.history.range(first..) {
                    if h.tk != tk {
                        continue;
                    }
                    if let Some(ev) = watcher.translate(h.kind, &h.object, h.prev.as_ref()) {
                        let _ = watcher.tx.send(ev);
                    }
                }
            }
        }
        // Live events only from here on (or from a future version asked for).
        let mut watcher = watcher;
        watcher.after = from.unwrap_or(0).max(state.rv);
        state.watchers.retain(|w| !w.tx.is_closed());
        state.watchers.push(watcher);
        Ok(watch)
    }

    /// Creates an object (POST). `field_manager` records a managedFields
    /// entry with operation `Update`.
    pub fn create(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        body: Value,
        field_manager: Option<&str>,
    ) -> Result<Value, ApiError> {
        let managed = field_manager.map(|m| managed_entry(m, "Update", rt, &body));
        let stored = self.shared.lock().create(rt, namespace, body, managed)?;
        Ok((*stored).clone())
    }

    /// Replaces an object (PUT), or its status or scale.
    pub fn update(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        body: Value,
        subresource: Option<Subresource>,
    ) -> Result<Value, ApiError> {
        let mut state = self.shared.lock();
        if subresource == Some(Subresource::Scale) {
            return state.update_scale(rt, namespace, name, &body);
        }
        let stored = state.update(rt, namespace, name, body, subresource)?;
        Ok((*stored).clone())
    }

    /// Patches an object (PATCH), or its status or scale.
    pub fn patch(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        patch: Patch,
        subresource: Option<Subresource>,
    ) -> Result<Value, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let key = State::obj_key(&rt, namespace, name);
        let existing = state.lookup(&rt.key(), &key);
        let builtin =
            !kinds::is_crd_type(&rt.group, &rt.plural) && state.builtin.contains(&rt.key());
        if let PatchKind::Apply { field_manager, .. } = &patch.kind {
            if !patch.body.is_object() {
                return Err(ApiError::bad_request(
                    "the applied configuration must be a JSON object",
                ));
            }
            if field_manager.is_empty() {
                return Err(ApiError::new(
                    422,
                    "Invalid",
                    "PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is required for apply patch",
                ));
            }
            let entry = managed_entry(field_manager, "Apply", &rt, &patch.body);
            let Some(existing) = existing else {
                if subresource.is_some() {
                    return Err(ApiError::not_found(&rt, name));
                }
                let mut body = patch.body.clone();
                meta_mut(&mut body).insert("name".into(), json!(name));
                let stored = state.create(&rt, namespace, body, Some(entry))?;
                return Ok((*stored).clone());
            };
            let mut target = (*relabel(&existing, &rt)).clone();
            json_patch::merge(&mut target, &patch.body);
            set_managed(&mut target, field_manager, entry);
            return state.finish_patch(&rt, namespace, name, &existing, target, subresource);
        }
        let existing = existing.ok_or_else(|| ApiError::not_found(&rt, name))?;
        let base = if subresource == Some(Subresource::Scale) {
            if !rt.scale_subresource {
                return Err(ApiError::resource_not_served());
            }
            State::scale_of(&rt, &existing)
        } else {
            (*relabel(&existing, &rt)).clone()
        };
        let mut target = base;
        match &patch.kind {
            PatchKind::Merge => {
                if !patch.body.is_object() {
                    return Err(ApiError::bad_request(
                        "merge patch body must be a JSON object",
                    ));
                }
                json_patch::merge(&mut target, &patch.body);
            }
            PatchKind::StrategicMerge => {
                patch::strategic_merge(&mut target, &patch.body, builtin)
                    .map_err(ApiError::bad_request)?;
            }
            PatchKind::Json => {
                let ops: json_patch::Patch = serde_json::from_value(patch.body.clone())
                    .map_err(|e| ApiError::bad_request(format!("invalid JSON patch: {e}")))?;
                // A failed `test` (or any op that cannot apply) is 422 Invalid.
                json_patch::patch(&mut target, &ops).map_err(|e| {
                    ApiError::invalid(
                        &rt,
                        name,
                        &format!(
                            "the server rejected our request due to an error in our request: {e}"
                        ),
                    )
                })?;
            }
            PatchKind::Apply { .. } => unreachable!("handled above"),
        }
        if subresource == Some(Subresource::Scale) {
            return state.update_scale(&rt, namespace, name, &target);
        }
        state.finish_patch(&rt, namespace, name, &existing, target, subresource)
    }

    /// Deletes an object; returns the deleted object, or the object with
    /// `deletionTimestamp` set while finalizers remain.
    pub fn delete(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        options: &DeleteOptions,
    ) -> Result<Value, ApiError> {
        let mut state = self.shared.lock();
        let rt = state.served(rt)?;
        let tk = rt.key();
        let key = State::obj_key(&rt, namespace, name);
        let obj = state
            .lookup(&tk, &key)
            .ok_or_else(|| ApiError::not_found(&rt, name))?;
        if let Some(uid) = options.precondition_uid.as_deref() {
            let actual = meta_str(&obj, "uid").unwrap_or("");
            if uid != actual {
                return Err(ApiError::conflict_message(
                    &rt,
                    name,
                    &format!(
                        "Precondition failed: UID in precondition: {uid}, UID in object meta: {actual}"
                    ),
                ));
            }
        }
        if let Some(rv) = options.precondition_resource_version.as_deref() {
            let actual = meta_str(&obj, "resourceVersion").unwrap_or("");
            if rv != actual {
                return Err(ApiError::conflict_message(
                    &rt,
                    name,
                    &format!(
                        "Precondition failed: ResourceVersion in precondition: {rv}, ResourceVersion in object meta: {actual}"
                    ),
                ));
            }
        }
        let policy = options
            .propagation_policy
            .unwrap_or(PropagationPolicy::Background);
        let result = state.delete_object(&tk, key, obj, policy);
        Ok((*relabel(&result, &rt)).clone())
    }

    /// Forgets watch history and continue snapshots: every version before
    /// the current one now gets 410.
    pub fn compact(&self) {
        let mut state = self.shared.lock();
        state.compacted = state.rv;
        state.history.clear();
        state.snapshots.clear();
    }

    /// Closes every open watch.
    pub fn drop_watches(&self) {
        self.shared.lock().watchers.clear();
    }

    /// The number of open watches (for tests and metrics).
    pub fn watch_count(&self) -> usize {
        let mut state = self.shared.lock();
        state.watchers.retain(|w| !w.tx.is_closed());
        state.watchers.len()
    }
}

impl State {
    fn finish_patch(
        &mut self,
        rt: &ResourceType,
        namespace: Option<&str>,
        name: &str,
        existing: &Value,
        target: Value,
        subresource: Option<Subresource>,
    ) -> Result<Value, ApiError> {
        // A patch that sets a resourceVersion other than the current one
        // conflicts; otherwise the patch is unconditional.
        let mut target = target;
        if meta_str(&target, "resourceVersion") == meta_str(existing, "resourceVersion") {
            meta_mut(&mut target).remove("resourceVersion");
        }
        let stored = self.update(rt, namespace, name, target, subresource)?;
        Ok((*stored).clone())
    }
}

fn managed_entry(manager: &str, operation: &str, rt: &ResourceType, config: &Value) -> Value {
    json!({
        "manager": manager,
        "operation": operation,
        "apiVersion": rt.api_version(),
        "time": now_rfc3339(),
        "fieldsType": "FieldsV1",
        "fieldsV1": patch::fields_v1(config),
    })
}

/// Replaces the manager's Apply entry in `metadata.managedFields`.
fn set_managed(obj: &mut Value, manager: &str, entry: Value) {
    let meta = meta_mut(obj);
    let mut fields: Vec<Value> = meta
        .get("managedFields")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    let is_mine = |f: &Value| {
        f.get("manager").and_then(Value::as_str) == Some(manager)
            && f.get("operation").and_then(Value::as_str) == Some("Apply")
    };
    // Re-applying the same fields keeps the entry (and its time), so a
    // no-op apply writes nothing.
    let same = |f: &Value| {
        is_mine(f)
            && f.get("fieldsV1") == entry.get("fieldsV1")
            && f.get("apiVersion") == entry.get("apiVersion")
    };
    if fields.iter().any(same) {
        return;
    }
    fields.retain(|f| !is_mine(f));
    fields.push(entry);
    meta.insert("managedFields".into(), Value::Array(fields));
}

// ---------------------------------------------------------------- wire forms

/// Serializes a list page as the API server's `<Kind>List` without copying
/// the items: `{"kind", "apiVersion", "metadata": {"resourceVersion",
/// "continue"?, "remainingItemCount"?}, "items": [...]}`.
pub struct ListBody<'a> {
    pub rt: &'a ResourceType,
    pub result: &'a ListResult,
}

impl serde::Serialize for ListBody<'_> {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut meta = Map::new();
        meta.insert(
            "resourceVersion".into(),
            json!(self.result.resource_version.to_string()),
        );
        if let Some(c) = &self.result.continue_token {
            meta.insert("continue".into(), json!(c));
        }
        if let Some(n) = self.result.remaining_item_count {
            meta.insert("remainingItemCount".into(), json!(n));
        }
        let mut map = serializer.serialize_map(Some(4))?;
        map.serialize_entry("kind", &self.rt.list_kind)?;
        map.serialize_entry("apiVersion", &self.rt.api_version())?;
        map.serialize_entry("metadata", &meta)?;
        let items: Vec<&Value> = self.result.items.iter().map(|i| &**i).collect();
        map.serialize_entry("items", &items)?;
        map.end()
    }
}

/// A watch event on the wire: `{"type": "ADDED", "object": {...}}`.
impl serde::Serialize for WatchEvent {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        let mut map = serializer.serialize_map(Some(2))?;
        map.serialize_entry("type", self.kind.as_str())?;
        map.serialize_entry("object", &*self.object)?;
        map.end()
    }
}

/// A whole BOOKMARK event on the wire for `rt` at `resource_version`.
pub fn bookmark_event(rt: &ResourceType, resource_version: u64) -> Value {
    json!({"type": "BOOKMARK", "object": bookmark_object(rt, resource_version)})
}

impl Store {
    /// Deletes every object a list with `params` returns (DELETE on the
    /// collection), each as [`Store::delete`] would; returns what each
    /// delete returned.
    pub fn delete_collection(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &ListParams,
        options: &DeleteOptions,
    ) -> Result<Vec<Value>, ApiError> {
        let params = ListParams {
            limit: None,
            continue_token: None,
            ..params.clone()
        };
        let items = self.list(rt, namespace, &params)?.items;
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let ns = Some(namespace_of(&item)).filter(|n| !n.is_empty());
            match self.delete(rt, ns, name_of(&item), options) {
                Ok(v) => out.push(v),
                Err(e) if e.code == 404 => {}
                Err(e) => return Err(e),
            }
        }
        Ok(out)
    }
}
