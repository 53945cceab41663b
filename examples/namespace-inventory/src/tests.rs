//! The inventory through the SDK's fake cluster.

use std::collections::BTreeMap;

use k8s_openapi::apimachinery::pkg::apis::meta::v1::ObjectMeta;
use recon_guest_sdk::testing::FakeCluster;
use recon_guest_sdk::{ObjectKey, ObjectMetaExt};

use super::*;

fn namespace(name: &str, opted_in: bool) -> Namespace {
    Namespace {
        metadata: ObjectMeta {
            name: Some(name.into()),
            labels: opted_in
                .then(|| BTreeMap::from([("recon.dev/inventory".to_string(), "true".to_string())])),
            ..ObjectMeta::default()
        },
        ..Namespace::default()
    }
}

fn config_map(namespace: &str, name: &str) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some(namespace.into()),
            name: Some(name.into()),
            ..ObjectMeta::default()
        },
        data: Some(BTreeMap::from([("big".to_string(), "x".repeat(1000))])),
        ..ConfigMap::default()
    }
}

/// Reconciles every queued key until none is left.
fn settle(cluster: &FakeCluster) {
    for _ in 0..10 {
        let keys = cluster.take_pending_keys();
        if keys.is_empty() {
            return;
        }
        for key in keys {
            assert_eq!(cluster.reconcile(&key), Ok(Action::Done));
        }
    }
    panic!("keys still queued after ten rounds");
}

fn count(cluster: &FakeCluster, name: &str) -> Option<String> {
    let namespace = cluster.get::<Namespace>(None, name).unwrap();
    namespace.metadata.annotation(COUNT).map(str::to_string)
}

#[test]
fn an_opted_in_namespace_counts_its_config_maps_as_they_come_and_go() {
    let cluster = FakeCluster::new::<NamespaceInventory>();
    cluster.insert(&namespace("team-a", true));
    cluster.insert(&namespace("team-b", false));
    settle(&cluster);
    assert_eq!(count(&cluster, "team-a").as_deref(), Some("0"));

    cluster.insert(&config_map("team-a", "one"));
    cluster.insert(&config_map("team-a", "two"));
    cluster.insert(&config_map("team-b", "other"));
    // A ConfigMap's change queues its Namespace, opted in or not; team-b
    // is not cached, so its reconcile does nothing.
    assert_eq!(
        cluster.pending_keys(),
        [ObjectKey::cluster("team-a"), ObjectKey::cluster("team-b")]
    );
    settle(&cluster);
    assert_eq!(count(&cluster, "team-a").as_deref(), Some("2"));
    assert_eq!(count(&cluster, "team-b"), None);

    cluster.delete::<ConfigMap>(Some("team-a"), "one").unwrap();
    settle(&cluster);
    assert_eq!(count(&cluster, "team-a").as_deref(), Some("1"));
}

#[test]
fn config_maps_are_cached_without_their_data() {
    let cluster = FakeCluster::new::<NamespaceInventory>();
    cluster.insert(&config_map("team-a", "one"));
    let cached = cluster
        .context()
        .get::<ConfigMap>(Some("team-a"), "one")
        .unwrap()
        .unwrap();
    assert_eq!(cached.data, None);
}
