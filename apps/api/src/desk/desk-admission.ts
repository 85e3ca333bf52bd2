import pLimit from 'p-limit';
import { ItoError } from '@ito/contracts';

/**
 * How many desk telemetry queries one API process computes at once, and how many may wait for a turn. A query
 * sums every segment of its window and holds up to three pool connections while it does (2–3 s at 10,000 runs,
 * test/bench/README.md): unbounded, a burst of them takes the pool that heartbeats and agent calls need.
 */
export interface DeskAdmissionLimits {
  concurrency: number;
  queue: number;
}

export const DEFAULT_DESK_ADMISSION: DeskAdmissionLimits = { concurrency: 2, queue: 8 };

/** Runs desk queries within the limits; one that would wait beyond the queue is refused as rate_limited. */
export type DeskAdmission = <T>(query: () => Promise<T>) => Promise<T>;

export function deskAdmission(limits: DeskAdmissionLimits = DEFAULT_DESK_ADMISSION): DeskAdmission {
  const limit = pLimit(limits.concurrency);
  return async (query) => {
    if (limit.activeCount + limit.pendingCount >= limits.concurrency + limits.queue) {
      throw new ItoError('rate_limited', 'the desk is already computing as many telemetry queries as it can; retry in 1 s', { retry_after_s: 1 });
    }
    return limit(query);
  };
}
