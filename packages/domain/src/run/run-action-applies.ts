import { ItoError, isTerminal, type ConfirmationAction, type RunState } from '@ito/contracts';

/** States a run never leaves for one where the action could apply: asking an approver for it is pointless. */
const NEVER_AGAIN: Record<Exclude<ConfirmationAction, 'train.create'>, (s: RunState) => boolean> = {
  // Cancelling, ended or cleaned: nothing is left to cancel.
  'run.cancel': (s) => isTerminal(s) || s === 'cancelling' || s === 'cleaning_up' || s === 'cleaned',
  // Cleaned already (or being cleaned): a second cleanup has nothing to do. An active run can be cleaned once it ends.
  'run.cleanup': (s) => s === 'cleaning_up' || s === 'cleaned',
  // A restart follows a loss spike; an ended or cleaned run has none to come.
  'run.restart': (s) => isTerminal(s) || s === 'cleaning_up' || s === 'cleaned',
  // The booking is released at cleanup, which an already cleaned run will not have again.
  'booking.release': (s) => s === 'cleaning_up' || s === 'cleaned',
};

/**
 * Pure: refuses a run action's confirmation request when the run's state rules the action out for good (a
 * cancel of an ended run), so an approver is never asked to allow what the action itself would then refuse.
 * An action that may apply later (cleanup of a running run) is left to the action's own check.
 */
export function checkRunActionCanApply(action: Exclude<ConfirmationAction, 'train.create'>, runId: string, state: RunState): void {
  if (NEVER_AGAIN[action](state)) {
    throw new ItoError('invalid_state', `run ${runId} is ${state}: ${action} can no longer apply to it, so no confirmation is requested`);
  }
}
