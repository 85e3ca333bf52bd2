import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLedger } from '@ito/ledger';
import { clippedMs, DAY_MS, dayOf, runTelemetryOf, splitByDay, type TelemetryEvent } from '@ito/telemetry';
import { loadRunRows } from '../src/projections/telemetry-rows.js';
import { telemetryProjection } from '../src/projections/telemetry-projection.js';
import { startApi, type Api } from '../../../test/support/api.js';
import { seedDemoTelemetry } from '../../../test/support/telemetry.js';
import { RUN_HISTORY, T0 } from '../../../packages/telemetry/test/support/known-history.js';

/**
 * The telemetry projection appends: each batch adds what it changed to the per-day sums the desk reads, so the
 * figures must not depend on how the log was cut into batches, a replay from position 0 must give the rows the
 * incremental folds gave, and a run across midnight must be split into days exactly as its segments say.
 *
 * Two runs on one two-node booking: the known history moved 800 s earlier, so UTC midnight (T0) falls in its
 * pretraining; and a long run whose lost node is detected two hours after its last heartbeat, so the detection
 * gap reaches behind the hour of segments a run's kept state holds (the projection then reads the run's rows).
 */
const SHIFT_MS = -800_000;
const KNOWN_RUN = 'run_0000000000000000000000000000a001';
const LONG_RUN = 'run_0000000000000000000000000000a002';
const MIN = 60_000;

let api: Api;
let deskKey: string;
let demo: Awaited<ReturnType<typeof seedDemoTelemetry>>;
const events: Array<{ runId: string; e: TelemetryEvent }> = [];

function longRunHistory(bookingId: string, start: number): TelemetryEvent[] {
  const r = { run_id: LONG_RUN };
  const out: TelemetryEvent[] = [
    { at: start, type: 'RunReserved', data: { ...r, booking_id: bookingId } },
    { at: start + MIN, type: 'StageStarted', data: { ...r, stage: 'pretrain', attempt: 1 } },
  ];
  for (let k = 1; k <= 18; k++) {
    out.push({ at: start + MIN + k * 10 * MIN, type: 'ProgressRecorded', data: { ...r, stage: 'pretrain', step: k * 10, tokens: k } });
    if (k % 6 === 0) out.push({ at: start + MIN + k * 10 * MIN + 30_000, type: 'CheckpointSaved', data: { ...r, checkpoint_id: `ck${k}`, step: k * 10, uri: `file:///c/${k}`, bytes: 4e9 + k, save_seconds: 30 } });
  }
  const lost = start + MIN + 185 * MIN;
  out.push(
    { at: lost, type: 'NodeLost', data: { ...r, node_id: 'node_9', last_heartbeat_at: new Date(lost - 120 * MIN).toISOString() } },
    { at: lost + 5 * MIN, type: 'RunResumed', data: { ...r, from_checkpoint_id: 'ck18', stage: 'pretrain', attempt: 2, from_step: 180, recompute_steps: 0 } },
    { at: lost + 6 * MIN, type: 'StageStarted', data: { ...r, stage: 'pretrain', attempt: 2 } },
    { at: lost + 7 * MIN, type: 'CheckpointRestored', data: { ...r, checkpoint_id: 'ck18', step: 180, bytes: 4e9, restore_seconds: 20 } },
    { at: lost + 17 * MIN, type: 'ProgressRecorded', data: { ...r, stage: 'pretrain', step: 190, tokens: 19 } },
    { at: lost + 18 * MIN, type: 'RunSucceeded', data: { ...r } },
  );
  return out;
}

beforeAll(async () => {
  api = await startApi();
  const tenant = await api.admin.createTenant({ name: 'sums buyer', requesterPrincipal: 'ml@sums', approverPrincipal: 'finance@sums' });
  deskKey = (await api.admin.createKey({ tenantId: tenant.tenant_id, scopes: ['desk:read'] })).key;
  const booking = await api.admin.createBooking({
    tenant_id: tenant.tenant_id, gpu: 'h100', nodes: 2, gpus_per_node: 8, region: 'us-east-1', fabric: 'infiniband',
    term_start: new Date(T0 - DAY_MS).toISOString(), term_end: new Date(T0 + DAY_MS).toISOString(), rate_usd_per_gpu_hour: 2.5,
  });
  for (const [s, type, data] of RUN_HISTORY) {
    events.push({ runId: KNOWN_RUN, e: { at: T0 + SHIFT_MS + s * 1000, type, data: type === 'RunReserved' ? { ...data, booking_id: booking.booking_id } : data } });
  }
  for (const e of longRunHistory(booking.booking_id, T0 + 2 * 3_600_000)) events.push({ runId: LONG_RUN, e });
  let clock = 0;
  const ledger = createLedger({ pool: api.pool, now: () => new Date(clock) });
  for (const { runId, e } of events) {
    clock = e.at;
    await ledger.append(`run-${runId}`, [{ type: e.type, data: e.data }], { tenantId: tenant.tenant_id, expectedVersion: 'any' });
  }
  // A time-scaled run (the demo's, also across a midnight): it stores segments, then is found time-scaled.
  demo = await seedDemoTelemetry(api);
});
afterAll(async () => api.close());

/** Every row the projection keeps, in a stable order. */
async function projected() {
  const q = async (sql: string) => (await api.pool.query(sql)).rows;
  return {
    sums: await q('select day_ms::text, booking_id, label, ms::text from telemetry_day_sums order by 1, 2, 3'),
    interruptions: await q('select day_ms::text, booking_id, cause, count::text from telemetry_day_interruptions order by 1, 2, 3'),
    values: await q('select day_ms::text, booking_id, metric, bucket, count::text, sum::text from telemetry_day_histograms order by 1, 2, 3, 4'),
    segments: await q('select run_id, start_ms::text, end_ms::text, label from telemetry_segments order by 1, 2'),
    interruption_rows: await q('select run_id, cause, at_ms::text, detection_ms::text, resume_ms::text from telemetry_interruptions order by 1, 3'),
    checkpoints: await q('select run_id, kind, at_ms::text, bytes::text, ms::text, bandwidth_bytes_per_s from telemetry_checkpoints order by 1, 3, 2'),
    runs: await q('select run_id, state from telemetry_runs order by 1'),
  };
}

/** Empties the projection and folds the whole log again in batches of `size` (the desk's catch-up, cut finer). */
async function refold(size: number, how: 'batches' | 'catch-up' = 'batches'): Promise<void> {
  const client = await api.pool.connect();
  try {
    await telemetryProjection.reset(client);
  } finally {
    client.release();
  }
  await api.pool.query("delete from projection_checkpoints where name = 'telemetry'");
  // The catch-up folds each batch while the one before is written, from the kept states that one carried.
  if (how === 'catch-up') expect((await api.ledger.catchUpProjection(telemetryProjection, { batchSize: size })).caughtUp).toBe(true);
  else while ((await api.ledger.runProjection(telemetryProjection, { batchSize: size })) > 0);
}

const days = (since: number, until: number, buckets: number, groupBy = 'region,fabric,gpu') =>
  `since=${new Date(since).toISOString()}&until=${new Date(until).toISOString()}&buckets=${buckets}&group_by=${groupBy}`;
const figures = async (query: string) => {
  const r = await api.call('GET', `/v1/desk/telemetry?${query}`, { key: deskKey });
  expect(r.status).toBe(200);
  return { ...r.body.data, as_of_position: 0 };
};
/** Whole days (sums only), a window cut mid-day (the edges from the rows), and each run on its own. */
const QUERIES = [days(T0 - DAY_MS, T0 + DAY_MS, 2), days(T0 - DAY_MS, T0 + DAY_MS, 48, 'booking'), days(T0 - 700_000, T0 + 9_000_000, 7), days(T0 - DAY_MS, T0 + DAY_MS, 1, 'run')];

describe('the telemetry projection appends per-day sums', () => {
  it("a run's events split over many catch-up batches give the same rows, sums and desk figures as one batch", async () => {
    await refold(1000);
    const oneBatch = await projected();
    const oneBatchFigures = await Promise.all(QUERIES.map(figures));
    expect(oneBatch.sums.length).toBeGreaterThan(5);
    expect(oneBatch.values.some((v) => v.metric === 'resume_ms')).toBe(true);
    // The long run's three saves ((4e9 + 6k) B in 30 s) differ by 0.2 B/s: one histogram bucket keeps all three.
    const saves = [6, 12, 18].map((k) => (4e9 + k) / 30);
    const shared = oneBatch.values.filter((v) => v.metric === 'save_bandwidth' && v.count === '3');
    expect(shared).toHaveLength(1);
    expect(Number(shared[0]!.sum)).toBeCloseTo(saves[0]! + saves[1]! + saves[2]!, 4);
    // Read back as the bucket's mean: the booking's five saves' p50 (the third smallest) is the three's mean, within
    // a bucket's width (0.54 %) of the exact nearest-rank value; the p95 is a value alone in its bucket, exactly.
    expect(oneBatchFigures[0].totals.checkpoint_save_bandwidth_bytes_per_s).toEqual({ count: 5, p50: (4e9 + 12) / 30, p95: 8e8 });
    for (const [size, how] of [[2, 'batches'], [1, 'batches'], [1, 'catch-up'], [3, 'catch-up']] as const) {
      await refold(size, how);
      expect(await projected()).toEqual(oneBatch);
      expect(await Promise.all(QUERIES.map(figures))).toEqual(oneBatchFigures);
    }
  });

  it("splits a run's time across midnight into day buckets exactly as its segments fall", async () => {
    await refold(3);
    const known = runTelemetryOf(KNOWN_RUN, events.filter((x) => x.runId === KNOWN_RUN).map((x) => x.e));
    const byDay = new Map<number, number>();
    for (const [start, end, label] of known.segments) if (label === 'productive') for (const [day, ms] of splitByDay(start, end)) byDay.set(day, (byDay.get(day) ?? 0) + ms * 2);
    expect(byDay.get(T0 - DAY_MS)).toBeGreaterThan(0);
    expect(byDay.get(T0)).toBeGreaterThan(0);
    // The stored sums are the segments cut at midnights as the desk's generate_series used to cut them.
    const cut = await api.pool.query(
      `select g * ${DAY_MS} as day_ms, s.booking_id, s.label, sum(least(s.end_ms, (g + 1) * ${DAY_MS}) - greatest(s.start_ms, g * ${DAY_MS}))::text as ms
       from telemetry_segments s, lateral generate_series(s.start_ms / ${DAY_MS}, (s.end_ms - 1) / ${DAY_MS}) g group by 1, 2, 3 order by 1, 2, 3`,
    );
    expect(cut.rows.map((r) => ({ ...r, day_ms: String(r.day_ms) }))).toEqual((await projected()).sums);
    // Whole-day buckets (the sums alone): each day's productive node-time is the fold's; the edges' reading agrees.
    const d = await figures(days(T0 - DAY_MS, T0 + DAY_MS, 2));
    const longProductive = runTelemetryOf(LONG_RUN, events.filter((x) => x.runId === LONG_RUN).map((x) => x.e)).segments.filter((s) => s[2] === 'productive').reduce((n, s) => n + (s[1] - s[0]) * 2, 0);
    expect(d.series.buckets.map((b: any) => b.productive_node_ms)).toEqual([byDay.get(T0 - DAY_MS), byDay.get(T0)! + longProductive]);
    const edges = await figures(days(T0 - DAY_MS + 1, T0 + DAY_MS - 1, 2));
    expect(edges.series.buckets[0].productive_node_ms).toBe(byDay.get(T0 - DAY_MS));
    expect(edges.series.buckets[1].productive_node_ms).toBe(byDay.get(T0)! + longProductive);
    // The same whole days by booking (its sums read one column a label): each label is the two runs' segments'.
    const byLabel: Record<string, number> = {};
    for (const run of [KNOWN_RUN, LONG_RUN]) {
      for (const [start, end, label] of runTelemetryOf(run, events.filter((x) => x.runId === run).map((x) => x.e)).segments) if (label !== 'idle') byLabel[label] = (byLabel[label] ?? 0) + (end - start) * 2;
    }
    const { groups } = await figures(days(T0 - DAY_MS, T0 + DAY_MS, 2, 'booking'));
    expect(groups).toHaveLength(1);
    const { idle: _idle, ...causes } = groups[0].badput_by_cause_node_ms as Record<string, number>;
    const read = { productive: groups[0].productive_node_ms, ...causes };
    expect(Object.keys(byLabel).length).toBeGreaterThan(3);
    expect(Object.fromEntries(Object.entries(read).filter(([, ms]) => ms !== 0))).toEqual(Object.fromEntries(Object.entries(byLabel).filter(([, ms]) => ms !== 0)));
  });

  it('stores segments cut at UTC midnights, read at an edge inside a segment that crossed midnight', async () => {
    await refold(1000);
    const known = runTelemetryOf(KNOWN_RUN, events.filter((x) => x.runId === KNOWN_RUN).map((x) => x.e)).segments;
    const stored = (await projected()).segments.map((r) => [Number(r.start_ms), Number(r.end_ms)] as const);
    expect(stored.every(([start, end]) => dayOf(start) === dayOf(end - 1))).toBe(true);
    // Read back for a fold that needs the run's rows, the pieces are the fold's segments again.
    expect((await loadRunRows(api.pool, KNOWN_RUN)).segments).toEqual(known);
    // An edge a minute after midnight, inside a productive segment that began before it: a window, and each run.
    const [a, b] = [T0 + 60_000, T0 + 3_600_000];
    const crossing = known.find(([start, end, label]) => label === 'productive' && start < T0 && end > a);
    expect(crossing).toBeDefined();
    const productive = known.filter((s) => s[2] === 'productive').reduce((n, s) => n + clippedMs(s[0], s[1], a, b) * 2, 0);
    expect((await figures(days(a, b, 1))).series.buckets[0].productive_node_ms).toBe(productive);
    const byRun = (await figures(days(a, b, 1, 'run'))).groups.find((g: any) => g.group.run === KNOWN_RUN);
    expect(byRun.productive_node_ms).toBe(productive);
  });

  it('a replay from position 0 gives the rows the incremental folds gave, and a time-scaled run leaves no sums', async () => {
    // Incremental: the log as catch-ups met it, a few events at a time, the desk reading in between.
    await refold(5);
    await figures(QUERIES[0]!);
    const incremental = await projected();
    await api.ledger.rebuild(telemetryProjection);
    expect(await projected()).toEqual(incremental);
    for (const table of ['telemetry_day_sums', 'telemetry_day_interruptions', 'telemetry_day_histograms', 'telemetry_segments']) {
      const { rows } = await api.pool.query(`select count(*)::int as n from ${table} where booking_id = $1`, [demo.bookingId]);
      expect(rows, table).toEqual([{ n: 0 }]);
    }
    expect(incremental.runs.find((r) => r.run_id === demo.runId)!.state.segments.length).toBeGreaterThan(10);
  });
});
