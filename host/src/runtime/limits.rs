//! What one guest may consume through its imports besides time, CPU and
//! linear memory: the size of a cache answer it is handed, the size of a
//! write body it sends, the shape of a key it queues, and the size and rate
//! of its log lines (log calls, stdout and stderr). [`Limits`] holds the
//! operator's settings; each guest's [`GuestLimiter`], shared by all its
//! instances, applies them and reports every refusal to the
//! [`LimitObserver`] (the host's metrics).
//!
//! Sizes are checked before anything is copied: a cache answer is measured
//! on the cached objects, so a guest that asks for too much costs the host
//! a sum, not a copy.

use std::borrow::Cow;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use recon_api_semantics::names::key_problem;

use super::services::GuestError;
use crate::clock::SharedClock;
use crate::token_bucket::TokenBucket;

/// kube-apiserver's limit on a request body (`MaxRequestBodyBytes`, 3 MiB):
/// a larger write would only be refused by the server.
pub const API_SERVER_REQUEST_LIMIT: usize = 3 << 20;

/// The operator's limits on every guest (each guest has them all).
#[derive(Debug, Clone, PartialEq)]
pub struct Limits {
    /// The largest cache answer (`get`, `list`, `list-meta`, `by-index`)
    /// handed to a guest, in bytes of JSON and metadata
    /// (`--max-read-size`).
    pub max_read_size: usize,
    /// The largest write body a guest may send (`--max-request-body`).
    pub max_request_body: usize,
    /// The longest log line kept; the rest of a longer one is cut
    /// (`--max-log-line`).
    pub max_log_line: usize,
    /// Log lines per second a guest may write, all its instances together;
    /// more are dropped and counted (`--guest-log-rate`).
    pub log_lines_per_second: f64,
    /// Log lines a guest may write at once after a quiet spell.
    pub log_burst: u32,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_read_size: 16 << 20,
            max_request_body: API_SERVER_REQUEST_LIMIT,
            max_log_line: 4 << 10,
            log_lines_per_second: 100.0,
            log_burst: 1000,
        }
    }
}

/// A limit that refused something a guest did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Limit {
    /// A cache answer over `max_read_size`.
    ReadSize,
    /// A write body over `max_request_body`.
    RequestBody,
    /// A key that is not a Kubernetes name and namespace.
    Key,
    /// An enqueue into a full queue.
    QueueDepth,
    /// A log line cut at `max_log_line`.
    LogLine,
    /// A log line dropped over the log rate.
    LogRate,
    /// A read, write or event the guest's grant does not allow.
    Permission,
}

impl Limit {
    /// Every limit, in a stable order.
    pub const ALL: [Limit; 7] = [
        Limit::ReadSize,
        Limit::RequestBody,
        Limit::Key,
        Limit::QueueDepth,
        Limit::LogLine,
        Limit::LogRate,
        Limit::Permission,
    ];

    /// Its name in metrics and messages.
    pub fn as_str(self) -> &'static str {
        match self {
            Limit::ReadSize => "read-size",
            Limit::RequestBody => "request-body",
            Limit::Key => "key",
            Limit::QueueDepth => "queue-depth",
            Limit::LogLine => "log-line",
            Limit::LogRate => "log-rate",
            Limit::Permission => "permission",
        }
    }
}

/// Sees every refusal (the host's metrics count them per guest and limit).
pub trait LimitObserver: Send + Sync {
    /// `limit` refused something `guest` did.
    fn exceeded(&self, guest: &str, limit: Limit);
}

/// Whether a log line may be written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LogAdmission {
    /// Write it; `dropped` lines were dropped since the last one written.
    Write {
        /// Lines dropped just before this one.
        dropped: u64,
    },
    /// Drop it: the guest is over its log rate.
    Drop,
}

/// One guest's limits, shared by all its instances.
pub struct GuestLimiter {
    guest: Arc<str>,
    limits: Limits,
    log: TokenBucket,
    /// Lines dropped since the last line written.
    dropped: AtomicU64,
    observer: Option<Arc<dyn LimitObserver>>,
}

impl std::fmt::Debug for GuestLimiter {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GuestLimiter")
            .field("guest", &self.guest)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

impl GuestLimiter {
    /// The limiter of `guest`, its log rate on `clock`.
    pub fn new(
        guest: Arc<str>,
        limits: Limits,
        clock: SharedClock,
        observer: Option<Arc<dyn LimitObserver>>,
    ) -> GuestLimiter {
        let rate = if limits.log_lines_per_second.is_finite() && limits.log_lines_per_second > 0.0 {
            limits.log_lines_per_second
        } else {
            f64::MIN_POSITIVE
        };
        GuestLimiter {
            log: TokenBucket::new(rate, limits.log_burst, clock),
            guest,
            limits,
            dropped: AtomicU64::new(0),
            observer,
        }
    }

    /// The guest's name.
    pub fn guest(&self) -> &str {
        &self.guest
    }

    /// The limits.
    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    /// Reports that `limit` refused something.
    pub fn exceeded(&self, limit: Limit) {
        if let Some(observer) = &self.observer {
            observer.exceeded(&self.guest, limit);
        }
    }

    /// Refuses a cache answer (`what`, e.g. `list of v1/ConfigMap`) of
    /// `bytes` over the read limit.
    pub fn check_read(&self, what: &dyn std::fmt::Display, bytes: usize) -> Result<(), GuestError> {
        if bytes <= self.limits.max_read_size {
            return Ok(());
        }
        self.exceeded(Limit::ReadSize);
        Err(GuestError::TooLarge(format!(
            "{what}: the answer is {bytes} bytes, over the read limit of {} bytes (--max-read-size); narrow it with a namespace or a label selector, or read metadata with list-meta",
            self.limits.max_read_size
        )))
    }

    /// Refuses a write body of `bytes` over the request limit.
    pub fn check_body(&self, bytes: usize) -> Result<(), GuestError> {
        if bytes <= self.limits.max_request_body {
            return Ok(());
        }
        self.exceeded(Limit::RequestBody);
        Err(GuestError::TooLarge(format!(
            "the request body is {bytes} bytes, over the limit of {} bytes (--max-request-body)",
            self.limits.max_request_body
        )))
    }

    /// Refuses a key that is not a Kubernetes namespace (a DNS label, or
    /// none) and name (a path segment of at most 253 bytes).
    pub fn check_key(&self, namespace: Option<&str>, name: &str) -> Result<(), GuestError> {
        match key_problem(namespace, name) {
            None => Ok(()),
            Some(problem) => {
                self.exceeded(Limit::Key);
                Err(GuestError::Invalid(format!("invalid key: {problem}")))
            }
        }
    }

    /// Whether a log line may be written now, within the log rate; a
    /// dropped line is counted.
    pub fn admit_log_line(&self) -> LogAdmission {
        if self.log.try_take() {
            LogAdmission::Write {
                dropped: self.dropped.swap(0, Ordering::Relaxed),
            }
        } else {
            self.dropped.fetch_add(1, Ordering::Relaxed);
            self.exceeded(Limit::LogRate);
            LogAdmission::Drop
        }
    }

    /// `line` cut to the longest log line, saying how much was cut; a cut
    /// is counted.
    pub fn cut<'a>(&self, line: &'a str) -> Cow<'a, str> {
        let max = self.limits.max_log_line;
        if line.len() <= max {
            return Cow::Borrowed(line);
        }
        self.exceeded(Limit::LogLine);
        let kept = &line[..line.floor_char_boundary(max)];
        Cow::Owned(format!(
            "{kept}… [{} bytes cut, over --max-log-line]",
            line.len() - kept.len()
        ))
    }

    /// Reports a line of output cut at the longest log line; the rest of
    /// it is never read.
    pub fn cut_unseen(&self, line: &str) -> String {
        self.exceeded(Limit::LogLine);
        let max = self.limits.max_log_line;
        format!(
            "{}… [cut, over --max-log-line]",
            &line[..line.floor_char_boundary(max)]
        )
    }
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use parking_lot::Mutex;

    use super::*;
    use crate::clock::FakeClock;

    #[derive(Default)]
    struct Seen(Mutex<Vec<(String, Limit)>>);

    impl LimitObserver for Seen {
        fn exceeded(&self, guest: &str, limit: Limit) {
            self.0.lock().push((guest.to_string(), limit));
        }
    }

    fn limiter(limits: Limits) -> (FakeClock, Arc<Seen>, GuestLimiter) {
        let clock = FakeClock::new();
        let seen = Arc::new(Seen::default());
        let limiter = GuestLimiter::new(
            Arc::from("g"),
            limits,
            clock.shared(),
            Some(Arc::clone(&seen) as Arc<dyn LimitObserver>),
        );
        (clock, seen, limiter)
    }

    fn seen(seen: &Seen) -> Vec<Limit> {
        seen.0.lock().iter().map(|(_, limit)| *limit).collect()
    }

    #[test]
    fn reads_and_bodies_over_their_limits_are_too_large_and_counted() {
        let (_, observed, limiter) = limiter(Limits {
            max_read_size: 100,
            max_request_body: 10,
            ..Limits::default()
        });
        assert_eq!(limiter.check_read(&"list of v1/ConfigMap", 100), Ok(()));
        let Err(GuestError::TooLarge(message)) = limiter.check_read(&"list of v1/ConfigMap", 101)
        else {
            panic!("expected too-large");
        };
        assert!(
            message.starts_with("list of v1/ConfigMap: the answer is 101 bytes, over the read limit of 100 bytes (--max-read-size)"),
            "{message}"
        );
        assert_eq!(limiter.check_body(10), Ok(()));
        assert!(
            matches!(limiter.check_body(11), Err(GuestError::TooLarge(m)) if m.contains("11 bytes, over the limit of 10"))
        );
        assert_eq!(seen(&observed), [Limit::ReadSize, Limit::RequestBody]);
        assert_eq!(observed.0.lock()[0].0, "g");
    }

    #[test]
    fn keys_must_be_kubernetes_names() {
        let (_, observed, limiter) = limiter(Limits::default());
        let ok = |ns: Option<&str>, name: &str| limiter.check_key(ns, name).is_ok();
        assert!(ok(Some("default"), "web"));
        assert!(ok(None, "cluster-scoped"));
        assert!(ok(Some(""), "empty-namespace-means-none"));
        assert!(
            ok(Some("a"), "system:controller:x"),
            "RBAC names have colons"
        );
        assert!(ok(Some("a"), &"n".repeat(253)));
        assert!(ok(Some(&"n".repeat(63)), "x"));
        assert_eq!(seen(&observed), []);

        let error = |ns: Option<&str>, name: &str| match limiter.check_key(ns, name) {
            Err(GuestError::Invalid(message)) => message,
            other => panic!("{ns:?}/{name}: {other:?}"),
        };
        assert!(error(Some("a"), &"n".repeat(254)).contains("longer than 253 bytes"));
        let long = error(Some("a"), &"n".repeat(1 << 20));
        assert!(long.len() < 300, "a long name is not echoed: {long}");
        assert!(error(Some(&"n".repeat(64)), "x").contains("is not a DNS label"));
        assert!(error(Some("Upper"), "x").contains("is not a DNS label"));
        assert!(error(Some("-a"), "x").contains("is not a DNS label"));
        assert!(error(Some("a"), "").contains("is empty"));
        assert!(error(Some("a"), "..").contains("'.' or '..'"));
        assert!(error(Some("a"), "a/b").contains("'/' or '%'"));
        assert!(error(Some("a"), "a\nb").contains("control characters"));
        assert_eq!(seen(&observed).len(), 9);
        assert!(seen(&observed).iter().all(|l| *l == Limit::Key));
    }

    #[test]
    fn log_lines_over_the_rate_are_dropped_counted_and_reported_once_admitted() {
        let (clock, observed, limiter) = limiter(Limits {
            log_lines_per_second: 10.0,
            log_burst: 3,
            ..Limits::default()
        });
        for _ in 0..3 {
            assert_eq!(limiter.admit_log_line(), LogAdmission::Write { dropped: 0 });
        }
        for _ in 0..5 {
            assert_eq!(limiter.admit_log_line(), LogAdmission::Drop);
        }
        assert_eq!(seen(&observed), [Limit::LogRate; 5]);
        clock.advance(Duration::from_millis(100));
        assert_eq!(
            limiter.admit_log_line(),
            LogAdmission::Write { dropped: 5 },
            "the next line written says how many were dropped"
        );
        assert_eq!(limiter.admit_log_line(), LogAdmission::Drop);
    }

    #[test]
    fn long_lines_are_cut_on_a_character_boundary() {
        let (_, observed, limiter) = limiter(Limits {
            max_log_line: 8,
            ..Limits::default()
        });
        assert_eq!(limiter.cut("12345678"), "12345678");
        assert_eq!(seen(&observed), []);
        // 'é' is two bytes: byte 8 falls inside the fifth.
        let cut = limiter.cut("aaaéééé");
        assert_eq!(cut, "aaaéé… [4 bytes cut, over --max-log-line]");
        let huge = "x".repeat(30 << 20);
        assert!(limiter.cut(&huge).len() < 100);
        assert_eq!(seen(&observed), [Limit::LogLine, Limit::LogLine]);
    }
}
