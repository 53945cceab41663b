/**
 * `Context`: the API a reconciler uses during one reconcile, over a
 * backend (the component's WIT imports in `wasm.js`, or the fake cluster
 * in `testing/`). Cache reads, writes through the host's client, the
 * workqueue, logs and events, with objects as plain JS objects that cross
 * the boundary as JSON. Every call that can fail throws a `ReconError`.
 *
 * The backend is untyped (kinds, keys, JSON strings), one method per WIT
 * import and one `write(kind, namespace, op)` for the client's writes, `op`
 * being `{type: 'create', json}`, `{type: 'replace', name, json, status}`,
 * `{type: 'patch', name, body, status}` (body `{tag: 'merge' | 'json', val}`
 * or `{tag: 'apply', val: {json, force}}`) or `{type: 'delete', name,
 * options}`. It answers reads with `{meta, json}` records.
 */

import { ReconError, ObjectKey, apiVersion, kindToString } from './types.js';

/** The type of an Event. */
export const EventType = Object.freeze({ Normal: 'normal', Warning: 'warning' });

/** Log levels. */
export const Level = Object.freeze({
  Trace: 'trace',
  Debug: 'debug',
  Info: 'info',
  Warn: 'warn',
  Error: 'error',
});

/** Deletion of dependents (`propagationPolicy`). */
export const Propagation = Object.freeze({
  Orphan: 'orphan',
  Background: 'background',
  Foreground: 'foreground',
});

/** `obj` as JSON with `apiVersion` and `kind` filled in from `kind`. */
function toJson(kind, obj) {
  if (obj === null || typeof obj !== 'object' || Array.isArray(obj)) {
    throw ReconError.invalid(`a ${kind.kind} does not serialize as a JSON object`);
  }
  const filled = { ...obj };
  if (!Object.hasOwn(filled, 'apiVersion')) filled.apiVersion = apiVersion(kind);
  if (!Object.hasOwn(filled, 'kind')) filled.kind = kind.kind;
  return JSON.stringify(filled);
}

/** The name in `obj`'s metadata, which writes to an existing object need. */
function nameOf(kind, obj) {
  const name = obj?.metadata?.name;
  if (typeof name !== 'string') throw ReconError.invalid(`the ${kind.kind} has no metadata.name`);
  return name;
}

const namespaceOf = (obj) => obj?.metadata?.namespace ?? null;

function parse(raw) {
  try {
    return JSON.parse(raw.json);
  } catch (e) {
    throw ReconError.invalid(`JSON: ${e.message}`);
  }
}

/** The merge patch setting those of `wanted` that `current` lacks or holds otherwise, under `metadata.<field>`; null when none. */
export function missingEntries(field, current, wanted) {
  const missing = {};
  for (const [key, value] of Object.entries(wanted)) {
    if (current?.[key] !== value) missing[key] = value;
  }
  return Object.keys(missing).length === 0 ? null : { metadata: { [field]: missing } };
}

/** The guest's view of the host during one reconcile. */
export class Context {
  constructor(backend) {
    this.backend = backend;
  }

  // ---------------------------------------------------------------- cache

  /** The cached object of `kind` `namespace/name`; null when it is not in the cache. */
  get(kind, namespace, name) {
    const raw = this.backend.get(kind, namespace ?? null, name);
    return raw ? parse(raw) : null;
  }

  /** As `get`, metadata only: no JSON crosses the boundary and nothing is parsed. */
  getMeta(kind, namespace, name) {
    return this.backend.getMeta(kind, namespace ?? null, name);
  }

  /** Cached objects of `kind`, in one namespace or all (null), optionally filtered by a label selector. */
  list(kind, namespace = null, labelSelector = null) {
    return this.backend.list(kind, namespace, labelSelector).map(parse);
  }

  /** As `list`, metadata only. */
  listMeta(kind, namespace = null, labelSelector = null) {
    return this.backend.listMeta(kind, namespace, labelSelector);
  }

  /** Cached objects of `kind` whose index `index` (declared in the manifest) holds `value`. */
  byIndex(kind, index, value) {
    return this.backend.byIndex(kind, index, value).map(parse);
  }

  // --------------------------------------------------------------- client

  /** A write that answers with the object as stored. */
  writeObject(kind, namespace, op) {
    const stored = this.backend.write(kind, namespace, op);
    if (!stored) {
      throw ReconError.other(`the host answered a ${op.type} of ${kindToString(kind)} with no object`);
    }
    return parse(stored);
  }

  /** Creates `obj` in the namespace its metadata names; returns it as stored. */
  create(kind, obj) {
    return this.writeObject(kind, namespaceOf(obj), { type: 'create', json: toJson(kind, obj) });
  }

  /**
   * Replaces `obj` (PUT); a stale `metadata.resourceVersion` is a `conflict`,
   * none is unconditional except for custom resources and Leases, where the
   * server refuses it (`invalid`).
   */
  replace(kind, obj) {
    return this.replaceObject(kind, obj, false);
  }

  /** Server-side apply of the intent `obj`, forcing ownership of conflicting fields unless `force` is false. */
  apply(kind, obj, force = true) {
    const body = { tag: 'apply', val: { json: toJson(kind, obj), force } };
    return this.writeObject(kind, namespaceOf(obj), { type: 'patch', name: nameOf(kind, obj), body, status: false });
  }

  /** Applies an RFC 7386 JSON merge patch to `namespace/name`. */
  patchMerge(kind, namespace, name, patch) {
    const body = { tag: 'merge', val: JSON.stringify(patch) };
    return this.writeObject(kind, namespace, { type: 'patch', name, body, status: false });
  }

  /** `patchMerge`, answering with the stored object's metadata only. */
  patchMergeMeta(kind, namespace, name, patch) {
    const body = { tag: 'merge', val: JSON.stringify(patch) };
    const stored = this.backend.write(kind, namespace, { type: 'patch', name, body, status: false });
    if (!stored) throw ReconError.other(`the host answered a patch of ${kindToString(kind)} with no object`);
    return stored.meta;
  }

  /** Applies an RFC 6902 JSON patch (an array of operations) to `namespace/name`. */
  patchJson(kind, namespace, name, operations) {
    const body = { tag: 'json', val: JSON.stringify(operations) };
    return this.writeObject(kind, namespace, { type: 'patch', name, body, status: false });
  }

  /** Replaces the status subresource with `obj`'s status; nothing else changes. */
  updateStatus(kind, obj) {
    return this.replaceObject(kind, obj, true);
  }

  /** Merge-patches the status subresource of `namespace/name`: `patch` is `{status: {...}}`. */
  patchStatus(kind, namespace, name, patch) {
    const body = { tag: 'merge', val: JSON.stringify(patch) };
    return this.writeObject(kind, namespace, { type: 'patch', name, body, status: true });
  }

  replaceObject(kind, obj, status) {
    const op = { type: 'replace', name: nameOf(kind, obj), json: toJson(kind, obj), status };
    return this.writeObject(kind, namespaceOf(obj), op);
  }

  /**
   * Requests deletion of `namespace/name`; `options` may name
   * `propagation`, `preconditionUid` and `preconditionResourceVersion`.
   */
  delete(kind, namespace, name, options = {}) {
    const normalized = {
      propagation: options.propagation ?? null,
      preconditionUid: options.preconditionUid ?? null,
      preconditionResourceVersion: options.preconditionResourceVersion ?? null,
    };
    this.backend.write(kind, namespace, { type: 'delete', name, options: normalized });
  }

  /** Deletes the object if it still exists: true when it did, false when it was already gone. */
  deleteIfExists(kind, namespace, name, options = {}) {
    try {
      this.delete(kind, namespace, name, options);
      return true;
    } catch (e) {
      if (e instanceof ReconError && e.tag === 'not-found') return false;
      throw e;
    }
  }

  /** `patchMerge`, with null when the object is gone. */
  patchMergeIfExists(kind, namespace, name, patch) {
    try {
      return this.patchMerge(kind, namespace, name, patch);
    } catch (e) {
      if (e instanceof ReconError && e.tag === 'not-found') return null;
      throw e;
    }
  }

  /**
   * Sets the labels of `wanted` (an object) that `obj` lacks or holds
   * with another value, in one merge patch, answering with the stored
   * metadata; null (and no write) when all are there already.
   */
  ensureLabels(kind, obj, wanted) {
    return this.patchMissing(kind, obj, missingEntries('labels', obj?.metadata?.labels, wanted));
  }

  /** `ensureLabels` for annotations. */
  ensureAnnotations(kind, obj, wanted) {
    return this.patchMissing(kind, obj, missingEntries('annotations', obj?.metadata?.annotations, wanted));
  }

  patchMissing(kind, obj, patch) {
    if (!patch) return null;
    return this.patchMergeMeta(kind, namespaceOf(obj), nameOf(kind, obj), patch);
  }

  /**
   * Records an Event about `obj` of `kind`; the manifest must allow it
   * (`recordsEvents()`), else `forbidden`.
   */
  event(kind, obj, eventType, reason, action, note) {
    this.backend.recordEvent({
      regardingKind: { ...kind },
      regarding: ObjectKey.of(obj),
      regardingUid: obj?.metadata?.uid ?? '',
      eventType,
      reason,
      action,
      note,
    });
  }

  // ---------------------------------------------------------------- queue

  /** Queues `key` now; an invalid key is `invalid`, a full queue `unavailable`. */
  enqueue(key) {
    this.backend.enqueue(key);
  }

  /** Queues `key` after `ms` milliseconds; an earlier pending time wins. */
  enqueueAfter(key, ms) {
    this.backend.enqueueAfter(key, ms);
  }

  /** Queues `key` after the host's rate-limiter delay for it. */
  enqueueRateLimited(key) {
    this.backend.enqueueRateLimited(key);
  }

  /** Ends `key`'s backoff history. */
  forget(key) {
    this.backend.forget(key);
  }

  /** Rate-limited requeues of `key` since it was last forgotten. */
  numRequeues(key) {
    return this.backend.numRequeues(key);
  }

  // ------------------------------------------------------------------ log

  /**
   * Logs `message` with `fields` (an object; values are turned into
   * strings as `String(value)` does, keys as `ObjectKey.toString`).
   */
  log(level, message, fields = {}) {
    const pairs = Object.entries(fields).map(([k, v]) => [k, display(v)]);
    this.backend.log(level, message, pairs);
  }

  trace(message, fields) {
    this.log(Level.Trace, message, fields);
  }

  debug(message, fields) {
    this.log(Level.Debug, message, fields);
  }

  info(message, fields) {
    this.log(Level.Info, message, fields);
  }

  warn(message, fields) {
    this.log(Level.Warn, message, fields);
  }

  error(message, fields) {
    this.log(Level.Error, message, fields);
  }
}

/** A field value as text: keys as `namespace/name`, other objects as JSON. */
function display(value) {
  if (value instanceof Error) return String(value);
  if (value && typeof value === 'object') {
    if (typeof value.name === 'string' && Object.keys(value).every((k) => k === 'name' || k === 'namespace')) {
      return ObjectKey.toString(value);
    }
    return JSON.stringify(value);
  }
  return String(value);
}
