//! Whether the API server answers. Every request's outcome marks it up or
//! down (no response, 502, 503 or 504, or `/readyz` saying anything but
//! ready: down; any other answer, a 500 of one failing request included:
//! up), and each
//! return from down to up counts a recovery. Reflectors waiting out a
//! backoff retry at once on a recovery (`informer::Recoveries`), so an
//! outage that is over is not charged again to every informer. While the
//! server is down, [`probe_while_down`] asks its `/readyz`, so its return
//! is seen within one probe interval even when nothing else asks.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use tokio::sync::{Notify, watch};
use tokio_util::sync::CancellationToken;

use super::client::ApiClient;
use crate::clock::SharedClock;

/// The path that says whether the server as a whole is ready: any answer
/// but a success is an outage.
pub const READINESS: &str = "/readyz";

/// How often a server that is down is probed.
pub const PROBE_INTERVAL: Duration = Duration::from_secs(1);

/// Whether the API server answers, and how often it came back.
pub struct Reachability {
    down: AtomicBool,
    /// Told of each flip: true when the server answers again.
    observer: std::sync::OnceLock<Box<dyn Fn(bool) + Send + Sync>>,
    /// Wakes the probe when the server goes down.
    went_down: Notify,
    recoveries: watch::Sender<u64>,
}

impl std::fmt::Debug for Reachability {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reachability")
            .field("down", &self.is_down())
            .finish_non_exhaustive()
    }
}

impl Reachability {
    /// A server taken to answer.
    pub fn new() -> Arc<Reachability> {
        Arc::new(Reachability {
            down: AtomicBool::new(false),
            observer: std::sync::OnceLock::new(),
            went_down: Notify::new(),
            recoveries: watch::Sender::new(0),
        })
    }

    /// Whether a response with `status` says the server as a whole is
    /// unavailable, not that one request failed.
    pub fn is_outage(status: http::StatusCode) -> bool {
        matches!(status.as_u16(), 502..=504)
    }

    /// Tells `observer` of each flip (true: the server answers again); the
    /// first observer set is the one told.
    pub fn observe(&self, observer: impl Fn(bool) + Send + Sync + 'static) {
        let _ = self.observer.set(Box::new(observer));
    }

    fn tell(&self, reachable: bool) {
        if let Some(observer) = self.observer.get() {
            observer(reachable);
        }
    }

    /// Changes at each recovery.
    pub fn recoveries(&self) -> watch::Receiver<u64> {
        self.recoveries.subscribe()
    }

    /// Whether the last request got no answer or an outage status.
    pub fn is_down(&self) -> bool {
        self.down.load(Ordering::Acquire)
    }

    /// A request got an answer that is not an outage.
    pub fn answered(&self) {
        if self.down.swap(false, Ordering::AcqRel) {
            tracing::info!("the API server answers again: informers retry now");
            self.tell(true);
            self.recoveries.send_modify(|n| *n += 1);
        }
    }

    /// A request got no answer, or an outage status.
    pub fn failed(&self, why: &dyn std::fmt::Display) {
        if !self.down.swap(true, Ordering::AcqRel) {
            tracing::warn!(
                "the API server does not answer ({why}); informers and reconciles retry, \
                 at once when it answers again"
            );
            self.tell(false);
            self.went_down.notify_one();
        }
    }
}

/// Until `stop`: whenever the server is down, asks its `/readyz` every
/// `every` until it says it is ready (the client marks the outcome).
pub async fn probe_while_down(
    client: ApiClient,
    every: Duration,
    clock: SharedClock,
    stop: CancellationToken,
) {
    let reachability = Arc::clone(client.reachability());
    loop {
        while !reachability.is_down() {
            tokio::select! {
                _ = stop.cancelled() => return,
                _ = reachability.went_down.notified() => {}
            }
        }
        tokio::select! {
            _ = stop.cancelled() => return,
            _ = clock.sleep(every) => {}
        }
        let request = http::Request::get(READINESS)
            .body(Vec::new())
            .expect("a valid request");
        // The outcome is what counts, and the client has marked it.
        let _ = client.send_raw(request).await;
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicU16;

    use super::*;
    use crate::clock::FakeClock;
    use crate::kube::test_support::{Reply, TestServer};

    #[test]
    fn a_recovery_is_counted_once_per_return() {
        let reachability = Reachability::new();
        let recoveries = reachability.recoveries();
        reachability.answered();
        assert_eq!(*recoveries.borrow(), 0, "never down");
        reachability.failed(&"connection refused");
        reachability.failed(&"connection refused");
        assert!(reachability.is_down());
        reachability.answered();
        reachability.answered();
        assert!(!reachability.is_down());
        assert_eq!(*recoveries.borrow(), 1);
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_server_that_fails_is_probed_until_it_answers() {
        // 503 until told otherwise.
        let status = Arc::new(AtomicU16::new(503));
        let server = TestServer::start({
            let status = Arc::clone(&status);
            move |_| Reply::json(status.load(Ordering::Relaxed), "{}")
        })
        .await;
        let client = server.client().await;
        let mut recoveries = client.reachability().recoveries();
        let request = || http::Request::get("/api").body(Vec::new()).unwrap();
        assert!(client.send(request()).await.is_err());
        assert!(client.reachability().is_down());
        let clock = FakeClock::new();
        let stop = CancellationToken::new();
        let probe = tokio::spawn(probe_while_down(
            client.clone(),
            PROBE_INTERVAL,
            clock.shared(),
            stop.clone(),
        ));
        // A probe while the server is not ready: still down.
        status.store(500, Ordering::Relaxed);
        clock.wait_for_waiters(1).await;
        clock.advance_to_next_deadline();
        clock.wait_for_waiters(1).await;
        assert!(client.reachability().is_down());
        let probes = |server: &TestServer| {
            server
                .requests()
                .iter()
                .filter(|r| r.path == "/readyz")
                .count()
        };
        assert_eq!(probes(&server), 1);
        // It answers: the next probe sees it, and counts a recovery.
        status.store(200, Ordering::Relaxed);
        clock.advance_to_next_deadline();
        tokio::time::timeout(Duration::from_secs(10), recoveries.changed())
            .await
            .expect("a recovery")
            .unwrap();
        assert!(!client.reachability().is_down());
        assert_eq!(probes(&server), 2);
        stop.cancel();
        probe.await.unwrap();
    }
}
