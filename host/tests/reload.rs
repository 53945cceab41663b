//! Hot reload: a new version of a running guest (a changed file, seen by
//! `--watch` or at SIGHUP) replaces it while ConfigMaps keep coming — no
//! informer lists again and no key is lost. A version with another
//! manifest is wired in: the informers of kinds it adds start and sync
//! first, those it keeps stay warm, those no guest reads any more stop; a
//! version asking for more than was granted, or indexing a path of a custom
//! resource that its served schema lacks, is refused and the running one
//! carries on. Each result is counted in `recon_guest_reloads_total`.

mod guests;
mod hosts;

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::time::Duration;

use hosts::{Host, eventually, http_get, metric, poll};
use recon_devserver::DevServerHandle;
use recon_devserver::store::{ResourceType, Store};
use serde_json::json;

const GUEST: &str = "configmap-mirror";

/// `component` with a custom section appended that holds `version`: other
/// bytes, the same component.
fn another_version(component: &[u8], version: u8) -> Vec<u8> {
    let name = b"recon-test-version";
    let mut bytes = component.to_vec();
    bytes.push(0); // a custom section
    bytes.push((1 + name.len() + 1) as u8);
    bytes.push(name.len() as u8);
    bytes.extend_from_slice(name);
    bytes.push(version);
    bytes
}

/// Replaces `path` at once (a rename), as a deployment would.
fn replace(path: &Path, bytes: &[u8]) {
    let partial = path.with_extension("partial");
    std::fs::write(&partial, bytes).unwrap();
    std::fs::rename(&partial, path).unwrap();
}

fn reloads(metrics: SocketAddr, result: &str) -> f64 {
    reloads_of(metrics, GUEST, result)
}

fn reloads_of(metrics: SocketAddr, guest: &str, result: &str) -> f64 {
    metric(
        metrics,
        &format!(r#"recon_guest_reloads_total{{guest="{guest}",result="{result}"}}"#),
    )
}

/// Waits until `recon_guest_reloads_total{result}` reaches `count`.
fn await_reloads(host: &Host, metrics: SocketAddr, result: &str, count: f64) {
    await_reloads_of(host, metrics, GUEST, result, count);
}

fn await_reloads_of(host: &Host, metrics: SocketAddr, guest: &str, result: &str, count: f64) {
    poll(
        Duration::from_secs(60),
        || (reloads_of(metrics, guest, result) >= count).then_some(()),
        || {
            format!(
                "no {result} reload of {guest} counted; log:\n{}",
                host.log()
            )
        },
    );
}

/// `informer_lists_total` of the informer `name`.
fn lists(metrics: SocketAddr, name: &str) -> f64 {
    metric(
        metrics,
        &format!(r#"informer_lists_total{{informer="{name}"}}"#),
    )
}

/// A dev server with the namespace `team-a`, the mirror's component copied
/// to a scratch file, and the kubeconfig.
async fn setup(name: &str) -> (DevServerHandle, PathBuf, PathBuf) {
    let (server, dir, kubeconfig) = hosts::cluster("reload", name).await;
    hosts::create_namespace(&server.store(), "team-a");
    let guest = dir.join("mirror.wasm");
    std::fs::copy(guests::guest_wasm("configmap_mirror"), &guest).unwrap();
    (server, guest, kubeconfig)
}

/// Creates the source ConfigMap `name`, to be mirrored into `team-a`.
fn create_source(store: &Store, configmaps: &ResourceType, name: &str) {
    store
        .create(
            configmaps,
            Some("default"),
            json!({"metadata": {"name": name,
                                "annotations": {"recon.dev/mirror-to": "team-a"}},
                   "data": {"n": name}}),
            None,
        )
        .unwrap();
}

/// Waits until every source in `names` has its copy in `team-a`.
async fn copied(store: &Store, configmaps: &ResourceType, host: &Host, names: &[String]) {
    eventually(store, configmaps, "every copy", host, |store| {
        names
            .iter()
            .all(|name| store.get(configmaps, Some("team-a"), name).is_ok())
            .then_some(())
    })
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_takes_over_with_warm_caches_and_no_key_lost() {
    let (server, guest, kubeconfig) = setup("watch").await;
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let mut host = Host::run(
        guest.clone().into(),
        &kubeconfig,
        &["--watch", "--watch-interval", "50ms"],
        &[],
    );
    let metrics = host.endpoint("/metrics");
    let names: Vec<String> = (0..30).map(|i| format!("source-{i}")).collect();
    create_source(&store, &configmaps, &names[0]);
    copied(&store, &configmaps, &host, &names[..1]).await;
    let lists = r#"informer_lists_total{informer="v1/ConfigMap"}"#;
    let lists_before = metric(metrics, lists);
    assert!(lists_before >= 1.0, "{}", http_get(metrics, "/metrics").1);

    // Sources keep coming while the new version replaces the old one.
    let component = std::fs::read(guests::guest_wasm("configmap_mirror")).unwrap();
    for (i, name) in names.iter().enumerate().skip(1) {
        create_source(&store, &configmaps, name);
        if i == 10 {
            replace(&guest, &another_version(&component, 2));
        }
    }
    await_reloads(&host, metrics, "success", 1.0);
    assert!(host.log().contains("reloaded"), "{}", host.log());
    for name in ["after-0", "after-1"] {
        create_source(&store, &configmaps, name);
    }
    let mut all = names.clone();
    all.extend(["after-0".to_string(), "after-1".to_string()]);
    copied(&store, &configmaps, &host, &all).await;
    assert_eq!(
        metric(metrics, lists),
        lists_before,
        "no informer listed again"
    );
    assert_eq!(reloads(metrics, "failure"), 0.0);

    // A version with another manifest is refused; the running one carries on.
    replace(
        &guest,
        &std::fs::read(guests::guest_wasm("sample_controller")).unwrap(),
    );
    await_reloads(&host, metrics, "failure", 1.0);
    let refused = host.wait_for_log("new version refused");
    assert!(
        refused.contains(
            "it asks for more than its first version was granted (no --policy): \
             reads samplecontroller.k8s.io/v1alpha1/Foo"
        ),
        "{refused}"
    );
    create_source(&store, &configmaps, "after-refusal");
    copied(&store, &configmaps, &host, &["after-refusal".to_string()]).await;
    assert_eq!(reloads(metrics, "success"), 1.0);
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sighup_looks_for_a_new_version_without_watch() {
    let (server, guest, kubeconfig) = setup("sighup").await;
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let mut host = Host::run(guest.clone().into(), &kubeconfig, &[], &[]);
    let metrics = host.endpoint("/metrics");
    create_source(&store, &configmaps, "before");
    copied(&store, &configmaps, &host, &["before".to_string()]).await;

    let component = std::fs::read(guests::guest_wasm("configmap_mirror")).unwrap();
    replace(&guest, &another_version(&component, 3));
    let hangup = std::process::Command::new("kill")
        .args(["-HUP", &host.pid().to_string()])
        .status()
        .unwrap();
    assert!(hangup.success());
    await_reloads(&host, metrics, "success", 1.0);
    create_source(&store, &configmaps, "after");
    copied(&store, &configmaps, &host, &["after".to_string()]).await;
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

/// The hostile guest copied into a test's `dir`, to be replaced by new
/// versions.
struct Hostile {
    /// Its file, as `--guest` names it.
    guest: PathBuf,
    /// The component's bytes.
    component: Vec<u8>,
    /// The directory preopened as its `/hostile` ([`Hostile::preopen`]).
    attack: PathBuf,
}

impl Hostile {
    fn copied_to(dir: &Path) -> Hostile {
        let guest = dir.join("hostile.wasm");
        let component = std::fs::read(guests::guest_wasm("hostile")).unwrap();
        std::fs::write(&guest, &component).unwrap();
        let attack = dir.join("attack");
        std::fs::create_dir_all(&attack).unwrap();
        Hostile {
            guest,
            component,
            attack,
        }
    }

    /// Its manifest() reads `text` from `/hostile/manifest.json` (a
    /// directory every guest sees, `--dir`, so also at load).
    fn manifest(&self, text: &str) {
        std::fs::write(self.attack.join("manifest.json"), text).unwrap();
    }

    /// The `--dir` preopening its `/hostile`.
    fn preopen(&self) -> String {
        format!("{}::/hostile", self.attack.display())
    }
}

/// A version with another manifest, within the policy's grant: the
/// informer of the kind it adds starts and its changes reach the guest,
/// the ConfigMap informer does not list again; a later version without
/// that kind stops its informer; one asking for more than the policy
/// grants is refused.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_manifest_starts_the_informers_it_adds_and_stops_those_it_drops() {
    let (server, dir, kubeconfig) = hosts::cluster("reload", "manifest").await;
    let store = server.store();
    let hostile = Hostile::copied_to(&dir);
    let (guest, component) = (hostile.guest.clone(), hostile.component.clone());
    let manifest = |text: &str| hostile.manifest(text);
    manifest("{}");
    let policy = dir.join("policy.yaml");
    std::fs::write(
        &policy,
        "guests:
  - name: hostile
    reads: [{apiVersion: v1, kind: ConfigMap}, {apiVersion: v1, kind: Secret}]
    writes: [{apiVersion: v1, kind: ConfigMap, verbs: [patch]}]
",
    )
    .unwrap();
    let preopen = hostile.preopen();
    let mut host = Host::run(
        guest.clone().into(),
        &kubeconfig,
        &[
            "--watch",
            "--watch-interval",
            "50ms",
            "--policy",
            policy.to_str().unwrap(),
            "--dir",
            &preopen,
            "--max-instances",
            "4",
        ],
        &[],
    );
    let metrics = host.endpoint("/metrics");
    poll(
        Duration::from_secs(60),
        || (lists(metrics, "v1/ConfigMap") >= 1.0).then_some(()),
        || format!("the ConfigMaps never listed; log:\n{}", host.log()),
    );
    let configmap_lists = lists(metrics, "v1/ConfigMap");
    assert_eq!(lists(metrics, "v1/Secret"), 0.0);

    // Version 2 watches Secrets, a Secret's `hostile` label naming the key.
    manifest(r#"{"watch-kind": ["", "v1", "Secret"]}"#);
    replace(&guest, &another_version(&component, 2));
    await_reloads_of(&host, metrics, "hostile", "success", 1.0);
    assert!(
        lists(metrics, "v1/Secret") >= 1.0,
        "the Secret informer listed: {}\n{}",
        http_get(metrics, "/metrics").1,
        host.log()
    );
    assert_eq!(
        lists(metrics, "v1/ConfigMap"),
        configmap_lists,
        "the ConfigMap informer did not list again"
    );
    let reconciled = || {
        metric(
            metrics,
            r#"controller_runtime_reconcile_total{controller="hostile",result="success"}"#,
        )
    };
    let before = reconciled();
    let secrets = store.resource_type("", "v1", "secrets").unwrap();
    store
        .create(
            &secrets,
            Some("default"),
            json!({"metadata": {"name": "s", "labels": {"hostile": "from-a-secret"}}}),
            None,
        )
        .unwrap();
    poll(
        Duration::from_secs(60),
        || (reconciled() > before).then_some(()),
        || {
            format!(
                "the Secret's key was never reconciled; log:\n{}",
                host.log()
            )
        },
    );

    // Version 3 drops Secrets: no guest reads them, their informer stops.
    manifest("{}");
    replace(&guest, &another_version(&component, 3));
    await_reloads_of(&host, metrics, "hostile", "success", 2.0);
    let stopped = host.wait_for_log("stopped an informer no guest reads any more");
    assert!(stopped.contains("informer=v1/Secret"), "{stopped}");
    poll(
        Duration::from_secs(60),
        || {
            let (_, text) = http_get(metrics, "/metrics");
            (!text.contains(r#"informer_objects{informer="v1/Secret"}"#)).then_some(())
        },
        || format!("the stopped informer's objects stay; log:\n{}", host.log()),
    );

    // Version 4 asks to create Secrets, which the policy does not grant.
    manifest(r#"{"creates": [["", "v1", "Secret"]]}"#);
    replace(&guest, &another_version(&component, 4));
    await_reloads_of(&host, metrics, "hostile", "failure", 1.0);
    let refused = host.wait_for_log("new version refused");
    assert!(refused.contains("writes v1/Secret (create)"), "{refused}");
    assert_eq!(reloads_of(metrics, "hostile", "success"), 2.0);

    // Version 5 runs three workers instead of two; version 6 asks for
    // eight, more than the host's four instance slots hold: refused.
    let workers = r#"controller_runtime_max_concurrent_reconciles{controller="hostile"}"#;
    assert_eq!(metric(metrics, workers), 2.0);
    manifest(r#"{"concurrency": 3}"#);
    replace(&guest, &another_version(&component, 5));
    await_reloads_of(&host, metrics, "hostile", "success", 3.0);
    poll(
        Duration::from_secs(60),
        || (metric(metrics, workers) == 3.0).then_some(()),
        || format!("still two workers; log:\n{}", host.log()),
    );
    host.wait_for_log("the new version runs another number of workers");
    manifest(r#"{"concurrency": 8}"#);
    replace(&guest, &another_version(&component, 6));
    await_reloads_of(&host, metrics, "hostile", "failure", 2.0);
    let refused = host
        .log_lines()
        .into_iter()
        .rfind(|line| line.contains("new version refused"))
        .unwrap_or_default();
    assert!(refused.contains("instance slots"), "{refused}");
    assert_eq!(metric(metrics, workers), 3.0);
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}

/// A new version whose index reads a path of a custom resource that the
/// served schema lacks is refused, as it would be at start; the running
/// version carries on.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_version_indexing_a_path_the_served_schema_lacks_is_refused() {
    let (server, dir, kubeconfig) = hosts::cluster("reload", "served-schema").await;
    hosts::serve_widgets(&server.store());
    let hostile = Hostile::copied_to(&dir);
    let (guest, component) = (hostile.guest.clone(), hostile.component.clone());
    let manifest = |text: &str| hostile.manifest(text);
    manifest(&hosts::widget_index("spec.color"));
    let preopen = hostile.preopen();
    let mut host = Host::run(
        guest.clone().into(),
        &kubeconfig,
        &["--watch", "--watch-interval", "50ms", "--dir", &preopen],
        &[],
    );
    let metrics = host.endpoint("/metrics");
    host.wait_for_log(r#"starting workers guest="hostile""#);

    manifest(&hosts::widget_index("spec.colr"));
    replace(&guest, &another_version(&component, 2));
    await_reloads_of(&host, metrics, "hostile", "failure", 1.0);
    let refused = host.wait_for_log("new version refused");
    assert!(
        refused.contains(
            r#"invalid manifest against the served schema: index "watched-path": field path "spec.colr": Widget's spec (object) has no field "colr"; did you mean "color"?"#
        ),
        "{refused}"
    );
    assert_eq!(reloads_of(metrics, "hostile", "success"), 0.0);
    assert!(host.terminate().success(), "{}", host.log());
    server.shutdown().await;
}
