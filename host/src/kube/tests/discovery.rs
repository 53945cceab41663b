//! Discovery against a test server: the core group, a named group and a
//! CRD group that appears later (refresh on a miss), unknown kinds.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use serde_json::json;

use crate::kube::discovery::{Discovery, DiscoveryError, Gvk};
use crate::kube::lister_watcher::HttpListerWatcher;
use crate::kube::status::ApiErrorKind;
use crate::kube::test_support::{Reply, TestServer};

fn resource(name: &str, kind: &str, namespaced: bool, verbs: &[&str]) -> serde_json::Value {
    json!({"name": name, "singularName": "", "kind": kind, "namespaced": namespaced, "verbs": verbs})
}

fn discovery_server(
    crd_installed: Arc<AtomicBool>,
) -> impl Fn(&crate::kube::test_support::Recorded) -> Reply {
    move |r| {
        let crd = crd_installed.load(Ordering::SeqCst);
        let body = match r.path.as_str() {
            "/api" => json!({"kind": "APIVersions", "versions": ["v1"],
                "serverAddressByClientCIDRs": []}),
            "/api/v1" => json!({"kind": "APIResourceList", "groupVersion": "v1", "resources": [
                resource("configmaps", "ConfigMap", true, &["create", "get", "list", "watch"]),
                resource("namespaces", "Namespace", false, &["get", "list", "watch"]),
                resource("namespaces/status", "Namespace", false, &["get", "patch", "update"]),
                resource("pods", "Pod", true, &["list"]),
                resource("pods/log", "Pod", true, &["get"]),
                resource("pods/status", "Pod", true, &["get"]),
            ]}),
            "/apis" => {
                let mut groups = vec![json!({"name": "apps", "versions": [
                    {"groupVersion": "apps/v1", "version": "v1"}],
                    "preferredVersion": {"groupVersion": "apps/v1", "version": "v1"}})];
                if crd {
                    groups.push(json!({"name": "example.com", "versions": [
                        {"groupVersion": "example.com/v1", "version": "v1"},
                        {"groupVersion": "example.com/v1beta1", "version": "v1beta1"}],
                        "preferredVersion": {"groupVersion": "example.com/v1", "version": "v1"}}));
                }
                json!({"kind": "APIGroupList", "groups": groups})
            }
            "/apis/apps/v1" => {
                json!({"kind": "APIResourceList", "groupVersion": "apps/v1", "resources": [
                    resource("deployments", "Deployment", true, &["list", "watch", "patch"]),
                    resource("deployments/scale", "Scale", true, &["get", "update"]),
                    resource("deployments/status", "Deployment", true, &["get", "update"]),
                ]})
            }
            "/apis/example.com/v1" => {
                json!({"kind": "APIResourceList", "groupVersion": "example.com/v1", "resources": [
                    resource("widgets", "Widget", false, &["list", "watch"]),
                    resource("widgets/status", "Widget", false, &["get", "patch"]),
                ]})
            }
            // An aggregated version that is down is skipped.
            "/apis/example.com/v1beta1" => return Reply::status(503, "ServiceUnavailable", "down"),
            _ => return Reply::status(404, "NotFound", "not found"),
        };
        Reply::json(200, body.to_string())
    }
}

#[tokio::test]
async fn resolves_core_group_and_crd_kinds_refreshing_on_a_miss() {
    let installed = Arc::new(AtomicBool::new(false));
    let server = TestServer::start(discovery_server(Arc::clone(&installed))).await;
    let discovery = Discovery::new(server.client().await);

    let cm = discovery
        .resolve(&Gvk::new("", "v1", "ConfigMap"))
        .await
        .unwrap();
    assert_eq!(cm.plural, "configmaps");
    assert!(cm.namespaced);
    assert!(cm.supports("watch"));
    assert_eq!(
        cm.collection_path(Some("ns")),
        "/api/v1/namespaces/ns/configmaps"
    );
    let ns = discovery
        .resolve(&Gvk::new("", "v1", "Namespace"))
        .await
        .unwrap();
    assert!(!ns.namespaced);
    assert_eq!(ns.subresources, ["status"]);
    let pod = discovery.resolve(&Gvk::new("", "v1", "Pod")).await.unwrap();
    assert_eq!(pod.subresources, ["log", "status"]);
    let deploy = discovery
        .resolve(&Gvk::from_api_version("apps/v1", "Deployment"))
        .await
        .unwrap();
    assert_eq!(deploy.plural, "deployments");
    assert!(deploy.has_subresource("scale") && deploy.has_subresource("status"));
    assert_eq!(
        deploy.object_path(Some("ns"), "web"),
        "/apis/apps/v1/namespaces/ns/deployments/web"
    );
    // Subresource kinds (Scale) are not served as kinds of their own.
    assert_eq!(discovery.refreshes(), 1);

    // The CRD is not there yet: one refresh, then an error naming the GVK.
    let widget = Gvk::new("example.com", "v1", "Widget");
    let error = discovery.resolve(&widget).await.unwrap_err();
    assert_eq!(error, DiscoveryError::UnknownKind(widget.clone()));
    assert_eq!(
        error.to_string(),
        "unknown kind example.com/v1, Kind=Widget: the server does not serve it"
    );
    assert_eq!(discovery.refreshes(), 2);

    // Installed now: the miss refreshes once and finds it.
    installed.store(true, Ordering::SeqCst);
    let found = discovery.resolve(&widget).await.unwrap();
    assert!(!found.namespaced);
    assert_eq!(
        found.collection_path(Some("ignored")),
        "/apis/example.com/v1/widgets"
    );
    assert_eq!(found.subresources, ["status"]);
    assert_eq!(discovery.refreshes(), 3);
    // Cached from now on.
    discovery.resolve(&widget).await.unwrap();
    discovery
        .resolve(&Gvk::new("", "v1", "ConfigMap"))
        .await
        .unwrap();
    assert_eq!(discovery.refreshes(), 3);
    let lw = HttpListerWatcher::for_gvk(server.client().await, &discovery, &widget, None)
        .await
        .unwrap();
    assert_eq!(lw.resource().plural, "widgets");
    let error = HttpListerWatcher::for_gvk(
        server.client().await,
        &discovery,
        &Gvk::new("example.com", "v2", "Widget"),
        None,
    )
    .await
    .unwrap_err();
    assert!(matches!(error, DiscoveryError::UnknownKind(_)));
    let all = discovery.all().await.unwrap();
    assert_eq!(all.len(), 5);
}

#[tokio::test]
async fn discovery_failures_name_the_path() {
    let server = TestServer::start(|r| match r.path.as_str() {
        "/api" => Reply::json(200, "{\"versions\": [\"v1\"]}"),
        "/api/v1" => Reply::json(200, "{\"resources\": oops"),
        _ => Reply::status(403, "Forbidden", "no"),
    })
    .await;
    let discovery = Discovery::new(server.client().await);
    let error = discovery
        .resolve(&Gvk::new("", "v1", "ConfigMap"))
        .await
        .unwrap_err();
    match &error {
        DiscoveryError::Request { path, source } => {
            assert_eq!(path, "/api/v1");
            assert_eq!(source.kind, ApiErrorKind::Other);
            assert!(source.message.contains("malformed discovery document"));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn concurrent_misses_cost_one_refresh() {
    let installed = Arc::new(AtomicBool::new(false));
    let server = TestServer::start(discovery_server(installed)).await;
    let discovery = Arc::new(Discovery::new(server.client().await));
    let lookups: Vec<_> = (0..8)
        .map(|_| {
            let discovery = Arc::clone(&discovery);
            tokio::spawn(async move {
                discovery
                    .resolve(&Gvk::new("apps", "v1", "Deployment"))
                    .await
                    .map(|r| r.plural)
            })
        })
        .collect();
    for lookup in lookups {
        assert_eq!(lookup.await.unwrap().unwrap(), "deployments");
    }
    assert_eq!(discovery.refreshes(), 1);
    let roots = server
        .requests()
        .iter()
        .filter(|r| r.path == "/api")
        .count();
    assert_eq!(roots, 1);
}
