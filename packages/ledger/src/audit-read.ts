import type { KeyObject } from 'node:crypto';
import type pg from 'pg';
import { DIGEST_FORMAT, signDigest, type AuditDigest, type SignedDigest } from './audit/digest.js';
import { merkleProof, merkleRoot, type ProofStep, type TenantHead } from './audit/merkle.js';
import { CHAIN_START, TENANT_CHAIN } from './audit/link-rules.js';
import { verifyTenantRecords, type AuditRecord, type RecordsVerdict } from './audit/records.js';
import { anchoredStart } from './audit/since-digest.js';
import { walkChain, type WalkOptions } from './chain-walk/walk.js';
import type { Ledger } from './types.js';

type Db = pg.Pool | pg.PoolClient;

/** The stream and tenant the server's published digests are appended to; no API key's tenant can be it. */
export const AUDIT_DIGEST_STREAM = 'audit-digests';
export const SYSTEM_TENANT = '_system';
export const AUDIT_DIGEST_EVENT = 'AuditDigestPublished';

/**
 * A tenant's links in order with the stored fields of the events they seal (not upcast: the hash covers what
 * was stored). A LEFT JOIN, so a link whose event was deleted still shows, as `event: null`.
 */
const RECORDS_SQL = `
select t.tenant_seq::text as tenant_seq, t.position::text as position, t.prev_hash, t.hash,
       e.position is not null as present, e.stream_id, e.stream_version, e.type, e.schema_version, e.data, e.metadata, e.recorded_at
from tenant_chain t left join events e on e.position = t.position
where t.tenant_id = $1 and t.tenant_seq > $2
order by t.tenant_seq
limit $3`;

interface RecordRow {
  tenant_seq: string;
  position: string;
  prev_hash: string | null;
  hash: string;
  present: boolean;
  stream_id: string;
  stream_version: number;
  type: string;
  schema_version: number;
  data: unknown;
  metadata: unknown;
  recorded_at: Date;
}

export async function readTenantRecords(db: Db, tenantId: string, opts: { afterSeq?: number; limit?: number } = {}): Promise<AuditRecord[]> {
  const { rows } = await db.query<RecordRow>({ name: 'ito_ledger_audit_records', text: RECORDS_SQL, values: [tenantId, opts.afterSeq ?? 0, opts.limit ?? 1000] });
  return rows.map((r) => ({
    tenant_seq: Number(r.tenant_seq),
    position: Number(r.position),
    prev_hash: r.prev_hash,
    hash: r.hash,
    event: r.present
      ? {
          stream_id: r.stream_id,
          stream_version: r.stream_version,
          type: r.type,
          schema_version: r.schema_version,
          data: r.data,
          metadata: r.metadata,
          recorded_at: r.recorded_at.toISOString(),
        }
      : null,
  }));
}

/**
 * Walks a tenant's chain in the database with the checks an offline verifier makes (link-rules.ts), in pages
 * hashed on threads of their own once the chain is long (chain-walk/walk.ts). A number is the page size.
 */
export async function verifyTenantChain(db: Db, tenantId: string, opts: number | WalkOptions = {}): Promise<RecordsVerdict> {
  return verifyTenantFrom(db, tenantId, null, typeof opts === 'number' ? { pageSize: opts } : opts);
}

async function verifyTenantFrom(db: Db, tenantId: string, from: { tenant_seq: number; hash: string } | null, opts: WalkOptions): Promise<RecordsVerdict> {
  const start = from ? { ...CHAIN_START, seq: from.tenant_seq, hash: from.hash } : CHAIN_START;
  const remaining = async () => {
    const { rows } = await db.query<{ seq: string | null }>('select max(tenant_seq)::text as seq from tenant_chain where tenant_id = $1', [tenantId]);
    return Math.max(0, Number(rows[0]?.seq ?? 0) - start.seq);
  };
  const walk = await walkChain(db, { chain: 'tenant', tenantId }, TENANT_CHAIN, start, { ...opts, remaining });
  if (!walk.ok) return { ok: false, checked: walk.checked, first_bad_position: walk.position, reason: walk.reason };
  return { ok: true, checked: walk.checked, head: walk.state.hash === null ? null : { tenant_seq: walk.state.seq, hash: walk.state.hash } };
}

/** A tenant's verdict from a digest on: the leaf it started after (null: the tenant had no link then). */
export type TenantSinceDigestVerdict = RecordsVerdict & { since: { seq: number; tenant_seq: number | null; signature: 'verified' | 'not_checked' } };

/**
 * Checks only what follows a signed digest in the tenant's chain: the tenant's leaf under the digest must reach
 * the digest's root through its Merkle path (and, with a key, the signature must verify), and the walk starts
 * after that leaf, so its cost grows with the links appended since the digest. Links before the leaf are not
 * looked at again: the digest vouches for them.
 */
export async function verifyTenantChainSince(
  db: Db,
  tenantId: string,
  signed: SignedDigest,
  opts: WalkOptions & { publicKey?: KeyObject } = {},
): Promise<TenantSinceDigestVerdict> {
  const anchor = await anchorFor(db, tenantId, signed);
  const start = anchoredStart(tenantId, signed, anchor, opts.publicKey ?? null);
  const since = { seq: signed.digest.seq, tenant_seq: anchor?.leaf.tenant_seq ?? null, signature: opts.publicKey ? 'verified' : 'not_checked' } as const;
  // No link of this tenant to name when the digest itself fails: 0, which no event has.
  if ('reason' in start) return { ok: false, checked: 0, first_bad_position: 0, reason: start.reason, since };
  return { ...(await verifyTenantFrom(db, tenantId, start.from, opts)), since };
}
export { verifyTenantRecords };

/**
 * Every tenant's head as of global link `seq`: its link with the highest tenant_seq at or below it. The tenants
 * are found by skipping along the primary key (one probe each), and each head by reading the tenant's links
 * back from its newest: so the cost follows the number of tenants and the links after `seq`, not the history
 * (a digest's anchor, read by `--since-digest`, costs what is new).
 */
export async function tenantHeadsAt(db: Db, seq: number): Promise<TenantHead[]> {
  const { rows } = await db.query<{ tenant_id: string; tenant_seq: string; hash: string }>(
    `with recursive tenants(tenant_id) as (
       (select t.tenant_id from tenant_chain t order by t.tenant_id limit 1)
       union all
       select (select t.tenant_id from tenant_chain t where t.tenant_id > x.tenant_id order by t.tenant_id limit 1)
       from tenants x where x.tenant_id is not null
     )
     select x.tenant_id, h.tenant_seq::text as tenant_seq, h.hash
     from tenants x
     cross join lateral (
       select t.tenant_seq, t.hash from tenant_chain t where t.tenant_id = x.tenant_id and t.seq <= $1 order by t.tenant_seq desc limit 1
     ) h
     where x.tenant_id is not null
     order by x.tenant_id`,
    [seq],
  );
  return rows.map((r) => ({ tenantId: r.tenant_id, tenantSeq: Number(r.tenant_seq), hash: r.hash }));
}

/** The digest of the ledger as far as the tenant chains reach: the global link there and the tenants' root. */
export async function currentDigest(db: Db, now: Date): Promise<AuditDigest> {
  const { rows } = await db.query<{ seq: string | null }>('select max(seq)::text as seq from tenant_chain');
  const seq = Number(rows[0]?.seq ?? 0);
  const heads = seq > 0 ? await tenantHeadsAt(db, seq) : [];
  const { rows: link } = await db.query<{ hash: string }>('select hash from event_chain where seq = $1', [seq]);
  return { format: DIGEST_FORMAT, seq, head_hash: link[0]?.hash ?? null, tenants_root: merkleRoot(heads), tenant_count: heads.length, published_at: now.toISOString() };
}

/** Signs the current digest and appends it as an AuditDigestPublished event; returns what was published. */
export async function publishDigest(ledger: Ledger, db: Db, key: KeyObject, now: Date): Promise<SignedDigest> {
  const signed = signDigest(await currentDigest(db, now), key);
  await ledger.append(AUDIT_DIGEST_STREAM, [{ type: AUDIT_DIGEST_EVENT, data: { ...signed } as unknown as Record<string, unknown> }], {
    tenantId: SYSTEM_TENANT,
    expectedVersion: 'any',
  });
  return signed;
}

/** The newest published digest, or null when none was published. */
export async function latestPublishedDigest(db: Db): Promise<SignedDigest | null> {
  const { rows } = await db.query<{ data: SignedDigest }>(
    'select data from events where stream_id = $1 and tenant_id = $2 order by stream_version desc limit 1',
    [AUDIT_DIGEST_STREAM, SYSTEM_TENANT],
  );
  return rows[0]?.data ?? null;
}

/** The tenant's leaf under a published digest and its Merkle path; null when the tenant had no link then. */
export async function anchorFor(db: Db, tenantId: string, signed: SignedDigest): Promise<{ leaf: { tenant_seq: number; hash: string }; proof: ProofStep[] } | null> {
  const heads = await tenantHeadsAt(db, signed.digest.seq);
  const mine = heads.find((h) => h.tenantId === tenantId);
  const proof = merkleProof(heads, tenantId);
  if (!mine || !proof) return null;
  return { leaf: { tenant_seq: mine.tenantSeq, hash: mine.hash }, proof };
}
