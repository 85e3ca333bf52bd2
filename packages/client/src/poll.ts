import type { Envelope } from '@ito/contracts';
import { sleep as realSleep } from './backoff.js';

export interface PollOptions<T> {
  intervalMs: number;
  /** True when the watched thing has reached its end (e.g. a terminal run state). */
  done: (data: T) => boolean;
  onUpdate?: (data: T) => void;
  /** Bounds a watch that never ends. @defaultValue Infinity */
  maxIterations?: number;
  sleep?: (ms: number) => Promise<void>;
}

/** Codes that end any watch immediately: polling on with a dead credential only hammers the server. */
export const STOP_POLLING_CODES = new Set(['credential_revoked', 'unauthenticated', 'forbidden', 'not_found']);

/**
 * Repeats a read until `done`, a refusal that ends the watch, or the iteration bound. A retryable refusal
 * (rate limit, a transient 5xx that outlived the GET retries) waits one interval and tries again.
 */
export async function poll<T>(read: () => Promise<Envelope<T>>, opts: PollOptions<T>): Promise<Envelope<T>> {
  const wait = opts.sleep ?? realSleep;
  const max = opts.maxIterations ?? Number.POSITIVE_INFINITY;
  let last: Envelope<T> | null = null;
  for (let i = 0; i < max; i++) {
    if (i > 0) await wait(opts.intervalMs);
    last = await read();
    if (!last.ok) {
      if (STOP_POLLING_CODES.has(last.error.code) || !last.error.retryable) return last;
      continue;
    }
    opts.onUpdate?.(last.data);
    if (opts.done(last.data)) return last;
  }
  if (!last) throw new Error('poll needs at least one iteration');
  return last;
}
