//! Client-side rate limiting of API requests: token buckets with QPS and
//! burst (client-go's defaults are 5 / 10), one shared by the whole host and
//! one per guest. A guest request first waits for its own bucket, then for
//! the shared one, so a guest can never use more than its share and the host
//! as a whole never more than the total. Waits use the injectable clock and
//! are reported to a [`ClientMetrics`] hook (`rest_client_*` metrics).

use std::collections::HashMap;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;

use crate::clock::SharedClock;
use crate::token_bucket::TokenBucket;

/// client-go's default QPS.
pub const DEFAULT_QPS: f64 = 5.0;
/// client-go's default burst.
pub const DEFAULT_BURST: u32 = 10;

/// The rate of one bucket.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RateLimit {
    /// Sustained requests per second; zero, negative or non-finite means
    /// unlimited (as client-go's negative QPS).
    pub qps: f64,
    /// Requests allowed at once from a full bucket (at least 1 is used).
    pub burst: u32,
}

impl Default for RateLimit {
    fn default() -> Self {
        RateLimit {
            qps: DEFAULT_QPS,
            burst: DEFAULT_BURST,
        }
    }
}

impl RateLimit {
    /// A limit of `qps` with `burst`.
    pub fn new(qps: f64, burst: u32) -> Self {
        RateLimit { qps, burst }
    }

    /// No limit at all.
    pub fn unlimited() -> Self {
        RateLimit { qps: 0.0, burst: 0 }
    }

    fn is_unlimited(&self) -> bool {
        !(self.qps.is_finite() && self.qps > 0.0)
    }
}

/// One bucket of the client limiter: a [`TokenBucket`] (reservations with
/// golang.org/x/time/rate semantics, as client-go uses), or none at all for
/// an unlimited rate.
#[derive(Debug)]
struct RequestBucket {
    tokens: Option<TokenBucket>,
}

impl RequestBucket {
    /// A full bucket.
    fn new(limit: RateLimit, clock: SharedClock) -> Self {
        let tokens =
            (!limit.is_unlimited()).then(|| TokenBucket::new(limit.qps, limit.burst, clock));
        RequestBucket { tokens }
    }

    /// Takes one token and returns how long the caller must wait before
    /// using it (zero when one was available).
    #[cfg(test)]
    fn reserve(&self) -> Duration {
        self.tokens
            .as_ref()
            .map_or(Duration::ZERO, TokenBucket::reserve)
    }

    /// Takes one token, waiting on the clock if needed; returns the wait.
    async fn acquire(&self) -> Duration {
        match &self.tokens {
            Some(tokens) => tokens.acquire().await,
            None => Duration::ZERO,
        }
    }
}

/// Hooks for the client metrics; the metrics server implements them.
pub trait ClientMetrics: Send + Sync + fmt::Debug + 'static {
    /// `rest_client_requests_total{code, method}`: one finished request;
    /// `code` is the HTTP status code or `"<error>"` when none came back.
    fn request_done(&self, method: &str, code: &str);

    /// `rest_client_rate_limiter_duration_seconds{verb}`: how long a request
    /// waited for the client rate limiter (observed for every request).
    fn rate_limiter_wait(&self, method: &str, wait: Duration);
}

/// Metrics that go nowhere.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoopClientMetrics;

impl ClientMetrics for NoopClientMetrics {
    fn request_done(&self, _method: &str, _code: &str) {}
    fn rate_limiter_wait(&self, _method: &str, _wait: Duration) {}
}

/// Metrics kept in memory, for tests.
#[cfg(test)]
#[derive(Debug, Default)]
pub struct RecordingClientMetrics {
    requests: Mutex<Vec<(String, String)>>,
    waits: Mutex<Vec<(String, Duration)>>,
}

#[cfg(test)]
impl RecordingClientMetrics {
    /// An empty recorder.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    /// `(method, code)` of every finished request, in order.
    pub fn requests(&self) -> Vec<(String, String)> {
        self.requests.lock().clone()
    }

    /// `(method, wait)` of every rate-limiter wait, in order.
    pub fn waits(&self) -> Vec<(String, Duration)> {
        self.waits.lock().clone()
    }
}

#[cfg(test)]
impl ClientMetrics for RecordingClientMetrics {
    fn request_done(&self, method: &str, code: &str) {
        self.requests
            .lock()
            .push((method.to_string(), code.to_string()));
    }

    fn rate_limiter_wait(&self, method: &str, wait: Duration) {
        self.waits.lock().push((method.to_string(), wait));
    }
}

/// The host's client rate limiter: a shared bucket plus one bucket per guest.
#[derive(Debug)]
pub struct ClientRateLimiter {
    clock: SharedClock,
    shared: RequestBucket,
    guest_default: RateLimit,
    guests: Mutex<HashMap<String, Arc<RequestBucket>>>,
    metrics: Arc<dyn ClientMetrics>,
}

impl ClientRateLimiter {
    /// A limiter with `host` for the shared bucket and `per_guest` for each
    /// guest's bucket (created on a guest's first request).
    pub fn new(
        host: RateLimit,
        per_guest: RateLimit,
        clock: SharedClock,
        metrics: Arc<dyn ClientMetrics>,
    ) -> Arc<Self> {
        Arc::new(ClientRateLimiter {
            shared: RequestBucket::new(host, clock.clone()),
            clock,
            guest_default: per_guest,
            guests: Mutex::new(HashMap::new()),
            metrics,
        })
    }

    /// No limits at all, no metrics (tests, tools).
    pub fn unlimited(clock: SharedClock) -> Arc<Self> {
        Self::new(
            RateLimit::unlimited(),
            RateLimit::unlimited(),
            clock,
            Arc::new(NoopClientMetrics),
        )
    }

    /// Gives `guest` its own limit instead of the per-guest default; its
    /// bucket starts full.
    pub fn set_guest_limit(&self, guest: &str, limit: RateLimit) {
        self.guests.lock().insert(
            guest.to_string(),
            Arc::new(RequestBucket::new(limit, self.clock.clone())),
        );
    }

    /// The metrics hook.
    pub fn metrics(&self) -> &Arc<dyn ClientMetrics> {
        &self.metrics
    }

    fn guest_bucket(&self, guest: &str) -> Arc<RequestBucket> {
        let mut guests = self.guests.lock();
        if let Some(bucket) = guests.get(guest) {
            return Arc::clone(bucket);
        }
        let bucket = Arc::new(RequestBucket::new(self.guest_default, self.clock.clone()));
        guests.insert(guest.to_string(), Arc::clone(&bucket));
        bucket
    }

    /// Waits until a request of `method` may go out: the guest's bucket
    /// first (when `guest` is given), then the shared one. Reports and
    /// returns the total wait.
    pub async fn acquire(&self, guest: Option<&str>, method: &str) -> Duration {
        let start = self.clock.now();
        if let Some(guest) = guest {
            self.guest_bucket(guest).acquire().await;
        }
        self.shared.acquire().await;
        let wait = self.clock.now().saturating_duration_since(start);
        self.metrics.rate_limiter_wait(method, wait);
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    #[test]
    fn burst_then_qps_spacing() {
        let clock = FakeClock::new();
        let bucket = RequestBucket::new(RateLimit::new(5.0, 10), clock.shared());
        for _ in 0..10 {
            assert_eq!(bucket.reserve(), Duration::ZERO);
        }
        // Empty: each further request owes one more 200 ms token.
        assert_eq!(bucket.reserve(), ms(200));
        assert_eq!(bucket.reserve(), ms(400));
        clock.advance(ms(400));
        assert_eq!(bucket.reserve(), ms(200));
        // Refill is capped at the burst.
        clock.advance(Duration::from_secs(100));
        for _ in 0..10 {
            assert_eq!(bucket.reserve(), Duration::ZERO);
        }
        assert_eq!(bucket.reserve(), ms(200));
    }

    #[test]
    fn defaults_are_client_go_and_unlimited_never_waits() {
        assert_eq!(RateLimit::default(), RateLimit::new(5.0, 10));
        let clock = FakeClock::new();
        let bucket = RequestBucket::new(RateLimit::unlimited(), clock.shared());
        for _ in 0..1000 {
            assert_eq!(bucket.reserve(), Duration::ZERO);
        }
    }

    #[tokio::test]
    async fn acquire_sleeps_on_the_clock() {
        let clock = FakeClock::new();
        let bucket = Arc::new(RequestBucket::new(RateLimit::new(2.0, 1), clock.shared()));
        assert_eq!(bucket.acquire().await, Duration::ZERO);
        let task = tokio::spawn({
            let bucket = Arc::clone(&bucket);
            async move { bucket.acquire().await }
        });
        clock.wait_for_waiters(1).await;
        assert!(!task.is_finished());
        clock.advance(ms(500));
        assert_eq!(task.await.unwrap(), ms(500));
    }

    #[tokio::test]
    async fn guest_waits_for_its_bucket_and_the_shared_one() {
        let clock = FakeClock::new();
        let metrics = RecordingClientMetrics::new();
        let limiter = ClientRateLimiter::new(
            RateLimit::new(10.0, 3),
            RateLimit::new(1.0, 2),
            clock.shared(),
            metrics.clone(),
        );
        // Guest a: its burst of 2 passes at once (shared 3 -> 1 left).
        assert_eq!(limiter.acquire(Some("a"), "GET").await, Duration::ZERO);
        assert_eq!(limiter.acquire(Some("a"), "GET").await, Duration::ZERO);
        // Guest b has its own bucket; the shared one has one token left.
        assert_eq!(limiter.acquire(Some("b"), "POST").await, Duration::ZERO);
        // Now the shared bucket is empty: the host waits 100 ms.
        let host = tokio::spawn({
            let limiter = Arc::clone(&limiter);
            async move { limiter.acquire(None, "GET").await }
        });
        clock.wait_for_waiters(1).await;
        clock.advance(ms(100));
        assert_eq!(host.await.unwrap(), ms(100));
        // Guest a's own bucket is empty: 1 s at 1 qps (minus the 100 ms
        // already refilled), then the shared bucket has refilled meanwhile.
        let guest = tokio::spawn({
            let limiter = Arc::clone(&limiter);
            async move { limiter.acquire(Some("a"), "PUT").await }
        });
        clock.wait_for_waiters(1).await;
        clock.advance(ms(900));
        assert_eq!(guest.await.unwrap(), ms(900));

        let waits = metrics.waits();
        assert_eq!(
            waits,
            vec![
                ("GET".to_string(), Duration::ZERO),
                ("GET".to_string(), Duration::ZERO),
                ("POST".to_string(), Duration::ZERO),
                ("GET".to_string(), ms(100)),
                ("PUT".to_string(), ms(900)),
            ]
        );
    }

    #[tokio::test]
    async fn a_guest_specific_limit_replaces_the_default() {
        let clock = FakeClock::new();
        let limiter = ClientRateLimiter::new(
            RateLimit::unlimited(),
            RateLimit::new(1.0, 1),
            clock.shared(),
            Arc::new(NoopClientMetrics),
        );
        limiter.set_guest_limit("fast", RateLimit::new(100.0, 5));
        for _ in 0..5 {
            assert_eq!(limiter.acquire(Some("fast"), "GET").await, Duration::ZERO);
        }
        assert_eq!(limiter.acquire(Some("slow"), "GET").await, Duration::ZERO);
        let slow = tokio::spawn({
            let limiter = Arc::clone(&limiter);
            async move { limiter.acquire(Some("slow"), "GET").await }
        });
        clock.wait_for_waiters(1).await;
        clock.advance(Duration::from_secs(1));
        assert_eq!(slow.await.unwrap(), Duration::from_secs(1));
    }
}
