import { ItoError } from '@ito/contracts';
import { runStreamId, type RunEvent, type RunEventMap } from '@ito/domain';
import type { AppendResult, EventMetadata, LedgerTx, StreamAppend } from '@ito/ledger';
import { getRun, type RunRow } from './queries.js';
import { rememberLockedRun } from './projections/known-runs.js';

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
 * Appends a decision's events to a run whose row this transaction locked and read, at the version read. The run
 * ledger's stream rule (`runStreamRule`) adds the `SloBreached` of an incident these events open or close late,
 * in the same append; what was written, breaches included, is returned.
 */
export async function appendRunEvents(tx: LedgerTx, run: RunRow, events: RunEvent[], metadata: EventMetadata): Promise<RunEvent[]> {
  // The row is locked and was read at this version: the rule and the runs projection use it without reading it again.
  rememberLockedRun(tx.client, run.run_id, run.version, run.aggregate);
  const written = await tx.append<RunEventMap>(
    runStreamId(run.run_id),
    events.map((e) => ({ ...e, metadata })),
    { tenantId: run.tenant_id, expectedVersion: run.version },
  );
  return written.events;
}

/**
 * Starts a run's stream (train's ReserveRun and what comes with it): the same rule applies to a new run as to
 * every later change, so a run is created only through the run ledger's door as well.
 */
export function createRun(tx: LedgerTx, tenantId: string, runId: string, events: RunEvent[], metadata: EventMetadata): Promise<AppendResult<RunEventMap>> {
  const start = newRunAppend(tenantId, runId, events, metadata);
  return tx.append<RunEventMap>(start.streamId, start.events, start.opts);
}

/**
 * The same start of a run's stream as one part of `tx.appendMany` (train's, beside its consumed confirmation, in
 * one statement). The ledger applies the run streams' rule to it there as well: it is still the run ledger's door.
 */
export function newRunAppend(tenantId: string, runId: string, events: RunEvent[], metadata: EventMetadata): StreamAppend<RunEventMap> {
  return { streamId: runStreamId(runId), events: events.map((e) => ({ ...e, metadata })), opts: { tenantId, expectedVersion: 'no_stream' } };
}
