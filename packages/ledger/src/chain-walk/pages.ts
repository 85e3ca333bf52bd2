import pg from 'pg';
import {
  GLOBAL_CHAIN,
  TENANT_CHAIN,
  globalLinkFacts,
  tenantLinkFacts,
  walkPage,
  type GlobalLinkRow,
  type PageOutcome,
} from '../audit/link-rules.js';
import type { AuditRecord } from '../audit/records.js';

/**
 * A page of links is read as one text value: PostgreSQL folds the page's rows into a JSON array, so the reading
 * thread receives one string per page (no per-row work) and hands it whole to the thread that parses and hashes
 * it. Each row is an array in a fixed order; `recorded_at` travels as the text PostgreSQL sends for a
 * timestamptz and is parsed by the driver's own parser, so the instant hashed is the one a row read through the
 * driver would give.
 */
const GLOBAL_PAGE_SQL = `
select coalesce(json_agg(json_build_array(p.seq::text, p.position::text, p.chain_txid::text, p.prev_hash, p.hash, p.event_position is not null,
         p.transaction_id::text, p.stream_id, p.stream_version, p.tenant_id, p.type, p.schema_version, p.data, p.metadata, p.recorded_at::text)
         order by p.seq)::text, '[]') as rows,
       max(p.seq)::text as last_seq, count(*)::int as n
from (
  select c.seq, c.position, c.transaction_id as chain_txid, c.prev_hash, c.hash, e.position as event_position, e.transaction_id, e.stream_id,
         e.stream_version, e.tenant_id, e.type, e.schema_version, e.data, e.metadata, e.recorded_at
  from event_chain c left join events e on e.position = c.position
  where c.seq > $1
  order by c.seq
  limit $2
) p`;

const TENANT_PAGE_SQL = `
select coalesce(json_agg(json_build_array(p.tenant_seq::text, p.position::text, p.prev_hash, p.hash, p.event_position is not null,
         p.stream_id, p.stream_version, p.type, p.schema_version, p.data, p.metadata, p.recorded_at::text)
         order by p.tenant_seq)::text, '[]') as rows,
       max(p.tenant_seq)::text as last_seq, count(*)::int as n
from (
  select t.tenant_seq, t.position, t.prev_hash, t.hash, e.position as event_position, e.stream_id, e.stream_version, e.type, e.schema_version,
         e.data, e.metadata, e.recorded_at
  from tenant_chain t left join events e on e.position = t.position
  where t.tenant_id = $3 and t.tenant_seq > $1
  order by t.tenant_seq
  limit $2
) p`;

/** Which chain a page belongs to; a tenant's page carries the tenant, which its hashes cover. */
export type ChainKind = { chain: 'global' } | { chain: 'tenant'; tenantId: string };

export interface RawPage {
  rows: string;
  lastSeq: number;
  count: number;
}

export async function readPage(db: pg.Pool | pg.PoolClient, kind: ChainKind, after: number, limit: number): Promise<RawPage> {
  const { rows } = await db.query<{ rows: string; last_seq: string | null; n: number }>(
    kind.chain === 'global'
      ? { name: 'ito_ledger_verify_page', text: GLOBAL_PAGE_SQL, values: [after, limit] }
      : { name: 'ito_ledger_verify_tenant_page', text: TENANT_PAGE_SQL, values: [after, limit, kind.tenantId] },
  );
  const row = rows[0]!;
  return { rows: row.rows, lastSeq: Number(row.last_seq ?? after), count: row.n };
}

const parseTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ, 'text') as (text: string) => Date;

type GlobalTuple = [string, string, string, string | null, string, boolean, string | null, string, number, string, string, number, unknown, unknown, string | null];
type TenantTuple = [string, string, string | null, string, boolean, string, number, string, number, unknown, unknown, string | null];

function globalRow(t: GlobalTuple): GlobalLinkRow {
  return {
    seq: t[0],
    position: t[1],
    chainTxid: t[2],
    prevHash: t[3],
    hash: t[4],
    present: t[5],
    txid: t[6],
    streamId: t[7],
    streamVersion: t[8],
    tenantId: t[9],
    type: t[10],
    schemaVersion: t[11],
    data: t[12],
    metadata: t[13],
    recordedAt: t[14] === null ? (null as unknown as Date) : parseTimestamptz(t[14]),
  };
}

/** The record `readTenantRecords` would build from the same row. */
function tenantRecord(t: TenantTuple): AuditRecord {
  return {
    tenant_seq: Number(t[0]),
    position: Number(t[1]),
    prev_hash: t[2],
    hash: t[3],
    event: t[4]
      ? { stream_id: t[5], stream_version: t[6], type: t[7], schema_version: t[8], data: t[9], metadata: t[10], recorded_at: parseTimestamptz(t[11]!).toISOString() }
      : null,
  };
}

/** Parses, hashes and walks one page: the work a hashing thread does. */
export function walkRawPage(kind: ChainKind, rows: string): PageOutcome {
  const tuples = JSON.parse(rows) as unknown[];
  if (kind.chain === 'global') return walkPage(GLOBAL_CHAIN, tuples.map((t) => globalLinkFacts(globalRow(t as GlobalTuple))));
  const tenantId = kind.tenantId;
  return walkPage(TENANT_CHAIN, tuples.map((t) => tenantLinkFacts(tenantId, tenantRecord(t as TenantTuple))));
}
