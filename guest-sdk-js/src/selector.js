/**
 * Label selectors in the API server's string form (a port of the Rust
 * `recon-label-selector` crate the host uses): `a=b` (or `a==b`), `a!=b`,
 * `a in (x,y)`, `a notin (x)`, `a` (exists) and `!a` (does not exist),
 * joined by commas; every requirement must hold and the empty selector
 * matches everything. Keys and values are checked as the API server checks
 * them; a selector that does not parse throws `ReconError` `invalid`.
 */

import { ReconError, debugString } from './types.js';

const quote = debugString;

function isSpecial(c) {
  return '!=,()'.includes(c) || /\s/.test(c);
}

function tokenize(text) {
  const tokens = [];
  let i = 0;
  while (i < text.length) {
    const c = text[i];
    const rest = text.slice(i);
    if (/\s/.test(c)) {
      i += 1;
    } else if (rest.startsWith('!=')) {
      tokens.push({ t: '!=' });
      i += 2;
    } else if (c === '!') {
      tokens.push({ t: '!' });
      i += 1;
    } else if (rest.startsWith('==')) {
      tokens.push({ t: '==' });
      i += 2;
    } else if ('=,()'.includes(c)) {
      tokens.push({ t: c });
      i += 1;
    } else {
      let end = i;
      while (end < text.length && !isSpecial(text[end])) end += 1;
      tokens.push({ t: 'word', w: text.slice(i, end) });
      i = end;
    }
  }
  return tokens;
}

function show(token) {
  return token.t === 'word' ? quote(token.w) : `'${token.t}'`;
}

const alnum = (c) => c !== undefined && /^[A-Za-z0-9]$/.test(c);

function validName(s) {
  return (
    s.length > 0 &&
    s.length <= 63 &&
    alnum(s[0]) &&
    alnum(s[s.length - 1]) &&
    /^[A-Za-z0-9._-]*$/.test(s)
  );
}

function validPrefix(s) {
  return (
    s.length <= 253 &&
    s
      .split('.')
      .every(
        (label) =>
          label.length > 0 &&
          label.length <= 63 &&
          !label.startsWith('-') &&
          !label.endsWith('-') &&
          /^[a-z0-9-]*$/.test(label),
      )
  );
}

function checkKey(key) {
  const slash = key.indexOf('/');
  const valid =
    slash >= 0
      ? validPrefix(key.slice(0, slash)) && validName(key.slice(slash + 1))
      : validName(key);
  return valid ? null : `invalid label key ${quote(key)}`;
}

function checkValue(value) {
  return value === '' || validName(value) ? null : `invalid label value ${quote(value)}`;
}

/** A parsed label selector: `requirements` must all hold. */
export class Selector {
  constructor(requirements) {
    this.requirements = requirements;
  }

  /** Parses the string form; throws `invalid` naming the selector and the problem. */
  static parse(text) {
    const tokens = tokenize(text);
    let at = 0;
    const peek = () => tokens[at];
    const next = () => tokens[at++];
    const error = (why) => ReconError.invalid(`label selector ${quote(text)}: ${why}`);
    const key = () => {
      const token = next();
      if (token?.t === 'word') {
        const problem = checkKey(token.w);
        if (problem) throw error(problem);
        return token.w;
      }
      if (token) throw error(`expected a label key, found ${show(token)}`);
      throw error('expected a label key, found the end');
    };
    const value = () => {
      const token = peek();
      if (token?.t === 'word') {
        at += 1;
        const problem = checkValue(token.w);
        if (problem) throw error(problem);
        return token.w;
      }
      if (!token || token.t === ',') return '';
      throw error(`expected a label value, found ${show(token)}`);
    };
    const values = () => {
      if (next()?.t !== '(') throw error("expected '(' after in/notin");
      const found = [];
      for (;;) {
        const token = peek();
        found.push(token && (token.t === ',' || token.t === ')') ? '' : value());
        const end = next();
        if (end?.t === ',') continue;
        if (end?.t === ')') return found;
        throw error("expected ',' or ')' in a value set");
      }
    };
    const requirement = () => {
      if (peek()?.t === '!') {
        at += 1;
        return { op: 'DoesNotExist', key: key() };
      }
      const k = key();
      const token = peek();
      if (!token || token.t === ',') return { op: 'Exists', key: k };
      if (token.t === '=' || token.t === '==') {
        at += 1;
        return { op: 'Equals', key: k, value: value() };
      }
      if (token.t === '!=') {
        at += 1;
        return { op: 'NotEquals', key: k, value: value() };
      }
      if (token.t === 'word' && token.w === 'in') {
        at += 1;
        return { op: 'In', key: k, values: values() };
      }
      if (token.t === 'word' && token.w === 'notin') {
        at += 1;
        return { op: 'NotIn', key: k, values: values() };
      }
      throw error(`expected =, ==, !=, in or notin after ${quote(k)}, found ${show(token)}`);
    };
    const requirements = [];
    if (!peek()) return new Selector(requirements);
    for (;;) {
      requirements.push(requirement());
      const token = next();
      if (!token) return new Selector(requirements);
      if (token.t !== ',') throw error(`expected ',', found ${show(token)}`);
    }
  }

  /** Whether `labels` (an object of strings; non-strings are absent) satisfy every requirement. */
  matches(labels) {
    const label = (k) => {
      const v = labels?.[k];
      return typeof v === 'string' && Object.hasOwn(labels, k) ? v : undefined;
    };
    return this.requirements.every((r) => {
      const actual = label(r.key);
      switch (r.op) {
        case 'Equals':
          return actual === r.value;
        case 'NotEquals':
          return actual !== r.value;
        case 'In':
          return actual !== undefined && r.values.includes(actual);
        case 'NotIn':
          return !(actual !== undefined && r.values.includes(actual));
        case 'Exists':
          return actual !== undefined;
        case 'DoesNotExist':
          return actual === undefined;
        default:
          return false;
      }
    });
  }
}
