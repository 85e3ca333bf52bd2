import { spawnSync } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { TrainerConfig } from '../src/executors/trainer-config.js';
import { processExecutor, runTask } from './support/process.js';
import { makeAssignment } from './support/tasks.js';

/**
 * examples/trainers/torch_lm.py through the process executor, on real PyTorch (Debian's python3-torch, CPU, which
 * installs for /usr/bin/python3): a transformer LM that learns, writes its checkpoints off the training thread,
 * resumes exactly, and trains as a 2-process DDP job over gloo on the rendezvous the agent hands it.
 */
const PYTHON = '/usr/bin/python3';
const TORCH_LM = resolve(import.meta.dirname, '../../../examples/trainers/torch_lm.py');
const hasTorch = spawnSync(PYTHON, ['-c', 'import torch'], { stdio: 'ignore' }).status === 0;

const torchLm = (...args: string[]): TrainerConfig => ({
  trainers: { default: { argv: [PYTHON, TORCH_LM, '--progress-every-seconds', '0', ...args], env: { PYTHONDONTWRITEBYTECODE: '1', OMP_NUM_THREADS: '1' } } },
});

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((ok) => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise<void>((ok) => server.close(() => ok()));
  return port;
}

let dir: string;
let storage: string;
beforeAll(() => {
  if (!hasTorch && process.env.CI) throw new Error(`no PyTorch for ${PYTHON}: CI installs it (apt-get install -y --no-install-recommends python3-torch)`);
});
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-torch-'));
  storage = `file://${dir}/ckpt`;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.skipIf(!hasTorch && !process.env.CI)('the PyTorch LM trainer through the process executor', () => {
  it('learns (the loss falls), checkpoints asynchronously as torch files, and evaluates held-out loss and accuracy', async () => {
    const executor = processExecutor(dir, torchLm('--checkpoint-every-steps', '40', '--progress-every-steps', '10'));
    const assignment = makeAssignment({ total_steps: 120, step_tokens: 512, checkpoint: { storage } });
    const { outcome, events, stats } = await runTask(executor, assignment);
    expect(outcome, events.logs.join('\n')).toMatchObject({ kind: 'completed', step: 120, metrics: { heldout_loss: expect.any(Number), accuracy: expect.any(Number) } });
    expect(stats.invalid_lines).toBe(0);
    const losses = events.progresses.map((p) => p.loss!);
    // The first step is reported, then every 10th.
    expect(events.progresses.map((p) => p.step)).toEqual([1, ...Array.from({ length: 12 }, (_, i) => (i + 1) * 10)]);
    // Byte-level text starts near ln(256) ≈ 5.5 nats; 120 steps on the corpus take it well below.
    expect(losses[0]!).toBeGreaterThan(3);
    expect(losses.at(-1)!).toBeLessThan(losses[0]! * 0.7);
    expect(events.checkpoints.map((c) => [c.step, c.async])).toEqual([
      [40, true],
      [80, true],
      [120, true],
    ]);
    for (const c of events.checkpoints) expect(statSync(c.uri.slice('file://'.length)).size).toBe(c.bytes);
    // Training was blocked only for the copy of the state; the write went on beside it.
    const timings = events.logs.filter((l) => l.includes('training blocked'));
    expect(timings).toHaveLength(3);
  }, 120_000);

  it('resumes exactly: the step after the checkpoint is its step + 1, on the same data, with the same loss', async () => {
    const executor = processExecutor(dir, torchLm('--checkpoint-every-steps', '30', '--progress-every-steps', '1'));
    const first = makeAssignment({ total_steps: 60, checkpoint: { storage } });
    const a = await runTask(executor, first);
    expect(a.outcome.kind).toBe('completed');
    const at30 = a.events.checkpoints.find((c) => c.step === 30)!;
    const resumed = makeAssignment(
      { ...first.spec, attempt: 2, start_step: 30, resume_from: { checkpoint_id: `ckpt_${'e'.repeat(32)}`, uri: at30.uri, step: 30 } },
      { runId: first.run_id },
    );
    const b = await runTask(executor, resumed);
    expect(b.outcome, b.events.logs.join('\n')).toMatchObject({ kind: 'completed', step: 60 });
    expect(b.events.logs).toContain('trainer: resumed at step 30');
    expect(b.events.restores).toEqual([{ step: 30, bytes: at30.bytes, restore_seconds: expect.any(Number) }]);
    expect(b.events.progresses[0]!.step).toBe(31);
    // Model, optimizer, data position and RNG restored: the resumed steps repeat the first attempt's losses.
    const lossAt = (events: typeof a.events, step: number) => events.progresses.find((p) => p.step === step)!.loss!;
    for (const step of [31, 45, 60]) expect(Math.abs(lossAt(b.events, step) - lossAt(a.events, step)) / lossAt(a.events, step)).toBeLessThan(1e-3);
    // The first step after the resume is within 10 % of the loss at the checkpoint.
    expect(Math.abs(lossAt(b.events, 31) - lossAt(a.events, 30)) / lossAt(a.events, 30)).toBeLessThan(0.1);
  }, 120_000);

  it("trains as a 2-process DDP job over gloo on rank 0's endpoint; rank 0 alone reports and checkpoints", async () => {
    const port = await freePort();
    const spec = { total_steps: 40, checkpoint: { storage }, world_size: 2, rendezvous: { master_addr: '127.0.0.1', master_port: port } };
    const rank0 = makeAssignment(spec);
    const rank1 = { ...makeAssignment(spec, { runId: rank0.run_id }), task_id: `tsk_${'1'.repeat(32)}` };
    rank1.spec = { ...rank1.spec, rank: 1 };
    const [a, b] = await Promise.all([
      runTask(processExecutor(join(dir, 'n0'), torchLm('--checkpoint-every-steps', '20', '--progress-every-steps', '10')), rank0),
      runTask(processExecutor(join(dir, 'n1'), torchLm('--checkpoint-every-steps', '20', '--progress-every-steps', '10')), rank1),
    ]);
    expect(a.outcome, a.events.logs.join('\n')).toMatchObject({ kind: 'completed', step: 40 });
    expect(b.outcome, b.events.logs.join('\n')).toMatchObject({ kind: 'completed', step: 40 });
    expect(a.events.logs.filter((l) => /^trainer: training on \d+ bytes of synthetic text across 2 rank\(s\)$/.test(l))).toHaveLength(1);
    expect(a.events.progresses.map((p) => p.step)).toEqual([1, 10, 20, 30, 40]);
    expect(b.events.progresses).toEqual([]);
    // Rank 1's steps reach its own agent, for its node's heartbeat (a hang on any rank is seen).
    expect(b.events.steps.at(-1)).toBe(40);
    expect(b.events.checkpoints).toEqual([]);
    expect(a.events.checkpoints.map((c) => c.step)).toEqual([20, 40]);
    // Tokens count the whole job's batch: both ranks' sequences.
    expect(a.events.progresses[1]!.tokens).toBe(10 * 2 * 16 * 32);
    const saved = readFileSync(a.events.checkpoints[0]!.uri.slice('file://'.length));
    expect(saved.length).toBe(a.events.checkpoints[0]!.bytes);
  }, 120_000);
});
