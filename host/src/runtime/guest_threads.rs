//! The threads guest code runs on: a tokio runtime of their own, apart from
//! the host's, at the priority the operator chooses ([`GuestPriority`]).
//! Guest code that runs to the end of its tick then holds one of these
//! threads, never one the host's own tasks (informers, API calls, probes,
//! metrics) wait for; at `idle` the kernel also runs the host's threads
//! first when both want a CPU. Host calls that do I/O
//! are sent back to the host's runtime (the caller of [`Runtime::new`]),
//! so connections and their tasks stay on the host's threads.
//!
//! [`Runtime::new`]: super::Runtime::new

use std::future::Future;
use std::str::FromStr;

use tokio::runtime::Handle;

/// How the kernel ranks guest threads against the host's
/// (`--guest-priority`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum GuestPriority {
    /// `SCHED_IDLE`: guest code runs when no host thread (nor any other
    /// thread at normal priority in the host's cgroup) wants the CPU. In
    /// a container of its own the host's threads come first; on a machine
    /// shared with other busy processes guests may wait long.
    Idle,
    /// The host's own priority: the kernel shares the CPUs evenly.
    #[default]
    Normal,
}

impl FromStr for GuestPriority {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        match text {
            "idle" => Ok(GuestPriority::Idle),
            "normal" => Ok(GuestPriority::Normal),
            other => Err(format!(
                "unknown guest priority {other:?}: expected idle or normal"
            )),
        }
    }
}

impl GuestPriority {
    /// Gives the calling thread this priority (Linux only; elsewhere guest
    /// threads keep the host's).
    fn apply(self) {
        if self == GuestPriority::Normal || !cfg!(target_os = "linux") {
            return;
        }
        #[cfg(target_os = "linux")]
        self.lower();
    }

    #[cfg(target_os = "linux")]
    fn lower(self) {
        // SAFETY: `sched_param` is plain integers, all zero a valid value
        // (priority 0, the only one SCHED_IDLE takes; musl's has more
        // fields than glibc's); `sched_setscheduler` reads it only, and
        // pid 0 is the calling thread.
        let result = unsafe {
            let param: libc::sched_param = std::mem::zeroed();
            libc::sched_setscheduler(0, libc::SCHED_IDLE, &param)
        };
        if result != 0 {
            tracing::warn!(
                error = %std::io::Error::last_os_error(),
                "cannot lower a guest thread's priority; guest code runs at the host's"
            );
        }
    }
}

/// The guest threads and the host's runtime that their I/O goes back to.
pub(crate) struct GuestThreads {
    /// `None` only while dropping.
    runtime: Option<tokio::runtime::Runtime>,
    host: Handle,
}

impl GuestThreads {
    /// Starts `threads` guest threads at `priority`; the caller's tokio
    /// runtime is the host's.
    pub(crate) fn start(
        threads: usize,
        priority: GuestPriority,
    ) -> Result<GuestThreads, std::io::Error> {
        let host = Handle::try_current().map_err(std::io::Error::other)?;
        let runtime = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(threads.max(1))
            .thread_name("recon-guest")
            .on_thread_start(move || priority.apply())
            .enable_all()
            .build()?;
        Ok(GuestThreads {
            runtime: Some(runtime),
            host,
        })
    }

    /// Where guest calls are spawned.
    pub(crate) fn handle(&self) -> &Handle {
        self.runtime
            .as_ref()
            .expect("the guest threads run until dropped")
            .handle()
    }

    /// Runs `task` on the guest threads and waits for its output; dropping
    /// the wait drops the task at its next yield. A panic in `task` goes on
    /// in the caller.
    pub(crate) async fn run<T: Send + 'static>(
        &self,
        task: impl Future<Output = T> + Send + 'static,
    ) -> T {
        join(self.handle().spawn(task))
            .await
            .expect("the guest threads outlive the waits on them")
    }

    /// The host's runtime, where host calls that do I/O run ([`on_host`]).
    pub(crate) fn host(&self) -> &Handle {
        &self.host
    }
}

/// Runs `task`, a host call that does I/O, on `host` (the host's runtime)
/// and waits for its output, as [`GuestThreads::run`] does; `None` when
/// the host's runtime is shutting down and dropped the task.
pub(crate) async fn on_host<T: Send + 'static>(
    host: &Handle,
    task: impl Future<Output = T> + Send + 'static,
) -> Option<T> {
    join(host.spawn(task)).await
}

/// Waits for `task`, aborting it when the wait is dropped; `None` when its
/// runtime shut down first (only this guard aborts, and only once nothing
/// waits).
async fn join<T>(task: tokio::task::JoinHandle<T>) -> Option<T> {
    let mut task = AbortOnDrop(task);
    match (&mut task.0).await {
        Ok(output) => Some(output),
        Err(error) => match error.try_into_panic() {
            Ok(panic) => std::panic::resume_unwind(panic),
            Err(_) => None,
        },
    }
}

struct AbortOnDrop<T>(tokio::task::JoinHandle<T>);

impl<T> Drop for AbortOnDrop<T> {
    fn drop(&mut self) {
        self.0.abort();
    }
}

impl Drop for GuestThreads {
    fn drop(&mut self) {
        // The last holder may be a task of an async runtime: blocking for
        // the threads to end is not allowed there.
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

#[cfg(all(test, target_os = "linux"))]
mod tests {
    use super::*;

    fn priority_of_this_thread() -> i32 {
        // SAFETY: no arguments to read or write.
        unsafe { libc::sched_getscheduler(0) }
    }

    #[tokio::test]
    async fn guest_code_runs_on_idle_threads_and_io_on_the_host() {
        let threads = GuestThreads::start(1, GuestPriority::Idle).unwrap();
        let host_thread = std::thread::current().id();
        let (policy, on_host) = threads
            .run({
                let host = threads.host().clone();
                async move {
                    let on_host = on_host(&host, async move {
                        (std::thread::current().id(), priority_of_this_thread())
                    });
                    (priority_of_this_thread(), on_host.await.unwrap())
                }
            })
            .await;
        assert_eq!(policy, libc::SCHED_IDLE);
        assert_eq!(on_host, (host_thread, libc::SCHED_OTHER));
    }

    #[tokio::test]
    async fn normal_guest_threads_keep_the_hosts_priority() {
        let threads = GuestThreads::start(1, GuestPriority::Normal).unwrap();
        let policy = threads.run(async { priority_of_this_thread() }).await;
        assert_eq!(policy, libc::SCHED_OTHER);
    }

    #[tokio::test]
    async fn a_panic_on_a_guest_thread_goes_on_in_the_caller() {
        let threads = GuestThreads::start(1, GuestPriority::Normal).unwrap();
        let caught =
            tokio::spawn(async move { threads.run(async { panic!("guest-side bug") }).await })
                .await
                .unwrap_err();
        assert_eq!(
            caught.into_panic().downcast_ref::<&str>(),
            Some(&"guest-side bug")
        );
    }

    #[tokio::test]
    async fn a_dropped_wait_ends_its_task() {
        let threads = GuestThreads::start(1, GuestPriority::Normal).unwrap();
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        let mut wait = Box::pin(threads.run(async move {
            let _tx = tx;
            std::future::pending::<()>().await
        }));
        // Polled once so the task is spawned, then dropped.
        assert!(futures::poll!(&mut wait).is_pending());
        drop(wait);
        assert!(rx.await.is_err(), "the task and its sender were dropped");
    }
}
