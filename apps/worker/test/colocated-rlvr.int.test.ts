import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor } from '@ito/agent';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';

/**
 * The example manifest on a booking of one node: RLVR's separation is `preferred`, so trainer and rollout share the
 * node (docs/pipeline.md, "Trainer and rollout"). The rank-0 trainer samples its own batches and posts them through
 * the exchange, so the stage ends instead of waiting for a rollout node that does not exist.
 */
describe('RLVR colocated on a one-node booking', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('postgres');
  });
  afterAll(async () => p?.close());

  it('runs the example manifest to succeeded, the trainer judged on the batches it sampled itself', async () => {
    const seed = await seedTenant(p.api, { nodes: 1 });
    const [node] = await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50 }), 1);
    const runId = await submitRun(p.api, seed);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 60_000);
    const events = await runEvents(p.api, seed, runId);
    expect(events.filter((e) => e.type === 'StageFailed').map((e) => e.data.reason)).toEqual([]);
    expect(events.at(-1)!.type).toBe('RunSucceeded');

    const started = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr')!.data;
    expect(started.tasks.map((t: any) => ({ node_id: t.node_id, role: t.role }))).toEqual([{ node_id: node!.node_id, role: 'trainer' }]);
    expect(started.spec.rollout).toBe('colocated');
    expect(events.some((e) => e.type === 'StageCompleted' && e.data.stage === 'rlvr')).toBe(true);

    // The control plane judged and counted the batches the trainer posted, as it would a rollout node's.
    const trained = events.find((e) => e.type === 'TaskCompleted' && e.data.stage === 'rlvr')!.data.metrics;
    expect(trained.rlvr_batches_accepted).toBeGreaterThan(0);
    const rollouts = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
    expect(rollouts).toHaveLength(1);
    expect(rollouts[0]).toMatchObject({ stage: 'rlvr', attempt: 1, accepted: trained.rlvr_batches_accepted, pending: 0 });
    expect(rollouts[0].policy_version).toBe(trained.rlvr_policy_version);
  }, 90_000);
});
