//! Every request passes the client rate limiter and reports to the metrics
//! hook; a guest handle is limited by its own bucket too.

use std::sync::Arc;
use std::time::Duration;

use crate::clock::FakeClock;
use crate::informer::{ListOptions, ListerWatcher};
use crate::kube::discovery::{ApiResource, Gvk};
use crate::kube::lister_watcher::HttpListerWatcher;
use crate::kube::rate_limit::{ClientRateLimiter, RateLimit, RecordingClientMetrics};
use crate::kube::test_support::{Reply, TestServer, client_for, closed_port};

#[tokio::test]
async fn requests_wait_for_the_limiter_and_report_metrics() {
    let server = TestServer::start(|r| match r.method.as_str() {
        "GET" if !r.path.ends_with("/x") => Reply::json(
            200,
            "{\"metadata\": {\"resourceVersion\": \"1\"}, \"items\": []}",
        ),
        _ => Reply::status(404, "NotFound", "gone"),
    })
    .await;
    let clock = FakeClock::new();
    let metrics = RecordingClientMetrics::new();
    let limiter = ClientRateLimiter::new(
        RateLimit::new(10.0, 2),
        RateLimit::new(1.0, 1),
        clock.shared(),
        metrics.clone(),
    );
    let client = client_for(&server.url(), Arc::clone(&limiter)).await;
    let res = ApiResource::new(Gvk::new("", "v1", "ConfigMap"), "configmaps", true);
    let lw = HttpListerWatcher::new(client.clone(), res.clone(), None);

    // The burst of 2 passes at once.
    lw.list(&ListOptions::default()).await.unwrap();
    lw.list(&ListOptions::default()).await.unwrap();
    // The third waits 100 ms on the (fake) clock.
    let third = tokio::spawn({
        let lw = lw.clone();
        async move { lw.list(&ListOptions::default()).await }
    });
    clock.wait_for_waiters(1).await;
    assert_eq!(server.requests().len(), 2, "the third request waits");
    clock.advance(Duration::from_millis(100));
    third.await.unwrap().unwrap();

    // A guest: its own bucket (1/s, burst 1) and the shared one.
    let guest = client.for_guest("web");
    clock.advance(Duration::from_secs(1));
    let error = guest.get(&res, Some("ns"), "x").await.unwrap_err();
    assert!(error.is_not_found());
    let second = tokio::spawn({
        let guest = guest.clone();
        let res = res.clone();
        async move {
            guest
                .delete(&res, Some("ns"), "x", &Default::default())
                .await
        }
    });
    clock.wait_for_waiters(1).await;
    clock.advance(Duration::from_secs(1));
    assert!(second.await.unwrap().unwrap_err().is_not_found());

    // Transport failures are reported with code "<error>".
    let port = closed_port().await;
    let refused = client_for(&format!("http://127.0.0.1:{port}"), Arc::clone(&limiter)).await;
    HttpListerWatcher::new(refused, res, None)
        .list(&ListOptions::default())
        .await
        .unwrap_err();

    let requests: Vec<(String, String)> = metrics.requests();
    let pairs: Vec<(&str, &str)> = requests
        .iter()
        .map(|(m, c)| (m.as_str(), c.as_str()))
        .collect();
    assert_eq!(
        pairs,
        [
            ("GET", "200"),
            ("GET", "200"),
            ("GET", "200"),
            ("GET", "404"),
            ("DELETE", "404"),
            ("GET", "<error>"),
        ]
    );
    let waits: Vec<Duration> = metrics.waits().into_iter().map(|(_, w)| w).collect();
    assert_eq!(
        waits,
        [
            Duration::ZERO,
            Duration::ZERO,
            Duration::from_millis(100),
            Duration::ZERO,
            Duration::from_secs(1),
            Duration::ZERO,
        ]
    );
}
