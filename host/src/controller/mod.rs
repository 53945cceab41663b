//! Wires one guest to the native core: its manifest's kinds come from the
//! shared informers of the namespaces it may act in (its view),
//! handlers map their changes to primary keys in the
//! guest's own rate-limited workqueue, and N workers — started once every
//! cache the guest reads has synced — hand keys to the guest one at a time
//! (a key is never reconciled twice at once) and act on the result:
//! done → forget; requeue-after(d) → forget, add after d; requeue, an error,
//! a trap, a timeout or a memory fault → add rate-limited; `forbidden` or
//! `invalid`, which no retry fixes → forget, until the object changes and
//! its handler queues the key again. When the API server answers again
//! after an outage, every key whose last reconcile failed as unavailable
//! is queued at once with its backoff forgotten. Workers start
//! only while this host leads (see [`Leadership`]); caches warm up before.

mod handlers;
mod indexes;
mod informers;
mod manager;
mod services;
mod view;

pub use informers::{
    InformerFactory, InformerKey, InformerPlan, InformerSet, InformerSource, PlanError, RewireError,
};
pub use manager::{Manager, ManagerError};
pub use services::{ControllerServices, Writer};

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::clock::SharedClock;
use crate::informer::{HandlerId, InformerError, SharedInformer};
use crate::informer::{Recoveries, ReflectorMetricsProvider};
use crate::kube::Gvk;
use crate::label_selector::LabelSelector;
use crate::runtime::manifest::{KeyMapping, Manifest};
use crate::runtime::{Action, Guest, Instance, ReconcileError};
use crate::workqueue::{
    MetricsProvider, QueueConfig, RateLimitingQueue, default_controller_rate_limiter,
};
use handlers::{KeySink, Mapping, MappingHandler};
use indexes::indexer_name;
use view::GuestView;

/// A guest's workqueue of primary keys.
pub type GuestQueue = RateLimitingQueue<Arc<str>>;

/// Workers per guest when neither the command line nor the manifest says.
pub const DEFAULT_WORKERS: usize = 2;

/// The most workers a manifest gets unless the operator says otherwise
/// (`--max-workers`); a manifest asking for more is clamped.
pub const DEFAULT_MAX_WORKERS: usize = 16;

/// The most keys a guest's queue may hold for the guest's own adds to be
/// taken (`--max-queue-depth`).
pub const DEFAULT_MAX_QUEUE_DEPTH: usize = 10_000;

/// How long workers wait between checks that the caches have synced.
const SYNC_POLL: Duration = Duration::from_millis(10);

/// One finished reconcile, for observers (logs, metrics, tests).
#[derive(Debug, Clone)]
pub struct ReconcileRecord {
    /// The guest's name.
    pub guest: Arc<str>,
    /// The key reconciled.
    pub key: Arc<str>,
    /// Rate-limited requeues of the key before this attempt.
    pub attempt: u32,
    /// What came of it.
    pub result: Result<Action, ReconcileError>,
    /// How long it took, instantiation included.
    pub duration: Duration,
    /// How long instantiating a fresh instance took; `None` when a kept
    /// instance ran it (or instantiation failed).
    pub instantiation: Option<Duration>,
    /// The largest linear memory the instance had reached, in bytes (0 when
    /// there was no instance).
    pub memory_high_water: usize,
    /// How long guest code ran for it (instantiation of a fresh instance
    /// included), on the scheduler's lanes.
    pub cpu: Duration,
}

/// Why a guest could not be wired.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum WiringError {
    /// No informer was given for a kind the manifest watches.
    #[error("guest {guest}: no cache of {kind}, which its manifest watches")]
    MissingCache {
        /// The guest.
        guest: String,
        /// The kind.
        kind: Gvk,
    },
    /// A label selector of the manifest does not parse.
    #[error("guest {guest}: {source}")]
    Selector {
        /// The guest.
        guest: String,
        /// The parse error.
        source: crate::label_selector::ParseError,
    },
    /// A handler could not be registered.
    #[error(transparent)]
    Informer(#[from] InformerError),
}

/// Sees the workers of every guest (logs, metrics, tests).
pub trait ReconcileObserver: Send + Sync {
    /// A guest's workers started: `workers` of them.
    fn workers_started(&self, _guest: &str, _workers: usize) {}
    /// A worker took a key of `guest` and is about to reconcile it.
    fn reconcile_started(&self, _guest: &str) {}
    /// `keys` of `guest` that had failed as unavailable were queued at
    /// once: the API server answers again.
    fn keys_redriven(&self, _guest: &str, _keys: usize) {}
    /// A reconcile finished.
    fn reconcile_finished(&self, record: &ReconcileRecord);
}

impl<F: Fn(&ReconcileRecord) + Send + Sync> ReconcileObserver for F {
    fn reconcile_finished(&self, record: &ReconcileRecord) {
        self(record)
    }
}

/// A shared [`ReconcileObserver`].
pub type Observer = Arc<dyn ReconcileObserver>;

/// Whether this host may run workers: `true` while it leads. Without leader
/// election it is always `true` ([`always_leading`]).
pub type Leadership = watch::Receiver<bool>;

/// Leadership for a host that does not elect a leader.
pub fn always_leading() -> Leadership {
    watch::channel(true).1
}

/// How a guest is run.
#[derive(Clone)]
pub struct ControllerConfig {
    /// Workers; `None` takes the manifest's concurrency, else
    /// [`DEFAULT_WORKERS`].
    pub workers: Option<usize>,
    /// The most workers a manifest's concurrency gets; more is clamped,
    /// with a warning.
    pub max_workers: usize,
    /// The guest's own adds are refused while its queue holds this many
    /// keys (ready and delayed); keys from the informers always go in.
    pub max_queue_depth: usize,
    /// Keep one instance per worker across reconciles instead of a fresh
    /// instance per reconcile.
    pub reuse_instances: bool,
    /// Compress the informers' cached objects with a dictionary each
    /// learns from its first objects.
    pub cache_compression: bool,
    /// The time source of the queue and its rate limiter.
    pub clock: SharedClock,
    /// Sees the workers and every finished reconcile.
    pub observer: Option<Observer>,
    /// Exports the metrics of each guest's workqueue (named after it).
    pub queue_metrics: Option<Arc<dyn MetricsProvider>>,
    /// Exports the metrics of each shared informer's reflector.
    pub informer_metrics: Option<Arc<dyn ReflectorMetricsProvider>>,
    /// The API server's recoveries: informers in a backoff retry at once.
    pub recoveries: Option<Recoveries>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            workers: None,
            max_workers: DEFAULT_MAX_WORKERS,
            max_queue_depth: DEFAULT_MAX_QUEUE_DEPTH,
            reuse_instances: false,
            cache_compression: true,
            clock: crate::clock::SystemClock::shared(),
            observer: None,
            queue_metrics: None,
            informer_metrics: None,
            recoveries: None,
        }
    }
}

impl std::fmt::Debug for ControllerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerConfig")
            .field("workers", &self.workers)
            .field("max_workers", &self.max_workers)
            .field("max_queue_depth", &self.max_queue_depth)
            .field("reuse_instances", &self.reuse_instances)
            .field("cache_compression", &self.cache_compression)
            .finish()
    }
}

impl KeySink for GuestQueue {
    fn enqueue(&self, key: &str) {
        self.add(Arc::from(key));
    }
}

/// Why a new version of a guest did not replace the running one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReloadError {
    /// The new version changes what makes the guest this controller: its
    /// name or its primary kind.
    #[error(
        "guest {guest}: the new version changes its {field}, which a reload keeps; restart the \
         host to apply it"
    )]
    Unchangeable {
        /// The guest.
        guest: String,
        /// What it changes.
        field: &'static str,
    },
    /// The informers it needs cannot serve it.
    #[error("guest {guest}: {source}")]
    Rewire {
        /// The guest.
        guest: String,
        /// Why.
        source: informers::RewireError,
    },
    /// The caches it adds did not sync in time; they are stopped again.
    #[error("guest {guest}: the caches it adds did not sync in {timeout:?}: {informers}")]
    NotSynced {
        /// The guest.
        guest: String,
        /// How long they had.
        timeout: Duration,
        /// The informers, comma-separated.
        informers: String,
    },
    /// The host's informers are not running (it is starting or stopping).
    #[error("guest {guest}: the host is not running its informers")]
    NotRunning {
        /// The guest.
        guest: String,
    },
    /// The workers the new version asks for do not fit the instance slots
    /// or memory budgets beside the other guests'.
    #[error("guest {guest}: {source}")]
    Budget {
        /// The guest.
        guest: String,
        /// Why.
        source: crate::runtime::BudgetError,
    },
    /// A handler could not be registered.
    #[error("guest {guest}: {source}")]
    Wiring {
        /// The guest.
        guest: String,
        /// Why.
        source: WiringError,
    },
}

/// A version of the guest and the services it is wired to.
#[derive(Clone)]
struct Version {
    guest: Guest,
    services: Arc<ControllerServices>,
}

/// What a registered handler is: equal specs on the same informer are
/// the same handler, kept across a reload.
#[derive(Debug, Clone, PartialEq, Eq)]
struct HandlerSpec {
    /// The informer, by address.
    informer: usize,
    /// `None`: the primary kind's own keys.
    mapping: Option<KeyMapping>,
    selector: Option<String>,
    resync: Duration,
    /// The primary kind's informers a mapping reads, by address.
    primary_informers: Vec<usize>,
}

/// A handler the guest's manifest wants on one informer.
struct Wanted {
    spec: HandlerSpec,
    informer: Arc<SharedInformer>,
    handler: Arc<MappingHandler>,
}

/// A handler registered on an informer.
struct Registered {
    spec: HandlerSpec,
    informer: Arc<SharedInformer>,
    id: HandlerId,
}

fn address(informer: &Arc<SharedInformer>) -> usize {
    Arc::as_ptr(informer) as usize
}

/// The handlers `manifest` wants on the informers of `view`, sending keys
/// to `sink`.
fn wanted_handlers(
    manifest: &Manifest,
    view: &GuestView,
    sink: &Arc<dyn KeySink>,
) -> Result<Vec<Wanted>, WiringError> {
    if let Some(kind) = manifest
        .watched_kinds()
        .into_iter()
        .find(|kind| view.kind(kind).is_none())
    {
        return Err(WiringError::MissingCache {
            guest: manifest.name.clone(),
            kind: kind.clone(),
        });
    }
    let selector = |s: &Option<String>| {
        LabelSelector::parse(s.as_deref().unwrap_or("")).map_err(|source| WiringError::Selector {
            guest: manifest.name.clone(),
            source,
        })
    };
    let informers = |kind: &Gvk| view.kind(kind).map_or(&[][..], |k| k.informers());
    let mut wanted = Vec::new();
    let primary = Arc::new(MappingHandler::new(
        Mapping::Primary,
        selector(&manifest.primary_label_selector)?,
        Arc::clone(sink),
    ));
    let resync = manifest.resync_period.unwrap_or(Duration::ZERO);
    for informer in informers(&manifest.primary) {
        wanted.push(Wanted {
            spec: HandlerSpec {
                informer: address(informer),
                mapping: None,
                selector: manifest.primary_label_selector.clone(),
                resync,
                primary_informers: Vec::new(),
            },
            informer: Arc::clone(informer),
            handler: Arc::clone(&primary),
        });
    }
    let primary_informers = informers(&manifest.primary);
    let primary_caches: Vec<_> = primary_informers
        .iter()
        .map(|informer| Arc::clone(informer.indexer()))
        .collect();
    let mut mapped: Vec<(&Gvk, KeyMapping, Option<String>)> = manifest
        .owns
        .iter()
        .map(|kind| (kind, KeyMapping::ControllerOwner, None))
        .collect();
    for watch in &manifest.watches {
        mapped.push((
            &watch.kind,
            watch.mapping.clone(),
            watch.label_selector.clone(),
        ));
    }
    for (kind, mapping, label_selector) in mapped {
        let index = match &mapping {
            KeyMapping::ByIndex(name) => Some(indexer_name(&manifest.name, name)),
            _ => None,
        };
        let handler = Arc::new(MappingHandler::new(
            Mapping::Mapped {
                mapping: mapping.clone(),
                primary: manifest.primary.clone(),
                index,
                primary_caches: primary_caches.clone(),
            },
            selector(&label_selector)?,
            Arc::clone(sink),
        ));
        // Only the primary kind's handler resyncs (the manifest's period):
        // a resync replays primaries, not what maps to them.
        for informer in informers(kind) {
            wanted.push(Wanted {
                spec: HandlerSpec {
                    informer: address(informer),
                    mapping: Some(mapping.clone()),
                    selector: label_selector.clone(),
                    resync: Duration::ZERO,
                    primary_informers: primary_informers.iter().map(address).collect(),
                },
                informer: Arc::clone(informer),
                handler: Arc::clone(&handler),
            });
        }
    }
    Ok(wanted)
}

/// One guest, wired.
pub struct Controller {
    /// The running version: swapped by a reload, read by each worker
    /// before each reconcile.
    version: Arc<parking_lot::RwLock<Version>>,
    queue: Arc<GuestQueue>,
    /// The handlers registered for the running version.
    handlers: parking_lot::Mutex<Vec<Registered>>,
    /// Keys requeued with backoff after a failure.
    failing: Arc<Failing>,
    writer: Option<Writer>,
    /// How many workers run: a reload may change it.
    workers: watch::Sender<usize>,
    config: ControllerConfig,
}

/// How many workers a guest of `manifest` runs under `config`: `--workers`,
/// else its concurrency clamped to `--max-workers` (with a warning), else
/// [`DEFAULT_WORKERS`]; at least one.
fn worker_count(config: &ControllerConfig, manifest: &Manifest) -> usize {
    match (config.workers, manifest.concurrency) {
        (Some(workers), _) => workers,
        (None, Some(asked)) if asked as usize > config.max_workers => {
            tracing::warn!(
                guest = %manifest.name,
                asked,
                max = config.max_workers,
                "the manifest asks for more workers than --max-workers allows; clamped"
            );
            config.max_workers
        }
        (None, Some(asked)) => asked as usize,
        (None, None) => DEFAULT_WORKERS.min(config.max_workers),
    }
    .max(1)
}

impl Controller {
    /// Wires `guest` to the informers of its `view` (per kind it reads,
    /// from [`informers::InformerSet::view`]) and registers its handlers.
    /// `writer` is its API access (`None`: writes are unavailable).
    pub fn new(
        guest: Guest,
        view: GuestView,
        writer: Option<Writer>,
        config: ControllerConfig,
    ) -> Result<Controller, WiringError> {
        let manifest = guest.manifest().clone();
        let mut queue_config =
            QueueConfig::named(manifest.name.clone()).with_clock(config.clock.clone());
        if let Some(provider) = &config.queue_metrics {
            queue_config = queue_config.with_metrics_provider(Arc::clone(provider));
        }
        let queue = Arc::new(GuestQueue::with_config(
            Arc::new(default_controller_rate_limiter(config.clock.clone())),
            queue_config,
        ));
        let workers = worker_count(&config, &manifest);
        let services = Arc::new(ControllerServices::new(
            guest.clone(),
            view.clone(),
            Arc::clone(&queue),
            config.max_queue_depth,
            writer.clone(),
        ));
        let controller = Controller {
            version: Arc::new(parking_lot::RwLock::new(Version { guest, services })),
            queue,
            handlers: parking_lot::Mutex::new(Vec::new()),
            failing: Arc::default(),
            writer,
            workers: watch::Sender::new(workers),
            config,
        };
        let sink = Arc::clone(&controller.queue) as Arc<dyn KeySink>;
        controller.register(wanted_handlers(&manifest, &view, &sink)?)?;
        Ok(controller)
    }

    /// Registers the `wanted` handlers not registered yet and removes
    /// those no longer wanted; on an error, nothing changes.
    fn register(&self, wanted: Vec<Wanted>) -> Result<(), WiringError> {
        let mut registered = self.handlers.lock();
        let mut old: Vec<Option<Registered>> = registered.drain(..).map(Some).collect();
        // Each with whether this call added it.
        let mut next: Vec<(Registered, bool)> = Vec::with_capacity(wanted.len());
        for want in wanted {
            let same = old
                .iter_mut()
                .find(|r| r.as_ref().is_some_and(|r| r.spec == want.spec));
            if let Some(same) = same {
                next.push((same.take().expect("found"), false));
                continue;
            }
            let added = want
                .informer
                .add_event_handler_with_resync(want.handler as _, want.spec.resync);
            match added {
                Ok(id) => next.push((
                    Registered {
                        spec: want.spec,
                        informer: want.informer,
                        id,
                    },
                    true,
                )),
                Err(e) => {
                    let mut restored: Vec<Registered> = old.into_iter().flatten().collect();
                    for (handler, added) in next {
                        if added {
                            handler.informer.remove_event_handler(handler.id);
                        } else {
                            restored.push(handler);
                        }
                    }
                    *registered = restored;
                    return Err(e.into());
                }
            }
        }
        for unwanted in old.into_iter().flatten() {
            unwanted.informer.remove_event_handler(unwanted.id);
        }
        *registered = next.into_iter().map(|(handler, _)| handler).collect();
        Ok(())
    }

    /// The running version of the guest.
    pub fn guest(&self) -> Guest {
        self.version.read().guest.clone()
    }

    /// Refuses a new version that changes what a reload keeps: the name,
    /// the primary kind.
    pub fn check_reload(&self, new: &Guest) -> Result<(), ReloadError> {
        let running = self.version.read();
        let (old, next) = (running.guest.manifest(), new.manifest());
        for (field, same) in [
            ("name", old.name == next.name),
            ("primary kind", old.primary == next.primary),
        ] {
            if !same {
                return Err(ReloadError::Unchangeable {
                    guest: old.name.clone(),
                    field,
                });
            }
        }
        Ok(())
    }

    /// Makes `new` the running version, reading the informers of `view`:
    /// its handlers are registered (those it shares with the running
    /// version stay; a new one first gets the cache replayed), reconciles
    /// that start from now on run it, and those in flight finish on the
    /// old one (a worker's kept instance is dropped before its next
    /// reconcile). Workers are started or retired to its worker count
    /// ([`Controller::workers_for`]; a retired worker finishes its
    /// reconcile in flight).
    pub fn reload(&self, new: Guest, view: GuestView) -> Result<(), ReloadError> {
        self.check_reload(&new)?;
        let workers = self.workers_for(&new);
        let wiring = |source| ReloadError::Wiring {
            guest: new.name().to_string(),
            source,
        };
        let sink = Arc::clone(&self.queue) as Arc<dyn KeySink>;
        let wanted = wanted_handlers(new.manifest(), &view, &sink).map_err(wiring)?;
        let services = Arc::new(ControllerServices::new(
            new.clone(),
            view,
            Arc::clone(&self.queue),
            self.config.max_queue_depth,
            self.writer.clone(),
        ));
        // New handlers first, so no change goes unseen; then the swap.
        self.register(wanted).map_err(wiring)?;
        let name = new.name().to_string();
        *self.version.write() = Version {
            guest: new,
            services,
        };
        if self.workers.send_replace(workers) != workers {
            tracing::info!(guest = %name, workers, "the new version runs another number of workers");
            if let Some(observer) = &self.config.observer {
                observer.workers_started(&name, workers);
            }
        }
        Ok(())
    }

    /// How many workers `new`, a version of this guest, would run.
    pub fn workers_for(&self, new: &Guest) -> usize {
        worker_count(&self.config, new.manifest())
    }

    /// The guest's workqueue.
    pub fn queue(&self) -> &Arc<GuestQueue> {
        &self.queue
    }

    /// How many workers run.
    pub fn workers(&self) -> usize {
        *self.workers.borrow()
    }

    /// The names of the informers the guest reads, sorted.
    pub fn informer_names(&self) -> Vec<String> {
        let version = self.version.read();
        let mut names: Vec<String> = version
            .services
            .view()
            .informers()
            .map(|informer| informer.name().to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// True once every cache the guest reads has synced.
    pub fn has_synced(&self) -> bool {
        self.version.read().services.view().has_synced()
    }

    /// Waits for the caches and for `leading`, then runs the workers until
    /// `stop` fires; the queue then shuts down and workers finish the
    /// reconciles in flight.
    pub async fn run(&self, stop: CancellationToken, mut leading: Leadership) {
        if !self.wait_to_start(&stop, &mut leading).await {
            self.queue.shut_down();
            return;
        }
        let name: Arc<str> = Arc::from(self.guest().name());
        let mut count = self.workers.subscribe();
        let wanted = *count.borrow_and_update();
        tracing::info!(guest = &*name, workers = wanted, "starting workers");
        if let Some(observer) = &self.config.observer {
            observer.workers_started(&name, wanted);
        }
        let mut workers = tokio::task::JoinSet::new();
        // Workers call into the guest: they run on the guest threads.
        let guest = self.guest();
        let threads = guest.threads().clone();
        // Each running worker's retirement, in the order they started.
        let mut running: Vec<CancellationToken> = Vec::new();
        let mut resize = |workers: &mut tokio::task::JoinSet<()>, wanted: usize| {
            while running.len() < wanted {
                let retire = CancellationToken::new();
                let worker = Worker {
                    name: Arc::clone(&name),
                    version: Arc::clone(&self.version),
                    queue: Arc::clone(&self.queue),
                    failing: Arc::clone(&self.failing),
                    config: self.config.clone(),
                    retire: retire.clone(),
                };
                workers.spawn_on(guest.worker(worker.run()), &threads);
                running.push(retire);
            }
            while running.len() > wanted {
                running.pop().expect("more than wanted").cancel();
            }
        };
        // Recoveries before now are no news: marked seen here, before any
        // worker runs, not when the task first runs, which may be after a
        // worker's key failed and the server came back.
        if let Some(mut recoveries) = self.config.recoveries.clone() {
            recoveries.mark_unchanged();
            workers.spawn(retry_on_recovery(
                Arc::clone(&name),
                recoveries,
                Arc::clone(&self.queue),
                Arc::clone(&self.failing),
                self.config.observer.clone(),
                stop.clone(),
            ));
        }
        resize(&mut workers, wanted);
        loop {
            tokio::select! {
                _ = stop.cancelled() => break,
                changed = count.changed() => {
                    if changed.is_err() {
                        stop.cancelled().await;
                        break;
                    }
                    let wanted = *count.borrow_and_update();
                    resize(&mut workers, wanted);
                }
                // Retired workers end; their results need no handling.
                Some(_) = workers.join_next(), if !workers.is_empty() => {}
            }
        }
        self.queue.shut_down();
        while workers.join_next().await.is_some() {}
    }

    /// Waits until the caches have synced and this host leads; false when
    /// `stop` fires first.
    async fn wait_to_start(&self, stop: &CancellationToken, leading: &mut Leadership) -> bool {
        while !self.has_synced() {
            tokio::select! {
                _ = stop.cancelled() => return false,
                _ = tokio::time::sleep(SYNC_POLL) => {}
            }
        }
        let guest = self.guest();
        tracing::info!(guest = guest.name(), "caches synced");
        if !*leading.borrow() {
            tracing::info!(guest = guest.name(), "waiting for leadership");
        }
        let elected = tokio::select! {
            _ = stop.cancelled() => return false,
            elected = leading.wait_for(|leads| *leads) => elected.is_ok(),
        };
        if !elected {
            // A closed channel that never said `true` never will.
            stop.cancelled().await;
        }
        elected
    }
}

/// The keys whose last reconcile failed as unavailable (the API server did
/// not answer) and was requeued with backoff.
#[derive(Default)]
struct Failing(parking_lot::Mutex<std::collections::HashSet<Arc<str>>>);

impl Failing {
    fn insert(&self, key: &Arc<str>) {
        self.0.lock().insert(Arc::clone(key));
    }

    fn remove(&self, key: &str) {
        self.0.lock().remove(key);
    }

    fn take(&self) -> Vec<Arc<str>> {
        self.0.lock().drain().collect()
    }
}

/// Each time the API server answers again after `recoveries` was last seen,
/// queues every key that failed as unavailable at once, its backoff
/// forgotten: those failures said
/// nothing about the keys, so they are not made to wait for them (the
/// backoff of a key that fails again starts from its first step).
async fn retry_on_recovery(
    guest: Arc<str>,
    mut recoveries: Recoveries,
    queue: Arc<GuestQueue>,
    failing: Arc<Failing>,
    observer: Option<Observer>,
    stop: CancellationToken,
) {
    loop {
        tokio::select! {
            _ = stop.cancelled() => return,
            changed = recoveries.changed() => {
                if changed.is_err() {
                    return;
                }
            }
        }
        let keys = failing.take();
        if !keys.is_empty() {
            tracing::info!(
                guest = &*guest,
                keys = keys.len(),
                "the API server answers again: retrying failed keys now"
            );
            if let Some(observer) = &observer {
                observer.keys_redriven(&guest, keys.len());
            }
        }
        for key in keys {
            queue.forget(&key);
            queue.add(key);
        }
    }
}

/// One worker: takes keys from the queue and reconciles them.
struct Worker {
    /// The guest's name, shared by the records of its reconciles.
    name: Arc<str>,
    /// The running version of the guest and its services.
    version: Arc<parking_lot::RwLock<Version>>,
    queue: Arc<GuestQueue>,
    failing: Arc<Failing>,
    config: ControllerConfig,
    /// Ends the worker before its next key (the guest runs fewer workers).
    retire: CancellationToken,
}

impl Worker {
    async fn run(self) {
        let mut kept: Option<(Guest, Instance)> = None;
        loop {
            // Taking a key is cancel-safe: a retired worker takes none.
            let key = tokio::select! {
                biased;
                _ = self.retire.cancelled() => break,
                key = self.queue.get() => key,
            };
            let Some(key) = key else { break };
            let attempt = self.queue.num_requeues(&key);
            if let Some(observer) = &self.config.observer {
                observer.reconcile_started(&self.name);
            }
            let span = tracing::info_span!(
                "reconcile",
                guest = %self.name,
                key = %key,
                attempt,
                duration_ms = tracing::field::Empty,
            );
            let started = self.config.clock.now();
            let outcome = self
                .reconcile(&key, attempt, &mut kept)
                .instrument(span.clone())
                .await;
            let duration = self.config.clock.now().saturating_duration_since(started);
            span.record("duration_ms", duration.as_secs_f64() * 1e3);
            let _entered = span.enter();
            let result = outcome.result;
            // A key that failed because the server did not answer waits
            // for its return, not out its backoff; one that failed for its
            // own reasons keeps client-go's per-key backoff.
            match &result {
                Err(error) if error.reason() == "unavailable" => self.failing.insert(&key),
                _ => self.failing.remove(&key),
            }
            match &result {
                Ok(Action::Done) => self.queue.forget(&key),
                Ok(Action::RequeueAfter(delay)) => {
                    self.queue.forget(&key);
                    self.queue.add_after(Arc::clone(&key), *delay);
                }
                Ok(Action::Requeue) => self.queue.add_rate_limited(Arc::clone(&key)),
                Err(stale @ ReconcileError::Stale(_)) => {
                    tracing::debug!("{stale}");
                    self.queue.add_rate_limited(Arc::clone(&key));
                }
                Err(error) if error.is_terminal() => {
                    tracing::warn!(
                        "reconcile failed; not retried until the object changes: {error}"
                    );
                    self.queue.forget(&key);
                }
                Err(error) => {
                    tracing::warn!("reconcile failed: {error}");
                    self.queue.add_rate_limited(Arc::clone(&key));
                }
            }
            tracing::debug!(?duration, "reconciled");
            if let Some(observer) = &self.config.observer {
                observer.reconcile_finished(&ReconcileRecord {
                    guest: Arc::clone(&self.name),
                    key: Arc::clone(&key),
                    attempt,
                    result,
                    duration,
                    instantiation: outcome.instantiation,
                    memory_high_water: outcome.memory_high_water,
                    cpu: outcome.cpu,
                });
            }
            self.queue.done(&key);
        }
    }

    /// Runs one reconcile in the kept instance or a fresh one; keeps the
    /// instance afterwards only when reusing and it did not fault.
    async fn reconcile(
        &self,
        key: &str,
        attempt: u32,
        kept: &mut Option<(Guest, Instance)>,
    ) -> Outcome {
        let Version { guest, services } = self.version.read().clone();
        // An instance of a version since replaced is dropped.
        let reusable = kept.take().filter(|(from, _)| from.is_same_load(&guest));
        let (mut instance, instantiation) = match reusable {
            Some((_, instance)) => (instance, None),
            None => {
                let services = services as Arc<dyn crate::runtime::services::GuestServices>;
                let started = self.config.clock.now();
                match guest.instantiate(services).await {
                    Ok(instance) => {
                        let took = self.config.clock.now().saturating_duration_since(started);
                        (instance, Some(took))
                    }
                    Err(failed) => {
                        return Outcome {
                            result: Err(failed.error),
                            instantiation: None,
                            memory_high_water: 0,
                            cpu: failed.cpu,
                        };
                    }
                }
            }
        };
        let before = instance.cpu_time();
        let result = instance.reconcile(key, attempt).await;
        let memory_high_water = instance.memory_high_water();
        // A fresh instance's time includes its instantiation.
        let cpu = match instantiation {
            Some(_) => instance.cpu_time(),
            None => instance.cpu_time().saturating_sub(before),
        };
        if self.config.reuse_instances && instance.is_usable() {
            *kept = Some((guest, instance));
        }
        Outcome {
            result,
            instantiation,
            memory_high_water,
            cpu,
        }
    }
}

/// What one reconcile call came to.
struct Outcome {
    result: Result<Action, ReconcileError>,
    instantiation: Option<Duration>,
    memory_high_water: usize,
    cpu: Duration,
}
