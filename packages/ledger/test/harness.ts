import pg from 'pg';

export { usePool } from '../../../test/support/db.js';

export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Waits until every event now in the table is below the cluster's xmin, i.e. readable in safe order.
 * xmin is cluster wide, so a transaction another test file holds open for a moment delays this; waiting here
 * makes the batches that follow deterministic (an xid below xmin stays below it).
 */
export async function settled(pool: pg.Pool, timeoutMs = 15_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { rows } = await pool.query<{ ok: boolean }>(
      'select coalesce(max(transaction_id) < pg_snapshot_xmin(pg_current_snapshot()), true) as ok from events',
    );
    if (rows[0]?.ok) return;
    if (Date.now() > deadline) throw new Error('events did not become readable in time');
    await sleep(10);
  }
}
