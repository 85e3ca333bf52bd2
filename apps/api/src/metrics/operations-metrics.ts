import type pg from 'pg';
import { Counter, Histogram, type Registry } from 'prom-client';
import { RUN_STATES } from '@ito/contracts';
import type { Ledger, LedgerTx } from '@ito/ledger';
import { registerQueueMetrics, type QueueSource } from './queue-metrics.js';
import { ScrapedMetrics } from './scraped-metric.js';
import { registerSloMetrics } from './slo-metrics.js';

/** The metrics the API's own code feeds: heartbeats taken in, and the time of each ledger append it makes. */
export interface OperationsMetrics {
  heartbeatsIngested: Counter;
  /** The ledger with every append (plain, in a transaction, in an idempotent transaction) timed. */
  timed(ledger: Ledger): Ledger;
}

/**
 * The operations series on /metrics beside the HTTP ones: runs by state, queue depths and job durations, the
 * SLO latencies and breaches (all read at scrape time from shared stores, so replicas agree), and this process's
 * ledger append time and heartbeat count. Labels are states, queue and job names from the catalogs and incident
 * kinds: never an id, never caller input.
 */
export function registerOperationsMetrics(registry: Registry, pool: pg.Pool, queues: QueueSource | undefined): OperationsMetrics {
  const states = new Set<string>(RUN_STATES);
  const scraped = new ScrapedMetrics(registry);
  scraped.register({
    name: 'ito_runs',
    help: 'Runs by state, from the runs projection at scrape time.',
    type: 'gauge',
    read: async () => {
      const { rows } = await pool.query<{ state: string; n: string }>('select state, count(*) as n from runs group by state');
      const counts = new Map(rows.map((r) => [r.state, Number(r.n)]));
      return [...states].map((state) => ({ labels: { state }, value: counts.get(state) ?? 0 }));
    },
  });
  registerSloMetrics(scraped, pool);
  if (queues) registerQueueMetrics(scraped, queues);
  scraped.registerFailures();

  const heartbeatsIngested = new Counter({
    name: 'ito_heartbeats_ingested_total',
    help: 'Agent heartbeats this API process accepted.',
    registers: [registry],
  });
  const appendDuration = new Histogram({
    name: 'ito_ledger_append_duration_seconds',
    help: 'Time of each ledger append this API process made (inside its transaction, inline projections included).',
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1],
    registers: [registry],
  });

  const timedAppend = <A extends unknown[], R>(append: (...args: A) => Promise<R>) => async (...args: A): Promise<R> => {
    const end = appendDuration.startTimer();
    try {
      return await append(...args);
    } finally {
      end();
    }
  };
  const timedTx = (tx: LedgerTx): LedgerTx => ({
    client: tx.client,
    idempotency: tx.idempotency,
    append: timedAppend(tx.append.bind(tx)),
    // A multi-stream append is one statement: one observation, like an append.
    appendMany: timedAppend(tx.appendMany.bind(tx)) as LedgerTx['appendMany'],
  });

  return {
    heartbeatsIngested,
    timed: (ledger) => ({
      ...ledger,
      append: timedAppend(ledger.append.bind(ledger)),
      appendMany: timedAppend(ledger.appendMany.bind(ledger)) as typeof ledger.appendMany,
      transaction: (fn) => ledger.transaction((tx) => fn(timedTx(tx))),
      idempotentTransaction: (claim, work) => ledger.idempotentTransaction(claim, (tx) => work(timedTx(tx))),
    }),
  };
}
