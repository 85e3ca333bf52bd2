import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { makeAssignment } from './support/tasks.js';
import { processExecutor, referenceTrainer, runTask } from './support/process.js';

let dir: string;
let storage: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-post-'));
  storage = `file://${dir}/ckpt/`;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('the reference trainer post-training through the process executor', () => {
  it('SFT then DPO from its policy: the loss falls, then preference accuracy rises from 0', async () => {
    const executor = processExecutor(dir, referenceTrainer('--progress-every-steps', '10'));
    const sft = makeAssignment({ stage: 'sft', total_steps: 80, checkpoint: { storage }, recipe: { epochs: 1 } });
    const a = await runTask(executor, sft);
    expect(a.outcome).toMatchObject({ kind: 'completed', step: 80 });
    const sftMetrics = (a.outcome as { metrics: Record<string, number> }).metrics;
    expect(sftMetrics.sft_loss_last).toBeLessThan(sftMetrics.sft_loss_first! * 0.5);
    const last = a.events.checkpoints.at(-1)!;

    const dpo = makeAssignment(
      { stage: 'dpo', total_steps: 60, checkpoint: { storage }, recipe: { beta: 0.1 }, init_from: { checkpoint_id: `ckpt_${'b'.repeat(32)}`, uri: last.uri, step: last.step } },
      { runId: sft.run_id },
    );
    const b = await runTask(executor, dpo);
    const dpoMetrics = (b.outcome as { metrics: Record<string, number> }).metrics;
    expect(b.events.logs.some((l) => l.includes('initialised from the sft policy'))).toBe(true);
    expect(dpoMetrics.dpo_preference_accuracy_first).toBe(0);
    expect(dpoMetrics.dpo_preference_accuracy_last).toBeGreaterThan(0.5);
  });

  it('an RLVR trainer whose agent has no exchange is answered exchange_refused at once, and fails instead of waiting', async () => {
    const executor = processExecutor(dir, referenceTrainer());
    const rlvr = makeAssignment({ stage: 'rlvr', total_steps: 5, checkpoint: { storage }, recipe: { max_policy_staleness: 1, dapo: true } });
    const { outcome, events } = await runTask(executor, rlvr);
    expect(outcome).toMatchObject({ kind: 'failed', failure: 'crash' });
    expect(events.logs.some((l) => l.includes('no rollout exchange for this task'))).toBe(true);
    expect(events.logs.some((l) => l.includes('refused the exchange (invalid_state)'))).toBe(true);
  });
});
