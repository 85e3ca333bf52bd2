import type pg from 'pg';
import type { Logger } from '@ito/config';
import type { Ledger } from '@ito/ledger';

/**
 * The one explicit resources object every service shares: database, ledger, logger and clock.
 * The clock is injectable so expiry rules are testable without sleeping.
 */
export interface Resources {
  pool: pg.Pool;
  ledger: Ledger;
  logger: Logger;
  now: () => Date;
}
