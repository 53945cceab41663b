/** Stand-in for the `recon:controller/queue` import: calls go to `globalThis.wit`. */
export const enqueue = (...args) => globalThis.wit.call('queue.enqueue', args);
export const enqueueAfter = (...args) => globalThis.wit.call('queue.enqueueAfter', args);
export const enqueueRateLimited = (...args) => globalThis.wit.call('queue.enqueueRateLimited', args);
export const forget = (...args) => globalThis.wit.call('queue.forget', args);
export const numRequeues = (...args) => globalThis.wit.call('queue.numRequeues', args);
