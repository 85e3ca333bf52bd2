import type pg from 'pg';

/** A held lease: its fencing token, and the database's clock when it was granted. */
export interface Lease {
  token: number;
  now: Date;
}

/**
 * Takes or renews the lease of a singleton role with one statement on the database's clock: granted when this
 * holder already has it, or when the last holder let it expire. The token grows by one at every change of
 * holder, so writes fenced by it fail once someone else took over. Works through any connection pooler (no
 * session state, no advisory lock).
 */
export async function takeLease(db: Pick<pg.Pool, 'query'>, role: string, holder: string, ttlMs: number): Promise<Lease | null> {
  const { rows } = await db.query<{ token: number; now: Date }>({
    name: 'ito_take_lease',
    text: `insert into role_leases as r (role, holder, token, expires_at, renewed_at)
           values ($1, $2, 1, now() + $3 * interval '1 millisecond', now())
           on conflict (role) do update set
             token = case when r.holder = excluded.holder then r.token else r.token + 1 end,
             holder = excluded.holder,
             expires_at = excluded.expires_at,
             renewed_at = excluded.renewed_at
           where r.holder = excluded.holder or r.expires_at < now()
           returning token, now() as now`,
    values: [role, holder, ttlMs],
  });
  return rows[0] ?? null;
}

/** Lets the lease go at a clean stop, so a standby takes over at once. */
export async function releaseLease(db: Pick<pg.Pool, 'query'>, role: string, holder: string): Promise<void> {
  await db.query('update role_leases set expires_at = now() - interval \'1 millisecond\' where role = $1 and holder = $2', [role, holder]);
}

export class LeaseLost extends Error {
  override readonly name = 'LeaseLost';
}

/** Inside a write transaction: the lease must still be this holder's, with this token, unexpired. */
export async function assertLease(client: Pick<pg.PoolClient, 'query'>, role: string, holder: string, token: number): Promise<void> {
  const { rows } = await client.query({
    name: 'ito_assert_lease',
    text: 'select 1 from role_leases where role = $1 and holder = $2 and token = $3 and expires_at > now() for share',
    values: [role, holder, token],
  });
  if (rows.length === 0) throw new LeaseLost(`the ${role} lease is no longer held with token ${token}`);
}
