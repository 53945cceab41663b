//! Wires one guest to the native core: its manifest's kinds come from the
//! shared informers, handlers map their changes to primary keys in the
//! guest's own rate-limited workqueue, and N workers — started once every
//! cache the guest reads has synced — hand keys to the guest one at a time
//! (a key is never reconciled twice at once) and act on the result:
//! done → forget; requeue-after(d) → forget, add after d; requeue, an error,
//! a trap, a timeout or a memory fault → add rate-limited.

pub mod handlers;
pub mod indexes;
pub mod informers;
pub mod manager;
pub mod services;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::clock::SharedClock;
use crate::informer::shared_informer::{InformerError, SharedInformer};
use crate::kube::Gvk;
use crate::label_selector::LabelSelector;
use crate::runtime::manifest::KeyMapping;
use crate::runtime::{Action, Guest, Instance, ReconcileError};
use crate::workqueue::{QueueConfig, RateLimitingQueue, default_controller_rate_limiter};
use handlers::{KeySink, Mapping, MappingHandler};
use indexes::indexer_name;
use services::{ControllerServices, Writer};

/// A guest's workqueue of primary keys.
pub type GuestQueue = RateLimitingQueue<Arc<str>>;

/// Workers per guest when neither the command line nor the manifest says.
pub const DEFAULT_WORKERS: usize = 2;

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
    #[error("guest {guest}: {message}")]
    Selector {
        /// The guest.
        guest: String,
        /// The parse error.
        message: String,
    },
    /// A handler could not be registered.
    #[error(transparent)]
    Informer(#[from] InformerError),
}

/// Called after every reconcile.
pub type Observer = Arc<dyn Fn(&ReconcileRecord) + Send + Sync>;

/// How a guest is run.
#[derive(Clone)]
pub struct ControllerConfig {
    /// Workers; `None` takes the manifest's concurrency, else
    /// [`DEFAULT_WORKERS`].
    pub workers: Option<usize>,
    /// Keep one instance per worker across reconciles instead of a fresh
    /// instance per reconcile.
    pub reuse_instances: bool,
    /// The time source of the queue and its rate limiter.
    pub clock: SharedClock,
    /// Sees every finished reconcile.
    pub observer: Option<Observer>,
}

impl std::fmt::Debug for ControllerConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ControllerConfig")
            .field("workers", &self.workers)
            .field("reuse_instances", &self.reuse_instances)
            .finish()
    }
}

impl KeySink for GuestQueue {
    fn enqueue(&self, key: &str) {
        self.add(Arc::from(key));
    }
}

/// One guest, wired.
pub struct Controller {
    guest: Guest,
    queue: Arc<GuestQueue>,
    services: Arc<ControllerServices>,
    caches: HashMap<Gvk, Arc<SharedInformer>>,
    workers: usize,
    config: ControllerConfig,
}

impl Controller {
    /// Wires `guest` to the informers of its `caches` (one per kind it
    /// reads, from [`informers::InformerSet::view`]) and registers its
    /// handlers. `writer` is its API access (`None`: writes are unavailable).
    pub fn new(
        guest: Guest,
        caches: HashMap<Gvk, Arc<SharedInformer>>,
        writer: Option<Writer>,
        config: ControllerConfig,
    ) -> Result<Controller, WiringError> {
        let manifest = guest.manifest();
        if let Some(kind) = manifest
            .watched_kinds()
            .into_iter()
            .find(|kind| !caches.contains_key(*kind))
        {
            return Err(WiringError::MissingCache {
                guest: manifest.name.clone(),
                kind: kind.clone(),
            });
        }
        let queue = Arc::new(GuestQueue::with_config(
            Arc::new(default_controller_rate_limiter(config.clock.clone())),
            QueueConfig::named(manifest.name.clone()).with_clock(config.clock.clone()),
        ));
        let selector = |s: &Option<String>| {
            LabelSelector::parse(s.as_deref().unwrap_or("")).map_err(|e| WiringError::Selector {
                guest: manifest.name.clone(),
                message: e.to_string(),
            })
        };
        let primary = &caches[&manifest.primary];
        let sink = Arc::clone(&queue) as Arc<dyn KeySink>;
        primary.add_event_handler_with_resync(
            Arc::new(MappingHandler::new(
                Mapping::Primary,
                selector(&manifest.primary_label_selector)?,
                Arc::clone(&sink),
            )),
            manifest.resync_period.unwrap_or(Duration::ZERO),
        )?;
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
            let handler = MappingHandler::new(
                Mapping::Mapped {
                    mapping,
                    primary: manifest.primary.clone(),
                    index,
                    primary_cache: Arc::clone(primary.indexer()),
                },
                selector,
                Arc::clone(&sink),
            );
            caches[kind].add_event_handler(Arc::new(handler))?;
        }
        let workers = config
            .workers
            .or(manifest.concurrency.map(|c| c as usize))
            .unwrap_or(DEFAULT_WORKERS)
            .max(1);
        let services = Arc::new(ControllerServices::new(
            guest.clone(),
            caches.clone(),
            Arc::clone(&queue),
            writer,
        ));
        Ok(Controller {
            guest,
            queue,
            services,
            caches,
            workers,
            config,
        })
    }

    /// The guest.
    pub fn guest(&self) -> &Guest {
        &self.guest
    }

    /// The guest's workqueue.
    pub fn queue(&self) -> &Arc<GuestQueue> {
        &self.queue
    }

    /// How many workers run.
    pub fn workers(&self) -> usize {
        self.workers
    }

    /// True once every cache the guest reads has synced.
    pub fn has_synced(&self) -> bool {
        self.caches.values().all(|informer| informer.has_synced())
    }

    /// Waits for the caches, then runs the workers until `stop` fires; the
    /// queue then shuts down and workers finish the reconciles in flight.
    pub async fn run(&self, stop: CancellationToken) {
        loop {
            if self.has_synced() {
                break;
            }
            tokio::select! {
                _ = stop.cancelled() => {
                    self.queue.shut_down();
                    return;
                }
                _ = tokio::time::sleep(SYNC_POLL) => {}
            }
        }
        tracing::info!(
            guest = self.guest.name(),
            workers = self.workers,
            "caches synced; starting workers"
        );
        let mut workers = tokio::task::JoinSet::new();
        let name: Arc<str> = Arc::from(self.guest.name());
        for _ in 0..self.workers {
            let worker = Worker {
                name: Arc::clone(&name),
                guest: self.guest.clone(),
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
}

/// One worker: takes keys from the queue and reconciles them.
struct Worker {
    /// The guest's name, shared by the records of its reconciles.
    name: Arc<str>,
    guest: Guest,
    queue: Arc<GuestQueue>,
    services: Arc<ControllerServices>,
    config: ControllerConfig,
}

impl Worker {
    async fn run(self) {
        let mut kept: Option<Instance> = None;
        while let Some(key) = self.queue.get().await {
            let attempt = self.queue.num_requeues(&key);
            let started = self.config.clock.now();
            let result = self.reconcile(&key, attempt, &mut kept).await;
            let duration = self.config.clock.now().saturating_duration_since(started);
            match &result {
                Ok(Action::Done) => self.queue.forget(&key),
                Ok(Action::RequeueAfter(delay)) => {
                    self.queue.forget(&key);
                    self.queue.add_after(Arc::clone(&key), *delay);
                }
                Ok(Action::Requeue) => self.queue.add_rate_limited(Arc::clone(&key)),
                Err(error) => {
                    tracing::warn!(guest = self.guest.name(), key = %key, attempt, "reconcile failed: {error}");
                    self.queue.add_rate_limited(Arc::clone(&key));
                }
            }
            tracing::debug!(guest = self.guest.name(), key = %key, ?duration, "reconciled");
            if let Some(observer) = &self.config.observer {
                observer(&ReconcileRecord {
                    guest: Arc::clone(&self.name),
                    key: Arc::clone(&key),
                    attempt,
                    result,
                    duration,
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
        kept: &mut Option<Instance>,
    ) -> Result<Action, ReconcileError> {
        let mut instance = match kept.take() {
            Some(instance) => instance,
            None => {
                let services =
                    Arc::clone(&self.services) as Arc<dyn crate::runtime::services::GuestServices>;
                self.guest.instantiate(services).await?
            }
        };
        let result = instance.reconcile(key, attempt).await;
        if self.config.reuse_instances && instance.is_usable() {
            *kept = Some(instance);
        }
        result
    }
}
