import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, startApi, type Api, type CallResult } from '../../../test/support/api.js';
import { heldSteady, lockWaiters } from '../../../test/support/lock-waiters.js';

/**
 * Audit replays and /metrics scrapes are admitted as desk queries are (here one computing, one waiting each): a
 * burst is answered rate_limited with Retry-After instead of taking the pool, and the rest of the API answers.
 */
let api: Api;
let seed: Awaited<ReturnType<typeof seedTenant>>;
let auditor: string;

beforeAll(async () => {
  api = await startApi({ replayAdmission: { concurrency: 1, queue: 1 }, metricsAdmission: { concurrency: 1, queue: 1 } });
  seed = await seedTenant(api);
  auditor = (await api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['audit:read'] })).key;
});
afterAll(async () => api.close());

const count = async (sql: string) => Number((await api.pool.query<{ n: string }>(sql)).rows[0]!.n);
/** What a refused call could have left (the runs table itself is held by the test, so it is not counted here). */
const leftBehind = async () => ({
  events: await count('select count(*) as n from events'),
  idempotency: await count('select count(*) as n from idempotency_keys'),
  scratch: await count(`select count(*) as n from pg_namespace where nspname like 'ito_replay_%'`),
});

/** With the runs table held, one call computes (blocked), one waits its turn, and the third is refused. */
async function burst(call: () => Promise<CallResult>): Promise<void> {
  expect((await call()).status).toBe(200);
  const holder = new pg.Client({ connectionString: api.databaseUrl });
  await holder.connect();
  try {
    await holder.query('begin');
    await holder.query('lock table runs in access exclusive mode');
    const first = call();
    const waiting = await heldSteady(api.pool);
    const second = call();
    await new Promise((r) => setTimeout(r, 100));
    const before = await leftBehind();
    const third = await call();
    expect(third.status).toBe(429);
    expect(third.body).toMatchObject({ ok: false, error: { code: 'rate_limited', retryable: true } });
    expect(third.headers.get('retry-after')).toBe('1');
    expect(await leftBehind()).toEqual(before);
    // Another tenant's call still answers, and the queued call added no session.
    expect((await api.call('GET', '/v1/bookings', { key: seed.requester })).status).toBe(200);
    expect(await lockWaiters(api.pool)).toBe(waiting);
    await holder.query('rollback');
    const [a, b] = await Promise.all([first, second]);
    expect([a.status, b.status]).toEqual([200, 200]);
  } finally {
    await holder.end();
  }
  expect((await call()).status).toBe(200);
}

describe('heavy read admission', () => {
  it('admits audit replays a few at a time', async () => {
    await burst(() => api.call('GET', '/v1/audit/replay', { key: auditor }));
  });

  it('admits /metrics scrapes a few at a time', async () => {
    await burst(() => api.call('GET', '/metrics'));
  });
});
