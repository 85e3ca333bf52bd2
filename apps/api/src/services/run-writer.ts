import { ItoError } from '@ito/contracts';
import { runStreamId, type RunEvent } from '@ito/domain';
import type { EventMetadata, LedgerTx } from '@ito/ledger';
import { getRun, type RunRow } from '../db/queries.js';
import { rememberLockedRun } from '../projections/known-runs.js';

/**
 * Every change to a run takes the same steps: lock the run's row, read its state, decide, append with the
 * version that was read. Two writers of one run (two agents, an agent and a worker) queue on the row lock, so
 * the second decides on the first's result instead of failing on the version.
 */
export async function changeRun<T>(
  tx: LedgerTx,
  tenantId: string,
  runId: string,
  decide: (run: RunRow) => { events: RunEvent[]; result: T },
  metadata: EventMetadata,
): Promise<{ run: RunRow; result: T; appended: RunEvent[] }> {
  const run = await getRun(tx.client, tenantId, runId, { forUpdate: true });
  if (!run) throw new ItoError('not_found', `run ${runId} not found`);
  const { events, result } = decide(run);
  if (events.length > 0) await appendRunEvents(tx, run, events, metadata);
  return { run, result, appended: events };
}

export async function appendRunEvents(tx: LedgerTx, run: RunRow, events: RunEvent[], metadata: EventMetadata): Promise<void> {
  // The row is locked and was read at this version: the runs projection folds onto it without reading it again.
  rememberLockedRun(tx.client, run.run_id, run.version, run.aggregate);
  await tx.append(
    runStreamId(run.run_id),
    events.map((e) => ({ type: e.type, data: e.data as unknown as Record<string, unknown>, metadata })),
    { tenantId: run.tenant_id, expectedVersion: run.version },
  );
}
