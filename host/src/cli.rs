//! The `host` command line.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::{Args, Parser, Subcommand};
use tokio_util::sync::CancellationToken;

use recon_api_semantics::names::is_dns_label;
use recon_devserver::{DevServer, DevServerConfig};
use recon_host::kube::ConnectOptions;
use recon_host::kube::RateLimit;
use recon_host::operator::{self, OperatorConfig};
use recon_host::ops::LeaderElectionConfig;
use recon_host::ops::{LogFormat, init_logging};
use recon_host::registry::{self, RegistryOptions};
use recon_host::runtime::Limits;
use recon_host::runtime::{GuestPriority, MemoryBudget, cgroup_memory_limit};
use recon_host::runtime::{Preopen, Runtime, RuntimeConfig, default_cache_dir};

use crate::scaffold::{self, Kind, Lang, NewGuest, ScaffoldError, SdkSource, built_in_sdk_of};

/// recon host: runs WebAssembly reconcilers against Kubernetes.
#[derive(Debug, Parser)]
#[command(name = "host", version, about)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Run an in-memory Kubernetes-compatible API server for development and
    /// tests. NOT a production API server: no persistence, no authorization,
    /// no admission, no validation.
    #[command(
        name = "dev-server",
        long_about = "Run an in-memory Kubernetes-compatible API server for local \
development and tests, and write a kubeconfig for kubectl and the host.\n\n\
This is a development and test tool, not a production API server: everything \
lives in memory and is lost on exit, one bearer token guards everything, \
there is no authorization or admission, and built-in kinds get only part of \
kube-apiserver's validation (custom resources are validated against their \
CRD's schema). docs/DEV-SERVER.md lists what it implements.\n\n\
Once listening it prints one line on stdout:\n  \
dev-server listening on https://127.0.0.1:PORT (kubeconfig: PATH)\n\n\
Then: kubectl --kubeconfig PATH get namespaces"
    )]
    DevServer(DevServerArgs),
    /// Run reconciler components against a cluster.
    #[command(
        long_about = "Run reconciler components (WASI Preview 2 components targeting \
recon:controller/controller@0.4.0) against a Kubernetes API server.\n\n\
The host lists and watches the kinds every guest's manifest names, sharing one \
informer per kind, namespace and selector; queues keys per guest; and calls each \
guest's reconcile with the host's limits: a deadline, a memory cap, the \
permissions its manifest declares (within what --policy grants it, if given), \
its namespaces and a client-side QPS / burst per guest."
    )]
    Run(Box<RunArgs>),
    /// Print a guest's manifest as JSON; fails on a file that is not a
    /// component of the controller world.
    Inspect(InspectArgs),
    /// Start a guest: a standalone Rust crate (or Python or JavaScript
    /// package) with a reconciler of one kind, its tests against the SDK's
    /// fake cluster, and the build of a component.
    #[command(
        long_about = "Start a guest: a standalone Rust crate in PATH (which must not exist or be \
empty; its name becomes the guest's and the crate's name) with a reconciler of one kind that \
labels what it sees, its tests against the SDK's fake cluster, the `guest` build profile, a \
`cargo guest` alias that builds the component and a Justfile.\n\n\
Then: cd PATH && cargo test && cargo guest && host inspect target/wasm32-wasip2/guest/NAME.wasm\n\n\
With --lang python: the reconciler as a Python module over guest-sdk-python/, its pytest tests \
against the SDK's fake cluster, build.sh (componentize-py) and a Justfile. Then: cd PATH && \
python3 -m pytest && ./build.sh && host inspect NAME.wasm\n\n\
With --lang js: an npm package over guest-sdk-js/ (a file: dependency), its node --test tests \
against the SDK's fake cluster, `npm run build` (recon-guest-build) and a Justfile. Then: cd \
PATH && npm install --offline --ignore-scripts && npm test && npm run build && host inspect \
dist/NAME.wasm"
    )]
    New(NewArgs),
    /// Publish a component to an OCI registry as a Wasm artifact (one
    /// application/wasm layer); prints its digest reference.
    Push(PushArgs),
}

/// Flags of `host new`.
#[derive(Debug, Args)]
pub struct NewArgs {
    /// The directory to create; its name is the guest's name.
    pub path: PathBuf,
    /// The guest's language.
    #[arg(long, value_enum, default_value_t = Lang::Rust)]
    pub lang: Lang,
    /// The primary kind: GROUP/VERSION/KIND, or VERSION/KIND for the core
    /// group. A group k8s-openapi does not have is a custom resource, whose
    /// type a Rust crate defines (Python and JavaScript need none).
    #[arg(
        long,
        default_value = "v1/ConfigMap",
        value_name = "GROUP/VERSION/KIND"
    )]
    pub kind: String,
    /// A custom resource's plural (default: the kind in lower case plus s,
    /// es or ies).
    #[arg(long)]
    pub plural: Option<String>,
    /// The custom resource is cluster-scoped (default: namespaced).
    #[arg(long)]
    pub cluster_scoped: bool,
    /// The SDK as a path dependency: a recon checkout's guest-sdk/ (with
    /// --lang python, guest-sdk-python/; with --lang js, guest-sdk-js/;
    /// default: the one of the source tree this host was built from).
    #[arg(long, value_name = "DIR", conflicts_with = "sdk_git")]
    pub sdk_path: Option<PathBuf>,
    /// The SDK as a git dependency: the URL of a recon repository (Rust
    /// only).
    #[arg(long, value_name = "URL")]
    pub sdk_git: Option<String>,
    /// With --sdk-git: the branch, tag or commit to build against.
    #[arg(long, value_name = "REV", requires = "sdk_git")]
    pub sdk_rev: Option<String>,
}

/// Flags of `host run`.
#[derive(Debug, Args)]
pub struct RunArgs {
    /// A reconciler component: a .wasm file, or oci://REGISTRY/REPO:TAG or
    /// oci://REGISTRY/REPO@sha256:DIGEST in a registry; repeat for several
    /// guests.
    #[arg(long = "guest", value_name = "PATH|oci://REF", required = true)]
    pub guests: Vec<PathBuf>,
    /// The kubeconfig to use (else KUBECONFIG, ~/.kube/config, in-cluster).
    #[arg(long)]
    pub kubeconfig: Option<PathBuf>,
    /// A context of the kubeconfig instead of its current one.
    #[arg(long)]
    pub context: Option<String>,
    /// Watch, reconcile, write and record events only in this namespace
    /// (repeatable; default: all).
    #[arg(long = "namespace", value_name = "NS", value_parser = parse_namespace)]
    pub namespaces: Vec<String>,
    /// The operator's grants (YAML or JSON): what each guest, by name, may
    /// read, write and record, and where. A guest it does not name, or
    /// whose manifest asks for more, is rejected. Without it each manifest
    /// is granted what it declares.
    #[arg(long, value_name = "FILE")]
    pub policy: Option<PathBuf>,
    /// Workers per guest (default: the manifest's concurrency, else 2).
    #[arg(long)]
    pub workers: Option<usize>,
    /// The most workers a guest's manifest may ask for; more is clamped
    /// with a warning.
    #[arg(long, default_value_t = recon_host::controller::DEFAULT_MAX_WORKERS)]
    pub max_workers: usize,
    /// Guest instances that may exist at once, all guests together; each
    /// worker holds at most one, so the guests' workers must fit.
    #[arg(long, default_value_t = 1000)]
    pub max_instances: u32,
    /// Guest calls that may run guest code at once, taking turns fairly
    /// among guests (default: one per CPU but one, at least one).
    #[arg(long)]
    pub guest_parallelism: Option<usize>,
    /// How the kernel ranks the threads guest code runs on against the
    /// host's: `idle` (SCHED_IDLE: guest code runs when the host's threads
    /// leave a CPU free) or `normal` (the host's own priority).
    #[arg(long, env = "RECON_GUEST_PRIORITY", default_value = "normal")]
    pub guest_priority: GuestPriority,
    /// API requests per second each guest may make.
    #[arg(long, default_value_t = 5.0)]
    pub qps: f64,
    /// API requests each guest may make at once from a full bucket.
    #[arg(long, default_value_t = 10)]
    pub burst: u32,
    /// Deadline of one reconcile (e.g. 30s, 500ms), counting time blocked
    /// in host and WASI calls too.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub reconcile_timeout: Duration,
    /// Deadline of a guest's manifest() at load; a guest that misses it is
    /// rejected and the others start.
    #[arg(long, default_value = "5s", value_parser = parse_duration)]
    pub manifest_timeout: Duration,
    /// Linear memory one guest instance may use (e.g. 64Mi, 1Gi, bytes).
    #[arg(long, default_value = "64Mi", value_parser = parse_size)]
    pub max_memory: usize,
    /// The memory all guests' instances may reserve together: workers ×
    /// (--max-memory + --max-read-size), checked at load (default: three
    /// quarters of the cgroup's memory limit, if there is one).
    #[arg(long, value_parser = parse_size)]
    pub memory_budget: Option<usize>,
    /// The memory one guest's instances may reserve, checked at load.
    #[arg(long, value_parser = parse_size)]
    pub guest_memory_budget: Option<usize>,
    /// The largest cache answer (get, list, list-meta, by-index) handed
    /// to a guest; larger ones are refused as too-large (default: a quarter
    /// of --max-memory).
    #[arg(long, value_parser = parse_size)]
    pub max_read_size: Option<usize>,
    /// The largest write body a guest may send (the API server's own
    /// limit is 3Mi).
    #[arg(long, default_value = "3Mi", value_parser = parse_size)]
    pub max_request_body: usize,
    /// Keys a guest's queue may hold for the guest's own enqueues to be
    /// taken; keys from the informers always go in.
    #[arg(long, default_value_t = recon_host::controller::DEFAULT_MAX_QUEUE_DEPTH)]
    pub max_queue_depth: usize,
    /// The longest log line of a guest (log calls, stdout, stderr); the
    /// rest is cut.
    #[arg(long, default_value = "4Ki", value_parser = parse_size)]
    pub max_log_line: usize,
    /// Log lines per second a guest may write (bursts of ten seconds'
    /// worth); more are dropped and counted.
    #[arg(long, default_value_t = 100)]
    pub guest_log_rate: u32,
    /// Give every guest a host directory: HOST::GUEST, read-write, or
    /// HOST::GUEST::ro (repeatable). A directory for one guest alone is
    /// granted in the policy (`dirs`). Nothing else of the host's
    /// filesystem is visible to guests.
    #[arg(long = "dir", value_name = "HOST::GUEST[::ro]")]
    pub dirs: Vec<Preopen>,
    /// Keep one instance per worker across reconciles instead of a fresh
    /// instance per reconcile (faster; state may leak between reconciles).
    #[arg(long)]
    pub reuse_instances: bool,
    /// When the API server answers again after an outage, retry at once
    /// the keys that failed because it did not answer, and the informers
    /// waiting out a backoff. `false` charges an outage to every key and
    /// informer as client-go does (per-key and list/watch backoff).
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub outage_recovery: bool,
    /// Keep the informers' cached objects compressed with a dictionary
    /// each informer learns from its first objects (a Pod takes about a
    /// fifth of its memory plain); `false` keeps them plain JSON.
    #[arg(long, default_value_t = true, action = clap::ArgAction::Set, value_name = "BOOL")]
    pub cache_compression: bool,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
    /// Look for new versions of the guests every --watch-interval (SIGHUP
    /// looks at once, with or without it): a changed file or OCI tag whose
    /// manifest is unchanged replaces the running version, keeping every
    /// cache; anything else is refused and the running version stays.
    #[arg(long)]
    pub watch: bool,
    /// How often --watch looks.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub watch_interval: Duration,
    /// Where /metrics is served ("0" disables it).
    #[arg(long, default_value = "0.0.0.0:8080", value_name = "ADDRESS")]
    pub metrics_bind: BindAddress,
    /// Where /healthz and /readyz are served ("0" disables them).
    #[arg(long, default_value = "0.0.0.0:8081", value_name = "ADDRESS")]
    pub health_bind: BindAddress,
    /// /healthz fails once a reflector has been unable to reach the API
    /// server for this long; a guest whose informer keeps failing this long
    /// is degraded.
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub unhealthy_after: Duration,
    /// Run workers only while holding a leader Lease, so that one of
    /// several replicas reconciles.
    #[arg(long)]
    pub leader_elect: bool,
    /// The Lease's namespace (default: the pod's namespace in a cluster,
    /// else `default`).
    #[arg(long)]
    pub leader_election_namespace: Option<String>,
    /// The Lease's name.
    #[arg(long, default_value = "recon-host")]
    pub leader_election_id: String,
    /// How long followers wait after the leader's last renewal before
    /// taking over.
    #[arg(long, default_value = "15s", value_parser = parse_duration)]
    pub leader_election_lease_duration: Duration,
    /// How long the leader retries a renewal before giving up leadership.
    #[arg(long, default_value = "10s", value_parser = parse_duration)]
    pub leader_election_renew_deadline: Duration,
    /// How often candidates try to acquire and the leader renews.
    #[arg(long, default_value = "2s", value_parser = parse_duration)]
    pub leader_election_retry_period: Duration,
    /// On SIGTERM / SIGINT, how long reconciles in flight may take to
    /// finish before they are abandoned.
    #[arg(long, default_value = "30s", value_parser = parse_duration)]
    pub shutdown_timeout: Duration,
    /// Log lines as text or as JSON objects.
    #[arg(long, value_enum, default_value_t = LogFormat::Text)]
    pub log_format: LogFormat,
}

/// An address to listen on, or none (`0`). `:8080` means all interfaces.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BindAddress(pub Option<SocketAddr>);

impl std::str::FromStr for BindAddress {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        if s == "0" {
            return Ok(BindAddress(None));
        }
        let full = match s.strip_prefix(':') {
            Some(port) => format!("0.0.0.0:{port}"),
            None => s.to_string(),
        };
        full.parse()
            .map(|address| BindAddress(Some(address)))
            .map_err(|_| format!("invalid address {s:?}: expected e.g. 0.0.0.0:8080, :8080 or 0"))
    }
}

/// Flags of `host inspect`.
#[derive(Debug, Args)]
pub struct InspectArgs {
    /// The component to inspect: a .wasm file or oci://REF.
    pub path: PathBuf,
    #[command(flatten)]
    pub cache: CacheArgs,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// Flags of `host push`.
#[derive(Debug, Args)]
pub struct PushArgs {
    /// The component to publish.
    pub path: PathBuf,
    /// Where: REGISTRY/REPO:TAG (an oci:// prefix is allowed).
    pub reference: String,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

/// How to reach OCI registries, shared by the commands that use them.
#[derive(Debug, Args)]
pub struct RegistryArgs {
    /// A registry (HOST:PORT) spoken to over plain HTTP instead of HTTPS;
    /// repeatable. Only for a registry on a trusted network, e.g. loopback.
    #[arg(long = "insecure-registry", value_name = "HOST:PORT")]
    pub insecure: Vec<String>,
    /// The Docker config file with registry credentials (default:
    /// $DOCKER_CONFIG/config.json, else ~/.docker/config.json).
    #[arg(long, value_name = "FILE")]
    pub docker_config: Option<PathBuf>,
}

impl RegistryArgs {
    fn options(&self) -> RegistryOptions {
        RegistryOptions {
            insecure: self.insecure.clone(),
            docker_config: self.docker_config.clone(),
        }
    }
}

/// The compiled-component cache flag, shared by the commands that load
/// guests.
#[derive(Debug, Args)]
pub struct CacheArgs {
    /// Where compiled guests are cached (default: ~/.cache/recon/components).
    /// The host creates it 0700 and does not use one that other users can
    /// write.
    #[arg(long, env = "RECON_CACHE_DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl CacheArgs {
    /// The cache directory: the flag, else the default.
    pub fn dir(&self) -> Option<PathBuf> {
        self.cache_dir.clone().or_else(default_cache_dir)
    }
}

/// Flags of `host dev-server`.
#[derive(Debug, Args)]
pub struct DevServerArgs {
    /// Address to listen on (port 0 picks a free port).
    #[arg(long, default_value = "127.0.0.1:6443")]
    pub listen: SocketAddr,
    /// Where to write the kubeconfig (server URL, CA, token).
    #[arg(long, default_value = "recon-dev.kubeconfig")]
    pub kubeconfig_out: PathBuf,
    /// Serve plain HTTP instead of HTTPS (debugging only).
    #[arg(long)]
    pub insecure_http: bool,
    /// Bearer token clients must send (default: 32 random hex characters).
    #[arg(long, env = "RECON_DEV_TOKEN", hide_env_values = true)]
    pub token: Option<String>,
    /// Period of watch BOOKMARK events (e.g. 60s, 500ms, 2m).
    #[arg(long, default_value = "60s", value_parser = parse_duration)]
    pub bookmark_interval: Duration,
    /// Watch events of history kept; watches from older resourceVersions get 410 Expired.
    #[arg(long, default_value_t = 10_000)]
    pub history_limit: usize,
}

/// Parse a size: bytes, or with `Ki`, `Mi`, `Gi` (an optional trailing `B`).
pub fn parse_size(s: &str) -> Result<usize, String> {
    let s = s.trim();
    let trimmed = s.strip_suffix('B').unwrap_or(s);
    let split = trimmed
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(trimmed.len());
    let (num, unit) = trimmed.split_at(split);
    let n: usize = num
        .parse()
        .map_err(|_| format!("invalid size {s:?}: expected e.g. 64Mi, 1Gi, 1048576"))?;
    let shift = match unit {
        "" => 0,
        "Ki" => 10,
        "Mi" => 20,
        "Gi" => 30,
        _ => {
            return Err(format!(
                "invalid size unit {unit:?} in {s:?}: use Ki, Mi or Gi"
            ));
        }
    };
    n.checked_mul(1 << shift)
        .ok_or_else(|| format!("size {s:?} is too large"))
}

/// Parse a namespace name: a DNS-1123 label.
pub fn parse_namespace(s: &str) -> Result<String, String> {
    if is_dns_label(s) {
        Ok(s.to_string())
    } else {
        Err(format!(
            "invalid namespace {s:?}: 1-63 of a-z, 0-9 and '-', not starting or ending with '-'"
        ))
    }
}

/// Parse `500ms`, `60s`, `2m`, `1h` or a bare number of seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let s = s.trim();
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num
        .parse()
        .map_err(|_| format!("invalid duration {s:?}: expected e.g. 500ms, 60s, 2m"))?;
    match unit {
        "ms" => Ok(Duration::from_millis(n)),
        "" | "s" => Ok(Duration::from_secs(n)),
        "m" => Ok(Duration::from_secs(n * 60)),
        "h" => Ok(Duration::from_secs(n * 3600)),
        _ => Err(format!(
            "invalid duration unit {unit:?} in {s:?}: use ms, s, m or h"
        )),
    }
}

impl Cli {
    /// Run the chosen command.
    pub fn run(self) -> ExitCode {
        match self.command {
            Command::DevServer(args) => {
                init_logging("warn", LogFormat::Text);
                run_dev_server(args)
            }
            Command::Run(args) => {
                init_logging("info", args.log_format);
                run_guests(*args)
            }
            Command::Inspect(args) => {
                init_logging("warn", LogFormat::Text);
                inspect(args)
            }
            Command::Push(args) => {
                init_logging("warn", LogFormat::Text);
                push(args)
            }
            Command::New(args) => match new_guest(args) {
                Ok(()) => ExitCode::SUCCESS,
                Err(e) => {
                    eprintln!("host new: {e}");
                    ExitCode::FAILURE
                }
            },
        }
    }
}

fn tokio_runtime(command: &str) -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("host {command}: starting the runtime: {e}");
            None
        }
    }
}

fn new_guest(args: NewArgs) -> Result<(), ScaffoldError> {
    let kind = Kind::parse(&args.kind, args.plural.as_deref(), args.cluster_scoped)?;
    let lang = args.lang;
    let sdk = match (args.sdk_path, args.sdk_git) {
        (_, Some(_)) if lang != Lang::Rust => return Err(ScaffoldError::SdkGitOf(lang)),
        (Some(path), _) => match (lang, lang.is_sdk(&path)) {
            (_, true) => SdkSource::Path(std::path::absolute(&path).unwrap_or(path)),
            (Lang::Rust, false) => return Err(ScaffoldError::BadSdkPath(path)),
            (_, false) => return Err(ScaffoldError::BadSdkPathOf { path, lang }),
        },
        (None, Some(url)) => SdkSource::Git {
            url,
            rev: args.sdk_rev,
        },
        (None, None) => SdkSource::Path(built_in_sdk_of(lang).ok_or(match lang {
            Lang::Rust => ScaffoldError::NoSdk,
            _ => ScaffoldError::NoSdkOf(lang),
        })?),
    };
    let guest = NewGuest {
        dir: args.path,
        kind,
        lang,
        sdk,
    };
    scaffold::create(&guest)?;
    let dir = guest.dir.display();
    let crate_name = guest
        .dir
        .file_name()
        .unwrap_or_default()
        .to_string_lossy()
        .replace('-', "_");
    let (what, next) = match lang {
        Lang::Rust => (
            "guest crate",
            format!(
                "cargo test && cargo guest && host inspect \
                 target/wasm32-wasip2/guest/{crate_name}.wasm"
            ),
        ),
        Lang::Python => (
            "Python guest",
            format!("python3 -m pytest && ./build.sh && host inspect {crate_name}.wasm"),
        ),
        Lang::Js => (
            "JavaScript guest",
            format!(
                "npm install --offline --ignore-scripts && npm test && npm run build && \
                 host inspect dist/{crate_name}.wasm"
            ),
        ),
    };
    println!("created the {what} {dir} (primary kind {})", args.kind);
    println!("next: cd {dir} && {next}");
    Ok(())
}

fn push(args: PushArgs) -> ExitCode {
    let Some(tokio) = tokio_runtime("push") else {
        return ExitCode::FAILURE;
    };
    let reference = args
        .reference
        .strip_prefix(registry::SCHEME)
        .unwrap_or(&args.reference);
    match tokio.block_on(registry::push(
        &args.path,
        reference,
        &args.registry.options(),
    )) {
        Ok(digest) => {
            let repository = reference.split_once('@').map_or(reference, |(r, _)| r);
            let repository = match repository.rsplit_once(':') {
                Some((name, tag)) if !tag.contains('/') => name,
                _ => repository,
            };
            println!("{}{repository}@{digest}", registry::SCHEME);
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("host push: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The most a ConfigMap holds (the API server's 1 MiB limit on its data),
/// one of the ways docs/DEPLOYING.md ships a guest.
const CONFIGMAP_LIMIT: u64 = 1 << 20;

fn inspect(args: InspectArgs) -> ExitCode {
    let Some(tokio) = tokio_runtime("inspect") else {
        return ExitCode::FAILURE;
    };
    tokio.block_on(async move {
        let config_cache = args.cache.dir();
        let config = RuntimeConfig {
            cache_dir: config_cache.clone(),
            ..RuntimeConfig::default()
        };
        let runtime = match Runtime::new(config) {
            Ok(runtime) => runtime,
            Err(e) => {
                eprintln!("host inspect: {e}");
                return ExitCode::FAILURE;
            }
        };
        let options = args.registry.options();
        let resolved = registry::resolve(&args.path, &options, config_cache.as_deref());
        let path = match resolved.await {
            Ok(component) => component.path,
            Err(e) => {
                eprintln!("host inspect: {e}");
                return ExitCode::FAILURE;
            }
        };
        match runtime.load(&path).await {
            Ok(guest) => {
                let json =
                    serde_json::to_string_pretty(guest.manifest()).expect("a manifest serializes");
                println!("{json}");
                let size = std::fs::metadata(&path).map_or(0, |m| m.len());
                eprintln!("{}: {size} bytes", args.path.display());
                if size > CONFIGMAP_LIMIT {
                    eprintln!(
                        "warning: over the {CONFIGMAP_LIMIT} bytes a ConfigMap holds: ship it in \
                         an image or a volume, not a ConfigMap (docs/DEPLOYING.md)"
                    );
                }
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("host inspect: {e}");
                ExitCode::FAILURE
            }
        }
    })
}

/// `reportingInstance` of the host's events: the pod's name in a cluster.
fn reporting_instance() -> String {
    ["POD_NAME", "HOSTNAME"]
        .iter()
        .find_map(|name| std::env::var(name).ok().filter(|v| !v.is_empty()))
        .unwrap_or_else(|| "recon-host".to_string())
}

/// The namespace of the pod the host runs in, if it runs in one.
fn pod_namespace() -> Option<String> {
    std::fs::read_to_string("/var/run/secrets/kubernetes.io/serviceaccount/namespace")
        .ok()
        .map(|ns| ns.trim().to_string())
        .filter(|ns| !ns.is_empty())
}

fn leader_election_config(args: &RunArgs) -> LeaderElectionConfig {
    let namespace = args
        .leader_election_namespace
        .clone()
        .or_else(pod_namespace)
        .unwrap_or_else(|| "default".to_string());
    // controller-runtime's identity: the host name plus a random suffix.
    let identity = format!("{}_{:016x}", reporting_instance(), fastrand::u64(..));
    LeaderElectionConfig {
        lease_duration: args.leader_election_lease_duration,
        renew_deadline: args.leader_election_renew_deadline,
        retry_period: args.leader_election_retry_period,
        ..LeaderElectionConfig::new(&namespace, &args.leader_election_id, &identity)
    }
}

fn run_guests(args: RunArgs) -> ExitCode {
    let Some(tokio) = tokio_runtime("run") else {
        return ExitCode::FAILURE;
    };
    let code = tokio.block_on(async move {
        match serve(args).await {
            Ok(()) => ExitCode::SUCCESS,
            Err(e) => {
                eprintln!("host run: {e}");
                ExitCode::FAILURE
            }
        }
    });
    // Reconciles abandoned at the shutdown timeout must not hold the exit.
    tokio.shutdown_background();
    code
}

async fn serve(args: RunArgs) -> Result<(), String> {
    if let Some(workers) = args.workers
        && workers > args.max_workers
    {
        return Err(format!(
            "--workers {workers} is above --max-workers {}",
            args.max_workers
        ));
    }
    if args.guest_parallelism == Some(0)
        || args.max_workers == 0
        || args.max_instances == 0
        || args.max_queue_depth == 0
        || args.guest_log_rate == 0
    {
        return Err(
            "--guest-parallelism, --max-workers, --max-instances, --max-queue-depth and --guest-log-rate must be at least 1".into(),
        );
    }
    let leader_election = args.leader_elect.then(|| leader_election_config(&args));
    if let Some(election) = &leader_election {
        election.validate()?;
    }
    let cache_dir = args.cache.dir();
    let runtime = RuntimeConfig {
        reconcile_timeout: args.reconcile_timeout,
        manifest_timeout: args.manifest_timeout,
        max_instances: args.max_instances,
        parallelism: args.guest_parallelism.unwrap_or(0),
        guest_priority: args.guest_priority,
        max_memory: args.max_memory,
        preopens: args.dirs,
        limits: Limits {
            max_read_size: args.max_read_size.unwrap_or(args.max_memory / 4),
            max_request_body: args.max_request_body,
            max_log_line: args.max_log_line,
            log_lines_per_second: f64::from(args.guest_log_rate),
            log_burst: args.guest_log_rate.saturating_mul(10),
        },
        memory_budget: MemoryBudget::new(
            args.memory_budget,
            args.guest_memory_budget,
            cgroup_memory_limit(),
        ),
        cache_dir,
        ..RuntimeConfig::default()
    };
    let reload = Arc::new(tokio::sync::Notify::new());
    let config = OperatorConfig {
        guests: args.guests,
        registry: args.registry.options(),
        watch: args.watch.then_some(args.watch_interval),
        reload: Some(Arc::clone(&reload)),
        policy: args.policy,
        namespaces: args.namespaces,
        connect: ConnectOptions {
            kubeconfig: args.kubeconfig,
            context: args.context,
            in_cluster: false,
        },
        rate_limit: RateLimit::new(args.qps, args.burst),
        runtime,
        workers: args.workers,
        max_workers: args.max_workers,
        max_queue_depth: args.max_queue_depth,
        reuse_instances: args.reuse_instances,
        cache_compression: args.cache_compression,
        outage_recovery: args.outage_recovery,
        metrics_bind: args.metrics_bind.0,
        health_bind: args.health_bind.0,
        unhealthy_after: args.unhealthy_after,
        progress_on_stderr: args.log_format == LogFormat::Text,
        leader_election,
        shutdown_timeout: args.shutdown_timeout,
        reporting_instance: reporting_instance(),
    };
    let stop = CancellationToken::new();
    let signal_stop = stop.clone();
    tokio::spawn(async move {
        if let Err(e) = wait_for_signal().await {
            tracing::error!("waiting for signals: {e}");
        }
        tracing::info!("shutting down");
        signal_stop.cancel();
    });
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let mut hangup = signal(SignalKind::hangup()).map_err(|e| format!("SIGHUP: {e}"))?;
        tokio::spawn(async move {
            while hangup.recv().await.is_some() {
                tracing::info!("SIGHUP: looking for new versions of the guests");
                reload.notify_one();
            }
        });
    }
    operator::run(config, stop).await.map_err(|e| e.to_string())
}

fn run_dev_server(args: DevServerArgs) -> ExitCode {
    let Some(runtime) = tokio_runtime("dev-server") else {
        return ExitCode::FAILURE;
    };
    if !args.listen.ip().is_loopback() {
        eprintln!(
            "host dev-server: warning: listening on {} exposes a development server (one shared token, no authorization) beyond this machine",
            args.listen
        );
    }
    runtime.block_on(async move {
        let config = DevServerConfig {
            listen: args.listen,
            tls: !args.insecure_http,
            token: args.token,
            bookmark_interval: args.bookmark_interval,
            history_limit: args.history_limit,
            kubeconfig_out: Some(args.kubeconfig_out.clone()),
            ..DevServerConfig::default()
        };
        let server = match DevServer::start(config).await {
            Ok(s) => s,
            Err(e) => {
                eprintln!("host dev-server: {e}");
                return ExitCode::FAILURE;
            }
        };
        {
            use std::io::Write;
            let mut out = std::io::stdout().lock();
            let _ = writeln!(
                out,
                "dev-server listening on {} (kubeconfig: {})",
                server.url(),
                args.kubeconfig_out.display()
            );
            let _ = out.flush();
        }
        if let Err(e) = wait_for_signal().await {
            eprintln!("host dev-server: waiting for signals: {e}");
            server.shutdown().await;
            return ExitCode::FAILURE;
        }
        server.shutdown().await;
        ExitCode::SUCCESS
    })
}

#[cfg(unix)]
async fn wait_for_signal() -> std::io::Result<()> {
    use tokio::signal::unix::{SignalKind, signal};
    let mut term = signal(SignalKind::terminate())?;
    let mut int = signal(SignalKind::interrupt())?;
    tokio::select! {
        _ = term.recv() => {}
        _ = int.recv() => {}
    }
    Ok(())
}

#[cfg(not(unix))]
async fn wait_for_signal() -> std::io::Result<()> {
    tokio::signal::ctrl_c().await
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_parse() {
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("60s"), Ok(Duration::from_secs(60)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("7"), Ok(Duration::from_secs(7)));
        assert!(parse_duration("x").is_err());
        assert!(parse_duration("5d").is_err());
    }

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_size("64Mi"), Ok(64 << 20));
        assert_eq!(parse_size("1Gi"), Ok(1 << 30));
        assert_eq!(parse_size("512KiB"), Ok(512 << 10));
        assert_eq!(parse_size("4096"), Ok(4096));
        assert!(parse_size("64MB").unwrap_err().contains("unit"));
        assert!(parse_size("Mi").is_err());
    }

    #[test]
    fn run_flags_parse() {
        let cli = Cli::try_parse_from([
            "host",
            "run",
            "--guest",
            "a.wasm",
            "--guest",
            "b.wasm",
            "--workers",
            "4",
            "--max-memory",
            "32Mi",
            "--reconcile-timeout",
            "5s",
            "--dir",
            "/tmp::/data",
            "--reuse-instances",
            "--cache-dir",
            "/cache",
            "--namespace",
            "default",
            "--namespace",
            "team-a",
            "--policy",
            "policy.yaml",
        ])
        .unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run");
        };
        assert_eq!(args.guests.len(), 2);
        assert_eq!(args.workers, Some(4));
        assert_eq!(args.max_memory, 32 << 20);
        assert_eq!(args.reconcile_timeout, Duration::from_secs(5));
        assert_eq!(args.dirs[0].guest, "/data");
        assert!(args.reuse_instances);
        assert_eq!(args.cache.dir(), Some(PathBuf::from("/cache")));
        assert_eq!(args.namespaces, ["default", "team-a"]);
        assert_eq!(args.policy, Some(PathBuf::from("policy.yaml")));
        let bad = Cli::try_parse_from([
            "host",
            "run",
            "--guest",
            "a.wasm",
            "--namespace",
            "Kube_System",
        ])
        .unwrap_err()
        .to_string();
        assert!(bad.contains("invalid namespace \"Kube_System\""), "{bad}");
        assert!(
            Cli::try_parse_from(["host", "run"]).is_err(),
            "--guest is required"
        );
    }

    #[test]
    fn inspect_takes_the_cache_flag_of_run() {
        let cli =
            Cli::try_parse_from(["host", "inspect", "--cache-dir", "/cache", "a.wasm"]).unwrap();
        let Command::Inspect(args) = cli.command else {
            panic!("not inspect");
        };
        assert_eq!(args.path, PathBuf::from("a.wasm"));
        assert_eq!(args.cache.dir(), Some(PathBuf::from("/cache")));
    }

    #[test]
    fn bind_addresses_parse() {
        let parse = |s: &str| s.parse::<BindAddress>();
        assert_eq!(parse("0"), Ok(BindAddress(None)));
        assert_eq!(
            parse(":8080"),
            Ok(BindAddress(Some("0.0.0.0:8080".parse().unwrap())))
        );
        assert_eq!(
            parse("127.0.0.1:0"),
            Ok(BindAddress(Some("127.0.0.1:0".parse().unwrap())))
        );
        assert!(parse("localhost").unwrap_err().contains("invalid address"));
        let cli = Cli::try_parse_from(["host", "run", "--guest", "a.wasm"]).unwrap();
        let Command::Run(args) = cli.command else {
            panic!("not run");
        };
        assert_eq!(
            args.metrics_bind,
            BindAddress(Some("0.0.0.0:8080".parse().unwrap()))
        );
        assert_eq!(
            args.health_bind,
            BindAddress(Some("0.0.0.0:8081".parse().unwrap()))
        );
        assert_eq!(args.shutdown_timeout, Duration::from_secs(30));
        assert_eq!(args.leader_election_lease_duration, Duration::from_secs(15));
        assert_eq!(args.leader_election_renew_deadline, Duration::from_secs(10));
        assert_eq!(args.leader_election_retry_period, Duration::from_secs(2));
        assert!(!args.leader_elect);
    }

    #[test]
    fn cli_is_well_formed() {
        use clap::CommandFactory;
        Cli::command().debug_assert();
    }
}
