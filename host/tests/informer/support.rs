//! Shared helpers: object builders, a seeded source, a recording store and
//! a fake-time driver.

use std::sync::Arc;

use parking_lot::Mutex;
use recon_host::informer::fake_source::FakeSource;
use recon_host::informer::{Store, StoreError};
use recon_host::object::Object;
use serde_json::{Value, json};
use tokio::sync::Notify;

/// A ConfigMap as JSON, without a resourceVersion.
pub fn configmap(namespace: &str, name: &str, data: &str) -> Value {
    json!({
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "metadata": {"namespace": namespace, "name": name, "uid": format!("uid-{namespace}-{name}")},
        "data": {"value": data},
    })
}

/// A source holding `count` ConfigMaps, `ns/cm-0000` onwards.
pub fn seeded(count: usize) -> Arc<FakeSource> {
    let source = FakeSource::new();
    for i in 0..count {
        source
            .apply(configmap("ns", &format!("cm-{i:04}"), "x"))
            .unwrap();
    }
    source
}

/// A cached ConfigMap at `resource_version`.
pub fn object(namespace: &str, name: &str, resource_version: &str) -> Object {
    let mut value = configmap(namespace, name, resource_version);
    value["metadata"]["resourceVersion"] = json!(resource_version);
    Object::from_json(&value.to_string()).expect("valid object")
}

/// One call a [`RecordingStore`] received.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreOp {
    Add(String, String),
    Update(String, String),
    Delete(String, String),
    Replace(Vec<String>, String),
    Resync,
}

/// A store that records every call, keyed by object key and version.
#[derive(Default)]
pub struct RecordingStore {
    pub ops: Mutex<Vec<StoreOp>>,
    pub changed: Notify,
    /// When set, `resync` fails with this message.
    pub fail_resync: Mutex<Option<String>>,
    /// When set, `add` fails with this message.
    pub fail_add: Mutex<Option<String>>,
}

impl RecordingStore {
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
    }

    pub fn ops(&self) -> Vec<StoreOp> {
        self.ops.lock().clone()
    }

    fn push(&self, op: StoreOp) {
        self.ops.lock().push(op);
        self.changed.notify_waiters();
    }

    /// Waits until at least `count` calls were recorded.
    pub async fn wait_for_ops(&self, count: usize) {
        loop {
            let changed = self.changed.notified();
            tokio::pin!(changed);
            changed.as_mut().enable();
            if self.ops.lock().len() >= count {
                return;
            }
            changed.await;
        }
    }
}

fn id(object: &Object) -> (String, String) {
    (
        object.key().to_string(),
        object.resource_version().to_string(),
    )
}

impl Store for RecordingStore {
    fn add(&self, object: Object) -> Result<(), StoreError> {
        let (key, version) = id(&object);
        self.push(StoreOp::Add(key, version));
        match self.fail_add.lock().clone() {
            Some(message) => Err(message.into()),
            None => Ok(()),
        }
    }

    fn update(&self, object: Object) -> Result<(), StoreError> {
        let (key, version) = id(&object);
        self.push(StoreOp::Update(key, version));
        Ok(())
    }

    fn delete(&self, object: Object) -> Result<(), StoreError> {
        let (key, version) = id(&object);
        self.push(StoreOp::Delete(key, version));
        Ok(())
    }

    fn replace(&self, objects: Vec<Object>, resource_version: &str) -> Result<(), StoreError> {
        let keys = objects.iter().map(|o| o.key().to_string()).collect();
        self.push(StoreOp::Replace(keys, resource_version.to_string()));
        Ok(())
    }

    fn resync(&self) -> Result<(), StoreError> {
        self.push(StoreOp::Resync);
        match self.fail_resync.lock().clone() {
            Some(message) => Err(message.into()),
            None => Ok(()),
        }
    }
}

/// Runs until `condition` holds: lets tasks run and, whenever they are idle,
/// moves the fake clock to the next pending deadline. Fails after
/// `max_rounds` idle rounds.
pub async fn drive_until(
    clock: &recon_host::clock::FakeClock,
    max_rounds: usize,
    mut condition: impl FnMut() -> bool,
) {
    for _ in 0..max_rounds {
        for _ in 0..32 {
            if condition() {
                return;
            }
            tokio::task::yield_now().await;
        }
        clock.advance_to_next_deadline();
    }
    assert!(
        condition(),
        "condition not reached after {max_rounds} rounds"
    );
}
