import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footprint, startApi, type Api } from '../../../test/support/api.js';
import { heldSteady, lockWaiters } from '../../../test/support/lock-waiters.js';
import { seedKnownTelemetry } from '../../../test/support/telemetry.js';

/**
 * Desk telemetry queries are admitted a few at a time (here one computing, one waiting): a burst is answered
 * rate_limited with Retry-After instead of taking the pool, and the rest of the API answers meanwhile.
 */
let api: Api;
let seed: Awaited<ReturnType<typeof seedKnownTelemetry>>;

beforeAll(async () => {
  api = await startApi({ deskAdmission: { concurrency: 1, queue: 1 } });
  seed = await seedKnownTelemetry(api);
});
afterAll(async () => api.close());

const desk = () => api.call('GET', '/v1/desk/telemetry?group_by=region', { key: seed.deskKey });

describe('desk admission', () => {
  it('computes one query, queues one, refuses the next with Retry-After, and keeps answering other calls', async () => {
    expect((await desk()).status).toBe(200);
    // Hold the telemetry tables, so the admitted query blocks mid-computation.
    const holder = new pg.Client({ connectionString: api.databaseUrl });
    await holder.connect();
    try {
      await holder.query('begin');
      await holder.query('lock table telemetry_bookings in access exclusive mode');
      const first = desk();
      const waiting = await heldSteady(api.pool);
      const second = desk();
      // The queue is full once the second is waiting for its turn (it holds no connection yet).
      await new Promise((r) => setTimeout(r, 100));
      const before = await footprint(api);
      const third = await desk();
      expect(third.status).toBe(429);
      expect(await footprint(api)).toEqual(before);
      expect(third.body).toMatchObject({ ok: false, error: { code: 'rate_limited', retryable: true } });
      expect(third.headers.get('retry-after')).toBe('1');
      // Everything else still answers: the held query took one pool connection, not the pool.
      const other = await api.call('GET', '/v1/bookings', { key: seed.requesterKey });
      expect(other.status).toBe(200);
      // Only the first query reached the database: the second added no session.
      expect(await lockWaiters(api.pool)).toBe(waiting);
      await holder.query('rollback');
      const [a, b] = await Promise.all([first, second]);
      expect([a.status, b.status]).toEqual([200, 200]);
      expect(a.body.data.totals).toEqual(b.body.data.totals);
    } finally {
      await holder.end();
    }
    // Admission is free again.
    expect((await desk()).status).toBe(200);
  });
});
