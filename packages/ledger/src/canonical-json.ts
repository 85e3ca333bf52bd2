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

function serialise(input: unknown, key: string): string | undefined {
  let value = input;
  if (value !== null && typeof value === 'object' && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON(k: string): unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'number':
      return Number.isFinite(value) ? JSON.stringify(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    case 'bigint':
      throw new TypeError('canonicalJson: BigInt has no JSON form');
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
  }
  if (value === null) return 'null';
  if (Array.isArray(value)) {
    return `[${value.map((item, i) => serialise(item, String(i)) ?? 'null').join(',')}]`;
  }
  // Boxed primitives serialise as their primitive, as JSON.stringify does.
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return serialise(value.valueOf(), key);
  const record = value as Record<string, unknown>;
  const parts: string[] = [];
  for (const k of Object.keys(record).sort()) {
    const member = serialise(record[k], k);
    if (member !== undefined) parts.push(`${JSON.stringify(k)}:${member}`);
  }
  return `{${parts.join(',')}}`;
}
