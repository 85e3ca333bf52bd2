import { ItoError } from '@ito/contracts';
import { describe, expect, it } from 'vitest';
import { createLedger, VersionConflictError, type AppendOptions, type Upcaster } from '../src/index.js';
import { usePool } from './harness.js';

const db = usePool();
const T = 'tenant-a';
const ev = (type: string, data: Record<string, unknown> = {}) => ({ type, data });

async function countStream(streamId: string): Promise<number> {
  const { rows } = await db.pool().query<{ n: number }>('select count(*)::int as n from events where stream_id = $1', [streamId]);
  return rows[0]?.n ?? -1;
}

describe('append with expected versions', () => {
  it('creates a stream with no_stream and refuses a second no_stream without writing', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const first = await ledger.append('run-1', [ev('RunReserved', { a: 1 }), ev('RunConfirmed')], { tenantId: T, expectedVersion: 'no_stream' });
    expect(first.nextExpectedVersion).toBe(2);
    expect(first.events.map((e) => [e.streamVersion, e.type])).toEqual([
      [1, 'RunReserved'],
      [2, 'RunConfirmed'],
    ]);
    expect(first.events[1]!.position).toBeGreaterThan(first.events[0]!.position);

    const err = await ledger.append('run-1', [ev('RunReserved'), ev('Other')], { tenantId: T, expectedVersion: 'no_stream' }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VersionConflictError);
    expect((err as VersionConflictError).streamId).toBe('run-1');
    expect((err as VersionConflictError).expected).toBe('no_stream');
    expect(await countStream('run-1')).toBe(2);
  });

  it('refuses a stale exact version with no partial write, and accepts the current one', async () => {
    const ledger = createLedger({ pool: db.pool() });
    await ledger.append('run-2', [ev('A'), ev('B')], { tenantId: T, expectedVersion: 'no_stream' });
    const stale = await ledger.append('run-2', [ev('C'), ev('D'), ev('E')], { tenantId: T, expectedVersion: 1 }).catch((e: unknown) => e);
    expect(stale).toBeInstanceOf(VersionConflictError);
    expect((stale as VersionConflictError).actual).toBe(2);
    expect(await countStream('run-2')).toBe(2);
    const ok = await ledger.append('run-2', [ev('C')], { tenantId: T, expectedVersion: 2 });
    expect(ok.nextExpectedVersion).toBe(3);
  });

  it('appends with any regardless of version, and exact 0 means an absent stream', async () => {
    const ledger = createLedger({ pool: db.pool() });
    expect((await ledger.append('run-3', [ev('A')], { tenantId: T, expectedVersion: 'any' })).nextExpectedVersion).toBe(1);
    expect((await ledger.append('run-3', [ev('B')], { tenantId: T, expectedVersion: 'any' })).nextExpectedVersion).toBe(2);
    expect((await ledger.append('run-4', [ev('A')], { tenantId: T, expectedVersion: 0 })).nextExpectedVersion).toBe(1);
  });

  it('refuses a stale, a future and a foreign expectation alike whether the append holds one event or several, writing nothing', async () => {
    // One event and several go by different statements (append-sql.ts): each must hold the same checks.
    const ledger = createLedger({ pool: db.pool() });
    const refused: Array<[string, AppendOptions]> = [
      ['no_stream on an existing stream', { tenantId: T, expectedVersion: 'no_stream' }],
      ['a stale exact version', { tenantId: T, expectedVersion: 1 }],
      ['an exact version ahead of the stream', { tenantId: T, expectedVersion: 5 }],
      ['another tenant at the current version', { tenantId: 'tenant-b', expectedVersion: 2 }],
      ['another tenant with any', { tenantId: 'tenant-b', expectedVersion: 'any' }],
    ];
    for (const count of [1, 2]) {
      for (const [i, [what, opts]] of refused.entries()) {
        const stream = `run-refused-${count}-${i}`;
        await ledger.append(stream, [ev('A'), ev('B')], { tenantId: T, expectedVersion: 'no_stream' });
        const err = await ledger.append(stream, Array.from({ length: count }, (_, n) => ev('C', { n })), opts).catch((e: unknown) => e);
        expect(err, `${count} event(s): ${what}`).toBeInstanceOf(VersionConflictError);
        expect(await countStream(stream), `${count} event(s): ${what}`).toBe(2);
      }
    }
  });

  it('lets exactly one of many racing writers win the same expected version', async () => {
    const ledger = createLedger({ pool: db.pool() });
    await ledger.append('run-race', [ev('A')], { tenantId: T, expectedVersion: 'no_stream' });
    const results = await Promise.allSettled(
      Array.from({ length: 12 }, (_, i) => ledger.append('run-race', [ev('B', { i }), ev('C', { i })], { tenantId: T, expectedVersion: 1 })),
    );
    expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
    for (const r of results) if (r.status === 'rejected') expect(r.reason).toBeInstanceOf(VersionConflictError);
    expect(await countStream('run-race')).toBe(3);
  });

  it("treats another tenant's stream as a conflict and never appends to it", async () => {
    const ledger = createLedger({ pool: db.pool() });
    await ledger.append('run-owned', [ev('A')], { tenantId: T, expectedVersion: 'no_stream' });
    await expect(ledger.append('run-owned', [ev('B')], { tenantId: 'tenant-b', expectedVersion: 'any' })).rejects.toBeInstanceOf(VersionConflictError);
    expect(await ledger.readStream('run-owned', { tenantId: 'tenant-b' })).toEqual([]);
    expect(await countStream('run-owned')).toBe(1);
  });

  it('passes a database refusal that is not the version race through as itself, not as a conflict', async () => {
    const ledger = createLedger({ pool: db.pool() });
    // jsonb cannot hold U+0000: PostgreSQL refuses the insert (22P05), which says nothing about versions.
    const err = await ledger.append('run-nul', [ev('A', { s: 'a\u0000b' })], { tenantId: T, expectedVersion: 'no_stream' }).catch((e: unknown) => e);
    expect(err).not.toBeInstanceOf(VersionConflictError);
    expect(err).toMatchObject({ code: '22P05' });
    expect(await countStream('run-nul')).toBe(0);
  });

  it('refuses malformed appends with validation_failed', async () => {
    const ledger = createLedger({ pool: db.pool() });
    for (const bad of [
      () => ledger.append('', [ev('A')], { tenantId: T, expectedVersion: 'any' }),
      () => ledger.append('s', [], { tenantId: T, expectedVersion: 'any' }),
      () => ledger.append('s', [ev('A')], { tenantId: '', expectedVersion: 'any' }),
      () => ledger.append('s', [ev('A')], { tenantId: T, expectedVersion: -1 }),
      () => ledger.append('s', [{ type: 'A', data: [] as unknown as Record<string, unknown> }], { tenantId: T, expectedVersion: 'any' }),
    ]) {
      const err = await bad().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ItoError);
      expect((err as ItoError).code).toBe('validation_failed');
    }
  });

  it('stores metadata, schema version and the injected clock', async () => {
    const at = new Date('2030-05-06T07:08:09.123Z');
    const ledger = createLedger({ pool: db.pool(), now: () => at });
    await ledger.append('run-meta', [{ type: 'A', data: { x: 1 }, schemaVersion: 3, metadata: { actor: 'key_1', requestId: 'req-9' } }], {
      tenantId: T,
      expectedVersion: 'no_stream',
    });
    const [stored] = await ledger.readStream('run-meta');
    expect(stored).toMatchObject({ type: 'A', schemaVersion: 3, data: { x: 1 }, metadata: { actor: 'key_1', requestId: 'req-9' }, tenantId: T });
    expect(stored!.recordedAt.toISOString()).toBe(at.toISOString());
    expect(stored!.transactionId).toMatch(/^\d+$/);
  });
});

describe('upcasters', () => {
  const upcasters: Upcaster[] = [
    { type: 'CheckpointSaved', fromVersion: 1, upcast: (d) => ({ ...d, bytes: d.megabytes === undefined ? 0 : Number(d.megabytes) * 1e6, megabytes: undefined }) },
    { type: 'CheckpointSaved', fromVersion: 2, upcast: (d) => ({ bytes: d.bytes, storage: 'default' }) },
  ];

  it('chains upcasters on read and never rewrites the stored event', async () => {
    const writer = createLedger({ pool: db.pool() });
    await writer.append('run-up', [{ type: 'CheckpointSaved', data: { megabytes: 5 }, schemaVersion: 1 }, { type: 'CheckpointSaved', data: { bytes: 7 }, schemaVersion: 2 }, { type: 'CheckpointSaved', data: { bytes: 9, storage: 's3' }, schemaVersion: 3 }], {
      tenantId: T,
      expectedVersion: 'no_stream',
    });
    const reader = createLedger({ pool: db.pool(), upcasters });
    const events = await reader.readStream('run-up');
    expect(events.map((e) => [e.schemaVersion, e.data])).toEqual([
      [3, { bytes: 5e6, storage: 'default' }],
      [3, { bytes: 7, storage: 'default' }],
      [3, { bytes: 9, storage: 's3' }],
    ]);
    const all = await reader.readAll();
    expect(all.filter((e) => e.streamId === 'run-up').every((e) => e.schemaVersion === 3)).toBe(true);

    const { rows } = await db.pool().query('select schema_version, data from events where stream_id = $1 order by stream_version', ['run-up']);
    expect(rows).toEqual([
      { schema_version: 1, data: { megabytes: 5 } },
      { schema_version: 2, data: { bytes: 7 } },
      { schema_version: 3, data: { bytes: 9, storage: 's3' } },
    ]);
  });

  it('refuses two upcasters for the same type and version', () => {
    expect(() => createLedger({ pool: db.pool(), upcasters: [upcasters[0]!, upcasters[0]!] })).toThrow(/two upcasters/);
  });
});
