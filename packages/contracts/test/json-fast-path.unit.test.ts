import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FORBIDDEN_JSON_KEYS, MAX_JSON_DEPTH, parseStrictJson } from '@ito/contracts';
import { fastJson } from '../src/json-fast-path.js';

const fast = (text: string) => fastJson(text, MAX_JSON_DEPTH, FORBIDDEN_JSON_KEYS);
const gpus = Array.from({ length: 8 }, (_, index) => ({ index, healthy: true, temperature_c: 61.5, utilization: 0.97, memory_used_gb: 70.5, ecc_errors: 0 }));
const batch = JSON.stringify({ beats: Array.from({ length: 16 }, (_, i) => ({ credential: `ito_nc_${String(i).padStart(43, 'x')}`, tasks: [], gpus })) });
const manifest = JSON.stringify(JSON.parse(readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8')));
const nested = (depth: number) => '{"a":'.repeat(depth) + '1' + '}'.repeat(depth);

describe('the strict parser fast path (JSON.parse, kept only when certainly the same answer)', () => {
  it.each([
    ['a heartbeat batch as an agent sends it', batch],
    ['the example manifest, compact', manifest],
    ['escapes and non-ASCII text', String.raw`{"s":"a\"b\\c\/d\b\n\u00e9 ✓","n":[0,-0,1.5,1e400]}`],
    [`${MAX_JSON_DEPTH} levels`, nested(MAX_JSON_DEPTH)],
    ['a key ending in an escaped backslash', String.raw`{"a\\":1}`],
  ])('takes %s, with the value JSON.parse gives', (_label, text) => {
    expect(fast(text)).toEqual({ value: JSON.parse(text) });
  });

  it.each([
    // Each would be accepted by JSON.parse: the fast path must leave it to the strict parser, which refuses it.
    ['a duplicate key', '{"a":1,"a":2}', 'duplicate_key'],
    ['a duplicate key written with a space before its colon (the key count would match without the check)', '{"a" :1,"a":2}', 'duplicate_key'],
    ['a duplicate key with a tab before its colon', '{"a":1,"a"\t:2}', 'duplicate_key'],
    ['a duplicate key deep inside', '{"x":[{"y":{"b":1,"b":1}}]}', 'duplicate_key'],
    ['a duplicate key spelt with an escape', String.raw`{"ab":1,"\u0061b":2}`, 'duplicate_key'],
    ['a forbidden key', '{"x":{"__proto__":{"admin":true}}}', 'forbidden_key'],
    ['a constructor key', '{"constructor":1}', 'forbidden_key'],
    ['a prototype key', '[{"prototype":1}]', 'forbidden_key'],
    ['U+0000 in a string', String.raw`{"a":"x\u0000y"}`, 'nul_character'],
    [`${MAX_JSON_DEPTH + 1} levels`, nested(MAX_JSON_DEPTH + 1), 'too_deep'],
  ])('leaves %s to the strict parser', (_label, text, reason) => {
    expect(() => JSON.parse(text)).not.toThrow();
    expect(fast(text)).toBeUndefined();
    const strict = parseStrictJson(text);
    expect(strict.ok ? null : strict.error.reason).toBe(reason);
  });

  it('leaves a string holding an escaped quote and a colon to the strict parser, which accepts it alike', () => {
    const text = String.raw`{"a":"\":","b":1}`;
    expect(fast(text)).toBeUndefined();
    expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });

  it('leaves what is not JSON, and nesting past its walk, to the strict parser', () => {
    expect(fast('{"a":1,}')).toBeUndefined();
    expect(fast('\ufeff{}')).toBeUndefined();
    expect(fastJson('['.repeat(200_000) + ']'.repeat(200_000), 200_000, FORBIDDEN_JSON_KEYS)).toBeUndefined();
  });
});
