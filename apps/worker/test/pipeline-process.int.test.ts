import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessExecutor, type TrainerConfig } from '@ito/agent';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type Pipeline } from '../../../test/support/pipeline.js';

const AGENT = resolve(import.meta.dirname, '../../agent');
const REFERENCE_TRAINER = join(AGENT, 'dist/trainers/reference-trainer.js');
const PYTHON_TRAINER = join(AGENT, 'python/example_trainer.py');

/**
 * The process executor end to end: real trainers in child processes on two agents, reporting through the trainer
 * protocol, writing and restoring real checkpoint files, driven by the real control plane.
 */
describe('the pipeline with the process executor', () => {
  let p: Pipeline;
  let dir: string;
  beforeAll(async () => {
    if (!existsSync(REFERENCE_TRAINER)) throw new Error(`${REFERENCE_TRAINER} is missing: run npm run build first`);
    dir = mkdtempSync(join(tmpdir(), 'ito-process-'));
    p = await startPipeline('postgres');
  });
  afterAll(async () => {
    await p?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function runWith(name: string, trainers: (node: string) => TrainerConfig) {
    const seed = await seedTenant(p.api);
    await p.api.admin.setTenantPolicy({ tenantId: seed.tenant.tenant_id, policy: { checkpoint_storage: { schemes: ['file'], prefixes: [] }, file_roots: [dir] } });
    await p.startNodes(seed, (node) => new ProcessExecutor({ trainerConfig: trainers(node), workDir: join(dir, name, node), stopGraceMs: 5_000, killGraceMs: 2_000 }));
    const manifest = smallManifest((m) => {
      m.checkpoint.storage = `file://${dir}/${name}/ckpt/`;
      m.eval.gates = { pretrain: { heldout_loss: { max: 10 } } };
    });
    const runId = await submitRun(p.api, seed, manifest);
    await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed'], 120_000);
    return { seed, runId, events: await runEvents(p.api, seed, runId) };
  }

  it('the reference trainer learns (loss falls), crashes once, and the retried attempt restores its checkpoint file', async () => {
    const marker = join(dir, 'crashed-once');
    // Rank 0 (gpu-01, first by name) crashes; its checkpoint at step 100 is on the same stdout before the crash.
    const crash = (node: string) => (node === 'gpu-01' ? ['--crash-once-at-step', '120', '--crash-marker', marker] : []);
    const { events } = await runWith('reference', (node) => ({
      trainers: { default: { argv: [process.execPath, REFERENCE_TRAINER, '--checkpoint-every-steps', '25', '--progress-every-steps', '10', '--step-delay-ms', '2', ...crash(node)] } },
    }));
    expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
    expect(existsSync(marker)).toBe(true);
    const failed = events.find((e) => e.type === 'StageFailed')!;
    expect(failed.data).toMatchObject({ stage: 'pretrain', attempt: 1, failure: 'crash' });
    const before = events.slice(0, events.indexOf(failed)).filter((e) => e.type === 'CheckpointSaved' && e.data.attempt === 1).at(-1)!;
    expect(before.data.step).toBe(100);
    const resumed = events.find((e) => e.type === 'RunResumed')!;
    expect(resumed.data).toMatchObject({ stage: 'pretrain', attempt: 2, from_checkpoint_id: before.data.checkpoint_id, from_step: before.data.step });

    const progress = (attempt: number) => events.filter((e) => e.type === 'ProgressRecorded' && e.data.stage === 'pretrain' && e.data.attempt === attempt).map((e) => e.data);
    const [first, second] = [progress(1), progress(2)];
    // Learning: the first attempt's loss falls well below where it started.
    expect(first.at(-1)!.loss).toBeLessThan(first[0]!.loss * 0.8);
    // Restored, not restarted: the second attempt starts past the checkpoint's step with the loss it had there.
    expect(second[0]!.step).toBeGreaterThan(before.data.step);
    expect(second[0]!.loss).toBeLessThan(first[0]!.loss * 0.8);
    expect(second.at(-1)!.loss).toBeLessThan(first[0]!.loss * 0.8);
    // The checkpoints it kept are real files; the evaluation scored the last one.
    const saved = events.filter((e) => e.type === 'CheckpointSaved' && !events.some((d) => d.type === 'CheckpointDeleted' && d.data.checkpoint_id === e.data.checkpoint_id));
    expect(saved.length).toBeGreaterThan(0);
    for (const c of saved) expect(existsSync(fileURLToPath(c.data.uri))).toBe(true);
    const gate = events.find((e) => e.type === 'EvalGatePassed')!;
    expect(Object.keys(gate.data.metrics).sort()).toEqual(['accuracy', 'heldout_loss']);
  });

  it('a Python training loop that imports ito_trainer_protocol trains through the same protocol', async () => {
    // A short pause a step spreads the run over a second, so the agent's paced reports sample the loss curve.
    const { events } = await runWith('python', () => ({ trainers: { default: { argv: ['python3', PYTHON_TRAINER, '--step-delay-ms', '2'] } } }));
    expect(events.at(-1)!.type, events.map((e) => e.type).join(' ')).toBe('RunSucceeded');
    const losses = events.filter((e) => e.type === 'ProgressRecorded' && e.data.stage === 'pretrain').map((e) => e.data.loss as number);
    expect(losses.length).toBeGreaterThanOrEqual(2);
    expect(losses.at(-1)!).toBeLessThan(losses[0]! * 0.5);
    const saved = events.filter((e) => e.type === 'CheckpointSaved');
    expect(saved.length).toBeGreaterThan(0);
    expect(events.find((e) => e.type === 'EvalGatePassed')!.data.metrics).toHaveProperty('heldout_loss');
  });
});
