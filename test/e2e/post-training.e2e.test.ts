import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessExecutor, SimulatedExecutor, parseSimFaults } from '@ito/agent';
import { EXAMPLE_MANIFEST } from '../support/api.js';
import { redisForTests } from '../support/db.js';
import { postTrainingManifest } from '../support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type BackendKind, type Pipeline } from '../support/pipeline.js';

const REFERENCE_TRAINER = resolve(import.meta.dirname, '../../apps/agent/dist/trainers/reference-trainer.js');
const EXAMPLE_RECIPE = JSON.parse(EXAMPLE_MANIFEST).post_training.recipe;

/**
 * Post-training end to end with the process executor: the example manifest's recipe (SFT → DPO → RLVR) on two
 * agents, each step run by the reference trainer in its own process, RLVR's trainer and rollout on different
 * nodes exchanging policy versions and batches through the control plane.
 */
describe('post-training with the process executor and the reference trainer', () => {
  let p: Pipeline;
  let dir: string;
  beforeAll(async () => {
    if (!existsSync(REFERENCE_TRAINER)) throw new Error(`${REFERENCE_TRAINER} is missing: run npm run build first`);
    dir = mkdtempSync(join(tmpdir(), 'ito-post-training-'));
    p = await startPipeline('postgres');
  });
  afterAll(async () => {
    await p?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('SFT loss falls, DPO preference accuracy rises, GRPO verified reward rises, over-stale batches are rejected and counted', async () => {
    const seed = await seedTenant(p.api);
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['file'], prefixes: [] }, file_roots: [dir] } });
    const argv = [process.execPath, REFERENCE_TRAINER, '--progress-every-steps', '10', '--batches-per-step', '1', '--stale-batch-every', '4'];
    const nodes = await p.startNodes(seed, (node) => new ProcessExecutor({ trainerConfig: { trainers: { default: { argv } } }, workDir: join(dir, node), stopGraceMs: 5_000, killGraceMs: 2_000 }));
    const manifest = postTrainingManifest(EXAMPLE_RECIPE, (m) => {
      m.checkpoint.storage = `file://${dir}/ckpt/`;
      m.eval.gates = { sft: { heldout_loss: { max: 10 } }, dpo: { heldout_loss: { max: 10 } }, rlvr: { accuracy: { min: 0.05 } }, post_training: { heldout_loss: { max: 10 } } };
      // RLVR takes a share of the target tokens: enough for about a hundred policy versions.
      m.target.tokens = 20_000_000_000;
    });
    const runId = await submitRun(p.api, seed, manifest);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 180_000);
    const events = await runEvents(p.api, seed, runId);
    expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
    expect(events.filter((e) => e.type === 'StageCompleted').map((e) => e.data.stage)).toEqual(['data_prep', 'planning', 'sft', 'eval_sft', 'dpo', 'eval_dpo', 'rlvr', 'eval_rlvr', 'eval_post_training']);
    // Each step's gate was checked on the policy that step left.
    expect(events.filter((e) => e.type === 'EvalGatePassed').map((e) => e.data.stage)).toEqual(['sft', 'dpo', 'rlvr', 'post_training']);

    const completed = (stage: string) => events.filter((e) => e.type === 'TaskCompleted' && e.data.stage === stage);
    const leader = (stage: string) => completed(stage).find((e) => e.data.metrics && Object.keys(e.data.metrics).length > 0)!.data.metrics;
    const sft = leader('sft');
    expect(sft.sft_loss_last).toBeLessThan(sft.sft_loss_first * 0.7);
    const dpo = leader('dpo');
    expect(dpo.dpo_preference_accuracy_first).toBe(0);
    expect(dpo.dpo_preference_accuracy_last).toBeGreaterThan(dpo.dpo_preference_accuracy_first + 0.3);
    const rlvr = leader('rlvr');
    expect(rlvr.rlvr_reward_last).toBeGreaterThan(rlvr.rlvr_reward_first + 0.05);
    expect(rlvr.rlvr_batches_rejected).toBeGreaterThan(0);
    expect(rlvr.rlvr_dropped_groups).toBeGreaterThan(0);

    // The policy versions the trainer published for its rollout were removed with the stage: nothing is left behind.
    expect(readdirSync(join(dir, 'ckpt', runId, 'rlvr')).filter((f) => f.startsWith('policy-'))).toEqual([]);

    // Trainer and rollout ran on different nodes of the booking.
    const started = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr')!.data;
    const byRole = Object.fromEntries(started.tasks.map((t: any) => [t.role, t.node_id]));
    expect(Object.keys(byRole).sort()).toEqual(['rollout', 'trainer']);
    expect(byRole.trainer).not.toBe(byRole.rollout);
    expect(new Set(nodes.map((n) => n.node_id))).toEqual(new Set([byRole.trainer, byRole.rollout]));

    // The run's metrics count what the control plane judged: every rejection was over the bound of 2.
    const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
    expect(metrics).toHaveLength(1);
    const m = metrics[0];
    expect(m.rejected).toBe(rlvr.rlvr_batches_rejected);
    expect(m.accepted).toBe(rlvr.rlvr_batches_accepted);
    for (const [staleness, counts] of Object.entries(m.staleness_histogram) as Array<[string, { accepted: number; rejected: number }]>) {
      if (Number(staleness) > 2) expect(counts.accepted).toBe(0);
      else expect(counts.rejected).toBe(0);
    }
  }, 180_000);

  it('on a one-node booking the reference trainer runs RLVR colocated: it samples its own batches, the reward rises, the run succeeds', async () => {
    const seed = await seedTenant(p.api, { nodes: 1 });
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['file'], prefixes: [] }, file_roots: [dir] } });
    const argv = [process.execPath, REFERENCE_TRAINER, '--progress-every-steps', '10', '--batches-per-step', '1'];
    const [node] = await p.startNodes(seed, (name) => new ProcessExecutor({ trainerConfig: { trainers: { default: { argv } } }, workDir: join(dir, `solo-${name}`), stopGraceMs: 5_000, killGraceMs: 2_000 }), 1, 'solo');
    // The example's recipe: SFT and DPO first give the policy a reward GRPO can raise.
    const manifest = postTrainingManifest(EXAMPLE_RECIPE, (m) => {
      m.checkpoint.storage = `file://${dir}/solo-ckpt/`;
      m.eval.gates = { post_training: { heldout_loss: { max: 10 } } };
    });
    const runId = await submitRun(p.api, seed, manifest);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 120_000);
    const events = await runEvents(p.api, seed, runId);
    expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
    const started = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr')!.data;
    expect(started.tasks.map((t: any) => [t.node_id, t.role])).toEqual([[node!.node_id, 'trainer']]);
    expect(started.spec.rollout).toBe('colocated');
    const rlvr = events.find((e) => e.type === 'TaskCompleted' && e.data.stage === 'rlvr')!.data.metrics;
    expect(rlvr.rlvr_batches_accepted).toBeGreaterThan(0);
    expect(rlvr.rlvr_reward_last).toBeGreaterThan(rlvr.rlvr_reward_first);
    const [m] = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
    expect(m).toMatchObject({ stage: 'rlvr', attempt: 1, accepted: rlvr.rlvr_batches_accepted, rejected: 0, pending: 0 });
  }, 150_000);
});

const redis = redisForTests();
const BACKENDS: Array<{ kind: BackendKind; skip: boolean; why: string }> = [
  { kind: 'redis', skip: !redis.url, why: redis.skipReason ?? '' },
  { kind: 'postgres', skip: false, why: '' },
];

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`post-training with the simulated executor on the ${backend.kind} backend${backend.skip ? ` (skipped: ${backend.why})` : ''}`, () => {
    let p: Pipeline;
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
    });
    afterAll(async () => p?.close());

    it('a post-training step whose gate fails stops the run: gate_failed, and no later step starts', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50 }));
      const manifest = postTrainingManifest(EXAMPLE_RECIPE, (m) => (m.eval.gates = { dpo: { mmlu: { min: 0.99 } }, post_training: { heldout_loss: { max: 10 } } }));
      const runId = await submitRun(p.api, seed, manifest);
      await waitForState(p.api, seed, runId, ['gate_failed', 'succeeded', 'failed'], 120_000);
      const events = await runEvents(p.api, seed, runId);
      expect(events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage)).toEqual(['data_prep', 'planning', 'sft', 'dpo', 'eval_dpo']);
      const failed = events.find((e) => e.type === 'EvalGateFailed')!;
      expect(failed.data).toMatchObject({ stage: 'dpo' });
      expect(failed.data.failed[0]).toMatch(/^mmlu .* < min 0\.99$/);
    }, 120_000);

    it('a rollout that crashes mid-stage fails the attempt like any task, and the retried attempt splits the nodes again', async () => {
      const seed = await seedTenant(p.api);
      // gpu-02 is rank 1, the rollout node: its agent crashes the rollout after 3 batches, once.
      await p.startNodes(seed, (node) => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50, faults: node === 'gpu-02' ? parseSimFaults('crash@step=3,stage=rlvr') : [] }));
      const manifest = postTrainingManifest(undefined, (m) => (m.target.tokens = 20_000_000_000));
      const runId = await submitRun(p.api, seed, manifest);
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 120_000);
      const events = await runEvents(p.api, seed, runId);
      expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
      const failed = events.find((e) => e.type === 'StageFailed')!.data;
      expect(failed).toMatchObject({ stage: 'rlvr', attempt: 1, failure: 'crash' });
      const rollout = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr' && e.data.attempt === 1)!.data.tasks.find((t: any) => t.role === 'rollout');
      expect(failed.task_id).toBe(rollout.task_id);
      const retry = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr' && e.data.attempt === 2)!.data;
      expect(retry.tasks.map((t: any) => t.role)).toEqual(['trainer', 'rollout']);
      // Each attempt has its own exchange: the retry's starts again at policy version 0.
      const [m1, m2] = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
      expect([m1.attempt, m2.attempt]).toEqual([1, 2]);
      expect(m1.batches).toBeGreaterThanOrEqual(3);
      expect(m2.accepted).toBeGreaterThan(0);
    }, 120_000);

    it('runs SFT → DPO → RLVR with trainer and rollout on different nodes, the modelled reward rising and the bound held', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50 }));
      const manifest = postTrainingManifest(EXAMPLE_RECIPE, (m) => {
        m.target.tokens = 20_000_000_000;
        m.eval.gates = { post_training: { heldout_loss: { max: 10 } } };
      });
      const runId = await submitRun(p.api, seed, manifest);
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 120_000);
      const events = await runEvents(p.api, seed, runId);
      expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
      expect(events.filter((e) => e.type === 'StageCompleted').map((e) => e.data.stage)).toEqual(['data_prep', 'planning', 'sft', 'dpo', 'rlvr', 'eval_post_training']);
      const started = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'rlvr')!.data;
      const roles = started.tasks.map((t: any) => [t.rank, t.role]);
      expect(roles).toEqual([
        [0, 'trainer'],
        [1, 'rollout'],
      ]);
      expect(started.tasks[0].node_id).not.toBe(started.tasks[1].node_id);
      const rlvr = events.find((e) => e.type === 'TaskCompleted' && e.data.stage === 'rlvr' && e.data.metrics?.rlvr_batches_accepted !== undefined)!.data.metrics;
      expect(rlvr.rlvr_batches_accepted).toBeGreaterThanOrEqual(4);
      expect(rlvr.rlvr_reward_last).toBeGreaterThan(rlvr.rlvr_reward_first);
      const [m] = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data.rollouts;
      expect(m).toMatchObject({ stage: 'rlvr', attempt: 1, accepted: rlvr.rlvr_batches_accepted, rejected: rlvr.rlvr_batches_rejected });
      expect(m.dropped_groups).toBeGreaterThan(0);
      for (const [staleness, counts] of Object.entries(m.staleness_histogram) as Array<[string, { accepted: number; rejected: number }]>) {
        if (Number(staleness) > 2) expect(counts.accepted).toBe(0);
        else expect(counts.rejected).toBe(0);
      }
    }, 120_000);
  });
}
