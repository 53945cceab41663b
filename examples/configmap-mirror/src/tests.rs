//! The mirror through the SDK's fake cluster.

use k8s_openapi::ByteString;
use recon_guest_sdk::testing::{FakeCluster, Write};
use recon_guest_sdk::{Event, ObjectKey, Watch, gvk_of};

use super::*;

fn source(mirror_to: Option<&str>, data: &[(&str, &str)]) -> ConfigMap {
    ConfigMap {
        metadata: ObjectMeta {
            namespace: Some("src".into()),
            name: Some("settings".into()),
            annotations: mirror_to
                .map(|m| BTreeMap::from([(MIRROR_TO.to_string(), m.to_string())])),
            ..ObjectMeta::default()
        },
        data: Some(
            data.iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        ),
        binary_data: Some(BTreeMap::from([(
            "blob".to_string(),
            ByteString(vec![0, 1, 2, 255]),
        )])),
        ..ConfigMap::default()
    }
}

fn source_key() -> ObjectKey {
    ObjectKey::namespaced("src", "settings")
}

fn copy(cluster: &FakeCluster, namespace: &str) -> Option<ConfigMap> {
    cluster.get::<ConfigMap>(Some(namespace), "settings")
}

/// The namespaces holding a copy of the source.
fn copies(cluster: &FakeCluster) -> Vec<String> {
    cluster
        .list::<ConfigMap>(None)
        .into_iter()
        .filter(|cm| cm.metadata.label(MIRROR_OF) == Some("src.settings"))
        .map(|cm| cm.metadata.namespace.unwrap())
        .collect()
}

fn finalizers(cluster: &FakeCluster) -> Vec<String> {
    copy(cluster, "src")
        .unwrap()
        .metadata
        .finalizers
        .unwrap_or_default()
}

/// Reconciling `key` again is done and writes nothing.
#[track_caller]
fn assert_settled(cluster: &FakeCluster, key: &ObjectKey) {
    cluster.clear_records();
    assert_eq!(cluster.reconcile(key), Ok(Action::Done));
    assert!(cluster.writes().is_empty());
}

fn mirrored(mirror_to: &str) -> FakeCluster {
    let cluster = FakeCluster::new::<ConfigMapMirror>();
    cluster.insert(&source(Some(mirror_to), &[("color", "blue")]));
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));
    cluster
}

#[test]
fn the_manifest_watches_copies_and_indexes_them() {
    let m = ConfigMapMirror::manifest();
    assert_eq!(m.name, "configmap-mirror");
    assert_eq!(m.primary, gvk_of::<ConfigMap>());
    assert_eq!(
        m.watches,
        vec![Watch {
            kind: gvk_of::<ConfigMap>(),
            mapping: KeyMapping::Annotation(MIRROR_SOURCE.into()),
            label_selector: Some(MIRROR_OF.into()),
        }]
    );
    assert_eq!(m.indexes[0].source, IndexSource::Label(MIRROR_OF.into()));
    assert!(m.allows(&gvk_of::<ConfigMap>(), Verb::Delete));
    assert!(
        m.allows_events(),
        "it warns of ConfigMaps it will not overwrite"
    );
    assert_eq!(m.validate(), Ok(()));
}

#[test]
fn an_annotated_config_map_is_copied_into_each_namespace() {
    let cluster = mirrored("ns-a, ns-b,ns-a");
    assert_eq!(copies(&cluster), ["ns-a", "ns-b"]);
    let src = copy(&cluster, "src").unwrap();
    for namespace in ["ns-a", "ns-b"] {
        let c = copy(&cluster, namespace).unwrap();
        assert_eq!(c.data, src.data);
        assert_eq!(c.binary_data, src.binary_data);
        assert_eq!(
            c.metadata.labels,
            Some(BTreeMap::from([(MIRROR_OF.into(), "src.settings".into())]))
        );
        assert_eq!(c.metadata.annotation(MIRROR_SOURCE), Some("src/settings"));
        assert_eq!(c.metadata.finalizers, None);
    }
    assert_eq!(finalizers(&cluster), [FINALIZER]);
    let verbs: Vec<Verb> = cluster.writes().iter().map(|w| w.verb).collect();
    assert_eq!(verbs, [Verb::Patch, Verb::Create, Verb::Create]);

    // Nothing to do the second time.
    assert_settled(&cluster, &source_key());
}

#[test]
fn copies_follow_changes_to_the_source() {
    let cluster = mirrored("ns-a,ns-b");
    let mut src = copy(&cluster, "src").unwrap();
    src.data = Some(BTreeMap::from([("size".into(), "large".into())]));
    src.binary_data = None;
    cluster.insert(&src);
    cluster.clear_records();
    cluster.reconcile(&source_key()).unwrap();
    for namespace in ["ns-a", "ns-b"] {
        let c = copy(&cluster, namespace).unwrap();
        assert_eq!(c.data, src.data, "a key removed from the source goes");
        assert_eq!(c.binary_data, None);
    }
    assert_eq!(
        cluster.writes(),
        [
            Write {
                verb: Verb::Replace,
                kind: gvk_of::<ConfigMap>(),
                key: ObjectKey::namespaced("ns-a", "settings"),
            },
            Write {
                verb: Verb::Replace,
                kind: gvk_of::<ConfigMap>(),
                key: ObjectKey::namespaced("ns-b", "settings"),
            },
        ]
    );
}

#[test]
fn an_edited_or_deleted_copy_is_repaired() {
    let cluster = mirrored("ns-a,ns-b");
    let mut edited = copy(&cluster, "ns-a").unwrap();
    edited.data = Some(BTreeMap::from([("color".into(), "red".into())]));
    edited
        .metadata
        .labels
        .as_mut()
        .unwrap()
        .insert("team".into(), "x".into());
    cluster.insert(&edited);
    cluster
        .delete::<ConfigMap>(Some("ns-b"), "settings")
        .unwrap();

    // A copy's own key is not a source: nothing happens.
    assert_settled(&cluster, &ObjectKey::namespaced("ns-a", "settings"));

    // The watch maps the copies to the source, which repairs them.
    cluster.reconcile(&source_key()).unwrap();
    let repaired = copy(&cluster, "ns-a").unwrap();
    assert_eq!(repaired.data, copy(&cluster, "src").unwrap().data);
    assert_eq!(
        repaired.metadata.label("team"),
        Some("x"),
        "other labels stay"
    );
    assert!(copy(&cluster, "ns-b").is_some());
}

#[test]
fn copies_outside_the_annotation_are_deleted() {
    let cluster = mirrored("ns-a,ns-b");
    let mut src = copy(&cluster, "src").unwrap();
    src.metadata
        .annotations
        .as_mut()
        .unwrap()
        .insert(MIRROR_TO.into(), "ns-b,ns-c".into());
    cluster.insert(&src);
    cluster.reconcile(&source_key()).unwrap();
    assert_eq!(copies(&cluster), ["ns-b", "ns-c"]);
}

#[test]
fn removing_the_annotation_removes_every_copy_and_the_finalizer() {
    let cluster = mirrored("ns-a,ns-b");
    let mut src = copy(&cluster, "src").unwrap();
    src.metadata.annotations = None;
    cluster.insert(&src);
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));
    assert!(copies(&cluster).is_empty());
    assert!(finalizers(&cluster).is_empty());

    assert_settled(&cluster, &source_key());
}

#[test]
fn deleting_the_source_deletes_every_copy() {
    let cluster = mirrored("ns-a,ns-b");
    cluster
        .delete::<ConfigMap>(Some("src"), "settings")
        .unwrap();
    assert!(copy(&cluster, "src").is_some(), "held by the finalizer");
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));
    assert!(copies(&cluster).is_empty());
    assert_eq!(copy(&cluster, "src"), None);
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));
}

#[test]
fn a_config_map_that_is_not_a_copy_is_left_alone() {
    let cluster = FakeCluster::new::<ConfigMapMirror>();
    let mut foreign = source(None, &[("mine", "yes")]);
    foreign.metadata.namespace = Some("ns-a".into());
    let foreign = cluster.insert(&foreign);
    let src = cluster.insert(&source(Some("ns-a,ns-b"), &[("color", "blue")]));
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));

    assert_eq!(copy(&cluster, "ns-a"), Some(foreign));
    assert_eq!(copies(&cluster), ["ns-b"]);
    assert_eq!(
        cluster.events(),
        [Event {
            regarding_kind: gvk_of::<ConfigMap>(),
            regarding: source_key(),
            regarding_uid: src.metadata.uid.unwrap(),
            event_type: EventType::Warning,
            reason: "MirrorConflict".into(),
            action: "Mirror".into(),
            note: "ConfigMap \"ns-a/settings\" exists and is not a mirror of src/settings".into(),
        }]
    );
}

#[test]
fn the_own_namespace_and_invalid_names_are_not_targets() {
    let cluster = mirrored("src,Not_A_Namespace,ns-a");
    assert_eq!(copies(&cluster), ["ns-a"]);
    let events = cluster.events();
    assert_eq!(events.len(), 1);
    assert_eq!(events[0].reason, "InvalidMirrorTarget");
    assert_eq!(
        events[0].note,
        "\"Not_A_Namespace\" is not a namespace name"
    );
}

#[test]
fn a_source_whose_label_would_be_too_long_is_not_mirrored() {
    let cluster = FakeCluster::new::<ConfigMapMirror>();
    let mut long = source(Some("ns-a"), &[]);
    long.metadata.name = Some("n".repeat(60));
    cluster.insert(&long);
    let key = ObjectKey::namespaced("src", &"n".repeat(60));
    assert_eq!(cluster.reconcile(&key), Ok(Action::Done));
    assert_eq!(cluster.events()[0].reason, "MirrorNameTooLong");
    assert!(
        cluster
            .get::<ConfigMap>(Some("ns-a"), &"n".repeat(60))
            .is_none()
    );
}

#[test]
fn unrelated_and_missing_config_maps_are_done() {
    let cluster = FakeCluster::new::<ConfigMapMirror>();
    cluster.insert(&source(None, &[("a", "b")]));
    assert_eq!(cluster.reconcile(&source_key()), Ok(Action::Done));
    assert_eq!(
        cluster.reconcile(&ObjectKey::namespaced("src", "missing")),
        Ok(Action::Done)
    );
    assert!(cluster.writes().is_empty());
}

/// Reconciles the keys the changes queued, as the host's workers would,
/// until nothing more is queued; the keys reconciled, in order.
fn drain(cluster: &FakeCluster) -> Vec<String> {
    let mut reconciled = Vec::new();
    for _ in 0..10 {
        let keys = cluster.take_pending_keys();
        if keys.is_empty() {
            return reconciled;
        }
        for key in keys {
            cluster.reconcile(&key).unwrap();
            reconciled.push(key.to_string());
        }
    }
    panic!("still queueing after 10 rounds: {reconciled:?}");
}

#[test]
fn a_changed_copy_queues_its_source_and_the_queue_repairs_it() {
    let cluster = mirrored("ns-a,ns-b");
    drain(&cluster);
    let mut edited = copy(&cluster, "ns-a").unwrap();
    edited.data = Some(BTreeMap::from([("color".into(), "red".into())]));
    cluster.insert(&edited);
    cluster
        .delete::<ConfigMap>(Some("ns-b"), "settings")
        .unwrap();
    // Each copy is a primary object (its own key) and, through the watch's
    // annotation mapping, names its source.
    assert_eq!(
        cluster.pending_keys(),
        [
            ObjectKey::namespaced("ns-a", "settings"),
            source_key(),
            ObjectKey::namespaced("ns-b", "settings"),
        ]
    );
    // Working the queue off repairs both copies without a reconcile by hand.
    drain(&cluster);
    assert_eq!(
        copy(&cluster, "ns-a").unwrap().data,
        copy(&cluster, "src").unwrap().data
    );
    assert!(copy(&cluster, "ns-b").is_some());
}
