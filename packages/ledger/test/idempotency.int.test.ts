import { describe, expect, it } from 'vitest';
import { canonicalJson, createLedger, findIdempotencyResult, sha256Hex } from '../src/index.js';
import { sleep, usePool } from './harness.js';

const db = usePool();
const T = 'tenant-i';
const fp = (body: unknown) => sha256Hex(canonicalJson(body));

describe('idempotency keys', () => {
  it('new, then replay of the stored result, then mismatch for a different request', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const first = await ledger.transaction(async (tx) => {
      const begin = await tx.idempotency.begin(T, 'key-1', fp({ a: 1 }));
      expect(begin).toEqual({ kind: 'new' });
      const res = await tx.append('run-i1', [{ type: 'RunReserved', data: {}, metadata: { idempotencyKey: 'key-1' } }], { tenantId: T, expectedVersion: 'no_stream' });
      const result = { runId: 'run-i1', position: res.events[0]!.position };
      await tx.idempotency.complete(T, 'key-1', fp({ a: 1 }), result);
      return result;
    });
    const again = await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-1', fp({ a: 1 })));
    expect(again).toEqual({ kind: 'replay', result: first });
    expect(await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-1', fp({ a: 2 })))).toEqual({ kind: 'mismatch' });

    const found = await findIdempotencyResult(db.pool(), T, 'key-1');
    expect(found).toMatchObject({ fingerprint: fp({ a: 1 }), result: first });
    expect(found!.createdAt).toBeInstanceOf(Date);
  });

  it('scopes keys by tenant', async () => {
    const ledger = createLedger({ pool: db.pool() });
    expect(await ledger.transaction((tx) => tx.idempotency.begin('tenant-other', 'key-1', fp({ a: 1 })))).toEqual({ kind: 'new' });
    expect(await findIdempotencyResult(db.pool(), 'tenant-other', 'key-1')).toBeNull();
  });

  it('answers in_progress to a concurrent begin while the first transaction holds the key', async () => {
    const ledger = createLedger({ pool: db.pool() });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const hasBegun = new Promise<void>((r) => (began = r));
    const first = ledger.transaction(async (tx) => {
      expect(await tx.idempotency.begin(T, 'key-2', fp({ b: 1 }))).toEqual({ kind: 'new' });
      began();
      await gate;
      await tx.idempotency.complete(T, 'key-2', fp({ b: 1 }), { done: true });
    });
    await hasBegun;
    const concurrent = await Promise.all(Array.from({ length: 4 }, () => ledger.transaction((tx) => tx.idempotency.begin(T, 'key-2', fp({ b: 1 })))));
    expect(concurrent).toEqual(Array.from({ length: 4 }, () => ({ kind: 'in_progress' })));
    release();
    await first;
    expect(await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-2', fp({ b: 1 })))).toEqual({ kind: 'replay', result: { done: true } });
  });

  it('leaves no key and no events behind when the transaction rolls back', async () => {
    const ledger = createLedger({ pool: db.pool() });
    await expect(
      ledger.transaction(async (tx) => {
        expect(await tx.idempotency.begin(T, 'key-3', fp({ c: 1 }))).toEqual({ kind: 'new' });
        await tx.append('run-i3', [{ type: 'RunReserved', data: {} }], { tenantId: T, expectedVersion: 'no_stream' });
        await tx.idempotency.complete(T, 'key-3', fp({ c: 1 }), { runId: 'run-i3' });
        await sleep(1);
        throw new Error('a later gate refused');
      }),
    ).rejects.toThrow('a later gate refused');
    expect(await findIdempotencyResult(db.pool(), T, 'key-3')).toBeNull();
    expect(await ledger.readStream('run-i3')).toEqual([]);
    // The lock went with the transaction: the key is free again.
    expect(await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-3', fp({ c: 1 })))).toEqual({ kind: 'new' });
  });
});
