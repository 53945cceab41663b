//! The basic deduplicating work queue (spec WQ-*): FIFO order, no duplicates,
//! an item is never handed to two workers, re-adds while processing are
//! queued again on `done`, shutdown and drain.
//!
//! # State
//!
//! WQ-03 describes the state as an ordered `queue` plus two hash sets,
//! `dirty` and `processing`. Here the two sets are merged into one hash map
//! `item → flags` (bit `DIRTY`, bit `PROCESSING`): an item is in `dirty` iff
//! its entry has the `DIRTY` bit and in `processing` iff it has the
//! `PROCESSING` bit; an item in neither set has no entry. Every set operation
//! of client-go maps one-to-one onto a flag change, so the behaviour is the
//! same, while each call does a single hash lookup. The invariant of WQ-03
//! reads: every queued item has flags exactly `DIRTY`.
//!
//! # Waiting
//!
//! All state, including the list of parked `get` calls, sits under one
//! `parking_lot` mutex. An effective add (or a re-queue on `done`) wakes
//! exactly one parked `get`, and only if one is parked; shutdown wakes all
//! of them (WQ-04, WQ-07, WQ-11).

use std::collections::VecDeque;
use std::future::Future;
use std::hash::Hash;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};

use hashbrown::HashMap;
use hashbrown::hash_map::{Entry, EntryRef};
use parking_lot::Mutex;
use tokio::sync::Notify;

use crate::clock::SharedClock;

use super::config::QueueConfig;
use super::give_back::GiveBack;
use super::metrics::{QueueMetrics, UNFINISHED_WORK_UPDATE_PERIOD};

const DIRTY: u8 = 1;
const PROCESSING: u8 = 2;

/// The basic work queue (client-go `workqueue.Typed`). Share it through an
/// `Arc`; every method takes `&self`. Items are normally `"ns/name"` keys
/// (`Arc<str>` or `String`, WQ-16, HOST-05).
///
/// With real metrics the queue runs a small task on the tokio runtime, so it
/// must then be created inside one (WQ-14). Dropping the queue shuts it down.
pub struct Queue<T> {
    shared: Arc<Shared<T>>,
}

pub(crate) struct Shared<T> {
    state: Mutex<State<T>>,
    /// Signalled when `processing` becomes empty during a drain, or when the
    /// drain is cancelled by `shut_down` (WQ-12).
    drained: Notify,
    /// Signalled at shutdown; stops the metrics task (WQ-14).
    stopped: Notify,
}

struct State<T> {
    queue: VecDeque<T>,
    items: HashMap<T, u8, foldhash::fast::RandomState>,
    processing: usize,
    shutting_down: bool,
    drain: bool,
    waiters: Waiters,
    metrics: Option<Box<QueueMetrics<T>>>,
}

/// Parked `get` calls in arrival order. Ids grow monotonically and are
/// pushed at the back and popped at the front, so the list stays sorted by
/// id and "this waiter has been woken" is simply `id < woken_below`.
struct Waiters {
    list: VecDeque<(u64, Waker)>,
    next_id: u64,
    woken_below: u64,
}

impl Waiters {
    fn register(&mut self, waker: &Waker) -> u64 {
        let id = self.next_id;
        self.next_id += 1;
        self.list.push_back((id, waker.clone()));
        id
    }

    fn is_woken(&self, id: u64) -> bool {
        id < self.woken_below
    }

    fn position(&self, id: u64) -> Option<usize> {
        self.list.binary_search_by_key(&id, |(i, _)| *i).ok()
    }

    fn update(&mut self, id: u64, waker: &Waker) {
        if let Some(pos) = self.position(id) {
            let slot = &mut self.list[pos].1;
            if !slot.will_wake(waker) {
                slot.clone_from(waker);
            }
        }
    }

    fn remove(&mut self, id: u64) {
        if let Some(pos) = self.position(id) {
            self.list.remove(pos);
        }
    }

    fn wake_one(&mut self) -> Option<Waker> {
        let (id, waker) = self.list.pop_front()?;
        self.woken_below = id + 1;
        Some(waker)
    }

    fn wake_all(&mut self) -> Vec<Waker> {
        self.woken_below = self.next_id;
        self.list.drain(..).map(|(_, w)| w).collect()
    }
}

impl<T: Hash + Eq + Clone> State<T> {
    /// WQ-04. Returns the waiter to wake, if the item was queued.
    fn add(&mut self, item: T) -> Option<Waker> {
        if self.shutting_down {
            return None;
        }
        match self.items.entry(item) {
            Entry::Occupied(mut entry) => {
                let flags = entry.get_mut();
                if *flags & DIRTY != 0 {
                    return None;
                }
                // In processing: mark dirty only; `done` will queue it.
                *flags |= DIRTY;
                if let Some(metrics) = &mut self.metrics {
                    metrics.add(entry.key());
                }
                None
            }
            Entry::Vacant(entry) => {
                let entry = entry.insert_entry(DIRTY);
                let item = entry.key().clone();
                if let Some(metrics) = &mut self.metrics {
                    metrics.add(&item);
                }
                self.queue.push_back(item);
                self.waiters.wake_one()
            }
        }
    }

    /// WQ-05 step 3: take the head and mark it processing.
    fn take_head(&mut self) -> Option<T> {
        let item = self.queue.pop_front()?;
        self.queue.give_back();
        if let Some(flags) = self.items.get_mut(&item) {
            *flags = PROCESSING;
        }
        self.processing += 1;
        if let Some(metrics) = &mut self.metrics {
            metrics.get(&item);
        }
        Some(item)
    }

    /// WQ-07. Returns the waiter to wake and whether a drain may finish.
    fn done(&mut self, item: &T) -> (Option<Waker>, bool) {
        if let Some(metrics) = &mut self.metrics {
            metrics.done(item);
        }
        let EntryRef::Occupied(mut entry) = self.items.entry_ref(item) else {
            return (None, false);
        };
        let flags = *entry.get();
        if flags & PROCESSING == 0 {
            // Not handed out: client-go would push a second copy if the item
            // is dirty, breaking WQ-03's invariant and WQ-08. Ignore it.
            return (None, false);
        }
        self.processing -= 1;
        if flags & DIRTY != 0 {
            *entry.get_mut() = DIRTY;
            let item = entry.key().clone();
            self.queue.push_back(item);
            (self.waiters.wake_one(), false)
        } else {
            entry.remove();
            self.items.give_back();
            (None, self.processing == 0 && self.drain)
        }
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Queue<T> {
    /// An unnamed queue with the real clock and no-op metrics (WQ-13 `New`).
    pub fn new() -> Self {
        Self::with_config(QueueConfig::default())
    }

    /// A named queue with the real clock and no metrics provider
    /// (WQ-13 `NewNamed`; pass a provider through [`QueueConfig`]).
    pub fn named(name: impl Into<String>) -> Self {
        Self::with_config(QueueConfig::named(name))
    }

    /// A queue built from `config`. With real metrics (a name and a
    /// provider) this spawns the unfinished-work task and must run inside a
    /// tokio runtime (WQ-14, MET-03).
    pub fn with_config(config: QueueConfig) -> Self {
        let metrics = QueueMetrics::new(
            &config.name,
            &config.clock,
            config.metrics_provider.as_ref(),
        );
        let has_metrics = metrics.is_some();
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queue: VecDeque::new(),
                items: HashMap::default(),
                processing: 0,
                shutting_down: false,
                drain: false,
                waiters: Waiters {
                    list: VecDeque::new(),
                    next_id: 0,
                    woken_below: 0,
                },
                metrics,
            }),
            drained: Notify::new(),
            stopped: Notify::new(),
        });
        if has_metrics {
            tokio::spawn(unfinished_work_loop(Arc::clone(&shared), config.clock));
        }
        Queue { shared }
    }

    pub(crate) fn shared(&self) -> &Arc<Shared<T>> {
        &self.shared
    }

    /// Adds `item` (WQ-04): ignored when shutting down or already dirty;
    /// queued at the tail unless it is being processed.
    pub fn add(&self, item: T) {
        self.shared.add(item);
    }

    /// The number of queued items, leaving out items in processing (WQ-10).
    /// Informational only.
    pub fn len(&self) -> usize {
        self.shared.state.lock().queue.len()
    }

    /// Whether no item is queued (see [`Queue::len`]).
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Waits for the next item (WQ-05, WQ-06). `None` means the queue is
    /// shut down and empty. The caller must call [`Queue::done`] when
    /// finished with the item.
    pub fn get(&self) -> Get<'_, T> {
        Get {
            shared: &self.shared,
            id: None,
        }
    }

    /// Marks `item` as processed (WQ-07). If it was re-added meanwhile it is
    /// queued again at the tail.
    pub fn done(&self, item: &T) {
        self.shared.done(item);
    }

    /// Stops accepting items and wakes every waiting `get` (WQ-11). Items
    /// already queued are still handed out (WQ-06). Ends a pending
    /// [`Queue::shut_down_with_drain`].
    pub fn shut_down(&self) {
        self.shared.shut_down(false);
    }

    /// Shuts down like [`Queue::shut_down`], then waits until every item
    /// handed out has been marked done (WQ-12). Waits forever if workers
    /// never call `done`, unless `shut_down` is called meanwhile.
    pub async fn shut_down_with_drain(&self) {
        self.shared.shut_down(true);
        loop {
            let drained = self.shared.drained.notified();
            tokio::pin!(drained);
            drained.as_mut().enable();
            {
                let state = self.shared.state.lock();
                if state.processing == 0 || !state.drain {
                    return;
                }
            }
            drained.await;
        }
    }

    /// Whether shutdown has started (WQ-11).
    pub fn shutting_down(&self) -> bool {
        self.shared.state.lock().shutting_down
    }
}

impl<T: Hash + Eq + Clone + Send + Sync + 'static> Default for Queue<T> {
    fn default() -> Self {
        Self::new()
    }
}

impl<T> Drop for Queue<T> {
    fn drop(&mut self) {
        // No handle is left to add or get, so this is unobservable except
        // that it stops the metrics task.
        let mut state = self.shared.state.lock();
        state.shutting_down = true;
        drop(state);
        self.shared.stopped.notify_waiters();
    }
}

impl<T: Hash + Eq + Clone> Shared<T> {
    pub(crate) fn add(&self, item: T) {
        let waker = self.state.lock().add(item);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    pub(crate) fn shutting_down(&self) -> bool {
        self.state.lock().shutting_down
    }

    fn done(&self, item: &T) {
        let (waker, drained) = self.state.lock().done(item);
        if let Some(waker) = waker {
            waker.wake();
        }
        if drained {
            self.drained.notify_waiters();
        }
    }

    pub(crate) fn shut_down(&self, drain: bool) {
        let wakers = {
            let mut state = self.state.lock();
            state.drain = drain;
            state.shutting_down = true;
            state.waiters.wake_all()
        };
        for waker in wakers {
            waker.wake();
        }
        if !drain {
            self.drained.notify_waiters();
        }
        self.stopped.notify_waiters();
    }
}

/// The future returned by [`Queue::get`].
#[must_use = "futures do nothing unless awaited"]
pub struct Get<'a, T> {
    shared: &'a Shared<T>,
    /// Our slot in the waiter list once parked.
    id: Option<u64>,
}

impl<T: Hash + Eq + Clone> Future for Get<'_, T> {
    type Output = Option<T>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let this = self.get_mut();
        let mut state = this.shared.state.lock();
        let result = match state.take_head() {
            Some(item) => Some(item),
            None if state.shutting_down => None,
            None => {
                match this.id {
                    Some(id) if !state.waiters.is_woken(id) => state.waiters.update(id, cx.waker()),
                    _ => this.id = Some(state.waiters.register(cx.waker())),
                }
                return Poll::Pending;
            }
        };
        if let Some(id) = this.id.take() {
            state.waiters.remove(id);
        }
        Poll::Ready(result)
    }
}

impl<T> Drop for Get<'_, T> {
    fn drop(&mut self) {
        let Some(id) = self.id else { return };
        let mut state = self.shared.state.lock();
        let forward = if state.waiters.is_woken(id) {
            // Woken for an item we will never take: pass the wake-up on.
            if state.queue.is_empty() {
                None
            } else {
                state.waiters.wake_one()
            }
        } else {
            state.waiters.remove(id);
            None
        };
        drop(state);
        if let Some(waker) = forward {
            waker.wake();
        }
    }
}

/// WQ-14: refreshes the unfinished-work gauges every 500 ms on the queue's
/// clock until shutdown. Only started for real metrics.
async fn unfinished_work_loop<T: Hash + Eq + Clone>(shared: Arc<Shared<T>>, clock: SharedClock) {
    let mut next = clock.now() + UNFINISHED_WORK_UPDATE_PERIOD;
    loop {
        let stopped = shared.stopped.notified();
        tokio::pin!(stopped);
        stopped.as_mut().enable();
        if shared.shutting_down() {
            return;
        }
        tokio::select! {
            () = clock.sleep_until(next) => {}
            () = &mut stopped => return,
        }
        let now = clock.now();
        next += UNFINISHED_WORK_UPDATE_PERIOD;
        if next <= now {
            // Like a Go ticker, drop ticks a slow receiver missed.
            next = now + UNFINISHED_WORK_UPDATE_PERIOD;
        }
        let mut state = shared.state.lock();
        if state.shutting_down {
            return;
        }
        if let Some(metrics) = &mut state.metrics {
            metrics.update_unfinished_work();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;
    use crate::workqueue::metrics::testing::RecordingProvider;
    use crate::workqueue::test_util::{eventually, settle};
    use futures::task::{ArcWake, waker};
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::time::Duration;

    #[derive(Default)]
    struct CountingWaker(AtomicUsize);

    impl ArcWake for CountingWaker {
        fn wake_by_ref(arc_self: &Arc<Self>) {
            arc_self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    impl CountingWaker {
        fn count(&self) -> usize {
            self.0.load(Ordering::SeqCst)
        }
    }

    fn poll_with<F: Future + Unpin>(fut: &mut F, w: &Arc<CountingWaker>) -> Poll<F::Output> {
        let waker = waker(Arc::clone(w));
        let mut cx = Context::from_waker(&waker);
        Pin::new(fut).poll(&mut cx)
    }

    fn now<T: Hash + Eq + Clone + Send + Sync + 'static>(q: &Queue<T>) -> Option<Option<T>> {
        futures::FutureExt::now_or_never(q.get())
    }

    /// Three gets of the empty `q`, each polled once with a waker of its
    /// own and parked.
    fn parked_gets(q: &Queue<u32>) -> (Vec<Arc<CountingWaker>>, Vec<Get<'_, u32>>) {
        let wakers: Vec<_> = (0..3).map(|_| Arc::new(CountingWaker::default())).collect();
        let mut gets: Vec<_> = (0..3).map(|_| q.get()).collect();
        for (g, w) in gets.iter_mut().zip(&wakers) {
            assert!(poll_with(g, w).is_pending());
        }
        (wakers, gets)
    }

    #[tokio::test]
    async fn wq_01_interface() {
        let q: Queue<String> = Queue::named("iface");
        q.add("a".into());
        assert_eq!(q.len(), 1);
        let item = q.get().await.unwrap();
        q.done(&item);
        assert!(!q.shutting_down());
        q.shut_down_with_drain().await;
        q.shut_down();
        assert!(q.shutting_down());
        assert_eq!(q.get().await, None);
    }

    #[test]
    fn wq_09_example_sequence() {
        let q = Queue::new();
        for i in [1, 2, 3] {
            q.add(i);
        }
        assert_eq!(now(&q), Some(Some(1)));
        q.add(1); // WQ-09 step 3: dirty only
        assert_eq!(q.len(), 2);
        assert_eq!(q.shared.state.lock().queue, [2, 3]);
        q.done(&1);
        assert_eq!(q.shared.state.lock().queue, [2, 3, 1]);
        assert_eq!(q.len(), 3);
    }

    #[test]
    fn wq_02_fifo_order_and_wq_04_dedup_while_dirty() {
        let q = Queue::new();
        for k in ["b", "a", "c", "a", "b"] {
            q.add(k.to_string());
        }
        assert_eq!(q.len(), 3);
        let got: Vec<_> = (0..3).map(|_| now(&q).unwrap().unwrap()).collect();
        assert_eq!(got, ["b", "a", "c"]);
        assert_eq!(now(&q), None, "WQ-05: empty queue waits");
    }

    #[test]
    fn wq_04_add_while_processing_is_not_queued_until_done() {
        let q = Queue::new();
        q.add("x");
        assert_eq!(now(&q), Some(Some("x")));
        q.add("x");
        q.add("x");
        assert_eq!(q.len(), 0, "WQ-04 step 4 / WQ-10");
        assert_eq!(now(&q), None, "WQ-08: never handed out twice");
        q.done(&"x");
        assert_eq!(q.len(), 1, "WQ-07: queued once on done");
        assert_eq!(now(&q), Some(Some("x")));
        q.done(&"x");
        assert_eq!(q.len(), 0);
        assert!(q.shared.state.lock().items.is_empty());
    }

    #[test]
    fn wq_07_done_without_readd_forgets_item() {
        let q = Queue::new();
        q.add(7);
        assert_eq!(now(&q), Some(Some(7)));
        q.done(&7);
        let state = q.shared.state.lock();
        assert!(state.items.is_empty());
        assert_eq!(state.processing, 0);
    }

    #[test]
    fn wq_07_done_of_item_not_processing_is_ignored() {
        let q = Queue::new();
        q.add(1);
        q.done(&1); // queued, not handed out
        q.done(&2); // unknown
        assert_eq!(q.len(), 1);
        assert_eq!(now(&q), Some(Some(1)));
        assert_eq!(now(&q), None);
    }

    #[test]
    fn wq_10_len_counts_queued_only() {
        let q = Queue::new();
        q.add(1);
        q.add(2);
        assert_eq!(q.len(), 2);
        assert_eq!(now(&q), Some(Some(1)));
        assert_eq!(q.len(), 1);
        q.add(1);
        assert_eq!(q.len(), 1, "dirty+processing item is not counted");
        assert!(!q.is_empty());
    }

    #[test]
    fn wq_11_shutdown_ignores_adds_and_wq_06_drains_queued_items() {
        let q = Queue::new();
        q.add(1);
        q.add(2);
        assert!(!q.shutting_down());
        q.shut_down();
        assert!(q.shutting_down());
        q.add(3);
        assert_eq!(q.len(), 2);
        assert_eq!(now(&q), Some(Some(1)), "WQ-06");
        assert_eq!(now(&q), Some(Some(2)));
        assert_eq!(now(&q), Some(None), "WQ-05 step 2");
        q.shut_down(); // idempotent
        assert_eq!(now(&q), Some(None));
    }

    #[test]
    fn wq_06_done_after_shutdown_still_requeues_dirty_item() {
        let q = Queue::new();
        q.add(1);
        assert_eq!(now(&q), Some(Some(1)));
        q.add(1);
        q.shut_down();
        q.done(&1);
        assert_eq!(now(&q), Some(Some(1)));
        assert_eq!(now(&q), Some(None));
    }

    #[test]
    fn wq_04_add_wakes_exactly_one_waiter() {
        let q: Queue<u32> = Queue::new();
        let (wakers, mut gets) = parked_gets(&q);
        q.add(1);
        let woken: Vec<_> = wakers.iter().map(|w| w.count()).collect();
        assert_eq!(woken, [1, 0, 0], "first waiter woken, only it");
        q.add(1); // duplicate: no wake
        assert_eq!(wakers[1].count(), 0);
        assert_eq!(poll_with(&mut gets[0], &wakers[0]), Poll::Ready(Some(1)));
        // Re-polling a parked waiter must not double-register it.
        assert!(poll_with(&mut gets[1], &wakers[1]).is_pending());
        q.add(2);
        assert_eq!(wakers[1].count(), 1);
        assert_eq!(wakers[2].count(), 0);
        assert_eq!(q.shared.state.lock().waiters.list.len(), 1);
    }

    #[test]
    fn wq_04_cancelled_woken_waiter_passes_wake_on() {
        let q: Queue<u32> = Queue::new();
        let (wa, wb) = (
            Arc::new(CountingWaker::default()),
            Arc::new(CountingWaker::default()),
        );
        let mut a = q.get();
        let mut b = q.get();
        assert!(poll_with(&mut a, &wa).is_pending());
        assert!(poll_with(&mut b, &wb).is_pending());
        q.add(5);
        assert_eq!((wa.count(), wb.count()), (1, 0));
        drop(a);
        assert_eq!(wb.count(), 1, "wake forwarded to the next waiter");
        assert_eq!(poll_with(&mut b, &wb), Poll::Ready(Some(5)));
        // A cancelled waiter that was never woken just leaves the list.
        let mut c = q.get();
        assert!(poll_with(&mut c, &wa).is_pending());
        drop(c);
        assert!(q.shared.state.lock().waiters.list.is_empty());
    }

    #[test]
    fn wq_11_shutdown_wakes_all_waiters() {
        let q: Queue<u32> = Queue::new();
        let (wakers, mut gets) = parked_gets(&q);
        q.shut_down();
        for (g, w) in gets.iter_mut().zip(&wakers) {
            assert_eq!(w.count(), 1);
            assert_eq!(poll_with(g, w), Poll::Ready(None));
        }
    }

    #[tokio::test]
    async fn wq_05_get_waits_for_add_from_another_task() {
        let q = Arc::new(Queue::new());
        let worker = tokio::spawn({
            let q = Arc::clone(&q);
            async move { q.get().await }
        });
        settle().await;
        assert!(!worker.is_finished());
        q.add("k".to_string());
        assert_eq!(worker.await.unwrap(), Some("k".to_string()));
    }

    #[tokio::test]
    async fn wq_12_drain_waits_for_done_and_returns_at_once_when_idle() {
        let q = Queue::new();
        q.add(1);
        q.add(2);
        assert_eq!(q.get().await, Some(1));
        {
            let drain = q.shut_down_with_drain();
            tokio::pin!(drain);
            assert!(futures::poll!(drain.as_mut()).is_pending());
            assert!(q.shutting_down());
            q.add(3);
            assert_eq!(q.len(), 1, "adds ignored while draining");
            assert_eq!(q.get().await, Some(2), "queued items still handed out");
            q.done(&1);
            assert!(
                futures::poll!(drain.as_mut()).is_pending(),
                "2 still processing"
            );
            for _ in 0..10 {
                tokio::task::yield_now().await;
                assert!(futures::poll!(drain.as_mut()).is_pending());
            }
            q.done(&2);
            assert!(futures::poll!(drain.as_mut()).is_ready());
        }
        // Nothing in processing: returns at once.
        q.shut_down_with_drain().await;
        assert_eq!(q.get().await, None);
    }

    #[tokio::test]
    async fn wq_12_shut_down_ends_drain_wait() {
        let q = Arc::new(Queue::new());
        q.add(1);
        assert_eq!(q.get().await, Some(1));
        let drainer = tokio::spawn({
            let q = Arc::clone(&q);
            async move { q.shut_down_with_drain().await }
        });
        settle().await;
        assert!(
            !drainer.is_finished(),
            "blocks while a worker never calls done"
        );
        q.shut_down();
        drainer.await.unwrap();
    }

    #[tokio::test]
    async fn wq_13_new_is_unnamed_and_met_03_noop_starts_no_task() {
        let clock = FakeClock::new();
        let provider = Arc::new(RecordingProvider::default());
        let q: Queue<String> =
            Queue::with_config(QueueConfig::default().with_clock(clock.shared()));
        let named_no_provider: Queue<String> =
            Queue::with_config(QueueConfig::named("q").with_clock(clock.shared()));
        // MET-05: empty name → no-op even with a provider.
        let empty_name: Queue<String> = Queue::with_config(
            QueueConfig::default()
                .with_clock(clock.shared())
                .with_metrics_provider(provider.clone()),
        );
        settle().await;
        assert_eq!(clock.waiters(), 0, "WQ-14: no ticker for no-op metrics");
        assert!(provider.created.lock().is_empty());
        assert!(q.shared.state.lock().metrics.is_none());
        assert!(named_no_provider.shared.state.lock().metrics.is_none());
        assert!(empty_name.shared.state.lock().metrics.is_none());
        assert_eq!(UNFINISHED_WORK_UPDATE_PERIOD, Duration::from_millis(500));
        let _default: Queue<String> = Queue::default();
        let _named: Queue<String> = Queue::named("n");
    }

    #[tokio::test]
    async fn met_01_05_depth_adds_latency_and_work_duration() {
        let clock = FakeClock::new();
        let provider = Arc::new(RecordingProvider::default());
        let q: Queue<&str> = Queue::with_config(
            QueueConfig::named("m")
                .with_clock(clock.shared())
                .with_metrics_provider(provider.clone()),
        );
        q.add("a");
        clock.advance(Duration::from_secs(1));
        q.add("a"); // duplicate: no metric, latency still from the first add
        let r = provider.get("m");
        assert_eq!((r.adds, r.depth), (1, 1));
        assert_eq!(q.get().await, Some("a"));
        let r = provider.get("m");
        assert_eq!(r.depth, 0);
        assert_eq!(r.latency, [1.0]);
        clock.advance(Duration::from_secs(2));
        q.add("a"); // while processing: effective add, depth up, not queued
        let r = provider.get("m");
        assert_eq!((r.adds, r.depth), (2, 1));
        assert_eq!(q.len(), 0);
        q.done(&"a");
        assert_eq!(provider.get("m").work_duration, [2.0]);
        clock.advance(Duration::from_secs(3));
        assert_eq!(q.get().await, Some("a"));
        let r = provider.get("m");
        assert_eq!(r.latency, [1.0, 3.0], "from the add made while processing");
        assert_eq!(r.depth, 0);
        q.done(&"a");
        q.done(&"a"); // done without get: no observation
        assert_eq!(provider.get("m").work_duration, [2.0, 0.0]);
        q.shut_down();
        q.add("b");
        assert_eq!(
            provider.get("m").adds,
            2,
            "MET-01: no add metric while shutting down"
        );
        let created = provider.created.lock().clone();
        assert_eq!(created.len(), 6);
        assert!(created.iter().all(|(n, _)| n == "m"));
    }

    #[tokio::test]
    async fn wq_14_met_01_unfinished_work_ticker_every_500ms_until_shutdown() {
        let clock = FakeClock::new();
        let provider = Arc::new(RecordingProvider::default());
        let q: Queue<u32> = Queue::with_config(
            QueueConfig::named("t")
                .with_clock(clock.shared())
                .with_metrics_provider(provider.clone()),
        );
        clock.wait_for_waiters(1).await;
        q.add(1);
        q.add(2);
        assert_eq!(q.get().await, Some(1));
        clock.advance(Duration::from_millis(250));
        assert_eq!(q.get().await, Some(2));
        clock.advance(Duration::from_millis(250));
        eventually("first tick", || provider.get("t").unfinished_updates == 1).await;
        let r = provider.get("t");
        assert!((r.unfinished_work_seconds - 0.75).abs() < 1e-9);
        assert!((r.longest_running_processor - 0.5).abs() < 1e-9);
        clock.advance(Duration::from_millis(400));
        settle().await;
        assert_eq!(provider.get("t").unfinished_updates, 1, "not before 500 ms");
        q.done(&1);
        q.done(&2);
        clock.advance(Duration::from_millis(100));
        eventually("second tick", || provider.get("t").unfinished_updates == 2).await;
        assert_eq!(provider.get("t").unfinished_work_seconds, 0.0);
        q.shut_down();
        eventually("ticker exits", || clock.waiters() == 0).await;
        clock.advance(Duration::from_secs(5));
        settle().await;
        assert_eq!(provider.get("t").unfinished_updates, 2);
    }

    #[tokio::test]
    async fn wq_14_ticker_stops_when_queue_dropped() {
        let clock = FakeClock::new();
        let provider = Arc::new(RecordingProvider::default());
        let q: Queue<u32> = Queue::with_config(
            QueueConfig::named("d")
                .with_clock(clock.shared())
                .with_metrics_provider(provider),
        );
        clock.wait_for_waiters(1).await;
        drop(q);
        eventually("ticker exits", || clock.waiters() == 0).await;
    }

    #[test]
    fn wq_16_host_05_string_keys_compare_by_value() {
        let q: Queue<Arc<str>> = Queue::new();
        q.add(Arc::from("ns/a"));
        q.add(Arc::from(String::from("ns/") + "a"));
        assert_eq!(q.len(), 1);
    }
}
