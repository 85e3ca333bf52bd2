import type pg from 'pg';

/** How many sessions of this database wait on a lock right now. */
export async function lockWaiters(pool: pg.Pool): Promise<number> {
  const { rows } = await pool.query<{ n: number }>(`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`);
  return rows[0]!.n;
}

/** Waits until the count of sessions waiting on a lock is at least one and has not moved for 200 ms. */
export async function heldSteady(pool: pg.Pool): Promise<number> {
  let last = -1;
  let since = Date.now();
  for (let i = 0; i < 400; i++) {
    const n = await lockWaiters(pool);
    if (n !== last) [last, since] = [n, Date.now()];
    else if (n > 0 && Date.now() - since >= 200) return n;
    await new Promise((r) => setTimeout(r, 20));
  }
  throw new Error('no query waited on the lock');
}
