//! Fair shares of the CPU for guests. Guest code runs only while its call
//! holds one of a fixed number of lanes (`--guest-parallelism`, by default
//! one per CPU but one), and a call holds its lane only while it is
//! polled: it gives the lane back whenever it stops — at every epoch tick,
//! where guest code yields, and at every host or WASI call that waits (an
//! API write, a sleep). Time blocked outside guest code costs no lane.
//!
//! A free lane goes to the waiting guest that has used the least time on
//! lanes so far, however many calls it has (a guest with many busy calls
//! gets the share of one guest), so a call of a quiet guest runs at the
//! next free lane. A guest that was idle starts again at most
//! [`IDLE_CREDIT`] behind the least-served busy guest, or, when no guest
//! is busy at that moment, behind where the least-served busy guest last
//! was (the scheduler's floor, which never goes back), so idling earns no
//! credit to hoard the CPU with later: a guest whose calls all waited out
//! a long sleep cannot take the lanes from a busy neighbour that happened
//! to be between calls when it woke.
//!
//! A call of a guest that runs nothing yet, arriving while every lane is
//! taken, takes at once a lane handed to a more-served guest's call that
//! has not started on it yet (that call waits again), else preempts the
//! running calls (they yield at once, not at the next tick, and queue
//! again), so a quiet guest's calls wait for the lane only as long as the
//! scheduler's choice takes, whatever spins.
//!
//! A guest's own calls take turns on a lane without a switch at every
//! call: in a task that makes one call after another (a worker,
//! [`Scheduler::task`]), a call that ends while another call of its guest
//! is next in line keeps the lane for the task's next call, until the
//! task's poll ends or its calls have held the lane for [`KEEP_LIMIT`];
//! then the waiting call takes it. Two workers of one guest on one lane
//! then hand it over about once per tick, not at every reconcile, each
//! hand-over a switch of tasks and often of threads. Another guest's call
//! takes a kept lane as it takes one handed on but not taken yet.
//!
//! A call that yields at a tick also yields its thread to the kernel, so
//! a thread waiting on that CPU (a host thread, the thread a quiet guest's
//! call just woke on) runs within a tick of ours, not of the kernel's.
//!
//! The scheduler also tells the epoch thread when guest code runs at all,
//! so an idle host does not tick.

use std::cell::Cell;
use std::collections::{HashMap, VecDeque};
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::task::{Context, Poll, Wake, Waker};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex};

use crate::clock::SharedClock;

/// The most lane time a guest that was idle may be behind the busy guests
/// when it starts again: enough to keep its place across the short gaps
/// between its calls' polls, far too little to hoard the CPU.
pub(crate) const IDLE_CREDIT: Duration = Duration::from_millis(10);

/// The most lane time a task's calls, one after another, keep the lane
/// from a waiting call of their own guest: that call's wait for them.
pub(crate) const KEEP_LIMIT: Duration = Duration::from_millis(1);

/// Identifies a guest to the scheduler: its calls share its turns.
pub(crate) type GuestId = u64;

/// The lanes and the calls waiting for them.
pub(crate) struct Scheduler {
    lanes: usize,
    clock: SharedClock,
    state: Mutex<State>,
    /// Signalled when a lane is taken while none was busy.
    busy: Condvar,
    /// Makes running guest code yield now.
    preempt: Option<Preempt>,
}

/// Makes running guest code yield at its next check (an epoch increment).
pub(crate) type Preempt = Box<dyn Fn() + Send + Sync>;

struct State {
    /// Lanes neither running guest code nor handed to a waiting call.
    free: usize,
    /// Running calls per guest.
    running: HashMap<GuestId, usize>,
    /// Guests with waiting calls, in the order they began to wait.
    turns: VecDeque<GuestId>,
    /// Each guest's waiting calls, oldest first.
    waiting: HashMap<GuestId, VecDeque<Waiter>>,
    /// Calls handed a lane that have not taken it yet, by ticket.
    granted: HashMap<u64, Grant>,
    /// Lanes kept for the next call of a task being polled, by number:
    /// whose guest's.
    kept: HashMap<u64, GuestId>,
    /// Time each guest's calls have held lanes, in nanoseconds.
    used: HashMap<GuestId, u64>,
    /// The most lane time the least-served active guest has had so far
    /// (nanoseconds): where a guest that becomes active starts from, even
    /// when no other guest is active at that moment.
    floor: u64,
    next_ticket: u64,
}

struct Waiter {
    ticket: u64,
    waker: Waker,
}

/// A lane handed to a call that has not taken it yet.
struct Grant {
    guest: GuestId,
    /// Its waker, kept for when the lane is taken back and the call waits
    /// again (woken once already, it finds that out when next polled).
    waker: Waker,
}

impl State {
    fn used(&self, guest: GuestId) -> u64 {
        self.used.get(&guest).copied().unwrap_or(0)
    }

    /// Whether a call of `guest` runs on a lane or has been handed one, or
    /// a lane is kept for one.
    fn holds_lane(&self, guest: GuestId) -> bool {
        self.running.contains_key(&guest)
            || self.granted.values().any(|grant| grant.guest == guest)
            || self.kept.values().any(|g| *g == guest)
    }

    fn is_active(&self, guest: GuestId) -> bool {
        self.holds_lane(guest) || self.waiting.contains_key(&guest)
    }

    /// Raises the floor to the lane time of the least-served active guest.
    fn raise_floor(&mut self) {
        let least = self
            .running
            .keys()
            .chain(self.waiting.keys())
            .chain(self.granted.values().map(|grant| &grant.guest))
            .chain(self.kept.values())
            .map(|g| self.used(*g))
            .min();
        if let Some(least) = least {
            self.floor = self.floor.max(least);
        }
    }

    /// A guest that becomes active starts at most [`IDLE_CREDIT`] behind
    /// the floor.
    fn activate(&mut self, guest: GuestId) {
        if self.is_active(guest) {
            return;
        }
        self.raise_floor();
        let credit = u64::try_from(IDLE_CREDIT.as_nanos()).unwrap_or(u64::MAX);
        let start = self.floor.saturating_sub(credit);
        let used = self.used.entry(guest).or_insert(0);
        *used = (*used).max(start);
    }

    /// The waiting guest a free lane goes to next, the least-served (the
    /// earliest to wait among equals), and its place in `turns`.
    fn next_turn(&self) -> Option<(usize, GuestId)> {
        self.turns
            .iter()
            .enumerate()
            .min_by_key(|(_, g)| self.used(**g))
            .map(|(position, g)| (position, *g))
    }

    /// Hands free lanes to waiting calls, each to the least-served waiting
    /// guest (the earliest to wait among equals); returns whom to wake.
    fn dispatch(&mut self) -> Vec<Waker> {
        let mut wake = Vec::new();
        while self.free > 0 {
            let Some((position, guest)) = self.next_turn() else {
                break;
            };
            let queue = self
                .waiting
                .get_mut(&guest)
                .expect("a guest with a turn has waiting calls");
            let waiter = queue.pop_front().expect("a waiting queue is never empty");
            if queue.is_empty() {
                self.waiting.remove(&guest);
                self.turns.remove(position);
            }
            self.free -= 1;
            self.granted.insert(
                waiter.ticket,
                Grant {
                    guest,
                    waker: waiter.waker.clone(),
                },
            );
            wake.push(waiter.waker);
        }
        wake
    }

    /// Takes back the lanes handed to calls that have not taken them yet,
    /// and those kept for a task's next call, when a waiting guest has
    /// used less than theirs (it came to wait after the hand-over, or
    /// their guest ran since): those calls wait again at the head of their
    /// guest's line, and [`State::dispatch`] hands the lanes out anew. A
    /// lane handed on is not held until its call is next polled, which may
    /// be long on a busy machine.
    fn take_back_grants(&mut self) {
        let Some(least) = self.turns.iter().map(|g| self.used(*g)).min() else {
            return;
        };
        let stale_kept: Vec<u64> = self
            .kept
            .iter()
            .filter(|(_, guest)| self.used(**guest) > least)
            .map(|(number, _)| *number)
            .collect();
        for number in stale_kept {
            self.kept.remove(&number);
            self.free += 1;
        }
        let stale: Vec<u64> = self
            .granted
            .iter()
            .filter(|(_, grant)| self.used(grant.guest) > least)
            .map(|(ticket, _)| *ticket)
            .collect();
        for ticket in stale {
            let Grant { guest, waker } = self.granted.remove(&ticket).expect("listed above");
            if !self.waiting.contains_key(&guest) {
                self.turns.push_back(guest);
            }
            self.waiting
                .entry(guest)
                .or_default()
                .push_front(Waiter { ticket, waker });
            self.free += 1;
        }
    }

    /// Puts a call of `guest` in line for a lane; its ticket.
    fn enqueue(&mut self, guest: GuestId, waker: &Waker) -> u64 {
        self.activate(guest);
        let ticket = self.next_ticket;
        self.next_ticket += 1;
        if !self.waiting.contains_key(&guest) {
            self.turns.push_back(guest);
        }
        self.waiting.entry(guest).or_default().push_back(Waiter {
            ticket,
            waker: waker.clone(),
        });
        ticket
    }

    fn start_running(&mut self, guest: GuestId) {
        *self.running.entry(guest).or_insert(0) += 1;
    }

    #[cfg(test)]
    fn running_count(&self) -> usize {
        self.running.values().sum()
    }
}

impl Scheduler {
    /// A scheduler with `lanes` lanes (at least one), timing lane use on
    /// `clock`; `preempt`, when given, makes running guest code yield.
    pub(crate) fn new(
        lanes: usize,
        clock: SharedClock,
        preempt: Option<Preempt>,
    ) -> Arc<Scheduler> {
        let lanes = lanes.max(1);
        Arc::new(Scheduler {
            lanes,
            clock,
            state: Mutex::new(State {
                free: lanes,
                running: HashMap::new(),
                turns: VecDeque::new(),
                waiting: HashMap::new(),
                granted: HashMap::new(),
                kept: HashMap::new(),
                used: HashMap::new(),
                floor: 0,
                next_ticket: 0,
            }),
            busy: Condvar::new(),
            preempt,
        })
    }

    /// How many lanes there are.
    pub(crate) fn lanes(&self) -> usize {
        self.lanes
    }

    /// `call`, made to take turns as `guest`; the time it holds lanes is
    /// added to `spent` (nanoseconds).
    pub(crate) fn fair<F: Future>(
        self: &Arc<Self>,
        guest: GuestId,
        spent: Arc<AtomicU64>,
        call: F,
    ) -> Fair<F> {
        Fair {
            scheduler: Arc::clone(self),
            guest,
            spent,
            ticket: None,
            woken: Arc::default(),
            call: Box::pin(call),
        }
    }

    /// Blocks the calling thread while no guest code runs, or at most
    /// `timeout`; true when guest code runs.
    pub(crate) fn wait_until_busy(&self, timeout: Duration) -> bool {
        let mut state = self.state.lock();
        if state.running.is_empty() {
            self.busy.wait_for(&mut state, timeout);
        }
        !state.running.is_empty()
    }

    /// Takes a lane for a call of `guest`: at once when one is free and no
    /// call waits, else when it is handed one. `None` while it must wait
    /// (`waker` is woken when a lane is handed to it); else when it took
    /// the lane.
    fn enter(&self, guest: GuestId, ticket: &mut Option<u64>, waker: &Waker) -> Option<Instant> {
        let mut state = self.state.lock();
        if let Some(mut task) = self.polled_task() {
            if ticket.is_none()
                && let Some(kept) = task.kept
            {
                match state.kept.get(&kept) {
                    Some(g) if *g == guest => {
                        state.kept.remove(&kept);
                        task.kept = None;
                        TASK.set(Some(task));
                        return Some(self.start(&mut state, guest));
                    }
                    // Kept for another guest's call: until the poll ends.
                    Some(_) => {}
                    // Taken back by a less-served guest.
                    None => task.kept = None,
                }
            }
            // A lane taken otherwise begins the task's run anew.
            task.run = Duration::ZERO;
            TASK.set(Some(task));
        }
        match *ticket {
            Some(granted) if state.granted.contains_key(&granted) => {
                state.granted.remove(&granted);
                *ticket = None;
            }
            Some(waiting) => {
                if let Some(waiter) = state
                    .waiting
                    .get_mut(&guest)
                    .and_then(|queue| queue.iter_mut().find(|w| w.ticket == waiting))
                {
                    waiter.waker.clone_from(waker);
                }
                return None;
            }
            // Free lanes with calls waiting cannot last: a lane that frees
            // is handed on at once.
            None if state.free > 0 => {
                debug_assert!(state.turns.is_empty());
                state.activate(guest);
                state.free -= 1;
            }
            None => {
                // A guest that runs nothing takes a lane from those that do:
                // one handed to a more-served guest's call that has not
                // taken it yet at once, a running one by preemption. A guest
                // with a lane handed to one of its calls is about to run:
                // its other calls wait their turn, as they do while it runs.
                let contends = !state.holds_lane(guest);
                let mine = state.enqueue(guest, waker);
                state.take_back_grants();
                let mut wake = state.dispatch();
                if state.granted.remove(&mine).is_none() {
                    *ticket = Some(mine);
                    // Only running guest code can be made to yield; a lane
                    // handed on but not taken yet is no one's to preempt.
                    let preempts = contends && !state.running.is_empty();
                    drop(state);
                    wake.into_iter().for_each(Waker::wake);
                    if preempts && let Some(preempt) = &self.preempt {
                        preempt();
                    }
                    return None;
                }
                // Handed to this very call: taken now, not woken for.
                wake.retain(|w| !w.will_wake(waker));
                let since = self.start(&mut state, guest);
                drop(state);
                wake.into_iter().for_each(Waker::wake);
                return Some(since);
            }
        }
        Some(self.start(&mut state, guest))
    }

    /// A call of `guest` takes its lane; when it took it.
    fn start(&self, state: &mut State, guest: GuestId) -> Instant {
        let idle = state.running.is_empty();
        state.start_running(guest);
        if idle {
            self.busy.notify_all();
        }
        self.clock.now()
    }

    /// A call of `guest` that took its lane at `since` gives it back; the
    /// lane is handed on. A call that is ready to run on (it yielded) gets
    /// in line at once, woken by `again`: its ticket, and how long it held
    /// the lane.
    fn leave(
        &self,
        guest: GuestId,
        since: Instant,
        again: Option<&Waker>,
    ) -> (Option<u64>, Duration) {
        let held = self.clock.now().saturating_duration_since(since);
        let (ticket, wake) = {
            let mut state = self.state.lock();
            let used = state.used.entry(guest).or_insert(0);
            *used = used.saturating_add(u64::try_from(held.as_nanos()).unwrap_or(u64::MAX));
            // While the call still counts as running, so that the floor
            // follows a guest that goes idle now.
            state.raise_floor();
            match state.running.get_mut(&guest) {
                Some(1) => {
                    state.running.remove(&guest);
                }
                Some(count) => *count -= 1,
                None => debug_assert!(false, "a lane left that was not taken"),
            }
            state.free += 1;
            let ticket = again.map(|waker| state.enqueue(guest, waker));
            state.take_back_grants();
            if again.is_none() {
                self.keep_for_task(&mut state, guest, held);
            }
            (ticket, state.dispatch())
        };
        wake.into_iter().for_each(Waker::wake);
        (ticket, held)
    }

    /// The task being polled on this thread, when it is one of this
    /// scheduler's ([`Scheduler::task`]).
    fn polled_task(&self) -> Option<PolledTask> {
        TASK.get()
            .filter(|task| task.scheduler == std::ptr::from_ref(self).addr())
    }

    /// A call of `guest` that held its lane for `held` ended (or waits
    /// outside guest code): when the lane would go to another call of
    /// `guest` and the call's task is being polled, the lane is kept for
    /// the task's next call instead, while the task's run is shorter than
    /// [`KEEP_LIMIT`].
    fn keep_for_task(&self, state: &mut State, guest: GuestId, held: Duration) {
        let Some(mut task) = self.polled_task() else {
            return;
        };
        task.run = task.run.saturating_add(held);
        if task.kept.is_none()
            && task.run < KEEP_LIMIT
            && state.free > 0
            && state.next_turn().map(|(_, g)| g) == Some(guest)
        {
            let number = state.next_ticket;
            state.next_ticket += 1;
            state.free -= 1;
            state.kept.insert(number, guest);
            task.kept = Some(number);
        }
        TASK.set(Some(task));
    }

    /// The poll of a task ended: a lane still kept for its next call goes
    /// to the next waiting call.
    fn end_of_poll(&self, kept: u64) {
        self.change(|state| {
            if state.kept.remove(&kept).is_some() {
                state.free += 1;
                state.dispatch()
            } else {
                Vec::new()
            }
        });
    }

    /// Runs `change` on the state, then wakes the calls it returns, once
    /// the lock is released.
    fn change(&self, change: impl FnOnce(&mut State) -> Vec<Waker>) {
        let wake = change(&mut self.state.lock());
        wake.into_iter().for_each(Waker::wake);
    }

    /// `task`, a task that calls into guests one call after another (a
    /// worker), made to keep a lane between its calls while it is polled
    /// (see the module's doc).
    pub(crate) fn task<F: Future>(self: &Arc<Self>, task: F) -> Task<F> {
        Task {
            scheduler: Arc::clone(self),
            task: Box::pin(task),
        }
    }

    /// A call of `guest` holding `ticket` went away: its place in the
    /// queue, or the lane it was handed, goes to the next.
    fn cancel(&self, guest: GuestId, ticket: u64) {
        self.change(|state| {
            if state.granted.remove(&ticket).is_some() {
                state.free += 1;
                return state.dispatch();
            }
            if let Some(queue) = state.waiting.get_mut(&guest) {
                queue.retain(|w| w.ticket != ticket);
                if queue.is_empty() {
                    state.waiting.remove(&guest);
                    state.turns.retain(|g| *g != guest);
                }
            }
            Vec::new()
        });
    }
}

thread_local! {
    /// The task being polled on this thread, when it runs as a
    /// [`Scheduler::task`].
    static TASK: Cell<Option<PolledTask>> = const { Cell::new(None) };
}

/// A task being polled, as its calls see it.
#[derive(Clone, Copy)]
struct PolledTask {
    /// Its scheduler's address.
    scheduler: usize,
    /// The lane a call of the task ended on, kept for its next call.
    kept: Option<u64>,
    /// Lane time of the task's calls since one of them last took a lane
    /// that was not kept for it.
    run: Duration,
}

/// A task whose calls keep their lane between them while it is polled.
pub(crate) struct Task<F> {
    scheduler: Arc<Scheduler>,
    task: Pin<Box<F>>,
}

/// Ends a task's poll, by a panic too: the thread's task is the one
/// polled before, and a lane still kept goes on.
struct EndOfPoll<'a> {
    scheduler: &'a Scheduler,
    outer: Option<PolledTask>,
}

impl Drop for EndOfPoll<'_> {
    fn drop(&mut self) {
        if let Some(kept) = TASK.replace(self.outer).and_then(|task| task.kept) {
            self.scheduler.end_of_poll(kept);
        }
    }
}

impl<F: Future> Future for Task<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let outer = TASK.replace(Some(PolledTask {
            scheduler: Arc::as_ptr(&this.scheduler).addr(),
            kept: None,
            run: Duration::ZERO,
        }));
        let _end = EndOfPoll {
            scheduler: &this.scheduler,
            outer,
        };
        this.task.as_mut().poll(cx)
    }
}

/// A guest call that runs its guest code only while holding a lane.
pub(crate) struct Fair<F> {
    scheduler: Arc<Scheduler>,
    guest: GuestId,
    /// Nanoseconds the call has held lanes.
    spent: Arc<AtomicU64>,
    /// Set while the call waits for a lane or has been handed one.
    ticket: Option<u64>,
    /// Tells a yield (the call woke itself while polled) from a wait.
    woken: Arc<SelfWake>,
    call: Pin<Box<F>>,
}

/// The waker a call is polled with: records that the call woke itself
/// during the poll, and passes every wake on.
#[derive(Default)]
struct SelfWake {
    woken: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl SelfWake {
    /// Before a poll: wakes go to `waker`; none has come yet.
    fn arm(&self, waker: &Waker) {
        self.woken.store(false, Ordering::Relaxed);
        let mut current = self.waker.lock();
        match &mut *current {
            Some(current) => current.clone_from(waker),
            None => *current = Some(waker.clone()),
        }
    }
}

impl Wake for SelfWake {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Relaxed);
        if let Some(waker) = &*self.waker.lock() {
            waker.wake_by_ref();
        }
    }
}

/// A lane held during one poll: given back when the poll ends, by a
/// panic too, its time added to the call's.
struct Lane<'a> {
    scheduler: &'a Scheduler,
    guest: GuestId,
    since: Instant,
    spent: &'a AtomicU64,
    held: bool,
}

impl Lane<'_> {
    /// Gives the lane back; a call that yielded gets in line again: its
    /// ticket.
    fn release(mut self, again: Option<&Waker>) -> Option<u64> {
        self.held = false;
        self.leave(again)
    }

    fn leave(&self, again: Option<&Waker>) -> Option<u64> {
        let (ticket, held) = self.scheduler.leave(self.guest, self.since, again);
        let nanos = u64::try_from(held.as_nanos()).unwrap_or(u64::MAX);
        self.spent.fetch_add(nanos, Ordering::Relaxed);
        ticket
    }
}

impl Drop for Lane<'_> {
    fn drop(&mut self) {
        if self.held {
            self.leave(None);
        }
    }
}

impl<F: Future> Future for Fair<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let this = self.get_mut();
        let Some(since) = this
            .scheduler
            .enter(this.guest, &mut this.ticket, cx.waker())
        else {
            return Poll::Pending;
        };
        let lane = Lane {
            scheduler: &this.scheduler,
            guest: this.guest,
            since,
            spent: &this.spent,
            held: true,
        };
        this.woken.arm(cx.waker());
        let waker = Waker::from(Arc::clone(&this.woken));
        let polled = this.call.as_mut().poll(&mut Context::from_waker(&waker));
        let yielded = polled.is_pending() && this.woken.woken.load(Ordering::Relaxed);
        this.ticket = lane.release(yielded.then_some(cx.waker()));
        if yielded {
            // The kernel's share of the CPU: guest code that ran to its
            // tick gives this thread's CPU to any thread waiting for it (a
            // host thread, another guest's call just woken) rather than
            // keeping it to the kernel's own next tick, several of ours.
            std::thread::yield_now();
        }
        polled
    }
}

impl<F> Drop for Fair<F> {
    fn drop(&mut self) {
        if let Some(ticket) = self.ticket.take() {
            self.scheduler.cancel(self.guest, ticket);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;
    use std::sync::atomic::AtomicUsize;

    use proptest::prelude::*;

    use super::*;
    use crate::clock::{FakeClock, SystemClock};

    /// Counts its wakes.
    #[derive(Default)]
    struct Flag(AtomicUsize);

    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn waker() -> (Arc<Flag>, Waker) {
        let flag = Arc::new(Flag::default());
        (Arc::clone(&flag), Waker::from(flag))
    }

    /// A call that is always ready to run more guest code (a spinner):
    /// every poll yields, and counts.
    struct Spin(Arc<AtomicUsize>);

    impl Future for Spin {
        type Output = ();
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            self.0.fetch_add(1, Ordering::SeqCst);
            // Some guest code: the lane is held for a while.
            let until = Instant::now() + Duration::from_micros(20);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    /// One lane on a fake clock: a held lane costs `held` per poll.
    struct Bench {
        clock: FakeClock,
        scheduler: Arc<Scheduler>,
        waker: Waker,
    }

    impl Bench {
        fn new(lanes: usize) -> Bench {
            let clock = FakeClock::new();
            let scheduler = Scheduler::new(lanes, clock.shared(), None);
            Bench {
                clock,
                scheduler,
                waker: waker().1,
            }
        }

        fn enter(&self, guest: GuestId, ticket: &mut Option<u64>) -> Option<Instant> {
            self.scheduler.enter(guest, ticket, &self.waker)
        }

        /// Holds the lane taken at `since` for `held`, then gives it back.
        fn hold(&self, guest: GuestId, since: Instant, held: Duration) {
            self.clock.advance(held);
            self.scheduler.leave(guest, since, None);
        }
    }

    #[test]
    fn a_free_lane_is_taken_at_once_and_given_back_after_the_poll() {
        let bench = Bench::new(1);
        let mut ticket = None;
        let since = bench.enter(1, &mut ticket).expect("a free lane");
        assert_eq!(bench.scheduler.state.lock().running_count(), 1);
        let mut other = None;
        assert!(
            bench.enter(2, &mut other).is_none(),
            "the only lane is busy"
        );
        assert!(other.is_some());
        bench.hold(1, since, Duration::from_millis(1));
        let state = bench.scheduler.state.lock();
        assert_eq!(state.running_count(), 0);
        assert_eq!(state.free, 0, "handed to the waiting call");
        assert!(state.granted.contains_key(&other.unwrap()));
        assert_eq!(state.used(1), 1_000_000);
    }

    #[test]
    fn a_free_lane_goes_to_the_least_served_guest_not_to_the_most_calls() {
        let bench = Bench::new(1);
        let tick = Duration::from_millis(1);
        // Guest 1 has run for a while; guest 2 has not run yet.
        let mut first = None;
        let since = bench.enter(1, &mut first).unwrap();
        // Five more calls of guest 1 wait, then one of guest 2.
        let mut busy: Vec<Option<u64>> = vec![None; 5];
        for ticket in &mut busy {
            assert!(bench.enter(1, ticket).is_none());
        }
        let mut quiet = None;
        assert!(bench.enter(2, &mut quiet).is_none());
        bench.hold(1, since, tick);
        // Guest 2 came to wait after guest 1, but has used less.
        assert!(bench.enter(1, &mut busy[0]).is_none(), "not its turn");
        let since = bench
            .enter(2, &mut quiet)
            .expect("the quiet guest runs at the next free lane");
        bench.hold(2, since, Duration::from_micros(10));
        // Guest 2 is idle again: guest 1's calls run one after another.
        for ticket in &mut busy {
            let since = bench.enter(1, ticket).expect("guest 1's turn");
            bench.hold(1, since, tick);
        }
    }

    #[test]
    fn an_idle_guest_earns_no_credit() {
        let bench = Bench::new(1);
        // Guest 1 runs for an hour while guest 2 is idle.
        let mut one = None;
        let since = bench.enter(1, &mut one).unwrap();
        bench.hold(1, since, Duration::from_secs(3600));
        let since = bench.enter(1, &mut one).unwrap();
        // Guest 2 wakes while guest 1 runs: it starts just behind guest 1.
        let mut two = None;
        assert!(bench.enter(2, &mut two).is_none());
        assert_eq!(
            Duration::from_nanos(bench.scheduler.state.lock().used(2)),
            Duration::from_secs(3600) - IDLE_CREDIT,
            "at most the idle credit behind the least-served active guest"
        );
        bench.hold(1, since, Duration::from_millis(1));
        let since = bench.enter(2, &mut two).expect("handed the lane");
        // Guest 2 uses its credit up.
        bench.hold(2, since, IDLE_CREDIT + Duration::from_millis(1));
        // Both busy: they alternate rather than guest 2 running for an hour.
        let mut one = None;
        let mut two = None;
        let since = bench.enter(1, &mut one).unwrap();
        assert!(bench.enter(2, &mut two).is_none());
        bench.hold(1, since, Duration::from_millis(1));
        let since = bench.enter(2, &mut two).expect("alternates");
        assert!(bench.enter(1, &mut one).is_none());
        bench.hold(2, since, Duration::from_millis(1));
        assert!(bench.enter(1, &mut one).is_some());
    }

    #[test]
    fn a_guest_that_wakes_while_no_guest_is_busy_earns_no_credit_either() {
        let bench = Bench::new(1);
        // Guest 1 runs for an hour, then is between calls (idle) when
        // guest 2, idle all along (its calls asleep in WASI), wakes.
        let mut one = None;
        let since = bench.enter(1, &mut one).unwrap();
        bench.hold(1, since, Duration::from_secs(3600));
        let mut two = None;
        let since = bench.enter(2, &mut two).expect("the lane is free");
        assert_eq!(
            Duration::from_nanos(bench.scheduler.state.lock().used(2)),
            Duration::from_secs(3600) - IDLE_CREDIT,
            "at most the idle credit behind where the busy guest last was"
        );
        // Guest 2 has a backlog; guest 1's next call arrives while guest
        // 2 runs, waits its turn once guest 2 used its credit up, and
        // then the two alternate rather than guest 2 running for an hour.
        let mut backlog: Vec<Option<u64>> = vec![None; 5];
        for ticket in &mut backlog {
            assert!(bench.enter(2, ticket).is_none());
        }
        assert!(bench.enter(1, &mut one).is_none());
        bench.hold(2, since, IDLE_CREDIT + Duration::from_millis(1));
        let since = bench.enter(1, &mut one).expect("guest 1's turn");
        bench.hold(1, since, Duration::from_millis(1));
        assert!(bench.enter(1, &mut one).is_none(), "guest 2's turn again");
        let since = bench.enter(2, &mut backlog[0]).expect("guest 2's turn");
        bench.hold(2, since, Duration::from_millis(1));
        assert!(bench.enter(1, &mut one).is_some(), "alternates");
    }

    /// One lane on a fake clock, and how often it preempted.
    fn counting_preemptions() -> (FakeClock, Arc<Scheduler>, Arc<AtomicUsize>) {
        let clock = FakeClock::new();
        let preempted = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&preempted);
        let scheduler = Scheduler::new(
            1,
            clock.shared(),
            Some(Box::new(move || {
                count.fetch_add(1, Ordering::SeqCst);
            })),
        );
        (clock, scheduler, preempted)
    }

    #[test]
    fn a_guest_that_runs_nothing_preempts_the_running_calls_on_arrival() {
        let (clock, scheduler, preempted) = counting_preemptions();
        let w = waker().1;
        let mut spinner = None;
        let since = scheduler.enter(1, &mut spinner, &w).unwrap();
        // More calls of the running guest wait their turn quietly.
        let mut more = None;
        assert!(scheduler.enter(1, &mut more, &w).is_none());
        assert_eq!(preempted.load(Ordering::SeqCst), 0);
        // A call of another guest preempts.
        let mut quiet = None;
        assert!(scheduler.enter(2, &mut quiet, &w).is_none());
        assert_eq!(preempted.load(Ordering::SeqCst), 1);
        // The spinner yields; the lane goes to the quiet guest, not back.
        clock.advance(Duration::from_micros(100));
        scheduler.leave(1, since, Some(&w));
        assert!(scheduler.enter(2, &mut quiet, &w).is_some());
    }

    #[test]
    fn a_guests_own_calls_never_preempt_one_another() {
        let (clock, scheduler, preempted) = counting_preemptions();
        let w = waker().1;
        // Two workers of one guest on one lane, call after call: each
        // call that ends hands the lane to the other worker's call, and
        // its worker's next call arrives before that one has taken it.
        let mut first = None;
        let mut since = scheduler.enter(1, &mut first, &w).unwrap();
        let mut waiting = None;
        assert!(scheduler.enter(1, &mut waiting, &w).is_none());
        for _ in 0..100 {
            clock.advance(Duration::from_micros(10));
            scheduler.leave(1, since, None);
            let mut next = None;
            assert!(
                scheduler.enter(1, &mut next, &w).is_none(),
                "the lane was handed to the other call"
            );
            since = scheduler
                .enter(1, &mut waiting, &w)
                .expect("the call handed the lane takes it");
            waiting = next;
        }
        assert_eq!(
            preempted.load(Ordering::SeqCst),
            0,
            "a guest's calls take turns without making each other yield"
        );
    }

    #[test]
    fn a_lane_handed_on_but_not_taken_is_not_preempted() {
        let (clock, scheduler, preempted) = counting_preemptions();
        let w = waker().1;
        // Guest 2 has run for an hour; guest 1 runs, and its next call
        // waits.
        let mut two = None;
        let since = scheduler.enter(2, &mut two, &w).unwrap();
        clock.advance(Duration::from_secs(3600));
        scheduler.leave(2, since, None);
        let mut one = None;
        let since = scheduler.enter(1, &mut one, &w).unwrap();
        let mut next = None;
        assert!(scheduler.enter(1, &mut next, &w).is_none());
        // Guest 1's call ends: the lane is handed to its next call.
        clock.advance(Duration::from_micros(10));
        scheduler.leave(1, since, None);
        // Guest 2, more served, arrives before that call takes the lane:
        // it waits, and preempts nothing, since nothing runs.
        assert!(scheduler.enter(2, &mut two, &w).is_none());
        assert_eq!(preempted.load(Ordering::SeqCst), 0);
        assert!(scheduler.enter(1, &mut next, &w).is_some());
    }

    #[test]
    fn a_lane_handed_to_a_busy_guest_but_not_yet_taken_goes_to_a_quiet_arrival() {
        let bench = Bench::new(1);
        let (spinner_woken, spinner_waker) = waker();
        // Guest 1 spins: its call yields and is handed the lane again.
        let mut spinner = None;
        let since = bench.enter(1, &mut spinner).unwrap();
        bench.clock.advance(Duration::from_millis(1));
        spinner = bench.scheduler.leave(1, since, Some(&spinner_waker)).0;
        assert_eq!(spinner_woken.0.load(Ordering::SeqCst), 1, "handed the lane");
        // Before it takes the lane, guest 2 arrives: it runs at once.
        let mut quiet = None;
        let since = bench
            .enter(2, &mut quiet)
            .expect("the lane handed on but not taken goes to the quiet guest");
        assert_eq!(quiet, None);
        // The spinner, polled as it was woken, waits for its turn.
        assert!(bench.enter(1, &mut spinner).is_none());
        bench.hold(2, since, Duration::from_micros(50));
        assert!(bench.enter(1, &mut spinner).is_some(), "its turn after");
    }

    #[test]
    fn a_dropped_call_gives_its_place_or_its_lane_to_the_next() {
        let clock = FakeClock::new();
        let scheduler = Scheduler::new(1, clock.shared(), None);
        let (woken, w) = waker();
        let mut holder = None;
        let since = scheduler.enter(0, &mut holder, &w).unwrap();
        let mut first = None;
        let mut second = None;
        assert!(scheduler.enter(1, &mut first, &w).is_none());
        assert!(scheduler.enter(2, &mut second, &w).is_none());
        scheduler.leave(0, since, None);
        assert_eq!(woken.0.load(Ordering::SeqCst), 1, "the first is woken");
        // The first is handed the lane but goes away before it takes it.
        scheduler.cancel(1, first.unwrap());
        assert_eq!(woken.0.load(Ordering::SeqCst), 2, "the lane passes on");
        let since = scheduler.enter(2, &mut second, &w).unwrap();
        scheduler.leave(2, since, None);
        // A waiting call that goes away leaves no trace.
        let mut holder = None;
        let since = scheduler.enter(0, &mut holder, &w).unwrap();
        let mut gone = None;
        assert!(scheduler.enter(3, &mut gone, &w).is_none());
        scheduler.cancel(3, gone.unwrap());
        scheduler.leave(0, since, None);
        let state = scheduler.state.lock();
        assert_eq!(state.free, 1);
        assert!(state.turns.is_empty() && state.waiting.is_empty() && state.granted.is_empty());
    }

    /// Runs `body` as one poll of a task of `scheduler`.
    fn in_task_poll(scheduler: &Arc<Scheduler>, body: impl FnOnce()) {
        let mut body = Some(body);
        let mut task = scheduler.task(std::future::poll_fn(move |_| {
            (body.take().expect("polled once"))();
            Poll::Ready(())
        }));
        let polled = Pin::new(&mut task).poll(&mut Context::from_waker(Waker::noop()));
        assert!(polled.is_ready());
    }

    #[test]
    fn a_task_keeps_its_lane_for_its_next_call_until_its_poll_ends() {
        let bench = Bench::new(1);
        let (other_woken, other_waker) = waker();
        let mut other = None;
        in_task_poll(&bench.scheduler, || {
            let mut since = bench.enter(1, &mut None).expect("a free lane");
            // Another worker's call of the same guest comes to wait.
            assert!(bench.scheduler.enter(1, &mut other, &other_waker).is_none());
            for _ in 0..3 {
                bench.hold(1, since, Duration::from_micros(100));
                assert_eq!(bench.scheduler.state.lock().kept.len(), 1);
                since = bench
                    .enter(1, &mut None)
                    .expect("the task's next call takes the lane kept for it");
            }
            bench.hold(1, since, Duration::from_micros(100));
            assert_eq!(other_woken.0.load(Ordering::SeqCst), 0, "not yet");
        });
        // The poll ended: the lane goes to the waiting call.
        assert_eq!(other_woken.0.load(Ordering::SeqCst), 1);
        let state = bench.scheduler.state.lock();
        assert!(state.kept.is_empty());
        assert!(state.granted.contains_key(&other.unwrap()));
        assert_eq!(state.used(1), 400_000, "every call's time is counted");
    }

    #[test]
    fn a_task_keeps_its_lane_for_at_most_the_keep_limit() {
        let bench = Bench::new(1);
        let (other_woken, other_waker) = waker();
        let mut other = None;
        let held = KEEP_LIMIT / 3 + Duration::from_micros(1);
        in_task_poll(&bench.scheduler, || {
            let mut since = bench.enter(1, &mut None).expect("a free lane");
            assert!(bench.scheduler.enter(1, &mut other, &other_waker).is_none());
            for _ in 0..2 {
                bench.hold(1, since, held);
                since = bench.enter(1, &mut None).expect("kept");
            }
            // The third call takes the task's run past the limit.
            bench.hold(1, since, held);
            assert_eq!(other_woken.0.load(Ordering::SeqCst), 1, "handed on");
            assert!(
                bench.enter(1, &mut None).is_none(),
                "the task's next call waits its turn"
            );
        });
    }

    #[test]
    fn a_lane_is_not_kept_from_a_less_served_guest_and_a_quiet_arrival_takes_it_back() {
        let bench = Bench::new(1);
        let (woken, w) = waker();
        // Guest 2 waits, less served: a call of guest 1 that ends hands
        // the lane to it, in a task's poll too.
        let mut two = None;
        let mut next = None;
        in_task_poll(&bench.scheduler, || {
            let since = bench.enter(1, &mut None).expect("a free lane");
            assert!(bench.scheduler.enter(2, &mut two, &w).is_none());
            bench.hold(1, since, Duration::from_micros(100));
            assert!(bench.scheduler.state.lock().kept.is_empty());
            assert_eq!(woken.0.load(Ordering::SeqCst), 1);
            assert!(bench.enter(1, &mut next).is_none());
        });
        // That next call goes away.
        bench.scheduler.cancel(1, next.expect("it waited"));
        let since = bench.scheduler.enter(2, &mut two, &w).expect("handed");
        bench.hold(2, since, Duration::from_micros(50));
        // Guest 1 keeps the lane for its task's next call; guest 2, now
        // less served, arrives before that call and takes it at once.
        let mut waiting = None;
        in_task_poll(&bench.scheduler, || {
            let since = bench.enter(1, &mut None).expect("a free lane");
            assert!(bench.scheduler.enter(1, &mut waiting, &w).is_none());
            bench.hold(1, since, Duration::from_micros(100));
            assert_eq!(bench.scheduler.state.lock().kept.len(), 1);
            let since = bench
                .enter(2, &mut None)
                .expect("a quiet arrival takes a kept lane");
            assert!(bench.scheduler.state.lock().kept.is_empty());
            assert!(bench.enter(1, &mut None).is_none(), "no lane is kept");
            bench.hold(2, since, Duration::from_micros(10));
        });
        let state = bench.scheduler.state.lock();
        assert_eq!(state.free + state.granted.len(), 1, "the lane came back");
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
    async fn spinners_of_one_guest_get_the_share_of_one_guest() {
        // Eight spinning calls of guest 1 and one of guest 2 on one lane:
        // guest 2 runs about as often as all of guest 1 together.
        let scheduler = Scheduler::new(1, SystemClock::shared(), None);
        let hostile = Arc::new(AtomicUsize::new(0));
        let quiet = Arc::new(AtomicUsize::new(0));
        let (hostile_spent, quiet_spent) =
            (Arc::<AtomicU64>::default(), Arc::<AtomicU64>::default());
        let mut calls = Vec::new();
        for _ in 0..8 {
            calls.push(tokio::spawn(scheduler.fair(
                1,
                Arc::clone(&hostile_spent),
                Spin(Arc::clone(&hostile)),
            )));
        }
        calls.push(tokio::spawn(scheduler.fair(
            2,
            Arc::clone(&quiet_spent),
            Spin(Arc::clone(&quiet)),
        )));
        while quiet.load(Ordering::SeqCst) < 2_000 {
            tokio::task::yield_now().await;
        }
        for call in &calls {
            call.abort();
        }
        for call in calls {
            let _ = call.await;
        }
        let (hostile, quiet) = (hostile.load(Ordering::SeqCst), quiet.load(Ordering::SeqCst));
        assert!(
            hostile < quiet * 2,
            "eight spinners of one guest ran {hostile} times, the other guest {quiet}"
        );
        // Each poll spins at least 20 µs on its lane, all of it counted.
        let (hostile_spent, quiet_spent) = (
            Duration::from_nanos(hostile_spent.load(Ordering::SeqCst)),
            Duration::from_nanos(quiet_spent.load(Ordering::SeqCst)),
        );
        assert!(
            quiet_spent >= Duration::from_micros(20) * quiet as u32,
            "{quiet_spent:?}"
        );
        assert!(
            hostile_spent >= Duration::from_micros(20) * hostile as u32,
            "{hostile_spent:?}"
        );
        let state = scheduler.state.lock();
        assert_eq!(state.free, 1, "the lane came back");
        assert!(state.turns.is_empty() && state.waiting.is_empty() && state.granted.is_empty());
    }

    /// A call that spins a little on its lane and ends; one made with
    /// `yields` first yields once, as guest code does at a tick.
    struct Short {
        yielded: bool,
        yields: bool,
    }

    impl Future for Short {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            let until = Instant::now() + Duration::from_micros(2);
            while Instant::now() < until {
                std::hint::spin_loop();
            }
            if self.yields && !self.yielded {
                self.yielded = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            Poll::Ready(())
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 3)]
    async fn workers_of_many_guests_keeping_lanes_all_finish_and_give_every_lane_back() {
        // Two lanes; nine workers of three guests, each making its calls
        // one after another in a task, some of them yielding: no wake is
        // lost, kept lanes included, and every lane comes back.
        let scheduler = Scheduler::new(2, SystemClock::shared(), None);
        let calls = Arc::new(AtomicUsize::new(0));
        let mut workers = Vec::new();
        for worker in 0..9u64 {
            let (scheduler, calls) = (Arc::clone(&scheduler), Arc::clone(&calls));
            let guest = worker % 3;
            workers.push(tokio::spawn(scheduler.clone().task(async move {
                for call in 0..300u64 {
                    let spent = Arc::<AtomicU64>::default();
                    let yields = (call + worker) % 7 == 0;
                    let short = Short {
                        yielded: false,
                        yields,
                    };
                    scheduler.fair(guest, spent, short).await;
                    calls.fetch_add(1, Ordering::SeqCst);
                    if call % 50 == 0 {
                        tokio::task::yield_now().await;
                    }
                }
            })));
        }
        for worker in workers {
            tokio::time::timeout(Duration::from_secs(60), worker)
                .await
                .expect("every worker finishes")
                .unwrap();
        }
        assert_eq!(calls.load(Ordering::SeqCst), 9 * 300);
        let state = scheduler.state.lock();
        assert_eq!(state.free, 2, "every lane came back");
        assert!(state.kept.is_empty() && state.granted.is_empty() && state.waiting.is_empty());
        assert_eq!(state.running_count(), 0);
    }

    #[derive(Debug, Clone)]
    enum Step {
        /// A new call of a guest asks for a lane.
        Arrive(u8),
        /// The n-th idle call (modulo those) is polled: it asks again.
        Poll(usize),
        /// The n-th running call ends its poll after some microseconds.
        Leave(usize, u16),
        /// The n-th idle call (modulo those) is dropped.
        Drop(usize),
        /// The n-th running call ends its poll after some microseconds in
        /// a task's poll, and the task's next call of that guest arrives
        /// in the same poll or not.
        InTask(usize, u16, bool),
    }

    fn step() -> impl Strategy<Value = Step> {
        prop_oneof![
            (0u8..4).prop_map(Step::Arrive),
            any::<usize>().prop_map(Step::Poll),
            (any::<usize>(), any::<u16>()).prop_map(|(n, us)| Step::Leave(n, us)),
            any::<usize>().prop_map(Step::Drop),
            (any::<usize>(), any::<u16>(), any::<bool>())
                .prop_map(|(n, us, again)| Step::InTask(n, us, again)),
        ]
    }

    proptest! {
        /// Whatever the order of arrivals, polls, leaves and drops: lanes
        /// are never over-used nor lost, a free lane never idles while a
        /// call waits, a lane is handed to the least-served waiting guest,
        /// no active guest is more than the idle credit behind the floor,
        /// none stays kept once its task's poll ended, and once every call
        /// is gone every lane is free.
        #[test]
        fn lanes_are_conserved_and_go_to_the_least_served(
            lanes in 1usize..4,
            steps in proptest::collection::vec(step(), 1..200),
        ) {
            let bench = Bench::new(lanes);
            // (guest, ticket) of calls not running; running calls apart.
            let mut idle: Vec<(GuestId, Option<u64>)> = Vec::new();
            let mut running: Vec<(GuestId, Instant)> = Vec::new();
            for step in steps {
                match step {
                    Step::Arrive(guest) => {
                        let mut ticket = None;
                        match bench.enter(u64::from(guest), &mut ticket) {
                            Some(since) => running.push((u64::from(guest), since)),
                            None => idle.push((u64::from(guest), ticket)),
                        }
                    }
                    Step::Poll(n) if !idle.is_empty() => {
                        let (guest, mut ticket) = idle.remove(n % idle.len());
                        match bench.enter(guest, &mut ticket) {
                            Some(since) => running.push((guest, since)),
                            None => idle.push((guest, ticket)),
                        }
                    }
                    Step::Leave(n, micros) if !running.is_empty() => {
                        let (guest, since) = running.remove(n % running.len());
                        let (granted, waiting): (HashSet<u64>, Vec<GuestId>) = {
                            let state = bench.scheduler.state.lock();
                            (
                                state.granted.keys().copied().collect(),
                                state.turns.iter().copied().collect(),
                            )
                        };
                        bench.hold(guest, since, Duration::from_micros(u64::from(micros)));
                        idle.push((guest, None));
                        let state = bench.scheduler.state.lock();
                        if !waiting.is_empty() {
                            // The lane went to a waiting call (which guest's:
                            // the invariants below check the least-served).
                            let handed = state.granted.keys().filter(|t| !granted.contains(t));
                            prop_assert!(handed.count() >= 1);
                        }
                    }
                    Step::InTask(n, micros, again) if !running.is_empty() => {
                        let (guest, since) = running.remove(n % running.len());
                        in_task_poll(&bench.scheduler, || {
                            bench.hold(guest, since, Duration::from_micros(u64::from(micros)));
                            idle.push((guest, None));
                            let state = bench.scheduler.state.lock();
                            let taken = state.running_count() + state.granted.len() + state.kept.len();
                            assert_eq!(state.free + taken, lanes, "a lane kept is a lane");
                            drop(state);
                            if again {
                                let mut ticket = None;
                                match bench.enter(guest, &mut ticket) {
                                    Some(since) => running.push((guest, since)),
                                    None => idle.push((guest, ticket)),
                                }
                            }
                        });
                    }
                    Step::Drop(n) if !idle.is_empty() => {
                        let (guest, ticket) = idle.remove(n % idle.len());
                        if let Some(ticket) = ticket {
                            bench.scheduler.cancel(guest, ticket);
                        }
                    }
                    _ => {}
                }
                let state = bench.scheduler.state.lock();
                prop_assert_eq!(state.running_count(), running.len());
                prop_assert!(state.running_count() <= lanes);
                prop_assert!(state.kept.is_empty(), "a lane stays kept after its task's poll");
                prop_assert_eq!(state.free + state.running_count() + state.granted.len(), lanes);
                let waiting: usize = state.waiting.values().map(VecDeque::len).sum();
                prop_assert!(state.free == 0 || waiting == 0, "a lane idles while calls wait");
                prop_assert_eq!(state.turns.len(), state.waiting.len());
                // No active guest is more than the idle credit behind the
                // floor: none hoards lane time it did not use.
                let credit = u64::try_from(IDLE_CREDIT.as_nanos()).unwrap();
                let active = state
                    .running
                    .keys()
                    .chain(state.waiting.keys())
                    .chain(state.granted.values().map(|grant| &grant.guest));
                for guest in active {
                    prop_assert!(state.used(*guest) + credit >= state.floor);
                }
                // No lane stays handed to a guest that has used more than
                // one still waiting.
                if let Some(least) = state.turns.iter().map(|g| state.used(*g)).min() {
                    for grant in state.granted.values() {
                        prop_assert!(state.used(grant.guest) <= least);
                    }
                }
            }
            for (guest, since) in running.drain(..) {
                bench.scheduler.leave(guest, since, None);
            }
            for (guest, ticket) in idle.drain(..) {
                if let Some(ticket) = ticket {
                    bench.scheduler.cancel(guest, ticket);
                }
            }
            let state = bench.scheduler.state.lock();
            prop_assert_eq!(state.free, lanes);
            prop_assert!(state.granted.is_empty() && state.waiting.is_empty());
        }
    }
}
