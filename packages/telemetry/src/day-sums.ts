import type { DistributionMetric } from './figures.js';
import type { CheckpointTransfer, Interruption } from './run-fold.js';
import type { Segment } from './segments.js';
import { histogramBucket } from './histogram.js';
import { bandwidthOf } from './units.js';

/** The projection keeps its sums per UTC day: a desk window of whole days reads one row per booking, day and label. */
export const DAY_MS = 86_400_000;

/** The UTC midnight at or before `t`. */
export function dayOf(t: number): number {
  return Math.floor(t / DAY_MS) * DAY_MS;
}

/** [start, end) cut at UTC midnights: each day it touches with the milliseconds it covers that day. */
export function splitByDay(start: number, end: number): Array<[day: number, ms: number]> {
  const out: Array<[number, number]> = [];
  for (let day = dayOf(start); day < end; day += DAY_MS) {
    const ms = Math.min(end, day + DAY_MS) - Math.max(start, day);
    if (ms > 0) out.push([day, ms]);
  }
  return out;
}

/**
 * What a batch adds to (or, for a run found to be time-scaled, takes from) the per-day sums: milliseconds by
 * booking, day and label; interruptions by booking, day and cause; and value counts by booking, day and metric,
 * each with its histogram bucket (histogram.ts; the write sums a bucket's values exactly, as numeric). Keyed by
 * strings so a batch's many runs merge into one row per key; zero entries are dropped when read.
 */
export class DaySumsDelta {
  readonly time = new Map<string, { day: number; booking: string; label: string; ms: number }>();
  readonly interruptions = new Map<string, { day: number; booking: string; cause: string; count: number }>();
  readonly values = new Map<string, { day: number; booking: string; metric: DistributionMetric; bucket: number; value: number; count: number }>();

  addSegment(booking: string, [start, end, label]: Segment, sign: 1 | -1): void {
    for (const [day, ms] of splitByDay(start, end)) {
      const key = `${day}|${booking}|${label}`;
      const row = this.time.get(key) ?? { day, booking, label, ms: 0 };
      row.ms += sign * ms;
      this.time.set(key, row);
    }
  }

  /** An interruption counted at its own day, with its detection latency and, once known, its resume latency. */
  addInterruption(booking: string, i: Interruption, sign: 1 | -1): void {
    const day = dayOf(i.at);
    const key = `${day}|${booking}|${i.cause}`;
    const row = this.interruptions.get(key) ?? { day, booking, cause: i.cause, count: 0 };
    row.count += sign;
    this.interruptions.set(key, row);
    if (i.detection_ms !== null) this.addValue(booking, day, 'detection_ms', i.detection_ms, sign);
    this.addResume(booking, i, sign);
  }

  /** An interruption's resume latency, counted at the interruption's day (the desk's window is on its time). */
  addResume(booking: string, i: Interruption, sign: 1 | -1): void {
    if (i.resume_ms !== null) this.addValue(booking, dayOf(i.at), 'resume_ms', i.resume_ms, sign);
  }

  addCheckpoint(booking: string, t: CheckpointTransfer, sign: 1 | -1): void {
    const bw = bandwidthOf(t);
    if (bw !== null) this.addValue(booking, dayOf(t.at), t.kind === 'save' ? 'save_bandwidth' : 'restore_bandwidth', bw, sign);
  }

  private addValue(booking: string, day: number, metric: DistributionMetric, value: number, sign: 1 | -1): void {
    const key = `${day}|${booking}|${metric}|${value}`;
    const row = this.values.get(key) ?? { day, booking, metric, bucket: histogramBucket(value), value, count: 0 };
    row.count += sign;
    this.values.set(key, row);
  }
}

/** A desk window cut into whole UTC days (read from the sums) and what is left (read from the stored rows). */
export interface WindowPieces {
  days: Array<{ day: number; bucket: number }>;
  partial: Array<{ from: number; to: number; bucket: number }>;
}

/**
 * Cuts [from, to), already cut into series buckets of `width`, into whole UTC days that lie inside one bucket
 * and, per bucket, what is left at its edges (one piece when the bucket holds no whole day). A window of whole days cut into whole-day
 * buckets has no partial piece: the desk then reads only sums.
 */
export function windowPieces(from: number, to: number, width: number): WindowPieces {
  const out: WindowPieces = { days: [], partial: [] };
  for (let bucket = 0; from + bucket * width < to; bucket++) {
    const a = from + bucket * width;
    const b = Math.min(to, a + width);
    const first = Math.ceil(a / DAY_MS) * DAY_MS;
    const last = dayOf(b);
    if (first >= last) {
      out.partial.push({ from: a, to: b, bucket });
      continue;
    }
    if (a < first) out.partial.push({ from: a, to: first, bucket });
    for (let day = first; day < last; day += DAY_MS) out.days.push({ day, bucket });
    if (last < b) out.partial.push({ from: last, to: b, bucket });
  }
  return out;
}
