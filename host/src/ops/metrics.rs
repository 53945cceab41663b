//! The host's Prometheus metrics, under the names controller-runtime and
//! client-go users already chart: workqueues, reconciles, the API client,
//! informers, guests and leader election. [`Metrics`] implements the hooks
//! the core modules expose (workqueue [`MetricsProvider`], [`ClientMetrics`],
//! [`ReflectorMetricsProvider`], [`ReconcileObserver`]) and encodes
//! everything in the Prometheus text format.

use std::collections::HashMap;
use std::sync::atomic::AtomicU64;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use parking_lot::{Mutex, RwLock};
use prometheus_client::encoding::text::encode;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{Histogram, exponential_buckets};
use prometheus_client::registry::Registry;

use super::health::{FaultRun, GuestState, Health, ReflectorHealth};
use super::progress::{ProgressSlot, SyncProgress};
use crate::controller::{ReconcileObserver, ReconcileRecord};
use crate::informer::Indexer;
use crate::informer::LwError;
use crate::informer::{ReflectorMetrics, ReflectorMetricsProvider};
use crate::kube::ClientMetrics;
use crate::runtime::{Action, ERROR_REASONS, ReconcileError, STALE_REASONS};
use crate::runtime::{Limit, LimitObserver};
use crate::workqueue::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
    histogram_buckets,
};

/// The content type of [`Metrics::encode`]'s output.
pub(crate) const CONTENT_TYPE: &str = "application/openmetrics-text; version=1.0.0; charset=utf-8";

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

/// The results `controller_runtime_reconcile_total` counts, in the order of
/// [`GuestSeries::results`].
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
    /// `recon_api_server_reachable`.
    reachable: Gauge,
    caches: Mutex<Vec<(String, Arc<Indexer>)>>,
    /// Each guest's series, by guest name.
    series: RwLock<HashMap<String, Arc<GuestSeries>>>,
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
    terminal: Family<OneLabel, Counter>,
    reloads: Family<TwoLabels, Counter>,
    reasons: Family<TwoLabels, Counter>,
    stale: Family<TwoLabels, Counter>,
    redriven: Family<OneLabel, Counter>,
    memory_faults: Family<OneLabel, Counter>,
    memory_high_water: Family<OneLabel, Gauge>,
    instance_start: HistogramFamily,
    limits: Family<TwoLabels, Counter>,
    state: Family<TwoLabels, Gauge>,
    cpu: Family<OneLabel, Counter<f64, AtomicU64>>,
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
            reloads: registered(
                &mut r,
                "recon_guest_reloads",
                "New versions of a guest, by result: success (now running) or failure (refused; the old version runs on)",
                Family::default(),
            ),
            redriven: registered(
                &mut r,
                "recon_guest_keys_redriven",
                "Keys queued at once, their backoff forgotten, when the API server answered again: their last reconcile had failed as unavailable",
                Family::default(),
            ),
            reasons: registered(
                &mut r,
                "recon_guest_reconcile_errors",
                "Failed reconciles by reason: conflict, not-found and already-exists (returned without a write of the reconcile meeting them), forbidden, invalid, unavailable, too-large, other, trap, timeout, memory, instantiate, invalid-key",
                Family::default(),
            ),
            stale: registered(
                &mut r,
                "recon_guest_stale_requeues",
                "Reconciles requeued with backoff, not failed, because a write of theirs met a stale view: conflict, not-found (the object was deleted meanwhile) or already-exists (created meanwhile; the guest's cache did not hold it yet)",
                Family::default(),
            ),
            terminal: registered(
                &mut r,
                "recon_guest_terminal_errors",
                "Reconciles that failed with forbidden or invalid, which no retry fixes: the key is not retried until its object changes",
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
            cpu: registered(
                &mut r,
                "recon_guest_cpu_seconds",
                "Time the guest's code ran on the host's guest lanes (--guest-parallelism), instantiation included",
                Family::default(),
            ),
            state: registered(
                &mut r,
                "recon_guest_state",
                "1 for the state a guest is in (starting, running, degraded, rejected), 0 for the others",
                Family::default(),
            ),
            limits: registered(
                &mut r,
                "recon_guest_limit_exceeded",
                "Things a guest did that a host limit refused, by limit (log-rate counts dropped log lines)",
                Family::default(),
            ),
        };
        let leader = registered(
            &mut r,
            "leader_election_master_status",
            "1 while this host holds the lease called `name`, else 0",
            Family::default(),
        );
        let reachable: Gauge = registered(
            &mut r,
            "recon_api_server_reachable",
            "1 while the API server answers, 0 while requests get no answer or 502-504 (the host probes its /readyz then)",
            Gauge::default(),
        );
        reachable.set(1);
        Arc::new(Metrics {
            registry: r,
            queue,
            reconcile,
            client,
            informers,
            guests,
            leader,
            reachable,
            caches: Mutex::new(Vec::new()),
            series: RwLock::new(HashMap::new()),
            health,
            progress,
        })
    }

    /// Reports the size of these caches, by informer name, on every scrape.
    /// The series of a cache no longer among them (its informer stopped)
    /// goes.
    pub fn watch_caches(&self, caches: Vec<(String, Arc<Indexer>)>) {
        let mut watched = self.caches.lock();
        for (name, _) in watched.iter() {
            if !caches.iter().any(|(kept, _)| kept == name) {
                self.informers.objects.remove(&label("informer", name));
            }
        }
        *watched = caches;
    }

    /// Sets `recon_api_server_reachable`.
    pub fn api_server_reachable(&self, reachable: bool) {
        self.reachable.set(i64::from(reachable));
    }

    /// The gauge of leader election for the lease called `name`.
    pub fn leader_status(&self, name: &str) -> Gauge {
        let gauge = self.leader.get_or_create_owned(&label("name", name));
        gauge.set(0);
        gauge
    }

    /// Every metric, in the OpenMetrics text format (served as
    /// `application/openmetrics-text`).
    pub fn encode(&self) -> String {
        for (name, indexer) in self.caches.lock().iter() {
            self.informers
                .objects
                .get_or_create(&label("informer", name))
                .set(indexer.len() as i64);
        }
        for guest in self.health.guests() {
            for state in GuestState::ALL {
                self.guests
                    .state
                    .get_or_create(&[
                        ("guest", guest.name.clone()),
                        ("state", state.as_str().to_string()),
                    ])
                    .set(i64::from(state == guest.state));
            }
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

/// One guest's reconcile and guest series, resolved once so that a
/// reconcile builds no labels and takes no family locks.
struct GuestSeries {
    active_workers: Gauge,
    /// `controller_runtime_reconcile_total`, in the order of [`RESULTS`].
    results: [Counter; 4],
    errors: Counter,
    time: Histogram,
    traps: Counter,
    timeouts: Counter,
    terminal: Counter,
    /// `recon_guest_reloads_total`: success, failure.
    reloads: [Counter; 2],
    /// `recon_guest_reconcile_errors_total`, in the order of [`ERROR_REASONS`].
    reasons: [Counter; ERROR_REASONS.len()],
    /// `recon_guest_stale_requeues_total`, in the order of [`STALE_REASONS`].
    stale: [Counter; STALE_REASONS.len()],
    redriven: Counter,
    memory_faults: Counter,
    memory_high_water: Gauge,
    instance_start: Histogram,
    cpu: Counter<f64, AtomicU64>,
    /// The guest's fault run in the health report, once it is registered
    /// there.
    fault_run: OnceLock<Arc<FaultRun>>,
    /// `recon_guest_limit_exceeded_total`, in the order of [`Limit::ALL`].
    limits: [Counter; Limit::ALL.len()],
}

impl Metrics {
    /// The series of `guest`, created (at zero) on first use.
    fn series(&self, guest: &str) -> Arc<GuestSeries> {
        if let Some(series) = self.series.read().get(guest) {
            return Arc::clone(series);
        }
        let controller = label("controller", guest);
        let by_guest = label("guest", guest);
        let series = Arc::new(GuestSeries {
            active_workers: self
                .reconcile
                .active_workers
                .get_or_create_owned(&controller),
            results: RESULTS.map(|result| {
                self.reconcile.total.get_or_create_owned(&[
                    ("controller", guest.to_string()),
                    ("result", result.to_string()),
                ])
            }),
            errors: self.reconcile.errors.get_or_create_owned(&controller),
            time: self.reconcile.time.get_or_create_owned(&controller),
            traps: self.guests.traps.get_or_create_owned(&by_guest),
            timeouts: self.guests.timeouts.get_or_create_owned(&by_guest),
            terminal: self.guests.terminal.get_or_create_owned(&by_guest),
            stale: STALE_REASONS.map(|reason| {
                self.guests.stale.get_or_create_owned(&[
                    ("guest", guest.to_string()),
                    ("reason", reason.to_string()),
                ])
            }),
            redriven: self.guests.redriven.get_or_create_owned(&by_guest),
            reasons: ERROR_REASONS.map(|reason| {
                self.guests.reasons.get_or_create_owned(&[
                    ("guest", guest.to_string()),
                    ("reason", reason.to_string()),
                ])
            }),
            reloads: ["success", "failure"].map(|result| {
                self.guests.reloads.get_or_create_owned(&[
                    ("guest", guest.to_string()),
                    ("result", result.to_string()),
                ])
            }),
            memory_faults: self.guests.memory_faults.get_or_create_owned(&by_guest),
            memory_high_water: self.guests.memory_high_water.get_or_create_owned(&by_guest),
            instance_start: self.guests.instance_start.get_or_create_owned(&by_guest),
            cpu: self.guests.cpu.get_or_create_owned(&by_guest),
            fault_run: OnceLock::new(),
            limits: Limit::ALL.map(|limit| {
                self.guests.limits.get_or_create_owned(&[
                    ("guest", guest.to_string()),
                    ("limit", limit.as_str().to_string()),
                ])
            }),
        });
        Arc::clone(
            self.series
                .write()
                .entry(guest.to_string())
                .or_insert(series),
        )
    }
}

impl Metrics {
    /// Counts a reload of `guest`: `recon_guest_reloads_total{guest, result}`.
    pub fn guest_reloaded(&self, guest: &str, success: bool) {
        self.series(guest).reloads[usize::from(!success)].inc();
    }
}

impl ReconcileObserver for Metrics {
    fn workers_started(&self, guest: &str, workers: usize) {
        // Every series of the guest exists from the start, at zero.
        self.series(guest);
        self.reconcile
            .max_concurrent
            .get_or_create_owned(&label("controller", guest))
            .set(workers as i64);
    }

    fn reconcile_started(&self, guest: &str) {
        self.series(guest).active_workers.inc();
    }

    fn keys_redriven(&self, guest: &str, keys: usize) {
        self.series(guest).redriven.inc_by(keys as u64);
    }

    fn reconcile_finished(&self, record: &ReconcileRecord) {
        let series = self.series(&record.guest);
        series.active_workers.dec();
        let result = match &record.result {
            Ok(Action::Done) => 0,
            Err(ReconcileError::Stale(_)) => 2,
            Err(_) => 1,
            Ok(Action::Requeue) => 2,
            Ok(Action::RequeueAfter(_)) => 3,
        };
        series.results[result].inc();
        series.time.observe(record.duration.as_secs_f64());
        series.cpu.inc_by(record.cpu.as_secs_f64());
        let fault = match &record.result {
            Err(error) if error.is_fault() => Some(error as &dyn std::fmt::Display),
            _ => None,
        };
        let faults = match series.fault_run.get() {
            Some(faults) => Some(faults),
            None => self
                .health
                .fault_run(&record.guest)
                .map(|faults| series.fault_run.get_or_init(|| faults)),
        };
        if let Some(faults) = faults {
            faults.reconciled(fault);
        }
        if let Err(stale @ ReconcileError::Stale(_)) = &record.result {
            let reason = STALE_REASONS
                .iter()
                .position(|r| *r == stale.reason())
                .expect("a stale outcome");
            series.stale[reason].inc();
        } else if let Err(error) = &record.result {
            series.errors.inc();
            let reason = ERROR_REASONS
                .iter()
                .position(|r| *r == error.reason())
                .expect("a known reason");
            series.reasons[reason].inc();
            let fault = match error {
                ReconcileError::Trap { .. } => Some(&series.traps),
                ReconcileError::Timeout { .. } => Some(&series.timeouts),
                ReconcileError::MemoryLimit { .. } => Some(&series.memory_faults),
                error if error.is_terminal() => Some(&series.terminal),
                _ => None,
            };
            if let Some(counter) = fault {
                counter.inc();
            }
        }
        let bytes = i64::try_from(record.memory_high_water).unwrap_or(i64::MAX);
        if bytes > series.memory_high_water.get() {
            series.memory_high_water.set(bytes);
        }
        if let Some(took) = record.instantiation {
            series.instance_start.observe(took.as_secs_f64());
        }
    }
}

impl LimitObserver for Metrics {
    fn exceeded(&self, guest: &str, limit: Limit) {
        let index = Limit::ALL
            .iter()
            .position(|l| *l == limit)
            .expect("every limit is in Limit::ALL");
        self.series(guest).limits[index].inc();
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

    fn failed(&self, error: &LwError) {
        self.failures.inc();
        self.health.failed(&self.reflector, error);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::runtime::services::GuestError;

    fn record(result: Result<Action, ReconcileError>, high_water: usize) -> ReconcileRecord {
        ReconcileRecord {
            guest: Arc::from("g"),
            key: Arc::from("default/a"),
            attempt: 0,
            result,
            duration: Duration::from_millis(3),
            instantiation: Some(Duration::from_micros(50)),
            memory_high_water: high_water,
            cpu: Duration::from_millis(2),
        }
    }

    fn metrics(clock: &FakeClock) -> Arc<Metrics> {
        Metrics::new(
            Health::new(clock.shared(), Duration::from_secs(60)),
            Arc::new(SyncProgress::new(clock.shared(), None)),
        )
    }

    fn value(text: &str, series: &str) -> Option<String> {
        text.lines()
            .find_map(|line| Some(line.strip_prefix(series)?.strip_prefix(' ')?.to_string()))
    }

    /// Each series in `text` has its value.
    fn assert_values<S: AsRef<str>>(text: &str, expected: &[(S, &str)]) {
        for (series, count) in expected {
            let series = series.as_ref();
            assert_eq!(
                value(text, series).as_deref(),
                Some(*count),
                "{series} in {text}"
            );
        }
    }

    #[test]
    fn a_stopped_informer_s_object_count_goes_with_it() {
        let clock = FakeClock::new();
        let metrics = metrics(&clock);
        let configmaps = Arc::new(Indexer::with_namespace_index());
        let secrets = Arc::new(Indexer::with_namespace_index());
        metrics.watch_caches(vec![
            ("v1/ConfigMap".into(), Arc::clone(&configmaps)),
            ("v1/Secret".into(), secrets),
        ]);
        let text = metrics.encode();
        let objects = |text: &str, informer: &str| {
            value(
                text,
                &format!("informer_objects{{informer=\"{informer}\"}}"),
            )
        };
        assert_eq!(objects(&text, "v1/Secret").as_deref(), Some("0"));
        metrics.watch_caches(vec![("v1/ConfigMap".into(), configmaps)]);
        let text = metrics.encode();
        assert_eq!(objects(&text, "v1/ConfigMap").as_deref(), Some("0"));
        assert_eq!(objects(&text, "v1/Secret"), None, "{text}");
    }

    /// MET-04: a queue's metrics carry client-go's names under the
    /// `workqueue` subsystem, labelled with the queue's name.
    #[tokio::test]
    async fn a_queue_exports_client_go_s_workqueue_metrics() {
        let clock = FakeClock::new();
        let metrics = metrics(&clock);
        let queue = crate::workqueue::RateLimitingQueue::with_config(
            Arc::new(crate::workqueue::default_controller_rate_limiter(
                clock.shared(),
            )),
            crate::workqueue::QueueConfig::named("q")
                .with_clock(clock.shared())
                .with_metrics_provider(Arc::clone(&metrics) as Arc<dyn MetricsProvider>),
        );
        queue.add("a");
        queue.add("b");
        queue.add_rate_limited("c");
        let text = metrics.encode();
        assert_values(
            &text,
            &[
                ("workqueue_depth{name=\"q\"}", "2"),
                ("workqueue_adds_total{name=\"q\"}", "2"),
                ("workqueue_retries_total{name=\"q\"}", "1"),
            ],
        );
        for series in [
            "workqueue_queue_duration_seconds_count{name=\"q\"}",
            "workqueue_work_duration_seconds_count{name=\"q\"}",
            "workqueue_unfinished_work_seconds{name=\"q\"}",
            "workqueue_longest_running_processor_seconds{name=\"q\"}",
        ] {
            let found = value(&text, series).and_then(|v| v.parse::<f64>().ok());
            assert_eq!(found, Some(0.0), "{series} in {text}");
        }
    }

    #[test]
    fn every_reconcile_error_has_a_listed_reason() {
        let errors = [
            ReconcileError::Guest(GuestError::Conflict(String::new())),
            ReconcileError::Guest(GuestError::NotFound),
            ReconcileError::Guest(GuestError::AlreadyExists(String::new())),
            ReconcileError::Guest(GuestError::Forbidden(String::new())),
            ReconcileError::Guest(GuestError::Invalid(String::new())),
            ReconcileError::Guest(GuestError::Unavailable(String::new())),
            ReconcileError::Guest(GuestError::TooLarge(String::new())),
            ReconcileError::Guest(GuestError::Other(String::new())),
            ReconcileError::Trap {
                message: String::new(),
                output: String::new(),
            },
            ReconcileError::Timeout {
                limit: Duration::ZERO,
            },
            ReconcileError::MemoryLimit {
                limit: 0,
                requested: 0,
                output: String::new(),
            },
            ReconcileError::Instantiate(String::new()),
            ReconcileError::InvalidKey(String::new()),
        ];
        let reasons: Vec<&str> = errors.iter().map(ReconcileError::reason).collect();
        assert_eq!(reasons, ERROR_REASONS);
        let stale = [
            GuestError::Conflict(String::new()),
            GuestError::NotFound,
            GuestError::AlreadyExists(String::new()),
        ]
        .map(|error| ReconcileError::Stale(error).reason());
        assert_eq!(stale, STALE_REASONS);
    }

    #[test]
    fn reconciles_land_in_their_results_and_fault_counters() {
        let clock = FakeClock::new();
        let metrics = metrics(&clock);
        metrics.workers_started("g", 3);
        let total = |result: &str| {
            format!("controller_runtime_reconcile_total{{controller=\"g\",result=\"{result}\"}}")
        };
        let text = metrics.encode();
        let mut expected: Vec<_> = RESULTS.iter().map(|result| (total(result), "0")).collect();
        expected.push((
            "controller_runtime_max_concurrent_reconciles{controller=\"g\"}".into(),
            "3",
        ));
        assert_values(&text, &expected);

        let outcomes = [
            Ok(Action::Done),
            Ok(Action::Done),
            Ok(Action::Requeue),
            Ok(Action::RequeueAfter(Duration::from_secs(1))),
            Ok(Action::RequeueAfter(Duration::from_secs(2))),
            Err(ReconcileError::Trap {
                message: "boom".into(),
                output: String::new(),
            }),
            Err(ReconcileError::Timeout {
                limit: Duration::from_secs(1),
            }),
            Err(ReconcileError::Guest(GuestError::Forbidden(
                "may not".into(),
            ))),
            Err(ReconcileError::Stale(GuestError::Conflict(
                "the object has been modified".into(),
            ))),
            Err(ReconcileError::Stale(GuestError::NotFound)),
            Err(ReconcileError::Guest(GuestError::NotFound)),
        ];
        for (i, outcome) in outcomes.into_iter().enumerate() {
            metrics.reconcile_started("g");
            metrics.reconcile_finished(&record(outcome, [4096, 65536, 8192][i % 3]));
        }
        let text = metrics.encode();
        let stale = |reason: &str| {
            format!("recon_guest_stale_requeues_total{{guest=\"g\",reason=\"{reason}\"}}")
        };
        let by_reason = |reason: &str| {
            format!("recon_guest_reconcile_errors_total{{guest=\"g\",reason=\"{reason}\"}}")
        };
        assert_values(
            &text,
            &[
                (total("success"), "2"),
                // Stale-view outcomes of the guest's own writes are requeues.
                (total("requeue"), "3"),
                (total("requeue_after"), "2"),
                (total("error"), "4"),
                (
                    "controller_runtime_reconcile_errors_total{controller=\"g\"}".into(),
                    "4",
                ),
                (stale("conflict"), "1"),
                (stale("not-found"), "1"),
                (stale("already-exists"), "0"),
                ("recon_guest_terminal_errors_total{guest=\"g\"}".into(), "1"),
                (by_reason("trap"), "1"),
                (by_reason("timeout"), "1"),
                (by_reason("forbidden"), "1"),
                (by_reason("conflict"), "0"),
                (by_reason("not-found"), "1"),
            ],
        );
        metrics.keys_redriven("g", 3);
        metrics.api_server_reachable(false);
        let text = metrics.encode();
        assert_values(
            &text,
            &[
                ("recon_guest_keys_redriven_total{guest=\"g\"}", "3"),
                ("recon_api_server_reachable", "0"),
                ("controller_runtime_active_workers{controller=\"g\"}", "0"),
                ("recon_guest_traps_total{guest=\"g\"}", "1"),
                ("recon_guest_timeouts_total{guest=\"g\"}", "1"),
                ("recon_guest_memory_faults_total{guest=\"g\"}", "0"),
                ("recon_guest_memory_high_water_bytes{guest=\"g\"}", "65536"),
                (
                    "recon_guest_instance_start_seconds_count{guest=\"g\"}",
                    "11",
                ),
                (
                    "controller_runtime_reconcile_time_seconds_count{controller=\"g\"}",
                    "11",
                ),
            ],
        );
        let cpu: f64 = value(&text, "recon_guest_cpu_seconds_total{guest=\"g\"}")
            .unwrap()
            .parse()
            .unwrap();
        assert!((cpu - 0.022).abs() < 1e-9, "{cpu}");
    }

    #[test]
    fn every_limit_of_a_guest_is_counted_apart() {
        let clock = FakeClock::new();
        let metrics = metrics(&clock);
        metrics.workers_started("g", 1);
        for _ in 0..3 {
            metrics.exceeded("g", Limit::LogRate);
        }
        metrics.exceeded("g", Limit::ReadSize);
        metrics.exceeded("h", Limit::Key);
        let text = metrics.encode();
        let count = |guest: &str, limit: Limit| {
            format!(
                "recon_guest_limit_exceeded_total{{guest=\"{guest}\",limit=\"{}\"}}",
                limit.as_str()
            )
        };
        assert_values(
            &text,
            &[
                (count("g", Limit::LogRate), "3"),
                (count("g", Limit::ReadSize), "1"),
                (count("g", Limit::QueueDepth), "0"),
                (count("h", Limit::Key), "1"),
            ],
        );
    }
}
