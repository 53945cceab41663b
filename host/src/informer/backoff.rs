//! The reflector's exponential backoff manager (REF-04, REF-05): client-go's
//! `exponentialBackoffManagerImpl` over `wait.Backoff`, with jitter from a
//! seedable RNG and time from the injectable clock.

use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::SharedClock;

/// Parameters of an exponential backoff.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct BackoffConfig {
    /// First wait.
    pub initial: Duration,
    /// Largest nominal wait.
    pub cap: Duration,
    /// A backoff requested more than this long after the previous one starts
    /// again from `initial`.
    pub reset_after: Duration,
    /// Growth factor per step.
    pub factor: f64,
    /// Each wait `d` is stretched to a uniform value in `[d, d + jitter·d)`.
    pub jitter: f64,
}

impl Default for BackoffConfig {
    /// client-go's reflector defaults: 800 ms → 30 s, reset after 2 min,
    /// factor 2, jitter 1 (REF-04).
    fn default() -> Self {
        BackoffConfig {
            initial: Duration::from_millis(800),
            cap: Duration::from_secs(30),
            reset_after: Duration::from_secs(120),
            factor: 2.0,
            jitter: 1.0,
        }
    }
}

/// Hands out successive waits of an exponential backoff.
#[derive(Debug)]
pub struct BackoffManager {
    config: BackoffConfig,
    clock: SharedClock,
    state: Mutex<BackoffState>,
}

#[derive(Debug)]
struct BackoffState {
    /// The nominal wait of the next step.
    next: Duration,
    last_backoff_start: Instant,
    rng: fastrand::Rng,
}

impl BackoffManager {
    /// A manager with `config`, reading time from `clock` and drawing jitter
    /// from an RNG seeded with `seed`.
    pub fn new(config: BackoffConfig, clock: SharedClock, seed: u64) -> Self {
        let now = clock.now();
        BackoffManager {
            config,
            clock,
            state: Mutex::new(BackoffState {
                next: config.initial,
                last_backoff_start: now,
                rng: fastrand::Rng::with_seed(seed),
            }),
        }
    }

    /// Starts again from the initial wait: what was failing works again.
    pub fn reset(&self) {
        self.state.lock().next = self.config.initial;
    }

    /// The next wait. Resets to the initial wait when the previous backoff
    /// started more than `reset_after` ago.
    pub fn next_delay(&self) -> Duration {
        let now = self.clock.now();
        let mut state = self.state.lock();
        if now.saturating_duration_since(state.last_backoff_start) > self.config.reset_after {
            state.next = self.config.initial;
        }
        state.last_backoff_start = now;
        let nominal = state.next;
        let grown = nominal.mul_f64(self.config.factor);
        state.next = grown.min(self.config.cap);
        if self.config.jitter > 0.0 {
            let stretch = state.rng.f64() * self.config.jitter;
            nominal + nominal.mul_f64(stretch)
        } else {
            nominal
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    fn without_jitter() -> BackoffConfig {
        BackoffConfig {
            jitter: 0.0,
            ..BackoffConfig::default()
        }
    }

    #[test]
    fn ref_04_nominal_sequence_doubles_from_800ms_to_the_30s_cap() {
        let clock = FakeClock::new();
        let backoff = BackoffManager::new(without_jitter(), clock.shared(), 1);
        let waits: Vec<f64> = (0..9)
            .map(|_| {
                let d = backoff.next_delay();
                clock.advance(d);
                d.as_secs_f64()
            })
            .collect();
        assert_eq!(waits, [0.8, 1.6, 3.2, 6.4, 12.8, 25.6, 30.0, 30.0, 30.0]);
    }

    #[test]
    fn ref_04_jitter_stretches_each_wait_into_d_to_2d() {
        let clock = FakeClock::new();
        let backoff = BackoffManager::new(BackoffConfig::default(), clock.shared(), 7);
        let mut nominal = Duration::from_millis(800);
        for _ in 0..40 {
            let d = backoff.next_delay();
            assert!(d >= nominal && d < nominal * 2, "{d:?} vs {nominal:?}");
            clock.advance(Duration::from_secs(1));
            nominal = (nominal * 2).min(Duration::from_secs(30));
        }
    }

    #[test]
    fn ref_04_resets_to_initial_after_two_quiet_minutes() {
        let clock = FakeClock::new();
        let backoff = BackoffManager::new(without_jitter(), clock.shared(), 1);
        for _ in 0..5 {
            backoff.next_delay();
        }
        assert_eq!(backoff.next_delay(), Duration::from_secs_f64(25.6));
        clock.advance(Duration::from_secs(120));
        assert_eq!(
            backoff.next_delay(),
            Duration::from_secs(30),
            "exactly 2 min is not more than the reset period"
        );
        clock.advance(Duration::from_secs(121));
        assert_eq!(backoff.next_delay(), Duration::from_millis(800));
    }

    #[test]
    fn ref_05_same_seed_gives_same_jittered_sequence() {
        let clock = FakeClock::new();
        let a = BackoffManager::new(BackoffConfig::default(), clock.shared(), 42);
        let b = BackoffManager::new(BackoffConfig::default(), clock.shared(), 42);
        for _ in 0..10 {
            assert_eq!(a.next_delay(), b.next_delay());
        }
    }
}
