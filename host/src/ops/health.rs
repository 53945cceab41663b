//! Health and readiness, as the probes see them, and the state of each
//! guest.
//!
//! Liveness fails only for a host-wide fault: a reflector that has been
//! unable to reach the API server at all (no answer: the connection
//! refused, reset or timed out) for longer than a threshold — a restart
//! may help. A reflector the server answers with a refusal (a kind it does
//! not serve, forbidden, a malformed answer) never fails liveness: a
//! restart would not help, and it would take every healthy guest down with
//! it. Such a reflector puts the guests that read it in trouble instead.
//!
//! Each guest is `starting` (its caches have not synced), `running`,
//! `degraded` (an informer it reads has been failing for longer than the
//! threshold, or [`FAULT_RUN`] reconciles in a row trapped, timed out or
//! ran out of memory) or `rejected` (it could not be loaded or wired).
//! Readiness holds once no guest is `starting`: a guest in trouble does not
//! hold the others back, and says why in `/readyz?verbose`.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::Mutex;

use crate::clock::SharedClock;
use crate::informer::LwError;

/// Reconciles in a row that must fault for a guest to be degraded.
pub const FAULT_RUN: u32 = 5;

/// The longest error kept for a report.
const MAX_REASON: usize = 512;

/// A readiness check of one guest: true once its caches have synced.
pub type SyncedCheck = Box<dyn Fn() -> bool + Send + Sync>;

/// The host's health and its guests' states.
pub struct Health {
    clock: SharedClock,
    /// Failure times are kept as nanoseconds since this instant.
    base: Instant,
    threshold: Duration,
    reflectors: Mutex<Vec<Arc<ReflectorHealth>>>,
    guests: Mutex<Vec<GuestHealth>>,
    /// Set once the guests are registered: until then the host is starting.
    guests_known: AtomicBool,
}

/// One reflector's health: when it began failing, if it is failing, and
/// how it last failed.
pub struct ReflectorHealth {
    name: String,
    /// Nanoseconds since [`Health::base`] plus one when the current run of
    /// failures began; 0 while it works.
    failing_since: AtomicU64,
    /// Whether the last failure had no answer from the server.
    unreachable: AtomicBool,
    last_error: Mutex<String>,
}

/// Where a guest stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GuestState {
    /// Its caches have not synced yet.
    Starting,
    /// Synced and reconciling (or waiting for leadership).
    Running,
    /// In trouble: an informer it reads keeps failing, or its reconciles
    /// keep faulting.
    Degraded,
    /// Not loaded or not wired.
    Rejected,
}

impl GuestState {
    /// Every state, in a stable order.
    pub const ALL: [GuestState; 4] = [
        GuestState::Starting,
        GuestState::Running,
        GuestState::Degraded,
        GuestState::Rejected,
    ];

    /// Its name in metrics and reports.
    pub fn as_str(self) -> &'static str {
        match self {
            GuestState::Starting => "starting",
            GuestState::Running => "running",
            GuestState::Degraded => "degraded",
            GuestState::Rejected => "rejected",
        }
    }
}

/// A guest's state and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GuestReport {
    /// The guest.
    pub name: String,
    /// Its state.
    pub state: GuestState,
    /// Why it is not running; empty when it is.
    pub reason: String,
}

struct GuestHealth {
    name: String,
    kind: GuestKind,
}

enum GuestKind {
    Rejected(String),
    Wired {
        reflectors: Vec<Arc<ReflectorHealth>>,
        synced: SyncedCheck,
        faults: Arc<FaultRun>,
    },
}

/// A guest's run of faulted reconciles, recorded after each reconcile
/// without a lookup: the metrics hold it per guest.
#[derive(Default)]
pub struct FaultRun {
    /// Reconciles in a row that faulted.
    faults: AtomicU32,
    last_fault: Mutex<String>,
}

impl FaultRun {
    /// Records a finished reconcile: `fault` says how it faulted (trapped,
    /// timed out, out of memory), `None` when it did not.
    pub fn reconciled(&self, fault: Option<&dyn std::fmt::Display>) {
        match fault {
            Some(fault) => {
                self.faults.fetch_add(1, Ordering::Relaxed);
                *self.last_fault.lock() = shorten(&fault.to_string());
            }
            None => self.faults.store(0, Ordering::Relaxed),
        }
    }
}

fn shorten(text: &str) -> String {
    text[..text.floor_char_boundary(MAX_REASON)].to_string()
}

impl Health {
    /// A liveness threshold of `threshold`; not ready until the guests are
    /// registered ([`Health::guests_registered`]) and have synced.
    pub fn new(clock: SharedClock, threshold: Duration) -> Arc<Health> {
        Arc::new(Health {
            base: clock.now(),
            clock,
            threshold,
            reflectors: Mutex::new(Vec::new()),
            guests: Mutex::new(Vec::new()),
            guests_known: AtomicBool::new(false),
        })
    }

    /// Tracks the reflector called `name`; it starts healthy.
    pub fn reflector(&self, name: &str) -> Arc<ReflectorHealth> {
        let mut reflectors = self.reflectors.lock();
        if let Some(known) = reflectors.iter().find(|r| r.name == name) {
            return Arc::clone(known);
        }
        let reflector = Arc::new(ReflectorHealth {
            name: name.to_string(),
            failing_since: AtomicU64::new(0),
            unreachable: AtomicBool::new(false),
            last_error: Mutex::new(String::new()),
        });
        reflectors.push(Arc::clone(&reflector));
        reflector
    }

    /// Records that `reflector` failed now with `error`; a run of failures
    /// keeps the time of its first.
    pub fn failed(&self, reflector: &ReflectorHealth, error: &LwError) {
        let since = self.clock.now().saturating_duration_since(self.base);
        let stamp = u64::try_from(since.as_nanos())
            .unwrap_or(u64::MAX - 1)
            .saturating_add(1);
        let first = reflector
            .failing_since
            .compare_exchange(0, stamp, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        reflector
            .unreachable
            .store(error.is_unreachable(), Ordering::Relaxed);
        *reflector.last_error.lock() = shorten(&error.to_string());
        if first {
            tracing::warn!(
                informer = %reflector.name,
                "the informer cannot list/watch: {error}; it retries"
            );
        }
    }

    /// Records that `reflector` listed, opened a watch or saw an event.
    pub fn worked(&self, reflector: &ReflectorHealth) {
        if reflector.failing_since.load(Ordering::Relaxed) != 0
            && reflector.failing_since.swap(0, Ordering::Relaxed) != 0
        {
            tracing::info!(informer = %reflector.name, "the informer lists/watches again");
        }
    }

    /// How long `reflector` has been failing, if it is.
    fn failing_for(&self, reflector: &ReflectorHealth) -> Option<Duration> {
        let stamp = reflector.failing_since.load(Ordering::Relaxed);
        let since = Duration::from_nanos(stamp.checked_sub(1)?);
        let now = self.clock.now().saturating_duration_since(self.base);
        Some(now.saturating_sub(since))
    }

    /// How long `reflector` has been failing, when longer than the
    /// threshold.
    fn failing_too_long(&self, reflector: &ReflectorHealth) -> Option<Duration> {
        self.failing_for(reflector)
            .filter(|failing_for| *failing_for > self.threshold)
    }

    /// `Ok` unless a reflector has been unable to reach the API server for
    /// longer than the threshold; else those reflectors, for how long and
    /// why.
    pub fn liveness(&self) -> Result<(), String> {
        let failing: Vec<String> = self
            .reflectors
            .lock()
            .iter()
            .filter(|reflector| reflector.unreachable.load(Ordering::Relaxed))
            .filter_map(|reflector| {
                let failing_for = self.failing_too_long(reflector)?;
                Some(format!(
                    "{}: unable to reach the API server for {}s: {}",
                    reflector.name,
                    failing_for.as_secs(),
                    reflector.last_error.lock()
                ))
            })
            .collect();
        if failing.is_empty() {
            Ok(())
        } else {
            Err(failing.join("\n"))
        }
    }

    /// Registers a wired guest reading the informers named `informers`
    /// (whose reflectors report here); `synced` tells when its caches have
    /// synced.
    pub fn guest(&self, name: &str, informers: &[String], synced: SyncedCheck) {
        let reflectors = informers.iter().map(|n| self.reflector(n)).collect();
        self.guests.lock().push(GuestHealth {
            name: name.to_string(),
            kind: GuestKind::Wired {
                reflectors,
                synced,
                faults: Arc::default(),
            },
        });
    }

    /// The wired guest `name` now reads `informers` (a new version of it
    /// was wired in).
    pub fn guest_informers(&self, name: &str, informers: &[String]) {
        let fresh: Vec<Arc<ReflectorHealth>> =
            informers.iter().map(|n| self.reflector(n)).collect();
        let mut guests = self.guests.lock();
        if let Some(GuestKind::Wired { reflectors, .. }) = guests
            .iter_mut()
            .find(|g| g.name == name)
            .map(|g| &mut g.kind)
        {
            *reflectors = fresh;
        }
    }

    /// Registers a guest that could not be loaded or wired, and why.
    pub fn guest_rejected(&self, name: &str, reason: &str) {
        self.guests.lock().push(GuestHealth {
            name: name.to_string(),
            kind: GuestKind::Rejected(shorten(reason)),
        });
    }

    /// Every guest is registered: readiness now follows them.
    pub fn guests_registered(&self) {
        self.guests_known.store(true, Ordering::Relaxed);
    }

    /// The fault run of the wired guest `guest`, if it is registered.
    pub fn fault_run(&self, guest: &str) -> Option<Arc<FaultRun>> {
        self.guests.lock().iter().find_map(|g| match &g.kind {
            GuestKind::Wired { faults, .. } if g.name == guest => Some(Arc::clone(faults)),
            _ => None,
        })
    }

    /// Every guest's state, in the order registered.
    pub fn guests(&self) -> Vec<GuestReport> {
        self.guests
            .lock()
            .iter()
            .map(|guest| {
                let (state, reason) = self.state(&guest.kind);
                GuestReport {
                    name: guest.name.clone(),
                    state,
                    reason,
                }
            })
            .collect()
    }

    fn state(&self, guest: &GuestKind) -> (GuestState, String) {
        let (reflectors, synced, faults) = match guest {
            GuestKind::Rejected(reason) => return (GuestState::Rejected, reason.clone()),
            GuestKind::Wired {
                reflectors,
                synced,
                faults,
            } => (reflectors, synced, faults),
        };
        let failing: Vec<String> = reflectors
            .iter()
            .filter_map(|reflector| {
                let failing_for = self.failing_too_long(reflector)?;
                Some(format!(
                    "informer {} failing for {}s: {}",
                    reflector.name,
                    failing_for.as_secs(),
                    reflector.last_error.lock()
                ))
            })
            .collect();
        if !failing.is_empty() {
            return (GuestState::Degraded, failing.join("; "));
        }
        let run = faults.faults.load(Ordering::Relaxed);
        if run >= FAULT_RUN {
            return (
                GuestState::Degraded,
                format!(
                    "{run} reconciles in a row faulted; the last: {}",
                    faults.last_fault.lock()
                ),
            );
        }
        if synced() {
            (GuestState::Running, String::new())
        } else {
            (GuestState::Starting, "caches have not synced".to_string())
        }
    }

    /// `Ok` once the guests are registered and none is starting (a guest
    /// in trouble does not hold the others back); else which are starting.
    pub fn readiness(&self) -> Result<(), String> {
        if !self.guests_known.load(Ordering::Relaxed) {
            return Err("starting".to_string());
        }
        let starting: Vec<String> = self
            .guests()
            .into_iter()
            .filter(|g| g.state == GuestState::Starting)
            .map(|g| format!("guest {}: {}", g.name, g.reason))
            .collect();
        if starting.is_empty() {
            Ok(())
        } else {
            Err(starting.join("\n"))
        }
    }

    /// `/readyz?verbose`: one line per guest, `[+]` when it does not hold
    /// readiness back, `[-]` when it does; one line per informer failing to
    /// list/watch, from its first failure, marked `[!]` (it does not hold
    /// readiness back); then the verdict.
    pub fn readiness_report(&self) -> (bool, String) {
        let ready = self.readiness().is_ok();
        let mut text = String::new();
        if !self.guests_known.load(Ordering::Relaxed) {
            text.push_str("[-]guests starting\n");
        }
        for reflector in self.reflectors.lock().iter() {
            if let Some(failing_for) = self.failing_for(reflector) {
                text.push_str(&format!(
                    "[!]informer {} failing for {}s: {}\n",
                    reflector.name,
                    failing_for.as_secs(),
                    reflector.last_error.lock()
                ));
            }
        }
        for guest in self.guests() {
            let mark = if guest.state == GuestState::Starting {
                '-'
            } else {
                '+'
            };
            text.push_str(&format!(
                "[{mark}]guest {} {}",
                guest.name,
                guest.state.as_str()
            ));
            if !guest.reason.is_empty() {
                text.push_str(": ");
                text.push_str(&guest.reason);
            }
            text.push('\n');
        }
        text.push_str(if ready {
            "readyz check passed\n"
        } else {
            "readyz check failed\n"
        });
        (ready, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::FakeClock;

    fn refused() -> LwError {
        LwError::other("the server could not find the requested resource (404 NotFound)")
    }

    fn unreachable() -> LwError {
        LwError::connection_refused("tcp connect error: Connection refused")
    }

    #[test]
    fn only_an_unreachable_server_past_the_threshold_fails_liveness() {
        let clock = FakeClock::new();
        let health = Health::new(clock.shared(), Duration::from_secs(60));
        let pods = health.reflector("v1/Pod");
        let foos = health.reflector("example.com/v1/Foo");
        assert_eq!(health.liveness(), Ok(()));

        // A kind the server does not serve, for ten minutes: not the host's
        // fault.
        health.failed(&foos, &refused());
        clock.advance(Duration::from_secs(600));
        assert_eq!(health.liveness(), Ok(()));

        health.failed(&pods, &unreachable());
        clock.advance(Duration::from_secs(30));
        // A later failure of the same run does not restart the count.
        health.failed(&pods, &unreachable());
        clock.advance(Duration::from_secs(30));
        assert_eq!(health.liveness(), Ok(()), "60 s is not past the threshold");
        clock.advance(Duration::from_secs(1));
        let error = health.liveness().unwrap_err();
        assert!(
            error.contains("v1/Pod: unable to reach the API server for 61s: connection refused: tcp connect error"),
            "{error}"
        );
        assert!(!error.contains("Foo"), "{error}");

        // The server answers again, if only with a refusal.
        health.failed(&pods, &refused());
        assert_eq!(health.liveness(), Ok(()));
        health.worked(&pods);
        health.failed(&pods, &unreachable());
        clock.advance(Duration::from_secs(59));
        assert_eq!(health.liveness(), Ok(()), "a new run starts a new count");
    }

    fn synced(flag: &Arc<AtomicBool>) -> SyncedCheck {
        let flag = Arc::clone(flag);
        Box::new(move || flag.load(Ordering::Relaxed))
    }

    #[test]
    fn guests_start_run_degrade_and_recover_and_only_starting_ones_hold_readiness() {
        let clock = FakeClock::new();
        let health = Health::new(clock.shared(), Duration::from_secs(60));
        let configmaps = health.reflector("v1/ConfigMap");
        let foos = health.reflector("example.com/v1/Foo");
        assert_eq!(health.readiness(), Err("starting".to_string()));

        let (mirror_synced, hostile_synced) = (Arc::default(), Arc::default());
        health.guest("mirror", &["v1/ConfigMap".into()], synced(&mirror_synced));
        health.guest(
            "hostile",
            &["v1/ConfigMap".into(), "example.com/v1/Foo".into()],
            synced(&hostile_synced),
        );
        health.guest_rejected("broken", "broken.wasm: manifest() failed: it trapped");
        health.guests_registered();
        let states = |health: &Health| -> Vec<(String, GuestState)> {
            health
                .guests()
                .into_iter()
                .map(|g| (g.name, g.state))
                .collect()
        };
        assert_eq!(
            states(&health),
            [
                ("mirror".into(), GuestState::Starting),
                ("hostile".into(), GuestState::Starting),
                ("broken".into(), GuestState::Rejected),
            ]
        );
        let error = health.readiness().unwrap_err();
        assert!(
            error.contains("guest mirror: caches have not synced"),
            "{error}"
        );

        // The Foo informer fails; the mirror syncs. Past the threshold the
        // hostile guest is degraded and no longer holds readiness back.
        health.failed(&foos, &refused());
        clock.advance(Duration::from_secs(2));
        let (_, report) = health.readiness_report();
        assert!(
            report.contains(
                "[!]informer example.com/v1/Foo failing for 2s: error: the server could not find"
            ),
            "an informer is named from its first failure: {report}"
        );
        assert!(!report.contains("v1/ConfigMap"), "{report}");
        mirror_synced.store(true, Ordering::Relaxed);
        health.worked(&configmaps);
        assert!(health.readiness().is_err(), "hostile is still starting");
        clock.advance(Duration::from_secs(59));
        assert_eq!(health.readiness(), Ok(()));
        let (ready, report) = health.readiness_report();
        assert!(ready);
        for line in [
            "[+]guest mirror running\n",
            "[+]guest hostile degraded: informer example.com/v1/Foo failing for 61s: error: the server could not find",
            "[+]guest broken rejected: broken.wasm: manifest() failed",
        ] {
            assert!(report.contains(line), "{report}");
        }
        assert!(report.ends_with("readyz check passed\n"), "{report}");
        assert_eq!(
            health.liveness(),
            Ok(()),
            "a guest's trouble is not the host's"
        );

        // The informer recovers; the guest faults five times in a row.
        health.worked(&foos);
        assert!(
            !health.readiness_report().1.contains("[!]"),
            "an informer that works again is not named"
        );
        hostile_synced.store(true, Ordering::Relaxed);
        let faults = health.fault_run("hostile").expect("a wired guest");
        for _ in 0..FAULT_RUN - 1 {
            faults.reconciled(Some(&"the guest ran past its deadline"));
        }
        assert_eq!(health.guests()[1].state, GuestState::Running);
        faults.reconciled(Some(&"the guest ran past its deadline"));
        let hostile = &health.guests()[1];
        assert_eq!(hostile.state, GuestState::Degraded);
        assert_eq!(
            hostile.reason,
            "5 reconciles in a row faulted; the last: the guest ran past its deadline"
        );
        faults.reconciled(None);
        assert_eq!(health.guests()[1].state, GuestState::Running);
        assert!(
            health.fault_run("broken").is_none(),
            "a rejected guest has none"
        );
        assert!(health.fault_run("nobody").is_none());
    }

    #[test]
    fn reasons_are_kept_short() {
        let health = Health::new(FakeClock::new().shared(), Duration::from_secs(60));
        health.guest_rejected("g", &"x".repeat(1 << 20));
        health.guests_registered();
        assert_eq!(health.guests()[0].reason.len(), MAX_REASON);
    }
}
