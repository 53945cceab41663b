/**
 * The fake cluster's object store (a port of the Rust SDK's
 * `testing/store.rs`): objects as JSON keyed by kind, namespace and name,
 * and the API server's write semantics over them (server-owned metadata,
 * resourceVersion preconditions, status subresource, merge / JSON / apply
 * patches, finalizers, owner garbage collection). It knows nothing of
 * manifests or permissions.
 */

import { merge, applyJsonPatch } from '../jsonpatch.js';
import {
  deletePreconditionFailure,
  equalButResourceVersion,
  generationAtCreate,
  generationBumped,
  generationRule,
  keepServerMetadata,
  objectKeyString,
  unconditionalUpdateAllowed,
} from '../semantics.js';
import { ReconError, apiVersion, debugString } from '../types.js';

/** Every timestamp the fake writes (creation, deletion): tests stay deterministic. */
export const NOW = '2025-01-01T00:00:00Z';

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);
const clone = (v) => structuredClone(v);

/** The store key of an object. */
export function storeKey(kind, namespace, name) {
  return JSON.stringify([kind.group, kind.version, kind.kind, namespace ?? null, name]);
}

function compareStrings(a, b) {
  return a < b ? -1 : a > b ? 1 : 0;
}

/** Orders store entries as the Rust store's keys order: kind, then namespace (none first), then name. */
export function compareEntries(a, b) {
  return (
    compareStrings(a.kind.group, b.kind.group) ||
    compareStrings(a.kind.version, b.kind.version) ||
    compareStrings(a.kind.kind, b.kind.kind) ||
    (a.namespace === null ? (b.namespace === null ? 0 : -1) : b.namespace === null ? 1 : compareStrings(a.namespace, b.namespace)) ||
    compareStrings(a.name, b.name)
  );
}

function metadata(obj) {
  return isMap(obj?.metadata) ? obj.metadata : undefined;
}

/** `obj.metadata`, created empty if absent. */
function metadataMut(obj) {
  if (!isMap(obj.metadata)) obj.metadata = {};
  return obj.metadata;
}

/** The string `metadata[field]`, or undefined. */
export function metaStr(obj, field) {
  const v = metadata(obj)?.[field];
  return typeof v === 'string' ? v : undefined;
}

function finalizers(obj) {
  const f = metadata(obj)?.finalizers;
  return Array.isArray(f) ? f.filter((x) => typeof x === 'string') : [];
}

function hasFinalizers(obj) {
  const f = metadata(obj)?.finalizers;
  return Array.isArray(f) && f.length > 0;
}

function ownerUids(obj) {
  const refs = metadata(obj)?.ownerReferences;
  return Array.isArray(refs) ? refs.map((r) => r?.uid).filter((u) => typeof u === 'string') : [];
}

function stringMap(map) {
  if (!isMap(map)) return {};
  return Object.fromEntries(Object.entries(map).filter(([, v]) => typeof v === 'string'));
}

/** The metadata of a stored object, as the host parses it for the cache (the WIT `object-meta`, in JS form). */
export function metaOf(obj) {
  const m = metadata(obj) ?? {};
  const text = (field) => (typeof m[field] === 'string' ? m[field] : null);
  const refs = Array.isArray(m.ownerReferences) ? m.ownerReferences : [];
  return {
    key: { namespace: text('namespace'), name: text('name') ?? '' },
    uid: text('uid') ?? '',
    resourceVersion: text('resourceVersion') ?? '',
    generation: Number.isInteger(m.generation) ? m.generation : 0,
    labels: stringMap(m.labels),
    annotations: stringMap(m.annotations),
    ownerReferences: refs.map((r) => {
      const t = (f) => (typeof r?.[f] === 'string' ? r[f] : '');
      const flag = (f) => (typeof r?.[f] === 'boolean' ? r[f] : false);
      return {
        apiVersion: t('apiVersion'),
        kind: t('kind'),
        name: t('name'),
        uid: t('uid'),
        controller: flag('controller'),
        blockOwnerDeletion: flag('blockOwnerDeletion'),
      };
    }),
    finalizers: finalizers(obj),
    deletionTimestamp: text('deletionTimestamp'),
  };
}

/** Removes the member at the dot-separated `path` (as segments), in every element of the lists met on the way. */
export function removeAt(value, path) {
  if (path.length === 0) return;
  if (Array.isArray(value)) {
    for (const item of value) removeAt(item, path);
  } else if (isMap(value)) {
    if (path.length === 1) delete value[path[0]];
    else if (Object.hasOwn(value, path[0])) removeAt(value[path[0]], path.slice(1));
  }
}

function conflict(kind, name) {
  return ReconError.conflict(
    `Operation cannot be fulfilled on ${kind.kind} ${debugString(name)}: the object has been modified; please apply your changes to the latest version and try again`,
  );
}

/** Checks `body` is an object whose `apiVersion` and `kind` (filled in when absent) are `kind`'s. */
function checkType(kind, body) {
  if (!isMap(body)) throw ReconError.invalid('the body must be a JSON object');
  for (const [field, expected] of [
    ['apiVersion', apiVersion(kind)],
    ['kind', kind.kind],
  ]) {
    const actual = typeof body[field] === 'string' ? body[field] : undefined;
    if (actual === undefined || actual === '') body[field] = expected;
    else if (actual !== expected) {
      throw ReconError.invalid(
        `the ${field} in the data (${actual}) does not match the expected ${field} (${expected})`,
      );
    }
  }
}

/** The namespace a write goes to: the request's, which the body may repeat but not contradict, else the body's. */
function namespaceOf(namespace, body) {
  const inBody = metaStr(body, 'namespace') || null;
  if (namespace && inBody && namespace !== inBody) {
    throw ReconError.invalid(
      'the namespace of the provided object does not match the namespace sent on the request',
    );
  }
  return namespace ?? inBody;
}

function parse(json) {
  try {
    return JSON.parse(json);
  } catch (e) {
    throw ReconError.invalid(`invalid JSON: ${e.message}`);
  }
}

export class Store {
  constructor() {
    /** key -> {kind, namespace, name, value} */
    this.objects = new Map();
    /** The last resourceVersion handed out; one counter for every kind, as etcd's. */
    this.resourceVersion = 0;
    /** The last uid suffix handed out. */
    this.uids = 0;
  }

  get(kind, namespace, name) {
    return this.objects.get(storeKey(kind, namespace, name))?.value;
  }

  /** Every entry, ordered by kind, namespace and name. */
  entries() {
    return [...this.objects.values()].sort(compareEntries);
  }

  /** A copy of every entry, for comparing before and after a change. */
  snapshot() {
    return new Map([...this.objects].map(([k, e]) => [k, { ...e, value: clone(e.value) }]));
  }

  /**
   * The objects of `kind`, ordered by key (`namespace/name`, compared as
   * strings), as the host hands a guest's reads over: `a-b/x` before `a/x`.
   * (Keys are DNS names, ASCII, so JavaScript's UTF-16 order is the
   * host's byte order.)
   */
  ofKind(kind) {
    const key = (e) => objectKeyString(e.namespace, e.name);
    return [...this.objects.values()]
      .filter((e) => e.kind.group === kind.group && e.kind.version === kind.version && e.kind.kind === kind.kind)
      .sort((a, b) => compareStrings(key(a), key(b)))
      .map((e) => e.value);
  }

  /** Stores `obj` with a new resourceVersion; returns a copy as stored. */
  commit(kind, namespace, name, obj) {
    this.resourceVersion += 1;
    metadataMut(obj).resourceVersion = String(this.resourceVersion);
    this.objects.set(storeKey(kind, namespace, name), { kind: { ...kind }, namespace, name, value: obj });
    return clone(obj);
  }

  newUid() {
    this.uids += 1;
    return `00000000-0000-0000-0000-${String(this.uids).padStart(12, '0')}`;
  }

  /** Creates or overwrites an object as the cluster's other actors would (status included, no preconditions). */
  insert(kind, value) {
    const body = clone(value);
    checkType(kind, body);
    const namespace = namespaceOf(null, body);
    const name = metaStr(body, 'name');
    if (!name) throw ReconError.invalid('metadata.name is required');
    const rule = generationRule(kind.group, kind.kind);
    const old = this.get(kind, namespace, name);
    let uid;
    let created;
    let generation;
    if (old) {
      uid = metaStr(old, 'uid') ?? '';
      created = metaStr(old, 'creationTimestamp') ?? NOW;
      const first = generationAtCreate(rule);
      generation =
        first === null
          ? null
          : (Number.isInteger(metadata(old)?.generation) ? metadata(old).generation : first) +
            (generationBumped(rule, old, body) ? 1 : 0);
    } else {
      uid = this.newUid();
      created = NOW;
      generation = generationAtCreate(rule);
    }
    const meta = metadataMut(body);
    meta.uid = uid;
    meta.creationTimestamp = created;
    if (generation === null) delete meta.generation;
    else meta.generation = generation;
    return this.commit(kind, namespace, name, body);
  }

  /** POST: a new object; status is dropped as for kinds with a status subresource. */
  create(kind, namespace, json) {
    return this.createValue(kind, namespace, parse(json));
  }

  createValue(kind, requestNamespace, body) {
    checkType(kind, body);
    const namespace = namespaceOf(requestNamespace, body);
    let name = metaStr(body, 'name');
    if (!name) {
      const prefix = metaStr(body, 'generateName');
      if (!prefix) {
        throw ReconError.invalid('metadata.name: Required value: name or generateName is required');
      }
      name = `${prefix}${String(this.uids + 1).padStart(5, '0')}`;
    }
    if (this.get(kind, namespace, name)) {
      throw ReconError.alreadyExists(`${kind.kind} ${debugString(name)} already exists`);
    }
    const uid = this.newUid();
    delete body.status;
    const meta = metadataMut(body);
    for (const field of ['resourceVersion', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'managedFields']) {
      delete meta[field];
    }
    meta.name = name;
    if (namespace) meta.namespace = namespace;
    meta.uid = uid;
    meta.creationTimestamp = NOW;
    const generation = generationAtCreate(generationRule(kind.group, kind.kind));
    if (generation === null) delete meta.generation;
    else meta.generation = generation;
    return this.commit(kind, namespace, name, body);
  }

  /** PUT of the object, or of its status subresource (`statusOnly`). */
  update(kind, namespace, name, json, statusOnly) {
    const body = parse(json);
    const exists = Boolean(this.get(kind, namespace, name));
    if (exists && !metaStr(body, 'resourceVersion') && !unconditionalUpdateAllowed(kind)) {
      throw ReconError.invalid(
        `${kind.kind} "${name}" is invalid: metadata.resourceVersion: ` +
          'Invalid value: 0x0: must be specified for an update',
      );
    }
    return this.updateValue(kind, namespace, name, body, statusOnly);
  }

  updateValue(kind, namespace, name, body, statusOnly) {
    const stored = this.get(kind, namespace, name);
    if (!stored) throw ReconError.notFound();
    const existing = clone(stored);
    checkType(kind, body);
    namespaceOf(namespace, body);
    const bodyName = metaStr(body, 'name');
    if (bodyName && bodyName !== name) {
      throw ReconError.invalid(
        `the name of the object (${bodyName}) does not match the name on the URL (${name})`,
      );
    }
    const current = metaStr(existing, 'resourceVersion') ?? '';
    const rv = metaStr(body, 'resourceVersion');
    if (rv && rv !== current) throw conflict(kind, name);
    let next;
    if (statusOnly) {
      next = clone(existing);
      if (Object.hasOwn(body, 'status')) next.status = body.status;
      else delete next.status;
    } else {
      if (Object.hasOwn(existing, 'status')) body.status = clone(existing.status);
      else delete body.status;
      next = body;
    }
    const oldMeta = clone(metadata(existing) ?? {});
    const meta = metadataMut(next);
    meta.name = name;
    if (namespace) meta.namespace = namespace;
    else delete meta.namespace;
    keepServerMetadata(oldMeta, meta);
    const deleting = Object.hasOwn(oldMeta, 'deletionTimestamp');
    const oldFinalizers = finalizers(existing);
    if (deleting) {
      const added = finalizers(next).find((f) => !oldFinalizers.includes(f));
      if (added !== undefined) {
        throw ReconError.invalid(
          `metadata.finalizers: Forbidden: no new finalizers can be added if the object is being deleted, found new finalizers [${added}]`,
        );
      }
    }
    const rule = generationRule(kind.group, kind.kind);
    if (generationBumped(rule, existing, next)) {
      const generation = Number.isInteger(oldMeta.generation) ? oldMeta.generation : 0;
      metadataMut(next).generation = generation + 1;
    }
    if (equalButResourceVersion(next, existing)) return existing;
    if (deleting && !hasFinalizers(next)) {
      const removed = this.commit(kind, namespace, name, next);
      this.remove(storeKey(kind, namespace, name), 'background');
      return removed;
    }
    return this.commit(kind, namespace, name, next);
  }

  /**
   * PATCH of the object, or of its status subresource (`statusOnly`).
   * Apply is approximated as a JSON merge patch of the intent, creating the
   * object when absent. `body` is `{tag: 'merge' | 'json', val}` or
   * `{tag: 'apply', val: {json, force}}`.
   */
  patch(kind, namespace, name, body, statusOnly) {
    const stored = this.get(kind, namespace, name);
    let target;
    if (body.tag === 'apply') {
      const intent = parse(body.val.json);
      if (!isMap(intent)) throw ReconError.invalid('the applied configuration must be a JSON object');
      if (!stored) {
        if (statusOnly) throw ReconError.notFound();
        metadataMut(intent).name = name;
        return this.createValue(kind, namespace, intent);
      }
      target = merge(clone(stored), intent);
    } else if (body.tag === 'merge') {
      const patch = parse(body.val);
      if (!isMap(patch)) throw ReconError.invalid('a merge patch must be a JSON object');
      if (!stored) throw ReconError.notFound();
      target = merge(clone(stored), patch);
    } else if (body.tag === 'json') {
      let operations;
      try {
        operations = JSON.parse(body.val);
      } catch (e) {
        throw ReconError.invalid(`invalid JSON patch: ${e.message}`);
      }
      if (!Array.isArray(operations)) throw ReconError.invalid('invalid JSON patch: expected an array of operations');
      if (!stored) throw ReconError.notFound();
      try {
        target = applyJsonPatch(stored, operations);
      } catch (e) {
        throw ReconError.invalid(`the server rejected our request due to an error in our request: ${e.message}`);
      }
    } else {
      throw ReconError.invalid(`unknown patch type ${JSON.stringify(body.tag)}`);
    }
    if (!isMap(target)) throw ReconError.invalid('the body must be a JSON object');
    // A patch naming the current resourceVersion (or none) is
    // unconditional; one naming another version conflicts.
    const current = stored ? metaStr(stored, 'resourceVersion') : undefined;
    if (metaStr(target, 'resourceVersion') === current) delete metadataMut(target).resourceVersion;
    return this.updateValue(kind, namespace, name, target, statusOnly);
  }

  /** DELETE: with finalizers the object only gets a deletionTimestamp. */
  delete(kind, namespace, name, options = {}) {
    const key = storeKey(kind, namespace, name);
    const existing = this.objects.get(key)?.value;
    if (!existing) throw ReconError.notFound();
    const why = deletePreconditionFailure(existing, options.preconditionUid, options.preconditionResourceVersion);
    if (why) throw ReconError.conflict(why);
    this.deleteObject(key, options.propagation ?? 'background');
  }

  deleteObject(key, propagation) {
    const entry = this.objects.get(key);
    if (!entry) return;
    if (!hasFinalizers(entry.value)) {
      this.remove(key, propagation);
      return;
    }
    if (metaStr(entry.value, 'deletionTimestamp') === undefined) {
      const obj = clone(entry.value);
      const meta = metadataMut(obj);
      meta.deletionTimestamp = NOW;
      meta.deletionGracePeriodSeconds = 0;
      this.commit(entry.kind, entry.namespace, entry.name, obj);
    }
  }

  /**
   * Removes an object, then collects its dependents: orphaned (their owner
   * references to it dropped), or deleted once none of their owners exist.
   */
  remove(key, propagation) {
    const entry = this.objects.get(key);
    if (!entry) return;
    this.objects.delete(key);
    const uid = metaStr(entry.value, 'uid');
    if (!uid) return;
    const dependents = this.entries().filter((e) => ownerUids(e.value).includes(uid));
    for (const dependent of dependents) {
      const dependentKey = storeKey(dependent.kind, dependent.namespace, dependent.name);
      const current = this.objects.get(dependentKey);
      if (!current) continue;
      if (propagation === 'orphan') {
        const obj = clone(current.value);
        const meta = metadataMut(obj);
        if (Array.isArray(meta.ownerReferences)) {
          meta.ownerReferences = meta.ownerReferences.filter((r) => r?.uid !== uid);
          if (meta.ownerReferences.length === 0) delete meta.ownerReferences;
        }
        this.commit(current.kind, current.namespace, current.name, obj);
      } else {
        const ownersLeft = ownerUids(current.value).some((owner) =>
          [...this.objects.values()].some((o) => metaStr(o.value, 'uid') === owner),
        );
        if (!ownersLeft) this.deleteObject(dependentKey, 'background');
      }
    }
  }
}
