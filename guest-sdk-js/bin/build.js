#!/usr/bin/env node
/**
 * `recon-guest-build ENTRY.js -o OUT.wasm [--wit DIR_OR_FILE]`: builds a
 * JavaScript reconciler into a component of `recon:controller@0.4.0`.
 * esbuild bundles the entry module and what it imports (the SDK included)
 * into one ES module, leaving the `recon:controller/*` imports to the
 * component; componentize-js (StarlingMonkey) turns that into a WASI
 * Preview 2 component of the world `controller`, without the `wasi:http`
 * imports the host does not provide. The WIT defaults to the
 * `wit/controller.wit` of the checkout this SDK is in. The component is
 * built again only when the bundle, the WIT or the SDK's componentize-js
 * changed since the last build of OUT (a hash beside it, `OUT.inputs`).
 */

import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

import { componentize } from '@bytecodealliance/componentize-js';
import { build } from 'esbuild';

const here = dirname(fileURLToPath(import.meta.url));
const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    out: { type: 'string', short: 'o' },
    wit: { type: 'string', default: resolve(here, '../../wit/controller.wit') },
  },
});
if (positionals.length !== 1 || !values.out) {
  console.error('usage: recon-guest-build ENTRY.js -o OUT.wasm [--wit PATH]');
  process.exit(2);
}

const started = Date.now();
const bundled = await build({
  entryPoints: [resolve(positionals[0])],
  bundle: true,
  format: 'esm',
  platform: 'neutral',
  target: 'es2022',
  external: ['recon:*', 'wasi:*'],
  write: false,
  logLevel: 'warning',
});
const bundle = bundled.outputFiles[0].text;
const out = resolve(values.out);
const componentizeJs = JSON.parse(
  await readFile(resolve(here, '../node_modules/@bytecodealliance/componentize-js/package.json'), 'utf8'),
);
const inputs = createHash('sha256')
  .update(bundle)
  .update(await readFile(resolve(values.wit)))
  .update(componentizeJs.version)
  .digest('hex');
const built = await readFile(`${out}.inputs`, 'utf8').catch(() => null);
const present = await readFile(out).then(() => true, () => false);
if (built === inputs && present) {
  console.error(`recon-guest-build: ${out} is up to date`);
  process.exit(0);
}
// componentize-js reads the source from a file: one of its own, in a
// directory the build can map into the component.
const work = await mkdtemp(join(tmpdir(), 'recon-guest-build-'));
try {
  const source = join(work, 'guest.js');
  await writeFile(source, bundle);
  const { component } = await componentize({
    sourcePath: source,
    witPath: resolve(values.wit),
    worldName: 'controller',
    disableFeatures: ['http', 'fetch-event'],
  });
  await mkdir(dirname(out), { recursive: true });
  await writeFile(out, component);
  await writeFile(`${out}.inputs`, inputs);
  const seconds = ((Date.now() - started) / 1000).toFixed(1);
  console.error(`recon-guest-build: ${out} (${component.length} bytes, ${seconds} s)`);
} finally {
  await rm(work, { recursive: true, force: true });
}
