//! Fault injection and request recording for tests.
//!
//! The same [`Faults`] is driven in-process through the
//! [`DevServerHandle`](super::DevServerHandle) and over HTTP through the
//! token-protected `/recon-admin/*` endpoints. Admin requests are never
//! failed, delayed or logged.

use std::time::Duration;

use parking_lot::Mutex;

/// What the server should do to the next requests.
#[derive(Debug, Default)]
pub struct Faults {
    state: Mutex<State>,
}

#[derive(Debug, Default)]
struct State {
    fail_remaining: u64,
    fail_code: u16,
    latency: Duration,
    log: Vec<String>,
}

/// An injected failure for one request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InjectedFailure {
    /// 429, 500 or 503.
    pub code: u16,
}

impl Faults {
    /// Fail the next `count` API requests with `code` (429 gets `Retry-After: 1`).
    ///
    /// 429, 503 and 500 are served as such; anything else is treated as 500.
    pub fn fail_next(&self, count: u64, code: u16) {
        let mut s = self.state.lock();
        s.fail_remaining = count;
        s.fail_code = match code {
            429 | 503 => code,
            _ => 500,
        };
    }

    /// Delay every API request by `latency` before it is served.
    pub fn set_latency(&self, latency: Duration) {
        self.state.lock().latency = latency;
    }

    /// The configured latency.
    pub fn latency(&self) -> Duration {
        self.state.lock().latency
    }

    /// Record a request and decide whether it fails: returns the failure to
    /// inject, if any, consuming one from the budget.
    pub fn on_request(&self, line: String) -> Option<InjectedFailure> {
        let mut s = self.state.lock();
        s.log.push(line);
        if s.fail_remaining > 0 {
            s.fail_remaining -= 1;
            Some(InjectedFailure { code: s.fail_code })
        } else {
            None
        }
    }

    /// Every API request seen so far, as `METHOD /path?query`.
    pub fn request_log(&self) -> Vec<String> {
        self.state.lock().log.clone()
    }

    /// Forget the recorded requests.
    pub fn clear_request_log(&self) {
        self.state.lock().log.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_next_consumes_its_budget_and_logs_every_request() {
        let f = Faults::default();
        f.fail_next(2, 429);
        assert_eq!(
            f.on_request("GET /a".into()),
            Some(InjectedFailure { code: 429 })
        );
        assert_eq!(
            f.on_request("GET /b".into()),
            Some(InjectedFailure { code: 429 })
        );
        assert_eq!(f.on_request("GET /c".into()), None);
        f.fail_next(1, 503);
        assert_eq!(
            f.on_request("GET /d".into()),
            Some(InjectedFailure { code: 503 })
        );
        f.fail_next(1, 418);
        assert_eq!(
            f.on_request("GET /e".into()),
            Some(InjectedFailure { code: 500 })
        );
        assert_eq!(
            f.request_log(),
            ["GET /a", "GET /b", "GET /c", "GET /d", "GET /e"]
        );
        f.clear_request_log();
        assert!(f.request_log().is_empty());
    }
}
