import type { Logger } from '@ito/config';

/** A step of the shutdown, run in registration order: stop accepting first, close stores last. */
export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
  /**
   * The longest this step is waited for before the next one runs: a stuck step (a job that ignores its abort, a
   * connection that never closes) must not keep the later ones, above all the embedded database's stop, from
   * running inside the process's shutdown timeout. @defaultValue DEFAULT_STEP_TIMEOUT_MS
   */
  timeoutMs?: number;
}

export const DEFAULT_STEP_TIMEOUT_MS = 3_000;

/**
 * Runs each step once, in order, even when an earlier one fails or overruns its time, so a stuck worker never
 * leaves the embedded database running. Resolves true when every step succeeded in time.
 */
export async function runShutdown(steps: ShutdownStep[], logger: Logger): Promise<boolean> {
  let clean = true;
  for (const step of steps) {
    try {
      const outcome = await withinTime(Promise.resolve().then(step.run), step.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS);
      if (outcome === 'timed out') {
        clean = false;
        logger.error({ step: step.name, timeoutMs: step.timeoutMs ?? DEFAULT_STEP_TIMEOUT_MS }, 'shutdown step timed out; going on with the next');
      } else logger.debug({ step: step.name }, 'shutdown step done');
    } catch (err) {
      clean = false;
      logger.error({ step: step.name, err: { message: (err as Error).message } }, 'shutdown step failed');
    }
  }
  return clean;
}

async function withinTime(work: Promise<void>, ms: number): Promise<'done' | 'timed out'> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'timed out'>((resolve) => {
    timer = setTimeout(() => resolve('timed out'), ms);
  });
  try {
    return await Promise.race([work.then(() => 'done' as const), late]);
  } finally {
    clearTimeout(timer);
  }
}
