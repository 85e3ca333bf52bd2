import { ItoError } from '@ito/contracts';
import type { JobCatalog, JobInput, JobName } from './catalog.js';
import { queueNameOf } from './catalog.js';
import type { QueueKit } from './kit.js';
import { parseJobData } from './validate.js';

export type JobStatus = 'waiting' | 'active' | 'delayed' | 'completed' | 'failed' | 'prioritized' | 'waiting-children' | 'unknown';

export interface JobSnapshot {
  jobId: string;
  state: JobStatus;
  returnValue: unknown;
  failedReason: string | null;
  attemptsMade: number;
}

export interface JobClient<C extends JobCatalog> {
  /**
   * Validates and enqueues; the id comes from the catalog, so a second enqueue of the same work is a no-op
   * while the first job is still kept (completed jobs are kept for a week).
   */
  enqueue<K extends JobName<C>>(name: K, data: JobInput<C, K>, opts?: { delayMs?: number }): Promise<{ jobId: string }>;
  /** Runs the job every `everyMs`, under one scheduler id per job name (re-registering replaces it). */
  schedule<K extends JobName<C>>(name: K, everyMs: number, data: JobInput<C, K>): Promise<void>;
  /** Where a job stands, or null if no such job is kept. */
  snapshot<K extends JobName<C>>(name: K, jobId: string): Promise<JobSnapshot | null>;
}

const KEEP_COMPLETED_S = 7 * 24 * 3600;

export function createJobClient<C extends JobCatalog>(kit: QueueKit, catalog: C): JobClient<C> {
  const definition = (name: string) => {
    const def = catalog[name];
    if (!def) throw new ItoError('validation_failed', `unknown job ${name}`);
    return def;
  };
  return {
    async enqueue(name, input, opts = {}) {
      const def = definition(name);
      const data = parseJobData(name, def, input);
      const jobId = checkJobId(name, def.jobId(data));
      await kit.queue(queueNameOf(name, def)).add(name, data, {
        jobId,
        attempts: def.attempts ?? 3,
        backoff: { type: def.backoffType ?? 'exponential', delay: def.backoffMs ?? 1_000 },
        delay: opts.delayMs,
        removeOnComplete: { age: KEEP_COMPLETED_S },
        removeOnFail: { age: KEEP_COMPLETED_S },
      });
      return { jobId };
    },
    async schedule(name, everyMs, input) {
      if (!Number.isInteger(everyMs) || everyMs <= 0) throw new ItoError('validation_failed', `job ${name}: everyMs must be a positive integer`);
      const def = definition(name);
      const data = parseJobData(name, def, input);
      await kit.queue(queueNameOf(name, def)).upsertJobScheduler(
        `scheduler:${name}`,
        { every: everyMs },
        { name, data, opts: { attempts: def.attempts ?? 3, removeOnComplete: { count: 100 }, removeOnFail: { count: 100 } } },
      );
    },
    async snapshot(name, jobId) {
      const def = definition(name);
      const queue = kit.queue(queueNameOf(name, def));
      // State first, then the job: a job that finishes between the two reads is then seen as finished with its
      // result or reason, never as finished with the fields it had before.
      const state = (await queue.getJobState(jobId)) as JobStatus;
      if (state === 'unknown') return null;
      const job = await queue.getJob(jobId);
      if (!job) return null;
      return {
        jobId,
        state,
        returnValue: job.returnvalue ?? null,
        failedReason: job.failedReason ?? null,
        attemptsMade: job.attemptsMade,
      };
    },
  };
}

/** The id rules BullMQ enforces, checked up front so the caller gets a stable code instead of a bare Error. */
function checkJobId(name: string, jobId: string): string {
  const parts = jobId.split(':');
  if (jobId === '' || `${Number.parseInt(jobId, 10)}` === jobId || (parts.length > 1 && parts.length !== 3) || parts.some((p) => p === '')) {
    throw new ItoError('validation_failed', `job ${name}: id "${jobId}" must be non-numeric with no ':' or exactly three ':'-separated parts`);
  }
  return jobId;
}
