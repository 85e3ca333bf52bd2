import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { EXAMPLE_MANIFEST } from '../../../test/support/api.js';
import { redisForTests } from '../../../test/support/db.js';
import { SimulatedExecutor, parseSimFaults, type Executor, type TaskOutcome } from '@ito/agent';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type BackendKind, type Pipeline } from '../../../test/support/pipeline.js';

const redis = redisForTests();
const BACKENDS: Array<{ kind: BackendKind; skip: boolean; why: string }> = [
  { kind: 'redis', skip: !redis.url, why: redis.skipReason ?? '' },
  { kind: 'postgres', skip: false, why: '' },
];

/** The simulated executor at a clock fast enough that the example's 80 planned hours take a few seconds. */
const simulated = (o: { faults?: string; timeScale?: number } = {}) => () =>
  new SimulatedExecutor({ timeScale: o.timeScale ?? 100_000, progressIntervalMs: 50, faults: parseSimFaults(o.faults) });

/**
 * A trainer that reports once more as it stops: after a cancel that report reaches the API behind the withdrawal
 * and is refused, and the agent must still confirm the stop that follows it.
 */
const lastWordOnStop = () => (): Executor => ({
  kind: 'simulated',
  start(_assignment, events) {
    let end!: (o: TaskOutcome) => void;
    const done = new Promise<TaskOutcome>((r) => (end = r));
    setTimeout(() => events.progress({ step: 1, tokens: 4096, loss: 2.5, elapsed_s: 0.1 }), 10);
    let stopping = false;
    return {
      done,
      stop({ reason }) {
        if (stopping) return;
        stopping = true;
        events.progress({ step: 2, tokens: 8192, loss: 2.4, elapsed_s: 0.2 });
        end({ kind: 'stopped', reason, step: 2, elapsed_s: 0.2 });
      },
    };
  },
});

/**
 * Waits until every agent has let go of its tasks, or the deadline passes. The API records a stop before its answer
 * reaches the agent, and the agent lets go of the task only once that answer is in; a check straight after the
 * stop is seen in the ledger would race the answer.
 */
const tasksReleased = async (nodes: Array<{ agent: { tasks: string[] } }>, deadline: number) => {
  while (nodes.some((n) => n.agent.tasks.length > 0) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
  return nodes.map((n) => n.agent.tasks);
};

const withGate = (stage: string, metric: string, bound: Record<string, number>) => {
  const m = JSON.parse(EXAMPLE_MANIFEST);
  m.eval.gates[stage] = { ...(m.eval.gates[stage] ?? {}), [metric]: bound };
  return JSON.stringify(m, null, 2);
};

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`the pipeline on the ${backend.kind} backend${backend.skip ? ` (skipped: ${backend.why})` : ''}`, () => {
    let p: Pipeline;
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
    });
    afterAll(async () => p?.close());

    it('drives a confirmed run through every stage to succeeded, with checkpoints and metrics served', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, simulated());
      const runId = await submitRun(p.api, seed);
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      const stages = events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage);
      expect(stages).toEqual(['data_prep', 'planning', 'pretrain', 'eval_pretrain', 'mid_train', 'eval_mid_train', 'long_context', 'eval_long_context', 'sft', 'dpo', 'rlvr', 'eval_post_training']);
      // Each stage completes before the next starts, every gate passes, and the run ends succeeded.
      const order = events.filter((e) => ['StageStarted', 'StageCompleted'].includes(e.type)).map((e) => `${e.type === 'StageStarted' ? '+' : '-'}${e.data.stage}`);
      expect(order).toEqual(stages.flatMap((s) => [`+${s}`, `-${s}`]));
      expect(events.filter((e) => e.type === 'EvalGatePassed').map((e) => e.data.stage)).toEqual(['pretrain', 'mid_train', 'long_context', 'post_training']);
      expect(events.at(-1)!.type).toBe('RunSucceeded');
      // keep_last 3: three checkpoints stay listed, every older one was deleted and the deletion recorded.
      const saved = events.filter((e) => e.type === 'CheckpointSaved').length;
      const deleted = events.filter((e) => e.type === 'CheckpointDeleted').length;
      const listed = (await p.api.call('GET', `/v1/runs/${runId}/checkpoints`, { key: seed.requester })).body.data.checkpoints;
      expect(listed).toHaveLength(3);
      expect(saved - deleted).toBe(3);
      const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data;
      expect(metrics.series.length).toBeGreaterThan(5);
      const active = await p.api.pool.query(`select count(*)::int as n from tasks where run_id = $1 and status in ('assigned', 'running')`, [runId]);
      expect(active.rows[0].n).toBe(0);
    });

    it('a gate that cannot be met ends the run gate_failed, and no later stage starts', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, simulated());
      const runId = await submitRun(p.api, seed, withGate('mid_train', 'mmlu', { min: 0.99 }));
      await waitForState(p.api, seed, runId, ['gate_failed', 'succeeded', 'failed']);
      await new Promise((r) => setTimeout(r, 300)); // a later stage would have started by now
      const events = await runEvents(p.api, seed, runId);
      const failed = events.findIndex((e) => e.type === 'EvalGateFailed');
      expect(events[failed]!.data.stage).toBe('mid_train');
      expect(events[failed]!.data.failed).toEqual([expect.stringMatching(/^mmlu 0\.\d+ < min 0\.99$/)]);
      expect(events.slice(failed).filter((e) => e.type === 'StageStarted')).toEqual([]);
      expect(events.filter((e) => e.type === 'StageStarted').at(-1)!.data.stage).toBe('eval_mid_train');
      expect((await p.api.call('GET', `/v1/runs/${runId}`, { key: seed.requester })).body.data.state).toBe('gate_failed');
    });

    it('cancel mid-stage withdraws the tasks, the agents stop them, and the run ends cancelled', async () => {
      const seed = await seedTenant(p.api);
      const nodes = await p.startNodes(seed, simulated({ timeScale: 100 }));
      const runId = await submitRun(p.api, seed);
      await waitForState(p.api, seed, runId, ['training']);
      // Both agents have their task in hand before the cancel.
      for (let i = 0; i < 200 && nodes.some((n) => n.agent.tasks.length === 0); i++) await new Promise((r) => setTimeout(r, 25));
      expect(nodes.map((n) => n.agent.tasks.length)).toEqual([1, 1]);
      const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cancel', run_id: runId } });
      await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
      const cancel = await p.api.call('POST', `/v1/runs/${runId}/cancel`, { key: seed.requester, body: { confirmation_ref: c.body.data.confirmation_ref }, headers: { 'idempotency-key': `cancel-${runId}` } });
      expect(cancel.body.data.state).toBe('cancelling');
      await waitForState(p.api, seed, runId, ['cancelled']);
      // Both agents confirm they stopped their task, and nothing is recorded for them after the cancel.
      const deadline = Date.now() + 10_000;
      let events = await runEvents(p.api, seed, runId);
      while (events.filter((e) => e.type === 'TaskStopped').length < 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        events = await runEvents(p.api, seed, runId);
      }
      const warnings = p.workerLog.filter((l) => l.includes('"level":40') || l.includes('"level":50')).join('').slice(0, 3000);
      const trail = `${events.map((e) => `${e.type}${e.data.task_id ? `:${String(e.data.task_id).slice(4, 10)}` : ''}`).join(' ')}\n${warnings}`;
      const requested = events.findIndex((e) => e.type === 'CancelRequested');
      const cancelled = events.findIndex((e) => e.type === 'RunCancelled');
      const stopped = events.filter((e) => e.type === 'TaskStopped');
      expect(new Set(stopped.map((e) => e.data.task_id)).size, trail).toBe(2);
      expect(events.indexOf(stopped[0]!)).toBeGreaterThan(requested);
      expect(events.slice(cancelled + 1).filter((e) => e.type !== 'TaskStopped'), trail).toEqual([]);
      expect(await tasksReleased(nodes, deadline)).toEqual([[], []]);
    });

    it('a task whose last report is refused after a cancel still confirms that it stopped', async () => {
      const seed = await seedTenant(p.api);
      const nodes = await p.startNodes(seed, lastWordOnStop());
      const runId = await submitRun(p.api, seed);
      await waitForState(p.api, seed, runId, ['training']);
      for (let i = 0; i < 200 && nodes.some((n) => n.agent.tasks.length === 0); i++) await new Promise((r) => setTimeout(r, 25));
      const refusedBefore = p.workerLog.filter((l) => l.includes('the API refused this task')).length;
      const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cancel', run_id: runId } });
      await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
      await p.api.call('POST', `/v1/runs/${runId}/cancel`, { key: seed.requester, body: { confirmation_ref: c.body.data.confirmation_ref }, headers: { 'idempotency-key': `cancel-${runId}` } });
      await waitForState(p.api, seed, runId, ['cancelled']);
      const deadline = Date.now() + 10_000;
      let stopped: Array<{ data: any }> = [];
      while (stopped.length < 2 && Date.now() < deadline) {
        await new Promise((r) => setTimeout(r, 50));
        stopped = (await runEvents(p.api, seed, runId)).filter((e) => e.type === 'TaskStopped');
      }
      // Both trainers' last progress was refused (the tasks were withdrawn), and both stops were recorded anyway.
      expect(p.workerLog.filter((l) => l.includes('the API refused this task')).length - refusedBefore).toBe(2);
      expect(new Set(stopped.map((e) => e.data.task_id)).size).toBe(2);
      expect(await tasksReleased(nodes, deadline)).toEqual([[], []]);
    });
  });
}

describe('a job that runs twice', () => {
  let p: Pipeline;
  beforeAll(async () => {
    // No relay and no job workers: the test delivers each job itself, twice and concurrently.
    p = await startPipeline('postgres', { relay: false });
  });
  afterAll(async () => p?.close());

  it('appends its events once, whether the deliveries overlap or follow each other', async () => {
    const seed = await seedTenant(p.api);
    const runId = await submitRun(p.api, seed);
    const ref = { tenant_id: seed.tenant.tenant_id, run_id: runId };
    const ctx = { jobId: 'x', attempt: 1, signal: new AbortController().signal };
    for (const stage of ['data_prep', 'planning'] as const) {
      const job = { ...ref, stage, attempt: 1 };
      const answers = await Promise.all([p.handlers['stage.start'](job, ctx), p.handlers['stage.start'](job, ctx)]);
      expect(answers).toContain('not needed');
      expect(await p.handlers['stage.start'](job, ctx)).toBe('not needed');
    }
    const types = (await runEvents(p.api, seed, runId)).map((e) => e.type);
    expect(types).toEqual([
      'RunReserved',
      'RunConfirmed',
      'PipelinePlanned',
      'StageStarted',
      'DataRefChecked',
      'DataRefChecked',
      'StageCompleted',
      'StageStarted',
      'PlanComputed',
      'StageCompleted',
    ]);
  });

  it('an agent shown a task it must not run waits for a change instead of asking again in a loop', async () => {
    const seed = await seedTenant(p.api);
    const runId = await submitRun(p.api, seed);
    const ref = { tenant_id: seed.tenant.tenant_id, run_id: runId };
    const ctx = { jobId: 'x', attempt: 1, signal: new AbortController().signal };
    // Register the nodes and make them live, but start no agent yet.
    const nodes = [];
    for (const name of ['gpu-01', 'gpu-02']) nodes.push(await p.api.admin.registerNode({ bookingId: seed.bookingId, name }));
    for (const n of nodes) await p.api.call('POST', '/v1/agent/heartbeat', { key: n.node_credential, body: { tasks: [], gpus: [] } });
    for (const stage of ['data_prep', 'planning', 'pretrain'] as const) await p.handlers['stage.start']({ ...ref, stage, attempt: 1 }, ctx);
    // Cancelling, with nobody to finish the cancel: the tasks stay listed, each with directive stop.
    const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action: 'run.cancel', run_id: runId } });
    await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
    await p.api.call('POST', `/v1/runs/${runId}/cancel`, { key: seed.requester, body: { confirmation_ref: c.body.data.confirmation_ref }, headers: { 'idempotency-key': `cancel-${runId}` } });
    const polls = async () => {
      const text = (await p.api.call('GET', '/metrics')).body as string;
      return [...text.matchAll(/^ito_http_requests_total\{[^}]*route="\/v1\/agent\/assignments"[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
    };
    const before = await polls();
    const agent = await p.startAgent(nodes[0]!.node_credential, new SimulatedExecutor({ timeScale: 100 }));
    await new Promise((r) => setTimeout(r, 1_500));
    expect(agent.tasks).toEqual([]);
    // One answer lists the task with directive stop; the next request is held (up to 5 s) until something changes.
    expect((await polls()) - before).toBeLessThanOrEqual(3);
  });
});

