//! Workqueue integration tests: a model test against a reference
//! implementation of client-go's queue (WQ-03..WQ-11), and concurrency
//! hammers on multi-threaded runtimes (WQ-02, WQ-08, RLQ-*). No real sleeps.

use std::collections::{HashSet, VecDeque};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::Duration;

use futures::FutureExt;
use proptest::prelude::*;
use recon_host::clock::FakeClock;
use recon_host::workqueue::{
    BucketRateLimiter, ItemExponentialFailureRateLimiter, MaxOfRateLimiter, Queue, QueueConfig,
    RateLimiter, RateLimitingQueue,
};

// ---------------------------------------------------------------------------
// Model test
// ---------------------------------------------------------------------------

/// client-go's `Typed` queue written literally with WQ-03's three pieces of
/// state. One deliberate difference, shared with the real queue: `Done` of
/// an item that is not being processed is ignored.
#[derive(Default)]
struct Model {
    queue: VecDeque<u8>,
    dirty: HashSet<u8>,
    processing: HashSet<u8>,
    shutting_down: bool,
}

impl Model {
    fn add(&mut self, x: u8) {
        if self.shutting_down || self.dirty.contains(&x) {
            return;
        }
        self.dirty.insert(x);
        if self.processing.contains(&x) {
            return;
        }
        self.queue.push_back(x);
    }

    /// `None` = the call would block.
    fn get(&mut self) -> Option<Option<u8>> {
        match self.queue.pop_front() {
            Some(x) => {
                self.processing.insert(x);
                self.dirty.remove(&x);
                Some(Some(x))
            }
            None if self.shutting_down => Some(None),
            None => None,
        }
    }

    fn done(&mut self, x: u8) {
        if !self.processing.remove(&x) {
            return;
        }
        if self.dirty.contains(&x) {
            self.queue.push_back(x);
        }
    }
}

#[derive(Debug, Clone)]
enum Op {
    Add(u8),
    Get,
    Done(u8),
    ShutDown,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        5 => (0u8..6).prop_map(Op::Add),
        4 => Just(Op::Get),
        4 => (0u8..6).prop_map(Op::Done),
        1 => Just(Op::ShutDown),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    // WQ-03, WQ-04, WQ-05, WQ-06, WQ-07, WQ-09, WQ-10, WQ-11
    #[test]
    fn wq_model_random_add_get_done_shutdown(ops in proptest::collection::vec(op(), 0..80)) {
        let q: Queue<u8> = Queue::new();
        let mut model = Model::default();
        for op in ops {
            match op {
                Op::Add(x) => { q.add(x); model.add(x); }
                Op::Get => {
                    let real = q.get().now_or_never();
                    prop_assert_eq!(real, model.get());
                }
                Op::Done(x) => { q.done(&x); model.done(x); }
                Op::ShutDown => { q.shut_down(); model.shutting_down = true; }
            }
            prop_assert_eq!(q.len(), model.queue.len());
            prop_assert_eq!(q.shutting_down(), model.shutting_down);
        }
        // Drain what is left: same order, then the shutdown answer.
        q.shut_down();
        model.shutting_down = true;
        loop {
            let real = q.get().now_or_never();
            let want = model.get();
            prop_assert_eq!(&real, &want);
            if want == Some(None) { break; }
        }
    }
}

// ---------------------------------------------------------------------------
// Hammers
// ---------------------------------------------------------------------------

const KEYS: usize = 500;

fn keys() -> Arc<Vec<Arc<str>>> {
    Arc::new((0..KEYS).map(|i| Arc::from(format!("ns/k{i}"))).collect())
}

fn index(key: &str) -> usize {
    key[4..].parse().unwrap()
}

/// Shared bookkeeping of a hammer run.
struct Tracker {
    /// Set while a worker holds the key: WQ-08.
    in_flight: Vec<AtomicBool>,
    /// Producer adds of each key, counted before each `add` call.
    adds: Vec<AtomicU64>,
    /// The largest `adds` value seen by a worker right after `get`.
    seen: Vec<AtomicU64>,
    processed: AtomicUsize,
    busy: AtomicUsize,
}

impl Tracker {
    fn new() -> Arc<Self> {
        Arc::new(Tracker {
            in_flight: (0..KEYS).map(|_| AtomicBool::new(false)).collect(),
            adds: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            seen: (0..KEYS).map(|_| AtomicU64::new(0)).collect(),
            processed: AtomicUsize::new(0),
            busy: AtomicUsize::new(0),
        })
    }

    fn before_add(&self, i: usize) {
        self.adds[i].fetch_add(1, Ordering::SeqCst);
    }

    fn start(&self, i: usize) {
        self.busy.fetch_add(1, Ordering::SeqCst);
        let was = self.in_flight[i].swap(true, Ordering::SeqCst);
        assert!(!was, "WQ-08: key {i} handed to two workers at once");
        let adds = self.adds[i].load(Ordering::SeqCst);
        self.seen[i].fetch_max(adds, Ordering::SeqCst);
        self.processed.fetch_add(1, Ordering::Relaxed);
    }

    fn finish(&self, i: usize) {
        self.in_flight[i].store(false, Ordering::SeqCst);
        self.busy.fetch_sub(1, Ordering::SeqCst);
    }

    /// Every key's last add was followed by a `get` of that key (no item
    /// lost), and nothing is held any more.
    fn check_nothing_lost(&self) {
        for i in 0..KEYS {
            let adds = self.adds[i].load(Ordering::SeqCst);
            let seen = self.seen[i].load(Ordering::SeqCst);
            assert_eq!(
                seen, adds,
                "key {i}: added {adds} times, last seen at {seen}"
            );
            assert!(!self.in_flight[i].load(Ordering::SeqCst));
        }
        assert_eq!(self.busy.load(Ordering::SeqCst), 0);
    }
}

/// Spawns `count` producers that each add `adds` random keys through `add`
/// (recorded in `tracker` just before), yielding with probability
/// `yield_in_256` / 256 after each add. Producer `p` is seeded `seed + p`.
fn spawn_producers(
    count: usize,
    adds: usize,
    seed: u64,
    yield_in_256: u8,
    keys: &Arc<Vec<Arc<str>>>,
    tracker: &Arc<Tracker>,
    add: impl Fn(Arc<str>) + Clone + Send + 'static,
) -> Vec<tokio::task::JoinHandle<()>> {
    (0..count)
        .map(|p| {
            let (keys, tracker, add) = (Arc::clone(keys), Arc::clone(tracker), add.clone());
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(seed + p as u64);
                for _ in 0..adds {
                    let i = rng.usize(..KEYS);
                    tracker.before_add(i);
                    add(Arc::clone(&keys[i]));
                    if rng.u8(..) < yield_in_256 {
                        tokio::task::yield_now().await;
                    }
                }
            })
        })
        .collect()
}

// WQ-02, WQ-04, WQ-06, WQ-07, WQ-08, WQ-11
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wq_08_hammer_many_producers_many_workers() {
    const PRODUCERS: usize = 8;
    const WORKERS: usize = 8;
    const ADDS_PER_PRODUCER: usize = 20_000;

    let q: Arc<Queue<Arc<str>>> = Arc::new(Queue::new());
    let keys = keys();
    let tracker = Tracker::new();

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let q = Arc::clone(&q);
            let tracker = Arc::clone(&tracker);
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(1000 + w as u64);
                while let Some(key) = q.get().await {
                    let i = index(&key);
                    tracker.start(i);
                    if rng.u8(..) < 40 {
                        tokio::task::yield_now().await;
                    }
                    tracker.finish(i);
                    q.done(&key);
                }
            })
        })
        .collect();

    let producers = spawn_producers(PRODUCERS, ADDS_PER_PRODUCER, 0, 8, &keys, &tracker, {
        let q = Arc::clone(&q);
        move |key| q.add(key)
    });

    let run = async {
        for p in producers {
            p.await.unwrap();
        }
        // Workers keep handing out what is queued after shutdown (WQ-06),
        // including dirty items re-queued by `done`.
        q.shut_down();
        for w in workers {
            w.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("hammer finished in time");

    tracker.check_nothing_lost();
    assert_eq!(q.len(), 0);
    assert!(tracker.processed.load(Ordering::Relaxed) >= KEYS);
    assert_eq!(q.get().await, None);
}

// WQ-12 under load: drain waits for every handed-out item.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn wq_12_hammer_drain_with_busy_workers() {
    let q: Arc<Queue<u32>> = Arc::new(Queue::new());
    let held = Arc::new(AtomicUsize::new(0));
    for i in 0..2_000 {
        q.add(i);
    }
    let workers: Vec<_> = (0..6)
        .map(|_| {
            let q = Arc::clone(&q);
            let held = Arc::clone(&held);
            tokio::spawn(async move {
                while let Some(x) = q.get().await {
                    held.fetch_add(1, Ordering::SeqCst);
                    tokio::task::yield_now().await;
                    held.fetch_sub(1, Ordering::SeqCst);
                    q.done(&x);
                }
            })
        })
        .collect();
    tokio::time::timeout(Duration::from_secs(60), q.shut_down_with_drain())
        .await
        .expect("drain finished");
    assert_eq!(
        held.load(Ordering::SeqCst),
        0,
        "drain returned with work in progress"
    );
    for w in workers {
        w.await.unwrap();
    }
}

// RLQ-02, RLQ-03, RLQ-04, RLQ-06, RL-09, RL-12, DQ-06, DQ-10, WQ-08
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn rlq_hammer_add_rate_limited_and_forget() {
    const PRODUCERS: usize = 4;
    const WORKERS: usize = 6;
    const ADDS_PER_PRODUCER: usize = 5_000;
    const GIVE_UP_AFTER: u32 = 4;

    let clock = FakeClock::new();
    let limiter: Arc<dyn RateLimiter<Arc<str>>> = Arc::new(MaxOfRateLimiter::new(vec![
        Box::new(ItemExponentialFailureRateLimiter::new(
            Duration::from_millis(1),
            Duration::from_millis(20),
        )),
        Box::new(BucketRateLimiter::new(1000.0, 50, clock.shared())),
    ]));
    let q = Arc::new(RateLimitingQueue::with_config(
        Arc::clone(&limiter),
        QueueConfig::named("hammer").with_clock(clock.shared()),
    ));
    let keys = keys();
    let tracker = Tracker::new();
    let retries = Arc::new(AtomicUsize::new(0));
    let stop_clock = Arc::new(AtomicBool::new(false));

    let ticker = tokio::spawn({
        let clock = clock.clone();
        let stop = Arc::clone(&stop_clock);
        async move {
            while !stop.load(Ordering::SeqCst) {
                clock.advance(Duration::from_millis(1));
                tokio::task::yield_now().await;
            }
        }
    });

    let workers: Vec<_> = (0..WORKERS)
        .map(|w| {
            let q = Arc::clone(&q);
            let tracker = Arc::clone(&tracker);
            let retries = Arc::clone(&retries);
            tokio::spawn(async move {
                let mut rng = fastrand::Rng::with_seed(77 + w as u64);
                while let Some(key) = q.get().await {
                    let i = index(&key);
                    tracker.start(i);
                    if rng.u8(..) < 30 {
                        tokio::task::yield_now().await;
                    }
                    let fail = rng.bool();
                    if fail && q.num_requeues(&key) < GIVE_UP_AFTER {
                        retries.fetch_add(1, Ordering::Relaxed);
                        q.add_rate_limited(Arc::clone(&key));
                    } else {
                        // Success, or giving up: end the rate-limit cycle.
                        q.forget(&key);
                    }
                    tracker.finish(i);
                    q.done(&key);
                }
            })
        })
        .collect();

    let producers = spawn_producers(PRODUCERS, ADDS_PER_PRODUCER, 500, 16, &keys, &tracker, {
        let q = Arc::clone(&q);
        move |key| q.add(key)
    });

    let run = async {
        for p in producers {
            p.await.unwrap();
        }
        // Wait until nothing is queued, waiting or in progress, twice in a
        // row, then shut down; queued leftovers are still handed out.
        let mut idle_checks = 0;
        while idle_checks < 2 {
            let idle = q.is_empty()
                && q.delaying_queue().waiting_len() == 0
                && tracker.busy.load(Ordering::SeqCst) == 0;
            idle_checks = if idle { idle_checks + 1 } else { 0 };
            tokio::task::yield_now().await;
        }
        q.shut_down();
        for w in workers {
            w.await.unwrap();
        }
    };
    tokio::time::timeout(Duration::from_secs(120), run)
        .await
        .expect("rate-limited hammer finished in time");
    stop_clock.store(true, Ordering::SeqCst);
    ticker.await.unwrap();

    tracker.check_nothing_lost();
    assert!(retries.load(Ordering::Relaxed) > 0);
    assert_eq!(q.len(), 0);
    assert_eq!(q.get().await, None);
}
