//! The manager: every guest of one host, run together. It plans and builds
//! the shared informers for all their manifests, each guest's in the
//! namespaces it may act in, wires a [`Controller`] per guest, then runs the
//! informers and the controllers until told to stop. A guest's new version
//! is wired in while it runs ([`Manager::reload`]): the informers it adds
//! start and sync first, those it keeps stay warm, and those no guest
//! reads any more stop.

use std::collections::HashSet;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

use super::informers::{
    InformerFactory, InformerKey, InformerPlan, InformerSet, InformerSource, PlanError,
};
use super::services::Writer;
use super::{Controller, ControllerConfig, Leadership, ReloadError, SYNC_POLL, WiringError};
use crate::informer::{Indexer, SharedInformer};
use crate::kube::Gvk;
use crate::policy::Namespaces;
use crate::runtime::Guest;
use crate::runtime::{BudgetError, check_budget};

/// Why guests could not be wired.
#[derive(Debug, thiserror::Error)]
pub enum ManagerError {
    /// The guests' requirements conflict.
    #[error(transparent)]
    Plan(#[from] PlanError),
    /// A guest could not be wired.
    #[error(transparent)]
    Wiring(#[from] WiringError),
    /// The guests' workers do not fit the runtime's instance slots or
    /// memory budgets.
    #[error(transparent)]
    Budget(#[from] BudgetError),
}

/// What a reload changed in the shared informers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reloaded {
    /// Informers started for the new version.
    pub started: Vec<InformerKey>,
    /// Informers stopped: no guest reads them any more.
    pub stopped: Vec<InformerKey>,
}

/// Every guest of a host and the informers they share.
pub struct Manager {
    informers: Mutex<InformerSet>,
    controllers: Vec<Controller>,
    /// The parent of every informer's stop.
    informers_stop: CancellationToken,
    /// The informers' tasks while they run; `None` before and after.
    tasks: Mutex<Option<JoinSet<()>>>,
}

impl Manager {
    /// Plans the informers of `guests`, each with the namespaces it may act
    /// in (every kind it watches, in each of them; a kind of
    /// `cluster_scoped` once, in none), builds each informer over the
    /// lister-watcher `source` makes for it, and wires every guest with the
    /// API access `writer` gives it.
    pub fn new(
        guests: Vec<(Guest, Namespaces)>,
        cluster_scoped: HashSet<Gvk>,
        config: &ControllerConfig,
        source: InformerSource,
        mut writer: impl FnMut(&Guest) -> Option<Writer>,
    ) -> Result<Manager, ManagerError> {
        let mut plan = InformerPlan::with_cluster_scoped(cluster_scoped);
        for (guest, namespaces) in &guests {
            plan.add_guest(guest.manifest(), namespaces)?;
        }
        let informers_stop = CancellationToken::new();
        let factory = InformerFactory {
            clock: config.clock.clone(),
            metrics: config.informer_metrics.clone(),
            source,
            compression: config.cache_compression,
            recoveries: config.recoveries.clone(),
        };
        let informers = plan.build(factory, &informers_stop);
        let mut controllers = Vec::with_capacity(guests.len());
        for (guest, _) in guests {
            let view = informers.view(guest.name());
            let writer = writer(&guest);
            controllers.push(Controller::new(guest, view, writer, config.clone())?);
        }
        check_workers(&controllers, None)?;
        Ok(Manager {
            informers: Mutex::new(informers),
            controllers,
            informers_stop,
            tasks: Mutex::new(None),
        })
    }

    /// The controllers, one per guest.
    pub fn controllers(&self) -> &[Controller] {
        &self.controllers
    }

    /// The shared informers' names and caches, in a stable order.
    pub fn caches(&self) -> Vec<(String, Arc<Indexer>)> {
        self.informers
            .lock()
            .all()
            .into_iter()
            .map(|(key, informer, _)| (key.to_string(), Arc::clone(informer.indexer())))
            .collect()
    }

    /// How many shared informers there are.
    pub fn informer_count(&self) -> usize {
        self.informers.lock().len()
    }

    /// True once every guest's caches have synced.
    pub fn has_synced(&self) -> bool {
        self.controllers.iter().all(Controller::has_synced)
    }

    /// Runs informers at once and each controller's workers once its caches
    /// have synced and `leading` says this host leads, until `stop` fires;
    /// then waits for the reconciles in flight and the informers to end.
    pub async fn run(&self, stop: CancellationToken, leading: Leadership) {
        {
            let informers = self.informers.lock();
            let mut tasks = JoinSet::new();
            for (key, informer, informer_stop) in informers.all() {
                spawn_informer(&mut tasks, key, informer, informer_stop);
            }
            *self.tasks.lock() = Some(tasks);
        }
        futures::future::join_all(
            self.controllers
                .iter()
                .map(|controller| controller.run(stop.clone(), leading.clone())),
        )
        .await;
        self.informers_stop.cancel();
        let tasks = self.tasks.lock().take();
        if let Some(mut tasks) = tasks {
            while tasks.join_next().await.is_some() {}
        }
    }

    /// Wires `new`, a new version of the guest of controller `index` acting
    /// in `namespaces`, while the host runs: the informers it adds start
    /// and must sync within `sync_timeout` (else they stop again and the
    /// running version stays), the indexes it adds are built on the
    /// informers it keeps, its handlers replace the running version's, it
    /// takes over new reconciles, and the informers no guest reads any
    /// more stop.
    pub async fn reload(
        &self,
        index: usize,
        new: Guest,
        namespaces: &Namespaces,
        sync_timeout: Duration,
    ) -> Result<Reloaded, ReloadError> {
        let controller = &self.controllers[index];
        controller.check_reload(&new)?;
        let guest = new.name().to_string();
        // Its workers must fit beside the other guests' (reloads of a host
        // come one at a time).
        check_workers(&self.controllers, Some((index, &new))).map_err(|source| {
            ReloadError::Budget {
                guest: guest.clone(),
                source,
            }
        })?;
        let rewiring = self
            .informers
            .lock()
            .prepare(new.manifest(), namespaces)
            .map_err(|source| ReloadError::Rewire {
                guest: guest.clone(),
                source,
            })?;
        {
            let mut tasks = self.tasks.lock();
            let Some(tasks) = tasks
                .as_mut()
                .filter(|_| !self.informers_stop.is_cancelled())
            else {
                rewiring.abandon();
                return Err(ReloadError::NotRunning { guest });
            };
            for (key, informer, stop) in rewiring.added() {
                tracing::info!(guest = %guest, informer = %key, "starting an informer for the new version");
                spawn_informer(tasks, key, informer, stop);
            }
        }
        let deadline = tokio::time::Instant::now() + sync_timeout;
        loop {
            let unsynced: Vec<String> = rewiring
                .added()
                .filter(|(_, informer, _)| !informer.has_synced())
                .map(|(key, _, _)| key.to_string())
                .collect();
            if unsynced.is_empty() {
                break;
            }
            if tokio::time::Instant::now() >= deadline {
                rewiring.abandon();
                return Err(ReloadError::NotSynced {
                    guest,
                    timeout: sync_timeout,
                    informers: unsynced.join(", "),
                });
            }
            tokio::time::sleep(SYNC_POLL).await;
        }
        let (view, (started, stopped)) = {
            let mut informers = self.informers.lock();
            let view = informers.prepared_view(&rewiring);
            (view, informers.commit(rewiring))
        };
        controller.reload(new, view)?;
        for key in &stopped {
            tracing::info!(informer = %key, "stopped an informer no guest reads any more");
        }
        Ok(Reloaded { started, stopped })
    }
}

/// Checks that the workers of `controllers` fit their runtime's instance
/// slots and memory budgets, with the one at `index` running `new`
/// instead when `replaced` is `Some((index, new))`.
fn check_workers(
    controllers: &[Controller],
    replaced: Option<(usize, &Guest)>,
) -> Result<(), BudgetError> {
    let running: Vec<(Guest, usize)> = controllers
        .iter()
        .enumerate()
        .map(|(i, controller)| match replaced {
            Some((index, new)) if index == i => (new.clone(), controller.workers_for(new)),
            _ => (controller.guest(), controller.workers()),
        })
        .collect();
    let reservations: Vec<(&Guest, usize)> = running.iter().map(|(g, w)| (g, *w)).collect();
    check_budget(&reservations)
}

/// Runs `informer` among `tasks` until `stop`.
fn spawn_informer(
    tasks: &mut JoinSet<()>,
    key: &InformerKey,
    informer: &Arc<SharedInformer>,
    stop: &CancellationToken,
) {
    let (informer, stop, name) = (Arc::clone(informer), stop.clone(), key.to_string());
    tasks.spawn(async move {
        if let Err(e) = informer.run(stop).await {
            tracing::error!(informer = %name, "informer ended: {e}");
        }
    });
}
