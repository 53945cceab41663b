//! Guests wired to the native core: shared informers over in-memory
//! sources, handlers, per-guest workqueues and workers. The `hostile` test
//! guest's attacks each fail that reconcile with a clear error and are
//! retried rate-limited, while the host goes on reconciling other keys.

mod guests;

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use recon_host::controller::manager::Manager;
use recon_host::controller::{ControllerConfig, ReconcileRecord};
use recon_host::informer::fake_source::FakeSource;
use recon_host::informer::lister_watcher::ListerWatcher;
use recon_host::kube::Gvk;
use recon_host::runtime::services::GuestError;
use recon_host::runtime::{Action, ReconcileError, Runtime, RuntimeConfig};
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

#[derive(Default)]
struct Records {
    all: Mutex<Vec<ReconcileRecord>>,
    changed: Notify,
}

impl Records {
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

async fn run_hostile_guest(reuse_instances: bool) {
    let runtime = Runtime::new(RuntimeConfig {
        reconcile_timeout: Duration::from_millis(300),
        epoch_tick: Duration::from_millis(5),
        max_instances: 32,
        cache_dir: Some(guests::cache_dir()),
        ..RuntimeConfig::default()
    })
    .unwrap();
    let guest = runtime
        .load(&guests::guest_wasm("hostile"))
        .await
        .expect("the hostile guest loads");
    let source = FakeSource::new();
    for name in HOSTILE_KEYS
        .iter()
        .map(|n| n.to_string())
        .chain((0..FINE_KEYS).map(|i| format!("fine-{i}")))
    {
        source
            .apply(json!({"apiVersion": "v1", "kind": "ConfigMap",
                "metadata": {"name": name, "namespace": "default"}}))
            .unwrap();
    }
    let records = Arc::new(Records::default());
    let observer = {
        let records = Arc::clone(&records);
        Arc::new(move |record: &ReconcileRecord| {
            records.all.lock().push(record.clone());
            records.changed.notify_waiters();
        })
    };
    let config = ControllerConfig {
        workers: Some(3),
        reuse_instances,
        observer: Some(observer),
        ..ControllerConfig::default()
    };
    let configmaps = Gvk::new("", "v1", "ConfigMap");
    let manager = Manager::new(
        vec![guest],
        None,
        &config,
        |key| {
            assert_eq!(key.kind, configmaps, "the guest watches ConfigMaps only");
            Arc::clone(&source) as Arc<dyn ListerWatcher>
        },
        |_| None,
    )
    .unwrap();
    assert_eq!(manager.controllers()[0].workers(), 3);
    let manager = Arc::new(manager);
    let stop = CancellationToken::new();
    let run = tokio::spawn({
        let (manager, stop) = (Arc::clone(&manager), stop.clone());
        async move {
            manager
                .run(stop, recon_host::controller::always_leading())
                .await
        }
    });

    records
        .wait_for(
            "every fine key done and every hostile key retried",
            |by_key| {
                (0..FINE_KEYS).all(|i| by_key.contains_key(&format!("default/fine-{i}")))
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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reconciles_fail_alone_with_fresh_instances() {
    run_hostile_guest(false).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hostile_reconciles_fail_alone_with_reused_instances() {
    run_hostile_guest(true).await;
}
