//! Metrics hooks of the workqueues (spec MET-*): the provider trait a metrics
//! exporter implements, the small sink traits it hands out, and the per-queue
//! bookkeeping that mirrors client-go's `defaultQueueMetrics`.

use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashbrown::HashMap;

use super::give_back::GiveBack;
use crate::clock::SharedClock;

/// How often the unfinished-work gauges are refreshed (WQ-13, WQ-14).
pub const UNFINISHED_WORK_UPDATE_PERIOD: Duration = Duration::from_millis(500);

/// Histogram bucket upper bounds in seconds: exponential from 10 ns, factor
/// 10, 10 buckets (MET-04).
pub fn histogram_buckets() -> [f64; 10] {
    let mut buckets = [0.0; 10];
    let mut bound = 10e-9;
    for b in &mut buckets {
        *b = bound;
        bound *= 10.0;
    }
    buckets
}

/// A gauge that moves by one.
pub trait GaugeMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
    /// Subtracts one.
    fn dec(&self);
}

/// A gauge that is set to a value.
pub trait SettableGaugeMetric: Send + Sync {
    /// Sets the value.
    fn set(&self, value: f64);
}

/// A monotonically increasing counter.
pub trait CounterMetric: Send + Sync {
    /// Adds one.
    fn inc(&self);
}

/// A histogram of durations in seconds.
pub trait HistogramMetric: Send + Sync {
    /// Records one observation, in seconds.
    fn observe(&self, seconds: f64);
}

/// Creates the metrics of a named queue; mirrors client-go's
/// `MetricsProvider` (MET-03). Each method is called once per queue with the
/// queue's name.
pub trait MetricsProvider: Send + Sync {
    /// `depth` gauge.
    fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric>;
    /// `adds_total` counter.
    fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
    /// `queue_duration_seconds` histogram.
    fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `work_duration_seconds` histogram.
    fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric>;
    /// `unfinished_work_seconds` gauge.
    fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric>;
    /// `longest_running_processor_seconds` gauge.
    fn new_longest_running_processor_seconds_metric(
        &self,
        name: &str,
    ) -> Arc<dyn SettableGaugeMetric>;
    /// `retries_total` counter (delaying queue, MET-02).
    fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric>;
}

type FastMap<K, V> = HashMap<K, V, foldhash::fast::RandomState>;

/// The bookkeeping of client-go's `defaultQueueMetrics`. It lives inside the
/// queue state and is only touched under the queue lock. A queue with no-op
/// metrics holds none of this (`Option::None`), so the hot path neither reads
/// the clock nor touches these maps.
pub(crate) struct QueueMetrics<T> {
    clock: SharedClock,
    depth: Arc<dyn GaugeMetric>,
    adds: Arc<dyn CounterMetric>,
    latency: Arc<dyn HistogramMetric>,
    work_duration: Arc<dyn HistogramMetric>,
    unfinished_work_seconds: Arc<dyn SettableGaugeMetric>,
    longest_running_processor: Arc<dyn SettableGaugeMetric>,
    add_times: FastMap<T, Instant>,
    processing_start_times: FastMap<T, Instant>,
}

impl<T: Hash + Eq + Clone> QueueMetrics<T> {
    /// Real metrics for `name`, or `None` (no-op) when the name is empty or
    /// there is no provider (MET-05).
    pub(crate) fn new(
        name: &str,
        clock: &SharedClock,
        provider: Option<&Arc<dyn MetricsProvider>>,
    ) -> Option<Box<Self>> {
        let provider = provider.filter(|_| !name.is_empty())?;
        Some(Box::new(QueueMetrics {
            clock: Arc::clone(clock),
            depth: provider.new_depth_metric(name),
            adds: provider.new_adds_metric(name),
            latency: provider.new_latency_metric(name),
            work_duration: provider.new_work_duration_metric(name),
            unfinished_work_seconds: provider.new_unfinished_work_seconds_metric(name),
            longest_running_processor: provider.new_longest_running_processor_seconds_metric(name),
            add_times: FastMap::default(),
            processing_start_times: FastMap::default(),
        }))
    }

    /// An effective add (MET-01, MET-05): latency runs from the first add
    /// that made the item dirty.
    pub(crate) fn add(&mut self, item: &T) {
        self.adds.inc();
        self.depth.inc();
        if !self.add_times.contains_key(item) {
            let now = self.clock.now();
            self.add_times.insert(item.clone(), now);
        }
    }

    /// An item handed out by `get` (MET-01).
    pub(crate) fn get(&mut self, item: &T) {
        self.depth.dec();
        let now = self.clock.now();
        self.processing_start_times.insert(item.clone(), now);
        if let Some(start) = self.add_times.remove(item) {
            self.latency.observe(seconds_since(now, start));
            self.add_times.give_back();
        }
    }

    /// A `done` call (MET-01).
    pub(crate) fn done(&mut self, item: &T) {
        if let Some(start) = self.processing_start_times.remove(item) {
            let now = self.clock.now();
            self.work_duration.observe(seconds_since(now, start));
            self.processing_start_times.give_back();
        }
    }

    /// The periodic unfinished-work refresh (MET-01, WQ-14).
    pub(crate) fn update_unfinished_work(&mut self) {
        let now = self.clock.now();
        let mut total = 0.0;
        let mut oldest = 0.0;
        for start in self.processing_start_times.values() {
            let age = seconds_since(now, *start);
            total += age;
            if age > oldest {
                oldest = age;
            }
        }
        self.unfinished_work_seconds.set(total);
        self.longest_running_processor.set(oldest);
    }
}

fn seconds_since(now: Instant, start: Instant) -> f64 {
    now.saturating_duration_since(start).as_secs_f64()
}

/// The retry counter of a delaying queue, or `None` for no-op metrics
/// (MET-02, MET-05).
pub(crate) fn retries_metric(
    name: &str,
    provider: Option<&Arc<dyn MetricsProvider>>,
) -> Option<Arc<dyn CounterMetric>> {
    let provider = provider.filter(|_| !name.is_empty())?;
    Some(provider.new_retries_metric(name))
}

#[cfg(test)]
pub(crate) mod testing {
    //! An in-memory provider recording every metric, for assertions.

    use super::*;
    use parking_lot::Mutex;

    /// The recorded values of one queue's metrics.
    #[derive(Default, Debug, Clone, PartialEq)]
    pub struct Recorded {
        pub depth: i64,
        pub adds: u64,
        pub latency: Vec<f64>,
        pub work_duration: Vec<f64>,
        pub unfinished_work_seconds: f64,
        pub longest_running_processor: f64,
        pub unfinished_updates: u64,
        pub retries: u64,
    }

    /// Records metrics per queue name.
    #[derive(Default)]
    pub struct RecordingProvider {
        pub queues: Arc<Mutex<std::collections::HashMap<String, Recorded>>>,
        pub created: Mutex<Vec<(String, &'static str)>>,
    }

    impl RecordingProvider {
        pub fn get(&self, name: &str) -> Recorded {
            self.queues.lock().get(name).cloned().unwrap_or_default()
        }

        fn sink(&self, name: &str, kind: &'static str) -> Arc<Sink> {
            self.created.lock().push((name.to_owned(), kind));
            Arc::new(Sink {
                name: name.to_owned(),
                kind,
                queues: Arc::clone(&self.queues),
            })
        }
    }

    struct Sink {
        name: String,
        kind: &'static str,
        queues: Arc<Mutex<std::collections::HashMap<String, Recorded>>>,
    }

    impl Sink {
        fn with(&self, f: impl FnOnce(&mut Recorded)) {
            f(self.queues.lock().entry(self.name.clone()).or_default());
        }
    }

    impl GaugeMetric for Sink {
        fn inc(&self) {
            self.with(|r| r.depth += 1);
        }
        fn dec(&self) {
            self.with(|r| r.depth -= 1);
        }
    }

    impl CounterMetric for Sink {
        fn inc(&self) {
            let kind = self.kind;
            self.with(|r| match kind {
                "adds" => r.adds += 1,
                "retries" => r.retries += 1,
                other => panic!("counter {other}"),
            });
        }
    }

    impl HistogramMetric for Sink {
        fn observe(&self, seconds: f64) {
            let kind = self.kind;
            self.with(|r| match kind {
                "latency" => r.latency.push(seconds),
                "work_duration" => r.work_duration.push(seconds),
                other => panic!("histogram {other}"),
            });
        }
    }

    impl SettableGaugeMetric for Sink {
        fn set(&self, value: f64) {
            let kind = self.kind;
            self.with(|r| match kind {
                "unfinished" => {
                    r.unfinished_work_seconds = value;
                    r.unfinished_updates += 1;
                }
                "longest" => r.longest_running_processor = value,
                other => panic!("gauge {other}"),
            });
        }
    }

    impl MetricsProvider for RecordingProvider {
        fn new_depth_metric(&self, name: &str) -> Arc<dyn GaugeMetric> {
            self.sink(name, "depth")
        }
        fn new_adds_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
            self.sink(name, "adds")
        }
        fn new_latency_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
            self.sink(name, "latency")
        }
        fn new_work_duration_metric(&self, name: &str) -> Arc<dyn HistogramMetric> {
            self.sink(name, "work_duration")
        }
        fn new_unfinished_work_seconds_metric(&self, name: &str) -> Arc<dyn SettableGaugeMetric> {
            self.sink(name, "unfinished")
        }
        fn new_longest_running_processor_seconds_metric(
            &self,
            name: &str,
        ) -> Arc<dyn SettableGaugeMetric> {
            self.sink(name, "longest")
        }
        fn new_retries_metric(&self, name: &str) -> Arc<dyn CounterMetric> {
            self.sink(name, "retries")
        }
    }

    #[test]
    fn met_04_histogram_buckets_start_at_10ns_factor_10() {
        let b = histogram_buckets();
        assert_eq!(b.len(), 10);
        assert!((b[0] - 1e-8).abs() < 1e-20);
        assert!((b[9] - 10.0).abs() < 1e-9);
    }
}
