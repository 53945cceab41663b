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
