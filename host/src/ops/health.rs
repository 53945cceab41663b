//! Health and readiness, as the probes see them. Liveness fails when a
//! reflector has been unable to list or watch for longer than a threshold
//! (the host is stuck and a restart may help); readiness holds once every
//! guest's caches have synced.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::SharedClock;

/// A readiness check: true when ready.
pub type ReadinessCheck = Box<dyn Fn() -> bool + Send + Sync>;

/// The host's health.
pub struct Health {
    clock: SharedClock,
    /// Failure times are kept as nanoseconds since this instant.
    base: Instant,
    threshold: Duration,
    reflectors: Mutex<Vec<Arc<ReflectorHealth>>>,
    ready: Mutex<Option<ReadinessCheck>>,
}

/// One reflector's health: when it began failing, if it is failing.
pub struct ReflectorHealth {
    name: String,
    /// Nanoseconds since [`Health::base`] plus one when the current run of
    /// failures began; 0 while it works.
    failing_since: AtomicU64,
}

impl Health {
    /// Unhealthy when a reflector fails for longer than `threshold`; not
    /// ready until a readiness check is set and passes.
    pub fn new(clock: SharedClock, threshold: Duration) -> Arc<Health> {
        Arc::new(Health {
            base: clock.now(),
            clock,
            threshold,
            reflectors: Mutex::new(Vec::new()),
            ready: Mutex::new(None),
        })
    }

    /// Tracks a reflector called `name`; it starts healthy.
    pub fn reflector(&self, name: &str) -> Arc<ReflectorHealth> {
        let reflector = Arc::new(ReflectorHealth {
            name: name.to_string(),
            failing_since: AtomicU64::new(0),
        });
        self.reflectors.lock().push(Arc::clone(&reflector));
        reflector
    }

    /// Records a failure of `reflector` now; a run of failures keeps the
    /// time of its first.
    pub fn failed(&self, reflector: &ReflectorHealth) {
        let since = self.clock.now().saturating_duration_since(self.base);
        let stamp = u64::try_from(since.as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1);
        let _ = reflector.failing_since.compare_exchange(
            0,
            stamp,
            Ordering::Relaxed,
            Ordering::Relaxed,
        );
    }

    /// Records that `reflector` listed, opened a watch or saw an event.
    pub fn worked(&self, reflector: &ReflectorHealth) {
        if reflector.failing_since.load(Ordering::Relaxed) != 0 {
            reflector.failing_since.store(0, Ordering::Relaxed);
        }
    }

    /// `Ok` when no reflector has been failing for longer than the
    /// threshold; else the failing reflectors and for how long.
    pub fn liveness(&self) -> Result<(), String> {
        let now = self.clock.now().saturating_duration_since(self.base);
        let failing: Vec<String> = self
            .reflectors
            .lock()
            .iter()
            .filter_map(|reflector| {
                let stamp = reflector.failing_since.load(Ordering::Relaxed);
                let since = Duration::from_nanos(stamp.checked_sub(1)?);
                let failing_for = now.saturating_sub(since);
                (failing_for > self.threshold).then(|| {
                    format!(
                        "{}: unable to list or watch for {}s",
                        reflector.name,
                        failing_for.as_secs()
                    )
                })
            })
            .collect();
        if failing.is_empty() {
            Ok(())
        } else {
            Err(failing.join("\n"))
        }
    }

    /// Sets what readiness means (in the host: every guest's caches have
    /// synced).
    pub fn set_readiness(&self, check: ReadinessCheck) {
        *self.ready.lock() = Some(check);
    }

    /// `Ok` when the readiness check passes.
    pub fn readiness(&self) -> Result<(), String> {
        match &*self.ready.lock() {
            None => Err("starting".to_string()),
            Some(check) if check() => Ok(()),
            Some(_) => Err("caches have not synced".to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicBool;

    use super::*;
    use crate::clock::FakeClock;

    #[test]
    fn a_reflector_failing_past_the_threshold_is_unhealthy_until_it_works() {
        let clock = FakeClock::new();
        let health = Health::new(clock.shared(), Duration::from_secs(60));
        let pods = health.reflector("v1/Pod");
        let nodes = health.reflector("v1/Node");
        assert_eq!(health.liveness(), Ok(()));

        health.failed(&pods);
        clock.advance(Duration::from_secs(30));
        // A later failure of the same run does not restart the count.
        health.failed(&pods);
        clock.advance(Duration::from_secs(30));
        assert_eq!(health.liveness(), Ok(()), "60 s is not past the threshold");
        clock.advance(Duration::from_secs(1));
        let error = health.liveness().unwrap_err();
        assert!(
            error.contains("v1/Pod: unable to list or watch for 61s"),
            "{error}"
        );
        assert!(!error.contains("v1/Node"), "{error}");

        health.worked(&nodes);
        assert!(
            health.liveness().is_err(),
            "another reflector working changes nothing"
        );
        health.worked(&pods);
        assert_eq!(health.liveness(), Ok(()));

        // A new run of failures starts a new count.
        health.failed(&pods);
        clock.advance(Duration::from_secs(59));
        assert_eq!(health.liveness(), Ok(()));
    }

    #[test]
    fn readiness_follows_its_check() {
        let health = Health::new(FakeClock::new().shared(), Duration::from_secs(60));
        assert!(
            health.readiness().is_err(),
            "not ready before a check is set"
        );
        let synced = Arc::new(AtomicBool::new(false));
        let check = Arc::clone(&synced);
        health.set_readiness(Box::new(move || check.load(Ordering::Relaxed)));
        assert_eq!(
            health.readiness(),
            Err("caches have not synced".to_string())
        );
        synced.store(true, Ordering::Relaxed);
        assert_eq!(health.readiness(), Ok(()));
    }
}
