/**
 * Finalizers in the style of kube-rs's `finalizer` helper (as the Rust
 * SDK's): `finalizer` makes sure the object carries the finalizer before
 * any `apply` runs, runs `cleanup` once deletion has been requested, and
 * removes the finalizer only after cleanup succeeded. Every change is a
 * JSON patch guarded by a `test` operation, so a concurrent change to the
 * object fails the patch (the reconcile errs and is retried with fresh
 * data) instead of clobbering someone else's finalizers.
 */

import { Action } from './types.js';

/**
 * Runs `handlers.apply(obj)` or `handlers.cleanup(obj)` for `obj` (of
 * `kind`) under the finalizer `name`:
 *
 * - live object without the finalizer: add it, then `apply` the patched object;
 * - live object with the finalizer: `apply`;
 * - deleted object with the finalizer: `cleanup`, then remove the finalizer
 *   and return cleanup's action;
 * - deleted object without the finalizer: nothing to do, `Action.done()`.
 *
 * Errors thrown by the handlers propagate and leave the finalizer in place.
 */
export function finalizer(ctx, kind, name, obj, { apply, cleanup }) {
  const deleted = Boolean(obj?.metadata?.deletionTimestamp);
  const removal = removalOf(obj, name);
  if (!deleted) {
    return apply(removal ? obj : add(ctx, kind, obj, name));
  }
  if (!removal) return Action.done();
  const action = cleanup(obj);
  removal.patch(ctx, kind);
  return action;
}

/**
 * Adds the finalizer `name` to `obj`; returns the object as stored. When
 * `obj` has finalizers, the patch tests they are still exactly those; when
 * it has none, it tests the resourceVersion.
 */
export function add(ctx, kind, obj, name) {
  const meta = obj.metadata ?? {};
  const finalizers = meta.finalizers ?? [];
  const operations =
    finalizers.length > 0
      ? [
          { op: 'test', path: '/metadata/finalizers', value: finalizers },
          { op: 'add', path: '/metadata/finalizers/-', value: name },
        ]
      : [
          { op: 'test', path: '/metadata/resourceVersion', value: meta.resourceVersion ?? null },
          { op: 'add', path: '/metadata/finalizers', value: [name] },
        ];
  return ctx.patchJson(kind, meta.namespace ?? null, meta.name ?? '', operations);
}

/**
 * Removes the finalizer `name` from `obj`, testing that it is still at the
 * index where `obj` has it. Returns the object as stored, or null when `obj`
 * does not carry the finalizer (nothing is written).
 */
export function remove(ctx, kind, obj, name) {
  const removal = removalOf(obj, name);
  return removal ? removal.patch(ctx, kind) : null;
}

/** The patch removing one finalizer, taken before the object is handed on; null without it. */
function removalOf(obj, finalizerName) {
  const meta = obj?.metadata ?? {};
  const index = (meta.finalizers ?? []).indexOf(finalizerName);
  if (index < 0) return null;
  const path = `/metadata/finalizers/${index}`;
  const namespace = meta.namespace ?? null;
  const name = meta.name ?? '';
  const operations = [
    { op: 'test', path, value: finalizerName },
    { op: 'remove', path },
  ];
  return { patch: (ctx, kind) => ctx.patchJson(kind, namespace, name, operations) };
}
