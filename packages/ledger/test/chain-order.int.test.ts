import { beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '../src/index.js';
import { forgery, type Link } from './chain-forgery.js';
import { settled, usePool } from './harness.js';

/**
 * Safe order inside and across transactions: events of one append share a transaction id and are ordered by
 * position; a link whose transaction id goes back is out of order even when its position goes forward. Each case
 * names the exact link and position, then restores the table.
 */
const db = usePool();
const T = 'tenant-order';
const { links, rehashFrom, restore, swapAndRehash } = forgery(() => db.pool());
let original: Link[];

beforeAll(async () => {
  const ledger = createLedger({ pool: db.pool() });
  // Links 1–3 one transaction each, 4–6 one transaction of three events, 7–8 one transaction each.
  for (let i = 0; i < 3; i++) await ledger.append(`single-${i}`, [{ type: 'RunReserved', data: { i } }], { tenantId: T, expectedVersion: 'no_stream' });
  await ledger.append('batch', [1, 2, 3].map((i) => ({ type: 'ProgressRecorded', data: { i } })), { tenantId: T, expectedVersion: 'no_stream' });
  for (let i = 3; i < 5; i++) await ledger.append(`single-${i}`, [{ type: 'RunReserved', data: { i } }], { tenantId: T, expectedVersion: 'no_stream' });
  await settled(db.pool());
  expect(await ledger.sealPending()).toBe(8);
  original = await links();
});

// Assertions a mutant can break live in tests, not in beforeAll: a failing hook skips the file's tests, and a
// mutation run counts skipped tests as passed.
describe('safe order', () => {
  it('holds for the events of one transaction in position order: the untouched chain verifies', async () => {
    expect(original.slice(3, 6).map((l) => l.txid)).toEqual([original[3]!.txid, original[3]!.txid, original[3]!.txid]);
    expect(await createLedger({ pool: db.pool() }).verify()).toEqual({ ok: true, checked: 8, headHash: original[7]!.hash });
  });

  it('names two events of one transaction swapped in the chain, every hash recomputed', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [a, b] = [original[3]!, original[4]!]; // seq 4 and 5, one transaction
    await swapAndRehash(a, b);
    expect(await ledger.verify()).toEqual({ ok: false, checked: 4, firstBadPosition: a.position, reason: 'link 5 is out of safe order' });
    await restore(original);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('names a link whose transaction id goes back while its position goes forward', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const [seven, eight] = [original[6]!, original[7]!];
    // The forger gives event 7 a transaction id after event 8's and rehashes: positions still rise, ids do not.
    const later = (BigInt(eight.txid) + 1n).toString();
    await db.pool().query('update events set transaction_id = $2::xid8 where position = $1', [seven.position, later]);
    await rehashFrom(seven.seq);
    expect(await ledger.verify()).toEqual({ ok: false, checked: 7, firstBadPosition: eight.position, reason: 'link 8 is out of safe order' });
    await db.pool().query('update events set transaction_id = $2::xid8 where position = $1', [seven.position, seven.txid]);
    await restore(original);
    expect((await ledger.verify()).ok).toBe(true);
  });

  it('names an event whose transaction id no longer matches its link', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const seven = original[6]!;
    await db.pool().query('update events set transaction_id = $2::xid8 where position = $1', [seven.position, (BigInt(seven.txid) + 100n).toString()]);
    expect(await ledger.verify()).toEqual({ ok: false, checked: 6, firstBadPosition: seven.position, reason: `event at position ${seven.position} changed its transaction id` });
    await db.pool().query('update events set transaction_id = $2::xid8 where position = $1', [seven.position, seven.txid]);
    expect((await ledger.verify()).ok).toBe(true);
  });
});
