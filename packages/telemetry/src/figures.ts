import { BADPUT_CAUSES, INTERRUPTION_CAUSES, type BadputCause, type InterruptionCause, type TimeLabel } from './causes.js';

export const GROUP_KEYS = ['run', 'booking', 'region', 'fabric', 'gpu'] as const;
export type GroupKey = (typeof GROUP_KEYS)[number];

/** Labels a run's own segments carry; `idle` is the booked time no run covered. */
export type CoveredLabel = Exclude<TimeLabel, 'idle'>;
export const COVERED_LABELS = ['productive', ...BADPUT_CAUSES.filter((c) => c !== 'idle')] as CoveredLabel[];

/** The distributions the desk takes percentiles of, kept by the projection as fixed-bucket histograms (histogram.ts). */
export const DISTRIBUTION_METRICS = ['save_bandwidth', 'restore_bandwidth', 'detection_ms', 'resume_ms'] as const;
export type DistributionMetric = (typeof DISTRIBUTION_METRICS)[number];

/**
 * A multiset of values as [value, how many times] pairs: a unit's own samples one by one, or a kept histogram's
 * buckets, each as the mean of its values and their count.
 */
export type CountedValues = Array<[value: number, count: number]>;

/**
 * The smallest thing figures are summed from: one booking over the window (or one run, when grouping by run).
 * Node-milliseconds are integers, so the causes add up to the badput exactly.
 */
export interface TelemetryUnit {
  run_id: string | null;
  booking_id: string;
  region: string;
  fabric: string;
  gpu: string;
  gpus_per_node: number;
  rate_usd_per_gpu_hour: number;
  /** The booking's term inside the window × its nodes; for a run, the run's span inside the window × nodes. */
  booked_node_ms: number;
  covered_node_ms: Record<CoveredLabel, number>;
  interruptions: Record<InterruptionCause, number>;
  save_bandwidths: number[];
  restore_bandwidths: number[];
  detection_ms: number[];
  resume_ms: number[];
  /** Values counted (a kept histogram's buckets as [mean, count]), beside the plain lists above. */
  counted?: Partial<Record<DistributionMetric, CountedValues>>;
}

export interface Distribution {
  count: number;
  p50: number | null;
  p95: number | null;
}

export interface GroupFigures {
  group: Partial<Record<GroupKey, string>>;
  units: number;
  booked_node_ms: number;
  productive_node_ms: number;
  badput_node_ms: number;
  badput_by_cause_node_ms: Record<BadputCause, number>;
  /** productive ÷ booked; null when nothing was booked in the window. */
  goodput: number | null;
  interruptions: Record<InterruptionCause, number> & { total: number };
  interruption_rate_per_1k_node_hours: (Record<InterruptionCause, number> & { total: number }) | null;
  checkpoint_save_bandwidth_bytes_per_s: Distribution;
  checkpoint_restore_bandwidth_bytes_per_s: Distribution;
  detection_latency_ms: Distribution;
  resume_latency_ms: Distribution;
  booked_usd: number;
  /** What the booked hours cost ÷ the productive GPU-hours they bought (the rate ÷ goodput for one booking). */
  effective_usd_per_productive_gpu_hour: number | null;
}

const MS_PER_HOUR = 3_600_000;

/** Nearest-rank percentile (the ⌈q·n⌉-th smallest), as SQL's percentile_disc computes it. */
export function percentile(sorted: readonly number[], q: number): number | null {
  if (sorted.length === 0) return null;
  const rank = Math.max(1, Math.ceil(q * sorted.length));
  return sorted[rank - 1]!;
}

export function distribution(values: readonly number[]): Distribution {
  const sorted = [...values].sort((a, b) => a - b);
  return { count: sorted.length, p50: percentile(sorted, 0.5), p95: percentile(sorted, 0.95) };
}

/** As distribution, over values given with their counts: the same nearest-rank figures as the expanded list. */
export function countedDistribution(values: CountedValues): Distribution {
  const sorted = values.filter(([, c]) => c > 0).sort((a, b) => a[0] - b[0]);
  const count = sorted.reduce((n, [, c]) => n + c, 0);
  const at = (q: number): number | null => {
    if (count === 0) return null;
    const rank = Math.max(1, Math.ceil(q * count));
    let seen = 0;
    for (const [v, c] of sorted) if ((seen += c) >= rank) return v;
    return null;
  };
  return { count, p50: at(0.5), p95: at(0.95) };
}

function zeroes<K extends string>(keys: readonly K[]): Record<K, number> {
  return Object.fromEntries(keys.map((k) => [k, 0])) as Record<K, number>;
}

function keyOf(u: TelemetryUnit, by: readonly GroupKey[]): Partial<Record<GroupKey, string>> {
  const key: Partial<Record<GroupKey, string>> = {};
  for (const k of by) key[k] = k === 'run' ? (u.run_id ?? '') : k === 'booking' ? u.booking_id : u[k];
  return key;
}

/**
 * Sums units into groups. Within a unit, idle is the booked time its runs did not cover; should runs cover
 * more than was booked (clock skew, a run past its term), the booked time is taken as what they covered, so
 * productive + every cause = booked always holds.
 */
export function groupFigures(units: readonly TelemetryUnit[], by: readonly GroupKey[]): GroupFigures[] {
  const groups = new Map<string, { key: Partial<Record<GroupKey, string>>; members: TelemetryUnit[] }>();
  for (const u of units) {
    const key = keyOf(u, by);
    const id = JSON.stringify(by.map((k) => key[k]));
    const g = groups.get(id) ?? { key, members: [] };
    g.members.push(u);
    groups.set(id, g);
  }
  return [...groups.values()].map(({ key, members }) => figuresOf(key, members)).sort((a, b) => JSON.stringify(a.group).localeCompare(JSON.stringify(b.group)));
}

function figuresOf(group: Partial<Record<GroupKey, string>>, members: readonly TelemetryUnit[]): GroupFigures {
  const badput = zeroes(BADPUT_CAUSES);
  const interruptions = zeroes(INTERRUPTION_CAUSES);
  let booked = 0;
  let productive = 0;
  let bookedUsd = 0;
  let productiveGpuMs = 0;
  const values: Record<DistributionMetric, CountedValues> = { save_bandwidth: [], restore_bandwidth: [], detection_ms: [], resume_ms: [] };
  for (const u of members) {
    let covered = 0;
    for (const label of COVERED_LABELS) covered += u.covered_node_ms[label];
    const unitBooked = Math.max(u.booked_node_ms, covered);
    booked += unitBooked;
    productive += u.covered_node_ms.productive;
    for (const label of COVERED_LABELS) if (label !== 'productive') badput[label] += u.covered_node_ms[label];
    badput.idle += unitBooked - covered;
    for (const c of INTERRUPTION_CAUSES) interruptions[c] += u.interruptions[c];
    bookedUsd += (u.rate_usd_per_gpu_hour * u.gpus_per_node * unitBooked) / MS_PER_HOUR;
    productiveGpuMs += u.covered_node_ms.productive * u.gpus_per_node;
    const plain: Record<DistributionMetric, number[]> = { save_bandwidth: u.save_bandwidths, restore_bandwidth: u.restore_bandwidths, detection_ms: u.detection_ms, resume_ms: u.resume_ms };
    for (const m of DISTRIBUTION_METRICS) {
      for (const v of plain[m]) values[m].push([v, 1]);
      for (const pair of u.counted?.[m] ?? []) values[m].push(pair);
    }
  }
  const total = INTERRUPTION_CAUSES.reduce((n, c) => n + interruptions[c], 0);
  const per1k = (n: number) => (n * 1000 * MS_PER_HOUR) / booked;
  return {
    group,
    units: members.length,
    booked_node_ms: booked,
    productive_node_ms: productive,
    badput_node_ms: booked - productive,
    badput_by_cause_node_ms: badput,
    goodput: booked > 0 ? productive / booked : null,
    interruptions: { ...interruptions, total },
    interruption_rate_per_1k_node_hours:
      booked > 0 ? { ...(Object.fromEntries(INTERRUPTION_CAUSES.map((c) => [c, per1k(interruptions[c])])) as Record<InterruptionCause, number>), total: per1k(total) } : null,
    checkpoint_save_bandwidth_bytes_per_s: countedDistribution(values.save_bandwidth),
    checkpoint_restore_bandwidth_bytes_per_s: countedDistribution(values.restore_bandwidth),
    detection_latency_ms: countedDistribution(values.detection_ms),
    resume_latency_ms: countedDistribution(values.resume_ms),
    booked_usd: bookedUsd,
    effective_usd_per_productive_gpu_hour: productiveGpuMs > 0 ? bookedUsd / (productiveGpuMs / MS_PER_HOUR) : null,
  };
}
