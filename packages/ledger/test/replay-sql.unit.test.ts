import { describe, expect, it } from 'vitest';
import { inlineParameters, isBlindWrite, literalOf, singleRowInsert } from '../src/replay-sql.js';

const quote = (s: string) => `'${s.replaceAll("'", "''")}'`;

describe('the replay writes values in as literals', () => {
  it('replaces $n outside strings, identifiers, dollar quotes and comments, and $10 is not $1 then 0', () => {
    const literals = Array.from({ length: 10 }, (_, i) => `L${i + 1}`);
    expect(inlineParameters(`update t set a = $1, b = '$2', "$3" = $10 -- $4\n where c = $$ $5 $$ and d = $tag$ $6 $tag$ /* $7 */ and e = $2`, literals)).toBe(
      `update t set a = L1, b = '$2', "$3" = L10 -- $4\n where c = $$ $5 $$ and d = $tag$ $6 $tag$ /* $7 */ and e = L2`,
    );
    expect(inlineParameters(`select 'it''s $1', E'\\' $1', $1`, ['X'])).toBe(`select 'it''s $1', E'\\' $1', X`);
  });

  it('sends as it was what it cannot tokenise or fill', () => {
    expect(inlineParameters(`select 'open $1`, ['X'])).toBeNull();
    expect(inlineParameters('select $2', ['X'])).toBeNull();
    expect(inlineParameters('select /* a /* b */ */ $1', ['X'])).toBeNull();
  });

  it('renders values as the driver sends them, and refuses binary ones', () => {
    expect(literalOf(null, quote)).toBe('NULL');
    expect(literalOf(undefined, quote)).toBe('NULL');
    expect(literalOf(5, quote)).toBe("'5'");
    expect(literalOf({ a: "o'k" }, quote)).toBe(`'{"a":"o''k"}'`);
    expect(literalOf(['x', 'y'], quote)).toBe(`'{"x","y"}'`);
    expect(literalOf(Buffer.from('x'), quote)).toBeNull();
  });

  it('defers only writes whose answer cannot be used, and merges only single-row inserts of $n', () => {
    expect(isBlindWrite('  insert into t (a) values ($1)')).toBe(true);
    expect(isBlindWrite('update t set a = 1 returning a')).toBe(false);
    expect(isBlindWrite('select pg_notify($1, $2)')).toBe(false);
    expect(isBlindWrite('with x as (select 1) insert into t select * from x')).toBe(false);
    expect(singleRowInsert('insert into t (a, b)\n values ($1, $2)\n on conflict (a) do nothing')).toEqual({ head: 'insert into t (a, b)\n values ', row: '($1, $2)', tail: '\n on conflict (a) do nothing' });
    expect(singleRowInsert('insert into t (a, b) values ($1, 1)')).toBeNull();
    expect(singleRowInsert('insert into t (a) values ($1) on conflict (a) do update set a = excluded.a')).toBeNull();
    expect(singleRowInsert('insert into t (a) select $1')).toBeNull();
  });
});
