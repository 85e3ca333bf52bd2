import type pg from 'pg';
import { buildApp } from '@ito/api';
import type { ItoConfig, Logger } from '@ito/config';
import type { QueueKit } from '@ito/queue';
import type { StorageRegistry } from '@ito/storage';
import { checkpointStorageCheckOf } from '../storage-settings.js';
import { WORKER_REGISTRATIONS } from '../workers/registry.js';

export type ApiServer = Awaited<ReturnType<typeof buildApp>>;

/** The URL a person types to reach the API: the host as configured (IPv6 in brackets) and the port bound. */
export function apiUrlOf(host: string, port: number): string {
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

/** Serves the HTTP API; /readyz is green only when the database and the queue backend both answer. */
export async function startApiRole(args: { cfg: ItoConfig; logger: Logger; pool: pg.Pool; kit: QueueKit; storage: StorageRegistry }): Promise<{ app: ApiServer; url: string }> {
  const { cfg, logger, pool, kit, storage } = args;
  // The pool lets the API serve its ledger routes; without it only the health routes are served.
  const deps: Parameters<typeof buildApp>[0] & { pool: pg.Pool } = {
    logger: logger.child({ role: 'api' }),
    pool,
    agent: {
      heartbeatIntervalS: cfg.ITO_HEARTBEAT_INTERVAL_S,
      heartbeatMisses: cfg.ITO_HEARTBEAT_MISSES,
      hangFactor: cfg.ITO_HANG_STEP_FACTOR,
      firstStepMaxS: cfg.ITO_FIRST_STEP_MAX_S,
    },
    readiness: [
      {
        name: 'database',
        check: async () => {
          await pool.query('select 1');
        },
      },
      { name: 'queue', check: () => kit.ping() },
    ],
    // Queue depths and job durations on /metrics, for the queues and job names of the workers' catalogs.
    queues: { kit, catalogs: WORKER_REGISTRATIONS.map((r) => r.catalog) },
    // A run's checkpoint storage is proven usable before an approver is asked, never discovered mid-run.
    checkpointStorage: checkpointStorageCheckOf(cfg, storage),
  };
  const app = await buildApp(deps);
  await app.listen({ host: cfg.ITO_HOST, port: cfg.ITO_PORT });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : cfg.ITO_PORT;
  logger.info({ host: cfg.ITO_HOST, port }, 'API listening');
  return { app, url: apiUrlOf(cfg.ITO_HOST, port) };
}
