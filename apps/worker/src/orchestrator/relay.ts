import type pg from 'pg';
import type { Logger } from '@ito/config';
import { RUN_EVENT_TYPES, nextCommands, normalizeRunAggregate, type RunAggregate } from '@ito/domain';
import type { AsyncProjection, Ledger } from '@ito/ledger';
import type { JobClient } from '@ito/queue';
import type { PipelineJobs } from '../jobs/catalog.js';
import { enqueueCommand } from './enqueue.js';

export const ORCHESTRATOR_PROJECTION = 'orchestrator';

/**
 * The ledger's outbox, read as an async projection: for every run that a batch of committed events touched,
 * the orchestrator's decider looks at the run's state and its commands are enqueued as jobs. The checkpoint
 * moves in the same transaction, so a crash re-reads the batch; job ids come from the decisions, so enqueueing
 * them again is harmless. Nothing here decides: it reads, asks `nextCommands`, and enqueues.
 */
export function orchestratorProjection(jobs: JobClient<PipelineJobs>): AsyncProjection {
  return {
    name: ORCHESTRATOR_PROJECTION,
    handles: [...RUN_EVENT_TYPES],
    async apply(client, events) {
      const runIds = [...new Set(events.map((e) => (e.data as { run_id?: string }).run_id).filter((id): id is string => !!id))];
      if (runIds.length === 0) return;
      const { rows } = await client.query<{ run_id: string; tenant_id: string; aggregate: Partial<RunAggregate> }>(
        'select run_id, tenant_id, aggregate from runs where run_id = any($1::text[])',
        [runIds],
      );
      for (const row of rows) {
        for (const cmd of nextCommands(normalizeRunAggregate(row.aggregate))) await enqueueCommand(jobs, row, cmd);
      }
    },
    // Its only output is jobs, which are idempotent by id: a rebuild re-enqueues and changes nothing.
    async reset(_client: pg.PoolClient) {},
  };
}

export interface Relay {
  stop(): Promise<void>;
}

/**
 * Runs the orchestrator projection until stopped: back to back while there is work, then every `pollMs`.
 * Several workers may run it; the checkpoint's compare-and-set lets one apply each batch.
 */
export function startRelay(ledger: Ledger, projection: AsyncProjection, logger: Logger, opts: { pollMs?: number; batchSize?: number } = {}): Relay {
  const pollMs = opts.pollMs ?? 50;
  let stopped = false;
  let wake: (() => void) | null = null;
  const sleep = (ms: number) =>
    new Promise<void>((resolve) => {
      const t = setTimeout(() => {
        wake = null;
        resolve();
      }, ms);
      wake = () => {
        clearTimeout(t);
        wake = null;
        resolve();
      };
    });
  const loop = (async () => {
    while (!stopped) {
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
      wake?.();
      await loop;
    },
  };
}
