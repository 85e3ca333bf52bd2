import type pg from 'pg';
import { tenantLinkHash } from './audit/tenant-link.js';

/**
 * Extends every tenant's chain over the global links not yet in `tenant_chain`, in global `seq` order. Runs
 * inside the sealer's transaction and under its lock, so it is the only writer. It follows `event_chain`
 * rather than the events, so it also chains, on its first passes, links sealed before tenant chains existed.
 */
const NEXT_LINKS_SQL = `
select c.seq::text as seq, c.position::text as position, e.tenant_id, e.stream_version, e.content_hash
from event_chain c join events e on e.position = c.position
where c.seq > coalesce((select max(t.seq) from tenant_chain t), 0)
order by c.seq
limit $1`;

// One index probe per tenant (its highest tenant_seq), not a DISTINCT ON that would read every link of the
// tenant on every batch.
const HEADS_SQL = `
select x.tenant_id, h.tenant_seq::text as tenant_seq, h.hash
from unnest($1::text[]) as x(tenant_id)
cross join lateral (
  select t.tenant_seq, t.hash from tenant_chain t where t.tenant_id = x.tenant_id order by t.tenant_seq desc limit 1
) h`;

const INSERT_SQL = `
insert into tenant_chain (tenant_id, tenant_seq, seq, position, prev_hash, hash)
select * from unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[])`;

export async function sealTenantLinks(client: pg.PoolClient, batchSize: number): Promise<number> {
  const { rows } = await client.query<{ seq: string; position: string; tenant_id: string; stream_version: number; content_hash: string }>({
    name: 'ito_ledger_tenant_next',
    text: NEXT_LINKS_SQL,
    values: [batchSize],
  });
  if (rows.length === 0) return 0;
  const tenants = [...new Set(rows.map((r) => r.tenant_id))];
  const { rows: heads } = await client.query<{ tenant_id: string; tenant_seq: string; hash: string }>(HEADS_SQL, [tenants]);
  const head = new Map(heads.map((h) => [h.tenant_id, { seq: Number(h.tenant_seq), hash: h.hash as string | null }]));
  const cols = { tenant: [] as string[], tseq: [] as number[], seq: [] as string[], position: [] as string[], prev: [] as (string | null)[], hash: [] as string[] };
  for (const r of rows) {
    const prev = head.get(r.tenant_id) ?? { seq: 0, hash: null };
    const tenantSeq = prev.seq + 1;
    const hash = tenantLinkHash({
      tenantId: r.tenant_id,
      tenantSeq,
      position: Number(r.position),
      streamVersion: r.stream_version,
      contentHash: r.content_hash,
      prevHash: prev.hash,
    });
    cols.tenant.push(r.tenant_id);
    cols.tseq.push(tenantSeq);
    cols.seq.push(r.seq);
    cols.position.push(r.position);
    cols.prev.push(prev.hash);
    cols.hash.push(hash);
    head.set(r.tenant_id, { seq: tenantSeq, hash });
  }
  await client.query(INSERT_SQL, [cols.tenant, cols.tseq, cols.seq, cols.position, cols.prev, cols.hash]);
  return rows.length;
}
