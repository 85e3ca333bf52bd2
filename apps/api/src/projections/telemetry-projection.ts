import type pg from 'pg';
import type { RunEventMap } from '@ito/domain';
import type { AsyncProjection, FoldedBatch, StoredEventOf } from '@ito/ledger';
import { emptyRunTelemetry, foldRunBatch, historyOf, TELEMETRY_EVENT_TYPES, type RunTelemetry, type TelemetryEvent } from '@ito/telemetry';
import { loadRunRows, TelemetryWrites, type RunRows } from './telemetry-rows.js';
import type { BookingEventMap } from '@ito/runs';

export const TELEMETRY_PROJECTION = 'telemetry';

/**
 * Events per catch-up batch (one transaction each). Measured on the desk bench's 200k-event ledger: at 1,000 a
 * batch, the batches' fixed costs (the checkpoint's read and compare-and-set, the kept states' read, the commit,
 * one write statement per batch) were a quarter of catch-up's time; at 5,000 they are a twentieth. Once the fold
 * and the write overlapped, 10,000 caught up 1M events 10 % faster again (PostgreSQL 2.95 → 2.65 ms of CPU per
 * 1,000 events: a run's state and a day's sum rows are written once for twice the events); 20,000 added 3 %. A
 * batch holds its events and their runs' kept states (≈ 1 KB a run) in memory, twice with the read-ahead: tens of MB.
 */
export const TELEMETRY_CATCH_UP_BATCH = 10_000;

type BookingRecords = Pick<BookingEventMap, 'BookingRecorded'>;
type RunTelemetryEvents = Pick<RunEventMap, (typeof TELEMETRY_EVENT_TYPES)[number]>;

/**
 * The desk's telemetry, behind the log: each batch folds its run events into the runs' kept fold states
 * (packages/telemetry, run-batch.ts) and appends what they add: the segments that changed (only a run's tail is
 * ever replaced), new interruptions and checkpoint transfers, and the same amounts added to the per-day sums the
 * desk reads (telemetry_day_*). A run's rows are never rewritten whole. Bookings come from their own streams.
 * Rebuilt from position 0 with the ledger's rebuild, which gives the same rows whatever the batches: the fold is
 * pure, sees the same events in the same order, and a kept state depends on the state only.
 */
export const telemetryProjection: AsyncProjection<BookingRecords & RunTelemetryEvents> = {
  name: TELEMETRY_PROJECTION,
  handles: ['BookingRecorded', ...TELEMETRY_EVENT_TYPES],
  // It reads each event's type, data and time: half the columns, and the cheaper half to parse.
  payloadsOnly: true,
  // A batch deletes a run's tail by (run_id, start_ms), resumes by (run_id, at_ms), and adds to sums by their keys.
  keyedWrites: true,
  async apply(client, events) {
    const folded = await foldBatch(client, events, null);
    await folded!.write(client);
  },
  // A catch-up folds the next batch while this one is written: the runs this batch folded are carried to it as
  // the JSON their rows will hold (what reading them back would give), the others read as committed.
  fold: (db, events, carried) => foldBatch(db, events, carried as CarriedStates | null),
  async reset(client) {
    await client.query(
      'truncate telemetry_bookings, telemetry_runs, telemetry_segments, telemetry_interruptions, telemetry_checkpoints, telemetry_day_sums, telemetry_day_interruptions, telemetry_day_histograms',
    );
  },
};

type Db = pg.Pool | pg.PoolClient;

/**
 * How long a fold runs before it lets the event loop in. A catch-up folds batch N+1 while batch N's transaction
 * runs, but each of that transaction's statements is sent when the one before it answers: a fold that held the
 * thread for its whole batch held the write back with it, and the two took turns instead of overlapping.
 */
const FOLD_SLICE_MS = 1;
/** The kept states the previous batch of a catch-up wrote (by run), as the JSON stored. */
type CarriedStates = Map<string, string>;

/**
 * Folds a batch into its writes. Kept states come from `carried` (the previous batch's, maybe not committed yet)
 * or from `db`; null when a run of the previous batch needs its stored rows, which only its commit makes readable.
 */
async function foldBatch(db: Db, events: StoredEventOf<BookingRecords & RunTelemetryEvents>[], carried: CarriedStates | null): Promise<FoldedBatch | null> {
  const bookings: StoredEventOf<BookingRecords>[] = [];
  const runEvents: StoredEventOf<RunTelemetryEvents>[] = [];
  for (const e of events) {
    if (e.type === 'BookingRecorded') bookings.push(e);
    else if (typeof e.data.run_id === 'string') runEvents.push(e);
  }
  const runs = runEvents.length > 0 ? await foldRuns(db, runEvents, carried) : { writes: null, states: [] };
  if (runs === null) return null;
  const states = { ids: runs.states.map((s) => s.run_id), bookings: runs.states.map((s) => s.booking_id), states: runs.states.map((s) => JSON.stringify(s)) };
  return {
    carry: new Map(states.ids.map((id, i) => [id, states.states[i]!])) satisfies CarriedStates,
    async write(client) {
      if (bookings.length > 0) await upsertBookings(client, bookings);
      if (runs.writes) await runs.writes.write(client, states);
    },
  };
}

async function upsertBookings(client: pg.PoolClient, events: StoredEventOf<BookingRecords>[]): Promise<void> {
  const d = events.map((e) => e.data);
  await client.query(
    `insert into telemetry_bookings (booking_id, region, fabric, gpu, nodes, gpus_per_node, rate_usd_per_gpu_hour, term_start_ms, term_end_ms)
     select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::int[], $6::int[], $7::float8[], $8::bigint[], $9::bigint[])
     on conflict (booking_id) do nothing`,
    [d.map((b) => b.booking_id), d.map((b) => b.region), d.map((b) => b.fabric), d.map((b) => b.gpu), d.map((b) => b.nodes), d.map((b) => b.gpus_per_node),
      d.map((b) => b.rate_usd_per_gpu_hour), d.map((b) => Date.parse(b.term_start)), d.map((b) => Date.parse(b.term_end))],
  );
}

async function foldRuns(db: Db, events: StoredEventOf<RunTelemetryEvents>[], carried: CarriedStates | null): Promise<{ writes: TelemetryWrites; states: RunTelemetry[] } | null> {
  const byRun = new Map<string, TelemetryEvent[]>();
  for (const e of events) {
    const list = byRun.get(e.data.run_id) ?? [];
    list.push({ type: e.type, data: e.data, at: e.recordedAt.getTime() });
    byRun.set(e.data.run_id, list);
  }
  const stored = new Map<string, RunTelemetry>();
  const unread: string[] = [];
  for (const id of byRun.keys()) {
    const json = carried?.get(id);
    if (json === undefined) unread.push(id);
    else stored.set(id, JSON.parse(json) as RunTelemetry);
  }
  if (unread.length > 0) {
    const { rows } = await db.query<{ run_id: string; state: RunTelemetry }>('select run_id, state from telemetry_runs where run_id = any($1)', [unread]);
    for (const r of rows) stored.set(r.run_id, r.state);
  }
  const writes = new TelemetryWrites();
  const states: RunTelemetry[] = [];
  let slice = performance.now();
  for (const [id, runEvents] of byRun) {
    if (performance.now() - slice > FOLD_SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      slice = performance.now();
    }
    const before = stored.get(id) ?? emptyRunTelemetry(id);
    let folded = foldRunBatch(before, runEvents);
    let history: RunRows | null = null;
    if (folded.kind === 'needs_history') {
      // Rare: the kept state is not enough. Fold the batch again from the whole state, rows put back: rows the
      // previous batch may still be writing are read once it committed.
      if (carried?.has(id)) return null;
      history = await loadRunRows(db, id);
      folded = foldRunBatch(historyOf(before, history), runEvents);
    }
    if (folded.kind === 'append') writes.add(id, folded.state.booking_id!, folded.changes);
    // A run found to be time-scaled: its segments are on its modelled clock, not the booking's wall timeline, so
    // what it stored is taken back; it stays in telemetry_runs (its whole state) and the desk reads it from there.
    else if (folded.kind === 'whole' && history !== null && before.booking_id !== null) writes.retract(id, before.booking_id, history);
    if (folded.kind !== 'needs_history') states.push(folded.state);
  }
  return { writes, states };
}
