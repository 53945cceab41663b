"""The fake cluster's semantics through the `Context` a guest sees: the
Rust SDK's `guest-sdk/src/testing/tests.rs`, case for case."""

import copy

import pytest

from recon_guest import (
    CONFIG_MAP,
    DEPLOYMENT,
    NAMESPACE,
    POD,
    SECRET,
    Action,
    AlreadyExists,
    Apply,
    Conflict,
    Context,
    DeleteOptions,
    Event,
    EventType,
    Forbidden,
    Gvk,
    IndexSource,
    Invalid,
    KeyMapping,
    Level,
    Manifest,
    NotFound,
    ObjectKey,
    Propagation,
    Unavailable,
    Verb,
    WriteOp,
)
from recon_guest.testing import NOW, FakeCluster, LogLine, QueueCall, Write

ALL_VERBS = [Verb.CREATE, Verb.REPLACE, Verb.PATCH, Verb.DELETE, Verb.UPDATE_STATUS]


class Permissive:
    """May do anything to ConfigMaps and Deployments and record events,
    caches Secrets labelled `managed=true` and every Pod through watches,
    declares three indexes and prunes `data.big`."""

    def manifest(self):
        return (
            Manifest("permissive", CONFIG_MAP)
            .owns_kind(DEPLOYMENT)
            .watch(SECRET, KeyMapping.label("app"), selector="managed=true")
            .watch(POD, KeyMapping.CONTROLLER_OWNER)
            .index(CONFIG_MAP, "by-app", IndexSource.label("app"))
            .index(POD, "by-claim", IndexSource.field("spec.volumes.persistentVolumeClaim.claimName"))
            .index(POD, "by-owner", IndexSource.OWNER_UID)
            .allow(CONFIG_MAP, ALL_VERBS)
            .allow(DEPLOYMENT, ALL_VERBS)
            .records_events()
            .prune(CONFIG_MAP, "data.big")
            .keep_managed_fields(SECRET)
        )

    def reconcile(self, ctx: Context, request):
        """Acts on the key's name, to exercise the queue and result handling."""
        key = request.key
        if key.name == "fail":
            raise Unavailable(f"attempt {request.attempt}")
        if key.name == "requeue":
            return Action.REQUEUE
        if key.name == "later":
            return Action.requeue_after(5)
        if key.name == "queue":
            ctx.enqueue(key)
            ctx.enqueue_after(key, 1.5)
            ctx.enqueue_rate_limited(key)
            ctx.enqueue_rate_limited(key)
            requeues = ctx.num_requeues(key)
            ctx.forget(key)
            ctx.info("queued", requeues=requeues, after=ctx.num_requeues(key))
        return Action.DONE


class ReadOnly:
    """Allowed nothing but reads of ConfigMaps labelled `tier=web`."""

    def manifest(self):
        return Manifest("read-only", CONFIG_MAP).primary_selector("tier=web")

    def reconcile(self, ctx, request):
        return Action.DONE


def config_map(namespace, name, data=None):
    cm = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"namespace": namespace, "name": name}}
    if data is not None:
        cm["data"] = dict(data)
    return cm


def labelled(obj, labels):
    obj = copy.deepcopy(obj)
    obj["metadata"]["labels"] = dict(labels)
    return obj


def deployment(namespace, name, replicas):
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"namespace": namespace, "name": name},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}},
        },
        "status": {"availableReplicas": 7},
    }


def secret(namespace, name, labels=None):
    s = {"apiVersion": "v1", "kind": "Secret", "metadata": {"namespace": namespace, "name": name}}
    if labels is not None:
        s["metadata"]["labels"] = dict(labels)
    return s


def owner_ref(owner):
    return {
        "apiVersion": "v1",
        "kind": "ConfigMap",
        "name": owner["metadata"]["name"],
        "uid": owner["metadata"]["uid"],
        "controller": True,
        "blockOwnerDeletion": True,
    }


def rv(obj):
    return int(obj["metadata"]["resourceVersion"])


def data(cm):
    return cm.get("data") or {}


# ------------------------------------------------------------------ writes


def test_create_assigns_server_metadata_and_drops_status():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    created = ctx.create(deployment("ns", "web", 2))
    meta = created["metadata"]
    assert meta["uid"] == "00000000-0000-0000-0000-000000000001"
    assert meta["resourceVersion"] == "1"
    assert meta["generation"] == 1
    assert meta["creationTimestamp"] == NOW
    assert "status" not in created, "create drops status"
    assert cluster.get(DEPLOYMENT, "ns", "web") == created
    assert cluster.writes() == [Write(Verb.CREATE, DEPLOYMENT, ObjectKey.namespaced("ns", "web"))]
    with pytest.raises(AlreadyExists, match="already exists"):
        ctx.create(deployment("ns", "web", 2))


def test_create_checks_name_namespace_and_type():
    cluster = FakeCluster(Permissive())

    def create(text):
        return cluster.write(CONFIG_MAP, "ns", WriteOp("create", json=text))

    for text in [
        "{}",
        "[]",
        "not json",
        '{"metadata": {"name": "a", "namespace": "other"}}',
        '{"kind": "Secret", "metadata": {"name": "a"}}',
    ]:
        with pytest.raises(Invalid):
            create(text)
    generated = create('{"metadata": {"generateName": "cm-"}}')
    assert generated.meta.key.name.startswith("cm-")
    assert generated.meta.key.namespace == "ns"
    assert generated.parse()["metadata"]["name"] == generated.meta.key.name


def test_resource_versions_and_generations_follow_changes():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    created = ctx.create(deployment("ns", "web", 1))

    # Unchanged: nothing is written, the version stays.
    same = ctx.replace(created)
    assert rv(same) == rv(created)

    # Metadata only: a new version, the same generation.
    relabelled = ctx.replace(labelled(created, {"team": "a"}))
    assert rv(relabelled) == rv(created) + 1
    assert relabelled["metadata"]["generation"] == 1

    # Spec: a new generation.
    scaled = copy.deepcopy(relabelled)
    scaled["spec"]["replicas"] = 3
    scaled = ctx.replace(scaled)
    assert scaled["metadata"]["generation"] == 2
    assert scaled["metadata"]["uid"] == created["metadata"]["uid"]
    assert scaled["metadata"]["creationTimestamp"] == created["metadata"]["creationTimestamp"]

    # A Deployment's annotations bump it too, as the apps strategy does.
    noted = copy.deepcopy(scaled)
    noted["metadata"]["annotations"] = {"note": "x"}
    noted = ctx.replace(noted)
    assert noted["metadata"]["generation"] == 3

    # A ConfigMap has no generation, as on a real server.
    cm = ctx.create(config_map("ns", "a", {"k": "v"}))
    assert "generation" not in cm["metadata"]
    changed = ctx.replace(config_map("ns", "a", {"k": "w"}))
    assert "generation" not in changed["metadata"]
    assert changed["metadata"]["uid"] == cm["metadata"]["uid"]


def test_replace_is_optimistic_with_a_resource_version_and_unconditional_without():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    first = ctx.create(config_map("ns", "a", {"k": "1"}))
    update = copy.deepcopy(first)
    update["data"] = {"k": "2"}
    second = ctx.replace(update)

    # `first` is stale now.
    stale = copy.deepcopy(first)
    stale["data"] = {"k": "3"}
    with pytest.raises(Conflict):
        ctx.replace(stale)
    with pytest.raises(Conflict):
        ctx.update_status(stale)
    assert data(cluster.get(CONFIG_MAP, "ns", "a"))["k"] == "2"

    # Without a version the last writer wins.
    blind = ctx.replace(config_map("ns", "a", {"k": "4"}))
    assert data(blind)["k"] == "4"
    assert rv(blind) == rv(second) + 1

    with pytest.raises(NotFound):
        ctx.replace(config_map("ns", "missing", {}))


LEASE = Gvk("coordination.k8s.io", "v1", "Lease")


class LeaseHolder:
    """A guest that holds Leases: its replaces must name the version they read."""

    def manifest(self):
        return Manifest("lease-holder", LEASE).allow(LEASE, [Verb.CREATE, Verb.REPLACE])

    def reconcile(self, ctx: Context, request):
        return Action.DONE


def test_a_lease_replace_must_name_the_version_it_read():
    cluster = FakeCluster(LeaseHolder())
    ctx = cluster.context()

    def lease(holder):
        return {
            "apiVersion": "coordination.k8s.io/v1",
            "kind": "Lease",
            "metadata": {"namespace": "ns", "name": "lock"},
            "spec": {"holderIdentity": holder},
        }

    held = ctx.create(lease("a"))
    with pytest.raises(Invalid) as refused:
        ctx.replace(lease("b"))
    assert str(refused.value) == (
        'invalid: Lease "lock" is invalid: metadata.resourceVersion: Invalid value: 0x0: '
        "must be specified for an update"
    )
    taken = lease("b")
    taken["metadata"]["resourceVersion"] = held["metadata"]["resourceVersion"]
    assert ctx.replace(taken)["spec"]["holderIdentity"] == "b"


def test_status_writes_change_only_status_and_other_writes_keep_it():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    created = ctx.create(deployment("ns", "web", 1))

    with_status = deployment("ns", "web", 5)
    with_status["metadata"]["resourceVersion"] = created["metadata"]["resourceVersion"]
    updated = ctx.update_status(with_status)
    assert updated["status"]["availableReplicas"] == 7
    assert updated["spec"]["replicas"] == 1, "spec ignored"
    assert updated["metadata"]["generation"] == 1

    patched = ctx.patch_status(
        DEPLOYMENT, "ns", "web", {"status": {"availableReplicas": 2}, "spec": {"replicas": 9}}
    )
    assert patched["status"]["availableReplicas"] == 2
    assert patched["spec"]["replicas"] == 1

    # A replace of the main resource cannot touch status.
    replaced = copy.deepcopy(patched)
    replaced["status"]["availableReplicas"] = 0
    replaced["spec"]["replicas"] = 4
    replaced = ctx.replace(replaced)
    assert replaced["status"]["availableReplicas"] == 2
    assert replaced["spec"]["replicas"] == 4

    verbs = [w.verb for w in cluster.writes()]
    assert verbs == [Verb.CREATE, Verb.UPDATE_STATUS, Verb.UPDATE_STATUS, Verb.REPLACE]


def test_merge_and_json_patches():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    created = ctx.create(config_map("ns", "a", {"keep": "1", "drop": "2"}))

    merged = ctx.patch_merge(CONFIG_MAP, "ns", "a", {"data": {"drop": None, "new": "3"}})
    assert data(merged) == {"keep": "1", "new": "3"}

    patched = ctx.patch_json(
        CONFIG_MAP,
        "ns",
        "a",
        [
            {"op": "test", "path": "/data/keep", "value": "1"},
            {"op": "replace", "path": "/data/keep", "value": "one"},
        ],
    )
    assert data(patched)["keep"] == "one"

    # A failed test is the API server's 422, and nothing changes.
    with pytest.raises(Invalid, match="rejected"):
        ctx.patch_json(
            CONFIG_MAP,
            "ns",
            "a",
            [
                {"op": "test", "path": "/data/keep", "value": "1"},
                {"op": "remove", "path": "/data/keep"},
            ],
        )
    assert cluster.get(CONFIG_MAP, "ns", "a") == patched

    # A patch naming a stale resourceVersion conflicts; the current one is fine.
    with pytest.raises(Conflict):
        ctx.patch_merge(
            CONFIG_MAP,
            "ns",
            "a",
            {"metadata": {"resourceVersion": created["metadata"]["resourceVersion"]}, "data": {"x": "y"}},
        )
    current = ctx.patch_merge(
        CONFIG_MAP,
        "ns",
        "a",
        {"metadata": {"resourceVersion": patched["metadata"]["resourceVersion"]}, "data": {"x": "y"}},
    )
    assert data(current)["x"] == "y"

    with pytest.raises(NotFound):
        ctx.patch_merge(CONFIG_MAP, "ns", "missing", {})
    with pytest.raises(Invalid):
        ctx.patch_merge(CONFIG_MAP, "ns", "a", [1])


def test_apply_creates_then_merges_the_intent():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    created = ctx.apply(config_map("ns", "a", {"one": "1", "two": "2"}))
    assert "generation" not in created["metadata"]
    assert cluster.writes()[0].verb == Verb.PATCH

    # The approximation: fields the new intent omits stay.
    applied = ctx.apply(config_map("ns", "a", {"two": "2b"}), force=False)
    assert data(applied) == {"one": "1", "two": "2b"}
    assert applied["metadata"]["uid"] == created["metadata"]["uid"]

    # Applying the same intent again writes nothing new.
    again = ctx.apply(config_map("ns", "a", {"two": "2b"}))
    assert rv(again) == rv(applied)

    # The raw form needs a JSON object.
    with pytest.raises(Invalid):
        cluster.write(CONFIG_MAP, "ns", WriteOp("patch", name="a", body=Apply("[]", True)))


def test_writes_need_the_manifests_permission():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    with pytest.raises(Forbidden, match="Create"):
        ctx.create(secret("ns", "s"))
    with pytest.raises(Forbidden):
        ctx.delete(SECRET, "ns", "s")

    read_only = FakeCluster(ReadOnly())
    ctx = read_only.context()
    read_only.insert(CONFIG_MAP, config_map("ns", "a", {}))
    with pytest.raises(Forbidden):
        ctx.create(config_map("ns", "b", {}))
    with pytest.raises(Forbidden):
        ctx.apply(config_map("ns", "a", {}))
    with pytest.raises(Forbidden):
        ctx.patch_status(CONFIG_MAP, "ns", "a", {})
    assert read_only.writes() == []

    # Events need the manifest's permission too.
    cm = read_only.get(CONFIG_MAP, "ns", "a")
    with pytest.raises(Forbidden) as refused:
        ctx.event(cm, EventType.WARNING, "Odd", "Check", "something odd")
    assert "read-only" in refused.value.message and "records_events" in refused.value.message
    assert read_only.events() == []

    permissive = FakeCluster(Permissive())
    cm = permissive.insert(CONFIG_MAP, config_map("ns", "a", {}))
    permissive.context().event(cm, EventType.WARNING, "Odd", "Check", "something odd")
    assert permissive.events() == [
        Event(
            regarding_kind=CONFIG_MAP,
            regarding=ObjectKey.namespaced("ns", "a"),
            regarding_uid=cm["metadata"]["uid"],
            event_type=EventType.WARNING,
            reason="Odd",
            action="Check",
            note="something odd",
        )
    ]


# ------------------------------------------------------------------- reads


def test_the_cache_holds_only_what_the_manifest_watches():
    cluster = FakeCluster(ReadOnly())
    ctx = cluster.context()
    cluster.insert(CONFIG_MAP, labelled(config_map("ns", "web", {}), {"tier": "web"}))
    cluster.insert(CONFIG_MAP, labelled(config_map("ns", "db", {}), {"tier": "db"}))
    cluster.insert(DEPLOYMENT, deployment("ns", "d", 1))

    assert ctx.get(CONFIG_MAP, "ns", "web") is not None
    assert ctx.get(CONFIG_MAP, "ns", "db") is None, "outside the primary selector"
    assert [m.key.name for m in ctx.list_meta(CONFIG_MAP)] == ["web"]
    with pytest.raises(Forbidden):
        ctx.get(DEPLOYMENT, "ns", "d")
    with pytest.raises(Forbidden):
        ctx.list(SECRET)


def test_watches_admit_objects_through_their_selectors():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    cluster.insert(SECRET, secret("ns", "managed", {"managed": "true"}))
    cluster.insert(SECRET, secret("ns", "other"))
    secrets = ctx.list(SECRET, "ns")
    assert len(secrets) == 1
    assert secrets[0]["metadata"]["name"] == "managed"
    assert ctx.get(SECRET, "ns", "other") is None


def test_lists_filter_by_namespace_and_selector_in_key_order():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    # `a-b/w` orders before `a/y` as the host orders keys (`-` before `/`),
    # where namespace-then-name would put it after `a/z`.
    for ns, name, app in [("b", "x", "web"), ("a", "z", "web"), ("a-b", "w", "db"), ("a", "y", "db")]:
        cluster.insert(CONFIG_MAP, labelled(config_map(ns, name, {}), {"app": app}))

    def keys(items):
        return [str(m.key) for m in items]

    assert keys(ctx.list_meta(CONFIG_MAP)) == ["a-b/w", "a/y", "a/z", "b/x"]
    assert keys(ctx.list_meta(CONFIG_MAP, "a")) == ["a/y", "a/z"]
    assert keys(ctx.list_meta(CONFIG_MAP, None, "app=web")) == ["a/z", "b/x"]
    assert keys(ctx.list_meta(CONFIG_MAP, None, "app notin (web)")) == ["a-b/w", "a/y"]
    assert ctx.list(CONFIG_MAP, "b", "app")[0]["metadata"]["name"] == "x"
    with pytest.raises(Invalid):
        ctx.list(CONFIG_MAP, None, "app in (")


def test_reads_drop_managed_fields_and_prune_fields():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    cm = config_map("ns", "a", {"big": "xxxx", "small": "x"})
    cm["metadata"]["managedFields"] = [{}]
    cluster.insert(CONFIG_MAP, cm)
    cached = ctx.get(CONFIG_MAP, "ns", "a")
    assert "managedFields" not in cached["metadata"]
    assert data(cached) == {"small": "x"}
    raw = cluster.get_raw(CONFIG_MAP, "ns", "a")
    assert "xxxx" not in raw.json
    assert raw.meta.key == ObjectKey.namespaced("ns", "a")
    # The stored object is whole.
    assert data(cluster.get(CONFIG_MAP, "ns", "a"))["big"] == "xxxx"
    # The manifest keeps the Secrets' managedFields.
    secret = {"metadata": {"namespace": "ns", "name": "s", "labels": {"managed": "true"}, "managedFields": [{}]}}
    cluster.insert(SECRET, secret)
    assert ctx.get(SECRET, "ns", "s")["metadata"]["managedFields"] == [{}]


def test_a_kind_read_as_metadata_only_is_cached_as_partial_object_metadata():
    class SecretNames:
        def manifest(self):
            return (
                Manifest("secret-names", CONFIG_MAP)
                .watch(SECRET, KeyMapping.label("app"))
                .index(SECRET, "by-app", IndexSource.label("app"))
                .metadata_only(SECRET)
            )

        def reconcile(self, ctx, request):
            return Action.DONE

    cluster = FakeCluster(SecretNames())
    ctx = cluster.context()
    secret = {
        "metadata": {"namespace": "ns", "name": "token", "labels": {"app": "web"}},
        "data": {"password": "aHVudGVyMg=="},
    }
    cluster.insert(SECRET, secret)
    cached = ctx.get(SECRET, "ns", "token")
    assert cached["kind"] == "PartialObjectMetadata"
    assert cached["apiVersion"] == "meta.k8s.io/v1"
    assert cached["metadata"]["labels"] == {"app": "web"}
    assert "data" not in cached
    assert [o["metadata"]["name"] for o in ctx.by_index(SECRET, "by-app", "web")] == ["token"]
    assert "data" not in ctx.list(SECRET)[0]
    # The stored object is whole.
    assert cluster.get(SECRET, "ns", "token")["data"] == {"password": "aHVudGVyMg=="}


def test_declared_indexes_answer_by_index():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    owner = cluster.insert(CONFIG_MAP, config_map("ns", "owner", {}))
    cluster.insert(CONFIG_MAP, labelled(config_map("ns", "a", {}), {"app": "web"}))
    cluster.insert(CONFIG_MAP, labelled(config_map("other", "b", {}), {"app": "web"}))
    cluster.insert(CONFIG_MAP, labelled(config_map("ns", "c", {}), {"app": "db"}))
    pod = {
        "metadata": {"namespace": "ns", "name": "p", "ownerReferences": [owner_ref(owner)]},
        "spec": {
            "containers": [],
            "volumes": [
                {"name": "one", "persistentVolumeClaim": {"claimName": "data-1"}},
                {"name": "two", "persistentVolumeClaim": {"claimName": "data-2"}},
                {"name": "three", "emptyDir": {}},
            ],
        },
    }
    cluster.insert(POD, pod)

    names = [f"{o['metadata']['namespace']}/{o['metadata']['name']}" for o in ctx.by_index(CONFIG_MAP, "by-app", "web")]
    assert names == ["ns/a", "other/b"]
    assert len(ctx.by_index(POD, "by-claim", "data-2")) == 1
    assert ctx.by_index(POD, "by-claim", "data-3") == []
    assert len(ctx.by_index(POD, "by-owner", owner["metadata"]["uid"])) == 1
    with pytest.raises(Invalid):
        ctx.by_index(CONFIG_MAP, "by-claim", "x")


# ------------------------------------------------------------------ delete


def test_delete_honours_finalizers():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    cm = config_map("ns", "a", {})
    cm["metadata"]["finalizers"] = ["one", "two"]
    created = ctx.create(cm)

    ctx.delete(CONFIG_MAP, "ns", "a")
    deleting = cluster.get(CONFIG_MAP, "ns", "a")
    assert deleting["metadata"]["deletionTimestamp"] == NOW
    assert rv(deleting) == rv(created) + 1

    # No new finalizers while deleting.
    more = copy.deepcopy(deleting)
    more["metadata"]["finalizers"] = ["one", "two", "three"]
    with pytest.raises(Invalid, match="finalizers"):
        ctx.replace(more)

    fewer = copy.deepcopy(deleting)
    fewer["metadata"]["finalizers"] = ["two"]
    ctx.replace(fewer)
    assert cluster.get(CONFIG_MAP, "ns", "a") is not None

    last = ctx.patch_json(CONFIG_MAP, "ns", "a", [{"op": "remove", "path": "/metadata/finalizers/0"}])
    assert last["metadata"]["name"] == "a"
    assert cluster.get(CONFIG_MAP, "ns", "a") is None
    with pytest.raises(NotFound):
        ctx.delete(CONFIG_MAP, "ns", "a")


def test_delete_checks_preconditions():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    cm = ctx.create(config_map("ns", "a", {}))
    with pytest.raises(Conflict, match="UID"):
        ctx.delete(CONFIG_MAP, "ns", "a", DeleteOptions(precondition_uid="someone-else"))
    with pytest.raises(Conflict, match="ResourceVersion"):
        ctx.delete(CONFIG_MAP, "ns", "a", DeleteOptions(precondition_resource_version="0"))
    exact = DeleteOptions(
        precondition_uid=cm["metadata"]["uid"],
        precondition_resource_version=cm["metadata"]["resourceVersion"],
    )
    ctx.delete(CONFIG_MAP, "ns", "a", exact)
    assert cluster.get(CONFIG_MAP, "ns", "a") is None
    assert cluster.writes()[-1].verb == Verb.DELETE


def test_deleting_an_owner_collects_or_orphans_its_dependents():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    owner = ctx.create(config_map("ns", "owner", {}))
    other_owner = ctx.create(config_map("ns", "other-owner", {}))

    def owned(name, owners):
        d = deployment("ns", name, 1)
        d["metadata"]["ownerReferences"] = [owner_ref(o) for o in owners]
        return ctx.create(d)

    owned("only", [owner])
    owned("shared", [owner, other_owner])
    finalized = deployment("ns", "finalized", 1)
    finalized["metadata"]["ownerReferences"] = [owner_ref(owner)]
    finalized["metadata"]["finalizers"] = ["keep"]
    ctx.create(finalized)

    cluster.delete(CONFIG_MAP, "ns", "owner")
    assert cluster.get(DEPLOYMENT, "ns", "only") is None
    assert cluster.get(DEPLOYMENT, "ns", "shared") is not None, "another owner remains"
    assert "deletionTimestamp" in cluster.get(DEPLOYMENT, "ns", "finalized")["metadata"]

    owned("orphan", [other_owner])
    ctx.delete(CONFIG_MAP, "ns", "other-owner", DeleteOptions(propagation=Propagation.ORPHAN))
    assert "ownerReferences" not in cluster.get(DEPLOYMENT, "ns", "orphan")["metadata"]
    assert cluster.get(DEPLOYMENT, "ns", "shared") is not None


# ------------------------------------------------------ reconcile and queue


def test_reconcile_results_update_the_attempt_count_as_the_host_does():
    cluster = FakeCluster(Permissive())
    fail = ObjectKey.namespaced("ns", "fail")
    with pytest.raises(Unavailable) as first:
        cluster.reconcile(fail)
    assert first.value == Unavailable("attempt 0")
    with pytest.raises(Unavailable) as second:
        cluster.reconcile(fail)
    assert second.value == Unavailable("attempt 1")
    requeue = ObjectKey.namespaced("ns", "requeue")
    assert cluster.reconcile(requeue) == Action.REQUEUE
    assert cluster.num_requeues(requeue) == 1
    later = ObjectKey.namespaced("ns", "later")
    assert cluster.reconcile(later) == Action.requeue_after(5)
    assert cluster.num_requeues(later) == 0
    assert cluster.num_requeues(fail) == 2


def test_queue_calls_and_logs_are_recorded():
    cluster = FakeCluster(Permissive())
    key = ObjectKey.namespaced("ns", "queue")
    assert cluster.reconcile(key) == Action.DONE
    assert cluster.queue_calls() == [
        QueueCall("enqueue", key),
        QueueCall("enqueue-after", key, 1_500_000_000),
        QueueCall("enqueue-rate-limited", key),
        QueueCall("enqueue-rate-limited", key),
        QueueCall("forget", key),
    ]
    assert cluster.logs() == [LogLine(Level.INFO, "queued", (("requeues", "2"), ("after", "0")))]
    cluster.clear_records()
    assert cluster.queue_calls() == []
    assert cluster.logs() == []


def test_queue_calls_refuse_keys_the_host_refuses():
    cluster = FakeCluster(Permissive())
    ctx = cluster.context()
    bad = [
        ObjectKey.namespaced("Not_A_Label", "a"),
        ObjectKey.namespaced("ns", ""),
        ObjectKey.namespaced("ns", "a/b"),
        ObjectKey.cluster("n" * 254),
    ]
    for key in bad:
        for call in (
            lambda: ctx.enqueue(key),
            lambda: ctx.enqueue_after(key, 1),
            lambda: ctx.enqueue_rate_limited(key),
        ):
            with pytest.raises(Invalid) as refused:
                call()
            assert refused.value.message.startswith("invalid key: "), key
        assert cluster.num_requeues(key) == 0
    assert cluster.queue_calls() == []
    good = ObjectKey.cluster("n" * 253)
    ctx.enqueue(good)
    assert cluster.queue_calls() == [QueueCall("enqueue", good)]


def test_an_invalid_manifest_is_refused():
    class Broken:
        def manifest(self):
            return Manifest("invalid", CONFIG_MAP).primary_selector("a in (")

        def reconcile(self, ctx, request):
            return Action.DONE

    with pytest.raises(Invalid):
        FakeCluster(Broken())


# ------------------------------------------------------------ key mapping


def keys(cluster):
    return [str(k) for k in cluster.take_pending_keys()]


def test_changes_queue_the_primary_keys_the_manifest_maps_them_to():
    cluster = FakeCluster(Permissive())
    # The primary kind: its own key.
    owner = cluster.insert(CONFIG_MAP, config_map("ns", "a", {}))
    assert keys(cluster) == ["ns/a"]
    # An owned kind: its controller owner, when of the primary kind.
    owned = deployment("ns", "d", 1)
    owned["metadata"]["ownerReferences"] = [owner_ref(owner)]
    cluster.insert(DEPLOYMENT, owned)
    assert keys(cluster) == ["ns/a"]
    foreign = deployment("ns", "e", 1)
    foreign["metadata"]["ownerReferences"] = [{**owner_ref(owner), "kind": "ReplicaSet", "apiVersion": "apps/v1"}]
    cluster.insert(DEPLOYMENT, foreign)
    assert keys(cluster) == []
    # A watched kind with a selector: only the objects it admits, mapped by
    # the label, before and after a change.
    cluster.insert(SECRET, secret("ns", "s", {"app": "b"}))
    assert keys(cluster) == []
    cluster.insert(SECRET, secret("ns", "s", {"app": "b", "managed": "true"}))
    assert keys(cluster) == ["ns/b"]
    cluster.insert(SECRET, secret("ns", "s", {"app": "c", "managed": "true"}))
    assert keys(cluster) == ["ns/b", "ns/c"]
    # Deleting the owner collects its dependent: both changes are mapped.
    cluster.delete(CONFIG_MAP, "ns", "a")
    assert keys(cluster) == ["ns/a"]
    assert cluster.get(DEPLOYMENT, "ns", "d") is None


def test_the_reconcilers_own_writes_queue_keys_too():
    class Creator:
        def manifest(self):
            return Manifest("creator", CONFIG_MAP).owns_kind(DEPLOYMENT).allow(DEPLOYMENT, [Verb.CREATE])

        def reconcile(self, ctx, request):
            owner = ctx.get(CONFIG_MAP, request.key.namespace, request.key.name)
            child = deployment("ns", "child", 1)
            child["metadata"]["ownerReferences"] = [owner_ref(owner)]
            ctx.create(child)
            return Action.DONE

    cluster = FakeCluster(Creator())
    cluster.insert(CONFIG_MAP, config_map("ns", "a", {}))
    cluster.clear_records()
    assert cluster.reconcile(ObjectKey.namespaced("ns", "a")) == Action.DONE
    # The host would see the Deployment created and queue its owner again.
    assert keys(cluster) == ["ns/a"]


def test_index_mappings_find_primary_objects_in_the_watched_objects_namespace():
    class ByIndex:
        def manifest(self):
            return (
                Manifest("by-index", CONFIG_MAP)
                .index(CONFIG_MAP, "by-secret", IndexSource.field("data.secret"))
                .watch(SECRET, KeyMapping.by_index("by-secret"))
            )

        def reconcile(self, ctx, request):
            return Action.DONE

    cluster = FakeCluster(ByIndex())
    cluster.insert(CONFIG_MAP, config_map("ns", "uses-s", {"secret": "s"}))
    cluster.insert(CONFIG_MAP, config_map("ns", "uses-t", {"secret": "t"}))
    cluster.insert(CONFIG_MAP, config_map("other", "uses-s", {"secret": "s"}))
    cluster.clear_records()
    cluster.insert(SECRET, secret("ns", "s"))
    assert keys(cluster) == ["ns/uses-s"]


def test_namespace_mappings_queue_the_namespace_and_fields_indexes_read_every_path():
    class PerNamespace:
        def manifest(self):
            return (
                Manifest("per-namespace", NAMESPACE)
                .watch(CONFIG_MAP, KeyMapping.NAMESPACE)
                .index(
                    NAMESPACE,
                    "by-secret",
                    IndexSource.fields(["metadata.labels.secret", "metadata.annotations.secret"]),
                )
                .watch(SECRET, KeyMapping.by_index("by-secret"))
                .prune(CONFIG_MAP, "data")
            )

        def reconcile(self, ctx, request):
            return Action.DONE

    cluster = FakeCluster(PerNamespace())

    def namespace(name, labels, annotations):
        return {"metadata": {"name": name, "labels": labels, "annotations": annotations}}

    cluster.insert(NAMESPACE, namespace("a", {"secret": "s"}, {}))
    cluster.insert(NAMESPACE, namespace("b", {}, {"secret": "s"}))
    cluster.insert(NAMESPACE, namespace("c", {"secret": "t"}, {}))
    cluster.clear_records()
    cluster.insert(CONFIG_MAP, config_map("a", "settings", {"k": "v"}))
    assert keys(cluster) == ["a"]
    cluster.clear_records()
    # The index finds the Namespaces that name the Secret, whichever
    # namespace the Secret is in: a cluster-scoped primary object is in none.
    cluster.insert(SECRET, secret("c", "s"))
    assert keys(cluster) == ["a", "b"]
    # ConfigMaps are cached without `data`; nothing else is pruned.
    ctx = cluster.context()
    assert "data" not in ctx.get(CONFIG_MAP, "a", "settings")
    assert ctx.get(NAMESPACE, None, "a")["metadata"]["labels"]["secret"] == "s"


def test_ensure_labels_writes_only_what_is_missing_and_if_exists_writes_tolerate_not_found():
    cluster = FakeCluster(Permissive())
    cm = cluster.insert(CONFIG_MAP, labelled(config_map("default", "a"), {"x": "1"}))
    ctx = cluster.context()
    cluster.clear_records()
    assert ctx.ensure_labels(cm, {"x": "1"}) is None
    assert cluster.writes() == [], "nothing missing, nothing written"
    patched = ctx.ensure_labels(cm, {"x": "1", "y": "2"})
    assert patched.label("y") == "2"
    assert len(cluster.writes()) == 1
    annotated = ctx.ensure_annotations(cm, {"team": "a"})
    assert annotated.annotation("team") == "a"
    assert annotated.label("y") == "2", "the stored object's metadata"
    # Metadata-only reads and merge patches: nothing is parsed.
    meta = ctx.get_meta(CONFIG_MAP, "default", "a")
    assert meta.annotation("team") == "a"
    assert meta.resource_version == annotated.resource_version
    assert ctx.get_meta(CONFIG_MAP, "default", "nope") is None
    merged = ctx.patch_merge_meta(CONFIG_MAP, "default", "a", {"metadata": {"labels": {"z": "3"}}})
    assert merged.label("z") == "3"

    assert ctx.delete_if_exists(CONFIG_MAP, "default", "a") is True
    assert ctx.delete_if_exists(CONFIG_MAP, "default", "a") is False
    assert ctx.patch_merge_if_exists(CONFIG_MAP, "default", "a", {}) is None
    with pytest.raises(NotFound):
        ctx.delete(CONFIG_MAP, "default", "a")  # the plain delete still reports it


def test_endpoint_slices_bump_on_labels_and_priority_classes_never():
    from recon_guest import semantics
    from recon_guest.types import Gvk

    def slice_(port, labels):
        return {"metadata": {"labels": labels}, "addressType": "IPv4", "ports": [{"port": port}]}

    rule = semantics.generation_rule(Gvk("discovery.k8s.io", "v1", "EndpointSlice"))
    assert semantics.generation_bumped(rule, slice_(80, {"a": "1"}), slice_(81, {"a": "1"}))
    assert semantics.generation_bumped(rule, slice_(80, {"a": "1"}), slice_(80, {"a": "2"}))
    assert not semantics.generation_bumped(rule, slice_(80, {}), slice_(80, None))
    rule = semantics.generation_rule(Gvk("scheduling.k8s.io", "v1", "PriorityClass"))
    assert semantics.generation_at_create(rule) == 1
    assert not semantics.generation_bumped(rule, {"value": 1}, {"value": 2})
    assert not semantics.unconditional_update_allowed(Gvk("policy", "v1", "PodDisruptionBudget"))
