//! Wires one guest to the native core: its manifest's kinds come from the
//! shared informers of the namespaces it may act in (its view),
//! handlers map their changes to primary keys in the
//! guest's own rate-limited workqueue, and N workers — started once every
//! cache the guest reads has synced — hand keys to the guest one at a time
//! (a key is never reconciled twice at once) and act on the result:
//! done → forget; requeue-after(d) → forget, add after d; requeue, an error,
//! a trap, a timeout or a memory fault → add rate-limited; `forbidden` or
//! `invalid`, which no retry fixes → forget, until the object changes and
//! its handler queues the key again. Workers start
//! only while this host leads (see [`Leadership`]); caches warm up before.

mod handlers;
mod indexes;
mod informers;
mod manager;
mod services;
mod view;

pub use informers::{InformerKey, InformerPlan, InformerSet, PlanError};
pub use manager::{Manager, ManagerError};
pub use services::{ControllerServices, Writer};

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::watch;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use crate::clock::SharedClock;
use crate::informer::InformerError;
use crate::informer::ReflectorMetricsProvider;
use crate::kube::Gvk;
use crate::label_selector::LabelSelector;
use crate::runtime::manifest::KeyMapping;
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
    /// The time source of the queue and its rate limiter.
    pub clock: SharedClock,
    /// Sees the workers and every finished reconcile.
    pub observer: Option<Observer>,
    /// Exports the metrics of each guest's workqueue (named after it).
    pub queue_metrics: Option<Arc<dyn MetricsProvider>>,
    /// Exports the metrics of each shared informer's reflector.
    pub informer_metrics: Option<Arc<dyn ReflectorMetricsProvider>>,
}

impl Default for ControllerConfig {
    fn default() -> Self {
        ControllerConfig {
            workers: None,
            max_workers: DEFAULT_MAX_WORKERS,
            max_queue_depth: DEFAULT_MAX_QUEUE_DEPTH,
            reuse_instances: false,
            clock: crate::clock::SystemClock::shared(),
            observer: None,
            queue_metrics: None,
            informer_metrics: None,
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
    /// The new version's manifest differs: a reload swaps the code and
    /// keeps the wiring (informers, handlers, permissions), so it needs the
    /// same manifest.
    #[error(
        "guest {guest}: the new version changes its manifest ({changes}); a reload keeps the \
         informers, key mappings and permissions as they are, so restart the host to apply it"
    )]
    ManifestChanged {
        /// The guest.
        guest: String,
        /// The manifest's fields that differ.
        changes: String,
    },
}

/// One guest, wired.
pub struct Controller {
    /// The running version: swapped by [`Controller::reload`], read by each
    /// worker before each reconcile.
    guest: Arc<parking_lot::RwLock<Guest>>,
    queue: Arc<GuestQueue>,
    services: Arc<ControllerServices>,
    view: GuestView,
    workers: usize,
    config: ControllerConfig,
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
        let manifest = guest.manifest();
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
        let mut queue_config =
            QueueConfig::named(manifest.name.clone()).with_clock(config.clock.clone());
        if let Some(provider) = &config.queue_metrics {
            queue_config = queue_config.with_metrics_provider(Arc::clone(provider));
        }
        let queue = Arc::new(GuestQueue::with_config(
            Arc::new(default_controller_rate_limiter(config.clock.clone())),
            queue_config,
        ));
        let selector = |s: &Option<String>| {
            LabelSelector::parse(s.as_deref().unwrap_or("")).map_err(|source| {
                WiringError::Selector {
                    guest: manifest.name.clone(),
                    source,
                }
            })
        };
        let informers = |kind: &Gvk| view.kind(kind).map_or(&[][..], |k| k.informers());
        let sink = Arc::clone(&queue) as Arc<dyn KeySink>;
        let primary = Arc::new(MappingHandler::new(
            Mapping::Primary,
            selector(&manifest.primary_label_selector)?,
            Arc::clone(&sink),
        ));
        for informer in informers(&manifest.primary) {
            informer.add_event_handler_with_resync(
                Arc::clone(&primary) as _,
                manifest.resync_period.unwrap_or(Duration::ZERO),
            )?;
        }
        let primary_caches = view
            .kind(&manifest.primary)
            .map(|primary| primary.indexers())
            .unwrap_or_default();
        let mut mapped: Vec<(&Gvk, KeyMapping, LabelSelector)> = manifest
            .owns
            .iter()
            .map(|kind| (kind, KeyMapping::ControllerOwner, LabelSelector::default()))
            .collect();
        for watch in &manifest.watches {
            mapped.push((
                &watch.kind,
                watch.mapping.clone(),
                selector(&watch.label_selector)?,
            ));
        }
        for (kind, mapping, selector) in mapped {
            let index = match &mapping {
                KeyMapping::ByIndex(name) => Some(indexer_name(&manifest.name, name)),
                _ => None,
            };
            let handler = Arc::new(MappingHandler::new(
                Mapping::Mapped {
                    mapping,
                    primary: manifest.primary.clone(),
                    index,
                    primary_caches: primary_caches.clone(),
                },
                selector,
                Arc::clone(&sink),
            ));
            // Only the primary kind's handler resyncs (the manifest's
            // period): a resync replays primaries, not what maps to them.
            for informer in informers(kind) {
                informer
                    .add_event_handler_with_resync(Arc::clone(&handler) as _, Duration::ZERO)?;
            }
        }
        let workers = match (config.workers, manifest.concurrency) {
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
        .max(1);
        let services = Arc::new(ControllerServices::new(
            guest.clone(),
            view.clone(),
            Arc::clone(&queue),
            config.max_queue_depth,
            writer,
        ));
        Ok(Controller {
            guest: Arc::new(parking_lot::RwLock::new(guest)),
            queue,
            services,
            view,
            workers,
            config,
        })
    }

    /// The running version of the guest.
    pub fn guest(&self) -> Guest {
        self.guest.read().clone()
    }

    /// Makes `new` the running version: reconciles that start from now on
    /// run it, those in flight finish on the old one (a worker's kept
    /// instance is dropped before its next reconcile). Its manifest must
    /// be the running one's, since the informers, handlers and permissions
    /// stay as they are.
    pub fn reload(&self, new: Guest) -> Result<(), ReloadError> {
        let mut running = self.guest.write();
        let (old, next) = (running.manifest(), new.manifest());
        let fields: [(&str, bool); 10] = [
            ("name", old.name == next.name),
            ("primary", old.primary == next.primary),
            (
                "primary label selector",
                old.primary_label_selector == next.primary_label_selector,
            ),
            ("owns", old.owns == next.owns),
            ("watches", old.watches == next.watches),
            ("indexes", old.indexes == next.indexes),
            ("writes", old.writes == next.writes),
            ("prune", old.prune_fields == next.prune_fields),
            ("resync", old.resync_period == next.resync_period),
            ("concurrency", old.concurrency == next.concurrency),
        ];
        let changes: Vec<&str> = fields
            .iter()
            .filter(|(_, same)| !same)
            .map(|(field, _)| *field)
            .collect();
        if !changes.is_empty() || old != next {
            return Err(ReloadError::ManifestChanged {
                guest: old.name.clone(),
                changes: match changes.is_empty() {
                    true => "other fields".to_string(),
                    false => changes.join(", "),
                },
            });
        }
        *running = new;
        Ok(())
    }

    /// The guest's workqueue.
    pub fn queue(&self) -> &Arc<GuestQueue> {
        &self.queue
    }

    /// How many workers run.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// The names of the informers the guest reads, sorted.
    pub fn informer_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self
            .view
            .informers()
            .map(|informer| informer.name().to_string())
            .collect();
        names.sort();
        names.dedup();
        names
    }

    /// True once every cache the guest reads has synced.
    pub fn has_synced(&self) -> bool {
        self.view.has_synced()
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
        tracing::info!(guest = &*name, workers = self.workers, "starting workers");
        if let Some(observer) = &self.config.observer {
            observer.workers_started(&name, self.workers);
        }
        let mut workers = tokio::task::JoinSet::new();
        for _ in 0..self.workers {
            let worker = Worker {
                name: Arc::clone(&name),
                guest: Arc::clone(&self.guest),
                queue: Arc::clone(&self.queue),
                services: Arc::clone(&self.services),
                config: self.config.clone(),
            };
            workers.spawn(worker.run());
        }
        stop.cancelled().await;
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

/// One worker: takes keys from the queue and reconciles them.
struct Worker {
    /// The guest's name, shared by the records of its reconciles.
    name: Arc<str>,
    /// The running version of the guest.
    guest: Arc<parking_lot::RwLock<Guest>>,
    queue: Arc<GuestQueue>,
    services: Arc<ControllerServices>,
    config: ControllerConfig,
}

impl Worker {
    async fn run(self) {
        let mut kept: Option<(Guest, Instance)> = None;
        while let Some(key) = self.queue.get().await {
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
            match &result {
                Ok(Action::Done) => self.queue.forget(&key),
                Ok(Action::RequeueAfter(delay)) => {
                    self.queue.forget(&key);
                    self.queue.add_after(Arc::clone(&key), *delay);
                }
                Ok(Action::Requeue) => self.queue.add_rate_limited(Arc::clone(&key)),
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
        let guest = self.guest.read().clone();
        // An instance of a version since replaced is dropped.
        let reusable = kept.take().filter(|(from, _)| from.is_same_load(&guest));
        let (mut instance, instantiation) = match reusable {
            Some((_, instance)) => (instance, None),
            None => {
                let services =
                    Arc::clone(&self.services) as Arc<dyn crate::runtime::services::GuestServices>;
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
