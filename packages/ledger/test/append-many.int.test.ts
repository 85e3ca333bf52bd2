import pg from 'pg';
import { ItoError } from '@ito/contracts';
import { describe, expect, it } from 'vitest';
import { createLedger, MAX_STREAMS_PER_APPEND, VersionConflictError, type InlineProjection, type StreamRule } from '../src/index.js';
import { contentHash } from '../src/hashing.js';
import { usePool } from './harness.js';

/**
 * The multi-stream append: several streams, each with its own expected version, in one statement. It means what the
 * same appends one after another mean (the same conflicts, the same errors, each stream's rule and projections),
 * except that a refusal of any stream writes nothing of any stream.
 */
const db = usePool();
const T = 'tenant-m';
const ev = (type: string, data: Record<string, unknown> = {}) => ({ type, data });
let n = 0;
/** A stream id of this test's own. */
const fresh = (name: string) => `${name}-${++n}`;

async function countStreams(...streamIds: string[]): Promise<number> {
  const { rows } = await db.pool().query<{ n: number }>('select count(*)::int as n from events where stream_id = any($1)', [streamIds]);
  return rows[0]!.n;
}

/** Counts the `query` calls (round trips) made on connections of `pool` while `body` runs. */
async function roundTrips(pool: pg.Pool, body: () => Promise<unknown>): Promise<number> {
  const client = await pool.connect();
  let count = 0;
  const query = client.query.bind(client) as (...a: unknown[]) => unknown;
  (client as unknown as { query: (...a: unknown[]) => unknown }).query = (...a: unknown[]) => {
    count++;
    return query(...a);
  };
  client.release();
  const idle = pool.idleCount;
  if (idle !== 1) throw new Error('the round-trip count needs a pool of one connection');
  await body();
  return count;
}

/** Until some backend of this database waits on a lock (the racing append behind the holder's row). */
async function waitForLockWait(): Promise<void> {
  for (let i = 0; i < 200; i++) {
    const { rows } = await db.pool().query<{ n: number }>(
      `select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`,
    );
    if (rows[0]!.n > 0) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error('the racing append never waited on the lock');
}

describe('appendMany: several streams in one statement', () => {
  it('writes every stream at its expected version in one transaction, in the order given', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [a, b, c] = [fresh('m-a'), fresh('m-b'), fresh('m-c')];
    await ledger.append(b, [ev('B1'), ev('B2')], { tenantId: T, expectedVersion: 'no_stream' });
    await ledger.append(c, [ev('C1')], { tenantId: T, expectedVersion: 'no_stream' });
    const [ra, rb, rc] = await ledger.appendMany([
      { streamId: a, events: [ev('A1', { x: 1 }), ev('A2')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
      { streamId: b, events: [ev('B3')], opts: { tenantId: T, expectedVersion: 2 } },
      { streamId: c, events: [ev('C2'), ev('C3')], opts: { tenantId: T, expectedVersion: 'any' } },
    ]);
    expect(ra.events.map((e) => [e.streamId, e.streamVersion, e.type])).toEqual([
      [a, 1, 'A1'],
      [a, 2, 'A2'],
    ]);
    expect([ra.nextExpectedVersion, rb.nextExpectedVersion, rc.nextExpectedVersion]).toEqual([2, 3, 3]);
    const all = [...ra.events, ...rb.events, ...rc.events];
    // One statement: one transaction, positions in the order given.
    expect(new Set(all.map((e) => e.transactionId)).size).toBe(1);
    expect(all.map((e) => e.position)).toEqual([...all.map((e) => e.position)].sort((x, y) => x - y));
    expect((await ledger.readStream(c)).map((e) => e.type)).toEqual(['C1', 'C2', 'C3']);
    // Stored as a single append stores it: the content hash covers the stream, the tenant, the data and the clock.
    const { rows } = await db.pool().query<{ content_hash: string }>('select content_hash from events where stream_id = $1 and stream_version = 1', [a]);
    const stored = ra.events[0]!;
    expect(rows[0]!.content_hash).toBe(
      contentHash({ tenantId: T, streamId: a, type: 'A1', schemaVersion: 1, data: { x: 1 }, metadata: {}, recordedAt: stored.recordedAt }),
    );
  });

  it('is one round trip on its own, and one statement inside a transaction', async () => {
    const pg1 = new pg.Pool({ connectionString: db.url(), max: 1 });
    try {
      const ledger = createLedger({ pool: pg1 });
      const two = () => [
        { streamId: fresh('rt-a'), events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' as const } },
        { streamId: fresh('rt-b'), events: [ev('B'), ev('C')], opts: { tenantId: T, expectedVersion: 'any' as const } },
      ];
      expect(await roundTrips(pg1, () => ledger.appendMany(two()))).toBe(1);
      // begin, the append, commit.
      expect(await roundTrips(pg1, () => ledger.transaction((tx) => tx.appendMany(two())))).toBe(3);
    } finally {
      await pg1.end();
    }
  });

  it('refuses a stream that already exists (no_stream) by name, and writes nothing of the other streams', async () => {
    const ledger = createLedger({ pool: db.pool() });
    // A stream id with the characters the error's key detail uses, to show the refused stream is named right.
    const [a, taken] = [fresh('m-new'), fresh('m-taken, (x), 1')];
    await ledger.append(taken, [ev('X')], { tenantId: T, expectedVersion: 'no_stream' });
    const err = await ledger
      .appendMany([
        { streamId: a, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        { streamId: taken, events: [ev('Y')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
      ])
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VersionConflictError);
    expect(err).toMatchObject({ streamId: taken, expected: 'no_stream', actual: 1 });
    expect(await countStreams(a)).toBe(0);
    expect(await countStreams(taken)).toBe(1);
  });

  it('refuses a stale exact version, and names the first refused stream when several are', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [a, b, c] = [fresh('m-x'), fresh('m-y'), fresh('m-z')];
    await ledger.append(b, [ev('B1'), ev('B2')], { tenantId: T, expectedVersion: 'no_stream' });
    await ledger.append(c, [ev('C1'), ev('C2')], { tenantId: T, expectedVersion: 'no_stream' });
    const err = await ledger
      .appendMany([
        { streamId: a, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        { streamId: b, events: [ev('B3')], opts: { tenantId: T, expectedVersion: 1 } },
        { streamId: c, events: [ev('C3')], opts: { tenantId: T, expectedVersion: 5 } },
      ])
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ name: 'VersionConflictError', streamId: b, expected: 1, actual: 2 });
    expect(await countStreams(a, b, c)).toBe(4);
  });

  it("treats another tenant's stream as a conflict under any and exact, and writes nothing", async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [mine, theirs] = [fresh('m-mine'), fresh('m-theirs')];
    await ledger.append(theirs, [ev('T1')], { tenantId: 'tenant-other', expectedVersion: 'no_stream' });
    for (const expectedVersion of ['any', 1] as const) {
      const err = await ledger
        .appendMany([
          { streamId: mine, events: [ev('M')], opts: { tenantId: T, expectedVersion: 'any' } },
          { streamId: theirs, events: [ev('T2')], opts: { tenantId: T, expectedVersion } },
        ])
        .catch((e: unknown) => e);
      expect(err).toMatchObject({ name: 'VersionConflictError', streamId: theirs, actual: 0 });
    }
    expect(await countStreams(mine)).toBe(0);
    expect(await countStreams(theirs)).toBe(1);
  });

  it('lets exactly one of many racing writers win, and the losers leave none of their other streams behind', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const shared = fresh('m-shared');
    await ledger.append(shared, [ev('S1')], { tenantId: T, expectedVersion: 'no_stream' });
    const own = Array.from({ length: 10 }, () => fresh('m-own'));
    const results = await Promise.allSettled(
      own.map((streamId, i) =>
        ledger.appendMany([
          { streamId, events: [ev('O', { i })], opts: { tenantId: T, expectedVersion: 'no_stream' } },
          { streamId: shared, events: [ev('S2', { i })], opts: { tenantId: T, expectedVersion: 1 } },
        ]),
      ),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toMatchObject({ name: 'VersionConflictError', streamId: shared });
    expect(await countStreams(shared)).toBe(2);
    expect(await countStreams(...own)).toBe(1);
  });

  it("loses to a racing writer's rows on the unique index, and names that stream", async () => {
    const ledger = createLedger({ pool: db.pool() });
    // A stream id with the characters of the index's key detail, which is where the refused stream's name is read.
    const [own, raced] = [fresh('m-own'), fresh('m-raced, (x), 1')];
    const holder = await db.pool().connect();
    try {
      await holder.query('begin');
      await holder.query(
        `insert into events (stream_id, stream_version, tenant_id, type, schema_version, data, metadata, recorded_at, content_hash)
         values ($1, 1, $2, 'R', 1, '{}', '{}', now(), 'x')`,
        [raced, T],
      );
      const loser = ledger
        .appendMany([
          { streamId: own, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
          { streamId: raced, events: [ev('B')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        ])
        .catch((e: unknown) => e);
      // The loser's statement saw no row and waits on the holder's uncommitted one.
      await waitForLockWait();
      await holder.query('commit');
      expect(await loser).toMatchObject({ name: 'VersionConflictError', streamId: raced, expected: 'no_stream', actual: 1 });
    } finally {
      holder.release();
    }
    expect(await countStreams(own)).toBe(0);
    expect(await countStreams(raced)).toBe(1);
  });

  it('passes a database refusal that is not the version race through as itself, writing nothing', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [a, b] = [fresh('m-ok'), fresh('m-nul')];
    const err = await ledger
      .appendMany([
        { streamId: a, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        { streamId: b, events: [ev('B', { s: 'a\u0000b' })], opts: { tenantId: T, expectedVersion: 'no_stream' } },
      ])
      .catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(VersionConflictError);
    expect(err).toMatchObject({ code: '22P05' });
    expect(await countStreams(a, b)).toBe(0);
  });

  it('refuses malformed multi-stream appends with validation_failed, writing nothing', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const a = fresh('m-bad');
    const ok = { streamId: a, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' as const } };
    const many = Array.from({ length: MAX_STREAMS_PER_APPEND + 1 }, (_, i) => ({ ...ok, streamId: `${a}-${i}` }));
    for (const bad of [
      [],
      [ok, ok],
      many,
      [ok, { ...ok, streamId: '' }],
      [ok, { ...ok, streamId: `${a}-2`, events: [] }],
      [ok, { ...ok, streamId: `${a}-3`, opts: { tenantId: T, expectedVersion: -1 } }],
      [ok, { streamId: `${a}-4`, events: [ev('A')] }],
    ]) {
      const err = await ledger.appendMany(bad as never).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ItoError);
      expect((err as ItoError).code).toBe('validation_failed');
    }
    const { rows } = await db.pool().query<{ n: number }>('select count(*)::int as n from events where stream_id like $1', [`${a}%`]);
    expect(rows[0]!.n).toBe(0);
  });
});

describe('appendMany with stream rules and inline projections', () => {
  const seen: Array<{ streamId: string; type: string }[]> = [];
  const projection: InlineProjection = {
    name: 'seen',
    handles: ['A', 'Ruled', 'Added'],
    async apply(_client, events) {
      seen.push(events.map((e) => ({ streamId: e.streamId, type: e.type })));
    },
  };
  const rule: StreamRule = {
    name: 'ruled',
    types: ['Ruled', 'Added'],
    owns: (streamId) => streamId.startsWith('ruled-'),
    async complete(_client, _streamId, events) {
      return [...events, ev('Added')];
    },
  };
  const ledger = () => createLedger({ pool: db.pool(), inlineProjections: [projection], streamRules: [rule] });

  it("completes each stream by its rule, and runs each projection once on every stream's events, in order", async () => {
    seen.length = 0;
    const [plain, ruled] = [fresh('m-plain'), fresh('ruled-')];
    const [rp, rr] = await ledger().appendMany([
      { streamId: plain, events: [ev('A'), ev('Other')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
      { streamId: ruled, events: [ev('Ruled')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
    ]);
    expect(rp.events.map((e) => e.type)).toEqual(['A', 'Other']);
    expect(rr.events.map((e) => e.type)).toEqual(['Ruled', 'Added']);
    expect(seen).toEqual([
      [
        { streamId: plain, type: 'A' },
        { streamId: ruled, type: 'Ruled' },
        { streamId: ruled, type: 'Added' },
      ],
    ]);
  });

  it("refuses a type the rule's streams do not hold, and writes nothing of any stream", async () => {
    seen.length = 0;
    const [plain, ruled] = [fresh('m-plain'), fresh('ruled-')];
    await expect(
      ledger().appendMany([
        { streamId: plain, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        { streamId: ruled, events: [ev('Ruled'), ev('Stranger')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
      ]),
    ).rejects.toMatchObject({ code: 'validation_failed' });
    expect(await countStreams(plain, ruled)).toBe(0);
    expect(seen).toEqual([]);
  });

  it('rolls every stream back with the transaction when later work throws', async () => {
    const [a, b] = [fresh('m-tx-a'), fresh('ruled-')];
    await expect(
      ledger().transaction(async (tx) => {
        await tx.appendMany([
          { streamId: a, events: [ev('A')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
          { streamId: b, events: [ev('Ruled')], opts: { tenantId: T, expectedVersion: 'no_stream' } },
        ]);
        throw new Error('later work failed');
      }),
    ).rejects.toThrow('later work failed');
    expect(await countStreams(a, b)).toBe(0);
  });
});
