import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '../src/index.js';
import { forgery, type Link } from './chain-forgery.js';
import { settled, usePool } from './harness.js';

/**
 * Tampering that keeps every stored hash self-consistent: each case is caught by exactly one check of the
 * verifier (prev_hash, safe order, events behind the sealed head), so switching that check off makes its test
 * fail. Every case names the exact position and how many links verified before it, then restores the table.
 */
const db = usePool();
const T = 'tenant-tamper';
const EVENTS = 20;
const { links, restore, swapAndRehash } = forgery(() => db.pool());

let original: Link[];
beforeAll(async () => {
  const ledger = createLedger({ pool: db.pool() });
  for (let i = 0; i < EVENTS; i++) {
    // One append (one transaction) at a time, so transaction ids and positions both rise with seq.
    await ledger.append(`t-${i}`, [{ type: 'RunReserved', data: { i }, metadata: { actor: 'k' } }], { tenantId: T, expectedVersion: 'no_stream' });
  }
  await settled(db.pool());
  expect(await ledger.sealPending()).toBe(EVENTS);
  original = await links();
});

// Assertions a mutant can break live in tests, not in beforeAll: a failing hook skips the file's tests, and a
// mutation run counts skipped tests as passed.
it('the untouched chain verifies', async () => {
  expect(original).toHaveLength(EVENTS);
  expect(await createLedger({ pool: db.pool() }).verify()).toEqual({ ok: true, checked: EVENTS, headHash: original[EVENTS - 1]!.hash });
});

describe('verify against a forger who rehashes', () => {
  it('names the link whose prev_hash no longer points at the link before it', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const target = original[11]!; // seq 12
    await db.pool().query('update event_chain set prev_hash = $2 where seq = $1', [target.seq, original[4]!.hash]);
    expect(await ledger.verify()).toEqual({ ok: false, checked: 11, firstBadPosition: target.position, reason: 'link 12 does not point at the previous link' });
    await restore(original);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('names the first link out of safe order when two events are swapped in the chain and every hash recomputed', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [a, b] = [original[6]!, original[7]!]; // seq 7 and 8
    await swapAndRehash(a, b);
    // Seq 7 now holds the later event, which is in order after seq 6; seq 8 holds the earlier one: that is the break.
    expect(await ledger.verify()).toEqual({ ok: false, checked: 7, firstBadPosition: a.position, reason: 'link 8 is out of safe order' });
    await restore(original);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('names an event slipped in behind the sealed head without a link', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const head = original[EVENTS - 1]!;
    // A transaction id below the head's: in safe order it sits inside the sealed range, yet nothing chains it.
    const { rows } = await db.pool().query<{ position: string }>(
      `insert into events (stream_id, stream_version, tenant_id, type, data, metadata, recorded_at, transaction_id, content_hash)
       values ('slipped', 1, $1, 'RunReserved', '{"i":-1}', '{}', now(), $2::xid8, 'x') returning position::text`,
      [T, original[2]!.txid],
    );
    const slipped = Number(rows[0]!.position);
    expect(slipped).toBeGreaterThan(head.position);
    expect(await ledger.verify()).toEqual({ ok: false, checked: EVENTS, firstBadPosition: slipped, reason: `event at position ${slipped} sits inside the sealed range but is not chained` });
    await db.pool().query('delete from events where position = $1', [slipped]);
    expect((await ledger.verify()).ok).toBe(true);
  });
});

describe('verify reads the chain in pages', () => {
  it('checks every link across page boundaries, and names the same position when the break is on a later page', async () => {
    const { verifyChain, readChainHead } = await import('../src/verify.js');
    // 20 links in pages of 3: seven pages, the last one short; and pages of 4 and 5, whose last page is full.
    for (const size of [3, 4, 5]) expect(await verifyChain(db.pool(), size), `pages of ${size}`).toEqual({ ok: true, checked: EVENTS, headHash: original[EVENTS - 1]!.hash });
    expect(await readChainHead(db.pool())).toEqual({ position: original[EVENTS - 1]!.position, hash: original[EVENTS - 1]!.hash, count: EVENTS });
    const target = original[13]!; // seq 14, on the fifth page of 3
    await db.pool().query('update event_chain set prev_hash = $2 where seq = $1', [target.seq, original[1]!.hash]);
    expect(await verifyChain(db.pool(), 3)).toEqual({ ok: false, checked: 13, firstBadPosition: target.position, reason: 'link 14 does not point at the previous link' });
    await restore(original);
    expect((await verifyChain(db.pool(), 3)).ok).toBe(true);
  });
});
