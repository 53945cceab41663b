//! The runtime the benchmarks run in, their options given as `--FLAG=VALUE`,
//! what every benchmark prints about the machine it ran on, the re-run of
//! a benchmark in a fresh process for a figure of its own, a process's
//! memory as `/proc` tells it, and the benchmarks' Pods of the shared
//! fixture's shape.

// Each benchmark uses part of this module.
#![allow(dead_code)]

use std::process::Command;

use recon_devserver::store::{Store, Subresource};
use serde_json::{Value, json};

/// The multi-threaded tokio runtime, with its I/O and time drivers, that
/// a benchmark runs in.
pub fn tokio_runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio")
}

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

/// The text given on the command line as `FLAG=TEXT` (`flag` ends in `=`).
pub fn text(flag: &str) -> Option<String> {
    std::env::args().find_map(|a| a.strip_prefix(flag).map(str::to_string))
}

/// The count given on the command line as `FLAG=N` (`flag` ends in `=`).
pub fn number(flag: &str) -> Option<usize> {
    text(flag).map(|n| n.parse::<usize>().expect("a count"))
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
    process_status_bytes("self", field).unwrap_or_else(|| panic!("a {field} line"))
}

/// A `kB` line of `/proc/PROCESS/status` (`self`, or a pid), in bytes;
/// `None` once the process is gone.
pub fn process_status_bytes(process: &str, field: &str) -> Option<usize> {
    let status = std::fs::read_to_string(format!("/proc/{process}/status")).ok()?;
    let kib = status
        .lines()
        .find_map(|l| l.strip_prefix(field))?
        .trim()
        .trim_end_matches("kB")
        .trim()
        .parse::<usize>()
        .ok()?;
    Some(kib * 1024)
}

/// Pod `i` of the benchmarks' Pods, from the fixture `template`: its
/// namespace (one of 100), name, uid, `app` label (one of 50) and a
/// `bench/revision` annotation vary.
pub fn fixture_pod(template: &mut Value, i: usize, revision: usize) -> Value {
    let metadata = &mut template["metadata"];
    metadata["namespace"] = json!(format!("perf-{}", i % 100));
    metadata["name"] = json!(format!("svc-{}-{i:06}", i % 50));
    metadata["uid"] = json!(format!("00000000-0000-4000-8000-{i:012}"));
    metadata["labels"]["app"] = json!(format!("svc-{}", i % 50));
    metadata["annotations"]["bench/revision"] = json!(revision.to_string());
    template.clone()
}

/// Creates `count` fixture Pods in the dev server's `store` (and their 100
/// namespaces), each with the fixture's status written as a kubelet writes
/// it, after the create.
pub fn create_fixture_pods(store: &Store, count: usize) {
    let mut template: Value =
        serde_json::from_str(include_str!("../../testdata/pod.json")).expect("the fixture parses");
    let pods = store.resource_type("", "v1", "pods").expect("served");
    let namespaces = store.resource_type("", "v1", "namespaces").expect("served");
    for n in 0..100 {
        let _ = store.create(
            &namespaces,
            None,
            json!({"metadata": {"name": format!("perf-{n}")}}),
            None,
        );
    }
    for i in 0..count {
        let mut body = fixture_pod(&mut template, i, 0);
        let metadata = body["metadata"].as_object_mut().expect("metadata");
        metadata.remove("resourceVersion");
        metadata.remove("uid");
        let namespace = format!("perf-{}", i % 100);
        let status = body["status"].take();
        let mut created = store
            .create(&pods, Some(&namespace), body, None)
            .expect("pod");
        created["status"] = status;
        let name = created["metadata"]["name"]
            .as_str()
            .expect("a name")
            .to_owned();
        store
            .update(
                &pods,
                Some(&namespace),
                &name,
                created,
                Some(Subresource::Status),
            )
            .expect("pod status");
    }
}
