import type { ItoConfig, Logger } from '@ito/config';
import { migrateDatabase } from '@ito/ledger';
import { openLedgerDatabase } from './database.js';

/** `ito-server migrate`: applies pending migrations to ITO_DATABASE_URL or the embedded database. */
export async function runMigrate(cfg: ItoConfig, logger: Logger): Promise<void> {
  const db = await openLedgerDatabase(cfg, logger);
  try {
    await migrateDatabase(db.url);
    logger.info({ database: db.source }, 'migrations applied');
  } finally {
    await db.release();
  }
}
