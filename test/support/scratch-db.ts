import { randomBytes } from 'node:crypto';
import pg from 'pg';

export interface ScratchDatabase {
  url: string;
  name: string;
  drop: () => Promise<void>;
}

function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

/**
 * Creates a database on the server behind `adminUrl` (optionally as a clone of `template`) and returns a drop
 * function. Dropping waits for the database's connections to go: pools close their sockets a moment after
 * end() resolves, and killing those backends (DROP … WITH (FORCE)) makes their clients raise an unhandled
 * error in the process that owned them.
 */
export async function createScratchDatabase(adminUrl: string, prefix: string, template?: string): Promise<ScratchDatabase> {
  const name = `${prefix}_${randomBytes(4).toString('hex')}`;
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query(template ? `create database ${name} template ${template}` : `create database ${name}`);
  } finally {
    await admin.end();
  }
  return {
    url: withDatabase(adminUrl, name),
    name,
    drop: async () => {
      const c = new pg.Client({ connectionString: adminUrl });
      await c.connect();
      try {
        for (let attempt = 0; ; attempt++) {
          try {
            await c.query(`drop database if exists ${name}${attempt >= 100 ? ' with (force)' : ''}`);
            return;
          } catch (err) {
            if ((err as { code?: string }).code !== '55006') throw err;
            await new Promise((r) => setTimeout(r, 20));
          }
        }
      } finally {
        await c.end();
      }
    },
  };
}
