import type pg from 'pg';
import { describe, expect, it } from 'vitest';
import { createLedger, type AsyncProjection, type FoldedBatch, type StoredEvent } from '../src/index.js';
import { settled, sleep, usePool } from './harness.js';

const db = usePool();
const T = 'tenant-cu';

/** Logs every event it applies (no unique constraint: an event applied twice shows as two rows). */
function logger(name: string, opts: { slowMs?: number; failAt?: number; seen?: { n: number } } = {}): AsyncProjection {
  return {
    name,
    // Each test's own type: the tests share one database.
    handles: [`Counted_${name}`],
    async apply(client: pg.PoolClient, events: StoredEvent[]) {
      for (const e of events) {
        if (opts.failAt !== undefined && e.position >= opts.failAt) throw new Error('projection bug');
        await client.query(`insert into ${name}_applied (position) values ($1)`, [e.position]);
      }
      if (opts.seen) opts.seen.n += events.length;
      if (opts.slowMs) await sleep(opts.slowMs);
    },
  };
}

/**
 * The same log, as a projection with a `fold`: it folds outside the batch's transaction and carries how many
 * events it had folded through its batch. Each fold checks the contract it is given: every batch before the
 * previous one committed, the previous one either committed or carried (`broken` counts folds that saw neither),
 * and counts the folds that ran while the previous batch was still in flight (`early`).
 */
function folder(name: string, opts: { slowMs?: number; failAt?: number; failFoldAt?: number; seen?: { n: number }; early?: { n: number }; broken?: { n: number } } = {}): AsyncProjection {
  const p = logger(name, opts);
  return {
    ...p,
    async fold(db, events: StoredEvent[], carried): Promise<FoldedBatch> {
      if (opts.failFoldAt !== undefined && events.some((e) => e.position >= opts.failFoldAt!)) throw new Error('fold bug');
      const committed = Number((await db.query<{ n: string }>(`select count(*)::text as n from ${name}_applied`)).rows[0]!.n);
      const c = carried as { through: number; batch: number } | null;
      const before = c?.through ?? committed;
      if (c && committed !== c.through && committed !== c.through - c.batch) opts.broken && opts.broken.n++;
      if (c && committed === c.through - c.batch) opts.early && opts.early.n++;
      return { carry: { through: before + events.length, batch: events.length }, write: (client) => p.apply(client, events) };
    },
  };
}

async function setUp(name: string, streams: number): Promise<number[]> {
  await db.pool().query(`create table ${name}_applied (position bigint not null)`);
  const ledger = createLedger({ pool: db.pool() });
  for (let s = 0; s < streams; s++) {
    await ledger.append(`${name}-${s}`, [{ type: `Counted_${name}`, data: { s } }, { type: 'Ignored', data: {} }, { type: `Counted_${name}`, data: { s } }], { tenantId: T, expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
  const { rows } = await db.pool().query<{ p: string }>(`select position::text as p from events where type = $1 order by position`, [`Counted_${name}`]);
  return rows.map((r) => Number(r.p));
}

async function appliedOf(name: string): Promise<number[]> {
  const { rows } = await db.pool().query<{ p: string }>(`select position::text as p from ${name}_applied order by position`);
  return rows.map((r) => Number(r.p));
}

async function checkpointOf(name: string): Promise<number> {
  const { rows } = await db.pool().query<{ position: string }>(`select position::text from projection_checkpoints where name = $1`, [name]);
  return Number(rows[0]?.position ?? -1);
}

describe('catchUpProjection (reads the next batch while the current one is written)', () => {
  it('applies every handled event once, in order, batch after batch, and says it reached the head', async () => {
    const expected = await setUp('ca', 30);
    const ledger = createLedger({ pool: db.pool() });
    expect(await ledger.catchUpProjection(logger('ca'), { batchSize: 7 })).toEqual({ applied: 60, caughtUp: true });
    expect(await appliedOf('ca')).toEqual(expected);
    expect(await checkpointOf('ca')).toBe(expected.at(-1));
    expect(await ledger.catchUpProjection(logger('ca'), { batchSize: 7 })).toEqual({ applied: 0, caughtUp: true });
  });

  it('stops after the batch during which `stop` turned true, with the checkpoint at that batch, and the next call goes on from there', async () => {
    const expected = await setUp('cb', 20);
    const ledger = createLedger({ pool: db.pool() });
    const seen = { n: 0 };
    expect(await ledger.catchUpProjection(logger('cb', { seen }), { batchSize: 5, stop: () => seen.n >= 10 })).toEqual({ applied: 10, caughtUp: false });
    expect(await appliedOf('cb')).toEqual(expected.slice(0, 10));
    expect(await checkpointOf('cb')).toBe(expected[9]);
    expect(await ledger.catchUpProjection(logger('cb'), { batchSize: 5 })).toEqual({ applied: 30, caughtUp: true });
    expect(await appliedOf('cb')).toEqual(expected);
  });

  it('two catch-ups and a batch runner at once apply everything exactly once', async () => {
    const expected = await setUp('cc', 40);
    const ledger = createLedger({ pool: db.pool() });
    const p = logger('cc', { slowMs: 10 });
    const batches = async () => {
      while ((await ledger.runProjection(p, { batchSize: 3 })) > 0);
    };
    const [a, b] = await Promise.all([ledger.catchUpProjection(p, { batchSize: 4 }), ledger.catchUpProjection(p, { batchSize: 5 }), batches()]);
    expect(a!.caughtUp && b!.caughtUp).toBe(true);
    expect(await appliedOf('cc')).toEqual(expected);
    expect(await checkpointOf('cc')).toBe(expected.at(-1));
  });

  it('a failing apply rolls its batch back, keeps the batches before it, throws, and gives both connections back', async () => {
    const expected = await setUp('cd', 10);
    const ledger = createLedger({ pool: db.pool() });
    const pool = db.pool();
    await expect(ledger.catchUpProjection(logger('cd', { failAt: expected[8]! }), { batchSize: 4 })).rejects.toThrow('projection bug');
    expect(await appliedOf('cd')).toEqual(expected.slice(0, 8));
    expect(await checkpointOf('cd')).toBe(expected[7]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });
});

describe('catchUpProjection of a projection with a fold (folds the next batch while the current one is written)', () => {
  it('applies every handled event once, in order, folds while the batch before is in flight, carried or committed, never neither', async () => {
    const expected = await setUp('cf', 30);
    const ledger = createLedger({ pool: db.pool() });
    const [early, broken] = [{ n: 0 }, { n: 0 }];
    expect(await ledger.catchUpProjection(folder('cf', { slowMs: 20, early, broken }), { batchSize: 7 })).toEqual({ applied: 60, caughtUp: true });
    expect(await appliedOf('cf')).toEqual(expected);
    expect(await checkpointOf('cf')).toBe(expected.at(-1));
    expect(early.n).toBeGreaterThan(0);
    expect(broken.n).toBe(0);
    expect(await ledger.catchUpProjection(folder('cf'), { batchSize: 7 })).toEqual({ applied: 0, caughtUp: true });
  });

  it('stops after the batch during which `stop` turned true, that batch committed, and the next call goes on from there', async () => {
    const expected = await setUp('cg', 20);
    const ledger = createLedger({ pool: db.pool() });
    const seen = { n: 0 };
    expect(await ledger.catchUpProjection(folder('cg', { seen }), { batchSize: 5, stop: () => seen.n >= 10 })).toEqual({ applied: 10, caughtUp: false });
    expect(await appliedOf('cg')).toEqual(expected.slice(0, 10));
    expect(await checkpointOf('cg')).toBe(expected[9]);
    expect(await ledger.catchUpProjection(folder('cg'), { batchSize: 5 })).toEqual({ applied: 30, caughtUp: true });
    expect(await appliedOf('cg')).toEqual(expected);
  });

  it('two folding catch-ups, an applying one and a batch runner at once apply everything exactly once', async () => {
    const expected = await setUp('ch', 40);
    const ledger = createLedger({ pool: db.pool() });
    // Another runner's commits break the fold's view (it reads them): the compare-and-set then drops its batch.
    const p = folder('ch', { slowMs: 10 });
    const batches = async () => {
      while ((await ledger.runProjection(p, { batchSize: 3 })) > 0);
    };
    const results = await Promise.all([ledger.catchUpProjection(p, { batchSize: 4 }), ledger.catchUpProjection(p, { batchSize: 5 }), ledger.catchUpProjection(logger('ch', { slowMs: 10 }), { batchSize: 6 }), batches()]);
    expect(results.slice(0, 3).every((r) => r!.caughtUp)).toBe(true);
    expect(await appliedOf('ch')).toEqual(expected);
    expect(await checkpointOf('ch')).toBe(expected.at(-1));
  });

  it('a failing write rolls its batch back, a failing fold applies nothing of its batch: the batches before are kept, it throws, and the connections go back', async () => {
    const expected = await setUp('ci', 10);
    const ledger = createLedger({ pool: db.pool() });
    const pool = db.pool();
    await expect(ledger.catchUpProjection(folder('ci', { failAt: expected[8]! }), { batchSize: 4 })).rejects.toThrow('projection bug');
    expect(await appliedOf('ci')).toEqual(expected.slice(0, 8));
    expect(await checkpointOf('ci')).toBe(expected[7]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
    await expect(ledger.catchUpProjection(folder('ci', { failFoldAt: expected[16]! }), { batchSize: 4 })).rejects.toThrow('fold bug');
    expect(await appliedOf('ci')).toEqual(expected.slice(0, 16));
    expect(await checkpointOf('ci')).toBe(expected[15]);
    expect(pool.totalCount - pool.idleCount).toBe(0);
  });
});

describe('a payload-only projection', () => {
  it('is handed position, type, schema version, data and time (the rest empty) by the batch runner, the rebuild and both catch-ups alike', async () => {
    const expected = await setUp('cj', 3);
    const ledger = createLedger({ pool: db.pool() });
    const stored = (await ledger.readAll({ after: 0, limit: 10_000 })).filter((e) => e.type === 'Counted_cj');
    expect(stored.map((e) => e.position)).toEqual(expected);
    const want = stored.map((e) => ({ position: e.position, streamId: '', streamVersion: 0, tenantId: '', type: e.type, schemaVersion: e.schemaVersion, data: e.data, metadata: {}, recordedAt: e.recordedAt, transactionId: '' }));
    const seen: StoredEvent[] = [];
    const reset = async () => {
      seen.length = 0;
      await db.pool().query("delete from projection_checkpoints where name = 'cj'");
    };
    const base = { ...logger('cj'), payloadsOnly: true, reset: async () => undefined, async apply(_: pg.PoolClient, events: StoredEvent[]) { seen.push(...events); } };
    const folding: AsyncProjection = { ...base, fold: async (_db, events: StoredEvent[]) => ({ carry: null, write: async () => void seen.push(...events) }) };
    while ((await ledger.runProjection(base, { batchSize: 2 })) > 0);
    expect(seen).toEqual(want);
    await reset();
    await ledger.rebuild(base);
    expect(seen).toEqual(want);
    for (const p of [base, folding]) {
      await reset();
      await ledger.catchUpProjection(p, { batchSize: 2 });
      expect(seen).toEqual(want);
    }
  });
});

describe('a projection whose writes are all keyed', () => {
  it('writes every batch planned by indexes in the batch runner, the rebuild and both catch-ups, and leaves the pooled connections as they were', async () => {
    await setUp('ck', 3);
    const ledger = createLedger({ pool: db.pool() });
    const PLANS = "select current_setting('enable_seqscan') || current_setting('enable_hashjoin') || current_setting('enable_mergejoin') as s";
    const seen: string[] = [];
    const reset = async () => {
      seen.length = 0;
      await db.pool().query("delete from projection_checkpoints where name = 'ck'");
    };
    const plans = async (client: pg.PoolClient) => void seen.push((await client.query<{ s: string }>(PLANS)).rows[0]!.s);
    const keyed: AsyncProjection = { ...logger('ck'), keyedWrites: true, reset: async () => undefined, apply: plans };
    const folding: AsyncProjection = { ...keyed, fold: async () => ({ carry: null, write: plans }) };
    while ((await ledger.runProjection(keyed, { batchSize: 2 })) > 0);
    expect(seen).toEqual(['offoffoff', 'offoffoff', 'offoffoff']);
    await reset();
    await ledger.rebuild(keyed, { batchSize: 2 });
    expect(seen).toEqual(['offoffoff', 'offoffoff', 'offoffoff']);
    for (const p of [keyed, folding]) {
      await reset();
      await ledger.catchUpProjection(p, { batchSize: 2 });
      expect(seen).toEqual(['offoffoff', 'offoffoff', 'offoffoff']);
    }
    // Set for the batch's transaction only: every connection of the pool plans as it did before.
    const pool = db.pool();
    const clients = await Promise.all(Array.from({ length: pool.totalCount }, () => pool.connect()));
    try {
      for (const c of clients) expect((await c.query<{ s: string }>(PLANS)).rows[0]!.s).toBe('ononon');
    } finally {
      for (const c of clients) c.release();
    }
    // A projection that does not say so keeps the server's plans.
    await reset();
    await ledger.catchUpProjection({ ...folding, keyedWrites: false }, { batchSize: 2 });
    expect(seen).toEqual(['ononon', 'ononon', 'ononon']);
  });
});
