//! recon's native core against the embedded dev API server, with no
//! cluster: the dev server (HTTPS, bearer token) holds Pods of a real API
//! server's shape; a shared informer lists and watches them through
//! kube-client and the HTTP ListerWatcher (client-side rate limits on),
//! caches them with managedFields dropped, and a handler feeds a
//! rate-limited workqueue whose workers "reconcile" each key from the cache.
//! Meanwhile the server churns and drops watches, compacts its history
//! (forcing a relist) and answers 429s. The demo ends by checking that the
//! cache equals the server.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use recon_devserver::store::{DeleteOptions, ListParams, ResourceType, Store};
use recon_devserver::{DevServer, DevServerConfig};
use recon_host::clock::SystemClock;
use recon_host::informer::DeltaObject;
use recon_host::informer::{EventHandler, InformerConfig, SharedInformer};
use recon_host::kube::HttpListerWatcher;
use recon_host::kube::connect_with_kubeconfig_text;
use recon_host::kube::{ClientRateLimiter, NoopClientMetrics, RateLimit};
use recon_host::kube::{Discovery, Gvk};
use recon_host::object::Object;
use recon_host::workqueue::{RateLimitingQueue, default_controller_rate_limiter};
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

const NAMESPACES: usize = 20;
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

fn pod(template: &Value, i: usize, revision: usize) -> (String, Value) {
    let mut pod = template.clone();
    let namespace = format!("team-{}", i % NAMESPACES);
    let metadata = &mut pod["metadata"];
    metadata["namespace"] = json!(namespace);
    metadata["name"] = json!(format!("web-{i:05}"));
    metadata["labels"]["app"] = json!(format!("web-{}", i % 50));
    metadata["annotations"]["demo/revision"] = json!(revision.to_string());
    for field in ["uid", "resourceVersion", "creationTimestamp"] {
        metadata.as_object_mut().expect("metadata").remove(field);
    }
    (namespace, pod)
}

fn state(store: &Store, pods: &ResourceType) -> BTreeMap<String, String> {
    let list = store
        .list(pods, None, &ListParams::default())
        .expect("list");
    list.items
        .iter()
        .map(|item| {
            let meta = &item["metadata"];
            let key = format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap_or(""),
                meta["name"].as_str().unwrap_or("")
            );
            (
                key,
                meta["resourceVersion"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn cached(informer: &SharedInformer) -> BTreeMap<String, String> {
    informer
        .indexer()
        .list()
        .iter()
        .map(|o| (o.key().to_string(), o.resource_version().to_string()))
        .collect()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = DevServer::start(DevServerConfig::default()).await?;
    println!(
        "dev API server: {} (HTTPS, self-signed CA, bearer token)",
        server.url()
    );
    let store = server.store();
    let namespaces = store
        .resource_type("", "v1", "namespaces")
        .ok_or("namespaces not served")?;
    let pods = store
        .resource_type("", "v1", "pods")
        .ok_or("pods not served")?;
    for n in 0..NAMESPACES {
        store.create(
            &namespaces,
            None,
            json!({"metadata": {"name": format!("team-{n}")}}),
            None,
        )?;
    }
    let template: Value = serde_json::from_str(include_str!("../testdata/pod.json"))?;
    for i in 0..PODS {
        let (namespace, body) = pod(&template, i, 0);
        store.create(&pods, Some(&namespace), body, None)?;
    }
    println!("server: {PODS} Pods of the shared fixture's shape in {NAMESPACES} namespaces");

    // The client side: kubeconfig → kube-client (rustls) → rate-limited API client.
    let clock = SystemClock::shared();
    let limiter = ClientRateLimiter::new(
        RateLimit::default(),
        RateLimit::default(),
        clock.clone(),
        Arc::new(NoopClientMetrics),
    );
    let client = connect_with_kubeconfig_text(server.kubeconfig(), "dev server", limiter).await?;
    let discovery = Discovery::new(client.clone());
    let lister_watcher =
        HttpListerWatcher::for_gvk(client, &discovery, &Gvk::new("", "v1", "Pod"), None).await?;

    let queue: Arc<Queue> = Arc::new(RateLimitingQueue::named(
        Arc::new(default_controller_rate_limiter(clock.clone())),
        "pods",
    ));
    let informer = SharedInformer::new(
        Arc::new(lister_watcher),
        InformerConfig {
            name: "pods".into(),
            clock,
            ..InformerConfig::default()
        },
    );
    informer.add_event_handler(Arc::new(Enqueue(Arc::clone(&queue))))?;

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
        "informer: synced {} Pods over HTTPS in {:?}; {} bytes cached per Pod (managedFields dropped)",
        informer.indexer().len(),
        started.elapsed(),
        cached_bytes / informer.indexer().len().max(1)
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

    // Churn with faults: updates and deletes, a dropped watch, 429s, and a
    // compaction while the watch is down (410, then a relist).
    for step in 0..CHURN {
        let i = (step * 7919) % PODS;
        let (namespace, body) = pod(&template, i, step + 1);
        if step % 10 == 9 {
            let _ = store.delete(
                &pods,
                Some(&namespace),
                &format!("web-{i:05}"),
                &DeleteOptions::default(),
            );
        } else if store
            .update(
                &pods,
                Some(&namespace),
                &format!("web-{i:05}"),
                body.clone(),
                None,
            )
            .is_err()
        {
            store.create(&pods, Some(&namespace), body, None)?;
        }
        match step {
            1000 => server.drop_watches(),
            // The next two watch requests get 429: the reflector backs off
            // while changes continue, then the history it needs is compacted
            // away, so its next watch gets 410 and it relists.
            1500 => {
                server.fail_next(2, 429);
                server.drop_watches();
            }
            2000 => server.compact(),
            _ => {}
        }
        if step % 100 == 0 {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }
    println!(
        "server: {CHURN} changes with a dropped watch, two 429s and a compaction while the watch was down"
    );

    let deadline = Instant::now() + Duration::from_secs(60);
    let converged = loop {
        if cached(&informer) == state(&store, &pods) && queue.is_empty() {
            break true;
        }
        if Instant::now() > deadline {
            break false;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let log = server.request_log();
    let lists = log
        .iter()
        .filter(|l| l.contains("/pods") && !l.contains("watch="));
    let rounds = lists.clone().filter(|l| !l.contains("continue=")).count();
    let pages = lists.count();
    let watches = log
        .iter()
        .filter(|l| l.contains("/pods") && l.contains("watch="))
        .count();
    println!(
        "informer: {rounds} lists ({pages} pages of up to 500), {watches} watch requests; {} keys reconciled by {WORKERS} workers",
        reconciled.load(Ordering::Relaxed)
    );
    stop.cancel();
    queue.shut_down();
    informer_task.await??;
    for worker in workers {
        worker.await?;
    }
    server.shutdown().await;
    if !converged {
        return Err("the cache did not converge to the server within 60 s".into());
    }
    println!(
        "cache equals the server: {} Pods, every resourceVersion matches",
        informer.indexer().len()
    );
    Ok(())
}
