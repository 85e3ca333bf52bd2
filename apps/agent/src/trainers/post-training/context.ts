import type { TaskSpec } from '@ito/contracts';
import { checkpointUri } from '../../executors/checkpoint-uri.js';
import type { ReferenceOptions } from '../reference-options.js';
import { emit, type StopListener } from '../trainer-io.js';
import { encodePolicy, readPolicy, writePolicy } from './policy-checkpoint.js';
import type { AdamState } from '../adam.js';
import { freshAdam, POLICY_SIZE } from './policy.js';

/** What every post-training step shares: the task, its clock, its stop requests, its weights and saving them. */
export class StepContext {
  private readonly wallStart = performance.now();
  weights = new Float64Array(POLICY_SIZE);
  adam: AdamState = freshAdam();
  step = 0;

  constructor(
    readonly spec: TaskSpec,
    readonly options: ReferenceOptions,
    readonly scale: number,
    readonly stop: StopListener,
  ) {}

  /** `resume_from` restores weights and optimizer; `init_from` the weights only (when they are a policy); else zeros. */
  async restore(): Promise<void> {
    const { resume_from: resume, init_from: init } = this.spec;
    if (resume) {
      const c = await readPolicy(resume.uri);
      if (!c || c.run_id !== this.spec.run_id || c.stage !== this.spec.stage) throw new Error('resume_from names a checkpoint of another run or stage');
      this.weights = Float64Array.from(c.weights);
      if (c.adam) this.adam = { t: c.adam.t, m: Float64Array.from(c.adam.m), v: Float64Array.from(c.adam.v) };
      this.step = c.step;
      emit({ type: 'log', message: `resumed at step ${c.step}` });
      return;
    }
    this.step = this.spec.start_step;
    const start = init ? await readPolicy(init.uri) : null;
    if (start) {
      this.weights = Float64Array.from(start.weights);
      emit({ type: 'log', message: `initialised from the ${start.stage} policy at step ${start.step}` });
    } else if (init) {
      emit({ type: 'log', message: 'the previous stage did not leave a policy of this trainer: starting from a uniform policy' });
    }
  }

  clock(): number {
    return ((performance.now() - this.wallStart) / 1000) * this.scale;
  }

  option(name: string, fallback: number): number {
    const v = this.spec.recipe?.[name];
    return typeof v === 'number' ? v : fallback;
  }

  flag(name: string, fallback: boolean): boolean {
    const v = this.spec.recipe?.[name];
    return typeof v === 'boolean' ? v : fallback;
  }

  /** Rank 0 saves for the job; the stage's last save is the next stage's starting point. */
  async save(final = false, version = 0): Promise<void> {
    if (this.spec.rank !== 0) return;
    const uri = checkpointUri(this.spec, this.step);
    const bytes = encodePolicy({ run_id: this.spec.run_id, stage: this.spec.stage, step: this.step, version, weights: this.weights, adam: this.adam });
    const started = this.clock();
    await writePolicy(uri, bytes);
    const now = this.clock();
    emit({ type: 'checkpoint', step: this.step, uri, bytes: bytes.length, save_seconds: now - started, async: false, ...(final ? { final: true } : {}), elapsed_s: now });
  }

  /** Between steps: honours a stop request (saving first when asked). True when the task must end now. */
  async stopped(): Promise<boolean> {
    await new Promise((r) => (this.options.stepDelayMs > 0 ? setTimeout(r, this.options.stepDelayMs) : setImmediate(r)));
    const request = this.stop.requested;
    if (!request) return false;
    if (request.checkpoint) await this.save(true);
    emit({ type: 'log', message: `stopped at step ${this.step}` });
    return true;
  }
}

/** The mean of the first and of the last `n` values: how a learning curve moved, robust to one noisy batch. */
export function ends(values: number[], n = 10): { first: number; last: number } {
  const mean = (xs: number[]) => (xs.length === 0 ? 0 : xs.reduce((a, b) => a + b, 0) / xs.length);
  const k = Math.max(1, Math.min(n, Math.floor(values.length / 2)));
  return { first: mean(values.slice(0, k)), last: mean(values.slice(-k)) };
}
