import { TERMINAL_RUN_STATES } from '@ito/contracts';
import type { RunAggregate } from './run-aggregate.js';

type RunEnd = Pick<RunAggregate, 'status' | 'terminal'>;

/** The ended states (succeeded, failed, cancelled, gate failed) and the cleanup that may follow them. */
const OVER: ReadonlyArray<RunAggregate['status']> = [...TERMINAL_RUN_STATES, 'cleaning_up', 'cleaned'];

/**
 * The run is over: it ended (`terminal` is set when it does and kept through cleanup), or its checkpoints are
 * being (or were) removed. Nothing may start, fail or resume it, and no task of it may go on. A run that does
 * not exist (`none`) is not over: callers that meet one say what it means for them.
 */
export function isRunOver(run: RunEnd): boolean {
  return run.terminal !== null || OVER.includes(run.status);
}

/**
 * The run is over or being cancelled: its end is decided, so it cannot be cancelled again and late task reports
 * no longer move its public state. Kept apart from `isRunOver` because a cancelling run still has a workload
 * to stop: its tasks must still be heard (their stop acknowledgements, their last reports) until the
 * orchestrator records `RunCancelled`, where an over run refuses them.
 */
export function isRunOverOrCancelling(run: RunEnd): boolean {
  return run.status === 'cancelling' || isRunOver(run);
}
