import { describe, expect, it } from 'vitest';
import { numberArrayLiteral, textArrayLiteral } from '../src/projections/array-literals.js';
import { usePool } from '../../../test/support/db.js';

const db = usePool(2);

/** What PostgreSQL reads a literal back as, through the same casts the projection's writes use. */
async function readBack(literal: string, type: string): Promise<unknown[]> {
  const { rows } = await db.pool().query<{ a: unknown[] }>(`select $1::${type} as a`, [literal]);
  return rows[0]!.a;
}

describe('array literals of the projection writes', () => {
  it('read back as the same strings, whatever they hold, and nulls as nulls', async () => {
    const values = ['run-1', '', 'NULL', 'a,b', '{x}', 'say "hi"', 'back\\slash', '\\"', ' spaced ', 'tab\there', 'é ✓ 𝄞', null];
    expect(await readBack(textArrayLiteral(values), 'text[]')).toEqual(values);
    expect(await readBack(textArrayLiteral([]), 'text[]')).toEqual([]);
  });

  it('carry JSON documents with their quotes and escapes intact', async () => {
    const docs = [{ run_id: 'r"1', s: [[1, 2, 'busy']], note: 'a\\b\n', k: null }, { empty: {} }];
    const { rows } = await db.pool().query<{ a: unknown[] }>('select $1::jsonb[] as a', [textArrayLiteral(docs.map((d) => JSON.stringify(d)))]);
    expect(rows[0]!.a).toEqual(docs);
  });

  it('read back numbers as the numbers given, integers and floats, and refuse what a bigint cannot hold', async () => {
    const ints = [0, -1, 1_700_000_000_000, Number.MAX_SAFE_INTEGER, null];
    expect((await readBack(numberArrayLiteral(ints), 'bigint[]')).map((v) => (v === null ? null : Number(v)))).toEqual(ints);
    const floats = [0.1, -2.5e-7, 123456.789, 1e21, null];
    expect(await readBack(numberArrayLiteral(floats), 'float8[]')).toEqual(floats);
    await expect(readBack(numberArrayLiteral([Number.NaN]), 'bigint[]')).rejects.toThrow();
  });
});
