import { RUN_EVENT_TYPES, decideSloBreaches, initialRunState, normalizeRunAggregate, runStreamId, type RunAggregate, type RunEventMap, type SloTargets } from '@ito/domain';
import type { ExpectedVersion, StreamRule } from '@ito/ledger';
import type pg from 'pg';
import { lockedRunAt, rememberLockedRun } from './projections/known-runs.js';
import { processSloTargets } from './slo-targets.js';

const RUN_STREAM_PREFIX = runStreamId('');

/**
 * The run streams' rule, which the run ledger applies to every append to a `run-…` stream, whoever makes it (the
 * run writer, the train gate, a test standing in for an agent): a run stream takes only run events, and an
 * incident these events open or close that missed an SLO gets its `SloBreached` in the same append. So no writer
 * of runs can record a failure or a resume without the breach, even one that calls `tx.append` itself.
 */
export function runStreamRule(targets: () => SloTargets = processSloTargets): StreamRule<RunEventMap> {
  return {
    name: 'run',
    types: RUN_EVENT_TYPES,
    owns: (streamId) => streamId.startsWith(RUN_STREAM_PREFIX),
    async complete(client, streamId, events, opts) {
      const before = await runBefore(client, streamId.slice(RUN_STREAM_PREFIX.length), opts.expectedVersion);
      const metadata = events.at(-1)?.metadata;
      const breaches = decideSloBreaches(before, events, targets());
      return [...events, ...breaches.map((b) => (metadata ? { ...b, metadata } : b))];
    },
  };
}

/**
 * The run as it stands before the append: nothing for a new stream; the aggregate the writer locked and read at
 * the expected version; otherwise the row, locked here (the runs projection then folds onto what was read).
 */
async function runBefore(client: pg.PoolClient, runId: string, expected: ExpectedVersion): Promise<RunAggregate> {
  if (expected === 'no_stream' || expected === 0) return initialRunState();
  if (typeof expected === 'number') {
    const locked = lockedRunAt(client, runId, expected);
    if (locked) return locked;
  }
  const { rows } = await client.query<{ aggregate: RunAggregate; version: number }>({
    name: 'ito_run_rule_lock',
    text: 'select aggregate, version from runs where run_id = $1 for update',
    values: [runId],
  });
  const row = rows[0];
  if (!row) return initialRunState();
  const aggregate = normalizeRunAggregate(row.aggregate);
  rememberLockedRun(client, runId, row.version, aggregate);
  return aggregate;
}
