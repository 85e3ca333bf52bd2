import type pg from 'pg';
import { contentHash, linkHash } from './hashing.js';
import type { ChainHead, VerifyResult } from './types.js';

/**
 * Recomputes the chain from the stored fields alone: each event's content hash from its columns, each link
 * from that, and each link's prev_hash and seq against the one before. Trusts no stored hash but the links it
 * is checking, so an UPDATE of any event field, a deleted event, a deleted or reordered link all show up, at
 * the first position where the recomputation diverges.
 */
const PAGE_SQL = `
select c.seq::text as seq, c.position::text as position, c.transaction_id::text as chain_txid, c.prev_hash, c.hash,
       e.position::text as event_position, e.transaction_id::text as transaction_id, e.stream_id, e.stream_version,
       e.tenant_id, e.type, e.schema_version, e.data, e.metadata, e.recorded_at
from event_chain c left join events e on e.position = c.position
where c.seq > $1
order by c.seq
limit $2`;

interface PageRow {
  seq: string;
  position: string;
  chain_txid: string;
  prev_hash: string | null;
  hash: string;
  event_position: string | null;
  transaction_id: string | null;
  stream_id: string;
  stream_version: number;
  tenant_id: string;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  recorded_at: Date;
}

export async function verifyChain(pool: pg.Pool, pageSize = 5000): Promise<VerifyResult> {
  let checked = 0;
  let prevHash: string | null = null;
  let lastSeq = 0;
  let last: { txid: string; position: string } | null = null;
  for (;;) {
    const { rows } = await pool.query<PageRow>(PAGE_SQL, [lastSeq, pageSize]);
    for (const row of rows) {
      const position = Number(row.position);
      const bad = (reason: string): VerifyResult => ({ ok: false, checked, firstBadPosition: position, reason });
      if (Number(row.seq) !== lastSeq + 1) return bad(`chain sequence jumps from ${lastSeq} to ${row.seq}: a link is missing`);
      if (row.event_position === null) return bad(`event at position ${position} is missing`);
      if (row.prev_hash !== prevHash) return bad(`link ${row.seq} does not point at the previous link`);
      if (row.transaction_id !== row.chain_txid) return bad(`event at position ${position} changed its transaction id`);
      if (last && !isAfter(row.transaction_id, row.position, last)) return bad(`link ${row.seq} is out of safe order`);
      const content = contentHash({
        tenantId: row.tenant_id,
        streamId: row.stream_id,
        type: row.type,
        schemaVersion: row.schema_version,
        data: row.data,
        metadata: row.metadata,
        recordedAt: row.recorded_at,
      });
      const expected = linkHash({
        seq: Number(row.seq),
        position,
        transactionId: row.transaction_id,
        streamVersion: row.stream_version,
        contentHash: content,
        prevHash,
      });
      if (expected !== row.hash) return bad(`event at position ${position} does not match its sealed hash`);
      prevHash = row.hash;
      lastSeq = Number(row.seq);
      last = { txid: row.transaction_id, position: row.position };
      checked += 1;
    }
    if (rows.length < pageSize) break;
  }
  const unsealedBehind = await unsealedBehindHead(pool, last);
  if (unsealedBehind !== null) {
    return { ok: false, checked, firstBadPosition: unsealedBehind, reason: `event at position ${unsealedBehind} sits inside the sealed range but is not chained` };
  }
  return { ok: true, checked, headHash: prevHash };
}

/** An event ordered before the chain head but absent from the chain was slipped in after sealing. */
async function unsealedBehindHead(pool: pg.Pool, head: { txid: string; position: string } | null): Promise<number | null> {
  if (!head) return null;
  const { rows } = await pool.query<{ position: string }>(
    `select e.position::text as position from events e
     where (e.transaction_id, e.position) < ($1::xid8, $2::bigint)
       and not exists (select 1 from event_chain c where c.position = e.position)
     order by e.transaction_id, e.position limit 1`,
    [head.txid, head.position],
  );
  return rows[0] ? Number(rows[0].position) : null;
}

function isAfter(txid: string, position: string, prev: { txid: string; position: string }): boolean {
  const t = BigInt(txid);
  const pt = BigInt(prev.txid);
  return t > pt || (t === pt && BigInt(position) > BigInt(prev.position));
}

export async function readChainHead(pool: pg.Pool): Promise<ChainHead> {
  const { rows } = await pool.query<{ seq: string; position: string; hash: string }>(
    'select seq::text as seq, position::text as position, hash from event_chain order by event_chain.seq desc limit 1',
  );
  const head = rows[0];
  return head ? { position: Number(head.position), hash: head.hash, count: Number(head.seq) } : { position: null, hash: null, count: 0 };
}
