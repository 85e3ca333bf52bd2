import type { StageName } from '@ito/contracts';
import { requireRunningWorkerStage } from '@ito/domain';
import type { PipelineResources } from '../resources.js';
import { readRun, type RunRef } from './run-access.js';

/** How often a worker stage looks at its run: a cancelled or failed run's job stops within about this. */
export const RUN_WATCH_INTERVAL_MS = 1_000;

export class RunEndedError extends Error {
  override readonly name = 'RunEndedError';
}

export interface RunWatch {
  /** Aborted when the stage is no longer its run's running stage, or when `outer` aborts (timeout, shutdown). */
  signal: AbortSignal;
  /** Whether the abort came from the run (cancelled, failed, moved on) rather than from the worker. */
  ended(): boolean;
  stop(): void;
}

/**
 * Watches a worker stage's run while the stage works, so a run cancelled or failed meanwhile does not keep a
 * worker slot reading its data: the run is read every `everyMs` (one indexed row), and the signal aborts once the
 * stage attempt is no longer the run's running one. A read that fails (the database restarting) is skipped; the
 * next one decides.
 */
export function watchRunEnd(res: PipelineResources, job: RunRef & { stage: StageName; attempt: number }, outer: AbortSignal | undefined, everyMs = res.runWatchMs ?? RUN_WATCH_INTERVAL_MS): RunWatch {
  const controller = new AbortController();
  let runEnded = false;
  let polling = false;
  const onOuter = () => controller.abort(outer?.reason);
  if (outer?.aborted) onOuter();
  else outer?.addEventListener('abort', onOuter, { once: true });
  const timer = setInterval(() => {
    if (polling || controller.signal.aborted) return;
    polling = true;
    readRun(res, job)
      .then((run) => {
        if (run && requireRunningWorkerStage(run.aggregate, job.stage, job.attempt)) return;
        runEnded = true;
        controller.abort(new RunEndedError(`run ${job.run_id} no longer runs ${job.stage}@${job.attempt}`));
      })
      .catch(() => undefined)
      .finally(() => {
        polling = false;
      });
  }, everyMs);
  timer.unref();
  return {
    signal: controller.signal,
    ended: () => runEnded,
    stop: () => {
      clearInterval(timer);
      outer?.removeEventListener('abort', onOuter);
    },
  };
}
