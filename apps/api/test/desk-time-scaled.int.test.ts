import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { telemetryProjection } from '../src/projections/telemetry-projection.js';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedDemoTelemetry } from '../../../test/support/telemetry.js';

/**
 * The desk on the demo's own run: 37 wall seconds of a simulated executor at 10,000× standing for ~95 modelled
 * hours, on a 30-day booking. Set against the booking's wall time it read goodput 0.0 % and $119,911 per
 * productive GPU-hour; accounted on its own clock, apart from the fleet, it reads as the run it models.
 */
let api: Api;
let seed: Awaited<ReturnType<typeof seedDemoTelemetry>>;
let window: string;

beforeAll(async () => {
  api = await startApi();
  seed = await seedDemoTelemetry(api);
  window = `since=${new Date(seed.start - 86_400_000).toISOString()}&until=${new Date(seed.end + 3_600_000).toISOString()}`;
});
afterAll(async () => api.close());

const telemetry = async (query: string) => (await api.call('GET', `/v1/desk/telemetry?${query}`, { key: seed.deskKey })).body.data;

describe("the desk's figures for the demo's run", () => {
  it('shows the time-scaled run apart, on its modelled clock: goodput above 0.9, about $2.5 per productive GPU-hour', async () => {
    const d = await telemetry(`${window}&group_by=booking`);
    expect(d.time_scaled_runs).toHaveLength(1);
    const run = d.time_scaled_runs[0];
    expect(run.group).toEqual({ run: seed.runId });
    expect(run.goodput).toBeGreaterThan(0.9);
    expect(run.goodput).toBeLessThan(1);
    expect(run.effective_usd_per_productive_gpu_hour).toBeGreaterThan(2.5);
    expect(run.effective_usd_per_productive_gpu_hour).toBeLessThan(3);
    expect(run.interruptions.total).toBe(1);
    expect(run.detection_latency_ms.p95).toBe(6212);
    // ~95 modelled hours on 2 nodes, from ~37 wall seconds: about 9,000 modelled seconds per wall second.
    expect(run.booked_node_ms / 2 / 3_600_000).toBeGreaterThan(80);
    expect(run.wall_ms).toBeLessThan(40_000);
    expect(run.time_scale).toBeGreaterThan(5000);
    expect(run.time_scale).toBeLessThan(12_000);
  });

  it("leaves the simulation out of the fleet's figures and prices: no group, no totals, an empty series", async () => {
    const d = await telemetry(`${window}&group_by=booking`);
    expect(d.groups).toEqual([]);
    expect(d.totals).toBeNull();
    expect(d.series.buckets.every((b: any) => b.booked_node_ms === 0)).toBe(true);
    // A window that misses the run's wall time shows nothing of it.
    const before = await telemetry(`since=${new Date(seed.start - 2 * 86_400_000).toISOString()}&until=${new Date(seed.start - 86_400_000).toISOString()}`);
    expect(before.time_scaled_runs).toEqual([]);
  });

  it("shows a simulation to its own tenant and to the operator, never to another tenant's desk key", async () => {
    const other = await api.admin.createTenant({ name: 'other buyer', requesterPrincipal: 'ml@other', approverPrincipal: 'finance@other' });
    const otherKey = (await api.admin.createKey({ tenantId: other.tenant_id, scopes: ['desk:read'] })).key;
    const operatorKey = (await api.admin.createOperatorKey({ principal: 'pricing-desk@ito' })).key;
    const runsSeenBy = async (key: string) =>
      ((await api.call('GET', `/v1/desk/telemetry?${window}&group_by=booking`, { key })).body.data.time_scaled_runs as Array<{ group: { run: string } }>).map((r) => r.group.run);
    expect(await runsSeenBy(otherKey)).toEqual([]);
    expect(await runsSeenBy(operatorKey)).toEqual([seed.runId]);
    expect(await runsSeenBy(seed.deskKey)).toEqual([seed.runId]);
  });

  it("draws the monitor's own SLO targets (ITO_SLO_*_TARGET_S, 10 s and 60 s by default)", async () => {
    expect((await telemetry(window)).slo_targets_ms).toEqual({ detection_p95: 10_000, resume_p95: 60_000 });
  });

  it('a rebuild from position 0 gives the same rows and the same figures, also in small batches', async () => {
    const rows = async () => ({
      runs: (await api.pool.query('select run_id, booking_id, state from telemetry_runs order by run_id')).rows,
      segments: (await api.pool.query('select count(*)::int as n from telemetry_segments')).rows,
    });
    const before = await rows();
    expect(before.segments).toEqual([{ n: 0 }]);
    const figures = await telemetry(`${window}&group_by=run`);
    await api.ledger.rebuild(telemetryProjection);
    expect(await rows()).toEqual(before);
    await api.pool.query("delete from projection_checkpoints where name = 'telemetry'");
    await api.pool.query('truncate telemetry_bookings, telemetry_runs, telemetry_segments, telemetry_interruptions, telemetry_checkpoints');
    while ((await api.ledger.runProjection(telemetryProjection, { batchSize: 3 })) > 0);
    expect(await rows()).toEqual(before);
    const again = await telemetry(`${window}&group_by=run`);
    expect({ ...again, as_of_position: 0 }).toEqual({ ...figures, as_of_position: 0 });
  });
});
