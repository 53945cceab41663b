/**
 * The component side of the SDK (`src/wasm.js`), natively: the WIT imports
 * are stand-ins (`test-support/wit/`) recording calls and answering as the bindings
 * componentize-js generates do (options as undefined, u64/s64 as BigInt,
 * errors thrown with the WIT error as `payload`). Checks the manifest and
 * actions as WIT records, durations in nanoseconds, imports' errors thrown
 * as `ReconError`s, a thrown `ReconError` returned as the WIT error, any
 * other exception logged and returned as `other`, and metadata converted.
 */

import assert from 'node:assert/strict';
import { register } from 'node:module';
import { test } from 'node:test';

import { Action, IndexSource, KeyMapping, Kinds, Manifest, ObjectKey, ReconError, Verb } from '../src/index.js';

register('../test-support/wit/loader.js', import.meta.url);
const { exportReconciler } = await import('../src/wasm.js');

const { ConfigMap, Secret } = Kinds;

/** Installs `answers` (name -> function of the call's arguments) and returns the calls made. */
function stubs(answers = {}) {
  const calls = [];
  globalThis.wit = {
    call(name, args) {
      calls.push([name, ...args]);
      const answer = answers[name];
      return answer ? answer(...args) : undefined;
    },
  };
  return calls;
}

const witError = (payload) => Object.assign(new Error('component error'), { payload });

const witMeta = {
  key: { namespace: 'ns', name: 'a' },
  uid: 'u1',
  resourceVersion: '7',
  generation: 3n,
  labels: [['app', 'web']],
  annotations: [],
  ownerReferences: [],
  finalizers: ['f'],
  deletionTimestamp: undefined,
};

test('the manifest crosses as the WIT record, durations in nanoseconds', () => {
  stubs();
  const reconciler = exportReconciler({
    manifest: () =>
      new Manifest(ConfigMap, 'm')
        .watchesSelected(Secret, KeyMapping.label('app'), 'managed')
        .index(ConfigMap, 'i', IndexSource.ownerUid())
        .resyncEvery(600_000)
        .writes(ConfigMap, [Verb.Patch]),
    reconcile: () => Action.done(),
  });
  assert.deepEqual(reconciler.manifest(), {
    name: 'm',
    primary: ConfigMap,
    primaryLabelSelector: undefined,
    owns: [],
    watches: [{ kind: Secret, mapping: { tag: 'label', val: 'app' }, labelSelector: 'managed' }],
    indexes: [{ name: 'i', kind: ConfigMap, source: { tag: 'owner-uid' } }],
    resyncPeriod: 600_000_000_000n,
    concurrency: undefined,
    writes: [{ kind: ConfigMap, verbs: ['patch'] }],
    pruneFields: [],
    keepManagedFields: [],
    metadataOnly: [],
  });
});

test('actions, errors and exceptions become the WIT result', () => {
  const calls = stubs();
  const run = (reconcile) =>
    exportReconciler({ manifest: () => new Manifest(ConfigMap, 'm'), reconcile }).reconcile({
      key: { namespace: undefined, name: 'node-1' },
      attempt: 2,
    });
  let seen;
  assert.deepEqual(
    run((ctx, request) => {
      seen = request;
      return Action.done();
    }),
    { tag: 'ok', val: { tag: 'done' } },
  );
  assert.deepEqual(seen, { key: ObjectKey.cluster('node-1'), attempt: 2 });
  assert.deepEqual(run(() => Action.requeue()), { tag: 'ok', val: { tag: 'requeue' } });
  assert.deepEqual(run(() => Action.requeueAfter(1500)), { tag: 'ok', val: { tag: 'requeue-after', val: 1_500_000_000n } });
  assert.deepEqual(
    run(() => {
      throw ReconError.conflict('stale');
    }),
    { tag: 'err', val: { tag: 'conflict', val: 'stale' } },
  );
  assert.deepEqual(
    run(() => {
      throw ReconError.notFound();
    }),
    { tag: 'err', val: { tag: 'not-found' } },
  );
  assert.equal(calls.length, 0);
  const bug = run(() => null.field);
  assert.equal(bug.tag, 'err');
  assert.equal(bug.val.tag, 'other');
  assert.match(bug.val.val, /^TypeError: /);
  assert.equal(calls[0][0], 'log.log');
  assert.equal(calls[0][1], 'error');
  assert.equal(calls[0][2], 'reconcile threw');
  assert.deepEqual(calls[0][3][0], ['error', bug.val.val]);
  const wrong = run(() => 'done');
  assert.equal(wrong.val.tag, 'other');
  assert.match(wrong.val.val, /not an Action/);
});

test('imports are called with WIT values and their answers and errors converted', () => {
  const calls = stubs({
    'cache.get': (kind, ns, name) => (name === 'a' ? { meta: witMeta, json: '{"metadata":{"name":"a"}}' } : undefined),
    'cache.listMeta': () => [witMeta],
    'client.patch': () => {
      throw witError({ tag: 'forbidden', val: 'no patch' });
    },
    'client.delete': () => {
      throw witError({ tag: 'not-found' });
    },
    'queue.numRequeues': () => 4,
  });
  let result;
  const reconciler = exportReconciler({
    manifest: () => new Manifest(ConfigMap, 'm'),
    reconcile(ctx, request) {
      result = {
        found: ctx.get(ConfigMap, request.key.namespace, 'a'),
        missing: ctx.get(ConfigMap, null, 'b'),
        metas: ctx.listMeta(ConfigMap, null, 'app=web'),
        requeues: ctx.numRequeues(request.key),
        existed: ctx.deleteIfExists(ConfigMap, 'ns', 'gone', { preconditionUid: 'u1' }),
      };
      ctx.enqueueAfter(request.key, 250);
      ctx.info('done', { key: request.key, n: 3 });
      ctx.patchMerge(ConfigMap, 'ns', 'a', { data: {} });
      return Action.done();
    },
  });
  assert.deepEqual(reconciler.reconcile({ key: { namespace: 'ns', name: 'a' }, attempt: 0 }), {
    tag: 'err',
    val: { tag: 'forbidden', val: 'no patch' },
  });
  assert.deepEqual(result.found, { metadata: { name: 'a' } });
  assert.equal(result.missing, null);
  assert.deepEqual(result.metas, [
    {
      key: { namespace: 'ns', name: 'a' },
      uid: 'u1',
      resourceVersion: '7',
      generation: 3,
      labels: { app: 'web' },
      annotations: {},
      ownerReferences: [],
      finalizers: ['f'],
      deletionTimestamp: null,
    },
  ]);
  assert.equal(result.requeues, 4);
  assert.equal(result.existed, false);
  const key = { namespace: 'ns', name: 'a' };
  assert.deepEqual(calls, [
    ['cache.get', ConfigMap, 'ns', 'a'],
    ['cache.get', ConfigMap, undefined, 'b'],
    ['cache.listMeta', ConfigMap, undefined, 'app=web'],
    ['queue.numRequeues', key],
    [
      'client.delete',
      ConfigMap,
      'ns',
      'gone',
      { propagation: undefined, preconditionUid: 'u1', preconditionResourceVersion: undefined },
    ],
    ['queue.enqueueAfter', key, 250_000_000n],
    ['log.log', 'info', 'done', [['key', 'ns/a'], ['n', '3']]],
    ['client.patch', ConfigMap, 'ns', 'a', { tag: 'merge', val: '{"data":{}}' }],
  ]);
});
