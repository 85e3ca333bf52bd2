import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { MAX_JSON_DEPTH, NO_VOCABULARY, parseStrictJson, renderJsonPath, type StrictJsonError } from '@ito/contracts';

const example = readFileSync(new URL('../../../examples/manifest.json', import.meta.url), 'utf8');

function refused(text: string, opts?: { maxDepth?: number }): StrictJsonError {
  const r = parseStrictJson(text, opts);
  if (r.ok) throw new Error('expected a refusal');
  return r.error;
}

// Assembled at run time so the source carries no credential-shaped literal.
const PLANTED = 'AKIA' + 'IOSFODNN7EXAMPLE';
const slices = (s: string) => Array.from({ length: s.length - 5 }, (_, i) => s.slice(i, i + 6));

describe('parseStrictJson: valid JSON means what JSON.parse says it means', () => {
  it.each([
    ['the example manifest', example],
    ['scalars', '[0, -0, 1.5, -2e10, 3E-2, 1e400, true, false, null, ""]'],
    ['escapes', String.raw`{"s": "a\"b\\c\/d\b\f\n\r\t\u00e9\ud83d\ude00"}`],
    ['non-ASCII text', '{"name": "Itô ✓ 模型"}'],
    ['empty containers and whitespace', ' \t\r\n{ "a" : [ ] , "b" : { } , "c" : [ [ ] , { } ] } \n'],
    ['a lone surrogate escape', String.raw`["\ud800"]`],
    ['a top-level string', '"just text"'],
  ])('%s', (_label, text) => {
    expect(parseStrictJson(text)).toEqual({ ok: true, value: JSON.parse(text) });
  });
});

describe('parseStrictJson: one input, one meaning', () => {
  it.each([
    ['at the top', '{"a": 1, "b": 2, "a": 3}', [{ key: 'a', position: 3 }]],
    ['inside an object', '{"budget": {"ceiling_usd": 1, "ceiling_usd": 9}}', [{ key: 'budget', position: 1 }, { key: 'ceiling_usd', position: 2 }]],
    ['inside an array element', '{"data": [{"ref": "x"}, {"ref": "y", "ref": "z"}]}', [{ key: 'data', position: 1 }, 1, { key: 'ref', position: 2 }]],
    ['spelt differently with an escape', String.raw`{"ab": 1, "\u0061b": 2}`, [{ key: 'ab', position: 2 }]],
  ])('refuses a duplicate key %s, naming its path', (_label, text, path) => {
    const e = refused(text);
    expect(e.reason).toBe('duplicate_key');
    expect(e.path).toEqual(path);
  });

  it.each(['__proto__', 'constructor', 'prototype'])('refuses the key %s at any depth, and pollutes nothing', (key) => {
    for (const text of [`{"${key}": {"x": 1}}`, `{"eval": {"gates": {"pretrain": {"${key}": {"min": 1}}}}}`, `[{"a": [{"${key}": 1}]}]`]) {
      const e = refused(text);
      expect(e.reason).toBe('forbidden_key');
      expect(e.path.at(-1)).toMatchObject({ key });
    }
    expect(({} as Record<string, unknown>).x).toBeUndefined();
  });

  it('refuses U+0000 in keys and values, escaped or raw', () => {
    expect(refused(String.raw`{"id": "run_\u0000"}`).reason).toBe('nul_character');
    expect(refused(String.raw`{"\u0000": 1}`).reason).toBe('nul_character');
    expect(refused('{"id": "a\u0000b"}').reason).toBe('syntax');
  });
});

describe('parseStrictJson: bounded depth, no recursion', () => {
  const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

  it(`accepts ${MAX_JSON_DEPTH} levels and refuses ${MAX_JSON_DEPTH + 1}, saying the limit`, () => {
    expect(parseStrictJson(nested(MAX_JSON_DEPTH)).ok).toBe(true);
    const e = refused(nested(MAX_JSON_DEPTH + 1));
    expect(e.reason).toBe('too_deep');
    expect(e.message).toContain(`deeper than ${MAX_JSON_DEPTH} levels`);
    expect(e.path).toHaveLength(MAX_JSON_DEPTH);
    expect(refused('{"a":'.repeat(MAX_JSON_DEPTH + 1) + '1' + '}'.repeat(MAX_JSON_DEPTH + 1)).reason).toBe('too_deep');
  });

  it('refuses a million levels without overflowing the stack', () => {
    expect(refused(nested(1_000_000)).reason).toBe('too_deep');
  });

  it('parses 200,000 levels when allowed to, which a recursive parser could not', () => {
    const r = parseStrictJson(nested(200_000), { maxDepth: 200_000 });
    expect(r.ok).toBe(true);
  });
});

describe('parseStrictJson: syntax errors by line and column, never quoting the input', () => {
  it.each([
    ['an unquoted value', `{\n  "key": ${PLANTED}\n}`, 2, 10],
    ['a single-quoted string', `{'${PLANTED}': 1}`, 1, 2],
    ['a trailing comma', `{"a": "${PLANTED}",}`, 1, 30],
    ['a comment', `{"a": 1 // ${PLANTED}\n}`, 1, 9],
    ['an unterminated string', `{"a": "${PLANTED}`, 1, 7],
    ['content after the value', `{"a": 1} ${PLANTED}`, 1, 10],
    ['a leading zero', '{"n": 01}', 1, 8],
    ['a bad escape', `{"a": "${PLANTED}\\x"}`, 1, 28],
    ['a raw newline in a string', `{"a": "${PLANTED}\n"}`, 1, 28],
    ['NaN', '[NaN]', 1, 2],
    ['empty input', '', 1, 1],
    ['a byte order mark', '\ufeff{}', 1, 1],
    ['a missing colon', `{"${PLANTED}" 1}`, 1, 25],
  ])('%s', (_label, text, line, column) => {
    const e = refused(text);
    expect(e.reason).toBe('syntax');
    expect({ line: e.line, column: e.column }).toEqual({ line, column });
    expect(e.message).toMatch(new RegExp(`at line ${line}, column ${column}$`));
    for (const s of slices(PLANTED)) expect(e.message).not.toContain(s);
  });
});

describe('renderJsonPath', () => {
  it('prints a key only when it is in the vocabulary, anything else by its position', () => {
    const path = [{ key: 'data', position: 3 }, 0, { key: PLANTED, position: 2 }, { key: 'ref', position: 1 }];
    expect(renderJsonPath(path, new Set(['data', 'ref']))).toBe('$.data[0]["<key #2>"].ref');
    expect(renderJsonPath(path, NO_VOCABULARY)).toBe('$["<key #3>"][0]["<key #2>"]["<key #1>"]');
  });
});
