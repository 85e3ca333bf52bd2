import { ItoError, formatBytes, formatLoss } from '@ito/contracts';
import { incidentRecords, runStreamId, type RunEvent } from '@ito/domain';
import type { StoredEvent } from '@ito/ledger';
import { getRun, listRuns, type RunRow } from '@ito/runs';
import { rolloutMetrics } from '../agent/rollout-service.js';
import type { Resources } from '../resources.js';
import { runWaiting } from './run-waiting.js';
import { stageWaits } from './stage-waits.js';

export function runView(r: RunRow) {
  return {
    run_id: r.run_id,
    state: r.state,
    stage: r.stage,
    booking_id: r.booking_id,
    manifest_digest: r.manifest_digest,
    idempotency_key: r.idempotency_key,
    confirmation_ref: r.confirmation_ref,
    estimated_cost_usd: r.estimated_cost_usd,
    incremental_cost_usd: r.incremental_cost_usd,
    plan: r.plan,
    progress: r.aggregate.progress ?? null,
    /** Why the run failed (`code` and a plain reason), once it has; null otherwise. */
    failure: r.aggregate.failure ?? null,
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

async function requireRun(res: Resources, tenantId: string, runId: string): Promise<RunRow> {
  const run = await getRun(res.pool, tenantId, runId);
  if (!run) throw new ItoError('not_found', 'no such run');
  return run;
}

/**
 * The run as stored, and what it waits for now: `waiting`, the list of every reason (nodes not live, a first step
 * within its start-up allowance, …; empty when nothing blocks it), and `waiting_for`, the running stage's start-up
 * wait alone in words (null when there is none), which the list also carries as its `first_step` member.
 */
async function liveRunView(res: Resources, tenantId: string, r: RunRow) {
  const waitingFor = await stageWaits(res, r);
  return { ...runView(r), waiting_for: waitingFor, waiting: await runWaiting(res, tenantId, r, waitingFor) };
}

export async function showRun(res: Resources, tenantId: string, runId: string) {
  return liveRunView(res, tenantId, await requireRun(res, tenantId, runId));
}

export async function findRuns(res: Resources, tenantId: string, idempotencyKey: string | undefined, limit: number) {
  const runs = await listRuns(res.pool, tenantId, { idempotencyKey, limit });
  // Only a lookup by key (one run) asks about nodes; a listing of many runs stays one query.
  return { runs: idempotencyKey ? await Promise.all(runs.map((r) => liveRunView(res, tenantId, r))) : runs.map(runView) };
}

async function runEvents(res: Resources, tenantId: string, runId: string): Promise<StoredEvent[]> {
  await requireRun(res, tenantId, runId);
  return res.ledger.readStream(runStreamId(runId), { tenantId });
}

export async function showRunEvents(res: Resources, tenantId: string, runId: string) {
  const events = await runEvents(res, tenantId, runId);
  return {
    run_id: runId,
    events: events.map((e) => ({ position: e.position, version: e.streamVersion, type: e.type, recorded_at: e.recordedAt.toISOString(), data: e.data })),
  };
}

/** One human line per event; the agent's own progress messages come through as they were sent. */
function logLine(e: StoredEvent): string {
  const d = e.data as Record<string, unknown>;
  const attempt = typeof d.attempt === 'number' && d.attempt > 1 ? ` (attempt ${d.attempt})` : '';
  switch (e.type) {
    case 'ProgressRecorded':
      return typeof d.message === 'string' ? d.message : `${String(d.stage)} step ${String(d.step)} tokens ${String(d.tokens)}${typeof d.loss === 'number' ? ` loss ${formatLoss(d.loss)}` : ''}`;
    case 'StageStarted':
      return `stage ${String(d.stage)} started${attempt}${Array.isArray(d.tasks) ? ` on ${d.tasks.length} node(s)` : ''}`;
    case 'StageCompleted':
      return `stage ${String(d.stage)} completed${attempt}`;
    case 'StageFailed':
      return `stage ${String(d.stage)} attempt ${String(d.attempt)} failed: ${String(d.reason)}`;
    case 'CheckpointSaved':
      return `checkpoint ${String(d.checkpoint_id)} saved at step ${String(d.step)} (${formatBytes(Number(d.bytes))} in ${String(d.save_seconds)} s)`;
    case 'CheckpointDeleted':
      return d.refused
        ? `checkpoint ${String(d.checkpoint_id)} not deleted (${String(d.reason)}): its path was refused (${String(d.refused)})`
        : `checkpoint ${String(d.checkpoint_id)} deleted (${String(d.reason)})`;
    case 'DataRefChecked':
      return `data ${String(d.ref)}: ${d.verified ? `sha256 verified (${formatBytes(Number(d.bytes))})` : String(d.note ?? 'not verified')}`;
    case 'DataPrepared': {
      const r = d.removed as { exact: number; near: number; decontamination: number };
      const items = d.contaminated_items_total as number;
      return `data ${String(d.ref)}: ${String(d.docs_in)} documents in, ${String(d.docs_out)} out (removed ${r.exact} exact, ${r.near} near duplicates, ${r.decontamination} contaminated${items > 0 ? `, touching ${items} battery item(s)` : ''})`;
    }
    case 'LadderDecision':
      return `ladder decision ${d.passed ? 'passed' : 'failed'}: custom mix loss ${String(d.custom_loss)} against reference ${String(d.reference_loss)} (${String(d.rule)})`;
    case 'EvalGatePassed':
      return `gate ${String(d.stage)} passed`;
    case 'EvalGateFailed':
      return `gate ${String(d.stage)} failed: ${(d.failed as string[]).join('; ')}`;
    case 'LossSpikeDetected':
      return `loss spike at step ${String(d.step)}: ${formatLoss(Number(d.loss))} against a moving average of ${formatLoss(Number(d.moving_average))}`;
    case 'RestartProposed':
    case 'RunFailed':
      return `${e.type === 'RunFailed' ? 'run failed' : 'restart proposed'}: ${String(d.reason)}`;
    case 'RunResumed':
      return `resumed ${String(d.stage ?? '')} from ${d.from_checkpoint_id ? `checkpoint ${String(d.from_checkpoint_id)} (step ${String(d.from_step)})` : 'the start of the stage'}`;
    case 'CheckpointRestored':
      return `checkpoint ${String(d.checkpoint_id)} restored at step ${String(d.step)}${attempt} (${formatBytes(Number(d.bytes))} in ${String(d.restore_seconds)} s)`;
    case 'SloBreached':
      return `${String(d.slo)} SLO breached by a ${String(d.incident_kind)} incident: ${String(d.measured_s)} s against the ${d.bound === 'seed' ? "seed's bound" : 'target'} of ${String(d.target_s)} s`;
    case 'StopRequested':
    case 'BudgetExhausted':
      return `${e.type === 'StopRequested' ? 'budget reached, stopping' : 'budget exhausted'}: $${String(d.spent_usd)} of $${String(d.ceiling_usd)}`;
    case 'NodeLost':
      return `node ${String(d.node_id)} lost${d.stage ? ` during ${String(d.stage)}` : ''}${typeof d.silent_s === 'number' ? `: silent for ${d.silent_s} s` : ''}`;
    case 'TaskHung':
      return `task on node ${String(d.node_id)} hung in ${String(d.stage)}${typeof d.stuck_s === 'number' ? `: no step for ${d.stuck_s} s` : ''}`;
    case 'NodeRecovered':
      return `node ${String(d.node_id)} is back`;
    case 'RunSucceeded':
      return 'run succeeded';
    case 'RunCancelled':
      return `run cancelled: ${String(d.reason)}`;
    default:
      return e.type;
  }
}

/** `GET /runs/:id/logs`: cursor paging over the run's stream; the cursor is the last stream version seen. */
export async function showRunLogs(res: Resources, tenantId: string, runId: string, cursor: number, limit: number) {
  const events = (await runEvents(res, tenantId, runId)).filter((e) => e.streamVersion > cursor).slice(0, limit);
  const last = events.at(-1);
  return {
    run_id: runId,
    lines: events.map((e) => ({ cursor: e.streamVersion, at: e.recordedAt.toISOString(), type: e.type, message: logLine(e) })),
    next_cursor: last ? last.streamVersion : cursor,
  };
}

/** The most progress points a metrics answer carries; longer series are thinned evenly, the last point kept. */
const MAX_SERIES = 500;

function thin<T>(points: T[]): T[] {
  if (points.length <= MAX_SERIES) return points;
  const every = points.length / MAX_SERIES;
  return [...Array.from({ length: MAX_SERIES - 1 }, (_, i) => points[Math.floor(i * every)]!), points.at(-1)!];
}

/** `GET /runs/:id/metrics`: progress, each stage's attempts and timing, evaluations, data checks and spend. */
export async function showRunMetrics(res: Resources, tenantId: string, runId: string) {
  const run = await requireRun(res, tenantId, runId);
  const events = await res.ledger.readStream(runStreamId(runId), { tenantId });
  const progress = events.filter((e) => e.type === 'ProgressRecorded').map((e) => e.data as { stage: string; step: number; tokens: number; loss?: number; throughput_tokens_per_s?: number });
  const latest = progress.at(-1) ?? null;
  const stages = new Map<string, { stage: string; attempts: number; started_at: string; completed_at: string | null; status: string }>();
  for (const e of events) {
    const d = e.data as { stage?: string; attempt?: number };
    if (!d.stage) continue;
    if (e.type === 'StageStarted') {
      const prev = stages.get(d.stage);
      stages.set(d.stage, { stage: d.stage, attempts: d.attempt ?? 1, started_at: prev?.started_at ?? e.recordedAt.toISOString(), completed_at: null, status: 'running' });
    } else if (e.type === 'StageCompleted' || e.type === 'StageFailed') {
      const s = stages.get(d.stage);
      if (s) stages.set(d.stage, { ...s, status: e.type === 'StageCompleted' ? 'completed' : 'failed', completed_at: e.type === 'StageCompleted' ? e.recordedAt.toISOString() : null });
    }
  }
  const a = run.aggregate;
  return {
    run_id: runId,
    state: run.state,
    latest: latest ? { stage: latest.stage, step: latest.step, tokens: latest.tokens, loss: latest.loss ?? null } : null,
    series: thin(progress).map((p) => ({ stage: p.stage, step: p.step, tokens: p.tokens, loss: p.loss ?? null, throughput_tokens_per_s: p.throughput_tokens_per_s ?? null })),
    stages: [...stages.values()],
    evaluations: events
      .filter((e) => e.type === 'EvalGatePassed' || e.type === 'EvalGateFailed')
      .map((e) => ({ stage: (e.data as { stage: string }).stage, passed: e.type === 'EvalGatePassed', metrics: (e.data as { metrics: unknown }).metrics, failed: (e.data as { failed?: string[] }).failed ?? [] })),
    data: events.filter((e) => e.type === 'DataRefChecked').map((e) => e.data),
    data_prepared: events.filter((e) => e.type === 'DataPrepared').map((e) => e.data),
    ladder: events.filter((e) => e.type === 'LadderDecision').map((e) => e.data).at(-1) ?? null,
    spend: { spent_usd: Math.round(a.spentUsd * 100) / 100, ceiling_usd: a.pipeline?.budget.ceiling_usd ?? null },
    checkpoints: a.checkpoints.length,
    rollouts: (await rolloutMetrics(res.pool, tenantId, runId)).attempts,
    /** Each incident: kind, node, detection time, detection and resume latency, and the SLOs it breached. */
    incidents: incidentRecords(events.map((e) => ({ type: e.type, data: e.data }) as RunEvent)),
  };
}

/** `GET /runs/:id/checkpoints`: what the run still has in storage, with each save's bandwidth. */
export async function showRunCheckpoints(res: Resources, tenantId: string, runId: string) {
  const run = await requireRun(res, tenantId, runId);
  return {
    run_id: runId,
    /** The run's state, so an empty list can say whether none was saved yet or cleanup removed them. */
    state: run.state,
    checkpoints: run.aggregate.checkpoints.map((c) => ({
      ...c,
      bandwidth_bytes_per_s: c.save_seconds ? Math.round(c.bytes / c.save_seconds) : null,
    })),
  };
}
