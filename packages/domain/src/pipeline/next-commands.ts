import { isTerminal, type ErrorCode, type RunState, type StageName } from '@ito/contracts';
import type { CheckpointRef } from '../run/run-events.js';
import type { RunAggregate, RunCheckpoint } from '../run/run-state.js';
import { stepIndexOf } from './pipeline.js';

/** Where a stage attempt starts from when it is not the first: a checkpoint, and data to skip. */
export interface StageResume {
  from: CheckpointRef | null;
  skip_steps: { from: number; to: number } | null;
  /** Steps the failed attempt had trained past the checkpoint, which the new attempt trains again. */
  recompute_steps: number;
  reason: 'retry' | 'restart';
}

/** What the orchestrator does next for a run. Each becomes one job with a deterministic id. */
export type PipelineCommand =
  | { type: 'StartStage'; stage: StageName; attempt: number; resume: StageResume | null }
  | { type: 'SucceedRun' }
  | { type: 'FailRun'; reason: string; code?: ErrorCode }
  | { type: 'FinishCancel' }
  | { type: 'FinishBudgetStop' }
  | { type: 'CleanupCheckpoints' }
  | { type: 'PruneCheckpoint'; checkpoint_id: string; uri: string };

/** A stable name for a command, from which its job id is made: the same decision always has the same id. */
export function commandKey(cmd: PipelineCommand): string {
  switch (cmd.type) {
    case 'StartStage':
      return `${cmd.stage}@${cmd.attempt}`;
    case 'PruneCheckpoint':
      return `prune-${cmd.checkpoint_id}`;
    case 'SucceedRun':
      return 'succeed';
    case 'FailRun':
      return 'fail';
    case 'FinishCancel':
      return 'cancel';
    case 'FinishBudgetStop':
      return 'budget';
    case 'CleanupCheckpoints':
      return 'cleanup';
  }
}

function latestCheckpointOf(state: RunAggregate, stage: string): RunCheckpoint | null {
  return state.checkpoints.filter((c) => c.stage === stage).sort((a, b) => b.step - a.step)[0] ?? null;
}

function asRef(c: RunCheckpoint | null): CheckpointRef | null {
  return c ? { checkpoint_id: c.checkpoint_id, uri: c.uri, step: c.step } : null;
}

/** Checkpoints beyond `keep_last`, oldest first: the newest `keep_last` stay. */
function prunable(state: RunAggregate): RunCheckpoint[] {
  const keep = state.pipeline?.checkpoint.keep_last ?? Number.POSITIVE_INFINITY;
  const excess = state.checkpoints.length - keep;
  return excess > 0 ? state.checkpoints.slice(0, excess) : [];
}

function taskEnded(status: string): boolean {
  return status !== 'assigned' && status !== 'running';
}

/** Another attempt at the current stage, from `from`: the steps trained past it are trained again. */
function nextAttempt(
  state: RunAggregate,
  current: NonNullable<RunAggregate['current']>,
  from: CheckpointRef | null,
  skip: StageResume['skip_steps'],
  reason: StageResume['reason'],
): PipelineCommand {
  const reached = state.progress?.stage === current.stage ? state.progress.step : 0;
  return {
    type: 'StartStage',
    stage: current.stage as StageName,
    attempt: current.attempt + 1,
    resume: { from, skip_steps: skip, recompute_steps: Math.max(0, reached - (from?.step ?? 0)), reason },
  };
}

/**
 * The stage orchestrator's decider: from a run's state alone, what must happen next. Level-triggered (it looks
 * at the state, not at which event arrived), so evaluating it twice, late or after a crash gives the same
 * answer, and the job ids made from its commands make enqueueing them again harmless. Pure.
 */
export function nextCommands(state: RunAggregate): PipelineCommand[] {
  const pipeline = state.pipeline;
  if (state.status === 'none' || !pipeline) return [];
  if (state.status === 'cleaning_up') return state.cleanup && !state.cleanup.done ? [{ type: 'CleanupCheckpoints' }] : [];
  if (state.status === 'cleaned' || isTerminal(state.status as RunState)) return [];

  const prune: PipelineCommand[] = prunable(state).map((c) => ({ type: 'PruneCheckpoint', checkpoint_id: c.checkpoint_id, uri: c.uri }));
  if (state.status === 'cancelling') return [{ type: 'FinishCancel' }];
  if (state.status === 'awaiting_operator') return prune;

  const current = state.current;
  if (state.stopRequested) {
    const settled = !current || current.tasks.every((t) => taskEnded(t.status));
    return settled ? [...prune, { type: 'FinishBudgetStop' }] : prune;
  }
  if (!current) {
    const first = pipeline.steps[0];
    return first ? [{ type: 'StartStage', stage: first.stage, attempt: 1, resume: null }] : [{ type: 'SucceedRun' }];
  }

  switch (current.status) {
    case 'running':
      return prune;
    case 'completed': {
      const next = pipeline.steps[stepIndexOf(pipeline, current.stage) + 1];
      if (!next) return [...prune, { type: 'SucceedRun' }];
      return [...prune, { type: 'StartStage', stage: next.stage, attempt: (state.attempts[next.stage] ?? 0) + 1, resume: null }];
    }
    case 'failed': {
      if (current.attempt >= pipeline.rules.max_stage_attempts) {
        const last = current.failure_reason ? `the last attempt: ${current.failure_reason}` : "the last attempt's task failed";
        return [...prune, { type: 'FailRun', reason: `stage ${current.stage} failed ${current.attempt} times; ${last}` }];
      }
      return [...prune, nextAttempt(state, current, asRef(latestCheckpointOf(state, current.stage)), null, 'retry')];
    }
    case 'withdrawn': {
      const restart = state.restart;
      if (!restart?.approved) return prune;
      return [...prune, nextAttempt(state, current, restart.from, restart.skip_steps, 'restart')];
    }
    default: {
      const never: never = current.status;
      return never;
    }
  }
}
