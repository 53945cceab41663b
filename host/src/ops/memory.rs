//! Giving freed heap memory back to the system.
//!
//! glibc's allocator returns memory to the kernel only from the top of its
//! heap: what a burst freed below allocations that live on stays in the
//! process's RSS. After an initial sync each guest's queue, its metrics'
//! maps and its rate limiter hold an entry per key; once the queue drains
//! they free it all (`workqueue/give_back.rs`), and glibc keeps it, about
//! 3 MiB per guest over 30,000 keys. Every [`TRIM_INTERVAL`] the host asks
//! the allocator how much it holds free and, [`TRIM_SLACK`] above what it
//! held after the last trim, has it return its free pages (`malloc_trim`;
//! tested in `tests/trim.rs`, a process of its own, where no other test
//! allocates while RSS is read). Other allocators (musl's, in the operator
//! image) return memory by themselves: there this does nothing.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::clock::SharedClock;

/// How often the allocator's free memory is looked at.
pub const TRIM_INTERVAL: Duration = Duration::from_secs(10);

/// Free heap memory the allocator may keep before it is asked to give it
/// back: enough that a host at rest is not trimmed again and again.
pub const TRIM_SLACK: usize = 4 << 20;

/// The allocator's free memory, when it tells (glibc).
pub fn free_heap() -> Option<usize> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 reads the allocator's counters; no argument.
        let info = unsafe { libc::mallinfo2() };
        Some(info.fordblks)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    {
        None
    }
}

/// Asks the allocator to give back its free pages once it holds
/// [`TRIM_SLACK`] more free memory than after the last time (what it gave
/// back still counts as free: its pages are released, not its chunks).
#[derive(Debug, Default)]
pub struct Trimmer {
    /// Free memory after the last trim, or the least seen since.
    baseline: usize,
}

impl Trimmer {
    /// Trims when the allocator has freed [`TRIM_SLACK`] more since the
    /// last trim; the free bytes it then held.
    pub fn trim(&mut self) -> Option<usize> {
        let free = free_heap()?;
        if free <= self.baseline.saturating_add(TRIM_SLACK) {
            self.baseline = self.baseline.min(free);
            return None;
        }
        #[cfg(all(target_os = "linux", target_env = "gnu"))]
        // SAFETY: malloc_trim only releases free pages of the allocator's own.
        unsafe {
            libc::malloc_trim(0);
        }
        self.baseline = free;
        Some(free)
    }
}

/// Trims every [`TRIM_INTERVAL`] of `clock` until `stop`.
pub async fn run(clock: SharedClock, stop: CancellationToken) {
    if free_heap().is_none() {
        return;
    }
    let mut trimmer = Trimmer::default();
    loop {
        tokio::select! {
            () = stop.cancelled() => return,
            () = clock.sleep(TRIM_INTERVAL) => {}
        }
        if let Some(free) = trimmer.trim() {
            tracing::debug!(free, "gave the allocator's free memory back");
        }
    }
}
