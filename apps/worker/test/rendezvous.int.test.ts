import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor } from '@ito/agent';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';

/**
 * Where the ranks of a multi-node stage meet: the endpoint rank 0's agent offered when it registered travels in the
 * spec of every task of a stage on two nodes; a one-node stage (evaluation) carries none.
 */
describe('the rendezvous of a multi-node stage', () => {
  let p: Pipeline;
  beforeAll(async () => {
    p = await startPipeline('postgres');
  });
  afterAll(async () => {
    await p?.close();
  });

  it("names rank 0's endpoint in every task of a stage on two nodes, and none on one node", async () => {
    const seed = await seedTenant(p.api);
    const endpoints: Record<string, { addr: string; port: number }> = { 'gpu-01': { addr: '10.1.0.1', port: 29501 }, 'gpu-02': { addr: '10.1.0.2', port: 29502 } };
    const nodes = await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50 }), 2, 'gpu', (name) => endpoints[name]!);
    const runId = await submitRun(p.api, seed);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 120_000);
    const started = (await runEvents(p.api, seed, runId)).filter((e) => e.type === 'StageStarted' && e.data.spec);
    const pretrain = started.find((e) => e.data.stage === 'pretrain')!;
    expect(pretrain.data.tasks).toHaveLength(2);
    const rank0 = nodes.find((n) => n.node_id === pretrain.data.tasks.find((t: { rank: number }) => t.rank === 0).node_id)!;
    const rank0Name = rank0 === nodes[0] ? 'gpu-01' : 'gpu-02';
    expect(pretrain.data.spec.rendezvous).toEqual({ master_addr: endpoints[rank0Name]!.addr, master_port: endpoints[rank0Name]!.port });
    const evaluation = started.find((e) => e.data.stage.startsWith('eval_'))!;
    expect(evaluation.data.tasks).toHaveLength(1);
    expect(evaluation.data.spec.rendezvous).toBeNull();
  }, 150_000);
});
