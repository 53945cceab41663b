/**
 * The vocabulary every other module speaks: kinds (`{group, version, kind}`),
 * object keys (`{namespace, name}`, `namespace` null for cluster-scoped
 * objects), the reconcile `Action`, durations (milliseconds) and the
 * `ReconError` every call can throw, with the cases of the WIT `error`
 * variant of `recon:controller/types`.
 */

/** A kind: `gvk('apps', 'v1', 'Deployment')`; the core group is `''`. */
export function gvk(group, version, kind) {
  return { group, version, kind };
}

/** A kind from an `apiVersion` (`v1`, `apps/v1`) and a kind. */
export function gvkFromApiVersion(apiVersion, kind) {
  const slash = apiVersion.indexOf('/');
  return slash < 0
    ? gvk('', apiVersion, kind)
    : gvk(apiVersion.slice(0, slash), apiVersion.slice(slash + 1), kind);
}

/** The `apiVersion` of objects of `kind`: `v1`, `apps/v1`. */
export function apiVersion(kind) {
  return kind.group === '' ? kind.version : `${kind.group}/${kind.version}`;
}

/** As Kubernetes prints a kind: `apps/v1, Kind=Deployment`. */
export function kindToString(kind) {
  return `${apiVersion(kind)}, Kind=${kind.kind}`;
}

/** Whether two kinds are the same. */
export function sameKind(a, b) {
  return a.group === b.group && a.version === b.version && a.kind === b.kind;
}

/** Kinds guests commonly name (more with `gvk`). */
export const Kinds = Object.freeze({
  ConfigMap: gvk('', 'v1', 'ConfigMap'),
  Secret: gvk('', 'v1', 'Secret'),
  Namespace: gvk('', 'v1', 'Namespace'),
  Node: gvk('', 'v1', 'Node'),
  Pod: gvk('', 'v1', 'Pod'),
  Service: gvk('', 'v1', 'Service'),
  ServiceAccount: gvk('', 'v1', 'ServiceAccount'),
  Deployment: gvk('apps', 'v1', 'Deployment'),
  ReplicaSet: gvk('apps', 'v1', 'ReplicaSet'),
  StatefulSet: gvk('apps', 'v1', 'StatefulSet'),
  DaemonSet: gvk('apps', 'v1', 'DaemonSet'),
  Job: gvk('batch', 'v1', 'Job'),
  Event: gvk('events.k8s.io', 'v1', 'Event'),
});

/**
 * Whether `ch` is a control character (Unicode category Cc: U+0000-U+001F,
 * U+007F-U+009F), as Rust's `char::is_control` has it. (No `\p{Cc}`:
 * the engine in a component is built without Unicode property tables.)
 */
export function isControl(ch) {
  const c = ch.codePointAt(0);
  return c <= 0x1f || (c >= 0x7f && c <= 0x9f);
}

/**
 * `text` quoted as Rust's `{:?}` prints a string, which the host's and the
 * Rust SDK's messages use: `"`, `\\`, `\n`, `\r`, `\t` and `\0` escaped,
 * other control characters as `\u{1b}`.
 */
export function debugString(text) {
  let out = '"';
  for (const ch of String(text)) {
    const escapes = { '"': '\\"', '\\': '\\\\', '\n': '\\n', '\r': '\\r', '\t': '\\t', '\0': '\\0' };
    if (Object.hasOwn(escapes, ch)) out += escapes[ch];
    else if (isControl(ch)) out += `\\u{${ch.codePointAt(0).toString(16)}}`;
    else out += ch;
  }
  return `${out}"`;
}

/** Object keys. */
export const ObjectKey = Object.freeze({
  /** The key of a namespaced object. */
  namespaced: (namespace, name) => ({ namespace, name }),
  /** The key of a cluster-scoped object. */
  cluster: (name) => ({ namespace: null, name }),
  /** The key of `obj`, from its metadata (an absent name is `''`). */
  of: (obj) => ({
    namespace: obj?.metadata?.namespace ?? null,
    name: obj?.metadata?.name ?? '',
  }),
  /** `namespace/name`, or `name` for a cluster-scoped object. */
  toString: (key) => (key.namespace ? `${key.namespace}/${key.name}` : key.name),
});

/** What happens to the key after a successful reconcile. */
export const Action = Object.freeze({
  /** Reconciled: the host forgets the key's backoff history. */
  done: () => ({ tag: 'done' }),
  /** Queue the key again through the host's rate limiter. */
  requeue: () => ({ tag: 'requeue' }),
  /** Forget the key's history and queue it again after `ms` milliseconds. */
  requeueAfter: (ms) => ({ tag: 'requeue-after', ms }),
});

const ERROR_TAGS = [
  'not-found',
  'conflict',
  'already-exists',
  'forbidden',
  'invalid',
  'unavailable',
  'too-large',
  'other',
];

/**
 * Why a call failed; `tag` is one of the WIT `error` cases (`not-found`,
 * `conflict`, `already-exists`, `forbidden`, `invalid`, `unavailable`,
 * `too-large`, `other`) and `detail` its message (none for `not-found`).
 * Thrown by every call that can fail; throw one from `reconcile` to fail
 * it with that case.
 */
export class ReconError extends Error {
  constructor(tag, detail = '') {
    if (!ERROR_TAGS.includes(tag)) {
      throw new TypeError(`not an error case: ${tag}`);
    }
    super(tag === 'not-found' ? 'not found' : detail);
    this.name = 'ReconError';
    this.tag = tag;
    this.detail = tag === 'not-found' ? '' : detail;
  }

  /** As the Rust SDK prints its errors: `conflict: ...`, `not found`. */
  toString() {
    switch (this.tag) {
      case 'not-found':
        return 'not found';
      case 'already-exists':
        return `already exists: ${this.detail}`;
      case 'too-large':
        return `too large: ${this.detail}`;
      case 'other':
        return this.detail;
      default:
        return `${this.tag}: ${this.detail}`;
    }
  }

  static notFound() {
    return new ReconError('not-found');
  }
  static conflict(m) {
    return new ReconError('conflict', m);
  }
  static alreadyExists(m) {
    return new ReconError('already-exists', m);
  }
  static forbidden(m) {
    return new ReconError('forbidden', m);
  }
  static invalid(m) {
    return new ReconError('invalid', m);
  }
  static unavailable(m) {
    return new ReconError('unavailable', m);
  }
  static tooLarge(m) {
    return new ReconError('too-large', m);
  }
  static other(m) {
    return new ReconError('other', m);
  }
}

/** Whether `e` is a `ReconError` of case `tag`. */
export function isError(e, tag) {
  return e instanceof ReconError && e.tag === tag;
}
