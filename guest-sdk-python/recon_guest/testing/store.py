"""The fake cluster's object store, ported from the Rust SDK's
`testing/store.rs`: objects as JSON keyed by kind, namespace and name, and
the API server's write semantics over them (server-owned metadata,
resourceVersion preconditions, status subresource, merge / JSON / apply
patches, finalizers, owner garbage collection). It knows nothing of
manifests or permissions."""

from __future__ import annotations

import copy
import json
from typing import Dict, Optional, Tuple

from .. import semantics
from ..types import AlreadyExists, Apply, Conflict, Gvk, Invalid, JsonPatch, Merge, NotFound, Propagation

NOW = "2025-01-01T00:00:00Z"
"""Every timestamp the fake writes (creation, deletion): tests stay deterministic."""

Key = Tuple[Gvk, Optional[str], str]


def sort_key(key: Key):
    kind, namespace, name = key
    return (kind.group, kind.version, kind.kind, namespace is not None, namespace or "", name)


def metadata_mut(obj: dict) -> dict:
    if not isinstance(obj.get("metadata"), dict):
        obj["metadata"] = {}
    return obj["metadata"]


def meta_str(obj: dict, field: str) -> Optional[str]:
    value = semantics.metadata(obj).get(field)
    return value if isinstance(value, str) else None


def finalizers(obj: dict) -> list:
    return [f for f in semantics.metadata(obj).get("finalizers") or [] if isinstance(f, str)]


def owner_uids(obj: dict) -> list:
    return [r.get("uid") for r in semantics.metadata(obj).get("ownerReferences") or [] if isinstance(r.get("uid"), str)]


def remove_at(value, path) -> None:
    """Removes the member at `path` (segments), in every element of the lists met on the way."""
    if isinstance(value, list) and path:
        for item in value:
            remove_at(item, path)
    elif isinstance(value, dict) and len(path) == 1:
        value.pop(path[0], None)
    elif isinstance(value, dict) and path and path[0] in value:
        remove_at(value[path[0]], path[1:])


def conflict(kind: Gvk, name: str) -> Conflict:
    return Conflict(
        f"Operation cannot be fulfilled on {kind.kind} {semantics.debug_str(name)}: the object has been modified; "
        "please apply your changes to the latest version and try again"
    )


def check_type(kind: Gvk, body) -> None:
    if not isinstance(body, dict):
        raise Invalid("the body must be a JSON object")
    for field, expected in (("apiVersion", kind.api_version()), ("kind", kind.kind)):
        actual = body.get(field)
        if not isinstance(actual, str) or actual == "":
            body[field] = expected
        elif actual != expected:
            raise Invalid(
                f"the {field} in the data ({actual}) does not match the expected {field} ({expected})"
            )


def namespace_of(namespace: Optional[str], body: dict) -> Optional[str]:
    in_body = meta_str(body, "namespace") or None
    if namespace is not None and in_body is not None and namespace != in_body:
        raise Invalid(
            "the namespace of the provided object does not match the namespace sent on the request"
        )
    return namespace if namespace is not None else in_body


def parse(text: str):
    try:
        return json.loads(text)
    except ValueError as e:
        raise Invalid(f"invalid JSON: {e}") from None


# ----------------------------------------------------------- patches


def merge_patch(target, patch):
    """RFC 7386: `patch` merged into `target`; returns the result."""
    if not isinstance(patch, dict):
        return copy.deepcopy(patch)
    result = dict(target) if isinstance(target, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        else:
            result[key] = merge_patch(result.get(key), value)
    return result


class PatchError(Exception):
    pass


def _pointer(path: str):
    if path == "":
        return []
    if not path.startswith("/"):
        raise PatchError(f'invalid pointer "{path}"')
    return [p.replace("~1", "/").replace("~0", "~") for p in path[1:].split("/")]


def _index(container: list, token: str, adding: bool) -> int:
    if adding and token == "-":
        return len(container)
    if not token.isdigit() or (len(token) > 1 and token[0] == "0"):
        raise PatchError(f'invalid array index "{token}"')
    index = int(token)
    if index > len(container) or (not adding and index == len(container)):
        raise PatchError(f"index {index} out of bounds")
    return index


def _existing_key(node, token, path):
    """The key or index of the member `token` of `node`, which must exist."""
    if isinstance(node, dict) and token in node:
        return token
    if isinstance(node, list):
        return _index(node, token, False)
    raise PatchError(f'path "{path}" does not exist')


def _parent(doc, tokens, path):
    node = doc
    for token in tokens[:-1]:
        node = node[_existing_key(node, token, path)]
    return node


def _get(doc, path):
    tokens = _pointer(path)
    if not tokens:
        return doc
    parent = _parent(doc, tokens, path)
    return parent[_existing_key(parent, tokens[-1], path)]


def _add(doc, path, value):
    tokens = _pointer(path)
    if not tokens:
        return value
    parent = _parent(doc, tokens, path)
    if isinstance(parent, dict):
        parent[tokens[-1]] = value
    elif isinstance(parent, list):
        parent.insert(_index(parent, tokens[-1], True), value)
    else:
        raise PatchError(f'path "{path}" does not exist')
    return doc


def _remove(doc, path):
    tokens = _pointer(path)
    if not tokens:
        raise PatchError("cannot remove the whole document")
    parent = _parent(doc, tokens, path)
    return parent.pop(_existing_key(parent, tokens[-1], path))


def json_patch(doc, operations):
    """RFC 6902: `operations` applied to a copy of `doc`; `PatchError` when one fails."""
    doc = copy.deepcopy(doc)
    for i, operation in enumerate(operations):
        op, path = operation["op"], operation["path"]
        if op == "add":
            doc = _add(doc, path, copy.deepcopy(operation["value"]))
        elif op == "remove":
            _remove(doc, path)
        elif op == "replace":
            _get(doc, path)
            _remove(doc, path) if _pointer(path) else None
            doc = _add(doc, path, copy.deepcopy(operation["value"]))
        elif op == "move":
            value = _remove(doc, operation["from"])
            doc = _add(doc, path, value)
        elif op == "copy":
            doc = _add(doc, path, copy.deepcopy(_get(doc, operation["from"])))
        elif op == "test":
            try:
                actual = _get(doc, path)
            except PatchError:
                actual = PatchError
            if actual is PatchError or not semantics.same_json(actual, operation["value"]):
                raise PatchError(f'operation {i}: test failed: the value at "{path}" differs')
        else:
            raise PatchError(f'operation {i}: unknown op "{op}"')
    return doc


def parse_json_patch(text: str):
    operations = parse(text)
    valid = isinstance(operations, list) and all(
        isinstance(o, dict)
        and isinstance(o.get("path"), str)
        and o.get("op") in ("add", "remove", "replace", "move", "copy", "test")
        and (o["op"] not in ("add", "replace", "test") or "value" in o)
        and (o["op"] not in ("move", "copy") or isinstance(o.get("from"), str))
        for o in operations
    )
    if not valid:
        raise Invalid(f"invalid JSON patch: {text}")
    return operations


# ------------------------------------------------------------- store


class Store:
    def __init__(self):
        self.objects: Dict[Key, dict] = {}
        self.resource_version = 0
        self.uids = 0

    def get(self, kind: Gvk, namespace: Optional[str], name: str) -> Optional[dict]:
        return self.objects.get((kind, namespace, name))

    def snapshot(self) -> Dict[Key, dict]:
        return {k: self.objects[k] for k in sorted(self.objects, key=sort_key)}

    def of_kind(self, kind: Gvk):
        """The objects of `kind`, ordered by key (`namespace/name`, compared
        as strings), as the host hands a guest's reads over: `a-b/x` before
        `a/x`."""
        keys = sorted(
            (k for k in self.objects if k[0] == kind),
            key=lambda k: semantics.object_key(k[1], k[2]).encode(),
        )
        return [self.objects[k] for k in keys]

    def _commit(self, key: Key, obj: dict) -> dict:
        self.resource_version += 1
        metadata_mut(obj)["resourceVersion"] = str(self.resource_version)
        self.objects[key] = obj
        return copy.deepcopy(obj)

    def _new_uid(self) -> str:
        self.uids += 1
        return f"00000000-0000-0000-0000-{self.uids:012d}"

    def insert(self, kind: Gvk, body: dict) -> dict:
        """Creates or overwrites an object as the cluster's other actors would
        (status included, no preconditions): server metadata kept or assigned."""
        body = copy.deepcopy(body)
        check_type(kind, body)
        namespace = namespace_of(None, body)
        name = meta_str(body, "name")
        if not name:
            raise Invalid("metadata.name is required")
        key = (kind, namespace, name)
        rule = semantics.generation_rule(kind)
        old = self.objects.get(key)
        if old is not None:
            uid = meta_str(old, "uid") or ""
            created = meta_str(old, "creationTimestamp") or NOW
            first = semantics.generation_at_create(rule)
            generation = None
            if first is not None:
                old_generation = semantics.metadata(old).get("generation")
                generation = (old_generation if isinstance(old_generation, int) else first) + int(
                    semantics.generation_bumped(rule, old, body)
                )
        else:
            uid, created, generation = self._new_uid(), NOW, semantics.generation_at_create(rule)
        meta = metadata_mut(body)
        meta["uid"] = uid
        meta["creationTimestamp"] = created
        if generation is not None:
            meta["generation"] = generation
        else:
            meta.pop("generation", None)
        return self._commit(key, body)

    def create(self, kind: Gvk, namespace: Optional[str], text: str) -> dict:
        """POST: a new object; status is dropped as for kinds with a status subresource."""
        return self._create_value(kind, namespace, parse(text))

    def _create_value(self, kind: Gvk, namespace: Optional[str], body) -> dict:
        check_type(kind, body)
        namespace = namespace_of(namespace, body)
        name = meta_str(body, "name")
        if not name:
            prefix = meta_str(body, "generateName")
            if not prefix:
                raise Invalid("metadata.name: Required value: name or generateName is required")
            name = f"{prefix}{self.uids + 1:05d}"
        key = (kind, namespace, name)
        if key in self.objects:
            raise AlreadyExists(f"{kind.kind} {semantics.debug_str(name)} already exists")
        uid = self._new_uid()
        body.pop("status", None)
        meta = metadata_mut(body)
        for field in ("resourceVersion", "deletionTimestamp", "deletionGracePeriodSeconds", "managedFields"):
            meta.pop(field, None)
        meta["name"] = name
        if namespace is not None:
            meta["namespace"] = namespace
        meta["uid"] = uid
        meta["creationTimestamp"] = NOW
        generation = semantics.generation_at_create(semantics.generation_rule(kind))
        if generation is not None:
            meta["generation"] = generation
        else:
            meta.pop("generation", None)
        return self._commit(key, body)

    def update(self, kind: Gvk, namespace: Optional[str], name: str, text: str, status_only: bool) -> dict:
        """PUT of the object, or of its status subresource (`status_only`)."""
        body = parse(text)
        exists = (kind, namespace, name) in self.objects
        versioned = bool(meta_str(body, "resourceVersion"))
        if exists and not versioned and not semantics.unconditional_update_allowed(kind):
            raise Invalid(
                f'{kind.kind} "{name}" is invalid: metadata.resourceVersion: '
                "Invalid value: 0x0: must be specified for an update"
            )
        return self._update_value(kind, namespace, name, body, status_only)

    def _update_value(self, kind, namespace, name, body, status_only) -> dict:
        key = (kind, namespace, name)
        if key not in self.objects:
            raise NotFound()
        existing = copy.deepcopy(self.objects[key])
        check_type(kind, body)
        namespace_of(namespace, body)
        body_name = meta_str(body, "name")
        if body_name and body_name != name:
            raise Invalid(
                f"the name of the object ({body_name}) does not match the name on the URL ({name})"
            )
        current = meta_str(existing, "resourceVersion") or ""
        rv = meta_str(body, "resourceVersion")
        if rv and rv != current:
            raise conflict(kind, name)
        if status_only:
            new = copy.deepcopy(existing)
            if "status" in body:
                new["status"] = body["status"]
            else:
                new.pop("status", None)
        else:
            new = body
            if "status" in existing:
                new["status"] = existing["status"]
            else:
                new.pop("status", None)
        old_meta = semantics.metadata(existing)
        meta = metadata_mut(new)
        meta["name"] = name
        if namespace is not None:
            meta["namespace"] = namespace
        else:
            meta.pop("namespace", None)
        semantics.keep_server_metadata(old_meta, meta)
        deleting = "deletionTimestamp" in old_meta
        old_finalizers = finalizers(existing)
        if deleting:
            added = next((f for f in finalizers(new) if f not in old_finalizers), None)
            if added is not None:
                raise Invalid(
                    "metadata.finalizers: Forbidden: no new finalizers can be added if the object "
                    f"is being deleted, found new finalizers [{added}]"
                )
        rule = semantics.generation_rule(kind)
        if semantics.generation_bumped(rule, existing, new):
            generation = old_meta.get("generation")
            metadata_mut(new)["generation"] = (generation if isinstance(generation, int) else 0) + 1
        if semantics.equal_but_resource_version(new, existing):
            return existing
        if deleting and not finalizers(new):
            removed = self._commit(key, new)
            self._remove(key, Propagation.BACKGROUND)
            return removed
        return self._commit(key, new)

    def patch(self, kind: Gvk, namespace: Optional[str], name: str, body, status_only: bool) -> dict:
        """PATCH of the object, or of its status subresource. Apply is
        approximated as a JSON merge patch of the intent, creating the object
        when absent."""
        key = (kind, namespace, name)
        existing = self.objects.get(key)
        if isinstance(body, Apply):
            intent = parse(body.json)
            if not isinstance(intent, dict):
                raise Invalid("the applied configuration must be a JSON object")
            if existing is None:
                if status_only:
                    raise NotFound()
                metadata_mut(intent)["name"] = name
                return self._create_value(kind, namespace, intent)
            target = merge_patch(copy.deepcopy(existing), intent)
        elif isinstance(body, Merge):
            patch = parse(body.json)
            if not isinstance(patch, dict):
                raise Invalid("a merge patch must be a JSON object")
            if existing is None:
                raise NotFound()
            target = merge_patch(copy.deepcopy(existing), patch)
        elif isinstance(body, JsonPatch):
            operations = parse_json_patch(body.json)
            if existing is None:
                raise NotFound()
            try:
                target = json_patch(existing, operations)
            except (PatchError, KeyError, TypeError) as e:
                raise Invalid(
                    f"the server rejected our request due to an error in our request: {e}"
                ) from None
        else:
            raise Invalid(f"unknown patch body {body!r}")
        current = meta_str(self.objects[key], "resourceVersion") if key in self.objects else None
        if isinstance(target, dict) and meta_str(target, "resourceVersion") == current:
            metadata_mut(target).pop("resourceVersion", None)
        return self._update_value(kind, namespace, name, target, status_only)

    def delete(self, kind: Gvk, namespace: Optional[str], name: str, options) -> None:
        """DELETE: with finalizers the object only gets a deletionTimestamp."""
        key = (kind, namespace, name)
        existing = self.objects.get(key)
        if existing is None:
            raise NotFound()
        why = semantics.delete_precondition_failure(
            existing, options.precondition_uid, options.precondition_resource_version
        )
        if why is not None:
            raise Conflict(why)
        self._delete_object(key, options.propagation or Propagation.BACKGROUND)

    def _delete_object(self, key: Key, propagation: Propagation) -> None:
        obj = self.objects.get(key)
        if obj is None:
            return
        if not finalizers(obj):
            self._remove(key, propagation)
            return
        if meta_str(obj, "deletionTimestamp") is None:
            obj = copy.deepcopy(obj)
            meta = metadata_mut(obj)
            meta["deletionTimestamp"] = NOW
            meta["deletionGracePeriodSeconds"] = 0
            self._commit(key, obj)

    def _remove(self, key: Key, propagation: Propagation) -> None:
        """Removes an object, then collects its dependents: orphaned (their
        owner references to it dropped), or deleted once none of their owners
        exist any more."""
        obj = self.objects.pop(key, None)
        if obj is None:
            return
        uid = meta_str(obj, "uid")
        if not uid:
            return
        dependents = [k for k in sorted(self.objects, key=sort_key) if uid in owner_uids(self.objects[k])]
        for dependent in dependents:
            if dependent not in self.objects:
                continue
            if propagation == Propagation.ORPHAN:
                obj = copy.deepcopy(self.objects[dependent])
                meta = metadata_mut(obj)
                refs = [r for r in meta.get("ownerReferences") or [] if r.get("uid") != uid]
                if refs:
                    meta["ownerReferences"] = refs
                else:
                    meta.pop("ownerReferences", None)
                self._commit(dependent, obj)
            else:
                uids = {meta_str(o, "uid") for o in self.objects.values()}
                if not any(owner in uids for owner in owner_uids(self.objects[dependent])):
                    self._delete_object(dependent, Propagation.BACKGROUND)
