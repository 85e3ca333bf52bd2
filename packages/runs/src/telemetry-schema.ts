import { sql } from 'drizzle-orm';
import { bigint, doublePrecision, index, integer, jsonb, numeric, pgTable, primaryKey, text } from 'drizzle-orm/pg-core';

/**
 * The telemetry projection (async, behind the log; rebuilt from position 0): the bookings as the desk sold
 * them, each run's fold state, and what the desk query sums — each run's time by label, its interruptions and
 * its checkpoint transfers. Times are epoch milliseconds, so sums stay exact integers.
 */
export const telemetryBookings = pgTable('telemetry_bookings', {
  bookingId: text('booking_id').primaryKey(),
  region: text('region').notNull(),
  fabric: text('fabric').notNull(),
  gpu: text('gpu').notNull(),
  nodes: integer('nodes').notNull(),
  gpusPerNode: integer('gpus_per_node').notNull(),
  rateUsdPerGpuHour: doublePrecision('rate_usd_per_gpu_hour').notNull(),
  termStartMs: bigint('term_start_ms', { mode: 'number' }).notNull(),
  termEndMs: bigint('term_end_ms', { mode: 'number' }).notNull(),
});

/**
 * Each run's kept fold state. The desk asks for the time-scaled runs on every query: a partial index holds only
 * those, so the question reads them, not every run the ledger ever held.
 */
export const telemetryRuns = pgTable(
  'telemetry_runs',
  {
    runId: text('run_id').primaryKey(),
    bookingId: text('booking_id'),
    state: jsonb('state').notNull(),
  },
  (t) => [index('telemetry_runs_time_scaled_idx').on(t.bookingId).where(sql`(state->'clock'->>'time_scaled')::boolean`)],
);

export const telemetrySegments = pgTable(
  'telemetry_segments',
  {
    runId: text('run_id').notNull(),
    bookingId: text('booking_id').notNull(),
    startMs: bigint('start_ms', { mode: 'number' }).notNull(),
    endMs: bigint('end_ms', { mode: 'number' }).notNull(),
    label: text('label').notNull(),
  },
  // A batch replaces a run's tail (by run, start). Segments are stored cut at UTC midnights (packages/telemetry,
  // stored-segments.ts), so what a window cuts of days is a range of starts from its first midnight: a btree,
  // appended near its right edge, where a GiST on the span cost more to insert into the longer a run's history.
  // It holds what the edges read (end, booking, label), so they are read from the index alone.
  (t) => [index('telemetry_segments_run_start_idx').on(t.runId, t.startMs), index('telemetry_segments_start_idx').on(t.startMs, t.endMs, t.bookingId, t.label)],
);

/**
 * What the desk sums, per UTC day, upsert-added by each batch (negative where an overlay relabelled counted time;
 * rows come to zero are deleted): ms by booking and label (× nodes when read), interruptions by booking and cause,
 * exact value → count histograms of bandwidths and latencies. Region, fabric and GPU are the booking's.
 */
export const telemetryDaySums = pgTable(
  'telemetry_day_sums',
  {
    dayMs: bigint('day_ms', { mode: 'number' }).notNull(),
    bookingId: text('booking_id').notNull(),
    label: text('label').notNull(),
    ms: bigint('ms', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.dayMs, t.bookingId, t.label] })],
);

export const telemetryDayInterruptions = pgTable(
  'telemetry_day_interruptions',
  {
    dayMs: bigint('day_ms', { mode: 'number' }).notNull(),
    bookingId: text('booking_id').notNull(),
    cause: text('cause').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
  },
  (t) => [primaryKey({ columns: [t.dayMs, t.bookingId, t.cause] })],
);

/**
 * Histograms of checkpoint bandwidths and detection and resume latencies, per UTC day, booking and metric: fixed
 * buckets of relative width 2^(1/128) (packages/telemetry, histogram.ts), each with its count and the exact sum of
 * its values (numeric, so any order of batches and a retraction give the same row).
 */
export const telemetryDayHistograms = pgTable(
  'telemetry_day_histograms',
  {
    dayMs: bigint('day_ms', { mode: 'number' }).notNull(),
    bookingId: text('booking_id').notNull(),
    metric: text('metric').notNull(),
    bucket: integer('bucket').notNull(),
    count: bigint('count', { mode: 'number' }).notNull(),
    sum: numeric('sum').notNull(),
  },
  (t) => [primaryKey({ columns: [t.dayMs, t.bookingId, t.metric, t.bucket] })],
);

export const telemetryInterruptions = pgTable(
  'telemetry_interruptions',
  {
    runId: text('run_id').notNull(),
    bookingId: text('booking_id').notNull(),
    cause: text('cause').notNull(),
    atMs: bigint('at_ms', { mode: 'number' }).notNull(),
    detectionMs: bigint('detection_ms', { mode: 'number' }),
    resumeMs: bigint('resume_ms', { mode: 'number' }),
  },
  (t) => [index('telemetry_interruptions_run_idx').on(t.runId), index('telemetry_interruptions_at_idx').on(t.atMs)],
);

export const telemetryCheckpoints = pgTable(
  'telemetry_checkpoints',
  {
    runId: text('run_id').notNull(),
    bookingId: text('booking_id').notNull(),
    kind: text('kind').notNull(),
    atMs: bigint('at_ms', { mode: 'number' }).notNull(),
    bytes: bigint('bytes', { mode: 'number' }).notNull(),
    ms: bigint('ms', { mode: 'number' }).notNull(),
    bandwidthBytesPerS: doublePrecision('bandwidth_bytes_per_s'),
  },
  (t) => [index('telemetry_checkpoints_run_idx').on(t.runId), index('telemetry_checkpoints_at_idx').on(t.atMs)],
);
