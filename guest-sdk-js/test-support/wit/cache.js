/** Stand-in for the `recon:controller/cache` import: calls go to `globalThis.wit.cache`. */
export const get = (...args) => globalThis.wit.call('cache.get', args);
export const getMeta = (...args) => globalThis.wit.call('cache.getMeta', args);
export const list = (...args) => globalThis.wit.call('cache.list', args);
export const listMeta = (...args) => globalThis.wit.call('cache.listMeta', args);
export const byIndex = (...args) => globalThis.wit.call('cache.byIndex', args);
