//! Guest isolation under attack, measured the way an operator sees it: a
//! `host` process (release build) runs the `hostile` guest beside
//! `configmap-mirror` on the dev API server, and the neighbour's latency —
//! from creating a ConfigMap to its copy appearing in another namespace —
//! is measured quiet and under each attack the hostile guest mounts, with
//! the host's peak resident memory. Prints, asserts nothing.
//!
//! Attacks (the hostile guest's keys and `manifest.json`, see its docs):
//!
//! - spin: 8 workers in endless loops;
//! - sleep: 16 workers blocked in WASI sleeps.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
#[path = "../tests/hosts/mod.rs"]
mod hosts;
mod support;

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use hosts::{Host, wait_for_status};
use recon_host::devserver::store::{WatchEventKind, WatchParams};
use recon_host::devserver::{DevServer, DevServerConfig};
use serde_json::json;

/// ConfigMaps the neighbour mirrors per scenario, and how fast they come.
const SOURCES: usize = 200;
const RATE: u64 = 50;

/// One attack: the hostile guest's manifest and the keys it is handed.
struct Attack {
    name: &'static str,
    manifest: &'static str,
    /// Names of hostile keys, each created in a namespace of its own.
    keys: Vec<&'static str>,
}

fn attacks() -> Vec<Attack> {
    vec![
        Attack {
            name: "quiet",
            manifest: "{}",
            keys: vec![],
        },
        Attack {
            name: "spin (8 workers)",
            manifest: r#"{"concurrency": 8}"#,
            keys: vec!["loop-forever"; 8],
        },
        Attack {
            name: "sleep (16 workers)",
            manifest: r#"{"concurrency": 16}"#,
            keys: vec!["sleep"; 16],
        },
    ]
}

/// The peak VmRSS of `pid`, sampled until `stop`.
fn sample_rss(pid: u32, stop: Arc<AtomicBool>, peak: Arc<AtomicUsize>) {
    let path = format!("/proc/{pid}/status");
    while !stop.load(Ordering::Relaxed) {
        if let Some(kib) = std::fs::read_to_string(&path).ok().and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix("VmRSS:"))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<usize>().ok())
        }) {
            peak.fetch_max(kib * 1024, Ordering::Relaxed);
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

struct Figures {
    p50: Duration,
    p99: Duration,
    max: Duration,
    peak_rss: usize,
}

async fn run(attack: &Attack, base: &Path) -> Figures {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let dir = base.join(attack.name.split_whitespace().next().unwrap());
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), attack.manifest).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let store = server.store();
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    store
        .create(
            &namespaces,
            None,
            json!({"metadata": {"name": "team-a"}}),
            None,
        )
        .unwrap();
    for (i, key) in attack.keys.iter().enumerate() {
        let ns = format!("attack-{i}");
        store
            .create(&namespaces, None, json!({"metadata": {"name": ns}}), None)
            .unwrap();
        store
            .create(
                &configmaps,
                Some(&ns),
                json!({"metadata": {"name": key}}),
                None,
            )
            .unwrap();
    }
    let neighbour = guests::guest_wasm("configmap_mirror");
    let attack_dir = format!("{}::/hostile", dir.display());
    let mut host = Host::start(
        "hostile",
        &kubeconfig,
        &[
            "--guest",
            neighbour.to_str().unwrap(),
            "--dir",
            &attack_dir,
            "--shutdown-timeout",
            "1s",
        ],
        &[],
    );
    let health = host.endpoint("/healthz");
    wait_for_status(health, "/readyz", 200);
    // Let the attack get going.
    tokio::time::sleep(Duration::from_secs(1)).await;

    let (stop, peak) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(AtomicUsize::new(0)),
    );
    let sampler = std::thread::spawn({
        let (pid, stop, peak) = (host.pid(), Arc::clone(&stop), Arc::clone(&peak));
        move || sample_rss(pid, stop, peak)
    });
    let mut copies = store
        .watch(&configmaps, Some("team-a"), &WatchParams::default())
        .unwrap();
    let copied = tokio::spawn(async move {
        let mut seen = Vec::with_capacity(SOURCES);
        while seen.len() < SOURCES {
            match tokio::time::timeout(Duration::from_secs(120), copies.next()).await {
                Ok(Some(event)) if event.kind == WatchEventKind::Added => {
                    let name = event.object["metadata"]["name"].as_str().unwrap_or("");
                    if let Some(i) = name
                        .strip_prefix("n-")
                        .and_then(|n| n.parse::<usize>().ok())
                    {
                        seen.push((i, Instant::now()));
                    }
                }
                Ok(Some(_)) => {}
                _ => break,
            }
        }
        seen
    });
    let mut sent = Vec::with_capacity(SOURCES);
    let mut tick = tokio::time::interval(Duration::from_nanos(1_000_000_000 / RATE));
    for i in 0..SOURCES {
        tick.tick().await;
        sent.push(Instant::now());
        store
            .create(
                &configmaps,
                Some("default"),
                json!({"metadata": {"name": format!("n-{i}"),
                                    "annotations": {"recon.dev/mirror-to": "team-a"}},
                       "data": {"i": i.to_string()}}),
                None,
            )
            .unwrap();
    }
    let seen = copied.await.unwrap();
    stop.store(true, Ordering::Relaxed);
    sampler.join().unwrap();
    assert_eq!(
        seen.len(),
        SOURCES,
        "{}: the neighbour copied {} of {SOURCES}; host log:\n{}",
        attack.name,
        seen.len(),
        host.log()
    );
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
    let mut latencies: Vec<Duration> = seen.iter().map(|(i, at)| *at - sent[*i]).collect();
    latencies.sort();
    let at = |q: f64| latencies[((latencies.len() as f64 * q) as usize).min(latencies.len() - 1)];
    Figures {
        p50: at(0.50),
        p99: at(0.99),
        max: latencies[latencies.len() - 1],
        peak_rss: peak.load(Ordering::Relaxed),
    }
}

fn main() {
    let tokio = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .expect("tokio");
    println!("isolation benchmark on {}", support::machine());
    println!(
        "neighbour (configmap-mirror) create -> copy latency, {SOURCES} ConfigMaps at {RATE}/s, beside the hostile guest:"
    );
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("isolation-bench");
    tokio.block_on(async {
        let mut quiet: Option<Duration> = None;
        for attack in attacks() {
            let figures = run(&attack, &base).await;
            let versus = quiet
                .map(|q| format!(" ({:.1}x quiet p99)", figures.p99.as_secs_f64() / q.as_secs_f64()))
                .unwrap_or_default();
            quiet.get_or_insert(figures.p99);
            println!(
                "  {:<20} p50 {:>9.2?}  p99 {:>9.2?}{versus}  max {:>9.2?}  host peak RSS {:>6.1} MiB",
                attack.name,
                figures.p50,
                figures.p99,
                figures.max,
                figures.peak_rss as f64 / (1 << 20) as f64
            );
        }
    });
}
