import type pg from 'pg';
import { RUN_EVENT_TYPES, evolveRun, initialRunState, type RunAggregate, type RunEvent } from '@ito/domain';
import type { InlineProjection, StoredEvent } from '@ito/ledger';

/**
 * The runs table, kept in the append transaction so a command reads its own write. The row holds the folded
 * aggregate; `state` and `stage` are copied out of it for queries. Rebuildable from position 0.
 */
export const runsProjection: InlineProjection & { reset(client: pg.PoolClient): Promise<void> } = {
  name: 'runs',
  handles: [...RUN_EVENT_TYPES],
  async apply(client, events) {
    for (const event of events) await applyOne(client, event);
  },
  async reset(client) {
    await client.query('delete from runs');
  },
};

async function applyOne(client: pg.PoolClient, event: StoredEvent): Promise<void> {
  const runEvent = { type: event.type, data: event.data } as RunEvent;
  if (runEvent.type === 'RunReserved') {
    const d = runEvent.data;
    const aggregate = evolveRun(initialRunState(), runEvent);
    await client.query(
      `insert into runs (run_id, tenant_id, booking_id, state, stage, manifest_digest, idempotency_key, confirmation_ref,
         estimated_cost_usd, incremental_cost_usd, plan, aggregate, version, created_at, updated_at)
       values ($1,$2,$3,$4,null,$5,$6,$7,$8,$9,$10,$11,$12,$13,$13)
       on conflict (run_id) do nothing`,
      [d.run_id, event.tenantId, d.booking_id, aggregate.status, d.manifest_digest, d.idempotency_key, d.confirmation_ref,
        d.estimated_cost_usd, d.incremental_cost_usd, JSON.stringify(d.plan), JSON.stringify(aggregate), event.streamVersion, event.recordedAt],
    );
    return;
  }
  const runId = (event.data as { run_id?: string }).run_id;
  if (!runId) return;
  const { rows } = await client.query<{ aggregate: RunAggregate; version: number }>('select aggregate, version from runs where run_id = $1 for update', [runId]);
  const row = rows[0];
  // Replaying an event the row already holds (a rebuild racing an append) changes nothing.
  if (!row || row.version >= event.streamVersion) return;
  const aggregate = evolveRun(row.aggregate, runEvent);
  await client.query('update runs set state = $2, stage = $3, aggregate = $4, version = $5, updated_at = $6 where run_id = $1', [
    runId,
    aggregate.status,
    aggregate.stage,
    JSON.stringify(aggregate),
    event.streamVersion,
    event.recordedAt,
  ]);
}
