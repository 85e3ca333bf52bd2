import type pg from 'pg';
import type { Logger } from '@ito/config';
import { RUN_EVENT_TYPES, commandKey, nextCommands, normalizeRunAggregate, type RunAggregate } from '@ito/domain';
import { listen, type AsyncProjection, type Ledger } from '@ito/ledger';
import type { JobClient } from '@ito/queue';
import type { PipelineJobs } from '../jobs/catalog.js';
import { enqueueCommand } from './enqueue.js';

export const ORCHESTRATOR_PROJECTION = 'orchestrator';

/**
 * Events after which the orchestrator may have something to do: every run event but progress (its consequences, a
 * loss spike or the budget's stop, are events of their own). Progress is most of a run's stream.
 */
export const ORCHESTRATED_EVENT_TYPES = RUN_EVENT_TYPES.filter((t) => t !== 'ProgressRecorded');

/** How many job ids the relay remembers having enqueued, so a decision it sees again costs no queue round trip. */
const REMEMBERED_JOBS = 10_000;

type Db = pg.Pool | pg.PoolClient;

/**
 * Asks the orchestrator's decider about runs and enqueues what it answers. The decider looks at a run's state, not
 * at which event arrived, so evaluating a run twice or late gives the same commands, and each command's job id is
 * the decision: enqueueing it again is harmless. The ids already enqueued are remembered, because a run is
 * evaluated after each of its events until its job acts, and each repeat would cost a queue round trip.
 */
export function createRunEvaluator(jobs: JobClient<PipelineJobs>, logger?: Logger) {
  const enqueued = new Set<string>();
  const remember = (key: string) => {
    enqueued.add(key);
    if (enqueued.size > REMEMBERED_JOBS) enqueued.delete(enqueued.values().next().value!);
  };
  return {
    async evaluate(db: Db, runIds: string[], via: 'outbox' | 'notify'): Promise<number> {
      if (runIds.length === 0) return 0;
      const { rows } = await db.query<{ run_id: string; tenant_id: string; aggregate: Partial<RunAggregate> }>({
        name: 'ito_orchestrator_runs',
        text: 'select run_id, tenant_id, aggregate from runs where run_id = any($1::text[])',
        values: [runIds],
      });
      const due = rows
        .flatMap((row) => nextCommands(normalizeRunAggregate(row.aggregate)).map((cmd) => ({ row, cmd, key: `${row.run_id}:${commandKey(cmd)}` })))
        .filter((d) => !enqueued.has(d.key));
      // In parallel: the commands of different runs are independent, and each is idempotent by its job id.
      await Promise.all(
        due.map(async ({ row, cmd, key }) => {
          await enqueueCommand(jobs, row, cmd);
          remember(key);
          logger?.debug({ run_id: row.run_id, command: cmd.type, via }, 'enqueued');
        }),
      );
      return due.length;
    },
    forget() {
      enqueued.clear();
    },
  };
}

export type RunEvaluator = ReturnType<typeof createRunEvaluator>;

/**
 * The durable path: the ledger's outbox, read as an async projection. For every run a batch of committed events
 * touched, the evaluator runs inside the batch's transaction, before its checkpoint commits: a crash re-reads the
 * batch, so no committed event is ever left unevaluated.
 */
export function orchestratorProjection(evaluator: RunEvaluator): AsyncProjection {
  return {
    name: ORCHESTRATOR_PROJECTION,
    handles: ORCHESTRATED_EVENT_TYPES,
    async apply(client, events) {
      const runIds = [...new Set(events.map((e) => (e.data as { run_id?: string }).run_id).filter((id): id is string => !!id))];
      await evaluator.evaluate(client, runIds, 'outbox');
    },
    // Its only output is jobs, which are idempotent by id: a rebuild re-enqueues and changes nothing.
    async reset(_client: pg.PoolClient) {
      evaluator.forget();
    },
  };
}

export interface Relay {
  stop(): Promise<void>;
}

export interface RelayOptions {
  /** How often the outbox is read when nothing woke the relay. @defaultValue 1000 with `listenOn`, else 50 */
  pollMs?: number;
  batchSize?: number;
  /**
   * The channel the runs projection NOTIFYs with the ids of the runs a transaction changed. A notification is
   * delivered at commit, so those runs are evaluated at once (the fast path), and the outbox is read again too.
   */
  listenOn?: { pool: pg.Pool; channel: string };
}

/** Run ids arriving together within this long are evaluated in one query. */
const COALESCE_MS = 2;

/**
 * Fast-path evaluations in flight at once. One at a time, the runs a notification named waited behind the whole
 * previous evaluation (its query and every enqueue it made): in the pipeline bench that wait was 15 ms p50 and
 * 126 ms p99 of a stage hand-off. Evaluations are idempotent by job id, so overlapping ones are safe.
 */
const FAST_PATH_IN_FLIGHT = 4;

/**
 * Runs the orchestrator: the fast path evaluates the runs a notification names as soon as it arrives; the durable
 * path reads the outbox in safe order (an event is seen there only once every older transaction has ended, which
 * under load is tens of milliseconds behind the commit). Several workers may run it: the outbox checkpoint's
 * compare-and-set lets one apply each batch, and the fast path's commands are idempotent by job id.
 */
export function startRelay(ledger: Ledger, projection: AsyncProjection, evaluator: RunEvaluator, logger: Logger, opts: RelayOptions = {}): Relay {
  const pollMs = opts.pollMs ?? (opts.listenOn ? 1_000 : 50);
  let stopped = false;
  let woken = false;
  const wake: { now: (() => void) | null } = { now: null };
  const wakeUp = () => {
    woken = true;
    wake.now?.();
  };

  let pending = new Set<string>();
  // The evaluations in flight; `collecting` is the one still gathering ids in its coalescing window.
  const flushes = new Set<Promise<void>>();
  let collecting = false;
  const evaluateNotified = () => {
    if (collecting || pending.size === 0 || flushes.size >= FAST_PATH_IN_FLIGHT) return;
    collecting = true;
    const flush: Promise<void> = new Promise<void>((r) => setTimeout(r, COALESCE_MS))
      .then(async () => {
        collecting = false;
        const runIds = [...pending];
        pending = new Set();
        if (!opts.listenOn || stopped) return;
        await evaluator.evaluate(opts.listenOn.pool, runIds, 'notify');
      })
      .catch((err: Error) => logger.warn({ err: { message: err.message } }, 'orchestrator fast path failed; the outbox will catch up'))
      .finally(() => {
        flushes.delete(flush);
        evaluateNotified();
      });
    flushes.add(flush);
  };

  const listener = opts.listenOn
    ? listen(opts.listenOn.pool, opts.listenOn.channel, {
        onNotify: (payload) => {
          for (const id of payload.split(',')) if (/^run_[0-9a-f]{32}$/.test(id)) pending.add(id);
          evaluateNotified();
          wakeUp();
        },
        onListening: wakeUp,
        onError: (err) => logger.warn({ err: { message: err.message } }, 'orchestrator relay lost its listener; polling until it reconnects'),
      })
    : null;

  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      if (woken) return resolve();
      const t = setTimeout(() => {
        wake.now = null;
        resolve();
      }, ms);
      wake.now = () => {
        clearTimeout(t);
        wake.now = null;
        resolve();
      };
    });

  const loop = (async () => {
    while (!stopped) {
      woken = false;
      try {
        const applied = await ledger.runProjection(projection, { batchSize: opts.batchSize ?? 500 });
        if (applied === 0) await sleep(pollMs);
      } catch (err) {
        logger.warn({ err: { message: (err as Error).message } }, 'orchestrator relay batch failed; retrying');
        await sleep(1_000);
      }
    }
  })();

  return {
    async stop() {
      stopped = true;
      wakeUp();
      await loop;
      while (flushes.size > 0) await Promise.all([...flushes]);
      await listener?.close();
    },
  };
}
