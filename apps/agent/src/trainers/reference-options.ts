import { isAbsolute } from 'node:path';
import { parseArgs } from 'node:util';

export const USAGE =
  'usage: reference-trainer --task <file> [--checkpoint-every-steps <n>] [--progress-every-steps <n>] [--step-delay-ms <n>]\n' +
  '                         [--batches-per-step <n>] [--stale-batch-every <n>]   (RLVR: batches per trainer step; a rollout test fault)\n' +
  '                         [--crash-once-at-step <n> --crash-marker <absolute path>]   (the last two for resume tests only)';

export interface ReferenceOptions {
  /** The task file (`--task`, else `ITO_TASK_FILE`). */
  task: string;
  /** Also checkpoint every n steps, besides the task's interval on the scaled clock. */
  checkpointEverySteps: number | null;
  /** Report progress every n steps; by default at most every 100 ms of wall time, and at the last step. */
  progressEverySteps: number | null;
  /** Wall ms to wait after each step, so a test can catch a run in the middle. */
  stepDelayMs: number;
  /** RLVR's trainer: batches taken per step (1 to 4; default 1). */
  batchesPerStep: number | null;
  /** RLVR's rollout, for tests: every n-th batch is sampled with a policy older than the staleness bound. */
  staleBatchEvery: number | null;
  /** Exit with code 3 on reaching this step, once: only while the marker file does not exist (it is created). */
  crashOnce: { step: number; marker: string } | null;
}

export class UsageError extends Error {
  override readonly name = 'UsageError';
}

const count = (name: string, text: string | undefined, min: number): number | null => {
  if (text === undefined) return null;
  if (!/^\d{1,9}$/.test(text) || Number(text) < min) throw new UsageError(`--${name} must be a whole number of at least ${min}`);
  return Number(text);
};

function batchesPerStep(text: string | undefined): number | null {
  const n = count('batches-per-step', text, 1);
  if (n !== null && n > 4) throw new UsageError('--batches-per-step must be a whole number from 1 to 4');
  return n;
}

export function parseReferenceOptions(argv: string[], env: NodeJS.ProcessEnv): ReferenceOptions {
  let values;
  try {
    ({ values } = parseArgs({
      args: argv,
      strict: true,
      allowPositionals: false,
      options: {
        task: { type: 'string' },
        'checkpoint-every-steps': { type: 'string' },
        'progress-every-steps': { type: 'string' },
        'step-delay-ms': { type: 'string' },
        'crash-once-at-step': { type: 'string' },
        'batches-per-step': { type: 'string' },
        'stale-batch-every': { type: 'string' },
        'crash-marker': { type: 'string' },
      },
    }));
  } catch {
    throw new UsageError('unknown option or missing value');
  }
  const task = values.task ?? env.ITO_TASK_FILE;
  if (!task) throw new UsageError('--task <file> (or ITO_TASK_FILE) is required');
  const crashStep = count('crash-once-at-step', values['crash-once-at-step'], 1);
  const marker = values['crash-marker'];
  if ((crashStep === null) !== (marker === undefined)) throw new UsageError('--crash-once-at-step and --crash-marker go together');
  if (marker !== undefined && !isAbsolute(marker)) throw new UsageError('--crash-marker must be an absolute path');
  return {
    task,
    checkpointEverySteps: count('checkpoint-every-steps', values['checkpoint-every-steps'], 1),
    progressEverySteps: count('progress-every-steps', values['progress-every-steps'], 1),
    stepDelayMs: count('step-delay-ms', values['step-delay-ms'], 0) ?? 0,
    batchesPerStep: batchesPerStep(values['batches-per-step']),
    staleBatchEvery: count('stale-batch-every', values['stale-batch-every'], 2),
    crashOnce: crashStep === null ? null : { step: crashStep, marker: marker! },
  };
}

/** ITO_TIME_SCALE: the trainer's clock runs this many seconds per wall second (1 unless a test or demo says). */
export function timeScaleOf(env: NodeJS.ProcessEnv): number {
  const text = env.ITO_TIME_SCALE;
  if (text === undefined || text === '') return 1;
  const scale = Number(text);
  if (!/^\d+(\.\d+)?$/.test(text) || !(scale > 0)) throw new UsageError('ITO_TIME_SCALE must be a positive number');
  return scale;
}
