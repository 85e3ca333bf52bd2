import type { RunEvent, RunAggregate } from '@ito/domain';
import { changeRun, getRun, type RunRow } from '@ito/runs';
import { PermanentJobError } from '@ito/queue';
import type { PipelineResources } from '../resources.js';

export interface RunRef {
  tenant_id: string;
  run_id: string;
}

/** The run as it stands, without a lock: for deciding what I/O to do before taking one. */
export async function readRun(res: PipelineResources, ref: RunRef): Promise<RunRow | null> {
  return getRun(res.pool, ref.tenant_id, ref.run_id);
}

/**
 * Appends what `decide` answers on the freshly locked state, in one transaction; `decide` returns no events when
 * the work is no longer needed (someone did it, the run moved on). Answers whether anything was appended.
 */
export async function changeRunIfNeeded(res: PipelineResources, ref: RunRef, actor: string, decide: (state: RunAggregate) => RunEvent[]): Promise<boolean> {
  return res.ledger.transaction(async (tx) => {
    const { appended } = await changeRun(tx, ref.tenant_id, ref.run_id, (run) => ({ events: decide(run.aggregate), result: null }), { actor });
    return appended.length > 0;
  });
}

/** A job's run must be in this ledger; one that is not (a queue shared by mistake) can never be carried out. */
export function requireRow(run: RunRow | null, ref: RunRef): RunRow {
  if (!run) throw new PermanentJobError(`run ${ref.run_id} not found`);
  return run;
}
