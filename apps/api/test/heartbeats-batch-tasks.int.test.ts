import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registeredNode, seedTenant, startPipeline, submitRun, type Pipeline } from '../../../test/support/pipeline.js';

/**
 * The tasks a batch's beats name are read once for the whole batch, and each is judged for its own beat's node
 * only: a node that names its own task is answered as a single heartbeat would be (its step recorded for the
 * monitor), and one that names another node's task (of its booking or of another tenant) is told to stop it.
 */
describe('batched heartbeats naming tasks', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('postgres');
  });
  afterAll(async () => p?.close());

  const gpus = [{ index: 0, healthy: true }];
  const node = (bookingId: string, name: string) => registeredNode(p.api, bookingId, name, gpus);
  const assignmentsOf = async (credential: string) => (await p.api.call('GET', '/v1/agent/assignments?wait_s=0', { key: credential })).body.data.assignments as any[];

  it("answers each beat for its own node's tasks, and tells a node naming another's task to stop it", async () => {
    const seed = await seedTenant(p.api);
    const other = await seedTenant(p.api);
    const [a, b] = [await node(seed.bookingId, 'gpu-01'), await node(seed.bookingId, 'gpu-02')];
    const stranger = await node(other.bookingId, 'gpu-01');
    await submitRun(p.api, seed);
    let ta: any;
    let tb: any;
    for (let i = 0; i < 200 && !(ta && tb); i++) {
      [ta] = await assignmentsOf(a.node_credential);
      [tb] = await assignmentsOf(b.node_credential);
      if (!(ta && tb)) await new Promise((r) => setTimeout(r, 50));
    }
    expect([ta?.node_id ?? a.node_id, tb?.node_id ?? b.node_id]).toEqual([a.node_id, b.node_id]);

    const beats = [
      { credential: a.node_credential, tasks: [{ task_id: ta.task_id, attempt: 1, step: 5 }], gpus },
      { credential: b.node_credential, tasks: [{ task_id: ta.task_id, attempt: 1, step: 9 }, { task_id: tb.task_id, attempt: 1 }], gpus },
      { credential: stranger.node_credential, tasks: [{ task_id: tb.task_id, attempt: 1, step: 7 }], gpus },
    ];
    const answer = await p.api.call('POST', '/v1/agent/heartbeats', { key: a.node_credential, body: { beats } });
    expect(answer.status).toBe(200);
    expect(answer.body.data.beats).toEqual([
      { ok: true, node_id: a.node_id, stop: [], directives: [] },
      { ok: true, node_id: b.node_id, stop: [{ task_id: ta.task_id, reason: 'no such task on this node' }], directives: [] },
      { ok: true, node_id: stranger.node_id, stop: [{ task_id: tb.task_id, reason: 'no such task on this node' }], directives: [] },
    ]);
    const { rows } = await p.api.pool.query<{ node_id: string; task_id: string | null; step: number | null }>('select node_id, task_id, step from node_liveness where node_id = $1', [a.node_id]);
    expect(rows).toEqual([{ node_id: a.node_id, task_id: ta.task_id, step: 5 }]);
    // A stale attempt of its own task is to stop too, as on the single route.
    const stale = await p.api.call('POST', '/v1/agent/heartbeats', { key: a.node_credential, body: { beats: [{ credential: a.node_credential, tasks: [{ task_id: ta.task_id, attempt: 2 }], gpus }] } });
    expect(stale.body.data.beats[0].stop).toEqual([{ task_id: ta.task_id, reason: 'no such task on this node' }]);
  });
});
