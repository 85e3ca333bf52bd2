import { constants } from 'node:fs';
import { open } from 'node:fs/promises';
import type { TaskSpec } from '@ito/contracts';
import { driverFor } from '@ito/storage';
import { checkpointUri } from '../executors/checkpoint-uri.js';
import { decodeCheckpoint, encodeCheckpoint, type TrainingState } from './reference-checkpoint.js';
import { parseReferenceOptions, timeScaleOf, USAGE, UsageError, type ReferenceOptions } from './reference-options.js';
import { Random } from './random.js';
import { drawBatch, heldOutSet } from './synthetic-data.js';
import { evaluate, freshAdam, initialParameters, trainStep } from './tiny-model.js';
import { BadTaskError, emit, exitWhenWritten, readTask, StopListener } from './trainer-io.js';
import { evaluatePolicy, runPostTraining } from './post-training/index.js';

/**
 * The reference trainer: really trains a tiny network (tiny-model.ts) on CPU on a synthetic data set, speaks the
 * trainer protocol, writes and restores real checkpoints through @ito/storage, and evaluates on held-out data.
 * It is what the process executor's tests and demos run, and a worked example for people writing a trainer.
 *
 * In a job of several ranks every rank trains the same replica and only rank 0 saves and reports, as the simulated
 * executor does. Every duration it reports is on its clock: wall seconds × ITO_TIME_SCALE. Each step counts as the task's
 * `step_tokens` tokens (its batch of 32 examples stands in for one global batch). Exit codes: 0 done or stopped,
 * 1 failed, 2 bad usage or task, 3 the test-only crash.
 */
const BATCH = 32;
const PROGRESS_INTERVAL_MS = 100;

/** The metrics this trainer computes; it reports these and only these. */
const COMPUTED_METRICS = ['heldout_loss', 'accuracy'];

async function main(): Promise<number> {
  const options = parseReferenceOptions(process.argv.slice(2), process.env);
  const scale = timeScaleOf(process.env);
  const { spec } = await readTask(options.task);
  const stop = new StopListener();
  if (spec.kind === 'eval') return evaluateCheckpoint(spec);
  if (spec.kind === 'post_train') return runPostTraining(spec, options, scale, stop);
  return new ReferenceTraining(spec, options, scale, stop).run();
}

async function evaluateCheckpoint(spec: TaskSpec): Promise<number> {
  const policy = spec.init_from ? await evaluatePolicy(spec.init_from.uri) : null;
  if (policy) {
    emit({ type: 'metrics', metrics: policy, step: spec.init_from!.step });
    return 0;
  }
  let parameters: Float64Array;
  if (spec.init_from) {
    parameters = Float64Array.from(decodeCheckpoint(await driverFor(spec.init_from.uri).read(spec.init_from.uri)).parameters);
  } else {
    emit({ type: 'log', message: 'no checkpoint to evaluate: scoring the initial weights' });
    parameters = initialParameters(Random.fromSeed(`${spec.run_id}/init`));
  }
  const { loss, accuracy } = evaluate(parameters, heldOutSet());
  const missing = (spec.eval?.metrics ?? []).filter((m) => !COMPUTED_METRICS.includes(m));
  if (missing.length > 0) emit({ type: 'log', message: `not computed by this trainer: ${missing.join(', ')}`.slice(0, 2048) });
  emit({ type: 'metrics', metrics: { heldout_loss: loss, accuracy }, step: spec.init_from?.step ?? 0 });
  return 0;
}

class ReferenceTraining {
  private readonly wallStart = performance.now();
  private state!: TrainingState;
  private data!: Random;
  private lastCheckpointAt = 0;
  private losses = { sum: 0, count: 0 };
  private lastProgress = { wall: -Infinity, clock: 0, step: 0 };

  constructor(
    private readonly spec: TaskSpec,
    private readonly options: ReferenceOptions,
    private readonly scale: number,
    private readonly stop: StopListener,
  ) {}

  async run(): Promise<number> {
    await this.restore();
    this.data = new Random(this.state.rng);
    this.lastProgress.step = this.state.step;
    const interval = this.spec.checkpoint.interval_minutes * 60;
    const every = this.options.checkpointEverySteps;
    while (this.state.step < this.spec.total_steps) {
      await pause(this.options.stepDelayMs);
      const request = this.stop.requested;
      if (request) {
        if (request.checkpoint) await this.save(true);
        emit({ type: 'log', message: `stopped at step ${this.state.step}` });
        return 0;
      }
      this.skipBatches();
      const loss = trainStep(this.state.parameters, this.state.adam, drawBatch(this.data, BATCH));
      this.state.batchIndex++;
      this.state.step++;
      this.losses.sum += loss;
      this.losses.count++;
      if (await this.crashOnce()) return 3;
      this.maybeProgress();
      const due = (every !== null && this.state.step % every === 0) || this.clock() - this.lastCheckpointAt >= interval;
      if (due && this.state.step < this.spec.total_steps) await this.save(false);
    }
    // The stage's last checkpoint: the next stage's starting point.
    if (this.state.step !== this.spec.resume_from?.step) await this.save(false);
    return 0;
  }

  /** From `resume_from` everything (exactly where it stopped), from `init_from` the weights only, else fresh. */
  private async restore(): Promise<void> {
    const { resume_from: resume, init_from: init, run_id: runId, stage } = this.spec;
    if (resume) {
      const started = this.clock();
      const bytes = await driverFor(resume.uri).read(resume.uri);
      const c = decodeCheckpoint(bytes);
      if (c.run_id !== runId || c.stage !== stage || c.step !== resume.step) throw new Error('resume_from names a checkpoint of another run, stage or step');
      this.state = { step: c.step, batchIndex: c.batch_index, parameters: Float64Array.from(c.parameters), adam: { t: c.adam.t, m: Float64Array.from(c.adam.m), v: Float64Array.from(c.adam.v) }, rng: c.rng };
      // Rank 0 reports the restore for the job, as it does the saves.
      if (this.spec.rank === 0) emit({ type: 'restored', step: c.step, bytes: bytes.length, restore_seconds: this.clock() - started });
      emit({ type: 'log', message: `resumed at step ${c.step}` });
      return;
    }
    const parameters = init
      ? Float64Array.from(decodeCheckpoint(await driverFor(init.uri).read(init.uri)).parameters)
      : initialParameters(Random.fromSeed(`${runId}/init`));
    this.state = { step: this.spec.start_step, batchIndex: this.spec.start_step, parameters, adam: freshAdam(), rng: Random.fromSeed(`${runId}/${stage}/data`).state() };
    if (init) emit({ type: 'log', message: `initialised from the checkpoint at step ${init.step} of the previous stage` });
  }

  /** After a loss-spike restart, the batches the failed attempt trained on in [from, to) are drawn and dropped. */
  private skipBatches(): void {
    const skip = this.spec.skip_steps;
    if (!skip || this.state.batchIndex < skip.from || this.state.batchIndex >= skip.to) return;
    const from = this.state.batchIndex;
    for (; this.state.batchIndex < skip.to; this.state.batchIndex++) drawBatch(this.data, BATCH);
    emit({ type: 'log', message: `skipped data batches ${from} to ${skip.to - 1}` });
  }

  private async crashOnce(): Promise<boolean> {
    const crash = this.options.crashOnce;
    if (!crash || crash.step !== this.state.step) return false;
    try {
      await (await open(crash.marker, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600)).close();
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
    emit({ type: 'log', message: `crashing at step ${this.state.step} as asked (once)` });
    return true;
  }

  /** Every rank writes progress lines: the agent reports rank 0's and feeds the others' steps to its heartbeat. */
  private maybeProgress(): void {
    const step = this.state.step;
    const wall = performance.now();
    const every = this.options.progressEverySteps;
    const due = every !== null ? step % every === 0 : wall - this.lastProgress.wall >= PROGRESS_INTERVAL_MS || step === this.spec.total_steps;
    if (!due || this.losses.count === 0) return;
    const clock = this.clock();
    const tokens = step * this.spec.step_tokens;
    const seconds = clock - this.lastProgress.clock;
    emit({
      type: 'progress',
      step,
      tokens,
      // The mean loss of the batches since the last report, as training loops usually log it.
      loss: this.losses.sum / this.losses.count,
      throughput_tokens_per_s: seconds > 0 ? ((step - this.lastProgress.step) * this.spec.step_tokens) / seconds : 0,
      elapsed_s: clock,
    });
    this.losses = { sum: 0, count: 0 };
    this.lastProgress = { wall, clock, step };
  }

  /** Rank 0 saves and reports for the job; the other ranks hold the same replicated weights. */
  private async save(final: boolean): Promise<void> {
    if (this.spec.rank !== 0) return;
    const uri = checkpointUri(this.spec, this.state.step);
    this.state.rng = this.data.state();
    const bytes = encodeCheckpoint(this.spec.run_id, this.spec.stage, this.state);
    const started = this.clock();
    await driverFor(uri).write(uri, bytes);
    const now = this.clock();
    this.lastCheckpointAt = now;
    emit({ type: 'checkpoint', step: this.state.step, uri, bytes: bytes.length, save_seconds: now - started, async: false, ...(final ? { final: true } : {}), elapsed_s: now });
  }

  private clock(): number {
    return ((performance.now() - this.wallStart) / 1000) * this.scale;
  }
}

function pause(ms: number): Promise<void> {
  // Even without a delay, yield to the event loop so that a stop line on stdin is heard between steps.
  return new Promise((resolve) => (ms > 0 ? setTimeout(resolve, ms) : setImmediate(resolve)));
}

main().then(
  (code) => exitWhenWritten(code),
  (err: unknown) => {
    const usage = err instanceof UsageError;
    process.stderr.write(`reference-trainer: ${err instanceof Error ? err.message : 'failed'}\n${usage ? `${USAGE}\n` : ''}`);
    exitWhenWritten(usage || err instanceof BadTaskError ? 2 : 1);
  },
);
