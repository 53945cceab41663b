//! What the guests of one host reserve, checked before any of them runs.
//! Each worker holds at most one instance, so a guest's workers are its
//! instance slots: the guests' workers together must fit the runtime's
//! slots (`--max-instances`), and a guest can never take another's. Each
//! instance may grow to `--max-memory` of linear memory while the host
//! holds one cache answer of up to `--max-read-size` for it, so a guest
//! reserves `workers × (max-memory + max-read-size)` bytes; that must fit
//! the per-guest budget (`--guest-memory-budget`) and, for all guests
//! together, the host-wide one (`--memory-budget`, by default three
//! quarters of the memory limit of the host's cgroup when it has one).

use std::path::{Path, PathBuf};

use super::Guest;

/// What the guests' reservations must fit.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct MemoryBudget {
    /// All guests together, in bytes; `None`: no host-wide budget.
    pub total: Option<usize>,
    /// Each guest, in bytes; `None`: only the host-wide budget.
    pub per_guest: Option<usize>,
    /// The cgroup memory limit `total` was derived from, if it was.
    pub cgroup_limit: Option<usize>,
}

impl MemoryBudget {
    /// The operator's budgets; without a host-wide one, three quarters of
    /// the cgroup's memory limit `cgroup_limit` (the rest is the host's
    /// own: caches, buffers), if there is one.
    pub fn new(
        total: Option<usize>,
        per_guest: Option<usize>,
        cgroup_limit: Option<usize>,
    ) -> MemoryBudget {
        match total {
            Some(total) => MemoryBudget {
                total: Some(total),
                per_guest,
                cgroup_limit: None,
            },
            None => MemoryBudget {
                total: cgroup_limit.map(|limit| limit / 4 * 3),
                per_guest,
                cgroup_limit,
            },
        }
    }
}

/// Why the guests' reservations do not fit.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum BudgetError {
    /// More workers than instance slots.
    #[error(
        "the guests' workers need {needed} instance slots ({per_guest}) but --max-instances is {slots}: lower --max-workers or --workers, or raise --max-instances"
    )]
    Slots {
        /// Workers of all guests.
        needed: usize,
        /// `name: workers` of each guest.
        per_guest: String,
        /// The runtime's slots.
        slots: usize,
    },
    /// One guest's reservation is over the per-guest budget.
    #[error(
        "guest {guest} reserves {needed} bytes ({workers} workers × (--max-memory {max_memory} + --max-read-size {max_read})), over --guest-memory-budget {budget}: lower its workers or --max-memory, or raise the budget"
    )]
    Guest {
        /// The guest.
        guest: String,
        /// Its workers.
        workers: usize,
        /// What it reserves.
        needed: usize,
        /// Linear memory per instance.
        max_memory: usize,
        /// The largest cache answer.
        max_read: usize,
        /// The budget.
        budget: usize,
    },
    /// All guests' reservations are over the host-wide budget.
    #[error(
        "the guests reserve {needed} bytes ({per_guest}), over --memory-budget {budget}{origin}: lower --max-workers, --workers or --max-memory, or raise the budget"
    )]
    Total {
        /// What all guests reserve.
        needed: usize,
        /// `name: bytes` of each guest.
        per_guest: String,
        /// The budget.
        budget: usize,
        /// Where the budget came from, when not from the flag.
        origin: String,
    },
}

/// Checks that `guests`, each with its number of workers, fit the slots
/// and memory budgets of their runtime.
pub fn check_budget(guests: &[(&Guest, usize)]) -> Result<(), BudgetError> {
    let Some((first, _)) = guests.first() else {
        return Ok(());
    };
    let config = first.runtime_config();
    let slots = config.max_instances as usize;
    let needed: usize = guests.iter().map(|(_, workers)| workers).sum();
    let list = |value: &dyn Fn(usize) -> usize| {
        guests
            .iter()
            .map(|(guest, workers)| format!("{}: {}", guest.name(), value(*workers)))
            .collect::<Vec<_>>()
            .join(", ")
    };
    if needed > slots {
        return Err(BudgetError::Slots {
            needed,
            per_guest: list(&|workers| workers),
            slots,
        });
    }
    let max_memory = config.max_memory;
    let max_read = config.limits.max_read_size;
    let per_worker = max_memory.saturating_add(max_read);
    if let Some(budget) = config.memory_budget.per_guest {
        for (guest, workers) in guests {
            let reserved = workers.saturating_mul(per_worker);
            if reserved > budget {
                return Err(BudgetError::Guest {
                    guest: guest.name().to_string(),
                    workers: *workers,
                    needed: reserved,
                    max_memory,
                    max_read,
                    budget,
                });
            }
        }
    }
    if let Some(budget) = config.memory_budget.total {
        let reserved = needed.saturating_mul(per_worker);
        if reserved > budget {
            return Err(BudgetError::Total {
                needed: reserved,
                per_guest: list(&|workers| workers.saturating_mul(per_worker)),
                budget,
                origin: match config.memory_budget.cgroup_limit {
                    None => String::new(),
                    Some(limit) => {
                        format!(" (three quarters of the cgroup's memory limit of {limit} bytes)")
                    }
                },
            });
        }
    }
    Ok(())
}

/// The memory limit of this process's cgroup (v2 `memory.max`, v1
/// `memory.limit_in_bytes`), the smallest along its path; `None` when there
/// is none.
pub fn cgroup_memory_limit() -> Option<usize> {
    let cgroups = std::fs::read_to_string("/proc/self/cgroup").ok()?;
    memory_limit(&cgroups, Path::new("/sys/fs/cgroup"), |path| {
        std::fs::read_to_string(path).ok()
    })
}

/// Limits at or above this are "no limit" (cgroup v1 writes a page-rounded
/// `i64::MAX`).
const UNLIMITED: u64 = 1 << 62;

/// The smallest memory limit along the cgroup paths of `/proc/self/cgroup`
/// (`cgroups`), reading files under `root` with `read`.
fn memory_limit(
    cgroups: &str,
    root: &Path,
    read: impl Fn(&Path) -> Option<String>,
) -> Option<usize> {
    let mut dirs: Vec<(PathBuf, &str)> = Vec::new();
    for line in cgroups.lines() {
        let mut fields = line.splitn(3, ':');
        let (Some(_), Some(controllers), Some(path)) =
            (fields.next(), fields.next(), fields.next())
        else {
            continue;
        };
        let path = path.trim_start_matches('/');
        if controllers.is_empty() {
            dirs.push((root.join(path), "memory.max"));
            dirs.push((root.join("unified").join(path), "memory.max"));
        } else if controllers.split(',').any(|c| c == "memory") {
            dirs.push((root.join("memory").join(path), "memory.limit_in_bytes"));
        }
    }
    dirs.iter()
        .flat_map(|(dir, file)| dir.ancestors().map(move |d| d.join(file)))
        .filter_map(|file| read(&file))
        .filter_map(|text| text.trim().parse::<u64>().ok())
        .filter(|limit| *limit < UNLIMITED)
        .min()
        .and_then(|limit| usize::try_from(limit).ok())
}

#[cfg(test)]
mod tests {
    use std::collections::HashMap;

    use super::*;

    fn files(entries: &[(&str, &str)]) -> impl Fn(&Path) -> Option<String> {
        let map: HashMap<PathBuf, String> = entries
            .iter()
            .map(|(p, v)| (PathBuf::from(p), v.to_string()))
            .collect();
        move |path| map.get(path).cloned()
    }

    #[test]
    fn cgroup_v2_limits_are_read_along_the_path() {
        let root = Path::new("/sys/fs/cgroup");
        let read = files(&[
            ("/sys/fs/cgroup/kubepods/pod1/memory.max", "268435456\n"),
            ("/sys/fs/cgroup/kubepods/memory.max", "max\n"),
        ]);
        assert_eq!(
            memory_limit("0::/kubepods/pod1\n", root, &read),
            Some(256 << 20)
        );
        // A container whose cgroup namespace makes its own cgroup the root.
        let read = files(&[("/sys/fs/cgroup/memory.max", "134217728")]);
        assert_eq!(memory_limit("0::/\n", root, read), Some(128 << 20));
        let read = files(&[("/sys/fs/cgroup/memory.max", "max")]);
        assert_eq!(memory_limit("0::/\n", root, read), None);
    }

    #[test]
    fn cgroup_v1_limits_are_read_and_the_smallest_wins() {
        let root = Path::new("/sys/fs/cgroup");
        let read = files(&[
            (
                "/sys/fs/cgroup/memory/process_api/abc/memory.limit_in_bytes",
                "9223372036854771712",
            ),
            (
                "/sys/fs/cgroup/memory/process_api/memory.limit_in_bytes",
                "1073741824",
            ),
            (
                "/sys/fs/cgroup/memory/memory.limit_in_bytes",
                "9223372036854771712",
            ),
        ]);
        let cgroups = "9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu,cpuacct:/\n0::/\n";
        assert_eq!(memory_limit(cgroups, root, &read), Some(1 << 30));
        assert_eq!(memory_limit("4:memory:/\n", root, &read), None);
        assert_eq!(memory_limit("garbage\n\n", root, &read), None);
    }

    #[test]
    fn the_default_budget_leaves_a_quarter_of_the_cgroup_to_the_host() {
        let derived = MemoryBudget::new(None, None, Some(256 << 20));
        assert_eq!(derived.total, Some(192 << 20));
        assert_eq!(derived.cgroup_limit, Some(256 << 20));
        let set = MemoryBudget::new(Some(1 << 30), Some(1 << 20), Some(256 << 20));
        assert_eq!(set.total, Some(1 << 30), "the flag wins");
        assert_eq!(set.cgroup_limit, None);
        assert_eq!(set.per_guest, Some(1 << 20));
        assert_eq!(MemoryBudget::new(None, None, None), MemoryBudget::default());
    }
}
