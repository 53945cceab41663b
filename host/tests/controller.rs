//! Guests wired to the native core: shared informers over in-memory
//! sources, handlers, per-guest workqueues and workers. The `hostile` test
//! guest's attacks each fail that reconcile with a clear error and are
//! retried rate-limited, while the host goes on reconciling other keys.
//! A wired guest's services, over the dev server, keep it to its
//! namespaces (reads, writes and events), to bodies of the kind it writes,
//! and to events only when its manifest declares them.

mod guests;
mod hosts;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use parking_lot::Mutex;
use recon_api_semantics::writes::{DeleteOptions, EventType, Patch};
use recon_devserver::store::{ListParams, ResourceType};
use recon_devserver::{DevServer, DevServerConfig, DevServerHandle};
use recon_host::clock::{Clock, FakeClock, SystemClock};
use recon_host::controller::{ControllerConfig, GuestQueue, Observer, ReconcileRecord};
use recon_host::controller::{ControllerServices, Writer};
use recon_host::controller::{InformerFactory, InformerPlan, InformerSet};
use recon_host::controller::{InformerKey, Manager};
use recon_host::informer::ListerWatcher;
use recon_host::informer::fake_source::FakeSource;
use recon_host::kube::Gvk;
use recon_host::label_selector::LabelSelector;
use recon_host::policy::Namespaces;
use recon_host::runtime::manifest::Manifest;
use recon_host::runtime::services::{GuestError, GuestEvent, GuestServices, Target, Write};
use recon_host::runtime::{Action, Guest, Preopen, ReconcileError, Runtime, RuntimeConfig};
use recon_host::workqueue::default_controller_rate_limiter;
use serde_json::json;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;

const HOSTILE_KEYS: [&str; 5] = [
    "panic",
    "loop-forever",
    "alloc-1gib",
    "write-undeclared",
    "open-file",
];
const FINE_KEYS: usize = 20;
/// Fails with `forbidden`, which no retry fixes.
const TERMINAL_KEY: &str = "forbidden";

#[derive(Default)]
struct Records {
    all: Mutex<Vec<ReconcileRecord>>,
    changed: Notify,
}

impl Records {
    /// An observer of reconciles that records them here.
    fn observer(self: &Arc<Self>) -> Observer {
        let records = Arc::clone(self);
        Arc::new(move |record: &ReconcileRecord| {
            records.all.lock().push(record.clone());
            records.changed.notify_waiters();
        })
    }

    fn by_key(&self) -> HashMap<String, Vec<ReconcileRecord>> {
        let mut map: HashMap<String, Vec<ReconcileRecord>> = HashMap::new();
        for record in self.all.lock().iter() {
            map.entry(record.key.to_string())
                .or_default()
                .push(record.clone());
        }
        map
    }

    /// Waits (at most 60 s) until `done` holds for the records.
    async fn wait_for(
        &self,
        what: &str,
        done: impl Fn(&HashMap<String, Vec<ReconcileRecord>>) -> bool,
    ) {
        let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
        loop {
            let changed = self.changed.notified();
            if done(&self.by_key()) {
                return;
            }
            if tokio::time::timeout_at(deadline, changed).await.is_err() {
                panic!(
                    "timed out waiting for {what}; records: {:#?}",
                    self.by_key()
                );
            }
        }
    }
}

/// Runs `manager` as the leader until `stop`.
async fn run_leading(manager: Manager, stop: CancellationToken) {
    manager
        .run(stop, recon_host::controller::always_leading())
        .await
}

/// The hostile guest loaded into a runtime of `config`, and a source
/// holding a ConfigMap in `default` for each of `keys`.
async fn hostile_with_keys(
    config: RuntimeConfig,
    keys: impl IntoIterator<Item = String>,
) -> (Guest, Arc<FakeSource>) {
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(guests::cache_dir()),
        ..config
    })
    .unwrap();
    let guest = runtime
        .load(&guests::guest_wasm("hostile"))
        .await
        .expect("the hostile guest loads");
    (guest, configmaps_in_default(keys))
}

/// A source holding a ConfigMap in `default` for each of `names`.
fn configmaps_in_default(names: impl IntoIterator<Item = String>) -> Arc<FakeSource> {
    let source = FakeSource::new();
    add_configmaps(&source, "default", names);
    source
}

/// Adds a ConfigMap in `namespace` for each of `names` to `source`.
fn add_configmaps(source: &FakeSource, namespace: &str, names: impl IntoIterator<Item = String>) {
    for name in names {
        source
            .apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": namespace}}))
            .unwrap();
    }
}

/// A manager of `guests` whose every informer lists and watches `source`.
fn manager_over(
    guests: Vec<(Guest, Namespaces)>,
    config: &ControllerConfig,
    source: &Arc<FakeSource>,
) -> Manager {
    let source = Arc::clone(source);
    Manager::new(
        guests,
        Default::default(),
        config,
        Arc::new(move |_: &InformerKey, _| Arc::clone(&source) as Arc<dyn ListerWatcher>),
        |_| None,
    )
    .unwrap()
}

async fn run_hostile_guest(reuse_instances: bool) {
    let config = RuntimeConfig {
        reconcile_timeout: Duration::from_millis(300),
        epoch_tick: Duration::from_millis(5),
        max_instances: 32,
        ..RuntimeConfig::default()
    };
    let keys = HOSTILE_KEYS
        .iter()
        .chain([&TERMINAL_KEY])
        .map(|n| n.to_string())
        .chain((0..FINE_KEYS).map(|i| format!("fine-{i}")));
    let (guest, source) = hostile_with_keys(config, keys).await;
    let records = Arc::new(Records::default());
    let observer = records.observer();
    let config = ControllerConfig {
        workers: Some(3),
        reuse_instances,
        observer: Some(observer),
        ..ControllerConfig::default()
    };
    let configmaps = Gvk::new("", "v1", "ConfigMap");
    let manager = Manager::new(
        vec![(guest, Namespaces::All)],
        Default::default(),
        &config,
        {
            let source = Arc::clone(&source);
            Arc::new(move |key: &InformerKey, _| {
                assert_eq!(key.kind, configmaps, "the guest watches ConfigMaps only");
                Arc::clone(&source) as Arc<dyn ListerWatcher>
            })
        },
        |_| None,
    )
    .unwrap();
    assert_eq!(manager.controllers()[0].workers(), 3);
    let queue = Arc::clone(manager.controllers()[0].queue());
    let stop = CancellationToken::new();
    let run = tokio::spawn(run_leading(manager, stop.clone()));

    records
        .wait_for(
            "every fine key done and every hostile key retried",
            |by_key| {
                (0..FINE_KEYS).all(|i| by_key.contains_key(&format!("default/fine-{i}")))
                    && by_key.contains_key(&format!("default/{TERMINAL_KEY}"))
                    && HOSTILE_KEYS.iter().all(|k| {
                        by_key
                            .get(&format!("default/{k}"))
                            .is_some_and(|r| r.len() >= 2)
                    })
            },
        )
        .await;
    stop.cancel();
    run.await.unwrap();

    let by_key = records.by_key();
    // Queue operations come before the record: a retry would already count.
    let terminal: Arc<str> = Arc::from(format!("default/{TERMINAL_KEY}"));
    assert_eq!(queue.num_requeues(&terminal), 0, "forbidden is not retried");
    let attempts = &by_key[&terminal.to_string()];
    assert_eq!(attempts.len(), 1, "{attempts:?}");
    match &attempts[0].result {
        Err(error @ ReconcileError::Guest(GuestError::Forbidden(message))) => {
            assert!(error.is_terminal());
            assert!(message.contains("may not create"), "{message}");
        }
        other => panic!("expected forbidden, got {other:?}"),
    }
    for i in 0..FINE_KEYS {
        let fine = &by_key[&format!("default/fine-{i}")];
        assert_eq!(fine.len(), 1, "a fine key is reconciled once: {fine:?}");
        assert_eq!(fine[0].result, Ok(Action::Done));
    }
    for name in HOSTILE_KEYS {
        let attempts = &by_key[&format!("default/{name}")];
        for (n, record) in attempts.iter().enumerate() {
            assert_eq!(record.attempt as usize, n, "retries count up: {attempts:?}");
            let error = record.result.as_ref().expect_err("a hostile key fails");
            match (name, error) {
                ("panic", ReconcileError::Trap { output, .. }) => {
                    assert!(
                        output.contains("hostile guest panicked on purpose"),
                        "{output}"
                    )
                }
                ("loop-forever", ReconcileError::Timeout { limit }) => {
                    assert_eq!(*limit, Duration::from_millis(300))
                }
                ("alloc-1gib", ReconcileError::MemoryLimit { limit, .. }) => {
                    assert_eq!(*limit, 64 << 20)
                }
                ("write-undeclared", ReconcileError::Guest(GuestError::Other(report))) => {
                    assert!(
                        report.contains("forbidden") && report.contains("may not create"),
                        "{report}"
                    )
                }
                ("open-file", ReconcileError::Guest(GuestError::Other(report))) => {
                    assert!(!report.contains("succeeded"), "{report}")
                }
                _ => panic!("{name}: unexpected {error:?}"),
            }
        }
    }
}

/// A guest's `list` (across the cache) and `list_meta` (of one namespace)
/// hand the cached objects over ordered by key, as a lister's answer is,
/// whatever order the cache holds them in.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_s_lists_arrive_ordered_by_key() {
    // Names whose order of insertion is not their order, in two namespaces.
    let names: Vec<String> = (0..40)
        .map(|i| format!("cm-{:02}", (i * 17) % 40))
        .collect();
    let source = configmaps_in_default(names.iter().cloned().chain(["list-keys".to_string()]));
    add_configmaps(&source, "other", names.iter().rev().cloned());
    let guest = load("hostile", None).await;
    let records = Arc::new(Records::default());
    let config = ControllerConfig {
        workers: Some(1),
        observer: Some(records.observer()),
        ..ControllerConfig::default()
    };
    let manager = manager_over(vec![(guest, Namespaces::All)], &config, &source);
    let stop = CancellationToken::new();
    let run = tokio::spawn(run_leading(manager, stop.clone()));
    records
        .wait_for("the keys listed", |by_key| {
            by_key.contains_key("default/list-keys")
        })
        .await;
    stop.cancel();
    run.await.unwrap();

    let report = match &records.by_key()["default/list-keys"][0].result {
        Err(ReconcileError::Guest(GuestError::Other(report))) => report.clone(),
        other => panic!("expected the keys listed, got {other:?}"),
    };
    let (listed, in_namespace) = report
        .strip_prefix("list-keys: ")
        .and_then(|lists| lists.split_once("; "))
        .unwrap_or_else(|| panic!("not a list-keys report: {report}"));
    let mut sorted_names = names.clone();
    sorted_names.push("list-keys".to_string());
    sorted_names.sort();
    let in_default: Vec<String> = sorted_names
        .iter()
        .map(|n| format!("default/{n}"))
        .collect();
    let mut everywhere = in_default.clone();
    everywhere.extend(names.iter().map(|n| format!("other/{n}")));
    everywhere.sort();
    assert_eq!(listed.split(',').collect::<Vec<_>>(), everywhere);
    assert_eq!(in_namespace.split(',').collect::<Vec<_>>(), in_default);
}

/// A key that failed as unavailable is retried as soon as the API server
/// answers again, its backoff forgotten, not after its rate limiter's
/// delay (here on a fake clock that never moves, so never otherwise); a key
/// that failed for its own reasons keeps its backoff.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failed_keys_are_retried_at_once_when_the_server_answers_again() {
    let keys = ["fail", "open-file", "fine"].map(String::from);
    let (guest, source) = hostile_with_keys(RuntimeConfig::default(), keys).await;
    let records = Arc::new(Records::default());
    let clock = FakeClock::new();
    let (recovered, recoveries) = tokio::sync::watch::channel(0u64);
    let config = ControllerConfig {
        workers: Some(1),
        observer: Some(records.observer()),
        clock: clock.shared(),
        recoveries: Some(recoveries),
        ..ControllerConfig::default()
    };
    let manager = manager_over(vec![(guest, Namespaces::All)], &config, &source);
    let stop = CancellationToken::new();
    let queue = Arc::clone(manager.controllers()[0].queue());
    let run = tokio::spawn(run_leading(manager, stop.clone()));
    let attempts = |count: usize| {
        move |by_key: &HashMap<String, Vec<ReconcileRecord>>| {
            by_key.contains_key("default/fine")
                && by_key.contains_key("default/open-file")
                && by_key.get("default/fail").is_some_and(|r| r.len() == count)
        }
    };
    records
        .wait_for("a first, failed attempt", attempts(1))
        .await;
    recovered.send_modify(|n| *n += 1);
    records.wait_for("a retry at once", attempts(2)).await;
    let by_key = records.by_key();
    let retried = &by_key["default/fail"];
    assert!(retried[1].result.is_err());
    assert_eq!(retried[1].attempt, 0, "its backoff was forgotten");
    assert_eq!(
        by_key["default/fine"].len(),
        1,
        "a key that did not fail is not"
    );
    let own: Arc<str> = Arc::from("default/open-file");
    assert_eq!(
        queue.num_requeues(&own),
        1,
        "a key that failed for its own reasons keeps its backoff"
    );
    stop.cancel();
    run.await.unwrap();
}

/// INF-07, PROC-10: a guest's requested resync reconciles its primaries
/// again once its period has passed on the informer's clock, while a guest
/// sharing the informer without a resync is not woken by it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_s_resync_reconciles_its_primaries_again_and_only_its_own() {
    let eager = load(
        "hostile",
        Some(r#"{"name": "eager", "resync-seconds": 600}"#),
    )
    .await;
    let calm = load("hostile", Some(r#"{"name": "calm"}"#)).await;
    let source = configmaps_in_default(["fine".to_string()]);
    let records = Arc::new(Records::default());
    let clock = FakeClock::new();
    let config = ControllerConfig {
        workers: Some(1),
        observer: Some(records.observer()),
        clock: clock.shared(),
        ..ControllerConfig::default()
    };
    let manager = manager_over(
        vec![(eager, Namespaces::All), (calm, Namespaces::All)],
        &config,
        &source,
    );
    let stop = CancellationToken::new();
    let run = tokio::spawn(run_leading(manager, stop.clone()));
    let reconciles = |guest: &str| {
        records
            .all
            .lock()
            .iter()
            .filter(|r| &*r.guest == guest && &*r.key == "default/fine")
            .count()
    };
    let count = |guest: &'static str, n: usize| {
        move |_: &HashMap<String, Vec<ReconcileRecord>>| reconciles(guest) == n
    };
    records
        .wait_for("eager's first reconcile", count("eager", 1))
        .await;
    records
        .wait_for("calm's first reconcile", count("calm", 1))
        .await;
    // The informer's one timer is its resync check, at eager's period.
    for resyncs in 1..=2 {
        clock.wait_for_waiters(1).await;
        let due = clock.next_deadline().expect("the resync timer");
        assert_eq!(due - Clock::now(&clock), Duration::from_secs(600));
        clock.advance(Duration::from_secs(600));
        records
            .wait_for("eager's resync", count("eager", 1 + resyncs))
            .await;
    }
    assert_eq!(reconciles("calm"), 1, "calm asked for no resync");
    assert!(
        records
            .all
            .lock()
            .iter()
            .all(|r| r.result == Ok(Action::Done)),
        "{:?}",
        records.all.lock()
    );
    stop.cancel();
    run.await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reconciles_fail_alone_with_fresh_instances() {
    run_hostile_guest(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reconciles_fail_alone_with_reused_instances() {
    run_hostile_guest(true).await;
}

/// The namespaces of a guest limited to `names`.
fn only(names: &[&str]) -> Namespaces {
    Namespaces::Only(names.iter().map(|n| n.to_string()).collect())
}

/// Loads the example guest `name`, with `manifest_json` (if any) as the
/// hostile guest's `/hostile/manifest.json`.
async fn load(name: &str, manifest_json: Option<&str>) -> Guest {
    static LOADS: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);
    let mut preopens = Vec::new();
    if let Some(text) = manifest_json {
        // One directory per load: tests run at once.
        let load = LOADS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir = std::path::PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
            .join(format!("controller-{}-attack-{load}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("manifest.json"), text).unwrap();
        preopens.push(Preopen {
            host: dir,
            guest: "/hostile".into(),
            read_only: false,
        });
    }
    let runtime = Runtime::new(RuntimeConfig {
        cache_dir: Some(guests::cache_dir()),
        max_instances: 4,
        preopens,
        ..RuntimeConfig::default()
    })
    .unwrap();
    runtime.load(&guests::guest_wasm(name)).await.unwrap()
}

/// A dev server with the namespaces `default`, `team-a` and `kube-system`
/// and the ConfigMap `settings` in each.
async fn cluster() -> (DevServerHandle, ResourceType) {
    let server = DevServer::start(DevServerConfig::default())
        .await
        .expect("dev server");
    let store = server.store();
    let configmaps = store.resource_type("", "v1", "configmaps").unwrap();
    for ns in ["default", "team-a", "kube-system"] {
        hosts::create_namespace(&store, ns);
        store
            .create(
                &configmaps,
                Some(ns),
                json!({"metadata": {"name": "settings",
                                    "labels": {"recon.dev/mirror-of": "default.source"}}}),
                None,
            )
            .unwrap();
    }
    (server, configmaps)
}

/// The informers of guests with `manifests` over `server`, running until
/// the token is cancelled.
async fn informers_over(
    server: &DevServerHandle,
    manifests: &[&Manifest],
    namespaces: &Namespaces,
) -> (InformerSet, CancellationToken) {
    let (client, discovery) = hosts::dev_client(server).await;
    let mut plan = InformerPlan::new();
    for manifest in manifests {
        plan.add_guest(manifest, namespaces).unwrap();
    }
    let factory = InformerFactory {
        clock: SystemClock::shared(),
        metrics: None,
        recoveries: None,
        source: {
            let (client, discovery) = (client.clone(), Arc::clone(&discovery));
            Arc::new(move |key: &InformerKey, compactor| {
                key.discovered(&client, &discovery, compactor)
            })
        },
        compression: true,
    };
    let stop = CancellationToken::new();
    let informers = plan.build(factory, &stop);
    for (_, informer, stop) in informers.all() {
        let (informer, stop) = (Arc::clone(informer), stop.clone());
        tokio::spawn(async move { informer.run(stop).await });
    }
    (informers, stop)
}

/// `guest`'s services in `namespaces` over `server`, once its caches have
/// synced; cancelling the token stops its informers.
async fn wire(
    server: &DevServerHandle,
    guest: Guest,
    namespaces: &Namespaces,
) -> (ControllerServices, CancellationToken) {
    let (client, discovery) = hosts::dev_client(server).await;
    let (informers, stop) = informers_over(server, &[guest.manifest()], namespaces).await;
    let view = informers.view(guest.name());
    let deadline = Instant::now() + Duration::from_secs(60);
    while !view.has_synced() {
        assert!(Instant::now() < deadline, "the guest's caches never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let queue = Arc::new(GuestQueue::new(Arc::new(default_controller_rate_limiter(
        SystemClock::shared(),
    ))));
    let writer = Writer {
        client: client.for_guest(guest.name()),
        discovery,
        reporting_instance: "controller-test".into(),
    };
    let services = ControllerServices::new(
        guest,
        view,
        queue,
        recon_host::controller::DEFAULT_MAX_QUEUE_DEPTH,
        Some(writer),
    );
    (services, stop)
}

fn configmap_kind() -> Gvk {
    Gvk::new("", "v1", "ConfigMap")
}

fn in_namespace(kind: Gvk, namespace: Option<&str>) -> Target {
    Target {
        kind,
        namespace: namespace.map(str::to_string),
    }
}

fn create_configmap(namespace: Option<&str>, name: &str) -> Write {
    Write::Create {
        target: in_namespace(configmap_kind(), namespace),
        json: json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}})
            .to_string(),
    }
}

fn event_about(namespace: Option<&str>, name: &str) -> GuestEvent {
    GuestEvent {
        regarding_kind: configmap_kind(),
        namespace: namespace.map(str::to_string),
        name: name.into(),
        uid: "uid".into(),
        event_type: EventType::Normal,
        reason: "Checked".into(),
        action: "Check".into(),
        note: "a note".into(),
    }
}

/// The error's message when it is `forbidden`.
fn forbidden<T: std::fmt::Debug>(result: Result<T, GuestError>) -> String {
    match result {
        Err(GuestError::Forbidden(message)) => message,
        other => panic!("expected forbidden, got {other:?}"),
    }
}

/// The requests other than reads that reached the server since its log
/// was last cleared (the informers' lists and watches go on meanwhile).
fn writes_sent(server: &DevServerHandle) -> Vec<String> {
    server
        .request_log()
        .into_iter()
        .filter(|line| !line.starts_with("GET "))
        .collect()
}

fn keys<T>(objects: &[T], key: impl Fn(&T) -> String) -> Vec<String> {
    objects.iter().map(key).collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_guest_reads_writes_and_records_events_only_in_its_namespaces() {
    let (server, configmaps) = cluster().await;
    let store = server.store();
    let guest = load("configmap_mirror", None).await;
    let (services, stop) = wire(&server, guest, &only(&["default", "team-a"])).await;
    let cm = configmap_kind();

    // Reads: its namespaces' informers answer as one cache; another
    // namespace is forbidden.
    let found = services.get(&cm, Some("team-a"), "settings").unwrap();
    assert_eq!(
        found.map(|o| o.key().to_string()).as_deref(),
        Some("team-a/settings")
    );
    let listed = services.list(&cm, None, &LabelSelector::default()).unwrap();
    assert_eq!(
        keys(&listed, |o| o.key().to_string()),
        ["default/settings", "team-a/settings"]
    );
    let indexed = services
        .by_index(&cm, "mirror-of", "default.source")
        .unwrap();
    assert_eq!(
        keys(&indexed, |o| o.key().to_string()),
        ["default/settings", "team-a/settings"]
    );
    for refused in [
        forbidden(services.get(&cm, Some("kube-system"), "settings")),
        forbidden(services.list(&cm, Some("kube-system"), &LabelSelector::default())),
    ] {
        assert!(
            refused.contains("configmap-mirror")
                && refused.contains("namespace kube-system")
                && refused.contains("default, team-a"),
            "{refused}"
        );
    }

    // Writes: refused outside its namespaces before anything is sent.
    server.clear_request_log();
    let name = "intruder".to_string();
    let elsewhere = [
        create_configmap(Some("kube-system"), &name),
        Write::Replace {
            target: in_namespace(cm.clone(), Some("kube-system")),
            name: "settings".into(),
            json: json!({"metadata": {"name": "settings"}, "data": {"x": "y"}}).to_string(),
            status: false,
        },
        Write::Patch {
            target: in_namespace(cm.clone(), Some("kube-system")),
            name: "settings".into(),
            patch: Patch::Merge(r#"{"data":{"x":"y"}}"#.into()),
            status: false,
        },
        Write::Delete {
            target: in_namespace(cm.clone(), Some("kube-system")),
            name: "settings".into(),
            options: DeleteOptions::default(),
        },
    ];
    for write in elsewhere {
        let refused = forbidden(services.write(write).await);
        assert!(
            refused.contains("configmap-mirror") && refused.contains("namespace kube-system"),
            "{refused}"
        );
    }
    let everywhere = forbidden(services.write(create_configmap(None, &name)).await);
    assert!(everywhere.contains("without a namespace"), "{everywhere}");
    // Events about objects elsewhere are refused too.
    let refused = forbidden(
        services
            .record_event(event_about(Some("kube-system"), "settings"))
            .await,
    );
    assert!(
        refused.contains("record an event in namespace kube-system"),
        "{refused}"
    );
    let sent = writes_sent(&server);
    assert!(sent.is_empty(), "nothing may be sent: {sent:?}");
    assert!(store.get(&configmaps, Some("kube-system"), &name).is_err());
    let settings = store
        .get(&configmaps, Some("kube-system"), "settings")
        .unwrap();
    assert!(settings.get("data").is_none(), "{settings}");

    // Within them, the same calls go through.
    let created = services
        .write(create_configmap(Some("team-a"), &name))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(created.key(), "team-a/intruder");
    services
        .record_event(event_about(Some("team-a"), "settings"))
        .await
        .unwrap();
    let events = store
        .resource_type("events.k8s.io", "v1", "events")
        .unwrap();
    let recorded = store
        .list(&events, Some("team-a"), &ListParams::default())
        .unwrap();
    assert_eq!(recorded.items.len(), 1);
    assert_eq!(recorded.items[0]["reportingController"], "configmap-mirror");
    stop.cancel();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_body_of_another_kind_is_refused_before_the_server() {
    let (server, _) = cluster().await;
    let store = server.store();
    let guest = load("configmap_mirror", None).await;
    let (services, stop) = wire(&server, guest, &Namespaces::All).await;
    server.clear_request_log();
    let secret = json!({"apiVersion": "v1", "kind": "Secret",
                        "metadata": {"name": "smuggled"}, "stringData": {"k": "v"}})
    .to_string();
    let target = in_namespace(configmap_kind(), Some("default"));
    for write in [
        Write::Create {
            target: target.clone(),
            json: secret.clone(),
        },
        Write::Replace {
            target: target.clone(),
            name: "settings".into(),
            json: secret.clone(),
            status: false,
        },
        Write::Patch {
            target: target.clone(),
            name: "settings".into(),
            patch: Patch::Apply {
                body: secret.clone(),
                field_manager: "configmap-mirror".into(),
                force: false,
            },
            status: false,
        },
    ] {
        match services.write(write).await {
            Err(GuestError::Invalid(message)) => assert!(
                message.contains("v1, Kind=Secret") && message.contains("v1, Kind=ConfigMap"),
                "{message}"
            ),
            other => panic!("expected invalid, got {other:?}"),
        }
    }
    let sent = writes_sent(&server);
    assert!(sent.is_empty(), "nothing may be sent: {sent:?}");
    let secrets = store.resource_type("", "v1", "secrets").unwrap();
    assert!(store.get(&secrets, Some("default"), "smuggled").is_err());
    stop.cancel();
    server.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn events_need_the_manifest_and_cluster_scoped_kinds_their_grant_alone() {
    let (server, _) = cluster().await;
    let store = server.store();
    let guest = load("hostile", Some(r#"{"creates": [["", "v1", "Namespace"]]}"#)).await;
    let (services, stop) = wire(&server, guest, &only(&["default"])).await;

    let refused = forbidden(
        services
            .record_event(event_about(Some("default"), "settings"))
            .await,
    );
    assert!(
        refused.contains("hostile may not record events"),
        "{refused}"
    );

    // A guest limited to namespaces writes a cluster-scoped kind its
    // manifest (and grant) names.
    let namespace = Write::Create {
        target: in_namespace(Gvk::new("", "v1", "Namespace"), None),
        json: json!({"apiVersion": "v1", "kind": "Namespace",
                     "metadata": {"name": "made-by-hostile"}})
        .to_string(),
    };
    services.write(namespace).await.unwrap();
    let namespaces = store.resource_type("", "v1", "namespaces").unwrap();
    assert!(store.get(&namespaces, None, "made-by-hostile").is_ok());
    stop.cancel();
    server.shutdown().await;
}

// ---------------------------------------------------------------------------
// The SDK's FakeCluster and the host map changes to the same keys

/// How the hostile guest's watch of Secrets maps to ConfigMap keys, by its
/// `manifest.json` member `"watch-mapping"`.
const MAPPINGS: [&str; 4] = ["label", "annotation", "owner", "index"];

/// The `manifest.json` of the hostile guest that watches Secrets mapped as
/// `mapping`.
fn mapped_attack(mapping: &str) -> serde_json::Value {
    json!({"watch-kind": ["", "v1", "Secret"], "watch-mapping": mapping})
}

/// The hostile guest's manifest for `mapped_attack(MAPPINGS[M])`, built
/// natively by the guest's own code for FakeCluster.
struct MappedLikeHostile<const M: usize>;

impl<const M: usize> recon_guest_sdk::Reconciler for MappedLikeHostile<M> {
    fn manifest() -> recon_guest_sdk::Manifest {
        let attack = mapped_attack(MAPPINGS[M]);
        hostile::attack_manifest(attack.as_object().expect("an object"))
    }

    fn reconcile(
        _: &recon_guest_sdk::Context<'_>,
        _: recon_guest_sdk::Request,
    ) -> recon_guest_sdk::Result<recon_guest_sdk::Action> {
        Ok(recon_guest_sdk::Action::Done)
    }
}

/// A ConfigMap in `default`, labelled `watched: <watched>` when given.
fn mapped_configmap(name: &str, watched: Option<&str>) -> serde_json::Value {
    let labels = watched.map_or_else(|| json!({}), |w| json!({ hostile::WATCHED_INDEX: w }));
    json!({"apiVersion": "v1", "kind": "ConfigMap",
           "metadata": {"name": name, "namespace": "default", "labels": labels}})
}

/// A Secret in `default` naming ConfigMaps through each mapping: by its
/// label `hostile`, its annotation `hostile` and its controller owner
/// (`[label, annotation, owner]`); its annotation `step` tells one version
/// from the next.
fn mapped_secret(
    name: &str,
    [label, annotation, owner]: [&str; 3],
    step: &str,
) -> serde_json::Value {
    json!({"apiVersion": "v1", "kind": "Secret",
           "metadata": {"name": name, "namespace": "default",
                        "labels": {"hostile": label},
                        "annotations": {"hostile": annotation, "step": step},
                        "ownerReferences": [{"apiVersion": "v1", "kind": "ConfigMap",
                                             "name": owner, "uid": format!("uid-{owner}"),
                                             "controller": true}]}})
}

/// Runs the hostile guest with its Secret watch mapped as `MAPPINGS[M]`
/// beside `FakeCluster::new::<MappedLikeHostile<M>>()`, makes the same
/// changes in both, and returns the keys the fake queued after checking
/// that the host reconciled exactly those.
async fn host_and_fake_keys<const M: usize>() -> std::collections::BTreeSet<String> {
    let mapping = MAPPINGS[M];
    let guest = load("hostile", Some(&mapped_attack(mapping).to_string())).await;
    let configmaps = FakeSource::new();
    let secrets = FakeSource::new();
    let records = Arc::new(Records::default());
    // One worker: keys are reconciled in the order they were queued.
    let config = ControllerConfig {
        workers: Some(1),
        observer: Some(records.observer()),
        ..ControllerConfig::default()
    };
    let manager = Manager::new(
        vec![(guest, Namespaces::All)],
        Default::default(),
        &config,
        {
            let (configmaps, secrets) = (Arc::clone(&configmaps), Arc::clone(&secrets));
            Arc::new(move |key: &InformerKey, _| match key.kind.kind.as_str() {
                "ConfigMap" => Arc::clone(&configmaps) as Arc<dyn ListerWatcher>,
                "Secret" => Arc::clone(&secrets) as Arc<dyn ListerWatcher>,
                other => panic!("the guest does not watch {other}"),
            })
        },
        |_| None,
    )
    .unwrap();
    let stop = CancellationToken::new();
    let run = tokio::spawn(run_leading(manager, stop.clone()));
    let reconciles = |key: &str, at_least: usize| {
        let key = key.to_string();
        move |by_key: &HashMap<String, Vec<ReconcileRecord>>| {
            by_key.get(&key).is_some_and(|r| r.len() >= at_least)
        }
    };

    // A barrier through the Secret informer: the Secret `sentinel` maps to
    // the ConfigMap `sentinel-target` whatever the mapping, so each change
    // of it reconciles that ConfigMap once more after every key queued
    // before it (one worker, queued in order).
    configmaps
        .apply(mapped_configmap("sentinel-target", Some("sentinel")))
        .unwrap();
    records
        .wait_for(
            "the sentinel's target",
            reconciles("default/sentinel-target", 1),
        )
        .await;
    secrets
        .apply(mapped_secret("sentinel", ["sentinel-target"; 3], "start"))
        .unwrap();
    records
        .wait_for(
            "the Secret informer",
            reconciles("default/sentinel-target", 2),
        )
        .await;

    let fake = recon_guest_sdk::testing::FakeCluster::new::<MappedLikeHostile<M>>();
    // Each change, made in both. After each, the host has reconciled every
    // key the fake queued so far (so the index holds `a` before `s1`
    // changes, as it does in the fake).
    let steps = [
        mapped_configmap("a", Some("s1")),
        mapped_secret("s1", ["b", "team-a/f", "g"], "1"),
        mapped_secret("s2", ["c", "h", "i"], "1"),
        mapped_configmap("d", None),
        mapped_secret("s1", ["e", "j", "k"], "2"),
    ];
    let mut expected = std::collections::BTreeSet::new();
    for object in steps {
        if object["kind"] == "ConfigMap" {
            configmaps.apply(object.clone()).unwrap();
            let typed: k8s_openapi::api::core::v1::ConfigMap =
                serde_json::from_value(object).unwrap();
            fake.insert(&typed);
        } else {
            secrets.apply(object.clone()).unwrap();
            let typed: k8s_openapi::api::core::v1::Secret = serde_json::from_value(object).unwrap();
            fake.insert(&typed);
        }
        expected.extend(fake.take_pending_keys().iter().map(|k| k.to_string()));
        let so_far = expected.clone();
        records
            .wait_for(
                &format!("{mapping}: the fake's keys {so_far:?}"),
                move |by_key| so_far.iter().all(|key| by_key.contains_key(key)),
            )
            .await;
    }
    secrets
        .apply(mapped_secret("sentinel", ["sentinel-target"; 3], "end"))
        .unwrap();
    records
        .wait_for(
            "the last sentinel",
            reconciles("default/sentinel-target", 3),
        )
        .await;
    stop.cancel();
    run.await.unwrap();

    let reconciled: std::collections::BTreeSet<String> = records
        .by_key()
        .into_keys()
        .filter(|key| !key.contains("sentinel"))
        .collect();
    assert_eq!(
        reconciled, expected,
        "{mapping}: the host's keys and the fake's"
    );
    expected
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fake_cluster_queues_the_keys_the_host_reconciles_for_every_mapping() {
    let keys = |keys: &[&str]| -> std::collections::BTreeSet<String> {
        keys.iter()
            .map(|key| {
                if key.contains('/') {
                    key.to_string()
                } else {
                    format!("default/{key}")
                }
            })
            .collect()
    };
    // The ConfigMaps `a` and `d` are primaries; each version of a Secret
    // names others by its label, its annotation (which may name another
    // namespace) and its owner; through the index, `s1` names `a` (whose
    // label `watched` is `s1`) and `s2` nothing. An update maps the old
    // version and the new.
    assert_eq!(
        host_and_fake_keys::<0>().await,
        keys(&["a", "b", "c", "d", "e"])
    );
    assert_eq!(
        host_and_fake_keys::<1>().await,
        keys(&["a", "team-a/f", "h", "d", "j"])
    );
    assert_eq!(
        host_and_fake_keys::<2>().await,
        keys(&["a", "g", "i", "d", "k"])
    );
    assert_eq!(host_and_fake_keys::<3>().await, keys(&["a", "d"]));
}

/// A guest `name` reconciling ConfigMaps that watches Secrets (their label
/// `owner` names the ConfigMap).
fn secret_reader(name: &str) -> Manifest {
    Manifest {
        name: name.into(),
        primary: configmap_kind(),
        primary_label_selector: None,
        owns: vec![],
        watches: vec![recon_host::runtime::manifest::Watch {
            kind: Gvk::new("", "v1", "Secret"),
            mapping: recon_host::runtime::manifest::KeyMapping::Label("owner".into()),
            label_selector: None,
        }],
        indexes: vec![],
        resync_period: None,
        concurrency: None,
        writes: vec![],
        prune_fields: vec![],
        keep_managed_fields: vec![],
        metadata_only: vec![],
    }
}

#[tokio::test]
async fn a_guest_that_keeps_managed_fields_sees_them_where_the_others_caches_drop_them() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let store = server.store();
    for (plural, body) in [
        (
            "configmaps",
            json!({"metadata": {"name": "c"}, "data": {"k": "v"}}),
        ),
        (
            "secrets",
            json!({"metadata": {"name": "s"}, "stringData": {"k": "v"}}),
        ),
    ] {
        let rt = store.resource_type("", "v1", plural).unwrap();
        store
            .create(&rt, Some("default"), body, Some("creator"))
            .unwrap();
    }
    let secrets = Gvk::new("", "v1", "Secret");
    let mut keeper = secret_reader("keeper");
    keeper.keep_managed_fields = vec![secrets.clone()];
    let other = secret_reader("other");
    let (informers, stop) = informers_over(&server, &[&keeper, &other], &Namespaces::All).await;
    let view = informers.view("other");
    let deadline = Instant::now() + Duration::from_secs(60);
    while !view.has_synced() {
        assert!(Instant::now() < deadline, "the caches never synced");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let cached = |kind: &str, name: &str| {
        let all = informers.all();
        let (_, informer, _) = all
            .iter()
            .find(|(key, _, _)| key.kind.kind == kind)
            .expect("an informer of the kind");
        informer
            .indexer()
            .get_by_key(&format!("default/{name}"))
            .expect("cached")
    };
    // One guest keeps the Secrets' managedFields: the shared cache keeps
    // them. No guest keeps the ConfigMaps': that cache drops them.
    let secret = cached("Secret", "s");
    assert!(secret.has_managed_fields(), "{}", secret.json());
    assert!(secret.json().contains(r#""manager":"creator""#));
    assert!(!cached("ConfigMap", "c").has_managed_fields());
    stop.cancel();
}

#[tokio::test]
async fn a_guest_reading_a_kind_as_metadata_only_sees_no_more_of_it_beside_one_reading_it_whole() {
    let server = DevServer::start(DevServerConfig::default()).await.unwrap();
    let store = server.store();
    let rt = store.resource_type("", "v1", "secrets").unwrap();
    store
        .create(
            &rt,
            Some("default"),
            json!({"metadata": {"name": "s", "labels": {"owner": "c"}}, "stringData": {"password": "hunter2"}}),
            Some("creator"),
        )
        .unwrap();
    let secrets = Gvk::new("", "v1", "Secret");
    // The manifest as a guest declares it, through the WIT.
    let guest = load(
        "hostile",
        Some(
            r#"{"name": "names", "watch-kind": ["", "v1", "Secret"], "watch-metadata-only": true}"#,
        ),
    )
    .await;
    assert_eq!(
        guest.manifest().metadata_only,
        std::slice::from_ref(&secrets)
    );
    let mut names = secret_reader("names");
    names.metadata_only = guest.manifest().metadata_only.clone();
    let whole = secret_reader("whole");
    let (informers, stop) = informers_over(&server, &[&names, &whole], &Namespaces::All).await;
    for guest in ["names", "whole"] {
        let view = informers.view(guest);
        let deadline = Instant::now() + Duration::from_secs(60);
        while !view.has_synced() {
            assert!(Instant::now() < deadline, "the caches never synced");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    let secret_of = |guest: &str| -> serde_json::Value {
        let view = informers.view(guest);
        let informers = view.kind(&secrets).expect("reads Secrets").informers();
        assert_eq!(informers.len(), 1);
        let object = informers[0]
            .indexer()
            .get_by_key("default/s")
            .expect("cached");
        serde_json::from_str(&object.json()).unwrap()
    };
    let metadata = secret_of("names");
    assert_eq!(metadata["kind"], "PartialObjectMetadata", "{metadata}");
    assert_eq!(metadata["metadata"]["labels"]["owner"], "c");
    assert!(metadata.get("data").is_none(), "{metadata}");
    let whole = secret_of("whole");
    assert_eq!(whole["kind"], "Secret");
    assert_eq!(whole["data"]["password"], "aHVudGVyMg==");
    let keys: Vec<String> = informers
        .all()
        .iter()
        .map(|(key, _, _)| key.to_string())
        .filter(|key| key.contains("Secret"))
        .collect();
    assert_eq!(keys.len(), 2, "{keys:?}");
    assert!(
        keys.contains(&"v1/Secret metadata only".to_string()),
        "{keys:?}"
    );
    stop.cancel();
}
