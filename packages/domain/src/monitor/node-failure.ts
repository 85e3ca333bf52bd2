import type { RunEvent } from '../run/run-events.js';
import type { RunAggregate } from '../run/run-state.js';
import { isRunOverOrCancelling } from '../run/run-over.js';
import type { LivenessSettings, LivenessVerdict } from './liveness-rules.js';

/** A node of the run's current attempt the monitor judged lost or hung, with the evidence. */
export interface NodeFailure {
  node_id: string;
  task_id: string;
  attempt: number;
  verdict: Exclude<LivenessVerdict, { kind: 'alive' }>;
  last_heartbeat_at: Date | null;
  step: number | null;
  detected_at: Date;
}

/**
 * What a lost or hung node means for its run: the finding with its evidence (`NodeLost` or `TaskHung`), the
 * attempt's active tasks withdrawn (fenced by attempt, so the failed node's late reports are refused), and the
 * attempt failed (`StageFailed`), which the orchestrator retries from the last checkpoint on the nodes left.
 * Nothing when the task is no longer an active one of the current attempt (the finding came late). Pure.
 */
export function decideNodeFailure(state: RunAggregate, f: NodeFailure, settings: LivenessSettings): RunEvent[] {
  const runId = state.runId;
  const current = state.current;
  if (!runId || !current || current.status !== 'running' || current.attempt !== f.attempt) return [];
  const task = current.tasks.find((t) => t.task_id === f.task_id && t.node_id === f.node_id);
  if (!task || (task.status !== 'assigned' && task.status !== 'running')) return [];
  if (isRunOverOrCancelling(state) || state.status === 'awaiting_operator' || state.stopRequested) return [];

  const at = f.detected_at.toISOString();
  const base = { run_id: runId, node_id: f.node_id, task_id: f.task_id, stage: current.stage, attempt: current.attempt };
  const lastBeat = f.last_heartbeat_at?.toISOString() ?? null;
  const events: RunEvent[] = [];
  let reason: string;
  if (f.verdict.kind === 'lost') {
    events.push({
      type: 'NodeLost',
      data: { ...base, last_heartbeat_at: lastBeat, detected_at: at, misses: settings.misses, interval_s: settings.interval_s, silent_s: round3(f.verdict.silent_s) },
    });
    reason = `node ${f.node_id} lost: no heartbeat for ${round3(f.verdict.silent_s)} s (${settings.misses} × ${settings.interval_s} s)`;
  } else {
    const allowance = f.verdict.first_step_allowance_s;
    events.push({
      type: 'TaskHung',
      data: {
        ...base,
        last_progress_at: f.verdict.last_progress_at.toISOString(),
        last_heartbeat_at: lastBeat ?? at,
        expected_step_s: round3(f.verdict.expected_step_s),
        k: settings.hang_factor,
        detected_at: at,
        stuck_s: round3(f.verdict.stuck_s),
        ...(f.step !== null ? { step: f.step } : {}),
        ...(allowance !== undefined ? { first_step_allowance_s: allowance, evidence: `no first step within ${allowance} s` } : {}),
      },
    });
    reason =
      allowance !== undefined
        ? `task ${f.task_id} hung on node ${f.node_id}: no first step within ${allowance} s of its start (start-up allowance)`
        : `task ${f.task_id} hung on node ${f.node_id}: no progress for ${round3(f.verdict.stuck_s)} s (k ${settings.hang_factor} × ${round3(f.verdict.expected_step_s)} s per step)`;
  }
  const active = current.tasks.filter((t) => t.status === 'assigned' || t.status === 'running').map((t) => t.task_id);
  events.push(
    { type: 'TasksWithdrawn', data: { run_id: runId, stage: current.stage, attempt: current.attempt, task_ids: active, reason } },
    { type: 'StageFailed', data: { run_id: runId, stage: current.stage, attempt: current.attempt, reason, task_id: f.task_id, node_id: f.node_id, failure: f.verdict.kind === 'lost' ? 'node_lost' : 'hang' } },
  );
  return events;
}

/** A node the run declared lost beats again: recorded once, so it may serve the run again as a spare. */
export function decideNodeRecovered(state: RunAggregate, nodeId: string, lastHeartbeatAt: Date, lostAt: Date | null): RunEvent[] {
  if (!state.runId || !(state.excludedNodes ?? []).includes(nodeId)) return [];
  return [{ type: 'NodeRecovered', data: { run_id: state.runId, node_id: nodeId, last_heartbeat_at: lastHeartbeatAt.toISOString(), ...(lostAt ? { lost_at: lostAt.toISOString() } : {}) } }];
}

function round3(v: number): number {
  return Math.round(v * 1000) / 1000;
}
