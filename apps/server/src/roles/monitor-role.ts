import type pg from 'pg';
import type { ItoConfig, Logger } from '@ito/config';
import { createApiLedger } from '@ito/runs';
import { startMonitor, type RunningMonitor } from '../monitor/monitor.js';

/**
 * The SLO monitor role: declares silent nodes lost and stuck tasks hung, and records nodes that come back. Any
 * number may run; one holds the lease and acts, the others stand by and take over within one interval.
 */
export function startMonitorRole(cfg: ItoConfig, logger: Logger, pool: pg.Pool): RunningMonitor {
  return startMonitor({
    pool,
    ledger: createApiLedger(pool),
    logger,
    settings: { interval_s: cfg.ITO_HEARTBEAT_INTERVAL_S, misses: cfg.ITO_HEARTBEAT_MISSES, hang_factor: cfg.ITO_HANG_STEP_FACTOR, first_step_max_s: cfg.ITO_FIRST_STEP_MAX_S },
  });
}
