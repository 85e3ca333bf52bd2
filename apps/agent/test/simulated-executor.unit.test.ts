import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readFileSync } from 'node:fs';
import { FileStorageDriver } from '@ito/storage';
import type { TaskOutcome } from '../src/executors/executor.js';
import { parseSimFaults } from '../src/executors/faults.js';
import { SimulatedExecutor, type SimulatedExecutorOptions } from '../src/executors/simulated.js';
import { evalMetrics, trainingLoss } from '../src/executors/simulated-model.js';
import { makeAssignment, RecordedEvents, type SpecOverrides } from './support/tasks.js';

/**
 * The default fixture: 200 steps of 10 simulated seconds, a 5-minute checkpoint interval and 112 GB checkpoints
 * (56 s to write at 2 GB/s on one node), run at 20,000× so the stage takes about 0.1 s of wall time.
 */
const FAST: SimulatedExecutorOptions = { timeScale: 20_000, progressIntervalMs: 5, minTickMs: 2 };
const SAVE_SECONDS = 56;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ito-sim-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function run(spec: SpecOverrides = {}, opts: SimulatedExecutorOptions = {}, executor = new SimulatedExecutor({ ...FAST, ...opts })) {
  const assignment = makeAssignment(spec);
  const events = new RecordedEvents();
  const outcome = await executor.start(assignment, events).done;
  return { assignment, events, outcome };
}

function expectMonotone(events: RecordedEvents) {
  const p = events.progresses;
  expect(p.length).toBeGreaterThan(3);
  for (let i = 1; i < p.length; i++) {
    expect(p[i]!.step).toBeGreaterThan(p[i - 1]!.step);
    expect(p[i]!.elapsed_s).toBeGreaterThan(p[i - 1]!.elapsed_s);
    expect(p[i]!.loss!).toBeLessThan(p[i - 1]!.loss!);
  }
}

describe('simulated executor: training', () => {
  it('reports monotone progress with a falling loss, interval checkpoints written through file:// storage, and a final checkpoint', async () => {
    const storage = `file://${dir}/ckpt/`;
    const { assignment, events, outcome } = await run({ checkpoint: { storage } });
    const runId = assignment.run_id;
    expect(outcome).toMatchObject({ kind: 'completed', step: 200 });

    expectMonotone(events);
    for (const p of events.progresses) {
      expect(p.tokens).toBe(p.step * 4_194_304);
      expect(p.loss).toBeCloseTo(trainingLoss(8e9, p.tokens), 10);
    }

    const c = events.checkpoints;
    expect(c.length).toBeGreaterThanOrEqual(4);
    for (const ck of c) {
      // One slash between the storage prefix and the run, whatever the manifest wrote.
      expect(ck.uri).toBe(`file://${dir}/ckpt/${runId}/pretrain/step-${ck.step}`);
      expect(ck).toMatchObject({ bytes: 112e9, save_seconds: SAVE_SECONDS, async: false });
      expect(ck.simulated).toBeUndefined();
      expect(ck.final).toBeUndefined();
      const record = JSON.parse(await readFile(join(dir, 'ckpt', runId, 'pretrain', `step-${ck.step}`), 'utf8'));
      expect(record).toMatchObject({ run_id: runId, stage: 'pretrain', step: ck.step, modelled_bytes: 112e9 });
    }
    // Interval checkpoints start at least 5 simulated minutes apart; the last one is the stage's end.
    for (let i = 1; i < c.length - 1; i++) expect(c[i]!.elapsed_s! - c[i - 1]!.elapsed_s!).toBeGreaterThanOrEqual(300);
    expect(c[0]!.elapsed_s! - SAVE_SECONDS).toBeGreaterThanOrEqual(300);
    expect(c.at(-1)!.step).toBe(200);
    expect(c.slice(0, -1).every((ck) => ck.step < 200)).toBe(true);
    expect(await new FileStorageDriver().list(`file://${dir}/ckpt/${runId}/`)).toEqual(c.map((ck) => ck.uri).sort());
    expect(outcome.elapsed_s).toBeCloseTo(200 * 10 + c.length * SAVE_SECONDS, 6);
  });

  it('reports checkpoints of storage it has no driver for as simulated, writes nothing, and stalls only for the host copy when async', async () => {
    const blocking = await run({ checkpoint: { storage: 's3://bucket/ckpt', async: false } });
    const async = await run({ checkpoint: { storage: 's3://bucket/ckpt', async: true } });
    for (const ck of async.events.checkpoints) expect(ck.simulated).toBe(true);
    const interval = async.events.checkpoints.slice(0, -1);
    expect(interval.length).toBeGreaterThan(3);
    for (const ck of interval) expect(ck).toMatchObject({ async: true, save_seconds: SAVE_SECONDS });
    // The end-of-stage checkpoint blocks: nothing is left to overlap it with.
    expect(async.events.checkpoints.at(-1)).toMatchObject({ step: 200, async: false });
    // Async saves stall 5.6 s each (112 GB at 20 GB/s) instead of 56 s.
    expect(async.outcome.elapsed_s).toBeCloseTo(2000 + interval.length * 5.6 + SAVE_SECONDS, 6);
    expect(async.outcome.elapsed_s).toBeLessThan(blocking.outcome.elapsed_s);
  });

  it('lets only rank 0 report, while every rank completes on the same clock and tells its agent every step it reaches', async () => {
    const executor = new SimulatedExecutor(FAST);
    const runId = makeAssignment().run_id;
    const ranks = [0, 1].map((rank) => {
      const events = new RecordedEvents();
      const assignment = makeAssignment({ rank, world_size: 2, run_id: runId });
      return { events, done: executor.start(assignment, events).done };
    });
    const [zero, one] = await Promise.all(ranks.map((r) => r.done));
    expect(zero).toMatchObject({ kind: 'completed', step: 200 });
    expect(one).toEqual(zero);
    expect(ranks[0]!.events.progresses.length).toBeGreaterThan(0);
    expect(ranks[0]!.events.checkpoints.length).toBeGreaterThan(0);
    expect(ranks[1]!.events.progresses).toEqual([]);
    expect(ranks[1]!.events.checkpoints).toEqual([]);
    // Every rank's heartbeat carries its own step, so a hang on rank 1 is seen too.
    for (const r of ranks) expect(r.events.steps).toEqual(Array.from({ length: 200 }, (_, i) => i + 1));
  });

  it('hang on one rank: that rank stops telling its steps while the other goes on', async () => {
    const executor = new SimulatedExecutor({ ...FAST, faults: parseSimFaults('hang@step=40,rank=1') });
    const runId = makeAssignment().run_id;
    const ranks = [0, 1].map((rank) => {
      const events = new RecordedEvents();
      return { events, handle: executor.start(makeAssignment({ rank, world_size: 2, run_id: runId }), events) };
    });
    expect(await ranks[0]!.handle.done).toMatchObject({ kind: 'completed', step: 200 });
    expect(Math.max(...ranks[1]!.events.steps)).toBe(40);
    ranks[1]!.handle.stop({ checkpoint: false, reason: 'hang detected' });
    expect(await ranks[1]!.handle.done).toMatchObject({ kind: 'stopped', step: 40 });
  });

  it('resumes at start_step and continues the same loss curve', async () => {
    const { events, outcome } = await run({ start_step: 150, resume_from: { checkpoint_id: `ckpt_${'a'.repeat(32)}`, uri: 's3://bucket/ckpt/x', step: 150 } });
    expect(outcome).toMatchObject({ kind: 'completed', step: 200 });
    expect(events.progresses[0]!.step).toBeGreaterThan(150);
    expect(events.progresses[0]!.loss).toBeCloseTo(trainingLoss(8e9, events.progresses[0]!.step * 4_194_304), 10);
  });

  it('a resumed task first restores its checkpoint, in the modelled time, and rank 0 reports it before any progress', async () => {
    const resume_from = { checkpoint_id: `ckpt_${'a'.repeat(32)}`, uri: 's3://bucket/ckpt/x', step: 150 };
    const { events } = await run({ start_step: 150, resume_from, world_size: 2, checkpoint: { modelled_bytes: 8e9 } } as SpecOverrides);
    // 8 GB over 2 nodes reading at the default 2 GB/s each: 2 s.
    expect(events.restores).toEqual([{ step: 150, bytes: 8e9, restore_seconds: 2 }]);
    expect(events.order[0]).toBe('restored');
    const fresh = await run({});
    expect(fresh.events.restores).toEqual([]);
  });
});

describe('simulated executor: stop', () => {
  const long = { total_steps: 1_000_000 };

  it('with checkpoint: a final checkpoint (final: true) at the step it stopped at, then stopped', async () => {
    const executor = new SimulatedExecutor(FAST);
    const events = new RecordedEvents();
    const handle = executor.start(makeAssignment({ ...long, checkpoint: { storage: `file://${dir}` } }), events);
    await events.until((e) => e.progresses.length >= 3);
    handle.stop({ checkpoint: true, reason: 'budget exhausted' });
    handle.stop({ checkpoint: false, reason: 'ignored: the first stop wins' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'budget exhausted' });
    const last = events.checkpoints.at(-1)!;
    expect(last).toMatchObject({ final: true, step: outcome.step, async: false });
    expect(events.order.at(-1)).toBe('checkpoint');
    expect(JSON.parse(readFileSync(last.uri.slice('file://'.length), 'utf8'))).toMatchObject({ step: outcome.step, final: true });
    handle.stop({ checkpoint: true, reason: 'after the end: nothing happens' });
  });

  it('without checkpoint: stopped, and no checkpoint is taken for the stop', async () => {
    const executor = new SimulatedExecutor(FAST);
    const events = new RecordedEvents();
    const handle = executor.start(makeAssignment({ ...long, checkpoint: { storage: `file://${dir}` } }), events);
    await events.until((e) => e.checkpoints.length >= 1);
    handle.stop({ checkpoint: false, reason: 'cancelled' });
    const outcome = await handle.done;
    expect(outcome).toMatchObject({ kind: 'stopped', reason: 'cancelled' });
    // A save that was complete before the stop may still be reported; none is final and none is past the stop.
    expect(events.checkpoints.filter((c) => c.final)).toEqual([]);
    expect(events.checkpoints.every((c) => c.step <= outcome.step)).toBe(true);
    expect(await new FileStorageDriver().list(`file://${dir}/`)).toHaveLength(events.checkpoints.length);
  });
});

describe('simulated executor: faults', () => {
  it('crash: fails with kind crash at the step, once per executor (the next attempt runs through)', async () => {
    const executor = new SimulatedExecutor({ ...FAST, faults: parseSimFaults('crash@step=50') });
    const first = await run({}, {}, executor);
    expect(first.outcome).toEqual({ kind: 'failed', failure: 'crash', reason: 'simulated crash at step 50', step: 50, elapsed_s: expect.any(Number) });
    expect(first.events.progresses.every((p) => p.step <= 50)).toBe(true);
    const second = await run({ start_step: 30, attempt: 2 }, {}, executor);
    expect(second.outcome).toMatchObject({ kind: 'completed', step: 200 });
  });

  it('hang: no progress and no report after the step, alive until stopped, and no checkpoint a hung task cannot write', async () => {
    const executor = new SimulatedExecutor({ ...FAST, faults: parseSimFaults('hang@step=40') });
    const events = new RecordedEvents();
    const handle = executor.start(makeAssignment(), events);
    let settled: TaskOutcome | null = null;
    void handle.done.then((o) => (settled = o));
    await events.until((e) => e.logs.some((l) => l.startsWith('simulated fault hang at step 40')));
    const seen = { progresses: events.progresses.length, checkpoints: events.checkpoints.length };
    // 300 ms of wall time is 6,000 simulated seconds: the whole stage three times over.
    await new Promise((r) => setTimeout(r, 300));
    expect(settled).toBeNull();
    expect(events.progresses).toHaveLength(seen.progresses);
    expect(events.checkpoints).toHaveLength(seen.checkpoints);
    expect(events.progresses.every((p) => p.step <= 40)).toBe(true);
    handle.stop({ checkpoint: true, reason: 'hang detected' });
    expect(await handle.done).toMatchObject({ kind: 'stopped', reason: 'hang detected', step: 40 });
    expect(events.checkpoints).toHaveLength(seen.checkpoints);
  });

  it('loss_spike: the loss is multiplied by the factor from that step on, for that attempt only', async () => {
    const executor = new SimulatedExecutor({ ...FAST, faults: parseSimFaults('loss_spike@step=100,factor=6') });
    const { events } = await run({}, {}, executor);
    const ratio = (p: (typeof events.progresses)[number]) => p.loss! / trainingLoss(8e9, p.tokens);
    const before = events.progresses.filter((p) => p.step < 100);
    const after = events.progresses.filter((p) => p.step >= 100);
    expect(before.length).toBeGreaterThan(0);
    expect(after.length).toBeGreaterThan(0);
    for (const p of before) expect(ratio(p)).toBeCloseTo(1, 10);
    for (const p of after) expect(ratio(p)).toBeCloseTo(6, 10);
    const again = await run({ attempt: 2, start_step: 90 }, {}, executor);
    for (const p of again.events.progresses) expect(ratio(p)).toBeCloseTo(1, 10);
  });

  it('loss_spike with the default factor of 4', async () => {
    const { events } = await run({}, { faults: parseSimFaults('loss_spike@step=0') });
    for (const p of events.progresses) expect(p.loss! / trainingLoss(8e9, p.tokens)).toBeCloseTo(4, 10);
  });

  it('slow_checkpoint: the first checkpoint at or after the step takes factor × the save time', async () => {
    const { events } = await run({}, { faults: parseSimFaults('slow_checkpoint@step=60') });
    const saves = events.checkpoints.map((c) => [c.step, c.save_seconds] as const);
    const slowIndex = saves.findIndex(([step]) => step >= 60);
    expect(slowIndex).toBeGreaterThan(0);
    saves.forEach(([, seconds], i) => expect(seconds).toBeCloseTo(i === slowIndex ? SAVE_SECONDS * 20 : SAVE_SECONDS, 6));
  });

  it('slow: every step takes factor × as long', async () => {
    const slow = await run({}, { faults: parseSimFaults('slow@step=0,factor=3') });
    // The first report covers steps with no checkpoint in between: exactly a third of the planned throughput.
    expect(slow.events.progresses[0]!.throughput_tokens_per_s).toBeCloseTo(419_430.4 / 3, 6);
    const normal = await run();
    expect(normal.events.progresses[0]!.throughput_tokens_per_s).toBeCloseTo(419_430.4, 6);
    const checkpoints = slow.events.checkpoints.length;
    expect(slow.outcome.elapsed_s).toBeCloseTo(200 * 30 + checkpoints * SAVE_SECONDS, 6);
  });

  it('a fault naming another stage leaves this one alone', async () => {
    const { outcome } = await run({}, { faults: parseSimFaults('crash@step=10,stage=mid_train') });
    expect(outcome.kind).toBe('completed');
  });
});

describe('simulated executor: evaluation', () => {
  const manifest = JSON.parse(readFileSync(join(import.meta.dirname, '../../../examples/manifest.json'), 'utf8'));
  const battery = ['heldout_loss', 'mmlu', 'humaneval', 'ifeval', 'gsm8k', 'ruler_32k'];
  type Bound = { min?: number; max?: number };
  const passes = (gates: Record<string, Bound>, metrics: Record<string, number>) =>
    Object.entries(gates).every(([name, b]) => name in metrics && (b.min === undefined || metrics[name]! >= b.min) && (b.max === undefined || metrics[name]! <= b.max));
  const init = { checkpoint_id: `ckpt_${'b'.repeat(32)}`, uri: 's3://bucket/ckpt/x', step: 4000 };

  it("reports every metric the battery asks for, and the example manifest's gates pass at every stage", async () => {
    for (const stage of ['pretrain', 'mid_train', 'long_context', 'post_training'] as const) {
      const { outcome, events } = await run({ stage: `eval_${stage}`, total_steps: 0, tokens: 0, init_from: init, eval: { battery: 'ito-evals/v1', metrics: battery } });
      expect(outcome.kind).toBe('completed');
      if (outcome.kind !== 'completed') continue;
      expect(Object.keys(outcome.metrics!).sort()).toEqual([...battery].sort());
      expect(passes(manifest.eval.gates[stage], outcome.metrics!), stage).toBe(true);
      // Forward-only over the battery's 50M tokens at three times the training throughput.
      expect(outcome.elapsed_s).toBeCloseTo(5e7 / (3 * 419_430.4), 6);
      expect(events.checkpoints).toEqual([]);
    }
  });

  it('fails a gate no score can meet', () => {
    const metrics = evalMetrics({ stage: 'eval_mid_train', model: { family: 'llama', parameters: 8e9, precision: 'bf16' }, init_from: init, step_tokens: 4_194_304, eval: { battery: 'ito-evals/v1', metrics: battery } });
    expect(passes({ mmlu: { min: 0.99 } }, metrics)).toBe(false);
    expect(passes({ mmlu: { min: 0.55 } }, metrics)).toBe(true);
  });

  it('meets only faults that name the evaluation stage', async () => {
    const spec = { stage: 'eval_pretrain' as const, total_steps: 0, eval: { battery: 'ito-evals/v1', metrics: battery } };
    expect((await run(spec, { faults: parseSimFaults('crash@step=0') })).outcome.kind).toBe('completed');
    expect((await run(spec, { faults: parseSimFaults('crash@step=0,stage=eval_pretrain') })).outcome).toMatchObject({ kind: 'failed', failure: 'crash' });
  });
});
