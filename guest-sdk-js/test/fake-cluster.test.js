/**
 * The fake cluster's semantics, through the `Context` and the raw backend
 * a guest sees: the Rust SDK's `testing/tests.rs`, case for case.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import {
  Action,
  EventType,
  IndexSource,
  KeyMapping,
  Kinds,
  Manifest,
  ObjectKey,
  Propagation,
  ReconError,
  Verb,
  gvk,
  meta,
} from '../src/index.js';
import { FakeCluster, NOW } from '../src/testing/index.js';

const { ConfigMap, Deployment, Namespace, Pod, Secret } = Kinds;

/**
 * A guest that may do anything to ConfigMaps and Deployments and record
 * events, caches Secrets labelled `managed=true` and every Pod through
 * watches, declares three indexes and prunes `data.big`.
 */
const Permissive = {
  manifest() {
    const all = [Verb.Create, Verb.Replace, Verb.Patch, Verb.Delete, Verb.UpdateStatus];
    return new Manifest(ConfigMap, 'permissive')
      .owns(Deployment)
      .watchesSelected(Secret, KeyMapping.label('app'), 'managed=true')
      .watches(Pod, KeyMapping.controllerOwner())
      .index(ConfigMap, 'by-app', IndexSource.label('app'))
      .index(Pod, 'by-claim', IndexSource.field('spec.volumes.persistentVolumeClaim.claimName'))
      .index(Pod, 'by-owner', IndexSource.ownerUid())
      .writes(ConfigMap, all)
      .writes(Deployment, all)
      .recordsEvents()
      .prune(ConfigMap, 'data.big')
      .keepManagedFields(Secret);
  },

  /** Acts on the key's name, to exercise the queue and result handling. */
  reconcile(ctx, request) {
    const { key } = request;
    switch (key.name) {
      case 'fail':
        throw ReconError.unavailable(`attempt ${request.attempt}`);
      case 'requeue':
        return Action.requeue();
      case 'later':
        return Action.requeueAfter(5000);
      case 'queue': {
        ctx.enqueue(key);
        ctx.enqueueAfter(key, 1500);
        ctx.enqueueRateLimited(key);
        ctx.enqueueRateLimited(key);
        const requeues = ctx.numRequeues(key);
        ctx.forget(key);
        ctx.info('queued', { requeues, after: ctx.numRequeues(key) });
        return Action.done();
      }
      default:
        return Action.done();
    }
  },
};

/** A guest allowed nothing but reads of ConfigMaps labelled `tier=web`. */
const ReadOnly = {
  manifest: () => new Manifest(ConfigMap, 'read-only').primarySelector('tier=web'),
  reconcile: () => Action.done(),
};

function configMap(namespace, name, data = {}) {
  return { metadata: { namespace, name }, data: { ...data } };
}

function labelled(obj, labels) {
  return { ...obj, metadata: { ...obj.metadata, labels: { ...labels } } };
}

function deployment(namespace, name, replicas) {
  return {
    metadata: { namespace, name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } } },
    },
    status: { availableReplicas: 7 },
  };
}

function ownerRef(owner) {
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    name: owner.metadata.name,
    uid: owner.metadata.uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

const rv = (obj) => Number(obj.metadata.resourceVersion);
const data = (cm) => cm.data ?? {};

/** Asserts `f` throws a `ReconError` of case `tag` whose text passes `check`. */
function throwsError(f, tag, check = () => true) {
  assert.throws(f, (e) => e instanceof ReconError && e.tag === tag && check(e.detail));
}

// ------------------------------------------------------------------ writes

test('create assigns server metadata and drops status', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const created = ctx.create(Deployment, deployment('ns', 'web', 2));
  assert.equal(created.metadata.uid, '00000000-0000-0000-0000-000000000001');
  assert.equal(created.metadata.resourceVersion, '1');
  assert.equal(created.metadata.generation, 1);
  assert.equal(created.metadata.creationTimestamp, NOW);
  assert.equal(created.status, undefined, 'create drops status');
  assert.deepEqual(cluster.get(Deployment, 'ns', 'web'), created);
  assert.deepEqual(cluster.writes(), [
    { verb: Verb.Create, kind: Deployment, key: ObjectKey.namespaced('ns', 'web') },
  ]);
  throwsError(() => ctx.create(Deployment, deployment('ns', 'web', 2)), 'already-exists', (m) =>
    m.includes('already exists'),
  );
});

test('create checks name, namespace and type', () => {
  const cluster = new FakeCluster(Permissive);
  const create = (json) => cluster.backend.write(ConfigMap, 'ns', { type: 'create', json });
  for (const json of [
    '{}',
    '[]',
    'not json',
    '{"metadata": {"name": "a", "namespace": "other"}}',
    '{"kind": "Secret", "metadata": {"name": "a"}}',
  ]) {
    throwsError(() => create(json), 'invalid');
  }
  const generated = create('{"metadata": {"generateName": "cm-"}}');
  assert.ok(generated.meta.key.name.startsWith('cm-'));
  assert.equal(generated.meta.key.namespace, 'ns');
  assert.equal(JSON.parse(generated.json).metadata.name, generated.meta.key.name);
});

test('resource versions and generations follow changes', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const created = ctx.create(Deployment, deployment('ns', 'web', 1));

  // Unchanged: nothing is written, the version stays.
  const same = ctx.replace(Deployment, created);
  assert.equal(rv(same), rv(created));

  // Metadata only: a new version, the same generation.
  const relabelled = ctx.replace(Deployment, labelled(created, { team: 'a' }));
  assert.equal(rv(relabelled), rv(created) + 1);
  assert.equal(relabelled.metadata.generation, 1);

  // Spec: a new generation.
  const scaled = structuredClone(relabelled);
  scaled.spec.replicas = 3;
  const stored = ctx.replace(Deployment, scaled);
  assert.equal(stored.metadata.generation, 2);
  assert.equal(stored.metadata.uid, created.metadata.uid);
  assert.equal(stored.metadata.creationTimestamp, created.metadata.creationTimestamp);

  // A Deployment's annotations bump it too, as the apps strategy does.
  const noted = structuredClone(stored);
  noted.metadata.annotations = { note: 'x' };
  assert.equal(ctx.replace(Deployment, noted).metadata.generation, 3);

  // A ConfigMap has no generation, as on a real server.
  const cm = ctx.create(ConfigMap, configMap('ns', 'a', { k: 'v' }));
  assert.equal(cm.metadata.generation, undefined);
  const changed = ctx.replace(ConfigMap, configMap('ns', 'a', { k: 'w' }));
  assert.equal(changed.metadata.generation, undefined);
  assert.equal(changed.metadata.uid, cm.metadata.uid);
});

test('replace is optimistic with a resource version and unconditional without', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const first = ctx.create(ConfigMap, configMap('ns', 'a', { k: '1' }));
  const second = ctx.replace(ConfigMap, { ...first, data: { k: '2' } });

  // `first` is stale now.
  const stale = { ...first, data: { k: '3' } };
  throwsError(() => ctx.replace(ConfigMap, stale), 'conflict');
  throwsError(() => ctx.updateStatus(ConfigMap, stale), 'conflict');
  assert.equal(data(cluster.get(ConfigMap, 'ns', 'a')).k, '2');

  // Without a version the last writer wins.
  const blind = ctx.replace(ConfigMap, configMap('ns', 'a', { k: '4' }));
  assert.equal(data(blind).k, '4');
  assert.equal(rv(blind), rv(second) + 1);

  throwsError(() => ctx.replace(ConfigMap, configMap('ns', 'missing')), 'not-found');
});

test('a lease replace must name the version it read', () => {
  const Lease = gvk('coordination.k8s.io', 'v1', 'Lease');
  const LeaseHolder = {
    manifest: () => new Manifest(Lease, 'lease-holder').writes(Lease, [Verb.Create, Verb.Replace]),
    reconcile: () => Action.Done,
  };
  const cluster = new FakeCluster(LeaseHolder);
  const ctx = cluster.context();
  const lease = (holder) => ({
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: { namespace: 'ns', name: 'lock' },
    spec: { holderIdentity: holder },
  });
  const held = ctx.create(Lease, lease('a'));
  throwsError(
    () => ctx.replace(Lease, lease('b')),
    'invalid',
    (detail) =>
      detail ===
      'Lease "lock" is invalid: metadata.resourceVersion: Invalid value: 0x0: must be specified for an update',
  );
  const taken = lease('b');
  taken.metadata.resourceVersion = held.metadata.resourceVersion;
  assert.equal(ctx.replace(Lease, taken).spec.holderIdentity, 'b');
});

test('status writes change only status and other writes keep it', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const created = ctx.create(Deployment, deployment('ns', 'web', 1));

  const withStatus = deployment('ns', 'web', 5);
  withStatus.metadata.resourceVersion = created.metadata.resourceVersion;
  const updated = ctx.updateStatus(Deployment, withStatus);
  assert.equal(updated.status.availableReplicas, 7);
  assert.equal(updated.spec.replicas, 1, 'spec ignored');
  assert.equal(updated.metadata.generation, 1);

  const patched = ctx.patchStatus(Deployment, 'ns', 'web', {
    status: { availableReplicas: 2 },
    spec: { replicas: 9 },
  });
  assert.equal(patched.status.availableReplicas, 2);
  assert.equal(patched.spec.replicas, 1);

  // A replace of the main resource cannot touch status.
  const replacing = structuredClone(patched);
  replacing.status.availableReplicas = 0;
  replacing.spec.replicas = 4;
  const replaced = ctx.replace(Deployment, replacing);
  assert.equal(replaced.status.availableReplicas, 2);
  assert.equal(replaced.spec.replicas, 4);

  assert.deepEqual(
    cluster.writes().map((w) => w.verb),
    [Verb.Create, Verb.UpdateStatus, Verb.UpdateStatus, Verb.Replace],
  );
});

test('merge and JSON patches', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const created = ctx.create(ConfigMap, configMap('ns', 'a', { keep: '1', drop: '2' }));

  const merged = ctx.patchMerge(ConfigMap, 'ns', 'a', { data: { drop: null, new: '3' } });
  assert.deepEqual(data(merged), { keep: '1', new: '3' });

  const patched = ctx.patchJson(ConfigMap, 'ns', 'a', [
    { op: 'test', path: '/data/keep', value: '1' },
    { op: 'replace', path: '/data/keep', value: 'one' },
  ]);
  assert.equal(data(patched).keep, 'one');

  // A failed test is the API server's 422, and nothing changes.
  throwsError(
    () =>
      ctx.patchJson(ConfigMap, 'ns', 'a', [
        { op: 'test', path: '/data/keep', value: '1' },
        { op: 'remove', path: '/data/keep' },
      ]),
    'invalid',
    (m) => m.includes('rejected'),
  );
  assert.deepEqual(cluster.get(ConfigMap, 'ns', 'a'), patched);

  // A patch naming a stale resourceVersion conflicts; the current one is fine.
  throwsError(
    () =>
      ctx.patchMerge(ConfigMap, 'ns', 'a', {
        metadata: { resourceVersion: created.metadata.resourceVersion },
        data: { x: 'y' },
      }),
    'conflict',
  );
  const current = ctx.patchMerge(ConfigMap, 'ns', 'a', {
    metadata: { resourceVersion: patched.metadata.resourceVersion },
    data: { x: 'y' },
  });
  assert.equal(data(current).x, 'y');

  throwsError(() => ctx.patchMerge(ConfigMap, 'ns', 'missing', {}), 'not-found');
  throwsError(() => ctx.patchMerge(ConfigMap, 'ns', 'a', [1]), 'invalid');
});

test('apply creates, then merges the intent', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const created = ctx.apply(ConfigMap, configMap('ns', 'a', { one: '1', two: '2' }));
  assert.equal(created.metadata.generation, undefined);
  assert.equal(cluster.writes()[0].verb, Verb.Patch);

  // The approximation: fields the new intent omits stay.
  const applied = ctx.apply(ConfigMap, configMap('ns', 'a', { two: '2b' }), false);
  assert.deepEqual(data(applied), { one: '1', two: '2b' });
  assert.equal(applied.metadata.uid, created.metadata.uid);

  // Applying the same intent again writes nothing new.
  const again = ctx.apply(ConfigMap, configMap('ns', 'a', { two: '2b' }));
  assert.equal(rv(again), rv(applied));

  // The raw form needs a JSON object.
  throwsError(
    () =>
      cluster.backend.write(ConfigMap, 'ns', {
        type: 'patch',
        name: 'a',
        body: { tag: 'apply', val: { json: '[]', force: true } },
        status: false,
      }),
    'invalid',
  );
});

test("writes need the manifest's permission", () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const secret = { metadata: { namespace: 'ns', name: 's' } };
  throwsError(() => ctx.create(Secret, secret), 'forbidden', (m) => m.includes('Create'));
  throwsError(() => ctx.delete(Secret, 'ns', 's'), 'forbidden');

  const readOnly = new FakeCluster(ReadOnly);
  const roCtx = readOnly.context();
  readOnly.insert(ConfigMap, configMap('ns', 'a'));
  throwsError(() => roCtx.create(ConfigMap, configMap('ns', 'b')), 'forbidden');
  throwsError(() => roCtx.apply(ConfigMap, configMap('ns', 'a')), 'forbidden');
  throwsError(() => roCtx.patchStatus(ConfigMap, 'ns', 'a', {}), 'forbidden');
  assert.deepEqual(readOnly.writes(), []);

  // Events need the manifest's permission too.
  const cm = readOnly.get(ConfigMap, 'ns', 'a');
  throwsError(
    () => roCtx.event(ConfigMap, cm, EventType.Warning, 'Odd', 'Check', 'something odd'),
    'forbidden',
    (m) => m.includes('read-only') && m.includes('recordsEvents'),
  );
  assert.deepEqual(readOnly.events(), []);

  const permissive = new FakeCluster(Permissive);
  const inserted = permissive.insert(ConfigMap, configMap('ns', 'a'));
  permissive.context().event(ConfigMap, inserted, EventType.Warning, 'Odd', 'Check', 'something odd');
  assert.deepEqual(permissive.events(), [
    {
      regardingKind: ConfigMap,
      regarding: ObjectKey.namespaced('ns', 'a'),
      regardingUid: inserted.metadata.uid,
      eventType: EventType.Warning,
      reason: 'Odd',
      action: 'Check',
      note: 'something odd',
    },
  ]);
});

// ------------------------------------------------------------------- reads

test('the cache holds only what the manifest watches', () => {
  const cluster = new FakeCluster(ReadOnly);
  const ctx = cluster.context();
  cluster.insert(ConfigMap, labelled(configMap('ns', 'web'), { tier: 'web' }));
  cluster.insert(ConfigMap, labelled(configMap('ns', 'db'), { tier: 'db' }));
  cluster.insert(Deployment, deployment('ns', 'd', 1));

  assert.notEqual(ctx.get(ConfigMap, 'ns', 'web'), null);
  assert.equal(ctx.get(ConfigMap, 'ns', 'db'), null, 'outside the primary selector');
  assert.deepEqual(
    ctx.listMeta(ConfigMap).map((m) => m.key.name),
    ['web'],
  );
  throwsError(() => ctx.get(Deployment, 'ns', 'd'), 'forbidden');
  throwsError(() => ctx.list(Secret), 'forbidden');
});

test('watches admit objects through their selectors', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  cluster.insert(Secret, labelled({ metadata: { namespace: 'ns', name: 'managed' } }, { managed: 'true' }));
  cluster.insert(Secret, { metadata: { namespace: 'ns', name: 'other' } });
  const secrets = ctx.list(Secret, 'ns');
  assert.equal(secrets.length, 1);
  assert.equal(secrets[0].metadata.name, 'managed');
  assert.equal(ctx.get(Secret, 'ns', 'other'), null);
});

test('lists filter by namespace and selector in key order', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  for (const [ns, name, app] of [
    ['b', 'x', 'web'],
    ['a', 'z', 'web'],
    // Orders before `a/y` as the host orders keys (`-` before `/`), where
    // namespace-then-name would put it after `a/z`.
    ['a-b', 'w', 'db'],
    ['a', 'y', 'db'],
  ]) {
    cluster.insert(ConfigMap, labelled(configMap(ns, name), { app }));
  }
  const keys = (items) => items.map((m) => ObjectKey.toString(m.key));
  assert.deepEqual(keys(ctx.listMeta(ConfigMap)), ['a-b/w', 'a/y', 'a/z', 'b/x']);
  assert.deepEqual(keys(ctx.listMeta(ConfigMap, 'a')), ['a/y', 'a/z']);
  assert.deepEqual(keys(ctx.listMeta(ConfigMap, null, 'app=web')), ['a/z', 'b/x']);
  assert.deepEqual(keys(ctx.listMeta(ConfigMap, null, 'app notin (web)')), ['a-b/w', 'a/y']);
  assert.equal(ctx.list(ConfigMap, 'b', 'app')[0].metadata.name, 'x');
  throwsError(() => ctx.list(ConfigMap, null, 'app in ('), 'invalid');
});

test('reads drop managed fields and prune fields', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const cm = configMap('ns', 'a', { big: 'xxxx', small: 'x' });
  cm.metadata.managedFields = [{}];
  cluster.insert(ConfigMap, cm);
  const cached = ctx.get(ConfigMap, 'ns', 'a');
  assert.equal(cached.metadata.managedFields, undefined);
  assert.deepEqual(data(cached), { small: 'x' });
  const raw = cluster.backend.get(ConfigMap, 'ns', 'a');
  assert.ok(!raw.json.includes('xxxx'));
  assert.deepEqual(raw.meta.key, ObjectKey.namespaced('ns', 'a'));
  // The stored object is whole.
  assert.equal(data(cluster.get(ConfigMap, 'ns', 'a')).big, 'xxxx');
  // The manifest keeps the Secrets' managedFields.
  cluster.insert(Secret, {
    metadata: { namespace: 'ns', name: 's', labels: { managed: 'true' }, managedFields: [{}] },
  });
  assert.deepEqual(ctx.get(Secret, 'ns', 's').metadata.managedFields, [{}]);
});

test('a kind read as metadata only is cached as PartialObjectMetadata', () => {
  const SecretNames = {
    manifest: () =>
      new Manifest(ConfigMap, 'secret-names')
        .watches(Secret, KeyMapping.label('app'))
        .index(Secret, 'by-app', IndexSource.label('app'))
        .metadataOnly(Secret),
    reconcile: () => Action.done(),
  };
  const cluster = new FakeCluster(SecretNames);
  const ctx = cluster.context();
  cluster.insert(Secret, {
    metadata: { namespace: 'ns', name: 'token', labels: { app: 'web' } },
    data: { password: 'aHVudGVyMg==' },
  });
  const cached = ctx.get(Secret, 'ns', 'token');
  assert.equal(cached.kind, 'PartialObjectMetadata');
  assert.equal(cached.apiVersion, 'meta.k8s.io/v1');
  assert.deepEqual(cached.metadata.labels, { app: 'web' });
  assert.equal(cached.data, undefined);
  assert.deepEqual(
    ctx.byIndex(Secret, 'by-app', 'web').map((o) => o.metadata.name),
    ['token'],
  );
  assert.ok(!cluster.backend.get(Secret, 'ns', 'token').json.includes('aHVudGVyMg'));
  // The stored object is whole.
  assert.deepEqual(cluster.get(Secret, 'ns', 'token').data, { password: 'aHVudGVyMg==' });
});

test('declared indexes answer by index', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const owner = cluster.insert(ConfigMap, configMap('ns', 'owner'));
  cluster.insert(ConfigMap, labelled(configMap('ns', 'a'), { app: 'web' }));
  cluster.insert(ConfigMap, labelled(configMap('other', 'b'), { app: 'web' }));
  cluster.insert(ConfigMap, labelled(configMap('ns', 'c'), { app: 'db' }));
  cluster.insert(Pod, {
    metadata: { namespace: 'ns', name: 'p', ownerReferences: [ownerRef(owner)] },
    spec: {
      containers: [],
      volumes: [
        { name: 'one', persistentVolumeClaim: { claimName: 'data-1' } },
        { name: 'two', persistentVolumeClaim: { claimName: 'data-2' } },
        { name: 'three', emptyDir: {} },
      ],
    },
  });

  assert.deepEqual(
    ctx.byIndex(ConfigMap, 'by-app', 'web').map((o) => ObjectKey.toString(ObjectKey.of(o))),
    ['ns/a', 'other/b'],
  );
  assert.equal(ctx.byIndex(Pod, 'by-claim', 'data-2').length, 1);
  assert.deepEqual(ctx.byIndex(Pod, 'by-claim', 'data-3'), []);
  assert.equal(ctx.byIndex(Pod, 'by-owner', owner.metadata.uid).length, 1);
  throwsError(() => ctx.byIndex(ConfigMap, 'by-claim', 'x'), 'invalid');
});

// ------------------------------------------------------------------ delete

test('delete honours finalizers', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const cm = configMap('ns', 'a');
  cm.metadata.finalizers = ['one', 'two'];
  const created = ctx.create(ConfigMap, cm);

  ctx.delete(ConfigMap, 'ns', 'a');
  const deleting = cluster.get(ConfigMap, 'ns', 'a');
  assert.equal(deleting.metadata.deletionTimestamp, NOW);
  assert.equal(rv(deleting), rv(created) + 1);

  // No new finalizers while deleting.
  const more = structuredClone(deleting);
  more.metadata.finalizers = ['one', 'two', 'three'];
  throwsError(() => ctx.replace(ConfigMap, more), 'invalid', (m) => m.includes('finalizers'));

  const fewer = structuredClone(deleting);
  fewer.metadata.finalizers = ['two'];
  ctx.replace(ConfigMap, fewer);
  assert.notEqual(cluster.get(ConfigMap, 'ns', 'a'), null);

  const last = ctx.patchJson(ConfigMap, 'ns', 'a', [{ op: 'remove', path: '/metadata/finalizers/0' }]);
  assert.equal(last.metadata.name, 'a');
  assert.equal(cluster.get(ConfigMap, 'ns', 'a'), null);
  throwsError(() => ctx.delete(ConfigMap, 'ns', 'a'), 'not-found');
});

test('delete checks preconditions', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const cm = ctx.create(ConfigMap, configMap('ns', 'a'));
  throwsError(() => ctx.delete(ConfigMap, 'ns', 'a', { preconditionUid: 'someone-else' }), 'conflict', (m) =>
    m.includes('UID'),
  );
  throwsError(() => ctx.delete(ConfigMap, 'ns', 'a', { preconditionResourceVersion: '0' }), 'conflict', (m) =>
    m.includes('ResourceVersion'),
  );
  ctx.delete(ConfigMap, 'ns', 'a', {
    preconditionUid: cm.metadata.uid,
    preconditionResourceVersion: cm.metadata.resourceVersion,
  });
  assert.equal(cluster.get(ConfigMap, 'ns', 'a'), null);
  assert.equal(cluster.writes().at(-1).verb, Verb.Delete);
});

test('deleting an owner collects or orphans its dependents', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const owner = ctx.create(ConfigMap, configMap('ns', 'owner'));
  const otherOwner = ctx.create(ConfigMap, configMap('ns', 'other-owner'));
  const owned = (name, owners) => {
    const d = deployment('ns', name, 1);
    d.metadata.ownerReferences = owners.map(ownerRef);
    return ctx.create(Deployment, d);
  };
  owned('only', [owner]);
  owned('shared', [owner, otherOwner]);
  const finalized = deployment('ns', 'finalized', 1);
  finalized.metadata.ownerReferences = [ownerRef(owner)];
  finalized.metadata.finalizers = ['keep'];
  ctx.create(Deployment, finalized);

  cluster.delete(ConfigMap, 'ns', 'owner');
  assert.equal(cluster.get(Deployment, 'ns', 'only'), null);
  assert.notEqual(cluster.get(Deployment, 'ns', 'shared'), null, 'another owner remains');
  assert.ok(cluster.get(Deployment, 'ns', 'finalized').metadata.deletionTimestamp);

  owned('orphan', [otherOwner]);
  ctx.delete(ConfigMap, 'ns', 'other-owner', { propagation: Propagation.Orphan });
  assert.equal(cluster.get(Deployment, 'ns', 'orphan').metadata.ownerReferences, undefined);
  assert.notEqual(cluster.get(Deployment, 'ns', 'shared'), null);
});

// ------------------------------------------------------ reconcile and queue

test('reconcile results update the attempt count as the host does', () => {
  const cluster = new FakeCluster(Permissive);
  const fail = ObjectKey.namespaced('ns', 'fail');
  throwsError(() => cluster.reconcile(fail), 'unavailable', (m) => m === 'attempt 0');
  throwsError(() => cluster.reconcile(fail), 'unavailable', (m) => m === 'attempt 1');
  const requeue = ObjectKey.namespaced('ns', 'requeue');
  assert.deepEqual(cluster.reconcile(requeue), Action.requeue());
  assert.equal(cluster.numRequeues(requeue), 1);
  const later = ObjectKey.namespaced('ns', 'later');
  assert.deepEqual(cluster.reconcile(later), Action.requeueAfter(5000));
  assert.equal(cluster.numRequeues(later), 0);
  assert.equal(cluster.numRequeues(fail), 2);
});

test('queue calls and logs are recorded', () => {
  const cluster = new FakeCluster(Permissive);
  const key = ObjectKey.namespaced('ns', 'queue');
  assert.deepEqual(cluster.reconcile(key), Action.done());
  assert.deepEqual(cluster.queueCalls(), [
    { call: 'enqueue', key },
    { call: 'enqueue-after', key, ms: 1500 },
    { call: 'enqueue-rate-limited', key },
    { call: 'enqueue-rate-limited', key },
    { call: 'forget', key },
  ]);
  assert.deepEqual(cluster.logs(), [
    {
      level: 'info',
      message: 'queued',
      fields: [
        ['requeues', '2'],
        ['after', '0'],
      ],
    },
  ]);
  cluster.clearRecords();
  assert.deepEqual(cluster.queueCalls(), []);
  assert.deepEqual(cluster.logs(), []);
});

test('queue calls refuse keys the host refuses', () => {
  const cluster = new FakeCluster(Permissive);
  const ctx = cluster.context();
  const bad = [
    ObjectKey.namespaced('Not_A_Label', 'a'),
    ObjectKey.namespaced('ns', ''),
    ObjectKey.namespaced('ns', 'a/b'),
    ObjectKey.cluster('n'.repeat(254)),
  ];
  for (const key of bad) {
    for (const call of [() => ctx.enqueue(key), () => ctx.enqueueAfter(key, 1000), () => ctx.enqueueRateLimited(key)]) {
      throwsError(call, 'invalid', (m) => m.startsWith('invalid key: '));
    }
    assert.equal(cluster.numRequeues(key), 0);
  }
  assert.deepEqual(cluster.queueCalls(), []);
  const good = ObjectKey.cluster('n'.repeat(253));
  ctx.enqueue(good);
  assert.deepEqual(cluster.queueCalls(), [{ call: 'enqueue', key: good }]);
});

test('an invalid manifest is refused', () => {
  const Invalid = {
    manifest: () => new Manifest(ConfigMap, 'invalid').primarySelector('a in ('),
    reconcile: () => Action.done(),
  };
  assert.throws(() => new FakeCluster(Invalid), /invalid manifest/);
});

// ------------------------------------------------------------ key mapping

const keys = (cluster) => cluster.takePendingKeys().map(ObjectKey.toString);

test('changes queue the primary keys the manifest maps them to', () => {
  const cluster = new FakeCluster(Permissive);
  // The primary kind: its own key.
  const owner = cluster.insert(ConfigMap, configMap('ns', 'a'));
  assert.deepEqual(keys(cluster), ['ns/a']);
  // An owned kind: its controller owner, when of the primary kind.
  const owned = deployment('ns', 'd', 1);
  owned.metadata.ownerReferences = [ownerRef(owner)];
  cluster.insert(Deployment, owned);
  assert.deepEqual(keys(cluster), ['ns/a']);
  const foreign = deployment('ns', 'e', 1);
  foreign.metadata.ownerReferences = [{ ...ownerRef(owner), kind: 'ReplicaSet', apiVersion: 'apps/v1' }];
  cluster.insert(Deployment, foreign);
  assert.deepEqual(keys(cluster), []);
  // A watched kind with a selector: only the objects it admits, mapped by
  // the label, before and after a change.
  const secret = (labels) => labelled({ metadata: { namespace: 'ns', name: 's' } }, labels);
  cluster.insert(Secret, secret({ app: 'b' }));
  assert.deepEqual(keys(cluster), []);
  cluster.insert(Secret, secret({ app: 'b', managed: 'true' }));
  assert.deepEqual(keys(cluster), ['ns/b']);
  cluster.insert(Secret, secret({ app: 'c', managed: 'true' }));
  assert.deepEqual(keys(cluster), ['ns/b', 'ns/c']);
  // Deleting the owner collects its dependent: both changes are mapped.
  cluster.delete(ConfigMap, 'ns', 'a');
  assert.deepEqual(keys(cluster), ['ns/a']);
  assert.equal(cluster.get(Deployment, 'ns', 'd'), null);
});

test("the reconciler's own writes queue keys too", () => {
  const Creator = {
    manifest: () => new Manifest(ConfigMap, 'creator').owns(Deployment).writes(Deployment, [Verb.Create]),
    reconcile(ctx, request) {
      const owner = ctx.get(ConfigMap, request.key.namespace, request.key.name);
      const child = deployment('ns', 'child', 1);
      child.metadata.ownerReferences = [ownerRef(owner)];
      ctx.create(Deployment, child);
      return Action.done();
    },
  };
  const cluster = new FakeCluster(Creator);
  cluster.insert(ConfigMap, configMap('ns', 'a'));
  cluster.clearRecords();
  assert.deepEqual(cluster.reconcile(ObjectKey.namespaced('ns', 'a')), Action.done());
  // The host would see the Deployment created and queue its owner again.
  assert.deepEqual(keys(cluster), ['ns/a']);
});

test("index mappings find primary objects in the watched object's namespace", () => {
  const ByIndex = {
    manifest: () =>
      new Manifest(ConfigMap, 'by-index')
        .index(ConfigMap, 'by-secret', IndexSource.field('data.secret'))
        .watches(Secret, KeyMapping.byIndex('by-secret')),
    reconcile: () => Action.done(),
  };
  const cluster = new FakeCluster(ByIndex);
  cluster.insert(ConfigMap, configMap('ns', 'uses-s', { secret: 's' }));
  cluster.insert(ConfigMap, configMap('ns', 'uses-t', { secret: 't' }));
  cluster.insert(ConfigMap, configMap('other', 'uses-s', { secret: 's' }));
  cluster.clearRecords();
  cluster.insert(Secret, { metadata: { namespace: 'ns', name: 's' } });
  assert.deepEqual(keys(cluster), ['ns/uses-s']);
});

test('namespace mappings queue the namespace and fields indexes read every path', () => {
  const PerNamespace = {
    manifest: () =>
      new Manifest(Namespace, 'per-namespace')
        .watches(ConfigMap, KeyMapping.namespace())
        .index(Namespace, 'by-secret', IndexSource.fields(['metadata.labels.secret', 'metadata.annotations.secret']))
        .watches(Secret, KeyMapping.byIndex('by-secret'))
        .prune(ConfigMap, 'data'),
    reconcile: () => Action.done(),
  };
  const cluster = new FakeCluster(PerNamespace);
  const namespace = (name, labels, annotations) => ({ metadata: { name, labels, annotations } });
  cluster.insert(Namespace, namespace('a', { secret: 's' }, {}));
  cluster.insert(Namespace, namespace('b', {}, { secret: 's' }));
  cluster.insert(Namespace, namespace('c', { secret: 't' }, {}));
  cluster.clearRecords();
  cluster.insert(ConfigMap, configMap('a', 'settings', { k: 'v' }));
  assert.deepEqual(keys(cluster), ['a']);
  cluster.clearRecords();
  // The index finds the Namespaces that name the Secret, whichever
  // namespace the Secret is in: a cluster-scoped primary object is in none.
  cluster.insert(Secret, { metadata: { namespace: 'c', name: 's' } });
  assert.deepEqual(keys(cluster), ['a', 'b']);
  // ConfigMaps are cached without `data`; nothing else is pruned.
  const ctx = cluster.context();
  assert.equal(ctx.get(ConfigMap, 'a', 'settings').data, undefined);
  assert.equal(meta.label(ctx.get(Namespace, null, 'a'), 'secret'), 's');
});

test('ensureLabels writes only what is missing and if-exists writes tolerate not-found', () => {
  const cluster = new FakeCluster(Permissive);
  const cm = cluster.insert(ConfigMap, { metadata: { namespace: 'default', name: 'a', labels: { x: '1' } } });
  const ctx = cluster.context();
  cluster.clearRecords();
  assert.equal(ctx.ensureLabels(ConfigMap, cm, { x: '1' }), null);
  assert.deepEqual(cluster.writes(), [], 'nothing missing, nothing written');
  const patched = ctx.ensureLabels(ConfigMap, cm, { x: '1', y: '2' });
  assert.equal(patched.labels.y, '2');
  assert.equal(cluster.writes().length, 1);
  const annotated = ctx.ensureAnnotations(ConfigMap, cm, { team: 'a' });
  assert.equal(annotated.annotations.team, 'a');
  assert.equal(annotated.labels.y, '2', "the stored object's metadata");
  // Metadata-only reads and merge patches: nothing is parsed.
  const m = ctx.getMeta(ConfigMap, 'default', 'a');
  assert.equal(m.annotations.team, 'a');
  assert.equal(m.resourceVersion, annotated.resourceVersion);
  assert.equal(ctx.getMeta(ConfigMap, 'default', 'nope'), null);
  const merged = ctx.patchMergeMeta(ConfigMap, 'default', 'a', { metadata: { labels: { z: '3' } } });
  assert.equal(merged.labels.z, '3');

  assert.equal(ctx.deleteIfExists(ConfigMap, 'default', 'a'), true);
  assert.equal(ctx.deleteIfExists(ConfigMap, 'default', 'a'), false);
  assert.equal(ctx.patchMergeIfExists(ConfigMap, 'default', 'a', {}), null);
  throwsError(() => ctx.delete(ConfigMap, 'default', 'a'), 'not-found', () => true);
});

test('endpoint slices bump on labels and priority classes never', async () => {
  const { generationAtCreate, generationBumped, generationRule, unconditionalUpdateAllowed } =
    await import('../src/semantics.js');
  const slice = (port, labels) => ({ metadata: { labels }, addressType: 'IPv4', ports: [{ port }] });
  let rule = generationRule('discovery.k8s.io', 'EndpointSlice');
  assert.ok(generationBumped(rule, slice(80, { a: '1' }), slice(81, { a: '1' })));
  assert.ok(generationBumped(rule, slice(80, { a: '1' }), slice(80, { a: '2' })));
  assert.ok(!generationBumped(rule, slice(80, {}), slice(80, undefined)));
  rule = generationRule('scheduling.k8s.io', 'PriorityClass');
  assert.equal(generationAtCreate(rule), 1);
  assert.ok(!generationBumped(rule, { value: 1 }, { value: 2 }));
  assert.ok(!unconditionalUpdateAllowed({ group: 'policy', kind: 'PodDisruptionBudget' }));
});
