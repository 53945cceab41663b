//! The manager: every guest of one host, run together. It plans and builds
//! the shared informers for all their manifests, each guest's in the
//! namespaces it may act in, wires a [`Controller`] per guest, then runs the
//! informers and the controllers until told to stop.

use std::collections::HashSet;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

use super::informers::{InformerKey, InformerPlan, InformerSet, PlanError};
use super::services::Writer;
use super::{Controller, ControllerConfig, Leadership, WiringError};
use crate::informer::ListerWatcher;
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

/// Every guest of a host and the informers they share.
pub struct Manager {
    informers: InformerSet,
    controllers: Vec<Controller>,
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
        source: impl FnMut(&InformerKey) -> Arc<dyn ListerWatcher>,
        mut writer: impl FnMut(&Guest) -> Option<Writer>,
    ) -> Result<Manager, ManagerError> {
        let mut plan = InformerPlan::with_cluster_scoped(cluster_scoped);
        for (guest, namespaces) in &guests {
            plan.add_guest(guest.manifest(), namespaces)?;
        }
        let informers = plan.build(
            config.clock.clone(),
            config.informer_metrics.as_deref(),
            source,
        );
        let mut controllers = Vec::with_capacity(guests.len());
        for (guest, _) in guests {
            let view = informers.view(guest.name());
            let writer = writer(&guest);
            controllers.push(Controller::new(guest, view, writer, config.clone())?);
        }
        let running: Vec<(Guest, usize)> = controllers
            .iter()
            .map(|c| (c.guest(), c.workers()))
            .collect();
        let reservations: Vec<(&Guest, usize)> = running.iter().map(|(g, w)| (g, *w)).collect();
        check_budget(&reservations)?;
        Ok(Manager {
            informers,
            controllers,
        })
    }

    /// The controllers, one per guest.
    pub fn controllers(&self) -> &[Controller] {
        &self.controllers
    }

    /// The shared informers.
    pub fn informers(&self) -> &InformerSet {
        &self.informers
    }

    /// True once every guest's caches have synced.
    pub fn has_synced(&self) -> bool {
        self.controllers.iter().all(Controller::has_synced)
    }

    /// Runs informers at once and each controller's workers once its caches
    /// have synced and `leading` says this host leads, until `stop` fires;
    /// then waits for the reconciles in flight and the informers to end.
    pub async fn run(&self, stop: CancellationToken, leading: Leadership) {
        let informers_stop = CancellationToken::new();
        let mut informer_tasks = tokio::task::JoinSet::new();
        for (key, informer) in self.informers.all() {
            let (informer, stop, name) = (
                Arc::clone(informer),
                informers_stop.clone(),
                key.to_string(),
            );
            informer_tasks.spawn(async move {
                if let Err(e) = informer.run(stop).await {
                    tracing::error!(informer = %name, "informer ended: {e}");
                }
            });
        }
        futures::future::join_all(
            self.controllers
                .iter()
                .map(|controller| controller.run(stop.clone(), leading.clone())),
        )
        .await;
        informers_stop.cancel();
        while informer_tasks.join_next().await.is_some() {}
    }
}
