import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
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

const simulated = (o: { faults?: string; timeScale: number }) => () =>
  new SimulatedExecutor({ timeScale: o.timeScale, progressIntervalMs: 20, faults: parseSimFaults(o.faults) });

const types = (events: Array<{ type: string }>) => events.map((e) => e.type);

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`pipeline faults on the ${backend.kind} backend${backend.skip ? ` (skipped: ${backend.why})` : ''}`, () => {
    let p: Pipeline;
    const dirs: string[] = [];
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
    });
    afterAll(async () => {
      await p?.close();
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });

    async function confirmAction(seed: Awaited<ReturnType<typeof seedTenant>>, action: string, runId: string) {
      const c = await p.api.call('POST', '/v1/confirmations', { key: seed.requester, body: { action, run_id: runId } });
      await p.api.call('POST', `/v1/confirmations/${c.body.data.confirmation_ref}/approve`, { key: seed.approver });
      return c.body.data.confirmation_ref as string;
    }

    it('a loss spike waits in awaiting_operator until a run.restart confirmation, then resumes from the checkpoint before it', async () => {
      const seed = await seedTenant(p.api);
      // 24 simulated seconds a step at 5,000×: about 5 ms a step, a progress report every 20 ms.
      await p.startNodes(seed, simulated({ timeScale: 5_000, faults: 'loss_spike@step=300,stage=pretrain' }));
      const runId = await submitRun(p.api, seed, smallManifest());
      await waitForState(p.api, seed, runId, ['awaiting_operator', 'succeeded', 'failed']);
      let events = await runEvents(p.api, seed, runId);
      const proposed = events.find((e) => e.type === 'RestartProposed')!;
      expect(proposed.data).toMatchObject({ stage: 'pretrain', skip_steps: { from: expect.any(Number), to: expect.any(Number) } });
      expect(proposed.data.skip_steps.from).toBeGreaterThanOrEqual(300);
      const from = events.find((e) => e.type === 'CheckpointSaved' && e.data.checkpoint_id === proposed.data.from_checkpoint_id)!;
      expect(from.data.step).toBeLessThanOrEqual(proposed.data.skip_steps.from);
      // Nothing moves while it waits: no new stage, no progress accepted.
      await new Promise((r) => setTimeout(r, 300));
      const waiting = await runEvents(p.api, seed, runId);
      expect(types(waiting.slice(events.length)).filter((t) => t !== 'TaskStopped')).toEqual([]);

      const ref = await confirmAction(seed, 'run.restart', runId);
      const restart = await p.api.call('POST', `/v1/runs/${runId}/restart`, { key: seed.requester, body: { confirmation_ref: ref }, headers: { 'idempotency-key': `restart-${runId}` } });
      expect(restart.body.data.state).toBe('training');
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      events = await runEvents(p.api, seed, runId);
      const resumed = events.find((e) => e.type === 'RunResumed')!;
      expect(resumed.data).toMatchObject({ stage: 'pretrain', attempt: 2, from_checkpoint_id: proposed.data.from_checkpoint_id, from_step: from.data.step });
      const second = events.find((e) => e.type === 'StageStarted' && e.data.stage === 'pretrain' && e.data.attempt === 2)!;
      expect(second.data.spec).toMatchObject({ start_step: from.data.step, skip_steps: proposed.data.skip_steps, resume_from: { checkpoint_id: from.data.checkpoint_id } });
      expect(events.at(-1)!.type).toBe('RunSucceeded');
    });

    it('a crashed task fails its attempt; the stage is retried from its last checkpoint and the run succeeds', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, simulated({ timeScale: 20_000, faults: 'crash@step=300,stage=pretrain,attempt=1' }));
      const runId = await submitRun(p.api, seed, smallManifest());
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      const failed = events.filter((e) => e.type === 'StageFailed');
      expect(failed).toHaveLength(1);
      expect(failed[0]!.data).toMatchObject({ stage: 'pretrain', attempt: 1, failure: 'crash' });
      const last = events.filter((e) => e.type === 'CheckpointSaved' && e.data.attempt === 1).at(-1)!;
      expect(events.find((e) => e.type === 'RunResumed')!.data).toMatchObject({ attempt: 2, from_checkpoint_id: last.data.checkpoint_id, from_step: last.data.step });
      expect(events.at(-1)!.type).toBe('RunSucceeded');
    });

    it('reaching the budget ceiling takes a final checkpoint, then BudgetExhausted ends the run failed', async () => {
      const seed = await seedTenant(p.api);
      // Nodes four times as slow as the planner thinks: the spend passes a ceiling set just above the plan's cost
      // early in the stage, with most of its steps still to go when the stop arrives.
      await p.startNodes(seed, simulated({ timeScale: 10_000, faults: 'slow@step=0,factor=4' }));
      const plan = await p.api.call('POST', '/v1/plans', { key: seed.requester, body: { booking_id: seed.bookingId, manifest: smallManifest() } });
      const ceiling = Math.ceil(plan.body.data.estimated_cost_usd * 1.2);
      const manifest = smallManifest((m) => (m.budget.ceiling_usd = ceiling));
      const runId = await submitRun(p.api, seed, manifest);
      const run = await waitForState(p.api, seed, runId, ['failed', 'succeeded', 'gate_failed']);
      expect(run.state).toBe('failed');
      const events = await runEvents(p.api, seed, runId);
      const stop = events.findIndex((e) => e.type === 'StopRequested');
      const exhausted = events.findIndex((e) => e.type === 'BudgetExhausted');
      const final = events.findIndex((e) => e.type === 'CheckpointSaved' && e.data.final === true);
      const trail = events.map((e) => `${e.type}${e.data.final ? '(final)' : ''}${e.data.task_id ? `:${String(e.data.task_id).slice(4, 8)}` : ''}`).join(' ');
      expect(stop, trail).toBeGreaterThan(0);
      expect(final, trail).toBeGreaterThan(stop);
      expect(exhausted).toBeGreaterThan(final);
      expect(events[exhausted]!.data).toMatchObject({ ceiling_usd: ceiling, final_checkpoint_id: events[final]!.data.checkpoint_id });
      expect(events[exhausted]!.data.spent_usd).toBeGreaterThanOrEqual(ceiling);
      expect(events[exhausted + 1]!).toMatchObject({ type: 'RunFailed', data: { code: 'budget_exceeded' } });
      expect(types(events).filter((t) => t === 'StageStarted')).toHaveLength(3); // data prep, planning, pretrain
    });

    it('cleanup removes the run`s checkpoint files through the storage driver and records each; the booking stays', async () => {
      const dir = mkdtempSync(join(tmpdir(), 'ito-ckpt-'));
      dirs.push(dir);
      const seed = await seedTenant(p.api);
      await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['s3', 'file'], prefixes: [] }, file_roots: [dir] } });
      await p.startNodes(seed, simulated({ timeScale: 50_000 }));
      const runId = await submitRun(p.api, seed, smallManifest((m) => (m.checkpoint.storage = `file://${dir}/ckpt/`)));
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      let events = await runEvents(p.api, seed, runId);
      const pruned = events.filter((e) => e.type === 'CheckpointDeleted');
      expect(pruned.length).toBeGreaterThan(0);
      for (const e of pruned) {
        expect(e.data).toMatchObject({ reason: 'keep_last', existed: true });
        expect(existsSync(fileURLToPath(e.data.uri))).toBe(false);
      }
      const kept = (await p.api.call('GET', `/v1/runs/${runId}/checkpoints`, { key: seed.requester })).body.data.checkpoints as Array<{ uri: string }>;
      expect(kept).toHaveLength(3);
      for (const c of kept) expect(existsSync(fileURLToPath(c.uri))).toBe(true);

      const ref = await confirmAction(seed, 'run.cleanup', runId);
      const cleanup = await p.api.call('POST', `/v1/runs/${runId}/cleanup`, { key: seed.requester, body: { confirmation_ref: ref }, headers: { 'idempotency-key': `cleanup-${runId}` } });
      expect(cleanup.body.data.state).toBe('cleaning_up');
      await waitForState(p.api, seed, runId, ['cleaned']);
      for (const c of kept) expect(existsSync(fileURLToPath(c.uri))).toBe(false);
      events = await runEvents(p.api, seed, runId);
      expect(events.at(-1)!).toMatchObject({ type: 'CleanupCompleted', data: { removed: kept.map((c) => c.uri), missing: [], booking_released: false } });
      expect((await p.api.call('GET', `/v1/bookings/${seed.bookingId}`, { key: seed.requester })).body.data.status).toBe('completed');
    });
  });
}
