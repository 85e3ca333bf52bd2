import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { driverFor } from '@ito/storage';
import { decodeCheckpoint } from '../src/trainers/reference-checkpoint.js';
import { makeAssignment, RecordedEvents } from './support/tasks.js';
import { fixtureTrainer, processExecutor, referenceTrainer, runTask, stopMidway } from './support/process.js';

let dir: string;
let storage: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-process-'));
  storage = `file://${dir}/ckpt/`;
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

const ckptId = (c: string) => `ckpt_${c.repeat(32)}`;
const fileOf = (uri: string) => uri.slice('file://'.length);

describe('process executor with the reference trainer', () => {
  it('trains: the loss falls, checkpoint files exist and restore, the task file is gone afterwards', async () => {
    const executor = processExecutor(dir, referenceTrainer('--checkpoint-every-steps', '100', '--progress-every-steps', '10'));
    const assignment = makeAssignment({ total_steps: 300, checkpoint: { storage } });
    const { events, outcome } = await runTask(executor, assignment);
    expect(outcome).toMatchObject({ kind: 'completed', step: 300 });

    const p = events.progresses;
    expect(p.map((x) => x.step)).toEqual(Array.from({ length: 30 }, (_, i) => (i + 1) * 10));
    // Each report is the mean of 10 batches; over 200 seeds the last is at most 0.51 of the first.
    expect(p.at(-1)!.loss!).toBeLessThan(p[0]!.loss! * 0.7);
    expect(p.every((x) => x.tokens === x.step * assignment.spec.step_tokens)).toBe(true);

    expect(events.checkpoints.map((c) => c.step)).toEqual([100, 200, 300]);
    for (const c of events.checkpoints) {
      expect(c.uri).toBe(`file://${dir}/ckpt/${assignment.run_id}/pretrain/step-${c.step}`);
      expect(statSync(fileOf(c.uri)).size).toBe(c.bytes);
      expect(statSync(fileOf(c.uri)).mode & 0o777).toBe(0o600);
      const saved = decodeCheckpoint(await driverFor(c.uri).read(c.uri));
      expect(saved).toMatchObject({ run_id: assignment.run_id, stage: 'pretrain', step: c.step, batch_index: c.step });
      expect(saved.adam.t).toBe(c.step);
    }
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
    expect(statSync(join(dir, 'work')).mode & 0o777).toBe(0o700);
  });

  it('resumes from a checkpoint exactly where it stopped: the same losses as the uninterrupted run, not a fresh start', async () => {
    const executor = processExecutor(dir, referenceTrainer('--checkpoint-every-steps', '100', '--progress-every-steps', '1'));
    const first = makeAssignment({ total_steps: 300, checkpoint: { storage } });
    const a = await runTask(executor, first);
    const at200 = a.events.checkpoints.find((c) => c.step === 200)!;

    const resumed = makeAssignment(
      { ...first.spec, attempt: 2, start_step: 200, resume_from: { checkpoint_id: ckptId('a'), uri: at200.uri, step: 200 } },
      { runId: first.run_id },
    );
    const b = await runTask(executor, resumed);
    expect(b.outcome).toMatchObject({ kind: 'completed', step: 300 });
    expect(b.events.logs).toContain('trainer: resumed at step 200');
    // The restore is reported once, before the first step: the checkpoint's bytes as read, and its time.
    expect(b.events.restores).toEqual([{ step: 200, bytes: at200.bytes, restore_seconds: expect.any(Number) }]);
    expect(b.events.order[0]).toBe('restored');
    expect(a.events.restores).toEqual([]);
    expect(b.events.progresses[0]!.step).toBe(201);
    const lossOf = (events: RecordedEvents, step: number) => events.progresses.find((x) => x.step === step)!.loss!;
    const meanLoss = (events: RecordedEvents, from: number) => Array.from({ length: 10 }, (_, i) => lossOf(events, from + i)).reduce((s, x) => s + x, 0) / 10;
    // Close to where the first run was at the checkpoint, far from where it started (means of 10 batches)...
    const resumedAt = meanLoss(b.events, 201);
    expect(Math.abs(resumedAt - meanLoss(a.events, 191))).toBeLessThan(Math.abs(resumedAt - meanLoss(a.events, 1)));
    expect(resumedAt).toBeLessThan(meanLoss(a.events, 1) - 0.25);
    // ...and in fact bit-identical to it: weights, optimizer, data stream and step were all restored.
    for (let step = 201; step <= 300; step++) expect(lossOf(b.events, step)).toBe(lossOf(a.events, step));
  });

  it('crash once: fails with kind crash, then a run resumed from its last checkpoint succeeds', async () => {
    const marker = join(dir, 'crashed-once');
    const executor = processExecutor(dir, referenceTrainer('--checkpoint-every-steps', '100', '--crash-once-at-step', '150', '--crash-marker', marker));
    const first = makeAssignment({ total_steps: 300, checkpoint: { storage } });
    const a = await runTask(executor, first);
    expect(a.outcome).toMatchObject({ kind: 'failed', failure: 'crash', reason: 'trainer exited with code 3' });
    expect(existsSync(marker)).toBe(true);
    expect(a.events.checkpoints.map((c) => c.step)).toEqual([100]);

    const last = a.events.checkpoints.at(-1)!;
    const retry = makeAssignment({ ...first.spec, attempt: 2, start_step: 100, resume_from: { checkpoint_id: ckptId('b'), uri: last.uri, step: 100 } }, { runId: first.run_id });
    const b = await runTask(executor, retry);
    expect(b.outcome).toMatchObject({ kind: 'completed', step: 300 });
    expect(b.events.checkpoints.map((c) => c.step)).toEqual([200, 300]);
  });

  it('reports and saves from rank 0 only; every rank completes, and tells its agent its steps for the heartbeat', async () => {
    const executor = processExecutor(dir, referenceTrainer('--checkpoint-every-steps', '50', '--progress-every-steps', '10'));
    const rank1 = await runTask(executor, makeAssignment({ rank: 1, world_size: 2, total_steps: 100, checkpoint: { storage } }));
    expect(rank1.outcome).toMatchObject({ kind: 'completed', step: 100 });
    expect(rank1.events.progresses).toEqual([]);
    expect(rank1.events.checkpoints).toEqual([]);
    expect(rank1.events.steps).toEqual([10, 20, 30, 40, 50, 60, 70, 80, 90, 100]);
    expect(existsSync(join(dir, 'ckpt'))).toBe(false);
  });

  it('checkpoints on the task interval, on a clock scaled by ITO_TIME_SCALE', async () => {
    // 60,000 trainer seconds per wall second: the 1-minute interval comes every millisecond of wall time.
    const executor = processExecutor(dir, referenceTrainer('--step-delay-ms', '2', '--progress-every-steps', '10'), { timeScale: 60_000 });
    const { outcome, events } = await runTask(executor, makeAssignment({ total_steps: 40, checkpoint: { storage, interval_minutes: 1 } }));
    expect(outcome).toMatchObject({ kind: 'completed', step: 40 });
    const interval = events.checkpoints.slice(0, -1);
    expect(interval.length).toBeGreaterThanOrEqual(3);
    for (let i = 1; i < interval.length; i++) expect(interval[i]!.elapsed_s! - interval[i - 1]!.elapsed_s!).toBeGreaterThanOrEqual(60);
    expect(events.checkpoints.at(-1)!.step).toBe(40);
  });

  it('stop with checkpoint: a final checkpoint, then stopped', async () => {
    const executor = processExecutor(dir, referenceTrainer('--step-delay-ms', '2', '--progress-every-steps', '5'));
    const { events, outcome } = await stopMidway(executor, makeAssignment({ total_steps: 1_000_000, checkpoint: { storage } }), { checkpoint: true, reason: 'budget exhausted' }, 3);
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'budget exhausted' });
    expect(events.checkpoints).toHaveLength(1);
    const final = events.checkpoints[0]!;
    expect(final).toMatchObject({ final: true, step: outcome.step });
    expect(decodeCheckpoint(readFileSync(fileOf(final.uri))).step).toBe(outcome.step);
    expect(events.logs).not.toContain('trainer did not stop in time: SIGTERM');
  });

  it('stop without checkpoint: stopped, nothing saved', async () => {
    const executor = processExecutor(dir, referenceTrainer('--step-delay-ms', '2', '--progress-every-steps', '5'));
    const { events, outcome } = await stopMidway(executor, makeAssignment({ total_steps: 1_000_000, checkpoint: { storage } }), { checkpoint: false, reason: 'cancelled' });
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'cancelled' });
    expect(events.checkpoints).toEqual([]);
    expect(existsSync(join(dir, 'ckpt'))).toBe(false);
  });

  it('initialises a stage from the previous stage, skips the batches it is told to, and evaluates real metrics only', async () => {
    const executor = processExecutor(dir, referenceTrainer('--progress-every-steps', '1'));
    const pretrain = makeAssignment({ total_steps: 200, checkpoint: { storage } });
    const a = await runTask(executor, pretrain);
    const end = a.events.checkpoints.at(-1)!;
    expect(end, `${JSON.stringify(a.outcome)}\n${a.events.logs.join('\n')}`).toBeDefined();
    expect(end.step).toBe(200);
    const from = { checkpoint_id: ckptId('c'), uri: end.uri, step: 200 };

    const mid = makeAssignment({ ...pretrain.spec, stage: 'mid_train', init_from: from, skip_steps: { from: 20, to: 50 } }, { runId: pretrain.run_id });
    const b = await runTask(executor, mid);
    expect(b.outcome).toMatchObject({ kind: 'completed', step: 200 });
    expect(b.events.logs).toContain('trainer: skipped data batches 20 to 49');
    // Means of the first 10 batches: over 300 seeds the initialised stage starts at least 0.49 lower.
    const firstTen = (events: RecordedEvents) => events.progresses.slice(0, 10).reduce((s, x) => s + x.loss!, 0) / 10;
    expect(firstTen(b.events)).toBeLessThan(firstTen(a.events) - 0.25);
    expect(b.events.checkpoints.at(-1)!.uri).toBe(`file://${dir}/ckpt/${pretrain.run_id}/mid_train/step-200`);

    const battery = { battery: 'ito-evals/v1', metrics: ['heldout_loss', 'mmlu', 'accuracy'] };
    const evaluated = await runTask(executor, makeAssignment({ stage: 'eval_pretrain', total_steps: 0, init_from: from, eval: battery, checkpoint: { storage } }, { runId: pretrain.run_id }));
    const untrained = await runTask(executor, makeAssignment({ stage: 'eval_pretrain', total_steps: 0, init_from: null, eval: battery, checkpoint: { storage } }, { runId: pretrain.run_id }));
    for (const r of [evaluated, untrained]) {
      expect(r.outcome.kind).toBe('completed');
      if (r.outcome.kind !== 'completed') return;
      // Only what it computes: a gate on mmlu fails for want of the metric.
      expect(Object.keys(r.outcome.metrics!).sort()).toEqual(['accuracy', 'heldout_loss']);
      expect(r.events.logs).toContain('trainer: not computed by this trainer: mmlu');
    }
    if (evaluated.outcome.kind !== 'completed' || untrained.outcome.kind !== 'completed') return;
    // Over 300 seeds, 200 steps lower the held-out loss by at least 0.54 and raise accuracy by at least 0.26.
    expect(evaluated.outcome.metrics!.heldout_loss).toBeLessThan(untrained.outcome.metrics!.heldout_loss! - 0.25);
    expect(evaluated.outcome.metrics!.accuracy).toBeGreaterThan(untrained.outcome.metrics!.accuracy! + 0.1);
  });
});

describe('process executor: what reaches the trainer and what comes back', () => {
  const credential = 'node-credential-that-must-not-leak';
  beforeAll(() => {
    process.env.ITO_NODE_CREDENTIAL = credential;
  });
  afterAll(() => {
    delete process.env.ITO_NODE_CREDENTIAL;
  });

  it('gives the trainer a minimal environment, never the agent’s own, and the task as a 0600 file', async () => {
    const dump = join(dir, 'dump.json');
    expect(process.env.ITO_NODE_CREDENTIAL).toBe(credential);
    const executor = processExecutor(dir, fixtureTrainer('env-dump-trainer.mjs', [], { DUMP_TO: dump }), { timeScale: 250 });
    const assignment = makeAssignment({ checkpoint: { storage } });
    const { outcome, events } = await runTask(executor, assignment);
    expect(outcome).toMatchObject({ kind: 'completed', step: 1, elapsed_s: 0.5 });
    expect(events.progresses).toHaveLength(1);
    const seen = JSON.parse(readFileSync(dump, 'utf8'));
    // One node: torch.distributed's rank and world size, and no endpoint to dial.
    expect(Object.keys(seen.env).sort()).toEqual(['DUMP_TO', 'HOME', 'ITO_TASK_FILE', 'ITO_TIME_SCALE', 'ITO_WORK_DIR', 'LANG', 'LOCAL_RANK', 'PATH', 'RANK', 'WORLD_SIZE']);
    expect([seen.env.RANK, seen.env.WORLD_SIZE, seen.env.LOCAL_RANK]).toEqual(['0', '1', '0']);
    expect(JSON.stringify(seen)).not.toContain(credential);
    expect(seen.env.ITO_TIME_SCALE).toBe('250');
    const taskFile = join(dir, 'work', `${assignment.task_id}.task.json`);
    expect(seen.env.ITO_TASK_FILE).toBe(taskFile);
    expect(seen.argv).toEqual(['--task', taskFile]);
    // The task's own directory, where it writes the checkpoint files the agent uploads; gone once the task ended.
    expect(seen.cwd).toBe(join(dir, 'work', assignment.task_id));
    expect(seen.env.ITO_WORK_DIR).toBe(join(dir, 'work', assignment.task_id));
    expect(readdirSync(join(dir, 'work'))).toEqual([]);
    expect(seen.task).toEqual(assignment);
    expect(seen.task_mode).toBe(0o600);
  });

  it("gives every rank of a multi-node stage its rank, the world size and rank 0's endpoint, over what the operator configured", async () => {
    const dump = join(dir, 'dump-rank.json');
    const executor = processExecutor(dir, fixtureTrainer('env-dump-trainer.mjs', [], { DUMP_TO: dump, RANK: '7', MASTER_PORT: '1' }), { timeScale: 250 });
    const base = makeAssignment({ checkpoint: { storage } });
    const assignment = { ...base, spec: { ...base.spec, rank: 1, world_size: 2, rendezvous: { master_addr: '10.0.0.7', master_port: 29511 } } };
    const { outcome } = await runTask(executor, assignment);
    expect(outcome.kind).toBe('completed');
    const { env } = JSON.parse(readFileSync(dump, 'utf8'));
    expect({ RANK: env.RANK, WORLD_SIZE: env.WORLD_SIZE, LOCAL_RANK: env.LOCAL_RANK, MASTER_ADDR: env.MASTER_ADDR, MASTER_PORT: env.MASTER_PORT }).toEqual({
      RANK: '1',
      WORLD_SIZE: '2',
      LOCAL_RANK: '0',
      MASTER_ADDR: '10.0.0.7',
      MASTER_PORT: '29511',
    });
  });

  it('counts invalid stdout lines and forwards none of them, nor their content', async () => {
    const executor = processExecutor(dir, fixtureTrainer('misbehaving-trainer.mjs'), { maxStderrLines: 3 });
    const { outcome, events, stats } = await runTask(executor, makeAssignment({ checkpoint: { storage } }));
    expect(outcome).toEqual({ kind: 'completed', step: 7, elapsed_s: 2, metrics: { heldout_loss: 1.25 } });
    expect(events.progresses).toEqual([{ step: 7, tokens: 70, loss: 1.5, elapsed_s: 2 }]);
    expect(events.checkpoints).toEqual([]);
    expect(stats).toMatchObject({ invalid_lines: 7, oversized_lines: 1, stderr_lines: 3, dropped_stderr_lines: 2 });
    expect(events.logs).toEqual(
      expect.arrayContaining([
        'trainer stdout line 1 ignored: not JSON',
        'trainer stdout line 2 ignored: not a protocol line',
        'trainer stdout line 3 ignored: duplicate key',
        'trainer stdout line 4 ignored: forbidden key',
        'trainer stdout line 5 ignored: longer than 64 KiB',
        "trainer stdout line 6 ignored: checkpoint outside the run's storage",
        "trainer stdout line 7 ignored: checkpoint outside the run's storage",
        'trainer wrote 7 invalid stdout line(s); they were ignored',
        'trainer stderr: warning 1',
        'trainer stderr: warning 3',
        'trainer stderr: 2 further line(s) not logged',
      ]),
    );
    const logged = events.logs.join('\n');
    for (const leaked of ['secret-looking-text', 'unexpected-extra', 'polluted', 'xxxxxxxx', 'elsewhere', 'escape']) expect(logged).not.toContain(leaked);
    expect(logged).not.toContain('warning 4');
  });

  it('hears a finished trainer`s last lines even when it was too busy to read them before the trainer exited', async () => {
    const executor = processExecutor(dir, referenceTrainer('--progress-every-steps', '1'));
    const assignment = makeAssignment({ total_steps: 600, checkpoint: { storage } });
    const events = new RecordedEvents();
    const handle = executor.start(assignment, events);
    await events.until((e) => e.progresses.length > 0, 20_000);
    // A loaded agent: its event loop reads nothing while the trainer trains, fills the socket pair with its lines,
    // writes its last checkpoint and exits. Those lines were lost when the trainer exited before they were out.
    const last = fileOf(`${storage}${assignment.run_id}/pretrain/step-600`);
    const until = Date.now() + 20_000;
    while (!existsSync(last) && Date.now() < until);
    const settle = Date.now() + 500;
    while (Date.now() < settle);
    expect(await handle.done).toMatchObject({ kind: 'completed', step: 600 });
    expect(events.progresses.map((p) => p.step)).toEqual(Array.from({ length: 600 }, (_, i) => i + 1));
    expect(events.checkpoints.map((c) => c.step)).toEqual([600]);
  });

  it('reports a non-zero exit or a signal as a crash', async () => {
    const code = await runTask(processExecutor(dir, fixtureTrainer('exiting-trainer.mjs', ['code', '7'])), makeAssignment());
    expect(code.outcome).toMatchObject({ kind: 'failed', failure: 'crash', reason: 'trainer exited with code 7', step: 3, elapsed_s: 1 });
    const signal = await runTask(processExecutor(dir, fixtureTrainer('exiting-trainer.mjs', ['signal', 'SIGKILL'])), makeAssignment());
    expect(signal.outcome).toMatchObject({ kind: 'failed', failure: 'crash', reason: 'trainer was killed by SIGKILL' });
  });

  it('escalates a stop the trainer ignores: SIGTERM after the grace period, SIGKILL after the second', async () => {
    const executor = processExecutor(dir, fixtureTrainer('stubborn-trainer.mjs'), { stopGraceMs: 150, killGraceMs: 150 });
    const events = new RecordedEvents();
    const handle = executor.start(makeAssignment(), events);
    await events.until((e) => e.progresses.length === 1);
    const asked = performance.now();
    handle.stop({ checkpoint: true, reason: 'withdrawn' });
    expect(await handle.done).toMatchObject({ kind: 'stopped', reason: 'withdrawn', step: 1 });
    expect(performance.now() - asked).toBeGreaterThanOrEqual(290);
    expect(events.logs).toEqual(expect.arrayContaining(['trainer stderr: ignoring the stop line', 'trainer did not stop in time: SIGTERM', 'trainer stderr: ignoring SIGTERM', 'trainer did not stop in time: SIGKILL']));
  });

  it('runs only what the operator configured: by stage, else kind, else default; nothing when none applies', async () => {
    const only = { trainers: { eval: { argv: [process.execPath, '-e', ''] } } };
    const executor = processExecutor(dir, only);
    const { outcome } = await runTask(executor, makeAssignment({ stage: 'pretrain' }));
    expect(outcome).toMatchObject({ kind: 'failed', failure: 'error', reason: 'no trainer is configured for stage pretrain (nor its kind, nor a default)' });
    expect(existsSync(join(dir, 'work'))).toBe(false);
  });

  it('reports a trainer that cannot start', async () => {
    const missing = { trainers: { default: { argv: [join(dir, 'no-such-trainer')] } } };
    const { outcome } = await runTask(processExecutor(dir, missing), makeAssignment());
    expect(outcome).toMatchObject({ kind: 'failed', failure: 'error', reason: 'trainer could not be started (ENOENT)' });
  });
});
