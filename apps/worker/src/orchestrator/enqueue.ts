import type { PipelineCommand } from '@ito/domain';
import type { JobClient } from '@ito/queue';
import type { PipelineJobs } from '../jobs/catalog.js';

const OUTCOME = { SucceedRun: 'succeed', FailRun: 'fail', FinishCancel: 'cancel', FinishBudgetStop: 'budget' } as const;

/** Turns the orchestrator's decision into its job. The job id comes from the decision, so this is safe to repeat. */
export async function enqueueCommand(jobs: JobClient<PipelineJobs>, run: { tenant_id: string; run_id: string }, cmd: PipelineCommand): Promise<void> {
  const ref = { tenant_id: run.tenant_id, run_id: run.run_id };
  switch (cmd.type) {
    case 'StartStage':
      await jobs.enqueue('stage.start', { ...ref, stage: cmd.stage, attempt: cmd.attempt });
      return;
    case 'SucceedRun':
    case 'FailRun':
    case 'FinishCancel':
    case 'FinishBudgetStop':
      await jobs.enqueue('run.finish', { ...ref, outcome: OUTCOME[cmd.type] });
      return;
    case 'CleanupCheckpoints':
      await jobs.enqueue('run.cleanup', ref);
      return;
    case 'PruneCheckpoint':
      await jobs.enqueue('checkpoint.prune', { ...ref, checkpoint_id: cmd.checkpoint_id });
      return;
    default: {
      const never: never = cmd;
      throw new Error(`unhandled pipeline command ${JSON.stringify(never)}`);
    }
  }
}
