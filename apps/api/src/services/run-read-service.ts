import { ItoError } from '@ito/contracts';
import { runStreamId } from '@ito/domain';
import type { StoredEvent } from '@ito/ledger';
import { getRun, listRuns, type RunRow } from '../db/queries.js';
import type { Resources } from '../resources.js';

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
    created_at: r.created_at.toISOString(),
    updated_at: r.updated_at.toISOString(),
  };
}

async function requireRun(res: Resources, tenantId: string, runId: string): Promise<RunRow> {
  const run = await getRun(res.pool, tenantId, runId);
  if (!run) throw new ItoError('not_found', 'no such run');
  return run;
}

export async function showRun(res: Resources, tenantId: string, runId: string) {
  return runView(await requireRun(res, tenantId, runId));
}

export async function findRuns(res: Resources, tenantId: string, idempotencyKey: string | undefined, limit: number) {
  return { runs: (await listRuns(res.pool, tenantId, { idempotencyKey, limit })).map(runView) };
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
  switch (e.type) {
    case 'ProgressRecorded':
      return typeof d.message === 'string' ? d.message : `step ${String(d.step)} tokens ${String(d.tokens)}${d.loss !== undefined ? ` loss ${String(d.loss)}` : ''}`;
    case 'StageStarted':
      return `stage ${String(d.stage)} started`;
    case 'StageCompleted':
      return `stage ${String(d.stage)} completed`;
    case 'CheckpointSaved':
      return `checkpoint ${String(d.checkpoint_id)} saved at step ${String(d.step)} (${String(d.bytes)} bytes in ${String(d.save_seconds)} s)`;
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

export async function showRunMetrics(res: Resources, tenantId: string, runId: string) {
  const events = await runEvents(res, tenantId, runId);
  const progress = events.filter((e) => e.type === 'ProgressRecorded').map((e) => e.data as { stage: string; step: number; tokens: number; loss?: number });
  const latest = progress.at(-1) ?? null;
  return {
    run_id: runId,
    latest: latest ? { stage: latest.stage, step: latest.step, tokens: latest.tokens, loss: latest.loss ?? null } : null,
    series: progress.map((p) => ({ step: p.step, tokens: p.tokens, loss: p.loss ?? null })),
    checkpoints: events.filter((e) => e.type === 'CheckpointSaved').length,
  };
}

export async function showRunCheckpoints(res: Resources, tenantId: string, runId: string) {
  const run = await requireRun(res, tenantId, runId);
  return { run_id: runId, checkpoints: run.aggregate.checkpoints };
}
