/**
 * The SDK for writing recon reconcilers in JavaScript. A reconciler is an
 * object `{manifest(), reconcile(ctx, request)}`: `manifest()` returns a
 * `Manifest` (what to watch, index and write), `reconcile` brings the
 * world in line with the object under `request.key` through a `Context`
 * and returns an `Action` (or throws a `ReconError`). Natively, the
 * `@recon/guest-sdk/testing` module's `FakeCluster` runs it against an
 * in-memory cluster that enforces the manifest as the host does; in a
 * component, `@recon/guest-sdk/wasm`'s `exportReconciler` makes it the
 * `reconciler` export of `recon:controller@0.4.0`.
 */

export { Context, EventType, Level, Propagation } from './context.js';
export { finalizer, add as addFinalizer, remove as removeFinalizer } from './finalizer.js';
export { EVENT_KIND, IndexSource, KeyMapping, Manifest, NAMESPACE_KIND, Verb } from './manifest.js';
export * as meta from './meta.js';
export { Selector } from './selector.js';
export {
  Action,
  Kinds,
  ObjectKey,
  ReconError,
  apiVersion,
  debugString,
  gvk,
  gvkFromApiVersion,
  isError,
  kindToString,
  sameKind,
} from './types.js';
