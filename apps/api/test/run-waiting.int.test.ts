import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedTenant, startApi, trainBody, trainConfirmation, type Api } from '../../../test/support/api.js';

/** A run on a booking without live nodes is accepted, and says so: in train's notice and in status. */
describe('what a run waits for', () => {
  let api: Api;
  beforeAll(async () => {
    api = await startApi();
  });
  afterAll(async () => api.close());

  const gpus = [{ index: 0, healthy: true }];
  async function liveNode(bookingId: string, name: string) {
    const n = await api.admin.registerNode({ bookingId, name });
    const reg = await api.call('POST', '/v1/agent/register', { key: n.node_credential, body: { agent_version: 'test', executor: 'simulated', gpus } });
    expect(reg.status).toBe(200);
  }

  it('train warns (not refuses) when no node of the booking is live; status says "waiting for nodes: 0 of 2 live", then 1 of 2', async () => {
    const seed = await seedTenant(api);
    // A registered node whose agent never dialled in is not live.
    await api.admin.registerNode({ bookingId: seed.bookingId, name: 'gpu-01' });
    const ref = await trainConfirmation(api, seed);
    const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'waiting-1' } });
    expect(r.status).toBe(201);
    expect(r.body.notice).toContain(`no node of booking ${seed.bookingId} is live (0 of 2)`);
    expect(r.body.notice).toContain('ito-agent');
    const runId = r.body.data.run_id as string;

    const view = (await api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data;
    expect(view.waiting).toEqual([{ reason: 'nodes', live: 0, needed: 2, message: 'waiting for nodes: 0 of 2 live' }]);
    const byKey = (await api.call('GET', '/v1/runs?idempotency_key=waiting-1', { key: seed.requester })).body.data.runs;
    expect(byKey[0].waiting[0].message).toBe('waiting for nodes: 0 of 2 live');

    await liveNode(seed.bookingId, 'gpu-02');
    const after = (await api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data;
    expect(after.waiting.map((w: any) => w.message)).toEqual(['waiting for nodes: 1 of 2 live']);
  });

  it('says nothing when the booking has its nodes live', async () => {
    const seed = await seedTenant(api);
    await liveNode(seed.bookingId, 'gpu-01');
    await liveNode(seed.bookingId, 'gpu-02');
    const ref = await trainConfirmation(api, seed);
    const r = await api.call('POST', '/v1/runs', { key: seed.requester, body: trainBody(seed, ref), headers: { 'idempotency-key': 'waiting-2' } });
    expect(r.status).toBe(201);
    expect(r.body.notice).toBeNull();
    const view = (await api.call('GET', `/v1/runs/${r.body.data.run_id}`, { key: seed.requester })).body.data;
    expect(view.waiting).toEqual([]);
  });
});
