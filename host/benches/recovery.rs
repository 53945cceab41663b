//! Recovery from an API-server outage, measured per key the way an
//! operator sees it: a `host` process (release build) runs
//! `configmap-mirror` on the dev API server with [`SOURCES`] mirrored
//! ConfigMaps. Every source is changed; once [`BEFORE`] copies follow, the
//! server goes down for [`OUTAGE`] (connections refused, open ones and
//! watches dropped); meanwhile [`DURING`] sources change again in its
//! store. For each key the benchmark records when its change was made and
//! when its copy converged, and prints how long after the server's return
//! the keys converged — with outage-aware recovery (the default) and with
//! `--outage-recovery false` (every key and informer waits out its own
//! backoff, as client-go does), side by side. Prints, asserts nothing.
//!
//! Needs the guests built (`just examples`, which `just bench` runs).

#[path = "../tests/guests/mod.rs"]
mod guests;
#[path = "../tests/hosts/mod.rs"]
mod hosts;
mod support;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use hosts::{Host, metric, set_value, wait_for_status};
use recon_devserver::store::{ResourceType, Store, WatchEventKind, WatchParams};
use recon_devserver::{DevServer, DevServerConfig};
use serde_json::{Value, json};
use tokio::sync::watch;

/// Mirrored sources, all changed just before the outage.
const SOURCES: usize = 300;
/// Copies that follow the change before the server goes down.
const BEFORE: usize = 30;
/// Sources changed again in the store during the outage.
const DURING: usize = 100;
/// How long the server is down.
const OUTAGE: Duration = Duration::from_secs(10);
/// The target of the benchmark: every key converged within this of the
/// server's return.
const TARGET: Duration = Duration::from_secs(5);
/// The client rate limit: an operator's raised one (the defaults would
/// measure the limit, not the recovery).
const QPS: &str = "100";
const BURST: &str = "200";

/// The value each copy last reached, and when.
type Copies = HashMap<String, (String, Instant)>;

/// The value of `data.v` a source ends with.
fn final_value(i: usize) -> &'static str {
    if i < DURING { "2" } else { "1" }
}

fn source_name(i: usize) -> String {
    format!("source-{i}")
}

/// Follows the copies in `team-a` into `copies`.
async fn follow(store: Arc<Store>, configmaps: ResourceType, copies: watch::Sender<Copies>) {
    let mut events = store
        .watch(&configmaps, Some("team-a"), &WatchParams::default())
        .expect("a watch of the copies");
    while let Some(event) = events.next().await {
        if !matches!(event.kind, WatchEventKind::Added | WatchEventKind::Modified) {
            continue;
        }
        let object: &Value = &event.object;
        let (Some(name), Some(value)) = (
            object["metadata"]["name"].as_str(),
            object["data"]["v"].as_str(),
        ) else {
            continue;
        };
        let now = Instant::now();
        copies.send_if_modified(|copies| {
            let changed = copies.get(name).is_none_or(|(known, _)| known != value);
            if changed {
                copies.insert(name.to_string(), (value.to_string(), now));
            }
            changed
        });
    }
}

/// Waits (at most `limit`) until every source's copy holds `value(i)`.
async fn converged(
    copies: &mut watch::Receiver<Copies>,
    value: impl Fn(usize) -> &'static str,
    limit: Duration,
) -> bool {
    let all = |copies: &Copies| {
        (0..SOURCES).all(|i| {
            copies
                .get(&source_name(i))
                .is_some_and(|(v, _)| v == value(i))
        })
    };
    tokio::time::timeout(limit, copies.wait_for(all))
        .await
        .is_ok()
}

struct Figures {
    /// Keys not converged when the server returned.
    pending: usize,
    /// Convergence after the return, of the keys pending then, sorted.
    after_return: Vec<Duration>,
    /// The longest from a key's last change to its convergence.
    worst_change: Duration,
    redriven: f64,
    relists: f64,
    converged: bool,
}

async fn run(outage_recovery: bool, base: &Path) -> Figures {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let dir = base.join(format!("outage-recovery-{outage_recovery}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let kubeconfig = dir.join("kubeconfig");
    server.write_kubeconfig(&kubeconfig).unwrap();
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    hosts::create_namespace(&store, "team-a");
    let (copies_tx, mut copies) = watch::channel(Copies::new());
    tokio::spawn(follow(Arc::clone(&store), configmaps.clone(), copies_tx));
    let mut changed_at = vec![Instant::now(); SOURCES];
    for i in 0..SOURCES {
        let source = json!({"metadata": {"name": source_name(i),
                                         "annotations": {"recon.dev/mirror-to": "team-a"}},
                            "data": {"v": "0"}});
        store
            .create(&configmaps, Some("default"), source, None)
            .unwrap();
    }
    let recovery = outage_recovery.to_string();
    let mut host = Host::start(
        "configmap_mirror",
        &kubeconfig,
        &[
            "--qps",
            QPS,
            "--burst",
            BURST,
            "--outage-recovery",
            &recovery,
        ],
        &[],
    );
    let health = host.endpoint("/healthz");
    let metrics = host.endpoint("/metrics");
    wait_for_status(health, "/readyz", 200);
    assert!(
        converged(&mut copies, |_| "0", Duration::from_secs(120)).await,
        "the sources were never mirrored; host log:\n{}",
        host.log()
    );

    for (i, at) in changed_at.iter_mut().enumerate() {
        *at = Instant::now();
        set_value(&store, &configmaps, &source_name(i), "1");
    }
    let follow_before =
        |copies: &Copies| copies.values().filter(|(v, _)| v.as_str() == "1").count() >= BEFORE;
    tokio::time::timeout(Duration::from_secs(60), copies.wait_for(follow_before))
        .await
        .expect("copies follow the change")
        .expect("the copies' watch");
    server.outage(OUTAGE).await;
    for (i, at) in changed_at.iter_mut().enumerate().take(DURING) {
        *at = Instant::now();
        set_value(&store, &configmaps, &source_name(i), "2");
    }
    server.serving().await;
    let returned = Instant::now();
    let pending = {
        let copies = copies.borrow();
        (0..SOURCES)
            .filter(|&i| {
                copies
                    .get(&source_name(i))
                    .is_none_or(|(v, _)| v != final_value(i))
            })
            .count()
    };
    let done = converged(&mut copies, final_value, Duration::from_secs(180)).await;
    let copies = copies.borrow().clone();
    let mut after_return = Vec::new();
    let mut worst_change = Duration::ZERO;
    for (i, changed) in changed_at.iter().enumerate() {
        let Some((v, at)) = copies.get(&source_name(i)) else {
            continue;
        };
        if v != final_value(i) {
            continue;
        }
        worst_change = worst_change.max(at.saturating_duration_since(*changed));
        if *at > returned {
            after_return.push(*at - returned);
        }
    }
    after_return.sort();
    let redriven = metric(
        metrics,
        r#"recon_guest_keys_redriven_total{guest="configmap-mirror"}"#,
    );
    let relists = metric(
        metrics,
        r#"informer_relists_total{informer="v1/ConfigMap"}"#,
    );
    host.terminate();
    server.shutdown().await;
    Figures {
        pending,
        after_return,
        worst_change,
        redriven,
        relists,
        converged: done,
    }
}

fn main() {
    let tokio = support::tokio_runtime();
    println!("recovery benchmark on {}", support::machine());
    println!(
        "configmap-mirror, {SOURCES} sources all changed, {BEFORE}+ copies following, then a {}s outage \
         (connections refused and dropped) while {DURING} sources change again; client QPS {QPS}/{BURST}. \
         Convergence of the keys pending at the server's return, after it:",
        OUTAGE.as_secs()
    );
    let base = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("recovery-bench");
    tokio.block_on(async {
        for (outage_recovery, name) in [
            (true, "outage-aware (default)"),
            (false, "per-key backoff (--outage-recovery false)"),
        ] {
            let figures = run(outage_recovery, &base).await;
            let times = &figures.after_return;
            let at = |q: f64| {
                times
                    .get(((times.len() as f64 * q) as usize).min(times.len().saturating_sub(1)))
                    .copied()
                    .unwrap_or_default()
            };
            let within = times.iter().filter(|t| **t <= TARGET).count();
            println!(
                "  {name:<42} {} keys pending at return: p50 {:>8.2?}  p99 {:>8.2?}  last {:>8.2?}  \
                 {within}/{} within {}s  (worst change -> copy {:.2?}; keys re-driven {}, relists {}){}",
                figures.pending,
                at(0.5),
                at(0.99),
                times.last().copied().unwrap_or_default(),
                times.len(),
                TARGET.as_secs(),
                figures.worst_change,
                figures.redriven,
                figures.relists,
                if figures.converged {
                    ""
                } else {
                    "  NOT ALL CONVERGED"
                },
            );
        }
    });
}
