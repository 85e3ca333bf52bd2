import { createLedger } from '@ito/ledger';
import { BOOKINGS, BOOKING_ID, IDLE_BOOKING_ID, RUN_HISTORY, RUN_ID, at } from '../../packages/telemetry/test/support/known-history.js';
import type { Api } from './api.js';

/**
 * Writes the telemetry package's known history into the API's ledger: its two bookings (through the operator's
 * command, so they are real booking streams) and the run's events, each recorded at its own time by a ledger
 * whose clock the history sets. Returns a desk credential and the ids as the server minted them.
 */
export async function seedKnownTelemetry(api: Api) {
  const tenant = await api.admin.createTenant({ name: 'telemetry buyer', requesterPrincipal: 'ml@buyer', approverPrincipal: 'finance@buyer' });
  const desk = await api.admin.createKey({ tenantId: tenant.tenant_id, scopes: ['desk:read'] });
  const ids = new Map<string, string>();
  for (const b of BOOKINGS) {
    const made = await api.admin.createBooking({
      tenant_id: tenant.tenant_id,
      gpu: b.gpu,
      nodes: b.nodes,
      gpus_per_node: b.gpus_per_node,
      region: b.region,
      fabric: b.fabric,
      term_start: new Date(b.term_start).toISOString(),
      term_end: new Date(b.term_end).toISOString(),
      rate_usd_per_gpu_hour: b.rate_usd_per_gpu_hour,
    });
    ids.set(b.booking_id, made.booking_id);
  }
  let clock = 0;
  const ledger = createLedger({ pool: api.pool, now: () => new Date(clock) });
  const bookingId = ids.get(BOOKING_ID)!;
  for (const [s, type, data] of RUN_HISTORY) {
    clock = at(s);
    const payload = type === 'RunReserved' ? { ...data, booking_id: bookingId } : data;
    await ledger.append(`run-${RUN_ID}`, [{ type, data: payload }], { tenantId: tenant.tenant_id, expectedVersion: 'any' });
  }
  return { tenant, deskKey: desk.key, requesterKey: tenant.requester_key, bookingId, idleBookingId: ids.get(IDLE_BOOKING_ID)!, runId: RUN_ID };
}
