//! Benchmark of the whole informer path on objects of the shared Pod
//! fixture's shape: the initial sync of 100,000 Pods (paged list → DeltaFIFO
//! → indexer → handler) and the steady state of 100,000 watch events
//! (updates and deletes). Inputs are parsed before timing starts: the watch
//! events pile up in the source's history while the reflector is held in a
//! watch backoff on a fake clock, then are replayed at once. The figures are
//! objects (or events) per second through reflector, DeltaFIFO, transform
//! (dropping managedFields), indexer and handler notification. A last figure
//! runs the same sync over HTTPS from the embedded dev API server (kube-client,
//! TLS, one list at resourceVersion 0 answered whole, as a real server's
//! watch cache answers it, its JSON decoded into the cached form as it
//! arrives). Printed, never asserted.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use recon_devserver::{DevServer, DevServerConfig};
use recon_host::clock::FakeClock;
use recon_host::informer::DeltaObject;
use recon_host::informer::LwError;
use recon_host::informer::fake_source::FakeSource;
use recon_host::informer::{EventHandler, InformerConfig, InformerError, SharedInformer};
use recon_host::kube::Gvk;
use recon_host::object::Object;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

#[path = "../tests/guests/mod.rs"]
mod guests;
#[path = "../tests/hosts/mod.rs"]
mod hosts;
mod support;

const COUNT: usize = 100_000;

/// Counts notifications.
#[derive(Default)]
struct Counter(AtomicUsize);

impl EventHandler for Counter {
    fn on_add(&self, _: &Object, _: bool) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn on_update(&self, _: &Object, _: &Object) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn on_delete(&self, _: &DeltaObject) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}

/// An informer running with a handler that counts its notifications.
struct Running {
    counter: Arc<Counter>,
    stop: CancellationToken,
    task: tokio::task::JoinHandle<Result<(), InformerError>>,
}

impl Running {
    fn start(informer: &Arc<SharedInformer>) -> Running {
        let counter = Arc::new(Counter::default());
        informer
            .add_event_handler(counter.clone())
            .expect("handler");
        let stop = CancellationToken::new();
        let task = tokio::spawn({
            let (informer, stop) = (Arc::clone(informer), stop.clone());
            async move { informer.run(stop).await }
        });
        Running {
            counter,
            stop,
            task,
        }
    }

    /// Starts `informer` and waits until its initial sync of `count`
    /// objects has been delivered; the time that took.
    async fn synced(informer: &Arc<SharedInformer>, count: usize) -> (Running, Duration) {
        let started = Instant::now();
        let running = Running::start(informer);
        running.wait_for(count).await;
        (running, started.elapsed())
    }

    /// Waits until `count` notifications have been delivered.
    async fn wait_for(&self, count: usize) {
        while self.counter.0.load(Ordering::Relaxed) < count {
            tokio::task::yield_now().await;
        }
    }

    async fn stop(self) {
        self.stop.cancel();
        self.task.await.expect("informer task").expect("informer");
    }
}

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
async fn main() {
    println!("machine: {}", support::machine());
    let mut template: Value =
        serde_json::from_str(include_str!("../testdata/pod.json")).expect("the fixture parses");
    let source = FakeSource::new();
    for i in 0..COUNT {
        source
            .apply(support::fixture_pod(&mut template, i, 0))
            .expect("valid pod");
    }

    let clock = FakeClock::new();
    let informer = SharedInformer::new(
        source.clone(),
        InformerConfig {
            clock: clock.shared(),
            ..InformerConfig::default()
        },
    );
    let (running, sync) = Running::synced(&informer, COUNT).await;
    println!(
        "informer sync: {COUNT} Pods listed in pages of 500, transformed (managedFields dropped), cached and notified in {:.2} s: {:.0} objects/s",
        sync.as_secs_f64(),
        COUNT as f64 / sync.as_secs_f64()
    );

    // Steady state: hold the reflector in a watch backoff, let the events
    // pile up in the source's history, then time their replay.
    clock.advance(Duration::from_secs(2));
    source.fail_next_watch(LwError::connection_refused("held for the benchmark"));
    source.drop_watches();
    clock.wait_for_waiters(1).await;
    for i in 0..COUNT {
        if i % 10 == 9 {
            let key = format!("perf-{}/svc-{}-{i:06}", i % 100, i % 50);
            source.delete(&key).expect("exists");
        } else {
            source
                .apply(support::fixture_pod(&mut template, i, 1))
                .expect("valid pod");
        }
    }
    let started = Instant::now();
    clock.advance_to_next_deadline();
    running.wait_for(2 * COUNT).await;
    let replay = started.elapsed();
    println!(
        "informer watch: {COUNT} events (90% updates, 10% deletes) transformed, cached and notified in {:.2} s: {:.0} events/s",
        replay.as_secs_f64(),
        COUNT as f64 / replay.as_secs_f64()
    );
    assert_eq!(informer.indexer().len(), COUNT - COUNT / 10);
    running.stop().await;

    sync_over_https().await;
}

/// Pods served by the dev API server for the HTTPS sync; fewer than above
/// because the dev server keeps them as JSON trees (several times the bytes).
const HTTPS_COUNT: usize = 20_000;

async fn sync_over_https() {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    support::create_fixture_pods(&server.store(), HTTPS_COUNT);
    let lister_watcher = hosts::dev_lister_watcher(&server, &Gvk::new("", "v1", "Pod")).await;
    let informer = SharedInformer::new(Arc::new(lister_watcher), InformerConfig::default());
    let (running, sync) = Running::synced(&informer, HTTPS_COUNT).await;
    println!(
        "informer sync over HTTPS from the dev API server: {HTTPS_COUNT} Pods in one list at resourceVersion 0, answered whole as by a watch cache (TLS, JSON decoded pruned into the cache as it arrives) in {:.2} s: {:.0} objects/s",
        sync.as_secs_f64(),
        HTTPS_COUNT as f64 / sync.as_secs_f64()
    );
    running.stop().await;
    server.shutdown().await;
}
