import type { Registry } from 'prom-client';

/** One sample of a metric: its labels and value (`metricName` for a histogram's _bucket, _sum and _count lines). */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/** A read that takes longer than this is abandoned for this scrape: a slow store must not hold /metrics up. */
export const SCRAPE_READ_TIMEOUT_MS = 5_000;

interface MetricDef {
  name: string;
  help: string;
  type: 'gauge' | 'histogram' | 'counter';
  read: () => Promise<Sample[]>;
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** prom-client formats any registered object with a name and an async `get()`; its types name only its own classes. */
function registerObject(registry: Registry, def: Omit<MetricDef, 'read'>, values: () => Promise<Sample[]>): void {
  registry.registerMetric({ ...def, get: async () => ({ ...def, aggregator: 'first', values: await values() }) } as never);
}

/**
 * Metrics whose samples are read from a store at scrape time (the ledger's projections, the queue backend), so
 * every replica answers the same and a restart loses nothing. A read that fails or is slow leaves its metric out
 * of the scrape and is counted in `ito_metrics_read_failures_total{metric}`, so the rest of /metrics is still
 * served when a store is down. Register the metrics, then `registerFailures` last: a scrape starts every metric's
 * read in registration order, so the failure count waits for the reads of the same scrape.
 */
export class ScrapedMetrics {
  private readonly inflight = new Set<Promise<unknown>>();
  private readonly failures = new Map<string, number>();

  constructor(private readonly registry: Registry) {}

  register(def: MetricDef): void {
    registerObject(this.registry, def, async () => {
      const read = withTimeout(def.read(), SCRAPE_READ_TIMEOUT_MS);
      this.inflight.add(read);
      try {
        return await read;
      } catch {
        this.failures.set(def.name, (this.failures.get(def.name) ?? 0) + 1);
        return [];
      } finally {
        this.inflight.delete(read);
      }
    });
  }

  registerFailures(): void {
    registerObject(
      this.registry,
      { name: 'ito_metrics_read_failures_total', help: 'Scrape-time reads of a metric that failed or took over 5 s; that metric was left out of its scrape.', type: 'counter' },
      async () => {
        await Promise.allSettled([...this.inflight]);
        return [...this.failures].map(([metric, value]) => ({ labels: { metric }, value }));
      },
    );
  }
}

/**
 * Histogram samples from cumulative bucket counts: one `_bucket` per bound (le) plus +Inf, `_sum` and `_count`.
 * `counts[i]` is the number of observations ≤ `bounds[i]`.
 */
export function histogramSamples(name: string, labels: Record<string, string>, bounds: readonly number[], counts: readonly number[], count: number, sum: number): Sample[] {
  return [
    ...bounds.map((le, i) => ({ metricName: `${name}_bucket`, labels: { ...labels, le }, value: counts[i] ?? 0 })),
    { metricName: `${name}_bucket`, labels: { ...labels, le: '+Inf' }, value: count },
    { metricName: `${name}_sum`, labels, value: sum },
    { metricName: `${name}_count`, labels, value: count },
  ];
}
