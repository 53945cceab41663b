//! The native core over the wire: a shared informer, through the HTTP
//! ListerWatcher and kube-client (TLS, bearer token), against the embedded
//! dev API server. It syncs 10,000 ConfigMaps from one list at
//! resourceVersion 0 (paged by client-go's pager, answered whole as a real
//! server's watch cache answers it, and decoded as it arrives), then
//! converges to the server's state while writes continue under dropped
//! watches, compactions (forced relists), 429s and 500s.

mod guests;
mod hosts;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use recon_devserver::store::{DeleteOptions, ListParams, ResourceType, Store};
use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};
use recon_host::informer::BackoffConfig;
use recon_host::informer::{InformerConfig, InformerError, SharedInformer};
use recon_host::kube::Gvk;
use serde_json::json;
use tokio::task::JoinHandle;
use tokio_util::sync::CancellationToken;

const NAMESPACES: usize = 10;
const CONFIGMAPS: usize = 10_000;

fn configmap(namespace: &str, name: &str, value: usize) -> serde_json::Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": namespace, "name": name, "labels": {"app": format!("a{}", value % 7)}},
        "data": {"value": value.to_string()},
    })
}

/// Every object on the server, by key, with its resourceVersion.
fn server_state(store: &Store, configmaps: &ResourceType) -> BTreeMap<String, String> {
    store
        .list(configmaps, None, &ListParams::default())
        .expect("list")
        .items
        .iter()
        .map(|item| {
            let meta = &item["metadata"];
            let key = format!(
                "{}/{}",
                meta["namespace"].as_str().unwrap(),
                meta["name"].as_str().unwrap()
            );
            (key, meta["resourceVersion"].as_str().unwrap().to_string())
        })
        .collect()
}

fn cached_state(informer: &SharedInformer) -> BTreeMap<String, String> {
    informer
        .indexer()
        .list()
        .iter()
        .map(|o| (o.key().to_string(), o.resource_version().to_string()))
        .collect()
}

async fn eventually(what: &str, limit: Duration, mut condition: impl FnMut() -> bool) {
    let deadline = Instant::now() + limit;
    while !condition() {
        assert!(
            Instant::now() < deadline,
            "{what}: not reached within {limit:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Runs `informer` until `stop`, once it has synced within `limit`.
async fn run_synced(
    informer: &Arc<SharedInformer>,
    stop: &CancellationToken,
    limit: Duration,
) -> JoinHandle<Result<(), InformerError>> {
    let run = tokio::spawn({
        let (informer, stop) = (Arc::clone(informer), stop.clone());
        async move { informer.run(stop).await }
    });
    eventually("initial sync", limit, || informer.has_synced()).await;
    run
}

async fn informer_for(server: &DevServerHandle) -> Arc<SharedInformer> {
    let lister_watcher = hosts::dev_lister_watcher(server, &Gvk::new("", "v1", "ConfigMap")).await;
    SharedInformer::new(
        Arc::new(lister_watcher),
        InformerConfig {
            name: "configmaps".into(),
            // Quick retries keep the test short; the rules are the same.
            backoff: BackoffConfig {
                initial: Duration::from_millis(20),
                cap: Duration::from_millis(200),
                ..BackoffConfig::default()
            },
            ..InformerConfig::default()
        },
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn informer_syncs_10k_configmaps_and_converges_under_faults() {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    for n in 0..NAMESPACES {
        hosts::create_namespace(&store, &format!("ns-{n}"));
    }
    for i in 0..CONFIGMAPS {
        let ns = format!("ns-{}", i % NAMESPACES);
        store
            .create(
                &configmaps,
                Some(&ns),
                configmap(&ns, &format!("cm-{i:05}"), i),
                None,
            )
            .unwrap();
    }

    let informer = informer_for(&server).await;
    server.clear_request_log();
    let stop = CancellationToken::new();
    let run = run_synced(&informer, &stop, Duration::from_secs(60)).await;
    assert_eq!(informer.indexer().len(), CONFIGMAPS);
    let lists: Vec<String> = server
        .request_log()
        .into_iter()
        .filter(|line| line.contains("/configmaps") && !line.contains("watch="))
        .collect();
    assert_eq!(lists.len(), 1, "one list, answered whole: {lists:?}");
    assert!(
        lists[0].contains("limit=500") && lists[0].contains("resourceVersion=0"),
        "{}",
        lists[0]
    );
    assert_eq!(cached_state(&informer), server_state(&store, &configmaps));

    // Writes continue while the watch is dropped, history is compacted (the
    // next watch gets 410 and the reflector relists) and requests fail.
    let mut rng = fastrand::Rng::with_seed(7);
    for round in 0..20 {
        for _ in 0..100 {
            let i = rng.usize(..CONFIGMAPS + 500);
            let ns = format!("ns-{}", i % NAMESPACES);
            let name = format!("cm-{i:05}");
            match rng.u8(..10) {
                0..=1 => {
                    let _ = store.delete(&configmaps, Some(&ns), &name, &DeleteOptions::default());
                }
                _ => {
                    let body = configmap(&ns, &name, rng.usize(..1_000_000));
                    if store
                        .update(&configmaps, Some(&ns), &name, body.clone(), None)
                        .is_err()
                    {
                        store.create(&configmaps, Some(&ns), body, None).unwrap();
                    }
                }
            }
        }
        match round % 5 {
            0 => server.drop_watches(),
            1 => {
                server.compact();
                server.drop_watches();
            }
            2 => {
                server.fail_next(3, 429);
                server.drop_watches();
            }
            3 => {
                server.fail_next(2, 500);
                server.drop_watches();
            }
            _ => {}
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    eventually("cache equals the server", Duration::from_secs(60), || {
        cached_state(&informer) == server_state(&store, &configmaps)
    })
    .await;
    let relists = server
        .request_log()
        .into_iter()
        .filter(|line| {
            line.contains("/configmaps") && !line.contains("watch=") && !line.contains("continue=")
        })
        .count();
    assert!(
        relists >= 2,
        "compaction forced at least one relist after the first list ({relists})"
    );

    stop.cancel();
    run.await.unwrap().unwrap();
    server.shutdown().await;
}

/// A metadata informer, as client-go's: Secrets listed and watched as
/// `PartialObjectMetadata` from the dev server, so the cache never holds
/// their data, and a label change arrives through the watch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_metadata_only_informer_caches_metadata_alone() {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let store = server.store();
    hosts::create_namespace(&store, "team-a");
    let secrets = store.resource_type("", "v1", "secrets").unwrap();
    let secret = |tier: &str| {
        json!({"apiVersion": "v1", "kind": "Secret",
            "metadata": {"namespace": "team-a", "name": "token", "labels": {"tier": tier}},
            "stringData": {"password": "hunter2"}})
    };
    store
        .create(&secrets, Some("team-a"), secret("web"), None)
        .unwrap();
    let lister_watcher = hosts::dev_lister_watcher(&server, &Gvk::new("", "v1", "Secret"))
        .await
        .with_metadata_only(true);
    let informer = SharedInformer::new(Arc::new(lister_watcher), InformerConfig::default());
    let stop = CancellationToken::new();
    let run = run_synced(&informer, &stop, Duration::from_secs(30)).await;
    let cached = |informer: &SharedInformer| -> serde_json::Value {
        let object = informer
            .indexer()
            .get_by_key("team-a/token")
            .expect("cached");
        serde_json::from_str(&object.json()).unwrap()
    };
    let listed = cached(&informer);
    assert_eq!(listed["kind"], "PartialObjectMetadata", "{listed}");
    assert_eq!(listed["apiVersion"], "meta.k8s.io/v1");
    assert_eq!(listed["metadata"]["labels"]["tier"], "web");
    assert!(listed.get("data").is_none(), "{listed}");
    assert!(!listed.to_string().contains("aHVudGVyMg"), "{listed}");
    let mut relabelled = store.get(&secrets, Some("team-a"), "token").unwrap();
    relabelled["metadata"]["labels"]["tier"] = json!("db");
    store
        .update(&secrets, Some("team-a"), "token", relabelled, None)
        .unwrap();
    eventually("the watched change", Duration::from_secs(30), || {
        cached(&informer)["metadata"]["labels"]["tier"] == "db"
    })
    .await;
    let watched = cached(&informer);
    assert_eq!(watched["kind"], "PartialObjectMetadata", "{watched}");
    assert!(watched.get("data").is_none(), "{watched}");
    stop.cancel();
    run.await.unwrap().unwrap();
}
