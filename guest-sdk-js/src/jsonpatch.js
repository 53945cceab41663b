/**
 * The two patch formats a guest sends, applied as the fake cluster applies
 * them: RFC 7386 JSON merge patch (`merge`) and RFC 6902 JSON patch
 * (`applyJsonPatch`: add, remove, replace, move, copy, test; all or
 * nothing, a failed operation throws with the reason).
 */

import { jsonEqual } from './semantics.js';

const isMap = (v) => v !== null && typeof v === 'object' && !Array.isArray(v);

/** `target` merged with `patch` (RFC 7386); returns the result (`target` may be changed). */
export function merge(target, patch) {
  if (!isMap(patch)) return structuredClone(patch);
  const result = isMap(target) ? target : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = merge(Object.hasOwn(result, key) ? result[key] : undefined, value);
  }
  return result;
}

function parsePointer(pointer) {
  if (pointer === '') return [];
  if (!pointer.startsWith('/')) throw new Error(`invalid pointer ${JSON.stringify(pointer)}`);
  return pointer
    .slice(1)
    .split('/')
    .map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
}

function arrayIndex(array, token, forAdd) {
  if (forAdd && token === '-') return array.length;
  if (!/^(0|[1-9][0-9]*)$/.test(token)) throw new Error(`invalid array index ${JSON.stringify(token)}`);
  const index = Number(token);
  if (index > array.length || (!forAdd && index === array.length)) {
    throw new Error(`array index ${index} out of bounds`);
  }
  return index;
}

/** The parent of `pointer` in `doc` and the last token. */
function parentOf(doc, pointer) {
  const tokens = parsePointer(pointer);
  if (tokens.length === 0) return [null, null];
  let parent = doc;
  for (const token of tokens.slice(0, -1)) parent = member(parent, token, pointer);
  if (!isMap(parent) && !Array.isArray(parent)) throw new Error(`path ${JSON.stringify(pointer)} does not exist`);
  return [parent, tokens[tokens.length - 1]];
}

// The existing member `token` of `node` on the way along `pointer`.
function member(node, token, pointer) {
  if (Array.isArray(node)) return node[arrayIndex(node, token, false)];
  if (isMap(node) && Object.hasOwn(node, token)) return node[token];
  throw new Error(`path ${JSON.stringify(pointer)} does not exist`);
}

function get(doc, pointer) {
  let value = doc;
  for (const token of parsePointer(pointer)) value = member(value, token, pointer);
  return value;
}

function add(doc, pointer, value) {
  const [parent, token] = parentOf(doc, pointer);
  if (parent === null) return value;
  if (Array.isArray(parent)) parent.splice(arrayIndex(parent, token, true), 0, value);
  else parent[token] = value;
  return doc;
}

function remove(doc, pointer) {
  const [parent, token] = parentOf(doc, pointer);
  if (parent === null) throw new Error('cannot remove the whole document');
  if (Array.isArray(parent)) return [doc, parent.splice(arrayIndex(parent, token, false), 1)[0]];
  if (!Object.hasOwn(parent, token)) throw new Error(`path ${JSON.stringify(pointer)} does not exist`);
  const removed = parent[token];
  delete parent[token];
  return [doc, removed];
}

/**
 * `doc` with the RFC 6902 `operations` applied, or a thrown `Error` naming
 * the operation that failed (and `doc` untouched: the work is on a copy).
 */
export function applyJsonPatch(doc, operations) {
  if (!Array.isArray(operations)) throw new Error('a JSON patch is an array of operations');
  let result = structuredClone(doc);
  operations.forEach((op, i) => {
    try {
      if (!isMap(op) || typeof op.path !== 'string') throw new Error('an operation needs "op" and "path"');
      switch (op.op) {
        case 'add':
          if (!Object.hasOwn(op, 'value')) throw new Error('"add" needs a value');
          result = add(result, op.path, structuredClone(op.value));
          break;
        case 'remove':
          [result] = remove(result, op.path);
          break;
        case 'replace':
          if (!Object.hasOwn(op, 'value')) throw new Error('"replace" needs a value');
          get(result, op.path);
          [result] = op.path === '' ? [undefined] : remove(result, op.path);
          result = op.path === '' ? structuredClone(op.value) : add(result, op.path, structuredClone(op.value));
          break;
        case 'move': {
          if (typeof op.from !== 'string') throw new Error('"move" needs "from"');
          if (op.path.startsWith(`${op.from}/`)) throw new Error('cannot move a value into one of its children');
          let value;
          [result, value] = remove(result, op.from);
          result = add(result, op.path, value);
          break;
        }
        case 'copy':
          if (typeof op.from !== 'string') throw new Error('"copy" needs "from"');
          result = add(result, op.path, structuredClone(get(result, op.from)));
          break;
        case 'test':
          if (!jsonEqual(get(result, op.path), op.value)) {
            throw new Error(`value at ${JSON.stringify(op.path)} is not the expected value`);
          }
          break;
        default:
          throw new Error(`unknown operation ${JSON.stringify(op.op)}`);
      }
    } catch (e) {
      throw new Error(`operation ${i}: ${e.message}`);
    }
  });
  return result;
}
