/**
 * The manifest builder and its checks (the Rust SDK's `manifest.rs`
 * tests), label selectors (`recon-label-selector`'s parse and match
 * cases), and what the component sends the host for a manifest.
 */

import assert from 'node:assert/strict';
import { test } from 'node:test';

import { IndexSource, KeyMapping, Kinds, Manifest, ReconError, Selector, Verb, gvk } from '../src/index.js';

const { ConfigMap, Deployment, Namespace, Secret } = Kinds;

test('the builder fills every field', () => {
  const m = new Manifest(Deployment, 'web')
    .primarySelector('tier=frontend')
    .owns(ConfigMap)
    .watchesSelected(Secret, KeyMapping.byIndex('secrets'), 'managed')
    .index(Deployment, 'secrets', IndexSource.field('spec.secretName'))
    .resyncEvery(60_000)
    .concurrency(4)
    .writes(ConfigMap, [Verb.Create])
    .writes(ConfigMap, [Verb.Create, Verb.Delete])
    .prune(ConfigMap, 'data')
    .keepManagedFields(ConfigMap)
    .keepManagedFields(ConfigMap);
  assert.deepEqual(m.spec, {
    name: 'web',
    primary: Deployment,
    primaryLabelSelector: 'tier=frontend',
    owns: [ConfigMap],
    watches: [{ kind: Secret, mapping: { tag: 'by-index', val: 'secrets' }, labelSelector: 'managed' }],
    indexes: [{ name: 'secrets', kind: Deployment, source: { tag: 'field', val: 'spec.secretName' } }],
    resyncPeriodMs: 60_000,
    concurrency: 4,
    writes: [{ kind: ConfigMap, verbs: [Verb.Create, Verb.Delete] }],
    pruneFields: [{ kind: ConfigMap, path: 'data' }],
    keepManagedFields: [ConfigMap],
    metadataOnly: [],
  });
  m.validate();
  assert.throws(
    () => new Manifest(Deployment, 'web').keepManagedFields(Namespace).validate(),
    /keeps managedFields of v1 Namespace, which the manifest does not watch|keeps managedFields of .*Namespace/,
  );
  const names = new Manifest(ConfigMap, 'names').watches(Secret, KeyMapping.label('app')).metadataOnly(Secret);
  assert.deepEqual(names.metadataOnly(Secret).spec.metadataOnly, [Secret]);
  names.validate();
  assert.throws(
    () => new Manifest(Deployment, 'web').metadataOnly(Namespace).validate(),
    /reads v1 Namespace as metadata only, but the manifest does not watch it|reads .*Namespace.* as metadata only/,
  );
  assert.throws(
    () => names.index(Secret, 'by-data', IndexSource.field('data.password')).validate(),
    /index "by-data" reads "data.password" of .*Secret.*, which the manifest reads as metadata only/,
  );
  assert.ok(m.allows(ConfigMap, Verb.Delete));
  assert.ok(!m.allows(ConfigMap, Verb.Patch));
  assert.ok(!m.allows(Secret, Verb.Create));
  assert.ok(!m.allowsEvents());
  m.validate();
});

test('recording events is a create of events.k8s.io Events', () => {
  const m = new Manifest(ConfigMap, 'm').recordsEvents();
  assert.deepEqual(m.spec.writes, [{ kind: gvk('events.k8s.io', 'v1', 'Event'), verbs: [Verb.Create] }]);
  assert.ok(m.allowsEvents());
  assert.ok(!new Manifest(ConfigMap, 'm').allowsEvents());
});

test('validate names what the host would refuse', () => {
  const invalid = (m) => assert.throws(() => m.validate(), (e) => e instanceof ReconError && e.tag === 'invalid');
  invalid(new Manifest(ConfigMap, ''));
  invalid(new Manifest(ConfigMap, 'm').primarySelector('a in ('));
  invalid(
    new Manifest(ConfigMap, 'm')
      .index(ConfigMap, 'i', IndexSource.ownerUid())
      .index(ConfigMap, 'i', IndexSource.label('a')),
  );
  invalid(new Manifest(ConfigMap, 'm').watches(Secret, KeyMapping.byIndex('missing')));
  invalid(
    new Manifest(ConfigMap, 'm')
      .index(Secret, 'by-secret', IndexSource.ownerUid())
      .watches(Secret, KeyMapping.byIndex('by-secret')),
  );
  invalid(new Manifest(ConfigMap, 'm').watches(Secret, KeyMapping.namespace()));
  new Manifest(Namespace, 'm').watches(Secret, KeyMapping.namespace()).validate();
  invalid(new Manifest(ConfigMap, 'm').index(ConfigMap, 'i', IndexSource.fields([])));
  invalid(new Manifest(ConfigMap, 'm').prune(Secret, 'data'));
  invalid(new Manifest(ConfigMap, 'm').prune(ConfigMap, 'metadata.labels'));
});

test('selectors parse every operator and match as the API server does', () => {
  const sel = Selector.parse('a=1, b==2,c!=3, d in (x, y),e notin (z),f,!g,recon.dev/x=,h in ()');
  assert.deepEqual(sel.requirements, [
    { op: 'Equals', key: 'a', value: '1' },
    { op: 'Equals', key: 'b', value: '2' },
    { op: 'NotEquals', key: 'c', value: '3' },
    { op: 'In', key: 'd', values: ['x', 'y'] },
    { op: 'NotIn', key: 'e', values: ['z'] },
    { op: 'Exists', key: 'f' },
    { op: 'DoesNotExist', key: 'g' },
    { op: 'Equals', key: 'recon.dev/x', value: '' },
    { op: 'In', key: 'h', values: [''] },
  ]);
  for (const text of ['', '   ']) {
    assert.ok(Selector.parse(text).matches({}));
    assert.ok(Selector.parse(text).matches({ a: 'b' }));
  }
  assert.ok(Selector.parse('app!=web').matches({}), '!= holds when the label is absent');
  assert.ok(Selector.parse('app notin (web)').matches({}));
  assert.ok(!Selector.parse('app in (web)').matches({}));
  assert.ok(Selector.parse('app in (web,db),!legacy').matches({ app: 'db' }));
  assert.ok(!Selector.parse('app in (web,db),!legacy').matches({ app: 'db', legacy: 'y' }));
  for (const bad of ['a in (', 'a b', '=a', 'a=b=c', 'Bad_/x=1', 'a=-b', 'a in x']) {
    assert.throws(
      () => Selector.parse(bad),
      (e) => e instanceof ReconError && e.tag === 'invalid' && e.detail.startsWith(`label selector ${JSON.stringify(bad)}`),
      bad,
    );
  }
});

test("messages quote names as the Rust SDK's do, and keys name their bad part cut short", async () => {
  const { debugString } = await import('../src/index.js');
  const { keyProblem } = await import('../src/semantics.js');
  assert.equal(debugString('a\nb"c\\d\u001b'), '"a\\nb\\"c\\\\d\\u{1b}"');
  assert.equal(debugString('plain-name'), '"plain-name"');
  assert.equal(keyProblem('default', 'web'), null);
  assert.equal(keyProblem(null, 'node-1'), null);
  assert.ok(keyProblem('Bad', 'web').startsWith('namespace "Bad" is not a DNS label'));
  assert.equal(keyProblem('ns', 'a\nb'), 'name "a\\nb" may not contain control characters');
  assert.equal(keyProblem('ns\n', 'a'), 'namespace "ns\\n" is not a DNS label (1-63 of a-z, 0-9 and \'-\', starting and ending alphanumeric)');
  const long = keyProblem('a', 'x'.repeat(1 << 20));
  assert.ok(long.includes('(1048576 bytes)'), long);
  assert.ok(long.length < 200, long);
});
