"""Finalizers as the Rust SDK's `finalizer` module handles them:
`finalizer` makes sure the object carries the finalizer before `apply`
runs, runs `cleanup` once deletion has been requested, and removes the
finalizer only after cleanup succeeded. Every change is a JSON patch
guarded by a `test` operation, so a concurrent change to the object fails
the patch (the reconcile errs and is retried with fresh data) instead of
clobbering someone else's finalizers."""

from __future__ import annotations

from typing import Callable, Optional

from .context import Context
from .types import Action, Gvk


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def has_finalizer(obj: dict, name: str) -> bool:
    return name in (_meta(obj).get("finalizers") or [])


def finalizer(
    ctx: Context,
    kind: Gvk,
    name: str,
    obj: dict,
    apply: Callable[[dict], Action],
    cleanup: Callable[[dict], Action],
) -> Action:
    """Runs `apply(obj)` with the finalizer `name` on `obj` (added first if
    missing), or, once `obj` is being deleted, `cleanup(obj)` and then
    removes the finalizer. An object being deleted without it is done."""
    deleted = _meta(obj).get("deletionTimestamp") is not None
    present = has_finalizer(obj, name)
    if not deleted:
        return apply(obj if present else add(ctx, kind, obj, name))
    if not present:
        return Action.DONE
    action = cleanup(obj)
    remove(ctx, kind, obj, name)
    return action


def add(ctx: Context, kind: Gvk, obj: dict, name: str) -> dict:
    """Adds the finalizer `name`; returns the object as stored."""
    meta = _meta(obj)
    finalizers = meta.get("finalizers") or []
    if finalizers:
        operations = [
            {"op": "test", "path": "/metadata/finalizers", "value": finalizers},
            {"op": "add", "path": "/metadata/finalizers/-", "value": name},
        ]
    else:
        operations = [
            {"op": "test", "path": "/metadata/resourceVersion", "value": meta.get("resourceVersion")},
            {"op": "add", "path": "/metadata/finalizers", "value": [name]},
        ]
    return ctx.patch_json(kind, meta.get("namespace"), meta.get("name") or "", operations)


def remove(ctx: Context, kind: Gvk, obj: dict, name: str) -> Optional[dict]:
    """Removes the finalizer `name` if `obj` has it; the object as stored
    (None when it had no such finalizer, and nothing was written)."""
    meta = _meta(obj)
    finalizers = meta.get("finalizers") or []
    if name not in finalizers:
        return None
    path = f"/metadata/finalizers/{finalizers.index(name)}"
    operations = [{"op": "test", "path": path, "value": name}, {"op": "remove", "path": path}]
    return ctx.patch_json(kind, meta.get("namespace"), meta.get("name") or "", operations)
