//! A loaded guest and its instances: a component checked against the
//! `controller` world, pre-linked once (`InstancePre`), its manifest read;
//! instances run `reconcile` calls under the runtime's deadline and memory
//! cap, and report how a failed call failed.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use wasmtime::component::ResourceTable;
use wasmtime::{Store, UpdateDeadline};

use super::Shared;
use super::bindings::exports::recon::controller::reconciler as wit;
use super::bindings::recon::controller::types::ObjectKey;
use super::bindings::{Controller, ControllerPre};
use super::imports::GuestState;
use super::limits::GuestLimiter;
use super::manifest::{Manifest, ManifestError};
use super::sandbox::{GuestOutput, MemoryLimiter, Preopen, wasi_context};
use super::scheduler::GuestId;
use super::services::{GuestError, GuestServices};
use crate::object::split_key;

/// What happens to a key after a successful reconcile.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Action {
    /// Reconciled: forget its backoff history.
    Done,
    /// Queue it again through the rate limiter.
    Requeue,
    /// Forget its history and queue it again after this delay.
    RequeueAfter(Duration),
}

/// Why a reconcile failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ReconcileError {
    /// The guest returned an error.
    #[error("the reconciler returned an error: {0}")]
    Guest(GuestError),
    /// The guest returned an outcome of optimistic concurrency that a
    /// write of its own met in this reconcile (its view was stale, see
    /// `stale_writes`): a requeue with backoff, not an error.
    #[error("a write met a stale view ({0}); requeued")]
    Stale(GuestError),
    /// The guest trapped (a panic, `unreachable`, an out-of-bounds access…).
    #[error("the guest trapped: {message}{}", output_suffix(.output))]
    Trap {
        /// The trap.
        message: String,
        /// The end of the guest's stderr during the call (a panic message).
        output: String,
    },
    /// The call ran past its deadline (time blocked in host and WASI calls
    /// included) and was abandoned.
    #[error("the guest ran past its deadline of {limit:?} and was stopped")]
    Timeout {
        /// The deadline.
        limit: Duration,
    },
    /// The guest needed more memory than allowed and failed.
    #[error(
        "the guest exceeded its memory limit of {limit} bytes (it asked for {requested} bytes){}",
        output_suffix(.output)
    )]
    MemoryLimit {
        /// The limit.
        limit: usize,
        /// The size of linear memory it asked for.
        requested: usize,
        /// The end of the guest's stderr during the call.
        output: String,
    },
    /// No instance could be created.
    #[error("the guest could not be instantiated: {0}")]
    Instantiate(String),
    /// The key is not `namespace/name` or `name`.
    #[error("invalid key {0:?}")]
    InvalidKey(String),
}

fn output_suffix(output: &str) -> String {
    if output.is_empty() {
        String::new()
    } else {
        format!("; guest stderr: {output}")
    }
}

/// Why a reconcile failed, as `recon_guest_reconcile_errors_total` labels
/// it: [`ReconcileError::reason`] is always one of these. Conflicts,
/// already-exists and not-found that a write of the reconcile met are not
/// failures but [`ReconcileError::Stale`] requeues; the others are worth
/// an alert.
pub const ERROR_REASONS: [&str; 13] = [
    "conflict",
    "not-found",
    "already-exists",
    "forbidden",
    "invalid",
    "unavailable",
    "too-large",
    "other",
    "trap",
    "timeout",
    "memory",
    "instantiate",
    "invalid-key",
];

/// The reasons of [`ReconcileError::Stale`], as
/// `recon_guest_stale_requeues_total` labels them.
pub const STALE_REASONS: [&str; 3] = ["conflict", "not-found", "already-exists"];

impl ReconcileError {
    /// Its reason, one of [`ERROR_REASONS`] ([`STALE_REASONS`] for
    /// [`ReconcileError::Stale`]).
    pub fn reason(&self) -> &'static str {
        match self {
            ReconcileError::Guest(error) | ReconcileError::Stale(error) => match error {
                GuestError::Conflict(_) => "conflict",
                GuestError::NotFound => "not-found",
                GuestError::AlreadyExists(_) => "already-exists",
                GuestError::Forbidden(_) => "forbidden",
                GuestError::Invalid(_) => "invalid",
                GuestError::Unavailable(_) => "unavailable",
                GuestError::TooLarge(_) => "too-large",
                GuestError::Other(_) => "other",
            },
            ReconcileError::Trap { .. } => "trap",
            ReconcileError::Timeout { .. } => "timeout",
            ReconcileError::MemoryLimit { .. } => "memory",
            ReconcileError::Instantiate(_) => "instantiate",
            ReconcileError::InvalidKey(_) => "invalid-key",
        }
    }

    /// True when the guest failed with `forbidden` or `invalid`: what it
    /// asked for is refused as asked, so retrying the same reconcile cannot
    /// help; the key waits for its object to change.
    pub fn is_terminal(&self) -> bool {
        matches!(
            self,
            ReconcileError::Guest(GuestError::Forbidden(_) | GuestError::Invalid(_))
        )
    }

    /// True when the instance must be discarded (the guest did not return).
    pub fn is_fault(&self) -> bool {
        matches!(
            self,
            ReconcileError::Trap { .. }
                | ReconcileError::Timeout { .. }
                | ReconcileError::MemoryLimit { .. }
        )
    }
}

/// A loaded, checked guest. Cloning is cheap; every clone shares the
/// compiled component.
#[derive(Clone)]
pub struct Guest {
    inner: Arc<GuestInner>,
}

struct GuestInner {
    path: PathBuf,
    name: Arc<str>,
    /// Its calls' turns on the CPU.
    id: GuestId,
    /// Its limits, shared by its instances.
    limiter: Arc<GuestLimiter>,
    pre: ControllerPre<GuestState>,
    manifest: Manifest,
    /// Directories granted to this guest alone, beside the host-wide ones.
    dirs: Vec<Preopen>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Guest {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Guest")
            .field("name", &self.inner.name)
            .field("path", &self.inner.path)
            .finish()
    }
}

impl Guest {
    pub(crate) fn new(
        path: PathBuf,
        pre: ControllerPre<GuestState>,
        manifest: Manifest,
        shared: Arc<Shared>,
    ) -> Guest {
        Guest {
            inner: Arc::new(GuestInner {
                path,
                name: Arc::from(manifest.name.as_str()),
                id: shared.guest_id(),
                limiter: shared.guest_limiter(&manifest.name),
                pre,
                manifest,
                dirs: Vec::new(),
                shared,
            }),
        }
    }

    /// The same guest with `dirs` preopened in its reconcile instances,
    /// beside the host-wide `--dir`s; no other guest sees them.
    /// `manifest()` ran before the guest had a name to grant them to, so it
    /// saw only the host-wide ones.
    pub fn with_dirs(&self, dirs: Vec<Preopen>) -> Guest {
        let inner = &self.inner;
        Guest {
            inner: Arc::new(GuestInner {
                path: inner.path.clone(),
                name: Arc::clone(&inner.name),
                id: inner.id,
                limiter: Arc::clone(&inner.limiter),
                pre: inner.pre.clone(),
                manifest: inner.manifest.clone(),
                dirs,
                shared: Arc::clone(&inner.shared),
            }),
        }
    }

    /// The directories granted to this guest alone.
    pub fn dirs(&self) -> &[Preopen] {
        &self.inner.dirs
    }

    /// The same component as another guest named `name`: its own queue,
    /// field manager and log label, sharing the compiled code.
    pub fn renamed(&self, name: &str) -> Result<Guest, ManifestError> {
        let manifest = self.inner.manifest.renamed(name)?;
        Ok(Guest::new(
            self.inner.path.clone(),
            self.inner.pre.clone(),
            manifest,
            Arc::clone(&self.inner.shared),
        ))
    }

    /// True when `other` is this very load of the guest (clones of one
    /// [`Guest`]), not another load of it or another guest.
    pub fn is_same_load(&self, other: &Guest) -> bool {
        Arc::ptr_eq(&self.inner, &other.inner)
    }

    /// The manifest's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// Where the component was loaded from.
    pub fn path(&self) -> &Path {
        &self.inner.path
    }

    /// The checked manifest.
    pub fn manifest(&self) -> &Manifest {
        &self.inner.manifest
    }

    /// The configuration of the guest's runtime.
    pub(crate) fn runtime_config(&self) -> &super::RuntimeConfig {
        &self.inner.shared.config
    }

    /// Its limits: what its imports may consume, and where refusals go.
    pub fn limiter(&self) -> &GuestLimiter {
        &self.inner.limiter
    }

    /// The guest threads' runtime: tasks that call into guests (workers)
    /// are spawned there, so guest code never holds a host thread.
    pub fn threads(&self) -> &tokio::runtime::Handle {
        self.inner.shared.threads.handle()
    }

    /// `task`, which calls into guests one call after another (a worker),
    /// made to keep its lane between its calls while another call of its
    /// guest waits, until its poll ends (see the scheduler): spawn it on
    /// [`Guest::threads`].
    pub fn worker<F: Future>(&self, task: F) -> impl Future<Output = F::Output> + use<F> {
        self.inner.shared.scheduler.task(task)
    }

    /// A fresh instance whose imports reach `services`, within the
    /// reconcile deadline.
    pub async fn instantiate(
        &self,
        services: Arc<dyn GuestServices>,
    ) -> Result<Instance, FailedInstance> {
        let shared = &self.inner.shared;
        instantiate(
            &self.inner.pre,
            shared,
            self.inner.id,
            Arc::clone(&self.inner.limiter),
            &self.inner.dirs,
            services,
            shared.config.reconcile_timeout,
        )
        .await
    }
}

/// An instantiation that failed, and the time its start functions ran on
/// the guest lanes before they did (the guest's CPU all the same).
#[derive(Debug)]
pub struct FailedInstance {
    /// Why it failed.
    pub error: ReconcileError,
    /// Time spent running guest code.
    pub cpu: Duration,
}

/// Creates an instance of `pre` in a new store with the sandbox (the
/// host-wide preopens and the guest's own `dirs`) and limits; start
/// functions get `limit`.
pub(crate) async fn instantiate(
    pre: &ControllerPre<GuestState>,
    shared: &Arc<Shared>,
    id: GuestId,
    limits: Arc<GuestLimiter>,
    dirs: &[Preopen],
    services: Arc<dyn GuestServices>,
    limit: Duration,
) -> Result<Instance, FailedInstance> {
    let (stdout, stderr) = GuestOutput::pair(Arc::clone(&limits));
    let wasi = wasi_context(
        limits.guest(),
        stdout.clone(),
        stderr.clone(),
        shared.config.preopens.iter().chain(dirs),
    )
    .map_err(|e| FailedInstance {
        error: ReconcileError::Instantiate(format!("{e:#}")),
        cpu: Duration::ZERO,
    })?;
    let state = GuestState {
        wasi,
        table: ResourceTable::new(),
        limiter: MemoryLimiter::new(shared.config.max_memory),
        stdout,
        stderr,
        limits,
        services,
        key: None,
        stale: Arc::default(),
        host: shared.threads.host().clone(),
    };
    let mut store = Store::new(pre.engine(), state);
    store.limiter(|state| &mut state.limiter);
    // Guest code yields at every epoch tick; deadlines are the host's.
    store.set_epoch_deadline(1);
    store.epoch_deadline_callback(|_| Ok(UpdateDeadline::Yield(1)));
    let cpu: Arc<AtomicU64> = Arc::default();
    let failed = |error| FailedInstance {
        error,
        cpu: Duration::from_nanos(cpu.load(Ordering::Relaxed)),
    };
    match shared
        .run(id, &cpu, limit, pre.instantiate_async(&mut store))
        .await
    {
        Some(Ok(controller)) => Ok(Instance {
            store,
            controller,
            id,
            cpu,
            faulted: false,
            shared: Arc::clone(shared),
        }),
        Some(Err(e)) => Err(failed(ReconcileError::Instantiate(format!("{e:#}")))),
        None => Err(failed(ReconcileError::Timeout { limit })),
    }
}

/// One instance of a guest: its store and exports. After a fault it must be
/// dropped.
pub struct Instance {
    store: Store<GuestState>,
    controller: Controller,
    /// The guest's turns on the CPU.
    id: GuestId,
    /// Nanoseconds this instance has run guest code, instantiation included.
    cpu: Arc<AtomicU64>,
    faulted: bool,
    shared: Arc<Shared>,
}

impl Instance {
    /// Calls `manifest()` within the manifest deadline.
    pub(crate) async fn manifest(&mut self) -> Result<wit::ControllerManifest, ReconcileError> {
        let limit = self.shared.config.manifest_timeout;
        self.store.data_mut().limiter.take_refused();
        let call = self
            .controller
            .recon_controller_reconciler()
            .call_manifest(&mut self.store);
        match self.shared.run(self.id, &self.cpu, limit, call).await {
            Some(Ok(manifest)) => Ok(manifest),
            Some(Err(trap)) => Err(self.fault(trap)),
            None => Err(self.abandoned(limit)),
        }
    }

    /// Reconciles `key` (`namespace/name` or `name`) within the reconcile
    /// deadline; `attempt` counts the key's rate-limited requeues so far.
    pub async fn reconcile(&mut self, key: &str, attempt: u32) -> Result<Action, ReconcileError> {
        let (namespace, name) =
            split_key(key).map_err(|_| ReconcileError::InvalidKey(key.to_string()))?;
        let request = wit::Request {
            key: ObjectKey {
                namespace: (!namespace.is_empty()).then(|| namespace.to_string()),
                name: name.to_string(),
            },
            attempt,
        };
        {
            let state = self.store.data_mut();
            state.key = Some(key.to_string());
            state.limiter.take_refused();
            state.stale.clear();
        }
        let limit = self.shared.config.reconcile_timeout;
        let call = self
            .controller
            .recon_controller_reconciler()
            .call_reconcile(&mut self.store, &request);
        let result = self.shared.run(self.id, &self.cpu, limit, call).await;
        self.store.data_mut().key = None;
        match result {
            Some(Ok(Ok(action))) => {
                self.store.data().stderr.take_tail();
                self.store.data().stdout.take_tail();
                Ok(match action {
                    wit::Action::Done => Action::Done,
                    wit::Action::Requeue => Action::Requeue,
                    wit::Action::RequeueAfter(nanos) => {
                        Action::RequeueAfter(Duration::from_nanos(nanos))
                    }
                })
            }
            Some(Ok(Err(error))) => {
                let state = self.store.data();
                state.stderr.take_tail();
                state.stdout.take_tail();
                let error = GuestError::from(error);
                Err(if state.stale.explains(&error) {
                    ReconcileError::Stale(error)
                } else {
                    ReconcileError::Guest(error)
                })
            }
            Some(Err(trap)) => Err(self.fault(trap)),
            None => Err(self.abandoned(limit)),
        }
    }

    /// Marks the instance unusable after a call abandoned at its deadline.
    fn abandoned(&mut self, limit: Duration) -> ReconcileError {
        self.faulted = true;
        let state = self.store.data();
        state.stdout.take_tail();
        state.stderr.take_tail();
        ReconcileError::Timeout { limit }
    }

    /// Classifies a trap and marks the instance unusable.
    fn fault(&mut self, trap: wasmtime::Error) -> ReconcileError {
        self.faulted = true;
        let state = self.store.data_mut();
        state.stdout.take_tail();
        let output = state.stderr.take_tail();
        if let Some(requested) = state.limiter.take_refused() {
            return ReconcileError::MemoryLimit {
                limit: self.shared.config.max_memory,
                requested,
                output,
            };
        }
        let message = match trap.downcast_ref::<wasmtime::Trap>() {
            Some(code) => code.to_string(),
            None => format!("{trap:#}"),
        };
        ReconcileError::Trap { message, output }
    }

    /// False once a call faulted: the instance must be dropped.
    pub fn is_usable(&self) -> bool {
        !self.faulted
    }

    /// How long this instance has run guest code (on a scheduler lane),
    /// instantiation included.
    pub fn cpu_time(&self) -> Duration {
        Duration::from_nanos(self.cpu.load(Ordering::Relaxed))
    }

    /// The largest linear memory this instance reached, in bytes.
    pub fn memory_high_water(&self) -> usize {
        self.store.data().limiter.high_water()
    }
}
