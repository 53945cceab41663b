/**
 * The finalizer helper over the fake cluster (the Rust SDK's
 * `finalizer.rs` tests; its property tests as fixed cases).
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  Action,
  Kinds,
  Manifest,
  ObjectKey,
  ReconError,
  Verb,
  addFinalizer,
  finalizer,
  removeFinalizer,
} from '../src/index.js';
import { FakeCluster } from '../src/testing/index.js';

const { ConfigMap } = Kinds;
const NAME = 'recon.dev/test';

/** Runs the finalizer helper over ConfigMaps, logging which event ran; cleanup of `stuck` fails. */
const Finalized = {
  manifest: () => new Manifest(ConfigMap, 'finalized').writes(ConfigMap, [Verb.Patch]),
  reconcile(ctx, request) {
    const cm = ctx.get(ConfigMap, request.key.namespace, request.key.name);
    if (!cm) return Action.done();
    return finalizer(ctx, ConfigMap, NAME, cm, {
      apply(current) {
        ctx.info('apply', { finalizers: (current.metadata.finalizers ?? []).join(',') });
        return Action.done();
      },
      cleanup(current) {
        if (current.metadata.name === 'stuck') throw ReconError.unavailable('cleanup failed');
        ctx.info('cleanup');
        return Action.requeueAfter(1000);
      },
    });
  },
};

function configMap(name, finalizers = []) {
  const cm = { metadata: { namespace: 'ns', name } };
  if (finalizers.length > 0) cm.metadata.finalizers = [...finalizers];
  return cm;
}

const finalizersOf = (cluster, name) => cluster.get(ConfigMap, 'ns', name).metadata.finalizers ?? [];

const messages = (cluster) =>
  cluster.logs().map(({ message, fields }) => (fields.length > 0 ? `${message} ${fields[0][0]}=${fields[0][1]}` : message));

const key = (name) => ObjectKey.namespaced('ns', name);

/** A cluster holding the config map `name`, given the finalizer by a first reconcile and then deleted. */
function deletedAfterFirstReconcile(name) {
  const cluster = new FakeCluster(Finalized);
  cluster.insert(ConfigMap, configMap(name));
  cluster.reconcile(key(name));
  cluster.delete(ConfigMap, 'ns', name);
  return cluster;
}

test('the finalizer is added before apply', () => {
  const cluster = new FakeCluster(Finalized);
  cluster.insert(ConfigMap, configMap('a'));
  assert.deepEqual(cluster.reconcile(key('a')), Action.done());
  assert.deepEqual(messages(cluster), ['apply finalizers=recon.dev/test']);
  assert.deepEqual(finalizersOf(cluster, 'a'), [NAME]);
  assert.equal(cluster.writes().length, 1);

  // Next time it is there: apply, and nothing written.
  cluster.clearRecords();
  assert.deepEqual(cluster.reconcile(key('a')), Action.done());
  assert.deepEqual(messages(cluster), ['apply finalizers=recon.dev/test']);
  assert.deepEqual(cluster.writes(), []);
});

test('other finalizers are kept', () => {
  const cluster = new FakeCluster(Finalized);
  cluster.insert(ConfigMap, configMap('a', ['first', 'second']));
  cluster.reconcile(key('a'));
  assert.deepEqual(finalizersOf(cluster, 'a'), ['first', 'second', NAME]);

  cluster.delete(ConfigMap, 'ns', 'a');
  cluster.clearRecords();
  assert.deepEqual(cluster.reconcile(key('a')), Action.requeueAfter(1000), "cleanup's action");
  assert.deepEqual(messages(cluster), ['cleanup']);
  assert.deepEqual(finalizersOf(cluster, 'a'), ['first', 'second']);
});

test('cleanup runs on deletion and then the object goes', () => {
  const cluster = deletedAfterFirstReconcile('a');
  assert.notEqual(cluster.get(ConfigMap, 'ns', 'a'), null);
  cluster.clearRecords();
  cluster.reconcile(key('a'));
  assert.deepEqual(messages(cluster), ['cleanup']);
  assert.equal(cluster.get(ConfigMap, 'ns', 'a'), null);
  assert.deepEqual(cluster.reconcile(key('a')), Action.done());
});

test('a failed cleanup keeps the finalizer', () => {
  const cluster = deletedAfterFirstReconcile('stuck');
  assert.throws(
    () => cluster.reconcile(key('stuck')),
    (e) => e instanceof ReconError && e.tag === 'unavailable' && e.detail === 'cleanup failed',
  );
  assert.deepEqual(finalizersOf(cluster, 'stuck'), [NAME]);
});

test('a deleted object without the finalizer is left alone', () => {
  const cluster = new FakeCluster(Finalized);
  cluster.insert(ConfigMap, configMap('a', ['someone-else']));
  cluster.delete(ConfigMap, 'ns', 'a');
  assert.deepEqual(cluster.reconcile(key('a')), Action.done());
  assert.deepEqual(cluster.logs(), []);
  assert.deepEqual(cluster.writes(), []);
  assert.deepEqual(finalizersOf(cluster, 'a'), ['someone-else']);
});

test('remove without the finalizer writes nothing', () => {
  const cluster = new FakeCluster(Finalized);
  const cm = cluster.insert(ConfigMap, configMap('a', ['other']));
  assert.equal(removeFinalizer(cluster.context(), ConfigMap, cm, NAME), null);
  assert.deepEqual(cluster.writes(), []);
});

const OTHERS = [[], ['a'], ['a', 'b/c'], ['x', 'y', 'z', 'q/r']];

test('add then remove leaves the other finalizers in order', () => {
  for (const others of OTHERS) {
    const cluster = new FakeCluster(Finalized);
    const ctx = cluster.context();
    const cm = cluster.insert(ConfigMap, configMap('a', others));
    const added = addFinalizer(ctx, ConfigMap, cm, NAME);
    assert.deepEqual(added.metadata.finalizers, [...others, NAME]);
    const removed = removeFinalizer(ctx, ConfigMap, added, NAME);
    assert.deepEqual(removed.metadata.finalizers ?? [], others);
  }
});

test('a concurrent change fails the add instead of being clobbered', () => {
  for (const others of OTHERS) {
    const cluster = new FakeCluster(Finalized);
    const ctx = cluster.context();
    const stale = cluster.insert(ConfigMap, configMap('a', others));
    const changed = [...others, 'intruder'];
    cluster.insert(ConfigMap, configMap('a', changed));
    assert.throws(() => addFinalizer(ctx, ConfigMap, stale, NAME), (e) => e.tag === 'invalid');
    assert.deepEqual(finalizersOf(cluster, 'a'), changed);
  }
});

test('a concurrent change fails the remove instead of removing another', () => {
  for (const others of OTHERS.filter((o) => o.length > 0)) {
    const cluster = new FakeCluster(Finalized);
    const ctx = cluster.context();
    const all = [...others, NAME];
    const stale = cluster.insert(ConfigMap, configMap('a', all));
    // Someone removes the first finalizer: ours moves down one place.
    const shifted = all.slice(1);
    cluster.insert(ConfigMap, configMap('a', shifted));
    assert.throws(() => removeFinalizer(ctx, ConfigMap, stale, NAME), (e) => e.tag === 'invalid');
    assert.deepEqual(finalizersOf(cluster, 'a'), shifted);
  }
});
