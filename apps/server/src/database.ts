import pg from 'pg';
import type { ItoConfig, Logger } from '@ito/config';
import { embeddedDataDir, readEmbeddedConnection, startEmbeddedPostgres } from '@ito/embedded';

/** The ledger database in the embedded cluster. */
export const EMBEDDED_DATABASE = 'ito';

export interface LedgerDatabase {
  /** Carries credentials: never log it. */
  url: string;
  source: 'external' | 'embedded' | 'embedded-shared';
  /** Releases what this process started (the embedded server when it owns one). */
  release(): Promise<void>;
}

/**
 * ITO_DATABASE_URL when set; else the embedded server already run by another ito-server under the same
 * ITO_HOME (so split roles share one cluster); else an embedded server this process starts and will stop.
 */
export async function openLedgerDatabase(cfg: ItoConfig, logger: Logger): Promise<LedgerDatabase> {
  if (cfg.ITO_DATABASE_URL) return { url: cfg.ITO_DATABASE_URL, source: 'external', release: async () => undefined };
  const shared = await readEmbeddedConnection(cfg.ITO_HOME);
  if (shared) {
    logger.info({ itoHome: cfg.ITO_HOME }, 'using the embedded PostgreSQL another ito-server runs under this ITO_HOME');
    return { url: shared, source: 'embedded-shared', release: async () => undefined };
  }
  const embedded = await startEmbeddedPostgres({
    dataDir: embeddedDataDir(cfg.ITO_HOME),
    database: EMBEDDED_DATABASE,
    logger: logger.child({ component: 'embedded-postgres' }),
  });
  return { url: embedded.databaseUrl, source: 'embedded', release: () => embedded.stop() };
}

const openConnections = new WeakMap<pg.Pool, Set<pg.PoolClient>>();

export function createPool(url: string, logger: Logger, max = 30): pg.Pool {
  // Sized for the roles sharing it: agent reports and stage jobs are short transactions of several round trips,
  // so throughput under load is bound by how many can be in flight, not by CPU.
  const pool = new pg.Pool({ connectionString: url, max, connectionTimeoutMillis: 5_000 });
  // An idle client losing its connection is recoverable; without a listener it would crash the process.
  pool.on('error', (err) => logger.warn({ err: { message: err.message } }, 'idle database connection failed'));
  const open = new Set<pg.PoolClient>();
  pool.on('connect', (client) => {
    open.add(client);
    // A checked-out client whose connection ends between two queries (a database restart, a transaction held
    // open over an await) emits 'error' on itself, which the pool does not listen to: without this the process
    // crashes. Its next query fails with the cause, and the pool drops it when it is released.
    client.on('error', (err) => logger.warn({ err: { message: err.message } }, 'database connection in use failed'));
  });
  pool.on('remove', (client) => open.delete(client));
  openConnections.set(pool, open);
  return pool;
}

/**
 * Ends the pool and waits until each of its connections has closed: `pool.end()` resolves as soon as it has
 * asked them to, and a database stopped right then would terminate them under the client ("terminating
 * connection due to administrator command"). Bounded, so a stuck socket cannot hold the shutdown.
 */
export async function closePool(pool: pg.Pool, timeoutMs = 5_000): Promise<void> {
  const open = openConnections.get(pool) ?? new Set();
  const closed = new Promise<void>((resolve) => {
    const check = () => {
      if (open.size === 0) resolve();
    };
    pool.on('remove', check);
    check();
    setTimeout(resolve, timeoutMs).unref();
  });
  await pool.end();
  await closed;
}
