import type { Logger } from '@ito/config';

/** A step of the shutdown, run in registration order: stop accepting first, close stores last. */
export interface ShutdownStep {
  name: string;
  run: () => Promise<void> | void;
}

/**
 * Runs each step once, in order, even when an earlier one fails, so a stuck worker never leaves the embedded
 * database running. Resolves true when every step succeeded.
 */
export async function runShutdown(steps: ShutdownStep[], logger: Logger): Promise<boolean> {
  let clean = true;
  for (const step of steps) {
    try {
      await step.run();
      logger.debug({ step: step.name }, 'shutdown step done');
    } catch (err) {
      clean = false;
      logger.error({ step: step.name, err: { message: (err as Error).message } }, 'shutdown step failed');
    }
  }
  return clean;
}
