import pLimit from 'p-limit';
import { ItoError } from '@ito/contracts';

/**
 * How many of one kind of heavy read one API process computes at once, and how many may wait for a turn. Each
 * such read holds pool connections for as long as it runs: unbounded, a burst of them takes the pool that every
 * tenant's calls, heartbeats and reports need.
 */
export interface AdmissionLimits {
  concurrency: number;
  queue: number;
}

/**
 * Runs work within the limits; work that would wait beyond the queue is refused as rate_limited (Retry-After 1).
 * `units` is how much of the limit the work takes (a batch of heartbeats takes one per beat); 1 when absent.
 */
export type Admission = (<T>(work: () => Promise<T>, units?: number) => Promise<T>) & {
  /**
   * Throws the admission's refusal while nothing more can be admitted: asked before a request's body is read, so
   * a process past its limit sheds it without paying to parse what it would refuse anyway (absent: the admission
   * cannot tell that early).
   */
  refuseIfSaturated?: () => void;
};

/**
 * The refusal of an admission past its limit: `rate_limited`, Retry-After 1, naming what is saturated. Made
 * without a stack trace: past saturation it is made for every request shed (hundreds a second), capturing the
 * hooks' stack was most of a refusal's own cost in a CPU profile of the heartbeat bench, and neither the answer
 * nor the access log line of a refusal uses it (an ItoError below 500 logs its code, never its stack).
 */
export function saturatedError(busy: string): ItoError {
  const frames = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  try {
    return new ItoError('rate_limited', `${busy}; retry in 1 s`, { retry_after_s: 1 });
  } finally {
    Error.stackTraceLimit = frames;
  }
}

/** `busy` says what is saturated, in the refusal's message (it names the kind of read, never the caller's input). */
export function admission(limits: AdmissionLimits, busy: string): Admission {
  const limit = pLimit(limits.concurrency);
  return async (work) => {
    if (limit.activeCount + limit.pendingCount >= limits.concurrency + limits.queue) {
      throw saturatedError(busy);
    }
    return limit(work);
  };
}

/** Audit replays rebuild every projection of a tenant into a scratch schema: the heaviest read the API serves. */
export const DEFAULT_REPLAY_ADMISSION: AdmissionLimits = { concurrency: 2, queue: 4 };

/** A scrape reads runs, queues and SLO records at once; Prometheus scrapes one at a time, so one is plenty. */
export const DEFAULT_METRICS_ADMISSION: AdmissionLimits = { concurrency: 1, queue: 4 };
