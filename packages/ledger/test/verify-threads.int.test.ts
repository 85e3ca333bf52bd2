import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger, readTenantRecords, verifyTenantChain } from '../src/index.js';
import { verifyChain } from '../src/verify.js';
import { settled, usePool } from './harness.js';

/**
 * Verify hashes pages of links on threads of their own and joins them in order. The verdicts must be those of a
 * walk on one thread, link for link: a tampered link first on its page (joined by the reading thread to the page
 * before) and one inside a page (joined by the hashing thread) are both named, with how many links held before.
 */
const db = usePool();
const TENANTS = ['ten-x', 'ten-y'];
const EVENTS = 40;
const threaded = (pageSize: number) => ({ threads: 2, pageSize });

let positions: number[];
beforeAll(async () => {
  const ledger = createLedger({ pool: db.pool() });
  for (let i = 0; i < EVENTS; i++) {
    await ledger.append(`s-${i}`, [{ type: 'RunReserved', data: { i, note: 'é"\n', nested: { b: [1, 2.5, null], a: true } }, metadata: { actor: 'k' } }], {
      tenantId: TENANTS[i % 2]!,
      expectedVersion: 'no_stream',
    });
  }
  await settled(db.pool());
  await ledger.sealPending();
  const { rows } = await db.pool().query<{ position: string }>('select position::text as position from event_chain order by seq');
  positions = rows.map((r) => Number(r.position));
});

async function withEventAltered(position: number, check: () => Promise<void>): Promise<void> {
  const { rows } = await db.pool().query<{ data: unknown }>('select data from events where position = $1', [position]);
  await db.pool().query(`update events set data = jsonb_set(data, '{i}', '999') where position = $1`, [position]);
  try {
    await check();
  } finally {
    await db.pool().query('update events set data = $2::jsonb where position = $1', [position, JSON.stringify(rows[0]!.data)]);
  }
}

describe('verify on hashing threads', () => {
  it('gives the one-thread verdict on an intact chain, whatever the page size', async () => {
    const inline = await verifyChain(db.pool(), { threads: 0 });
    expect(inline).toMatchObject({ ok: true, checked: EVENTS });
    for (const size of [3, 7, 40, 100]) expect(await verifyChain(db.pool(), threaded(size)), `pages of ${size}`).toEqual(inline);
    const tenant = await verifyTenantChain(db.pool(), 'ten-y', { threads: 0 });
    expect(tenant).toMatchObject({ ok: true, checked: EVENTS / 2 });
    expect(await verifyTenantChain(db.pool(), 'ten-y', threaded(3))).toEqual(tenant);
  });

  it('names an altered event first on its page and one inside a page', async () => {
    // Pages of 5: seq 16 opens the fourth page, seq 18 is inside it.
    for (const seq of [16, 18]) {
      const target = positions[seq - 1]!;
      await withEventAltered(target, async () => {
        const expected = { ok: false, checked: seq - 1, firstBadPosition: target, reason: `event at position ${target} does not match its sealed hash` };
        expect(await verifyChain(db.pool(), threaded(5)), `seq ${seq}`).toEqual(expected);
        expect(await verifyChain(db.pool(), { threads: 0, pageSize: 5 })).toEqual(expected);
      });
    }
    expect((await verifyChain(db.pool(), threaded(5))).ok).toBe(true);
  });

  it('names a link that no longer points at the link before, at a page boundary and inside a page', async () => {
    const { rows } = await db.pool().query<{ seq: string; prev_hash: string }>('select seq::text as seq, prev_hash from event_chain where seq in (16, 18) order by seq');
    for (const row of rows) {
      const seq = Number(row.seq);
      await db.pool().query('update event_chain set prev_hash = $2 where seq = $1', [seq, 'f'.repeat(64)]);
      try {
        expect(await verifyChain(db.pool(), threaded(5))).toEqual({ ok: false, checked: seq - 1, firstBadPosition: positions[seq - 1], reason: `link ${seq} does not point at the previous link` });
      } finally {
        await db.pool().query('update event_chain set prev_hash = $2 where seq = $1', [seq, row.prev_hash]);
      }
    }
  });

  it("names the altered event in a tenant's chain at the same place as one thread does", async () => {
    const recs = await readTenantRecords(db.pool(), 'ten-x', { limit: 100 });
    for (const tenantSeq of [7, 9]) {
      const target = recs[tenantSeq - 1]!.position;
      await withEventAltered(target, async () => {
        const expected = { ok: false, checked: tenantSeq - 1, first_bad_position: target, reason: `the event at position ${target} does not match its sealed hash` };
        expect(await verifyTenantChain(db.pool(), 'ten-x', threaded(3))).toEqual(expected);
        expect(await verifyTenantChain(db.pool(), 'ten-x', 3)).toEqual(expected);
      });
    }
  });
});
