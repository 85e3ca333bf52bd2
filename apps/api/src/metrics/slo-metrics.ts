import type pg from 'pg';
import { INCIDENT_KINDS, SLO_BOUNDS, SLO_NAMES, type SloName } from '@ito/domain';
import { SLO_BUCKETS } from '@ito/runs';
import { histogramSamples, type ScrapedMetrics, type Sample } from './scraped-metric.js';

/** The label values a row may carry; anything else in a row is not reported. */
const KINDS = new Set<string>(INCIDENT_KINDS);
const SLOS = new Set<string>(SLO_NAMES);
const BOUNDS = new Set<string>(SLO_BOUNDS);

/** One small read per scrape: the projected bucket counts of one latency, summed over tenants, made cumulative. */
async function latencyHistogram(pool: pg.Pool, name: string, latency: SloName): Promise<Sample[]> {
  const { rows } = await pool.query<{ incident_kind: string; bucket: number; n: string; total: number }>(
    `select incident_kind, bucket, sum(count) as n, sum(sum_s) as total from slo_latency_counts
      where latency = $1 group by incident_kind, bucket order by incident_kind, bucket`,
    [latency],
  );
  const byKind = new Map<string, { perBucket: number[]; sum: number }>();
  for (const r of rows) {
    if (!KINDS.has(r.incident_kind) || r.bucket < 0 || r.bucket > SLO_BUCKETS.length) continue;
    const k = byKind.get(r.incident_kind) ?? { perBucket: new Array<number>(SLO_BUCKETS.length + 1).fill(0), sum: 0 };
    k.perBucket[r.bucket] = Number(r.n);
    k.sum += Number(r.total);
    byKind.set(r.incident_kind, k);
  }
  return [...byKind].flatMap(([kind, k]) => {
    let running = 0;
    const cumulative = k.perBucket.map((n) => (running += n));
    return histogramSamples(name, { incident_kind: kind }, SLO_BUCKETS, cumulative.slice(0, SLO_BUCKETS.length), cumulative.at(-1)!, k.sum);
  });
}

/**
 * The SLO series, read at scrape time from the ledger's SLO counts (projected in the append transaction):
 * detection and resume latency of every incident a run resumed from, by kind, and the breaches by SLO and bound.
 */
export function registerSloMetrics(scraped: ScrapedMetrics, pool: pg.Pool): void {
  scraped.register({
    name: 'ito_slo_detection_latency_seconds',
    help: 'Detection latency of each incident a run resumed from (detected − last heartbeat or progress), by incident kind; from the ledger.',
    type: 'histogram',
    read: () => latencyHistogram(pool, 'ito_slo_detection_latency_seconds', 'detection'),
  });
  scraped.register({
    name: 'ito_slo_resume_latency_seconds',
    help: 'Resume latency of each incident a run resumed from (RunResumed − detected), by incident kind; from the ledger.',
    type: 'histogram',
    read: () => latencyHistogram(pool, 'ito_slo_resume_latency_seconds', 'resume'),
  });
  scraped.register({
    name: 'ito_slo_breaches_total',
    help: 'SloBreached events recorded, by SLO (detection, resume) and bound (target, seed); from the ledger.',
    type: 'counter',
    read: async () => {
      const { rows } = await pool.query<{ slo: string; bound: string; n: string }>('select slo, bound, sum(count) as n from slo_breach_counts group by slo, bound order by slo, bound');
      return rows.filter((r) => SLOS.has(r.slo) && BOUNDS.has(r.bound)).map((r) => ({ labels: { slo: r.slo, bound: r.bound }, value: Number(r.n) }));
    },
  });
}
