import type { CoveredLabel, InterruptionCause, TelemetryUnit } from '@ito/telemetry';
import { emptyUnitOf, n, NOT_SIMULATED, ownedBy, storedSegmentsMeeting } from './desk-sql.js';
import type { DeskReads } from './desk-snapshot.js';

/** Stored segments meeting the window [$1, $2). */
const MEETS = (t: string) => storedSegmentsMeeting(t, '$1::bigint', '$2::bigint');

/**
 * One unit per run (grouping by run): a run's segments are contiguous over its span, so its booked time is what
 * they cover (0 here; groupFigures takes the larger of booked and covered). Read from the runs' stored rows in
 * the window: a question about each run is answered from each run's rows, not from the per-day sums.
 */
export async function loadRunUnits(pool: DeskReads, from: number, to: number, tenantId: string | null, simulated: string[]): Promise<TelemetryUnit[]> {
  const mine = (col: string) => ownedBy(tenantId, col, [from, to]);
  const [b, s, i, c] = [mine('booking_id'), mine('s.booking_id'), mine('s.booking_id'), mine('s.booking_id')];
  const [bookings, covered, interruptions, checkpoints] = await Promise.all([
    pool.query(
      `select booking_id, region, fabric, gpu, nodes, gpus_per_node, rate_usd_per_gpu_hour from telemetry_bookings
       where booking_id in (select booking_id from telemetry_segments where ${MEETS('')})${b.sql}
         and ${NOT_SIMULATED('booking_id', b.params.length + 1)}`,
      [...b.params, simulated],
    ),
    pool.query(
      `select s.booking_id, s.run_id, s.label, (sum(least(s.end_ms, $2::bigint) - greatest(s.start_ms, $1::bigint)) * b.nodes)::text as node_ms
       from telemetry_segments s join telemetry_bookings b using (booking_id)
       where ${MEETS('s.')}${s.sql} group by 1, 2, 3, b.nodes`,
      s.params,
    ),
    pool.query(
      `select s.run_id, s.cause, count(*)::int as count,
         array_remove(array_agg(s.detection_ms), null)::float8[] as detection, array_remove(array_agg(s.resume_ms), null)::float8[] as resume
       from telemetry_interruptions s where s.at_ms >= $1 and s.at_ms < $2${i.sql} group by 1, 2`,
      i.params,
    ),
    pool.query(
      `select s.run_id, s.kind, array_agg(s.bandwidth_bytes_per_s)::float8[] as bandwidths
       from telemetry_checkpoints s where s.at_ms >= $1 and s.at_ms < $2 and s.bandwidth_bytes_per_s is not null${c.sql} group by 1, 2`,
      c.params,
    ),
  ]);
  const facts = new Map(bookings.rows.map((row) => [String(row.booking_id), row as Record<string, unknown>]));
  const units = new Map<string, TelemetryUnit>();
  for (const r of covered.rows) {
    const booking = facts.get(r.booking_id);
    if (!booking) continue;
    let u = units.get(r.run_id);
    if (!u) units.set(r.run_id, (u = emptyUnitOf(booking, r.run_id, 0)));
    u.covered_node_ms[r.label as CoveredLabel] += n(r.node_ms);
  }
  for (const r of interruptions.rows) {
    const u = units.get(r.run_id);
    if (!u) continue;
    u.interruptions[r.cause as InterruptionCause] += r.count;
    u.detection_ms.push(...(r.detection as number[]));
    u.resume_ms.push(...(r.resume as number[]));
  }
  for (const r of checkpoints.rows) {
    const u = units.get(r.run_id);
    if (u) (r.kind === 'save' ? u.save_bandwidths : u.restore_bandwidths).push(...(r.bandwidths as number[]));
  }
  return [...units.values()];
}
