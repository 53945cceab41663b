//! The initial sync as a user sees it: a `host run` process (release
//! build) caches a cluster's Pods for one guest, and this prints the time
//! from the process's start to `/readyz` 200 (every cache synced), its RSS
//! once ready and a few seconds later, its peak RSS over the whole run
//! (VmHWM), and its RSS per cached Pod: the difference from the same host
//! whose guest caches no Pods, divided by the Pods cached. Each variant
//! runs in a fresh host process, the guest compiled into the cache
//! before the first: the cache compressed (the default) and plain
//! (`--cache-compression false`), each also with the guest keeping the
//! Pods' managedFields (its manifest's `keep-managed-fields`).
//!
//! The cluster is the embedded dev API server holding [`COUNT`] Pods of
//! the shared fixture's shape (created first, each with the fixture's
//! status written as a kubelet writes it; `-- --pods N` for another
//! count), or, with `-- --kubeconfig PATH`, the cluster PATH names, with
//! whatever Pods it holds. The guest is the `hostile` test guest told (by
//! its `manifest.json`) to watch Pods, mapped by a label no Pod carries:
//! the host caches every Pod and reconciles none, so the figures are the
//! cache's. Printed as a table and as JSON lines; asserts nothing.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
#[path = "../tests/hosts/mod.rs"]
mod hosts;
mod support;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hosts::{Host, wait_for_status};
use recon_devserver::{DevServer, DevServerConfig};
use serde_json::json;

/// Pods the dev server holds by default.
const COUNT: usize = 100_000;

/// How long after `/readyz` the settled RSS is read.
const SETTLE: Duration = Duration::from_secs(3);

/// One host run's figures.
struct Run {
    ready: Duration,
    pods: usize,
    rss_ready: usize,
    rss_settled: usize,
    peak: usize,
}

/// Runs `host run` with the hostile guest (its manifest from `manifest`)
/// against `kubeconfig` with `extra` flags, until it is ready and settled.
fn run(scratch: &Path, kubeconfig: &Path, manifest: serde_json::Value, extra: &[&str]) -> Run {
    let dir = scratch.join(format!("guest-{}", fastrand::u64(..)));
    std::fs::create_dir_all(&dir).expect("the guest's directory");
    std::fs::write(dir.join("manifest.json"), manifest.to_string()).expect("manifest.json");
    let preopen = format!("{}::/hostile::ro", dir.display());
    let mut flags = vec!["--dir", &preopen, "--shutdown-timeout", "1s"];
    flags.extend(extra);
    let started = Instant::now();
    let mut host = Host::start("hostile", kubeconfig, &flags, &[]);
    let health = host.endpoint("/healthz");
    wait_for_status(health, "/readyz", 200);
    let ready = started.elapsed();
    let pid = host.pid().to_string();
    let rss = |field| support::process_status_bytes(&pid, field).unwrap_or(0);
    let rss_ready = rss("VmRSS:");
    std::thread::sleep(SETTLE);
    let rss_settled = rss("VmRSS:");
    let peak = rss("VmHWM:");
    let metrics = host.endpoint("/metrics");
    let pods = hosts::metric(metrics, r#"informer_objects{informer="v1/Pod"}"#) as usize;
    host.terminate();
    Run {
        ready,
        pods,
        rss_ready,
        rss_settled,
        peak,
    }
}

fn mib(bytes: usize) -> f64 {
    bytes as f64 / (1024.0 * 1024.0)
}

fn argument(name: &str) -> Option<String> {
    let arguments: Vec<String> = std::env::args().collect();
    arguments
        .iter()
        .position(|a| a == name)
        .and_then(|i| arguments.get(i + 1).cloned())
}

#[tokio::main]
async fn main() {
    let scratch = PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("sync-bench-{}", std::process::id()));
    std::fs::create_dir_all(&scratch).expect("a scratch directory");
    let (server, kubeconfig, cluster) = match argument("--kubeconfig") {
        Some(path) => (None, PathBuf::from(&path), path),
        None => {
            let count = argument("--pods").map_or(COUNT, |n| n.parse().expect("--pods N"));
            let server = DevServer::start(DevServerConfig::default())
                .await
                .expect("dev server");
            let started = Instant::now();
            support::create_fixture_pods(&server.store(), count);
            eprintln!(
                "created {count} Pods in {:.1} s",
                started.elapsed().as_secs_f64()
            );
            let kubeconfig = scratch.join("kubeconfig");
            server.write_kubeconfig(&kubeconfig).expect("kubeconfig");
            let cluster = format!("the dev API server with {count} fixture Pods");
            (Some(server), kubeconfig, cluster)
        }
    };
    println!("machine: {}", support::machine());
    println!("cluster: {cluster}; each row a fresh `host run` process");
    let watch_pods = json!({"watch-kind": ["", "v1", "Pod"]});
    let keep_managed_fields =
        json!({"watch-kind": ["", "v1", "Pod"], "watch-keeps-managed-fields": true});
    let plain: &[&str] = &["--cache-compression", "false"];
    let variants: [(&str, serde_json::Value, &[&str]); 5] = [
        ("no Pods cached (the baseline)", json!({}), &[]),
        ("Pods cached, compressed (default)", watch_pods.clone(), &[]),
        ("Pods cached, plain", watch_pods, plain),
        (
            "Pods with managedFields kept, compressed",
            keep_managed_fields.clone(),
            &[],
        ),
        (
            "Pods with managedFields kept, plain",
            keep_managed_fields,
            plain,
        ),
    ];
    let kubeconfig_for_runs = kubeconfig.clone();
    let runs: Vec<(&str, Run)> = tokio::task::spawn_blocking(move || {
        // Compile the guest into the cache first, so no row includes that.
        run(&scratch, &kubeconfig_for_runs, json!({}), &[]);
        variants
            .into_iter()
            .map(|(name, manifest, extra)| {
                (name, run(&scratch, &kubeconfig_for_runs, manifest, extra))
            })
            .collect()
    })
    .await
    .expect("the runs");
    let baseline = runs[0].1.rss_settled;
    println!(
        "| | start to /readyz | Pods cached | RSS ready | RSS settled | peak RSS | peak / settled | per cached Pod |"
    );
    for (name, run) in &runs {
        let per_pod = (run.pods > 0).then(|| run.rss_settled.saturating_sub(baseline) / run.pods);
        println!(
            "| {name} | {:.2} s | {} | {:.1} MiB | {:.1} MiB | {:.1} MiB | {:.2}x | {} |",
            run.ready.as_secs_f64(),
            run.pods,
            mib(run.rss_ready),
            mib(run.rss_settled),
            mib(run.peak),
            run.peak as f64 / run.rss_settled.max(1) as f64,
            per_pod.map_or("-".to_owned(), |b| format!("{b} B"))
        );
    }
    for (name, run) in &runs {
        println!(
            "{}",
            json!({
                "bench": "sync",
                "variant": name,
                "ready_seconds": run.ready.as_secs_f64(),
                "pods": run.pods,
                "rss_ready_bytes": run.rss_ready,
                "rss_settled_bytes": run.rss_settled,
                "peak_rss_bytes": run.peak,
                "per_pod_bytes": (run.pods > 0).then(|| run.rss_settled.saturating_sub(baseline) / run.pods),
            })
        );
    }
    if let Some(server) = server {
        server.shutdown().await;
    }
}
