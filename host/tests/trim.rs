//! The host gives the heap memory a burst freed back to the system: a test
//! binary of its own, so no other test allocates while its RSS is read.

use recon_host::ops::memory::{TRIM_SLACK, Trimmer, free_heap};

fn rss() -> usize {
    let status = std::fs::read_to_string("/proc/self/status").unwrap();
    let kib: usize = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap();
    kib * 1024
}

#[test]
#[cfg_attr(
    not(all(target_os = "linux", target_env = "gnu")),
    ignore = "glibc only"
)]
fn memory_freed_below_live_allocations_goes_back_to_the_system() {
    let mut trimmer = Trimmer::default();
    trimmer.trim();
    // 64 MiB in 1 KiB blocks, one in 64 kept: what is freed lies between
    // live blocks, below the heap's top, where free() keeps it.
    let mut blocks: Vec<Vec<u8>> = (0..65_536).map(|i| vec![i as u8; 1024]).collect();
    let kept: Vec<Vec<u8>> = blocks.iter_mut().step_by(64).map(std::mem::take).collect();
    drop(blocks);
    let free = free_heap().unwrap();
    assert!(free > 4 * TRIM_SLACK, "{free} bytes free");
    let before = rss();
    let freed = trimmer.trim().expect("63 MiB freed since the last trim");
    let after = rss();
    assert!(freed >= 48 << 20, "{freed} bytes free");
    assert!(
        before.saturating_sub(after) >= 32 << 20,
        "RSS went from {before} to {after} bytes"
    );
    // Nothing more was freed since: no trim.
    assert_eq!(trimmer.trim(), None);
    // What was kept is intact.
    assert!(kept.iter().enumerate().all(|(i, b)| b[0] == (64 * i) as u8));
}
