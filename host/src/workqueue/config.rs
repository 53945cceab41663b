//! Construction settings shared by every workqueue: the name, the clock and
//! the optional metrics provider (WQ-13, RLQ-05, MET-03, HOST-01).

use std::fmt;
use std::sync::Arc;

use crate::clock::{SharedClock, SystemClock};

use super::metrics::MetricsProvider;

/// How to build a queue. `QueueConfig::default()` is client-go's `New()`: no
/// name, the real clock and no metrics.
#[derive(Clone)]
pub struct QueueConfig {
    /// The queue name, used as the metrics label. Empty → no-op metrics
    /// (MET-05).
    pub name: String,
    /// Every time read or wait of the queue goes through this clock
    /// (HOST-01).
    pub clock: SharedClock,
    /// Where metrics go; `None` → no-op metrics and no metrics task (MET-03).
    pub metrics_provider: Option<Arc<dyn MetricsProvider>>,
}

impl QueueConfig {
    /// A config for a named queue with the real clock and no metrics.
    pub fn named(name: impl Into<String>) -> Self {
        QueueConfig {
            name: name.into(),
            ..Self::default()
        }
    }

    /// Uses `clock` as the time source.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// Reports metrics to `provider` (effective only with a non-empty name).
    pub fn with_metrics_provider(mut self, provider: Arc<dyn MetricsProvider>) -> Self {
        self.metrics_provider = Some(provider);
        self
    }
}

impl Default for QueueConfig {
    fn default() -> Self {
        QueueConfig {
            name: String::new(),
            clock: SystemClock::shared(),
            metrics_provider: None,
        }
    }
}

impl fmt::Debug for QueueConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("QueueConfig")
            .field("name", &self.name)
            .field("clock", &self.clock)
            .field("metrics_provider", &self.metrics_provider.is_some())
            .finish()
    }
}
