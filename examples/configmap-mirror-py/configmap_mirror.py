"""The smallest useful reconciler, in Python: the same guest as
`examples/configmap-mirror` (Rust), behaving the same. A ConfigMap
annotated `recon.dev/mirror-to: ns-a,ns-b` is copied into those namespaces
and kept in sync.

- A copy has the source's name, `data` and `binaryData`, the label
  `recon.dev/mirror-of: <namespace>.<name>` (found through a label index)
  and the annotation `recon.dev/mirror-source: <namespace>/<name>` (the
  watch on copies maps a change to, or the deletion of, a copy back to its
  source, which then repairs it).
- Copies in namespaces the annotation no longer names are deleted; when the
  annotation is removed every copy is, and the finalizer goes.
- The finalizer `recon.dev/mirror` makes deleting the source delete every
  copy first (owner references cannot cross namespaces).
- A ConfigMap of the same name that is not a copy of this source is never
  overwritten: a Warning event says so and the others are still mirrored.
  The source's own namespace is never a target."""

from __future__ import annotations

import re

from recon_guest import (
    CONFIG_MAP,
    Action,
    Context,
    DeleteOptions,
    Error,
    EventType,
    IndexSource,
    KeyMapping,
    Manifest,
    NotFound,
    Request,
    Verb,
    finalizer,
    has_finalizer,
)
from recon_guest.finalizer import remove as remove_finalizer
from recon_guest.semantics import debug_str as quoted

MIRROR_TO = "recon.dev/mirror-to"
"""The annotation on a source naming the target namespaces, comma-separated."""
MIRROR_OF = "recon.dev/mirror-of"
"""The label on a copy: `<namespace>.<name>` of its source."""
MIRROR_SOURCE = "recon.dev/mirror-source"
"""The annotation on a copy: `<namespace>/<name>` of its source."""
FINALIZER = "recon.dev/mirror"
"""The finalizer on a source that has copies."""
COPIES_INDEX = "mirror-of"
"""The index of copies by their `recon.dev/mirror-of` label."""

_NAMESPACE = re.compile(r"^[a-z0-9-]+$")


def valid_namespace(name: str) -> bool:
    """A namespace name: a DNS-1123 label."""
    return (
        0 < len(name) <= 63
        and bool(_NAMESPACE.fullmatch(name))
        and not name.startswith("-")
        and not name.endswith("-")
    )


def _meta(obj: dict) -> dict:
    return obj.get("metadata") or {}


def _annotation(obj: dict, key: str):
    return (_meta(obj).get("annotations") or {}).get(key)


def _label(obj: dict, key: str):
    return (_meta(obj).get("labels") or {}).get(key)


class Source:
    """The source's identity: its namespace and name, and how copies name it."""

    def __init__(self, source: dict):
        self.namespace = _meta(source).get("namespace") or ""
        self.name = _meta(source).get("name") or ""
        self.mirror_of = f"{self.namespace}.{self.name}"
        self.reference = f"{self.namespace}/{self.name}"


def _non_empty(obj: dict, field: str):
    """A map, None when empty: the API server does not keep empty maps."""
    return obj.get(field) or None


def make_copy(copy: dict, source: dict, id: Source) -> None:
    """`copy` made a current copy of `source` (other labels and annotations kept)."""
    for field in ("data", "binaryData"):
        if source.get(field) is not None:
            copy[field] = dict(source[field])
        else:
            copy.pop(field, None)
    meta = copy.setdefault("metadata", {})
    meta["labels"] = {**(meta.get("labels") or {}), MIRROR_OF: id.mirror_of}
    meta["annotations"] = {**(meta.get("annotations") or {}), MIRROR_SOURCE: id.reference}


def is_current(copy: dict, source: dict, id: Source) -> bool:
    """Whether `copy` is a current copy of `source`."""
    return (
        _non_empty(copy, "data") == _non_empty(source, "data")
        and _non_empty(copy, "binaryData") == _non_empty(source, "binaryData")
        and _label(copy, MIRROR_OF) == id.mirror_of
        and _annotation(copy, MIRROR_SOURCE) == id.reference
    )


class ConfigMapMirror:
    def manifest(self) -> Manifest:
        return (
            Manifest("configmap-mirror", CONFIG_MAP)
            .watch(CONFIG_MAP, KeyMapping.annotation(MIRROR_SOURCE), selector=MIRROR_OF)
            .index(CONFIG_MAP, COPIES_INDEX, IndexSource.label(MIRROR_OF))
            .resync_every(600)
            .allow(CONFIG_MAP, [Verb.CREATE, Verb.REPLACE, Verb.PATCH, Verb.DELETE])
            .records_events()
        )

    def reconcile(self, ctx: Context, request: Request) -> Action:
        key = request.key
        source = ctx.get(CONFIG_MAP, key.namespace, key.name)
        if source is None:
            return Action.DONE
        annotated = _annotation(source, MIRROR_TO) is not None
        finalized = has_finalizer(source, FINALIZER)
        if not annotated and not finalized:
            # Not a source: an unrelated ConfigMap, or a copy.
            return Action.DONE
        if not annotated and _meta(source).get("deletionTimestamp") is None:
            # Mirroring stopped: the copies go, then the finalizer.
            delete_copies(ctx, source, set())
            remove_finalizer(ctx, CONFIG_MAP, source, FINALIZER)
            return Action.DONE

        def cleanup(source: dict) -> Action:
            delete_copies(ctx, source, set())
            return Action.DONE

        return finalizer(ctx, CONFIG_MAP, FINALIZER, source, lambda s: mirror(ctx, s), cleanup)


def mirror(ctx: Context, source: dict) -> Action:
    """Creates or updates the copies the annotation asks for, deletes the
    others. Every target is attempted; the first error is raised."""
    id = Source(source)
    if len(id.mirror_of) > 63:
        ctx.event(
            source,
            EventType.WARNING,
            "MirrorNameTooLong",
            "Mirror",
            f"cannot mirror: the label value {quoted(id.mirror_of)} would be longer than 63 characters",
            kind=CONFIG_MAP,
        )
        return Action.DONE
    targets = set()
    requested = _annotation(source, MIRROR_TO) or ""
    for target in (t.strip() for t in requested.split(",")):
        if not target:
            continue
        if not valid_namespace(target):
            ctx.event(
                source,
                EventType.WARNING,
                "InvalidMirrorTarget",
                "Mirror",
                f"{quoted(target)} is not a namespace name",
                kind=CONFIG_MAP,
            )
        elif target != id.namespace:
            targets.add(target)

    first_error = None
    for target in sorted(targets):
        try:
            mirror_into(ctx, source, id, target)
        except Error as e:
            ctx.warn("mirroring failed", namespace=target, error=e)
            first_error = first_error or e
    delete_copies(ctx, source, targets)
    if first_error is not None:
        raise first_error
    return Action.DONE


def mirror_into(ctx: Context, source: dict, id: Source, target: str) -> None:
    existing = ctx.get(CONFIG_MAP, target, id.name)
    if existing is None:
        copy = {"metadata": {"namespace": target, "name": id.name}}
        make_copy(copy, source, id)
        ctx.create(copy, kind=CONFIG_MAP)
        ctx.info("created copy", namespace=target)
    elif _label(existing, MIRROR_OF) != id.mirror_of:
        ctx.event(
            source,
            EventType.WARNING,
            "MirrorConflict",
            "Mirror",
            f'ConfigMap "{target}/{id.name}" exists and is not a mirror of {id.reference}',
            kind=CONFIG_MAP,
        )
    elif not is_current(existing, source, id):
        make_copy(existing, source, id)
        ctx.replace(existing, kind=CONFIG_MAP)
        ctx.info("updated copy", namespace=target)


def delete_copies(ctx: Context, source: dict, keep: set) -> None:
    """Deletes the copies of `source` outside `keep` (each only if it is
    still the object found: uid precondition)."""
    id = Source(source)
    for copy in ctx.by_index(CONFIG_MAP, COPIES_INDEX, id.mirror_of):
        namespace = _meta(copy).get("namespace") or ""
        if namespace in keep:
            continue
        options = DeleteOptions(precondition_uid=_meta(copy).get("uid"))
        try:
            ctx.delete(CONFIG_MAP, namespace, _meta(copy).get("name") or "", options)
        except NotFound:
            pass
        ctx.info("deleted copy", namespace=namespace)
