//! Workqueues: the deduplicating queue, the delaying queue, rate limiters and
//! the rate-limited queue, with metrics hooks.
//!
//! - [`Queue`]: the basic queue (spec WQ-*);
//! - [`DelayingQueue`]: the basic queue plus `add_after` (DQ-*);
//! - [`RateLimitingQueue`]: the delaying queue plus a [`RateLimiter`]
//!   (RLQ-*, RL-*);
//! - [`MetricsProvider`]: the hooks a metrics exporter implements (MET-*).
//!
//! Every queue is built from a [`QueueConfig`]: name, clock (HOST-01) and
//! optional metrics provider. This module depends on nothing but the clock
//! and the [token bucket](crate::token_bucket).

mod config;
mod delaying;
mod give_back;
mod metrics;
mod queue;
mod rate_limited;
mod rate_limiter;

pub use config::QueueConfig;
pub use delaying::DelayingQueue;
pub use metrics::{
    CounterMetric, GaugeMetric, HistogramMetric, MetricsProvider, SettableGaugeMetric,
    histogram_buckets,
};
pub use queue::{Get, Queue};
pub use rate_limited::RateLimitingQueue;
pub use rate_limiter::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, ItemFastSlowRateLimiter,
    MaxOfRateLimiter, RateLimiter, WithMaxWaitRateLimiter, default_controller_rate_limiter,
};

#[cfg(test)]
pub(crate) mod test_util {
    //! Helpers for the workqueue unit tests: they never sleep for real.

    /// Yields to the runtime until `cond` holds; panics after a bounded
    /// number of yields.
    pub async fn eventually(what: &str, mut cond: impl FnMut() -> bool) {
        for _ in 0..10_000 {
            if cond() {
                return;
            }
            tokio::task::yield_now().await;
        }
        panic!("condition never held: {what}");
    }

    /// Lets spawned tasks on the current-thread runtime run for a while.
    pub async fn settle() {
        for _ in 0..50 {
            tokio::task::yield_now().await;
        }
    }
}
