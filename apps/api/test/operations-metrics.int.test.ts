import { formatBytes } from '@ito/contracts';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SimulatedExecutor, parseSimFaults } from '@ito/agent';
import { buildApp } from '@ito/api';
import { createLogger } from '@ito/config';
import { runTelemetryOf } from '@ito/telemetry';
import { pipelineJobs } from '@ito/worker';
import { redisForTests } from '../../../test/support/db.js';
import { smallManifest } from '../../../test/support/manifests.js';
import { runEvents, seedTenant, startPipeline, submitRun, waitForState, type BackendKind, type Pipeline } from '../../../test/support/pipeline.js';

// Every resume breaches a 1 ms target, so the one incident of the run below is a known breach. Read once by the
// writers of this process (appendRunEvents), so it is set before anything is appended.
process.env.ITO_SLO_RESUME_TARGET_S = '0.001';

/** The Prometheus text as `name{labels}` → value. */
function parse(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (!line || line.startsWith('#')) continue;
    const at = line.lastIndexOf(' ');
    out.set(line.slice(0, at), Number(line.slice(at + 1)));
  }
  return out;
}

const redis = redisForTests();
const BACKENDS: Array<{ kind: BackendKind; skip: boolean }> = [
  { kind: 'postgres', skip: false },
  { kind: 'redis', skip: !redis.url },
];

for (const backend of BACKENDS) {
  describe.skipIf(backend.skip)(`operations metrics on /metrics, from a real run with a crash (${backend.kind} queue backend)`, () => {
    let p: Pipeline;
    beforeAll(async () => {
      p = await startPipeline(backend.kind);
    });
    afterAll(async () => {
      await p?.close();
    });

    it('runs by state, SLO latencies and breaches, queue depths, job durations, appends and heartbeats', async () => {
      const seed = await seedTenant(p.api);
      await p.startNodes(seed, () => new SimulatedExecutor({ timeScale: 20_000, progressIntervalMs: 20, faults: parseSimFaults('crash@step=300,stage=pretrain,attempt=1') }));
      const runId = await submitRun(p.api, seed, smallManifest());
      await waitForState(p.api, seed, runId, ['succeeded', 'failed', 'gate_failed']);
      const events = await runEvents(p.api, seed, runId);
      const resumed = events.find((e) => e.type === 'RunResumed')!.data;
      expect(resumed.incident).toMatchObject({ kind: 'crash' });
      // The breach is appended in the RunResumed's transaction, right after it, once.
      const breaches = events.filter((e) => e.type === 'SloBreached');
      expect(breaches.map((e) => e.data)).toEqual([
        { run_id: runId, incident_kind: 'crash', node_id: resumed.incident.node_id, detected_at: resumed.incident.detected_at, slo: 'resume', measured_s: resumed.resume_latency_s, target_s: 0.001, bound: 'target' },
      ]);
      const resumedAt = events.findIndex((e) => e.type === 'RunResumed');
      expect(events.slice(resumedAt, resumedAt + 3).map((e) => e.type)).toEqual(['RunResumed', 'StageStarted', 'SloBreached']);
      const tx = await p.api.pool.query<{ type: string; transaction_id: string }>(
        "select type, transaction_id::text from events where stream_id = $1 and type in ('RunResumed', 'SloBreached')",
        [`run-${runId}`],
      );
      expect(tx.rows.map((r) => r.type).sort()).toEqual(['RunResumed', 'SloBreached']);
      expect(tx.rows[0]!.transaction_id).toBe(tx.rows[1]!.transaction_id);

      // The resumed attempt's rank 0 restored the checkpoint it resumes from: recorded once, before its first step,
      // and counted by the telemetry as checkpoint-restore badput.
      const restores = events.filter((e) => e.type === 'CheckpointRestored');
      expect(restores).toHaveLength(1);
      expect(restores[0]!.data).toMatchObject({ stage: 'pretrain', attempt: 2, checkpoint_id: resumed.from_checkpoint_id, step: resumed.from_step });
      expect(restores[0]!.data.restore_seconds).toBeGreaterThan(0);
      const firstProgress = events.findIndex((e) => e.type === 'ProgressRecorded' && e.data.attempt === 2);
      expect(events.indexOf(restores[0]!)).toBeLessThan(firstProgress);
      const asTelemetry = (list: typeof events) => list.map((e) => ({ type: e.type, data: e.data, at: Date.parse((e as { recorded_at?: string }).recorded_at!) }));
      const telemetry = runTelemetryOf(runId, asTelemetry(events));
      expect(telemetry.checkpoints.filter((c) => c.kind === 'restore')).toEqual([
        { kind: 'restore', at: expect.any(Number), bytes: restores[0]!.data.bytes, ms: Math.round(restores[0]!.data.restore_seconds * 1000) },
      ]);
      // Up to the restore, the time just before it is checkpoint-restore badput (later simulated saves, whose modelled
      // seconds run far ahead of the wall clock here, may overlay it).
      const upToRestore = runTelemetryOf(runId, asTelemetry(events.slice(0, events.indexOf(restores[0]!) + 1)));
      expect(upToRestore.segments.at(-1)![2]).toBe('checkpoint_restore');

      // `ito logs` tells both in words.
      const logs = (await p.api.call('GET', `/v1/runs/${runId}/logs`, { key: seed.requester })).body.data.lines.map((l: { message: string }) => l.message);
      expect(logs).toContain(`resume SLO breached by a crash incident: ${resumed.resume_latency_s} s against the target of 0.001 s`);
      expect(logs).toContain(`checkpoint ${resumed.from_checkpoint_id} restored at step ${resumed.from_step} (attempt 2) (${formatBytes(restores[0]!.data.bytes)} in ${restores[0]!.data.restore_seconds} s)`);

      // The run's own metrics name the incident with its latencies and the breach.
      const metrics = await p.api.call('GET', `/v1/runs/${runId}/metrics`, { key: seed.requester });
      expect(metrics.body.data.incidents).toEqual([
        {
          kind: 'crash',
          node_id: resumed.incident.node_id,
          detected_at: resumed.incident.detected_at,
          detection_latency_s: 0,
          resume_latency_s: resumed.resume_latency_s,
          breaches: [{ slo: 'resume', measured_s: resumed.resume_latency_s, target_s: 0.001, bound: 'target' }],
        },
      ]);

      const text = await (await fetch(`${p.api.url}/metrics`)).text();
      const m = parse(text);
      expect(m.get('ito_runs{state="succeeded"}')).toBe(1);
      expect(m.get('ito_runs{state="training"}')).toBe(0);
      // The crash is detected when the agent reports it: detection latency 0, in every bucket.
      expect(m.get('ito_slo_detection_latency_seconds_bucket{incident_kind="crash",le="1"}')).toBe(1);
      expect(m.get('ito_slo_detection_latency_seconds_count{incident_kind="crash"}')).toBe(1);
      expect(m.get('ito_slo_detection_latency_seconds_sum{incident_kind="crash"}')).toBe(0);
      const resumeS = resumed.resume_latency_s as number;
      for (const le of [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 900]) {
        expect(m.get(`ito_slo_resume_latency_seconds_bucket{incident_kind="crash",le="${le}"}`)).toBe(resumeS <= le ? 1 : 0);
      }
      expect(m.get('ito_slo_resume_latency_seconds_bucket{incident_kind="crash",le="+Inf"}')).toBe(1);
      expect(m.get('ito_slo_resume_latency_seconds_sum{incident_kind="crash"}')).toBeCloseTo(resumeS, 9);
      expect(m.get('ito_slo_breaches_total{slo="resume",bound="target"}')).toBe(1);
      expect(m.get('ito_slo_breaches_total{slo="detection",bound="target"}')).toBeUndefined();
      expect(m.get('ito_heartbeats_ingested_total')).toBeGreaterThan(0);
      expect(m.get('ito_ledger_append_duration_seconds_count')).toBeGreaterThan(0);
      // Labels carry no ids.
      expect(text).not.toContain(runId);
      expect(text).not.toContain(resumed.incident.node_id);

      // The SLO counts are a projection like any other: the auditor's replay rebuilds them from the ledger and
      // finds the live rows equal.
      expect(Number((await p.api.pool.query('select sum(count) as n from slo_latency_counts')).rows[0].n)).toBe(2);
      const auditor = (await p.api.admin.createKey({ tenantId: seed.tenant.tenant_id, scopes: ['audit:read'] })).key;
      const replay = await p.api.call('GET', '/v1/audit/replay', { key: auditor });
      expect(replay.body.data).toMatchObject({ matches: true, difference_count: 0 });
      expect(replay.body.data.projections).toContain('slo');

      // A second API replica on the same database (and here the queue backend) answers the same from the stores.
      const replica = await buildApp({ logger: createLogger({ level: 'silent' }), readiness: [], pool: p.api.pool, queues: { kit: p.kit, catalogs: [pipelineJobs] } });
      try {
        const r = parse((await replica.inject({ method: 'GET', url: '/v1/metrics' })).body);
        for (const key of [...m.keys()].filter((k) => k.startsWith('ito_slo_') || k.startsWith('ito_runs{'))) expect(r.get(key), key).toBe(m.get(key));
        // Nothing is left waiting; every stage start ran once per StageStarted.
        for (const state of ['waiting', 'active', 'delayed']) expect(r.get(`ito_queue_jobs{queue="pipeline-stages",state="${state}"}`)).toBe(0);
        const started = events.filter((e) => e.type === 'StageStarted').length;
        expect(r.get('ito_job_duration_seconds_count{queue="pipeline-stages",job="stage.start"}')).toBe(started);
        expect(r.get('ito_job_duration_seconds_bucket{queue="pipeline-stages",job="stage.start",le="+Inf"}')).toBe(started);
        expect(r.get('ito_job_duration_seconds_count{queue="pipeline-runs",job="run.finish"}')).toBe(1);
        // Per process: this replica took no heartbeat and made no append.
        expect(r.get('ito_heartbeats_ingested_total')).toBe(0);
      } finally {
        await replica.close();
      }
    });

    it('a store that does not answer leaves its series out and counts the failure; the rest is still served', async () => {
      const url = new URL(p.api.pool.options.connectionString!);
      url.pathname = '/ito_no_such_database';
      const broken = new pg.Pool({ connectionString: url.toString(), max: 2 });
      const replica = await buildApp({ logger: createLogger({ level: 'silent' }), readiness: [], pool: broken });
      try {
        const answer = await replica.inject({ method: 'GET', url: '/metrics' });
        expect(answer.statusCode).toBe(200);
        const m = parse(answer.body);
        for (const metric of ['ito_runs', 'ito_slo_detection_latency_seconds', 'ito_slo_resume_latency_seconds', 'ito_slo_breaches_total']) {
          expect(m.get(`ito_metrics_read_failures_total{metric="${metric}"}`), metric).toBe(1);
        }
        expect([...m.keys()].some((k) => k.startsWith('ito_runs{'))).toBe(false);
        expect(m.get('ito_heartbeats_ingested_total')).toBe(0);
      } finally {
        await replica.close();
        await broken.end();
      }
    });
  });
}
