import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BADPUT_CAUSES } from '@ito/telemetry';
import { telemetryProjection } from '../src/projections/telemetry-projection.js';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedKnownTelemetry } from '../../../test/support/telemetry.js';
import { T0, at, nodeMs } from '../../../packages/telemetry/test/support/known-history.js';

let api: Api;
let seed: Awaited<ReturnType<typeof seedKnownTelemetry>>;
const window = `since=${new Date(T0).toISOString()}&until=${new Date(at(2000)).toISOString()}`;

beforeAll(async () => {
  api = await startApi();
  seed = await seedKnownTelemetry(api);
});
afterAll(async () => api.close());

async function telemetry(query: string, key = seed.deskKey) {
  return api.call('GET', `/v1/desk/telemetry?${query}`, { key });
}

async function projectedRows() {
  const q = async (sql: string) => (await api.pool.query(sql)).rows;
  return {
    segments: await q('select run_id, booking_id, start_ms::text, end_ms::text, label from telemetry_segments order by run_id, start_ms'),
    interruptions: await q('select * from telemetry_interruptions order by run_id, at_ms'),
    checkpoints: await q('select * from telemetry_checkpoints order by run_id, at_ms, kind'),
    bookings: await q('select * from telemetry_bookings order by booking_id'),
    runs: await q('select run_id, state from telemetry_runs order by run_id'),
  };
}

describe('GET /v1/desk/telemetry on the known history', () => {
  it('returns per booking exactly the hand-computed figures, the causes summing to the badput', async () => {
    const r = await telemetry(`${window}&group_by=booking`);
    expect(r.status).toBe(200);
    expect(r.body.data.caught_up).toBe(true);
    const busy = r.body.data.groups.find((g: any) => g.group.booking === seed.bookingId);
    expect(busy.booked_node_ms).toBe(nodeMs(2000));
    expect(busy.productive_node_ms).toBe(nodeMs(530));
    expect(busy.badput_by_cause_node_ms).toEqual({
      program_startup: nodeMs(230),
      data_prep: nodeMs(40),
      checkpoint_save_stall: nodeMs(20),
      checkpoint_restore: nodeMs(10),
      wasted_progress: nodeMs(120),
      infrastructure_recovery: nodeMs(150),
      awaiting_operator: nodeMs(200),
      idle: nodeMs(590),
      other: nodeMs(110),
    });
    expect(BADPUT_CAUSES.reduce((n, c) => n + busy.badput_by_cause_node_ms[c], 0)).toBe(busy.badput_node_ms);
    expect(busy.goodput).toBe(0.265);
    expect(busy.interruption_rate_per_1k_node_hours.node_lost).toBe(900);
    expect(busy.checkpoint_save_bandwidth_bytes_per_s).toEqual({ count: 2, p50: 4e8, p95: 8e8 });
    expect(busy.checkpoint_restore_bandwidth_bytes_per_s).toEqual({ count: 1, p50: 8e8, p95: 8e8 });
    expect(busy.detection_latency_ms).toEqual({ count: 1, p50: 30_000, p95: 30_000 });
    expect(busy.resume_latency_ms).toEqual({ count: 1, p50: 120_000, p95: 120_000 });
    expect(busy.effective_usd_per_productive_gpu_hour).toBeCloseTo(2.5 / 0.265, 9);
    const idle = r.body.data.groups.find((g: any) => g.group.booking === seed.idleBookingId);
    expect(idle.goodput).toBe(0);
    // Desk figures only: no tenant, no manifest, no run detail beyond its id.
    const text = JSON.stringify(r.body);
    expect(text).not.toContain(seed.tenant.tenant_id);
    expect(text).not.toContain('loss');
  });

  it('groups by run, by region and fabric, and clips to a window', async () => {
    const byRun = (await telemetry(`${window}&group_by=run`)).body.data.groups;
    expect(byRun).toHaveLength(1);
    expect(byRun[0]).toMatchObject({ group: { run: seed.runId }, booked_node_ms: nodeMs(1410), goodput: 1060 / 2820 });
    const byRegion = (await telemetry(`${window}&group_by=region,fabric`)).body.data.groups;
    expect(byRegion.map((g: any) => [g.group.region, g.group.fabric, g.goodput])).toEqual([
      ['eu-west-1', 'ethernet', 0],
      ['us-east-1', 'infiniband', 0.265],
    ]);
    const clipped = (await telemetry(`since=${new Date(at(300)).toISOString()}&until=${new Date(at(800)).toISOString()}&group_by=booking`)).body.data;
    const busy = clipped.groups.find((g: any) => g.group.booking === seed.bookingId);
    expect(busy.productive_node_ms).toBe(nodeMs(150));
    expect(busy.badput_by_cause_node_ms.infrastructure_recovery).toBe(nodeMs(150));
  });

  it('draws the series: each bucket sums exactly to its booked time', async () => {
    const d = (await telemetry(`${window}&buckets=4`)).body.data;
    expect(d.series.bucket_ms).toBe(500_000);
    expect(d.series.buckets).toHaveLength(4);
    // 0..500 s: reserved at 100; booked 500 s on 2 nodes + 500 s on 1 node.
    const first = d.series.buckets[0];
    expect(first.booked_node_ms).toBe(nodeMs(500) + 500_000);
    expect(first.productive_node_ms).toBe(nodeMs(200));
    for (const b of d.series.buckets) {
      expect(b.productive_node_ms + BADPUT_CAUSES.reduce((n: number, c) => n + b.badput_by_cause_node_ms[c], 0)).toBe(b.booked_node_ms);
    }
    const total = d.series.buckets.reduce((n: number, b: any) => n + b.productive_node_ms, 0);
    expect(total).toBe(nodeMs(530));
    // The idle booking (1 node) is booked 0..1000 s, the busy one (2 nodes) 0..2000 s: each bucket its terms' share.
    expect(d.series.buckets.map((b: any) => b.booked_node_ms)).toEqual([nodeMs(500) + 500_000, nodeMs(500) + 500_000, nodeMs(500), nodeMs(500)]);
    // A window cutting both terms: 250..2250 s in buckets of 500 s, the last past both terms' ends.
    const cut = (await telemetry(`since=${new Date(at(250)).toISOString()}&until=${new Date(at(2250)).toISOString()}&buckets=4`)).body.data;
    expect(cut.series.buckets.map((b: any) => b.booked_node_ms)).toEqual([nodeMs(500) + 500_000, nodeMs(500) + 250_000, nodeMs(500), nodeMs(250)]);
  });

  it('a rebuild from position 0 gives the same rows and the same figures', async () => {
    const before = await projectedRows();
    const figures = (await telemetry(`${window}&group_by=booking`)).body.data.groups;
    expect(before.segments.length).toBeGreaterThan(5);
    await api.ledger.rebuild(telemetryProjection);
    expect(await projectedRows()).toEqual(before);
    expect((await telemetry(`${window}&group_by=booking`)).body.data.groups).toEqual(figures);
    // And from empty tables, folding in small batches, the same again.
    await api.pool.query("delete from projection_checkpoints where name = 'telemetry'");
    await api.pool.query('truncate telemetry_bookings, telemetry_runs, telemetry_segments, telemetry_interruptions, telemetry_checkpoints');
    while ((await api.ledger.runProjection(telemetryProjection, { batchSize: 3 })) > 0);
    expect(await projectedRows()).toEqual(before);
  });
});

describe('who may read it, and what it refuses', () => {
  it('needs the desk scope: no credential, a tenant key and a node-less guess are refused', async () => {
    expect((await api.call('GET', '/v1/desk/telemetry')).body.error.code).toBe('unauthenticated');
    const tenant = await telemetry(window, seed.requesterKey);
    expect(tenant.status).toBe(403);
    expect(tenant.body.error.code).toBe('forbidden');
  });

  it('refuses bad windows and groupings without echoing them', async () => {
    for (const q of ['group_by=tenant', 'group_by=region,region', 'since=yesterday', `since=${new Date(at(10)).toISOString()}&until=${new Date(at(5)).toISOString()}`, 'since=2020-01-01T00:00:00Z&until=2026-01-01T00:00:00Z', 'buckets=0', 'evil=%3Cscript%3E']) {
      const r = await telemetry(q);
      expect(r.status, q).toBe(400);
      expect(r.body.error.code).toBe('validation_failed');
      expect(JSON.stringify(r.body)).not.toContain('<script>');
      expect(JSON.stringify(r.body)).not.toContain('yesterday');
    }
  });
});
