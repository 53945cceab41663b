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

/// A server that closes its first `drops` connections as soon as it has
/// read a request, without answering, and answers `{}` on later ones;
/// answers its address and how many connections it took.
async fn closing_server(drops: usize) -> (String, Arc<std::sync::atomic::AtomicUsize>) {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    let connections = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&connections);
    tokio::spawn(async move {
        while let Ok((mut stream, _)) = listener.accept().await {
            let n = counted.fetch_add(1, Ordering::SeqCst);
            tokio::spawn(async move {
                let mut request = Vec::new();
                let mut buf = [0u8; 1024];
                while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                    match stream.read(&mut buf).await {
                        Ok(0) | Err(_) => return,
                        Ok(read) => request.extend_from_slice(&buf[..read]),
                    }
                }
                if n < drops {
                    return; // closed under the request
                }
                let _ = stream
                    .write_all(
                        b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\nconnection: close\r\n\r\n{}",
                    )
                    .await;
            });
        }
    });
    (url, connections)
}

#[tokio::test]
async fn a_get_whose_connection_is_closed_under_it_is_sent_again_once() {
    let (url, connections) = closing_server(1).await;
    let client = client_for(
        &url,
        ClientRateLimiter::unlimited(FakeClock::new().shared()),
    )
    .await;
    let get = || http::Request::get("/api").body(Vec::new()).unwrap();
    let body = client.send_for_bytes(get()).await.expect("sent again");
    assert_eq!(&body[..], b"{}");
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 2);
    assert!(
        !client.reachability().is_down(),
        "a closed connection is no outage"
    );

    // Twice in a row is an error: once more only.
    let (url, connections) = closing_server(2).await;
    let client = client_for(
        &url,
        ClientRateLimiter::unlimited(FakeClock::new().shared()),
    )
    .await;
    assert!(client.send(get()).await.is_err());
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 2);

    // A write is not sent again: it may have been applied.
    let (url, connections) = closing_server(1).await;
    let client = client_for(
        &url,
        ClientRateLimiter::unlimited(FakeClock::new().shared()),
    )
    .await;
    let post = http::Request::post("/api").body(b"{}".to_vec()).unwrap();
    assert!(client.send(post).await.is_err());
    assert_eq!(connections.load(std::sync::atomic::Ordering::SeqCst), 1);
}
