import pg from 'pg';
import { afterAll, beforeAll, inject } from 'vitest';
import { createScratchDatabase, type ScratchDatabase } from './scratch-db.js';

/**
 * A fresh database for one test file: a clone of the migrated template, so each file starts from an empty,
 * fully migrated schema in tens of milliseconds.
 */
export async function freshDatabase(): Promise<ScratchDatabase> {
  const template = inject('templateDb');
  return createScratchDatabase(inject('pgAdminUrl'), template, template);
}

/** The Redis URL for Redis-backend tests, or null with the reason they are skipped. */
export function redisForTests(): { url: string | null; skipReason: string | null } {
  return { url: inject('redisUrl'), skipReason: inject('redisSkipReason') };
}

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
      await new Promise((r) => setTimeout(r, 20));
    }
  } finally {
    await admin.end();
  }
}
