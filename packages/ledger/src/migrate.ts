import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { drizzle } from 'drizzle-orm/node-postgres';
import { migrate } from 'drizzle-orm/node-postgres/migrator';
import pg from 'pg';

/** infra/migrations at the repository root; this file sits at packages/ledger/{src,dist}/, so both resolve alike. */
export function migrationsFolder(): string {
  return resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'infra', 'migrations');
}

/** Applies every pending migration in infra/migrations (drizzle's journal; each applied once, in order). */
export async function migrateDatabase(databaseUrl: string): Promise<void> {
  const pool = new pg.Pool({ connectionString: databaseUrl, max: 1 });
  // An idle connection the server ends surfaces through the next query; unhandled, it would crash the process.
  pool.on('error', () => undefined);
  try {
    await migrate(drizzle(pool), { migrationsFolder: migrationsFolder() });
  } finally {
    await pool.end();
  }
}
