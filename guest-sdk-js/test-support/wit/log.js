/** Stand-in for the `recon:controller/log` import: calls go to `globalThis.wit`. */
export const log = (...args) => globalThis.wit.call('log.log', args);
