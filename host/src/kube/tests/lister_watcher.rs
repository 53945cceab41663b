//! The HTTP list/watch: paths and queries, list parsing, watch line
//! splitting, event decoding and error classification.

use std::time::Duration;

use futures::StreamExt;
use serde_json::json;

use crate::clock::SystemClock;
use crate::informer::{ErrorKind, ListOptions, ListerWatcher, WatchEvent, WatchOptions};
use crate::kube::discovery::{ApiResource, Gvk};
use crate::kube::lister_watcher::HttpListerWatcher;
use crate::kube::rate_limit::ClientRateLimiter;
use crate::kube::test_support::{Reply, TOKEN, TestServer, client_for, closed_port};

fn configmaps() -> ApiResource {
    ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true)
}

fn cm(name: &str, rv: &str) -> serde_json::Value {
    json!({"metadata": {"name": name, "namespace": "team-a", "resourceVersion": rv,
        "managedFields": [{"manager": "kubectl"}]}, "data": {"k": "v"}})
}

fn typed_cm(name: &str, rv: &str) -> serde_json::Value {
    let mut value = cm(name, rv);
    let object = value.as_object_mut().unwrap();
    let mut typed = serde_json::Map::new();
    typed.insert("apiVersion".into(), json!("v1"));
    typed.insert("kind".into(), json!("ConfigMap"));
    typed.extend(std::mem::take(object));
    serde_json::Value::Object(typed)
}

fn event(kind: &str, object: serde_json::Value) -> String {
    format!("{}\n", json!({"type": kind, "object": object}))
}

/// A watch from resource version `rv`.
fn from_version(rv: &str) -> WatchOptions {
    WatchOptions {
        resource_version: rv.into(),
        ..WatchOptions::default()
    }
}

/// Every event of a watch from `rv`, to the stream's end.
async fn watch_events(lw: &HttpListerWatcher, rv: &str) -> Vec<WatchEvent> {
    lw.watch(&from_version(rv)).await.unwrap().collect().await
}

#[tokio::test]
async fn list_sends_the_options_and_parses_a_page() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"kind": "ConfigMapList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "42", "continue": "next-token"},
                "items": [cm("a", "40"), cm("b", "41")]})
            .to_string(),
        )
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), Some("team-a".into()))
        .with_label_selector("app=web");
    let page = lw
        .list(&ListOptions {
            resource_version: "0".into(),
            resource_version_match: Some("NotOlderThan".into()),
            limit: 500,
            continue_token: "tok/en=".into(),
            label_selector: Some("tier in (a,b)".into()),
            field_selector: Some("metadata.name=a".into()),
        })
        .await
        .unwrap();
    assert_eq!(page.resource_version, "42");
    assert_eq!(page.continue_token, "next-token");
    let keys: Vec<&str> = page.items.iter().map(|o| o.key()).collect();
    assert_eq!(keys, ["team-a/a", "team-a/b"]);
    // Filled in from the list's kind; managedFields pruned.
    assert_eq!(page.items[0].kind(), "ConfigMap");
    assert_eq!(page.items[0].api_version(), "v1");
    assert!(!page.items[0].has_managed_fields());
    let parsed: serde_json::Value = serde_json::from_str(&page.items[0].json()).unwrap();
    assert_eq!(parsed["data"]["k"], "v");
    assert_eq!(parsed["kind"], "ConfigMap");

    let requests = server.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "GET");
    assert_eq!(request.path, "/api/v1/namespaces/team-a/configmaps");
    assert_eq!(request.param("limit").as_deref(), Some("500"));
    assert_eq!(request.param("continue").as_deref(), Some("tok/en="));
    assert_eq!(request.param("resourceVersion").as_deref(), Some("0"));
    assert_eq!(
        request.param("resourceVersionMatch").as_deref(),
        Some("NotOlderThan")
    );
    assert_eq!(
        request.param("labelSelector").as_deref(),
        Some("app=web,tier in (a,b)")
    );
    assert_eq!(
        request.param("fieldSelector").as_deref(),
        Some("metadata.name=a")
    );
    assert_eq!(
        request.authorization.as_deref(),
        Some(format!("Bearer {TOKEN}").as_str())
    );
}

#[tokio::test]
async fn list_keeps_typed_items_and_managed_fields_when_asked() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"kind": "ConfigMapList", "apiVersion": "v1",
                "metadata": {"resourceVersion": "7"},
                "items": [typed_cm("a", "5")]})
            .to_string(),
        )
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None).with_pruning(false);
    let page = lw.list(&ListOptions::default()).await.unwrap();
    assert_eq!(page.continue_token, "");
    assert!(page.items[0].has_managed_fields());
    // Not prefixed a second time.
    assert_eq!(page.items[0].json().matches("\"kind\"").count(), 1);
    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/v1/configmaps");
    assert_eq!(request.query, "");
}

/// A metadata list and watch ask for `PartialObjectMetadata`, and keep
/// each object's metadata alone even when the server sends whole objects.
#[tokio::test]
async fn metadata_only_asks_for_partial_object_metadata_and_keeps_nothing_else() {
    let server = TestServer::start(|request| {
        if request.param("watch").is_some() {
            // A server that cannot answer in that form sends the object.
            Reply::chunked(200, vec![event("MODIFIED", typed_cm("b", "9"))])
        } else {
            Reply::json(
                200,
                json!({"kind": "PartialObjectMetadataList", "apiVersion": "meta.k8s.io/v1",
                    "metadata": {"resourceVersion": "8"},
                    "items": [{"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
                        "metadata": {"name": "a", "namespace": "team-a", "resourceVersion": "7",
                            "labels": {"app": "web"}}}]})
                .to_string(),
            )
        }
    })
    .await;
    let lw =
        HttpListerWatcher::new(server.client().await, configmaps(), None).with_metadata_only(true);
    let page = lw.list(&ListOptions::default()).await.unwrap();
    let listed: serde_json::Value = serde_json::from_str(&page.items[0].json()).unwrap();
    assert_eq!(
        listed,
        json!({"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1",
            "metadata": {"name": "a", "namespace": "team-a", "resourceVersion": "7",
                "labels": {"app": "web"}}})
    );
    let mut events = lw.watch(&WatchOptions::default()).await.unwrap();
    let Some(WatchEvent::Modified(watched)) = events.next().await else {
        panic!("a MODIFIED event");
    };
    let watched: serde_json::Value = serde_json::from_str(&watched.json()).unwrap();
    assert_eq!(watched["kind"], "PartialObjectMetadata");
    assert_eq!(watched["metadata"]["name"], "b");
    assert!(watched.get("data").is_none(), "{watched}");
    assert!(watched["metadata"].get("managedFields").is_none());
    let requests = server.requests();
    assert_eq!(
        requests[0].accept.as_deref(),
        Some("application/json;as=PartialObjectMetadataList;g=meta.k8s.io;v=v1,application/json")
    );
    assert_eq!(
        requests[1].accept.as_deref(),
        Some("application/json;as=PartialObjectMetadata;g=meta.k8s.io;v=v1,application/json")
    );
    // Whole objects otherwise.
    let whole = HttpListerWatcher::new(server.client().await, configmaps(), None);
    whole.list(&ListOptions::default()).await.unwrap();
    assert_eq!(
        server.requests()[2].accept.as_deref(),
        Some("application/json")
    );
}

#[tokio::test]
async fn malformed_list_bodies_are_errors_naming_the_cause() {
    let server = TestServer::start(|r| match r.param("limit").as_deref() {
        Some("1") => Reply::json(200, "{\"items\": [ {\"metadata\": "),
        Some("2") => Reply::json(200, "{\"items\": [{\"metadata\": {}}]}"),
        _ => Reply::json(200, "[]"),
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None);
    for (limit, expected) in [
        (1, "malformed list body"),
        (2, "malformed list item 0"),
        (3, "malformed list body"),
    ] {
        let error = lw
            .list(&ListOptions {
                limit,
                ..ListOptions::default()
            })
            .await
            .unwrap_err();
        assert_eq!(error.kind, ErrorKind::Other);
        assert!(error.message.contains(expected), "{error}");
    }
}

#[tokio::test]
async fn http_errors_are_classified() {
    let server = TestServer::start(|r| match r.param("limit").as_deref() {
        Some("1") => Reply::status(410, "Expired", "too old resource version: 1 (5)"),
        Some("2") => Reply::status(429, "TooManyRequests", "slow down").header("Retry-After", "7"),
        Some("3") => Reply::json(
            429,
            json!({"kind": "Status", "code": 429, "reason": "TooManyRequests",
                "message": "slow", "details": {"retryAfterSeconds": 3}})
            .to_string(),
        ),
        Some("4") => Reply::status(500, "InternalError", "boom"),
        Some("5") => Reply::json(
            504,
            json!({"kind": "Status", "code": 504, "reason": "Timeout",
                "message": "Too large resource version: 9, current: 5",
                "details": {"causes": [{"reason": "ResourceVersionTooLarge",
                    "message": "Too large resource version"}]}})
            .to_string(),
        ),
        Some("6") => Reply::json(503, "<html>proxy down</html>"),
        _ => Reply::status(404, "NotFound", "nope"),
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None);
    let list = |limit| {
        let lw = lw.clone();
        async move {
            lw.list(&ListOptions {
                limit,
                ..ListOptions::default()
            })
            .await
            .unwrap_err()
        }
    };
    assert_eq!(list(1).await.kind, ErrorKind::Expired);
    let throttled = list(2).await;
    assert_eq!(throttled.kind, ErrorKind::TooManyRequests);
    assert_eq!(throttled.retry_after, Some(Duration::from_secs(7)));
    let throttled = list(3).await;
    assert_eq!(throttled.retry_after, Some(Duration::from_secs(3)));
    let internal = list(4).await;
    assert_eq!(internal.kind, ErrorKind::Other);
    assert!(internal.message.contains("boom"), "{internal}");
    assert_eq!(list(5).await.kind, ErrorKind::TooLargeResourceVersion);
    let proxy = list(6).await;
    assert_eq!(proxy.kind, ErrorKind::Other);
    assert!(proxy.message.contains("proxy down"), "{proxy}");
    assert_eq!(list(7).await.kind, ErrorKind::Other);
    // A watch that cannot open is classified the same way.
    let error = match lw.watch(&from_version("1")).await {
        Err(error) => error,
        Ok(_) => panic!("watch of a 404 opened"),
    };
    assert_eq!(error.kind, ErrorKind::Other);
}

#[tokio::test]
async fn connection_refused_is_classified() {
    let port = closed_port().await;
    let client = client_for(
        &format!("http://127.0.0.1:{port}"),
        ClientRateLimiter::unlimited(SystemClock::shared()),
    )
    .await;
    let lw = HttpListerWatcher::new(client, configmaps(), None);
    let error = lw.list(&ListOptions::default()).await.unwrap_err();
    assert_eq!(error.kind, ErrorKind::ConnectionRefused, "{error}");
    let error = match lw.watch(&WatchOptions::default()).await {
        Err(error) => error,
        Ok(_) => panic!("watch on a closed port opened"),
    };
    assert_eq!(error.kind, ErrorKind::ConnectionRefused, "{error}");
}

#[tokio::test]
async fn watch_sends_the_options_and_decodes_events_split_across_chunks() {
    let mut typed = typed_cm("a", "11");
    typed["metadata"]["labels"] = json!({"app": "web"});
    let added = event("ADDED", typed.clone());
    let modified = event("MODIFIED", typed_cm("a", "12"));
    let deleted = event("DELETED", typed_cm("a", "13"));
    let bookmark = event(
        "BOOKMARK",
        json!({"kind": "ConfigMap", "apiVersion": "v1", "metadata": {"resourceVersion": "14"}}),
    );
    let expired = event(
        "ERROR",
        json!({"kind": "Status", "apiVersion": "v1", "status": "Failure",
            "message": "too old resource version: 1 (14)", "reason": "Expired", "code": 410}),
    );
    // Lines cut at odd places: mid-line, and two lines in one chunk.
    let (a1, a2) = added.split_at(17);
    let (m1, m2) = modified.split_at(modified.len() - 3);
    let chunks = vec![
        a1.to_string(),
        a2.to_string() + m1,
        m2.to_string() + "\n" + &deleted + &bookmark,
        expired,
    ];
    let server = TestServer::start(move |_| Reply::chunked(200, chunks.clone())).await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), Some("team-a".into()));
    let stream = lw
        .watch(&WatchOptions {
            resource_version: "10".into(),
            timeout: Some(Duration::from_secs(317)),
            allow_bookmarks: true,
            label_selector: Some("app=web".into()),
            field_selector: None,
        })
        .await
        .unwrap();
    let events: Vec<WatchEvent> = stream.collect().await;
    assert_eq!(events.len(), 5, "{events:?}");
    match &events[0] {
        WatchEvent::Added(o) => {
            assert_eq!(o.key(), "team-a/a");
            assert_eq!(o.resource_version(), "11");
            assert_eq!(o.label("app"), Some("web"));
            assert_eq!(o.kind(), "ConfigMap");
            assert!(!o.has_managed_fields());
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(&events[1], WatchEvent::Modified(o) if o.resource_version() == "12"));
    assert!(matches!(&events[2], WatchEvent::Deleted(o) if o.resource_version() == "13"));
    assert!(
        matches!(&events[3], WatchEvent::Bookmark { resource_version } if resource_version == "14")
    );
    match &events[4] {
        WatchEvent::Error(error) => {
            assert_eq!(error.kind, ErrorKind::Expired);
            assert!(error.message.contains("too old"), "{error}");
        }
        other => panic!("{other:?}"),
    }
    let request = &server.requests()[0];
    assert_eq!(request.path, "/api/v1/namespaces/team-a/configmaps");
    assert_eq!(request.param("watch").as_deref(), Some("true"));
    assert_eq!(request.param("resourceVersion").as_deref(), Some("10"));
    assert_eq!(request.param("timeoutSeconds").as_deref(), Some("317"));
    assert_eq!(
        request.param("allowWatchBookmarks").as_deref(),
        Some("true")
    );
    assert_eq!(request.param("labelSelector").as_deref(), Some("app=web"));
    assert_eq!(request.param("fieldSelector"), None);
}

#[tokio::test]
async fn watch_error_events_are_classified() {
    let lines = [
        json!({"code": 410, "reason": "Gone", "message": "gone"}),
        json!({"code": 429, "reason": "TooManyRequests", "message": "slow",
            "details": {"retryAfterSeconds": 2}}),
        json!({"code": 504, "reason": "Timeout", "message": "Too large resource version: 9"}),
        json!({"code": 500, "reason": "InternalError", "message": "boom"}),
    ];
    let server = TestServer::start(move |r| {
        let i: usize = r.param("resourceVersion").unwrap().parse().unwrap();
        Reply::json(200, event("ERROR", lines[i].clone()))
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None);
    let mut kinds = Vec::new();
    for i in 0..4 {
        let events = watch_events(&lw, &i.to_string()).await;
        match &events[..] {
            [WatchEvent::Error(error)] => kinds.push((error.kind, error.retry_after)),
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(
        kinds,
        [
            (ErrorKind::Expired, None),
            (ErrorKind::TooManyRequests, Some(Duration::from_secs(2))),
            (ErrorKind::TooLargeResourceVersion, None),
            (ErrorKind::Other, None),
        ]
    );
}

#[tokio::test]
async fn a_malformed_line_ends_the_stream_with_an_error() {
    let good = event("ADDED", typed_cm("a", "2"));
    let server = TestServer::start(move |r| {
        let bad = match r.param("resourceVersion").as_deref() {
            Some("1") => "{\"type\": \"ADDED\", \"object\": {\"metadata\": \n".to_string(),
            Some("2") => event("ADDED", json!({"metadata": {"namespace": "x"}})),
            Some("3") => event("RENAMED", typed_cm("a", "3")),
            _ => "not json at all\n".to_string(),
        };
        let after = event("ADDED", typed_cm("b", "9"));
        Reply::chunked(200, vec![good.clone(), bad, after])
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None);
    for rv in ["1", "2", "3", "4"] {
        let events = watch_events(&lw, rv).await;
        assert_eq!(events.len(), 2, "{events:?}");
        assert!(matches!(&events[0], WatchEvent::Added(_)));
        match &events[1] {
            WatchEvent::Error(error) => {
                assert_eq!(error.kind, ErrorKind::Other);
                assert!(error.message.contains("malformed watch event"), "{error}");
            }
            other => panic!("{other:?}"),
        }
    }
}

#[tokio::test]
async fn an_overlong_line_is_an_error_and_a_last_line_without_newline_counts() {
    let long = format!(
        "{{\"type\":\"ADDED\",\"object\":{{\"pad\":\"{}\"",
        "x".repeat(4096)
    );
    let last = event("ADDED", typed_cm("z", "3"));
    let last = last.trim_end().to_string();
    let server = TestServer::start(move |r| match r.param("resourceVersion").as_deref() {
        Some("1") => Reply::chunked(200, vec![long.clone(), long.clone()]),
        _ => Reply::chunked(200, vec![last.clone()]),
    })
    .await;
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None).with_max_line(1024);
    let events = watch_events(&lw, "1").await;
    match &events[..] {
        [WatchEvent::Error(error)] => assert!(error.message.contains("longer than 1024")),
        other => panic!("{other:?}"),
    }
    let events = watch_events(&lw, "2").await;
    assert!(matches!(&events[..], [WatchEvent::Added(o)] if o.name() == "z"));
}

#[tokio::test]
async fn cluster_scoped_and_group_paths() {
    let server = TestServer::start(|_| {
        Reply::json(
            200,
            json!({"metadata": {"resourceVersion": "1"}, "items": []}).to_string(),
        )
    })
    .await;
    let client = server.client().await;
    let namespaces = ApiResource::new(Gvk::new("", "v1", "Namespace"), "namespaces", false);
    let deployments = ApiResource::new(Gvk::new("apps", "v1", "Deployment"), "deployments", true);
    HttpListerWatcher::new(client.clone(), namespaces, Some("ignored".into()))
        .list(&ListOptions::default())
        .await
        .unwrap();
    HttpListerWatcher::new(client.clone(), deployments.clone(), None)
        .list(&ListOptions::default())
        .await
        .unwrap();
    HttpListerWatcher::new(client, deployments, Some("ns".into()))
        .list(&ListOptions::default())
        .await
        .unwrap();
    let paths: Vec<String> = server.requests().into_iter().map(|r| r.path).collect();
    assert_eq!(
        paths,
        [
            "/api/v1/namespaces",
            "/apis/apps/v1/deployments",
            "/apis/apps/v1/namespaces/ns/deployments"
        ]
    );
}

#[tokio::test]
async fn a_compactor_compresses_listed_and_watched_objects_as_they_arrive() {
    use crate::object::compression::{Compactor, SAMPLES};
    let count = SAMPLES + 50;
    let item = |i: usize| {
        let mut value = cm(&format!("c{i:04}"), &(100 + i).to_string());
        value["data"] = json!({"settings": format!("replicas: 3\nimage: registry.example.com/web:1.{i}\nlog: debug\n")});
        value
    };
    let items: Vec<serde_json::Value> = (0..count).map(item).collect();
    let list = json!({"kind": "ConfigMapList", "apiVersion": "v1",
        "metadata": {"resourceVersion": "999"}, "items": items})
    .to_string();
    let watched = event("ADDED", typed_cm("w", "1000"));
    let server = TestServer::start(move |request| {
        if request.param("watch").is_some() {
            Reply::chunked(200, vec![watched.clone()])
        } else {
            Reply::json(200, list.clone())
        }
    })
    .await;
    let compactor = std::sync::Arc::new(Compactor::new());
    let lw = HttpListerWatcher::new(server.client().await, configmaps(), None)
        .with_compactor(std::sync::Arc::clone(&compactor));
    let page = lw.list(&ListOptions::default()).await.unwrap();
    assert_eq!(page.items.len(), count);
    // The first objects teach the dictionary and stay plain; the rest are
    // compressed, and every one reads as the server sent it (pruned).
    for (i, object) in page.items.iter().enumerate() {
        assert_eq!(object.is_compressed(), i >= SAMPLES, "item {i}");
        let parsed: serde_json::Value = serde_json::from_str(&object.json()).unwrap();
        assert_eq!(parsed["data"], item(i)["data"]);
        assert!(parsed["metadata"].get("managedFields").is_none());
        assert_eq!(object.key(), format!("team-a/c{i:04}"));
    }
    let mut stream = lw.watch(&WatchOptions::default()).await.unwrap();
    let Some(WatchEvent::Added(object)) = stream.next().await else {
        panic!("an ADDED event");
    };
    assert!(object.is_compressed());
    assert_eq!(object.key(), "team-a/w");
    assert_eq!(object.json_len(), object.json().len());
}
