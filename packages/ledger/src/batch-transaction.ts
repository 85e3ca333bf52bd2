import type pg from 'pg';
import type { AsyncProjection } from './types.js';

/**
 * For the rest of a batch's transaction, plans that reach rows by their indexes: no sequential scan, hash or merge
 * join. Set for a projection whose writes are all keyed (`keyedWrites`). Its tables fill from empty within one
 * catch-up and may not have been analysed since (autovacuum off, or not come round yet): without statistics the
 * planner took a keyed delete for a large share of a table and hash-joined a scan of all of it, once a batch, and
 * catch-up grew with the square of the history (the telemetry projection at 10M events: 2,006 scans read 1.09
 * billion rows; PostgreSQL's CPU per 1,000 events 20 ms against 7 at 1M). Plans only: the rows written are the same.
 */
const KEYED_PLANS = "select set_config('enable_seqscan', 'off', true), set_config('enable_hashjoin', 'off', true), set_config('enable_mergejoin', 'off', true)";

type Batched = Pick<AsyncProjection, 'name' | 'keyedWrites'>;

/** The projection's plan settings, when it has any, for the rest of the transaction open on `client`. */
export async function planProjectionWrites(client: pg.PoolClient, p: object): Promise<void> {
  if ('keyedWrites' in p && p.keyedWrites === true) await client.query(KEYED_PLANS);
}

/**
 * Opens a batch's transaction and moves the projection's checkpoint from `from` to `to` by compare-and-set, in one
 * round trip: during a catch-up the next batch is folded while this transaction runs, and each round trip of it
 * waits for the fold to let the event loop in. False when another runner moved the checkpoint: the transaction is
 * still open, with nothing applied, for the caller to roll back. The positions are the ledger's own integers and
 * the name goes in as a quoted literal, so the statements need no parameters (one simple query may hold several).
 */
export async function beginProjectionBatch(client: pg.PoolClient, p: Batched, from: number, to: number): Promise<boolean> {
  if (!Number.isSafeInteger(from) || !Number.isSafeInteger(to)) throw new RangeError('a checkpoint position is a safe integer');
  const results = (await client.query(
    `begin;${p.keyedWrites ? ` ${KEYED_PLANS};` : ''}
     update projection_checkpoints set position = ${to}, updated_at = now() where name = ${client.escapeLiteral(p.name)} and position = ${from}`,
  )) as unknown as pg.QueryResult[];
  return results[results.length - 1]!.rowCount === 1;
}
