"""The `Manifest`: everything the host needs to wire a reconciler up (the
WIT `controller-manifest`), with a builder: which kinds are cached (the
primary kind, owned kinds, watches), how changes map to primary keys,
declared indexes, which writes are allowed (recording events among them),
pruned fields, the resync period and the worker count. `validate` refuses
what the host would refuse at load, as the Rust SDK's `Manifest::validate`.
The conversion to the WIT record lives in `recon_guest.wasm`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional, Sequence

from .selector import Selector
from .semantics import debug_str
from .types import EVENT_KIND, NAMESPACE, Gvk, Invalid, Verb


@dataclass(frozen=True)
class KeyMapping:
    """How a change to a watched object becomes keys of the primary kind:
    `KeyMapping.CONTROLLER_OWNER`, `label(name)`, `annotation(name)`,
    `by_index(index)` or `KeyMapping.NAMESPACE` (see wit/controller.wit)."""

    case: str
    value: Optional[str] = None

    @staticmethod
    def label(name: str) -> "KeyMapping":
        return KeyMapping("label", name)

    @staticmethod
    def annotation(name: str) -> "KeyMapping":
        return KeyMapping("annotation", name)

    @staticmethod
    def by_index(index: str) -> "KeyMapping":
        return KeyMapping("by-index", index)


KeyMapping.CONTROLLER_OWNER = KeyMapping("controller-owner")
KeyMapping.NAMESPACE = KeyMapping("namespace")


@dataclass(frozen=True)
class IndexSource:
    """Where a declared index takes its values from: `label(key)`,
    `annotation(key)`, `field(path)`, `fields([paths])` or `IndexSource.OWNER_UID`."""

    case: str
    value: object = None

    @staticmethod
    def label(key: str) -> "IndexSource":
        return IndexSource("label", key)

    @staticmethod
    def annotation(key: str) -> "IndexSource":
        return IndexSource("annotation", key)

    @staticmethod
    def field(path: str) -> "IndexSource":
        return IndexSource("field", path)

    @staticmethod
    def fields(paths: Sequence[str]) -> "IndexSource":
        return IndexSource("fields", tuple(paths))


IndexSource.OWNER_UID = IndexSource("owner-uid")


@dataclass(frozen=True)
class Watch:
    kind: Gvk
    mapping: KeyMapping
    label_selector: Optional[str] = None


@dataclass(frozen=True)
class IndexSpec:
    name: str
    kind: Gvk
    source: IndexSource


@dataclass
class Permission:
    kind: Gvk
    verbs: List[Verb]


@dataclass(frozen=True)
class PrunedField:
    kind: Gvk
    path: str


@dataclass
class Manifest:
    """A reconciler's manifest: `Manifest(name, primary_kind)` and the builder methods."""

    name: str
    primary: Gvk
    primary_label_selector: Optional[str] = None
    owns: List[Gvk] = field(default_factory=list)
    watches: List[Watch] = field(default_factory=list)
    indexes: List[IndexSpec] = field(default_factory=list)
    resync_period: Optional[float] = None
    concurrency: Optional[int] = None
    writes: List[Permission] = field(default_factory=list)
    prune_fields: List[PrunedField] = field(default_factory=list)
    managed_fields_kept: List[Gvk] = field(default_factory=list)
    metadata_only_kinds: List[Gvk] = field(default_factory=list)

    def primary_selector(self, selector: str) -> "Manifest":
        """Cache (and reconcile) only primary objects matching `selector`."""
        self.primary_label_selector = selector
        return self

    def owns_kind(self, kind: Gvk) -> "Manifest":
        """Objects of `kind` owned by a primary object enqueue their controller owner."""
        self.owns.append(kind)
        return self

    def watch(self, kind: Gvk, mapping: KeyMapping, selector: Optional[str] = None) -> "Manifest":
        """Watch the objects of `kind` (matching `selector`, if given);
        `mapping` turns a change into primary keys."""
        self.watches.append(Watch(kind, mapping, selector))
        return self

    def index(self, kind: Gvk, name: str, source: IndexSource) -> "Manifest":
        """Declare the index `name` over cached objects of `kind`."""
        self.indexes.append(IndexSpec(name, kind, source))
        return self

    def resync_every(self, seconds: float) -> "Manifest":
        """Replay every cached primary object every `seconds`."""
        self.resync_period = seconds
        return self

    def with_concurrency(self, n: int) -> "Manifest":
        """Run up to `n` reconciles in parallel."""
        self.concurrency = n
        return self

    def allow(self, kind: Gvk, verbs: Sequence[Verb]) -> "Manifest":
        """Allow `verbs` on `kind` (added to any verbs already allowed)."""
        permission = next((p for p in self.writes if p.kind == kind), None)
        if permission is None:
            permission = Permission(kind, [])
            self.writes.append(permission)
        for verb in verbs:
            if verb not in permission.verbs:
                permission.verbs.append(verb)
        return self

    def records_events(self) -> "Manifest":
        """Allow recording events: `create` of `events.k8s.io/v1` Events."""
        return self.allow(EVENT_KIND, [Verb.CREATE])

    def prune(self, kind: Gvk, path: str) -> "Manifest":
        """Drop the dot-separated `path` from objects of `kind` before caching."""
        self.prune_fields.append(PrunedField(kind, path))
        return self

    def keep_managed_fields(self, kind: Gvk) -> "Manifest":
        """Keep `metadata.managedFields` in the cached objects of `kind`, which
        the host drops by default. A cache shared with other guests keeps them
        when any of them asks; they take memory."""
        if kind not in self.managed_fields_kept:
            self.managed_fields_kept.append(kind)
        return self

    def metadata_only(self, kind: Gvk) -> "Manifest":
        """Read `kind` as metadata only, as client-go's metadata informers do:
        the host lists and watches it as `PartialObjectMetadata`, so its cached
        objects hold `metadata` alone and never the rest (a Secret's data, say),
        whatever other guests read of the kind. Index and prune paths of `kind`
        must lie under `metadata`."""
        if kind not in self.metadata_only_kinds:
            self.metadata_only_kinds.append(kind)
        return self

    def allows(self, kind: Gvk, verb: Verb) -> bool:
        return any(p.kind == kind and verb in p.verbs for p in self.writes)

    def allows_events(self) -> bool:
        return self.allows(EVENT_KIND, Verb.CREATE)

    def validate(self) -> None:
        """Raises `Invalid` for what the host would refuse at load time."""
        if not self.name:
            raise Invalid("the manifest's name is empty")
        selectors = [self.primary_label_selector] + [w.label_selector for w in self.watches]
        for selector in selectors:
            if selector is not None:
                Selector.parse(selector)
        for i, index in enumerate(self.indexes):
            if not index.name:
                raise Invalid(f"an index over {index.kind} has no name")
            if any(o.name == index.name and o.kind == index.kind for o in self.indexes[:i]):
                raise Invalid(f"index {debug_str(index.name)} is declared twice for {index.kind}")
        for watch in self.watches:
            if watch.mapping.case == "by-index" and not any(
                i.name == watch.mapping.value and i.kind == self.primary for i in self.indexes
            ):
                raise Invalid(
                    f"the watch of {watch.kind} maps by index {debug_str(watch.mapping.value)}, "
                    f"which is not declared for {self.primary}"
                )
            if watch.mapping.case == "namespace" and self.primary != NAMESPACE:
                raise Invalid(
                    f"the watch of {watch.kind} maps to the object's namespace, which needs "
                    f"the primary kind v1 Namespace (not {self.primary})"
                )
        for index in self.indexes:
            if index.source.case == "fields" and not index.source.value:
                raise Invalid(f"index {debug_str(index.name)} of {index.kind} reads no paths")
        read = {self.primary, *self.owns, *(w.kind for w in self.watches)}
        for pruned in self.prune_fields:
            path = pruned.path
            if path == "metadata" or (path.startswith("metadata.") and path != "metadata.managedFields"):
                raise Invalid(
                    f"prune field {debug_str(path)} of {pruned.kind}: only metadata.managedFields "
                    "may be pruned from metadata"
                )
            if pruned.kind not in read:
                raise Invalid(f"prune field {debug_str(path)} is on {pruned.kind}, which the manifest does not watch")
        for kind in self.managed_fields_kept:
            if kind not in read:
                raise Invalid(f"keeps managedFields of {kind}, which the manifest does not watch")
        for kind in self.metadata_only_kinds:
            if kind not in read:
                raise Invalid(f"reads {kind} as metadata only, but the manifest does not watch it")

        def outside(path: str) -> bool:
            return path != "metadata" and not path.startswith("metadata.")

        for index in self.indexes:
            if index.kind not in self.metadata_only_kinds:
                continue
            paths = {"field": [index.source.value], "fields": index.source.value}.get(index.source.case, [])
            for path in paths:
                if outside(path):
                    raise Invalid(
                        f"index {debug_str(index.name)} reads {debug_str(path)} of {index.kind}, "
                        "which the manifest reads as metadata only"
                    )
        for pruned in self.prune_fields:
            if pruned.kind in self.metadata_only_kinds and outside(pruned.path):
                raise Invalid(
                    f"prune field {debug_str(pruned.path)} of {pruned.kind}, "
                    "which the manifest reads as metadata only"
                )
