import type { Registry } from 'prom-client';

/** One sample of a metric: its labels and value (`metricName` for a histogram's _bucket, _sum and _count lines). */
export interface Sample {
  labels: Record<string, string | number>;
  value: number;
  metricName?: string;
}

/**
 * A metric whose samples are read from a store at scrape time (the ledger's projections, the queue backend), so
 * every replica answers the same and a restart loses nothing. prom-client formats any registered object that has
 * a name and an async `get()`; this is that object, with no state of its own.
 */
export function registerScrapedMetric(registry: Registry, def: { name: string; help: string; type: 'gauge' | 'histogram' | 'counter'; read: () => Promise<Sample[]> }): void {
  registry.registerMetric({
    name: def.name,
    help: def.help,
    type: def.type,
    get: async () => ({ name: def.name, help: def.help, type: def.type, aggregator: 'first', values: await def.read() }),
  } as never);
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
