import { ItoError, type StageName } from '@ito/contracts';
import type { LivePlan, RunEvent, TaskRef } from '../run/run-events.js';
import type { RunAggregate } from '../run/run-state.js';
import { commandKey, nextCommands, type PipelineCommand } from './next-commands.js';
import type { SharedSpec } from './task-spec.js';
import type { ResumeFacts } from '../monitor/resume-facts.js';

/**
 * The orchestrator's commands, turned into the events they append once their I/O is done. Every function here
 * first checks that the command is still what the run needs (`nextCommands` still names it): a job that runs
 * late, twice, or after someone else already did its work gets `null` and appends nothing.
 */
export function stillNeeded<T extends PipelineCommand['type']>(state: RunAggregate, type: T, key: string): Extract<PipelineCommand, { type: T }> | null {
  const found = nextCommands(state).find((c) => c.type === type && commandKey(c) === key);
  return (found as Extract<PipelineCommand, { type: T }> | undefined) ?? null;
}

/** Starts a stage attempt: RunResumed first when it resumes, then StageStarted with its tasks (node stages). */
export function startStageEvents(
  state: RunAggregate,
  cmd: Extract<PipelineCommand, { type: 'StartStage' }>,
  assignment: { tasks: TaskRef[]; spec: SharedSpec } | null,
  recovery: { facts?: ResumeFacts; plan?: LivePlan; startedAt?: Date } = {},
): RunEvent[] {
  const runId = requireRunId(state);
  const events: RunEvent[] = [];
  // Fewer nodes than planned are left after a failure: the re-planned layout comes first, tasks are built on it.
  if (recovery.plan) events.push(planComputedEvent(state, recovery.plan));
  if (cmd.resume) {
    events.push({
      type: 'RunResumed',
      data: {
        run_id: runId,
        stage: cmd.stage,
        attempt: cmd.attempt,
        from_checkpoint_id: cmd.resume.from?.checkpoint_id ?? null,
        from_step: cmd.resume.from?.step ?? 0,
        recompute_steps: cmd.resume.recompute_steps,
        ...(recovery.facts ?? {}),
      },
    });
  }
  events.push({
    type: 'StageStarted',
    data: {
      run_id: runId,
      stage: cmd.stage,
      attempt: cmd.attempt,
      ...(assignment ? { tasks: assignment.tasks, spec: assignment.spec } : {}),
      // Node time is charged from here, on the control plane's clock.
      ...(assignment && recovery.startedAt ? { started_at: recovery.startedAt.toISOString() } : {}),
    },
  });
  return events;
}

/** The current attempt of a worker stage (data prep, planning) that this job started and must finish. */
export function requireRunningWorkerStage(state: RunAggregate, stage: StageName, attempt: number): boolean {
  const c = state.current;
  return !!c && c.stage === stage && c.attempt === attempt && c.status === 'running' && !['cancelling', 'cancelled', 'failed'].includes(state.status);
}

export function completeWorkerStageEvents(state: RunAggregate, stage: StageName, attempt: number, facts: RunEvent[]): RunEvent[] {
  return [...facts, { type: 'StageCompleted', data: { run_id: requireRunId(state), stage, attempt } }];
}

export function planComputedEvent(state: RunAggregate, plan: LivePlan): RunEvent {
  return { type: 'PlanComputed', data: { run_id: requireRunId(state), plan } };
}

export function failRunEvents(state: RunAggregate, reason: string, code?: string): RunEvent[] {
  return [{ type: 'RunFailed', data: { run_id: requireRunId(state), reason, ...(code ? { code } : {}) } }];
}

export function succeedRunEvents(state: RunAggregate): RunEvent[] {
  return [{ type: 'RunSucceeded', data: { run_id: requireRunId(state) } }];
}

/** Cancel: withdraw whatever still runs (the agents stop it), then the run is cancelled. */
export function finishCancelEvents(state: RunAggregate): RunEvent[] {
  const runId = requireRunId(state);
  const events: RunEvent[] = [];
  const c = state.current;
  const active = c ? c.tasks.filter((t) => t.status === 'assigned' || t.status === 'running').map((t) => t.task_id) : [];
  if (c && active.length > 0) events.push({ type: 'TasksWithdrawn', data: { run_id: runId, stage: c.stage, attempt: c.attempt, task_ids: active, reason: 'run cancelled' } });
  events.push({ type: 'RunCancelled', data: { run_id: runId, reason: c ? `cancelled during ${c.stage}` : 'cancelled before any stage started' } });
  return events;
}

/** The budget ran out and every task has stopped: record the spend and the final checkpoint, fail the run. */
export function finishBudgetEvents(state: RunAggregate): RunEvent[] {
  const runId = requireRunId(state);
  const stop = state.stopRequested;
  if (!stop) throw new ItoError('invalid_state', `run ${runId} was not asked to stop`);
  const final = [...state.checkpoints].reverse().find((c) => c.final) ?? null;
  const spent = Math.round(state.spentUsd * 100) / 100;
  return [
    { type: 'BudgetExhausted', data: { run_id: runId, spent_usd: spent, ceiling_usd: stop.ceiling_usd, final_checkpoint_id: final?.checkpoint_id ?? null } },
    {
      type: 'RunFailed',
      data: {
        run_id: runId,
        code: 'budget_exceeded',
        reason: `budget exhausted: $${spent.toFixed(2)} spent of the $${stop.ceiling_usd} ceiling${final ? `; final checkpoint ${final.checkpoint_id} at step ${final.step}` : ''}`,
      },
    },
  ];
}

export function checkpointDeletedEvent(
  state: RunAggregate,
  checkpointId: string,
  uri: string,
  reason: 'keep_last' | 'cleanup',
  existed: boolean,
  refused?: string,
): RunEvent {
  return { type: 'CheckpointDeleted', data: { run_id: requireRunId(state), checkpoint_id: checkpointId, uri, reason, existed: existed && !refused, ...(refused ? { refused } : {}) } };
}

export function cleanupCompletedEvent(
  state: RunAggregate,
  removed: string[],
  missing: string[],
  bookingReleased: boolean,
  refused: string[] = [],
  storage?: { prefix: string; objects: number; bytes: number },
): RunEvent {
  return {
    type: 'CleanupCompleted',
    data: {
      run_id: requireRunId(state),
      removed,
      missing,
      booking_released: bookingReleased,
      ...(refused.length > 0 ? { refused } : {}),
      ...(storage ? { storage } : {}),
    },
  };
}

function requireRunId(state: RunAggregate): string {
  if (!state.runId) throw new ItoError('not_found', 'no such run');
  return state.runId;
}
