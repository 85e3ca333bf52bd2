import { describe, expect, it } from 'vitest';
import { canonicalJson, createLedger, findIdempotencyResult, sha256Hex } from '../src/index.js';
import { usePool } from './harness.js';

const db = usePool();
const T = 'tenant-it';
const fp = (body: unknown) => sha256Hex(canonicalJson(body));

describe('idempotentTransaction', () => {
  it('runs the work once and records its result, then replays it; another request under the key is a mismatch', async () => {
    const ledger = createLedger({ pool: db.pool() });
    let runs = 0;
    const work = async (tx: Parameters<Parameters<typeof ledger.idempotentTransaction>[1]>[0]) => {
      runs++;
      const res = await tx.append('run-it1', [{ type: 'RunReserved', data: {} }], { tenantId: T, expectedVersion: 'no_stream' });
      return { runId: 'run-it1', position: res.events[0]!.position };
    };
    const first = await ledger.idempotentTransaction({ tenantId: T, key: 'key-1', fingerprint: fp({ a: 1 }) }, work);
    expect(first.kind).toBe('done');
    const result = (first as { result: unknown }).result;
    expect(await ledger.idempotentTransaction({ tenantId: T, key: 'key-1', fingerprint: fp({ a: 1 }) }, work)).toEqual({ kind: 'replay', result });
    expect(await ledger.idempotentTransaction({ tenantId: T, key: 'key-1', fingerprint: fp({ a: 2 }) }, work)).toEqual({ kind: 'mismatch' });
    expect(runs).toBe(1);
    // The same key and row as the step-by-step API: the two are interchangeable.
    expect(await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-1', fp({ a: 1 })))).toEqual({ kind: 'replay', result });
    expect(await findIdempotencyResult(db.pool(), T, 'key-1')).toMatchObject({ fingerprint: fp({ a: 1 }), result });
  });

  it('holds the same lock as idempotency.begin while the work runs: concurrent claims see in_progress', async () => {
    const ledger = createLedger({ pool: db.pool() });
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    let began!: () => void;
    const hasBegun = new Promise<void>((r) => (began = r));
    const first = ledger.idempotentTransaction({ tenantId: T, key: 'key-2', fingerprint: fp({ b: 1 }) }, async () => {
      began();
      await gate;
      return { done: true };
    });
    await hasBegun;
    const claim = { tenantId: T, key: 'key-2', fingerprint: fp({ b: 1 }) };
    const concurrent = await Promise.all(Array.from({ length: 3 }, () => ledger.idempotentTransaction(claim, async () => ({ done: false }))));
    expect(concurrent).toEqual(Array.from({ length: 3 }, () => ({ kind: 'in_progress' })));
    expect(await ledger.transaction((tx) => tx.idempotency.begin(T, 'key-2', fp({ b: 1 })))).toEqual({ kind: 'in_progress' });
    release();
    expect(await first).toEqual({ kind: 'done', result: { done: true } });
    expect(await ledger.idempotentTransaction(claim, async () => ({ done: false }))).toEqual({ kind: 'replay', result: { done: true } });
  });

  it('leaves no key, no events and no lock behind when the work throws', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const claim = { tenantId: T, key: 'key-3', fingerprint: fp({ c: 1 }) };
    await expect(
      ledger.idempotentTransaction(claim, async (tx) => {
        await tx.append('run-it3', [{ type: 'RunReserved', data: {} }], { tenantId: T, expectedVersion: 'no_stream' });
        throw new Error('a later gate refused');
      }),
    ).rejects.toThrow('a later gate refused');
    expect(await findIdempotencyResult(db.pool(), T, 'key-3')).toBeNull();
    expect(await ledger.readStream('run-it3')).toEqual([]);
    expect(await ledger.idempotentTransaction(claim, async () => 'second')).toEqual({ kind: 'done', result: 'second' });
  });

  it('keeps quotes, backslashes and dollar signs in keys, tenants and results intact', async () => {
    const ledger = createLedger({ pool: db.pool() });
    const claim = { tenantId: "ten'ant\\x", key: "k'$1$&\\'--", fingerprint: fp({ d: 1 }) };
    const result = { text: "it's \\ a \"quote\" $1 $$ ; commit; --", n: [1, 2.5, null] };
    expect(await ledger.idempotentTransaction(claim, async () => result)).toEqual({ kind: 'done', result });
    expect(await findIdempotencyResult(db.pool(), claim.tenantId, claim.key)).toMatchObject({ fingerprint: claim.fingerprint, result });
    expect(await ledger.idempotentTransaction(claim, async () => 'again')).toEqual({ kind: 'replay', result });
  });
});
