"""`Context`: the API a reconciler uses during one reconcile, over any
backend (the WIT imports in a component, `testing.FakeCluster` in native
tests). Cache reads, writes through the host's client, the workqueue,
events and logs, with objects as dicts of their JSON. `WriteOp` and
`RawObject` are the untyped shapes the backends speak, one write variant
per client import, as in the Rust SDK's `backend` module."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import List, Optional, Union

from .types import (
    Apply,
    DeleteOptions,
    Event,
    EventType,
    Gvk,
    Invalid,
    JsonPatch,
    Level,
    Merge,
    Meta,
    NotFound,
    ObjectKey,
    Other,
    Verb,
)

PatchBody = Union[Merge, JsonPatch, Apply]


@dataclass(frozen=True)
class RawObject:
    """A cached or stored object as a backend answers: its metadata and JSON text."""

    meta: Meta
    json: str

    def parse(self) -> dict:
        return json.loads(self.json)


@dataclass(frozen=True)
class WriteOp:
    """One write: `create` (json), `replace` (name, json, status), `patch`
    (name, body, status) or `delete` (name, options)."""

    op: str
    name: Optional[str] = None
    json: Optional[str] = None
    body: Optional[PatchBody] = None
    status: bool = False
    options: Optional[DeleteOptions] = None

    @property
    def verb(self) -> Verb:
        if self.op == "create":
            return Verb.CREATE
        if self.op == "delete":
            return Verb.DELETE
        if self.status:
            return Verb.UPDATE_STATUS
        return Verb.REPLACE if self.op == "replace" else Verb.PATCH


def _kind_of(obj: dict, kind: Optional[Gvk]) -> Gvk:
    return kind if kind is not None else Gvk.of(obj)


def _to_json(obj: dict, kind: Gvk) -> str:
    """`obj` as JSON with `apiVersion` and `kind` filled in from `kind`."""
    if not isinstance(obj, dict):
        raise Invalid(f"a {kind.kind} must be a dict (a JSON object)")
    body = dict(obj)
    body.setdefault("apiVersion", kind.api_version())
    body.setdefault("kind", kind.kind)
    return json.dumps(body, separators=(",", ":"))


def _namespace_of(obj: dict) -> Optional[str]:
    return (obj.get("metadata") or {}).get("namespace")


def _name_of(obj: dict, kind: Gvk) -> str:
    name = (obj.get("metadata") or {}).get("name")
    if not name:
        raise Invalid(f"the {kind.kind} has no metadata.name")
    return name


def _nanos(seconds: float) -> int:
    return max(0, int(round(seconds * 1_000_000_000)))


class Context:
    """The guest's view of the host during one reconcile.

    Reads name the kind (a `Gvk`); writes of a whole object take its kind
    from the object's `apiVersion` and `kind` unless `kind=` is given (and
    then fill them in)."""

    def __init__(self, backend):
        self.backend = backend

    # ------------------------------------------------------------- cache

    def get(self, kind: Gvk, namespace: Optional[str], name: str) -> Optional[dict]:
        """The cached object `namespace/name`; None when it is not in the cache."""
        raw = self.backend.get_raw(kind, namespace, name)
        return raw.parse() if raw is not None else None

    def get_meta(self, kind: Gvk, namespace: Optional[str], name: str) -> Optional[Meta]:
        """As `get`, metadata only: no JSON crosses the boundary."""
        return self.backend.get_meta(kind, namespace, name)

    def list(self, kind: Gvk, namespace: Optional[str] = None, label_selector: Optional[str] = None) -> List[dict]:
        """Cached objects of `kind`, in one namespace or all, optionally
        filtered by a label selector (`app=web,tier!=db`)."""
        return [raw.parse() for raw in self.backend.list_raw(kind, namespace, label_selector)]

    def list_meta(self, kind: Gvk, namespace: Optional[str] = None, label_selector: Optional[str] = None) -> List[Meta]:
        """As `list`, metadata only."""
        return self.backend.list_meta(kind, namespace, label_selector)

    def by_index(self, kind: Gvk, index: str, value: str) -> List[dict]:
        """Cached objects of `kind` whose declared index `index` holds `value`."""
        return [raw.parse() for raw in self.backend.by_index(kind, index, value)]

    # ------------------------------------------------------------ client

    def _write(self, kind: Gvk, namespace: Optional[str], write: WriteOp) -> dict:
        stored = self.backend.write(kind, namespace, write)
        if stored is None:
            raise Other(f"the host answered a {write.verb.value} of {kind} with no object")
        return stored.parse()

    def create(self, obj: dict, kind: Optional[Gvk] = None) -> dict:
        """Creates `obj` in the namespace its metadata names; returns it as stored."""
        kind = _kind_of(obj, kind)
        return self._write(kind, _namespace_of(obj), WriteOp("create", json=_to_json(obj, kind)))

    def replace(self, obj: dict, kind: Optional[Gvk] = None) -> dict:
        """Replaces `obj` (PUT). With `metadata.resourceVersion` set, a stale
        version is `Conflict`; without, the replace is unconditional, except
        for custom resources and Leases, where the server refuses it
        (`Invalid`)."""
        return self._replace(obj, kind, status=False)

    def update_status(self, obj: dict, kind: Optional[Gvk] = None) -> dict:
        """Replaces the status subresource with `obj`'s status; nothing else changes."""
        return self._replace(obj, kind, status=True)

    def _replace(self, obj: dict, kind: Optional[Gvk], status: bool) -> dict:
        kind = _kind_of(obj, kind)
        write = WriteOp("replace", name=_name_of(obj, kind), json=_to_json(obj, kind), status=status)
        return self._write(kind, _namespace_of(obj), write)

    def apply(self, obj: dict, kind: Optional[Gvk] = None, force: bool = True) -> dict:
        """Server-side apply of the intent `obj` (forcing ownership of
        conflicting fields, as controllers do); creates the object if absent."""
        kind = _kind_of(obj, kind)
        body = Apply(_to_json(obj, kind), force)
        return self._write(kind, _namespace_of(obj), WriteOp("patch", name=_name_of(obj, kind), body=body))

    def patch_merge(self, kind: Gvk, namespace: Optional[str], name: str, patch: dict) -> dict:
        """Applies an RFC 7386 JSON merge patch to `namespace/name`."""
        return self._write(kind, namespace, WriteOp("patch", name=name, body=Merge(json.dumps(patch))))

    def patch_merge_meta(self, kind: Gvk, namespace: Optional[str], name: str, patch: dict) -> Meta:
        """`patch_merge` answering with the stored object's metadata only."""
        stored = self.backend.write(kind, namespace, WriteOp("patch", name=name, body=Merge(json.dumps(patch))))
        if stored is None:
            raise Other(f"the host answered a patch of {kind} with no object")
        return stored.meta

    def patch_merge_if_exists(self, kind: Gvk, namespace: Optional[str], name: str, patch: dict) -> Optional[dict]:
        """`patch_merge`, with None when the object is gone."""
        try:
            return self.patch_merge(kind, namespace, name, patch)
        except NotFound:
            return None

    def ensure_labels(self, obj: dict, wanted: dict, kind: Optional[Gvk] = None) -> Optional[Meta]:
        """Sets the labels of `wanted` that `obj` lacks or holds with another
        value, in one merge patch, answering with the stored metadata; None
        (and no write) when all are there already."""
        return self._patch_missing(obj, "labels", wanted, kind)

    def ensure_annotations(self, obj: dict, wanted: dict, kind: Optional[Gvk] = None) -> Optional[Meta]:
        """`ensure_labels` for annotations."""
        return self._patch_missing(obj, "annotations", wanted, kind)

    def _patch_missing(self, obj: dict, field: str, wanted: dict, kind: Optional[Gvk]) -> Optional[Meta]:
        current = (obj.get("metadata") or {}).get(field) or {}
        missing = {k: v for k, v in wanted.items() if current.get(k) != v}
        if not missing:
            return None
        kind = _kind_of(obj, kind)
        patch = {"metadata": {field: missing}}
        return self.patch_merge_meta(kind, _namespace_of(obj), _name_of(obj, kind), patch)

    def patch_json(self, kind: Gvk, namespace: Optional[str], name: str, operations: list) -> dict:
        """Applies an RFC 6902 JSON patch (a list of operations) to `namespace/name`."""
        return self._write(kind, namespace, WriteOp("patch", name=name, body=JsonPatch(json.dumps(operations))))

    def patch_status(self, kind: Gvk, namespace: Optional[str], name: str, patch: dict) -> dict:
        """Merge-patches the status subresource: `patch` is `{"status": {...}}`."""
        body = Merge(json.dumps(patch))
        return self._write(kind, namespace, WriteOp("patch", name=name, body=body, status=True))

    def delete(self, kind: Gvk, namespace: Optional[str], name: str, options: Optional[DeleteOptions] = None) -> None:
        """Requests deletion; with finalizers the object stays until they are removed."""
        self.backend.write(kind, namespace, WriteOp("delete", name=name, options=options or DeleteOptions()))

    def delete_if_exists(self, kind: Gvk, namespace: Optional[str], name: str, options: Optional[DeleteOptions] = None) -> bool:
        """`delete`: True when the object existed, False when it was already gone."""
        try:
            self.delete(kind, namespace, name, options)
            return True
        except NotFound:
            return False

    def event(self, obj: dict, event_type: EventType, reason: str, action: str, note: str, kind: Optional[Gvk] = None) -> None:
        """Records an Event about `obj`; the manifest must allow it
        (`Manifest.records_events`), else `Forbidden`."""
        meta = obj.get("metadata") or {}
        self.backend.record_event(
            Event(
                regarding_kind=_kind_of(obj, kind),
                regarding=ObjectKey.of(obj),
                regarding_uid=meta.get("uid") or "",
                event_type=event_type,
                reason=reason,
                action=action,
                note=note,
            )
        )

    # ------------------------------------------------------------- queue

    def enqueue(self, key: ObjectKey) -> None:
        """Queues `key` now; a key that is not a Kubernetes name is `Invalid`."""
        self.backend.enqueue(key)

    def enqueue_after(self, key: ObjectKey, seconds: float) -> None:
        """Queues `key` after `seconds`; an earlier pending time wins."""
        self.backend.enqueue_after(key, _nanos(seconds))

    def enqueue_rate_limited(self, key: ObjectKey) -> None:
        """Queues `key` after the host's rate limiter's delay for it."""
        self.backend.enqueue_rate_limited(key)

    def forget(self, key: ObjectKey) -> None:
        """Ends `key`'s backoff history."""
        self.backend.forget(key)

    def num_requeues(self, key: ObjectKey) -> int:
        """Rate-limited requeues of `key` since it was last forgotten."""
        return self.backend.num_requeues(key)

    # -------------------------------------------------------------- logs

    def log(self, level: Level, message: str, **fields) -> None:
        """A log line; `fields` become fields of the host's log record."""
        self.backend.log(level, message, [(k, str(v)) for k, v in fields.items()])

    def trace(self, message: str, **fields) -> None:
        self.log(Level.TRACE, message, **fields)

    def debug(self, message: str, **fields) -> None:
        self.log(Level.DEBUG, message, **fields)

    def info(self, message: str, **fields) -> None:
        self.log(Level.INFO, message, **fields)

    def warn(self, message: str, **fields) -> None:
        self.log(Level.WARN, message, **fields)

    def error(self, message: str, **fields) -> None:
        self.log(Level.ERROR, message, **fields)
