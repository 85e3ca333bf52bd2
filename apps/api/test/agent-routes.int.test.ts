import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { footprint } from '../../../test/support/api.js';
import { registeredNode, seedTenant, startPipeline, submitRun, type Pipeline } from '../../../test/support/pipeline.js';

/** The agent routes through HTTP, with the test playing the agents: node credentials, fencing, sequence numbers. */
describe('agent routes', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('postgres');
  });
  afterAll(async () => p?.close());

  const gpus = [{ index: 0, healthy: true }];
  const node = (bookingId: string, name: string) => registeredNode(p.api, bookingId, name, gpus);

  async function assignmentsOf(n: Awaited<ReturnType<typeof node>>, waitS = 10) {
    return (await n.call('GET', `/assignments?wait_s=${waitS}`)).body.data.assignments as any[];
  }

  // Seen once (a quiet `.ci/run`, 2026-12-06) answering at the very end of its wait, cause not found yet: the
  // pipeline slow to reach pretrain beside the rest of the suite, or a wake-up lost. The wait is the route's longest
  // and the test is retried once so the rest of the suite lands; a second miss fails it.
  it('hands a stage to the booking`s own nodes, fences reports by attempt and records each sequence number once', { retry: 1, timeout: 120_000 }, async () => {
    const seed = await seedTenant(p.api);
    const other = await seedTenant(p.api);
    const [a, b] = [await node(seed.bookingId, 'gpu-01'), await node(seed.bookingId, 'gpu-02')];
    const stranger = await node(other.bookingId, 'gpu-01');

    const waiting = assignmentsOf(a, 30);
    const started = Date.now();
    const runId = await submitRun(p.api, seed);
    const [task] = await waiting;
    // Woken by the tasks projection's notification, not by the end of the 30 s wait.
    expect(Date.now() - started).toBeLessThan(25_000);
    expect(task).toMatchObject({ run_id: runId, stage: 'pretrain', attempt: 1, status: 'assigned', next_seq: 1, directive: 'continue' });
    expect(task.spec).toMatchObject({ rank: 0, world_size: 2, kind: 'train', start_step: 0, resume_from: null });
    expect(JSON.stringify(task.spec)).not.toMatch(/ito_(sk|nc)_/);
    expect((await assignmentsOf(b, 0)).map((t) => t.spec.rank)).toEqual([1]);
    // A node of another booking is given nothing and cannot see or report on this run's task.
    expect(await assignmentsOf(stranger, 0)).toEqual([]);

    const before = await footprint(p.api);
    const progress = (seq: number, o: Record<string, unknown> = {}) => ({ attempt: 1, seq, step: 10, tokens: 100, loss: 3.2, elapsed_s: 1, ...o });
    const stolen = await stranger.call('POST', `/tasks/${task.task_id}/progress`, progress(1));
    expect([stolen.status, stolen.body.error.code]).toEqual([404, 'not_found']);
    // Nor can a node of the same booking report on its neighbour's task.
    const neighbour = await b.call('POST', `/tasks/${task.task_id}/progress`, progress(1));
    expect([neighbour.status, neighbour.body.error.code]).toEqual([404, 'not_found']);
    const stale = await a.call('POST', `/tasks/${task.task_id}/progress`, progress(1, { attempt: 2 }));
    expect([stale.status, stale.body.error.code, stale.body.error.details]).toEqual([409, 'invalid_state', { directive: 'stop' }]);
    const outside = await a.call('POST', `/tasks/${task.task_id}/checkpoint`, { attempt: 1, seq: 1, step: 10, uri: 'file:///etc/passwd', bytes: 1, save_seconds: 1, async: true });
    expect([outside.status, outside.body.error.code]).toEqual([400, 'validation_failed']);
    // Progress beyond the stage's planned steps is refused, and nothing is recorded.
    expect(task.spec.total_steps).toBeGreaterThan(10);
    const beyond = await a.call('POST', `/tasks/${task.task_id}/progress`, progress(1, { step: task.spec.total_steps + 1 }));
    expect([beyond.status, beyond.body.error.code]).toEqual([400, 'validation_failed']);
    const unknownKey = await a.call('POST', `/tasks/${task.task_id}/progress`, { ...progress(1), extra: 1 });
    expect([unknownKey.status, unknownKey.body.error.code]).toEqual([400, 'validation_failed']);
    // A restore report: only for the checkpoint an attempt resumes from (the first resumes from none), well formed,
    // and only by the task's own node.
    const restore = { attempt: 1, seq: 1, checkpoint_id: `ckpt_${'a'.repeat(32)}`, step: 0, bytes: 1, restore_seconds: 1 };
    const unresumed = await a.call('POST', `/tasks/${task.task_id}/restored`, restore);
    expect([unresumed.status, unresumed.body.error.code]).toEqual([400, 'validation_failed']);
    const malformed = await a.call('POST', `/tasks/${task.task_id}/restored`, { ...restore, checkpoint_id: '../../etc', restore_seconds: -1 });
    expect([malformed.status, malformed.body.error.code]).toEqual([400, 'validation_failed']);
    const foreign = await stranger.call('POST', `/tasks/${task.task_id}/restored`, restore);
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);
    expect(await footprint(p.api)).toEqual(before);

    const first = await a.call('POST', `/tasks/${task.task_id}/progress`, progress(1));
    expect(first.body.data).toEqual({ task_id: task.task_id, duplicate: false, directive: 'continue' });
    const again = await a.call('POST', `/tasks/${task.task_id}/progress`, progress(1));
    expect(again.body.data).toEqual({ task_id: task.task_id, duplicate: true, directive: 'continue' });
    const recorded = await p.api.pool.query(`select count(*)::int as n from events where type = 'ProgressRecorded' and data->>'task_id' = $1`, [task.task_id]);
    expect(recorded.rows[0].n).toBe(1);
    // Nor may progress go back within the attempt.
    const backwards = await a.call('POST', `/tasks/${task.task_id}/progress`, progress(2, { step: 9 }));
    expect([backwards.status, backwards.body.error.code]).toEqual([400, 'validation_failed']);
    const still = await p.api.pool.query(`select count(*)::int as n from events where type = 'ProgressRecorded' and data->>'task_id' = $1`, [task.task_id]);
    expect(still.rows[0].n).toBe(1);

    // A node credential is the agent's and nothing else's.
    expect((await p.api.call('GET', '/v1/runs', { key: a.credential })).body.error.code).toBe('forbidden');
    expect((await p.api.call('GET', `/v1/runs/${runId}`, { key: a.credential })).body.error.code).toBe('forbidden');
    // An API key cannot pose as an agent.
    expect((await p.api.call('GET', '/v1/agent/assignments', { key: seed.requester })).body.error.code).toBe('forbidden');

    // The heartbeat tells an agent to stop a task that is not (or no longer) its.
    const hb = await stranger.call('POST', '/heartbeat', { tasks: [{ task_id: task.task_id, attempt: 1 }], gpus });
    expect(hb.body.data.stop).toEqual([{ task_id: task.task_id, reason: 'no such task on this node' }]);
    const mine = await a.call('POST', '/heartbeat', { tasks: [{ task_id: task.task_id, attempt: 1 }], gpus });
    expect(mine.body.data).toMatchObject({ stop: [], directives: [] });
  });
});
