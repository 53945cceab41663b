//! The test clock: time moves only when a test says so.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, Waker};
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use tokio::sync::Notify;

use super::{Clock, SharedClock, Sleep};

/// A clock that moves only when told to. Sleepers registered on it wake when
/// [`FakeClock::advance`] (or [`FakeClock::set`]) passes their deadline.
/// Clones are handles to the same clock.
#[derive(Clone)]
pub struct FakeClock {
    inner: Arc<FakeInner>,
}

struct FakeInner {
    state: Mutex<FakeState>,
    /// Signalled whenever a sleeper registers or goes away, so tests can wait
    /// until a task is parked on the clock instead of sleeping.
    waiters_changed: Notify,
}

struct FakeState {
    now: Instant,
    next_id: u64,
    sleepers: BTreeMap<(Instant, u64), Option<Waker>>,
}

impl fmt::Debug for FakeClock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.inner.state.lock();
        f.debug_struct("FakeClock")
            .field("now", &state.now)
            .field("sleepers", &state.sleepers.len())
            .finish()
    }
}

impl FakeClock {
    /// A fake clock starting at the current real instant.
    pub fn new() -> Self {
        FakeClock {
            inner: Arc::new(FakeInner {
                state: Mutex::new(FakeState {
                    now: Instant::now(),
                    next_id: 0,
                    sleepers: BTreeMap::new(),
                }),
                waiters_changed: Notify::new(),
            }),
        }
    }

    /// This clock as a [`SharedClock`] for the components under test.
    pub fn shared(&self) -> SharedClock {
        Arc::new(self.clone())
    }

    /// Moves the clock forward by `by` and wakes every sleeper that is due.
    pub fn advance(&self, by: Duration) {
        let target = self.inner.state.lock().now + by;
        self.set(target);
    }

    /// Moves the clock to `to` (never backwards) and wakes the due sleepers.
    pub fn set(&self, to: Instant) {
        let due: Vec<Waker> = {
            let mut state = self.inner.state.lock();
            if to > state.now {
                state.now = to;
            }
            // Due sleepers leave the set now, so `waiters` counts only those
            // still parked.
            let now = state.now;
            let still_waiting = state.sleepers.split_off(&(now, u64::MAX));
            std::mem::replace(&mut state.sleepers, still_waiting)
                .into_values()
                .flatten()
                .collect()
        };
        if !due.is_empty() {
            self.inner.waiters_changed.notify_waiters();
        }
        for waker in due {
            waker.wake();
        }
    }

    /// Moves the clock to the earliest pending deadline, if any sleeper is
    /// waiting, and returns that deadline.
    pub fn advance_to_next_deadline(&self) -> Option<Instant> {
        let next = self.next_deadline()?;
        self.set(next);
        Some(next)
    }

    /// The earliest deadline any sleeper waits for.
    pub fn next_deadline(&self) -> Option<Instant> {
        let state = self.inner.state.lock();
        state.sleepers.keys().next().map(|(deadline, _)| *deadline)
    }

    /// How many sleepers are parked on this clock.
    pub fn waiters(&self) -> usize {
        self.inner.state.lock().sleepers.len()
    }

    /// Waits until at least `count` sleepers are parked on this clock.
    pub async fn wait_for_waiters(&self, count: usize) {
        loop {
            let changed = self.inner.waiters_changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.waiters() >= count {
                return;
            }
            changed.await;
        }
    }

    fn register(&self, deadline: Instant, waker: &Waker, id: &mut Option<u64>) -> bool {
        let mut state = self.inner.state.lock();
        if state.now >= deadline {
            if let Some(id) = id.take()
                && state.sleepers.remove(&(deadline, id)).is_some()
            {
                drop(state);
                self.inner.waiters_changed.notify_waiters();
            }
            return true;
        }
        match id {
            Some(id) => {
                state.sleepers.insert((deadline, *id), Some(waker.clone()));
            }
            None => {
                let new_id = state.next_id;
                state.next_id += 1;
                state
                    .sleepers
                    .insert((deadline, new_id), Some(waker.clone()));
                *id = Some(new_id);
                drop(state);
                self.inner.waiters_changed.notify_waiters();
            }
        }
        false
    }

    fn deregister(&self, deadline: Instant, id: u64) {
        let removed = self
            .inner
            .state
            .lock()
            .sleepers
            .remove(&(deadline, id))
            .is_some();
        if removed {
            self.inner.waiters_changed.notify_waiters();
        }
    }
}

impl Default for FakeClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for FakeClock {
    fn now(&self) -> Instant {
        self.inner.state.lock().now
    }

    fn sleep_until(&self, deadline: Instant) -> Sleep {
        Box::pin(FakeSleep {
            clock: self.clone(),
            deadline,
            id: None,
        })
    }
}

struct FakeSleep {
    clock: FakeClock,
    deadline: Instant,
    id: Option<u64>,
}

impl Future for FakeSleep {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        let this = self.get_mut();
        if this.clock.register(this.deadline, cx.waker(), &mut this.id) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl Drop for FakeSleep {
    fn drop(&mut self) {
        if let Some(id) = self.id {
            self.clock.deregister(self.deadline, id);
        }
    }
}
