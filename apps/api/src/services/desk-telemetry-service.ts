import { processSloTargets } from '@ito/runs';
import { groupFigures, timeScaledUnitsOf, windowPieces, type BookingFacts, type GroupFigures, type GroupKey, type RunTelemetry } from '@ito/telemetry';
import { TELEMETRY_CATCH_UP_BATCH, telemetryProjection } from '../projections/telemetry-projection.js';
import type { Resources } from '../resources.js';
import { loadRunUnits } from './desk-run-units.js';
import { n, ownedBy } from './desk-sql.js';
import { withSnapshotReads, type DeskReads } from './desk-snapshot.js';
import { loadBookingUnitsAndSeries } from './desk-sums-read.js';

export type { SeriesBucket } from './desk-sums-read.js';

export interface DeskTelemetryQuery {
  from: number;
  to: number;
  groupBy: GroupKey[];
  buckets: number;
  /** The tenant whose bookings (and their runs) are summed; null for the operator's fleet-wide figures. */
  tenantId: string | null;
}

/**
 * Connections one desk query reads its snapshot on: its four heavy reads (the day sums by booking and by day, the
 * histograms' two parts, desk-sums-read.ts) each get one and the small ones queue behind them. Two queries at
 * once (desk-admission.ts) hold eight of the pool's thirty.
 */
const DESK_READ_CONNECTIONS = 4;

/** How long a read may spend catching the projection up before it answers with what is there (and says so). */
const CATCH_UP_BUDGET_MS = 2_000;

/**
 * Moves the telemetry projection up to the head of the log, within a budget: the desk reads figures as of the
 * latest event unless a large backlog is still being folded (then `caught_up` is false).
 */
export async function catchUpTelemetry(res: Resources, budgetMs = CATCH_UP_BUDGET_MS): Promise<boolean> {
  const deadline = Date.now() + budgetMs;
  const { caughtUp } = await res.ledger.catchUpProjection(telemetryProjection, { batchSize: TELEMETRY_CATCH_UP_BATCH, stop: () => Date.now() >= deadline });
  return caughtUp;
}

/**
 * The desk's figures over a window, grouped; each unit is one booking (or one run), summed by groupFigures. The
 * booking units and the series come from the projection's per-day sums; the runs' units, when grouping by run,
 * from each run's rows in the window.
 */
export async function deskTelemetry(res: Resources, q: DeskTelemetryQuery) {
  const caughtUp = await catchUpTelemetry(res);
  const perRun = q.groupBy.includes('run');
  // Every read below sees one snapshot, the checkpoint's position too: the answer is the projection as of it.
  const { timeScaled, fromSums, runUnits, position } = await withSnapshotReads(res.pool, DESK_READ_CONNECTIONS, async (db) => {
    const timeScaled = await loadTimeScaledRuns(db, q.from, q.to, q.tenantId);
    const width = Math.max(1, Math.ceil((q.to - q.from) / q.buckets));
    const w = { from: q.from, to: q.to, width, pieces: windowPieces(q.from, q.to, width), tenantId: q.tenantId, simulated: timeScaled.bookings };
    const [fromSums, runUnits, position] = await Promise.all([
      loadBookingUnitsAndSeries(db, w, !perRun),
      perRun ? loadRunUnits(db, q.from, q.to, q.tenantId, timeScaled.bookings) : null,
      db.query<{ position: string }>('select position::text as position from projection_checkpoints where name = $1', [telemetryProjection.name]),
    ]);
    return { timeScaled, fromSums, runUnits, position };
  });
  const units = runUnits ?? fromSums.units;
  const series = fromSums.series;
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

/**
 * Every time-scaled run's booking (left out of the fleet), and the runs whose wall span meets the window, each
 * whole on its own (modelled) clock with the pace it ran at: what a simulated run would have cost and yielded,
 * apart from the fleet (docs/telemetry.md). One pass over telemetry_runs per request.
 */
async function loadTimeScaledRuns(
  pool: DeskReads,
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
