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

/**
 * The canonical JSON of an object whose keys are known in advance and given already in canonical order
 * (`keys`, sorted by UTF-16 code units, no repeats), with the values in the same order: the text
 * `canonicalJson` gives for that object, without building the object or sorting its keys on every call (the
 * hashes of events and links are objects of fixed keys, computed twice per event by a verify).
 */
export function canonicalFields(keys: CanonicalKeys, values: readonly unknown[]): string {
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.names.length; i++) {
    const member = serialise(values[i], keys.names[i]!);
    if (member === undefined) continue;
    out += first ? `${keys.quoted[i]}:${member}` : `,${keys.quoted[i]}:${member}`;
    first = false;
  }
  return `${out}}`;
}

/** A fixed list of keys in canonical order, quoted once. */
export interface CanonicalKeys {
  readonly names: readonly string[];
  readonly quoted: readonly string[];
}

export function canonicalKeys(...names: string[]): CanonicalKeys {
  for (let i = 1; i < names.length; i++) {
    if (!(names[i - 1]! < names[i]!)) throw new Error(`canonicalKeys: ${JSON.stringify(names[i])} is out of canonical order`);
  }
  return { names, quoted: names.map((k) => JSON.stringify(k)) };
}

const NEEDS_ESCAPE = /["\\\u0000-\u001f\ud800-\udfff]/;

/** A string's JSON text, exactly as JSON.stringify writes it (and so as canonicalJson writes a string). */
export function jsonString(s: string): string {
  return NEEDS_ESCAPE.test(s) ? JSON.stringify(s) : `"${s}"`;
}

/** A number's JSON text, exactly as canonicalJson writes it: non-finite numbers are null. */
export function jsonNumber(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
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
  // A string with nothing JSON escapes (a quote, a backslash, a control character, a surrogate, paired or
  // lone) is written as it is between quotes, as JSON.stringify would, without the call.
  if (typeof input === 'string') return NEEDS_ESCAPE.test(input) ? JSON.stringify(input) : `"${input}"`;
  // A finite number's JSON text is its ECMAScript string form (JSON.stringify's SerializeJSONProperty).
  if (typeof input === 'number') return Number.isFinite(input) ? String(input) : 'null';
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
