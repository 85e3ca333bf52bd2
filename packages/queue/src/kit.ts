import { Queue, Worker, createPostgresBackend, withBackend, type IQueueBackend, type Processor, type WorkerOptions } from 'bullmq';
import pg from 'pg';
import type { QueueBackendConfig } from './backend-config.js';
import { assertNoEviction } from './eviction-policy.js';
import { createRedisClient, dataNodes } from './redis-client.js';

/* eslint-disable @typescript-eslint/no-explicit-any -- BullMQ's generics are erased at this seam on purpose. */
export type AnyQueue = Queue<any, any, string, any, any, string, IQueueBackend, any>;
export type AnyWorker = Worker<any, any, string, IQueueBackend, any, any>;
/* eslint-enable @typescript-eslint/no-explicit-any */

export interface KitWorkerOptions {
  /** Jobs processed at once by this worker. @defaultValue 1 */
  concurrency?: number;
}

/** Queues and workers on one backend, with one lifecycle. */
export interface QueueKit {
  readonly kind: QueueBackendConfig['kind'];
  /** The queue of this name (one instance per name, created on first use). */
  queue(name: string): AnyQueue;
  worker(name: string, handler: Processor, opts?: KitWorkerOptions): AnyWorker;
  /** Resolves when the backend answers; rejects otherwise. */
  ping(): Promise<void>;
  /**
   * Rejects with a QueueStoreUnfitError when the store may drop jobs: a Redis (any master of a cluster) whose
   * maxmemory-policy is not noeviction. Always resolves on the PostgreSQL backend, which never evicts.
   */
  assertDurable(): Promise<void>;
  /**
   * Closes workers first, then queues and connections. Running jobs are told to stop (their handler's signal is
   * aborted) and waited for, so a long job does not hold the shutdown; one that stopped part-way is retried later
   * like any failed attempt. Idempotent.
   */
  close(): Promise<void>;
}

export interface QueueKitOptions {
  /**
   * Namespace for this kit's queues: the Redis key prefix, or the PostgreSQL schema (as `<prefix>_queue`).
   * @defaultValue 'ito'
   */
  prefix?: string;
  /**
   * Connection errors of queues and workers (BullMQ retries them). Errors raised while the kit is closing,
   * such as connections the database ends during shutdown, are not reported.
   * @defaultValue ignore
   */
  onError?: (err: Error, source: { kind: 'queue' | 'worker'; name: string }) => void;
  /**
   * How long a worker's claim on a job lasts unless the worker renews it (it does, while it lives), and how
   * often workers look for claims left to lapse. A job whose worker died is handed to another worker once its
   * claim lapsed and the next look finds it: within about twice this.
   * @defaultValue 30_000 (BullMQ's own)
   */
  jobLockMs?: number;
}

const PREFIX = /^[a-z][a-z0-9_]{0,40}$/;

export function createQueueKit(cfg: QueueBackendConfig, opts: QueueKitOptions = {}): QueueKit {
  const prefix = opts.prefix ?? 'ito';
  if (!PREFIX.test(prefix)) throw new Error(`queue prefix must match ${PREFIX.source}`);
  const backend = cfg.kind === 'redis' ? redisBackend(cfg.redisUrl, cfg.cluster ?? false, prefix) : postgresBackend(cfg.databaseUrl, `${prefix}_queue`);
  const queues = new Map<string, AnyQueue>();
  const workers: AnyWorker[] = [];
  let closing: Promise<void> | null = null;
  const report = (err: Error, source: { kind: 'queue' | 'worker'; name: string }) => {
    if (!closing) opts.onError?.(err, source);
  };

  return {
    kind: cfg.kind,
    queue(name) {
      if (closing) throw new Error('queue kit is closed');
      let q = queues.get(name);
      if (!q) {
        q = backend.queue(name);
        q.on('error', (err: Error) => report(err, { kind: 'queue', name }));
        queues.set(name, q);
      }
      return q;
    },
    worker(name, handler, workerOpts = {}) {
      if (closing) throw new Error('queue kit is closed');
      const w = backend.worker(name, handler, {
        concurrency: workerOpts.concurrency ?? 1,
        ...(opts.jobLockMs !== undefined ? { lockDuration: opts.jobLockMs, stalledInterval: opts.jobLockMs } : {}),
      });
      w.on('error', (err: Error) => report(err, { kind: 'worker', name }));
      workers.push(w);
      return w;
    },
    ping: backend.ping,
    assertDurable: backend.assertDurable,
    close() {
      closing ??= (async () => {
        // Closing first stops them taking new jobs; then the running ones are asked to stop.
        const closed = workers.map((w) => w.close());
        for (const w of workers) w.cancelAllJobs('the worker is shutting down');
        await Promise.all(closed);
        await Promise.all([...queues.values()].map((q) => q.close()));
        await backend.close();
      })();
      return closing;
    },
  };
}

interface Backend {
  queue(name: string): AnyQueue;
  worker(name: string, handler: Processor, opts: Pick<WorkerOptions, 'concurrency' | 'lockDuration' | 'stalledInterval'>): AnyWorker;
  ping(): Promise<void>;
  assertDurable(): Promise<void>;
  close(): Promise<void>;
}

/**
 * The Redis name of a queue: wrapped in a hash tag, so that every key of one queue (`<prefix>:{<queue>}:wait`,
 * `…:active`, `…:<job id>`) lands in one Redis Cluster slot, as BullMQ's multi-key scripts need, while different
 * queues spread over the masters. The same names on a single Redis keep the key layout identical in both.
 */
export function redisQueueName(name: string): string {
  return `{${name}}`;
}

function redisBackend(url: string, cluster: boolean, prefix: string): Backend {
  // One shared client; BullMQ duplicates it for each worker's blocking reads.
  const connection = createRedisClient(url, cluster);
  // Errors surface through ping() and job failures; an unhandled 'error' event would crash the process.
  connection.on('error', () => undefined);
  return {
    queue: (name) => new Queue(redisQueueName(name), { connection, prefix }) as unknown as AnyQueue,
    worker: (name, handler, opts) => new Worker(redisQueueName(name), handler, { connection, prefix, ...opts }) as unknown as AnyWorker,
    assertDurable: async () => assertNoEviction(await withTimeout(dataNodes(connection), 5_000, 'Redis did not answer within 5 s')),
    ping: async () => {
      const answer = await withTimeout(connection.ping(), 3_000, 'Redis ping timed out');
      if (answer !== 'PONG') throw new Error(`unexpected Redis ping answer: ${answer}`);
    },
    close: async () => {
      // QUIT waits for a reply that an unreachable server never sends; drop the socket instead.
      if (connection.status === 'ready') await connection.quit().catch(() => connection.disconnect());
      else connection.disconnect();
    },
  };
}

function postgresBackend(databaseUrl: string, schema: string): Backend {
  const { Queue: PgQueue, Worker: PgWorker } = withBackend(createPostgresBackend);
  // Each queue and worker owns a small pool; `migrate` creates BullMQ's schema on first use (advisory-locked).
  const connection = () => ({ connectionString: databaseUrl, schema, migrate: true, max: 3 });
  const probe = new pg.Pool({ connectionString: databaseUrl, max: 1, connectionTimeoutMillis: 3_000 });
  probe.on('error', () => undefined);
  return {
    queue: (name) => new PgQueue(name, { connection: connection() }) as unknown as AnyQueue,
    worker: (name, handler, opts) => new PgWorker(name, handler, { connection: connection(), ...opts }) as unknown as AnyWorker,
    ping: async () => {
      await withTimeout(probe.query('select 1'), 3_000, 'PostgreSQL queue backend ping timed out');
    },
    assertDurable: async () => undefined,
    close: async () => {
      await probe.end();
    },
  };
}

function withTimeout<T>(p: Promise<T>, ms: number, message: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(message)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}
