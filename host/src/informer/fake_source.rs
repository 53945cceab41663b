//! An in-memory [`ListerWatcher`] for one kind, with API-server version
//! semantics and fault injection: client-go's `FakeControllerSource` for
//! tests, demos and benchmarks of the informer machinery.
//!
//! What it models: one resourceVersion counter bumped by every change; lists
//! at `""`, `"0"` or any version not newer than the current one return the
//! current state (a newer one is "too large"); `limit` / `continue` page over
//! a snapshot, and a continuation whose snapshot was compacted away is
//! expired; a watch from a version replays the retained history after it,
//! a watch from a compacted version gets a 410 `ERROR` event, a watch from
//! `""` / `"0"` starts with an `ADDED` per object. What it does not model:
//! selectors (recorded in [`SourceCall`], not applied) and server-side watch
//! timeouts (streams stay open until dropped or faulted).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use tokio::sync::{Notify, mpsc};

use super::lister_watcher::{
    ErrorKind, ListOptions, ListPage, ListerWatcher, LwError, WatchEvent, WatchOptions, WatchStream,
};
use crate::object::{Object, ObjectError};

/// A list or watch request the source received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SourceCall {
    /// A list request.
    List(ListOptions),
    /// A watch request.
    Watch(WatchOptions),
}

/// An in-memory source of one kind's objects.
#[derive(Default)]
pub struct FakeSource {
    state: Mutex<SourceState>,
    calls_changed: Notify,
}

#[derive(Default)]
struct SourceState {
    resource_version: u64,
    objects: BTreeMap<String, Object>,
    /// Changes after `compacted_at`, oldest first.
    history: VecDeque<(u64, Change)>,
    compacted_at: u64,
    /// Snapshots for continuation pages, by list version.
    snapshots: HashMap<u64, Arc<Vec<Object>>>,
    watchers: Vec<Watcher>,
    /// Scripted outcomes of the next list calls; `None` serves normally.
    list_outcomes: VecDeque<Option<LwError>>,
    watch_faults: VecDeque<LwError>,
    calls: Vec<SourceCall>,
}

#[derive(Clone)]
enum Change {
    Added(Object),
    Modified(Object),
    Deleted(Object),
}

impl Change {
    fn event(&self) -> WatchEvent {
        match self {
            Change::Added(object) => WatchEvent::Added(object.clone()),
            Change::Modified(object) => WatchEvent::Modified(object.clone()),
            Change::Deleted(object) => WatchEvent::Deleted(object.clone()),
        }
    }
}

struct Watcher {
    sender: mpsc::UnboundedSender<WatchEvent>,
    bookmarks: bool,
}

impl FakeSource {
    /// An empty source at resourceVersion 0.
    pub fn new() -> Arc<Self> {
        Arc::new(FakeSource::default())
    }

    /// Creates or replaces the object described by `object` (its
    /// `metadata.resourceVersion` is overwritten) and returns it as stored.
    pub fn apply(&self, object: Value) -> Result<Object, ObjectError> {
        let mut state = self.state.lock();
        let version = state.resource_version + 1;
        let stored = at_version(object, version)?;
        state.resource_version = version;
        let change = match state
            .objects
            .insert(stored.key().to_string(), stored.clone())
        {
            Some(_) => Change::Modified(stored.clone()),
            None => Change::Added(stored.clone()),
        };
        state.record(version, change);
        Ok(stored)
    }

    /// Deletes the object under `key`; returns its final state, stamped with
    /// the deletion's version as a server does, if it existed.
    pub fn delete(&self, key: &str) -> Option<Object> {
        let mut state = self.state.lock();
        let removed = state.objects.remove(key)?;
        state.resource_version += 1;
        let version = state.resource_version;
        let value = serde_json::from_str(&removed.json()).expect("stored objects are JSON");
        let last = at_version(value, version).expect("stored objects parse");
        state.record(version, Change::Deleted(last.clone()));
        Some(last)
    }

    /// The current objects, by key.
    pub fn objects(&self) -> BTreeMap<String, Object> {
        self.state.lock().objects.clone()
    }

    /// The current resourceVersion.
    pub fn resource_version(&self) -> u64 {
        self.state.lock().resource_version
    }

    /// Sends a `BOOKMARK` at the current version to watches that allow them.
    pub fn send_bookmark(&self) {
        let mut state = self.state.lock();
        let resource_version = state.resource_version.to_string();
        state.watchers.retain(|watcher| {
            !watcher.bookmarks
                || watcher
                    .sender
                    .send(WatchEvent::Bookmark {
                        resource_version: resource_version.clone(),
                    })
                    .is_ok()
        });
    }

    /// Closes every open watch, as a server restart or network drop would.
    pub fn drop_watches(&self) {
        self.state.lock().watchers.clear();
    }

    /// Ends every open watch with a 410 `ERROR` event.
    pub fn expire_watches(&self) {
        self.end_watches_with(LwError::expired("too old resource version (compacted)"));
    }

    /// Ends every open watch with an `ERROR` event carrying `error`.
    pub fn end_watches_with(&self, error: LwError) {
        let mut state = self.state.lock();
        for watcher in state.watchers.drain(..) {
            let _ = watcher.sender.send(WatchEvent::Error(error.clone()));
        }
    }

    /// Forgets all history and list snapshots: watches and continuations
    /// from older versions now get 410 Expired.
    pub fn compact(&self) {
        let mut state = self.state.lock();
        state.compacted_at = state.resource_version;
        state.history.clear();
        state.snapshots.clear();
    }

    /// The next unscripted list request fails with `error`.
    pub fn fail_next_list(&self, error: LwError) {
        self.state.lock().list_outcomes.push_back(Some(error));
    }

    /// Scripts the outcomes of the next list requests in order: `None`
    /// serves the request, `Some(error)` fails it.
    pub fn script_lists(&self, outcomes: impl IntoIterator<Item = Option<LwError>>) {
        self.state.lock().list_outcomes.extend(outcomes);
    }

    /// The next watch request fails with `error`.
    pub fn fail_next_watch(&self, error: LwError) {
        self.state.lock().watch_faults.push_back(error);
    }

    /// Every request received so far.
    pub fn calls(&self) -> Vec<SourceCall> {
        self.state.lock().calls.clone()
    }

    /// How many watches are open.
    pub fn open_watches(&self) -> usize {
        let mut state = self.state.lock();
        state.watchers.retain(|watcher| !watcher.sender.is_closed());
        state.watchers.len()
    }

    /// Waits until at least `count` requests have been received.
    pub async fn wait_for_calls(&self, count: usize) {
        loop {
            let changed = self.calls_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.state.lock().calls.len() >= count {
                return;
            }
            changed.await;
        }
    }

    fn record_call(&self, state: &mut SourceState, call: SourceCall) {
        state.calls.push(call);
        self.calls_changed.notify_waiters();
    }
}

impl SourceState {
    fn record(&mut self, version: u64, change: Change) {
        let event = change.event();
        self.watchers
            .retain(|watcher| watcher.sender.send(event.clone()).is_ok());
        self.history.push_back((version, change));
    }

    fn parse_version(&self, version: &str) -> Result<Option<u64>, LwError> {
        if version.is_empty() || version == "0" {
            return Ok(None);
        }
        let parsed: u64 = version
            .parse()
            .map_err(|_| LwError::other(format!("invalid resourceVersion {version:?}")))?;
        if parsed > self.resource_version {
            return Err(LwError::new(
                ErrorKind::TooLargeResourceVersion,
                format!(
                    "Too large resource version: {parsed}, current: {}",
                    self.resource_version
                ),
            ));
        }
        Ok(Some(parsed))
    }
}

#[async_trait]
impl ListerWatcher for FakeSource {
    async fn list(&self, options: &ListOptions) -> Result<ListPage, LwError> {
        let mut state = self.state.lock();
        self.record_call(&mut state, SourceCall::List(options.clone()));
        if let Some(Some(error)) = state.list_outcomes.pop_front() {
            return Err(error);
        }
        let (version, snapshot, offset) = if options.continue_token.is_empty() {
            state.parse_version(&options.resource_version)?;
            let snapshot: Arc<Vec<Object>> = Arc::new(state.objects.values().cloned().collect());
            (state.resource_version, snapshot, 0)
        } else {
            let (version, offset) = parse_continue(&options.continue_token)?;
            let snapshot = state.snapshots.get(&version).cloned().ok_or_else(|| {
                LwError::expired(
                    "The provided continue parameter is too old to display a consistent list result.",
                )
            })?;
            (version, snapshot, offset)
        };
        let end = match options.limit {
            0 => snapshot.len(),
            limit => snapshot.len().min(offset + limit as usize),
        };
        let continue_token = if end < snapshot.len() {
            state.snapshots.insert(version, Arc::clone(&snapshot));
            format!("{version}/{end}")
        } else {
            String::new()
        };
        Ok(ListPage {
            resource_version: version.to_string(),
            continue_token,
            items: snapshot[offset.min(end)..end].to_vec(),
        })
    }

    async fn watch(&self, options: &WatchOptions) -> Result<WatchStream, LwError> {
        let mut state = self.state.lock();
        self.record_call(&mut state, SourceCall::Watch(options.clone()));
        if let Some(error) = state.watch_faults.pop_front() {
            return Err(error);
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        match state.parse_version(&options.resource_version) {
            Err(error) => {
                let _ = sender.send(WatchEvent::Error(error));
                return Ok(stream_of(receiver));
            }
            Ok(None) => {
                for object in state.objects.values() {
                    let _ = sender.send(WatchEvent::Added(object.clone()));
                }
            }
            Ok(Some(from)) if from < state.compacted_at => {
                let _ = sender.send(WatchEvent::Error(LwError::expired(format!(
                    "too old resource version: {from} ({})",
                    state.compacted_at
                ))));
                return Ok(stream_of(receiver));
            }
            Ok(Some(from)) => {
                for (_, change) in state.history.iter().filter(|(version, _)| *version > from) {
                    let _ = sender.send(change.event());
                }
            }
        }
        state.watchers.push(Watcher {
            sender,
            bookmarks: options.allow_bookmarks,
        });
        Ok(stream_of(receiver))
    }
}

/// `object` with `metadata.resourceVersion` set to `version`.
fn at_version(mut object: Value, version: u64) -> Result<Object, ObjectError> {
    if let Some(metadata) = object.get_mut("metadata").and_then(Value::as_object_mut) {
        metadata.insert("resourceVersion".into(), Value::String(version.to_string()));
    }
    Object::from_json(&object.to_string())
}

fn parse_continue(token: &str) -> Result<(u64, usize), LwError> {
    let invalid = || LwError::other(format!("invalid continue token {token:?}"));
    let (version, offset) = token.split_once('/').ok_or_else(invalid)?;
    Ok((
        version.parse().map_err(|_| invalid())?,
        offset.parse().map_err(|_| invalid())?,
    ))
}

fn stream_of(receiver: mpsc::UnboundedReceiver<WatchEvent>) -> WatchStream {
    Box::pin(futures::stream::unfold(
        receiver,
        |mut receiver| async move { receiver.recv().await.map(|event| (event, receiver)) },
    ))
}
