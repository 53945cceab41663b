/**
 * The `Manifest`: everything the host needs to wire a reconciler up (the
 * WIT `controller-manifest`), with a builder as in the Rust SDK. Which
 * kinds are cached (the primary kind, owned kinds, watches), how changes
 * map to primary keys (`KeyMapping`), declared indexes (`IndexSource`),
 * which writes are allowed (`Verb`; recording events among them), pruned
 * fields, the resync period and the worker count. `validate` checks what
 * the host would refuse at load; the fake cluster enforces the rest.
 * Key mappings and index sources have the WIT variants' shape
 * (`{tag, val}`), so they cross to the host unchanged.
 */

import { Selector } from './selector.js';
import { ReconError, debugString, gvk, kindToString, sameKind } from './types.js';

/** The write verbs a manifest may allow (the WIT `verb` enum). */
export const Verb = Object.freeze({
  Create: 'create',
  Replace: 'replace',
  Patch: 'patch',
  Delete: 'delete',
  UpdateStatus: 'update-status',
});

/** How a change of a watched object becomes primary keys. */
export const KeyMapping = Object.freeze({
  /** The object's controller owner reference, when it is of the primary kind. */
  controllerOwner: () => ({ tag: 'controller-owner' }),
  /** The named label holds the primary object's name, in the object's namespace. */
  label: (name) => ({ tag: 'label', val: name }),
  /** The named annotation holds `namespace/name` or `name` of the primary object. */
  annotation: (name) => ({ tag: 'annotation', val: name }),
  /** Every primary object whose index of this name holds the watched object's name. */
  byIndex: (index) => ({ tag: 'by-index', val: index }),
  /** The watched object's namespace, as the key of a `v1` Namespace primary object. */
  namespace: () => ({ tag: 'namespace' }),
});

/** Where a declared index takes its values from. */
export const IndexSource = Object.freeze({
  label: (key) => ({ tag: 'label', val: key }),
  annotation: (key) => ({ tag: 'annotation', val: key }),
  /** The string, or strings of a list, at this dot-separated path. */
  field: (path) => ({ tag: 'field', val: path }),
  /** The strings at any of these paths, together. */
  fields: (paths) => ({ tag: 'fields', val: [...paths] }),
  /** The uids of the object's owner references. */
  ownerUid: () => ({ tag: 'owner-uid' }),
});

/** The kind a guest creates to record events: `events.k8s.io/v1` Event. */
export const EVENT_KIND = Object.freeze(gvk('events.k8s.io', 'v1', 'Event'));
/** The kind the `namespace` key mapping names. */
export const NAMESPACE_KIND = Object.freeze(gvk('', 'v1', 'Namespace'));

const VERB_NAMES = {
  create: 'Create',
  replace: 'Replace',
  patch: 'Patch',
  delete: 'Delete',
  'update-status': 'UpdateStatus',
};

/** The name the Rust SDK's messages give a verb (`Patch`, `UpdateStatus`). */
export function verbName(verb) {
  return VERB_NAMES[verb] ?? String(verb);
}

/**
 * A reconciler's manifest: `new Manifest(Kinds.Deployment, 'web').writes(...)`.
 * Its parts are in `spec` (`name`, `primary`, `primaryLabelSelector`,
 * `owns`, `watches`, `indexes`, `resyncPeriodMs`, `concurrency`, `writes`,
 * `pruneFields`, `keepManagedFields`, `metadataOnly`), as the WIT record
 * has them.
 */
export class Manifest {
  /** A manifest named `name` reconciling keys of `primary`. */
  constructor(primary, name) {
    this.spec = {
      name,
      primary: { ...primary },
      primaryLabelSelector: null,
      owns: [],
      watches: [],
      indexes: [],
      resyncPeriodMs: null,
      concurrency: null,
      writes: [],
      pruneFields: [],
      keepManagedFields: [],
      metadataOnly: [],
    };
  }

  get name() {
    return this.spec.name;
  }

  get primary() {
    return this.spec.primary;
  }

  /** Cache (and reconcile) only primary objects matching `selector`. */
  primarySelector(selector) {
    this.spec.primaryLabelSelector = selector;
    return this;
  }

  /** Objects of `kind` owned by a primary object enqueue their controller owner. */
  owns(kind) {
    this.spec.owns.push({ ...kind });
    return this;
  }

  /** Watch every object of `kind`; `mapping` turns a change into primary keys. */
  watches(kind, mapping) {
    return this.watch({ kind, mapping, labelSelector: null });
  }

  /** Watch the objects of `kind` matching `selector`. */
  watchesSelected(kind, mapping, selector) {
    return this.watch({ kind, mapping, labelSelector: selector });
  }

  /** Add a watch `{kind, mapping, labelSelector}`. */
  watch({ kind, mapping, labelSelector = null }) {
    this.spec.watches.push({ kind: { ...kind }, mapping, labelSelector });
    return this;
  }

  /** Declare the index `name` over cached objects of `kind`. */
  index(kind, name, source) {
    this.spec.indexes.push({ name, kind: { ...kind }, source });
    return this;
  }

  /** Replay every cached primary object every `ms` milliseconds. */
  resyncEvery(ms) {
    this.spec.resyncPeriodMs = ms;
    return this;
  }

  /** Run up to `n` reconciles in parallel. */
  concurrency(n) {
    this.spec.concurrency = n;
    return this;
  }

  /** Allow `verbs` on `kind` (added to any verbs already allowed). */
  writes(kind, verbs) {
    let permission = this.spec.writes.find((p) => sameKind(p.kind, kind));
    if (!permission) {
      permission = { kind: { ...kind }, verbs: [] };
      this.spec.writes.push(permission);
    }
    for (const verb of verbs) {
      if (!permission.verbs.includes(verb)) permission.verbs.push(verb);
    }
    return this;
  }

  /** Allow recording events (`ctx.event`): `create` of `events.k8s.io/v1` Events. */
  recordsEvents() {
    return this.writes(EVENT_KIND, [Verb.Create]);
  }

  /** Drop the dot-separated `path` from objects of `kind` before they are cached. */
  prune(kind, path) {
    this.spec.pruneFields.push({ kind: { ...kind }, path });
    return this;
  }

  /**
   * Keep `metadata.managedFields` in the cached objects of `kind`, which the
   * host drops by default. A cache shared with other guests keeps them when
   * any of them asks; they take memory.
   */
  keepManagedFields(kind) {
    if (!this.spec.keepManagedFields.some((k) => sameKind(k, kind))) {
      this.spec.keepManagedFields.push({ ...kind });
    }
    return this;
  }

  /**
   * Read `kind` as metadata only, as client-go's metadata informers do: the
   * host lists and watches it as `PartialObjectMetadata`, so its cached
   * objects hold `metadata` alone and never the rest (a Secret's data, say),
   * whatever other guests read of the kind. Index and prune paths of `kind`
   * must lie under `metadata`.
   */
  metadataOnly(kind) {
    if (!this.spec.metadataOnly.some((k) => sameKind(k, kind))) {
      this.spec.metadataOnly.push({ ...kind });
    }
    return this;
  }

  /** Whether the manifest allows `verb` on `kind`. */
  allows(kind, verb) {
    return this.spec.writes.some((p) => sameKind(p.kind, kind) && p.verbs.includes(verb));
  }

  /** Whether the manifest allows recording events. */
  allowsEvents() {
    return this.allows(EVENT_KIND, Verb.Create);
  }

  /**
   * Throws `invalid` for what the host would refuse at load: an empty
   * name, selectors that do not parse, index names used twice for one
   * kind, `by-index` mappings naming no index of the primary kind, a
   * `namespace` mapping without the primary kind v1 Namespace, a `fields`
   * index of no paths, and prune fields in metadata or of unwatched kinds.
   */
  validate() {
    const m = this.spec;
    const invalid = (m) => ReconError.invalid(m);
    if (!m.name) throw invalid("the manifest's name is empty");
    for (const selector of [m.primaryLabelSelector, ...m.watches.map((w) => w.labelSelector)]) {
      if (selector !== null && selector !== undefined) Selector.parse(selector);
    }
    m.indexes.forEach((index, i) => {
      if (!index.name) throw invalid(`an index over ${kindToString(index.kind)} has no name`);
      if (m.indexes.slice(0, i).some((o) => o.name === index.name && sameKind(o.kind, index.kind))) {
        throw invalid(`index ${debugString(index.name)} is declared twice for ${kindToString(index.kind)}`);
      }
    });
    for (const watch of m.watches) {
      if (
        watch.mapping.tag === 'by-index' &&
        !m.indexes.some((i) => i.name === watch.mapping.val && sameKind(i.kind, m.primary))
      ) {
        throw invalid(
          `the watch of ${kindToString(watch.kind)} maps by index ${debugString(watch.mapping.val)}, which is not declared for ${kindToString(m.primary)}`,
        );
      }
      if (watch.mapping.tag === 'namespace' && !sameKind(m.primary, NAMESPACE_KIND)) {
        throw invalid(
          `the watch of ${kindToString(watch.kind)} maps to the object's namespace, which needs the primary kind v1 Namespace (not ${kindToString(m.primary)})`,
        );
      }
    }
    const empty = m.indexes.find((i) => i.source.tag === 'fields' && i.source.val.length === 0);
    if (empty) {
      throw invalid(`index ${debugString(empty.name)} of ${kindToString(empty.kind)} reads no paths`);
    }
    const read = (kind) =>
      sameKind(kind, m.primary) || m.owns.some((k) => sameKind(k, kind)) || m.watches.some((w) => sameKind(w.kind, kind));
    for (const pruned of m.pruneFields) {
      const path = pruned.path;
      if (path === 'metadata' || (path.startsWith('metadata.') && path !== 'metadata.managedFields')) {
        throw invalid(
          `prune field ${debugString(path)} of ${kindToString(pruned.kind)}: only metadata.managedFields may be pruned from metadata`,
        );
      }
      if (!read(pruned.kind)) {
        throw invalid(
          `prune field ${debugString(path)} is on ${kindToString(pruned.kind)}, which the manifest does not watch`,
        );
      }
    }
    const unread = m.keepManagedFields.find((kind) => !read(kind));
    if (unread) {
      throw invalid(`keeps managedFields of ${kindToString(unread)}, which the manifest does not watch`);
    }
    const unwatched = m.metadataOnly.find((kind) => !read(kind));
    if (unwatched) {
      throw invalid(`reads ${kindToString(unwatched)} as metadata only, but the manifest does not watch it`);
    }
    const metadataOnly = (kind) => m.metadataOnly.some((k) => sameKind(k, kind));
    const outside = (path) => path !== 'metadata' && !path.startsWith('metadata.');
    for (const index of m.indexes.filter((i) => metadataOnly(i.kind))) {
      const paths = { field: [index.source.val], fields: index.source.val }[index.source.tag] ?? [];
      const path = paths.find(outside);
      if (path !== undefined) {
        throw invalid(
          `index ${debugString(index.name)} reads ${debugString(path)} of ${kindToString(index.kind)}, which the manifest reads as metadata only`,
        );
      }
    }
    const pruned = m.pruneFields.find((p) => metadataOnly(p.kind) && outside(p.path));
    if (pruned) {
      throw invalid(
        `prune field ${debugString(pruned.path)} of ${kindToString(pruned.kind)}, which the manifest reads as metadata only`,
      );
    }
  }
}
