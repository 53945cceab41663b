/**
 * The component's entry module: the mirror as the `reconciler` export of
 * `recon:controller@0.4.0` (built by `just examples` with the SDK's
 * `recon-guest-build` to `configmap_mirror_js.wasm`).
 */

import { exportReconciler } from '@recon/guest-sdk/wasm';

import { ConfigMapMirror } from './lib.js';

export const reconciler = exportReconciler(ConfigMapMirror);
