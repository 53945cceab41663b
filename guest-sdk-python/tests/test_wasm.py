"""The component side (`recon_guest.wasm`) natively, over the bindings
componentize-py generates for the `controller` world of wit/controller.wit:
the manifest and actions converted to the WIT records, the imports' errors
raised as the SDK's, and the SDK's errors returned as the WIT's. The
imports themselves are stand-ins recording what they were called with."""

import importlib
import pathlib
import subprocess
import sys

import pytest

WIT = pathlib.Path(__file__).resolve().parents[2] / "wit"


@pytest.fixture(scope="module")
def wasm(tmp_path_factory):
    """`recon_guest.wasm` over freshly generated bindings."""
    out = tmp_path_factory.mktemp("bindings")
    subprocess.run(
        [
            sys.executable,
            "-c",
            "import sys; from componentize_py import script; sys.argv[0] = 'componentize-py'; sys.exit(script())",
            "-d", str(WIT), "-w", "controller", "bindings", str(out),
        ],
        check=True,
    )  # fmt: skip
    sys.path.insert(0, str(out))
    try:
        yield importlib.import_module("recon_guest.wasm")
    finally:
        sys.path.remove(str(out))
        for name in [n for n in sys.modules if n.startswith(("wit_world", "componentize_py_types", "recon_guest.wasm"))]:
            del sys.modules[name]


from recon_guest import (  # noqa: E402
    CONFIG_MAP,
    Action,
    AlreadyExists,
    Conflict,
    DeleteOptions,
    EventType,
    IndexSource,
    KeyMapping,
    Manifest,
    NotFound,
    ObjectKey,
    Propagation,
    Verb,
)


def test_the_manifest_becomes_the_wit_record(wasm):
    from wit_world.exports import reconciler as r
    from wit_world.imports import types as t

    m = (
        Manifest("m", CONFIG_MAP)
        .primary_selector("a=b")
        .owns_kind(CONFIG_MAP)
        .watch(CONFIG_MAP, KeyMapping.annotation("src"), selector="copy")
        .watch(CONFIG_MAP, KeyMapping.CONTROLLER_OWNER)
        .index(CONFIG_MAP, "f", IndexSource.fields(["a.b", "c"]))
        .index(CONFIG_MAP, "o", IndexSource.OWNER_UID)
        .resync_every(1.5)
        .with_concurrency(3)
        .allow(CONFIG_MAP, [Verb.CREATE, Verb.UPDATE_STATUS])
        .records_events()
        .prune(CONFIG_MAP, "data")
        .keep_managed_fields(CONFIG_MAP)
        .metadata_only(CONFIG_MAP)
    )
    cm = t.Gvk("", "v1", "ConfigMap")
    assert wasm.manifest_to_wit(m) == r.ControllerManifest(
        name="m",
        primary=cm,
        primary_label_selector="a=b",
        owns=[cm],
        watches=[
            r.Watch(cm, r.KeyMapping_Annotation("src"), "copy"),
            r.Watch(cm, r.KeyMapping_ControllerOwner(), None),
        ],
        indexes=[
            r.IndexSpec("f", cm, r.IndexSource_Fields(["a.b", "c"])),
            r.IndexSpec("o", cm, r.IndexSource_OwnerUid()),
        ],
        resync_period=1_500_000_000,
        concurrency=3,
        writes=[
            r.Permission(cm, [r.Verb.CREATE, r.Verb.UPDATE_STATUS]),
            r.Permission(t.Gvk("events.k8s.io", "v1", "Event"), [r.Verb.CREATE]),
        ],
        prune_fields=[r.PrunedField(cm, "data")],
        keep_managed_fields=[cm],
        metadata_only=[cm],
    )


def meta(namespace, name):
    from wit_world.imports import types as t

    return t.ObjectMeta(
        t.ObjectKey(namespace, name), "uid-1", "7", 0, [("app", "web")], [], [], ["f"], None
    )


def test_reads_and_writes_cross_as_json_and_errors_as_the_sdks(wasm, monkeypatch):
    from componentize_py_types import Err
    from wit_world.imports import cache, client
    from wit_world.imports import types as t

    calls = []
    stored = '{"metadata": {"namespace": "ns", "name": "a"}, "data": {"k": "v"}}'

    def get(kind, namespace, name):
        calls.append(("get", kind, namespace, name))
        return t.Object(meta(namespace, name), stored) if name == "a" else None

    def create(kind, namespace, json):
        calls.append(("create", kind, namespace, json))
        raise Err(t.Error_AlreadyExists("exists"))

    def delete(kind, namespace, name, options):
        calls.append(("delete", namespace, name, options))
        raise Err(t.Error_NotFound())

    monkeypatch.setattr(cache, "get", get)
    monkeypatch.setattr(client, "create", create)
    monkeypatch.setattr(client, "delete", delete)
    ctx = wasm.Context(wasm.WitBackend())

    assert ctx.get(CONFIG_MAP, "ns", "a") == {"metadata": {"namespace": "ns", "name": "a"}, "data": {"k": "v"}}
    assert ctx.get(CONFIG_MAP, "ns", "b") is None
    assert calls[0] == ("get", t.Gvk("", "v1", "ConfigMap"), "ns", "a")
    with pytest.raises(AlreadyExists) as exists:
        ctx.create({"metadata": {"namespace": "ns", "name": "a"}}, kind=CONFIG_MAP)
    assert exists.value == AlreadyExists("exists")
    assert calls[2][3] == '{"metadata":{"namespace":"ns","name":"a"},"apiVersion":"v1","kind":"ConfigMap"}'
    assert ctx.delete_if_exists(
        CONFIG_MAP, "ns", "a", DeleteOptions(Propagation.ORPHAN, precondition_uid="u")
    ) is False
    assert calls[3] == ("delete", "ns", "a", client.DeleteOptions(client.Propagation.ORPHAN, "u", None))


def test_events_queue_calls_and_logs_reach_their_imports(wasm, monkeypatch):
    from wit_world.imports import client, log, queue
    from wit_world.imports import types as t

    calls = []
    monkeypatch.setattr(client, "record_event", lambda event: calls.append(event))
    monkeypatch.setattr(queue, "enqueue_after", lambda key, delay: calls.append((key, delay)))
    monkeypatch.setattr(log, "log", lambda level, message, fields: calls.append((level, message, fields)))
    ctx = wasm.Context(wasm.WitBackend())
    source = {"metadata": {"namespace": "ns", "name": "a", "uid": "u"}}
    ctx.event(source, EventType.WARNING, "Odd", "Check", "note", kind=CONFIG_MAP)
    ctx.enqueue_after(ObjectKey.namespaced("ns", "a"), 0.25)
    ctx.warn("failed", namespace="ns", error=Conflict("stale"))
    assert calls == [
        client.Event(
            t.Gvk("", "v1", "ConfigMap"), t.ObjectKey("ns", "a"), "u", client.EventType.WARNING, "Odd", "Check", "note"
        ),
        (t.ObjectKey("ns", "a"), 250_000_000),
        (log.Level.WARN, "failed", [("namespace", "ns"), ("error", "conflict: stale")]),
    ]


def test_the_export_returns_actions_and_errors_as_the_wit_does(wasm):
    from componentize_py_types import Err
    from wit_world.exports import reconciler as r
    from wit_world.imports import types as t

    class Guest:
        def manifest(self):
            return Manifest("g", CONFIG_MAP)

        def reconcile(self, ctx, request):
            return {
                "done": Action.DONE,
                "requeue": Action.REQUEUE,
                "later": Action.requeue_after(2),
            }[request.key.name] if request.key.name != "stale" else _raise(request)

    def _raise(request):
        raise Conflict(f"attempt {request.attempt}") if request.key.namespace else NotFound()

    export = wasm.export(Guest)()
    request = lambda ns, name: r.Request(t.ObjectKey(ns, name), 3)  # noqa: E731
    assert export.manifest().name == "g"
    assert export.reconcile(request("ns", "done")) == r.Action_Done()
    assert export.reconcile(request("ns", "requeue")) == r.Action_Requeue()
    assert export.reconcile(request("ns", "later")) == r.Action_RequeueAfter(2_000_000_000)
    with pytest.raises(Err) as conflict:
        export.reconcile(request("ns", "stale"))
    assert conflict.value.value == t.Error_Conflict("attempt 3")
    with pytest.raises(Err) as missing:
        export.reconcile(request(None, "stale"))
    assert missing.value.value == t.Error_NotFound()
    with pytest.raises(KeyError):
        export.reconcile(request("ns", "crash"))
