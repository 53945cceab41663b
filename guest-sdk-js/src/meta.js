/**
 * Lookups every reconciler makes on an object's `metadata` without
 * checking for absent maps and lists (the Rust SDK's `ObjectMetaExt`):
 * `label(obj, key)`, `annotation(obj, key)`, `hasFinalizer(obj, name)`,
 * `controllerOwner(obj)` and `isBeingDeleted(obj)`.
 */

/** The value of the label `key`, or undefined. */
export function label(obj, key) {
  const labels = obj?.metadata?.labels;
  return labels && Object.hasOwn(labels, key) ? labels[key] : undefined;
}

/** The value of the annotation `key`, or undefined. */
export function annotation(obj, key) {
  const annotations = obj?.metadata?.annotations;
  return annotations && Object.hasOwn(annotations, key) ? annotations[key] : undefined;
}

/** True when the finalizer `name` is set. */
export function hasFinalizer(obj, name) {
  return (obj?.metadata?.finalizers ?? []).includes(name);
}

/** The owner reference with `controller: true`, if any. */
export function controllerOwner(obj) {
  return (obj?.metadata?.ownerReferences ?? []).find((owner) => owner.controller === true);
}

/** True once deletion has been requested (`deletionTimestamp` is set). */
export function isBeingDeleted(obj) {
  return Boolean(obj?.metadata?.deletionTimestamp);
}
