import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, startApi, type Api, type Seed } from '../../../test/support/api.js';
import { heldSteady } from '../../../test/support/lock-waiters.js';

/**
 * Heartbeats beyond what one API process holds at once are shed with 429 and Retry-After before they
 * authenticate or write; the beats it admitted are recorded, the shed ones leave nothing behind.
 */
let api: Api;
let seed: Seed;
beforeAll(async () => {
  api = await startApi({ heartbeatAdmission: { inFlight: 2 } });
  seed = await seedTenant(api);
});
afterAll(async () => api?.close());

const beat = (key: string) => api.call('POST', '/v1/agent/heartbeat', { key, body: { tasks: [], gpus: [{ index: 0, healthy: true }] } });
const livenessOf = async () => (await api.pool.query<{ node_id: string }>('select node_id from node_liveness order by node_id')).rows.map((r) => r.node_id);

describe('heartbeat admission', () => {
  it('offered more beats than it holds, the API sheds the rest with 429 and Retry-After (before reading their bodies) and records exactly the admitted ones', async () => {
    const nodes = [];
    for (let i = 1; i <= 12; i++) nodes.push(await api.admin.registerNode({ bookingId: seed.bookingId, name: `gpu-${String(i).padStart(2, '0')}` }));
    expect(await livenessOf()).toEqual([]);

    // The liveness table is held, so the admitted beats stay in flight while the others arrive.
    const holder = new pg.Client({ connectionString: api.databaseUrl });
    await holder.connect();
    let answers: Awaited<ReturnType<typeof beat>>[];
    try {
      await holder.query('begin');
      await holder.query('lock table node_liveness in exclusive mode');
      const offered = nodes.map((n) => beat(n.node_credential));
      await heldSteady(api.pool);
      let refused = 0;
      for (const p of offered) void p.then((r) => (refused += r.status === 429 ? 1 : 0));
      for (let i = 0; i < 400 && refused < 10; i++) await new Promise((r) => setTimeout(r, 10));
      expect(refused).toBe(10);
      // Full, the route sheds before it reads the body: one that would not even parse is answered 429, not 400.
      const unparsed = await fetch(`${api.url}/v1/agent/heartbeat`, {
        method: 'POST',
        headers: { authorization: `Bearer ${nodes[0]!.node_credential}`, 'content-type': 'application/json' },
        body: '{"tasks": [',
      });
      expect([unparsed.status, unparsed.headers.get('retry-after'), ((await unparsed.json()) as { error: { code: string } }).error.code]).toEqual([429, '1', 'rate_limited']);
      await holder.query('commit');
      answers = await Promise.all(offered);
    } finally {
      await holder.end();
    }

    const admitted = nodes.filter((_, i) => answers[i]!.status === 200).map((n) => n.node_id);
    expect(admitted).toHaveLength(2);
    for (const r of answers.filter((a) => a.status !== 200)) {
      expect([r.status, r.body.error.code, r.body.error.retryable]).toEqual([429, 'rate_limited', true]);
      expect(r.headers.get('retry-after')).toBe('1');
    }
    // The admitted beats are recorded; the shed ones wrote nothing.
    expect(await livenessOf()).toEqual([...admitted].sort());
    // The slots are free again: the next beat of a shed node is admitted.
    const shed = nodes.find((n) => !admitted.includes(n.node_id))!;
    expect((await beat(shed.node_credential)).status).toBe(200);
    expect(await livenessOf()).toEqual([...admitted, shed.node_id].sort());
  });
});
