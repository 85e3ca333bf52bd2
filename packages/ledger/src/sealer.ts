import type pg from 'pg';
import { linkHash } from './hashing.js';
import { sealTenantLinks } from './tenant-sealer.js';

/**
 * The sealer extends the hash chain after commit, so appends never queue behind a global lock: they commit
 * concurrently (PostgreSQL groups their WAL flushes) and carry only their own content hash. One sealer at a
 * time (a transaction-scoped advisory lock; a second caller returns 0 at once) walks committed events in safe
 * order below xmin and inserts their links in one statement per batch. Events are never updated; the chain is
 * its own insert-only table.
 */

/** Two-int advisory key space, so it cannot collide with the one-bigint keys idempotency uses. */
const SEALER_LOCK = [0x49_54_4f, 1] as const;

function nextBatchSql(fromHead: boolean): string {
  return `
select e.position::text as position, e.transaction_id::text as transaction_id, e.stream_version, e.content_hash
from events e
where e.transaction_id < pg_snapshot_xmin(pg_current_snapshot())
  ${fromHead ? 'and (e.transaction_id, e.position) > ($2::xid8, $3::bigint)' : ''}
order by e.transaction_id, e.position
limit $1`;
}
// Two statements, not one with "$head is null or …": a generic plan could not turn that OR into an index
// range, and every pass would rescan the sealed prefix of the log.
const NEXT_BATCH_FROM_START = nextBatchSql(false);
const NEXT_BATCH_AFTER_HEAD = nextBatchSql(true);

const INSERT_LINKS_SQL = `
insert into event_chain (seq, position, transaction_id, prev_hash, hash)
select * from unnest($1::bigint[], $2::bigint[], $3::xid8[], $4::text[], $5::text[])`;

export async function sealPending(pool: pg.Pool, batchSize = 5000): Promise<number> {
  let total = 0;
  for (;;) {
    const sealed = await sealOneBatch(pool, batchSize);
    if (sealed === null) return total;
    total += sealed.global;
    if (sealed.global < batchSize && sealed.tenant < batchSize) return total;
  }
}

/** null when another sealer holds the lock; else the global links and the tenant links it wrote. */
async function sealOneBatch(pool: pg.Pool, batchSize: number): Promise<{ global: number; tenant: number } | null> {
  const client = await pool.connect();
  try {
    await client.query('begin');
    const { rows: lock } = await client.query<{ ok: boolean }>('select pg_try_advisory_xact_lock($1, $2) as ok', [...SEALER_LOCK]);
    if (!lock[0]?.ok) {
      await client.query('rollback');
      return null;
    }
    const { rows: heads } = await client.query<{ seq: string; position: string; transaction_id: string; hash: string }>(
      'select seq::text as seq, position::text as position, transaction_id::text as transaction_id, hash from event_chain order by event_chain.seq desc limit 1',
    );
    const head = heads[0];
    const { rows } = await client.query<{ position: string; transaction_id: string; stream_version: number; content_hash: string }>(
      head
        ? { name: 'ito_ledger_seal_after_head', text: NEXT_BATCH_AFTER_HEAD, values: [batchSize, head.transaction_id, head.position] }
        : { name: 'ito_ledger_seal_from_start', text: NEXT_BATCH_FROM_START, values: [batchSize] },
    );
    if (rows.length === 0) {
      const tenant = await sealTenantLinks(client, batchSize);
      await client.query('commit');
      return { global: 0, tenant };
    }
    let seq = head ? Number(head.seq) : 0;
    let prevHash: string | null = head?.hash ?? null;
    const cols = { seq: [] as number[], position: [] as string[], txid: [] as string[], prev: [] as (string | null)[], hash: [] as string[] };
    for (const row of rows) {
      seq += 1;
      const hash = linkHash({
        seq,
        position: Number(row.position),
        transactionId: row.transaction_id,
        streamVersion: row.stream_version,
        contentHash: row.content_hash,
        prevHash,
      });
      cols.seq.push(seq);
      cols.position.push(row.position);
      cols.txid.push(row.transaction_id);
      cols.prev.push(prevHash);
      cols.hash.push(hash);
      prevHash = hash;
    }
    await client.query(INSERT_LINKS_SQL, [cols.seq, cols.position, cols.txid, cols.prev, cols.hash]);
    const tenant = await sealTenantLinks(client, batchSize);
    await client.query('commit');
    return { global: rows.length, tenant };
  } catch (err) {
    await client.query('rollback').catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}
