//! The token bucket of `golang.org/x/time/rate` (`Limiter.Reserve`) on the
//! injectable clock: it starts full with `burst` tokens and refills at `qps`
//! tokens per second; every reservation takes one token, even one that is
//! only available later, and is told how long to wait until it is.
//!
//! One piece of arithmetic for both users: the workqueue's shared
//! [`BucketRateLimiter`](crate::workqueue::BucketRateLimiter) and the API
//! client's host and per-guest limits
//! ([`ClientRateLimiter`](crate::kube::ClientRateLimiter)). What an
//! unlimited rate or an empty burst means differs between them, so that is
//! theirs to decide; here the rate is finite and positive.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::SharedClock;

/// A token bucket with reservations (see the module documentation).
#[derive(Debug)]
pub struct TokenBucket {
    clock: SharedClock,
    qps: f64,
    burst: f64,
    state: Mutex<BucketState>,
}

#[derive(Debug)]
struct BucketState {
    /// May go negative: tokens owed by reservations still waiting.
    tokens: f64,
    last: Instant,
}

impl TokenBucket {
    /// A full bucket of `burst` tokens (at least 1) refilling at `qps`
    /// tokens per second, which must be finite and positive.
    pub fn new(qps: f64, burst: u32, clock: SharedClock) -> Self {
        debug_assert!(qps.is_finite() && qps > 0.0, "qps {qps}");
        let burst = f64::from(burst.max(1));
        TokenBucket {
            state: Mutex::new(BucketState {
                tokens: burst,
                last: clock.now(),
            }),
            clock,
            qps,
            burst,
        }
    }

    /// Takes one token and returns how long the caller must wait before
    /// using it: zero when one was available, else the time until the
    /// refill covers it, truncated to whole nanoseconds (as
    /// `durationFromTokens`).
    pub fn reserve(&self) -> Duration {
        let mut state = self.refilled();
        state.tokens -= 1.0;
        if state.tokens >= 0.0 {
            Duration::ZERO
        } else {
            Duration::from_nanos((1e9 * (-state.tokens / self.qps)) as u64)
        }
    }

    /// Takes one token if one is available now; never goes into debt.
    /// For limits that drop what is over the rate instead of delaying it.
    pub fn try_take(&self) -> bool {
        let mut state = self.refilled();
        if state.tokens >= 1.0 {
            state.tokens -= 1.0;
            true
        } else {
            false
        }
    }

    /// The state, refilled for the time since it was last touched
    /// (`advance()` of `x/time/rate`).
    fn refilled(&self) -> parking_lot::MutexGuard<'_, BucketState> {
        let now = self.clock.now();
        let mut state = self.state.lock();
        let elapsed = now.saturating_duration_since(state.last).as_secs_f64();
        state.tokens = (state.tokens + elapsed * self.qps).min(self.burst);
        state.last = now.max(state.last);
        state
    }

    /// Takes one token, waiting on the clock if needed; returns the wait.
    pub async fn acquire(&self) -> Duration {
        let wait = self.reserve();
        if !wait.is_zero() {
            self.clock.sleep(wait).await;
        }
        wait
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    const MS: Duration = Duration::from_millis(1);

    #[test]
    fn starts_full_refills_at_qps_and_caps_at_burst() {
        let clock = FakeClock::new();
        let bucket = TokenBucket::new(4.0, 2, clock.shared());
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), Duration::ZERO);
        // Empty: each reservation owes one more 250 ms token.
        assert_eq!(bucket.reserve(), 250 * MS);
        assert_eq!(bucket.reserve(), 500 * MS);
        clock.advance(500 * MS);
        assert_eq!(bucket.reserve(), 250 * MS);
        clock.advance(Duration::from_secs(60));
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), 250 * MS);
    }

    #[test]
    fn a_zero_burst_holds_one_token() {
        let clock = FakeClock::new();
        let bucket = TokenBucket::new(1.0, 0, clock.shared());
        assert_eq!(bucket.reserve(), Duration::ZERO);
        assert_eq!(bucket.reserve(), Duration::from_secs(1));
    }

    #[test]
    fn try_take_takes_only_what_is_there() {
        let clock = FakeClock::new();
        let bucket = TokenBucket::new(4.0, 2, clock.shared());
        assert!(bucket.try_take());
        assert!(bucket.try_take());
        assert!(!bucket.try_take(), "empty");
        assert!(!bucket.try_take(), "a refusal owes nothing");
        clock.advance(250 * MS);
        assert!(bucket.try_take(), "one token refilled");
        assert!(!bucket.try_take());
        clock.advance(Duration::from_secs(60));
        assert!(bucket.try_take());
        assert!(bucket.try_take());
        assert!(!bucket.try_take(), "capped at the burst");
    }

    #[tokio::test]
    async fn acquire_sleeps_on_the_clock() {
        let clock = FakeClock::new();
        let bucket = std::sync::Arc::new(TokenBucket::new(10.0, 1, clock.shared()));
        assert_eq!(bucket.acquire().await, Duration::ZERO);
        let task = tokio::spawn({
            let bucket = std::sync::Arc::clone(&bucket);
            async move { bucket.acquire().await }
        });
        clock.wait_for_waiters(1).await;
        assert!(!task.is_finished());
        clock.advance(100 * MS);
        assert_eq!(task.await.unwrap(), 100 * MS);
    }
}
