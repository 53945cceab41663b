"""A fake cluster for native pytest tests of reconcilers, ported from the
Rust SDK's `testing::FakeCluster`: it implements the backend a `Context`
calls over an in-memory object store and enforces the reconciler's
manifest the way the host does, so a reconciler runs unchanged against it.

What it does as the host and API server do (the Rust fake's rules):
- objects are JSON keyed by (kind, namespace, name); create assigns `uid`,
  `resourceVersion` (one incrementing counter) and `creationTimestamp`, and
  `generation` 1 to the kinds that have one, bumped by the kind's rule; a
  write that changes nothing keeps the resourceVersion;
- cache reads see only the kinds the manifest caches (the primary kind and
  its selector, owned kinds, watches and their selectors); reading another
  kind is `Forbidden`. Reads drop `metadata.managedFields` and the
  manifest's prune fields; lists are ordered by key (`namespace/name`), as
  the host orders them;
- indexes declared in the manifest, computed from the cached form; an
  undeclared index is `Invalid`;
- writes need the manifest's permission for the kind and verb (`Forbidden`
  otherwise); so do events, which need `Manifest.records_events`;
- replace and update-status with a stale `metadata.resourceVersion`
  conflict, without one they are unconditional; a patch naming another
  resourceVersion conflicts;
- every kind has a status subresource: create drops `status`, replace and
  patches keep the stored status, status writes change only `status`;
- merge and JSON patches; a failed JSON patch `test` is `Invalid`;
- delete honours preconditions and finalizers, and collects dependents
  through owner references (background, or orphan);
- every change queues the primary keys the host's event handlers would
  queue for it (`pending_keys`), through the same key-mapping rules;
- queue calls refuse a key that is not a Kubernetes namespace and name
  (`Invalid`);
- events, queue calls, successful writes and logs are recorded.

What it approximates, as the Rust fake does: server-side apply is a JSON
merge patch of the intent (creating the object when absent); timestamps are
the constant `NOW`."""

from __future__ import annotations

import copy
import json
from dataclasses import dataclass
from typing import List, Optional

from .. import semantics
from ..context import Context, RawObject, WriteOp
from ..manifest import KeyMapping
from ..selector import Selector
from ..types import (
    Action,
    DeleteOptions,
    Error,
    Forbidden,
    Gvk,
    Invalid,
    Level,
    Meta,
    ObjectKey,
    Request,
    Verb,
)
from .store import NOW, Store, meta_str, remove_at

__all__ = ["FakeCluster", "Write", "LogLine", "QueueCall", "NOW"]


@dataclass(frozen=True)
class QueueCall:
    """A queue call the reconciler made: `enqueue`, `enqueue-after` (with
    `delay` in nanoseconds), `enqueue-rate-limited` or `forget`."""

    call: str
    key: ObjectKey
    delay: Optional[int] = None


@dataclass(frozen=True)
class Write:
    """A write the reconciler made that succeeded."""

    verb: Verb
    kind: Gvk
    key: ObjectKey


@dataclass(frozen=True)
class LogLine:
    level: Level
    message: str
    fields: tuple


@dataclass
class _Route:
    kind: Gvk
    selector: Optional[Selector]
    mapping: Optional[KeyMapping]


def _selector(text: Optional[str]) -> Optional[Selector]:
    return Selector.parse(text) if text is not None else None


def _labels(obj: dict) -> dict:
    labels = (obj.get("metadata") or {}).get("labels")
    return labels if isinstance(labels, dict) else {}


def _admitted(filters, labels) -> bool:
    return any(f is None or f.matches(labels) for f in filters)


def _raw(obj: dict) -> RawObject:
    return RawObject(Meta.of(obj), json.dumps(obj, separators=(",", ":")))


def _key_of(key: str) -> ObjectKey:
    split = semantics.split_key(key)
    if split is None:
        return ObjectKey.cluster(key)
    namespace, name = split
    return ObjectKey(namespace or None, name)


def _member(obj: dict, map_name: str, key: str) -> list:
    value = ((obj.get("metadata") or {}).get(map_name) or {}).get(key)
    return [value] if isinstance(value, str) else []


def _index_values(obj: dict, source) -> List[str]:
    if source.case == "label":
        return _member(obj, "labels", source.value)
    if source.case == "annotation":
        return _member(obj, "annotations", source.value)
    if source.case == "field":
        return semantics.strings_at(obj, source.value)
    if source.case == "fields":
        found: List[str] = []
        for path in source.value:
            for value in semantics.strings_at(obj, path):
                if value not in found:
                    found.append(value)
        return found
    return semantics.strings_at(obj, "metadata.ownerReferences.uid")


class FakeCluster:
    """An in-memory cluster running one reconciler; see the module docs.

    `reconciler` is an instance with `manifest()` and `reconcile(ctx, request)`.
    Raises `Invalid` when its manifest is invalid, as the host would refuse it."""

    def __init__(self, reconciler):
        self.reconciler = reconciler
        self.manifest = reconciler.manifest()
        self.manifest.validate()
        m = self.manifest
        self._routes = [_Route(m.primary, _selector(m.primary_label_selector), None)]
        self._routes += [_Route(kind, None, KeyMapping.CONTROLLER_OWNER) for kind in m.owns]
        self._routes += [_Route(w.kind, _selector(w.label_selector), w.mapping) for w in m.watches]
        self._store = Store()
        self._events = []
        self._writes = []
        self._queue_calls = []
        self._logs = []
        self._requeues = {}
        self._pending = []

    def context(self) -> Context:
        """A context over this cluster, for calling SDK helpers directly."""
        return Context(self)

    def reconcile(self, key: ObjectKey) -> Action:
        """Runs one reconcile of `key` and handles the result as the host
        does: DONE and requeue-after forget the key's requeues, REQUEUE and
        errors add one. Returns the action; an error is raised again."""
        request = Request(key, self.num_requeues(key))
        try:
            action = self.reconciler.reconcile(self.context(), request)
        except Error:
            self._requeues[key] = self._requeues.get(key, 0) + 1
            raise
        if action == Action.REQUEUE:
            self._requeues[key] = self._requeues.get(key, 0) + 1
        else:
            self._requeues.pop(key, None)
        return action

    # ----------------------------------------------------- acting as others

    def insert(self, kind: Gvk, obj: dict) -> dict:
        """Creates or overwrites `obj` as another actor would (no permission
        check, status kept, no resourceVersion precondition); returns it as stored."""
        return self._change(lambda store: store.insert(kind, obj))

    def get(self, kind: Gvk, namespace: Optional[str], name: str) -> Optional[dict]:
        """The stored object (not the cached form: nothing pruned)."""
        obj = self._store.get(kind, namespace, name)
        return copy.deepcopy(obj) if obj is not None else None

    def list(self, kind: Gvk, namespace: Optional[str] = None) -> List[dict]:
        """Every stored object of `kind`, in one namespace or all, ordered by key (`namespace/name`)."""
        return [
            copy.deepcopy(o)
            for o in self._store.of_kind(kind)
            if namespace is None or meta_str(o, "namespace") == namespace
        ]

    def delete(self, kind: Gvk, namespace: Optional[str], name: str) -> None:
        """Deletes as a user would: finalizers delay it, dependents are collected."""
        self._change(lambda store: store.delete(kind, namespace, name, DeleteOptions()))

    # ------------------------------------------------------------ records

    def pending_keys(self) -> List[ObjectKey]:
        """The primary keys the host would have queued for the changes so
        far, each once, in the order first queued."""
        return list(self._pending)

    def take_pending_keys(self) -> List[ObjectKey]:
        keys, self._pending = self._pending, []
        return keys

    def events(self) -> list:
        return list(self._events)

    def writes(self) -> List[Write]:
        return list(self._writes)

    def queue_calls(self) -> List[QueueCall]:
        return list(self._queue_calls)

    def logs(self) -> List[LogLine]:
        return list(self._logs)

    def clear_records(self) -> None:
        """Forgets recorded events, writes, queue calls, logs and pending
        keys (objects and requeue counts stay)."""
        self._events.clear()
        self._writes.clear()
        self._queue_calls.clear()
        self._logs.clear()
        self._pending.clear()

    # ---------------------------------------------------------- internals

    def _change(self, change):
        before = self._store.snapshot()
        result = change(self._store)
        after = self._store.snapshot()
        keys = []
        for key, old in before.items():
            new = after.get(key)
            if new is None:
                keys += self._mapped_keys(key[0], old)
            elif new is not old and new != old:
                keys += self._mapped_keys(key[0], old)
                keys += self._mapped_keys(key[0], new)
        for key, new in after.items():
            if key not in before:
                keys += self._mapped_keys(key[0], new)
        for key in keys:
            if key not in self._pending:
                self._pending.append(key)
        return result

    def _mapped_keys(self, kind: Gvk, obj: dict) -> List[ObjectKey]:
        labels = _labels(obj)
        primary = self.manifest.primary
        meta = obj.get("metadata") or {}
        keys: List[str] = []
        for route in self._routes:
            if route.kind != kind or (route.selector is not None and not route.selector.matches(labels)):
                continue
            mapping = route.mapping
            found = None
            if mapping is None:
                found = semantics.object_key(meta.get("namespace") or "", meta.get("name") or "")
            elif mapping.case == "controller-owner":
                found = semantics.controller_owner_key(primary, obj)
            elif mapping.case == "label":
                found = semantics.label_key(mapping.value, obj)
            elif mapping.case == "annotation":
                found = semantics.annotation_key(mapping.value, obj)
            elif mapping.case == "namespace":
                found = semantics.namespace_key(obj)
            elif mapping.case == "by-index":
                try:
                    objects = self.by_index(primary, mapping.value, meta.get("name") or "")
                except Error:
                    objects = []
                keys += [
                    str(raw.meta.key)
                    for raw in objects
                    if semantics.index_key_admitted(obj, str(raw.meta.key))
                ]
            if found is not None:
                keys.append(found)
        return [_key_of(k) for k in keys]

    def _queue(self, call: QueueCall) -> None:
        problem = semantics.key_problem(call.key.namespace, call.key.name)
        if problem is not None:
            raise Invalid(f"invalid key: {problem}")
        self._queue_calls.append(call)

    def _cache_filters(self, kind: Gvk):
        filters = [route.selector for route in self._routes if route.kind == kind]
        if not filters:
            raise Forbidden(
                f"{kind} is not cached for {self.manifest.name}: "
                "the manifest neither reconciles, owns nor watches it"
            )
        return filters

    def _cached_objects(self, kind: Gvk, namespace: Optional[str], label_selector: Optional[str]):
        filters = self._cache_filters(kind)
        selector = Selector.parse(label_selector) if label_selector is not None else None
        return [
            self._cached_form(kind, o)
            for o in self._store.of_kind(kind)
            if (namespace is None or meta_str(o, "namespace") == namespace)
            and _admitted(filters, _labels(o))
            and (selector is None or selector.matches(_labels(o)))
        ]

    def _cached_form(self, kind: Gvk, obj: dict) -> dict:
        """`obj` as the host caches it: without managed fields (unless the
        manifest keeps them) and prune fields, and as a `PartialObjectMetadata`
        of its metadata alone when the manifest reads its kind as metadata
        only."""
        if kind in self.manifest.metadata_only_kinds:
            obj = {
                "kind": "PartialObjectMetadata",
                "apiVersion": "meta.k8s.io/v1",
                "metadata": copy.deepcopy(obj.get("metadata", {})),
            }
        else:
            obj = copy.deepcopy(obj)
        if kind not in self.manifest.managed_fields_kept:
            remove_at(obj, ["metadata", "managedFields"])
        for pruned in self.manifest.prune_fields:
            if pruned.kind == kind:
                remove_at(obj, pruned.path.split("."))
        return obj

    def _check_write(self, kind: Gvk, verb: Verb) -> None:
        if not self.manifest.allows(kind, verb):
            raise Forbidden(f"the manifest of {self.manifest.name} does not allow {verb.value} on {kind}")

    # ------------------------------------------------------------ backend

    def get_raw(self, kind, namespace, name):
        filters = self._cache_filters(kind)
        obj = self._store.get(kind, namespace, name)
        if obj is None or not _admitted(filters, _labels(obj)):
            return None
        return _raw(self._cached_form(kind, obj))

    def get_meta(self, kind, namespace, name):
        raw = self.get_raw(kind, namespace, name)
        return raw.meta if raw is not None else None

    def list_raw(self, kind, namespace, label_selector):
        return [_raw(o) for o in self._cached_objects(kind, namespace, label_selector)]

    def list_meta(self, kind, namespace=None, label_selector=None):
        return [Meta.of(o) for o in self._cached_objects(kind, namespace, label_selector)]

    def by_index(self, kind, index, value):
        spec = next((i for i in self.manifest.indexes if i.name == index and i.kind == kind), None)
        if spec is None:
            raise Invalid(f"the manifest declares no index {semantics.debug_str(index)} for {kind}")
        return [
            _raw(o)
            for o in self._cached_objects(kind, None, None)
            if value in _index_values(o, spec.source)
        ]

    def write(self, kind: Gvk, namespace: Optional[str], write: WriteOp):
        verb = write.verb
        self._check_write(kind, verb)
        if write.op == "delete":
            self._change(lambda store: store.delete(kind, namespace, write.name, write.options))
            stored = None
        elif write.op == "create":
            stored = self._change(lambda store: store.create(kind, namespace, write.json))
        elif write.op == "replace":
            stored = self._change(
                lambda store: store.update(kind, namespace, write.name, write.json, write.status)
            )
        else:
            stored = self._change(
                lambda store: store.patch(kind, namespace, write.name, write.body, write.status)
            )
        raw = _raw(stored) if stored is not None else None
        key = raw.meta.key if raw is not None else ObjectKey(namespace, write.name or "")
        self._writes.append(Write(verb, kind, key))
        return raw

    def record_event(self, event) -> None:
        if not self.manifest.allows_events():
            raise Forbidden(
                f"the manifest of {self.manifest.name} does not allow recording events "
                "(Manifest.records_events)"
            )
        self._events.append(event)

    def enqueue(self, key: ObjectKey) -> None:
        self._queue(QueueCall("enqueue", key))

    def enqueue_after(self, key: ObjectKey, delay: int) -> None:
        self._queue(QueueCall("enqueue-after", key, delay))

    def enqueue_rate_limited(self, key: ObjectKey) -> None:
        self._queue(QueueCall("enqueue-rate-limited", key))
        self._requeues[key] = self._requeues.get(key, 0) + 1

    def forget(self, key: ObjectKey) -> None:
        self._queue_calls.append(QueueCall("forget", key))
        self._requeues.pop(key, None)

    def num_requeues(self, key: ObjectKey) -> int:
        return self._requeues.get(key, 0)

    def log(self, level: Level, message: str, fields) -> None:
        self._logs.append(LogLine(level, message, tuple(fields)))


__all__ += ["NOW"]
