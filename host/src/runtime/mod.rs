//! The WebAssembly runtime: one wasmtime engine (component model, async
//! calls, epoch interruption, pooling allocator with copy-on-write memory
//! images) that loads reconciler components, checks them against the
//! `recon:controller/controller@0.4.0` world, reads their manifests, and
//! runs their calls inside the sandbox and limits the host sets, on guest
//! threads of its own ([`GuestPriority`]). It knows nothing of informers
//! or HTTP: what a guest's imports reach is the
//! [`services::GuestServices`] its caller provides.

mod bindings;
mod budget;
mod compile_cache;
mod guest;
mod guest_log;
mod guest_threads;
mod imports;
mod limits;
pub mod manifest;
mod sandbox;
mod scheduler;
pub mod services;
mod stale_writes;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use wasmtime::component::{HasSelf, Linker};
use wasmtime::{Config, Engine, InstanceAllocationStrategy, PoolingAllocationConfig};

pub use budget::{BudgetError, MemoryBudget, cgroup_memory_limit, check_budget};
pub use compile_cache::default_cache_dir;
pub use guest::{
    Action, ERROR_REASONS, FailedInstance, Guest, Instance, ReconcileError, STALE_REASONS,
};
pub use guest_threads::GuestPriority;
pub use limits::{Limit, LimitObserver, Limits};
pub use sandbox::Preopen;

use crate::clock::{SharedClock, SystemClock};
use bindings::ControllerPre;
use guest_threads::GuestThreads;

use imports::GuestState;
use limits::GuestLimiter;
use manifest::ManifestError;
use scheduler::{GuestId, Scheduler};
use services::NoServices;

/// The world every guest must target.
pub const WORLD: &str = "recon:controller/controller@0.4.0";

/// How the runtime is set up.
#[derive(Clone)]
pub struct RuntimeConfig {
    /// The deadline of one reconcile (`--reconcile-timeout`), a fresh
    /// instance's instantiation included. It counts wall time on `clock`:
    /// time in the guest's code, in host calls and blocked in WASI calls
    /// (a sleep, a poll) alike. At the deadline the call is abandoned and
    /// the instance dropped.
    pub reconcile_timeout: Duration,
    /// The deadline of `manifest()` at load, instantiation included
    /// (`--manifest-timeout`).
    pub manifest_timeout: Duration,
    /// The time source of the deadlines.
    pub clock: SharedClock,
    /// The most linear memory one instance may have (`--max-memory`).
    pub max_memory: usize,
    /// How often running guest code yields to the scheduler, so a guest
    /// that spins cannot keep a thread from the host or other guests.
    pub epoch_tick: Duration,
    /// How many guest calls may run guest code at once (lanes taken in
    /// turn by the guests, see the scheduler); 0 means one per CPU but one
    /// (at least one), leaving a CPU to the host.
    pub parallelism: usize,
    /// How the kernel ranks the threads guest code runs on against the
    /// host's (`--guest-priority`).
    pub guest_priority: GuestPriority,
    /// Whether a thread advances the epoch every `epoch_tick`; when false
    /// the owner calls [`Runtime::tick`] (tests do, to decide when a
    /// spinning guest yields).
    pub epoch_thread: bool,
    /// Instances that may exist at once (the pooling allocator's slots).
    pub max_instances: u32,
    /// Where compiled components are cached; `None` compiles every load.
    pub cache_dir: Option<PathBuf>,
    /// Host directories guests may use (`--dir`).
    pub preopens: Vec<Preopen>,
    /// Limits on what guests consume through their imports.
    pub limits: Limits,
    /// What the guests' instances may reserve, checked at load.
    pub memory_budget: MemoryBudget,
    /// Sees every refusal of a limit (the host's metrics).
    pub limit_observer: Option<Arc<dyn LimitObserver>>,
}

impl std::fmt::Debug for RuntimeConfig {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RuntimeConfig")
            .field("reconcile_timeout", &self.reconcile_timeout)
            .field("manifest_timeout", &self.manifest_timeout)
            .field("max_memory", &self.max_memory)
            .field("epoch_tick", &self.epoch_tick)
            .field("parallelism", &self.parallelism)
            .field("guest_priority", &self.guest_priority)
            .field("max_instances", &self.max_instances)
            .field("cache_dir", &self.cache_dir)
            .field("preopens", &self.preopens)
            .field("limits", &self.limits)
            .field("memory_budget", &self.memory_budget)
            .finish_non_exhaustive()
    }
}

impl Default for RuntimeConfig {
    fn default() -> Self {
        RuntimeConfig {
            reconcile_timeout: Duration::from_secs(30),
            manifest_timeout: Duration::from_secs(5),
            clock: SystemClock::shared(),
            max_memory: 64 << 20,
            epoch_tick: Duration::from_millis(1),
            parallelism: 0,
            guest_priority: GuestPriority::default(),
            epoch_thread: true,
            max_instances: 1000,
            cache_dir: compile_cache::default_cache_dir(),
            preopens: Vec::new(),
            limits: Limits::default(),
            memory_budget: MemoryBudget::default(),
            limit_observer: None,
        }
    }
}

/// Why the runtime could not start.
#[derive(Debug, thiserror::Error)]
pub enum RuntimeError {
    /// The engine rejected the configuration.
    #[error("cannot create the WebAssembly engine: {0}")]
    Engine(String),
    /// The threads guest code runs on could not be started.
    #[error("cannot start the guest threads: {0}")]
    GuestThreads(#[source] std::io::Error),
    /// The thread that advances the epoch could not be started.
    #[error("cannot start the epoch thread: {0}")]
    EpochThread(#[source] std::io::Error),
    /// A `--dir` preopen is not a directory.
    #[error("--dir {}: not a directory", .host.display())]
    Preopen {
        /// The host path.
        host: PathBuf,
    },
}

/// Why a guest could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum LoadError {
    /// The file could not be read.
    #[error("{path}: cannot read: {source}")]
    Read {
        /// The file.
        path: String,
        /// The cause.
        source: std::io::Error,
    },
    /// Not a WebAssembly component.
    #[error("{path}: {message}")]
    NotAComponent {
        /// The file.
        path: String,
        /// What it is instead.
        message: String,
    },
    /// The component failed to compile.
    #[error("{path}: invalid component: {message}")]
    Compile {
        /// The file.
        path: String,
        /// The cause.
        message: String,
    },
    /// The component does not target the controller world.
    #[error("{path}: does not target the world {WORLD}: {message}")]
    WrongWorld {
        /// The file.
        path: String,
        /// What did not match.
        message: String,
    },
    /// `manifest()` failed.
    #[error("{path}: manifest() failed: {source}")]
    Manifest {
        /// The file.
        path: String,
        /// How.
        source: ReconcileError,
    },
    /// The manifest is malformed.
    #[error("{path}: {source}")]
    InvalidManifest {
        /// The file.
        path: String,
        /// What is wrong.
        source: ManifestError,
    },
}

/// State every guest and instance of a runtime shares.
pub(crate) struct Shared {
    config: RuntimeConfig,
    scheduler: Arc<Scheduler>,
    /// Where guest code runs, apart from the host's threads.
    threads: GuestThreads,
    /// The next guest's scheduler id.
    next_guest: AtomicU64,
}

impl Shared {
    /// A new guest's scheduler id: its calls take turns together.
    pub(crate) fn guest_id(&self) -> GuestId {
        self.next_guest.fetch_add(1, Ordering::Relaxed)
    }

    /// A new guest's limiter, shared by its instances.
    pub(crate) fn guest_limiter(&self, guest: &str) -> Arc<GuestLimiter> {
        Arc::new(GuestLimiter::new(
            Arc::from(guest),
            self.config.limits.clone(),
            self.config.clock.clone(),
            self.config.limit_observer.clone(),
        ))
    }

    /// Runs `call` of `guest`, taking turns with the other guests, until
    /// it ends or `limit` passes on the runtime's clock; `None` at the
    /// deadline, when `call` has been dropped (a guest call in flight is
    /// abandoned, its instance unusable). The time it runs guest code is
    /// added to `cpu` (nanoseconds).
    pub(crate) async fn run<T>(
        &self,
        guest: GuestId,
        cpu: &Arc<AtomicU64>,
        limit: Duration,
        call: impl Future<Output = T>,
    ) -> Option<T> {
        let call = self.scheduler.fair(guest, Arc::clone(cpu), call);
        // The deadline is polled first, so it is armed before guest code
        // first runs.
        tokio::select! {
            biased;
            () = self.config.clock.sleep(limit) => None,
            done = call => Some(done),
        }
    }
}

/// The WebAssembly runtime. Cloning is cheap.
#[derive(Clone)]
pub struct Runtime {
    engine: Engine,
    linker: Arc<Linker<GuestState>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Runtime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Runtime")
            .field("config", &self.shared.config)
            .finish()
    }
}

/// Links the WIT imports of the world `controller`: `cache`, `queue` and
/// `client` through the bindings, `log` by hand (it reads in place).
fn add_imports(linker: &mut Linker<GuestState>) -> wasmtime::Result<()> {
    use bindings::recon::controller::{cache, client, queue, types};
    types::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)?;
    cache::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)?;
    queue::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)?;
    client::add_to_linker::<_, HasSelf<GuestState>>(linker, |state| state)?;
    imports::add_log_to_linker(linker)
}

/// How much of an instance slot's linear memory stays resident when the
/// instance is dropped: the pages a guest touched (up to this much, found
/// with Linux's PAGEMAP_SCAN where the kernel has it) are reset in place
/// with `memset` instead of being unmapped with `madvise`, which on every
/// drop flushed the TLB of every CPU and made the next instance fault its
/// pages in again. A fresh instance per reconcile runs about twice as fast
/// for it (BENCHMARKS: guests); the cost is at most this much RSS per slot
/// that has held an instance, pages the instance had used within its
/// memory limit anyway.
const KEEP_RESIDENT: usize = 1 << 20;

/// The same for an instance's tables.
const TABLE_KEEP_RESIDENT: usize = 64 << 10;

impl Runtime {
    /// Creates the engine and linker; starts the epoch thread if configured.
    pub fn new(config: RuntimeConfig) -> Result<Runtime, RuntimeError> {
        for preopen in &config.preopens {
            if !preopen.host.is_dir() {
                return Err(RuntimeError::Preopen {
                    host: preopen.host.clone(),
                });
            }
        }
        let mut pool = PoolingAllocationConfig::new();
        let slots = config.max_instances.max(1);
        pool.total_component_instances(slots)
            .total_core_instances(slots.saturating_mul(4))
            .total_memories(slots)
            .total_tables(slots.saturating_mul(4))
            .total_stacks(slots)
            .max_memory_size(config.max_memory)
            .linear_memory_keep_resident(KEEP_RESIDENT)
            .table_keep_resident(TABLE_KEEP_RESIDENT)
            .pagemap_scan(wasmtime::Enabled::Auto);
        let mut wasm = Config::new();
        wasm.wasm_component_model(true)
            // Guests export and import synchronous functions only; without
            // the async ABI's per-store state, an instance's drop does not
            // build (and, under RUST_BACKTRACE, capture a backtrace for) an
            // error wasmtime then discards.
            .concurrency_support(false)
            .epoch_interruption(true)
            .memory_init_cow(true)
            .allocation_strategy(InstanceAllocationStrategy::Pooling(pool));
        let engine = Engine::new(&wasm).map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
        let mut linker = Linker::new(&engine);
        wasmtime_wasi::p2::add_to_linker_async(&mut linker)
            .map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
        add_imports(&mut linker).map_err(|e| RuntimeError::Engine(format!("{e:#}")))?;
        let tick = config.epoch_tick.max(Duration::from_micros(100));
        let lanes = match config.parallelism {
            // One CPU is left to the host: informers, API calls, probes.
            0 => {
                std::thread::available_parallelism().map_or(1, |n| n.get().saturating_sub(1).max(1))
            }
            n => n,
        };
        // With the epoch thread, a quiet guest's arrival makes running
        // guest code yield at once; without it, the owner decides when.
        let preempt = config.epoch_thread.then(|| {
            let engine = engine.clone();
            Box::new(move || engine.increment_epoch()) as Box<dyn Fn() + Send + Sync>
        });
        let scheduler = Scheduler::new(lanes, config.clock.clone(), preempt);
        // One thread more than lanes: a call of a quiet guest is polled,
        // and preempts, while every lane runs guest code.
        let threads = GuestThreads::start(lanes + 1, config.guest_priority)
            .map_err(RuntimeError::GuestThreads)?;
        let runtime = Runtime {
            engine,
            linker: Arc::new(linker),
            shared: Arc::new(Shared {
                config,
                scheduler,
                threads,
                next_guest: AtomicU64::new(0),
            }),
        };
        if runtime.shared.config.epoch_thread {
            let weak = Arc::downgrade(&runtime.shared);
            let engine = runtime.engine.clone();
            std::thread::Builder::new()
                .name("recon-epoch".into())
                .spawn(move || epoch_loop(weak, engine, tick))
                .map_err(RuntimeError::EpochThread)?;
        }
        Ok(runtime)
    }

    /// The configuration.
    pub fn config(&self) -> &RuntimeConfig {
        &self.shared.config
    }

    /// How many guest calls may run guest code at once.
    pub fn parallelism(&self) -> usize {
        self.shared.scheduler.lanes()
    }

    /// Advances the epoch by one tick: running guest code yields at its
    /// next check.
    pub fn tick(&self) {
        self.engine.increment_epoch();
    }

    /// Loads the component at `path`: compiles it (or loads it from the
    /// cache), checks it targets the controller world, and reads its
    /// manifest.
    pub async fn load(&self, path: &Path) -> Result<Guest, LoadError> {
        let shown = path.display().to_string();
        let wasm = tokio::fs::read(path)
            .await
            .map_err(|source| LoadError::Read {
                path: shown.clone(),
                source,
            })?;
        self.load_bytes(path, wasm).await
    }

    /// As [`Runtime::load`], with the bytes already read; `path` names the
    /// guest in errors.
    pub async fn load_bytes(&self, path: &Path, wasm: Vec<u8>) -> Result<Guest, LoadError> {
        let shown = path.display().to_string();
        check_component_header(&wasm).map_err(|message| LoadError::NotAComponent {
            path: shown.clone(),
            message,
        })?;
        let engine = self.engine.clone();
        let cache_dir = self.shared.config.cache_dir.clone();
        let compiled = tokio::task::spawn_blocking(move || {
            compile_cache::load_or_compile(&engine, cache_dir.as_deref(), &wasm)
        })
        .await
        .map_err(|e| LoadError::Compile {
            path: shown.clone(),
            message: e.to_string(),
        })?;
        let (component, source) = compiled.map_err(|e| LoadError::Compile {
            path: shown.clone(),
            message: format!("{e:#}"),
        })?;
        tracing::debug!(path = %shown, ?source, "component ready");
        let wrong_world = |e: wasmtime::Error| LoadError::WrongWorld {
            path: shown.clone(),
            message: format!("{e:#}; {}", self.describe(&component)),
        };
        let pre = self
            .linker
            .instantiate_pre(&component)
            .map_err(wrong_world)?;
        let pre = ControllerPre::new(pre).map_err(wrong_world)?;
        // `manifest()` is guest code: it runs on the guest threads.
        let read = {
            let pre = pre.clone();
            let shared = Arc::clone(&self.shared);
            async move {
                let mut instance = guest::instantiate(
                    &pre,
                    &shared,
                    shared.guest_id(),
                    shared.guest_limiter("(loading)"),
                    &[],
                    Arc::new(NoServices),
                    shared.config.manifest_timeout,
                )
                .await
                .map_err(|failed| failed.error)?;
                instance.manifest().await
            }
        };
        let manifest =
            self.shared
                .threads
                .run(read)
                .await
                .map_err(|source| LoadError::Manifest {
                    path: shown.clone(),
                    source,
                })?;
        let manifest =
            manifest::from_wit(manifest).map_err(|source| LoadError::InvalidManifest {
                path: shown.clone(),
                source,
            })?;
        Ok(Guest::new(
            path.to_path_buf(),
            pre,
            manifest,
            Arc::clone(&self.shared),
        ))
    }

    /// What a component imports and exports, for error messages.
    fn describe(&self, component: &wasmtime::component::Component) -> String {
        let ty = component.component_type();
        let names = |it: &mut dyn Iterator<Item = &str>| {
            let names: Vec<&str> = it.filter(|n| !n.starts_with("wasi:")).collect();
            if names.is_empty() {
                "nothing".to_string()
            } else {
                names.join(", ")
            }
        };
        let all: Vec<&str> = ty
            .imports(&self.engine)
            .chain(ty.exports(&self.engine))
            .map(|(n, _)| n)
            .collect();
        let mut described = format!(
            "the component imports {} (besides WASI) and exports {}",
            names(&mut ty.imports(&self.engine).map(|(n, _)| n)),
            names(&mut ty.exports(&self.engine).map(|(n, _)| n)),
        );
        let ours = WORLD.rsplit_once('@').map_or("", |(_, v)| v);
        let mut versions: Vec<&str> = all
            .iter()
            .filter(|n| n.starts_with("recon:controller/"))
            .filter_map(|n| n.rsplit_once('@').map(|(_, v)| v))
            .filter(|v| *v != ours)
            .collect();
        versions.sort_unstable();
        versions.dedup();
        if !versions.is_empty() {
            described.push_str(&format!(
                "; it was built for recon:controller@{}, and this host serves @{ours}: rebuild it with the guest SDK of this host",
                versions.join(", @")
            ));
        }
        described
    }
}

/// Advances the epoch every `tick` while guest code runs, for as long as
/// the runtime lives.
fn epoch_loop(shared: Weak<Shared>, engine: Engine, tick: Duration) {
    /// How often an idle epoch thread checks that the runtime still lives.
    const IDLE_CHECK: Duration = Duration::from_secs(1);
    loop {
        let Some(shared) = shared.upgrade() else {
            return;
        };
        let scheduler = Arc::clone(&shared.scheduler);
        drop(shared);
        if scheduler.wait_until_busy(IDLE_CHECK) {
            std::thread::sleep(tick);
            engine.increment_epoch();
        }
    }
}

/// Checks the preamble: `\0asm`, then the component layer.
fn check_component_header(wasm: &[u8]) -> Result<(), String> {
    if wasm.len() < 8 || &wasm[..4] != b"\0asm" {
        return Err("not a WebAssembly file (it does not start with \\0asm)".into());
    }
    match [wasm[4], wasm[5], wasm[6], wasm[7]] {
        [0x0d, 0x00, 0x01, 0x00] => Ok(()),
        [0x01, 0x00, 0x00, 0x00] => Err(
            "a core WebAssembly module, not a component: build the guest for wasm32-wasip2 (or wrap it with `wasm-tools component new`)"
                .into(),
        ),
        [a, b, c, d] => Err(format!(
            "unsupported WebAssembly version/layer {a:02x} {b:02x} {c:02x} {d:02x} (expected a component, 0d 00 01 00)"
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn headers_name_what_the_file_is() {
        assert!(check_component_header(b"\0asm\x0d\0\x01\0rest").is_ok());
        assert!(
            check_component_header(b"\0asm\x01\0\0\0")
                .unwrap_err()
                .contains("core WebAssembly module")
        );
        assert!(
            check_component_header(b"hello world")
                .unwrap_err()
                .contains("not a WebAssembly file")
        );
        assert!(
            check_component_header(b"\0asm\x0e\0\x01\0")
                .unwrap_err()
                .contains("0e 00 01 00")
        );
    }
}
