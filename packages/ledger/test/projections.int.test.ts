import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLedger, type AsyncProjection, type InlineProjection, type StoredEvent } from '../src/index.js';
import { settled, sleep, usePool } from './harness.js';

const db = usePool();
const T = 'tenant-p';

/** Counts events per stream; every apply also logs each event it saw, so a double apply is visible. */
function counter(name: string, opts: { slowMs?: number } = {}): AsyncProjection {
  return {
    name,
    handles: ['Counted'],
    async apply(client: pg.PoolClient, events: StoredEvent[]) {
      for (const e of events) {
        await client.query(
          `insert into ${name}_counts (stream_id, n) values ($1, 1) on conflict (stream_id) do update set n = ${name}_counts.n + 1`,
          [e.streamId],
        );
        await client.query(`insert into ${name}_applied (position) values ($1)`, [e.position]);
      }
      if (opts.slowMs) await sleep(opts.slowMs);
    },
    async reset(client: pg.PoolClient) {
      await client.query(`truncate ${name}_counts, ${name}_applied`);
    },
  };
}

async function createTables(name: string): Promise<void> {
  await db.pool().query(`create table ${name}_counts (stream_id text primary key, n int not null)`);
  // No unique constraint on purpose: a batch applied twice would show up as duplicate rows, not an error.
  await db.pool().query(`create table ${name}_applied (position bigint not null)`);
}

async function snapshot(name: string): Promise<Array<{ stream_id: string; n: number }>> {
  const { rows } = await db.pool().query(`select stream_id, n from ${name}_counts order by stream_id`);
  return rows;
}

async function seed(prefix: string, streams: number): Promise<void> {
  const ledger = createLedger({ pool: db.pool() });
  for (let s = 0; s < streams; s++) {
    await ledger.append(`${prefix}-${s}`, [{ type: 'Counted', data: { s } }, { type: 'Ignored', data: {} }, { type: 'Counted', data: { s } }], { tenantId: T, expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
}

describe('async projections', () => {
  it('two concurrent runners never apply a batch twice, and together apply everything once', async () => {
    await createTables('pa');
    await seed('pa', 40);
    const ledger = createLedger({ pool: db.pool() });
    const p = counter('pa', { slowMs: 15 });
    const runner = async (): Promise<number> => {
      let total = 0;
      for (let idle = 0; idle < 3; ) {
        const n = await ledger.runProjection(p, { batchSize: 7 });
        total += n;
        idle = n === 0 ? idle + 1 : 0;
      }
      return total;
    };
    const [a, b] = await Promise.all([runner(), runner()]);
    expect(a + b).toBe(80);
    const { rows } = await db.pool().query<{ dupes: number; n: number }>(
      'select count(*)::int as n, (count(*) - count(distinct position))::int as dupes from pa_applied',
    );
    expect(rows[0]).toEqual({ n: 80, dupes: 0 });
    const { rows: cp } = await db.pool().query<{ position: string }>(`select position from projection_checkpoints where name = 'pa'`);
    const last = await db.pool().query<{ position: string }>(`select max(position) as position from events where type = 'Counted' and stream_id like 'pa-%'`);
    expect(cp[0]!.position).toBe(last.rows[0]!.position);
  });

  it('rebuild from 0 gives the same state as incremental runs', async () => {
    await createTables('pb');
    await seed('pb', 10);
    const ledger = createLedger({ pool: db.pool() });
    const p = counter('pb');
    while ((await ledger.runProjection(p, { batchSize: 4 })) > 0);
    await seed('pb-more', 5);
    while ((await ledger.runProjection(p, { batchSize: 4 })) > 0);
    const incremental = await snapshot('pb');
    expect(incremental.length).toBeGreaterThanOrEqual(55);

    await db.pool().query(`update pb_counts set n = n + 100`); // drift the projection
    const replayed = await ledger.rebuild(p, { batchSize: 9 });
    expect(await snapshot('pb')).toEqual(incremental);
    expect(replayed).toBe(incremental.reduce((a, r) => a + r.n, 0));
    // The checkpoint sits at the end, so the next run has nothing to do.
    expect(await ledger.runProjection(p)).toBe(0);
  });

  it('a failing apply rolls back the checkpoint move with it', async () => {
    await createTables('pc');
    await seed('pc', 2);
    const ledger = createLedger({ pool: db.pool() });
    const failing: AsyncProjection = { ...counter('pc'), apply: async () => Promise.reject(new Error('projection bug')) };
    await expect(ledger.runProjection(failing)).rejects.toThrow('projection bug');
    const { rows } = await db.pool().query<{ position: string }>(`select position from projection_checkpoints where name = 'pc'`);
    expect(rows[0]!.position).toBe('0');
    expect(await ledger.runProjection(counter('pc'))).toBeGreaterThan(0);
  });
});

describe('inline projections', () => {
  it('run in the appending transaction, only for the types they handle, and roll back with it', async () => {
    await db.pool().query('create table run_state (stream_id text primary key, last_type text not null, version int not null)');
    const state: InlineProjection = {
      name: 'run_state',
      handles: ['RunReserved', 'RunConfirmed'],
      async apply(client, events) {
        for (const e of events) {
          await client.query(
            `insert into run_state values ($1, $2, $3) on conflict (stream_id) do update set last_type = excluded.last_type, version = excluded.version`,
            [e.streamId, e.type, e.streamVersion],
          );
        }
      },
    };
    const ledger = createLedger({ pool: db.pool(), inlineProjections: [state] });
    await ledger.append('ri-1', [{ type: 'RunReserved', data: {} }], { tenantId: T, expectedVersion: 'no_stream' });
    const readOwnWrite = await ledger.transaction(async (tx) => {
      await tx.append('ri-1', [{ type: 'RunConfirmed', data: {} }, { type: 'Unrelated', data: {} }], { tenantId: T, expectedVersion: 1 });
      const { rows } = await tx.client.query('select last_type, version from run_state where stream_id = $1', ['ri-1']);
      return rows[0];
    });
    expect(readOwnWrite).toEqual({ last_type: 'RunConfirmed', version: 2 });

    await expect(
      ledger.transaction(async (tx) => {
        await tx.append('ri-2', [{ type: 'RunReserved', data: {} }], { tenantId: T, expectedVersion: 'no_stream' });
        throw new Error('refused');
      }),
    ).rejects.toThrow('refused');
    const { rows } = await db.pool().query('select stream_id from run_state order by stream_id');
    expect(rows).toEqual([{ stream_id: 'ri-1' }]);
  });
});
