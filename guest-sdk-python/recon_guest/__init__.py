"""recon's guest SDK for Python: reconcilers as WebAssembly components of
the `recon:controller@0.4.0` world, built with componentize-py.

A guest is a class with `manifest()` (a `Manifest`) and
`reconcile(ctx, request)` (an `Action`, or an `Error` raised) over a
`Context` whose objects are dicts of their JSON. `recon_guest.wasm.export`
turns it into the component's export; `recon_guest.testing.FakeCluster`
runs it natively under pytest."""

from .context import Context, RawObject, WriteOp
from .finalizer import finalizer, has_finalizer
from .manifest import IndexSource, IndexSpec, KeyMapping, Manifest, Permission, PrunedField, Watch
from .types import (
    CONFIG_MAP,
    DEPLOYMENT,
    EVENT_KIND,
    NAMESPACE,
    POD,
    SECRET,
    SERVICE,
    Action,
    AlreadyExists,
    Apply,
    Conflict,
    DeleteOptions,
    Error,
    Event,
    EventType,
    Forbidden,
    Gvk,
    Invalid,
    JsonPatch,
    Level,
    Merge,
    Meta,
    NotFound,
    ObjectKey,
    Other,
    OwnerRef,
    Propagation,
    Request,
    TooLarge,
    Unavailable,
    Verb,
)

__all__ = [
    "Action", "AlreadyExists", "Apply", "CONFIG_MAP", "Conflict", "Context", "DEPLOYMENT",
    "DeleteOptions", "EVENT_KIND", "Error", "Event", "EventType", "Forbidden", "Gvk",
    "IndexSource", "IndexSpec", "Invalid", "JsonPatch", "KeyMapping", "Level", "Manifest",
    "Merge", "Meta", "NAMESPACE", "NotFound", "ObjectKey", "Other", "OwnerRef", "POD",
    "Permission", "Propagation", "PrunedField", "RawObject", "Request", "SECRET", "SERVICE",
    "TooLarge", "Unavailable", "Verb", "Watch", "WriteOp", "finalizer", "has_finalizer",
]  # fmt: skip
