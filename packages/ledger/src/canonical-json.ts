import { hash } from 'node:crypto';

/**
 * Canonical JSON in the manner of RFC 8785 (JCS): object keys sorted by UTF-16 code units, no whitespace,
 * numbers and strings serialised exactly as JSON.stringify does (ECMAScript number formatting).
 *
 * It follows JSON.stringify's rules for values JSON cannot hold (toJSON is honoured, undefined/functions are
 * dropped from objects and become null in arrays, non-finite numbers become null), so the canonical form of a
 * value equals the canonical form of JSON.parse(JSON.stringify(value)): what is hashed before a write is what
 * a reader of the stored jsonb hashes again.
 */
export function canonicalJson(value: unknown): string {
  const out = serialise(value, '');
  if (out === undefined) throw new TypeError('canonicalJson: the value has no JSON form');
  return out;
}

/** One-shot `hash` rather than `createHash(...).update().digest()`: the same digest without a Hash object per
 * call, which cost several times the hashing itself on the small texts of events and links. */
export function sha256Hex(text: string): string {
  return hash('sha256', text, 'hex');
}

/** Keys repeat from one event to the next: their quoted forms are kept (short keys only, a bounded number). */
const quotedKeys = new Map<string, string>();

function quoteKey(k: string): string {
  let q = quotedKeys.get(k);
  if (q === undefined) {
    q = JSON.stringify(k);
    if (k.length <= 64 && quotedKeys.size < 10_000) quotedKeys.set(k, q);
  }
  return q;
}

// Written for speed (verify runs it twice per event): primitives first, strings built by concatenation, keys
// sorted only when they are not in order already. The output is the same as the plain recursive form.
function serialise(input: unknown, key: string): string | undefined {
  if (typeof input === 'string') return JSON.stringify(input);
  if (typeof input === 'number') return Number.isFinite(input) ? JSON.stringify(input) : 'null';
  if (input === null) return 'null';
  if (typeof input === 'boolean') return input ? 'true' : 'false';
  let value: unknown = input;
  if (typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(k: string): unknown }).toJSON(key);
    // What toJSON answers is serialised as it is (its own toJSON, if it has one, is not called).
    if (typeof value !== 'object' || value === null) return serialise(value, key);
  }
  switch (typeof value) {
    case 'bigint':
      throw new TypeError('canonicalJson: BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) {
      if (i > 0) out += ',';
      // A hole stays empty, as Array.prototype.map and join left it.
      if (i in value) out += serialise(value[i], String(i)) ?? 'null';
    }
    return `${out}]`;
  }
  // Boxed primitives serialise as their primitive, as JSON.stringify does.
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return serialise(value.valueOf(), key);
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  for (let i = 1; i < keys.length; i++) {
    if (keys[i - 1]! > keys[i]!) {
      keys.sort();
      break;
    }
  }
  let out = '{';
  let first = true;
  for (const k of keys) {
    const member = serialise(record[k], k);
    if (member === undefined) continue;
    out += first ? `${quoteKey(k)}:${member}` : `,${quoteKey(k)}:${member}`;
    first = false;
  }
  return `${out}}`;
}
