import { describe, expect, it } from 'vitest';
import { canonicalFields, canonicalJson, canonicalKeys, sha256Hex } from '../src/canonical-json.js';
import { contentHash } from '../src/hashing.js';

describe('canonicalJson', () => {
  it('sorts keys at every depth and writes no whitespace', () => {
    expect(canonicalJson({ b: 1, a: { d: [3, { z: true, y: null }], c: 'x' } })).toBe('{"a":{"c":"x","d":[3,{"y":null,"z":true}]},"b":1}');
  });

  it('sorts keys by UTF-16 code units, as RFC 8785 requires', () => {
    // "\u20ac" (euro) sorts before "\ud83d\ude00" (emoji, a surrogate pair) and after "z".
    expect(canonicalJson({ '\u{1F600}': 1, '\u20ac': 2, z: 3, A: 4 })).toBe('{"A":4,"z":3,"\u20ac":2,"\u{1F600}":1}');
  });

  it('formats numbers as ECMAScript does', () => {
    expect(canonicalJson([1.0, -0, 1e21, 0.1, 1e-7, 123456789012345680000])).toBe('[1,0,1e+21,0.1,1e-7,123456789012345680000]');
  });

  it('gives the same text for a value and its JSON round trip', () => {
    const value = { when: new Date('2024-01-02T03:04:05.678Z'), gone: undefined, list: [undefined, Number.NaN, 'é\n"'], n: 2 };
    expect(canonicalJson(value)).toBe(canonicalJson(JSON.parse(JSON.stringify(value))));
    expect(canonicalJson(value)).toBe('{"list":[null,null,"é\\n\\""],"n":2,"when":"2024-01-02T03:04:05.678Z"}');
  });

  it('refuses values JSON cannot hold', () => {
    expect(() => canonicalJson(10n)).toThrow(TypeError);
    expect(() => canonicalJson(undefined)).toThrow(TypeError);
  });

  it('is independent of key insertion order', () => {
    expect(canonicalJson({ x: 1, y: [1, 2] })).toBe(canonicalJson({ y: [1, 2], x: 1 }));
  });
});

describe('strings', () => {
  it('writes every string as JSON.stringify does, escaped or not', () => {
    const strings = ['plain', '', 'quote"', 'back\\slash', 'tab\t', 'nul\u0000', 'unit\u001f', 'del\u007f', 'é€', '\u{1F600}', 'lone\ud800', 'lone\udfff', '\u2028'];
    for (const s of strings) expect(canonicalJson(s), JSON.stringify(s)).toBe(JSON.stringify(s));
    expect(canonicalJson({ [strings[2]!]: strings[10] })).toBe(`{${JSON.stringify(strings[2])}:${JSON.stringify(strings[10])}}`);
  });
});

describe('contentHash', () => {
  const event = (recordedAt: Date) => ({ tenantId: 't', streamId: 's', type: 'T', schemaVersion: 1, data: { a: 1 }, metadata: {}, recordedAt });
  const expected = (iso: string) =>
    sha256Hex(canonicalJson({ tenantId: 't', streamId: 's', type: 'T', schemaVersion: 1, data: { a: 1 }, metadata: {}, recordedAt: iso }));

  it('hashes the instant the Date holds when hashed, even the same Date changed in place', () => {
    const at = new Date('2024-01-02T03:04:05.678Z');
    expect(contentHash(event(at))).toBe(expected('2024-01-02T03:04:05.678Z'));
    expect(contentHash(event(new Date(at)))).toBe(expected('2024-01-02T03:04:05.678Z'));
    at.setTime(at.getTime() + 1);
    expect(contentHash(event(at))).toBe(expected('2024-01-02T03:04:05.679Z'));
    expect(() => contentHash(event(new Date(Number.NaN)))).toThrow(RangeError);
  });
});

describe('canonicalFields', () => {
  const keys = canonicalKeys('data', 'gone', 'n', 'when', 'z');
  it('gives the text canonicalJson gives for the same object', () => {
    const cases: unknown[][] = [
      [{ b: [1, -0, 1e21, Number.NaN], a: 'é\n"' }, undefined, 2.5, new Date('2024-01-02T03:04:05.678Z'), null],
      [null, () => 1, Number.POSITIVE_INFINITY, '2024', { toJSON: (k: string) => `key ${k}` }],
      [[undefined, true], 'x', 0, false, []],
    ];
    for (const values of cases) {
      const object = Object.fromEntries(keys.names.map((k, i) => [k, values[i]]));
      expect(canonicalFields(keys, values)).toBe(canonicalJson(object));
    }
  });

  it('refuses keys given out of canonical order or twice', () => {
    expect(() => canonicalKeys('b', 'a')).toThrow(/out of canonical order/);
    expect(() => canonicalKeys('a', 'a')).toThrow(/out of canonical order/);
    // UTF-16 code units: "Z" (0x5a) sorts before "a" (0x61).
    expect(canonicalKeys('Z', 'a').quoted).toEqual(['"Z"', '"a"']);
  });
});

describe('sha256Hex', () => {
  it('hashes UTF-8 text to lowercase hex', () => {
    expect(sha256Hex('abc')).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
  });
});
