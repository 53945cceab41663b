/**
 * Kubernetes API rules shared by the SDK's context and fake cluster, ported
 * from the Rust `recon-api-semantics` crate that the host, the dev server
 * and the Rust SDK's `FakeCluster` use, so a JavaScript guest's tests see
 * the host's rules: names and keys, how watched objects map to primary
 * keys, the strings at field paths (field indexes), the generation rule
 * per kind, the metadata an update keeps, what counts as no change, and
 * delete preconditions.
 */

import { debugString, gvkFromApiVersion, isControl } from './types.js';

const utf8 = new TextEncoder();
const byteLength = (s) => utf8.encode(s).length;
const quote = debugString;

// ---------------------------------------------------------------- names

/** A DNS-1123 label, as namespaces are. */
export function isDnsLabel(s) {
  return (
    s.length > 0 &&
    s.length <= 63 &&
    /^[a-z0-9-]*$/.test(s) &&
    !s.startsWith('-') &&
    !s.endsWith('-')
  );
}

/** What is wrong with an object name, if anything (else null). */
export function nameProblem(name) {
  if (name.length === 0) return 'is empty';
  if (byteLength(name) > 253) return 'is longer than 253 bytes';
  if (name === '.' || name === '..') return "may not be '.' or '..'";
  if (name.includes('/') || name.includes('%')) return "may not contain '/' or '%'";
  if (Array.from(name).some(isControl)) return 'may not contain control characters';
  return null;
}

function shorten(text) {
  const chars = Array.from(text);
  return chars.length > 64 ? `${chars.slice(0, 64).join('')}… (${byteLength(text)} bytes)` : text;
}

/** What is wrong with the key `namespace`/`name`, if anything (else null). */
export function keyProblem(namespace, name) {
  if (namespace && !isDnsLabel(namespace)) {
    return `namespace ${quote(shorten(namespace))} is not a DNS label (1-63 of a-z, 0-9 and '-', starting and ending alphanumeric)`;
  }
  const problem = nameProblem(name);
  return problem ? `name ${quote(shorten(name))} ${problem}` : null;
}

// -------------------------------------------------------------- mapping

/** The key `namespace/name`, or `name` when the namespace is none or empty. */
export function objectKeyString(namespace, name) {
  return namespace ? `${namespace}/${name}` : name;
}

/** `[namespace, name]` of a key (`''` namespace for `name`); null for more than one `/`. */
export function splitKey(key) {
  const parts = key.split('/');
  if (parts.length === 1) return ['', parts[0]];
  if (parts.length === 2) return [parts[0], parts[1]];
  return null;
}

const metaString = (obj, field) => {
  const v = obj?.metadata?.[field];
  return typeof v === 'string' ? v : '';
};

const member = (obj, map, key) => {
  const m = obj?.metadata?.[map];
  const v = m && typeof m === 'object' && Object.hasOwn(m, key) ? m[key] : undefined;
  return typeof v === 'string' ? v : undefined;
};

/** What the mapping rules read of a watched object held as JSON. */
export function watched(obj) {
  return {
    namespace: metaString(obj, 'namespace'),
    name: metaString(obj, 'name'),
    label: (key) => member(obj, 'labels', key),
    annotation: (key) => member(obj, 'annotations', key),
    controllerOwner: () => {
      const owners = obj?.metadata?.ownerReferences;
      if (!Array.isArray(owners)) return undefined;
      const owner = owners.find((o) => o?.controller === true);
      if (!owner) return undefined;
      const field = (f) => (typeof owner[f] === 'string' ? owner[f] : '');
      return [field('apiVersion'), field('kind'), field('name')];
    },
  };
}

/** The primary key an owned object maps to: its controller owner, when of the primary kind (any version). */
export function controllerOwnerKey(primary, object) {
  const owner = object.controllerOwner();
  if (!owner) return undefined;
  const kind = gvkFromApiVersion(owner[0], owner[1]);
  return kind.group === primary.group && kind.kind === primary.kind
    ? objectKeyString(object.namespace, owner[2])
    : undefined;
}

/** The primary key a label names, in the object's namespace. */
export function labelKey(label, object) {
  const name = object.label(label);
  return name ? objectKeyString(object.namespace, name) : undefined;
}

/** The primary key an annotation names: `namespace/name` as it is, or a name in the object's namespace. */
export function annotationKey(annotation, object) {
  const value = object.annotation(annotation);
  if (!value) return undefined;
  return value.includes('/') ? value : objectKeyString(object.namespace, value);
}

/** The key of the object's namespace (a `v1` Namespace); none for a cluster-scoped object. */
export function namespaceKey(object) {
  return object.namespace ? object.namespace : undefined;
}

/** Whether a primary key found through an index may be queued for `object`. */
export function indexKeyAdmitted(object, key) {
  return (
    object.namespace === '' ||
    !key.includes('/') ||
    (key.startsWith(object.namespace) && key.slice(object.namespace.length).startsWith('/'))
  );
}

// --------------------------------------------------------------- fields

/**
 * The strings at the dot-separated `path` of `value`, descending into every
 * list met on the way (and a list of strings at the end gives each).
 */
export function stringsAt(value, path) {
  const segments = path.split('.');
  const found = [];
  const walk = (v, depth) => {
    if (typeof v === 'string') {
      if (depth === segments.length) found.push(v);
    } else if (Array.isArray(v)) {
      for (const item of v) walk(item, depth);
    } else if (v && typeof v === 'object') {
      if (depth < segments.length && Object.hasOwn(v, segments[depth])) {
        walk(v[segments[depth]], depth + 1);
      }
    }
  };
  walk(value, 0);
  return found;
}

// --------------------------------------------------------------- object

const BUILT_IN_GROUPS = [
  '',
  'admissionregistration.k8s.io',
  'apiextensions.k8s.io',
  'apiregistration.k8s.io',
  'apps',
  'authentication.k8s.io',
  'authorization.k8s.io',
  'autoscaling',
  'batch',
  'certificates.k8s.io',
  'coordination.k8s.io',
  'discovery.k8s.io',
  'events.k8s.io',
  'flowcontrol.apiserver.k8s.io',
  'internal.apiserver.k8s.io',
  'networking.k8s.io',
  'node.k8s.io',
  'policy',
  'rbac.authorization.k8s.io',
  'resource.k8s.io',
  'scheduling.k8s.io',
  'storage.k8s.io',
  'storagemigration.k8s.io',
];

/** Whether `group` is served by kube-apiserver itself (else a custom resource's). */
export function isBuiltInGroup(group) {
  return BUILT_IN_GROUPS.includes(group);
}

/**
 * Whether an update may leave out `metadata.resourceVersion`: not for
 * Leases, PodDisruptionBudgets, CRDs and custom resources (the strategy's
 * `AllowUnconditionalUpdate`).
 */
export function unconditionalUpdateAllowed(kind) {
  if (!isBuiltInGroup(kind.group)) return false;
  const conditional = [
    ['coordination.k8s.io', 'Lease'],
    ['policy', 'PodDisruptionBudget'],
    ['apiextensions.k8s.io', 'CustomResourceDefinition'],
  ];
  return !conditional.some(([group, k]) => group === kind.group && k === kind.kind);
}

/** Deep equality of JSON values (member order ignored). */
export function jsonEqual(a, b) {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    return a.length === b.length && a.every((v, i) => jsonEqual(v, b[i]));
  }
  const ka = Object.keys(a);
  return ka.length === Object.keys(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

function equalExcept(a, b, skip) {
  const isMap = (v) => v && typeof v === 'object' && !Array.isArray(v);
  if (!isMap(a) || !isMap(b)) return jsonEqual(a, b);
  const kept = (m) => Object.keys(m).filter((k) => !skip(k));
  const ka = kept(a);
  return ka.length === kept(b).length && ka.every((k) => Object.hasOwn(b, k) && jsonEqual(a[k], b[k]));
}

/**
 * How a kind's `metadata.generation` moves, as kube-apiserver's strategy
 * for it moves it: `none`, `spec`, `spec-or-annotations` (Deployment),
 * `all-but-metadata-or-labels` (EndpointSlice), `create-only`
 * (PriorityClass) or `all-but-metadata-and-status` (custom resources).
 */
export function generationRule(group, kind) {
  if (group === 'apps' && kind === 'Deployment') return 'spec-or-annotations';
  const spec = {
    apps: ['ReplicaSet', 'StatefulSet', 'DaemonSet'],
    batch: ['Job', 'CronJob'],
    '': ['ReplicationController'],
    policy: ['PodDisruptionBudget'],
    'networking.k8s.io': ['Ingress', 'IngressClass', 'NetworkPolicy'],
    'apiextensions.k8s.io': ['CustomResourceDefinition'],
    'admissionregistration.k8s.io': ['ValidatingWebhookConfiguration', 'MutatingWebhookConfiguration'],
  };
  if (spec[group]?.includes(kind)) return 'spec';
  if (group === 'discovery.k8s.io' && kind === 'EndpointSlice') return 'all-but-metadata-or-labels';
  if (group === 'scheduling.k8s.io' && kind === 'PriorityClass') return 'create-only';
  return isBuiltInGroup(group) ? 'none' : 'all-but-metadata-and-status';
}

/** The generation of a newly created object under `rule`: 1, or null. */
export function generationAtCreate(rule) {
  return rule === 'none' ? null : 1;
}

/** Whether a write from `old` to `next` bumps the generation under `rule`. */
export function generationBumped(rule, old, next) {
  switch (rule) {
    case 'none':
    case 'create-only':
      return false;
    case 'spec':
      return !jsonEqual(old.spec, next.spec);
    case 'spec-or-annotations': {
      const annotations = (o) => {
        const a = o?.metadata?.annotations;
        return a && typeof a === 'object' && Object.keys(a).length > 0 ? a : undefined;
      };
      return !jsonEqual(old.spec, next.spec) || !jsonEqual(annotations(old), annotations(next));
    }
    case 'all-but-metadata-or-labels': {
      const labels = (o) => {
        const l = o?.metadata?.labels;
        return l && typeof l === 'object' && Object.keys(l).length > 0 ? l : undefined;
      };
      const outside = (k) => ['metadata', 'apiVersion', 'kind'].includes(k);
      return !equalExcept(old, next, outside) || !jsonEqual(labels(old), labels(next));
    }
    default:
      return !equalExcept(old, next, (k) => ['metadata', 'status', 'apiVersion', 'kind'].includes(k));
  }
}

/** Whether two objects are equal but for `metadata.resourceVersion`. */
export function equalButResourceVersion(a, b) {
  if (!equalExcept(a, b, (k) => k === 'metadata')) return false;
  const ma = a?.metadata;
  const mb = b?.metadata;
  if (ma !== undefined && mb !== undefined) return equalExcept(ma, mb, (k) => k === 'resourceVersion');
  return jsonEqual(ma, mb);
}

/** The metadata an update cannot change. */
export const KEPT_ON_UPDATE = ['uid', 'creationTimestamp', 'deletionTimestamp', 'deletionGracePeriodSeconds', 'generation'];

/** Sets in `meta` the `KEPT_ON_UPDATE` members of `stored`, removing those it lacks. */
export function keepServerMetadata(stored, meta) {
  for (const field of KEPT_ON_UPDATE) {
    if (Object.hasOwn(stored, field)) meta[field] = structuredClone(stored[field]);
    else delete meta[field];
  }
}

/** Why a delete's preconditions fail on `obj`, or null. */
export function deletePreconditionFailure(obj, uid, resourceVersion) {
  for (const [label, field, expected] of [
    ['UID', 'uid', uid],
    ['ResourceVersion', 'resourceVersion', resourceVersion],
  ]) {
    if (expected === undefined || expected === null) continue;
    const actual = metaString(obj, field);
    if (expected !== actual) {
      return `Precondition failed: ${label} in precondition: ${expected}, ${label} in object meta: ${actual}`;
    }
  }
  return null;
}
