import type pg from 'pg';
import type { RunAggregate } from '@ito/domain';

/**
 * The runs a transaction has locked and read (`changeRun` reads the row FOR UPDATE before deciding), so the runs
 * projection in the same transaction need not read them again. Keyed by the connection, valid only for the
 * version that was read: the projection checks it, and reads the row itself when it does not match.
 */
const known = new WeakMap<pg.PoolClient, Map<string, { version: number; aggregate: RunAggregate }>>();

export function rememberLockedRun(client: pg.PoolClient, runId: string, version: number, aggregate: RunAggregate): void {
  let runs = known.get(client);
  if (!runs) known.set(client, (runs = new Map()));
  runs.set(runId, { version, aggregate });
}

/** The aggregate as of `version`, if this connection locked and read it at that version; still remembered after. */
export function lockedRunAt(client: pg.PoolClient, runId: string, version: number): RunAggregate | null {
  const hit = known.get(client)?.get(runId);
  return hit && hit.version === version ? hit.aggregate : null;
}

/** The aggregate as of `version`, if this connection locked and read it at that version; forgotten once taken. */
export function takeLockedRun(client: pg.PoolClient, runId: string, version: number): RunAggregate | null {
  const runs = known.get(client);
  const hit = runs?.get(runId);
  runs?.delete(runId);
  return hit && hit.version === version ? hit.aggregate : null;
}
