/**
 * The component side of the SDK: the backend a `Context` calls, made of
 * the `recon:controller@0.4.0` imports the host provides, and
 * `exportReconciler`, which turns a reconciler (`{manifest(), reconcile(ctx,
 * request)}`) into the component's `reconciler` export. Only a component
 * build (componentize-js) can load this module: the `recon:controller/*`
 * imports exist nowhere else. Conversions at the boundary: durations are
 * milliseconds in JS and nanoseconds (u64) in WIT; metadata maps are
 * objects in JS and lists of pairs in WIT; absent options are null;
 * failures are thrown `ReconError`s in JS and the `error` variant in WIT.
 */

import * as cache from 'recon:controller/cache@0.4.0';
import * as client from 'recon:controller/client@0.4.0';
import { log } from 'recon:controller/log@0.4.0';
import * as queue from 'recon:controller/queue@0.4.0';

import { Context } from './context.js';
import { ReconError } from './types.js';

const NANOS_PER_MS = 1_000_000n;

function nanos(ms) {
  return BigInt(Math.max(0, Math.round(ms))) * NANOS_PER_MS;
}

/** A thrown import error (the bindings' `ComponentError`, its payload the WIT error) as a `ReconError`. */
function fromWit(e) {
  const payload = e && Object.hasOwn(e, 'payload') ? e.payload : undefined;
  if (payload && typeof payload.tag === 'string') return new ReconError(payload.tag, payload.val ?? '');
  return e;
}

/** Calls an import, turning its error into a `ReconError`. */
function call(f) {
  try {
    return f();
  } catch (e) {
    throw fromWit(e);
  }
}

const none = (v) => (v === null ? undefined : v);
const key = (k) => ({ namespace: none(k.namespace ?? null), name: k.name });

function meta(m) {
  return {
    key: { namespace: m.key.namespace ?? null, name: m.key.name },
    uid: m.uid,
    resourceVersion: m.resourceVersion,
    generation: Number(m.generation),
    labels: Object.fromEntries(m.labels),
    annotations: Object.fromEntries(m.annotations),
    ownerReferences: m.ownerReferences.map((o) => ({ ...o })),
    finalizers: [...m.finalizers],
    deletionTimestamp: m.deletionTimestamp ?? null,
  };
}

const object = (o) => ({ meta: meta(o.meta), json: o.json });

/** The host, through the component's imports. */
export const witBackend = {
  get: (kind, namespace, name) => {
    const found = call(() => cache.get(kind, none(namespace), name));
    return found ? object(found) : null;
  },
  getMeta: (kind, namespace, name) => {
    const found = call(() => cache.getMeta(kind, none(namespace), name));
    return found ? meta(found) : null;
  },
  list: (kind, namespace, selector) => call(() => cache.list(kind, none(namespace), none(selector))).map(object),
  listMeta: (kind, namespace, selector) =>
    call(() => cache.listMeta(kind, none(namespace), none(selector))).map(meta),
  byIndex: (kind, index, value) => call(() => cache.byIndex(kind, index, value)).map(object),
  write: (kind, namespace, op) => {
    const ns = none(namespace);
    switch (op.type) {
      case 'create':
        return object(call(() => client.create(kind, ns, op.json)));
      case 'replace':
        return object(
          call(() => (op.status ? client.updateStatus : client.replace)(kind, ns, op.name, op.json)),
        );
      case 'patch':
        return object(call(() => (op.status ? client.patchStatus : client.patch)(kind, ns, op.name, op.body)));
      case 'delete': {
        const options = {
          propagation: none(op.options.propagation),
          preconditionUid: none(op.options.preconditionUid),
          preconditionResourceVersion: none(op.options.preconditionResourceVersion),
        };
        call(() => client.delete(kind, ns, op.name, options));
        return null;
      }
      default:
        throw ReconError.invalid(`unknown write ${JSON.stringify(op.type)}`);
    }
  },
  recordEvent: (event) =>
    call(() => client.recordEvent({ ...event, regarding: key(event.regarding) })),
  enqueue: (k) => call(() => queue.enqueue(key(k))),
  enqueueAfter: (k, ms) => call(() => queue.enqueueAfter(key(k), nanos(ms))),
  enqueueRateLimited: (k) => call(() => queue.enqueueRateLimited(key(k))),
  forget: (k) => queue.forget(key(k)),
  numRequeues: (k) => queue.numRequeues(key(k)),
  log: (level, message, fields) => log(level, message, fields),
};

/** The WIT `controller-manifest` of a `Manifest`. */
export function witManifest(manifest) {
  const m = manifest.spec;
  return {
    name: m.name,
    primary: m.primary,
    primaryLabelSelector: none(m.primaryLabelSelector),
    owns: m.owns,
    watches: m.watches.map((w) => ({ kind: w.kind, mapping: w.mapping, labelSelector: none(w.labelSelector) })),
    indexes: m.indexes,
    resyncPeriod: m.resyncPeriodMs === null ? undefined : nanos(m.resyncPeriodMs),
    concurrency: none(m.concurrency),
    writes: m.writes,
    pruneFields: m.pruneFields,
    keepManagedFields: m.keepManagedFields,
    metadataOnly: m.metadataOnly,
  };
}

/** A JS action as the WIT `action`. */
function witAction(action) {
  switch (action?.tag) {
    case 'done':
      return { tag: 'done' };
    case 'requeue':
      return { tag: 'requeue' };
    case 'requeue-after':
      return { tag: 'requeue-after', val: nanos(action.ms) };
    default:
      throw new TypeError(`reconcile returned ${JSON.stringify(action)}, not an Action`);
  }
}

/**
 * The component's `reconciler` export for `reconciler`:
 * `export const reconciler = exportReconciler(MyReconciler);` in the
 * module componentize-js builds. A thrown `ReconError` fails the reconcile
 * with its case; any other exception (a bug: a TypeError, a bad return
 * value) is logged at error level with its stack and fails it as `other`.
 */
export function exportReconciler(reconciler) {
  return {
    manifest: () => witManifest(reconciler.manifest()),
    reconcile: (request) => {
      const ctx = new Context(witBackend);
      const req = { key: { namespace: request.key.namespace ?? null, name: request.key.name }, attempt: request.attempt };
      try {
        return { tag: 'ok', val: witAction(reconciler.reconcile(ctx, req)) };
      } catch (e) {
        if (e instanceof ReconError) return { tag: 'err', val: e.tag === 'not-found' ? { tag: 'not-found' } : { tag: e.tag, val: e.detail } };
        const text = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
        log('error', 'reconcile threw', [
          ['error', text],
          ['stack', e instanceof Error && e.stack ? e.stack : ''],
        ]);
        return { tag: 'err', val: { tag: 'other', val: text } };
      }
    },
  };
}
