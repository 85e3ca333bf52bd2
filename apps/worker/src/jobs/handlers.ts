import { PermanentJobError, type JobHandlers } from '@ito/queue';
import type { PipelineResources } from '../resources.js';
import { cleanupRun, pruneCheckpoint } from '../stages/storage-jobs.js';
import { finishRun } from '../stages/finish.js';
import { failRun, startStage, WaitingForNodes } from '../stages/start-stage.js';
import { pipelineJobs, type PipelineJobs } from './catalog.js';

/**
 * A handler for every pipeline job (the compiler refuses a job without one). A stage that still cannot start on
 * its last attempt ends the run with the reason, so no run waits forever on a job that gave up.
 */
export function pipelineHandlers(res: PipelineResources): JobHandlers<PipelineJobs> {
  return {
    'stage.start': async (data, ctx) => {
      const began = Date.now();
      try {
        const outcome = await startStage(res, data, ctx.signal);
        res.logger.debug({ run_id: data.run_id, stage: data.stage, attempt: ctx.attempt, outcome, ms: Date.now() - began }, 'stage job done');
        return outcome;
      } catch (err) {
        if (err instanceof PermanentJobError) throw err;
        const last = ctx.attempt >= (pipelineJobs['stage.start'].attempts ?? 1);
        if (last) await failRun(res, data, `stage ${data.stage} could not start: ${(err as Error).message}`);
        else if (!(err instanceof WaitingForNodes)) res.logger.warn({ run_id: data.run_id, stage: data.stage, err: { message: (err as Error).message } }, 'stage start failed; retrying');
        throw err;
      }
    },
    'run.finish': async (data) => finishRun(res, data),
    'run.cleanup': async (data) => cleanupRun(res, data),
    'checkpoint.prune': async (data) => pruneCheckpoint(res, data),
  };
}
