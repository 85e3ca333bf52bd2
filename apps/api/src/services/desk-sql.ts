import type { TelemetryUnit } from '@ito/telemetry';
import { emptyUnit } from '@ito/telemetry';

/** Numbers come back from bigint sums as text; null and missing are 0. */
export const n = (v: unknown): number => Number(v ?? 0);

/**
 * Bookings that carried a time-scaled run (a simulation): their wall time says nothing of what was modelled, so
 * they are left out of the fleet's figures and prices; their runs are shown apart, on their own clock. Passed to
 * each query as a text[] parameter, found once per request by loadTimeScaledRuns.
 */
export const NOT_SIMULATED = (column: string, param: number) => `not (${column} = any($${param}::text[]))`;

/**
 * Confines a query to one tenant's bookings (a run is its booking's tenant's): `col in (…)` with the tenant as
 * parameter `$index`, appended to the query's own parameters; nothing for the fleet.
 */
export function ownedBy(tenantId: string | null, col: string, params: unknown[]): { sql: string; params: unknown[] } {
  if (tenantId === null) return { sql: '', params };
  return { sql: ` and ${col} in (select booking_id from bookings where tenant_id = $${params.length + 1})`, params: [...params, tenantId] };
}

/** The shared empty unit, from a projection row's booking columns. */
export function emptyUnitOf(row: Record<string, unknown>, runId: string | null, booked: number): TelemetryUnit {
  const booking = { booking_id: String(row.booking_id), region: String(row.region), fabric: String(row.fabric), gpu: String(row.gpu), gpus_per_node: n(row.gpus_per_node), rate_usd_per_gpu_hour: n(row.rate_usd_per_gpu_hour) };
  return emptyUnit(booking, runId, booked);
}

/**
 * Stored segments meeting [a, b) (`a`, `b` SQL bigint expressions; `s` the table's alias with its dot, or ''):
 * they are cut at UTC midnights (packages/telemetry, stored-segments.ts), so each one meeting the range starts at
 * or after a's midnight, and the read is a btree range on their start.
 */
export const storedSegmentsMeeting = (s: string, a: string, b: string) =>
  `${s}start_ms >= ${a} - (${a} % 86400000 + 86400000) % 86400000 and ${s}start_ms < ${b} and ${s}end_ms > ${a}`;
