//! Guest isolation, end to end: the `hostile` guest attacks the host from
//! inside its sandbox while `configmap-mirror`, a well-behaved neighbour on
//! the same shared ConfigMap cache, keeps reconciling. Each attack fails
//! alone, with a clear error naming the guest and the limit.

mod guests;
mod hosts;

use std::path::Path;

use hosts::{Host, cluster, eventually};
use recon_host::devserver::store::{ResourceType, Store};
use serde_json::json;

const NAMESPACE: &str = "default";

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

/// Creates `team-a` and a ConfigMap the neighbour mirrors there, and waits
/// for the copy: the neighbour reconciles.
async fn neighbour_mirrors(store: &Store, configmaps: &ResourceType, host: &Host, name: &str) {
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    let _ = store.create(
        &namespaces,
        None,
        json!({"metadata": {"name": "team-a"}}),
        None,
    );
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
        let dir = base.join(attack);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), text).unwrap();
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
    let dir = base.join("attack");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("manifest.json"), r#"{"concurrency": 4294967295}"#).unwrap();
    let store = server.store();
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    // More sleeping keys than the guest has workers.
    for i in 0..6 {
        let ns = format!("sleepers-{i}");
        store
            .create(&namespaces, None, json!({"metadata": {"name": ns}}), None)
            .unwrap();
        store
            .create(
                &configmaps,
                Some(&ns),
                json!({"metadata": {"name": "sleep"}}),
                None,
            )
            .unwrap();
    }

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
