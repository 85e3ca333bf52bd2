import type { z } from 'zod';

/**
 * One job kind: its queue, the shape of its data, how long a run may take and how its id is derived.
 * Ids are deterministic (for example `stage:${runId}:${stage}`) so enqueueing the same work twice is harmless.
 */
export interface JobDefinition<S extends z.ZodType = z.ZodType> {
  /** Queue the job lives on. @defaultValue the job's catalog name */
  queue?: string;
  schema: S;
  /** A single attempt is abandoned (and counted as failed) after this long. */
  timeoutMs: number;
  /**
   * Derives the job id from validated data. BullMQ refuses integer-like ids and ids with ':' unless they have
   * exactly three ':'-separated parts (`stage:${runId}:${stage}`); enqueue checks this before BullMQ does.
   */
  jobId: (data: z.output<S>) => string;
  /** Attempts before the job fails for good. @defaultValue 3 */
  attempts?: number;
  /** Base of the retry back-off (its fixed delay when `backoffType` is fixed). @defaultValue 1000 */
  backoffMs?: number;
  /** Exponential for transient faults; fixed for a job that waits for something to become true. @defaultValue 'exponential' */
  backoffType?: 'exponential' | 'fixed';
  /**
   * Whose share of the workers the job counts against (a tenant). With the workers' `fairShare` limit, one key's
   * backlog holds at most that many of a worker's slots; the rest stay free for other keys. Unset: not limited.
   */
  fairShareKey?: (data: z.output<S>) => string;
}

export type JobCatalog = Record<string, JobDefinition>;

export type JobName<C extends JobCatalog> = Extract<keyof C, string>;
export type JobInput<C extends JobCatalog, K extends JobName<C>> = z.input<C[K]['schema']>;
export type JobData<C extends JobCatalog, K extends JobName<C>> = z.output<C[K]['schema']>;

export interface JobContext {
  jobId: string;
  /** 1 on the first attempt. */
  attempt: number;
  /** Aborted when the attempt times out or the worker shuts down. */
  signal: AbortSignal;
}

/** A handler for every job in the catalog: the compiler refuses a catalog entry nobody processes. */
export type JobHandlers<C extends JobCatalog> = { [K in JobName<C>]: (data: JobData<C, K>, ctx: JobContext) => Promise<unknown> };

/** One catalog entry, typed by its schema: `jobId` receives the parsed data with its real type. */
export function defineJob<S extends z.ZodType>(def: JobDefinition<S>): JobDefinition<S> {
  return def;
}

/** Identity at runtime; keeps the literal names and schemas for the types above. */
export function defineJobs<const C extends JobCatalog>(catalog: C): C {
  for (const [name, def] of Object.entries(catalog)) {
    if (!Number.isFinite(def.timeoutMs) || def.timeoutMs <= 0) throw new Error(`job ${name}: timeoutMs must be positive`);
  }
  return catalog;
}

export function queueNameOf(name: string, def: JobDefinition): string {
  return def.queue ?? name;
}
