import {
  BADPUT_CAUSES,
  type BadputCause,
  type CoveredLabel,
  type DistributionMetric,
  type InterruptionCause,
  type TelemetryUnit,
  type WindowPieces,
  TIME_LABELS,
} from '@ito/telemetry';
import { emptyUnitOf, n, NOT_SIMULATED, ownedBy, storedSegmentsMeeting } from './desk-sql.js';
import type { DeskReads } from './desk-snapshot.js';

export interface SeriesBucket {
  start: string;
  booked_node_ms: number;
  productive_node_ms: number;
  badput_by_cause_node_ms: Record<BadputCause, number>;
  goodput: number | null;
}

export interface DeskWindow {
  from: number;
  to: number;
  /** The series' bucket width; `pieces` cut the window into whole days inside one bucket and parts of days. */
  width: number;
  pieces: WindowPieces;
  tenantId: string | null;
  /** Bookings that carried a time-scaled run: left out of the fleet's figures. */
  simulated: string[];
}

/** Time by label, per booking (its units) and per series bucket (× nodes), over the whole window. */
interface Coverage {
  byBooking: Map<string, Map<string, number>>;
  byBucket: Map<number, Map<string, number>>;
}

const addTo = <K>(m: Map<K, Map<string, number>>, k: K, label: string, v: number) => {
  const inner = m.get(k) ?? new Map<string, number>();
  inner.set(label, (inner.get(label) ?? 0) + v);
  m.set(k, inner);
};

/**
 * A booking's sums, one column per label (`sum(ms) filter (where label = '…')`, null where it had no rows):
 * grouping by the booking alone and picking the label per row cost PostgreSQL less than hashing (booking, label)
 * pairs and a json_object_agg of them (≈ 33 ms of CPU against ≈ 52 for the 70,000 day rows of 2,000 bookings
 * over 30 days, measured side by side). The labels are the code's own constants, never input.
 */
const LABEL_SUMS = TIME_LABELS.map((l, i) => `sum(d.ms) filter (where d.label = '${l}')::text as l${i}`).join(', ');

/** Adds a row's per-label columns (LABEL_SUMS) under `key`. */
function addLabelColumns<K>(m: Map<K, Map<string, number>>, key: K, row: Record<string, unknown>): void {
  for (const [i, label] of TIME_LABELS.entries()) {
    const v = row[`l${i}`];
    if (v !== null && v !== undefined) addTo(m, key, label, n(v));
  }
}

/**
 * The window's covered time: whole days from telemetry_day_sums (one row per booking, day and label), summed in
 * SQL by booking and, in a second query beside it on its own connection, by series bucket (× the booking's
 * nodes); the parts of days at the window's and buckets' edges from the runs' segments that overlap them (stored
 * cut at midnights: a range of starts from the edge's midnight; none for a window and buckets of whole UTC days).
 */
async function readCoverage(pool: DeskReads, w: DeskWindow): Promise<Coverage> {
  const days = w.pieces.days.map((d) => d.day);
  const byBooking = ownedBy(w.tenantId, 'd.booking_id', [days, w.simulated]);
  const byBucket = ownedBy(w.tenantId, 'd.booking_id', [days, w.from, w.width, w.simulated]);
  const part = ownedBy(w.tenantId, 's.booking_id', [w.pieces.partial.map((p) => p.from), w.pieces.partial.map((p) => p.to), w.pieces.partial.map((p) => p.bucket), w.simulated]);
  const none = { rows: [] as Array<Record<string, unknown>> };
  const [bookings, buckets, edges] = await Promise.all([
    days.length === 0
      ? none
      : pool.query(
          `select d.booking_id, ${LABEL_SUMS} from telemetry_day_sums d
           where d.day_ms = any($1::bigint[]) and ${NOT_SIMULATED('d.booking_id', 2)}${byBooking.sql} group by d.booking_id`,
          byBooking.params,
        ),
    days.length === 0
      ? none
      : pool.query(
          // By day and label, few groups to hash (a bucket of several days sums its days here, below).
          `select ((d.day_ms - $2::bigint) / $3::bigint)::text as bucket, d.label, sum(d.ms * b.nodes)::text as ms
           from telemetry_day_sums d join telemetry_bookings b using (booking_id)
           where d.day_ms = any($1::bigint[]) and ${NOT_SIMULATED('d.booking_id', 4)}${byBucket.sql} group by d.day_ms, d.label`,
          byBucket.params,
        ),
    w.pieces.partial.length === 0
      ? none
      : pool.query(
          `select p.bucket, s.booking_id, s.label, sum(least(s.end_ms, p.b) - greatest(s.start_ms, p.a))::text as ms, b.nodes
           from unnest($1::bigint[], $2::bigint[], $3::int[]) p(a, b, bucket)
             join telemetry_segments s on ${storedSegmentsMeeting('s.', 'p.a', 'p.b')}
             join telemetry_bookings b on b.booking_id = s.booking_id
           where ${NOT_SIMULATED('s.booking_id', 4)}${part.sql} group by 1, 2, 3, b.nodes`,
          part.params,
        ),
  ]);
  const out: Coverage = { byBooking: new Map(), byBucket: new Map() };
  for (const r of buckets.rows) addTo(out.byBucket, n(r.bucket), String(r.label), n(r.ms));
  for (const r of bookings.rows) addLabelColumns(out.byBooking, String(r.booking_id), r);
  for (const r of edges.rows) {
    addTo(out.byBucket, n(r.bucket), String(r.label), n(r.ms) * n(r.nodes));
    addTo(out.byBooking, String(r.booking_id), String(r.label), n(r.ms));
  }
  return out;
}

/**
 * The units of a window, one per booking whose term meets it or whose runs covered some of it (what they did not
 * cover is idle), and the goodput series, from the per-day sums: the query reads at most bookings × days × labels
 * rows whatever the history's length.
 */
export async function loadBookingUnitsAndSeries(pool: DeskReads, w: DeskWindow, withUnits: boolean): Promise<{ units: TelemetryUnit[]; series: { bucket_ms: number; buckets: SeriesBucket[] } }> {
  // Nothing here waits on another read but the bookings a run covered outside their term (rare): all are sent at
  // once, the heaviest four first (the day sums by booking and by bucket, the histograms' two parts), so each gets
  // a connection of its own (desk-snapshot.ts hands a query to the least busy) and the small ones queue after them.
  const [coverage, points, booked, termBookings] = await Promise.all([
    readCoverage(pool, w),
    withUnits ? loadPoints(pool, w) : null,
    loadBookedSeries(pool, w),
    withUnits ? readBookings(pool, w, []) : null,
  ]);
  const units = withUnits ? await loadBookingUnits(pool, w, coverage, points!, termBookings!) : [];
  return { units, series: seriesOf(w, coverage, booked) };
}

/** The bookings whose term meets the window, and those of `covering` (their runs covered some of it). */
function readBookings(pool: DeskReads, w: DeskWindow, covering: string[]) {
  const b = ownedBy(w.tenantId, 'booking_id', [w.from, w.to, covering, w.simulated]);
  return pool.query(
    `select booking_id, region, fabric, gpu, nodes, gpus_per_node, rate_usd_per_gpu_hour,
       (greatest(0, least(term_end_ms, $2::bigint) - greatest(term_start_ms, $1::bigint)) * nodes)::text as booked_node_ms
     from telemetry_bookings where (term_start_ms < $2 and term_end_ms > $1 or booking_id = any($3::text[]))${b.sql}
       and ${NOT_SIMULATED('booking_id', 4)}`,
    b.params,
  );
}

async function loadBookingUnits(
  pool: DeskReads,
  w: DeskWindow,
  coverage: Coverage,
  points: Awaited<ReturnType<typeof loadPoints>>,
  termBookings: Awaited<ReturnType<typeof readBookings>>,
): Promise<TelemetryUnit[]> {
  const covering = [...coverage.byBooking].filter(([, labels]) => [...labels.values()].some((ms) => ms > 0)).map(([id]) => id);
  const inTerm = new Set(termBookings.rows.map((r) => String(r.booking_id)));
  // Read again with those outside their term, in the one query as before (the same rows in the same order).
  const bookings = covering.every((id) => inTerm.has(id)) ? termBookings : await readBookings(pool, w, covering);
  const units = new Map<string, TelemetryUnit>();
  const nodes = new Map<string, number>();
  for (const row of bookings.rows) {
    units.set(String(row.booking_id), emptyUnitOf(row, null, n(row.booked_node_ms)));
    nodes.set(String(row.booking_id), n(row.nodes));
  }
  for (const [id, labels] of coverage.byBooking) {
    const u = units.get(id);
    if (u) for (const [label, ms] of labels) u.covered_node_ms[label as CoveredLabel] += ms * nodes.get(id)!;
  }
  for (const r of points.interruptions) {
    const u = units.get(r.booking_id);
    if (u) u.interruptions[r.cause as InterruptionCause] += n(r.count);
  }
  for (const r of points.values) {
    const u = units.get(r.booking_id);
    if (!u) continue;
    u.counted ??= {};
    for (const [metric, value, count] of r.values) (u.counted[metric] ??= []).push([value, count]);
  }
  return [...units.values()];
}

/** How many parts the histograms are read in, side by side (loadPoints). */
const HISTOGRAM_READ_PARTS = 2;

/**
 * Interruptions by booking and cause, and the distributions by booking and metric: for whole days, a bucket of
 * the per-day histograms (over the window's days) as its mean value and count, at most bookings × metrics ×
 * buckets in use rows whatever the number of samples; the parts of days at the edges from the stored
 * interruptions and transfers there, each value as itself.
 * Parameters: $1 the whole days, $2/$3 the edges' starts and ends, $4 the tenant (if any).
 */
async function loadPoints(pool: DeskReads, w: DeskWindow) {
  const params: unknown[] = [w.pieces.days.map((d) => d.day), w.pieces.partial.map((p) => p.from), w.pieces.partial.map((p) => p.to)];
  if (w.tenantId !== null) params.push(w.tenantId);
  const mine = (col: string) => (w.tenantId === null ? '' : ` and ${col} in (select booking_id from bookings where tenant_id = $4)`);
  const edge = 'join unnest($2::bigint[], $3::bigint[]) p(a, b) on s.at_ms >= p.a and s.at_ms < p.b';
  // The histograms' aggregation is the heaviest read (≈ 60 ms of PostgreSQL's CPU at 2,000 bookings × 30 days):
  // cut by a hash of the booking into parts that run side by side on the snapshot's connections, each booking's
  // buckets whole in one part, so the answer waits for the slowest half, not the whole.
  const valueParts = Array.from({ length: HISTOGRAM_READ_PARTS }, (_, k) => {
    const part = (col: string) => ` and (hashtext(${col}) & 2147483647) % ${HISTOGRAM_READ_PARTS} = ${k}`;
    // One row per booking, its [metric, value, count] triples as one JSON array (one parse, not a row each).
    return pool.query(
      `select booking_id, json_agg(json_build_array(metric, value, count)) as values from (
           select booking_id, metric, (sum(sum) / sum(count))::float8 as value, sum(count) as count
             from telemetry_day_histograms where day_ms = any($1::bigint[])${mine('booking_id')}${part('booking_id')}
             group by booking_id, metric, bucket having sum(count) > 0
           union all
           select s.booking_id, case s.kind when 'save' then 'save_bandwidth' else 'restore_bandwidth' end, s.bandwidth_bytes_per_s, 1
             from telemetry_checkpoints s ${edge} where s.bandwidth_bytes_per_s is not null${mine('s.booking_id')}${part('s.booking_id')}
           union all
           select s.booking_id, m.metric, m.value, 1 from telemetry_interruptions s ${edge}
             cross join lateral (values ('detection_ms', s.detection_ms::float8), ('resume_ms', s.resume_ms::float8)) m(metric, value)
             where m.value is not null${mine('s.booking_id')}${part('s.booking_id')}
         ) v group by booking_id`,
      params,
    );
  });
  const [interruptions, ...values] = await Promise.all([
    pool.query(
      `select booking_id, cause, sum(count)::text as count from (
         select booking_id, cause, count from telemetry_day_interruptions where day_ms = any($1::bigint[])${mine('booking_id')}
         union all
         select s.booking_id, s.cause, 1 from telemetry_interruptions s ${edge} where true${mine('s.booking_id')}
       ) x group by 1, 2`,
      params,
    ),
    ...valueParts,
  ]);
  return { interruptions: interruptions.rows, values: values.flatMap((v) => v.rows) as Array<{ booking_id: string; values: Array<[DistributionMetric, number, number]> }> };
}

/**
 * Each bucket's booked time: the bookings' terms (a row per booking, not per segment), cut into the buckets here:
 * at most bookings × buckets additions of integers, where SQL's generate_series of the same cost more.
 */
async function loadBookedSeries(pool: DeskReads, w: DeskWindow): Promise<Map<number, number>> {
  const b = ownedBy(w.tenantId, 'booking_id', [w.from, w.to]);
  const { rows } = await pool.query(
    `select term_start_ms::text as a, term_end_ms::text as b, nodes from telemetry_bookings
     where term_start_ms < $2 and term_end_ms > $1${b.sql} and ${NOT_SIMULATED('booking_id', b.params.length + 1)}`,
    [...b.params, w.simulated],
  );
  const buckets = Math.ceil((w.to - w.from) / w.width);
  const out = new Map<number, number>();
  for (const r of rows) {
    const start = Math.max(n(r.a), w.from);
    const end = Math.min(n(r.b), w.to);
    for (let i = Math.max(0, Math.floor((start - w.from) / w.width)); i < buckets && w.from + i * w.width < end; i++) {
      const ms = Math.min(end, w.from + (i + 1) * w.width) - Math.max(start, w.from + i * w.width);
      if (ms > 0) out.set(i, (out.get(i) ?? 0) + ms * n(r.nodes));
    }
  }
  return out;
}

/** Goodput over time: the window cut into equal buckets, each with its booked time and time by label. */
function seriesOf(w: DeskWindow, coverage: Coverage, booked: Map<number, number>): { bucket_ms: number; buckets: SeriesBucket[] } {
  const out: SeriesBucket[] = [];
  for (let i = 0; i * w.width < w.to - w.from; i++) {
    const b: SeriesBucket = {
      start: new Date(w.from + i * w.width).toISOString(),
      booked_node_ms: booked.get(i) ?? 0,
      productive_node_ms: 0,
      badput_by_cause_node_ms: Object.fromEntries(BADPUT_CAUSES.map((c) => [c, 0])) as Record<BadputCause, number>,
      goodput: null,
    };
    for (const [label, ms] of coverage.byBucket.get(i) ?? []) {
      if (label === 'productive') b.productive_node_ms += ms;
      else b.badput_by_cause_node_ms[label as BadputCause] += ms;
    }
    const covered = b.productive_node_ms + BADPUT_CAUSES.reduce((s, c) => s + b.badput_by_cause_node_ms[c], 0);
    b.booked_node_ms = Math.max(b.booked_node_ms, covered);
    b.badput_by_cause_node_ms.idle = b.booked_node_ms - covered;
    b.goodput = b.booked_node_ms > 0 ? b.productive_node_ms / b.booked_node_ms : null;
    out.push(b);
  }
  return { bucket_ms: w.width, buckets: out };
}

