//! The delaying queue (spec DQ-*): a basic [`Queue`] plus `add_after`, with
//! a background task on the queue's clock that moves items into the queue
//! when their time comes.
//!
//! client-go feeds `AddAfter` requests through a 1000-slot channel (DQ-03)
//! and wakes its loop with a 10 s heartbeat (DQ-08). Neither is needed here:
//! `add_after` inserts into the waiting set directly under a short lock, so
//! a caller never blocks and no request can be stranded in a buffer; and the
//! loop sleeps on a precise timer for the earliest ready time and is woken
//! whenever an earlier entry arrives, so no item is ever later than its
//! timer.

use std::collections::BTreeMap;
use std::hash::Hash;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hashbrown::HashMap;
use hashbrown::hash_map::Entry;
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::clock::SharedClock;

use super::config::QueueConfig;
use super::give_back::GiveBack;
use super::metrics::{CounterMetric, retries_metric};
use super::queue::{Get, Queue, Shared};

/// A work queue whose items can be added after a delay (client-go
/// `DelayingInterface`). It composes a basic [`Queue`] (DQ-12) and runs a
/// task on the tokio runtime, so it must be created inside one. Dropping it
/// shuts it down.
pub struct DelayingQueue<T> {
    queue: Queue<T>,
    waiting: Arc<Waiting<T>>,
    clock: SharedClock,
    retries: Option<Arc<dyn CounterMetric>>,
}

struct Waiting<T> {
    state: Mutex<WaitState<T>>,
    /// Wakes the loop: an entry became the earliest, or shutdown.
    wake: Notify,
}

/// Items waiting for their time. The ordered map keyed by
/// `(ready time, sequence)` is the min-heap of DQ-09 (its first key is the
/// earliest entry; moving an entry to an earlier time is a remove plus an
/// insert, the "re-sort in place"), and `ready_at` is the dedup map of
/// DQ-10.
struct WaitState<T> {
    by_time: BTreeMap<(Instant, u64), T>,
    ready_at: HashMap<T, (Instant, u64), foldhash::fast::RandomState>,
    next_seq: u64,
    stopped: bool,
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> DelayingQueue<T> {
    /// An unnamed delaying queue with the real clock and no metrics.
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A named delaying queue with the real clock and no metrics provider.
    pub fn named(name: impl Into<String>) -> Self {
        Self::with_config(QueueConfig::named(name))
    }

    /// A delaying queue over a new basic queue built from `config`.
    pub fn with_config(config: QueueConfig) -> Self {
        let queue = Queue::with_config(config.clone());
        Self::with_queue(queue, config)
    }

    /// Wraps an existing basic queue (DQ-12). `config` supplies the clock
    /// for delays and the name and provider of the retry metric (MET-02).
    pub fn with_queue(queue: Queue<T>, config: QueueConfig) -> Self {
        let waiting = Arc::new(Waiting {
            state: Mutex::new(WaitState {
                by_time: BTreeMap::new(),
                ready_at: HashMap::default(),
                next_seq: 0,
                stopped: false,
            }),
            wake: Notify::new(),
        });
        tokio::spawn(waiting_loop(
            Arc::clone(queue.shared()),
            Arc::clone(&waiting),
            Arc::clone(&config.clock),
        ));
        DelayingQueue {
            queue,
            waiting,
            retries: retries_metric(&config.name, config.metrics_provider.as_ref()),
            clock: config.clock,
        }
    }

    /// Adds `item` once `delay` has passed (DQ-02..DQ-10). Ignored once
    /// shutdown has started (DQ-04); otherwise counts a retry (MET-02).
    /// A zero delay adds at once. If the item is already waiting, the
    /// earlier ready time wins (DQ-10). A delay too large to represent
    /// (such as `Duration::MAX`, "never") schedules nothing, which is the
    /// same as waiting forever.
    pub fn add_after(&self, item: T, delay: Duration) {
        if self.queue.shutting_down() {
            return;
        }
        if let Some(retries) = &self.retries {
            retries.inc();
        }
        if delay.is_zero() {
            self.queue.add(item);
            return;
        }
        let Some(ready_at) = self.clock.now().checked_add(delay) else {
            return;
        };
        let mut state = self.waiting.state.lock();
        if state.stopped {
            return;
        }
        let seq = state.next_seq;
        state.next_seq += 1;
        let key = (ready_at, seq);
        let state = &mut *state;
        match state.ready_at.entry(item) {
            Entry::Occupied(mut entry) => {
                let old = *entry.get();
                if old.0 <= ready_at {
                    return;
                }
                entry.insert(key);
                if let Some(item) = state.by_time.remove(&old) {
                    state.by_time.insert(key, item);
                }
            }
            Entry::Vacant(entry) => {
                let item = entry.key().clone();
                entry.insert(key);
                state.by_time.insert(key, item);
            }
        }
        let earliest = state.by_time.first_key_value().map(|(k, _)| *k) == Some(key);
        if earliest {
            self.waiting.wake.notify_one();
        }
    }

    /// The number of items waiting for their time. Diagnostic only: these
    /// items are not in [`DelayingQueue::len`] (DQ-13).
    pub fn waiting_len(&self) -> usize {
        self.waiting.state.lock().by_time.len()
    }

    /// [`Queue::add`].
    pub fn add(&self, item: T) {
        self.queue.add(item);
    }

    /// [`Queue::len`]: queued items only, not waiting ones (DQ-13).
    pub fn len(&self) -> usize {
        self.queue.len()
    }

    /// [`Queue::is_empty`].
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }

    /// [`Queue::get`].
    pub fn get(&self) -> Get<'_, T> {
        self.queue.get()
    }

    /// [`Queue::done`].
    pub fn done(&self, item: &T) {
        self.queue.done(item);
    }

    /// Shuts down the inner queue and stops the waiting task; waiting items
    /// are dropped (DQ-11, DQ-13). Safe to call more than once.
    pub fn shut_down(&self) {
        self.stop_waiting();
        self.queue.shut_down();
    }

    /// Stops the waiting task, then [`Queue::shut_down_with_drain`].
    pub async fn shut_down_with_drain(&self) {
        self.stop_waiting();
        self.queue.shut_down_with_drain().await;
    }

    /// [`Queue::shutting_down`].
    pub fn shutting_down(&self) -> bool {
        self.queue.shutting_down()
    }

    /// The wrapped basic queue.
    pub fn queue(&self) -> &Queue<T> {
        &self.queue
    }

    fn stop_waiting(&self) {
        let mut state = self.waiting.state.lock();
        if state.stopped {
            return;
        }
        state.stopped = true;
        state.by_time.clear();
        state.ready_at.clear();
        drop(state);
        self.waiting.wake.notify_one();
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for DelayingQueue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for DelayingQueue<T> {
    fn drop(&mut self) {
        self.waiting.state.lock().stopped = true;
        self.waiting.wake.notify_one();
    }
}

/// The waiting loop (DQ-05..DQ-07): move every entry with
/// `ready_at <= now` into the queue through `add` (so dedup applies), then
/// sleep until the earliest remaining entry or until woken.
async fn waiting_loop<T: Hash + Eq + Clone>(
    queue: Arc<Shared<T>>,
    waiting: Arc<Waiting<T>>,
    clock: SharedClock,
) {
    let mut ready = Vec::new();
    loop {
        let woken = waiting.wake.notified();
        tokio::pin!(woken);
        woken.as_mut().enable();
        if queue.shutting_down() {
            return;
        }
        let next = {
            let mut state = waiting.state.lock();
            if state.stopped {
                return;
            }
            let now = clock.now();
            while let Some(entry) = state.by_time.first_entry() {
                if entry.key().0 > now {
                    break;
                }
                let item = entry.remove();
                state.ready_at.remove(&item);
                state.ready_at.give_back();
                ready.push(item);
            }
            state.by_time.first_key_value().map(|(k, _)| k.0)
        };
        for item in ready.drain(..) {
            queue.add(item);
        }
        match next {
            Some(deadline) => {
                tokio::select! {
                    () = clock.sleep_until(deadline) => {}
                    () = &mut woken => {}
                }
            }
            None => woken.await,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::workqueue::metrics::testing::RecordingProvider;
    use crate::workqueue::test_util::{eventually, settle};

    fn fake() -> (FakeClock, DelayingQueue<&'static str>) {
        let clock = FakeClock::new();
        let q = DelayingQueue::with_config(QueueConfig::named("dq").with_clock(clock.shared()));
        (clock, q)
    }

    const S: Duration = Duration::from_secs(1);

    #[tokio::test]
    async fn dq_02_zero_delay_adds_at_once() {
        let (_clock, q) = fake();
        q.add_after("x", Duration::ZERO);
        assert_eq!(q.len(), 1);
        assert_eq!(q.waiting_len(), 0);
    }

    #[tokio::test]
    async fn dq_06_ready_at_equal_now_is_ready_and_dq_13_waiting_items_are_invisible() {
        let (clock, q) = fake();
        q.add_after("x", 10 * S);
        clock.wait_for_waiters(1).await;
        assert_eq!(q.len(), 0, "DQ-13");
        assert!(futures::FutureExt::now_or_never(q.get()).is_none());
        clock.advance(9 * S);
        settle().await;
        assert_eq!(q.len(), 0);
        assert_eq!(q.waiting_len(), 1);
        clock.advance(S); // now == readyAt
        assert_eq!(q.get().await, Some("x"));
        assert_eq!(q.waiting_len(), 0);
    }

    #[tokio::test]
    async fn dq_10_repeated_add_after_keeps_earliest_time() {
        let (clock, q) = fake();
        q.add_after("later-first", 10 * S);
        q.add_after("later-first", 5 * S); // earlier: moves up
        q.add_after("early-first", 2 * S);
        q.add_after("early-first", 8 * S); // later: ignored
        assert_eq!(q.waiting_len(), 2);
        clock.advance(2 * S);
        assert_eq!(q.get().await, Some("early-first"));
        clock.advance(3 * S);
        assert_eq!(q.get().await, Some("later-first"));
        clock.advance(10 * S);
        settle().await;
        assert_eq!(q.len(), 0, "no second copy from the superseded times");
        assert_eq!(q.waiting_len(), 0);
    }

    #[tokio::test]
    async fn dq_07_earlier_entry_wakes_loop_and_dq_09_items_leave_in_ready_order() {
        let (clock, q) = fake();
        q.add_after("c", 30 * S);
        clock.wait_for_waiters(1).await;
        q.add_after("a", 10 * S);
        q.add_after("b", 20 * S);
        q.add_after("z", S);
        clock.advance(S);
        assert_eq!(q.get().await, Some("z"));
        clock.advance(29 * S);
        for want in ["a", "b", "c"] {
            assert_eq!(q.get().await, Some(want));
        }
    }

    #[tokio::test]
    async fn dq_06_ready_items_go_through_add_so_dedup_applies() {
        let (clock, q) = fake();
        q.add("x");
        q.add_after("x", S);
        clock.advance(S);
        eventually("moved", || q.waiting_len() == 0).await;
        settle().await;
        assert_eq!(q.len(), 1);
    }

    #[tokio::test]
    async fn dq_04_met_02_retries_counted_and_add_after_ignored_after_shutdown() {
        let clock = FakeClock::new();
        let provider = Arc::new(RecordingProvider::default());
        let q: DelayingQueue<u32> = DelayingQueue::with_config(
            QueueConfig::named("r")
                .with_clock(clock.shared())
                .with_metrics_provider(provider.clone()),
        );
        q.add_after(1, Duration::ZERO);
        q.add_after(2, S);
        q.add_after(2, S);
        assert_eq!(provider.get("r").retries, 3, "every call, delay 0 included");
        q.shut_down();
        q.add_after(3, S);
        q.add_after(4, Duration::ZERO);
        assert_eq!(provider.get("r").retries, 3);
        assert_eq!(q.waiting_len(), 0, "DQ-13: waiting items dropped");
        assert_eq!(q.get().await, Some(1));
        assert_eq!(q.get().await, None);
        assert!(
            provider
                .created
                .lock()
                .iter()
                .any(|(n, k)| n == "r" && *k == "retries")
        );
    }

    #[tokio::test]
    async fn dq_05_dq_11_loop_exits_on_shutdown_and_shutdown_is_idempotent() {
        let (clock, q) = fake();
        q.add_after("x", 10 * S);
        clock.wait_for_waiters(1).await;
        q.shut_down();
        eventually("loop exits", || clock.waiters() == 0).await;
        q.shut_down();
        assert!(q.shutting_down());
        clock.advance(10 * S);
        assert_eq!(q.get().await, None, "DQ-13: lost at shutdown");
    }

    #[tokio::test]
    async fn dq_05_loop_exits_when_dropped() {
        let (clock, q) = fake();
        q.add_after("x", 10 * S);
        clock.wait_for_waiters(1).await;
        drop(q);
        eventually("loop exits", || clock.waiters() == 0).await;
    }

    #[tokio::test]
    async fn dq_12_wraps_an_existing_queue() {
        let clock = FakeClock::new();
        let inner = Queue::new();
        inner.add("already");
        let q = DelayingQueue::with_queue(inner, QueueConfig::default().with_clock(clock.shared()));
        q.add_after("later", S);
        assert_eq!(q.len(), 1);
        clock.advance(S);
        assert_eq!(q.get().await, Some("already"));
        assert_eq!(q.get().await, Some("later"));
        q.done(&"already");
        assert_eq!(q.queue().len(), 0);
    }

    #[tokio::test]
    async fn dq_10_infinite_delay_never_fires() {
        let (clock, q) = fake();
        q.add_after("never", Duration::MAX);
        assert_eq!(q.waiting_len(), 0);
        q.add_after("never", S);
        clock.advance(S);
        assert_eq!(q.get().await, Some("never"));
    }

    #[tokio::test]
    async fn dq_12_drain_through_delaying_queue() {
        let (_clock, q) = fake();
        q.add("x");
        assert_eq!(q.get().await, Some("x"));
        let drain = q.shut_down_with_drain();
        tokio::pin!(drain);
        assert!(futures::poll!(drain.as_mut()).is_pending());
        q.done(&"x");
        drain.await;
    }
}
