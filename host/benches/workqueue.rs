//! Workqueue throughput: 8 producers and 8 workers on a multi-thread tokio
//! runtime, 1,000,000 adds over 10,000 distinct keys, each worker doing
//! get + done; plus a single-threaded add/get/done figure. Numbers are
//! printed, never asserted.

mod support;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use futures::FutureExt;
use recon_host::workqueue::Queue;

const ADDS: usize = 1_000_000;
const KEYS: usize = 10_000;
const PRODUCERS: usize = 8;
const WORKERS: usize = 8;

fn keys() -> Arc<Vec<Arc<str>>> {
    Arc::new(
        (0..KEYS)
            .map(|i| Arc::from(format!("default/object-{i}")))
            .collect(),
    )
}

fn per_sec(count: u64, elapsed: Duration) -> f64 {
    count as f64 / elapsed.as_secs_f64()
}

fn multi_thread() {
    let runtime = support::tokio_runtime();
    runtime.block_on(async {
        let q: Arc<Queue<Arc<str>>> = Arc::new(Queue::new());
        let keys = keys();
        let processed = Arc::new(AtomicU64::new(0));
        let start = Instant::now();
        let workers: Vec<_> = (0..WORKERS)
            .map(|_| {
                let q = Arc::clone(&q);
                let processed = Arc::clone(&processed);
                tokio::spawn(async move {
                    let mut n = 0;
                    while let Some(key) = q.get().await {
                        q.done(&key);
                        n += 1;
                    }
                    processed.fetch_add(n, Ordering::Relaxed);
                })
            })
            .collect();
        let producers: Vec<_> = (0..PRODUCERS)
            .map(|p| {
                let q = Arc::clone(&q);
                let keys = Arc::clone(&keys);
                tokio::spawn(async move {
                    let mut rng = fastrand::Rng::with_seed(p as u64);
                    for j in 0..ADDS / PRODUCERS {
                        q.add(Arc::clone(&keys[rng.usize(..KEYS)]));
                        if j % 1024 == 1023 {
                            tokio::task::yield_now().await;
                        }
                    }
                })
            })
            .collect();
        for p in producers {
            p.await.expect("producer");
        }
        let adds_elapsed = start.elapsed();
        q.shut_down();
        for w in workers {
            w.await.expect("worker");
        }
        let total = start.elapsed();
        let processed = processed.load(Ordering::Relaxed);
        println!(
            "multi-thread ({PRODUCERS} producers, {WORKERS} workers, {ADDS} adds over {KEYS} keys):"
        );
        println!(
            "  adds:     {:>12.0} adds/s (producers done in {:.3} s)",
            per_sec(ADDS as u64, adds_elapsed),
            adds_elapsed.as_secs_f64()
        );
        println!(
            "  get+done: {:>12.0} pairs/s ({processed} pairs, the rest deduplicated)",
            per_sec(processed, total)
        );
        println!("  wall time: {:.3} s", total.as_secs_f64());
    });
}

fn single_thread() {
    let q: Queue<Arc<str>> = Queue::new();
    let keys = keys();
    let rounds = ADDS / KEYS;
    let mut add_time = Duration::ZERO;
    let mut get_time = Duration::ZERO;
    let mut pairs = 0u64;
    let start = Instant::now();
    for _ in 0..rounds {
        let t = Instant::now();
        for key in keys.iter() {
            q.add(Arc::clone(key));
        }
        add_time += t.elapsed();
        let t = Instant::now();
        while let Some(Some(key)) = q.get().now_or_never() {
            q.done(&key);
            pairs += 1;
        }
        get_time += t.elapsed();
    }
    let total = start.elapsed();
    println!("single thread ({ADDS} adds of {KEYS} keys, then get+done each round):");
    println!(
        "  adds:     {:>12.0} adds/s",
        per_sec(ADDS as u64, add_time)
    );
    println!("  get+done: {:>12.0} pairs/s", per_sec(pairs, get_time));
    println!(
        "  add+get+done: {:>8.0} items/s, wall time {:.3} s",
        per_sec(pairs, total),
        total.as_secs_f64()
    );
}

fn main() {
    println!("machine: {}", support::machine());
    multi_thread();
    single_thread();
}
