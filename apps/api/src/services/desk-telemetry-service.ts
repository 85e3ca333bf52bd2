import type pg from 'pg';
import { processSloTargets } from '@ito/runs';
import {
  BADPUT_CAUSES,
  emptyUnit,
  groupFigures,
  timeScaledUnitsOf,
  type BookingFacts,
  type BadputCause,
  type CoveredLabel,
  type GroupFigures,
  type GroupKey,
  type InterruptionCause,
  type RunTelemetry,
  type TelemetryUnit,
} from '@ito/telemetry';
import { telemetryProjection } from '../projections/telemetry-projection.js';
import type { Resources } from '../resources.js';

/**
 * Bookings that carried a time-scaled run (a simulation): their wall time says nothing of what was modelled, so
 * they are left out of the fleet's figures and prices; their runs are shown apart, on their own clock. Passed to
 * each query as a text[] parameter, found once per request by loadTimeScaledRuns.
 */
const NOT_SIMULATED = (column: string, param: number) => `not (${column} = any($${param}::text[]))`;

export interface DeskTelemetryQuery {
  from: number;
  to: number;
  groupBy: GroupKey[];
  buckets: number;
  /** The tenant whose bookings (and their runs) are summed; null for the operator's fleet-wide figures. */
  tenantId: string | null;
}

export interface SeriesBucket {
  start: string;
  booked_node_ms: number;
  productive_node_ms: number;
  badput_by_cause_node_ms: Record<BadputCause, number>;
  goodput: number | null;
}

/** How long a read may spend catching the projection up before it answers with what is there (and says so). */
const CATCH_UP_BUDGET_MS = 2_000;

/**
 * Moves the telemetry projection up to the head of the log, within a budget: the desk reads figures as of the
 * latest event unless a large backlog is still being folded (then `caught_up` is false).
 */
export async function catchUpTelemetry(res: Resources, budgetMs = CATCH_UP_BUDGET_MS): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  for (;;) {
    const applied = await res.ledger.runProjection(telemetryProjection, { batchSize: 1000 });
    if (applied === 0) return true;
    if (Date.now() >= deadline) return false;
  }
}

const n = (v: unknown): number => Number(v ?? 0);

/**
 * Confines a query to one tenant's bookings (a run is its booking's tenant's): `col in (…)` with the tenant as
 * parameter `$index`, appended to the query's own parameters; nothing for the fleet.
 */
function ownedBy(tenantId: string | null, col: string, params: unknown[]): { sql: string; params: unknown[] } {
  if (tenantId === null) return { sql: '', params };
  return { sql: ` and ${col} in (select booking_id from bookings where tenant_id = $${params.length + 1})`, params: [...params, tenantId] };
}

/** The desk's figures over a window, grouped; each unit is one booking (or one run), summed by groupFigures. */
export async function deskTelemetry(res: Resources, q: DeskTelemetryQuery) {
  const caughtUp = await catchUpTelemetry(res);
  const perRun = q.groupBy.includes('run');
  const timeScaled = await loadTimeScaledRuns(res.pool, q.from, q.to, q.tenantId);
  const [units, series, position] = await Promise.all([
    loadUnits(res.pool, q.from, q.to, perRun, q.tenantId, timeScaled.bookings),
    loadSeries(res.pool, q.from, q.to, q.buckets, q.tenantId, timeScaled.bookings),
    res.pool.query<{ position: string }>('select position::text as position from projection_checkpoints where name = $1', [telemetryProjection.name]),
  ]);
  const [totals] = groupFigures(units, []);
  const targets = processSloTargets();
  return {
    window: { since: new Date(q.from).toISOString(), until: new Date(q.to).toISOString() },
    scope: q.tenantId === null ? 'fleet' : 'tenant',
    group_by: q.groupBy,
    as_of_position: n(position.rows[0]?.position),
    caught_up: caughtUp,
    definitions: 'docs/telemetry.md',
    // The monitor's own targets (ITO_SLO_*_TARGET_S), so the page draws the line the breaches are judged on.
    slo_targets_ms: { detection_p95: targets.detection_s * 1000, resume_p95: targets.resume_s * 1000 },
    totals: totals ?? null,
    groups: groupFigures(units, q.groupBy) satisfies GroupFigures[],
    series,
    time_scaled_runs: timeScaled.runs,
  };
}

/** The shared empty unit, from a projection row's booking columns. */
function emptyUnitOf(row: Record<string, unknown>, runId: string | null, booked: number): TelemetryUnit {
  const booking = { booking_id: String(row.booking_id), region: String(row.region), fabric: String(row.fabric), gpu: String(row.gpu), gpus_per_node: n(row.gpus_per_node), rate_usd_per_gpu_hour: n(row.rate_usd_per_gpu_hour) };
  return emptyUnit(booking, runId, booked);
}

/**
 * One unit per booking whose term meets the window (what its runs did not cover is idle), or one per run when
 * grouping by run: a run's segments are contiguous over its span, so its booked time is what they cover (0 here;
 * groupFigures takes the larger of booked and covered).
 */
async function loadUnits(pool: pg.Pool, from: number, to: number, perRun: boolean, tenantId: string | null, simulated: string[]): Promise<TelemetryUnit[]> {
  const key = perRun ? 's.run_id' : 'null::text';
  const mine = (col: string) => ownedBy(tenantId, col, [from, to]);
  const [b, s, i, c] = [mine('booking_id'), mine('s.booking_id'), mine('s.booking_id'), mine('s.booking_id')];
  const [bookings, covered, interruptions, checkpoints] = await Promise.all([
    pool.query(
      `select booking_id, region, fabric, gpu, nodes, gpus_per_node, rate_usd_per_gpu_hour,
         (greatest(0, least(term_end_ms, $2::bigint) - greatest(term_start_ms, $1::bigint)) * nodes)::text as booked_node_ms
       from telemetry_bookings where (term_start_ms < $2 and term_end_ms > $1
          or booking_id in (select booking_id from telemetry_segments where start_ms < $2 and end_ms > $1))${b.sql}
         and ${NOT_SIMULATED('booking_id', b.params.length + 1)}`,
      [...b.params, simulated],
    ),
    pool.query(
      `select s.booking_id, ${key} as run_id, s.label, (sum(least(s.end_ms, $2::bigint) - greatest(s.start_ms, $1::bigint)) * b.nodes)::text as node_ms
       from telemetry_segments s join telemetry_bookings b using (booking_id)
       where s.start_ms < $2 and s.end_ms > $1${s.sql} group by 1, 2, 3, b.nodes`,
      s.params,
    ),
    pool.query(
      `select s.booking_id, ${key} as run_id, s.cause, count(*)::int as count,
         array_remove(array_agg(s.detection_ms), null)::float8[] as detection, array_remove(array_agg(s.resume_ms), null)::float8[] as resume
       from telemetry_interruptions s where s.at_ms >= $1 and s.at_ms < $2${i.sql} group by 1, 2, 3`,
      i.params,
    ),
    pool.query(
      `select s.booking_id, ${key} as run_id, s.kind, array_agg(s.bandwidth_bytes_per_s)::float8[] as bandwidths
       from telemetry_checkpoints s where s.at_ms >= $1 and s.at_ms < $2 and s.bandwidth_bytes_per_s is not null${c.sql} group by 1, 2, 3`,
      c.params,
    ),
  ]);
  const facts = new Map(bookings.rows.map((b) => [String(b.booking_id), b as Record<string, unknown>]));
  const units = new Map<string, TelemetryUnit>();
  if (!perRun) for (const [id, b] of facts) units.set(id, emptyUnitOf(b, null, n(b.booked_node_ms)));
  const unitFor = (bookingId: string, runId: string | null): TelemetryUnit | null => {
    const id = runId ?? bookingId;
    let u = units.get(id);
    const b = facts.get(bookingId);
    if (!u && b) units.set(id, (u = emptyUnitOf(b, runId, 0)));
    return u ?? null;
  };
  for (const r of covered.rows) {
    const u = unitFor(r.booking_id, r.run_id);
    if (u) u.covered_node_ms[r.label as CoveredLabel] += n(r.node_ms);
  }
  for (const r of interruptions.rows) {
    const u = perRun ? units.get(r.run_id) : unitFor(r.booking_id, null);
    if (!u) continue;
    u.interruptions[r.cause as InterruptionCause] += r.count;
    u.detection_ms.push(...(r.detection as number[]));
    u.resume_ms.push(...(r.resume as number[]));
  }
  for (const r of checkpoints.rows) {
    const u = perRun ? units.get(r.run_id) : unitFor(r.booking_id, null);
    if (u) (r.kind === 'save' ? u.save_bandwidths : u.restore_bandwidths).push(...(r.bandwidths as number[]));
  }
  return [...units.values()];
}

/** Goodput over time: the window cut into `buckets` equal parts, each with its booked time and time by label. */
async function loadSeries(pool: pg.Pool, from: number, to: number, buckets: number, tenantId: string | null, simulated: string[]): Promise<{ bucket_ms: number; buckets: SeriesBucket[] }> {
  const width = Math.max(1, Math.ceil((to - from) / buckets));
  const [s, b] = [ownedBy(tenantId, 's.booking_id', [from, to, width, buckets]), ownedBy(tenantId, 'booking_id', [from, to, width, buckets])];
  const [covered, booked] = await Promise.all([
    pool.query(
      `select g as i, s.label, (sum(least(s.end_ms, $1::bigint + (g + 1) * $3::bigint, $2::bigint) - greatest(s.start_ms, $1::bigint + g * $3::bigint)) * b.nodes)::text as node_ms
       from telemetry_segments s join telemetry_bookings b using (booking_id),
         lateral generate_series(greatest(0, (s.start_ms - $1::bigint) / $3::bigint), least($4::bigint - 1, (s.end_ms - 1 - $1::bigint) / $3::bigint)) g
       where s.start_ms < $2 and s.end_ms > $1${s.sql} and ${NOT_SIMULATED('s.booking_id', s.params.length + 1)} group by 1, 2, b.nodes`,
      [...s.params, simulated],
    ),
    pool.query(
      `select g as i, (sum(greatest(0, least(term_end_ms, $1::bigint + (g + 1) * $3::bigint, $2::bigint) - greatest(term_start_ms, $1::bigint + g * $3::bigint)) * nodes))::text as node_ms
       from telemetry_bookings,
         lateral generate_series(greatest(0, (term_start_ms - $1::bigint) / $3::bigint), least($4::bigint - 1, (term_end_ms - 1 - $1::bigint) / $3::bigint)) g
       where term_start_ms < $2 and term_end_ms > $1${b.sql} and ${NOT_SIMULATED('booking_id', b.params.length + 1)} group by 1`,
      [...b.params, simulated],
    ),
  ]);
  const out: SeriesBucket[] = [];
  for (let i = 0; i * width < to - from; i++) {
    out.push({
      start: new Date(from + i * width).toISOString(),
      booked_node_ms: 0,
      productive_node_ms: 0,
      badput_by_cause_node_ms: Object.fromEntries(BADPUT_CAUSES.map((c) => [c, 0])) as Record<BadputCause, number>,
      goodput: null,
    });
  }
  for (const r of booked.rows) {
    const b = out[n(r.i)];
    if (b) b.booked_node_ms += n(r.node_ms);
  }
  for (const r of covered.rows) {
    const b = out[n(r.i)];
    if (!b) continue;
    if (r.label === 'productive') b.productive_node_ms += n(r.node_ms);
    else b.badput_by_cause_node_ms[r.label as BadputCause] += n(r.node_ms);
  }
  for (const b of out) {
    const covered = b.productive_node_ms + BADPUT_CAUSES.reduce((s, c) => s + b.badput_by_cause_node_ms[c], 0);
    b.booked_node_ms = Math.max(b.booked_node_ms, covered);
    b.badput_by_cause_node_ms.idle = b.booked_node_ms - covered;
    b.goodput = b.booked_node_ms > 0 ? b.productive_node_ms / b.booked_node_ms : null;
  }
  return { bucket_ms: width, buckets: out };
}

/**
 * Every time-scaled run's booking (left out of the fleet), and the runs whose wall span meets the window, each
 * whole on its own (modelled) clock with the pace it ran at: what a simulated run would have cost and yielded,
 * apart from the fleet (docs/telemetry.md). One pass over telemetry_runs per request.
 */
async function loadTimeScaledRuns(
  pool: pg.Pool,
  from: number,
  to: number,
  tenantId: string | null,
): Promise<{ bookings: string[]; runs: Array<GroupFigures & { time_scale: number | null; wall_ms: number }> }> {
  // A tenant sees only its own simulations; the bookings left out are then its own too (the rest are out anyway).
  const mine = ownedBy(tenantId, 'b.booking_id', []);
  const { rows } = await pool.query<Record<string, unknown> & { state: RunTelemetry }>(
    `select r.state, b.booking_id, b.region, b.fabric, b.gpu, b.nodes, b.gpus_per_node, b.rate_usd_per_gpu_hour, b.term_start_ms::text, b.term_end_ms::text
     from telemetry_runs r join telemetry_bookings b using (booking_id)
     where (r.state->'clock'->>'time_scaled')::boolean${mine.sql}`,
    mine.params,
  );
  const inWindow = rows.filter(({ state: r }) => r.started_at !== null && r.started_at < to && (r.ended_at ?? r.last_at ?? r.started_at) >= from);
  const bookings: BookingFacts[] = inWindow.map((b) => ({
    booking_id: String(b.booking_id), region: String(b.region), fabric: String(b.fabric), gpu: String(b.gpu), nodes: n(b.nodes),
    gpus_per_node: n(b.gpus_per_node), rate_usd_per_gpu_hour: n(b.rate_usd_per_gpu_hour), term_start: n(b.term_start_ms), term_end: n(b.term_end_ms),
  }));
  const runs = new Map(inWindow.map((r) => [r.state.run_id, r.state]));
  const figures = groupFigures(timeScaledUnitsOf(bookings, [...runs.values()]), ['run']).map((g) => {
    const r = runs.get(g.group.run!)!;
    const wall = (r.ended_at ?? r.last_at ?? 0) - (r.started_at ?? 0);
    const modelled = (r.clock.clock_at ?? 0) - (r.started_at ?? 0);
    // How many modelled seconds each wall second stood for, over the whole run.
    return { ...g, time_scale: wall > 0 ? Math.round(modelled / wall) : null, wall_ms: wall };
  });
  return { bookings: [...new Set(rows.map((r) => String(r.booking_id)))], runs: figures };
}
