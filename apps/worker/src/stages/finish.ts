import { failRunEvents, finishBudgetEvents, finishCancelEvents, stillNeeded, succeedRunEvents, type PipelineCommand, type RunAggregate, type RunEvent } from '@ito/domain';
import type { PipelineResources } from '../resources.js';
import { changeRunIfNeeded, type RunRef } from './run-access.js';

export type FinishOutcome = 'succeed' | 'fail' | 'cancel' | 'budget';

const COMMAND: Record<FinishOutcome, PipelineCommand['type']> = { succeed: 'SucceedRun', fail: 'FailRun', cancel: 'FinishCancel', budget: 'FinishBudgetStop' };

function eventsFor(state: RunAggregate, outcome: FinishOutcome): RunEvent[] {
  const cmd = stillNeeded(state, COMMAND[outcome], outcome);
  if (!cmd) return [];
  switch (cmd.type) {
    case 'SucceedRun':
      return succeedRunEvents(state);
    case 'FailRun':
      return failRunEvents(state, cmd.reason, cmd.code);
    case 'FinishCancel':
      return finishCancelEvents(state);
    case 'FinishBudgetStop':
      return finishBudgetEvents(state);
    default:
      return [];
  }
}

/** `run.finish`: the run's last events (succeeded, failed, cancelled, budget exhausted), if they are still due. */
export async function finishRun(res: PipelineResources, job: RunRef & { outcome: FinishOutcome }): Promise<string> {
  const done = await changeRunIfNeeded(res, job, 'worker:finish', (state) => eventsFor(state, job.outcome));
  return done ? job.outcome : 'not needed';
}
