import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import pg from 'pg';
import { beforeAll, describe, expect, it } from 'vitest';
import { createLogger } from '@ito/config';
import { createLedger } from '@ito/ledger';
import { usePool } from '../../../test/support/db.js';
import { orchestratorProjection, startRelay, type RunEvaluator } from '../src/orchestrator/relay.js';

const quiet = createLogger({ level: 'error', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const runId = () => `run_${randomBytes(16).toString('hex')}`;

async function until(check: () => boolean, what: string, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

describe('orchestrator relay, fast path', () => {
  const db = usePool(4);
  let pool: pg.Pool;
  beforeAll(() => {
    pool = db.pool();
  });

  it('a notification is evaluated while an earlier evaluation is still in flight, and stop waits for both', async () => {
    const calls: { runIds: string[]; release: () => void; done: boolean }[] = [];
    const evaluator: RunEvaluator = {
      async evaluate(_db, runIds, via) {
        if (via !== 'notify' || runIds.length === 0) return 0;
        const call = { runIds, release: () => {}, done: false };
        calls.push(call);
        // Each evaluation is held until the test lets it go: a slow query or enqueue.
        await new Promise<void>((r) => (call.release = r));
        call.done = true;
        return 0;
      },
      forget() {},
    };
    const channel = `relay_test_${randomBytes(4).toString('hex')}`;
    const relay = startRelay(createLedger({ pool }), orchestratorProjection(evaluator), evaluator, quiet, { listenOn: { pool, channel } });
    const [first, second] = [runId(), runId()];
    let stopped = false;
    try {
      // Notify until the listener is up (a notification sent before LISTEN is not delivered).
      for (let i = 0; calls.length === 0 && i < 100; i++) {
        await pool.query('select pg_notify($1, $2)', [channel, first]);
        await new Promise((r) => setTimeout(r, 50));
      }
      await until(() => calls.length >= 1, 'the first evaluation');
      await pool.query('select pg_notify($1, $2)', [channel, second]);
      // One evaluation at a time, the second run would wait for the first to be released: it does not.
      await until(() => calls.some((c) => c.runIds.includes(second)), 'the second run evaluated beside the first');
      expect(calls[0]!.done).toBe(false);

      const stopping = relay.stop().then(() => (stopped = true));
      await new Promise((r) => setTimeout(r, 100));
      expect(stopped).toBe(false);
      for (const c of calls) c.release();
      await stopping;
      expect(calls.every((c) => c.done)).toBe(true);
    } finally {
      for (const c of calls) c.release();
      if (!stopped) await relay.stop();
    }
  }, 60_000);
});
