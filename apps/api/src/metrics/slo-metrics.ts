import type pg from 'pg';
import { histogramSamples, type ScrapedMetrics, type Sample } from './scraped-metric.js';

/** Bounds that bracket the default targets (10 s, 60 s) and the seed's bounds (600 s, 900 s). */
export const SLO_BUCKETS = [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900] as const;

/** The incident kinds a label may carry (IncidentFacts['kind']); anything else in a row is not reported. */
const KINDS = new Set(['crash', 'gpu_fault', 'error', 'node_lost', 'hang', 'stopped']);

/** One aggregate per scrape over the projected SLO records: the cumulative bucket counts per incident kind. */
async function latencyHistogram(pool: pg.Pool, name: string, column: 'detection_s' | 'resume_s'): Promise<Sample[]> {
  const buckets = SLO_BUCKETS.map((b, i) => `count(*) filter (where ${column} <= ${b}) as b${i}`).join(', ');
  const { rows } = await pool.query<Record<string, string>>(
    `select incident_kind, ${buckets}, count(${column}) as n, coalesce(sum(${column}), 0) as total
       from slo_incidents where ${column} is not null group by incident_kind order by incident_kind`,
  );
  return rows
    .filter((r) => KINDS.has(r.incident_kind!))
    .flatMap((r) =>
      histogramSamples(name, { incident_kind: r.incident_kind! }, SLO_BUCKETS, SLO_BUCKETS.map((_, i) => Number(r[`b${i}`])), Number(r.n), Number(r.total)),
    );
}

/**
 * The SLO series, computed from the ledger's SLO records at scrape time: detection and resume latency of every
 * incident a run resumed from, by kind, and the breaches by SLO and bound.
 */
export function registerSloMetrics(scraped: ScrapedMetrics, pool: pg.Pool): void {
  scraped.register({
    name: 'ito_slo_detection_latency_seconds',
    help: 'Detection latency of each incident a run resumed from (detected − last heartbeat or progress), by incident kind; from the ledger.',
    type: 'histogram',
    read: () => latencyHistogram(pool, 'ito_slo_detection_latency_seconds', 'detection_s'),
  });
  scraped.register({
    name: 'ito_slo_resume_latency_seconds',
    help: 'Resume latency of each incident a run resumed from (RunResumed − detected), by incident kind; from the ledger.',
    type: 'histogram',
    read: () => latencyHistogram(pool, 'ito_slo_resume_latency_seconds', 'resume_s'),
  });
  scraped.register({
    name: 'ito_slo_breaches_total',
    help: 'SloBreached events recorded, by SLO (detection, resume) and bound (target, seed); from the ledger.',
    type: 'counter',
    read: async () => {
      const { rows } = await pool.query<{ slo: string; bound: string; n: string }>('select slo, bound, count(*) as n from slo_breaches group by slo, bound order by slo, bound');
      return rows.filter((r) => ['detection', 'resume'].includes(r.slo) && ['target', 'seed'].includes(r.bound)).map((r) => ({ labels: { slo: r.slo, bound: r.bound }, value: Number(r.n) }));
    },
  });
}
