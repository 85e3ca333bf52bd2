import { createRequire } from 'node:module';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { copyPages } from '../src/chain-walk/copy-pages.js';
import { createLedger, verifyTenantChain } from '../src/index.js';
import { verifyChain } from '../src/verify.js';
import { settled, usePool } from './harness.js';

/**
 * Verify reads the links with one COPY … TO STDOUT in text format, which escapes a backslash, tab, newline,
 * carriage return, backspace, form feed and vertical tab, writes a null as \N, and passes other bytes as they
 * are. Stream ids, types, tenant ids and payloads holding every one of them must hash as they were written (a
 * field read wrongly is a false "does not match"), a tenant id with a quote must not break the statement, and a
 * walk that stops at its first finding must leave the connection it used fit for the next query.
 */
const db = usePool();
const ODD = ['tab\there', 'back\\slash', 'new\nline', 'cr\rlf', 'bs\bff\fvt\v', '\\N', 'ctl\u0001\u001f', '', 'é"\'€😀'];
const TENANT = "ten'\\odd\t";

let positions: number[];
beforeAll(async () => {
  const ledger = createLedger({ pool: db.pool() });
  for (const [i, s] of ODD.entries()) {
    const data = { [s || 'empty']: s, list: [s, i, { nested: s }], n: i / 3 };
    await ledger.append(`stream-${s}-${i}`, [{ type: `Type${s}`, data, metadata: { actor: s } }], { tenantId: TENANT, expectedVersion: 'no_stream' });
    await ledger.append(`plain-${i}`, [{ type: 'Plain', data: { i } }], { tenantId: 'ten-plain', expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
  await ledger.sealPending();
  const { rows } = await db.pool().query<{ position: string }>('select position::text as position from tenant_chain where tenant_id = $1 order by tenant_seq', [TENANT]);
  positions = rows.map((r) => Number(r.position));
});

describe('verify through COPY', () => {
  it("parses recorded_at with the driver's own parser, loaded without the driver", () => {
    // pages.ts takes pg-types from pg's own folder: the very module node-pg reads timestamptz with.
    const fromPg = createRequire(createRequire(import.meta.url).resolve('pg'))('pg-types') as typeof pg.types;
    expect(fromPg).toBe(pg.types);
    expect(fromPg.getTypeParser(1184, 'text')).toBe(pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text'));
  });

  it('hashes every field as written, whatever characters COPY escapes in it, on one thread and on two', async () => {
    expect(positions).toHaveLength(ODD.length);
    for (const threads of [0, 2]) {
      expect(await verifyChain(db.pool(), { threads, pageSize: 4 }), `threads ${threads}`).toMatchObject({ ok: true, checked: 2 * ODD.length });
      expect(await verifyTenantChain(db.pool(), TENANT, { threads, pageSize: 4 })).toMatchObject({ ok: true, checked: ODD.length });
    }
  });

  it('still names an altered stream id that holds escaped characters', async () => {
    const target = positions[3]!;
    const { rows } = await db.pool().query<{ stream_id: string }>('select stream_id from events where position = $1', [target]);
    await db.pool().query('update events set stream_id = $2 where position = $1', [target, `${rows[0]!.stream_id}\t`]);
    try {
      expect(await verifyTenantChain(db.pool(), TENANT, { threads: 2, pageSize: 2 })).toEqual({
        ok: false,
        checked: 3,
        first_bad_position: target,
        reason: `the event at position ${target} does not match its sealed hash`,
      });
      expect(await verifyChain(db.pool(), { threads: 0 })).toMatchObject({ ok: false, firstBadPosition: target });
    } finally {
      await db.pool().query('update events set stream_id = $2 where position = $1', [target, rows[0]!.stream_id]);
    }
    expect((await verifyTenantChain(db.pool(), TENANT)).ok).toBe(true);
  });

  it('leaves the connection fit for the next query after stopping at an early finding', async () => {
    const target = positions[0]!;
    await db.pool().query(`update events set data = jsonb_set(data, '{n}', '99') where position = $1`, [target]);
    try {
      // The caller's own client: what is left of the COPY is read and dropped, and the client answers again.
      const client = await db.pool().connect();
      try {
        expect(await verifyTenantChain(client, TENANT, { threads: 0, pageSize: 1 })).toMatchObject({ ok: false, checked: 0, first_bad_position: target });
        expect((await client.query<{ one: number }>('select 1 as one')).rows).toEqual([{ one: 1 }]);
      } finally {
        client.release();
      }
      // A connection taken from the pool: given back (destroyed when the COPY was cut short), none left checked out.
      expect(await verifyTenantChain(db.pool(), TENANT, { threads: 2, pageSize: 1 })).toMatchObject({ ok: false, first_bad_position: target });
      expect(db.pool().totalCount - db.pool().idleCount).toBe(0);
    } finally {
      await db.pool().query(`update events set data = jsonb_set(data, '{n}', '0') where position = $1`, [target]);
    }
    expect((await verifyTenantChain(db.pool(), TENANT)).ok).toBe(true);
  });

  it("reads with no parallel workers, and gives the session's setting back, on its own connection and on the caller's", async () => {
    // One row, the setting the COPY statement ran under; its first column is the row's number, as a walk's are.
    const setting = (after: number, limit: number) => `select 1, current_setting('max_parallel_workers_per_gather') where ${after} = 0 limit ${limit}`;
    const readAll = async (source: Awaited<ReturnType<typeof copyPages>>) => {
      const texts: string[] = [];
      for (let page = await source.next(); page; page = await source.next()) texts.push(Buffer.from(page.bytes).toString());
      await source.close();
      return texts;
    };
    const single = new pg.Pool({ connectionString: db.url(), max: 1 });
    try {
      await single.query('set max_parallel_workers_per_gather = 3');
      expect(await readAll(await copyPages(single, setting, 0, 10))).toEqual(['1\t0\n']);
      expect((await single.query('show max_parallel_workers_per_gather')).rows).toEqual([{ max_parallel_workers_per_gather: '3' }]);
      expect(single.totalCount - single.idleCount).toBe(0);
    } finally {
      await single.end();
    }
    const client = await db.pool().connect();
    try {
      await client.query('set max_parallel_workers_per_gather = 5');
      expect(await readAll(await copyPages(client, setting, 0, 10))).toEqual(['1\t0\n']);
      expect((await client.query('show max_parallel_workers_per_gather')).rows).toEqual([{ max_parallel_workers_per_gather: '5' }]);
    } finally {
      await client.query('reset max_parallel_workers_per_gather');
      client.release();
    }
  });
});
