"""The vocabulary every other module speaks: kinds (`Gvk`), object keys,
the metadata of cached objects (`Meta`), the reconcile `Request` and
`Action`, the errors every call can raise, and the write options (delete
options, events, levels). They have the shape of their WIT counterparts in
`recon:controller`; objects themselves are plain dicts of their JSON."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Optional


@dataclass(frozen=True, order=True)
class Gvk:
    """A group/version/kind; the core group is the empty string."""

    group: str
    version: str
    kind: str

    @staticmethod
    def from_api_version(api_version: str, kind: str) -> "Gvk":
        group, _, version = api_version.rpartition("/")
        return Gvk(group, version, kind)

    @staticmethod
    def of(obj: dict) -> "Gvk":
        """The kind an object's `apiVersion` and `kind` name."""
        api_version, kind = obj.get("apiVersion"), obj.get("kind")
        if not api_version or not kind:
            raise Invalid("the object names no apiVersion and kind: pass its kind")
        return Gvk.from_api_version(api_version, kind)

    def api_version(self) -> str:
        return f"{self.group}/{self.version}" if self.group else self.version

    def __str__(self) -> str:
        return f"{self.api_version()}, Kind={self.kind}"


CONFIG_MAP = Gvk("", "v1", "ConfigMap")
SECRET = Gvk("", "v1", "Secret")
NAMESPACE = Gvk("", "v1", "Namespace")
POD = Gvk("", "v1", "Pod")
SERVICE = Gvk("", "v1", "Service")
DEPLOYMENT = Gvk("apps", "v1", "Deployment")
EVENT_KIND = Gvk("events.k8s.io", "v1", "Event")


@dataclass(frozen=True)
class ObjectKey:
    """An object's identity: its namespace (None for cluster-scoped kinds) and name."""

    namespace: Optional[str]
    name: str

    @staticmethod
    def namespaced(namespace: str, name: str) -> "ObjectKey":
        return ObjectKey(namespace, name)

    @staticmethod
    def cluster(name: str) -> "ObjectKey":
        return ObjectKey(None, name)

    @staticmethod
    def of(obj: dict) -> "ObjectKey":
        meta = obj.get("metadata") or {}
        return ObjectKey(meta.get("namespace"), meta.get("name") or "")

    def sort_key(self):
        """Keys order by namespace (cluster-scoped first), then name."""
        return (self.namespace is not None, self.namespace or "", self.name)

    def __lt__(self, other: "ObjectKey") -> bool:
        return self.sort_key() < other.sort_key()

    def __str__(self) -> str:
        return f"{self.namespace}/{self.name}" if self.namespace is not None else self.name


@dataclass(frozen=True)
class OwnerRef:
    api_version: str
    kind: str
    name: str
    uid: str
    controller: bool = False
    block_owner_deletion: bool = False


@dataclass
class Meta:
    """The metadata the host parsed when it cached an object."""

    key: ObjectKey
    uid: str = ""
    resource_version: str = ""
    generation: int = 0
    labels: dict = field(default_factory=dict)
    annotations: dict = field(default_factory=dict)
    owner_references: list = field(default_factory=list)
    finalizers: list = field(default_factory=list)
    deletion_timestamp: Optional[str] = None

    def label(self, key: str) -> Optional[str]:
        return self.labels.get(key)

    def annotation(self, key: str) -> Optional[str]:
        return self.annotations.get(key)

    def controller_owner(self) -> Optional[OwnerRef]:
        return next((o for o in self.owner_references if o.controller), None)

    @staticmethod
    def of(obj: dict) -> "Meta":
        """The metadata of an object's JSON, as the host parses it for the cache."""
        m = obj.get("metadata") or {}
        strings = lambda d: {k: v for k, v in (d or {}).items() if isinstance(v, str)}  # noqa: E731
        owners = [
            OwnerRef(
                r.get("apiVersion") or "",
                r.get("kind") or "",
                r.get("name") or "",
                r.get("uid") or "",
                r.get("controller") is True,
                r.get("blockOwnerDeletion") is True,
            )
            for r in m.get("ownerReferences") or []
        ]
        generation = m.get("generation")
        return Meta(
            key=ObjectKey(m.get("namespace"), m.get("name") or ""),
            uid=m.get("uid") or "",
            resource_version=m.get("resourceVersion") or "",
            generation=generation if isinstance(generation, int) and not isinstance(generation, bool) else 0,
            labels=strings(m.get("labels")),
            annotations=strings(m.get("annotations")),
            owner_references=owners,
            finalizers=[f for f in m.get("finalizers") or [] if isinstance(f, str)],
            deletion_timestamp=m.get("deletionTimestamp"),
        )


@dataclass(frozen=True)
class Request:
    """One reconcile call: the key and its rate-limited requeues so far."""

    key: ObjectKey
    attempt: int = 0


@dataclass(frozen=True)
class Action:
    """What happens to the key next: `Action.DONE`, `Action.REQUEUE` or
    `Action.requeue_after(seconds)`."""

    kind: str
    after_seconds: Optional[float] = None

    @staticmethod
    def requeue_after(seconds: float) -> "Action":
        return Action("requeue-after", seconds)

    def __repr__(self) -> str:
        if self.kind == "requeue-after":
            return f"Action.requeue_after({self.after_seconds})"
        return f"Action.{self.kind.upper()}"


Action.DONE = Action("done")
Action.REQUEUE = Action("requeue")


class Error(Exception):
    """Why a call failed; the WIT `error` variant. Subclasses name the case."""

    case = "other"
    prefix = ""

    def __init__(self, message: str = ""):
        super().__init__(message)
        self.message = message

    def __eq__(self, other: object) -> bool:
        return type(self) is type(other) and self.message == other.message  # type: ignore[attr-defined]

    def __hash__(self) -> int:
        return hash((type(self), self.message))

    def __str__(self) -> str:
        return f"{self.prefix}{self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.message!r})"


class NotFound(Error):
    case = "not-found"

    def __str__(self) -> str:
        return "not found"


class Conflict(Error):
    case, prefix = "conflict", "conflict: "


class AlreadyExists(Error):
    case, prefix = "already-exists", "already exists: "


class Forbidden(Error):
    case, prefix = "forbidden", "forbidden: "


class Invalid(Error):
    case, prefix = "invalid", "invalid: "


class Unavailable(Error):
    case, prefix = "unavailable", "unavailable: "


class TooLarge(Error):
    case, prefix = "too-large", "too large: "


class Other(Error):
    case = "other"


class Verb(enum.Enum):
    CREATE = "Create"
    REPLACE = "Replace"
    PATCH = "Patch"
    DELETE = "Delete"
    UPDATE_STATUS = "UpdateStatus"

    def __repr__(self) -> str:
        return f"Verb.{self.name}"


class Level(enum.Enum):
    TRACE = "trace"
    DEBUG = "debug"
    INFO = "info"
    WARN = "warn"
    ERROR = "error"


class EventType(enum.Enum):
    NORMAL = "Normal"
    WARNING = "Warning"


class Propagation(enum.Enum):
    ORPHAN = "Orphan"
    BACKGROUND = "Background"
    FOREGROUND = "Foreground"


@dataclass(frozen=True)
class DeleteOptions:
    """Options of a delete; the default is the server's policy and no preconditions."""

    propagation: Optional[Propagation] = None
    precondition_uid: Optional[str] = None
    precondition_resource_version: Optional[str] = None


@dataclass(frozen=True)
class Event:
    """An `events.k8s.io/v1` Event about an object."""

    regarding_kind: Gvk
    regarding: ObjectKey
    regarding_uid: str
    event_type: EventType
    reason: str
    action: str
    note: str


@dataclass(frozen=True)
class Merge:
    """An RFC 7386 JSON merge patch body (JSON text)."""

    json: str


@dataclass(frozen=True)
class JsonPatch:
    """An RFC 6902 JSON patch body (JSON text of the operations)."""

    json: str


@dataclass(frozen=True)
class Apply:
    """A server-side apply intent (JSON text)."""

    json: str
    force: bool = True
