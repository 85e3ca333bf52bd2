import type pg from 'pg';
import { numberArrayLiteral, textArrayLiteral } from './array-literals.js';
import { bandwidthOf, cutAtMidnights, DaySumsDelta, joinAtMidnights, type CheckpointTransfer, type Interruption, type InterruptionCause, type RunBatchChanges, type Segment, type TimeLabel } from '@ito/telemetry';

/**
 * What one batch of the telemetry projection writes, gathered over its runs: the tails of runs' segments it
 * replaces, the rows it adds (segments cut at UTC midnights, packages/telemetry stored-segments.ts), and one delta
 * of the per-day sums. Each table gets one statement per batch.
 */
export class TelemetryWrites {
  readonly sums = new DaySumsDelta();
  private readonly replace = { run: [] as string[], from: [] as number[] };
  private readonly seg = { run: [] as string[], booking: [] as string[], start: [] as number[], end: [] as number[], label: [] as string[] };
  private readonly int = { run: [] as string[], booking: [] as string[], cause: [] as string[], at: [] as number[], detection: [] as (number | null)[], resume: [] as (number | null)[] };
  private readonly resumed = { run: [] as string[], at: [] as number[], resume: [] as number[] };
  private readonly ck = { run: [] as string[], booking: [] as string[], kind: [] as string[], at: [] as number[], bytes: [] as number[], ms: [] as number[], bw: [] as (number | null)[] };
  private readonly forget: string[] = [];

  /** A batch's changes to one run's rows, and to the sums by the same amounts. */
  add(runId: string, booking: string, c: RunBatchChanges): void {
    if (c.replaceSegmentsFrom !== null) {
      this.replace.run.push(runId);
      this.replace.from.push(c.replaceSegmentsFrom);
    }
    for (const s of c.removed) this.sums.addSegment(booking, s, -1);
    for (const s of c.segments) {
      this.sums.addSegment(booking, s, 1);
      for (const [start, end, label] of cutAtMidnights(s)) {
        this.seg.run.push(runId);
        this.seg.booking.push(booking);
        this.seg.start.push(start);
        this.seg.end.push(end);
        this.seg.label.push(label);
      }
    }
    for (const i of c.interruptions) {
      this.sums.addInterruption(booking, i, 1);
      this.int.run.push(runId);
      this.int.booking.push(booking);
      this.int.cause.push(i.cause);
      this.int.at.push(i.at);
      this.int.detection.push(i.detection_ms);
      this.int.resume.push(i.resume_ms);
    }
    for (const i of c.resumed) {
      this.sums.addResume(booking, i, 1);
      this.resumed.run.push(runId);
      this.resumed.at.push(i.at);
      this.resumed.resume.push(i.resume_ms!);
    }
    for (const t of c.checkpoints) {
      this.sums.addCheckpoint(booking, t, 1);
      this.ck.run.push(runId);
      this.ck.booking.push(booking);
      this.ck.kind.push(t.kind);
      this.ck.at.push(t.at);
      this.ck.bytes.push(Math.round(t.bytes));
      this.ck.ms.push(t.ms);
      this.ck.bw.push(bandwidthOf(t));
    }
  }

  /** A run found to be time-scaled: what it had stored is taken back out of the sums and its rows deleted. */
  retract(runId: string, booking: string, history: RunRows): void {
    for (const s of history.segments) this.sums.addSegment(booking, s, -1);
    for (const i of history.interruptions) this.sums.addInterruption(booking, i, -1);
    for (const t of history.checkpoints) this.sums.addCheckpoint(booking, t, -1);
    this.forget.push(runId);
  }

  /**
   * Writes the batch in one statement (data-modifying CTEs, all on the statement's snapshot: the tail deletes see
   * only rows of earlier batches, the resumes only interruptions stored before), plus the deletion of sum rows a
   * negative amount brought to zero when there are any. The round trips, not the rows, were catch-up's cost.
   */
  async write(client: pg.PoolClient, runs: { ids: string[]; bookings: (string | null)[]; states: string[] }): Promise<void> {
    const params: unknown[] = [];
    const $ = arrayParam(params);
    const parts: string[] = [];
    if (runs.ids.length > 0) {
      parts.push(`insert into telemetry_runs (run_id, booking_id, state) select * from unnest(${$(runs.ids, 'text[]')}, ${$(runs.bookings, 'text[]')}, ${$(runs.states, 'jsonb[]')})
        on conflict (run_id) do update set booking_id = excluded.booking_id, state = excluded.state`);
    }
    if (this.forget.length > 0) {
      for (const table of ['telemetry_segments', 'telemetry_interruptions', 'telemetry_checkpoints']) parts.push(`delete from ${table} where run_id = any(${$(this.forget, 'text[]')})`);
    }
    const { replace, seg, int, ck, resumed } = this;
    if (replace.run.length > 0) {
      parts.push(`delete from telemetry_segments s using unnest(${$(replace.run, 'text[]')}, ${$(replace.from, 'bigint[]')}) r(run_id, from_ms) where s.run_id = r.run_id and s.start_ms >= r.from_ms`);
    }
    if (seg.run.length > 0) {
      parts.push(`insert into telemetry_segments (run_id, booking_id, start_ms, end_ms, label)
        select * from unnest(${$(seg.run, 'text[]')}, ${$(seg.booking, 'text[]')}, ${$(seg.start, 'bigint[]')}, ${$(seg.end, 'bigint[]')}, ${$(seg.label, 'text[]')})`);
    }
    if (int.run.length > 0) {
      parts.push(`insert into telemetry_interruptions (run_id, booking_id, cause, at_ms, detection_ms, resume_ms)
        select * from unnest(${$(int.run, 'text[]')}, ${$(int.booking, 'text[]')}, ${$(int.cause, 'text[]')}, ${$(int.at, 'bigint[]')}, ${$(int.detection, 'bigint[]')}, ${$(int.resume, 'bigint[]')})`);
    }
    if (resumed.run.length > 0) {
      parts.push(`update telemetry_interruptions t set resume_ms = r.resume_ms from unnest(${$(resumed.run, 'text[]')}, ${$(resumed.at, 'bigint[]')}, ${$(resumed.resume, 'bigint[]')}) r(run_id, at_ms, resume_ms)
        where t.run_id = r.run_id and t.at_ms = r.at_ms`);
    }
    if (ck.run.length > 0) {
      parts.push(`insert into telemetry_checkpoints (run_id, booking_id, kind, at_ms, bytes, ms, bandwidth_bytes_per_s)
        select * from unnest(${$(ck.run, 'text[]')}, ${$(ck.booking, 'text[]')}, ${$(ck.kind, 'text[]')}, ${$(ck.at, 'bigint[]')}, ${$(ck.bytes, 'bigint[]')}, ${$(ck.ms, 'bigint[]')}, ${$(ck.bw, 'float8[]')})`);
    }
    const time = [...this.sums.time.values()].filter((r) => r.ms !== 0);
    const ints = [...this.sums.interruptions.values()].filter((r) => r.count !== 0);
    const values = [...this.sums.values.values()].filter((r) => r.count !== 0);
    const col = <T>(rows: T[], k: keyof T, type: Parameters<typeof $>[1]) => $(rows.map((r) => r[k]), type);
    if (time.length > 0) {
      parts.push(`insert into telemetry_day_sums as t (day_ms, booking_id, label, ms)
        select * from unnest(${col(time, 'day', 'bigint[]')}, ${col(time, 'booking', 'text[]')}, ${col(time, 'label', 'text[]')}, ${col(time, 'ms', 'bigint[]')})
        on conflict (day_ms, booking_id, label) do update set ms = t.ms + excluded.ms`);
    }
    if (ints.length > 0) {
      parts.push(`insert into telemetry_day_interruptions as t (day_ms, booking_id, cause, count)
        select * from unnest(${col(ints, 'day', 'bigint[]')}, ${col(ints, 'booking', 'text[]')}, ${col(ints, 'cause', 'text[]')}, ${col(ints, 'count', 'bigint[]')})
        on conflict (day_ms, booking_id, cause) do update set count = t.count + excluded.count`);
    }
    if (values.length > 0) {
      // A value's count and its exact amount (the value's shortest decimal, as numeric) go to its bucket's row.
      parts.push(`insert into telemetry_day_histograms as t (day_ms, booking_id, metric, bucket, count, sum)
        select day_ms, booking_id, metric, bucket, sum(count), sum(value * count)
        from unnest(${col(values, 'day', 'bigint[]')}, ${col(values, 'booking', 'text[]')}, ${col(values, 'metric', 'text[]')}, ${col(values, 'bucket', 'int[]')}, ${$(values.map((r) => String(r.value)), 'numeric[]')}, ${col(values, 'count', 'bigint[]')})
          v(day_ms, booking_id, metric, bucket, value, count)
        group by 1, 2, 3, 4
        on conflict (day_ms, booking_id, metric, bucket) do update set count = t.count + excluded.count, sum = t.sum + excluded.sum`);
    }
    // The projection is rebuilt from the log: a batch lost to a crash before its commit reached the disk rolls
    // back with its checkpoint and is folded again, so the batch's commit need not wait for the WAL flush (set
    // for this transaction only, in the statement that writes it: no round trip of its own).
    if (parts.length > 0) await client.query(`with ${parts.map((sql, i) => `w${i} as (${sql})`).join(',\n')} select set_config('synchronous_commit', 'off', true)`, params);
    await this.deleteZeroes(client, time, ints, values);
  }

  /** A sum row a negative amount brought to zero is deleted: a replay from position 0 never made it. */
  private async deleteZeroes(client: pg.PoolClient, time: Array<{ day: number; booking: string; label: string; ms: number }>, ints: Array<{ day: number; booking: string; cause: string; count: number }>, values: Array<{ day: number; booking: string; metric: string; bucket: number; value: number; count: number }>): Promise<void> {
    const params: unknown[] = [];
    const $ = arrayParam(params);
    const parts: string[] = [];
    const lessTime = time.filter((r) => r.ms < 0);
    if (lessTime.length > 0) {
      parts.push(`delete from telemetry_day_sums t using unnest(${$(lessTime.map((r) => r.day), 'bigint[]')}, ${$(lessTime.map((r) => r.booking), 'text[]')}, ${$(lessTime.map((r) => r.label), 'text[]')}) k(day_ms, booking_id, label)
        where (t.day_ms, t.booking_id, t.label) = (k.day_ms, k.booking_id, k.label) and t.ms = 0`);
    }
    const lessInts = ints.filter((r) => r.count < 0);
    if (lessInts.length > 0) {
      parts.push(`delete from telemetry_day_interruptions t using unnest(${$(lessInts.map((r) => r.day), 'bigint[]')}, ${$(lessInts.map((r) => r.booking), 'text[]')}, ${$(lessInts.map((r) => r.cause), 'text[]')}) k(day_ms, booking_id, cause)
        where (t.day_ms, t.booking_id, t.cause) = (k.day_ms, k.booking_id, k.cause) and t.count = 0`);
    }
    const lessValues = values.filter((r) => r.count < 0);
    if (lessValues.length > 0) {
      parts.push(`delete from telemetry_day_histograms t using unnest(${$(lessValues.map((r) => r.day), 'bigint[]')}, ${$(lessValues.map((r) => r.booking), 'text[]')}, ${$(lessValues.map((r) => r.metric), 'text[]')}, ${$(lessValues.map((r) => r.bucket), 'int[]')}) k(day_ms, booking_id, metric, bucket)
        where (t.day_ms, t.booking_id, t.metric, t.bucket) = (k.day_ms, k.booking_id, k.metric, k.bucket) and t.count = 0`);
    }
    if (parts.length > 0) await client.query(`with ${parts.map((sql, i) => `z${i} as (${sql})`).join(',\n')} select 1`, params);
  }
}

/**
 * Adds an array parameter to `params` as its literal (array-literals.ts) and gives the placeholder with its cast:
 * text-like arrays quoted, number arrays not.
 */
function arrayParam(params: unknown[]) {
  return (values: readonly unknown[], type: 'text[]' | 'jsonb[]' | 'numeric[]' | 'bigint[]' | 'int[]' | 'float8[]'): string => {
    const literal = type === 'text[]' || type === 'jsonb[]' || type === 'numeric[]' ? textArrayLiteral(values as (string | null)[]) : numberArrayLiteral(values as (number | null)[]);
    return `$${params.push(literal)}::${type}`;
  };
}

/** Everything the projection stored for one run, in the order the fold made it. */
export interface RunRows {
  segments: Segment[];
  interruptions: Interruption[];
  checkpoints: CheckpointTransfer[];
}

/**
 * A run's stored rows, for the rare batch its kept state cannot fold alone (an overlay reaching behind the kept
 * segments, or the run found to be time-scaled). Bytes are stored rounded, as they always were.
 */
export async function loadRunRows(client: pg.Pool | pg.PoolClient, runId: string): Promise<RunRows> {
  const [segments, interruptions, checkpoints] = [
    await client.query('select start_ms::float8 as s, end_ms::float8 as e, label from telemetry_segments where run_id = $1 order by start_ms', [runId]),
    await client.query('select cause, at_ms::float8 as at, detection_ms::float8 as d, resume_ms::float8 as r from telemetry_interruptions where run_id = $1 order by at_ms', [runId]),
    await client.query("select kind, at_ms::float8 as at, bytes::float8 as bytes, ms::float8 as ms from telemetry_checkpoints where run_id = $1 order by at_ms, kind = 'restore'", [runId]),
  ];
  return {
    segments: joinAtMidnights(segments.rows.map((r) => [r.s, r.e, r.label as TimeLabel])),
    interruptions: interruptions.rows.map((r) => ({ cause: r.cause as InterruptionCause, at: r.at, detection_ms: r.d, resume_ms: r.r })),
    checkpoints: checkpoints.rows.map((r) => ({ kind: r.kind as 'save' | 'restore', at: r.at, bytes: r.bytes, ms: r.ms })),
  };
}
