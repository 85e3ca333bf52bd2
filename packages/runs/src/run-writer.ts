import { ItoError } from '@ito/contracts';
import { decideSloBreaches, runStreamId, type RunEvent, type SloTargets } from '@ito/domain';
import type { EventMetadata, LedgerTx } from '@ito/ledger';
import { getRun, type RunRow } from '../db/queries.js';
import { rememberLockedRun } from '../projections/known-runs.js';
import { processSloTargets } from './slo-targets.js';

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
  const appended = events.length > 0 ? await appendRunEvents(tx, run, events, metadata) : [];
  return { run, result, appended };
}

/**
 * Appends a decision's events to a run whose row this transaction locked and read. An incident these events open
 * or close that missed an SLO gets its `SloBreached` here, in the same transaction: every writer of runs (API,
 * stage workers, monitor) appends through this function, so none can record a failure or a resume without it.
 */
export async function appendRunEvents(tx: LedgerTx, run: RunRow, events: RunEvent[], metadata: EventMetadata, slo: SloTargets = processSloTargets()): Promise<RunEvent[]> {
  // The row is locked and was read at this version: the runs projection folds onto it without reading it again.
  rememberLockedRun(tx.client, run.run_id, run.version, run.aggregate);
  const all = [...events, ...decideSloBreaches(run.aggregate, events, slo)];
  await tx.append(
    runStreamId(run.run_id),
    all.map((e) => ({ type: e.type, data: e.data as unknown as Record<string, unknown>, metadata })),
    { tenantId: run.tenant_id, expectedVersion: run.version },
  );
  return all;
}
