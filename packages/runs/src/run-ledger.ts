import type pg from 'pg';
import { createLedger, type AnyEvents, type InlineProjection, type Ledger } from '@ito/ledger';
import { bookingsProjection } from './projections/bookings-projection.js';
import { runsProjection } from './projections/runs-projection.js';
import { sloProjection } from './projections/slo-projection.js';
import { tasksProjection } from './projections/tasks-projection.js';
import { runStreamRule } from './run-stream-rule.js';

/** The projections every writer of the ledger must keep inline (the API, the workers, the monitor, the operator tool). */
// Order matters: the tasks projection reads the run's row that the runs projection wrote in the same batch.
export const INLINE_PROJECTIONS: InlineProjection<AnyEvents>[] = [runsProjection, tasksProjection, bookingsProjection, sloProjection];

/**
 * The ledger every writer of runs uses: the inline projections kept in each append's transaction, and the run
 * streams' rule applied to every append to a run stream.
 */
export function createApiLedger(pool: pg.Pool): Ledger {
  return createLedger({ pool, inlineProjections: INLINE_PROJECTIONS, streamRules: [runStreamRule()] });
}
