import type { Envelope } from '@ito/contracts';
import { sleep as realSleep } from './backoff.js';

export interface RateLimitWaitOptions {
  /** The longest single wait honoured; a refusal asking for more is returned as it is. @defaultValue 120 */
  maxWaitS?: number;
  /** The most time spent waiting over the whole call. @defaultValue 3600 */
  maxTotalWaitS?: number;
  sleep?: (ms: number) => Promise<void>;
}

/**
 * Calls `read` and, while the server refuses it with `rate_limited` and says how long to wait
 * (`details.retry_after_s`), waits that long and calls again: for a long read paged over many requests (the
 * auditor's chain walk and export), where the credential's budget runs out part way and failing would throw away
 * what was read. Bounded: a wait longer than `maxWaitS`, or one past `maxTotalWaitS` in all, ends it with the
 * refusal; any other answer is returned at once.
 */
export async function waitOutRateLimit<T>(read: () => Promise<Envelope<T>>, opts: RateLimitWaitOptions = {}): Promise<Envelope<T>> {
  const wait = opts.sleep ?? realSleep;
  const maxWaitS = opts.maxWaitS ?? 120;
  let budgetS = opts.maxTotalWaitS ?? 3600;
  for (;;) {
    const answer = await read();
    if (answer.ok || answer.error.code !== 'rate_limited') return answer;
    const s = answer.error.details?.retry_after_s;
    if (typeof s !== 'number' || !Number.isFinite(s) || s <= 0 || s > maxWaitS || s > budgetS) return answer;
    budgetS -= s;
    await wait(s * 1000);
  }
}
