//! The DeltaFIFO (DF-*): a queue of per-key delta lists between the reflector
//! (producer) and the informer (consumer). Each key is queued once; while it
//! waits, every change to it accumulates in order, so the consumer sees all
//! that happened since it last handled the key. Deletions missed while no
//! watch ran surface as `DeletedFinalStateUnknown` tombstones on `replace`.

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use hashbrown::{HashMap, HashSet};
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::object::Object;

/// What happened to an object (DF-02).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum DeltaType {
    /// A watch `ADDED` event.
    Added,
    /// A watch `MODIFIED` event.
    Updated,
    /// A watch `DELETED` event, or a deletion detected on relist.
    Deleted,
    /// The object was listed again by a relist (`Replace`).
    Replaced,
    /// A periodic resync replayed the cached object.
    Sync,
}

impl DeltaType {
    /// The exact client-go string value.
    pub fn as_str(self) -> &'static str {
        match self {
            DeltaType::Added => "Added",
            DeltaType::Updated => "Updated",
            DeltaType::Deleted => "Deleted",
            DeltaType::Replaced => "Replaced",
            DeltaType::Sync => "Sync",
        }
    }
}

impl fmt::Display for DeltaType {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A tombstone for an object whose deletion was missed (DF-04): the key and,
/// when known, the last state the cache had.
#[derive(Debug, Clone)]
pub struct DeletedFinalStateUnknown {
    /// The object's key.
    pub key: String,
    /// The last known state, possibly stale; `None` when nothing was known.
    pub object: Option<Object>,
}

/// The object a delta carries: the object itself or a tombstone.
#[derive(Debug, Clone)]
pub enum DeltaObject {
    /// The state after the change (for a deletion: the final state).
    Object(Object),
    /// A deletion whose final state is unknown.
    Tombstone(Arc<DeletedFinalStateUnknown>),
}

impl DeltaObject {
    /// The key by the deletion-handling key function: a tombstone's stored
    /// key, otherwise the object's namespace key (KEY-04).
    pub fn key(&self) -> &str {
        match self {
            DeltaObject::Object(object) => object.key(),
            DeltaObject::Tombstone(tombstone) => &tombstone.key,
        }
    }

    /// The object, or the tombstone's last known state.
    pub fn object(&self) -> Option<&Object> {
        match self {
            DeltaObject::Object(object) => Some(object),
            DeltaObject::Tombstone(tombstone) => tombstone.object.as_ref(),
        }
    }

    /// Whether this is a `DeletedFinalStateUnknown` tombstone.
    pub fn is_tombstone(&self) -> bool {
        matches!(self, DeltaObject::Tombstone(_))
    }
}

/// One change: its type and the object after it (DF-01).
#[derive(Debug, Clone)]
pub struct Delta {
    /// What happened.
    pub kind: DeltaType,
    /// The object after the change.
    pub object: DeltaObject,
}

/// The changes of one key, oldest first; never empty when stored.
pub type Deltas = Vec<Delta>;

/// Read access to what the consumer has already processed (DF-06): the
/// informer's indexer. The DeltaFIFO never writes to it.
pub trait KnownObjects: Send + Sync {
    /// Every key the consumer knows.
    fn list_keys(&self) -> Vec<String>;
    /// The consumer's object under `key`.
    fn get_by_key(&self, key: &str) -> Option<Object>;
}

/// A function applied to every object before it is queued (DF-09), e.g. to
/// drop `metadata.managedFields`. It may see the same object more than once
/// (resync replays cached objects) and must be idempotent.
pub type TransformFn = Arc<dyn Fn(Object) -> Result<Object, ProcessFailure> + Send + Sync>;

/// Construction options (DF-05).
#[derive(Default, Clone)]
pub struct DeltaFifoOptions {
    /// The consumer's store, used to detect deletions on `replace` and to
    /// replay objects on `resync`.
    pub known_objects: Option<Arc<dyn KnownObjects>>,
    /// Emit `Replaced` rather than `Sync` deltas from `replace`.
    pub emit_delta_type_replaced: bool,
    /// Applied to every object before it is queued.
    pub transform: Option<TransformFn>,
}

/// Errors of the producer side.
#[derive(Debug, thiserror::Error)]
pub enum FifoError {
    /// The transform rejected an object.
    #[error("transforming {key} before queueing it failed: {source}")]
    Transform {
        /// The object's key.
        key: String,
        /// Why the transform rejected it.
        #[source]
        source: ProcessFailure,
    },
    /// `add_if_not_present` was given no deltas.
    #[error("add_if_not_present needs at least one delta to take the key from")]
    EmptyDeltas,
}

/// Why a `pop` processing function failed, as it says.
pub type ProcessFailure = Box<dyn std::error::Error + Send + Sync>;

/// What a `pop` processing function may return on failure (DF-27).
#[derive(Debug)]
pub enum ProcessError {
    /// Put the deltas back (if the key is not queued again meanwhile) and
    /// report the inner error.
    Requeue(ProcessFailure),
    /// Report the error; the deltas are dropped.
    Failed(ProcessFailure),
}

/// Why `pop` returned without a successfully processed item.
#[derive(Debug, thiserror::Error)]
pub enum PopError {
    /// The FIFO is closed and empty (DF-23, DF-29).
    #[error("DeltaFIFO: manipulating with closed queue")]
    Closed,
    /// The processing function failed; the popped deltas are handed back.
    #[error("processing {key} failed: {source}")]
    Process {
        /// The key that was popped.
        key: String,
        /// The deltas that were popped.
        deltas: Deltas,
        /// Why the processing function failed.
        #[source]
        source: ProcessFailure,
    },
}

/// The DeltaFIFO. All methods take `&self`; share it behind an `Arc`.
pub struct DeltaFifo {
    state: Mutex<FifoState>,
    not_empty: Notify,
    known_objects: Option<Arc<dyn KnownObjects>>,
    emit_delta_type_replaced: bool,
    transform: Option<TransformFn>,
}

#[derive(Default)]
struct FifoState {
    /// key → deltas; a key is here iff it is in `queue` (DF-03).
    items: HashMap<Arc<str>, Deltas>,
    queue: VecDeque<Arc<str>>,
    populated: bool,
    initial_population_count: usize,
    closed: bool,
}

impl fmt::Debug for DeltaFifo {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.state.lock();
        f.debug_struct("DeltaFifo")
            .field("queued", &state.queue.len())
            .field("populated", &state.populated)
            .field("initial_population_count", &state.initial_population_count)
            .field("closed", &state.closed)
            .finish()
    }
}

impl DeltaFifo {
    /// A DeltaFIFO with `options`.
    pub fn new(options: DeltaFifoOptions) -> Self {
        DeltaFifo {
            state: Mutex::new(FifoState::default()),
            not_empty: Notify::new(),
            known_objects: options.known_objects,
            emit_delta_type_replaced: options.emit_delta_type_replaced,
            transform: options.transform,
        }
    }

    /// Queues an `Added` delta (DF-08).
    pub fn add(&self, object: Object) -> Result<(), FifoError> {
        let mut state = self.state.lock();
        state.populated = true;
        self.queue_action_locked(&mut state, DeltaType::Added, DeltaObject::Object(object))
    }

    /// Queues an `Updated` delta (DF-08).
    pub fn update(&self, object: Object) -> Result<(), FifoError> {
        let mut state = self.state.lock();
        state.populated = true;
        self.queue_action_locked(&mut state, DeltaType::Updated, DeltaObject::Object(object))
    }

    /// Queues a `Deleted` delta carrying the object's last state, unless the
    /// key is neither queued nor known to the consumer (DF-12): that deletion
    /// was already reported by a relist.
    pub fn delete(&self, object: Object) -> Result<(), FifoError> {
        let mut state = self.state.lock();
        state.populated = true;
        let key = object.key();
        let queued = state.items.contains_key(key);
        let known = match &self.known_objects {
            Some(known) => known.get_by_key(key).is_some(),
            None => false,
        };
        if !queued && !known {
            return Ok(());
        }
        self.queue_action_locked(&mut state, DeltaType::Deleted, DeltaObject::Object(object))
    }

    /// Queues a `Replaced` (or `Sync`) delta for every listed object, then a
    /// `Deleted` tombstone for every key that is queued or known to the
    /// consumer but absent from the list (DF-13, DF-14, DF-17). Deltas
    /// already queued are kept (DF-16). The resource version is not used.
    pub fn replace(&self, list: Vec<Object>, _resource_version: &str) -> Result<(), FifoError> {
        let action = if self.emit_delta_type_replaced {
            DeltaType::Replaced
        } else {
            DeltaType::Sync
        };
        let mut state = self.state.lock();
        let mut listed: HashSet<Arc<str>> = HashSet::with_capacity(list.len());
        for object in list {
            listed.insert(Arc::from(object.key()));
            self.queue_action_locked(&mut state, action, DeltaObject::Object(object))?;
        }

        // Deletion detection against what is queued: its newest state is the
        // best knowledge of the final state.
        let mut missing: Vec<(String, Option<Object>)> = state
            .items
            .iter()
            .filter(|(key, _)| !listed.contains(*key))
            .map(|(key, deltas)| {
                let newest = deltas
                    .last()
                    .and_then(|delta| delta.object.object().cloned());
                (key.to_string(), newest)
            })
            .collect();
        // Then against what the consumer knows but is not queued.
        if let Some(known) = &self.known_objects {
            for key in known.list_keys() {
                if listed.contains(key.as_str()) || state.items.contains_key(key.as_str()) {
                    continue;
                }
                let last = known.get_by_key(&key);
                missing.push((key, last));
            }
        }
        let queued_deletions = missing.len();
        for (key, object) in missing {
            let tombstone =
                DeltaObject::Tombstone(Arc::new(DeletedFinalStateUnknown { key, object }));
            self.queue_action_locked(&mut state, DeltaType::Deleted, tombstone)?;
        }

        if !state.populated {
            state.populated = true;
            state.initial_population_count = listed.len() + queued_deletions;
        }
        Ok(())
    }

    /// Queues a `Sync` delta for every object the consumer knows whose key
    /// has nothing queued (DF-18, DF-19). Without known objects: nothing.
    pub fn resync(&self) -> Result<(), FifoError> {
        let Some(known) = &self.known_objects else {
            return Ok(());
        };
        let mut state = self.state.lock();
        for key in known.list_keys() {
            let Some(object) = known.get_by_key(&key) else {
                tracing::debug!(%key, "resync: key vanished from the known objects");
                continue;
            };
            if state.items.contains_key(object.key()) {
                continue;
            }
            self.queue_action_locked(&mut state, DeltaType::Sync, DeltaObject::Object(object))?;
        }
        Ok(())
    }

    /// Queues `deltas` under their key unless that key is already queued, in
    /// which case the newer queued deltas win (DF-21, DF-22).
    pub fn add_if_not_present(&self, deltas: Deltas) -> Result<(), FifoError> {
        let key: Arc<str> = match deltas.last() {
            Some(newest) => Arc::from(newest.object.key()),
            None => return Err(FifoError::EmptyDeltas),
        };
        let mut state = self.state.lock();
        self.add_if_not_present_locked(&mut state, key, deltas);
        Ok(())
    }

    /// Waits for a queued key, removes it and runs `process` on its deltas
    /// while holding the FIFO lock (DF-23..DF-27): no producer can interleave
    /// and `has_synced` observes the state after processing. `process` gets
    /// the deltas and whether they belong to the initial list. Keep it quick
    /// and free of I/O.
    pub async fn pop<F>(&self, process: F) -> Result<Deltas, PopError>
    where
        F: FnOnce(&Deltas, bool) -> Result<(), ProcessError>,
    {
        loop {
            let notified = self.not_empty.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let mut state = self.state.lock();
                if let Some((key, deltas, in_initial_list)) = Self::take_head_locked(&mut state) {
                    return match process(&deltas, in_initial_list) {
                        Ok(()) => Ok(deltas),
                        Err(ProcessError::Requeue(source)) => {
                            self.add_if_not_present_locked(
                                &mut state,
                                Arc::clone(&key),
                                deltas.clone(),
                            );
                            Err(PopError::Process {
                                key: key.to_string(),
                                deltas,
                                source,
                            })
                        }
                        Err(ProcessError::Failed(source)) => Err(PopError::Process {
                            key: key.to_string(),
                            deltas,
                            source,
                        }),
                    };
                }
                if state.closed {
                    return Err(PopError::Closed);
                }
            }
            notified.await;
        }
    }

    /// Closes the FIFO: `pop` drains what is queued, then reports closed
    /// (DF-29). Producers are not gated.
    pub fn close(&self) {
        self.state.lock().closed = true;
        self.not_empty.notify_waiters();
    }

    /// Whether the first `replace` (or any earlier add/update/delete) has
    /// been fully popped and processed (DF-30, DF-31).
    pub fn has_synced(&self) -> bool {
        let state = self.state.lock();
        state.populated && state.initial_population_count == 0
    }

    /// Number of queued keys.
    pub fn len(&self) -> usize {
        self.state.lock().queue.len()
    }

    /// Whether nothing is queued.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The queued keys in queue order (DF-32 reads the FIFO's own items).
    pub fn list_keys(&self) -> Vec<String> {
        let state = self.state.lock();
        state.queue.iter().map(|key| key.to_string()).collect()
    }

    /// The newest object of each queued key (DF-32), in queue order.
    pub fn list(&self) -> Vec<DeltaObject> {
        let state = self.state.lock();
        state
            .queue
            .iter()
            .filter_map(|key| state.items.get(key))
            .filter_map(|deltas| deltas.last().map(|delta| delta.object.clone()))
            .collect()
    }

    /// The deltas queued under `key` (DF-32).
    pub fn get_by_key(&self, key: &str) -> Option<Deltas> {
        self.state.lock().items.get(key).cloned()
    }

    fn take_head_locked(state: &mut FifoState) -> Option<(Arc<str>, Deltas, bool)> {
        while let Some(key) = state.queue.pop_front() {
            let in_initial_list = !(state.populated && state.initial_population_count == 0);
            // DF-24: the count drops before the item is looked up.
            if state.initial_population_count > 0 {
                state.initial_population_count -= 1;
            }
            match state.items.remove(&key) {
                Some(deltas) => return Some((key, deltas, in_initial_list)),
                None => tracing::error!(%key, "inconceivable: key queued without deltas; skipped"),
            }
        }
        None
    }

    fn add_if_not_present_locked(&self, state: &mut FifoState, key: Arc<str>, deltas: Deltas) {
        state.populated = true;
        if state.items.contains_key(&key) {
            return;
        }
        state.queue.push_back(Arc::clone(&key));
        state.items.insert(key, deltas);
        self.not_empty.notify_waiters();
    }

    /// Appends a delta to the key's list, dedups, and queues the key if new
    /// (DF-09).
    fn queue_action_locked(
        &self,
        state: &mut FifoState,
        kind: DeltaType,
        object: DeltaObject,
    ) -> Result<(), FifoError> {
        let object = match (object, &self.transform) {
            (DeltaObject::Object(object), Some(transform)) => {
                let key = object.key().to_string();
                let transformed =
                    transform(object).map_err(|source| FifoError::Transform { key, source })?;
                DeltaObject::Object(transformed)
            }
            // A tombstone's object already went through the transform.
            (object, _) => object,
        };
        let delta = Delta { kind, object };
        match state.items.get_mut(delta.object.key()) {
            Some(deltas) => {
                deltas.push(delta);
                dedup_deltas(deltas);
            }
            None => {
                let key: Arc<str> = Arc::from(delta.object.key());
                state.queue.push_back(Arc::clone(&key));
                state.items.insert(key, vec![delta]);
            }
        }
        self.not_empty.notify_waiters();
        Ok(())
    }
}

/// Collapses the newest two deltas when both are deletions (DF-10), keeping
/// the one with the most information: the older one, unless the older is a
/// tombstone. This follows client-go's `isDeletionDup`; nothing else is ever
/// collapsed.
fn dedup_deltas(deltas: &mut Deltas) {
    let n = deltas.len();
    if n < 2 {
        return;
    }
    let (older, newer) = (&deltas[n - 2], &deltas[n - 1]);
    if older.kind != DeltaType::Deleted || newer.kind != DeltaType::Deleted {
        return;
    }
    if older.object.is_tombstone() {
        deltas.swap_remove(n - 2);
    } else {
        deltas.pop();
    }
}
