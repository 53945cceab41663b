//! The native core end to end, with no cluster: an in-memory API source
//! serving realistic Pods, a shared informer caching them (managedFields
//! dropped), a handler mapping events to keys, a rate-limited workqueue and
//! workers that "reconcile" each key by reading the cache — while the source
//! churns and drops, expires and throttles watches. It ends by checking that
//! the cache equals the source.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recon_host::clock::SystemClock;
use recon_host::informer::delta_fifo::DeltaObject;
use recon_host::informer::fake_source::{FakeSource, SourceCall};
use recon_host::informer::lister_watcher::LwError;
use recon_host::informer::object::Object;
use recon_host::informer::shared_informer::{EventHandler, InformerConfig, SharedInformer};
use recon_host::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const PODS: usize = 2_000;
const CHURN: usize = 3_000;
const WORKERS: usize = 4;

type Queue = RateLimitingQueue<Arc<str>>;

/// Maps every notification to the object's key, as a controller does.
struct Enqueue(Arc<Queue>);

impl EventHandler for Enqueue {
    fn on_add(&self, object: &Object, _: bool) {
        self.0.add(Arc::from(object.key()));
    }
    fn on_update(&self, _: &Object, new: &Object) {
        self.0.add(Arc::from(new.key()));
    }
    fn on_delete(&self, object: &DeltaObject) {
        self.0.add(Arc::from(object.key()));
    }
}

fn pod(template: &Value, i: usize, revision: usize) -> Value {
    let mut pod = template.clone();
    let metadata = &mut pod["metadata"];
    metadata["namespace"] = json!(format!("team-{}", i % 20));
    metadata["name"] = json!(format!("web-{i:05}"));
    metadata["uid"] = json!(format!("00000000-0000-4000-8000-{i:012}"));
    metadata["labels"]["app"] = json!(format!("web-{}", i % 50));
    metadata["annotations"]["demo/revision"] = json!(revision.to_string());
    pod
}

#[tokio::main]
async fn main() {
    let template: Value =
        serde_json::from_str(include_str!("../testdata/pod.json")).expect("fixture");
    let source = FakeSource::new();
    for i in 0..PODS {
        source.apply(pod(&template, i, 0)).expect("valid pod");
    }
    println!(
        "source: {PODS} Pods of the shared fixture's shape, resourceVersion {}",
        source.resource_version()
    );

    let clock = SystemClock::shared();
    let queue: Arc<Queue> = Arc::new(RateLimitingQueue::named(
        Arc::new(default_controller_rate_limiter(clock.clone())),
        "pods",
    ));
    let informer = SharedInformer::new(
        source.clone(),
        InformerConfig {
            name: "pods".into(),
            clock,
            ..InformerConfig::default()
        },
    );
    informer
        .add_event_handler(Arc::new(Enqueue(Arc::clone(&queue))))
        .expect("handler");

    let stop = CancellationToken::new();
    let started = Instant::now();
    let informer_task = tokio::spawn({
        let (informer, stop) = (Arc::clone(&informer), stop.clone());
        async move { informer.run(stop).await }
    });
    while !informer.has_synced() {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let cached_bytes: usize = informer
        .indexer()
        .list()
        .iter()
        .map(Object::heap_size)
        .sum();
    println!(
        "informer synced {} objects in {:?}; cache holds {} bytes per Pod (managedFields dropped)",
        informer.indexer().len(),
        started.elapsed(),
        cached_bytes / informer.indexer().len()
    );

    // Workers: reconcile = read the object from the cache; forget on success.
    let reconciled = Arc::new(AtomicU64::new(0));
    let workers: Vec<_> = (0..WORKERS)
        .map(|_| {
            let (queue, informer, reconciled) = (
                Arc::clone(&queue),
                Arc::clone(&informer),
                Arc::clone(&reconciled),
            );
            tokio::spawn(async move {
                while let Some(key) = queue.get().await {
                    let _exists = informer.indexer().get_by_key(&key).is_some();
                    reconciled.fetch_add(1, Ordering::Relaxed);
                    queue.forget(&key);
                    queue.done(&key);
                }
            })
        })
        .collect();

    // Churn with faults: updates, deletes, watch drops, a 410 and a 429.
    for step in 0..CHURN {
        let i = (step * 7919) % PODS;
        if step % 10 == 9 {
            source.delete(&format!("team-{}/web-{i:05}", i % 20));
        } else {
            source
                .apply(pod(&template, i, step + 1))
                .expect("valid pod");
        }
        match step {
            1000 => source.drop_watches(),
            1500 => source.expire_watches(),
            2000 => {
                source.fail_next_watch(LwError::too_many_requests("throttled"));
                source.drop_watches();
            }
            _ => {}
        }
        if step % 100 == 0 {
            tokio::task::yield_now().await;
        }
    }
    println!(
        "source: applied {CHURN} changes with a watch drop, a 410 Expired and a 429; now {} objects",
        source.objects().len()
    );

    let deadline = Instant::now() + Duration::from_secs(30);
    let converged = loop {
        let server: Vec<(String, String)> = source
            .objects()
            .values()
            .map(|o| (o.key().to_string(), o.resource_version().to_string()))
            .collect();
        let mut cached: Vec<(String, String)> = informer
            .indexer()
            .list()
            .iter()
            .map(|o| (o.key().to_string(), o.resource_version().to_string()))
            .collect();
        cached.sort();
        if server == cached && queue.is_empty() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let (lists, watches) = source
        .calls()
        .iter()
        .fold((0, 0), |(l, w), call| match call {
            SourceCall::List(_) => (l + 1, w),
            SourceCall::Watch(_) => (l, w + 1),
        });
    println!(
        "informer: {lists} list requests, {watches} watch requests; {} keys reconciled by {WORKERS} workers",
        reconciled.load(Ordering::Relaxed)
    );
    stop.cancel();
    queue.shut_down();
    informer_task
        .await
        .expect("informer task")
        .expect("informer");
    for worker in workers {
        worker.await.expect("worker");
    }
    if converged {
        println!(
            "cache equals the source: {} objects, every version matches",
            informer.indexer().len()
        );
    } else {
        eprintln!("cache did NOT converge to the source within 30 s");
        std::process::exit(1);
    }
}
