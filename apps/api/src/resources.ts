import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';
import type { WindowCounter } from './http/window-counter.js';

/**
 * The one explicit resources object every service shares: database, ledger, logger and clock.
 * The clock is injectable so expiry rules are testable without sleeping. `authFailures` counts failed
 * authentications per client address, shared by every route.
 */
export interface Resources {
  pool: pg.Pool;
  ledger: Ledger;
  logger: Logger;
  now: () => Date;
  authFailures: WindowCounter;
}
