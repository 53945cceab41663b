//! The native reflector over [`HttpListerWatcher`] against a scripted
//! server, end to end: a paged list, a watch, a 410 that forces a relist,
//! and a second watch.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::json;
use tokio_util::sync::CancellationToken;

use crate::informer::BackoffConfig;
use crate::informer::{ExpectedKind, Reflector, ReflectorConfig, Store, StoreError};
use crate::kube::discovery::{ApiResource, Gvk};
use crate::kube::lister_watcher::HttpListerWatcher;
use crate::kube::test_support::{Recorded, Reply, TestServer};
use crate::object::Object;

#[derive(Default)]
struct MapStore {
    objects: Mutex<BTreeMap<String, String>>,
    log: Mutex<Vec<String>>,
}

impl MapStore {
    /// Logs `verb` of `object` and keeps its resourceVersion.
    fn put(&self, verb: &str, object: &Object) {
        self.log.lock().push(format!("{verb} {}", object.key()));
        self.objects.lock().insert(
            object.key().to_string(),
            object.resource_version().to_string(),
        );
    }

    fn snapshot(&self) -> Vec<(String, String)> {
        self.objects
            .lock()
            .iter()
            .map(|(k, v)| (k.clone(), v.clone()))
            .collect()
    }
}

impl Store for MapStore {
    fn add(&self, object: Object) -> Result<(), StoreError> {
        self.put("add", &object);
        Ok(())
    }
    fn update(&self, object: Object) -> Result<(), StoreError> {
        self.put("update", &object);
        Ok(())
    }
    fn delete(&self, object: Object) -> Result<(), StoreError> {
        self.log.lock().push(format!("delete {}", object.key()));
        self.objects.lock().remove(object.key());
        Ok(())
    }
    fn replace(&self, objects: Vec<Object>, resource_version: &str) -> Result<(), StoreError> {
        assert!(
            objects
                .iter()
                .all(|o| o.kind() == "ConfigMap" && o.api_version() == "v1")
        );
        self.log
            .lock()
            .push(format!("replace {} at {resource_version}", objects.len()));
        let mut map = self.objects.lock();
        map.clear();
        for object in objects {
            map.insert(
                object.key().to_string(),
                object.resource_version().to_string(),
            );
        }
        Ok(())
    }
    fn resync(&self) -> Result<(), StoreError> {
        Ok(())
    }
}

fn item(name: &str, rv: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}})
}

fn typed(name: &str, rv: &str) -> serde_json::Value {
    json!({"kind": "ConfigMap", "apiVersion": "v1",
        "metadata": {"name": name, "namespace": "ns", "resourceVersion": rv}})
}

fn list(rv: &str, cont: &str, items: Vec<serde_json::Value>) -> Reply {
    Reply::json(
        200,
        json!({"kind": "ConfigMapList", "apiVersion": "v1",
            "metadata": {"resourceVersion": rv, "continue": cont}, "items": items})
        .to_string(),
    )
}

fn line(kind: &str, object: serde_json::Value) -> String {
    format!("{}\n", json!({"type": kind, "object": object}))
}

fn script(lists: Arc<AtomicUsize>, watches: Arc<AtomicUsize>) -> impl Fn(&Recorded) -> Reply {
    move |r| {
        if r.param("watch").is_none() {
            if r.param("continue").as_deref() == Some("page-2") {
                return list("100", "", vec![item("c", "3")]);
            }
            return match lists.fetch_add(1, Ordering::SeqCst) {
                0 => list("100", "page-2", vec![item("a", "1"), item("b", "2")]),
                _ => list("200", "", vec![item("a", "150"), item("d", "160")]),
            };
        }
        match watches.fetch_add(1, Ordering::SeqCst) {
            0 => Reply::chunked(
                200,
                vec![
                    line("ADDED", typed("e", "101")),
                    line("MODIFIED", typed("a", "102")),
                    line("DELETED", typed("b", "103")),
                    line(
                        "BOOKMARK",
                        json!({"kind": "ConfigMap", "apiVersion": "v1",
                        "metadata": {"resourceVersion": "104"}}),
                    ),
                    line(
                        "ERROR",
                        json!({"kind": "Status", "apiVersion": "v1", "code": 410,
                        "reason": "Expired", "message": "too old resource version: 104 (190)"}),
                    ),
                ],
            ),
            _ => {
                // Stays open: the second chunk would come much later.
                let mut reply =
                    Reply::chunked(200, vec![line("ADDED", typed("f", "201")), String::new()]);
                reply.pause = Duration::from_secs(60);
                reply
            }
        }
    }
}

#[tokio::test]
async fn reflector_lists_in_pages_watches_and_relists_after_410() {
    let lists = Arc::new(AtomicUsize::new(0));
    let watches = Arc::new(AtomicUsize::new(0));
    let server = TestServer::start(script(Arc::clone(&lists), Arc::clone(&watches))).await;
    let lw = HttpListerWatcher::new(
        server.client().await,
        ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true),
        Some("ns".into()),
    );
    let store = Arc::new(MapStore::default());
    let reflector = Reflector::new(
        Arc::new(lw),
        store.clone(),
        ReflectorConfig {
            name: Some("configmaps".into()),
            expected_kind: Some(ExpectedKind {
                api_version: "v1".into(),
                kind: "ConfigMap".into(),
            }),
            backoff: BackoffConfig {
                initial: Duration::from_millis(10),
                cap: Duration::from_millis(50),
                ..BackoffConfig::default()
            },
            seed: 7,
            ..ReflectorConfig::default()
        },
    );
    let stop = CancellationToken::new();
    let task = tokio::spawn({
        let reflector = Arc::clone(&reflector);
        let stop = stop.clone();
        async move { reflector.run(stop).await }
    });

    let expected = vec![
        ("ns/a".to_string(), "150".to_string()),
        ("ns/d".to_string(), "160".to_string()),
        ("ns/f".to_string(), "201".to_string()),
    ];
    for _ in 0..500 {
        if store.snapshot() == expected {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(store.snapshot(), expected);
    assert_eq!(reflector.last_sync_resource_version(), "201");
    stop.cancel();
    tokio::time::timeout(Duration::from_secs(10), task)
        .await
        .expect("the reflector stops")
        .unwrap();

    assert_eq!(
        *store.log.lock(),
        [
            "replace 3 at 100",
            "add ns/e",
            "update ns/a",
            "delete ns/b",
            "replace 2 at 200",
            "add ns/f",
        ]
    );
    let requests = server.requests();
    let summary: Vec<String> = requests
        .iter()
        .map(|r| {
            let mut s = String::new();
            for key in [
                "watch",
                "resourceVersion",
                "limit",
                "continue",
                "allowWatchBookmarks",
            ] {
                if let Some(v) = r.param(key) {
                    s.push_str(&format!("{key}={v} "));
                }
            }
            s.trim_end().to_string()
        })
        .collect();
    assert_eq!(
        summary,
        [
            "resourceVersion=0 limit=500",
            "limit=500 continue=page-2",
            "watch=true resourceVersion=100 allowWatchBookmarks=true",
            // After the 410 the relist asks for the last version seen.
            "resourceVersion=104 limit=500",
            "watch=true resourceVersion=200 allowWatchBookmarks=true",
        ]
    );
    assert!(
        requests
            .iter()
            .all(|r| r.path == "/api/v1/namespaces/ns/configmaps")
    );
    assert!(
        requests
            .iter()
            .filter(|r| r.param("watch").is_some())
            .all(|r| r.param("timeoutSeconds").is_some())
    );
}
