//! Guests through the whole host path — informer, handler, workqueue,
//! worker, guest call — with the `hostile` test guest's no-op keys (its
//! `reconcile` returns `done` for any ordinary name). Prints, asserts
//! nothing:
//!
//! - no-op reconciles per second, a fresh instance per reconcile vs one
//!   reused instance per worker (2 workers, `--workers=N` for another
//!   count; `--throughput` prints only these two rows);
//! - event → reconcile-start latency, p50 / p99, with objects created at
//!   1,000 per second;
//! - the host's resident memory with 1, 10 and 100 idle guests (the same
//!   component under distinct names, each with its own queue, handlers and
//!   workers; each count in a fresh process);
//! - the same with 1 and 10 guests over 30,000 cached ConfigMaps, once
//!   every guest has reconciled each and its queue drained, with the host's
//!   real metrics (what an extra guest costs after its first sync), once
//!   the allocator has given the freed memory back as a running host has
//!   it do (`ops::memory`), and before.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use recon_host::controller::{ControllerConfig, Observer, ReconcileObserver, ReconcileRecord};
use recon_host::controller::{InformerKey, Manager};
use recon_host::informer::ListerWatcher;
use recon_host::informer::fake_source::FakeSource;
use recon_host::ops::memory::Trimmer;
use recon_host::ops::{Health, Metrics, SyncProgress};
use recon_host::policy::Namespaces;
use recon_host::runtime::{Guest, Runtime, RuntimeConfig};
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const RECONCILES: usize = 100_000;
const EVENTS: usize = 5_000;
const EVENT_RATE: u64 = 1_000;
const WORKERS: usize = 2;

/// Each guest's workers: `--workers=N`, else [`WORKERS`].
fn workers() -> usize {
    support::number("--workers=").unwrap_or(WORKERS)
}

fn configmap(name: &str) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default"}, "data": {"k": "v"}})
}

async fn load(runtime: &Runtime) -> Guest {
    runtime
        .load(&guests::guest_wasm("hostile"))
        .await
        .expect("the hostile guest loads")
}

fn runtime() -> Runtime {
    Runtime::new(RuntimeConfig {
        cache_dir: Some(guests::cache_dir()),
        ..RuntimeConfig::default()
    })
    .expect("runtime")
}

/// Counts finished reconciles and wakes the one waiter when its count is
/// reached, not at every reconcile: a wakeup per reconcile would cost the
/// workers' threads as much as the reconciles being measured.
#[derive(Default)]
struct Tally {
    finished: AtomicUsize,
    awaited: AtomicUsize,
    reached: Notify,
}

impl Tally {
    fn add(&self) {
        // SeqCst on both sides: of the count going up and the waiter
        // saying what it waits for, at least one sees the other.
        let finished = self.finished.fetch_add(1, Ordering::SeqCst) + 1;
        let awaited = self.awaited.load(Ordering::SeqCst);
        if awaited != 0 && finished >= awaited {
            self.reached.notify_waiters();
        }
    }

    async fn wait_for(&self, count: usize) {
        let reached = self.reached.notified();
        self.awaited.store(count, Ordering::SeqCst);
        if self.finished.load(Ordering::SeqCst) < count {
            tokio::time::timeout(Duration::from_secs(300), reached)
                .await
                .expect("reconciles stalled");
        }
    }
}

/// Reconcile ends (and how long each took) as they happen.
#[derive(Default)]
struct Ends {
    ends: Mutex<Vec<(Arc<str>, Instant, Duration)>>,
    tally: Tally,
}

impl Ends {
    fn observer(self: &Arc<Self>) -> Observer {
        let ends = Arc::clone(self);
        Arc::new(move |record: &ReconcileRecord| {
            assert!(
                record.result.is_ok(),
                "a no-op reconcile failed: {record:?}"
            );
            ends.ends
                .lock()
                .push((Arc::clone(&record.key), Instant::now(), record.duration));
            ends.tally.add();
        })
    }
}

fn start(
    guests: Vec<Guest>,
    source: &Arc<FakeSource>,
    reuse_instances: bool,
    observer: Option<Observer>,
    metrics: Option<Arc<Metrics>>,
) -> (Arc<Manager>, CancellationToken, tokio::task::JoinHandle<()>) {
    let config = ControllerConfig {
        workers: Some(workers()),
        reuse_instances,
        observer,
        queue_metrics: metrics.clone().map(|m| m as _),
        informer_metrics: metrics.map(|m| m as _),
        ..ControllerConfig::default()
    };
    let manager = Arc::new(
        Manager::new(
            guests
                .into_iter()
                .map(|guest| (guest, Namespaces::All))
                .collect(),
            Default::default(),
            &config,
            {
                let source = Arc::clone(source);
                Arc::new(move |_: &InformerKey, _| Arc::clone(&source) as Arc<dyn ListerWatcher>)
            },
            |_| None,
        )
        .expect("wiring"),
    );
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let (manager, stop) = (Arc::clone(&manager), stop.clone());
        async move {
            manager
                .run(stop, recon_host::controller::always_leading())
                .await
        }
    });
    (manager, stop, task)
}

async fn throughput(reuse_instances: bool) {
    let runtime = runtime();
    let guest = load(&runtime).await;
    let source = FakeSource::new();
    for i in 0..RECONCILES {
        source.apply(configmap(&format!("noop-{i}"))).unwrap();
    }
    let ends = Arc::new(Ends::default());
    let (_, stop, task) = start(
        vec![guest],
        &source,
        reuse_instances,
        Some(ends.observer()),
        None,
    );
    ends.tally.wait_for(RECONCILES).await;
    stop.cancel();
    task.await.unwrap();
    let ends = ends.ends.lock();
    let first = ends[0].1;
    let last = ends[RECONCILES - 1].1;
    let mut durations: Vec<Duration> = ends.iter().map(|e| e.2).collect();
    durations.sort();
    let workers = workers();
    println!(
        "no-op reconciles, {}: {:>8.0}/s over {RECONCILES} keys, {workers} workers (median call {:?})",
        if reuse_instances {
            "reused instance "
        } else {
            "fresh instance  "
        },
        (RECONCILES - 1) as f64 / (last - first).as_secs_f64(),
        durations[durations.len() / 2],
    );
}

async fn latency() {
    let runtime = runtime();
    let guest = load(&runtime).await;
    let source = FakeSource::new();
    let ends = Arc::new(Ends::default());
    let (manager, stop, task) = start(vec![guest], &source, false, Some(ends.observer()), None);
    while !manager.has_synced() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut sent = Vec::with_capacity(EVENTS);
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / EVENT_RATE));
    for i in 0..EVENTS {
        tick.tick().await;
        sent.push(Instant::now());
        source.apply(configmap(&format!("event-{i}"))).unwrap();
    }
    ends.tally.wait_for(EVENTS).await;
    stop.cancel();
    task.await.unwrap();
    let mut latencies: Vec<Duration> = ends
        .ends
        .lock()
        .iter()
        .map(|(key, end, took)| {
            let i: usize = key
                .strip_prefix("default/event-")
                .and_then(|n| n.parse().ok())
                .expect("an event key");
            (*end - *took).saturating_duration_since(sent[i])
        })
        .collect();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    println!(
        "event -> reconcile start at {EVENT_RATE} events/s ({EVENTS} events): p50 {:?}, p99 {:?}, max {:?}",
        at(0.50),
        at(0.99),
        latencies[latencies.len() - 1]
    );
}

/// Counts finished reconciles, and passes every event on to the host's
/// metrics, as a running host's observer does.
struct Counted {
    metrics: Arc<Metrics>,
    tally: Tally,
}

impl ReconcileObserver for Counted {
    fn workers_started(&self, guest: &str, workers: usize) {
        self.metrics.workers_started(guest, workers);
    }
    fn reconcile_started(&self, guest: &str) {
        self.metrics.reconcile_started(guest);
    }
    fn reconcile_finished(&self, record: &ReconcileRecord) {
        self.metrics.reconcile_finished(record);
        self.tally.add();
    }
}

/// ConfigMaps cached for the drained-queue figure.
const CACHED: usize = 30_000;

/// Child process: RSS once `count` idle guests run over `objects` cached
/// ConfigMaps, each reconciled by every guest and every queue drained.
async fn idle(count: usize, objects: usize) {
    let runtime = runtime();
    let guest = load(&runtime).await;
    let guests: Vec<Guest> = (0..count)
        .map(|i| guest.renamed(&format!("idle-{i}")).expect("a valid name"))
        .collect();
    drop(guest);
    let source = FakeSource::new();
    for i in 0..objects {
        source
            .apply(configmap(&format!("cached-{i:06}")))
            .expect("a ConfigMap");
    }
    let clock = recon_host::clock::SystemClock::shared();
    let health = Health::new(clock.clone(), Duration::from_secs(60));
    let metrics = Metrics::new(health, Arc::new(SyncProgress::new(clock, None)));
    let counted = Arc::new(Counted {
        metrics: Arc::clone(&metrics),
        tally: Tally::default(),
    });
    let observer = Arc::clone(&counted) as Observer;
    let (manager, stop, task) = start(guests, &source, false, Some(observer), Some(metrics));
    while !manager.has_synced() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    counted.tally.wait_for(count * objects).await;
    // Let the workers finish with their last keys and reach their queues.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let untrimmed = support::status_bytes("VmRSS:");
    // What a running host does within `TRIM_INTERVAL` of the drain.
    Trimmer::default().trim();
    println!("{} {untrimmed}", support::status_bytes("VmRSS:"));
    stop.cancel();
    task.await.unwrap();
}

fn main() {
    let tokio = support::tokio_runtime();
    if let Some(count) = support::number("--idle-guests=") {
        tokio.block_on(idle(count, 0));
        return;
    }
    if let Some(count) = support::number("--drained-guests=") {
        tokio.block_on(idle(count, CACHED));
        return;
    }
    println!("guests benchmark on {}", support::machine());
    if std::env::args().any(|a| a == "--throughput") {
        tokio.block_on(async {
            load(&runtime()).await;
            throughput(false).await;
            throughput(true).await;
        });
        return;
    }
    tokio.block_on(async {
        // Compile once into the cache so no figure includes compilation.
        load(&runtime()).await;
        throughput(false).await;
        throughput(true).await;
        latency().await;
    });
    print_rss(&[1, 10, 100], "idle-guests", "idle guests");
    print_rss(
        &[1, 10],
        "drained-guests",
        &format!("guests over {CACHED} cached ConfigMaps, queues drained"),
    );
}

/// Prints the RSS of a fresh process run with `--MODE=COUNT` for each of
/// `counts`, and what each added guest cost.
fn print_rss(counts: &[usize], mode: &str, what: &str) {
    let mib = |b: usize| b as f64 / (1 << 20) as f64;
    let mut previous: Option<(usize, [usize; 2])> = None;
    for &count in counts {
        let printed = support::rerun_with(&format!("--{mode}={count}"));
        let figures: Vec<usize> = printed
            .split_whitespace()
            .map(|n| n.parse().expect("an RSS figure"))
            .collect();
        let rss = [figures[0], figures[1]];
        let per_guest = |i: usize| {
            previous
                .map(|(n, r)| {
                    format!(
                        ", {:.0} KiB per added guest",
                        (rss[i] as f64 - r[i] as f64) / (count - n) as f64 / 1024.0
                    )
                })
                .unwrap_or_default()
        };
        println!(
            "host RSS with {count:>3} {what}: {:>6.1} MiB{} (before the allocator gave freed memory back: {:.1} MiB{})",
            mib(rss[0]),
            per_guest(0),
            mib(rss[1]),
            per_guest(1)
        );
        previous = Some((count, rss));
    }
}
