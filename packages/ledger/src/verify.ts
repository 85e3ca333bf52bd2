import type { KeyObject } from 'node:crypto';
import type pg from 'pg';
import { verifyDigestSignature, type SignedDigest } from './audit/digest.js';
import { CHAIN_START, GLOBAL_CHAIN, type LinkState } from './audit/link-rules.js';
import { walkChain, type WalkOptions } from './chain-walk/walk.js';
import type { ChainHead, VerifyResult } from './types.js';

/**
 * Recomputes the chain from the stored fields alone: each event's content hash from its columns, each link
 * from that, and each link's prev_hash and seq against the one before. Trusts no stored hash but the links it
 * is checking, so an UPDATE of any event field, a deleted event, a deleted or reordered link all show up, at
 * the first position where the recomputation diverges. The checks and their order are link-rules.ts's; the
 * paging and the hashing threads are chain-walk/walk.ts's.
 */
export interface VerifyChainOptions extends WalkOptions {
  /**
   * Check only what follows a signed digest: its link must still be the one it signed, and every link after it
   * is walked as a full verify walks it; the links before it are not looked at again (the digest vouches for
   * them). With `publicKey` (the signer's public key, or the private key itself) the signature is checked too.
   */
  since?: { digest: SignedDigest; publicKey?: KeyObject };
}

/** A verdict from a digest on: which link it started after and whether the digest's signature was checked. */
export type SinceDigestResult = VerifyResult & { since: { seq: number; signature: 'verified' | 'not_checked' } };

export function verifyChain(pool: pg.Pool, opts?: number | (VerifyChainOptions & { since?: undefined })): Promise<VerifyResult>;
export function verifyChain(pool: pg.Pool, opts: VerifyChainOptions & { since: NonNullable<VerifyChainOptions['since']> }): Promise<SinceDigestResult>;
export async function verifyChain(pool: pg.Pool, opts: number | VerifyChainOptions = {}): Promise<VerifyResult | SinceDigestResult> {
  const o = typeof opts === 'number' ? { pageSize: opts } : opts;
  if (!o.since) return verifyFrom(pool, CHAIN_START, o);
  const { digest, publicKey } = o.since;
  const signature = publicKey ? 'verified' : 'not_checked';
  const since = { seq: digest.digest.seq, signature } as const;
  const start = await digestLink(pool, digest);
  if (publicKey && !verifyDigestSignature(digest, publicKey)) {
    return { ok: false, checked: 0, firstBadPosition: start.position, reason: "the digest's signature does not verify with the given key", since };
  }
  if ('reason' in start) return { ok: false, checked: 0, firstBadPosition: start.position, reason: start.reason, since };
  return { ...(await verifyFrom(pool, start.state, o)), since };
}

/** The stored link a digest signs, as the state a walk starts from; a link gone or changed is a finding. */
async function digestLink(pool: pg.Pool, signed: SignedDigest): Promise<{ state: LinkState; position: number } | { reason: string; position: number }> {
  const { seq, head_hash: headHash } = signed.digest;
  if (seq === 0) return headHash === null ? { state: CHAIN_START, position: 0 } : { reason: 'the digest names a head hash for an empty chain', position: 0 };
  const { rows } = await pool.query<{ position: string; txid: string; hash: string }>(
    'select position::text as position, transaction_id::text as txid, hash from event_chain where seq = $1',
    [seq],
  );
  const link = rows[0];
  // No position to name when the link itself is gone: 0, which no event has.
  if (!link) return { reason: `link ${seq}, which the digest signs, is missing`, position: 0 };
  if (link.hash !== headHash) return { reason: `link ${seq} is not the link the digest signs`, position: Number(link.position) };
  return { state: { seq, hash: link.hash, txid: link.txid, position: link.position }, position: Number(link.position) };
}

async function verifyFrom(pool: pg.Pool, from: LinkState, opts: WalkOptions): Promise<VerifyResult> {
  const remaining = async () => {
    const { rows } = await pool.query<{ seq: string | null }>('select max(seq)::text as seq from event_chain');
    return Math.max(0, Number(rows[0]?.seq ?? 0) - from.seq);
  };
  const walk = await walkChain(pool, { chain: 'global' }, GLOBAL_CHAIN, from, { ...opts, remaining });
  if (!walk.ok) return { ok: false, checked: walk.checked, firstBadPosition: walk.position, reason: walk.reason };
  const last = walk.state.txid === null ? null : { txid: walk.state.txid, position: walk.state.position! };
  const start = from.txid === null ? null : { txid: from.txid, position: from.position! };
  const unsealedBehind = await unsealedBehindHead(pool, start, last, walk.checked);
  if (unsealedBehind !== null) {
    return { ok: false, checked: walk.checked, firstBadPosition: unsealedBehind, reason: `event at position ${unsealedBehind} sits inside the sealed range but is not chained` };
  }
  return { ok: true, checked: walk.checked, headHash: walk.state.hash };
}

/**
 * An event ordered before the chain head but absent from the chain was slipped in after sealing. From a digest
 * on, only events after the digest's link are looked at, so the cost follows what is new.
 *
 * The walk has just shown `chained` links from `from` to `head`, each to an event of its own (positions are
 * unique in the chain), in strictly rising safe order: so those events all lie in the range, and the range
 * holds exactly `chained` events unless one was slipped in. The events in the range are counted first (an
 * index-only scan of the safe-order index), and only when the count is higher is each event probed for its
 * link to name the first without one: a probe per event costs several times the count.
 */
async function unsealedBehindHead(
  pool: pg.Pool,
  from: { txid: string; position: string } | null,
  head: { txid: string; position: string } | null,
  chained: number,
): Promise<number | null> {
  if (!head) return null;
  const range = `(e.transaction_id, e.position) <= ($1::xid8, $2::bigint) ${from ? 'and (e.transaction_id, e.position) > ($3::xid8, $4::bigint)' : ''}`;
  const values = from ? [head.txid, head.position, from.txid, from.position] : [head.txid, head.position];
  const { rows: counted } = await pool.query<{ n: string }>(`select count(*)::text as n from events e where ${range}`, values);
  if (Number(counted[0]!.n) === chained) return null;
  const { rows } = await pool.query<{ position: string }>(
    `select e.position::text as position from events e
     where ${range} and not exists (select 1 from event_chain c where c.position = e.position)
     order by e.transaction_id, e.position limit 1`,
    values,
  );
  return rows[0] ? Number(rows[0].position) : null;
}

export async function readChainHead(pool: pg.Pool): Promise<ChainHead> {
  const { rows } = await pool.query<{ seq: string; position: string; hash: string }>(
    'select seq::text as seq, position::text as position, hash from event_chain order by event_chain.seq desc limit 1',
  );
  const head = rows[0];
  return head ? { position: Number(head.position), hash: head.hash, count: Number(head.seq) } : { position: null, hash: null, count: 0 };
}
