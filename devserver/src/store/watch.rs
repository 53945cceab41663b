//! Watches: the watch options and events, the open `Watch` a client reads,
//! the history replayed to a watch from an old version, each watcher's
//! filter and event translation, bookmarks, compaction and dropping
//! watches.

use std::sync::Arc;

use parking_lot::Mutex;
use serde_json::{Value, json};
use tokio::sync::mpsc;

use super::list::{Selection, parse_rv};
use super::meta::namespace_of;
use super::{ApiError, ResourceType, State, Store, TypeKey, relabel};

/// Watch options, as strings straight from the query.
#[derive(Debug, Clone, Default)]
pub struct WatchParams {
    pub resource_version: Option<String>,
    pub label_selector: Option<String>,
    pub field_selector: Option<String>,
    /// `sendInitialEvents` (a watch list): `true` sends the current
    /// objects as ADDED, then a BOOKMARK marking their end, whatever the
    /// version; `false` sends none.
    pub send_initial_events: Option<bool>,
}

/// The type of a watch event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WatchEventKind {
    Added,
    Modified,
    Deleted,
    /// The object is a metav1 `Status`.
    Error,
    /// The end of a watch list's initial events: the object is a bookmark
    /// annotated `k8s.io/initial-events-end: "true"`.
    Bookmark,
}

impl WatchEventKind {
    /// The wire name: `ADDED`, `MODIFIED`, `DELETED`, `ERROR`, `BOOKMARK`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Added => "ADDED",
            Self::Modified => "MODIFIED",
            Self::Deleted => "DELETED",
            Self::Error => "ERROR",
            Self::Bookmark => "BOOKMARK",
        }
    }
}

/// One watch event.
#[derive(Debug, Clone)]
pub struct WatchEvent {
    pub kind: WatchEventKind,
    pub object: Arc<Value>,
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

/// A whole BOOKMARK event on the wire for `rt` at `resource_version`.
pub fn bookmark_event(rt: &ResourceType, resource_version: u64) -> Value {
    json!({"type": "BOOKMARK", "object": bookmark_object(rt, resource_version)})
}

pub(super) struct HistEvent {
    pub(super) rv: u64,
    pub(super) tk: TypeKey,
    pub(super) kind: WatchEventKind,
    pub(super) object: Arc<Value>,
    pub(super) prev: Option<Arc<Value>>,
}

pub(super) struct Watcher {
    /// What it watches; its `rt` is the version requested by the client,
    /// for relabelling CRD objects.
    pub(super) selection: Selection,
    /// Only events after this version are sent.
    pub(super) after: u64,
    pub(super) tx: mpsc::UnboundedSender<WatchEvent>,
}

impl Watcher {
    fn matches(&self, obj: &Value) -> bool {
        if let Some(ns) = &self.selection.namespace
            && namespace_of(obj) != ns
        {
            return false;
        }
        self.selection.selects(obj)
    }

    /// The event this watcher sees for a change, with the filtered-watch
    /// transitions: starts matching → ADDED; stops matching → DELETED of the
    /// object as it last matched, at the change's resourceVersion (as
    /// kube-apiserver's watch cache sends it).
    pub(super) fn translate(
        &self,
        kind: WatchEventKind,
        obj: &Arc<Value>,
        prev: Option<&Arc<Value>>,
    ) -> Option<WatchEvent> {
        let (kind, object) = match (kind, prev) {
            (WatchEventKind::Modified, Some(prev)) if self.matches(prev) => {
                if self.matches(obj) {
                    (WatchEventKind::Modified, relabel(obj, &self.selection.rt))
                } else {
                    (
                        WatchEventKind::Deleted,
                        last_match(prev, obj, &self.selection.rt),
                    )
                }
            }
            (WatchEventKind::Modified, _) => {
                if !self.matches(obj) {
                    return None;
                }
                (WatchEventKind::Added, relabel(obj, &self.selection.rt))
            }
            (kind, _) => {
                if !self.matches(obj) {
                    return None;
                }
                (kind, relabel(obj, &self.selection.rt))
            }
        };
        Some(WatchEvent { kind, object })
    }
}

/// `prev`, the object as a watcher last saw it match, carrying the
/// resourceVersion of `now`, the change that made it stop matching.
fn last_match(prev: &Arc<Value>, now: &Value, rt: &ResourceType) -> Arc<Value> {
    let mut object = (**prev).clone();
    if let Some(version) = now.pointer("/metadata/resourceVersion") {
        object["metadata"]["resourceVersion"] = version.clone();
    }
    relabel(&Arc::new(object), rt)
}

impl Store {
    /// Opens a watch; see the module doc for the replay rules.
    pub fn watch(
        &self,
        rt: &ResourceType,
        namespace: Option<&str>,
        params: &WatchParams,
    ) -> Result<Watch, ApiError> {
        let mut state = self.shared.lock();
        let selection = Selection::new(
            &state,
            rt,
            namespace,
            params.label_selector.as_deref(),
            params.field_selector.as_deref(),
        )?;
        let rt = selection.rt.clone();
        let tk = selection.tk.clone();
        let from = match params.resource_version.as_deref() {
            None | Some("") | Some("0") => None,
            Some(s) => Some(parse_rv(s)?),
        };
        // A watch list starts from the current state, which is at least as
        // new as any version asked for; without initial events a watch from
        // no version starts at the current one.
        let from = match params.send_initial_events {
            Some(true) => None,
            Some(false) => from.or(Some(state.rv)),
            None => from,
        };
        let (tx, rx) = mpsc::unbounded_channel();
        let watcher = Watcher {
            selection,
            after: 0,
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
                if params.send_initial_events == Some(true) {
                    let mut end = bookmark_object(&rt, state.rv);
                    end["metadata"]["annotations"] = json!({"k8s.io/initial-events-end": "true"});
                    let _ = watcher.tx.send(WatchEvent {
                        kind: WatchEventKind::Bookmark,
                        object: Arc::new(end),
                    });
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
