import { randomBytes } from 'node:crypto';
import { assignmentSchema, type Assignment, type StageName, type TaskSpec } from '@ito/contracts';
import type { TaskEvents } from '../../src/executors/executor.js';

const hex = () => randomBytes(16).toString('hex');

export type SpecOverrides = Partial<Omit<TaskSpec, 'checkpoint'>> & { checkpoint?: Partial<TaskSpec['checkpoint']> };

/** A valid assignment (checked against the protocol's schema) for one task of a stage, with a fresh run id. */
export function makeAssignment(overrides: SpecOverrides = {}, opts: { runId?: string; taskId?: string } = {}): Assignment {
  const stage: StageName = overrides.stage ?? 'pretrain';
  const { checkpoint, ...rest } = overrides;
  const spec: TaskSpec = {
    run_id: opts.runId ?? `run_${hex()}`,
    stage,
    kind: stage.startsWith('eval_') ? 'eval' : ['sft', 'dpo', 'rlvr'].includes(stage) ? 'post_train' : 'train',
    attempt: 1,
    rank: 0,
    world_size: 1,
    role: stage.startsWith('eval_') ? 'evaluator' : 'trainer',
    model: { family: 'llama', parameters: 8e9, precision: 'bf16' },
    layout: { tp: 1, pp: 1, dp: 1, cp: 1, micro_batch: 1, global_batch_sequences: 512 },
    sequence_length: 8192,
    tokens: 200 * 4_194_304,
    step_tokens: 4_194_304,
    total_steps: 200,
    planned_tokens_per_s: 419_430.4,
    start_step: 0,
    resume_from: null,
    init_from: null,
    skip_steps: null,
    eval: null,
    recipe: null,
    ...rest,
    checkpoint: { storage: 's3://bucket/ckpt', interval_minutes: 5, async: false, modelled_bytes: 112e9, ...checkpoint },
  };
  return assignmentSchema.parse({
    task_id: opts.taskId ?? `tsk_${hex()}`,
    run_id: spec.run_id,
    stage: spec.stage,
    attempt: spec.attempt,
    status: 'assigned',
    next_seq: 1,
    directive: 'continue',
    spec,
  });
}

type Progress = Parameters<TaskEvents['progress']>[0];
type Checkpoint = Parameters<TaskEvents['checkpoint']>[0];
type Restored = Parameters<TaskEvents['restored']>[0];

/** Records everything a task tells the agent, in order, and lets a test wait for a moment in the task's life. */
export class RecordedEvents implements TaskEvents {
  readonly progresses: Progress[] = [];
  readonly checkpoints: Checkpoint[] = [];
  readonly restores: Restored[] = [];
  readonly logs: string[] = [];
  /** Steps the task said it reached (every rank), which the agent's heartbeats carry. */
  readonly steps: number[] = [];
  readonly order: Array<'progress' | 'checkpoint' | 'restored'> = [];
  private waiters: Array<() => void> = [];

  progress(p: Progress): void {
    this.progresses.push(p);
    this.order.push('progress');
    this.notify();
  }

  step(n: number): void {
    this.steps.push(n);
    this.notify();
  }

  checkpoint(c: Checkpoint): void {
    this.checkpoints.push(c);
    this.order.push('checkpoint');
    this.notify();
  }

  restored(r: Restored): void {
    this.restores.push(r);
    this.order.push('restored');
    this.notify();
  }

  log(message: string): void {
    this.logs.push(message);
    this.notify();
  }

  /** Resolves once `predicate` holds; rejects after `timeoutMs`. */
  until(predicate: (e: this) => boolean, timeoutMs = 10_000): Promise<void> {
    if (predicate(this)) return Promise.resolve();
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error('timed out waiting for the task')), timeoutMs);
      const check = () => {
        if (!predicate(this)) return;
        clearTimeout(timer);
        this.waiters = this.waiters.filter((w) => w !== check);
        resolve();
      };
      this.waiters.push(check);
    });
  }

  private notify(): void {
    for (const waiter of [...this.waiters]) waiter();
  }
}
