//! The host's Prometheus metrics, under the names controller-runtime and
//! client-go users already chart: workqueues, reconciles, the API client,
//! informers, guests and leader election. [`Metrics`] implements the hooks
//! the core modules expose (workqueue [`MetricsProvider`], [`ClientMetrics`],
//! [`ReflectorMetricsProvider`], [`ReconcileObserver`]) and encodes
//! everything in the Prometheus text format.

use std::sync::Arc;
use std::sync::atomic::AtomicU64;
use std::time::Duration;

use parking_lot::Mutex;
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::health::{Health, ReflectorHealth};
use super::progress::{ProgressSlot, SyncProgress};
use crate::controller::{ReconcileObserver, ReconcileRecord};
use crate::informer::indexer::Indexer;
use crate::informer::metrics::{ReflectorMetrics, ReflectorMetricsProvider};
use crate::kube::ClientMetrics;
use crate::runtime::{Action, ReconcileError};
use crate::workqueue::metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
    histogram_buckets,
};

/// The content type of [`Metrics::encode`]'s output.
pub const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// controller-runtime's buckets of `controller_runtime_reconcile_time_seconds`.
const RECONCILE_TIME_BUCKETS: [f64; 40] = [
    0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.6, 0.7, 0.8, 0.9,
    1.0, 1.25, 1.5, 1.75, 2.0, 2.5, 3.0, 3.5, 4.0, 4.5, 5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 15.0, 20.0,
    25.0, 30.0, 40.0, 50.0, 60.0,
];

/// client-go's buckets of `rest_client_rate_limiter_duration_seconds`.
const RATE_LIMITER_BUCKETS: [f64; 12] = [
    0.005, 0.025, 0.1, 0.25, 0.5, 1.0, 2.0, 4.0, 8.0, 15.0, 30.0, 60.0,
];

/// The results `controller_runtime_reconcile_total` counts.
const RESULTS: [&str; 4] = ["success", "error", "requeue", "requeue_after"];

type OneLabel = [(&'static str, String); 1];
type TwoLabels = [(&'static str, String); 2];
type FloatGauge = Gauge<f64, AtomicU64>;
type HistogramFamily = Family<OneLabel, Histogram, fn() -> Histogram>;

fn label(key: &'static str, value: &str) -> OneLabel {
    [(key, value.to_string())]
}

/// Every metric the host exports, and the hooks that feed them.
pub struct Metrics {
    registry: Registry,
    queue: QueueFamilies,
    reconcile: ReconcileFamilies,
    client: ClientFamilies,
    informers: InformerFamilies,
    guests: GuestFamilies,
    leader: Family<OneLabel, Gauge>,
    caches: Mutex<Vec<(String, Arc<Indexer>)>>,
    health: Arc<Health>,
    progress: Arc<SyncProgress>,
}

impl std::fmt::Debug for Metrics {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Metrics").finish_non_exhaustive()
    }
}

struct QueueFamilies {
    depth: Family<OneLabel, Gauge>,
    adds: Family<OneLabel, Counter>,
    latency: HistogramFamily,
    work_duration: HistogramFamily,
    unfinished_work: Family<OneLabel, FloatGauge>,
    longest_running: Family<OneLabel, FloatGauge>,
    retries: Family<OneLabel, Counter>,
}

struct ReconcileFamilies {
    total: Family<TwoLabels, Counter>,
    errors: Family<OneLabel, Counter>,
    time: HistogramFamily,
    active_workers: Family<OneLabel, Gauge>,
    max_concurrent: Family<OneLabel, Gauge>,
}

struct ClientFamilies {
    requests: Family<TwoLabels, Counter>,
    rate_limiter: HistogramFamily,
}

struct InformerFamilies {
    lists: Family<OneLabel, Counter>,
    relists: Family<OneLabel, Counter>,
    watches: Family<OneLabel, Counter>,
    events: Family<OneLabel, Counter>,
    failures: Family<OneLabel, Counter>,
    objects: Family<OneLabel, Gauge>,
}

struct GuestFamilies {
    traps: Family<OneLabel, Counter>,
    timeouts: Family<OneLabel, Counter>,
    memory_faults: Family<OneLabel, Counter>,
    memory_high_water: Family<OneLabel, Gauge>,
    instance_start: HistogramFamily,
}

fn queue_histogram() -> Histogram {
    Histogram::new(histogram_buckets())
}

fn reconcile_histogram() -> Histogram {
    Histogram::new(RECONCILE_TIME_BUCKETS)
}

fn rate_limiter_histogram() -> Histogram {
    Histogram::new(RATE_LIMITER_BUCKETS)
}

/// 10 µs to about 2.6 s.
fn instance_start_histogram() -> Histogram {
    Histogram::new(exponential_buckets(10e-6, 4.0, 10))
}

/// Registers `metric` under `name` and hands it back.
fn registered<M: prometheus_client::registry::Metric + Clone>(
    registry: &mut Registry,
    name: &str,
    help: &str,
    metric: M,
) -> M {
    registry.register(name, help, metric.clone());
    metric
}

impl Metrics {
    /// A registry with every family, empty; reflectors report their health
    /// to `health` and their list progress to `progress`.
    pub fn new(health: Arc<Health>, progress: Arc<SyncProgress>) -> Arc<Metrics> {
        let mut r = Registry::default();
        let histogram = |f: fn() -> Histogram| HistogramFamily::new_with_constructor(f);
        // Counters are registered without `_total`: the encoder appends it.
        let queue = QueueFamilies {
            depth: registered(
                &mut r,
                "workqueue_depth",
                "Current depth of workqueue",
                Family::default(),
            ),
            adds: registered(
                &mut r,
                "workqueue_adds",
                "Total number of adds handled by workqueue",
                Family::default(),
            ),
            latency: registered(
                &mut r,
                "workqueue_queue_duration_seconds",
                "How long in seconds an item stays in workqueue before being requested",
                histogram(queue_histogram),
            ),
            work_duration: registered(
                &mut r,
                "workqueue_work_duration_seconds",
                "How long in seconds processing an item from workqueue takes",
                histogram(queue_histogram),
            ),
            unfinished_work: registered(
                &mut r,
                "workqueue_unfinished_work_seconds",
                "How many seconds of work has been done that is in progress and hasn't been observed by work_duration",
                Family::default(),
            ),
            longest_running: registered(
                &mut r,
                "workqueue_longest_running_processor_seconds",
                "How many seconds has the longest running processor for workqueue been running",
                Family::default(),
            ),
            retries: registered(
                &mut r,
                "workqueue_retries",
                "Total number of retries handled by workqueue",
                Family::default(),
            ),
        };
        let reconcile = ReconcileFamilies {
            total: registered(
                &mut r,
                "controller_runtime_reconcile",
                "Total number of reconciliations per controller",
                Family::default(),
            ),
            errors: registered(
                &mut r,
                "controller_runtime_reconcile_errors",
                "Total number of reconciliation errors per controller",
                Family::default(),
            ),
            time: registered(
                &mut r,
                "controller_runtime_reconcile_time_seconds",
                "Length of time per reconciliation per controller",
                histogram(reconcile_histogram),
            ),
            active_workers: registered(
                &mut r,
                "controller_runtime_active_workers",
                "Number of currently used workers per controller",
                Family::default(),
            ),
            max_concurrent: registered(
                &mut r,
                "controller_runtime_max_concurrent_reconciles",
                "Maximum number of concurrent reconciles per controller",
                Family::default(),
            ),
        };
        let client = ClientFamilies {
            requests: registered(
                &mut r,
                "rest_client_requests",
                "Number of HTTP requests, partitioned by status code and method",
                Family::default(),
            ),
            rate_limiter: registered(
                &mut r,
                "rest_client_rate_limiter_duration_seconds",
                "Client side rate limiter latency in seconds, by verb",
                histogram(rate_limiter_histogram),
            ),
        };
        let informers = InformerFamilies {
            lists: registered(
                &mut r,
                "informer_lists",
                "Lists started by an informer's reflector",
                Family::default(),
            ),
            relists: registered(
                &mut r,
                "informer_relists",
                "Lists after the first (after an expired or failed watch)",
                Family::default(),
            ),
            watches: registered(
                &mut r,
                "informer_watches",
                "Watches opened by an informer's reflector",
                Family::default(),
            ),
            events: registered(
                &mut r,
                "informer_events",
                "Watch events (not bookmarks) an informer received",
                Family::default(),
            ),
            failures: registered(
                &mut r,
                "informer_list_watch_failures",
                "Lists or watches of an informer that failed",
                Family::default(),
            ),
            objects: registered(
                &mut r,
                "informer_objects",
                "Objects in an informer's cache",
                Family::default(),
            ),
        };
        let guests = GuestFamilies {
            traps: registered(
                &mut r,
                "recon_guest_traps",
                "Reconciles that trapped (a panic, an invalid operation)",
                Family::default(),
            ),
            timeouts: registered(
                &mut r,
                "recon_guest_timeouts",
                "Reconciles stopped at the reconcile deadline",
                Family::default(),
            ),
            memory_faults: registered(
                &mut r,
                "recon_guest_memory_faults",
                "Reconciles that needed more memory than allowed",
                Family::default(),
            ),
            memory_high_water: registered(
                &mut r,
                "recon_guest_memory_high_water_bytes",
                "The largest linear memory an instance of the guest reached",
                Family::default(),
            ),
            instance_start: registered(
                &mut r,
                "recon_guest_instance_start_seconds",
                "Time to instantiate a fresh guest instance",
                histogram(instance_start_histogram),
            ),
        };
        let leader = registered(
            &mut r,
            "leader_election_master_status",
            "1 while this host holds the lease called `name`, else 0",
            Family::default(),
        );
        Arc::new(Metrics {
            registry: r,
            queue,
            reconcile,
            client,
            informers,
            guests,
            leader,
            caches: Mutex::new(Vec::new()),
            health,
            progress,
        })
    }

    /// Reports the size of these caches, by informer name, on every scrape.
    pub fn watch_caches(&self, caches: Vec<(String, Arc<Indexer>)>) {
        *self.caches.lock() = caches;
    }

    /// The gauge of leader election for the lease called `name`.
    pub fn leader_status(&self, name: &str) -> Gauge {
        let gauge = self.leader.get_or_create_owned(&label("name", name));
        gauge.set(0);
        gauge
    }

    /// Every metric, in the text format of [`CONTENT_TYPE`].
    pub fn encode(&self) -> String {
        for (name, indexer) in self.caches.lock().iter() {
            self.informers
                .objects
                .get_or_create(&label("informer", name))
                .set(indexer.len() as i64);
        }
        let mut text = String::new();
        encode(&mut text, &self.registry).expect("writing to a String cannot fail");
        text
    }
}

impl GaugeMetric for Gauge {
    fn inc(&self) {
        Gauge::inc(self);
    }
    fn dec(&self) {
        Gauge::dec(self);
    }
}

impl SettableGaugeMetric for FloatGauge {
    fn set(&self, value: f64) {
        Gauge::set(self, value);
    }
}

impl CounterMetric for Counter {
    fn inc(&self) {
        Counter::inc(self);
    }
}

impl HistogramMetric for Histogram {
    fn observe(&self, seconds: f64) {
        Histogram::observe(self, seconds);
    }
}

impl MetricsProvider for Metrics {
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
        Arc::new(self.queue.depth.get_or_create_owned(&label("name", name)))
    }
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.queue.adds.get_or_create_owned(&label("name", name)))
    }
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(self.queue.latency.get_or_create_owned(&label("name", name)))
    }
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
        Arc::new(
            self.queue
                .work_duration
                .get_or_create_owned(&label("name", name)),
        )
    }
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(
            self.queue
                .unfinished_work
                .get_or_create_owned(&label("name", name)),
        )
    }
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric> {
        Arc::new(
            self.queue
                .longest_running
                .get_or_create_owned(&label("name", name)),
        )
    }
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
        Arc::new(self.queue.retries.get_or_create_owned(&label("name", name)))
    }
}

impl ClientMetrics for Metrics {
    fn request_done(&self, method: &str, code: &str) {
        self.client
            .requests
            .get_or_create(&[("code", code.to_string()), ("method", method.to_string())])
            .inc();
    }

    fn rate_limiter_wait(&self, method: &str, wait: Duration) {
        self.client
            .rate_limiter
            .get_or_create(&label("verb", method))
            .observe(wait.as_secs_f64());
    }
}

impl ReconcileObserver for Metrics {
    fn workers_started(&self, guest: &str, workers: usize) {
        // Every series of the guest exists from the start, at zero.
        let controller = label("controller", guest);
        self.reconcile
            .max_concurrent
            .get_or_create_owned(&controller)
            .set(workers as i64);
        self.reconcile
            .active_workers
            .get_or_create_owned(&controller);
        self.reconcile.errors.get_or_create_owned(&controller);
        for result in RESULTS {
            self.reconcile.total.get_or_create_owned(&[
                ("controller", guest.to_string()),
                ("result", result.to_string()),
            ]);
        }
        let guest = label("guest", guest);
        self.guests.traps.get_or_create_owned(&guest);
        self.guests.timeouts.get_or_create_owned(&guest);
        self.guests.memory_faults.get_or_create_owned(&guest);
    }

    fn reconcile_started(&self, guest: &str) {
        self.reconcile
            .active_workers
            .get_or_create(&label("controller", guest))
            .inc();
    }

    fn reconcile_finished(&self, record: &ReconcileRecord) {
        let controller = label("controller", &record.guest);
        self.reconcile
            .active_workers
            .get_or_create(&controller)
            .dec();
        let result = match &record.result {
            Ok(Action::Done) => "success",
            Ok(Action::Requeue) => "requeue",
            Ok(Action::RequeueAfter(_)) => "requeue_after",
            Err(_) => "error",
        };
        self.reconcile
            .total
            .get_or_create(&[
                ("controller", record.guest.to_string()),
                ("result", result.to_string()),
            ])
            .inc();
        self.reconcile
            .time
            .get_or_create(&controller)
            .observe(record.duration.as_secs_f64());
        let guest = label("guest", &record.guest);
        if let Err(error) = &record.result {
            self.reconcile.errors.get_or_create(&controller).inc();
            let fault = match error {
                ReconcileError::Trap { .. } => Some(&self.guests.traps),
                ReconcileError::Timeout { .. } => Some(&self.guests.timeouts),
                ReconcileError::MemoryLimit { .. } => Some(&self.guests.memory_faults),
                _ => None,
            };
            if let Some(family) = fault {
                family.get_or_create(&guest).inc();
            }
        }
        if record.memory_high_water > 0 {
            let high_water = self.guests.memory_high_water.get_or_create(&guest);
            let bytes = i64::try_from(record.memory_high_water).unwrap_or(i64::MAX);
            if bytes > high_water.get() {
                high_water.set(bytes);
            }
        }
        if let Some(took) = record.instantiation {
            self.guests
                .instance_start
                .get_or_create(&guest)
                .observe(took.as_secs_f64());
        }
    }
}

impl ReflectorMetricsProvider for Metrics {
    fn reflector_metrics(&self, name: &str) -> Arc<dyn ReflectorMetrics> {
        let informer = label("informer", name);
        Arc::new(InformerMetrics {
            lists: self.informers.lists.get_or_create_owned(&informer),
            relists: self.informers.relists.get_or_create_owned(&informer),
            watches: self.informers.watches.get_or_create_owned(&informer),
            events: self.informers.events.get_or_create_owned(&informer),
            failures: self.informers.failures.get_or_create_owned(&informer),
            health: Arc::clone(&self.health),
            reflector: self.health.reflector(name),
            progress: Arc::clone(&self.progress),
            slot: self.progress.informer(name),
        })
    }
}

/// One informer's counters, health and sync progress.
struct InformerMetrics {
    lists: Counter,
    relists: Counter,
    watches: Counter,
    events: Counter,
    failures: Counter,
    health: Arc<Health>,
    reflector: Arc<ReflectorHealth>,
    progress: Arc<SyncProgress>,
    slot: ProgressSlot,
}

impl ReflectorMetrics for InformerMetrics {
    fn list_started(&self, relist: bool) {
        self.lists.inc();
        if relist {
            self.relists.inc();
        }
        self.progress.list_started(self.slot);
    }

    fn list_page(&self, objects: usize) {
        self.progress.page(self.slot, objects);
    }

    fn listed(&self, objects: usize) {
        self.health.worked(&self.reflector);
        self.progress.listed(self.slot, objects);
    }

    fn watch_opened(&self) {
        self.watches.inc();
        self.health.worked(&self.reflector);
    }

    fn event(&self) {
        self.events.inc();
        self.health.worked(&self.reflector);
    }

    fn failed(&self) {
        self.failures.inc();
        self.health.failed(&self.reflector);
    }
}
