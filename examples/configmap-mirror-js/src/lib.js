/**
 * configmap-mirror in JavaScript, behaving as the Rust example
 * (`examples/configmap-mirror`): a ConfigMap annotated
 * `recon.dev/mirror-to: ns-a,ns-b` is copied into those namespaces and
 * kept in sync.
 *
 * - A copy has the source's name, `data` and `binaryData`, the label
 *   `recon.dev/mirror-of: <namespace>.<name>` (found through a label index)
 *   and the annotation `recon.dev/mirror-source: <namespace>/<name>` (the
 *   watch on copies maps a change to, or the deletion of, a copy back to
 *   its source, which then repairs it).
 * - Copies in namespaces the annotation no longer names are deleted; when
 *   the annotation is removed every copy is, and the finalizer goes.
 * - The finalizer `recon.dev/mirror` makes deleting the source delete
 *   every copy first (owner references cannot cross namespaces).
 * - A ConfigMap of the same name that is not a copy of this source is
 *   never overwritten: a Warning event says so and the others are still
 *   mirrored. The source's own namespace is never a target.
 */

import {
  Action,
  EventType,
  IndexSource,
  KeyMapping,
  Kinds,
  Manifest,
  ReconError,
  Verb,
  debugString,
  finalizer,
  meta,
  removeFinalizer,
} from '@recon/guest-sdk';

const { ConfigMap } = Kinds;

/** The annotation on a source naming the target namespaces, comma-separated. */
export const MIRROR_TO = 'recon.dev/mirror-to';
/** The label on a copy: `<namespace>.<name>` of its source. */
export const MIRROR_OF = 'recon.dev/mirror-of';
/** The annotation on a copy: `<namespace>/<name>` of its source. */
export const MIRROR_SOURCE = 'recon.dev/mirror-source';
/** The finalizer on a source that has copies. */
export const FINALIZER = 'recon.dev/mirror';
/** The index of copies by their `recon.dev/mirror-of` label. */
const COPIES_INDEX = 'mirror-of';

export const ConfigMapMirror = {
  manifest() {
    return new Manifest(ConfigMap, 'configmap-mirror')
      .watchesSelected(ConfigMap, KeyMapping.annotation(MIRROR_SOURCE), MIRROR_OF)
      .index(ConfigMap, COPIES_INDEX, IndexSource.label(MIRROR_OF))
      .resyncEvery(600_000)
      .writes(ConfigMap, [Verb.Create, Verb.Replace, Verb.Patch, Verb.Delete])
      .recordsEvents();
  },

  reconcile(ctx, request) {
    const { key } = request;
    const source = ctx.get(ConfigMap, key.namespace, key.name);
    if (!source) return Action.done();
    const annotated = meta.annotation(source, MIRROR_TO) !== undefined;
    const finalized = meta.hasFinalizer(source, FINALIZER);
    if (!annotated && !finalized) {
      // Not a source: an unrelated ConfigMap, or a copy.
      return Action.done();
    }
    if (!annotated && !meta.isBeingDeleted(source)) {
      // Mirroring stopped: the copies go, then the finalizer.
      deleteCopies(ctx, source, new Set());
      removeFinalizer(ctx, ConfigMap, source, FINALIZER);
      return Action.done();
    }
    return finalizer(ctx, ConfigMap, FINALIZER, source, {
      apply: (current) => mirror(ctx, current),
      cleanup: (current) => {
        deleteCopies(ctx, current, new Set());
        return Action.done();
      },
    });
  },
};

/** A namespace name: a DNS-1123 label. */
function validNamespace(name) {
  return name.length > 0 && name.length <= 63 && /^[a-z0-9-]+$/.test(name) && !name.startsWith('-') && !name.endsWith('-');
}

/** The source's identity: its namespace and name, and how copies name it. */
function sourceId(source) {
  const namespace = source.metadata?.namespace ?? '';
  const name = source.metadata?.name ?? '';
  return { namespace, name, mirrorOf: `${namespace}.${name}`, reference: `${namespace}/${name}` };
}

/** A map, undefined when absent or empty: the API server does not keep empty maps. */
function nonEmpty(map) {
  return map && Object.keys(map).length > 0 ? map : undefined;
}

function sameMap(a, b) {
  const x = nonEmpty(a) ?? {};
  const y = nonEmpty(b) ?? {};
  const keys = Object.keys(x);
  return keys.length === Object.keys(y).length && keys.every((k) => Object.hasOwn(y, k) && x[k] === y[k]);
}

/** `copy` made a current copy of `source` (other labels and annotations kept). */
function makeCopy(copy, source, id) {
  if (source.data === undefined) delete copy.data;
  else copy.data = { ...source.data };
  if (source.binaryData === undefined) delete copy.binaryData;
  else copy.binaryData = { ...source.binaryData };
  copy.metadata.labels = { ...copy.metadata.labels, [MIRROR_OF]: id.mirrorOf };
  copy.metadata.annotations = { ...copy.metadata.annotations, [MIRROR_SOURCE]: id.reference };
}

/** Whether `copy` is a current copy of `source`. */
function isCurrent(copy, source, id) {
  return (
    sameMap(copy.data, source.data) &&
    sameMap(copy.binaryData, source.binaryData) &&
    meta.label(copy, MIRROR_OF) === id.mirrorOf &&
    meta.annotation(copy, MIRROR_SOURCE) === id.reference
  );
}

/**
 * Creates or updates the copies the annotation asks for, deletes the
 * others. Every target is attempted; the first error is thrown.
 */
function mirror(ctx, source) {
  const id = sourceId(source);
  if (id.mirrorOf.length > 63) {
    ctx.event(
      ConfigMap,
      source,
      EventType.Warning,
      'MirrorNameTooLong',
      'Mirror',
      `cannot mirror: the label value ${debugString(id.mirrorOf)} would be longer than 63 characters`,
    );
    return Action.done();
  }
  const targets = new Set();
  const requested = meta.annotation(source, MIRROR_TO) ?? '';
  for (const target of requested
    .split(',')
    .map((t) => t.trim())
    .filter((t) => t !== '')) {
    if (!validNamespace(target)) {
      ctx.event(ConfigMap, source, EventType.Warning, 'InvalidMirrorTarget', 'Mirror', `${debugString(target)} is not a namespace name`);
    } else if (target !== id.namespace) {
      targets.add(target);
    }
  }

  let firstError;
  for (const target of [...targets].sort()) {
    try {
      mirrorInto(ctx, source, id, target);
    } catch (e) {
      if (!(e instanceof ReconError)) throw e;
      ctx.warn('mirroring failed', { namespace: target, error: e });
      firstError ??= e;
    }
  }
  deleteCopies(ctx, source, targets);
  if (firstError) throw firstError;
  return Action.done();
}

function mirrorInto(ctx, source, id, target) {
  const existing = ctx.get(ConfigMap, target, id.name);
  if (!existing) {
    const copy = { metadata: { namespace: target, name: id.name } };
    makeCopy(copy, source, id);
    ctx.create(ConfigMap, copy);
    ctx.info('created copy', { namespace: target });
  } else if (meta.label(existing, MIRROR_OF) !== id.mirrorOf) {
    ctx.event(
      ConfigMap,
      source,
      EventType.Warning,
      'MirrorConflict',
      'Mirror',
      `ConfigMap "${target}/${id.name}" exists and is not a mirror of ${id.reference}`,
    );
  } else if (!isCurrent(existing, source, id)) {
    makeCopy(existing, source, id);
    ctx.replace(ConfigMap, existing);
    ctx.info('updated copy', { namespace: target });
  }
}

/** Deletes the copies of `source` outside `keep` (each only if it is still the object found: uid precondition). */
function deleteCopies(ctx, source, keep) {
  const id = sourceId(source);
  for (const copy of ctx.byIndex(ConfigMap, COPIES_INDEX, id.mirrorOf)) {
    const namespace = copy.metadata?.namespace ?? '';
    if (keep.has(namespace)) continue;
    try {
      ctx.delete(ConfigMap, namespace, copy.metadata?.name ?? '', { preconditionUid: copy.metadata?.uid });
    } catch (e) {
      if (!(e instanceof ReconError && e.tag === 'not-found')) throw e;
    }
    ctx.info('deleted copy', { namespace });
  }
}
