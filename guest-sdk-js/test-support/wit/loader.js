/**
 * A module resolve hook for the tests of `src/wasm.js`: the
 * `recon:controller/<interface>@0.4.0` imports, which only a component
 * has, resolve to `test-support/wit/<interface>.js`, stand-ins that hand every call
 * to the handlers a test puts in `globalThis.wit`.
 */

export async function resolve(specifier, context, nextResolve) {
  const match = /^recon:controller\/([a-z]+)@0\.4\.0$/.exec(specifier);
  if (match) {
    return { url: new URL(`./${match[1]}.js`, import.meta.url).href, shortCircuit: true };
  }
  return nextResolve(specifier, context);
}
