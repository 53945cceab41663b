//! The shared informer (INF-*, PROC-*): runs a reflector into a DeltaFIFO,
//! pops deltas into the indexer, and fans notifications out to event
//! handlers, each with its own unbounded buffer and task so a slow handler
//! never blocks the reflector or the other handlers.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::{Mutex, RwLock};
use tokio::sync::mpsc;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::backoff::BackoffConfig;
use super::delta_fifo::{
    DeltaFifo, DeltaFifoOptions, DeltaObject, DeltaType, Deltas, KnownObjects, PopError,
    ProcessError, TransformFn,
};
use super::indexer::Indexer;
use super::lister_watcher::ListerWatcher;
use super::metrics::ReflectorMetrics;
use super::reflector::{
    DEFAULT_MIN_WATCH_TIMEOUT, ExpectedKind, Recoveries, Reflector, ReflectorConfig, Store,
    StoreError, WatchErrorHandler,
};
use crate::clock::{SharedClock, SystemClock};
use crate::object::Object;

/// Handler resync periods below this are raised to it (PROC-06).
pub const MINIMUM_RESYNC_PERIOD: Duration = Duration::from_secs(1);

/// A handler that panicked resumes after this pause (PROC-15).
const HANDLER_PANIC_PAUSE: Duration = Duration::from_secs(1);

/// Receives an informer's notifications, one at a time and in order.
/// Objects are shared with the cache: they are immutable (INF-12).
pub trait EventHandler: Send + Sync + 'static {
    /// An object appeared; `is_in_initial_list` is true while the first list
    /// is being delivered (INF-10).
    fn on_add(&self, _object: &Object, _is_in_initial_list: bool) {}
    /// An object changed, or was replayed by a resync (same version).
    fn on_update(&self, _old: &Object, _new: &Object) {}
    /// An object was deleted; when the deletion was missed while no watch ran
    /// this is a `DeletedFinalStateUnknown` tombstone (INF-08).
    fn on_delete(&self, _object: &DeltaObject) {}
}

/// A notification for one listener (PROC-11).
#[derive(Debug, Clone)]
enum Notification {
    Add {
        object: Object,
        is_in_initial_list: bool,
    },
    Update {
        old: Object,
        new: Object,
    },
    Delete {
        object: DeltaObject,
    },
}

/// How an informer is set up.
#[derive(Clone)]
pub struct InformerConfig {
    /// Used in logs.
    pub name: String,
    /// The default resync period of handlers added without one; zero
    /// disables resync.
    pub default_resync_period: Duration,
    /// Applied to every object before it is cached. Defaults to dropping
    /// `metadata.managedFields`; `None` caches objects as served.
    pub transform: Option<TransformFn>,
    /// Extra indexes besides the built-in namespace index.
    pub indexers: Vec<(String, super::indexer::IndexFunc)>,
    /// See [`ReflectorConfig::expected_kind`].
    pub expected_kind: Option<ExpectedKind>,
    /// See [`ReflectorConfig::label_selector`].
    pub label_selector: Option<String>,
    /// See [`ReflectorConfig::field_selector`].
    pub field_selector: Option<String>,
    /// See [`ReflectorConfig::watch_list_page_size`].
    pub watch_list_page_size: u64,
    /// See [`ReflectorConfig::min_watch_timeout`].
    pub min_watch_timeout: Duration,
    /// See [`ReflectorConfig::backoff`].
    pub backoff: BackoffConfig,
    /// See [`ReflectorConfig::watch_error_handler`].
    pub watch_error_handler: Option<WatchErrorHandler>,
    /// See [`ReflectorConfig::metrics`].
    pub metrics: Option<Arc<dyn ReflectorMetrics>>,
    /// The API server's recoveries: the reflector retries at once on each
    /// (see [`ReflectorConfig::recoveries`]).
    pub recoveries: Option<Recoveries>,
    /// The time source.
    pub clock: SharedClock,
    /// Seeds the reflector's randomness.
    pub seed: u64,
}

impl Default for InformerConfig {
    fn default() -> Self {
        InformerConfig {
            name: "informer".to_string(),
            default_resync_period: Duration::ZERO,
            transform: Some(drop_managed_fields()),
            indexers: Vec::new(),
            expected_kind: None,
            label_selector: None,
            field_selector: None,
            watch_list_page_size: 0,
            min_watch_timeout: DEFAULT_MIN_WATCH_TIMEOUT,
            backoff: BackoffConfig::default(),
            watch_error_handler: None,
            metrics: None,
            recoveries: None,
            clock: SystemClock::shared(),
            seed: fastrand::u64(..),
        }
    }
}

/// The default transform: drop `metadata.managedFields`, which controllers
/// never read and which is about 40 % of a typical object.
pub fn drop_managed_fields() -> TransformFn {
    Arc::new(|object: Object| Ok(object.without_managed_fields()))
}

/// Why a handler could not be added.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InformerError {
    /// PROC-05.
    #[error("informer {0} has already stopped; handler not added")]
    Stopped(String),
    /// The informer was run twice.
    #[error("informer {0} has already started")]
    AlreadyStarted(String),
}

/// A delta that stands for an object carried a tombstone instead.
#[derive(Debug, thiserror::Error)]
#[error("{kind} delta for {key} carries a tombstone")]
struct TombstoneDelta {
    kind: DeltaType,
    key: String,
}

/// Names a handler added to an informer, to remove it later.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct HandlerId(u64);

/// One handler and its delivery state (PROC-08).
struct Listener {
    id: HandlerId,
    /// Ends its delivery task: at the informer's stop, or when removed.
    stop: CancellationToken,
    sender: mpsc::UnboundedSender<Notification>,
    /// Taken when the listener's task starts.
    receiver: Option<mpsc::UnboundedReceiver<Notification>>,
    handler: Arc<dyn EventHandler>,
    requested_resync_period: Duration,
    resync_period: Duration,
    next_resync: Instant,
}

impl Listener {
    fn add(&self, notification: Notification) {
        // The receiver only goes away at shutdown; late notifications are moot.
        let _ = self.sender.send(notification);
    }
}

struct ProcessorState {
    listeners: Vec<Listener>,
    /// Indices into `listeners` due a resync (PROC-01, PROC-10).
    syncing: Vec<usize>,
}

struct InformerState {
    started: bool,
    stopped: bool,
    resync_check_period: Duration,
    fifo: Option<Arc<DeltaFifo>>,
    /// Listener tasks; spawned at start, or at once for later handlers.
    listener_tasks: JoinSet<()>,
    listeners_stop: CancellationToken,
}

/// A shared informer for one kind (and namespace / selector).
pub struct SharedInformer {
    config: InformerConfig,
    lister_watcher: Arc<dyn ListerWatcher>,
    indexer: Arc<Indexer>,
    state: Mutex<InformerState>,
    processor: RwLock<ProcessorState>,
    /// Held while deltas are handled; adding a handler after start takes it
    /// to replay the cache consistently (PROC-09).
    block_deltas: Mutex<()>,
    /// The id of the next handler added.
    next_handler: std::sync::atomic::AtomicU64,
}

impl fmt::Debug for SharedInformer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SharedInformer")
            .field("name", &self.config.name)
            .field("cached", &self.indexer.len())
            .field("has_synced", &self.has_synced())
            .finish()
    }
}

impl SharedInformer {
    /// An informer over `lister_watcher`, not yet running (INF-01).
    pub fn new(lister_watcher: Arc<dyn ListerWatcher>, config: InformerConfig) -> Arc<Self> {
        let mut indexers = vec![(
            super::indexer::NAMESPACE_INDEX.to_string(),
            super::indexer::namespace_index_func(),
        )];
        indexers.extend(config.indexers.iter().cloned());
        let resync_check_period = config.default_resync_period;
        Arc::new(SharedInformer {
            lister_watcher,
            indexer: Arc::new(Indexer::new(indexers)),
            state: Mutex::new(InformerState {
                started: false,
                stopped: false,
                resync_check_period,
                fifo: None,
                listener_tasks: JoinSet::new(),
                listeners_stop: CancellationToken::new(),
            }),
            processor: RwLock::new(ProcessorState {
                listeners: Vec::new(),
                syncing: Vec::new(),
            }),
            block_deltas: Mutex::new(()),
            next_handler: std::sync::atomic::AtomicU64::new(0),
            config,
        })
    }

    /// The cache: read it, never write it.
    pub fn indexer(&self) -> &Arc<Indexer> {
        &self.indexer
    }

    /// The informer's name.
    pub fn name(&self) -> &str {
        &self.config.name
    }

    /// True once the first list has been popped into the cache (INF-13).
    /// Handlers may still be working through their buffers.
    pub fn has_synced(&self) -> bool {
        self.state
            .lock()
            .fifo
            .as_ref()
            .is_some_and(|fifo| fifo.has_synced())
    }

    /// The period at which the reflector checks whether any handler is due
    /// a resync: the smallest handler period requested before start.
    pub fn resync_check_period(&self) -> Duration {
        self.state.lock().resync_check_period
    }

    /// Whether `run` has started.
    pub fn has_started(&self) -> bool {
        self.state.lock().started
    }

    /// Adds a handler with the informer's default resync period (PROC-04).
    pub fn add_event_handler(
        &self,
        handler: Arc<dyn EventHandler>,
    ) -> Result<HandlerId, InformerError> {
        self.add_event_handler_with_resync(handler, self.config.default_resync_period)
    }

    /// Adds a handler that also gets a replay of the cache every
    /// `resync_period` (PROC-05..PROC-09). Added after start, it first
    /// receives an add for every cached object.
    pub fn add_event_handler_with_resync(
        &self,
        handler: Arc<dyn EventHandler>,
        resync_period: Duration,
    ) -> Result<HandlerId, InformerError> {
        let mut state = self.state.lock();
        if state.stopped {
            tracing::info!(informer = %self.config.name, "handler not added: the informer has stopped");
            return Err(InformerError::Stopped(self.config.name.clone()));
        }
        let mut requested = resync_period;
        if !requested.is_zero() {
            if requested < MINIMUM_RESYNC_PERIOD {
                tracing::warn!(informer = %self.config.name, ?requested, "resync period too small; raised to {MINIMUM_RESYNC_PERIOD:?}");
                requested = MINIMUM_RESYNC_PERIOD;
            }
            if requested < state.resync_check_period {
                if state.started {
                    tracing::warn!(
                        informer = %self.config.name,
                        ?requested,
                        "resync period below the informer's check period; raised to {:?}",
                        state.resync_check_period
                    );
                    requested = state.resync_check_period;
                } else {
                    state.resync_check_period = requested;
                    let mut processor = self.processor.write();
                    for listener in &mut processor.listeners {
                        listener.resync_period =
                            determine_resync_period(listener.requested_resync_period, requested);
                    }
                }
            }
        }
        let (sender, receiver) = mpsc::unbounded_channel();
        let now = self.config.clock.now();
        let resync_period = determine_resync_period(requested, state.resync_check_period);
        let id = HandlerId(
            self.next_handler
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed),
        );
        let mut listener = Listener {
            id,
            stop: state.listeners_stop.child_token(),
            sender,
            receiver: Some(receiver),
            handler,
            requested_resync_period: requested,
            resync_period,
            next_resync: now + resync_period,
        };
        if !state.started {
            self.processor.write().listeners.push(listener);
            return Ok(id);
        }

        let _blocked = self.block_deltas.lock();
        for object in self.indexer.list() {
            listener.add(Notification::Add {
                object,
                is_in_initial_list: true,
            });
        }
        self.spawn_listener(&mut state, &mut listener);
        let mut processor = self.processor.write();
        let index = processor.listeners.len();
        processor.listeners.push(listener);
        processor.syncing.push(index);
        Ok(id)
    }

    /// Removes the handler `id`: it gets no notification from now on, not
    /// even those already queued for it. False when no such handler is
    /// added (removed already, or another informer's).
    pub fn remove_event_handler(&self, id: HandlerId) -> bool {
        // No delta is being distributed while the listeners change.
        let _blocked = self.block_deltas.lock();
        let mut processor = self.processor.write();
        let ProcessorState { listeners, syncing } = &mut *processor;
        let Some(position) = listeners.iter().position(|l| l.id == id) else {
            return false;
        };
        let removed = listeners.remove(position);
        removed.stop.cancel();
        syncing.retain(|&index| index != position);
        for index in syncing.iter_mut() {
            if *index > position {
                *index -= 1;
            }
        }
        true
    }

    /// How many handlers are added.
    pub fn handler_count(&self) -> usize {
        self.processor.read().listeners.len()
    }

    /// Runs the informer until `stop` fires (INF-02, INF-03): the reflector
    /// in its own task, the pop loop here; handlers stop after both.
    pub async fn run(self: &Arc<Self>, stop: CancellationToken) -> Result<(), InformerError> {
        let fifo = Arc::new(DeltaFifo::new(DeltaFifoOptions {
            known_objects: Some(Arc::clone(&self.indexer) as Arc<dyn KnownObjects>),
            emit_delta_type_replaced: true,
            transform: self.config.transform.clone(),
        }));
        let reflector = {
            let mut state = self.state.lock();
            if state.started {
                return Err(InformerError::AlreadyStarted(self.config.name.clone()));
            }
            let this = Arc::downgrade(self);
            let reflector = Reflector::new(
                Arc::clone(&self.lister_watcher),
                Arc::clone(&fifo) as Arc<dyn Store>,
                ReflectorConfig {
                    name: Some(self.config.name.clone()),
                    expected_kind: self.config.expected_kind.clone(),
                    resync_period: state.resync_check_period,
                    should_resync: Some(Arc::new(move || {
                        this.upgrade()
                            .is_some_and(|informer| informer.should_resync())
                    })),
                    watch_list_page_size: self.config.watch_list_page_size,
                    min_watch_timeout: self.config.min_watch_timeout,
                    backoff: self.config.backoff,
                    label_selector: self.config.label_selector.clone(),
                    field_selector: self.config.field_selector.clone(),
                    clock: self.config.clock.clone(),
                    seed: self.config.seed,
                    watch_error_handler: self.config.watch_error_handler.clone(),
                    metrics: self.config.metrics.clone(),
                    recoveries: self.config.recoveries.clone(),
                },
            );
            state.fifo = Some(Arc::clone(&fifo));
            state.started = true;
            let mut processor = self.processor.write();
            let ProcessorState { listeners, syncing } = &mut *processor;
            for (index, listener) in listeners.iter_mut().enumerate() {
                self.spawn_listener(&mut state, listener);
                syncing.push(index);
            }
            reflector
        };

        let reflector_task = tokio::spawn({
            let stop = stop.clone();
            async move { reflector.run(stop).await }
        });
        let closer = tokio::spawn({
            let (stop, fifo) = (stop.clone(), Arc::clone(&fifo));
            async move {
                stop.cancelled().await;
                fifo.close();
            }
        });

        loop {
            match fifo
                .pop(|deltas, initial| self.handle_deltas(deltas, initial))
                .await
            {
                Ok(_) => {}
                Err(PopError::Closed) => break,
                Err(error) => {
                    tracing::error!(informer = %self.config.name, %error, "dropped deltas")
                }
            }
        }
        if let Err(error) = reflector_task.await {
            tracing::error!(informer = %self.config.name, %error, "reflector task failed");
        }
        let _ = closer.await;

        // INF-02: handlers stop strictly after the controller.
        let mut tasks = {
            let mut state = self.state.lock();
            state.listeners_stop.cancel();
            state.stopped = true;
            std::mem::take(&mut state.listener_tasks)
        };
        while tasks.join_next().await.is_some() {}
        Ok(())
    }

    fn spawn_listener(&self, state: &mut InformerState, listener: &mut Listener) {
        let Some(receiver) = listener.receiver.take() else {
            return;
        };
        state.listener_tasks.spawn(run_listener(
            self.config.name.clone(),
            Arc::clone(&listener.handler),
            receiver,
            listener.stop.clone(),
            self.config.clock.clone(),
        ));
    }

    /// Applies popped deltas to the cache, then notifies (INF-05..INF-09).
    fn handle_deltas(&self, deltas: &Deltas, is_in_initial_list: bool) -> Result<(), ProcessError> {
        let _blocked = self.block_deltas.lock();
        for delta in deltas {
            match delta.kind {
                DeltaType::Sync | DeltaType::Replaced | DeltaType::Added | DeltaType::Updated => {
                    let DeltaObject::Object(object) = &delta.object else {
                        return Err(ProcessError::Failed(Box::new(TombstoneDelta {
                            kind: delta.kind,
                            key: delta.object.key().to_string(),
                        })));
                    };
                    match self.indexer.update(object.clone()) {
                        Some(old) => {
                            // Same version: a resync replay, only for
                            // listeners due one (INF-07, VER-11).
                            let is_sync = old.resource_version() == object.resource_version();
                            self.distribute(
                                Notification::Update {
                                    old,
                                    new: object.clone(),
                                },
                                is_sync,
                            );
                        }
                        None => self.distribute(
                            Notification::Add {
                                object: object.clone(),
                                is_in_initial_list,
                            },
                            false,
                        ),
                    }
                }
                DeltaType::Deleted => {
                    self.indexer.delete(delta.object.key());
                    self.distribute(
                        Notification::Delete {
                            object: delta.object.clone(),
                        },
                        false,
                    );
                }
            }
        }
        Ok(())
    }

    /// PROC-02.
    fn distribute(&self, notification: Notification, is_sync: bool) {
        let processor = self.processor.read();
        if is_sync {
            for &index in &processor.syncing {
                processor.listeners[index].add(notification.clone());
            }
        } else {
            for listener in &processor.listeners {
                listener.add(notification.clone());
            }
        }
    }

    /// PROC-10: picks the listeners due a resync now.
    fn should_resync(&self) -> bool {
        let now = self.config.clock.now();
        let mut processor = self.processor.write();
        let ProcessorState { listeners, syncing } = &mut *processor;
        syncing.clear();
        for (index, listener) in listeners.iter_mut().enumerate() {
            if !listener.resync_period.is_zero() && now >= listener.next_resync {
                syncing.push(index);
                listener.next_resync = now + listener.resync_period;
            }
        }
        !syncing.is_empty()
    }
}

impl KnownObjects for Indexer {
    fn list_keys(&self) -> Vec<String> {
        Indexer::list_keys(self)
    }

    fn get_by_key(&self, key: &str) -> Option<Object> {
        Indexer::get_by_key(self, key)
    }
}

impl Store for DeltaFifo {
    fn add(&self, object: Object) -> Result<(), StoreError> {
        Ok(DeltaFifo::add(self, object)?)
    }

    fn update(&self, object: Object) -> Result<(), StoreError> {
        Ok(DeltaFifo::update(self, object)?)
    }

    fn delete(&self, object: Object) -> Result<(), StoreError> {
        Ok(DeltaFifo::delete(self, object)?)
    }

    fn replace(&self, objects: Vec<Object>, resource_version: &str) -> Result<(), StoreError> {
        Ok(DeltaFifo::replace(self, objects, resource_version)?)
    }

    fn resync(&self) -> Result<(), StoreError> {
        Ok(DeltaFifo::resync(self)?)
    }
}

/// PROC-08: a handler's effective resync period.
fn determine_resync_period(requested: Duration, check: Duration) -> Duration {
    if requested.is_zero() {
        return Duration::ZERO;
    }
    if check.is_zero() {
        tracing::warn!(
            ?requested,
            "the informer does not resync; handler resync disabled"
        );
        return Duration::ZERO;
    }
    requested.max(check)
}

/// Delivers one listener's notifications in order, one call at a time
/// (PROC-13..PROC-16). A panicking handler loses that notification and
/// resumes after a pause.
async fn run_listener(
    informer: String,
    handler: Arc<dyn EventHandler>,
    mut receiver: mpsc::UnboundedReceiver<Notification>,
    stop: CancellationToken,
    clock: SharedClock,
) {
    loop {
        let notification = tokio::select! {
            biased;
            _ = stop.cancelled() => return,
            notification = receiver.recv() => match notification {
                Some(notification) => notification,
                None => return,
            },
        };
        let delivered = std::panic::catch_unwind(AssertUnwindSafe(|| match &notification {
            Notification::Add {
                object,
                is_in_initial_list,
            } => handler.on_add(object, *is_in_initial_list),
            Notification::Update { old, new } => handler.on_update(old, new),
            Notification::Delete { object } => handler.on_delete(object),
        }));
        if delivered.is_err() {
            tracing::error!(%informer, "event handler panicked; notification skipped");
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = clock.sleep(HANDLER_PANIC_PAUSE) => {}
            }
        }
    }
}
