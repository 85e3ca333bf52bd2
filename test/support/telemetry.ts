import { createLedger } from '@ito/ledger';
import { BOOKINGS, BOOKING_ID, IDLE_BOOKING_ID, RUN_HISTORY, RUN_ID, at } from '../../packages/telemetry/test/support/known-history.js';
import { DEMO_RUN_EVENTS, DEMO_RUN_ID } from '../../packages/telemetry/test/support/demo-history.js';
import type { Api } from './api.js';
import { telemetryProjection } from '../../apps/api/src/projections/telemetry-projection.js';

/**
 * Folds the telemetry projection up to the last event written. The ledger reads below the cluster's oldest
 * running transaction, so on a shared PostgreSQL another database's long transaction can hold the projection
 * back for seconds (longer than the desk's 2 s catch-up budget): the tests wait for it here, not in the desk.
 */
async function settleTelemetry(api: Api): Promise<void> {
  const { rows } = await api.pool.query<{ last: string }>('select max(position)::text as last from events');
  const deadline = Date.now() + 60_000;
  for (;;) {
    await api.ledger.runProjection(telemetryProjection, { batchSize: 1000 });
    const at = await api.pool.query<{ position: string }>("select position::text as position from projection_checkpoints where name = 'telemetry'");
    if (Number(at.rows[0]?.position ?? 0) >= Number(rows[0]?.last ?? 0)) return;
    if (Date.now() > deadline) throw new Error('the telemetry projection did not catch up within 60 s');
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
  await settleTelemetry(api);
  return { tenant, deskKey: desk.key, requesterKey: tenant.requester_key, bookingId, idleBookingId: ids.get(IDLE_BOOKING_ID)!, runId: RUN_ID };
}

/**
 * Writes the demo's own run (packages/telemetry/test/support/demo-history.ts: the simulated executor at
 * ITO_TIME_SCALE 10000, one node pulled) into the API's ledger, on a booking like the demo's: 2 × 8 H200 at
 * $2.5 per GPU-hour, from an hour before the run to 30 days after. Each event is recorded at its own time.
 */
export async function seedDemoTelemetry(api: Api) {
  const tenant = await api.admin.createTenant({ name: 'demo telemetry', requesterPrincipal: 'ml@demo', approverPrincipal: 'finance@demo' });
  const desk = await api.admin.createKey({ tenantId: tenant.tenant_id, scopes: ['desk:read'] });
  const start = DEMO_RUN_EVENTS[0]!.at;
  const booking = await api.admin.createBooking({
    tenant_id: tenant.tenant_id,
    gpu: 'h200',
    nodes: 2,
    gpus_per_node: 8,
    region: 'us-east-1',
    fabric: 'infiniband',
    term_start: new Date(start - 3_600_000).toISOString(),
    term_end: new Date(start + 30 * 86_400_000).toISOString(),
    rate_usd_per_gpu_hour: 2.5,
  });
  let clock = 0;
  const ledger = createLedger({ pool: api.pool, now: () => new Date(clock) });
  for (const e of DEMO_RUN_EVENTS) {
    clock = e.at;
    const payload = e.type === 'RunReserved' ? { ...e.data, booking_id: booking.booking_id } : e.data;
    await ledger.append(`run-${DEMO_RUN_ID}`, [{ type: e.type, data: payload }], { tenantId: tenant.tenant_id, expectedVersion: 'any' });
  }
  await settleTelemetry(api);
  return { tenant, deskKey: desk.key, bookingId: booking.booking_id, runId: DEMO_RUN_ID, start, end: DEMO_RUN_EVENTS.at(-1)!.at };
}
