import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { freshDatabase } from '../../../test/support/db.js';

/** A pool on a fresh migrated database for one test file, closed and dropped after it. */
export function usePool(max = 20): { pool: () => pg.Pool; url: () => string } {
  let db: Awaited<ReturnType<typeof freshDatabase>> | undefined;
  let pool: pg.Pool | undefined;
  beforeAll(async () => {
    db = await freshDatabase();
    pool = new pg.Pool({ connectionString: db.url, max });
  });
  afterAll(async () => {
    await pool?.end();
    if (db) {
      await waitForBackendsToExit(db.name);
      await db.drop();
    }
  });
  return {
    pool: () => {
      if (!pool) throw new Error('pool used before beforeAll');
      return pool;
    },
    url: () => {
      if (!db) throw new Error('url used before beforeAll');
      return db.url;
    },
  };
}

/**
 * pool.end() resolves once Terminate is sent, while the server backends may still be exiting; a forced
 * DROP DATABASE in that window would signal them and their FATAL reply would surface as an uncaught error.
 */
async function waitForBackendsToExit(database: string): Promise<void> {
  const admin = new pg.Client({ connectionString: inject('pgAdminUrl') });
  await admin.connect();
  try {
    for (let i = 0; i < 100; i++) {
      const { rows } = await admin.query<{ n: number }>('select count(*)::int as n from pg_stat_activity where datname = $1', [database]);
      if (rows[0]?.n === 0) return;
      await sleep(20);
    }
  } finally {
    await admin.end();
  }
}

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
