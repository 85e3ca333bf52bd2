import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedKnownTelemetry } from '../../../test/support/telemetry.js';
import { T0, at, nodeMs } from '../../../packages/telemetry/test/support/known-history.js';

/**
 * The desk's fleet-wide figures are the operator's: a tenant's desk:read key, and its admin key, sum only that
 * tenant's bookings and runs; an operator credential (made by ito-admin, never by a tenant) sums the fleet.
 */
let api: Api;
let a: Awaited<ReturnType<typeof seedKnownTelemetry>>;
let b: { tenantId: string; bookingId: string; deskKey: string; adminKey: string };
let operatorKey: string;
const window = `since=${new Date(T0).toISOString()}&until=${new Date(at(2000)).toISOString()}`;

beforeAll(async () => {
  api = await startApi();
  a = await seedKnownTelemetry(api);
  const tenant = await api.admin.createTenant({ name: 'other buyer', requesterPrincipal: 'ml@other', approverPrincipal: 'finance@other' });
  const booking = await api.admin.createBooking({
    tenant_id: tenant.tenant_id,
    gpu: 'h200',
    nodes: 1,
    gpus_per_node: 8,
    region: 'ap-south-1',
    fabric: 'infiniband',
    term_start: new Date(at(0)).toISOString(),
    term_end: new Date(at(2000)).toISOString(),
    rate_usd_per_gpu_hour: 3,
  });
  b = {
    tenantId: tenant.tenant_id,
    bookingId: booking.booking_id,
    deskKey: (await api.admin.createKey({ tenantId: tenant.tenant_id, scopes: ['desk:read'] })).key,
    adminKey: (await api.admin.createKey({ tenantId: tenant.tenant_id, scopes: ['admin'], principal: 'owner@other' })).key,
  };
  operatorKey = (await api.admin.createOperatorKey({ principal: 'pricing-desk@ito' })).key;
  // The projection reads only below every open transaction on the server (other test files' included): wait
  // until it has folded the seeded history, so each answer below is about scoping, not about catching up.
  for (let i = 0; i < 100; i++) {
    if ((await telemetry(operatorKey, 'booking')).groups.length === 3) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error('the telemetry projection did not fold the seeded history');
});
afterAll(async () => api.close());

const telemetry = async (key: string, groupBy = 'run,booking') => {
  const r = await api.call('GET', `/v1/desk/telemetry?${window}&group_by=${groupBy}`, { key });
  expect(r.status).toBe(200);
  return r.body.data;
};

describe('desk figures by credential', () => {
  it("a tenant's desk key and its admin key see only that tenant's bookings, never another's run or booking", async () => {
    for (const key of [b.deskKey, b.adminKey]) {
      const byBooking = await telemetry(key, 'booking');
      expect(byBooking.scope).toBe('tenant');
      expect(byBooking.groups.map((g: any) => g.group.booking)).toEqual([b.bookingId]);
      expect(byBooking.totals.booked_node_ms).toBe(nodeMs(2000) / 2);
      expect(byBooking.totals.productive_node_ms).toBe(0);
      expect(byBooking.series.buckets.reduce((n: number, x: any) => n + x.booked_node_ms, 0)).toBe(nodeMs(2000) / 2);
      expect(byBooking.series.buckets.reduce((n: number, x: any) => n + x.productive_node_ms, 0)).toBe(0);
      const byRun = await telemetry(key);
      expect(byRun.groups).toEqual([]);
      const text = JSON.stringify([byBooking, byRun]);
      for (const other of [a.runId, a.bookingId, a.idleBookingId]) expect(text).not.toContain(other);
    }
    const mine = await telemetry(a.deskKey);
    expect(mine.scope).toBe('tenant');
    expect(mine.groups.map((g: any) => g.group.run)).toEqual([a.runId]);
    expect(JSON.stringify([mine, await telemetry(a.deskKey, 'booking')])).not.toContain(b.bookingId);
  });

  it('an operator credential sees every tenant`s runs and bookings', async () => {
    const byRun = await telemetry(operatorKey);
    expect(byRun.scope).toBe('fleet');
    expect(byRun.groups.map((g: any) => g.group.run)).toEqual([a.runId]);
    const byBooking = await telemetry(operatorKey, 'booking');
    expect(byBooking.groups.map((g: any) => g.group.booking).sort()).toEqual([a.bookingId, a.idleBookingId, b.bookingId].sort());
    const [ownA, ownB] = [await telemetry(a.deskKey, 'booking'), await telemetry(b.deskKey, 'booking')];
    expect(byBooking.totals.booked_node_ms).toBe(ownA.totals.booked_node_ms + ownB.totals.booked_node_ms);
    expect(byBooking.totals.productive_node_ms).toBe(ownA.totals.productive_node_ms);
  });

  it('a tenant cannot make an operator credential: the fleet scope is refused on its keys, and no route makes keys', async () => {
    const count = async () => (await api.pool.query<{ keys: number; events: number }>('select (select count(*)::int from api_keys) as keys, (select count(*)::int from events) as events')).rows[0];
    const before = await count();
    for (const scopes of [['desk:fleet'], ['admin', 'desk:fleet']]) {
      await expect(api.admin.createKey({ tenantId: b.tenantId, scopes, principal: 'owner@other' })).rejects.toMatchObject({ code: 'validation_failed' });
    }
    expect(await count()).toEqual(before);
    const viaApi = await api.call('POST', '/v1/keys', { key: b.adminKey, body: { scopes: ['desk:fleet'] } });
    expect(viaApi.body.error.code).toBe('not_found');
    expect(await count()).toEqual(before);
  });
});
