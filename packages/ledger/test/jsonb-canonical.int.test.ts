import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../src/canonical-json.js';
import { canonicalJsonb } from '../src/chain-walk/jsonb-canonical.js';
import { usePool } from './harness.js';

/**
 * A walk canonicalises jsonb's own text (keys shortest first, a space after colons and commas, numbers as
 * stored) without JSON.parse where it can. Its answer must be canonicalJson(JSON.parse(text)) for every text,
 * the writer's hash input: checked here on the text PostgreSQL itself writes for adversarial values, and on
 * texts jsonb would not write (which must go the slow way, not be rewritten wrongly).
 */
const db = usePool(2);

/** A small seeded generator, so a failure names a value that can be made again. */
function generator(seed: number) {
  let s = seed >>> 0;
  const next = () => ((s = (Math.imul(s, 1664525) + 1013904223) >>> 0) / 2 ** 32);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;
  const STRINGS = ['', 'a', 'b', 'ab', 'a b', 'a!', 'A', 'z', 'é', '€', '😀', '\uff61', 'quote"', 'back\\slash', 'tab\t', 'nl\n', 'ctl\u0001', '\u2028', 'toJSON', '__proto__'];
  const NUMBERS = [0, -1, 1, 7, 2.5, -0.5, 0.1, 1e21, 1e-7, 123456789012345680000, 9007199254740993, 2 ** 53 - 1, 1.5e300, -2.25e-300, 100, 1e15, 1e16];
  const value = (depth: number): unknown => {
    const kind = depth > 3 ? Math.floor(next() * 4) : Math.floor(next() * 7);
    if (kind === 0) return pick(STRINGS);
    if (kind === 1) return pick(NUMBERS);
    if (kind === 2) return pick([true, false, null]);
    if (kind === 3) return pick(STRINGS) + pick(STRINGS);
    if (kind === 4) return Array.from({ length: Math.floor(next() * 4) }, () => value(depth + 1));
    const o: Record<string, unknown> = {};
    for (let i = Math.floor(next() * 6); i > 0; i--) o[pick(STRINGS) + (next() < 0.5 ? pick(STRINGS) : '')] = value(depth + 1);
    return o;
  };
  return value;
}

describe('canonical JSON from jsonb text', () => {
  it('is canonicalJson of the parsed value, for the text PostgreSQL writes', async () => {
    const value = generator(29);
    const values = Array.from({ length: 600 }, () => value(0));
    // Keys holding a space or "!" (which sort below the quote): compared as keys, not as quoted texts.
    values.push({ b: 4, a: 1, 'a b': 2, 'a!': 3, 'a!b': { ' ': 1, '!': 2, '': 3 } }, { b: 1, a: 2, aa: { '': [], ' ': {} }, 'a b': 1, 'a!': 2, 'a"': 3 }, { '\uff61': 1, '😀': 2, z: 3 }, [1.0, 2.50, 1e2, -0], 'top', 12, null, { big: 12345678901234567890 });
    const { rows } = await db.pool().query<{ t: string }>('select (x::jsonb)::text as t from unnest($1::text[]) with ordinality as u(x, i) order by i', [values.map((v) => JSON.stringify(v))]);
    expect(rows).toHaveLength(values.length);
    for (const [i, { t }] of rows.entries()) expect(canonicalJsonb(t), t).toBe(canonicalJson(values[i]));
    // Numbers as jsonb keeps them when written with another form than ECMAScript's.
    const { rows: numbers } = await db.pool().query<{ t: string }>(`select '{"n": [1.0, 2.50, 1E+2, -0, 0.0000001, 100000000000000000000000, 1e400]}'::jsonb::text as t`);
    expect(numbers[0]!.t).toContain('2.50');
    expect(canonicalJsonb(numbers[0]!.t)).toBe(canonicalJson(JSON.parse(numbers[0]!.t)));
  });

  it('gives texts jsonb would not write to JSON.parse, and refuses what JSON.parse refuses', () => {
    const texts = ['{"b":1,"a":2}', '{ "a": 1}', '{"a" : 1}', '[1 , 2]', '{"a": 1, "a": 2}', '{"b": 1, "a": 2, "a": 3}', '"x\\"y"', '{"a\\u0062": 1, "ab": 2}', ' 1', '[1,2]', '{"a": [1, {"c": 1, "b": 2}]}'];
    for (const t of texts) expect(canonicalJsonb(t), t).toBe(canonicalJson(JSON.parse(t)));
    for (const t of ['', '{', '{"a": }', '[1, 2', 'tru', '"open', '{"a": 1}x', '+1', '0x10', 'NaN', '[01]', '1.', '[1, 2,]', '{"a": 1,}', '-']) expect(() => canonicalJsonb(t), t).toThrow(SyntaxError);
  });

  it('sorts objects too large for the insertion sort, and leaves their repeated keys to JSON.parse', () => {
    const keys = Array.from({ length: 100 }, (_, i) => `k${(i * 37) % 100}`);
    const text = `{${keys.map((k, i) => `"${k}": ${i}`).join(', ')}}`;
    expect(canonicalJsonb(text)).toBe(canonicalJson(JSON.parse(text)));
    const repeated = `{${[...keys, 'k5'].map((k, i) => `"${k}": ${i}`).join(', ')}}`;
    expect(canonicalJsonb(repeated)).toBe(canonicalJson(JSON.parse(repeated)));
  });
});
