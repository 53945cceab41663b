//! Guest isolation, end to end: the `hostile` guest attacks the host from
//! inside its sandbox while `configmap-mirror`, a well-behaved neighbour on
//! the same shared ConfigMap cache, keeps reconciling. Each attack fails
//! alone, with a clear error naming the guest and the limit. Under an
//! operator's policy, a manifest asking for more than its grant is refused
//! at load, a write outside the granted namespaces is forbidden, and a
//! directory granted to a guest is its own.

mod guests;
mod hosts;

use std::path::{Path, PathBuf};

use hosts::{Host, cluster, eventually};
use recon_devserver::store::{ResourceType, Store};
use serde_json::json;

const NAMESPACE: &str = "default";

/// Where the hostile guest's `write-kube-system` key writes, and the
/// ConfigMap it creates there.
use hostile::{ELSEWHERE, INTRUDER};

/// Starts the hostile guest and the neighbour in one host, with the
/// directory `attack` (holding the hostile guest's `manifest.json`, if
/// any) preopened as `/hostile`, then `extra` flags.
fn hostile_beside_neighbour(kubeconfig: &Path, attack: &Path, extra: &[&str]) -> Host {
    let neighbour = guests::guest_wasm("configmap_mirror");
    let dir = format!("{}::/hostile", attack.display());
    let mut args = vec!["--guest", neighbour.to_str().unwrap(), "--dir", &dir];
    args.extend_from_slice(extra);
    Host::start("hostile", kubeconfig, &args, &[])
}

/// The directory under `base` preopened as the hostile guest's
/// `/hostile`, holding `manifest` as its `manifest.json` when given.
fn attack_dir(base: &Path, manifest: Option<&str>) -> PathBuf {
    named_attack_dir(base, "attack", manifest)
}

/// As [`attack_dir`], in `base/name`, for a test of several attacks.
fn named_attack_dir(base: &Path, name: &str, manifest: Option<&str>) -> PathBuf {
    let dir = base.join(name);
    std::fs::create_dir_all(&dir).unwrap();
    if let Some(manifest) = manifest {
        std::fs::write(dir.join("manifest.json"), manifest).unwrap();
    }
    dir
}

/// Creates `team-a` and a ConfigMap the neighbour mirrors there, and waits
/// for the copy: the neighbour reconciles.
async fn neighbour_mirrors(store: &Store, configmaps: &ResourceType, host: &Host, name: &str) {
    hosts::create_namespace(store, "team-a");
    store
        .create(
            configmaps,
            Some(NAMESPACE),
            json!({"metadata": {"name": name,
                                "annotations": {"recon.dev/mirror-to": "team-a"}},
                   "data": {"color": "blue"}}),
            None,
        )
        .unwrap();
    let (rt, name) = (configmaps.clone(), name.to_string());
    eventually(
        store,
        configmaps,
        "the neighbour's copy",
        host,
        move |store| store.get(&rt, Some("team-a"), &name).ok(),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_past_its_deadline_rejects_that_guest_alone() {
    let (server, base, kubeconfig) = cluster("isolation", "manifest-deadline").await;
    for (attack, text) in [
        ("sleep", r#"{"sleep": true}"#),
        ("spin", r#"{"spin": true}"#),
    ] {
        let dir = named_attack_dir(&base, attack, Some(text));
        let mut host = hostile_beside_neighbour(&kubeconfig, &dir, &["--manifest-timeout", "1s"]);
        let rejected = host.wait_for_log("guest rejected");
        assert!(
            rejected
                .contains("hostile.wasm: manifest() failed: the guest ran past its deadline of 1s"),
            "{attack}: {rejected}"
        );
        let store = server.store();
        let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
        neighbour_mirrors(&store, &configmaps, &host, &format!("settings-{attack}")).await;
        assert!(host.terminate().success(), "{}", host.log());
    }
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_asking_for_endless_workers_is_clamped_and_its_sleepers_keep_to_its_slots() {
    let (server, base, kubeconfig) = cluster("isolation", "slots").await;
    let dir = attack_dir(&base, Some(r#"{"concurrency": 4294967295}"#));
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    // More sleeping keys than the guest has workers.
    hosts::hostile_keys(&store, &["sleep"; 6]);

    // Six instance slots: four for the hostile guest, two for the
    // neighbour; one slot fewer and the host refuses to start.
    let mut refused = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &["--max-workers", "4", "--max-instances", "5"],
    );
    assert!(
        !refused
            .wait_exit(std::time::Duration::from_secs(60))
            .success()
    );
    let log = refused.log();
    assert!(
        log.contains("the guests' workers need 6 instance slots (hostile: 4, configmap-mirror: 2) but --max-instances is 5"),
        "{log}"
    );

    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &[
            "--max-workers",
            "4",
            "--max-instances",
            "6",
            "--shutdown-timeout",
            "1s",
        ],
    );
    let clamped = host.wait_for_log("clamped");
    assert!(
        clamped.contains("asked=4294967295") && clamped.contains("max=4"),
        "{clamped}"
    );
    let metrics = host.endpoint("/metrics");
    // Every hostile worker is blocked in a sleep: its slots are taken.
    hosts::poll(
        std::time::Duration::from_secs(60),
        || {
            let (_, body) = hosts::http_get(metrics, "/metrics");
            body.contains(r#"controller_runtime_active_workers{controller="hostile"} 4"#)
                .then_some(())
        },
        || format!("the hostile workers never all slept; log:\n{}", host.log()),
    );
    neighbour_mirrors(&store, &configmaps, &host, "settings").await;
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

/// `recon_guest_limit_exceeded_total` of the hostile guest for `limit`.
fn limit_count(metrics: &str, limit: &str) -> u64 {
    let series = format!(r#"recon_guest_limit_exceeded_total{{guest="hostile",limit="{limit}"}}"#);
    hosts::sample(metrics, &series).map_or(0, |count| count as u64)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reads_keys_queue_floods_logs_and_writes_over_their_limits_fail_alone_and_are_counted() {
    let (server, base, kubeconfig) = cluster("isolation", "import-limits").await;
    let dir = attack_dir(&base, None);
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    // Three ConfigMaps of 512 KiB: listing them all is over a 1 MiB read.
    hosts::create_namespace(&store, "bulk");
    for i in 0..3 {
        store
            .create(
                &configmaps,
                Some("bulk"),
                json!({"metadata": {"name": format!("bulk-{i}")},
                       "data": {"blob": "x".repeat(512 << 10)}}),
                None,
            )
            .unwrap();
    }
    let attacks = [
        "list-all",
        "enqueue-flood",
        "long-key",
        "log-flood",
        "big-write",
        // The same write without end: it is not backed off, and is
        // refused every time.
        "again-big-write",
    ];
    hosts::hostile_keys(&store, &attacks);
    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &[
            "--max-read-size",
            "1Mi",
            "--max-queue-depth",
            "100",
            "--guest-log-rate",
            "20",
            "--shutdown-timeout",
            "1s",
        ],
    );
    let metrics = host.endpoint("/metrics");
    for report in [
        "list-all: too large: list of v1, Kind=ConfigMap: the answer is ",
        "over the read limit of 1048576 bytes (--max-read-size)",
        "keys queued, then unavailable: the queue of hostile holds 100 keys, the most --max-queue-depth allows",
        r#"long-key: invalid: invalid key: name "kkkk"#,
        "is longer than 253 bytes",
        "big-write: too large: the request body is ",
        "over the limit of 3145728 bytes (--max-request-body)",
        "log lines of the guest were dropped, over its log rate (--guest-log-rate)",
        "[cut, over --max-log-line]",
        "bytes cut, over --max-log-line]",
    ] {
        host.wait_for_log(report);
    }
    let counted = hosts::poll(
        std::time::Duration::from_secs(60),
        || {
            let (_, body) = hosts::http_get(metrics, "/metrics");
            let counts: Vec<u64> = [
                "read-size",
                "queue-depth",
                "key",
                "request-body",
                "log-line",
                "log-rate",
            ]
            .iter()
            .map(|limit| limit_count(&body, limit))
            .collect();
            // log-line: the message, the field and the stdout line;
            // request-body: `big-write` once or a few times in its backoff,
            // `again-big-write` over and over.
            let enough = counts[..3].iter().all(|c| *c >= 1)
                && counts[3] >= 50
                && counts[4] >= 3
                && counts[5] >= 90_000;
            enough.then_some(counts)
        },
        || format!("the limits were not all counted; log:\n{}", host.log()),
    );
    // The flood of 100,000 lines left at most a burst and a trickle.
    let logged = host
        .log_lines()
        .iter()
        .filter(|line| line.contains("flood"))
        .count();
    assert!(
        logged < 1_000,
        "{logged} flood lines logged; limits {counted:?}"
    );
    let longest = host.log_lines().iter().map(String::len).max().unwrap_or(0);
    assert!(longest < 16 << 10, "a log line of {longest} bytes");
    // Nothing over the limits reached the server.
    for (namespace, name) in [("attack-4", "big-write"), ("attack-5", "again-big-write")] {
        let written = store.get(&configmaps, Some(namespace), name).unwrap();
        assert!(written["data"].get("big").is_none(), "{written}");
    }
    neighbour_mirrors(&store, &configmaps, &host, "settings").await;
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn guests_reserving_more_memory_than_the_budgets_stop_the_host_with_each_share_named() {
    let (server, base, kubeconfig) = cluster("isolation", "memory-budget").await;
    let dir = attack_dir(&base, None);
    // Each guest: 2 workers × (64 MiB + 16 MiB) = 160 MiB.
    for (flags, expected) in [
        (
            ["--memory-budget", "300Mi"],
            "the guests reserve 335544320 bytes (hostile: 167772160, configmap-mirror: 167772160), over --memory-budget 314572800",
        ),
        (
            ["--guest-memory-budget", "100Mi"],
            "guest hostile reserves 167772160 bytes (2 workers × (--max-memory 67108864 + --max-read-size 16777216)), over --guest-memory-budget 104857600",
        ),
    ] {
        let mut host = hostile_beside_neighbour(&kubeconfig, &dir, &flags);
        assert!(!host.wait_exit(std::time::Duration::from_secs(60)).success());
        let log = host.log();
        assert!(log.contains(expected), "{flags:?}: {log}");
    }
    // Budgets the guests fit let them run.
    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &[
            "--memory-budget",
            "320Mi",
            "--guest-memory-budget",
            "160Mi",
            "--shutdown-timeout",
            "1s",
        ],
    );
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    neighbour_mirrors(&store, &configmaps, &host, "settings").await;
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_watching_a_kind_the_server_does_not_serve_is_degraded_alone_and_the_host_stays_live()
 {
    let (server, base, kubeconfig) = cluster("isolation", "unserved-kind").await;
    let dir = attack_dir(
        &base,
        Some(r#"{"watch-kind": ["example.com", "v1", "Missing"]}"#),
    );
    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &["--unhealthy-after", "1s", "--shutdown-timeout", "1s"],
    );
    let health = host.endpoint("/healthz");
    let metrics = host.endpoint("/metrics");
    // Past the threshold the hostile guest is degraded and ready no longer
    // waits for it; the neighbour runs; the host is live.
    let report = hosts::wait_for_status(health, "/readyz?verbose", 200);
    for line in [
        "[+]guest configmap-mirror running\n",
        "[+]guest hostile degraded: informer example.com/v1/Missing failing for ",
        "example.com/v1, Kind=Missing",
    ] {
        assert!(report.contains(line), "{report}");
    }
    assert!(report.ends_with("readyz check passed\n"), "{report}");
    assert_eq!(
        hosts::http_get(health, "/healthz"),
        (200, "ok\n".to_string())
    );
    let (_, text) = hosts::http_get(metrics, "/metrics");
    for (series, value) in [
        (
            r#"recon_guest_state{guest="hostile",state="degraded"}"#,
            "1",
        ),
        (r#"recon_guest_state{guest="hostile",state="running"}"#, "0"),
        (
            r#"recon_guest_state{guest="configmap-mirror",state="running"}"#,
            "1",
        ),
    ] {
        assert!(
            text.contains(&format!("{series} {value}\n")),
            "{series}:\n{text}"
        );
    }
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    neighbour_mirrors(&store, &configmaps, &host, "settings").await;
    assert_eq!(
        hosts::http_get(health, "/healthz"),
        (200, "ok\n".to_string())
    );
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

/// Runs the hostile guest with `manifest` (in `base/attack`) beside the
/// neighbour: it is rejected, `refusal` in the log, or (`None`) starts its
/// workers; the neighbour reconciles either way.
async fn rejected_alone_or_started(
    store: &Store,
    base: &Path,
    kubeconfig: &Path,
    attack: &str,
    manifest: &str,
    refusal: Option<&str>,
) {
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let dir = named_attack_dir(base, attack, Some(manifest));
    let mut host = hostile_beside_neighbour(kubeconfig, &dir, &["--shutdown-timeout", "1s"]);
    match refusal {
        Some(refusal) => {
            let rejected = host.wait_for_log("guest rejected");
            assert!(rejected.contains(refusal), "{attack}: {rejected}");
        }
        None => {
            host.wait_for_log(r#"starting workers guest="hostile""#);
        }
    }
    neighbour_mirrors(store, &configmaps, &host, &format!("settings-{attack}")).await;
    assert!(host.terminate().success(), "{}", host.log());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_over_the_caps_is_refused_at_once_and_one_at_the_caps_shares_the_cache() {
    let (server, base, kubeconfig) = cluster("isolation", "manifest-caps").await;
    let store = server.store();
    for (attack, indexes) in [("over", 100_000), ("at", 16)] {
        let manifest = format!(r#"{{"indexes": {indexes}}}"#);
        let refusal = (indexes > 16).then_some(
            "hostile.wasm: invalid manifest: 100000 indexes declared; a manifest may declare at most 16",
        );
        rejected_alone_or_started(&store, &base, &kubeconfig, attack, &manifest, refusal).await;
    }
    server.shutdown().await;
}

/// A field index on a custom resource is checked at start against the
/// schema the server serves for it: a path the schema lacks rejects that
/// guest alone, naming the field; a path it has starts the guest.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_path_the_served_schema_lacks_rejects_that_guest_alone() {
    let (server, base, kubeconfig) = cluster("isolation", "served-schema").await;
    let store = server.store();
    hosts::serve_widgets(&store);
    for (attack, path) in [("misspelt", "spec.colr"), ("spelt", "spec.color")] {
        let manifest = hosts::widget_index(path);
        let refusal = (attack == "misspelt").then_some(
            r#"invalid manifest against the served schema: index "watched-path": field path "spec.colr": Widget's spec (object) has no field "colr"; did you mean "color"?"#,
        );
        rejected_alone_or_started(&store, &base, &kubeconfig, attack, &manifest, refusal).await;
    }
    server.shutdown().await;
}

/// The policy both guests run under: the neighbour gets what its manifest
/// asks for, the hostile guest reads ConfigMaps, may patch and create them
/// in `hostile_namespaces`, and has `base/record` as its own `/record`.
fn policy(base: &Path, hostile_namespaces: &str) -> PathBuf {
    let path = base.join("policy.yaml");
    let record = base.join("record");
    std::fs::create_dir_all(&record).unwrap();
    std::fs::write(
        &path,
        format!(
            "guests:
  - name: configmap-mirror
    reads: [{{apiVersion: v1, kind: ConfigMap}}]
    writes: [{{apiVersion: v1, kind: ConfigMap, verbs: [create, replace, patch, delete]}}]
    events: true
  - name: hostile
    namespaces: {hostile_namespaces}
    reads: [{{apiVersion: v1, kind: ConfigMap}}]
    writes: [{{apiVersion: v1, kind: ConfigMap, verbs: [patch, create]}}]
    dirs: [{{hostPath: {}, mountPath: /record}}]
",
            record.display()
        ),
    )
    .unwrap();
    path
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_manifest_asking_for_more_than_its_grant_is_refused_and_the_neighbour_mirrors() {
    let (server, base, kubeconfig) = cluster("isolation", "policy-excess").await;
    let dir = attack_dir(
        &base,
        Some(
            r#"{"watch-kind": ["", "v1", "Secret"],
            "creates": [["", "v1", "ConfigMap"], ["", "v1", "Secret"]]}"#,
        ),
    );
    let policy = policy(&base, "[default]");
    let policy = policy.to_str().unwrap();
    let mut host = hostile_beside_neighbour(&kubeconfig, &dir, &["--policy", policy]);
    let rejected = host.wait_for_log("guest rejected");
    assert!(
        rejected.contains(&format!(
            "hostile.wasm: guest hostile: its manifest asks for more than the policy {policy} grants: \
             reads v1/Secret; writes v1/Secret (create)"
        )),
        "every excess, and only those: {rejected}"
    );
    let granted = host.wait_for_log("granted guest=configmap-mirror");
    assert!(
        granted.contains("granted")
            && granted.contains("namespaces=every namespace")
            && granted.contains("events=true")
            && granted.contains(&format!("granted_by={policy}")),
        "{granted}"
    );
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    neighbour_mirrors(&store, &configmaps, &host, "settings-policy").await;
    let secrets: Vec<String> = server
        .request_log()
        .into_iter()
        .filter(|line| line.contains("/secrets"))
        .collect();
    assert!(secrets.is_empty(), "nobody reads Secrets: {secrets:?}");
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_write_outside_the_granted_namespaces_is_forbidden_and_nothing_lands_there() {
    let (server, base, kubeconfig) = cluster("isolation", "policy-namespaces").await;
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    hosts::create_namespace(&store, ELSEWHERE);
    let dir = attack_dir(&base, Some(r#"{"creates": [["", "v1", "ConfigMap"]]}"#));
    // The policy would let the hostile guest into kube-system; the host
    // watches only default and team-a, so it acts in default alone.
    let policy = policy(&base, "[default, kube-system]");
    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &[
            "--policy",
            policy.to_str().unwrap(),
            "--namespace",
            "default",
            "--namespace",
            "team-a",
        ],
    );
    let metrics = host.endpoint("/metrics");
    let granted = host.wait_for_log("granted guest=hostile");
    assert!(granted.contains("namespaces=default "), "{granted}");
    let record = base.join("record");
    assert!(
        granted.contains(&format!("dirs={}::/record (rw)", record.display())),
        "{granted}"
    );
    store
        .create(
            &configmaps,
            Some(NAMESPACE),
            json!({"metadata": {"name": "write-kube-system"}}),
            None,
        )
        .unwrap();
    let refused = host.wait_for_log("write-kube-system: forbidden");
    assert!(
        refused.contains(
            "hostile may not create v1, Kind=ConfigMap in namespace kube-system: it may act only in default"
        ),
        "{refused}"
    );
    assert!(store.get(&configmaps, Some(ELSEWHERE), INTRUDER).is_err());
    // The directory its grant names is its own, read-write.
    store
        .create(
            &configmaps,
            Some(NAMESPACE),
            json!({"metadata": {"name": "record-granted"}}),
            None,
        )
        .unwrap();
    let file = record.join("reconciles");
    let recorded = hosts::poll(
        std::time::Duration::from_secs(60),
        || {
            std::fs::read_to_string(&file)
                .ok()
                .filter(|text| !text.is_empty())
        },
        || {
            format!(
                "nothing recorded in {}; log:\n{}",
                file.display(),
                host.log()
            )
        },
    );
    assert!(
        recorded.starts_with("default/record-granted "),
        "{recorded}"
    );
    neighbour_mirrors(&store, &configmaps, &host, "settings-namespaces").await;
    assert!(
        store.get(&configmaps, Some(ELSEWHERE), INTRUDER).is_err(),
        "nothing appeared in kube-system"
    );
    let (_, text) = hosts::http_get(metrics, "/metrics");
    assert!(limit_count(&text, "permission") >= 1, "{text}");
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn spinning_copying_sleeping_allocating_and_panicking_fail_alone_counted_and_degraded() {
    let (server, base, kubeconfig) = cluster("isolation", "cpu-memory").await;
    let dir = attack_dir(&base, Some(r#"{"concurrency": 8}"#));
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let attacks = [
        "loop-forever",
        "loop-forever",
        "loop-forever",
        "bulk-copy",
        "sleep",
        "sleep",
        "alloc-1gib",
        "panic",
    ];
    hosts::hostile_keys(&store, &attacks);
    let mut host = hostile_beside_neighbour(
        &kubeconfig,
        &dir,
        &[
            "--reconcile-timeout",
            "1s",
            "--max-memory",
            "32Mi",
            "--shutdown-timeout",
            "1s",
        ],
    );
    let health = host.endpoint("/healthz");
    let metrics = host.endpoint("/metrics");
    // While every hostile worker spins, sleeps or faults, the neighbour
    // reconciles.
    for i in 0..3 {
        neighbour_mirrors(&store, &configmaps, &host, &format!("settings-{i}")).await;
    }
    let cpu = |text: &str, guest: &str| {
        let series = format!(r#"recon_guest_cpu_seconds_total{{guest="{guest}"}}"#);
        hosts::sample(text, &series).unwrap_or(0.0)
    };
    // Every fault is counted, and the spinners' time on the CPU with them.
    let text = hosts::poll(
        std::time::Duration::from_secs(60),
        || {
            let (_, text) = hosts::http_get(metrics, "/metrics");
            let counted = ["timeouts", "memory_faults", "traps"].iter().all(|fault| {
                let series = format!(r#"recon_guest_{fault}_total{{guest="hostile"}}"#);
                hosts::sample(&text, &series).unwrap_or(0.0) >= 1.0
            });
            (counted && cpu(&text, "hostile") >= 1.0).then_some(text)
        },
        || format!("the faults were not all counted; log:\n{}", host.log()),
    );
    assert_eq!(
        hosts::sample(
            &text,
            r#"recon_guest_timeouts_total{guest="configmap-mirror"}"#
        )
        .unwrap_or(0.0),
        0.0
    );
    assert!(
        cpu(&text, "configmap-mirror") < cpu(&text, "hostile") / 5.0,
        "{text}"
    );
    // Reconciles that keep faulting leave the guest degraded, visibly, and
    // the host live.
    let report = hosts::poll(
        std::time::Duration::from_secs(60),
        || {
            let (_, report) = hosts::http_get(health, "/readyz?verbose");
            report
                .contains("reconciles in a row faulted")
                .then_some(report)
        },
        || format!("hostile was never degraded; log:\n{}", host.log()),
    );
    assert!(
        report.contains("[+]guest configmap-mirror running"),
        "{report}"
    );
    assert_eq!(
        hosts::http_get(health, "/healthz"),
        (200, "ok\n".to_string())
    );
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}
