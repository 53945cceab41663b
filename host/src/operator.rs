//! The operator: a running host wired from its settings, in one place. It
//! loads the guests and grants each what the policy allows, connects to the
//! API server with the client-side rate limits shared among the guests,
//! serves the metrics and health endpoints, builds the controllers and their
//! shared informers, and runs them (while leading, with leader election)
//! until stopped. `host run` parses its flags into an [`OperatorConfig`]
//! and calls [`run`]; nothing here knows of flags.

use std::collections::{HashMap, HashSet};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

use crate::built_in_kinds::{built_in_kind, usable};
use crate::clock::SystemClock;
use crate::controller::Writer;
use crate::controller::{ControllerConfig, always_leading};
use crate::controller::{InformerKey, Manager, ManagerError};
use crate::kube::{ApiClient, ServedSchema, served_schema};
use crate::kube::{ClientRateLimiter, RateLimit};
use crate::kube::{ConfigError, ConnectOptions};
use crate::kube::{Discovery, Gvk, PROBE_INTERVAL, probe_while_down};
use crate::ops::{
    BindError, Health, LeaderElectionConfig, LeaderElector, LeadershipLost, Metrics, SyncProgress,
    start_server,
};
use crate::policy::{Grant, GrantError, Namespaces, Policy, PolicyError, kind_name, listed};
use crate::registry::{self, RegistryError, RegistryOptions};
use crate::runtime::manifest::Manifest;
use crate::runtime::{Guest, LoadError, Runtime, RuntimeConfig, RuntimeError};

/// What a running host is made of. `runtime.limit_observer` is set by
/// [`run`] to the host's metrics.
#[derive(Debug)]
pub struct OperatorConfig {
    /// The guests, in load order: component files or `oci://` references.
    pub guests: Vec<PathBuf>,
    /// How to reach the registries of `oci://` guests.
    pub registry: RegistryOptions,
    /// Look for new versions of the guests this often.
    pub watch: Option<Duration>,
    /// Look for new versions of the guests when notified (SIGHUP).
    pub reload: Option<Arc<Notify>>,
    /// The operator's grants; `None`: each manifest is granted what it
    /// declares.
    pub policy: Option<PathBuf>,
    /// The namespaces the host acts in; empty: all.
    pub namespaces: Vec<String>,
    /// How to reach the API server.
    pub connect: ConnectOptions,
    /// Each guest's client-side rate limit; the host's own share is one
    /// more of the same.
    pub rate_limit: RateLimit,
    /// The guests' sandbox and limits.
    pub runtime: RuntimeConfig,
    /// Workers per guest; `None`: each manifest's concurrency.
    pub workers: Option<usize>,
    /// The most workers a manifest may ask for.
    pub max_workers: usize,
    /// The most keys a guest may queue itself.
    pub max_queue_depth: usize,
    /// Keep an instance per worker across reconciles.
    pub reuse_instances: bool,
    /// Compress the informers' cached objects.
    pub cache_compression: bool,
    /// Retry failed keys and backing-off informers at once when the API
    /// server answers again after an outage.
    pub outage_recovery: bool,
    /// Where `/metrics` is served, if anywhere.
    pub metrics_bind: Option<SocketAddr>,
    /// Where `/healthz` and `/readyz` are served, if anywhere.
    pub health_bind: Option<SocketAddr>,
    /// How long a reflector may fail to reach the API server before
    /// `/healthz` fails.
    pub unhealthy_after: Duration,
    /// Draw the sync progress on stderr (text logs on a terminal).
    pub progress_on_stderr: bool,
    /// Run workers only while holding this Lease.
    pub leader_election: Option<LeaderElectionConfig>,
    /// How long reconciles in flight may take to finish once stopped.
    pub shutdown_timeout: Duration,
    /// `reportingInstance` of the host's events.
    pub reporting_instance: String,
}

/// Why the host could not start or did not stop cleanly.
#[derive(Debug, thiserror::Error)]
pub enum OperatorError {
    /// The policy file was refused.
    #[error(transparent)]
    Policy(#[from] PolicyError),
    /// The guest runtime could not be created.
    #[error(transparent)]
    Runtime(#[from] RuntimeError),
    /// Every guest was rejected.
    #[error("no guest could be loaded")]
    NoGuest,
    /// No client for the API server.
    #[error(transparent)]
    Connect(#[from] ConfigError),
    /// The endpoints could not listen.
    #[error(transparent)]
    Endpoints(#[from] BindError),
    /// The guests' informers could not be planned.
    #[error(transparent)]
    Manager(#[from] ManagerError),
    /// The host lost its Lease while leading.
    #[error(transparent)]
    LeadershipLost(#[from] LeadershipLost),
    /// The leader election task failed.
    #[error("leader election: {0}")]
    Election(#[source] tokio::task::JoinError),
}

/// Why a guest was not started (the others are).
#[derive(Debug, thiserror::Error)]
enum Rejection {
    /// It could not be read, or fetched from its registry.
    #[error(transparent)]
    Fetch(#[from] RegistryError),
    /// It could not be loaded.
    #[error(transparent)]
    Load(#[from] LoadError),
    /// The policy does not grant what it asks for.
    #[error("{path}: {source}")]
    Policy {
        /// The component.
        path: String,
        /// What is not granted.
        source: GrantError,
    },
}

/// Runs the host until `stop` is cancelled (then waits up to the shutdown
/// timeout for reconciles in flight) or its leadership is lost.
pub async fn run(mut config: OperatorConfig, stop: CancellationToken) -> Result<(), OperatorError> {
    let clock = SystemClock::shared();
    let health = Health::new(clock.clone(), config.unhealthy_after);
    let progress = if config.progress_on_stderr {
        SyncProgress::for_stderr(clock.clone())
    } else {
        SyncProgress::new(clock.clone(), None)
    };
    let metrics = Metrics::new(Arc::clone(&health), Arc::new(progress));
    config.runtime.limit_observer = Some(metrics.clone());
    let policy = config.policy.as_deref().map(Policy::load).transpose()?;
    let host_namespaces = Namespaces::from_flags(&config.namespaces);
    let cache_dir = config.runtime.cache_dir.clone();
    let runtime = Runtime::new(config.runtime)?;
    let mut reloading = Reloading {
        runtime: runtime.clone(),
        policy: policy.clone(),
        host_namespaces: host_namespaces.clone(),
        registry: config.registry.clone(),
        cache_dir,
        health: Arc::clone(&health),
        client: None,
    };
    let mut guests: Vec<(Guest, Namespaces)> = Vec::new();
    let mut sources: Vec<Source> = Vec::new();
    for path in &config.guests {
        // A guest that cannot be loaded, or is not granted what it asks
        // for, is rejected alone.
        match reloading.admit(path).await {
            Ok((guest, namespaces, fingerprint)) => {
                log_grant(&guest, &namespaces, policy.as_ref());
                sources.push(Source {
                    given: path.clone(),
                    fingerprint,
                    granted: policy
                        .is_none()
                        .then(|| Grant::of_manifest(guest.manifest(), &namespaces)),
                    controller: guests.len(),
                });
                guests.push((guest, namespaces));
            }
            Err(e) => {
                tracing::error!(path = %path.display(), "guest rejected: {e}");
                let name = path.file_stem().map_or_else(
                    || path.display().to_string(),
                    |s| s.to_string_lossy().into(),
                );
                health.guest_rejected(&name, &e.to_string());
            }
        }
    }
    if guests.is_empty() {
        return Err(OperatorError::NoGuest);
    }
    // The host's own share (list, watch, leader election) plus one per guest.
    let shares = guests.len() as u32 + 1;
    let per_guest = config.rate_limit;
    let host = RateLimit::new(
        per_guest.qps * f64::from(shares),
        per_guest.burst.saturating_mul(shares),
    );
    let limiter = ClientRateLimiter::new(host, per_guest, clock.clone(), metrics.clone());
    let client = crate::kube::connect(&config.connect, limiter).await?;
    let endpoints_stop = CancellationToken::new();
    let _stop_endpoints = endpoints_stop.clone().drop_guard();
    start_server(
        config.metrics_bind,
        config.health_bind,
        Arc::clone(&metrics),
        Arc::clone(&health),
        endpoints_stop,
    )
    .await?;
    let discovery = Arc::new(Discovery::new(client.clone()));
    let controller_config = ControllerConfig {
        workers: config.workers,
        max_workers: config.max_workers,
        max_queue_depth: config.max_queue_depth,
        reuse_instances: config.reuse_instances,
        cache_compression: config.cache_compression,
        clock: clock.clone(),
        observer: Some(metrics.clone()),
        queue_metrics: Some(metrics.clone()),
        informer_metrics: Some(metrics.clone()),
        recoveries: config
            .outage_recovery
            .then(|| client.reachability().recoveries()),
    };
    client.reachability().observe({
        let metrics = Arc::clone(&metrics);
        move |reachable| metrics.api_server_reachable(reachable)
    });
    // While the server is down, its readiness is asked every second, so
    // the informers retry within a second of its return.
    tokio::spawn(probe_while_down(
        client.clone(),
        PROBE_INTERVAL,
        clock.clone(),
        stop.clone(),
    ));
    // What the initial sync's queues freed goes back to the system.
    tokio::spawn(crate::ops::memory::run(clock.clone(), stop.clone()));
    let (guests, sources) = check_served_schemas(&client, guests, sources, &health).await;
    reloading.client = Some(client.clone());
    if guests.is_empty() {
        return Err(OperatorError::NoGuest);
    }
    let instance = config.reporting_instance;
    let cluster_scoped = cluster_scoped_kinds(&discovery).await;
    let manager = Manager::new(
        guests,
        cluster_scoped,
        &controller_config,
        {
            let (client, discovery) = (client.clone(), Arc::clone(&discovery));
            Arc::new(move |key: &InformerKey, compactor| {
                key.discovered(&client, &discovery, compactor)
            })
        },
        |guest| {
            Some(Writer {
                client: client.for_guest(guest.name()),
                discovery: Arc::clone(&discovery),
                reporting_instance: instance.clone(),
            })
        },
    )?;
    let manager = Arc::new(manager);
    metrics.watch_caches(manager.caches());
    for (index, controller) in manager.controllers().iter().enumerate() {
        let synced = Arc::clone(&manager);
        health.guest(
            controller.guest().name(),
            &controller.informer_names(),
            Box::new(move || synced.controllers()[index].has_synced()),
        );
    }
    health.guests_registered();
    tracing::info!(
        guests = manager.controllers().len(),
        informers = manager.informer_count(),
        "running"
    );

    // Leadership: always, or while holding the Lease. Losing it stops the
    // workers and fails the run, as controller-runtime exits.
    let release = CancellationToken::new();
    let (leading, election_task) = match config.leader_election {
        None => (always_leading(), None),
        Some(election) => {
            let (tx, rx) = tokio::sync::watch::channel(false);
            let status = metrics.leader_status(&election.name);
            let elector = LeaderElector::new(election, client.clone(), clock.clone(), Some(status));
            let (release, lost_stop) = (release.clone(), stop.clone());
            let task = tokio::spawn(async move {
                let result = elector.run(&release, &tx).await;
                if let Err(lost) = &result {
                    tracing::error!("{lost}");
                    lost_stop.cancel();
                }
                result
            });
            (rx, Some(task))
        }
    };

    if config.watch.is_some() || config.reload.is_some() {
        let reload = reload_guests(
            reloading,
            sources,
            Arc::clone(&manager),
            Arc::clone(&metrics),
            config.watch,
            config.reload,
            stop.clone(),
        );
        tokio::spawn(reload);
    }
    let run = manager.run(stop.clone(), leading);
    tokio::pin!(run);
    tokio::select! {
        _ = &mut run => {}
        _ = stop.cancelled() => {
            if tokio::time::timeout(config.shutdown_timeout, &mut run).await.is_err() {
                tracing::warn!(
                    timeout = ?config.shutdown_timeout,
                    "reconciles still running at the shutdown timeout were abandoned"
                );
            }
        }
    }
    // Only now, with no worker left, may another host lead.
    release.cancel();
    if let Some(task) = election_task {
        task.await.map_err(OperatorError::Election)??;
    }
    tracing::info!("stopped");
    Ok(())
}

/// What admitting a guest takes, at start and at each reload.
struct Reloading {
    runtime: Runtime,
    policy: Option<Policy>,
    host_namespaces: Namespaces,
    registry: RegistryOptions,
    cache_dir: Option<PathBuf>,
    /// Learns which informers a reloaded guest reads.
    health: Arc<Health>,
    /// The server whose schemas a new version's paths of custom resources
    /// are checked against, once connected.
    client: Option<ApiClient>,
}

/// A running guest's source, as `--guest` gave it.
struct Source {
    given: PathBuf,
    /// The SHA-256 of the component running (or last refused).
    fingerprint: String,
    /// Without a policy, what its first version was granted: what its
    /// manifest asked for. A new version may not ask for more.
    granted: Option<Grant>,
    /// Its controller's index in the manager.
    controller: usize,
}

/// How long the caches a guest's new version adds have to sync.
const RELOAD_SYNC_TIMEOUT: Duration = Duration::from_secs(60);

impl Reloading {
    /// The component `given` names (pulled when it is an `oci://` one) and
    /// its digest.
    async fn fetch(&self, given: &Path) -> Result<(PathBuf, String), Rejection> {
        let component = registry::resolve(given, &self.registry, self.cache_dir.as_deref()).await?;
        Ok((component.path, component.digest))
    }

    /// Loads the guest `given` names and grants it what its manifest asks
    /// for, within the policy when there is one: the namespaces it may act
    /// in (its grant's within the host's) and its own directories.
    async fn admit(&self, given: &Path) -> Result<(Guest, Namespaces, String), Rejection> {
        let (path, fingerprint) = self.fetch(given).await?;
        if path != given {
            tracing::info!(guest = %given.display(), path = %path.display(), "pulled");
        }
        let (guest, namespaces) = self.load(&path).await?;
        Ok((guest, namespaces, fingerprint))
    }

    async fn load(&self, path: &Path) -> Result<(Guest, Namespaces), Rejection> {
        let guest = self.runtime.load(path).await?;
        let Some(policy) = &self.policy else {
            return Ok((guest, self.host_namespaces.clone()));
        };
        let namespaces = policy
            .admit(guest.manifest(), &self.host_namespaces)
            .map_err(|source| Rejection::Policy {
                path: path.display().to_string(),
                source,
            })?;
        // Admitted, so granted: its directories are its own.
        let dirs = policy
            .grant(guest.name())
            .map_or_else(Vec::new, |grant| grant.dirs.clone());
        Ok((guest.with_dirs(dirs), namespaces))
    }

    /// Replaces the guest of `source` with its new version, if it has one
    /// that loads and is granted what it asks for (by the policy, else by
    /// what the first version asked for); `Some(true)` when it did.
    async fn reload(&self, source: &mut Source, manager: &Manager) -> Option<bool> {
        let controller = &manager.controllers()[source.controller];
        let name = controller.guest().name().to_string();
        let (path, fingerprint) = match self.fetch(&source.given).await {
            Ok(fetched) => fetched,
            Err(e) => {
                tracing::warn!(guest = %name, "cannot look for a new version: {e}");
                return None;
            }
        };
        if fingerprint == source.fingerprint {
            return None;
        }
        // Looked at once: refused bytes are not tried again.
        source.fingerprint = fingerprint;
        let refused = match self.load(&path).await {
            Ok((guest, namespaces)) => {
                let excess = source
                    .granted
                    .as_ref()
                    .map(|granted| granted.excess(guest.manifest()))
                    .unwrap_or_default();
                let schema_errors = match &self.client {
                    Some(client) => {
                        served_schema_errors(client, guest.manifest(), &mut HashMap::new()).await
                    }
                    None => None,
                };
                if let Some(errors) = schema_errors {
                    errors
                } else if excess.is_empty() {
                    let reloaded = manager
                        .reload(source.controller, guest, &namespaces, RELOAD_SYNC_TIMEOUT)
                        .await;
                    match reloaded {
                        Ok(reloaded) => {
                            self.health
                                .guest_informers(&name, &controller.informer_names());
                            tracing::info!(
                                guest = %name,
                                path = %path.display(),
                                started = reloaded.started.len(),
                                stopped = reloaded.stopped.len(),
                                "reloaded: new reconciles run the new version"
                            );
                            return Some(true);
                        }
                        Err(e) => e.to_string(),
                    }
                } else {
                    format!(
                        "it asks for more than its first version was granted (no --policy): {}; \
                         grant it with --policy, or restart the host",
                        listed(&excess)
                    )
                }
            }
            Err(e) => e.to_string(),
        };
        tracing::error!(guest = %name, "new version refused, the running one stays: {refused}");
        Some(false)
    }
}

/// Looks for new versions of the running guests every `watch` and at each
/// `trigger`, until `stop`.
async fn reload_guests(
    reloading: Reloading,
    mut sources: Vec<Source>,
    manager: Arc<Manager>,
    metrics: Arc<Metrics>,
    watch: Option<Duration>,
    trigger: Option<Arc<Notify>>,
    stop: CancellationToken,
) {
    let clock = SystemClock::shared();
    loop {
        let tick = async {
            match watch {
                Some(every) => clock.sleep(every).await,
                None => std::future::pending().await,
            }
        };
        let triggered = async {
            match &trigger {
                Some(trigger) => trigger.notified().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = tick => {}
            _ = triggered => {}
        }
        for source in &mut sources {
            if let Some(success) = reloading.reload(source, &manager).await {
                let name = manager.controllers()[source.controller].guest();
                metrics.guest_reloaded(name.name(), success);
                metrics.watch_caches(manager.caches());
            }
        }
    }
}

/// Logs what `guest` holds: the kinds it reads, its writes, its namespaces,
/// whether it records events, its own directories, and who granted them.
fn log_grant(guest: &Guest, namespaces: &Namespaces, policy: Option<&Policy>) {
    let manifest = guest.manifest();
    let reads: Vec<String> = manifest
        .watched_kinds()
        .into_iter()
        .map(|kind| match manifest.metadata_only.contains(kind) {
            true => format!("{} (metadata only)", kind_name(kind)),
            false => kind_name(kind),
        })
        .collect();
    let writes: Vec<String> = manifest
        .writes
        .iter()
        .map(|permission| {
            let verbs: Vec<&str> = permission.verbs.iter().map(|v| v.as_str()).collect();
            format!("{} ({})", kind_name(&permission.kind), verbs.join(", "))
        })
        .collect();
    let dirs: Vec<String> = guest
        .dirs()
        .iter()
        .map(|dir| {
            let mode = if dir.read_only { "ro" } else { "rw" };
            format!("{}::{} ({mode})", dir.host.display(), dir.guest)
        })
        .collect();
    tracing::info!(
        guest = %guest.name(),
        path = %guest.path().display(),
        reads = %reads.join(", "),
        writes = %writes.join(", "),
        namespaces = %namespaces,
        events = manifest.allows_events(),
        dirs = %dirs.join(", "),
        granted_by = %policy.map_or("its manifest (no --policy)", Policy::file),
        "loaded; granted"
    );
}

/// Rejects each guest that indexes or prunes a path of a custom resource
/// that the schema the server serves for it does not have
/// ([`served_schema_errors`]). The guests kept, with their sources
/// renumbered.
async fn check_served_schemas(
    client: &ApiClient,
    guests: Vec<(Guest, Namespaces)>,
    sources: Vec<Source>,
    health: &Health,
) -> (Vec<(Guest, Namespaces)>, Vec<Source>) {
    let mut schemas = HashMap::new();
    let mut kept = (Vec::new(), Vec::new());
    for ((guest, namespaces), mut source) in guests.into_iter().zip(sources) {
        match served_schema_errors(client, guest.manifest(), &mut schemas).await {
            None => {
                source.controller = kept.0.len();
                kept.0.push((guest, namespaces));
                kept.1.push(source);
            }
            Some(errors) => {
                let error = format!("{}: {errors}", source.given.display());
                tracing::error!(guest = %guest.name(), "guest rejected: {error}");
                health.guest_rejected(guest.name(), &error);
            }
        }
    }
    kept
}

/// What is wrong with the paths `manifest` indexes or prunes of custom
/// resources, against the schemas the server serves for them (fetched
/// into `schemas` once per kind); `None` when nothing is. The paths of
/// built-in kinds were checked at load, against k8s-openapi. A kind the
/// server serves no schema for, or does not answer for in
/// [`DISCOVERY_AT_START`], is not checked.
async fn served_schema_errors(
    client: &ApiClient,
    manifest: &Manifest,
    schemas: &mut HashMap<Gvk, Option<ServedSchema>>,
) -> Option<String> {
    let mut errors = Vec::new();
    for used in manifest.field_paths() {
        if built_in_kind(used.kind).is_some() {
            continue;
        }
        if !schemas.contains_key(used.kind) {
            let served = tokio::time::timeout(DISCOVERY_AT_START, served_schema(client, used.kind));
            let schema = match served.await {
                Ok(Ok(schema)) => schema,
                Ok(Err(e)) => {
                    tracing::debug!(kind = %used.kind, "no served schema to check paths against: {e}");
                    None
                }
                Err(_) => None,
            };
            schemas.insert(used.kind.clone(), schema);
        }
        let Some(schema) = &schemas[used.kind] else {
            continue;
        };
        let reached = schema.field_path(used.path);
        if let Err(e) = usable(&used.kind.kind, used.path, reached, used.indexed) {
            errors.push(format!("{}: {e}", used.what));
        }
    }
    (!errors.is_empty()).then(|| {
        format!(
            "invalid manifest against the served schema: {}",
            errors.join("; ")
        )
    })
}

/// The kinds the server serves in no namespace, so that each is cached
/// once, not once per namespace of a guest. The server not answering in
/// [`DISCOVERY_AT_START`] leaves every kind taken to be namespaced, which
/// costs only duplicate caches: the host starts all the same.
async fn cluster_scoped_kinds(discovery: &Discovery) -> HashSet<Gvk> {
    match tokio::time::timeout(DISCOVERY_AT_START, discovery.all()).await {
        Ok(Ok(resources)) => resources
            .into_iter()
            .filter(|r| !r.namespaced)
            .map(|r| r.gvk)
            .collect(),
        Ok(Err(e)) => {
            tracing::warn!("discovery failed, so every kind is cached per namespace: {e}");
            HashSet::new()
        }
        Err(_) => {
            tracing::warn!(
                "discovery took over {DISCOVERY_AT_START:?}, so every kind is cached per namespace"
            );
            HashSet::new()
        }
    }
}

/// How long the start waits for discovery's list of resources.
const DISCOVERY_AT_START: Duration = Duration::from_secs(10);
