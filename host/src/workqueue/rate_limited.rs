//! The rate-limited queue (spec RLQ-*): a [`DelayingQueue`] plus a
//! [`RateLimiter`] deciding how long each re-add waits.

use std::hash::Hash;
use std::sync::Arc;
use std::time::Duration;

use super::config::QueueConfig;
use super::delaying::DelayingQueue;
use super::queue::{Get, Queue};
use super::rate_limiter::RateLimiter;

/// A delaying queue whose re-adds are paced by a rate limiter (client-go
/// `RateLimitingInterface`, RLQ-01). Created inside a tokio runtime.
///
/// The usual worker loop: `get`; on success `forget` then `done`; on a
/// retryable failure `add_rate_limited` then `done`; when giving up
/// `forget` then `done` (RLQ-03, RLQ-06).
pub struct RateLimitingQueue<T> {
    delaying: DelayingQueue<T>,
    limiter: Arc<dyn RateLimiter<T>>,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> RateLimitingQueue<T> {
    /// An unnamed queue with the real clock (RLQ-05
    /// `NewRateLimitingQueue`).
    pub fn new(limiter: Arc<dyn RateLimiter<T>>) -> Self {
        Self::with_config(limiter, QueueConfig::default())
    }

    /// A named queue with the real clock (RLQ-05
    /// `NewNamedRateLimitingQueue`).
    pub fn named(limiter: Arc<dyn RateLimiter<T>>, name: impl Into<String>) -> Self {
        Self::with_config(limiter, QueueConfig::named(name))
    }

    /// A queue over a new delaying queue built from `config`.
    pub fn with_config(limiter: Arc<dyn RateLimiter<T>>, config: QueueConfig) -> Self {
        Self::with_delaying_queue(DelayingQueue::with_config(config), limiter)
    }

    /// Wraps an existing delaying queue.
    pub fn with_delaying_queue(
        delaying: DelayingQueue<T>,
        limiter: Arc<dyn RateLimiter<T>>,
    ) -> Self {
        RateLimitingQueue { delaying, limiter }
    }

    /// Adds `item` after the limiter's delay for it (RLQ-02).
    pub fn add_rate_limited(&self, item: T) {
        let delay = self.limiter.when(&item);
        self.delaying.add_after(item, delay);
    }

    /// Clears the limiter's history for `item` (RLQ-03). The worker must
    /// still call [`RateLimitingQueue::done`].
    pub fn forget(&self, item: &T) {
        self.limiter.forget(item);
    }

    /// The limiter's failure count for `item` (RLQ-04).
    pub fn num_requeues(&self, item: &T) -> u32 {
        self.limiter.num_requeues(item)
    }

    /// [`DelayingQueue::add_after`].
    pub fn add_after(&self, item: T, delay: Duration) {
        self.delaying.add_after(item, delay);
    }

    /// [`Queue::add`].
    pub fn add(&self, item: T) {
        self.delaying.add(item);
    }

    /// [`Queue::len`].
    pub fn len(&self) -> usize {
        self.delaying.len()
    }

    /// [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.delaying.is_empty()
    }

    /// [`Queue::get`].
    pub fn get(&self) -> Get<'_, T> {
        self.delaying.get()
    }

    /// [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.delaying.done(item);
    }

    /// [`DelayingQueue::shut_down`].
    pub fn shut_down(&self) {
        self.delaying.shut_down();
    }

    /// [`DelayingQueue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.delaying.shut_down_with_drain().await;
    }

    /// [`Queue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.delaying.shutting_down()
    }

    /// The wrapped delaying queue.
    pub fn delaying_queue(&self) -> &DelayingQueue<T> {
        &self.delaying
    }

    /// The wrapped basic queue.
    pub fn queue(&self) -> &Queue<T> {
        self.delaying.queue()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::workqueue::rate_limiter::{
        ItemExponentialFailureRateLimiter, default_controller_rate_limiter,
    };
    use crate::workqueue::test_util::settle;

    const MS: Duration = Duration::from_millis(1);

    #[tokio::test]
    async fn rlq_02_add_rate_limited_waits_limiter_delay() {
        let clock = FakeClock::new();
        let limiter = Arc::new(ItemExponentialFailureRateLimiter::new(
            10 * MS,
            Duration::from_secs(1),
        ));
        let q = RateLimitingQueue::with_config(
            limiter,
            QueueConfig::named("rl").with_clock(clock.shared()),
        );
        q.add_rate_limited("k");
        assert_eq!(q.len(), 0);
        assert_eq!(q.delaying_queue().waiting_len(), 1);
        clock.advance(9 * MS);
        settle().await;
        assert_eq!(q.len(), 0);
        clock.advance(MS);
        assert_eq!(q.get().await, Some("k"));
        // Second failure waits twice as long (RLQ-04 count grows).
        q.add_rate_limited("k");
        assert_eq!(q.num_requeues(&"k"), 2);
        q.done(&"k");
        clock.advance(19 * MS);
        settle().await;
        assert_eq!(q.len(), 0);
        clock.advance(MS);
        assert_eq!(q.get().await, Some("k"));
        // RLQ-03 / RLQ-06: forget clears the history only; done still needed.
        q.forget(&"k");
        assert_eq!(q.num_requeues(&"k"), 0);
        q.add("k");
        assert_eq!(q.len(), 0, "still processing until done");
        q.done(&"k");
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn rlq_05_constructors_and_rlq_01_interface() {
        let clock = FakeClock::new();
        let limiter: Arc<dyn RateLimiter<String>> =
            Arc::new(default_controller_rate_limiter(clock.shared()));
        let _unnamed: RateLimitingQueue<String> = RateLimitingQueue::new(Arc::clone(&limiter));
        let _named: RateLimitingQueue<String> =
            RateLimitingQueue::named(Arc::clone(&limiter), "ctl");
        let q = RateLimitingQueue::with_delaying_queue(
            DelayingQueue::with_config(QueueConfig::default().with_clock(clock.shared())),
            limiter,
        );
        q.add_rate_limited("a".to_string());
        clock.advance(5 * MS);
        assert_eq!(q.get().await.as_deref(), Some("a"));
        q.add_after("b".to_string(), Duration::ZERO);
        assert_eq!(q.len(), 1);
        assert!(!q.is_empty());
        assert_eq!(q.queue().len(), 1);
        q.shut_down();
        assert!(q.shutting_down());
        q.add_rate_limited("c".to_string());
        assert_eq!(q.get().await.as_deref(), Some("b"));
        assert_eq!(q.get().await, None);
        q.done(&"a".to_string());
        q.done(&"b".to_string());
        q.shut_down_with_drain().await;
    }
}
