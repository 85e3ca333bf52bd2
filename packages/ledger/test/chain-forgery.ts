import type pg from 'pg';
import { contentHash, linkHash } from '../src/index.js';

/** One link of the chain as stored. */
export interface Link {
  seq: number;
  position: number;
  txid: string;
  prevHash: string | null;
  hash: string;
}

/**
 * What a forger with write access does to the chain, for the tamper tests: read the links, recompute every hash
 * from a point on so each matches what verify recomputes, and put the original links back afterwards.
 */
export function forgery(pool: () => pg.Pool) {
  async function links(): Promise<Link[]> {
    const { rows } = await pool().query<{ seq: string; position: string; txid: string; prev_hash: string | null; hash: string }>(
      'select seq::text, position::text, transaction_id::text as txid, prev_hash, hash from event_chain order by event_chain.seq',
    );
    return rows.map((r) => ({ seq: Number(r.seq), position: Number(r.position), txid: r.txid, prevHash: r.prev_hash, hash: r.hash }));
  }

  /** Rewrites every link from `fromSeq` on so each hash matches what verify recomputes: a forger's full rehash. */
  async function rehashFrom(fromSeq: number): Promise<void> {
    const { rows } = await pool().query(
      `select c.seq::text as seq, c.position::text as position, e.transaction_id::text as txid, e.stream_version, e.stream_id, e.tenant_id,
              e.type, e.schema_version, e.data, e.metadata, e.recorded_at
       from event_chain c join events e on e.position = c.position order by c.seq`,
    );
    let prevHash: string | null = null;
    for (const r of rows) {
      const seq = Number(r.seq);
      if (seq < fromSeq) {
        prevHash = (await pool().query<{ hash: string }>('select hash from event_chain where seq = $1', [seq])).rows[0]!.hash;
        continue;
      }
      const content = contentHash({ tenantId: r.tenant_id, streamId: r.stream_id, type: r.type, schemaVersion: r.schema_version, data: r.data, metadata: r.metadata, recordedAt: r.recorded_at });
      const hash = linkHash({ seq, position: Number(r.position), transactionId: r.txid, streamVersion: r.stream_version, contentHash: content, prevHash });
      await pool().query('update event_chain set prev_hash = $2, hash = $3, transaction_id = $4::xid8 where seq = $1', [seq, prevHash, hash, r.txid]);
      prevHash = hash;
    }
  }

  async function restore(original: Link[]): Promise<void> {
    for (const l of original) await pool().query('update event_chain set position = -seq where seq = $1', [l.seq]);
    for (const l of original) {
      await pool().query('update event_chain set position = $2, transaction_id = $3::xid8, prev_hash = $4, hash = $5 where seq = $1', [l.seq, l.position, l.txid, l.prevHash, l.hash]);
    }
  }

  /** Swaps the events two links point at, then rehashes from the first so every hash is self-consistent. */
  async function swapAndRehash(a: Link, b: Link): Promise<void> {
    await pool().query('update event_chain set position = -1 where seq = $1', [a.seq]);
    await pool().query('update event_chain set position = $2 where seq = $1', [b.seq, a.position]);
    await pool().query('update event_chain set position = $2 where seq = $1', [a.seq, b.position]);
    await rehashFrom(a.seq);
  }

  return { links, rehashFrom, restore, swapAndRehash };
}
