//! End to end: the `host` binary runs the sample-controller component
//! against the embedded dev API server. A Foo gets its Deployment (owned by
//! the Foo), the Deployment follows the Foo's replicas, the Foo's status
//! follows the Deployment's, an event records the sync, a Deployment no Foo
//! controls gets a warning and is left alone, and deleting the Foo collects
//! its Deployment. The host starts before the Foo CRD exists and exits 0 on
//! SIGTERM. configmap-mirror (its Rust, Python and JavaScript builds) and
//! namespace-inventory run end to end too.

mod guests;
mod hosts;

use std::path::PathBuf;

use hosts::{Host, eventually};
use recon_devserver::store::{
    DeleteOptions, ListParams, Patch, PatchKind, ResourceType, Store, Subresource,
};
use serde_json::{Value, json};

const NAMESPACE: &str = "default";

fn artifact(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/sample-controller/artifacts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// `check` for one object in the default namespace: its current state
/// when `done` holds for it (`None` when it is absent).
fn object(
    rt: &ResourceType,
    name: &str,
    done: impl Fn(Option<&Value>) -> bool,
) -> impl Fn(&Store) -> Option<Option<Value>> {
    object_in(rt, NAMESPACE, name, done)
}

/// [`object`] in `namespace`.
fn object_in(
    rt: &ResourceType,
    namespace: &str,
    name: &str,
    done: impl Fn(Option<&Value>) -> bool,
) -> impl Fn(&Store) -> Option<Option<Value>> {
    let (rt, namespace, name) = (rt.clone(), namespace.to_string(), name.to_string());
    move |store| {
        let current = store.get(&rt, Some(&namespace), &name).ok();
        done(current.as_ref()).then_some(current)
    }
}

/// `check` for an event about `regarding` with `reason`.
fn event(events: &ResourceType, regarding: &str, reason: &str) -> impl Fn(&Store) -> Option<Value> {
    let (events, regarding, reason) = (events.clone(), regarding.to_string(), reason.to_string());
    move |store| {
        let listed = store
            .list(&events, Some(NAMESPACE), &ListParams::default())
            .expect("list events");
        listed
            .items
            .iter()
            .find(|e| {
                e["reason"] == reason.as_str() && e["regarding"]["name"] == regarding.as_str()
            })
            .map(|e| (**e).clone())
    }
}

/// Merge-patches the object `name` of the default namespace (or its
/// `subresource`) with `body`.
fn merge_patch(
    store: &Store,
    rt: &ResourceType,
    name: &str,
    body: Value,
    subresource: Option<Subresource>,
) {
    let patch = Patch {
        kind: PatchKind::Merge,
        body,
    };
    store
        .patch(rt, Some(NAMESPACE), name, patch, subresource)
        .unwrap_or_else(|e| panic!("patching {name}: {e:?}"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_controller_reconciles_foos_into_deployments() {
    let (server, _dir, kubeconfig) = hosts::cluster("e2e", "sample").await;
    let store = server.store();
    let mut host = Host::start("sample_controller", &kubeconfig, &[], &[]);

    let crds = store
        .resource_type("apiextensions.k8s.io", "v1", "customresourcedefinitions")
        .unwrap();
    store
        .create(&crds, None, artifact("crd.yaml"), None)
        .expect("the Foo CRD is accepted");
    let foos = store
        .resource_type("samplecontroller.k8s.io", "v1alpha1", "foos")
        .expect("foos are served");
    let deployments = store.resource_type("apps", "v1", "deployments").unwrap();
    let foo = store
        .create(&foos, Some(NAMESPACE), artifact("example-foo.yaml"), None)
        .expect("the example Foo is accepted");
    let foo_name = foo["metadata"]["name"].as_str().unwrap().to_string();
    let foo_uid = foo["metadata"]["uid"].as_str().unwrap().to_string();
    let deployment_name = foo["spec"]["deploymentName"].as_str().unwrap().to_string();

    // Create: the Deployment appears, controlled by the Foo.
    let deployment = eventually(
        &store,
        &deployments,
        "the Deployment",
        &host,
        object(&deployments, &deployment_name, |d| d.is_some()),
    )
    .await
    .unwrap();
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(owner["kind"], "Foo");
    assert_eq!(owner["name"], foo_name);
    assert_eq!(owner["uid"], foo_uid);
    assert_eq!(owner["controller"], true);
    assert_eq!(
        deployment["metadata"]["managedFields"][0]["manager"], "sample-controller",
        "the guest's name is its field manager"
    );
    assert_eq!(deployment["spec"]["replicas"], foo["spec"]["replicas"]);
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"]["controller"],
        foo_name
    );

    // Replicas: the Deployment follows the Foo.
    merge_patch(
        &store,
        &foos,
        &foo_name,
        json!({"spec": {"replicas": 3}}),
        None,
    );
    eventually(
        &store,
        &deployments,
        "replicas 3",
        &host,
        object(&deployments, &deployment_name, |d| {
            d.is_some_and(|d| d["spec"]["replicas"] == 3)
        }),
    )
    .await;

    // Status: the Foo follows the Deployment.
    merge_patch(
        &store,
        &deployments,
        &deployment_name,
        json!({"status": {"replicas": 3, "readyReplicas": 3, "availableReplicas": 3}}),
        Some(Subresource::Status),
    );
    eventually(
        &store,
        &foos,
        "the Foo's availableReplicas",
        &host,
        object(&foos, &foo_name, |f| {
            f.is_some_and(|f| f["status"]["availableReplicas"] == 3)
        }),
    )
    .await;

    // The sync was recorded as an event about the Foo, reported by the guest.
    let events = store
        .resource_type("events.k8s.io", "v1", "events")
        .unwrap();
    let synced = eventually(
        &store,
        &events,
        "a Synced event",
        &host,
        event(&events, &foo_name, "Synced"),
    )
    .await;
    assert_eq!(synced["reportingController"], "sample-controller");
    assert_eq!(synced["regarding"]["kind"], "Foo");
    assert_eq!(synced["type"], "Normal");

    // A Deployment of the name that no Foo controls: a warning, and the
    // Deployment is left alone.
    let foreign = json!({"apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "foreign"},
        "spec": {"replicas": 5, "selector": {"matchLabels": {"app": "other"}},
                 "template": {"metadata": {"labels": {"app": "other"}},
                              "spec": {"containers": [{"name": "c", "image": "busybox"}]}}}});
    store
        .create(&deployments, Some(NAMESPACE), foreign, None)
        .unwrap();
    store
        .create(
            &foos,
            Some(NAMESPACE),
            json!({"apiVersion": "samplecontroller.k8s.io/v1alpha1", "kind": "Foo",
                   "metadata": {"name": "takes-foreign"},
                   "spec": {"deploymentName": "foreign", "replicas": 1}}),
            None,
        )
        .unwrap();
    let warning = eventually(
        &store,
        &events,
        "the ErrResourceExists warning",
        &host,
        event(&events, "takes-foreign", "ErrResourceExists"),
    )
    .await;
    assert_eq!(warning["type"], "Warning");
    assert_eq!(
        warning["note"],
        "Resource \"foreign\" already exists and is not managed by Foo"
    );
    let untouched = store.get(&deployments, Some(NAMESPACE), "foreign").unwrap();
    assert_eq!(untouched["spec"]["replicas"], 5);
    assert!(untouched["metadata"].get("ownerReferences").is_none());

    // Delete: the Deployment is collected with its owner.
    store
        .delete(&foos, Some(NAMESPACE), &foo_name, &DeleteOptions::default())
        .unwrap();
    eventually(
        &store,
        &deployments,
        "the Deployment's collection",
        &host,
        object(&deployments, &deployment_name, |d| d.is_none()),
    )
    .await;

    let status = host.terminate();
    assert!(
        status.success(),
        "host exited with {status}; log:\n{}",
        host.log()
    );
    let log = host.log();
    assert!(
        log.contains("sample-controller"),
        "the log names the guest:\n{log}"
    );
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_mirror_copies_across_namespaces_and_cleans_up() {
    configmap_mirror_end_to_end("configmap_mirror").await;
}

/// The same behaviour from the Python build (`examples/configmap-mirror-py`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_mirror_py_copies_across_namespaces_and_cleans_up() {
    configmap_mirror_end_to_end("configmap_mirror_py").await;
}

/// The same behaviour from the JavaScript build (`examples/configmap-mirror-js`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn configmap_mirror_js_copies_across_namespaces_and_cleans_up() {
    configmap_mirror_end_to_end("configmap_mirror_js").await;
}

/// Compiles `guest` into the tests' compiled-component cache with `host
/// inspect`, so that the host started next loads it from there: a
/// component with an interpreter inside takes longer to compile (in the
/// tests' debug build of the host) than `eventually` waits for a change.
fn precompile(guest: &str) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_host"))
        .arg("inspect")
        .arg("--cache-dir")
        .arg(guests::cache_dir())
        .arg(guests::guest_wasm(guest))
        .output()
        .expect("run host inspect");
    assert!(
        output.status.success(),
        "host inspect {guest}: {}",
        String::from_utf8_lossy(&output.stderr)
    );
}

/// configmap-mirror end to end, from the build `guest` (one file name per
/// language; each language's build has its own `#[tokio::test]` above):
/// copies across namespaces, copies following the source, a deleted copy
/// repaired, a copy outside the annotation deleted, and the finalizer
/// deleting every copy before the source goes.
async fn configmap_mirror_end_to_end(guest: &str) {
    let guest_name = guest.to_string();
    tokio::task::spawn_blocking(move || precompile(&guest_name))
        .await
        .expect("precompile");
    let (server, _dir, kubeconfig) = hosts::cluster("e2e", guest).await;
    let store = server.store();
    for ns in ["team-a", "team-b"] {
        hosts::create_namespace(&store, ns);
    }
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let mut host = Host::start(guest, &kubeconfig, &[], &[]);
    store
        .create(
            &configmaps,
            Some(NAMESPACE),
            json!({"metadata": {"name": "settings",
                                "annotations": {"recon.dev/mirror-to": "team-a,team-b"}},
                   "data": {"color": "blue"}}),
            None,
        )
        .unwrap();

    let copy_with = |namespace: &'static str, color: &'static str| {
        object_in(&configmaps, namespace, "settings", move |c| {
            c.is_some_and(|c| {
                c["data"]["color"] == color
                    && c["metadata"]["labels"]["recon.dev/mirror-of"] == "default.settings"
            })
        })
    };
    for ns in ["team-a", "team-b"] {
        eventually(&store, &configmaps, "a copy", &host, copy_with(ns, "blue")).await;
    }
    let source = store.get(&configmaps, Some(NAMESPACE), "settings").unwrap();
    assert_eq!(
        source["metadata"]["finalizers"],
        json!(["recon.dev/mirror"]),
        "the source carries the finalizer"
    );

    // The copies follow the source.
    merge_patch(
        &store,
        &configmaps,
        "settings",
        json!({"data": {"color": "green"}}),
        None,
    );
    for ns in ["team-a", "team-b"] {
        eventually(
            &store,
            &configmaps,
            "an updated copy",
            &host,
            copy_with(ns, "green"),
        )
        .await;
    }

    // A deleted copy is repaired (the watch on copies maps it to its source).
    store
        .delete(
            &configmaps,
            Some("team-a"),
            "settings",
            &DeleteOptions::default(),
        )
        .unwrap();
    eventually(
        &store,
        &configmaps,
        "the repaired copy",
        &host,
        copy_with("team-a", "green"),
    )
    .await;

    // A namespace dropped from the annotation loses its copy.
    merge_patch(
        &store,
        &configmaps,
        "settings",
        json!({"metadata": {"annotations": {"recon.dev/mirror-to": "team-b"}}}),
        None,
    );
    eventually(
        &store,
        &configmaps,
        "the dropped copy's deletion",
        &host,
        object_in(&configmaps, "team-a", "settings", |c| c.is_none()),
    )
    .await;

    // Deleting the source deletes every copy first, then the source goes.
    store
        .delete(
            &configmaps,
            Some(NAMESPACE),
            "settings",
            &DeleteOptions::default(),
        )
        .unwrap();
    eventually(
        &store,
        &configmaps,
        "the source's deletion",
        &host,
        object(&configmaps, "settings", |c| c.is_none()),
    )
    .await;
    assert!(
        store.get(&configmaps, Some("team-b"), "settings").is_err(),
        "the last copy went with the source"
    );

    let status = host.terminate();
    assert!(
        status.success(),
        "host exited with {status}; log:\n{}",
        host.log()
    );
    server.shutdown().await;
}

/// namespace-inventory: a cluster-scoped primary kind fed by a namespaced
/// one through the `namespace` key mapping, under `--namespace`: the
/// Namespaces are cached once (not once per namespace), a ConfigMap's
/// change re-counts its Namespace, and ConfigMaps are cached without data.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn namespace_inventory_counts_config_maps_per_namespace() {
    let (server, _dir, kubeconfig) = hosts::cluster("e2e", "inventory").await;
    let store = server.store();
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    for (ns, opted_in) in [("team-a", true), ("team-b", true), ("team-c", false)] {
        let labels = if opted_in {
            json!({"recon.dev/inventory": "true"})
        } else {
            json!({})
        };
        store
            .create(
                &namespaces,
                None,
                json!({"metadata": {"name": ns, "labels": labels}}),
                None,
            )
            .unwrap();
    }
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let mut host = Host::start(
        "namespace_inventory",
        &kubeconfig,
        &["--namespace", "team-a", "--namespace", "team-b"],
        &[],
    );
    let counted = |name: &'static str, count: &'static str| {
        let namespaces = namespaces.clone();
        move |store: &Store| {
            let ns = store.get(&namespaces, None, name).ok()?;
            (ns["metadata"]["annotations"]["recon.dev/configmaps"] == count).then_some(())
        }
    };
    eventually(
        &store,
        &namespaces,
        "team-a counted",
        &host,
        counted("team-a", "0"),
    )
    .await;
    for name in ["one", "two"] {
        store
            .create(
                &configmaps,
                Some("team-a"),
                json!({"metadata": {"name": name}, "data": {"big": "x".repeat(1000)}}),
                None,
            )
            .unwrap();
    }
    eventually(
        &store,
        &namespaces,
        "team-a re-counted",
        &host,
        counted("team-a", "2"),
    )
    .await;
    eventually(
        &store,
        &namespaces,
        "team-b counted",
        &host,
        counted("team-b", "0"),
    )
    .await;
    store
        .delete(
            &configmaps,
            Some("team-a"),
            "one",
            &DeleteOptions::default(),
        )
        .unwrap();
    eventually(
        &store,
        &namespaces,
        "a deletion counted",
        &host,
        counted("team-a", "1"),
    )
    .await;
    let team_c = store.get(&namespaces, None, "team-c").unwrap();
    assert!(
        team_c["metadata"].get("annotations").is_none(),
        "not opted in: {team_c}"
    );

    // One Namespace informer for both namespaces; ConfigMaps per namespace.
    let metrics = host.endpoint("/metrics");
    let (status, text) = hosts::http_get(metrics, "/metrics");
    assert_eq!(status, 200);
    let informers: std::collections::BTreeSet<&str> = text
        .lines()
        .filter(|l| l.starts_with("informer_lists_total{"))
        .filter_map(|l| l.split("informer=\"").nth(1)?.split('"').next())
        .collect();
    assert_eq!(
        informers,
        std::collections::BTreeSet::from([
            "v1/ConfigMap in team-a",
            "v1/ConfigMap in team-b",
            "v1/Namespace (recon.dev/inventory=true)",
        ]),
        "{text}"
    );
    assert!(host.terminate().success());
}

/// An API server outage (every request failing with 503): the host says
/// so once, probes the server's readiness, says when it answers again,
/// and its informers pick up where they were, so what changed meanwhile
/// is reconciled.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn after_an_outage_the_host_says_so_and_carries_on() {
    let (server, _dir, kubeconfig) = hosts::cluster("e2e", "outage").await;
    let store = server.store();
    hosts::create_namespace(&store, "team-a");
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    let mut host = Host::start("configmap_mirror", &kubeconfig, &[], &[]);
    host.wait_for_log("starting workers");
    let source = |name: &str| {
        json!({"metadata": {"name": name, "annotations": {"recon.dev/mirror-to": "team-a"}},
               "data": {"color": "blue"}})
    };
    let copied = |name: &'static str| object_in(&configmaps, "team-a", name, |c| c.is_some());
    store
        .create(&configmaps, Some(NAMESPACE), source("before"), None)
        .unwrap();
    eventually(&store, &configmaps, "a copy", &host, copied("before")).await;

    // Every request fails for a while; the watch ends, so the informer
    // relists into the outage.
    server.fail_next(8, 503);
    server.drop_watches();
    let down = host.wait_for_log("the API server does not answer");
    assert!(down.contains("503"), "{down}");
    store
        .create(&configmaps, Some(NAMESPACE), source("during"), None)
        .unwrap();
    host.wait_for_log("the API server answers again");
    eventually(
        &store,
        &configmaps,
        "a copy made after the outage",
        &host,
        copied("during"),
    )
    .await;
    assert!(host.terminate().success(), "{}", host.log());
}
