import { describe, expect, it } from 'vitest';
import { contentHash, createLedger, linkHash } from '../src/index.js';
import { settled, usePool } from './harness.js';

const db = usePool();
const T = 'tenant-h';

async function appendMany(n: number, prefix: string): Promise<void> {
  const ledger = createLedger({ pool: db.pool() });
  await Promise.all(
    Array.from({ length: n }, (_, i) => ledger.append(`${prefix}-${i}`, [{ type: 'RunReserved', data: { i, nested: { b: 2, a: [1, 'x'] } }, metadata: { actor: 'k' } }], { tenantId: T, expectedVersion: 'no_stream' })),
  );
}

describe('hash chain', () => {
  it('seals committed events, concurrently from many callers, into one gap-free chain that verifies', async () => {
    const ledger = createLedger({ pool: db.pool() });
    expect(await ledger.chainHead()).toEqual({ position: null, hash: null, count: 0 });
    expect(await ledger.verify()).toEqual({ ok: true, checked: 0, headHash: null });

    await appendMany(120, 'a');
    await settled(db.pool());
    // Eight sealers at once: the advisory lock lets one work at a time, the others return at once.
    const sealed = await Promise.all(Array.from({ length: 8 }, () => ledger.sealPending({ batchSize: 25 })));
    const total = sealed.reduce((a, b) => a + b, 0) + (await ledger.sealPending());
    expect(total).toBe(120);

    const { rows } = await db.pool().query<{ seq: string }>('select seq from event_chain order by seq');
    expect(rows.map((r) => Number(r.seq))).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));

    const head = await ledger.chainHead();
    expect(head.count).toBe(120);
    const result = await ledger.verify();
    expect(result).toEqual({ ok: true, checked: 120, headHash: head.hash });
    expect(await ledger.sealPending()).toBe(0);
  });

  it('links each event by the documented formula, starting from a null prev_hash', async () => {
    const { rows } = await db.pool().query(
      `select c.seq, c.prev_hash, c.hash, e.position, e.transaction_id::text as txid, e.stream_version, e.stream_id, e.tenant_id, e.type,
              e.schema_version, e.data, e.metadata, e.recorded_at, e.content_hash
       from event_chain c join events e using (position) where c.seq = 1`,
    );
    const r = rows[0];
    expect(r.prev_hash).toBeNull();
    const content = contentHash({ tenantId: r.tenant_id, streamId: r.stream_id, type: r.type, schemaVersion: r.schema_version, data: r.data, metadata: r.metadata, recordedAt: r.recorded_at });
    expect(content).toBe(r.content_hash);
    expect(linkHash({ seq: 1, position: Number(r.position), transactionId: r.txid, streamVersion: r.stream_version, contentHash: content, prevHash: null })).toBe(r.hash);
  });

  it('names the first tampered position when an event is updated in SQL, and verifies again once restored', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const { rows } = await db.pool().query<{ position: string; data: unknown; metadata: unknown }>(
      'select e.position, e.data, e.metadata from event_chain c join events e using (position) where c.seq = 40',
    );
    const target = Number(rows[0]!.position);
    await db.pool().query(`update events set data = jsonb_set(data, '{i}', '999') where position = $1`, [target]);
    expect(await ledger.verify()).toMatchObject({ ok: false, firstBadPosition: target, checked: 39 });

    await db.pool().query('update events set data = $2::jsonb where position = $1', [target, JSON.stringify(rows[0]!.data)]);
    expect((await ledger.verify()).ok).toBe(true);

    await db.pool().query(`update events set metadata = '{"actor":"someone-else"}' where position = $1`, [target]);
    expect(await ledger.verify()).toMatchObject({ ok: false, firstBadPosition: target });
    await db.pool().query('update events set metadata = $2::jsonb where position = $1', [target, JSON.stringify(rows[0]!.metadata)]);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('detects a deleted event, then a deleted link', async () => {
    const ledger = createLedger({ pool: db.pool() });
    await appendMany(30, 'd');
    await settled(db.pool());
    expect(await ledger.sealPending()).toBe(30);
    expect(await ledger.verify()).toMatchObject({ ok: true, checked: 150 });

    const { rows } = await db.pool().query<{ position: string }>('select position from event_chain where seq = 140');
    const victim = Number(rows[0]!.position);
    await db.pool().query('delete from events where position = $1', [victim]);
    expect(await ledger.verify()).toEqual({ ok: false, firstBadPosition: victim, checked: 139, reason: `event at position ${victim} is missing` });

    // With link 130 gone, the first link read after 129 is 131: the break is reported at 131's position.
    const { rows: next } = await db.pool().query<{ position: string }>('select position from event_chain where seq = 131');
    await db.pool().query('delete from event_chain where seq = 130');
    expect(await ledger.verify()).toEqual({ ok: false, checked: 129, firstBadPosition: Number(next[0]!.position), reason: 'chain sequence jumps from 129 to 131: a link is missing' });
  });
});
