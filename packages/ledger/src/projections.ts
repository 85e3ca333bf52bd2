import type pg from 'pg';
import { planProjectionWrites } from './batch-transaction.js';
import { readSafe } from './read.js';
import type { Upcasters } from './rows.js';
import type { AnyEvents, AsyncProjection, RebuildableProjection, StoredEvent } from './types.js';

/**
 * One batch of an async projection, in one transaction: read the checkpoint, read the next events in safe
 * order, move the checkpoint with a compare-and-set UPDATE, apply. The UPDATE comes before the apply on
 * purpose: it takes the checkpoint's row lock, so a concurrent runner that read the same checkpoint blocks on
 * its own UPDATE, finds the position changed once we commit, and applies nothing. No batch is applied twice
 * and no apply work is thrown away. If apply throws, the checkpoint move rolls back with it.
 */
export async function runProjectionBatch(pool: pg.Pool, upcasters: Upcasters, p: AsyncProjection<AnyEvents>, batchSize = 500): Promise<number> {
  await pool.query('insert into projection_checkpoints (name) values ($1) on conflict (name) do nothing', [p.name]);
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows } = await client.query<{ position: string }>('select position::text as position from projection_checkpoints where name = $1', [p.name]);
    const from = Number(rows[0]?.position ?? 0);
    const batch = await readBatch(client, upcasters, from, p, batchSize);
    const last = batch[batch.length - 1];
    if (!last) {
      await client.query('rollback');
      return 0;
    }
    const cas = await client.query('update projection_checkpoints set position = $2, updated_at = now() where name = $1 and position = $3', [
      p.name,
      last.position,
      from,
    ]);
    if (cas.rowCount !== 1) {
      await client.query('rollback');
      return 0;
    }
    await planProjectionWrites(client, p);
    await p.apply(client, batch);
    await client.query('commit');
    return batch.length;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/**
 * Reset and replay from position 0 in one transaction, so readers see the old projection or the new one,
 * never half of each. An async projection's checkpoint ends at the last replayed event, and runProjection
 * carries on from there.
 */
export async function rebuildProjection(pool: pg.Pool, upcasters: Upcasters, p: RebuildableProjection, batchSize = 1000): Promise<number> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    // Serialise with runners of the same projection for the duration of the rebuild.
    await client.query(
      `insert into projection_checkpoints (name, position) values ($1, 0)
       on conflict (name) do update set position = 0, updated_at = now()`,
      [p.name],
    );
    await p.reset(client);
    await planProjectionWrites(client, p);
    let applied = 0;
    let after = 0;
    for (;;) {
      const batch = await readBatch(client, upcasters, after, p, batchSize);
      const last = batch[batch.length - 1];
      if (!last) break;
      await p.apply(client, batch);
      applied += batch.length;
      after = last.position;
    }
    await client.query('update projection_checkpoints set position = $2, updated_at = now() where name = $1', [p.name, after]);
    await client.query('commit');
    return applied;
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

async function readBatch(client: pg.PoolClient, upcasters: Upcasters, after: number, p: { handles?: string[]; payloadsOnly?: boolean }, limit: number): Promise<StoredEvent[]> {
  const events = await readSafe(client, { after, limit, ...(p.handles ? { types: p.handles } : {}), payloadsOnly: p.payloadsOnly === true });
  return events.map((e) => upcasters.apply(e));
}
