import type pg from 'pg';
import { bandwidthOf, DaySumsDelta, type CheckpointTransfer, type Interruption, type InterruptionCause, type RunBatchChanges, type Segment, type TimeLabel } from '@ito/telemetry';

/**
 * What one batch of the telemetry projection writes, gathered over its runs: the tails of runs' segments it
 * replaces, the rows it adds, and one delta of the per-day sums. Each table gets one statement per batch.
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
      this.seg.run.push(runId);
      this.seg.booking.push(booking);
      this.seg.start.push(s[0]);
      this.seg.end.push(s[1]);
      this.seg.label.push(s[2]);
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

  async write(client: pg.PoolClient): Promise<void> {
    if (this.forget.length > 0) {
      for (const table of ['telemetry_segments', 'telemetry_interruptions', 'telemetry_checkpoints']) await client.query(`delete from ${table} where run_id = any($1)`, [this.forget]);
    }
    if (this.replace.run.length > 0) {
      await client.query('delete from telemetry_segments s using unnest($1::text[], $2::bigint[]) r(run_id, from_ms) where s.run_id = r.run_id and s.start_ms >= r.from_ms', [this.replace.run, this.replace.from]);
    }
    const { seg, int, ck, resumed } = this;
    if (seg.run.length > 0) {
      await client.query('insert into telemetry_segments (run_id, booking_id, start_ms, end_ms, label) select * from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])', [seg.run, seg.booking, seg.start, seg.end, seg.label]);
    }
    if (int.run.length > 0) {
      await client.query(
        `insert into telemetry_interruptions (run_id, booking_id, cause, at_ms, detection_ms, resume_ms)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])`,
        [int.run, int.booking, int.cause, int.at, int.detection, int.resume],
      );
    }
    if (resumed.run.length > 0) {
      await client.query(
        'update telemetry_interruptions t set resume_ms = r.resume_ms from unnest($1::text[], $2::bigint[], $3::bigint[]) r(run_id, at_ms, resume_ms) where t.run_id = r.run_id and t.at_ms = r.at_ms',
        [resumed.run, resumed.at, resumed.resume],
      );
    }
    if (ck.run.length > 0) {
      await client.query(
        `insert into telemetry_checkpoints (run_id, booking_id, kind, at_ms, bytes, ms, bandwidth_bytes_per_s)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::float8[])`,
        [ck.run, ck.booking, ck.kind, ck.at, ck.bytes, ck.ms, ck.bw],
      );
    }
    await this.writeSums(client);
  }

  /** Upsert-adds the batch's delta; a row a negative amount brought to zero is deleted (a replay never made it). */
  private async writeSums(client: pg.PoolClient): Promise<void> {
    const time = [...this.sums.time.values()].filter((r) => r.ms !== 0);
    const ints = [...this.sums.interruptions.values()].filter((r) => r.count !== 0);
    const values = [...this.sums.values.values()].filter((r) => r.count !== 0);
    const cols = <T, K extends keyof T>(rows: T[], ...keys: K[]) => keys.map((k) => rows.map((r) => r[k]));
    if (time.length > 0) {
      await client.query(
        `insert into telemetry_day_sums as t (day_ms, booking_id, label, ms) select * from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])
         on conflict (day_ms, booking_id, label) do update set ms = t.ms + excluded.ms`,
        cols(time, 'day', 'booking', 'label', 'ms'),
      );
      const less = time.filter((r) => r.ms < 0);
      if (less.length > 0) {
        await client.query('delete from telemetry_day_sums t using unnest($1::bigint[], $2::text[], $3::text[]) k(day_ms, booking_id, label) where (t.day_ms, t.booking_id, t.label) = (k.day_ms, k.booking_id, k.label) and t.ms = 0', cols(less, 'day', 'booking', 'label'));
      }
    }
    if (ints.length > 0) {
      await client.query(
        `insert into telemetry_day_interruptions as t (day_ms, booking_id, cause, count) select * from unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[])
         on conflict (day_ms, booking_id, cause) do update set count = t.count + excluded.count`,
        cols(ints, 'day', 'booking', 'cause', 'count'),
      );
      const less = ints.filter((r) => r.count < 0);
      if (less.length > 0) {
        await client.query('delete from telemetry_day_interruptions t using unnest($1::bigint[], $2::text[], $3::text[]) k(day_ms, booking_id, cause) where (t.day_ms, t.booking_id, t.cause) = (k.day_ms, k.booking_id, k.cause) and t.count = 0', cols(less, 'day', 'booking', 'cause'));
      }
    }
    if (values.length > 0) {
      await client.query(
        `insert into telemetry_day_values as t (day_ms, booking_id, metric, value, count) select * from unnest($1::bigint[], $2::text[], $3::text[], $4::float8[], $5::bigint[])
         on conflict (day_ms, booking_id, metric, value) do update set count = t.count + excluded.count`,
        cols(values, 'day', 'booking', 'metric', 'value', 'count'),
      );
      const less = values.filter((r) => r.count < 0);
      if (less.length > 0) {
        await client.query(
          'delete from telemetry_day_values t using unnest($1::bigint[], $2::text[], $3::text[], $4::float8[]) k(day_ms, booking_id, metric, value) where (t.day_ms, t.booking_id, t.metric, t.value) = (k.day_ms, k.booking_id, k.metric, k.value) and t.count = 0',
          cols(less, 'day', 'booking', 'metric', 'value'),
        );
      }
    }
  }
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
export async function loadRunRows(client: pg.PoolClient, runId: string): Promise<RunRows> {
  const [segments, interruptions, checkpoints] = [
    await client.query('select start_ms::float8 as s, end_ms::float8 as e, label from telemetry_segments where run_id = $1 order by start_ms', [runId]),
    await client.query('select cause, at_ms::float8 as at, detection_ms::float8 as d, resume_ms::float8 as r from telemetry_interruptions where run_id = $1 order by at_ms', [runId]),
    await client.query("select kind, at_ms::float8 as at, bytes::float8 as bytes, ms::float8 as ms from telemetry_checkpoints where run_id = $1 order by at_ms, kind = 'restore'", [runId]),
  ];
  return {
    segments: segments.rows.map((r) => [r.s, r.e, r.label as TimeLabel]),
    interruptions: interruptions.rows.map((r) => ({ cause: r.cause as InterruptionCause, at: r.at, detection_ms: r.d, resume_ms: r.r })),
    checkpoints: checkpoints.rows.map((r) => ({ kind: r.kind as 'save' | 'restore', at: r.at, bytes: r.bytes, ms: r.ms })),
  };
}
