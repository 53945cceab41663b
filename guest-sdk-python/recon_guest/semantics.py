"""Kubernetes API rules the fake cluster applies, ported from the
`recon-api-semantics` crate the host and the dev server share: names and
keys, the key-mapping rules of the host's event handlers, which kinds have
a `metadata.generation` and what bumps it, the metadata an update keeps,
delete preconditions, and the strings at field paths (field indexes)."""

from __future__ import annotations

import re
from typing import List, Optional

from .types import Gvk

# ------------------------------------------------------------------ names

_DNS_LABEL = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def is_dns_label(s: str) -> bool:
    return 0 < len(s.encode()) <= 63 and bool(_DNS_LABEL.fullmatch(s))


def name_problem(name: str) -> Optional[str]:
    if name == "":
        return "is empty"
    if len(name.encode()) > 253:
        return "is longer than 253 bytes"
    if name in (".", ".."):
        return "may not be '.' or '..'"
    if "/" in name or "%" in name:
        return "may not contain '/' or '%'"
    if any(ord(c) < 32 or 127 <= ord(c) < 160 for c in name):
        return "may not contain control characters"
    return None


def _shorten(text: str) -> str:
    if len(text) > 64:
        return f"{text[:64]}… ({len(text.encode())} bytes)"
    return text


def debug_str(text: str) -> str:
    """`text` in double quotes, escaped as Rust's `{:?}` prints a string."""
    escapes = {'"': '\\"', "\\": "\\\\", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\0": "\\0"}
    out = []
    for c in text:
        if c in escapes:
            out.append(escapes[c])
        elif ord(c) < 32 or 127 <= ord(c) < 160:
            out.append(f"\\u{{{ord(c):x}}}")
        else:
            out.append(c)
    return '"' + "".join(out) + '"'


_quoted = debug_str


def key_problem(namespace: Optional[str], name: str) -> Optional[str]:
    """Why `namespace/name` is not a key the host queues, or None."""
    if namespace and not is_dns_label(namespace):
        return (
            f"namespace {_quoted(_shorten(namespace))} is not a DNS label "
            "(1-63 of a-z, 0-9 and '-', starting and ending alphanumeric)"
        )
    problem = name_problem(name)
    return f"name {_quoted(_shorten(name))} {problem}" if problem else None


# ---------------------------------------------------------------- mapping


def object_key(namespace: Optional[str], name: str) -> str:
    return f"{namespace}/{name}" if namespace else name


def split_key(key: str):
    parts = key.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    if len(parts) == 2:
        return (parts[0], parts[1])
    return None


def metadata(obj: dict) -> dict:
    """An object's `metadata`, or `{}` when it has none that is a map."""
    meta = obj.get("metadata")
    return meta if isinstance(meta, dict) else {}


def _namespace(obj: dict) -> str:
    return metadata(obj).get("namespace") or ""


def _member(obj: dict, map_name: str, key: str) -> Optional[str]:
    value = (metadata(obj).get(map_name) or {}).get(key)
    return value if isinstance(value, str) else None


def controller_owner_key(primary: Gvk, obj: dict) -> Optional[str]:
    owner = next(
        (o for o in metadata(obj).get("ownerReferences") or [] if o.get("controller") is True), None
    )
    if owner is None:
        return None
    kind = Gvk.from_api_version(owner.get("apiVersion") or "", owner.get("kind") or "")
    if kind.group == primary.group and kind.kind == primary.kind:
        return object_key(_namespace(obj), owner.get("name") or "")
    return None


def label_key(label: str, obj: dict) -> Optional[str]:
    name = _member(obj, "labels", label)
    return object_key(_namespace(obj), name) if name else None


def annotation_key(annotation: str, obj: dict) -> Optional[str]:
    value = _member(obj, "annotations", annotation)
    if not value:
        return None
    return value if "/" in value else object_key(_namespace(obj), value)


def namespace_key(obj: dict) -> Optional[str]:
    return _namespace(obj) or None


def index_key_admitted(obj: dict, key: str) -> bool:
    namespace = _namespace(obj)
    return not namespace or "/" not in key or key.startswith(namespace + "/")


# ------------------------------------------------------------ generation

BUILT_IN_GROUPS = {
    "", "admissionregistration.k8s.io", "apiextensions.k8s.io", "apiregistration.k8s.io",
    "apps", "authentication.k8s.io", "authorization.k8s.io", "autoscaling", "batch",
    "certificates.k8s.io", "coordination.k8s.io", "discovery.k8s.io", "events.k8s.io",
    "flowcontrol.apiserver.k8s.io", "internal.apiserver.k8s.io", "networking.k8s.io",
    "node.k8s.io", "policy", "rbac.authorization.k8s.io", "resource.k8s.io",
    "scheduling.k8s.io", "storage.k8s.io", "storagemigration.k8s.io",
}  # fmt: skip

_SPEC = {
    ("apps", "ReplicaSet"), ("apps", "StatefulSet"), ("apps", "DaemonSet"),
    ("batch", "Job"), ("batch", "CronJob"), ("", "ReplicationController"),
    ("policy", "PodDisruptionBudget"), ("networking.k8s.io", "Ingress"),
    ("networking.k8s.io", "IngressClass"), ("networking.k8s.io", "NetworkPolicy"),
    ("apiextensions.k8s.io", "CustomResourceDefinition"),
    ("admissionregistration.k8s.io", "ValidatingWebhookConfiguration"),
    ("admissionregistration.k8s.io", "MutatingWebhookConfiguration"),
}  # fmt: skip


def generation_rule(kind: Gvk) -> str:
    """`none`, `spec`, `spec-or-annotations` (Deployment),
    `all-but-metadata-or-labels` (EndpointSlice), `create-only`
    (PriorityClass) or `all-but-metadata-and-status`."""
    if (kind.group, kind.kind) == ("apps", "Deployment"):
        return "spec-or-annotations"
    if (kind.group, kind.kind) in _SPEC:
        return "spec"
    if (kind.group, kind.kind) == ("discovery.k8s.io", "EndpointSlice"):
        return "all-but-metadata-or-labels"
    if (kind.group, kind.kind) == ("scheduling.k8s.io", "PriorityClass"):
        return "create-only"
    if kind.group in BUILT_IN_GROUPS:
        return "none"
    return "all-but-metadata-and-status"


def unconditional_update_allowed(kind: Gvk) -> bool:
    """Whether an update may leave out `metadata.resourceVersion`: not for
    Leases, PodDisruptionBudgets, CRDs and custom resources (the strategy's
    `AllowUnconditionalUpdate`)."""
    return kind.group in BUILT_IN_GROUPS and (kind.group, kind.kind) not in {
        ("coordination.k8s.io", "Lease"),
        ("policy", "PodDisruptionBudget"),
        ("apiextensions.k8s.io", "CustomResourceDefinition"),
    }


def generation_at_create(rule: str) -> Optional[int]:
    return None if rule == "none" else 1


def _same(a, b) -> bool:
    """JSON equality (True is not 1, as serde_json's)."""
    if type(a) is not type(b) and not (isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool) and not isinstance(b, bool)):  # noqa: E501
        return False
    if isinstance(a, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    return a == b


same_json = _same


def _equal_except(a, b, skip) -> bool:
    if isinstance(a, dict) and isinstance(b, dict):
        kept_a = {k: v for k, v in a.items() if not skip(k)}
        kept_b = {k: v for k, v in b.items() if not skip(k)}
        return _same(kept_a, kept_b)
    return _same(a, b)


_MISSING = object()


def generation_bumped(rule: str, old: dict, new: dict) -> bool:
    if rule in ("none", "create-only"):
        return False
    spec_changed = not _same(old.get("spec", _MISSING), new.get("spec", _MISSING))
    if rule == "spec":
        return spec_changed
    if rule == "spec-or-annotations":
        def annotations(obj):
            a = metadata(obj).get("annotations")
            return a if isinstance(a, dict) and a else None

        return spec_changed or not _same(annotations(old), annotations(new))
    if rule == "all-but-metadata-or-labels":
        def labels(obj):
            a = metadata(obj).get("labels")
            return a if isinstance(a, dict) and a else None

        return not _equal_except(
            old, new, lambda k: k in ("metadata", "apiVersion", "kind")
        ) or not _same(labels(old), labels(new))
    return not _equal_except(old, new, lambda k: k in ("metadata", "status", "apiVersion", "kind"))


def equal_but_resource_version(a: dict, b: dict) -> bool:
    if not _equal_except(a, b, lambda k: k == "metadata"):
        return False
    ma, mb = a.get("metadata", _MISSING), b.get("metadata", _MISSING)
    if ma is not _MISSING and mb is not _MISSING:
        return _equal_except(ma, mb, lambda k: k == "resourceVersion")
    return ma is mb


KEPT_ON_UPDATE = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation")


def keep_server_metadata(stored: dict, meta: dict) -> None:
    for field in KEPT_ON_UPDATE:
        if field in stored:
            meta[field] = stored[field]
        else:
            meta.pop(field, None)


def delete_precondition_failure(obj: dict, uid: Optional[str], resource_version: Optional[str]):
    for label, field, expected in (("UID", "uid", uid), ("ResourceVersion", "resourceVersion", resource_version)):
        if expected is None:
            continue
        actual = metadata(obj).get(field)
        actual = actual if isinstance(actual, str) else ""
        if expected != actual:
            return (
                f"Precondition failed: {label} in precondition: {expected}, "
                f"{label} in object meta: {actual}"
            )
    return None


# ----------------------------------------------------------------- fields


def strings_at(obj, path: str) -> List[str]:
    """The strings at the dot-separated `path`, descending into every list
    met on the way, as the host's field indexes find them."""
    found: List[str] = []

    def walk(value, segments):
        if isinstance(value, list):
            for item in value:
                walk(item, segments)
        elif not segments:
            if isinstance(value, str):
                found.append(value)
        elif isinstance(value, dict) and segments[0] in value:
            walk(value[segments[0]], segments[1:])

    walk(obj, path.split("."))
    return found
