/** Stand-in for the `recon:controller/client` import: calls go to `globalThis.wit`. */
const call = (name) => (...args) => globalThis.wit.call(`client.${name}`, args);
export const create = call('create');
export const replace = call('replace');
export const patch = call('patch');
export const updateStatus = call('updateStatus');
export const patchStatus = call('patchStatus');
const remove = call('delete');
export { remove as delete };
export const recordEvent = call('recordEvent');
