//! End to end: the `host` binary runs the sample-controller component
//! against the embedded dev API server. A Foo gets its Deployment (owned by
//! the Foo), the Deployment follows the Foo's replicas, the Foo's status
//! follows the Deployment's, an event records the sync, and deleting the
//! Foo collects the Deployment. The host starts before the Foo CRD exists
//! and exits 0 on SIGTERM.

mod guests;

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use recon_host::devserver::store::{
    DeleteOptions, ListParams, Patch, PatchKind, ResourceType, Store, Subresource, WatchParams,
};
use recon_host::devserver::{DevServer, DevServerConfig};
use serde_json::{Value, json};

const NAMESPACE: &str = "default";

fn artifact(name: &str) -> Value {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/sample-controller/artifacts")
        .join(name);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_saphyr::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// The host process; killed on drop if the test failed before stopping it.
struct Host {
    child: Child,
    log: Arc<Mutex<Vec<String>>>,
}

impl Host {
    fn start(kubeconfig: &std::path::Path) -> Host {
        let mut child = Command::new(env!("CARGO_BIN_EXE_host"))
            .arg("run")
            .arg("--guest")
            .arg(guests::guest_wasm("sample_controller"))
            .arg("--kubeconfig")
            .arg(kubeconfig)
            .arg("--cache-dir")
            .arg(guests::cache_dir())
            .env("RUST_LOG", "info")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("start host run");
        let log = Arc::new(Mutex::new(Vec::new()));
        let stderr = child.stderr.take().expect("stderr");
        let lines = Arc::clone(&log);
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                lines.lock().push(line);
            }
        });
        Host { child, log }
    }

    fn log(&self) -> String {
        self.log.lock().join("\n")
    }

    /// SIGTERM, then the exit status (waiting at most 30 s).
    fn terminate(&mut self) -> std::process::ExitStatus {
        let status = Command::new("kill")
            .arg("-TERM")
            .arg(self.child.id().to_string())
            .status()
            .expect("kill");
        assert!(status.success());
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        loop {
            if let Some(status) = self.child.try_wait().expect("wait") {
                return status;
            }
            assert!(
                std::time::Instant::now() < deadline,
                "host did not exit after SIGTERM; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Host {
    fn drop(&mut self) {
        if self.child.try_wait().ok().flatten().is_none() {
            let _ = self.child.kill();
            let _ = self.child.wait();
        }
    }
}

/// Waits (at most 60 s) until `done` holds for the object `name` (`None`
/// when absent), re-checking at every change of its resource type.
async fn eventually(
    store: &Store,
    rt: &ResourceType,
    name: &str,
    what: &str,
    host: &Host,
    done: impl Fn(Option<&Value>) -> bool,
) -> Option<Value> {
    let mut watch = store
        .watch(rt, Some(NAMESPACE), &WatchParams::default())
        .expect("watch");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    loop {
        let current = store.get(rt, Some(NAMESPACE), name).ok();
        if done(current.as_ref()) {
            return current;
        }
        match tokio::time::timeout_at(deadline, watch.next()).await {
            Ok(Some(_)) => {}
            Ok(None) => {
                watch = store
                    .watch(rt, Some(NAMESPACE), &WatchParams::default())
                    .expect("watch");
            }
            Err(_) => panic!(
                "timed out waiting for {what}; {name} is {current:#?}\nhost log:\n{}",
                host.log()
            ),
        }
    }
}

fn merge(body: Value) -> Patch {
    Patch {
        kind: PatchKind::Merge,
        body,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sample_controller_reconciles_foos_into_deployments() {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let kubeconfig =
        std::env::temp_dir().join(format!("recon-e2e-{}.kubeconfig", std::process::id()));
    server.write_kubeconfig(&kubeconfig).unwrap();
    let store = server.store();
    let mut host = Host::start(&kubeconfig);

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
        &deployment_name,
        "the Deployment",
        &host,
        |d| d.is_some(),
    )
    .await
    .unwrap();
    let owner = &deployment["metadata"]["ownerReferences"][0];
    assert_eq!(owner["apiVersion"], "samplecontroller.k8s.io/v1alpha1");
    assert_eq!(owner["kind"], "Foo");
    assert_eq!(owner["name"], foo_name);
    assert_eq!(owner["uid"], foo_uid);
    assert_eq!(owner["controller"], true);
    assert_eq!(deployment["spec"]["replicas"], foo["spec"]["replicas"]);
    assert_eq!(
        deployment["spec"]["selector"]["matchLabels"]["controller"],
        foo_name
    );

    // Replicas: the Deployment follows the Foo.
    store
        .patch(
            &foos,
            Some(NAMESPACE),
            &foo_name,
            merge(json!({"spec": {"replicas": 3}})),
            None,
        )
        .unwrap();
    eventually(
        &store,
        &deployments,
        &deployment_name,
        "replicas 3",
        &host,
        |d| d.is_some_and(|d| d["spec"]["replicas"] == 3),
    )
    .await;

    // Status: the Foo follows the Deployment.
    store
        .patch(
            &deployments,
            Some(NAMESPACE),
            &deployment_name,
            merge(json!({"status": {"replicas": 3, "availableReplicas": 3}})),
            Some(Subresource::Status),
        )
        .unwrap();
    eventually(
        &store,
        &foos,
        &foo_name,
        "the Foo's availableReplicas",
        &host,
        |f| f.is_some_and(|f| f["status"]["availableReplicas"] == 3),
    )
    .await;

    // The sync was recorded as an event about the Foo, reported by the guest.
    let events = store
        .resource_type("events.k8s.io", "v1", "events")
        .unwrap();
    let listed = store
        .list(&events, Some(NAMESPACE), &ListParams::default())
        .unwrap();
    let synced = listed
        .items
        .iter()
        .find(|e| e["reason"] == "Synced" && e["regarding"]["name"] == foo_name.as_str());
    let synced = synced.unwrap_or_else(|| panic!("no Synced event in {:#?}", listed.items));
    assert_eq!(synced["reportingController"], "sample-controller");
    assert_eq!(synced["regarding"]["kind"], "Foo");

    // Delete: the Deployment is collected with its owner.
    store
        .delete(&foos, Some(NAMESPACE), &foo_name, &DeleteOptions::default())
        .unwrap();
    eventually(
        &store,
        &deployments,
        &deployment_name,
        "the Deployment's collection",
        &host,
        |d| d.is_none(),
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
    std::fs::remove_file(&kubeconfig).unwrap();
    server.shutdown().await;
}
