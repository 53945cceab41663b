//! What every benchmark prints about the machine it ran on, the re-run of
//! a benchmark in a fresh process for a figure of its own, and that
//! process's memory as `/proc` tells it.

// Each benchmark uses part of this module.
#![allow(dead_code)]

use std::process::Command;

/// CPU count and model, e.g. `2 CPUs (AMD EPYC)`.
pub fn machine() -> String {
    let cpus = std::thread::available_parallelism().map_or(0, |n| n.get());
    let model = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|info| {
            info.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|m| m.trim().to_owned())
        })
        .unwrap_or_else(|| "unknown CPU".to_owned());
    format!("{cpus} CPUs ({model})")
}

/// Runs this benchmark again in a fresh process with the one argument
/// `arg`, and returns what it printed, trimmed.
pub fn rerun_with(arg: &str) -> String {
    let exe = std::env::current_exe().expect("the benchmark's own path");
    let out = Command::new(exe)
        .arg(arg)
        .output()
        .expect("the benchmark re-executes itself");
    assert!(out.status.success(), "the child {arg} failed: {out:?}");
    String::from_utf8(out.stdout)
        .expect("UTF-8")
        .trim()
        .to_owned()
}

/// A `kB` line of `/proc/self/status` (`VmRSS:`, `VmHWM:`), in bytes.
pub fn status_bytes(field: &str) -> usize {
    let status = std::fs::read_to_string("/proc/self/status").expect("/proc/self/status");
    status
        .lines()
        .find_map(|l| l.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        .unwrap_or_else(|| panic!("a {field} line"))
        * 1024
}
