import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { inject } from 'vitest';

/**
 * A fresh database for one test file: a clone of the migrated template, so each file starts from an empty,
 * fully migrated schema in tens of milliseconds. Returns its URL and a drop function.
 */
export async function freshDatabase(): Promise<{ url: string; name: string; drop: () => Promise<void> }> {
  const adminUrl = inject('pgAdminUrl');
  const template = inject('templateDb');
  const name = `${template}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(`create database ${name} template ${template}`);
  } finally {
    await admin.end();
  }
  const u = new URL(adminUrl);
  u.pathname = `/${name}`;
  return {
    url: u.toString(),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        // Pools close their sockets a moment after end() resolves; wait for them rather than killing
        // backends whose clients would then report the termination as an unhandled error.
        for (let attempt = 0; ; attempt++) {
          try {
            await c.query(`drop database if exists ${name}`);
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== '55006' || attempt >= 50) throw err;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      } finally {
        await c.end();
      }
    },
  };
}

/** The Redis URL for Redis-backend tests, or null with the reason they are skipped. */
export function redisForTests(): { url: string | null; skipReason: string | null } {
  return { url: inject('redisUrl'), skipReason: inject('redisSkipReason') };
}
