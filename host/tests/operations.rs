//! The operator shell, end to end with `host` processes against the
//! embedded dev API server:
//!
//! - leader election: of two hosts exactly one reconciles; the leader
//!   stopped with SIGTERM releases the Lease and the other takes over at
//!   once; the leader killed with SIGKILL is replaced once the Lease
//!   expires; the hostile guest's `record-*` log shows no two hosts ever
//!   reconciling at the same time;
//! - `/metrics` serves every family of deploy/grafana/metrics.txt, and
//!   `leader_election_master_status` tells the leader from the follower;
//! - `/readyz` once caches synced, `/healthz` failing once the API server
//!   has been unreachable for longer than `--unhealthy-after`;
//! - `--log-format json`: every line a JSON object, a span per reconcile;
//! - SIGTERM with a reconcile that never ends: the host waits out
//!   `--shutdown-timeout`, abandons it and exits 0;
//! - an outage of the API server with reconciles in flight: the host sees
//!   it (`recon_api_server_reachable`, `/readyz?verbose` naming the
//!   informer), re-drives the keys that failed as unavailable when the
//!   server returns, and every key converges;
//! - a conflict or not-found that a guest's own write met is a requeue
//!   (`recon_guest_stale_requeues_total`, result `requeue`), not an error;
//!   the same error returned without such a write stays an error.

mod guests;
mod hosts;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use hosts::{
    Host, cluster, create_namespace, eventually, hostile_keys, http_get, metric, poll, sample,
    set_value, wait_for_status,
};
use recon_devserver::store::{ResourceType, Store};
use serde_json::{Value, json};

const LEASE: &str = "recon-test";
const LEASE_DURATION: Duration = Duration::from_secs(3);
const RETRY_PERIOD: Duration = Duration::from_millis(500);

/// client-go's acquire loop waits up to 1 + 1.2 = 2.2 retry periods.
fn max_retry_wait() -> Duration {
    RETRY_PERIOD.mul_f64(2.2)
}

fn leader_args() -> Vec<&'static str> {
    vec![
        "--leader-elect",
        "--leader-election-namespace",
        "default",
        "--leader-election-id",
        LEASE,
        "--leader-election-lease-duration",
        "3s",
        "--leader-election-renew-deadline",
        "2s",
        "--leader-election-retry-period",
        "500ms",
        "--log-format",
        "json",
    ]
}

/// A host of the hostile guest recording its reconciles in `dir`.
fn candidate(kubeconfig: &Path, name: &str, dir: &Path) -> Host {
    std::fs::create_dir_all(dir).unwrap();
    let preopen = format!("{}::/record", dir.display());
    let mut args = leader_args();
    args.extend(["--dir", &preopen]);
    Host::start(
        "hostile",
        kubeconfig,
        &args,
        &[
            ("POD_NAME", name),
            ("RUST_LOG", "info,recon_host::controller=debug"),
        ],
    )
}

/// One recorded reconcile: key, start and end (Unix nanoseconds).
#[derive(Debug, Clone)]
struct Run {
    key: String,
    start: u128,
    end: u128,
}

fn runs(dir: &Path) -> Vec<Run> {
    let Ok(text) = std::fs::read_to_string(dir.join("reconciles")) else {
        return Vec::new();
    };
    text.lines()
        .map(|line| {
            let mut parts = line.split(' ');
            let (Some(key), Some(start), Some(end)) = (parts.next(), parts.next(), parts.next())
            else {
                panic!("malformed record line {line:?}");
            };
            Run {
                key: key.to_string(),
                start: start.parse().unwrap(),
                end: end.parse().unwrap(),
            }
        })
        .collect()
}

/// Polls (at most 60 s) until `dir` records every key of `keys`.
fn wait_for_records(dir: &Path, keys: &[String], host: &Host) {
    let seen = || -> BTreeSet<String> { runs(dir).into_iter().map(|r| r.key).collect() };
    poll(
        Duration::from_secs(60),
        || {
            let seen = seen();
            keys.iter().all(|key| seen.contains(key)).then_some(())
        },
        || {
            format!(
                "{} never recorded all of {keys:?}; seen {:?}\nlog:\n{}",
                dir.display(),
                seen(),
                host.log()
            )
        },
    );
}

fn create_records(
    store: &Store,
    configmaps: &ResourceType,
    range: std::ops::Range<usize>,
) -> Vec<String> {
    range
        .map(|i| {
            let name = format!("record-{i}");
            store
                .create(
                    configmaps,
                    Some("default"),
                    json!({"apiVersion": "v1", "kind": "ConfigMap",
                        "metadata": {"name": name, "namespace": "default"}}),
                    None,
                )
                .expect("create");
            format!("default/{name}")
        })
        .collect()
}

/// The Lease's holder, once it has one that starts with `prefix` (waiting
/// at most 60 s on store watches; `host`'s log tells why if not).
async fn holder_with_prefix(
    store: &Store,
    leases: &ResourceType,
    prefix: &str,
    host: &Host,
) -> String {
    let what = format!("a lease holder starting with {prefix:?}");
    eventually(store, leases, &what, host, |store| {
        let lease = store.get(leases, Some("default"), LEASE).ok()?;
        let holder = lease["spec"]["holderIdentity"].as_str()?;
        (!holder.is_empty() && holder.starts_with(prefix)).then(|| holder.to_string())
    })
    .await
}

/// Every exported family (as Prometheus names its samples: counters with
/// `_total`) of a metrics text, and whether it has at least one sample.
fn families(text: &str) -> Vec<(String, bool)> {
    text.lines()
        .filter_map(|line| line.strip_prefix("# TYPE "))
        .map(|rest| {
            let mut parts = rest.split(' ');
            let name = parts.next().unwrap().to_string();
            let kind = parts.next().unwrap_or("");
            let name = if kind == "counter" {
                format!("{name}_total")
            } else {
                name
            };
            let has_sample = text.lines().any(|line| {
                !line.starts_with('#')
                    && line.starts_with(name.as_str())
                    && line[name.len()..].starts_with(['{', ' ', '_'])
            });
            (name, has_sample)
        })
        .collect()
}

fn documented_metrics() -> BTreeSet<String> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../deploy/grafana/metrics.txt");
    std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .map(str::trim)
        .filter(|line| !line.is_empty() && !line.starts_with('#'))
        .map(String::from)
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_leader_reconciles_and_hands_over_on_stop_and_on_death() {
    let (server, base, kubeconfig) = cluster("operations", "leader").await;
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let leases = store
        .resource_type("coordination.k8s.io", "v1", "leases")
        .unwrap();
    let dirs: Vec<PathBuf> = (0..3).map(|i| base.join(format!("host-{i}"))).collect();

    let mut hosts = vec![
        candidate(&kubeconfig, "host-0", &dirs[0]),
        candidate(&kubeconfig, "host-1", &dirs[1]),
    ];
    let holder = holder_with_prefix(&store, &leases, "host-", &hosts[0]).await;
    let first = if holder.starts_with("host-0_") { 0 } else { 1 };
    let second = 1 - first;

    // Exactly one reconciles.
    let batch = create_records(&store, &configmaps, 0..10);
    wait_for_records(&dirs[first], &batch, &hosts[first]);
    assert!(
        runs(&dirs[second]).is_empty(),
        "the follower reconciled: {:?}",
        runs(&dirs[second])
    );

    // Both are ready (caches synced); only the leader says it leads; every
    // documented family is served, with samples on the leader.
    let status_series = format!("leader_election_master_status{{name=\"{LEASE}\"}}");
    let metrics: Vec<_> = [first, second]
        .map(|i| hosts[i].endpoint("/metrics"))
        .to_vec();
    for i in [first, second] {
        let health = hosts[i].endpoint("/healthz");
        wait_for_status(health, "/readyz", 200);
        assert_eq!(http_get(health, "/healthz"), (200, "ok\n".to_string()));
    }
    let (code, leader_text) = http_get(metrics[0], "/metrics");
    assert_eq!(code, 200);
    let (_, follower_text) = http_get(metrics[1], "/metrics");
    assert_eq!(
        sample(&leader_text, &status_series),
        Some(1.0),
        "{leader_text}"
    );
    assert_eq!(
        sample(&follower_text, &status_series),
        Some(0.0),
        "{follower_text}"
    );
    let served = families(&leader_text);
    let documented = documented_metrics();
    let served_names: BTreeSet<String> = served.iter().map(|(name, _)| name.clone()).collect();
    assert_eq!(
        served_names, documented,
        "/metrics and deploy/grafana/metrics.txt disagree"
    );
    let empty: Vec<_> = served.iter().filter(|(_, has)| !has).collect();
    assert!(
        empty.is_empty(),
        "families without samples on the leader: {empty:?}"
    );
    assert_eq!(
        sample(
            &leader_text,
            "controller_runtime_reconcile_total{controller=\"hostile\",result=\"success\"}"
        )
        .map(|n| n >= 10.0),
        Some(true),
        "{leader_text}"
    );
    assert_eq!(
        sample(&leader_text, "informer_objects{informer=\"v1/ConfigMap\"}"),
        Some(10.0),
        "{leader_text}"
    );
    assert_eq!(
        sample(
            &follower_text,
            "controller_runtime_reconcile_total{controller=\"hostile\",result=\"success\"}"
        ),
        None,
        "the follower's workers never started"
    );

    // SIGTERM: the leader finishes, releases the Lease and exits 0; the
    // other takes over without waiting for the Lease to expire.
    let stopped = Instant::now();
    let status = hosts[first].terminate();
    assert!(status.success(), "{status}; log:\n{}", hosts[first].log());
    assert!(hosts[first].log().contains("released the leader lease"));
    holder_with_prefix(&store, &leases, &format!("host-{second}_"), &hosts[second]).await;
    let handover = stopped.elapsed();
    assert!(
        handover < LEASE_DURATION,
        "took {handover:?}: the release did not hand over before expiry"
    );
    let batch = create_records(&store, &configmaps, 10..20);
    wait_for_records(&dirs[second], &batch, &hosts[second]);

    // SIGKILL: nothing is released; a third host takes over once the Lease
    // expires (lease duration, plus up to a jittered retry for the follower
    // to see the last renewal and another to try after expiry).
    hosts.push(candidate(&kubeconfig, "host-2", &dirs[2]));
    let third_health = hosts[2].endpoint("/healthz");
    wait_for_status(third_health, "/readyz", 200);
    let killed = Instant::now();
    hosts[second].kill();
    holder_with_prefix(&store, &leases, "host-2_", &hosts[2]).await;
    let takeover = killed.elapsed();
    eprintln!("hand-over after SIGTERM: {handover:?}; takeover after SIGKILL: {takeover:?}");
    let bound = LEASE_DURATION + max_retry_wait() * 2 + Duration::from_secs(1);
    assert!(takeover <= bound, "took {takeover:?}, above {bound:?}");
    let batch = create_records(&store, &configmaps, 20..30);
    wait_for_records(&dirs[2], &batch, &hosts[2]);
    let status = hosts[2].terminate();
    assert!(status.success(), "{status}; log:\n{}", hosts[2].log());

    // Never two leaders at once: runs of different hosts never overlap,
    // and every record was reconciled by someone.
    let all: Vec<Vec<Run>> = dirs.iter().map(|dir| runs(dir)).collect();
    for a in 0..all.len() {
        for b in a + 1..all.len() {
            for x in &all[a] {
                for y in &all[b] {
                    assert!(
                        x.end <= y.start || y.end <= x.start,
                        "host-{a} ran {x:?} while host-{b} ran {y:?}"
                    );
                }
            }
        }
    }
    let reconciled: BTreeSet<&str> = all.iter().flatten().map(|r| r.key.as_str()).collect();
    assert_eq!(reconciled.len(), 30, "{reconciled:?}");

    // JSON logs: every line an object; reconciles carry their span.
    let lines = hosts[first].log_lines();
    let mut spans = 0;
    for line in &lines {
        let value: Value = serde_json::from_str(line)
            .unwrap_or_else(|e| panic!("not a JSON log line ({e}): {line}"));
        if value["span"]["name"] == "reconcile" {
            assert_eq!(value["span"]["guest"], "hostile", "{line}");
            assert!(
                value["span"]["key"]
                    .as_str()
                    .is_some_and(|k| k.starts_with("default/"))
            );
            spans += 1;
        }
    }
    assert!(
        spans >= 10,
        "{spans} reconcile spans in:\n{}",
        lines.join("\n")
    );
    drop(hosts);
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn healthz_fails_once_the_api_server_is_unreachable_for_too_long() {
    let (server, base, kubeconfig) = cluster("operations", "health").await;
    let mut host = Host::start("hostile", &kubeconfig, &["--unhealthy-after", "1s"], &[]);
    let health = host.endpoint("/healthz");
    assert_eq!(wait_for_status(health, "/readyz", 200), "ok\n");
    assert_eq!(http_get(health, "/healthz"), (200, "ok\n".to_string()));

    server.shutdown().await;
    let reason = wait_for_status(health, "/healthz", 500);
    assert!(
        reason.contains("v1/ConfigMap: unable to reach the API server for"),
        "{reason}"
    );
    // Readiness is about the caches, which stay synced.
    assert_eq!(http_get(health, "/readyz").0, 200);
    let status = host.terminate();
    assert!(status.success(), "{status}; log:\n{}", host.log());
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sigterm_abandons_reconciles_still_running_at_the_shutdown_timeout() {
    let (server, base, kubeconfig) = cluster("operations", "shutdown").await;
    let mut host = Host::start(
        "hostile",
        &kubeconfig,
        &["--reconcile-timeout", "10m", "--shutdown-timeout", "1s"],
        &[],
    );
    let health = host.endpoint("/healthz");
    let metrics = host.endpoint("/metrics");
    wait_for_status(health, "/readyz", 200);
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    store
        .create(
            &configmaps,
            Some("default"),
            json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": "loop-forever", "namespace": "default"}}),
            None,
        )
        .expect("create");
    // Wait (at most 60 s) for a worker to be busy with the endless reconcile.
    let busy = "controller_runtime_active_workers{controller=\"hostile\"}";
    poll(
        Duration::from_secs(60),
        || (sample(&http_get(metrics, "/metrics").1, busy) == Some(1.0)).then_some(()),
        || "the reconcile never started".to_string(),
    );

    let stopping = Instant::now();
    let status = host.terminate();
    let took = stopping.elapsed();
    assert!(status.success(), "{status}; log:\n{}", host.log());
    assert!(
        took >= Duration::from_secs(1) && took < Duration::from_secs(10),
        "exited after {took:?}"
    );
    assert!(
        host.log()
            .contains("reconciles still running at the shutdown timeout were abandoned"),
        "{}",
        host.log()
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_outage_the_keys_that_failed_are_redriven_and_every_key_converges() {
    const SOURCES: usize = 20;
    const DURING: usize = 5;
    let (server, base, kubeconfig) = cluster("operations", "outage").await;
    let store = server.store();
    create_namespace(&store, "team-a");
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let names: Vec<String> = (0..SOURCES).map(|i| format!("source-{i}")).collect();
    for name in &names {
        let source = json!({"metadata": {"name": name,
                                         "annotations": {"recon.dev/mirror-to": "team-a"}},
                            "data": {"v": "0"}});
        store
            .create(&configmaps, Some("default"), source, None)
            .unwrap();
    }
    let flags = ["--qps", "100", "--burst", "200"];
    let mut host = Host::start("configmap_mirror", &kubeconfig, &flags, &[]);
    let health = host.endpoint("/healthz");
    let metrics = host.endpoint("/metrics");
    let copies_hold = |store: &Store, value: &dyn Fn(usize) -> &'static str| {
        names.iter().enumerate().all(|(i, name)| {
            store
                .get(&configmaps, Some("team-a"), name)
                .is_ok_and(|copy| copy["data"]["v"] == value(i))
        })
    };
    eventually(&store, &configmaps, "every copy", &host, |store| {
        copies_hold(store, &|_| "0").then_some(())
    })
    .await;

    // Every source changes; the server answers slowly, and goes down once
    // the first copy's write has reached it: reconciles are in flight and
    // queued when it goes.
    server.set_latency(Duration::from_secs(60));
    server.clear_request_log();
    for name in &names {
        set_value(&store, &configmaps, name, "1");
    }
    poll(
        Duration::from_secs(60),
        || {
            server
                .request_log()
                .iter()
                .any(|line| line.contains("/namespaces/team-a/configmaps/source-"))
                .then_some(())
        },
        || format!("no copy was written; log:\n{}", host.log()),
    );
    server.outage(Duration::from_secs(3600)).await;
    server.set_latency(Duration::ZERO);
    // Changes the host can learn of only once the server is back.
    for name in &names[..DURING] {
        set_value(&store, &configmaps, name, "2");
    }
    let unavailable =
        r#"recon_guest_reconcile_errors_total{guest="configmap-mirror",reason="unavailable"}"#;
    poll(
        Duration::from_secs(60),
        || (metric(metrics, unavailable) >= 1.0).then_some(()),
        || format!("no reconcile failed as unavailable; log:\n{}", host.log()),
    );
    assert_eq!(metric(metrics, "recon_api_server_reachable"), 0.0);
    let named = poll(
        Duration::from_secs(60),
        || {
            let (_, report) = http_get(health, "/readyz?verbose");
            report
                .contains("[!]informer v1/ConfigMap failing for")
                .then_some(report)
        },
        || {
            format!(
                "/readyz?verbose never named the informer; log:\n{}",
                host.log()
            )
        },
    );
    assert!(named.contains("readyz check passed"), "{named}");

    server.end_outage().await;
    eventually(
        &store,
        &configmaps,
        "every copy converged",
        &host,
        |store| copies_hold(store, &|i| if i < DURING { "2" } else { "1" }).then_some(()),
    )
    .await;
    poll(
        Duration::from_secs(60),
        || (metric(metrics, "recon_api_server_reachable") == 1.0).then_some(()),
        || format!("the server was never seen back; log:\n{}", host.log()),
    );
    let redriven = metric(
        metrics,
        r#"recon_guest_keys_redriven_total{guest="configmap-mirror"}"#,
    );
    assert!(redriven >= 1.0, "no key re-driven; log:\n{}", host.log());
    let log = host.log();
    assert!(log.contains("the informer cannot list/watch"), "{log}");
    assert!(log.contains("retrying failed keys now"), "{log}");
    // The guest's own log lines carry their fields as fields. (Which keys
    // log an update depends on timing: a write the outage cut may still
    // have reached the server, leaving its copy right.)
    assert!(
        log.lines().any(|line| line.contains("guest: updated copy")
            && line.contains(r#"key="default/source-"#)
            && line.contains(r#" namespace="team-a""#)),
        "{log}"
    );
    let status = host.terminate();
    assert!(status.success(), "{status}; log:\n{log}");
    let _ = std::fs::remove_dir_all(&base);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stale_view_outcomes_of_a_guests_own_writes_are_requeues_not_errors() {
    let (server, base, kubeconfig) = cluster("operations", "stale").await;
    hostile_keys(
        &server.store(),
        &["stale-patch", "gone-patch", "claimed-conflict"],
    );
    let mut host = Host::start("hostile", &kubeconfig, &[], &[]);
    let metrics = host.endpoint("/metrics");
    let series =
        |family: &str, reason: &str| format!(r#"{family}{{guest="hostile",reason="{reason}"}}"#);
    let stale = |reason| metric(metrics, &series("recon_guest_stale_requeues_total", reason));
    let errors = |reason| {
        metric(
            metrics,
            &series("recon_guest_reconcile_errors_total", reason),
        )
    };
    // Each key is retried with backoff; two attempts of each show the
    // classification holds on retries too.
    poll(
        Duration::from_secs(60),
        || {
            (stale("conflict") >= 2.0 && stale("not-found") >= 2.0 && errors("conflict") >= 2.0)
                .then_some(())
        },
        || format!("{}\nlog:\n{}", http_get(metrics, "/metrics").1, host.log()),
    );
    assert_eq!(
        errors("not-found"),
        0.0,
        "a not-found of its own patch is no error"
    );
    assert_eq!(stale("already-exists"), 0.0);
    let requeues = metric(
        metrics,
        r#"controller_runtime_reconcile_total{controller="hostile",result="requeue"}"#,
    );
    assert!(requeues >= 4.0, "{requeues}");
    let log = host.log();
    assert!(
        !log.lines()
            .any(|line| line.contains("WARN") && line.contains("stale-patch")),
        "a stale view is not warned about:\n{log}"
    );
    assert!(
        log.lines()
            .any(|line| line.contains("WARN") && line.contains("claimed without a write")),
        "{log}"
    );
    let status = host.terminate();
    assert!(status.success(), "{status}; log:\n{log}");
    let _ = std::fs::remove_dir_all(&base);
}
