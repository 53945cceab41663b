"""The component side: the backend over the WIT imports of the
`recon:controller@0.4.0` `controller` world (the bindings componentize-py
generates as `wit_world`), and `export`, which turns a reconciler class into
the `Reconciler` export componentize-py looks for in the app module:

    from recon_guest.wasm import export
    Reconciler = export(MyReconciler)

Only a component imports this module; native tests use `recon_guest.testing`."""

from __future__ import annotations

from componentize_py_types import Err
from wit_world import exports
from wit_world.exports import reconciler as wit_reconciler
from wit_world.imports import cache as wit_cache
from wit_world.imports import client as wit_client
from wit_world.imports import log as wit_log
from wit_world.imports import queue as wit_queue
from wit_world.imports import types as wit

from . import types as t
from .context import Context, RawObject
from .types import Action, Apply, JsonPatch, Merge, Meta, ObjectKey, OwnerRef, Request

_ERRORS = {
    wit.Error_Conflict: t.Conflict,
    wit.Error_AlreadyExists: t.AlreadyExists,
    wit.Error_Forbidden: t.Forbidden,
    wit.Error_Invalid: t.Invalid,
    wit.Error_Unavailable: t.Unavailable,
    wit.Error_TooLarge: t.TooLarge,
    wit.Error_Other: t.Other,
}
_WIT_ERRORS = {sdk: w for w, sdk in _ERRORS.items()}


def _error(e: Err) -> t.Error:
    if isinstance(e.value, wit.Error_NotFound):
        return t.NotFound()
    return _ERRORS.get(type(e.value), t.Other)(getattr(e.value, "value", str(e.value)))


def _call(f, *args):
    """Calls an import, raising its WIT error as the SDK's."""
    try:
        return f(*args)
    except Err as e:
        raise _error(e) from None


def _gvk(kind: t.Gvk) -> wit.Gvk:
    return wit.Gvk(kind.group, kind.version, kind.kind)


def _key(key: ObjectKey) -> wit.ObjectKey:
    return wit.ObjectKey(key.namespace, key.name)


def _meta(m: wit.ObjectMeta) -> Meta:
    return Meta(
        key=ObjectKey(m.key.namespace, m.key.name),
        uid=m.uid,
        resource_version=m.resource_version,
        generation=m.generation,
        labels=dict(m.labels),
        annotations=dict(m.annotations),
        owner_references=[
            OwnerRef(o.api_version, o.kind, o.name, o.uid, o.controller, o.block_owner_deletion)
            for o in m.owner_references
        ],
        finalizers=list(m.finalizers),
        deletion_timestamp=m.deletion_timestamp,
    )


def _raw(o: wit.Object) -> RawObject:
    return RawObject(_meta(o.meta), o.json)


def _patch_body(body):
    if isinstance(body, Merge):
        return wit_client.PatchBody_Merge(body.json)
    if isinstance(body, JsonPatch):
        return wit_client.PatchBody_Json(body.json)
    if isinstance(body, Apply):
        return wit_client.PatchBody_Apply(wit_client.ApplyPatch(body.json, body.force))
    raise t.Invalid(f"unknown patch body {body!r}")


class WitBackend:
    """The backend a `Context` calls in a component: the host's imports."""

    def get_raw(self, kind, namespace, name):
        found = _call(wit_cache.get, _gvk(kind), namespace, name)
        return _raw(found) if found is not None else None

    def get_meta(self, kind, namespace, name):
        found = _call(wit_cache.get_meta, _gvk(kind), namespace, name)
        return _meta(found) if found is not None else None

    def list_raw(self, kind, namespace, label_selector):
        return [_raw(o) for o in _call(wit_cache.list, _gvk(kind), namespace, label_selector)]

    def list_meta(self, kind, namespace=None, label_selector=None):
        return [_meta(m) for m in _call(wit_cache.list_meta, _gvk(kind), namespace, label_selector)]

    def by_index(self, kind, index, value):
        return [_raw(o) for o in _call(wit_cache.by_index, _gvk(kind), index, value)]

    def write(self, kind, namespace, write):
        gvk = _gvk(kind)
        if write.op == "create":
            return _raw(_call(wit_client.create, gvk, namespace, write.json))
        if write.op == "replace":
            f = wit_client.update_status if write.status else wit_client.replace
            return _raw(_call(f, gvk, namespace, write.name, write.json))
        if write.op == "patch":
            f = wit_client.patch_status if write.status else wit_client.patch
            return _raw(_call(f, gvk, namespace, write.name, _patch_body(write.body)))
        options = write.options
        propagation = (
            wit_client.Propagation[options.propagation.name] if options.propagation is not None else None
        )
        wit_options = wit_client.DeleteOptions(
            propagation, options.precondition_uid, options.precondition_resource_version
        )
        _call(wit_client.delete, gvk, namespace, write.name, wit_options)
        return None

    def record_event(self, event):
        _call(
            wit_client.record_event,
            wit_client.Event(
                _gvk(event.regarding_kind),
                _key(event.regarding),
                event.regarding_uid,
                wit_client.EventType[event.event_type.name],
                event.reason,
                event.action,
                event.note,
            ),
        )

    def enqueue(self, key):
        _call(wit_queue.enqueue, _key(key))

    def enqueue_after(self, key, delay):
        _call(wit_queue.enqueue_after, _key(key), delay)

    def enqueue_rate_limited(self, key):
        _call(wit_queue.enqueue_rate_limited, _key(key))

    def forget(self, key):
        wit_queue.forget(_key(key))

    def num_requeues(self, key):
        return wit_queue.num_requeues(_key(key))

    def log(self, level, message, fields):
        wit_log.log(wit_log.Level[level.name], message, list(fields))


def _index_source(source):
    if source.case == "label":
        return wit_reconciler.IndexSource_Label(source.value)
    if source.case == "annotation":
        return wit_reconciler.IndexSource_Annotation(source.value)
    if source.case == "field":
        return wit_reconciler.IndexSource_Field(source.value)
    if source.case == "fields":
        return wit_reconciler.IndexSource_Fields(list(source.value))
    return wit_reconciler.IndexSource_OwnerUid()


def _key_mapping(mapping):
    if mapping.case == "label":
        return wit_reconciler.KeyMapping_Label(mapping.value)
    if mapping.case == "annotation":
        return wit_reconciler.KeyMapping_Annotation(mapping.value)
    if mapping.case == "by-index":
        return wit_reconciler.KeyMapping_ByIndex(mapping.value)
    if mapping.case == "namespace":
        return wit_reconciler.KeyMapping_Namespace()
    return wit_reconciler.KeyMapping_ControllerOwner()


def _nanos(seconds):
    return None if seconds is None else max(0, int(round(seconds * 1_000_000_000)))


def manifest_to_wit(m) -> wit_reconciler.ControllerManifest:
    return wit_reconciler.ControllerManifest(
        name=m.name,
        primary=_gvk(m.primary),
        primary_label_selector=m.primary_label_selector,
        owns=[_gvk(k) for k in m.owns],
        watches=[wit_reconciler.Watch(_gvk(w.kind), _key_mapping(w.mapping), w.label_selector) for w in m.watches],
        indexes=[wit_reconciler.IndexSpec(i.name, _gvk(i.kind), _index_source(i.source)) for i in m.indexes],
        resync_period=_nanos(m.resync_period),
        concurrency=m.concurrency,
        writes=[
            wit_reconciler.Permission(_gvk(p.kind), [wit_reconciler.Verb[v.name] for v in p.verbs])
            for p in m.writes
        ],
        prune_fields=[wit_reconciler.PrunedField(_gvk(p.kind), p.path) for p in m.prune_fields],
        keep_managed_fields=[_gvk(k) for k in m.managed_fields_kept],
        metadata_only=[_gvk(k) for k in m.metadata_only_kinds],
    )


def _action(action: Action):
    if action == Action.DONE:
        return wit_reconciler.Action_Done()
    if action == Action.REQUEUE:
        return wit_reconciler.Action_Requeue()
    return wit_reconciler.Action_RequeueAfter(_nanos(action.after_seconds))


def export(reconciler_class):
    """The `Reconciler` export class for componentize-py, running
    `reconciler_class()`. An SDK `Error` raised by `reconcile` is returned
    as the WIT error (the key is requeued with backoff); any other exception
    traps, as a panic does in a Rust guest (the instance is dropped)."""

    class Reconciler(exports.Reconciler):
        def manifest(self):
            return manifest_to_wit(reconciler_class().manifest())

        def reconcile(self, request):
            key = ObjectKey(request.key.namespace, request.key.name)
            ctx = Context(WitBackend())
            try:
                action = reconciler_class().reconcile(ctx, Request(key, request.attempt))
            except t.NotFound:
                raise Err(wit.Error_NotFound()) from None
            except t.Error as e:
                raise Err(_WIT_ERRORS.get(type(e), wit.Error_Other)(e.message)) from None
            return _action(action)

    return Reconciler
