import type pg from 'pg';
import type { RunEventMap } from '@ito/domain';
import type { AsyncProjection, StoredEventOf } from '@ito/ledger';
import { applyRunEvent, bandwidthOf, emptyRunTelemetry, TELEMETRY_EVENT_TYPES, type RunTelemetry } from '@ito/telemetry';
import type { BookingEventMap } from '@ito/runs';

export const TELEMETRY_PROJECTION = 'telemetry';

type BookingRecords = Pick<BookingEventMap, 'BookingRecorded'>;
type RunTelemetryEvents = Pick<RunEventMap, (typeof TELEMETRY_EVENT_TYPES)[number]>;

/**
 * The desk's telemetry, behind the log: each batch folds its run events into the runs' stored fold states
 * (packages/telemetry) and rewrites those runs' segments, interruptions and checkpoint transfers, so the desk
 * query is a sum over rows. Bookings come from their own streams. Rebuilt from position 0 with the ledger's
 * rebuild, which gives the same rows: the fold is pure and sees the same events in the same order.
 */
export const telemetryProjection: AsyncProjection<BookingRecords & RunTelemetryEvents> = {
  name: TELEMETRY_PROJECTION,
  handles: ['BookingRecorded', ...TELEMETRY_EVENT_TYPES],
  async apply(client, events) {
    const bookings: StoredEventOf<BookingRecords>[] = [];
    const runEvents: StoredEventOf<RunTelemetryEvents>[] = [];
    for (const e of events) {
      if (e.type === 'BookingRecorded') bookings.push(e);
      else if (typeof e.data.run_id === 'string') runEvents.push(e);
    }
    if (bookings.length > 0) await upsertBookings(client, bookings);
    if (runEvents.length > 0) await foldRuns(client, runEvents);
  },
  async reset(client) {
    await client.query('truncate telemetry_bookings, telemetry_runs, telemetry_segments, telemetry_interruptions, telemetry_checkpoints');
  },
};

async function upsertBookings(client: pg.PoolClient, events: StoredEventOf<BookingRecords>[]): Promise<void> {
  for (const e of events) {
    const d = e.data;
    await client.query(
      `insert into telemetry_bookings (booking_id, region, fabric, gpu, nodes, gpus_per_node, rate_usd_per_gpu_hour, term_start_ms, term_end_ms)
       values ($1,$2,$3,$4,$5,$6,$7,$8,$9) on conflict (booking_id) do nothing`,
      [d.booking_id, d.region, d.fabric, d.gpu, d.nodes, d.gpus_per_node, d.rate_usd_per_gpu_hour, Date.parse(d.term_start), Date.parse(d.term_end)],
    );
  }
}

async function foldRuns(client: pg.PoolClient, events: StoredEventOf<RunTelemetryEvents>[]): Promise<void> {
  const ids = [...new Set(events.map((e) => e.data.run_id))];
  const { rows } = await client.query<{ run_id: string; state: RunTelemetry }>('select run_id, state from telemetry_runs where run_id = any($1)', [ids]);
  const states = new Map(rows.map((r) => [r.run_id, r.state]));
  for (const e of events) {
    const id = e.data.run_id;
    const s = states.get(id) ?? emptyRunTelemetry(id);
    applyRunEvent(s, { type: e.type, data: e.data, at: e.recordedAt.getTime() });
    states.set(id, s);
  }
  const touched = [...states.values()];
  await client.query(
    `insert into telemetry_runs (run_id, booking_id, state) select * from unnest($1::text[], $2::text[], $3::jsonb[])
     on conflict (run_id) do update set booking_id = excluded.booking_id, state = excluded.state`,
    [touched.map((s) => s.run_id), touched.map((s) => s.booking_id), touched.map((s) => JSON.stringify(s))],
  );
  for (const table of ['telemetry_segments', 'telemetry_interruptions', 'telemetry_checkpoints']) {
    await client.query(`delete from ${table} where run_id = any($1)`, [ids]);
  }
  // A time-scaled run's segments are on its modelled clock, not the booking's wall timeline: it stays in
  // telemetry_runs (its state), and the desk reads it from there, apart from the fleet.
  await writeRows(client, touched.filter((s) => s.booking_id !== null && s.clock?.time_scaled !== true));
}

async function writeRows(client: pg.PoolClient, runs: RunTelemetry[]): Promise<void> {
  const seg = { run: [] as string[], booking: [] as string[], start: [] as number[], end: [] as number[], label: [] as string[] };
  const int = { run: [] as string[], booking: [] as string[], cause: [] as string[], at: [] as number[], detection: [] as (number | null)[], resume: [] as (number | null)[] };
  const ck = { run: [] as string[], booking: [] as string[], kind: [] as string[], at: [] as number[], bytes: [] as number[], ms: [] as number[], bw: [] as (number | null)[] };
  for (const r of runs) {
    const booking = r.booking_id!;
    for (const [start, end, label] of r.segments) {
      seg.run.push(r.run_id);
      seg.booking.push(booking);
      seg.start.push(start);
      seg.end.push(end);
      seg.label.push(label);
    }
    for (const i of r.interruptions) {
      int.run.push(r.run_id);
      int.booking.push(booking);
      int.cause.push(i.cause);
      int.at.push(i.at);
      int.detection.push(i.detection_ms);
      int.resume.push(i.resume_ms);
    }
    for (const t of r.checkpoints) {
      ck.run.push(r.run_id);
      ck.booking.push(booking);
      ck.kind.push(t.kind);
      ck.at.push(t.at);
      ck.bytes.push(Math.round(t.bytes));
      ck.ms.push(t.ms);
      ck.bw.push(bandwidthOf(t));
    }
  }
  if (seg.run.length > 0) {
    await client.query(
      'insert into telemetry_segments (run_id, booking_id, start_ms, end_ms, label) select * from unnest($1::text[], $2::text[], $3::bigint[], $4::bigint[], $5::text[])',
      [seg.run, seg.booking, seg.start, seg.end, seg.label],
    );
  }
  if (int.run.length > 0) {
    await client.query(
      `insert into telemetry_interruptions (run_id, booking_id, cause, at_ms, detection_ms, resume_ms)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[])`,
      [int.run, int.booking, int.cause, int.at, int.detection, int.resume],
    );
  }
  if (ck.run.length > 0) {
    await client.query(
      `insert into telemetry_checkpoints (run_id, booking_id, kind, at_ms, bytes, ms, bandwidth_bytes_per_s)
       select * from unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::float8[])`,
      [ck.run, ck.booking, ck.kind, ck.at, ck.bytes, ck.ms, ck.bw],
    );
  }
}
