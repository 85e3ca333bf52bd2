import { ItoError, isTerminal, type RunState } from '@ito/contracts';
import type { Pipeline } from '../pipeline/pipeline.js';
import type { RunEvent, RunEventMap } from './run-events.js';
import type { RunAggregate } from './run-state.js';
import { isRunOverOrCancelling } from './run-over.js';

/**
 * Commands on a run, imperative. Ids and the clock arrive in the command (the decider does no I/O).
 * `decideRun` answers the events to append, or throws an ItoError with the stable code of the refusal.
 */
export type RunCommand =
  | { type: 'ReserveRun'; data: RunEventMap['RunReserved']; pipeline: Pipeline }
  | { type: 'RequestCancel'; data: { run_id: string; confirmation_ref: string; workload_started: boolean } }
  | { type: 'StartCleanup'; data: { run_id: string; confirmation_ref: string; release_booking: boolean } }
  | { type: 'ApproveRestart'; data: { run_id: string; confirmation_ref: string } };

/** States in which no workload has reached a node yet, so a cancel needs no worker to finish. */
const PRE_WORKLOAD_STATES: readonly RunState[] = ['reserved', 'confirmed'];

export function decideRun(command: RunCommand, state: RunAggregate): RunEvent[] {
  switch (command.type) {
    case 'ReserveRun':
      if (state.status !== 'none') throw new ItoError('invalid_state', `run ${command.data.run_id} already exists`);
      // Reserve and confirm land together: the confirmation was consumed in the same transaction. The pipeline
      // the orchestrator will drive is fixed now, from the manifest the approver saw.
      return [
        { type: 'RunReserved', data: command.data },
        { type: 'RunConfirmed', data: { run_id: command.data.run_id, confirmation_ref: command.data.confirmation_ref } },
        { type: 'PipelinePlanned', data: { run_id: command.data.run_id, pipeline: command.pipeline } },
      ];

    case 'RequestCancel': {
      const status = requireRun(state, command.data.run_id);
      if (isRunOverOrCancelling(state)) {
        throw new ItoError('invalid_state', `run ${command.data.run_id} is ${status}; only an active run can be cancelled`);
      }
      const requested: RunEvent = { type: 'CancelRequested', data: { run_id: command.data.run_id, confirmation_ref: command.data.confirmation_ref } };
      if (PRE_WORKLOAD_STATES.includes(status) && !command.data.workload_started) {
        return [requested, { type: 'RunCancelled', data: { run_id: command.data.run_id, reason: 'cancelled before any workload started' } }];
      }
      // A workload is running: the stage orchestrator stops the node agents and records RunCancelled.
      return [requested];
    }

    case 'StartCleanup': {
      const status = requireRun(state, command.data.run_id);
      if (!isTerminal(status)) {
        throw new ItoError('invalid_state', `run ${command.data.run_id} is ${status}; cleanup follows a terminal state (succeeded, cancelled, gate_failed, failed)`);
      }
      const toRemove = state.checkpoints.map((c) => c.uri);
      const started: RunEvent = {
        type: 'CleanupStarted',
        data: { run_id: command.data.run_id, confirmation_ref: command.data.confirmation_ref, to_remove: toRemove, release_booking: command.data.release_booking },
      };
      if (toRemove.length === 0) {
        // Nothing is stored for this run, so cleanup is complete at once; checkpoint removal is a worker's job.
        return [started, { type: 'CleanupCompleted', data: { run_id: command.data.run_id, removed: [], booking_released: command.data.release_booking } }];
      }
      return [started];
    }

    case 'ApproveRestart': {
      const status = requireRun(state, command.data.run_id);
      if (status !== 'awaiting_operator') {
        throw new ItoError('invalid_state', `run ${command.data.run_id} is ${status}; a restart is approved only while awaiting_operator`);
      }
      return [{ type: 'RestartApproved', data: { run_id: command.data.run_id, confirmation_ref: command.data.confirmation_ref } }];
    }

    default: {
      const never: never = command;
      return never;
    }
  }
}

function requireRun(state: RunAggregate, runId: string): RunState {
  if (state.status === 'none') throw new ItoError('not_found', `run ${runId} not found`);
  return state.status;
}
