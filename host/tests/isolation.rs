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
