import { UnrecoverableError, type Job } from 'bullmq';
import { ItoError } from '@ito/contracts';
import type { JobCatalog, JobContext, JobHandlers, JobName } from './catalog.js';
import { queueNameOf } from './catalog.js';
import type { AnyWorker, KitWorkerOptions, QueueKit } from './kit.js';
import { parseJobData } from './validate.js';

export interface JobWorkerEvents {
  /** A job finished successfully. */
  onCompleted?: (info: { name: string; jobId: string }) => void;
  onFailed?: (info: { name: string; jobId: string; reason: string; final: boolean }) => void;
}

export class JobTimeoutError extends Error {
  override readonly name = 'JobTimeoutError';
}

/** Thrown by a handler whose job can never succeed (what it names does not exist): failed at once, not retried. */
export class PermanentJobError extends Error {
  override readonly name = 'PermanentJobError';
}

/**
 * Starts one worker per queue used by the catalog, dispatching each job to its handler. Data is validated on
 * receipt too: a job that does not match its schema (a producer on an older version, a hand-made job) fails
 * for good without retries. Each attempt is bounded by the job's timeout.
 */
export function startJobWorkers<C extends JobCatalog>(
  kit: QueueKit,
  catalog: C,
  handlers: JobHandlers<C>,
  opts: KitWorkerOptions & JobWorkerEvents = {},
): AnyWorker[] {
  const byQueue = new Map<string, string[]>();
  for (const name of Object.keys(catalog)) {
    const queue = queueNameOf(name, catalog[name]!);
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), name]);
  }
  const workers: AnyWorker[] = [];
  for (const queue of byQueue.keys()) {
    const worker = kit.worker(
      queue,
      async (job: Job, _token?: string, signal?: AbortSignal) => {
        const name = job.name;
        const def = catalog[name];
        const handler = (handlers as Record<string, JobHandlers<C>[JobName<C>]>)[name];
        if (!def || !handler) throw new UnrecoverableError(`no handler for job ${name} on queue ${queue}`);
        let data: unknown;
        try {
          data = parseJobData(name, def, job.data);
        } catch (err) {
          throw new UnrecoverableError(err instanceof ItoError ? err.message : String(err));
        }
        try {
          return await runBounded(def.timeoutMs, signal, (ctx) => handler(data as never, ctx), job.id ?? '', job.attemptsMade + 1, name);
        } catch (err) {
          throw err instanceof PermanentJobError ? new UnrecoverableError(err.message) : err;
        }
      },
      { concurrency: opts.concurrency ?? 1 },
    );
    worker.on('completed', (job: Job) => opts.onCompleted?.({ name: job.name, jobId: job.id ?? '' }));
    worker.on('failed', (job: Job | undefined, err: Error) => {
      if (!job) return;
      const final = err instanceof UnrecoverableError || job.attemptsMade >= (job.opts.attempts ?? 1);
      opts.onFailed?.({ name: job.name, jobId: job.id ?? '', reason: err.message, final });
    });
    workers.push(worker);
  }
  return workers;
}

async function runBounded(
  timeoutMs: number,
  outer: AbortSignal | undefined,
  fn: (ctx: JobContext) => Promise<unknown>,
  jobId: string,
  attempt: number,
  name: string,
): Promise<unknown> {
  const controller = new AbortController();
  const onOuterAbort = () => controller.abort(outer?.reason);
  outer?.addEventListener('abort', onOuterAbort, { once: true });
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      const err = new JobTimeoutError(`job ${name} (${jobId}) timed out after ${timeoutMs} ms`);
      controller.abort(err);
      reject(err);
    }, timeoutMs);
  });
  try {
    return await Promise.race([fn({ jobId, attempt, signal: controller.signal }), timeout]);
  } finally {
    clearTimeout(timer);
    outer?.removeEventListener('abort', onOuterAbort);
  }
}
