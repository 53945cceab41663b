/**
 * A fake cluster for native tests of reconcilers (`node --test`), a port
 * of the Rust SDK's `testing::FakeCluster`: it implements the backend a
 * `Context` talks to over an in-memory object store and enforces the
 * reconciler's manifest the way the host does, so a reconciler runs
 * unchanged against it:
 *
 *     const cluster = new FakeCluster(MyReconciler);
 *     cluster.insert(Kinds.ConfigMap, {metadata: {namespace: 'ns', name: 'a'}});
 *     assert.deepStrictEqual(cluster.reconcile(ObjectKey.namespaced('ns', 'a')), Action.done());
 *
 * What it does as the host and API server do:
 * - objects are JSON keyed by (kind, namespace, name); create assigns
 *   `uid`, `resourceVersion` (one incrementing counter) and
 *   `creationTimestamp`, and `generation` 1 to the kinds that have one;
 *   what bumps it is the kind's rule on a real server (spec for most
 *   built-in kinds that have one, spec or annotations for a Deployment,
 *   anything but metadata and status for custom resources; ConfigMaps,
 *   Secrets, Pods and the like have none); a write that changes nothing
 *   keeps the resourceVersion;
 * - cache reads see only the kinds the manifest caches (the primary kind
 *   and its selector, owned kinds, watches and their selectors); reading
 *   another kind is `forbidden`. Reads drop `metadata.managedFields` and
 *   the manifest's prune fields; lists are ordered by key
 *   (`namespace/name`), as the host orders them;
 * - indexes declared in the manifest, computed from the cached form;
 * - writes need the manifest's permission for the kind and verb
 *   (`forbidden` otherwise); so do events, which need `recordsEvents()`;
 * - replace and update-status with a stale `metadata.resourceVersion`
 *   conflict, without one they are unconditional; a patch naming another
 *   resourceVersion conflicts;
 * - every kind is treated as having a status subresource: create drops
 *   `status`, replace and patches keep the stored status, status writes
 *   change only `status`;
 * - merge and JSON patches; a failed JSON patch `test` is `invalid`, as
 *   the API server's 422;
 * - delete honours preconditions and finalizers (sets `deletionTimestamp`;
 *   the object goes when its last finalizer is removed; no finalizer can be
 *   added meanwhile), and collects dependents through owner references
 *   (background, or orphan);
 * - every change (`insert`, `delete`, the reconciler's writes and the
 *   garbage collection they set off) queues the primary keys the host's
 *   event handlers would queue for it, through the same rules: the
 *   object's own key for the primary kind, its controller owner for an
 *   owned kind, the watch's key mapping for a watched kind, before and
 *   after the change (`pendingKeys`);
 * - queue calls refuse a key that is not a Kubernetes namespace and name
 *   (`invalid`, as the host does);
 * - events, queue calls, successful writes and logs are recorded for assertions.
 *
 * What it approximates: server-side apply is a JSON merge patch of the
 * intent into the stored object (creating it when absent); `force` is
 * ignored. Timestamps are the constant `NOW`.
 *
 * Where the Rust fake takes a type (`cluster.get::<ConfigMap>(..)`), this
 * one takes the kind first (`cluster.get(Kinds.ConfigMap, ..)`); errors are
 * thrown `ReconError`s.
 */

import { Context } from '../context.js';
import { verbName } from '../manifest.js';
import {
  annotationKey,
  controllerOwnerKey,
  indexKeyAdmitted,
  keyProblem,
  labelKey,
  namespaceKey,
  objectKeyString,
  splitKey,
  stringsAt,
  watched,
  jsonEqual,
} from '../semantics.js';
import { Selector } from '../selector.js';
import { ReconError, debugString, kindToString, sameKind } from '../types.js';
import { NOW, Store, compareEntries, metaOf, metaStr, removeAt } from './store.js';

export { NOW };

const clone = (v) => structuredClone(v);

function labelsOf(obj) {
  const labels = obj?.metadata?.labels;
  return labels && typeof labels === 'object' && !Array.isArray(labels) ? labels : {};
}

function raw(obj) {
  return { meta: metaOf(obj), json: JSON.stringify(obj) };
}

/** The key `namespace/name` or `name` as an object key. */
function keyOf(key) {
  const split = splitKey(key);
  if (!split) return { namespace: null, name: key };
  const [namespace, name] = split;
  return { namespace: namespace === '' ? null : namespace, name };
}

/** The values the index `source` holds for `obj`. */
function indexValues(obj, source) {
  const member = (map, key) => {
    const v = obj?.metadata?.[map]?.[key];
    return typeof v === 'string' ? [v] : [];
  };
  switch (source.tag) {
    case 'label':
      return member('labels', source.val);
    case 'annotation':
      return member('annotations', source.val);
    case 'field':
      return stringsAt(obj, source.val);
    case 'fields': {
      const found = [];
      for (const value of source.val.flatMap((path) => stringsAt(obj, path))) {
        if (!found.includes(value)) found.push(value);
      }
      return found;
    }
    case 'owner-uid':
      return stringsAt(obj, 'metadata.ownerReferences.uid');
    default:
      return [];
  }
}

function selector(text) {
  if (text === null || text === undefined) return null;
  try {
    return Selector.parse(text);
  } catch (e) {
    throw new Error(`the manifest's selector: ${e}`);
  }
}

/** An in-memory cluster running one reconciler; see the module docs. */
export class FakeCluster {
  /**
   * An empty cluster running `reconciler` (`{manifest(), reconcile(ctx,
   * request)}`). Throws when its manifest is invalid, as the host would
   * refuse to load it.
   */
  constructor(reconciler) {
    const manifest = reconciler.manifest();
    try {
      manifest.validate();
    } catch (e) {
      throw new Error(`invalid manifest: ${e}`);
    }
    this.manifest = manifest;
    this.reconciler = reconciler;
    const spec = manifest.spec;
    /** The kinds the manifest caches and how their changes reach the queue. */
    this.routes = [
      { kind: spec.primary, selector: selector(spec.primaryLabelSelector), mapping: null },
      ...spec.owns.map((kind) => ({ kind, selector: null, mapping: { tag: 'controller-owner' } })),
      ...spec.watches.map((w) => ({ kind: w.kind, selector: selector(w.labelSelector), mapping: w.mapping })),
    ];
    this.store = new Store();
    this.recorded = { events: [], writes: [], queueCalls: [], logs: [] };
    /** Rate-limited requeues per key (`namespace/name`), as the host's rate limiter counts them. */
    this.requeues = new Map();
    /** Primary keys the changes queued, each once, in the order queued. */
    this.pending = [];
    this.backend = new FakeBackend(this);
  }

  /** A context over this cluster, for calling SDK helpers directly. */
  context() {
    return new Context(this.backend);
  }

  /**
   * Runs one reconcile of `key`, with `attempt` the key's rate-limited
   * requeues so far, and handles the result as the host does: done and
   * requeue-after forget the key's requeues, requeue and errors add one.
   * Returns the action, or throws what the reconciler threw.
   */
  reconcile(key) {
    const id = objectKeyString(key.namespace, key.name);
    const request = { key: { namespace: key.namespace ?? null, name: key.name }, attempt: this.backend.numRequeues(key) };
    let action;
    try {
      action = this.reconciler.reconcile(this.context(), request);
    } catch (e) {
      this.requeues.set(id, (this.requeues.get(id) ?? 0) + 1);
      throw e;
    }
    if (action?.tag === 'requeue') this.requeues.set(id, (this.requeues.get(id) ?? 0) + 1);
    else this.requeues.delete(id);
    return action;
  }

  /** Creates or overwrites `obj` as another actor would (no permission check, status kept); returns it as stored. */
  insert(kind, obj) {
    try {
      return this.change((store) => store.insert(kind, obj));
    } catch (e) {
      throw new Error(`insert ${kind.kind}: ${e}`);
    }
  }

  /** The stored object (not the cached form: nothing pruned), or null. */
  get(kind, namespace, name) {
    const obj = this.store.get(kind, namespace ?? null, name);
    return obj ? clone(obj) : null;
  }

  /** Every stored object of `kind`, in one namespace or all, ordered by key (`namespace/name`). */
  list(kind, namespace = null) {
    return this.store
      .ofKind(kind)
      .filter((o) => namespace === null || metaStr(o, 'namespace') === namespace)
      .map(clone);
  }

  /** Deletes `namespace/name` as a user would: finalizers delay it, dependents are collected in the background. */
  delete(kind, namespace, name) {
    this.change((store) => store.delete(kind, namespace ?? null, name, {}));
  }

  /**
   * The primary keys the host would have queued for the changes made so
   * far, each once, in the order first queued.
   */
  pendingKeys() {
    return this.pending.map(keyOf);
  }

  /** `pendingKeys`, emptying them. */
  takePendingKeys() {
    const keys = this.pendingKeys();
    this.pending = [];
    return keys;
  }

  /** Runs `change` on the store and queues the primary keys its changes map to. */
  change(change) {
    const before = this.store.snapshot();
    let result;
    let error;
    try {
      result = change(this.store);
    } catch (e) {
      error = e;
    }
    const after = this.store.objects;
    const keys = [];
    const ordered = (map) => [...map.entries()].sort(([, a], [, b]) => compareEntries(a, b));
    for (const [key, old] of ordered(before)) {
      const next = after.get(key);
      if (next && jsonEqual(next.value, old.value)) continue;
      keys.push(...this.mappedKeys(old.kind, old.value));
      if (next) keys.push(...this.mappedKeys(next.kind, next.value));
    }
    for (const [key, next] of ordered(after)) {
      if (!before.has(key)) keys.push(...this.mappedKeys(next.kind, next.value));
    }
    for (const key of keys) {
      if (!this.pending.includes(key)) this.pending.push(key);
    }
    if (error) throw error;
    return result;
  }

  /** The primary keys (as strings) a change of `obj`, of `kind`, maps to, by every route of its kind that admits it. */
  mappedKeys(kind, obj) {
    const object = watched(obj);
    const labels = labelsOf(obj);
    const primary = this.manifest.primary;
    const keys = [];
    for (const route of this.routes) {
      if (!sameKind(route.kind, kind) || (route.selector && !route.selector.matches(labels))) continue;
      const mapping = route.mapping;
      let found = [];
      if (mapping === null) found = [objectKeyString(object.namespace, object.name)];
      else if (mapping.tag === 'controller-owner') found = [controllerOwnerKey(primary, object)];
      else if (mapping.tag === 'label') found = [labelKey(mapping.val, object)];
      else if (mapping.tag === 'annotation') found = [annotationKey(mapping.val, object)];
      else if (mapping.tag === 'namespace') found = [namespaceKey(object)];
      else if (mapping.tag === 'by-index') {
        // The primary objects whose index holds the watched object's name,
        // as the reconciler's `byIndex` finds them.
        let indexed = [];
        try {
          indexed = this.backend.byIndex(primary, mapping.val, object.name);
        } catch {
          indexed = [];
        }
        found = indexed
          .map((o) => objectKeyString(o.meta.key.namespace, o.meta.key.name))
          .filter((key) => indexKeyAdmitted(object, key));
      }
      keys.push(...found.filter((k) => k !== undefined));
    }
    return keys;
  }

  /** Rate-limited requeues of `key` since it was last forgotten, as the host counts them. */
  numRequeues(key) {
    return this.backend.numRequeues(key);
  }

  /** Events recorded so far, oldest first. */
  events() {
    return clone(this.recorded.events);
  }

  /** Successful writes so far (`{verb, kind, key}`), oldest first. */
  writes() {
    return clone(this.recorded.writes);
  }

  /** Queue calls so far (`{call, key}`, `ms` for `enqueue-after`), oldest first. */
  queueCalls() {
    return clone(this.recorded.queueCalls);
  }

  /** Log lines so far (`{level, message, fields}`, fields as `[name, value]` pairs), oldest first. */
  logs() {
    return clone(this.recorded.logs);
  }

  /** Forgets recorded events, writes, queue calls, logs and pending keys (objects and requeue counts stay). */
  clearRecords() {
    this.recorded = { events: [], writes: [], queueCalls: [], logs: [] };
    this.pending = [];
  }
}

/** The backend a `Context` over the fake cluster calls: the host's imports, answered from the store. */
class FakeBackend {
  constructor(cluster) {
    this.cluster = cluster;
  }

  /** The selectors admitting objects of `kind` into the cache; `forbidden` when the manifest does not cache it. */
  cacheFilters(kind) {
    const filters = this.cluster.routes.filter((r) => sameKind(r.kind, kind)).map((r) => r.selector);
    if (filters.length === 0) {
      throw ReconError.forbidden(
        `${kindToString(kind)} is not cached for ${this.cluster.manifest.name}: the manifest neither reconciles, owns nor watches it`,
      );
    }
    return filters;
  }

  /** The cached form of the objects of `kind` in `namespace` (or all) matching `labelSelector`. */
  cachedObjects(kind, namespace, labelSelector) {
    const filters = this.cacheFilters(kind);
    const wanted = labelSelector === null || labelSelector === undefined ? null : Selector.parse(labelSelector);
    return this.cluster.store
      .ofKind(kind)
      .filter((o) => namespace === null || namespace === undefined || metaStr(o, 'namespace') === namespace)
      .filter((o) => {
        const labels = labelsOf(o);
        return admitted(filters, labels) && (!wanted || wanted.matches(labels));
      })
      .map((o) => this.cachedForm(kind, o));
  }

  /**
   * `obj` as the host caches it: without managed fields (unless the manifest
   * keeps them) and prune fields, and as a `PartialObjectMetadata` of its
   * metadata alone when the manifest reads its kind as metadata only.
   */
  cachedForm(kind, obj) {
    const copy = this.cluster.manifest.spec.metadataOnly.some((k) => sameKind(k, kind))
      ? { kind: 'PartialObjectMetadata', apiVersion: 'meta.k8s.io/v1', metadata: clone(obj.metadata ?? {}) }
      : clone(obj);
    if (!this.cluster.manifest.spec.keepManagedFields.some((k) => sameKind(k, kind))) {
      removeAt(copy, ['metadata', 'managedFields']);
    }
    for (const pruned of this.cluster.manifest.spec.pruneFields.filter((p) => sameKind(p.kind, kind))) {
      removeAt(copy, pruned.path.split('.'));
    }
    return copy;
  }

  checkWrite(kind, verb) {
    if (!this.cluster.manifest.allows(kind, verb)) {
      throw ReconError.forbidden(
        `the manifest of ${this.cluster.manifest.name} does not allow ${verbName(verb)} on ${kindToString(kind)}`,
      );
    }
  }

  get(kind, namespace, name) {
    const filters = this.cacheFilters(kind);
    const obj = this.cluster.store.get(kind, namespace ?? null, name);
    if (!obj || !admitted(filters, labelsOf(obj))) return null;
    return raw(this.cachedForm(kind, obj));
  }

  list(kind, namespace, labelSelector) {
    return this.cachedObjects(kind, namespace, labelSelector).map(raw);
  }

  getMeta(kind, namespace, name) {
    return this.get(kind, namespace, name)?.meta ?? null;
  }

  listMeta(kind, namespace, labelSelector) {
    return this.cachedObjects(kind, namespace, labelSelector).map(metaOf);
  }

  byIndex(kind, index, value) {
    const spec = this.cluster.manifest.spec.indexes.find((i) => i.name === index && sameKind(i.kind, kind));
    if (!spec) {
      throw ReconError.invalid(`the manifest declares no index ${debugString(index)} for ${kindToString(kind)}`);
    }
    return this.cachedObjects(kind, null, null)
      .filter((o) => indexValues(o, spec.source).includes(value))
      .map(raw);
  }

  write(kind, namespace, op) {
    const verb = { create: 'create', replace: op.status ? 'update-status' : 'replace', patch: op.status ? 'update-status' : 'patch', delete: 'delete' }[op.type];
    this.checkWrite(kind, verb);
    const ns = namespace ?? null;
    let stored = null;
    switch (op.type) {
      case 'delete':
        this.cluster.change((store) => store.delete(kind, ns, op.name, op.options ?? {}));
        break;
      case 'create':
        stored = this.cluster.change((store) => store.create(kind, ns, op.json));
        break;
      case 'replace':
        stored = this.cluster.change((store) => store.update(kind, ns, op.name, op.json, op.status));
        break;
      case 'patch':
        stored = this.cluster.change((store) => store.patch(kind, ns, op.name, op.body, op.status));
        break;
      default:
        throw ReconError.invalid(`unknown write ${JSON.stringify(op.type)}`);
    }
    const result = stored ? raw(stored) : null;
    const key = result ? clone(result.meta.key) : { namespace: ns, name: op.name ?? '' };
    this.cluster.recorded.writes.push({ verb, kind: { ...kind }, key });
    return result;
  }

  recordEvent(event) {
    if (!this.cluster.manifest.allowsEvents()) {
      throw ReconError.forbidden(
        `the manifest of ${this.cluster.manifest.name} does not allow recording events (Manifest.recordsEvents)`,
      );
    }
    this.cluster.recorded.events.push(clone(event));
  }

  /** Records a queue call of `key`, which the host refuses unless it is a Kubernetes namespace and name. */
  queue(key, call) {
    const problem = keyProblem(key.namespace ?? null, key.name);
    if (problem) throw ReconError.invalid(`invalid key: ${problem}`);
    this.cluster.recorded.queueCalls.push(call);
  }

  enqueue(key) {
    this.queue(key, { call: 'enqueue', key: clone(key) });
  }

  enqueueAfter(key, ms) {
    this.queue(key, { call: 'enqueue-after', key: clone(key), ms });
  }

  enqueueRateLimited(key) {
    this.queue(key, { call: 'enqueue-rate-limited', key: clone(key) });
    const id = objectKeyString(key.namespace, key.name);
    this.cluster.requeues.set(id, (this.cluster.requeues.get(id) ?? 0) + 1);
  }

  forget(key) {
    this.cluster.recorded.queueCalls.push({ call: 'forget', key: clone(key) });
    this.cluster.requeues.delete(objectKeyString(key.namespace, key.name));
  }

  numRequeues(key) {
    return this.cluster.requeues.get(objectKeyString(key.namespace, key.name)) ?? 0;
  }

  log(level, message, fields) {
    this.cluster.recorded.logs.push({ level, message, fields: clone(fields) });
  }
}

/** Whether one of the cache's `filters` admits an object with `labels`. */
function admitted(filters, labels) {
  return filters.some((f) => f === null || f.matches(labels));
}

