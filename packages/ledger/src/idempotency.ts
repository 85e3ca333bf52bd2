import type pg from 'pg';
import type { IdempotencyBegin, IdempotencyTx } from './types.js';

/**
 * The key's lock is a one-bigint advisory lock (hashtextextended of tenant and key), held until the transaction
 * ends: a second request with the same key while the first is still running sees in_progress instead of
 * racing it. The row itself is written in that same transaction, so a rollback leaves neither row nor lock.
 */
const LOCK_SQL = `select pg_try_advisory_xact_lock(hashtextextended($1::text || '/' || $2::text, 0)) as ok`;

/**
 * The same lock (LOCK_SQL's key) and lookup as `begin`, opening the transaction, as ONE simple-protocol string: under READ
 * COMMITTED each statement of it takes its own snapshot, so the lookup's snapshot is taken after the lock was
 * acquired, exactly as with two round trips. The simple protocol has no parameters, hence literals.
 */
export function beginClaimSql(client: pg.PoolClient, tenantId: string, key: string): string {
  const t = client.escapeLiteral(tenantId);
  const k = client.escapeLiteral(key);
  return `begin; select pg_try_advisory_xact_lock(hashtextextended(${t}::text || '/' || ${k}::text, 0)) as ok; select fingerprint, result from idempotency_keys where tenant_id = ${t} and key = ${k}`;
}

/** Reads the answer of `beginClaimSql`'s three statements as `begin` would have. */
export function claimFrom(results: pg.QueryResult[], fingerprint: string): IdempotencyBegin {
  if (!(results[1]?.rows[0] as { ok?: boolean } | undefined)?.ok) return { kind: 'in_progress' };
  const row = results[2]?.rows[0] as { fingerprint: string; result: unknown } | undefined;
  if (!row) return { kind: 'new' };
  return row.fingerprint === fingerprint ? { kind: 'replay', result: row.result } : { kind: 'mismatch' };
}

/** `complete`'s insert and the COMMIT as one simple-protocol string; an insert error skips the COMMIT. */
export function completeAndCommitSql(client: pg.PoolClient, tenantId: string, key: string, fingerprint: string, result: unknown): string {
  const values = [tenantId, key, fingerprint].map((v) => client.escapeLiteral(v)).join(', ');
  return `insert into idempotency_keys (tenant_id, key, fingerprint, result) values (${values}, ${client.escapeLiteral(JSON.stringify(result ?? null))}::jsonb); commit`;
}

export function idempotencyFor(client: pg.PoolClient): IdempotencyTx {
  return {
    async begin(tenantId: string, key: string, fingerprint: string): Promise<IdempotencyBegin> {
      const { rows: lock } = await client.query<{ ok: boolean }>(LOCK_SQL, [tenantId, key]);
      if (!lock[0]?.ok) return { kind: 'in_progress' };
      const { rows } = await client.query<{ fingerprint: string; result: unknown }>(
        'select fingerprint, result from idempotency_keys where tenant_id = $1 and key = $2',
        [tenantId, key],
      );
      const row = rows[0];
      if (!row) return { kind: 'new' };
      return row.fingerprint === fingerprint ? { kind: 'replay', result: row.result } : { kind: 'mismatch' };
    },
    async complete(tenantId: string, key: string, fingerprint: string, result: unknown): Promise<void> {
      await client.query('insert into idempotency_keys (tenant_id, key, fingerprint, result) values ($1, $2, $3, $4::jsonb)', [
        tenantId,
        key,
        fingerprint,
        JSON.stringify(result ?? null),
      ]);
    },
  };
}

/** Looks a key up outside any transaction (e.g. GET /runs?idempotency_key=…). Scoped to the tenant. */
export async function findIdempotencyResult(
  pool: pg.Pool,
  tenantId: string,
  key: string,
): Promise<{ fingerprint: string; result: unknown; createdAt: Date } | null> {
  const { rows } = await pool.query<{ fingerprint: string; result: unknown; created_at: Date }>(
    'select fingerprint, result, created_at from idempotency_keys where tenant_id = $1 and key = $2',
    [tenantId, key],
  );
  const row = rows[0];
  return row ? { fingerprint: row.fingerprint, result: row.result, createdAt: row.created_at } : null;
}
