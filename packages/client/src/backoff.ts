/** Retry pacing for the client: exponential with full jitter, capped, and always bounded in attempts. */
export interface BackoffOptions {
  /** @defaultValue 200 */
  baseMs: number;
  /** @defaultValue 2000 */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 200, maxMs: 2000 };

/** Delay before retry number `attempt` (1 = the first retry). `random` is injectable so tests are exact. */
export function backoffDelay(attempt: number, opts: BackoffOptions = DEFAULT_BACKOFF, random: () => number = Math.random): number {
  const ceiling = Math.min(opts.maxMs, opts.baseMs * 2 ** Math.max(0, attempt - 1));
  return Math.round(ceiling / 2 + (random() * ceiling) / 2);
}

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));
