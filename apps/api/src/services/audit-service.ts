import { ItoError } from '@ito/contracts';
import { anchorFor, latestPublishedDigest, readTenantRecords, replayProjections, type AsOf, type ProjectionRegistry } from '@ito/ledger';
import type { Resources } from '../resources.js';

/**
 * What an auditor of one tenant may read: that tenant's chain and events, the published digests (global
 * facts: a link number, hashes and a tenant count, nothing of any tenant's events) and the tenant's path to
 * them. No answer here names another tenant's event, stream or id.
 */
export async function auditRecords(res: Resources, tenantId: string, after: number, limit: number) {
  const records = await readTenantRecords(res.pool, tenantId, { afterSeq: after, limit });
  return { records, next_after: records.length === limit ? records[records.length - 1]!.tenant_seq : null };
}

export async function auditDigest(res: Resources, tenantId: string) {
  const { rows } = await res.pool.query<{ tenant_seq: string; hash: string }>(
    'select tenant_seq::text as tenant_seq, hash from tenant_chain where tenant_id = $1 order by tenant_chain.tenant_seq desc limit 1',
    [tenantId],
  );
  const head = rows[0] ? { tenant_seq: Number(rows[0].tenant_seq), hash: rows[0].hash } : null;
  const published = await latestPublishedDigest(res.pool);
  const anchor = published ? await anchorFor(res.pool, tenantId, published) : null;
  return { tenant_id: tenantId, head, published, anchor };
}

/** `as_of`: a ledger position (digits) or an ISO instant. */
export function parseAsOf(value: string | undefined): AsOf | undefined {
  if (value === undefined) return undefined;
  if (/^\d{1,15}$/.test(value)) return { position: Number(value) };
  const time = new Date(value);
  if (!/^\d{4}-\d\d-\d\dT[\d:.]+(Z|[+-]\d\d:\d\d)$/.test(value) || Number.isNaN(time.getTime())) {
    throw new ItoError('validation_failed', 'as_of must be a ledger position or an ISO 8601 instant with an offset');
  }
  return { time };
}

export async function auditReplay(res: Resources, registry: ProjectionRegistry, tenantId: string, asOf: AsOf | undefined, runId: string | undefined) {
  const select: Record<string, Record<string, string>> = asOf ? { runs: runId ? { run_id: runId } : {} } : {};
  if (asOf && runId) select.tasks = { run_id: runId };
  const result = await replayProjections(res.pool, registry, { tenantId, ...(asOf ? { asOf } : {}), select });
  const base = {
    tenant_id: tenantId,
    projections: registry.all().map((p) => p.name),
    applied: result.applied,
    last_position: result.last_position,
  };
  if (!asOf) {
    return {
      ...base,
      matches: result.difference_count === 0,
      difference_count: result.difference_count,
      differences: result.differences.map((d) => ({ ...d, run_id: (d.key.run_id as string | undefined) ?? null })),
    };
  }
  const runs = (result.rows.runs ?? []).map((r) =>
    runId ? r : { run_id: r.run_id, state: r.state, stage: r.stage, version: r.version, updated_at: r.updated_at },
  );
  if (runId && runs.length === 0) throw new ItoError('not_found', 'no such run as of that point');
  return { ...base, as_of: 'position' in asOf ? { position: asOf.position } : { time: asOf.time.toISOString() }, runs, ...(runId ? { tasks: result.rows.tasks ?? [] } : {}) };
}
