"""The mirror through the SDK's fake cluster: the Rust example's tests
(`examples/configmap-mirror/src/tests.rs`), case for case."""

import pytest

from configmap_mirror import FINALIZER, MIRROR_OF, MIRROR_SOURCE, MIRROR_TO, ConfigMapMirror
from recon_guest import (
    CONFIG_MAP,
    Action,
    Event,
    EventType,
    IndexSource,
    KeyMapping,
    ObjectKey,
    Verb,
    Watch,
)
from recon_guest.testing import FakeCluster, Write

BLOB = "AAEC/w=="  # base64 of the bytes 0, 1, 2, 255


def source(mirror_to, data):
    meta = {"namespace": "src", "name": "settings"}
    if mirror_to is not None:
        meta["annotations"] = {MIRROR_TO: mirror_to}
    return {"metadata": meta, "data": dict(data), "binaryData": {"blob": BLOB}}


SOURCE_KEY = ObjectKey.namespaced("src", "settings")


def copy(cluster, namespace):
    return cluster.get(CONFIG_MAP, namespace, "settings")


def copies(cluster):
    """The namespaces holding a copy of the source."""
    return [
        cm["metadata"]["namespace"]
        for cm in cluster.list(CONFIG_MAP)
        if (cm["metadata"].get("labels") or {}).get(MIRROR_OF) == "src.settings"
    ]


def finalizers(cluster):
    return copy(cluster, "src")["metadata"].get("finalizers") or []


def assert_settled(cluster, key):
    """Reconciling `key` again is done and writes nothing."""
    cluster.clear_records()
    assert cluster.reconcile(key) == Action.DONE
    assert cluster.writes() == []


def mirrored(mirror_to):
    cluster = FakeCluster(ConfigMapMirror())
    cluster.insert(CONFIG_MAP, source(mirror_to, {"color": "blue"}))
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE
    return cluster


def test_the_manifest_watches_copies_and_indexes_them():
    m = ConfigMapMirror().manifest()
    assert m.name == "configmap-mirror"
    assert m.primary == CONFIG_MAP
    assert m.watches == [Watch(CONFIG_MAP, KeyMapping.annotation(MIRROR_SOURCE), MIRROR_OF)]
    assert m.indexes[0].source == IndexSource.label(MIRROR_OF)
    assert m.allows(CONFIG_MAP, Verb.DELETE)
    assert m.allows_events(), "it warns of ConfigMaps it will not overwrite"
    assert m.resync_period == 600
    m.validate()


def test_an_annotated_config_map_is_copied_into_each_namespace():
    cluster = mirrored("ns-a, ns-b,ns-a")
    assert copies(cluster) == ["ns-a", "ns-b"]
    src = copy(cluster, "src")
    for namespace in ["ns-a", "ns-b"]:
        c = copy(cluster, namespace)
        assert c["data"] == src["data"]
        assert c["binaryData"] == src["binaryData"]
        assert c["metadata"]["labels"] == {MIRROR_OF: "src.settings"}
        assert c["metadata"]["annotations"][MIRROR_SOURCE] == "src/settings"
        assert "finalizers" not in c["metadata"]
    assert finalizers(cluster) == [FINALIZER]
    assert [w.verb for w in cluster.writes()] == [Verb.PATCH, Verb.CREATE, Verb.CREATE]

    # Nothing to do the second time.
    assert_settled(cluster, SOURCE_KEY)


def test_copies_follow_changes_to_the_source():
    cluster = mirrored("ns-a,ns-b")
    src = copy(cluster, "src")
    src["data"] = {"size": "large"}
    del src["binaryData"]
    cluster.insert(CONFIG_MAP, src)
    cluster.clear_records()
    cluster.reconcile(SOURCE_KEY)
    for namespace in ["ns-a", "ns-b"]:
        c = copy(cluster, namespace)
        assert c["data"] == src["data"], "a key removed from the source goes"
        assert "binaryData" not in c
    assert cluster.writes() == [
        Write(Verb.REPLACE, CONFIG_MAP, ObjectKey.namespaced("ns-a", "settings")),
        Write(Verb.REPLACE, CONFIG_MAP, ObjectKey.namespaced("ns-b", "settings")),
    ]


def test_an_edited_or_deleted_copy_is_repaired():
    cluster = mirrored("ns-a,ns-b")
    edited = copy(cluster, "ns-a")
    edited["data"] = {"color": "red"}
    edited["metadata"]["labels"]["team"] = "x"
    cluster.insert(CONFIG_MAP, edited)
    cluster.delete(CONFIG_MAP, "ns-b", "settings")

    # A copy's own key is not a source: nothing happens.
    assert_settled(cluster, ObjectKey.namespaced("ns-a", "settings"))

    # The watch maps the copies to the source, which repairs them.
    cluster.reconcile(SOURCE_KEY)
    repaired = copy(cluster, "ns-a")
    assert repaired["data"] == copy(cluster, "src")["data"]
    assert repaired["metadata"]["labels"]["team"] == "x", "other labels stay"
    assert copy(cluster, "ns-b") is not None


def test_copies_outside_the_annotation_are_deleted():
    cluster = mirrored("ns-a,ns-b")
    src = copy(cluster, "src")
    src["metadata"]["annotations"][MIRROR_TO] = "ns-b,ns-c"
    cluster.insert(CONFIG_MAP, src)
    cluster.reconcile(SOURCE_KEY)
    assert copies(cluster) == ["ns-b", "ns-c"]


def test_removing_the_annotation_removes_every_copy_and_the_finalizer():
    cluster = mirrored("ns-a,ns-b")
    src = copy(cluster, "src")
    del src["metadata"]["annotations"]
    cluster.insert(CONFIG_MAP, src)
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE
    assert copies(cluster) == []
    assert finalizers(cluster) == []

    assert_settled(cluster, SOURCE_KEY)


def test_deleting_the_source_deletes_every_copy():
    cluster = mirrored("ns-a,ns-b")
    cluster.delete(CONFIG_MAP, "src", "settings")
    assert copy(cluster, "src") is not None, "held by the finalizer"
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE
    assert copies(cluster) == []
    assert copy(cluster, "src") is None
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE


def test_a_config_map_that_is_not_a_copy_is_left_alone():
    cluster = FakeCluster(ConfigMapMirror())
    foreign = source(None, {"mine": "yes"})
    foreign["metadata"]["namespace"] = "ns-a"
    foreign = cluster.insert(CONFIG_MAP, foreign)
    src = cluster.insert(CONFIG_MAP, source("ns-a,ns-b", {"color": "blue"}))
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE

    assert copy(cluster, "ns-a") == foreign
    assert copies(cluster) == ["ns-b"]
    assert cluster.events() == [
        Event(
            regarding_kind=CONFIG_MAP,
            regarding=SOURCE_KEY,
            regarding_uid=src["metadata"]["uid"],
            event_type=EventType.WARNING,
            reason="MirrorConflict",
            action="Mirror",
            note='ConfigMap "ns-a/settings" exists and is not a mirror of src/settings',
        )
    ]


def test_the_own_namespace_and_invalid_names_are_not_targets():
    cluster = mirrored("src,Not_A_Namespace,ns-a")
    assert copies(cluster) == ["ns-a"]
    events = cluster.events()
    assert len(events) == 1
    assert events[0].reason == "InvalidMirrorTarget"
    assert events[0].note == '"Not_A_Namespace" is not a namespace name'


def test_a_source_whose_label_would_be_too_long_is_not_mirrored():
    cluster = FakeCluster(ConfigMapMirror())
    long = source("ns-a", {})
    long["metadata"]["name"] = "n" * 60
    cluster.insert(CONFIG_MAP, long)
    assert cluster.reconcile(ObjectKey.namespaced("src", "n" * 60)) == Action.DONE
    assert cluster.events()[0].reason == "MirrorNameTooLong"
    assert cluster.events()[0].note == (
        f'cannot mirror: the label value "src.{"n" * 60}" would be longer than 63 characters'
    )
    assert cluster.get(CONFIG_MAP, "ns-a", "n" * 60) is None


def test_unrelated_and_missing_config_maps_are_done():
    cluster = FakeCluster(ConfigMapMirror())
    cluster.insert(CONFIG_MAP, source(None, {"a": "b"}))
    assert cluster.reconcile(SOURCE_KEY) == Action.DONE
    assert cluster.reconcile(ObjectKey.namespaced("src", "missing")) == Action.DONE
    assert cluster.writes() == []


def drain(cluster):
    """Reconciles the keys the changes queued, as the host's workers would,
    until nothing more is queued; the keys reconciled, in order."""
    reconciled = []
    for _ in range(10):
        keys = cluster.take_pending_keys()
        if not keys:
            return reconciled
        for key in keys:
            cluster.reconcile(key)
            reconciled.append(str(key))
    pytest.fail(f"still queueing after 10 rounds: {reconciled}")


def test_a_changed_copy_queues_its_source_and_the_queue_repairs_it():
    cluster = mirrored("ns-a,ns-b")
    drain(cluster)
    edited = copy(cluster, "ns-a")
    edited["data"] = {"color": "red"}
    cluster.insert(CONFIG_MAP, edited)
    cluster.delete(CONFIG_MAP, "ns-b", "settings")
    # Each copy is a primary object (its own key) and, through the watch's
    # annotation mapping, names its source.
    assert cluster.pending_keys() == [
        ObjectKey.namespaced("ns-a", "settings"),
        SOURCE_KEY,
        ObjectKey.namespaced("ns-b", "settings"),
    ]
    # Working the queue off repairs both copies without a reconcile by hand.
    drain(cluster)
    assert copy(cluster, "ns-a")["data"] == copy(cluster, "src")["data"]
    assert copy(cluster, "ns-b") is not None


def test_a_failed_copy_is_logged_and_the_first_error_fails_the_reconcile():
    cluster = FakeCluster(ConfigMapMirror())
    cluster.manifest.writes[0].verbs.remove(Verb.CREATE)
    cluster.insert(CONFIG_MAP, source("ns-a,ns-b", {"color": "blue"}))
    with pytest.raises(Exception) as failed:
        cluster.reconcile(SOURCE_KEY)
    assert str(failed.value).startswith("forbidden: the manifest of configmap-mirror does not allow Create")
    warnings = [line for line in cluster.logs() if line.message == "mirroring failed"]
    assert [dict(line.fields)["namespace"] for line in warnings] == ["ns-a", "ns-b"]
    assert cluster.num_requeues(SOURCE_KEY) == 1
