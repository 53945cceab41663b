//! Time sources. Every component that reads the time or waits for it (backoff,
//! watch-timeout randomisation, resync timers, the delaying queue, token
//! buckets, metrics tickers) takes a [`SharedClock`], so tests drive time with
//! a `FakeClock` (feature `testing`) instead of sleeping (spec HOST-01, REF-07).

use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A future that completes when a clock reaches a deadline.
pub type Sleep = Pin<Box<dyn Future<Output = ()> + Send + 'static>>;

/// A clock shared by the components that use it.
pub type SharedClock = Arc<dyn Clock>;

/// A monotonic time source that can also wait.
pub trait Clock: Send + Sync + fmt::Debug + 'static {
    /// The current instant.
    fn now(&self) -> Instant;

    /// A future that completes once `now() >= deadline`.
    fn sleep_until(&self, deadline: Instant) -> Sleep;

    /// A future that completes once `duration` has passed.
    fn sleep(&self, duration: Duration) -> Sleep {
        self.sleep_until(self.now() + duration)
    }
}

/// The real clock: `Instant::now` and tokio timers.
#[derive(Debug, Default, Clone, Copy)]
pub struct SystemClock;

impl SystemClock {
    /// A shared handle to the real clock.
    pub fn shared() -> SharedClock {
        Arc::new(SystemClock)
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Instant {
        Instant::now()
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        Box::pin(tokio::time::sleep_until(deadline.into()))
    }
}

#[cfg(any(test, feature = "testing"))]
mod fake;
#[cfg(any(test, feature = "testing"))]
pub use fake::FakeClock;

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn fake_sleep_wakes_only_when_advanced_past_deadline() {
        let clock = FakeClock::new();
        let shared = clock.shared();
        let start = shared.now();
        let task = tokio::spawn({
            let shared = Arc::clone(&shared);
            async move {
                shared.sleep(Duration::from_secs(10)).await;
                shared.now()
            }
        });
        clock.wait_for_waiters(1).await;
        clock.advance(Duration::from_secs(9));
        tokio::task::yield_now().await;
        assert!(!task.is_finished());
        assert_eq!(clock.waiters(), 1);
        clock.advance(Duration::from_secs(1));
        let woke_at = task.await.unwrap();
        assert_eq!(woke_at - start, Duration::from_secs(10));
        assert_eq!(clock.waiters(), 0);
    }

    #[tokio::test]
    async fn dropped_sleep_deregisters_and_next_deadline_is_earliest() {
        let clock = FakeClock::new();
        let shared = clock.shared();
        let start = shared.now();
        let far = tokio::spawn(shared.sleep(Duration::from_secs(30)));
        let near = tokio::spawn(shared.sleep(Duration::from_secs(5)));
        clock.wait_for_waiters(2).await;
        assert_eq!(clock.next_deadline(), Some(start + Duration::from_secs(5)));
        far.abort();
        let _ = far.await;
        assert_eq!(clock.waiters(), 1);
        assert_eq!(
            clock.advance_to_next_deadline(),
            Some(start + Duration::from_secs(5))
        );
        near.await.unwrap();
        assert_eq!(clock.next_deadline(), None);
    }

    #[tokio::test]
    async fn sleep_with_past_deadline_is_ready_at_once() {
        let clock = FakeClock::new();
        let shared = clock.shared();
        clock.advance(Duration::from_secs(1));
        shared
            .sleep_until(shared.now() - Duration::from_secs(1))
            .await;
        shared.sleep(Duration::ZERO).await;
        assert_eq!(clock.waiters(), 0);
    }
}
