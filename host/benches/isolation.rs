//! Guest isolation under attack, measured the way an operator sees it: a
//! `host` process (release build) runs the `hostile` guest beside
//! `configmap-mirror` on the dev API server, and the neighbour's latency —
//! from creating a ConfigMap to its copy appearing in another namespace —
//! is measured quiet and under each attack the hostile guest mounts, with
//! the time the neighbour took to sync its cache and the host's resident
//! memory once synced and at its peak under the attack. Prints, asserts
//! nothing.
//!
//! Attacks (the hostile guest's keys and `manifest.json`, see its docs):
//! spinning, copying memory in bulk, sleeping, allocating, listing,
//! enqueueing, logging, writing large bodies, and declaring the most field
//! indexes on the shared ConfigMap cache. An attack that ends by itself
//! (listing, enqueueing, logging, writing) runs again at once through its
//! `again-` key, as a guest that means harm would requeue it, so the
//! host's per-key backoff does not thin it out while it is measured; one
//! that never ends (spinning, copying, sleeping) or traps (allocating)
//! is retried on the host's backoff, which no guest can avoid. Every
//! scenario caches [`BACKGROUND`] ConfigMaps first.
//!
//! A p99 of a few hundred latencies moves between runs as much as an
//! attack moves it, so each scenario measures [`SOURCES`] latencies
//! (`--sources=N` for another count), and `--rounds=N` runs the quiet
//! scenario and the attacks N times in turn: each attack's p99 is set
//! against the quiet p99 of its own round, and a summary gives every
//! round's ratio.
//!
//! `--log=FILTER` runs each scenario's host with `RUST_LOG=FILTER`, keeps
//! its log as `NAME-ROUND.log` in the benchmark's directory, and prints
//! when (UTC) the slowest copies were asked for, to find them in that log,
//! and how late after their deadline the host stopped the calls it
//! stopped (the log's `duration_ms` of each "ran past its deadline").
//! `--reconcile-timeout=SECONDS` (10 by default) sets that deadline: a
//! shorter one stops the spinning and sleeping calls more often.
//!
//! A virtual machine can be paused by its hypervisor for tens of
//! milliseconds, which no scheduling in the host can hide and which
//! lands on whichever scenario is running. So each scenario also reports
//! what the machine did while its creates were measured: the pauses of
//! [`PAUSE`] or more that a thread sleeping 1 ms at a time saw, and the
//! CPU time the hypervisor took (steal, from `/proc/stat`). A scenario is
//! disturbed by the machine if it saw such a pause or the steal exceeded
//! [`STEAL_SHARE`] of the CPU time its window had. The summary gives the
//! ratios over every round, and again for the windows the machine did not
//! disturb, each against the median p99 of the undisturbed quiet windows.
//!
//! The memory attacks run inside a memory cgroup at the limit deploy/ ships
//! (256 MiB) when the machine allows it (root and a writable cgroup v1 or
//! v2 memory controller), with the host's default memory budget derived
//! from that limit; the figures say whether the cgroup killed anything.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
#[path = "../tests/hosts/mod.rs"]
mod hosts;
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use hosts::{Host, wait_for_status};
use recon_devserver::store::{WatchEventKind, WatchParams};
use recon_devserver::{DevServer, DevServerConfig};
use serde_json::json;

/// ConfigMaps the neighbour mirrors per scenario (`--sources=N`), and
/// how fast they come.
const SOURCES: usize = 1000;
const RATE: u64 = 100;
/// ConfigMaps cached before the host starts, of [`BACKGROUND_BYTES`] each.
const BACKGROUND: usize = 2000;
const BACKGROUND_BYTES: usize = 2048;
/// The memory limit of the host's container in deploy/.
const DEPLOY_LIMIT: usize = 256 << 20;
/// A gap between two 1 ms sleeps that counts as the machine pausing: well
/// above the neighbour's quiet p99 (a few milliseconds).
const PAUSE: Duration = Duration::from_millis(25);
/// The share of a window's CPU time (all CPUs) that the hypervisor may
/// steal before the window counts as disturbed by the machine.
const STEAL_SHARE: f64 = 0.01;

/// Whether the neighbour's queue is empty, by the host's `/metrics`.
fn neighbour_idle(metrics: std::net::SocketAddr) -> bool {
    let (_, text) = hosts::http_get(metrics, "/metrics");
    text.lines().any(|line| {
        line.starts_with("workqueue_depth{")
            && line.contains("name=\"configmap-mirror\"")
            && line.ends_with(" 0")
    })
}

/// One attack: the hostile guest's manifest and the keys it is handed.
struct Attack {
    name: &'static str,
    manifest: &'static str,
    /// Names of hostile keys, each created in a namespace of its own.
    keys: Vec<&'static str>,
    /// ConfigMaps of 900 KB cached besides the background ones: more than
    /// a cache read may hand over.
    large: usize,
    /// Run inside a memory cgroup at [`DEPLOY_LIMIT`].
    memory: bool,
}

fn attacks() -> Vec<Attack> {
    let attack = |name, manifest, keys: Vec<&'static str>| Attack {
        name,
        manifest,
        keys,
        large: 0,
        memory: false,
    };
    vec![
        attack("quiet", "{}", vec![]),
        attack(
            "spin (8 workers)",
            r#"{"concurrency": 8}"#,
            vec!["loop-forever"; 8],
        ),
        attack(
            "bulk copy (4 workers)",
            r#"{"concurrency": 4}"#,
            vec!["bulk-copy"; 4],
        ),
        attack(
            "sleep (16 workers)",
            r#"{"concurrency": 16}"#,
            vec!["sleep"; 16],
        ),
        Attack {
            memory: true,
            ..attack(
                "alloc 1 GiB (4 workers)",
                r#"{"concurrency": 4}"#,
                vec!["alloc-1gib"; 4],
            )
        },
        Attack {
            memory: true,
            large: 20,
            ..attack(
                "list 20 x 900 KB (4 workers)",
                r#"{"concurrency": 4}"#,
                vec!["again-list-all"; 4],
            )
        },
        Attack {
            memory: true,
            ..attack(
                "8 MiB writes (4 workers)",
                r#"{"concurrency": 4}"#,
                vec!["again-big-write"; 4],
            )
        },
        attack(
            "enqueue 1M keys",
            r#"{"concurrency": 2}"#,
            vec!["again-enqueue-flood"; 2],
        ),
        attack(
            "log flood",
            r#"{"concurrency": 2}"#,
            vec!["again-log-flood"; 2],
        ),
        attack("16 field indexes", r#"{"indexes": 16}"#, vec![]),
    ]
}

/// A memory cgroup the host runs in, removed on drop.
struct MemoryCgroup {
    dir: PathBuf,
    v2: bool,
}

impl MemoryCgroup {
    /// A cgroup limited to `limit` bytes, if this machine lets us make one.
    fn create(limit: usize) -> Option<MemoryCgroup> {
        let name = format!("recon-bench-{}", std::process::id());
        let (dir, v2) = if Path::new("/sys/fs/cgroup/memory/memory.limit_in_bytes").exists() {
            (Path::new("/sys/fs/cgroup/memory").join(&name), false)
        } else if std::fs::read_to_string("/sys/fs/cgroup/cgroup.subtree_control")
            .is_ok_and(|c| c.split_whitespace().any(|c| c == "memory"))
        {
            (Path::new("/sys/fs/cgroup").join(&name), true)
        } else {
            return None;
        };
        std::fs::create_dir(&dir).ok()?;
        let cgroup = MemoryCgroup { dir, v2 };
        let (file, swap) = if v2 {
            ("memory.max", "memory.swap.max")
        } else {
            ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes")
        };
        std::fs::write(cgroup.dir.join(file), limit.to_string()).ok()?;
        // No swap beyond the limit, when the kernel accounts it.
        let _ = std::fs::write(
            cgroup.dir.join(swap),
            if v2 { "0".into() } else { limit.to_string() },
        );
        Some(cgroup)
    }

    fn add(&self, pid: u32) {
        std::fs::write(self.dir.join("cgroup.procs"), pid.to_string()).expect("join the cgroup");
    }

    /// The most memory charged to the cgroup.
    fn peak(&self) -> Option<usize> {
        let file = if self.v2 {
            "memory.peak"
        } else {
            "memory.max_usage_in_bytes"
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()?
            .trim()
            .parse()
            .ok()
    }

    /// Processes the cgroup's OOM killer ended.
    fn oom_kills(&self) -> u64 {
        let file = if self.v2 {
            "memory.events"
        } else {
            "memory.oom_control"
        };
        std::fs::read_to_string(self.dir.join(file))
            .ok()
            .and_then(|text| {
                text.lines()
                    .find_map(|l| l.strip_prefix("oom_kill ")?.trim().parse().ok())
            })
            .unwrap_or(0)
    }
}

impl Drop for MemoryCgroup {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir(&self.dir);
    }
}

/// The VmRSS of `pid`, in bytes.
fn rss(pid: u32) -> Option<usize> {
    support::process_status_bytes(&pid.to_string(), "VmRSS:")
}

/// The peak VmRSS of `pid`, sampled until `stop`.
fn sample_rss(pid: u32, stop: Arc<AtomicBool>, peak: Arc<AtomicUsize>) {
    while !stop.load(Ordering::Relaxed) {
        if let Some(bytes) = rss(pid) {
            peak.fetch_max(bytes, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The CPU time the hypervisor has taken from this machine since boot
/// (the `steal` column of `/proc/stat`), if the kernel tells it.
fn steal() -> Option<Duration> {
    let stat = std::fs::read_to_string("/proc/stat").ok()?;
    let ticks: u64 = stat
        .lines()
        .next()?
        .split_whitespace()
        .nth(8)?
        .parse()
        .ok()?;
    // SAFETY: sysconf reads a constant of the system and has no preconditions.
    let per_second = u64::try_from(unsafe { libc::sysconf(libc::_SC_CLK_TCK) }).ok()?;
    Some(Duration::from_secs_f64(
        ticks as f64 / per_second.max(1) as f64,
    ))
}

/// What the machine did while a window was measured: the pauses of
/// [`PAUSE`] or more between two wake-ups of a thread that sleeps 1 ms at
/// a time, and the steal time.
struct MachineWatch {
    stop: Arc<AtomicBool>,
    thread: std::thread::JoinHandle<Vec<Duration>>,
    steal: Option<Duration>,
    started: Instant,
}

struct Machine {
    pauses: Vec<Duration>,
    steal: Option<Duration>,
    window: Duration,
}

impl Machine {
    /// Whether the machine paused, or stole more than [`STEAL_SHARE`] of
    /// the CPU time, while the window was measured.
    fn disturbed(&self) -> bool {
        let cpus = std::thread::available_parallelism().map_or(1, |n| n.get()) as f64;
        let stolen = self.steal.unwrap_or_default().as_secs_f64();
        !self.pauses.is_empty() || stolen > STEAL_SHARE * cpus * self.window.as_secs_f64()
    }
}

impl MachineWatch {
    fn start() -> MachineWatch {
        let stop = Arc::new(AtomicBool::new(false));
        let thread = std::thread::spawn({
            let stop = Arc::clone(&stop);
            move || {
                let mut pauses = Vec::new();
                let mut last = Instant::now();
                while !stop.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(1));
                    let now = Instant::now();
                    if now - last >= PAUSE {
                        pauses.push(now - last);
                    }
                    last = now;
                }
                pauses
            }
        });
        MachineWatch {
            stop,
            thread,
            steal: steal(),
            started: Instant::now(),
        }
    }

    fn stop(self) -> Machine {
        self.stop.store(true, Ordering::Relaxed);
        let pauses = self.thread.join().unwrap();
        Machine {
            pauses,
            steal: self
                .steal
                .zip(steal())
                .map(|(before, after)| after - before),
            window: self.started.elapsed(),
        }
    }
}

struct Figures {
    p50: Duration,
    p99: Duration,
    max: Duration,
    synced: Duration,
    synced_rss: usize,
    peak_rss: usize,
    /// (cgroup peak, OOM kills) when run in a cgroup.
    cgroup: Option<(Option<usize>, u64)>,
    exit: String,
    /// What the machine did while the creates were measured.
    machine: Machine,
    /// With `--log`: what the host's log tells.
    log: Option<HostLog>,
}

/// What a scenario's host log tells, with `--log`.
struct HostLog {
    /// Where it was kept.
    file: PathBuf,
    /// When the slowest copies were asked for, with their latencies,
    /// slowest first.
    slowest: Vec<(jiff::Timestamp, Duration)>,
    /// The calls stopped at their deadline, and the most any ran past it
    /// ([`stopped_late`]).
    stopped: (usize, Duration),
}

/// How many calls the host's log says it stopped at their deadline, and
/// the most any of them ran past it: the time the host took to stop it.
fn stopped_late(log: &str, deadline: Duration) -> (usize, Duration) {
    log.lines()
        .filter(|line| line.contains("ran past its deadline"))
        .filter_map(|line| {
            let ms = line
                .split("duration_ms=")
                .nth(1)?
                .split(['}', ' '])
                .next()?;
            Some(Duration::from_secs_f64(ms.parse::<f64>().ok()? / 1e3))
        })
        .fold((0, Duration::ZERO), |(count, late), ran| {
            (count + 1, late.max(ran.saturating_sub(deadline)))
        })
}

/// How each scenario runs: ConfigMaps mirrored, and the host's log filter.
struct Options {
    sources: usize,
    log: Option<String>,
    /// The host's `--reconcile-timeout`: how often a spinning or sleeping
    /// call is stopped.
    reconcile_timeout: Duration,
}

async fn run(attack: &Attack, base: &Path, options: &Options, round: usize) -> Figures {
    let sources = options.sources;
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let dir = base.join(attack.name.split_whitespace().next().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), attack.manifest).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    for ns in ["team-a", "bulk"] {
        hosts::create_namespace(&store, ns);
    }
    let filler = "x".repeat(BACKGROUND_BYTES);
    for i in 0..BACKGROUND {
        let data = json!({"metadata": {"name": format!("b-{i}")}, "data": {"filler": filler}});
        store.create(&configmaps, Some("bulk"), data, None).unwrap();
    }
    let large = "l".repeat(900_000);
    for i in 0..attack.large {
        let data = json!({"metadata": {"name": format!("large-{i}")}, "data": {"blob": large}});
        store.create(&configmaps, Some("bulk"), data, None).unwrap();
    }
    hosts::hostile_keys(&store, &attack.keys);
    let cgroup = attack
        .memory
        .then(|| MemoryCgroup::create(DEPLOY_LIMIT))
        .flatten();
    let neighbour = guests::guest_wasm("configmap_mirror");
    let attack_dir = format!("{}::/hostile", dir.display());
    let reconcile_timeout = format!("{}s", options.reconcile_timeout.as_secs());
    let mut flags = vec![
        "--guest",
        neighbour.to_str().unwrap(),
        "--dir",
        &attack_dir,
        "--shutdown-timeout",
        "1s",
        "--reconcile-timeout",
        &reconcile_timeout,
        // The neighbour's writes (a copy, a finalizer) must not wait on
        // the client-side rate limit: it is the guests that are measured.
        "--qps",
        "1000",
        "--burst",
        "1000",
    ];
    if cgroup.is_some() {
        // 6 workers × (24 MiB + 6 MiB) within the default budget of ¾ × 256 MiB.
        flags.extend(["--max-memory", "24Mi"]);
    }
    let started = Instant::now();
    let env: Vec<(&str, &str)> = options
        .log
        .iter()
        .map(|filter| ("RUST_LOG", filter.as_str()))
        .collect();
    let mut host = Host::start("hostile", &kubeconfig, &flags, &env);
    if let Some(cgroup) = &cgroup {
        cgroup.add(host.pid());
    }
    host.wait_for_log(r#"caches synced guest="configmap-mirror""#);
    let synced = started.elapsed();
    let health = host.endpoint("/healthz");
    wait_for_status(health, "/readyz", 200);
    let synced_rss = rss(host.pid()).unwrap_or(0);
    let (stop, peak) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let sampler = std::thread::spawn({
        let (pid, stop, peak) = (host.pid(), Arc::clone(&stop), Arc::clone(&peak));
        move || sample_rss(pid, stop, peak)
    });
    // Let the attack get going, and the neighbour work off the keys of
    // its initial sync: what is measured is its latency once idle.
    tokio::time::sleep(Duration::from_secs(1)).await;
    let metrics = host.endpoint("/metrics");
    let drained = Instant::now() + Duration::from_secs(60);
    while Instant::now() < drained && !neighbour_idle(metrics) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }

    let watch = MachineWatch::start();
    let mut copies = store
        .watch(&configmaps, Some("team-a"), &WatchParams::default())
        .unwrap();
    let copied = tokio::spawn(async move {
        let mut seen = Vec::with_capacity(sources);
        while seen.len() < sources {
            match tokio::time::timeout(Duration::from_secs(120), copies.next()).await {
                Ok(Some(event)) if event.kind == WatchEventKind::Added => {
                    let name = event.object["metadata"]["name"].as_str().unwrap_or("");
                    if let Some(i) = name
                        .strip_prefix("n-")
                        .and_then(|n| n.parse::<usize>().ok())
                    {
                        seen.push((i, Instant::now()));
                    }
                }
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        seen
    });
    // The wall-clock time of one instant, to name a create's time in UTC.
    let (anchor, anchor_utc) = (Instant::now(), SystemTime::now());
    let mut sent = Vec::with_capacity(sources);
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / RATE));
    for i in 0..sources {
        tick.tick().await;
        sent.push(Instant::now());
        store
            .create(
                &configmaps,
                Some("default"),
                json!({"metadata": {"name": format!("n-{i}"),
                                    "annotations": {"recon.dev/mirror-to": "team-a"}},
                       "data": {"i": i.to_string()}}),
                None,
            )
            .unwrap();
    }
    let seen = copied.await.unwrap();
    let machine = watch.stop();
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(
        seen.len(),
        sources,
        "{}: the neighbour copied {} of {sources}; host log:\n{}",
        attack.name,
        seen.len(),
        host.log()
    );
    let exit = host.terminate().to_string();
    server.shutdown().await;
    let mut latencies: Vec<(Duration, usize)> =
        seen.iter().map(|(i, at)| (*at - sent[*i], *i)).collect();
    latencies.sort();
    let log = options.log.as_ref().map(|_| {
        let name = dir.file_name().unwrap().to_string_lossy();
        let file = base.join(format!("{name}-{round}.log"));
        let text = host.log();
        std::fs::write(&file, format!("{text}\n")).unwrap();
        let slowest = latencies
            .iter()
            .rev()
            .take(5)
            .map(|(latency, i)| {
                let at = jiff::Timestamp::try_from(anchor_utc + (sent[*i] - anchor))
                    .expect("a time after 1970");
                (at, *latency)
            })
            .collect();
        let stopped = stopped_late(&text, options.reconcile_timeout);
        HostLog {
            file,
            slowest,
            stopped,
        }
    });
    let latencies: Vec<Duration> = latencies.into_iter().map(|(latency, _)| latency).collect();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Figures {
        p50: at(0.50),
        p99: at(0.99),
        max: latencies[latencies.len() - 1],
        synced,
        synced_rss,
        peak_rss: peak.load(Ordering::Relaxed),
        cgroup: cgroup.as_ref().map(|c| (c.peak(), c.oom_kills())),
        exit,
        machine,
        log,
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / f64::from(1 << 20)
}

fn main() {
    let tokio = support::tokio_runtime();
    let options = Options {
        sources: support::number("--sources=").unwrap_or(SOURCES),
        log: support::text("--log="),
        reconcile_timeout: Duration::from_secs(
            support::number("--reconcile-timeout=").unwrap_or(10) as u64,
        ),
    };
    let sources = options.sources;
    let rounds = support::number("--rounds=").unwrap_or(1).max(1);
    println!("isolation benchmark on {}", support::machine());
    println!(
        "neighbour (configmap-mirror) create -> copy latency, {sources} ConfigMaps at {RATE}/s, beside the hostile guest; {BACKGROUND} ConfigMaps of {BACKGROUND_BYTES} B cached first; {rounds} round(s):"
    );
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isolation-bench");
    // `cargo bench --bench isolation -- spin log` runs the quiet scenario
    // and those whose names hold a word given.
    let only: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    let scenarios: Vec<Attack> = attacks()
        .into_iter()
        .filter(|attack| {
            attack.name == "quiet"
                || only.is_empty()
                || only.iter().any(|word| attack.name.contains(word.as_str()))
        })
        .collect();
    // Each scenario's p99 round by round, and whether the machine
    // disturbed its window.
    let mut p99s: Vec<Vec<(Duration, bool)>> = vec![Vec::new(); scenarios.len()];
    tokio.block_on(async {
        for round in 1..=rounds {
            for (i, attack) in scenarios.iter().enumerate() {
                let figures = run(attack, &base, &options, round).await;
                let versus = match p99s[0].last() {
                    Some((quiet, _)) if i > 0 => format!(
                        " ({:.1}x quiet)",
                        figures.p99.as_secs_f64() / quiet.as_secs_f64()
                    ),
                    _ => String::new(),
                };
                print_figures(round, attack, &figures, &versus);
                p99s[i].push((figures.p99, figures.machine.disturbed()));
            }
        }
    });
    if rounds > 1 {
        println!("p99 / the quiet p99 of the same round, over {rounds} rounds:");
        for (attack, attack_p99s) in scenarios.iter().zip(&p99s).skip(1) {
            let ratios: Vec<f64> = attack_p99s
                .iter()
                .zip(&p99s[0])
                .map(|((p99, _), (quiet, _))| p99.as_secs_f64() / quiet.as_secs_f64())
                .collect();
            println!("  {:<28} {}", attack.name, summary(&ratios));
        }
    }
    // The same, with only the windows the machine did not disturb, each
    // set against the median of the undisturbed quiet p99s.
    let undisturbed = |p99s: &[(Duration, bool)]| -> Vec<f64> {
        p99s.iter()
            .filter(|(_, disturbed)| !disturbed)
            .map(|(p99, _)| p99.as_secs_f64())
            .collect()
    };
    let quiet = undisturbed(&p99s[0]);
    if quiet.is_empty() {
        println!(
            "the machine disturbed every quiet round: no undisturbed quiet p99 to compare with"
        );
        return;
    }
    let quiet = median(&quiet);
    println!(
        "p99 / {:.2} ms, the median quiet p99 of the rounds the machine did not disturb, in the attacks' undisturbed rounds:",
        quiet * 1e3
    );
    for (attack, p99s) in scenarios.iter().zip(&p99s).skip(1) {
        let ratios: Vec<f64> = undisturbed(p99s).iter().map(|p99| p99 / quiet).collect();
        println!("  {:<28} {}", attack.name, summary(&ratios));
    }
}

fn median(values: &[f64]) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    (sorted[(sorted.len() - 1) / 2] + sorted[sorted.len() / 2]) / 2.0
}

/// The median and worst of some rounds' ratios, how many are within 2x,
/// and each in turn.
fn summary(ratios: &[f64]) -> String {
    if ratios.is_empty() {
        return "no undisturbed round".to_string();
    }
    let worst = ratios.iter().copied().fold(f64::MIN, f64::max);
    let listed: Vec<String> = ratios.iter().map(|r| format!("{r:.1}x")).collect();
    format!(
        "median {:.1}x, worst {worst:.1}x, within 2x in {} of {} rounds ({})",
        median(ratios),
        ratios.iter().filter(|r| **r <= 2.0).count(),
        ratios.len(),
        listed.join(", "),
    )
}

fn print_figures(round: usize, attack: &Attack, figures: &Figures, versus: &str) {
    let memory = match figures.cgroup {
        Some((peak, kills)) => format!(
            "; in a {} MiB cgroup: peak {} MiB, {kills} OOM kills",
            DEPLOY_LIMIT >> 20,
            peak.map_or("?".to_string(), |p| format!("{:.1}", mib(p)))
        ),
        None if attack.memory => "; no memory cgroup on this machine".to_string(),
        None => String::new(),
    };
    println!(
        "  {round} {:<28} p50 {:>8.2?}  p99 {:>8.2?}{versus}  max {:>8.2?}  synced in {:>7.2?}  host RSS {:>5.1} MiB synced, {:>5.1} MiB peak under attack{memory}  ({})",
        attack.name,
        figures.p50,
        figures.p99,
        figures.max,
        figures.synced,
        mib(figures.synced_rss),
        mib(figures.peak_rss),
        figures.exit,
    );
    let machine = &figures.machine;
    let longest = machine.pauses.iter().max().copied().unwrap_or_default();
    println!(
        "      machine while measured ({:.1?}): {} pause(s) of {PAUSE:?} or more{}, steal {}{}",
        machine.window,
        machine.pauses.len(),
        if machine.pauses.is_empty() {
            String::new()
        } else {
            format!(" (longest {longest:.0?})")
        },
        machine
            .steal
            .map_or("unknown".to_string(), |steal| format!("{steal:.2?}")),
        if machine.disturbed() {
            ": disturbed"
        } else {
            ""
        }
    );
    if let Some(HostLog {
        file,
        slowest,
        stopped: (stopped, late),
    }) = &figures.log
    {
        let listed: Vec<String> = slowest
            .iter()
            .map(|(at, latency)| format!("{latency:.2?} asked at {at:.3}"))
            .collect();
        println!(
            "      slowest: {}; host log: {}",
            listed.join(", "),
            file.display()
        );
        if *stopped > 0 {
            println!(
                "      {stopped} call(s) stopped at the deadline, the latest {late:.2?} after it"
            );
        }
    }
}
