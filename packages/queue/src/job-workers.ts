import { DelayedError, UnrecoverableError, type Job } from 'bullmq';
import { ItoError } from '@ito/contracts';
import type { JobCatalog, JobContext, JobHandlers, JobName } from './catalog.js';
import { queueNameOf } from './catalog.js';
import type { AnyWorker, KitWorkerOptions, QueueKit } from './kit.js';
import { parseJobData } from './validate.js';
import { FairShareSlots, type FairShare } from './fair-share.js';

export type { FairShare } from './fair-share.js';

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
 *
 * With `fairShare`, a job whose catalog entry names a `fairShareKey` starts while fewer than `maxActivePerKey`
 * jobs of that key run in this worker, or beyond that in idle slots while no other key waits and `keepFree`
 * slots stay free (`FairShareSlots`); otherwise it goes back to the queue (delayed, behind what is waiting, its
 * attempt not spent), so jobs of other keys queued behind one key's backlog take the free slots. The count is
 * this process's own: it needs no shared state that a dead worker could leave held, and every worker process
 * keeps its own slots free for other keys. It holds on both backends alike.
 */
export function startJobWorkers<C extends JobCatalog>(
  kit: QueueKit,
  catalog: C,
  handlers: JobHandlers<C>,
  opts: KitWorkerOptions & JobWorkerEvents & { fairShare?: FairShare } = {},
): AnyWorker[] {
  const fair = opts.fairShare;
  const concurrency = opts.concurrency ?? 1;
  if (fair) FairShareSlots.check(fair); // a bad share is refused before any worker starts
  const byQueue = new Map<string, string[]>();
  for (const name of Object.keys(catalog)) {
    const queue = queueNameOf(name, catalog[name]!);
    byQueue.set(queue, [...(byQueue.get(queue) ?? []), name]);
  }
  const workers: AnyWorker[] = [];
  for (const queue of byQueue.keys()) {
    const slots = fair ? new FairShareSlots(fair, concurrency) : null;
    const runJob = async (job: Job, token?: string, signal?: AbortSignal): Promise<unknown> => {
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
      const key = slots && def.fairShareKey ? def.fairShareKey(data as never) : null;
      const deferMs = key !== null ? slots!.tryTake(key, job.id ?? '') : null;
      if (deferMs !== null) {
        // Over its share: back behind the queue, not failed, so the slot goes to whatever waits next.
        await job.moveToDelayed(Date.now() + deferMs, token);
        throw new DelayedError();
      }
      try {
        return await runBounded(def.timeoutMs, signal, (ctx) => handler(data as never, ctx), job.id ?? '', job.attemptsMade + 1, name);
      } catch (err) {
        throw err instanceof PermanentJobError ? new UnrecoverableError(err.message) : err;
      } finally {
        if (key !== null) slots!.release(key);
      }
    };
    const worker = kit.worker(
      queue,
      async (job: Job, token?: string, signal?: AbortSignal) => {
        // Every job holds one of the worker's slots while it is here, keyed or not: what the share counts free.
        slots?.enter();
        try {
          return await runJob(job, token, signal);
        } finally {
          slots?.leave();
        }
      },
      { concurrency },
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
