import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor, parseSimFaults } from '@ito/agent';
import { redisForTests } from '../../../test/support/db.js';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type BackendKind, type Pipeline } from '../../../test/support/pipeline.js';

const redis = redisForTests();
const BACKENDS: Array<{ kind: BackendKind; skip: boolean; why: string }> = [
  { kind: 'redis', skip: !redis.url, why: redis.skipReason ?? '' },
  { kind: 'postgres', skip: false, why: '' },
];

const simulated = (faults?: string) => () => new SimulatedExecutor({ timeScale: 100_000, progressIntervalMs: 50, faults: parseSimFaults(faults) });
/** The example's first data ref marked custom: the run must pass the 150M ladder before pretraining. */
const customManifest = smallManifest((m) => (m.data[0].origin = 'custom'));

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`the 150M ladder on the ${backend.kind} backend${backend.skip ? ` (skipped: ${backend.why})` : ''}`, () => {
    let p: Pipeline;
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
    });
    afterAll(async () => p?.close());

    it('custom data runs both proxies through the executor, records LadderDecision with both figures, and goes on when it passes', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, simulated());
      const runId = await submitRun(p.api, seed, customManifest);
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      expect(events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage)).toEqual(['data_prep', 'planning', 'ladder_custom', 'ladder_reference', 'pretrain', 'eval_pretrain']);
      const proxies = events.filter((e) => e.type === 'StageStarted' && e.data.stage.startsWith('ladder_'));
      for (const s of proxies) {
        expect(s.data.tasks).toHaveLength(1);
        expect(s.data.spec).toMatchObject({ kind: 'ladder', model: { parameters: 150e6 }, tokens: 3e9, init_from: null, ladder: { mix: s.data.stage.slice('ladder_'.length), data_refs: [0] } });
      }
      const decision = events.find((e) => e.type === 'LadderDecision')!;
      const losses = Object.fromEntries(events.filter((e) => e.type === 'StageCompleted' && e.data.stage.startsWith('ladder_')).map((e) => [e.data.stage, e.data.metrics.proxy_eval_loss]));
      expect(decision.data).toEqual({ run_id: runId, custom_loss: losses.ladder_custom, reference_loss: losses.ladder_reference, rule: 'custom mix proxy eval loss ≤ reference × 1.02', tolerance: 0.02, passed: true, custom_refs: [0] });
      expect(decision.data.custom_loss).toBeGreaterThan(decision.data.reference_loss);
      // Decided when the reference proxy completed, before pretraining was scheduled.
      expect(events.indexOf(decision)).toBeLessThan(events.findIndex((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain'));
      expect(events.at(-1)!.type).toBe('RunSucceeded');
      const metrics = (await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester })).body.data;
      expect(metrics.ladder).toEqual(decision.data);
    });

    it('a custom mix whose proxy loss is too far above the reference fails the run before any large stage, with the reason in status', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, simulated('proxy_loss@step=0,factor=1.1'));
      const runId = await submitRun(p.api, seed, customManifest);
      const run = await waitForState(p.api, seed, runId, ['failed', 'succeeded', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      expect(events.filter((e) => e.type === 'StageStarted').map((e) => e.data.stage)).toEqual(['data_prep', 'planning', 'ladder_custom', 'ladder_reference']);
      const decision = events.find((e) => e.type === 'LadderDecision')!;
      expect(decision.data.passed).toBe(false);
      expect(decision.data.custom_loss).toBeGreaterThan(decision.data.reference_loss * 1.02);
      expect(events.at(-1)!).toMatchObject({ type: 'RunFailed', data: { code: 'data_policy_violation' } });
      expect(run.state).toBe('failed');
      expect(run.failure).toEqual({ code: 'data_policy_violation', reason: expect.stringMatching(/^the custom mix failed the 150M ladder: proxy eval loss [\d.]+ is [\d.]+% above the reference mix's [\d.]+ \(at most 2% allowed\); no large stage was scheduled$/) });
      const active = await p.api.pool.query(`select count(*)::int as n from tasks where run_id = $1 and status in ('assigned', 'running')`, [runId]);
      expect(active.rows[0].n).toBe(0);
    });
  });
}
