/**
 * The mirror through the SDK's fake cluster: the Rust example's tests
 * (`examples/configmap-mirror/src/tests.rs`), case for case.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { Action, IndexSource, KeyMapping, Kinds, ObjectKey, Verb, meta } from '@recon/guest-sdk';
import { FakeCluster } from '@recon/guest-sdk/testing';

import { ConfigMapMirror, FINALIZER, MIRROR_OF, MIRROR_SOURCE, MIRROR_TO } from '../src/lib.js';

const { ConfigMap } = Kinds;

function source(mirrorTo, data) {
  const metadata = { namespace: 'src', name: 'settings' };
  if (mirrorTo !== null) metadata.annotations = { [MIRROR_TO]: mirrorTo };
  return { metadata, data: { ...data }, binaryData: { blob: 'AAEC/w==' } };
}

const sourceKey = () => ObjectKey.namespaced('src', 'settings');

const copy = (cluster, namespace) => cluster.get(ConfigMap, namespace, 'settings');

/** The namespaces holding a copy of the source. */
const copies = (cluster) =>
  cluster
    .list(ConfigMap)
    .filter((cm) => meta.label(cm, MIRROR_OF) === 'src.settings')
    .map((cm) => cm.metadata.namespace);

const finalizers = (cluster) => copy(cluster, 'src').metadata.finalizers ?? [];

/** Reconciling `key` again is done and writes nothing. */
function assertSettled(cluster, key) {
  cluster.clearRecords();
  assert.deepEqual(cluster.reconcile(key), Action.done());
  assert.deepEqual(cluster.writes(), []);
}

function mirrored(mirrorTo) {
  const cluster = new FakeCluster(ConfigMapMirror);
  cluster.insert(ConfigMap, source(mirrorTo, { color: 'blue' }));
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());
  return cluster;
}

test('the manifest watches copies and indexes them', () => {
  const m = ConfigMapMirror.manifest();
  assert.equal(m.name, 'configmap-mirror');
  assert.deepEqual(m.primary, ConfigMap);
  assert.deepEqual(m.spec.watches, [
    { kind: ConfigMap, mapping: KeyMapping.annotation(MIRROR_SOURCE), labelSelector: MIRROR_OF },
  ]);
  assert.deepEqual(m.spec.indexes[0].source, IndexSource.label(MIRROR_OF));
  assert.equal(m.spec.resyncPeriodMs, 600_000);
  assert.ok(m.allows(ConfigMap, Verb.Delete));
  assert.ok(m.allowsEvents(), 'it warns of ConfigMaps it will not overwrite');
  m.validate();
});

test('an annotated config map is copied into each namespace', () => {
  const cluster = mirrored('ns-a, ns-b,ns-a');
  assert.deepEqual(copies(cluster), ['ns-a', 'ns-b']);
  const src = copy(cluster, 'src');
  for (const namespace of ['ns-a', 'ns-b']) {
    const c = copy(cluster, namespace);
    assert.deepEqual(c.data, src.data);
    assert.deepEqual(c.binaryData, src.binaryData);
    assert.deepEqual(c.metadata.labels, { [MIRROR_OF]: 'src.settings' });
    assert.equal(meta.annotation(c, MIRROR_SOURCE), 'src/settings');
    assert.equal(c.metadata.finalizers, undefined);
  }
  assert.deepEqual(finalizers(cluster), [FINALIZER]);
  assert.deepEqual(
    cluster.writes().map((w) => w.verb),
    [Verb.Patch, Verb.Create, Verb.Create],
  );

  // Nothing to do the second time.
  assertSettled(cluster, sourceKey());
});

test('copies follow changes to the source', () => {
  const cluster = mirrored('ns-a,ns-b');
  const src = copy(cluster, 'src');
  src.data = { size: 'large' };
  delete src.binaryData;
  cluster.insert(ConfigMap, src);
  cluster.clearRecords();
  cluster.reconcile(sourceKey());
  for (const namespace of ['ns-a', 'ns-b']) {
    const c = copy(cluster, namespace);
    assert.deepEqual(c.data, src.data, 'a key removed from the source goes');
    assert.equal(c.binaryData, undefined);
  }
  assert.deepEqual(cluster.writes(), [
    { verb: Verb.Replace, kind: ConfigMap, key: ObjectKey.namespaced('ns-a', 'settings') },
    { verb: Verb.Replace, kind: ConfigMap, key: ObjectKey.namespaced('ns-b', 'settings') },
  ]);
});

test('an edited or deleted copy is repaired', () => {
  const cluster = mirrored('ns-a,ns-b');
  const edited = copy(cluster, 'ns-a');
  edited.data = { color: 'red' };
  edited.metadata.labels.team = 'x';
  cluster.insert(ConfigMap, edited);
  cluster.delete(ConfigMap, 'ns-b', 'settings');

  // A copy's own key is not a source: nothing happens.
  assertSettled(cluster, ObjectKey.namespaced('ns-a', 'settings'));

  // The watch maps the copies to the source, which repairs them.
  cluster.reconcile(sourceKey());
  const repaired = copy(cluster, 'ns-a');
  assert.deepEqual(repaired.data, copy(cluster, 'src').data);
  assert.equal(meta.label(repaired, 'team'), 'x', 'other labels stay');
  assert.notEqual(copy(cluster, 'ns-b'), null);
});

test('copies outside the annotation are deleted', () => {
  const cluster = mirrored('ns-a,ns-b');
  const src = copy(cluster, 'src');
  src.metadata.annotations[MIRROR_TO] = 'ns-b,ns-c';
  cluster.insert(ConfigMap, src);
  cluster.reconcile(sourceKey());
  assert.deepEqual(copies(cluster), ['ns-b', 'ns-c']);
});

test('removing the annotation removes every copy and the finalizer', () => {
  const cluster = mirrored('ns-a,ns-b');
  const src = copy(cluster, 'src');
  delete src.metadata.annotations;
  cluster.insert(ConfigMap, src);
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());
  assert.deepEqual(copies(cluster), []);
  assert.deepEqual(finalizers(cluster), []);

  assertSettled(cluster, sourceKey());
});

test('deleting the source deletes every copy', () => {
  const cluster = mirrored('ns-a,ns-b');
  cluster.delete(ConfigMap, 'src', 'settings');
  assert.notEqual(copy(cluster, 'src'), null, 'held by the finalizer');
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());
  assert.deepEqual(copies(cluster), []);
  assert.equal(copy(cluster, 'src'), null);
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());
});

test('a config map that is not a copy is left alone', () => {
  const cluster = new FakeCluster(ConfigMapMirror);
  const foreignSource = source(null, { mine: 'yes' });
  foreignSource.metadata.namespace = 'ns-a';
  const foreign = cluster.insert(ConfigMap, foreignSource);
  const src = cluster.insert(ConfigMap, source('ns-a,ns-b', { color: 'blue' }));
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());

  assert.deepEqual(copy(cluster, 'ns-a'), foreign);
  assert.deepEqual(copies(cluster), ['ns-b']);
  assert.deepEqual(cluster.events(), [
    {
      regardingKind: ConfigMap,
      regarding: sourceKey(),
      regardingUid: src.metadata.uid,
      eventType: 'warning',
      reason: 'MirrorConflict',
      action: 'Mirror',
      note: 'ConfigMap "ns-a/settings" exists and is not a mirror of src/settings',
    },
  ]);
});

test('the own namespace and invalid names are not targets', () => {
  const cluster = mirrored('src,Not_A_Namespace,ns-a');
  assert.deepEqual(copies(cluster), ['ns-a']);
  const events = cluster.events();
  assert.equal(events.length, 1);
  assert.equal(events[0].reason, 'InvalidMirrorTarget');
  assert.equal(events[0].note, '"Not_A_Namespace" is not a namespace name');
});

test('a source whose label would be too long is not mirrored', () => {
  const cluster = new FakeCluster(ConfigMapMirror);
  const long = source('ns-a', {});
  long.metadata.name = 'n'.repeat(60);
  cluster.insert(ConfigMap, long);
  const key = ObjectKey.namespaced('src', 'n'.repeat(60));
  assert.deepEqual(cluster.reconcile(key), Action.done());
  assert.equal(cluster.events()[0].reason, 'MirrorNameTooLong');
  assert.equal(cluster.get(ConfigMap, 'ns-a', 'n'.repeat(60)), null);
});

test('unrelated and missing config maps are done', () => {
  const cluster = new FakeCluster(ConfigMapMirror);
  cluster.insert(ConfigMap, source(null, { a: 'b' }));
  assert.deepEqual(cluster.reconcile(sourceKey()), Action.done());
  assert.deepEqual(cluster.reconcile(ObjectKey.namespaced('src', 'missing')), Action.done());
  assert.deepEqual(cluster.writes(), []);
});

/**
 * Reconciles the keys the changes queued, as the host's workers would,
 * until nothing more is queued; the keys reconciled, in order.
 */
function drain(cluster) {
  const reconciled = [];
  for (let round = 0; round < 10; round += 1) {
    const keys = cluster.takePendingKeys();
    if (keys.length === 0) return reconciled;
    for (const key of keys) {
      cluster.reconcile(key);
      reconciled.push(ObjectKey.toString(key));
    }
  }
  throw new Error(`still queueing after 10 rounds: ${reconciled}`);
}

test('a changed copy queues its source and the queue repairs it', () => {
  const cluster = mirrored('ns-a,ns-b');
  drain(cluster);
  const edited = copy(cluster, 'ns-a');
  edited.data = { color: 'red' };
  cluster.insert(ConfigMap, edited);
  cluster.delete(ConfigMap, 'ns-b', 'settings');
  // Each copy is a primary object (its own key) and, through the watch's
  // annotation mapping, names its source.
  assert.deepEqual(cluster.pendingKeys(), [
    ObjectKey.namespaced('ns-a', 'settings'),
    sourceKey(),
    ObjectKey.namespaced('ns-b', 'settings'),
  ]);
  // Working the queue off repairs both copies without a reconcile by hand.
  drain(cluster);
  assert.deepEqual(copy(cluster, 'ns-a').data, copy(cluster, 'src').data);
  assert.notEqual(copy(cluster, 'ns-b'), null);
});
