import type pg from 'pg';
import { RUN_EVENT_TYPES, evolveRun, initialRunState, normalizeRunAggregate, type RunAggregate, type RunEventMap } from '@ito/domain';
import type { InlineProjection, StoredEventOf } from '@ito/ledger';
import { takeLockedRun } from './known-runs.js';

/**
 * The channel the orchestrator's relay listens on: a transaction that changed runs NOTIFYs their ids, so the relay
 * looks at them as soon as the transaction commits instead of on its next read of the outbox.
 */
export const RUN_EVENTS_CHANNEL = 'ito_run_events';
/** Run ids per notification: a payload must stay under PostgreSQL's 8,000 bytes. */
const NOTIFY_RUNS = 100;

type RunStoredEvent = StoredEventOf<RunEventMap>;

const INSERT_RUN = `insert into runs (run_id, tenant_id, booking_id, state, stage, manifest_digest, idempotency_key, confirmation_ref,
    estimated_cost_usd, incremental_cost_usd, plan, aggregate, version, created_at, updated_at)
  values ($1,$2,$3,$4,$5,$6,$7,$8,$9,$10,$11,$12,$13,$14,$15)
  on conflict (run_id) do nothing`;

/**
 * The runs table, kept in the append transaction so a command reads its own write. The row holds the folded
 * aggregate; `state` and `stage` are copied out of it for queries. Rebuildable from position 0.
 */
export const runsProjection: InlineProjection<RunEventMap> & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'runs',
  handles: [...RUN_EVENT_TYPES],
  async apply(client, events) {
    const byRun = new Map<string, RunStoredEvent[]>();
    for (const e of events) {
      const runId = e.data.run_id;
      if (runId) byRun.set(runId, [...(byRun.get(runId) ?? []), e]);
    }
    // One run in the batch (an append's, a train's): a new run's row carries its notification in the same
    // statement. Many (a rebuild, an audit replay): the rows stay plain INSERTs, which a replay writes in bulk.
    const alone = byRun.size === 1;
    const notified = new Set<string>();
    for (const [runId, runEvents] of byRun) if (await applyRunEvents(client, runId, runEvents, alone)) notified.add(runId);
    // The runs the orchestrator may have something to do for (progress alone never gives it any), named in the
    // notification so it can look at just those; PostgreSQL delivers it at commit, and drops it on rollback.
    const changed = [...byRun]
      .filter(([runId, runEvents]) => !notified.has(runId) && runEvents.some((e) => e.type !== 'ProgressRecorded'))
      .map(([runId]) => runId);
    for (let i = 0; i < changed.length; i += NOTIFY_RUNS) {
      await client.query({ name: 'ito_runs_notify', text: 'select pg_notify($1, $2)', values: [RUN_EVENTS_CHANNEL, changed.slice(i, i + NOTIFY_RUNS).join(',')] });
    }
  },
  async reset(client) {
    await client.query('delete from runs');
  },
};

/**
 * Folds each run's events of this batch in memory and writes the row once: a ReserveRun's two events cost one
 * INSERT, not an INSERT and an UPDATE. With `notifyNew`, a new run's INSERT carries its notification in the same
 * statement (one round trip, not two); true when it did.
 */
async function applyRunEvents(client: pg.PoolClient, runId: string, events: RunStoredEvent[], notifyNew: boolean): Promise<boolean> {
  const first = events[0]!;
  let aggregate: RunAggregate;
  let isNew = false;
  let reserved: RunEventMap['RunReserved'] | null = null;
  if (first.type === 'RunReserved') {
    aggregate = initialRunState();
    isNew = true;
    reserved = first.data;
  } else {
    const locked = takeLockedRun(client, runId, first.streamVersion - 1);
    if (locked) aggregate = locked;
    else {
      const { rows } = await client.query<{ aggregate: RunAggregate }>('select aggregate from runs where run_id = $1 for update', [runId]);
      if (!rows[0]) return false;
      aggregate = normalizeRunAggregate(rows[0].aggregate);
    }
  }
  // Replaying events the row already holds (a rebuild racing an append) changes nothing.
  const fresh = events.filter((e) => e.streamVersion > aggregate.version);
  if (fresh.length === 0) return false;
  for (const e of fresh) aggregate = evolveRun(aggregate, e);
  const last = fresh.at(-1)!;
  if (isNew && reserved) {
    const values = [runId, first.tenantId, reserved.booking_id, aggregate.status, aggregate.stage, reserved.manifest_digest, reserved.idempotency_key,
      reserved.confirmation_ref, reserved.estimated_cost_usd, reserved.incremental_cost_usd, JSON.stringify(reserved.plan),
      JSON.stringify(aggregate), last.streamVersion, first.recordedAt, last.recordedAt];
    if (!notifyNew) {
      await client.query({ name: 'ito_runs_projection_insert', text: INSERT_RUN, values });
      return false;
    }
    // The data-modifying CTE runs to completion whether or not the outer select reads it.
    await client.query({
      name: 'ito_runs_projection_insert_notify',
      text: `with inserted as (${INSERT_RUN}) select pg_notify($16, $1)`,
      values: [...values, RUN_EVENTS_CHANNEL],
    });
    return true;
  }
  await client.query('update runs set state = $2, stage = $3, aggregate = $4, version = $5, updated_at = $6 where run_id = $1', [
    runId,
    aggregate.status,
    aggregate.stage,
    JSON.stringify(aggregate),
    last.streamVersion,
    last.recordedAt,
  ]);
  return false;
}
